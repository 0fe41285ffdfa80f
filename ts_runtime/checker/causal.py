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
verdict, with the walk's states counted. When some can, their pairs hold every race the
search can find (it finds no deadlock either, and no PDL order violation as there is
no launch), and `_race_run` tells which it finds and gives each the shortest run to
it: exact lives, the smallest state of each pair, a run there that passes no race
(docs/checker.md §4). Where it cannot build that run, the search is run with the keys
and stops once it has recorded them all, with the same findings and counterexamples
as the whole search. Anything else (a
pool with two givers or takers, a round counter with two arriving tasks, steps that
do not commute, a PDL launch, a deadlock, the state cap or the deadline) returns None
and the run is searched in full (docs/checker.md §4, "Aliased runs").
"""
from __future__ import annotations

import time
from bisect import bisect_left, bisect_right
from typing import Dict, List, Optional, Union

from .explore import RACE, ReplayedFinding, RunResult
from .program import Program
from .state import ACQ, CLEAR, CONS_HELD, CWORK, PROD, PROD_HELD, PWORK, REL, SIDE, TAG, UNCOVERED, UWORK, \
    WAIT, WRITES, apply_held, race_overlap

__all__ = ["causal_run"]

_CLOCK_EVERY = 1024       # steps between reads of the clock for the deadline


def causal_run(prog: Program, max_states: int, deadline: Optional[float],
               witness: bool, early_exit: bool = False, max_findings: int = 64) -> Union[RunResult, frozenset, None]:
    """For an aliased run whose happens-before order decides it (module docstring): the
    search's result when no two conflicting accesses can be live in one state, or its
    races with shortest counterexamples (`_race_run`, up to `max_findings`); else the
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
            if op.noop and b < 0:
                continue
            if b >= 0 and takers.setdefault(b, i) != i:
                return None
            simple, rest = op.simple, op.rest
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
                        _add(slots, a[1], a[2])
                    elif a[0] == UWORK:
                        _add(slots, a[1], -1)
            if op.pend is not None:
                _add(slots, op.pend[0], op.pend[1])
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
    path: List[int] = []                   # the walk's steps, in order, by task (see _steps_of)
    # An access's life: ((resource, slot, access, task, entry index), clock of the step
    # that starts it, the step (task, position) that ends it or None, the held entry (None:
    # a pending work access), the step that starts it (a pending access: the work step)).
    # A step with clock k follows step (j, d) iff k[j] > d.
    lives: List[tuple] = []
    open_: Dict[tuple, tuple] = {}         # held entry -> (clock, step) of the step that added it
    touching: List[tuple] = []             # (entries a step reads or makes, (task, position, clock))
    kills: List[tuple] = []                # (action dropping other tasks' entries, task, position, clock)
    tags: List[tuple] = []                 # (completion tag action, task, position, clock)
    foreign: List[tuple] = []              # (entry dropped by another task, that task, position, clock)
    readers: Dict[int, dict] = {}          # resource -> slot -> (task, position, clock) of the steps reading it
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
        # run with this step, as explore.MacroSteps does (explore.trails, inlined)
        n_i = ns[i]
        trailing = nxt < n_i and tops[nxt].trail and (nxt + 1 >= n_i or not tops[nxt + 1].vis)
        if b < 0 and not early_exit and op.noop:
            # a step with no effect (a try-wait, work on a resource nothing aliases): it
            # gets no clock; the task's next clock takes its own count from its position
            s[i] = nxt
            path.append(i)
            continue
        simple, rest = op.simple, op.rest
        p = op.pend
        ic = (i, c) if p is not None or rest is not None else None    # (for its lives)
        prev = last[i]
        if b >= 0 and givers.get(b, i) != i:
            need = taken.get(b, 0) - initial[b] + 1      # gives the take needs
            if need > 0:
                k = bisect_left(gcum[b], need)
                if k == len(gcum[b]):
                    return None            # (cannot happen: the step is enabled)
                clk = [x if x >= y else y for x, y in zip(prev, gclk[b][k])]
                clk[i] = nxt
                clk = tuple(clk)
            else:
                clk = list(prev)
                clk[i] = nxt
                clk = tuple(clk)
        else:
            clk = list(prev)
            clk[i] = nxt
            clk = tuple(clk)
        last[i] = clk
        if p is not None:
            if b >= 0:
                return None
            if racy is None or (p[0], p[1]) in racy:
                if prev[i] != c:           # (after a step with no clock)
                    prev = prev[:i] + (c,) + prev[i + 1:]
                lives.append(((p[0], p[1], p[2], i, p[3]), prev, ic, None, ic))
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
        s[i] = nxt
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
                    for a in hact:
                        if not (a[0] == TAG or a[0] == CLEAR or (a[1], -1 if a[0] == UWORK else a[2]) in racy):
                            got = tuple([a for a in hact if a[0] == TAG or a[0] == CLEAR or
                                         (a[1], -1 if a[0] == UWORK else a[2]) in racy])
                            break
                    else:
                        got = hact                 # (nothing left out: no new tuple)
                    kept[id(hact)] = got
                hact = got
            if hact:
                stamp = None               # (task, position, clock) of the step, made once
                new = apply_held(held, hact, i, eidx)
                # (held maps are short tuples: membership tests beat building sets)
                added = [e for e in new if e not in held]
                dropped = [e for e in held if e not in new]
                if len(held) - len(dropped) + len(added) != len(new) or \
                        (len(added) > 1 and len(set(added)) != len(added)):
                    return None            # two equal entries: lives could not be told apart
                for e in dropped:
                    ks, st = open_.pop(e)
                    lives.append(((e[0], e[1], e[2], e[3], e[6]), ks, ic, e, st))
                    if e[3] != i:
                        foreign.append((e, i, c, clk))
                for e in added:
                    if early_exit and _conflicts(alias, e, open_, now):
                        return None
                    open_[e] = (clk, ic)
                for a in hact:
                    kind = a[0]
                    if kind == WAIT or kind == CLEAR or (kind == ACQ and a[3]):
                        kills.append((a, i, c, clk))
                    elif kind == TAG:
                        tags.append((a, i, c, clk))
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
                        if stamp is None:
                            stamp = (i, c, clk)
                        _slot_list(readers, a[1], a[2]).append(stamp)
                if added:
                    touching.append((added, stamp if stamp is not None else (i, c, clk)))
                held = new
        for k, d in simple:
            s[k] += d
            if d > 0:
                g = gcum[k]
                g.append((g[-1] if g else 0) + d)
                gclk[k].append(clk)
            elif d < 0:
                taken[k] = taken.get(k, 0) - d
        path.append(i)
    lives.extend(((e[0], e[1], e[2], e[3], e[6]), ks, None, e, st) for e, (ks, st) in open_.items())

    # ---- 2. unordered steps of different tasks have commuting held actions: an action
    # that drops other tasks' entries (an acquire of a DMA-read stage, a wait, a
    # completion wait) drops none that an unordered step of another task reads or makes,
    # in the walk's order or the other
    if kills:
        # the entries each step reads or makes, by resource and slot, and those tagged by a
        # completion: flat lists of entry, stamp, entry, stamp, ... (no pair per entry)
        by_slot: Dict[int, dict] = {}
        tagged: list = []
        for entries, stamp in touching:
            for e in entries:
                flat = _slot_list(by_slot, e[0], e[1])
                flat.append(e)
                flat.append(stamp)
                if e[4] >= 0:
                    tagged.append(e)
                    tagged.append(stamp)
        for a, i, c, ci in kills:
            kind = a[0]
            if kind == CLEAR:
                rr, rnd = a[1], a[2]
                flat = tagged
            else:
                flat = by_slot.get(a[1], _NONE).get(a[2], ())
            for k in range(0, len(flat), 2):
                e, (j, d, cj) = flat[k], flat[k + 1]
                if j == i:
                    continue
                if kind == CLEAR:
                    hit = e[4] == rr and e[5] <= rnd
                elif kind == WAIT:
                    hit = e[2] <= PROD and e[4] != UNCOVERED
                else:
                    hit = e[2] >= CONS_HELD
                if hit and cj[i] <= c and ci[j] <= d:
                    return None            # unordered: the held map could depend on the order
        # an entry the walk dropped before its own task read its stage: in the other
        # order, the read would have seen it
        for e, i, c, ci in foreign:
            j = e[3]
            for jj, d, cj in readers.get(e[0], _NONE).get(e[1], ()):
                if jj == j and cj[i] <= c and ci[j] <= d:
                    return None

    # ---- (tags) a DMA read that the walk dropped (its stage's next acquire) before its own
    # task's completion tagged it: in other runs the tag comes first, and the read is then
    # also dropped by the completion's wait. Its tagged life is added (live only where the
    # walk's untagged life is: no new race key, but the states where the search can meet
    # one), and the tag ends the untagged life (`retagged`, for _race_run's exact lives).
    retagged: Dict[int, tuple] = {}
    if tags and not early_exit:
        by_task: Dict[int, list] = {}
        for t in tags:
            by_task.setdefault(t[1], []).append(t)
        extra = []
        for life in lives:
            item, ks, end, e, st = life
            if e is None or e[4] != -1 or e[2] < CONS_HELD or end is None or end[0] == e[3]:
                continue
            j = e[3]
            for a, tj, tc, tk in by_task.get(j, ()):
                if tc < ks[j] or e[0] not in a[3]:
                    continue               # before the read, or not a tag of its resource
                if tk[end[0]] <= end[1]:   # (else the tag follows the drop in every run)
                    retagged[id(life)] = (tj, tc)
                    extra.append((item, tk, end, e[:4] + (a[1], a[2]) + e[6:], (tj, tc)))
                break
        lives.extend(extra)

    # ---- 3. the conflicting accesses that can be live in one state
    by_res: Dict[int, Dict[int, list]] = {}
    for x in lives:
        item = x[0]
        if item[2] != PROD_HELD:
            by_res.setdefault(item[0], {}).setdefault(item[1], []).append(x)
    races = set()
    pairs: List[tuple] = []                # (key, life, life, resource, resource) per instance
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
            for lx in group:
                x, kx, ex = lx[0], lx[1], lx[2]
                # state.race_overlap, inlined: the two resources differ, and the slots
                # overlap (`others` holds the accesses of the same slot or of every slot)
                tx, ax = x[3], x[2]
                wx, sx = ax in WRITES, SIDE[ax]
                for ly in others:
                    y = ly[0]
                    ay = y[2]
                    if y[3] == tx or (not wx and ay not in WRITES) or (ra, sx, rb, SIDE[ay]) not in alias:
                        continue
                    ky, ey = ly[1], ly[2]
                    # both live after the steps that start them, unless one ends before
                    if ex is not None and (kx[ex[0]] > ex[1] or ky[ex[0]] > ex[1]):
                        continue
                    if ey is not None and (kx[ey[0]] > ey[1] or ky[ey[0]] > ey[1]):
                        continue
                    # explore's race key of the pair
                    key = (RACE, frozenset({(x[3], x[4], ra, x[2]), (y[3], y[4], rb, y[2])}))
                    races.add(key)
                    pairs.append((key, lx, ly, ra, rb))
    if races:
        if not early_exit:
            got = _race_run(prog, lives, pairs, kills, retagged, _steps_of(path, T), max_findings, max_states, t0)
            if got is not None:
                got.states = steps + 1
                return got
        return frozenset(races)

    result = RunResult(prog, max_states=max_states)
    result.states = steps + 1
    result.complete_states = 1
    if witness:
        result.complete_path = _steps_of(path, T)
        result.complete_state = tuple(s[:held_idx]) + (held,)
        result.complete_no = steps + 1
    result.seconds = time.perf_counter() - t0
    return result


