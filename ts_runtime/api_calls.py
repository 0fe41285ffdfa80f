"""TS907: a ts API call whose arguments do not bind to its signature.

Python itself raises TypeError for such a call before any ts code runs. `Task`,
`TaskManager` and the `PipelineConfig.create_*_cfg` factories bind their arguments first
(`check_call`), so the same TypeError carries the TS907 diagnostic at the user's line;
ts-lint binds the same signatures statically (`bind_error`, `message`). One binding, one
message, both front ends. The other public API a kernel author calls binds the same way:
the classes through `checked_init` (TaskLocalVariable, PipelineConfig, TileSchedulerConfig,
SmemAllocation, TmemAllocation, ResourceContext, the allocators, Every, CooperativeGroup),
the functions through `checked_api` (`schedule`, `consumer_work`, `producer_work`, the
TileSchedulerConfig factories, `TaskLocalVariable.uninitialized`) and the methods through
`checked_method` (the allocators', the TaskManager's).
"""
from __future__ import annotations

import functools
import inspect
import re
from typing import Optional

__all__ = ["signature", "bind_error", "message", "forwarded_what", "direct_work_message", "resource_attribute_message", "check_call", "checked_factory", "checked_api",
           "checked_init", "checked_method", "schedule_call_error", "positional_names", "CheckedCall"]


@functools.lru_cache(maxsize=1024)
def signature(fn):
    # the same few ts callables are bound again and again; a Signature is slow to build
    return inspect.signature(fn)


def bind_error(fn, args, kwargs) -> Optional[str]:
    """Why `fn(*args, **kwargs)` would raise TypeError on binding (None if it binds). A
    keyword the function does not take is named first, as Python names it first (a
    misspelt keyword of a required parameter: the keyword, not the missing parameter)."""
    sig = signature(fn)
    params = sig.parameters
    if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        for k in kwargs:
            p = params.get(k)
            if p is None or p.kind is p.POSITIONAL_ONLY:
                return f"got an unexpected keyword argument '{k}'"
    try:
        sig.bind(*args, **kwargs)
    except TypeError as exc:
        return str(exc)
    return None


def message(what: str, error: str) -> str:
    return f"{what}: {error} (Python raises TypeError here)"


def forwarded_what(cls_name: str, base_name: str) -> str:
    """What TS907 names for the keywords that the own `__init__` of a resource or task
    class passes on through `super().__init__(**kwargs)` to a ts base class that does not
    bind them (the runtime's `forwarded_error` and ts-lint's
    `ExpressionsMixin._super_init`; the text is then `message(what, error)`)."""
    return f"{cls_name}(...), through super().__init__ to {base_name}.__init__()"


_FORWARDED = re.compile(r"(\w+)\.__init__\(\) (got an unexpected keyword argument '\w+'|"
                        r"missing \d+ required (?:positional|keyword-only) arguments?: '(\w+)'.*)$")


def forwarded_error(cls, init_code, exc: TypeError):
    """(ts base class name, error text) when `exc` is the TypeError of a ts base class's
    `__init__` (MemoryResource, Task, TaskManager) called from the user's own `__init__`
    of `cls` (code object `init_code`) with arguments that do not bind: the keywords the
    construction passed through `super().__init__(**kwargs)`. The text is the one
    `bind_error` (so ts-lint) gives: `got an unexpected keyword argument 'x'`, `missing a
    required argument: 'x'` (the first one missing). None for any other TypeError."""
    m = _FORWARDED.match(str(exc))
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if m is None or tb is None or tb.tb_frame.f_code is not init_code:
        return None                 # not raised by a call in the user's own __init__ body
    base = next((k for k in cls.__mro__ if k.__name__ == m.group(1) and k.__module__.startswith("ts_runtime")),
                None)
    if base is None:
        return None
    error = m.group(2) if m.group(3) is None else f"missing a required argument: '{m.group(3)}'"
    return base.__name__, error


def _resource_where(label, captured: bool) -> str:
    what = f" ('{label}')" if isinstance(label, str) else ""
    return (f"the resource{what} is read from an enclosing scope, not passed to the schedule" if captured else
            f"the resource{what} is used outside any @schedule body")


def direct_work_message(cls_name: str, method: str, error: str, label, captured: bool) -> str:
    """TS907's text for a work method called on a resource object itself, not through a
    schedule proxy (the runtime's work wrapper and ts-lint): `captured` when a schedule
    body reads the resource from an enclosing scope, else outside any schedule body."""
    return (message(f"{cls_name}.{method}(...)", error) + f": {_resource_where(label, captured)}, so this calls "
            f"the work method itself instead of recording a work call on a schedule proxy")


