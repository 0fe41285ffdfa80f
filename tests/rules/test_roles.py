"""TS2xx manager rules beyond the rule examples: exact code and line of each finding.

Program tests run a whole TS program through the tracing DSL (`run_source`) and compare
every error finding with the `# expect: TSxxx` markers. Model tests build a KernelModel
through the shared ScheduleBuilder / lower (as both front ends do) for what a captured
program cannot express (UNKNOWN values, exempt pipeline types).
"""
import contextlib
import itertools

import pytest

from ts_runtime.diagnostics import Severity
from ts_runtime.enums import PipelineGroupMode, PipelineType, ScheduleStage, SignalingThreads
from ts_runtime.model import KernelModel, PipelineModel, ResourceModel, TaskModel, WorkMethodModel
from ts_runtime.model.builder import ParamRef, ScheduleBuilder
from ts_runtime.model.kernel import GraphEdge, ManagerOptions, ResourceKind
from ts_runtime.model.lower import lower
from ts_runtime.model.values import UNKNOWN
from ts_runtime.rules import load_all
from ts_runtime.rules.engine import run_manager_rules
from ts_runtime.rules.roles import (GROUP_STORE, LOAD, STORE, _GROUP_IMPORT, dma_program, group_program,
                                    persistent_copy_program, pipeline_program, program_with)
from ts_runtime.source import SourceRange
from ts_runtime.testing import expected_findings, run_source

RULES = load_all()
S = ScheduleStage


def errors(src):
    return {(d.code, d.range.line) for d in run_source(src) if d.severity is Severity.ERROR}


def all_findings(src):
    return {(d.code, d.range.line) for d in run_source(src)}


def assert_exact(src):
    """The program's error findings are exactly its `# expect:` markers."""
    assert errors(src) == set(expected_findings(src))


def line_of(src, needle):
    return next(i for i, ln in enumerate(src.splitlines(), 1) if needle in ln)


# ============================================================================ model builder
PATH = "kernel.py"


def rng(line):
    return SourceRange(PATH, line, 4)


class KB:
    """Tiny KernelModel builder: every recorded op gets its own line in `kernel.py`."""

    def __init__(self):
        self.resources, self.tasks, self.graph = {}, [], []
        self._rid, self._line = itertools.count(100), itertools.count(10)
        self.options = ManagerOptions()

    def line(self):
        return next(self._line)

    def res(self, name, pipeline=None, **kw):
        r = ResourceModel(rid=next(self._rid), name=name, class_name=name.title(), range=rng(self.line()),
                          pipeline=pipeline, **kw)
        self.resources[r.rid] = r
        return r

    def pipe(self, name, ptype=PipelineType.AsyncAsync, **kw):
        return self.res(name, PipelineModel(pipeline_type=ptype, num_stages=2, **kw))

    def edge(self, down, up):
        self.graph.append(GraphEdge(down.rid, up.rid, rng(self.line())))

    @contextlib.contextmanager
    def task(self, name, src=(), dst=(), **kw):
        b = ScheduleBuilder(name, self.resources, rng(self.line()))
        lines = {}
        loop = b.domain_loop((0, 4, 1), None, rng(self.line()))

        def op(r, attr, group=None):
            ln = self.line()
            b.call(ParamRef(r.rid, group.rid if group else None), attr, [], {}, rng(ln))
            lines.setdefault(attr if group is None else f"{attr}@{group.name}", []).append(ln)
            lines.setdefault((r.name, attr), []).append(ln)
            return ln
        yield op
        b.close(loop)
        model = b.finish()
        assert not [d for d in model.diagnostics if d.severity is Severity.ERROR], model.diagnostics
        low = lower(model, self.resources, lambda *a: None)
        t = TaskModel(name=name, src=[r.rid for r in src], dst=[r.rid for r in dst], schedule=model,
                      lowered=low, range=rng(self.line()), warp_idx=len(self.tasks), **kw)
        t.lines = lines
        self.tasks.append(t)

    def build(self):
        return KernelModel(resources=self.resources, tasks=self.tasks, graph=self.graph, options=self.options)


def run(kernel, prefix=("TS2",)):
    """(code, line) of the findings of manager rules with the given code prefixes."""
    out = set()
    for code in sorted(RULES):
        r = RULES[code]
        if r.phase == "manager" and r.open_reason is None and code.startswith(prefix):
            out |= {(d.code, d.range.line) for d in r().check(kernel)}
    return out


