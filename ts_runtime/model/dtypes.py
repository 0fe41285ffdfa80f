"""CuTe DSL numeric type names, as both front ends see them (no cutlass import).

A task-local variable's `dtype` and a work method's return annotation are compared by
name (`Int16`, `Float32`, `Boolean`, ...): the runtime reads them off the live classes,
ts-lint off the source. Anything that is not one of these names (a Python `int`, a type
alias ts cannot see through) has no name here and is never compared.
"""
from __future__ import annotations

import ast
from typing import Optional

DTYPE_NAMES = frozenset({
    "Boolean", "Int4", "Int8", "Int16", "Int32", "Int64", "Int128", "Uint8", "Uint16", "Uint32", "Uint64",
    "Uint128", "Float16", "BFloat16", "Float32", "Float64", "TFloat32", "Float8E4M3FN", "Float8E5M2",
    "Float8E8M0FNU", "Float6E2M3FN", "Float6E3M2FN", "Float4E2M1FN",
})


def dtype_name(value) -> Optional[str]:
    """The DSL numeric type a live value names (a cutlass class such as `cutlass.Int16`),
    or None."""
    name = getattr(value, "__name__", None)
    module = getattr(value, "__module__", "") or ""
    if isinstance(value, type) and name in DTYPE_NAMES and module.split(".")[0] == "cutlass":
        return name
    return None


def annotation_dtypes(node) -> Optional[tuple]:
    """The DSL types a return annotation (an `ast` expression) names: `cutlass.Int16` or
    `Int16` -> ("Int16",); `Tuple[cutlass.Int32, cutlass.Float16]` -> two; None for no
    annotation or anything else (an element ts cannot name is None in the tuple)."""
    if node is None:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):      # a string annotation
        try:
            node = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return None
    if isinstance(node, ast.Subscript):
        base = _last_name(node.value)
        if base not in ("Tuple", "tuple"):
            return None
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if any(isinstance(x, ast.Constant) and x.value is Ellipsis for x in items):
            return None
        return tuple(_one(x) for x in items)
    one = _one(node)
    return None if one is None else (one,)


def _one(node) -> Optional[str]:
    name = _last_name(node)
    return name if name in DTYPE_NAMES else None


def _last_name(node) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None
