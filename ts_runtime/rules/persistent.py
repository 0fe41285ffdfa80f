"""TS501-TS517: persistent scheduling (`work_tile_loop` over a `WorkQueue`).

Manager rules (TS501, TS503-TS510) check where each task runs the WorkQueue epilogue
and which tasks drive the queue. The reference `assert`s them, so they are
`AssertionError` rules that `skip_validation=True` does not downgrade. TS502 and TS517
are Task-construction checks (`ts_runtime.model.task_checks`); TS511-TS516 are capture
checks of the shared schedule builder (`ts_runtime.model.builder`).

One mistake, one finding: where the reference stops at its first failed assertion, these
rules avoid restating a finding another one already made (a misplaced epilogue is
TS503/TS504, not also "missing tail" TS505 or "malformed tail" TS508; a scheduler task in
static mode is TS507, not also TS510).
"""
from __future__ import annotations

import textwrap
from typing import Iterable, Optional

from ..diagnostics import Related
from ..enums import ScheduleStage as S, TileSchedulerType
from ..fixes import move_to_tile_tail
from ..model.lowered import HEAD, LOOP, TAIL
from ..model.values import UNKNOWN
from .base import Rule
from .declare import rule
from .registry import register

ORDER = 110          # model.md §6 step 11 (WorkQueue placement)
AE = "AssertionError"

# --------------------------------------------------------------------------- programs
_HEADER = '''\
from dataclasses import dataclass
from ts_runtime import schedule, domain_loop, work_tile_loop, consumer_work, producer_work
from ts_runtime.resources import (MemoryResource, PipelineConfig, TaskLocalVariable,
                                  TileSchedulerConfig, WorkQueue)
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager
from ts_runtime.pipeline import CooperativeGroup, Agent


@dataclass(kw_only=True)
class InGmem(MemoryResource):
    val: object = TaskLocalVariable.uninitialized()

    def __post_init__(self):
        self.val = TaskLocalVariable(dtype=int, default=0)

    @consumer_work(returns=val)
    def load(self, stage_info):
        return 0


@dataclass(kw_only=True)
class OutGmem(MemoryResource):
    @producer_work
    def store(self, stage_info, v):
        pass


@dataclass(kw_only=True, init=False)
class TileQueue(WorkQueue):
    def skip_empty(self, work_tile):
        return False
'''

STATIC_WQ = ('wq = TileQueue(name="wq", tile_scheduler_config=(\n'
             '    TileSchedulerConfig.create_static_persistent_tile_scheduler_params(None)))')
CLC_WQ = '''\
clc = PipelineConfig.create_clc_fetch_async_pipeline_cfg(
    num_stages=1, num_bytes=16, producer_group=CooperativeGroup(Agent.Thread),
    consumer_group=CooperativeGroup(Agent.Thread, {threads}), cta_layout_vmnk=(1, 1, 1, 1))
wq = TileQueue(name="wq", pipeline_config=clc, tile_scheduler_config=(
    TileSchedulerConfig.create_clc_dynamic_persistent_tile_scheduler_params(None, None)))'''

EPILOGUE = '''\
wq.try_wait()
wq.wait()
wq.get_and_advance_work_tile()
wq.release()'''

COPY_SCHEDULE = '''\
@schedule
def copy_schedule(inp, out, wq):
    with work_tile_loop(wq):
        with domain_loop(0, 4, 1):
            v = inp.load()
            out.store(v=v)
{tail}
'''

SCHEDULER_SCHEDULE = '''\
@schedule
def scheduler_schedule(wq):
    with work_tile_loop(wq):
        with domain_loop(1):
            pass
{tail}
'''

COPY_TASK = ('Task(name="Copy", src_resources=[inp, wq], dst_resources=[out], warp_idx=0, num_warps=1,\n'
             '     schedule=copy_schedule(inp, out, wq))')
SCHEDULER_TASK = ('Task(name="Scheduler", src_resources=[wq], dst_resources=[wq], warp_idx=1, num_warps=1,\n'
                  '     schedule=scheduler_schedule(wq))')
SCHEDULER_TAIL = '''\
wq.try_acquire()
wq.acquire()
wq.fetch_work_tile()
wq.commit()
''' + EPILOGUE


def _ind(text: str, n: int) -> str:
    return textwrap.indent(textwrap.dedent(text).strip("\n"), " " * n)


def program(body: str) -> str:
    """The persistent-example header plus `def build():` with `body` (unindented)."""
    return _HEADER + "\n\ndef build():\n" + _ind(body, 4) + "\n"


def _mark(code: str) -> str:
    return f"  # expect: {code}" if code else ""


def _finish(parts, tasks: str, graph: str, tm_mark: str) -> str:
    parts = [p for p in parts if p is not None]
    parts += ["", f"tasks = [{_ind(tasks, 9).lstrip()}]",
              f"return TaskManager(tasks=tasks, resource_dependency_graph={graph}, verbose=False){_mark(tm_mark)}"]
    return program("\n".join(parts))


