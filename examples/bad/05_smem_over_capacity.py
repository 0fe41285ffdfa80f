# Single-defect variant of examples/05_gemm_schedule.py: five 48 KiB A/B stages do not fit in 227 KiB of shared memory.
# reference: ValueError: exceeds hardware capacity (232448 B)
"""05 - the TS skeleton of a Blackwell GEMM: TMA -> SMEM -> UMMA -> TMEM -> epilogue.

    GmemAB --coords--> SmemAB (TmaUmma) --descs--> TmemAcc (UmmaAsync) --frag--> GmemD
      LoadTask [warp 4]          MmaTask [warp 5]          StoreTask [warps 0-3]

* `SmemAB` holds `num_stages` A and B K-slices; a TMA engine fills a stage and the
  tensor cores read it, so its pipeline is `TmaUmma` (one producer arrival, one
  consumer arrival per stage).
* `TmemAcc` is the accumulator in tensor memory: the MMA task acquires it before the K
  loop and commits after it; the epilogue warps (128 threads) drain it in the tail, one
  32-column subtile at a time (`subtile_idx` is a compile-time work argument).
* The MMA task releases each SMEM stage *after* issuing the MMA that reads it: the
  tensor cores read SMEM asynchronously (the DMA-ordering rule).
* `SmemAllocator` lays out A/B stages, barriers and the TMEM-address mailbox;
  `TmemAllocator` accounts the accumulator's columns (512 at most).

This example is about the schedule, not the arithmetic: the work bodies are stand-ins
that issue no TMA or MMA (a kernel built from them compiles but must not be launched).
"""
import argparse
from dataclasses import dataclass, field

import cutlass
import cutlass.cute as cute

from ts_runtime import WorkAttr, consumer_work, domain_loop, producer_work, schedule
from ts_runtime.memory import SmemAllocation, SmemAllocator, TmemAllocation, TmemAllocator
from ts_runtime.pipeline import Agent, CooperativeGroup
from ts_runtime.resources import MemoryResource, PipelineConfig, StageInfo, TaskLocalVariable
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager

TILE_M, TILE_N, TILE_K = 128, 256, 64
SUBTILE_N = 32
AB_DTYPE, ACC_DTYPE = cutlass.Float16, cutlass.Float32
CLUSTER = (1, 1, 1, 1)                 # cta_layout_vmnk: a single CTA


@dataclass(kw_only=True)
class GmemAB(MemoryResource):
    """Coordinates of the A/B K-slice for the current K iteration."""
    coord_k: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    coord_m: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    coord_n: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()

    def __post_init__(self) -> None:
        for name in ("coord_k", "coord_m", "coord_n"):
            setattr(self, name, TaskLocalVariable(dtype=cutlass.Int32, default=cutlass.Int32(0)))

    @consumer_work(returns=(coord_k, coord_m, coord_n))
    @cute.jit
    def compute_coords(self, stage_info: StageInfo):
        bx, by, _ = cute.arch.block_idx()
        return (cutlass.Int32(stage_info.loop_offset * TILE_K), cutlass.Int32(bx * TILE_M),
                cutlass.Int32(by * TILE_N))


@dataclass(kw_only=True)
class SmemAB(MemoryResource):
    """Staged A (TILE_M x TILE_K) and B (TILE_N x TILE_K) slices."""
    num_stages: cutlass.Constexpr[int] = 3
    desc_a: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    desc_b: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    alloc_a: cutlass.Constexpr[SmemAllocation] = field(init=False, default=None)
    alloc_b: cutlass.Constexpr[SmemAllocation] = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.desc_a = TaskLocalVariable(dtype=cutlass.Int64, default=cutlass.Int64(0))
        self.desc_b = TaskLocalVariable(dtype=cutlass.Int64, default=cutlass.Int64(0))
        self.alloc_a = SmemAllocation("smem_a", dtype=AB_DTYPE,
                                      count=self.num_stages * TILE_M * TILE_K, alignment=1024)
        self.alloc_b = SmemAllocation("smem_b", dtype=AB_DTYPE,
                                      count=self.num_stages * TILE_N * TILE_K, alignment=1024)

    def get_smem_requirements(self):
        return [self.alloc_a, self.alloc_b]

    @producer_work
    @cute.jit
    def tma_load(self, stage_info: StageInfo, coord_k: cutlass.Int32, coord_m: cutlass.Int32,
                 coord_n: cutlass.Int32) -> None:
        pass                           # stand-in: two TMA loads into stage `stage_idx`

    @consumer_work(returns=(desc_a, desc_b))
    @cute.jit
    def build_descriptors(self, stage_info: StageInfo):
        # stand-in: SMEM matrix descriptors of stage `stage_idx`
        return cutlass.Int64(stage_info.stage_idx), cutlass.Int64(stage_info.stage_idx)


