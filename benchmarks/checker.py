"""Exhaustive-checker benchmark: ts_runtime's checker against the reference's, on the very
same programs, measured in one process.

    /work/venv/bin/python benchmarks/checker.py                     # the comparison table
    /work/venv/bin/python benchmarks/checker.py --quick             # examples + small generated rows
    /work/venv/bin/python benchmarks/checker.py --markdown benchmarks/results/checker.md
    /work/venv/bin/python benchmarks/checker.py --write-programs DIR  # only write the generated programs
    /work/venv/bin/python benchmarks/checker.py --models [--naive]  # ts only, on KernelModels (no DSL)

Programs: every example of examples/ (its `build()` with default arguments, plus a few
scaled-up calls) and generated warp-specialized GEMM skeletons. A generated skeleton is
a complete TS program written against ts_runtime's API (`gemm_program`):

    Load   --smem_ab (TmaUmma, S stages)-->  Mma  --acc (UmmaAsync, 2 stages)-->  Epi
    Epi    --smem_c (AsyncAsync, 2 stages)--> Store

with K mainloop iterations per tile, E epilogue subtiles, optionally a static persistent
WorkQueue (every task runs the queue epilogue in its per-tile tail; both checkers run 2
tiles), a split load (A and B in a Merge PipelineGroup), extra epilogue warpgroups
running the same schedule, a cluster layout, and `smem_c` aliasing `smem_ab` through an
SmemAllocator alias group (a real race unless ordered).

Each program is imported as a fresh module twice: as written (ts_runtime) and with the
`ts_runtime` prefix rewritten to the reference package (tests/oracle.py `translate`; the
names that the reference's pipeline module lacks are added from `cutlass.pipeline`, as
the oracle does). `TaskManager.__init__` of each implementation is wrapped so that the
program's own `TaskManager(...)` call runs with `exhaustive_deadlock_race_check` and
`verbose` forced, and only the constructor is timed. Checker time = median constructor
time with the check on minus the median with it off (the other rules cancel out).
The timed runs of ts and the reference alternate (`measure_pair`), so that both medians
come from the same stretch of time of a shared machine. Times are CPU seconds of this process (`time.process_time`), which a shared machine
inflates less than wall-clock; the wall-clock ratio is printed too. The repeated runs
are made without the CPU-time limit: an armed ITIMER_PROF makes Linux sample the process
CPU clock at scheduler ticks (4 ms steps), which quantised the sub-millisecond times.

Checker entry points are timed as well, in the same runs: ts's `rules.engine.run_checker`
and the reference's `TaskManager._exhaustive_aliasing_races` (CPU time inside the call,
median). This measures the same thing as the on-off difference without subtracting two
noisy medians (for the reference the two agreed within 0.2 ms), and is the column the 10x
target is read from. For programs that ts rejects, *ts first s* times ts with
`check_kernel(early_exit=True)` patched in (the reference's stop-at-first-finding
semantics; ts's default reports every finding). Every run builds the program's model
afresh and checks it; nothing is cached across checks.

States: ts's `TaskManager.check_result.states_explored` (summed over variants; 0 where
there is nothing to explore, docs/checker.md §3); the
reference's from its verbose printout ("BFS complete: N states explored", summed over
its runs), captured from stdout in one extra run with `verbose=True`. The reference
stops at its first finding and at 1,000,000 states (it then warns); a reference run
longer than `--ref-limit` CPU seconds is interrupted (SIGPROF) and shown as `>limit`.

`--models` prints the older table: the same skeletons built directly as KernelModels
(tests/checker/kbuild.py, no DSL), ts only, optionally without reductions (`--naive`).
"""
from __future__ import annotations

import os
import sys

# Run as a script, benchmarks/ is sys.path[0]; its modules must not shadow the standard
# library (benchmarks/copy.py would hide `copy`, which dataclasses and cutlass import).
sys.path[:] = [p for p in sys.path
               if os.path.abspath(p or os.curdir) != os.path.dirname(os.path.abspath(__file__))]

import argparse
import contextlib
import gc
import importlib
import importlib.util
import io
import platform
import re
import signal
import statistics
import subprocess
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from typing import Callable, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests", "checker"))
sys.path.insert(0, os.path.join(ROOT, "tests"))

from kbuild import KernelBuilder  # noqa: E402
from ts_runtime.checker import check_kernel  # noqa: E402
from ts_runtime.enums import PipelineGroupMode, PipelineType  # noqa: E402

REFERENCE_PACKAGE = "cutlass.experimental.task_scheduling"
REFERENCE_CAP = 1_000_000


@dataclass(frozen=True)
class Gemm:
    stages: int = 4          # mainloop SMEM stages
    k: int = 4               # mainloop iterations per tile
    epi: int = 2             # epilogue subtiles per tile
    persistent: bool = False
    split_ab: bool = False   # separate A and B loads merged by a PipelineGroup
    epi_groups: int = 1      # epilogue warpgroups running the same schedule
    alias_c: bool = False    # smem_c overlaps smem_ab
    cluster: tuple = (1, 1, 1, 1)   # cta_layout_vmnk of the programs (the models ignore it)

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
        if self.cluster != (1, 1, 1, 1):
            parts.append("cluster " + "x".join(map(str, self.cluster[1:3])))
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


# ----------------------------------------------------------------------------- programs

