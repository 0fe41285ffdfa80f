"""Fuzzing ts-lint: it never raises and never reports an internal error (TS999).

Two generators: arbitrary Python programs from hypothesmith (grammar-level), and
TS-shaped programs — the bundled examples with random line edits (delete, duplicate,
swap, truncate, dedent, a token replaced), which is what a file looks like while someone
types in the editor. benchmarks/fuzz_lint.py does the same, at length, on the tutorials.
"""
import pathlib

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from ts_lint.api import lint_source

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCES = [p.read_text() for p in sorted((ROOT / "examples").glob("[0-9]*.py"))]
FUZZ = settings(max_examples=25, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _assert_clean(src):
    diags = lint_source(src, "fuzz.py")
    internal = [d for d in diags if d.code == "TS999"]
    assert not internal, internal[0].message


@st.composite
def edited_example(draw):
    lines = draw(st.sampled_from(SOURCES)).splitlines()
    for _ in range(draw(st.integers(1, 4))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["delete", "duplicate", "swap", "truncate", "dedent", "token"]))
        if op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "truncate":
            cut = draw(st.integers(0, len(lines[i])))
            lines[i] = lines[i][:cut]
        elif op == "token":
            # a space-separated token replaced by a plain value (`mode=ab_mode` -> `{}`)
            toks = lines[i].split(" ")
            toks[draw(st.integers(0, len(toks) - 1))] = draw(st.sampled_from(["None", "0", "{}", '"merge"', "x"]))
            lines[i] = " ".join(toks)
        else:
            lines[i] = lines[i].lstrip()
    return "\n".join(lines) + "\n"


@FUZZ
@given(edited_example())
def test_ts_shaped_edits_never_crash(src):
    _assert_clean(src)


def test_hypothesmith_programs_never_crash():
    hypothesmith = pytest.importorskip("hypothesmith")

    @FUZZ
    @given(hypothesmith.from_grammar())
    def run(src):
        _assert_clean(src)

    run()


def test_continuation_onto_a_blank_line_is_analysed():
    # found by hypothesmith: Python accepts a backslash that joins a blank line (or the end
    # of the file), libcst's tokenizer does not; ts-lint drops that whitespace-only
    # backslash (not inside a string literal) and analyses the file
    assert lint_source("pass\\\n\n\\\r\n", "fuzz.py") == []
    src = 'x = """a\\\n\n"""\nimport os\\\n\n'
    assert [d.code for d in lint_source(src, "fuzz.py")] == []
    from ts_lint.extract.source import without_dangling_continuations
    assert without_dangling_continuations(src) == 'x = """a\\\n\n"""\nimport os\n\n'
