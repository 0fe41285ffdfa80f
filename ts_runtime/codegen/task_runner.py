"""Lowering one task's flat schedule (head / loop / tail entries) to CuTe DSL code.

This is model.md §4 (runtime execution order) and §5 (pipeline state machine) written
as an emitter. All values that cross a region boundary live in one carried `State`
(control.py):

    ("P"|"Q", rid)  producer acquire / commit cursor (index, phase)     §5.1, §5.3
    ("C"|"R", src)  consumer wait / release cursor, src = state owner  §5.3, §5.7
    ("PW", rid) / ("W", src)  stage recorded by a split-advancing acquire / wait
    ("TA", rid) / ("TW", rid)  status of the last try_acquire / try_wait
    ("in", rid, side, name)   routed input store (most recent writer wins)  §3.4
    ("out", rid, var)         work output read by an opaque guard
    ("out", wq, "work_tile"), ("sched", wq)  the persistent tile and its scheduler
    "iter", "last"            iteration counter (Every) / last visited offset (tail)

Cursor state is per task: every task keeps its own copy of each cursor, exactly as the
checkers model it.
"""
from __future__ import annotations

import inspect

import cutlass
import cutlass.cute as cute

from ..enums import (
    FIRST_ITER, LAST_ITER, Every, OpaqueCondition, PipelineGroupMode, PipelineType,
    ScheduleStage as S, SignalingThreads,
)
from ..model import derive
from ..model.lowered import HEAD, LOOP, TAIL
from ..model.values import UNKNOWN, DynamicBound, is_static_int
from ..resources import StageInfo, TaskLocalVariable, WorkQueue
from . import work_queue as wqmod
from .carry import is_traced
from .control import (
    Boolean, Int32, State, as_int32, dyn_for, dyn_if, dyn_while, if_then, logical_and,
    logical_not, static_value, unsupported,
)

__all__ = ["run_task", "emit_task"]

_MISSING = object()      # restore_attrs: a field the object did not have before the task

PRODUCER_SIDE = frozenset({S.ProducerTryAcquire, S.ProducerAcquire, S.ProducerCommit, S.ProducerWork,
                           S.ProducerAuxWork})


def run_task(task):
    """`Task.run()`: emit the task body (warp selection is done by `TaskManager.run()`)."""
    ctx = getattr(task, "_ts_ctx", None)
    if ctx is None:
        raise RuntimeError(f"Task '{task.name}' was run outside TaskManager.run()")
    emit_task(task, ctx)


def emit_task(task, ctx):
    em = TaskEmitter(task, ctx)
    wqmod._ACTIVE.append(em)
    try:
        em.emit()
    finally:
        wqmod._ACTIVE.pop()
        em.restore_attrs()


class Cursor:
    """(index, phase) of one pipeline cursor, read from / written to the carried state."""

    def __init__(self, state: State, key, stages: int):
        self.state, self.key, self.stages = state, key, stages

    @property
    def index(self):
        return self.state[(self.key, "i")]

    @property
    def phase(self):
        return self.state[(self.key, "p")]

    def advance(self, k: int = 1):
        idx = self.index + k
        wrap = Int32(idx >= self.stages)
        self.state[(self.key, "i")] = idx - wrap * self.stages
        self.state[(self.key, "p")] = self.phase ^ wrap


def _default_of(tlv):
    if not isinstance(tlv, TaskLocalVariable):
        return None
    from ..resources import _NO_DEFAULT
    value = tlv.default if tlv.default is not _NO_DEFAULT else tlv.default_factory()
    dtype = tlv.dtype
    if isinstance(value, (bool, int, float)) and isinstance(dtype, type) and issubclass(dtype, cutlass.Numeric):
        value = dtype(value)
    return value


