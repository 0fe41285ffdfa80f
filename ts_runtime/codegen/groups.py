"""PipelineGroup barriers (model.md §5.7).

Layout of a group's barrier block (`S` = num_stages, `N` members):

    Merge      [full_0 x S] ... [full_{N-1} x S] [shared_empty x S]
    Fork       [shared_full x S] [empty_0 x S] ... [empty_{N-1} x S]
    FusedMerge [shared_full x S] [shared_empty x S]

Each member gets its own pipeline object (of its own type) whose `full` / `empty`
arrays point into the block, so member operations need no special casing; the
collapsed operation (Merge/FusedMerge release, Fork commit, FusedMerge wait) is
emitted by the task runner on the first member's pipeline, which sees the shared side.
Arrival counts: a member's own side keeps the member's count; the shared side counts
the collapsed side once (Merge consumer, Fork producer) or the sum of the members'
producers (FusedMerge full).
"""
from __future__ import annotations

from ..enums import PipelineGroupMode
from .pipelines import PIPELINE_CLASSES, init_mbarriers, thread_count


def _op(cfg):
    from ..enums import PipelineType
    if cfg.pipeline_type is PipelineType.AsyncAsync:
        return cfg.async_producer_op
    return cfg.umma_consumer_producer_op


def create_group(group):
    members = list(group.members)
    cfgs = [m.pipeline_config for m in members]
    if any(c is None for c in cfgs):
        raise ValueError(f"PipelineGroup '{group.name}': every member needs a pipeline_config")
    S = cfgs[0].num_stages
    N = len(members)
    mode = group.mode
    ptr = getattr(group, "_ts_barrier_ptr", None)
    if ptr is None and group.pipeline_config is not None:
        ptr = group.pipeline_config.barrier_ptr
    if ptr is None:
        # as the reference: a group's barriers live where its SmemAllocator placed them (or
        # at an explicit `barrier_ptr`); a manager without an allocator cannot create them
        from ..diagnostics import raise_finding
        raise_finding("TS473", RuntimeError, f"PipelineGroup '{group.name}' barrier_ptr not set: register the "
                      "group with SmemAllocator.add_pipeline_group() and pass the allocator to the "
                      "TaskManager (smem_allocator=) before setup_resources_and_tasks() creates its barriers",
                      getattr(group, "_ts_range", None))
    prod = [thread_count(c.producer_group) for c in cfgs]
    cons = [thread_count(c.consumer_group) for c in cfgs]
    inits = []
    if mode is PipelineGroupMode.Merge:
        shared_empty = ptr + N * S
        fulls = [ptr + i * S for i in range(N)]
        empties = [shared_empty] * N
        inits += [(fulls[i], S, prod[i]) for i in range(N)]
        inits.append((shared_empty, S, cons[0]))
    elif mode is PipelineGroupMode.Fork:
        shared_full = ptr
        fulls = [shared_full] * N
        empties = [ptr + (1 + i) * S for i in range(N)]
        inits.append((shared_full, S, prod[0]))
        inits += [(empties[i], S, cons[i]) for i in range(N)]
    else:  # FusedMerge
        shared_full, shared_empty = ptr, ptr + S
        fulls, empties = [shared_full] * N, [shared_empty] * N
        inits += [(shared_full, S, sum(prod)), (shared_empty, S, cons[0])]
    for i, (m, c) in enumerate(zip(members, cfgs)):
        cls = PIPELINE_CLASSES[c.pipeline_type]
        pipe = cls(num_stages=S, full=fulls[i], empty=empties[i], producer_count=prod[i], consumer_count=cons[i],
                   tx_count=c.num_bytes or 0, cta_layout_vmnk=c.cta_layout_vmnk, producer_op=_op(c),
                   mcast_mode_mn=c.mcast_mode_mn, name=m.name)
        m.pipeline = pipe
    group.pipeline = members[0].pipeline
    init_mbarriers(inits)
