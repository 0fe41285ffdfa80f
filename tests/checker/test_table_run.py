"""A single-path run that the schedule-table simulation already ran to its end is decided
from that run (checker/table.py, docs/checker.md §4): the result must be exactly the
walk's and the search's (states, complete state, diagnostics, report), and every kernel
the argument does not cover (a deadlock, two tasks on one role, lists the table expands
otherwise, a witness to record) must be left to the walk or the search.

Random kernels as in test_linear.py (chains of pipelines with protocol mistakes, mixed
kernels, persistent kernels), each simulated first as a TaskManager does, then checked
with the table's run, with the walk, and with every run searched.
"""
import contextlib

import pytest

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ts_runtime.checker as checker
from kbuild import KernelBuilder, consumer, pair, producer
from test_linear import chain_kernels, persistent_kernels, summary, two_consumers
from test_reduction import kernels as mixed_kernels
from test_variants import lane_kernel, pdl_kernel
from ts_runtime.checker import check_kernel
from ts_runtime.checker.table import TableProgram
from ts_runtime.model.values import RUNTIME
from ts_runtime.rules.simulation import simulate_table

SETTINGS = dict(max_examples=200, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example])


@contextlib.contextmanager
def table_runs():
    """Records, per check, whether table.table_check decided a run."""
    used = []
    original = checker.table_check

    def spy(*args, **kwargs):
        got = original(*args, **kwargs)
        used.append(got is not None)
        return got

    checker.table_check = spy
    try:
        yield used
    finally:
        checker.table_check = original


def one_pipeline(producer, *consumers):
    """A kernel of one two-stage pipeline `p`: a producer and consumers given as (task name,
    whether the task lists `p`, items)."""
    kb = KernelBuilder()
    p = kb.pipe("p", stages=2)
    for (name, lists, items), side in [(producer, "P")] + [(c, "C") for c in consumers]:
        ops = ("acquire", "producer_work", "commit") if side == "P" else ("wait", "consumer_work", "release")
        listed = {("dst" if side == "P" else "src"): [p]} if lists else {}
        with kb.task(name, **listed) as t:
            with t.loop(items):
                t.ops(p, *ops)
    return kb.build()


def check_three_ways(k, **kw):
    """(the check with the table's run, whether table_check decided a run)."""
    simulate_table(k)
    with table_runs() as used:
        table = check_kernel(k, **kw)
    walked = check_kernel(k, table=False, **kw)
    searched = check_kernel(k, linear=False, table=False, **kw)
    assert summary(table) == summary(walked) == summary(searched)
    return table, any(used)


# (aliased runs are decided by causal.py on every side; test_causal.py compares those)
@settings(**SETTINGS)
@given(chain_kernels(), st.booleans(), st.sampled_from([None, 3, 10]))
def test_the_table_run_matches_the_walk_and_the_search_on_chains(k, witness, cap):
    result, used = check_three_ways(k, witness=witness, max_states=cap, causal=False)
    if used:
        assert not witness and result.codes == []


@settings(**SETTINGS)
@given(mixed_kernels())
def test_the_table_run_matches_the_walk_and_the_search_on_mixed_kernels(k):
    check_three_ways(k, witness=False, causal=False, max_findings=10**6)


@settings(**dict(SETTINGS, max_examples=60))
@given(persistent_kernels())
def test_persistent_kernels_are_not_taken_from_the_table(k):
    _, used = check_three_ways(k, witness=False, causal=False)
    assert not used            # the table runs one work tile, the checker two


def test_a_producer_consumer_pair_is_decided_from_the_table():
    k = pair(stages=2, n=3)[0].build()
    simulate_table(k)
    with table_runs() as used:
        run, = check_kernel(k, witness=False).runs
    assert used == [True]
    # neither walked nor compiled: the Program's CompileContext is made on first read
    assert isinstance(run.program, TableProgram) and "credits" not in vars(run.program)
    assert run.states == 8 and run.complete_states == 1
    assert run.program.layout.tasks == 2 and run.program._ops is None
    walked, = check_kernel(k, witness=False, table=False).runs
    assert [[op.label for op in ops] for ops in run.program.ops] == \
        [[op.label for op in ops] for ops in walked.program.ops]
    assert check_three_ways(k, witness=False)[1]


