"""TS000, TS901-TS907, TS950-TS959 and TS999: lifecycle, internal and front-end codes.

- TS000 / TS95x are reported by ts-lint itself (phase "frontend"): a file it cannot
  parse, and the values it could not evaluate statically ("unresolved" explanations,
  severity info, shown with `--explain-unknown`). `UNRESOLVED` maps a short kind to its
  code so the linter picks the most specific one.
- TS901 is the `skip_validation=True` notice; TS902/TS903 guard the TaskManager lifecycle;
  TS904 the Mermaid export; TS906 is what ts codegen raises for inputs it cannot lower;
  TS907 is a ts API call whose arguments do not bind to its signature.
- TS999 is what the rule engine (and ts-lint) reports when a check itself crashes.
"""
from __future__ import annotations

from ..diagnostics import Severity
from .declare import rule

INFO, WARNING = Severity.INFO, Severity.WARNING
FRONTEND = dict(phase="frontend")
NEVER_DOWNGRADED = ("AssertionError", "TypeError")   # what the reference never turns into warnings

_SAMPLE = '''\
from dataclasses import dataclass
from ts_runtime import schedule, domain_loop, consumer_work, producer_work
from ts_runtime.resources import MemoryResource, TaskLocalVariable
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager


@dataclass(kw_only=True)
class InGmem(MemoryResource):
    val: object = TaskLocalVariable.uninitialized()

    def __post_init__(self):
        self.val = TaskLocalVariable(dtype=int, default=0)

    @consumer_work(returns=val)
    def load(self, stage_info):
        return 0


@dataclass(kw_only=True)
class OutGmem(MemoryResource):
    @producer_work
    def store(self, stage_info, v):
        pass


def build():
    inp, out = InGmem(name="in"), OutGmem(name="out")

    @schedule
    def copy_schedule(inp, out):
        with domain_loop(0, 4, 1):
            v = inp.load()
            out.store(v=v)

    @schedule
    def pad_schedule():
        with domain_loop(1):
            pass

    tasks = [
        Task(name="Copy", src_resources=[inp], dst_resources=[out], warp_idx=0, num_warps=1,
             num_registers={regs}, schedule=copy_schedule(inp, out)),
        Task(name="Pad", src_resources=[], dst_resources=[], warp_idx=1, num_warps=3,
             num_registers=None, schedule=pad_schedule()),
    ]
    {manager}
{after}'''

_TM = "TaskManager(tasks=tasks, resource_dependency_graph={{out: [inp]}}, verbose=False{options})"


def sample(*, regs="None", options: str = "", mark: str = "", after: str = "", keep: bool = False) -> str:
    """A valid two-task copy kernel; `after` runs on the manager `tm` (`keep=True`)."""
    tm = _TM.format(options=options)
    manager = (f"tm = {tm}{mark}\n" + "\n".join("    " + line for line in after.splitlines()) + "\n    return tm"
               if keep else f"return {tm}{mark}")
    return _SAMPLE.format(regs=regs, manager=manager, after="")


VALID = sample()


# --------------------------------------------------------------------------- front end / internal
rule("TS000", "syntax-error", """
    A file ts-lint cannot parse, or that Python's compiler rejects.

    ## What it does
    Reported by ts-lint at the first syntax error; nothing else in the file is checked.
    Besides parse errors, this covers what only Python's compiler finds (compiling the
    file to bytecode, which runs nothing): a parameter name given twice, `return`
    outside a function, `nonlocal` of a name no enclosing function binds.
    ## Why is this bad?
    Python would not import the module either.
    ## Example
    `with domain_loop(0, 8, 1)` (missing colon); `def make(num_k_tiles, num_k_tiles):`.
    ## Use instead
    Fix the syntax; the other rules run again on the next save.
    """, **FRONTEND, valid=[VALID])

