"""Compiling one checker run (one variant) into flat per-task op arrays.

Everything the search needs per step is computed here once: the credit pool it blocks
on and the credit moves (credits.py), the pipeline slot it touches, the held-state
micro-actions (state.py), the pending memory access it is about to make, whether it is
a PDL wait or launch, and the facts the partial-order reduction uses (reduce.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from ..enums import LoopGuard, OpaqueCondition, PipelineGroupMode, PipelineType, ScheduleStage, guard_fires
from ..model.kernel import ResourceKind
from ..model.lowered import HEAD, LOOP, TAIL
from ..model.values import UNKNOWN, is_static_int
from .credits import ROLE, CreditModel, Unknown, lane_info, strides, tracked
from .expand import ExpandedEntry, IterationCount, Variant, expand_task, iteration_count
from .state import (ACQ, CLEAR, CONS, CWORK, PROD, PROD_C, PWORK, REL, TAG, UWORK, WAIT,
                    Layout)

__all__ = ["Op", "Program", "compile_program", "CompileContext", "alias_table", "XStep", "split_steps"]

S = ScheduleStage
_ROLE_IDS = frozenset(id(k) for k in ROLE)
_WAIT_ID, _RELEASE_ID = id(ScheduleStage.ConsumerWait), id(ScheduleStage.ConsumerRelease)
# enum members bound once: attribute access on an Enum class is slow on hot paths
_ConsumerAuxWork = ScheduleStage.ConsumerAuxWork
_ConsumerRelease = ScheduleStage.ConsumerRelease
_ConsumerTryWait = ScheduleStage.ConsumerTryWait
_ConsumerWait = ScheduleStage.ConsumerWait
_ConsumerWork = ScheduleStage.ConsumerWork
_ProducerAcquire = ScheduleStage.ProducerAcquire
_ProducerAuxWork = ScheduleStage.ProducerAuxWork
_ProducerCommit = ScheduleStage.ProducerCommit
_ProducerTryAcquire = ScheduleStage.ProducerTryAcquire
_ProducerWork = ScheduleStage.ProducerWork
DMA_CONSUMERS = (PipelineType.TmaUmma, PipelineType.AsyncUmma, PipelineType.UmmaUmma)
COMPLETION_PRODUCERS = (PipelineType.UmmaAsync, PipelineType.UmmaUmma)
PDL_WAIT, PDL_LAUNCH = 1, 2
_TRACKED, _OTHER, _UWORK, _G_FORK, _G_REL, _G_WAIT = range(6)   # step classes (compile)


class XStep:
    """One step of a task's expanded list (a split work call gives two)."""
    __slots__ = ("x", "part", "nparts", "resource", "stage")

    def __init__(self, x: ExpandedEntry, part: int = 0, nparts: int = 1):
        self.x = x
        self.part = part
        self.nparts = nparts
        self.resource = x.resource
        self.stage = x.stage

    @property
    def entry(self):
        return self.x.entry

    def __repr__(self):
        return f"XStep({self.x!r}, part={self.part}, nparts={self.nparts})"


class Op:
    """A compiled step. Ops are values: equal steps of a task (same entry, slot, credit
    effect, held actions) share one Op object."""
    __slots__ = ("label", "block", "moves", "held", "pdl", "pending", "dmask", "slot", "eidx",
                 "range", "entry", "part", "_sig", "bidx", "effect", "pend")

    def __init__(self, entry, part, label, eff, pdl, held, pending, slot, coff=0, toff=0, einfo=None):
        self.entry = entry
        self.part = part
        self.label = label
        self.block = eff.block_pool
        self.moves = eff.moves
        if einfo is None:
            einfo = effect_info(eff, coff, toff)
        # for the search (explore.py), with the state layout's offsets: the state index
        # of the pool it blocks on, its effect on the state, its pending access
        self.bidx, simple, rounds, self.dmask = einfo
        self.held = held
        self.pdl = pdl
        self.pending = pending   # (resource, slot, access) when this is a work access to an aliased resource
        self.slot = slot
        eidx = self.eidx = entry.index
        self.range = entry.range
        self._sig = None
        self.effect = (simple, rounds, pdl == PDL_WAIT, held, eidx)
        self.pend = None if pending is None else pending + (eidx,)

    def signature(self):
        """Everything but the task identity (symmetry detection)."""
        sig = self._sig
        if sig is None:
            sig = self._sig = (self.label, self.block, self.moves, self.held, self.pdl, self.pending,
                               self.eidx, self.range, self.slot)
        return sig


