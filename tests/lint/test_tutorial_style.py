"""ts-lint on programs written the way the reference's tutorials are: a `@cute.kernel` builds
the TS skeleton, a `@cute.jit` host launches it, and a `run()` / `__main__` driver compiles
the host with `cute.compile[...]` and plain Python values.

What these pin (each found by comparing ts-lint with the reference on tutorial variants):

* `cute.compile[cute.FrontendNext, ...](host, ...)` compiles (calls) `host` like
  `cute.compile(host, ...)`, so the kernel is analysed with the driver's values;
* at a JIT boundary (the compiled host, a `@cute.kernel` launch) plain ints, bools and
  tuples of them become dynamic values unless the parameter is `cutlass.Constexpr`: a
  domain bound that arrives that way is not a compile-time trip count (the reference then
  validates with a representative count);
* an `if` on a dynamic value in JIT code is traced on both sides, so a kernel launched in
  its `else` branch is still analysed with the host's values;
* a PipelineGroup whose members' configs are built under an unresolved `const_expr`
  branch is not reported as lacking a `pipeline_config` (TS706);
* a dynamic-domain getter is probed (TS814) only when the loop start and step are
  compile-time ints; a getter the class does not have is TS111 (the reference's
  AttributeError).
"""
import pytest

from ts_runtime.diagnostics import Severity

from ts_lint.api import analyze_source, lint_source

PRELUDE = '''
from dataclasses import dataclass
from typing import Tuple

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline

from cutlass.experimental.task_scheduling.memory import SmemAllocation, SmemAllocator
from cutlass.experimental.task_scheduling.resources import (
    MemoryResource, PipelineConfig, StageInfo, TaskLocalVariable, consumer_work, producer_work,
)
from cutlass.experimental.task_scheduling.schedule_builder import domain_loop, schedule
from cutlass.experimental.task_scheduling.task import Task
from cutlass.experimental.task_scheduling.task_manager import TaskManager


@dataclass
class RowSource(MemoryResource):
    row: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()

    def __post_init__(self) -> None:
        self.row = TaskLocalVariable(dtype=cutlass.Int32, default=cutlass.Int32(0))

    @consumer_work(returns=row)
    @cute.jit
    def next_row(self, stage_info: StageInfo) -> cutlass.Int32:
        return stage_info.loop_offset


@dataclass
class RowBuffer(MemoryResource):
    def __post_init__(self) -> None:
        self._buf = SmemAllocation("rows", 4096, alignment=128)

    def get_smem_requirements(self):
        return [self._buf]

    @producer_work
    @cute.jit
    def fill(self, stage_info: StageInfo, *, row: cutlass.Int32) -> None:
        pass

    @consumer_work
    @cute.jit
    def drain(self, stage_info: StageInfo) -> None:
        pass


def make_manager(rows, stages, commit_every_row=True, release=True):
    cfg = PipelineConfig.create_tma_async_pipeline_cfg(
        num_stages=stages,
        num_bytes=4096,
        producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 128),
    )
    source = RowSource(name="source")
    buffer = RowBuffer(name="buffer", pipeline_config=cfg)
    allocator = SmemAllocator()
    allocator.add_resource(buffer)
    allocator.compute_layout()

    @schedule
    def fill_rows(src: MemoryResource, buf: MemoryResource) -> None:
        with domain_loop(0, rows, 1) as d:
            r = src.next_row()
            buf.try_acquire()
            buf.acquire()
            buf.fill(row=r)
            if commit_every_row:
                buf.commit()
            else:
                with d.first_iter():
                    buf.commit()

    @schedule
    def drain_rows(buf: MemoryResource) -> None:
        with domain_loop(0, rows, 1):
            buf.try_wait()
            buf.wait()
            buf.drain()
            if release:
                buf.release()

    tasks = [
        Task(name="Drain", src_resources=[buffer], dst_resources=[], warp_idx=0, num_warps=4,
             schedule=drain_rows(buffer)),
        Task(name="Fill", src_resources=[source], dst_resources=[buffer], warp_idx=4,
             num_warps=1, schedule=fill_rows(source, buffer)),
    ]
    return TaskManager(tasks=tasks, resource_dependency_graph={buffer: [source]},
                       smem_allocator=allocator)
'''


