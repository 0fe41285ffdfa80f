"""TS301-TS327: data flow between work calls (tokens, task-local variables, slot routing).

Capture-phase rules (TS301-TS312, TS314) are reported by the shared schedule builder
(`ts_runtime.model.builder`); decoration / object-phase rules (TS313, TS315, TS318-TS320)
by `ts_runtime.resources`, `ts_runtime.model.work_signature` and `ts_runtime.tracing`.
Here they get their catalogue entries.

The manager-phase rules TS321-TS326 (model.md §6 step 22, order 220) check each task's
routing table `task.lowered.routes`: a route copies variable `src_var` of a writer entry
into argument `dest_arg` of a reader entry. Capture only records routes from a consumer
work call's `returns=` token to a later work call that takes it, so most of these checks
guard routing tables built other ways; TS321 / TS322 also fire on captured schedules
whose resource roles are wrong (together with TS201-TS203).

TS316, TS317 and TS327 concern values a work body returns and the slots routed values
are seeded from, at kernel-trace time: ts codegen (`ts_runtime/codegen/task_runner.py`)
reports them; their programs are compiled in `tests/codegen/test_codegen_rules.py`.
"""
from __future__ import annotations

from collections import defaultdict

from ..diagnostics import Related, Severity
from ..enums import ScheduleStage
from ..model.lowered import HEAD, LOOP, TAIL
from .base import Rule
from .declare import rule
from .registry import register
from .roles import _examples, _FamilyRule, _Finding, _VALID, cached, combined, pipeline_program

S = ScheduleStage
W = Severity.WARNING
_WRITER_STAGES = (S.ConsumerWork, S.ConsumerAuxWork)
_SECTION_ORDER = {HEAD: 0, LOOP: 1, TAIL: 2}


# --------------------------------------------------------------------------- TS321-TS326
def _returned_vars(task) -> dict:
    """step uid -> tuple of variable names the step writes (its `returns=`)."""
    sched = getattr(task, "schedule", None)
    if sched is None:
        return {}
    return {s.uid: tuple(s.returned or ()) for s in sched.walk_steps()}


def _routing(kernel) -> list:
    def compute(k):
        out = []
        for task in k.tasks:
            low = task.lowered
            if low is None or not low.routes:
                continue
            ents = low.entries
            by_index = {e.index: e for e in ents}
            order = {e.index: pos for pos, e in enumerate(combined(task))}
            returned = _returned_vars(task)
            src, dst = set(task.src), set(task.dst)
            seen_dest = defaultdict(set)       # (reader, dest_arg) -> {src_var}
            good = []
            for rt in low.routes:
                w, rd = by_index.get(rt.writer), by_index.get(rt.reader)
                if w is None or rd is None:
                    which = "writer" if w is None else "reader"
                    out.append(_Finding("TS323", f"Task '{task.name}': slot route {rt.src_var!r} -> "
                                        f"{rt.dest_arg!r} has no matching schedule entry for its {which} "
                                        f"(index {rt.writer if w is None else rt.reader})",
                                        (w or rd).range if (w or rd) else task.range))
                    continue
                if not isinstance(rt.src_var, str) or not rt.src_var \
                        or not isinstance(rt.dest_arg, str) or not rt.dest_arg:
                    out.append(_Finding("TS323", f"Task '{task.name}': slot route from {w.stage.value} on "
                                        f"'{k.name(w.resource)}' has a malformed var route "
                                        f"({rt.src_var!r} -> {rt.dest_arg!r}); a var route must be a non-empty "
                                        "string", w.range))
                    continue
                wname, rname = k.name(w.resource), k.name(rd.resource)
                ok = True
                if w.stage not in _WRITER_STAGES:
                    ok = False
                    out.append(_Finding("TS321", f"Task '{task.name}': route writer {w.stage.value} on "
                                        f"'{wname}' (call_id={w.call_idx}): only ConsumerAuxWork and ConsumerWork "
                                        "slots can be writers", w.range,
                                        [Related(rd.range, f"reader of '{rt.src_var}'")]))
                elif w.resource not in src:
                    ok = False
                    out.append(_Finding("TS321", f"Task '{task.name}': route writer {w.stage.value} on "
                                        f"'{wname}' (call_id={w.call_idx}) writes '{rt.src_var}', but the resource "
                                        "is not in src_resources", w.range,
                                        [Related(task.at("src_resources"), "src_resources"),
                                         Related(rd.range, f"reader of '{rt.src_var}'")]))
                if not rd.stage.is_work:
                    ok = False
                    out.append(_Finding("TS322", f"Task '{task.name}': route destination {rd.stage.value} on "
                                        f"'{rname}': destinations must be on a *Work* stage", rd.range,
                                        [Related(w.range, f"writer of '{rt.src_var}'")]))
                elif rd.stage.is_producer and rd.resource not in dst:
                    ok = False
                    out.append(_Finding("TS322", f"Task '{task.name}': route destination {rd.stage.value} on "
                                        f"'{rname}' (argument '{rt.dest_arg}') is at a producer stage and the "
                                        "resource is not in dst_resources", rd.range,
                                        [Related(task.at("dst_resources"), "dst_resources"),
                                         Related(w.range, f"writer of '{rt.src_var}'")]))
                elif rd.stage.is_consumer and rd.resource not in src:
                    ok = False
                    out.append(_Finding("TS322", f"Task '{task.name}': route destination {rd.stage.value} on "
                                        f"'{rname}' (argument '{rt.dest_arg}') is at a consumer stage and the "
                                        "resource is not in src_resources", rd.range,
                                        [Related(task.at("src_resources"), "src_resources"),
                                         Related(w.range, f"writer of '{rt.src_var}'")]))
                seen_dest[(rt.reader, rt.dest_arg)].add(rt.src_var)
                if ok:
                    good.append((rt, w, rd))
            for (reader, arg), names in seen_dest.items():
                if len(names) > 1:
                    rd = by_index[reader]
                    out.append(_Finding("TS324", f"Task '{task.name}': routes multiple source vars "
                                        f"{sorted(names)} to reader argument '{arg}' of {rd.stage.value} on "
                                        f"'{k.name(rd.resource)}'", rd.range))
            # linear most-recent-writer over the combined order (no loop carry)
            for rt, w, rd in good:
                if w.resource is None:
                    continue
                writers = [e for e in ents
                           if e.resource == w.resource and e.stage in _WRITER_STAGES
                           and rt.src_var in returned.get(e.step_uid, ())
                           and order[e.index] < order[rd.index]]
                if not writers:
                    out.append(_Finding("TS325", f"Task '{task.name}': slot routing lists no writer of variable "
                                        f"'{rt.src_var}' on '{k.name(w.resource)}' that precedes reader "
                                        f"{rd.stage.value} on '{k.name(rd.resource)}' in the combined "
                                        "Head/Loop/Tail order (loop-carried values are not modelled)", rd.range,
                                        [Related(w.range, "the routed writer")]))
                    continue
                latest = max(writers, key=lambda e: order[e.index])
                if latest.index != w.index:
                    out.append(_Finding("TS326", f"Task '{task.name}': route of '{rt.src_var}' into "
                                        f"{rd.stage.value} on '{k.name(rd.resource)}' violates the most-recent-"
                                        "writer rule: a later write of the variable precedes the reader",
                                        rd.range, [Related(latest.range, "the most recent writer"),
                                                   Related(w.range, "the routed writer")]))
        return out
    return cached(kernel, "routing", compute)


