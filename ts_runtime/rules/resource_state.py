"""TS237 / TS716: work methods that read state which is not there when the kernel runs.

TS237: a resource field its task has not set up yet. TS716: `stage_info.context.
smem_base` in a kernel without an SMEM block.

The facts come from both front ends in the same shape: `ResourceModel.unset_fields`
(the user's dataclass fields that are None when the resource is built) and, per work
method, the attributes it dereferences and sets (`model/attr_effects.py`, over the
method's source). The rule only reads the model.
"""
from __future__ import annotations

from ..diagnostics import Related, Severity
from ..model.kernel import VARIABLE_ACCESSORS
from ..model.lowered import LOOP
from .base import Rule
from .registry import register
from .declare import rule
from .roles import pipeline_program


@register
class WorkUsesUnsetAttribute(Rule):
    """A work call that uses a resource attribute no earlier call of its task has set.

    ## What it does
    Finds dataclass fields of a resource class that are `None` when the resource is
    built (`field(init=False, default=None)`) and that one of its work methods sets
    (a setup method such as `init_load_state()`). A task whose schedule calls a work
    method that uses such a field as an object (`self.smem_view.subview(...)`,
    `self.desc[i]`, `self.base + offset`, through `self.helper()` calls too) before any
    call of a method that sets it is reported at that work call. Each task starts from
    the built resource: a field set by another task's schedule does not count. A
    `field(init=False)` that is None when the resource is built and that no method of
    its class sets at all (`self.matrix_a = matrix_a` missing from `__init__`) is
    reported at the first work call that uses it. Methods that test the field (`if self.smem_view is None:`) are
    not reported.
    ## Why is this bad?
    The kernel is traced task by task, in schedule order: the work method reads `None`
    (`'NoneType' object has no attribute 'subview'`), or a value created in another
    task's code region (`operand #0 does not dominate this use`). The reference reports
    it only while compiling the kernel.
    ## Example
    ```python
    @schedule
    def mma_schedule(smem_ab, tmem_c):
        tmem_c.init_accumulator_state()          # smem_ab.init_descriptors() missing
        with domain_loop(0, num_k_tiles, 1):
            smem_ab.wait()
            desc_a, desc_b = smem_ab.build_descriptors()   # uses self.shared_smem_a
    ```
    ## Use instead
    Call the setup work method at the start of the task's schedule (the head), before the
    domain loop.
    """
    code = "TS237"
    name = "work-uses-unset-attribute"
    order = 196
    reference_exception = "AttributeError"
    reference_checks_at = "kernel"

    def check(self, kernel):
        resources = kernel.resources
        for task in kernel.tasks:
            low = getattr(task, "lowered", None)
            if low is None:
                continue
            written: dict = {}      # rid -> attributes set so far, or True (anything may be)
            reported = set()
            for e in low.entries:       # schedule order: head, loop body, tail
                if e.label is None:
                    continue
                res = resources.get(e.resource)
                wm = res.work_methods.get(e.label) if res is not None else None
                if wm is None:
                    continue
                missing: dict = {}      # rid -> [(attr, setters)]
                never: dict = {}        # rid -> [attr] that no method of the class sets
                for rid, attr in [(e.resource, a) for a in sorted(wm.uses)] + sorted(wm.foreign_uses):
                    owner = resources.get(rid)
                    if owner is None or attr not in owner.unset_fields or (rid, attr) in reported:
                        continue
                    done = written.get(rid, ())
                    setters = _setters(owner).get(attr)
                    if not setters:
                        if attr in owner.internal_fields and owner.settable_fields is not None \
                                and attr not in owner.settable_fields:
                            reported.add((rid, attr))
                            never.setdefault(rid, []).append(attr)     # nothing ever sets it
                        continue
                    if done is True or attr in done:
                        continue
                    reported.add((rid, attr))
                    missing.setdefault(rid, []).append((attr, setters))
                for rid, items in missing.items():
                    fix = _fix(low, e, wm, res, items) if rid == e.resource else None
                    yield self.diag(_message(task, e, res, resources[rid], items), e.range, fix=fix)
                for rid, attrs in never.items():
                    yield self.diag(_never_message(task, e, res, resources[rid], attrs), e.range)
                done = written.setdefault(e.resource, set())
                if wm.writes_any:
                    written[e.resource] = True
                elif done is not True:
                    done |= wm.writes


