"""TS350-TS359: dependency-graph coverage, edge backing and ping-pong resources."""
import itertools

import pytest

from ts_runtime.diagnostics import Severity
from ts_runtime.enums import PipelineType
from ts_runtime.model import KernelModel, PipelineModel, ResourceModel, TaskModel
from ts_runtime.model.kernel import GraphEdge, ResourceKind
from ts_runtime.model.values import UNKNOWN
from ts_runtime.rules import load_all
from ts_runtime.rules.graph import ping_pong_resources
from ts_runtime.rules.roles import pipeline_program
from ts_runtime.source import SourceRange
from ts_runtime.testing import expected_findings, run_source

RULES = load_all()
GRAPH_CODES = ("TS351", "TS352", "TS353", "TS354", "TS355", "TS356", "TS357")


def rng(line):
    return SourceRange("kernel.py", line, 4)


class G:
    """Resources, tasks (resource lists only) and graph edges, each on its own line."""

    def __init__(self):
        self.line = itertools.count(10)
        self.resources, self.tasks, self.graph = {}, [], []

    def res(self, name, pipeline=None, **kw):
        r = ResourceModel(rid=len(self.resources) + 1, name=name, pipeline=pipeline, range=rng(next(self.line)), **kw)
        self.resources[r.rid] = r
        return r

    def pipe(self, name, ptype=PipelineType.AsyncAsync):
        return self.res(name, PipelineModel(pipeline_type=ptype, num_stages=2, range=rng(next(self.line))))

    def task(self, name, src=(), dst=()):
        ln = next(self.line)
        t = TaskModel(name=name, src=[r.rid for r in src], dst=[r.rid for r in dst], range=rng(ln),
                      arg_ranges={"src_resources": rng(ln), "dst_resources": rng(ln)})
        self.tasks.append(t)
        return ln

    def edge(self, down, up):
        ln = next(self.line)
        self.graph.append(GraphEdge(down.rid, up.rid, rng(ln)))
        return ln

    def kernel(self):
        return KernelModel(resources=self.resources, tasks=self.tasks, graph=self.graph, range=rng(1),
                           arg_ranges={"resource_dependency_graph": rng(2)})


def run(kernel):
    out = set()
    for code in GRAPH_CODES:
        out |= {(d.code, d.range.line) for d in RULES[code]().check(kernel)}
    return out


def test_clean_graph():
    g = G()
    src, buf, out = g.res("src"), g.pipe("buf"), g.res("out")
    g.task("Load", [src], [buf])
    g.task("Store", [buf], [out])
    g.edge(buf, src)
    g.edge(out, buf)
    assert run(g.kernel()) == set()


def test_unused_resources_are_reported_once_and_not_as_unbacked_edges():
    g = G()
    src, buf, spare = g.res("src"), g.res("buf"), g.res("spare")
    g.task("Load", [src], [buf])
    g.edge(buf, src)
    first = g.edge(buf, spare)
    g.edge(spare, src)                                     # spare as a key too
    second = g.edge(spare, buf)
    found = run(g.kernel())
    assert found == {("TS352", first), ("TS351", second - 1)}


def test_edge_backing_standard_and_relaxed():
    g = G()
    src, buf, out = g.res("src"), g.res("buf"), g.res("out")
    pdl = g.res("pdl", is_barrier=True, kind=ResourceKind.PDL_WAIT)
    g.task("Load", [src, pdl], [buf])
    g.task("Store", [buf], [out])
    g.edge(buf, src)
    g.edge(out, buf)
    wrong_way = g.edge(src, buf)                           # nothing reads buf into src
    g.edge(src, pdl)                                       # barrier: any task listing both
    g.edge(pdl, out)                                       # barrier end, but no task lists pdl and out
    found = run(g.kernel())
    assert found == {("TS353", wrong_way), ("TS353", wrong_way + 2)}


