"""Resources, work decorators, pipeline configs and task-local variables (the DSL surface).

Drop-in for `cutlass.experimental.task_scheduling.resources`. Importing this module does
not import cutlass: values from cutlass (CooperativeGroup, Layout, dtypes) are only read
duck-typed, and the pipeline objects are built by `ts_runtime.codegen` at kernel time.
"""
from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import textwrap
from dataclasses import dataclass, field
from typing import Any, ClassVar, Optional, Tuple, Union

from .enums import (
    PipelineType, ScheduleStage, SignalingThreads, TileSchedulerType, WorkAttr,
)
from .model.work_signature import RawParam, analyze_params, normalize_returns, stage_info_problem
from .diagnostics import raise_finding
from .api_calls import bind_error, checked_api, checked_factory, checked_init
from .source import SourceRange, caller_range

__all__ = [
    "consumer_work", "producer_work", "PipelineConfig", "TileSchedulerConfig", "StageInfo",
    "WorkTileInfo", "TaskLocalVariable", "MemoryResource", "PdlWaitBarrier", "PdlLaunchBarrier",
    "PDL_BARRIER_TYPES", "WorkQueue", "SlotRouting", "VarRoute", "InterleaveStride",
]

SlotRouting = dict
VarRoute = Union[str, Tuple[str, str]]
InterleaveStride = Union[int, Tuple[int, int, int, int]]

_TLV_TAG = "ts_task_local_variable"


# --------------------------------------------------------------------------- work decorators
@dataclass
class WorkInfo:
    """What a work decorator records on the function (read by both capture and codegen)."""
    stage: ScheduleStage
    returns: list
    params: list          # [ParamSpec]
    work_attrs: WorkAttr
    line: int = 0
    path: str = ""
    stage_info_problem: Optional[str] = None   # the framework's call does not bind (TS240)


def _is_constexpr_annotation(ann) -> bool:
    if ann is inspect.Parameter.empty:
        return False
    if isinstance(ann, str):
        return "Constexpr" in ann
    origin = getattr(ann, "__origin__", None)
    for obj in (ann, origin):
        if obj is not None and getattr(obj, "__name__", "") == "Constexpr":
            return True
    return "Constexpr" in repr(ann)


def _raw_params(fn) -> list:
    kinds = {
        inspect.Parameter.POSITIONAL_ONLY: "positional_only",
        inspect.Parameter.POSITIONAL_OR_KEYWORD: "pos_or_kw",
        inspect.Parameter.VAR_POSITIONAL: "var_pos",
        inspect.Parameter.KEYWORD_ONLY: "kw_only",
        inspect.Parameter.VAR_KEYWORD: "var_kw",
    }
    target = inspect.unwrap(fn)
    sig = inspect.signature(target)
    return [RawParam(p.name, kinds[p.kind], _is_constexpr_annotation(p.annotation),
                     p.default is not inspect.Parameter.empty) for p in sig.parameters.values()]


def _returns_literal_dict(fn) -> bool:
    """TS315: a `return {...}` literal in consumer work (checked on the source, no run)."""
    try:
        src = textwrap.dedent(inspect.getsource(inspect.unwrap(fn)))
        tree = ast.parse(src)
    except (OSError, TypeError, SyntaxError):
        return False
    return any(isinstance(n, ast.Return) and isinstance(n.value, (ast.Dict, ast.DictComp))
               for n in ast.walk(tree))


def _raise_first(findings, rng=None):
    for code, exc, msg in findings:
        raise_finding(code, exc, msg, rng or caller_range())


def _direct_work_error(obj, method: str, error: str):
    """Raises TS907 (TypeError) for a work method called on `obj` itself with arguments that
    do not bind: in a schedule body being captured (the resource read from an enclosing
    scope) or outside any (ts-lint: tsapi.direct_work_call, the same text)."""
    from .api_calls import direct_work_message
    from .schedule_builder import _active
    raise_finding("TS907", TypeError, direct_work_message(type(obj).__name__, method, error,
                                                          getattr(obj, "name", None), _active.get(None) is not None),
                  caller_range())