rule("TS907", "api-call-mismatch", """
    A ts API call whose arguments do not match its signature.

    ## What it does
    Binds the arguments of `Task(...)`, `TaskManager(...)`, the
    `PipelineConfig.create_*_cfg(...)` factories, resource constructors (a
    `MemoryResource` subclass's own or dataclass `__init__`, `PdlWaitBarrier`,
    `PdlLaunchBarrier`, `WorkQueue`, `PipelineGroup`), the other public API a kernel
    author calls (`PipelineConfig(...)`, `TileSchedulerConfig` and its two factories,
    `TaskLocalVariable(...)` / `.uninitialized()`, `SmemAllocation`, `TmemAllocation`,
    `SmemAllocator` / `TmemAllocator` and their methods, `ResourceContext`, `Every`,
    `CooperativeGroup`, `schedule`, `consumer_work` / `producer_work`, the
    TaskManager's methods), the schedule-builder APIs (`domain_loop`,
    `work_tile_loop`, `when_true` / `when_false`, a loop's `every` / `first_iter` /
    `last_iter`, `skippable`) and calls of `@schedule` functions (resources are passed
    positionally only, as the reference's wrapper takes them) to their signatures and
    reports a missing required argument, an unexpected keyword or too many positional
    arguments at the call, with Python's own message (`ts_runtime.api_calls`). At run
    time the call raises that `TypeError` (the reference's exception too), carrying the
    finding; ts-lint binds the same signatures statically (a user `__init__` to its own
    parameters) and does not judge calls with `*args` / `**kwargs` unpacking, a decorated
    `__init__`, or a class with a `__new__`, a metaclass or a class decorator it does not
    model. The keywords that the own `__init__` of a resource, Task or TaskManager
    subclass passes on through `super().__init__(**kwargs)`, when MemoryResource / Task /
    TaskManager does not bind them (`Res(namee=...)`, a `DynamicDomainTask(...)` without
    `num_warps=`, a `GemmManager(tag=1, ...)` without `tasks=`), are reported at the
    construction, by both. ts-lint also binds
    `dataclasses.field(...)` (a resource class's fields) to Python's signature
    (`field(iit=False)` is a TypeError at import; the runtime gets Python's own), and,
    in the work methods a schedule of the kernel calls, each `self.helper(...)` call of a method of
    the resource class that certainly runs (`self._init()` for
    `def _init(self, stage_info)`): the kernel raises that TypeError when it is traced
    (the runtime gets it as a plain exception then); and a work method called on a
    resource object itself instead of a schedule proxy (in an `@schedule` body, on a
    resource read from an enclosing scope instead of a parameter; or outside any schedule
    body, `pdl_launch.launch_griddep()` moved out of its schedule): Python calls the
    method, without a `stage_info`; ts_runtime's work wrapper binds the call first and
    raises this TS907 TypeError, with the same text).
    ## Why is this bad?
    The module fails with a TypeError when the kernel is built; nothing after the call is
    checked.
    ## Example
    `Task(name="Copy", src_resources=[inp], dst_resources=[out], num_warps=1, schedule=s)`
    (no `warp_idx`), `create_async_umma_pipeline_cfg(..., num_bytes=4096)`,
    `SmemAllocation("buf", size_bytes=4096, aligment=128)`,
    `@consumer_work(returns=val, work_attr=WorkAttr.NONE)`.
    ## Use instead
    Pass every required argument (`warp_idx=0`); `num_bytes` only to the TMA factories;
    spell keywords as the API does (`alignment=`, `work_attrs=`).
    """, phase="object", exc="TypeError", valid=[VALID],
     invalid=[VALID.replace("warp_idx=0, num_warps=1,", "num_warps=1,  # expect: TS907"),
              VALID.replace('inp, out = InGmem(name="in"), OutGmem(name="out")',
                            'inp, out = InGmem(name="in", tensor=None), OutGmem(name="out")  # expect: TS907'),
              # the schedule-builder APIs bind like Python calls: `domain_loop(*bounds, unroll=None)`
              VALID.replace("with domain_loop(0, 4, 1):", "with domain_loop(0, 4, step=1):  # expect: TS907"),
              # an @schedule function takes its resources positionally only
              VALID.replace("schedule=copy_schedule(inp, out)),",
                            "schedule=copy_schedule(inp, out=out)),  # expect: TS907"),
              # the other public API binds too: a misspelt keyword of TaskLocalVariable /
              # consumer_work (the reference: "... got an unexpected keyword argument 'doc'")
              VALID.replace("self.val = TaskLocalVariable(dtype=int, default=0)",
                            'self.val = TaskLocalVariable(dtype=int, default=0, doc="v")  # expect: TS907'),
              VALID.replace("    @consumer_work(returns=val)",
                            "    @consumer_work(returns=val, work_attr=None)  # expect: TS907")])

