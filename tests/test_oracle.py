"""The reference oracle itself: it must tell a valid program from a broken one.

Everything that runs the reference is marked `reference` and skips when
nvidia-cutlass-dsl is not installed; `translate` is plain text and always runs.
"""
import textwrap

import pytest

try:
    from oracle import reference_verdict, translate
except ImportError:                    # tests/ imported as a package
    from tests.oracle import reference_verdict, translate

# A whole TS program in the shape of examples/01: two GMEM resources, one task.
PROGRAM = textwrap.dedent('''
    from dataclasses import dataclass

    import cutlass
    import ts_runtime.task_manager as tm
    from ts_runtime import consumer_work, domain_loop, producer_work, schedule
    from ts_runtime.resources import MemoryResource, StageInfo, TaskLocalVariable
    from ts_runtime.task import Task


    @dataclass(kw_only=True)
    class Src(MemoryResource):
        item: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()

        def __post_init__(self):
            self.item = TaskLocalVariable(dtype=cutlass.Int32, default=cutlass.Int32(0))

        @consumer_work(returns=item)
        def get(self, stage_info: StageInfo):
            return stage_info.loop_offset


    @dataclass(kw_only=True)
    class Dst(MemoryResource):
        @producer_work
        def put(self, stage_info: StageInfo, item):
            pass


    def build():
        src, dst = Src(name="src"), Dst(name="dst")

        @schedule
        def copy(s, d):
            SCHEDULE_BODY

        task = Task(name="Copy", src_resources=SRC, dst_resources=[dst], warp_idx=0,
                    num_warps=1, schedule=copy(src, dst))
        return tm.TaskManager(tasks=[task], resource_dependency_graph={dst: [src]})
    ''')


LOOP = "with domain_loop(0, 8, 1):"


def program(*body: str, src: str = "[src]") -> str:
    """PROGRAM with the schedule body `body` (one line each, relative indentation)."""
    body = body or (LOOP, "    d.put(item=s.get())")
    return PROGRAM.replace("SCHEDULE_BODY", "\n        ".join(body)).replace("SRC", src)


def test_translate_rewrites_module_prefix_only():
    src = "import ts_runtime.task_manager as tm\nfrom ts_runtime import schedule\nmy_ts_runtime = 1\n"
    out = translate(src)
    assert out.splitlines()[0] == "import cutlass.experimental.task_scheduling.task_manager as tm"
    assert out.splitlines()[1] == "from cutlass.experimental.task_scheduling import schedule"
    assert out.splitlines()[2] == "my_ts_runtime = 1"
    assert out.count("\n") == src.count("\n")     # line numbers are preserved


@pytest.mark.reference
def test_accepts_valid_program():
    v = reference_verdict(program())
    assert v.accepted, v.traceback
    assert v.exc_type is None and v.message == ""
    assert "Result: SAFE" in v.stdout            # the reference printed its checker report


@pytest.mark.reference
def test_rejects_resource_missing_from_src():
    v = reference_verdict(program(src="[]"))
    assert not v.accepted
    assert v.exc_type == "ValueError"
    assert "appears in the schedule but is not listed in src_resources" in v.message
    assert v.program_lines and v.program_lines[-1] > 0


@pytest.mark.reference
def test_rejects_capture_error_with_schedule_error():
    v = reference_verdict(program(LOOP, "    d.put(item=s.get())", LOOP, "    pass"))
    assert not v.accepted
    assert v.exc_type == "ScheduleError"
    assert "at most one domain_loop()" in v.message


@pytest.mark.reference
def test_records_warnings_of_accepted_program():
    # `get` returns `item`, but this schedule never routes it anywhere.
    v = reference_verdict(program(LOOP, "    s.get()", "    d.put(item=s.get())"))
    assert v.accepted, v.traceback
    assert v.warned("never routed")


@pytest.mark.reference
def test_entry_none_runs_module_top_level_only():
    v = reference_verdict(program(src="[]"), entry=None)
    assert v.accepted                            # build() was never called
    v = reference_verdict(program(src="[]") + "\nbuild()\n", entry=None)
    assert v.exc_type == "ValueError"


@pytest.mark.reference
def test_pipeline_names_from_ts_runtime_pipeline():
    src = ("from ts_runtime.pipeline import Agent, CooperativeGroup\n"
           "g = CooperativeGroup(Agent.Thread, 128)\n"
           "assert g.size == 128\n"
           "CooperativeGroup(Agent.Thread, 0)\n")
    v = reference_verdict(src, entry=None)
    assert v.exc_type == "ValueError"
    assert "must be greater than 0" in v.message