def _make_work_decorator(side: str):
    def decorator(method=None, *, work_attrs: WorkAttr = WorkAttr.NONE, returns=None):
        # `method` as the reference names it (`consumer_work(method=f)` binds there too)
        fn = method
        if fn is not None and not callable(fn):
            raise_finding("TS231", TypeError, f"@{side}_work must decorate a method directly", caller_range())
        WorkAttr.validate(work_attrs)
        if side == "producer" and returns is not None:
            raise_finding("TS313", TypeError, "returns= is only supported on @consumer_work", caller_range())

        def wrap(f):
            if not callable(f):
                raise_finding("TS231", TypeError, f"@{side}_work must decorate a method directly", caller_range())
            name = getattr(inspect.unwrap(f), "__name__", "work")
            raw = _raw_params(f)
            specs, findings = analyze_params(name, raw)
            rets, rfind = normalize_returns(name, returns)
            findings += rfind
            if side == "consumer" and _returns_literal_dict(f):
                findings.append(("TS315", ValueError, f"consumer work '{name}' must not return a dict; "
                                 "declare returns=(...) and return a tuple"))
            code0 = getattr(inspect.unwrap(f), "__code__", None)
            _raise_first(findings, SourceRange(code0.co_filename, code0.co_firstlineno) if code0 else None)
            aux = work_attrs.is_auxiliary()
            if side == "consumer":
                stage = ScheduleStage.ConsumerAuxWork if aux else ScheduleStage.ConsumerWork
            else:
                stage = ScheduleStage.ProducerAuxWork if aux else ScheduleStage.ProducerWork
            code = getattr(inspect.unwrap(f), "__code__", None)

            @functools.wraps(f)
            def work(self, *args, **kwargs):
                # called on the resource object itself (not recorded through a schedule
                # proxy) without a binding stage_info: TS907, the TypeError Python raises
                # (and the reference, also where `f` is a @cute.jit function, whose own
                # binding error would be the DSL's)
                error = bind_error(f, (self,) + args, kwargs)
                if error is not None:
                    _direct_work_error(self, name, error)
                return f(self, *args, **kwargs)

            work.__ts_work__ = WorkInfo(stage, rets, specs, work_attrs,
                                        code.co_firstlineno if code else 0,
                                        code.co_filename if code else "", stage_info_problem(raw))
            return work

        return wrap(fn) if fn is not None else wrap

    decorator.__name__ = f"{side}_work"
    decorator.__doc__ = (f"Registers a {'read' if side == 'consumer' else 'write'}-side work method "
                         "under its Python name (bare or with work_attrs=/returns=).")
    # a call whose arguments do not bind (`work_attr=`) raises TS907 at the decorator line
    return checked_api(f"{side}_work(...)")(decorator)


consumer_work = _make_work_decorator("consumer")
producer_work = _make_work_decorator("producer")


# --------------------------------------------------------------------------- task-local variables
class _NoDefault:
    def __repr__(self):
        return "<no default>"


_NO_DEFAULT = _NoDefault()
_NO_DTYPE = _NoDefault()      # `dtype` not given (an explicit dtype=None is accepted, as by the reference)

