"""Hover: what the KernelModel knows about the resource, stage call or task under the cursor.

The target is found by range (the model's ranges come from `analyze_source`): among the
construction ranges of resources, pipelines and tasks, the range of each schedule step
(`smem.acquire()`, `smem.tma_load(...)`) and the TaskManager call, the smallest range that
contains the position wins. As a fallback, an identifier equal to a resource's `name=`
(the usual `smem_ab = SmemAB(name="smem_ab", ...)`) shows that resource.

Everything here is pure: model in, markdown out. Model values may be `UNKNOWN` (the
linter could not evaluate them) or `RUNTIME`; they print as `?` and `runtime`, and are
never tested for truth (the sentinels refuse `bool()`).
"""
from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Any, Iterable, List, Optional, Tuple

__all__ = ["Target", "find_target", "render_target", "render_rule", "contains", "fmt",
           "word_at"]

_INF = 1 << 30


@dataclass
class Target:
    kind: str                  # "resource" | "step" | "task" | "kernel"
    kernel: Any
    resource: Any = None
    step: Any = None
    task: Any = None


def _known_range(rng) -> bool:
    return rng is not None and getattr(rng, "path", "<unknown>") != "<unknown>"


def contains(rng, line1: int, col: int) -> bool:
    if not _known_range(rng):
        return False
    start = (rng.line, rng.column)
    if rng.end_line is None:
        end = (rng.line, _INF)
    else:
        end = (rng.end_line, _INF if rng.end_column is None else rng.end_column)
    return start <= (line1, col) <= end


def _size(rng) -> Tuple[int, int]:
    if rng.end_line is None:
        return (0, _INF)
    lines = rng.end_line - rng.line
    cols = (rng.end_column if rng.end_column is not None else _INF) - (rng.column if lines == 0 else 0)
    return (lines, cols)


def _candidates(kernel) -> Iterable[Tuple[Any, Target]]:
    yield kernel.range, Target("kernel", kernel)
    for r in kernel.resources.values():
        yield r.range, Target("resource", kernel, resource=r)
        if r.pipeline is not None:
            yield r.pipeline.range, Target("resource", kernel, resource=r)
    for t in kernel.tasks:
        yield t.range, Target("task", kernel, task=t)
        sched = t.schedule
        if sched is None:
            continue
        for step in sched.walk_steps():
            res = kernel.resources.get(step.resource)
            yield step.range, Target("step", kernel, resource=res, step=step, task=t)


def find_target(kernels: Iterable[Any], line1: int, col: int, word: Optional[str] = None
                ) -> Optional[Target]:
    best: Optional[Tuple[Tuple[int, int], Target]] = None
    kernels = list(kernels or ())
    for k in kernels:
        for rng, target in _candidates(k):
            if contains(rng, line1, col):
                size = _size(rng)
                if best is None or size < best[0]:
                    best = (size, target)
    if best is not None and best[1].kind != "kernel":
        return best[1]
    if word:
        for k in kernels:
            for r in k.resources.values():
                if r.name == word:
                    return Target("resource", k, resource=r)
    return best[1] if best is not None else None


# ---------------------------------------------------------------- rendering

def fmt(value: Any) -> str:
    from ts_runtime.model.values import RUNTIME, UNKNOWN
    if value is UNKNOWN:
        return "?"
    if value is RUNTIME:
        return "runtime"
    if value is None:
        return "-"
    if isinstance(value, enum.Enum):
        return str(value.value)
    if isinstance(value, tuple):
        return "(" + ", ".join(fmt(v) for v in value) + ")"
    return str(value)


def _warps(task) -> str:
    from ts_runtime.model.values import is_static_int
    start, n = task.warp_idx, task.num_warps
    if is_static_int(start) and is_static_int(n):
        if n == 1:
            return f"warp {start}"
        return f"warps {start}-{start + n - 1}"
    return f"warps {fmt(start)} (+{fmt(n)})"


def _task_line(task) -> str:
    return f"`{task.name}` ({_warps(task)})"


def _stage_name(stage) -> str:
    return getattr(stage, "value", str(stage))


