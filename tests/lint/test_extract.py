"""ts_lint.extract: the static front end builds the same model, and finds the same
findings at the same lines, as the tracing DSL (tests/lint/lint_parity.py compares both)."""
import os
import sys
import textwrap
from pathlib import Path

import pytest

from ts_runtime.diagnostics import Severity
from ts_runtime.model.values import RUNTIME, UNKNOWN, DynamicBound
from ts_runtime.testing import codes_and_lines, expected_findings

from ts_lint.api import analyze_source, lint_file, lint_source
from ts_lint.rules_lint import COPY_SCHEDULES

from lint_parity import HEADER, assert_parity, lint_kernel, norm_kernel

ALL = tuple(Severity)


def lint_codes(src, **kw):
    return codes_and_lines(lint_source(src, "program.py", **kw), ALL)


# ---------------------------------------------------------------------------------- parity
COPY = HEADER + '''
def build(stages=2, consumer=128):
    cfg = PipelineConfig.create_tma_async_pipeline_cfg(
        num_stages=stages, num_bytes=4096,
        producer_group=CooperativeGroup(Agent.Thread),
        consumer_group=CooperativeGroup(Agent.Thread, consumer))
    inp, out = InGmem(name="in"), OutGmem(name="out")
    smem = Smem(name="smem", pipeline_config=cfg)
    alloc = SmemAllocator(); alloc.add_resource(smem); alloc.compute_layout()
''' + COPY_SCHEDULES + '''
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
    return TaskManager(tasks=tasks, resource_dependency_graph=graph, smem_allocator=alloc,
                       verbose=False)
'''


def test_copy_program_same_model_as_runtime(tmp_path):
    assert_parity(COPY, tmp_path)


def test_graph_edges_point_at_each_value_of_the_dict_literal(tmp_path):
    k = lint_kernel(COPY)
    names = {rid: r.label for rid, r in k.resources.items()}
    lines = COPY.splitlines()
    edges = {(names[e.downstream], names[e.upstream]): e.range for e in k.graph}
    r = edges[("smem", "in")]
    assert lines[r.line - 1][r.column:r.end_column] == "inp"
    r = edges[("out", "smem")]
    assert lines[r.line - 1][r.column:r.end_column] == "smem"


def test_ranges_follow_the_runtime_anchors():
    k = lint_kernel(COPY)
    lines = COPY.splitlines()
    store = k.tasks[0]
    assert lines[store.range.line - 1].strip().startswith("Task(name=\"StoreTask\"")
    r = store.arg_ranges["warp_idx"]
    assert lines[r.line - 1][r.column:r.end_column] == "0"
    e = store.lowered.entries[0]            # smem.try_wait(): the whole call expression
    assert lines[e.range.line - 1][e.range.column:e.range.end_column] == "smem.try_wait()"
    smem = next(r for r in k.resources.values() if r.name == "smem")
    assert lines[smem.range.line - 1][smem.range.column:smem.range.end_column] == \
        'Smem(name="smem", pipeline_config=cfg)'
    r = smem.pipeline.at("consumer_group")
    assert lines[r.line - 1][r.column:r.end_column] == "CooperativeGroup(Agent.Thread, consumer)"
    wm = smem.work_methods["tma_load"]     # work methods: the first decorator's line, column 0
    assert lines[wm.range.line - 1].strip() == "@producer_work" and wm.range.column == 0


FEATURES = HEADER + '''
import argparse as _ap
from ts_runtime import pipeline as tsp

STAGES = 2
TILE = (64, 32)
BYTES = TILE[0] * TILE[1] * 2


def pick(n):
    if n > 1:
        return n
    return 1


class Config:
    def __init__(self, stages):
        self.stages = pick(stages)
        self.setup()

    def setup(self):
        self.consumers = sum(w * 32 for w in (2, 2))
        self.cfg = PipelineConfig.create_tma_async_pipeline_cfg(
            num_stages=self.stages, num_bytes=BYTES,
            producer_group=tsp.CooperativeGroup(tsp.Agent.Thread),
            consumer_group=tsp.CooperativeGroup(tsp.Agent.Thread, self.consumers))


def make_resources(cfg):
    return InGmem(name="in"), Smem(name="smem", pipeline_config=cfg.cfg), OutGmem(name="out")


def build():
    cfg = Config(STAGES)
    inp, smem, out = make_resources(cfg)
    alloc = SmemAllocator()
    for r in [smem]:
        alloc.add_resource(r)
    alloc.compute_layout()
    n_iter = len(TILE) * 4

    @schedule
    def load_schedule(input_gmem, smem):
        with domain_loop(0, n_iter, 1):
            idx = input_gmem.compute_coords()
            smem.acquire()
            smem.tma_load(gmem_idx=idx)
            smem.commit()

    @schedule
    def store_schedule(smem, output_gmem):
        with domain_loop(0, n_iter, 1):
            smem.wait()
            for _ in range(1):
                v = smem.read_smem()
                output_gmem.store(smem_val=v)
            smem.release()

    tasks = []
    tasks.append(Task(name="Store", src_resources=[smem], dst_resources=[out], warp_idx=0,
                      num_warps=cfg.consumers // 32, schedule=store_schedule(smem, out)))
    tasks.append(Task(name="Load", src_resources=[inp], dst_resources=[smem], warp_idx=4,
                      num_warps=1, schedule=load_schedule(inp, smem)))
    return TaskManager(tasks=tasks, resource_dependency_graph={smem: [inp], out: [smem]},
                       smem_allocator=alloc, verbose=False)
'''


def test_interpreter_features_same_model_as_runtime(tmp_path):
    k = assert_parity(FEATURES, tmp_path)
    store = k.tasks[0]
    assert store.num_warps == 4 and store.lowered.domain_end == 8


def test_import_styles_are_resolved_by_qualified_name():
    plain = lint_kernel(COPY)
    aliased = COPY.replace("from ts_runtime import schedule, domain_loop, consumer_work, producer_work, WorkAttr",
                           "import ts_runtime as tsr; from ts_runtime import consumer_work as cw, producer_work, "
                           "WorkAttr; schedule, domain_loop = tsr.schedule, tsr.domain_loop") \
        .replace("@consumer_work", "@cw")
    assert norm_kernel(lint_kernel(aliased)) == norm_kernel(plain)
    ref = COPY.replace("ts_runtime", "cutlass.experimental.task_scheduling") \
        .replace("from cutlass.experimental.task_scheduling.pipeline import CooperativeGroup, Agent",
                 "from cutlass.pipeline import CooperativeGroup, Agent")
    assert "ts_runtime" not in ref
    a, b = norm_kernel(lint_kernel(ref)), norm_kernel(plain)
    a.pop("mro"), b.pop("mro")
    assert a == b


