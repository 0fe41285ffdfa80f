"""Every example through both front ends: valid ones are clean, each bad one reports exactly
its marked finding (`# expect: TSxxx`) — the same code on the same line from the runtime
(which runs the program's `build()`) and from ts-lint (which never runs it).
"""
import pathlib

import pytest

from ts_runtime.diagnostics import Severity
from ts_runtime.testing import expected_findings, run_program

ROOT = pathlib.Path(__file__).resolve().parents[1]
VALID = sorted((ROOT / "examples").glob("[0-9]*.py"))
BAD = sorted((ROOT / "examples" / "bad").glob("*.py"))
FILES = VALID + BAD


def _needs_cutlass():
    pytest.importorskip("cutlass", reason="examples import cutlass (tutorial style)")


def _verdict(path, diags):
    expected = set(expected_findings(path.read_text()))
    got = {(d.code, d.range.line) for d in diags if d.severity is not Severity.INFO}
    errors = {(d.code, d.range.line) for d in diags if d.severity is Severity.ERROR}
    if not expected:
        assert not errors, "\n".join(d.format() for d in diags if d.severity is Severity.ERROR)
        return
    assert expected <= got, f"expected {sorted(expected)}, got {sorted(got)}"
    extra = {c for c, _ in errors} - {c for c, _ in expected}
    assert not extra, f"unexpected error codes {sorted(extra)} in {sorted(errors)}"


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.name}" for p in FILES])
def test_runtime(path):
    _needs_cutlass()
    _verdict(path, run_program(str(path)))


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.name}" for p in FILES])
def test_lint(path):
    from ts_lint.api import lint_source
    _verdict(path, lint_source(path.read_text(), str(path)))


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.name}" for p in FILES])
def test_parity(path):
    """ts-lint and the runtime report the same (code, line) pairs on every example."""
    _needs_cutlass()
    from ts_lint.api import lint_source
    rt = {(d.code, d.range.line) for d in run_program(str(path)) if d.severity is Severity.ERROR}
    li = {(d.code, d.range.line) for d in lint_source(path.read_text(), str(path))
          if d.severity is Severity.ERROR}
    assert rt == li