def test_ping_pong_relaxes_edges_and_needs_both_sides():
    g = G()
    src, pp, out = g.res("src"), g.pipe("pp"), g.res("out")
    g.task("Prod", [src], [pp])
    g.task("Cons", [pp], [out])
    g.edge(pp, src)
    self_edge = g.edge(pp, pp)
    to_out = g.edge(out, pp)
    g.edge(src, pp)                                        # relaxed by the ping-pong end: Prod lists both
    assert ping_pong_resources(g.kernel()) == [pp.rid]
    assert run(g.kernel()) == set()
    g.tasks.pop()                                          # no consumer any more
    g.task("Sink", [src], [out])
    # pp -> out is relaxed (ping-pong end) but no task lists both any more
    assert run(g.kernel()) == {("TS354", self_edge), ("TS353", to_out)}


def test_work_queue_self_edge_is_an_ordinary_edge():
    g = G()
    wq = g.res("wq", kind=ResourceKind.WORK_QUEUE)
    src, out = g.res("src"), g.res("out")
    g.task("Copy", [src, wq], [out])
    g.edge(out, src)
    g.edge(out, wq)
    self_edge = g.edge(wq, wq)
    assert ping_pong_resources(g.kernel()) == []
    # reference: "edge 'wq' -> 'wq' is not backed by any task. Standard rule: ..."
    assert run(g.kernel()) == {("TS353", self_edge)}


@pytest.mark.parametrize("ptype,fires", [
    (PipelineType.AsyncAsync, False), (PipelineType.TmaAsync, False), (PipelineType.UmmaAsync, False),
    (PipelineType.TmaUmma, True), (PipelineType.AsyncUmma, True), (PipelineType.UmmaUmma, True),
    (UNKNOWN, False)])
def test_ping_pong_consumer_side(ptype, fires):
    g = G()
    src, out = g.res("src"), g.res("out")
    pp = g.pipe("pp", ptype)
    g.task("Prod", [src], [pp])
    g.task("Cons", [pp], [out])
    g.edge(pp, src)
    g.edge(pp, pp)
    g.edge(out, pp)
    found = run(g.kernel())
    assert found == ({("TS357", pp.pipeline.range.line)} if fires else set())


def test_unpipelined_ping_pong_points_at_the_resource():
    g = G()
    src, pp, out = g.res("src"), g.res("pp"), g.res("out")
    g.task("Prod", [src], [pp])
    g.task("Cons", [pp], [out])
    g.edge(pp, src)
    self_edge = g.edge(pp, pp)
    g.edge(out, pp)
    (d,) = list(RULES["TS356"]().check(g.kernel()))
    assert d.range.line == pp.range.line
    assert [r.range.line for r in d.related] == [self_edge]


def test_missing_from_graph_once_per_resource_with_each_use_related():
    g = G()
    src, buf, out = g.res("src"), g.res("buf"), g.res("out")
    g.task("Load", [src], [buf])
    store = g.task("Store", [buf], [out])
    g.task("Store2", [buf], [out])
    g.edge(buf, src)
    (d,) = list(RULES["TS355"]().check(g.kernel()))
    assert d.range.line == 2                               # the resource_dependency_graph argument
    assert [r.range.line for r in d.related] == [store]


def test_missing_graph_is_raised_by_the_manager():
    src = pipeline_program(subs=[("resource_dependency_graph={smem: [src], out: [smem]}",
                                  "resource_dependency_graph=None")])
    (d,) = [d for d in run_source(src) if d.severity is Severity.ERROR]
    assert d.code == "TS350" and "non-empty" in d.message


def test_open_ping_pong_duplicates_are_declared():
    for code in ("TS358", "TS359"):
        assert RULES[code].open_reason and "TS354" in RULES[code].open_reason


def test_graph_rules_follow_the_reference_order():
    assert [RULES[c].order for c in ("TS351", "TS353", "TS354", "TS355", "TS356")] == [60, 60, 60, 80, 230]


def test_program_level_findings_point_at_the_graph_entry():
    src = pipeline_program(subs=[(
        '''    return TaskManager(tasks=tasks, resource_dependency_graph={smem: [src], out: [smem]},
                       verbose=False)''', '''    graph = {
        smem: [src],
        out: [smem,
              src],  # expect: TS353
        src: [smem],  # expect: TS353
    }
    return TaskManager(tasks=tasks, resource_dependency_graph=graph, verbose=False)''')])
    found = {(d.code, d.range.line) for d in run_source(src) if d.severity is Severity.ERROR}
    assert found == set(expected_findings(src))
