"""TS1xx: schedule structure (capture grammar, sections, guards).

The logic lives in `ts_runtime.model.builder` (capture) and `ts_runtime.model.lower`
(task lowering); these are the catalogue entries.
"""
from ..diagnostics import Severity
from .declare import rule

W = Severity.WARNING

rule("TS101", "block-outside-schedule", """
    Schedule blocks (`domain_loop`, `work_tile_loop`, `when_true`, `when_false`) used outside an `@schedule` function.

    ## What it does
    Flags a schedule block opened while no `@schedule` function is being traced.
    ## Why is this bad?
    Blocks only record structure into the schedule being captured; outside one there is nothing to record.
    ## Example
    `with domain_loop(8): ...` at module level.
    ## Use instead
    Open the block inside a function decorated with `@schedule`.
    """)
rule("TS102", "domain-loop-bound-count", """
    `domain_loop` called with other than 1 to 3 positional bounds.

    ## What it does
    Checks that `domain_loop` gets `(end)`, `(start, end)` or `(start, end, step)`, like `range`.
    ## Why is this bad?
    The loop bounds cannot be interpreted.
    ## Example
    `domain_loop(0, 8, 1, 2)`
    ## Use instead
    `domain_loop(0, 8, 1)`
    """)
rule("TS103", "zero-domain-step", """
    A `domain_loop` step of literal 0.

    ## What it does
    Rejects a loop whose step is the integer 0.
    ## Why is this bad?
    The loop would never advance.
    ## Example
    `domain_loop(0, n, 0)`
    ## Use instead
    A non-zero step, e.g. `domain_loop(0, n, 1)`.
    """)
rule("TS104", "none-domain-bound", """
    A `domain_loop` bound that is `None`.

    ## What it does
    Rejects `None` as a start, end or step.
    ## Why is this bad?
    `None` is neither a value nor a dynamic-domain callable.
    ## Example
    `domain_loop(0, None)`
    ## Use instead
    Pass an int, a run-time value, or `MyTask.get_domain`.
    """)
rule("TS105", "instance-bound-domain-getter", """
    A dynamic `domain_loop` bound bound to a Task instance instead of accessed on the class.

    ## What it does
    Requires the callable bound to be the unbound method (`MyTask.get_domain`).
    ## Why is this bad?
    The task that runs the schedule supplies `self`; a bound method would call the wrong object.
    ## Example
    `domain_loop(0, my_task.get_domain)`
    ## Use instead
    `domain_loop(0, MyTask.get_domain)`
    """)
rule("TS106", "domain-getter-signature", """
    A dynamic `domain_loop` bound whose signature is not `(self, work_tile_coord)`.

    ## What it does
    Checks that the getter takes exactly two required positional parameters and is inspectable.
    ## Why is this bad?
    The runtime calls it with the task and the current tile coordinate.
    ## Example
    `def get_domain(self): ...`
    ## Use instead
    `def get_domain(self, work_tile_coord): ...`
    """)
rule("TS107", "nested-domain-loop", """
    A `domain_loop` nested in another `domain_loop`.

    ## What it does
    Rejects nested domain loops.
    ## Why is this bad?
    A schedule has exactly one domain loop; nested iteration belongs inside a work method.
    ## Example
    `with domain_loop(4):` inside `with domain_loop(8):`
    ## Use instead
    Flatten into one domain, or loop inside the `@cute.jit` work body.
    """)
rule("TS108", "multiple-domain-loops", """
    More than one `domain_loop` in one schedule.

    ## What it does
    Counts domain loops (sequential ones included) when the task lowers its schedule.
    ## Why is this bad?
    Head / loop / tail sections are defined by the single domain loop.
    ## Example
    Two `with domain_loop(...)` blocks one after the other.
    ## Use instead
    One domain loop; split the work into two tasks if it really needs two loops.
    """, phase="task")
rule("TS109", "dynamic-domain-start-or-step", """
    A callable `start` or `step` bound of `domain_loop`.

    ## What it does
    Only the `end` bound may be a dynamic (per-tile) getter.
    ## Why is this bad?
    The lowering supports per-tile ends only (the docs claim more; the reference rejects it).
    ## Example
    `domain_loop(MyTask.get_domain, 8)`
    ## Use instead
    `domain_loop(0, MyTask.get_domain)`
    """, phase="task")
rule("TS110", "missing-domain-loop", """
    A task schedule with no `domain_loop`.

    ## What it does
    Every schedule needs a domain loop, even a padding task's.
    ## Why is this bad?
    The task has no domain and cannot be built.
    ## Example
    An empty `@schedule` body used for a padding task.
    ## Use instead
    `with domain_loop(1): pass`
    """, phase="task")
rule("TS111", "domain-getter-not-get-domain", """
    A dynamic `domain_loop` end that is not a `get_domain` override of the task's class.

    ## What it does
    The callable end must be the `get_domain` attribute of a Task subclass in the task's MRO.
    ## Why is this bad?
    The runtime calls `task.get_domain(tile)`; a differently named method is never called (the docs say any name works; the reference rejects it).
    ## Example
    `domain_loop(0, VarlenTask.get_domain_size)`
    ## Use instead
    Name the method `get_domain` and build the task from that class.
    """, phase="task")
