"""The schedule grammar, shared by the tracing DSL and ts-lint.

Both front ends drive one `ScheduleBuilder` with the same events (open a block, call a
method on a resource parameter, close a block); the builder records the tree and reports
every grammar finding (TS1xx, TS22x, TS30x, TS51x) as a Diagnostic. That is why a
capture rule fires identically at run time and in the editor: there is one copy of it.

Unlike the reference, which stops at the first `ScheduleError`, the builder keeps going
and collects every finding; the DSL raises once at the end of capture.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Optional

from ..enums import (
    FIRST_ITER, LAST_ITER, SKIPPABLE, Every, IterationPredicate, OpaqueCondition,
    ScheduleStage, PipelineGroupMode,
)
from ..source import SourceRange, UNKNOWN_RANGE
from ..diagnostics import Related
from .kernel import ResourceKind, ResourceModel
from .schedule import Block, RouteIn, ScheduleModel, Step, Token
from .values import UNKNOWN, DynamicBound, SkipIf, is_static_int

STANDARD_OPS = {
    "try_acquire": ScheduleStage.ProducerTryAcquire,
    "acquire": ScheduleStage.ProducerAcquire,
    "commit": ScheduleStage.ProducerCommit,
    "producer_work": ScheduleStage.ProducerWork,
    "producer_aux_work": ScheduleStage.ProducerAuxWork,
    "try_wait": ScheduleStage.ConsumerTryWait,
    "wait": ScheduleStage.ConsumerWait,
    "release": ScheduleStage.ConsumerRelease,
    "consumer_work": ScheduleStage.ConsumerWork,
    "consumer_aux_work": ScheduleStage.ConsumerAuxWork,
}
# names a named work method may not take (the generic work hooks may be overridden)
RESERVED_WORK_NAMES = frozenset(STANDARD_OPS) - {"producer_work", "consumer_work"}

GROUP_STAGES = {
    PipelineGroupMode.Merge: {ScheduleStage.ConsumerRelease},
    PipelineGroupMode.Fork: {ScheduleStage.ProducerCommit},
    PipelineGroupMode.FusedMerge: {ScheduleStage.ConsumerTryWait, ScheduleStage.ConsumerWait,
                                   ScheduleStage.ConsumerRelease},
}

_uid = itertools.count(1)


@dataclass
class ParamRef:
    """A schedule parameter: a resource, or `group.member` (resource = member)."""
    resource: int
    via_group: Optional[int] = None


@dataclass
class Literal:
    """A non-token argument value (int, enum, runtime value, ...)."""
    value: Any = UNKNOWN


@dataclass
class Scope:
    kind: str                  # root | domain_loop | work_tile_loop | guard | skippable
    node: Any
    range: SourceRange
    open: bool = True
    guard_kind: Optional[str] = None   # "iteration" | "opaque" for guard scopes


class ScheduleBuilder:
    def __init__(self, name: str, resources: dict, range: SourceRange = UNKNOWN_RANGE,
                 params: Optional[list] = None):
        from ..rules.registry import make_diagnostic
        self._make = make_diagnostic
        self.resources: dict = resources            # rid -> ResourceModel
        self.model = ScheduleModel(name=name, range=range, params=list(params or []))
        self.diagnostics = self.model.diagnostics
        self.stack = [Scope("root", self.model, range)]
        self.n_domain_loops = 0
        self.n_work_tile_loops = 0
        self.wtl_closed = False
        self.wtl_scope: Optional[Scope] = None
        self.latest: dict = {}        # (rid, var) -> Token
        self.unconsumed: dict = {}    # Token -> (step, range)
        self.route_count = 0          # routed inputs recorded so far (ts-lint's TS965)
        self._checked_classes: set = set()
        self._opaque_fresh = itertools.count()

    # ---------------------------------------------------------------- reporting
    def report(self, code: str, message: str, range: SourceRange, **kw):
        d = self._make(code, message, range, **kw)
        self.diagnostics.append(d)
        return d

    @property
    def errors(self):
        from ..diagnostics import Severity
        return [d for d in self.diagnostics if d.severity is Severity.ERROR]

    # ---------------------------------------------------------------- helpers
    def _res(self, rid) -> ResourceModel:
        return self.resources[rid]

    def _body(self) -> list:
        top = self.stack[-1]
        return top.node.body

    def _inside(self, kind: str) -> Optional[Scope]:
        for s in reversed(self.stack):
            if s.kind == kind:
                return s
        return None

    def _guard_scope(self) -> Optional[Scope]:
        for s in reversed(self.stack):
            if s.kind == "guard":
                return s
        return None

    def _push(self, kind: str, node: Block, range: SourceRange, guard_kind=None) -> Scope:
        self._body().append(node)
        scope = Scope(kind, node, range, guard_kind=guard_kind)
        self.stack.append(scope)
        return scope

    def _check_after_wtl(self, range: SourceRange):
        if self.wtl_closed:
            self.report("TS117", "no blocks may follow work_tile_loop(); move this block inside it", range)

    def add_param(self, ref: ParamRef, range: SourceRange = UNKNOWN_RANGE):
        """Registers a schedule parameter and checks its class's work methods (TS222/223)."""
        self.model.params.append(ref.resource)
        res = self._res(ref.resource)
        if res.group is not None and ref.via_group is None:
            grp = self.resources.get(res.group)
            self.report("TS220", f"resource '{res.label}' belongs to PipelineGroup "
                        f"'{grp.label if grp else '?'}' and must be passed as `group.{res.name}`", range)
        key = res.class_name or res.rid
        if key in self._checked_classes:
            return
        self._checked_classes.add(key)
        for (name, message, rng, code) in res.reserved_collisions:
            self.report(code, message, rng)

    # ---------------------------------------------------------------- blocks
    def domain_loop(self, bounds: tuple, unroll: Any, range: SourceRange) -> Scope:
        self._check_after_wtl(range)
        if self._inside("domain_loop"):
            self.report("TS107", "domain_loop() cannot be nested inside another domain_loop()", range)
        wtl = self._inside("work_tile_loop")
        if self.wtl_scope is not None and wtl is not None and wtl.node.skip_if is not None \
                and self._inside("skippable") is None:
            self.report("TS122", "with work_tile_loop(skip_if=...), domain_loop() must be inside wtl.skippable()", range)
        if not 1 <= len(bounds) <= 3:
            self.report("TS102", f"domain_loop() takes 1 to 3 positional bounds, got {len(bounds)}", range)
            bounds = tuple(bounds[:3]) or (0,)
        start, end, step = (0, bounds[0], 1) if len(bounds) == 1 else (
            (bounds[0], bounds[1], 1) if len(bounds) == 2 else bounds)
        for b in (start, end, step) if len(bounds) == 3 else bounds:
            if b is None:
                self.report("TS104", "domain_loop() bound must be a value or a callable, got None", range)
        if is_static_int(step) and step == 0:
            self.report("TS103", "domain_loop() step must be non-zero", range)
        for b in (start, end, step):
            if isinstance(b, DynamicBound):
                if not b.is_callable:
                    continue
                if not b.accessed_on_class:
                    self.report("TS105", f"dynamic bound '{b.name}' must be a Task method accessed on the "
                                "class (e.g. MyTask.get_domain), not bound to an instance", range)
                elif b.required_positional is None:
                    self.report("TS106", f"dynamic bound '{b.name}' must expose a Python signature", range)
                elif b.required_positional != 2:
                    self.report("TS106", f"dynamic bound '{b.name}' must take exactly two required positional "
                                "parameters (self, work_tile_coord)", range)
        self.n_domain_loops += 1
        node = Block("domain_loop", range, start=start, end=end, step=step, unroll=unroll)
        return self._push("domain_loop", node, range)

    def work_tile_loop(self, wq: Any, skip_if: Optional[SkipIf], range: SourceRange) -> Scope:
        top_level = len(self.stack) == 1
        if self.n_work_tile_loops >= 1:
            self.report("TS115", "at most one work_tile_loop() is allowed per schedule", range)
        elif not top_level:
            self.report("TS114", "work_tile_loop() must be a top-level block of the schedule", range)
        else:
            self._check_after_wtl(range)
        self.n_work_tile_loops += 1
        wq_rid = None
        if isinstance(wq, ParamRef) and self._res(wq.resource).is_work_queue:
            wq_rid = wq.resource
        elif wq is not UNKNOWN:
            self.report("TS512", "work_tile_loop() requires a traced WorkQueue resource argument", range)
        # earlier nodes must be auxiliary work or steps on is_barrier resources
        for node in (self.model.body if top_level and self.n_work_tile_loops == 1 else ()):
            if isinstance(node, Step):
                if not (node.stage.is_aux or self._res(node.resource).is_barrier):
                    self.report("TS116", f"{node.stage.value} on '{self._res(node.resource).label}' is not "
                                "allowed outside work_tile_loop(); only auxiliary work and barrier "
                                "resources may precede it", node.range)
            elif node.kind != "work_tile_loop":
                self.report("TS116", f"{node.kind}() is not allowed outside work_tile_loop()", node.range)
        if skip_if is not None:
            self._check_skip_if(skip_if, wq_rid, range)
        node = Block("work_tile_loop", range, work_queue=wq_rid, skip_if=skip_if)
        scope = self._push("work_tile_loop", node, range)
        self.wtl_scope = scope
        return scope

    def _check_skip_if(self, s: SkipIf, wq_rid, range):
        if s.kind == "unknown":
            return
        before = len(self.diagnostics)
        if s.kind == "not_callable":
            self.report("TS513", "work_tile_loop() skip_if must be callable", range)
        elif s.kind == "bound_method":
            if wq_rid is not None and s.bound_to is not None and s.bound_to != wq_rid:
                self.report("TS514", f"skip_if '{s.name}' is bound to a different WorkQueue than this loop's", range)
            elif s.arity is not None and s.arity != 1:
                self.report("TS514", f"bound skip_if '{s.name}' must accept exactly one work_tile argument", range)
        elif s.kind == "unbound_method":
            if s.on_work_queue_class is False:
                self.report("TS515", f"unbound method skip_if '{s.name}' is not a method of WorkQueue", range)
            elif s.arity is not None and s.arity != 2:
                self.report("TS515", f"unbound skip_if '{s.name}' must accept (work_queue, work_tile)", range)
        elif s.kind == "function":
            if s.arity is not None and s.arity not in (1, 2):
                self.report("TS516", f"skip_if '{s.name}' must accept either (work_queue, work_tile) or (work_tile)", range)
        if s.returns_value is False and len(self.diagnostics) == before:
            # a predicate the loop can call, that returns None
            self.report("TS518", f"skip_if '{s.name}' never returns a value (no `return <condition>` in its "
                        f"body): it returns None, which work_tile_loop cannot use as the per-tile skip "
                        f"condition", s.def_range or range,
                        related=(Related(range, "used as this work_tile_loop's skip_if"),) if s.def_range else ())

    def iteration_guard(self, loop_scope: Scope, guard: IterationPredicate, range: SourceRange) -> Scope:
        """`d.first_iter()`, `d.last_iter()`, `d.every(p, start=s)`."""
        self._check_after_wtl(range)
        if loop_scope is None or not loop_scope.open:
            self.report("TS123", "this loop handle's block has already exited; use it inside its `with` block", range)
        elif self._guard_scope() is not None:
            self.report("TS125", "per-iteration condition blocks cannot be nested", range)
        return self._push("guard", Block("guard", range, guard=guard), range, guard_kind="iteration")

    def skippable(self, wtl_scope: Scope, range: SourceRange) -> Scope:
        self._check_after_wtl(range)
        if wtl_scope is None or not wtl_scope.open:
            self.report("TS123", "this work_tile_loop handle's block has already exited", range)
        elif wtl_scope.node.skip_if is None:
            self.report("TS120", "skippable() requires an enclosing work_tile_loop(skip_if=...)", range)
        if self._inside("skippable"):
            self.report("TS121", "skippable() blocks cannot be nested", range)
        return self._push("skippable", Block("skippable", range, guard=SKIPPABLE), range)

    def when(self, cond: Any, negated: bool, key: Any, range: SourceRange) -> Scope:
        """`when_true(cond, key=)` / `when_false(...)`. cond: IterationPredicate, Token or other."""
        self._check_after_wtl(range)
        fn = "when_false" if negated else "when_true"
        if isinstance(cond, IterationPredicate):
            if negated:
                self.report("TS126", "when_false() cannot negate an iteration predicate", range)
            if key is not None:
                self.report("TS127", "key= is ignored for iteration predicates", range)
            if self._inside("domain_loop") is None:
                self.report("TS124", f"{fn}({cond!r}) condition is only valid inside a domain_loop()", range)
            elif self._guard_scope() is not None:
                self.report("TS125", "per-iteration condition blocks cannot be nested", range)
            return self._push("guard", Block("guard", range, guard=cond), range, guard_kind="iteration")
        if self._guard_scope() is not None:
            self.report("TS125", "opaque when_true/when_false blocks cannot be nested", range)
        if isinstance(cond, Token):
            if cond.var is None:
                self.report("TS130", f"{fn}() condition must be a work-call output declared with returns=", range)
                guard = OpaqueCondition(key=key if key is not None else ("fresh", next(self._opaque_fresh)),
                                        negated=negated)
            else:
                if self.latest.get((cond.resource, cond.var)) != cond:
                    self.report("TS131", f"{fn}() condition token is stale: '{cond.var}' was produced again "
                                "after this token", range)
                self.unconsumed.pop(cond, None)
                step = self._step_by_uid(cond.step_uid)
                label = step.label if step else None
                guard = OpaqueCondition(key=key if key is not None else (cond.resource, label, cond.var),
                                        negated=negated, resource=cond.resource, method_label=label,
                                        result_name=cond.var)
        else:
            guard = OpaqueCondition(key=key if key is not None else ("fresh", next(self._opaque_fresh)),
                                    negated=negated)
        return self._push("guard", Block("guard", range, guard=guard), range, guard_kind="opaque")

    def close(self, scope: Scope, range: SourceRange = UNKNOWN_RANGE):
        if not self.stack or self.stack[-1] is not scope:
            self.report("TS119", "schedule blocks closed out of order", range)
            if scope in self.stack:
                self.stack.remove(scope)
        else:
            self.stack.pop()
        scope.open = False
        if scope.kind == "work_tile_loop":
            self.wtl_closed = True

    # ---------------------------------------------------------------- steps
    def _step_by_uid(self, uid):
        for s in self.model.walk_steps():
            if s.uid == uid:
                return s
        return None

    def resolve(self, ref: ParamRef, attr: str, range: SourceRange):
        """Maps `proxy.attr` to (stage, label, work method); reports TS224-226. None if invalid."""
        res = self._res(ref.resource)
        if res.is_group:
            if attr in STANDARD_OPS:
                return STANDARD_OPS[attr], None, None
            hint = (f" (a member is passed to the schedule as an argument, `{res.label}.{attr}`, and "
                    f"used through that parameter)" if attr in res.member_names else "")
            self.report("TS224", f"schedule proxy for PipelineGroup '{res.label}' has no work method or "
                        f"operation '{attr}'{hint}", range)
            return None
        if attr in ("consumer_work", "producer_work") and res.is_work_queue:
            self.report("TS226", f"WorkQueue does not support {attr}(); call its named scheduler "
                        "operation (e.g. get_and_advance_work_tile())", range)
            return None
        if attr in STANDARD_OPS:
            return STANDARD_OPS[attr], None, None
        wm = res.work_methods.get(attr)
        if wm is not None:
            return wm.stage, attr, wm
        if attr in res.tlv_names:
            self.report("TS225", f"'{attr}' is a task-local variable, not a work method", range)
            return None
        avail = ", ".join(sorted(list(res.work_methods) + list(STANDARD_OPS)))
        self.report("TS224", f"schedule proxy has no work method '{attr}' on '{res.label}' "
                    f"(available: {avail})", range)
        return None

    def call(self, ref: ParamRef, attr: str, args: list, kwargs: dict, range: SourceRange):
        """Records `proxy.attr(*args, **kwargs)`; returns a Token, a tuple of Tokens, or None."""
        resolved = self.resolve(ref, attr, range)
        if resolved is None:
            return None
        stage, label, wm = resolved
        res = self._res(ref.resource)
        if res.is_group:
            allowed = GROUP_STAGES.get(res.group_mode)
            # a mode ts-lint could not resolve (UNKNOWN) decides nothing: no finding
            if allowed is not None and stage not in allowed:
                names = ", ".join(sorted(k for k, v in STANDARD_OPS.items() if v in allowed))
                self.report("TS219", f"PipelineGroup '{res.label}' ({getattr(res.group_mode, 'value', '?')}) "
                            f"only accepts {names} at the group level", range)
        elif res.group is not None:
            grp = self.resources.get(res.group)
            if grp is not None and stage in GROUP_STAGES.get(grp.group_mode, set()):
                self.report("TS218", f"{attr}() on grouped member '{res.label}' must be emitted on the "
                            f"group itself (`{grp.name or 'group'}.{attr}()`)", range)
        # placement
        if self.wtl_closed and len(self.stack) == 1 and not (stage.is_aux or res.is_barrier):
            self.report("TS118", f"{stage.value} on '{res.label}' is not allowed outside work_tile_loop(); "
                        "only auxiliary work and barrier resources may follow it", range)
        if res.is_work_queue and self._inside("skippable") is not None:
            from ..fixes import move_to_tile_tail
            self.report("TS511", "WorkQueue operations cannot appear inside a skippable() block", range,
                        fix=None if stage.is_aux else move_to_tile_tail(
                            [range], "Move the WorkQueue operations out of skippable(), to the tile tail",
                            whole_run=True))
        step = Step(uid=next(_uid), resource=ref.resource, stage=stage, label=label,
                    via_group=ref.via_group, range=range)
        if stage.is_work:
            self._bind(step, wm, attr, args, kwargs, range)
        self._body().append(step)
        return self._outputs(step, res, wm, range)

    def _bind(self, step: Step, wm, attr: str, args: list, kwargs: dict, range: SourceRange):
        params = wm.params if wm is not None else []
        pos = [p for p in params if p.kind == "pos" and not p.constexpr]
        by_name = {p.name: p for p in params}
        bound: dict = {}
        if len(args) > len(pos):
            self.report("TS302", f"{attr}() accepts at most {len(pos)} positional data-flow input(s), "
                        f"got {len(args)}", range)
        for p, a in zip(pos, args):
            bound[p.name] = a
        for k, v in kwargs.items():
            if k not in by_name:
                self.report("TS304", f"{attr}() got unknown argument(s): {k}", range)
                continue
            if k in bound:
                self.report("TS303", f"{attr}() got multiple values for input '{k}'", range)
                continue
            bound[k] = v
        for p in params:
            if p.name not in bound:
                if p.constexpr and not p.has_default:
                    self.report("TS310", f"{attr}() is missing required constexpr argument '{p.name}'", range)
                elif not p.constexpr and not p.has_default:
                    self.report("TS301", f"{attr}() is missing routed input '{p.name}'", range)
                continue
            value = bound[p.name]
            if p.constexpr:
                if isinstance(value, Token):
                    self.report("TS309", f"constexpr argument '{p.name}' of {attr}() must be a compile-time "
                                "literal, not a data-flow token", range)
                else:
                    step.constexpr_kwargs[p.name] = value.value if isinstance(value, Literal) else value
                continue
            self._route(step, attr, p.name, value, range)

    def _route(self, step: Step, attr: str, arg: str, value, range: SourceRange):
        if isinstance(value, Literal):
            value = value.value
        if value is UNKNOWN:
            return
        if value is None:
            self.report("TS305", f"routed input '{arg}' of {attr}() cannot be None", range)
            return
        if not isinstance(value, Token):
            self.report("TS306", f"routed input '{arg}' of {attr}() must be a work-call output token, "
                        f"got {type(value).__name__}", range)
            return
        if value.var is None:
            self.report("TS307", f"routed input '{arg}' of {attr}() is a token that carries no variable "
                        "(declare returns= on the producing work method)", range)
            return
        if self.latest.get((value.resource, value.var)) != value:
            self.report("TS308", f"routed input '{arg}' of {attr}() uses a stale handle for '{value.var}': "
                        "the variable was produced again after this token", range)
            return
        self.unconsumed.pop(value, None)
        step.routes_in.append(RouteIn(value.step_uid, value.var, arg))
        self.route_count += 1

    def _outputs(self, step: Step, res: ResourceModel, wm, range: SourceRange):
        names = tuple(wm.returns) if (wm is not None and step.stage.is_consumer) else ()
        step.returned = names
        if not names:
            return Token(step.uid, None, res.rid)
        toks = []
        for n in names:
            if n not in res.tlv_names and not res.is_work_queue:
                at = getattr(wm, "returns_range", None)
                self.report("TS314", f"{step.label}() declares returns='{n}', but no such task-local "
                            f"variable exists on '{res.label}'", range,
                            related=[Related(at, "returns= is declared here")] if at is not None else [])
            prev = self.latest.get((res.rid, n))
            tok = Token(step.uid, n, res.rid, (prev.generation + 1) if prev else 0)
            self.latest[(res.rid, n)] = tok
            if not res.is_work_queue:
                self.unconsumed[tok] = (step, range)
            toks.append(tok)
        return toks[0] if len(toks) == 1 else tuple(toks)

    def token_unpacked(self, token: Token, range: SourceRange, indexed: bool = False):
        """TS311: a single-output token was unpacked or indexed."""
        what = "indexed" if indexed else "unpacked"
        self.report("TS311", f"a single-output data-flow token cannot be {what}", range)

    # ---------------------------------------------------------------- finish
    def finish(self) -> ScheduleModel:
        if len(self.stack) > 1:
            self.report("TS119", "schedule ended with an unclosed block", self.stack[-1].range)
            while len(self.stack) > 1:
                self.stack.pop().open = False
        for tok, (step, rng) in self.unconsumed.items():
            self.report("TS312", f"{step.label or step.stage.value}() produces '{tok.var}' but it is never "
                        "routed to a work call nor used as a condition", rng)
        self.unconsumed.clear()
        return self.model