_PROGRAM_HEADER = '''\
"""Generated by benchmarks/checker.py: GEMM skeleton {label}."""
from dataclasses import dataclass

from ts_runtime import consumer_work, domain_loop, producer_work, schedule, work_tile_loop
from ts_runtime.enums import PipelineGroupMode
from ts_runtime.memory import SmemAllocation, SmemAllocator, TmemAllocation, TmemAllocator
from ts_runtime.pipeline import Agent, CooperativeGroup
from ts_runtime.pipeline_group import PipelineGroup
from ts_runtime.resources import (MemoryResource, PipelineConfig, TaskLocalVariable,
                                  TileSchedulerConfig, WorkQueue)
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager

STAGES, K_ITERS, EPI_SUBTILES = {stages}, {k}, {epi}
STAGE_BYTES = 16384
CLUSTER = {cluster}


@dataclass(kw_only=True)
class GmemAB(MemoryResource):
    k: object = TaskLocalVariable.uninitialized()

    def __post_init__(self):
        self.k = TaskLocalVariable(dtype=int, default=0)

    @consumer_work(returns=k)
    def coords(self, stage_info):
        return stage_info.loop_offset


@dataclass(kw_only=True)
class SmemAB(MemoryResource):
    size_bytes: int = 0
    desc: object = TaskLocalVariable.uninitialized()

    def __post_init__(self):
        self.desc = TaskLocalVariable(dtype=int, default=0)
        self.data = SmemAllocation(self.name + "_data", size_bytes=self.size_bytes, alignment=1024)

    def get_smem_requirements(self):
        return [self.data]

    @producer_work
    def tma_load(self, stage_info, k):
        pass

    @consumer_work(returns=desc)
    def descriptors(self, stage_info):
        return stage_info.stage_idx


@dataclass(kw_only=True)
class TmemAcc(MemoryResource):
    frag: object = TaskLocalVariable.uninitialized()

    def __post_init__(self):
        self.frag = TaskLocalVariable(dtype=int, default=0)
        self.cols = TmemAllocation(self.name + "_cols", 512)

    def get_tmem_requirements(self):
        return [self.cols]

    @producer_work
    def mma(self, stage_info, desc):
        pass

    @consumer_work(returns=frag)
    def load_subtile(self, stage_info):
        return 0


@dataclass(kw_only=True)
class SmemC(MemoryResource):
    val: object = TaskLocalVariable.uninitialized()

    def __post_init__(self):
        self.val = TaskLocalVariable(dtype=int, default=0)
        self.data = SmemAllocation(self.name + "_data", size_bytes=2 * 8192, alignment=1024)

    def get_smem_requirements(self):
        return [self.data]

    @producer_work
    def write(self, stage_info, frag):
        pass

    @consumer_work(returns=val)
    def read(self, stage_info):
        return 0


@dataclass(kw_only=True)
class GmemD(MemoryResource):
    @producer_work
    def store(self, stage_info, v):
        pass


@dataclass(kw_only=True, init=False)
class TileQueue(WorkQueue):
    pass


def build():
    gmem_ab, gmem_d = GmemAB(name="gmem_ab"), GmemD(name="gmem_d")
'''

_QUEUE_EPILOGUE = ["wq.try_wait()", "wq.wait()", "wq.get_and_advance_work_tile()", "wq.release()"]


def gemm_program(g: Gemm) -> str:
    """The skeleton `g` as a complete TS program (ts_runtime API) with a `build()` entry.

    Same schedules as `build_gemm(g)` (the KernelModel rows), so ts explores the same
    number of states on either; resources carry real SMEM/TMEM allocations and pipeline
    configs that pass every rule of both implementations."""
    out: List[str] = []
    w = out.append
    wq = ["wq"] if g.persistent else []
    if g.persistent:
        w('    wq = TileQueue(name="wq", tile_scheduler_config=(')
        w("        TileSchedulerConfig.create_static_persistent_tile_scheduler_params(None)))")
    ab = ["smem_a", "smem_b"] if g.split_ab else ["smem_ab"]
    part = len(ab)
    mcast = g.cluster[1] * g.cluster[2]          # tcgen05.commit arrivals per SMEM stage
    epi_threads = 128 * g.epi_groups
    for n in ab:
        w(f'    {n} = SmemAB(name="{n}", size_bytes=STAGES * STAGE_BYTES // {part},')
        w("        pipeline_config=PipelineConfig.create_tma_umma_pipeline_cfg(")
        w(f"            num_stages=STAGES, num_bytes=STAGE_BYTES // {part},")
        w("            producer_group=CooperativeGroup(Agent.Thread),")
        w(f"            consumer_group=CooperativeGroup(Agent.Thread, {mcast}), cta_layout_vmnk=CLUSTER))")
    w('    acc = TmemAcc(name="acc", pipeline_config=PipelineConfig.create_umma_async_pipeline_cfg(')
    w("        num_stages=2, producer_group=CooperativeGroup(Agent.Thread),")
    w(f"        consumer_group=CooperativeGroup(Agent.Thread, {epi_threads}), cta_layout_vmnk=CLUSTER))")
    w('    smem_c = SmemC(name="smem_c", pipeline_config=PipelineConfig.create_async_async_pipeline_cfg(')
    w(f"        num_stages=2, producer_group=CooperativeGroup(Agent.Thread, {epi_threads}),")
    w("        consumer_group=CooperativeGroup(Agent.Thread, 32), cta_layout_vmnk=CLUSTER))")
    if g.split_ab:
        w('    ab = PipelineGroup(name="ab", members=[smem_a, smem_b], mode=PipelineGroupMode.Merge)')
    w("    smem = SmemAllocator()")
    for n in ab + ["smem_c"]:
        w(f"    smem.add_resource({n})")
    if g.split_ab:
        w("    smem.add_pipeline_group(ab)")
    if g.alias_c:   # the epilogue's staging buffer reuses the mainloop's SMEM
        w(f"    smem.add_alias_group([[{', '.join(n + '.data' for n in ab)}], [smem_c.data]])")
    w("    smem.compute_layout()")
    w("    tmem = TmemAllocator()")
    w("    tmem.add_resource(acc)")
    w("    tmem.compute_layout()")

    def schedule_fn(name: str, params: List[str], body: List[str]) -> None:
        w("")
        w("    @schedule")
        w(f"    def {name}({', '.join(params + wq)}):")
        if g.persistent:
            w("        with work_tile_loop(wq):")
            body = body + _QUEUE_EPILOGUE
        ind = " " * (12 if g.persistent else 8)
        for line in body:
            w(ind + line)

    schedule_fn("load_schedule", ["gmem_ab", "buf"], [
        "with domain_loop(0, K_ITERS, 1):",
        "    k = gmem_ab.coords()",
        "    buf.try_acquire()",
        "    buf.acquire()",
        "    buf.tma_load(k=k)",
        "    buf.commit()"])
    if g.split_ab:
        schedule_fn("mma_schedule", ["a", "b", "ab", "acc"], [
            "acc.try_acquire()", "acc.acquire()",
            "with domain_loop(0, K_ITERS, 1):",
            "    a.try_wait()", "    a.wait()", "    b.try_wait()", "    b.wait()",
            "    d = a.descriptors()", "    acc.mma(desc=d)", "    ab.release()",
            "acc.commit()"])
    else:
        schedule_fn("mma_schedule", ["smem_ab", "acc"], [
            "acc.try_acquire()", "acc.acquire()",
            "with domain_loop(0, K_ITERS, 1):",
            "    smem_ab.try_wait()", "    smem_ab.wait()", "    d = smem_ab.descriptors()",
            "    acc.mma(desc=d)", "    smem_ab.release()     # after the MMA that reads it",
            "acc.commit()"])
    schedule_fn("epi_schedule", ["acc", "smem_c"], [
        "acc.try_wait()", "acc.wait()",
        "with domain_loop(0, EPI_SUBTILES, 1):",
        "    f = acc.load_subtile()", "    smem_c.acquire()", "    smem_c.write(frag=f)",
        "    smem_c.commit()",
        "acc.release()"])
    schedule_fn("store_schedule", ["smem_c", "gmem_d"], [
        "with domain_loop(0, EPI_SUBTILES, 1):",
        "    smem_c.wait()", "    v = smem_c.read()", "    smem_c.release()", "    gmem_d.store(v=v)"])

    graph: dict = {}
    tasks: List[str] = []
    warp = 0

    def task(name: str, src: List[str], dst: List[str], num_warps: int, call: str) -> None:
        nonlocal warp
        tasks.append(f'        Task(name="{name}", src_resources=[{", ".join(src + wq)}], '
                     f'dst_resources=[{", ".join(dst)}],\n'
                     f"             warp_idx={warp}, num_warps={num_warps}, schedule={call}),")
        warp += num_warps
        for d in dst:
            ups = graph.setdefault(d, [])
            ups.extend(s for s in src + wq if s not in ups)

    extra = "".join(", " + q for q in wq)
    for e in range(g.epi_groups):       # the same schedule function: symmetric tasks
        task(f"Epi{e}" if g.epi_groups > 1 else "Epi", ["acc"], ["smem_c"], 4,
             f"epi_schedule(acc, smem_c{extra})")
    for n in ab:
        task("Load" + (n[-1].upper() if g.split_ab else ""), ["gmem_ab"], [n], 1,
             f"load_schedule(gmem_ab, {'ab.' + n if g.split_ab else n}{extra})")
    mma_args = "ab.smem_a, ab.smem_b, ab, acc" if g.split_ab else "smem_ab, acc"
    task("Mma", ab, ["acc"], 1, f"mma_schedule({mma_args}{extra})")
    task("Store", ["smem_c"], ["gmem_d"], 1, f"store_schedule(smem_c, gmem_d{extra})")
    w("")
    w("    tasks = [")
    out.extend(tasks)
    w("    ]")
    edges = ", ".join(f"{d}: [{', '.join(ups)}]" for d, ups in graph.items())
    w(f"    return TaskManager(tasks=tasks, resource_dependency_graph={{{edges}}},")
    w("                       smem_allocator=smem, tmem_allocator=tmem, verbose=False)")
    head = _PROGRAM_HEADER.format(label=g.label, stages=g.stages, k=g.k, epi=g.epi,
                                  cluster=tuple(g.cluster))
    return head + "\n".join(out) + "\n"