rule("TS112", "missing-task-schedule", """
    `Task(schedule=None)`, or a `schedule=` that is not a captured schedule.

    ## What it does
    Requires a captured schedule (the result of calling an `@schedule` function with the
    task's resources) on every task: not `None`, not the `@schedule` function itself
    (`schedule=load_schedule`, not called), not a number or other plain value. ts-lint
    reports a value it knows is such.
    ## Why is this bad?
    A task without a schedule has nothing to run. The reference rejects `None` with a
    ValueError and fails on anything else with `AttributeError: 'function' object has no
    attribute 'schedule_list'`.
    ## Example
    `Task(..., schedule=None)`, `Task(..., schedule=load_schedule)`
    ## Use instead
    `Task(..., schedule=my_schedule(res_a, res_b))`
    """, phase="task")
rule("TS140", "task-resources-not-a-list", """
    `Task(src_resources=smem)`: a single resource (or a number) where a list is expected.

    ## What it does
    Requires `src_resources` and `dst_resources` to be lists (or tuples) of resources;
    `None` is an empty list. Both front ends report a single resource given bare, at the
    argument.
    ## Why is this bad?
    The Task iterates the value: Python raises `TypeError: 'Smem' object is not
    iterable` when the Task is built (the reference too), and the kernel is never
    checked or built.
    ## Example
    `Task(name="Load", src_resources=gmem, dst_resources=[smem], ...)`
    ## Use instead
    `Task(name="Load", src_resources=[gmem], dst_resources=[smem], ...)`
    """, phase="task", exc="TypeError")
rule("TS113", "invalid-unroll", """
    A `domain_loop` `unroll` that is not a compile-time int or None.

    ## What it does
    Checks the unroll hint's type (bools are rejected).
    ## Why is this bad?
    The unroll factor must be known when the kernel is generated.
    ## Example
    `domain_loop(0, n, 1, unroll=True)`
    ## Use instead
    `unroll=4` or `unroll=None`.
    """, phase="task")
rule("TS114", "nested-work-tile-loop", """
    `work_tile_loop` that is not a top-level block.

    ## What it does
    Rejects a persistent tile loop inside `domain_loop`, a condition or another tile loop.
    ## Why is this bad?
    The tile loop is the outermost loop of a persistent kernel.
    ## Example
    `with work_tile_loop(wq):` inside `with domain_loop(...)`.
    ## Use instead
    Put `work_tile_loop` at the top of the schedule and the `domain_loop` inside it.
    """)
rule("TS115", "multiple-work-tile-loops", """
    More than one `work_tile_loop` in a schedule.

    ## What it does
    Allows at most one persistent tile loop.
    ## Why is this bad?
    A task walks one stream of work tiles.
    ## Example
    Two `with work_tile_loop(wq)` blocks.
    ## Use instead
    One tile loop containing all per-tile work.
    """)
rule("TS116", "step-before-work-tile-loop", """
    A non-auxiliary step or a block recorded before `work_tile_loop` opens.

    ## What it does
    Only auxiliary work and barrier resources (PDL barriers, groups) may precede the persistent loop.
    ## Why is this bad?
    Anything else would run once instead of once per tile.
    ## Example
    `smem.acquire()` before `with work_tile_loop(wq):`
    ## Use instead
    Move the step inside the tile loop, or make it `WorkAttr.AUXILIARY` work.
    """)
rule("TS117", "block-after-work-tile-loop", """
    A block opened after `work_tile_loop` closed.

    ## What it does
    Nothing structural may follow the persistent loop.
    ## Why is this bad?
    Per-tile structure after the tile loop would never run per tile.
    ## Example
    `with domain_loop(...)` after the `work_tile_loop` block.
    ## Use instead
    Move the block inside the tile loop.
    """)
rule("TS118", "step-after-work-tile-loop", """
    A non-auxiliary step recorded after `work_tile_loop` closed.

    ## What it does
    Only auxiliary work and barrier resources (e.g. `launch_griddep`) may follow the persistent loop.
    ## Why is this bad?
    The step would run once after all tiles, outside the pipeline protocol.
    ## Example
    `out.store()` after the tile loop.
    ## Use instead
    Move it inside the tile loop.
    """)
rule("TS119", "unbalanced-blocks", """
    Schedule blocks closed out of order or left open.

    ## What it does
    Blocks must close in LIFO order and all be closed at the end of capture.
    ## Why is this bad?
    The schedule tree is ill-formed (only reachable with manual `__enter__`/`__exit__`).
    ## Example
    Calling `__exit__` on an outer block before the inner one.
    ## Use instead
    Use `with` statements.
    """)
rule("TS120", "skippable-without-skip-if", """
    `skippable()` without `work_tile_loop(skip_if=...)`.

    ## What it does
    A skippable region needs a skip predicate on its tile loop.
    ## Why is this bad?
    Without a predicate no tile is ever skipped.
    ## Example
    `with work_tile_loop(wq) as t, t.skippable():`
    ## Use instead
    `work_tile_loop(wq, skip_if=MyQueue.is_empty_tile)`
    """)