rule("TS999", "internal-error", """
    A check crashed (a bug in ts, not in the kernel).

    ## What it does
    Reported instead of a traceback when one rule (or ts-lint's analysis of a file) raises
    unexpectedly; the other rules still run. The message names the rule and the exception.
    ## Why is this bad?
    The crashed check said nothing about the kernel, so a real problem may be missed.
    ## Example
    `internal error in rule TS4xx: KeyError: ...`
    ## Use instead
    Report it with the program that triggers it (`TS_DEBUG=1` prints the traceback).
    """, phase="internal", severity=WARNING)

# --------------------------------------------------------------------------- lifecycle
rule("TS901", "validation-downgraded", """
    `TaskManager(skip_validation=True)` turned validation errors into warnings.

    ## What it does
    With `skip_validation=True`, the manager's ValueError/RuntimeError findings are
    reported as warnings prefixed `TS validation (<rule>):` (each under its own code) and
    the manager is built anyway; this notice, at the `skip_validation=` argument, counts
    them. Findings the reference asserts (TS5xx placement, TS712) and TypeErrors are never
    downgraded, nor are errors raised before the manager exists.
    ## Why is this bad?
    The kernel is generated although its schedule failed a check: it may hang or race.
    ## Example
    `TaskManager(..., skip_validation=True)` on a kernel with a register-group mismatch.
    ## Use instead
    Fix the findings, or keep the switch only while deliberately testing a schedule a
    conservative check rejects, with the reason written next to it.
    """, phase="manager", severity=WARNING, order=990, exc="UserWarning",
     valid=[VALID, sample(options=", skip_validation=True")],
     invalid=[sample(regs="40", options=", skip_validation=True", mark="  # expect: TS901")])


def apply_skip_validation(kernel, diags) -> list:
    """What `skip_validation=True` does to a manager's findings (both front ends call this).

    Every error whose reference exception is not an AssertionError or TypeError becomes a
    warning prefixed `TS validation (<rule name>):`, keeping its own code; when any did, one
    TS901 notice at the `skip_validation=` argument is appended.
    """
    from ..diagnostics import Diagnostic
    from .registry import get, make_diagnostic
    out, downgraded = [], []
    for d in diags:
        if d.severity is Severity.ERROR:
            r = get(d.code)
            if r is None or r.reference_exception not in NEVER_DOWNGRADED:
                d = Diagnostic(d.code, d.name, WARNING, f"TS validation ({d.name}): {d.message}", d.range,
                               d.related, d.fix, d.trace)
                downgraded.append(d.code)
        out.append(d)
    if downgraded:
        codes = ", ".join(sorted(set(downgraded)))
        out.append(make_diagnostic("TS901", f"skip_validation=True: {len(downgraded)} validation error(s) reported "
                                   f"as warnings ({codes}); the kernel is built anyway", kernel.at("skip_validation")))
    return out


rule("TS902", "repeated-setup", """
    `setup_resources_and_tasks()` called more than once.

    ## What it does
    The manager allows one setup per kernel.
    ## Why is this bad?
    Setup allocates the unified SMEM block, patches barrier pointers and creates every
    pipeline; doing it twice allocates twice and re-initializes live barriers.
    ## Example
    `tm.setup_resources_and_tasks()` in a helper and again in the kernel body.
    ## Use instead
    Call it once, before `run()`.
    """, phase="setup", exc="AssertionError", valid=[VALID])

rule("TS903", "run-before-setup", """
    `TaskManager.run()` called before `setup_resources_and_tasks()`.

    ## What it does
    Requires setup before running the tasks.
    ## Why is this bad?
    Without setup there is no SMEM, no barrier and no pipeline for the tasks to use.
    ## Example
    `tm = TaskManager(...); tm.run()`
    ## Use instead
    `tm.setup_resources_and_tasks()`, the barrier-init fence and CTA sync, then `tm.run()`.
    """, phase="codegen", exc="AssertionError", valid=[VALID],
     invalid=[sample(keep=True, after="tm.run()  # expect: TS903")])

