"""Aliased runs decided from one walk and its happens-before order.

Why: aliasing (an epilogue buffer laid over the mainloop's stages, say) makes every
access step visible, so the partial-order reduction of reduce.py no longer follows one
path: the search interleaves each access both ways and carries a held map and a race
scan per state. Yet most such kernels pass data down pipelines in which every credit
pool has one task that adds credits to it and one that takes them. Then the k-th take
of a pool is enabled exactly when its one giver has made a fixed give: the runs of the
kernel are exactly the linearisations of one happens-before order (a marked graph), and
the states it reaches are exactly the down-closed sets of steps of that order.

So one walk decides the run:

1. walk any linearisation (the lowest-index enabled task's next step, and the trailing
   steps after it) and give each step a vector clock: its task's previous clock joined
   with the clock of the give that enables it;
2. check that the held map is a function of the set of steps run, not of their order.
   Only three held actions (state.apply_held) touch other tasks' entries, and only by
   dropping them: an acquire of a DMA-read stage drops its reads, a wait drops the
   writes of its stage, a completion wait drops the reads tagged with its round. Every
   other action reads and writes its own task's entries. So two unordered steps of
   different tasks commute unless one drops an entry that the other reads or makes
   (two drops commute), in the walk's order or the other; the walk records both sides
   and checks. Then each held entry is made by the step that adds it in the walk, in
   every run, and is gone once the step that dropped it in the walk has run (an entry
   that two unordered steps can drop, a DMA read dropped by its completion wait and by
   the producer's next acquire of its stage, ends at whichever runs first: earlier,
   in some runs, than in the walk); a pending work access lives from the task's
   previous step to the work step;
3. two such lifetimes [s1, e1) and [s2, e2) can both be live in a reachable state only
   if neither end happens before either start: the smallest state holding s1 and s2 is
   the down-closure of {s1, s2} (exactly then, when each entry has one dropper).

When no two conflicting accesses (model.md §9, "Race") can be live together, the run
has no race, and (as the walk finished) no deadlock: the result is the search's
verdict, with the walk's states counted. When some can, their pairs are every race the
search can find (it finds no deadlock either, and no PDL order violation as there is
no launch): the search is run, with these keys, and stops once it has recorded them
all, with the same findings and counterexamples as the whole search. Anything else (a
pool with two givers or takers, a round counter with two arriving tasks, steps that
do not commute, a PDL launch, a deadlock, the state cap or the deadline) returns None
and the run is searched in full (docs/checker.md §4, "Aliased runs").
"""
from __future__ import annotations

import time
from bisect import bisect_left
from typing import Dict, List, Optional, Union

from .explore import RACE, RunResult, trails
from .program import Program
from .state import ACQ, CLEAR, CONS_HELD, CWORK, PROD, PROD_HELD, PWORK, REL, TAG, UNCOVERED, UWORK, WAIT, \
    apply_held, race_overlap

__all__ = ["causal_run"]

_TAGGED = ("tagged",)     # by_key's key of entries a completion wait may drop
_CLOCK_EVERY = 1024       # steps between reads of the clock for the deadline


