"""Feature kernel (Blackwell only): example 03's persistent copy on a CLC dynamic queue.

The WorkQueue owns a 2-stage ClcFetchAsync pipeline; a scheduler task (warp 4) acquires
a stage, issues the cluster-launch-control query (`fetch_work_tile`) and commits; the
copy task and the scheduler both consume every response with the standard epilogue.
Compile-only here (CLC does not exist on Hopper).
"""
from dataclasses import dataclass

import cutlass
import cutlass.cute as cute
import cutlass.utils as utils

from ts_runtime import producer_work
from ts_runtime.pipeline import Agent, CooperativeGroup
from ts_runtime.resources import MemoryResource, PipelineConfig, StageInfo, TileSchedulerConfig, WorkQueue
from ts_runtime.schedule_builder import domain_loop, schedule, work_tile_loop
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager

TILE_COLS = 128
STAGES = 2


@dataclass(kw_only=True)
class RowCopy(MemoryResource):
    src: cute.Tensor = None
    dst: cute.Tensor = None

    @producer_work
    @cute.jit
    def copy_row(self, stage_info: StageInfo) -> None:
        tx, _, _ = cute.arch.thread_idx()
        tile_x, _, _ = stage_info.work_tile.tile_idx
        col = tile_x * TILE_COLS + tx
        self.dst[stage_info.loop_offset, col] = self.src[stage_info.loop_offset, col]


def make_task_manager(*, num_rows, params=None, response=None, src=None, dst=None, verbose=False):
    wq = WorkQueue(
        name="wq",
        tile_scheduler_config=TileSchedulerConfig.create_clc_dynamic_persistent_tile_scheduler_params(
            tile_scheduler_params=params, response_ptr=response),
        pipeline_config=PipelineConfig.create_clc_fetch_async_pipeline_cfg(
            num_stages=STAGES, num_bytes=16, producer_group=CooperativeGroup(Agent.Thread),
            consumer_group=CooperativeGroup(Agent.Thread, 5 * 32), cta_layout_vmnk=(1, 1, 1, 1)),
    )
    row_copy = RowCopy(name="row_copy", src=src, dst=dst)

    @schedule
    def copy_schedule(row_copy: RowCopy, wq: WorkQueue) -> None:
        with work_tile_loop(wq):
            with domain_loop(0, num_rows, 1):
                row_copy.copy_row()
            wq.try_wait()
            wq.wait()
            wq.get_and_advance_work_tile()
            wq.release()

    @schedule
    def scheduler_schedule(wq: WorkQueue) -> None:
        with work_tile_loop(wq):
            with domain_loop(0, 1, 1):
                pass
            wq.try_acquire()
            wq.acquire()
            wq.fetch_work_tile()
            wq.commit()
            wq.try_wait()
            wq.wait()
            wq.get_and_advance_work_tile()
            wq.release()

    tasks = [
        Task(name="Copy", src_resources=[wq], dst_resources=[row_copy], warp_idx=0, num_warps=4,
             schedule=copy_schedule(row_copy, wq)),
        Task(name="Scheduler", src_resources=[wq], dst_resources=[wq], warp_idx=4, num_warps=1,
             schedule=scheduler_schedule(wq)),
    ]
    return TaskManager(tasks=tasks, resource_dependency_graph={row_copy: [wq], wq: [wq]}, verbose=verbose)


def build():
    return make_task_manager(num_rows=4)


@cute.kernel
def clc_copy_kernel(src: cute.Tensor, dst: cute.Tensor, params: utils.ClcDynamicPersistentTileSchedulerParams):
    slots = cutlass.Array(cutlass.Int32, 4 * STAGES, space=cutlass.AddressSpace.smem, alignment=16)
    response = cute.make_ptr(cutlass.Int128, slots.data_ptr().to_llvm_ptr(), assumed_align=16)
    tm = make_task_manager(num_rows=src.shape[0], params=params, response=response, src=src, dst=dst)
    tm.setup_resources_and_tasks()
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    tm.run()


@cute.jit
def clc_copy(src: cute.Tensor, dst: cute.Tensor, stream):
    params = utils.ClcDynamicPersistentTileSchedulerParams((src.shape[1] // TILE_COLS, 1, 1), (1, 1, 1))
    grid = utils.ClcDynamicPersistentTileScheduler.get_grid_shape(params)
    clc_copy_kernel(src, dst, params).launch(grid=grid, block=(5 * 32, 1, 1), stream=stream)


def compile_fake():
    from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream
    src = make_fake_compact_tensor(cutlass.Float16, (64, 1024), stride_order=(1, 0))
    dst = make_fake_compact_tensor(cutlass.Float16, (64, 1024), stride_order=(1, 0))
    return cute.compile(clc_copy, src, dst, make_fake_stream())