def test_a_witness_is_walked():
    k = pair(stages=2, n=3)[0].build()
    result, used = check_three_ways(k, witness=True)
    assert not used
    assert result.runs[0].complete_path is not None


def test_without_the_simulation_the_run_is_walked():
    k = pair(stages=2, n=3)[0].build()
    with table_runs() as used:
        result = check_kernel(k, witness=False)
    assert used == [False] and result.states_explored == 8


def test_a_deadlock_is_reported_by_the_search():
    k = pair(stages=2, n=3, release=False)[0].build()
    sim = simulate_table(k)
    assert sim.blocked and sim.credits.complete_run is None
    result, used = check_three_ways(k, witness=False)
    assert not used and result.codes == ["TS801"]


def test_two_tasks_waiting_on_one_pipeline_are_not_taken_from_the_table():
    """Two consumers of one pool: the table's round robin completes, but its run is one
    of several (a wait of one consumer can disable the other's), so it decides nothing."""
    k = two_consumers(rounds=1)
    assert simulate_table(k).credits.complete_run is not None
    _, used = check_three_ways(k, witness=False)
    assert not used


def test_a_run_whose_loop_count_the_table_guesses_is_walked():
    """A loop bound known only at run time: the table expands the reference's fallback
    count (one iteration from 3), the checker its own (none); the table's complete run
    is not of the checker's lists."""
    kb = KernelBuilder()
    p = kb.pipe("p", stages=2)
    with kb.task("P", dst=[p]) as t:
        with t.loop(3, RUNTIME):
            t.ops(p, "acquire", "producer_work", "commit")
    with kb.task("C", src=[p]) as t:
        with t.loop(3, RUNTIME):
            t.ops(p, "wait", "consumer_work", "release")
    k = kb.build()
    sim = simulate_table(k)
    assert sim.credits.complete_run is not None and len(sim.lists[0]) == 3
    result, used = check_three_ways(k, witness=False)
    assert not used and result.states_explored == 1


def test_a_second_task_on_a_role_it_does_not_list_is_not_taken_from_the_table():
    """C1 waits on and releases `p` without listing it: the table counts two waiting
    tasks (one shared round), the checker one listing task, so their credit effects
    differ and the table's run is not one of the checker's."""
    k = one_pipeline(("P", True, 2), ("C0", True, 1), ("C1", False, 1))
    simulate_table(k)
    _, used = check_three_ways(k, witness=False)
    assert not used


def test_a_strided_pipeline_is_not_taken_from_the_table():
    """A consumer stepping two stages per wait (stride 2, no domain lane): the checker's
    credit rows are not the plain ones the argument needs, so the run is left to the
    search, although the table's round robin completes. With a domain lane of stride 2
    and one consumer, the table blocks and the checker finds the deadlock."""
    kb = KernelBuilder()
    buf = kb.pipe("buf", stages=2, strides=(1, 1, 2, 2))
    producer(kb, "Prod", buf, 4)
    with kb.task("C0", src=[buf]) as c0:
        with c0.loop(0, 4):
            c0.ops(buf, "wait", "consumer_work", "release")
    k = kb.build()
    assert simulate_table(k).credits.complete_run is not None
    assert not check_three_ways(k, witness=False)[1]
    k = lane_kernel(both_lanes=False).build()
    assert simulate_table(k).credits.complete_run is None
    result, used = check_three_ways(k, witness=False)
    assert not used and result.codes == ["TS801"]


def test_a_pipeline_no_task_lists_is_left_to_the_search():
    """Both tasks step on `buf` without listing it in src / dst: the walk has no rows
    for it (linear.py, `_resource`), and the run goes to the search, not to the table."""
    k = one_pipeline(("P", False, 3), ("C", False, 3))
    assert simulate_table(k).credits.complete_run is not None
    result, used = check_three_ways(k, witness=False)
    assert not used and result.codes == []


