"""Catalogue entries of ts-lint's own findings (TS96x): the linter reports these itself.

TS960 (unused noqa) is found in ts_lint/suppress.py, TS961 (the import raises) in
`Interpreter.run_module`, TS962 (a read that raises NameError) in `Interpreter._unbound_read`,
TS968 (a raise the build reaches) in `StatementsMixin._build_raises`, TS971 (an import
of a TS name or module that does not exist) in `StatementsMixin._ts_import_check`, TS963 (an attribute a
ts API class lacks) in `tsapi.missing_api_attribute`, TS967
(range_constexpr outside the DSL's preprocessing) in `tsapi._range_constexpr`, TS972 (`cute.compile` of
a function without @cute.jit) in `tsapi._compile_without_jit`, TS973 (a run-time value as a
Python bool outside JIT code) in `workbody.runtime_truths` (work methods) and
`StatementsMixin._runtime_truth` (interpreted helpers), TS974 (a call of the program's
function whose arguments do not bind) in `callbind.check_call`, TS969 (a barrier
count PTX rejects) in `tsapi._barrier_count_check`, TS964 (arithmetic
on a function in `ExpressionsMixin._e_binop`; subscripting, calling, iterating or unpacking a
number through `Interpreter.type_error`); the last two through `Interpreter.certain_error`.
In the work methods a kernel's schedules call, TS963 on `stage_info.<name>` and TS966 (an
attribute the resource does not have) come from `ts_lint/extract/workbody.py`.

`ts_runtime.rules.load_all()` imports this module through `ts_runtime/rules/frontend_rules.py`,
so the codes appear in `docs/rules.md`, in SARIF output and in `ts-lint --select`. The logic
lives in `ts_lint/suppress.py`; this module only declares the entries (stdlib + ts_runtime).
"""
from __future__ import annotations

from ts_runtime.diagnostics import Severity
from ts_runtime.rules.declare import rule

# The two schedules of the copy program that the rule examples and many lint tests share
# (a load task fills `smem` from `inp`, a store task drains it into `out`), as they stand
# inside its `build()`.
COPY_SCHEDULES = '''
    @schedule
    def load_schedule(input_gmem, smem):
        with domain_loop(0, 8, 1):
            idx = input_gmem.compute_coords()
            smem.try_acquire()
            smem.acquire()
            smem.tma_load(gmem_idx=idx)
            smem.commit()

    @schedule
    def store_schedule(smem, output_gmem):
        with domain_loop(0, 8, 1):
            smem.try_wait()
            smem.wait()
            v = smem.read_smem()
            output_gmem.store(smem_val=v)
            smem.release()
'''

_VALID = '''\
from dataclasses import dataclass
from ts_runtime import schedule, domain_loop, consumer_work, producer_work, WorkAttr
from ts_runtime.resources import MemoryResource, PipelineConfig, TaskLocalVariable
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager
from ts_runtime.memory import SmemAllocation, SmemAllocator
from ts_runtime.pipeline import CooperativeGroup, Agent

@dataclass(kw_only=True)
class InGmem(MemoryResource):
    coord: object = TaskLocalVariable.uninitialized()
    def __post_init__(self):
        self.coord = TaskLocalVariable(dtype=int, default=0)
    @consumer_work(returns=coord)
    def compute_coords(self, stage_info):
        return stage_info.loop_offset

@dataclass(kw_only=True)
class Smem(MemoryResource):
    val: object = TaskLocalVariable.uninitialized()
    def __post_init__(self):
        self.val = TaskLocalVariable(dtype=int, default=0)
        self._a = SmemAllocation("smem_data", size_bytes=4096)
    def get_smem_requirements(self):
        return [self._a]
    @producer_work
    def tma_load(self, stage_info, gmem_idx):
        pass
    @consumer_work(returns=val)
    def read_smem(self, stage_info):
        return 0

@dataclass(kw_only=True)
class OutGmem(MemoryResource):
    @producer_work
    def store(self, stage_info, smem_val):
        pass

def build(stages=2, consumer=128):
    cfg = PipelineConfig.create_tma_async_pipeline_cfg(
        num_stages=stages, num_bytes=4096,
        producer_group=CooperativeGroup(Agent.Thread),
        consumer_group=CooperativeGroup(Agent.Thread, consumer))
    inp, out = InGmem(name="in"), OutGmem(name="out")  # noqa: E501 (another tool's code)
    smem = Smem(name="smem", pipeline_config=cfg)
    alloc = SmemAllocator(); alloc.add_resource(smem); alloc.compute_layout()
''' + COPY_SCHEDULES + '''
    @schedule
    def pad(_r):
        with domain_loop(1):
            pass

    tasks = [
        Task(name="StoreTask", src_resources=[smem], dst_resources=[out], warp_idx=0, num_warps=4,
             schedule=store_schedule(smem, out)),
        Task(name="LoadTask", src_resources=[inp], dst_resources=[smem], warp_idx=4, num_warps=1,
             schedule=load_schedule(inp, smem)),
    ]
    graph = {
        smem: [inp],
        out: [smem],
    }
    return TaskManager(tasks=tasks, resource_dependency_graph=graph, smem_allocator=alloc)
'''

# the same program with a stale TS102 suppression (and without the other tool's code)
_INVALID = _VALID.replace(
    '  # noqa: E501 (another tool\'s code)\n', "\n", 1).replace(
    "        with domain_loop(0, 8, 1):\n", "        with domain_loop(0, 8, 1):  # noqa: TS102  # expect: TS960\n", 1)

UNUSED_NOQA = rule("TS960", "unused-noqa", """
    A `# noqa: TSxxx` comment that suppresses nothing.

    ## What it does
    Reports a `# noqa` directive naming a TS code that ts-lint did not find on that line.
    Only enabled codes are checked: a code switched off by `select`/`ignore`, by
    `per-file-ignores`, by `--no-checker` (checker codes) or by the absence of
    `--explain-unknown` (TS95x) is not reported. Codes of other tools (`# noqa: E501`) and a
    bare `# noqa` are never reported.
    ## Why is this bad?
    A stale suppression hides the next real finding of that code on the line, and it tells
    the reader about a problem that is no longer there.
    ## Example
    `with domain_loop(1):  # noqa: TS102` where the loop has a valid bound.
    ## Use instead
    `with domain_loop(1):` — keep only the codes ts-lint reports on that line. The attached
    fix (safe) removes the unused codes, or the whole directive when none is left.
    """, phase="frontend", severity=Severity.WARNING, valid=[_VALID], invalid=[_INVALID])

