"""Single-path runs are walked without compiling Ops (linear.py); the walk must return
exactly what the search returns for them: the same states count, complete state and
shortest complete run, and every finding and limit must still come from the search.

Random kernels: chains of pipelines (no aliasing) with one or several producers and
consumers per pipeline, unpipelined work, guards, loops, one-task kernels with
PDL barriers, persistent kernels with skipped tiles (2, 3 and "auto" tiles); every kernel
is checked with the walk and with every run searched.
"""
import contextlib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kbuild import CONSUMER_OPS, PRODUCER_OPS, KernelBuilder, guarded, pair, sides
from test_reduction import kernels as mixed_kernels
from test_single_task import one_task_kernels
from ts_runtime.checker import check_kernel
from ts_runtime.checker.compile import CompileContext
from ts_runtime.checker.expand import variants
from ts_runtime.checker.linear import LinearContext, walk_run
from ts_runtime.enums import PipelineType

TYPES = [PipelineType.AsyncAsync, PipelineType.AsyncUmma, PipelineType.UmmaAsync, PipelineType.TmaUmma]


@st.composite
def chain_kernels(draw):
    """Pipelines p0..pk with a producer and a consumer task each (sometimes a second
    consumer, sometimes one task on both sides); protocol mistakes (a dropped or moved
    op) now and then."""
    kb = KernelBuilder()
    n_pipes = draw(st.integers(1, 3))
    pipes = [kb.pipe(f"p{i}", stages=draw(st.integers(1, 3)), ptype=draw(st.sampled_from(TYPES)))
             for i in range(n_pipes)]
    plain = kb.plain("u")
    n_tasks = draw(st.integers(2, 4))
    roles = {}
    for p in pipes:
        prod = draw(st.integers(0, n_tasks - 1))
        cons = draw(st.integers(0, n_tasks - 1))
        roles.setdefault(prod, []).append((p, "P"))
        roles.setdefault(cons, []).append((p, "C"))
        if draw(st.integers(0, 5)) == 0:
            roles.setdefault(draw(st.integers(0, n_tasks - 1)), []).append((p, "C"))
    for ti in range(n_tasks):
        mine = roles.get(ti, [])
        src, dst = sides(mine)
        seqs = []
        for p, r in mine:
            seq = [(p, o) for o in (PRODUCER_OPS if r == "P" else CONSUMER_OPS)]
            if draw(st.integers(0, 7)) == 0:
                op = seq.pop(draw(st.integers(0, len(seq) - 1)))
                if draw(st.booleans()):
                    seq.insert(draw(st.integers(0, len(seq))), op)
            seqs.append(seq)
        flat = []
        while any(seqs):
            k = draw(st.integers(0, len(seqs) - 1))
            if seqs[k]:
                flat.append(seqs[k].pop(0))
        if draw(st.booleans()):
            flat.insert(draw(st.integers(0, len(flat))), (plain, "producer_work"))
            dst.append(plain)
        guard = draw(st.sampled_from([None, "first", "last"])) if flat else None
        with kb.task(f"T{ti}", src=src, dst=dst) as t:
            with t.loop(draw(st.integers(0, 4))):
                guarded(t, flat, guard)
    return kb.build()


def summary(result):
    runs = [(r.states, r.complete_states, r.hit_limit, r.timed_out, r.complete_path, r.complete_state,
             r.complete_no, [(f.kind, f.key, f.path, f.state) for f in r.findings]) for r in result.runs]
    diags = [(d.code, d.message, d.range.line, [x.range.line for x in d.related],
              [(s.task, s.step, s.range.line) for s in d.trace]) for d in result.diagnostics]
    reports = result.report
    return result.states_explored, result.complete, result.skipped, runs, diags, reports


def same(k, **kw):
    # aliased runs are left to the search on both sides (test_causal.py compares those)
    walked = check_kernel(k, causal=False, **kw)
    searched = check_kernel(k, linear=False, causal=False, **kw)
    assert summary(walked) == summary(searched)
    return walked


