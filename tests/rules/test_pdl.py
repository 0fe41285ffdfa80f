"""TS601-TS604 (Programmatic Dependent Launch): exact codes and lines, DSL and ts-lint."""
import pytest

from ts_runtime.diagnostics import Severity
from ts_runtime.rules import load_all
from ts_runtime.rules.pdl import COPY2, pdl_program
from ts_runtime.testing import run_source

RULES = load_all()


def line_of(src, text, nth=0):
    return [i for i, line in enumerate(src.splitlines(), 1) if text in line][nth]


def errors(src):
    return sorted({(d.code, d.range.line) for d in run_source(src) if d.severity is Severity.ERROR})


def both(src):
    got = errors(src)
    lint = pytest.importorskip("ts_lint.api")
    assert sorted({(d.code, d.range.line) for d in lint.lint_source(src, "program.py")
                   if d.severity is Severity.ERROR}) == got
    return got


def test_every_dependent_task_waits():
    assert both(pdl_program()) == []


def test_ts601_at_the_first_dependent_work_of_the_task_without_a_wait():
    src = pdl_program('''\
        with domain_loop(0, 4, 1):
            v = inp.load()
            out2.store(v=v)''', waits=False)
    assert both(src) == [("TS601", line_of(src, "v = inp.load()", 1))]


def test_ts602_at_the_late_wait():
    src = pdl_program('''\
        with domain_loop(0, 4, 1):
            v = inp.load()
            out2.store(v=v)
        pdl_wait.wait_griddep()''')
    assert both(src) == [("TS602", line_of(src, "pdl_wait.wait_griddep()", 1))]


def test_wait_inside_the_loop_before_the_work_is_enough():
    # combined head + loop + tail order: the wait entry precedes the load entry
    src = pdl_program('''\
        with domain_loop(0, 4, 1):
            pdl_wait.wait_griddep()
            v = inp.load()
            out2.store(v=v)''')
    assert both(src) == []


def test_ts602_work_in_the_head_before_a_loop_wait():
    src = pdl_program('''\
        v = inp.load()
        with domain_loop(0, 4, 1):
            pdl_wait.wait_griddep()
            out2.store(v=v)''')
    assert both(src) == [("TS602", line_of(src, "pdl_wait.wait_griddep()", 1))]


@pytest.mark.parametrize("code", ["TS601", "TS602"])
def test_assume_pdl_wait_completed_disables_the_ordering_rules(code):
    src = RULES[code].INVALID[0].replace("verbose=False", "verbose=False, assume_pdl_wait_completed=True")
    assert both(src) == []


def test_producers_of_the_dependent_resource_must_wait_too():
    # graph out -> pdl_wait: Copy2 writes `out` without waiting (it reads `in`, which is not dependent)
    src = pdl_program('''\
        with domain_loop(0, 4, 1):
            v = inp.load()
            out2.store(v=v)''', waits=False)
    src = src.replace("dst_resources=[out2], warp_idx=1", "dst_resources=[out], warp_idx=1")
    src = src.replace("def copy2_schedule(inp, out2):", "def copy2_schedule(inp, out):")
    src = src.replace("        out2.store(v=v)\n\n", "        out.store(v=v)\n\n")
    src = src.replace("copy2_schedule(inp, out2)", "copy2_schedule(inp, out)")
    src = src.replace("graph = {inp: [pdl_wait], out: [inp], out2: [inp], pdl_launch: [out]}",
                      "graph = {out: [inp, pdl_wait], pdl_launch: [out]}")
    src = src.replace('OutGmem(name="out2")', 'OutGmem(name="unused")')
    got = errors(src)
    assert got == [("TS601", line_of(src, "out.store(v=v)", 1))]


PIPELINED = '''\
from dataclasses import dataclass
from ts_runtime import schedule, domain_loop, consumer_work, producer_work
from ts_runtime.resources import MemoryResource, PipelineConfig, TaskLocalVariable, PdlWaitBarrier
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager
from ts_runtime.pipeline import CooperativeGroup, Agent


@dataclass(kw_only=True)
class InGmem(MemoryResource):
    val: object = TaskLocalVariable.uninitialized()

    def __post_init__(self):
        self.val = TaskLocalVariable(dtype=int, default=0)

    @consumer_work(returns=val)
    def load(self, stage_info):
        return 0


@dataclass(kw_only=True)
class Buf(MemoryResource):
    val: object = TaskLocalVariable.uninitialized()

    def __post_init__(self):
        self.val = TaskLocalVariable(dtype=int, default=0)

    @producer_work
    def fill(self, stage_info, v):
        pass

    @consumer_work(returns=val)
    def read(self, stage_info):
        return 0


@dataclass(kw_only=True)
class OutGmem(MemoryResource):
    @producer_work
    def store(self, stage_info, v):
        pass


def build():
    cfg = PipelineConfig.create_async_async_pipeline_cfg(
        num_stages=2, producer_group=CooperativeGroup(Agent.Thread, 32),
        consumer_group=CooperativeGroup(Agent.Thread, 32), cta_layout_vmnk=None)
    pdl_wait = PdlWaitBarrier(name="pdl_wait")
    inp, buf, out = InGmem(name="in"), Buf(name="buf", pipeline_config=cfg), OutGmem(name="out")

    @schedule
    def load_schedule(pdl_wait, inp, buf):
        {load_wait}
        with domain_loop(0, 4, 1):
            v = inp.load()
            buf.acquire()
            buf.fill(v=v)
            buf.commit()

    @schedule
    def store_schedule(buf, out):
        with domain_loop(0, 4, 1):
            buf.wait()
            v = buf.read()
            out.store(v=v)
            buf.release()

    tasks = [
        Task(name="Load", src_resources=[pdl_wait, inp], dst_resources=[buf], warp_idx=0, num_warps=1,
             schedule=load_schedule(pdl_wait, inp, buf)),
        Task(name="Store", src_resources=[buf], dst_resources=[out], warp_idx=1, num_warps=1,
             schedule=store_schedule(buf, out)),
    ]
    graph = {{buf: [inp, pdl_wait], out: [buf]}}
    return TaskManager(tasks=tasks, resource_dependency_graph=graph, verbose=False)
'''


def test_consumers_of_a_pipelined_dependent_resource_are_exempt():
    # only the producer of `buf` must wait; the consumer is ordered by buf's own pipeline
    assert both(PIPELINED.format(load_wait="pdl_wait.wait_griddep()")) == []


def test_the_producer_of_a_pipelined_dependent_resource_must_wait_first():
    src = PIPELINED.format(load_wait="pass").replace(
        "            buf.commit()\n", "            buf.commit()\n        pdl_wait.wait_griddep()\n", 1)
    assert both(src) == [("TS602", line_of(src, "pdl_wait.wait_griddep()"))]


def test_switch_and_semantics_codes_are_documented_not_run():
    for code in ("TS603", "TS604"):
        rule = RULES[code]
        assert rule.open_reason and rule.severity is Severity.INFO
    assert RULES["TS601"].order == RULES["TS602"].order == 70
