"""Barrier-level pipelines, one class per `PipelineType` (model.md §5).

A pipeline owns two arrays of `num_stages` mbarriers in SMEM: `full[i]` (the producer
signals that stage `i` holds data) and `empty[i]` (the consumers signal that it may be
overwritten). The classes below only know how each side *signals* for their type; the
cursors (index, phase), interleave lanes, split advancement and gating live in
`task_runner.py`, which calls these primitives with explicit stage indices.

| type          | producer signal on full[i]                  | consumer signal on empty[i]             |
|---------------|---------------------------------------------|-----------------------------------------|
| AsyncAsync    | every thread arrives (or cp.async arrive)    | every thread arrives                    |
| TmaAsync      | one elected thread per warp arms tx bytes at acquire; TMA completes | lane-based or all-thread arrive |
| TmaUmma       | as TmaAsync                                  | tcgen05.commit (elected thread)         |
| UmmaAsync     | tcgen05.commit (elected thread)              | every thread arrives                    |
| AsyncUmma     | every thread arrives (or cp.async arrive)    | tcgen05.commit (elected thread)         |
| UmmaUmma      | tcgen05.commit                               | tcgen05.commit                          |
| ClcFetchAsync | the CLC query completes the transaction      | every thread arrives                    |
| TmaWgmma      | as TmaAsync                                  | wgmma.wait_group(depth), then as TmaAsync |

Nothing here is tied to Blackwell unless a UMMA side is used: AsyncAsync and TmaAsync
pipelines emit only mbarrier / elect / TMA-compatible instructions (sm_90a and later).
"""
from __future__ import annotations

from typing import Optional

import cutlass
import cutlass.cute as cute

from ..enums import PipelineType
from .control import if_then

__all__ = [
    "TSPipeline", "TSPipelineAsyncAsync", "TSPipelineTmaAsync", "TSPipelineTmaUmma",
    "TSPipelineUmmaAsync", "TSPipelineAsyncUmma", "TSPipelineUmmaUmma", "TSPipelineClcFetchAsync",
    "TSPipelineTmaWgmma",
    "create_pipeline", "thread_count", "PIPELINE_CLASSES",
]

WARP_SIZE = 32


def thread_count(group) -> int:
    """Arrivals a `CooperativeGroup` stands for (Thread: size, Warp: size * 32)."""
    agent = getattr(getattr(group, "agent", None), "name", str(getattr(group, "agent", "Thread")))
    size = group.size
    if agent.endswith("Warp"):
        return size * WARP_SIZE
    if agent.endswith("ThreadBlock") or agent.endswith("ThreadBlockCluster"):
        raise NotImplementedError("CooperativeGroup(ThreadBlock/ThreadBlockCluster) is not supported by ts codegen")
    return size


def _op_name(op) -> str:
    if op is None:
        return "AsyncThread"
    return getattr(op, "name", str(op)).rsplit(".", 1)[-1]


def layout_tuple(cta_layout_vmnk):
    """The static shape of `cta_layout_vmnk` as a flat tuple (None -> (1, 1, 1, 1))."""
    if cta_layout_vmnk is None:
        return (1, 1, 1, 1)
    if isinstance(cta_layout_vmnk, (tuple, list)):
        return tuple(cta_layout_vmnk)
    shape = getattr(cta_layout_vmnk, "shape", None)
    if shape is not None and cute.is_static(shape):
        return tuple(cute.flatten(shape)) if isinstance(shape, tuple) else (shape,)
    raise NotImplementedError("ts codegen needs a static cta_layout_vmnk")


