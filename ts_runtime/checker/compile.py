"""Compiling one checker run (one variant) into flat per-task op arrays.

`CompileContext` holds what does not depend on the variant (iteration counts, the credit
pools, the alias table, cursor parameters) and compiles each task's expanded list into
`program.Op`s; `compile_program` assembles one run's `program.Program`.

Most checks are of small kernels, where this compilation, not the search, is most of the
cost of a check: so the work per lowered entry is done once per check (`_template`), a
step costs a few list and dict look-ups, reporting-only facts are made lazily (`Op`), and
long unguarded loops are compiled up to the first repetition of their cursors
(`CompileContext._repeat`).
"""
from __future__ import annotations

from typing import Dict, List, Optional

from ..enums import OpaqueCondition, guard_fires
from ..model.lowered import HEAD, LOOP, TAIL
from ..model.values import UNKNOWN
from .credits import _ROLE_BY_ID, NO_CREDIT, CreditModel, Unknown, known_layout, tracked
from .expand import IterationCount, Variant, expand_task, iteration_count
from .program import (  # noqa: F401  (the step classes and stage constants compile reads)
    COMPLETION_PRODUCERS,
    DMA_CONSUMERS,
    Op,
    Program,
    _Always,
    _ConsumerRelease,
    _ConsumerTryWait,
    _ConsumerWait,
    _ConsumerWork,
    _Cursors,
    _Fork,
    _FusedMerge,
    _GROUP,
    _G_FORK,
    _G_REL,
    _G_WAIT,
    _Merge,
    _OTHER,
    _PDL_LAUNCH_KIND,
    _PDL_WAIT_KIND,
    _ProducerAcquire,
    _ProducerCommit,
    _ProducerWork,
    _TRACKED,
    _UWORK,
    _advance_on_wait,
    _cursor_params,
    _launch,
    _split,
    alias_table,
    effect_info,
    pdl_kind,
)
from .state import ACQ, CLEAR, CONS, CWORK, PROD, PROD_C, PWORK, REL, TAG, UWORK, WAIT, Layout

__all__ = ["CompileContext", "compile_program", "task_lists"]

_NO_INFO = (-1, (), (), 0)     # effect_info(NO_CREDIT, ...), whatever the offsets


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


class _SplitMap(dict):
    """rid -> `_split(resource)`, made on first look-up (a walked run asks for the
    resources its work calls touch only)."""
    __slots__ = ("res",)

    def __init__(self, res):
        super().__init__()
        self.res = res

    def __missing__(self, rid):
        v = self[rid] = _split(self.res[rid])
        return v