@register
class SmemBaseWithoutSmemBlock(Rule):
    """A work method that reads `stage_info.context.smem_base` in a kernel without an SMEM block.

    ## What it does
    The kernel's SMEM block exists only when the TaskManager has an `smem_allocator` with
    something added to it (`add_resource`, `add_pipeline_group`); otherwise
    `stage_info.context.smem_base` is `None`. A work call of a schedule whose method reads
    it (outside a condition, through `self.helper()` calls too) is reported, once per
    task.
    ## Why is this bad?
    The method builds its SMEM views from `smem_base` (`smem_base.data_ptr() + offset`):
    tracing the kernel fails with `'NoneType' object has no attribute 'data_ptr'`. The
    reference reports it only while compiling the kernel.
    ## Example
    ```python
    allocator = SmemAllocator()
    allocator.compute_layout()            # allocator.add_resource(smem) missing
    TaskManager(..., smem_allocator=allocator)
    ```
    ## Use instead
    Add every resource with SMEM requirements to the allocator and pass it to the
    TaskManager (`smem_allocator=allocator`).
    """
    code = "TS716"
    name = "smem-base-without-smem-block"
    order = 197
    reference_exception = "AttributeError"
    reference_checks_at = "kernel"

    def check(self, kernel):
        why = _no_smem_block(kernel)
        if why is None:
            return
        for task in kernel.tasks:
            low = getattr(task, "lowered", None)
            for e in (low.entries if low is not None else ()):
                res = kernel.resources.get(e.resource) if e.label is not None else None
                wm = res.work_methods.get(e.label) if res is not None else None
                if wm is not None and "smem_base" in wm.context_uses:
                    yield self.diag(f"Task '{task.name}': {e.label}() on '{res.label}' reads "
                                    f"stage_info.context.smem_base, which is None: {why}", e.range)
                    break


@register
class CapturedVariableAccessInWork(Rule):
    """A work hook that touches consumer / producer variables or a `TaskLocalVariable` field directly.

    ## What it does
    While a captured schedule runs, work methods may not read or write
    `self.consumer_vars`, `self.producer_vars`, a task-local variable field (`self.item`)
    or call `set_consumer_var` / `get_consumer_var` / `get_producer_var`. Each work call
    of a schedule whose method does (in its body or in the `self.helper()` methods it
    calls) is reported, once per method and task.
    ## Why is this bad?
    Values flow only through tokens and `returns=`; direct access bypasses the routing
    and reads stale or unrelated slots. The reference reports it only while compiling the
    kernel (`accessed ... during captured schedule execution`).
    ## Example
    ```python
    @consumer_work(returns=item)
    def load(self, stage_info):
        self.item = 3
    ```
    ## Use instead
    Return the value (`return 3`) and receive inputs as parameters.
    """
    code = "TS233"
    name = "captured-variable-access-in-work"
    order = 198
    reference_exception = "RuntimeError"
    reference_checks_at = "kernel"

    def check(self, kernel):
        for task in kernel.tasks:
            low = getattr(task, "lowered", None)
            seen = set()
            for e in (low.entries if low is not None else ()):
                res = kernel.resources.get(e.resource) if e.label is not None else None
                wm = res.work_methods.get(e.label) if res is not None else None
                if wm is None or (e.resource, e.label) in seen:
                    continue
                bad = sorted(wm.touched & (set(VARIABLE_ACCESSORS) | set(res.tlv_names)))
                if bad:
                    seen.add((e.resource, e.label))
                    what = ", ".join(f"`self.{a}`" for a in bad)
                    yield self.diag(f"Task '{task.name}': {e.label}() on '{res.label}' accesses {what} while "
                                    "the captured schedule runs: work methods receive values as parameters "
                                    "and hand them on through returns=", e.range)


