"""Aliased runs decided by one walk's happens-before order (causal.py) get the search's
verdict: whenever `causal_run` answers, the search of the same run finds no race and
no deadlock, completes, and ends in the same complete state; and checks with and
without it report the same diagnostics (every finding still comes from the search).

Random kernels: GEMM-like chains of pipelines of every kind (a task drains one pipeline
and fills the next, as a mainloop and an epilogue do) whose buffers may alias, with
protocol mistakes now and then; persistent Load -> Mma -> Epi -> Store kernels (2 and 3
work tiles, skipped tiles, DMA pipelines with their completion waits); and the reduction
test's mixed kernels.
"""
import contextlib

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from kbuild import KernelBuilder, codes, consumer, producer
from test_races import dma_chain, two_pairs
from test_reduction import kernels as mixed_kernels
from ts_runtime.checker import check_kernel
from ts_runtime.checker.causal import causal_run
from ts_runtime.checker.compile import CompileContext, compile_program
from ts_runtime.checker.expand import variants
from ts_runtime.checker.explore import explore, replay
from ts_runtime.checker.state import PROD_HELD, race_overlap
from ts_runtime.enums import PipelineType

AA, AU, UA, TU, UU = (PipelineType.AsyncAsync, PipelineType.AsyncUmma, PipelineType.UmmaAsync,
                      PipelineType.TmaUmma, PipelineType.UmmaUmma)
SETTINGS = dict(max_examples=200, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example])


@st.composite
def aliased_chains(draw):
    """p0 -> T1 -> p1 -> ... -> pk: task 0 fills p0; task j drains p(j-1) (its mainloop)
    and fills pj, inside the loop or after it (the tail); the last task drains pk. Buffers sit at
    offsets that often overlap."""
    kb = KernelBuilder()
    n_pipes = draw(st.integers(2, 3))
    pipes = []
    for i in range(n_pipes):
        smem = draw(st.sampled_from([None, [(0, 128)], [(64, 128)], [(0, 256)], [(512, 64)]]))
        pipes.append(kb.pipe(f"p{i}", stages=draw(st.integers(1, 3)), smem=smem,
                             ptype=draw(st.sampled_from([AA, AU, UA, TU, UU]))))
    counts = [draw(st.integers(1, 4)) for _ in pipes]
    mistakes = draw(st.integers(0, 3)) == 0

    def seq(p, ops):
        out = [(p, o) for o in ops]
        if mistakes and draw(st.integers(0, 2)) == 0:
            op = out.pop(draw(st.integers(0, len(out) - 1)))
            if draw(st.booleans()):
                out.insert(draw(st.integers(0, len(out))), op)
        return out

    with kb.task("T0", dst=[pipes[0]]) as t:
        with t.loop(counts[0]):
            for res, o in seq(pipes[0], ("acquire", "producer_work", "commit")):
                t.op(res, o)
    for j in range(1, n_pipes + 1):
        src = pipes[j - 1]
        dst = pipes[j] if j < n_pipes else None
        inside = dst is not None and counts[j] == counts[j - 1] and draw(st.booleans())
        with kb.task(f"T{j}", src=[src], dst=[dst] if dst is not None else []) as t:
            with t.loop(counts[j - 1]):
                for res, o in seq(src, ("wait", "consumer_work", "release")):
                    t.op(res, o)
                if inside:
                    for res, o in seq(dst, ("acquire", "producer_work", "commit")):
                        t.op(res, o)
            if dst is not None and not inside:
                # the epilogue: after the mainloop, in the schedule's tail
                for _ in range(counts[j]):
                    for res, o in seq(dst, ("acquire", "producer_work", "commit")):
                        t.op(res, o)
    return kb.build()


def programs(k, tiles=1):
    ctx = CompileContext(k)
    return [compile_program(k, v, tiles, ctx) for v in variants(k, tiles=tiles)]


def races_at(prog, state) -> set:
    """The race keys of a state (held tuple in place): explore's race scan, written out
    again from model.md §9 (held entries but acquired ones, and the pending accesses of
    the tasks at a work step)."""
    lay = prog.layout
    items = [(e[0], e[1], e[2], e[3], e[6]) for e in state[lay.held_idx] if e[2] != PROD_HELD]
    for i, tops in enumerate(prog.ops):
        c = state[i]
        if c < len(tops) and tops[c].pend is not None:
            p = tops[c].pend
            items.append((p[0], p[1], p[2], i, p[3]))
    return {("race", frozenset({(x[3], x[4], x[0], x[2]), (y[3], y[4], y[0], y[2])}))
            for n, x in enumerate(items) for y in items[n + 1:] if race_overlap(prog.alias, x, y) is not None}