class CompileContext:
    """What compiling a kernel's runs needs that does not depend on the variant: iteration
    counts, the credit pools (one CreditModel for every run), the alias table, DMA and
    completion-wait resources, cursor parameters. One context serves all the runs of one
    `check_kernel` call; a task whose list is the same in two runs (no `skip_if`, no
    opaque guard that differs) is compiled once. Raises Unknown, in the order a single
    compile would.

    Per task, the facts of each lowered entry that do not depend on its position in the
    list (its template, see `_template`) are computed once, on the entry's first step, and
    kept in a list indexed by the entry's position: a step then costs a list index, not a
    lookup keyed on the entry. `alias`: the kernel's `alias_table`, when the caller has
    made it."""

    def __init__(self, kernel, alias: Optional[tuple] = None):
        self.kernel = kernel
        res = self.res = kernel.resources
        tasks = kernel.tasks
        self.counts: List[IterationCount] = []
        for t in tasks:
            cnt = iteration_count(t.lowered, 1)
            if cnt.n is None:
                raise Unknown(f"task '{t.name}': {cnt.reason}")
            self.counts.append(cnt)
        self.opaque = []          # per task: the opaque keys its guards use
        for t in tasks:
            keys = ()
            if t.lowered is not None:
                for e in t.lowered.entries:
                    g = e.guard
                    if g is None:
                        if e.resource not in res:
                            raise Unknown(f"task '{t.name}': an entry is unknown")
                        continue
                    if g is UNKNOWN or e.resource not in res:
                        raise Unknown(f"task '{t.name}': an entry is unknown")
                    if isinstance(g, OpaqueCondition) and g.key not in keys:
                        keys += (g.key,)
            self.opaque.append(keys)
        credits = self.credits = CreditModel(kernel, [[] for _ in tasks], mode="checker",
                                             layout=known_layout(kernel))
        self.alias, self.pairs = alias if alias is not None else alias_table(kernel)
        aliased = self.aliased = frozenset(r for p in self.pairs for r in p)
        for rid in aliased:
            r = res[rid]
            if r.pipeline is not None and r.pipeline.pipeline_type is UNKNOWN:
                raise Unknown(f"pipeline type of '{r.label}' is unknown")
        self.tracked = credits._tracked     # rid -> tracked(resource), for every resource
        self.split = _SplitMap(res)         # rid -> whether work on it is two steps

        def ptype(rid):
            r = res.get(rid)
            return r.pipeline.pipeline_type if r is not None and r.pipeline is not None else None

        self.dma = {rid for rid in aliased if self.tracked[rid] and ptype(rid) in DMA_CONSUMERS} if aliased else set()
        # completion waits: a task reading DMA resource S and producing Umma* resource R
        self.sources_of: Dict[int, tuple] = dict.fromkeys(range(len(tasks)), ())
        self.completion: set = set()
        if self.dma:
            for ti, t in enumerate(tasks):
                srcs = tuple(sorted(s for s in t.src if s in self.dma))
                self.sources_of[ti] = srcs
                if srcs:
                    self.completion |= {r for r in t.dst if tracked(res.get(r)) and ptype(r) in COMPLETION_PRODUCERS}
        self.params: Dict[tuple, tuple] = {}
        self.aow: Dict[int, bool] = {}
        self._memo: Dict[tuple, tuple] = {}
        self._tabs: list = [None] * len(tasks)    # per task: template per entry position
        self._ops: list = [{} for _ in tasks]     # per task: position-dependent Ops, memoised
        self._einfo: Dict[int, tuple] = {}        # id(StepCredit) -> effect_info
        self._keep: list = []                     # the StepCredits whose id() keys _einfo
        self.task_tables: dict = {}
        self.pdl_initial = bool(kernel.options.assume_pdl_wait_completed)
        self.task_names = [t.name for t in tasks]
        self._coff = len(tasks)
        self._toff = self._coff + len(credits.pools)
        self._offs = (self._coff, self._toff)      # for the Ops made without a StepCredit

    def cursors(self, ti, rid) -> _Cursors:
        key = (ti, rid)
        p = self.params.get(key)
        if p is None:
            aow = self.aow.get(rid)
            if aow is None:
                aow = self.aow[rid] = _advance_on_wait(self.kernel, rid)
            p = self.params[key] = _cursor_params(self.kernel, self.kernel.tasks[ti], rid, ti, self.credits, aow)
        return _Cursors(p)

    def list_key(self, ti: int, variant: Variant, tiles: int) -> tuple:
        """(key, lowered schedule, skip pattern) of task `ti`'s list in one run: runs with
        the same key run the same list (its skip pattern matters only with a `skip_if`,
        the assignment only on the opaque keys its guards use)."""
        low = self.kernel.tasks[ti].lowered
        skip = tuple(variant.skip) if low is not None and low.skip_if is not None else ()
        opaque = self.opaque[ti]
        if opaque:
            assign = variant.assignment or {}
            return (ti, tiles, skip, tuple(bool(assign.get(k, False)) for k in opaque)), low, skip
        return (ti, tiles, skip), low, skip

    def task(self, ti: int, variant: Variant, tiles: int) -> tuple:
        """(ops, whether one is a PDL launch) of task `ti` in one run (memoised per
        distinct list)."""
        key, low, skip = self.list_key(ti, variant, tiles)
        hit = self._memo.get(key)
        if hit is None:
            if low is None:
                hit = ([], False)
            else:
                pos, loops = _expand_positions(low, self.counts[ti].n, variant.assignment, tiles, skip)
                hit = self._compile_task(ti, low.entries, pos, loops)
            self._memo[key] = hit
        return hit

    def _info(self, eff) -> tuple:
        info = self._einfo.get(id(eff))
        if info is None:
            info = self._einfo[id(eff)] = effect_info(eff, self._coff, self._toff)
            self._keep.append(eff)
        return info

    def _template(self, ti: int, e) -> tuple:
        """Per entry: what does not depend on the position in the list:
        (the Ops of a position-independent step or None, whether the Op is a function of
        the slot alone, resource, stage, credit effect, its effect_info, pdl, step class,
        group members, whether the occurrence number picks the pool). The effect and its
        info are None when the occurrence number picks the pool."""
        res = self.res
        rid, stage = e.resource, e.stage
        r = res[rid]
        kind = r.kind
        pdl = pdl_kind(kind, stage) if kind is _PDL_WAIT_KIND or kind is _PDL_LAUNCH_KIND else 0
        members = ()
        if kind is _GROUP:
            mode = r.group_mode
            members = tuple(m for m in r.members if self.tracked.get(m))
            if mode is _Fork and stage is _ProducerCommit:
                cls = _G_FORK
            elif (mode is _Merge or mode is _FusedMerge) and stage is _ConsumerRelease:
                cls = _G_REL
            elif mode is _FusedMerge and (stage is _ConsumerWait or stage is _ConsumerTryWait):
                cls = _G_WAIT
            else:
                cls = _OTHER
        elif self.tracked[rid]:
            cls = _TRACKED
        elif rid in self.aliased and self.split[rid] and (stage is _ConsumerWork or stage is _ProducerWork):
            cls = _UWORK
        else:
            cls = _OTHER
        nparts = 2 if (stage is _ConsumerWork or stage is _ProducerWork) and self.split[rid] else 1
        if id(stage) in _ROLE_BY_ID:
            credits = self.credits
            if credits.interleaved and credits._occ_matters(rid):
                return (None, False, rid, stage, None, None, pdl, cls, members, True)
            # the common case without its StepCredit (an Op derives `block` and `moves`
            # from its transition when it has none)
            eff = None
            info = credits.plain_info(rid, stage, self._coff, self._toff)
            if info is None:
                eff = credits.fixed_effect(ti, rid, stage)
                info = self._info(eff)
        else:
            # (CreditModel.fixed_effect of a step that is no pipeline role: no credit)
            eff, info = NO_CREDIT, _NO_INFO
        fixed = None
        if cls == _TRACKED and rid not in self.aliased and rid not in self.completion:
            # a pipelined resource no other resource aliases: its slot changes nothing the
            # search reads (no held access, no completion tag; the pool is fixed as the
            # occurrence does not pick it), so its steps are position-independent too. The
            # cursors are not stepped for it (the slot would only be shown, and is not).
            op = Op(e, 0, res, eff, pdl, (), None, None, info, nparts, self._offs)
            return ((op,), False, rid, stage, eff, info, pdl, cls, members, False)
        if cls == _OTHER:
            # no cursor, no held action, one effect: the same Op(s) at every position, in
            # every run of this check
            op = Op(e, 0, res, eff, pdl, (), None, None, info, nparts, self._offs)
            fixed = (op,) if nparts == 1 else (op, Op(e, 1, res, eff, pdl, (), None, None, info, nparts, self._offs))
        by_slot = cls == _TRACKED and rid not in self.completion
        return (fixed, by_slot, rid, stage, eff, info, pdl, cls, members, False)

    def _held(self, rid, stage, slot, eidx) -> tuple:
        """(held micro-actions, pending access (Op's `pend`)) of a step of entry `eidx` on a
        tracked resource, but for completion-wait tags."""
        if rid in self.aliased:
            if stage is _ProducerAcquire:
                return ((ACQ, rid, slot, rid in self.dma),), None
            if stage is _ProducerWork:
                return ((PWORK, rid, slot),), (rid, slot, PROD, eidx)
            if stage is _ConsumerWait:
                return ((WAIT, rid, slot),), None
            if stage is _ConsumerWork:
                return ((CWORK, rid, slot),), (rid, slot, CONS, eidx)
            if stage is _ConsumerRelease and rid not in self.dma:
                return ((REL, rid, slot),), None
        return (), None

    def _compile_task(self, ti: int, entries, positions: list, loops: list) -> tuple:
        """(ops, whether one is a PDL launch) of task `ti`'s list given as positions in
        `entries` (its lowered entries); `loops`: (start, body length, iterations) of the
        unguarded loops in it (see `_repeat`)."""
        tab = self._tabs[ti]
        if tab is None:
            self._tabs[ti] = [None] * len(entries)
        state = ({}, {}, {}, {}, [])       # cursors, commits, waits, occurrences, ops
        k = 0
        for start, length, n in loops:
            self._steps(ti, entries, positions, k, start, state)
            k = self._repeat(ti, entries, positions, start, length, n, state)
        self._steps(ti, entries, positions, k, len(positions), state)
        tops = state[4]
        return tops, any(map(_launch, tops))

    def _repeat(self, ti: int, entries, positions: list, start: int, length: int, n: int, state) -> int:
        """Compiles `n` iterations of the loop body `positions[start:start + length]`;
        returns the position after them.

        When every step of the body has a position-independent Op or an Op that is a
        function of its slot (`_template`), an iteration's Ops are a function of the
        pipeline cursors at its start, and nothing else it does matters later. The
        cursors' states then repeat with some period (at most the stage counts' lcm), and
        from the first repetition on the Ops of the cycle are copied instead of compiled:
        the same Op objects a step-by-step compilation would look up."""
        tab = self._tabs[ti]
        cursors, tops = state[0], state[4]
        body = positions[start:start + length]
        seen: Dict[tuple, int] = {}
        marks: List[int] = []    # per iteration from 1: len(tops) at its start
        shots: List[tuple] = []  # per iteration from 1: the cursors' states at its start
        mark0 = len(tops)
        for it in range(n):
            k = start + it * length
            if it == 1:
                if all(tab[j][0] is not None for j in body):
                    # position-independent Ops only: every iteration is the first one
                    tops.extend(tops[mark0:] * (n - 1))
                    return start + n * length
                if not all(tab[j][0] is not None or tab[j][1] for j in body):
                    break
            if it >= 1:
                shot = tuple((rid, c.P, c.Q, c.C, c.R, c.last_acq, c.work_stage) for rid, c in cursors.items())
                first = seen.get(shot)
                if first is not None:
                    period = it - first
                    full, part = divmod(n - it, period)
                    cycle = tops[marks[first - 1]:]
                    if full:
                        tops.extend(cycle * full)
                    if part:
                        tops.extend(cycle[:marks[first - 1 + part] - marks[first - 1]])
                    # the cursors after the last iteration: those at the start of iteration
                    # n, which is iteration first + part of the cycle
                    for rid, P, Q, C, R, last_acq, work_stage in shots[first - 1 + part]:
                        c = cursors[rid]
                        c.P, c.Q, c.C, c.R, c.last_acq, c.work_stage = P, Q, C, R, last_acq, work_stage
                    return start + n * length
                seen[shot] = it
                marks.append(len(tops))
                shots.append(shot)
            self._steps(ti, entries, positions, k, k + length, state)
        else:
            return start + n * length
        # a body with steps whose Ops depend on more than the slot: step by step
        self._steps(ti, entries, positions, start + length, start + n * length, state)
        return start + n * length

    def _steps(self, ti: int, entries, positions: list, k0: int, k1: int, state) -> None:
        """Compiles the steps `positions[k0:k1]` of task `ti`, appending their Ops to
        `state[4]` (the cursors, completion counts and occurrence counts of `state` are
        the task's, carried from step to step)."""
        aliased, dma, completion = self.aliased, self.dma, self.completion
        srcs = self.sources_of[ti]
        credits = self.credits
        res = self.res
        tab = self._tabs[ti]
        memo = self._ops[ti]
        cursors, commits, waits, occ, tops = state
        n_steps = len(positions)
        n_entries = len(entries)
        for k in range(k0, k1):
            j = positions[k]
            tm = tab[j]
            if tm is None:
                tm = tab[j] = self._template(ti, entries[j])
            if tm[0] is not None:
                tops.extend(tm[0])
                continue
            if tm[1]:
                # a tracked resource without completion tags: the Op is a function of
                # the slot (the cursor position)
                rid = tm[2]
                c = cursors.get(rid)
                if c is None:
                    c = cursors[rid] = self.cursors(ti, rid)
                slot = c.step(tm[3])
                key = slot * n_entries + j    # (j, slot) as an int (slots are >= -1): no tuple per step
                op = memo.get(key)
                if op is None:
                    e = entries[j]
                    held, pend = self._held(rid, tm[3], slot, e.index)
                    op = memo[key] = Op(e, 0, res, tm[4], tm[6], held, pend, slot, tm[5], 1, self._offs)
                tops.append(op)
                continue
            _, _, rid, stage, eff, einfo, pdl, cls, members, occ_matters = tm
            e = entries[j]
            if occ_matters:
                eff = credits._effect(ti, e, occ)
                einfo = self._info(eff)
            slot = None
            pending = None
            held = ()
            if cls == _TRACKED:
                c = cursors.get(rid)
                if c is None:
                    c = cursors[rid] = self.cursors(ti, rid)
                slot = c.step(stage)
                held, pending = self._held(rid, stage, slot, e.index)
                if rid in completion:
                    if stage is _ProducerCommit and srcs:
                        commits[rid] = commits.get(rid, 0) + 1
                        held = ((TAG, rid, commits[rid], srcs),)
                    elif stage is _ConsumerWait:
                        waits[rid] = waits.get(rid, 0) + 1
                        held = held + ((CLEAR, rid, waits[rid]),)
            elif cls == _UWORK:
                nxt = entries[positions[k + 1]] if k + 1 < n_steps else None
                end = not (nxt is not None and nxt.resource == rid and
                           (nxt.stage is _ConsumerWork or nxt.stage is _ProducerWork))
                for part in (0, 1):
                    okey = (j, part, end and part == 1)   # the write phase does not depend on `end`
                    op = memo.get(okey)
                    if op is None:
                        if stage is _ProducerWork:
                            access = PROD
                        else:
                            access = PROD_C if part == 0 else CONS
                        h = ((UWORK, rid, access, end if part else False),)
                        op = memo[okey] = Op(e, part, res, eff, pdl, h, (rid, -1, access, e.index), -1, einfo, 2,
                                             self._offs)
                    tops.append(op)
                continue
            elif cls != _OTHER:
                hl = []
                if cls == _G_FORK:
                    for m in members:
                        c = cursors.get(m)
                        if c is None:
                            c = cursors[m] = self.cursors(ti, m)
                        c.step(stage)
                        if m in completion and srcs:
                            commits[m] = commits.get(m, 0) + 1
                            hl.append((TAG, m, commits[m], srcs))
                elif cls == _G_REL:
                    for m in members:
                        c = cursors.get(m)
                        if c is None:
                            c = cursors[m] = self.cursors(ti, m)
                        sl = c.step(stage)
                        if m in aliased and m not in dma:
                            hl.append((REL, m, sl))
                else:   # _G_WAIT
                    for m in members:
                        c = cursors.get(m)
                        if c is None:
                            c = cursors[m] = self.cursors(ti, m)
                        sl = c.step(stage)
                        if stage is _ConsumerWait:
                            if m in aliased:
                                hl.append((WAIT, m, sl))
                            if m in completion:
                                waits[m] = waits.get(m, 0) + 1
                                hl.append((CLEAR, m, waits[m]))
                held = tuple(hl)
            okey = (j, id(eff), held, slot)
            op = memo.get(okey)
            if op is None:
                op = memo[okey] = Op(e, 0, res, eff, pdl, held, pending, slot, einfo, 1, self._offs)
            tops.append(op)


