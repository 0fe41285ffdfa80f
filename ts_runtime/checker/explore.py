"""Breadth-first exploration of all interleavings of one compiled run (model.md §9).

From the initial state (all cursors 0, S empty credits per pool, PDL flag set only under
`assume_pdl_wait_completed`) the search pops states in FIFO order. In each state:

1. enabled tasks = unfinished tasks whose next step is non-blocking, or blocking with a
   credit in its pool;
2. **race** (TS802): among the held accesses and the pending work access of every
   enabled task, two accesses by different tasks to different resources whose role
   ranges overlap, on overlapping slots, neither merely acquired (`prod_held`), at
   least one a write. Checked in every state, also one where no task can run: a wait
   starts a read without being a pending access, so its race shows first in the state
   after it, which may be the last (and is, when the reduction runs the wait's trailing
   release with it);
3. all finished -> a complete execution;
4. some unfinished but none enabled -> **deadlock** (TS801);
5. **PDL order** (TS803): an enabled `launch_griddep` while no `wait_griddep` ran;
6. successors: the ample set (reduce.py) or every enabled task but those whose next
   step starts a racing access (the search does not go on past a race); each successor
   is canonicalised (symmetry) and enqueued if new.

The visited set keys on the full state (state.py). A finding is recorded the first time
its key (the blocked entries, the racing pair, the launch entry) is seen; because every
step advances one cursor, all paths to a state have the same length, so the BFS parent
chain is a shortest counterexample to that state. The search continues after findings
(to report every distinct one) unless `early_exit`; it stops at `max_states` or the
deadline and then reports itself incomplete.
"""
from __future__ import annotations

import gc
import time
from collections import deque
from dataclasses import dataclass, field
from itertools import repeat
from operator import attrgetter
from typing import Dict, List, Optional, Tuple

from .program import Program
from .reduce import make_canonicalizer, por_tables, symmetry_classes
from .state import PROD_HELD, UNCOVERED, WRITES, apply_held, race_overlap

__all__ = ["Finding", "ReplayedFinding", "RunResult", "explore", "replay"]

_bidx, _step, _pend, _launch = (attrgetter("bidx"), attrgetter("simple", "rest"), attrgetter("pend"),
                                attrgetter("launch"))

DEADLOCK, RACE, PDL = "deadlock", "race", "pdl"


@dataclass
class Finding:
    kind: str                       # deadlock | race | pdl
    key: tuple
    state: tuple
    path: List[Tuple[int, int]]     # (real task index, position) per step, shortest
    tasks: Tuple[int, ...]          # real task indices involved (blocked tasks / racing pair / launcher)
    detail: dict = field(default_factory=dict)
    state_no: int = 0               # BFS order of the state (1-based)


class ReplayedFinding(Finding):
    """A finding made without the search (causal.py): its state is made on first read,
    by running its path from the initial state, as most checks never show it. Its
    `state_no` is the length of its path plus one (the state's place in a BFS of the
    unreduced graph, counted by depth)."""

    program: Program = None

    @property
    def state(self) -> tuple:
        got = self.__dict__.get("_state")
        if got is None:
            got = self.__dict__["_state"] = replay(self.program, self.path)
        return got

    @state.setter
    def state(self, value) -> None:
        self.__dict__["_state"] = value


def replay(prog: Program, path) -> tuple:
    """The state (held tuple in place, as Finding.state) after running `path` ((task,
    position) steps, each task's in order) from the initial state."""
    lay = prog.layout
    pdl_idx, held_idx = lay.pdl_idx, lay.held_idx
    s = list(prog.initial_state())
    held = s[held_idx]
    for i, c in path:
        op = prog.ops[i][c]
        simple, rest = op.simple, op.rest
        s[i] = c + 1
        for k, d in simple:
            s[k] += d
        if rest is not None:
            rounds, pdl_wait, hact, eidx = rest
            for k, m, cc, d in rounds:
                v = s[k] = (s[k] + 1) % m
                if v == 0:
                    s[cc] += d
            if pdl_wait:
                s[pdl_idx] = 1
            if hact:
                held = apply_held(held, hact, i, eidx)
    return tuple(s[:held_idx]) + (held,)


@dataclass
class RunResult:
    program: Program
    states: int = 0
    complete_states: int = 0
    hit_limit: bool = False
    timed_out: bool = False
    seconds: float = 0.0
    findings: List[Finding] = field(default_factory=list)
    complete_path: Optional[List[Tuple[int, int]]] = None
    complete_state: Optional[tuple] = None
    complete_no: int = 0
    max_states: int = 0

    @property
    def finished(self) -> bool:
        return not (self.hit_limit or self.timed_out)


