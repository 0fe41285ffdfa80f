# Single-defect variant of examples/03_copy_persistent_skip.py: with skip_if set, the data loop is not wrapped in skippable().
# reference: ScheduleError: domain_loop() must be inside wtl.skippable()
"""03 - persistent copy: a static WorkQueue hands out tiles; surplus tiles are skipped.

The launch asks for `logical_tiles + overlaunch` tiles; each CTA loops over the tiles the
static persistent scheduler gives it (`work_tile_loop`). A `WorkQueue` subclass marks
tiles beyond the matrix as skipped (`skip_if`), and only the data loop sits inside
`skippable()`: every tile, skipped or not, still runs the queue epilogue
(try_wait / wait / get_and_advance_work_tile / release), so all warps advance together.

    WorkQueue --tile--> RowCopy      (one task, warps 0-3; tile = 128-column strip)

Host-side `build()` passes no tile-scheduler parameters: `PersistentTileSchedulerParams`
builds IR and only exists inside a kernel, and validation never reads it.
"""
import argparse
from dataclasses import dataclass

import cutlass
import cutlass.cute as cute
import cutlass.utils as utils

from ts_runtime import producer_work
from ts_runtime.resources import (MemoryResource, StageInfo, TileSchedulerConfig,
                                  WorkQueue, WorkTileInfo)
from ts_runtime.schedule_builder import domain_loop, schedule, work_tile_loop
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager

TILE_COLS = 128
NUM_WARPS = 4                          # one thread per column of the strip


@dataclass(kw_only=True, init=False)
class OverlaunchedWorkQueue(WorkQueue):
    """Static persistent queue over `logical_tiles + overlaunch` tiles."""
    logical_tiles: cutlass.Constexpr[int] = 0

    def __init__(self, *, logical_tiles: int, **kwargs) -> None:
        super().__init__(**kwargs)
        self.logical_tiles = logical_tiles

    @cute.jit
    def skip_work_tile_if(self, work_tile: WorkTileInfo) -> cutlass.Boolean:
        tile_x, _, _ = work_tile.tile_idx
        return tile_x >= self.logical_tiles


@dataclass(kw_only=True)
class RowCopy(MemoryResource):
    """Copies row `loop_offset` of the current tile's column strip."""
    src: cute.Tensor = None
    dst: cute.Tensor = None

    @producer_work
    @cute.jit
    def copy_row(self, stage_info: StageInfo) -> None:
        tx, _, _ = cute.arch.thread_idx()
        tile_x, _, _ = stage_info.work_tile.tile_idx
        col = tile_x * TILE_COLS + tx
        self.dst[stage_info.loop_offset, col] = self.src[stage_info.loop_offset, col]


def make_task_manager(*, num_rows, logical_tiles: int, tile_scheduler_params=None,
                      src=None, dst=None, verbose: bool = False) -> TaskManager:
    work_queue = OverlaunchedWorkQueue(
        name="work_queue",
        logical_tiles=logical_tiles,
        tile_scheduler_config=TileSchedulerConfig.create_static_persistent_tile_scheduler_params(
            tile_scheduler_params=tile_scheduler_params),
    )
    row_copy = RowCopy(name="row_copy", src=src, dst=dst)

    @schedule
    def copy_schedule(row_copy: RowCopy, wq: OverlaunchedWorkQueue) -> None:
        with work_tile_loop(wq, skip_if=OverlaunchedWorkQueue.skip_work_tile_if) as tiles:
            with domain_loop(0, num_rows, 1):  # expect: TS122
                row_copy.copy_row()
            wq.try_wait()
            wq.wait()
            wq.get_and_advance_work_tile()
            wq.release()

    copy_task = Task(
        name="PersistentCopyTask",
        src_resources=[work_queue],
        dst_resources=[row_copy],
        warp_idx=0,
        num_warps=NUM_WARPS,
        schedule=copy_schedule(row_copy, work_queue),
    )
    return TaskManager(tasks=[copy_task], resource_dependency_graph={row_copy: [work_queue]},
                       verbose=verbose)


def build(num_rows: int = 4, logical_tiles: int = 4, verbose: bool = False) -> TaskManager:
    """Host-side validation with plain ints (no GPU, no kernel, no scheduler params)."""
    return make_task_manager(num_rows=num_rows, logical_tiles=logical_tiles, verbose=verbose)