def _errors(src):
    return sorted({d.code for d in lint_source(src, "tutorial.py")
                   if d.severity in (Severity.ERROR, Severity.WARNING)})


def _program(rows_annotation, body_flags, driver):
    return PRELUDE + f'''

@cute.kernel
def row_kernel(rows: {rows_annotation}):
    tm = make_manager(rows, 2, {body_flags})
    tm.setup_resources_and_tasks()
    tm.run()


@cute.jit
def host(rows: {rows_annotation}):
    row_kernel(rows).launch(grid=(1, 1, 1), block=(160, 1, 1))

''' + driver


SUBSCRIPTED_COMPILE = '''
def run(rows: int = 64):
    cute.compile[cute.FrontendNext, cute.GenerateLineInfo(True)](host, rows)


if __name__ == "__main__":
    run()
'''


def test_subscripted_compile_reaches_the_kernel_with_constexpr_values():
    # `rows` stays a Python int (Constexpr): 64 rows but one commit -> the pipeline stalls
    src = _program("cutlass.Constexpr", "commit_every_row=False", SUBSCRIPTED_COMPILE)
    assert any(c.startswith("TS81") for c in _errors(src)), _errors(src)


def test_int_parameter_is_dynamic_across_the_jit_boundary():
    # `rows: int` is an Int32 in the kernel: the reference validates with a representative
    # trip count, for which committing on the first row only is balanced
    src = _program("int", "commit_every_row=False", SUBSCRIPTED_COMPILE)
    assert _errors(src) == []


def test_tuple_parameter_is_dynamic_across_the_jit_boundary():
    src = PRELUDE + '''

@cute.kernel
def row_kernel(shape: Tuple[int, int]):
    rows, _cols = shape
    tm = make_manager(rows, 2, commit_every_row=False)
    tm.setup_resources_and_tasks()
    tm.run()


@cute.jit
def host(shape: Tuple[int, int]):
    row_kernel(shape).launch(grid=(1, 1, 1), block=(160, 1, 1))


if __name__ == "__main__":
    cute.compile(host, (32, 128))
'''
    assert _errors(src) == []


def test_typed_parameter_of_unknown_value_is_dynamic_across_the_jit_boundary():
    # the host is compiled with a row count ts-lint cannot know (read from the environment):
    # `Tuple[int, int]` says it arrives as two dynamic ints, so the domain bound is a traced
    # value (checked with a representative trip count), not an unresolved one (TS950)
    src = PRELUDE + '''
import os


@cute.kernel
def row_kernel(shape: Tuple[int, int]):
    rows, _cols = shape
    tm = make_manager(rows, 2)
    tm.setup_resources_and_tasks()
    tm.run()


@cute.jit
def host(shape: Tuple[int, int]):
    row_kernel(shape).launch(grid=(1, 1, 1), block=(160, 1, 1))


if __name__ == "__main__":
    cute.compile(host, (len(os.environ), 128))
'''
    # an annotation that is not all plain numbers says nothing: the bound stays unresolved
    opaque = src.replace("shape: Tuple[int, int]", "shape: Tuple[int, cute.Tensor]")
    for program, unresolved in ((src, []), (opaque, ["TS950", "TS950"])):
        analysis = analyze_source(program, "tutorial.py")
        assert [d.code for d in analysis.unknowns] == unresolved
        assert analysis.diagnostics == []
        # the kernel's other checks run either way: 96 consumer threads for a 4-warp task
        wrong = program.replace("pipeline.Agent.Thread, 128)", "pipeline.Agent.Thread, 96)")
        assert _errors(wrong) == ["TS430"]