def test_a_user_function_named_schedule_is_not_ts():
    """The schedules are plain functions now: their blocks run outside any @schedule (TS101)."""
    src = COPY.replace("from ts_runtime import schedule, domain_loop,",
                       "from ts_runtime import domain_loop,") + textwrap.dedent('''

        def schedule(fn):
            return fn
        ''')
    from ts_runtime.testing import run_source
    got = lint_codes(src)
    assert got == {("TS101", 68)} == codes_and_lines(run_source(src), ALL)


def test_shadowing_a_ts_name_locally():
    src = COPY.replace("    tasks = [", "    TaskManager = dict\n    tasks = [", 1)
    assert analyze_source(src, "program.py").kernels == []


def test_conditional_import_fallback():
    src = COPY.replace("from ts_runtime.task_manager import TaskManager",
                       "try:\n    from cutlass.experimental.task_scheduling.task_manager import TaskManager\n"
                       "except ImportError:\n    from ts_runtime.task_manager import TaskManager")
    assert len(analyze_source(src, "program.py").kernels) == 1


# ---------------------------------------------------------------------------------- exact findings
INVALID = {
    "decorate: positional-only parameter, at the first decorator": HEADER + '''
@dataclass(kw_only=True)
class Bad(MemoryResource):
    @producer_work  # expect: TS230
    def fill(self, stage_info, x, /):
        pass
''',
    "reserved work-method name, reported at capture": HEADER + '''
@dataclass(kw_only=True)
class Bad(MemoryResource):
    @producer_work  # expect: TS222
    def acquire(self, stage_info):
        pass


def build():
    b = Bad(name="b")

    @schedule
    def s(b):
        with domain_loop(4):
            b.producer_work()

    return s(b)
''',
    "config keyword": HEADER + '''
from ts_runtime.enums import SignalingThreads


def build():
    return PipelineConfig.create_tma_async_pipeline_cfg(
        num_stages=4, num_bytes=64,
        producer_group=CooperativeGroup(Agent.Thread),
        consumer_group=CooperativeGroup(Agent.Thread, 32),
        interleave_stride=3,  # expect: TS405
    )
''',
    "task-local variable never initialised": HEADER + '''
@dataclass(kw_only=True)
class Half(MemoryResource):
    item: object = TaskLocalVariable.uninitialized()

    @consumer_work(returns=item)
    def get(self, stage_info):
        return 0


def build():
    h = Half(name="h")  # expect: TS320

    @schedule
    def s(h):
        with domain_loop(4):
            h.get()
    return s(h)
''',
    "schedule argument that is not a resource": HEADER + '''
def build():
    @schedule
    def s(x):
        with domain_loop(4):
            pass
    return s(3)  # expect: TS221
''',
    "unknown proxy method, at the attribute": HEADER + '''
def build():
    inp = InGmem(name="in")

    @schedule
    def s(inp):
        with domain_loop(4):
            inp.nope()  # expect: TS224
    return s(inp)
''',
    "unpacking a single token": HEADER + '''
def build():
    inp = InGmem(name="in")

    @schedule
    def s(inp):
        with domain_loop(4):
            a, b = inp.compute_coords()  # expect: TS311
    return s(inp)
''',
    "empty dependency graph": HEADER + '''
def build():
    return TaskManager(tasks=[], resource_dependency_graph={})  # expect: TS350
''',
    "TaskLocalVariable without dtype": HEADER + '''
@dataclass(kw_only=True)
class R(MemoryResource):
    v: object = TaskLocalVariable.uninitialized()

    def __post_init__(self):
        self.v = TaskLocalVariable(default=0)  # expect: TS318


def build():
    return R(name="r")
''',
}


@pytest.mark.parametrize("name", sorted(INVALID))
def test_exact_code_and_line(name, tmp_path):
    from ts_runtime.rules.registry import get
    src = INVALID[name]
    expected = set(expected_findings(src))
    missing = [c for c, _ in expected if get(c) is None]
    if missing:
        pytest.skip(f"{missing} not in the rule catalogue yet")
    got = lint_codes(src)
    assert expected <= got, (expected, got)
    errors = {c for c, _ in got if c < "TS900"}
    assert errors <= {c for c, _ in expected}, got
    from ts_runtime.testing import run_source
    try:
        runtime = codes_and_lines(run_source(src), ALL)
    except AttributeError as exc:       # TS224 escapes as a plain AttributeError at run time
        assert "TS224" in str(exc)
        return
    assert expected <= runtime, runtime


def test_lint_reports_what_the_runtime_would_not_reach_only_once_per_cause():
    """A capture error stops the runtime before Task(...): no task-phase cascade."""
    src = HEADER + '''
def build():
    inp, out = InGmem(name="in"), OutGmem(name="out")

    @schedule
    def copy(inp, out):
        with domain_loop(0, 8, 1) as d:
            v = inp.compute_coords()
            out.store(smem_val=v)
        with d.first_iter():  # expect: TS123
            out.store(smem_val=v)

    t = Task(name="t", src_resources=[inp], dst_resources=[out], warp_idx=0, num_warps=1,
             schedule=copy(inp, out))
    return TaskManager(tasks=[t], resource_dependency_graph={out: [inp]}, verbose=False)
'''
    assert {c for c, _ in lint_codes(src) if c < "TS900"} == {"TS123"}


# ---------------------------------------------------------------------------------- kernels
KERNEL = HEADER + '''
import cutlass
import cutlass.cute as cute

NUM_WARPS = 4


@cute.kernel
def copy_kernel(n: cutlass.Int32, stages: cutlass.Constexpr):
    bx, _, _ = cute.arch.block_idx()
    cfg = PipelineConfig.create_tma_async_pipeline_cfg(
        num_stages=stages, num_bytes=4096,
        producer_group=CooperativeGroup(Agent.Thread),
        consumer_group=CooperativeGroup(Agent.Thread, NUM_WARPS * 32))
    inp, out = InGmem(name="in"), OutGmem(name="out")
    smem = Smem(name="smem", pipeline_config=cfg)

    @schedule
    def load(inp, smem):
        with domain_loop(bx, n, 1):
            idx = inp.compute_coords()
            smem.acquire()
            smem.tma_load(gmem_idx=idx)
            smem.commit()

    @schedule
    def store(smem, out):
        with domain_loop(bx, n, 1):
            smem.wait()
            for i in cutlass.range_constexpr(2):
                v = smem.read_smem()
                out.store(smem_val=v)
            smem.release()

    tm = TaskManager(
        tasks=[Task(name="Store", src_resources=[smem], dst_resources=[out], warp_idx=0,
                    num_warps=NUM_WARPS, schedule=store(smem, out)),
               Task(name="Load", src_resources=[inp], dst_resources=[smem], warp_idx=NUM_WARPS,
                    num_warps=1, schedule=load(inp, smem))],
        resource_dependency_graph={smem: [inp], out: [smem]})
    tm.setup_resources_and_tasks()
    tm.run()


@cute.jit
def launch(n: cutlass.Int32, stages: cutlass.Constexpr = 3):
    copy_kernel(n, stages).launch(grid=(1, 1, 1), block=(160, 1, 1))
'''