_IMPORT_OK = _VALID.replace("def build(stages=2, consumer=128):", """WARPS = {"store": 4, "load": 1, "pad": 3}
assert sum(WARPS.values()) % 4 == 0, "tasks must fill whole warp groups"
if WARPS["load"] != 1:
    raise ValueError("one load warp")


def build(stages=2, consumer=128):""")
_IMPORT_RAISES = _VALID.replace("def build(stages=2, consumer=128):", """WARPS = {"store": 4, "load": 2, "pad": 3}
assert sum(WARPS.values()) % 4 == 0, "tasks must fill whole warp groups"  # expect: TS961


def build(stages=2, consumer=128):""")

IMPORT_RAISES = rule("TS961", "import-raises", """
    Importing the module raises: an `assert` that fails or a `raise` that is reached.

    ## What it does
    Runs the module body as an import would, with the values ts-lint resolves statically,
    and reports an `assert` whose condition is false or a `raise` that is reached and not
    caught. Only the import itself counts, with the functions it calls: code under
    `if __name__ == "__main__":` depends on the command line, and a function nobody calls
    at import may never run with the values ts-lint assumes. A condition ts-lint cannot
    resolve is never judged.
    ## Why is this bad?
    The module fails with that exception before any kernel is built; nothing in it is
    checked by the reference, and the program does not run.
    ## Example
    `NUM_WARPS = {"store": 4, "load": 2, "pad": 3}` followed by
    `assert sum(NUM_WARPS.values()) % 4 == 0`.
    ## Use instead
    Fix the values the check is about (here: warp counts that fill whole warp groups).
    """, phase="frontend", severity=Severity.ERROR, exc="AssertionError", valid=[_VALID, _IMPORT_OK],
    invalid=[_IMPORT_RAISES])

_UNBOUND = _VALID.replace('    inp, out = InGmem(name="in"), OutGmem(name="out")  # noqa: E501 (another tool\'s code)\n',
                          '    out = OutGmem(name="out")\n').replace(
    'Task(name="LoadTask", src_resources=[inp], dst_resources=[smem], warp_idx=4, num_warps=1,',
    'Task(name="LoadTask", src_resources=[inp], dst_resources=[smem], warp_idx=4, num_warps=1,  # expect: TS962')

UNBOUND_NAME = rule("TS962", "unbound-name", """
    A name read where it is not bound, in code the kernel build runs.

    ## What it does
    In the functions ts-lint runs as the program would (what the import calls, `build()`
    style entry points, the `__main__` block, the `@cute.jit` / `@cute.kernel`
    functions they reach, and the methods of resource classes they run, such as the
    `get_smem_requirements()` an allocator calls), reports the first read of a name that is bound nowhere (a
    deleted assignment, a typo) or read before its assignment, once the run reaches it;
    in the module body, a read of a name the module binds nowhere, also in the annotations
    Python evaluates at import (class-level variables, parameters and returns of functions
    defined at module or class level; not with `from __future__ import annotations`); in a
    work method that
    a schedule of a kernel calls (the kernel compiles it) and the helper methods it
    certainly calls, a read that certainly fails, or a read of a name bound nowhere in a
    branch. In JIT code, a read in either branch of a run-time `if` (the DSL traces
    both), and a read after a run-time `if` of a name that only one of its branches gives
    a value (the DSL's SCOPE_UNBOUND_NAME_IN_TRACE). `@schedule` bodies have their own
    code (TS136); a read under another condition ts-lint cannot decide, in a `try` with a
    handler, or in a function run only with assumed arguments is not reported.
    ## Why is this bad?
    Python raises NameError there and the kernel is never built; the reference reports
    it as a bare exception (or a DSL scope error) while tracing.
    ## Example
    `allocator.add_resource(smem)` after the line `allocator = SmemAllocator()` was deleted.
    ## Use instead
    Restore the assignment, or fix the name.
    """, phase="frontend", severity=Severity.ERROR, exc="NameError", valid=[_VALID], invalid=[_UNBOUND])

_MISSPELT_FACTORY = _VALID.replace("    cfg = PipelineConfig.create_tma_async_pipeline_cfg(",
                                   "    cfg = PipelineConfig.create_tma_async_pipline_cfg(  # expect: TS963")
_MISSPELT_ENUM = _VALID.replace("from ts_runtime.pipeline import CooperativeGroup, Agent",
                                "from ts_runtime.pipeline import CooperativeGroup, Agent\n"
                                "from ts_runtime.enums import SignalingThreads").replace(
    "        consumer_group=CooperativeGroup(Agent.Thread, consumer))",
    "        consumer_group=CooperativeGroup(Agent.Thread, consumer),\n"
    "        producer_signaling_threads=SignalingThreads.Al)  # expect: TS963")
_SPELT_ENUM = _MISSPELT_ENUM.replace("SignalingThreads.Al)  # expect: TS963", "SignalingThreads.All)")

# a schedule that releases a resource it reads from the build function's scope instead of
# its parameter: the object itself has no pipeline operations
_CAPTURED_RESOURCE = _VALID.replace("            smem.release()\n", "            inp.release()  # expect: TS963\n", 1)
assert _CAPTURED_RESOURCE != _VALID

