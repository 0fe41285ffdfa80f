"""The shared model: pure data that both front ends fill in and every rule reads.

Nothing here imports cutlass, CUDA or the DSL front end.
"""
from .values import UNKNOWN, RUNTIME, DynamicBound, SkipIf, is_known, is_static_int
from .schedule import Step, Block, ScheduleModel, Token, RouteIn
from .kernel import (
    PipelineModel, WorkMethodModel, ParamSpec, AllocationModel, ResourceModel, ResourceKind,
    TaskModel, GraphEdge, ManagerOptions, AllocatorModel, KernelModel,
)
from .lowered import Entry, LoweredSchedule, Route

__all__ = [
    "UNKNOWN", "RUNTIME", "DynamicBound", "SkipIf", "is_known", "is_static_int",
    "Step", "Block", "ScheduleModel", "Token", "RouteIn",
    "PipelineModel", "WorkMethodModel", "ParamSpec", "AllocationModel", "ResourceModel",
    "ResourceKind", "TaskModel", "GraphEdge", "ManagerOptions", "AllocatorModel", "KernelModel",
    "Entry", "LoweredSchedule", "Route",
]