def effect_info(eff, coff: int, toff: int) -> tuple:
    """(state index of the pool it blocks on or -1, ((index, delta), ...) of single-
    participant moves, ((total index, n, credit index, delta), ...) of shared rounds, mask
    of the pools it decrements) of one StepCredit, for a state layout's offsets."""
    dmask = 0
    for mv in eff.moves:
        if mv.delta < 0:
            dmask |= 1 << mv.pool
    return (coff + eff.block_pool if eff.block_pool >= 0 else -1,
            tuple((coff + mv.pool, mv.delta) for mv in eff.moves if mv.n == 1),
            tuple((toff + mv.counter, mv.n, coff + mv.pool, mv.delta) for mv in eff.moves if mv.n != 1),
            dmask)


@dataclass
class Program:
    kernel: object
    variant: Variant
    task_names: List[str]
    steps: List[list]               # per task: (Entry, part, nparts) per step
    ops: List[List[Op]]
    credits: CreditModel
    layout: Layout
    counts: List[IterationCount]
    alias: Dict[tuple, tuple] = field(default_factory=dict)     # (rA, sideA, rB, sideB) -> (space, lo, hi)
    aliased: frozenset = frozenset()
    alias_pairs: List[tuple] = field(default_factory=list)      # (rA, rB) for the printout
    pdl_initial: bool = False
    has_pdl_launch: bool = False
    tiles: int = 1
    # per-task tables derived from an ops list (reduce.py), keyed by id of the list; shared
    # by the runs of one check, whose identical task lists are one object
    task_tables: dict = field(default_factory=dict, repr=False)

    @property
    def lengths(self) -> List[int]:
        return [len(o) for o in self.ops]

    def res_label(self, rid) -> str:
        return self.kernel.name(rid)

    def initial_state(self) -> tuple:
        return self.layout.initial(self.credits.initial_credits(), self.pdl_initial)

    @property
    def approximate(self) -> List[Tuple[str, str]]:
        """(task name, reason) for tasks whose loop count is a fallback."""
        return [(n, c.reason) for n, c in zip(self.task_names, self.counts) if not c.exact]


# ----------------------------------------------------------------------------- aliasing
def _ranges(res, side: Optional[str]) -> List[tuple]:
    names = None
    if side == "producer":
        names = res.producer_requirements
    elif side == "consumer":
        names = res.consumer_requirements
    out = []
    for a in list(res.smem) + list(res.tmem):
        if names is not None and a.name not in names:
            continue
        if not (is_static_int(a.offset) and is_static_int(a.size)) or a.size <= 0:
            continue       # unknown layout: never claim an overlap
        out.append((a.space, a.offset, a.offset + a.size))
    return out


def _overlap(ra: List[tuple], rb: List[tuple]) -> Optional[tuple]:
    for sa, la, ha in ra:
        for sb, lb, hb in rb:
            if sa == sb and la < hb and lb < ha:
                return (sa, max(la, lb), min(ha, hb))
    return None


def alias_table(kernel) -> Tuple[Dict[tuple, tuple], List[tuple]]:
    """Role-aware overlaps between different resources, and the alias pairs."""
    res = [r for r in kernel.resources.values() if not r.is_group and (r.smem or r.tmem)]
    table: Dict[tuple, tuple] = {}
    pairs = []
    for i, a in enumerate(res):
        for b in res[i + 1:]:
            if _overlap(_ranges(a, None), _ranges(b, None)) is None:
                continue
            pairs.append((a.rid, b.rid))
            for sa in ("producer", "consumer"):
                for sb in ("producer", "consumer"):
                    ov = _overlap(_ranges(a, sa), _ranges(b, sb))
                    if ov is not None:
                        table[(a.rid, sa, b.rid, sb)] = ov
                        table[(b.rid, sb, a.rid, sa)] = ov
    return table, pairs