UNKNOWN_API_ATTRIBUTE = rule("TS963", "unknown-api-attribute", """
    An attribute that a ts API class or enum does not have, in code the kernel build runs.

    ## What it does
    Reports `PipelineConfig.<name>`, `TaskLocalVariable.<name>`,
    `TileSchedulerConfig.<name>` and `<TS enum>.<name>` (PipelineType, PipelineGroupMode,
    SignalingThreads, ...) where the class has no such public attribute, once the run
    reaches it, with the closest name. ts_runtime's classes have exactly the reference's
    public attributes (plus the Hopper additions), which a test checks against the
    installed reference; private names are never judged, nor reads under a `try` with a
    handler or in functions run only with assumed arguments. In the work methods a
    schedule of the kernel calls (and the `self.helper(...)` methods they call), also
    `stage_info.<name>` where `StageInfo` has no such field, where the body certainly
    gets there (not under a condition ts-lint cannot decide). In an `@schedule` body, also
    `<resource>.<name>` where the resource is not one of the schedule's parameters but
    read from an enclosing scope (the object itself, not a schedule proxy: it has no
    pipeline operations, nor the work methods of other classes) and its class has no
    such attribute (`out.try_acquire()` with `out` the build function's local); and,
    anywhere, a pipeline operation (`acquire`, `commit`, `wait`, ...) called on a resource
    object outside any schedule body (a statement moved out of its `@schedule`). The
    runtime reports the schedule-body case too, as a TS963 AttributeError with the same
    text; outside schedule bodies it raises Python's plain AttributeError.
    ## Why is this bad?
    Python raises AttributeError there and the kernel is never built; the reference
    reports it as a bare exception while tracing (`'StageInfo' object has no attribute
    'stage_index'` when the kernel is compiled; `'InGmem' object has no attribute
    'release'` when the schedule is captured).
    ## Example
    `PipelineConfig.create_async_pipeline_cfg(...)` (the factories are
    `create_async_async_pipeline_cfg`, `create_tma_async_pipeline_cfg`, ...).
    ## Use instead
    The attribute's real name. For a resource a schedule uses: pass it to the schedule as
    a parameter (`store_schedule(smem, out)`), and call its operations on the parameter.
    """, phase="frontend", severity=Severity.ERROR, exc="AttributeError", valid=[_VALID, _SPELT_ENUM],
    invalid=[_MISSPELT_FACTORY, _MISSPELT_ENUM, _CAPTURED_RESOURCE])

_FUNCTION_ARITHMETIC_OK = _VALID.replace("    inp, out = InGmem(", "    def tiles():\n        return 8\n\n"
                                         "    inp, out = InGmem(").replace(
    "        with domain_loop(0, 8, 1):\n            idx", "        with domain_loop(0, tiles() + 0, 1):\n            idx")
_FUNCTION_ARITHMETIC = _FUNCTION_ARITHMETIC_OK.replace(
    "with domain_loop(0, tiles() + 0, 1):", "with domain_loop(0, tiles + 0, 1):  # expect: TS964")

_INT_SUBSCRIPT = _VALID.replace("        num_stages=stages, num_bytes=4096,",
                                 "        num_stages=stages[0], num_bytes=4096,  # expect: TS964")
_INT_CALL = _VALID.replace("        consumer_group=CooperativeGroup(Agent.Thread, consumer))",
                           "        consumer_group=CooperativeGroup(Agent.Thread, consumer()))  # expect: TS964")

OPERAND_TYPE_ERROR = rule("TS964", "operand-type-error", """
    An operation on a value of a type that does not support it, in code the kernel build runs.

    ## What it does
    Reports, once the run reaches it (also inside an `@schedule` body), with Python's
    message: arithmetic where one operand is a function or method of your code (not
    called) and the other a number (`f + 1`, `2 * obj.method`); and subscripting,
    calling, iterating or unpacking a value ts-lint knows is a plain number (`n[0]`,
    `n()`, `for x in n`, `a, b = n`; calling a string too). Not judged: reads under a
    `try` with a handler, functions run only with assumed arguments, the `__main__`
    block's run (a command-line value may have another type than its argparse default),
    code after a branch ts-lint could not decide that may have returned, and a `for`
    loop the CuTe DSL rewrites (in a `@cute.jit` / `@cute.kernel` function).
    ## Why is this bad?
    Python raises TypeError there and the kernel is never built. A typical case is a
    dynamic domain-loop bound made one larger, `domain_loop(0, MyTask.get_domain + 1, 1)`:
    the getter is passed to `domain_loop` uncalled, and only a compile-time bound can be
    offset (the reference fails with "unsupported operand type(s) for +: 'function' and
    'int'"). Another is two kernel arguments passed in the wrong order, so that a tile
    shape the kernel indexes (`box[1]`) is the stage count ("'int' object is not
    subscriptable").
    ## Example
    `with domain_loop(0, tiles + 1, 1):` where `tiles` is a function; `box[1]` where
    `box` is an int.
    ## Use instead
    Call it (`tiles() + 1`), or offset inside the getter; pass the arguments in the order
    the function declares them (or by keyword).
    """, phase="frontend", severity=Severity.ERROR, exc="TypeError", valid=[_VALID, _FUNCTION_ARITHMETIC_OK],
    invalid=[_FUNCTION_ARITHMETIC, _INT_SUBSCRIPT, _INT_CALL])

_DSL_KERNEL = '''\
from dataclasses import dataclass

import cutlass
import cutlass.cute as cute

from ts_runtime import consumer_work, domain_loop, producer_work, schedule
from ts_runtime.resources import MemoryResource, StageInfo, TaskLocalVariable
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager

UNROLL = 2


@dataclass(kw_only=True)
class Src(MemoryResource):
    v: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()

    def __post_init__(self) -> None:
        self.v = TaskLocalVariable(dtype=cutlass.Int32, default=cutlass.Int32(0))

    @consumer_work(returns=v)
    @cute.jit
    def get(self, stage_info: StageInfo) -> cutlass.Int32:
        return cutlass.Int32(stage_info.loop_offset)


@dataclass(kw_only=True)
class Dst(MemoryResource):
    out: cute.Tensor = None

    @producer_work
    @cute.jit
    def put(self, stage_info: StageInfo, v: cutlass.Int32) -> None:
        self.out[stage_info.loop_offset] = v


@cute.kernel
def copy_kernel(out: cute.Tensor):
    src = Src(name="src")
    dst = Dst(name="dst", out=out)

    @schedule
    def copy(src: Src, dst: Dst) -> None:
        if cutlass.const_expr(UNROLL > 1):
            with domain_loop(0, 64, 1, unroll=UNROLL):
                v = src.get()
                dst.put(v=v)
        else:
            with domain_loop(0, 64, 1):
                v = src.get()
                dst.put(v=v)

    task = Task(name="T", src_resources=[src], dst_resources=[dst], warp_idx=0, num_warps=1,
                schedule=copy(src, dst))
    tm = TaskManager(tasks=[task], resource_dependency_graph={dst: [src]})
    tm.setup_resources_and_tasks()
    tm.run()


@cute.jit
def launch(out: cute.Tensor, stream):
    copy_kernel(out).launch(grid=(1, 1, 1), block=(32, 1, 1), stream=stream)


def build():
    from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream
    return cute.compile(launch, make_fake_compact_tensor(cutlass.Int32, (64,)), make_fake_stream())
'''
_PLAIN_IF = _DSL_KERNEL.replace("        if cutlass.const_expr(UNROLL > 1):",
                                "        if UNROLL > 1:  # expect: TS965")
