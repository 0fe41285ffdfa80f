"""Compilation shared across the runs of one check, and the interned held state of the search.

`check_kernel` compiles every run through one `CompileContext`: kernel-level facts once,
a task whose list is the same in two runs once, equal steps as one Op. That must give
exactly the ops a fresh compilation of each run gives. The search stores an interned id
for the held tuple; findings and the printout must show the held entries themselves.
"""
from kbuild import KernelBuilder
from test_races import two_pairs
from test_variants import opaque_kernel, skip_kernel
from ts_runtime.checker import check_kernel
from ts_runtime.checker.expand import variants
from ts_runtime.checker.program import CompileContext, compile_program


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