@checked_init
@dataclass
class TaskLocalVariable:
    """Metadata of one resource-owned value that flows between work calls (not the value)."""
    dtype: Any = _NO_DTYPE
    default: Any = _NO_DEFAULT
    default_factory: Any = None
    docs: Optional[str] = None
    runtime_slot_name: Optional[str] = None

    def __post_init__(self):
        if self.dtype is _NO_DTYPE:
            raise_finding("TS318", ValueError, "TaskLocalVariable requires a dtype", caller_range())
        has_default = self.default is not _NO_DEFAULT
        if has_default and self.default_factory is not None:
            raise_finding("TS318", ValueError, "TaskLocalVariable takes either default or default_factory, not both",
                          caller_range())
        if not has_default and self.default_factory is None:
            raise_finding("TS318", ValueError, "TaskLocalVariable requires a default or default_factory",
                          caller_range())
        self._owner = None
        self._field_name = None

    def _bind_owner(self, owner, field_name: str):
        if self._owner is not None and (self._owner is not owner or self._field_name != field_name):
            raise_finding("TS319", ValueError, f"TaskLocalVariable bound to '{self._field_name}' cannot be "
                          f"reused across resource fields ('{field_name}')", getattr(owner, "_ts_range", None))
        self._owner, self._field_name = owner, field_name

    @property
    def owner(self):
        return self._owner

    @property
    def field_name(self):
        return self._field_name

    @property
    def slot_name(self):
        return self.runtime_slot_name or self._field_name

    @staticmethod
    @checked_api("TaskLocalVariable.uninitialized(...)")
    def uninitialized():
        """Field placeholder; assign a TaskLocalVariable in __init__/__post_init__."""
        return field(default=None, init=False, repr=False, compare=False,
                     metadata={_TLV_TAG: True})

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other


# --------------------------------------------------------------------------- configs
def _strides(value):
    if isinstance(value, tuple):
        return value
    return (value, value, value, value)


