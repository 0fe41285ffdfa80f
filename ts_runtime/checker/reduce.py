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

from typing import List, Optional, Sequence, Tuple

from .program import PDL_LAUNCH, Program

__all__ = ["PorTables", "por_tables", "symmetry_classes", "make_canonicalizer"]


class PorTables:
    """Per-position facts for the ample-set choice."""

    __slots__ = ("invisible", "dmask", "suffix_dmask")

    def __init__(self, invisible, dmask, suffix_dmask):
        self.invisible = invisible
        self.dmask = dmask
        self.suffix_dmask = suffix_dmask


def por_tables(prog: Program) -> PorTables:
    invisible, dmask, suffix = [], [], []
    for tops in prog.ops:
        n = len(tops)
        inv = []
        for c, op in enumerate(tops):
            nxt = tops[c + 1] if c + 1 < n else None
            visible = bool(op.held) or op.pdl != 0 or op.pending is not None or (
                nxt is not None and (nxt.pending is not None or nxt.pdl == PDL_LAUNCH))
            inv.append(not visible)
        masks = [op.dmask for op in tops]
        suf = [0] * (n + 1)
        for c in range(n - 1, -1, -1):
            suf[c] = suf[c + 1] | masks[c]
        invisible.append(inv)
        dmask.append(masks)
        suffix.append(suf)
    return PorTables(invisible, dmask, suffix)


def symmetry_classes(prog: Program) -> List[Tuple[int, ...]]:
    """Classes (size >= 2) of tasks with identical compiled programs."""
    by_sig = {}
    for i, tops in enumerate(prog.ops):
        sig = tuple(op.signature() for op in tops)
        by_sig.setdefault(sig, []).append(i)
    return [tuple(v) for v in by_sig.values() if len(v) > 1]


def make_canonicalizer(classes: Sequence[Tuple[int, ...]], ntasks: int, held_idx: int):
    """Returns canon(state) -> (canonical state, permutation or None).

    The permutation maps a task index of the given state to its index in the canonical
    state.
    """
    classes = [tuple(c) for c in classes]

    def canon(s: tuple):
        held = s[held_idx]
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
            lst[held_idx] = tuple(sorted(e[:3] + (perm[e[3]],) + e[4:] for e in held))
        return tuple(lst), tuple(perm)

    return canon