rule("TS904", "empty-mermaid-direction", """
    `get_marmaid_string_dependency_graph(direction="")`.

    ## What it does
    Requires a non-empty Mermaid flowchart direction (`TD`, `LR`, ...).
    ## Why is this bad?
    `flowchart ` without a direction is not valid Mermaid.
    ## Example
    `tm.get_marmaid_string_dependency_graph(direction="")`
    ## Use instead
    `tm.get_marmaid_string_dependency_graph(direction="LR")`
    """, phase="manager", exc="ValueError",
     valid=[sample(keep=True, after='tm.get_marmaid_string_dependency_graph(direction="LR")')],
     invalid=[sample(keep=True, after='tm.get_marmaid_string_dependency_graph(direction="")  # expect: TS904')])

rule("TS905", "internal-consistency-error", """
    An internal consistency error while generating the kernel.

    ## What it does
    Covers the reference's kernel-time guards: an unknown pipeline type, tile-scheduler
    type, schedule stage or guard type, a pipeline-group builder for an unsupported type,
    an opaque condition with a resource but no result name, a missing producer/consumer
    variable.
    ## Why is this bad?
    These states cannot be built through the public API; reaching one means objects were
    modified by hand or ts has a bug.
    ## Example
    `PipelineConfig(pipeline_type="Foo", ...)` built without a factory.
    ## Use instead
    Build configs, guards and schedules with the public factories and context managers.
    """, phase="codegen", exc="ValueError",
     open_reason="kernel-time guards of unreachable states; ts_runtime.codegen raises them as plain "
                 "exceptions and nothing can be checked before generation")

rule("TS906", "codegen-unsupported", """
    A valid TS program that ts codegen cannot lower to a kernel.

    ## What it does
    Raised while the kernel is traced (`setup_resources_and_tasks()` / `run()`), at the
    user's source line, for inputs the model accepts but the code generator does not
    support: `CooperativeGroup(Agent.ThreadBlock / ThreadBlockCluster)`, a
    `cta_layout_vmnk` without a static shape, an interleave lane that cannot be derived, an
    unknown tile scheduler type, a WorkQueue without `tile_scheduler_params` (or, for CLC,
    without a ClcFetchAsync pipeline) inside the kernel, and a `warp_idx` / `num_warps` or `interleave_stride`
    that is not a Python int when validation was downgraded (TS709 / TS404 report those
    first). The exception is a `NotImplementedError` carrying the Diagnostic. Checked by ts
    codegen while the kernel is traced (programs: `tests/codegen/rule_programs.py`).
    ## Why is this bad?
    The kernel cannot be generated; host-side validation cannot see these values.
    ## Example
    `consumer_group=CooperativeGroup(Agent.ThreadBlock, 128)`
    ## Use instead
    `consumer_group=CooperativeGroup(Agent.Thread, 128)`; pass counts, strides and layouts
    as Python ints / static values (`cutlass.Constexpr` kernel arguments).
    """, phase="codegen", exc="NotImplementedError")

