"""Feature kernel: a TMA pipeline inside a static persistent work-tile loop.

Example 02's load / store tasks, made persistent: both tasks walk the same tiles of a
static `WorkQueue` (a tile is a 128-column strip), so the SMEM ring's cursors carry
across tiles and the loader drains the ring after its last tile. The store task
releases the stage only after storing (`release_late`) when asked, to vary the order.
"""
from dataclasses import dataclass, field

import cutlass
import cutlass.cute as cute
import cutlass.utils as utils
from cutlass.cute.nvgpu import cpasync

from ts_runtime import consumer_work, domain_loop, producer_work, schedule, work_tile_loop
from ts_runtime.memory import SmemAllocation, SmemAllocator
from ts_runtime.pipeline import Agent, CooperativeGroup
from ts_runtime.resources import (MemoryResource, PipelineConfig, StageInfo, TaskLocalVariable,
                                  TileSchedulerConfig, WorkQueue)
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager

TILE_COLS = 128
DTYPE = cutlass.Float16


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
class Tile(MemoryResource):
    num_stages: cutlass.Constexpr[int] = 3
    tma_atom: object = None
    tma_tensor: cute.Tensor = None
    value: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    alloc: cutlass.Constexpr[SmemAllocation] = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.value = TaskLocalVariable(dtype=DTYPE, default=DTYPE(0))
        self.alloc = SmemAllocation("tile", dtype=DTYPE, count=self.num_stages * TILE_COLS, alignment=128)

    def get_smem_requirements(self):
        return [self.alloc]

    @cute.jit
    def _stage(self, stage_info: StageInfo) -> cute.Tensor:
        base = stage_info.context.smem_base.data_ptr() + self.alloc.offset
        ptr = cute.make_ptr(DTYPE, base.to_llvm_ptr(), assumed_align=128)
        return cute.make_tensor(ptr + stage_info.stage_idx * TILE_COLS,
                                cute.make_layout((1, TILE_COLS), stride=(TILE_COLS, 1)))

    @producer_work
    @cute.jit
    def load(self, stage_info: StageInfo, row: cutlass.Int32) -> None:
        tile_x, _, _ = stage_info.work_tile.tile_idx
        g_tile = cute.local_tile(self.tma_tensor, (1, TILE_COLS), (row, tile_x))
        s_part, g_part = cpasync.tma_partition(
            self.tma_atom, 0, cute.make_layout(1),
            cute.group_modes(self._stage(stage_info), 0, 2), cute.group_modes(g_tile, 0, 2))
        mbar = cute.make_ptr(cutlass.Int64, stage_info.barrier.data_ptr().to_llvm_ptr(), assumed_align=8)
        cute.copy(self.tma_atom, g_part, s_part, tma_bar_ptr=mbar)

    @consumer_work(returns=value)
    @cute.jit
    def read(self, stage_info: StageInfo) -> cutlass.Float16:
        tx, _, _ = cute.arch.thread_idx()
        return self._stage(stage_info)[0, tx]


@dataclass(kw_only=True)
class Out(MemoryResource):
    dst: cute.Tensor = None

    @producer_work
    @cute.jit
    def store(self, stage_info: StageInfo, value: cutlass.Float16) -> None:
        tile_x, _, _ = stage_info.work_tile.tile_idx
        tx, _, _ = cute.arch.thread_idx()
        self.dst[stage_info.loop_offset, tile_x * TILE_COLS + tx] = value


