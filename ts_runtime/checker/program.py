"""Compiling one checker run (one variant) into flat per-task op arrays.

Everything the search needs per step is computed here once: the credit pool it blocks
on and the credit moves (credits.py), the pipeline slot it touches, the held-state
micro-actions (state.py), the pending memory access it is about to make, whether it is
a PDL wait or launch, and the facts the partial-order reduction uses (reduce.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from ..enums import PipelineGroupMode, PipelineType, ScheduleStage
from ..model.kernel import ResourceKind
from ..model.values import UNKNOWN, is_static_int
from .credits import CreditModel, Unknown, lane_info, strides, tracked
from .expand import ExpandedEntry, IterationCount, Variant, expand_task, iteration_count
from .state import (ACQ, CLEAR, CONS, CWORK, PROD, PROD_C, PWORK, REL, TAG, UWORK, WAIT,
                    Layout)

__all__ = ["Op", "Program", "compile_program", "alias_table", "XStep", "split_steps"]

S = ScheduleStage
DMA_CONSUMERS = (PipelineType.TmaUmma, PipelineType.AsyncUmma, PipelineType.UmmaUmma)
COMPLETION_PRODUCERS = (PipelineType.UmmaAsync, PipelineType.UmmaUmma)
PDL_WAIT, PDL_LAUNCH = 1, 2


@dataclass(frozen=True)
class XStep:
    """One step of a task's expanded list (a split work call gives two)."""
    x: ExpandedEntry
    part: int = 0
    nparts: int = 1

    @property
    def resource(self):
        return self.x.resource

    @property
    def stage(self):
        return self.x.stage

    @property
    def entry(self):
        return self.x.entry


class Op:
    """A compiled step."""
    __slots__ = ("task", "pos", "step", "label", "block", "moves", "held", "pdl", "pending",
                 "dmask", "slot", "eidx", "range")

    def __init__(self, task, pos, step, label):
        self.task = task
        self.pos = pos
        self.step = step
        self.label = label
        self.block = -1
        self.moves = ()
        self.held = ()
        self.pdl = 0
        self.pending = None      # (resource, slot, access) when this is a work access to an aliased resource
        self.dmask = 0
        self.slot = None
        self.eidx = step.entry.index
        self.range = step.entry.range

    def signature(self):
        """Everything but the task identity (symmetry detection)."""
        return (self.label, self.block, self.moves, self.held, self.pdl, self.pending, self.eidx,
                self.range, self.slot)


@dataclass
class Program:
    kernel: object
    variant: Variant
    task_names: List[str]
    steps: List[List[XStep]]
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


def split_steps(kernel, xs: Sequence[ExpandedEntry]) -> List[XStep]:
    out = []
    for x in xs:
        r = kernel.resources.get(x.resource)
        if x.stage in (S.ConsumerWork, S.ProducerWork) and _split(r):
            out.append(XStep(x, 0, 2))
            out.append(XStep(x, 1, 2))
        else:
            out.append(XStep(x))
    return out


def _advance_on_wait(kernel, rid) -> bool:
    r = kernel.resources[rid]
    if r.pipeline.advance_on_wait is True:
        return True
    for t in kernel.tasks:    # the manager sets it for split consumers (wait without release)
        if t.lowered is None:
            continue
        stages = {e.stage for e in t.lowered.entries if e.resource == rid}
        grp = r.group
        if grp is not None:
            stages |= {e.stage for e in t.lowered.entries if e.resource == grp}
        if S.ConsumerWait in stages and S.ConsumerRelease not in stages:
            return True
    return False


class _Cursors:
    """Per-task pipeline cursors of one resource (model.md §5.2-5.3), for slots."""

    def __init__(self, kernel, task, rid):
        r = kernel.resources[rid]
        self.S = r.pipeline.num_stages
        self.st = strides(r)
        self.aoa = r.pipeline.advance_on_acquire is True
        self.aow = _advance_on_wait(kernel, rid)
        lanes = [lane_info(task, r, role)[1] for role in range(4)]
        self.P = lanes[1] if not self.aoa else lanes[0]
        self.Q = lanes[1]
        self.C = lanes[2] if not self.aow else lanes[2]
        self.R = lanes[3]
        self.last_acq = None
        self.work_stage = None

    def step(self, stage) -> int:
        S_ = self.S
        if stage is S.ProducerAcquire:
            slot = self.P
            if self.aoa:
                self.last_acq = slot
                self.P = (self.P + self.st[0]) % S_
            return slot
        if stage is S.ProducerTryAcquire:
            return self.P
        if stage in (S.ProducerWork, S.ProducerAuxWork):
            if self.aoa:
                return self.last_acq if self.last_acq is not None else self.Q
            return self.P
        if stage is S.ProducerCommit:
            if self.aoa:
                slot = self.Q
                self.Q = (self.Q + self.st[1]) % S_
            else:
                slot = self.P
                self.P = (self.P + self.st[1]) % S_
            return slot
        if stage is S.ConsumerTryWait:
            return self.C
        if stage is S.ConsumerWait:
            slot = self.C
            if self.aow:
                self.work_stage = slot
                self.C = (self.C + self.st[2]) % S_
            return slot
        if stage in (S.ConsumerWork, S.ConsumerAuxWork):
            if self.aow:
                return self.work_stage if self.work_stage is not None else self.R
            return self.C
        if stage is S.ConsumerRelease:
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


