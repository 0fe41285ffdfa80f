"""The credit model shared by the schedule-table simulation and the exhaustive checker.

model.md §7. Every pipelined resource that is not a WorkQueue owns two kinds of credit
pools: *full* credits (a producer committed a stage the consumers have not waited for
yet) and *empty* credits (stages the producers may acquire). A pool is keyed by
`(credit id, physical stage)`:

* the credit id is the resource, except that a FusedMerge member's `commit` credits its
  group (the consumer waits on the group);
* the physical stage is 0 (one fungible pool) unless the resource is *domain
  interleaved* (some task runs on it in domain-lane mode): then each stage has its own
  pool and an op's stage is `(lane_offset + occurrence * advance) % S`.

`commit` adds a full credit, `wait` takes one (blocked while none), `release` adds an
empty credit, `acquire` takes one (blocked while none). With N participants on one
side of a barrier, a credit moves only on every N-th event (they share a barrier round);
the event total modulo N is part of the state. Group ops: a Fork group `commit` credits
every member, a Merge/FusedMerge group `release` credits every member.

The two simulators count participants differently (a reference quirk kept on purpose):
the schedule table counts tasks that actually perform the op, the exhaustive checker
counts tasks listing the resource in `dst_resources` (producer ops) or `src_resources`
(consumer ops).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

from ..enums import PipelineGroupMode, ScheduleStage
from ..model.kernel import ResourceKind
from ..model.values import UNKNOWN, is_static_int

__all__ = [
    "FULL", "EMPTY", "Pool", "Move", "StepCredit", "CreditModel", "Unknown",
    "tracked", "strides", "lane_info", "ROLE", "DENSE_LANE",
]

FULL, EMPTY = "full", "empty"
Acq, Cmt, Wai, Rel = (ScheduleStage.ProducerAcquire, ScheduleStage.ProducerCommit,
                      ScheduleStage.ConsumerWait, ScheduleStage.ConsumerRelease)
# stage -> (role index in interleave_strides, pool kind, delta, blocking)
ROLE = {Acq: (0, EMPTY, -1, True), Cmt: (1, FULL, +1, False),
        Wai: (2, FULL, -1, True), Rel: (3, EMPTY, +1, False)}
PRODUCER_OPS = (Acq, Cmt)
_ROLE_BY_ID = {id(k): v for k, v in ROLE.items()}   # enum members are singletons; hashing them is slow
_PRODUCER_IDS = frozenset(id(k) for k in PRODUCER_OPS)
_GROUP, _WORK_QUEUE = ResourceKind.GROUP, ResourceKind.WORK_QUEUE
_Fork, _Merge, _FusedMerge = PipelineGroupMode.Fork, PipelineGroupMode.Merge, PipelineGroupMode.FusedMerge


class Unknown(Exception):
    """A value the model needs is UNKNOWN: the check must stay silent."""


@dataclass
class Pool:
    index: int
    credit_id: int
    phys: int
    kind: str
    initial: int
    name: str

    def label(self, interleaved: bool = False) -> str:
        what = "commit (full)" if self.kind == FULL else "release (empty)"
        return f"{what} credit of '{self.name}'" + (f" stage {self.phys}" if interleaved else "")


class Move(NamedTuple):
    pool: int
    delta: int
    counter: int      # index into the event-total vector, -1 when n == 1
    n: int            # participants sharing one barrier round


class StepCredit(NamedTuple):
    block_pool: int = -1      # pool that must hold a credit for the step to run
    moves: tuple = ()         # (Move, ...)

    @property
    def is_credit(self) -> bool:
        return bool(self.moves)


NO_CREDIT = StepCredit()
_new = tuple.__new__
DENSE_LANE = (False, 0, 1)   # `lane_info` of a role with stride 1


def tracked(res) -> bool:
    """Pipelined, not a WorkQueue, not a group: owns credit pools (groups: see FusedMerge)."""
    return res is not None and res.pipeline is not None and res.kind is not _WORK_QUEUE and res.kind is not _GROUP


def strides(res) -> tuple:
    s = res.pipeline.interleave_strides if res.pipeline is not None else (1, 1, 1, 1)
    if is_static_int(s):
        s = (s,) * 4
    if not isinstance(s, tuple) or len(s) != 4 or not all(is_static_int(x) for x in s):
        raise Unknown(f"interleave stride of '{res.label}' is unknown")
    return s


def lane_info(task, res, role: int, st: Optional[tuple] = None) -> Tuple[bool, int, int]:
    """(domain_lane, lane, stride) of `task` for one role on `res` (model.md §5.4).

    Warp-lane tasks (num_warps == stride) report lane 0; a stride of 1 is dense.
    `st`: `strides(res)` when the caller has it.
    """
    k = (st if st is not None else strides(res))[role]
    if k <= 1:
        return False, 0, 1
    nw = task.num_warps
    if not is_static_int(nw):
        raise Unknown(f"num_warps of task '{task.name}' is unknown")
    if nw == k:
        return False, 0, k
    low = task.lowered
    start = low.domain_start if low is not None else 0
    step = low.domain_step if low is not None else 1
    if start is UNKNOWN or step is UNKNOWN:
        raise Unknown(f"domain of task '{task.name}' is unknown")
    if is_static_int(step) and step == k and is_static_int(start):
        return True, start % k, k
    return False, 0, k


def _num_stages(res) -> int:
    s = res.pipeline.num_stages
    # 0 stages is a real configuration (no slot is ever free: the first acquire blocks, as
    # the reference reports it); a negative count is not one
    if not is_static_int(s) or s < 0:
        raise Unknown(f"num_stages of '{res.label}' is unknown")
    return s


class CreditModel:
    """Pools, initial credits and the credit effect of every step of every task.

    `task_steps[i]` is task i's flat list of steps (objects with `.resource`, `.stage`
    and `.entry`). `mode` is "checker" or "table" (participant counting).
    Raises `Unknown` when a needed value is unknown.
    """

    def __init__(self, kernel, task_steps: Sequence[Sequence], mode: str = "checker",
                 layout: Optional["CreditModel"] = None):
        self.kernel = kernel
        self.mode = mode
        self.pools: List[Pool] = []
        self._pool_index: Dict[tuple, int] = {}
        self.counters: List[tuple] = []          # (pool, stage)
        self._counter_index: Dict[tuple, int] = {}
        self.interleaved: Dict[int, bool] = {}
        self._part_cache: Dict[tuple, int] = {}  # (rid, stage) -> participants
        self._occ_cache: Dict[int, bool] = {}    # rid -> whether the occurrence picks the pool
        self._eff_cache: Dict[tuple, StepCredit] = {}
        self._plain_res: Dict[int, Optional[tuple]] = {}   # rid -> _plain_pools(rid)
        self.strides: Dict[int, tuple] = {}      # rid -> interleave strides
        self.layout_source: Optional["CreditModel"] = None    # the model _copy_layout took it from
        self.complete_run: Optional[list] = None               # remember_complete_run's lists
        if layout is not None and layout.kernel is kernel:
            self._copy_layout(layout)
        else:
            self._make_layout(kernel)
        self._finish_init(task_steps)

    def _make_layout(self, kernel) -> None:
        """What does not depend on the mode nor on the task lists: which resources are
        tracked, their strides and interleaved lanes, the listing counts, the pools of
        tracked resources and FusedMerge groups (`_layout_pools` of them)."""
        res = kernel.resources
        tasks = kernel.tasks
        # --- which resources are domain interleaved. Only roles with a stride above 1
        # are recorded: every reader of `_lanes` defaults to (dense, lane 0, stride 1),
        # which is what `lane_info` gives for them.
        self._lanes: Dict[tuple, tuple] = {}     # (task idx, rid, role) -> lane info
        self._tracked: Dict[int, bool] = {}      # rid -> tracked(resource)
        # checker mode: tasks listing each tracked resource in dst / src (the participants
        # of its producer / consumer ops while no lane is domain-interleaved)
        self._listing = listing = ({}, {})
        producers, consumers = listing
        tracked_of = self._tracked
        for ti, t in enumerate(tasks):
            src, dst = t.src, t.dst
            for rid in set(src) | set(dst):
                trk = tracked_of.get(rid)
                if trk is None:
                    trk = tracked_of[rid] = tracked(res.get(rid))
                if not trk:
                    continue
                if rid in dst:
                    producers[rid] = producers.get(rid, 0) + 1
                if rid in src:
                    consumers[rid] = consumers.get(rid, 0) + 1
                r = res[rid]
                st = self.strides.get(rid)
                if st is None:
                    st = self.strides[rid] = strides(r)
                if st[0] <= 1 and st[1] <= 1 and st[2] <= 1 and st[3] <= 1:
                    continue
                roles = ([0, 1] if rid in dst else []) + ([2, 3] if rid in src else [])
                for role in roles:
                    info = lane_info(t, r, role, st)
                    if info[2] > 1:
                        self._lanes[(ti, rid, role)] = info
                    if info[0]:
                        self.interleaved[rid] = True
        # --- pools
        for rid, r in res.items():
            trk = tracked_of.get(rid)
            if trk is None:
                trk = tracked_of[rid] = tracked(r)
            if trk:
                S = _num_stages(r)
                if S == 0 and self.interleaved.get(rid):
                    raise Unknown(f"'{r.label}' has 0 stages and interleaved lanes")
                if self.interleaved.get(rid):
                    for k in range(S):
                        self._pool(rid, k, FULL, 0)
                        self._pool(rid, k, EMPTY, 1)
                else:
                    self._pool(rid, 0, FULL, 0)
                    self._pool(rid, 0, EMPTY, S)
            elif r.kind is _GROUP and r.group_mode is _FusedMerge:
                self._pool(rid, 0, FULL, 0)
        self._layout_pools = len(self.pools)

    def _copy_layout(self, other: "CreditModel") -> None:
        """`_make_layout` taken from another model of the same kernel (the schedule-table
        rule's, for the checker): its first `_layout_pools` pools are the layout's."""
        self.layout_source = other
        n = self._layout_pools = other._layout_pools
        self.pools = other.pools[:n]
        index = other._pool_index
        self._pool_index = dict(index) if len(index) == n else {k: i for k, i in index.items() if i < n}
        self.interleaved = other.interleaved
        self.strides = other.strides
        self._lanes = other._lanes
        self._tracked = dict(other._tracked)
        self._listing = other._listing

    def _finish_init(self, task_steps: Sequence[Sequence]) -> None:
        # --- participants
        self._performers: Dict[tuple, set] = {}
        if not any(task_steps):
            # (the checker's model: its effects are made per list, `task_effects`)
            self.effects = [[] for _ in task_steps]
            return
        for ti, steps in enumerate(task_steps):
            for s in steps:
                if s.stage in ROLE:
                    self._performers.setdefault((s.resource, s.stage), set()).add(ti)
        # --- per-step effects
        self.effects: List[List[StepCredit]] = [self.task_effects(ti, steps)
                                                for ti, steps in enumerate(task_steps)]

    def task_effects(self, ti: int, steps: Sequence) -> List[StepCredit]:
        """The credit effect of every step of task `ti`'s list `steps`. In "checker" mode
        effects do not depend on the other tasks' lists, so one model serves every
        variant of a kernel (the pools are the same)."""
        occ: Dict[tuple, int] = {}
        return [self._effect(ti, s, occ) for s in steps]

    # ------------------------------------------------------------------ helpers
    def _pool(self, cid, phys, kind, initial) -> int:
        key = (cid, phys, kind)
        idx = self._pool_index.get(key)
        if idx is None:
            idx = len(self.pools)
            r = self.kernel.resources.get(cid)
            self.pools.append(Pool(idx, cid, phys, kind, initial, r.label if r else str(cid)))
            self._pool_index[key] = idx
        return idx

    def pool(self, cid, phys, kind) -> Optional[int]:
        return self._pool_index.get((cid, phys, kind))

    def _counter(self, pool: int, stage) -> int:
        key = (pool, id(stage))
        idx = self._counter_index.get(key)
        if idx is None:
            idx = len(self.counters)
            self.counters.append((pool, stage))
            self._counter_index[key] = idx
        return idx

    def initial_credits(self) -> tuple:
        return tuple([p.initial for p in self.pools])

    def _participants(self, rid: int, stage) -> int:
        """N for events of `stage` on resource `rid` (domain-lane tasks count as one)."""
        key = (rid, id(stage))
        n = self._part_cache.get(key)
        if n is None:
            n = self._part_cache[key] = self._count_participants(rid, stage)
        return n

    def _count_participants(self, rid: int, stage) -> int:
        lanes = self._lanes
        if self.mode != "table" and not lanes and self._tracked.get(rid):
            # the counts made while scanning the tasks (no lane to count as one)
            n = self._listing[0 if id(stage) in _PRODUCER_IDS else 1].get(rid, 0)
            return n if n > 1 else 1
        role = _ROLE_BY_ID[id(stage)][0]
        if self.mode == "table":
            who = self._performers.get((rid, stage), set())
        elif id(stage) in _PRODUCER_IDS:
            who = [i for i, t in enumerate(self.kernel.tasks) if rid in t.dst]
        else:
            who = [i for i, t in enumerate(self.kernel.tasks) if rid in t.src]
        if not lanes:
            return max(1, len(who))
        dense = 0
        domain = 0
        for i in who:
            if lanes.get((i, rid, role), DENSE_LANE)[0]:
                domain = 1
            else:
                dense += 1
        return max(1, dense + domain)

    def _phys(self, ti: int, rid: int, stage, occ: int) -> int:
        if not self.interleaved.get(rid):
            return 0
        S = self.kernel.resources[rid].pipeline.num_stages
        role = _ROLE_BY_ID[id(stage)][0]
        domain, lane, k = self._lanes.get((ti, rid, role), DENSE_LANE)
        if domain:
            return (lane + occ * k) % S
        return occ % S

    def _move(self, pool: int, stage, delta: int, n: int) -> Move:
        return Move(pool, delta, self._counter(pool, stage) if n > 1 else -1, n)

    def _occ_matters(self, rid) -> bool:
        """Whether the occurrence number of an op on `rid` selects its pool (a domain-
        interleaved resource, or a group with such a member)."""
        v = self._occ_cache.get(rid)
        if v is None:
            r = self.kernel.resources.get(rid)
            if r is None:
                v = False
            elif r.kind is _GROUP:
                v = any(self.interleaved.get(m) for m in r.members)
            else:
                v = bool(self.interleaved.get(rid))
            self._occ_cache[rid] = v
        return v

    def _effect(self, ti: int, step, occ: dict) -> StepCredit:
        stage = step.stage
        sid = id(stage)
        if sid not in _ROLE_BY_ID:
            return NO_CREDIT
        rid = step.resource
        k = (rid, sid)
        o = occ.get(k, 0)
        occ[k] = o + 1
        # the effect is a function of (task, resource, stage) and, on interleaved
        # resources, of the occurrence number: computed once per key
        ck = (ti, rid, sid, o if self._occ_matters(rid) else -1)
        eff = self._eff_cache.get(ck)
        if eff is None:
            eff = self._eff_cache[ck] = self._effect_of(ti, rid, stage, o)
        return eff

    def fixed_effect(self, ti: int, rid: int, stage) -> StepCredit:
        """`_effect` of a step whose occurrence number does not pick the pool (not
        `_occ_matters(rid)`), without the occurrence bookkeeping."""
        sid = id(stage)
        if sid not in _ROLE_BY_ID:
            return NO_CREDIT
        ck = (ti, rid, sid, -1)
        eff = self._eff_cache.get(ck)
        if eff is None:
            eff = self._eff_cache[ck] = self._effect_of(ti, rid, stage, 0)
        return eff

    def _plain(self, rid: int, stage) -> Optional[tuple]:
        """(pool, delta, blocking, counter or -1, participants) of a pipeline op on a
        tracked resource that is in no group, in "checker" mode with no lane recorded:
        neither the task nor the occurrence picks the pool, and the participants are the
        tasks listing the resource (`_count_participants`). None in every other case.
        The one place both `_effect_of` and `plain_info` take that common case from."""
        pr = self._plain_res.get(rid, 0)
        if pr == 0:
            pr = self._plain_res[rid] = self._plain_pools(rid)
        if pr is None:
            return None
        role = _ROLE_BY_ID.get(id(stage))
        if role is None:
            return None
        side, kind, delta, blocking = role
        full, empty, n_prod, n_cons = pr
        p = full if kind is FULL else empty
        n = n_prod if side < 2 else n_cons
        return (p, delta, blocking, self._counter(p, stage) if n > 1 else -1, n if n > 1 else 1)

    def _plain_pools(self, rid: int) -> Optional[tuple]:
        """`_plain`'s facts of one resource: (FULL pool, EMPTY pool, tasks listing it in
        dst, in src), or None when `_plain` does not apply to it."""
        if self._lanes or self.mode != "checker":
            return None
        r = self.kernel.resources.get(rid)
        if r is None or r.group is not None or not self._tracked.get(rid):
            return None
        index = self._pool_index
        return (index[(rid, 0, FULL)], index[(rid, 0, EMPTY)], self._listing[0].get(rid, 0),
                self._listing[1].get(rid, 0))

    def plain_info(self, rid: int, stage, coff: int = 0, toff: int = 0) -> Optional[tuple]:
        """`effect_info(fixed_effect(ti, rid, stage), coff, toff)` (program.py) of the common
        case (`_plain`), without making the StepCredit; None in every other case (the caller
        then asks `fixed_effect`)."""
        got = self._plain(rid, stage)
        if got is None:
            return None
        p, delta, blocking, counter, n = got
        dmask = 1 << p if delta < 0 else 0
        c = coff + p
        if n > 1:
            return (c if blocking else -1, (), ((toff + counter, n, c, delta),), dmask)
        return (c if blocking else -1, ((c, delta),), (), dmask)

    def _effect_of(self, ti: int, rid: int, stage, o: int) -> StepCredit:
        plain = self._plain(rid, stage)
        if plain is not None:
            p, delta, blocking, counter, n = plain
            # (StepCredit(...) and Move(...), without their Python-level __new__)
            return _new(StepCredit, (p if blocking else -1, (_new(Move, (p, delta, counter, n)),)))
        res = self.kernel.resources
        r = res.get(rid)
        if r is None or r.kind is _WORK_QUEUE:
            return NO_CREDIT
        _, kind, delta, blocking = _ROLE_BY_ID[id(stage)]
        if r.kind is _GROUP:
            mode = r.group_mode
            if mode is _Fork and stage is Cmt:
                targets = r.members
            elif (mode is _Merge or mode is _FusedMerge) and stage is Rel:
                targets = r.members
            elif mode is _FusedMerge and stage is Wai:
                p = self.pool(r.rid, 0, FULL)
                n = 1 if self.mode == "checker" else max(1, len(self._performers.get((r.rid, stage), ())))
                return StepCredit(p, (self._move(p, stage, -1, n),))
            else:
                return NO_CREDIT
            moves = []
            for m in targets:
                mr = res.get(m)
                if not tracked(mr):
                    continue
                p = self.pool(m, self._phys(ti, m, stage, o), kind)
                if self.mode == "table":
                    n = max(1, len(self._performers.get((r.rid, stage), ())))
                else:
                    n = self._participants(m, stage)
                moves.append(self._move(p, stage, delta, n))
            return StepCredit(-1, tuple(moves)) if moves else NO_CREDIT
        trk = self._tracked.get(rid)
        if trk is None:
            trk = self._tracked[rid] = tracked(r)
        if not trk:
            if self.mode == "table" and r.pipeline is None and not r.is_group and not r.is_barrier:
                # the reference's table run also counts pipeline ops on unpipelined
                # resources (no stages: nothing to acquire, commits never consumed)
                p = self.pool(r.rid, 0, kind)
                if p is None:
                    p = self._pool(r.rid, 0, kind, 0)
                mv = self._move(p, stage, delta, self._participants(r.rid, stage))
                return StepCredit(p if blocking else -1, (mv,))
            return NO_CREDIT
        grp = res.get(r.group) if r.group is not None else None
        if grp is not None and grp.group_mode is _FusedMerge and stage is Cmt:
            p = self.pool(grp.rid, 0, FULL)
            return StepCredit(-1, (self._move(p, stage, +1, max(1, len(grp.members))),))
        p = self.pool(r.rid, self._phys(ti, r.rid, stage, o), kind)
        mv = self._move(p, stage, delta, self._participants(r.rid, stage))
        return StepCredit(p if blocking else -1, (mv,))


def _layout_sig(kernel) -> tuple:
    """The objects a layout was made from (kept, and compared by identity: an id could be
    reused once its object is gone)."""
    return (kernel.resources,) + tuple((t.lowered, t.src, t.dst) for t in kernel.tasks)


def remember_complete_run(model: CreditModel, lists: list) -> None:
    """Keeps on `model` (the schedule-table simulation's, in "table" mode) a run of every
    task to its end: `lists` (each task's steps, in order) were run by one interleaving
    with `model`'s credits (the round robin). The checker, whose model copies this one's
    layout (`remember_layout`), may take it as the witness that a single-path run cannot
    deadlock (checker/table.py, `table_check`)."""
    model.complete_run = lists


def remember_layout(kernel, model: CreditModel) -> None:
    """Keeps `model` on the kernel, so that a later CreditModel of the same kernel (the
    checker's, after the schedule-table rule's) copies its layout instead of making it
    again: one constructor then makes it once."""
    kernel.__dict__["_ts_credit_layout"] = (_layout_sig(kernel), model)


def known_layout(kernel) -> Optional[CreditModel]:
    """The model `remember_layout` kept, while the kernel's resources and task lists are
    the same objects."""
    got = kernel.__dict__.get("_ts_credit_layout")
    if got is None:
        return None
    sig, tasks = got[0], kernel.tasks
    if sig[0] is not kernel.resources or len(sig) != len(tasks) + 1:
        return None
    for x, t in zip(sig[1:], tasks):     # (sig == _layout_sig(kernel) by identity, without making it)
        if x[0] is not t.lowered or x[1] is not t.src or x[2] is not t.dst:
            return None
    return got[1]


def apply_moves(credits: list, totals: list, moves) -> None:
    """Applies one step's credit moves in place (N-participant rounds)."""
    for mv in moves:
        if mv.n == 1:
            credits[mv.pool] += mv.delta
        else:
            t = (totals[mv.counter] + 1) % mv.n
            totals[mv.counter] = t
            if t == 0:
                credits[mv.pool] += mv.delta