# ----------------------------------------------------------------------------- harness

class _Interrupted(BaseException):
    """Raised by the SIGPROF timer when a run has used up its CPU-time limit."""


def _on_sigprof(signum, frame):
    raise _Interrupted()


# The wrapper is compiled like a dataclass-generated __init__ (file "<string>", defined in
# a function called __create_fn__) so that ts_runtime's caller_range() skips its frame
# and still finds the program's own `TaskManager(...)` line as the call site.
_WRAPPER_SRC = '''
def __create_fn__(impl, original, clock, cpu):
    def __init__(self, *args, **kwargs):
        kwargs["exhaustive_deadlock_race_check"] = impl.check
        kwargs["verbose"] = impl.verbose
        impl.managers.append(self)
        wall0, cpu0 = clock(), cpu()
        try:
            original(self, *args, **kwargs)
        finally:
            impl.times.append((cpu() - cpu0, clock() - wall0))
    return __init__
'''


@dataclass
class Run:
    cpu: float                  # seconds in TaskManager(...) (summed if several)
    wall: float
    error: Optional[BaseException]
    warnings: List[str]
    stdout: str
    managers: list
    interrupted: bool = False
    check_cpu: float = float("nan")   # CPU s inside the checker entry point


class Implementation:
    """One TS implementation whose TaskManager constructor is instrumented, and whose
    exhaustive-checker entry point (`entry`: (owner, attribute name), the function the
    constructor calls to run the whole exhaustive check) is timed too."""

    def __init__(self, name: str, package: str, rewrite: Callable[[str], str], entry: tuple):
        self.name = name
        self.rewrite = rewrite
        self.cls = importlib.import_module(package + ".task_manager").TaskManager
        self.check, self.verbose = True, False
        self.times: list = []
        self.check_times: list = []
        self.managers: list = []
        self._original = self.cls.__dict__["__init__"]
        ns: dict = {}
        exec(compile(_WRAPPER_SRC, "<string>", "exec"), ns)
        self.cls.__init__ = ns["__create_fn__"](self, self._original, time.perf_counter,
                                                time.process_time)
        self._count = 0
        owner, attr = entry
        self._entry = (owner, attr, owner.__dict__[attr])
        fn = owner.__dict__[attr]
        impl = self

        def timed_entry(*args, **kwargs):
            c0 = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                impl.check_times.append(time.process_time() - c0)

        setattr(owner, attr, timed_entry)

    def close(self) -> None:
        self.cls.__init__ = self._original
        owner, attr, fn = self._entry
        setattr(owner, attr, fn)

    def load(self, source: str, tmpdir: str, stem: str):
        """Imports `source` (rewritten for this implementation) as a fresh module."""
        self._count += 1
        safe = re.sub(r"\W", "_", stem)
        name = f"bench_{self.name}_{self._count}_{safe}"
        path = os.path.join(tmpdir, name + ".py")
        with open(path, "w") as fh:
            fh.write(self.rewrite(source))
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            spec.loader.exec_module(module)
        return module

    def run(self, module, kwargs: dict, *, check: bool, verbose: bool = False,
            limit: Optional[float] = None) -> Run:
        """`module.build(**kwargs)` once, with the manager's check / verbose forced."""
        self.check, self.verbose = check, verbose
        self.times, self.managers, self.check_times = [], [], []
        out = io.StringIO()
        error, interrupted = None, False
        with contextlib.redirect_stdout(out), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            old = signal.signal(signal.SIGPROF, _on_sigprof)
            if limit:
                signal.setitimer(signal.ITIMER_PROF, limit)
            try:
                module.build(**kwargs)
            except _Interrupted:
                interrupted = True
            except Exception as exc:   # a rejected program: the verdict
                error = exc
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
                signal.signal(signal.SIGPROF, old)
        if interrupted and not self.times:
            self.times.append((limit or 0.0, float("nan")))
        msgs = list(dict.fromkeys(
            f"{w.category.__name__}: {w.message}" for w in caught
            if not issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning))))
        return Run(sum(t[0] for t in self.times), sum(t[1] for t in self.times), error, msgs,
                   out.getvalue(), list(self.managers), interrupted,
                   sum(self.check_times) if self.check_times else float("nan"))


