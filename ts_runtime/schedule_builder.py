"""`@schedule` capture: the tracing front end of the shared schedule grammar.

Calling a decorated schedule with resources runs its body once on proxies; every proxy
call and `with` block becomes an event on `ts_runtime.model.builder.ScheduleBuilder`
(the same builder ts-lint drives), tagged with the user's source range. The active
builder lives in a ContextVar so blocks opened outside a schedule are detected (TS101).
"""
from __future__ import annotations

import contextvars
import functools
import inspect
from dataclasses import dataclass, field
from typing import Any, Optional

from .api_calls import checked_api, message, positional_names, schedule_call_error
from .diagnostics import ScheduleError, Severity, TSAttributeError, TSNameError, raise_finding, warn_finding
from .enums import FIRST_ITER, LAST_ITER, Every, IterationPredicate
from .model import builder as _b
from .model.schedule import Block, ScheduleModel, Step, Token
from .model.values import RUNTIME, UNKNOWN, DynamicBound, SkipIf, is_static_int
from .source import SourceRange, caller_range

__all__ = [
    "schedule", "domain_loop", "work_tile_loop", "when_true", "when_false", "DataFlowToken",
    "Schedule", "Step", "Route", "ConditionalBlock", "DomainLoop", "WorkTileLoop",
    "ScheduleResult", "ScheduleError", "ScheduleBuilder", "ResourceProxy", "DomainLoopProxy",
    "WorkTileLoopProxy",
]

_active: contextvars.ContextVar = contextvars.ContextVar("ts_active_builder", default=None)

ScheduleBuilder = _b.ScheduleBuilder
ConditionalBlock = DomainLoop = WorkTileLoop = Block


@dataclass
class Route:
    source: Any
    destination: Any
    destination_argument: str


@dataclass
class ScheduleResult:
    """Flat form a Task consumes (kept for API compatibility; ts uses LoweredSchedule)."""
    schedule_list: list = field(default_factory=list)
    slot_routing: Any = None
    constexpr_work_kwargs: Any = None
    resources: list = field(default_factory=list)
    loop_start: Any = None
    loop_end: Any = None
    loop_step: Any = None
    domain_getter: Any = None
    unroll: Any = 1
    skip_if: Any = None
    has_work_tile_loop: bool = False


class Schedule:
    """A captured schedule: the model tree plus the live resources it was captured with."""

    def __init__(self, model: ScheduleModel, resources: list, objects: dict):
        self.model = model
        self.resources = resources        # live resource objects, parameter order
        self.objects = objects            # rid -> live object (params, groups, members)
        self.skip_if_callable = None

    @property
    def name(self):
        return self.model.name

    @property
    def body(self):
        return self.model.body

    @property
    def diagnostics(self):
        return self.model.diagnostics

    def __str__(self):
        lines = [f"Schedule {self.name}"]

        def rec(nodes, ind):
            for n in nodes:
                if isinstance(n, Step):
                    lab = f".{n.label}" if n.label else ""
                    lines.append(f"{'  ' * ind}{n.stage.value}({self.objects[n.resource].name}){lab}")
                else:
                    lines.append(f"{'  ' * ind}{n.kind} {n.guard or ''}".rstrip())
                    rec(n.body, ind + 1)
        rec(self.body, 1)
        return "\n".join(lines)


class DataFlowToken:
    """Handle of one produced variable; pass it to a downstream work call."""

    def __init__(self, token: Token, builder: _b.ScheduleBuilder):
        self._token = token
        self._builder = builder

    @property
    def producer_step(self):
        return self._token.step_uid

    @property
    def variable(self):
        return self._token.var

    def __iter__(self):
        self._builder.token_unpacked(self._token, caller_range())
        raise ScheduleError("TS311: a single-output data-flow token cannot be unpacked",
                            self._builder.diagnostics[-1:])

    def __getitem__(self, item):
        self._builder.token_unpacked(self._token, caller_range(), indexed=True)
        raise ScheduleError("TS311: a single-output data-flow token cannot be indexed",
                            self._builder.diagnostics[-1:])

    def __bool__(self):
        raise ScheduleError("a data-flow token has no value at capture time; use when_true(token) "
                            "to branch on it at run time")

    def __repr__(self):
        return f"DataFlowToken({self._token.var!r})"


def _builder() -> _b.ScheduleBuilder:
    b = _active.get()
    if b is None:
        from .rules.registry import make_diagnostic
        d = make_diagnostic("TS101", "DSL block APIs must be called inside an @schedule function",
                            caller_range())
        raise ScheduleError(f"TS101: {d.message} ({d.range})", [d])
    return b


