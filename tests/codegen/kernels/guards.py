"""Feature kernel: sections, iteration / opaque guards, routing and constexpr work args.

One task (4 warps) over a domain `range(start, end, step)` with runtime bounds. Every
work call writes one record `code * 1_000_000 + value` into `out[slot]`, where the slot
encodes where the call ran: the head uses slot 1, loop iteration i uses slots
(i + 1) * 8 + code, the tail uses (n + 1) * 8 + 7. `expected()` is the same program
evaluated in Python with the semantics of model.md §4; tests compare the GPU result
with it (and with the reference's kernel, when available).

    head:  log.mark(code=1)                      value = loop_offset (0 in the head)
    loop:  v = src.get()                         v = 3 * loop_offset + 1
           first_iter: log.put(v, code=2)
                       log.put(v, code=3)
           every(2, start=1): log.put(v, code=4)
           last_iter:  log.put(v, code=5)
           flag = src.is_multiple_of_3()
           when_true(flag): log.put(v, code=6)
           when_false(flag): log.put(v, code=7)
    tail:  log.mark(code=7)                      value = last visited loop_offset
"""
from dataclasses import dataclass

import cutlass
import cutlass.cute as cute

from ts_runtime import consumer_work, domain_loop, producer_work, schedule, when_false, when_true
from ts_runtime.resources import MemoryResource, StageInfo, TaskLocalVariable
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager

SLOTS_PER_ITER = 8


@dataclass(kw_only=True)
class Source(MemoryResource):
    start: cutlass.Int32 = 0
    step: cutlass.Int32 = 1
    v: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    flag: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()

    def __post_init__(self) -> None:
        self.v = TaskLocalVariable(dtype=cutlass.Int32, default=cutlass.Int32(-7))
        self.flag = TaskLocalVariable(dtype=cutlass.Boolean, default=cutlass.Boolean(False))

    @consumer_work(returns=v)
    @cute.jit
    def get(self, stage_info: StageInfo) -> cutlass.Int32:
        return cutlass.Int32(stage_info.loop_offset) * 3 + 1

    @consumer_work(returns=flag)
    @cute.jit
    def is_multiple_of_3(self, stage_info: StageInfo) -> cutlass.Boolean:
        return cutlass.Int32(stage_info.loop_offset) % 3 == 0


@dataclass(kw_only=True)
class Log(MemoryResource):
    out: cute.Tensor = None
    start: cutlass.Int32 = 0
    step: cutlass.Int32 = 1

    @cute.jit
    def _slot(self, stage_info: StageInfo, code):
        i = (cutlass.Int32(stage_info.loop_offset) - self.start) // self.step
        return (i + 1) * 8 + code

    @producer_work
    @cute.jit
    def put(self, stage_info: StageInfo, value: cutlass.Int32, *, code: cutlass.Constexpr[int]) -> None:
        self.out[self._slot(stage_info, code)] = code * 1000000 + value

    @producer_work
    @cute.jit
    def mark(self, stage_info: StageInfo, *, code: cutlass.Constexpr[int]) -> None:
        slot = 1
        if cutlass.const_expr(code != 1):
            slot = self._slot(stage_info, 0) + 8 + code
        self.out[slot] = code * 1000000 + cutlass.Int32(stage_info.loop_offset)


def make_task_manager(*, start, end, step, out=None, verbose=False):
    src = Source(name="src", start=start, step=step)
    log = Log(name="log", out=out, start=start, step=step)

    @schedule
    def sched(src: Source, log: Log) -> None:
        log.mark(code=1)
        with domain_loop(start, end, step) as d:
            v = src.get()
            with d.first_iter():
                log.put(v, code=2)
            log.put(v, code=3)
            with d.every(2, start=1):
                log.put(v, code=4)
            with d.last_iter():
                log.put(v, code=5)
            flag = src.is_multiple_of_3()
            with when_true(flag):
                log.put(v, code=6)
            with when_false(flag):
                log.put(v, code=7)
        log.mark(code=7)

    task = Task(name="GuardTask", src_resources=[src], dst_resources=[log], warp_idx=0, num_warps=4,
                schedule=sched(src, log))
    return TaskManager(tasks=[task], resource_dependency_graph={log: [src]}, verbose=verbose)


def build():
    return make_task_manager(start=2, end=20, step=3)


@cute.kernel
def guards_kernel(out: cute.Tensor, start: cutlass.Int32, end: cutlass.Int32, step: cutlass.Int32):
    tm = make_task_manager(start=start, end=end, step=step, out=out)
    tm.setup_resources_and_tasks()
    tm.run()


@cute.jit
def guards(out: cute.Tensor, start: cutlass.Int32, end: cutlass.Int32, step: cutlass.Int32, stream):
    guards_kernel(out, start, end, step).launch(grid=(1, 1, 1), block=(128, 1, 1), stream=stream)


def num_slots(start, end, step):
    n = max(0, -(-(end - start) // step))
    return (n + 2) * SLOTS_PER_ITER


def expected(start, end, step, poison=-1):
    """The records the schedule must leave (model.md §4), as a list."""
    n = max(0, -(-(end - start) // step))
    out = [poison] * num_slots(start, end, step)
    out[1] = 1 * 1000000 + 0
    for i in range(n):
        off = start + i * step
        v = 3 * off + 1
        base = (i + 1) * 8
        if i == 0:
            out[base + 2] = 2000000 + v
        out[base + 3] = 3000000 + v
        if i >= 1 and (i - 1) % 2 == 0:
            out[base + 4] = 4000000 + v
        if i == n - 1:
            out[base + 5] = 5000000 + v
        if off % 3 == 0:
            out[base + 6] = 6000000 + v
        else:
            out[base + 7] = 7000000 + v
    last = start + (n - 1) * step
    out[(n + 1) * 8 + 7] = 7000000 + last
    return out


def compile_fake():
    from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream
    out = make_fake_compact_tensor(cutlass.Int32, (256,))
    return cute.compile(guards, out, cutlass.Int32(2), cutlass.Int32(20), cutlass.Int32(3), make_fake_stream())


def run_on_gpu(start=2, end=100, step=3) -> dict:
    import torch
    from cutlass.cute.runtime import from_dlpack
    from cutlass.torch import current_stream
    out = torch.full((num_slots(start, end, step),), -1, dtype=torch.int32, device="cuda")
    out_c = from_dlpack(out, assumed_align=16)
    stream = current_stream()
    compiled = cute.compile(guards, out_c, cutlass.Int32(start), cutlass.Int32(end), cutlass.Int32(step), stream)
    compiled(out_c, cutlass.Int32(start), cutlass.Int32(end), cutlass.Int32(step), stream)
    torch.cuda.synchronize()
    got = out.cpu().tolist()
    exp = expected(start, end, step)
    bad = [i for i, (a, b) in enumerate(zip(got, exp)) if a != b]
    return {"ok": not bad, "mismatches": len(bad), "first_bad": bad[:5],
            "got": [got[i] for i in bad[:5]], "expected": [exp[i] for i in bad[:5]]}