# Loops shorter than this are compiled step by step: the cycle search costs about a
# step's compilation per iteration and finds no cycle before the stage count.
_REPEAT_MIN = 8


def _expand_positions(low, n: int, assignment, tiles: int, skip: tuple) -> tuple:
    """The list of `expand_task(task, 1, assignment, tiles=tiles, skip=skip, n=n)`, as
    positions in `low.entries` (no per-step wrappers), and (start, body length, count) of
    every unguarded loop of `_REPEAT_MIN` or more iterations in it
    (`CompileContext._repeat`)."""
    entries = low.entries
    skip = list(skip) + [False] * (tiles - len(skip))

    def normal(idx):
        head, loop, tail = [], [], []
        for j in idx:
            sec = entries[j].section
            if sec == LOOP:
                loop.append(j)
            elif sec == HEAD:
                head.append(j)
            elif sec == TAIL:
                tail.append(j)
        out = head
        loops = ()
        if n > 0 and loop:
            guards = [entries[j].guard for j in loop]
            if all(g is None or g is _Always for g in guards):
                if n >= _REPEAT_MIN:
                    loops = ((len(out), len(loop), n),)
                out.extend(loop * n)
            else:
                for i in range(n):
                    for j, g in zip(loop, guards):
                        if g is None or g is _Always or guard_fires(g, i, n, opaque_assignment=assignment):
                            out.append(j)
        out.extend(tail)
        return out, loops

    def skipped(idx):
        return [j for j in idx if entries[j].section != LOOP and not entries[j].skippable]

    if tiles == 1 and not low.has_work_tile_loop:
        idx = range(len(entries))
        return (skipped(idx), []) if skip[0] else normal(idx)
    pre = [j for j, e in enumerate(entries) if e.pre_wtl]
    post = [j for j, e in enumerate(entries) if e.post_wtl]
    body = [j for j, e in enumerate(entries) if not e.pre_wtl and not e.post_wtl]
    out = pre
    loops = []
    norm = skp = None
    for t in range(tiles):
        if skip[t]:
            if skp is None:
                skp = skipped(body)
            out.extend(skp)
        else:
            if norm is None:
                norm, norm_loops = normal(body)
            loops.extend((len(out) + start, length, count) for start, length, count in norm_loops)
            out.extend(norm)
    out.extend(post)
    return out, loops


def compile_program(kernel, variant: Variant, tiles: int, ctx: Optional[CompileContext] = None) -> Program:
    """One run's Program. Pass the same `ctx` (CompileContext(kernel)) for every run of a
    check so that the kernel-level work is done once."""
    if ctx is None:
        ctx = CompileContext(kernel)
    ops = []
    launch = False
    for ti in range(len(kernel.tasks)):
        tops, has = ctx.task(ti, variant, tiles)
        ops.append(tops)
        launch = launch or has
    credits = ctx.credits
    # after compiling: the round counters are made as the effects that need them are
    layout = Layout(len(ops), len(credits.pools), len(credits.counters))
    return Program(kernel=kernel, variant=variant, task_names=ctx.task_names, ops=ops, credits=credits,
                   layout=layout, counts=ctx.counts, alias=ctx.alias, aliased=ctx.aliased,
                   alias_pairs=ctx.pairs, pdl_initial=ctx.pdl_initial, has_pdl_launch=launch, tiles=tiles,
                   task_tables=ctx.task_tables)