# ============================================================================ roles TS201-TS205
def test_roles_report_once_per_task_and_resource():
    src = pipeline_program(store='''\
        with domain_loop(0, 4, 1):
            smem.wait()
            v = smem.read()
            smem.producer_aux_work()  # expect: TS201
            smem.release()
            smem.producer_aux_work()
            out.store(data=v)
        ''')
    assert_exact(src)


def test_resource_in_both_lists_may_use_both_sides():
    # (the exhaustive checker then counts Store as a second producer of smem and finds a
    # deadlock, TS801, as the reference does; the role rules stay silent)
    src = pipeline_program(store='''\
        with domain_loop(0, 4, 1):
            smem.wait()
            v = smem.read()
            smem.producer_aux_work()
            smem.release()
            out.store(data=v)
        ''', subs=[("src_resources=[smem], dst_resources=[out]", "src_resources=[smem], dst_resources=[out, smem]")])
    assert not {c for c, _ in errors(src)} & {"TS201", "TS202", "TS203"}


def test_undeclared_producer_use_points_at_dst_resources():
    src = pipeline_program(store='''\
        with domain_loop(0, 4, 1):
            smem.wait()
            v = smem.read()
            smem.release()
            out.store(data=v)
            src.store(data=v)
        ''', subs=[("def store(smem, out):", "def store(smem, out, src):"),
                   ("schedule=store(smem, out)", "schedule=store(smem, out, src)")])
    line = line_of(src, 'Task(name="Store"')
    assert errors(src) == {("TS203", line)}


def test_group_member_entries_follow_member_roles_and_group_ops_need_a_member():
    assert errors(group_program()) == set()
    bad = group_program(subs=[('Task(name="Store", src_resources=[a, b]', 'Task(name="Store", src_resources=[a]')])
    line = line_of(bad, 'Task(name="Store"')
    assert ("TS203", line) in errors(bad)       # b's entries: b is listed nowhere


def test_group_level_ops_do_not_count_as_member_usage():
    src = group_program(mode="FusedMerge", store='''\
        with domain_loop(0, 4, 1):
            group.wait()
            x = a.read()
            group.release()
            out.store(data=x)
        ''', subs=[("def store(a, b, group, out):", "def store(a, group, out):"),
                   ("schedule=store(group.a, group.b, group, out)),", "schedule=store(group.a, group, out)),")])
    assert ("TS205", line_of(src, 'Task(name="Store"')) in errors(src)


def test_unused_resource_reported_for_each_list():
    src = pipeline_program(subs=[
        ('src_resources=[src], dst_resources=[smem], warp_idx=0', 'src_resources=[src, out], dst_resources=[smem], warp_idx=0'),
        ("dst_resources=[smem], warp_idx=0, num_warps=1,", "dst_resources=[smem], warp_idx=0, num_warps=1,  # expect: TS205")])
    assert [c for c, _ in errors(src)] == ["TS205"]


# ============================================================================ brackets TS206-TS214
def _store(body):
    return pipeline_program(store=body)


@pytest.mark.parametrize("body", [
    # release right after wait does not close the window (no work used it)
    '''\
    with domain_loop(0, 4, 1):
        smem.wait()
        smem.release()
        v = smem.read()  # expect: TS208
        out.store(data=v)
    ''',
    # any later release satisfies a work group (reference: accepted) ...
    '''\
    with domain_loop(0, 4, 1):
        smem.wait()
        v = smem.read()
        smem.wait()
        smem.release()
        smem.release()
        out.store(data=v)
    ''',
    # ... but releases after a re-opening wait do not close that window for later work
    # (reference: "missing ConsumerRelease after ConsumerWork group")
    '''\
    with domain_loop(0, 4, 1):
        smem.wait()
        v = smem.read()
        out.store(data=v)
        smem.wait()
        smem.release()
        smem.release()
        w = smem.read()  # expect: TS208
        out.store(data=w)
    ''',
    # a wait after a work group re-opens; one release closes both groups
    '''\
    with domain_loop(0, 4, 1):
        smem.wait()
        v = smem.read()
        out.store(data=v)
        smem.wait()
        w = smem.read()
        out.store(data=w)
        smem.release()
        smem.release()
    ''',
])
def test_window_semantics(body):
    rounds = body.count("smem.wait()")
    load = LOAD.replace("smem.commit()\n", "smem.commit()\n" + "    smem.acquire()\n    smem.commit()\n" * (rounds - 1))
    assert_exact(pipeline_program(load=load, store=body))