def static_program(copy_tail: str = EPILOGUE, *, copy_schedule: Optional[str] = None, extra: str = "",
                   tasks: str = COPY_TASK, graph: str = "{out: [inp, wq]}", tm_mark: str = "") -> str:
    """One Copy task over a static WorkQueue; `copy_tail` is the tile tail of its schedule."""
    sched = copy_schedule if copy_schedule is not None else COPY_SCHEDULE.format(tail=_ind(copy_tail, 8))
    return _finish([STATIC_WQ, 'inp, out = InGmem(name="in"), OutGmem(name="out")', "",
                    textwrap.dedent(sched).strip("\n"), "", textwrap.dedent(extra).strip("\n") or None],
                   tasks, graph, tm_mark)


def dynamic_program(scheduler_tail: str = SCHEDULER_TAIL, *, copy_tail: str = EPILOGUE,
                    tasks: str = COPY_TASK + ",\n" + SCHEDULER_TASK, threads: int = 64,
                    graph: str = "{out: [inp, wq], wq: [wq]}", tm_mark: str = "") -> str:
    """A Copy task and a CLC scheduler task over a ClcFetchAsync WorkQueue."""
    return _finish([CLC_WQ.format(threads=threads), 'inp, out = InGmem(name="in"), OutGmem(name="out")', "",
                    COPY_SCHEDULE.format(tail=_ind(copy_tail, 8)).rstrip(), "",
                    SCHEDULER_SCHEDULE.format(tail=_ind(scheduler_tail, 8)).rstrip()],
                   tasks, graph, tm_mark)


def skip_program(skip_if: str, *, mark: str = "", src: str = "[inp, wq]", task_mark: str = "",
                 inside: str = "", before: str = "") -> str:
    """A Copy task with `work_tile_loop(wq, skip_if=<skip_if>)` over a static TileQueue;
    `mark` is the code expected on the work_tile_loop line, `task_mark` on the Task line."""
    lines = ["@schedule", "def copy_schedule(inp, out, wq):",
             f"    with work_tile_loop(wq, skip_if={skip_if}) as tiles:{_mark(mark)}",
             "        with tiles.skippable(), domain_loop(0, 4, 1):",
             "            v = inp.load()",
             "            out.store(v=v)"]
    if inside:
        lines.append(_ind(inside, 12))
    lines.append(_ind(EPILOGUE, 8))
    task = (f'Task(name="Copy", src_resources={src}, dst_resources=[out], warp_idx=0, num_warps=1,{_mark(task_mark)}\n'
            '     schedule=copy_schedule(inp, out, wq))')
    return static_program(copy_schedule="\n".join(lines), tasks=task, extra=before)


VALID_STATIC = static_program()
VALID_DYNAMIC = dynamic_program()
VALID_SKIP = skip_program("TileQueue.skip_empty")


# --------------------------------------------------------------------------- helpers
def _is_wq(kernel, rid) -> bool:
    r = kernel.resources.get(rid)
    return r is not None and r.is_work_queue


def _wqs(kernel, rids) -> list:
    out = []
    for r in rids or ():
        if _is_wq(kernel, r) and r not in out:
            out.append(r)
    return out


def _persistent(kernel, task) -> bool:
    return bool(_wqs(kernel, task.src))


def _persistent_kernel(kernel) -> bool:
    return any(_persistent(kernel, t) for t in kernel.tasks)


def _lowered(task):
    return getattr(task, "lowered", None)


def _wq_entries(kernel, task, section: str, *, aux: bool) -> list:
    low = _lowered(task)
    if low is None:
        return []
    return [e for e in low.entries if e.section == section and _is_wq(kernel, e.resource)
            and (aux or not e.stage.is_aux)]


def _misplaced(kernel, task) -> bool:
    """The task runs (non-aux) WorkQueue ops in its head or loop (TS503/TS504)."""
    return bool(_wq_entries(kernel, task, HEAD, aux=False) or _wq_entries(kernel, task, LOOP, aux=False))


def _work_tile_loop_range(task):
    sched = getattr(task, "schedule", None)
    for node in getattr(sched, "body", ()) or ():
        if getattr(node, "kind", None) == "work_tile_loop":
            return node.range
    return task.at("schedule")


def _mode(kernel):
    """'static' / 'dynamic' for the kernel's single WorkQueue; None when undecidable."""
    wqs = _wqs(kernel, [r for t in kernel.tasks for r in list(t.src) + list(t.dst)])
    if len(wqs) != 1:
        return None
    kind = kernel.res(wqs[0]).tile_scheduler_type
    if kind is TileSchedulerType.StaticPersistent:
        return "static"
    if kind is TileSchedulerType.ClcDynamicPersistent:
        return "dynamic"
    return None


def _scheduler_tasks(kernel) -> list:
    """Tasks whose dst_resources are all WorkQueues (and not empty)."""
    return [t for t in kernel.tasks if t.dst and all(_is_wq(kernel, r) for r in t.dst)]


