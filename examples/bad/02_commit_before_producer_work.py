# Single-defect variant of examples/02_copy_tma.py: the stage is committed before the TMA load that fills it.
# reference: ValueError: is missing ProducerCommit after ProducerWork group for resource 'smem'
"""02 - TMA copy through a pipelined shared-memory stage.

A load task (warp 4) issues TMA loads of one 1x128 fp16 row tile into a multi-stage SMEM
buffer; a store task (warps 0-3) waits for each full stage, reads one element per thread,
releases the stage and writes the element to global memory. Warps 5-7 run an empty
padding task so that the 4-warp group 4-7 has one register budget (`num_registers`).

    InputCoords --row--> SmemTile (TmaAsync, S stages) --value--> OutputGmem
       LoadTask [warp 4]                 StoreTask [warps 0-3]

The SMEM tile's `PipelineConfig` says: a TMA engine fills a stage (one elected thread
arms the barrier with `num_bytes`), and 128 threads (the four store warps) drain it.
`SmemAllocator` lays out the data and barrier storage; `build()` validates the skeleton
on the host, `compile_fake()` compiles the kernel for sm_100a with fake tensors.
"""

import argparse
from dataclasses import dataclass, field

import cutlass
import cutlass.cute as cute
from cutlass.cute.nvgpu import cpasync

from ts_runtime import WorkAttr, consumer_work, domain_loop, producer_work, schedule
from ts_runtime.memory import SmemAllocation, SmemAllocator
from ts_runtime.pipeline import Agent, CooperativeGroup
from ts_runtime.resources import MemoryResource, PipelineConfig, StageInfo, TaskLocalVariable
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager

TILE_COLS = 128                      # one CTA copies a 128-column strip, one row per stage
DTYPE = cutlass.Float16
STAGE_BYTES = TILE_COLS * DTYPE.width // 8


@dataclass(kw_only=True)
class InputCoords(MemoryResource):
    """Source matrix as seen by TMA: consumer work only computes the row to load."""
    row: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()

    def __post_init__(self) -> None:
        self.row = TaskLocalVariable(dtype=cutlass.Int32, default=cutlass.Int32(0))

    @consumer_work(returns=row)
    @cute.jit
    def compute_coords(self, stage_info: StageInfo) -> cutlass.Int32:
        return cutlass.Int32(stage_info.loop_offset)


