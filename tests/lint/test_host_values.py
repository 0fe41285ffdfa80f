"""Host-code constructs kernel authors use around the TS API, evaluated by ts-lint's
interpreter so that the rules see the values: user-defined enum classes, `globals()`
writes, `os.environ` defaults, the conditional `cute.compile[cute.FrontendNext]` idiom and
`isinstance` on the TS objects ts-lint models. Each has a value test and an end-to-end
test: the defect behind the construct is reported with its code and line (the reference's
verdict on the same program is quoted), and the valid program stays clean.

The tutorial-style programs are built from `MIN`, a minimal valid kernel (one task, two
GMEM resources) in the reference's import style (ts-lint never imports cutlass)."""
import textwrap

import pytest

from ts_runtime.diagnostics import Severity
from ts_runtime.model.values import UNKNOWN
from ts_runtime.testing import codes_and_lines, run_program

from ts_lint.api import lint_source
from ts_lint.rules_lint import COPY_SCHEDULES

from lint_parity import HEADER

ALL = tuple(Severity)


def module_values(text):
    """The module-level variables after ts-lint's interpreter ran the module body."""
    from ts_lint.extract.context import Context
    from ts_lint.extract.interpreter import Interpreter
    from ts_lint.extract.source import parse
    src = parse(textwrap.dedent(text), "m.py")
    it = Interpreter(Context("m.py", src.pos, False, src), src.module)
    it.run_module()
    return it.module_scope.vars


def errors(src):
    return sorted((d.code, d.range.line) for d in lint_source(src, "program.py") if d.severity is Severity.ERROR)


def line_of(src, text):
    """1-based line of the only line containing `text`."""
    hits = [i for i, line in enumerate(src.splitlines(), 1) if text in line]
    assert len(hits) == 1, (text, hits)
    return hits[0]


MIN = '''\
from dataclasses import dataclass

import cutlass
import cutlass.cute as cute
from cutlass.experimental.task_scheduling.resources import (
    MemoryResource, StageInfo, TaskLocalVariable, consumer_work, producer_work)
from cutlass.experimental.task_scheduling.schedule_builder import schedule, domain_loop
from cutlass.experimental.task_scheduling.task import Task
from cutlass.experimental.task_scheduling.task_manager import TaskManager

NUM_WARPS = 4
NUM_REGS = 168


@dataclass(kw_only=True)
class Src(MemoryResource):
    t: cute.Tensor
    item: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()

    def __post_init__(self) -> None:
        self.item = TaskLocalVariable(dtype=cutlass.Int16, default=cutlass.Int16(0))

    @consumer_work(returns=item)
    @cute.jit
    def get_item(self, stage_info: StageInfo) -> cutlass.Int16:
        return self.t[stage_info.loop_offset]


@dataclass(kw_only=True)
class Dst(MemoryResource):
    t: cute.Tensor

    @producer_work
    @cute.jit
    def set_item(self, stage_info: StageInfo, data: cutlass.Int16) -> None:
        self.t[stage_info.loop_offset] = data


@schedule
def copy_schedule(src, dst):
    with domain_loop(0, 1024, NUM_WARPS * 32):
        v = src.get_item()
        dst.set_item(data=v)


@cute.kernel
def kernel(a: cute.Tensor, b: cute.Tensor):
    src = Src(name="src", t=a)
    dst = Dst(name="dst", t=b)
    task = Task(name="CopyTask", src_resources=[src], dst_resources=[dst], warp_idx=0,
                num_warps=NUM_WARPS, schedule=copy_schedule(src, dst), num_registers=NUM_REGS)
    tm = TaskManager(tasks=[task], resource_dependency_graph={dst: [src]})
    tm.setup_resources_and_tasks()
    tm.run()


@cute.jit
def host(a: cute.Tensor, b: cute.Tensor):
    kernel(a, b).launch(grid=(1, 1, 1), block=(NUM_WARPS * 32, 1, 1))


def compile_fake():
    from cutlass.cute.runtime import make_fake_compact_tensor as fake

    return cute.compile[cute.FrontendNext](host, fake(cutlass.Int16, (1024,)), fake(cutlass.Int16, (1024,)))
'''