SETTINGS = dict(max_examples=200, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example])


@settings(**SETTINGS)
@given(chain_kernels(), st.booleans(), st.sampled_from([None, 3, 10]))
def test_walk_matches_search_on_chains(k, witness, cap):
    same(k, witness=witness, max_states=cap)


@settings(**SETTINGS)
@given(mixed_kernels(), st.booleans())
def test_walk_matches_search_on_mixed_kernels(k, witness):
    same(k, witness=witness, max_findings=10**6)


@settings(**SETTINGS)
@given(one_task_kernels(), st.booleans(), st.sampled_from([None, 2, 6]))
def test_walk_matches_search_on_one_task(k, witness, cap):
    same(k, witness=witness, max_states=cap)


def _walks(k):
    ctx = CompileContext(k)
    lin = LinearContext(ctx)
    return [walk_run(lin, v, 1, 10**6, None, True) if lin.ok else None for v in variants(k)]


def test_a_producer_consumer_pair_is_walked_and_its_ops_made_on_use():
    k = pair(stages=2, n=3)[0].build()
    run, = _walks(k)
    assert run is not None
    assert run.program._ops is None          # nothing compiled by the walk
    assert [len(o) for o in run.program.ops] == [15, 9]     # the unpipelined read is two steps
    result = same(k, witness=True)
    assert result.runs[0].states == run.states
    assert "COMPLETE" in result.report


def two_consumers(rounds: int = 2):
    """A producer of two items and two consumers of one pipeline, `rounds` items each."""
    kb = KernelBuilder()
    p = kb.pipe("p", stages=2)
    with kb.task("P", dst=[p]) as t:
        with t.loop(2):
            t.ops(p, "acquire", "producer_work", "commit")
    for name in ("C0", "C1"):
        with kb.task(name, src=[p]) as t:
            with t.loop(rounds):
                t.ops(p, "wait", "consumer_work", "release")
    return kb.build()


def test_two_consumers_of_one_pool_are_searched():
    """Both consumers wait on the same full pool: the wait of one can disable the other's,
    so the run is not one path."""
    assert _walks(two_consumers()) == [None]


def test_a_deadlock_is_reported_by_the_search():
    k = pair(stages=2, n=3, release=False)[0].build()
    assert _walks(k) == [None]
    result = same(k)
    assert result.codes == ["TS801"]


@st.composite
def persistent_kernels(draw):
    """A producer and a consumer of one or two pipelines inside a work-tile loop, with a
    `skip_if`, parts of the per-tile list marked skippable (or not, a skipped-tile
    defect), and the queue's own ops in every task's per-tile tail."""
    kb = KernelBuilder()
    wq = kb.work_queue()
    pipes = [kb.pipe(f"p{i}", stages=draw(st.integers(1, 3)), ptype=draw(st.sampled_from(TYPES)))
             for i in range(draw(st.integers(1, 2)))]
    skip = draw(st.booleans())
    for name, side in (("Prod", "P"), ("Cons", "C")):
        ops = [(p, o) for p in pipes for o in (PRODUCER_OPS if side == "P" else CONSUMER_OPS)]
        cut = draw(st.integers(0, len(ops)))          # ops[cut:] run outside skippable()
        src, dst = ([wq], pipes) if side == "P" else ([wq] + pipes, [])
        with kb.task(name, src=src, dst=dst) as t:
            with t.work_tiles(wq, skip=skip):
                with t.skippable() if skip else contextlib.nullcontext():
                    with t.loop(draw(st.integers(0, 3))):
                        guarded(t, ops[:cut], draw(st.sampled_from([None, "first", "last"])))
                guarded(t, ops[cut:])
                t.ops(wq, "try_wait", "wait", "get_and_advance_work_tile", "release")
    return kb.build()


@settings(**SETTINGS)
@given(persistent_kernels(), st.sampled_from([2, 3, "auto"]), st.booleans())
def test_walk_matches_search_on_persistent_kernels(k, tiles, witness):
    same(k, tiles=tiles, witness=witness)