@dataclass(kw_only=True)
class SmemTile(MemoryResource):
    """`num_stages` row tiles in SMEM; TMA writes them, store warps read them."""
    num_stages: cutlass.Constexpr[int] = 2
    tma_atom: object = None
    tma_tensor: cute.Tensor = None
    value: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    alloc: cutlass.Constexpr[SmemAllocation] = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.value = TaskLocalVariable(dtype=DTYPE, default=DTYPE(0))
        self.alloc = SmemAllocation("smem_tile", dtype=DTYPE,
                                     count=self.num_stages * TILE_COLS, alignment=128)

    def get_smem_requirements(self):
        return [self.alloc]

    @cute.jit
    def _stage(self, stage_info: StageInfo) -> cute.Tensor:
        base = stage_info.context.smem_base.data_ptr() + self.alloc.offset
        ptr = cute.make_ptr(DTYPE, base.to_llvm_ptr(), assumed_align=128)
        ptr = ptr + stage_info.stage_idx * TILE_COLS
        return cute.make_tensor(ptr, cute.make_layout((1, TILE_COLS), stride=(TILE_COLS, 1)))

    @producer_work(work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def prefetch_descriptor(self, stage_info: StageInfo) -> None:
        cpasync.prefetch_descriptor(self.tma_atom)

    @producer_work
    @cute.jit
    def tma_load(self, stage_info: StageInfo, row: cutlass.Int32) -> None:
        bx, _, _ = cute.arch.block_idx()
        g_tile = cute.local_tile(self.tma_tensor, (1, TILE_COLS), (row, bx))
        s_part, g_part = cpasync.tma_partition(
            self.tma_atom, 0, cute.make_layout(1),
            cute.group_modes(self._stage(stage_info), 0, 2), cute.group_modes(g_tile, 0, 2))
        mbar = cute.make_ptr(cutlass.Int64, stage_info.barrier.data_ptr().to_llvm_ptr(),
                             assumed_align=8)
        cute.copy(self.tma_atom, g_part, s_part, tma_bar_ptr=mbar)

    @consumer_work(returns=value)
    @cute.jit
    def read_smem(self, stage_info: StageInfo) -> cutlass.Float16:
        tx, _, _ = cute.arch.thread_idx()
        return self._stage(stage_info)[0, tx]


@dataclass(kw_only=True)
class OutputGmem(MemoryResource):
    dst: cute.Tensor = None

    @producer_work
    @cute.jit
    def store(self, stage_info: StageInfo, value: cutlass.Float16) -> None:
        bx, _, _ = cute.arch.block_idx()
        tx, _, _ = cute.arch.thread_idx()
        self.dst[stage_info.loop_offset, bx * TILE_COLS + tx] = value


def make_task_manager(*, num_rows, num_stages: int = 2, store_warps: int = 4,
                      tma_atom=None, tma_tensor=None, dst=None,
                      verbose: bool = False) -> TaskManager:
    coords = InputCoords(name="coords")
    smem = SmemTile(
        name="smem",
        num_stages=num_stages,
        tma_atom=tma_atom,
        tma_tensor=tma_tensor,
        pipeline_config=PipelineConfig.create_tma_async_pipeline_cfg(
            num_stages=num_stages,
            num_bytes=STAGE_BYTES,
            producer_group=CooperativeGroup(Agent.Thread),
            consumer_group=CooperativeGroup(Agent.Thread, store_warps * 32),
        ),
    )
    out = OutputGmem(name="out", dst=dst)
    allocator = SmemAllocator()
    allocator.add_resource(smem)
    allocator.compute_layout()

    @schedule
    def load_schedule(coords: InputCoords, smem: SmemTile) -> None:
        smem.prefetch_descriptor()
        with domain_loop(0, num_rows, 1):
            row = coords.compute_coords()
            smem.try_acquire()
            smem.acquire()
            smem.commit()
            smem.tma_load(row=row)  # expect: TS209

    @schedule
    def store_schedule(smem: SmemTile, out: OutputGmem) -> None:
        with domain_loop(0, num_rows, 1):
            smem.try_wait()
            smem.wait()
            value = smem.read_smem()
            smem.release()                 # the value is in registers: release early
            out.store(value=value)

    @schedule
    def padding_schedule() -> None:
        with domain_loop(0, 1, 1):
            pass

    tasks = [
        Task(name="StoreTask", src_resources=[smem], dst_resources=[out],
             warp_idx=0, num_warps=store_warps, schedule=store_schedule(smem, out),
             num_registers=160),
        Task(name="LoadTask", src_resources=[coords], dst_resources=[smem],
             warp_idx=store_warps, num_warps=1, schedule=load_schedule(coords, smem),
             num_registers=40),
        Task(name="PaddingTask", src_resources=[], dst_resources=[],
             warp_idx=store_warps + 1, num_warps=3, schedule=padding_schedule(),
             num_registers=40),
    ]
    return TaskManager(
        tasks=tasks,
        resource_dependency_graph={smem: [coords], out: [smem]},
        smem_allocator=allocator,
        verbose=verbose,
    )


def build(num_rows: int = 8, num_stages: int = 2, verbose: bool = False) -> TaskManager:
    """Host-side validation with plain ints (no GPU, no kernel)."""
    return make_task_manager(num_rows=num_rows, num_stages=num_stages, verbose=verbose)


@cute.kernel
def tma_copy_kernel(tma_atom: cute.CopyAtom, tma_tensor: cute.Tensor, dst: cute.Tensor,
                    num_rows: cutlass.Int32, num_stages: cutlass.Constexpr):
    tm = make_task_manager(num_rows=num_rows, num_stages=num_stages, tma_atom=tma_atom,
                           tma_tensor=tma_tensor, dst=dst)
    tm.setup_resources_and_tasks()
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    tm.run()


@cute.jit
def tma_copy(src: cute.Tensor, dst: cute.Tensor, stream, num_stages: cutlass.Constexpr = 2):
    smem_layout = cute.make_layout((1, TILE_COLS), stride=(TILE_COLS, 1))
    tma_atom, tma_tensor = cpasync.make_tiled_tma_atom(
        cpasync.CopyBulkTensorTileG2SOp(), src, smem_layout, (1, TILE_COLS))
    num_rows, num_cols = src.shape
    tma_copy_kernel(tma_atom, tma_tensor, dst, num_rows, num_stages).launch(
        grid=(num_cols // TILE_COLS, 1, 1), block=(8 * 32, 1, 1), stream=stream)


def compile_fake(num_rows: int = 256, num_cols: int = 512):
    """Trace and compile the kernel with fake tensors (CUTE_DSL_ARCH=sm_100a; no GPU)."""
    from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream
    src = make_fake_compact_tensor(DTYPE, (num_rows, num_cols), stride_order=(1, 0),
                                   assumed_align=16)
    dst = make_fake_compact_tensor(DTYPE, (num_rows, num_cols), stride_order=(1, 0),
                                   assumed_align=16)
    return cute.compile(tma_copy, src, dst, make_fake_stream())


def run_on_gpu(num_rows: int = 1000, num_cols: int = 128 * 66, num_stages: int = 2,
               seed: int = 0) -> dict:
    """Compile for the local GPU (TMA: sm_90+), copy a fresh random fp16 matrix into a
    NaN-poisoned output and compare bit for bit. Returns {"ok", "mismatches", "launch",
    "bytes"}; `launch()` reruns the compiled kernel (benchmarks)."""
    import torch
    from cutlass.cute.runtime import from_dlpack
    from cutlass.torch import current_stream

    assert num_cols % TILE_COLS == 0, "num_cols must be a multiple of 128"
    gen = torch.Generator(device="cuda").manual_seed(seed)
    src = torch.randn(num_rows, num_cols, dtype=torch.float16, device="cuda", generator=gen)
    dst = torch.full_like(src, float("nan"))
    src_c, dst_c = from_dlpack(src, assumed_align=16), from_dlpack(dst, assumed_align=16)
    stream = current_stream()
    compiled = cute.compile(tma_copy, src_c, dst_c, stream, num_stages)
    compiled(src_c, dst_c, stream)
    torch.cuda.synchronize()
    bad = int((dst.view(torch.int16) != src.view(torch.int16)).sum())
    return {"ok": bad == 0, "mismatches": bad, "bytes": 2 * src.numel() * src.element_size(),
            "launch": lambda: compiled(src_c, dst_c, stream), "src": src, "dst": dst}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--num-rows", type=int, default=8)
    ap.add_argument("--num-stages", type=int, default=2)
    ap.add_argument("--verbose", action="store_true", help="print the schedule table")
    ap.add_argument("--compile", action="store_true", help="also compile with fake tensors")
    ap.add_argument("--gpu", action="store_true", help="run on the local GPU and check the result")
    args = ap.parse_args()
    build(num_rows=args.num_rows, num_stages=args.num_stages, verbose=args.verbose)
    if args.compile:
        compile_fake()
    if args.gpu:
        res = run_on_gpu(num_stages=args.num_stages)
        print("GPU:", "match" if res["ok"] else f"{res['mismatches']} mismatches")
        if not res["ok"]:
            raise SystemExit(1)
    print("OK")