@register
class LegacyVariableFactoryOverride(Rule):
    """`create_consumer_variables` / `create_producer_variables` overridden on a resource used by a captured schedule.

    ## What it does
    The legacy variable factories are forbidden in captured-schedule mode (every
    `@schedule` is one). Reported at the override, for each resource class the kernel
    uses.
    ## Why is this bad?
    Captured schedules allocate task-local variables from the routing table; the legacy
    factory would allocate a second, unrelated set. The reference reports it only while
    compiling the kernel (`... is forbidden in captured-schedule mode`).
    ## Example
    ```python
    def create_consumer_variables(self): ...
    ```
    ## Use instead
    Declare `TaskLocalVariable` fields and `returns=`.
    """
    code = "TS234"
    name = "legacy-variable-factory-override"
    order = 199
    reference_exception = "TypeError"
    reference_checks_at = "kernel"

    def check(self, kernel):
        for res, (name, rng) in _class_entries(kernel, "legacy_factories", 1):
            yield self.diag(f"{res.class_name}.{name}() overrides a legacy variable factory, which is "
                            "forbidden with captured schedules: declare TaskLocalVariable fields and "
                            "returns= instead", rng)


@register
class FrameworkMethodOverride(Rule):
    """A resource class method that replaces one the framework calls, with a signature its call does not fit.

    ## What it does
    `setup_resources_and_tasks()` calls `create()` on every resource while the kernel is
    built, and `create()` calls `create_pipeline(pipeline_config)`. A method of either
    name in a resource class (or a base class you wrote) replaces the framework's; it is
    reported when the framework's call would not bind to it, e.g. a
    `@classmethod def create(cls, data)` factory.
    ## Why is this bad?
    The setup call raises `TypeError` (`create() missing 1 required positional argument`)
    while the kernel compiles, far from the method that causes it.
    ## Example
    ```python
    @classmethod
    def create(cls, data, offsets):
        return cls(data, offsets, name="packed")
    ```
    ## Use instead
    Give the factory another name (`from_tensors`, `make`), or keep the framework's
    signature (`def create(self)` calling `super().create()`).
    """
    code = "TS239"
    name = "framework-method-override"
    order = 199
    reference_exception = "TypeError"
    reference_checks_at = "kernel"

    def check(self, kernel):
        for _res, (name, why, rng, owner) in _class_entries(kernel, "framework_overrides", 2):
            call = f"{name}(pipeline_config)" if name == "create_pipeline" else f"{name}()"
            yield self.diag(f"{owner}.{name} replaces the MemoryResource method the framework "
                            f"calls as `resource.{call}`, and that call does not fit it: {why}; rename it "
                            f"or keep the framework's signature", rng)


def _class_entries(kernel, attr: str, at: int):
    """(resource, entry) of the class-level findings in `ResourceModel.<attr>` (tuples of
    a method name first and its def line at index `at`), each def once however many
    resources share the class, in source order of the resources."""
    seen = set()
    for rid in sorted(kernel.resources, key=lambda r: kernel.resources[r].range.line):
        res = kernel.resources[rid]
        for entry in getattr(res, attr):
            key = (entry[0], entry[at])
            if key not in seen:
                seen.add(key)
                yield res, entry


def _no_smem_block(kernel):
    """Why the kernel has no SMEM block, or None when it has one (or that is not known)."""
    a = kernel.smem_allocator
    if a is None:
        if any(r.is_group for r in kernel.resources.values()):
            return None     # setup fails first, on the group's barrier storage (TS473)
        return "the TaskManager has no smem_allocator"
    if a.complete and not a.allocations and not a.alias_groups and a.groups == [] \
            and a.barrier_bytes == 0:
        return "nothing was added to the TaskManager's SmemAllocator (add_resource / add_pipeline_group)"
    return None


