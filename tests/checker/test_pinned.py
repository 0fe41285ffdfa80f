"""Pinned state counts: a changed count means the semantics or a reduction changed.

Each row: (naive, partial-order reduction only, symmetry only, both). The reduced counts
include macro-steps (a commit or release runs with the step before it, explore.MacroSteps).
The naive count of
the S=2 / 3-iteration pair equals the reference's (61 states, cursor-vector visited set)
because there the credits are a function of the cursors.
"""
import pytest

from kbuild import KernelBuilder, consumer, pair, producer
from test_races import dma_chain, two_pairs
from test_variants import lane_kernel, skip_kernel
from ts_runtime.checker import check_kernel
from ts_runtime.enums import PipelineType


def two_consumers():
    kb = KernelBuilder()
    buf = kb.pipe("buf", stages=2)
    producer(kb, "P", buf, 4)
    consumer(kb, "C0", buf, 4)
    consumer(kb, "C1", buf, 4)
    return kb.build()


def mirrored_consumers():
    kb = KernelBuilder()
    buf = kb.pipe("buf", stages=2)
    producer(kb, "P", buf, 4)
    consumer(kb, "C0", buf, 4)
    kb.copy_task("C1", kb.tasks[-1])
    return kb.build()


CASES = {
    "pair_s2_n3": (lambda: pair(2, 3)[0].build(), (61, 8, 61, 8)),
    "pair_s1_n3": (lambda: pair(1, 3)[0].build(), (37, 8, 37, 8)),
    "pair_s4_n8": (lambda: pair(4, 8)[0].build(), (359, 18, 359, 18)),
    # with both reductions, the five races are decided from the happens-before order
    # (causal.py): the walk's states are counted
    "aliased_pairs": (lambda: two_pairs()[0].build(), (599, 183, 599, 23)),
    "disjoint_pairs": (lambda: two_pairs(off_b=256)[0].build(), (1024, 11, 1024, 11)),
    # (its race, too: the walk runs on past the state where the search stops)
    "dma_chain": (lambda: dma_chain(PipelineType.AsyncUmma)[0].build(), (13, 8, 13, 12)),
    "skip_tiles": (lambda: skip_kernel(True)[0].build(), (747, 32, 747, 32)),
    "domain_lanes": (lambda: lane_kernel().build(), (79, 9, 79, 9)),
    "two_consumers": (two_consumers, (550, 71, 550, 71)),
    # the same consumers, but C1 runs C0's very schedule: symmetry halves the space
    "mirrored_consumers": (mirrored_consumers, (550, 71, 301, 39)),
}
MODES = [dict(reduce=False, symmetry=False), dict(symmetry=False), dict(reduce=False), dict()]


@pytest.mark.parametrize("name", sorted(CASES))
def test_pinned_state_counts(name):
    build, expected = CASES[name]
    k = build()
    got = tuple(check_kernel(k, max_findings=10**6, **m).states_explored for m in MODES)
    assert got == expected
