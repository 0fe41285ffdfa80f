"""Task-field checks at `Task(...)` (TS235, TS502, TS517, TS712), shared by both front ends."""
from __future__ import annotations

from .values import UNKNOWN, is_static_int


def check_task_fields(task, resources: dict):
    """Yields (code, message, argument keyword or None) for a TaskModel."""
    regs = task.num_registers
    if regs is not None and regs is not UNKNOWN and is_static_int(regs):
        if not (0 < regs <= 256 and regs % 8 == 0):
            yield ("TS712", f"Task '{task.name}': num_registers must be between 8 and 256 and divisible "
                   f"by 8, got {regs}", "num_registers")
    cta = task.run_only_on_cta_id
    if cta is not None and cta is not UNKNOWN:
        if not is_static_int(cta) or cta < 0:
            yield ("TS235", f"Task '{task.name}': 'run_only_on_cta_id' must be a non-negative int, got {cta!r}",
                   "run_only_on_cta_id")
    wqs = [r for r in task.src if r in resources and resources[r].is_work_queue]
    if len(wqs) > 1:
        yield ("TS502", f"Task '{task.name}': exactly one WorkQueue must be present in src_resources, "
               f"found {len(wqs)}", "src_resources")


def check_lowered_task(task, resources: dict):
    """Checks that need the lowered schedule (TS517); yields (code, message, keyword or None).

    Both front ends call it right after lowering the task's schedule.
    """
    low = getattr(task, "lowered", None)
    if low is None or low.skip_if is None:
        return
    wqs = [r for r in task.src if r in resources and resources[r].is_work_queue]
    if not wqs:
        yield ("TS517", f"Task '{task.name}': 'skip_if' requires exactly one WorkQueue in src_resources, found 0",
               "src_resources")
