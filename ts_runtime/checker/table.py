"""A check decided by the run the schedule-table simulation completed.

Every TaskManager, and ts-lint's rule engine, runs the schedule-table simulation
(rules/simulation.py, TS810-TS814) before the checker: one round-robin interleaving of
the tasks' lists. When that interleaving reaches the end of every list
(credits.remember_complete_run) and the kernel's one checker run is a single-path run
(linear.py) of the same lists with the same credit effects, the checker's result follows
from it without walking the run and without compiling anything: `table_check` reads the
kernel and the simulation's credit model only. The argument is in docs/checker.md §4,
"Runs the schedule table completed".

Most small kernels (a producer, an MMA task and an epilogue down two or three pipelines)
are decided here, so this is the checker's whole cost on them: it does what deciding
needs and defers the rest (the run's Program, its CompileContext) to the first reader, a
report or a counterexample.
"""
from __future__ import annotations

import time
from typing import Optional

from ..enums import OpaqueCondition
from ..model.values import UNKNOWN
from .compile import CompileContext
from .credits import known_layout
from .expand import iteration_count, variants
from .explore import RunResult
from .linear import _maybe_symmetric, _program, _sparse, single_path_shape
from .program import _GROUP, Program, _ConsumerWait, _ProducerAcquire

__all__ = ["table_check"]


def table_check(kernel, max_states: int, alias_pairs: list) -> Optional[RunResult]:
    """The result of the kernel's one checker run (one work tile, no witness), when the
    schedule table's complete run decides it; None to leave the run to the walk or the
    search (linear.py, explore.py), which then also report anything unknown.
    `alias_pairs`: the kernel's (`program.alias_table`), which the caller shares with
    the CompileContext of a run left to the walk or the search.

    The run is the walk's (`linear.walk_run`): the table's lists are the run's, and each
    of their steps has the same credit effect on the checker's pools (the table's extra
    pools only block more). So the table's round robin is a run of this one, to its end.
    Every pool has one taker and credits only add up, so no step disables another: then
    no run can deadlock (from any state, the first step of the complete run that the
    state has not made is enabled), and the walk goes to the end too. Its states are one
    per macro-step plus the initial one, and a task's macro-steps start at its first
    step and at each step that does not trail the one before it (explore.MacroSteps):
    here its blocking steps, a wait or an acquire of a tracked resource; every other
    step trails (a commit or a release of one participant, a work call or its two halves,
    a try-wait)."""
    t0 = time.perf_counter()
    model = known_layout(kernel)
    lists = model.complete_run if model is not None else None
    tasks = kernel.tasks
    if lists is None or len(tasks) < 2 or alias_pairs:
        return None           # (an aliased run is never single-path)
    if not _same_run(kernel, model):
        return None
    tracked = model._tracked
    states = 1
    for steps in lists:
        if not steps:
            continue
        takes = 0
        for x in steps:
            stage = x.stage
            if (stage is _ProducerAcquire or stage is _ConsumerWait) and tracked[x.resource]:
                takes += 1
        x = steps[0]
        first = (x.stage is _ProducerAcquire or x.stage is _ConsumerWait) and tracked[x.resource]
        states += 1 + takes - first          # its first step, and each blocking step after it
    # (identical programs have identical lists: their lengths tell `_maybe_symmetric` apart)
    lens = [len(steps) for steps in lists]
    if states > max_states or _maybe_symmetric(kernel, lens):
        return None
    variant, = variants(kernel, tiles=1, keys=())
    result = RunResult(TableProgram(kernel, variant), max_states=max_states)
    result.states = states
    result.complete_states = 1
    result.seconds = time.perf_counter() - t0
    return result


def _same_run(kernel, model) -> bool:
    """Whether the table's complete run (`model`'s, the simulation's) is a complete run of
    the checker's one run, which is single-path:

    * the same lists: exact loop counts (the table's fallback count for a bound known
      only at run time is not the checker's), no guard that differs between the two
      (an opaque guard: the table takes each one True; an unknown one), no skipped tile
      and no work-tile loop, every entry on a known resource;
    * the same credit effects on the checker's pools: one pool per role of each tracked
      resource (no group; dense strides, so no lane and no interleaving), one task
      performing each role of each resource (one participant in both models, one taker
      per pool), every tracked resource a task steps on listed by some task (the
      checker's rows: linear.LinearContext._resource);
    * a single-path run (linear.LinearContext.ok): nothing aliased (the caller's test),
      and `linear.single_path_shape`: no PDL barrier, no two tasks listing one pipeline
      on one side."""
    res = kernel.resources
    for r in res.values():
        if r.kind is _GROUP or r.group is not None:
            return False
    if not single_path_shape(res, model._listing):
        return False
    for who in model._performers.values():
        if len(who) > 1:
            return False
    strides, tracked = model.strides, model._tracked
    for st in strides.values():
        if _sparse(st):
            return False
    for t in kernel.tasks:
        low = t.lowered
        if low is None:
            continue
        if low.skip_if is not None or low.has_work_tile_loop:
            return False
        cnt = iteration_count(low, 1)
        if cnt.n is None or not cnt.exact:
            return False
        for e in low.entries:
            g = e.guard
            if g is not None and (g is UNKNOWN or isinstance(g, OpaqueCondition)):
                return False
            rid = e.resource
            if rid not in strides and (rid not in res or tracked.get(rid)):
                return False         # an unknown resource, or a tracked one no task lists
    return True


class TableProgram(Program):
    """The Program of a run `table_check` decided: its kernel and variant, one work tile;
    everything else (the CompileContext's credit model, alias table, counts, and the Ops)
    is made on first read, by a report or a counterexample, exactly as the walk's run
    would have it (linear._program)."""

    def __init__(self, kernel, variant):
        self.kernel = kernel
        self.variant = variant
        self.tiles = 1

    def __getattr__(self, name):
        # reached only for an attribute not yet set: every other field of a Program
        if name.startswith("__"):
            raise AttributeError(name)
        full = _program(CompileContext(self.kernel), self.variant, 1, self.kernel.tasks, False)
        self.__dict__.update(full.__dict__)
        return getattr(self, name)