def test_kernel_launched_under_a_dynamic_if_is_analysed():
    # `use_reference` is a traced Boolean in `host`: both branches are compiled, so the
    # TS kernel in the else-branch is checked with the stage count the host passes
    src = PRELUDE + '''

@cute.kernel
def plain_kernel():
    pass


@cute.kernel
def row_kernel(rows: cutlass.Constexpr, stages: cutlass.Constexpr):
    tm = make_manager(rows, stages, release=False)
    tm.setup_resources_and_tasks()
    tm.run()


@cute.jit
def host(rows: cutlass.Constexpr, use_reference: bool):
    if use_reference:
        plain_kernel().launch(grid=(1, 1, 1), block=(32, 1, 1))
    else:
        row_kernel(rows, 2).launch(grid=(1, 1, 1), block=(160, 1, 1))


if __name__ == "__main__":
    cute.compile(host, 16, False)
'''
    errors = _errors(src)
    assert any(c.startswith("TS81") for c in errors), errors


def test_group_members_built_under_unknown_const_expr_branch_are_not_ts706():
    src = PRELUDE + '''
from cutlass.experimental.task_scheduling.enums import PipelineGroupMode
from cutlass.experimental.task_scheduling.resources import PipelineGroup


@cute.kernel
def fork_kernel(use_tma: cutlass.Constexpr[bool]):
    if cutlass.const_expr(use_tma):
        cfg_a = PipelineConfig.create_tma_async_pipeline_cfg(
            num_stages=2, num_bytes=4096,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 1))
    else:
        cfg_a = PipelineConfig.create_async_async_pipeline_cfg(
            num_stages=2,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32),
            consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32))
    view_a = RowBuffer(name="view_a", pipeline_config=cfg_a)
    cfg_b = PipelineConfig.create_async_async_pipeline_cfg(
        num_stages=2,
        producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32))
    view_b = RowBuffer(name="view_b", pipeline_config=cfg_b)
    both = PipelineGroup(name="both", members=[view_a, view_b], mode=PipelineGroupMode.Fork)
    allocator = SmemAllocator()
    allocator.add_resource(view_a)
    allocator.add_pipeline_group(both)
    allocator.compute_layout()
'''
    assert "TS706" not in _errors(src)


def test_dynamic_domain_with_dynamic_start_is_not_probed():
    src = '''
from dataclasses import dataclass

import cutlass
import cutlass.cute as cute
import cutlass.utils as utils

from cutlass.experimental.task_scheduling.resources import (
    MemoryResource, StageInfo, TileSchedulerConfig, WorkQueue, producer_work,
)
from cutlass.experimental.task_scheduling.schedule_builder import (
    domain_loop, schedule, work_tile_loop,
)
from cutlass.experimental.task_scheduling.task import Task
from cutlass.experimental.task_scheduling.task_manager import TaskManager


class SegmentTask(Task):
    def __init__(self, lengths, **kwargs):
        super().__init__(**kwargs)
        self._lengths = lengths

    @cute.jit
    def segment_length(self, tile_coord):
        return self._lengths[tile_coord[0]]


@dataclass
class Sink(MemoryResource):
    @producer_work
    @cute.jit
    def put(self, stage_info: StageInfo) -> None:
        pass


@cute.kernel
def segment_kernel(lengths: cute.Tensor, params: object):
    lane, _, _ = cute.arch.thread_idx()
    sink = Sink(name="sink")
    queue = WorkQueue(
        tile_scheduler_config=TileSchedulerConfig.create_static_persistent_tile_scheduler_params(
            tile_scheduler_params=params),
        name="queue",
    )

    @schedule
    def body(out: MemoryResource, wq: WorkQueue) -> None:
        with work_tile_loop(wq):
            with domain_loop(lane, SegmentTask.segment_length, 128):
                out.put()
            wq.try_wait()
            wq.wait()
            wq.get_and_advance_work_tile()
            wq.release()

    task = SegmentTask(lengths=lengths, name="Segments", src_resources=[queue],
                       dst_resources=[sink], warp_idx=0, num_warps=4,
                       schedule=body(sink, queue))
    tm = TaskManager(tasks=[task], resource_dependency_graph={sink: [queue]})
    tm.setup_resources_and_tasks()
    tm.run()
'''
    assert "TS814" not in _errors(src)
    # the same program with a getter name the class does not have, or a getter looked up on
    # a class that is no Task: the reference fails with AttributeError while tracing;
    # ts-lint says TS111 at the bound
    for bad, cls in (("SegmentTask.segment_lenght", "SegmentTask"), ("WorkQueue.get_domain", "WorkQueue")):
        found = [d for d in lint_source(src.replace("SegmentTask.segment_length", bad), "tutorial.py")
                 if d.severity is Severity.ERROR]
        line = src[:src.index("SegmentTask.segment_length, 128")].count("\n") + 1
        assert [(d.code, d.range.line) for d in found] == [("TS111", line)], found
        assert f"type object '{cls}' has no attribute" in found[0].message