def test_one_finding_per_group_and_groups_split_by_bracket_ops():
    src = _store('''\
    with domain_loop(0, 4, 1):
        v = smem.read()  # expect: TS206
        smem.wait()
        out.store(data=v)
        w = smem.read()
        smem.release()
        out.store(data=w)
    ''')
    assert_exact(src)


def test_brackets_span_head_loop_and_tail():
    src = pipeline_program(load=LOAD.replace("(0, 4, 1)", "(0, 5, 1)"), store='''\
        smem.wait()
        with domain_loop(0, 4, 1):
            v = smem.read()
            smem.release()
            out.store(data=v)
            smem.wait()
        smem.release()
        ''')
    assert_exact(src)
    late = pipeline_program(load=LOAD.replace("(0, 4, 1)", "(0, 5, 1)"), store='''\
        with domain_loop(0, 4, 1):
            v = smem.read()  # expect: TS206
            smem.release()
            out.store(data=v)
            smem.wait()
        smem.wait()
        smem.release()
        ''')
    assert_exact(late)


def test_auxiliary_work_needs_no_brackets():
    src = _store('''\
    with domain_loop(0, 4, 1):
        smem.prefetch()
        smem.wait()
        v = smem.read()
        smem.release()
        smem.prefetch()
        out.store(data=v)
    ''')
    assert_exact(src)


def test_unpipelined_resources_need_no_brackets_and_tries_are_free():
    src = pipeline_program(load='''\
        with domain_loop(0, 4, 1):
            src.try_wait()
            v = src.load()
            smem.acquire()
            smem.fill(data=v)
            smem.commit()
        ''')
    assert_exact(src)


def _group_kernel(mode, with_group_op=True):
    kb = KB()
    a, b = kb.pipe("a"), kb.pipe("b")
    g = kb.res("group", PipelineModel(pipeline_type=PipelineType.AsyncAsync, num_stages=2),
               kind=ResourceKind.GROUP, is_barrier=True, group_mode=mode, members=[a.rid, b.rid],
               member_names={"a": a.rid, "b": b.rid})
    a.group = b.group = g.rid
    with kb.task("C", src=[a, b]) as op:
        if mode is PipelineGroupMode.FusedMerge:
            op(g, "wait")
        else:
            op(a, "wait", g)
            op(b, "wait", g)
        wa = op(a, "consumer_work", g)
        wb = op(b, "consumer_work", g)
        if with_group_op:
            op(g, "release")
    return kb.build(), wa, wb


@pytest.mark.parametrize("mode", [PipelineGroupMode.Merge, PipelineGroupMode.FusedMerge])
def test_merge_members_are_closed_by_the_group_release(mode):
    k, wa, wb = _group_kernel(mode)
    assert run(k) == set()
    k, wa, wb = _group_kernel(mode, with_group_op=False)
    assert run(k) == {("TS208", wa), ("TS208", wb)}


def test_group_release_does_not_bracket_members_the_task_does_not_list():
    k, wa, wb = _group_kernel(PipelineGroupMode.Merge)
    k.tasks[0].src = [k.tasks[0].src[0]]            # b is no longer listed
    found = run(k)
    assert ("TS208", wb) in found and ("TS208", wa) not in found


FORK = program_with('''
def build():
    def cfg():
        return PipelineConfig.create_async_async_pipeline_cfg(
            num_stages=2, producer_group=CooperativeGroup(Agent.Thread, 32),
            consumer_group=CooperativeGroup(Agent.Thread, 32), cta_layout_vmnk=(1, 1, 1, 1))
    src, out = Gmem(name="src"), Gmem(name="out")
    a, b = Smem(name="a", pipeline_config=cfg()), Smem(name="b", pipeline_config=cfg())
    group = PipelineGroup(name="group", members=[a, b], mode=PipelineGroupMode.Fork)

    @schedule
    def load(src, a, b, group):
        with domain_loop(0, 4, 1):
            v = src.load()
            a.acquire()
            b.acquire()
            a.fill(data=v)
            b.fill(data=v)
            group.commit()

    @schedule
    def store(smem, out):
        with domain_loop(0, 4, 1):
            smem.wait()
            v = smem.read()
            smem.release()
            out.store(data=v)

    tasks = [
        Task(name="Load", src_resources=[src], dst_resources=[a, b], warp_idx=0, num_warps=1,
             schedule=load(src, group.a, group.b, group)),
        Task(name="StoreA", src_resources=[a], dst_resources=[out], warp_idx=1, num_warps=1,
             schedule=store(group.a, out)),
        Task(name="StoreB", src_resources=[b], dst_resources=[out], warp_idx=2, num_warps=1,
             schedule=store(group.b, out)),
    ]
    return TaskManager(tasks=tasks, resource_dependency_graph={a: [src], b: [src], out: [a, b]},
                       verbose=False)
''', extra=_GROUP_IMPORT)


