"""Building small KernelModels directly (no DSL, no cutlass) for checker tests.

Schedules are recorded through the shared `ScheduleBuilder` and lowered with the shared
`lower`, so sections, guards and call indices are exactly what the front ends produce.
Every recorded call gets its own line number in the fake file `kernel.py`; `op()`
returns that line so tests can assert where a finding points.

    kb = KernelBuilder()
    buf = kb.pipe("buf", stages=2)
    src = kb.plain("src")
    with kb.task("Prod", src=[src], dst=[buf]) as t:
        with t.loop(4):
            t.op(src, "consumer_work"); t.op(buf, "acquire")
            t.op(buf, "producer_work"); t.op(buf, "commit")
    kernel = kb.build()
"""
from __future__ import annotations

import contextlib
import itertools

from ts_runtime.enums import FIRST_ITER, LAST_ITER, Every, PipelineGroupMode, PipelineType, ScheduleStage
from ts_runtime.model import (AllocationModel, KernelModel, ManagerOptions, PipelineModel,
                              ResourceKind, ResourceModel, SkipIf, TaskModel, WorkMethodModel)
from ts_runtime.model.builder import ParamRef, ScheduleBuilder
from ts_runtime.model.lower import lower
from ts_runtime.diagnostics import Severity
from ts_runtime.source import SourceRange

PATH = "kernel.py"


def rng(line: int) -> SourceRange:
    return SourceRange(PATH, line, 4)


class TaskBuilder:
    def __init__(self, kb: "KernelBuilder", name: str, src, dst, warp_idx, num_warps):
        self.kb = kb
        self.name = name
        self.src = [r.rid for r in src]
        self.dst = [r.rid for r in dst]
        self.warp_idx = warp_idx
        self.num_warps = num_warps
        self.b = ScheduleBuilder(f"{name}_schedule", kb.resources, rng(kb.next_line()))
        self._loop = None
        self._wtl = None
        self.lines = {}

    def op(self, res, attr: str, via_group=None) -> int:
        line = self.kb.next_line()
        rid = res.rid
        ref = ParamRef(rid, via_group.rid if via_group is not None else None)
        self.b.call(ref, attr, [], {}, rng(line))
        self.lines.setdefault((res.name, attr), []).append(line)
        return line

    def ops(self, res, *attrs) -> list:
        return [self.op(res, a) for a in attrs]

    @contextlib.contextmanager
    def loop(self, *bounds, unroll=None):
        scope = self.b.domain_loop(tuple(bounds), unroll, rng(self.kb.next_line()))
        self._loop = scope
        yield scope
        self.b.close(scope)

    @contextlib.contextmanager
    def first(self):
        s = self.b.iteration_guard(self._loop, FIRST_ITER, rng(self.kb.next_line()))
        yield s
        self.b.close(s)

    @contextlib.contextmanager
    def last(self):
        s = self.b.iteration_guard(self._loop, LAST_ITER, rng(self.kb.next_line()))
        yield s
        self.b.close(s)

    @contextlib.contextmanager
    def every(self, period, start=0):
        s = self.b.iteration_guard(self._loop, Every(period, start), rng(self.kb.next_line()))
        yield s
        self.b.close(s)

    @contextlib.contextmanager
    def when(self, key, negated=False):
        s = self.b.when(object(), negated, key, rng(self.kb.next_line()))
        yield s
        self.b.close(s)

    @contextlib.contextmanager
    def work_tiles(self, wq, skip=False):
        skip_if = SkipIf("bound_method", "skip", wq.rid, True, 1) if skip else None
        s = self.b.work_tile_loop(ParamRef(wq.rid), skip_if, rng(self.kb.next_line()))
        self._wtl = s
        yield s
        self.b.close(s)

    @contextlib.contextmanager
    def skippable(self):
        s = self.b.skippable(self._wtl, rng(self.kb.next_line()))
        yield s
        self.b.close(s)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if exc[0] is not None:
            return False
        model = self.b.finish()
        errors = [d for d in model.diagnostics if d.severity.value == "error"]
        assert not errors, [d.format() for d in errors]
        found = []
        low = lower(model, self.kb.resources, lambda code, msg, r: found.append((code, msg)))
        assert not found, found
        self.kb.tasks.append(TaskModel(name=self.name, warp_idx=self.warp_idx, num_warps=self.num_warps,
                                       src=self.src, dst=self.dst, schedule=model, lowered=low,
                                       range=rng(self.kb.next_line())))
        return False


