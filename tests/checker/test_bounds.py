"""The tile-count cutoff of persistent kernels (bounds.py, docs/checker.md §6)."""
from kbuild import KernelBuilder, codes
from ts_runtime.checker import check_kernel
from ts_runtime.checker.bounds import tile_bound


def persistent_pair(stages=2, n=2, releases=1, consumers=1):
    kb = KernelBuilder()
    wq = kb.work_queue()
    buf = kb.pipe("buf", stages=stages)

    def tail(t):
        t.ops(wq, "try_wait", "wait", "get_and_advance_work_tile", "release")

    with kb.task("Prod", src=[wq], dst=[buf]) as p:
        with p.work_tiles(wq):
            with p.loop(n):
                p.ops(buf, "acquire", "producer_work", "commit")
            tail(p)
    for c_i in range(consumers):
        with kb.task(f"Cons{c_i}", src=[wq, buf]) as c:
            with c.work_tiles(wq):
                with c.loop(n):
                    c.ops(buf, "wait", "consumer_work")
                    if releases:
                        c.op(buf, "release")
                tail(c)
    return kb.build()


def test_bound_of_a_persistent_pair():
    b = tile_bound(persistent_pair(stages=2, n=2))
    # the producer leads by at most floor(2 / 2) + 1 = 2 tiles, the consumer by 1
    assert (b.skew, b.period, b.margin, b.tiles) == (2, 1, 1, 5)
    r = check_kernel(persistent_pair(stages=2, n=2), tiles="auto")
    assert r.diagnostics == [] and r.complete
    assert sorted({run.program.tiles for run in r.runs}) == [1, 2, 3, 4, 5]


def test_deeper_pipeline_allows_more_skew():
    assert tile_bound(persistent_pair(stages=4, n=1)).skew == 5


def test_unbalanced_tile_has_no_bound():
    k = persistent_pair(releases=0)
    b = tile_bound(k)
    assert b.tiles is None and "not balanced per tile" in b.reason
    r = check_kernel(k, tiles="auto")
    # checked with 2 tiles as the reference does, and says that this proves nothing more
    assert "TS806" in codes(r.diagnostics) and not r.complete


def test_shared_rounds_have_no_bound():
    b = tile_bound(persistent_pair(consumers=2))
    assert b.tiles is None and "share a barrier round" in b.reason


def test_missing_release_found_with_more_tiles():
    # 2 stages, one un-released stage per tile: two tiles fit, the third deadlocks
    k = persistent_pair(stages=2, n=1, releases=0)
    assert check_kernel(k).diagnostics == []               # the reference's two tiles
    assert codes(check_kernel(k, tiles=3).diagnostics) == ["TS801"]
