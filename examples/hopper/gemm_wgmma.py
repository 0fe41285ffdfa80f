"""Hopper GEMM as TS tasks: persistent, warp-specialized, TMA -> SMEM -> wgmma -> TMA store.

C (M x N, bf16) = A (M x K, bf16, K-major) x B (N x K, bf16, K-major)^T, fp32 accumulation.

    WorkQueue --tile--> SmemAB (TmaWgmma, S stages) --------> GmemC (TMA-store epilogue)
                  LoadTask [warp 0]      MmaTask [warps 4-11, two wgmma warpgroups]

* `SmemAB` holds `S` stages of a 128x64 A slice and a 256x64 B slice. One TMA warp fills
  them; in a 2x1 cluster the B slice is multicast: each CTA loads half of it into both
  CTAs, so a stage's `full` barrier expects the whole stage's bytes in every CTA and a
  release arrives on the `empty` barrier of both CTAs (consumer_group = 8 warps x 2).
* The pipeline type is `TmaWgmma` (a ts extension, docs/hopper.md): the consumer is a pair
  of wgmma warpgroups whose reads of a stage are asynchronous. The MMA task's `mma` work
  issues the stage's wgmmas and commits them as one wgmma group; the release of stage
  `k - 1` comes after the wait of stage `k` (`every(1, start=1)`) plus one release after the
  loop, so one stage's wgmmas are in flight while the next stage's are issued. ts emits
  `wgmma.wait_group(1)` before the in-loop release and `wgmma.wait_group(0)` before the
  tail release (the stages the task still holds), so a stage is only released once the
  wgmmas reading it have finished.
* The accumulators (64x256 fp32 per warpgroup) live in registers: the MMA task's task cache
  (`MmaTask.make_task_cache`) owns them; `num_registers` moves registers from the producer
  warpgroup (40) to the MMA warpgroups (232) with `setmaxnreg`.
* `GmemC.store_tile` is the epilogue: 128x32 subtiles go registers -> SMEM (stmatrix) ->
  global (TMA store, `cp.async.bulk.tensor`) through 4 SMEM buffers.
* The persistent static scheduler hands both CTAs of a cluster the two M-halves of one
  256-wide N strip; all tasks walk the same tiles. `VARIANTS` (benchmarks' `--variants`)
  select its tile order (swizzle) and a one-barrier epilogue.

`build()` validates the schedule on the host; `compile_fake()` compiles for sm_90a with fake
tensors (no GPU); `run_on_gpu()` checks against torch; `launcher()` is for benchmarks.
"""
import argparse
from dataclasses import dataclass, field

import cutlass
import cutlass.cute as cute
import cutlass.tensor_utils as tensor_utils
import cutlass.utils as utils

from ts_runtime import WorkAttr, consumer_work, producer_work
from ts_runtime.memory import SmemAllocation, SmemAllocator
from ts_runtime.pipeline import Agent, CooperativeGroup
from ts_runtime.resources import (MemoryResource, PipelineConfig, StageInfo, TileSchedulerConfig,
                                  WorkQueue)
from ts_runtime.schedule_builder import domain_loop, schedule, work_tile_loop
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager

TILE_M, TILE_N, TILE_K = 128, 256, 64
EPI_TILE = (128, 32)                   # epilogue subtile (both warpgroups)
EPI_STAGES = 4                         # SMEM buffers of the epilogue
NUM_STAGES = 4                         # 4 x 48 KiB of A/B + 32 KiB epilogue < 227 KiB
MMA_WARPS = 8                          # two consumer warpgroups, 64 rows each
LOAD_WARP, MMA_WARP0 = 0, 4
THREADS = (4 + MMA_WARPS) * 32
AB_DTYPE, ACC_DTYPE, C_DTYPE = cutlass.BFloat16, cutlass.Float32, cutlass.BFloat16
STAGE_BYTES = (TILE_M + TILE_N) * TILE_K * AB_DTYPE.width // 8
EPI_BARRIER_ID = 1                     # named barrier of the 256 MMA threads (0 = syncthreads)


