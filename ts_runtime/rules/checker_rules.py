"""TS801-TS807: the exhaustive interleaving checker (catalogue entries).

The logic lives in `ts_runtime.checker` (run by `rules.engine.run_checker` after the
manager rules); these are the catalogue entries with their documentation.
"""
from ..diagnostics import Severity
from ._checker_programs import VALID_PIPE, opaque_program, race_program, uncovered_write_program
from ._programs import custom_program
from .declare import rule

W = Severity.WARNING

rule("TS801", "interleaving-deadlock", """
    Some interleaving of the tasks reaches a state where work remains but every task is blocked.

    ## What it does
    Explores every interleaving of the tasks' expanded schedules (exact loop counts for
    int domains, two work tiles for persistent kernels) under the credit model of the
    pipelines, and reports a reachable state in which some task has steps left but no
    task can run: each unfinished task waits in `acquire()` for a release or in `wait()`
    for a commit that no task can still issue. The finding points at the blocked call
    of the first blocked task; the other blocked calls are related locations, and the
    shortest interleaving leading there is attached as a trace.
    ## Why is this bad?
    The kernel hangs on the GPU for that interleaving: warps spin on an mbarrier phase
    that never completes.
    ## Example
    A consumer that never releases a 2-stage buffer its producer fills 4 times:
    `buf.wait(); buf.consumer_work()` without `buf.release()`.
    ## Use instead
    Balance every `acquire`/`commit` with a `wait`/`release` per stage, on the same
    iterations (check FIRST_ITER/LAST_ITER guards), in an order that cannot form a cycle.
    """, phase="checker", order=240)

rule("TS802", "aliasing-race", """
    Two tasks can access overlapping SMEM/TMEM of two different resources at the same time, one of them writing.

    ## What it does
    Tracks, for resources whose allocations overlap (after `compute_layout()`), which
    stage each task has acquired, written, waited for or is reading, and reports a
    reachable state where a write to one resource and any access to the other overlap in
    memory and in pipeline stage without a pipeline ordering them. Reads by DMA consumers
    (TmaUmma, AsyncUmma, UmmaUmma: tensor-core reads) stay in flight after `release()`
    until the producer re-acquires that stage or a completion wait (a UMMA-produced
    resource's `wait()`) retires them. One acquire covers one producer write: a second
    producer work call on the same acquired stage (a duplicated `tma_load`, two producer
    work methods under one `acquire()`) is published by no wait and stays in flight for
    the rest of the kernel, so it races with any later use of memory aliasing that stage.
    ## Why is this bad?
    The two accesses hit the same bytes concurrently: the reader sees torn or foreign data.
    ## Example
    Two producer/consumer pairs whose buffers share one SMEM range (an alias group with
    overlapping phases, or allocations never laid out) running concurrently.
    ## Use instead
    Order the two windows through the pipelines (the writer of one resource waits for the
    release of the other), or give them disjoint memory.
    """, phase="checker", order=240, valid=[race_program(False), uncovered_write_program(False)],
    invalid=[race_program(True), uncovered_write_program(True)])

_PDL_PROGRAM = custom_program('''
    def build():
        src, dst = Src(name="src"), Dst(name="dst")
        pdl_wait, pdl_launch = PdlWaitBarrier(name="pdl_wait"), PdlLaunchBarrier(name="pdl_launch")

        @schedule
        def copy(pdl_wait, pdl_launch, src, dst):
    {first}
    {second}
            with domain_loop(0, 8, 1):
                v = src.get_item()
                dst.set_item(data=v)

        task = Task(name="Copy", src_resources=[pdl_wait, src], dst_resources=[dst, pdl_launch],
                    warp_idx=0, num_warps=1, schedule=copy(pdl_wait, pdl_launch, src, dst))
        graph = {src: [pdl_wait], dst: [src], pdl_launch: [dst]}
        return TaskManager(tasks=[task], resource_dependency_graph=graph, verbose=False)
    ''', extra="\nfrom ts_runtime.resources import PdlLaunchBarrier, PdlWaitBarrier\n")