def variant(*subs):
    src = MIN
    for old, new in subs:
        assert src.count(old) == 1, old
        src = src.replace(old, new)
    return src


def test_min_program_is_clean():
    assert errors(MIN) == []


# ====================================================================== 1. enum classes
def test_user_enum_values():
    v = module_values('''
        import enum
        from enum import Enum, IntEnum, auto, unique

        class Regs(enum.Enum):
            EPI = 164
            MMA = 232

        class Role(IntEnum):
            COPY = 0
            LOAD = 1

            @property
            def regs(self):
                return {Role.COPY: 160, Role.LOAD: 40}[self]

            def warps(self, n):
                return n * (self.value + 1)

            @classmethod
            def first(cls):
                return cls(0)

            @staticmethod
            def bump(x):
                return x + 1

        class Color(enum.Flag):
            R = auto()
            G = auto()
            B = auto()

        class Name(enum.StrEnum):
            A = auto()
            B = "bee"

        @unique
        class Mixed(str, Enum):
            X = "x"

        Fn = IntEnum("Fn", "P Q R", start=0)

        value, name = Regs.EPI.value, Regs.EPI.name
        names = [r.name for r in Role]
        size, members = len(Role), list(Role)
        by_name, by_value = Role["LOAD"], Role(1)
        as_key = {Role.COPY: 1, Role.LOAD: 2}[Role.LOAD]
        compared = (Role.COPY == 0, Regs.EPI == 164, Role.LOAD > Role.COPY, Regs.EPI is Regs.EPI)
        as_int = int(Role.LOAD)
        prop, meth, cm, st = Role.LOAD.regs, Role.LOAD.warps(2), Role.first(), Role.bump(1)
        flags = Color.R | Color.B
        flag_bits = (flags.value, Color.R in flags, Color.G in flags, len(Color), list(flags))
        strs = (Name.A.value, Name.B.value, Mixed.X.value, str(Regs.EPI), f"{Role.LOAD!r}")
        functional = [(m.name, m.value) for m in Fn]
        dunder = (list(Regs.__members__), Regs.__name__)
        isinst = (isinstance(Role.COPY, Role), isinstance(Role.COPY, int), isinstance(Regs.EPI, Role))
        contained = Role.COPY in Role
        ordered = sorted(Role, reverse=True)
        largest = max(Regs, key=lambda r: r.value)
    ''')
    Role = type(v["by_name"])
    assert (v["value"], v["name"]) == (164, "EPI")
    assert v["names"] == ["COPY", "LOAD"]
    assert v["size"] == 2 and [m.name for m in v["members"]] == ["COPY", "LOAD"]
    assert v["by_name"] is v["by_value"] is Role.LOAD
    assert v["as_key"] == 2
    assert v["compared"] == (True, False, True, True)
    assert v["as_int"] == 1
    assert (v["prop"], v["meth"], v["cm"], v["st"]) == (40, 4, Role.COPY, 2)
    assert v["flag_bits"][:4] == (5, True, False, 3) and [f.name for f in v["flag_bits"][4]] == ["R", "B"]
    assert v["strs"] == ("a", "bee", "x", "Regs.EPI", "<Role.LOAD: 1>")
    assert v["functional"] == [("P", 0), ("Q", 1), ("R", 2)]
    assert v["dunder"] == (["EPI", "MMA"], "Regs")
    assert v["isinst"] == (True, True, False)
    assert v["contained"] is True
    assert [m.name for m in v["ordered"]] == ["LOAD", "COPY"]
    assert v["largest"].name == "MMA"


