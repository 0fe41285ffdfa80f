"""Feature kernel: a Merge pipeline group whose members are waited separately, with
`advance_on_wait` (split advancement of the consumer cursor).

Warp 4 TMA-loads a row strip of A and warp 5 one of B into their own SMEM rings (two
TmaAsync members of the Merge group `ab`: one full barrier each, one shared empty
barrier). The add task (warps 0-3) waits on each member, reads both and frees both with
one `ab.release()`: C = A + B. With `advance_on_wait` every member wait advances that
member's wait cursor (not a shared one): both waits of one row see the same stage, and
the group release frees it through the group's release cursor.
"""
from dataclasses import dataclass, field

import cutlass
import cutlass.cute as cute
from cutlass.cute.nvgpu import cpasync

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
STAGES = 3


@dataclass(kw_only=True)
class Rows(MemoryResource):
    row: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()

    def __post_init__(self) -> None:
        self.row = TaskLocalVariable(dtype=cutlass.Int32, default=cutlass.Int32(0))

    @consumer_work(returns=row)
    @cute.jit
    def next_row(self, stage_info: StageInfo) -> cutlass.Int32:
        return cutlass.Int32(stage_info.loop_offset)


@dataclass(kw_only=True)
class Strip(MemoryResource):
    tma_atom: object = None
    tma_tensor: cute.Tensor = None
    value: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    alloc: cutlass.Constexpr[SmemAllocation] = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.value = TaskLocalVariable(dtype=DTYPE, default=DTYPE(0))
        self.alloc = SmemAllocation(f"{self.name}_data", dtype=DTYPE, count=STAGES * TILE_COLS, alignment=128)

    def get_smem_requirements(self):
        return [self.alloc]

    @cute.jit
    def _ptr(self, stage_info: StageInfo):
        base = stage_info.context.smem_base.data_ptr() + self.alloc.offset
        return cute.make_ptr(DTYPE, base.to_llvm_ptr(), assumed_align=128) + stage_info.stage_idx * TILE_COLS

    @producer_work
    @cute.jit
    def tma_load(self, stage_info: StageInfo, row: cutlass.Int32) -> None:
        bx, _, _ = cute.arch.block_idx()
        s_tile = cute.make_tensor(self._ptr(stage_info), cute.make_layout((1, TILE_COLS), stride=(TILE_COLS, 1)))
        g_tile = cute.local_tile(self.tma_tensor, (1, TILE_COLS), (row, bx))
        s_part, g_part = cpasync.tma_partition(
            self.tma_atom, 0, cute.make_layout(1), cute.group_modes(s_tile, 0, 2), cute.group_modes(g_tile, 0, 2))
        mbar = cute.make_ptr(cutlass.Int64, stage_info.barrier.data_ptr().to_llvm_ptr(), assumed_align=8)
        cute.copy(self.tma_atom, g_part, s_part, tma_bar_ptr=mbar)

    @consumer_work(returns=value)
    @cute.jit
    def read(self, stage_info: StageInfo) -> cutlass.Float16:
        tx, _, _ = cute.arch.thread_idx()
        return cute.make_tensor(self._ptr(stage_info), cute.make_layout(TILE_COLS))[tx]


@dataclass(kw_only=True)
class Out(MemoryResource):
    dst: cute.Tensor = None

    @producer_work
    @cute.jit
    def store(self, stage_info: StageInfo, a: cutlass.Float16, b: cutlass.Float16) -> None:
        bx, _, _ = cute.arch.block_idx()
        tx, _, _ = cute.arch.thread_idx()
        self.dst[stage_info.loop_offset, bx * TILE_COLS + tx] = a + b


def _cfg(advance_on_wait):
    return PipelineConfig.create_tma_async_pipeline_cfg(
        num_stages=STAGES, num_bytes=TILE_COLS * 2, producer_group=CooperativeGroup(Agent.Thread, 1),
        consumer_group=CooperativeGroup(Agent.Thread, 128), advance_on_wait=advance_on_wait)