def causal_run(prog: Program, max_states: int, deadline: Optional[float],
               witness: bool, early_exit: bool = False) -> Union[RunResult, frozenset, None]:
    """For an aliased run whose happens-before order decides it (module docstring): the
    search's result when no two conflicting accesses can be live in one state; else the
    keys (explore.Finding.key) of every race the run can have, a superset of those the
    search reports (it does not go on past a race), so that the search may stop once it
    has found them all (explore's `expect`). None: the run is to be searched in full.
    `early_exit` (the search stops at its first finding, so the keys are of no use): None
    as soon as the walk itself reaches a state with a race."""
    t0 = time.perf_counter()
    lay = prog.layout
    T = lay.tasks
    if T < 2 or prog.has_pdl_launch:
        return None
    ops = prog.ops
    givers: Dict[int, int] = {}
    takers: Dict[int, int] = {}
    arrivers: Dict[int, int] = {}
    slots: Dict[int, set] = {}             # resource -> the stages its steps touch
    for i, tops in enumerate(ops):
        for op in set(tops):                  # equal steps of a task share one Op
            b = op.bidx
            if b >= 0 and takers.setdefault(b, i) != i:
                return None
            simple, rest = op.step
            for k, d in simple:
                if d and (givers if d > 0 else takers).setdefault(k, i) != i:
                    return None
            if rest is not None:
                for k, _n, p, d in rest[0]:
                    if arrivers.setdefault(k, i) != i:
                        return None
                    if d and (givers if d > 0 else takers).setdefault(p, i) != i:
                        return None
                for a in rest[2]:
                    if a[0] <= REL:
                        slots.setdefault(a[1], set()).add(a[2])
                    elif a[0] == UWORK:
                        slots.setdefault(a[1], set()).add(-1)
            if op.pend is not None:
                slots.setdefault(op.pend[0], set()).add(op.pend[1])
    # Without a witness to report, the accesses that can race with nothing are not
    # followed: an access races only with one to an aliased resource at an overlapping
    # stage, and the held actions of one resource and stage read and write only its own
    # entries (the tags of a completion's reads aside, which are followed where kept).
    # With a witness, every entry is followed, so that the complete state is the search's.
    racy = None
    if not witness:
        partners: Dict[int, list] = {}
        for ra, rb in prog.alias_pairs:
            partners.setdefault(ra, []).append(rb)
            partners.setdefault(rb, []).append(ra)
        racy = {(r, sl) for r, sls in slots.items() for sl in sls
                if any(sl == -1 or -1 in slots.get(r2, ()) or sl in slots.get(r2, ())
                       for r2 in partners.get(r, ()))}
        kept: Dict[int, tuple] = {}        # id of held actions -> the ones kept

    # ---- 1. the walk, with a vector clock per step
    pdl_idx, held_idx = lay.pdl_idx, lay.held_idx
    s = list(prog.initial_state())
    held = s[held_idx]
    initial = list(s)
    zero = (0,) * T
    last = [zero] * T                      # each task's latest clock
    gcum: Dict[int, List[int]] = {p: [] for p in givers}     # cumulative gives per pool
    gclk: Dict[int, List[tuple]] = {p: [] for p in givers}   # clock of each give
    taken: Dict[int, int] = {}
    ns = [len(t) for t in ops]
    path: Optional[List[tuple]] = [] if witness else None
    # An access's life: ((resource, slot, access, task, entry index), clock of the step
    # that starts it, the step (task, position) that ends it or None). A step with clock k
    # follows step (j, d) iff k[j] > d.
    lives: List[tuple] = []
    open_: Dict[tuple, tuple] = {}         # held entry -> clock of the step that added it
    touching: List[tuple] = []             # (entries a step reads or makes, task, position, clock)
    kills: List[tuple] = []                # (action dropping other tasks' entries, task, position, clock)
    foreign: List[tuple] = []              # (entry dropped by another task, that task, position, clock)
    readers: Dict[tuple, list] = {}        # (resource, slot) -> (task, position, clock) of the steps reading it
    steps = 0                              # transitions, counted as the search does
    alias = prog.alias
    now: Dict[int, tuple] = {}             # (early_exit) task -> its pending access
    trailing = False
    while True:
        if trailing:
            c = s[i]
            op = ops[i][c]
            b = -1
        else:
            for i in range(T):
                c = s[i]
                if c < ns[i]:
                    op = ops[i][c]
                    b = op.bidx
                    if b < 0 or s[b] > 0:
                        break
            else:
                if any(s[i] < ns[i] for i in range(T)):
                    return None            # a deadlock: the search reports it
                break
            steps += 1
            if steps >= max_states:
                return None
            if deadline is not None and steps % _CLOCK_EVERY == 0 and time.perf_counter() > deadline:
                return None
        tops = ops[i]
        nxt = c + 1
        trailing = trails(tops, nxt)       # run with this step, as explore.MacroSteps does
        prev = last[i]
        if b >= 0 and givers.get(b, i) != i:
            need = taken.get(b, 0) - initial[b] + 1      # gives the take needs
            if need > 0:
                k = bisect_left(gcum[b], need)
                if k == len(gcum[b]):
                    return None            # (cannot happen: the step is enabled)
                clk = [x if x >= y else y for x, y in zip(prev, gclk[b][k])]
                clk[i] += 1
                clk = tuple(clk)
            else:
                clk = prev[:i] + (prev[i] + 1,) + prev[i + 1:]
        else:
            clk = prev[:i] + (prev[i] + 1,) + prev[i + 1:]
        last[i] = clk
        p = op.pend
        if p is not None:
            if b >= 0:
                return None
            if racy is None or (p[0], p[1]) in racy:
                lives.append(((p[0], p[1], p[2], i, p[3]), prev, (i, c)))
        if early_exit:
            # the walk's own states are reachable: a race in one of them will be found by
            # the search, which stops there
            now.pop(i, None)
            if nxt < ns[i] and tops[nxt].pend is not None and \
                    (racy is None or (tops[nxt].pend[0], tops[nxt].pend[1]) in racy):
                q = tops[nxt].pend
                q = (q[0], q[1], q[2], i, q[3])
                if _conflicts(alias, q, open_, now):
                    return None
                now[i] = q
        simple, rest = op.step
        s[i] = c + 1
        if rest is not None:
            rounds, pdl_wait, hact, eidx = rest
            if rounds:
                simple = list(simple)
                for k, m, p, d in rounds:
                    v = s[k] = (s[k] + 1) % m
                    if v == 0:
                        simple.append((p, d))
            if pdl_wait:
                s[pdl_idx] = 1
            if hact and racy is not None:
                got = kept.get(id(hact))
                if got is None:
                    got = kept[id(hact)] = tuple(
                        a for a in hact if a[0] == TAG or a[0] == CLEAR or
                        (a[1], -1 if a[0] == UWORK else a[2]) in racy)
                hact = got
            if hact:
                new = apply_held(held, hact, i, eidx)
                # (held maps are short tuples: membership tests beat building sets)
                added = [e for e in new if e not in held]
                dropped = [e for e in held if e not in new]
                if len(held) - len(dropped) + len(added) != len(new) or \
                        (len(added) > 1 and len(set(added)) != len(added)):
                    return None            # two equal entries: lives could not be told apart
                for e in dropped:
                    lives.append(((e[0], e[1], e[2], e[3], e[6]), open_.pop(e), (i, c)))
                    if e[3] != i:
                        foreign.append((e, i, c, clk))
                for e in added:
                    if early_exit and _conflicts(alias, e, open_, now):
                        return None
                    open_[e] = clk
                for a in hact:
                    kind = a[0]
                    if kind == WAIT or kind == CLEAR or (kind == ACQ and a[3]):
                        kills.append((a, i, c, clk))
                    if held:
                        # the task's own entries the action reads (state.apply_held): a work
                        # call or a wait looks for its entry of the stage; a completion's tag
                        # rewrites its untagged reads
                        if kind == PWORK or kind == CWORK:
                            r, sl = a[1], a[2]
                            added.extend([e for e in held if e[0] == r and e[1] == sl and e[3] == i])
                        elif kind == WAIT:
                            r, sl = a[1], a[2]
                            added.extend([e for e in held if e[0] == r and e[1] == sl and e[3] == i
                                          and e[2] >= CONS_HELD])
                        elif kind == TAG:
                            src = a[3]
                            added.extend([e for e in held if e[3] == i and e[0] in src and e[2] >= CONS_HELD
                                          and e[4] == -1])
                    # ... and the stages whose own entries it looks for, whatever the walk
                    # left there (another task may have dropped one first; a tag is left
                    # out: it rewrites only untagged reads, which a drop removes in either
                    # order, tagged or not)
                    if kind == PWORK or kind == CWORK or kind == WAIT:
                        readers.setdefault((a[1], a[2]), []).append((i, c, clk))
                if added:
                    touching.append((added, i, c, clk))
                held = new
        for k, d in simple:
            s[k] += d
            if d > 0:
                g = gcum[k]
                g.append((g[-1] if g else 0) + d)
                gclk[k].append(clk)
            elif d < 0:
                taken[k] = taken.get(k, 0) - d
        if path is not None:
            path.append((i, c))
    lives.extend(((e[0], e[1], e[2], e[3], e[6]), start, None) for e, start in open_.items())

    # ---- 2. unordered steps of different tasks have commuting held actions: an action
    # that drops other tasks' entries (an acquire of a DMA-read stage, a wait, a
    # completion wait) drops none that an unordered step of another task reads or makes,
    # in the walk's order or the other
    if kills:
        by_key: Dict[tuple, list] = {}
        for entries, i, c, clk in touching:
            for e in entries:
                x = (e, i, c, clk)
                by_key.setdefault((e[0], e[1]), []).append(x)
                if e[4] >= 0:
                    by_key.setdefault(_TAGGED, []).append(x)
        for a, i, c, ci in kills:
            kind = a[0]
            if kind == CLEAR:
                rr, rnd = a[1], a[2]
                hit = [x for x in by_key.get(_TAGGED, ()) if x[1] != i and x[0][4] == rr and x[0][5] <= rnd]
            elif kind == WAIT:
                hit = [x for x in by_key.get((a[1], a[2]), ())
                       if x[1] != i and x[0][2] <= PROD and x[0][4] != UNCOVERED]
            else:
                hit = [x for x in by_key.get((a[1], a[2]), ()) if x[1] != i and x[0][2] >= CONS_HELD]
            for _, j, d, cj in hit:
                if cj[i] <= c and ci[j] <= d:
                    return None            # unordered: the held map could depend on the order
        # an entry the walk dropped before its own task read its stage: in the other
        # order, the read would have seen it
        for e, i, c, ci in foreign:
            j = e[3]
            for jj, d, cj in readers.get((e[0], e[1]), ()):
                if jj == j and cj[i] <= c and ci[j] <= d:
                    return None

    # ---- 3. the conflicting accesses that can be live in one state
    by_res: Dict[int, Dict[int, list]] = {}
    for x in lives:
        item = x[0]
        if item[2] != PROD_HELD:
            by_res.setdefault(item[0], {}).setdefault(item[1], []).append(x)
    races = set()
    for ra, rb in prog.alias_pairs:
        xs, ys = by_res.get(ra), by_res.get(rb)
        if xs is None or ys is None:
            continue
        for slot, group in xs.items():
            if slot == -1:
                others = [y for g in ys.values() for y in g]
            else:
                others = ys.get(slot, []) + ys.get(-1, [])
            if not others:
                continue
            for x, kx, ex in group:
                for y, ky, ey in others:
                    if race_overlap(alias, x, y) is None:
                        continue
                    # both live after the steps that start them, unless one ends before
                    if ex is not None and (kx[ex[0]] > ex[1] or ky[ex[0]] > ex[1]):
                        continue
                    if ey is not None and (kx[ey[0]] > ey[1] or ky[ey[0]] > ey[1]):
                        continue
                    # explore's race key of the pair
                    races.add((RACE, frozenset({(x[3], x[4], ra, x[2]), (y[3], y[4], rb, y[2])})))
    if races:
        return frozenset(races)

    result = RunResult(prog, max_states=max_states)
    result.states = steps + 1
    result.complete_states = 1
    if witness:
        result.complete_path = path
        result.complete_state = tuple(s[:held_idx]) + (held,)
        result.complete_no = steps + 1
    result.seconds = time.perf_counter() - t0
    return result


def _conflicts(alias: dict, x: tuple, held, pending: dict) -> bool:
    """Whether access `x` ((resource, slot, access, task, ...)) races with a held entry or
    a pending access of the walk's current state (state.race_overlap)."""
    if x[2] == PROD_HELD:
        return False
    return any(y[2] != PROD_HELD and race_overlap(alias, x, y) is not None
               for y in (*held, *pending.values()))