def _reference_rewrite():
    from oracle import translate
    return translate


def _add_pipeline_names() -> None:
    """What tests/oracle.py's runner does: the public names of cutlass.pipeline that the
    reference's task_scheduling.pipeline lacks (CooperativeGroup, Agent, ...)."""
    import cutlass.pipeline as cp
    tsp = importlib.import_module(REFERENCE_PACKAGE + ".pipeline")
    for n in getattr(cp, "__all__", [n for n in dir(cp) if not n.startswith("_")]):
        if not hasattr(tsp, n):
            setattr(tsp, n, getattr(cp, n))
# ----------------------------------------------------------------------------- the comparison

@dataclass
class Program:
    name: str
    source: str
    kwargs: dict = field(default_factory=dict)
    gemm: Optional[Gemm] = None


# Scaled-up calls of the examples' build() (more stages / iterations than the defaults).
SCALED_EXAMPLES = [
    ("02_copy_tma", {"num_rows": 32, "num_stages": 4}),
    ("05_gemm_schedule", {"num_k_tiles": 16, "num_stages": 4}),
    ("07_pipeline_groups", {"num_rows": 3}),
]

# Generated programs. The persistent rows are where the reference's state space explodes
# (it has no partial-order reduction); the last two approach and reach its cap (~25 and
# ~40 CPU s of the reference each; more such rows would push the run past 5 minutes).
COMPARE_ROWS = [
    Gemm(stages=4, k=4, epi=2),
    Gemm(stages=4, k=8, epi=2),
    Gemm(stages=8, k=8, epi=4),
    Gemm(stages=6, k=12, epi=4, cluster=(1, 2, 1, 1)),
    Gemm(stages=4, k=4, epi=2, split_ab=True),
    Gemm(stages=4, k=4, epi=2, epi_groups=2),
    Gemm(stages=4, k=8, epi=2, split_ab=True, epi_groups=2),
    Gemm(stages=4, k=4, epi=2, alias_c=True),
    Gemm(stages=8, k=16, epi=4, alias_c=True),
    Gemm(stages=4, k=4, epi=2, persistent=True),
    Gemm(stages=4, k=4, epi=2, alias_c=True, persistent=True),
    Gemm(stages=8, k=8, epi=2, alias_c=True, persistent=True),
    Gemm(stages=8, k=8, epi=2, persistent=True),
    Gemm(stages=8, k=16, epi=4, persistent=True),
    Gemm(stages=6, k=8, epi=2, split_ab=True, epi_groups=2, persistent=True),
]
QUICK_COMPARE = 9      # --quick: the examples and the first rows (reference < ~3 CPU s each)


def programs(quick: bool = False) -> List[Program]:
    out = []
    paths = sorted(p for p in os.listdir(os.path.join(ROOT, "examples")) if re.match(r"\d\d_.*\.py$", p))
    for p in paths:
        with open(os.path.join(ROOT, "examples", p)) as fh:
            out.append(Program(p[:-3], fh.read()))
    texts = {pr.name: pr.source for pr in out}
    for stem, kwargs in ([] if quick else SCALED_EXAMPLES):
        if stem in texts:
            args = " ".join(f"{k.replace('num_', '')}={v}" for k, v in kwargs.items())
            out.append(Program(f"{stem} {args}", texts[stem], kwargs))
    for g in COMPARE_ROWS[:QUICK_COMPARE] if quick else COMPARE_ROWS:
        out.append(Program(g.label, gemm_program(g), gemm=g))
    return out


@dataclass
class Measure:
    states: Optional[int] = None
    complete: Optional[bool] = None       # explored everything it meant to
    capped: bool = False                  # stopped at its state cap
    interrupted: bool = False             # stopped by --ref-limit
    cpu: float = float("nan")             # checker seconds (CPU)
    wall: float = float("nan")            # checker seconds (wall-clock)
    repeats: int = 0
    verdict: str = ""
    tasks: Optional[int] = None
    stages: Optional[int] = None
    direct: float = float("nan")          # ts: check_kernel(kernel) alone, CPU s (median)
    check: float = float("nan")           # CPU s inside the checker entry point (median)
    first: float = float("nan")           # ts: the same, stopping at the first finding


_BFS = re.compile(r"BFS complete: (\d+) states explored")
LONG_RUN = 1.0          # CPU s: above this, one timed run (plus baselines) is enough


def _ts_verdict(run: Run) -> str:
    codes = []
    if run.error is not None:
        codes = sorted(set(getattr(run.error, "codes", None) or [type(run.error).__name__]))
    warned = sorted({m.group(0) for w in run.warnings for m in [re.search(r"TS8\d\d", w)] if m})
    return ",".join(codes) if codes else ("ok" + "".join(f" ({c})" for c in warned))