# ----------------------------------------------------------------------------- steps
def _split(res) -> bool:
    """Work on unpipelined, non-barrier resources is not atomic (two steps)."""
    return res is not None and res.pipeline is None and not res.is_barrier and not res.is_group


def split_steps(kernel, xs: Sequence[ExpandedEntry], split: Optional[Dict[int, bool]] = None) -> List[XStep]:
    """Steps of an expanded list; `split` (rid -> whether work on it is split) may be
    precomputed."""
    out = []
    res = kernel.resources
    for x in xs:
        stage = x.stage
        if (stage is _ConsumerWork or stage is _ProducerWork) and (
                split[x.resource] if split is not None and x.resource in split else _split(res.get(x.resource))):
            out.append(XStep(x, 0, 2))
            out.append(XStep(x, 1, 2))
        else:
            out.append(XStep(x))
    return out


def _advance_on_wait(kernel, rid, uses=None) -> bool:
    """`uses` (optional, from `_stage_uses`): per task, rid -> set of ids of its stages."""
    r = kernel.resources[rid]
    if r.pipeline.advance_on_wait is True:
        return True
    if uses is None:
        uses = _stage_uses(kernel)
    grp = r.group
    for u in uses:    # the manager sets it for split consumers (wait without release)
        stages = u.get(rid, set())
        if grp is not None:
            stages = stages | u.get(grp, set())
        if _WAIT_ID in stages and _RELEASE_ID not in stages:
            return True
    return False


def _stage_uses(kernel) -> list:
    """Per task with a schedule: resource -> set of ids of the stages it performs on it."""
    out = []
    for t in kernel.tasks:
        if t.lowered is None:
            continue
        u: Dict[int, set] = {}
        for e in t.lowered.entries:
            u.setdefault(e.resource, set()).add(id(e.stage))
        out.append(u)
    return out


def _cursor_params(kernel, task, rid, ti=None, credits=None, aow=None) -> tuple:
    """(S, strides, advance_on_acquire, advance_on_wait, P, Q, C, R) of one task's
    cursors on one resource (model.md §5.2-5.3). `credits` (a CreditModel) supplies the
    lane facts it already computed; `aow` the advance-on-wait flag."""
    r = kernel.resources[rid]
    st = credits.strides.get(rid) if credits is not None else None
    if st is None:
        st = strides(r)
    aoa = r.pipeline.advance_on_acquire is True
    if aow is None:
        aow = _advance_on_wait(kernel, rid)
    lanes = []
    for role in range(4):
        info = credits._lanes.get((ti, rid, role)) if credits is not None else None
        lanes.append((info if info is not None else lane_info(task, r, role, st))[1])
    # a 0-stage ring has no slot ever free (its empty pool starts at 0, so the first acquire
    # blocks); its cursors still need a modulus
    return (r.pipeline.num_stages or 1, st, aoa, aow, lanes[0] if aoa else lanes[1], lanes[1], lanes[2],
            lanes[3])


class _Cursors:
    """Per-task pipeline cursors of one resource (model.md §5.2-5.3), for slots."""
    __slots__ = ("S", "st", "aoa", "aow", "P", "Q", "C", "R", "last_acq", "work_stage")

    def __init__(self, params):
        self.S, self.st, self.aoa, self.aow, self.P, self.Q, self.C, self.R = params
        self.last_acq = None
        self.work_stage = None

    def step(self, stage) -> int:
        S_ = self.S
        if stage is _ProducerAcquire:
            slot = self.P
            if self.aoa:
                self.last_acq = slot
                self.P = (self.P + self.st[0]) % S_
            return slot
        if stage is _ProducerTryAcquire:
            return self.P
        if stage in (_ProducerWork, _ProducerAuxWork):
            if self.aoa:
                return self.last_acq if self.last_acq is not None else self.Q
            return self.P
        if stage is _ProducerCommit:
            if self.aoa:
                slot = self.Q
                self.Q = (self.Q + self.st[1]) % S_
            else:
                slot = self.P
                self.P = (self.P + self.st[1]) % S_
            return slot
        if stage is _ConsumerTryWait:
            return self.C
        if stage is _ConsumerWait:
            slot = self.C
            if self.aow:
                self.work_stage = slot
                self.C = (self.C + self.st[2]) % S_
            return slot
        if stage in (_ConsumerWork, _ConsumerAuxWork):
            if self.aow:
                return self.work_stage if self.work_stage is not None else self.R
            return self.C
        if stage is _ConsumerRelease:
            if self.aow:
                slot = self.R
                self.R = (self.R + self.st[3]) % S_
            else:
                slot = self.C
                self.C = (self.C + self.st[3]) % S_
            return slot
        return -1


