"""`TaskManager.setup_resources_and_tasks()` and `TaskManager.run()` at kernel time.

setup: allocate the unified SMEM block (when an `SmemAllocator` is attached), hand out
barrier storage, build the `ResourceContext`, `create()` every resource (pipelines and
groups initialise their mbarriers from warp 0; the kernel then fences and syncs, as in
the tutorials' lifecycle), and decide per pipeline how consumers signal a release.

run: every warp evaluates every task's predicate; the warps in a task's range (and the
CTA rank given by `run_only_on_cta_id`) set their register budget (`setmaxnreg`) and run
the task's lowered schedule (`task_runner.py`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import cutlass
import cutlass.cute as cute

from ..enums import PipelineGroupMode, PipelineType
from ..memory import ResourceContext
from ..model import derive
from ..model.registers import default_registers
from ..model.values import UNKNOWN, is_static_int
from .control import if_then, logical_and, unsupported


@dataclass
class KernelContext:
    """What setup hands to the task runner."""
    manager: Any
    kernel: Any                      # KernelModel
    objects: dict                    # rid -> live resource object
    context: Optional[ResourceContext] = None
    default_registers: Any = None
    notes: list = field(default_factory=list)


def _live_objects(tm) -> dict:
    """rid -> live object for every resource the kernel model knows (groups, members too)."""
    out: dict = dict(getattr(tm, "_objects", {}))
    pending = list(out.values())
    for t in tm.tasks:
        pending += list(t.src_resources) + list(t.dst_resources)
        sched = getattr(t, "schedule", None)
        if sched is not None:
            pending += list(sched.objects.values())
    seen = set()
    while pending:
        o = pending.pop()
        if o is None or id(o) in seen:
            continue
        seen.add(id(o))
        out[id(o)] = o
        g = getattr(o, "pipeline_group", None)
        if g is not None:
            pending.append(g)
        pending += list(getattr(o, "members", None) or ())
    return {rid: o for rid, o in out.items() if rid in tm.kernel.resources}


def _creation_order(tm, objects) -> list:
    """Resources in a stable order: task src/dst order, then schedule objects."""
    order, seen = [], set()

    def add(o):
        if o is not None and id(o) not in seen and id(o) in objects:
            seen.add(id(o))
            order.append(o)
    for t in tm.tasks:
        for o in list(t.src_resources) + list(t.dst_resources):
            add(getattr(o, "pipeline_group", None))
            add(o)
    for o in objects.values():
        add(getattr(o, "pipeline_group", None))
        add(o)
    return order


def _release_mode(kernel, rid, pipe) -> str:
    """How an async consumer of `rid` signals empty: "all" threads or one "lane" per warp."""
    res = kernel.resources.get(rid)
    if res is None or res.pipeline is None:
        return "all"
    p = res.pipeline
    if p.pipeline_type is PipelineType.TmaAsync and not res.is_group:
        flag = derive.tma_async_all_thread_release(kernel, rid)
        if flag is True:
            return "all"
        if flag is False:
            return "lane"
    # groups / unknown: compare the barrier's arrival count with the releasing threads
    rel = derive.releasers(kernel, rid)
    warps = sum(t.num_warps for t in rel) if all(is_static_int(t.num_warps) for t in rel) else None
    stride = derive.role_stride(p, "release")
    if stride is not UNKNOWN and stride > 1:
        warps = 1
    if warps and pipe.consumer_count == warps * 32:
        return "all"
    if p.pipeline_type.producer_kind == "tma" and pipe.consumer_count != (warps or 0) * 32:
        return "lane"
    return "all"


def setup_resources_and_tasks(tm):
    kernel = tm.kernel
    objects = _live_objects(tm)
    alloc = tm.smem_allocator
    smem_base = None
    if alloc is not None:
        if not alloc._laid_out:
            alloc.compute_layout()
        smem_base = alloc.allocate()
        alloc.assign_barrier_ptrs()
    tmem_ptr = tm.tmem_ptr_i32
    if tmem_ptr is None and alloc is not None and alloc.tmem_ptr_alloc is not None:
        tmem_ptr = alloc.get_as_type(alloc.tmem_ptr_alloc, cutlass.Int32, 1)
    ctx = KernelContext(tm, kernel, objects, ResourceContext(smem_base=smem_base, tmem_ptr_i32=tmem_ptr),
                        default_registers(kernel))
    from . import work_queue as wqmod
    _check_agents(kernel)
    for obj in _creation_order(tm, objects):
        object.__setattr__(obj, "_ts_smem_allocator", alloc)
        try:
            obj.create()
        except NotImplementedError as exc:
            if getattr(exc, "diagnostics", None):
                raise
            res = kernel.resources.get(id(obj))
            p = res.pipeline if res is not None else None
            unsupported(f"'{getattr(obj, 'name', type(obj).__name__)}': {exc}",
                        p.range if p is not None else (res.range if res is not None else None))
        if wqmod.is_clc(obj):
            wqmod.response_ptr(obj)       # allocate the response slots here, at the top level
    # consumer release signalling, per pipeline (groups: their shared empty barrier)
    for rid, res in kernel.resources.items():
        obj = objects.get(rid)
        if obj is None or res.pipeline is None:
            continue
        if res.is_group:
            first = obj.members[0].pipeline if obj.members else None
            if first is not None and obj.mode is not PipelineGroupMode.Fork:
                mode = _release_mode(kernel, rid, first)
                for m in obj.members:
                    m.pipeline.consumer_release_mode = mode
            continue
        pipe = getattr(obj, "pipeline", None)
        if pipe is None or not hasattr(pipe, "consumer_release_mode"):
            continue
        _check_task_warp_leader(kernel, rid, res)
        group = getattr(obj, "pipeline_group", None)
        if group is not None and group.mode is not PipelineGroupMode.Fork:
            continue        # released through the group
        pipe.consumer_release_mode = _release_mode(kernel, rid, pipe)
        _check_all_thread_release(res, pipe)
    tm._ts_codegen = ctx
    return ctx


def _check_agents(kernel):
    """TS906: cooperative groups of a whole CTA / cluster have no arrival count here."""
    for res in kernel.resources.values():
        p = res.pipeline
        if p is None or res.is_group:
            continue
        for side in ("producer", "consumer"):
            agent = str(getattr(p, f"{side}_agent", "Thread"))
            if agent.endswith(("ThreadBlock", "ThreadBlockCluster")):
                unsupported(f"'{res.label}': CooperativeGroup(Agent.{agent.rsplit('.', 1)[-1]}) is not supported "
                            "by ts codegen (use Agent.Thread or Agent.Warp)", p.at(f"{side}_group"))


def _check_task_warp_leader(kernel, rid, res):
    """TS439: a TaskWarpLeader pipeline needs a committing producer task to lead."""
    from ..enums import SignalingThreads
    flags = res.pipeline.producer_signaling_threads
    if isinstance(flags, SignalingThreads) and flags & SignalingThreads.TaskWarpLeader \
            and not derive.producer_leader_warps(kernel, rid):
        from ..diagnostics import raise_finding
        raise_finding("TS439", ValueError, f"TaskWarpLeader pipeline of '{res.label}' did not derive any producer "
                      "warp leader index (no task commits it)",
                      res.pipeline.at("producer_signaling_threads"))


def _check_all_thread_release(res, pipe):
    """TS438: a TmaAsync all-thread consumer release needs Thread groups on both sides."""
    p = res.pipeline
    if p.pipeline_type is PipelineType.TmaAsync and pipe.consumer_release_mode == "all" \
            and (p.producer_agent != "Thread" or p.consumer_agent != "Thread"):
        from ..diagnostics import raise_finding
        raise_finding("TS438", ValueError, f"'{res.label}': all-thread consumer release requires Thread "
                      "producer/consumer groups", p.at("consumer_group" if p.consumer_agent != "Thread"
                                                       else "producer_group"))


def _warp_predicate(warp, start: int, num: int):
    if start == 0:
        return warp < num
    return logical_and(warp >= start, warp < start + num)


def set_registers(task_model, default):
    """`setmaxnreg` towards the task's `num_registers` (nothing when it equals the default)."""
    regs = task_model.num_registers
    if regs is None or not is_static_int(regs) or not is_static_int(default) or regs == default:
        return
    if regs > default:
        cute.arch.setmaxregister_increase(regs)
    else:
        cute.arch.setmaxregister_decrease(regs)


