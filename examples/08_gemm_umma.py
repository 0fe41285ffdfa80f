"""A real single-CTA Blackwell UMMA GEMM, D = A @ B^T (fp16 in, fp32 accumulate, fp16 out).

Example 05's schedule with real work bodies, so the generated code holds every
instruction family a Blackwell TS GEMM needs: TMA loads of the A / B K-slices into a
TmaUmma ring (`cp.async.bulk.tensor`), `tcgen05.mma` from SMEM descriptors into a TMEM
accumulator (UmmaAsync), `tcgen05.commit` onto the barriers, and a `tcgen05.ld`
epilogue. K-major inputs; one 128 x 128 tile per CTA, K in slices of 64.

    LoadTask [warp 4]  --SmemAB (TmaUmma)-->  MmaTask [warp 5]  --TmemAcc (UmmaAsync)-->  StoreTask [warps 0-3]

Blackwell-only (tcgen05): on Hopper it is compile-only. `tests/codegen/test_compile.py`
checks its PTX and SASS, and that the reference builds the same program.

    python examples/08_gemm_umma.py                                # validate the schedule, print OK
    CUTE_DSL_ARCH=sm_100a python examples/08_gemm_umma.py --compile  # also compile with fake tensors
"""
import argparse
from dataclasses import dataclass, field

import cutlass
import cutlass.cute as cute
import cutlass.utils.blackwell_helpers as sm100_utils
from cutlass.cute.nvgpu import cpasync, tcgen05

from ts_runtime import consumer_work, domain_loop, producer_work, schedule
from ts_runtime.memory import SmemAllocation, SmemAllocator, TmemAllocation, TmemAllocator
from ts_runtime.pipeline import Agent, CooperativeGroup
from ts_runtime.resources import MemoryResource, PipelineConfig, StageInfo, TaskLocalVariable
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager

TILE_M, TILE_N, TILE_K = 128, 128, 64
AB, ACC = cutlass.Float16, cutlass.Float32
STAGES = 3
CLUSTER = (1, 1, 1, 1)
MMA_WARP = 5


def _tiled_mma():
    return sm100_utils.make_trivial_tiled_mma(AB, AB, tcgen05.OperandMajorMode.K, tcgen05.OperandMajorMode.K,
                                              ACC, tcgen05.CtaGroup.ONE, (TILE_M, TILE_N))


def _smem_layouts():
    """The staged, swizzled SMEM layouts of A and B (compile-time values, rebuilt where
    needed rather than stored in resources)."""
    tiled_mma, tiler = _tiled_mma(), (TILE_M, TILE_N, TILE_K)
    return (sm100_utils.make_smem_layout_a(tiled_mma, tiler, AB, STAGES),
            sm100_utils.make_smem_layout_b(tiled_mma, tiler, AB, STAGES))


def _smem_tensor(stage_info, alloc, layout):
    base = stage_info.context.smem_base.data_ptr() + alloc.offset
    ptr = cute.make_ptr(AB, base.to_llvm_ptr(), assumed_align=1024)
    return cute.make_tensor(cute.recast_ptr(ptr, layout.inner, dtype=AB), layout.outer)