_NONE: dict = {}


def _slot_list(table: dict, key, sub) -> list:
    """table[key][sub], a list, made (with the inner dict) on first use: keyed by resource
    and slot without a pair per look-up."""
    inner = table.get(key)
    if inner is None:
        inner = table[key] = {}
    got = inner.get(sub)
    if got is None:
        got = inner[sub] = []
    return got


def _steps_of(tasks: List[int], T: int) -> List[tuple]:
    """The (task, position) steps of a walk given by the task of each step."""
    at = [0] * T
    out = []
    for i in tasks:
        out.append((i, at[i]))
        at[i] += 1
    return out


def _add(sets: dict, key, value) -> None:
    """sets[key].add(value), making the set on first use (setdefault would make one per call)."""
    got = sets.get(key)
    if got is None:
        sets[key] = {value}
    else:
        got.add(value)


def _conflicts(alias: dict, x: tuple, held, pending: dict) -> bool:
    """Whether access `x` ((resource, slot, access, task, ...)) races with a held entry or
    a pending access of the walk's current state (state.race_overlap)."""
    if x[2] == PROD_HELD:
        return False
    return any(y[2] != PROD_HELD and race_overlap(alias, x, y) is not None
               for y in (*held, *pending.values()))


def _race_run(prog: Program, lives: List[tuple], pairs: List[tuple], kills: List[tuple], retagged: Dict[int, tuple],
              order: List[tuple], max_findings: int, max_states: int, t0: float) -> Optional[RunResult]:
    """The search's findings for an aliased run with races, from the happens-before order
    alone (docs/checker.md §4, "Aliased runs with races"); None when they cannot be told
    without the search.

    The states of the run are its down-closed sets of steps, each named by its cursor
    vector J (step (j, d) is in J iff J[j] > d). A held entry is live in J iff the step
    that adds it is in J and no step that drops it is: its walk's dropper, or any other
    step, after the one that adds it, whose action drops it (a wait drops its stage's
    writes, a DMA-read stage's next acquire its reads, a completion wait the reads tagged
    with its round). A pending work access is live iff J[task] is its step. The smallest
    state in which two accesses are live together is the join M of the clocks that start
    them; they are live together somewhere iff they are live in M, and the search can
    meet the pair first in M: |M| steps, the shortest counterexample.

    The search does not go on past a race (it does not advance a task whose pending
    access races in the state): so M counts only if some run reaches it without such a
    step. `_run_to` builds one run to M; if it takes no such step, the pair is found, at
    M. Each race key takes its instance with the smallest M; if the run to that M takes
    a blocked step (the pair may be reachable only past another race), the search
    decides (None)."""
    T = prog.layout.tasks
    # every step that drops other tasks' entries, by what it drops (state.apply_held)
    drops: Dict[tuple, list] = {}
    for a, i, c, clk in kills:
        kind = a[0]
        key = ("clear", a[1]) if kind == CLEAR else (a[1], a[2])
        drops.setdefault(key, []).append((kind, a, i, c))
    ends: Dict[int, tuple] = {}            # id(life) -> per task, the first step that ends it

    def life_ends(life) -> tuple:
        """Per task j: the first position of j whose step ends the life (_NEVER: none)."""
        got = ends.get(id(life))
        if got is not None:
            return got
        item, ks, end, e, st = life
        first = [_NEVER] * T
        if e is None:                      # a pending access: its work step ends it
            first[st[0]] = st[1]
        else:
            if end is not None:
                first[end[0]] = end[1]
            tag = retagged.get(id(life))
            if tag is not None and tag[1] < first[tag[0]]:
                first[tag[0]] = tag[1]
            cands = list(drops.get((e[0], e[1]), ()))
            if e[4] >= 0:
                cands.extend(drops.get(("clear", e[4]), ()))
            for kind, a, j, d in cands:
                if ks[j] > d or d >= first[j]:
                    continue               # before the entry is made, or not the first
                if kind == WAIT:
                    hit = e[2] <= PROD and e[4] != UNCOVERED
                elif kind == CLEAR:
                    hit = e[4] == a[1] and e[5] <= a[2]
                else:                      # an acquire of a DMA-read stage
                    hit = e[2] >= CONS_HELD
                if hit:
                    first[j] = d
        got = ends[id(life)] = tuple(first)
        return got

    def live(life, J) -> bool:
        st = life[4]
        if life[3] is None:
            return J[st[0]] == st[1]
        if J[st[0]] <= st[1]:
            return False
        for j, e in zip(J, life_ends(life)):
            if j > e:
                return False
        return True

    # the instances live together in their smallest state, by race key
    best: Dict[tuple, tuple] = {}
    partners: Dict[int, list] = {}         # id(pending life) -> the lives it can race with
    for key, lx, ly, ra, rb in pairs:
        M = tuple(map(max, lx[1], ly[1]))
        # (a pending access: live iff its task is at the work step; M has started it)
        if lx[3] is None:
            if M[lx[4][0]] != lx[4][1]:
                continue
        elif not live(lx, M):
            continue
        if ly[3] is None:
            if M[ly[4][0]] != ly[4][1]:
                continue
        elif not live(ly, M):
            continue
        for p, q in ((lx, ly), (ly, lx)):
            if p[3] is None:
                partners.setdefault(id(p), []).append(q)
        # the smallest state; between equally small ones, the one with the lower-index
        # tasks further on (the walk's preference, so that of two mirrored tasks the
        # first is named)
        rank = (sum(M), tuple(-m for m in M), M)
        old = best.get(key)
        if old is None or rank < old[0]:
            best[key] = (rank, lx, ly, ra, rb)
    # the pending work step of each life that can race: (task, position) -> life, in the
    # walk's order (the order `lives` has them in)
    pending = {life[4]: life for life in lives if life[3] is None and id(life) in partners} if partners else {}
    early = list(pending)
    result = RunResult(prog, max_states=max_states)
    alias = prog.alias
    paths: Dict[tuple, list] = {}
    for (depth, _, M), lx, ly, ra, rb in sorted(best.values(), key=lambda b: b[0]):
        if len(result.findings) >= max_findings:
            break
        path = paths.get(M)
        if path is None:
            path = paths[M] = _run_to(M, depth, order, early, pending, partners, live, T)
            if path is None:
                return None
        w, o = [_item(life) for life in (lx, ly)]
        ov = race_overlap(alias, w, o)
        if w[2] not in WRITES:
            w, o = o, w
        key = (RACE, frozenset({(w[3], w[4], w[0], w[2]), (o[3], o[4], o[0], o[2])}))
        detail = {"writer": w, "other": o, "overlap": ov, "frame": list(range(T))}
        f = ReplayedFinding(RACE, key, None, path, (w[3], o[3]), detail, depth + 1)
        f.program = prog
        result.findings.append(f)
    result.seconds = time.perf_counter() - t0
    return result


