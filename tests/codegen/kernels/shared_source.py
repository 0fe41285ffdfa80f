"""Feature kernel: two tasks (disjoint warps) copy through one unpipelined GMEM source and
one GMEM sink whose work method writes through `self` under a runtime `if` (a bounds
check on a traced field).

The DSL carries the resource across that `if` and writes the region's results back onto
the object; the second task's region must still see the values from before the first
task's region (an IR dominance error otherwise), as the reference compiles it.
"""
from dataclasses import dataclass

import cutlass
import cutlass.cute as cute

from ts_runtime import consumer_work, producer_work
from ts_runtime.resources import MemoryResource, StageInfo, TaskLocalVariable
from ts_runtime.schedule_builder import domain_loop, schedule
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager

N = 1024


@dataclass(kw_only=True)
class Source(MemoryResource):
    src: cute.Tensor = None
    count: cutlass.Int32 = None
    value: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()

    def __post_init__(self) -> None:
        self.value = TaskLocalVariable(dtype=cutlass.Float16, default=cutlass.Float16(0))

    @consumer_work(returns=value)
    @cute.jit
    def load(self, stage_info: StageInfo) -> cutlass.Float16:
        i = stage_info.loop_offset
        v = cutlass.Float16(0)
        if i < self.count:
            v = self.src[i]
        return v


@dataclass(kw_only=True)
class Sink(MemoryResource):
    dst: cute.Tensor = None
    count: cutlass.Int32 = None

    @producer_work
    @cute.jit
    def store(self, stage_info: StageInfo, value: cutlass.Float16) -> None:
        i = stage_info.loop_offset
        if i < self.count:
            self.dst[i] = value


def make_task_manager(*, src=None, dst=None, count=None, verbose=False):
    source = Source(name="source", src=src, count=count)
    out = Sink(name="out", dst=dst, count=count)
    tx = cute.arch.thread_idx()[0] if src is not None else 0

    @schedule
    def copy_schedule(source: Source, out: Sink) -> None:
        with domain_loop(tx % 32, N, 32):
            v = source.load()
            out.store(value=v)

    tasks = [
        Task(name="CopyA", src_resources=[source], dst_resources=[out], warp_idx=0, num_warps=1,
             schedule=copy_schedule(source, out)),
        Task(name="CopyB", src_resources=[source], dst_resources=[out], warp_idx=1, num_warps=1,
             schedule=copy_schedule(source, out)),
    ]
    return TaskManager(tasks=tasks, resource_dependency_graph={out: [source]}, verbose=verbose)


def build():
    return make_task_manager()


@cute.kernel
def shared_source_kernel(src: cute.Tensor, dst: cute.Tensor, count: cutlass.Int32):
    tm = make_task_manager(src=src, dst=dst, count=count)
    tm.setup_resources_and_tasks()
    tm.run()


@cute.jit
def shared_source(src: cute.Tensor, dst: cute.Tensor, count: cutlass.Int32):
    shared_source_kernel(src, dst, count).launch(grid=(1, 1, 1), block=(64, 1, 1))


def compile_fake():
    from cutlass.cute.runtime import make_fake_compact_tensor
    t = [make_fake_compact_tensor(cutlass.Float16, (N,)) for _ in range(2)]
    return cute.compile(shared_source, *t, cutlass.Int32(N))
