"""Runs whose reduced search is a single path, walked without compiling Ops.

Most kernels pass data down a chain of pipelines in which every credit pool has one task
that takes credits from it (the producer acquires empty stages, the consumer waits for
full ones). In such a run, with nothing aliased and no PDL step (or a single task):

* no step of another task can disable an enabled step, as only the pool's one taker
  decrements it; every step commutes with the others' (credit additions commute);
* nothing the properties observe changes (no held access, no pending access, no PDL
  flag or launch).

So in every state each enabled step is an ample set by itself (reduce.py, C1 and C2),
and the reduced search of `explore.explore` follows one path: in each state it runs the
macro-step of the lowest-index enabled task (`explore._explore_one` for a one-task
kernel: every step). This module walks that path on per-entry credit rows, without the
per-step `Op` objects, the visited set and the queue. It returns the `RunResult` the
search would (the same states count, complete state and shortest complete run), or None
when the run does not qualify or the walk meets a deadlock, a PDL launch before a wait,
the state cap or the deadline: the caller then compiles and searches the run, so that
every finding and limit is reported by the one search (docs/checker.md §4, "Single-path
runs"). A program whose tasks might be symmetric is left to the search too, whose
canonical states would pick another (equally short) path.

`Program.ops` of a walked run is compiled on first use (reports, counterexamples).
"""
from __future__ import annotations

import time
from itertools import repeat
from typing import List, Optional

from .compile import CompileContext, _expand_positions
from .credits import _ROLE_BY_ID
from .explore import RunResult
from .state import Layout
from .program import PDL_LAUNCH, PDL_WAIT, Program, _ConsumerWork, _GROUP, _PDL_LAUNCH_KIND, _PDL_WAIT_KIND, \
    _ProducerWork, effect_info, pdl_kind

__all__ = ["walk_run", "LinearContext"]

# How often (in macro-steps) the walk reads the clock for the deadline.
_CLOCK_EVERY = 4096

# LinearContext._resource: a resource whose entries have no row (not dense-strided: the
# run is left to the search), one that owns no pools, one whose pipeline ops have no row
# (the occurrence picks the pool), one whose pipeline ops have a fixed credit effect
_SPARSE, _NO_POOLS, _BY_OCCURRENCE, _FIXED = 0, 1, 2, 3


class LinearContext:
    """Per check: each task's credit rows per lowered entry and its walked lists.

    A row is (pool it blocks on or -1, single-participant moves ((pool, delta), ...),
    shared rounds ((counter, n, pool, delta), ...), mask of pools it decrements, PDL kind,
    whether it trails the step before it (explore.MacroSteps)); a split work call gives
    two equal rows. `ok` is False when the kernel cannot have a single-path run (an
    aliased resource, or a PDL resource with more than one task) or is unlikely to (two
    tasks listing one pipeline on one side)."""

    def __init__(self, ctx: CompileContext):
        self.ctx = ctx
        kernel = ctx.kernel
        self.T = len(kernel.tasks)
        self.ok = not ctx.aliased and (self.T < 2 or single_path_shape(ctx.res, ctx.credits._listing))
        self._rows: list = [None] * self.T       # per task: rows per entry position (None: not made)
        self._lists: dict = {}                   # ctx.task key -> (rows, decrement mask) or None
        self._by_pair: dict = {}                 # (resource, id of stage) -> rows or None
        self._res_info: dict = {}                # resource -> _resource(resource)

    def _entry_rows(self, ti: int, e) -> Optional[tuple]:
        """The row(s) of one lowered entry, or None when the entry's pool depends on its
        occurrence (a domain-interleaved resource) or the resource is not dense-strided:
        those runs are left to the search. A row is a function of the entry's resource
        and stage (the task picks a pool only on interleaved resources): made once per
        pair, from facts of the resource made once per resource (`_resource`)."""
        rid, stage = e.resource, e.stage
        sid = id(stage)
        key = (rid, sid)
        rows = self._by_pair.get(key, 0)
        if rows != 0:
            return rows
        info = self._res_info.get(rid)
        if info is None:
            info = self._res_info[rid] = self._resource(rid)
        how, kind = info
        role = _ROLE_BY_ID.get(sid)
        rows = None
        if how == _SPARSE:
            pass
        elif role is None or how == _NO_POOLS:
            # no credit effect (CreditModel._effect_of): a work call, or a pipeline op on
            # a resource that owns no pools
            pdl = pdl_kind(kind, stage)
            row = (-1, (), (), 0, pdl, pdl == 0)
            split = kind is not _GROUP and (stage is _ConsumerWork or stage is _ProducerWork) and self.ctx.split[rid]
            rows = (row, row) if split else (row,)
        elif how == _FIXED:
            credits = self.ctx.credits
            info = credits.plain_info(rid, stage)
            block, simple, rounds, dmask = info if info is not None else \
                effect_info(credits.fixed_effect(ti, rid, stage), 0, 0)
            rows = ((block, simple, rounds, dmask, 0, block < 0 and not rounds and dmask == 0),)
        self._by_pair[key] = rows
        return rows

    def _resource(self, rid) -> tuple:
        """(how the rows of its entries are made, its kind)."""
        ctx = self.ctx
        credits = ctx.credits
        kind = ctx.res[rid].kind
        trk = credits._tracked.get(rid)
        if trk and _sparse(credits.strides.get(rid)):
            return (_SPARSE, kind)
        if not trk and kind is not _GROUP:
            return (_NO_POOLS, kind)
        if credits._occ_matters(rid):
            return (_BY_OCCURRENCE, kind)
        return (_FIXED, kind)

    def task_list(self, ti: int, variant, tiles: int):
        """(rows, decrement mask) of task `ti`'s list in one run, or None (see
        `_entry_rows`); memoised per distinct list, like CompileContext.task."""
        ctx = self.ctx
        key, low, skip = ctx.list_key(ti, variant, tiles)
        if key in self._lists:
            return self._lists[key]
        out = None
        if low is None:
            out = ([], 0)
        else:
            # rows are made for the entries the list runs, in its order, as compile.py makes
            # effects: the round counters (credits.counters) are then made in the same order
            entries = low.entries
            tab = self._rows[ti]
            if tab is None:
                tab = self._rows[ti] = [None] * len(entries)
            pos, _ = _expand_positions(low, ctx.counts[ti].n, variant.assignment, tiles, skip)
            rows = []
            mask = 0
            for j in pos:
                got = tab[j]
                if got is None:
                    got = tab[j] = self._entry_rows(ti, entries[j]) or False
                if got is False:
                    break
                rows.extend(got)
                mask |= got[0][3]
            else:
                out = (rows, mask)
        self._lists[key] = out
        return out