def _ref_verdict(run: Run, capped: bool) -> str:
    if run.interrupted:
        return "stopped"
    if run.error is not None:
        msg = str(run.error)
        for key, word in (("aliasing race", "race"), ("deadlock", "deadlock"), ("PDL", "PDL order")):
            if key in msg:
                return word
        return f"{type(run.error).__name__}: {msg.splitlines()[0][:40]}"
    return "ok (cap)" if capped else "ok"


def _ts_states(run: Run, m: Measure) -> None:
    results = [getattr(tm, "check_result", None) for tm in run.managers]
    results = [r for r in results if r is not None]
    if results:
        m.states = sum(r.states_explored for r in results)
        m.complete = all(r.complete for r in results)
        m.capped = any(r.hit_limit for r in results)
    kernels = [getattr(tm, "kernel", None) for tm in run.managers]
    kernels = [k for k in kernels if k is not None]
    if kernels:
        k = kernels[-1]
        m.tasks = len(k.tasks)
        st = [r.pipeline.num_stages for r in k.resources.values()
              if r.pipeline is not None and isinstance(r.pipeline.num_stages, int)]
        m.stages = max(st) if st else 0


def _ref_states(run: Run, m: Measure) -> None:
    counts = [int(x) for x in _BFS.findall(run.stdout)]
    m.states = sum(counts) if counts else None
    m.capped = any(c >= REFERENCE_CAP for c in counts) or any(
        "state" in w.lower() and ("limit" in w.lower() or "cap" in w.lower() or "max" in w.lower())
        for w in run.warnings)
    m.complete = bool(counts) and not m.capped and not run.interrupted


def _direct(run: Run, budget: float) -> float:
    """ts only: CPU time of `check_kernel` on the manager's KernelModel, called directly
    (no TaskManager around it): median of 3-15 samples, each sample repeating the call
    until it has used at least 5 ms (timeit-style), divided by the number of calls. The
    precise figure for checks of a few milliseconds."""
    kernels = [tm.kernel for tm in run.managers if getattr(tm, "kernel", None) is not None]
    if not kernels:
        return float("nan")
    samples, spent = [], 0.0
    while len(samples) < 3 or (len(samples) < 15 and spent < budget):
        calls, c0 = 0, time.process_time()
        while True:
            for k in kernels:
                check_kernel(k)
            calls += 1
            elapsed = time.process_time() - c0
            if elapsed >= 0.005:
                break
        samples.append(elapsed / calls)
        spent += elapsed
    return statistics.median(samples)


@contextlib.contextmanager
def _ts_first_finding():
    """ts's checker with the reference's semantics: each run stops at its first finding
    (`check_kernel(..., early_exit=True)`), through the same TaskManager path."""
    import ts_runtime.checker as chk
    full = chk.check_kernel
    chk.check_kernel = lambda kernel, **kw: full(kernel, early_exit=True, **kw)
    try:
        yield
    finally:
        chk.check_kernel = full


def _start(impl: Implementation, module, kwargs: dict, limit: Optional[float], budget: float) -> tuple:
    """The first run of one implementation (verbose for the reference, for its state
    counts): states and verdict. Returns (Measure, whether ts rejected the program, the
    number of timed on/off runs still to make; 0 when the first run settled it)."""
    m = Measure()
    is_ref = impl.name == "ref"
    first = impl.run(module, kwargs, check=True, verbose=is_ref, limit=limit)
    if is_ref:
        _ref_states(first, m)
        m.verdict = _ref_verdict(first, m.capped)
    else:
        _ts_states(first, m)
        m.verdict = _ts_verdict(first)
        m.direct = _direct(first, budget)
    m.interrupted = first.interrupted
    if first.interrupted:
        m.complete = False
        return m, False, 0
    rejected = not is_ref and not m.verdict.startswith("ok")
    if first.cpu >= LONG_RUN:
        # one timed run: the first (verbose) one, against baselines with the same verbosity
        off = [impl.run(module, kwargs, check=False, verbose=is_ref) for _ in range(3)]
        m.cpu = first.cpu - statistics.median(r.cpu for r in off)
        m.wall = first.wall - statistics.median(r.wall for r in off)
        m.check = first.check_cpu
        m.repeats = 1
        if rejected:
            with _ts_first_finding():
                m.first = impl.run(module, kwargs, check=True).check_cpu
        return m, rejected, 0
    # sub-millisecond checks of a shared machine vary from run to run: their medians are
    # taken over more runs
    return m, rejected, max(5, min(31, int(budget / max(first.cpu, 1e-3))))


def measure_pair(ts: Implementation, ref: Implementation, ts_module, ref_module, kwargs: dict,
                 limit: Optional[float], budget: float = 1.0) -> tuple:
    """(ts Measure, reference Measure) of one program. The timed runs of the two
    implementations alternate (ts off, ts on, reference off, reference on, ...), so that
    both medians are taken over the same stretch of time of this shared machine: its load
    changes from second to second, and separate stretches had moved sub-millisecond
    ratios by up to 2x between runs of the benchmark."""
    gc.collect()      # once per program: a full collection costs ~0.1 s with cutlass loaded
    sides = []
    for impl, module in ((ts, ts_module), (ref, ref_module)):
        m, rejected, n = _start(impl, module, kwargs, limit, budget)
        sides.append((impl, module, m, rejected, n, [], []))
    # No CPU-time limit on these runs: the first one finished in under LONG_RUN, and an
    # armed ITIMER_PROF makes Linux sample the process CPU clock at scheduler ticks (4 ms
    # steps), which would quantise every time measured here.
    for k in range(max(side[4] for side in sides)):
        for impl, module, m, rejected, n, on, off in sides:
            if k < n:
                off.append(impl.run(module, kwargs, check=False))
                on.append(impl.run(module, kwargs, check=True))
    for impl, module, m, rejected, n, on, off in sides:
        if not n:
            continue
        m.cpu = statistics.median(r.cpu for r in on) - statistics.median(r.cpu for r in off)
        m.wall = statistics.median(r.wall for r in on) - statistics.median(r.wall for r in off)
        m.check = statistics.median(r.check_cpu for r in on)
        m.repeats = n
        if rejected:
            with _ts_first_finding():
                m.first = statistics.median(impl.run(module, kwargs, check=True).check_cpu for _ in range(n))
    return sides[0][2], sides[1][2]


