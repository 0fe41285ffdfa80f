"""TS328 (a @consumer_work method whose every exit returns the wrong number of values) on
kernels compiled by the reference: ts-lint reports TS328, at the method, exactly for the
programs whose `compile_fake()` the reference rejects with its TS316 TypeError ("returned
N value(s), but ..."); the others compile there. The reference accepts every `build()`:
it checks the count only while tracing the kernel, which ts does from the source.

The programs are tests/codegen/rule_programs.py's one-task kernel with the returned
values, the `returns=` and the resource's task-local variables varied.
"""
from __future__ import annotations

import pytest

from ts_runtime.diagnostics import Severity

from ts_lint.api import lint_source

from .rule_programs import _GET_ONE, _SCHED_ONE, simple
from .reference_compile import compile_problems

_PEEK = '''
    @consumer_work
    @cute.jit
    def peek(self, stage_info: StageInfo):
        {BODY}
'''
_ONE_TLV = (("    w: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()\n", ""),
            ("        self.w = TaskLocalVariable(dtype=cutlass.Int32, default=cutlass.Int32(0))\n", ""))


def _peek(body: str, one_tlv: bool = False) -> str:
    src = simple(get=_GET_ONE + _PEEK.replace("{BODY}", body), sched="            src.peek()\n" + _SCHED_ONE)
    for old, new in _ONE_TLV if one_tlv else ():
        assert old in src
        src = src.replace(old, new)
    return src


# name -> (program, whether the reference's compile rejects it)
PROGRAMS = {
    "returns-one-gives-one": (simple(), False),
    "returns-one-gives-two": (simple(ret="cutlass.Int32(stage_info.loop_offset), cutlass.Int32(1)"), True),
    "two-tlv-no-returns-gives-one": (_peek("return cutlass.Int32(5)"), True),
    "two-tlv-no-returns-gives-two": (_peek("return cutlass.Int32(5), cutlass.Int32(6)"), True),
    "two-tlv-no-returns-gives-none": (_peek("pass"), False),
    "one-tlv-no-returns-gives-one": (_peek("return cutlass.Int32(5)", one_tlv=True), False),
    "one-tlv-no-returns-gives-none": (_peek("pass", one_tlv=True), False),
    "one-tlv-no-returns-gives-two": (_peek("return cutlass.Int32(5), cutlass.Int32(6)", one_tlv=True), True),
}
NAMES = sorted(PROGRAMS)


def _method_line(src: str) -> int:
    """The line of the `@consumer_work` decorator of the method the case varies."""
    marker = "    @consumer_work\n    @cute.jit\n    def peek" if "def peek" in src else "    @consumer_work(returns=v)"
    return src[:src.index(marker)].count("\n") + 1


@pytest.mark.parametrize("name", NAMES)
def test_ts_lint_reports_exactly_what_the_reference_rejects(name):
    src, rejected = PROGRAMS[name]
    found = {(d.code, d.range.line) for d in lint_source(src, "kernel.py") if d.severity is Severity.ERROR}
    assert found == ({("TS328", _method_line(src))} if rejected else set())


@pytest.mark.reference
def test_reference_compiles_exactly_the_programs_without_ts328():
    problems = compile_problems({n: PROGRAMS[n][0] for n in NAMES}, lambda n: None if not PROGRAMS[n][1] else (
        lambda v: v.exc_type == "TypeError" and "value(s), but" in v.message))
    assert not problems, "\n".join(problems)