@checked_init
@dataclass(frozen=True)
class PipelineConfig:
    """Declares the barrier protocol guarding a resource; build it with a create_* factory."""
    num_stages: int
    num_bytes: int
    producer_group: Any
    consumer_group: Any
    pipeline_type: PipelineType
    barrier_ptr: Any = None
    cta_layout_vmnk: Any = None
    producer_signaling_threads: SignalingThreads = SignalingThreads.All
    consumer_signaling_threads: SignalingThreads = SignalingThreads.All
    consumer_wait_signaling_threads: Optional[SignalingThreads] = None
    umma_consumer_producer_op: Any = None
    advance_on_wait: bool = False
    advance_on_acquire: bool = False
    num_bytes_per_warp_per_cta: Optional[int] = None
    mcast_mode_mn: Tuple[int, int] = (1, 1)
    interleave_stride: InterleaveStride = 1
    async_producer_op: Any = None

    def __post_init__(self):
        rng = getattr(self, "_ts_range", None) or caller_range()
        object.__setattr__(self, "_ts_range", rng)
        from .tracing import pipeline_model
        from .model.config_checks import check_pipeline_config_at
        for code, exc, msg, at in check_pipeline_config_at(pipeline_model(self)):
            raise_finding(code, exc, msg, at)

    # interleave accessors
    @property
    def interleave_strides(self):
        return _strides(self.interleave_stride)

    @property
    def producer_acquire_interleave_stride(self):
        return self.interleave_strides[0]

    @property
    def producer_commit_interleave_stride(self):
        return self.interleave_strides[1]

    @property
    def consumer_wait_interleave_stride(self):
        return self.interleave_strides[2]

    @property
    def consumer_release_interleave_stride(self):
        return self.interleave_strides[3]

    @property
    def max_interleave_stride(self):
        return max(self.interleave_strides)

    @property
    def has_interleaved_stride(self):
        return self.max_interleave_stride > 1

    # factories ------------------------------------------------------------
    @classmethod
    def _make(cls, **kw):
        rng = caller_range()
        obj = cls.__new__(cls)
        object.__setattr__(obj, "_ts_range", rng)
        defaults = {f.name: f.default for f in dataclasses.fields(cls)
                    if f.default is not dataclasses.MISSING}
        defaults.update(kw)
        for k, v in defaults.items():
            object.__setattr__(obj, k, v)
        obj.__post_init__()
        return obj

    @classmethod
    @checked_factory
    def create_async_async_pipeline_cfg(cls, num_stages, producer_group, consumer_group, cta_layout_vmnk,
                                        producer_signaling_threads=SignalingThreads.All,
                                        consumer_signaling_threads=SignalingThreads.All, barrier_ptr=None,
                                        producer_op=None, advance_on_acquire=False, interleave_stride=1):
        return cls._make(num_stages=num_stages, num_bytes=0, producer_group=producer_group,
                         consumer_group=consumer_group, pipeline_type=PipelineType.AsyncAsync,
                         cta_layout_vmnk=cta_layout_vmnk, producer_signaling_threads=producer_signaling_threads,
                         consumer_signaling_threads=consumer_signaling_threads, barrier_ptr=barrier_ptr,
                         async_producer_op=producer_op, advance_on_acquire=advance_on_acquire,
                         interleave_stride=interleave_stride)

    @classmethod
    @checked_factory
    def create_tma_async_pipeline_cfg(cls, num_stages, num_bytes, producer_group, consumer_group,
                                      cta_layout_vmnk=None, producer_signaling_threads=SignalingThreads.All,
                                      consumer_signaling_threads=SignalingThreads.All, barrier_ptr=None,
                                      advance_on_wait=False, interleave_stride=1,
                                      num_bytes_per_warp_per_cta=None):
        return cls._make(num_stages=num_stages, num_bytes=num_bytes, producer_group=producer_group,
                         consumer_group=consumer_group, pipeline_type=PipelineType.TmaAsync,
                         cta_layout_vmnk=cta_layout_vmnk, producer_signaling_threads=producer_signaling_threads,
                         consumer_signaling_threads=consumer_signaling_threads, barrier_ptr=barrier_ptr,
                         advance_on_wait=advance_on_wait, interleave_stride=interleave_stride,
                         num_bytes_per_warp_per_cta=num_bytes_per_warp_per_cta)

    @classmethod
    @checked_factory
    def create_tma_umma_pipeline_cfg(cls, num_stages, num_bytes, producer_group, consumer_group, cta_layout_vmnk,
                                     producer_signaling_threads=SignalingThreads.All,
                                     consumer_signaling_threads=SignalingThreads.All, barrier_ptr=None,
                                     advance_on_wait=False, interleave_stride=1, mcast_mode_mn=(1, 1),
                                     num_bytes_per_warp_per_cta=None):
        return cls._make(num_stages=num_stages, num_bytes=num_bytes, producer_group=producer_group,
                         consumer_group=consumer_group, pipeline_type=PipelineType.TmaUmma,
                         cta_layout_vmnk=cta_layout_vmnk, producer_signaling_threads=producer_signaling_threads,
                         consumer_signaling_threads=consumer_signaling_threads, barrier_ptr=barrier_ptr,
                         advance_on_wait=advance_on_wait, interleave_stride=interleave_stride,
                         mcast_mode_mn=mcast_mode_mn, num_bytes_per_warp_per_cta=num_bytes_per_warp_per_cta)

    @classmethod
    @checked_factory
    def create_umma_async_pipeline_cfg(cls, num_stages, producer_group, consumer_group, cta_layout_vmnk,
                                       producer_signaling_threads=SignalingThreads.All,
                                       consumer_signaling_threads=SignalingThreads.All, barrier_ptr=None,
                                       interleave_stride=1):
        return cls._make(num_stages=num_stages, num_bytes=0, producer_group=producer_group,
                         consumer_group=consumer_group, pipeline_type=PipelineType.UmmaAsync,
                         cta_layout_vmnk=cta_layout_vmnk, producer_signaling_threads=producer_signaling_threads,
                         consumer_signaling_threads=consumer_signaling_threads, barrier_ptr=barrier_ptr,
                         interleave_stride=interleave_stride)

    @classmethod
    @checked_factory
    def create_async_umma_pipeline_cfg(cls, num_stages, producer_group, consumer_group, cta_layout_vmnk,
                                       producer_signaling_threads=SignalingThreads.All,
                                       consumer_signaling_threads=SignalingThreads.All,
                                       consumer_wait_signaling_threads=None, producer_op=None, barrier_ptr=None,
                                       advance_on_wait=False, advance_on_acquire=False, interleave_stride=1):
        return cls._make(num_stages=num_stages, num_bytes=0, producer_group=producer_group,
                         consumer_group=consumer_group, pipeline_type=PipelineType.AsyncUmma,
                         cta_layout_vmnk=cta_layout_vmnk, producer_signaling_threads=producer_signaling_threads,
                         consumer_signaling_threads=consumer_signaling_threads,
                         consumer_wait_signaling_threads=consumer_wait_signaling_threads,
                         umma_consumer_producer_op=producer_op, barrier_ptr=barrier_ptr,
                         advance_on_wait=advance_on_wait, advance_on_acquire=advance_on_acquire,
                         interleave_stride=interleave_stride)

    @classmethod
    @checked_factory
    def create_umma_umma_pipeline_cfg(cls, num_stages, producer_group, consumer_group, cta_layout_vmnk,
                                      producer_signaling_threads=SignalingThreads.All,
                                      consumer_signaling_threads=SignalingThreads.All, barrier_ptr=None):
        return cls._make(num_stages=num_stages, num_bytes=0, producer_group=producer_group,
                         consumer_group=consumer_group, pipeline_type=PipelineType.UmmaUmma,
                         cta_layout_vmnk=cta_layout_vmnk, producer_signaling_threads=producer_signaling_threads,
                         consumer_signaling_threads=consumer_signaling_threads, barrier_ptr=barrier_ptr)

    @classmethod
    @checked_factory
    def create_tma_wgmma_pipeline_cfg(cls, num_stages, num_bytes, producer_group, consumer_group,
                                      cta_layout_vmnk=None, producer_signaling_threads=SignalingThreads.All,
                                      consumer_signaling_threads=SignalingThreads.All, barrier_ptr=None,
                                      advance_on_wait=False, mcast_mode_mn=(1, 1), num_bytes_per_warp_per_cta=None):
        """ts extension (Hopper, not in the reference): TMA fills a stage, a wgmma warpgroup
        reads it; `release()` first waits for the wgmma groups reading the stage
        (`wgmma.wait_group`), then arrives like a TmaAsync consumer (docs/hopper.md).
        A lagged release (the wgmma task holds two stages) needs `advance_on_wait=True`."""
        return cls._make(num_stages=num_stages, num_bytes=num_bytes, producer_group=producer_group,
                         consumer_group=consumer_group, pipeline_type=PipelineType.TmaWgmma,
                         cta_layout_vmnk=cta_layout_vmnk, producer_signaling_threads=producer_signaling_threads,
                         consumer_signaling_threads=consumer_signaling_threads, barrier_ptr=barrier_ptr,
                         advance_on_wait=advance_on_wait, mcast_mode_mn=mcast_mode_mn,
                         num_bytes_per_warp_per_cta=num_bytes_per_warp_per_cta)

    @classmethod
    @checked_factory
    def create_clc_fetch_async_pipeline_cfg(cls, num_stages, num_bytes, producer_group, consumer_group,
                                            cta_layout_vmnk, producer_signaling_threads=SignalingThreads.CtaLeader,
                                            consumer_signaling_threads=SignalingThreads.All, barrier_ptr=None):
        return cls._make(num_stages=num_stages, num_bytes=num_bytes, producer_group=producer_group,
                         consumer_group=consumer_group, pipeline_type=PipelineType.ClcFetchAsync,
                         cta_layout_vmnk=cta_layout_vmnk, producer_signaling_threads=producer_signaling_threads,
                         consumer_signaling_threads=consumer_signaling_threads, barrier_ptr=barrier_ptr)


