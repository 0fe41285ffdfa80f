"""Canonical, hashable states of the exhaustive checker.

A state is one flat tuple

    (cursor_0, ..., cursor_{T-1},          one per task: index of its next step
     credit_0, ..., credit_{P-1},          one per credit pool (credits.py)
     total_0, ..., total_{K-1},            event totals modulo N of N-participant rounds
     pdl_done,                             1 once any PdlWaitBarrier.wait_griddep ran
     held)                                 sorted tuple of held entries

so equal states are equal tuples. Unlike the reference, which remembers only the cursor
vector, the visited set keys on the whole tuple: credits, round totals, held accesses
and the PDL flag are not functions of the cursors in general (several producers or
consumers on one resource, DMA reads that outlive their release, N-participant rounds).

A held entry records an access to an aliased resource that is in flight:

    (resource, slot, access, task, tag_resource, tag_round, entry_index)

`slot` is the pipeline stage (-1 = unpipelined, overlaps every stage); `access` is one
of PROD_HELD (acquired, not yet written), PROD (written), PROD_C (write phase of a
consumer call on an unpipelined resource), CONS_HELD (waited, not yet read) and CONS
(read). `tag_resource`/`tag_round` mark a DMA-consumer read that a completion wait on
`tag_resource` (its `tag_round`-th wait) retires; -1/0 when untagged. `tag_resource` is
UNCOVERED (-2) on an *uncovered write*: a second producer work call on a stage that one
acquire covers (a duplicated `tma_load`, or two producer work methods under one
acquire). The consumer's wait publishes one write per commit, so nothing orders the
extra one: it stays held for the rest of the run and races with every later access to
SMEM/TMEM that aliases that stage (the reference reports the same programs).
"""
from __future__ import annotations

from typing import List

__all__ = [
    "PROD_HELD", "PROD", "PROD_C", "CONS_HELD", "CONS", "UNCOVERED", "ACCESS_NAMES", "WRITES",
    "side_of", "SIDE", "race_overlap", "Layout", "apply_held",
]

PROD_HELD, PROD, PROD_C, CONS_HELD, CONS = 0, 1, 2, 3, 4
UNCOVERED = -2
ACCESS_NAMES = {PROD_HELD: "prod_held", PROD: "prod", PROD_C: "prod", CONS_HELD: "cons_held", CONS: "cons"}
WRITES = frozenset({PROD, PROD_C})
PRODUCER_SIDE = frozenset({PROD_HELD, PROD})


def side_of(access: int) -> str:
    """Which allocation role map an access uses (producer or consumer requirements)."""
    return "producer" if access in PRODUCER_SIDE else "consumer"


# side_of by access code (PROD_HELD, PROD, PROD_C, CONS_HELD, CONS)
SIDE = tuple(side_of(a) for a in range(5))


def race_overlap(alias: dict, x: tuple, y: tuple):
    """The race test of two accesses `x`, `y` ((resource, slot, access, task, ...), neither
    PROD_HELD: model.md §9, "Race"), shared by the search's race scan and causal.py: the
    memory both touch (the alias table's overlap) when they are by different tasks, on
    different resources whose role ranges overlap, at overlapping slots (-1: every slot),
    and at least one is a write; else None."""
    if x[3] == y[3] or x[0] == y[0]:
        return None
    ax, ay = x[2], y[2]
    if ax not in WRITES and ay not in WRITES:
        return None
    sx, sy = x[1], y[1]
    if sx != sy and sx != -1 and sy != -1:
        return None
    return alias.get((x[0], SIDE[ax], y[0], SIDE[ay]))