def runs_path(prog, path) -> bool:
    """Whether `path` ((task, position) steps) is a run of the program: each task's steps
    in order, each one enabled (its pool holds a credit) in the state the steps before it
    reach (explore.replay)."""
    for k, (i, c) in enumerate(path):
        s = replay(prog, path[:k])
        op = prog.ops[i][c]
        if s[i] != c or (op.bidx >= 0 and s[op.bidx] <= 0):
            return False
    return True


def agrees(k, note=None, tiles=None):
    """causal_run's answers against the full search, run by run; then whole checks, with
    and without it. Returns how many runs causal_run decided race-free (`note`:
    hypothesis.event, to count its answers)."""
    answered = predicted = decided_racy = 0
    for prog, witness in ((p, w) for p in programs(k, 1 if tiles is None else tiles) for w in (True, False)):
        # (without a witness, the accesses that can race with nothing are not followed)
        got = causal_run(prog, 1_000_000, None, witness)
        if got is None:
            continue
        searched = explore(prog, symmetry=False, max_findings=10**6)
        if isinstance(got, frozenset):
            # every race the search finds is predicted, and nothing else is found
            predicted += 1
            assert searched.finished and got
            assert {f.key for f in searched.findings} <= got
            assert all(f.kind == "race" for f in searched.findings)
            continue
        if got.findings:
            # races decided without the search: exactly the races the search finds, each
            # with a shortest counterexample (as deep as the unreduced search meets it
            # first), a run of the program that ends in a state with that race
            decided_racy += 1
            naive = explore(prog, reduce=False, symmetry=False, max_findings=10**6)
            assert searched.finished and naive.finished
            keys = {f.key for f in got.findings}
            assert keys == {f.key for f in searched.findings} == {f.key for f in naive.findings}
            assert len(keys) == len(got.findings) and all(f.kind == "race" for f in got.findings)
            depth = {f.key: len(f.path) for f in naive.findings}
            for f in got.findings:
                assert len(f.path) == depth[f.key]
                assert runs_path(prog, f.path)
                assert f.key in races_at(prog, f.state)
            continue
        answered += 1
        assert searched.finished and not searched.findings and searched.complete_states >= 1
        assert got.complete_states == 1
        if witness:
            assert got.complete_state == searched.complete_state
            assert got.states <= len(got.complete_path) + 1
            assert sorted(got.complete_path) == sorted((i, c) for i, tops in enumerate(prog.ops)
                                                       for c in range(len(tops)))
        else:
            assert got.complete_path is None and got.complete_state is None
    if note is not None:
        note(f"runs decided race-free by causal_run: {'some' if answered else 'none'}")
        note(f"runs with races decided by causal_run: {'some' if decided_racy else 'none'}")
        note(f"runs with races left to the search by causal_run: {'some' if predicted else 'none'}")
    with_it = check_kernel(k, max_findings=10**6, tiles=tiles)
    without = check_kernel(k, causal=False, max_findings=10**6, tiles=tiles)
    assert with_it.complete == without.complete
    # a walk follows one path of the reduced graph (its macro-steps), and a search with
    # expected races stops early: never more states than the search (a race decided
    # without the search counts the walk's states, which the search, stopping at each race,
    # may not all visit)
    if not with_it.diagnostics:
        assert with_it.states_explored <= without.states_explored

    def diags(r, trace=True):
        return [(d.code, d.message, d.range.line, [x.range.line for x in d.related],
                 [(s.task, s.step, s.range.line) for s in d.trace] if trace else None) for d in r.diagnostics]
    # the same diagnostics; a race decided without the search has a counterexample no
    # longer than the reduced search's (which is shortest in the reduced graph)
    assert diags(with_it, False) == diags(without, False)
    assert all(len(a.trace) <= len(b.trace) for a, b in zip(with_it.diagnostics, without.diagnostics))
    # stopping at the first finding: the same first finding
    first = check_kernel(k, early_exit=True, tiles=tiles)
    assert diags(first) == diags(check_kernel(k, early_exit=True, causal=False, tiles=tiles))
    return answered


@settings(**SETTINGS)
@given(aliased_chains())
def test_causal_matches_search_on_aliased_chains(k):
    agrees(k, event)


@settings(**SETTINGS)
@given(mixed_kernels())
def test_causal_matches_search_on_mixed_kernels(k):
    agrees(k, event)