@pytest.mark.parametrize("body", [
    "A = 1\n    A = 2",                                   # TypeError: reused key
    "A = 1\n    def __str__(self):\n        return 'a'",   # a dunder: its behaviour would be the user's
    "A = 1\n    @classmethod\n    def _missing_(cls, value):\n        return cls.A",
    "A = auto()\n    def _generate_next_value_(name, start, count, last):\n        return name",
    "A = 1\n    _ignore_ = ['B']",
    "A = os.getpid()",                                # a value ts-lint does not know
    "A = 1\n    class Inner:\n        pass",          # a nested class (a member or not, by version)
    "A = 1\n    if FLAG:\n        B = 2",              # members under a condition
    "A = 1\n    def __init__(self, v):\n        self.w = v",
])
def test_enum_classes_that_need_user_code_stay_unknown(body):
    v = module_values(f'''
import enum
import os
from enum import auto
FLAG = True
class E(enum.Enum):
    {body}
x = E.A
''')
    assert v["E"] is UNKNOWN and v["x"] is UNKNOWN


def test_enum_with_a_class_keyword_or_unknown_decorator_stays_unknown():
    v = module_values('''
        import enum, functools
        class F(enum.Flag, boundary=enum.STRICT):
            A = 1
        @functools.total_ordering
        class G(enum.Enum):
            A = 1
        class H(enum.IntEnum):      # a value IntEnum cannot take: Python raises at the class
            A = "a"
    ''')
    assert v["F"] is UNKNOWN and v["G"] is UNKNOWN and v["H"] is UNKNOWN


def test_enum_members_at_a_jit_boundary_are_traced_like_ints():
    """A user IntEnum member passed to the compiled function without Constexpr is a dynamic
    int there (as the plain int ts-lint saw before it modelled enums); a TS enum member
    stays itself."""
    from ts_lint.extract.interpreter import _dynamic
    from ts_runtime.enums import SignalingThreads
    from ts_runtime.model.values import RUNTIME
    import enum

    class Role(enum.IntEnum):
        A = 1
    assert _dynamic(Role.A) is RUNTIME
    assert _dynamic(SignalingThreads.All) is SignalingThreads.All


def test_enum_value_reaches_num_registers():
    """probeB min/D4_enum_value_regs.py. Reference (nvidia-cutlass-dsl 4.8.1): AssertionError
    'num_registers must be between 8 and 256 and divisible by 8, got 164' at the Task."""
    prelude = "import enum\n\n\nclass Regs(enum.Enum):\n    EPI = {}\n\n\nNUM_REGS = Regs.EPI.value"
    bad = variant(("NUM_REGS = 168", prelude.format(164)))
    assert errors(bad) == [("TS712", line_of(bad, "num_registers=NUM_REGS"))]
    assert errors(variant(("NUM_REGS = 168", prelude.format(168)))) == []


def test_enum_iteration_builds_the_task_list():
    """probeB min/D12_enum_iter.py: `for role in Role` builds the tasks. Reference:
    AssertionError 'num_registers must be ... divisible by 8, got 164'."""
    src = variant(
        ("NUM_REGS = 168", "import enum\n\n\nclass Role(enum.IntEnum):\n    COPY = 0\n\n\nREGS = {Role.COPY: 164}"),
        ('''    task = Task(name="CopyTask", src_resources=[src], dst_resources=[dst], warp_idx=0,
                num_warps=NUM_WARPS, schedule=copy_schedule(src, dst), num_registers=NUM_REGS)
    tm = TaskManager(tasks=[task], resource_dependency_graph={dst: [src]})''',
         '''    tasks = [Task(name=f"{role.name.title()}Task", src_resources=[src], dst_resources=[dst],
                  warp_idx=0, num_warps=NUM_WARPS, schedule=copy_schedule(src, dst),
                  num_registers=REGS[role])
             for role in Role]
    tm = TaskManager(tasks=tasks, resource_dependency_graph={dst: [src]})'''))
    assert errors(src) == [("TS712", line_of(src, "num_registers=REGS[role]"))]
    assert errors(src.replace("REGS = {Role.COPY: 164}", "REGS = {Role.COPY: 168}")) == []