def _fmt_s(x: float, interrupted: bool = False, limit: Optional[float] = None) -> str:
    if interrupted:
        return f">{limit:g}"
    if x != x:
        return "-"
    if x < 0.0005:
        return "<0.001"
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def _fmt_precise(x: float) -> str:
    return "-" if x != x else (f"{x:.4f}" if x < 0.1 else f"{x:.3f}")


def _fmt_states(m: Measure) -> str:
    if m.states is None:
        return "?"
    s = f"{m.states:,}"
    if m.capped:
        s += " cap"
    elif m.complete is False:
        s += " *"
    return s


def compare_with_reference(progs: Optional[List[Program]] = None, *, ref_limit: float = 60.0,
                           out=sys.stdout) -> List[dict]:
    """Runs every program through ts_runtime and the reference in this process and prints
    one row per program (see the module docstring for what is measured). Returns the rows."""
    progs = programs() if progs is None else progs
    _add_pipeline_names()
    ts = Implementation("ts", "ts_runtime", lambda s: s, entry=ts_entry())
    ref = Implementation("ref", REFERENCE_PACKAGE, _reference_rewrite(), entry=ref_entry())
    rows = []
    head = (f"{'kernel':44} {'tasks':>5} {'stages':>6} {'ts states':>10} {'ts s':>7} "
            f"{'ref states':>14} {'ref s':>7} {'ratio':>7} {'wall':>6} {'ts chk':>7} {'ref chk':>7} "
            f"{'r chk':>6} {'first':>7} {'r 1st':>6}  {'ts verdict':12} ref verdict")
    print(head, file=out)
    print("-" * len(head), file=out, flush=True)
    try:
        with tempfile.TemporaryDirectory(prefix="ts_bench_") as tmp:
            # warm-up: first-call costs (lazy imports, caches) of both implementations
            for impl in (ts, ref):
                for prog in progs[:2]:
                    impl.run(impl.load(prog.source, tmp, "warmup"), prog.kwargs, check=True,
                             limit=ref_limit)
            for prog in progs:
                mods = {impl.name: impl.load(prog.source, tmp, prog.name) for impl in (ts, ref)}
                mt, mr = measure_pair(ts, ref, mods["ts"], mods["ref"], prog.kwargs, limit=ref_limit)
                ratio = _safe_ratio(mr, mt, "cpu")
                ratio_wall = _safe_ratio(mr, mt, "wall")
                ratio_check = _check_ratio(mr.check, mt.check, mr)
                ratio_first = _check_ratio(mr.check, mt.first, mr)
                row = dict(kernel=prog.name, generated=prog.gemm is not None, tasks=mt.tasks,
                           stages=mt.stages, ts=mt, ref=mr, ratio=ratio, ratio_wall=ratio_wall,
                           ratio_check=ratio_check, ratio_first=ratio_first)
                rows.append(row)
                print(_text_row(row, ref_limit), file=out, flush=True)
                for name in list(sys.modules):
                    if name.startswith("bench_"):
                        del sys.modules[name]
    finally:
        ts.close()
        ref.close()
    return rows


RESOLUTION = 0.001      # s: differences of medians below this are noise


def ts_entry() -> tuple:
    """ts's exhaustive-checker entry point: what the TaskManager calls for the whole check
    (check_kernel, the grouping of findings into diagnostics)."""
    import ts_runtime.rules.engine as engine
    return (engine, "run_checker")


def ref_entry() -> tuple:
    """The reference's: the TaskManager method that runs its exhaustive checker over every
    variant. Its CPU time matched the reference's (check on) - (check off) constructor time
    within 0.2 ms on the examples and small rows checked (compare *ref s* and *ref check s*
    in benchmarks/results/checker.md)."""
    tm = importlib.import_module(REFERENCE_PACKAGE + ".task_manager").TaskManager
    return (tm, "_exhaustive_aliasing_races")


def _check_ratio(r: float, t: float, mr: Measure) -> float:
    """ref / ts of entry-point CPU times; NaN where the reference did not complete."""
    if not mr.complete or not (r == r) or not (t == t) or t <= 0:
        return float("nan")
    return r / t


def _safe_ratio(mr: Measure, mt: Measure, what: str) -> float:
    """ref / ts; NaN where the reference did not complete or its time is below the
    resolution; with ts below the resolution, ref / RESOLUTION (a lower bound, negative)."""
    r, t = getattr(mr, what), getattr(mt, what)
    if not mr.complete or not (r == r) or not (t == t) or r < RESOLUTION:
        return float("nan")
    if t < RESOLUTION:
        return -(r / RESOLUTION)
    return r / t


def _ratio(x: float) -> str:
    if x != x:
        return "-"
    if x < 0:
        return f">{-x:.0f}x" if -x >= 10 else f">{-x:.1f}x"
    return f"{x:.0f}x" if x >= 10 else f"{x:.1f}x"


def _text_row(row: dict, limit: float) -> str:
    mt, mr = row["ts"], row["ref"]
    return (f"{row['kernel']:44} {row['tasks'] or '?':>5} {row['stages'] or '-':>6} "
            f"{_fmt_states(mt):>10} {_fmt_s(mt.cpu):>7} {_fmt_states(mr):>14} "
            f"{_fmt_s(mr.cpu, mr.interrupted, limit):>7} {_ratio(row['ratio']):>7} "
            f"{_ratio(row['ratio_wall']):>6} {_fmt_precise(mt.check):>7} "
            f"{_fmt_check(mr.check, mr.interrupted, limit):>7} {_ratio(row['ratio_check']):>6} "
            f"{_fmt_precise(mt.first):>7} {_ratio(row['ratio_first']):>6}  {mt.verdict:12} {mr.verdict}")