# ----------------------------------------------------------------------------- compile
def task_lists(kernel, variant: Variant, tiles: int, fallback: int = 1):
    """(expanded lists, iteration counts) of every task for one variant; raises Unknown."""
    lists, counts = [], []
    for t in kernel.tasks:
        cnt = iteration_count(t.lowered, fallback)
        if cnt.n is None:
            raise Unknown(f"task '{t.name}': {cnt.reason}")
        has_skip = t.lowered is not None and t.lowered.skip_if is not None
        skip = variant.skip if has_skip else ()
        lists.append(expand_task(t, fallback, variant.assignment, tiles=tiles, skip=skip, n=cnt.n))
        counts.append(cnt)
    return lists, counts


class CompileContext:
    """What compiling a kernel's runs needs that does not depend on the variant: iteration
    counts, the credit pools (one CreditModel for every run), the alias table, DMA and
    completion-wait resources, cursor parameters, labels. One context serves all the
    runs of one `check_kernel` call; a task whose list is the same in two runs (no
    `skip_if`, no opaque guard that differs) is compiled once. Raises Unknown, in the
    order a single compile would."""

    def __init__(self, kernel):
        self.kernel = kernel
        res = self.res = kernel.resources
        tasks = kernel.tasks
        self.counts: List[IterationCount] = []
        for t in tasks:
            cnt = iteration_count(t.lowered, 1)
            if cnt.n is None:
                raise Unknown(f"task '{t.name}': {cnt.reason}")
            self.counts.append(cnt)
        for t in tasks:
            if t.lowered is None:
                continue
            for e in t.lowered.entries:
                if e.guard is UNKNOWN or e.resource not in res:
                    raise Unknown(f"task '{t.name}': an entry is unknown")
        self.credits = CreditModel(kernel, [[] for _ in tasks], mode="checker")
        self.alias, self.pairs = alias_table(kernel)
        aliased = self.aliased = frozenset(r for p in self.pairs for r in p)
        for rid in aliased:
            r = res[rid]
            if r.pipeline is not None and r.pipeline.pipeline_type is UNKNOWN:
                raise Unknown(f"pipeline type of '{r.label}' is unknown")

        def ptype(rid):
            r = res.get(rid)
            return r.pipeline.pipeline_type if r is not None and r.pipeline is not None else None

        self.dma = {rid for rid in aliased if tracked(res[rid]) and ptype(rid) in DMA_CONSUMERS}
        # completion waits: a task reading DMA resource S and producing Umma* resource R
        self.sources_of: Dict[int, tuple] = {}
        self.completion: set = set()
        for ti, t in enumerate(tasks):
            srcs = tuple(sorted(s for s in t.src if s in self.dma))
            self.sources_of[ti] = srcs
            if srcs:
                self.completion |= {r for r in t.dst if tracked(res.get(r)) and ptype(r) in COMPLETION_PRODUCERS}
        self.tracked = {rid: tracked(r) for rid, r in res.items()}
        self.split = {rid: _split(r) for rid, r in res.items()}
        self.labels: Dict[tuple, str] = {}
        self.params: Dict[tuple, tuple] = {}
        self.aow: Dict[int, bool] = {}
        self._uses = None
        self.opaque = []          # per task: the opaque keys its guards use
        for t in tasks:
            keys = []
            if t.lowered is not None:
                for e in t.lowered.entries:
                    if isinstance(e.guard, OpaqueCondition) and e.guard.key not in keys:
                        keys.append(e.guard.key)
            self.opaque.append(tuple(keys))
        self._memo: Dict[tuple, tuple] = {}
        self._tmpl: Dict[tuple, tuple] = {}
        self._effects: Dict[tuple, object] = {}
        self._ops: Dict[tuple, Op] = {}
        self._fixed: Dict[tuple, Op] = {}     # (task, id(entry)) -> its position-independent Op
        self._einfo: Dict[int, tuple] = {}
        self._keep: list = []        # entries whose id() keys the tables above
        self.task_tables: dict = {}
        self.pdl_initial = bool(kernel.options.assume_pdl_wait_completed)

    def label(self, rid, stage) -> str:
        key = (rid, id(stage))
        lbl = self.labels.get(key)
        if lbl is None:
            lbl = self.labels[key] = f"{stage._value_}({self.res[rid].label})"
        return lbl

    def cursors(self, ti, rid) -> _Cursors:
        key = (ti, rid)
        p = self.params.get(key)
        if p is None:
            aow = self.aow.get(rid)
            if aow is None:
                if self._uses is None:
                    self._uses = _stage_uses(self.kernel)
                aow = self.aow[rid] = _advance_on_wait(self.kernel, rid, self._uses)
            p = self.params[key] = _cursor_params(self.kernel, self.kernel.tasks[ti], rid, ti, self.credits, aow)
        return _Cursors(p)

    def task(self, ti: int, variant: Variant, tiles: int):
        """(steps, ops) of task `ti` in one run (memoised per distinct list)."""
        t = self.kernel.tasks[ti]
        low = t.lowered
        has_skip = low is not None and low.skip_if is not None
        skip = tuple(variant.skip) if has_skip else ()
        assign = variant.assignment or {}
        key = (ti, tiles, skip, tuple(bool(assign.get(k, False)) for k in self.opaque[ti]))
        hit = self._memo.get(key)
        if hit is None:
            entries = [] if low is None else _expand_entries(low, self.counts[ti].n, variant.assignment,
                                                              tiles, skip)
            hit = self._memo[key] = self._compile_task(ti, entries)
        return hit

    def _template(self, ti: int, e) -> tuple:
        """Per entry: what does not depend on the position in the list."""
        res = self.res
        rid, stage = e.resource, e.stage
        r = res[rid]
        label = self.label(rid, stage)
        pdl = 0
        if r.kind is ResourceKind.PDL_WAIT and stage is _ConsumerWork:
            pdl = PDL_WAIT
        elif r.kind is ResourceKind.PDL_LAUNCH and stage is _ProducerWork:
            pdl = PDL_LAUNCH
        if r.is_group:
            mode = r.group_mode
            members = tuple(m for m in r.members if self.tracked.get(m))
            if mode is PipelineGroupMode.Fork and stage is _ProducerCommit:
                cls = _G_FORK
            elif mode in (PipelineGroupMode.Merge, PipelineGroupMode.FusedMerge) and stage is _ConsumerRelease:
                cls = _G_REL
            elif mode is PipelineGroupMode.FusedMerge and stage in (_ConsumerWait, _ConsumerTryWait):
                cls = _G_WAIT
            else:
                cls = _OTHER
        else:
            members = ()
            if self.tracked[rid]:
                cls = _TRACKED
            elif rid in self.aliased and self.split[rid] and stage in (_ConsumerWork, _ProducerWork):
                cls = _UWORK
            else:
                cls = _OTHER
        nparts = 2 if (stage is _ConsumerWork or stage is _ProducerWork) and self.split[rid] else 1
        occ = id(stage) in _ROLE_IDS and self.credits._occ_matters(rid)
        return (rid, stage, label, pdl, cls, members, nparts, occ)

    def _compile_task(self, ti: int, entries: list):
        aliased, dma, completion = self.aliased, self.dma, self.completion
        srcs = self.sources_of[ti]
        credits = self.credits
        tmpls = self._tmpl
        ops_memo = self._ops
        einfos = self._einfo
        coff = len(self.kernel.tasks)
        toff = coff + len(credits.pools)
        cursors: Dict[int, _Cursors] = {}

        def cur(rid):
            c = cursors.get(rid)
            if c is None:
                c = cursors[rid] = self.cursors(ti, rid)
            return c

        commits: Dict[int, int] = {}
        waits: Dict[int, int] = {}
        occ: Dict[tuple, int] = {}
        steps = []
        tops = []
        n_entries = len(entries)
        fixed = self._fixed
        for k, e in enumerate(entries):
            tk = (ti, id(e))
            op = fixed.get(tk)
            if op is not None:
                # a step whose Op does not depend on its position (see below)
                tops.append(op)
                steps.append((e, 0, 1))
                continue
            tm = tmpls.get(tk)
            if tm is None:
                tm = tmpls[tk] = self._template(ti, e)
                self._keep.append(e)
            rid, stage, label, pdl, cls, members, nparts, occ_matters = tm
            if occ_matters:
                eff = credits._effect(ti, e, occ)
            else:
                eff = self._effects.get(tk)
                if eff is None:
                    eff = self._effects[tk] = credits._effect(ti, e, {})
            einfo = einfos.get(id(eff))
            if einfo is None:
                einfo = einfos[id(eff)] = effect_info(eff, coff, toff)
            slot = None
            pending = None
            held = ()
            if cls == _TRACKED:
                slot = cur(rid).step(stage)
                if rid in aliased:
                    if stage is _ProducerAcquire:
                        held = ((ACQ, rid, slot, rid in dma),)
                    elif stage is _ProducerWork:
                        held = ((PWORK, rid, slot),)
                        pending = (rid, slot, PROD)
                    elif stage is _ConsumerWait:
                        held = ((WAIT, rid, slot),)
                    elif stage is _ConsumerWork:
                        held = ((CWORK, rid, slot),)
                        pending = (rid, slot, CONS)
                    elif stage is _ConsumerRelease and rid not in dma:
                        held = ((REL, rid, slot),)
                if rid in completion:
                    if stage is _ProducerCommit and srcs:
                        commits[rid] = commits.get(rid, 0) + 1
                        held = ((TAG, rid, commits[rid], srcs),)
                    elif stage is _ConsumerWait:
                        waits[rid] = waits.get(rid, 0) + 1
                        held = held + ((CLEAR, rid, waits[rid]),)
            elif cls == _OTHER:
                pass
            elif cls == _UWORK:
                nxt = entries[k + 1] if k + 1 < n_entries else None
                end = not (nxt is not None and nxt.resource == rid and
                           (nxt.stage is _ConsumerWork or nxt.stage is _ProducerWork))
                if stage is _ProducerWork:
                    ops = [((UWORK, rid, PROD, False),), ((UWORK, rid, PROD, end),)]
                    accs = (PROD, PROD)
                else:
                    ops = [((UWORK, rid, PROD_C, False),), ((UWORK, rid, CONS, end),)]
                    accs = (PROD_C, CONS)
                for part in (0, 1):
                    h = ops[part]
                    okey = (tk, part, id(eff), h, -1)
                    op = ops_memo.get(okey)
                    if op is None:
                        op = ops_memo[okey] = Op(e, part, label, eff, pdl, h, (rid, -1, accs[part]), -1, coff, toff, einfo)
                    tops.append(op)
                    steps.append((e, part, 2))
                continue
            else:
                hl = []
                if cls == _G_FORK:
                    for m in members:
                        cur(m).step(stage)
                        if m in completion and srcs:
                            commits[m] = commits.get(m, 0) + 1
                            hl.append((TAG, m, commits[m], srcs))
                elif cls == _G_REL:
                    for m in members:
                        sl = cur(m).step(stage)
                        if m in aliased and m not in dma:
                            hl.append((REL, m, sl))
                else:   # _G_WAIT
                    for m in members:
                        sl = cur(m).step(stage)
                        if stage is _ConsumerWait:
                            if m in aliased:
                                hl.append((WAIT, m, sl))
                            if m in completion:
                                waits[m] = waits.get(m, 0) + 1
                                hl.append((CLEAR, m, waits[m]))
                held = tuple(hl)
            okey = (tk, 0, id(eff), held, slot)
            op = ops_memo.get(okey)
            if op is None:
                op = ops_memo[okey] = Op(e, 0, label, eff, pdl, held, pending, slot, coff, toff, einfo)
            if cls == _OTHER and not occ_matters and nparts == 1:
                # no cursor, no held action, an effect cached per entry: the same Op at
                # every position, in every run of this check
                fixed[tk] = op
            if nparts == 2:
                # split work on an unpipelined resource that is not aliased: two plain steps
                tops.append(op)
                steps.append((e, 0, 2))
                okey = (tk, 1, id(eff), held, slot)
                op = ops_memo.get(okey)
                if op is None:
                    op = ops_memo[okey] = Op(e, 1, label, eff, pdl, held, pending, slot, coff, toff, einfo)
                tops.append(op)
                steps.append((e, 1, 2))
            else:
                tops.append(op)
                steps.append((e, 0, 1))
        return steps, tops


