"""`# noqa` directives (ts_lint.suppress): parsing through tokenize, suppression, TS960."""
import textwrap

from ts_runtime.diagnostics import Diagnostic, Severity
from ts_runtime.rules import get, load_all
from ts_runtime.rules.base import DOC_SECTIONS
from ts_runtime.source import SourceRange

from ts_lint.suppress import apply_suppressions, parse_suppressions


def D(code, line, end_line=None, sev=Severity.ERROR):
    return Diagnostic(code, f"fake-{code.lower()}", sev, f"fake {code}",
                      SourceRange("f.py", line, 0, end_line or line, 3))


def run(source, diags, **kw):
    source = textwrap.dedent(source)
    kw.setdefault("known", lambda c: c != "TS098")
    return apply_suppressions(diags, parse_suppressions(source), "f.py", **kw), source


def show(diags):
    return [(d.code, d.range.line, d.message) for d in diags]


def apply_fix(source, diag):
    """Applies a single-line fix edit to `source`."""
    (edit,) = diag.fix.edits
    lines = source.splitlines(keepends=True)
    line = lines[edit.range.line - 1]
    lines[edit.range.line - 1] = line[:edit.range.column] + edit.new_text + line[edit.range.end_column:]
    return "".join(lines)


def test_parse_codes_bare_and_case():
    sup = parse_suppressions(textwrap.dedent("""\
        a = 1  # noqa: TS201, TS202
        b = 2  # NOQA:ts301 ts302
        c = 3  # noqa
        d = 4  # noqa:
        e = 5  # noqa: E501
        f = 6  # noqanot a directive
        g = 7  # see docs # noqa: TS401
    """))
    got = {line: [(d.codes, d.column, d.end_column) for d in ds] for line, ds in sup.lines.items()}
    assert got == {1: [(("TS201", "TS202"), 7, 27)], 2: [(("TS301", "TS302"), 7, 25)],
                   3: [(None, 7, 13)], 4: [(None, 7, 14)], 5: [(("E501",), 7, 19)],
                   7: [(("TS401",), 18, 31)]}
    assert not sup.file_all and sup.file_codes == frozenset()


def test_noqa_inside_strings_does_not_count():
    sup = parse_suppressions(textwrap.dedent('''\
        s = "x  # noqa: TS201"
        t = """
        # noqa: TS202
        # ts-lint: noqa
        """
        u = 1  # real: noqa: TS203 is not a directive, but this is: # noqa: TS204
    '''))
    assert [(l, d.codes) for l, ds in sup.lines.items() for d in ds] == [(6, ("TS204",))]
    assert not sup.file_all


def test_file_level_directive():
    assert parse_suppressions("x = 1\n\n\n\n\n\n\n# ts-lint: noqa\n").file_all
    sup = parse_suppressions("# TS-Lint: NOQA: TS201, ts301\nx = 1  # noqa: TS401\n")
    assert not sup.file_all and sup.file_codes == {"TS201", "TS301"}
    assert [d.codes for d in sup.lines[2]] == [("TS401",)]
    assert 1 not in sup.lines  # the file directive is not also a line directive
    assert not parse_suppressions('"""\n# ts-lint: noqa\n"""\n').file_all


def test_tokenize_error_keeps_directives_before_it():
    sup = parse_suppressions("a = 1  # noqa: TS201\nb = (\n")
    assert [d.codes for d in sup.lines[1]] == [("TS201",)]
    assert parse_suppressions("\x00\x00(((").lines == {}


def test_line_suppression_and_multiline_start_line():
    kept, _ = run("""\
        a = 1  # noqa: TS201
        b = (2,  # noqa: TS202
             3)
        c = 4  # noqa
        d = 5  # noqa: E501
    """, [D("TS201", 1), D("TS203", 1), D("TS202", 2, end_line=3), D("TS202", 3),
          D("TS301", 4), D("TS302", 4, sev=Severity.INFO), D("TS401", 5)])
    assert show(kept) == [("TS203", 1, "fake TS203"), ("TS202", 3, "fake TS202"),
                          ("TS401", 5, "fake TS401")]