def resource_attribute_message(cls_name: str, name: str, label, captured: bool) -> str:
    """TS963's text for an attribute a resource object itself lacks where a schedule proxy
    was meant (the runtime's schedule capture and ts-lint)."""
    return (f"'{cls_name}' object has no attribute '{name}': {_resource_where(label, captured)}, so it is the "
            f"object itself and not a schedule proxy (pipeline operations and work calls exist only on the "
            f"proxies of a schedule's parameters): Python raises AttributeError here")


def check_call(fn, what: str, args, kwargs) -> None:
    """Raises TS907 (a TypeError) at the caller's line when the arguments do not bind."""
    error = bind_error(fn, args, kwargs)
    if error is not None:
        from .diagnostics import raise_finding
        from .source import caller_range
        raise_finding("TS907", TypeError, message(what, error), caller_range())


def checked_factory(fn):
    """A `PipelineConfig.create_*_cfg` body whose call is bound (TS907) before it runs;
    `inspect.signature` still shows the factory's own parameters (`__wrapped__`)."""
    what = f"PipelineConfig.{fn.__name__}(...)"

    @functools.wraps(fn)
    def factory(cls, *args, **kwargs):
        check_call(fn, what, (cls,) + args, kwargs)
        return fn(cls, *args, **kwargs)
    return factory


def checked_api(what: str):
    """A schedule-builder API (`domain_loop`, `when_true`, `DomainLoopProxy.every`, ...)
    whose call is bound (TS907) before it runs: `domain_loop(0, n, step=1)` raises the
    TypeError Python would, carrying the finding at the user's line."""
    def deco(fn):
        @functools.wraps(fn)
        def api(*args, **kwargs):
            check_call(fn, what, args, kwargs)
            return fn(*args, **kwargs)
        return api
    return deco


def checked_init(cls):
    """Class decorator: constructing `cls` (or a subclass that keeps its `__init__`) binds
    the arguments to that `__init__` first (TS907), as `CheckedCall` does without a
    metaclass: `SmemAllocation("a", aligment=128)`, `TaskLocalVariable(doc="...")`.
    `inspect.signature` still shows the real parameters (`__wrapped__`)."""
    init = cls.__init__

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        check_call(init, f"{type(self).__name__}(...)", (self,) + args, kwargs)
        init(self, *args, **kwargs)
    cls.__init__ = __init__
    return cls


def checked_method(fn):
    """A method of a ts API object (`SmemAllocator.add_resource`, `TaskManager.run`, ...)
    whose call is bound (TS907) before it runs."""
    @functools.wraps(fn)
    def method(self, *args, **kwargs):
        check_call(fn, f"{type(self).__name__}.{fn.__name__}(...)", (self,) + args, kwargs)
        return fn(self, *args, **kwargs)
    return method


def schedule_call_error(name: str, sig, args, kwargs) -> Optional[str]:
    """Why calling the `@schedule` function `name` (signature `sig`) with `args` and
    `kwargs` raises TypeError, or None: the captured wrapper takes resources positionally
    only, as the reference's does, and then calls the function with them."""
    for k in kwargs:
        return f"{name}() got an unexpected keyword argument '{k}'"
    try:
        sig.bind(*args)
    except TypeError as exc:
        return f"{name}(): {exc}"
    return None


def positional_names(sig, n: int) -> list:
    """The names `n` positional arguments bind to in `sig` (bound already): a named
    parameter's own name, `args[i]` for the i-th item a `*args` parameter collects. The
    captured wrapper passes its resources on positionally (`fn(*proxies)`), as the
    reference's does, so a `*resources` parameter receives a tuple of proxies."""
    import inspect
    out = []
    var = None
    for p in sig.parameters.values():
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            out.append(p.name)
        elif p.kind is inspect.Parameter.VAR_POSITIONAL:
            var = p.name
    out = out[:n]
    out += [f"{var}[{i}]" for i in range(n - len(out))]
    return out


class CheckedCall(type):
    """Metaclass of `Task` / `TaskManager`: a construction binds its arguments to
    `__init__` first (TS907). Copies and pickles do not call the class, so they are not
    affected."""

    def __call__(cls, *args, **kwargs):
        check_call(cls.__init__, f"{cls.__name__}(...)", (None,) + args, kwargs)
        try:
            obj = super().__call__(*args, **kwargs)
        except TypeError as exc:
            # a subclass's own __init__ passing its keywords on to the ts base's
            got = forwarded_error(cls, getattr(cls.__init__, "__code__", None), exc)
            if got is None:
                raise
            from .diagnostics import raise_finding
            from .source import caller_range
            raise_finding("TS907", TypeError, message(forwarded_what(cls.__name__, got[0]), got[1]),
                          caller_range())
        constructed = getattr(cls, "_ts_constructed", None)
        if constructed is not None:
            constructed(obj)
        return obj
