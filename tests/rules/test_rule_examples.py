"""Every rule's VALID / INVALID programs, through the tracing DSL and through ts-lint.

An INVALID program marks the line of each expected finding with `# expect: TSxxx`; the
test asserts that exact code on that exact line, and no other error code.
"""
import pytest

from ts_runtime.diagnostics import Severity
from ts_runtime.rules import load_all
from ts_runtime.testing import codes_and_lines, expected_findings, run_source

RULES = load_all()
CASES = [(code, kind, i, src) for code, rule in sorted(RULES.items())
         for kind, progs in (("valid", rule.VALID), ("invalid", rule.INVALID))
         for i, src in enumerate(progs)]
IDS = [f"{c}-{k}-{i}" for c, k, i, _ in CASES]


def _check(code, kind, src, diags):
    errors = {(d.code, d.range.line) for d in diags if d.severity is Severity.ERROR}
    if kind == "valid":
        bad = [d for d in diags if d.severity is Severity.ERROR or d.code == code]
        assert not bad, "\n".join(d.format() for d in bad)
    else:
        expected = set(expected_findings(src))
        assert expected, "an INVALID example must mark its finding with '# expect: TSxxx'"
        got = codes_and_lines(diags, tuple(Severity))   # INFO notes (e.g. TS432) count too
        assert expected <= got, f"expected {sorted(expected)}, got {sorted(got)}"
        unexpected = {c for c, _ in errors} - {c for c, _ in expected}
        assert not unexpected, f"unexpected error codes {sorted(unexpected)}: {sorted(errors)}"


@pytest.mark.parametrize("code,kind,i,src", CASES, ids=IDS)
def test_runtime(code, kind, i, src):
    if RULES[code].phase == "frontend":
        pytest.skip("reported by ts-lint only")
    _check(code, kind, src, run_source(src))


@pytest.mark.parametrize("code,kind,i,src", CASES, ids=IDS)
def test_lint(code, kind, i, src):
    pytest.importorskip("ts_lint.api")
    from ts_lint.cli import check_source   # selection + noqa, as the CLI applies them
    _check(code, kind, src, check_source(src, "program.py").diagnostics)