class Layout:
    """Offsets of the parts of a state tuple."""

    __slots__ = ("tasks", "pools", "counters", "credit_off", "total_off", "pdl_idx", "held_idx")

    def __init__(self, tasks: int, pools: int, counters: int):
        self.tasks = tasks
        self.pools = pools
        self.counters = counters
        self.credit_off = tasks
        self.total_off = tasks + pools
        self.pdl_idx = tasks + pools + counters
        self.held_idx = self.pdl_idx + 1

    def initial(self, credits, pdl_done: bool) -> tuple:
        return tuple([0] * self.tasks) + tuple(credits) + (0,) * self.counters + (int(pdl_done), ())

    def cursors(self, s) -> tuple:
        return s[:self.tasks]

    def credits(self, s) -> tuple:
        return s[self.credit_off:self.total_off]

    def totals(self, s) -> tuple:
        return s[self.total_off:self.pdl_idx]

    def pdl_done(self, s) -> bool:
        return bool(s[self.pdl_idx])

    def held(self, s) -> tuple:
        return s[self.held_idx]


# ----------------------------------------------------------------------------- held
# Micro-actions compiled per step (program.py); applied in order by apply_held.
ACQ, PWORK, WAIT, CWORK, REL, UWORK, TAG, CLEAR = range(8)


def apply_held(held: tuple, actions: tuple, task: int, eidx: int) -> tuple:
    """New held tuple after `task` runs a step whose compiled micro-actions are `actions`."""
    hs: List[tuple] = list(held)
    for act in actions:
        kind = act[0]
        if kind == ACQ:
            _, r, slot, dma = act
            if dma:   # the next acquire of a slot retires the DMA reads of that slot
                hs = [e for e in hs if not (e[0] == r and e[1] == slot and e[2] >= CONS_HELD)]
            hs.append((r, slot, PROD_HELD, task, -1, 0, eidx))
        elif kind == PWORK:
            _, r, slot = act
            for k, e in enumerate(hs):
                if e[0] == r and e[1] == slot and e[3] == task and e[2] == PROD_HELD:
                    hs[k] = (r, slot, PROD, task, -1, 0, eidx)
                    break
            else:
                own = [e for e in hs if e[0] == r and e[1] == slot and e[3] == task and e[2] == PROD]
                if not own:
                    hs.append((r, slot, PROD, task, -1, 0, eidx))
                elif all(e[4] != UNCOVERED for e in own):
                    # a second write under one acquire: no wait will publish it
                    hs.append((r, slot, PROD, task, UNCOVERED, 0, eidx))
        elif kind == WAIT:
            _, r, slot = act
            # the full barrier completed: the producers' writes of this slot are published
            hs = [e for e in hs if not (e[0] == r and e[1] == slot and e[2] <= PROD and e[4] != UNCOVERED)]
            if not any(e[0] == r and e[1] == slot and e[3] == task and e[2] >= CONS_HELD for e in hs):
                hs.append((r, slot, CONS_HELD, task, -1, 0, eidx))
        elif kind == CWORK:
            _, r, slot = act
            for k, e in enumerate(hs):
                if e[0] == r and e[1] == slot and e[3] == task and e[2] == CONS_HELD:
                    hs[k] = (r, slot, CONS, task, e[4], e[5], eidx)
                    break
            else:
                if not any(e[0] == r and e[1] == slot and e[3] == task and e[2] == CONS for e in hs):
                    hs.append((r, slot, CONS, task, -1, 0, eidx))
        elif kind == REL:
            _, r, slot = act
            hs = [e for e in hs if not (e[0] == r and e[1] == slot and e[3] == task and e[2] >= CONS_HELD)]
        elif kind == UWORK:
            _, r, access, end = act
            hs = [e for e in hs if not (e[0] == r and e[1] == -1 and e[3] == task)]
            # a write to an unpipelined resource stays: no pipeline step ever retires it,
            # so a later access of an aliased resource by another task races with it,
            # whatever orders the two (as the reference judges it); a consumer call's
            # entries end with the call
            if not end or access == PROD:
                hs.append((r, -1, access, task, -1, 0, eidx))
        elif kind == TAG:
            _, rr, rnd, sources = act
            for k, e in enumerate(hs):
                if e[3] == task and e[0] in sources and e[2] >= CONS_HELD and e[4] == -1:
                    hs[k] = e[:4] + (rr, rnd) + e[6:]
        elif kind == CLEAR:
            _, rr, rnd = act
            hs = [e for e in hs if not (e[4] == rr and e[5] <= rnd)]
    hs.sort()
    return tuple(hs)
