"""Resources as DSL "dynamic expressions".

A `@cute.jit` work method that writes through `self` inside a runtime `if` / `for`
makes the DSL carry `self` across the region. A resource is a dataclass holding plain
Python metadata (names, configs, task-local variable descriptors) next to traced
values (tensors, Int32 bounds, TMA atoms), so it tells the DSL which values to carry:
the non-Constexpr fields of the user's subclass that hold DSL values. Rebuilding gives
a shallow copy with those fields replaced; everything else is shared.
"""
from __future__ import annotations

import copy
import dataclasses

import cutlass
from cutlass.base_dsl.utils.tree_utils import is_constexpr_field
from cutlass.cutlass_dsl import extract_mlir_values, new_from_mlir_values

_TS_FIELDS: set = set()


def _ts_field_names():
    if not _TS_FIELDS:
        from ..pipeline_group import PipelineGroup
        from ..resources import MemoryResource, WorkQueue
        for cls in (MemoryResource, WorkQueue, PipelineGroup):
            _TS_FIELDS.update(f.name for f in dataclasses.fields(cls))
    return _TS_FIELDS


def is_traced(value) -> bool:
    if value is None or isinstance(value, (bool, int, float, str)):
        return False
    if isinstance(value, cutlass.Numeric):
        return True
    return hasattr(value, "__extract_mlir_values__") and hasattr(value, "__new_from_mlir_values__")


def _carried_fields(resource):
    skip = _ts_field_names()
    out = []
    if not dataclasses.is_dataclass(resource):
        return out
    for f in dataclasses.fields(resource):
        if f.name in skip or is_constexpr_field(f, resource):
            continue
        v = getattr(resource, f.name, None)
        if is_traced(v):
            out.append((f.name, v))
    return out


def resource_values(resource) -> list:
    values = []
    for _, v in _carried_fields(resource):
        values.extend(extract_mlir_values(v))
    return values


def resource_from_values(resource, values) -> object:
    new = copy.copy(resource)
    pos = 0
    for name, v in _carried_fields(resource):
        n = len(extract_mlir_values(v))
        object.__setattr__(new, name, new_from_mlir_values(v, list(values[pos:pos + n])))
        pos += n
    return new