def _message(task, e, res, owner, items) -> str:
    own = owner is res
    names = ", ".join(f"self.{a}" if own else a for a, _ in items)
    what = names if own else f"{names} of '{owner.label}'"
    setters = sorted({n for _, ss in items for n in ss})
    where = " in the domain loop" if e.section == LOOP else ""
    on = "" if own else f" on '{owner.label}'"
    verb = "is" if len(items) == 1 else "are"
    return (f"Task '{task.name}': {e.label}() on '{res.label}'{where} uses {what}, which {verb} None when "
            f"the resource is built; {' / '.join(f'{n}()' for n in setters)} set{'s' if len(setters) == 1 else ''} "
            f"{'it' if len(items) == 1 else 'them'}, and this task's schedule does not call "
            f"{'it' if len(setters) == 1 else 'any of them'}{on} before")


def _never_message(task, e, res, owner, attrs) -> str:
    own = owner is res
    names = ", ".join(f"self.{a}" if own else a for a in attrs)
    what = names if own else f"{names} of '{owner.label}'"
    verb = "is" if len(attrs) == 1 else "are"
    return (f"Task '{task.name}': {e.label}() on '{res.label}' uses {what}, which {verb} None when the "
            f"resource is built, and no method of {owner.class_name} sets {'it' if len(attrs) == 1 else 'them'} "
            f"(is an assignment in __init__ missing?)")


def _fix(low, e, wm, res, items):
    """Call the setup method at the start of the schedule (before the domain loop), when
    one auxiliary work method of the call's side sets every attribute reported."""
    from ..fixes import insert_statement, receiver
    common = set.intersection(*(set(ss) for _, ss in items))
    side = wm.stage.is_producer
    cands = sorted(n for n in common if res.work_methods[n].stage.is_aux
                   and res.work_methods[n].stage.is_producer == side)
    recv = receiver(e.range)
    anchor = getattr(low, "domain_range", None)
    if len(cands) != 1 or recv is None or anchor is None or not anchor.line or anchor.line > e.range.line:
        return None
    return insert_statement(anchor, f"{recv}.{cands[0]}()", title=f"Call {recv}.{cands[0]}() before the domain loop")


def _setters(res) -> dict:
    """attribute -> names of the resource's work methods that set it (sorted)."""
    out: dict = {}
    for name, wm in res.work_methods.items():
        for attr in wm.writes:
            out.setdefault(attr, []).append(name)
    return {k: sorted(v) for k, v in out.items()}


# --------------------------------------------------------------------------- examples
_STAGED = '''
from dataclasses import field


@dataclass(kw_only=True)
class Staged(MemoryResource):
    item: object = TaskLocalVariable.uninitialized()
    view: object = field(init=False, default=None)

    def __post_init__(self):
        self.item = TaskLocalVariable(dtype=int, default=0)

    def _bind(self, stage_info):
        self.view = [0, 0]

    @producer_work(work_attrs=WorkAttr.AUXILIARY)
    def init_view(self, stage_info):
        self._bind(stage_info)

    @producer_work
    def fill(self, stage_info, data):
        self.view[stage_info.stage_idx] = data

    @producer_work
    def fill_checked(self, stage_info, data):
        if self.view is None:
            self._bind(stage_info)
        self.view[stage_info.stage_idx] = data

    @consumer_work(work_attrs=WorkAttr.AUXILIARY)
    def init_read_view(self, stage_info):
        self._bind(stage_info)

    @consumer_work(returns=item)
    def read(self, stage_info):
        return 0


@dataclass(kw_only=True)
class Sink(MemoryResource):
    staged: object = None

    @producer_work
    def store(self, stage_info, data):
        self.staged.view[0] = data
'''
_STAGED_SUBS = [('Smem(name="smem", pipeline_config=cfg)', 'Staged(name="smem", pipeline_config=cfg)')]


