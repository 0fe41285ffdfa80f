"""Feature kernel: resource fields that `__init__` leaves None and work calls set (the
tutorials' style: `scale_d: Any = field(init=False, default=None)`, made a DSL value or a
Python bool by an init work call, reset per tile, updated by the MMA in the k loop).

colsum_acc.py's column sum, compiled with cute.FrontendNext, as an alternating sum
(row r counts with the sign (-1)^r) kept in such fields:

- `ColSum.acc` is None until `init_sum` (a work call before the work-tile loop) sets
  `Float32(0)`; `started` is None until `init_sum` sets a Python `False`; `reset` sets
  it `False` again at the start of every tile; `accumulate` keeps the sum only once
  `started`, then sets it True, as the tutorials' MMA does with `scale_d`. Codegen must
  carry both through the work-tile and domain loops although they were not DSL values
  when the task began, turning the Python bool into a Boolean as cute.FrontendNext does
  (`TaskEmitter.bind_region_attrs`); otherwise every row overwrites the sum.
- `ColSum.sign` is None until `reset`, inside the work-tile loop, sets `Float32(1)`;
  `accumulate` flips it. Codegen must carry it through the domain loop alone (it
  cannot be carried through the work-tile loop, where it has no value at the start);
  otherwise every row counts with +1.
- `Rows.seen` is set by the reduce task's work calls only (`init_read`, `read`). The load
  task, emitted after it in another branch, must not see (and carry) the reduce task's
  value: it does not exist there (`TaskEmitter.restore_attrs`; before it the IR did not
  verify: "operand does not dominate this use").
"""
from dataclasses import dataclass, field
from typing import Any

import cutlass
import cutlass.cute as cute
import cutlass.utils as utils

from ts_runtime import WorkAttr, consumer_work, domain_loop, producer_work, schedule, work_tile_loop
from ts_runtime.memory import SmemAllocation, SmemAllocator
from ts_runtime.pipeline import Agent, CooperativeGroup
from ts_runtime.resources import (MemoryResource, PipelineConfig, StageInfo, TaskLocalVariable,
                                  TileSchedulerConfig, WorkQueue)
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager

TILE = 128
STAGES = 4
REDUCE_WARPS = 4


