"""ts_runtime: a drop-in, checked implementation of NVIDIA's Task Scheduling (TS) DSL.

Replace `cutlass.experimental.task_scheduling` with `ts_runtime` in your imports. This
package (model, rules, checker, DSL) imports no cutlass; only `ts_runtime.codegen` does.
"""
from . import pipeline
from .diagnostics import Diagnostic, ScheduleError, ScheduleValidationError, Severity, TSWarning
from .enums import Every, IterationPredicate, OpaqueCondition, WorkAttr
from .resources import consumer_work, producer_work
from .schedule_builder import domain_loop, schedule, when_false, when_true, work_tile_loop

__all__ = [
    "consumer_work", "domain_loop", "Every", "IterationPredicate", "OpaqueCondition", "pipeline",
    "producer_work", "schedule", "when_false", "when_true", "WorkAttr", "work_tile_loop",
    "ScheduleValidationError", "ScheduleError", "Diagnostic", "Severity", "TSWarning",
]
__version__ = "0.1.0"