rule("TS121", "nested-skippable", """
    A `skippable()` block inside another.

    ## What it does
    Rejects nested skippable regions.
    ## Why is this bad?
    A tile is either skipped or not; nesting has no meaning.
    ## Example
    `with t.skippable(): with t.skippable(): ...`
    ## Use instead
    One skippable region.
    """)
rule("TS122", "domain-loop-outside-skippable", """
    With `skip_if`, a `domain_loop` outside `skippable()`.

    ## What it does
    When tiles can be skipped the domain loop must sit in the skippable region.
    ## Why is this bad?
    A skipped tile runs zero iterations; the loop must be marked as skippable.
    ## Example
    `with work_tile_loop(wq, skip_if=...): with domain_loop(...)`
    ## Use instead
    `with work_tile_loop(wq, skip_if=...) as t, t.skippable(), domain_loop(...):`
    """)
rule("TS123", "stale-loop-handle", """
    A loop handle method used after its `with` block exited.

    ## What it does
    `first_iter()`, `last_iter()`, `every()` and `skippable()` need their loop block open.
    ## Why is this bad?
    The guard would not belong to any loop.
    ## Example
    `d.first_iter()` after `with domain_loop(...) as d:` ended.
    ## Use instead
    Use the handle inside its block.
    """)
rule("TS124", "iteration-guard-outside-domain-loop", """
    An iteration predicate block outside a `domain_loop`.

    ## What it does
    `FIRST_ITER`, `LAST_ITER` and `Every` conditions need an enclosing domain loop.
    ## Why is this bad?
    There is no iteration index to test.
    ## Example
    `with when_true(FIRST_ITER):` in the head.
    ## Use instead
    Put the block inside the domain loop, or use `d.first_iter()`.
    """)
rule("TS125", "nested-condition-blocks", """
    Per-iteration or opaque condition blocks nested in each other.

    ## What it does
    Condition blocks are siblings only (`skippable()` may contain them).
    ## Why is this bad?
    Each entry carries a single guard.
    ## Example
    `with d.first_iter(): with when_true(flag): ...`
    ## Use instead
    Compute a combined condition in a work method, or use sibling blocks.
    """)
rule("TS126", "negated-iteration-predicate", """
    `when_false` with an iteration predicate.

    ## What it does
    Iteration predicates cannot be negated.
    ## Why is this bad?
    The negation is not representable as a loop guard.
    ## Example
    `with when_false(FIRST_ITER):`
    ## Use instead
    Restructure with `d.every(...)` or an opaque condition.
    """)
rule("TS127", "key-on-iteration-predicate", """
    `key=` passed with an iteration predicate.

    ## What it does
    Warns that the correlation key is ignored.
    ## Why is this bad?
    Keys correlate opaque run-time conditions only; this one is decided by the iteration index.
    ## Example
    `when_true(LAST_ITER, key="x")`
    ## Use instead
    Drop `key=`.
    """, severity=W)
rule("TS128", "guard-outside-loop-section", """
    An opaque `when_true`/`when_false` block outside the `domain_loop`.

    ## What it does
    Only loop entries may carry a guard; the reference accepts the capture and fails at `Task(...)`.
    ## Why is this bad?
    Head and tail entries run unconditionally.
    ## Example
    `with when_true(flag): smem.acquire()` before the domain loop.
    ## Use instead
    Move the block inside the domain loop.
    """, phase="task")
rule("TS129", "invalid-every", """
    `Every(period, start)` with a non-int, non-positive period or negative start.

    ## What it does
    Both must be ints, `period > 0`, `start >= 0`, within a signed 32-bit range.
    ## Why is this bad?
    The guard would never or always fire.
    ## Example
    `d.every(0)`
    ## Use instead
    `d.every(4, start=0)`
    """, phase="object", exc="ValueError")
rule("TS130", "condition-without-variable", """
    An opaque condition token that carries no variable.

    ## What it does
    `when_true(tok)` requires `tok` to come from `@consumer_work(returns=...)`.
    ## Why is this bad?
    The runtime has no stored value to test.
    ## Example
    `with when_true(smem.acquire()):`
    ## Use instead
    `flag = res.compute_flag()` with `@consumer_work(returns=flag)`.
    """)
rule("TS131", "stale-condition-token", """
    An opaque condition token that is not the latest handle for its variable.

    ## What it does
    Rejects a condition read after its variable was produced again.
    ## Why is this bad?
    The runtime reads the stored (latest) value, not the one the code seems to test.
    ## Example
    `a = r.f(); b = r.f(); with when_true(a):`
    ## Use instead
    Test the latest token.
    """)
rule("TS132", "too-many-opaque-keys", """
    More than 4 distinct opaque condition keys.

    ## What it does
    Warns that validation enumerates 2**k true/false assignments.
    ## Why is this bad?
    Validation time grows exponentially.
    ## Example
    Five independent `when_true` conditions.
    ## Use instead
    Share keys (`key=`) where tasks branch on the same value.
    """, phase="manager", severity=W, order=240)
