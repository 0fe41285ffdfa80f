"""Aliasing races (TS802): overlapping SMEM/TMEM of different resources accessed concurrently."""
from kbuild import KernelBuilder, codes, consumer, finding, producer, related_lines
from ts_runtime.checker import check_kernel
from ts_runtime.enums import PipelineType

AA, AU, UA = PipelineType.AsyncAsync, PipelineType.AsyncUmma, PipelineType.UmmaAsync


def two_pairs(off_b=0, size=256, **kw):
    kb = KernelBuilder()
    a = kb.pipe("a", stages=2, smem=[(0, size)], **kw)
    b = kb.pipe("b", stages=2, smem=[(off_b, size)], **kw)
    src = kb.plain("src")
    pa = producer(kb, "PA", a, 2, src=src)
    ca = consumer(kb, "CA", a, 2)
    pb = producer(kb, "PB", b, 2, src=src)
    cb = consumer(kb, "CB", b, 2)
    return kb, (pa, ca, pb, cb)


def test_overlapping_buffers_race():
    kb, (pa, ca, pb, cb) = two_pairs()
    r = check_kernel(kb.build())
    assert codes(r.diagnostics) == ["TS802"]
    d = r.diagnostics[0]
    # both producers acquired stage 0 and are about to write it
    assert d.range.line == pa.lines[("a", "producer_work")][0]
    assert related_lines(d) == [pb.lines[("b", "producer_work")][0]]
    assert d.message == ("aliasing race: 'PA' writes 'a' stage 0 while 'PB' writes 'b' stage 0; both map to "
                         "smem[0:256] and no pipeline orders the two accesses (4 more racing access pair(s) "
                         "between these resources)")
    # the expected counterexample: each producer reads its input (a split, two-step
    # unpipelined work) and acquires; nothing else
    assert sorted((s.task, s.step) for s in d.trace) == sorted(
        [("PA", "ConsumerWork(src)")] * 2 + [("PA", "ProducerAcquire(a)")]
        + [("PB", "ConsumerWork(src)")] * 2 + [("PB", "ProducerAcquire(b)")])
    assert d.trace[-1].step in ("ProducerAcquire(a)", "ProducerAcquire(b)")


def test_disjoint_buffers_do_not_race():
    kb, _ = two_pairs(off_b=256)
    r = check_kernel(kb.build())
    assert r.diagnostics == [] and r.complete


def test_unknown_offset_never_claims_an_alias():
    from ts_runtime.model import UNKNOWN
    kb, _ = two_pairs()
    k = kb.build()
    next(r for r in k.resources.values() if r.name == "b").smem[0].offset = UNKNOWN
    assert check_kernel(k).diagnostics == []


def test_role_requirements_restrict_the_overlap():
    # b's producer side writes only its second allocation, which does not overlap a
    kb = KernelBuilder()
    a = kb.pipe("a", stages=1, smem=[(0, 128)])
    b = kb.pipe("b", stages=1, smem=[(0, 128), (512, 128)], producer_req=["b_s1"], consumer_req=["b_s1"])
    producer(kb, "PA", a, 1)
    consumer(kb, "CA", a, 1)
    producer(kb, "PB", b, 1)
    consumer(kb, "CB", b, 1)
    r = check_kernel(kb.build())
    assert r.diagnostics == []


def dma_chain(a_type, acc=None, stages=1, n=1):
    """P1 -> a -> T2 -> (c | acc) -> T3 -> b -> T4, with b aliasing a.

    T3 writes b only after T2 released a (ordered through c / acc). With a DMA consumer
    (AsyncUmma) T2's read of a is still in flight after release unless a completion wait
    retires it. With `n` > 1, T2 drains `n` tiles of a (its mainloop) and then fills c
    once (its epilogue, in the schedule's tail).
    """
    kb = KernelBuilder()
    a = kb.pipe("a", stages=stages, ptype=a_type, smem=[(0, 256)])
    b = kb.pipe("b", stages=1, smem=[(0, 256)])
    c = kb.pipe("c", stages=1, ptype=acc or AA)
    producer(kb, "P1", a, n)
    with kb.task("T2", src=[a], dst=[c]) as t2:
        with t2.loop(n):
            t2.ops(a, "wait", "consumer_work", "release")
            if n == 1:
                t2.ops(c, "acquire", "producer_work", "commit")
        if n > 1:
            t2.ops(c, "acquire", "producer_work", "commit")
    with kb.task("T3", src=[c], dst=[b]) as t3:
        with t3.loop(1):
            t3.ops(c, "wait", "release")
            t3.ops(b, "acquire", "producer_work", "commit")
    consumer(kb, "T4", b, 1)
    return kb, t2, t3


