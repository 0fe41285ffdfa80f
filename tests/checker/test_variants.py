"""PDL order (TS803), skipped tiles (TS804), opaque conditions (TS805), groups, lanes."""
from kbuild import KernelBuilder, codes, consumer, finding, producer, related_lines
from ts_runtime.checker import check_kernel
from ts_runtime.enums import PipelineGroupMode


# ----------------------------------------------------------------------------- PDL
def pdl_kernel(launch_after_wait_in_same_task=False, **opts):
    kb = KernelBuilder(**opts)
    wait, launch = kb.pdl_wait(), kb.pdl_launch()
    buf = kb.pipe("buf", stages=1)
    with kb.task("Load", src=[wait], dst=[buf]) as ld:
        ld.op(wait, "consumer_work")                   # wait_griddep
        with ld.loop(2):
            ld.ops(buf, "acquire", "producer_work", "commit")
        if launch_after_wait_in_same_task:
            ld.op(launch, "producer_work")
    with kb.task("Mma", src=[buf], dst=[launch]) as mma:
        if not launch_after_wait_in_same_task:
            mma.op(launch, "producer_work")            # launch_griddep in the head
        with mma.loop(2):
            mma.ops(buf, "wait", "consumer_work", "release")
    return kb, ld, mma


def test_launch_before_wait():
    kb, ld, mma = pdl_kernel()
    r = check_kernel(kb.build())
    assert codes(r.diagnostics) == ["TS803"]
    d = r.diagnostics[0]
    assert d.range.line == mma.lines[("pdl_launch", "producer_work")][0]
    assert d.trace == ()          # enabled in the initial state
    assert "before any PdlWaitBarrier.wait_griddep has executed" in d.message


def test_assume_pdl_wait_completed():
    kb, _, _ = pdl_kernel(assume_pdl_wait_completed=True)
    assert check_kernel(kb.build()).diagnostics == []


def test_launch_after_wait():
    kb, _, _ = pdl_kernel(launch_after_wait_in_same_task=True)
    assert check_kernel(kb.build()).diagnostics == []


def test_launch_ordered_after_wait_through_a_pipeline():
    kb = KernelBuilder()
    wait, launch = kb.pdl_wait(), kb.pdl_launch()
    buf = kb.pipe("buf", stages=1)
    with kb.task("Load", src=[wait], dst=[buf]) as ld:
        with ld.loop(1):
            ld.op(wait, "consumer_work")
            ld.ops(buf, "acquire", "producer_work", "commit")
    with kb.task("Mma", src=[buf], dst=[launch]) as mma:
        with mma.loop(1):
            mma.ops(buf, "wait", "consumer_work", "release")
            mma.op(launch, "producer_work")
    assert check_kernel(kb.build(), reduce=False).diagnostics == []
    assert check_kernel(kb.build()).diagnostics == []


# ----------------------------------------------------------------------------- skipped tiles
def skip_kernel(consumer_tail_skippable=False):
    kb = KernelBuilder()
    wq = kb.work_queue()
    buf = kb.pipe("buf", stages=2)

    def wq_tail(t):
        t.ops(wq, "try_wait", "wait", "get_and_advance_work_tile", "release")

    with kb.task("Prod", src=[wq], dst=[buf]) as p:
        with p.work_tiles(wq, skip=True):
            with p.skippable():
                with p.loop(2):
                    p.ops(buf, "acquire", "producer_work", "commit")
                p.ops(buf, "acquire", "producer_work", "commit")
            wq_tail(p)
    with kb.task("Cons", src=[wq, buf]) as c:
        with c.work_tiles(wq, skip=True):
            with c.skippable():
                with c.loop(2):
                    c.ops(buf, "wait", "consumer_work", "release")
            if consumer_tail_skippable:
                with c.skippable():
                    c.ops(buf, "wait", "consumer_work", "release")
            else:
                c.ops(buf, "wait", "consumer_work", "release")
            wq_tail(c)
    return kb, p, c


def test_skipped_tile_deadlock():
    kb, p, c = skip_kernel()
    r = check_kernel(kb.build())
    assert codes(r.diagnostics) == ["TS804"]
    d = r.diagnostics[0]
    assert d.range.line == c.lines[("buf", "wait")][1]        # the tail wait outside skippable()
    assert d.message.endswith("during skipped-tile execution")
    assert len(r.runs) == 4      # two tiles: normal, all skipped, and the two mixed patterns


def test_skipped_tile_balanced():
    kb, _, _ = skip_kernel(consumer_tail_skippable=True)
    r = check_kernel(kb.build())
    assert r.diagnostics == [] and r.complete


def test_reference_skip_patterns_only():
    kb, p, c = skip_kernel()
    r = check_kernel(kb.build(), mixed_skip=False)
    assert len(r.runs) == 2 and codes(r.diagnostics) == ["TS804"]