_PLAIN_RANGE = _DSL_KERNEL.replace("""                v = src.get()
                dst.put(v=v)
        else:""", """                for _ in range(1):  # expect: TS965
                    v = src.get()
                    dst.put(v=v)
        else:""")
_NEXT_FRONTEND = _PLAIN_IF.replace("  # expect: TS965", "").replace(
    "return cute.compile(launch,", "return cute.compile[cute.FrontendNext](launch,")
_NEXT_RANGE = _PLAIN_RANGE.replace("return cute.compile(launch,", "return cute.compile[cute.FrontendNext](launch,")

DSL_CONTROL_FLOW = rule("TS965", "dsl-runtime-control-flow", """
    A plain `if` or `for ... in range(...)` around schedule operations, in a schedule the
    CuTe DSL compiles as run-time control flow.

    ## What it does
    In an `@schedule` function defined inside a `@cute.jit` / `@cute.kernel` function
    (the DSL rewrites that function's control flow, nested functions included), of a
    kernel compiled with `cute.compile(...)` without `cute.FrontendNext`: reports an `if`
    whose condition is not `cutlass.const_expr(...)`, or a `for` over Python's `range`,
    whose body uses a schedule parameter. With `cute.compile[cute.FrontendNext]` an `if`
    is folded, but a `for` over `range` is still a run-time loop: reported when a work
    call in it passes a routed value (a task-local variable from an earlier work call).
    The front end ts-lint follows is the one the module's own `cute.compile` call names
    (none, and no finding, when a condition ts-lint cannot decide chooses between
    `cute.compile[cute.FrontendNext]` and `cute.compile`).
    ## Why is this bad?
    That front end turns the block into a run-time branch or loop, and a schedule
    parameter (a resource proxy, a Python object) cannot be carried through one: the
    reference fails compiling the kernel with `DSLUserCodeError:
    error[TYPE_DYNAMIC_EXPR_UNSUPPORTED]: A value carried through this if is a plain Python
    value ... (a ResourceProxy)`, even when the condition is a compile-time constant
    (FrontendNext: `error[CONTAINER_LIST_SHAPE_MUTATED]: the length ... of list routes is
    changed inside a for/while/if whose path is decided at run time`).
    ## Example
    `if UNROLL > 1:` choosing between two `domain_loop(...)` forms.
    ## Use instead
    `if cutlass.const_expr(UNROLL > 1):`, and `for i in cutlass.range_constexpr(n):`.
    """, phase="frontend", severity=Severity.ERROR, exc="DSLUserCodeError",
    valid=[_DSL_KERNEL, _NEXT_FRONTEND], invalid=[_PLAIN_IF, _PLAIN_RANGE, _NEXT_RANGE])

_STAGE_FIELD_TYPO = _DSL_KERNEL.replace("        return cutlass.Int32(stage_info.loop_offset)",
                                        "        return cutlass.Int32(stage_info.loop_ofset)  # expect: TS963")
UNKNOWN_API_ATTRIBUTE.INVALID.append(_STAGE_FIELD_TYPO)
UNKNOWN_API_ATTRIBUTE.VALID.append(_DSL_KERNEL)

_SELF_ATTR_TYPO = _DSL_KERNEL.replace("        self.out[stage_info.loop_offset] = v",
                                      "        self.outt[stage_info.loop_offset] = v  # expect: TS966")
# an attribute the class does not declare, set by the kernel on the object before it is traced
_SELF_ATTR_SET_OUTSIDE = _DSL_KERNEL.replace("        self.out[stage_info.loop_offset] = v",
                                             "        self.target[stage_info.loop_offset] = v").replace(
    '    dst = Dst(name="dst", out=out)\n', '    dst = Dst(name="dst", out=out)\n    dst.target = out\n')

UNDEFINED_SELF_ATTRIBUTE = rule("TS966", "undefined-resource-attribute", """
    `self.<name>` in a work method where the resource has no attribute of that name.

    ## What it does
    In the work methods a schedule of a kernel calls (and the `self.helper(...)` methods
    they call), reports a read of `self.<name>` that certainly runs when no class of the
    resource's MRO defines `name` (class attributes, methods, properties, dataclass
    fields, anything the class bodies bind), the MemoryResource base does not have it, and
    no code of the program sets it (`self.name = ...` in any method, `obj.name = ...`
    anywhere, `setattr(obj, "name", ...)`), with the closest name. Not judged: a class
    with `__getattr__`, `__getattribute__`, `__setattr__`, `__slots__`, a metaclass or a
    decorator other than `@dataclass`, a base class ts-lint cannot see, a program that
    uses `__dict__`, `exec` or `setattr` with a computed name, a read under a condition
    ts-lint cannot decide. What the framework itself gives a resource comes from ts's own
    MemoryResource (the drop-in's classes and what its modules set) and the names seen on
    the reference's live objects (`workbody.FRAMEWORK_NAMES`, kept in sync by
    tests/test_api_surface.py).
    ## Why is this bad?
    Python raises AttributeError there when the kernel is traced: the reference fails
    compiling the kernel with `'SmemTile' object has no attribute 'bufs'`.
    ## Example
    `return self.bufs[stage_info.stage_idx * tile + tx]` where the class declares `buf`.
    ## Use instead
    The attribute's real name (`self.buf`), or declare the field on the class.
    """, phase="frontend", severity=Severity.ERROR, exc="AttributeError",
    valid=[_DSL_KERNEL, _SELF_ATTR_SET_OUTSIDE], invalid=[_SELF_ATTR_TYPO])

