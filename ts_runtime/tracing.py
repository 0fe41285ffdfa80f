"""The tracing front end's bridge: live DSL objects -> the shared model.

ts-lint builds the same model classes from source; keeping every conversion here makes
the two front ends easy to compare (tests/parity).
"""
from __future__ import annotations

import ast
import dataclasses
import inspect
import weakref
from typing import Any

from .diagnostics import raise_finding
from .enums import PipelineGroupMode, ScheduleStage, SignalingThreads
from .model.builder import RESERVED_WORK_NAMES
from .model.kernel import (
    LEGACY_FACTORIES, AllocationModel, AllocatorModel, GraphEdge, KernelModel, ManagerOptions,
    PipelineModel, ResourceKind, ResourceModel, TaskModel, WorkMethodModel,
)
from .model.values import RUNTIME, UNKNOWN, is_static_int
from .model.work_signature import duplicate_return
from .source import SourceRange, UNKNOWN_RANGE

_TLV_TAG = "ts_task_local_variable"


def _name_of(x) -> Any:
    if x is None:
        return None
    n = getattr(x, "name", None)
    if isinstance(n, str):
        return n
    return str(x).rsplit(".", 1)[-1]


def _layout(x):
    if x is None:
        return None
    if isinstance(x, (tuple, list)):
        return tuple(v if is_static_int(v) else RUNTIME for v in x)
    return "opaque"


def _static(x):
    """A Python int stays itself; anything else (a traced value) is RUNTIME."""
    if x is None or isinstance(x, (bool, str, tuple, SignalingThreads)):
        return x
    return x if is_static_int(x) else RUNTIME


def pipeline_model(cfg) -> PipelineModel:
    pg, cg = cfg.producer_group, cfg.consumer_group
    rng = getattr(cfg, "_ts_range", None) or UNKNOWN_RANGE
    p = PipelineModel(
        pipeline_type=cfg.pipeline_type,
        num_stages=_static(cfg.num_stages),
        num_bytes=_static(cfg.num_bytes),
        producer_group_size=_static(getattr(pg, "size", UNKNOWN)),
        consumer_group_size=_static(getattr(cg, "size", UNKNOWN)),
        producer_agent=_name_of(getattr(pg, "agent", None)),
        consumer_agent=_name_of(getattr(cg, "agent", None)),
        cta_layout_vmnk=_layout(cfg.cta_layout_vmnk),
        producer_signaling_threads=cfg.producer_signaling_threads,
        consumer_signaling_threads=cfg.consumer_signaling_threads,
        consumer_wait_signaling_threads=cfg.consumer_wait_signaling_threads,
        umma_consumer_producer_op=_name_of(cfg.umma_consumer_producer_op) or "AsyncThread",
        async_producer_op=_name_of(cfg.async_producer_op) or "AsyncThread",
        advance_on_wait=cfg.advance_on_wait,
        advance_on_acquire=cfg.advance_on_acquire,
        num_bytes_per_warp_per_cta=_static(cfg.num_bytes_per_warp_per_cta),
        mcast_mode_mn=tuple(cfg.mcast_mode_mn) if isinstance(cfg.mcast_mode_mn, (tuple, list)) else cfg.mcast_mode_mn,
        interleave_strides=cfg.interleave_strides if isinstance(cfg.interleave_stride, tuple)
        else ((cfg.interleave_stride,) * 4),
        range=rng,
    )
    if rng is not UNKNOWN_RANGE:
        from .locate import call_arguments
        p.arg_ranges = call_arguments(rng)
    return p


def _qualname(cls) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _work_methods(cls):
    """(name -> WorkMethodModel, reserved-name findings) from the class MRO."""
    from .source import SourceRange
    methods, findings, seen_stage = {}, [], {}
    for klass in reversed(cls.__mro__):
        for name, attr in vars(klass).items():
            info = getattr(attr, "__ts_work__", None)
            if info is None:
                continue
            rng = SourceRange(info.path, info.line) if info.path else UNKNOWN_RANGE
            side = "producer" if info.stage.is_producer else "consumer"
            prev = seen_stage.get(name)
            if prev is not None and prev != side:
                other = "consumer" if side == "producer" else "producer"
                findings.append((name, f"@{side}_work '{name}' collides with a @{other}_work of the same name",
                                 rng, "TS223"))
            seen_stage[name] = side
            if name in RESERVED_WORK_NAMES:
                findings.append((name, f"work method '{name}' collides with the standard pipeline method "
                                 f"'{name}'; rename it", rng, "TS222"))
            returns = []
            for r in info.returns:
                if isinstance(r, str):
                    returns.append(r)
                else:  # a dataclasses.Field: find its name on the class
                    fname = getattr(r, "name", None) or next(
                        (f.name for f in getattr(cls, "__dataclass_fields__", {}).values() if f is r), None)
                    if fname is None:
                        raise_finding("TS313", RuntimeError, f"returns= Field of '{name}' has no .name "
                                      "(is the resource class a dataclass?)", rng)
                    returns.append(fname)
            dup = duplicate_return(name, returns)
            if dup is not None and not all(isinstance(r, str) for r in info.returns):
                raise_finding("TS313", ValueError, dup, rng)    # (all strings: checked by the decorator)
            wm = methods[name] = WorkMethodModel(name, info.stage, tuple(returns), list(info.params), rng,
                                                 _qualname(klass))
            wm.stage_info_problem = getattr(info, "stage_info_problem", None)
            _decorator_facts(wm, attr, info)
    return methods, findings