class TSPipeline:
    """Two arrays of mbarriers and the signalling of one pipeline type."""

    pipeline_type: Optional[PipelineType] = None

    def __init__(self, *, num_stages: int, full, empty, producer_count, consumer_count,
                 tx_count: int = 0, cta_layout_vmnk=None, producer_op=None, mcast_mode_mn=(1, 1),
                 name: str = ""):
        if not isinstance(num_stages, int) or num_stages <= 0:
            raise ValueError(f"num_stages must be a positive int, got {num_stages!r}")
        self.num_stages = num_stages
        self.full_base = full
        self.empty_base = empty
        self.producer_count = producer_count
        self.consumer_count = consumer_count
        self.tx_count = tx_count
        self.cta_shape = layout_tuple(cta_layout_vmnk)
        self.cta_layout_vmnk = cta_layout_vmnk
        self.producer_op = _op_name(producer_op)
        self.mcast_mode_mn = tuple(mcast_mode_mn) if mcast_mode_mn is not None else (1, 1)
        self.name = name
        # Set by the setup code from the kernel model (see runtime.py).
        self.consumer_release_mode = "all"   # "all" | "lane" (TmaAsync stock signalling)

    # ---------------------------------------------------------------- barriers
    @property
    def cluster_size(self) -> int:
        n = 1
        for x in self.cta_shape:
            n *= x
        return n

    def full(self, index):
        return self.full_base + index

    def empty(self, index):
        return self.empty_base + index

    def init_barriers(self):
        """Warp 0, one elected thread, initialises every full/empty barrier."""
        init_mbarriers([(self.full_base, self.num_stages, self.producer_count),
                        (self.empty_base, self.num_stages, self.consumer_count)])

    # ---------------------------------------------------------------- primitives
    def try_wait_empty(self, index, phase):
        return cute.arch.mbarrier_try_wait(self.empty(index), phase)

    def wait_empty(self, index, phase):
        cute.arch.mbarrier_wait(self.empty(index), phase)

    def try_wait_full(self, index, phase):
        return cute.arch.mbarrier_try_wait(self.full(index), phase)

    def wait_full(self, index, phase):
        cute.arch.mbarrier_wait(self.full(index), phase)

    @property
    def arms_on_acquire(self) -> bool:
        """TMA and CLC producers arm the full barrier with the transaction bytes at acquire."""
        return self.pipeline_type is not None and self.pipeline_type.producer_kind in ("tma", "clc")

    def arm_full(self, index, tx_count=None):
        """One elected thread of the calling warp: arrive on full[index] expecting tx bytes.
        CLC in a cluster: lane r arms CTA r's barrier (the response is multicast)."""
        tx = self.tx_count if tx_count is None else tx_count
        if self.pipeline_type is PipelineType.ClcFetchAsync and self.cluster_size > 1:
            lane = cute.arch.lane_idx()
            if_then(lane < self.cluster_size,
                    lambda: cute.arch.mbarrier_arrive_and_expect_tx(self.full(index), tx, lane))
            return
        with cute.arch.elect_one():
            cute.arch.mbarrier_arrive_and_expect_tx(self.full(index), tx)

    def signal_full(self, index):
        """The producer's commit signal on full[index]."""
        kind = self.pipeline_type.producer_kind
        if kind == "async":
            if self.producer_op == "AsyncLoad":
                cute.arch.cp_async_mbarrier_arrive_noinc(self.full(index))
            else:
                cute.arch.mbarrier_arrive(self.full(index))
        elif kind == "umma":
            umma_commit(self.full(index))
        # tma / clc: the hardware completes the transaction; nothing to signal

    def signal_empty(self, index):
        """The consumer's release signal on empty[index]."""
        if self.pipeline_type.consumer_kind == "umma":
            umma_commit(self.empty(index))
            return
        if self.pipeline_type is PipelineType.ClcFetchAsync and self.cluster_size > 1:
            cute.arch.mbarrier_arrive(self.empty(index), 0)    # the scheduler runs in CTA 0
            return
        if self.consumer_release_mode == "all":
            cute.arch.mbarrier_arrive(self.empty(index))
            return
        # stock TmaAsync signalling: lane l < cluster size arrives on CTA rank l's barrier
        lane = cute.arch.lane_idx()
        if self.cluster_size == 1:
            if_then(lane == 0, lambda: cute.arch.mbarrier_arrive(self.empty(index)))
            return
        pred, dst = _multicast_signal(self.cta_shape, self.mcast_mode_mn, lane)
        if_then(pred, lambda: cute.arch.mbarrier_arrive(self.empty(index), dst))

    # ---------------------------------------------------------------- cutlass-style API
    def producer_try_acquire(self, state):
        return self.try_wait_empty(state.index, state.phase)

    def producer_acquire(self, state, try_acquire_token=None):
        _maybe_wait(try_acquire_token, lambda: self.wait_empty(state.index, state.phase))
        if self.arms_on_acquire:
            self.arm_full(state.index)

    def producer_commit(self, state):
        self.signal_full(state.index)

    def consumer_try_wait(self, state):
        return self.try_wait_full(state.index, state.phase)

    def consumer_wait(self, state, try_wait_token=None):
        _maybe_wait(try_wait_token, lambda: self.wait_full(state.index, state.phase))

    def consumer_release(self, state):
        self.signal_empty(state.index)

    def producer_get_barrier(self, state):
        return self.full(state.index)

    def consumer_get_barrier(self, state):
        return self.empty(state.index)

    def producer_tail(self, state):
        """Waits until the consumers released every stage (no arrival left in flight)."""
        for _ in range(self.num_stages):
            self.wait_empty(state.index, state.phase)
            state.advance()

    # ---------------------------------------------------------------- factory
    @classmethod
    def create(cls, *, num_stages, producer_group, consumer_group, barrier_storage=None, tx_count=0,
               cta_layout_vmnk=None, producer_op=None, mcast_mode_mn=(1, 1), defer_sync=False,
               is_task_warp_leader=None, name=""):
        """Builds the pipeline on `barrier_storage` (2 * num_stages mbarriers) and
        initialises the barriers; unless `defer_sync`, fences and syncs the CTA."""
        if barrier_storage is None:
            from .smem import mbarrier_ptr, smem_array
            barrier_storage = mbarrier_ptr(smem_array(cutlass.Int64, 2 * num_stages, 8))
        pipe = cls(num_stages=num_stages, full=barrier_storage, empty=barrier_storage + num_stages,
                   producer_count=thread_count(producer_group), consumer_count=thread_count(consumer_group),
                   tx_count=tx_count, cta_layout_vmnk=cta_layout_vmnk, producer_op=producer_op,
                   mcast_mode_mn=mcast_mode_mn, name=name)
        pipe.is_task_warp_leader = is_task_warp_leader
        pipe.init_barriers()
        if not defer_sync:
            cute.arch.mbarrier_init_fence()
            cute.arch.sync_threads()
        return pipe