class _RoutingRule(_FamilyRule):
    order = 220
    _analysis = staticmethod(_routing)


@register
class RouteFromNonConsumerRead(_RoutingRule):
    """A routed value whose writer is not a consumer read of a `src_resources` resource.

    ## What it does
    A route's writer must be a `ConsumerWork` / `ConsumerAuxWork` call on a resource the
    task lists in `src_resources`.
    ## Why is this bad?
    Values flow from consumer reads into later work; a writer on a resource the task does
    not consume is not synchronised with the data it claims to read.
    ## Example
    ```python
    w = out.load()          # out is only in dst_resources
    out.store(data=w)
    ```
    ## Use instead
    Read the value from a source resource of the task (or list the resource in `src_resources`).
    """
    code = "TS321"
    name = "route-from-non-consumer-read"


@register
class RouteIntoUndeclaredSide(_RoutingRule):
    """A routed value delivered to a work call on a resource not declared for that side.

    ## What it does
    A route's destination must be a work stage; a producer-side destination must be in
    `dst_resources`, a consumer-side one in `src_resources` (consumer-to-producer and
    consumer-to-consumer routes are allowed).
    ## Why is this bad?
    The value is copied into the resource's store for that side; a resource the task does
    not use on that side never reads it.
    ## Example
    ```python
    v = src.load()
    src.store(data=v)       # src is only in src_resources
    ```
    ## Use instead
    Route the value into a work call of a `dst_resources` resource.
    """
    code = "TS322"
    name = "route-into-undeclared-side"


@register
class MalformedRoutingTable(_RoutingRule):
    """A slot-routing entry that does not match the schedule.

    ## What it does
    Checks that every route's writer and reader entries exist and that its variable and
    argument names are non-empty strings.
    ## Why is this bad?
    The run-time copy of the value has no slot to read from or write to.
    ## Example
    A hand-built routing table whose reader index points past the schedule.
    ## Use instead
    Let `@schedule` capture build the routing table.
    """
    code = "TS323"
    name = "malformed-routing-table"


@register
class ConflictingRoutesIntoArgument(_RoutingRule):
    """Two different variables routed into one argument of one work call.

    ## What it does
    Each argument of a reader entry receives at most one source variable.
    ## Why is this bad?
    Both copies land in the same slot; which value the work sees depends on copy order.
    ## Example
    A routing table that feeds both `coord` and `item` into `store(data=...)`.
    ## Use instead
    Pass one token per argument (`@schedule` capture enforces this).
    """
    code = "TS324"
    name = "conflicting-routes-into-argument"


