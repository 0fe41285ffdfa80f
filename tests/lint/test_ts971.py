"""TS971 from ts-lint: an import of a TS module, or of a name from one, that raises
ImportError (reported at the name, and the module's run stops there, as in Python)."""
import pytest

from ts_lint.api import lint_source

REF = "cutlass.experimental.task_scheduling"


def _ts971(src):
    return [(d.range.line, d.range.column, d.message) for d in lint_source(src, "m.py") if d.code == "TS971"]


@pytest.mark.parametrize("pkg", [REF, "ts_runtime"])
def test_a_class_imported_from_the_package_instead_of_its_module(pkg):
    src = f"from {pkg}.resources import StageInfo\nfrom {pkg} import schedule, MemoryResource\n"
    col = src.splitlines()[1].index("MemoryResource")        # (0-based, as the ranges are)
    assert _ts971(src) == [(2, col, f"cannot import name 'MemoryResource' from '{pkg}'; it is defined in "
                                   f"'{pkg}.resources': Python raises ImportError here")]


def test_a_misspelt_name_gets_the_closest_one():
    src = f"from {REF}.task_manager import (\n    TaskManger,\n)\n"
    assert _ts971(src) == [(2, 4, f"cannot import name 'TaskManger' from '{REF}.task_manager'; did you mean "
                                  f"'TaskManager'?: Python raises ImportError here")]


def test_a_module_that_does_not_exist():
    assert _ts971(f"import {REF}.resorces\n") == [
        (1, 7, f"No module named '{REF}.resorces'; did you mean '{REF}.resources'?: Python raises "
               f"ModuleNotFoundError here")]
    assert _ts971(f"from {REF}.tasks import Task\n") == [
        (1, 5, f"No module named '{REF}.tasks'; did you mean '{REF}.task'?: Python raises ModuleNotFoundError here")]
    assert _ts971(f"from {REF}.kernels import Task\n") == [
        (1, 5, f"No module named '{REF}.kernels': Python raises ModuleNotFoundError here")]


def test_the_run_stops_at_the_failing_import():
    # Python never gets to the NameError below: the import is the one finding
    src = f"from {REF}.resources import MemoryResorce\n\nclass R(MemoryResource):\n    pass\n"
    assert [d.code for d in lint_source(src, "m.py") if d.severity.name == "ERROR"] == ["TS971"]


def test_what_imports_is_not_reported():
    src = (f"import {REF}\nimport {REF}.resources as res\nfrom {REF} import pipeline, enums, schedule, Every\n"
           f"from {REF}.task import Task\nfrom {REF}.memory import SmemAllocator, TmemAllocator\n"
           f"from {REF}.schedule_builder import domain_loop, work_tile_loop\n"
           f"from {REF}.enums import PipelineType, PipelineGroupMode\n"
           f"from {REF}.pipeline_group import PipelineGroup\nfrom {REF}.resources import *\n"
           "from ts_runtime import Diagnostic\n")          # a ts-only name, under ts's own prefix
    assert _ts971(src) == []


def test_an_import_with_a_fallback_or_in_a_function_never_called_is_not_reported():
    src = (f"try:\n    from {REF} import TaskManager\nexcept ImportError:\n"
           f"    from {REF}.task_manager import TaskManager\n\n\n"
           f"def unused():\n    from {REF} import Task\n")
    assert _ts971(src) == []


@pytest.mark.parametrize("mod,close", [
    ("cutlass.experimental.task_schedulin.resources", f"{REF}.resources"),
    ("cutllass.experimental.task_scheduling.enums", f"{REF}.enums"),
    ("cutlass.exerimental.task_scheduling.task_manager", f"{REF}.task_manager"),
    (f"{REF}.resorces", f"{REF}.resources"),
])
def test_a_misspelt_module_path_of_the_reference(mod, close):
    assert _ts971(f"from {mod} import (\n    X,\n)\n") == [
        (1, 5, f"No module named '{mod}'; did you mean '{close}'?: Python raises ModuleNotFoundError here")]


def test_a_misspelt_package_name_from_cutlass_experimental():
    assert _ts971("from cutlass.experimental import task_schedulin as ts\n") == [
        (1, 33, "cannot import name 'task_schedulin' from 'cutlass.experimental'; did you mean "
                "'task_scheduling'?: Python raises ImportError here")]


def test_other_cutlass_modules_and_the_reference_internal_modules_are_not_judged():
    src = ("from cutlass.cute.runtime import from_dlpack\nimport cutlass.pipeline as pipeline\n"
           "from cutlass.experimental import primitives as prims, cuda\n"
           f"from {REF}.exhaustive_checker import X\nimport {REF}.schedule_legacy_adapter\n"
           "import ts_runtime2\n")                  # a near-name of ts's own package: not judged
    assert _ts971(src) == []
