"""Example programs of the simulation and checker rules (TS802, TS805, TS810-TS813).

Whole TS programs importing only ts_runtime; `# expect: TSxxx` marks the line a finding
must point at. The reference rejects every INVALID one and accepts every VALID one.
"""
from __future__ import annotations

import textwrap

# imports, a Gmem and a 1 KiB Smem resource class, and an AsyncAsync ring of `stages`
_PRELUDE = '''\
from dataclasses import dataclass

from ts_runtime import domain_loop, schedule
from ts_runtime.memory import SmemAllocation, SmemAllocator
from ts_runtime.pipeline import Agent, CooperativeGroup
from ts_runtime.resources import MemoryResource, PipelineConfig
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager


@dataclass(kw_only=True)
class Gmem(MemoryResource):
    pass


@dataclass(kw_only=True)
class Smem(MemoryResource):
    def __post_init__(self):
        self.data = SmemAllocation(self.name + "_data", size_bytes=1024)

    def get_smem_requirements(self):
        return [self.data]


def pipe(stages):
    return PipelineConfig.create_async_async_pipeline_cfg(
        num_stages=stages, producer_group=CooperativeGroup(Agent.Thread, 32),
        consumer_group=CooperativeGroup(Agent.Thread, 32), cta_layout_vmnk=None)


'''

_PIPE = _PRELUDE + '''\
def build():
    src, out = Gmem(name="src"), Gmem(name="out")
    buf = Smem(name="buf", pipeline_config=pipe(STAGES))
    allocator = SmemAllocator()
    allocator.add_resource(buf)
    allocator.compute_layout()

    @schedule
    def load(src, buf):
        with domain_loop(0, ITERS, 1):
LOAD

    @schedule
    def store(buf, out):
        with domain_loop(0, ITERS, 1):
STORE

    tasks = [
        Task(name="Load", src_resources=[src], dst_resources=[buf], warp_idx=0, num_warps=1,
             schedule=load(src, buf)),
        Task(name="Store", src_resources=[buf], dst_resources=[out], warp_idx=1, num_warps=1,
             schedule=store(buf, out)),
    ]
    return TaskManager(tasks=tasks, resource_dependency_graph={buf: [src], out: [buf]},
                       smem_allocator=allocator)
'''

LOAD = ["src.consumer_work()", "buf.acquire()", "buf.producer_work()", "buf.commit()"]
STORE = ["buf.wait()", "buf.consumer_work()", "buf.release()", "out.producer_work()"]


def pipe_program(load=LOAD, store=STORE, stages=2, iters=4) -> str:
    """A load task filling `buf` (AsyncAsync, `stages`) and a store task draining it."""
    body = lambda lines: textwrap.indent("\n".join(lines), " " * 12)
    return (_PIPE.replace("STAGES", str(stages)).replace("ITERS", str(iters))
            .replace("LOAD", body(load)).replace("STORE", body(store)))


_RACE = _PRELUDE + '''\
def build():
    src, out = Gmem(name="src"), Gmem(name="out")
    a = Smem(name="a", pipeline_config=pipe(2))
    b = Smem(name="b", pipeline_config=pipe(2))
LAYOUT
    @schedule
    def load(src, buf):
        with domain_loop(0, 2, 1):
            src.consumer_work()
            buf.acquire()
            buf.producer_work()EXPECT
            buf.commit()

    @schedule
    def store(buf, out):
        with domain_loop(0, 2, 1):
            buf.wait()
            buf.consumer_work()
            buf.release()
            out.producer_work()

    tasks = [
        Task(name="LoadA", src_resources=[src], dst_resources=[a], warp_idx=0, num_warps=1,
             schedule=load(src, a)),
        Task(name="StoreA", src_resources=[a], dst_resources=[out], warp_idx=1, num_warps=1,
             schedule=store(a, out)),
        Task(name="LoadB", src_resources=[src], dst_resources=[b], warp_idx=2, num_warps=1,
             schedule=load(src, b)),
        Task(name="StoreB", src_resources=[b], dst_resources=[out], warp_idx=3, num_warps=1,
             schedule=store(b, out)),
    ]
    return TaskManager(tasks=tasks, resource_dependency_graph={a: [src], b: [src], out: [a, b]})
'''

_LAYOUT = '''\
    allocator = SmemAllocator()
    allocator.add_resource(a)
    allocator.add_resource(b)
    allocator.compute_layout()      # a and b get disjoint SMEM
'''


def race_program(aliased: bool) -> str:
    """Two independent pipelines; without compute_layout() both buffers sit at offset 0."""
    if aliased:
        return (_RACE.replace("LAYOUT\n", "    # never laid out: both buffers sit at SMEM offset 0\n")
                .replace("EXPECT", "  # expect: TS802"))
    return _RACE.replace("LAYOUT\n", _LAYOUT).replace("EXPECT", "")


