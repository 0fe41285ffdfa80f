"""What `TaskManager(verbose=True)` prints (format of ts_printout.rst, model.md §10)."""
from __future__ import annotations

from .model.registers import REGISTER_FILE, default_registers, task_registers
from .model.values import is_static_int


def register_lines(kernel) -> list:
    d = default_registers(kernel)
    lines, total, budget = [], 0, 0
    for i, t in enumerate(kernel.tasks):
        if not is_static_int(t.num_warps):
            continue
        r = task_registers(t, d)
        w = t.num_warps
        lines.append(f"Task {i:>2} '{t.name:<20}', numWarps x (defaultMaxNumRegs - numRegsPerThread) = "
                     f"{w} x ({d:>3} - {r:>3}) = {w * (d - r)}")
        total += w * 32 * r
        budget += w * (d - r)
    lines.append(f"Num. regs: {total} (free reg blocks: {max(0, (REGISTER_FILE - total) // 1024)})")
    lines.append(f"Reg budget: {budget}")
    return lines


def memory_lines(kernel) -> list:
    out = []
    s = kernel.smem_allocator
    if s is not None and is_static_int(s.total):
        out.append(f"SMEM usage: {s.total} B (data {s.data_bytes} B + barriers {s.barrier_bytes} B) / "
                   f"{kernel.options.smem_capacity_bytes} B capacity")
    t = kernel.tmem_allocator
    if t is not None and is_static_int(t.data_bytes):
        out.append(f"TMEM usage: {t.data_bytes} columns / {kernel.options.tmem_capacity_columns} columns capacity")
    return out


def report(kernel, diags) -> str:
    parts = []
    try:
        from .rules.simulation import format_schedule_table
    except ImportError:
        format_schedule_table = None
    if format_schedule_table is not None:
        parts.append(format_schedule_table(kernel))
    parts.extend(register_lines(kernel))
    parts.extend(memory_lines(kernel))
    result = getattr(kernel, "check_result", None)
    if result is not None and getattr(result, "report", None):
        parts.append(result.report)
    for d in diags:
        parts.append(d.format())
    return "\n".join(parts)


def print_report(kernel, diags):
    print(report(kernel, diags))
