"""Python errors in the bodies and signatures of the work methods a kernel traces.

The reference compiles every work method a schedule calls (and the helper methods they
call) when the kernel is traced, as `method(self, stage_info, **inputs)`; a misspelt
`StageInfo` field (TS963), an attribute the resource does not have (TS966), a helper call
whose arguments do not bind (TS907), a method without the `stage_info` parameter (TS240)
and `@cute.jit` above the work decorator (TS241) fail there. Each program is
tests/codegen/rule_programs.py's one-task kernel with one edit; ts-lint must report
exactly the marked (code, line) pairs, the tracing front end the shared ones (TS240,
TS241: the others are plain Python exceptions when it traces the kernel), and the
reference must fail compiling exactly the marked programs, with that exception.
"""
from __future__ import annotations

import re

import pytest

from ts_runtime.diagnostics import Severity
from ts_runtime.testing import expected_findings, run_source

from ts_lint.api import lint_source

from .rule_programs import simple
from .reference_compile import compile_problems

_PUT = ("    def put(self, stage_info: StageInfo, v: cutlass.Int32) -> None:\n"
        "        self.out[stage_info.loop_offset] = v\n")
_GET = ("    @consumer_work(returns=v)\n    @cute.jit\n    def get(self, stage_info: StageInfo) -> cutlass.Int32:\n")


def _put(body: str, extra: str = "") -> str:
    """simple() with Dst.put's body replaced (and `extra` methods after it)."""
    src = simple()
    assert _PUT in src
    return src.replace(_PUT, "    def put(self, stage_info: StageInfo, v: cutlass.Int32) -> None:\n" + body + extra, 1)


_INDEX = '''
    @cute.jit
    def _index(self, stage_info: StageInfo) -> cutlass.Int32:
{BODY}
'''


def _helper(call: str, helper_body: str = "        return stage_info.loop_offset\n") -> str:
    return _put(f"        self.out[{call}] = v\n", _INDEX.format(BODY=helper_body.rstrip("\n")))


def _get(head: str) -> str:
    src = simple()
    assert _GET in src
    return src.replace(_GET, head, 1)


# name -> (program, the reference's exception type or None); the lint's expected findings
# are the `# expect:` markers
PROGRAMS = {
    "valid": (simple(), None),
    # TS963: a StageInfo field that does not exist
    "stage-field-typo": (simple(ret="cutlass.Int32(stage_info.loop_ofset)  # expect: TS963"), "AttributeError"),
    # TS966: an attribute no class defines and nothing sets
    "self-attr-typo": (_put("        self.outt[stage_info.loop_offset] = v  # expect: TS966\n"), "AttributeError"),
    # an attribute the kernel sets on the object before it is traced: not an error
    "self-attr-set-outside": (_put("        self.target[stage_info.loop_offset] = v\n").replace(
        '    dst = Dst(name="dst", out=out)\n', '    dst = Dst(name="dst", out=out)\n    dst.target = out\n', 1),
        None),
    # TS907: a helper method called without its stage_info argument
    "helper-arg-missing": (_helper("self._index()]  # expect: TS907\n        self.out[0"), "TypeError"),
    "helper-call-ok": (_helper("self._index(stage_info)"), None),
    # the helper is followed: its own StageInfo parameter and self reads are judged
    "helper-stage-field-typo": (_helper("self._index(stage_info)",
                                        "        return stage_info.loop_ofset  # expect: TS963\n"), "AttributeError"),
    "helper-self-attr-typo": (_helper("self._index(stage_info)",
                                      "        return self.shift + stage_info.loop_offset  # expect: TS966\n"),
                              "AttributeError"),
    # TS240: a work method without the stage_info parameter
    "no-stage-info": (_get("    @consumer_work(returns=v)\n    @cute.jit\n"
                           "    def get(self) -> cutlass.Int32:  # expect: TS240\n"
                           "        stage_info = None\n"), "TypeError"),
    # TS241: @cute.jit above the work decorator
    "jit-outermost": (_get("    @cute.jit  # expect: TS241\n    @consumer_work(returns=v)\n"
                           "    def get(self, stage_info: StageInfo) -> cutlass.Int32:\n"), "DSLUserCodeError"),
}
NAMES = sorted(PROGRAMS)
SHARED = {"TS240", "TS241"}     # rules both front ends report (the others are ts-lint's own)


def _errors(diags) -> set:
    return {(d.code, d.range.line) for d in diags if d.severity is Severity.ERROR}


@pytest.mark.parametrize("name", NAMES)
def test_lint_reports_exactly_the_marked_findings(name):
    src, _exc = PROGRAMS[name]
    assert _errors(lint_source(src, "kernel.py")) == set(expected_findings(src))


@pytest.mark.parametrize("name", NAMES)
def test_the_tracing_front_end_reports_the_shared_ones(name):
    src, _exc = PROGRAMS[name]
    want = {(c, line) for c, line in expected_findings(src) if c in SHARED}
    assert _errors(run_source(src)) == want


def test_each_invalid_program_has_one_finding():
    for name, (src, exc) in PROGRAMS.items():
        assert len(expected_findings(src)) == (0 if exc is None else 1), name


@pytest.mark.reference
def test_reference_fails_compiling_exactly_the_marked_programs():
    problems = compile_problems({n: PROGRAMS[n][0] for n in NAMES}, lambda n: None if PROGRAMS[n][1] is None
                                else (lambda v, exc=PROGRAMS[n][1]: v.exc_type == exc))
    assert not problems, "\n".join(problems)



def test_programs_differ_from_the_base_by_one_edit():
    base = simple()
    for name, (src, _exc) in PROGRAMS.items():
        assert src == base or re.sub(r"  # expect: TS\d+", "", src) != base, name