def test_fork_members_are_closed_by_the_group_commit():
    assert_exact(FORK)   # the reference accepts it too
    late = FORK.replace("            b.fill(data=v)\n            group.commit()",
                        "            group.commit()\n            b.fill(data=v)  # expect: TS209")
    assert_exact(late)   # reference: "missing ProducerCommit after ProducerWork group for resource 'b'"


SPLIT = program_with('''
def build():
    def cfg():
        return PipelineConfig.create_async_async_pipeline_cfg(
            num_stages=2, producer_group=CooperativeGroup(Agent.Thread, 32),
            consumer_group=CooperativeGroup(Agent.Thread, 32), cta_layout_vmnk=(1, 1, 1, 1))
    src, out = Gmem(name="src"), Gmem(name="out")
    tile, ready = Smem(name="tile", pipeline_config=cfg()), Smem(name="ready", pipeline_config=cfg())

    @schedule
    def load(src, tile):
        with domain_loop(0, 4, 1):
            v = src.load()
            tile.acquire()
            tile.fill(data=v)
            tile.commit()

    @schedule
    def sync(tile, ready):
        with domain_loop(0, 4, 1):
            tile.wait()
            ready.acquire()
            ready.commit()

    @schedule
    def compute(tile, ready, out):
{body}
    tasks = [
        Task(name="Load", src_resources=[src], dst_resources=[tile], warp_idx=0, num_warps=1,
             schedule=load(src, tile)),
        Task(name="Sync", src_resources=[tile], dst_resources=[ready], warp_idx=1, num_warps=1,
             schedule=sync(tile, ready)),
        Task(name="Compute", src_resources=[tile, ready], dst_resources=[out], warp_idx=2, num_warps=1,
             schedule=compute(tile, ready, out)),
    ]
    return TaskManager(tasks=tasks, resource_dependency_graph={{tile: [src], {graph}}},
                       verbose=False)
''')
SPLIT_BODY = '''\
        with domain_loop(0, 4, 1):
            ready.wait()
            v = tile.read()
            out.store(data=v)
            tile.release()
            ready.release()
'''


def test_split_consumer_downstream_wait_opens_the_upstream_work():
    """PAT Split-Consumer: `ready` is downstream of `tile`, so its wait opens tile's work."""
    assert_exact(SPLIT.format(body=SPLIT_BODY, graph="ready: [tile], out: [ready]"))


def test_split_consumer_proxy_is_transitive():
    kb = KB()
    tile, mid, ready = kb.pipe("tile"), kb.pipe("mid"), kb.pipe("ready")
    kb.edge(mid, tile)
    kb.edge(ready, mid)
    with kb.task("C", src=[tile, ready]) as op:
        op(ready, "wait")
        work = op(tile, "consumer_work")
        op(tile, "release")
        op(ready, "release")
    assert run(kb.build()) == set()
    kb.graph[1] = GraphEdge(mid.rid, ready.rid, rng(kb.line()))    # ready upstream of mid instead
    assert run(kb.build()) == {("TS206", work)}


def test_split_consumer_proxy_must_come_first():
    late = SPLIT.format(body='''\
        with domain_loop(0, 4, 1):
            v = tile.read()  # expect: TS212
            ready.wait()
            out.store(data=v)
            tile.release()
            ready.release()
''', graph="ready: [tile], out: [ready]")
    assert_exact(late)        # tile is in split mode: Sync waits on it without releasing


