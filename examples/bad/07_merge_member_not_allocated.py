# Single-defect variant of examples/07_pipeline_groups.py: a Merge member is not given to add_resource(); add_pipeline_group() reserves only the group's barriers, so smem_b's buffer keeps offset 0 over smem_a's.
# reference: ValueError: Exhaustive checker found 1 aliasing race(s)
"""07 - pipeline groups: a Merge (two producers, one consumer) and a Fork (one producer,
two consumers) sharing barriers.

Per row of three fp16 matrices A, B, X (one 128-column strip per CTA):

    C = A + B + X        D = 2 * X

* Merge `ab_sync` = {smem_a, smem_b}: warp 4 copies A into SMEM with plain threads
  (`AsyncAsync`), warp 5 loads B with TMA (`TmaAsync`). The add task (warps 0-3) waits on
  each member and frees both with a single `ab_sync.release()`.
* Fork `x_sync` = {smem_x_add, smem_x_scale}: two views of one SMEM buffer. Warp 6
  acquires both views, loads X once with TMA and publishes it with a single
  `x_sync.commit()`; the add task and the scale task (warps 8-11) each release their own
  view.

A grouped member is passed to a `@schedule` function as `group.member` (never bare), and
the group itself is passed for the one collapsed operation; in `Task(...)` lists members
appear as plain resources. Group barriers live in the `SmemAllocator`
(`add_pipeline_group`).
"""
import argparse
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
STAGE_BYTES = TILE_COLS * DTYPE.width // 8
CLUSTER = (1, 1, 1, 1)


@dataclass(kw_only=True)
class RowCoords(MemoryResource):
    row: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()

    def __post_init__(self) -> None:
        self.row = TaskLocalVariable(dtype=cutlass.Int32, default=cutlass.Int32(0))

    @consumer_work(returns=row)
    @cute.jit
    def compute_row(self, stage_info: StageInfo) -> cutlass.Int32:
        return cutlass.Int32(stage_info.loop_offset)


@dataclass(kw_only=True)
class RowTile(MemoryResource):
    """`num_stages` SMEM copies of one 128-column row strip; consumers read column tx."""
    num_stages: cutlass.Constexpr[int] = 2
    src: cute.Tensor = None            # GMEM tensor (thread copy) or TMA tensor
    tma_atom: object = None
    alloc: cutlass.Constexpr[SmemAllocation] = None       # given: a view of another tile
    value: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    is_view: cutlass.Constexpr[bool] = field(init=False, default=False)

    def __post_init__(self) -> None:
        self.value = TaskLocalVariable(dtype=DTYPE, default=DTYPE(0))
        self.is_view = self.alloc is not None
        if self.alloc is None:
            self.alloc = SmemAllocation(f"{self.name}_data", dtype=DTYPE,
                                        count=self.num_stages * TILE_COLS, alignment=128)

    def get_smem_requirements(self):
        # A view owns no bytes: declaring the owner's allocation again would make the
        # checker treat the two fork views as aliased buffers and report a race.
        return [] if self.is_view else [self.alloc]

    @cute.jit
    def _stage(self, stage_info: StageInfo) -> cute.Tensor:
        base = stage_info.context.smem_base.data_ptr() + self.alloc.offset
        ptr = cute.make_ptr(DTYPE, base.to_llvm_ptr(), assumed_align=128)
        return cute.make_tensor(ptr + stage_info.stage_idx * TILE_COLS,
                                cute.make_layout((1, TILE_COLS), stride=(TILE_COLS, 1)))

    @consumer_work(returns=value)
    @cute.jit
    def read(self, stage_info: StageInfo):
        tx, _, _ = cute.arch.thread_idx()
        return self._stage(stage_info)[0, tx % TILE_COLS]