def _wq_dst_tasks(kernel) -> list:
    return [t for t in kernel.tasks if _wqs(kernel, t.dst)]


def _names(tasks) -> str:
    return "[" + ", ".join(repr(t.name) for t in tasks) + "]"


CONSUMER_TAILS = (
    (S.ConsumerTryWait, S.ConsumerWait, S.ConsumerWork, S.ConsumerRelease),
    (S.ConsumerWait, S.ConsumerWork, S.ConsumerRelease),
)
_PRODUCER_HEADS = (
    (S.ProducerTryAcquire, S.ProducerAcquire, S.ProducerWork, S.ProducerCommit),
    (S.ProducerAcquire, S.ProducerWork, S.ProducerCommit),
)
SCHEDULER_TAILS = tuple(p + c for p in _PRODUCER_HEADS for c in CONSUMER_TAILS)


def _shape_mismatch(entries, patterns):
    """None if the stages of `entries` equal one of `patterns`; else (entry to point at, note)."""
    stages = tuple(e.stage for e in entries)
    if stages in patterns:
        return None
    best = 0
    for p in patterns:
        n = 0
        while n < min(len(p), len(stages)) and p[n] is stages[n]:
            n += 1
        best = max(best, n)
    if best < len(stages):
        return entries[best], "unexpected here"
    return entries[-1], "the sequence ends early after this entry"


def _tail_findings(kernel, rule_cls, task, patterns, what):
    entries = _wq_entries(kernel, task, TAIL, aux=True)
    if not _wq_entries(kernel, task, TAIL, aux=False) or _misplaced(kernel, task):
        return   # nothing to shape-check: TS505 (missing) or TS503/TS504 (misplaced) report it
    bad = _shape_mismatch(entries, patterns)
    if bad is None:
        return
    entry, note = bad
    got = [e.stage.value for e in entries]
    yield rule_cls.diag(f"Task '{task.name}': {what}; got {got} ({note})", entry.range,
                        related=[Related(e.range, e.stage.value) for e in entries if e is not entry])


# --------------------------------------------------------------------------- manager rules
@register
class MixedPersistentTasks(Rule):
    """
    Some tasks are persistent (a `WorkQueue` in `src_resources`) and others are not.

    ## What it does
    In a kernel where at least one task lists a `WorkQueue` in `src_resources`, flags every
    task that does not (padding tasks included).

    ## Why is this bad?
    A persistent kernel loops over work tiles: every warp runs its task once per tile and
    advances the queue in the tile tail. A non-persistent task runs once and exits, so it
    misses every tile after the first and no longer takes part in the per-tile barriers.

    ## Example
    A padding task `Task(src_resources=[], dst_resources=[], ...)` next to persistent tasks.

    ## Use instead
    Give every task the WorkQueue in `src_resources` and the queue epilogue
    (`wait` / `get_and_advance_work_tile` / `release`) in its `work_tile_loop`.
    """
    code = "TS501"
    name = "mixed-persistent-tasks"
    order = ORDER
    reference_exception = AE
    VALID = [static_program(
        extra='''\
            @schedule
            def pad_schedule(wq):
                with work_tile_loop(wq):
                    with domain_loop(1):
                        pass
                    wq.wait()
                    wq.get_and_advance_work_tile()
                    wq.release()''',
        tasks=COPY_TASK + ',\nTask(name="Pad", src_resources=[wq], dst_resources=[], warp_idx=1, num_warps=3,\n'
                          '     schedule=pad_schedule(wq))')]
    INVALID = [static_program(
        extra='''\
            @schedule
            def pad_schedule(inp):
                with domain_loop(1):
                    pass''',
        tasks=COPY_TASK + ',\nTask(name="Pad", src_resources=[], dst_resources=[], warp_idx=1, num_warps=3,'
                          '  # expect: TS501\n     schedule=pad_schedule(inp))')]

    def check(self, kernel) -> Iterable:
        persistent = [t for t in kernel.tasks if _persistent(kernel, t)]
        if not persistent:
            return
        first = persistent[0]
        for t in kernel.tasks:
            if not _persistent(kernel, t):
                yield self.diag(f"All or none of the tasks must be persistent: task '{t.name}' has no WorkQueue "
                                f"in src_resources while '{first.name}' is persistent", t.at("src_resources"),
                                related=[Related(first.at("src_resources"), f"'{first.name}' is persistent")])


rule("TS502", "multiple-work-queues-in-task", """
    A task with more than one `WorkQueue` in `src_resources`.

    ## What it does
    Checks at `Task(...)` that a persistent task reads exactly one WorkQueue.
    ## Why is this bad?
    A task walks one stream of work tiles; the runtime would not know which queue drives its loop.
    ## Example
    `Task(src_resources=[smem, wq_a, wq_b], ...)`
    ## Use instead
    One WorkQueue per kernel, listed once in every task's `src_resources`.
    """, phase="task", exc="ValueError",
     valid=[VALID_STATIC],
     invalid=[static_program(
         extra='''\
             wq2 = TileQueue(name="wq2", tile_scheduler_config=(
                 TileSchedulerConfig.create_static_persistent_tile_scheduler_params(None)))''',
         tasks='Task(name="Copy", src_resources=[inp, wq, wq2], dst_resources=[out], warp_idx=0,  # expect: TS502\n'
               '     num_warps=1, schedule=copy_schedule(inp, out, wq))',
         graph="{out: [inp, wq, wq2]}")])


