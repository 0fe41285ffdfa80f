"""Producer/consumer pairs: complete runs, deadlocks, leftover credits (TS801, TS810-TS813)."""
import pytest

from kbuild import KernelBuilder, codes, consumer, finding, pair, producer, related_lines, table_diags
from ts_runtime.checker import check_kernel
from ts_runtime.diagnostics import Severity
from ts_runtime.enums import PipelineGroupMode


@pytest.mark.parametrize("stages,n", [(1, 1), (1, 3), (2, 3), (3, 5), (4, 8)])
def test_balanced_pair_is_safe(stages, n):
    kb, _, _ = pair(stages=stages, n=n)
    k = kb.build()
    r = check_kernel(k)
    assert r.diagnostics == [] and r.complete and not r.hit_limit
    assert table_diags(k) == []
    assert r.runs[0].complete_states == 1


def test_missing_release_deadlocks():
    kb, p, c = pair(stages=2, n=3, release=False)
    k = kb.build()
    r = check_kernel(k)
    d = finding(r.diagnostics, "TS801")
    assert codes(r.diagnostics) == ["TS801"]
    assert d.severity is Severity.ERROR
    # the blocked acquire of the producer, the consumer's blocked wait as related
    assert d.range.line == p.lines[("buf", "acquire")][0]
    assert related_lines(d) == [c.lines[("buf", "wait")][0]]
    assert "waiting for a release of 'buf'" in d.message
    # the counterexample: the producer fills both stages, the consumer takes both, and
    # then each side waits for the other
    steps = [(s.task, s.step) for s in d.trace]
    assert steps.count(("Prod", "ProducerCommit(buf)")) == 2
    assert steps.count(("Cons", "ConsumerWait(buf)")) == 2
    assert all(s.range.path == "kernel.py" for s in d.trace)
    # the deterministic table simulation blocks at the same calls, and points at the cause:
    # the consumer reads 'buf' but never releases it (its last read is where release goes)
    t = finding(table_diags(k), "TS810")
    assert t.range.line == c.lines[("buf", "consumer_work")][-1]
    assert related_lines(t) == [p.lines[("buf", "acquire")][0], c.lines[("buf", "wait")][0]]
    assert "cause: 'Cons' has unpaired brackets on 'buf' (too few ConsumerRelease)" in t.message


def test_missing_release_without_wraparound_is_leftover_acquire():
    # 2 iterations on 4 stages: nothing blocks, but two stages are never released
    kb, p, c = pair(stages=4, n=2, release=False)
    k = kb.build()
    assert check_kernel(k).diagnostics == []
    diags = table_diags(k)
    assert codes(diags) == ["TS812"]
    d = diags[0]
    # the consumer's last read of 'buf': the release belongs after it
    assert d.range.line == c.lines[("buf", "consumer_work")][-1]
    assert d.message.startswith("2x ProducerAcquire from buf not matched by ConsumerRelease!")
    assert related_lines(d) == [c.lines[("buf", "wait")][0]]


def test_extra_commit_is_leftover_commit():
    kb, p, c = pair(stages=2, n=2, extra_commit=True)
    k = kb.build()
    assert check_kernel(k).diagnostics == []
    diags = table_diags(k)
    assert codes(diags) == ["TS811"]
    d = diags[0]
    assert d.message.startswith("2x ProducerCommit from buf not consumed!")
    assert d.range.line == p.lines[("buf", "commit")][1]     # the extra commit


def test_extra_release():
    kb = KernelBuilder()
    buf = kb.pipe("buf", stages=2)
    producer(kb, "Prod", buf, 2)
    with kb.task("Cons", src=[buf]) as c:
        with c.loop(2):
            c.ops(buf, "wait", "consumer_work", "release", "release")
    k = kb.build()
    diags = table_diags(k)
    assert codes(diags) == ["TS813"]
    assert diags[0].range.line == c.lines[("buf", "release")][1]


def test_cyclic_wait_deadlock_points_at_both_waits():
    kb = KernelBuilder()
    a, b = kb.pipe("a", stages=1), kb.pipe("b", stages=1)
    with kb.task("T0", src=[b], dst=[a]) as t0:
        with t0.loop(1):
            t0.ops(b, "wait", "consumer_work", "release")
            t0.ops(a, "acquire", "producer_work", "commit")
    with kb.task("T1", src=[a], dst=[b]) as t1:
        with t1.loop(1):
            t1.ops(a, "wait", "consumer_work", "release")
            t1.ops(b, "acquire", "producer_work", "commit")
    r = check_kernel(kb.build())
    d = finding(r.diagnostics, "TS801")
    assert d.range.line == t0.lines[("b", "wait")][0]
    assert related_lines(d) == [t1.lines[("a", "wait")][0]]
    assert d.trace == ()          # blocked from the start: the empty interleaving


def test_two_consumers_share_a_round():
    # two consumer tasks on one resource: a credit moves on every second event
    kb = KernelBuilder()
    buf = kb.pipe("buf", stages=2)
    producer(kb, "Prod", buf, 4)
    consumer(kb, "C0", buf, 4)
    consumer(kb, "C1", buf, 4)
    k = kb.build()
    r = check_kernel(k)
    assert r.diagnostics == [] and r.complete
    assert table_diags(k) == []