def cluster_vmnk(cluster_m: int):
    return (1, cluster_m, 1, 1)


def _smem_tensor(stage_info: StageInfo, alloc, layout, dtype):
    """The staged SMEM tensor of one allocation (a swizzled ComposedLayout)."""
    base = stage_info.context.smem_base.data_ptr() + alloc.offset
    ptr = cute.make_ptr(dtype, base.to_llvm_ptr(), cute.AddressSpace.smem, assumed_align=1024)
    ptr = cute.recast_ptr(ptr, layout.inner, dtype=dtype)
    return cute.make_tensor(ptr, layout.outer)


@dataclass(kw_only=True)
class SmemAB(MemoryResource):
    """`num_stages` A (128x64) and B (256x64) K-slices; TMA writes them, wgmma reads them."""
    num_stages: cutlass.Constexpr[int] = NUM_STAGES
    cluster_m: cutlass.Constexpr[int] = 1
    tma_atom_a: object = None
    tma_tensor_a: cute.Tensor = None
    tma_atom_b: object = None
    tma_tensor_b: cute.Tensor = None
    tiled_mma: object = None
    a_layout: object = None            # staged, swizzled SMEM layouts
    b_layout: object = None
    alloc_a: cutlass.Constexpr[SmemAllocation] = field(init=False, default=None)
    alloc_b: cutlass.Constexpr[SmemAllocation] = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.alloc_a = SmemAllocation("smem_a", dtype=AB_DTYPE, count=self.num_stages * TILE_M * TILE_K,
                                      alignment=1024)
        self.alloc_b = SmemAllocation("smem_b", dtype=AB_DTYPE, count=self.num_stages * TILE_N * TILE_K,
                                      alignment=1024)

    def get_smem_requirements(self):
        return [self.alloc_a, self.alloc_b]

    @cute.jit
    def smem_a(self, stage_info: StageInfo) -> cute.Tensor:
        return _smem_tensor(stage_info, self.alloc_a, self.a_layout, AB_DTYPE)

    @cute.jit
    def smem_b(self, stage_info: StageInfo) -> cute.Tensor:
        return _smem_tensor(stage_info, self.alloc_b, self.b_layout, AB_DTYPE)

    @producer_work(work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def prefetch_descriptors(self, stage_info: StageInfo) -> None:
        cute.nvgpu.cpasync.prefetch_descriptor(self.tma_atom_a)
        cute.nvgpu.cpasync.prefetch_descriptor(self.tma_atom_b)

    @producer_work
    @cute.jit
    def tma_load(self, stage_info: StageInfo) -> None:
        """TMA loads of K-slice `loop_offset` of the current tile into stage `stage_idx`;
        in a cluster, B is multicast to the CTAs of the same N column."""
        tile_m, tile_n, _ = stage_info.work_tile.tile_idx
        k, stage = stage_info.loop_offset, stage_info.stage_idx
        mbar = cute.make_ptr(cutlass.Int64, stage_info.barrier.data_ptr().to_llvm_ptr(),
                             cute.AddressSpace.smem, assumed_align=8)
        g_a = cute.local_tile(self.tma_tensor_a, (TILE_M, TILE_K), (None, None))
        g_b = cute.local_tile(self.tma_tensor_b, (TILE_N, TILE_K), (None, None))
        s_a = cute.group_modes(self.smem_a(stage_info), 0, 2)
        s_b = cute.group_modes(self.smem_b(stage_info), 0, 2)
        t_sa, t_ga = cute.nvgpu.cpasync.tma_partition(
            self.tma_atom_a, 0, cute.make_layout(1), s_a, cute.group_modes(g_a, 0, 2))
        if cutlass.const_expr(self.cluster_m == 1):
            t_sb, t_gb = cute.nvgpu.cpasync.tma_partition(
                self.tma_atom_b, 0, cute.make_layout(1), s_b, cute.group_modes(g_b, 0, 2))
            cute.copy(self.tma_atom_b, t_gb[(None, tile_n, k)], t_sb[(None, stage)], tma_bar_ptr=mbar)
        else:
            cta_layout = cute.make_layout((self.cluster_m, 1, 1))
            rank = cute.arch.make_warp_uniform(cute.arch.block_idx_in_cluster())
            coord = cta_layout.get_flat_coord(rank)
            t_sb, t_gb = cute.nvgpu.cpasync.tma_partition(
                self.tma_atom_b, coord[0], cute.make_layout(self.cluster_m), s_b, cute.group_modes(g_b, 0, 2))
            mask = cute.make_layout_image_mask(cta_layout, coord, mode=0)
            cute.copy(self.tma_atom_b, t_gb[(None, tile_n, k)], t_sb[(None, stage)], tma_bar_ptr=mbar,
                      mcast_mask=mask)
        cute.copy(self.tma_atom_a, t_ga[(None, tile_m, k)], t_sa[(None, stage)], tma_bar_ptr=mbar)

    @consumer_work(work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def zero_accumulators(self, stage_info: StageInfo) -> None:
        stage_info.task_cache.acc.fill(0.0)

    @consumer_work
    @cute.jit
    def mma(self, stage_info: StageInfo) -> None:
        """Issues the stage's wgmmas (4 x k16) into the register accumulators and commits
        them as one wgmma group; the release (later) waits for the group."""
        c = stage_info.task_cache
        stage = stage_info.stage_idx
        cute.nvgpu.warpgroup.fence()
        for kb in cutlass.range_constexpr(cute.size(c.t_ra, mode=[2])):
            cute.gemm(self.tiled_mma, c.acc, c.t_ra[(None, None, kb, stage)], c.t_rb[(None, None, kb, stage)],
                      c.acc)
        cute.nvgpu.warpgroup.commit_group()


@dataclass(kw_only=True)
class GmemC(MemoryResource):
    """The output; its epilogue stages 128x32 subtiles in SMEM for TMA stores."""
    tma_atom_c: object = None
    tma_tensor_c: cute.Tensor = None
    epi_layout: object = None          # staged, swizzled SMEM layout of the epilogue
    epi_barriers: cutlass.Constexpr[int] = 2   # named barriers per subtile, 2 or 1 (store_tile)
    alloc_c: cutlass.Constexpr[SmemAllocation] = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.alloc_c = SmemAllocation("smem_c", dtype=C_DTYPE, count=EPI_STAGES * EPI_TILE[0] * EPI_TILE[1],
                                      alignment=1024)

    def get_smem_requirements(self):
        return [self.alloc_c]

    @cute.jit
    def smem_c(self, stage_info: StageInfo) -> cute.Tensor:
        return _smem_tensor(stage_info, self.alloc_c, self.epi_layout, C_DTYPE)

    @producer_work(work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def prefetch_descriptor(self, stage_info: StageInfo) -> None:
        cute.nvgpu.cpasync.prefetch_descriptor(self.tma_atom_c)

    @producer_work
    @cute.jit
    def store_tile(self, stage_info: StageInfo) -> None:
        """Accumulators -> bf16 -> SMEM subtile (stmatrix) -> TMA store, 8 subtiles.

        `epi_barriers=2`: after issuing store `g` the storing warp waits until at most
        `EPI_STAGES - 1` stores still read SMEM, and a second barrier publishes that before
        anyone writes buffer `g + 1`. `epi_barriers=1`: the storing warp waits until at most
        `EPI_STAGES - 2` stores still read, so store `g - 2` has read buffer `(g + 2) % 4`;
        the threads only write that buffer at subtile `g + 2`, after the barrier of subtile
        `g + 1`, which the storing warp reaches after its wait: one barrier per subtile."""
        c = stage_info.task_cache
        tile_m, tile_n, _ = stage_info.work_tile.tile_idx
        warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        g_c = cute.local_tile(self.tma_tensor_c, (TILE_M, TILE_N), (tile_m, tile_n))
        g_epi = cute.zipped_divide(g_c, EPI_TILE)
        s_c = self.smem_c(stage_info)
        t_sc, t_gc = cute.nvgpu.cpasync.tma_partition(
            self.tma_atom_c, 0, cute.make_layout(1), cute.group_modes(s_c, 0, 2), g_epi)
        n_sub = TILE_N // EPI_TILE[1]
        size_rd = cute.size(c.r_d)
        for sub in cutlass.range_constexpr(n_sub):
            for v in cutlass.range_constexpr(size_rd):
                c.r_d[v] = c.t_racc[sub * size_rd + v]
            c.r_out.store(c.r_d.load().to(C_DTYPE))
            buf = sub % EPI_STAGES
            cute.copy(c.r2s, c.r_out, c.t_sd[(None, None, None, buf)])
            cute.arch.fence_proxy("async.shared", space="cta")
            cute.arch.barrier(barrier_id=EPI_BARRIER_ID, number_of_threads=MMA_WARPS * 32)
            if warp == MMA_WARP0:
                cute.copy(self.tma_atom_c, t_sc[(None, buf)], t_gc[(None, (0, sub))])
                cute.arch.cp_async_bulk_commit_group()
                cute.arch.cp_async_bulk_wait_group(EPI_STAGES + self.epi_barriers - 3, read=True)
            if cutlass.const_expr(self.epi_barriers == 2):
                cute.arch.barrier(barrier_id=EPI_BARRIER_ID, number_of_threads=MMA_WARPS * 32)

    @producer_work(work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def drain_stores(self, stage_info: StageInfo) -> None:
        """After the last tile: the TMA stores have read their SMEM buffers."""
        warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        if warp == MMA_WARP0:
            cute.arch.cp_async_bulk_wait_group(0, read=True)


class MmaCache:
    """Per-thread state of the MMA warpgroups, built once at task start."""


class MmaTask(Task):
    """The two wgmma warpgroups; their register accumulators live in the task cache."""

    def make_task_cache(self):
        smem_ab = next(r for r in self.src_resources if isinstance(r, SmemAB))
        gmem_c = next(r for r in self.dst_resources if isinstance(r, GmemC))
        ctx = self._ts_ctx.context
        info = StageInfo(loop_offset=0, loop_start=0, loop_end=0, loop_step=1, stage_idx=0, label=None,
                         barrier=None, work_tile=None, num_active_stages=0, context=ctx, task_cache=None)
        tidx, _, _ = cute.arch.thread_idx()
        tid = tidx - MMA_WARP0 * 32
        tiled_mma = smem_ab.tiled_mma
        wg_layout = cute.make_layout(MMA_WARPS // 4, stride=128)
        thr_mma = tiled_mma.get_slice(wg_layout(cute.arch.make_warp_uniform(tid // 128)))
        c = MmaCache()
        c.t_ra = tiled_mma.make_fragment_A(thr_mma.partition_A(smem_ab.smem_a(info)))
        c.t_rb = tiled_mma.make_fragment_B(thr_mma.partition_B(smem_ab.smem_b(info)))
        acc_shape = thr_mma.partition_shape_C((TILE_M, TILE_N))
        c.acc = cute.make_rmem_tensor(acc_shape, ACC_DTYPE)
        tiled_mma.set(cute.nvgpu.warpgroup.Field.ACCUMULATE, True)
        # epilogue: registers -> SMEM with stmatrix, in the accumulator's thread layout
        import cutlass.utils.hopper_helpers as sm90
        atom_r2s = sm90.sm90_get_smem_store_op(tensor_utils.LayoutEnum.ROW_MAJOR, elem_ty_d=C_DTYPE,
                                               elem_ty_acc=ACC_DTYPE)
        atom_c = cute.make_copy_atom(cute.nvgpu.warp.StMatrix8x8x16bOp(False, 4), C_DTYPE)
        c.r2s = cute.make_tiled_copy_S(atom_r2s, cute.make_tiled_copy_C_atom(atom_c, tiled_mma))
        thr_r2s = c.r2s.get_slice(tid)
        s_c = gmem_c.smem_c(info)
        c.t_sd = thr_r2s.partition_D(s_c)
        c.t_racc = c.r2s.retile(c.acc)
        rd_shape = cute.shape(thr_r2s.partition_S(s_c))[:3]
        c.r_d = cute.make_rmem_tensor(rd_shape, ACC_DTYPE)
        c.r_out = cute.make_rmem_tensor(rd_shape, C_DTYPE)
        return c


def make_task_manager(*, k_tiles, cluster_m: int = 1, num_stages: int = NUM_STAGES, sched_params=None,
                      tma=None, tiled_mma=None, layouts=(None, None, None), epi_barriers: int = 2,
                      verbose: bool = False):
    tma = tma or {}
    vmnk = cluster_vmnk(cluster_m)
    work_queue = WorkQueue(
        name="work_queue",
        tile_scheduler_config=TileSchedulerConfig.create_static_persistent_tile_scheduler_params(
            tile_scheduler_params=sched_params),
    )
    smem_ab = SmemAB(
        name="smem_ab",
        num_stages=num_stages,
        cluster_m=cluster_m,
        tma_atom_a=tma.get("atom_a"), tma_tensor_a=tma.get("tensor_a"),
        tma_atom_b=tma.get("atom_b"), tma_tensor_b=tma.get("tensor_b"),
        tiled_mma=tiled_mma, a_layout=layouts[0], b_layout=layouts[1],
        pipeline_config=PipelineConfig.create_tma_wgmma_pipeline_cfg(
            num_stages=num_stages,
            num_bytes=STAGE_BYTES,
            producer_group=CooperativeGroup(Agent.Thread),
            # one arrival per MMA warp on the empty barrier of each CTA the stage is
            # multicast from (1 + cluster_m - 1 CTAs)
            consumer_group=CooperativeGroup(Agent.Thread, MMA_WARPS * cluster_m),
            cta_layout_vmnk=vmnk,
            advance_on_wait=True,          # the release cursor lags the wait cursor by a stage
        ),
    )
    gmem_c = GmemC(name="gmem_c", tma_atom_c=tma.get("atom_c"), tma_tensor_c=tma.get("tensor_c"),
                   epi_layout=layouts[2], epi_barriers=epi_barriers)
    allocator = SmemAllocator()
    allocator.add_resource(smem_ab)
    allocator.add_resource(gmem_c)
    allocator.compute_layout()

    @schedule
    def load_schedule(smem_ab: SmemAB, wq: WorkQueue) -> None:
        smem_ab.prefetch_descriptors()
        with work_tile_loop(wq):
            with domain_loop(0, k_tiles, 1):
                smem_ab.try_acquire()
                smem_ab.acquire()
                smem_ab.tma_load()
                smem_ab.commit()
            wq.try_wait()
            wq.wait()
            wq.get_and_advance_work_tile()
            wq.release()

    @schedule
    def mma_schedule(smem_ab: SmemAB, gmem_c: GmemC, wq: WorkQueue) -> None:
        gmem_c.prefetch_descriptor()
        with work_tile_loop(wq):
            smem_ab.zero_accumulators()
            with domain_loop(0, k_tiles, 1) as k:
                smem_ab.try_wait()
                smem_ab.wait()
                smem_ab.mma()
                with k.every(1, start=1):
                    smem_ab.release()      # stage k-1: its wgmma group is done
            smem_ab.release()              # the last stage, after wgmma.wait_group(0)
            gmem_c.store_tile()
            wq.try_wait()
            wq.wait()
            wq.get_and_advance_work_tile()
            wq.release()
        gmem_c.drain_stores()

    @schedule
    def padding_schedule(wq: WorkQueue) -> None:
        # warps 1-3 only complete the producer warpgroup (one register budget per 4 warps);
        # every task of a persistent kernel walks the work queue
        with work_tile_loop(wq):
            with domain_loop(0, 1, 1):
                pass
            wq.try_wait()
            wq.wait()
            wq.get_and_advance_work_tile()
            wq.release()

    tasks = [
        Task(name="LoadTask", src_resources=[work_queue], dst_resources=[smem_ab],
             warp_idx=LOAD_WARP, num_warps=1, schedule=load_schedule(smem_ab, work_queue),
             num_registers=40),
        Task(name="PaddingTask", src_resources=[work_queue], dst_resources=[], warp_idx=LOAD_WARP + 1,
             num_warps=3, schedule=padding_schedule(work_queue), num_registers=40),
        MmaTask(name="MmaTask", src_resources=[smem_ab, work_queue], dst_resources=[gmem_c],
                warp_idx=MMA_WARP0, num_warps=MMA_WARPS, schedule=mma_schedule(smem_ab, gmem_c, work_queue),
                num_registers=232),
    ]
    return TaskManager(
        tasks=tasks,
        resource_dependency_graph={smem_ab: [work_queue], gmem_c: [smem_ab]},
        smem_allocator=allocator,
        verbose=verbose,
    )


def build(m: int = 512, n: int = 512, k: int = 256, cluster_m: int = 2, verbose: bool = False):
    """Host-side validation with plain ints (no GPU, no kernel)."""
    return make_task_manager(k_tiles=k // TILE_K, cluster_m=cluster_m, verbose=verbose)


# --------------------------------------------------------------------------- kernel
@cute.kernel
def gemm_kernel(atom_a: cute.CopyAtom, tensor_a: cute.Tensor, atom_b: cute.CopyAtom, tensor_b: cute.Tensor,
                atom_c: cute.CopyAtom, tensor_c: cute.Tensor, tiled_mma: cute.TiledMma,
                a_layout: cute.ComposedLayout, b_layout: cute.ComposedLayout, epi_layout: cute.ComposedLayout,
                sched_params: utils.PersistentTileSchedulerParams, cluster_m: cutlass.Constexpr,
                epi_barriers: cutlass.Constexpr):
    tma = dict(atom_a=atom_a, tensor_a=tensor_a, atom_b=atom_b, tensor_b=tensor_b, atom_c=atom_c,
               tensor_c=tensor_c)
    k_tiles = cute.ceil_div(tensor_a.shape[1], TILE_K)
    tm = make_task_manager(k_tiles=k_tiles, cluster_m=cluster_m, sched_params=sched_params, tma=tma,
                           tiled_mma=tiled_mma, layouts=(a_layout, b_layout, epi_layout),
                           epi_barriers=epi_barriers)
    tm.setup_resources_and_tasks()
    cute.arch.mbarrier_init_fence()
    if cutlass.const_expr(cluster_m > 1):
        cute.arch.cluster_arrive_relaxed()     # barrier inits visible to the peer CTA
        cute.arch.cluster_wait()
    else:
        cute.arch.sync_threads()
    tm.run()


def _smem_layouts():
    import cutlass.utils.hopper_helpers as sm90
    from cutlass.cute.nvgpu import warpgroup

    def staged(rows, cols, stages, layout_enum, dtype):
        atom = warpgroup.make_smem_layout_atom(sm90.get_smem_layout_atom(layout_enum, dtype, cols), dtype)
        return cute.tile_to_shape(atom, (rows, cols, stages), order=(0, 1, 2))
    row = tensor_utils.LayoutEnum.ROW_MAJOR
    return (staged(TILE_M, TILE_K, NUM_STAGES, row, AB_DTYPE), staged(TILE_N, TILE_K, NUM_STAGES, row, AB_DTYPE),
            staged(EPI_TILE[0], EPI_TILE[1], EPI_STAGES, row, C_DTYPE))


@cute.jit
def gemm(a: cute.Tensor, b: cute.Tensor, c: cute.Tensor, stream, cluster_m: cutlass.Constexpr = 2,
         max_active_clusters: cutlass.Constexpr = 66, swizzle: cutlass.Constexpr = 1,
         raster_along_m: cutlass.Constexpr = True, epi_barriers: cutlass.Constexpr = 2):
    """a: (M, K), b: (N, K), c: (M, N), all row-major bf16; c = a @ b.T.

    `swizzle` / `raster_along_m`: the static scheduler's tile order (see `Variant`); pass a
    swizzle that divides the cluster count it groups (`effective_swizzle`)."""
    import cutlass.utils.hopper_helpers as sm90
    from cutlass.cute.nvgpu import cpasync
    a_layout, b_layout, epi_layout = _smem_layouts()
    tiled_mma = sm90.make_trivial_tiled_mma(AB_DTYPE, AB_DTYPE, cute.nvgpu.OperandMajorMode.K,
                                            cute.nvgpu.OperandMajorMode.K, ACC_DTYPE, (MMA_WARPS // 4, 1, 1),
                                            tiler_mn=(64, TILE_N))
    atom_a, tensor_a = cpasync.make_tiled_tma_atom(
        cpasync.CopyBulkTensorTileG2SOp(), a, cute.slice_(a_layout, (None, None, 0)), (TILE_M, TILE_K))
    b_op = cpasync.CopyBulkTensorTileG2SOp() if cluster_m == 1 else cpasync.CopyBulkTensorTileG2SMulticastOp()
    atom_b, tensor_b = cpasync.make_tiled_tma_atom(
        b_op, b, cute.slice_(b_layout, (None, None, 0)), (TILE_N, TILE_K), num_multicast=cluster_m)
    atom_c, tensor_c = cpasync.make_tiled_tma_atom(
        cpasync.CopyBulkTensorTileS2GOp(), c, cute.slice_(epi_layout, (None, None, 0)), EPI_TILE)
    m, n = c.shape
    tiles = (cute.ceil_div(m, TILE_M), cute.ceil_div(n, TILE_N), 1)
    params = utils.PersistentTileSchedulerParams(tiles, (cluster_m, 1, 1), swizzle, raster_along_m)
    grid = utils.StaticPersistentTileScheduler.get_grid_shape(params, max_active_clusters)
    gemm_kernel(atom_a, tensor_a, atom_b, tensor_b, atom_c, tensor_c, tiled_mma, a_layout, b_layout,
                epi_layout, params, cluster_m, epi_barriers).launch(
        grid=grid, block=(THREADS, 1, 1), cluster=(cluster_m, 1, 1), min_blocks_per_mp=1, stream=stream)


@dataclass(frozen=True)
class Variant:
    """Kernel options that leave the schedule alone (benchmarks compare them).

    * `swizzle` (in clusters) / `raster_along_m`: the static persistent scheduler's tile
      order (`PersistentTileSchedulerParams(swizzle_size, raster_along_m)`). swizzle 1 walks
      the clusters M-fastest (`raster_along_m`) or N-fastest. swizzle `s` > 1 with
      `raster_along_m` walks strips of `s` N-columns, N-fastest inside a strip and down all
      of M, so the clusters in flight at once cover a squarer block of C and share more
      A/B K-slices in L2 (at 8192^3, 66 clusters: 2 N-columns x 64 M-tiles with swizzle 1,
      8 x 16.5 with swizzle 8); `raster_along_m=False` swaps M and N.
    * `epi_barriers`: named barriers per epilogue subtile, 2 or 1 (`GmemC.store_tile`).
    """
    swizzle: int = 1
    raster_along_m: bool = True
    epi_barriers: int = 2

    @property
    def label(self) -> str:
        parts = []
        if self.swizzle > 1:
            parts.append(f"swizzle {self.swizzle} {'N-strips' if self.raster_along_m else 'M-strips'}")
        elif not self.raster_along_m:
            parts.append("N-fastest raster")
        if self.epi_barriers != 2:
            parts.append(f"{self.epi_barriers}-barrier epilogue")
        return ", ".join(parts)


VARIANTS = {
    "base": Variant(),
    "swz4": Variant(swizzle=4),
    "swz8": Variant(swizzle=8),
    "swz8-epi1": Variant(swizzle=8, epi_barriers=1),
    "epi1": Variant(epi_barriers=1),
    "swz8n": Variant(swizzle=8, raster_along_m=False),
}


def effective_swizzle(m: int, n: int, cluster_m: int, variant: Variant) -> int:
    """The largest power of two <= `variant.swizzle` that divides the cluster count the
    swizzle groups (N tiles when rastering along M, M clusters otherwise): the scheduler
    rounds that count up to a multiple of the swizzle and would hand out the padding tiles."""
    groups = -(-n // TILE_N) if variant.raster_along_m else -(-m // (TILE_M * cluster_m))
    s = 1
    while s * 2 <= variant.swizzle and groups % (s * 2) == 0:
        s *= 2
    return s


def _compile_args(m, n, cluster_m, variant: Variant):
    return (effective_swizzle(m, n, cluster_m, variant), variant.raster_along_m, variant.epi_barriers)


def compile_fake(m: int = 1024, n: int = 1024, k: int = 512, cluster_m: int = 2, variant: str = "base"):
    """Trace and compile the kernel with fake tensors (CUTE_DSL_ARCH=sm_90a; no GPU)."""
    from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream
    a = make_fake_compact_tensor(AB_DTYPE, (m, k), stride_order=(1, 0), assumed_align=16)
    b = make_fake_compact_tensor(AB_DTYPE, (n, k), stride_order=(1, 0), assumed_align=16)
    c = make_fake_compact_tensor(C_DTYPE, (m, n), stride_order=(1, 0), assumed_align=16)
    return cute.compile(gemm, a, b, c, make_fake_stream(), cluster_m, 66,
                        *_compile_args(m, n, cluster_m, VARIANTS[variant]))


def active_clusters(cluster_m: int) -> int:
    """Clusters of `cluster_m` CTAs that fit on the device at once (one CTA per SM)."""
    import torch
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    try:
        return max(1, min(sms // cluster_m, utils.HardwareInfo().get_max_active_clusters(cluster_m)))
    except Exception:             # older drivers / no occupancy query: one cluster per SM group
        return sms // cluster_m


def launcher(m: int, n: int, k: int, cluster_m: int = 2, seed: int = 0, variant: str = "base"):
    """Fresh random bf16 A (M x K), B (N x K) and a NaN-poisoned C on the GPU, the compiled
    kernel (options: `VARIANTS[variant]`), and a `launch()` closure. Returns {"a", "b", "c",
    "launch"}."""
    import torch
    from cutlass.cute.runtime import from_dlpack
    from cutlass.torch import current_stream

    assert m % (TILE_M * cluster_m) == 0 and n % TILE_N == 0 and k % TILE_K == 0
    gen = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(m, k, dtype=torch.bfloat16, device="cuda", generator=gen)
    b = torch.randn(n, k, dtype=torch.bfloat16, device="cuda", generator=gen)
    c = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
    ac, bc, cc = (from_dlpack(t, assumed_align=16) for t in (a, b, c))
    stream = current_stream()
    compiled = cute.compile(gemm, ac, bc, cc, stream, cluster_m, active_clusters(cluster_m),
                            *_compile_args(m, n, cluster_m, VARIANTS[variant]))
    return {"a": a, "b": b, "c": c, "launch": lambda: compiled(ac, bc, cc, stream)}


def run_on_gpu(m: int = 2048, n: int = 2048, k: int = 1024, cluster_m: int = 2, seed: int = 0,
               variant: str = "base") -> dict:
    """Runs once and compares with torch (fp32 reference of the bf16 inputs)."""
    import torch
    r = launcher(m, n, k, cluster_m, seed, variant)
    r["launch"]()
    torch.cuda.synchronize()
    ref = r["a"].float() @ r["b"].float().T
    out = r["c"].float()
    finite = bool(torch.isfinite(out).all())
    rel = float((out - ref).norm() / ref.norm())
    return {"ok": finite and rel < 1e-2, "rel_err": rel, "finite": finite, **r}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--verbose", action="store_true", help="print the schedule table")
    ap.add_argument("--compile", action="store_true", help="also compile with fake tensors (sm_90a)")
    ap.add_argument("--gpu", action="store_true", help="run on the local GPU and check the result")
    ap.add_argument("--variant", choices=sorted(VARIANTS), default="base", help="kernel options (VARIANTS)")
    args = ap.parse_args()
    build(verbose=args.verbose)
    if args.compile:
        compile_fake(variant=args.variant)
    if args.gpu:
        res = run_on_gpu(variant=args.variant)
        print("GPU:", "match" if res["ok"] else "MISMATCH", f"rel_err={res['rel_err']:.2e}")
        if not res["ok"]:
            raise SystemExit(1)
    print("OK")