def _fmt_check(x: float, interrupted: bool, limit: float) -> str:
    return f">{limit:g}" if interrupted else _fmt_precise(x)
# ----------------------------------------------------------------------------- reporting

def machine_info() -> dict:
    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as fh:
            names = [l.split(":", 1)[1].strip() for l in fh if l.startswith("model name")]
        cpu = names[0] if names else cpu
    except OSError:
        pass
    try:
        date = subprocess.run(["date"], capture_output=True, text=True).stdout.strip()
    except OSError:
        date = time.strftime("%c")
    try:
        from importlib.metadata import version
        dsl = version("nvidia-cutlass-dsl")
    except Exception:
        dsl = "?"
    return {"date": date, "nproc": os.cpu_count(), "cpu": cpu, "python": platform.python_version(),
            "dsl": dsl, "load": os.getloadavg()}


def targets(rows: List[dict]) -> List[str]:
    """The two goals, checked against the rows of this run."""
    lines = []
    gemm = [r for r in rows if r["generated"] and 4 <= (r["tasks"] or 0) <= 6 and 4 <= (r["stages"] or 0) <= 8]
    fast = [r for r in gemm if r["ts"].complete and r["ts"].cpu < 1.0]
    worst = max((r["ts"].cpu for r in gemm), default=float("nan"))
    lines.append(f"Complete exploration of generated GEMM schedules with 4-6 tasks and 4-8 stages in < 1 s: "
                 f"{len(fast)}/{len(gemm)} rows (slowest ts check {_fmt_s(worst)} s CPU).")
    done = [r for r in rows if r["ref"].complete]
    chk = [r for r in done if r["ratio_check"] == r["ratio_check"]]
    ten = [r for r in chk if r["ratio_check"] >= 10]
    vals = [r["ratio_check"] for r in chk]
    lines.append(f">= 10x faster than the reference where the reference completes, by checker CPU time (entry "
                 f"points, ts's full check reporting every finding): {len(ten)}/{len(chk)} rows; ratios from "
                 f"{_ratio(min(vals, default=float('nan')))} to {_ratio(max(vals, default=float('nan')))}.")
    missed = [f"{r['kernel']} ({_ratio(r['ratio_check'])})" for r in chk if r["ratio_check"] < 10]
    if missed:
        lines.append("  below 10x: " + "; ".join(missed))
    firsts = [f"{r['kernel']} ({_ratio(r['ratio_first'])})" for r in chk if r["ratio_first"] == r["ratio_first"]]
    if firsts:
        lines.append("  rejected programs, with ts also stopping at its first finding as the reference does "
                     "(*ts first s*): " + "; ".join(firsts))
    timed = [r for r in done if r["ratio"] == r["ratio"]]
    ten = [r for r in timed if abs(r["ratio"]) >= 10]
    vals = [abs(r["ratio"]) for r in timed if r["ratio"] > 0]
    lines.append(f"The same by (check on) - (check off) constructor time (*ratio*): {len(ten)}/{len(timed)} rows "
                 f"with a measurable reference time (>= {RESOLUTION * 1000:g} ms); measured ratios from "
                 f"{_ratio(min(vals, default=float('nan')))} to {_ratio(max(vals, default=float('nan')))}.")
    missed = [f"{r['kernel']} ({_ratio(r['ratio'])})" for r in timed if abs(r["ratio"]) < 10]
    if missed:
        lines.append("  below 10x: " + "; ".join(missed))
    tiny = [r["kernel"] for r in done if r["ratio"] != r["ratio"]]
    if tiny:
        lines.append(f"  reference check under {RESOLUTION * 1000:g} ms (no ratio): " + "; ".join(tiny))
    capped = [r["kernel"] for r in rows if not r["ref"].complete]
    if capped:
        lines.append("Reference incomplete (state cap or --ref-limit): " + "; ".join(capped))
    disagree = [r["kernel"] for r in rows if _agree(r) is False]
    if disagree:
        lines.append("Verdicts differ: " + "; ".join(disagree))
    return lines


def _agree(row: dict) -> Optional[bool]:
    t, r = row["ts"].verdict, row["ref"].verdict
    if r in ("stopped", "ok (cap)") or not row["ref"].complete:
        return None
    ok_t = t.startswith("ok")
    ok_r = r.startswith("ok")
    return ok_t == ok_r