def run_tasks(tm):
    ctx = getattr(tm, "_ts_codegen", None)
    if ctx is None:
        raise RuntimeError("setup_resources_and_tasks() must run before run()")
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    for task in tm.tasks:
        m = task.model
        if not (is_static_int(m.warp_idx) and is_static_int(m.num_warps)):
            unsupported(f"Task '{task.name}': warp_idx and num_warps must be Python ints for codegen "
                        "(the warp ranges select the task's role at trace time)",
                        m.at("warp_idx" if not is_static_int(m.warp_idx) else "num_warps"))
        pred = _warp_predicate(warp, m.warp_idx, m.num_warps)
        if m.run_only_on_cta_id is not None:
            rank = cute.arch.make_warp_uniform(cute.arch.block_idx_in_cluster())
            pred = logical_and(pred, rank == m.run_only_on_cta_id)

        def body(task=task):
            set_registers(task.model, ctx.default_registers)
            task._ts_ctx = ctx
            task._ts_warp = warp
            task.run()
        saved = _carried_state(ctx.objects)
        if_then(pred, body)
        _restore_carried_state(saved)


def _carried_state(objects) -> list:
    """The traced fields of every live resource, before a task's warp-selected region.

    A work method that writes through `self` inside a runtime `if` / `for` has the DSL
    carry the resource and write the region's results back onto the object: after the
    task's region those fields hold values defined inside it, which the next task (another
    region) may not use. Each task starts from the values the resources had before."""
    from .carry import _carried_fields
    return [(o, _carried_fields(o)) for o in objects.values()]


def _restore_carried_state(saved) -> None:
    for o, fields in saved:
        for name, value in fields:
            if getattr(o, name, None) is not value:
                object.__setattr__(o, name, value)