def _resource_lines(kernel, r) -> List[str]:
    lines: List[str] = []
    cls = r.class_name or "?"
    kind = getattr(r.kind, "value", str(r.kind))
    extra = "" if kind == "plain" else f" ({kind.replace('_', ' ')})"
    lines.append(f"- class: `{cls}`{extra}")
    p = r.pipeline
    if p is not None:
        stages = fmt(p.num_stages)
        nbytes = fmt(p.num_bytes)
        lines.append(f"- pipeline: `{fmt(p.pipeline_type)}`, {stages} stage(s), "
                     f"{nbytes} byte(s) per stage")
        lines.append(f"- producer group: {fmt(p.producer_agent)} x {fmt(p.producer_group_size)}; "
                     f"consumer group: {fmt(p.consumer_agent)} x {fmt(p.consumer_group_size)}")
    elif r.is_barrier:
        lines.append("- barrier (no pipeline)")
    else:
        lines.append("- no pipeline (not staged)")
    producers = kernel.tasks_with_dst(r.rid)
    consumers = kernel.tasks_with_src(r.rid)
    lines.append("- producers: " + (", ".join(_task_line(t) for t in producers) or "none"))
    lines.append("- consumers: " + (", ".join(_task_line(t) for t in consumers) or "none"))
    if r.work_methods:
        works = []
        for name, w in r.work_methods.items():
            ret = ""
            if w.returns:
                ret = " -> " + ", ".join(str(x) for x in w.returns)
            works.append(f"`{name}` ({_stage_name(w.stage)}{ret})")
        lines.append("- work: " + ", ".join(works))
    allocs = [f"{a.space} `{a.name}` {fmt(a.size)} {'B' if a.space == 'smem' else 'columns'}"
              for a in list(r.smem) + list(r.tmem)]
    if allocs:
        lines.append("- allocations: " + ", ".join(allocs))
    if r.is_group and r.member_names:
        lines.append("- members: " + ", ".join(f"`{n}`" for n in r.member_names))
    return lines


def _step_lines(kernel, target: Target) -> List[str]:
    step, task, r = target.step, target.task, target.resource
    stage = _stage_name(step.stage)
    name = r.label if r is not None else f"resource#{step.resource}"
    head = f"**{stage}** of `{name}` in task {_task_line(task)}"
    if task.schedule is not None and task.schedule.name:
        head += f", schedule `{task.schedule.name}`"
    lines = [head]
    if step.label and r is not None and step.label in r.work_methods:
        w = r.work_methods[step.label]
        params = ", ".join(p.name + (" (constexpr)" if p.constexpr else "") for p in w.params)
        lines.append(f"- work method `{w.name}({params})`"
                     + (f" returns {', '.join(str(x) for x in w.returns)}" if w.returns else ""))
    if step.routes_in:
        lines.append("- inputs: " + ", ".join(f"`{ri.dest_arg}` <- `{ri.src_var}`"
                                              for ri in step.routes_in))
    return lines


def _task_lines(kernel, task) -> List[str]:
    lines = [f"- {_warps(task)}, {fmt(task.num_registers)} register(s)"]
    srcs = ", ".join(f"`{kernel.name(rid)}`" for rid in task.src) or "none"
    dsts = ", ".join(f"`{kernel.name(rid)}`" for rid in task.dst) or "none"
    lines.append(f"- consumes: {srcs}; produces: {dsts}")
    if task.schedule is not None:
        n = sum(1 for _ in task.schedule.walk_steps())
        lines.append(f"- schedule `{task.schedule.name}` ({n} step(s))")
    return lines


def render_target(target: Target) -> str:
    k = target.kernel
    if target.kind == "task":
        t = target.task
        return "\n".join([f"**task** `{t.name}`", ""] + _task_lines(k, t))
    if target.kind == "kernel":
        lines = [f"**TaskManager**: {len(k.tasks)} task(s), {len(k.resources)} resource(s)", ""]
        lines += [f"- {_task_line(t)}" for t in k.tasks]
        lines.append("")
        lines.append("Run the command `ts.showSchedule` for the schedule table.")
        return "\n".join(lines)
    r = target.resource
    out: List[str] = []
    if target.kind == "step":
        out += _step_lines(k, target)
        out.append("")
    if r is not None:
        out.append(f"**resource** `{r.label}`")
        out.append("")
        out += _resource_lines(k, r)
    return "\n".join(out)


def render_rule(code: str, rule, url: Optional[str]) -> str:
    if rule is None:
        return f"**{code}**: not a ts rule code"
    head = f"**{rule.code}** `{rule.name}` ({fmt(rule.severity)})"
    if url:
        head += f" - [docs]({url})"
    return head + "\n\n" + rule.doc()


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def word_at(line_text: str, col: int) -> Optional[str]:
    for m in _WORD.finditer(line_text):
        if m.start() <= col <= m.end():
            return m.group(0)
    return None


def to_plaintext(markdown: str) -> str:
    return re.sub(r"[*`]", "", markdown)