def test_async_consumer_read_ends_at_release():
    kb, _, _ = dma_chain(AA)
    assert check_kernel(kb.build()).diagnostics == []


def test_dma_consumer_read_outlives_release():
    kb, t2, t3 = dma_chain(AU)
    r = check_kernel(kb.build())
    d = finding(r.diagnostics, "TS802")
    assert d.range.line == t3.lines[("b", "producer_work")][0]
    assert related_lines(d) == [t2.lines[("a", "consumer_work")][0]]
    assert "'T3' writes 'b' stage 0 while 'T2' reads 'a' stage 0" in d.message


def test_completion_wait_retires_dma_reads():
    # T2 reads a (DMA) and produces the UMMA resource c: T3's wait on c proves the read done
    kb, _, _ = dma_chain(AU, acc=UA)
    assert check_kernel(kb.build()).diagnostics == []


def test_unpipelined_work_is_not_atomic():
    kb = KernelBuilder()
    x = kb.plain("x", smem=[(0, 64)])
    y = kb.plain("y", smem=[(32, 64)])
    with kb.task("W", dst=[x]) as w:
        with w.loop(1):
            w.op(x, "producer_work")
    with kb.task("R", src=[y]) as rd:
        with rd.loop(1):
            rd.op(y, "consumer_work")
    r = check_kernel(kb.build())
    d = finding(r.diagnostics, "TS802")
    assert d.range.line == w.lines[("x", "producer_work")][0]
    assert related_lines(d) == [rd.lines[("y", "consumer_work")][0]]
    assert "smem[32:64]" in d.message


def test_same_task_never_races_with_itself():
    kb = KernelBuilder()
    x = kb.plain("x", smem=[(0, 64)])
    y = kb.plain("y", smem=[(0, 64)])
    with kb.task("W", dst=[x, y]) as w:
        with w.loop(2):
            w.op(x, "producer_work")
            w.op(y, "producer_work")
    assert check_kernel(kb.build()).diagnostics == []


def test_pipeline_order_prevents_the_race():
    # b is written only after a's consumer released a: the chain orders the windows
    kb, _, _ = dma_chain(AA)
    r = check_kernel(kb.build(), reduce=False, symmetry=False)
    assert r.diagnostics == [] and r.complete


def _staged(duplicated: bool, ptype=AA):
    """Load fills `a` (2 stages, 3 tiles); Mid drains it, then writes `c`, which aliases
    `a`'s stage 0; Store drains `c`. The pipelines order c's write after every a tile."""
    kb = KernelBuilder()
    a = kb.pipe("a", stages=2, ptype=ptype, smem=[(0, 256)])
    c = kb.pipe("c", stages=1, smem=[(0, 256)])
    src, out = kb.plain("src"), kb.plain("out")
    with kb.task("Load", src=[src], dst=[a]) as load:
        with load.loop(0, 3, 1):
            load.op(src, "consumer_work")
            load.op(a, "acquire")
            load.op(a, "producer_work")
            if duplicated:
                load.op(a, "producer_work")
            load.op(a, "commit")
    with kb.task("Mid", src=[a], dst=[c]) as mid:
        with mid.loop(0, 3, 1):
            mid.op(a, "wait")
            mid.op(a, "consumer_work")
            mid.op(a, "release")
        mid.op(c, "acquire")
        mid.op(c, "producer_work")
        mid.op(c, "commit")
    consumer(kb, "Store", c, 1, out=out)
    return kb, load, mid


def test_second_write_under_one_acquire_is_never_published():
    kb, load, mid = _staged(duplicated=False)
    assert check_kernel(kb.build()).diagnostics == []
    kb, load, mid = _staged(duplicated=True)
    r = check_kernel(kb.build())
    assert codes(r.diagnostics) == ["TS802"]
    d = r.diagnostics[0]
    # the second producer_work of the load task, against Mid's write of c
    assert d.range.line == load.lines[("a", "producer_work")][1]
    assert related_lines(d) == [mid.lines[("c", "producer_work")][0]]
    assert "second producer work call on one acquired stage of 'a'" in d.message
    # c's write can only start once Mid consumed the last tile: the extra write of the
    # first tile is still in flight then (no later wait or acquire publishes it)
    assert [s.step for s in d.trace if s.task == "Mid"][-1] == "ProducerAcquire(c)"