def explore(prog: Program, *, max_states: int = 1_000_000, deadline: Optional[float] = None,
            reduce: bool = True, symmetry: bool = True, early_exit: bool = False,
            max_findings: int = 64, cursor_keyed: bool = False, walk: bool = True,
            macro: bool = True, witness: bool = True, expect: Optional[frozenset] = None) -> RunResult:
    """BFS over one compiled run. `cursor_keyed` emulates the reference's visited set
    (cursor vector only; unsound, kept for comparison tests). `walk`: a one-task run is
    searched by `_explore_one` (False: by the general BFS, for comparison tests).
    `macro`: with `reduce`, run trailing steps with the step before them (MacroSteps;
    False: one step per transition, for comparison tests). `witness`: keep the shortest
    run to the first complete state (RunResult.complete_path, shown by the verbose
    report); False leaves it None. `expect`: the keys of every finding the run can have
    (causal.causal_run: races only); the search stops once it has recorded them all, as
    it can find nothing more (its states and complete states are then those counted so
    far; the findings, found in BFS order, are those of the whole search)."""
    t0 = time.perf_counter()
    lay = prog.layout
    T = lay.tasks
    if T == 1 and walk and not cursor_keyed:
        return _explore_one(prog, t0, max_states, deadline, early_exit, max_findings)
    coff = lay.credit_off
    toff = lay.total_off
    pdl_idx = lay.pdl_idx
    held_idx = lay.held_idx
    ops = prog.ops
    alias = prog.alias
    has_alias = bool(prog.aliased)
    check_pdl = prog.has_pdl_launch
    por = por_tables(prog) if reduce else None
    classes = symmetry_classes(prog) if symmetry else []
    # Held tuples are interned: the state stores a small int (index into held_tab), so
    # states hash as int tuples and each held transition is computed once (apply_memo).
    held_tab: List[tuple] = [()]
    held_ids: Dict[tuple, int] = {(): 0}
    apply_memo: Dict[tuple, int] = {}

    def intern(h: tuple) -> int:
        hid = held_ids.get(h)
        if hid is None:
            hid = held_ids[h] = len(held_tab)
            held_tab.append(h)
        return hid

    canon = make_canonicalizer(classes, T, held_idx, held_tab.__getitem__, intern) if classes else None
    tasks = range(T)
    live = [i for i in tasks if ops[i]]    # a task without steps is always finished
    singles = [(i,) for i in tasks]        # ample sets of one task

    # Per task and position (one extra position past the end): the state index of the
    # pool the step blocks on (-1: never blocks; -2: the task has finished), the step's
    # transition (Op.step plus the task's next position, see `fused_steps`) and its
    # pending aliased access (Op.pend).
    fuse = reduce and macro and not cursor_keyed
    block_at, eff_at, pend_at, launch_at = [], [], [], []
    tables = prog.task_tables
    for tops in ops:
        key = ("explore", id(tops), fuse)
        tt = tables.get(key)
        if tt is None:
            tt = tables[key] = ([*map(_bidx, tops), -2], MacroSteps(tops) if fuse else _plain_steps(tops),
                                list(map(_pend, tops)), list(map(_launch, tops)))
        block_at.append(tt[0])
        eff_at.append(tt[1])
        pend_at.append(tt[2])
        launch_at.append(tt[3])
    amp = suf = None
    if por is not None:
        amp, suf = por.ample, por.suffix_dmask
        if fuse:
            amp = [_MacroAmple(tops, a, e) for tops, a, e in zip(ops, amp, eff_at)]
    race_memo: Dict[tuple, tuple] = {}

    # The search's states end with two constant slots after the held id, s[-2] == 0 and
    # s[-1] == 1, so that block_at's sentinels index them: a task is enabled iff
    # s[block_at[i][s[i]]] > 0 (-1, never blocks: reads 1; -2, finished: reads 0).
    # `decoded` drops them.
    init = prog.initial_state()
    init = init[:held_idx] + (intern(init[held_idx]), 0, 1)
    # state -> None (the initial state) or (parent, task index, permutation or None)
    visited: Dict[tuple, Optional[tuple]] = {init: None}
    seen_cursors = {init[:T]} if cursor_keyed else None
    queue = deque([init])
    result = RunResult(prog, max_states=max_states)
    seen_keys: set = set()
    explored = 0

    def decoded(s: tuple) -> tuple:
        """The state with its held tuple in place of the interned id (and without the
        two constant slots)."""
        return s[:held_idx] + (held_tab[s[held_idx]],)

    def path_to(s: tuple):
        """Shortest path to `s` as (real task, position) plus the frame map of `s`."""
        edges = []
        info = visited[s]
        while info is not None:
            edges.append(info)
            info = visited[info[0]]
        edges.reverse()
        if canon is None:
            return [(i, pos) for parent, i, _ in edges
                    for pos in range(parent[i], eff_at[i][parent[i]][2])], list(range(T))
        frame = list(range(T))           # frame[index in current state] = real task
        out = []
        for parent, i, perm in edges:
            real = frame[i]
            c = parent[i]
            out.extend((real, pos) for pos in range(c, eff_at[i][c][2]))
            if perm is not None:
                nxt = [0] * T
                for old in range(T):
                    nxt[perm[old]] = frame[old]
                frame = nxt
        return out, frame

    def record(kind, key, s, tasks, detail):
        if key in seen_keys or len(result.findings) >= max_findings:
            return
        seen_keys.add(key)
        path, frame = path_to(s)
        real = tuple(frame[t] for t in tasks)
        detail = dict(detail)
        detail["frame"] = frame
        result.findings.append(Finding(kind, key, decoded(s), path, real, detail, explored))

    # with `expect` (and no symmetry: the keys name real tasks), only the accesses of the
    # expected pairs can race: the others are left out of the scan
    sigs = {a for key in expect for a in key[1]} if expect is not None and canon is None else None

    def races(held: tuple, pending: tuple) -> tuple:
        """The racing pairs among the held entries and the pending accesses:
        ((key, writer task, other task, detail), ...)."""
        items = [(e[0], e[1], e[2], e[3], e[6], False, e[4] == UNCOVERED) for e in held if e[2] != PROD_HELD]
        for i, p in pending:
            items.append((p[0], p[1], p[2], i, p[3], True, False))
        if sigs is not None:
            items = [x for x in items if (x[3], x[4], x[0], x[2]) in sigs]
        out = []
        n = len(items)
        for a in range(n - 1):
            xa = items[a]
            wa = xa[2] in WRITES
            for b in range(a + 1, n):
                xb = items[b]
                ov = race_overlap(alias, xa, xb)
                if ov is None:
                    continue
                w, o = (xa, xb) if wa else (xb, xa)
                key = (RACE, frozenset({(w[3], w[4], w[0], w[2]), (o[3], o[4], o[0], o[2])}))
                out.append((key, w[3], o[3], {"writer": w, "other": o, "overlap": ov}))
        return tuple(out)

    stop = False
    popleft, push = queue.popleft, queue.append
    fused = amp is not None and not has_alias and not check_pdl
    while queue and not stop:
        s = popleft()
        explored += 1
        if (explored & 255) == 0:
            if deadline is not None and time.perf_counter() > deadline:
                result.timed_out = True
                break
            if explored == _GC_PAUSE_AT:
                _pause_gc()
        choice = None
        enabled = []
        if fused:
            # no race or PDL check to make: the scan stops at the first enabled task
            # whose step is an ample set by itself (the one the loop below would pick)
            sufs = None
            for i in live:
                c = s[i]
                if s[block_at[i][c]] > 0:
                    m = amp[i][c]
                    if m == 0:
                        choice = singles[i]     # invisible, decrements no pool
                        break
                    if m > 0:
                        if sufs is None:
                            # per task: the pools it decrements at or after its cursor
                            sufs = [suf[j][s[j]] for j in tasks]
                        other = 0
                        for j in tasks:
                            if j != i:
                                other |= sufs[j]
                        if not m & other:
                            choice = singles[i]
                            break
                    enabled.append(i)
        else:
            for i in live:
                if s[block_at[i][s[i]]] > 0:
                    enabled.append(i)
        if choice is None:
            racing = None
            if has_alias:
                hid = s[held_idx]
                pending = []
                for i in enabled:
                    p = pend_at[i][s[i]]
                    if p is not None:
                        pending.append((i, p))
                if hid or len(pending) > 1:
                    rk = (hid, tuple(pending))
                    found = race_memo.get(rk)
                    if found is None:
                        found = race_memo[rk] = races(held_tab[hid], pending)
                    for key, wt, ot, detail in found:
                        if key not in seen_keys:
                            record(RACE, key, s, (wt, ot), detail)
                            if early_exit or (expect is not None and expect <= seen_keys):
                                stop = True
                        # a task whose next step starts one of the racing accesses is
                        # not advanced from here: the search does not go on past a race
                        # (docs/checker.md §3)
                        for x in (detail["writer"], detail["other"]):
                            if x[5]:
                                racing = racing or set()
                                racing.add(x[3])
                    if stop:
                        break
            if not enabled:
                # no task can run: every task whose step blocks on a pool is blocked
                blocked = [i for i in live if block_at[i][s[i]] >= 0]
                if not blocked:
                    result.complete_states += 1
                    if witness and result.complete_path is None:
                        result.complete_path, _ = path_to(s)
                        result.complete_state = decoded(s)
                        result.complete_no = explored
                else:
                    key = (DEADLOCK, tuple((i, ops[i][s[i]].eidx) for i in blocked))
                    # canonical key by real identity happens at reporting (by source entries)
                    record(DEADLOCK, key, s, tuple(blocked), {})
                    if early_exit:
                        break
                continue
            if check_pdl and not s[pdl_idx]:
                for i in enabled:
                    if launch_at[i][s[i]]:
                        record(PDL, (PDL, i, ops[i][s[i]].eidx), s, (i,), {})
                        if early_exit:
                            stop = True
                if stop:
                    break
            # ---- successors
            if racing:
                enabled = [i for i in enabled if i not in racing]
            choice = enabled
            if amp is not None and not fused and len(enabled) > 1:
                sufs = None
                for i in enabled:
                    m = amp[i][s[i]]
                    if m < 0:
                        continue        # a visible step
                    if m:
                        if sufs is None:
                            # per task: the pools it decrements at or after its cursor
                            sufs = [suf[j][s[j]] for j in tasks]
                        other = 0
                        for j in tasks:
                            if j != i:
                                other |= sufs[j]
                        if m & other:
                            continue
                    choice = singles[i]
                    break
        for i in choice:
            # the successor: the Op.effect transition (inlined: the innermost loop), then the
            # held transition (interned, memoised)
            simple, rest, lst_i = eff_at[i][s[i]]
            lst = list(s)
            lst[i] = lst_i
            for k, d in simple:
                lst[k] += d
            if rest is not None:
                rounds, pdl_wait, hact, eidx = rest
                for k, n, cc, d in rounds:
                    v = (lst[k] + 1) % n
                    lst[k] = v
                    if v == 0:
                        lst[cc] += d
                if pdl_wait:
                    lst[pdl_idx] = 1
                if hact:
                    hk = (s[held_idx], hact, i, eidx)
                    hid = apply_memo.get(hk)
                    if hid is None:
                        hid = apply_memo[hk] = intern(apply_held(held_tab[s[held_idx]], hact, i, eidx))
                    lst[held_idx] = hid
            t = tuple(lst)
            perm = None
            if canon is not None:
                t, perm = canon(t)
            if t not in visited:
                if seen_cursors is not None:
                    if t[:T] in seen_cursors:
                        continue
                    seen_cursors.add(t[:T])
                visited[t] = (s, i, perm)
                push(t)
                if len(visited) > max_states:
                    result.hit_limit = True
                    stop = True
                    break
    result.states = explored
    result.seconds = time.perf_counter() - t0
    return result


