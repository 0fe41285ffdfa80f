"""`Task`: binds a captured schedule to a warp range (tracing front end).

Construction lowers the schedule (shared `model.lower`) and runs the task-phase checks;
errors raise `ScheduleValidationError` at the `Task(...)` line, like the reference raises
its ValueError there.
"""
from __future__ import annotations

from typing import Any, Optional

from .diagnostics import ScheduleValidationError, Severity, raise_finding
from .locate import call_arguments
from .model.kernel import TaskModel
from .model.lower import lower
from .model.task_checks import check_lowered_task, check_task_fields
from .rules.registry import make_diagnostic
from .api_calls import CheckedCall
from .source import caller_range, construction_range

__all__ = ["Task", "emit_ptx_comments", "normalize_and_validate_schedule_list"]

emit_ptx_comments = True


def _qualname(cls) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def schedule_value_message(task_name: str, got: str, schedule_fn: Optional[str] = None) -> str:
    """TS112's text for a `schedule=` value that is not a captured schedule (the same from
    ts-lint): the `@schedule` function itself (not called), or any other object."""
    if schedule_fn is not None:
        return (f"Task '{task_name}': schedule= is the @schedule function '{schedule_fn}' itself, not a "
                f"captured schedule: call it with the task's resources (schedule={schedule_fn}(...))")
    return (f"Task '{task_name}': schedule= must be a captured schedule (the result of calling an "
            f"@schedule function), got {got}")


def resource_list_message(task_name: str, key: str, got: str) -> str:
    """TS140's text (the same from ts-lint): `src_resources=smem` instead of `[smem]`."""
    return (f"Task '{task_name}': {key} must be a list of resources, got an object of type '{got}' "
            f"(Python raises TypeError: '{got}' object is not iterable; write {key}=[...])")


def task_super_init_message(cls_name: str) -> str:
    """TS139's text (the same from ts-lint)."""
    return (f"{cls_name}.__init__ does not call super().__init__(...): the Task fields (name, "
            f"src_resources, dst_resources, schedule, ...) are never set")


