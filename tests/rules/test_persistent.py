"""TS501-TS517 (persistent scheduling): exact codes and lines, through the DSL and ts-lint."""
import pytest

from ts_runtime.diagnostics import ScheduleValidationError, Severity
from ts_runtime.rules import load_all
from ts_runtime.rules.persistent import (COPY_TASK, EPILOGUE, SCHEDULER_TAIL, SCHEDULER_TASK,
                                         dynamic_program, skip_program, static_program)
from ts_runtime.testing import run_source

load_all()


def line_of(src, text, nth=0):
    hits = [i for i, line in enumerate(src.splitlines(), 1) if text in line]
    return hits[nth]


def errors(src):
    return sorted({(d.code, d.range.line) for d in run_source(src) if d.severity is Severity.ERROR})


def lint_errors(src):
    lint = pytest.importorskip("ts_lint.api")
    return sorted({(d.code, d.range.line) for d in lint.lint_source(src, "program.py")
                   if d.severity is Severity.ERROR})


def both(src):
    got = errors(src)
    assert lint_errors(src) == got
    return got


# ---------------------------------------------------------------------------- valid shapes
@pytest.mark.parametrize("src", [
    static_program(),
    static_program("wq.wait()\nwq.get_and_advance_work_tile()\nwq.release()"),
    dynamic_program(),
    dynamic_program(SCHEDULER_TAIL.replace("wq.try_acquire()\n", "").replace("wq.try_wait()\n", "")),
    skip_program("TileQueue.skip_empty"),
    skip_program("WorkQueue.skip_work_tile_if"),
    skip_program("lambda tile: False"),
    skip_program("lambda queue, tile: False"),
], ids=["static", "static-no-try", "dynamic", "dynamic-no-try", "skip-unbound", "skip-base",
        "skip-lambda1", "skip-lambda2"])
def test_valid_persistent_kernels(src):
    assert both(src) == []


def test_aux_work_queue_steps_may_precede_the_loop_and_sit_in_head_or_loop():
    src = static_program(copy_schedule='''\
        @schedule
        def copy_schedule(inp, out, wq):
            wq.init_work_tile()
            with work_tile_loop(wq):
                wq.init_work_tile()
                with domain_loop(0, 4, 1):
                    v = inp.load()
                    out.store(v=v)
                    wq.init_work_tile()
                wq.try_wait()
                wq.wait()
                wq.get_and_advance_work_tile()
                wq.release()
        ''')
    assert both(src) == []


# ---------------------------------------------------------------------------- TS501
def test_ts501_flags_each_non_persistent_task_at_its_src_resources():
    extra = '''\
        @schedule
        def pad_schedule(inp):
            with domain_loop(1):
                pass'''
    tasks = (COPY_TASK + ',\nTask(name="Pad", src_resources=[], dst_resources=[], warp_idx=1, num_warps=1,\n'
             '     schedule=pad_schedule(inp)),\nTask(name="Pad2", src_resources=[], dst_resources=[], warp_idx=2,'
             ' num_warps=2,\n     schedule=pad_schedule(inp))')
    src = static_program(extra=extra, tasks=tasks)
    assert both(src) == [("TS501", line_of(src, 'name="Pad"')), ("TS501", line_of(src, 'name="Pad2"'))]


def test_ts501_is_an_assertion_that_skip_validation_does_not_downgrade():
    extra = '''\
        @schedule
        def pad_schedule(inp):
            with domain_loop(1):
                pass'''
    tasks = COPY_TASK + ',\nTask(name="Pad", src_resources=[], dst_resources=[], warp_idx=1, num_warps=1,\n' \
                        '     schedule=pad_schedule(inp))'
    src = static_program(extra=extra, tasks=tasks).replace("verbose=False)", "verbose=False, skip_validation=True)")
    assert errors(src) == [("TS501", line_of(src, 'name="Pad"'))]


def test_no_persistent_task_means_no_persistent_checks():
    # a WorkQueue produced by a non-persistent task: nothing here (TS501 needs a persistent task)
    from ts_runtime.rules.persistent import MixedPersistentTasks, SchedulerTaskCount
    from ts_runtime.model import KernelModel, ResourceModel, ResourceKind, TaskModel
    k = KernelModel(resources={1: ResourceModel(1, "wq", kind=ResourceKind.WORK_QUEUE)},
                    tasks=[TaskModel("A", src=[], dst=[1]), TaskModel("B")])
    assert list(MixedPersistentTasks().check(k)) == []
    assert list(SchedulerTaskCount().check(k)) == []


