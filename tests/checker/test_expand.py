"""Loop expansion, fallback counts, persistent tiles, skipped lists, variants (model.md §7.1, §9)."""
from kbuild import KernelBuilder
from ts_runtime.checker.expand import (expand_task, iteration_count, opaque_keys, table_fallback,
                                       variants)
from ts_runtime.checker.program import split_steps
from ts_runtime.enums import ScheduleStage as S
from ts_runtime.model import RUNTIME, UNKNOWN


def guarded_task():
    kb = KernelBuilder()
    buf = kb.pipe("buf", stages=2)
    aux = kb.plain("aux")
    with kb.task("T", dst=[buf], src=[aux]) as t:
        t.op(aux, "consumer_aux_work")
        with t.loop(4):
            with t.first():
                t.op(aux, "consumer_work")
            t.op(buf, "acquire")
            with t.every(2, start=1):
                t.op(buf, "producer_work")
            with t.last():
                t.op(buf, "producer_aux_work")
            t.op(buf, "commit")
        t.op(aux, "consumer_work")
    return kb.build(), buf


def test_expand_loop_guards_and_tags():
    k, buf = guarded_task()
    xs = expand_task(k.tasks[0])
    got = [(x.stage.name, x.tag, x.iteration) for x in xs]
    acq, cmt = ("ProducerAcquire", "", None), ("ProducerCommit", "", None)
    assert got[0] == ("ConsumerAuxWork", "H", None)
    loop = [(s, t, i) for s, t, i in got if i is not None]
    assert [(s, t) for s, t, i in loop if i == 0] == [("ConsumerWork", "F"), ("ProducerAcquire", ""),
                                                      ("ProducerCommit", "")]
    assert [(s, t) for s, t, i in loop if i == 1] == [("ProducerAcquire", ""), ("ProducerWork", "P"),
                                                      ("ProducerCommit", "")]
    assert [(s, t) for s, t, i in loop if i == 3] == [("ProducerAcquire", ""), ("ProducerWork", "P"),
                                                      ("ProducerAuxWork", "L"), ("ProducerCommit", "")]
    assert got[-1] == ("ConsumerWork", "T", None)
    # reference-compatible 4-tuples
    res, stage, call_idx, tag = xs[1]
    assert (res, stage, call_idx, tag) == (k.tasks[0].lowered.entries[1].resource, S.ConsumerWork, 0, "F")


def test_iteration_counts():
    k, _ = guarded_task()
    low = k.tasks[0].lowered
    assert iteration_count(low).n == 4 and iteration_count(low).exact
    low.domain_end = RUNTIME
    c = iteration_count(low, 1)
    assert (c.n, c.exact) == (1, False)
    low.domain_start = 2
    assert iteration_count(low, 1).n == 0            # range(2, max(1, 1)) is empty
    assert iteration_count(low, 3).n == 1            # the table's fallback max(starts) + 1
    assert table_fallback(k) == 3
    low.domain_step = -1
    assert iteration_count(low, 3).n == 5            # mirrored: range(-2, 3, 1)
    low.domain_end = UNKNOWN
    assert iteration_count(low).n is None


def persistent_task(skip=True):
    kb = KernelBuilder()
    wq = kb.work_queue()
    wait = kb.pdl_wait()
    buf = kb.pipe("buf", stages=2)
    with kb.task("T", src=[wq, wait], dst=[buf]) as t:
        t.op(wait, "consumer_work")                       # pre-WTL head: once
        with t.work_tiles(wq, skip=skip):
            t.op(buf, "producer_aux_work")
            with t.skippable():
                with t.loop(2):
                    t.ops(buf, "acquire", "producer_work", "commit")
            t.ops(wq, "wait", "get_and_advance_work_tile", "release")
    return kb.build()


def test_persistent_tiles_and_skipped_list():
    k = persistent_task()
    t = k.tasks[0]
    xs = expand_task(t, tiles=2)
    names = [x.stage.name for x in xs]
    assert names.count("ConsumerWork") == 3          # wait_griddep once + the queue step per tile
    assert names.count("ProducerAcquire") == 4
    assert [x.tile for x in xs][:2] == [0, 0] and xs[-1].tile == 1
    skipped = expand_task(t, tiles=2, skip=(True, False))
    assert [x.tag for x in skipped if x.tile == 0] == ["H", "SH", "ST", "ST", "ST"]
    assert [x.stage.name for x in skipped].count("ProducerAcquire") == 2
    assert len(variants(k, tiles=2)) == 4 and len(variants(k, tiles=2, mixed_skip=False)) == 2


def test_split_work_on_unpipelined_resources():
    k, _ = guarded_task()
    steps = split_steps(k, expand_task(k.tasks[0]))
    # aux work and pipelined work stay single; consumer work on `aux` becomes two steps
    cw = [s for s in steps if s.stage is S.ConsumerWork]
    assert [(s.part, s.nparts) for s in cw] == [(0, 2), (1, 2), (0, 2), (1, 2)]
    assert all(s.nparts == 1 for s in steps if s.stage is not S.ConsumerWork)


def test_opaque_variants():
    kb = KernelBuilder()
    buf = kb.pipe("buf", stages=1)
    with kb.task("T", dst=[buf]) as t:
        with t.loop(1):
            with t.when("a"):
                t.op(buf, "acquire")
            with t.when("b", negated=True):
                t.op(buf, "commit")
    k = kb.build()
    assert opaque_keys(k) == ["a", "b"]
    vs = variants(k)
    assert [v.assignment for v in vs] == [{"a": False, "b": False}, {"a": False, "b": True},
                                          {"a": True, "b": False}, {"a": True, "b": True}]
    assert vs[1].opaque_suffix() == "during opaque assignment 2/4 (a=False, b=True)"
    xs = expand_task(k.tasks[0], opaque_assignment={"a": True, "b": True})
    assert [x.stage for x in xs] == [S.ProducerAcquire]
