"""What one checker run (one variant) is made of: flat per-task op arrays.

`Op` holds everything the search needs per step, computed once by compile.py: the credit
pool it blocks on and the credit moves (credits.py), the pipeline slot it touches, the
held-state micro-actions (state.py), the pending memory access it is about to make,
whether it is a PDL wait or launch, and the facts the partial-order reduction uses
(reduce.py). Reporting-only facts (labels, ranges) are made lazily. Also here: the alias
table, the pipeline cursors and the step-class constants compile.py shares.
"""
from __future__ import annotations

from operator import attrgetter
from typing import Dict, List, Optional, Sequence, Tuple

from ..enums import LoopGuard, PipelineGroupMode, PipelineType, ScheduleStage
from ..model.derive import split_consumer_tasks
from ..model.kernel import ResourceKind
from ..model.values import is_static_int
from .credits import DENSE_LANE, CreditModel, Move, lane_info, strides
from .expand import ExpandedEntry, IterationCount, Variant
from .state import Layout

__all__ = ["Op", "Program", "alias_table", "XStep", "split_steps"]

S = ScheduleStage
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
_PDL_WAIT_KIND, _PDL_LAUNCH_KIND, _GROUP = ResourceKind.PDL_WAIT, ResourceKind.PDL_LAUNCH, ResourceKind.GROUP
_Fork, _Merge, _FusedMerge = PipelineGroupMode.Fork, PipelineGroupMode.Merge, PipelineGroupMode.FusedMerge
_Always = LoopGuard.Always
_launch = attrgetter("launch")
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
    effect, held actions) share one Op object.

    Only what the search reads is stored; what reporting reads is derived on use
    (`label`, made from the entry and the kernel's resources and then kept; `range`,
    `block`, `moves`, `effect`): a check compiles every step of every run, and most
    checks report nothing."""
    __slots__ = ("_label", "_res", "_eff", "_offs", "held", "pdl", "dmask", "slot", "eidx",
                 "entry", "part", "nparts", "_sig", "bidx", "pend", "launch", "vis", "loud", "simple",
                 "rest", "noop", "trail")

    def __init__(self, entry, part, res, eff, pdl, held, pend, slot, einfo, nparts=1, offs=None):
        """`eff`: the StepCredit, or None when `offs` (the state layout's credit and
        total offsets) gives `block` and `moves` from `einfo`. `pend`: (resource, slot,
        access, entry index) of a work access to an aliased resource, else None."""
        self.entry = entry
        self.part = part
        self.nparts = nparts
        self._res = res
        self._eff = eff
        self._offs = offs
        # for the search (explore.py), with the state layout's offsets: the state index
        # of the pool it blocks on, its effect on the state, its pending access
        bidx, simple, rounds, dmask = einfo
        self.bidx = bidx
        self.dmask = dmask
        self.held = held
        self.pdl = pdl
        self.slot = slot
        eidx = self.eidx = entry.index
        # the step's effect on the state for the search's inner loop: single-participant
        # moves, and None or (shared rounds, PDL wait, held micro-actions, entry index), as
        # most steps only move single-participant credits (two attributes, not a pair: a
        # check makes an Op for every distinct step, and each tuple counts for the GC)
        pdl_wait = pdl == PDL_WAIT
        rest = self.rest = (rounds, pdl_wait, held, eidx) if rounds or pdl_wait or held else None
        self.simple = simple
        # a step that changes nothing (no move, held action, PDL flag or pending access): a
        # try-acquire, a try-wait, work on a resource nothing aliases (causal.py skips it)
        self.noop = not simple and rest is None and pend is None
        # for the partial-order reduction (reduce.py): whether the step is a launch, whether
        # a task about to run it is observed (a pending access or a launch), and whether
        # running it is observed (that, or a held-state or PDL effect)
        launch = self.launch = pdl == PDL_LAUNCH
        self.pend = pend
        if pend is None:
            self.vis = launch
            self.loud = bool(held or pdl)
            # for the search's macro-steps (explore.MacroSteps): a *trailing* step can run
            # as part of the step before it: it never blocks, only adds credits to single-
            # participant pools, and nothing observes it
            self.trail = bidx < 0 and rest is None and not launch and dmask == 0
        else:
            self.vis = self.loud = True
            self.trail = False

    @property
    def range(self):
        return self.entry.range

    @property
    def step(self) -> tuple:
        """(simple, rest): the two parts of the step's transition (`effect`)."""
        return self.simple, self.rest

    @property
    def pending(self) -> Optional[tuple]:
        """(resource, slot, access) when this is a work access to an aliased resource (`pend`
        without the entry index)."""
        p = self.pend
        return p[:3] if p is not None else None

    @property
    def block(self) -> int:
        """The pool the step blocks on (-1: never blocks)."""
        if self._eff is not None:
            return self._eff.block_pool
        return self.bidx - self._offs[0] if self.bidx >= 0 else -1

    @property
    def moves(self) -> tuple:
        """The StepCredit's moves (Move tuples)."""
        if self._eff is not None:
            return self._eff.moves
        coff, toff = self._offs        # (made without one: one move, single or shared)
        rounds = self.rest[0] if self.rest is not None else ()
        return tuple([Move(k - coff, d, -1, 1) for k, d in self.simple] +
                     [Move(p - coff, d, t - toff, n) for t, n, p, d in rounds])

    @property
    def effect(self) -> tuple:
        """(simple moves, shared rounds, PDL wait, held micro-actions, entry index): the
        transition the search applies for the step (inlined in `explore.explore` and
        `explore._explore_one`): the task's cursor + 1, each simple move added to its
        pool, each round counter advanced modulo its size (adding to its pool when it
        wraps), the PDL flag set."""
        simple, rest = self.simple, self.rest
        return (simple,) + rest if rest is not None else (simple, (), False, (), self.eidx)

    @property
    def label(self) -> str:
        lbl = getattr(self, "_label", None)     # unset until first use
        if lbl is None:
            e = self.entry
            lbl = self._label = f"{e.stage._value_}({self._res[e.resource].label})"
        return lbl

    def signature(self):
        """Everything but the task identity (symmetry detection)."""
        sig = getattr(self, "_sig", None)        # unset until first use
        if sig is None:
            sig = self._sig = (self.label, self.block, self.moves, self.held, self.pdl, self.pending,
                               self.eidx, self.range, self.slot)
        return sig


