"""Register-budget arithmetic (shared by TS709-TS714 and the printout)."""
from __future__ import annotations

from .values import is_static_int

REGISTER_FILE = 65536


def total_warps(kernel) -> int:
    ends = [t.warp_end for t in kernel.tasks if is_static_int(t.warp_end)]
    return max(ends, default=0)


def default_registers(kernel) -> int:
    """D = 65536 // (ceil4(total warps) * 32 * 8) * 8 (per-thread default budget)."""
    warps = total_warps(kernel)
    ceil4 = max(4, (warps + 3) // 4 * 4)
    return REGISTER_FILE // (ceil4 * 32 * 8) * 8


def task_registers(task, default: int):
    regs = task.num_registers
    return regs if is_static_int(regs) else default