@pytest.mark.parametrize("downstream,expected", [(True, "TS212"), (False, "TS210")])
def test_split_consumer_still_needs_the_release(downstream, expected):
    """Sync waits on `tile` without releasing: `tile` is in split (advance_on_wait) mode."""
    kb = KB()
    tile, ready = kb.pipe("tile"), kb.pipe("ready")
    if downstream:
        kb.edge(ready, tile)
    with kb.task("Sync", src=[tile]) as op:
        op(tile, "wait")
    with kb.task("C", src=[tile, ready]) as op:
        op(ready, "wait")
        work = op(tile, "consumer_work")
        op(ready, "release")
    # with the proxy the open is fine and only the release is missing (reference: "missing
    # ConsumerRelease after ConsumerWork group"); without it the task neither opens nor
    # closes the pipelined resource
    assert run(kb.build()) == {(expected, work)}


def test_window_mode_proxy_on_the_model():
    kb = KB()
    tile, ready, out = kb.pipe("tile"), kb.pipe("ready"), kb.res("out")
    kb.edge(ready, tile)
    kb.edge(out, ready)
    with kb.task("C", src=[tile, ready], dst=[out]) as op:
        op(ready, "wait")
        work = op(tile, "consumer_work")
        op(tile, "release")
        op(ready, "release")
        op(out, "producer_work")
    assert run(kb.build()) == set()
    kb.graph.pop(0)                                   # tile no longer upstream of ready
    assert run(kb.build()) == {("TS206", work)}


def test_pipelined_work_without_brackets_but_with_proxy_needs_a_close():
    kb = KB()
    tile, ready = kb.pipe("tile"), kb.pipe("ready")
    kb.edge(ready, tile)
    with kb.task("C", src=[tile, ready]) as op:
        op(ready, "wait")
        work = op(tile, "consumer_work")
        op(ready, "release")
    assert run(kb.build()) == {("TS208", work)}


@pytest.mark.parametrize("flag,expected", [(True, {"TS211"}), (False, {"TS207"}), (UNKNOWN, set())])
def test_advance_on_acquire_counts_acquires_per_group(flag, expected):
    kb = KB()
    buf = kb.pipe("buf", advance_on_acquire=flag)
    with kb.task("P", dst=[buf]) as op:
        op(buf, "acquire")
        op(buf, "producer_work")
        op(buf, "commit")
        second = op(buf, "producer_work")
        op(buf, "acquire")
        op(buf, "commit")
    found = run(kb.build())
    assert found == {(c, second) for c in expected}


def test_advance_on_acquire_accepts_prefetched_acquires():
    kb = KB()
    buf = kb.pipe("buf", advance_on_acquire=True)
    with kb.task("P", dst=[buf]) as op:
        for attr in ("acquire", "acquire", "producer_work", "commit", "producer_work", "commit"):
            op(buf, attr)
    assert run(kb.build()) == set()
    kb.resources[buf.rid].pipeline.advance_on_acquire = False
    assert {c for c, _ in run(kb.build())} == {"TS207"}


def test_advance_on_wait_unknown_stays_silent():
    kb = KB()
    buf = kb.pipe("buf", advance_on_wait=UNKNOWN)
    with kb.task("C", src=[buf]) as op:
        op(buf, "wait")
        op(buf, "release")
        op(buf, "consumer_work")
    assert run(kb.build()) == set()
    kb.resources[buf.rid].pipeline.advance_on_wait = False
    assert {c for c, _ in run(kb.build())} == {"TS208"}


def test_try_ops_need_a_later_blocking_op_per_resource():
    kb = KB()
    buf, other = kb.pipe("buf"), kb.pipe("other")
    with kb.task("C", src=[buf, other]) as op:
        t1 = op(buf, "try_wait")
        op(other, "wait")               # a wait on another resource does not count
        op(other, "release")
        t2 = op(buf, "try_wait")        # reported once per resource and stage
    assert run(kb.build()) == {("TS214", t1)}
    del t2


def test_work_queue_epilogue_is_bracketed():
    assert_exact(persistent_copy_program())


# ============================================================================ DMA TS215-TS217
def test_dma_release_after_the_downstream_work_is_fine_even_late_in_the_tail():
    src = dma_program('''\
    with domain_loop(0, 4, 1):
        stage.wait()
        v = stage.read()
        tile.acquire()
        tile.fill(data=v)
        tile.commit()
        stage.release()
    ''')
    assert_exact(src)


def test_dma_auxiliary_producer_work_does_not_count():
    src = dma_program('''\
    with domain_loop(0, 4, 1):
        stage.wait()
        v = stage.read()
        tile.acquire()
        tile.producer_aux_work()
        stage.release()  # expect: TS215
        tile.fill(data=v)
        tile.commit()
    ''')
    assert_exact(src)


