"""Feature kernel: a warp-lane interleaved AsyncAsync pipeline (interleave_stride=2).

A 2-warp producer task and a 2-warp consumer task share one 4-stage SMEM ring. With
`interleave_stride=2` each warp is a lane: warp L of either task only touches stages
L, L + 2, so producer warp L and consumer warp L form an independent 2-stage pipeline.
Every iteration i, producer warp L writes `100 * i + 10 * L + lane` into its stage; the
consumer warp of the same lane copies it to `out[i, L, lane]`. The producer uses
`try_acquire` and the consumer `try_wait`; with `advance_on_acquire` the producer's
cursor moves at acquire and its commit uses a separate cursor (model.md §5.3).
"""
from dataclasses import dataclass, field

import cutlass
import cutlass.cute as cute

from ts_runtime import consumer_work, domain_loop, producer_work, schedule
from ts_runtime.memory import SmemAllocation, SmemAllocator
from ts_runtime.pipeline import Agent, CooperativeGroup
from ts_runtime.resources import MemoryResource, PipelineConfig, StageInfo, TaskLocalVariable
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager

STAGES = 4


@dataclass(kw_only=True)
class Ring(MemoryResource):
    value: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    alloc: cutlass.Constexpr[SmemAllocation] = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.value = TaskLocalVariable(dtype=cutlass.Int32, default=cutlass.Int32(0))
        self.alloc = SmemAllocation("ring", dtype=cutlass.Int32, count=STAGES * 32, alignment=128)

    def get_smem_requirements(self):
        return [self.alloc]

    @cute.jit
    def _slot(self, stage_info: StageInfo):
        base = stage_info.context.smem_base.data_ptr() + self.alloc.offset
        ptr = cute.make_ptr(cutlass.Int32, base.to_llvm_ptr(), assumed_align=128)
        return cute.make_tensor(ptr + stage_info.stage_idx * 32, cute.make_layout(32))

    @producer_work
    @cute.jit
    def fill(self, stage_info: StageInfo) -> None:
        warp = cute.arch.make_warp_uniform(cute.arch.warp_idx()) % 2
        lane = cute.arch.lane_idx()
        self._slot(stage_info)[lane] = cutlass.Int32(stage_info.loop_offset) * 100 + warp * 10 + lane

    @consumer_work(returns=value)
    @cute.jit
    def read(self, stage_info: StageInfo) -> cutlass.Int32:
        return self._slot(stage_info)[cute.arch.lane_idx()]


@dataclass(kw_only=True)
class Out(MemoryResource):
    out: cute.Tensor = None

    @producer_work
    @cute.jit
    def store(self, stage_info: StageInfo, value: cutlass.Int32) -> None:
        warp = cute.arch.make_warp_uniform(cute.arch.warp_idx()) % 2
        self.out[stage_info.loop_offset, warp, cute.arch.lane_idx()] = value


def make_task_manager(*, num_iters, advance_on_acquire=False, out=None, verbose=False):
    ring = Ring(name="ring", pipeline_config=PipelineConfig.create_async_async_pipeline_cfg(
        num_stages=STAGES, producer_group=CooperativeGroup(Agent.Thread, 32),
        consumer_group=CooperativeGroup(Agent.Thread, 32), cta_layout_vmnk=(1, 1, 1, 1),
        interleave_stride=2, advance_on_acquire=advance_on_acquire))
    dst = Out(name="dst", out=out)
    alloc = SmemAllocator()
    alloc.add_resource(ring)
    alloc.compute_layout()

    @schedule
    def produce(ring: Ring) -> None:
        with domain_loop(0, num_iters, 1):
            ring.try_acquire()
            ring.acquire()
            ring.fill()
            ring.commit()

    @schedule
    def consume(ring: Ring, dst: Out) -> None:
        with domain_loop(0, num_iters, 1):
            ring.try_wait()
            ring.wait()
            v = ring.read()
            ring.release()
            dst.store(v)

    tasks = [
        Task(name="Consumer", src_resources=[ring], dst_resources=[dst], warp_idx=0, num_warps=2,
             schedule=consume(ring, dst)),
        Task(name="Producer", src_resources=[], dst_resources=[ring], warp_idx=2, num_warps=2,
             schedule=produce(ring)),
    ]
    return TaskManager(tasks=tasks, resource_dependency_graph={dst: [ring]}, smem_allocator=alloc,
                       verbose=verbose)


def build():
    return make_task_manager(num_iters=6)


@cute.kernel
def interleave_kernel(out: cute.Tensor, num_iters: cutlass.Int32, advance_on_acquire: cutlass.Constexpr):
    tm = make_task_manager(num_iters=num_iters, advance_on_acquire=advance_on_acquire, out=out)
    tm.setup_resources_and_tasks()
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    tm.run()


@cute.jit
def interleave(out: cute.Tensor, num_iters: cutlass.Int32, stream, advance_on_acquire: cutlass.Constexpr = False):
    interleave_kernel(out, num_iters, advance_on_acquire).launch(grid=(1, 1, 1), block=(128, 1, 1),
                                                                 stream=stream)


def compile_fake():
    from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream
    out = make_fake_compact_tensor(cutlass.Int32, (64, 2, 32), stride_order=(2, 1, 0))
    return cute.compile(interleave, out, cutlass.Int32(64), make_fake_stream(), True)


def run_on_gpu(num_iters=1000, advance_on_acquire=False) -> dict:
    import torch
    from cutlass.cute.runtime import from_dlpack
    from cutlass.torch import current_stream
    out = torch.full((num_iters, 2, 32), -1, dtype=torch.int32, device="cuda")
    out_c = from_dlpack(out, assumed_align=16)
    stream = current_stream()
    compiled = cute.compile(interleave, out_c, cutlass.Int32(num_iters), stream, advance_on_acquire)
    compiled(out_c, cutlass.Int32(num_iters), stream)
    torch.cuda.synchronize()
    i = torch.arange(num_iters, device="cuda", dtype=torch.int32)[:, None, None]
    w = torch.arange(2, device="cuda", dtype=torch.int32)[None, :, None]
    lane = torch.arange(32, device="cuda", dtype=torch.int32)[None, None, :]
    bad = int((out != i * 100 + w * 10 + lane).sum())
    return {"ok": bad == 0, "mismatches": bad}