@dataclass(kw_only=True)
class ThreadCopiedTile(RowTile):
    """Filled by one warp of plain threads (4 columns per lane)."""

    @producer_work
    @cute.jit
    def copy_in(self, stage_info: StageInfo, row: cutlass.Int32) -> None:
        bx, _, _ = cute.arch.block_idx()
        lane = cute.arch.lane_idx()
        tile = self._stage(stage_info)
        for i in cutlass.range_constexpr(TILE_COLS // 32):
            tile[0, lane + 32 * i] = self.src[row, bx * TILE_COLS + lane + 32 * i]


@dataclass(kw_only=True)
class TmaTile(RowTile):
    """Filled by one TMA load per stage."""

    @producer_work
    @cute.jit
    def tma_load(self, stage_info: StageInfo, row: cutlass.Int32) -> None:
        bx, _, _ = cute.arch.block_idx()
        g_tile = cute.local_tile(self.src, (1, TILE_COLS), (row, bx))
        s_part, g_part = cpasync.tma_partition(
            self.tma_atom, 0, cute.make_layout(1),
            cute.group_modes(self._stage(stage_info), 0, 2), cute.group_modes(g_tile, 0, 2))
        mbar = cute.make_ptr(cutlass.Int64, stage_info.barrier.data_ptr().to_llvm_ptr(),
                             assumed_align=8)
        cute.copy(self.tma_atom, g_part, s_part, tma_bar_ptr=mbar)


@dataclass(kw_only=True)
class OutputRow(MemoryResource):
    dst: cute.Tensor = None

    @producer_work
    @cute.jit
    def store_sum(self, stage_info: StageInfo, a: cutlass.Float16, b: cutlass.Float16,
                  x: cutlass.Float16) -> None:
        bx, _, _ = cute.arch.block_idx()
        tx, _, _ = cute.arch.thread_idx()
        self.dst[stage_info.loop_offset, bx * TILE_COLS + tx] = a + b + x

    @producer_work
    @cute.jit
    def store_scaled(self, stage_info: StageInfo, x: cutlass.Float16) -> None:
        bx, _, _ = cute.arch.block_idx()
        tx, _, _ = cute.arch.thread_idx()
        self.dst[stage_info.loop_offset, bx * TILE_COLS + tx % TILE_COLS] = x * DTYPE(2.0)


def _tma_cfg(num_stages: int) -> PipelineConfig:
    return PipelineConfig.create_tma_async_pipeline_cfg(
        num_stages=num_stages, num_bytes=STAGE_BYTES,
        producer_group=CooperativeGroup(Agent.Thread),
        consumer_group=CooperativeGroup(Agent.Thread, 128), cta_layout_vmnk=CLUSTER)


def make_task_manager(*, num_rows, num_stages: int = 2, a=None, b=None, tma_b=None,
                      x=None, tma_x=None, c=None, d=None, verbose: bool = False) -> TaskManager:
    rows = RowCoords(name="rows")
    smem_a = ThreadCopiedTile(
        name="smem_a", num_stages=num_stages, src=a,
        pipeline_config=PipelineConfig.create_async_async_pipeline_cfg(
            num_stages=num_stages, producer_group=CooperativeGroup(Agent.Thread, 32),
            consumer_group=CooperativeGroup(Agent.Thread, 128), cta_layout_vmnk=CLUSTER))
    smem_b = TmaTile(name="smem_b", num_stages=num_stages, src=b, tma_atom=tma_b,
                     pipeline_config=_tma_cfg(num_stages))
    smem_x_add = TmaTile(name="smem_x_add", num_stages=num_stages, src=x, tma_atom=tma_x,
                         pipeline_config=_tma_cfg(num_stages))
    smem_x_scale = RowTile(name="smem_x_scale", num_stages=num_stages, alloc=smem_x_add.alloc,
                           pipeline_config=_tma_cfg(num_stages))
    ab_sync = PipelineGroup(name="ab_sync", members=[smem_a, smem_b],
                            mode=PipelineGroupMode.Merge)
    x_sync = PipelineGroup(name="x_sync", members=[smem_x_add, smem_x_scale],
                           mode=PipelineGroupMode.Fork)
    out_c = OutputRow(name="out_c", dst=c)
    out_d = OutputRow(name="out_d", dst=d)

    allocator = SmemAllocator()
    for res in (smem_a, smem_x_add):     # smem_b is only in the group: never laid out
        allocator.add_resource(res)
    allocator.add_pipeline_group(ab_sync)
    allocator.add_pipeline_group(x_sync)
    allocator.compute_layout()

    @schedule
    def load_a_schedule(rows: RowCoords, smem_a: ThreadCopiedTile) -> None:
        with domain_loop(0, num_rows, 1):
            row = rows.compute_row()
            smem_a.acquire()
            smem_a.copy_in(row=row)  # expect: TS802
            smem_a.commit()            # Merge producers commit their own member

    @schedule
    def load_b_schedule(rows: RowCoords, smem_b: TmaTile) -> None:
        with domain_loop(0, num_rows, 1):
            row = rows.compute_row()
            smem_b.try_acquire()
            smem_b.acquire()
            smem_b.tma_load(row=row)
            smem_b.commit()

    @schedule
    def load_x_schedule(rows: RowCoords, x_add: TmaTile, x_scale: RowTile,
                        x_sync: PipelineGroup) -> None:
        with domain_loop(0, num_rows, 1):
            row = rows.compute_row()
            x_add.acquire()
            x_scale.acquire()
            x_add.tma_load(row=row)
            x_sync.commit()            # one arrival publishes both views

    @schedule
    def add_schedule(smem_a: ThreadCopiedTile, smem_b: TmaTile, ab_sync: PipelineGroup,
                     x_add: TmaTile, out_c: OutputRow) -> None:
        with domain_loop(0, num_rows, 1):
            smem_a.wait()
            smem_b.wait()
            x_add.wait()
            a = smem_a.read()
            b = smem_b.read()
            x = x_add.read()
            ab_sync.release()          # one arrival frees both A and B
            x_add.release()
            out_c.store_sum(a=a, b=b, x=x)

    @schedule
    def scale_schedule(x_scale: RowTile, out_d: OutputRow) -> None:
        with domain_loop(0, num_rows, 1):
            x_scale.wait()
            x = x_scale.read()
            x_scale.release()
            out_d.store_scaled(x=x)

    tasks = [
        Task(name="AddTask", src_resources=[smem_a, smem_b, smem_x_add], dst_resources=[out_c],
             warp_idx=0, num_warps=4,
             schedule=add_schedule(ab_sync.smem_a, ab_sync.smem_b, ab_sync, x_sync.smem_x_add,
                                   out_c)),
        Task(name="LoadATask", src_resources=[rows], dst_resources=[smem_a], warp_idx=4,
             num_warps=1, schedule=load_a_schedule(rows, ab_sync.smem_a)),
        Task(name="LoadBTask", src_resources=[rows], dst_resources=[smem_b], warp_idx=5,
             num_warps=1, schedule=load_b_schedule(rows, ab_sync.smem_b)),
        Task(name="LoadXTask", src_resources=[rows], dst_resources=[smem_x_add, smem_x_scale],
             warp_idx=6, num_warps=1,
             schedule=load_x_schedule(rows, x_sync.smem_x_add, x_sync.smem_x_scale, x_sync)),
        Task(name="ScaleTask", src_resources=[smem_x_scale], dst_resources=[out_d],
             warp_idx=8, num_warps=4, schedule=scale_schedule(x_sync.smem_x_scale, out_d)),
    ]
    return TaskManager(
        tasks=tasks,
        resource_dependency_graph={
            # No `smem_x_scale: [rows]`: the loader writes X through `smem_x_add` only.
            smem_a: [rows], smem_b: [rows], smem_x_add: [rows],
            out_c: [smem_a, smem_b, smem_x_add], out_d: [smem_x_scale],
        },
        smem_allocator=allocator,
        verbose=verbose,
    )


def build(num_rows: int = 2, num_stages: int = 2, verbose: bool = False) -> TaskManager:
    """Host-side validation with plain ints (no GPU, no kernel)."""
    return make_task_manager(num_rows=num_rows, num_stages=num_stages, verbose=verbose)


@cute.kernel
def groups_kernel(a: cute.Tensor, tma_atom_b: cute.CopyAtom, tma_b: cute.Tensor,
                  tma_atom_x: cute.CopyAtom, tma_x: cute.Tensor, c: cute.Tensor,
                  d: cute.Tensor, num_rows: cutlass.Int32):
    tm = make_task_manager(num_rows=num_rows, a=a, b=tma_b, tma_b=tma_atom_b, x=tma_x,
                           tma_x=tma_atom_x, c=c, d=d)
    tm.setup_resources_and_tasks()
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    tm.run()


@cute.jit
def groups(a: cute.Tensor, b: cute.Tensor, x: cute.Tensor, c: cute.Tensor, d: cute.Tensor,
           stream):
    layout = cute.make_layout((1, TILE_COLS), stride=(TILE_COLS, 1))
    op = cpasync.CopyBulkTensorTileG2SOp()
    tma_atom_b, tma_b = cpasync.make_tiled_tma_atom(op, b, layout, (1, TILE_COLS))
    tma_atom_x, tma_x = cpasync.make_tiled_tma_atom(op, x, layout, (1, TILE_COLS))
    # A runtime row count: with a compile-time one the in-kernel validation would explore
    # every interleaving of all rows (see docs/dev/reference-oracle.md).
    groups_kernel(a, tma_atom_b, tma_b, tma_atom_x, tma_x, c, d, a.shape[0]).launch(
        grid=(a.shape[1] // TILE_COLS, 1, 1), block=(12 * 32, 1, 1), stream=stream)


def compile_fake(num_rows: int = 64, num_cols: int = 512):
    """Trace and compile the kernel with fake tensors (CUTE_DSL_ARCH=sm_100a; no GPU)."""
    from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream
    mats = [make_fake_compact_tensor(DTYPE, (num_rows, num_cols), stride_order=(1, 0),
                                     assumed_align=16) for _ in range(5)]
    return cute.compile(groups, *mats, make_fake_stream())


def run_on_gpu(num_rows: int = 300, num_cols: int = 128 * 40, seed: int = 0) -> dict:
    """Compile for the local GPU (TMA + thread pipelines: sm_90+) and check
    C == A + B + X and D == 2 X bit for bit on NaN-poisoned outputs."""
    import torch
    from cutlass.cute.runtime import from_dlpack
    from cutlass.torch import current_stream

    gen = torch.Generator(device="cuda").manual_seed(seed)
    a, b, x = (torch.randn(num_rows, num_cols, dtype=torch.float16, device="cuda", generator=gen)
               for _ in range(3))
    c, d = torch.full_like(a, float("nan")), torch.full_like(a, float("nan"))
    args = [from_dlpack(t, assumed_align=16) for t in (a, b, x, c, d)]
    stream = current_stream()
    compiled = cute.compile(groups, *args, stream)
    compiled(*args, stream)
    torch.cuda.synchronize()
    bits = lambda t: t.view(torch.int16)  # noqa: E731
    bad = int((bits(c) != bits(a + b + x)).sum()) + int((bits(d) != bits(x * 2)).sum())
    return {"ok": bad == 0, "mismatches": bad, "bytes": 5 * a.numel() * a.element_size(),
            "launch": lambda: compiled(*args, stream)}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--num-rows", type=int, default=2)
    ap.add_argument("--num-stages", type=int, default=2)
    ap.add_argument("--verbose", action="store_true", help="print the schedule table")
    ap.add_argument("--compile", action="store_true", help="also compile with fake tensors")
    args = ap.parse_args()
    build(num_rows=args.num_rows, num_stages=args.num_stages, verbose=args.verbose)
    if args.compile:
        compile_fake()
    print("OK")