# a loop that sums with range_constexpr: in a module-level helper the kernel calls (not
# preprocessed), and the same helper defined inside the kernel (preprocessed)
_HELPER = "def warm_count(n):\n    total = 0\n    for i in cutlass.range_constexpr(n):\n        total += i\n    return total\n"
_RANGE_CONSTEXPR_PLAIN = _DSL_KERNEL.replace(
    "@cute.kernel\ndef copy_kernel(out: cute.Tensor):\n",
    _HELPER.replace("    for i in cutlass.range_constexpr(n):\n", "    for i in cutlass.range_constexpr(n):  # expect: TS967\n")
    + "\n\n@cute.kernel\ndef copy_kernel(out: cute.Tensor):\n    warm = warm_count(UNROLL)\n", 1)
_RANGE_CONSTEXPR_NESTED = _DSL_KERNEL.replace(
    "@cute.kernel\ndef copy_kernel(out: cute.Tensor):\n",
    "@cute.kernel\ndef copy_kernel(out: cute.Tensor):\n" + "".join("    " + line + "\n" for line in _HELPER.splitlines())
    + "    warm = warm_count(UNROLL)\n", 1)

RANGE_CONSTEXPR_OUTSIDE_JIT = rule("TS967", "range-constexpr-outside-jit", """
    `cutlass.range_constexpr(...)` called where the CuTe DSL does not unroll it.

    ## What it does
    Reports a `cutlass.range_constexpr(...)` call that building the kernel certainly runs
    (while a `@cute.jit` / `@cute.kernel` function is compiled, or in a `build()` entry
    point) in a function that is neither a `@cute.jit` / `@cute.kernel` function nor
    defined inside one: an `@schedule` function or a helper at module level, a plain
    method, a work method without `@cute.jit` (followed, like TS973, along the work
    calls in the order the kernel traces them: the first failure ends the trace). Not
    judged under a `try` with a handler, in functions run only with assumed arguments,
    or after a branch ts-lint could not decide that may have returned.
    ## Why is this bad?
    The DSL's preprocessor turns `for i in cutlass.range_constexpr(n):` into an unrolled
    loop only in the source of the function it compiles (nested functions included); a
    call anywhere else runs the function itself, which raises: the reference fails
    compiling the kernel with `DSLRuntimeError: range_constexpr should be preprocessed by
    preprocessor`.
    ## Example
    An `@schedule` function defined at module level whose body loops with
    `cutlass.range_constexpr(2)`.
    ## Use instead
    Define the schedule (or helper) inside the `@cute.kernel` / `@cute.jit` function, or
    make the factory that defines it a `@cute.jit` function; or use a plain `range(...)`
    where the loop only repeats Python code.
    """, phase="frontend", severity=Severity.ERROR, exc="DSLRuntimeError",
    valid=[_DSL_KERNEL, _RANGE_CONSTEXPR_NESTED], invalid=[_RANGE_CONSTEXPR_PLAIN])

# a stage-count check in the build: met with the default, failing with a stage count the
# build computes from a changed constant
_STAGE_CHECK = """    if stages not in (2, 4):
        raise ValueError(f"unsupported stage count {stages}")
"""
_BUILD_CHECK_OK = _VALID.replace("def build(stages=2, consumer=128):\n",
                                 "def build(stages=2, consumer=128):\n" + _STAGE_CHECK, 1)
_BUILD_RAISES = _VALID.replace("def build(stages=2, consumer=128):\n",
                               "def build(stages=3, consumer=128):\n" + _STAGE_CHECK.replace(
                                   '        raise ValueError(f"unsupported stage count {stages}")\n',
                                   '        raise ValueError(f"unsupported stage count {stages}")  # expect: TS968\n'), 1)

BUILD_RAISES = rule("TS968", "build-raises", """
    Building the kernel raises: a `raise` that is reached or an `assert` that fails.

    ## What it does
    While the kernel is built with the program's own values (the `@cute.jit` /
    `@cute.kernel` functions an entry point callable without arguments compiles, such as
    `compile_fake()`, or a `build()` entry point, and the helpers they call, reached from
    TS code), reports a `raise` statement that the run reaches and nothing catches, or an
    `assert` whose condition is false, for example a factory's `match` default reached
    with a misspelt kind. Not judged: a host driver's own checks outside the kernel build
    (a tutorial's `run()` asserting its input sizes), a `try` with a handler around it,
    functions run only with assumed arguments, the `__main__` block's run (command-line
    values may differ from their argparse defaults), code after a branch ts-lint could
    not decide that may have returned, and conditions ts-lint cannot resolve. The
    import's own are TS961.
    ## Why is this bad?
    The exception stops the build: the kernel is never compiled, and the reference
    reports that exception (`ValueError: unknown mode cpy`) instead of checking it.
    ## Example
    `def build(stages=3)` with `if stages not in (2, 4): raise ValueError(...)` inside.
    ## Use instead
    Fix the value the check is about, or the check.
    """, phase="frontend", severity=Severity.ERROR, exc="ValueError", valid=[_VALID, _BUILD_CHECK_OK],
    invalid=[_BUILD_RAISES])

# a named barrier among the kernel's threads: one warp (valid), a count that is not whole
# warps (invalid)
_BARRIER_OK = _DSL_KERNEL.replace("import cutlass.cute as cute\n",
                                  "import cutlass.cute as cute\nfrom cutlass.experimental import primitives as prims\n", 1
                                  ).replace("UNROLL = 2\n", "UNROLL = 2\nSYNC_THREADS = 32\n", 1).replace(
    "    tm.run()\n", "    tm.run()\n    prims.barrier_cta_sync(1, thread_count=SYNC_THREADS)\n", 1)
_BARRIER_BAD = _BARRIER_OK.replace("SYNC_THREADS = 32\n", "SYNC_THREADS = 33\n", 1).replace(
    "    prims.barrier_cta_sync(1, thread_count=SYNC_THREADS)\n",
    "    prims.barrier_cta_sync(1, thread_count=SYNC_THREADS)  # expect: TS969\n", 1)

# the same count in a work method the kernel's `tm.run()` traces, under a run-time `if`
_BARRIER_IN_WORK = _DSL_KERNEL.replace("import cutlass.cute as cute\n",
                                       "import cutlass.cute as cute\nfrom cutlass.experimental import primitives as prims\n",
                                       1).replace("UNROLL = 2\n", "UNROLL = 2\nSYNC_THREADS = 33\n", 1).replace(
    "        self.out[stage_info.loop_offset] = v\n",
    "        self.out[stage_info.loop_offset] = v\n        if v > 0:\n"
    "            prims.barrier_cta_sync(1, thread_count=SYNC_THREADS)  # expect: TS969\n", 1)