class _PlacementRule(Rule):
    order = ORDER
    reference_exception = AE
    section = HEAD
    where = "head"

    def check(self, kernel) -> Iterable:
        if not _persistent_kernel(kernel):
            return
        for t in kernel.tasks:
            if not _persistent(kernel, t):
                continue
            bad = _wq_entries(kernel, t, self.section, aux=False)
            if bad:
                more = f" ({len(bad)} WorkQueue entries there)" if len(bad) > 1 else ""
                yield self.diag(f"Task '{t.name}': WorkQueue in {self.where} schedule is not allowed: "
                                f"{bad[0].stage.value} on '{kernel.name(bad[0].resource)}' must be in the tile tail, "
                                f"after the domain_loop{more}", bad[0].range,
                                related=[Related(e.range, e.stage.value) for e in bad[1:]],
                                fix=move_to_tile_tail(
                                    [e.range for e in _wq_entries(kernel, t, self.section, aux=True)],
                                    f"Move the WorkQueue operations of '{t.name}' to the tile tail"))


@register
class WorkQueueOpInHead(_PlacementRule):
    """
    A WorkQueue operation in the head of a persistent schedule (before the `domain_loop`).

    ## What it does
    Flags a non-auxiliary `WorkQueue` step that runs before the task's `domain_loop` inside
    `work_tile_loop`.

    ## Why is this bad?
    The queue epilogue hands out the *next* tile. Run before the tile's data work, it
    advances the queue while the current tile is still being processed, and the tasks'
    per-tile hand-offs no longer line up.

    ## Example
    `wq.wait(); wq.get_and_advance_work_tile(); wq.release()` before `with domain_loop(...)`.

    ## Use instead
    Put the epilogue after the `domain_loop`, at the end of the `work_tile_loop` body.
    """
    code = "TS503"
    name = "work-queue-op-in-head"
    section, where = HEAD, "head"
    VALID = [VALID_STATIC]
    INVALID = [static_program(copy_schedule='''\
        @schedule
        def copy_schedule(inp, out, wq):
            with work_tile_loop(wq):
                wq.try_wait()  # expect: TS503
                wq.wait()
                wq.get_and_advance_work_tile()
                wq.release()
                with domain_loop(0, 4, 1):
                    v = inp.load()
                    out.store(v=v)
        ''')]


@register
class WorkQueueOpInLoop(_PlacementRule):
    """
    A WorkQueue operation inside the `domain_loop` of a persistent schedule.

    ## What it does
    Flags a non-auxiliary `WorkQueue` step recorded inside the task's `domain_loop`.

    ## Why is this bad?
    The queue would advance once per loop iteration instead of once per tile; tasks with
    different loop lengths would advance by different amounts and fall out of step.

    ## Example
    The queue epilogue written inside `with domain_loop(...)`.

    ## Use instead
    Move it after the loop, in the tail of the `work_tile_loop` body.
    """
    code = "TS504"
    name = "work-queue-op-in-loop"
    section, where = LOOP, "loop"
    VALID = [VALID_STATIC]
    INVALID = [static_program(copy_schedule='''\
        @schedule
        def copy_schedule(inp, out, wq):
            with work_tile_loop(wq):
                with domain_loop(0, 4, 1):
                    v = inp.load()
                    out.store(v=v)
                    wq.try_wait()  # expect: TS504
                    wq.wait()
                    wq.get_and_advance_work_tile()
                    wq.release()
        ''')]


@register
class MissingWorkQueueTail(Rule):
    """
    A persistent task whose tile tail has no WorkQueue operation.

    ## What it does
    Flags a task with a `WorkQueue` in `src_resources` whose schedule has no non-auxiliary
    WorkQueue step after its `domain_loop` (and none misplaced in the head or loop either:
    that is TS503/TS504).

    ## Why is this bad?
    Without the epilogue the task never moves to the next tile: its `work_tile_loop`
    keeps seeing the same valid tile and never ends.

    ## Example
    A `work_tile_loop` body with only the `domain_loop` in it.

    ## Use instead
    End the `work_tile_loop` body with `wq.try_wait()`, `wq.wait()`,
    `wq.get_and_advance_work_tile()`, `wq.release()`.
    """
    code = "TS505"
    name = "missing-work-queue-tail"
    order = ORDER
    reference_exception = AE
    VALID = [VALID_STATIC]
    INVALID = [static_program(copy_schedule='''\
        @schedule
        def copy_schedule(inp, out, wq):
            with work_tile_loop(wq):  # expect: TS505
                with domain_loop(0, 4, 1):
                    v = inp.load()
                    out.store(v=v)
                wq.init_work_tile()
        ''')]

    def check(self, kernel) -> Iterable:
        if not _persistent_kernel(kernel):
            return
        for t in kernel.tasks:
            if not _persistent(kernel, t) or _lowered(t) is None or _misplaced(kernel, t):
                continue
            if not _wq_entries(kernel, t, TAIL, aux=False):
                yield self.diag(f"Task '{t.name}': WorkQueue in tail schedule is required: add the queue epilogue "
                                "(try_wait / wait / get_and_advance_work_tile / release) after the domain_loop",
                                _work_tile_loop_range(t))