def compile_program(kernel, variant: Variant, tiles: int) -> Program:
    res = kernel.resources
    xlists, counts = task_lists(kernel, variant, tiles)
    steps = [split_steps(kernel, xs) for xs in xlists]
    for t in kernel.tasks:
        if t.lowered is None:
            continue
        for e in t.lowered.entries:
            if e.guard is UNKNOWN or e.resource not in res:
                raise Unknown(f"task '{t.name}': an entry is unknown")
    credits = CreditModel(kernel, steps, mode="checker")
    alias, pairs = alias_table(kernel)
    aliased = frozenset(r for p in pairs for r in p)
    for rid in aliased:
        r = res[rid]
        if r.pipeline is not None and r.pipeline.pipeline_type is UNKNOWN:
            raise Unknown(f"pipeline type of '{r.label}' is unknown")

    def ptype(rid):
        r = res.get(rid)
        return r.pipeline.pipeline_type if r is not None and r.pipeline is not None else None

    dma = {rid for rid in aliased if tracked(res[rid]) and ptype(rid) in DMA_CONSUMERS}
    # completion waits: a task reading DMA resource S and producing Umma* resource R
    sources_of: Dict[int, tuple] = {}
    completion: set = set()
    for ti, t in enumerate(kernel.tasks):
        srcs = tuple(sorted(s for s in t.src if s in dma))
        sources_of[ti] = srcs
        if srcs:
            completion |= {r for r in t.dst if tracked(res.get(r)) and ptype(r) in COMPLETION_PRODUCERS}

    ops: List[List[Op]] = []
    for ti, (t, tsteps) in enumerate(zip(kernel.tasks, steps)):
        cursors: Dict[int, _Cursors] = {}

        def cur(rid):
            c = cursors.get(rid)
            if c is None:
                c = cursors[rid] = _Cursors(kernel, t, rid)
            return c

        commits: Dict[int, int] = {}
        waits: Dict[int, int] = {}
        tops = []
        for pos, st in enumerate(tsteps):
            rid, stage = st.resource, st.stage
            r = res[rid]
            op = Op(ti, pos, st, f"{stage.value}({r.label})")
            eff = credits.effects[ti][pos]
            op.block = eff.block_pool
            op.moves = eff.moves
            for mv in eff.moves:
                if mv.delta < 0:
                    op.dmask |= 1 << mv.pool
            held = []
            if r.kind is ResourceKind.PDL_WAIT and stage is S.ConsumerWork:
                op.pdl = PDL_WAIT
            elif r.kind is ResourceKind.PDL_LAUNCH and stage is S.ProducerWork:
                op.pdl = PDL_LAUNCH
            if r.is_group:
                mode = r.group_mode
                members = [m for m in r.members if tracked(res.get(m))]
                if mode is PipelineGroupMode.Fork and stage is S.ProducerCommit:
                    for m in members:
                        cur(m).step(stage)
                        if m in completion and sources_of[ti]:
                            commits[m] = commits.get(m, 0) + 1
                            held.append((TAG, m, commits[m], sources_of[ti]))
                elif mode in (PipelineGroupMode.Merge, PipelineGroupMode.FusedMerge) and stage is S.ConsumerRelease:
                    for m in members:
                        slot = cur(m).step(stage)
                        if m in aliased and m not in dma:
                            held.append((REL, m, slot))
                elif mode is PipelineGroupMode.FusedMerge and stage in (S.ConsumerWait, S.ConsumerTryWait):
                    for m in members:
                        slot = cur(m).step(stage)
                        if stage is S.ConsumerWait:
                            if m in aliased:
                                held.append((WAIT, m, slot))
                            if m in completion:
                                waits[m] = waits.get(m, 0) + 1
                                held.append((CLEAR, m, waits[m]))
            elif tracked(r):
                slot = cur(rid).step(stage)
                op.slot = slot
                al = rid in aliased
                if stage is S.ProducerAcquire and al:
                    held.append((ACQ, rid, slot, rid in dma))
                elif stage is S.ProducerWork and al:
                    held.append((PWORK, rid, slot))
                    op.pending = (rid, slot, PROD)
                elif stage is S.ProducerCommit and rid in completion and sources_of[ti]:
                    commits[rid] = commits.get(rid, 0) + 1
                    held.append((TAG, rid, commits[rid], sources_of[ti]))
                elif stage is S.ConsumerWait:
                    if al:
                        held.append((WAIT, rid, slot))
                    if rid in completion:
                        waits[rid] = waits.get(rid, 0) + 1
                        held.append((CLEAR, rid, waits[rid]))
                elif stage is S.ConsumerWork and al:
                    held.append((CWORK, rid, slot))
                    op.pending = (rid, slot, CONS)
                elif stage is S.ConsumerRelease and al and rid not in dma:
                    held.append((REL, rid, slot))
            elif st.nparts == 2 and rid in aliased:
                access = PROD if stage is S.ProducerWork else (PROD_C if st.part == 0 else CONS)
                nxt = tsteps[pos + 1] if pos + 1 < len(tsteps) else None
                end = not (nxt is not None and nxt.resource == rid and nxt.nparts == 2)
                held.append((UWORK, rid, access, end))
                op.pending = (rid, -1, access)
                op.slot = -1
            op.held = tuple(held)
            tops.append(op)
        ops.append(tops)

    layout = Layout(len(kernel.tasks), len(credits.pools), len(credits.counters))
    prog = Program(kernel=kernel, variant=variant, task_names=[t.name for t in kernel.tasks],
                   steps=steps, ops=ops, credits=credits, layout=layout, counts=counts,
                   alias=alias, aliased=aliased, alias_pairs=pairs,
                   pdl_initial=bool(kernel.options.assume_pdl_wait_completed), tiles=tiles)
    prog.has_pdl_launch = any(op.pdl == PDL_LAUNCH for tops in ops for op in tops)
    return prog