def test_schedules_nested_in_a_cute_kernel_with_traced_values():
    a = analyze_source(KERNEL, "k.py")
    assert len(a.kernels) == 1 and a.kernel_roots == ["launch"]
    k = a.kernels[0]
    store = k.tasks[0]
    assert store.lowered.domain_start is RUNTIME and store.lowered.domain_end is RUNTIME
    assert [e.label for e in store.lowered.entries if e.label] == ["read_smem", "store"] * 2
    smem = next(r for r in k.resources.values() if r.name == "smem")
    assert smem.pipeline.num_stages == 3 and smem.pipeline.consumer_group_size == 128


def test_argparse_defaults_reach_the_kernel_builder():
    src = COPY.replace("def build(stages=2, consumer=128):", "def build(stages, consumer):") + '''

if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--stages", type=int, default=3)
    ap.add_argument("--consumer-threads", dest="consumer", type=int, default="64")
    args = ap.parse_args()
    build(args.stages, consumer=args.consumer)
'''
    k = analyze_source(src, "p.py").kernels[0]
    smem = next(r for r in k.resources.values() if r.name == "smem")
    assert (smem.pipeline.num_stages, smem.pipeline.consumer_group_size) == (3, 64)


def test_unknown_values_stay_unknown_and_are_explained():
    src = COPY.replace("def build(stages=2, consumer=128):", "def build(stages, consumer=128):")
    a = analyze_source(src, "p.py")
    smem = next(r for r in a.kernels[0].resources.values() if r.name == "smem")
    assert smem.pipeline.num_stages is UNKNOWN
    assert not [d for d in a.diagnostics if d.severity is Severity.INFO]
    assert any("num_stages" in d.message for d in a.unknowns)
    with_unknowns = lint_source(src, "p.py", explain_unknown=True)
    assert any(d.code.startswith("TS95") and "num_stages" in d.message for d in with_unknowns)


def test_unknown_condition_does_not_guess_a_branch():
    src = COPY.replace("    inp, out = InGmem", "    import os\n    if stages > len(os.environ):\n"
                       "        consumer = 32\n    inp, out = InGmem", 1)
    a = analyze_source(src, "p.py", explain_unknown=True)
    smem = next(r for r in a.kernels[0].resources.values() if r.name == "smem")
    assert smem.pipeline.consumer_group_size == 128       # `consumer` was read before the `if`
    k = a.kernels[0]
    assert k.tasks[0].num_warps == 4


def test_dynamic_domain_getter_on_a_task_subclass(tmp_path):
    src = HEADER + '''
class VarlenTask(Task):
    def __init__(self, offsets, **kwargs):
        super().__init__(**kwargs)
        self._offsets = offsets

    def get_domain(self, tile_coord):
        return self._offsets[tile_coord[0] + 1] - self._offsets[tile_coord[0]]


def build():
    inp, out = InGmem(name="in"), OutGmem(name="out")

    @schedule
    def copy(inp, out):
        with domain_loop(0, VarlenTask.get_domain, 1):
            v = inp.compute_coords()
            out.store(smem_val=v)

    t = VarlenTask([0, 4], name="t", src_resources=[inp], dst_resources=[out], warp_idx=0,
                   num_warps=1, schedule=copy(inp, out))
    return TaskManager(tasks=[t], resource_dependency_graph={out: [inp]}, verbose=False)
'''
    k = assert_parity(src, tmp_path)
    end = k.tasks[0].lowered.domain_end
    assert isinstance(end, DynamicBound) and end.name == "get_domain" and end.required_positional == 2


def test_persistent_work_queue_subclass_and_groups(tmp_path):
    src = HEADER + '''
from ts_runtime import work_tile_loop
from ts_runtime.enums import PipelineGroupMode
from ts_runtime.pipeline_group import PipelineGroup
from ts_runtime.resources import TileSchedulerConfig, WorkQueue


@dataclass(kw_only=True, init=False)
class Queue(WorkQueue):
    def __init__(self, *, logical, **kwargs):
        super().__init__(**kwargs)
        self.logical = logical

    def skip_work_tile_if(self, work_tile):
        return work_tile.tile_idx[0] >= self.logical


def build():
    inp, out = InGmem(name="in"), OutGmem(name="out")
    wq = Queue(logical=4, name="wq", tile_scheduler_config=(
        TileSchedulerConfig.create_static_persistent_tile_scheduler_params(None)))

    @schedule
    def copy(inp, out, wq):
        with work_tile_loop(wq, skip_if=Queue.skip_work_tile_if) as tiles:
            with tiles.skippable(), domain_loop(0, 8, 1):
                v = inp.compute_coords()
                out.store(smem_val=v)
            wq.try_wait()
            wq.wait()
            wq.get_and_advance_work_tile()
            wq.release()

    t = Task(name="t", src_resources=[inp, wq], dst_resources=[out], warp_idx=0, num_warps=1,
             schedule=copy(inp, out, wq))
    return TaskManager(tasks=[t], resource_dependency_graph={out: [inp, wq]}, verbose=False)
'''
    k = assert_parity(src, tmp_path)
    low = k.tasks[0].lowered
    assert low.skip_if.kind == "unbound_method" and low.work_queue is not None


# ---------------------------------------------------------------------------------- robustness
def test_syntax_error_is_ts000_at_its_location():
    (d,) = lint_source("x = 1\ndef f(:\n    pass\n", "bad.py")
    assert (d.code, d.range.path, d.range.line) == ("TS000", "bad.py", 2)


def test_a_file_the_compiler_rejects_is_ts000_at_its_location():
    # libcst and ast.parse accept a duplicated parameter name; Python's compiler does not
    # (the file cannot be imported): reported like a parse error, and not analysed (a
    # fuzzer on the tutorials found such files failing the analysis with an internal error)
    src = ("from ts_runtime import schedule\n\n\n"
           "def make(num_k_tiles, num_k_tiles):\n"
           "    @schedule\n"
           "    def s(a):\n"
           "        a.load()\n"
           "    return s\n\n\n"
           "def build():\n"
           "    return make(1, 2)\n")
    (d,) = lint_source(src, "dup.py")
    assert (d.code, d.range.line) == ("TS000", 4)
    assert d.message == "syntax error: duplicate argument 'num_k_tiles' in function definition"
    (d,) = lint_source("x = 1\nreturn x\n", "ret.py")
    assert (d.code, d.range.line, d.message) == ("TS000", 2, "syntax error: 'return' outside function")
    # (compiled in the pieces the parser cuts; a `from __future__` file in one piece)
    (d,) = lint_source("from __future__ import annotations\nx = 1\n\n\ndef f(a, a):\n    pass\n", "fut.py")
    assert (d.code, d.range.line) == ("TS000", 5)