@register
class MultipleWorkQueues(Rule):
    """
    The tasks of one kernel use different `WorkQueue` objects.

    ## What it does
    Flags every task whose WorkQueue is not the one the first persistent task uses.

    ## Why is this bad?
    All warps of a CTA must walk the same tiles in the same order. Two queues hand out
    tiles independently, so tasks would work on different tiles while exchanging data.

    ## Example
    `Task(src_resources=[a, wq_a], ...)` and `Task(src_resources=[b, wq_b], ...)`.

    ## Use instead
    Create one WorkQueue and list that same object in every task.
    """
    code = "TS506"
    name = "multiple-work-queues"
    order = ORDER
    reference_exception = AE
    VALID = [VALID_STATIC]
    INVALID = [static_program(
        extra='''\
            wq2 = TileQueue(name="wq2", tile_scheduler_config=(
                TileSchedulerConfig.create_static_persistent_tile_scheduler_params(None)))
            out2 = OutGmem(name="out2")''',
        tasks=COPY_TASK + ',\nTask(name="Copy2", src_resources=[inp, wq2], dst_resources=[out2], warp_idx=1,'
                          '  # expect: TS506\n     num_warps=1, schedule=copy_schedule(inp, out2, wq2))',
        graph="{out: [inp, wq], out2: [inp, wq2]}")]

    def check(self, kernel) -> Iterable:
        if not _persistent_kernel(kernel):
            return
        all_wqs = _wqs(kernel, [r for t in kernel.tasks for r in list(t.src) + list(t.dst)])
        if len(all_wqs) <= 1:
            return
        first = next(_wqs(kernel, t.src)[0] for t in kernel.tasks if _persistent(kernel, t))
        first_res = kernel.res(first)
        for t in kernel.tasks:
            others = [r for r in _wqs(kernel, list(t.src) + list(t.dst)) if r != first]
            if others:
                key = "src_resources" if any(r in t.src for r in others) else "dst_resources"
                yield self.diag(f"Exactly one WorkQueue resource must be shared across all tasks; found "
                                f"{len(all_wqs)}: task '{t.name}' uses '{kernel.name(others[0])}' instead of "
                                f"'{first_res.label}'", t.at(key),
                                related=[Related(first_res.range, f"'{first_res.label}' is created here")])


@register
class SchedulerTaskCount(Rule):
    """
    The number of scheduler tasks does not match the WorkQueue's scheduling mode.

    ## What it does
    A *scheduler task* is one whose `dst_resources` are all WorkQueues. A CLC dynamic
    persistent queue needs exactly one; a static persistent queue needs none.

    ## Why is this bad?
    In dynamic mode the scheduler task fetches every next tile from the hardware; without
    it no tile ever arrives, with two each tile is fetched twice. In static mode tiles are
    computed locally and a producer on the queue has nothing to signal.

    ## Example
    A static queue with `Task(src_resources=[wq], dst_resources=[wq], ...)`.

    ## Use instead
    Static: drop the scheduler task. Dynamic: exactly one task with
    `dst_resources=[wq]` running `try_acquire / acquire / fetch_work_tile / commit` before
    the queue epilogue.
    """
    code = "TS507"
    name = "scheduler-task-count-mismatch"
    order = ORDER
    reference_exception = AE
    VALID = [VALID_STATIC, VALID_DYNAMIC]
    INVALID = [
        static_program(
            extra=SCHEDULER_SCHEDULE.format(tail=_ind(SCHEDULER_TAIL, 8)),
            tasks=COPY_TASK + ',\nTask(name="Scheduler", src_resources=[wq], dst_resources=[wq],  # expect: TS507\n'
                              '     warp_idx=1, num_warps=1, schedule=scheduler_schedule(wq))',
            graph="{out: [inp, wq], wq: [wq]}"),
        dynamic_program(tasks=COPY_TASK, threads=32, graph="{out: [inp, wq]}", tm_mark="TS507"),
    ]

    def check(self, kernel) -> Iterable:
        if not _persistent_kernel(kernel):
            return
        mode = _mode(kernel)
        if mode is None:
            return
        sched = _scheduler_tasks(kernel)
        wq = _wqs(kernel, [r for t in kernel.tasks for r in list(t.src) + list(t.dst)])[0]
        wq_rng = kernel.res(wq).range
        if mode == "static":
            for t in sched:
                yield self.diag(f"Tasks with only WorkQueue in dst_resources must match scheduler mode: expected 0 "
                                f"(static persistent WorkQueue), found {len(sched)} in {_names(sched)}",
                                t.at("dst_resources"),
                                related=[Related(wq_rng, "the WorkQueue is static persistent")])
        elif not sched:
            yield self.diag("Tasks with only WorkQueue in dst_resources must match scheduler mode: expected 1 "
                            "(CLC dynamic persistent WorkQueue), found 0: add a scheduler task with "
                            "dst_resources=[wq]", kernel.at("tasks"),
                            related=[Related(wq_rng, "the WorkQueue is CLC dynamic persistent")])
        else:
            for t in sched[1:]:
                yield self.diag(f"Tasks with only WorkQueue in dst_resources must match scheduler mode: expected 1 "
                                f"(CLC dynamic persistent WorkQueue), found {len(sched)} in {_names(sched)}",
                                t.at("dst_resources"),
                                related=[Related(sched[0].at("dst_resources"), f"'{sched[0].name}' is the "
                                                 "scheduler task")])


