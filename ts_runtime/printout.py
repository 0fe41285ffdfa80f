"""What `TaskManager(verbose=True)` prints (ts_printout.rst, model.md §10).

Order, as the reference produces it: the schedule table (`rules.simulation`), the
register lines, the `SMEM usage` / `TMEM usage` lines, the exhaustive checker's report,
then the allocator usage reports; ts adds its findings at the end. Every block is built
from the shared model, so ts-lint or the LSP can render the same text.
"""
from __future__ import annotations

from .model.registers import REGISTER_FILE, register_usage
from .model.values import is_static_int

__all__ = ["register_lines", "memory_lines", "allocator_report", "allocator_reports", "report", "print_report"]

_RULE = "\u2500"   # the box-drawing rule of the allocator report


def register_lines(kernel) -> list:
    """`Task  i 'name', numWarps x (defaultMaxNumRegs - numRegsPerThread) = ...`, totals."""
    usage = register_usage(kernel)
    if usage is None:
        return []
    d, rows, total, budget = usage
    lines = []
    for i, (t, r) in enumerate(rows):
        w = t.num_warps
        lines.append(f"Task {i:>2} '{t.name:<20}', numWarps x (defaultMaxNumRegs - numRegsPerThread) = "
                     f"{w} x ({d:>3} - {r:>3}) = {w * (d - r)}")
    lines.append(f"Num. regs: {total} (free reg blocks: {max(0, (REGISTER_FILE - total) // 1024)})")
    lines.append(f"Reg budget: {budget}")
    return lines


def memory_lines(kernel) -> list:
    """`SMEM usage: ...` / `TMEM usage: ...` against the manager's capacities."""
    out = []
    s = kernel.smem_allocator
    if s is not None and is_static_int(s.total):
        out.append(f"SMEM usage: {s.total} B (data {s.data_bytes} B + barriers {s.barrier_bytes} B) / "
                   f"{kernel.options.smem_capacity_bytes} B capacity")
    t = kernel.tmem_allocator
    if t is not None and is_static_int(t.data_bytes):
        out.append(f"TMEM usage: {t.data_bytes} columns / {kernel.options.tmem_capacity_columns} columns capacity")
    return out


def allocator_report(alloc) -> str:
    """The `[smem-layout] SMEM Usage Report` (or TMEM) of one AllocatorModel, as the
    reference lays it out: rows sorted by offset (aliased names marked `*`), alias groups and
    phases numbered from 1, then the totals."""
    smem = alloc.space == "smem"
    unit = "B" if smem else "cols"
    groups = list(getattr(alloc, "alias_groups", ()) or ())
    aliased = [a for g in groups for ph in g for a in ph]
    rows = sorted(list(alloc.allocations) + aliased, key=lambda a: a.offset if is_static_int(a.offset) else 0)
    marked = {id(a) for a in aliased}
    show_align = smem and any(is_static_int(a.alignment) and a.alignment > 1 for a in rows)
    header = f"  {'Name':<30}{'Size':>7}" + (f"{'Align':>7}" if show_align else "") + f"{'Offset':>10}{'End':>10}"
    rule = "  " + _RULE * (len(header) - 2)
    lines = [f"[{alloc.space}-layout] {'SMEM' if smem else 'TMEM'} Usage Report", header, rule]
    for a in rows:
        name = a.name + (" *" if id(a) in marked else "")
        end = a.offset + a.size if is_static_int(a.offset) and is_static_int(a.size) else "?"
        lines.append(f"  {name:<30}{str(a.size):>7}" + (f"{str(a.alignment):>7}" if show_align else "")
                     + f"{str(a.offset):>10}{str(end):>10}")
    lines.append(rule)
    if groups:
        for i, g in enumerate(groups, 1):
            lines.append(f"  Alias group {i}:")
            for j, ph in enumerate(g, 1):
                lines.append(f"    Phase {j}: " + ", ".join(f"{a.name} ({a.size} {unit})" for a in ph))
        lines.append(rule)
    data, barriers = alloc.data_bytes, alloc.barrier_bytes
    if smem:
        lines.append(f"  {'Data SMEM:':<16}{str(data):>10} B")
        if is_static_int(barriers) and barriers > 0:
            lines.append(f"  {'Barrier SMEM:':<16}{barriers:>10} B")
            lines.append(f"  {'Total SMEM:':<16}{data + barriers:>10} B  (data + barriers)")
    lines.append(f"  {'Total:':<14}{str(data):>10} {unit}")
    sizes = [a.size for a in rows]
    if is_static_int(data) and all(is_static_int(x) for x in sizes) and sum(sizes) - data > 0:
        lines.append(f"  {'Alias savings:':<14}{sum(sizes) - data:>10} {unit}")
    return "\n".join(lines)


def allocator_reports(kernel) -> list:
    """The usage report of each attached allocator (SMEM first), each framed by blank lines."""
    out = []
    for a in (kernel.smem_allocator, kernel.tmem_allocator):
        if a is not None and is_static_int(a.data_bytes):
            out.append("\n" + allocator_report(a) + "\n")
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
    parts.extend(allocator_reports(kernel))
    for d in diags:
        parts.append(d.format())
    return "\n".join(parts)


def print_report(kernel, diags):
    print(report(kernel, diags))