rule("TS133", "head-loop-producer-overlap", """
    Producer work on one resource in both the head and the loop of a task.

    ## What it does
    Warns when a `dst_resources` resource has ProducerWork in the head and in the loop.
    ## Why is this bad?
    Head work and iteration 0 both see `loop_offset == 0` and may write the same stage data.
    ## Example
    `smem.fill()` before and inside the domain loop.
    ## Use instead
    Guard the loop copy with `d.first_iter()` or move the head work into the loop.
    """, phase="manager", severity=W, order=180)
rule("TS134", "legacy-schedule-tuple-shape", """
    A legacy schedule-list item that is not a well-formed 2-5 tuple.

    ## What it does
    Checks `(resource, stage[, section[, guard]])` tuples of a hand-written ScheduleResult.
    ## Why is this bad?
    The entry cannot be interpreted.
    ## Example
    `ScheduleResult(schedule_list=[(smem,)])`
    ## Use instead
    Write schedules with `@schedule`.
    """, phase="task", open_reason="legacy ScheduleResult lists are not accepted by ts_runtime; @schedule capture cannot produce them")
rule("TS135", "legacy-schedule-section-order", """
    Legacy schedule-list sections not contiguous Head, Loop, Tail.

    ## What it does
    Checks a hand-written ScheduleResult list's section order.
    ## Why is this bad?
    The lowering assumes one contiguous run per section.
    ## Example
    A Head entry after a Loop entry.
    ## Use instead
    Write schedules with `@schedule`.
    """, phase="task", open_reason="legacy ScheduleResult lists are not accepted by ts_runtime; @schedule capture cannot produce them")

rule("TS136", "unbound-name-in-schedule", """
    A name read in an `@schedule` function body that has no value at that point.

    ## What it does
    Flags a name the schedule body reads before any assignment to it has run (a local
    variable read before it is assigned, e.g. two statements in the wrong order), or a
    name bound nowhere: not in the schedule, an enclosing function, the module, nor the
    builtins (e.g. a deleted assignment). Python semantics: a name assigned anywhere in
    the body is local to it for the whole body.
    ## Why is this bad?
    The schedule body runs once at capture time; the read raises `NameError` (or
    `UnboundLocalError`) there and no schedule is built.
    ## Example
    `res` is read by `set_item` one line before `get_item` assigns it.
    ## Use instead
    Assign the name before the statement that reads it (or define it in the enclosing function).
    """, exc="NameError")


rule("TS138", "nameless-schedule-function", """
    An `@schedule` made from a callable that has no `__name__`, called.

    ## What it does
    Reports the call of a schedule built by `schedule(functools.partial(body, ...))`: a
    `functools.partial` object has no `__name__`, which the schedule is named after when
    it is captured. ts-lint reports it when the partial is made in the `schedule(...)`
    call itself (nothing can have named it).
    ## Why is this bad?
    The reference fails with `AttributeError: 'functools.partial' object has no attribute
    '__name__'` at the call, and the kernel is never built.
    ## Example
    `copy = schedule(functools.partial(copy_body, 8))`, then `schedule=copy(src, dst)`.
    ## Use instead
    Name the partial first (`p = functools.partial(copy_body, 8); p.__name__ = "copy"`),
    or write a `def` that calls the body and decorate that.
    """, exc="AttributeError")


def unbound_name_message(name: str, schedule: str, local: bool) -> str:
    """TS136's message (the runtime's NameError and ts-lint's finding)."""
    if local:
        return f"local variable '{name}' is read before it is assigned in schedule '{schedule}'"
    return f"name '{name}' is not defined in schedule '{schedule}'"


def missing_getter_message(cls: str, name: str) -> str:
    """TS111's message for a `domain_loop` bound naming an attribute its class does not
    have (the runtime's AttributeError and ts-lint's finding)."""
    return (f"type object '{cls}' has no attribute '{name}': a callable domain_loop() bound must be "
            "the `get_domain` method of the task's Task subclass (e.g. MyTask.get_domain)")


# ---------------------------------------------------------------------------- manager checks
from ..enums import OpaqueCondition, ScheduleStage  # noqa: E402
from .base import Rule  # noqa: E402
from .registry import RULES, register  # noqa: E402


class _OpaqueKeys(RULES["TS132"]):
    def check(self, kernel):
        keys, first = [], {}
        for t in kernel.tasks:
            for e in (t.lowered.entries if t.lowered else ()):
                if isinstance(e.guard, OpaqueCondition) and e.guard.key not in first:
                    first[e.guard.key] = e.range
                    keys.append(e.guard.key)
        if len(keys) > 4:
            yield self.diag(f"{len(keys)} distinct opaque correlation keys; validation runs 2**{len(keys)} "
                            "assignments", kernel.range)