@cute.kernel
def persistent_copy_kernel(src: cute.Tensor, dst: cute.Tensor,
                           params: utils.PersistentTileSchedulerParams,
                           logical_tiles: cutlass.Constexpr):
    tm = make_task_manager(num_rows=src.shape[0], logical_tiles=logical_tiles,
                           tile_scheduler_params=params, src=src, dst=dst)
    tm.setup_resources_and_tasks()
    tm.run()


@cute.jit
def persistent_copy(src: cute.Tensor, dst: cute.Tensor, stream,
                    overlaunch: cutlass.Constexpr = 2, max_ctas: cutlass.Constexpr = 148):
    logical_tiles = src.shape[1] // TILE_COLS
    params = utils.PersistentTileSchedulerParams((logical_tiles + overlaunch, 1, 1), (1, 1, 1))
    grid = utils.StaticPersistentTileScheduler.get_grid_shape(params, max_ctas)
    persistent_copy_kernel(src, dst, params, logical_tiles).launch(
        grid=grid, block=(NUM_WARPS * 32, 1, 1), stream=stream)


def compile_fake(num_rows: int = 256, num_cols: int = 512):
    """Trace and compile the kernel with fake tensors (CUTE_DSL_ARCH=sm_100a; no GPU)."""
    from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream
    src = make_fake_compact_tensor(cutlass.Float16, (num_rows, num_cols), stride_order=(1, 0))
    dst = make_fake_compact_tensor(cutlass.Float16, (num_rows, num_cols), stride_order=(1, 0))
    return cute.compile(persistent_copy, src, dst, make_fake_stream())


def run_on_gpu(num_rows: int = 300, num_cols: int = 128 * 300, overlaunch: int = 3,
               max_ctas: int = 132, seed: int = 0) -> dict:
    """Compile for the local GPU and copy a fresh random fp16 matrix into a NaN-poisoned
    output through the persistent, overlaunched kernel. Both matrices are column slices
    of wider buffers, so a surplus tile that is not skipped would write into the poisoned
    margin: the check covers the margin too. Returns {"ok", "mismatches", "launch", "bytes"}."""
    import torch
    from cutlass.cute.runtime import from_dlpack
    from cutlass.torch import current_stream

    assert num_cols % TILE_COLS == 0, "num_cols must be a multiple of 128"
    margin = TILE_COLS * overlaunch
    gen = torch.Generator(device="cuda").manual_seed(seed)
    src_full = torch.randn(num_rows, num_cols + margin, dtype=torch.float16, device="cuda",
                           generator=gen)
    dst_full = torch.full_like(src_full, float("nan"))
    src, dst = src_full[:, :num_cols], dst_full[:, :num_cols]
    src_c, dst_c = from_dlpack(src, assumed_align=16), from_dlpack(dst, assumed_align=16)
    stream = current_stream()
    compiled = cute.compile(persistent_copy, src_c, dst_c, stream, overlaunch, max_ctas)
    compiled(src_c, dst_c, stream)
    torch.cuda.synchronize()
    bad = int((dst.view(torch.int16) != src.view(torch.int16)).sum())
    poison = torch.full((1,), float("nan"), dtype=torch.float16, device="cuda").view(torch.int16)
    touched = int((dst_full[:, num_cols:].view(torch.int16) != poison).sum())
    return {"ok": bad == 0 and touched == 0, "mismatches": bad, "margin_writes": touched,
            "bytes": 2 * src.numel() * src.element_size(),
            "launch": lambda: compiled(src_c, dst_c, stream), "src": src, "dst": dst}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--num-rows", type=int, default=4)
    ap.add_argument("--logical-tiles", type=int, default=4)
    ap.add_argument("--verbose", action="store_true", help="print the schedule table")
    ap.add_argument("--compile", action="store_true", help="also compile with fake tensors")
    ap.add_argument("--gpu", action="store_true", help="run on the local GPU and check the result")
    args = ap.parse_args()
    build(num_rows=args.num_rows, logical_tiles=args.logical_tiles, verbose=args.verbose)
    if args.compile:
        compile_fake()
    if args.gpu:
        res = run_on_gpu()
        print("GPU:", "match" if res["ok"] else
              f"{res['mismatches']} mismatches, {res['margin_writes']} writes past the matrix")
        if not res["ok"]:
            raise SystemExit(1)
    print("OK")