def _unwrap(value, b):
    if isinstance(value, DataFlowToken):
        return value._token
    if isinstance(value, (list, tuple)) and any(isinstance(v, DataFlowToken) for v in value):
        return _b.Literal(value)
    return _b.Literal(value)


class ResourceProxy:
    """Stands for one resource parameter while a schedule is traced."""

    def __init__(self, ref: _b.ParamRef, obj, builder: _b.ScheduleBuilder):
        object.__setattr__(self, "_ref", ref)
        object.__setattr__(self, "_obj", obj)
        object.__setattr__(self, "_b", builder)

    def __getattr__(self, attr):
        # Private names are never work methods; the DSL probes them (`_mutable_ref`) with
        # hasattr()/getattr(default) on every call argument, as the reference expects.
        if attr.startswith("_"):
            raise AttributeError(attr)
        obj, b, ref = self._obj, self._b, self._ref
        # (a group's member is no attribute of its proxy: `group.smem_a` is passed to the
        # schedule as an argument; inside the body it is TS224, as the reference's
        # "PipelineGroup schedule proxy has no work method" AttributeError)
        rng = caller_range()
        if b.resolve(ref, attr, rng) is None:
            d = b.diagnostics[-1]
            if d.code == "TS224":
                # The exception carries the finding: a caught probe (hasattr) leaves no error.
                b.diagnostics.remove(d)
                raise TSAttributeError(f"TS224: {d.message} ({d.range})", [d])
            raise ScheduleError(f"{d.code}: {d.message} ({d.range})", [d])

        def call(*args, **kwargs):
            r = caller_range()
            out = b.call(ref, attr, [_unwrap(a, b) for a in args],
                         {k: _unwrap(v, b) for k, v in kwargs.items()}, r)
            if isinstance(out, tuple):
                return tuple(DataFlowToken(t, b) for t in out)
            return DataFlowToken(out, b) if out is not None else None
        return call

    def __setattr__(self, key, value):
        raise ScheduleError("schedule proxies are read-only during capture")


class _MemberRef:
    """`group.member`: a grouped resource passed to (or used in) a schedule."""

    def __init__(self, member, group):
        self.member = member
        self.group = group

    def __getattr__(self, attr):
        return getattr(self.member, attr)


def _param_ref(arg, b, objects) -> Optional[_b.ParamRef]:
    from .resources import MemoryResource
    from .tracing import collect_resources
    if isinstance(arg, _MemberRef):
        collect_resources([arg.group], b.resources)
        objects[id(arg.member)] = arg.member
        objects[id(arg.group)] = arg.group
        for m in arg.group.members:
            objects[id(m)] = m
        return _b.ParamRef(id(arg.member), id(arg.group))
    if isinstance(arg, MemoryResource):
        collect_resources([arg], b.resources)
        objects[id(arg)] = arg
        group = getattr(arg, "pipeline_group", None)
        if group is not None:
            objects[id(group)] = group
        for m in getattr(arg, "members", None) or ():
            objects[id(m)] = m
        return _b.ParamRef(id(arg))
    return None


@checked_api("schedule(...)")
def schedule(fn):
    """Decorator: calling the result with resources captures a `Schedule`."""

    @functools.wraps(fn)
    def traced(*args, **kwargs):
        rng = caller_range()
        if not isinstance(getattr(fn, "__name__", None), str):
            # the reference names the schedule `fn.__name__` when it is called (AttributeError)
            kind = type(fn).__qualname__ if type(fn).__module__ == "builtins" else \
                f"{type(fn).__module__}.{type(fn).__qualname__}"
            raise_finding("TS138", AttributeError, nameless_schedule_message(kind), rng)
        b = _b.ScheduleBuilder(fn.__name__, {}, rng)
        objects: dict = {}
        sig = inspect.signature(fn)
        error = schedule_call_error(fn.__name__, sig, args, kwargs)
        if error is not None:       # TS907 (Python's TypeError, with the finding)
            raise_finding("TS907", TypeError, message(f"{fn.__name__}(...)", error), rng)
        proxies = []
        for pname, arg in zip(positional_names(sig, len(args)), args):
            ref = _param_ref(arg, b, objects)
            if ref is None:
                d = b.report("TS221", f"@schedule arguments must be MemoryResource instances or "
                             f"`group.member` refs; '{pname}' is {type(arg).__name__}", rng)
                raise ScheduleError(f"TS221: {d.message} ({d.range})", [d])
            b.add_param(ref, rng)
            proxies.append(ResourceProxy(ref, objects[ref.resource], b))
        token = _active.set(b)
        try:
            fn(*proxies)
        except NameError as exc:
            found = None if isinstance(exc, TSNameError) else unbound_name_finding(fn, exc)
            if found is None:
                raise
            d, name = found
            raise TSNameError(f"TS136: {d.message} ({d.range})", [d], name=name) from exc
        except AttributeError as exc:
            d = None
            if not isinstance(exc, TSAttributeError):
                d = missing_getter_finding(fn, exc) or captured_resource_finding(fn, exc)
            if d is None:
                raise
            raise TSAttributeError(f"{d.code}: {d.message} ({d.range})", [d]) from exc
        finally:
            _active.reset(token)
        model = b.finish()
        for d in model.diagnostics:
            if d.severity is not Severity.ERROR:
                warn_finding(d)
        errors = [d for d in model.diagnostics if d.severity is Severity.ERROR]
        if errors:
            from .diagnostics import format_diagnostics
            raise ScheduleError(f"schedule '{fn.__name__}' is invalid:\n{format_diagnostics(errors)}", errors)
        params = [objects[r] for r in model.params]
        return Schedule(model, params, objects)

    traced.__ts_schedule__ = fn
    return traced


