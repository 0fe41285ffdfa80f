"""The visited set must key on the full state, not on the cursor vector (docs/checker.md §2)."""
import importlib

from kbuild import KernelBuilder, codes
from ts_runtime.checker import check_kernel

explore_mod = importlib.import_module("ts_runtime.checker.explore")


def co_producers():
    """P1 and P2 share the rounds of r; Q writes x (aliasing r) after C signalled c."""
    kb = KernelBuilder()
    r = kb.pipe("r", stages=2, smem=[(0, 64)])
    x = kb.plain("x", smem=[(0, 64)])
    c = kb.pipe("c", stages=1)
    lines = {}
    for name in ("P1", "P2"):
        with kb.task(name, dst=[r]) as t:
            with t.loop(2):
                t.ops(r, "acquire", "producer_work", "commit")
        lines[name] = t.lines[("r", "producer_work")][0]
    with kb.task("C", src=[r], dst=[c]) as t:
        with t.loop(2):
            t.ops(r, "wait", "consumer_work", "release")
        t.ops(c, "acquire", "producer_work", "commit")
    with kb.task("Q", src=[c], dst=[x]) as t:
        with t.loop(1):
            t.ops(c, "wait", "release")
            lines["Q"] = t.op(x, "producer_work")
    return kb.build(), lines


def test_full_state_key_finds_what_a_cursor_key_misses(monkeypatch):
    k, lines = co_producers()
    full = check_kernel(k, reduce=False, symmetry=False)
    assert codes(full.diagnostics) == ["TS802"]
    d = full.diagnostics[0]
    assert d.range.line == lines["P1"] and [x.range.line for x in d.related] == [lines["Q"]]
    assert full.states_explored == 177
    # the same search keyed on cursors only (the reference's visited set)
    import ts_runtime.checker as checker
    orig = explore_mod.explore
    monkeypatch.setattr(checker, "explore", lambda prog, **kw: orig(prog, cursor_keyed=True, **kw))
    cursors = check_kernel(k, reduce=False, symmetry=False)
    assert cursors.states_explored == 125
    assert cursors.diagnostics == []
    # the reductions keep the finding
    monkeypatch.setattr(checker, "explore", orig)
    assert codes(check_kernel(k).diagnostics) == ["TS802"]