_SINK_SUBS = [('    src, smem, out = Gmem(name="src"), Smem(name="smem", pipeline_config=cfg), Gmem(name="out")',
               '    src, smem = Gmem(name="src"), Staged(name="smem", pipeline_config=cfg)\n'
               '    out = Sink(name="out", staged=smem)')]
_INIT_LOAD = '''\
smem.init_view()
with domain_loop(0, 4, 1):
    v = src.load()
    smem.acquire()
    smem.fill(data=v)
    smem.commit()
'''


def _staged(load: str) -> str:
    return pipeline_program(load=load, extra=_STAGED, subs=_STAGED_SUBS)


def _sink(store: str) -> str:
    """The Store task's `out` holds `smem` and reads its view (`self.staged.view`)."""
    return pipeline_program(load=_INIT_LOAD, store=store, extra=_STAGED, subs=_SINK_SUBS)


WorkUsesUnsetAttribute.VALID = [
    _staged(_INIT_LOAD),
    _staged('''\
    with domain_loop(0, 4, 1):
        v = src.load()
        smem.acquire()
        smem.fill_checked(data=v)
        smem.commit()
    '''),
    _sink('''\
    smem.init_read_view()
    with domain_loop(0, 4, 1):
        smem.wait()
        v = smem.read()
        smem.release()
        out.store(data=v)
    '''),
]
WorkUsesUnsetAttribute.INVALID = [
    _staged('''\
    with domain_loop(0, 4, 1):
        v = src.load()
        smem.acquire()
        smem.fill(data=v)  # expect: TS237
        smem.commit()
    '''),
    _staged('''\
    with domain_loop(0, 4, 1):
        v = src.load()
        smem.acquire()
        smem.fill(data=v)  # expect: TS237
        smem.commit()
    smem.init_view()
    '''),
    _sink('''\
    with domain_loop(0, 4, 1):
        smem.wait()
        v = smem.read()
        smem.release()
        out.store(data=v)  # expect: TS237
    '''),
]


def _smem_base_program(**kw) -> str:
    """memory_rules' one-task copy whose staging buffer builds its view from smem_base."""
    from .memory_rules import memory_program
    src = memory_program(**kw)
    old = "    @producer_work\n    def store(self, stage_info, v):\n        pass\n"
    new = ("    @producer_work\n    def store(self, stage_info, v):\n"
           "        base = stage_info.context.smem_base\n        base.data_ptr()\n")
    assert old in src
    return src.replace(old, new, 1)


def _expect_716(src: str) -> str:
    return src.replace("        out.store(v=v)\n", "        out.store(v=v)  # expect: TS716\n", 1)


SmemBaseWithoutSmemBlock.VALID = [_smem_base_program()]
SmemBaseWithoutSmemBlock.INVALID = [
    _expect_716(_smem_base_program(options="")),
    _expect_716(_smem_base_program(alloc="smem = SmemAllocator(); smem.compute_layout()")),
]


_OWN_INIT = '''

@dataclass(kw_only=True)
class Owned(Staged):
    def __init__(self, table, **kwargs):
        super().__init__(**kwargs)
        self.table = table
'''