def test_file_level_suppresses_everything_including_unused():
    kept, _ = run("# ts-lint: noqa\na = 1  # noqa: TS201\n", [D("TS301", 2), D("TS999", 1)])
    assert kept == []
    kept, _ = run("# ts-lint: noqa: TS301\na = 1\n", [D("TS301", 2), D("TS302", 2)])
    assert show(kept) == [("TS302", 2, "fake TS302")]


def test_unused_codes_become_ts960_with_a_fix():
    source = """\
        a = 1  # noqa: TS201, TS202, E501
        b = 2  # noqa: TS203
        c = 3  # noqa: TS098  # expect: TS960
        d = 4  # note # noqa: TS204
        e = 5  # noqa: TS205 TS206
    """
    kept, src = run(source, [D("TS201", 1), D("TS206", 5)])
    assert show(kept) == [
        ("TS960", 1, "Unused `noqa` directive (unused: `TS202`)"),
        ("TS960", 2, "Unused `noqa` directive (unused: `TS203`)"),
        ("TS960", 3, "Unused `noqa` directive (unknown: `TS098`)"),
        ("TS960", 4, "Unused `noqa` directive (unused: `TS204`)"),
        ("TS960", 5, "Unused `noqa` directive (unused: `TS205`)"),
    ]
    d = kept[0]
    assert (d.name, d.severity, d.range) == ("unused-noqa", Severity.WARNING,
                                              SourceRange("f.py", 1, 7, 1, 33))
    assert (d.fix.title, d.fix.applicability) == ("Remove unused code from `noqa`", "safe")
    fixed = [apply_fix(src, k).splitlines()[k.range.line - 1] for k in kept]
    assert fixed == ["a = 1  # noqa: TS201, E501", "b = 2", "c = 3  # expect: TS960",
                     "d = 4  # note", "e = 5  # noqa: TS206"]
    assert [k.fix.title for k in kept[1:]] == ["Remove unused `noqa` directive"] * 3 + [
        "Remove unused code from `noqa`"]


def test_unused_only_for_enabled_and_producible_codes():
    source = "a = 1  # noqa: TS201, TS801, TS951, TS960\n"
    kept, _ = run(source, [], enabled=lambda c: c != "TS201",
                  produced=lambda c: c not in ("TS801", "TS951"))
    assert kept == []  # TS201 off, TS801/TS951 not produced, TS960 never reported as unused
    kept, _ = run("a = 1  # noqa: TS201\n", [], enabled=lambda c: c != "TS960")
    assert kept == []  # TS960 itself not selected


def test_ts960_is_suppressed_by_its_own_code():
    kept, _ = run("a = 1  # noqa: TS201, TS960\n", [])
    assert kept == []
    kept, _ = run("# ts-lint: noqa: TS960\na = 1  # noqa: TS201\n", [])
    assert kept == []


def test_ts960_catalogue_entry():
    rules = load_all()
    rule = get("TS960")
    assert rules["TS960"] is rule
    assert (rule.name, rule.severity, rule.phase) == ("unused-noqa", Severity.WARNING, "frontend")
    for section in DOC_SECTIONS:
        assert f"## {section}" in rule.doc()
    assert rule.__module__ == "ts_lint.rules_lint"
    assert len(rule.VALID) == 1 and len(rule.INVALID) == 1


def test_ts960_examples_through_the_suppression_pipeline():
    """With no other finding, the INVALID program yields TS960 on its marked line only."""
    from ts_runtime.testing import expected_findings
    from ts_lint.cli import check_source

    class NoFindings:
        def lint_source(self, source, path, **kw):
            return []

    rule = get("TS960")
    for src in rule.VALID:
        assert check_source(src, "program.py", api=NoFindings()).diagnostics == []
    for src in rule.INVALID:
        got = [(d.code, d.range.line) for d in
               check_source(src, "program.py", api=NoFindings()).diagnostics]
        assert got == expected_findings(src) == [("TS960", 50)]