def test_merge_member_released_through_the_group_has_its_consumer_size_checked():
    # the member's consumer tasks are the ones calling `grp.release()`: an AsyncUmma member
    # still expects exactly one arrival per tcgen05.commit
    from ts_runtime.rules.groups import merge_program
    from ts_runtime.rules.pipeline_config import config
    cfg_b = config("TmaUmma", 1, 1, var="cfg_b", cta_layout_vmnk="(1, 1, 1, 1)")
    bad = merge_program(config("AsyncUmma", 32, 32, var="cfg_a"), cfg_b)
    good = merge_program(config("AsyncUmma", 32, 1, var="cfg_a"), cfg_b)
    assert "TS428" in _errors(bad)
    assert "TS428" not in _errors(good)


def _codes(src, severities=(Severity.ERROR, Severity.WARNING, Severity.INFO)):
    return sorted({d.code for d in lint_source(src, "tutorial.py") if d.severity in severities})


def _with_graph(graph, extra_dst="", extra_ops=""):
    return PRELUDE.replace(
        "dst_resources=[buffer], warp_idx=4",
        f"dst_resources=[buffer{extra_dst}], warp_idx=4",
    ).replace(
        "resource_dependency_graph={buffer: [source]}",
        f"resource_dependency_graph={graph}",
    ).replace(
        "            if commit_every_row:\n",
        extra_ops + "            if commit_every_row:\n",
    )


def test_graph_key_with_an_empty_upstream_list_counts_as_in_the_graph():
    # a dst-only resource listed as `marker: []` appears in the dependency graph (the
    # reference accepts it); leaving it out entirely is TS355
    src = _with_graph("{buffer: [source], marker: []}", ", marker", "            marker.mark()\n")
    src = src.replace("def make_manager(rows, stages, commit_every_row=True, release=True):", '''@dataclass
class Marker(MemoryResource):
    @producer_work
    @cute.jit
    def mark(self, stage_info: StageInfo) -> None:
        pass


def make_manager(rows, stages, commit_every_row=True, release=True):
    marker = Marker(name="marker")''').replace(
        "def fill_rows(src: MemoryResource, buf: MemoryResource) -> None:",
        "def fill_rows(src: MemoryResource, buf: MemoryResource, marker: MemoryResource) -> None:",
    ).replace("schedule=fill_rows(source, buffer)", "schedule=fill_rows(source, buffer, marker)")
    program = src + '''

def build():
    make_manager(8, 2)
'''
    assert _errors(program) == []
    missing = program.replace("{buffer: [source], marker: []}", "{buffer: [source]}")
    assert _errors(missing) == ["TS355"]