# a ts_runtime program: the tracing DSL runs the same enum code for real (the truth)
ROLES = HEADER + '''
import enum


class Role(enum.IntEnum):
    STORE = 0
    LOAD = 1

    @property
    def warps(self):
        return 4 if self is Role.STORE else 1


class Depth(enum.Enum):
    DOUBLE = 2
    QUAD = 4


def build(depth=Depth["DOUBLE"]):
    cfg = PipelineConfig.create_tma_async_pipeline_cfg(
        num_stages=depth.value, num_bytes=4096,
        producer_group=CooperativeGroup(Agent.Thread),
        consumer_group=CooperativeGroup(Agent.Thread, Role.STORE.warps * 32))
    inp, out = InGmem(name="in"), OutGmem(name="out")
    smem = Smem(name="smem", pipeline_config=cfg)
    alloc = SmemAllocator(); alloc.add_resource(smem); alloc.compute_layout()
''' + COPY_SCHEDULES + '''
    wiring = {Role.STORE: ([smem], [out], store_schedule), Role.LOAD: ([inp], [smem], load_schedule)}
    tasks, warp = [], 0
    for role in Role:
        src, dst, sched = wiring[role]
        tasks.append(Task(name=f"{role.name.title()}Task", src_resources=src, dst_resources=dst,
                          warp_idx=warp, num_warps=role.warps, schedule=sched(*src, *dst)))
        warp += role.warps
    return TaskManager(tasks=tasks, resource_dependency_graph={smem: [inp], out: [smem]},
                       smem_allocator=alloc, verbose=False)
'''


@pytest.mark.parametrize("old, new, code", [
    ("", "", None),
    ("return 4 if self is Role.STORE else 1", "return 4 if self is Role.STORE else 2", "TS420"),
    ("Role.STORE.warps * 32", "Role.LOAD.warps * 32", "TS430"),
])
def test_enum_program_same_findings_as_the_runtime(tmp_path, old, new, code):
    src = ROLES.replace(old, new) if old else ROLES
    path = tmp_path / "program.py"
    path.write_text(src)
    runtime = codes_and_lines(run_program(str(path), "build"), ALL)
    lint = codes_and_lines(lint_source(src, "program.py"), ALL)
    assert lint == runtime
    assert {c for c, _ in runtime if c.startswith("TS4")} == ({code} if code else set())


def test_schedule_of_a_bound_method():
    """`schedule(obj.method)(*resources)` (probeB copy_c3_enum.py's `attach`): the method
    runs with `obj` as `self` and binds the resources after it (its signature has no
    `self`). probeB copy_c3_d3_method_no_commit.py, such a method that never commits:
    reference ValueError 'Schedule is blocked!', ts-lint TS810; copy_c3_d4_attach_order.py,
    resources passed in the wrong order: reference AttributeError 'Out schedule proxy has no
    work method ...', ts-lint TS224 (as the work-method typo here)."""
    src = variant(
        ('''@schedule
def copy_schedule(src, dst):
    with domain_loop(0, 1024, NUM_WARPS * 32):
        v = src.get_item()
        dst.set_item(data=v)''', '''class Schedules:
    def __init__(self, n):
        self.n = n

    def copy(self, src, dst):
        with domain_loop(0, self.n, NUM_WARPS * 32):
            v = src.get_item()
            dst.set_item(data=v)


def attach(obj, name, *resources):
    return schedule(getattr(obj, name))(*resources)'''),
        ("schedule=copy_schedule(src, dst)", 'schedule=attach(Schedules(1024), "copy", src, dst)'))
    assert errors(src) == []
    typo = src.replace("v = src.get_item()", "v = src.get_itme()")
    assert errors(typo) == [("TS224", line_of(typo, "src.get_itme()"))]
    bad = src.replace('attach(Schedules(1024), "copy", src, dst)', "schedule(Schedules(1024).copy)(src)")
    assert ("TS907", line_of(bad, "schedule(Schedules(1024).copy)(src)")) in errors(bad)   # missing 'dst'