def _decorator_facts(wm, attr, info) -> None:
    """The `def` line (TS240), a DSL decorator above the work decorator (TS241) and the
    `returns=` value (TS314's related location) of a work method, from its source."""
    from .locate import function_def
    from .model.work_signature import misplaced_dsl_decorator, returns_keyword_value
    try:
        fn = inspect.unwrap(attr)
        node = function_def(fn) if inspect.isfunction(fn) else None
    except Exception:
        node = None
    if node is None or not info.path:
        return
    path = info.path
    wm.def_range = SourceRange(path, node.lineno)          # (column 0, as ts-lint's)
    decos = node.decorator_list
    i = misplaced_dsl_decorator(decos)
    if i is not None:
        d = decos[i]
        wm.misplaced_dsl_decorator = ("@" + ast.unparse(d), SourceRange(
            path, d.lineno, d.col_offset, d.end_lineno, d.end_col_offset))
    v = returns_keyword_value(decos)
    if v is not None:
        wm.returns_range = SourceRange(path, v.lineno, v.col_offset, v.end_lineno, v.end_col_offset)


def _tlv_names(obj) -> set:
    from .resources import TaskLocalVariable
    names = set()
    for f in dataclasses.fields(obj) if dataclasses.is_dataclass(obj) else ():
        declared = f.metadata.get(_TLV_TAG) or "TaskLocalVariable" in str(f.type)
        value = getattr(obj, f.name, None)
        if isinstance(value, TaskLocalVariable):
            value._bind_owner(obj, f.name)
            names.add(f.name)
        elif declared:
            if value is None:
                raise_finding("TS320", ValueError, f"field '{f.name}' of {type(obj).__name__} is declared as a "
                              "TaskLocalVariable field but was not initialized in __init__/__post_init__",
                              getattr(obj, "_ts_range", None))
            raise_finding("TS320", TypeError, f"field '{f.name}' of {type(obj).__name__} is declared as a "
                          f"TaskLocalVariable field but contains {type(value).__name__}",
                          getattr(obj, "_ts_range", None))
    for k, v in vars(obj).items():
        if isinstance(v, TaskLocalVariable) and not k.startswith("_"):
            v._bind_owner(obj, k)
            names.add(k)
    return names


def _tlv_dtypes(obj, names) -> dict:
    """{task-local variable: DSL type name} of those whose dtype is a cutlass numeric type."""
    from .model.dtypes import dtype_name
    out = {}
    for n in names:
        d = dtype_name(getattr(getattr(obj, n, None), "dtype", None))
        if d is not None:
            out[n] = d
    return out


def _user_class(klass) -> bool:
    """A class of the user's program (not ts_runtime's, the reference's or a builtin)."""
    mod = getattr(klass, "__module__", None) or ""
    return mod != "builtins" and mod.split(".", 1)[0] not in ("ts_runtime", "cutlass")


_MISSING = object()


def _user_fields(obj) -> tuple:
    """(fields that are None right now, of those the `init=False` ones) among the
    dataclass fields the user's classes declare (TS237)."""
    if not dataclasses.is_dataclass(obj):
        return frozenset(), frozenset()
    mro = type(obj).__mro__
    unset, internal = set(), set()
    for f in dataclasses.fields(obj):
        owner = next((k for k in mro if f.name in vars(k).get("__annotations__", {})), None)
        if owner is not None and _user_class(owner) and getattr(obj, f.name, _MISSING) is None:
            unset.add(f.name)
            if not f.init:
                internal.add(f.name)
    return frozenset(unset), frozenset(internal)