def persistent_chain(a_stages, a_type, acc_stages, acc_type, c_smem, skip=False, k_tiles=1, epi_in_loop=False):
    """Load -> a -> Mma -> acc -> Epi -> c -> Store inside a work-tile loop (tail: the
    queue's ops), a over SMEM [0, 256), c at `c_smem`; with a `skip_if` when `skip`."""
    kb = KernelBuilder()
    wq = kb.work_queue()
    a = kb.pipe("a", stages=a_stages, ptype=a_type, smem=[(0, 256)])
    acc = kb.pipe("acc", stages=acc_stages, ptype=acc_type)
    c = kb.pipe("c", stages=1, smem=c_smem)
    plan = [("Load", [wq], [a], [(a, ("acquire", "producer_work", "commit"))], True),
            ("Mma", [wq, a], [acc], [(a, ("wait", "consumer_work", "release"))], True),
            ("Epi", [wq, acc], [c], [(acc, ("wait", "release")), (c, ("acquire", "producer_work", "commit"))],
             False),
            ("Store", [wq, c], [], [(c, ("wait", "consumer_work", "release"))], False)]
    for name, src, dst, body, mainloop in plan:
        with kb.task(name, src=src, dst=dst) as t:
            with t.work_tiles(wq, skip=skip):
                with t.skippable() if skip else contextlib.nullcontext():
                    if name == "Mma":
                        t.ops(acc, "acquire")
                    with t.loop(k_tiles if mainloop else 1):
                        for res, ops in body:
                            if mainloop or epi_in_loop:
                                t.ops(res, *ops)
                    if not mainloop and not epi_in_loop:
                        for res, ops in body:
                            t.ops(res, *ops)
                    if name == "Mma":
                        t.ops(acc, "producer_work", "commit")
                t.ops(wq, "try_wait", "wait", "get_and_advance_work_tile", "release")
    return kb.build()


@st.composite
def persistent_chains(draw):
    """`persistent_chain`, c aliasing a or not, with a `skip_if` now and then; the
    pipelines' types drawn (the DMA ones with their completion waits)."""
    return persistent_chain(draw(st.integers(1, 3)), draw(st.sampled_from([AA, AU, TU])),
                            draw(st.integers(1, 2)), draw(st.sampled_from([AA, UA, UU])),
                            draw(st.sampled_from([[(0, 128)], [(128, 256)], [(512, 64)]])),
                            skip=draw(st.booleans()), k_tiles=draw(st.integers(1, 3)),
                            epi_in_loop=draw(st.booleans()))


@settings(**SETTINGS)
@given(persistent_chains(), st.sampled_from([2, 3]))
def test_causal_matches_search_on_persistent_chains(k, tiles):
    agrees(k, event, tiles)


@pytest.mark.parametrize("a_type, acc", [(AU, UA), (TU, UU)])
def test_a_dma_read_tagged_after_its_stage_is_reacquired_in_the_walk(a_type, acc):
    # 2 work tiles, a of 2 stages, c over a's first half: the walk's Load re-acquires a
    # stage of a (dropping Mma's DMA read of it) before Mma's completion commit tags that
    # read. In other runs the tag comes first and Epi's completion wait drops the read
    # earlier: the tagged read is followed too, so that the races are decided, each at
    # the unreduced search's depth (without it, a pair of the walk's lives passes the
    # test in a state where the read is already gone, and the run went to the search)
    k = persistent_chain(2, a_type, 1, acc, [(0, 128)], k_tiles=2)
    (prog,) = programs(k, 2)
    got = causal_run(prog, 1_000_000, None, False)
    assert got.findings
    naive = explore(prog, reduce=False, symmetry=False, max_findings=10**6)
    depth = {f.key: len(f.path) for f in naive.findings}
    assert {f.key for f in got.findings} == set(depth)
    assert all(len(f.path) == depth[f.key] and runs_path(prog, f.path) and f.key in races_at(prog, f.state)
               for f in got.findings)
    agrees(k, tiles=2)


def _dma_chain(a_type, acc):
    """P1 -> a (2 stages, 3 tiles) -> T2 -> acc -> T3 -> b -> T4, with b aliasing a."""
    return dma_chain(a_type, acc, stages=2, n=3)[0].build()


