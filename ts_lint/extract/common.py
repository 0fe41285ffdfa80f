"""Helpers shared by the TS API modules (value conversions as in ts_runtime/tracing.py)."""
from __future__ import annotations

import dataclasses
import enum
from typing import Any, Optional

from ts_runtime import enums as E
from ts_runtime.model.values import is_static_int

from .values import BuiltinFunc, FieldVal, InstanceVal, QualRef, RUNTIME, UNKNOWN

_TLV_TAG = "ts_task_local_variable"


class BuiltinNS:
    """A TS class used through its attributes / constructor (PipelineConfig, ...)."""

    def __init__(self, ts_name: str, attrs: Optional[dict] = None, call=None, live=None):
        self.ts_name = ts_name
        self.attrs = attrs or {}
        self.call = call
        self.live = live        # the ts_runtime class a construction binds to (TS907)

    def __repr__(self):
        return f"<ts {self.ts_name}>"


@dataclasses.dataclass(eq=False)
class WorkMethodVal:
    """A method decorated with @consumer_work / @producer_work."""
    func: Any
    side: str
    stage: Any = None
    returns: list = dataclasses.field(default_factory=list)
    params: list = dataclasses.field(default_factory=list)
    line: int = 0
    failed: bool = False
    unknown: bool = False
    stage_info_problem: Optional[str] = None    # work_signature.stage_info_problem (TS240)

    @property
    def name(self):
        return getattr(self.func, "name", "work")


def _b(name, impl, qual=None, **kw):
    return BuiltinFunc(name, impl, qualname=qual or name, **kw)


def _static(x):
    """tracing._static: ints stay, traced values become RUNTIME; UNKNOWN stays UNKNOWN."""
    if x is UNKNOWN or x is RUNTIME:
        return x
    if x is None or isinstance(x, (bool, str, tuple, E.SignalingThreads)):
        return x
    return x if is_static_int(x) else RUNTIME


def _name_of(x):
    if x is None:
        return None
    if x is UNKNOWN:
        return UNKNOWN
    if isinstance(x, enum.Enum):
        return x.name
    if isinstance(x, QualRef):
        return x.qualname.rsplit(".", 1)[-1]
    if x is RUNTIME:
        return UNKNOWN
    return str(x).rsplit(".", 1)[-1]


def _layout(x):
    if x is None or x is UNKNOWN:
        return x
    if isinstance(x, (tuple, list)):
        return tuple(v if is_static_int(v) else (UNKNOWN if v is UNKNOWN else RUNTIME) for v in x)
    return "opaque"


def _strides(v):
    if v is UNKNOWN or isinstance(v, tuple):
        return v
    return (v, v, v, v)


def _signature_bind(fn, args, kwargs):
    from ts_runtime.api_calls import signature
    try:
        ba = signature(fn).bind(*args, **kwargs)
    except TypeError:
        return None
    ba.apply_defaults()
    return dict(ba.arguments)


class _Abort(Exception):
    """A check raised at run time: the operation in progress stops (the finding is reported)."""


class _LayoutError(Exception):
    pass


_LIBRARIES = frozenset({
    "cutlass", "cuda", "torch", "numpy", "triton", "jax", "math", "cmath", "os", "sys", "typing",
    "typing_extensions", "functools", "itertools", "collections", "dataclasses", "argparse", "time",
    "random", "json", "pathlib", "re", "subprocess", "warnings", "contextlib", "enum", "abc", "copy",
    "logging", "inspect", "operator", "statistics", "textwrap", "io", "ctypes", "builtins", "pytest",
    "unittest", "importlib", "tempfile", "shutil", "struct", "string", "types", "ts_runtime", "ts_lint",
    "datetime", "csv", "pickle", "hashlib", "platform", "signal", "threading", "multiprocessing",
    "concurrent", "traceback", "pprint", "fractions", "decimal", "numbers", "weakref", "gc", "tqdm",
    "pandas", "scipy", "matplotlib", "cupy", "nvtx",
})


def _library(qualname: str) -> bool:
    """A qualified name from a well-known library (not user code ts-lint could read)."""
    root = qualname.split(".", 1)[0]
    return bool(root) and root in _LIBRARIES


def _type_name(v) -> str:
    if isinstance(v, InstanceVal):
        return v.cls.name
    if isinstance(v, FieldVal):
        return "Field"
    return type(v).__name__