@checked_init
@dataclass(frozen=True)
class TileSchedulerConfig:
    """Selects static or CLC-dynamic persistent scheduling for a WorkQueue."""
    tile_scheduler_type: TileSchedulerType
    tile_scheduler_params: Any
    response_ptr: Any = None

    @classmethod
    @checked_api("TileSchedulerConfig.create_static_persistent_tile_scheduler_params(...)")
    def create_static_persistent_tile_scheduler_params(cls, tile_scheduler_params):
        return cls(TileSchedulerType.StaticPersistent, tile_scheduler_params)

    @classmethod
    @checked_api("TileSchedulerConfig.create_clc_dynamic_persistent_tile_scheduler_params(...)")
    def create_clc_dynamic_persistent_tile_scheduler_params(cls, tile_scheduler_params, response_ptr):
        return cls(TileSchedulerType.ClcDynamicPersistent, tile_scheduler_params, response_ptr)


class WorkTileInfo:
    """The current persistent tile: `tile_idx` (m, n, l) and whether it is valid."""

    def __init__(self, tile_idx, is_valid_tile):
        self._tile_idx = tile_idx
        self._is_valid_tile = is_valid_tile

    @property
    def tile_idx(self):
        return self._tile_idx

    @property
    def is_valid_tile(self):
        return self._is_valid_tile

    def update_from(self, other: "WorkTileInfo"):
        self._tile_idx = other._tile_idx
        self._is_valid_tile = other._is_valid_tile


