"""TS329 (a consumer work method annotated to return another DSL type than its task-local
variable's dtype) on kernels compiled by the reference: ts-lint reports TS329, at the
method, exactly for the programs whose `compile_fake()` the reference rejects with its
TS317 TypeError ("returned value for TaskLocalVariable ... expected ..."); the others
compile there. The reference accepts every `build()`.

The programs are tests/codegen/rule_programs.py's one-task kernel with the variable's
dtype, the method's annotation and its returned value varied.
"""
from __future__ import annotations

import pytest

from ts_runtime.diagnostics import Severity

from ts_lint.api import lint_source

from .rule_programs import simple
from .reference_compile import compile_problems



def _program(dtype: str = "Int32", annotation: str = "Int32", ret: str = "cutlass.Int32(stage_info.loop_offset)"):
    src = simple(ret=ret, default=f"cutlass.{dtype}(0)")
    src = src.replace("TaskLocalVariable(dtype=cutlass.Int32, default=cutlass.", f"TaskLocalVariable(dtype=cutlass.{dtype}, "
                      "default=cutlass.", 1)
    old = "def get(self, stage_info: StageInfo) -> cutlass.Int32:"
    assert old in src
    return src.replace(old, f"def get(self, stage_info: StageInfo) -> cutlass.{annotation}:")


# name -> (program, whether the reference's compile rejects it)
PROGRAMS = {
    "all-int32": (_program(), False),
    "dtype-int16-method-int32": (_program(dtype="Int16"), True),
    "dtype-float32-method-int32": (_program(dtype="Float32"), True),
    "dtype-int16-method-int16": (_program(dtype="Int16", annotation="Int16",
                                          ret="cutlass.Int16(stage_info.loop_offset)"), False),
}
NAMES = sorted(PROGRAMS)


def _method_line(src: str) -> int:
    return src[:src.index("    @consumer_work(returns=v)")].count("\n") + 1


@pytest.mark.parametrize("name", NAMES)
def test_ts_lint_reports_exactly_what_the_reference_rejects(name):
    src, rejected = PROGRAMS[name]
    found = {(d.code, d.range.line) for d in lint_source(src, "kernel.py") if d.severity is Severity.ERROR}
    assert found == ({("TS329", _method_line(src))} if rejected else set())


@pytest.mark.reference
def test_reference_compiles_exactly_the_programs_without_ts329():
    problems = compile_problems({n: PROGRAMS[n][0] for n in NAMES}, lambda n: None if not PROGRAMS[n][1] else (
        lambda v: v.exc_type == "TypeError" and "returned value for TaskLocalVariable" in v.message))
    assert not problems, "\n".join(problems)
