"""TS000, TS901-TS905, TS950-TS959, TS999: lifecycle, skip_validation, internal and front-end codes."""
import os
import tempfile

import pytest

from ts_runtime.diagnostics import Severity
from ts_runtime.rules import load_all
from ts_runtime.rules.other import UNRESOLVED, apply_skip_validation, sample
from ts_runtime.testing import run_program, run_source

RULES = load_all()


def line_of(src, text, nth=0):
    return [i for i, line in enumerate(src.splitlines(), 1) if text in line][nth]


def found(src, severities=(Severity.ERROR,)):
    return sorted({(d.code, d.range.line) for d in run_source(src) if d.severity in severities})


def lint_found(src, severities=(Severity.ERROR,)):
    lint = pytest.importorskip("ts_lint.api")
    return sorted({(d.code, d.range.line) for d in lint.lint_source(src, "program.py") if d.severity in severities})


# ---------------------------------------------------------------------------- TS901
def test_ts901_notice_at_the_skip_validation_argument_lists_the_downgraded_codes():
    src = sample(regs="40", options=",\n        skip_validation=True")
    diags = run_source(src)
    assert not [d for d in diags if d.severity is Severity.ERROR]
    notice = [d for d in diags if d.code == "TS901"]
    assert len(notice) == 1 and notice[0].severity is Severity.WARNING
    assert notice[0].range.line == line_of(src, "skip_validation=True")
    assert "1 validation error(s)" in notice[0].message and "(TS711)" in notice[0].message
    downgraded = [d for d in diags if d.code == "TS711"][0]
    assert downgraded.severity is Severity.WARNING
    assert downgraded.message.startswith("TS validation (uncovered-warp-group-registers): ")
    ws = (Severity.ERROR, Severity.WARNING)
    assert lint_found(src, ws) == found(src, ws)


def test_ts901_absent_when_nothing_was_downgraded():
    assert found(sample(options=", skip_validation=True"), (Severity.ERROR, Severity.WARNING)) == []


def test_apply_skip_validation_keeps_assertions_and_type_errors():
    from ts_runtime.model import KernelModel
    from ts_runtime.rules.registry import make_diagnostic
    k = KernelModel()
    diags = [make_diagnostic("TS503", "x"), make_diagnostic("TS711", "y"), make_diagnostic("TS516", "z"),
             make_diagnostic("TS133", "w")]
    out = apply_skip_validation(k, diags)
    sev = {d.code: d.severity for d in out}
    assert sev == {"TS503": Severity.ERROR, "TS711": Severity.WARNING, "TS516": Severity.ERROR,
                   "TS133": Severity.WARNING, "TS901": Severity.WARNING}
    assert [d.message for d in out if d.code == "TS133"] == ["w"]     # warnings pass unchanged
    assert apply_skip_validation(k, [make_diagnostic("TS503", "x")])[-1].code == "TS503"   # no notice


# ---------------------------------------------------------------------------- TS902 / TS903
def test_ts903_run_before_setup():
    src = RULES["TS903"].INVALID[0]
    assert found(src) == [("TS903", line_of(src, "tm.run()"))] == lint_found(src)


def test_ts902_second_setup(monkeypatch):
    import ts_runtime.codegen.runtime as rt
    monkeypatch.setattr(rt, "setup_resources_and_tasks", lambda tm: None)
    monkeypatch.setattr(rt, "run_tasks", lambda tm: None)
    src = sample(keep=True, after="tm.setup_resources_and_tasks()\ntm.run()\ntm.setup_resources_and_tasks()")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "p.py")
        with open(path, "w") as f:
            f.write(src)
        diags = run_program(path)
    setup2 = line_of(src, "tm.setup_resources_and_tasks()", 1)
    assert [(d.code, d.range.line) for d in diags] == [("TS902", setup2)]
    assert lint_found(src) == [("TS902", setup2)]


def test_lifecycle_in_order_is_clean():
    src = sample(keep=True, after="tm.setup_resources_and_tasks()\ntm.run()")
    assert lint_found(src) == []


# ---------------------------------------------------------------------------- TS904
def test_ts904_empty_direction():
    src = RULES["TS904"].INVALID[0]
    assert found(src) == [("TS904", line_of(src, 'direction=""'))] == lint_found(src)
    assert found(RULES["TS904"].VALID[0]) == [] == lint_found(RULES["TS904"].VALID[0])


# ---------------------------------------------------------------------------- TS999 / TS000 / TS95x
def test_ts999_a_crashing_rule_becomes_a_warning(monkeypatch):
    from ts_runtime.model import KernelModel
    from ts_runtime.rules import engine
    from ts_runtime.rules.base import Rule

    class Boom(Rule):
        code, name = "TS503", "work-queue-op-in-head"

        def check(self, kernel):
            raise KeyError("boom")
    monkeypatch.setattr(engine, "manager_rules", lambda: [Boom])
    diags = engine.run_manager_rules(KernelModel(), with_checker=False)
    assert [(d.code, d.severity) for d in diags] == [("TS999", Severity.WARNING)]
    assert "internal error in rule TS503: KeyError" in diags[0].message
    assert RULES["TS999"].severity is Severity.WARNING


def test_ts000_reported_by_ts_lint_for_a_syntax_error():
    lint = pytest.importorskip("ts_lint.api")
    diags = lint.lint_source("def build(:\n    pass\n", "bad.py")
    assert [d.code for d in diags] == ["TS000"]
    assert RULES["TS000"].phase == "frontend" and RULES["TS000"].severity is Severity.ERROR


def test_front_end_limit_codes():
    codes = [f"TS95{i}" for i in range(10)]
    for code in codes:
        r = RULES[code]
        assert r.severity is Severity.INFO and r.phase == "frontend" and r.open_reason is None, code
    assert sorted(UNRESOLVED.values()) == codes
    assert UNRESOLVED["value"] == "TS950" and UNRESOLVED["resource"] == "TS951"
    assert UNRESOLVED["schedule"] == "TS952" and UNRESOLVED["budget"] == "TS958"
    assert RULES["TS950"].name == "unresolved-value"


def test_ts905_is_catalogued_as_open():
    assert RULES["TS905"].open_reason