def test_task_resources_read_before_assignment():
    # A tutorial's `srcs = [tmem_c]` deleted before `if const_expr(cfg): srcs += [wq]` and
    # `Task(src_resources=srcs)` (found by a fuzzer): the `+=` fails if its branch runs,
    # the Task's read if it does not, so the read after the `if` certainly fails (Python:
    # UnboundLocalError; the reference: SCOPE_UNBOUND_NAME_IN_TRACE). ts-lint used to see
    # a name that might be bound and then fail on the unknown list (TS999).
    path = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "01_copy_grid_stride.py")
    with open(path) as f:
        src = f.read()
    assert src.count("src_resources=[input_gmem],") == 1 and src.count("    copy_task = Task(\n") == 1
    src = src.replace("src_resources=[input_gmem],", "src_resources=srcs,").replace(
        "    copy_task = Task(\n", "    if cutlass.const_expr(num_warps > 100):\n        srcs += [input_gmem]\n\n"
                                  "    copy_task = Task(\n")
    diags = lint_source(src, "p.py")
    line = src.splitlines().index("        src_resources=srcs,") + 1
    assert [(d.code, d.range.line, d.severity) for d in diags] == [("TS962", line, Severity.ERROR)]
    assert "local variable 'srcs' is read before it is assigned" in diags[0].message
    # bound in the branch (not a failing read there): possibly bound afterwards, no finding
    ok = src.replace("        srcs += [input_gmem]\n", "        srcs = [input_gmem]\n")
    assert [d.code for d in lint_source(ok, "p.py")] == []


def test_a_task_list_ts_lint_cannot_resolve_is_not_an_internal_error():
    # `src_resources=` from the environment or from a module ts-lint cannot read: the Task
    # is left unchecked; the TaskManager's extraction used to fail on it (TS999)
    path = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "01_copy_grid_stride.py")
    with open(path) as f:
        base = f.read()
    for value, extra in (("__import__('os').environ.get('SRCS')", ""),
                         ("UNRESOLVED", "from somewhere_unknown import UNRESOLVED\n")):
        src = base.replace("src_resources=[input_gmem],", f"src_resources={value},").replace(
            "import argparse\n", "import argparse\n" + extra)
        assert f"src_resources={value}," in src
        assert [d.code for d in lint_source(src, "p.py") if d.severity is Severity.ERROR or d.code == "TS999"] == []


def test_internal_failure_is_ts999_for_the_file(monkeypatch):
    import ts_lint.extract.interpreter as interp

    def boom(self, *args, **kwargs):
        raise RuntimeError("kaboom")
    monkeypatch.setattr(interp.Interpreter, "run_module", boom)
    (d,) = lint_source("x = 1\n", "f.py")
    assert d.code == "TS999" and "kaboom" in d.message and d.range.path == "f.py"


def test_user_code_is_never_executed(tmp_path):
    marker = tmp_path / "executed.txt"
    src = HEADER + f'''
import os
import subprocess
open({str(marker)!r}, "w").write("module body ran")
os.system("touch {marker}")
subprocess.run(["touch", {str(marker)!r}])
__import__("os").system("touch {marker}")
exec("open({str(marker)!r}, 'w')")


def build():
    open({str(marker)!r}, "w").write("build ran")
    return TaskManager(tasks=[], resource_dependency_graph={{1: [2]}})


if __name__ == "__main__":
    build()
'''
    path = tmp_path / "prog.py"
    path.write_text(src)
    before = set(sys.modules)
    lint_file(path, explain_unknown=True)
    assert not marker.exists()
    assert not [m for m in set(sys.modules) - before if m == "prog" or m.startswith(("cutlass", "torch"))]


def test_never_imports_cutlass():
    import subprocess
    code = ("import sys; from ts_lint.api import lint_source; "
            "lint_source(open('examples/05_gemm_schedule.py').read(), 'x.py'); "
            "sys.exit(1 if any(m.split('.')[0] in ('cutlass', 'torch', 'cuda') for m in sys.modules) else 0)")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert subprocess.run([sys.executable, "-c", code], cwd=root).returncode == 0


def test_lint_file_reads_encoding_and_reports_unreadable(tmp_path):
    p = tmp_path / "latin.py"
    p.write_bytes(b"# -*- coding: latin-1 -*-\nx = '\xe9'\n")
    assert lint_file(p) == []
    (d,) = lint_file(tmp_path / "missing.py")
    assert d.code == "TS999"


def test_budget_stops_runaway_loops():
    src = "def build():\n    x = 0\n    while True:\n        x += 1\n"
    assert [d.code for d in lint_source(src, "p.py")] == []


def test_positions_match_libcst_position_provider():
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider
    from ts_lint.extract.positions import Positions
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    src = Path(root, "examples", "07_pipeline_groups.py").read_text() + "\nx = {'é': [1,\n  2]}\n"
    module = cst.parse_module(src)
    ours = Positions(module, src, "p.py")
    theirs = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    for node, r in theirs.items():
        mine = ours.range(node)
        assert (mine.line, mine.column, mine.end_line, mine.end_column) == \
            (r.start.line, r.start.column, r.end.line, r.end.column), node


def test_lazily_parsed_bodies_have_the_positions_of_a_full_parse():
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider
    from ts_lint.extract.source import SourceFile
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    src = Path(root, "examples", "05_gemm_schedule.py").read_text()
    full = cst.parse_module(src)
    theirs = MetadataWrapper(full, unsafe_skip_copy=True).resolve(PositionProvider)
    by_line = {}
    for node in theirs:
        if isinstance(node, cst.FunctionDef):
            by_line[theirs[node.name].start.line] = node
    sf = SourceFile(src, "x.py")
    checked = 0
    for line, span in sf._spans.items():
        skeleton = next(n for n in _walk(sf.module) if isinstance(n, cst.FunctionDef)
                        and sf.pos.line(n.name) == line)
        mine, ref = list(_walk(sf.full(skeleton))), list(_walk(by_line[line]))
        assert len(mine) == len(ref)
        for a, b in zip(mine, ref):
            r, p = sf.pos.range(a), theirs[b]
            assert (r.line, r.column, r.end_line, r.end_column) == \
                (p.start.line, p.start.column, p.end.line, p.end.column), (line, a)
            checked += 1
    assert checked > 500


def _walk(node):
    import libcst as cst
    if isinstance(node, (cst.BaseExpression, cst.BaseSmallStatement, cst.BaseCompoundStatement,
                         cst.SimpleStatementLine, cst.Arg, cst.Param, cst.Decorator)):
        yield node
    for c in node.children:
        yield from _walk(c)