BARRIER_COUNT = rule("TS969", "barrier-count", """
    A named barrier or mbarrier gets a thread / arrival count that PTX rejects.

    ## What it does
    Reports a call, in the kernel being built, of a barrier primitive whose count is a
    known int out of range: `barrier_cta_sync` / `barrier_cta_arrive` of
    `cutlass.experimental.primitives` (`thread_count=`) and `cute.arch.barrier` /
    `barrier_arrive` (`number_of_threads=`) with a count that is not a positive multiple
    of 32; `mbarrier_init` (either module) with an arrival count outside [1, 1048575].
    Only where the build certainly reaches the call (not under a `try` with a handler,
    not in a function run only with assumed arguments, not after a branch ts-lint could
    not decide that may have returned). In the work methods the kernel's schedules call
    (and the helper methods they certainly call), which `tm.run()` traces when the
    TaskManager is made inside the kernel being compiled, a call in either branch of an
    `if` ts-lint cannot decide is judged too: the DSL traces both branches of a run-time
    `if`; a branch under `cutlass.const_expr(...)` that is false is not traced.
    ## Why is this bad?
    `bar.sync` / `bar.arrive` count threads in whole warps and `mbarrier.init` takes 1 to
    2^20 - 1 arrivals: the CuTe DSL raises ValueError compiling the kernel (`barrier.cta.sync:
    thread_count must be a multiple of 32`), typically after a warp or split count the
    count is computed from was changed.
    ## Example
    `prims.barrier_cta_sync(bar_id, thread_count=threads_in_epilogue)` with
    `threads_in_epilogue = 129`.
    ## Use instead
    Count whole warps (`num_warps * 32`), or fix the count the arrival count is computed from.
    """, phase="frontend", severity=Severity.ERROR, exc="ValueError", valid=[_BARRIER_OK],
    invalid=[_BARRIER_BAD, _BARRIER_IN_WORK])

# a resource flag that holds `cutlass.Boolean(False)` from `__post_init__`, tested by a work
# method and set by an auxiliary work method, in a kernel compiled with FrontendNext
_FLAG_KERNEL = _DSL_KERNEL.replace(
    "from ts_runtime import consumer_work,", "from ts_runtime import WorkAttr, consumer_work,", 1).replace(
    "    out: cute.Tensor = None\n", '''    out: cute.Tensor = None
    flag: object = None

    def __post_init__(self) -> None:
        self.flag = cutlass.Boolean(False)

    @producer_work(work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def set_flag(self, stage_info: StageInfo) -> None:
        self.flag = cutlass.Int32(stage_info.loop_offset) == 0
''', 1).replace("        self.out[stage_info.loop_offset] = v\n",
                 "        if self.flag:\n            self.out[stage_info.loop_offset] = v\n", 1).replace(
    "return cute.compile(launch,", "return cute.compile[cute.FrontendNext](launch,", 1)
# the copy schedule's body, which the examples replace
_FLAG_LOOP = _DSL_KERNEL[_DSL_KERNEL.index("        if cutlass.const_expr(UNROLL > 1):"):
                         _DSL_KERNEL.index("\n    task = Task(")]
_FLAG_SET_FIRST = _FLAG_KERNEL.replace(_FLAG_LOOP, '''        dst.set_flag()
        with domain_loop(0, 64, 1):
            v = src.get()
            dst.put(v=v)
''', 1)
_FLAG_PLAIN = _FLAG_KERNEL.replace(_FLAG_LOOP, '''        with domain_loop(0, 64, 1):
            v = src.get()
            dst.put(v=v)
        dst.set_flag()
''', 1).replace("return cute.compile[cute.FrontendNext](launch,", "return cute.compile(launch,", 1)
_FLAG_SET_AFTER = _FLAG_KERNEL.replace(_FLAG_LOOP, '''        with domain_loop(0, 64, 1):
            v = src.get()
            dst.put(v=v)
        dst.set_flag()  # expect: TS970
''', 1)
_FLAG_SET_IN_LOOP = _FLAG_KERNEL.replace(_FLAG_LOOP, '''        with domain_loop(0, 64, 1):
            v = src.get()
            dst.put(v=v)
            dst.set_flag()  # expect: TS970
''', 1)

FOLDED_PREDICATE = rule("TS970", "folded-predicate-changed", """
    A work call changes a resource attribute that an earlier work call tested as a condition while it held a compile-time value, in a kernel compiled with FrontendNext.

    ## What it does
    Follows the work calls of the kernel's schedules in the order FrontendNext traces
    them (the TaskManager's task order, then each schedule's order: head, domain-loop
    body, tail). A work method (or a helper method it certainly calls) whose `if` /
    `while` tests a resource attribute alone (`if self.is_leader:`, `if not
    self.flag:`) while that attribute still holds the DSL constant that `__init__` /
    `__post_init__` set (a `cutlass` number of a literal: `self.is_leader =
    cutlass.Boolean(False)`) folds that branch; a later work call, of any task, whose
    method sets that attribute of the same resource object is reported. (A plain Python
    bool or int attribute is folded too, but the reference lets it change.)
    Judged in a kernel compiled with `cute.compile[cute.FrontendNext]` (ts-lint follows
    the front end the `cute.compile` call names), with the TaskManager made inside the
    kernel.
    ## Why is this bad?
    FrontendNext traces the tasks inside a loop of the reference's own: the condition was
    decided once, at trace time, on the placeholder value, and the attribute changes
    afterwards in the same loop body, so the decision would be stale. Compiling the
    kernel fails with `PHASE_PREDICATE_FOLDED_STALE` (`self.is_leader` is changed here
    inside a for/while body, but an if/while condition already folded on its
    compile-time value). Typically the setup work call that gives the attribute its
    run-time value (`smem_a.init_load_state()`) was deleted from, or moved after, the
    schedule that tests it. ts_runtime's own code generation does not trace the tasks in
    such a loop and compiles the kernel: the finding is ts-lint's.
    ## Example
    A load task's `tma_load_a()` tests `if self.is_leader:` before any
    `init_load_state()` of its schedule; the MMA task's `init_descriptors()` then sets
    `self.is_leader`.
    ## Use instead
    Call the setup work method that sets the attribute at the start of the schedule that
    tests it (its head), before the work call that tests it.
    """, phase="frontend", severity=Severity.ERROR, exc="DSLUserCodeError", valid=[_FLAG_SET_FIRST, _FLAG_PLAIN],
    invalid=[_FLAG_SET_AFTER, _FLAG_SET_IN_LOOP])