class _HeadLoopOverlap(RULES["TS133"]):
    def check(self, kernel):
        for t in kernel.tasks:
            if t.lowered is None:
                continue
            for rid in t.dst:
                head = [e for e in t.lowered.head if e.resource == rid and e.stage is ScheduleStage.ProducerWork]
                loop = [e for e in t.lowered.loop if e.resource == rid and e.stage is ScheduleStage.ProducerWork]
                if head and loop:
                    yield self.diag(f"[head-loop-overlap] task '{t.name}' has ProducerWork on "
                                    f"'{kernel.name(rid)}' in both head and loop; head and iteration 0 both "
                                    "see loop_offset=0", loop[0].range,
                                    related=[_rel(head[0].range, "head producer work")])


def _rel(rng, msg):
    from ..diagnostics import Related
    return Related(rng, msg)


for _cls in (_OpaqueKeys, _HeadLoopOverlap):
    _cls.__doc__ = _cls.__mro__[1].__doc__
    _cls.__name__ = _cls.__mro__[1].__name__
    RULES[_cls.code] = _cls


# ---------------------------------------------------------------------------- examples
from ._programs import COPY_BODY, copy_program, custom_program  # noqa: E402


def _examples(code, valid=(), invalid=()):
    RULES[code].VALID = [*valid]
    RULES[code].INVALID = [*invalid]


_VALID = copy_program()

_examples("TS101", [_VALID], [custom_program('''
    def build():
        with domain_loop(8):  # expect: TS101
            pass
    ''')])
_examples("TS102", [_VALID], [copy_program('''
    with domain_loop(0, 8, 1, 2):  # expect: TS102
        v = src.get_item()
        dst.set_item(data=v)
    ''')])
_examples("TS103", [_VALID], [copy_program('''
    with domain_loop(0, 8, 0):  # expect: TS103
        v = src.get_item()
        dst.set_item(data=v)
    ''')])
_examples("TS104", [_VALID], [copy_program('''
    with domain_loop(0, None):  # expect: TS104
        v = src.get_item()
        dst.set_item(data=v)
    ''')])
_examples("TS107", [_VALID], [copy_program('''
    with domain_loop(0, 8, 1):
        with domain_loop(0, 2):  # expect: TS107
            v = src.get_item()
            dst.set_item(data=v)
    ''')])
_examples("TS108", [_VALID], [copy_program('''
    with domain_loop(0, 8, 1):
        v = src.get_item()
        dst.set_item(data=v)
    with domain_loop(0, 8, 1):  # expect: TS108
        w = src.get_item()
        dst.set_item(data=w)
    ''')])
_examples("TS110", [_VALID], [custom_program('''
    def build():
        src, dst = Src(name="src"), Dst(name="dst")

        @schedule
        def copy(src, dst):
            v = src.get_item()
            dst.set_item(data=v)

        task = Task(name="Copy", src_resources=[src], dst_resources=[dst], warp_idx=0, num_warps=1,
                    schedule=copy(src, dst))  # expect: TS110
        return TaskManager(tasks=[task], resource_dependency_graph={dst: [src]}, verbose=False)
    ''')])
_examples("TS113", [copy_program('''
    with domain_loop(0, 8, 1, unroll=2):
        v = src.get_item()
        dst.set_item(data=v)
    ''')], [copy_program('''
    with domain_loop(0, 8, 1, unroll=True):  # expect: TS113
        v = src.get_item()
        dst.set_item(data=v)
    ''')])
_examples("TS123", [copy_program('''
    with domain_loop(0, 8, 1) as d:
        v = src.get_item()
        dst.set_item(data=v)
        with d.first_iter():
            dst.fill()
    ''')], [copy_program('''
    with domain_loop(0, 8, 1) as d:
        v = src.get_item()
        dst.set_item(data=v)
    with d.first_iter():  # expect: TS123
        dst.fill()
    ''')])
_examples("TS124", [copy_program('''
    with domain_loop(0, 8, 1):
        v = src.get_item()
        dst.set_item(data=v)
        with when_true(FIRST_ITER):
            dst.fill()
    ''')], [copy_program('''
    with when_true(FIRST_ITER):  # expect: TS124
        dst.fill()
    with domain_loop(0, 8, 1):
        v = src.get_item()
        dst.set_item(data=v)
    ''')])
_examples("TS125", [copy_program('''
    with domain_loop(0, 8, 1) as d:
        v = src.get_item()
        dst.set_item(data=v)
        with d.first_iter():
            dst.fill()
        with d.last_iter():
            dst.fill()
    ''')], [copy_program('''
    with domain_loop(0, 8, 1) as d:
        v = src.get_item()
        dst.set_item(data=v)
        with d.first_iter():
            with d.last_iter():  # expect: TS125
                dst.fill()
    ''')])
_examples("TS126", [copy_program('''
    with domain_loop(0, 8, 1):
        v = src.get_item()
        dst.set_item(data=v)
        f = src.get_flag()
        with when_false(f):
            dst.fill()
    ''')], [copy_program('''
    with domain_loop(0, 8, 1):
        v = src.get_item()
        dst.set_item(data=v)
        with when_false(FIRST_ITER):  # expect: TS126
            dst.fill()
    ''')])