class KernelBuilder:
    def __init__(self, **options):
        self.resources = {}
        self.tasks = []
        self._rid = itertools.count(1001)
        self._line = itertools.count(10)
        self._warp = 0
        self.options = ManagerOptions(**options)

    def next_line(self) -> int:
        return next(self._line)

    def _add(self, name, **kw) -> ResourceModel:
        r = ResourceModel(rid=next(self._rid), name=name, class_name=name.title(), range=rng(self.next_line()), **kw)
        self.resources[r.rid] = r
        return r

    def pipe(self, name, stages=2, ptype=PipelineType.AsyncAsync, smem=None, tmem=None,
             strides=(1, 1, 1, 1), advance_on_wait=False, advance_on_acquire=False,
             producer_req=None, consumer_req=None) -> ResourceModel:
        p = PipelineModel(pipeline_type=ptype, num_stages=stages, interleave_strides=strides,
                          advance_on_wait=advance_on_wait, advance_on_acquire=advance_on_acquire)
        r = self._add(name, pipeline=p)
        self._allocs(r, smem, tmem)
        r.producer_requirements = producer_req
        r.consumer_requirements = consumer_req
        return r

    def plain(self, name, smem=None, tmem=None) -> ResourceModel:
        r = self._add(name)
        self._allocs(r, smem, tmem)
        return r

    def _allocs(self, r, smem, tmem):
        for i, (off, size) in enumerate(smem or ()):
            r.smem.append(AllocationModel(f"{r.name}_s{i}", "smem", size, 128, off))
        for i, (off, size) in enumerate(tmem or ()):
            r.tmem.append(AllocationModel(f"{r.name}_t{i}", "tmem", size, 1, off))

    def work_queue(self, name="wq", pipelined=False) -> ResourceModel:
        p = PipelineModel(pipeline_type=PipelineType.ClcFetchAsync, num_stages=1) if pipelined else None
        r = self._add(name, kind=ResourceKind.WORK_QUEUE, pipeline=p)
        r.work_methods["get_and_advance_work_tile"] = WorkMethodModel(
            "get_and_advance_work_tile", ScheduleStage.ConsumerWork)
        return r

    def pdl_wait(self, name="pdl_wait") -> ResourceModel:
        return self._add(name, kind=ResourceKind.PDL_WAIT, is_barrier=True)

    def pdl_launch(self, name="pdl_launch") -> ResourceModel:
        return self._add(name, kind=ResourceKind.PDL_LAUNCH, is_barrier=True)

    def group(self, name, members, mode=PipelineGroupMode.Merge) -> ResourceModel:
        st = members[0].pipeline.num_stages
        g = self._add(name, kind=ResourceKind.GROUP, is_barrier=True, group_mode=mode,
                      members=[m.rid for m in members], member_names={m.name: m.rid for m in members},
                      pipeline=PipelineModel(pipeline_type=members[0].pipeline.pipeline_type, num_stages=st))
        for m in members:
            m.group = g.rid
        return g

    def task(self, name, src=(), dst=(), num_warps=1, warp_idx=None) -> TaskBuilder:
        if warp_idx is None:
            warp_idx = self._warp
        self._warp = max(self._warp, warp_idx + num_warps)
        return TaskBuilder(self, name, list(src), list(dst), warp_idx, num_warps)

    def copy_task(self, name, of: TaskModel, warp_idx=None) -> TaskModel:
        """Another task running the very same lowered schedule (same source lines)."""
        if warp_idx is None:
            warp_idx = self._warp
        self._warp = max(self._warp, warp_idx + of.num_warps)
        t = TaskModel(name=name, warp_idx=warp_idx, num_warps=of.num_warps, src=list(of.src), dst=list(of.dst),
                      schedule=of.schedule, lowered=of.lowered, range=rng(self.next_line()))
        self.tasks.append(t)
        return t

    def build(self) -> KernelModel:
        return KernelModel(resources=dict(self.resources), tasks=list(self.tasks), options=self.options,
                           range=rng(1))


# ----------------------------------------------------------------------------- shapes
PRODUCER_OPS = ("acquire", "producer_work", "commit")
CONSUMER_OPS = ("wait", "consumer_work", "release")


def sides(mine) -> tuple:
    """(src, dst) of a task given its (pipe, "P" | "C") roles (random-kernel generators)."""
    return [p for p, r in mine if r == "C"], [p for p, r in mine if r == "P"]


def guarded(t, flat, guard=None) -> None:
    """Records `flat` ((resource, op) pairs) where `t` is (a loop body), the first one under
    `t.first()` / `t.last()` when `guard` is "first" / "last"."""
    for j, (res, o) in enumerate(flat):
        if guard and j == 0:
            with (t.first() if guard == "first" else t.last()):
                t.op(res, o)
        else:
            t.op(res, o)


def producer(kb, name, buf, n, src=None, extra_commit=False, start=0, step=1):
    """A task that fills `buf` n times (src: an unpipelined input it reads first)."""
    with kb.task(name, src=[src] if src else [], dst=[buf]) as t:
        with t.loop(start, start + n * step, step):
            if src is not None:
                t.op(src, "consumer_work")
            t.op(buf, "acquire")
            t.op(buf, "producer_work")
            t.op(buf, "commit")
            if extra_commit:
                t.op(buf, "commit")
    return t


def consumer(kb, name, buf, n, release=True, out=None, start=0, step=1):
    with kb.task(name, src=[buf], dst=[out] if out else []) as t:
        with t.loop(start, start + n * step, step):
            t.op(buf, "wait")
            t.op(buf, "consumer_work")
            if release:
                t.op(buf, "release")
            if out is not None:
                t.op(out, "producer_work")
    return t


def pair(stages=2, n=3, release=True, extra_commit=False, **opts):
    kb = KernelBuilder(**opts)
    buf = kb.pipe("buf", stages=stages)
    src = kb.plain("src")
    p = producer(kb, "Prod", buf, n, src=src, extra_commit=extra_commit)
    c = consumer(kb, "Cons", buf, n, release=release)
    return kb, p, c


# ----------------------------------------------------------------------------- assertions

def codes(diags):
    return sorted(d.code for d in diags)


def finding(diags, code):
    found = [d for d in diags if d.code == code]
    assert len(found) == 1, [d.format() for d in diags]
    return found[0]


def related_lines(d):
    return sorted(r.range.line for r in d.related)


def errors(diags):
    return [d for d in diags if d.severity is Severity.ERROR]


def table_diags(kernel, codes=("TS810", "TS811", "TS812", "TS813", "TS814")):
    from ts_runtime.rules.registry import load_all
    rules = load_all()
    out = []
    for c in codes:
        out.extend(rules[c]().check(kernel))
    return out