@pytest.mark.parametrize("a_type, acc, walked, searched", [(AA, AA, 23, 35), (AU, UA, 21, 29), (TU, UU, 21, 29)])
def test_an_ordered_epilogue_over_the_mainloop_is_decided_by_one_walk(a_type, acc, walked, searched):
    # the epilogue's buffer b aliases the mainloop's a; the accumulator pipeline orders
    # b's write after every read of a (a completion wait for the DMA consumers)
    k = _dma_chain(a_type, acc)
    (prog,) = programs(k)
    got = causal_run(prog, 1_000_000, None, True)
    assert got is not None and got.complete_states == 1
    # the walk's states: one per transition (a step and the trailing steps after it, as
    # the search counts them), the initial one included; the search visits more, as it
    # interleaves every access both ways
    assert got.states == walked
    # the complete run lists every step: P1 9, T2 12, T3 5, T4 3
    assert [len(tops) for tops in prog.ops] == [9, 12, 5, 3] and len(got.complete_path) == 29
    r = check_kernel(k)
    assert r.complete and r.diagnostics == [] and r.states_explored == walked
    assert check_kernel(k, causal=False).states_explored == searched
    assert agrees(k) == 2       # decided with and without a witness


def test_the_races_of_one_happens_before_order_are_decided_without_the_search():
    # two producer/consumer pairs on overlapping buffers (test_races.two_pairs): the five
    # racing pairs the full search finds (183 states), each at the depth the unreduced
    # search first meets it (the reduced search meets four of them two steps later)
    kb, _ = two_pairs()
    k = kb.build()
    (prog,) = programs(k)
    got = causal_run(prog, 1_000_000, None, True)
    full = explore(prog)
    naive = explore(prog, reduce=False, symmetry=False)
    assert [len(f.path) for f in full.findings] == [6, 11, 11, 11, 11] and full.states == 183
    assert [len(f.path) for f in naive.findings] == [6, 9, 9, 9, 9]
    assert {f.key for f in got.findings} == {f.key for f in full.findings} == {f.key for f in naive.findings}
    assert [len(f.path) for f in got.findings] == [6, 9, 9, 9, 9]
    for f in got.findings:
        assert runs_path(prog, f.path) and f.key in races_at(prog, f.state)
    # the walk's states are counted
    r = check_kernel(k)
    assert r.states_explored == got.states == 23
    plain = check_kernel(k, causal=False)
    assert plain.states_explored == 183
    # the same diagnostic; its counterexample as short as the search's, the same steps in
    # the walk's order (PA's acquire before PB's work) where the search's BFS has PB first
    assert codes(r.diagnostics) == ["TS802"]
    assert [d.message for d in r.diagnostics] == [d.message for d in plain.diagnostics]
    mine, its = ([(s.task, s.step) for s in x.diagnostics[0].trace] for x in (r, plain))
    assert len(mine) == len(its) == 6 and sorted(mine) == sorted(its) and mine != its


def _overlapping(stages_a, tasks):
    """Pipelines a (`stages_a` stages) and b (one stage) on the same SMEM, with the tasks
    (role "P" | "C", name, "a" | "b", tiles) in that order."""
    kb = KernelBuilder()
    bufs = {"a": kb.pipe("a", stages=stages_a, smem=[(0, 256)]), "b": kb.pipe("b", stages=1, smem=[(0, 256)])}
    for role, name, buf, n in tasks:
        (producer if role == "P" else consumer)(kb, name, bufs[buf], n)
    return kb.build()


def test_with_early_exit_a_race_the_walk_meets_is_left_to_the_search():
    # PA fills a (one stage) and blocks on its second acquire; the walk then runs PB,
    # whose write of b (aliasing a) is pending while PA's write of a is unpublished
    k = _overlapping(1, [("P", "PA", "a", 2), ("P", "PB", "b", 2), ("C", "CA", "a", 2), ("C", "CB", "b", 2)])
    (prog,) = programs(k)
    assert causal_run(prog, 1_000_000, None, True).findings
    assert causal_run(prog, 1_000_000, None, True, early_exit=True) is None
    r = check_kernel(k, early_exit=True)
    assert codes(r.diagnostics) == ["TS802"]
    assert r.diagnostics[0].message == check_kernel(k, early_exit=True, causal=False).diagnostics[0].message


def test_a_dma_read_that_outlives_its_release_is_predicted():
    # an AsyncUmma read of a outlives its release, and nothing retires it before b's write
    k = _dma_chain(AU, AA)
    (prog,) = programs(k)
    got = causal_run(prog, 1_000_000, None, True)
    full = explore(prog)
    assert {f.key for f in got.findings} == {f.key for f in full.findings} and len(got.findings) == 1
    assert codes(check_kernel(k).diagnostics) == ["TS802"]


