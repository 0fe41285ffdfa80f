"""Structured control flow with explicitly carried state.

A lowered task is emitted as plain Python that builds `scf.if` / `scf.for` / `scf.while`
regions directly (no AST preprocessing). Everything that must survive a region boundary
(pipeline cursors, try-status flags, routed task-local values, the work tile and the
tile scheduler) lives in one `State`: a name -> value map whose values are DSL objects
(Numerics, or anything with `__extract_mlir_values__`).

Every region helper carries the *whole* state: on entry each branch / iteration gets
fresh objects rebuilt from the region's arguments, on exit the current values are
yielded (cast back to the entry types), and afterwards the state holds the op results.
Keys must all exist before a region opens; a key added inside a region is local to it.
Unused carried values are removed by the compiler, so carrying everything is cheap and
keeps the emitter simple.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import cutlass
from cutlass._mlir import ir
from cutlass._mlir.dialects import scf
from cutlass.cutlass_dsl import LoopUnroll, extract_mlir_values, new_from_mlir_values

Int32 = cutlass.Int32
Boolean = cutlass.Boolean


def is_dynamic(value) -> bool:
    """True for a traced DSL value (an IR value behind it), False for Python constants."""
    if isinstance(value, (bool, int, float)) or value is None:
        return False
    if isinstance(value, cutlass.Numeric):
        v = getattr(value, "value", None)
        return not isinstance(v, (bool, int, float))
    return hasattr(value, "__extract_mlir_values__") or isinstance(value, ir.Value)


def static_value(value):
    """The Python value of a constant (Python or constant Numeric); None if dynamic."""
    if isinstance(value, (bool, int)):
        return value
    if isinstance(value, cutlass.Numeric):
        v = getattr(value, "value", None)
        if isinstance(v, (bool, int)):
            return v
    return None


def as_int32(value) -> Int32:
    if isinstance(value, Int32):
        return value
    return Int32(value)


def as_bool(value) -> Boolean:
    if isinstance(value, Boolean):
        return value
    return Boolean(value)


def _raw(values) -> list:
    """Plain `ir.Value`s (the bindings hand some block arguments back wrapped, e.g. as
    a cute pointer)."""
    out = []
    for v in values:
        if isinstance(v, ir.Value):
            out.append(v)
        else:
            out.extend(extract_mlir_values(v))
    return out


def _fresh(value):
    """A new object carrying the same IR values (so in-place mutation cannot leak)."""
    if isinstance(value, (bool, int, float)):
        return value
    vals = extract_mlir_values(value)
    return new_from_mlir_values(value, vals)


def _cast_like(template, value):
    """`value` converted to the DSL type of `template` (for region yields)."""
    if isinstance(template, cutlass.Numeric):
        if type(value) is not type(template):
            return type(template)(value)
        return value
    return value


class State:
    """Ordered name -> DSL value map carried through every region."""

    def __init__(self):
        self._vals: dict = {}
        self._attrs: list = []      # (key, object, attribute name): see bind_attr

    def bind_attr(self, key, obj, name: str):
        """Carries `obj.<name>` (a DSL value a work method reassigns, e.g. an accumulator
        field `self.acc = self.acc + v`) under `key`: the object's attribute is what work
        code reads and writes, so it is read into the state when a region opens or yields,
        and set from the region's arguments / results when the state is restored. Without
        it a value made inside a loop body escapes the loop through the object (an IR
        dominance error)."""
        self.declare(key, getattr(obj, name))
        self._attrs.append((key, obj, name))

    def unbind(self, keys):
        """Drops carried values (bound for one region, see TaskEmitter.bind_region_attrs):
        the regions opened after this do not carry them; the object keeps its value."""
        if keys:
            drop = set(keys)
            for k in drop:
                self._vals.pop(k, None)
            self._attrs = [a for a in self._attrs if a[0] not in drop]

    def _pull(self):
        # a work call may set a carried field to a Python value (`self.scale_d = False`
        # after `cutlass.Boolean(False)`): it is carried as the field's DSL type
        # (DSL values are taken as they are: a value of another DSL type is converted at
        # the region's yield, `_yield_values`)
        vals = self._vals
        for key, obj, name in self._attrs:
            v = getattr(obj, name)
            vals[key] = _cast_like(vals[key], v) if isinstance(v, (bool, int, float)) else v

    def _push(self):
        for key, obj, name in self._attrs:
            setattr(obj, name, self._vals[key])

    def declare(self, key, value):
        """Adds a carried value (before any region that must carry it)."""
        if isinstance(value, (bool, int, float)):
            raise TypeError(f"carried state '{key}' needs a DSL value, got {type(value).__name__}")
        self._vals[key] = _fresh(value)

    def __contains__(self, key):
        return key in self._vals

    def __getitem__(self, key):
        return self._vals[key]

    def __setitem__(self, key, value):
        if key in self._vals:
            value = _cast_like(self._vals[key], value)
        self._vals[key] = value

    def get(self, key, default=None):
        return self._vals.get(key, default)

    # ---------------------------------------------------------------- packing
    def _snapshot(self):
        self._pull()
        keys = list(self._vals)
        templates = [self._vals[k] for k in keys]
        flat, counts = [], []
        for t in templates:
            vs = extract_mlir_values(t)
            counts.append(len(vs))
            flat.extend(vs)
        return keys, templates, counts, flat

    def _restore(self, keys, templates, counts, values):
        out = {}
        pos = 0
        for k, t, n in zip(keys, templates, counts):
            out[k] = new_from_mlir_values(t, list(values[pos:pos + n]))
            pos += n
        self._vals = out
        self._push()

    def _yield_values(self, keys, templates):
        self._pull()
        flat = []
        for k, t in zip(keys, templates):
            v = _cast_like(t, self._vals[k])
            vs = extract_mlir_values(v)
            flat.extend(vs)
        return flat


def dyn_if(state: State, cond, then_fn: Callable[[], None], else_fn: Optional[Callable[[], None]] = None):
    """`if cond: then_fn() else: else_fn()`, carrying `state` through both branches.

    A Python-constant condition emits only the taken branch.
    """
    sv = static_value(cond)
    if sv is not None:
        if sv:
            then_fn()
        elif else_fn is not None:
            else_fn()
        return
    keys, templates, counts, flat = state._snapshot()
    types = [v.type for v in flat]
    op = scf.IfOp(as_bool(cond).ir_value(), types, has_else=True)
    for block, fn in ((op.then_block, then_fn), (op.else_block, else_fn)):
        with ir.InsertionPoint(block):
            state._restore(keys, templates, counts, flat)
            if fn is not None:
                fn()
            scf.yield_(state._yield_values(keys, templates))
    results = _raw(op.results) if types else []
    state._restore(keys, templates, counts, results)


def dyn_for(state: State, start, stop, step, body_fn: Callable[[Any], None], *, unroll=None):
    """`for iv in range(start, stop, step): body_fn(iv)` as one `scf.for`, carrying `state`.

    `unroll`: None lets the compiler decide; an int adds an unroll annotation (1 = off).
    """
    start, stop, step = as_int32(start), as_int32(stop), as_int32(step)
    keys, templates, counts, flat = state._snapshot()
    op = scf.ForOp(start.ir_value(), stop.ir_value(), step.ir_value(), flat)
    if isinstance(unroll, int) and not isinstance(unroll, bool) and unroll > 0:
        op.attributes["loop_annotation"] = LoopUnroll(count=unroll)
    with ir.InsertionPoint(op.body):
        state._restore(keys, templates, counts, _raw(op.inner_iter_args))
        body_fn(Int32(op.induction_variable))
        scf.yield_(state._yield_values(keys, templates))
    state._restore(keys, templates, counts, _raw(op.results))


def dyn_while(state: State, cond_fn: Callable[[], Any], body_fn: Callable[[], None]):
    """`while cond_fn(): body_fn()` as one `scf.while`; both see the carried `state`."""
    keys, templates, counts, flat = state._snapshot()
    types = [v.type for v in flat]
    op = scf.WhileOp(types, flat)
    before = op.before.blocks.append(*types)
    after = op.after.blocks.append(*types)
    with ir.InsertionPoint(before):
        state._restore(keys, templates, counts, _raw(before.arguments))
        cond = as_bool(cond_fn())
        scf.ConditionOp(cond.ir_value(), _raw(before.arguments))
    with ir.InsertionPoint(after):
        state._restore(keys, templates, counts, _raw(after.arguments))
        body_fn()
        scf.yield_(state._yield_values(keys, templates))
    state._restore(keys, templates, counts, _raw(op.results))


def if_then(cond, fn: Callable[[], None]):
    """A side-effect-only `if` (no carried values), e.g. a gated barrier arrive."""
    sv = static_value(cond)
    if sv is not None:
        if sv:
            fn()
        return
    op = scf.IfOp(as_bool(cond).ir_value(), [], has_else=False)
    with ir.InsertionPoint(op.then_block):
        fn()
        scf.yield_([])


def unsupported(message: str, range=None):
    """Raises the coded finding for an input ts codegen cannot lower (TS906, a
    NotImplementedError carrying the Diagnostic, pointing at the user's source)."""
    from ..diagnostics import raise_finding
    raise_finding("TS906", NotImplementedError, message, range)


def logical_and(a, b):
    sa, sb = static_value(a), static_value(b)
    if sa is not None:
        return b if sa else False
    if sb is not None:
        return a if sb else False
    return as_bool(a) & as_bool(b)


def logical_not(a):
    sa = static_value(a)
    if sa is not None:
        return not sa
    from cutlass.cutlass_dsl import not_
    return Boolean(not_(as_bool(a)))