# ----------------------------------------------------------------------------- opaque
def opaque_kernel(consumer_guarded):
    kb = KernelBuilder()
    buf = kb.pipe("buf", stages=1)
    with kb.task("Prod", dst=[buf]) as p:
        with p.loop(2):
            with p.when("flag"):
                p.ops(buf, "acquire", "producer_work", "commit")
    with kb.task("Cons", src=[buf]) as c:
        with c.loop(2):
            if consumer_guarded:
                with c.when("flag"):
                    c.ops(buf, "wait", "consumer_work", "release")
            else:
                c.ops(buf, "wait", "consumer_work", "release")
    return kb, p, c


def test_opaque_condition_deadlock():
    kb, p, c = opaque_kernel(consumer_guarded=False)
    r = check_kernel(kb.build())
    assert codes(r.diagnostics) == ["TS805"]
    d = r.diagnostics[0]
    assert d.range.line == c.lines[("buf", "wait")][0]
    assert d.message.endswith("during opaque assignment 1/2 (flag=False)")


def test_shared_opaque_key_is_consistent():
    kb, _, _ = opaque_kernel(consumer_guarded=True)
    r = check_kernel(kb.build())
    assert r.diagnostics == [] and len(r.runs) == 2


def test_finding_under_every_assignment_keeps_its_code():
    kb = KernelBuilder()
    buf = kb.pipe("buf", stages=1)
    with kb.task("Prod", dst=[buf]) as p:
        with p.loop(2):
            p.ops(buf, "acquire", "producer_work", "commit")
            with p.when("flag"):
                p.op(buf, "producer_aux_work")
    consumer(kb, "Cons", buf, 2, release=False)
    r = check_kernel(kb.build())
    assert codes(r.diagnostics) == ["TS801"]
    assert "opaque" not in r.diagnostics[0].message


# ----------------------------------------------------------------------------- groups
def test_merge_group():
    for release in (True, False):
        kb = KernelBuilder()
        a, b = kb.pipe("a", stages=2), kb.pipe("b", stages=2)
        g = kb.group("ab", [a, b], PipelineGroupMode.Merge)
        producer(kb, "PA", a, 3)
        producer(kb, "PB", b, 3)
        with kb.task("C", src=[a, b]) as c:
            with c.loop(3):
                c.op(a, "wait", via_group=g)
                c.op(b, "wait", via_group=g)
                c.op(a, "consumer_work", via_group=g)
                if release:
                    c.op(g, "release")
        r = check_kernel(kb.build())
        assert codes(r.diagnostics) == ([] if release else ["TS801"])


def test_fork_group():
    kb = KernelBuilder()
    a, b = kb.pipe("a", stages=2), kb.pipe("b", stages=2)
    g = kb.group("ab", [a, b], PipelineGroupMode.Fork)
    with kb.task("P", dst=[a, b]) as p:
        with p.loop(3):
            p.op(a, "acquire", via_group=g)
            p.op(b, "acquire", via_group=g)
            p.op(a, "producer_work", via_group=g)
            p.op(g, "commit")
    consumer(kb, "CA", a, 3)
    consumer(kb, "CB", b, 3)
    r = check_kernel(kb.build())
    assert r.diagnostics == [] and r.complete


def test_fused_merge_group_needs_every_member_commit():
    for both in (True, False):
        kb = KernelBuilder()
        a, b = kb.pipe("a", stages=1), kb.pipe("b", stages=1)
        g = kb.group("ab", [a, b], PipelineGroupMode.FusedMerge)
        pa = producer(kb, "PA", a, 2)
        if both:
            producer(kb, "PB", b, 2)
        with kb.task("C", src=[a, b]) as c:
            with c.loop(2):
                w = c.op(g, "wait")
                c.op(a, "consumer_work", via_group=g)
                c.op(g, "release")
        r = check_kernel(kb.build())
        if both:
            assert r.diagnostics == []
        else:
            d = finding(r.diagnostics, "TS801")
            # PA filled its only stage and waits for a release that needs b's commit too
            assert d.range.line == pa.lines[("a", "acquire")][0]
            assert related_lines(d) == [w]


# ----------------------------------------------------------------------------- lanes
def lane_kernel(both_lanes=True):
    kb = KernelBuilder()
    buf = kb.pipe("buf", stages=2, strides=(1, 1, 2, 2))
    producer(kb, "Prod", buf, 4)
    with kb.task("C0", src=[buf]) as c0:
        with c0.loop(0, 4, 2):
            c0.ops(buf, "wait", "consumer_work", "release")
    if both_lanes:
        with kb.task("C1", src=[buf]) as c1:
            with c1.loop(1, 4, 2):
                c1.ops(buf, "wait", "consumer_work", "release")
    return kb


def test_domain_lanes_split_the_stages():
    r = check_kernel(lane_kernel().build())
    assert r.diagnostics == [] and r.complete
    prog = r.runs[0].program
    assert prog.credits.interleaved      # one pool per physical stage
    assert len(prog.credits.pools) == 4


def test_missing_lane_deadlocks():
    r = check_kernel(lane_kernel(both_lanes=False).build())
    assert codes(r.diagnostics) == ["TS801"]
    assert "stage 1" in r.diagnostics[0].message
