"""Abstract values used where a front end cannot (or must not) know a concrete one.

`UNKNOWN`: the linter could not evaluate the expression; rules that need the value stay
silent (no guessing). `RUNTIME`: the value is known to be a run-time (traced) value, not
a compile-time Python int; the reference treats such loop bounds with a fallback count,
and so do we.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional


class _Sentinel:
    __slots__ = ("_name",)

    def __init__(self, name: str):
        self._name = name

    def __repr__(self) -> str:
        return self._name

    def __bool__(self) -> bool:  # an unknown value is never "truthy by accident"
        raise TypeError(f"{self._name} has no truth value; test with is_known()")

    def __reduce__(self):
        return self._name


UNKNOWN = _Sentinel("UNKNOWN")
RUNTIME = _Sentinel("RUNTIME")


def is_known(value) -> bool:
    return value is not UNKNOWN


def is_static_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class DynamicBound:
    """A `domain_loop` bound given as a Task method (per-tile dynamic domain).

    `accessed_on_class`: `MyTask.get_domain` (True) vs `task.get_domain` (False).
    `required_positional`: number of required positional parameters, None when the
    callable exposes no signature. `owner`: qualified name of the defining class.
    """
    name: str
    owner: str = ""
    accessed_on_class: bool = True
    required_positional: Optional[int] = 2
    is_callable: bool = True


@dataclass(frozen=True)
class SkipIf:
    """Shape of a `work_tile_loop(skip_if=...)` predicate, as both front ends see it.

    kind: "bound_method" (wq.method), "unbound_method" (WQClass.method), "function"
    (lambda / free function), "not_callable", or "unknown".
    """
    kind: str
    name: str = ""
    bound_to: Optional[int] = None          # resource id the bound method belongs to
    on_work_queue_class: Optional[bool] = None
    arity: Optional[int] = None             # required positional params (incl. self if unbound)
    # the predicate's own `def` (not a lambda): whether its body returns a value
    # (attr_effects.returns_value; None: not known) and its `def` line (TS518)
    returns_value: Optional[bool] = None
    def_range: Any = None


def check_every(period, start):
    """TS129: validity of `Every(period, start)`; yields (code, exception type, message)."""
    limit = 2**31 - 1
    if not is_static_int(period):
        yield ("TS129", TypeError, f"Every period must be an int, got {period!r}")
        return
    if not is_static_int(start):
        yield ("TS129", TypeError, f"Every start must be an int, got {start!r}")
        return
    if period <= 0:
        yield ("TS129", ValueError, f"Every period must be positive, got {period}")
    elif start < 0:
        yield ("TS129", ValueError, f"Every start must be nonnegative, got {start}")
    elif period > limit or start > limit:
        yield ("TS129", ValueError, "Every period/start must fit in a signed 32-bit int")
