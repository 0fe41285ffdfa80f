"""`ts.showSchedule`: the schedule table of the TaskManager under the cursor.

Uses `ts_runtime.rules.simulation.format_schedule_table(kernel)` when it is importable;
otherwise prints each task's schedule tree (warps, loops, guards and the steps in order).
"""
from __future__ import annotations

from typing import Any, Iterable, List, Optional

from .hover import _candidates, contains, fmt, _warps, _stage_name

__all__ = ["kernel_at", "schedule_text", "task_entries"]


def kernel_at(kernels: Iterable[Any], line1: Optional[int], col: int = 0):
    """The kernel containing the position (by any of its ranges); the only kernel otherwise."""
    kernels = list(kernels or ())
    if line1 is not None:
        for k in kernels:
            if any(contains(rng, line1, col) for rng, _ in _candidates(k)):
                return k
    return kernels[0] if len(kernels) == 1 else None


def schedule_text(kernel) -> str:
    try:
        from ts_runtime.rules.simulation import format_schedule_table
    except ImportError:
        format_schedule_table = None
    if format_schedule_table is not None:
        try:
            return format_schedule_table(kernel)
        except Exception as exc:  # fall back to the plain listing rather than fail
            return task_entries(kernel) + f"\n\n(schedule table unavailable: {exc})"
    return task_entries(kernel)


def task_entries(kernel) -> str:
    out: List[str] = []
    where = kernel.range
    out.append(f"TaskManager at {where.path}:{where.line}" if where.path != "<unknown>"
               else "TaskManager")
    for t in kernel.tasks:
        out.append("")
        sched = t.schedule
        name = f" schedule {sched.name}" if sched is not None else ""
        out.append(f"{t.name}: {_warps(t)}{name}")
        if sched is not None:
            _walk(kernel, sched.body, 1, out)
    return "\n".join(out)


def _walk(kernel, nodes, depth: int, out: List[str]) -> None:
    pad = "  " * depth
    for n in nodes:
        if getattr(n, "kind", None) == "step":
            res = kernel.name(n.resource)
            what = f"{res}.{n.label}" if n.label else res
            out.append(f"{pad}{_stage_name(n.stage):<20} {what}  (line {n.range.line})")
            continue
        kind = n.kind
        if kind == "domain_loop":
            head = f"domain_loop({fmt(n.start)}, {fmt(n.end)}, {fmt(n.step)})"
        elif kind == "work_tile_loop":
            head = f"work_tile_loop({kernel.name(n.work_queue) if n.work_queue is not None else ''})"
        elif kind == "guard":
            head = f"guard {fmt(n.guard)}"
        else:
            head = kind
        out.append(f"{pad}{head}:")
        _walk(kernel, n.body, depth + 1, out)