# A search past this many states allocates enough long-lived tuples that a cyclic-GC pass
# over a large host heap (cutlass loaded) in the middle of it would cost more than the
# search: the collector is paused from here to the end of the check (check_kernel
# resumes it). A smaller search leaves it alone: pausing it up front would defer one
# collection of everything the check made to the check's end, a cost a small check
# notices.
_GC_PAUSE_AT = 4096


def _pause_gc() -> None:
    if gc.isenabled():
        gc.disable()
        _GC_PAUSED.append(True)


_GC_PAUSED: list = []


def resume_gc() -> None:
    """Re-enables the collector if a search of this check paused it."""
    if _GC_PAUSED:
        _GC_PAUSED.clear()
        gc.enable()


def _plain_steps(tops) -> list:
    """Per position: (simple moves, rest, next position) of the step alone (Op.step)."""
    return [(simple, rest, c + 1) for c, (simple, rest) in enumerate(map(_step, tops))]


def trails(tops, k: int) -> bool:
    """Whether step `k` of a task's ops runs as part of the step before it (MacroSteps):
    a trailing step (`Op.trail`) whose own next step is not observed (a pending access or
    a launch)."""
    return k < len(tops) and tops[k].trail and (k + 1 >= len(tops) or not tops[k + 1].vis)


