"""04 - variable-length copy: the domain loop's end comes from the current work tile.

Packed segments `src[offsets[i]:offsets[i+1]]` are copied into row `i` of a padded
matrix. Each persistent work tile is one row, and the number of elements differs per
row, so the domain loop's `end` is a Task method, `VarlenTask.get_domain(tile_coord)`,
evaluated per tile. The loop starts at the thread index and strides by the block size.

    PackedInput --value--> PaddedOutput <--tile-- WorkQueue     (one task, warps 0-3)

The reference requires the getter to be named `get_domain`, to be overridden on a Task
subclass and to be passed accessed on the class. `get_domain` is a plain method (not
`@cute.jit`) so that host-side `build()` can give it a Python list and the validator
gets an exact per-tile iteration count; inside the kernel it indexes a tensor.
"""
import argparse
from dataclasses import dataclass

import cutlass
import cutlass.cute as cute
import cutlass.utils as utils

from ts_runtime import consumer_work, domain_loop, producer_work, schedule, work_tile_loop
from ts_runtime.resources import (MemoryResource, StageInfo, TaskLocalVariable,
                                  TileSchedulerConfig, WorkQueue)
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager

NUM_WARPS = 4
THREADS = NUM_WARPS * 32


class VarlenTask(Task):
    """A Task whose per-tile loop end is the length of segment `tile_coord[0]`."""

    def __init__(self, offsets, **kwargs) -> None:
        super().__init__(**kwargs)
        self._offsets = offsets

    def get_domain(self, tile_coord):
        row = tile_coord[0]
        return self._offsets[row + 1] - self._offsets[row]


@dataclass(kw_only=True)
class PackedInput(MemoryResource):
    src: cute.Tensor = None
    offsets: cute.Tensor = None
    value: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()

    def __post_init__(self) -> None:
        self.value = TaskLocalVariable(dtype=cutlass.Float16, default=cutlass.Float16(0))

    @consumer_work(returns=value)
    @cute.jit
    def load(self, stage_info: StageInfo) -> cutlass.Float16:
        row, _, _ = stage_info.work_tile.tile_idx
        return self.src[self.offsets[row] + stage_info.loop_offset]


@dataclass(kw_only=True)
class PaddedOutput(MemoryResource):
    dst: cute.Tensor = None

    @producer_work
    @cute.jit
    def store(self, stage_info: StageInfo, value: cutlass.Float16) -> None:
        row, _, _ = stage_info.work_tile.tile_idx
        self.dst[row, stage_info.loop_offset] = value


def make_task_manager(*, offsets, start, tile_scheduler_params=None, src=None,
                      dst=None, verbose: bool = False) -> TaskManager:
    work_queue = WorkQueue(
        name="work_queue",
        tile_scheduler_config=TileSchedulerConfig.create_static_persistent_tile_scheduler_params(
            tile_scheduler_params=tile_scheduler_params),
    )
    packed = PackedInput(name="packed", src=src, offsets=offsets)
    padded = PaddedOutput(name="padded", dst=dst)

    @schedule
    def varlen_schedule(packed: PackedInput, padded: PaddedOutput, wq: WorkQueue) -> None:
        with work_tile_loop(wq):
            with domain_loop(start, VarlenTask.get_domain, THREADS):
                value = packed.load()
                padded.store(value=value)
            wq.try_wait()
            wq.wait()
            wq.get_and_advance_work_tile()
            wq.release()

    task = VarlenTask(
        offsets,
        name="VarlenCopyTask",
        src_resources=[packed, work_queue],
        dst_resources=[padded],
        warp_idx=0,
        num_warps=NUM_WARPS,
        schedule=varlen_schedule(packed, padded, work_queue),
    )
    return TaskManager(tasks=[task], resource_dependency_graph={padded: [packed, work_queue]},
                       verbose=verbose)


def build(lengths=(300, 17, 0, 129), verbose: bool = False) -> TaskManager:
    """Host-side validation: offsets are a Python list, so tile 0's length is exact."""
    offsets = [0]
    for n in lengths:
        offsets.append(offsets[-1] + n)
    return make_task_manager(offsets=offsets, start=0, verbose=verbose)