@pytest.mark.parametrize("side", ["dst", "src"])
def test_a_second_task_listing_a_role_it_does_not_perform_is_not_taken_from_the_table(side):
    """Two tasks list `p` on one side (in dst, or in src), only one of them steps on it:
    the checker counts two listing participants (its shared rounds of two: the other side
    waits forever), the table one performer (its round robin completes). The table's run
    is not the checker's."""
    kb = KernelBuilder()
    p = kb.pipe("p", stages=2)
    producer(kb, "P", p, 6)
    with kb.task("X", **{side: [p]}) as t:
        with t.loop(1):
            t.op(kb.plain("x"), "consumer_work")
    consumer(kb, "C", p, 6)
    k = kb.build()
    assert simulate_table(k).credits.complete_run is not None
    result, used = check_three_ways(k, witness=False)
    assert not used and result.codes == ["TS801"]


def test_an_opaque_guard_is_not_taken_from_the_table():
    """The consumer releases only under an opaque condition: the table takes it True and
    completes; with it False the producer's third acquire never gets a stage (TS805)."""
    kb = KernelBuilder()
    p = kb.pipe("p", stages=2)
    producer(kb, "P", p, 3)
    with kb.task("C", src=[p]) as t:
        with t.loop(3):
            t.ops(p, "wait", "consumer_work")
            with t.when("cond"):
                t.op(p, "release")
    k = kb.build()
    assert simulate_table(k).credits.complete_run is not None
    result, used = check_three_ways(k, witness=False)
    assert not used and result.codes == ["TS805"]


def test_a_pipeline_group_is_not_taken_from_the_table():
    """A consumer releasing a Merge group of two pipelines: one participant per member,
    but the group's release moves several pools at once, which the argument does not
    cover."""
    kb = KernelBuilder()
    a, b = kb.pipe("a", stages=2), kb.pipe("b", stages=2)
    g = kb.group("ab", [a, b])
    producer(kb, "PA", a, 2)
    producer(kb, "PB", b, 2)
    with kb.task("C", src=[a, b]) as t:
        with t.loop(2):
            t.op(a, "wait")
            t.op(b, "wait")
            t.op(a, "consumer_work")
            t.op(b, "consumer_work")
            t.op(g, "release")
    k = kb.build()
    assert simulate_table(k).credits.complete_run is not None
    result, used = check_three_ways(k, witness=False)
    assert not used and result.codes == []


def test_two_identical_tasks_are_left_to_the_search():
    """Two copies of one task (the same source lines): the search may canonicalise their
    states (reduce.symmetry_classes), so the table's count is not taken."""
    kb, _, _ = pair(stages=2, n=2)
    with kb.task("W", src=[]) as w:
        with w.loop(1):
            w.op(kb.plain("x"), "consumer_work")
            w.op(kb.plain("y"), "consumer_work")
    kb.copy_task("W2", kb.tasks[-1])
    k = kb.build()
    assert simulate_table(k).credits.complete_run is not None
    result, used = check_three_ways(k, witness=False)
    assert not used and result.codes == []


def test_a_skipped_tile_is_never_taken_from_the_table():
    """table_check on a kernel whose producer has a `skip_if` (its skipped-tile runs are
    other lists): None, whatever the caller's own test of persistence."""
    from ts_runtime.checker.table import table_check
    kb = KernelBuilder()
    wq = kb.work_queue()
    p = kb.pipe("p", stages=2)
    with kb.task("Prod", src=[wq], dst=[p]) as t:
        with t.work_tiles(wq, skip=True):
            with t.skippable():
                with t.loop(2):
                    t.ops(p, "acquire", "producer_work", "commit")
            t.ops(wq, "try_wait", "wait", "get_and_advance_work_tile", "release")
    consumer(kb, "Cons", p, 2)
    k = kb.build()
    assert simulate_table(k).credits.complete_run is not None
    assert table_check(k, 10**6, []) is None


def test_a_pdl_barrier_is_not_taken_from_the_table():
    """Mma launches the dependent grid in its head, Load waits for the primary one in
    its own: the table's round robin completes, but in the run where Mma goes first the
    launch comes before any wait (TS803), which the table's one interleaving never shows."""
    kb, _, _ = pdl_kernel()
    k = kb.build()
    assert simulate_table(k).credits.complete_run is not None
    result, used = check_three_ways(k, witness=False)
    assert not used and result.codes == ["TS803"]