_STAGED = _PRELUDE + '''\
def build():
    src, out = Gmem(name="src"), Gmem(name="out")
    # never laid out: `a` stage 0 and `c` share SMEM [0, 1024); `c` is written only
    # after the last `a` tile is consumed, which the pipelines order
    a = Smem(name="a", pipeline_config=pipe(2))
    c = Smem(name="c", pipeline_config=pipe(1))

    @schedule
    def load(src, a):
        with domain_loop(0, 1, 1):
            for _ in range(3):
                src.consumer_work()
                a.acquire()
                a.producer_work()
EXTRA                a.commit()

    @schedule
    def mid(a, c):
        with domain_loop(0, 1, 1):
            for _ in range(3):
                a.wait()
                a.consumer_work()
                a.release()
            c.acquire()
            c.producer_work()
            c.commit()

    @schedule
    def store(c, out):
        with domain_loop(0, 1, 1):
            c.wait()
            c.consumer_work()
            c.release()
            out.producer_work()

    tasks = [
        Task(name="Load", src_resources=[src], dst_resources=[a], warp_idx=0, num_warps=1,
             schedule=load(src, a)),
        Task(name="Mid", src_resources=[a], dst_resources=[c], warp_idx=1, num_warps=1,
             schedule=mid(a, c)),
        Task(name="Store", src_resources=[c], dst_resources=[out], warp_idx=2, num_warps=1,
             schedule=store(c, out)),
    ]
    return TaskManager(tasks=tasks, resource_dependency_graph={a: [src], c: [a], out: [c]})
'''


def uncovered_write_program(duplicated: bool) -> str:
    """`a`'s stage 0 and `c` alias; with `duplicated`, the load writes each acquired stage
    twice, and the second write is published by no wait, so it races with `c`'s write."""
    extra = "                a.producer_work()  # expect: TS802\n" if duplicated else ""
    return _STAGED.replace("EXTRA", extra)


_OPAQUE = '''\
from dataclasses import dataclass

from ts_runtime import consumer_work, domain_loop, schedule, when_true
from ts_runtime.pipeline import Agent, CooperativeGroup
from ts_runtime.resources import MemoryResource, PipelineConfig, TaskLocalVariable
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager


@dataclass(kw_only=True)
class Src(MemoryResource):
    valid: object = TaskLocalVariable.uninitialized()

    def __post_init__(self):
        self.valid = TaskLocalVariable(dtype=bool, default=False)

    @consumer_work(returns=valid)
    def tile_is_valid(self, stage_info):
        return True


@dataclass(kw_only=True)
class Buf(MemoryResource):
    pass


def build():
    src, out = Src(name="src"), Buf(name="out")
    buf = Buf(name="buf", pipeline_config=PipelineConfig.create_async_async_pipeline_cfg(
        num_stages=2, producer_group=CooperativeGroup(Agent.Thread, 32),
        consumer_group=CooperativeGroup(Agent.Thread, 32), cta_layout_vmnk=None))

    @schedule
    def load(src, buf):
        with domain_loop(0, 4, 1):
            valid = src.tile_is_valid()
            with when_true(valid):
                buf.acquire()
                buf.producer_work()
                buf.commit()

    @schedule
    def store(buf, out):
        with domain_loop(0, 4, 1):
            buf.wait()  # expect: TS805
            buf.consumer_work()
            buf.release()
            out.producer_work()

    tasks = [
        Task(name="Load", src_resources=[src], dst_resources=[buf], warp_idx=0, num_warps=1,
             schedule=load(src, buf)),
        Task(name="Store", src_resources=[buf], dst_resources=[out], warp_idx=1, num_warps=1,
             schedule=store(buf, out)),
    ]
    return TaskManager(tasks=tasks, resource_dependency_graph={buf: [src], out: [buf]})
'''


def opaque_program() -> str:
    """The producer fills `buf` only when a run-time condition holds; the consumer always waits."""
    return _OPAQUE


VALID_PIPE = pipe_program()
BLOCKED = pipe_program(load=["src.consumer_work()", "buf.acquire()", "buf.producer_work()", "buf.commit()"],
                       store=["buf.wait()", "buf.consumer_work()  # expect: TS810", "out.producer_work()"])
# a 0-stage ring: no slot is ever free, so the producer's first acquire blocks
ZERO_STAGES = pipe_program(load=["src.consumer_work()", "buf.acquire()  # expect: TS810", "buf.producer_work()",
                                 "buf.commit()"], stages=0)
EXTRA_COMMIT = pipe_program(load=LOAD + ["buf.commit()  # expect: TS811"])
NOT_RELEASED = pipe_program(load=["src.consumer_work()", "buf.acquire()", "buf.producer_work()", "buf.commit()"],
                            store=["buf.wait()", "buf.consumer_work()  # expect: TS812", "out.producer_work()"],
                            stages=4, iters=2)
EXTRA_RELEASE = pipe_program(store=STORE + ["buf.release()  # expect: TS813"])


def zero_stage_work_queue() -> str:
    """A CLC WorkQueue whose fetch pipeline has no stage: the scheduler's acquire never proceeds."""
    from .persistent import dynamic_program
    src = dynamic_program().replace("num_stages=1", "num_stages=0")
    return src.replace("wq.acquire()\n", "wq.acquire()  # expect: TS810\n", 1)