def _layout_helper_program(consumer_size):
    # the UmmaAsync config is built by a `@cute.jit` helper whose layout parameter is
    # annotated `cute.Layout`, called with a plain tuple
    from ts_runtime.rules.pipeline_config import P1C4, program
    helper = f'''
import cutlass.cute as cute


@cute.jit
def acc_config(cluster_vmnk: cute.Layout):
    return PipelineConfig.create_umma_async_pipeline_cfg(
        num_stages=2,
        producer_group=CooperativeGroup(Agent.Thread),
        consumer_group=CooperativeGroup(Agent.Thread, {consumer_size}),
        cta_layout_vmnk=cluster_vmnk,
    )


def build():'''
    src = program("cfg = acc_config((2, 1, 1, 1))", P1C4)
    assert src.count("\ndef build():") == 1
    return src.replace("\ndef build():", helper, 1)


def test_layout_annotated_helper_parameter_keeps_the_tuple_it_is_passed():
    # a `@cute.jit` helper called from Python / traced code gets the tuple itself (only a
    # JIT boundary makes arguments dynamic), so the arrival count is checked against the
    # 2-CTA layout instead of being reported as an opaque layout (TS432)
    good, bad = _layout_helper_program(256), _layout_helper_program(128)
    assert "TS432" not in _codes(good) and _errors(good) == [], _codes(good)
    assert "TS425" in _errors(bad), _codes(bad)


_SUBTILE_STORE = PRELUDE.replace('''            buf.drain()
            if release:
                buf.release()''', '''            for part in range(epilogue_parts()):
                buf.drain()
            if release:
                buf.release()''') + '''

def epilogue_parts():
    import some_tiling_library
    return some_tiling_library.parts()


def build():
    make_manager(8, 2, release=RELEASE)
'''


def test_work_only_loop_over_an_unknown_count_keeps_the_schedule_analysed():
    # the subtile count comes from a library ts-lint does not read; the loop holds work calls
    # only, so the task's sync structure is known and a missing release is still found
    assert _errors(_SUBTILE_STORE.replace("RELEASE", "True")) == []
    assert any(c.startswith("TS81") for c in _errors(_SUBTILE_STORE.replace("RELEASE", "False")))
    # a loop over an unknown count around a pipeline op still leaves the schedule unknown
    opaque = _SUBTILE_STORE.replace("                buf.drain()\n", "                buf.drain()\n                buf.release()\n", 1)
    assert _errors(opaque.replace("RELEASE", "False")) == []


def _typed_view_program(setup_first: bool, setup_under_unknown_if: bool = False):
    # a typed SMEM view taken from a managed allocator: its manager's setup allocates it
    setup = "    tm.setup_resources_and_tasks()\n"
    if setup_under_unknown_if:
        setup = "    import os\n    if rows > len(os.environ):\n        tm.setup_resources_and_tasks()\n"
    view = "    flags = allocator.get(flags_alloc)\n"
    body = (setup + view) if setup_first else (view + setup)
    return PRELUDE.replace("    return TaskManager(tasks=tasks, resource_dependency_graph={buffer: [source]},\n"
                           "                       smem_allocator=allocator)\n", "") \
        .replace("    allocator.add_resource(buffer)\n",
                 "    allocator.add_resource(buffer)\n"
                 "    flags_alloc = SmemAllocation(\"flags\", dtype=cutlass.Int32, count=4)\n"
                 "    allocator.add(flags_alloc)\n") + f'''
    tm = TaskManager(tasks=tasks, resource_dependency_graph={{buffer: [source]}},
                     smem_allocator=allocator)
{body}    tm.run()


def build():
    make_manager(8, 2)
'''


def test_typed_view_before_the_managers_setup_is_ts705():
    # the reference allocates a managed allocator in `setup_resources_and_tasks()`: a `get()`
    # before it fails with "Call allocate() before get()" at the `get` line
    good = _typed_view_program(setup_first=True)
    assert _errors(good) == [], _errors(good)
    bad = _typed_view_program(setup_first=False)
    line = bad[:bad.index("allocator.get(flags_alloc)")].count("\n") + 1
    found = [(d.code, d.range.line) for d in lint_source(bad, "tutorial.py") if d.severity is Severity.ERROR]
    assert found == [("TS705", line)], found
    # a setup under a condition ts-lint cannot evaluate: not reported either way
    unsure = _typed_view_program(setup_first=True, setup_under_unknown_if=True)
    assert _errors(unsure) == [], _errors(unsure)


