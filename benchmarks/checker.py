"""Exhaustive-checker benchmark on generated GEMM-shaped schedules.

    /work/venv/bin/python benchmarks/checker.py            # default table
    /work/venv/bin/python benchmarks/checker.py --naive    # also run without reductions
    /work/venv/bin/python benchmarks/checker.py --quick    # the small rows only

Each row builds a warp-specialized GEMM skeleton as a KernelModel (no DSL, no cutlass):

    Load   --smem_ab (TmaUmma, S stages)-->  Mma  --acc (UmmaAsync, 2 stages)-->  Epi
    Epi    --smem_c (AsyncAsync, 2 stages)--> Store

with K mainloop iterations per tile, E epilogue subtiles, optionally a persistent
WorkQueue (2 tiles; every task runs the queue epilogue in its tail), a split load (A and
B in a Merge group), extra epilogue warpgroups running the same schedule (symmetry), and
`smem_c` aliasing `smem_ab` (epilogue reusing mainloop SMEM: a real race unless ordered).
It prints states explored and seconds per row.

`compare_with_reference()` is where the comparison against nvidia-cutlass-dsl's checker
goes (same kernels written as TS programs, run through tests/oracle.py).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "checker"))

from kbuild import KernelBuilder  # noqa: E402
from ts_runtime.checker import check_kernel  # noqa: E402
from ts_runtime.enums import PipelineGroupMode, PipelineType  # noqa: E402


@dataclass(frozen=True)
class Gemm:
    stages: int = 4          # mainloop SMEM stages
    k: int = 4               # mainloop iterations per tile
    epi: int = 2             # epilogue subtiles per tile
    persistent: bool = False
    split_ab: bool = False   # separate A and B loads merged by a PipelineGroup
    epi_groups: int = 1      # epilogue warpgroups running the same schedule
    alias_c: bool = False    # smem_c overlaps smem_ab

    @property
    def label(self) -> str:
        parts = [f"S={self.stages}", f"K={self.k}", f"E={self.epi}"]
        if self.persistent:
            parts.append("persistent")
        if self.split_ab:
            parts.append("A|B merge")
        if self.epi_groups > 1:
            parts.append(f"{self.epi_groups} epi")
        if self.alias_c:
            parts.append("C aliases AB")
        return " ".join(parts)


def build_gemm(g: Gemm):
    kb = KernelBuilder()
    stage_bytes = 32768
    wq = kb.work_queue() if g.persistent else None
    coords = kb.plain("gmem_ab")
    out = kb.plain("gmem_d")
    if g.split_ab:
        a = kb.pipe("smem_a", stages=g.stages, ptype=PipelineType.TmaUmma, smem=[(0, g.stages * stage_bytes // 2)])
        b = kb.pipe("smem_b", stages=g.stages, ptype=PipelineType.TmaUmma,
                    smem=[(g.stages * stage_bytes // 2, g.stages * stage_bytes // 2)])
        grp = kb.group("ab", [a, b], PipelineGroupMode.Merge)
        ab = [a, b]
    else:
        ab = [kb.pipe("smem_ab", stages=g.stages, ptype=PipelineType.TmaUmma, smem=[(0, g.stages * stage_bytes)])]
        grp = None
    acc = kb.pipe("acc", stages=2, ptype=PipelineType.UmmaAsync, tmem=[(0, 512)])
    c_off = 0 if g.alias_c else g.stages * stage_bytes
    smem_c = kb.pipe("smem_c", stages=2, ptype=PipelineType.AsyncAsync, smem=[(c_off, 2 * 8192)])

    def tile_loop(t, body):
        if wq is None:
            body()
            return
        with t.work_tiles(wq):
            body()
            t.ops(wq, "try_wait", "wait", "get_and_advance_work_tile", "release")

    src_wq = [wq] if wq is not None else []
    for i, buf in enumerate(ab):
        with kb.task(f"Load{'AB'[i] if g.split_ab else ''}", src=src_wq + [coords], dst=[buf]) as t:
            def body(t=t, buf=buf):
                with t.loop(g.k):
                    t.op(coords, "consumer_work")
                    t.ops(buf, "try_acquire", "acquire", "producer_work", "commit")
            tile_loop(t, body)
    with kb.task("Mma", src=src_wq + ab, dst=[acc]) as t:
        def body():
            t.ops(acc, "try_acquire", "acquire")
            with t.loop(g.k):
                for buf in ab:
                    t.op(buf, "try_wait", via_group=grp)
                    t.op(buf, "wait", via_group=grp)
                t.op(ab[0], "consumer_work", via_group=grp)
                t.op(acc, "producer_work")
                if grp is not None:
                    t.op(grp, "release")
                else:
                    t.op(ab[0], "release")
            t.op(acc, "commit")
        tile_loop(t, body)
    first_epi = None
    for e in range(g.epi_groups):
        if first_epi is not None:
            kb.copy_task(f"Epi{e}", first_epi, warp_idx=None)
            continue
        with kb.task("Epi0" if g.epi_groups > 1 else "Epi", src=src_wq + [acc], dst=[smem_c], num_warps=4) as t:
            def body():
                t.ops(acc, "try_wait", "wait")
                with t.loop(g.epi):
                    t.op(acc, "consumer_work")
                    t.ops(smem_c, "acquire", "producer_work", "commit")
                t.op(acc, "release")
            tile_loop(t, body)
        first_epi = kb.tasks[-1]
    with kb.task("Store", src=src_wq + [smem_c], dst=[out]) as t:
        def body():
            with t.loop(g.epi):   # epilogue warpgroups fill each stage together
                t.ops(smem_c, "wait", "consumer_work", "release")
                t.op(out, "producer_work")
        tile_loop(t, body)
    return kb.build()


ROWS = [
    Gemm(stages=4, k=4, epi=2),
    Gemm(stages=4, k=8, epi=2),
    Gemm(stages=8, k=8, epi=4),
    Gemm(stages=4, k=4, epi=2, persistent=True),
    Gemm(stages=8, k=8, epi=2, persistent=True),
    Gemm(stages=4, k=4, epi=2, split_ab=True),
    Gemm(stages=4, k=8, epi=2, split_ab=True, persistent=True),
    Gemm(stages=4, k=4, epi=2, epi_groups=2),
    Gemm(stages=4, k=8, epi=4, epi_groups=2, persistent=True),
    Gemm(stages=4, k=4, epi=2, alias_c=True),
    Gemm(stages=4, k=4, epi=2, alias_c=True, persistent=True),
    Gemm(stages=6, k=12, epi=4, split_ab=True, persistent=True),
    Gemm(stages=8, k=16, epi=4, persistent=True),
]
QUICK = 6


def run_row(g: Gemm, naive: bool = False, max_states: int = 2_000_000):
    k = build_gemm(g)
    out = {"label": g.label, "tasks": len(k.tasks)}
    t0 = time.perf_counter()
    r = check_kernel(k, max_states=max_states)
    out.update(states=r.states_explored, seconds=time.perf_counter() - t0, complete=r.complete,
               runs=len(r.runs), codes=sorted({d.code for d in r.diagnostics}))
    if naive:
        t0 = time.perf_counter()
        n = check_kernel(k, reduce=False, symmetry=False, max_states=max_states)
        out.update(naive_states=n.states_explored, naive_seconds=time.perf_counter() - t0,
                   naive_complete=n.complete)
    return out


def compare_with_reference(rows=ROWS):
    """Placeholder: run the same kernels through nvidia-cutlass-dsl (tests/oracle.py) and
    report its states explored / seconds next to ours. Not implemented yet."""
    raise NotImplementedError("reference comparison is added by the oracle harness")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--naive", action="store_true", help="also run without reductions")
    ap.add_argument("--quick", action="store_true", help=f"only the first {QUICK} rows")
    ap.add_argument("--max-states", type=int, default=2_000_000)
    args = ap.parse_args(argv)
    rows = ROWS[:QUICK] if args.quick else ROWS
    head = f"{'kernel':42} {'tasks':>5} {'runs':>4} {'states':>9} {'seconds':>8} {'complete':>8}  findings"
    if args.naive:
        head += f"   {'naive states':>12} {'naive s':>8}"
    print(head)
    print("-" * len(head))
    for g in rows:
        o = run_row(g, args.naive, args.max_states)
        line = (f"{o['label']:42} {o['tasks']:>5} {o['runs']:>4} {o['states']:>9} {o['seconds']:>8.3f} "
                f"{str(o['complete']):>8}  {','.join(o['codes']) or '-'}")
        if args.naive:
            flag = "" if o["naive_complete"] else " (cap)"
            line += f"   {o['naive_states']:>12} {o['naive_seconds']:>8.2f}{flag}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