def _expand_entries(low, n: int, assignment, tiles: int, skip: tuple) -> list:
    """The entries of `expand_task(task, 1, assignment, tiles=tiles, skip=skip, n=n)`, as
    the lowered Entry objects themselves (no per-step wrappers)."""
    skip = list(skip) + [False] * (tiles - len(skip))

    def normal(entries):
        head = [e for e in entries if e.section == HEAD]
        loop = [e for e in entries if e.section == LOOP]
        tail = [e for e in entries if e.section == TAIL]
        out = list(head)
        if n > 0 and loop:
            if all(e.guard is None or e.guard is LoopGuard.Always for e in loop):
                out.extend(loop * n)
            else:
                for i in range(n):
                    for e in loop:
                        g = e.guard
                        if g is None or g is LoopGuard.Always or guard_fires(g, i, n, opaque_assignment=assignment):
                            out.append(e)
        out.extend(tail)
        return out

    def skipped(entries):
        return [e for e in entries if e.section != LOOP and not e.skippable]

    if tiles == 1 and not low.has_work_tile_loop:
        return skipped(low.entries) if skip[0] else normal(low.entries)
    pre = [e for e in low.entries if e.pre_wtl]
    post = [e for e in low.entries if e.post_wtl]
    body = [e for e in low.entries if not e.pre_wtl and not e.post_wtl]
    out = list(pre)
    norm = skp = None
    for t in range(tiles):
        if skip[t]:
            if skp is None:
                skp = skipped(body)
            out.extend(skp)
        else:
            if norm is None:
                norm = normal(body)
            out.extend(norm)
    out.extend(post)
    return out


