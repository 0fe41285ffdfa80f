"""Compilation shared across the runs of one check, and the interned held state of the search.

`check_kernel` compiles every run through one `CompileContext`: kernel-level facts once,
a task whose list is the same in two runs once, equal steps as one Op. That must give
exactly the ops a fresh compilation of each run gives. The search stores an interned id
for the held tuple; findings and the printout must show the held entries themselves.
"""
from kbuild import CONSUMER_OPS, PRODUCER_OPS, KernelBuilder, guarded, sides
from test_races import two_pairs
from test_variants import opaque_kernel, skip_kernel
from ts_runtime.checker import check_kernel
from ts_runtime.checker.expand import variants
from ts_runtime.checker.compile import CompileContext, compile_program


def _fields(op):
    return (op.label, op.block, op.moves, op.held, op.pdl, op.pending, op.dmask, op.slot, op.eidx,
            op.range, op.bidx, op.effect, op.pend)


def _same_ops(k, tiles):
    ctx = CompileContext(k)
    for v in variants(k, tiles=tiles):
        shared = compile_program(k, v, tiles, ctx)
        fresh = compile_program(k, v, tiles)
        assert [[_fields(op) for op in t] for t in shared.ops] == [[_fields(op) for op in t] for t in fresh.ops]
        assert shared.has_pdl_launch == fresh.has_pdl_launch
        assert shared.layout.pools == fresh.layout.pools


def test_shared_context_compiles_like_a_fresh_one():
    _same_ops(skip_kernel(True)[0].build(), 2)      # four skip patterns, one task list per pattern
    _same_ops(opaque_kernel(True)[0].build(), 1)    # two opaque assignments
    _same_ops(two_pairs()[0].build(), 1)            # aliasing, split unpipelined work


def test_unchanged_task_lists_are_compiled_once():
    k = opaque_kernel(consumer_guarded=False)[0].build()
    ctx = CompileContext(k)
    progs = [compile_program(k, v, 1, ctx) for v in variants(k)]
    assert len(progs) == 2
    # the consumer has no opaque guard: the same ops list in both runs
    assert progs[0].ops[1] is progs[1].ops[1]
    assert progs[0].ops[0] is not progs[1].ops[0]


def test_equal_steps_share_one_op():
    kb = KernelBuilder()
    buf = kb.pipe("buf", stages=1)
    with kb.task("P", dst=[buf]) as t:
        with t.loop(4):
            t.ops(buf, "acquire", "producer_work", "commit")
    with kb.task("C", src=[buf]) as t:
        with t.loop(4):
            t.ops(buf, "wait", "consumer_work", "release")
    k = kb.build()
    prog = compile_program(k, variants(k)[0], 1)
    assert len(prog.ops[0]) == 12 and len({id(op) for op in prog.ops[0]}) == 3


def test_findings_carry_the_held_entries():
    r = check_kernel(two_pairs()[0].build())
    run = r.runs[0]
    f = run.findings[0]
    held = f.state[run.program.layout.held_idx]
    assert isinstance(held, tuple) and held       # the entries, not the search's interned id
    assert "held={" in r.report


# ------------------------------------------------------------------ long loops
# Unguarded loops of `_REPEAT_MIN` or more iterations are compiled until the pipeline
# cursors repeat, and the cycle's Ops are copied for the rest (CompileContext._repeat).
# Compiling every iteration step by step must give the same Ops, and the same check.
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from ts_runtime.checker import compile as _program  # noqa: E402
from ts_runtime.enums import PipelineType  # noqa: E402

_TYPES = [PipelineType.AsyncAsync, PipelineType.AsyncUmma, PipelineType.UmmaAsync, PipelineType.TmaUmma]


@st.composite
def long_loop_kernels(draw):
    kb = KernelBuilder()
    pipes = [kb.pipe(f"p{i}", stages=draw(st.integers(1, 4)), ptype=draw(st.sampled_from(_TYPES)),
                     smem=draw(st.sampled_from([None, [(0, 128)], [(64, 128)]])))
             for i in range(draw(st.integers(1, 3)))]
    n = draw(st.integers(_program._REPEAT_MIN, 20))
    n_tasks = draw(st.integers(2, 3))
    roles = {}
    for p in pipes:
        prod = draw(st.integers(0, n_tasks - 1))
        cons = draw(st.integers(0, n_tasks - 1).filter(lambda c: c != prod))
        roles.setdefault(prod, []).append((p, "P"))
        roles.setdefault(cons, []).append((p, "C"))
    for ti in range(n_tasks):
        mine = roles.get(ti, [])
        src, dst = sides(mine)
        flat = []
        for p, r in mine:
            seq = list(PRODUCER_OPS if r == "P" else CONSUMER_OPS)
            if draw(st.integers(0, 5)) == 0:
                seq.insert(1, seq[1])          # a second work call on one stage
            flat.extend((p, o) for o in seq)
        guard = draw(st.sampled_from([None, None, "first", "last"])) if flat else None
        with kb.task(f"T{ti}", src=src, dst=dst) as t:
            with t.loop(draw(st.sampled_from([n, n + 1]))):
                guarded(t, flat, guard)
    if draw(st.integers(0, 3)) == 0:
        # a task with only unpipelined work: every iteration's Ops are the first one's
        u = kb.plain("u")
        with kb.task("U", dst=[u]) as t:
            with t.loop(n):
                t.op(u, "producer_work")
    return kb.build()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(long_loop_kernels())
def test_long_loops_compile_like_step_by_step(k):
    # the search itself is compared on kernels of up to three tasks (a fourth long loop
    # multiplies the interleavings); the Ops on all of them
    search = len(k.tasks) <= 3
    fast = [[_fields(op) for op in t] for t in compile_program(k, variants(k)[0], 1).ops]
    fast_check = check_kernel(k) if search else None
    saved = _program._REPEAT_MIN
    _program._REPEAT_MIN = 10 ** 9
    try:
        slow = [[_fields(op) for op in t] for t in compile_program(k, variants(k)[0], 1).ops]
        slow_check = check_kernel(k) if search else None
    finally:
        _program._REPEAT_MIN = saved
    assert fast == slow
    if not search:
        return
    assert fast_check.states_explored == slow_check.states_explored
    assert [(d.code, d.message, d.range) for d in fast_check.diagnostics] == \
        [(d.code, d.message, d.range) for d in slow_check.diagnostics]