def test_dma_labels_use_the_most_recent_upstream_work():
    body = '''\
    with domain_loop(0, 4, 1):
        stage.wait()
        v = stage.read()
        tile.acquire()
        stage.release()  # expect: TS215
        tile.fill(data=v)
        tile.commit()
    '''
    # reference: "'stage'.ConsumerRelease at index 3 has no preceding 'tile'.ProducerWork"
    assert_exact(dma_program(body, manager=', dma_consumer_release_labels={(stage, tile): ["read"]}'))


def test_dma_labels_select_which_releases_are_checked():
    kb = KB()
    stage, tile = kb.pipe("stage"), kb.pipe("tile", PipelineType.TmaUmma)
    stage.work_methods["read"] = WorkMethodModel("read", S.ConsumerWork)
    stage.work_methods["peek"] = WorkMethodModel("peek", S.ConsumerWork)
    kb.edge(tile, stage)
    with kb.task("Copy", src=[stage], dst=[tile]) as op:
        op(stage, "wait")
        op(stage, "peek")
        early = op(stage, "release")
        op(stage, "wait")
        op(stage, "read")
        op(tile, "acquire")
        op(tile, "producer_work")
        op(tile, "commit")
        op(stage, "release")
    assert run(kb.build(), ("TS21",)) == {("TS215", early)}
    kb.options.dma_consumer_release_labels = {(stage.rid, tile.rid): ["read"]}
    assert run(kb.build(), ("TS21",)) == set()
    kb.options.dma_consumer_release_labels = {(stage.rid, tile.rid): ["peek"]}
    assert run(kb.build(), ("TS21",)) == {("TS215", early)}
    kb.options.dma_consumer_release_labels = {(stage.rid, tile.rid): ["other"]}
    assert {c for c, _ in run(kb.build(), ("TS21",))} == {"TS216"}


@pytest.mark.parametrize("ptype,fires", [
    (PipelineType.TmaAsync, True), (PipelineType.TmaUmma, True), (PipelineType.UmmaAsync, True),
    (PipelineType.UmmaUmma, True), (PipelineType.ClcFetchAsync, True),
    (PipelineType.AsyncAsync, False), (PipelineType.AsyncUmma, False), (UNKNOWN, False)])
def test_dma_ordering_only_for_hardware_producers(ptype, fires):
    kb = KB()
    stage, tile = kb.pipe("stage"), kb.pipe("tile", ptype)
    kb.edge(tile, stage)
    with kb.task("Copy", src=[stage], dst=[tile]) as op:
        op(stage, "wait")
        op(stage, "consumer_work")
        rel = op(stage, "release")
        op(tile, "acquire")
        op(tile, "producer_work")
        op(tile, "commit")
    assert run(kb.build(), ("TS21",)) == ({("TS215", rel)} if fires else set())


def test_dma_edges_skip_work_queues_self_edges_and_tasks_without_the_pair():
    kb = KB()
    wq = kb.res("wq", PipelineModel(pipeline_type=PipelineType.ClcFetchAsync, num_stages=1),
                kind=ResourceKind.WORK_QUEUE)
    stage, tile = kb.pipe("stage"), kb.pipe("tile", PipelineType.TmaAsync)
    kb.edge(tile, wq)
    kb.edge(stage, stage)
    kb.edge(tile, stage)
    with kb.task("Copy", src=[wq, stage], dst=[tile]) as op:
        op(wq, "wait")
        op(wq, "release")
        op(stage, "wait")
        op(stage, "consumer_work")
        rel = op(stage, "release")
        op(tile, "acquire")
        op(tile, "producer_work")
        op(tile, "commit")
    assert run(kb.build(), ("TS21",)) == {("TS215", rel)}


def test_dma_producer_without_work_warns_on_the_edge_and_skips_it():
    src = dma_program('''\
    with domain_loop(0, 4, 1):
        stage.wait()
        stage.prefetch()
        stage.release()
        tile.acquire()
        tile.commit()
    ''')
    found = run_source(src)
    w = [d for d in found if d.code == "TS217"]
    assert len(w) == 1 and w[0].severity is Severity.WARNING
    assert w[0].range.line == line_of(src, "tile: [stage],")
    assert not [d for d in found if d.code == "TS215"]


