"""Text rendering of checker runs: the per-task timeline and the BFS report (model.md §10)."""
from __future__ import annotations

from typing import List, Sequence, Tuple

from .state import ACCESS_NAMES

__all__ = ["format_timeline", "format_run", "format_held", "RULE_EQ", "RULE_DASH"]

RULE_EQ = "=" * 72
RULE_DASH = "-" * 72


def format_timeline(steps: Sequence[Tuple[int, str]], task_names: Sequence[str],
                    suffix: str = "", indent: str = "    ") -> str:
    """One column per task; the acting task's column shows the op, the others a dot.

    `steps` is a list of (task index, op label) in execution order.
    """
    width = max([5] + [len(n) for n in task_names] + [len(lbl) for _, lbl in steps]) + 2
    lines = [f"  timeline ({len(steps)} steps):",
             indent + "t  " + "".join(n.ljust(width) for n in task_names),
             indent + "-  " + "".join(("-" * len(n)).ljust(width) for n in task_names)]
    for t, (task, lbl) in enumerate(steps):
        cells = "".join((lbl if i == task else ".").ljust(width) for i in range(len(task_names)))
        lines.append(f"{indent}{t:<3}{cells}")
    if suffix:
        lines.append(f"  *** {suffix}")
    return "\n".join(lines)


def format_held(prog, state: tuple, frame: Sequence[int]) -> str:
    held = state[prog.layout.held_idx]
    parts = []
    for e in held:
        name = prog.res_label(e[0])
        slot = "" if e[1] < 0 else f"[s{e[1]}]"
        gen = f"(g{e[5]})" if e[4] != -1 else ""
        parts.append(f"{name}{slot}:{ACCESS_NAMES[e[2]]}{gen}@{prog.task_names[frame[e[3]]]}")
    return "{" + ", ".join(parts) + "}"


def _steps(prog, path) -> List[Tuple[int, str]]:
    return [(task, prog.ops[task][pos].label) for task, pos in path]


def format_run(run, messages: Sequence[Tuple[object, str]] = ()) -> str:
    """The exhaustive-checker block of one run (task lists, findings, summary)."""
    prog = run.program
    lines = [RULE_EQ, "Exhaustive interleaving checker - BFS exploration"]
    desc = prog.variant.describe()
    if prog.variant.any_skip:
        lines.append("Variant: skipped-tile execution" + (f" ({desc})" if desc else ""))
    elif desc:
        lines.append(f"Variant: {desc}")
    lines.append(RULE_EQ)
    for i, (name, tops) in enumerate(zip(prog.task_names, prog.ops)):
        lines.append(f"  Task {i} ({name}): [" + ", ".join(op.label for op in tops) + "]")
    if prog.alias_pairs:
        lines.append("  Alias pairs:")
        for a, b in prog.alias_pairs:
            lines.append(f"    {prog.res_label(a)} <-> {prog.res_label(b)}")
    lines.append(RULE_DASH)
    lay = prog.layout
    if run.complete_path is not None and not run.findings:
        s = run.complete_state
        lines.append(f"State #{run.complete_no}  cursors={tuple(lay.cursors(s))}  COMPLETE")
        lines.append(format_timeline(_steps(prog, run.complete_path), prog.task_names))
        lines.append("")
    for f, text in messages:
        s = f.state
        frame = f.detail.get("frame", list(range(lay.tasks)))
        cursors = [0] * lay.tasks
        for idx, real in enumerate(frame):
            cursors[real] = s[idx]
        held = format_held(prog, s, frame) if s[lay.held_idx] else ""
        lines.append(f"State #{f.state_no}  cursors={tuple(cursors)}" + (f"  held={held}" if held else ""))
        tag = {"deadlock": "DEADLOCK", "race": "RACE", "pdl": "PDL ORDER"}[f.kind]
        lines.append(format_timeline(_steps(prog, f.path), prog.task_names, suffix=f"{tag}: {text}"))
        lines.append("")
    kinds = [f.kind for f in run.findings]
    lines.append(RULE_EQ)
    lines.append(f"BFS {'complete' if run.finished else 'stopped'}: {run.states} states explored, "
                 f"{run.complete_states} complete, {kinds.count('deadlock')} deadlock(s), "
                 f"{kinds.count('race')} race(s), {kinds.count('pdl')} PDL order violation(s)")
    if run.hit_limit:
        lines.append(f"WARNING: exhaustive checker hit max_states={run.max_states} before completing the "
                     "search; the result is incomplete. Increase max_states or reduce the validated "
                     "schedule size/main-loop length for a complete proof.")
    if run.timed_out:
        lines.append("WARNING: exhaustive checker hit its time limit before completing the search; "
                     "the result is incomplete.")
    lines.append("Result: " + ("UNSAFE" if run.findings else ("SAFE" if run.finished else "INCOMPLETE")))
    lines.append(RULE_EQ)
    return "\n".join(lines)
