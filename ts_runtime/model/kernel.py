"""Resources, pipelines, tasks, the dependency graph and allocations of one kernel.

`KernelModel` is what a `TaskManager(...)` call describes. The tracing DSL builds it from
live objects; ts-lint builds it from source. Values a linter cannot resolve are `UNKNOWN`.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Optional

from ..enums import PipelineType, ScheduleStage, SignalingThreads
from ..source import SourceRange, UNKNOWN_RANGE
from .values import UNKNOWN, is_static_int


class ResourceKind(str, enum.Enum):
    PLAIN = "plain"
    WORK_QUEUE = "work_queue"
    PDL_WAIT = "pdl_wait"
    PDL_LAUNCH = "pdl_launch"
    GROUP = "group"


@dataclass
class PipelineModel:
    pipeline_type: Any = UNKNOWN                 # PipelineType | UNKNOWN
    num_stages: Any = UNKNOWN
    num_bytes: Any = 0
    producer_group_size: Any = UNKNOWN
    consumer_group_size: Any = UNKNOWN
    producer_agent: Any = "Thread"
    consumer_agent: Any = "Thread"
    cta_layout_vmnk: Any = None                  # tuple | None | "opaque" | UNKNOWN
    producer_signaling_threads: Any = SignalingThreads.All
    consumer_signaling_threads: Any = SignalingThreads.All
    consumer_wait_signaling_threads: Any = None
    umma_consumer_producer_op: Any = "AsyncThread"
    async_producer_op: Any = "AsyncThread"
    advance_on_wait: Any = False
    advance_on_acquire: Any = False
    num_bytes_per_warp_per_cta: Any = None
    mcast_mode_mn: Any = (1, 1)
    interleave_strides: Any = (1, 1, 1, 1)       # (acquire, commit, wait, release)
    range: SourceRange = UNKNOWN_RANGE
    arg_ranges: dict = field(default_factory=dict)   # keyword -> range of its value

    def at(self, *keywords) -> SourceRange:
        """Range of the first given keyword argument present, else the whole call."""
        for k in keywords:
            if k in self.arg_ranges:
                return self.arg_ranges[k]
        return self.range

    @property
    def max_interleave_stride(self):
        s = self.interleave_strides
        return max(s) if isinstance(s, tuple) and all(is_static_int(x) for x in s) else UNKNOWN

    @property
    def cluster_v(self):
        """V = cta_layout_vmnk[0] (1 for None); UNKNOWN for opaque/unknown layouts."""
        lay = self.cta_layout_vmnk
        if lay is None:
            return 1
        if isinstance(lay, tuple) and lay and all(is_static_int(x) for x in lay):
            return lay[0]
        return UNKNOWN

    @property
    def cluster_total(self):
        lay = self.cta_layout_vmnk
        if lay is None:
            return 1
        if isinstance(lay, tuple) and all(is_static_int(x) for x in lay):
            total = 1
            for x in lay:
                total *= x
            return total
        return UNKNOWN


@dataclass
class ParamSpec:
    """One parameter of a work method after `(self, stage_info)`.

    kind: "pos" (positional-or-keyword routed input), "kw" (keyword-only).
    constexpr: annotated `cutlass.Constexpr[...]` (a compile-time literal, not routed).
    """
    name: str
    kind: str = "pos"
    constexpr: bool = False
    has_default: bool = False


@dataclass
class WorkMethodModel:
    name: str
    stage: ScheduleStage
    returns: tuple = ()
    params: list = field(default_factory=list)   # [ParamSpec]
    range: SourceRange = UNKNOWN_RANGE
    defined_on: str = ""                          # class that defines it
    # self.<attr>s it reads / sets, its self.helper() calls followed (model/attr_effects.py)
    uses: frozenset = frozenset()
    writes: frozenset = frozenset()
    writes_any: bool = False                      # calls a method whose body is unknown
    foreign_uses: frozenset = frozenset()         # (rid, attr): self.<held resource>.<attr> reads
    context_uses: frozenset = frozenset()         # stage_info.context.<name> reads (unconditional)
    touched: frozenset = frozenset()              # every self.<name> it reads, sets, tests or calls
    returns_value: bool = True                    # False: its body returns None (TS328)
    return_counts: Any = None                     # frozenset of exit value counts, or None (TS328)
    return_dtypes: Any = None                     # DSL type names of its return annotation (TS329)
    returns_literal: bool = False                 # an exit returns a Python number literal (TS329)
    # why the framework's call `method(self, stage_info, **inputs)` does not bind to its
    # signature (`takes 1 positional argument but 2 were given`), None when it does (TS240)
    stage_info_problem: Optional[str] = None
    def_range: SourceRange = UNKNOWN_RANGE        # the `def` line (TS240)
    # a `@cute.jit` / `@cute.kernel` decorator above the work decorator: (its text, its
    # range), None when the DSL decorator is innermost or absent (TS241)
    misplaced_dsl_decorator: Any = None
    returns_range: Optional[SourceRange] = None   # the `returns=` value of the decorator (TS314)

    @property
    def routed(self):
        return [p for p in self.params if not p.constexpr]

    @property
    def constexpr(self):
        return [p for p in self.params if p.constexpr]


@dataclass
class AllocationModel:
    name: str
    space: str = "smem"          # "smem" | "tmem"
    size: Any = 0                # bytes (smem) or columns (tmem)
    alignment: Any = 128
    offset: Any = 0
    range: SourceRange = UNKNOWN_RANGE


# TS234: the legacy per-resource variable factories, forbidden with captured schedules
LEGACY_FACTORIES = ("create_consumer_variables", "create_producer_variables")
# TS239: the MemoryResource methods the framework calls on every resource while it sets the
# kernel up, with the number of positional arguments it passes (`setup_resources_and_tasks()`
# calls `create()`, which calls `create_pipeline(pipeline_config)`). The requirement hooks are
# called when the model is built, where a bad signature raises at once.
FRAMEWORK_CALLS = {"create": 0, "create_pipeline": 1}


def framework_call_problem(params, nargs: int) -> Optional[str]:
    """Why a call with `nargs` positional arguments does not bind, or None.

    `params`: the callable's parameters after any bound `self` / `cls`, as (name, kind,
    has_default) with inspect's kind names ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD",
    "VAR_POSITIONAL", "KEYWORD_ONLY", "VAR_KEYWORD"); None for a value that is not a
    function. Shared by both front ends, so that the message is the same."""
    if params is None:
        return "it is not a method"
    positional = [p for p in params if p[1] in ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")]
    if nargs > len(positional) and not any(p[1] == "VAR_POSITIONAL" for p in params):
        return (f"it takes {len(positional)} positional argument{'' if len(positional) == 1 else 's'} "
                f"but {nargs} {'is' if nargs == 1 else 'are'} given")
    missing = [p[0] for p in positional[nargs:] if not p[2]]
    missing += [p[0] for p in params if p[1] == "KEYWORD_ONLY" and not p[2]]
    if missing:
        return (f"it is missing {len(missing)} required argument{'' if len(missing) == 1 else 's'}: "
                + ", ".join(f"'{m}'" for m in missing))
    return None


# TS233: what a work method may not touch on `self` while a captured schedule runs (plus
# the resource's task-local variable fields)
VARIABLE_ACCESSORS = ("consumer_vars", "producer_vars", "set_consumer_var", "get_consumer_var",
                      "get_producer_var")


@dataclass
class ResourceModel:
    rid: int
    name: str = ""
    class_name: str = ""
    kind: ResourceKind = ResourceKind.PLAIN
    is_barrier: bool = False
    pipeline: Optional[PipelineModel] = None
    work_methods: dict = field(default_factory=dict)   # name -> WorkMethodModel
    reserved_collisions: list = field(default_factory=list)  # [(name, message, range, code)]
    tlv_names: set = field(default_factory=set)
    tlv_dtypes: dict = field(default_factory=dict)   # task-local variable -> DSL type name (TS329)
    smem: list = field(default_factory=list)           # [AllocationModel]
    tmem: list = field(default_factory=list)
    producer_requirements: Optional[list] = None       # allocation names, None = all
    consumer_requirements: Optional[list] = None
    group: Optional[int] = None                        # rid of the PipelineGroup it belongs to
    group_mode: Any = None                             # PipelineGroupMode (for groups)
    members: list = field(default_factory=list)        # member rids (for groups)
    member_names: dict = field(default_factory=dict)   # name -> member rid (for groups)
    tile_scheduler_type: Any = None                    # TileSchedulerType (WorkQueue)
    consumer_wait_signaling_threads: Any = None
    class_mro: tuple = ()                              # qualified class names, most derived first
    # fields declared by the user's classes whose value is None when the resource is
    # built (set later by a setup work method; TS237)
    unset_fields: frozenset = frozenset()
    settable_fields: Optional[frozenset] = None   # what any user method may set (None: unknown)
    internal_fields: frozenset = frozenset()      # the user's `field(init=False)` fields
    # legacy variable factories the user's classes define: [(method name, its def line)] (TS234)
    legacy_factories: list = field(default_factory=list)
    # FRAMEWORK_CALLS methods the user's classes define that the framework's call does not
    # bind: [(method name, why, its def line, the class that defines it)] (TS239)
    framework_overrides: list = field(default_factory=list)
    # the user's own `__init__` never ran MemoryResource.__init__ (TS238): the base fields
    # passed to the construction that it dropped (e.g. ("name", "pipeline_config")); None
    # when the base part was initialised
    lost_init: Optional[tuple] = None
    range: SourceRange = UNKNOWN_RANGE

    @property
    def pipelined(self) -> bool:
        return self.pipeline is not None

    @property
    def label(self) -> str:
        return self.name or self.class_name or f"resource#{self.rid}"

    @property
    def is_work_queue(self) -> bool:
        return self.kind is ResourceKind.WORK_QUEUE

    @property
    def is_group(self) -> bool:
        return self.kind is ResourceKind.GROUP


@dataclass
class TaskModel:
    name: str
    warp_idx: Any = 0
    num_warps: Any = 1
    src: list = field(default_factory=list)      # resource ids
    dst: list = field(default_factory=list)
    num_registers: Any = None
    run_only_on_cta_id: Any = None
    schedule: Any = None                          # ScheduleModel
    lowered: Any = None                           # LoweredSchedule
    class_mro: tuple = ()                         # qualified names of the Task (sub)class
    range: SourceRange = UNKNOWN_RANGE
    arg_ranges: dict = field(default_factory=dict)   # keyword -> range of its value

    def at(self, *keywords) -> SourceRange:
        for k in keywords:
            if k in self.arg_ranges:
                return self.arg_ranges[k]
        return self.range

    @property
    def resources(self) -> list:
        seen, out = set(), []
        for r in list(self.src) + list(self.dst):
            if r not in seen:
                seen.add(r)
                out.append(r)
        return out

    @property
    def warp_end(self):
        if is_static_int(self.warp_idx) and is_static_int(self.num_warps):
            return self.warp_idx + self.num_warps
        return UNKNOWN

    @property
    def label(self) -> str:
        return f"{self.name}[{self.warp_idx}:{self.warp_end})"


@dataclass
class GraphEdge:
    downstream: int
    upstream: int
    range: SourceRange = UNKNOWN_RANGE


@dataclass
class ManagerOptions:
    skip_validation: bool = False
    verbose: bool = True
    exhaustive_deadlock_race_check: bool = True
    assume_pdl_wait_completed: bool = False
    smem_capacity_bytes: Any = 232448
    tmem_capacity_columns: Any = 512
    dma_consumer_release_labels: Any = None   # {(up rid, down rid): [labels]}
    max_states: int = 1_000_000
    timeout: Optional[float] = None


@dataclass
class AllocatorModel:
    """An SmemAllocator / TmemAllocator attached to the manager (after compute_layout)."""
    space: str = "smem"
    data_bytes: Any = 0
    barrier_bytes: Any = 0
    allocations: list = field(default_factory=list)      # standalone allocations
    range: SourceRange = UNKNOWN_RANGE
    alias_groups: list = field(default_factory=list)     # [[[AllocationModel] phase] group]
    groups: Optional[list] = None    # rids of the PipelineGroups given to add_pipeline_group (None: unknown)
    complete: bool = False           # `allocations` / `alias_groups` hold everything that was added

    @property
    def total(self):
        if is_static_int(self.data_bytes) and is_static_int(self.barrier_bytes):
            return self.data_bytes + self.barrier_bytes
        return UNKNOWN


@dataclass
class KernelModel:
    resources: dict = field(default_factory=dict)   # rid -> ResourceModel
    tasks: list = field(default_factory=list)       # [TaskModel]
    graph: list = field(default_factory=list)       # [GraphEdge]
    graph_keys: list = field(default_factory=list)  # [(downstream rid, range of the key)], empty lists too
    graph_given: bool = True
    options: ManagerOptions = field(default_factory=ManagerOptions)
    smem_allocator: Optional[AllocatorModel] = None
    tmem_allocator: Optional[AllocatorModel] = None
    range: SourceRange = UNKNOWN_RANGE
    arg_ranges: dict = field(default_factory=dict)
    check_result: Any = None

    def at(self, *keywords) -> SourceRange:
        for k in keywords:
            if k in self.arg_ranges:
                return self.arg_ranges[k]
        return self.range

    def res(self, rid: int) -> ResourceModel:
        return self.resources[rid]

    def name(self, rid: int) -> str:
        r = self.resources.get(rid)
        return r.label if r else f"resource#{rid}"

    @property
    def work_queues(self) -> list:
        return [r for r in self.resources.values() if r.is_work_queue]

    def tasks_with_src(self, rid):
        return [t for t in self.tasks if rid in t.src]

    def tasks_with_dst(self, rid):
        return [t for t in self.tasks if rid in t.dst]