class TSPipelineAsyncAsync(TSPipeline):
    pipeline_type = PipelineType.AsyncAsync


class TSPipelineTmaAsync(TSPipeline):
    """TMA producer, thread consumers. With TaskWarpLeader, every producer warp waits on
    `empty` but only the task's leader warp arms `full` (the runner passes the predicate)."""
    pipeline_type = PipelineType.TmaAsync

    def producer_acquire(self, state, try_acquire_token=None, is_task_warp_leader=None):
        _maybe_wait(try_acquire_token, lambda: self.wait_empty(state.index, state.phase))
        leader = getattr(self, "is_task_warp_leader", None) if is_task_warp_leader is None else is_task_warp_leader
        if leader is None:
            self.arm_full(state.index)
        else:
            if_then(leader, lambda: self.arm_full(state.index))


class TSPipelineTmaWgmma(TSPipelineTmaAsync):
    """Hopper (ts extension, docs/hopper.md): TMA producer as TmaAsync; the consumer is a
    wgmma warpgroup whose reads of a stage are asynchronous. Before a release arrives on
    `empty`, every thread of the releasing task runs `wgmma.wait_group(depth)`, with
    `depth` = the stages the task still holds after this release
    (`model.derive.wgmma_release_depths`): the wgmma group that read the released stage
    has then completed (one commit group per waited stage)."""
    pipeline_type = PipelineType.TmaWgmma

    def before_release(self, emitter, entry):
        depths = getattr(emitter, "_ts_wgmma_depths", None)
        if depths is None:
            depths = emitter._ts_wgmma_depths = {}
        key = entry.resource
        if key not in depths:
            from ..model import derive
            depths[key] = derive.wgmma_release_depths(emitter.model, key)
        cute.nvgpu.warpgroup.wait_group(depths[key].get(entry.index, 0))


class TSPipelineTmaUmma(TSPipeline):
    pipeline_type = PipelineType.TmaUmma


class TSPipelineUmmaAsync(TSPipeline):
    pipeline_type = PipelineType.UmmaAsync