@register
class MalformedWorkQueueTail(Rule):
    """
    A task's WorkQueue tail is not `[try_wait,] wait, <work>, release`.

    ## What it does
    Lists the WorkQueue steps in the tail of each persistent (non-scheduler) task, in order,
    auxiliary steps included, and requires exactly `[ConsumerTryWait,] ConsumerWait,
    ConsumerWork, ConsumerRelease`.

    ## Why is this bad?
    Every task must take exactly one tile per iteration with the same bracket; a second
    `get_and_advance_work_tile`, a missing `wait` or extra steps make tasks advance by
    different amounts or read a tile before it is published.

    ## Example
    `wq.wait(); wq.get_and_advance_work_tile(); wq.get_and_advance_work_tile(); wq.release()`

    ## Use instead
    `wq.try_wait(); wq.wait(); wq.get_and_advance_work_tile(); wq.release()`
    """
    code = "TS508"
    name = "malformed-work-queue-tail"
    order = ORDER
    reference_exception = AE
    VALID = [VALID_STATIC, static_program('''\
        wq.wait()
        wq.get_and_advance_work_tile()
        wq.release()''')]
    INVALID = [static_program('''\
        wq.wait()
        wq.get_and_advance_work_tile()
        wq.get_and_advance_work_tile()  # expect: TS508
        wq.release()'''),
        static_program('''\
        wq.wait()
        wq.release()  # expect: TS508''')]

    def check(self, kernel) -> Iterable:
        if not _persistent_kernel(kernel):
            return
        mode = _mode(kernel)
        sched = _scheduler_tasks(kernel) if mode == "dynamic" else []
        for t in kernel.tasks:
            if not _persistent(kernel, t) or any(t is x for x in sched) or _wqs(kernel, t.dst):
                continue
            yield from _tail_findings(kernel, self, t, CONSUMER_TAILS, "WorkQueue tail schedule must be "
                                      "[ConsumerTryWait,] ConsumerWait, ConsumerWork, ConsumerRelease")


@register
class MalformedSchedulerTail(Rule):
    """
    The CLC scheduler task's WorkQueue tail is not the fetch-then-consume sequence.

    ## What it does
    In a CLC dynamic persistent kernel, requires the scheduler task's WorkQueue tail steps
    to be exactly `[try_acquire,] acquire, <producer work>, commit, [try_wait,] wait,
    <consumer work>, release`.

    ## Why is this bad?
    The scheduler must publish the next tile (acquire, fetch, commit) before it consumes it
    like every other task; any other order deadlocks or hands out tiles twice.

    ## Example
    The consumer epilogue first and `acquire / fetch_work_tile / commit` after it.

    ## Use instead
    `wq.try_acquire(); wq.acquire(); wq.fetch_work_tile(); wq.commit()` then
    `wq.try_wait(); wq.wait(); wq.get_and_advance_work_tile(); wq.release()`.
    """
    code = "TS509"
    name = "malformed-scheduler-tail"
    order = ORDER
    reference_exception = AE
    VALID = [VALID_DYNAMIC]
    INVALID = [dynamic_program('''\
        wq.try_wait()  # expect: TS509
        wq.wait()
        wq.get_and_advance_work_tile()
        wq.release()
        wq.acquire()
        wq.fetch_work_tile()
        wq.commit()''')]

    def check(self, kernel) -> Iterable:
        if not _persistent_kernel(kernel) or _mode(kernel) != "dynamic":
            return
        for t in _scheduler_tasks(kernel):
            yield from _tail_findings(kernel, self, t, SCHEDULER_TAILS, "dynamic persistent WorkQueue tail schedule "
                                      "must be [ProducerTryAcquire,] ProducerAcquire, ProducerWork, ProducerCommit, "
                                      "[ConsumerTryWait,] ConsumerWait, ConsumerWork, ConsumerRelease")