# --------------------------------------------------------------------------- front-end limits (info)
_UNRESOLVED = [
    ("TS950", "unresolved-value", "value",
     "A value ts-lint could not evaluate statically.",
     "An expression whose value depends on something ts-lint does not execute (a runtime "
     "argument, I/O, an unsupported construct). Checks that need it are skipped; this note "
     "says which value and where.",
     "`num_stages = int(os.environ['STAGES'])`",
     "Nothing is wrong with the kernel. Make the value a literal or a module constant to get "
     "the skipped checks, or ignore TS95x."),
    ("TS951", "unresolved-resource", "resource",
     "An argument that should be a resource could not be resolved to one.",
     "A `src_resources` / `dst_resources` element, a schedule argument or a dependency-graph "
     "key or value that ts-lint cannot follow to a `MemoryResource(...)` construction. The "
     "task or graph entry is left out of the model, so checks over it are skipped.",
     "`Task(src_resources=make_resources()[0:2], ...)` with `make_resources` in another package",
     "Build the resources in the analysed file (or a module ts-lint can read) and pass them "
     "by name."),
    ("TS952", "unresolved-schedule", "schedule",
     "A `Task(schedule=...)` that ts-lint cannot trace to an `@schedule` call.",
     "The schedule comes from a call or a container ts-lint cannot evaluate; the task's "
     "schedule, and every check over it, is unknown.",
     "`Task(..., schedule=SCHEDULES[name](a, b))`",
     "Call the `@schedule` function directly in the `Task(...)` arguments or in a plain "
     "assignment."),
    ("TS953", "unresolved-control-flow", "control-flow",
     "A Python `for` / `if` / `while` in a schedule or builder whose condition or iterable is not static.",
     "Plain Python control flow is unrolled at trace time; when its bound is unknown ts-lint "
     "cannot tell which steps the schedule records, so the schedule is incomplete.",
     "`for i in range(args.subtiles): gmem.store(subtile_idx=i)`",
     "Use a compile-time constant for the bound (e.g. a module-level int or "
     "`cutlass.range_constexpr` over a constant)."),
    ("TS954", "unresolved-call", "call",
     "A call into code ts-lint cannot analyse.",
     "The callee is a C extension, a dynamically created function or code outside the "
     "analysed files; its result is unknown.",
     "`cfg = load_config_from_yaml(path)`",
     "Inline the computation or move it into an analysed module."),
    ("TS955", "unresolved-class", "class",
     "A resource or Task class whose definition ts-lint cannot find.",
     "Work methods, task-local variables and `get_domain` come from the class body; without it "
     "every call on the resource is unknown.",
     "`class Smem(ThirdPartyResource): ...` with the base class in an unreadable module",
     "Make the defining module importable for ts-lint (same project / path)."),
    ("TS956", "unresolved-import", "import",
     "An import ts-lint cannot resolve.",
     "The names the import binds are unknown; whatever uses them is skipped. ts-lint reads "
     "the modules of your own project (relative imports, and absolute imports found next to "
     "the file, in its parent packages or under the nearest pyproject.toml's folder); this "
     "note is for other modules, modules it cannot parse, and names they do not define.",
     "`from my_kernels.resources import SmemAbResource` with `my_kernels` installed elsewhere",
     "Keep the module in the importing file's package or project, and fix any syntax error "
     "the note mentions."),
    ("TS957", "no-task-manager", "manager",
     "Tasks are built but no `TaskManager(...)` call was found for them.",
     "Manager-phase rules (roles, graph, brackets, pipelines, capacities, simulation, "
     "exhaustive checker) run on a `TaskManager(...)`; without one only capture, task and "
     "object checks ran.",
     "A module that only defines schedules and tasks and passes them to another module.",
     "Build the TaskManager in the analysed code (a `build()` helper is enough)."),
    ("TS958", "analysis-limit-reached", "budget",
     "ts-lint stopped evaluating a function because it hit an analysis budget.",
     "Interpretation is bounded (steps, call depth, loop iterations) to keep linting fast; "
     "what was not evaluated is unknown and its checks are skipped.",
     "A builder that unrolls a 100000-iteration Python loop.",
     "Reduce trace-time loops in the builder, or lint a smaller configuration."),
    ("TS959", "checks-skipped", "skipped",
     "Some checks were skipped because their inputs are unknown.",
     "A summary note at the `TaskManager(...)` call: which rule codes could not run (for "
     "example the exhaustive checker without a static loop domain) and which unresolved "
     "values (TS950-TS958) caused it.",
     "`domain_loop(0, k_tiles, 1)` with `k_tiles` a runtime tensor size: TS801 is skipped.",
     "Give the values statically where a complete check matters (tests, CI)."),
]

#: kind -> code, for ts-lint: `UNRESOLVED["resource"] == "TS951"`.
UNRESOLVED = {kind: code for code, _, kind, *_ in _UNRESOLVED}

for _code, _name, _kind, _summary, _what, _example, _instead in _UNRESOLVED:
    rule(_code, _name, f"""
        {_summary}

        ## What it does
        {_what}
        ## Why is this bad?
        It is not a defect: ts-lint reports what it could not check (severity info,
        shown with `--explain-unknown`).
        ## Example
        {_example}
        ## Use instead
        {_instead}
        """, **FRONTEND, severity=INFO, valid=[VALID] if _code == "TS950" else ())