@register
class RouteReaderBeforeWriter(_RoutingRule):
    """A routed reader with no earlier writer of its variable in the combined order.

    ## What it does
    In head, loop (once) and tail order, some write of the routed variable on the
    writer's resource must precede the reader. Loop-carried values (a loop-body reader
    fed by a later loop-body writer) are not modelled and are rejected.
    ## Why is this bad?
    The reader would see the variable's default (or a previous tile's value), not the
    value the route names.
    ## Example
    A routing table that feeds a head reader from a loop writer.
    ## Use instead
    Produce the value before the work call that consumes it.
    """
    code = "TS325"
    name = "route-reader-before-writer"


@register
class RouteNotMostRecentWriter(_RoutingRule):
    """A routed value that is not the most recent write of its variable.

    ## What it does
    Values are stored per resource and variable, so a later write overwrites an earlier
    one; the routing must name the most recent writer before each reader.
    ## Why is this bad?
    The work call would receive the newer value, not the one the route claims.
    ## Example
    A routing table that feeds the first of two `load()` results into a later store.
    ## Use instead
    Route the latest token (`@schedule` capture rejects stale tokens, TS308).
    """
    code = "TS326"
    name = "route-not-most-recent-writer"


# --------------------------------------------------------------------------- declared (builder)
rule("TS301", "missing-routed-input", """
    A work call that does not supply one of the method's routed inputs.

    ## What it does
    Every non-Constexpr parameter without a default must get a token, positionally or
    as `name=token`.
    ## Why is this bad?
    The method would run without the value it reads.
    ## Example
    ```python
    out.store()
    ```
    ## Use instead
    ```python
    out.store(data=v)
    ```
    """)
rule("TS302", "too-many-positional-inputs", """
    More positional tokens than the work method has positional inputs.

    ## What it does
    Positional tokens bind to positional-or-keyword inputs in order; keyword-only inputs
    must be passed by name.
    ## Why is this bad?
    A token has no parameter to go to.
    ## Example
    ```python
    out.store(v, w)
    ```
    ## Use instead
    ```python
    out.store(v)
    ```
    """)
rule("TS303", "input-bound-twice", """
    An input passed both positionally and by keyword.

    ## What it does
    Rejects `store(v, data=w)` when `data` is the first positional input.
    ## Why is this bad?
    Two tokens for one slot: which one wins is undefined.
    ## Example
    ```python
    out.store(v, data=v)
    ```
    ## Use instead
    ```python
    out.store(data=v)
    ```
    """)
rule("TS304", "unknown-work-argument", """
    A keyword argument the work method does not declare.

    ## What it does
    Keyword names must be parameters of the method.
    ## Why is this bad?
    The value would be silently dropped.
    ## Example
    ```python
    out.store(data=v, value=v)
    ```
    ## Use instead
    ```python
    out.store(data=v)
    ```
    """)
rule("TS305", "none-routed-input", """
    `None` passed for a routed input.

    ## What it does
    Rejects `store(data=None)`.
    ## Why is this bad?
    Routed inputs are filled from work outputs at run time; `None` names no output.
    ## Example
    ```python
    out.store(data=None)
    ```
    ## Use instead
    Give the parameter a default in the method, or pass a token.
    """)
rule("TS306", "literal-routed-input", """
    A literal (not a work-call token) passed for a routed input.

    ## What it does
    Routed inputs accept only tokens returned by `@consumer_work(returns=...)` calls.
    ## Why is this bad?
    Literals are not recorded at capture; run time would pass nothing.
    ## Example
    ```python
    out.store(data=3)
    ```
    ## Use instead
    Make the parameter a keyword-only `cutlass.Constexpr` argument, or pass a token.
    """)
rule("TS307", "token-without-variable", """
    A token without a variable (from a pipeline op or untyped work) passed as a routed input.

    ## What it does
    Only outputs of consumer work declared with `returns=` carry a value.
    ## Why is this bad?
    There is nothing to route.
    ## Example
    ```python
    t = smem.acquire()
    out.store(data=t)
    ```
    ## Use instead
    Route the result of a `@consumer_work(returns=...)` call.
    """)
rule("TS308", "stale-routed-token", """
    A routed token that is no longer the latest handle for its variable.

    ## What it does
    Producing a variable again makes older tokens for it stale.
    ## Why is this bad?
    Values are stored per resource and variable; the reader would get the newer value.
    ## Example
    ```python
    v = smem.read()
    w = smem.read()
    out.store(data=v)
    ```
    ## Use instead
    Consume each value before producing the variable again.
    """)
rule("TS309", "token-for-constexpr-argument", """
    A token passed for a `Constexpr` parameter.

    ## What it does
    `cutlass.Constexpr` parameters take compile-time literals only.
    ## Why is this bad?
    The value is baked into the generated code; a run-time value cannot be.
    ## Example
    ```python
    out.put(data=v, part=v)
    ```
    ## Use instead
    ```python
    out.put(data=v, part=1)
    ```
    """)
rule("TS310", "missing-constexpr-argument", """
    A required `Constexpr` parameter not supplied.

    ## What it does
    Keyword-only `cutlass.Constexpr` parameters without a default must be passed.
    ## Why is this bad?
    The generated code needs the value.
    ## Example
    ```python
    out.put(data=v)
    ```
    ## Use instead
    ```python
    out.put(data=v, part=0)
    ```
    """)
