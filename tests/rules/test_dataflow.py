"""TS3xx data-flow rules beyond the rule examples.

Captured schedules cannot express most routing-table defects (capture records only
routes from a `returns=` token to a later work call, TS301-TS312 guard the rest), so the
manager rules TS321-TS326 are tested on routing tables built through the shared
ScheduleBuilder / lower and then altered the way a hand-built table could be.
"""
import itertools

import pytest

from ts_runtime.diagnostics import Severity
from ts_runtime.enums import PipelineType, ScheduleStage
from ts_runtime.model import KernelModel, PipelineModel, ResourceModel, TaskModel, WorkMethodModel
from ts_runtime.model.builder import ParamRef, ScheduleBuilder
from ts_runtime.model.kernel import ParamSpec
from ts_runtime.model.lowered import Route
from ts_runtime.model.lower import lower
from ts_runtime.rules import load_all
from ts_runtime.rules.engine import run_manager_rules
from ts_runtime.rules.roles import pipeline_program
from ts_runtime.source import SourceRange
from ts_runtime.testing import expected_findings, run_source

RULES = load_all()
S = ScheduleStage


def rng(line):
    return SourceRange("kernel.py", line, 4)


class Flow:
    """One task `T` over resources `src` (read) and `dst` (written), recorded line by line."""

    def __init__(self):
        self._line = itertools.count(10)
        self.resources = {}
        self.src = self._res("src", {"load": WorkMethodModel("load", S.ConsumerWork, returns=("item",)),
                                     "load_other": WorkMethodModel("load_other", S.ConsumerWork,
                                                                   returns=("item",)),
                                     "check": WorkMethodModel("check", S.ConsumerWork,
                                                              params=[ParamSpec("data")]),
                                     "put": WorkMethodModel("put", S.ProducerWork, params=[ParamSpec("data")])})
        self.src.tlv_names = {"item"}
        self.dst = self._res("dst", {"store": WorkMethodModel("store", S.ProducerWork,
                                                              params=[ParamSpec("data")]),
                                     "store2": WorkMethodModel("store2", S.ProducerWork,
                                                               params=[ParamSpec("a"), ParamSpec("b")])})
        self.b = ScheduleBuilder("T", self.resources, rng(next(self._line)))
        self.loop = None
        self.lines = []

    def _res(self, name, methods):
        r = ResourceModel(rid=len(self.resources) + 1, name=name, class_name=name.title(), work_methods=methods)
        self.resources[r.rid] = r
        return r

    def open_loop(self):
        self.loop = self.b.domain_loop((0, 4, 1), None, rng(next(self._line)))

    def close_loop(self):
        self.b.close(self.loop)

    def call(self, res, attr, **kwargs):
        line = next(self._line)
        self.lines.append(line)
        return line, self.b.call(ParamRef(res.rid), attr, [], kwargs, rng(line))

    def kernel(self, src=None, dst=None):
        model = self.b.finish()
        assert not [d for d in model.diagnostics if d.severity is Severity.ERROR], model.diagnostics
        low = lower(model, self.resources, lambda *a: None)
        t = TaskModel(name="T", src=[self.src.rid] if src is None else src,
                      dst=[self.dst.rid] if dst is None else dst, schedule=model, lowered=low,
                      range=rng(next(self._line)))
        return KernelModel(resources=self.resources, tasks=[t])


def run(kernel):
    out = set()
    for code in ("TS321", "TS322", "TS323", "TS324", "TS325", "TS326"):
        out |= {(d.code, d.range.line) for d in RULES[code]().check(kernel)}
    return out


def _copy():
    f = Flow()
    f.open_loop()
    lw, tok = f.call(f.src, "load")
    lr, _ = f.call(f.dst, "store", data=tok)
    f.close_loop()
    return f, lw, lr


def test_captured_routes_are_clean():
    f, lw, lr = _copy()
    k = f.kernel()
    assert run(k) == set()
    (route,) = k.tasks[0].lowered.routes
    assert (route.src_var, route.dest_arg) == ("item", "data")


def test_writer_must_be_consumer_work_on_a_src_resource():
    f, lw, lr = _copy()
    k = f.kernel()
    w = k.tasks[0].lowered.entries[0]
    w.stage = S.ProducerWork                               # a hand-built writer slot
    assert run(k) == {("TS321", lw)}
    f, lw, lr = _copy()
    k = f.kernel(src=[])                                   # writer resource not in src
    assert run(k) == {("TS321", lw)}


def test_reader_must_be_work_on_the_declared_side():
    f, lw, lr = _copy()
    k = f.kernel(dst=[])
    assert run(k) == {("TS322", lr)}
    f, lw, lr = _copy()
    k = f.kernel()
    k.tasks[0].lowered.entries[1].stage = S.ProducerCommit
    assert run(k) == {("TS322", lr)}