_MISSPELT_IMPORT = _VALID.replace(
    "from ts_runtime.resources import MemoryResource, PipelineConfig, TaskLocalVariable",
    "from ts_runtime.resources import MemoryResource, PipelineConfig, TaskLocalVarible  # expect: TS971")
_WRONG_MODULE_IMPORT = _VALID.replace(
    "from ts_runtime.task import Task\n",
    "from ts_runtime.task import Task\nfrom ts_runtime import TaskManager as _TM  # expect: TS971\n")
_GUARDED_IMPORT = _VALID.replace(
    "from ts_runtime.task import Task\n",
    "from ts_runtime.task import Task\ntry:\n    from ts_runtime import TaskManager as _TM\n"
    "except ImportError:\n    _TM = None\n")
assert _MISSPELT_IMPORT != _VALID and _WRONG_MODULE_IMPORT != _VALID and _GUARDED_IMPORT != _VALID

UNKNOWN_TS_IMPORT = rule("TS971", "unknown-ts-import", """
    An import of a TS module, or of a name from one, that does not exist.

    ## What it does
    Reports `from cutlass.experimental.task_scheduling[.module] import name` (or the same
    from `ts_runtime`) where the module has no such name (a typo, or a class imported
    from another module than the one that defines it: `MemoryResource` is in
    `.resources`, `Task` in `.task`, `TaskManager` in `.task_manager`), and `import` /
    `from` of a TS submodule that does not exist, with the closest name or the module
    that defines it. ts_runtime's modules have the reference's public names and
    submodules (tests/test_api_surface.py); a name only ts_runtime has is not judged.
    Not reported under a `try` with a handler (an import with a fallback).
    ## Why is this bad?
    Python raises ImportError there, when the module is imported: nothing after it
    runs, and no kernel is built. Without this finding, the first report would be a
    NameError further down, where the name is used.
    ## Example
    `from cutlass.experimental.task_scheduling.resources import MemoryResorce`, or
    `from cutlass.experimental.task_scheduling import Task`.
    ## Use instead
    The name as the module spells it, from the module that defines it
    (`from cutlass.experimental.task_scheduling.task import Task`).
    """, phase="frontend", severity=Severity.ERROR, exc="ImportError", valid=[_VALID, _GUARDED_IMPORT],
    invalid=[_MISSPELT_IMPORT, _WRONG_MODULE_IMPORT])

# the kernel's host function passed to cute.compile without @cute.jit
_COMPILE_NO_JIT = _DSL_KERNEL.replace("@cute.jit\ndef launch(out: cute.Tensor, stream):\n",
                                      "def launch(out: cute.Tensor, stream):\n", 1).replace(
    "return cute.compile(launch,", "return cute.compile(launch,  # expect: TS972\n                        ", 1)
assert _COMPILE_NO_JIT.count("# expect: TS972") == 1 and "@cute.jit\ndef launch" not in _COMPILE_NO_JIT

COMPILE_WITHOUT_JIT = rule("TS972", "compile-without-jit", """
    A function passed to `cute.compile(...)` that is not a `@cute.jit` function.

    ## What it does
    Reports `cute.compile(f, ...)` (any front end: `cute.compile[...]` too) that building
    the kernel certainly runs, where `f` is a function defined without any decorator.
    A function with some other decorator is not judged: ts-lint does not know what that
    decorator returns. With the range of the def as a related location.
    ## Why is this bad?
    The CuTe DSL compiles only a `@cute.jit` function: `cute.compile` raises
    `DSLUserCodeError: error[CALL_MISSING_JIT_DECORATOR]: Function must be decorated with
    @cute.jit before passing it to cute.compile()` before it traces anything, so no kernel
    (and no TS schedule) is built. Typically the decorator of the host launch function
    was deleted.
    ## Example
    `def launch(out, stream): copy_kernel(out).launch(...)` compiled with
    `cute.compile(launch, ...)`.
    ## Use instead
    Decorate the function with `@cute.jit` (the unsafe fix adds it).
    """, phase="frontend", severity=Severity.ERROR, exc="DSLUserCodeError", valid=[_DSL_KERNEL],
    invalid=[_COMPILE_NO_JIT])

# a work method without @cute.jit whose `if` tests a run-time value: the loop offset of a
# call in the domain loop, or the thread index
_PUT_JIT = """    @producer_work
    @cute.jit
    def put(self, stage_info: StageInfo, v: cutlass.Int32) -> None:
        self.out[stage_info.loop_offset] = v
"""
assert _PUT_JIT in _DSL_KERNEL
_PLAIN_PUT_LOOP_TEST = _DSL_KERNEL.replace(_PUT_JIT, """    @producer_work
    def put(self, stage_info: StageInfo, v: cutlass.Int32) -> None:
        if stage_info.loop_offset < 48:  # expect: TS973
            self.out[stage_info.loop_offset] = v
""", 1)
_PLAIN_PUT_THREAD_TEST = _DSL_KERNEL.replace(_PUT_JIT, """    @producer_work
    def put(self, stage_info: StageInfo, v: cutlass.Int32) -> None:
        tx, _, _ = cute.arch.thread_idx()
        row = tx + stage_info.loop_offset
        if row < 48:  # expect: TS973
            self.out[row] = v
""", 1)
# the same test with @cute.jit, and without it where the DSL need not take its truth
_JIT_PUT_LOOP_TEST = _PLAIN_PUT_LOOP_TEST.replace("  # expect: TS973", "").replace(
    "    @producer_work\n    def put(", "    @producer_work\n    @cute.jit\n    def put(", 1)
_PLAIN_PUT_CONST_TEST = _PLAIN_PUT_LOOP_TEST.replace("        if stage_info.loop_offset < 48:  # expect: TS973\n",
                                                     "        if cutlass.const_expr(UNROLL > 1):\n", 1)