def walk_run(lin: LinearContext, variant, tiles: int, max_states: int, deadline: Optional[float],
             witness: bool) -> Optional[RunResult]:
    """The search's result for one run when its reduced search is a single path (see the
    module docstring), or None: the run is then to be compiled and searched."""
    t0 = time.perf_counter()
    T = lin.T
    lists = []
    taken = 0
    for ti in range(T):
        got = lin.task_list(ti, variant, tiles)
        if got is None:
            return None
        rows, mask = got
        if mask & taken:
            return None          # two tasks take credits from one pool
        taken |= mask
        lists.append(rows)
    ctx = lin.ctx
    kernel = ctx.kernel
    if T > 1 and _maybe_symmetric(kernel, [len(rows) for rows in lists]):
        return None
    credits = ctx.credits
    cred = list(credits.initial_credits())
    tot = [0] * len(credits.counters)
    pdl = 1 if ctx.pdl_initial else 0
    if T == 1:
        return _walk_one(ctx, variant, tiles, lists[0], cred, tot, pdl, max_states, deadline, t0)
    ns = [len(rows) for rows in lists]
    cur = [0] * T
    path: Optional[list] = [] if witness else None
    # a run of two or more tasks is walked by macro-steps (explore.MacroSteps): a step
    # and the trailing steps after it
    live = [i for i in range(T) if ns[i]]
    explored = 1
    while True:
        for i in live:
            c = cur[i]
            if c < ns[i]:
                b = lists[i][c][0]
                if b < 0 or cred[b] > 0:
                    break
        else:
            if any(cur[i] < ns[i] for i in live):
                return None          # a deadlock: the search reports it
            break
        rows = lists[i]
        # (no PDL step: a run with one is walked only with one task, LinearContext.ok)
        _, simple, rounds, _, _, _ = rows[c]
        for k, d in simple:
            cred[k] += d
        for k, m, p, d in rounds:
            v = tot[k] = (tot[k] + 1) % m
            if v == 0:
                cred[p] += d
        nxt = c + 1
        n = ns[i]
        while nxt < n and rows[nxt][5]:
            for k, d in rows[nxt][1]:
                cred[k] += d
            nxt += 1
        if path is not None:
            path.extend(zip(repeat(i), range(c, nxt)))
        cur[i] = nxt
        explored += 1
        if explored > max_states:
            return None
        if deadline is not None and explored % _CLOCK_EVERY == 0 and time.perf_counter() > deadline:
            return None
    prog = _program(ctx, variant, tiles, lists, False)
    result = RunResult(prog, max_states=max_states)
    result.states = explored
    result.complete_states = 1
    if path is not None:
        result.complete_path = path
        result.complete_state = tuple(cur) + tuple(cred) + tuple(tot) + (pdl, ())
        result.complete_no = explored
    result.seconds = time.perf_counter() - t0
    return result


