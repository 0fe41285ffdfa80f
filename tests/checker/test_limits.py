"""State cap and time limit (TS806), unknown values, fallback loop counts (TS814)."""
from kbuild import KernelBuilder, codes, consumer, pair, producer, table_diags
from ts_runtime.checker import check_kernel
from ts_runtime.diagnostics import Severity
from ts_runtime.model import RUNTIME, UNKNOWN, DynamicBound


def test_state_cap_is_a_warning_not_a_silent_accept():
    kb, _, _ = pair(stages=2, n=6)
    r = check_kernel(kb.build(), max_states=5, reduce=False)
    assert codes(r.diagnostics) == ["TS806"]
    d = r.diagnostics[0]
    assert d.severity is Severity.WARNING
    assert d.range.line == 1                  # the TaskManager(...) call of the kernel
    assert "incomplete" in d.message
    assert r.hit_limit and not r.complete


def test_state_cap_from_manager_options():
    kb, _, _ = pair(stages=2, n=6, max_states=5)
    r = check_kernel(kb.build(), reduce=False)
    assert codes(r.diagnostics) == ["TS806"]


def test_findings_before_the_cap_are_kept():
    kb, _, _ = pair(stages=1, n=4, release=False)
    r = check_kernel(kb.build(), max_states=40, reduce=False)
    assert "TS801" in codes(r.diagnostics)


def test_time_limit():
    kb = KernelBuilder()
    for i in range(4):
        buf = kb.pipe(f"b{i}", stages=2)
        producer(kb, f"P{i}", buf, 6)
        consumer(kb, f"C{i}", buf, 6)
    r = check_kernel(kb.build(), timeout=1e-4, reduce=False, symmetry=False)
    assert codes(r.diagnostics) == ["TS806"]
    assert "time limit" in r.diagnostics[0].message
    assert not r.complete


def test_unknown_stage_count_is_silent():
    kb, _, _ = pair(stages=2, n=3, release=False)
    k = kb.build()
    next(r for r in k.resources.values() if r.name == "buf").pipeline.num_stages = UNKNOWN
    r = check_kernel(k)
    assert r.diagnostics == [] and r.skipped and not r.complete
    assert table_diags(k) == []


def test_unknown_domain_is_silent():
    kb, _, _ = pair(stages=2, n=3, release=False)
    k = kb.build()
    k.tasks[1].lowered.domain_end = UNKNOWN
    assert check_kernel(k).diagnostics == []
    assert table_diags(k) == []


def test_runtime_domain_uses_the_fallback_and_says_so():
    # one iteration per task (fallback 1) and a consumer that releases nothing on a
    # 1-stage buffer: only the consumer's second wait would block, so no deadlock at n=1;
    # a 0-stage-left producer with 2 acquires per iteration blocks even at n=1.
    kb = KernelBuilder()
    buf = kb.pipe("buf", stages=1)
    with kb.task("Prod", dst=[buf]) as p:
        with p.loop(0, 8, 1):
            p.ops(buf, "acquire", "producer_work", "commit", "acquire", "producer_work", "commit")
    consumer(kb, "Cons", buf, 8, release=False)
    k = kb.build()
    for t in k.tasks:
        t.lowered.domain_end = RUNTIME
    r = check_kernel(k)
    assert codes(r.diagnostics) == ["TS801"]
    assert "is a fallback" in r.diagnostics[0].message
    assert all(c.n == 1 and not c.exact for c in r.runs[0].program.counts)
    t = table_diags(k)
    assert codes(t) == ["TS810"] and "FALSE POSITIVE" in t[0].message


def test_dynamic_domain_probe():
    kb, p, c = pair(stages=2, n=3)
    k = kb.build()
    for t in k.tasks:
        t.lowered.domain_end = DynamicBound("get_domain", "mod.T")
    # not probed (ts-lint): nothing depends on a guess
    r = check_kernel(k)
    assert r.skipped and r.diagnostics == [] and table_diags(k) == []
    # probed to an int: exact
    for t in k.tasks:
        t.lowered.domain_probe = 3
    k.__dict__.pop("_ts_table_sim", None)
    r = check_kernel(k)
    assert r.diagnostics == [] and r.complete and all(c.exact and c.n == 3 for c in r.runs[0].program.counts)
    assert table_diags(k) == []
    # probed to a traced value: TS814 warning at the domain_loop line, fallback counts
    for t in k.tasks:
        t.lowered.domain_probe = RUNTIME
    k.__dict__.pop("_ts_table_sim", None)
    t = table_diags(k)
    assert codes(t) == ["TS814", "TS814"]
    assert {d.range.line for d in t} == {x.lowered.domain_range.line for x in k.tasks}
    assert all(d.severity is Severity.WARNING for d in t)