def _subtile_program(release_in_loop: bool, width="cutlass.Float16.width"):
    # a plain `range`: these schedules run on the host (`build()`), where the DSL does not
    # preprocess `cutlass.range_constexpr` and the reference raises for it (TS967)
    # the epilogue subtile count comes from `compute_epilogue_tile_size` (cutlass.utils), as in
    # the reference's cluster GEMM tutorial: (128, 256) tile, 16-bit output -> (128, 32) subtiles
    release = "                buf.release()\n" if release_in_loop else ""
    after = "" if release_in_loop else "            buf.release()\n"
    return PRELUDE.replace("import cutlass.pipeline as pipeline\n",
                           "import cutlass.pipeline as pipeline\nimport cutlass.utils as utils\n") \
        .replace('''            buf.drain()
            if release:
                buf.release()
''', f'''            for i in range(subtiles):
                buf.drain()
{release}{after}''').replace(
        "def make_manager(rows, stages, commit_every_row=True, release=True):\n",
        f'''def make_manager(rows, stages, commit_every_row=True, release=True):
    epi_m, epi_n = utils.blackwell_helpers.compute_epilogue_tile_size(128, 256, True, {width})
    subtiles = (128 // epi_m) * (256 // epi_n)
''') + '''

def build():
    make_manager(8, 2)
'''


def test_epilogue_subtile_count_is_evaluated():
    good = _subtile_program(release_in_loop=False)
    assert _codes(good) == [], _codes(good)
    bad = _subtile_program(release_in_loop=True)
    line = bad[:bad.index("                buf.release()")].count("\n") + 1
    found = {(d.code, d.range.line) for d in lint_source(bad, "tutorial.py") if d.severity is Severity.ERROR}
    assert ("TS813", line) in found, found
    # 8 subtiles: 7 extra releases in each of the 8 rows
    assert "56x ConsumerRelease" in [d for d in lint_source(bad, "tutorial.py") if d.code == "TS813"][0].message
    # an argument ts-lint cannot evaluate: the loop (and the checks over it) are reported unknown
    unknown = _subtile_program(release_in_loop=True, width="len(__import__('os').environ)")
    assert _codes(unknown, (Severity.ERROR, Severity.WARNING)) == []
    assert "TS953" in {d.code for d in lint_source(unknown, "tutorial.py", explain_unknown=True)}


def test_epilogue_tile_size_model_matches_cutlass():
    helpers = pytest.importorskip("cutlass.utils.blackwell_helpers")
    from ts_lint.extract.tsapi import _epilogue_tile_size
    for m in (64, 128, 256):
        for n in (16, 32, 48, 64, 96, 128, 192, 256):
            for two_cta in (False, True):
                for wd in (4, 6, 8, 16, 32):
                    for wc in (None, 8, 16, 32):
                        for d_m, c_m in ((True, True), (False, True), (False, False)):
                            args = (m, n, two_cta, wd)
                            kw = dict(elem_width_c=wc, d_is_m_major=d_m, c_is_m_major=c_m)
                            assert _epilogue_tile_size(None, list(args), kw, None) == \
                                tuple(helpers.compute_epilogue_tile_size(*args, **kw)), (args, kw)
    assert _epilogue_tile_size(None, [128, 256, True], {}, None) is not None   # too few: UNKNOWN


