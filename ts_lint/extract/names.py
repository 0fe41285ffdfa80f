"""Qualified names: which imported object a name stands for.

The interpreter binds every import to a `QualRef` holding the fully qualified name of
what was imported (`import ts_runtime as t` binds `t` to `ts_runtime`, `from
cutlass.experimental import task_scheduling as ts` binds `ts` to
`cutlass.experimental.task_scheduling`); attribute access extends it. Recognising TS is
then a lookup of that qualified name, never a match on the local spelling, so aliases,
conditional imports and shadowing by local definitions behave as in Python.
"""
from __future__ import annotations

from typing import Optional

TS_PACKAGES = ("ts_runtime", "cutlass.experimental.task_scheduling")

# every public TS name ts_lint understands (class, function, enum or constant)
TS_SYMBOLS = frozenset({
    "schedule", "domain_loop", "work_tile_loop", "when_true", "when_false",
    "consumer_work", "producer_work", "WorkAttr", "Every", "IterationPredicate",
    "OpaqueCondition", "FIRST_ITER", "LAST_ITER", "SKIPPABLE",
    "MemoryResource", "PdlWaitBarrier", "PdlLaunchBarrier", "PDL_BARRIER_TYPES", "WorkQueue",
    "PipelineConfig", "TileSchedulerConfig", "StageInfo", "WorkTileInfo", "TaskLocalVariable",
    "Task", "TaskManager", "PipelineGroup", "PipelineGroupMode", "PipelineType",
    "SignalingThreads", "TileSchedulerType", "ScheduleStage", "SmemAllocation",
    "TmemAllocation", "SmemAllocator", "TmemAllocator", "ResourceContext",
    "CooperativeGroup", "Agent", "PipelineOp", "PipelineUserType", "DataFlowToken",
    "ScheduleError", "ScheduleValidationError", "LoopGuard", "BlockGuard",
})
# TS modules (a qualified name ending in one of these is a module, not a symbol)
TS_MODULES = frozenset({
    "resources", "task", "task_manager", "memory", "pipeline_group", "enums",
    "schedule_builder", "pipeline", "diagnostics",
})
# names that tutorials import from cutlass.pipeline rather than from TS
CUTLASS_PIPELINE = frozenset({"CooperativeGroup", "Agent", "PipelineOp", "PipelineUserType"})

# cutlass numeric types: name -> width in bits
DTYPE_WIDTHS = {
    "Boolean": 8, "Int4": 4, "Int8": 8, "Int16": 16, "Int32": 32, "Int64": 64, "Int128": 128,
    "Uint8": 8, "Uint16": 16, "Uint32": 32, "Uint64": 64, "Uint128": 128,
    "Float16": 16, "BFloat16": 16, "Float32": 32, "TFloat32": 32, "Float64": 64,
    "Float8E4M3FN": 8, "Float8E5M2": 8, "Float8E8M0FNU": 8, "Float8E4M3B11FNUZ": 8,
    "Float8E4M3": 8, "Float6E3M2FN": 6, "Float6E2M3FN": 6, "Float4E2M1FN": 4,
}


def ts_symbol(qualname: str) -> Optional[str]:
    """Canonical TS name for a qualified name, e.g. `PipelineConfig.create_tma_async_pipeline_cfg`.

    None when the name is not (an attribute of) a TS symbol.
    """
    for pkg in TS_PACKAGES:
        if qualname == pkg:
            return None
        if qualname.startswith(pkg + "."):
            parts = qualname[len(pkg) + 1:].split(".")
            for i, part in enumerate(parts):
                if part in TS_SYMBOLS:
                    return ".".join(parts[i:])
                if part not in TS_MODULES:
                    return None
            return None
    if qualname.startswith("cutlass.pipeline."):
        parts = qualname[len("cutlass.pipeline."):].split(".")
        if parts[0] in CUTLASS_PIPELINE:
            return ".".join(parts)
    return None


def is_ts_module(qualname: str) -> bool:
    for pkg in TS_PACKAGES:
        if qualname == pkg:
            return True
        if qualname.startswith(pkg + "."):
            return all(p in TS_MODULES for p in qualname[len(pkg) + 1:].split("."))
    return False


def dtype_width(qualname: str) -> Optional[int]:
    """Width of a cutlass numeric type (`cutlass.Float16` -> 16), else None."""
    if qualname.startswith("cutlass.") and qualname.count(".") >= 1:
        head, _, name = qualname.rpartition(".")
        if head in ("cutlass", "cutlass.cute", "cutlass.base_dsl.typing", "cutlass.cutlass_dsl",
                    "cutlass.typing", "cutlass.cute.typing", "cutlass.Numeric"):
            return DTYPE_WIDTHS.get(name)
    return None


# qualified names of annotations that make a @cute.jit / @cute.kernel parameter a traced
# (run-time) value rather than a compile-time Python value
RUNTIME_ANNOTATION_PREFIXES = (
    "cutlass.cute.Tensor", "cutlass.cute.typing.Tensor", "cutlass.cute.Pointer",
    "cutlass.cute.typing.Pointer", "cutlass.cute.Layout", "cutlass.cute.typing.Layout",
    "cutlass.cute.Shape", "cutlass.cute.Coord", "cutlass.cute.Tile", "cutlass.cute.IntTuple",
    "cutlass.cute.TensorSSA",
)


def is_runtime_annotation(qualname: str) -> bool:
    if dtype_width(qualname) is not None:
        return True
    return qualname in RUNTIME_ANNOTATION_PREFIXES