class Task(metaclass=CheckedCall):
    """A warp-specialized task: warps `[warp_idx, warp_idx + num_warps)` run `schedule`."""

    def __init__(self, src_resources, dst_resources, warp_idx, num_warps, *, schedule,
                 num_registers=None, name="", debug_print=False, iket_enable_profiling=False,
                 iket_profiling_stages=None, iket_profiling_resources=None, run_only_on_cta_id=None):
        # the task is placed where it is made (`SegmentTask(...)`, not a subclass's shared
        # super().__init__ line); its argument ranges are those of the call that passes them
        rng = construction_range(self)
        direct = caller_range()
        self._ts_range = rng
        self.name = name
        args = call_arguments(direct, ("src_resources", "dst_resources", "warp_idx", "num_warps"))
        for key, v in (("src_resources", src_resources), ("dst_resources", dst_resources)):
            # a single resource (or a number): `list()` would raise a bare TypeError
            if v is not None and not isinstance(v, (list, tuple)) and not hasattr(type(v), "__iter__"):
                raise_finding("TS140", TypeError, resource_list_message(name, key, type(v).__name__),
                              args.get(key, rng))
        self.src_resources = list(src_resources or [])
        self.dst_resources = list(dst_resources or [])
        self.warp_idx = warp_idx
        self.num_warps = num_warps
        self.warp_start = warp_idx
        self.warp_end = warp_idx + num_warps if isinstance(warp_idx, int) and isinstance(num_warps, int) else None
        self.num_registers = num_registers
        self.debug_print = debug_print
        self.run_only_on_cta_id = run_only_on_cta_id
        self.iket_enable_profiling = iket_enable_profiling
        self.iket_profiling_stages = iket_profiling_stages
        self.iket_profiling_resources = iket_profiling_resources
        self.schedule = schedule
        self.default_num_registers = None
        diags = []

        def report(code, message, r=None):
            diags.append(make_diagnostic(code, message, r or rng))

        from .tracing import collect_resources
        resources: dict = {}
        collect_resources(self.src_resources + self.dst_resources, resources)
        src = [id(r) for r in self.src_resources]
        dst = [id(r) for r in self.dst_resources]
        self.model = TaskModel(name=name, warp_idx=warp_idx, num_warps=num_warps, src=src, dst=dst,
                               num_registers=num_registers, run_only_on_cta_id=run_only_on_cta_id,
                               class_mro=tuple(_qualname(c) for c in type(self).__mro__), range=rng,
                               arg_ranges=args)
        for code, message, key in check_task_fields(self.model, resources):
            report(code, message, self.model.at(key) if key else rng)
        if schedule is None:
            report("TS112", f"Task '{name}': 'schedule' is required", args.get("schedule", rng))
        elif getattr(schedule, "model", None) is None:
            # the reference fails reading `schedule.schedule_list` (AttributeError)
            fn = getattr(schedule, "__ts_schedule__", None)
            report("TS112", schedule_value_message(name, type(schedule).__name__,
                                                   getattr(fn, "__name__", "?") if fn is not None else None),
                   args.get("schedule", rng))
        else:
            resources.update({k: v for k, v in _schedule_resources(schedule).items() if k not in resources})
            self.model.schedule = schedule.model
            self.model.lowered = lower(schedule.model, resources, report, self.model.class_mro, rng)
            for code, message, key in check_lowered_task(self.model, resources):
                report(code, message, self.model.at(key) if key else rng)
            unroll = self.model.lowered.unroll
            if unroll is not None and (isinstance(unroll, bool) or not isinstance(unroll, int)):
                report("TS113", f"'unroll' must be a compile-time int or None, got {unroll!r}",
                       self.model.lowered.domain_range)
        self._resources = resources
        errors = [d for d in diags if d.severity is Severity.ERROR]
        if errors:
            raise ScheduleValidationError(errors, header=f"Task '{name}' is invalid")
        self._post_lowering()

    @staticmethod
    def _ts_constructed(obj):
        """TS139 after a construction (CheckedCall): a subclass's own `__init__` that never
        ran `Task.__init__` leaves the task without its fields."""
        if "_ts_range" not in obj.__dict__:
            from .diagnostics import raise_finding
            raise_finding("TS139", AttributeError, task_super_init_message(type(obj).__name__), caller_range())

    def _post_lowering(self):
        low = self.model.lowered
        self.head_schedule_list = low.head
        self.loop_schedule_list = low.loop
        self.tail_schedule_list = low.tail
        self.domain_start = low.domain_start
        self.domain = low.domain_end
        self.step = low.domain_step
        self.unroll = low.unroll
        self.skip_if = low.skip_if
        self.work_queue = self.schedule.objects.get(low.work_queue) if low.work_queue else None
        self.is_persistent = any(_is_wq(r) for r in self.src_resources)
        self.resources = self.src_resources + [r for r in self.dst_resources if r not in self.src_resources]

    def get_domain(self, tile_coord):
        """Per-tile loop end for dynamic domains; override on a Task subclass."""
        raise NotImplementedError("override get_domain on a Task subclass for a dynamic domain")

    def make_task_cache(self):
        return None

    def is_selected(self, warp_idx=None):
        """True when the (given or current) warp runs this task, as the reference's
        `Task.is_selected()`; inside a kernel without `warp_idx` it reads the warp index
        (and the CTA rank for `run_only_on_cta_id`) and returns a device predicate."""
        if warp_idx is not None:
            return self.warp_start <= warp_idx < self.warp_end
        import cutlass.cute as cute
        from .codegen.control import logical_and
        from .codegen.runtime import _warp_predicate
        warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        pred = _warp_predicate(warp, self.warp_start, self.warp_end - self.warp_start)
        if self.run_only_on_cta_id is not None:
            rank = cute.arch.make_warp_uniform(cute.arch.block_idx_in_cluster())
            pred = logical_and(pred, rank == self.run_only_on_cta_id)
        return pred

    def run(self):
        from .codegen.task_runner import run_task
        return run_task(self)

    def __repr__(self):
        return f"Task({self.name!r}, warps [{self.warp_idx}, {self.warp_end}))"


def _is_wq(obj) -> bool:
    from .resources import WorkQueue
    return isinstance(obj, WorkQueue)


def _schedule_resources(schedule) -> dict:
    from .tracing import collect_resources
    out: dict = {}
    collect_resources(list(schedule.objects.values()), out)
    return out


def normalize_and_validate_schedule_list(schedule_list):
    """Legacy flat schedule lists are not supported (TS134/TS135 are open): use @schedule."""
    raise NotImplementedError("legacy schedule lists are not supported by ts_runtime; use @schedule")
