"""The cyclic GC is paused only by a long search, and the check always leaves it as it
found it (explore._pause_gc / resume_gc)."""
import gc

import sys

import ts_runtime.checker  # noqa: F401  (the package binds the name `explore` to the function)
from kbuild import pair
from ts_runtime.checker import check_kernel

explore_mod = sys.modules["ts_runtime.checker.explore"]


def _kernel(n):
    kb, _, _ = pair(stages=2, n=n)
    return kb.build()


def test_a_short_search_leaves_the_collector_alone(monkeypatch):
    calls = []
    monkeypatch.setattr(gc, "disable", lambda: calls.append("disable"))
    r = check_kernel(_kernel(3))
    assert r.complete and r.states_explored < explore_mod._GC_PAUSE_AT and calls == []


def test_a_long_search_pauses_it_and_the_check_resumes_it(monkeypatch):
    monkeypatch.setattr(explore_mod, "_GC_PAUSE_AT", 256)
    seen = []
    real_disable = gc.disable
    monkeypatch.setattr(gc, "disable", lambda: (seen.append("disable"), real_disable()))
    assert gc.isenabled()
    r = check_kernel(_kernel(200), reduce=False)
    assert r.complete and r.states_explored >= 256
    assert seen == ["disable"] and gc.isenabled()


def test_a_collector_the_caller_disabled_stays_disabled(monkeypatch):
    monkeypatch.setattr(explore_mod, "_GC_PAUSE_AT", 256)
    gc.disable()
    try:
        check_kernel(_kernel(200), reduce=False)
        assert not gc.isenabled()
    finally:
        gc.enable()