@dataclass(kw_only=True)
class Rows(MemoryResource):
    src: Any = None
    buf: Any = field(init=False, default=None)
    seen: Any = field(init=False, default=None)
    row_val: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    alloc: cutlass.Constexpr = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.row_val = TaskLocalVariable(dtype=cutlass.Float32, default=cutlass.Float32(0))
        self.alloc = SmemAllocation("rows", dtype=cutlass.Float32, count=STAGES * TILE, alignment=128)

    def get_smem_requirements(self):
        return [self.alloc]

    @cute.jit
    def _bind(self, stage_info: StageInfo) -> None:
        self.buf = cutlass.Array(stage_info.context.smem_base.data_ptr() + self.alloc.offset,
                                 dtype=cutlass.Float32, shape=(STAGES * TILE,), addrspace=3)

    @producer_work(work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def init_load(self, stage_info: StageInfo) -> None:
        self._bind(stage_info)

    @consumer_work(work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def init_read(self, stage_info: StageInfo) -> None:
        self._bind(stage_info)
        self.seen = cutlass.Int32(0)

    @producer_work
    @cute.jit
    def load_row(self, stage_info: StageInfo) -> None:
        lane = cute.arch.thread_idx()[0] % 32
        tile_x, _, _ = stage_info.work_tile.tile_idx
        cur = self.buf.subview(stage_info.stage_idx * TILE)
        for i in cutlass.range_constexpr(TILE // 32):
            c = lane * (TILE // 32) + i
            cur.store(self.src[stage_info.loop_offset, tile_x * TILE + c], idx=c)

    @consumer_work(returns=row_val)
    @cute.jit
    def read(self, stage_info: StageInfo) -> cutlass.Float32:
        self.seen = self.seen + 1
        return self.buf[stage_info.stage_idx * TILE + cute.arch.thread_idx()[0]]


@dataclass(kw_only=True)
class ColSum(MemoryResource):
    dst: Any = None
    acc: Any = field(init=False, default=None)
    started: Any = field(init=False, default=None)
    sign: Any = field(init=False, default=None)

    @producer_work(work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def init_sum(self, stage_info: StageInfo) -> None:
        self.acc = cutlass.Float32(0)
        self.started = False

    @producer_work(work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def reset(self, stage_info: StageInfo) -> None:
        self.started = False
        self.sign = cutlass.Float32(1)

    @producer_work
    @cute.jit
    def accumulate(self, stage_info: StageInfo, row_val: cutlass.Float32) -> None:
        keep = cutlass.Float32(self.started)
        self.acc = self.acc * keep + row_val * self.sign
        self.started = True
        self.sign = -self.sign

    @producer_work
    @cute.jit
    def write_sum(self, stage_info: StageInfo) -> None:
        tile_x, _, _ = stage_info.work_tile.tile_idx
        self.dst[tile_x * TILE + cute.arch.thread_idx()[0]] = self.acc


def make_task_manager(*, num_rows, params=None, src=None, dst=None) -> TaskManager:
    wq = WorkQueue(name="wq", tile_scheduler_config=TileSchedulerConfig.create_static_persistent_tile_scheduler_params(
        tile_scheduler_params=params))
    cfg = PipelineConfig.create_async_async_pipeline_cfg(
        num_stages=STAGES, producer_group=CooperativeGroup(Agent.Thread, 32),
        consumer_group=CooperativeGroup(Agent.Thread, REDUCE_WARPS * 32), cta_layout_vmnk=(1, 1, 1, 1))
    rows = Rows(name="rows", src=src, pipeline_config=cfg)
    out = ColSum(name="colsum", dst=dst)
    allocator = SmemAllocator()
    allocator.add_resource(rows)
    allocator.compute_layout()

    @schedule
    def load(rows: Rows, wq: WorkQueue) -> None:
        rows.init_load()
        with work_tile_loop(wq):
            with domain_loop(0, num_rows, 1):
                rows.acquire()
                rows.load_row()
                rows.commit()
            wq.wait()
            wq.get_and_advance_work_tile()
            wq.release()

    @schedule
    def reduce(rows: Rows, out: ColSum, wq: WorkQueue) -> None:
        rows.init_read()
        out.init_sum()
        with work_tile_loop(wq):
            out.reset()
            with domain_loop(0, num_rows, 1):
                rows.wait()
                v = rows.read()
                rows.release()
                out.accumulate(row_val=v)
            out.write_sum()
            wq.wait()
            wq.get_and_advance_work_tile()
            wq.release()

    tasks = [
        Task(name="ReduceTask", src_resources=[wq, rows], dst_resources=[out], warp_idx=0,
             num_warps=REDUCE_WARPS, schedule=reduce(rows, out, wq)),
        Task(name="LoadTask", src_resources=[wq], dst_resources=[rows], warp_idx=REDUCE_WARPS, num_warps=1,
             schedule=load(rows, wq)),
    ]
    return TaskManager(tasks=tasks, resource_dependency_graph={rows: [wq], out: [rows]},
                       smem_allocator=allocator, verbose=False)


def build():
    return make_task_manager(num_rows=4)


@cute.kernel
def colsum_late_kernel(src: cute.Tensor, dst: cute.Tensor, params: utils.PersistentTileSchedulerParams):
    tm = make_task_manager(num_rows=src.shape[0], params=params, src=src, dst=dst)
    tm.setup_resources_and_tasks()
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    tm.run()


@cute.jit
def colsum_late(src: cute.Tensor, dst: cute.Tensor, stream, max_ctas: cutlass.Constexpr = 16):
    params = utils.PersistentTileSchedulerParams((src.shape[1] // TILE, 1, 1), (1, 1, 1))
    grid = utils.StaticPersistentTileScheduler.get_grid_shape(params, max_ctas)
    colsum_late_kernel(src, dst, params).launch(grid=grid, block=((REDUCE_WARPS + 1) * 32, 1, 1), stream=stream)


def compile_fake():
    from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream
    src = make_fake_compact_tensor(cutlass.Float32, (64, 1024), stride_order=(1, 0), assumed_align=16)
    dst = make_fake_compact_tensor(cutlass.Float32, (1024,), assumed_align=16)
    return cute.compile[cute.FrontendNext](colsum_late, src, dst, make_fake_stream())


def run_on_gpu(num_rows=97, num_cols=TILE * 37, max_ctas=8, seed=0) -> dict:
    import torch
    from cutlass.cute.runtime import from_dlpack
    from cutlass.torch import current_stream
    gen = torch.Generator(device="cuda").manual_seed(seed)
    # small integers: every partial sum is exact in float32, whatever the order
    src = torch.randint(-8, 9, (num_rows, num_cols), device="cuda", generator=gen).to(torch.float32)
    dst = torch.full((num_cols,), float("nan"), dtype=torch.float32, device="cuda")
    s, d = from_dlpack(src, assumed_align=16), from_dlpack(dst, assumed_align=16)
    stream = current_stream()
    compiled = cute.compile[cute.FrontendNext](colsum_late, s, d, stream, max_ctas)
    compiled(s, d, stream)
    torch.cuda.synchronize()
    signs = 1 - 2 * (torch.arange(num_rows, device="cuda") % 2).to(torch.float32)
    bad = int((dst != (src * signs[:, None]).sum(dim=0)).sum())
    return {"ok": bad == 0, "mismatches": bad}
