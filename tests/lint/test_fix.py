"""`ts-lint --fix / --diff / --unsafe-fixes` (ts_lint.autofix, ts_lint.cli) with the real linter.

The programs are copies of examples/bad files whose findings carry fixes: TS355 (safe:
add the missing graph entry), TS215 (safe: move the release after the MMA that reads the
stage), TS206 (unsafe: insert the missing wait), and an unused `noqa` (TS960, safe).
"""
import io
import shutil
import sys
from pathlib import Path

import pytest

from ts_runtime.diagnostics import Diagnostic, Edit, Fix, Severity
from ts_runtime.source import SourceRange

from ts_lint import cli
from ts_lint.autofix import apply_fixes, unified_diff

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "examples" / "bad"


def copy(tmp_path, name):
    dst = tmp_path / name
    shutil.copy(BAD / name, dst)
    return dst


def run(capsys, *argv):
    rc = cli.main([*argv, "--isolated"])
    out, err = capsys.readouterr()
    return rc, out, err


def line_of(path, needle):
    for i, line in enumerate(Path(path).read_text().splitlines(), 1):
        if needle in line:
            return i
    raise AssertionError(f"{needle!r} not in {path}")


def test_fix_applies_a_safe_fix_and_reports_what_remains(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    p = copy(tmp_path, "02_out_missing_from_graph.py")
    before = p.read_text()
    rc, out, err = run(capsys, p.name)
    assert rc == 1 and f"{p.name}:{line_of(p, 'expect: TS355')}:" in out and "TS355" in out
    rc, out, err = run(capsys, "--fix", p.name)
    assert rc == 0, out
    assert out == "All checks passed!\nFixed 1 finding in 1 file(s).\n"
    after = p.read_text()
    assert after == before.replace("resource_dependency_graph={smem: [coords]},",
                                   "resource_dependency_graph={smem: [coords], out: [smem]},")
    rc, out, err = run(capsys, p.name)
    assert rc == 0 and out == "All checks passed!\n"


def test_diff_shows_the_fix_and_writes_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    p = copy(tmp_path, "05_release_before_mma.py")
    before = p.read_text()
    release = line_of(p, "smem_ab.release()  # expect: TS215")
    rc, out, err = run(capsys, "--diff", p.name)
    assert rc == 1
    assert p.read_text() == before
    assert out.startswith(f"--- a/{p.name}\n+++ b/{p.name}\n")
    assert "+            tmem_acc.mma(desc_a=desc_a, desc_b=desc_b)\n" in out
    assert "-            tmem_acc.mma(desc_a=desc_a, desc_b=desc_b)\n" in out
    assert f"@@ -{release - 3}," in out
    assert err == "Would fix 1 finding in 1 file(s).\n"
    # a clean file: no diff, exit 0
    rc, out, err = run(capsys, "--fix", p.name)
    assert rc == 0
    rc, out, err = run(capsys, "--diff", p.name)
    assert (rc, out, err) == (0, "", "Would fix 0 findings in 0 file(s).\n")


def test_unsafe_fixes_only_when_asked(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    p = copy(tmp_path, "02_read_before_wait.py")
    before = p.read_text()
    work = line_of(p, "expect: TS206")
    rc, out, err = run(capsys, "--fix", p.name)
    assert rc == 1 and p.read_text() == before
    assert f"{p.name}:{work}:" in out and "TS206" in out
    assert out.endswith("Fixed 0 findings in 0 file(s).\n")
    rc, out, err = run(capsys, "--fix", "--unsafe-fixes", p.name)
    lines = p.read_text().splitlines(True)
    old = before.splitlines(True)
    # one line inserted: the wait, at the work's indentation, just before it
    assert lines[work - 1].strip() == "smem.wait()"
    assert lines[:work - 1] + lines[work:] == old
    assert lines[work - 1][:-len(lines[work - 1].lstrip())] == old[work - 1][:-len(old[work - 1].lstrip())]
    assert "TS206" not in out


def test_unused_noqa_is_removed(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    src = (ROOT / "examples" / "01_copy_grid_stride.py").read_text()
    lines = src.splitlines(True)
    k = next(i for i, ln in enumerate(lines) if ln.startswith(("import ", "from ")))
    lines[k] = lines[k].rstrip("\n") + "  # noqa: TS201\n"
    p = tmp_path / "noqa.py"
    p.write_text("".join(lines))
    rc, out, err = run(capsys, p.name)
    assert rc == 1 and f"{p.name}:{k + 1}:" in out and "TS960" in out
    rc, out, err = run(capsys, "--fix", p.name)
    assert rc == 0 and p.read_text() == src


def test_stdin_fix_prints_the_fixed_source(tmp_path, capsys, monkeypatch):
    src = (BAD / "02_out_missing_from_graph.py").read_text()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(src.encode())))
    rc, out, err = run(capsys, "-", "--fix", "--stdin-filename", "prog.py")
    assert rc == 0 and err == ""
    assert out == src.replace("{smem: [coords]},", "{smem: [coords], out: [smem]},")


def test_fix_and_diff_together_is_a_usage_error(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    p = copy(tmp_path, "02_out_missing_from_graph.py")
    rc, out, err = run(capsys, "--fix", "--diff", p.name)
    assert rc == 2 and "cannot be combined" in err


def test_jobs_fix_the_same_way(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    a = copy(tmp_path, "02_out_missing_from_graph.py")
    b = copy(tmp_path, "05_release_before_mma.py")
    rc, out, err = run(capsys, "--fix", "-j", "2", a.name, b.name)
    assert rc == 0 and out.endswith("Fixed 2 findings in 2 file(s).\n")
    rc, out, err = run(capsys, a.name, b.name)
    assert rc == 0


# --- apply_fixes on text --------------------------------------------------------------------

def _finding(line, fix_edits, applicability="safe", path="m.py"):
    edits = tuple(Edit(SourceRange(path, *rng), new) for rng, new in fix_edits)
    return Diagnostic("TS201", "x", Severity.ERROR, "m", SourceRange(path, line, 0),
                      fix=Fix("f", edits, applicability))


def test_overlapping_fixes_wait_for_the_next_pass():
    text = "abcdef\nghij\n"
    first = _finding(1, [((1, 1, 1, 3), "X")])
    overlapping = _finding(1, [((1, 2, 1, 4), "Y")])
    later = _finding(2, [((2, 0, 2, 0), "Z")])
    new, taken = apply_fixes(text, [overlapping, later, first], "m.py")
    # sorted by first edit: `first` (offset 1) wins over `overlapping` (offset 2)
    assert new == "aXdef\nZghij\n" and taken == [first, later]


def test_only_allowed_applicability_and_this_file():
    text = "a\nb\n"
    unsafe = _finding(1, [((1, 0, 1, 1), "A")], "unsafe")
    display = _finding(1, [((1, 0, 1, 1), "A")], "display-only")
    other_file = _finding(2, [((2, 0, 2, 1), "B")], path="other.py")
    assert apply_fixes(text, [unsafe, display, other_file], "m.py") == (text, [])
    assert apply_fixes(text, [unsafe, display], "m.py", frozenset({"safe", "unsafe"}))[0] == "A\nb\n"


def test_crlf_text_keeps_its_newlines():
    text = "x = 1\r\ny = 2\r\n"
    ins = _finding(2, [((2, 0, 2, 0), "    z = 3\n")])
    new, _ = apply_fixes(text, [ins], "m.py")
    assert new == "x = 1\r\n    z = 3\r\ny = 2\r\n"
    end = _finding(1, [((1, 5, 1, 99), "  # c")])     # a column past the line stays on it
    assert apply_fixes(text, [end], "m.py")[0] == "x = 1  # c\r\ny = 2\r\n"


def test_unified_diff_paths():
    assert unified_diff("a\n", "a\n", "p.py") == ""
    d = unified_diff("a\n", "b", "/abs/p.py")
    assert d.startswith("--- /abs/p.py\n+++ /abs/p.py\n") and d.endswith("+b\n\\ No newline at end of file\n")


@pytest.mark.parametrize("name,fixed", [
    ("_MISSPELT_FACTORY", "PipelineConfig.create_tma_async_pipeline_cfg("),
    ("_MISSPELT_ENUM", "producer_signaling_threads=SignalingThreads.All)"),
    ("_PLAIN_IF", "if cutlass.const_expr(UNROLL > 1):"),
    ("_PLAIN_RANGE", "for _ in cutlass.range_constexpr(1):"),
    ("_MISSPELT_IMPORT", "from ts_runtime.resources import MemoryResource, PipelineConfig, TaskLocalVariable  #"),
    ("_COMPILE_NO_JIT", "@cute.jit\ndef launch(out: cute.Tensor, stream):\n"),
])
def test_unsafe_fixes_of_the_python_errors_make_the_program_clean(tmp_path, capsys, name, fixed):
    # TS963 (the closest attribute name) and TS965 (compile-time if / loop): unsafe fixes
    from ts_lint import rules_lint
    src = getattr(rules_lint, name)
    path = tmp_path / "program.py"
    path.write_text(src)
    rc, out, _ = run(capsys, str(path), "--fix")
    assert rc == 1 and path.read_text() == src         # unsafe: not applied by --fix alone
    rc, out, _ = run(capsys, str(path), "--fix", "--unsafe-fixes")
    text = path.read_text()
    assert fixed in text, text
    assert rc == 0, out