_examples("TS127", [copy_program('''
    with domain_loop(0, 8, 1):
        v = src.get_item()
        dst.set_item(data=v)
        with when_true(LAST_ITER):
            dst.fill()
    ''')], [copy_program('''
    with domain_loop(0, 8, 1):
        v = src.get_item()
        dst.set_item(data=v)
        with when_true(LAST_ITER, key="last"):  # expect: TS127
            dst.fill()
    ''')])
_examples("TS128", [copy_program('''
    with domain_loop(0, 8, 1):
        f = src.get_flag()
        with when_true(f):
            v = src.get_item()
            dst.set_item(data=v)
    ''')], [copy_program('''
    f = src.get_flag()
    with when_true(f):
        dst.fill()  # expect: TS128
    with domain_loop(0, 8, 1):
        v = src.get_item()
        dst.set_item(data=v)
    ''')])
_examples("TS129", [copy_program('''
    with domain_loop(0, 8, 1) as d:
        v = src.get_item()
        dst.set_item(data=v)
        with d.every(2, start=1):
            dst.fill()
    ''')], [copy_program('''
    with domain_loop(0, 8, 1) as d:
        v = src.get_item()
        dst.set_item(data=v)
        with d.every(0):  # expect: TS129
            dst.fill()
    ''')])
_examples("TS130", [copy_program('''
    with domain_loop(0, 8, 1):
        v = src.get_item()
        dst.set_item(data=v)
        f = src.get_flag()
        with when_true(f):
            dst.fill()
    ''')], [copy_program('''
    with domain_loop(0, 8, 1):
        v = src.get_item()
        t = dst.set_item(data=v)
        with when_true(t):  # expect: TS130
            dst.fill()
    ''')])
_examples("TS131", [copy_program('''
    with domain_loop(0, 8, 1):
        v = src.get_item()
        dst.set_item(data=v)
        f = src.get_flag()
        with when_true(f):
            dst.fill()
    ''')], [copy_program('''
    with domain_loop(0, 8, 1):
        v = src.get_item()
        dst.set_item(data=v)
        f = src.get_flag()
        g = src.get_flag()
        with when_true(g):
            dst.fill()
        with when_true(f):  # expect: TS131
            dst.fill()
    ''')])
_examples("TS132", [_VALID], [custom_program('''
    def build():
        src, dst = Src(name="src"), Dst(name="dst")

        @schedule
        def copy(src, dst):
            with domain_loop(0, 8, 1):
                v = src.get_item()
                dst.set_item(data=v)
                for k in range(5):
                    f = src.get_flag()
                    with when_true(f, key=k):
                        dst.fill()

        task = Task(name="Copy", src_resources=[src], dst_resources=[dst], warp_idx=0, num_warps=1,
                    schedule=copy(src, dst))
        return TaskManager(tasks=[task], resource_dependency_graph={dst: [src]},  # expect: TS132
                           verbose=False)
    ''')])
_examples("TS133", [copy_program('''
    dst.fill()
    with domain_loop(0, 8, 1) as d:
        v = src.get_item()
    ''')], [copy_program('''
    dst.fill()
    with domain_loop(0, 8, 1):
        v = src.get_item()
        dst.set_item(data=v)  # expect: TS133
    ''')])

from ._programs import PERSISTENT_BODY, dynamic_program, persistent_program  # noqa: E402

_DYN_VALID = dynamic_program('''
    with domain_loop(0, VarlenTask.get_domain, 1):
        v = src.get_item()
        dst.set_item(data=v)
    ''')
_examples("TS105", [_DYN_VALID], [dynamic_program('''
    helper = VarlenTask.__new__(VarlenTask)
    with domain_loop(0, helper.get_domain, 1):  # expect: TS105
        v = src.get_item()
        dst.set_item(data=v)
    ''')])
_examples("TS106", [_DYN_VALID], [dynamic_program('''
    with domain_loop(0, VarlenTask.bad_domain, 1):  # expect: TS106
        v = src.get_item()
        dst.set_item(data=v)
    ''')])
_examples("TS109", [_DYN_VALID], [dynamic_program('''
    with domain_loop(VarlenTask.get_domain, 8, 1):  # expect: TS109
        v = src.get_item()
        dst.set_item(data=v)
    ''')])
_examples("TS111", [_DYN_VALID], [dynamic_program('''
    with domain_loop(0, VarlenTask.get_rows, 1):  # expect: TS111
        v = src.get_item()
        dst.set_item(data=v)
    '''), dynamic_program('''
    # a getter the class does not have: the schedule's AttributeError carries the finding
    with domain_loop(0, VarlenTask.get_domian, 1):  # expect: TS111
        v = src.get_item()
        dst.set_item(data=v)
    ''')])
_P_VALID = persistent_program()
_examples("TS114", [_P_VALID], [persistent_program('''
    with domain_loop(0, 8, 1):
        with work_tile_loop(wq):  # expect: TS114
            v = src.get_item()
            dst.set_item(data=v)
    ''')])