def nameless_schedule_message(kind: str) -> str:
    """TS138's text (the same from ts-lint): `schedule(...)` of a callable without a
    `__name__` (a `functools.partial`), called."""
    return (f"this schedule wraps a '{kind}' object, which has no __name__: the schedule is named after "
            f"it when called, so the call fails; set one (`p.__name__ = \"copy\"`) before `schedule(p)`, "
            f"or schedule a def")


def _nested_codes(code) -> list:
    """`code` and the code objects of its comprehensions (3.11: their own frames)."""
    out = [code]
    for c in code.co_consts:
        if hasattr(c, "co_code") and c.co_name in ("<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>"):
            out.extend(_nested_codes(c))
    return out


def unbound_name_finding(fn, exc: NameError, rule_code: str = "TS136", message=None):
    """(finding, name) for a NameError raised by the body of `fn` itself (not by code it
    calls), else None: TS136 for a schedule, or `rule_code` with `message(name, local)`."""
    import re

    code = getattr(fn, "__code__", None)
    tb = exc.__traceback__
    if code is None or tb is None:
        return None
    frames = []
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    idx = next((i for i, t in enumerate(frames) if t.tb_frame.f_code is code), None)
    if idx is None:
        return None
    last = frames[-1]
    if last.tb_frame.f_code is not code:
        nested = _nested_codes(code)
        if not all(t.tb_frame.f_code in nested and t.tb_frame.f_code is not code for t in frames[idx + 1:]):
            return None
    try:
        import dis
        op = dis.opname[last.tb_frame.f_code.co_code[last.tb_lasti]]
    except (IndexError, AttributeError):
        op = "LOAD_"
    if not op.startswith("LOAD_"):      # `raise NameError(...)` / `del x`: not a read
        return None
    name = getattr(exc, "name", None)
    if not name:
        m = re.search(r"'([^']+)'", str(exc))
        if m is None:
            return None
        name = m.group(1)
    if isinstance(exc, UnboundLocalError):
        local = True
    elif "free variable" in str(exc):
        # a closure variable of the schedule (read by a comprehension) or of an enclosing
        # function: local to the schedule only in the first case
        if name not in code.co_cellvars:
            return None
        local = True
    else:
        local = False
    path, line, end_line, col, end_col = _failing_position(last)
    from .rules.registry import make_diagnostic
    from .rules.structure import unbound_name_message
    from .source import SourceRange, _chars
    rng = SourceRange(path, line, _chars(path, line, col or 0), end_line, _chars(path, end_line, end_col))
    text = message(name, local) if message is not None else unbound_name_message(name, fn.__name__, local)
    return make_diagnostic(rule_code, text, rng), name