@dataclass(frozen=True)
class StageInfo:
    """Snapshot passed to every work method (loop index, pipeline stage, tile, context)."""
    loop_offset: Any
    loop_start: Any
    loop_end: Any
    loop_step: Any
    stage_idx: Any
    label: Any
    barrier: Any
    work_tile: Any
    num_active_stages: Any = 0
    context: Any = None
    task_cache: Any = None


# the fields MemoryResource.__init__ sets (a user __init__ that skips it leaves them unset)
BASE_FIELDS = ("name", "is_barrier", "pipeline_config", "consumer_vars", "producer_vars", "pipeline",
               "consumer_wait_signaling_threads")


def super_init_message(cls_name: str, lost: tuple = (), routed: str = "") -> str:
    """TS238's text (the same from both front ends): `lost`, the base fields passed to the
    construction that the user's `__init__` dropped; `routed`, a work call on the resource
    that routes values through its variables (empty when none)."""
    head = f"{cls_name}.__init__ does not call super().__init__(...), so the MemoryResource fields are never set"
    if "pipeline_config" in lost:
        return (f"{head}: the pipeline_config passed to it is dropped and the resource has no pipeline; "
                f"call super().__init__(**kwargs)")
    if routed:
        return (f"{head}: {routed} routes values through its consumer_vars / producer_vars, which do not "
                f"exist (AttributeError when the kernel is traced); call super().__init__(**kwargs)")
    dropped = f" ({', '.join(lost)} passed to it dropped)" if lost else ""
    return (f"{head}{dropped}; nothing in this kernel reads them yet, but the resource keeps the class "
            f"defaults (no name, no pipeline); call super().__init__(**kwargs)")


def setup_unbound_message(qualname: str):
    """TS137's text for a method `qualname` (the same from ts-lint)."""
    def text(name: str, local: bool) -> str:
        if local:
            return f"local variable '{name}' is read before it is assigned in {qualname}"
        return f"name '{name}' is not defined in {qualname}"
    return text


def _unbound_in(fn, exc: NameError):
    """TS137 when `exc` is a NameError raised by a read in `fn`'s own body (else None)."""
    from .diagnostics import TSNameError
    from .schedule_builder import unbound_name_finding
    if isinstance(exc, TSNameError):
        return None
    found = unbound_name_finding(fn, exc, "TS137", setup_unbound_message(".".join(fn.__qualname__.split(".")[-2:])))
    if found is None:
        return None
    d, name = found
    return TSNameError(f"TS137: {d.message} ({d.range})", [d], name=name)


