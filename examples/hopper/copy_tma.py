"""Hopper bandwidth copy as TS tasks: persistent TMA loads into SMEM, TMA stores out of it.

    WorkQueue --strip--> SmemTiles (TmaAsync, S stages) --TMA store--> global
                  LoadTask [warp 0]                StoreTask [warp 1]

A work tile is a strip of `BLOCKS_PER_TILE` blocks of `ROWS x COLS` elements; the static
persistent scheduler hands strips to the CTAs. The load warp TMA-loads one block per stage;
the store warp waits for the stage and issues a TMA store (`cp.async.bulk.tensor`) straight
from it, so no data passes through registers.

A TMA store reads SMEM asynchronously, so a stage may only be released once the store has
read it. The store warp therefore releases stage `k - 1` after issuing the store of stage
`k` (`every(1, start=1)`) and after `cp.async.bulk.wait_group.read 1` (at most the newest
store still reading), and the last stage of a strip after `wait_group.read 0` — the same
lagged release as the wgmma consumer of `gemm_wgmma.py`, written in the schedule.

`build()` validates on the host; `compile_fake()` compiles for sm_90a with fake tensors;
`run_on_gpu()` copies a fresh random matrix into a NaN-poisoned one and compares bit for bit;
`launcher()` is for benchmarks.
"""
import argparse
from dataclasses import dataclass, field

import cutlass
import cutlass.cute as cute
import cutlass.utils as utils
from cutlass.cute.nvgpu import cpasync

from ts_runtime import WorkAttr, consumer_work, producer_work
from ts_runtime.memory import SmemAllocation, SmemAllocator
from ts_runtime.pipeline import Agent, CooperativeGroup
from ts_runtime.resources import MemoryResource, PipelineConfig, StageInfo, TileSchedulerConfig, WorkQueue
from ts_runtime.schedule_builder import domain_loop, schedule, work_tile_loop
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager

ROWS, COLS = 64, 256                   # one TMA box (32 KiB of 16-bit data) per stage
BLOCKS_PER_TILE = 16                   # a work tile is a 1024 x 256 strip
DTYPE = cutlass.Float16
BLOCK_BYTES = ROWS * COLS * DTYPE.width // 8