rule("TS311", "single-token-unpacked", """
    A single-output token unpacked or indexed.

    ## What it does
    Only methods with several `returns=` names return a tuple of tokens.
    ## Why is this bad?
    The call produces one value.
    ## Example
    ```python
    a, b = src.load()
    ```
    ## Use instead
    ```python
    v = src.load()
    ```
    """)
rule("TS312", "unconsumed-work-output", """
    A `returns=` output that is never routed nor used as a condition.

    ## What it does
    Warns when a produced variable (not of a WorkQueue) is never passed to a later work
    call or `when_true` / `when_false`.
    ## Why is this bad?
    The value is computed and stored for nothing; often a forgotten argument.
    ## Example
    ```python
    v = src.load()          # v is never used
    ```
    ## Use instead
    Pass the token on, or drop `returns=` from the method.
    """, severity=W)
rule("TS313", "invalid-returns", """
    A malformed `@consumer_work(returns=...)`.

    ## What it does
    `returns=` must be a name, a `TaskLocalVariable` field, or a non-empty list / tuple
    of those, without empty strings or duplicates (and only on consumer work).
    ## Why is this bad?
    The outputs cannot be mapped to task-local variables.
    ## Example
    ```python
    @consumer_work(returns=())
    ```
    ## Use instead
    ```python
    @consumer_work(returns=item)
    ```
    """, phase="decorate", exc="ValueError")
rule("TS314", "returns-unknown-variable", """
    A `returns=` name that is not a task-local variable of the resource.

    ## What it does
    Each declared output must name a `TaskLocalVariable` field of the resource. Reported
    at the schedule call that captures the method (where the reference raises), with the
    decorator's `returns=` value, where the name is written, as the related location.
    ## Why is this bad?
    There is no slot to store the value in.
    ## Example
    ```python
    @consumer_work(returns="coord")     # the class has no `coord` field
    ```
    ## Use instead
    Declare `coord: object = TaskLocalVariable.uninitialized()` and assign it in `__post_init__`.
    """)
rule("TS315", "consumer-work-returns-dict", """
    Consumer work that returns a dict literal.

    ## What it does
    Checks the method's source for `return {...}` when it is decorated.
    ## Why is this bad?
    Outputs are matched to `returns=` by position; a dict is one value, not named outputs.
    ## Example
    ```python
    return {"item": 1}
    ```
    ## Use instead
    Declare `returns=(...)` and return a tuple.
    """, phase="decorate")
rule("TS316", "returned-value-count", """
    Consumer work returning a different number of values than it declares.

    ## What it does
    The number of returned values must equal the number of `returns=` names (without
    `returns=`, a value only when the resource has exactly one task-local variable).
    `None` counts as no value, a tuple or list as one value per item. Checked by ts codegen while the kernel is traced (programs: `tests/codegen/rule_programs.py`).
    ## Why is this bad?
    Outputs cannot be assigned to their variables.
    ## Example
    `returns=("a", "b")` with `return a`.
    ## Use instead
    Return one value per declared output.
    """, phase="codegen", exc="TypeError")
@register
class ConsumerWorkReturnsNothing(Rule):
    """A consumer work method whose every exit returns the wrong number of values.

    ## What it does
    For each `@consumer_work` method a schedule of the kernel calls, counts the values
    each exit of its body returns, as the traced kernel will (TS316, known here before the
    kernel is traced): `return` / `return None` / the end of the body none, a tuple or
    list display one per item. Reported when no exit can give the count the schedule
    expects: a method with `returns=` that never returns a value, or only tuples of
    another length; a method without `returns=` that always returns a value on a resource
    that does not have exactly one task-local variable, or only tuples of two or more on
    one that has (that variable takes one value). An exit whose count the text does not
    tell (`return v`) is taken to match. Reported once, at the method.
    ## Why is this bad?
    The kernel does not compile: the reference raises `TypeError: @consumer_work 'read'
    returned 0 value(s), but the captured schedule expects 1 TaskLocalVariable output(s)`.
    ## Example
    ```python
    @consumer_work(returns=item)
    def get_item(self, stage_info):
        self.offset = stage_info.loop_offset
    ```
    ## Use instead
    Return one value per declared output (`return stage_info.loop_offset`).
    """
    code = "TS328"
    name = "consumer-work-returns-nothing"
    order = 199
    reference_exception = "TypeError"
    reference_checks_at = "kernel"

    def check(self, kernel):
        seen = set()
        for t in kernel.tasks:
            for e in (t.lowered.entries if t.lowered is not None else ()):
                res = kernel.resources.get(e.resource)
                if e.stage not in (ScheduleStage.ConsumerWork, ScheduleStage.ConsumerAuxWork) or res is None \
                        or not e.label:
                    continue
                wm = res.work_methods.get(e.label)
                if wm is None or (wm.defined_on, wm.name) in seen:
                    continue
                text = _return_problem(wm, res)
                if text is None:
                    continue
                seen.add((wm.defined_on, wm.name))
                yield self.diag(text, wm.range, related=[Related(e.range, f"'{t.name}' calls it here")])