assert _PLAIN_PUT_CONST_TEST != _PLAIN_PUT_LOOP_TEST and _JIT_PUT_LOOP_TEST != _PLAIN_PUT_LOOP_TEST

RUNTIME_VALUE_AS_BOOL = rule("TS973", "runtime-value-as-python-bool", """
    A condition on a DSL run-time value in a work method that is not a `@cute.jit`
    function.

    ## What it does
    In a work method a kernel's schedules call (or a helper method it certainly calls)
    that is neither `@cute.jit` nor defined inside a `@cute.jit` / `@cute.kernel`
    function, reports the first `if` / `while` / `assert` test, `x if c else y` test,
    operand of `not` or left operand of `and` / `or` that the body certainly reaches and
    that is certainly a run-time value when the kernel is traced: the thread, block or
    warp index (`cute.arch.thread_idx()`, `block_idx()`, `warp_idx()`, `lane_idx()`,
    `block_idx_in_cluster()`), `elect_sync()`, `stage_info.loop_offset` in a method a
    schedule calls inside its domain loop (in the head or tail it is a Python int), the
    locals bound to them, and arithmetic, comparisons and DSL number casts of such
    values. Other values (a resource attribute, a routed work input, `cutlass.Int32(0)`)
    may be compile-time constants and are not judged. Judged in a kernel being compiled
    (the TaskManager is made inside a `@cute.kernel`).
    ## Why is this bad?
    The CuTe DSL rewrites the control flow of `@cute.jit` functions only; a plain method
    is run as Python while the kernel is traced, and Python's `if` asks for the truth of
    the value, which a run-time value does not have: compiling the kernel fails with
    `DSLUserCodeError: error[PHASE_DYNAMIC_TO_STATIC_BOOL]: Cannot use a Runtime value
    (Staged value) value where a Python value (Meta value) boolean is required`.
    Typically the `@cute.jit` under the work decorator was deleted.
    ## Example
    `@producer_work def put(self, stage_info, v): if stage_info.loop_offset < 48: ...`
    called in a domain loop.
    ## Use instead
    Decorate the method with `@cute.jit` under its work decorator (the unsafe fix adds
    it), or make the condition a compile-time one with `cutlass.const_expr(...)`.
    """, phase="frontend", severity=Severity.ERROR, exc="DSLUserCodeError",
    valid=[_DSL_KERNEL, _JIT_PUT_LOOP_TEST, _PLAIN_PUT_CONST_TEST],
    invalid=[_PLAIN_PUT_LOOP_TEST, _PLAIN_PUT_THREAD_TEST])

# a plain helper called without one of its arguments (Python's TypeError), and a kernel
# launched with an argument its signature no longer has (the DSL's ARG_BIND_FAILED:
# tests/lint/test_ts974.py)
_KERNEL_EXTRA_ARG = _DSL_KERNEL.replace(
    "    copy_kernel(out).launch(grid=(1, 1, 1), block=(32, 1, 1), stream=stream)\n",
    "    copy_kernel(out, stream).launch(grid=(1, 1, 1), block=(32, 1, 1), stream=stream)  # expect: TS974\n", 1)
_HELPER_MISSING_ARG = _DSL_KERNEL.replace(
    "    tm = TaskManager(tasks=[task], resource_dependency_graph={dst: [src]})\n",
    "    tm = make_manager([task])  # expect: TS974\n", 1).replace(
    "@cute.kernel\ndef copy_kernel", "def make_manager(tasks, graph):\n"
    "    return TaskManager(tasks=tasks, resource_dependency_graph=graph)\n\n\n@cute.kernel\ndef copy_kernel", 1)
_HELPER_ALL_ARGS = _HELPER_MISSING_ARG.replace("    tm = make_manager([task])  # expect: TS974\n",
                                               "    tm = make_manager([task], {dst: [src]})\n", 1)
assert _KERNEL_EXTRA_ARG != _DSL_KERNEL and _HELPER_ALL_ARGS != _HELPER_MISSING_ARG

CALL_SIGNATURE_MISMATCH = rule("TS974", "call-signature-mismatch", """
    A call of one of the program's own functions whose arguments do not fit its
    parameters.

    ## What it does
    Reports a call that building the kernel certainly runs (the kernel, the host
    function, `build()`, the `__main__` block's run, and the functions they call) of a
    function defined in the program with a plain `def` (no decorator but `@cute.jit` /
    `@cute.kernel`) whose arguments Python cannot bind: too many positional arguments, a
    keyword the function does not have or that a positional argument already gave, a
    required argument missing. Calls with `*args` / `**kwargs` are not judged, nor calls
    under a `try` with a handler or after a branch ts-lint could not decide that may have
    returned. With the def as a related location.
    ## Why is this bad?
    Python raises `TypeError` (`f() missing 1 required positional argument: 'graph'`)
    and the CuTe DSL, for a `@cute.jit` / `@cute.kernel` function, `DSLUserCodeError:
    error[ARG_BIND_FAILED]: The arguments do not match the function signature`, before
    the function runs: no kernel is built. Typically a parameter was deleted from a
    kernel's signature, or an argument from a call.
    ## Example
    `make_manager([task])` for `def make_manager(tasks, graph)`; `copy_kernel(out,
    stream).launch(...)` for `@cute.kernel def copy_kernel(out)`.
    ## Use instead
    Pass the arguments the function declares (or give the parameter a default).
    """, phase="frontend", severity=Severity.ERROR, exc="TypeError",
    valid=[_DSL_KERNEL, _HELPER_ALL_ARGS], invalid=[_HELPER_MISSING_ARG])

__all__ = ["UNUSED_NOQA", "IMPORT_RAISES", "UNBOUND_NAME", "UNKNOWN_API_ATTRIBUTE", "OPERAND_TYPE_ERROR",
           "DSL_CONTROL_FLOW", "UNDEFINED_SELF_ATTRIBUTE", "RANGE_CONSTEXPR_OUTSIDE_JIT", "BUILD_RAISES",
           "BARRIER_COUNT", "FOLDED_PREDICATE", "UNKNOWN_TS_IMPORT",
           "COMPILE_WITHOUT_JIT", "RUNTIME_VALUE_AS_BOOL",
           "CALL_SIGNATURE_MISMATCH"]