def test_group_op_with_an_unresolved_mode_is_not_ts219():
    """A PipelineGroup whose mode ts-lint cannot resolve (from an environment variable
    without a default, probeB iso/m1_mode_os_environ.py: the reference accepts) gives no
    TS219 at `group.release()` (which was reported as "(?) only accepts  at the group
    level"); `PipelineGroupMode["Merge"]` is the Merge mode (iso/m1_mode_subscript_literal.py)."""
    from ts_runtime.rules.roles import group_program
    valid = group_program()
    assert "PipelineGroupMode.Merge" in valid
    assert errors(valid) == []
    assert errors(valid.replace("PipelineGroupMode.Merge", 'PipelineGroupMode["Merge"]')) == []
    unknown = valid.replace("PipelineGroupMode.Merge", '__import__("os").environ["MODE"]')
    assert not [d for d in lint_source(unknown, "p.py") if d.code == "TS219"]
    # a known mode that forbids the op still reports it
    fork = valid.replace("PipelineGroupMode.Merge", 'PipelineGroupMode("Fork")')
    assert "TS219" in {d.code for d in lint_source(fork, "p.py")}


# ====================================================================== 2. globals()
def test_globals_writes_and_reads():
    v = module_values('''
        import os
        A, B, C, D = 1, 2, 3, 4

        def configure():
            globals()["A"] = 10
            globals().update({"B": 20}, E=50)
            g = globals()
            g["F"] = 60

        def maybe(flag):
            if flag:
                globals()["C"] = 30        # not run (unknown condition): C is unknown after

        def drop():
            del globals()["D"]

        configure()
        maybe(os.getenv("X"))
        drop()
        values = (A, B, E, F, globals()["A"], globals().get("B"), globals().get("Z", 7), "A" in globals())
        c = C
        d = "D" in globals()
        xs = [1, 2, 3]
        del xs[0]
    ''')
    assert v["values"] == (10, 20, 50, 60, 10, 20, 7, True)
    assert v["c"] is UNKNOWN
    assert v["d"] is False
    assert v["xs"] == [2, 3]


def test_globals_write_with_an_unknown_name_makes_the_module_names_unknown():
    v = module_values('''
        import os
        A = 1
        before = A

        def set_one(name):
            globals()[name] = 5

        def maybe_update(flag, extra):
            if flag:
                globals().update(extra)

        set_one(os.getenv("NAME"))
        after = A
    ''')
    assert v["after"] is UNKNOWN and v["before"] is UNKNOWN       # any module name may have changed
    w = module_values('''
        import os
        A = 1

        def maybe_update(flag, extra):
            if flag:
                globals().update(extra)

        maybe_update(os.getenv("FLAG"), {"A": 2})
        after = A
    ''')
    assert w["after"] is UNKNOWN


def test_globals_dict_write_reaches_the_kernel():
    """probeB min/D10_globals_dict.py: the compile entry rebinds NUM_REGS through
    `globals()` before compiling (as the reference tutorial 01_fp16_bf16_gemm_3_cluster.py
    of commit 418ba45 does with io_dtype and cluster_shape_mnk). Reference: AssertionError
    'num_registers must be between 8 and 256 and divisible by 8, got 164'; the `global`
    statement form (D10_global_stmt_control.py) is the control."""
    entry = "def compile_fake():\n"
    bad = variant((entry, entry + '    globals()["NUM_REGS"] = 164\n'))
    assert errors(bad) == [("TS712", line_of(bad, "num_registers=NUM_REGS"))]
    control = variant((entry, entry + "    global NUM_REGS\n    NUM_REGS = 164\n"))
    assert errors(control) == errors(bad)
    assert errors(variant((entry, entry + '    globals().update(NUM_REGS=176)\n'))) == []
    unknown = variant((entry, entry + '    import os\n    globals()[os.environ["KEY"]] = 164\n'))
    assert errors(unknown) == []


# ====================================================================== 3. os.environ defaults
def test_environment_defaults():
    """ts-lint has no environment: a lookup with a default gives the default (what the
    program computes with the variable unset, as the reference harness runs it); without
    a default it stays unknown."""
    v = module_values('''
        import os
        from os import environ, getenv
        regs = int(os.environ.get("NUM_REGS", "164"))
        stages = os.getenv("STAGES", 3)
        named = getenv("MODE", default="merge")
        no_default = (environ.get("X"), os.getenv("X"))
        subscript = int(os.environ["X"])
        present = "X" in os.environ
    ''')
    assert (v["regs"], v["stages"], v["named"]) == (164, 3, "merge")
    assert v["no_default"] == (UNKNOWN, UNKNOWN)
    assert v["subscript"] is UNKNOWN and v["present"] is UNKNOWN