def _checked_init(init):
    """A user resource's own `__init__`: a NameError in its body carries TS137. When the
    MemoryResource part was never initialised (`super().__init__(**kwargs)` missing), the
    object keeps the class defaults of the base fields, as in the reference, which fails
    only when something reads them (a dropped pipeline_config, the variables of a routed
    work call); the manager's TS238 judges that from the kernel (`_ts_lost_init`). The
    variable dicts are made empty here so that ts's own code can run on."""
    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        if not args and not kwargs:
            # `__new__` binds a construction with arguments (TS907); one without any, too
            from .api_calls import check_call
            check_call(init, f"{type(self).__name__}(...)", (self,), {})
        try:
            init(self, *args, **kwargs)
        except NameError as exc:
            err = _unbound_in(init, exc)
            if err is None:
                raise
            raise err from exc
        except TypeError as exc:
            _forwarded_keyword(self, init, exc)
            raise
        if "producer_vars" not in self.__dict__:
            own = self.__dict__
            self._ts_lost_init = tuple(k for k in kwargs if k in BASE_FIELDS and k not in own)
            own.setdefault("consumer_vars", {})
            own.setdefault("producer_vars", {})
    return __init__


def _forwarded_keyword(obj, init, exc: TypeError) -> None:
    """TS907 when the user's `__init__` passed keywords on through
    `super().__init__(**kwargs)` that the ts base class it reaches does not bind
    (`Res(namee=...)`: `MemoryResource.__init__() got an unexpected keyword argument
    'namee'`), raised at the construction, where the keywords are written (ts-lint:
    `ExpressionsMixin._super_init`, the same text). Returns (the caller re-raises) for any
    other TypeError."""
    from .api_calls import forwarded_error, forwarded_what, message
    got = forwarded_error(type(obj), init.__code__, exc)
    if got is None:
        return
    from .diagnostics import raise_finding
    from .source import construction_range
    raise_finding("TS907", TypeError, message(forwarded_what(type(obj).__name__, got[0]), got[1]),
                  construction_range(obj))


def _checked_post_init(post):
    """A user resource's own `__post_init__`: a NameError in its body carries TS137."""
    @functools.wraps(post)
    def __post_init__(self, *args, **kwargs):
        try:
            return post(self, *args, **kwargs)
        except NameError as exc:
            err = _unbound_in(post, exc)
            if err is None:
                raise
            raise err from exc
    return __post_init__


# --------------------------------------------------------------------------- resources
@dataclass(kw_only=True, eq=False)
class MemoryResource:
    """Base of every resource (identity semantics: two resources are never equal)."""
    name: str = ""
    is_barrier: bool = False
    pipeline_config: Optional[PipelineConfig] = None
    consumer_vars: dict = field(default_factory=dict)
    producer_vars: dict = field(default_factory=dict)
    pipeline: Any = None
    consumer_wait_signaling_threads: Optional[SignalingThreads] = None

    consumer_var_names: ClassVar[Optional[list]] = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # user subclasses are plain @dataclass: keep identity equality and hashing so
        # resources can key the dependency graph (dataclass leaves explicit ones alone)
        cls.__eq__ = object.__eq__
        cls.__hash__ = object.__hash__
        if not cls.__module__.startswith(("ts_runtime", "cutlass")):
            init = cls.__dict__.get("__init__")
            if inspect.isfunction(init):
                cls.__init__ = _checked_init(init)
            post = cls.__dict__.get("__post_init__")
            if inspect.isfunction(post):
                cls.__post_init__ = _checked_post_init(post)

    __hash__ = object.__hash__

    def __new__(cls, *args, **kwargs):
        if args or kwargs:
            # a construction binds its arguments to the class's __init__ first (TS907, as
            # Task / TaskManager); copy / pickle call __new__ without arguments
            from .api_calls import check_call
            check_call(cls.__init__, f"{cls.__name__}(...)", (None,) + args, kwargs)
        obj = object.__new__(cls)
        obj._ts_range = caller_range()   # where the user created it (findings point here)
        return obj

    def __post_init__(self):
        pass

    # requirements (allocators, race checker) --------------------------------
    def get_smem_requirements(self):
        return []

    def get_tmem_requirements(self):
        return []

    def get_producer_requirements(self):
        return None

    def get_consumer_requirements(self):
        return None

    def physical_ranges(self):
        return []

    # monolithic default hooks ------------------------------------------------
    def consumer_work(self, stage_info):
        return None

    def producer_work(self, stage_info):
        return None

    def consumer_aux_work(self, stage_info):
        return None

    def producer_aux_work(self, stage_info):
        return None

    @property
    def state_src(self):
        group = getattr(self, "pipeline_group", None)
        if group is not None and group.mode.value in ("Merge", "FusedMerge"):
            return group
        return self

    # The DSL carries `self` through runtime branches of @cute.jit work methods; tell it
    # which values are traced (codegen.carry). Called only at kernel time.
    def __extract_mlir_values__(self):
        from .codegen.carry import resource_values
        return resource_values(self)

    def __new_from_mlir_values__(self, values):
        from .codegen.carry import resource_from_values
        return resource_from_values(self, values)

    def create(self):
        """Materialises the pipeline (kernel time; needs cutlass)."""
        if getattr(self, "pipeline_group", None) is not None:
            return
        if self.pipeline_config is not None:
            self.pipeline = self.create_pipeline(self.pipeline_config)

    def create_pipeline(self, pipeline_config):
        from .codegen.pipelines import create_pipeline
        return create_pipeline(self, pipeline_config)

    def __repr__(self):
        return f"{type(self).__name__}(name={self.name!r})"