def _legacy_factories(cls) -> list:
    """[(name, def line)] of the legacy variable factories the user's classes define (TS234)."""
    from .locate import function_def
    out, seen = [], set()
    for k in cls.__mro__:
        if not _user_class(k):
            continue
        for name in LEGACY_FACTORIES:
            fn = vars(k).get(name)
            if name in seen or not inspect.isfunction(fn):
                continue
            seen.add(name)
            node = function_def(fn)
            out.append((name, SourceRange(fn.__code__.co_filename,
                                          node.lineno if node is not None else fn.__code__.co_firstlineno)))
    return out


def _framework_overrides(cls) -> list:
    """[(name, why, def line, defining class)] of the FRAMEWORK_CALLS methods the user's
    classes define that the framework's call does not bind (TS239)."""
    from .locate import function_def
    from .model.kernel import FRAMEWORK_CALLS, framework_call_problem
    out, seen = [], set()
    for k in cls.__mro__:
        if not _user_class(k):
            continue
        for name, nargs in FRAMEWORK_CALLS.items():
            if name in seen or name not in vars(k):
                continue
            seen.add(name)
            a = vars(k)[name]
            fn = a.__func__ if isinstance(a, (staticmethod, classmethod)) else a
            if inspect.isfunction(fn):
                try:
                    ps = list(inspect.signature(fn).parameters.values())
                except (TypeError, ValueError):
                    continue
                if not isinstance(a, staticmethod):
                    ps = ps[1:]           # self / cls, bound by the attribute access
                params = [(p.name, p.kind.name, p.default is not p.empty) for p in ps]
                node = function_def(fn)
                line = node.lineno if node is not None else fn.__code__.co_firstlineno
                where = SourceRange(fn.__code__.co_filename, line)
            elif callable(a) or isinstance(a, property):
                continue                  # a callable object or a property: not judged
            else:
                params, where = None, None
            why = framework_call_problem(params, nargs)
            if why is not None and where is not None:
                out.append((name, why, where, k.__name__))
    return out


_EFFECTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()   # class -> {work method: Effects}


def _written_method(a) -> bool:
    """A method the user wrote (not one @dataclass generated from a string, which ts-lint
    does not see either)."""
    fn = a.__func__ if isinstance(a, (staticmethod, classmethod)) else a
    fn = inspect.unwrap(fn) if callable(fn) else None
    return inspect.isfunction(fn) and fn.__code__.co_filename != "<string>"


def _held_resources(obj) -> dict:
    """attribute -> rid of the other resources an instance holds (`self.smem_a_resource`)."""
    from .resources import MemoryResource
    return {k: id(v) for k, v in vars(obj).items() if isinstance(v, MemoryResource) and v is not obj}


def _attr_effects(cls, methods: dict, held: dict):
    """Fills uses / writes of each work method (model/attr_effects.py) from the source
    of the user's methods, and returns the attributes any method of the user's classes
    may set (None when a body is unknown); methods of ts_runtime's or the reference's
    classes are unknown bodies, as they are to ts-lint."""
    from .locate import function_def
    from .model.attr_effects import NOT_A_METHOD, class_table, fill, function_effects
    table = _EFFECTS.get(cls)
    if table is None:
        cache: dict = {}

        def lookup(name):
            if name in cache:
                return cache[name]
            result = NOT_A_METHOD
            for klass in cls.__mro__:
                if name not in vars(klass):
                    continue
                attr = vars(klass)[name]
                fn = attr.__func__ if isinstance(attr, (staticmethod, classmethod)) else attr
                if not callable(fn):
                    break
                result = None
                if _user_class(klass):
                    fn = inspect.unwrap(fn)
                    node = function_def(fn) if inspect.isfunction(fn) else None
                    result = function_effects(node) if node is not None else None
                break
            cache[name] = result
            return result

        names = {n for k in cls.__mro__ if _user_class(k) for n, a in vars(k).items() if _written_method(a)}
        table = _EFFECTS[cls] = class_table(methods, names, lookup)
    table, settable = table
    fill(methods, table, held)
    return settable


def _allocs(items, space) -> list:
    out = []
    for a in items or ():
        size = getattr(a, "size_bytes", None) if space == "smem" else getattr(a, "num_columns", None)
        out.append(AllocationModel(getattr(a, "name", ""), space, _static(size) if size is not None else 0,
                                   getattr(a, "alignment", 1), getattr(a, "offset", 0) or 0))
    return out


