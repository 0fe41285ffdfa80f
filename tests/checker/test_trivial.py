"""Kernels with nothing to explore (checker `_nothing_to_explore`, docs/checker.md §3):
no pipelined or grouped resource, no aliased SMEM/TMEM, and no PDL launch that a task
can run before its own unguarded head wait. The check returns at once with the naive
search's verdict; anything that could block, race or launch early still goes to the
search."""
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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


def pdl_copy(wait_at="head", launch_at="tail", tasks=1, **options):
    """`tasks` tasks that copy `a` to `b` in a loop, with a PDL wait and launch placed
    at "head" / "tail" / "loop" (first / last iteration) / "guarded" (in the loop, under an
    opaque condition) / "head_first" (the launch only: before the wait) / None."""
    kb = KernelBuilder(**options)
    wait, launch = kb.pdl_wait(), kb.pdl_launch()
    a, b = kb.plain("a"), kb.plain("b")
    lines = []
    for i in range(tasks):
        with kb.task(f"T{i}", src=[wait, a], dst=[b, launch]) as t:
            if launch_at == "head_first":
                lines.append(t.op(launch, "producer_work"))
            if wait_at == "head":
                t.op(wait, "consumer_work")
            with t.loop(3):
                if wait_at == "guarded":
                    with t.when("ready"):
                        t.op(wait, "consumer_work")
                if wait_at == "loop":
                    with t.first():
                        t.op(wait, "consumer_work")
                t.op(a, "consumer_work")
                t.op(b, "producer_work")
                if launch_at == "loop":
                    with t.last():
                        lines.append(t.op(launch, "producer_work"))
            if launch_at == "tail":
                lines.append(t.op(launch, "producer_work"))
    return kb.build(), lines


def test_a_launch_after_an_unguarded_head_wait_is_not_explored():
    for tasks in (1, 3):
        for launch_at in ("tail", "loop"):
            k, _ = pdl_copy(launch_at=launch_at, tasks=tasks)
            r = check_kernel(k)
            assert (r.diagnostics, r.complete, r.states_explored, r.runs) == ([], True, 0, [])
            assert r.trivial.startswith("no pipelined or grouped resource and no aliased SMEM/TMEM, and every task")
            naive = check_kernel(k, reduce=False)
            assert naive.diagnostics == [] and naive.complete and naive.states_explored > 0


def test_a_launch_the_head_wait_may_not_precede_is_explored():
    # a launch before the wait, a wait under an opaque condition, a wait in the loop
    k, lines = pdl_copy(launch_at="head_first")
    r = check_kernel(k)
    assert r.trivial is None and [(d.code, d.range.line) for d in r.diagnostics] == [("TS803", lines[0])]
    k, lines = pdl_copy(wait_at="guarded", tasks=2)
    r = check_kernel(k)
    assert r.trivial is None and codes(r.diagnostics) == ["TS805", "TS805"]
    assert sorted(d.range.line for d in r.diagnostics) == lines
    k, lines = pdl_copy(wait_at="loop")
    r = check_kernel(k)
    assert r.trivial is None and r.states_explored > 0 and r.diagnostics == []
    k, lines = pdl_copy(wait_at=None, launch_at="loop")
    assert codes(check_kernel(k).diagnostics) == ["TS803"]


def test_assume_pdl_wait_completed_is_not_explored():
    k, _ = pdl_copy(launch_at="head_first", assume_pdl_wait_completed=True)
    r = check_kernel(k)
    assert r.diagnostics == [] and r.states_explored == 0
    assert r.trivial.endswith("assume_pdl_wait_completed=True: no step can block or race, and a launch "
                              "cannot run before a wait")


PLACES = ["head", "loop", "loop_first", "loop_last", "loop_guarded", "tail"]


@st.composite
def pdl_kernels(draw):
    """1-3 tasks with unpipelined work and PDL waits / launches anywhere, guarded or not."""
    kb = KernelBuilder(assume_pdl_wait_completed=draw(st.integers(0, 7)) == 0)
    wait, launch = kb.pdl_wait(), kb.pdl_launch()
    a = kb.plain("a", smem=draw(st.sampled_from([None, [(0, 64)]])))
    for i in range(draw(st.integers(1, 3))):
        steps = [(a, "consumer_work")] * draw(st.integers(0, 2))
        for res, op in [(wait, "consumer_work")] * draw(st.integers(0, 2)) + \
                [(launch, "producer_work")] * draw(st.integers(0, 2)):
            steps.insert(draw(st.integers(0, len(steps))), (res, op, draw(st.sampled_from(PLACES))))
        with kb.task(f"T{i}", src=[wait, a], dst=[launch]) as t:
            def put(section):
                for step in steps:
                    place = step[2] if len(step) == 3 else "loop"
                    if not place.startswith(section):
                        continue
                    if place.endswith("guarded"):
                        with t.when(f"c{i}"):
                            t.op(step[0], step[1])
                    elif place in ("loop_first", "loop_last"):
                        with (t.first() if place == "loop_first" else t.last()):
                            t.op(step[0], step[1])
                    else:
                        t.op(step[0], step[1])
            put("head")
            with t.loop(draw(st.integers(0, 2))):
                put("loop")
            put("tail")
    return kb.build()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pdl_kernels())
def test_skipping_pdl_only_kernels_agrees_with_the_naive_search(k):
    naive = check_kernel(k, reduce=False, symmetry=False, max_findings=10**6)
    reduced = check_kernel(k, max_findings=10**6)
    assert naive.complete and reduced.complete

    def keys(r):
        return sorted((d.code, d.range.line) for d in r.diagnostics)

    assert keys(reduced) == keys(naive)
    if reduced.trivial:
        assert naive.diagnostics == [] and reduced.states_explored == 0


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
