"""Differential test: every rule example gets the same verdict from the reference.

VALID programs must be accepted; INVALID programs of error rules rejected. Warning rules
(and rules whose reference behaviour is a printed note) must still be accepted, since a
warning is not a rejection in either implementation.
"""
import pytest

from ts_runtime.diagnostics import Severity
from ts_runtime.rules import load_all

from oracle import reference_available
from oracle_batch import reference_verdicts

pytestmark = pytest.mark.reference

RULES = load_all()
# ts-only rules (reference_checks_at == "never", e.g. the Hopper TmaWgmma rules) use
# constructs the reference does not have, so they are not asked
CASES = [(code, kind, i, src) for code, rule in sorted(RULES.items()) if rule.reference_checks_at != "never"
         for kind, progs in (("valid", rule.VALID), ("invalid", rule.INVALID))
         for i, src in enumerate(progs)]


_VERDICTS = {}


@pytest.fixture(scope="module")
def verdicts():
    if not _VERDICTS:
        for case, v in zip(CASES, reference_verdicts([c[3] for c in CASES])):
            _VERDICTS[case[:3]] = v
    return _VERDICTS


@pytest.mark.skipif(not reference_available(), reason="reference not installed")
@pytest.mark.parametrize("code,kind,i,src", CASES, ids=[f"{c}-{k}-{i}" for c, k, i, _ in CASES])
def test_reference_agrees(code, kind, i, src, verdicts):
    rule = RULES[code]
    verdict = verdicts[(code, kind, i)]
    if kind == "invalid" and rule.phase == "frontend" and rule.severity is Severity.ERROR:
        # ts-lint's own errors are Python's: the reference fails with that exception (TS961)
        assert (verdict.accepted, verdict.exc_type) == (False, rule.reference_exception)
        return
    if kind == "valid" or rule.severity is not Severity.ERROR or rule.phase == "frontend" \
            or rule.reference_checks_at == "kernel":   # ts reports these earlier than the reference
        assert verdict.accepted, f"reference rejected: {verdict.exc_type}: {verdict.message[:400]}"
    else:
        assert not verdict.accepted, "reference accepted a program ts rejects"