def test_environment_default_reaches_the_kernel():
    """probeB min/D13_os_environ.py. Reference (environment unset): AssertionError
    'num_registers must be between 8 and 256 and divisible by 8, got 164'."""
    bad = variant(("NUM_REGS = 168", 'import os\n\nNUM_REGS = int(os.environ.get("NUM_REGS", "164"))'))
    assert errors(bad) == [("TS712", line_of(bad, "num_registers=NUM_REGS"))]
    assert errors(bad.replace('"164"', '"168"')) == []
    assert errors(bad.replace('os.environ.get("NUM_REGS", "164")', 'os.environ["NUM_REGS"]')) == []


# ====================================================================== 4. conditional compile entry
NEXT_CALL = "    return cute.compile[cute.FrontendNext](host, fake(cutlass.Int16, (1024,)), fake(cutlass.Int16, (1024,)))"
IFEXP = '''    comp = cute.compile[cute.FrontendNext] if hasattr(cute, "FrontendNext") else cute.compile
    return comp(host, fake(cutlass.Int16, (1024,)), fake(cutlass.Int16, (1024,)))'''
IFSTMT = '''    if hasattr(cute, "FrontendNext"):
        comp = cute.compile[cute.FrontendNext]
    else:
        comp = cute.compile
    return comp(host, fake(cutlass.Int16, (1024,)), fake(cutlass.Int16, (1024,)))'''


def test_compile_entry_chosen_by_an_unknown_condition_values():
    v = module_values('''
        import os
        import cutlass.cute as cute
        flag = os.getenv("X")
        either = cute.compile[cute.FrontendNext] if flag else cute.compile
        same = cute.compile if flag else cute.compile
        other = cute.compile if flag else print
        if flag:
            stmt = cute.compile[cute.FrontendNext]
        else:
            stmt = cute.compile
        if flag:
            mixed = cute.compile
        else:
            mixed = len
    ''')
    assert v["either"].qualname == "cutlass.cute.compile" and v["either"].frontend is None
    assert v["same"].frontend == "plain" and v["stmt"].frontend is None
    assert v["other"] is UNKNOWN and v["mixed"] is UNKNOWN


@pytest.mark.parametrize("call", [IFEXP, IFSTMT])
def test_conditional_front_end_compiles_the_kernel(call):
    """probeA min_condcompile_e04.py (`comp = cute.compile[cute.FrontendNext] if
    hasattr(cute, "FrontendNext") else cute.compile; comp(host_function, ...)`). Reference:
    ValueError 'Exhaustive checker found 1 PDL launch ordering violation(s)'; ts-lint did
    not follow the call (TS950 notes only). Here the kernel's defect is TS712 (reference:
    AssertionError 'num_registers must be ... divisible by 8, got 164')."""
    bad = variant(("NUM_REGS = 168", "NUM_REGS = 164"), (NEXT_CALL, call))
    assert errors(bad) == [("TS712", line_of(bad, "num_registers=NUM_REGS"))]
    assert errors(variant((NEXT_CALL, call))) == []


def test_ts965_is_silent_when_the_front_end_is_not_known():
    """TS965 depends on the front end; with `cute.compile[cute.FrontendNext] if ... else
    cute.compile` it is not known which one compiles the kernel."""
    from ts_lint.rules_lint import _PLAIN_IF
    plain = _PLAIN_IF.replace("  # expect: TS965", "")
    assert errors(plain) == [("TS965", line_of(plain, "if UNROLL > 1:"))]
    either = plain.replace("return cute.compile(launch,", "comp = cute.compile[cute.FrontendNext] if "
                           "hasattr(cute, 'FrontendNext') else cute.compile\n    return comp(launch,")
    assert errors(either) == []
    regs = either.replace("num_warps=1,", "num_warps=1, num_registers=164,")     # the kernel is analysed
    assert errors(regs) == [("TS712", line_of(regs, "num_registers=164"))]