MORE = HEADER + '''
class K:
    STAGES = 2
    NAMES = ("a", "b")

    @staticmethod
    def consumers(n):
        return n * 32


@dataclass(kw_only=True)
class BaseBuf(MemoryResource):
    val: object = TaskLocalVariable.uninitialized()

    def __post_init__(self):
        super().__post_init__()
        self.val = TaskLocalVariable(dtype=int, default=0)

    @consumer_work(returns=val)
    def read(self, stage_info):
        return 0


@dataclass(kw_only=True)
class Buf(BaseBuf):
    @producer_work
    def fill(self, stage_info, gmem_idx):
        pass


def make_buf(**kw):
    return Buf(**kw)


def build():
    cfg = PipelineConfig.create_async_async_pipeline_cfg(
        num_stages=K.STAGES, producer_group=CooperativeGroup(Agent.Thread, 32),
        consumer_group=CooperativeGroup(Agent.Thread, K.consumers(1)), cta_layout_vmnk=(1, 1, 1, 1))
    inp, out = InGmem(name="in"), OutGmem(name="out")
    bufs = [make_buf(name=f"buf_{n}", pipeline_config=cfg) for n in K.NAMES]

    @schedule
    def load(inp, b0, b1):
        with domain_loop(0, 4, 1):
            v = inp.compute_coords()
            for b in (b0, b1):
                b.acquire()
            b0.fill(gmem_idx=v)
            b1.fill(gmem_idx=v)
            for b in (b0, b1):
                b.commit()

    @schedule
    def store(b0, b1, out):
        with domain_loop(0, 4, 1):
            b0.wait()
            b1.wait()
            x = b0.read()
            out.store(smem_val=x)
            y = b1.read()
            out.store(smem_val=y)
            b0.release()
            b1.release()

    tasks = [Task(name="Load", src_resources=[inp], dst_resources=bufs, warp_idx=0, num_warps=1,
                  schedule=load(inp, *bufs)),
             Task(name="Store", src_resources=list(bufs), dst_resources=[out], warp_idx=1, num_warps=1,
                  schedule=store(bufs[0], bufs[1], out))]
    graph = {b: [inp] for b in bufs}
    graph[out] = [b for b in bufs]
    return TaskManager(tasks=tasks, resource_dependency_graph=graph, verbose=False)
'''


def test_comprehensions_inheritance_kwargs_and_class_constants(tmp_path):
    k = assert_parity(MORE, tmp_path)
    assert sorted(r.name for r in k.resources.values()) == ["buf_a", "buf_b", "in", "out"]


NESTED = '''\
from __future__ import annotations

import dataclasses
import ts_runtime as ts
import ts_runtime.task as T
from ts_runtime import resources as R
from ts_runtime.task_manager import TaskManager as TM


@dataclasses.dataclass(kw_only=True)
class Src(R.MemoryResource):
    item: R.TaskLocalVariable = R.TaskLocalVariable.uninitialized()

    def __post_init__(self):
        self.item = R.TaskLocalVariable(dtype=int, default=0)

    @ts.consumer_work(returns="item")
    def get(self, stage_info):
        return 0


@dataclasses.dataclass(kw_only=True)
class Dst(R.MemoryResource):
    @ts.producer_work
    def put(self, stage_info, item: int, *, k: "cutlass.Constexpr[int]" = 0):
        pass


def build():
    class Local(T.Task):
        def get_domain(self, work_tile_coord):
            return 4

    src, dst = Src(name="src"), Dst(name="dst")

    @ts.schedule
    def copy(src, dst):
        with ts.domain_loop(0, Local.get_domain, 1):
            v = src.get()
            dst.put(item=v, k=1)

    t = Local(name="t", src_resources=[src], dst_resources=[dst], warp_idx=0, num_warps=1,
              schedule=copy(src, dst))
    return TM(tasks=[t], resource_dependency_graph={dst: [src]}, verbose=False)
'''


def test_future_annotations_module_aliases_and_local_task_class(tmp_path):
    k = assert_parity(NESTED, tmp_path)
    low = k.tasks[0].lowered
    assert low.entries[1].constexpr_kwargs == {"k": 1}
    assert low.domain_end.owner.endswith("build.<locals>.Local")


# --- kernel-building code in a builder-class style: frozen dataclass config with properties,
# IntEnum roles as dict keys, functools.partial for the pipeline factory, warp offsets from
# itertools.accumulate, tasks from a comprehension over sorted roles
BUILDER = HEADER + '''
import enum
import functools
import itertools
import math


class Role(enum.IntEnum):
    STORE = 0
    LOAD = 1


@dataclass(frozen=True)
class CopyConfig:
    rows: int = 8
    store_warps: int = 4
    max_stages: int = 4

    @property
    def stages(self) -> int:
        return min(self.max_stages, max(2, math.ceil(self.rows / 4)))

    @property
    def warps(self) -> dict:
        return {Role.STORE: self.store_warps, Role.LOAD: 1}


class Builder:
    def __init__(self, cfg, **extra):
        self.cfg = cfg
        self.extra = extra

    def resources(self):
        make_cfg = functools.partial(PipelineConfig.create_tma_async_pipeline_cfg,
                                     producer_group=CooperativeGroup(Agent.Thread))
        smem = Smem(name="smem", pipeline_config=make_cfg(
            num_stages=self.cfg.stages, num_bytes=4096,
            consumer_group=CooperativeGroup(Agent.Thread, self.cfg.store_warps * 32)))
        return InGmem(name="in"), smem, OutGmem(name="out")

    def schedules(self, inp, smem, out):
        rows = self.cfg.rows

        @schedule
        def load_schedule(input_gmem, smem):
            with domain_loop(0, rows, 1):
                idx = input_gmem.compute_coords()
                smem.try_acquire()
                smem.acquire()
                smem.tma_load(gmem_idx=idx)
                smem.commit()

        @schedule
        def store_schedule(smem, output_gmem):
            with domain_loop(0, rows, 1):
                smem.try_wait()
                smem.wait()
                v = smem.read_smem()
                output_gmem.store(smem_val=v)
                smem.release()

        return {Role.STORE: ("StoreTask", [smem], [out], store_schedule(smem, out)),
                Role.LOAD: ("LoadTask", [inp], [smem], load_schedule(inp, smem))}

    def build(self):
        inp, smem, out = self.resources()
        alloc = SmemAllocator()
        alloc.add_resource(smem)
        alloc.compute_layout()
        specs = self.schedules(inp, smem, out)
        order = sorted(specs)
        starts = [0, *itertools.accumulate(self.cfg.warps[r] for r in order)][:-1]
        tasks = [Task(name=specs[r][0], src_resources=specs[r][1], dst_resources=specs[r][2],
                      warp_idx=w, num_warps=self.cfg.warps[r], schedule=specs[r][3])
                 for r, w in zip(order, starts)]
        return TaskManager(tasks=tasks, resource_dependency_graph={smem: [inp], out: [smem]},
                           smem_allocator=alloc, verbose=False)


def build():
    return Builder(CopyConfig()).build()
'''