@dataclass(kw_only=True, eq=False)
class PdlWaitBarrier(MemoryResource):
    """Programmatic Dependent Launch: waits for the previous grid (`griddepcontrol.wait`)."""
    is_barrier: bool = True

    @consumer_work
    def wait_griddep(self, stage_info):
        from .codegen.pdl import wait_griddep
        wait_griddep()


@dataclass(kw_only=True, eq=False)
class PdlLaunchBarrier(MemoryResource):
    """Programmatic Dependent Launch: lets the next grid start (`griddepcontrol.launch_dependents`)."""
    is_barrier: bool = True

    @producer_work
    def launch_griddep(self, stage_info):
        from .codegen.pdl import launch_griddep
        launch_griddep()


PDL_BARRIER_TYPES = (PdlWaitBarrier, PdlLaunchBarrier)


@dataclass(kw_only=True, eq=False)
class WorkQueue(MemoryResource):
    """Persistent tile scheduler resource; subclass it to add skip_if predicates."""
    tile_scheduler_config: Any = None
    tile_scheduler: Any = None
    work_tile: Any = TaskLocalVariable.uninitialized()
    skip_work_tile: Any = TaskLocalVariable.uninitialized()

    def __init__(self, tile_scheduler_config=None, **kwargs):
        extra = {k: kwargs.pop(k) for k in list(kwargs) if k not in {f.name for f in dataclasses.fields(WorkQueue)}}
        for f in dataclasses.fields(WorkQueue):
            if f.init and f.name in kwargs:
                setattr(self, f.name, kwargs.pop(f.name))
            elif f.init:
                setattr(self, f.name, f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default)
        self.tile_scheduler_config = tile_scheduler_config
        for k, v in extra.items():
            setattr(self, k, v)
        self.work_tile = TaskLocalVariable(dtype="WorkTileInfo", default=None)
        self.skip_work_tile = TaskLocalVariable(dtype="Boolean", default=False)
        self.__post_init__()

    @consumer_work(returns=("work_tile",))
    def get_and_advance_work_tile(self, stage_info):
        from .codegen.work_queue import get_and_advance_work_tile
        return get_and_advance_work_tile(self, stage_info)

    @producer_work
    def fetch_work_tile(self, stage_info):
        from .codegen.work_queue import fetch_work_tile
        return fetch_work_tile(self, stage_info)

    @consumer_work(work_attrs=WorkAttr.AUXILIARY, returns=("work_tile", "skip_work_tile"))
    def init_work_tile(self, stage_info):
        from .codegen.work_queue import init_work_tile
        return init_work_tile(self, stage_info)

    def skip_work_tile_if(self, work_tile):
        return False


def __getattr__(name: str):
    # `from ...resources import PipelineGroup` works with the reference (lazy, to avoid
    # the import cycle with pipeline_group); offer the same.
    if name == "PipelineGroup":
        from .pipeline_group import PipelineGroup
        return PipelineGroup
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