def pdl_kind(kind, stage) -> int:
    """PDL_WAIT for a PdlWaitBarrier's work call (`wait_griddep`), PDL_LAUNCH for a
    PdlLaunchBarrier's (`launch_griddep`), else 0."""
    if kind is _PDL_WAIT_KIND and stage is _ConsumerWork:
        return PDL_WAIT
    if kind is _PDL_LAUNCH_KIND and stage is _ProducerWork:
        return PDL_LAUNCH
    return 0


def effect_info(eff, coff: int, toff: int) -> tuple:
    """(state index of the pool it blocks on or -1, ((index, delta), ...) of single-
    participant moves, ((total index, n, credit index, delta), ...) of shared rounds, mask
    of the pools it decrements) of one StepCredit, for a state layout's offsets."""
    block = coff + eff.block_pool if eff.block_pool >= 0 else -1
    if not eff.moves:
        return (block, (), (), 0)
    dmask = 0
    simple = []
    rounds = []
    for pool, delta, counter, n in eff.moves:
        if delta < 0:
            dmask |= 1 << pool
        if n == 1:
            simple.append((coff + pool, delta))
        else:
            rounds.append((toff + counter, n, coff + pool, delta))
    return (block, tuple(simple), tuple(rounds), dmask)


class Program:
    """One run: per task, its Op array (`ops`), with the credit pools, the state layout,
    the alias table and the variant. A run walked by linear.py has no Ops until they are
    read (`compile_ops` makes them: reports and counterexamples read them, the walk
    does not)."""

    def __init__(self, kernel, variant: Variant, task_names: List[str], ops: Optional[List[List[Op]]],
                 credits: CreditModel, layout: Layout, counts: List[IterationCount],
                 alias: Optional[Dict[tuple, tuple]] = None, aliased: frozenset = frozenset(),
                 alias_pairs: Optional[List[tuple]] = None, pdl_initial: bool = False,
                 has_pdl_launch: bool = False, tiles: int = 1, task_tables: Optional[dict] = None,
                 compile_ops=None):
        self.kernel = kernel
        self.variant = variant
        self.task_names = task_names
        self._ops = ops
        self._compile_ops = compile_ops
        self.credits = credits
        self.layout = layout
        self.counts = counts
        self.alias = alias if alias is not None else {}     # (rA, sideA, rB, sideB) -> (space, lo, hi)
        self.aliased = aliased
        self.alias_pairs = alias_pairs if alias_pairs is not None else []   # (rA, rB) for the printout
        self.pdl_initial = pdl_initial
        self.has_pdl_launch = has_pdl_launch
        self.tiles = tiles
        # per-task tables derived from an ops list (reduce.py), keyed by id of the list;
        # shared by the runs of one check, whose identical task lists are one object
        self.task_tables = task_tables if task_tables is not None else {}

    @property
    def ops(self) -> List[List[Op]]:
        ops = self._ops
        if ops is None:
            ops = self._ops = self._compile_ops()
        return ops

    @property
    def steps(self) -> List[list]:
        """Per task: (Entry, part, nparts) per step."""
        return [[(op.entry, op.part, op.nparts) for op in tops] for tops in self.ops]

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
    for part in (res.smem, res.tmem):
        for a in part:
            if names is not None and a.name not in names:
                continue
            off, size = a.offset, a.size
            if not ((type(off) is int or is_static_int(off)) and (type(size) is int or is_static_int(size))) \
                    or size <= 0:
                continue       # unknown layout: never claim an overlap
            out.append((a.space, off, off + size))
    return out


