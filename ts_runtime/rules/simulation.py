"""TS810-TS814: the schedule-table simulation (model.md §8) and its printout (§10).

Step 1 of the manager checks. Every task's schedule is expanded once (head + loop x n +
tail; the loop count is exact for int domains, else `max(static domain starts) + 1`;
every opaque condition taken as True) and the tasks are run round-robin in list order:
in each round every task that can move executes one entry, a task on `acquire()` /
`wait()` moves only if its credit pool holds a credit (credits.py; commits and releases
apply at once, so a later task of the same round already sees them). A round in which
no unfinished task can move is a block (TS810). After the run, commit credits left over
(TS811) and empty credits not back at their initial count (TS812 / TS813) are reported.

Unlike the exhaustive checker this is one deterministic interleaving: it proves
nothing, but it is what the reference always runs and what the table shows.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional

from ..checker.credits import EMPTY, FULL, CreditModel, Unknown, apply_moves, remember_complete_run, \
    remember_layout
from ..enums import ScheduleStage as S
from ..checker.expand import (domain_probe, expand_task, iteration_count, opaque_keys,
                              table_fallback)
from ..diagnostics import Related, Severity
from ..model.values import UNKNOWN, DynamicBound, is_static_int
from . import _checker_programs as programs
from .base import Rule
from .registry import register

__all__ = ["TableSimulation", "simulate_table", "format_schedule_table", "LEGEND"]

LEGEND = ("Phase tags:  H \u2014 Head (prefetch, before the loop)  |  F \u2014 FirstIter (first iteration only)  |  "
          "L \u2014 LastIter (last iteration only)  |  P \u2014 Periodic (Every)  |  I \u2014 Opaque "
          "when_true/when_false  |  T \u2014 Tail (drain, after the loop)")
TITLE = ">   Full (Head + Loop + Tail)   <"
END_TITLE = "> End Full (Head + Loop + Tail) <"
CELL_BLANK = " " * 30 + "|"


@dataclass
class Blocked:
    task: int
    pos: int
    pool: int


@dataclass
class TableSimulation:
    lists: list
    credits: Optional[CreditModel]
    rows: List[list] = field(default_factory=list)       # per round: [(task, pos) or None per task]
    blocked: List[Blocked] = field(default_factory=list)
    final: Optional[list] = None                          # credits at the end (None if blocked)
    last_op: dict = field(default_factory=dict)           # (credit id, stage) -> (task, pos) last executed
    approximate: list = field(default_factory=list)       # task names with fallback counts
    skipped: Optional[str] = None


def _cache(kernel) -> dict:
    c = kernel.__dict__.get("_ts_table_sim")
    if c is None:
        c = {}
        kernel.__dict__["_ts_table_sim"] = c
    return c


def simulate_table(kernel) -> TableSimulation:
    """Runs the round-robin simulation (cached on the kernel object)."""
    cache = _cache(kernel)
    sig = tuple(id(t.lowered) for t in kernel.tasks)
    if cache.get("sig") == sig:
        return cache["sim"]
    sim = _simulate(kernel)
    cache["sig"], cache["sim"] = sig, sim
    return sim


def _simulate(kernel) -> TableSimulation:
    fallback = table_fallback(kernel)
    assignment = {k: True for k in opaque_keys(kernel)}
    lists, approx = [], []
    for t in kernel.tasks:
        cnt = iteration_count(t.lowered, fallback)
        if cnt.n is None:
            return TableSimulation([], None, skipped=f"task '{t.name}': {cnt.reason}")
        if not cnt.exact:
            approx.append(t.name)
        lists.append(expand_task(t, fallback, assignment, n=cnt.n))
    for t in kernel.tasks:
        if t.lowered is not None and any(e.resource not in kernel.resources for e in t.lowered.entries):
            return TableSimulation(lists, None, skipped="unknown resource")
    try:
        cm = CreditModel(kernel, lists, mode="table")
    except Unknown as exc:
        return TableSimulation(lists, None, skipped=str(exc))
    remember_layout(kernel, cm)
    sim = TableSimulation(lists, cm, approximate=approx)
    credits = list(cm.initial_credits())
    totals = [0] * len(cm.counters)
    cur = [0] * len(lists)
    lens = [len(x) for x in lists]
    # every round that is not blocked moves at least one task, so this cap is never hit
    # (the reference stops after max(len) + 100 rounds, which a long wait can exceed)
    rounds = sum(lens) + 1
    for _ in range(rounds):
        todo = [i for i in range(len(lists)) if cur[i] < lens[i]]
        if not todo:
            break
        runnable = [i for i in todo if _can_run(cm, credits, i, cur[i])]
        if not runnable:
            sim.blocked = [Blocked(i, cur[i], cm.effects[i][cur[i]].block_pool) for i in todo]
            return sim
        row = [None] * len(lists)
        for i in range(len(lists)):
            if cur[i] >= lens[i] or not _can_run(cm, credits, i, cur[i]):
                continue
            eff = cm.effects[i][cur[i]]
            apply_moves(credits, totals, eff.moves)
            for mv in eff.moves:
                sim.last_op[(cm.pools[mv.pool].credit_id, lists[i][cur[i]].stage)] = (i, cur[i])
            row[i] = (i, cur[i])
            cur[i] += 1
        sim.rows.append(row)
    sim.final = credits
    if cur == lens:
        remember_complete_run(cm, lists)
    return sim


def _can_run(cm, credits, i, pos) -> bool:
    b = cm.effects[i][pos].block_pool
    return b < 0 or credits[b] > 0


# ----------------------------------------------------------------------------- printout
def format_schedule_table(kernel) -> str:
    """The schedule table as `TaskManager(verbose=True)` prints it (model.md §10)."""
    sim = simulate_table(kernel)
    header = "|" + "".join(f" {t.label:^28} |" for t in kernel.tasks)
    width = len(header)
    lines = ["", "=" * width, "", header, "", TITLE.center(width, "="), ""]
    if sim.credits is None:
        lines.append(f"(schedule table not simulated: {sim.skipped})")
        return "\n".join(lines)
    for row in sim.rows:
        cells = []
        for cell in row:
            if cell is None:
                cells.append(CELL_BLANK)
                continue
            i, pos = cell
            x = sim.lists[i][pos]
            name = kernel.name(x.resource)[:10]
            cells.append(f" {name:<10} {str(x.stage):12}{x.tag:>2} {x.call_idx:2} |")
        lines.append("|" + "".join(cells))
    if sim.blocked:
        return "\n".join(lines)
    lines += ["", END_TITLE.center(width, "="), "", LEGEND]
    return "\n".join(lines)


# ----------------------------------------------------------------------------- rules
def _note(sim) -> str:
    if not sim.approximate:
        return ""
    names = ", ".join(f"'{n}'" for n in sim.approximate)
    return (f" NOTE: the loop count of {names} is a representative value because the domain is not a "
            "compile-time Python int; this may be a FALSE POSITIVE. Validate with a realistic int domain.")


class _TableRule(Rule):
    phase = "manager"
    order = 10
    reference_exception = "ValueError"


def _op(kernel, sim, i, pos):
    x = sim.lists[i][pos]
    return x, f"{x.stage.value}({kernel.name(x.resource)})"


@register
class ScheduleBlocked(_TableRule):
    """The deterministic round-robin run of all task schedules blocks (schedule table).

    ## What it does
    Runs every task's expanded schedule round-robin in task-list order (one entry per task
    per round) under the pipeline credit model, and reports the first round in which no
    unfinished task can move: each one waits in `acquire()` for an empty stage or in
    `wait()` for a commit. The finding points at the first blocked call; the other
    blocked calls are related locations. A WorkQueue whose fetch pipeline has
    `num_stages=0` is reported at the scheduler's first `acquire()`: the queue is not part
    of the credit model, but its ring has no stage to fetch into.
    ## Why is this bad?
    A schedule that blocks in this simple interleaving hangs on the GPU (or, with a
    non-int domain simulated with a representative count, is suspicious: see the note).
    ## Example
    A producer that acquires 4 times from a 2-stage buffer whose consumer never releases.
    ## Use instead
    Release every stage the consumers waited for; make per-iteration guards match.
    """
    code = "TS810"
    VALID = [programs.VALID_PIPE]
    INVALID = [programs.BLOCKED, programs.ZERO_STAGES, programs.zero_stage_work_queue()]
    name = "schedule-blocked"

    def check(self, kernel):
        yield from _zero_stage_work_queues(self, kernel)
        sim = simulate_table(kernel)
        if sim.credits is None or not sim.blocked:
            return
        cm = sim.credits
        parts, related = [], []
        first = None
        for b in sim.blocked:
            x, lbl = _op(kernel, sim, b.task, b.pos)
            pool = cm.pools[b.pool] if b.pool >= 0 else None
            what = "a commit" if pool is not None and pool.kind == FULL else "a release"
            text = (f"'{kernel.tasks[b.task].name}' is blocked at {lbl} (call {x.call_idx}"
                    f"{', ' + x.tag if x.tag else ''}): waiting for {what} of '{pool.name if pool else '?'}'")
            parts.append(text)
            if first is None:
                first = x.entry.range
            else:
                related.append(Related(x.entry.range, text))
        final = sim_credits_now(sim)
        avail = [f"{c} {'commit' if p.kind == FULL else 'empty-stage'} credit(s) of '{p.name}'"
                 for p, c in zip(cm.pools, final) if c > 0 and (p.kind == FULL or c != p.initial)]
        tail = ("credits available: " + ", ".join(avail)) if avail else "no matching credit is available"
        cause = _cause(kernel)
        if cause is not None and cause[1] is not None:
            t, e, missing, rid = cause
            related = [Related(first, parts[0])] + related
            parts.append(f"cause: '{t.name}' has unpaired brackets on '{kernel.name(rid)}' "
                         f"(too few {missing.value})")
            first = e.range
        yield self.diag("Schedule is blocked! " + "; ".join(parts) + f"; {tail}." + _note(sim),
                        first, related=related)


def _zero_stage_work_queues(rule, kernel):
    """A WorkQueue's fetch pipeline with 0 stages: the queue is outside the credit model
    (its rounds are the work tiles), but its ring still needs a stage, so the scheduler's
    first acquire (or, without one, the first wait) can never proceed."""
    for rid, r in kernel.resources.items():
        cfg = r.pipeline
        if not r.is_work_queue or cfg is None or not is_static_int(cfg.num_stages) or cfg.num_stages != 0:
            continue
        first = {}
        for t in kernel.tasks:
            for e in (t.lowered.entries if t.lowered is not None else ()):
                if e.resource == rid and e.stage in (S.ProducerAcquire, S.ConsumerWait):
                    first.setdefault(e.stage, (t, e))
        hit = first.get(S.ProducerAcquire) or first.get(S.ConsumerWait)
        if hit is None:
            continue
        t, e = hit
        yield rule.diag(f"Schedule is blocked! '{t.name}' is blocked at {e.stage.value}({kernel.name(rid)}): "
                        f"the work queue's pipeline has num_stages=0, so no stage is ever "
                        f"{'empty' if e.stage is S.ProducerAcquire else 'committed'}.", e.range)


def _cause(kernel, resource=None, want=None):
    """The task whose own brackets on a resource do not pair up (model/balance.py)."""
    from ..model.balance import imbalance
    try:
        return next(imbalance(kernel, lambda t: expand_task(t, table_fallback(kernel)), resource, want), None)
    except Exception:   # the locator only refines the anchor; never lose the finding
        return None


def sim_credits_now(sim) -> list:
    """Credits at the moment the run blocked (recomputed from the executed rows)."""
    cm = sim.credits
    credits = list(cm.initial_credits())
    totals = [0] * len(cm.counters)
    for row in sim.rows:
        for cell in row:
            if cell is not None:
                apply_moves(credits, totals, cm.effects[cell[0]][cell[1]].moves)
    return credits


def _leftovers(sim):
    """{(credit id, kind): (delta vs initial, pool list)} at the end of an unblocked run."""
    out = {}
    for p, c in zip(sim.credits.pools, sim.final):
        d = c - p.initial
        if d:
            k = (p.credit_id, p.kind)
            tot, pools = out.get(k, (0, []))
            out[k] = (tot + d, pools + [p.index])
    return out


def _last(sim, cid, stage):
    return sim.last_op.get((cid, stage))


def _first_entry(kernel, rid, stage):
    for t in kernel.tasks:
        for e in (t.lowered.entries if t.lowered is not None else ()):
            if e.resource == rid and e.stage is stage:
                return e
    return None


class _EndRule(_TableRule):
    kind = FULL
    sign = 1
    stage = None
    partner = None
    cause_stage = None     # the excess stage that explains the leftover credit

    def check(self, kernel):
        sim = simulate_table(kernel)
        if sim.credits is None or sim.blocked or sim.final is None:
            return
        from ..enums import ScheduleStage as S
        for (cid, kind), (delta, pools) in _leftovers(sim).items():
            if kind != self.kind or (delta > 0) != (self.sign > 0):
                continue
            n = abs(delta)
            name = kernel.name(cid)
            stage = getattr(S, self.stage)
            partner = getattr(S, self.partner)
            hit = _last(sim, cid, stage)
            cause = _cause(kernel, cid, self.cause_stage) if self.cause_stage else None
            if cause is not None and cause[1] is not None:
                rng = cause[1].range
            elif hit is not None:
                x = sim.lists[hit[0]][hit[1]]
                rng = x.entry.range
            else:
                e = _first_entry(kernel, cid, stage)
                rng = e.range if e is not None else kernel.res(cid).range
            related = []
            ph = _last(sim, cid, partner)
            if ph is not None:
                px = sim.lists[ph[0]][ph[1]]
                related.append(Related(px.entry.range, f"last {partner.value} of '{name}'"))
            yield self.diag(self.text(n, name) + _note(sim), rng, related=related)


@register
class CommitNotConsumed(_EndRule):
    """Commits left unconsumed at the end of the schedule-table run.

    ## What it does
    After the round-robin run completes, counts the full (commit) credits no `wait()`
    consumed, per resource (WorkQueues are exempt). Points at the last such commit.
    ## Why is this bad?
    A stage committed but never waited for is never released either: the producer and
    consumer disagree on the number of stages, and the barrier phases drift apart.
    ## Example
    `buf.commit()` twice per iteration while the consumer waits once.
    ## Use instead
    One `commit()` per `acquire()`, and one `wait()` per committed stage.
    """
    code = "TS811"
    VALID = [programs.VALID_PIPE]
    INVALID = [programs.EXTRA_COMMIT]
    name = "commit-not-consumed"
    kind = FULL
    sign = 1
    stage = "ProducerCommit"
    partner = "ConsumerWait"
    cause_stage = S.ProducerCommit

    @staticmethod
    def text(n, name):
        return f"{n}x ProducerCommit from {name} not consumed! ({n} committed stage(s) of '{name}' are never waited for)"


@register
class AcquireNotReleased(_EndRule):
    """More acquires than releases on a resource at the end of the schedule-table run.

    ## What it does
    After the round-robin run completes, compares each resource's empty-stage credits with
    their initial count; fewer means some acquired stage was never released.
    Points at the last unmatched acquire; the last wait of that resource is related.
    ## Why is this bad?
    The stage stays owned by the consumer side: the next run (or a longer loop) blocks.
    ## Example
    A consumer `wait()` / `consumer_work()` without `release()` on a 4-stage buffer filled twice.
    ## Use instead
    `release()` every stage after its last use.
    """
    code = "TS812"
    VALID = [programs.VALID_PIPE]
    INVALID = [programs.NOT_RELEASED]
    name = "acquire-not-released"
    kind = EMPTY
    sign = -1
    stage = "ProducerAcquire"
    partner = "ConsumerWait"
    cause_stage = S.ConsumerWait

    @staticmethod
    def text(n, name):
        return f"{n}x ProducerAcquire from {name} not matched by ConsumerRelease! ({n} stage(s) of '{name}' are acquired but never released)"


@register
class ReleaseWithoutAcquire(_EndRule):
    """More releases than acquires on a resource at the end of the schedule-table run.

    ## What it does
    After the round-robin run completes, reports resources whose empty-stage credits
    exceed their initial count: a `release()` that no `acquire()` matches.
    ## Why is this bad?
    Extra arrivals on the empty barrier complete phases early: a producer may overwrite a
    stage that is still being read.
    ## Example
    `release()` twice per iteration.
    ## Use instead
    One `release()` per `wait()`.
    """
    code = "TS813"
    VALID = [programs.VALID_PIPE]
    INVALID = [programs.EXTRA_RELEASE]
    name = "release-without-acquire"
    kind = EMPTY
    sign = 1
    stage = "ConsumerRelease"
    partner = "ProducerAcquire"
    cause_stage = S.ConsumerRelease

    @staticmethod
    def text(n, name):
        return f"{n}x ConsumerRelease from {name} not matched by ProducerAcquire! ({n} release(s) of '{name}' without an acquire)"


@register
class DynamicDomainNotInt(_TableRule):
    """A dynamic domain getter probed at tile (0, 0, 0) did not return a Python int.

    ## What it does
    For `domain_loop(start, MyTask.get_domain)` the manager calls the getter with tile
    `(0, 0, 0)` to learn the loop length for validation. When the result is not a Python
    int (a traced value), the simulation and the exhaustive checker use a representative
    count instead, and this warning says so.
    ## Why is this bad?
    Validation then does not run the real loop length: findings may be false positives
    and real issues may be missed.
    ## Example
    `def get_domain(self, tile): return self.k_tiles_tensor[tile[2]]`
    ## Use instead
    Return a Python int when validating (e.g. a host-side `validate-only` build).
    """
    code = "TS814"
    name = "dynamic-domain-not-int"
    severity = Severity.WARNING

    def check(self, kernel):
        fallback = table_fallback(kernel)
        for t in kernel.tasks:
            low = t.lowered
            if low is None or not isinstance(low.domain_end, DynamicBound):
                continue
            # The reference probes the getter (and warns) only when start and step are
            # compile-time ints; otherwise it goes straight to the representative count.
            if not (is_static_int(low.domain_start) and is_static_int(low.domain_step)):
                continue
            probe = domain_probe(low)
            if probe is UNKNOWN or is_static_int(probe):
                continue
            cnt = iteration_count(low, fallback)
            n = cnt.n if cnt.n is not None else "?"
            yield self.diag(f"task '{t.name}': dynamic domain '{low.domain_end.name}' did not yield a "
                            f"compile-time int loop end for tile (0, 0, 0) (got {probe!r}); validation uses "
                            f"{n} iteration(s) in the schedule table and "
                            f"{iteration_count(low, 1).n} in the exhaustive checker", low.domain_range)
