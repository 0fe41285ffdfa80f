"""`@schedule` capture from source: the interpreter drives the shared ScheduleBuilder.

Calling an @schedule function with resources interprets its body with one
`ResourceProxy` per parameter, exactly as ts_runtime/schedule_builder.py does at trace
time: every proxy call, `with` block, loop handle and token becomes the same
ScheduleBuilder event, tagged with the same source range (the call expression; for a
method that does not resolve, the attribute expression). Plain Python `for` / `if` in
the body is trace-time metaprogramming and is unrolled on known values.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from ts_runtime.enums import FIRST_ITER, LAST_ITER, Every
from ts_runtime import schedule_builder as SB
from ts_runtime.model import builder as B
from ts_runtime.model.values import DynamicBound, SkipIf, check_every, is_static_int
from ts_runtime.rules.structure import missing_getter_message

from .values import (
    RUNTIME, UNKNOWN, BlockCM, BoundMethod, BuiltinFunc, ClassVal, DataFlowToken, FuncVal,
    InstanceVal, LoopHandle, MemberRefVal, ResourceObj, ResourceProxy, ScheduleVal, WtlHandle,
)


class CaptureAbort(Exception):
    """The runtime raises here (ScheduleError / AttributeError): capture stops."""


class Capture:
    def __init__(self, it, name: str, call_node):
        self.it = it
        self.ctx = it.ctx
        self.range = it.rng(call_node) if call_node is not None else None
        self.builder = B.ScheduleBuilder(name, {}, self.range)
        self.objects: dict = {}
        self.complete = True
        self.reason: Optional[str] = None
        self.aborted = False

    @property
    def b(self):
        return self.builder

    def incomplete(self, node, why: str):
        if self.complete:
            self.complete = False
            self.reason = why
            if node is not None:
                self.it.unknown(node, f"schedule '{self.builder.model.name}' is not fully known statically: "
                                f"{why}; its checks are skipped", "control-flow")

    def abort(self):
        self.aborted = True
        raise CaptureAbort()

    # ------------------------------------------------------------------ proxies
    def call(self, ref, attr, args, kwargs, call_node):
        r = self.it.rng(call_node) if call_node is not None else self.range
        out = self.b.call(ref, attr, [_unwrap(a, self) for a in args],
                          {k: _unwrap(v, self) for k, v in kwargs.items()}, r)
        if isinstance(out, tuple):
            return tuple(DataFlowToken(t, self) for t in out)
        return DataFlowToken(out, self) if out is not None else None

    def token_misuse(self, tok: DataFlowToken, node, indexed: bool):
        if tok.cap is not self or not self.it.captures or self.it.capture is not self:
            return
        r = self.it.rng(node) if node is not None else self.range
        self.b.token_unpacked(tok.token, r, indexed=indexed)
        self.abort()


def _unwrap(value, cap):
    if isinstance(value, DataFlowToken):
        return value.token
    if value is UNKNOWN:
        return B.Literal(UNKNOWN)
    return B.Literal(value)


def _param_ref(it, cap: Capture, arg) -> Optional[B.ParamRef]:
    ts = it.ts
    if isinstance(arg, MemberRefVal):
        if not ts.collect_resources([arg.group], cap.b.resources, cap.objects):
            return "failed"
        return B.ParamRef(arg.member.rid, arg.group.rid)
    if isinstance(arg, ResourceObj):
        if not ts.collect_resources([arg], cap.b.resources, cap.objects):
            return "failed"
        return B.ParamRef(arg.rid)
    return None


def capture_schedule(it, sf, args, kwargs, call_node):
    """Runs one @schedule call; returns a ScheduleVal (or UNKNOWN)."""
    ctx = it.ctx
    func: FuncVal = sf.func
    name = sf.name
    if name is None:       # the reference's wrapper reads fn.__name__ (AttributeError)
        it.unknown(call_node, "this schedule wraps a functools.partial without `__name__`; it is not "
                   "analyzed", "schedule")
        return UNKNOWN
    cap = Capture(it, name, call_node)
    rng = cap.range
    from .unbound import check_schedule
    if check_schedule(it, func):       # TS136: the body raises NameError before it is captured
        return ScheduleVal(cap.b.model, cap.b.resources, cap.objects, complete=True, has_errors=True)
    sig = _schedule_signature(sf)
    if sig is None:
        it.unknown(call_node, f"the parameters of schedule '{name}' could not be resolved", "schedule")
        return UNKNOWN
    if call_node is not None and not any(getattr(a, "star", "") for a in getattr(call_node, "args", ())):
        from ts_runtime.api_calls import message, schedule_call_error
        error = schedule_call_error(name, sig, args, kwargs)
        if error is not None:       # TS907, as the runtime's wrapper (positional resources only)
            ctx.report("TS907", message(f"{name}(...)", error), rng)
            from .interpreter import UserRaise
            raise UserRaise(call_node, reported=True)
    # the captured wrapper takes resources positionally only and passes them on the same
    # way (`fn(*proxies)`): a `*resources` parameter receives a tuple of proxies
    try:
        if kwargs:
            raise TypeError
        sig.bind(*args)
    except TypeError:
        it.unknown(call_node, f"arguments of schedule '{name}' do not match its parameters", "schedule")
        return UNKNOWN
    from ts_runtime.api_calls import positional_names
    proxies = []
    for pname, arg in zip(positional_names(sig, len(args)), args):
        if arg is UNKNOWN or arg is RUNTIME or isinstance(arg, ResourceProxy):
            it.unknown(call_node, f"argument '{pname}' of schedule '{name}' could not be resolved "
                       "statically; the schedule is not analyzed", "resource")
            return UNKNOWN
        ref = _param_ref(it, cap, arg)
        if ref == "failed":
            return UNKNOWN
        if ref is None:
            d = cap.b.report("TS221", f"@schedule arguments must be MemoryResource instances or "
                             f"`group.member` refs; '{pname}' is {_type_name(arg)}", rng)
            ctx.emit(d)
            return ScheduleVal(cap.b.model, cap.b.resources, cap.objects, complete=True, has_errors=True)
        cap.b.add_param(ref, rng)
        proxies.append(ResourceProxy(ref, cap.objects.get(ref.resource), cap))
    tainted = any(getattr(o.cls, "decorate_error", False) or any(k.decorate_error for k in o.cls.mro)
                  for o in cap.objects.values())
    it.arm_schedule(func, cap)
    it.captures.append(cap)
    try:
        it.call_function(func, list(sf.pre) + proxies, dict(sf.pre_kw), call_node)
    except CaptureAbort:
        pass
    except _user_raise() as e:
        cap.aborted = True
        if e.reported:         # TS136 at a read the capture reached (Interpreter.arm_schedule)
            return ScheduleVal(cap.b.model, cap.b.resources, cap.objects, complete=True, has_errors=True)
        it.unknown(e.node, f"capture of schedule '{func.name}' stopped at this `raise`", "control-flow")
        cap.incomplete(None, "a `raise` was reached")
    finally:
        it.captures.pop()
    n_before_finish = len(cap.b.diagnostics)
    if not cap.aborted:
        cap.b.finish()
    diags = list(cap.b.diagnostics)
    if not cap.complete:
        diags = diags[:n_before_finish]       # finish-time findings depend on the whole body
    if tainted:
        # the runtime stops at the class definition; findings here would be cascades
        diags = []
    from ts_runtime.diagnostics import Severity
    for d in diags:
        ctx.emit(d)
    has_errors = any(d.severity is Severity.ERROR for d in diags) or cap.aborted
    return ScheduleVal(cap.b.model, cap.b.resources, cap.objects, complete=cap.complete and not tainted,
                       reason=cap.reason or ("a resource class has decorate-phase errors" if tainted else None),
                       has_errors=has_errors)


def _user_raise():
    from .interpreter import UserRaise
    return UserRaise


def _type_name(v) -> str:
    if isinstance(v, InstanceVal):
        return v.cls.name
    if isinstance(v, FuncVal):
        return "function"
    return type(v).__name__


def _signature(func: FuncVal):
    """An inspect.Signature with the parameter names, kinds and default-or-not of `func`
    (the default values themselves do not matter for binding)."""
    import inspect
    from .interpreter import param_list
    kinds = {"positional_only": inspect.Parameter.POSITIONAL_ONLY,
             "pos_or_kw": inspect.Parameter.POSITIONAL_OR_KEYWORD,
             "var_pos": inspect.Parameter.VAR_POSITIONAL, "kw_only": inspect.Parameter.KEYWORD_ONLY,
             "var_kw": inspect.Parameter.VAR_KEYWORD}
    params = []
    for p, kind in param_list(func.node.params):
        default = inspect.Parameter.empty if getattr(p, "default", None) is None or kind in (
            "var_pos", "var_kw") else None
        params.append(inspect.Parameter(p.name.value, kinds[kind], default=default))
    return inspect.Signature(params)


def _schedule_signature(sf):
    """inspect.signature of what schedule() was given: the function's own, less a bound
    method's `self` and a partial's arguments (as inspect computes it for a partial);
    None when it cannot be computed."""
    sig = _signature(sf.func)
    if not sf.pre and not sf.pre_kw:
        return sig
    import functools
    import inspect

    def stand_in(*a, **k):
        pass
    stand_in.__signature__ = sig
    try:
        return inspect.signature(functools.partial(stand_in, *([None] * len(sf.pre)),
                                                   **{k: None for k in sf.pre_kw}))
    except (TypeError, ValueError):
        return None


# ---------------------------------------------------------------------- proxy attributes
def proxy_attr(it, proxy: ResourceProxy, name: str, node):
    cap = proxy.cap
    if name.startswith("__"):
        return UNKNOWN
    b = cap.b
    ref = proxy.ref
    # a group's member is no attribute of its proxy (TS224 below, as the runtime)
    r = it.rng(node) if node is not None else cap.range
    if it.capture is not cap:
        return UNKNOWN
    if b.resolve(ref, name, r) is None:
        cap.abort()
    return BuiltinFunc(name, lambda i, a, k, c: cap.call(ref, name, a, k, c), qualname=f"proxy.{name}")


# ---------------------------------------------------------------------- blocks
def _check_api(it, cap, fn, what: str, args, kwargs, call, method: bool = False):
    """TS907 when a schedule-builder API call does not bind to its signature (the runtime's
    `checked_api`): `domain_loop(0, n, step=1)`, `d.every(4, 0)`, `when_true(c, "k")`.
    The capture stops there, as the runtime raises TypeError. Calls with `*` / `**`
    unpacking are not judged."""
    from ts_runtime.api_calls import bind_error, message
    if call is None or any(getattr(a, "star", "") for a in getattr(call, "args", ())):
        return
    error = bind_error(fn, ([None] if method else []) + list(args), kwargs)
    if error is not None:
        cap.b.report("TS907", message(what, error), it.rng(call))
        cap.abort()


def _active(it, call):
    """The capture a block API call records into. Outside any capture the runtime raises
    ScheduleError (TS101) and the run stops there. TS101 is reported only where the
    module's own run (its body, an entry point, the `__main__` block) reaches the call: in
    a function run with assumed arguments (roots.py "rest") the function is one the run
    does not reach, so it may well be a schedule body that `schedule()` receives in a way
    the interpreter does not follow (another module, a registry it cannot resolve)."""
    cap = it.capture
    if cap is None:
        from .interpreter import UserRaise
        if it.ctx.assumed:
            it.unknown(call, "a DSL block API reached outside a captured schedule, in code the module's run "
                       "does not reach (analysed with assumed arguments): it may be a schedule body called "
                       "in a way ts-lint does not follow; not judged", "schedule")
            raise UserRaise(call, reported=True)
        it.ctx.report("TS101", "DSL block APIs must be called inside an @schedule function",
                      it.rng(call) if call is not None else None)
        raise UserRaise(call, reported=True)      # the runtime raises ScheduleError here
    return cap


def _callable_bound(it, v):
    """schedule_builder._bound for callables: a DynamicBound, or None if not callable."""
    from .interpreter import param_list
    bound_to_instance = False
    f = v
    if isinstance(v, BoundMethod):
        bound_to_instance, f = True, v.func
    if isinstance(f, FuncVal):
        qual, mod = f.qualname, f.module
        owner = f"{mod}.{qual.rsplit('.', 1)[0]}" if "." in qual else ""
        req = sum(1 for p, kind in param_list(f.node.params)
                  if p.default is None and kind in ("positional_only", "pos_or_kw"))
        return DynamicBound(f.name, owner, not bound_to_instance, req)
    if isinstance(f, BuiltinFunc):
        owner = f.owner or ""
        return DynamicBound(f.name, owner, not bound_to_instance, f.required_positional)
    if isinstance(f, ClassVal):
        return DynamicBound(f.name, "", True, None)
    return None


def model_bound(it, value):
    if value is None or is_static_int(value) or value is UNKNOWN or value is RUNTIME:
        return value
    if isinstance(value, bool):
        return RUNTIME
    db = _callable_bound(it, value)
    if db is not None:
        return db
    return RUNTIME


def domain_loop(it, args, kwargs, call):
    cap = _active(it, call)
    if cap is None:
        return UNKNOWN
    _check_api(it, cap, SB.domain_loop, "domain_loop(...)", args, kwargs, call)
    rng = it.rng(call)
    bounds = tuple(model_bound(it, x) for x in args)
    unroll = kwargs.get("unroll", None)
    missing = getattr(it, "missing_class_attrs", {})
    for arg in getattr(call, "args", ())[:len(args)]:
        rec = missing.get(id(arg.value)) if isinstance(arg.value, cst.Attribute) else None
        if rec is not None:
            cls, name = rec
            it.ctx.report("TS111", missing_getter_message(cls.name, name), it.rng(arg.value))
    if any(x is UNKNOWN for x in bounds):
        it.unknown(call, "a domain_loop() bound could not be resolved statically; checks that need the "
                   "trip count are skipped")
    return BlockCM(lambda: cap.b.domain_loop(bounds, unroll, rng), cap,
                   value=lambda scope: LoopHandle(scope, cap), range=rng)


def _arity(it, f, skip_self: bool, counts=(1, 2)) -> Optional[int]:
    """schedule_builder._call_arity: the first count in `counts` that `f` binds positionally
    (after `self` when `skip_self`), -1 when none, None when unknown."""
    from .interpreter import param_list
    if isinstance(f, FuncVal):
        params = param_list(f.node.params)
        if skip_self and params:
            params = params[1:]
        pos = [p for p, kind in params if kind in ("positional_only", "pos_or_kw")]
        required = sum(1 for p in pos if p.default is None)
        var_pos = any(kind == "var_pos" for _, kind in params)
        kw_required = any(kind == "kw_only" and p.default is None for p, kind in params)
        for n in counts:
            if not kw_required and required <= n and (n <= len(pos) or var_pos):
                return n
        return -1
    if isinstance(f, BuiltinFunc) and f.required_positional is not None:
        n = f.required_positional - (1 if skip_self else 0)
        return n if n in counts else -1
    return None


def skip_if_desc(it, skip_if, wq_obj):
    """schedule_builder._skip_if on interpreted values."""
    if skip_if is None:
        return None
    if skip_if is UNKNOWN or skip_if is RUNTIME:
        return SkipIf("unknown")
    callables = (FuncVal, BuiltinFunc, BoundMethod, ClassVal)
    from .tsapi import WorkMethodVal
    if isinstance(skip_if, WorkMethodVal):
        skip_if = skip_if.func
    if not isinstance(skip_if, callables):
        return SkipIf("not_callable", repr(skip_if))
    if isinstance(skip_if, BoundMethod):
        target, f = skip_if.self_val, skip_if.func
        name = getattr(f, "name", "skip_if")
        bound_to = target.rid if isinstance(target, ResourceObj) else -id(target)
        on_wq = isinstance(target, ResourceObj) and target.cls.is_sub("WorkQueue")
        return SkipIf("bound_method", name, bound_to, on_wq, _arity(it, f, True, (1,)), *_skip_returns(it, f))
    name = getattr(skip_if, "name", "skip_if")
    qual = getattr(skip_if, "qualname", "") or ""
    arity = _arity(it, skip_if, False)
    owner = qual.rpartition(".")[0]
    returns = _skip_returns(it, skip_if)
    if owner and not owner.endswith("<locals>"):   # defined in a class body: an unbound method
        on_class = None
        if wq_obj is not None:
            on_class = any(k.namespace.get(name) is skip_if for k in wq_obj.cls.mro)
        return SkipIf("unbound_method", name, None, on_class, _arity(it, skip_if, False, (2,)), *returns)
    return SkipIf("function", name, None, None, arity, *returns)


def _skip_returns(it, f) -> tuple:
    """schedule_builder._skip_returns: (whether the body returns a value, its `def` line)
    of a predicate written with `def` in the linted file (TS518); (None, None) otherwise."""
    from ts_runtime.model.attr_effects import returns_a_value
    from ts_runtime.source import SourceRange
    node = getattr(f, "node", None) if isinstance(f, FuncVal) else None
    src = it.ctx.src
    if node is None or type(node) is not cst.FunctionDef or src is None or getattr(f, "module", None) != it.module_name:
        return None, None
    tree = src.ast_function(node)
    if tree is None:
        return None, None
    pos = it.ctx.pos
    return returns_a_value(tree), SourceRange(pos.path_of(node), pos.line(node.name))


def work_tile_loop(it, args, kwargs, call):
    cap = _active(it, call)
    if cap is None:
        return UNKNOWN
    _check_api(it, cap, SB.work_tile_loop, "work_tile_loop(...)", args, kwargs, call)
    rng = it.rng(call)
    wq = args[0] if args else kwargs.get("wq", UNKNOWN)
    if isinstance(wq, ResourceProxy):
        ref, wq_obj = wq.ref, wq.obj
    else:
        ref, wq_obj = (UNKNOWN if wq is UNKNOWN else None), None
        if wq is UNKNOWN:
            cap.incomplete(call, "the work_tile_loop() queue could not be resolved")
    desc = skip_if_desc(it, kwargs.get("skip_if"), wq_obj)
    return BlockCM(lambda: cap.b.work_tile_loop(ref, desc, rng), cap,
                   value=lambda scope: WtlHandle(scope, cap), range=rng)


def when(it, args, kwargs, call, negated: bool):
    cap = _active(it, call)
    if cap is None:
        return UNKNOWN
    _check_api(it, cap, SB.when_false if negated else SB.when_true,
               "when_false(...)" if negated else "when_true(...)", args, kwargs, call)
    rng = it.rng(call)
    cond = args[0] if args else kwargs.get("cond", UNKNOWN)
    key = kwargs.get("key")
    if isinstance(cond, DataFlowToken):
        cond = cond.token
    if cond is UNKNOWN or key is UNKNOWN:
        cap.incomplete(call, "a when_true/when_false condition could not be resolved")
    return BlockCM(lambda: cap.b.when(cond, negated, key, rng), cap, range=rng)


def every_ctor(it, args, kwargs, call):
    period = args[0] if args else kwargs.get("period", UNKNOWN)
    start = args[1] if len(args) > 1 else kwargs.get("start", 0)
    return _every(it, period, start, call)


def _every(it, period, start, call):
    if period is UNKNOWN or start is UNKNOWN:
        it.unknown(call, "Every(period, start) could not be resolved statically")
        return UNKNOWN
    findings = list(check_every(period, start))
    for code, _exc, msg in findings:
        it.ctx.report(code, msg, it.rng(call) if call is not None else None)
    if findings:
        return UNKNOWN
    return Every(period, start)


def handle_attr(it, h, name: str, node):
    if isinstance(h, BlockCM):
        if name == "__enter__":
            return BuiltinFunc("__enter__", lambda i, a, k, c: enter_block(i, h, c), qualname="__enter__")
        if name == "__exit__":
            return BuiltinFunc("__exit__", lambda i, a, k, c: exit_block(i, h, c) or False, qualname="__exit__")
        return UNKNOWN
    cap = h.cap
    if isinstance(h, LoopHandle):
        def guard(g, name=None):
            def impl(i, a, k, c):
                if _active(i, c) is None:
                    return UNKNOWN
                if name is not None:
                    _check_api(i, cap, getattr(SB.DomainLoopProxy, name), f"{name}(...)", a, k, c, method=True)
                rng = i.rng(c)
                return BlockCM(lambda: cap.b.iteration_guard(h.scope, g, rng), cap, range=rng)
            return impl
        if name == "first_iter":
            return BuiltinFunc(name, guard(FIRST_ITER, name), qualname="DomainLoopProxy.first_iter")
        if name == "last_iter":
            return BuiltinFunc(name, guard(LAST_ITER, name), qualname="DomainLoopProxy.last_iter")
        if name == "every":
            def every(i, a, k, c):
                if _active(i, c) is None:
                    return UNKNOWN
                _check_api(i, cap, SB.DomainLoopProxy.every, "every(...)", a, k, c, method=True)
                period = a[0] if a else k.get("period", UNKNOWN)
                g = _every(i, period, k.get("start", a[1] if len(a) > 1 else 0), c)
                if g is UNKNOWN:
                    cap.incomplete(None, "an every() guard could not be built")
                    return UNKNOWN
                return guard(g)(i, [], {}, c)
            return BuiltinFunc(name, every, qualname="DomainLoopProxy.every")
        return UNKNOWN
    if isinstance(h, WtlHandle):
        if name == "skippable":
            def skippable(i, a, k, c):
                if _active(i, c) is None:
                    return UNKNOWN
                _check_api(i, cap, SB.WorkTileLoopProxy.skippable, "skippable(...)", a, k, c, method=True)
                rng = i.rng(c)
                return BlockCM(lambda: cap.b.skippable(h.scope, rng), cap, range=rng)
            return BuiltinFunc(name, skippable, qualname="WorkTileLoopProxy.skippable")
        return UNKNOWN
    return UNKNOWN


def enter_block(it, cm: BlockCM, node):
    cap = it.capture
    if cap is None or cap is not cm.cap:
        return UNKNOWN
    cm.scope = cm.opener()
    return cm.value(cm.scope) if cm.value else None


def exit_block(it, cm: BlockCM, node):
    cap = cm.cap
    if cap is None or cm.scope is None or it.capture is not cap:
        return None
    cap.b.close(cm.scope, it.rng(node) if node is not None else cm.range)
    return None
