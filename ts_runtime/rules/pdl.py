"""TS601-TS604: Programmatic Dependent Launch (`PdlWaitBarrier` / `PdlLaunchBarrier`).

TS601/TS602 are manager rules over the dependency graph: a resource declared downstream
of a `PdlWaitBarrier` reads the previous grid's results, so each task touching it must
run `wait_griddep()` first. TS603 (the `assume_pdl_wait_completed` switch) and TS604 (what
`is_barrier` means for PDL barriers) describe behaviour, not checks: they are catalogued
for the documentation and have nothing of their own to report. The "launch before any
wait" order across tasks is the exhaustive checker's TS803.
"""
from __future__ import annotations

import textwrap
from typing import Iterable

from ..diagnostics import Related, Severity
from ..model.kernel import ResourceKind
from .base import Rule
from .declare import rule
from .registry import register

ORDER = 70           # model.md §6 step 7 (PDL wait ordering)

_HEADER = '''\
from dataclasses import dataclass
from ts_runtime import schedule, domain_loop, consumer_work, producer_work
from ts_runtime.resources import MemoryResource, TaskLocalVariable, PdlWaitBarrier, PdlLaunchBarrier
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager


@dataclass(kw_only=True)
class InGmem(MemoryResource):
    """Global memory written by the previous grid."""
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
'''

_BUILD = '''\
pdl_wait, pdl_launch = PdlWaitBarrier(name="pdl_wait"), PdlLaunchBarrier(name="pdl_launch")
inp, out, out2 = InGmem(name="in"), OutGmem(name="out"), OutGmem(name="out2")

@schedule
def copy_schedule(pdl_wait, inp, out, pdl_launch):
{copy}

@schedule
def copy2_schedule(pdl_wait, inp, out2):
{copy2}

tasks = [
    Task(name="Copy", src_resources=[pdl_wait, inp], dst_resources=[out, pdl_launch], warp_idx=0,
         num_warps=1, schedule=copy_schedule(pdl_wait, inp, out, pdl_launch)),
    Task(name="Copy2", src_resources={copy2_src}, dst_resources=[out2], warp_idx=1,
         num_warps=1, schedule=copy2_schedule({copy2_args})),
]
graph = {{inp: [pdl_wait], out: [inp], out2: [inp], pdl_launch: [out]}}
return TaskManager(tasks=tasks, resource_dependency_graph=graph, verbose=False{options})
'''

COPY = '''\
pdl_wait.wait_griddep()
with domain_loop(0, 4, 1):
    v = inp.load()
    out.store(v=v)
pdl_launch.launch_griddep()'''

COPY2 = '''\
pdl_wait.wait_griddep()
with domain_loop(0, 4, 1):
    v = inp.load()
    out2.store(v=v)'''


def pdl_program(copy2: str = COPY2, *, copy: str = COPY, waits: bool = True, options: str = "") -> str:
    """Two tasks reading `in` (declared downstream of the PDL wait barrier); `copy2` is the
    body of the second task's schedule, `waits=False` drops the barrier from its resources."""
    ind = lambda s: textwrap.indent(textwrap.dedent(s).strip("\n"), " " * 4)  # noqa: E731
    body = _BUILD.format(copy=ind(copy), copy2=ind(copy2),
                         copy2_src="[pdl_wait, inp]" if waits else "[inp]",
                         copy2_args="pdl_wait, inp, out2" if waits else "inp, out2",
                         options=options)
    if not waits:
        body = body.replace("def copy2_schedule(pdl_wait, inp, out2):", "def copy2_schedule(inp, out2):")
    return _HEADER + "\n\ndef build():\n" + textwrap.indent(body, " " * 4)


VALID = pdl_program()


def _pdl_edges(kernel):
    """(wait barrier rid, dependent rid, edge) for each graph edge PdlWaitBarrier -> D."""
    for e in kernel.graph:
        up = kernel.resources.get(e.upstream)
        if up is not None and up.kind is ResourceKind.PDL_WAIT and e.downstream != e.upstream \
                and e.downstream in kernel.resources:
            yield e.upstream, e.downstream, e


def _dependent_tasks(kernel, dep):
    """Tasks that produce `dep`, or consume it while it is unpipelined, and have work on it.

    Yields (task, its entries in combined head+loop+tail order, first work entry on dep)."""
    res = kernel.res(dep)
    for t in kernel.tasks:
        low = getattr(t, "lowered", None)
        if low is None:
            continue
        if not (dep in t.dst or (dep in t.src and not res.pipelined)):
            continue
        work = [e for e in low.entries if e.resource == dep and e.stage.is_work]
        if work:
            yield t, low.entries, work[0]


def _waits(entries, barrier):
    return [e for e in entries if e.resource == barrier and e.stage.is_work and e.label == "wait_griddep"]


class _PdlRule(Rule):
    order = ORDER

    def findings(self, kernel):
        """(task, first dependent work entry, barrier rid, dependent rid, edge, waits)."""
        if kernel.options.assume_pdl_wait_completed is not False:   # TS603 (UNKNOWN: stay silent)
            return
        for barrier, dep, edge in _pdl_edges(kernel):
            for t, entries, first in _dependent_tasks(kernel, dep):
                yield t, first, barrier, dep, edge, _waits(entries, barrier)