def _failing_position(tb):
    """(path, line, end line, byte column, end byte column) of the instruction a traceback
    entry stopped at (columns None before Python 3.11)."""
    fcode = tb.tb_frame.f_code
    line, col, end_line, end_col = tb.tb_lineno, None, None, None
    positions = getattr(fcode, "co_positions", None)
    if positions is not None and tb.tb_lasti >= 0:
        try:
            pos = list(positions())[tb.tb_lasti // 2]
            if pos[0] is not None:
                line, end_line, col, end_col = pos
        except (IndexError, ValueError):
            pass
    return fcode.co_filename, line, end_line, col, end_col


def captured_resource_finding(fn, exc: AttributeError):
    """TS963 for `out.try_acquire()` in a schedule body where `out` is a resource object
    read from an enclosing scope (not a parameter, so not a proxy) whose class lacks the
    attribute: the AttributeError the body itself raises on a MemoryResource (ts-lint
    reports the same, tsapi.missing_resource_attribute). None otherwise, or where the
    front end that declares TS963 (ts-lint) is not installed."""
    from .resources import MemoryResource
    obj, name, tb = getattr(exc, "obj", None), getattr(exc, "name", None), exc.__traceback__
    if not isinstance(obj, MemoryResource) or not isinstance(name, str) or tb is None:
        return None
    while tb.tb_next is not None:
        tb = tb.tb_next
    if tb.tb_frame.f_code is not getattr(fn, "__code__", None):
        return None
    from .api_calls import resource_attribute_message
    from .rules.registry import get, make_diagnostic
    from .source import SourceRange, _chars
    if get("TS963") is None:
        return None
    path, line, end_line, col, end_col = _failing_position(tb)
    rng = SourceRange(path, line, _chars(path, line, col) if col is not None else 0, end_line or line,
                      _chars(path, end_line or line, end_col) if end_col is not None else 0)
    return make_diagnostic("TS963", resource_attribute_message(type(obj).__name__, name, getattr(obj, "name", None),
                                                               True), rng)


def missing_getter_finding(fn, exc: AttributeError):
    """TS111 for `domain_loop(0, MyTask.get_rows)` where the class has no `get_rows`: the
    AttributeError raised by the schedule body itself while evaluating a positional
    domain_loop() bound (ts-lint reports the same at the same range). None otherwise."""
    import ast

    tb = exc.__traceback__
    if tb is None or not isinstance(getattr(exc, "obj", None), type):
        return None
    while tb.tb_next is not None:
        tb = tb.tb_next
    if tb.tb_frame.f_code is not getattr(fn, "__code__", None):
        return None
    from . import locate
    node = locate.function_def(fn)
    if node is None:
        return None
    path, line, end_line, col, end_col = _failing_position(tb)
    name = getattr(exc, "name", None)
    for call in ast.walk(node):
        if not isinstance(call, ast.Call):
            continue
        f = call.func
        if (f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)) != "domain_loop":
            continue
        for arg in call.args:
            if not isinstance(arg, ast.Attribute) or arg.attr != name:
                continue
            if (arg.lineno, arg.end_lineno) != (line, end_line or arg.end_lineno):
                continue
            if col is not None and (arg.col_offset, arg.end_col_offset) != (col, end_col):
                continue
            from .rules.registry import make_diagnostic
            from .rules.structure import missing_getter_message
            from .source import SourceRange, _chars
            rng = SourceRange(path, arg.lineno, _chars(path, arg.lineno, arg.col_offset), arg.end_lineno,
                              _chars(path, arg.end_lineno, arg.end_col_offset))
            return make_diagnostic("TS111", missing_getter_message(exc.obj.__name__, name), rng)
    return None


# --------------------------------------------------------------------------- blocks
class _BlockCM:
    def __init__(self, opener, value=None):
        self._opener = opener
        self._scope = None
        self._value = value

    def __enter__(self):
        self._scope = self._opener()
        return self._value(self._scope) if self._value else None

    def __exit__(self, *exc):
        b = _active.get()
        if b is not None and self._scope is not None:
            b.close(self._scope, caller_range())
        return False


class DomainLoopProxy:
    def __init__(self, scope):
        self._scope = scope

    def _guard(self, guard):
        b = _builder()
        rng = caller_range(2)
        return _BlockCM(lambda: b.iteration_guard(self._scope, guard, rng))

    @checked_api("first_iter(...)")
    def first_iter(self):
        return self._guard(FIRST_ITER)

    @checked_api("last_iter(...)")
    def last_iter(self):
        return self._guard(LAST_ITER)

    @checked_api("every(...)")
    def every(self, period, *, start=0):
        return self._guard(Every(period, start))


class WorkTileLoopProxy:
    def __init__(self, scope):
        self._scope = scope

    @checked_api("skippable(...)")
    def skippable(self):
        b = _builder()
        rng = caller_range()
        return _BlockCM(lambda: b.skippable(self._scope, rng))


def _bound(value):
    """Converts a domain_loop bound to the model (int, RUNTIME, DynamicBound, None)."""
    if value is None or is_static_int(value):
        return value
    if isinstance(value, bool):
        return RUNTIME
    if callable(value) and not hasattr(value, "ir_value"):
        owner = ""
        bound_to_instance = inspect.ismethod(value)
        func = value.__func__ if bound_to_instance else value
        qual = getattr(func, "__qualname__", "")
        mod = getattr(func, "__module__", "")
        if "." in qual:
            owner = f"{mod}.{qual.rsplit('.', 1)[0]}"
        try:
            sig = inspect.signature(inspect.unwrap(func))
            req = sum(1 for p in sig.parameters.values()
                      if p.default is inspect.Parameter.empty and p.kind in (
                          inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD))
        except (TypeError, ValueError):
            req = None
        return DynamicBound(getattr(func, "__name__", "?"), owner, not bound_to_instance, req)
    return RUNTIME