def compile_program(kernel, variant: Variant, tiles: int, ctx: Optional[CompileContext] = None) -> Program:
    """One run's Program. Pass the same `ctx` (CompileContext(kernel)) for every run of a
    check so that the kernel-level work is done once."""
    if ctx is None:
        ctx = CompileContext(kernel)
    steps, ops = [], []
    for ti in range(len(kernel.tasks)):
        st, tops = ctx.task(ti, variant, tiles)
        steps.append(st)
        ops.append(tops)
    credits = ctx.credits
    layout = Layout(len(kernel.tasks), len(credits.pools), len(credits.counters))
    prog = Program(kernel=kernel, variant=variant, task_names=[t.name for t in kernel.tasks],
                   steps=steps, ops=ops, credits=credits, layout=layout, counts=ctx.counts,
                   alias=ctx.alias, aliased=ctx.aliased, alias_pairs=ctx.pairs,
                   pdl_initial=ctx.pdl_initial, tiles=tiles, task_tables=ctx.task_tables)
    launches = ctx.task_tables
    for tops in ops:
        key = ("launch", id(tops))
        has = launches.get(key)
        if has is None:
            has = launches[key] = any(op.pdl == PDL_LAUNCH for op in tops)
        if has:
            prog.has_pdl_launch = True
            break
    return prog