def _return_problem(wm, res):
    """TS328's message for one work method, or None."""
    n = len(wm.returns)
    counts = wm.return_counts
    if n:
        names = ", ".join(f"'{x}'" for x in wm.returns)
        if not wm.returns_value:
            return (f"@consumer_work '{wm.name}' declares {n} output(s) ({names}) but never returns a value: "
                    f"it returns None, 0 values where the captured schedule expects {n}")
        if counts is not None and -1 not in counts and n not in counts:
            got = " or ".join(str(c) for c in sorted(counts, reverse=True) if c)
            return (f"@consumer_work '{wm.name}' declares {n} output(s) ({names}) but returns {got} value(s): "
                    f"the captured schedule expects {n}, one per declared output")
        return None
    if counts is None or not counts or 0 in counts:
        return None             # may return None: nothing to assign
    if len(res.tlv_names) != 1:
        return (f"@consumer_work '{wm.name}' returns a value but declares no returns=, and its resource has "
                f"{len(res.tlv_names)} task-local variables (a value without returns= needs exactly one): "
                f"the captured schedule has nowhere to assign it")
    if -1 not in counts and 1 not in counts:
        # the one variable of the resource takes the value: one value, not a tuple of them
        got = " or ".join(str(c) for c in sorted(counts, reverse=True))
        return (f"@consumer_work '{wm.name}' declares no returns= and returns {got} value(s): the captured "
                f"schedule expects 1, for its resource's one task-local variable '{next(iter(res.tlv_names))}'")
    return None


def _returns_program(get_item_body: str = "", mark: bool = False) -> str:
    from ._programs import copy_program
    src = copy_program()
    if get_item_body:
        src = src.replace("        return stage_info.loop_offset\n", get_item_body, 1)
    if mark:
        src = src.replace("    @consumer_work(returns=item)\n", "    @consumer_work(returns=item)  # expect: TS328\n", 1)
    return src


ConsumerWorkReturnsNothing.VALID = [
    _returns_program(),
    # a value on one path is enough for this rule (the count is then checked when traced)
    _returns_program("        if stage_info.loop_offset > 4:\n            return stage_info.loop_offset\n"
                     "        return 0\n"),
    # a one-item tuple is one value; `return v` is taken to match
    _returns_program("        return (stage_info.loop_offset,)\n"),
    _returns_program("        v = (stage_info.loop_offset, 0)\n        return v\n"),
]


def _peek_program(body: str, mark: bool = False) -> str:
    """The copy program with a `@consumer_work` method without `returns=` on Src (two
    task-local variables) that the schedule calls for its effect."""
    src = _returns_program()
    src = src.replace("    @consumer_work(returns=flag)\n",
                      "    @consumer_work" + ("  # expect: TS328" if mark else "") + "\n"
                      "    def peek(self, stage_info):\n" + body + "\n"
                      "    @consumer_work(returns=flag)\n", 1)
    return src.replace("            v = src.get_item()\n", "            src.peek()\n            v = src.get_item()\n", 1)


ConsumerWorkReturnsNothing.VALID += [
    # no returns=: returning nothing is fine whatever the resource holds
    _peek_program("        self.seen = stage_info.loop_offset\n"),
    _peek_program("        if stage_info.loop_offset > 4:\n            return None\n        return 1\n"),
]
ConsumerWorkReturnsNothing.INVALID = [
    _returns_program("        self.last = stage_info.loop_offset\n", mark=True),
    # an auxiliary consumer work (WorkAttr.AUXILIARY) that declares an output is judged too
    _returns_program("        self.last = stage_info.loop_offset\n", mark=True).replace(
        "    @consumer_work(returns=item)  # expect: TS328\n",
        "    @consumer_work(work_attrs=WorkAttr.AUXILIARY, returns=item)  # expect: TS328\n", 1).replace(
        "from ts_runtime import (\n", "from ts_runtime import WorkAttr\nfrom ts_runtime import (\n", 1),
    _returns_program("        return None\n", mark=True),
    _returns_program("        return stage_info.loop_offset, stage_info.stage_idx\n", mark=True),
    # no returns= on a resource with two task-local variables: the value has no slot
    _peek_program("        return stage_info.loop_offset\n", mark=True),
]