def test_the_complete_run_is_kept_for_the_verbose_report_only():
    kb, _, _ = pair(stages=2, n=3)
    k = kb.build()
    k.options.verbose = False
    quiet = check_kernel(k)
    assert quiet.runs[0].complete_states == 1 and quiet.runs[0].complete_path is None
    assert "COMPLETE" not in quiet.report
    k.options.verbose = True
    loud = check_kernel(k)
    assert loud.states_explored == quiet.states_explored
    path = loud.runs[0].complete_path
    assert path and sorted({t for t, _ in path}) == [0, 1] and "COMPLETE" in loud.report
    assert check_kernel(k, witness=False).runs[0].complete_path is None


def _chain_with_two_consumers():
    """Prod -> a -> Mid -> b -> C0, C1: single-participant rounds on `a`, shared rounds
    (two consumers: counters) on `b`. (kernel, a, b)."""
    kb = KernelBuilder()
    a, b = kb.pipe("a", stages=2), kb.pipe("b", stages=3)
    producer(kb, "Prod", a, 4)
    with kb.task("Mid", src=[a], dst=[b]) as t:
        with t.loop(4):
            t.ops(a, "wait", "consumer_work", "release")
            t.ops(b, "acquire", "producer_work", "commit")
    consumer(kb, "C0", b, 4)
    consumer(kb, "C1", b, 4)
    return kb.build(), a, b


def test_the_checker_copies_the_layout_the_table_rule_made():
    # TaskManager order: the schedule-table rule's CreditModel first, then the checker's,
    # which takes the pools, strides and listing counts from it instead of making them
    from dataclasses import replace
    from ts_runtime.checker.compile import CompileContext
    from ts_runtime.checker.credits import CreditModel, known_layout
    from ts_runtime.rules.simulation import simulate_table
    k, a, b = _chain_with_two_consumers()
    assert known_layout(k) is None
    table = simulate_table(k).credits
    assert known_layout(k) is table
    ctx = CompileContext(k)
    fresh = CreditModel(k, [[] for _ in k.tasks], mode="checker")
    assert [(p.credit_id, p.phys, p.kind, p.initial) for p in ctx.credits.pools] == \
        [(p.credit_id, p.phys, p.kind, p.initial) for p in fresh.pools]
    assert ctx.credits.pools is not table.pools and ctx.credits._listing == fresh._listing
    assert check_kernel(k).diagnostics == []
    # a task list that is not the one the layout was made from: made again
    k.tasks[0].lowered = replace(k.tasks[0].lowered)
    assert known_layout(k) is None


def test_the_common_case_gives_the_general_effect(monkeypatch):
    # CreditModel._plain (one pool, the listing's participants) against the general path
    # of _effect_of, on every pipeline op of a kernel with single and shared rounds
    from ts_runtime.checker.credits import ROLE, CreditModel
    k, a, b = _chain_with_two_consumers()
    ops = [(ti, rid, stage) for ti in range(len(k.tasks)) for rid in (a.rid, b.rid) for stage in ROLE]
    fast = CreditModel(k, [[] for _ in k.tasks])
    got = [fast.fixed_effect(*op) for op in ops]
    assert any(fast._plain(rid, stage) is not None for _, rid, stage in ops)
    monkeypatch.setattr(CreditModel, "_plain", lambda self, rid, stage: None)
    slow = CreditModel(k, [[] for _ in k.tasks])
    assert [slow.fixed_effect(*op) for op in ops] == got
    assert slow.counters == fast.counters


@pytest.mark.parametrize("mode", [PipelineGroupMode.Merge, PipelineGroupMode.FusedMerge])
def test_blocked_cause_counts_a_group_release_for_its_members(mode):
    # The MMA task waits on the members of an A|B group (or on the group) and releases
    # the group; its defect is a second acquire of the accumulator. The cause named is
    # the accumulator's unpaired acquire, not the members' releases (made by the group).
    kb = KernelBuilder()
    a, b, acc = kb.pipe("a", stages=2), kb.pipe("b", stages=2), kb.pipe("acc", stages=1)
    g = kb.group("ab", [a, b], mode)
    producer(kb, "PA", a, 3)
    producer(kb, "PB", b, 3)
    with kb.task("Mma", src=[a, b], dst=[acc]) as m:
        first, dup = m.ops(acc, "acquire", "acquire")
        with m.loop(3):
            if mode is PipelineGroupMode.Merge:
                m.op(a, "wait", via_group=g)
                m.op(b, "wait", via_group=g)
            else:
                m.op(g, "wait")
            m.op(a, "consumer_work", via_group=g)
            m.op(acc, "producer_work")
            m.op(g, "release")
        m.op(acc, "commit")
    consumer(kb, "Epi", acc, 1)
    t = finding(table_diags(kb.build()), "TS810")
    assert "cause: 'Mma' has unpaired brackets on 'acc' (too few ProducerCommit)" in t.message
    assert t.range.line == first
