"""A graph key with an empty upstream list is still a graph entry (TS351 when unused)."""
import pytest

from ts_runtime.rules import load_all
from ts_runtime.testing import expected_findings, run_source

SRC = load_all()["TS351"].INVALID[0].replace("spare: [src],  # expect: TS351", "spare: [],  # expect: TS351")


def test_example_has_the_empty_key():
    assert "spare: [],  # expect: TS351" in SRC


def _pairs(diags):
    return {(d.code, d.range.line) for d in diags if d.severity.value == "error"}


def test_runtime_reports_unused_empty_key():
    assert _pairs(run_source(SRC)) == set(expected_findings(SRC))


def test_lint_reports_unused_empty_key():
    from ts_lint.api import lint_source
    assert _pairs(lint_source(SRC, "program.py")) == set(expected_findings(SRC))


@pytest.mark.reference
def test_reference_rejects_unused_empty_key():
    from oracle import reference_available, reference_verdict
    if not reference_available():
        pytest.skip("reference not installed")
    v = reference_verdict(SRC)
    assert not v.accepted and "is not used by any task" in v.message