def _overlap(ra: List[tuple], rb: List[tuple]) -> Optional[tuple]:
    for sa, la, ha in ra:
        for sb, lb, hb in rb:
            if sa == sb and la < hb and lb < ha:
                return (sa, max(la, lb), min(ha, hb))
    return None


def alias_table(kernel) -> Tuple[Dict[tuple, tuple], List[tuple]]:
    """Role-aware overlaps between different resources, and the alias pairs."""
    res = [r for r in kernel.resources.values() if r.kind is not _GROUP and (r.smem or r.tmem)]
    table: Dict[tuple, tuple] = {}
    pairs = []
    if len(res) < 2 or (sum(1 for r in res if r.smem) < 2 and sum(1 for r in res if r.tmem) < 2):
        return table, pairs          # (no two resources with memory in one space)
    whole = [_ranges(r, None) for r in res]
    sides: Dict[tuple, List[tuple]] = {}     # (index, side) -> ranges, made for overlapping pairs

    def ranges(i, side):
        got = sides.get((i, side))
        if got is None:
            r = res[i]
            # a side without requirements accesses every allocation: the whole ranges
            names = r.producer_requirements if side == "producer" else r.consumer_requirements
            got = sides[(i, side)] = whole[i] if names is None else _ranges(r, side)
        return got

    for i, a in enumerate(res):
        wa = whole[i]
        for j in range(i + 1, len(res)):
            b = res[j]
            wb = whole[j]
            ov0 = _overlap(wa, wb)
            if ov0 is None:
                continue
            pairs.append((a.rid, b.rid))
            for sa in ("producer", "consumer"):
                ra = ranges(i, sa)
                for sb in ("producer", "consumer"):
                    rb = ranges(j, sb)
                    ov = ov0 if ra is wa and rb is wb else _overlap(ra, rb)
                    if ov is not None:
                        table[(a.rid, sa, b.rid, sb)] = ov
                        table[(b.rid, sb, a.rid, sa)] = ov
    return table, pairs


# ----------------------------------------------------------------------------- steps
def _split(res) -> bool:
    """Work on unpipelined, non-barrier resources is not atomic (two steps)."""
    return res is not None and res.pipeline is None and not res.is_barrier and res.kind is not _GROUP


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


def _advance_on_wait(kernel, rid) -> bool:
    """`advance_on_wait` as the runtime uses it (model/derive.py): the config's flag, or
    turned on by the manager for a split consumer, a task that waits on the resource (or
    its group) without releasing it."""
    return kernel.resources[rid].pipeline.advance_on_wait is True or bool(split_consumer_tasks(kernel, rid))


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
    if st[0] <= 1 and st[1] <= 1 and st[2] <= 1 and st[3] <= 1:
        # dense on every role: lane 0 (what `lane_info` gives; the CreditModel records none)
        return (r.pipeline.num_stages or 1, st, aoa, aow, 0, 0, 0, 0)
    lanes = []
    known = credits._lanes if credits is not None else None
    for role in range(4):
        info = known.get((ti, rid, role)) if known is not None else None
        if info is None:
            # the CreditModel records only roles with a stride above 1 (lane 0 otherwise)
            info = DENSE_LANE if st[role] <= 1 else lane_info(task, r, role, st)
        lanes.append(info[1])
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
