"""TS969: a barrier primitive's count that PTX rejects, in the kernel being built
(ts_lint.extract.tsapi._barrier_count_check)."""
from ts_lint.api import lint_source
from ts_lint.rules_lint import _BARRIER_OK

CALL = "    prims.barrier_cta_sync(1, thread_count=SYNC_THREADS)\n"


def _codes(src):
    return [(d.code, d.range.line) for d in lint_source(src, "k.py")]


def _line(src, text):
    return src[:src.index(text)].count("\n") + 1


def _with(call, threads="32"):
    return _BARRIER_OK.replace("SYNC_THREADS = 32\n", f"SYNC_THREADS = {threads}\n", 1).replace(CALL, call, 1)


def test_a_count_of_whole_warps_is_accepted():
    assert _codes(_with(CALL, "4 * 32")) == []


def test_a_count_that_is_not_whole_warps():
    src = _with(CALL, "4 * 32 + 1")
    assert _codes(src) == [("TS969", _line(src, CALL.strip()))]


def test_cute_arch_barrier_and_mbarrier_init():
    src = _with("    cute.arch.barrier(barrier_id=1, number_of_threads=SYNC_THREADS)\n", "48")
    assert _codes(src) == [("TS969", _line(src, "cute.arch.barrier("))]
    src = _with("    prims.mbarrier_init(None, SYNC_THREADS - 32)\n")
    assert _codes(src) == [("TS969", _line(src, "prims.mbarrier_init("))]
    assert _codes(_with("    prims.mbarrier_init(None, SYNC_THREADS)\n")) == []


def test_an_unknown_count_is_not_judged():
    src = _with("    prims.barrier_cta_sync(1, thread_count=out.shape[0] + 1)\n")
    assert _codes(src) == []


def test_a_count_in_a_branch_on_the_warp_is_judged():
    # `if task.is_selected():` and `if prims.elect_sync():` are run-time branches the DSL
    # compiles both ways: the call in them is built
    src = _with("    if task.is_selected():\n        if prims.elect_sync():\n"
                "            prims.mbarrier_init(None, SYNC_THREADS - 32)\n")
    assert _codes(src) == [("TS969", _line(src, "prims.mbarrier_init("))]