# ============================================================================ labels TS227-TS229
def test_generic_hook_override_is_not_a_named_method():
    src = pipeline_program(extra='''

@dataclass(kw_only=True)
class Hooked(MemoryResource):
    @consumer_work
    def consumer_work(self, stage_info):
        pass
''', store='''\
    with domain_loop(0, 4, 1):
        smem.wait()
        v = smem.read()
        smem.release()
        hook.consumer_work()
        out.store(data=v)
    ''', subs=[('src, smem, out = Gmem(name="src")', 'hook = Hooked(name="hook")\n    src, smem, out = Gmem(name="src")'),
               ("def store(smem, out):", "def store(smem, out, hook):"),
               ("schedule=store(smem, out)", "schedule=store(smem, out, hook)"),
               ("src_resources=[smem], dst_resources=[out]", "src_resources=[smem, hook], dst_resources=[out]"),
               ("out: [smem]}", "out: [smem, hook]}")])
    assert_exact(src)     # the reference accepts it too


def test_unlabeled_aux_work_is_checked_against_aux_methods():
    src = pipeline_program(store='''\
    with domain_loop(0, 4, 1):
        smem.consumer_aux_work()  # expect: TS228
        smem.wait()
        v = smem.read()
        smem.release()
        out.store(data=v)
    ''')
    assert_exact(src)
    ok = pipeline_program(load='''\
    with domain_loop(0, 4, 1):
        v = src.load()
        smem.acquire()
        smem.producer_aux_work()
        smem.fill(data=v)
        smem.commit()
    ''')
    assert_exact(ok)      # Smem has no @producer_work(work_attrs=AUXILIARY) method


def test_unknown_label_on_the_model():
    kb = KB()
    buf = kb.pipe("buf")
    buf.work_methods["read"] = WorkMethodModel("read", S.ConsumerWork)
    buf.work_methods["fill"] = WorkMethodModel("fill", S.ProducerWork)
    with kb.task("C", src=[buf]) as op:
        op(buf, "wait")
        op(buf, "read")
        op(buf, "release")
    assert run(kb.build(), ("TS227",)) == set()
    entry = next(e for e in kb.tasks[0].lowered.entries if e.label == "read")
    entry.label = "raed"                                   # not a method
    assert run(kb.build(), ("TS227",)) == {("TS227", entry.range.line)}
    entry.label = "fill"                                   # a method of the other stage
    d = next(iter(RULES["TS227"]().check(kb.build())))
    assert "did you mean ['read']" in d.message


# ============================================================================ TS236
def _cta_kernel(ptype=PipelineType.AsyncAsync, **pkw):
    kb = KB()
    buf = kb.pipe("buf", ptype, **pkw)
    with kb.task("C", src=[buf], run_only_on_cta_id=0) as op:
        op(buf, "try_wait")
        w = op(buf, "wait")
        op(buf, "consumer_work")
        op(buf, "release")
    return kb.build(), w


@pytest.mark.parametrize("pkw,fires", [
    (dict(), True),
    (dict(consumer_signaling_threads=SignalingThreads.CtaLeader), False),
    (dict(consumer_wait_signaling_threads=SignalingThreads.CtaLeader), False),
    (dict(consumer_signaling_threads=SignalingThreads.CtaLeader,
          consumer_wait_signaling_threads=SignalingThreads.All), True),
    (dict(consumer_signaling_threads=UNKNOWN), False),
    (dict(ptype=PipelineType.ClcFetchAsync), False),
])
def test_leader_cta_wait_signaling(pkw, fires):
    k, wait_line = _cta_kernel(**pkw)
    found = run(k, ("TS236",))
    # one finding per task and resource, on its first wait-side op (the try_wait)
    assert found == ({("TS236", wait_line - 1)} if fires else set())
    k.tasks[0].run_only_on_cta_id = UNKNOWN
    assert run(k, ("TS236",)) == set()


# ============================================================================ engine integration
def test_bracket_rules_run_in_the_reference_order():
    order = {c: RULES[c].order for c in ("TS201", "TS205", "TS206", "TS214", "TS215", "TS228", "TS236")}
    assert order == {"TS201": 50, "TS205": 90, "TS206": 100, "TS214": 100, "TS215": 120,
                     "TS228": 190, "TS236": 195}


def test_rules_never_crash_on_an_empty_or_unlowered_kernel():
    k = KernelModel(tasks=[TaskModel(name="T", src=[1], dst=[2])], resources={})
    assert [d for d in run_manager_rules(k, with_checker=False) if d.code == "TS999"] == []
