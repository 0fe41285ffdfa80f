"""Feature kernel: a two-warp TMA producer with TaskWarpLeader signalling.

Example 02 with the row split between two loader warps: each warp TMA-loads 64 of the
128 columns into its half of the stage. With `TaskWarpLeader`, both warps wait for the
empty stage but only the task's first warp arms the full barrier, with the bytes of the
whole row (`num_bytes_per_warp_per_cta` x 2 warps); the full barrier counts one arrival
(one producer task).
"""
from dataclasses import dataclass, field

import cutlass
import cutlass.cute as cute
from cutlass.cute.nvgpu import cpasync

from ts_runtime import consumer_work, domain_loop, producer_work, schedule
from ts_runtime.enums import SignalingThreads
from ts_runtime.memory import SmemAllocation, SmemAllocator
from ts_runtime.pipeline import Agent, CooperativeGroup
from ts_runtime.resources import MemoryResource, PipelineConfig, StageInfo, TaskLocalVariable
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager

TILE_COLS = 128
HALF = TILE_COLS // 2
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
    def _ptr(self, stage_info: StageInfo):
        base = stage_info.context.smem_base.data_ptr() + self.alloc.offset
        return cute.make_ptr(DTYPE, base.to_llvm_ptr(), assumed_align=128) + stage_info.stage_idx * TILE_COLS

    @producer_work
    @cute.jit
    def load_half(self, stage_info: StageInfo, row: cutlass.Int32) -> None:
        bx, _, _ = cute.arch.block_idx()
        half = cute.arch.make_warp_uniform(cute.arch.warp_idx()) % 2
        s_half = cute.make_tensor(self._ptr(stage_info) + half * HALF,
                                  cute.make_layout((1, HALF), stride=(HALF, 1)))
        g_tile = cute.local_tile(self.tma_tensor, (1, HALF), (row, bx * 2 + half))
        s_part, g_part = cpasync.tma_partition(
            self.tma_atom, 0, cute.make_layout(1), cute.group_modes(s_half, 0, 2), cute.group_modes(g_tile, 0, 2))
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
    def store(self, stage_info: StageInfo, value: cutlass.Float16) -> None:
        bx, _, _ = cute.arch.block_idx()
        tx, _, _ = cute.arch.thread_idx()
        self.dst[stage_info.loop_offset, bx * TILE_COLS + tx] = value


def make_task_manager(*, num_rows, num_stages=3, tma_atom=None, tma_tensor=None, dst=None, verbose=False):
    rows = Rows(name="rows")
    tile = Tile(name="tile", num_stages=num_stages, tma_atom=tma_atom, tma_tensor=tma_tensor,
                pipeline_config=PipelineConfig.create_tma_async_pipeline_cfg(
                    num_stages=num_stages, num_bytes=TILE_COLS * 2,
                    producer_group=CooperativeGroup(Agent.Thread, 1),
                    consumer_group=CooperativeGroup(Agent.Thread, 128),
                    producer_signaling_threads=SignalingThreads.TaskWarpLeader,
                    num_bytes_per_warp_per_cta=HALF * 2))
    out = Out(name="out", dst=dst)
    alloc = SmemAllocator()
    alloc.add_resource(tile)
    alloc.compute_layout()

    @schedule
    def load_schedule(rows: Rows, tile: Tile) -> None:
        with domain_loop(0, num_rows, 1):
            row = rows.next_row()
            tile.acquire()
            tile.load_half(row=row)
            tile.commit()

    @schedule
    def store_schedule(tile: Tile, out: Out) -> None:
        with domain_loop(0, num_rows, 1):
            tile.wait()
            v = tile.read()
            tile.release()
            out.store(value=v)

    @schedule
    def padding() -> None:
        with domain_loop(0, 1, 1):
            pass

    tasks = [
        Task(name="Store", src_resources=[tile], dst_resources=[out], warp_idx=0, num_warps=4,
             schedule=store_schedule(tile, out)),
        Task(name="Load", src_resources=[rows], dst_resources=[tile], warp_idx=4, num_warps=2,
             schedule=load_schedule(rows, tile)),
        Task(name="Pad", src_resources=[], dst_resources=[], warp_idx=6, num_warps=2, schedule=padding()),
    ]
    return TaskManager(tasks=tasks, resource_dependency_graph={tile: [rows], out: [tile]},
                       smem_allocator=alloc, verbose=verbose)


def build():
    return make_task_manager(num_rows=4)


@cute.kernel
def twl_kernel(tma_atom: cute.CopyAtom, tma_tensor: cute.Tensor, dst: cute.Tensor):
    tm = make_task_manager(num_rows=dst.shape[0], tma_atom=tma_atom, tma_tensor=tma_tensor, dst=dst)
    tm.setup_resources_and_tasks()
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    tm.run()


@cute.jit
def twl(src: cute.Tensor, dst: cute.Tensor, stream):
    smem_layout = cute.make_layout((1, HALF), stride=(HALF, 1))
    tma_atom, tma_tensor = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), src, smem_layout, (1, HALF))
    twl_kernel(tma_atom, tma_tensor, dst).launch(grid=(src.shape[1] // TILE_COLS, 1, 1), block=(8 * 32, 1, 1),
                                                 stream=stream)


def compile_fake():
    from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream
    src = make_fake_compact_tensor(DTYPE, (64, 512), stride_order=(1, 0), assumed_align=16)
    dst = make_fake_compact_tensor(DTYPE, (64, 512), stride_order=(1, 0), assumed_align=16)
    return cute.compile(twl, src, dst, make_fake_stream())


def run_on_gpu(num_rows=500, num_cols=128 * 40, seed=0) -> dict:
    import torch
    from cutlass.cute.runtime import from_dlpack
    from cutlass.torch import current_stream
    gen = torch.Generator(device="cuda").manual_seed(seed)
    src = torch.randn(num_rows, num_cols, dtype=torch.float16, device="cuda", generator=gen)
    dst = torch.full_like(src, float("nan"))
    s, d = from_dlpack(src, assumed_align=16), from_dlpack(dst, assumed_align=16)
    stream = current_stream()
    compiled = cute.compile(twl, s, d, stream)
    compiled(s, d, stream)
    torch.cuda.synchronize()
    bad = int((dst.view(torch.int16) != src.view(torch.int16)).sum())
    return {"ok": bad == 0, "mismatches": bad}