_NEVER = 1 << 62


def _run_to(M: tuple, depth: int, order: List[tuple], early: List[tuple], pending: dict, partners: dict,
            live, T: int) -> Optional[List[tuple]]:
    """A run to state M (cursor vector) that never advances a task whose pending access
    races in the state it leaves, or None if this one construction finds none.

    The run takes the walk's order, except that each pending access that can race and
    that M runs is run as early as it can be: first the down-closure of the first such
    step, then of the next, ..., then the rest of M, each part in the walk's order. A
    racing pending access is then past before the accesses that start after it (in the
    happens-before order) can meet it."""
    # per task, the cumulative bounds of the parts: part k holds the steps (i, c) with
    # bounds[k-1][i] <= c < bounds[k][i]
    cuts: List[List[int]] = [[] for _ in range(T)]
    B = [0] * T
    for st in early:
        i, c = st
        if c >= M[i] or B[i] > c:
            continue                     # not in M, or already in an earlier part
        life = pending[st]
        prev = life[1]                   # the work step's predecessors, and the step itself
        for j in range(T):
            v = c + 1 if j == i else prev[j]
            if v > B[j]:
                B[j] = v
        for j in range(T):
            cuts[j].append(B[j])
    n = len(cuts[0])
    parts: List[List[tuple]] = [[] for _ in range(n + 1)]
    left = depth
    for st in order:
        i, c = st
        if c < M[i]:
            parts[bisect_right(cuts[i], c) if n else 0].append(st)
            left -= 1
            if not left:
                break
    J = [0] * T
    path = []
    for part in parts:
        for st in part:
            p = pending.get(st)
            if p is not None and any(live(q, J) for q in partners[id(p)]):
                return None
            J[st[0]] += 1
            path.append(st)
    return path


def _item(life) -> tuple:
    """explore's race-scan item of a life: (resource, slot, access, task, entry index,
    pending, uncovered write)."""
    item, e = life[0], life[3]
    return item + (e is None, e is not None and e[4] == UNCOVERED)
