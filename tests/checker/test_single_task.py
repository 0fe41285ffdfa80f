"""One-task runs are searched by a walk along their single path (explore._explore_one);
it must visit and report exactly what the general BFS does step by step (no macro-steps),
on random one-task kernels
(pipelines the task both fills and drains, in random orders; PDL barriers; guards; state
caps that cut the walk short)."""
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kbuild import KernelBuilder, guarded
from ts_runtime.checker.expand import variants
from ts_runtime.checker.explore import explore
from ts_runtime.checker.compile import CompileContext, compile_program
from ts_runtime.enums import PipelineType

TYPES = [PipelineType.AsyncAsync, PipelineType.AsyncUmma, PipelineType.UmmaAsync, PipelineType.TmaUmma]
OPS = ["acquire", "producer_work", "commit", "wait", "consumer_work", "release"]


@st.composite
def one_task_kernels(draw):
    kb = KernelBuilder()
    pipes = [kb.pipe(f"p{i}", stages=draw(st.integers(1, 3)), ptype=draw(st.sampled_from(TYPES)),
                     smem=draw(st.sampled_from([None, [(0, 128)]])))
             for i in range(draw(st.integers(1, 2)))]
    plain = kb.plain("u", smem=[(0, 64)])
    pdl = draw(st.booleans())
    wait = kb.pdl_wait() if pdl else None
    launch = kb.pdl_launch() if pdl else None
    flat = []
    for p in pipes:
        seq = [(p, o) for o in OPS]
        if draw(st.integers(0, 3)) == 0:      # a protocol mistake: drop or move one op
            k = draw(st.integers(0, len(seq) - 1))
            op = seq.pop(k)
            if draw(st.booleans()):
                seq.insert(draw(st.integers(0, len(seq))), op)
        flat.extend(seq)
    if draw(st.booleans()):
        flat.insert(draw(st.integers(0, len(flat))), (plain, "producer_work"))
    head, tail = [], []
    if pdl:
        (head if draw(st.booleans()) else tail).append((launch, "producer_work"))
        head.insert(draw(st.integers(0, len(head))), (wait, "consumer_work"))
    guard = draw(st.sampled_from([None, "first", "last"]))
    with kb.task("T", src=pipes + [plain] + ([wait] if pdl else []),
                 dst=pipes + [plain] + ([launch] if pdl else [])) as t:
        for res, o in head:
            t.op(res, o)
        with t.loop(draw(st.integers(0, 4))):
            guarded(t, flat, guard)
        for res, o in tail:
            t.op(res, o)
    return kb.build()


def summary(run):
    return (run.states, run.complete_states, run.hit_limit, run.timed_out, run.complete_path,
            run.complete_state, run.complete_no,
            [(f.kind, f.key, f.state, f.path, f.tasks, f.detail, f.state_no) for f in run.findings])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(one_task_kernels(), st.sampled_from([1_000_000, 1, 2, 5]), st.booleans())
def test_walk_matches_bfs(k, max_states, early_exit):
    ctx = CompileContext(k)
    for v in variants(k, tiles=1):
        prog = compile_program(k, v, 1, ctx)
        assert prog.layout.tasks == 1
        walked = explore(prog, max_states=max_states, early_exit=early_exit)
        searched = explore(prog, max_states=max_states, early_exit=early_exit, walk=False, macro=False)
        assert summary(walked) == summary(searched)