def resource_model(obj) -> ResourceModel:
    """Model of one live resource (cached on the object; rid = id(obj))."""
    cached = getattr(obj, "_ts_model", None)
    if cached is not None:
        return cached
    from .pipeline_group import PipelineGroup
    from .resources import PdlLaunchBarrier, PdlWaitBarrier, WorkQueue
    if isinstance(obj, PipelineGroup):
        kind = ResourceKind.GROUP
    elif isinstance(obj, WorkQueue):
        kind = ResourceKind.WORK_QUEUE
    elif isinstance(obj, PdlWaitBarrier):
        kind = ResourceKind.PDL_WAIT
    elif isinstance(obj, PdlLaunchBarrier):
        kind = ResourceKind.PDL_LAUNCH
    else:
        kind = ResourceKind.PLAIN
    methods, findings = _work_methods(type(obj))
    r = ResourceModel(
        rid=id(obj), name=getattr(obj, "name", "") or "", class_name=type(obj).__name__, kind=kind,
        is_barrier=bool(getattr(obj, "is_barrier", False)),
        work_methods=methods, reserved_collisions=findings,
        range=getattr(obj, "_ts_range", UNKNOWN_RANGE),
        class_mro=tuple(_qualname(c) for c in type(obj).__mro__),
        consumer_wait_signaling_threads=getattr(obj, "consumer_wait_signaling_threads", None),
    )
    if kind is not ResourceKind.GROUP:
        r.tlv_names = _tlv_names(obj)
        r.tlv_dtypes = _tlv_dtypes(obj, r.tlv_names)
        r.unset_fields, r.internal_fields = _user_fields(obj)
        r.legacy_factories = _legacy_factories(type(obj))
        r.framework_overrides = _framework_overrides(type(obj))
        r.lost_init = getattr(obj, "_ts_lost_init", None)
        if methods:
            r.settable_fields = _attr_effects(type(obj), methods, _held_resources(obj))
    cfg = getattr(obj, "pipeline_config", None)
    if cfg is not None:
        r.pipeline = pipeline_model(cfg)
    elif kind is ResourceKind.GROUP:
        r.pipeline = getattr(obj, "_merged_model", None)
    r.smem = _allocs(obj.get_smem_requirements(), "smem")
    r.tmem = _allocs(obj.get_tmem_requirements(), "tmem")
    preq, creq = obj.get_producer_requirements(), obj.get_consumer_requirements()
    r.producer_requirements = None if preq is None else [getattr(a, "name", str(a)) for a in preq]
    r.consumer_requirements = None if creq is None else [getattr(a, "name", str(a)) for a in creq]
    group = getattr(obj, "pipeline_group", None)
    if group is not None:
        r.group = id(group)
    if kind is ResourceKind.GROUP:
        r.group_mode = obj.mode
        r.members = [id(m) for m in obj.members]
        r.member_names = {m.name: id(m) for m in obj.members}
    if kind is ResourceKind.WORK_QUEUE:
        tsc = getattr(obj, "tile_scheduler_config", None)
        r.tile_scheduler_type = getattr(tsc, "tile_scheduler_type", None)
    try:
        object.__setattr__(obj, "_ts_model", r)
    except Exception:
        pass
    return r


def refresh_allocations(obj, model: ResourceModel):
    """Allocation offsets change after compute_layout(); re-read them."""
    model.smem = _allocs(obj.get_smem_requirements(), "smem")
    model.tmem = _allocs(obj.get_tmem_requirements(), "tmem")


def collect_resources(objs, out: dict):
    """Adds each resource and its group / members to `out` (rid -> model)."""
    from .pipeline_group import PipelineGroup
    for o in objs:
        if o is None or id(o) in out:
            continue
        m = resource_model(o)
        out[m.rid] = m
        group = getattr(o, "pipeline_group", None)
        if group is not None:
            collect_resources([group], out)
        if isinstance(o, PipelineGroup):
            collect_resources(o.members, out)
    return out


def allocator_model(alloc, space: str):
    """Model of an attached SmemAllocator / TmemAllocator (None when absent)."""
    if alloc is None:
        return None
    if space == "smem":
        data, barriers = alloc.data_bytes, alloc.barrier_smem_bytes
    else:
        data, barriers = alloc.total_tmem_columns, 0
    allocs = [AllocationModel(a.name, space, a.size_bytes if space == "smem" else a.num_columns,
                              getattr(a, "alignment", 1), a.offset or 0) for a in alloc.allocations]
    out = AllocatorModel(space, data, barriers, allocs, getattr(alloc, "_ts_range", UNKNOWN_RANGE))
    if hasattr(alloc, "model"):   # alias groups, for the allocator usage report
        out.alias_groups = alloc.model().alias_groups
    if space == "smem":
        out.groups = [id(g) for g in getattr(alloc, "groups", [])]
    out.complete = hasattr(alloc, "model")   # alias groups known too
    return out
