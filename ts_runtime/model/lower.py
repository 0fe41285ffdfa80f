"""Lowering a captured schedule tree to head / loop / tail entries (model.md §3).

Shared by `Task(...)` at run time and by ts-lint when it sees a `Task(...)` call, so
the task-phase findings (TS108-TS111, TS128) come from one place.
"""
from __future__ import annotations

from typing import Optional

from ..enums import SKIPPABLE, IterationPredicate, OpaqueCondition
from ..source import UNKNOWN_RANGE
from .lowered import HEAD, LOOP, TAIL, Entry, LoweredSchedule, Route
from .schedule import Block, ScheduleModel, Step
from .values import UNKNOWN, DynamicBound, is_static_int


def lower(schedule: ScheduleModel, resources: dict, report, task_mro: tuple = (),
          task_range=UNKNOWN_RANGE) -> LoweredSchedule:
    """Flattens `schedule`; `report(code, message, range)` receives task-phase findings."""
    out = LoweredSchedule()
    state = {"passed_loop": False, "n_loops": 0}
    counters: dict = {}
    by_uid: dict = {}

    def add(step: Step, section: str, guard, in_wtl: bool, in_skippable: bool):
        key = (step.resource, step.stage, section)
        idx = counters.get(key, 0)
        counters[key] = idx + 1
        res = resources.get(step.resource)
        e = Entry(index=len(out.entries), resource=step.resource, stage=step.stage, section=section,
                  guard=guard, call_idx=idx, label=step.label, via_group=step.via_group,
                  range=step.range, step_uid=step.uid, skippable=in_skippable and section != LOOP,
                  constexpr_kwargs=dict(step.constexpr_kwargs))
        if wtl_present and not in_wtl and res is not None and (step.stage.is_aux or res.is_barrier):
            if section == HEAD:
                e.pre_wtl = True
            else:
                e.post_wtl = True
        out.entries.append(e)
        by_uid[step.uid] = e
        return e

    wtl_present = any(isinstance(n, Block) and n.kind == "work_tile_loop" for n in schedule.body)
    out.has_work_tile_loop = wtl_present

    def walk(nodes, in_loop=False, guard=None, in_wtl=False, in_skippable=False):
        for n in nodes:
            if isinstance(n, Step):
                if in_loop:
                    section = LOOP
                else:
                    section = TAIL if state["passed_loop"] else HEAD
                g = guard
                if g is not None and section != LOOP:
                    report("TS128", "guarded (when_true/when_false or iteration) entries can only be used "
                           "inside the domain_loop()", n.range)
                    g = None
                add(n, section, g, in_wtl, in_skippable)
            elif n.kind == "domain_loop":
                state["n_loops"] += 1
                if state["n_loops"] > 1:
                    report("TS108", "at most one domain_loop() per schedule is supported", n.range)
                else:
                    out.has_domain_loop = True
                    out.domain_start, out.domain_end, out.domain_step = n.start, n.end, n.step
                    out.unroll = n.unroll
                    out.domain_range = n.range
                    for b, nm in ((n.start, "start"), (n.step, "step")):
                        if isinstance(b, DynamicBound):
                            report("TS109", f"only a dynamic domain_loop() end is supported; the {nm} bound "
                                   f"'{b.name}' is callable", n.range)
                    if isinstance(n.end, DynamicBound):
                        _check_getter(n.end, task_mro, report, n.range)
                walk(n.body, True, guard, in_wtl, in_skippable)
                state["passed_loop"] = True
            elif n.kind == "work_tile_loop":
                out.work_queue = n.work_queue
                out.skip_if = n.skip_if
                walk(n.body, in_loop, guard, True, in_skippable)
            elif n.kind == "skippable":
                walk(n.body, in_loop, guard, in_wtl, True)
            else:  # guard
                walk(n.body, in_loop, n.guard, in_wtl, in_skippable)

    walk(schedule.body)
    if not out.has_domain_loop:
        report("TS110", f"schedule '{schedule.name}' has no static domain: every schedule needs a "
               "domain_loop() (padding tasks use `with domain_loop(1): pass`)", schedule.range)
    # routing table: route each RouteIn to the writer entry
    for n in schedule.walk_steps():
        for r in n.routes_in:
            w, rd = by_uid.get(r.src_uid), by_uid.get(n.uid)
            if w is not None and rd is not None:
                out.routes.append(Route(w.index, rd.index, r.src_var, r.dest_arg))
    return out


def _check_getter(b: DynamicBound, task_mro: tuple, report, rng):
    """TS111: the callable end must be `get_domain` of a Task subclass in the task's MRO."""
    if not task_mro:
        return
    if b.name != "get_domain" or b.owner not in task_mro:
        report("TS111", f"dynamic domain end '{b.owner.rsplit('.', 1)[-1]}.{b.name}' must reference a "
               "`get_domain` method inherited by this task's class", rng)
    elif b.owner.rsplit(".", 1)[-1] == "Task" and b.owner.startswith(("ts_runtime", "cutlass")):
        report("TS111", "dynamic domain end must be a `get_domain` override on a Task subclass, "
               "not Task.get_domain itself", rng)