# ---------------------------------------------------------------------------- TS503-TS505
def test_ts503_points_at_the_first_work_queue_step_of_the_head():
    src = static_program(copy_schedule='''\
        @schedule
        def copy_schedule(inp, out, wq):
            with work_tile_loop(wq):
                wq.wait()
                wq.get_and_advance_work_tile()
                wq.release()
                with domain_loop(0, 4, 1):
                    v = inp.load()
                    out.store(v=v)
        ''')
    assert both(src) == [("TS503", line_of(src, "wq.wait()"))]   # not also TS505 / TS508


def test_ts504_partial_epilogue_in_the_loop_is_not_also_a_malformed_tail():
    src = static_program(copy_schedule='''\
        @schedule
        def copy_schedule(inp, out, wq):
            with work_tile_loop(wq):
                with domain_loop(0, 4, 1):
                    v = inp.load()
                    out.store(v=v)
                    wq.try_wait()
                wq.wait()
                wq.get_and_advance_work_tile()
                wq.release()
        ''')
    assert both(src) == [("TS504", line_of(src, "wq.try_wait()"))]


def test_ts505_points_at_the_work_tile_loop():
    src = static_program(copy_schedule='''\
        @schedule
        def copy_schedule(inp, out, wq):
            with work_tile_loop(wq):
                with domain_loop(0, 4, 1):
                    v = inp.load()
                    out.store(v=v)
                wq.init_work_tile()
        ''')
    assert both(src) == [("TS505", line_of(src, "with work_tile_loop(wq)"))]


# ---------------------------------------------------------------------------- TS506
def test_ts506_flags_the_task_with_the_second_queue():
    src = load_all()["TS506"].INVALID[0]
    assert both(src) == [("TS506", line_of(src, 'name="Copy2"'))]


# ---------------------------------------------------------------------------- TS507 / TS510
def test_ts507_static_scheduler_task_is_not_also_ts510():
    src = load_all()["TS507"].INVALID[0]
    assert both(src) == [("TS507", line_of(src, 'name="Scheduler"'))]


def test_ts507_dynamic_without_scheduler_points_at_the_task_list():
    src = load_all()["TS507"].INVALID[1]
    assert both(src) == [("TS507", line_of(src, "return TaskManager("))]


def test_ts507_dynamic_with_two_scheduler_tasks_flags_the_second():
    second = SCHEDULER_TASK.replace('"Scheduler"', '"Scheduler2"').replace("warp_idx=1", "warp_idx=2")
    src = dynamic_program(tasks=COPY_TASK + ",\n" + SCHEDULER_TASK + ",\n" + second, threads=96)
    assert both(src) == [("TS507", line_of(src, 'name="Scheduler2"'))]


@pytest.mark.parametrize("i", [0, 1])
def test_ts510_data_task_producing_the_queue(i):
    src = load_all()["TS510"].INVALID[i]
    assert both(src) == [("TS510", line_of(src, "dst_resources=[out, wq]"))]


# ---------------------------------------------------------------------------- TS508 / TS509
@pytest.mark.parametrize("tail", [
    "wq.wait()\nwq.get_and_advance_work_tile()\nwq.get_and_advance_work_tile()\nwq.release()",
    "wq.wait()\nwq.release()",
    "wq.try_wait()\nwq.try_wait()\nwq.wait()\nwq.get_and_advance_work_tile()\nwq.release()",
    "wq.init_work_tile()\n" + EPILOGUE,
    EPILOGUE + "\nwq.init_work_tile()",
], ids=["two-works", "no-work", "two-try-waits", "aux-first", "aux-last"])
def test_ts508_points_at_the_first_unexpected_step(tail):
    src = static_program(tail)
    assert both(src) == [("TS508", _first_bad_line(src, tail))]


def _occurrences(tail):
    seen = {}
    for step in tail.splitlines():
        n = seen.get(step, 0)
        seen[step] = n + 1
        yield n, step


def _first_bad_line(src, tail):
    from ts_runtime.rules.persistent import CONSUMER_TAILS, _shape_mismatch
    from ts_runtime.enums import ScheduleStage as S
    stage = {"wq.try_wait()": S.ConsumerTryWait, "wq.wait()": S.ConsumerWait, "wq.release()": S.ConsumerRelease,
             "wq.get_and_advance_work_tile()": S.ConsumerWork, "wq.init_work_tile()": S.ConsumerAuxWork}

    class E:
        def __init__(self, st, line):
            self.stage, self.range = st, line
    entries = [E(stage[s], line_of(src, s, n)) for n, s in _occurrences(tail)]
    entry, _ = _shape_mismatch(entries, CONSUMER_TAILS)
    return entry.range