@dataclass(kw_only=True)
class SmemAB(MemoryResource):
    """`STAGES` A (128 x 64) and B (128 x 64) K-slices, filled by TMA, read by UMMA."""
    tiled_mma: cute.TiledMma = None
    atom_a: object = None
    atom_b: object = None
    tma_a: cute.Tensor = None
    tma_b: cute.Tensor = None
    stage: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    alloc_a: cutlass.Constexpr[SmemAllocation] = field(init=False, default=None)
    alloc_b: cutlass.Constexpr[SmemAllocation] = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.stage = TaskLocalVariable(dtype=cutlass.Int32, default=cutlass.Int32(0))
        self.alloc_a = SmemAllocation("smem_a", dtype=AB, count=STAGES * TILE_M * TILE_K, alignment=1024)
        self.alloc_b = SmemAllocation("smem_b", dtype=AB, count=STAGES * TILE_N * TILE_K, alignment=1024)

    def get_smem_requirements(self):
        return [self.alloc_a, self.alloc_b]

    @cute.jit
    def _load(self, stage_info: StageInfo, atom, tma, alloc, layout, rows: cutlass.Constexpr, coord):
        thr_mma = self.tiled_mma.get_slice(0)
        g = cute.local_tile(tma, (rows, TILE_K), (coord, None))             # (rows, 64, RestK)
        tCg = thr_mma.partition_A(g) if alloc is self.alloc_a else thr_mma.partition_B(g)
        s = _smem_tensor(stage_info, alloc, layout)                          # (MMA, MMA_M, MMA_K, STAGE)
        s_part, g_part = cpasync.tma_partition(atom, 0, cute.make_layout(1), cute.group_modes(s, 0, 3),
                                               cute.group_modes(tCg, 0, 3))
        mbar = cute.make_ptr(cutlass.Int64, stage_info.barrier.data_ptr().to_llvm_ptr(), assumed_align=8)
        cute.copy(atom, g_part[(None, stage_info.loop_offset)], s_part[(None, stage_info.stage_idx)],
                  tma_bar_ptr=mbar)

    @producer_work
    @cute.jit
    def tma_load(self, stage_info: StageInfo) -> None:
        bx, by, _ = cute.arch.block_idx()
        layout_a, layout_b = _smem_layouts()
        self._load(stage_info, self.atom_a, self.tma_a, self.alloc_a, layout_a, TILE_M, bx)
        self._load(stage_info, self.atom_b, self.tma_b, self.alloc_b, layout_b, TILE_N, by)

    @consumer_work(returns=stage)
    @cute.jit
    def stage_index(self, stage_info: StageInfo) -> cutlass.Int32:
        return cutlass.Int32(stage_info.stage_idx)