def _walk_one(ctx: CompileContext, variant, tiles: int, rows: list, cred: list, tot: list, pdl: int,
              max_states: int, deadline: Optional[float], t0: float) -> Optional[RunResult]:
    """`walk_run` of a one-task run: the search (`explore._explore_one`) runs every step
    in list order, one state per step; its shortest complete run is the whole list."""
    n = len(rows)
    if n + 1 > max_states:
        return None
    launch = False
    for b, simple, rounds, _, kind, _ in rows:
        if b >= 0 and cred[b] <= 0:
            return None              # a deadlock: the search reports it
        if kind:
            if kind == PDL_LAUNCH:
                if not pdl:
                    return None      # a launch before any wait: the search reports it
                launch = True
            elif kind == PDL_WAIT:
                pdl = 1
        for k, d in simple:
            cred[k] += d
        for k, m, p, d in rounds:
            v = tot[k] = (tot[k] + 1) % m
            if v == 0:
                cred[p] += d
    if deadline is not None and time.perf_counter() > deadline:
        return None
    result = RunResult(_program(ctx, variant, tiles, [rows], launch), max_states=max_states)
    result.states = n + 1
    result.complete_states = 1
    result.complete_path = list(zip(repeat(0), range(n)))
    result.complete_state = (n,) + tuple(cred) + tuple(tot) + (pdl, ())
    result.complete_no = n + 1
    result.seconds = time.perf_counter() - t0
    return result


def single_path_shape(res, listing) -> bool:
    """Whether a kernel of two or more tasks, nothing aliased, may have single-path runs
    by its resources (`res`) and the tasks listing each tracked one (`listing`:
    CreditModel._listing): no PDL barrier (a launch and a wait of two tasks are observed,
    model.md §9), and no two tasks listing one pipeline on one side. Those (two consumer
    warpgroups of one accumulator) are, nearly always, two takers of one of its pools:
    not worth making rows for (a run's own test is `walk_run`'s)."""
    for r in res.values():
        if r.kind is _PDL_WAIT_KIND or r.kind is _PDL_LAUNCH_KIND:
            return False
    producers, consumers = listing
    return max(producers.values(), default=0) < 2 and max(consumers.values(), default=0) < 2


def _sparse(st) -> bool:
    """Whether interleave strides (None: the resource is on no task's lists) are not all
    dense."""
    return st is None or st[0] > 1 or st[1] > 1 or st[2] > 1 or st[3] > 1


def _maybe_symmetric(kernel, lens) -> bool:
    """Whether two tasks with steps might have identical programs (reduce.symmetry_classes
    would then canonicalise states, and the search's path could differ from the walk's).
    Identical programs have the same length and the same source entries: tasks that
    differ in either are not symmetric. `lens`: each task's number of steps."""
    some = [n for n in lens if n]
    if len(set(some)) == len(some):
        return False
    seen = set()
    for t, n in zip(kernel.tasks, lens):
        if not n:
            continue
        entries = t.lowered.entries
        a, z = entries[0].range, entries[-1].range
        key = (n, a.path, a.line, a.column, z.path, z.line, z.column)
        if key in seen:
            return True
        seen.add(key)
    return False


def _program(ctx: CompileContext, variant, tiles: int, lists, has_launch: bool) -> Program:
    """The walked run's Program; its Ops are compiled on first use."""
    credits = ctx.credits
    kernel = ctx.kernel

    def compile_ops() -> List[list]:
        return [ctx.task(ti, variant, tiles)[0] for ti in range(len(kernel.tasks))]

    return Program(kernel=kernel, variant=variant, task_names=ctx.task_names, ops=None, credits=credits,
                   layout=Layout(len(lists), len(credits.pools), len(credits.counters)), counts=ctx.counts,
                   alias=ctx.alias, aliased=ctx.aliased, alias_pairs=ctx.pairs, pdl_initial=ctx.pdl_initial,
                   has_pdl_launch=has_launch, tiles=tiles, task_tables=ctx.task_tables, compile_ops=compile_ops)