_examples("TS115", [_P_VALID], [persistent_program('''
    with work_tile_loop(wq):
        with domain_loop(0, 8, 1):
            v = src.get_item()
            dst.set_item(data=v)
        wq.try_wait()
        wq.wait()
        wq.get_and_advance_work_tile()
        wq.release()
    with work_tile_loop(wq):  # expect: TS115
        pass
    ''')])
_examples("TS116", [_P_VALID], [persistent_program('''
    dst.fill()  # expect: TS116
    with work_tile_loop(wq):
        with domain_loop(0, 8, 1):
            v = src.get_item()
            dst.set_item(data=v)
        wq.try_wait()
        wq.wait()
        wq.get_and_advance_work_tile()
        wq.release()
    ''')])
_examples("TS117", [_P_VALID], [persistent_program('''
    with work_tile_loop(wq):
        wq.try_wait()
        wq.wait()
        wq.get_and_advance_work_tile()
        wq.release()
    with domain_loop(0, 8, 1):  # expect: TS117
        v = src.get_item()
        dst.set_item(data=v)
    ''')])
_examples("TS118", [_P_VALID], [persistent_program(PERSISTENT_BODY + '''\
dst.fill()  # expect: TS118
''')])
_examples("TS120", [_P_VALID], [persistent_program('''
    with work_tile_loop(wq) as tiles:
        with tiles.skippable(), domain_loop(0, 8, 1):  # expect: TS120
            v = src.get_item()
            dst.set_item(data=v)
        wq.try_wait()
        wq.wait()
        wq.get_and_advance_work_tile()
        wq.release()
    ''')])
_examples("TS121", [_P_VALID], [persistent_program('''
    with work_tile_loop(wq, skip_if=Queue.skip_work_tile_if) as tiles:
        with tiles.skippable():
            with tiles.skippable(), domain_loop(0, 8, 1):  # expect: TS121
                v = src.get_item()
                dst.set_item(data=v)
        wq.try_wait()
        wq.wait()
        wq.get_and_advance_work_tile()
        wq.release()
    ''')])
_examples("TS122", [_P_VALID], [persistent_program('''
    with work_tile_loop(wq, skip_if=Queue.skip_work_tile_if) as tiles:
        with domain_loop(0, 8, 1):  # expect: TS122
            v = src.get_item()
            dst.set_item(data=v)
        wq.try_wait()
        wq.wait()
        wq.get_and_advance_work_tile()
        wq.release()
    ''')])
_examples("TS119", [_VALID], [copy_program('''
    loop = domain_loop(0, 8, 1)
    loop.__enter__()
    v = src.get_item()
    dst.set_item(data=v)
    first = when_true(FIRST_ITER)
    first.__enter__()
    loop.__exit__(None, None, None)  # expect: TS119
    ''')])
_examples("TS112", [_VALID], [custom_program('''
    def build():
        src, dst = Src(name="src"), Dst(name="dst")
        task = Task(name="Copy", src_resources=[src], dst_resources=[dst], warp_idx=0, num_warps=1,
                    schedule=None)  # expect: TS112
        return TaskManager(tasks=[task], resource_dependency_graph={dst: [src]}, verbose=False)
    '''), copy_program().replace("schedule=copy(src, dst))", "schedule=copy)  # expect: TS112"),
    copy_program().replace("schedule=copy(src, dst))", "schedule=1)  # expect: TS112")])

_TASK_LINE = "src_resources=[src], dst_resources=[dst], warp_idx=0, num_warps=1,"
_examples("TS140", [_VALID], [
    copy_program().replace(_TASK_LINE, "src_resources=src, dst_resources=[dst], warp_idx=0, num_warps=1,"
                                       "  # expect: TS140"),
    copy_program().replace(_TASK_LINE, "src_resources=[src], dst_resources=dst, warp_idx=0, num_warps=1,"
                                       "  # expect: TS140")])

_NAMELESS = custom_program('''
    def copy_body(n, src, dst):
        with domain_loop(0, n, 1):
            v = src.get_item()
            dst.set_item(data=v)


    def build():
        src, dst = Src(name="src"), Dst(name="dst")
        body = functools.partial(copy_body, 8)
        body.__name__ = "copy"
        copy = schedule(body)
        task = Task(name="Copy", src_resources=[src], dst_resources=[dst], warp_idx=0, num_warps=1,
                    schedule=copy(src, dst))
        return TaskManager(tasks=[task], resource_dependency_graph={dst: [src]}, verbose=False)
    ''', extra="\nimport functools\n")
_NAMED = '''    body = functools.partial(copy_body, 8)
    body.__name__ = "copy"
    copy = schedule(body)'''
assert _NAMED in _NAMELESS
_examples("TS138", [_NAMELESS], [_NAMELESS.replace(
    _NAMED, "    copy = schedule(functools.partial(copy_body, 8))").replace(
    "schedule=copy(src, dst))", "schedule=copy(src, dst))  # expect: TS138")])