@register
class SuperInitMissing(Rule):
    """A resource class whose own `__init__` never calls `super().__init__(...)`.

    ## What it does
    A `MemoryResource` subclass that writes its own `__init__` must initialise the base
    part (`name`, `pipeline_config`, `consumer_vars`, `producer_vars`, ...) through
    `super().__init__(**kwargs)` (or `Base.__init__(self, ...)`). Without it the object
    keeps the class defaults of those fields, and it breaks as soon as something reads
    them. An error, at the construction, when the `pipeline_config` passed to it is
    dropped (the resource has no pipeline), when a schedule's work call on it routes
    values through its variables (a routed input, or returned task-local values), when a
    persistent task (a `work_tile_loop`) uses it (the framework routes the tile state
    through the variables of its resources) or when it is a PipelineGroup member; a
    warning when nothing in the kernel needs the base part yet (the reference compiles
    that kernel).
    ## Why is this bad?
    A dropped pipeline leaves every `acquire()` / `wait()` on the resource without a
    barrier (the reference reports a blocked schedule); a routed work call fails with
    `'...Resource' object has no attribute 'producer_vars'` when the kernel is traced.
    ## Example
    ```python
    def __init__(self, matrix_a, **kwargs):
        self.matrix_a = matrix_a          # super().__init__(**kwargs) missing
    ```
    ## Use instead
    Call `super().__init__(**kwargs)` first.
    """
    code = "TS238"
    name = "resource-init-without-super-init"
    order = 199
    reference_exception = "AttributeError"

    def check(self, kernel):
        from ..resources import super_init_message
        lost = [r for r in kernel.resources.values() if r.lost_init is not None]
        if not lost:
            return
        routed = {}       # rid -> the first work call that routes values through its variables
        for t in kernel.tasks:
            sched = t.schedule
            if sched is None:
                continue
            for step in sched.walk_steps():
                if (step.routes_in or step.returned) and step.label and step.resource not in routed:
                    routed[step.resource] = step
        # a persistent task (a work-tile loop) has the framework route the tile state
        # through the variables of every resource it uses (the reference fails there too)
        persistent = set()
        for t in kernel.tasks:
            low = t.lowered
            if low is not None and low.has_work_tile_loop:
                persistent.update(t.src)
                persistent.update(t.dst)
        for r in sorted(lost, key=lambda r: (r.range.line, r.range.column)):
            step = routed.get(r.rid)
            call = f"the work call {step.label}(...) at line {step.range.line}" if step is not None else ""
            if not call and r.rid in persistent:
                call = "a persistent task (work_tile_loop) that uses it"
            fatal = "pipeline_config" in r.lost_init or bool(call) or r.group is not None
            related = [Related(step.range, "routes values through the resource's variables")] \
                if step is not None and "pipeline_config" not in r.lost_init else []
            if r.group is not None and not call and "pipeline_config" not in r.lost_init:
                call = "its PipelineGroup"
            yield self.diag(super_init_message(r.class_name, r.lost_init, call), r.range, related=related,
                            severity=None if fatal else Severity.WARNING)


SuperInitMissing.VALID = [
    _staged(_INIT_LOAD).replace("class Sink(", _OWN_INIT.strip("\n") + "\n\n\n@dataclass(kw_only=True)\nclass Sink(", 1)
           .replace('Staged(name="smem", pipeline_config=cfg)', 'Owned(table=1, name="smem", pipeline_config=cfg)', 1),
]
SuperInitMissing.INVALID = [
    # the own __init__ sets the task-local variable itself (else TS320 comes first) but drops
    # the pipeline_config: a pipelined resource without a pipeline
    _staged(_INIT_LOAD).replace("class Sink(", _OWN_INIT.replace(
        "        super().__init__(**kwargs)\n", "        self.item = TaskLocalVariable(dtype=int, default=0)\n")
                                         .strip("\n") + "\n\n\n@dataclass(kw_only=True)\nclass Sink(", 1)
             .replace('    src, smem, out = Gmem(name="src"), Staged(name="smem", pipeline_config=cfg), Gmem(name="out")',
                      '    src, smem, out = Gmem(name="src"), Owned(table=1, name="smem", pipeline_config=cfg), '
                      'Gmem(name="out")  # expect: TS238', 1)
    # the acquire then waits for a release that never comes (the reference's blocked schedule)
    .replace("            v = src.load()\n            smem.acquire()\n",
             "            v = src.load()\n            smem.acquire()  # expect: TS810\n", 1),
]


# TS233 / TS234: the copy program with a work method that touches the variables itself, or
# a resource class that overrides a legacy variable factory
def _variables_program(get_item_body: str = "", dst_extra: str = "", mark: str = "") -> str:
    from ._programs import copy_program
    src = copy_program('''
    with domain_loop(0, 8, 1):
        v = src.get_item()
        dst.set_item(data=v)
    ''')
    if get_item_body:
        src = src.replace("        return stage_info.loop_offset\n", get_item_body, 1)
    if dst_extra:
        src = src.replace("class Dst(MemoryResource):\n", "class Dst(MemoryResource):\n" + dst_extra, 1)
    if mark:
        src = src.replace("        v = src.get_item()\n", "        v = src.get_item()  # expect: TS233\n", 1)
    return src


