"""Derived runtime metadata of a kernel (model.md §5.4-§5.6, §6 "derive runtime metadata").

Pure functions over a `KernelModel`; they never mutate the user's configs or the model.
Shared by the manager rules (TS4xx), the checkers and code generation, so that "who
produces / consumes a resource", "which lane a task owns" and "what arrival count a
barrier expects" are computed in one place.

Every function returns `UNKNOWN` (or skips a task) where an input is not known, so that
callers can stay silent instead of guessing.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional

from ..enums import PipelineType, ScheduleStage, SignalingThreads
from .values import UNKNOWN, is_static_int

S = ScheduleStage

# The four interleave roles and the stages that "use" each one (model.md §5.4, TS412).
ROLES = ("acquire", "commit", "wait", "release")
ROLE_STAGES = {
    "acquire": frozenset({S.ProducerAuxWork, S.ProducerTryAcquire, S.ProducerAcquire, S.ProducerWork}),
    "commit": frozenset({S.ProducerCommit}),
    "wait": frozenset({S.ConsumerAuxWork, S.ConsumerTryWait, S.ConsumerWait, S.ConsumerWork}),
    "release": frozenset({S.ConsumerRelease}),
}
ROLE_INDEX = {r: i for i, r in enumerate(ROLES)}
SIDE_ROLES = {"producer": ("acquire", "commit"), "consumer": ("wait", "release")}

INTERLEAVE_TYPES = frozenset({PipelineType.AsyncAsync, PipelineType.AsyncUmma, PipelineType.TmaAsync,
                              PipelineType.TmaUmma, PipelineType.UmmaAsync})
TMA_TYPES = frozenset({PipelineType.TmaAsync, PipelineType.TmaUmma, PipelineType.TmaWgmma})


_WAIT, _TRY_WAIT, _RELEASE = S.ConsumerWait, S.ConsumerTryWait, S.ConsumerRelease


# --------------------------------------------------------------------------- basic queries
def entries(task, rid) -> list:
    """Lowered entries of `task` on resource `rid` (empty when the task has no schedule)."""
    low = getattr(task, "lowered", None)
    if low is None:
        return []
    return [e for e in low.entries if e.resource == rid]


def stages_of(task, rid) -> set:
    return {e.stage for e in entries(task, rid)}


def roles_of(task, rid) -> set:
    """Interleave roles `task` uses on `rid` (TS412's definition)."""
    st = stages_of(task, rid)
    return {r for r in ROLES if st & ROLE_STAGES[r]}


def committers(kernel, rid) -> list:
    """Producer tasks of `rid`: tasks that schedule `commit` on it (model.md §5.6)."""
    return [t for t in kernel.tasks if S.ProducerCommit in stages_of(t, rid)]


def releasers(kernel, rid) -> list:
    """Consumer tasks of `rid`: tasks that schedule `release` on it (model.md §5.6)."""
    return [t for t in kernel.tasks if S.ConsumerRelease in stages_of(t, rid)]


def waiters(kernel, rid) -> list:
    """Tasks that schedule `wait` or `try_wait` on `rid`."""
    return [t for t in kernel.tasks if stages_of(t, rid) & {S.ConsumerWait, S.ConsumerTryWait}]


def role_users(kernel, rid, role: str) -> list:
    return [t for t in kernel.tasks if role in roles_of(t, rid)]


def _with_group(kernel, rid) -> tuple:
    """`rid` and the PipelineGroup it belongs to (group ops count for every member)."""
    res = kernel.resources.get(rid)
    if res is not None and res.group is not None:
        return (rid, res.group)
    return (rid,)


def split_consumer_tasks(kernel, rid) -> list:
    """Tasks that wait on `rid` without releasing it (split-consumer, PAT§Split-Consumer).

    A wait or release on the resource's PipelineGroup counts as one on the member.
    """
    ids = _with_group(kernel, rid)
    out = []
    for t in kernel.tasks:
        low = getattr(t, "lowered", None)
        if low is None:
            continue
        waits = releases = False
        for e in low.entries:            # (one pass, identity tests: the checker asks per check)
            if e.resource in ids:
                stage = e.stage
                if stage is _WAIT or stage is _TRY_WAIT:
                    waits = True
                elif stage is _RELEASE:
                    releases = True
        if waits and not releases:
            out.append(t)
    return out


def split_consumer_resources(kernel) -> set:
    """Pipelined resources some task waits on without releasing (model.md §6)."""
    return {rid for rid, r in kernel.resources.items()
            if r.pipelined and not r.is_group and split_consumer_tasks(kernel, rid)}


def effective_advance_on_wait(kernel, rid):
    """`advance_on_wait` as the runtime uses it: the config's flag, turned on automatically
    for split-consumer resources (the manager's derived metadata; the config is untouched)."""
    res = kernel.resources.get(rid)
    if res is None or res.pipeline is None:
        return False
    if rid in split_consumer_resources(kernel):
        return True
    return res.pipeline.advance_on_wait


# --------------------------------------------------------------------------- strides and lanes
def strides(p):
    """(acquire, commit, wait, release) strides, or UNKNOWN if any is not a static int."""
    s = p.interleave_strides
    if isinstance(s, tuple) and len(s) == 4 and all(is_static_int(x) for x in s):
        return s
    return UNKNOWN


def role_stride(p, role: str):
    s = strides(p)
    return UNKNOWN if s is UNKNOWN else s[ROLE_INDEX[role]]


def lane_mode(task, stride):
    """How `task` owns lanes of a role with stride `stride` (model.md §5.4).

    None: not interleaved (stride 1); "warp": one warp per lane (num_warps == stride);
    "domain": the task is one lane (num_warps != stride, static int step == stride and a
    static int domain_start); "invalid": neither; UNKNOWN when an input is unknown.
    """
    if stride is UNKNOWN or task.num_warps is UNKNOWN:
        return UNKNOWN
    if stride == 1:
        return None
    if not is_static_int(task.num_warps):
        return UNKNOWN
    if task.num_warps == stride:
        return "warp"
    low = task.lowered
    if low is None:
        return UNKNOWN
    step, start = low.domain_step, low.domain_start
    if step is UNKNOWN or start is UNKNOWN:
        return UNKNOWN
    if is_static_int(step) and step == stride and is_static_int(start):
        return "domain"
    return "invalid"


def domain_lane(task, stride):
    """Lane owned by a domain-lane task (`domain_start % stride`), else None."""
    if lane_mode(task, stride) != "domain":
        return None
    return task.lowered.domain_start % stride


# --------------------------------------------------------------------------- cluster shape
def layout_kind(p) -> str:
    """"none" | "tuple" (all static ints) | "opaque" (a cute.Layout) | "unknown"."""
    lay = p.cta_layout_vmnk
    if lay is None:
        return "none"
    if lay is UNKNOWN:
        return "unknown"
    if isinstance(lay, tuple):
        return "tuple" if all(is_static_int(x) for x in lay) else "unknown"
    return "opaque" if lay == "opaque" else "unknown"


def cluster_v(p):
    return p.cluster_v if layout_kind(p) in ("none", "tuple") else UNKNOWN


def cluster_total(p):
    return p.cluster_total if layout_kind(p) in ("none", "tuple") else UNKNOWN


def tma_async_lanes_per_warp(p):
    """Arrivals per releasing warp of the stock TmaAsync consumer release (TS430/TS431).

    Layout None or fewer than 4 dims -> 1; `mcast_mode_mn` (1,0) -> N, (0,1) -> M,
    (1,1) -> M + N - 1 with M, N = cta_layout_vmnk[1], [2]. Returns UNKNOWN for unknown
    inputs and None for an invalid `mcast_mode_mn` (TS431).
    """
    kind = layout_kind(p)
    if kind == "none":
        return 1
    if kind != "tuple":
        return UNKNOWN
    lay = p.cta_layout_vmnk
    if len(lay) < 4:
        return 1
    mode = p.mcast_mode_mn
    if mode is UNKNOWN:
        return UNKNOWN
    m, n = lay[1], lay[2]
    mode = tuple(mode) if isinstance(mode, (tuple, list)) else mode
    if mode == (1, 0):
        return n
    if mode == (0, 1):
        return m
    if mode == (1, 1):
        return m + n - 1
    return None


# --------------------------------------------------------------------------- signaling
def has_flag(value, flag: SignalingThreads):
    """True/False for a SignalingThreads value, UNKNOWN for anything else."""
    if isinstance(value, SignalingThreads):
        return bool(value & flag)
    return UNKNOWN


def effective_wait_signaling(p):
    w = p.consumer_wait_signaling_threads
    return p.consumer_signaling_threads if w is None else w


# --------------------------------------------------------------------------- arrival counts
@dataclass
class Expectation:
    """What one side of a resource's barrier expects (model.md §5.6).

    `values`: the accepted sizes (TmaAsync consumers accept two); `tasks`: the tasks the
    count was derived from; `lane`: the domain lane it applies to (None: whole side);
    `formula`: a human-readable derivation for messages.
    """
    values: tuple
    tasks: list
    formula: str
    lane: Optional[int] = None
    lanes: Optional[int] = None


def _warps(tasks):
    ws = [t.num_warps for t in tasks]
    return sum(ws) if all(is_static_int(w) for w in ws) else UNKNOWN


def async_side_expectations(tasks, stride, scale, kind_label: str):
    """Expected sizes for an async-thread side (AsyncAsync / AsyncUmma producers,
    AsyncAsync / UmmaAsync consumers): W x 32 x scale, with W = 1 for warp-lane
    interleave, Σ warps per lane group for domain lanes, else Σ warps.

    Returns (list[Expectation], mixed: bool). UNKNOWN inputs give an empty list.
    """
    if stride is UNKNOWN or scale is UNKNOWN:
        return [], False
    if stride == 1:
        w = _warps(tasks)
        if w is UNKNOWN:
            return [], False
        return [Expectation((w * 32 * scale,), tasks, f"Σ task.num_warps × 32 × {kind_label}({scale})")], False
    modes = [lane_mode(t, stride) for t in tasks]
    if any(m is UNKNOWN for m in modes) or "invalid" in modes:
        return [], False     # TS412 reports invalid lanes
    if "domain" in modes and "warp" in modes:
        return [], True
    if "warp" in modes:
        return [Expectation((32 * scale,), tasks, f"interleaved effective warp × 32 × {kind_label}({scale})")], False
    out = []
    lanes: Dict[int, list] = {}
    for t in tasks:
        lanes.setdefault(domain_lane(t, stride), []).append(t)
    for lane in sorted(lanes):
        w = _warps(lanes[lane])
        out.append(Expectation((w * 32 * scale,), lanes[lane],
                               f"Σ lane task.num_warps × 32 × {kind_label}({scale})", lane, stride))
    return out, False


def tma_producer_expected(p, tasks):
    """TS422/TS423: full-barrier arrivals of a TMA producer (arrive_and_expect_tx is elect-one)."""
    commit = role_stride(p, "commit")
    if commit is UNKNOWN:
        return None
    if commit > 1:
        return Expectation((1,), tasks, "one elected thread per interleaved barrier stage")
    twl = has_flag(p.producer_signaling_threads, SignalingThreads.TaskWarpLeader)
    if twl is UNKNOWN:
        return None
    if twl:
        return Expectation((len(tasks),), tasks, "number of producer tasks (TaskWarpLeader)")
    w = _warps(tasks)
    if w is UNKNOWN:
        return None
    return Expectation((w,), tasks, "Σ producer_task.num_warps (1 elected arrival per warp)")


def tma_async_consumer_expected(p, tasks):
    """TS430: TmaAsync empty-barrier arrivals (stock lane count, or all threads)."""
    release = role_stride(p, "release")
    if release is UNKNOWN:
        return None
    if release > 1:
        return Expectation((1,), tasks, "one thread per interleaved barrier stage")
    lpw = tma_async_lanes_per_warp(p)
    w = _warps(tasks)
    if lpw is UNKNOWN or lpw is None or w is UNKNOWN:
        return None
    return Expectation((w * lpw, w * 32), tasks,
                       f"Σ consumer_task.num_warps × lanes-per-warp({lpw}) for the stock TmaAsync release, "
                       "or Σ consumer_task.num_warps × 32 for an all-thread release")


def tma_async_all_thread_release(kernel, rid):
    """Derived flag: the TmaAsync consumer_group is sized for an all-thread release
    (Σ warps × 32) rather than the stock per-warp lane count (model.md §6); used by
    code generation (TS438). UNKNOWN when it cannot be decided."""
    res = kernel.resources.get(rid)
    if res is None or res.pipeline is None or res.pipeline.pipeline_type is not PipelineType.TmaAsync:
        return False
    p = res.pipeline
    exp = tma_async_consumer_expected(p, releasers(kernel, rid))
    size = p.consumer_group_size
    if exp is None or not is_static_int(size):
        return UNKNOWN
    if len(exp.values) < 2:
        return False
    return size == exp.values[1] and size != exp.values[0]


def producer_leader_warps(kernel, rid) -> list:
    """TaskWarpLeader: the first warp of each producer (committing) task (model.md §5.5).

    Used to build the leader predicate at code generation (TS439: empty list = error).
    """
    return [t.warp_idx for t in committers(kernel, rid) if is_static_int(t.warp_idx)]


# --------------------------------------------------------------------------- leader-routed bytes
def leader_routing(kernel, rid):
    """Why a TMA resource's num_bytes must be validated with num_bytes_per_warp_per_cta.

    Returns (required: bool | UNKNOWN, leader_routed: bool | UNKNOWN, reason: str).
    `leader_routed`: some producer task runs on every CTA, the cluster has >1 CTA and the
    consumer is leader-only (release or wait signaling has CtaLeader, or a waiting task is
    `run_only_on_cta_id`). TaskWarpLeader with more producer warps than producer tasks
    also requires the declaration (TS433).
    """
    res = kernel.resources[rid]
    p = res.pipeline
    prod = committers(kernel, rid)
    total = cluster_total(p)
    routed = False
    reason = ""
    if any(t.run_only_on_cta_id is None for t in prod):
        if total is UNKNOWN:
            routed = UNKNOWN
        elif total > 1:
            leader_only = [has_flag(p.consumer_signaling_threads, SignalingThreads.CtaLeader),
                           has_flag(effective_wait_signaling(p), SignalingThreads.CtaLeader)]
            if any(v is True for v in leader_only) or any(
                    t.run_only_on_cta_id is not None and t.run_only_on_cta_id is not UNKNOWN
                    for t in waiters(kernel, rid)):
                routed = True
                reason = "multi-CTA TMA producer completions feed a leader-only consumer"
            elif any(v is UNKNOWN for v in leader_only):
                routed = UNKNOWN
    twl = has_flag(p.producer_signaling_threads, SignalingThreads.TaskWarpLeader)
    aggregates = False
    if twl is UNKNOWN:
        aggregates = UNKNOWN
    elif twl:
        w = _warps(prod)
        aggregates = UNKNOWN if w is UNKNOWN else w > len(prod)
        if aggregates is True and not reason:
            reason = "TaskWarpLeader aggregates multiple producer warps into one transaction-barrier arrive"
    if routed is True or aggregates is True:
        required = True
    elif routed is UNKNOWN or aggregates is UNKNOWN:
        required = UNKNOWN
    else:
        required = False
    return required, routed, reason


def expected_num_bytes(kernel, rid):
    """TS435: num_bytes_per_warp_per_cta × M × Σ producer warps, with M = V (TmaUmma) or
    the cluster size (TmaAsync) when leader-routed, else 1. Returns (value, M) or UNKNOWN."""
    res = kernel.resources[rid]
    p = res.pipeline
    bpw = p.num_bytes_per_warp_per_cta
    _, routed, _ = leader_routing(kernel, rid)
    w = _warps(committers(kernel, rid))
    if not is_static_int(bpw) or routed is UNKNOWN or w is UNKNOWN:
        return UNKNOWN
    if routed:
        m = cluster_v(p) if p.pipeline_type is PipelineType.TmaUmma else cluster_total(p)
    else:
        m = 1
    if m is UNKNOWN:
        return UNKNOWN
    return bpw * m * w, m


# --------------------------------------------------------------------------- Hopper: TmaWgmma
def wgmma_release_depths(task, rid) -> dict:
    """TmaWgmma (docs/hopper.md): for each `release` entry of `task` on `rid`, the number of
    stages the task still holds right after that release (waits minus releases so far).

    Codegen emits `wgmma.wait_group(depth)` before the release's arrive: with one wgmma
    commit group per waited stage, at most `depth` groups (the stages still held) may stay
    in flight, so the group reading the released stage has completed. The minimum over
    loop lengths 1..4 and both opaque-guard assignments is taken (a smaller depth only
    waits longer). Returns {entry index: depth}.
    """
    return stages_held(task, rid)[0]


def stages_held(task, rid):
    """({release entry index: stages still held after it (minimum)}, the most stages of
    `rid` the task holds at once (maximum)), over loop lengths 1..4 and every assignment of
    the task's opaque guards; waits count +1, releases -1. The flat lists come from the
    checker's shared expansion (`checker.expand.expand_task`, one tile)."""
    from ..checker.expand import expand_task, opaque_assignments
    from ..enums import OpaqueCondition
    low = getattr(task, "lowered", None)
    if low is None:
        return {}, 0
    keys = []
    for e in low.entries:
        if isinstance(e.guard, OpaqueCondition) and e.guard.key not in keys:
            keys.append(e.guard.key)
    depths: Dict[int, int] = {}
    most = 0
    for n in (1, 2, 3, 4):
        for assignment in (opaque_assignments(keys) if keys else [None]):
            held = 0
            for x in expand_task(task, opaque_assignment=assignment, n=n):
                if x.resource != rid:
                    continue
                if x.stage is S.ConsumerWait:
                    held += 1
                    most = max(most, held)
                elif x.stage is S.ConsumerRelease:
                    held = max(0, held - 1)
                    depths[x.entry.index] = min(depths.get(x.entry.index, held), held)
    return depths, most