@cute.kernel
def varlen_copy_kernel(src: cute.Tensor, offsets: cute.Tensor, dst: cute.Tensor,
                       params: utils.PersistentTileSchedulerParams):
    tx, _, _ = cute.arch.thread_idx()
    tm = make_task_manager(offsets=offsets, start=tx, tile_scheduler_params=params,
                           src=src, dst=dst)
    tm.setup_resources_and_tasks()
    tm.run()


@cute.jit
def varlen_copy(src: cute.Tensor, offsets: cute.Tensor, dst: cute.Tensor, stream,
                max_ctas: cutlass.Constexpr = 148):
    params = utils.PersistentTileSchedulerParams((dst.shape[0], 1, 1), (1, 1, 1))
    grid = utils.StaticPersistentTileScheduler.get_grid_shape(params, max_ctas)
    varlen_copy_kernel(src, offsets, dst, params).launch(
        grid=grid, block=(THREADS, 1, 1), stream=stream)


def compile_fake(num_segments: int = 16, max_len: int = 512):
    """Trace and compile the kernel with fake tensors (CUTE_DSL_ARCH=sm_100a; no GPU)."""
    from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream
    src = make_fake_compact_tensor(cutlass.Float16, (num_segments * max_len,))
    offsets = make_fake_compact_tensor(cutlass.Int32, (num_segments + 1,))
    dst = make_fake_compact_tensor(cutlass.Float16, (num_segments, max_len), stride_order=(1, 0))
    return cute.compile(varlen_copy, src, offsets, dst, make_fake_stream())


def run_on_gpu(num_segments: int = 1000, max_len: int = 1000, max_ctas: int = 132,
               seed: int = 0) -> dict:
    """Compile for the local GPU and copy random-length packed segments (0 and max_len
    included) into a NaN-poisoned padded matrix; row i must hold segment i and keep the
    poison after it, bit for bit. Returns {"ok", "mismatches", "launch", "bytes"}."""
    import torch
    from cutlass.cute.runtime import from_dlpack
    from cutlass.torch import current_stream

    gen = torch.Generator(device="cuda").manual_seed(seed)
    lengths = torch.randint(0, max_len + 1, (num_segments,), device="cuda", generator=gen)
    lengths[0], lengths[-1] = 0, max_len
    offsets = torch.zeros(num_segments + 1, dtype=torch.int32, device="cuda")
    offsets[1:] = torch.cumsum(lengths, 0).to(torch.int32)
    total = int(offsets[-1])
    src = torch.randn(max(total, 1), dtype=torch.float16, device="cuda", generator=gen)
    dst = torch.full((num_segments, max_len), float("nan"), dtype=torch.float16, device="cuda")
    expected = dst.clone()
    col = torch.arange(max_len, device="cuda")
    mask = col[None, :] < lengths[:, None]
    expected[mask] = src[:total]                      # row-major order matches the packing
    src_c, off_c, dst_c = (from_dlpack(t, assumed_align=16) for t in (src, offsets, dst))
    stream = current_stream()
    compiled = cute.compile(varlen_copy, src_c, off_c, dst_c, stream, max_ctas)
    compiled(src_c, off_c, dst_c, stream)
    torch.cuda.synchronize()
    bad = int((dst.view(torch.int16) != expected.view(torch.int16)).sum())
    return {"ok": bad == 0, "mismatches": bad, "bytes": 2 * total * src.element_size(),
            "launch": lambda: compiled(src_c, off_c, dst_c, stream), "src": src, "dst": dst}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", default="300,17,0,129", help="segment lengths")
    ap.add_argument("--verbose", action="store_true", help="print the schedule table")
    ap.add_argument("--compile", action="store_true", help="also compile with fake tensors")
    ap.add_argument("--gpu", action="store_true", help="run on the local GPU and check the result")
    args = ap.parse_args()
    build(lengths=[int(x) for x in args.lengths.split(",")], verbose=args.verbose)
    if args.compile:
        compile_fake()
    if args.gpu:
        res = run_on_gpu()
        print("GPU:", "match" if res["ok"] else f"{res['mismatches']} mismatches")
        if not res["ok"]:
            raise SystemExit(1)
    print("OK")