@register
class ReturnAnnotationDtype(Rule):
    """A consumer work method annotated to return another DSL type than the task-local
    variable it returns into.

    ## What it does
    For each `@consumer_work` method (auxiliary ones too) a schedule of the kernel calls,
    compares the DSL types its return annotation names (`-> cutlass.Float16`, or `-> Tuple[...]` for
    several outputs) with the `dtype` of each task-local variable the value is stored in
    (its `returns=`, or the resource's only task-local variable). A mismatch is reported
    once, at the method. Not judged: a method without such an annotation, an annotation
    or dtype that is not a cutlass numeric type (`int`, a type alias), and a method that
    returns a Python number literal somewhere (accepted for any numeric variable).
    ## Why is this bad?
    The traced kernel stores the returned value in the variable's slot and accepts only
    a value of exactly that dtype: the reference fails compiling the kernel with
    `TypeError: @consumer_work 'read_smem' returned value for TaskLocalVariable 'smem_val'
    with type Float16, expected Float32` (TS317). The annotation is what the method
    returns in well-typed code, so the mismatch is visible before the kernel is traced,
    typically after the variable's dtype (or the method) was changed alone.
    ## Example
    ```python
    self.smem_val = TaskLocalVariable(dtype=cutlass.Float32, default=cutlass.Float32(0))

    @consumer_work(returns=smem_val)
    @cute.jit
    def read_smem(self, stage_info) -> cutlass.Float16:
        ...
    ```
    ## Use instead
    Make them agree: declare the variable with the type the method returns, or convert
    in the method (`return v.to(cutlass.Float32)` with the annotation changed to match).
    """
    code = "TS329"
    name = "return-annotation-dtype"
    order = 199
    reference_exception = "TypeError"
    reference_checks_at = "kernel"

    def check(self, kernel):
        seen = set()
        for t in kernel.tasks:
            for e in (t.lowered.entries if t.lowered is not None else ()):
                res = kernel.resources.get(e.resource)
                if e.stage not in (ScheduleStage.ConsumerWork, ScheduleStage.ConsumerAuxWork) or res is None \
                        or not e.label:
                    continue
                wm = res.work_methods.get(e.label)
                if wm is None or (wm.defined_on, wm.name) in seen:
                    continue
                text = _dtype_problem(wm, res)
                if text is None:
                    continue
                seen.add((wm.defined_on, wm.name))
                yield self.diag(text, wm.range, related=[Related(e.range, f"'{t.name}' calls it here")])


def _dtype_problem(wm, res):
    """TS329's message for one work method, or None."""
    anns = wm.return_dtypes
    if not anns or wm.returns_literal:
        return None
    outputs = list(wm.returns) if wm.returns else (sorted(res.tlv_names) if len(res.tlv_names) == 1 else [])
    if len(outputs) != len(anns):
        return None             # a count mismatch is TS328's (or not known)
    for ann, out in zip(anns, outputs):
        dtype = res.tlv_dtypes.get(out)
        if ann is not None and dtype is not None and ann != dtype:
            return (f"@consumer_work '{wm.name}' is annotated to return {ann} for task-local variable '{out}', "
                    f"whose dtype is {dtype}: the traced kernel stores only {dtype} values there")
    return None


_DTYPE_PROGRAM = '''\
from dataclasses import dataclass

import cutlass

from ts_runtime import consumer_work, domain_loop, producer_work, schedule
from ts_runtime.resources import MemoryResource, StageInfo, TaskLocalVariable
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager


@dataclass(kw_only=True)
class Src(MemoryResource):
    item: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()

    def __post_init__(self):
        self.item = TaskLocalVariable(dtype=cutlass.Int32, default=cutlass.Int32(0))

    @consumer_work(returns=item)
    def get_item(self, stage_info: StageInfo) -> cutlass.Int32:
        return stage_info.loop_offset


@dataclass(kw_only=True)
class Dst(MemoryResource):
    @producer_work
    def put(self, stage_info: StageInfo, item: cutlass.Int32) -> None:
        pass


def build():
    src, dst = Src(name="src"), Dst(name="dst")

    @schedule
    def copy(src, dst):
        with domain_loop(0, 8, 1):
            v = src.get_item()
            dst.put(item=v)

    task = Task(name="Copy", src_resources=[src], dst_resources=[dst], warp_idx=0, num_warps=1,
                schedule=copy(src, dst))
    return TaskManager(tasks=[task], resource_dependency_graph={dst: [src]}, verbose=False)
'''
_INT16_ANNOTATION = ("def get_item(self, stage_info: StageInfo) -> cutlass.Int32:",
                     "def get_item(self, stage_info: StageInfo) -> cutlass.Int16:")
ReturnAnnotationDtype.VALID = [
    _DTYPE_PROGRAM,
    # no annotation: nothing to compare here (the value's type is checked when traced)
    _DTYPE_PROGRAM.replace(" -> cutlass.Int32:", ":"),
    # a Python literal is accepted for any numeric variable
    _DTYPE_PROGRAM.replace(*_INT16_ANNOTATION).replace("        return stage_info.loop_offset\n",
                                                       "        return 0\n"),
]
ReturnAnnotationDtype.INVALID = [
    _DTYPE_PROGRAM.replace(*_INT16_ANNOTATION).replace("    @consumer_work(returns=item)\n",
                                                       "    @consumer_work(returns=item)  # expect: TS329\n"),
]


rule("TS317", "returned-value-dtype", """
    A returned value incompatible with its `TaskLocalVariable` dtype.

    ## What it does
    Each returned value must match the dtype of the variable it is stored in: a DSL value
    must have exactly that dtype (an `Int64` or `Boolean` into an `Int32` variable is an
    error); a Python `int` is accepted for any number, a `float` for float dtypes. Checked by ts codegen while the kernel is traced (programs: `tests/codegen/rule_programs.py`).
    ## Why is this bad?
    The store would truncate or reinterpret the value.
    ## Example
    A Float32 returned into an Int32 variable.
    ## Use instead
    Convert in the work body, or declare the matching dtype.
    """, phase="codegen", exc="TypeError")