def test_second_write_on_a_stage_that_aliases_nothing_is_harmless():
    kb = KernelBuilder()
    a = kb.pipe("a", stages=2, smem=[(0, 256)])
    src = kb.plain("src")
    with kb.task("Load", src=[src], dst=[a]) as load:
        with load.loop(0, 3, 1):
            load.op(src, "consumer_work")
            load.op(a, "acquire")
            load.op(a, "producer_work")
            load.op(a, "producer_work")
            load.op(a, "commit")
    consumer(kb, "Cons", a, 3)
    assert check_kernel(kb.build()).diagnostics == []


def _retired(write_first: bool):
    """W and R ordered by the pipeline p (W commits, R waits), x and y unpipelined and
    overlapping. write_first: W writes x before its commits, R reads y after its waits;
    else W reads y first and R writes x last. Both verdicts are the reference's."""
    kb = KernelBuilder()
    p = kb.pipe("p", stages=2)
    x = kb.plain("x", tmem=[(0, 64)])
    y = kb.plain("y", tmem=[(0, 64)])
    first, last = (x, y) if write_first else (y, x)
    with kb.task("W", src=[] if write_first else [y], dst=[p, x] if write_first else [p]) as w:
        w.op(first, "producer_work" if write_first else "consumer_work")
        with w.loop(2):
            w.ops(p, "acquire", "producer_work", "commit")
    with kb.task("R", src=[p, y] if write_first else [p], dst=[] if write_first else [x]) as r:
        with r.loop(2):
            r.ops(p, "wait", "consumer_work", "release")
        r.op(last, "consumer_work" if write_first else "producer_work")
    return kb, w, r


def test_a_write_to_an_unpipelined_resource_is_never_retired():
    # the reference: "A writes x vs B prod y": the pipeline orders the two calls, but no
    # pipeline step ever retires x's data, which y's (non-atomic) read overwrites
    kb, w, r = _retired(write_first=True)
    d = finding(check_kernel(kb.build()).diagnostics, "TS802")
    assert d.range.line == w.lines[("x", "producer_work")][0]
    assert related_lines(d) == [r.lines[("y", "consumer_work")][0]]
    assert "'x' has no pipeline: no step ever retires the write" in d.message


def test_a_read_of_an_unpipelined_resource_ends_with_the_call():
    # the reference accepts: the read of y is over before the pipeline lets x be written
    kb, _, _ = _retired(write_first=False)
    assert check_kernel(kb.build()).diagnostics == []


def _wait_then_trailing_release():
    """P writes `a` (which no task waits on, so its write stays in flight) and then fills
    `b`, which overlaps it; C waits on `b` and releases it. C's wait starts a read of `b`
    while P's write of `a` is in flight: a race that shows only in the state after the wait.
    C's release trails the wait (it changes no held entry and decrements no pool), so the
    reduced search runs the two as one step, into the state where every task has finished."""
    kb = KernelBuilder()
    a = kb.pipe("a", stages=1, ptype=AA, smem=[(0, 128)])
    b = kb.pipe("b", stages=1, ptype=AU, smem=[(0, 128)])
    with kb.task("P", dst=[a, b]) as p:
        with p.loop(0, 1):
            p.ops(a, "acquire", "producer_work", "commit")
            p.ops(b, "acquire", "producer_work", "commit")
    with kb.task("C", src=[b]) as c:
        with c.loop(0, 1):
            c.ops(b, "wait", "release")
    return kb.build(), p, c


def test_a_race_in_a_state_where_no_task_can_run_is_reported():
    # the race check runs in every state, also one where all tasks have finished (as the
    # reference's does, model.md §9): the reduced search, which fuses C's wait with its
    # trailing release, reached the race only there and missed it
    k, p, c = _wait_then_trailing_release()
    naive = check_kernel(k, reduce=False, symmetry=False)
    reduced = check_kernel(k)
    for r in (naive, reduced):
        assert codes(r.diagnostics) == ["TS802"]
        d = r.diagnostics[0]
        assert d.range.line == p.lines[("a", "producer_work")][0]
        assert related_lines(d) == [c.lines[("b", "wait")][0]]
        assert d.message.startswith("aliasing race: 'P' writes 'a' stage 0 while 'C' holds a waited stage "
                                    "of 'b' stage 0")
    # naive: the race shows right after the wait; the reduced search: the release ran in
    # one step with it; decided from the happens-before order (causal.py, the default):
    # the shortest run again, the naive search's
    searched = check_kernel(k, causal=False)
    assert [(s.task, s.step) for s in naive.diagnostics[0].trace][-1] == ("C", "ConsumerWait(b)")
    assert [(s.task, s.step) for s in searched.diagnostics[0].trace][-2:] == [
        ("C", "ConsumerWait(b)"), ("C", "ConsumerRelease(b)")]
    assert reduced.diagnostics[0].trace == naive.diagnostics[0].trace
