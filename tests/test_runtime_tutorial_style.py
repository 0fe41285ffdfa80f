"""ts_runtime on constructs of the reference's tutorials that are not schedule logic.

* The DSL's call boundary probes every argument of a traced call with
  `hasattr(x, "_mutable_ref")` / `getattr(x, "ir_value", None)` (`cute.compile[
  cute.FrontendNext]`): a probe of a schedule proxy must fail with a plain AttributeError
  and leave no finding behind, as the reference's proxy does.
* `PipelineGroup` is importable from `resources`, as in the reference.
"""
from dataclasses import dataclass

import pytest

from ts_runtime import consumer_work, domain_loop, producer_work, schedule
from ts_runtime.diagnostics import ScheduleError
from ts_runtime.resources import MemoryResource, StageInfo, TaskLocalVariable


@dataclass(kw_only=True)
class Counter(MemoryResource):
    tick: TaskLocalVariable = TaskLocalVariable.uninitialized()

    def __post_init__(self) -> None:
        self.tick = TaskLocalVariable(dtype=int, default=0)

    @consumer_work(returns=tick)
    def read(self, stage_info: StageInfo) -> int:
        return stage_info.loop_offset


@dataclass(kw_only=True)
class Log(MemoryResource):
    @producer_work
    def write(self, stage_info: StageInfo, tick: int) -> None:
        pass


def test_probing_a_proxy_leaves_no_finding():
    seen = {}

    @schedule
    def body(src, dst):
        seen["mutable_ref"] = hasattr(src, "_mutable_ref")
        seen["ir_value"] = getattr(dst, "ir_value", None)
        with domain_loop(0, 4, 1):
            t = src.read()
            dst.write(tick=t)

    body(Counter(name="counter"), Log(name="log"))       # no ScheduleError
    assert seen == {"mutable_ref": False, "ir_value": None}


def test_misspelled_work_method_still_fails():
    @schedule
    def body(src, dst):
        with domain_loop(0, 4, 1):
            t = src.raed()
            dst.write(tick=t)

    with pytest.raises((AttributeError, ScheduleError)) as info:
        body(Counter(name="counter"), Log(name="log"))
    assert "raed" in str(info.value)


def test_pipeline_group_importable_from_resources():
    from ts_runtime.pipeline_group import PipelineGroup as direct
    from ts_runtime.resources import PipelineGroup
    assert PipelineGroup is direct


def test_graph_key_with_an_empty_upstream_list_is_in_the_graph():
    # a second sink only written by the task, listed as `mark: []`, appears in the
    # dependency graph (TS355 stays silent); not listing it at all is TS355
    from ts_runtime.diagnostics import ScheduleValidationError
    from ts_runtime.task import Task
    from ts_runtime.task_manager import TaskManager

    def manager(with_key):
        counter, log, mark = Counter(name="counter"), Log(name="log"), Log(name="mark")

        @schedule
        def body(c: MemoryResource, out: MemoryResource, flag: MemoryResource) -> None:
            with domain_loop(0, 4, 1):
                t = c.read()
                out.write(tick=t)
                flag.write(tick=t)

        task = Task(name="Tick", src_resources=[counter], dst_resources=[log, mark], warp_idx=0,
                    num_warps=1, schedule=body(counter, log, mark))
        graph = {log: [counter], mark: []} if with_key else {log: [counter]}
        return TaskManager(tasks=[task], resource_dependency_graph=graph)

    manager(True)
    with pytest.raises(ScheduleValidationError, match="TS355"):
        manager(False)