def test_two_givers_of_one_pool_are_left_to_the_search():
    # two producers fill one pipeline: which commit enables a wait depends on the order
    k = _overlapping(2, [("P", "P1", "a", 1), ("P", "P2", "a", 1), ("C", "C", "a", 2), ("P", "PB", "b", 1),
                         ("C", "CB", "b", 1)])
    (prog,) = programs(k)
    assert causal_run(prog, 1_000_000, None, True) is None


def test_a_drop_before_the_owner_reads_its_stage_is_left_to_the_search():
    # Mma commits acc between its wait on a and its work on a; the walk then runs Epi
    # (a lower index), whose completion wait drops Mma's tagged, not yet worked read of a.
    # In the other order Mma's work would rewrite that read first: the held map depends
    # on the order, so the run is searched
    kb = KernelBuilder()
    a = kb.pipe("a", stages=1, ptype=AU, smem=[(0, 256)])
    acc = kb.pipe("acc", stages=1, ptype=UA)
    c = kb.pipe("c", stages=1, smem=[(0, 256)])
    producer(kb, "P", a, 1)
    with kb.task("Epi", src=[acc]) as epi:
        with epi.loop(1):
            epi.ops(acc, "wait", "release")
    with kb.task("Mma", src=[a], dst=[acc]) as mma:
        with mma.loop(1):
            mma.ops(acc, "acquire")
            mma.ops(a, "wait")
            mma.ops(acc, "producer_work", "commit")
            mma.ops(a, "consumer_work", "release")
    producer(kb, "PC", c, 1)
    consumer(kb, "CC", c, 1)
    k = kb.build()
    (prog,) = programs(k)
    assert causal_run(prog, 1_000_000, None, True) is None
    agrees(k)


def test_the_state_cap_is_left_to_the_search():
    k = _dma_chain(AU, UA)
    (prog,) = programs(k)
    # 21 states walked: a cap of 20 is reached (the search then reports it), 21 is not
    assert causal_run(prog, 20, None, True) is None
    assert causal_run(prog, 21, None, True) is not None
    r = check_kernel(k, max_states=10)
    assert not r.complete and codes(r.diagnostics) == ["TS806"]


def _strict_superset_kernel():
    """Persistent Load -> a (AsyncUmma) -> Mma -> acc -> Epi -> c -> Store, 2 tiles, c over
    the first half of a: in tile 2 the Load's write of a can overlap Store's reads of c in
    the happens-before order, but every run that gets there passes another race first."""
    kb = KernelBuilder()
    wq = kb.work_queue()
    a = kb.pipe("a", stages=1, ptype=AU, smem=[(0, 256)])
    acc = kb.pipe("acc", stages=1, ptype=AA)
    c = kb.pipe("c", stages=1, smem=[(0, 128)])
    plan = [("Load", [wq], [a], [], [(a, ("acquire", "producer_work", "commit"))], []),
            ("Mma", [wq, a], [acc], [(acc, ("acquire",))], [(a, ("wait", "consumer_work", "release"))],
             [(acc, ("producer_work", "commit"))]),
            ("Epi", [wq, acc], [c], [], [], [(acc, ("wait", "release")), (c, ("acquire", "producer_work", "commit"))]),
            ("Store", [wq, c], [], [], [], [(c, ("wait", "consumer_work", "release"))])]
    for name, src, dst, head, body, tail in plan:
        with kb.task(name, src=src, dst=dst) as t:
            with t.work_tiles(wq):
                for res, ops in head:
                    t.ops(res, *ops)
                with t.loop(1):
                    for res, ops in body:
                        t.ops(res, *ops)
                for res, ops in tail:
                    t.ops(res, *ops)
                t.ops(wq, "try_wait", "wait", "get_and_advance_work_tile", "release")
    return kb.build()


def test_predicted_races_the_search_never_reaches_leave_the_search_to_its_end():
    # the walk's keys are a superset of the search's: two of its five pairs (Load's write
    # of a against Store's wait and read of c) are reachable only past another race, where
    # the search does not go; the search then runs to its end, with the same diagnostics
    k = _strict_superset_kernel()
    (prog,) = programs(k, 2)
    got = causal_run(prog, 1_000_000, None, True)
    found = {f.key for f in explore(prog, symmetry=False, max_findings=10**6).findings}
    assert isinstance(got, frozenset) and len(got) == 5 and len(found) == 3 and found < got
    assert {tuple(sorted((t, acc) for t, _e, _r, acc in key[1])) for key in got - found} == {((0, 1), (3, 3)),
                                                                                           ((0, 1), (3, 4))}
    assert check_kernel(k, tiles=2).states_explored == check_kernel(k, tiles=2, causal=False).states_explored
    assert agrees(k, tiles=2) == 0