CapturedVariableAccessInWork.VALID = [_variables_program()]
CapturedVariableAccessInWork.INVALID = [
    # a task-local variable field written by the work method that returns it
    _variables_program("        self.item = stage_info.loop_offset\n        return stage_info.loop_offset\n",
                       mark="TS233"),
    # the consumer variables, read through a helper method
    _variables_program("        return self._slot()\n\n    def _slot(self):\n"
                       "        return self.consumer_vars['item']\n", mark="TS233"),
]
FrameworkMethodOverride.VALID = [
    _variables_program(),
    # a factory under another name, and a `create` override the framework can still call
    _variables_program(dst_extra="    @classmethod\n    def make(cls, name):\n        return cls(name=name)\n\n"
                                 "    def create(self, *args):\n        super().create()\n\n"),
]
FrameworkMethodOverride.INVALID = [
    _variables_program(dst_extra="    @classmethod\n    def create(cls, name):  # expect: TS239\n"
                                 "        return cls(name=name)\n\n"),
    _variables_program(dst_extra="    def create_pipeline(self):  # expect: TS239\n"
                                 "        return None\n\n"),
]
LegacyVariableFactoryOverride.VALID = [_variables_program()]
LegacyVariableFactoryOverride.INVALID = [
    _variables_program(dst_extra="    def create_consumer_variables(self):  # expect: TS234\n"
                                 "        return {}\n\n"),
]


def _called_work_methods(kernel):
    """(task, entry, resource, work method) of each work method the kernel's schedules
    call, once per method definition (the first call in task order)."""
    seen = set()
    for t in kernel.tasks:
        for e in (t.lowered.entries if t.lowered is not None else ()):
            res = kernel.resources.get(e.resource)
            if res is None or not e.label or not e.stage.is_work:
                continue
            wm = res.work_methods.get(e.label)
            if wm is None or (wm.defined_on, wm.name) in seen:
                continue
            seen.add((wm.defined_on, wm.name))
            yield t, e, res, wm


def _owner_name(wm) -> str:
    return wm.defined_on.rsplit(".", 1)[-1] if wm.defined_on else "?"


@register
class WorkMethodWithoutStageInfo(Rule):
    """A work method whose signature cannot take the `stage_info` the framework passes.

    ## What it does
    When the kernel is traced, the framework calls each work method a schedule calls as
    `method(self, stage_info, <routed inputs and Constexpr values by keyword>)`. A
    `@consumer_work` / `@producer_work` method with fewer than two positional parameters
    (`def read(self)`, or `stage_info` after `*`) cannot take that call. Reported at the
    method's `def`, for the methods the kernel's schedules call.
    ## Why is this bad?
    The call raises `TypeError: SmemTile.read() takes 1 positional argument but 2 were
    given` while the kernel compiles (the decorator itself accepts the method, and a
    method no schedule calls is never called).
    ## Example
    ```python
    @consumer_work(returns=val)
    @cute.jit
    def read(self) -> cutlass.Float16:
        tx, _, _ = cute.arch.thread_idx()
        return self.buf[tx]
    ```
    ## Use instead
    ```python
    def read(self, stage_info: StageInfo) -> cutlass.Float16:
    ```
    """
    code = "TS240"
    name = "work-method-without-stage-info"
    order = 199
    reference_exception = "TypeError"
    reference_checks_at = "kernel"

    def check(self, kernel):
        for t, e, _res, wm in _called_work_methods(kernel):
            if wm.stage_info_problem is None:
                continue
            at = wm.def_range if wm.def_range.line else wm.range
            yield self.diag(f"work method '{_owner_name(wm)}.{wm.name}' cannot take the stage_info the framework "
                            f"passes: it is called as `{wm.name}(self, stage_info, ...)` when the kernel is "
                            f"traced, and it {wm.stage_info_problem} (TypeError); add the `stage_info` "
                            f"parameter after `self`", at,
                            related=[Related(e.range, f"'{t.name}' calls it here")])