def make_task_manager(*, num_rows, num_stages=3, release_late=False, params=None, tma_atom=None,
                      tma_tensor=None, dst=None, verbose=False):
    wq = WorkQueue(name="wq", tile_scheduler_config=TileSchedulerConfig.create_static_persistent_tile_scheduler_params(
        tile_scheduler_params=params))
    rows = Rows(name="rows")
    tile = Tile(name="tile", num_stages=num_stages, tma_atom=tma_atom, tma_tensor=tma_tensor,
                pipeline_config=PipelineConfig.create_tma_async_pipeline_cfg(
                    num_stages=num_stages, num_bytes=TILE_COLS * 2,
                    producer_group=CooperativeGroup(Agent.Thread),
                    consumer_group=CooperativeGroup(Agent.Thread, 128)))
    out = Out(name="out", dst=dst)
    alloc = SmemAllocator()
    alloc.add_resource(tile)
    alloc.compute_layout()

    @schedule
    def load_schedule(rows: Rows, tile: Tile, wq: WorkQueue) -> None:
        with work_tile_loop(wq):
            with domain_loop(0, num_rows, 1):
                row = rows.next_row()
                tile.try_acquire()
                tile.acquire()
                tile.load(row=row)
                tile.commit()
            wq.try_wait()
            wq.wait()
            wq.get_and_advance_work_tile()
            wq.release()

    @schedule
    def store_schedule(tile: Tile, out: Out, wq: WorkQueue) -> None:
        with work_tile_loop(wq):
            with domain_loop(0, num_rows, 1):
                tile.try_wait()
                tile.wait()
                v = tile.read()
                if release_late:
                    out.store(value=v)
                    tile.release()
                else:
                    tile.release()
                    out.store(value=v)
            wq.try_wait()
            wq.wait()
            wq.get_and_advance_work_tile()
            wq.release()

    @schedule
    def padding(wq: WorkQueue) -> None:
        with work_tile_loop(wq):
            with domain_loop(0, 1, 1):
                pass
            wq.try_wait()
            wq.wait()
            wq.get_and_advance_work_tile()
            wq.release()

    tasks = [
        Task(name="Store", src_resources=[tile, wq], dst_resources=[out], warp_idx=0, num_warps=4,
             schedule=store_schedule(tile, out, wq), num_registers=160),
        Task(name="Load", src_resources=[rows, wq], dst_resources=[tile], warp_idx=4, num_warps=1,
             schedule=load_schedule(rows, tile, wq), num_registers=40),
        Task(name="Pad", src_resources=[wq], dst_resources=[], warp_idx=5, num_warps=3,
             schedule=padding(wq), num_registers=40),
    ]
    return TaskManager(tasks=tasks, resource_dependency_graph={tile: [rows, wq], out: [tile, wq]},
                       smem_allocator=alloc, verbose=verbose)


def build():
    return make_task_manager(num_rows=4)


@cute.kernel
def ptma_kernel(tma_atom: cute.CopyAtom, tma_tensor: cute.Tensor, dst: cute.Tensor,
                params: utils.PersistentTileSchedulerParams, release_late: cutlass.Constexpr):
    tm = make_task_manager(num_rows=dst.shape[0], release_late=release_late, params=params,
                           tma_atom=tma_atom, tma_tensor=tma_tensor, dst=dst)
    tm.setup_resources_and_tasks()
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    tm.run()


@cute.jit
def ptma(src: cute.Tensor, dst: cute.Tensor, stream, release_late: cutlass.Constexpr = False,
         max_ctas: cutlass.Constexpr = 16):
    smem_layout = cute.make_layout((1, TILE_COLS), stride=(TILE_COLS, 1))
    tma_atom, tma_tensor = cpasync.make_tiled_tma_atom(
        cpasync.CopyBulkTensorTileG2SOp(), src, smem_layout, (1, TILE_COLS))
    params = utils.PersistentTileSchedulerParams((src.shape[1] // TILE_COLS, 1, 1), (1, 1, 1))
    grid = utils.StaticPersistentTileScheduler.get_grid_shape(params, max_ctas)
    ptma_kernel(tma_atom, tma_tensor, dst, params, release_late).launch(
        grid=grid, block=(8 * 32, 1, 1), stream=stream)


def compile_fake():
    from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream
    src = make_fake_compact_tensor(DTYPE, (64, 1024), stride_order=(1, 0), assumed_align=16)
    dst = make_fake_compact_tensor(DTYPE, (64, 1024), stride_order=(1, 0), assumed_align=16)
    return cute.compile(ptma, src, dst, make_fake_stream())


def run_on_gpu(num_rows=333, num_cols=128 * 50, release_late=False, max_ctas=16, seed=0) -> dict:
    import torch
    from cutlass.cute.runtime import from_dlpack
    from cutlass.torch import current_stream
    gen = torch.Generator(device="cuda").manual_seed(seed)
    src = torch.randn(num_rows, num_cols, dtype=torch.float16, device="cuda", generator=gen)
    dst = torch.full_like(src, float("nan"))
    s, d = from_dlpack(src, assumed_align=16), from_dlpack(dst, assumed_align=16)
    stream = current_stream()
    compiled = cute.compile(ptma, s, d, stream, release_late, max_ctas)
    compiled(s, d, stream)
    torch.cuda.synchronize()
    bad = int((dst.view(torch.int16) != src.view(torch.int16)).sum())
    return {"ok": bad == 0, "mismatches": bad}