class MacroSteps(dict):
    """Position c -> (simple moves, rest, next position) of the *macro-step* that starts
    with step c of a task's ops and goes on through the trailing steps after it
    (`Op.trail`: a commit, a release, a work call nothing aliases, ...), so that the
    search never stops between them (docs/checker.md §4, "Macro-steps"). Filled on first
    use: the search reaches only the positions where a macro-step starts, often a small
    part of a long list."""
    __slots__ = ("tops",)

    def __init__(self, tops):
        super().__init__()
        self.tops = tops

    def __missing__(self, c: int) -> tuple:
        tops = self.tops
        op = tops[c]
        simple, rest = op.simple, op.rest
        nxt = c + 1
        # a trailing step joins unless the step after it is observed (a pending access or
        # a launch): the task's pending access appears only by a step of its own, never
        # inside a macro-step, so every state the search skips shows what the state after
        # the macro-step shows (credits aside, which only grow)
        if trails(tops, nxt):
            moves = list(simple)
            while trails(tops, nxt):
                moves.extend(tops[nxt].simple)
                nxt += 1
            simple = tuple(moves)
        v = self[c] = (simple, rest, nxt)
        return v


class _MacroAmple(dict):
    """Position c -> the ample-table entry (reduce.PorTables.ample) of the macro-step at
    c. Its trailing steps decrement nothing and are unobserved, so it is invisible iff its
    first step changes nothing observed and the step after the whole macro-step is
    neither a pending access nor a launch (the single-step table looks at the step right
    after, which for a longer macro-step is a trailing one)."""
    __slots__ = ("tops", "ample", "macro")

    def __init__(self, tops, ample, macro):
        super().__init__()
        self.tops, self.ample, self.macro = tops, ample, macro

    def __missing__(self, c: int) -> int:
        nxt = self.macro[c][2]
        if nxt == c + 1:
            v = self.ample[c]
        else:
            tops = self.tops
            op = tops[c]
            v = -1 if op.loud or (nxt < len(tops) and tops[nxt].vis) else op.dmask
        self[c] = v
        return v