@register
class MissingPdlWait(_PdlRule):
    """
    A task works on a PDL-dependent resource but never runs `wait_griddep()` itself.

    ## What it does
    For every dependency-graph edge `PdlWaitBarrier -> D`, finds each task that produces `D`
    (or consumes it while it has no pipeline) with work on `D`, and requires a
    `<barrier>.wait_griddep()` step in that task's own schedule.

    ## Why is this bad?
    With PDL the next grid starts before this one finishes; the wait is the point from
    which the previous grid's results are visible. Another task's wait does not order this
    task's accesses: without its own wait it may read stale data.

    ## Example
    Two tasks read `in` (graph `{in: [pdl_wait]}`); only one calls `pdl_wait.wait_griddep()`.

    ## Use instead
    List the barrier in each such task's `src_resources` and call `pdl_wait.wait_griddep()`
    before the first access to `in`.
    """
    code = "TS601"
    name = "missing-pdl-wait"
    VALID = [VALID]
    INVALID = [pdl_program('''\
        with domain_loop(0, 4, 1):
            v = inp.load()  # expect: TS601
            out2.store(v=v)''', waits=False)]

    def check(self, kernel) -> Iterable:
        for t, first, barrier, dep, edge, waits in self.findings(kernel):
            if not waits:
                b, d = kernel.name(barrier), kernel.name(dep)
                yield self.diag(f"Task '{t.name}' uses PDL-dependent resource '{d}' but has no '{b}.wait_griddep()' "
                                "entry in the same task schedule", first.range,
                                related=[Related(edge.range, f"'{d}' is declared dependent on '{b}' here")])


@register
class PdlWaitAfterDependentWork(_PdlRule):
    """
    A task's first `wait_griddep()` comes after its first work on a PDL-dependent resource.

    ## What it does
    In a task that must wait (see TS601), compares positions in the combined head + loop +
    tail order: the first `<barrier>.wait_griddep()` must precede the first work step on
    the dependent resource. The finding is on the wait (the step to move).

    ## Why is this bad?
    Work before the wait may read memory the previous grid is still writing.

    ## Example
    `pdl_wait.wait_griddep()` placed after the `domain_loop` that loads `in`.

    ## Use instead
    Call `pdl_wait.wait_griddep()` first, before the loop (it runs once, also in persistent
    kernels).
    """
    code = "TS602"
    name = "pdl-wait-after-dependent-work"
    VALID = [VALID, pdl_program('''\
        with domain_loop(0, 4, 1):
            pdl_wait.wait_griddep()
            v = inp.load()
            out2.store(v=v)''')]
    INVALID = [pdl_program('''\
        with domain_loop(0, 4, 1):
            v = inp.load()
            out2.store(v=v)
        pdl_wait.wait_griddep()  # expect: TS602''')]

    def check(self, kernel) -> Iterable:
        for t, first, barrier, dep, edge, waits in self.findings(kernel):
            if waits and waits[0].index > first.index:
                b, d = kernel.name(barrier), kernel.name(dep)
                yield self.diag(f"Task '{t.name}' uses PDL-dependent resource '{d}' before waiting on PDL barrier "
                                f"'{b}'. Place '{b}.wait_griddep()' before work entries for '{d}'", waits[0].range,
                                related=[Related(first.range, f"the first work on '{d}' runs before the wait"),
                                         Related(edge.range, f"'{d}' is declared dependent on '{b}' here")])


rule("TS603", "assume-pdl-wait-completed", """
    `TaskManager(assume_pdl_wait_completed=True)` turns the PDL ordering checks off.

    ## What it does
    Documents the switch: with it, TS601 and TS602 are not run and the exhaustive checker
    starts as if a `wait_griddep()` had already executed, so TS803 cannot fire.
    ## Why is this bad?
    It is not: it is meant for kernels whose PDL wait is emitted outside TS before the first
    dependent access. Set it anywhere else and a missing or late wait goes unnoticed.
    ## Example
    `TaskManager(..., assume_pdl_wait_completed=True)` while no code waits on the previous grid.
    ## Use instead
    Leave it `False` and emit `pdl_wait.wait_griddep()` in the schedules.
    """, phase="manager", severity=Severity.INFO, order=ORDER,
     open_reason="a switch, not a check: it disables TS601, TS602 and TS803 and reports nothing itself")

rule("TS604", "pdl-barrier-semantics", """
    PDL barriers are ordering-only (`is_barrier=True`) resources.

    ## What it does
    Documents how PDL barriers are treated: graph edges to or from them need only relaxed
    backing (TS353), their steps may sit outside `work_tile_loop` (TS116/TS118) and are then
    hoisted to run once before / after the persistent loop.
    ## Why is this bad?
    It is not; the rules it relaxes report their own findings.
    ## Example
    `pdl_wait.wait_griddep()` before `with work_tile_loop(wq):` runs once per CTA.
    ## Use instead
    Put `wait_griddep()` before the persistent loop and `launch_griddep()` after it.
    """, phase="capture", severity=Severity.INFO,
     open_reason="semantics, not a check: the relaxations are part of TS116, TS118 and TS353")