@dataclass(kw_only=True)
class TmemAcc(MemoryResource):
    """The fp32 128 x 128 accumulator in TMEM; the epilogue writes it to D as fp16."""
    tiled_mma: cute.TiledMma = None
    d: cute.Tensor = None
    alloc_a: cutlass.Constexpr = None
    alloc_b: cutlass.Constexpr = None
    alloc_acc: cutlass.Constexpr[TmemAllocation] = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.alloc_acc = TmemAllocation("tmem_acc", TILE_N)

    def get_tmem_requirements(self):
        return [self.alloc_acc]

    @cute.jit
    def _acc(self, stage_info: StageInfo):
        mailbox = cute.make_ptr(cutlass.Int32, stage_info.context.tmem_ptr_i32.data_ptr().to_llvm_ptr(),
                                assumed_align=4)
        tmem = cute.arch.retrieve_tmem_ptr(ACC, alignment=16, ptr_to_buffer_holding_addr=mailbox)
        shape = self.tiled_mma.partition_shape_C((TILE_M, TILE_N))
        return cute.make_tensor(tmem, self.tiled_mma.make_fragment_C(shape).layout)

    @producer_work
    @cute.jit
    def mma(self, stage_info: StageInfo, stage: cutlass.Int32) -> None:
        acc = self._acc(stage_info)
        tiled_mma = _tiled_mma()           # a local atom: its ACCUMULATE field is set per K-block
        layout_a, layout_b = _smem_layouts()
        sA = _smem_tensor(stage_info, self.alloc_a, layout_a)
        sB = _smem_tensor(stage_info, self.alloc_b, layout_b)
        tCrA = tiled_mma.make_fragment_A(sA)
        tCrB = tiled_mma.make_fragment_B(sB)
        for kb in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):
            # the first K-block of the first slice overwrites the accumulator
            tiled_mma.set(tcgen05.Field.ACCUMULATE, (stage_info.loop_offset != 0) | (kb != 0))
            cute.gemm(tiled_mma, acc, tCrA[(None, None, kb, stage)], tCrB[(None, None, kb, stage)], acc)

    @consumer_work
    @cute.jit
    def store(self, stage_info: StageInfo) -> None:
        bx, by, _ = cute.arch.block_idx()
        tx, _, _ = cute.arch.thread_idx()
        acc = self._acc(stage_info)
        gD = cute.local_tile(self.d, (TILE_M, TILE_N), (bx, by))
        tCgD = self.tiled_mma.get_slice(0).partition_C(gD)
        epi = ((cute.size(acc, mode=[0, 0]), cute.size(acc, mode=[0, 1]) // 4),)
        acc_epi = cute.zipped_divide(acc, epi)
        gD_epi = cute.zipped_divide(tCgD, epi)
        atom = cute.make_copy_atom(tcgen05.Ld32x32bOp(tcgen05.Repetition.x32), ACC)
        t2r = tcgen05.make_tmem_copy(atom, acc_epi[None, 0])
        thr = t2r.get_slice(tx)
        tDtAcc = thr.partition_S(acc_epi)
        tDgD = thr.partition_D(gD_epi)
        r_acc = cute.make_rmem_tensor(tDgD[None, None, 0].shape, ACC)
        r_d = cute.make_rmem_tensor(tDgD[None, None, 0].shape, self.d.element_type)
        for i in cutlass.range_constexpr(cute.size(tDtAcc, mode=[2])):
            cute.copy(t2r, tDtAcc[None, None, i], r_acc)
            r_d.store(r_acc.load().to(self.d.element_type))
            cute.autovec_copy(r_d, tDgD[None, None, i])


def make_task_manager(*, num_k_tiles, tiled_mma=None, atoms=(None, None), tmas=(None, None), d=None):
    smem_allocator = SmemAllocator()
    tmem_ptr = smem_allocator.add_tmem_ptr(SmemAllocation("tmem_ptr", dtype=cutlass.Int32, count=1, alignment=4))
    smem_ab = SmemAB(name="smem_ab", tiled_mma=tiled_mma, atom_a=atoms[0], atom_b=atoms[1], tma_a=tmas[0],
                     tma_b=tmas[1],
                     pipeline_config=PipelineConfig.create_tma_umma_pipeline_cfg(
                         num_stages=STAGES, num_bytes=(TILE_M + TILE_N) * TILE_K * AB.width // 8,
                         producer_group=CooperativeGroup(Agent.Thread),
                         consumer_group=CooperativeGroup(Agent.Thread), cta_layout_vmnk=CLUSTER))
    acc = TmemAcc(name="acc", tiled_mma=tiled_mma, d=d, alloc_a=smem_ab.alloc_a, alloc_b=smem_ab.alloc_b,
                  pipeline_config=PipelineConfig.create_umma_async_pipeline_cfg(
                      num_stages=1, producer_group=CooperativeGroup(Agent.Thread),
                      consumer_group=CooperativeGroup(Agent.Thread, 4 * 32), cta_layout_vmnk=CLUSTER))
    smem_allocator.add_resource(smem_ab)
    smem_allocator.compute_layout()
    tmem_allocator = TmemAllocator()
    tmem_allocator.add_resource(acc)
    tmem_allocator.compute_layout()

    @schedule
    def load_schedule(smem_ab: SmemAB) -> None:
        with domain_loop(0, num_k_tiles, 1):
            smem_ab.acquire()
            smem_ab.tma_load()
            smem_ab.commit()

    @schedule
    def mma_schedule(smem_ab: SmemAB, acc: TmemAcc) -> None:
        acc.acquire()
        with domain_loop(0, num_k_tiles, 1):
            smem_ab.wait()
            stage = smem_ab.stage_index()
            acc.mma(stage=stage)
            smem_ab.release()          # after the MMA: tcgen05.commit frees the stage when it is done
        acc.commit()

    @schedule
    def store_schedule(acc: TmemAcc) -> None:
        with domain_loop(0, num_k_tiles, 1):
            pass
        acc.wait()
        acc.store()
        acc.release()

    tasks = [
        Task(name="StoreTask", src_resources=[acc], dst_resources=[], warp_idx=0, num_warps=4,
             schedule=store_schedule(acc)),
        Task(name="LoadTask", src_resources=[], dst_resources=[smem_ab], warp_idx=4, num_warps=1,
             schedule=load_schedule(smem_ab)),
        Task(name="MmaTask", src_resources=[smem_ab], dst_resources=[acc], warp_idx=MMA_WARP, num_warps=1,
             schedule=mma_schedule(smem_ab, acc)),
    ]
    tm = TaskManager(tasks=tasks, resource_dependency_graph={acc: [smem_ab]}, smem_allocator=smem_allocator,
                     tmem_allocator=tmem_allocator, verbose=False)
    return tm, smem_allocator, tmem_ptr


def build():
    return make_task_manager(num_k_tiles=4)[0]


@cute.kernel
def umma_kernel(tiled_mma: cute.TiledMma, atom_a: cute.CopyAtom, tma_a: cute.Tensor, atom_b: cute.CopyAtom,
                tma_b: cute.Tensor, d: cute.Tensor, num_k_tiles: cutlass.Int32):
    tm, smem_allocator, tmem_ptr = make_task_manager(num_k_tiles=num_k_tiles, tiled_mma=tiled_mma,
                                                     atoms=(atom_a, atom_b), tmas=(tma_a, tma_b), d=d)
    tm.setup_resources_and_tasks()
    cute.arch.mbarrier_init_fence()
    mailbox = cute.make_ptr(cutlass.Int32, smem_allocator.get(tmem_ptr).data_ptr().to_llvm_ptr(), assumed_align=4)
    _tmem(mailbox, alloc=True)
    cute.arch.sync_threads()
    tm.run()
    cute.arch.sync_threads()
    _tmem(mailbox, alloc=False)


@cute.jit
def _tmem(mailbox, alloc: cutlass.Constexpr):
    """The MMA warp allocates / frees the accumulator's TMEM columns (a function of its own:
    the runtime `if` must not carry the resources of the kernel body)."""
    if cute.arch.make_warp_uniform(cute.arch.warp_idx()) == MMA_WARP:
        if cutlass.const_expr(alloc):
            cute.arch.alloc_tmem(TILE_N, mailbox)
            cute.arch.relinquish_tmem_alloc_permit()
        else:
            cute.arch.dealloc_tmem(cute.arch.retrieve_tmem_ptr(ACC, alignment=16, ptr_to_buffer_holding_addr=mailbox),
                                   TILE_N)


@cute.jit
def umma_gemm(a: cute.Tensor, b: cute.Tensor, d: cute.Tensor, stream):
    tiled_mma = _tiled_mma()
    tiler = (TILE_M, TILE_N, TILE_K)
    layout_a, layout_b = _smem_layouts()
    op = cpasync.CopyBulkTensorTileG2SOp(tcgen05.CtaGroup.ONE)
    atom_a, tma_a = cute.nvgpu.make_tiled_tma_atom_A(op, a, cute.slice_(layout_a, (None, None, None, 0)), tiler,
                                                     tiled_mma)
    atom_b, tma_b = cute.nvgpu.make_tiled_tma_atom_B(op, b, cute.slice_(layout_b, (None, None, None, 0)), tiler,
                                                     tiled_mma)
    m, n = d.shape
    umma_kernel(tiled_mma, atom_a, tma_a, atom_b, tma_b, d, a.shape[1] // TILE_K).launch(
        grid=(m // TILE_M, n // TILE_N, 1), block=(6 * 32, 1, 1), stream=stream)


def compile_fake(m=256, n=256, k=512):
    from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream
    a = make_fake_compact_tensor(AB, (m, k), stride_order=(1, 0), assumed_align=16)
    b = make_fake_compact_tensor(AB, (n, k), stride_order=(1, 0), assumed_align=16)
    d = make_fake_compact_tensor(AB, (m, n), stride_order=(1, 0), assumed_align=16)
    return cute.compile(umma_gemm, a, b, d, make_fake_stream())


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--compile", action="store_true", help="also compile with fake tensors (sm_100a)")
    args = ap.parse_args()
    build()
    if args.compile:
        compile_fake()
    print("OK")
