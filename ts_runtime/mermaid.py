"""Mermaid flowchart of the dependency graph (edge kind: data / ordering / ping-pong / work-queue)."""
from __future__ import annotations


def edge_kind(kernel, down, up) -> str:
    d, u = kernel.res(down), kernel.res(up)
    if d.is_work_queue or u.is_work_queue:
        return "work-queue"
    if down == up:
        return "ping-pong"
    if d.is_barrier or u.is_barrier:
        return "ordering"
    return "data"


def mermaid_graph(kernel, direction="TD", include_resource_details=True, collapse_work_queue_edges=True) -> str:
    if not direction:
        from .diagnostics import raise_finding
        from .source import caller_range
        raise_finding("TS904", ValueError, "direction must be a non-empty Mermaid flowchart direction "
                      "(e.g. 'TD' or 'LR')", caller_range())
    ids = {}
    lines = [f"flowchart {direction}"]
    for rid, r in kernel.resources.items():
        ids[rid] = f"R{len(ids)}"
        label = r.label
        if include_resource_details:
            p = r.pipeline
            detail = f"\\n<{p.pipeline_type.value}>,stages={p.num_stages}" if p is not None and hasattr(p.pipeline_type, "value") else ""
            label += detail + ("\\nbarrier" if r.is_barrier else "")
        lines.append(f'    {ids[rid]}["{label}"]')
    wq_done = False
    for e in kernel.graph:
        kind = edge_kind(kernel, e.downstream, e.upstream)
        backing = [t for t in kernel.tasks if e.upstream in t.src and e.downstream in t.dst]
        who = ", ".join(f"{t.name}[{t.warp_idx}:{t.warp_end})" for t in backing)
        if kind == "work-queue" and collapse_work_queue_edges:
            if not wq_done:
                wq = e.upstream if kernel.res(e.upstream).is_work_queue else e.downstream
                lines.append(f'    {ids[wq]} -->|"tile token"| PT["all persistent tasks"]')
                wq_done = True
            continue
        lines.append(f'    {ids[e.upstream]} -->|"{who} {kind}"| {ids[e.downstream]}')
    return "\n".join(lines)