@register
class WorkQueueProducerNotScheduler(Rule):
    """
    A task other than the CLC scheduler task lists the WorkQueue in `dst_resources`.

    ## What it does
    Flags a task that produces the WorkQueue next to other outputs: in static mode no task
    may produce the queue; in CLC dynamic mode only the scheduler task (whose outputs are
    all WorkQueues) may. (A static-mode task whose outputs are *only* the queue is TS507.)

    ## Why is this bad?
    The queue's producer side fetches tiles. A data task that also drives it would fetch
    tiles on its own schedule, out of step with the other tasks.

    ## Example
    `Task(src_resources=[inp, wq], dst_resources=[out, wq], ...)`

    ## Use instead
    Keep the WorkQueue out of data tasks' `dst_resources`; in dynamic mode let one
    dedicated scheduler task produce it.
    """
    code = "TS510"
    name = "work-queue-producer-not-scheduler"
    order = ORDER
    reference_exception = AE
    VALID = [VALID_STATIC, VALID_DYNAMIC]
    INVALID = [
        static_program(
            tasks='Task(name="Copy", src_resources=[inp, wq], dst_resources=[out, wq], warp_idx=0,  # expect: TS510\n'
                  '     num_warps=1, schedule=copy_schedule(inp, out, wq))',
            graph="{out: [inp, wq], wq: [wq]}"),
        dynamic_program(
            tasks=SCHEDULER_TASK + ',\nTask(name="Copy", src_resources=[inp, wq], dst_resources=[out, wq],'
                                   '  # expect: TS510\n     warp_idx=0, num_warps=1, schedule=copy_schedule(inp, out, wq))'),
    ]

    def check(self, kernel) -> Iterable:
        if not _persistent_kernel(kernel):
            return
        mode = _mode(kernel)
        if mode is None:
            return
        sched = _scheduler_tasks(kernel)
        producers = _wq_dst_tasks(kernel)
        for t in producers:
            if any(t is x for x in sched):
                continue
            if mode == "static":
                msg = (f"WorkQueue dst_resource count must match scheduler mode: expected 0 task(s) with WorkQueue in "
                       f"dst_resources (static persistent), found {len(producers)} in {_names(producers)}")
            else:
                msg = (f"Task '{t.name}' lists the WorkQueue in dst_resources but must be the persistent scheduler "
                       "task (whose dst_resources are only WorkQueues)")
            yield self.diag(msg, t.at("dst_resources"))


# --------------------------------------------------------------------------- capture / task rules
_OTHER_QUEUE = '''\
other = TileQueue(name="other", tile_scheduler_config=(
    TileSchedulerConfig.create_static_persistent_tile_scheduler_params(None)))'''

rule("TS511", "work-queue-op-in-skippable", """
    A WorkQueue operation inside `skippable()`.

    ## What it does
    Rejects any step on a WorkQueue (auxiliary ones included) recorded inside a
    `wtl.skippable()` block.
    ## Why is this bad?
    A skipped tile bypasses the block: the queue is never advanced, `work_tile_loop` keeps
    seeing the same tile and the CTA loops forever.
    ## Example
    The queue epilogue inside `with tiles.skippable(), domain_loop(...)`.
    ## Use instead
    Keep only data work in `skippable()`; run the epilogue after it, in the tile tail.
    """, valid=[VALID_SKIP],
     invalid=[skip_program("TileQueue.skip_empty", inside="wq.init_work_tile()  # expect: TS511")])

rule("TS512", "work-tile-loop-without-work-queue", """
    `work_tile_loop(x)` where `x` is not a WorkQueue parameter of the schedule.

    ## What it does
    Requires the argument of `work_tile_loop` to be one of the schedule's parameters, bound
    to a `WorkQueue`.
    ## Why is this bad?
    The tile loop is driven by the queue's tiles; any other value has none.
    ## Example
    `with work_tile_loop(inp):` where `inp` is a data resource.
    ## Use instead
    Pass the WorkQueue to the schedule and loop over it: `with work_tile_loop(wq):`.
    """, valid=[VALID_STATIC],
     invalid=[static_program(copy_schedule='''\
        @schedule
        def copy_schedule(inp, out, wq):
            with work_tile_loop(inp):  # expect: TS512
                with domain_loop(0, 4, 1):
                    v = inp.load()
                    out.store(v=v)
                wq.try_wait()
                wq.wait()
                wq.get_and_advance_work_tile()
                wq.release()
        ''')])

rule("TS513", "non-callable-skip-if", """
    A `skip_if` that is not callable.

    ## What it does
    Rejects `work_tile_loop(wq, skip_if=<value>)` when the value cannot be called.
    ## Why is this bad?
    `skip_if` is evaluated once per tile to decide whether the skippable work runs.
    ## Example
    `work_tile_loop(wq, skip_if=True)`
    ## Use instead
    A WorkQueue method (`MyQueue.is_padding_tile`) or a function of the work tile.
    """, valid=[VALID_SKIP], invalid=[skip_program("True", mark="TS513")])