def test_group_without_smem_allocator_fails_at_setup():
    # the reference creates a PipelineGroup's barriers at `setup_resources_and_tasks()` from
    # the storage its SmemAllocator assigned: a manager without an allocator fails there
    # ("PipelineGroup barrier_ptr not set"); ts reports TS473 at the group, as ts codegen does
    from ts_runtime.rules.groups import merge_program
    from ts_runtime.rules.pipeline_config import config
    src = merge_program(config("TmaAsync", 1, 128, var="cfg_a"), config("TmaAsync", 1, 128, var="cfg_b"))
    tail = "    return TaskManager(tasks=tasks, resource_dependency_graph=graph, verbose=False)\n"
    assert src.endswith(tail)
    built = src[:-len(tail)] + "    tm = TaskManager(tasks=tasks, resource_dependency_graph=graph, verbose=False)\n"
    line = src[:src.index("grp = PipelineGroup(")].count("\n") + 1
    assert _errors(built + "    return tm\n") == []
    bad = built + "    tm.setup_resources_and_tasks()\n    return tm\n"
    found = [(d.code, d.range.line) for d in lint_source(bad, "tutorial.py") if d.severity is Severity.ERROR]
    assert found == [("TS473", line)], found


_BUILD = PRELUDE + '''

def build():
    return make_manager(rows=8, stages=2)
'''


def _line_of(src, text):
    return next(i for i, line in enumerate(src.splitlines(), 1) if text in line)


def test_ts_api_call_with_a_missing_or_unexpected_argument_is_ts907():
    # what Python raises TypeError for (under the reference too), at the call
    assert _errors(_BUILD) == []
    no_consumer = _BUILD.replace("        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 128),\n", "")
    found = [(d.code, d.range.line) for d in lint_source(no_consumer, "t.py") if d.severity is Severity.ERROR]
    assert found == [("TS907", _line_of(no_consumer, "cfg = PipelineConfig.create_tma_async_pipeline_cfg("))]
    assert "'consumer_group'" in [d for d in lint_source(no_consumer, "t.py") if d.code == "TS907"][0].message
    wrong_kw = _BUILD.replace("warp_idx=4,\n", "warp_index=4,\n")
    found = [(d.code, d.range.line) for d in lint_source(wrong_kw, "t.py") if d.severity is Severity.ERROR]
    assert found == [("TS907", _line_of(wrong_kw, 'Task(name="Fill"'))]


def test_unpacked_arguments_are_not_judged():
    # `**kwargs` whose contents ts-lint may not know: no TS907, only an unresolved note
    src = _BUILD.replace('Task(name="Fill", src_resources=[source], dst_resources=[buffer], warp_idx=4,',
                         'Task(name="Fill", src_resources=[source], dst_resources=[buffer], **extra(),')
    src = src.replace("def make_manager(", "def extra():\n    return {}\n\n\ndef make_manager(")
    assert "TS907" not in _errors(src)


def test_cute_arch_constants_are_their_values():
    # `cute.arch.WARP_SIZE` is 32 (a plain int in the DSL), so a group size built from it
    # is checked: 4 warps' worth is right for the 4-warp Drain task, one warp's is TS430
    base = _program("cutlass.Constexpr", "", SUBSCRIPTED_COMPILE)
    ok = base.replace("pipeline.Agent.Thread, 128)", "pipeline.Agent.Thread, 4 * cute.arch.WARP_SIZE)")
    assert ok != base and _errors(ok) == []
    assert _errors(ok.replace("4 * cute.arch.WARP_SIZE", "cute.arch.WARP_SIZE")) == ["TS430"]


def test_buffer_sized_from_the_smem_capacity():
    # `cutlass.memory.get_smem_capacity_in_bytes("sm_100")` is 232448 B: a buffer of exactly
    # that size leaves no room for the pipeline's barriers (TS707); 1 KiB less fits
    base = _program("cutlass.Constexpr", "", SUBSCRIPTED_COMPILE)
    sized = base.replace('SmemAllocation("rows", 4096, alignment=128)',
                         'SmemAllocation("rows", cutlass.memory.get_smem_capacity_in_bytes("sm_100"), alignment=128)')
    assert sized != base and _errors(sized) == ["TS707"]
    assert _errors(sized.replace('get_smem_capacity_in_bytes("sm_100")',
                                 'get_smem_capacity_in_bytes("sm_100") - 1024')) == []
