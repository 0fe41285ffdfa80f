"""State-space reductions: partial-order reduction and task symmetry.

Partial-order reduction (persistent / ample sets)
-------------------------------------------------
Every task is a sequential process with exactly one next step. In a state where task
`i`'s next step `t` is enabled, the search explores only `t` (an ample set of size one)
when

* **C1 independence**: `t` cannot be disabled by, and commutes with, every step any
  other task can still take. Credit increments (commit, release) commute with every
  credit operation and disable nothing; a decrement (acquire, wait) only conflicts with
  another decrement of the same pool. So `t` qualifies unless it decrements a pool that
  some other task decrements at or after its cursor (a precomputed suffix bitmask).
  Held-state and PDL effects never occur in `t` (next point).
* **C2 invisibility**: `t` changes nothing the properties observe: no held-state
  micro-action, no PDL wait/launch, it is not itself a pending work access to an aliased
  resource, and the task's following step is neither a pending aliased access nor a
  PDL launch (so the set of pending accesses and enabled launches is unchanged).
* **C3 cycles**: every step increments a cursor, so the state graph is acyclic and the
  cycle proviso holds trivially.

C0-C3 make the reduced graph stutter-equivalent to the full one for properties over the
observed labels (held entries, pending accesses, enabled PDL launches, PDL flag), and a
persistent set preserves every deadlock state. So every race, PDL violation and
deadlock the naive search finds is found by the reduced one (tested against naive
exploration on random schedules in tests/checker/test_reduction.py).

Symmetry
--------
Tasks whose compiled programs are identical (same steps, slots, credit effects, source
entries) are interchangeable: permuting them maps runs to runs and findings to findings
with the same source lines. States are canonicalised by sorting the local states
(cursor, own held entries) within each class of identical tasks. The permutation used is
kept so a counterexample can be replayed with the real task identities.
"""
from __future__ import annotations

from itertools import accumulate, islice, repeat
from operator import attrgetter, getitem, not_, or_
from typing import List, Optional, Sequence, Tuple

from .program import Program

__all__ = ["PorTables", "por_tables", "symmetry_classes", "make_canonicalizer"]

_vis, _loud, _dmask = attrgetter("vis"), attrgetter("loud"), attrgetter("dmask")


class PorTables:
    """Per-task, per-position facts for the ample-set choice: `ample` is -1 where the
    step is visible, else its decrement mask (the two facts the choice reads, in one
    lookup); `suffix_dmask` the pools the task's remaining steps decrement."""

    __slots__ = ("suffix_dmask", "ample")

    def __init__(self, suffix_dmask, ample):
        self.suffix_dmask = suffix_dmask
        self.ample = ample


def _task_por(tops) -> tuple:
    """(suffix decrement mask, ample) per position (see PorTables). A step is visible if
    it changes held entries or the PDL flag or is a pending access (`Op.loud`), or if the
    task's following step is a pending access or a launch (`Op.vis`). Built with C-level
    map/accumulate over the Ops' precomputed flags: this runs for every task list of
    every check, however small."""
    vis_next = [*map(_vis, islice(tops, 1, None)), False]
    inv = map(not_, map(or_, map(_loud, tops), vis_next))
    masks = list(map(_dmask, tops))
    suf = list(accumulate(reversed(masks), or_))
    suf.reverse()
    suf.append(0)
    # ample[c] = masks[c] if invisible[c] else -1, C-level: (-1, mask)[invisible]
    ample = list(map(getitem, zip(repeat(-1), masks), inv))
    return suf, ample


def por_tables(prog: Program) -> PorTables:
    cache = prog.task_tables
    suffix, ample = [], []
    for tops in prog.ops:
        key = ("por", id(tops))
        t = cache.get(key)
        if t is None:
            t = cache[key] = _task_por(tops)
        suffix.append(t[0])
        ample.append(t[1])
    return PorTables(suffix, ample)


def symmetry_classes(prog: Program) -> List[Tuple[int, ...]]:
    """Classes (size >= 2) of tasks with identical compiled programs."""
    # a cheap key first (parts of the signatures of the first and last steps, no label):
    # only tasks that agree on it are compared in full
    by_pre = {}
    for i, tops in enumerate(prog.ops):
        if tops:
            a, z = tops[0], tops[-1]
            pre = (len(tops), a.eidx, a.block, a.slot, a.held, z.eidx, z.block, z.slot, z.held)
        else:
            pre = (0,)
        by_pre.setdefault(pre, []).append(i)
    out = []
    for group in by_pre.values():
        if len(group) < 2:
            continue
        by_sig = {}
        for i in group:
            sig = tuple(op.signature() for op in prog.ops[i])
            by_sig.setdefault(sig, []).append(i)
        out.extend(tuple(v) for v in by_sig.values() if len(v) > 1)
    out.sort()
    return out


def make_canonicalizer(classes: Sequence[Tuple[int, ...]], ntasks: int, held_idx: int,
                       decode=None, encode=None):
    """Returns canon(state) -> (canonical state, permutation or None).

    The permutation maps a task index of the given state to its index in the canonical
    state. `decode` / `encode` map the state's held component to the held tuple and back
    (the search stores an interned id there).
    """
    classes = [tuple(c) for c in classes]

    def canon(s: tuple):
        held = s[held_idx] if decode is None else decode(s[held_idx])
        perm: Optional[list] = None
        for g in classes:
            if held:
                locs = [(s[i], tuple(sorted(e[:3] + e[4:] for e in held if e[3] == i))) for i in g]
            else:
                locs = [s[i] for i in g]
            if all(locs[k] <= locs[k + 1] for k in range(len(g) - 1)):
                continue
            order = sorted(range(len(g)), key=lambda k: locs[k])
            if perm is None:
                perm = list(range(ntasks))
            for newpos, k in enumerate(order):
                perm[g[k]] = g[newpos]
        if perm is None:
            return s, None
        lst = list(s)
        for old in range(ntasks):
            lst[perm[old]] = s[old]
        if held:
            h = tuple(sorted(e[:3] + (perm[e[3]],) + e[4:] for e in held))
            lst[held_idx] = h if encode is None else encode(h)
        return tuple(lst), tuple(perm)

    return canon