rule("TS318", "incomplete-task-local-variable", """
    A `TaskLocalVariable(...)` without a dtype, or without exactly one of default / default_factory.

    ## What it does
    Checks the constructor arguments.
    ## Why is this bad?
    The variable's storage cannot be allocated and initialised.
    ## Example
    ```python
    TaskLocalVariable(dtype=int)
    ```
    ## Use instead
    ```python
    TaskLocalVariable(dtype=int, default=0)
    ```
    """, phase="object")
rule("TS319", "task-local-variable-reused", """
    One `TaskLocalVariable` instance bound to two resource fields.

    ## What it does
    A variable object belongs to exactly one field of one resource.
    ## Why is this bad?
    Both fields would share one slot and overwrite each other.
    ## Example
    ```python
    shared = TaskLocalVariable(dtype=int, default=0)
    self.a = shared
    self.b = shared
    ```
    ## Use instead
    Create one `TaskLocalVariable` per field.
    """, phase="object")
rule("TS320", "uninitialized-task-local-variable", """
    A field declared as a task-local variable that is never assigned a `TaskLocalVariable`.

    ## What it does
    A field annotated / defaulted with `TaskLocalVariable.uninitialized()` must be set to
    a `TaskLocalVariable` in `__init__` / `__post_init__`.
    ## Why is this bad?
    The placeholder has no dtype or default.
    ## Example
    ```python
    item: object = TaskLocalVariable.uninitialized()   # no __post_init__ assignment
    ```
    ## Use instead
    ```python
    def __post_init__(self):
        self.item = TaskLocalVariable(dtype=int, default=0)
    ```
    """, phase="capture")
rule("TS327", "routed-source-not-a-consumer-var", """
    A routed source variable missing from the writer's consumer variables when slots are allocated.

    ## What it does
    When the kernel allocates the routing slots, every routed source name must exist in
    the writer resource's consumer variables, with a default value to seed the slot (the
    finding points at the work call whose output is routed). Checked by ts codegen while the kernel is traced (programs: `tests/codegen/rule_programs.py`).
    ## Why is this bad?
    The copy has nothing to read.
    ## Example
    A routed `TaskLocalVariable(dtype=cutlass.Int32, default=None)`.
    ## Use instead
    Declare outputs as `TaskLocalVariable` fields.
    """, phase="codegen")


# --------------------------------------------------------------------------- examples
_P = pipeline_program


def _store(body_line: str, extra: str = "") -> str:
    """Store-task schedule with `body_line` in place of `out.store(data=v)`."""
    return f'''\
    with domain_loop(0, 4, 1):
        smem.wait()
        v = smem.read()
        smem.release()
{extra}        {body_line}
    '''


_CONSTEXPR = '''

@dataclass(kw_only=True)
class Parts(MemoryResource):
    @producer_work
    def put(self, stage_info, data, *, part: "cutlass.Constexpr[int]"):
        pass
'''
# `import ts_runtime` binds `cutlass` under the reference (the oracle rewrites the module
# prefix), so both implementations can read the string annotation as cutlass.Constexpr.
_PARTS = [("from dataclasses import dataclass\n", "from dataclasses import dataclass\n\nimport ts_runtime\n"),
          ('Gmem(name="out")\n', 'Parts(name="out")\n')]

_examples("TS301", [_VALID], [_P(store=_store("out.store()  # expect: TS301"))])
_examples("TS302", [_VALID], [_P(store=_store("out.store(v, v)  # expect: TS302"))])
_examples("TS303", [_VALID], [_P(store=_store("out.store(v, data=v)  # expect: TS303"))])
_examples("TS304", [_VALID], [_P(store=_store("out.store(data=v, value=v)  # expect: TS304"))])
_examples("TS305", [_VALID], [_P(store=_store("out.store(data=None)  # expect: TS305\n        out.store(data=v)"))])
_examples("TS306", [_VALID], [_P(store=_store("out.store(data=3)  # expect: TS306\n        out.store(data=v)"))])
_examples("TS307", [_VALID], [_P(store='''\
    with domain_loop(0, 4, 1):
        t = smem.wait()
        v = smem.read()
        smem.release()
        out.store(data=t)  # expect: TS307
        out.store(data=v)
    ''')])
_examples("TS308", [_VALID], [_P(store='''\
    with domain_loop(0, 4, 1):
        smem.wait()
        v = smem.read()
        w = smem.read()
        smem.release()
        out.store(data=v)  # expect: TS308
        out.store(data=w)
    ''')])
_examples("TS309", [_P(store=_store("out.put(data=v, part=1)"), extra=_CONSTEXPR, subs=_PARTS)],
          [_P(store=_store("out.put(data=v, part=v)  # expect: TS309"), extra=_CONSTEXPR, subs=_PARTS)])
_examples("TS310", [_P(store=_store("out.put(data=v, part=1)"), extra=_CONSTEXPR, subs=_PARTS)],
          [_P(store=_store("out.put(data=v)  # expect: TS310"), extra=_CONSTEXPR, subs=_PARTS)])
