"""TS963 / TS907 on a resource object used where a schedule proxy was meant: an @schedule
body reading it from an enclosing scope instead of a parameter, or a pipeline operation
moved out of its schedule (ts_lint/extract/tsapi.py `missing_resource_attribute`,
`direct_work_call`; at run time schedule_builder.captured_resource_finding and the work
wrapper of ts_runtime/resources.py, with the same text from ts_runtime.api_calls).

Found by differential fuzzing (a call's receiver replaced by another resource of the
build function): the object itself is not a schedule proxy, so `inp.release()` raises
AttributeError (and `out.store(...)` a TypeError: the work method itself runs, without its
stage_info) under both implementations, and ts-lint had been silent, or reported only what
the missing call left behind (unbalanced pipelines). The rule example in
ts_lint/rules_lint.py runs the same program through the reference. These pin the exact
line, that nothing else is reported after it, and where ts-lint stays silent.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from ts_runtime.diagnostics import Severity
from ts_lint.api import lint_source
from ts_runtime.testing import run_source
from ts_lint.rules_lint import _VALID

ROOT = Path(__file__).resolve().parents[2]
_RELEASE = "            smem.release()\n"


def _errors(src: str) -> list:
    return [(d.code, d.range.line) for d in lint_source(src, "kernel.py") if d.severity is Severity.ERROR]


def _line(src: str, text: str) -> int:
    return src.splitlines().index(text.rstrip("\n")) + 1


def test_a_pipeline_operation_on_a_captured_resource():
    src = _VALID.replace(_RELEASE, "            inp.release()\n", 1)
    assert _errors(src) == [("TS963", _line(src, "            inp.release()"))]
    d = next(d for d in lint_source(src, "kernel.py") if d.code == "TS963")
    assert d.message.startswith("'InGmem' object has no attribute 'release': the resource ('in') is read from "
                                "an enclosing scope")


def test_a_work_method_of_another_class_on_a_captured_resource():
    src = _VALID.replace("            output_gmem.store(smem_val=v)\n", "            inp.store(smem_val=v)\n", 1)
    assert _errors(src) == [("TS963", _line(src, "            inp.store(smem_val=v)"))]


@pytest.mark.parametrize("edit", [
    # the schedule's own parameter: a proxy (its pipeline operations exist)
    (_RELEASE, _RELEASE),
    # a method the captured resource's class has
    (_RELEASE, "            smem.release()\n            inp.compute_coords\n"),
    # under a handler: the AttributeError may be caught
    (_RELEASE, "            smem.release()\n            try:\n                inp.release()\n"
               "            except AttributeError:\n                pass\n"),
])
def test_attributes_that_exist_or_may_be_caught_are_not_reported(edit):
    src = _VALID.replace(edit[0], edit[1], 1)
    assert "TS963" not in {c for c, _ in _errors(src)}


def test_a_class_that_makes_attributes_up_is_not_judged():
    src = _VALID.replace("class InGmem(MemoryResource):\n",
                         "class InGmem(MemoryResource):\n    def __getattr__(self, name):\n"
                         "        return lambda *a, **k: None\n", 1).replace(
        _RELEASE, "            smem.release()\n            inp.release()\n", 1)
    assert "TS963" not in {c for c, _ in _errors(src)}


def test_a_pipeline_operation_moved_out_of_its_schedule():
    src = _VALID.replace("    tasks = [\n", "    smem.commit()\n    tasks = [\n", 1)
    assert _errors(src) == [("TS963", _line(src, "    smem.commit()"))]
    d = next(d for d in lint_source(src, "kernel.py") if d.code == "TS963")
    assert "the resource ('smem') is used outside any @schedule body, so it is the object itself" in d.message


def test_outside_a_schedule_only_pipeline_operations_are_judged():
    # another missing attribute of a resource in host code may have been set where ts-lint
    # did not look: not judged
    src = _VALID.replace("    tasks = [\n", "    smem.tma_atom\n    tasks = [\n", 1)
    assert "TS963" not in {c for c, _ in _errors(src)}


def test_a_work_method_called_on_the_captured_resource_itself():
    # `out` is the object the schedule's `output_gmem` proxy stands for: called directly,
    # the method itself runs, without its stage_info (TypeError under both implementations)
    src = _VALID.replace("            output_gmem.store(smem_val=v)\n", "            out.store(smem_val=v)\n", 1)
    assert _errors(src) == [("TS907", _line(src, "            out.store(smem_val=v)"))]
    d = next(d for d in lint_source(src, "kernel.py") if d.code == "TS907")
    assert d.message.startswith("OutGmem.store(...): missing a required argument: 'stage_info'")


def test_a_direct_work_call_that_binds_is_not_judged():
    src = _VALID.replace("            output_gmem.store(smem_val=v)\n", "            out.store(None, smem_val=v)\n", 1)
    assert "TS907" not in {c for c, _ in _errors(src)}


def test_a_pdl_launch_moved_out_of_its_schedule():
    # a ts API resource's work method (ts_runtime's signature, the reference's): the call
    # runs PdlLaunchBarrier.launch_griddep itself, without its stage_info
    src = (ROOT / "examples" / "06_pdl.py").read_text()
    src = src.replace("        pdl_launch.launch_griddep()", "    pdl_launch.launch_griddep()", 1)
    assert _errors(src) == [("TS907", _line(src, "    pdl_launch.launch_griddep()    # the next grid may start now"))]


@pytest.mark.parametrize("edit", [
    # given to code ts-lint does not run, which may set attributes on it
    ("    alloc = SmemAllocator()", "    import some_unknown_module\n    some_unknown_module.prepare(inp)\n"
                                  "    alloc = SmemAllocator()"),
    # a setattr of a name ts-lint does not know
    ("    alloc = SmemAllocator()", "    import some_unknown_module\n    setattr(inp, some_unknown_module.NAME, 1)\n"
                                  "    alloc = SmemAllocator()"),
    # the file stores that name somewhere (in code the build may run where ts-lint did not look)
    ("def build(", "def patch(r):\n    r.release = lambda: None\n\ndef build("),
])
def test_a_resource_whose_attributes_may_have_been_set_is_not_judged(edit):
    src = _VALID.replace(_RELEASE, "            inp.release()\n", 1).replace(edit[0], edit[1], 1)
    assert edit[1] in src
    assert "TS963" not in {c for c, _ in _errors(src)}


def test_a_direct_call_of_a_jit_work_method():
    # `@producer_work` over `@cute.jit`: the DSL binds the call as Python does (the
    # reference: TypeError, missing stage_info)
    src = ("import cutlass.cute as cute\n" + _VALID).replace(
        "    @producer_work\n    def store(self, stage_info, smem_val):",
        "    @producer_work\n    @cute.jit\n    def store(self, stage_info, smem_val):", 1).replace(
        "            output_gmem.store(smem_val=v)\n", "            out.store(smem_val=v)\n", 1)
    assert "@cute.jit\n    def store" in src
    assert _errors(src) == [("TS907", _line(src, "            out.store(smem_val=v)"))]



def _runtime(src: str) -> list:
    return [(d.code, d.range.line, d.range.column, d.message) for d in run_source(src)
            if d.severity is Severity.ERROR]


def _lint(src: str) -> list:
    return [(d.code, d.range.line, d.range.column, d.message) for d in lint_source(src, "program.py")
            if d.severity is Severity.ERROR]


@pytest.mark.parametrize("edit", [
    (_RELEASE, "            inp.release()\n"),                                            # TS963, captured
    ("            output_gmem.store(smem_val=v)\n", "            out.store(smem_val=v)\n"),  # TS907, captured
    ("    tasks = [\n", "    out.store(smem_val=0)\n    tasks = [\n"),                     # TS907, outside
])
def test_both_front_ends_report_the_same_finding(edit):
    src = _VALID.replace(edit[0], edit[1], 1)
    got = _runtime(src)
    assert len(got) == 1 and got[0][0] in ("TS963", "TS907")
    assert got == _lint(src)


def test_the_runtime_reports_a_jit_work_method_called_directly_as_the_reference_does():
    # the reference: TypeError (missing stage_info); without the wrapper's binding the
    # @cute.jit function's own binding error would be the DSL's
    pytest.importorskip("cutlass")
    src = ("import cutlass.cute as cute\n" + _VALID).replace(
        "    @producer_work\n    def store(self, stage_info, smem_val):",
        "    @producer_work\n    @cute.jit\n    def store(self, stage_info, smem_val):", 1).replace(
        "            output_gmem.store(smem_val=v)\n", "            out.store(smem_val=v)\n", 1)
    got = _runtime(src)
    assert [g[:2] for g in got] == [("TS907", _line(src, "            out.store(smem_val=v)"))]
    assert got == _lint(src)