class TaskEmitter:
    def __init__(self, task, ctx):
        self.task = task
        self.ctx = ctx
        self.kernel = ctx.kernel
        self.model = task.model
        self.low = task.model.lowered
        self.objects = ctx.objects
        self.state = State()
        self.entries = list(self.low.entries)
        self.by_index = {e.index: e for e in self.entries}
        self.routes_from: dict = {}
        for r in self.low.routes:
            self.routes_from.setdefault(r.writer, []).append(r)
        self.routes_to: dict = {}
        for r in self.low.routes:
            self.routes_to.setdefault(r.reader, []).append(r)
        self.warp = getattr(task, "_ts_warp", None)
        self.task_cache = task.make_task_cache()
        self.tile = None                  # current work tile (TileInfo)
        self.bounds = (0, None, 1)        # live (start, end, step) of the current tile
        self.wq = None

    # ------------------------------------------------------------------ model helpers
    def res(self, rid):
        return self.kernel.resources[rid]

    def obj(self, rid):
        return self.objects[rid]

    def pmodel(self, rid):
        return self.res(rid).pipeline

    def pipelined(self, rid) -> bool:
        return self.pmodel(rid) is not None

    def group_of(self, rid):
        g = self.res(rid).group
        return self.res(g) if g is not None else None

    def csrc(self, rid):
        """Owner of the consumer cursor: the group for Merge / FusedMerge members."""
        g = self.group_of(rid)
        if g is not None and g.group_mode in (PipelineGroupMode.Merge, PipelineGroupMode.FusedMerge):
            return g.rid
        return rid

    def wsrc(self, rid):
        """Owner of the wait cursor of `rid`. A Merge member that is waited on by itself
        while the group advances on wait owns its wait cursor: each member's wait moves its
        own cursor (one wait per member and round), the group's release moves the group's
        release cursor `R` once per round. Otherwise the consumer-cursor owner (`csrc`)."""
        src = self.csrc(rid)
        if src != rid and self.res(src).group_mode is PipelineGroupMode.Merge and self.advance_on_wait(src):
            return rid
        return src

    def pipe(self, rid):
        """Live pipeline object of `rid` (a group: its first member's, which sees the shared side)."""
        o = self.obj(rid)
        if self.res(rid).is_group:
            return o.members[0].pipeline
        p = getattr(o, "pipeline", None)
        if p is None:
            raise RuntimeError(f"resource '{self.res(rid).label}' has no pipeline; was setup_resources_and_tasks() run?")
        return p

    def stages(self, rid) -> int:
        return self.pipe(rid).num_stages

    def stride(self, rid, role):
        s = derive.role_stride(self.pmodel(rid), role)
        if s is UNKNOWN:
            p = self.pmodel(rid)
            unsupported(f"'{self.res(rid).label}': interleave_stride must be a Python int for codegen",
                        p.at("interleave_stride") if p is not None else self.res(rid).range)
        return s

    def advance_on_acquire(self, rid) -> bool:
        return bool(self.pmodel(rid).advance_on_acquire)

    def advance_on_wait(self, src) -> bool:
        res = self.res(src)
        if res.is_group:        # the group's flag, or turned on for a split-consumer member
            return bool(res.pipeline.advance_on_wait) or any(
                derive.effective_advance_on_wait(self.kernel, m) is True for m in res.members)
        return bool(derive.effective_advance_on_wait(self.kernel, src))

    def lane(self, stride):
        if stride == 1:
            return 0
        mode = derive.lane_mode(self.model, stride)
        if mode == "warp":
            return self.warp - self.model.warp_idx
        if mode == "domain":
            return self.low.domain_start % stride
        unsupported(f"Task '{self.task.name}': cannot derive an interleave lane for stride {stride} (one warp "
                    "per lane, or a static int domain start with step == stride)", self.model.range)

    # ------------------------------------------------------------------ state setup
    def _declare_cursor(self, key, rid, stride, phase):
        start = self.lane(stride)
        self.state.declare((key, "i"), as_int32(start))
        self.state.declare((key, "p"), Int32(phase))

    def cursor(self, kind, rid) -> Cursor:
        return Cursor(self.state, (kind, rid), self.stages(rid))

    def setup_state(self):
        st = self.state
        producers, consumers, trya, tryw, waiters = set(), set(), set(), set(), set()
        for e in self.entries:
            if not self.pipelined(e.resource):
                continue
            if e.stage in PRODUCER_SIDE:
                if self.res(e.resource).is_group:       # Fork commit: every member's cursor
                    producers.update(self.res(e.resource).members)
                else:
                    producers.add(e.resource)
                if e.stage is S.ProducerTryAcquire:
                    trya.add(e.resource)
            else:
                consumers.add(self.csrc(e.resource))
                if e.stage in (S.ConsumerWait, S.ConsumerTryWait) and self.wsrc(e.resource) != self.csrc(e.resource):
                    waiters.add(e.resource)
                if e.stage is S.ConsumerTryWait:
                    tryw.add(e.resource)
        for rid in self.model.dst:
            if self.pipelined(rid) and not self.res(rid).is_group and not self.res(rid).is_work_queue:
                producers.add(rid)
        self.producers = sorted(producers, key=str)
        self.consumers = sorted(consumers, key=str)
        for rid in self.producers:
            self._declare_cursor(("P", rid), rid, self.stride(rid, "acquire"), 1)
            if self.advance_on_acquire(rid):
                self._declare_cursor(("Q", rid), rid, self.stride(rid, "commit"), 1)
                st.declare(("PW", rid), Int32(0))
        for src in self.consumers:
            self._declare_cursor(("C", src), src, self.stride(src, "wait"), 0)
            if self.advance_on_wait(src):
                self._declare_cursor(("R", src), src, self.stride(src, "release"), 0)
                st.declare(("W", src), Int32(0))
        # Merge members with their own wait cursor (see wsrc)
        self.member_waiters = sorted(waiters, key=str)
        for rid in self.member_waiters:
            g = self.csrc(rid)
            self._declare_cursor(("C", rid), rid, self.stride(g, "wait"), 0)
            st.declare(("W", rid), Int32(0))
        for rid in trya:
            st.declare(("TA", rid), Boolean(False))
        for rid in tryw:
            st.declare(("TW", rid), Boolean(False))
        # routed inputs, seeded with the writer's task-local default
        for r in self.low.routes:
            w, rd = self.by_index[r.writer], self.by_index[r.reader]
            key = ("in", rd.resource, "producer" if rd.stage.is_producer else "consumer", r.dest_arg)
            if key in st:
                continue
            st.declare(key, self._seed(w.resource, r.src_var, w.range))
        # outputs read by opaque guards
        for e in self.entries:
            g = e.guard
            if isinstance(g, OpaqueCondition) and g.resource is not None and g.result_name:
                key = ("out", g.resource, g.result_name)
                if key not in st:
                    st.declare(key, Boolean(self._seed(g.resource, g.result_name)))
        if "iter" not in st and any(isinstance(e.guard, Every) for e in self.entries):
            st.declare("iter", Int32(0))
        st.declare("last", Int32(0))
        self.bind_attrs()

    def bind_attrs(self):
        """Carries the DSL-number fields the task's resources' work methods reassign
        (`self.acc = self.acc + v`) through every region (State.bind_attr). The values
        before the task are put back once it is emitted (`restore_attrs`): the next task is
        emitted in another branch, where this task's values do not exist."""
        self._saved_attrs = []
        self._snapshots = []
        for rid in list(self.model.src) + list(self.model.dst):
            r = self.res(rid)
            if r is None or r.is_group or r.is_work_queue:
                continue
            obj = self.obj(rid)
            if hasattr(obj, "__dict__") and not any(o is obj for o, _ in self._snapshots):
                self._snapshots.append((obj, dict(vars(obj))))
        for obj, name, key in self._written_attrs():
            value = getattr(obj, name, None)
            if key not in self.state and isinstance(value, cutlass.Numeric):
                self._saved_attrs.append((obj, name, value))
                self.state.bind_attr(key, obj, name)

    def bind_region_attrs(self, entries) -> list:
        """Before a loop region (the work-tile `while`, the domain `for`): carries through
        it the fields that the work calls among `entries` (the region's body) assign and
        that are not carried yet: a DSL number the entries before the region made (a field
        `__init__` left None and an init work call set, `self.scale_d =
        cutlass.Boolean(False)`), or a Python bool / int / float, turned into a Boolean /
        Int32 / Float32 first when the kernel is compiled with cute.FrontendNext, which does
        the same with a Python value a loop body updates (`self.scale_d = False` per tile,
        `True` after the first MMA; plain `cute.compile` keeps Python values as they are):
        traced once, the body would otherwise read the value from before the loop on every
        iteration.
        Returns the keys bound, for `State.unbind` once the region is closed: the state of
        an enclosing region must not change while it is open."""
        written = set()
        for e in entries:
            if e.label and (e.stage is S.ProducerWork or e.stage is S.ConsumerWork):
                r = self.res(e.resource)
                wm = r.work_methods.get(e.label) if r is not None and not r.is_group else None
                if wm is not None:
                    written.update((e.resource, n) for n in (getattr(wm, "writes", ()) or ()))
        keys = []
        promote = frontend_next() if written else False
        for rid, name in sorted(written, key=lambda x: (str(x[0]), x[1])):
            key = ("attr", rid, name)
            r = self.res(rid)
            if key in self.state or r is None or r.is_work_queue:
                continue
            obj = self.obj(rid)
            value = getattr(obj, name, None)
            if isinstance(value, (bool, int, float)) and not promote:
                continue
            if isinstance(value, bool):
                object.__setattr__(obj, name, Boolean(value))
            elif isinstance(value, int):
                object.__setattr__(obj, name, Int32(value))
            elif isinstance(value, float):
                object.__setattr__(obj, name, cutlass.Float32(value))
            elif not isinstance(value, cutlass.Numeric):
                continue
            self.state.bind_attr(key, obj, name)
            keys.append(key)
        return keys

    def _written_attrs(self):
        """(object, field name, state key) of every field a work method of the task's
        resources assigns (model: WorkMethod.writes)."""
        out = []
        for rid in list(self.model.src) + list(self.model.dst):
            r = self.res(rid)
            if r is None or r.is_group or r.is_work_queue:
                continue
            obj = self.obj(rid)
            names = set()
            for wm in r.work_methods.values():
                names |= set(getattr(wm, "writes", ()) or ())
            out.extend((obj, name, ("attr", rid, name)) for name in sorted(names))
        return out

    def restore_attrs(self):
        """Puts back the carried fields, then every other field the task's work methods
        set to a DSL value: a field that held None or a Python value before the task (a
        dataclass `field(default=None)` first set by a work method) and now holds a value
        made inside this task's branch. That value does not exist in the next task's
        branch; left in place, a later region would carry it and the IR would not verify
        ("operand does not dominate this use"). Python values a task sets are left (they
        are compile-time constants, valid in every branch)."""
        for obj, name, value in getattr(self, "_saved_attrs", ()):
            setattr(obj, name, value)
        for obj, before in getattr(self, "_snapshots", ()):
            for name, value in list(vars(obj).items()):
                old = before.get(name, _MISSING)
                if old is value or not is_traced(value):
                    continue
                if old is _MISSING:
                    delattr(obj, name)
                else:
                    object.__setattr__(obj, name, old)

    def _seed(self, rid, var, where=None):
        o = self.obj(rid)
        if isinstance(o, WorkQueue):
            if var == "work_tile":
                return self.state[("out", rid, "work_tile")] if ("out", rid, "work_tile") in self.state \
                    else wqmod.block_tile()
            if var == "skip_work_tile":
                return Boolean(False)
        value = _default_of(getattr(o, var, None))
        if value is None:
            from ..diagnostics import raise_finding
            raise_finding("TS327", ValueError, f"routed source var '{var}' is not in '{self.res(rid).label}' "
                          "consumer_vars (no TaskLocalVariable with a default value to seed its slot)",
                          where or self.res(rid).range)
        return value

    # ------------------------------------------------------------------ emission
    def emit(self):
        low = self.low
        if low.has_work_tile_loop and low.work_queue is not None:
            self.wq = self.obj(low.work_queue)
            sched = wqmod.create_tile_scheduler(self.wq)
            self.state.declare(wqmod.scheduler_key(self.wq), sched)
            self.state.declare(("out", low.work_queue, "work_tile"), wqmod.initial_tile(sched))
        self.setup_state()
        head = [e for e in self.entries if e.section == HEAD]
        loop = [e for e in self.entries if e.section == LOOP]
        tail = [e for e in self.entries if e.section == TAIL]
        if self.wq is None:
            self.tile = wqmod.block_tile()
            self.set_bounds()
            self.run_entries(head, 0)
            self.emit_loop(loop, tail)
            self.run_entries(tail, self.state["last"])
        else:
            self.emit_persistent(head, loop, tail)
        self.drain()

    def emit_persistent(self, head, loop, tail):
        low, st = self.low, self.state
        wq_rid = low.work_queue
        tile_key = ("out", wq_rid, "work_tile")
        pre = [e for e in head if e.pre_wtl]
        post = [e for e in tail if e.post_wtl]
        head = [e for e in head if not e.pre_wtl]
        tail = [e for e in tail if not e.post_wtl]
        self.tile = st[tile_key]
        self.set_bounds(dynamic=False)      # the tile may be invalid: no get_domain() here
        self.run_entries(pre, 0)
        local = self.bind_region_attrs(head + loop + tail)
        skip_fn = self._skip_callable()

        def cond():
            return st[tile_key].is_valid_tile

        def body():
            self.tile = st[tile_key]
            self.set_bounds()
            skip = False
            if skip_fn is not None:
                skip = skip_fn(self.tile)
                skip = Boolean(skip) if not isinstance(skip, bool) else skip
                if ("out", wq_rid, "skip_work_tile") in st:
                    st[("out", wq_rid, "skip_work_tile")] = skip
            run = logical_not(skip) if skip is not False else True
            self.run_entries(head, 0, run)
            dyn_if(st, run, lambda: self.emit_loop(loop, tail))
            self.run_entries(tail, st["last"], run)
        dyn_while(st, cond, body)
        st.unbind(local)
        self.tile = st[tile_key]
        self.set_bounds(dynamic=False)
        self.run_entries(post, 0)

    def _skip_callable(self):
        if self.low.skip_if is None:
            return None
        node = None
        for n in self.task.schedule.model.body:
            if getattr(n, "kind", "") == "work_tile_loop":
                node = n
        fn = getattr(node, "skip_if_callable", None)
        if fn is None:
            return None
        wq = self.wq
        desc = self.low.skip_if
        if desc.kind == "bound_method":
            return lambda tile: fn(tile)
        if desc.kind == "unbound_method":
            return lambda tile: fn(wq, tile)
        if desc.arity == 2:
            return lambda tile: fn(wq, tile)
        return lambda tile: fn(tile)

    def set_bounds(self, dynamic: bool = True):
        """Live (start, end, step) of the domain loop for the current tile (a dynamic
        end is only evaluated when `dynamic`; otherwise it is None)."""
        node = None
        for n in _walk_blocks(self.task.schedule.model.body):
            if n.kind == "domain_loop":
                node = n
                break
        if node is None:
            self.bounds = (0, 0, 1)
            return
        live = getattr(node, "live_bounds", None)
        if live is None:
            live = tuple(b for b in (node.start, node.end, node.step))
            start, end, step = live
        elif len(live) == 1:
            start, end, step = 0, live[0], 1
        elif len(live) == 2:
            start, end, step = live[0], live[1], 1
        else:
            start, end, step = live
        if callable(end) and not hasattr(end, "ir_value"):
            if not dynamic:
                end = None
            else:
                end = end(self.task, self.tile.tile_idx) if not inspect.ismethod(end) else end(self.tile.tile_idx)
        if isinstance(end, DynamicBound):
            raise NotImplementedError("dynamic domain bound without a live callable")
        self.bounds = (start, end, step)

    def emit_loop(self, loop, tail):
        local = self.bind_region_attrs(loop)
        try:
            self._emit_loop(loop, tail)
        finally:
            self.state.unbind(local)

    def _emit_loop(self, loop, tail):
        st = self.state
        start, end, step = self.bounds
        if "iter" in st:
            st["iter"] = Int32(0)
        st["last"] = as_int32(start) - as_int32(step)
        if not loop and not tail:
            return
        sstep = static_value(step)
        negative = sstep is not None and sstep < 0
        groups = _guard_groups(loop)

        def iteration(iv, is_last=None):
            for guard, ents in groups:
                cond = self.guard_cond(guard, iv, end, step, negative, is_last)
                dyn_if(st, cond, lambda ents=ents: self.run_entries(ents, iv))
            if "iter" in st:
                st["iter"] = st["iter"] + 1
            st["last"] = iv

        def track_last(iv, is_last=None):
            st["last"] = iv
        # without loop entries only the tail's loop_offset (start + (n - 1) * step) is needed
        body = iteration if loop else track_last
        if sstep is None:
            # a runtime step may have either sign: count k = 0..n-1 over the trip count
            # n = ceil((end - start) / step) (0 when the range is empty) and visit start + k * step
            s0, e0, d = as_int32(start), as_int32(end), as_int32(step)
            sign = Int32(1) - Int32(d < 0) * 2
            span, mag = (e0 - s0) * sign, d * sign
            n = (span * Int32(span > 0) + mag - 1) // mag
            dyn_for(st, 0, n, 1, lambda k: body(s0 + k * d, lambda: k == n - 1),
                    unroll=self.low.unroll if loop else None)
            return
        if negative:
            # scf.for needs a positive step: count k = 0..n-1 and visit start + k * step
            s0, e0 = as_int32(start), as_int32(end)
            span = s0 - e0 + (-sstep - 1)
            n = span // (-sstep)
            dyn_for(st, 0, n, 1, lambda k: body(s0 + k * sstep), unroll=self.low.unroll if loop else None)
            return
        dyn_for(st, start, end, step, body, unroll=self.low.unroll if loop else None)

    def guard_cond(self, guard, iv, end, step, negative, is_last=None):
        if guard is None:
            return True
        if guard is FIRST_ITER:
            return iv == as_int32(self.bounds[0])
        if guard is LAST_ITER:
            if is_last is not None:
                return is_last()
            nxt = iv + as_int32(step)
            return nxt <= as_int32(end) if negative else nxt >= as_int32(end)
        if isinstance(guard, Every):
            it = self.state["iter"]
            if guard.period == 1:
                return it >= guard.start if guard.start else True
            c = ((it - guard.start) % guard.period) == 0
            return logical_and(it >= guard.start, c) if guard.start else c
        if isinstance(guard, OpaqueCondition):
            if guard.resource is None or not guard.result_name:
                return not guard.negated
            v = self.state[("out", guard.resource, guard.result_name)]
            return logical_not(v) if guard.negated else v
        raise NotImplementedError(f"guard {guard!r}")

    def run_entries(self, entries, loop_offset, run=True):
        """Runs `entries` in order; skippable ones only when `run` (tile not skipped)."""
        i = 0
        while i < len(entries):
            e = entries[i]
            if e.skippable and run is not True:
                j = i
                while j < len(entries) and entries[j].skippable:
                    j += 1
                chunk = entries[i:j]
                dyn_if(self.state, run, lambda chunk=chunk: [self.run_entry(x, loop_offset) for x in chunk])
                i = j
                continue
            self.run_entry(e, loop_offset)
            i += 1

    # ------------------------------------------------------------------ one entry
    def run_entry(self, e, loop_offset):
        rid = e.resource
        stage = e.stage
        if stage.is_work or stage.is_aux:
            self.call_work(e, loop_offset)
            return
        if not self.pipelined(rid):
            return          # ordering-only brackets on unpipelined resources
        if self.pmodel(rid).pipeline_type is PipelineType.ClcFetchAsync and stage in (
                S.ProducerTryAcquire, S.ConsumerTryWait):
            return
        {S.ProducerTryAcquire: self.op_try_acquire, S.ProducerAcquire: self.op_acquire,
         S.ProducerCommit: self.op_commit, S.ConsumerTryWait: self.op_try_wait,
         S.ConsumerWait: self.op_wait, S.ConsumerRelease: self.op_release}[stage](e)

    def _gate(self, rid, flags_attr):
        """CtaLeader: only CTAs with rank % V == 0 signal (V = cta_layout_vmnk[0])."""
        p = self.pmodel(rid)
        v = derive.cluster_v(p)
        flags = getattr(p, flags_attr)
        if not isinstance(flags, SignalingThreads) or not (flags & SignalingThreads.CtaLeader) \
                or not is_static_int(v) or v <= 1:
            return True
        rank = cute.arch.make_warp_uniform(cute.arch.block_idx_in_cluster())
        return (rank % v) == 0

    def op_try_acquire(self, e):
        rid = e.resource
        P = self.cursor("P", rid)
        self.state[("TA", rid)] = self.pipe(rid).try_wait_empty(P.index, P.phase)

    def op_acquire(self, e):
        rid = e.resource
        st = self.state
        pipe = self.pipe(rid)
        P = self.cursor("P", rid)
        idx, phase = P.index, P.phase
        if ("TA", rid) in st:
            token = st[("TA", rid)]
            if_then(logical_not(token), lambda: pipe.wait_empty(idx, phase))
            st[("TA", rid)] = Boolean(False)
        else:
            pipe.wait_empty(idx, phase)
        if pipe.arms_on_acquire and self._arms(rid):
            pred = self._gate(rid, "producer_signaling_threads")
            p = self.pmodel(rid)
            if isinstance(p.producer_signaling_threads, SignalingThreads) and \
                    p.producer_signaling_threads & SignalingThreads.TaskWarpLeader and self.model.num_warps > 1:
                pred = logical_and(pred, self.warp == self.model.warp_idx)
            if_then(pred, lambda: pipe.arm_full(idx))
        if self.advance_on_acquire(rid):
            st[("PW", rid)] = idx
            P.advance(self.stride(rid, "acquire"))

    def _arms(self, rid) -> bool:
        """Fork: only the first member's acquire arms the shared full barrier."""
        g = self.group_of(rid)
        if g is not None and g.group_mode is PipelineGroupMode.Fork:
            return g.members[0] == rid
        return True

    def _commit_cursor(self, rid) -> Cursor:
        return self.cursor("Q" if self.advance_on_acquire(rid) else "P", rid)

    def op_commit(self, e):
        rid = e.resource
        res = self.res(rid)
        if res.is_group:            # Fork: one signal through the first member, every cursor advances
            first = res.members[0]
            C = self._commit_cursor(first)
            pipe = self.pipe(first)
            if_then(self._gate(first, "producer_signaling_threads"), lambda: pipe.signal_full(C.index))
            for m in res.members:
                self._commit_cursor(m).advance(self.stride(m, "commit"))
            return
        C = self._commit_cursor(rid)
        pipe = self.pipe(rid)
        if pipe.pipeline_type is not PipelineType.ClcFetchAsync:
            idx = C.index
            if_then(self._gate(rid, "producer_signaling_threads"), lambda: pipe.signal_full(idx))
        C.advance(self.stride(rid, "commit"))

    def op_try_wait(self, e):
        rid = e.resource
        src = self.wsrc(rid)
        C = self.cursor("C", src)
        self.state[("TW", rid)] = self.pipe(rid).try_wait_full(C.index, C.phase)

    def op_wait(self, e):
        rid = e.resource
        st = self.state
        owner = self.csrc(rid)
        src = self.wsrc(rid)
        pipe = self.pipe(rid)
        C = self.cursor("C", src)
        idx, phase = C.index, C.phase

        def wait():
            if ("TW", rid) in st:
                token = st[("TW", rid)]
                if_then(logical_not(token), lambda: pipe.wait_full(idx, phase))
            else:
                pipe.wait_full(idx, phase)
        p = self.pmodel(rid)
        sig = p.consumer_wait_signaling_threads if p.consumer_wait_signaling_threads is not None \
            else p.consumer_signaling_threads
        v = derive.cluster_v(p)
        if isinstance(sig, SignalingThreads) and sig & SignalingThreads.CtaLeader and is_static_int(v) and v > 1:
            rank = cute.arch.make_warp_uniform(cute.arch.block_idx_in_cluster())
            if_then((rank % v) == 0, wait)
        else:
            wait()
        if ("TW", rid) in st:
            st[("TW", rid)] = Boolean(False)
        if self.advance_on_wait(owner):
            st[("W", src)] = idx
            C.advance(self.stride(owner, "wait"))

    def op_release(self, e):
        rid = e.resource
        src = self.csrc(rid) if not self.res(rid).is_group else rid
        pipe = self.pipe(rid)
        cur = self.cursor("R" if self.advance_on_wait(src) else "C", src)
        idx = cur.index
        if hasattr(pipe, "before_release"):     # TmaWgmma: wgmma.wait_group (docs/hopper.md)
            pipe.before_release(self, e)
        if_then(self._gate(src, "consumer_signaling_threads"), lambda: pipe.signal_empty(idx))
        cur.advance(self.stride(src, "release"))

    # ------------------------------------------------------------------ work
    def _stage_of(self, e):
        """(stage_idx, barrier pointer) a work call on a pipelined resource sees."""
        rid = e.resource
        if not self.pipelined(rid) or self.res(rid).is_group:
            return None, None
        pipe = self.pipe(rid)
        if e.stage.is_producer:
            if self.advance_on_acquire(rid):
                acquired = any(x.resource == rid and x.stage is S.ProducerAcquire and x.index < e.index
                               for x in self.entries)
                idx = self.state[("PW", rid)] if acquired else self.cursor("Q", rid).index
            else:
                idx = self.cursor("P", rid).index
            return idx, pipe.full(idx)
        src = self.csrc(rid)
        if self.advance_on_wait(src):
            waits = any(x.resource == rid and x.stage in (S.ConsumerWait, S.ConsumerTryWait)
                        for x in self.entries)
            idx = self.state[("W", self.wsrc(rid))] if waits else self.cursor("R", src).index
        else:
            idx = self.cursor("C", src).index
        return idx, pipe.empty(idx)

    def call_work(self, e, loop_offset):
        from .smem import barrier_view
        rid = e.resource
        o = self.obj(rid)
        res = self.res(rid)
        stage_idx, bar = self._stage_of(e)
        start, end, step = self.bounds
        info = StageInfo(loop_offset=loop_offset, loop_start=start, loop_end=end, loop_step=step,
                         stage_idx=stage_idx, label=e.label, barrier=barrier_view(bar) if bar is not None else None,
                         work_tile=self.tile, num_active_stages=0, context=self.ctx.context,
                         task_cache=self.task_cache)
        side = "producer" if e.stage.is_producer else "consumer"
        kwargs = {}
        for r in self.routes_to.get(e.index, ()):
            kwargs[r.dest_arg] = self.state[("in", rid, side, r.dest_arg)]
        kwargs.update(e.constexpr_kwargs)
        if e.label:
            fn = getattr(o, e.label)
        else:
            fn = getattr(o, {S.ConsumerWork: "consumer_work", S.ProducerWork: "producer_work",
                             S.ConsumerAuxWork: "consumer_aux_work", S.ProducerAuxWork: "producer_aux_work"}[e.stage])
        result = fn(info, **kwargs)
        wm = res.work_methods.get(e.label) if e.label else None
        names = tuple(wm.returns) if (wm is not None and e.stage.is_consumer) else ()
        values = self._outputs(e, res, o, names, result)
        if not values:
            return
        st = self.state
        for var, v in values.items():
            key = ("out", rid, var)
            if key in st:
                st[key] = wqmod.as_tile(v) if var == "work_tile" and isinstance(o, WorkQueue) else v
        for r in self.routes_from.get(e.index, ()):
            rd = self.by_index[r.reader]
            key = ("in", rd.resource, "producer" if rd.stage.is_producer else "consumer", r.dest_arg)
            st[key] = values[r.src_var]

    def _outputs(self, e, res, o, names, result) -> dict:
        """{var: value} of a consumer work call (TS316 count, TS317 dtype checks)."""
        from ..diagnostics import raise_finding
        where = f"{res.label}.{e.label or e.stage.value}()"
        if not names:
            if result is not None and e.stage.is_consumer and len(res.tlv_names) != 1:
                raise_finding("TS316", TypeError, f"{where} returned a value, but the captured schedule has no "
                              "assignment metadata for it (declare returns=...)", e.range)
            return {}
        # as the reference counts them: None is no value, a tuple / list one value per item
        if result is None:
            values = []
        elif isinstance(result, (tuple, list)):
            values = list(result)
        else:
            values = [result]
        if len(values) != len(names):
            raise_finding("TS316", TypeError, f"{where} returned {len(values)} value(s), but the captured schedule "
                          f"expects {len(names)} ({', '.join(names)})", e.range)
        for var, v in zip(names, values):
            tlv = getattr(o, var, None)
            dtype = getattr(tlv, "dtype", None) if isinstance(tlv, TaskLocalVariable) else None
            if isinstance(dtype, type) and issubclass(dtype, cutlass.Numeric) and not _fits(v, dtype):
                got = type(v).__name__
                raise_finding("TS317", TypeError, f"{where}: returned value for TaskLocalVariable '{var}' is "
                              f"{got}, expected {dtype.__name__}", e.range)
        return dict(zip(names, values))

    # ------------------------------------------------------------------ epilogue
    def drain(self):
        """Producer tail: wait until every stage this task filled has been released."""
        for rid in self.producers:
            pipe = self.pipe(rid)
            k = self.stride(rid, "acquire")
            P = self.cursor("P", rid)
            for _ in range(max(1, pipe.num_stages // k)):
                pipe.wait_empty(P.index, P.phase)
                P.advance(k)


def frontend_next() -> bool:
    """Whether the kernel being traced is compiled with cute.FrontendNext (the DSL's PyIR
    front end: `cute.compile[cute.FrontendNext](...)`), read from the DSL's current
    preprocessing mode (True if a DSL version does not expose it: the tutorials compile
    with FrontendNext)."""
    try:
        from cutlass.cutlass_dsl import CuTeDSL
        return bool(CuTeDSL._get_dsl().envar.enable_pyir)
    except Exception:       # a DSL version without this attribute
        return True


def _fits(value, dtype) -> bool:
    """TS317: a DSL value must have the variable's dtype exactly (the reference's check:
    Int64 or Boolean into an Int32 variable is an error). A Python int / bool / float
    constant is accepted where it converts without loss of kind (int -> any number,
    float -> a float dtype, bool -> Boolean or an integer). A vector or tensor passes when
    its `.dtype` is the variable's dtype."""
    if isinstance(value, cutlass.Numeric):
        return isinstance(value, dtype)
    if isinstance(value, bool):
        return issubclass(dtype, cutlass.Integer)
    if isinstance(value, int):
        return dtype is not cutlass.Boolean
    if isinstance(value, float):
        return issubclass(dtype, cutlass.Float)
    # vectors / tensors (TensorSSA, register fragments): their element dtype must match,
    # as the reference checks; a value with no dtype is not judged
    got = getattr(value, "dtype", None)
    return got is None or got == dtype


def _walk_blocks(nodes):
    for n in nodes:
        if getattr(n, "kind", "step") == "step":
            continue
        yield n
        yield from _walk_blocks(n.body)


def _guard_groups(entries):
    """Consecutive entries with equal guards, in order: [(guard, [entries])]."""
    out = []
    for e in entries:
        g = e.guard
        if out and _same_guard(out[-1][0], g):
            out[-1][1].append(e)
        else:
            out.append((g, [e]))
    return out


def _same_guard(a, b):
    if a is b:
        return True
    try:
        return a == b
    except Exception:
        return False