_examples("TS311", [_VALID], [_P(load='''\
    with domain_loop(0, 4, 1):
        v, w = src.load()  # expect: TS311
        smem.acquire()
        smem.fill(data=v)
        smem.commit()
    ''')])
_examples("TS312", [_VALID], [_P(store='''\
    with domain_loop(0, 4, 1):
        smem.wait()
        v = smem.read()
        out.store(data=v)
        u = smem.read()  # expect: TS312
        smem.release()
    ''')])
_examples("TS313", [_VALID], [_P(extra='''

@dataclass(kw_only=True)
class Probe(MemoryResource):
    @consumer_work(returns=())  # expect: TS313
    def peek(self, stage_info):
        return 0
'''), _P(extra='''

@dataclass(kw_only=True)
class Pair(MemoryResource):
    first: object = TaskLocalVariable.uninitialized()

    def __post_init__(self):
        self.first = TaskLocalVariable(dtype=int, default=0)

    @consumer_work(returns=[first, first])  # expect: TS313
    def load(self, stage_info):
        return stage_info.loop_offset, stage_info.loop_offset
''', subs=[('src, smem, out = Gmem(name="src")', 'src, smem, out = Pair(name="src")')])])
_examples("TS314", [_VALID], [_P(extra='''

@dataclass(kw_only=True)
class Coords(MemoryResource):
    @consumer_work(returns="coord")
    def load(self, stage_info):
        return stage_info.loop_offset
''', subs=[('src, smem, out = Gmem(name="src")', 'src, smem, out = Coords(name="src")'),
           ("        v = src.load()\n", "        v = src.load()  # expect: TS314\n")])])
_examples("TS315", [_VALID], [_P(extra='''

@dataclass(kw_only=True)
class Packet(MemoryResource):
    item: object = TaskLocalVariable.uninitialized()

    def __post_init__(self):
        self.item = TaskLocalVariable(dtype=int, default=0)

    @consumer_work(returns=item)  # expect: TS315
    def load(self, stage_info):
        return {"item": 1}
''')])
_examples("TS318", [_VALID], [_P(extra='''

@dataclass(kw_only=True)
class Counter(MemoryResource):
    count: object = TaskLocalVariable.uninitialized()

    def __post_init__(self):
        self.count = TaskLocalVariable(dtype=int)  # expect: TS318
''', subs=[('src, smem, out = Gmem(name="src")', 'counter = Counter(name="counter")\n'
            '    src, smem, out = Gmem(name="src")')])])
_TWIN = '''

@dataclass(kw_only=True)
class Twin(MemoryResource):
    first: object = TaskLocalVariable.uninitialized()
    second: object = TaskLocalVariable.uninitialized()

    def __post_init__(self):
        shared = TaskLocalVariable(dtype=int, default=0)
        self.first = shared
        self.second = {second}

    @consumer_work(returns=first)
    def load(self, stage_info):
        return stage_info.loop_offset
'''
_examples("TS319", [_P(extra=_TWIN.format(second="TaskLocalVariable(dtype=int, default=0)"),
                       subs=[('src, smem, out = Gmem(name="src")', 'src, smem, out = Twin(name="src")')])],
          [_P(extra=_TWIN.format(second="shared"),
              subs=[('src, smem, out = Gmem(name="src")',
                     'src, smem, out = Twin(name="src")')]).replace(
              '    src, smem, out = Twin(name="src"), Smem(name="smem", pipeline_config=cfg), Gmem(name="out")',
              '    src, smem, out = Twin(name="src"), Smem(name="smem", pipeline_config=cfg), Gmem(name="out")'
              '  # expect: TS319')])
_LAZY = '''

@dataclass(kw_only=True)
class Lazy(MemoryResource):
    item: object = TaskLocalVariable.uninitialized()

    @consumer_work(returns=item)
    def load(self, stage_info):
        return stage_info.loop_offset
'''
_examples("TS320", [_VALID], [_P(extra=_LAZY).replace(
    '    src, smem, out = Gmem(name="src"), Smem(name="smem", pipeline_config=cfg), Gmem(name="out")',
    '    src, smem, out = Lazy(name="src"), Smem(name="smem", pipeline_config=cfg), Gmem(name="out")'
    '  # expect: TS320')])

# manager phase
# TS321 / TS322 on a captured schedule always come with TS201-TS203 on the same entry, and
# the engine keeps only that root cause (engine.CONSEQUENCES); tests/rules/test_dataflow.py
# checks them on hand-built routing tables.
for _code in ("TS321", "TS322", "TS323", "TS324", "TS325", "TS326"):
    _examples(_code, [_VALID, _P(load='''\
    v = src.load()
    with domain_loop(0, 4, 1):
        smem.acquire()
        smem.fill(data=v)
        smem.commit()
        v = src.load()
    smem.acquire()
    smem.fill(data=v)
    smem.commit()
    ''', store=_store("out.store(data=v)").replace("domain_loop(0, 4, 1)", "domain_loop(0, 5, 1)"))])