_examples("TS136", [copy_program('''
    start, stop = 0, 8
    with domain_loop(start, stop, 1):
        v = src.get_item()
        dst.set_item(data=v)
    '''), custom_program('''
    def build():
        src, dst = Src(name="src"), Dst(name="dst")
        num_iters = 8

        @schedule
        def copy(src, dst):
            with domain_loop(0, num_iters, 1):
                v = src.get_item()
                dst.set_item(data=v)

        task = Task(name="Copy", src_resources=[src], dst_resources=[dst], warp_idx=0, num_warps=1,
                    schedule=copy(src, dst))
        return TaskManager(tasks=[task], resource_dependency_graph={dst: [src]}, verbose=False)
    '''), copy_program('''
    with domain_loop(0, 8, 1):
        if DEBUG:
            dst.set_item(data=trace)
        v = src.get_item()
        dst.set_item(data=v)
    ''', extra="\nDEBUG = False\n")], [copy_program('''
    with domain_loop(0, 8, 1):
        v = src.get_item()
        dst.set_item(data=value)  # expect: TS136
    '''), copy_program('''
    with domain_loop(0, 8, 1):
        dst.set_item(data=v)  # expect: TS136
        v = src.get_item()
    '''), copy_program('''
    with domain_loop(0, 8, 1):
        for k in range(2):
            dst.set_item(data=v)  # expect: TS136
            v = src.get_item()
    ''')])


# TS137: a Dst subclass whose own __init__ / __post_init__ reads a name with no value
_SETUP_EXTRA = '''

TILE = 128


@dataclass(kw_only=True)
class Staged(Dst):
    size: int = 0

    def __init__(self, tile, **kwargs):
        super().__init__(**kwargs)
        elems = tile * 2
        self.size = elems * 4
'''
_SETUP_BUILD = ('    src, dst = Src(name="src"), Dst(name="dst")',
                '    src, dst = Src(name="src"), Staged(tile=TILE, name="dst")')


def _setup_program(old: str = "", new: str = "", mark: bool = False) -> str:
    extra = _SETUP_EXTRA.replace(old, new, 1) if old else _SETUP_EXTRA
    src = copy_program(extra=extra).replace(*_SETUP_BUILD, 1)
    if mark:
        src = src.replace("        self.size = elems * 4\n", "        self.size = elems * 4  # expect: TS137\n", 1)
    return src


rule("TS137", "unbound-name-in-resource-init", """
    A name a resource's own `__init__` / `__post_init__` reads that has no value there.

    ## What it does
    The TS136 analysis, on the constructor of a `MemoryResource` subclass: a local
    variable read before it is assigned (two statements swapped), or a name bound nowhere
    (its assignment deleted). At run time the NameError of the method's own body carries
    the finding; ts-lint reports the reads that certainly fail.
    ## Why is this bad?
    The resource is never built: the module fails at that line with NameError.
    ## Example
    `elem_bytes` used by `SmemAllocation(...)` one line before it is computed.
    ## Use instead
    Compute the value before the statement that reads it.
    """, phase="object", exc="NameError")
_examples("TS137", [_setup_program()], [
    _setup_program("        elems = tile * 2\n", "", mark=True),
    _setup_program("        elems = tile * 2\n        self.size = elems * 4\n",
                   "        self.size = elems * 4\n        elems = tile * 2\n", mark=True),
])


# TS139: a Task subclass whose own __init__ never runs Task.__init__
def _own_task_init(super_call: bool) -> str:
    src = dynamic_program('''
    with domain_loop(0, VarlenTask.get_domain, 1):
        v = src.get_item()
        dst.set_item(data=v)
    ''')
    init = "    def __init__(self, rows, **kwargs):\n"
    if super_call:
        init += "        super().__init__(**kwargs)\n"
    init += "        self.rows = rows\n\n"
    src = src.replace("class VarlenTask(Task):\n", "class VarlenTask(Task):\n" + init, 1)
    mark = "" if super_call else "  # expect: TS139"
    head = '    task = VarlenTask(name="Copy", src_resources=[src], dst_resources=[dst], warp_idx=0,'
    assert head in src
    return src.replace(head, head.replace("(name=", "(rows=4, name=") + mark, 1)


rule("TS139", "task-init-without-super-init", """
    A Task subclass whose own `__init__` never calls `super().__init__(...)`.

    ## What it does
    A `Task` subclass that writes its own `__init__` (to keep per-task data such as the
    row lengths its `get_domain` reads) must still initialise the Task through
    `super().__init__(**kwargs)` (or `Task.__init__(self, ...)`). Reported at the
    construction: by the runtime after the `__init__` returns, by ts-lint when the method
    contains no base `__init__` call.
    ## Why is this bad?
    The task has no schedule, warps or resources: `'...Task' object has no attribute
    'src_resources'` when the TaskManager is built.
    ## Example
    ```python
    class VarlenTask(Task):
        def __init__(self, rows, **kwargs):
            self.rows = rows              # super().__init__(**kwargs) missing
    ```
    ## Use instead
    Call `super().__init__(**kwargs)` first.
    """, phase="task", exc="AttributeError")
_examples("TS139", [_own_task_init(True)], [_own_task_init(False)])