def test_builder_class_style_same_model_as_runtime(tmp_path):
    k = assert_parity(BUILDER, tmp_path)
    assert [(t.name, t.warp_idx, t.num_warps) for t in k.tasks] == [("StoreTask", 0, 4), ("LoadTask", 4, 1)]


def test_builder_class_style_defect_same_finding(tmp_path):
    # the store task never releases: the same TS810 at the same line from both front ends
    src = BUILDER.replace("                smem.release()\n", "")
    path = tmp_path / "program.py"
    path.write_text(src)
    from ts_runtime.testing import run_program
    runtime = codes_and_lines(run_program(str(path), "build"), ALL)
    assert runtime and {c for c, _ in runtime} >= {"TS810"}
    assert lint_codes(src) == runtime


@pytest.mark.parametrize("expr, value", [
    ("list(itertools.accumulate([4, 1, 3]))", [4, 5, 8]),
    ("[0, *itertools.accumulate([2, 2], operator.mul)]", [0, 2, 4]),
    ("list(itertools.accumulate([1, 2], initial=10))", [10, 11, 13]),
    ("list(itertools.chain([1], (2, 3)))", [1, 2, 3]),
    ("list(itertools.chain.from_iterable([[1], [2, 3]]))", [1, 2, 3]),
    ("list(itertools.product(range(2), 'ab'))", [(0, "a"), (0, "b"), (1, "a"), (1, "b")]),
    ("list(itertools.product([0, 1], repeat=2))", [(0, 0), (0, 1), (1, 0), (1, 1)]),
    ("list(itertools.repeat(7, 3))", [7, 7, 7]),
    ("list(itertools.islice(range(10), 2, 8, 2))", [2, 4, 6]),
    ("list(itertools.zip_longest([1, 2], [3], fillvalue=0))", [(1, 3), (2, 0)]),
    ("list(itertools.starmap(operator.add, [(1, 2), (3, 4)]))", [3, 7]),
    ("list(itertools.pairwise([1, 2, 4]))", [(1, 2), (2, 4)]),
    ("list(itertools.combinations([1, 2, 3], 2))", [(1, 2), (1, 3), (2, 3)]),
    ("functools.reduce(operator.add, [1, 2, 3])", 6),
    ("operator.floordiv(7, 2)", 3),
])
def test_itertools_and_operator_values(expr, value):
    """The interpreter's value of finite itertools / operator calls on known data."""
    from ts_lint.extract.context import Context
    from ts_lint.extract.interpreter import Interpreter
    from ts_lint.extract.source import parse
    src = parse(f"import functools, itertools, operator\nx = {expr}\n", "m.py")
    it = Interpreter(Context("m.py", src.pos, False, src), src.module)
    it.run_module()
    assert it.module_scope.vars["x"] == value


@pytest.mark.parametrize("expr", ["itertools.repeat(1)", "itertools.count()",
                                  "itertools.product(range(100), range(100), range(2))"])
def test_infinite_or_huge_itertools_stay_unknown(expr):
    from ts_lint.extract.context import Context
    from ts_lint.extract.interpreter import Interpreter
    from ts_lint.extract.source import parse
    src = parse(f"import itertools\nx = {expr}\n", "m.py")
    it = Interpreter(Context("m.py", src.pos, False, src), src.module)
    it.run_module()
    assert it.module_scope.vars["x"] is UNKNOWN


# --- NamedTuple task specs, dataclasses.replace, a match statement on a str enum
SPECS = HEADER + '''
import dataclasses
import enum
from typing import NamedTuple


class Mode(str, enum.Enum):
    SINGLE = "single"
    DOUBLE = "double"


class TaskSpec(NamedTuple):
    name: str
    warps: int
    registers: int = 40


@dataclass(frozen=True)
class Params:
    rows: int = 4
    stages: int = 2
    mode: Mode = Mode.DOUBLE


def pipeline_for(params, consumers):
    match params.mode:
        case Mode.SINGLE:
            stages = 1
        case Mode.DOUBLE if params.stages > 1:
            stages = params.stages
        case _:
            raise ValueError(params.mode)
    return PipelineConfig.create_tma_async_pipeline_cfg(
        num_stages=stages, num_bytes=4096, producer_group=CooperativeGroup(Agent.Thread),
        consumer_group=CooperativeGroup(Agent.Thread, consumers))


def build(params=Params()):
    params = dataclasses.replace(params, rows=params.rows * 2)
    specs = [TaskSpec("StoreTask", 4, 160), TaskSpec(name="LoadTask", warps=1), TaskSpec("PadTask", 3)]
    smem = Smem(name="smem", pipeline_config=pipeline_for(params, specs[0].warps * 32))
    inp, out = InGmem(name="in"), OutGmem(name="out")
    alloc = SmemAllocator()
    alloc.add_resource(smem)
    alloc.compute_layout()
    rows = params.rows

    @schedule
    def store_schedule(smem, output_gmem):
        with domain_loop(0, rows, 1):
            smem.try_wait()
            smem.wait()
            v = smem.read_smem()
            output_gmem.store(smem_val=v)
            smem.release()

    @schedule
    def load_schedule(input_gmem, smem):
        with domain_loop(0, rows, 1):
            idx = input_gmem.compute_coords()
            smem.try_acquire()
            smem.acquire()
            smem.tma_load(gmem_idx=idx)
            smem.commit()

    @schedule
    def pad_schedule():
        with domain_loop(0, 1, 1):
            pass

    wiring = [([smem], [out], store_schedule(smem, out)), ([inp], [smem], load_schedule(inp, smem)),
              ([], [], pad_schedule())]
    tasks, warp = [], 0
    for spec, (src, dst, sched) in zip(specs, wiring, strict=True):
        tasks.append(Task(name=spec.name, src_resources=src, dst_resources=dst, warp_idx=warp,
                          num_warps=spec.warps, schedule=sched, num_registers=spec.registers))
        warp += spec.warps
    return TaskManager(tasks=tasks, resource_dependency_graph={smem: [inp], out: [smem]},
                       smem_allocator=alloc, verbose=False)
'''


def test_namedtuple_specs_replace_and_match_same_model_as_runtime(tmp_path):
    k = assert_parity(SPECS, tmp_path)
    assert [(t.name, t.warp_idx, t.num_warps) for t in k.tasks] == [
        ("StoreTask", 0, 4), ("LoadTask", 4, 1), ("PadTask", 5, 3)]
    assert k.tasks[0].lowered.domain_end == 8


@pytest.mark.parametrize("old, new, code", [
    ("", "", None),                                                      # the valid program
    ('TaskSpec("PadTask", 3)]', 'TaskSpec("PadTask", 3, 48)]', "TS710"),  # registers differ in warp group 1
    ("specs[0].warps * 32", "specs[1].warps * 32", "TS430"),            # consumer group of the load task
])
def test_namedtuple_specs_defects_same_findings(tmp_path, old, new, code):
    src = SPECS.replace(old, new) if old else SPECS
    path = tmp_path / "program.py"
    path.write_text(src)
    from ts_runtime.testing import run_program
    runtime = codes_and_lines(run_program(str(path), "build"), ALL)
    assert lint_codes(src) == runtime
    assert {c for c, _ in runtime} == ({code} if code else set())