@dataclass(kw_only=True)
class SmemTiles(MemoryResource):
    """`num_stages` blocks in SMEM: TMA loads fill them, TMA stores drain them."""
    num_stages: cutlass.Constexpr[int] = 3
    load_atom: object = None
    load_tensor: cute.Tensor = None
    store_atom: object = None
    store_tensor: cute.Tensor = None
    alloc: cutlass.Constexpr[SmemAllocation] = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.alloc = SmemAllocation("smem_tiles", dtype=DTYPE, count=self.num_stages * ROWS * COLS,
                                    alignment=128)

    def get_smem_requirements(self):
        return [self.alloc]

    @cute.jit
    def _stages(self, stage_info: StageInfo) -> cute.Tensor:
        base = stage_info.context.smem_base.data_ptr() + self.alloc.offset
        ptr = cute.make_ptr(DTYPE, base.to_llvm_ptr(), cute.AddressSpace.smem, assumed_align=128)
        return cute.make_tensor(ptr, cute.make_layout((ROWS, COLS, self.num_stages),
                                                      stride=(COLS, 1, ROWS * COLS)))

    @cute.jit
    def _block(self, stage_info: StageInfo):
        tile_r, tile_c, _ = stage_info.work_tile.tile_idx
        return tile_r * BLOCKS_PER_TILE + stage_info.loop_offset, tile_c

    @producer_work(work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def prefetch_descriptors(self, stage_info: StageInfo) -> None:
        cpasync.prefetch_descriptor(self.load_atom)
        cpasync.prefetch_descriptor(self.store_atom)

    @producer_work
    @cute.jit
    def tma_load(self, stage_info: StageInfo) -> None:
        r, c = self._block(stage_info)
        g = cute.local_tile(self.load_tensor, (ROWS, COLS), (None, None))
        s_part, g_part = cpasync.tma_partition(self.load_atom, 0, cute.make_layout(1),
                                               cute.group_modes(self._stages(stage_info), 0, 2),
                                               cute.group_modes(g, 0, 2))
        mbar = cute.make_ptr(cutlass.Int64, stage_info.barrier.data_ptr().to_llvm_ptr(),
                             cute.AddressSpace.smem, assumed_align=8)
        cute.copy(self.load_atom, g_part[(None, r, c)], s_part[(None, stage_info.stage_idx)], tma_bar_ptr=mbar)

    @consumer_work
    @cute.jit
    def tma_store(self, stage_info: StageInfo) -> None:
        """Stores the stage and waits until at most this store still reads SMEM: the
        previous stage may then be released."""
        r, c = self._block(stage_info)
        g = cute.local_tile(self.store_tensor, (ROWS, COLS), (None, None))
        s_part, g_part = cpasync.tma_partition(self.store_atom, 0, cute.make_layout(1),
                                               cute.group_modes(self._stages(stage_info), 0, 2),
                                               cute.group_modes(g, 0, 2))
        cute.arch.fence_proxy("async.shared", space="cta")    # cheap insurance: SMEM -> TMA store
        cute.copy(self.store_atom, s_part[(None, stage_info.stage_idx)], g_part[(None, r, c)])
        cute.arch.cp_async_bulk_commit_group()
        cute.arch.cp_async_bulk_wait_group(1, read=True)
        cute.arch.sync_warp()      # the issuing lane has waited before lane 0 releases

    @consumer_work(work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def stores_read(self, stage_info: StageInfo) -> None:
        """Every store issued so far has read its stage (before the strip's last release)."""
        cute.arch.cp_async_bulk_wait_group(0, read=True)
        cute.arch.sync_warp()


def make_task_manager(*, blocks_per_tile: int = BLOCKS_PER_TILE, num_stages: int = 3, sched_params=None,
                      tma=None, verbose: bool = False) -> TaskManager:
    tma = tma or {}
    work_queue = WorkQueue(
        name="work_queue",
        tile_scheduler_config=TileSchedulerConfig.create_static_persistent_tile_scheduler_params(
            tile_scheduler_params=sched_params),
    )
    smem = SmemTiles(
        name="smem",
        num_stages=num_stages,
        load_atom=tma.get("load_atom"), load_tensor=tma.get("load_tensor"),
        store_atom=tma.get("store_atom"), store_tensor=tma.get("store_tensor"),
        pipeline_config=PipelineConfig.create_tma_async_pipeline_cfg(
            num_stages=num_stages,
            num_bytes=BLOCK_BYTES,
            producer_group=CooperativeGroup(Agent.Thread),
            consumer_group=CooperativeGroup(Agent.Thread),      # one store warp, lane 0 arrives
            advance_on_wait=True,          # the release cursor lags the wait cursor by a stage
        ),
    )
    allocator = SmemAllocator()
    allocator.add_resource(smem)
    allocator.compute_layout()

    @schedule
    def load_schedule(smem: SmemTiles, wq: WorkQueue) -> None:
        smem.prefetch_descriptors()
        with work_tile_loop(wq):
            with domain_loop(0, blocks_per_tile, 1):
                smem.try_acquire()
                smem.acquire()
                smem.tma_load()
                smem.commit()
            wq.try_wait()
            wq.wait()
            wq.get_and_advance_work_tile()
            wq.release()

    @schedule
    def store_schedule(smem: SmemTiles, wq: WorkQueue) -> None:
        with work_tile_loop(wq):
            with domain_loop(0, blocks_per_tile, 1) as b:
                smem.try_wait()
                smem.wait()
                smem.tma_store()
                with b.every(1, start=1):
                    smem.release()         # block b-1: its store has read the stage
            smem.stores_read()
            smem.release()                 # the strip's last block
            wq.try_wait()
            wq.wait()
            wq.get_and_advance_work_tile()
            wq.release()

    tasks = [
        Task(name="LoadTask", src_resources=[work_queue], dst_resources=[smem], warp_idx=0, num_warps=1,
             schedule=load_schedule(smem, work_queue)),
        Task(name="StoreTask", src_resources=[smem, work_queue], dst_resources=[], warp_idx=1, num_warps=1,
             schedule=store_schedule(smem, work_queue)),
    ]
    return TaskManager(tasks=tasks, resource_dependency_graph={smem: [work_queue]},
                       smem_allocator=allocator, verbose=verbose)


def build(num_stages: int = 3, verbose: bool = False) -> TaskManager:
    """Host-side validation with plain ints (no GPU, no kernel)."""
    return make_task_manager(num_stages=num_stages, verbose=verbose)


@cute.kernel
def copy_kernel(load_atom: cute.CopyAtom, load_tensor: cute.Tensor, store_atom: cute.CopyAtom,
                store_tensor: cute.Tensor, sched_params: utils.PersistentTileSchedulerParams,
                num_stages: cutlass.Constexpr):
    tma = dict(load_atom=load_atom, load_tensor=load_tensor, store_atom=store_atom, store_tensor=store_tensor)
    tm = make_task_manager(num_stages=num_stages, sched_params=sched_params, tma=tma)
    tm.setup_resources_and_tasks()
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    tm.run()


@cute.jit
def tma_copy(src: cute.Tensor, dst: cute.Tensor, stream, num_stages: cutlass.Constexpr = 3,
             max_ctas: cutlass.Constexpr = 264):
    """src, dst: (R, C) row-major 16-bit, R % (64 * 16) == 0, C % 256 == 0."""
    box = cute.make_layout((ROWS, COLS), stride=(COLS, 1))
    load_atom, load_tensor = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), src, box,
                                                         (ROWS, COLS))
    store_atom, store_tensor = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileS2GOp(), dst, box,
                                                           (ROWS, COLS))
    rows, cols = src.shape
    tiles = (rows // (ROWS * BLOCKS_PER_TILE), cols // COLS, 1)
    params = utils.PersistentTileSchedulerParams(tiles, (1, 1, 1))
    grid = utils.StaticPersistentTileScheduler.get_grid_shape(params, max_ctas)
    copy_kernel(load_atom, load_tensor, store_atom, store_tensor, params, num_stages).launch(
        grid=grid, block=(64, 1, 1), stream=stream)


def compile_fake(rows: int = 2048, cols: int = 1024, num_stages: int = 3):
    """Trace and compile the kernel with fake tensors (CUTE_DSL_ARCH=sm_90a; no GPU)."""
    from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream
    src = make_fake_compact_tensor(DTYPE, (rows, cols), stride_order=(1, 0), assumed_align=16)
    dst = make_fake_compact_tensor(DTYPE, (rows, cols), stride_order=(1, 0), assumed_align=16)
    return cute.compile(tma_copy, src, dst, make_fake_stream(), num_stages)


def launcher(rows: int, cols: int, num_stages: int = 3, ctas_per_sm: int = 2, seed: int = 0) -> dict:
    """Fresh random fp16 `src`, NaN-poisoned `dst`, the compiled kernel and `launch()`."""
    import torch
    from cutlass.cute.runtime import from_dlpack
    from cutlass.torch import current_stream

    assert rows % (ROWS * BLOCKS_PER_TILE) == 0 and cols % COLS == 0
    gen = torch.Generator(device="cuda").manual_seed(seed)
    src = torch.randn(rows, cols, dtype=torch.float16, device="cuda", generator=gen)
    dst = torch.full_like(src, float("nan"))
    sc, dc = from_dlpack(src, assumed_align=16), from_dlpack(dst, assumed_align=16)
    stream = current_stream()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    compiled = cute.compile(tma_copy, sc, dc, stream, num_stages, sms * ctas_per_sm)
    return {"src": src, "dst": dst, "bytes": 2 * src.numel() * src.element_size(),
            "launch": lambda: compiled(sc, dc, stream)}


def run_on_gpu(rows: int = 4096, cols: int = 4096, num_stages: int = 3, seed: int = 0) -> dict:
    import torch
    r = launcher(rows, cols, num_stages, seed=seed)
    r["launch"]()
    torch.cuda.synchronize()
    bad = int((r["dst"].view(torch.int16) != r["src"].view(torch.int16)).sum())
    return {"ok": bad == 0, "mismatches": bad, **r}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--num-stages", type=int, default=3)
    ap.add_argument("--verbose", action="store_true", help="print the schedule table")
    ap.add_argument("--compile", action="store_true", help="also compile with fake tensors (sm_90a)")
    ap.add_argument("--gpu", action="store_true", help="run on the local GPU and check the result")
    args = ap.parse_args()
    build(num_stages=args.num_stages, verbose=args.verbose)
    if args.compile:
        compile_fake(num_stages=args.num_stages)
    if args.gpu:
        res = run_on_gpu(num_stages=args.num_stages)
        print("GPU:", "match" if res["ok"] else f"{res['mismatches']} mismatches")
        if not res["ok"]:
            raise SystemExit(1)
    print("OK")
