"""Where a credit imbalance comes from: the task whose own brackets do not pair up.

A blocked table run or a leftover credit is a symptom that shows up at the step that
waits; the cause is usually a task whose acquires and commits (or waits and releases) on
one resource do not pair up over its expanded schedule (an `acquire()` moved into the
loop while `commit()` stayed in the tail, a deleted `release()`). Findings point there,
with the blocked steps as related locations.
"""
from __future__ import annotations

from ..enums import ScheduleStage as S

PAIRS = ((S.ProducerAcquire, S.ProducerCommit), (S.ConsumerWait, S.ConsumerRelease))


def counts(expanded) -> dict:
    """{(resource, stage): [entries in expanded order]} for one task's expanded list."""
    out: dict = {}
    for x in expanded:
        e = getattr(x, "entry", None)
        if e is not None:
            out.setdefault((e.resource, e.stage), []).append(e)
    return out


def imbalance(kernel, expand, resource=None, want=None):
    """First (task, excess entry, missing stage) with unpaired brackets.

    `expand(task) -> expanded list` (the checker's expansion); `want` restricts to one
    stage kind that is in excess (e.g. ConsumerWait when releases are missing).
    """
    for t in kernel.tasks:
        if t.lowered is None:
            continue
        c = counts(expand(t))
        _add_group_brackets(kernel, c)
        rids = {r for (r, _s) in c} if resource is None else {resource}
        for rid in sorted(rids, key=str):
            res = kernel.resources.get(rid)
            if res is None or res.pipeline is None or res.is_work_queue:
                continue
            for opener, closer in PAIRS:
                n_open, n_close = len(c.get((rid, opener), ())), len(c.get((rid, closer), ()))
                if n_open == n_close or (n_open == 0 or n_close == 0) and res.is_group:
                    continue
                excess, missing = (opener, closer) if n_open > n_close else (closer, opener)
                if want is not None and excess is not want:
                    continue
                entries = c.get((rid, excess), [])
                loop = [e for e in entries if e.section == "loop"] or entries
                if not loop:
                    yield t, None, missing, rid
                    continue
                if excess in (S.ProducerCommit, S.ConsumerRelease):
                    yield t, loop[-1], missing, rid        # the extra closer
                    continue
                pick = loop[0]
                if excess is S.ConsumerWait:   # a release is missing: after the last read
                    uses = [e for e in t.lowered.entries if e.resource == rid
                            and e.stage is S.ConsumerWork and e.section == pick.section]
                    pick = uses[-1] if uses else pick
                yield t, pick, missing, rid


def _add_group_brackets(kernel, c: dict) -> None:
    """A pipeline operation on a PipelineGroup acts on each of its members (a Merge
    consumer waits on `smem_a` and `smem_b` and releases the group): count it as one on
    every member too, so that the members' brackets pair up."""
    for (rid, stage), entries in list(c.items()):
        res = kernel.resources.get(rid)
        if res is None or not res.is_group:
            continue
        for m in res.members:
            c.setdefault((m, stage), []).extend(entries)