def _module_values(text):
    from ts_lint.extract.context import Context
    from ts_lint.extract.interpreter import Interpreter
    from ts_lint.extract.source import parse
    src = parse(textwrap.dedent(text), "m.py")
    it = Interpreter(Context("m.py", src.pos, False, src), src.module)
    it.run_module()
    return it.module_scope.vars


def test_match_statement_values():
    v = _module_values('''
        import enum
        class Mode(enum.Enum):
            A = 1
            B = 2
        def pick(m, n):
            match m:
                case Mode.A:
                    return "a"
                case Mode.B if n > 1:
                    return "b-many"
                case Mode.B:
                    return "b"
        match (1, 2, 3):
            case (0, *_):
                seq = "zero"
            case (1, *rest):
                seq = rest
        match None:
            case None:
                single = "none"
        match 5:
            case 1 | 2:
                alt = "small"
            case 4 | 5 as x:
                alt = x
        match object():
            case int():
                cls = 1
        a, b, c = pick(Mode.A, 0), pick(Mode.B, 2), pick(Mode.B, 1)
    ''')
    assert (v["a"], v["b"], v["c"]) == ("a", "b-many", "b")
    assert v["seq"] == [2, 3] and v["single"] == "none" and v["alt"] == 5
    assert v["cls"] is UNKNOWN            # a class pattern is not decided: what it binds is unknown


def test_dataclasses_replace_and_namedtuple_values():
    v = _module_values('''
        import dataclasses
        from typing import NamedTuple
        @dataclasses.dataclass
        class P:
            a: int = 1
            b: int = 2
            def __post_init__(self):
                self.c = self.a + self.b
        class S(NamedTuple):
            name: str
            n: int = 3
        p = dataclasses.replace(P(), b=10)
        s, t = S("x"), S(n=5, name="y")
        vals = (p.a, p.b, p.c, s.name, s.n, t.name, t.n)
        bad = dataclasses.replace(P(), d=1)
        class Q(P):                  # not decorated: still a dataclass (inherited fields)
            pass
        q = dataclasses.replace(Q(), a=5)
        sub = (type(q).__name__, q.a, q.c)
    ''')
    assert v["vals"] == (1, 10, 11, "x", 3, "y", 5)
    assert v["bad"] is UNKNOWN
    assert v["sub"] == ("Q", 5, 7)


def test_namedtuples_index_unpack_and_iterate_like_tuples():
    v = _module_values('''
        import collections
        from typing import NamedTuple
        class Shape(NamedTuple):
            tile: int
            warps: int
            overlaunch: int = 2
        SHAPE = Shape(128, 4)
        t, w, o = SHAPE
        Pair = collections.namedtuple("Pair", "a, b")
        Q = collections.namedtuple("Q", ["x", "y", "z"], defaults=[5, 6])
        class Holder:
            def __init__(self, shape):
                self.tile, self.warps, _ = shape
        vals = (t, w, o, SHAPE[1], SHAPE[-1], SHAPE[:2], len(SHAPE), tuple(SHAPE), [x * 2 for x in SHAPE],
                Holder(SHAPE).warps)
        more = (SHAPE._replace(warps=8).warps, SHAPE._asdict(), Shape._fields, Shape._make([1, 2, 3]).overlaunch)
        pair = Pair(1, b=2)
        q = Q(1)
        fact = (pair[0], *pair, q.y, tuple(q), Q._fields)
        bad = (Pair(1), SHAPE[3], SHAPE._replace(depth=1), collections.namedtuple("R", "a _b"))
        class Wide(Shape):
            def lanes(self):
                return self.warps * 32
        wide = Wide(64, 2)
        sub = (wide[1], len(wide), wide.lanes(), wide._replace(tile=1)[0])
    ''')
    assert v["vals"] == (128, 4, 2, 4, 2, (128, 4), 3, (128, 4, 2), [256, 8, 4], 4)
    assert v["more"] == (8, {"tile": 128, "warps": 4, "overlaunch": 2}, ("tile", "warps", "overlaunch"), 3)
    assert v["fact"] == (1, 1, 2, 5, (1, 5, 6), ("x", "y", "z"))
    assert v["bad"] == (UNKNOWN,) * 4     # each raises in Python
    assert v["sub"] == (2, 3, 64, 1)


NAMEDTUPLE_SPECS = SPECS.replace("from typing import NamedTuple\n", "import collections\n").replace(
    """class TaskSpec(NamedTuple):
    name: str
    warps: int
    registers: int = 40
""", """TaskSpec = collections.namedtuple("TaskSpec", "name warps registers", defaults=[40])
""").replace(
    """    for spec, (src, dst, sched) in zip(specs, wiring, strict=True):
        tasks.append(Task(name=spec.name, src_resources=src, dst_resources=dst, warp_idx=warp,
                          num_warps=spec.warps, schedule=sched, num_registers=spec.registers))
        warp += spec.warps""", """    for spec, (src, dst, sched) in zip(specs, wiring, strict=True):
        name, warps, registers = spec
        tasks.append(Task(name=name, src_resources=src, dst_resources=dst, warp_idx=warp,
                          num_warps=spec[1], schedule=sched, num_registers=registers))
        warp += warps""")


def test_unpacked_namedtuple_specs_same_model_as_runtime(tmp_path):
    assert NAMEDTUPLE_SPECS != SPECS and "spec[1]" in NAMEDTUPLE_SPECS
    k = assert_parity(NAMEDTUPLE_SPECS, tmp_path)
    assert [(t.name, t.warp_idx, t.num_warps, t.num_registers) for t in k.tasks] == [
        ("StoreTask", 0, 4, 160), ("LoadTask", 4, 1, 40), ("PadTask", 5, 3, 40)]


def test_unpacked_namedtuple_specs_defect_same_finding(tmp_path):
    src = NAMEDTUPLE_SPECS.replace('TaskSpec("PadTask", 3)]', 'TaskSpec("PadTask", 3, 48)]')
    path = tmp_path / "program.py"
    path.write_text(src)
    from ts_runtime.testing import run_program
    runtime = codes_and_lines(run_program(str(path), "build"), ALL)
    assert lint_codes(src) == runtime and {c for c, _ in runtime} == {"TS710"}