def test_ts508_missing_release_points_at_the_last_step():
    src = static_program("wq.wait()\nwq.get_and_advance_work_tile()")
    got = errors(src)
    assert ("TS508", line_of(src, "wq.get_and_advance_work_tile()")) in got


def test_ts509_scheduler_tail_in_the_wrong_order():
    src = load_all()["TS509"].INVALID[0]
    assert both(src) == [("TS509", line_of(src, "wq.try_wait()", 1))]   # the scheduler's, not Copy's


def test_ts509_applies_only_in_dynamic_mode():
    # the same scheduler-shaped tail on a static queue is TS507, not TS509
    src = load_all()["TS507"].INVALID[0]
    assert "TS509" not in {c for c, _ in both(src)}


# ---------------------------------------------------------------------------- TS502, TS511-TS517
@pytest.mark.parametrize("code", ["TS502", "TS511", "TS512", "TS513", "TS514", "TS515", "TS516", "TS517"])
def test_capture_and_task_rules_report_the_marked_line(code):
    src = load_all()[code].INVALID[0]
    marked = [i for i, line in enumerate(src.splitlines(), 1) if f"# expect: {code}" in line]
    assert both(src) == [(code, marked[0])]


@pytest.mark.parametrize("pred,code", [
    ("lambda: False", "TS516"),
    ("lambda a, b, c: False", "TS516"),
    ("fkw", "TS516"),
    ("fopt", None),
    ("lambda *a: False", None),
    ("WorkQueue.create", "TS515"),
    ("NotAQueue.skip", "TS515"),
    ("other.skip_empty", "TS514"),
    ("NotAQueue().skip", "TS514"),
], ids=["lambda0", "lambda3", "kw-only", "optional", "varargs", "unbound-arity", "unbound-foreign",
        "bound-other", "bound-foreign"])
def test_skip_if_forms(pred, code):
    before = '''\
        other = TileQueue(name="other", tile_scheduler_config=(
            TileSchedulerConfig.create_static_persistent_tile_scheduler_params(None)))
        the_wq = wq
        def fkw(work_tile, *, k):
            return False
        def fopt(work_tile, extra=None):
            return False
        class NotAQueue:
            def skip(self, work_tile):
                return False'''
    src = skip_program(pred, before=before)
    loop = line_of(src, "with work_tile_loop(")
    expected = [] if code is None else [(code, loop)]
    assert errors(src) == expected
    if pred != "WorkQueue.create":   # ts-lint does not see the signature of the built-in class
        assert lint_errors(src) == expected


def test_ts517_reference_case_but_two_queues_is_ts502():
    src = skip_program("TileQueue.skip_empty", src="[inp, wq, other]", before='''\
        other = TileQueue(name="other", tile_scheduler_config=(
            TileSchedulerConfig.create_static_persistent_tile_scheduler_params(None)))''')
    assert errors(src) == [("TS502", line_of(src, 'name="Copy"'))]


def test_placement_rules_are_assertions():
    rules = load_all()
    for code in ("TS501", "TS503", "TS504", "TS505", "TS506", "TS507", "TS508", "TS509", "TS510"):
        assert rules[code].reference_exception == "AssertionError", code
        assert rules[code].phase == "manager" and rules[code].order == 110


def test_runtime_raises_one_error_listing_the_finding():
    src = load_all()["TS503"].INVALID[0]
    import os
    import tempfile
    from ts_runtime.testing import run_program
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "p.py")
        with open(p, "w") as f:
            f.write(src)
        diags = run_program(p)
    assert [d.code for d in diags if d.severity is Severity.ERROR] == ["TS503"]
    assert issubclass(ScheduleValidationError, ValueError)


def test_scheduler_mode_rules_stay_silent_when_the_mode_is_unknown():
    from ts_runtime.model import KernelModel, ResourceKind, ResourceModel, TaskModel
    from ts_runtime.model.values import UNKNOWN
    from ts_runtime.rules.persistent import (MalformedSchedulerTail, SchedulerTaskCount,
                                             WorkQueueProducerNotScheduler)
    wq = ResourceModel(1, "wq", kind=ResourceKind.WORK_QUEUE, tile_scheduler_type=UNKNOWN)
    k = KernelModel(resources={1: wq}, tasks=[TaskModel("S", src=[1], dst=[1]), TaskModel("C", src=[1], dst=[1])])
    for rule in (SchedulerTaskCount, MalformedSchedulerTail, WorkQueueProducerNotScheduler):
        assert list(rule().check(k)) == []
