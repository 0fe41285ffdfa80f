"""Kernels with nothing to explore (checker `_nothing_to_explore`, docs/checker.md §3):
no pipelined, grouped or PDL resource and no aliased SMEM/TMEM. The check returns at
once with the naive search's verdict; anything that could block, race or launch early
still goes to the search."""
from kbuild import KernelBuilder, codes
from ts_runtime.checker import check_kernel


def copy_kernel(a_smem=None, b_smem=None, tasks=2):
    """`tasks` tasks that read `a` and write `b` in a loop (plain resources)."""
    kb = KernelBuilder()
    a = kb.plain("a", smem=a_smem)
    b = kb.plain("b", smem=b_smem)
    for i in range(tasks):
        with kb.task(f"T{i}", src=[a], dst=[b]) as t:
            with t.loop(4):
                t.op(a, "consumer_work")
                t.op(b, "producer_work")
    return kb


def test_unsynchronised_tasks_on_disjoint_memory_are_not_explored():
    k = copy_kernel(a_smem=[(0, 128)], b_smem=[(128, 128)]).build()
    r = check_kernel(k)
    assert (r.diagnostics, r.complete, r.states_explored, r.runs) == ([], True, 0, [])
    assert r.trivial.startswith("no pipelined, grouped or PDL resource")
    assert r.report.startswith("Exhaustive interleaving checker: nothing to explore (no pipelined")
    naive = check_kernel(k, reduce=False)
    assert naive.diagnostics == [] and naive.complete and naive.trivial is None
    # unpipelined work is two steps: (4 iterations x 4 steps + 1)^2 cursor pairs
    assert naive.states_explored == 289


def test_aliased_memory_is_explored():
    r = check_kernel(copy_kernel(a_smem=[(0, 128)], b_smem=[(64, 128)]).build())
    assert r.trivial is None and r.states_explored > 0
    assert codes(r.diagnostics) == ["TS802"]


def test_a_pdl_launch_is_explored():
    kb = KernelBuilder()
    launch = kb.pdl_launch()
    with kb.task("T", dst=[launch]) as t:
        with t.loop(1):
            t.op(launch, "producer_work")
    r = check_kernel(kb.build())
    assert r.trivial is None and codes(r.diagnostics) == ["TS803"]


def test_a_pipeline_is_explored():
    kb = KernelBuilder()
    buf = kb.pipe("buf", stages=1)
    with kb.task("T", dst=[buf]) as t:     # acquires twice, never released: blocks
        with t.loop(1):
            t.ops(buf, "acquire", "producer_work", "commit", "acquire")
    r = check_kernel(kb.build())
    assert r.trivial is None and codes(r.diagnostics) == ["TS801"]


def test_an_unknown_loop_count_is_left_to_the_search():
    from ts_runtime.model import UNKNOWN
    kb = copy_kernel()
    k = kb.build()
    k.tasks[0].lowered.domain_end = UNKNOWN
    r = check_kernel(k)
    assert r.trivial is None and r.skipped.startswith("task 'T0'") and not r.complete