def test_consumer_to_consumer_routes_are_allowed():
    f = Flow()
    f.open_loop()
    lw, tok = f.call(f.src, "load")
    lr, _ = f.call(f.src, "check", data=tok)
    f.close_loop()
    assert run(f.kernel()) == set()
    f = Flow()
    f.open_loop()
    lw, tok = f.call(f.src, "load")
    lr, _ = f.call(f.src, "check", data=tok)
    f.close_loop()
    k = f.kernel()
    k.tasks[0].src = []                                    # consumer-side reader not in src
    assert run(k) == {("TS321", lw), ("TS322", lr)}


def test_malformed_routes():
    f, lw, lr = _copy()
    k = f.kernel()
    low = k.tasks[0].lowered
    low.routes.append(Route(writer=0, reader=7, src_var="item", dest_arg="data"))
    low.routes.append(Route(writer=0, reader=1, src_var="", dest_arg="data"))
    assert run(k) == {("TS323", lw)}


def test_one_argument_two_variables():
    f, lw, lr = _copy()
    k = f.kernel()
    k.tasks[0].lowered.routes.append(Route(writer=0, reader=1, src_var="coord", dest_arg="data"))
    found = run(k)
    assert ("TS324", lr) in found


def test_reader_before_writer_is_not_loop_carried():
    # capture cannot put a reader before its writer: record head writer -> loop reader,
    # then swap the sections as a hand-built table could
    f = Flow()
    lw_head, tok = f.call(f.src, "load")
    f.open_loop()
    lr, _ = f.call(f.dst, "store", data=tok)
    f.close_loop()
    k = f.kernel()
    low = k.tasks[0].lowered
    writer, reader = low.entries
    writer.section, reader.section = "loop", "head"       # reader now precedes its only writer
    assert run(k) == {("TS325", lr)}


def test_most_recent_writer():
    f = Flow()
    f.open_loop()
    l1, t1 = f.call(f.src, "load")
    lr, _ = f.call(f.dst, "store", data=t1)
    l2, t2 = f.call(f.src, "load_other")                  # writes `item` again, after the reader
    lr2, _ = f.call(f.dst, "store", data=t2)
    f.close_loop()
    k = f.kernel()
    assert run(k) == set()
    route2 = k.tasks[0].lowered.routes[1]
    route2.writer = 0                                      # the second store now claims the first load
    fresh = KernelModel(resources=k.resources, tasks=k.tasks)   # analyses are memoised per kernel
    assert run(fresh) == {("TS326", lr2)}


def test_writers_are_matched_per_resource():
    """Two resources writing variables of the same name do not interfere (reference: accepted)."""
    src = pipeline_program(load='''\
        with domain_loop(0, 4, 1):
            v = src.load()
            smem.acquire()
            smem.fill(data=v)
            smem.commit()
        ''', store='''\
        with domain_loop(0, 4, 1):
            smem.wait()
            w = smem.read()
            smem.release()
            out.store(data=w)
        ''')
    assert [d for d in run_source(src) if d.severity is Severity.ERROR] == []


def test_routing_rules_run_after_the_role_rules():
    assert all(RULES[c].order == 220 for c in ("TS321", "TS322", "TS323", "TS324", "TS325", "TS326"))
    assert RULES["TS201"].order < RULES["TS321"].order


def test_role_errors_absorb_the_routing_consequence():
    """A route writer on a dst-only resource is a TS202 first; TS321 is its consequence."""
    src = pipeline_program(store='''\
        with domain_loop(0, 4, 1):
            smem.wait()
            v = smem.read()
            smem.release()
            out.store(data=v)
            w = out.load()  # expect: TS202
            out.store(data=w)
        ''')
    found = {(d.code, d.range.line) for d in run_source(src) if d.severity is Severity.ERROR}
    assert found == set(expected_findings(src))


@pytest.mark.parametrize("code", ["TS316", "TS317", "TS327"])
def test_codegen_phase_rules_are_implemented_by_codegen(code):
    # reported while the kernel is traced; programs: tests/codegen/test_codegen_rules.py
    r = RULES[code]
    assert r.phase == "codegen" and r.open_reason is None


def test_declared_capture_rules_have_phases_and_exceptions():
    assert RULES["TS313"].phase == "decorate"
    assert RULES["TS318"].phase == RULES["TS319"].phase == "object"
    assert RULES["TS312"].severity is Severity.WARNING
    for code in ("TS301", "TS308", "TS314", "TS321", "TS326"):
        assert RULES[code].reference_exception == "ValueError"