def make_task_manager(*, num_rows, advance_on_wait=True, atoms=(None, None), tensors=(None, None), c=None,
                      verbose=False):
    rows = Rows(name="rows")
    sa = Strip(name="sa", tma_atom=atoms[0], tma_tensor=tensors[0], pipeline_config=_cfg(advance_on_wait))
    sb = Strip(name="sb", tma_atom=atoms[1], tma_tensor=tensors[1], pipeline_config=_cfg(advance_on_wait))
    ab = PipelineGroup(name="ab", members=[sa, sb], mode=PipelineGroupMode.Merge)
    out = Out(name="out", dst=c)
    alloc = SmemAllocator()
    alloc.add_resource(sa)
    alloc.add_resource(sb)
    alloc.add_pipeline_group(ab)
    alloc.compute_layout()

    @schedule
    def load(rows: Rows, s: Strip) -> None:
        with domain_loop(0, num_rows, 1):
            row = rows.next_row()
            s.acquire()
            s.tma_load(row=row)
            s.commit()

    @schedule
    def add(sa: Strip, sb: Strip, ab: PipelineGroup, out: Out) -> None:
        with domain_loop(0, num_rows, 1):
            sa.wait()
            sb.wait()
            x = sa.read()
            y = sb.read()
            ab.release()
            out.store(a=x, b=y)

    tasks = [
        Task(name="Add", src_resources=[sa, sb], dst_resources=[out], warp_idx=0, num_warps=4,
             schedule=add(ab.sa, ab.sb, ab, out)),
        Task(name="LoadA", src_resources=[rows], dst_resources=[sa], warp_idx=4, num_warps=1,
             schedule=load(rows, ab.sa)),
        Task(name="LoadB", src_resources=[rows], dst_resources=[sb], warp_idx=5, num_warps=1,
             schedule=load(rows, ab.sb)),
    ]
    return TaskManager(tasks=tasks, resource_dependency_graph={sa: [rows], sb: [rows], out: [sa, sb]},
                       smem_allocator=alloc, verbose=verbose)


def build():
    return make_task_manager(num_rows=5)


@cute.kernel
def merge_kernel(atom_a: cute.CopyAtom, tma_a: cute.Tensor, atom_b: cute.CopyAtom, tma_b: cute.Tensor,
                 c: cute.Tensor, advance_on_wait: cutlass.Constexpr):
    tm = make_task_manager(num_rows=c.shape[0], advance_on_wait=advance_on_wait, atoms=(atom_a, atom_b),
                           tensors=(tma_a, tma_b), c=c)
    tm.setup_resources_and_tasks()
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    tm.run()


@cute.jit
def merge(a: cute.Tensor, b: cute.Tensor, c: cute.Tensor, stream, advance_on_wait: cutlass.Constexpr = True):
    layout = cute.make_layout((1, TILE_COLS), stride=(TILE_COLS, 1))
    atom_a, tma_a = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), a, layout, (1, TILE_COLS))
    atom_b, tma_b = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), b, layout, (1, TILE_COLS))
    merge_kernel(atom_a, tma_a, atom_b, tma_b, c, advance_on_wait).launch(
        grid=(c.shape[1] // TILE_COLS, 1, 1), block=(6 * 32, 1, 1), stream=stream)


def compile_fake(advance_on_wait=True):
    from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream
    m = [make_fake_compact_tensor(DTYPE, (64, 512), stride_order=(1, 0), assumed_align=16) for _ in range(3)]
    return cute.compile(merge, *m, make_fake_stream(), advance_on_wait)


def run_on_gpu(num_rows=300, num_cols=128 * 30, advance_on_wait=True, seed=0) -> dict:
    import torch
    from cutlass.cute.runtime import from_dlpack
    from cutlass.torch import current_stream
    gen = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(num_rows, num_cols, dtype=torch.float16, device="cuda", generator=gen)
    b = torch.randn(num_rows, num_cols, dtype=torch.float16, device="cuda", generator=gen)
    c = torch.full_like(a, float("nan"))
    args = [from_dlpack(t, assumed_align=16) for t in (a, b, c)]
    stream = current_stream()
    compiled = cute.compile(merge, *args, stream, advance_on_wait)
    compiled(*args, stream)
    torch.cuda.synchronize()
    bad = int((c.view(torch.int16) != (a + b).view(torch.int16)).sum())
    return {"ok": bad == 0, "mismatches": bad}