rule("TS514", "invalid-bound-skip-if", """
    A bound-method `skip_if` that is not bound to this loop's WorkQueue, or does not take one argument.

    ## What it does
    For `skip_if=queue_object.method`, requires `queue_object` to be the WorkQueue the loop
    iterates and the method to accept exactly the work tile.
    ## Why is this bad?
    The predicate must read the state of the queue that hands out the tiles; another
    object's method decides on the wrong data (or cannot be called with the tile).
    ## Example
    `work_tile_loop(wq, skip_if=other_queue.skip_empty)`
    ## Use instead
    The unbound method on the queue's class: `skip_if=MyQueue.skip_empty`.
    """, valid=[VALID_SKIP],
     invalid=[skip_program("other.skip_empty", mark="TS514", before=_OTHER_QUEUE)])

rule("TS515", "invalid-unbound-skip-if", """
    An unbound-method `skip_if` that is not defined on the WorkQueue's class, or does not take `(work_queue, work_tile)`.

    ## What it does
    For `skip_if=SomeClass.method`, requires the method to be found on the class (MRO) of
    the WorkQueue the loop iterates, and to accept `(work_queue, work_tile)`.
    ## Why is this bad?
    The runtime calls it as `method(wq, tile)`; a method of an unrelated class would run
    against an object of the wrong type.
    ## Example
    `work_tile_loop(wq, skip_if=OtherQueue.skip_x)` where `wq` is a `TileQueue`.
    ## Use instead
    Define the predicate on the queue's class (or a base) and pass `TileQueue.skip_x`.
    """, exc="TypeError", valid=[VALID_SKIP, skip_program("WorkQueue.skip_work_tile_if")],
     invalid=[skip_program("OtherQueue.skip_x", mark="TS515", before='''\
         class OtherQueue(WorkQueue):
             def skip_x(self, work_tile):
                 return False''')])

rule("TS516", "invalid-skip-if-signature", """
    A function or lambda `skip_if` that accepts neither `(work_queue, work_tile)` nor `(work_tile)`.

    ## What it does
    Checks that a free function or lambda passed as `skip_if` can be called with the work
    tile, or with the queue and the work tile.
    ## Why is this bad?
    The runtime calls it with one of those two argument lists; any other signature fails
    when the kernel is generated.
    ## Example
    `work_tile_loop(wq, skip_if=lambda: False)`
    ## Use instead
    `work_tile_loop(wq, skip_if=lambda tile: False)`
    """, phase="capture", exc="TypeError",
     valid=[VALID_SKIP, skip_program("lambda tile: False")],
     invalid=[skip_program("lambda: False", mark="TS516")])

rule("TS517", "skip-if-without-work-queue", """
    A task whose schedule uses `skip_if` but whose `src_resources` has no WorkQueue.

    ## What it does
    Checks at `Task(...)` that a schedule with `work_tile_loop(..., skip_if=...)` runs in a
    task that lists exactly one WorkQueue in `src_resources`.
    ## Why is this bad?
    Skipped tiles still have to advance the task's queue; without the queue among the
    task's inputs there is nothing to advance and nothing to evaluate the predicate on.
    ## Example
    `Task(src_resources=[inp], ..., schedule=copy_schedule(inp, out, wq))` with `skip_if`.
    ## Use instead
    `Task(src_resources=[inp, wq], ...)`
    """, phase="task", exc="ValueError",
     valid=[VALID_SKIP],
     invalid=[skip_program("TileQueue.skip_empty", src="[inp]", task_mark="TS517")])

rule("TS518", "skip-if-returns-nothing", """
    A `skip_if` predicate whose body never returns a value.

    ## What it does
    Reports, at its `def` line, a `skip_if` passed to `work_tile_loop(wq, skip_if=...)`
    (a WorkQueue method, bound or unbound, or a function written with `def`) that has no
    `return <value>` in its body: every call returns None. A lambda always returns its
    expression and is not judged.
    ## Why is this bad?
    The loop evaluates the predicate once per tile and keeps the result in the queue's
    task-local state as a DSL Boolean. None is a Python value, not a run-time Boolean: the
    CuTe DSL stops compiling the kernel there (`PHASE_ASSIGN_PYTHON_TO_TRACKED`), typically
    after the `return` was lost in an edit.
    ## Example
    ```python
    @cute.jit
    def skip_work_tile_if(self, work_tile):
        tile_x, _, _ = work_tile.tile_idx
        tile_x >= self.logical_tiles
    ```
    ## Use instead
    `return tile_x >= self.logical_tiles`
    """, phase="capture", exc="DSLUserCodeError", reference_checks_at="kernel",
     valid=[VALID_SKIP, skip_program("skip_first", before='''\
         def skip_first(work_tile):
             return work_tile == 0''')],
     invalid=[skip_program("skip_nothing", before='''\
         def skip_nothing(work_tile):  # expect: TS518
             first = work_tile == 0''')])