class TSPipelineAsyncUmma(TSPipeline):
    pipeline_type = PipelineType.AsyncUmma


class TSPipelineUmmaUmma(TSPipeline):
    pipeline_type = PipelineType.UmmaUmma


class TSPipelineClcFetchAsync(TSPipeline):
    pipeline_type = PipelineType.ClcFetchAsync


PIPELINE_CLASSES = {
    PipelineType.AsyncAsync: TSPipelineAsyncAsync,
    PipelineType.TmaAsync: TSPipelineTmaAsync,
    PipelineType.TmaUmma: TSPipelineTmaUmma,
    PipelineType.UmmaAsync: TSPipelineUmmaAsync,
    PipelineType.AsyncUmma: TSPipelineAsyncUmma,
    PipelineType.UmmaUmma: TSPipelineUmmaUmma,
    PipelineType.ClcFetchAsync: TSPipelineClcFetchAsync,
    PipelineType.TmaWgmma: TSPipelineTmaWgmma,
}


# --------------------------------------------------------------------------- helpers
def init_mbarriers(groups):
    """[(base pointer, count, arrive count)]: warp 0, one elected thread, inits them all."""
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())

    def body():
        with cute.arch.elect_one():
            for base, n, arrivals in groups:
                for i in range(n):
                    cute.arch.mbarrier_init(base + i, arrivals)
    if_then(warp == 0, body)


def umma_commit(ptr):
    """tcgen05.commit of the calling thread's prior MMAs onto `ptr` (one elected thread)."""
    with cute.arch.elect_one():
        cute.nvgpu.tcgen05.commit(ptr)


def _maybe_wait(token, wait):
    if token is None:
        wait()
        return
    from .control import logical_not
    if_then(logical_not(token), wait)


def _multicast_signal(cta_shape, mcast_mode_mn, lane):
    """Stock TmaAsync consumer signalling in a cluster: lane l (< cluster size) arrives on
    CTA rank l's empty barrier when that CTA shares this CTA's row (m) or column (n)
    multicast. Returns (predicate, destination rank)."""
    layout = cute.make_layout(tuple(cta_shape))
    size = 1
    for x in cta_shape:
        size *= x
    me = cute.arch.make_warp_uniform(cute.arch.block_idx_in_cluster())
    dst = lane % size
    dst_c = layout.get_hier_coord(dst)
    cur_c = layout.get_hier_coord(me)
    same_m = (dst_c[0] == cur_c[0]) & (dst_c[1] == cur_c[1]) & (dst_c[3] == cur_c[3])
    same_n = (dst_c[0] == cur_c[0]) & (dst_c[2] == cur_c[2]) & (dst_c[3] == cur_c[3])
    if tuple(mcast_mode_mn) == (1, 0):
        share = same_m
    elif tuple(mcast_mode_mn) == (0, 1):
        share = same_n
    else:
        share = same_m | same_n
    return (lane < size) & share, dst


def create_pipeline(resource, cfg):
    """`MemoryResource.create_pipeline`: the pipeline object for `cfg` on the barrier
    storage the allocator assigned (or a private SMEM array when none was assigned).
    Barriers are initialised here; the kernel fences and syncs after setup."""
    from .smem import mbarrier_ptr, smem_array
    cls = PIPELINE_CLASSES[cfg.pipeline_type]
    S = cfg.num_stages
    ptr = cfg.barrier_ptr
    if ptr is None:
        ptr = mbarrier_ptr(smem_array(cutlass.Int64, 2 * S, 8))
    op = cfg.async_producer_op if cfg.pipeline_type.producer_kind == "async" and \
        cfg.pipeline_type is PipelineType.AsyncAsync else cfg.umma_consumer_producer_op
    pipe = cls(num_stages=S, full=ptr, empty=ptr + S,
               producer_count=thread_count(cfg.producer_group), consumer_count=thread_count(cfg.consumer_group),
               tx_count=cfg.num_bytes or 0, cta_layout_vmnk=cfg.cta_layout_vmnk, producer_op=op,
               mcast_mode_mn=cfg.mcast_mode_mn, name=getattr(resource, "name", ""))
    pipe.init_barriers()
    return pipe
