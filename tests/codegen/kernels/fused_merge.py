"""Feature kernel: a FusedMerge pipeline group (two thread producers, one consumer).

Warp 4 copies a row strip of A and warp 5 one of B into their own SMEM rings; both
commit onto one shared full barrier (64 arrivals), and the add task (warps 0-3) waits
once on the group, reads both members and releases once: C = A + B.
"""
from dataclasses import dataclass, field

import cutlass
import cutlass.cute as cute

from ts_runtime import consumer_work, domain_loop, producer_work, schedule
from ts_runtime.enums import PipelineGroupMode
from ts_runtime.memory import SmemAllocation, SmemAllocator
from ts_runtime.pipeline import Agent, CooperativeGroup
from ts_runtime.pipeline_group import PipelineGroup
from ts_runtime.resources import MemoryResource, PipelineConfig, StageInfo, TaskLocalVariable
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager

TILE_COLS = 128
DTYPE = cutlass.Float16
STAGES = 2


@dataclass(kw_only=True)
class Strip(MemoryResource):
    src: cute.Tensor = None
    value: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    alloc: cutlass.Constexpr[SmemAllocation] = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.value = TaskLocalVariable(dtype=DTYPE, default=DTYPE(0))
        self.alloc = SmemAllocation(f"{self.name}_data", dtype=DTYPE, count=STAGES * TILE_COLS, alignment=128)

    def get_smem_requirements(self):
        return [self.alloc]

    @cute.jit
    def _stage(self, stage_info: StageInfo):
        base = stage_info.context.smem_base.data_ptr() + self.alloc.offset
        ptr = cute.make_ptr(DTYPE, base.to_llvm_ptr(), assumed_align=128)
        return cute.make_tensor(ptr + stage_info.stage_idx * TILE_COLS, cute.make_layout(TILE_COLS))

    @producer_work
    @cute.jit
    def copy_in(self, stage_info: StageInfo) -> None:
        bx, _, _ = cute.arch.block_idx()
        lane = cute.arch.lane_idx()
        t = self._stage(stage_info)
        for i in cutlass.range_constexpr(TILE_COLS // 32):
            t[lane + 32 * i] = self.src[stage_info.loop_offset, bx * TILE_COLS + lane + 32 * i]

    @consumer_work(returns=value)
    @cute.jit
    def read(self, stage_info: StageInfo):
        tx, _, _ = cute.arch.thread_idx()
        return self._stage(stage_info)[tx]


@dataclass(kw_only=True)
class Out(MemoryResource):
    dst: cute.Tensor = None

    @producer_work
    @cute.jit
    def store(self, stage_info: StageInfo, a: cutlass.Float16, b: cutlass.Float16) -> None:
        bx, _, _ = cute.arch.block_idx()
        tx, _, _ = cute.arch.thread_idx()
        self.dst[stage_info.loop_offset, bx * TILE_COLS + tx] = a + b


def _cfg():
    return PipelineConfig.create_async_async_pipeline_cfg(
        num_stages=STAGES, producer_group=CooperativeGroup(Agent.Thread, 32),
        consumer_group=CooperativeGroup(Agent.Thread, 128), cta_layout_vmnk=(1, 1, 1, 1))


def make_task_manager(*, num_rows, a=None, b=None, c=None, verbose=False):
    sa = Strip(name="sa", src=a, pipeline_config=_cfg())
    sb = Strip(name="sb", src=b, pipeline_config=_cfg())
    ab = PipelineGroup(name="ab", members=[sa, sb], mode=PipelineGroupMode.FusedMerge)
    out = Out(name="out", dst=c)
    alloc = SmemAllocator()
    alloc.add_resource(sa)
    alloc.add_resource(sb)
    alloc.add_pipeline_group(ab)
    alloc.compute_layout()

    @schedule
    def load(s: Strip) -> None:
        with domain_loop(0, num_rows, 1):
            s.acquire()
            s.copy_in()
            s.commit()

    @schedule
    def add(sa: Strip, sb: Strip, ab: PipelineGroup, out: Out) -> None:
        with domain_loop(0, num_rows, 1):
            ab.try_wait()
            ab.wait()
            x = sa.read()
            y = sb.read()
            ab.release()
            out.store(a=x, b=y)

    tasks = [
        Task(name="Add", src_resources=[sa, sb], dst_resources=[out], warp_idx=0, num_warps=4,
             schedule=add(ab.sa, ab.sb, ab, out)),
        Task(name="LoadA", src_resources=[], dst_resources=[sa], warp_idx=4, num_warps=1, schedule=load(ab.sa)),
        Task(name="LoadB", src_resources=[], dst_resources=[sb], warp_idx=5, num_warps=1, schedule=load(ab.sb)),
    ]
    return TaskManager(tasks=tasks, resource_dependency_graph={out: [sa, sb]}, smem_allocator=alloc,
                       verbose=verbose)


def build():
    return make_task_manager(num_rows=3)


@cute.kernel
def fm_kernel(a: cute.Tensor, b: cute.Tensor, c: cute.Tensor):
    tm = make_task_manager(num_rows=a.shape[0], a=a, b=b, c=c)
    tm.setup_resources_and_tasks()
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    tm.run()


@cute.jit
def fused_merge(a: cute.Tensor, b: cute.Tensor, c: cute.Tensor, stream):
    fm_kernel(a, b, c).launch(grid=(a.shape[1] // TILE_COLS, 1, 1), block=(6 * 32, 1, 1), stream=stream)


def compile_fake():
    from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream
    m = [make_fake_compact_tensor(DTYPE, (64, 512), stride_order=(1, 0), assumed_align=16) for _ in range(3)]
    return cute.compile(fused_merge, *m, make_fake_stream())


def run_on_gpu(num_rows=300, num_cols=128 * 30, seed=0) -> dict:
    import torch
    from cutlass.cute.runtime import from_dlpack
    from cutlass.torch import current_stream
    gen = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(num_rows, num_cols, dtype=torch.float16, device="cuda", generator=gen)
    b = torch.randn(num_rows, num_cols, dtype=torch.float16, device="cuda", generator=gen)
    c = torch.full_like(a, float("nan"))
    args = [from_dlpack(t, assumed_align=16) for t in (a, b, c)]
    stream = current_stream()
    compiled = cute.compile(fused_merge, *args, stream)
    compiled(*args, stream)
    torch.cuda.synchronize()
    bad = int((c.view(torch.int16) != (a + b).view(torch.int16)).sum())
    return {"ok": bad == 0, "mismatches": bad}