def markdown(rows: List[dict], info: dict, info_end: dict, ref_limit: float, argv: List[str],
             wall_total: float) -> str:
    cols = ["kernel", "tasks", "stages", "ts states", "ref states", "ts s", "ref s", "ratio", "ratio (wall)",
            "ts check s", "ref check s", "ratio (check)", "ts direct s", "ts first s", "ratio (first)",
            "ts verdict", "ref verdict"]
    out = ["# Exhaustive checker: ts_runtime vs the reference", "",
           f"- date: {info['date']}",
           f"- machine: {info['nproc']} CPUs ({info['cpu']}), Python {info['python']}, "
           f"nvidia-cutlass-dsl {info['dsl']}",
           f"- load average (1/5/15 min) at start: {' / '.join(f'{x:.2f}' for x in info['load'])}, "
           f"at end: {' / '.join(f'{x:.2f}' for x in info_end['load'])} (shared machine)",
           f"- command: `python benchmarks/checker.py {' '.join(argv)}`".rstrip() , 
           f"- total wall-clock time of the run: {wall_total:.0f} s; reference runs stopped after "
           f"{ref_limit:g} CPU s", "",
           "| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for r in rows:
        mt, mr = r["ts"], r["ref"]
        cells = [r["kernel"], str(r["tasks"] or "?"), str(r["stages"] or "-"), _fmt_states(mt), _fmt_states(mr),
                 _fmt_s(mt.cpu), _fmt_s(mr.cpu, mr.interrupted, ref_limit), _ratio(r["ratio"]),
                 _ratio(r["ratio_wall"]), _fmt_precise(mt.check), _fmt_check(mr.check, mr.interrupted, ref_limit),
                 _ratio(r["ratio_check"]), _fmt_precise(mt.direct), _fmt_precise(mt.first),
                 _ratio(r["ratio_first"]), mt.verdict, mr.verdict]
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    out += ["", "## Targets", ""] + [("  - " if l.startswith("  ") else "- ") + l.strip()
                                     for l in targets(rows)]
    out += ["", "## How to read it", "",
            "- *ts s* / *ref s*: CPU seconds of the exhaustive check alone, measured the same way for "
            "both: median CPU time of the program's `TaskManager(...)` with "
            "`exhaustive_deadlock_race_check=True` minus the median with `False` (5-31 runs each, more for shorter programs, ts's and the "
            "reference's runs alternating; one "
            f"timed run when the check takes more than {LONG_RUN:g} CPU s). Differences under 1 ms are "
            "noise; *<0.001* marks them. The repeated runs are made without the CPU-time limit: an armed "
            "ITIMER_PROF makes Linux advance the process CPU clock in 4 ms scheduler ticks, which had "
            "quantised the sub-millisecond figures of earlier tables. *ratio* = ref s / ts s (*>Nx*: ts under 1 ms, a lower "
            "bound); *ratio (wall)* is the same from wall-clock medians, which the other processes on "
            "this shared machine inflate (compare the two to see the noise).",
            "- *ts check s* / *ref check s*: CPU seconds spent inside each implementation's exhaustive-"
            "checker entry point during the same constructor runs (median): ts's `rules.engine.run_checker` "
            "(`check_kernel` and the grouping of its findings into diagnostics), the reference's "
            "`TaskManager._exhaustive_aliasing_races` (its checker over every variant). This is what *ts s* / "
            "*ref s* estimate, without subtracting two noisy medians (for the reference the two agreed within "
            "0.2 ms on the examples and small rows in a separate check; compare *ref s* with *ref check s*). "
            "*ratio (check)* = ref check s / ts check s; the 10x target is read off this column. Each run "
            "is a fresh check of a fresh model: the program is rebuilt and nothing is cached across checks. "
            "Both constructors run their schedule-table simulation before the checker (outside the timed "
            "entry points, with the check on or off); ts decides a single-path run that this simulation ran "
            "to its end from that run instead of walking or compiling it (docs/checker.md §4, \"Runs the schedule table "
            "completed\"), the reference does not use it.",
            "- *ts direct s*: ts's `check_kernel` called directly on the kernel model that the "
            "TaskManager built (median CPU time per call, calls repeated in samples of >= 5 ms, no "
            "constructor around it).",
            "- *ts first s*: rejected programs only: *ts check s* with ts stopping each run at its first "
            "finding (`check_kernel(early_exit=True)`), the reference's own semantics. ts's normal mode "
            "reports every distinct finding and so explores the rest of the state space; *ratio (first)* = "
            "ref check s / ts first s compares like with like.",
            "- *ts states*: states in ts's visited sets, summed over variants (skip patterns, opaque "
            "assignments), after partial-order and symmetry reduction, or on the one path walked (or "
            "counted on the schedule table's complete run) for a single-path run or an aliased run decided "
            "by its happens-before order (docs/checker.md §4); "
            "0 for a kernel with nothing to "
            "explore (no pipelined or grouped resource, no aliased memory, and no PDL launch a task "
            "can run before its own head's wait: docs/checker.md §3). "
            "*ref states*: the "
            "reference's \"BFS complete: N states explored\" lines (verbose printout), summed. "
            "*cap* = the reference stopped at 1,000,000 states (it then warns; its `ok` is no proof).",
            "- Verdicts: ts lists the codes of the errors it raised; the reference's error is "
            "classified by its message. The reference stops at its first finding; ts reports every "
            "finding (the aliasing-race rows: each race decided from the walk's happens-before order, "
            "docs/checker.md §4; *ts first s* is ts's search stopping at its first finding instead).",
            "- Persistent rows: both check 2 work tiles (ts's default, for parity).",
            ]
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------- main

def models_table(args) -> None:
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


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="examples and the small generated rows only (--models: the first rows)")
    ap.add_argument("--ref-limit", type=float, default=60.0,
                    help="CPU seconds after which a reference run is stopped (default 60)")
    ap.add_argument("--markdown", metavar="FILE", help="also write the table as markdown")
    ap.add_argument("--only", metavar="REGEX", help="only the programs whose name matches")
    ap.add_argument("--write-programs", metavar="DIR",
                    help="write the generated programs (ts_runtime API) to DIR and exit")
    ap.add_argument("--models", action="store_true",
                    help="ts only, on the skeletons built directly as KernelModels")
    ap.add_argument("--naive", action="store_true", help="--models: also run without reductions")
    ap.add_argument("--max-states", type=int, default=2_000_000, help="--models: state cap")
    args = ap.parse_args(argv)
    if args.models:
        models_table(args)
        return
    if args.write_programs:
        os.makedirs(args.write_programs, exist_ok=True)
        for i, g in enumerate(COMPARE_ROWS):
            name = f"gemm_{i:02d}_" + re.sub(r"\W+", "_", g.label).strip("_").lower() + ".py"
            with open(os.path.join(args.write_programs, name), "w") as fh:
                fh.write(gemm_program(g))
            print(os.path.join(args.write_programs, name))
        return
    progs = programs(args.quick)
    if args.only:
        progs = [p for p in progs if re.search(args.only, p.name)]
    info = machine_info()
    print(f"{info['date']} | {info['nproc']} CPUs ({info['cpu']}) | load {info['load'][0]:.2f} | "
          f"Python {info['python']} | nvidia-cutlass-dsl {info['dsl']}")
    print("checker CPU seconds (median on - median off); ratio = ref / ts "
          f"(CPU, then wall-clock); reference stopped after {args.ref_limit:g} CPU s\n", flush=True)
    t0 = time.perf_counter()
    rows = compare_with_reference(progs, ref_limit=args.ref_limit)
    wall_total = time.perf_counter() - t0
    end = machine_info()
    print()
    for line in targets(rows):
        print(line)
    print(f"\nwall-clock {wall_total:.0f} s; load average at end {end['load'][0]:.2f}")
    if args.markdown:
        with open(args.markdown, "w") as fh:
            fh.write(markdown(rows, info, end, args.ref_limit, argv, wall_total))


if __name__ == "__main__":
    main()