def _explore_one(prog: Program, t0: float, max_states: int, deadline: Optional[float],
                 early_exit: bool, max_findings: int) -> RunResult:
    """The search of a one-task run. With one task every state has at most one successor
    (the task's next step), so the BFS is a walk along a single path: no visited set, no
    queue, no reduction. A race needs two tasks, so only deadlock (the task blocks on a
    pool it never refills itself) and PDL order are checked. Visits and reports exactly
    what `explore` would (same states, counts, findings and counterexamples)."""
    lay = prog.layout
    pdl_idx, held_idx = lay.pdl_idx, lay.held_idx
    tops = prog.ops[0]
    n = len(tops)
    check_pdl = prog.has_pdl_launch
    result = RunResult(prog, max_states=max_states)
    s = list(prog.initial_state())
    held = s[held_idx]

    def finding(kind, key, pos, detail):
        if len(result.findings) < max_findings:
            detail = dict(detail)
            detail["frame"] = [0]
            state = tuple(s[:held_idx]) + (held,)
            result.findings.append(Finding(kind, key, state, list(zip(repeat(0), range(pos))), (0,),
                                           detail, pos + 1))

    # state number pos + 1 (1-based, as `explore` counts) is the one before step `pos`
    explored = n + 1
    for pos, op in enumerate(tops):
        if deadline is not None and ((pos + 1) & 255) == 0 and time.perf_counter() > deadline:
            result.timed_out = True
            explored = pos + 1
            break
        b = op.bidx
        if b >= 0 and s[b] <= 0:
            explored = pos + 1
            finding(DEADLOCK, (DEADLOCK, ((0, op.eidx),)), pos, {})
            break
        if check_pdl and op.launch and not s[pdl_idx]:
            finding(PDL, (PDL, 0, op.eidx), pos, {})
            if early_exit:
                explored = pos + 1
                break
        if pos + 1 >= max_states:
            # `explore` counts visited states, the initial one included
            result.hit_limit = True
            explored = pos + 1
            break
        # the Op.effect transition, inlined
        simple, rest = op.simple, op.rest
        s[0] = pos + 1
        for k, d in simple:
            s[k] += d
        if rest is not None:
            rounds, pdl_wait, hact, eidx = rest
            for k, m, c, d in rounds:
                v = (s[k] + 1) % m
                s[k] = v
                if v == 0:
                    s[c] += d
            if pdl_wait:
                s[pdl_idx] = 1
            if hact:
                held = apply_held(held, hact, 0, eidx)
    else:
        # the final state: every step ran
        if deadline is not None and (explored & 255) == 0 and time.perf_counter() > deadline:
            result.timed_out = True
        else:
            result.complete_states = 1
            result.complete_path = list(zip(repeat(0), range(n)))
            result.complete_state = tuple(s[:held_idx]) + (held,)
            result.complete_no = explored
    result.states = explored
    result.seconds = time.perf_counter() - t0
    return result