@checked_api("domain_loop(...)")
def domain_loop(*bounds, unroll=None):
    """Opens the schedule's single domain loop; bounds like `range`."""
    b = _builder()
    rng = caller_range()
    model_bounds = tuple(_bound(x) for x in bounds)

    def open_():
        scope = b.domain_loop(model_bounds, unroll, rng)
        scope.node.live_bounds = bounds      # the traced values, for codegen
        return scope
    return _BlockCM(open_, DomainLoopProxy)


def _call_arity(fn, counts):
    """The first argument count in `counts` that `fn` can be called with positionally;
    -1 when none fits; None when `fn` exposes no signature."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    for n in counts:
        try:
            sig.bind(*([None] * n))
            return n
        except TypeError:
            continue
    return -1


def _skip_if(skip_if, wq_obj):
    """Describes a `skip_if` predicate for the builder (TS513-TS516).

    `arity` is the positional argument count the runtime will call it with (1 for a bound
    method, 2 for an unbound method, 1 or 2 for a function) when the signature binds it,
    -1 when it binds neither.
    """
    if skip_if is None:
        return None
    from .resources import WorkQueue
    if not callable(skip_if):
        return SkipIf("not_callable", repr(skip_if))
    name = getattr(skip_if, "__name__", "skip_if")
    returns = _skip_returns(skip_if)
    if inspect.ismethod(skip_if):
        target = skip_if.__self__
        return SkipIf("bound_method", name, id(target), isinstance(target, WorkQueue), _call_arity(skip_if, (1,)),
                      *returns)
    owner = getattr(skip_if, "__qualname__", "").rpartition(".")[0]
    if owner and not owner.endswith("<locals>"):   # defined in a class body: an unbound method
        on_class = None
        if wq_obj is not None:
            on_class = any(getattr(k, name, None) is skip_if or vars(k).get(name) is skip_if
                           for k in type(wq_obj).__mro__)
        return SkipIf("unbound_method", name, None, on_class, _call_arity(skip_if, (2,)), *returns)
    return SkipIf("function", name, None, None, _call_arity(skip_if, (1, 2)), *returns)


def _skip_returns(skip_if) -> tuple:
    """(whether its body returns a value, its `def` line) of a predicate written with
    `def` in a source file (TS518); (None, None) for a lambda or what has no source."""
    from .locate import function_def
    from .model.attr_effects import returns_a_value
    try:
        fn = inspect.unwrap(getattr(skip_if, "__func__", skip_if))
        if not inspect.isfunction(fn) or fn.__name__ == "<lambda>" \
                or (getattr(fn, "__module__", None) or "").split(".")[0] in ("ts_runtime", "cutlass"):
            return None, None       # a lambda, or the framework's own method (not the user's text)
        node = function_def(fn)
        if node is None:
            return None, None
        return returns_a_value(node), SourceRange(fn.__code__.co_filename, node.lineno)
    except Exception:               # a source that cannot be read: not judged
        return None, None


@checked_api("work_tile_loop(...)")
def work_tile_loop(wq, *, skip_if=None):
    """Opens the persistent per-tile loop driven by a WorkQueue parameter."""
    b = _builder()
    rng = caller_range()
    ref = wq._ref if isinstance(wq, ResourceProxy) else None
    wq_obj = wq._obj if isinstance(wq, ResourceProxy) else None
    desc = _skip_if(skip_if, wq_obj)

    def open_():
        scope = b.work_tile_loop(ref, desc, rng)
        scope.node.skip_if_callable = skip_if
        return scope
    return _BlockCM(open_, WorkTileLoopProxy)


def _cond(cond):
    if isinstance(cond, DataFlowToken):
        return cond._token
    return cond


@checked_api("when_true(...)")
def when_true(cond, *, key=None):
    """Block runs when `cond` (iteration predicate or work-output token) holds."""
    b = _builder()
    rng = caller_range()
    c = _cond(cond)
    return _BlockCM(lambda: b.when(c, False, key, rng))


@checked_api("when_false(...)")
def when_false(cond, *, key=None):
    """Block runs when the opaque condition `cond` is false."""
    b = _builder()
    rng = caller_range()
    c = _cond(cond)
    return _BlockCM(lambda: b.when(c, True, key, rng))