@register
class DslDecoratorNotInnermost(Rule):
    """`@cute.jit` (or `@cute.kernel`) above `@consumer_work` / `@producer_work`.

    ## What it does
    Reports a work method, called by a schedule of the kernel, whose `@cute.jit` /
    `@cute.kernel` decorator is not the one closest to `def`, at that decorator. The
    method is still registered (the work decorator's registration is copied onto the
    jit wrapper), so the schedule captures it; the DSL checks the order when the kernel
    is traced and the method is first compiled.
    ## Why is this bad?
    The CuTe DSL compiles a function only when its DSL decorator is the innermost one:
    the kernel fails to compile with `DSLUserCodeError: error[UNSUP_DECORATOR_ORDER]: The
    cute.jit decorator must be the innermost decorator (closest to def)`.
    ## Example
    ```python
    @cute.jit
    @consumer_work(returns=col)
    def compute_col(self, stage_info): ...
    ```
    ## Use instead
    ```python
    @consumer_work(returns=col)
    @cute.jit
    def compute_col(self, stage_info): ...
    ```
    """
    code = "TS241"
    name = "dsl-decorator-not-innermost"
    order = 199
    reference_exception = "DSLUserCodeError"
    reference_checks_at = "kernel"

    def check(self, kernel):
        for t, e, _res, wm in _called_work_methods(kernel):
            if not wm.misplaced_dsl_decorator:
                continue
            text, at = wm.misplaced_dsl_decorator
            yield self.diag(f"{text} must be the innermost decorator of work method '{_owner_name(wm)}.{wm.name}' "
                            f"(closest to `def`): the DSL rejects the order when the kernel is traced "
                            f"(UNSUP_DECORATOR_ORDER); move it directly above the `def`", at,
                            related=[Related(e.range, f"'{t.name}' calls it here")])


def _stage_info_program(fill_def: str = "    def fill(self, stage_info):\n", call: bool = True) -> str:
    from ._programs import copy_program
    body = "with domain_loop(0, 8, 1):\n    v = src.get_item()\n    dst.set_item(data=v)\n"
    if call:
        body += "    dst.fill()\n"
    src = copy_program(body)
    return src.replace("    def fill(self, stage_info):\n", fill_def, 1)


WorkMethodWithoutStageInfo.VALID = [
    _stage_info_program(),
    # a method without stage_info that no schedule calls is never called
    _stage_info_program("    def fill(self):\n", call=False),
]
WorkMethodWithoutStageInfo.INVALID = [
    _stage_info_program("    def fill(self):  # expect: TS240\n"),
    _stage_info_program("    def fill(self, *, stage_info=None):  # expect: TS240\n"),
]

_JIT_IMPORT = "import cutlass.cute as cute\n\nfrom ts_runtime import ("


def _jit_program(order: str) -> str:
    from ._programs import copy_program
    src = copy_program().replace("from ts_runtime import (", _JIT_IMPORT, 1)
    return src.replace("    @consumer_work(returns=item)\n    def get_item(self, stage_info):\n",
                       order + "    def get_item(self, stage_info):\n", 1)


DslDecoratorNotInnermost.VALID = [
    _jit_program("    @consumer_work(returns=item)\n    @cute.jit\n"),
    # a method no schedule calls is never compiled
    _jit_program("    @consumer_work(returns=item)\n    @cute.jit\n").replace(
        "    @consumer_work(returns=flag)\n", "    @cute.jit\n    @consumer_work(returns=flag)\n", 1),
]
DslDecoratorNotInnermost.INVALID = [
    _jit_program("    @cute.jit  # expect: TS241\n    @consumer_work(returns=item)\n"),
]