@dataclass(kw_only=True)
class TmemAcc(MemoryResource):
    """FP32 accumulator tile (TILE_M x TILE_N) in tensor memory."""
    acc_stages: cutlass.Constexpr[int] = 1
    frag: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    alloc_acc: cutlass.Constexpr[TmemAllocation] = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.frag = TaskLocalVariable(dtype=ACC_DTYPE, default=ACC_DTYPE(0))
        self.alloc_acc = TmemAllocation("tmem_acc", TILE_N * self.acc_stages)

    def get_tmem_requirements(self):
        return [self.alloc_acc]

    @producer_work(work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def init_accumulator(self, stage_info: StageInfo) -> None:
        pass                           # stand-in: build the TMEM accumulator view

    @producer_work
    @cute.jit
    def mma(self, stage_info: StageInfo, desc_a: cutlass.Int64, desc_b: cutlass.Int64) -> None:
        pass                           # stand-in: TILE_K/16 tcgen05.mma instructions

    @consumer_work(returns=frag)
    @cute.jit
    def load_subtile(self, stage_info: StageInfo, *, subtile_idx: cutlass.Constexpr[int]):
        return ACC_DTYPE(subtile_idx)  # stand-in: tcgen05.ld of 32 columns


@dataclass(kw_only=True)
class GmemD(MemoryResource):
    d: cute.Tensor = None

    @producer_work
    @cute.jit
    def store(self, stage_info: StageInfo, frag: cutlass.Float32, *,
              subtile_idx: cutlass.Constexpr[int]) -> None:
        bx, by, _ = cute.arch.block_idx()
        tx, _, _ = cute.arch.thread_idx()
        row = bx * TILE_M + tx         # stand-in: a real epilogue stores a 32-wide fragment
        for j in cutlass.range_constexpr(SUBTILE_N):
            self.d[row, by * TILE_N + subtile_idx * SUBTILE_N + j] = frag.to(self.d.element_type)


def make_task_manager(*, num_k_tiles, num_stages: int = 3, d=None,
                      verbose: bool = False):
    smem_allocator = SmemAllocator()
    tmem_ptr = smem_allocator.add_tmem_ptr(
        SmemAllocation("tmem_ptr", dtype=cutlass.Int32, count=1, alignment=4))
    gmem_ab = GmemAB(name="gmem_ab")
    smem_ab = SmemAB(
        name="smem_ab",
        num_stages=num_stages,
        pipeline_config=PipelineConfig.create_tma_umma_pipeline_cfg(
            num_stages=num_stages,
            num_bytes=(TILE_M + TILE_N) * TILE_K * AB_DTYPE.width // 8,
            producer_group=CooperativeGroup(Agent.Thread),
            consumer_group=CooperativeGroup(Agent.Thread),
            cta_layout_vmnk=CLUSTER,
        ),
    )
    tmem_acc = TmemAcc(
        name="tmem_acc",
        pipeline_config=PipelineConfig.create_umma_async_pipeline_cfg(
            num_stages=1,
            producer_group=CooperativeGroup(Agent.Thread),
            consumer_group=CooperativeGroup(Agent.Thread, 4 * 32),
            cta_layout_vmnk=CLUSTER,
        ),
    )
    gmem_d = GmemD(name="gmem_d", d=d)
    smem_allocator.add_resource(smem_ab)
    smem_allocator.compute_layout()
    tmem_allocator = TmemAllocator()
    tmem_allocator.add_resource(tmem_acc)
    tmem_allocator.compute_layout()

    @schedule
    def load_schedule(gmem_ab: GmemAB, smem_ab: SmemAB) -> None:
        with domain_loop(0, num_k_tiles, 1):
            coord_k, coord_m, coord_n = gmem_ab.compute_coords()
            smem_ab.try_acquire()
            smem_ab.acquire()
            smem_ab.tma_load(coord_k=coord_k, coord_m=coord_m, coord_n=coord_n)
            smem_ab.commit()

    @schedule
    def mma_schedule(smem_ab: SmemAB, tmem_acc: TmemAcc) -> None:
        tmem_acc.init_accumulator()
        tmem_acc.try_acquire()
        tmem_acc.acquire()
        with domain_loop(0, num_k_tiles, 1):
            smem_ab.try_wait()
            smem_ab.wait()
            desc_a, desc_b = smem_ab.build_descriptors()
            tmem_acc.mma(desc_a=desc_a, desc_b=desc_b)
            smem_ab.release()          # after the MMA: the tensor cores read SMEM
        tmem_acc.commit()

    @schedule
    def store_schedule(tmem_acc: TmemAcc, gmem_d: GmemD) -> None:
        with domain_loop(0, num_k_tiles, 1):
            pass                       # the epilogue runs once, after the K loop
        tmem_acc.try_wait()
        tmem_acc.wait()
        for i in range(TILE_N // SUBTILE_N):
            frag = tmem_acc.load_subtile(subtile_idx=i)
            gmem_d.store(frag=frag, subtile_idx=i)
        tmem_acc.release()

    @schedule
    def padding_schedule() -> None:
        with domain_loop(0, 1, 1):
            pass

    tasks = [
        Task(name="StoreTask", src_resources=[tmem_acc], dst_resources=[gmem_d], warp_idx=0,
             num_warps=4, schedule=store_schedule(tmem_acc, gmem_d), num_registers=160),
        Task(name="LoadTask", src_resources=[gmem_ab], dst_resources=[smem_ab], warp_idx=4,
             num_warps=1, schedule=load_schedule(gmem_ab, smem_ab), num_registers=40),
        Task(name="MmaTask", src_resources=[smem_ab], dst_resources=[tmem_acc], warp_idx=5,
             num_warps=1, schedule=mma_schedule(smem_ab, tmem_acc), num_registers=40),
        Task(name="PaddingTask", src_resources=[], dst_resources=[], warp_idx=6,
             num_warps=2, schedule=padding_schedule(), num_registers=40),
    ]
    tm = TaskManager(
        tasks=tasks,
        resource_dependency_graph={smem_ab: [gmem_ab], tmem_acc: [smem_ab], gmem_d: [tmem_acc]},
        smem_allocator=smem_allocator,  # expect: TS707
        tmem_allocator=tmem_allocator,
        verbose=verbose,
    )
    return tm, smem_allocator, tmem_ptr


def build(num_k_tiles: int = 4, num_stages: int = 5,
          verbose: bool = False) -> TaskManager:
    """Host-side validation with plain ints (no GPU, no kernel)."""
    return make_task_manager(num_k_tiles=num_k_tiles, num_stages=num_stages,
                             verbose=verbose)[0]


@cute.kernel
def gemm_kernel(d: cute.Tensor, num_k_tiles: cutlass.Int32):
    tm, smem_allocator, tmem_ptr_alloc = make_task_manager(num_k_tiles=num_k_tiles, d=d)
    tm.setup_resources_and_tasks()
    cute.arch.mbarrier_init_fence()
    mailbox = smem_allocator.get(tmem_ptr_alloc).data_ptr().to_llvm_ptr()
    mailbox = cute.make_ptr(cutlass.Int32, mailbox, assumed_align=4)
    if cute.arch.warp_idx() == 5:      # the MMA warp owns the TMEM allocation
        cute.arch.alloc_tmem(TILE_N, mailbox)
        cute.arch.relinquish_tmem_alloc_permit()
    cute.arch.sync_threads()
    tm.run()
    cute.arch.sync_threads()
    if cute.arch.warp_idx() == 5:
        cute.arch.dealloc_tmem(cute.arch.retrieve_tmem_ptr(ACC_DTYPE, 16, mailbox), TILE_N)


@cute.jit
def gemm(d: cute.Tensor, num_k_tiles: cutlass.Int32, stream):
    m, n = d.shape
    gemm_kernel(d, num_k_tiles).launch(grid=(m // TILE_M, n // TILE_N, 1),
                                       block=(8 * 32, 1, 1), stream=stream)


def compile_fake(m: int = 256, n: int = 512, k: int = 256):
    """Trace and compile the kernel with fake tensors (CUTE_DSL_ARCH=sm_100a; no GPU)."""
    from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream
    d = make_fake_compact_tensor(cutlass.Float16, (m, n), stride_order=(1, 0))
    return cute.compile(gemm, d, cutlass.Int32(k // TILE_K), make_fake_stream())


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--num-k-tiles", type=int, default=4)
    ap.add_argument("--num-stages", type=int, default=3)
    ap.add_argument("--verbose", action="store_true", help="print the schedule table")
    ap.add_argument("--compile", action="store_true", help="also compile with fake tensors")
    args = ap.parse_args()
    build(num_k_tiles=args.num_k_tiles, num_stages=args.num_stages, verbose=args.verbose)
    if args.compile:
        compile_fake()
    print("OK")