def _pdl_program(launch_first: bool) -> str:
    """A whole PDL program: the launch before the wait (TS803) or after it."""
    if launch_first:
        return (_PDL_PROGRAM.replace("{first}", "        pdl_launch.launch_griddep()  # expect: TS803")
                .replace("{second}", "        pdl_wait.wait_griddep()"))
    return (_PDL_PROGRAM.replace("{first}", "        pdl_wait.wait_griddep()")
            .replace("{second}", "        pdl_launch.launch_griddep()"))


rule("TS803", "pdl-launch-before-wait", """
    A `launch_griddep()` can execute before any `wait_griddep()` in some interleaving.

    ## What it does
    Reports an interleaving where a task's `PdlLaunchBarrier.launch_griddep()` is ready
    to run while no task has executed `PdlWaitBarrier.wait_griddep()` yet (skipped tiles
    included).
    ## Why is this bad?
    The dependent grid may start before this grid waited for its own predecessor: a chain
    of PDL launches can then overtake the data it depends on.
    ## Example
    A launch in the head of one task while the wait sits after a blocking `wait()` of
    another task.
    ## Use instead
    Put the launch after work that is ordered after the wait, or pass
    `assume_pdl_wait_completed=True` when the wait is issued outside TS.
    """, phase="checker", order=240, valid=[_pdl_program(launch_first=False)],
     invalid=[_pdl_program(launch_first=True)])

rule("TS804", "skipped-tile-interleaving", """
    A deadlock, race or PDL-order violation that only occurs when work tiles are skipped.

    ## What it does
    For kernels with `work_tile_loop(skip_if=...)` the checker also runs the schedules
    with skipped tiles (only the non-skippable head/tail steps; for persistent kernels
    also mixed patterns where some of the two tiles are skipped) and reports findings
    that the all-normal run does not have, suffixed "during skipped-tile execution".
    ## Why is this bad?
    A skipped tile is an ordinary run-time path: the kernel hangs or races on it.
    ## Example
    A `commit()` inside `skippable()` whose matching `wait()` sits outside it.
    ## Use instead
    Keep every credit operation of a skipped region and its partner on the same side of
    `skippable()`.
    """, phase="checker", order=240)

rule("TS805", "opaque-condition-interleaving", """
    A deadlock, race or PDL-order violation that occurs only for some values of the `when_true`/`when_false` conditions.

    ## What it does
    Opaque run-time conditions are enumerated: the checker runs once per True/False
    assignment of the distinct condition keys and reports findings that do not occur for
    every assignment, suffixed "during opaque assignment i/n (key=value, ...)". Findings
    present under every assignment keep their own code (TS801-TS803).
    ## Why is this bad?
    The condition is data dependent: the kernel hangs or races for those inputs.
    ## Example
    A producer commits under `when_true(flag)` while its consumer waits unconditionally.
    ## Use instead
    Guard both sides with the same key (`key=` shares a condition across tasks) or make
    the credit operations unconditional.
    """, phase="checker", order=240, valid=[VALID_PIPE], invalid=[opaque_program()])

rule("TS806", "checker-state-limit", """
    The exhaustive checker hit its state limit (or time limit) before finishing: the search is incomplete.

    ## What it does
    Warns when a run stops at `max_states` (default 1,000,000 per run) or at the
    manager's time limit. Findings reported before the stop are real; the absence of
    findings proves nothing about the unexplored interleavings.
    ## Why is this bad?
    An incomplete search is not a proof of safety; accepting it silently would hide bugs.
    ## Example
    Validating a long-K GEMM (hundreds of mainloop iterations) with many tasks.
    ## Use instead
    Validate with a shorter int domain that exercises every pipeline wrap-around (at least
    two rounds of each pipeline), or raise `max_states`.
    """, phase="checker", severity=W, order=240)

rule("TS807", "checker-disabled", """
    `TaskManager(exhaustive_deadlock_race_check=False)` turns the exhaustive checker off.

    ## What it does
    Documents the switch: with it off, TS801-TS806 are not checked (the schedule-table
    simulation TS810-TS813 still runs).
    ## Why is this bad?
    Deadlocks and aliasing races that only some interleavings show go unreported.
    ## Example
    `TaskManager(tasks, graph, exhaustive_deadlock_race_check=False)`
    ## Use instead
    Keep it on in CI with compile-time int domains; turn it off only for production builds.
    """, phase="checker", severity=Severity.INFO, order=240)
