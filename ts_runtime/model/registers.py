"""Register-budget arithmetic (shared by TS709-TS714 and the printout).

The reference hands every warp a default per-thread budget
`D = 65536 // (ceil4(W) * 32 * 8) * 8`, where `W` is the *sum* of the tasks' `num_warps`
(overlapping or gapped warp ranges are not merged), and a task with `num_registers` asks
`setmaxnreg` for that many instead. Everything here is pure arithmetic over the model;
a value that is not a static int makes the dependent result `UNKNOWN`.
"""
from __future__ import annotations

from .values import UNKNOWN, is_static_int

REGISTER_FILE = 65536
WARPS_PER_GROUP = 4
THREADS_PER_WARP = 32


def total_warps(kernel):
    """Σ num_warps over all tasks (UNKNOWN if one is not a static int)."""
    total = 0
    for t in kernel.tasks:
        if not is_static_int(t.num_warps):
            return UNKNOWN
        total += t.num_warps
    return total


def default_registers(kernel):
    """D = 65536 // (ceil4(total warps) * 32 * 8) * 8 (per-thread default budget)."""
    warps = total_warps(kernel)
    if warps is UNKNOWN:
        return UNKNOWN
    ceil4 = max(WARPS_PER_GROUP, (warps + WARPS_PER_GROUP - 1) // WARPS_PER_GROUP * WARPS_PER_GROUP)
    return REGISTER_FILE // (ceil4 * THREADS_PER_WARP * 8) * 8


def task_registers(task, default):
    """The per-thread registers a task runs with: its `num_registers`, else the default.

    UNKNOWN when `num_registers` is set but not a static int (or the default is unknown).
    """
    regs = task.num_registers
    if regs is None:
        return default
    return regs if is_static_int(regs) else UNKNOWN


def register_usage(kernel):
    """(D, [(task, regs)], total registers, budget), or None when something is unknown."""
    d = default_registers(kernel)
    if d is UNKNOWN:
        return None
    rows, total, budget = [], 0, 0
    for t in kernel.tasks:
        r = task_registers(t, d)
        if r is UNKNOWN:
            return None
        rows.append((t, r))
        total += t.num_warps * THREADS_PER_WARP * r
        budget += t.num_warps * (d - r)
    return d, rows, total, budget


def warp_groups(kernel):
    """{group index: [task, ...]} for tasks whose warp range is static (a task spanning
    several 4-warp groups is listed in each). Tasks with unknown ranges are left out.

    A 0-warp task belongs to the group of its `warp_idx` unless that index starts a group
    (warp groups w // 4 .. (w + n - 1) // 4): the reference groups it so, and then
    compares its num_registers with the group's (TS710) and lists it in messages."""
    groups: dict = {}
    for t in kernel.tasks:
        w, n = t.warp_idx, t.num_warps
        if not (is_static_int(w) and is_static_int(n)) or n < 0:
            continue
        for g in range(w // WARPS_PER_GROUP, (w + n - 1) // WARPS_PER_GROUP + 1):
            groups.setdefault(g, []).append(t)
    return dict(sorted(groups.items()))