def test_generator_functions_yield_their_items():
    v = _module_values('''
        import os
        def gen(n):
            for i in range(n):
                yield i * 2
            yield from (100, 200)
        def early(n):
            yield 1
            if n:
                return
            yield 2
        def unknown_branch():
            if os.environ.get("X"):
                yield 1
            yield 2
        def forever():
            i = 0
            while True:
                yield i
                i += 1
        a = list(gen(2))
        b = [x for x in gen(1)]
        c = (list(early(True)), list(early(False)))
        d = unknown_branch()
        e = forever()
        first, *rest = gen(3)
    ''')
    assert v["a"] == [0, 2, 100, 200] and v["b"] == [0, 100, 200]
    assert v["c"] == ([1], [1, 2])
    assert v["d"] is UNKNOWN and v["e"] is UNKNOWN     # never a guessed item list
    assert (v["first"], v["rest"]) == (0, [2, 4, 100, 200])


GENERATED_TASKS = HEADER + '''
STORE_WARPS = 4


def gen_tasks(inp, smem, out):
    @schedule
    def store_schedule(smem, output_gmem):
        with domain_loop(0, 8, 1):
            smem.try_wait()
            smem.wait()
            v = smem.read_smem()
            output_gmem.store(smem_val=v)
            smem.release()

    @schedule
    def load_schedule(input_gmem, smem):
        with domain_loop(0, 8, 1):
            idx = input_gmem.compute_coords()
            smem.try_acquire()
            smem.acquire()
            smem.tma_load(gmem_idx=idx)
            smem.commit()

    yield Task(name="StoreTask", src_resources=[smem], dst_resources=[out], warp_idx=0,
               num_warps=STORE_WARPS, schedule=store_schedule(smem, out))
    yield Task(name="LoadTask", src_resources=[inp], dst_resources=[smem], warp_idx=STORE_WARPS,
               num_warps=1, schedule=load_schedule(inp, smem))


def build():
    inp, out = InGmem(name="in"), OutGmem(name="out")
    smem = Smem(name="smem", pipeline_config=PipelineConfig.create_tma_async_pipeline_cfg(
        num_stages=2, num_bytes=4096, producer_group=CooperativeGroup(Agent.Thread),
        consumer_group=CooperativeGroup(Agent.Thread, STORE_WARPS * 32)))
    alloc = SmemAllocator()
    alloc.add_resource(smem)
    alloc.compute_layout()
    first, *rest = gen_tasks(inp, smem, out)
    return TaskManager(tasks=[first, *rest], resource_dependency_graph={smem: [inp], out: [smem]},
                       smem_allocator=alloc, verbose=False)
'''


def test_tasks_from_a_generator_same_model_and_findings_as_runtime(tmp_path):
    k = assert_parity(GENERATED_TASKS, tmp_path)
    assert [t.name for t in k.tasks] == ["StoreTask", "LoadTask"]
    bad = GENERATED_TASKS.replace("STORE_WARPS * 32)))", "STORE_WARPS * 16)))")
    path = tmp_path / "bad.py"
    path.write_text(bad)
    from ts_runtime.testing import run_program
    runtime = codes_and_lines(run_program(str(path), "build"), ALL)
    assert {c for c, _ in runtime} == {"TS430"} and lint_codes(bad) == runtime


def test_key_functions_copies_and_cached_properties():
    v = _module_values('''
        import copy, functools, typing
        class Spec:
            def __init__(self, name, warp):
                self.name, self.warp = name, warp
            @functools.cached_property
            def end(self):
                return self.warp + 4
        specs = [Spec("b", 4), Spec("a", 0), Spec("c", 4)]
        by_warp = [s.name for s in sorted(specs, key=lambda s: s.warp)]
        by_warp_desc = [s.name for s in sorted(specs, key=lambda s: s.warp, reverse=True)]
        first = min(specs, key=lambda s: s.warp).name
        last = max(specs, key=lambda s: s.warp).name          # the first of equal keys
        specs.sort(key=lambda s: s.name)
        in_place = [s.name for s in specs]
        end = specs[0].end
        cfg = {"warps": {"load": 1}}
        deep = copy.deepcopy(cfg)
        deep["warps"]["load"] = 2
        kept = cfg["warps"]["load"]
        cast = typing.cast(int, 3)
        unknown_key = sorted(specs, key=lambda s: s)       # objects are not plain keys
    ''')
    assert v["by_warp"] == ["a", "b", "c"] and v["by_warp_desc"] == ["b", "c", "a"]
    assert (v["first"], v["last"]) == ("a", "b")
    assert v["in_place"] == ["a", "b", "c"] and v["end"] == 4
    assert v["kept"] == 1 and v["cast"] == 3
    assert v["unknown_key"] is UNKNOWN


def test_vars_of_an_argparse_namespace():
    v = _module_values('''
        import argparse
        def parse_args(argv=None):
            p = argparse.ArgumentParser()
            p.add_argument("--stages", type=int, default=3)
            p.add_argument("--verbose", action="store_true")
            return p.parse_args(argv)
        def build(stages=2, verbose=True):
            return (stages, verbose)
        args = parse_args()
        built = build(**vars(args))
        shifted = {k: v + 1 for k, v in vars(args).items() if k == "stages"}
        vars(args).update(stages=5)
        updated = args.stages
    ''')
    assert v["built"] == (3, False) and v["shifted"] == {"stages": 4} and v["updated"] == 5


def test_graph_built_in_a_defaultdict_same_model_as_runtime(tmp_path):
    src = COPY.replace('''    graph = {
        smem: [inp],
        out: [smem],
    }''', '''    from collections import defaultdict
    graph = defaultdict(list)
    for consumer, producer in ((smem, inp), (out, smem)):
        graph[consumer].append(producer)''')
    assert "defaultdict" in src
    assert_parity(src, tmp_path)
    missing = src.replace("((smem, inp), (out, smem))", "((smem, inp),)")
    assert {c for c, _ in lint_codes(missing)} == {"TS355"}


def test_defaultdict_ordereddict_fromkeys_values():
    v = _module_values('''
        import collections
        from collections import defaultdict, OrderedDict
        counts = defaultdict(int)
        for w in ("a", "b", "a"):
            counts[w] += 1
        nested = defaultdict(lambda: [0])
        nested["x"].append(1)
        plain = dict(counts)
        od = OrderedDict([("k", 1)])
        keys = dict.fromkeys(["a", "b"], 0)
        no_factory = defaultdict(None)
        missing = no_factory["x"]
    ''')
    assert v["plain"] == {"a": 2, "b": 1} and v["nested"]["x"] == [0, 1]
    assert v["od"] == {"k": 1} and v["keys"] == {"a": 0, "b": 0}
    assert v["missing"] is UNKNOWN


def test_schedules_in_a_registry_keyed_by_name_same_model_as_runtime(tmp_path):
    src = COPY.replace('''    @schedule
    def load_schedule(input_gmem, smem):''', '''    registry = {}

    def register(fn):
        registry[fn.__name__] = fn
        return fn

    @register
    @schedule
    def load_schedule(input_gmem, smem):''').replace("schedule=load_schedule(inp, smem)",
                                                    'schedule=registry["load_schedule"](inp, smem)')
    assert 'registry["load_schedule"]' in src
    assert_parity(src, tmp_path)