# ====================================================================== 5. isinstance on ts objects
def test_isinstance_of_ts_objects():
    v = module_values('''
        import os
        import cutlass
        from ts_runtime.memory import SmemAllocation, TmemAllocation, SmemAllocator
        from ts_runtime.resources import MemoryResource, PipelineConfig
        from ts_runtime.pipeline import CooperativeGroup, Agent

        class Plain:
            pass

        a = SmemAllocation("x", dtype=cutlass.Float32, count=4)
        g = CooperativeGroup(Agent.Thread)
        allocation = (isinstance(a, SmemAllocation), isinstance(a, TmemAllocation), isinstance(a, (int, SmemAllocation)),
                      isinstance(a, str), isinstance(a, MemoryResource), isinstance(a, Plain))
        others = (isinstance("x", SmemAllocation), isinstance(None, SmemAllocation),
                  isinstance(Plain(), SmemAllocation), isinstance(g, CooperativeGroup),
                  isinstance(g, PipelineConfig), isinstance(SmemAllocator(), SmemAllocator))
        unknown = isinstance(os.getenv("X"), SmemAllocation)
    ''')
    assert v["allocation"] == (True, False, True, False, False, False)
    assert v["others"] == (False, False, False, True, False, True)
    assert v["unknown"] is UNKNOWN


SHARED = HEADER + '''

@dataclass(kw_only=True)
class SharedSmem(Smem):
    alloc: object = None

    def __post_init__(self):
        super().__post_init__()
        if isinstance(self.alloc, SmemAllocation):
            self._a = self.alloc
        elif self.alloc is not None:
            self._a = SmemAllocation(self.alloc, size_bytes=4096)


def build():
    cfg = PipelineConfig.create_tma_async_pipeline_cfg(
        num_stages=2, num_bytes=4096,
        producer_group=CooperativeGroup(Agent.Thread),
        consumer_group=CooperativeGroup(Agent.Thread, 128))
    inp, out = InGmem(name="in"), OutGmem(name="out")
    smem = SharedSmem(name="smem", pipeline_config=cfg, alloc=SmemAllocation("buf", size_bytes=8192))
    alloc = SmemAllocator(); alloc.add_resource(smem); alloc.compute_layout()
''' + COPY_SCHEDULES + '''
    tasks = [
        Task(name="StoreTask", src_resources=[smem], dst_resources=[out], warp_idx=0, num_warps=4,
             schedule=store_schedule(smem, out)),
        Task(name="LoadTask", src_resources=[inp], dst_resources=[smem], warp_idx=4, num_warps=1,
             schedule=load_schedule(inp, smem)),
    ]
    return TaskManager(tasks=tasks, resource_dependency_graph={smem: [inp], out: [smem]},
                       smem_allocator=alloc, verbose=False)
'''


@pytest.mark.parametrize("old, new, code", [
    ("", "", None),
    ('SmemAllocation("buf", size_bytes=8192)', '"buf"', None),
    ('SmemAllocation("buf", size_bytes=8192)', 'SmemAllocation("buf", size_bytes=300000)', "TS707"),
])
def test_isinstance_resource_program_same_findings_as_the_runtime(tmp_path, old, new, code):
    """A resource taking either an allocation or its name (probeA prog_d_fork_copy
    __d15_isinstance_plus_square_no_release.py: reference ValueError 'Schedule is
    blocked!', ts-lint TS810; __d11 / __d12: reference 'Exhaustive checker found 1 aliasing
    race(s)', ts-lint TS802; before, the `isinstance` stopped the analysis). Here an
    allocation over the SMEM capacity: TS707, as the runtime and the reference (ValueError
    'SMEM usage ... exceeds hardware capacity')."""
    src = SHARED.replace(old, new) if old else SHARED
    path = tmp_path / "program.py"
    path.write_text(src)
    runtime = codes_and_lines(run_program(str(path), "build"), ALL)
    lint = codes_and_lines(lint_source(src, "program.py"), ALL)
    assert lint == runtime
    errs = errors(src)
    assert errs == ([] if code is None else [(code, line_of(src, "smem_allocator=alloc"))])
