"""The exhaustive interleaving checker (TS801-TS806), pure Python over the shared model.

`check_kernel(kernel)` explores every interleaving of the kernel's tasks, once per
variant (opaque-condition assignment, skipped-tile pattern), and returns a
`CheckResult` whose diagnostics point at the user's schedule lines: the blocked step of a
deadlock, the write of an aliasing race, the early `launch_griddep`; the counterexample
interleaving is in `Diagnostic.trace`.

    expand.py    flat step lists (loop expansion, skipped tiles, persistent tiles, variants)
    credits.py   the credit model shared with the schedule-table simulation
    program.py   the per-task op arrays of one run (Op, Program), alias table, cursors
    compile.py   compiling one run (CompileContext, compile_program)
    state.py     canonical state tuples and held-access transitions
    reduce.py    partial-order reduction and task symmetry
    explore.py   the BFS
    linear.py    runs whose reduced search is one path, walked without compiling Ops
    causal.py    aliased runs decided by one walk and its happens-before order
    timeline.py  timelines and the printed report

See docs/checker.md for the algorithm and why the bounds used are sufficient.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import List, Optional

from ..diagnostics import Diagnostic, Related, Severity, TraceStep
from .credits import FULL, Unknown
from ..model.lowered import HEAD
from ..model.values import UNKNOWN
from .expand import is_persistent_kernel, iteration_count, variants
from .explore import DEADLOCK, PDL, RACE, Finding, RunResult, explore, resume_gc
from .compile import CompileContext, compile_program
from .causal import causal_run
from .linear import LinearContext, walk_run
from .program import PDL_LAUNCH, PDL_WAIT, _GROUP, _PDL_LAUNCH_KIND, _PDL_WAIT_KIND, alias_table, pdl_kind
from .table import table_check
from .state import ACCESS_NAMES, CONS, CONS_HELD, PROD_C, WRITES
from .timeline import format_run

__all__ = ["check_kernel", "CheckResult", "RunResult", "Finding"]

BASE_CODE = {DEADLOCK: "TS801", RACE: "TS802", PDL: "TS803"}


@dataclass
class CheckResult:
    diagnostics: List[Diagnostic] = field(default_factory=list)
    states_explored: int = 0
    seconds: float = 0.0
    complete: bool = True
    hit_limit: bool = False
    runs: List[RunResult] = field(default_factory=list)
    skipped: Optional[str] = None         # why nothing was checked (an unknown value)
    trivial: Optional[str] = None         # why nothing needed exploring (see _nothing_to_explore)
    tile_bound: Optional[object] = None   # bounds.TileBound when tiles="auto"
    _messages: dict = field(default_factory=dict, repr=False)

    @property
    def report(self) -> str:
        """The verbose printout of every run (model.md §10, exhaustive checker part)."""
        if self.skipped:
            return f"Exhaustive interleaving checker skipped: {self.skipped}"
        if self.trivial:
            return f"Exhaustive interleaving checker: nothing to explore ({self.trivial})"
        return "\n".join(format_run(r, self._messages.get(id(r), ())) for r in self.runs)

    @property
    def codes(self) -> List[str]:
        return [d.code for d in self.diagnostics]


def check_kernel(kernel, *, max_states: Optional[int] = None, timeout: Optional[float] = None,
                 tiles=None, reduce: bool = True, symmetry: bool = True,
                 early_exit: bool = False, mixed_skip: bool = True,
                 max_findings: int = 64, witness: Optional[bool] = None, linear: bool = True,
                 causal: bool = True, table: bool = True) -> CheckResult:
    """Explores every interleaving of every variant of `kernel` (a KernelModel).

    max_states: cap per run (default `kernel.options.max_states`); timeout: seconds for
    all runs (default `kernel.options.timeout`, None = no limit); tiles: work tiles for
    persistent kernels (default 2, like the reference; "auto": every count from 1 to the
    cutoff of bounds.tile_bound, which covers every tile count); reduce / symmetry: the
    reductions of reduce.py; early_exit: stop a run at its first finding (reference
    behaviour); mixed_skip: also run persistent kernels with some tiles skipped and some
    not. witness: record the shortest run to a complete state for the verbose report
    (default: the kernel's `verbose` option; a finding's counterexample is always kept).
    linear: walk the runs whose reduced search is a single path without compiling them
    (linear.py; False: search every run, for comparison tests). causal: decide the
    aliased runs whose one happens-before order fixes their states without searching
    them (race-free, or their races with the shortest run to each), and stop the search
    of the others whose races it predicts once all are found (causal.py; False: search
    them in full, for comparison tests). table: take a single-path run that the
    schedule-table simulation of the same kernel (rules/simulation.py) already ran to its
    end as decided, without walking or compiling it (table.py; False: walk it, for
    comparison tests).
    """
    # A long search pauses the cyclic GC (explore._pause_gc); it is resumed here.
    try:
        if witness is None:
            witness = bool(getattr(kernel.options, "verbose", True))
        return _check_kernel(kernel, max_states=max_states, timeout=timeout, tiles=tiles, reduce=reduce,
                             symmetry=symmetry, early_exit=early_exit, mixed_skip=mixed_skip,
                             max_findings=max_findings, witness=witness, linear=linear,
                             causal=causal, table=table)
    finally:
        resume_gc()


def _check_kernel(kernel, *, max_states, timeout, tiles, reduce, symmetry, early_exit, mixed_skip,
                  max_findings, witness=True, linear=True, causal=True, table=True) -> CheckResult:
    t0 = time.perf_counter()
    opts = kernel.options
    max_states = max_states if max_states is not None else (getattr(opts, "max_states", None) or 1_000_000)
    timeout = timeout if timeout is not None else getattr(opts, "timeout", None)
    deadline = t0 + timeout if timeout else None
    persistent = is_persistent_kernel(kernel)
    result = CheckResult()
    if not kernel.tasks:
        return result
    if reduce and tiles != "auto":
        why = _nothing_to_explore(kernel, persistent)
        if why is not None:
            result.trivial = why
            result.seconds = time.perf_counter() - t0
            return result
    bound_note = None
    if tiles == "auto":
        if persistent:
            from .bounds import tile_bound
            b = tile_bound(kernel)
            result.tile_bound = b
            counts = list(range(1, b.tiles + 1)) if b.tiles else [2]
            if not b.tiles:
                bound_note = b.reason
        else:
            counts = [1]
    else:
        counts = [tiles if tiles is not None else (2 if persistent else 1)]
    runs: List[RunResult] = []
    progs: List[object] = []
    alias = alias_table(kernel)
    # the one run of a kernel that the schedule-table simulation ran to its end (table.py)
    run = table_check(kernel, max_states, alias[1]) \
        if table and linear and reduce and symmetry and not witness and counts == [1] and not persistent else None
    try:
        if run is not None:
            progs.append(run)
        else:
            ctx = CompileContext(kernel, alias)
            keys = [k for task_keys in ctx.opaque for k in task_keys]
            if len(keys) > 1:
                keys = list(dict.fromkeys(keys))           # = opaque_keys(kernel)
            plan = [(T, v) for T in counts for v in variants(kernel, tiles=T, mixed_skip=mixed_skip, keys=keys)]
            # runs whose reduced search is one path are walked (linear.py); the others are
            # compiled up front, so that an unknown value stops the check before any search
            lin = LinearContext(ctx) if reduce and symmetry and linear else None
            for T, v in plan:
                run = walk_run(lin, v, T, max_states, deadline, witness) if lin is not None and lin.ok else None
                progs.append(run if run is not None else compile_program(kernel, v, T, ctx))
    except Unknown as exc:
        result.skipped = str(exc)
        result.complete = False
        result.seconds = time.perf_counter() - t0
        return result
    for item in progs:
        if isinstance(item, RunResult):
            run = item
        else:
            # an aliased run decided by its happens-before order (causal.py): race-free,
            # or searched until every race it can have is found
            got = causal_run(item, max_states, deadline, witness, early_exit, max_findings) \
                if item.aliased and reduce and symmetry and causal else None
            if isinstance(got, RunResult):
                run = got
            else:
                run = explore(item, max_states=max_states, deadline=deadline, reduce=reduce, symmetry=symmetry,
                              early_exit=early_exit, max_findings=max_findings, witness=witness, expect=got)
        runs.append(run)
        result.states_explored += run.states
        if run.timed_out:
            break
    result.runs = runs
    hit = len(runs) < len(progs)
    for r in runs:
        if r.hit_limit or r.timed_out:       # (not RunResult.finished)
            hit = True
    result.hit_limit = hit
    result.complete = not hit
    result.diagnostics = _diagnostics(kernel, runs, progs, result, show_tiles=len(counts) > 1)
    if bound_note:
        result.complete = False
        result.diagnostics.append(_make(
            "TS806", f"exhaustive checker used 2 work tiles, which is not shown to cover every tile count "
            f"({bound_note}): the search is incomplete for other tile counts", kernel.range,
            severity=Severity.WARNING))
    result.seconds = time.perf_counter() - t0
    return result


_NOTHING = ("no pipelined, grouped or PDL resource and no aliased SMEM/TMEM: no step can block, race "
            "or launch early in any interleaving")
_PDL_ORDERED = ("no pipelined or grouped resource and no aliased SMEM/TMEM, and every task that runs "
                "launch_griddep first runs wait_griddep, unconditionally, before its loop: no step can "
                "block or race, and no launch can run before a wait in any interleaving")
_PDL_ASSUMED = ("no pipelined or grouped resource and no aliased SMEM/TMEM, and assume_pdl_wait_completed=True: "
                "no step can block or race, and a launch cannot run before a wait")


def _nothing_to_explore(kernel, persistent: bool) -> Optional[str]:
    """Why no interleaving can reach a finding, so that the search can be skipped; None
    when the kernel is to be searched.

    A step blocks only on a credit pool, and pools exist only for pipelined resources and
    fused-merge groups; a race needs two resources whose SMEM/TMEM overlaps; TS803 needs a
    PDL launch. Without any of them every interleaving runs every task to its end with no
    finding, whatever the iteration counts and variants (docs/checker.md §3, "Nothing to
    explore"). With PDL barriers but still no pool and no aliasing, nothing blocks, so a
    task can run alone up to any of its steps while the others wait at their start: a
    launch can run before every wait iff its own task has not run a wait before it. A
    task whose head runs an unguarded `wait_griddep` before any `launch_griddep` (its
    head runs first and in full in every variant of a kernel without work tiles or
    skipped tiles) therefore never launches early; when every task is such a task, or
    launches nothing, or `assume_pdl_wait_completed` is set, the search is skipped too.
    Kernels whose lists cannot be compiled (an unknown entry or loop count) are left to
    the search, which reports why it skipped them."""
    res = kernel.resources
    memory = 0
    pdl = False
    for r in res.values():
        kind = r.kind
        if r.pipeline is not None or kind is _GROUP:
            return None
        if kind is _PDL_WAIT_KIND or kind is _PDL_LAUNCH_KIND:
            pdl = True
        if r.smem or r.tmem:
            memory += 1
    if memory > 1 and alias_table(kernel)[1]:
        return None
    ordered = pdl and not kernel.options.assume_pdl_wait_completed
    if ordered and persistent:
        return None
    for t in kernel.tasks:
        low = t.lowered
        if low is None:
            continue
        for e in low.entries:
            if e.guard is UNKNOWN or e.resource not in res:
                return None
        if iteration_count(low, 1).n is None:
            return None
        if ordered and not _waits_before_launch(low, res):
            return None
    return (_PDL_ORDERED if ordered else _PDL_ASSUMED) if pdl else _NOTHING


def _waits_before_launch(low, res) -> bool:
    """Whether every `launch_griddep` of a task's list follows an unguarded `wait_griddep`
    of its head (in list order, head first: model.md §7.1), in every variant."""
    if low.skip_if is not None:
        return False
    waited = False
    for e in low.entries:
        kind = pdl_kind(res[e.resource].kind, e.stage)
        if kind == PDL_LAUNCH:
            if not waited and e.section == HEAD:
                return False
        elif kind == PDL_WAIT and e.guard is None and e.section == HEAD:
            waited = True
    # a launch in the loop or tail runs after the whole head
    return waited or not any(pdl_kind(res[e.resource].kind, e.stage) == PDL_LAUNCH for e in low.entries)


# ----------------------------------------------------------------------------- reporting
def _make(code, message, rng, related=(), trace=(), severity=None):
    from ..rules.registry import make_diagnostic
    return make_diagnostic(code, message, rng, related=related, trace=trace, severity=severity)


def _blocked_text(prog, task: int, pos: int) -> str:
    op = prog.ops[task][pos]
    pool = prog.credits.pools[op.block]
    what = "a commit" if pool.kind == FULL else "a release"
    stage = f" (stage {pool.phys})" if prog.credits.interleaved.get(pool.credit_id) else ""
    return f"'{prog.task_names[task]}' is blocked at {op.label}, waiting for {what} of '{pool.name}'{stage}"


_VERBS = {CONS_HELD: "holds a waited stage of", CONS: "reads", PROD_C: "accesses"}


def _verb(access: int) -> str:
    return _VERBS.get(access, "writes")


def _describe(kernel, prog, f: Finding):
    """(message, primary range, related, key by source lines) of one finding."""
    lay = prog.layout
    if f.kind != RACE:
        # the cursors of the finding's state, by real task (a race's state is not read: a
        # race found without the search makes it only on demand)
        frame = f.detail.get("frame", list(range(lay.tasks)))
        cur = {real: f.state[idx] for idx, real in enumerate(frame)}
    if f.kind == DEADLOCK:
        # the blocked steps in source order (then task order): a state and its images under
        # task symmetry (the reduced search may meet either) give the same primary line
        blocked = sorted(f.tasks, key=lambda t: (_rk(prog.ops[t][cur[t]].range), t))
        texts = [_blocked_text(prog, t, cur[t]) for t in blocked]
        done = [prog.task_names[t] for t in range(lay.tasks) if cur[t] >= len(prog.ops[t])]
        msg = "deadlock: no task can make progress; " + "; ".join(texts)
        if done:
            msg += f" (finished: {', '.join(done)})"
        ops = [prog.ops[t][cur[t]] for t in blocked]
        primary = ops[0]
        related = [Related(op.range, _blocked_text(prog, t, cur[t])) for t, op in zip(blocked[1:], ops[1:])]
        key = (DEADLOCK, tuple(sorted((_rk(op.range), op.label) for op in ops)))
        return msg, primary.range, related, key, ()
    if f.kind == RACE:
        w, o = f.detail["writer"], f.detail["other"]
        wt, ot = f.tasks
        wop = _held_op(prog, wt, w)
        oop = _held_op(prog, ot, o)
        if o[2] in WRITES and (_rk(oop.range), ot) < (_rk(wop.range), wt):
            # two writes: report them in a fixed order, whatever order the search met them in
            w, o, wt, ot, wop, oop = o, w, ot, wt, oop, wop
        space, lo, hi = f.detail["overlap"]
        ws = "" if w[1] < 0 else f" stage {w[1]}"
        os_ = "" if o[1] < 0 else f" stage {o[1]}"
        wname, oname = prog.task_names[wt], prog.task_names[ot]
        why = "no pipeline orders the two accesses" if w[1] >= 0 else \
            (f"'{prog.res_label(w[0])}' has no pipeline: no step ever retires the write, so whatever "
             f"orders the two accesses, the written data and the other access overlap")
        msg = (f"aliasing race: '{wname}' writes '{prog.res_label(w[0])}'{ws} while '{oname}' "
               f"{_verb(o[2])} '{prog.res_label(o[0])}'{os_}; both map to {space}[{lo}:{hi}] and {why}")
        if len(w) > 6 and w[6]:
            msg += (f" (the write is a second producer work call on one acquired stage of "
                    f"'{prog.res_label(w[0])}': the consumer's wait publishes one write per commit, "
                    f"so this one is never ordered)")
        related = [Related(oop.range, f"'{oname}' {_verb(o[2])} '{prog.res_label(o[0])}' here "
                                      f"({ACCESS_NAMES[o[2]]})")]
        # one diagnostic per pair of aliased resources; the instance reported is the one
        # with the smallest (write line, other line), so the choice does not depend on
        # the order the search met the instances in
        key = (RACE, frozenset({w[0], o[0]}))
        return msg, wop.range, related, key, (_rk(wop.range), _rk(oop.range))
    t = f.tasks[0]
    op = prog.ops[t][cur[t]]
    msg = f"PDL order: '{prog.task_names[t]}' can run launch_griddep ({op.label}) before any " \
          f"PdlWaitBarrier.wait_griddep has executed"
    return msg, op.range, [], (PDL, _rk(op.range)), ()


def _rk(r):
    return (r.path, r.line, r.column)


def _held_op(prog, task, item):
    """The op that created a held entry / is the pending access (by entry index)."""
    eidx = item[4]
    for op in prog.ops[task]:
        if op.eidx == eidx:
            return op
    return prog.ops[task][0]


def _approx_note(prog) -> str:
    approx = prog.approximate
    if not approx:
        return ""
    names = ", ".join(f"'{n}'" for n, _ in approx)
    return (f" [loop count of {names} is a fallback (domain bound not a compile-time int): this may be "
            f"a false positive; validate with int domains]")


def _diagnostics(kernel, runs, progs, result, show_tiles=False) -> List[Diagnostic]:
    """`progs`: per run, its Program or the RunResult that decided it."""
    if len(runs) == len(progs) and not result.hit_limit:
        for r in runs:
            if r.findings:
                break
        else:
            return []             # (most checks: nothing found, nothing cut short)
    progs = [getattr(p, "program", p) for p in progs]
    groups: dict = {}
    order = []
    for run in runs:
        prog = run.program
        for f in run.findings:
            msg, rng, related, key, pick = _describe(kernel, prog, f)
            if key not in groups:
                groups[key] = []
                order.append(key)
            groups[key].append((run, f, msg, rng, related, pick))
    n_assign = progs[0].variant.assignment_count if progs else 1
    diags = []
    for key in order:
        items = groups[key]
        kind = key[0]
        normal = [it for it in items if it[0].program.variant.all_normal]
        pool = normal or items
        first = min(enumerate(pool), key=lambda n_it: (n_it[1][5], n_it[0]))[1]
        if not normal:
            code = "TS804"
            suffix = first[0].program.variant.describe()
        else:
            found = {it[0].program.variant.assignment_index for it in normal}
            if n_assign > 1 and len(found) < n_assign:
                code = "TS805"
                suffix = first[0].program.variant.opaque_suffix()
            else:
                code = BASE_CODE[kind]
                suffix = ""
        run, f, msg, rng, related, pick = first
        prog = run.program
        others = len({it[5] for it in pool}) - 1
        if kind == RACE and others > 0:
            msg += f" ({others} more racing access pair(s) between these resources)"
        if show_tiles:
            msg += f" (with {prog.tiles} work tile{'s' if prog.tiles != 1 else ''})"
        text = msg + (f" {suffix}" if suffix else "") + _approx_note(prog)
        trace = [TraceStep(prog.task_names[t], prog.ops[t][pos].label, prog.ops[t][pos].range)
                 for t, pos in f.path]
        diags.append(_make(code, text, rng, related=related, trace=trace))
        result._messages.setdefault(id(run), []).append((f, text))
    for run in runs:
        if run.hit_limit or run.timed_out:
            prog = run.program
            desc = prog.variant.describe()
            msg = (f"exhaustive checker hit {'max_states' if run.hit_limit else 'its time limit'} after "
                   f"exploring {run.states} states{(' ' + desc) if desc else ''}: the search is incomplete "
                   f"and proves nothing about the unexplored interleavings; raise max_states / timeout or "
                   f"validate with a shorter domain")
            diags.append(_make("TS806", msg, kernel.range, severity=Severity.WARNING))
            break
    if len(runs) < len(progs) and not any(r.timed_out or r.hit_limit for r in runs):
        diags.append(_make("TS806", "exhaustive checker stopped before running every variant: the "
                           "search is incomplete", kernel.range, severity=Severity.WARNING))
    return diags
