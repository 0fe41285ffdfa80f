"""Pipeline vocabulary TS user code needs (`CooperativeGroup`, `Agent`, `PipelineOp`).

When cutlass is installed these names are cutlass.pipeline's own classes (so tutorials
that mix `cutlass.pipeline` and `ts_runtime.pipeline` objects keep working); without it,
small pure-Python equivalents with the same constructor and attributes are used so
validation and linting need no CUDA stack. The TS pipeline classes (`TSPipelineTmaAsync`,
...) are built at kernel time by `ts_runtime.codegen`.
"""
from __future__ import annotations

import enum
import importlib.util
import sys

from .api_calls import checked_init

__all__ = ["CooperativeGroup", "Agent", "PipelineOp", "PipelineUserType", "make_pipeline_state",
           "TSPipelineTmaAsync", "TSPipelineUmmaUmma", "TSPipelineAsyncUmma"]


class Agent(enum.Enum):
    Thread = "Thread"
    Warp = "Warp"
    ThreadBlock = "ThreadBlock"
    ThreadBlockCluster = "ThreadBlockCluster"


class PipelineOp(enum.Enum):
    AsyncThread = "AsyncThread"
    TCGen05Mma = "TCGen05Mma"
    TmaLoad = "TmaLoad"
    ClcLoad = "ClcLoad"
    TmaStore = "TmaStore"
    Composite = "Composite"
    AsyncLoad = "AsyncLoad"


class PipelineUserType(enum.Enum):
    Producer = "Producer"
    Consumer = "Consumer"
    ProducerConsumer = "ProducerConsumer"


def _raise_440(msg):
    from .diagnostics import raise_finding
    from .source import caller_range
    raise_finding("TS440", ValueError, msg, caller_range())


@checked_init
class CooperativeGroup:
    """A group of `size` agents that arrive on a barrier (TS reads `.agent` and `.size`)."""

    def __init__(self, agent, size: int = 1, alignment=None):
        name = getattr(agent, "name", None)
        if name not in Agent.__members__:
            _raise_440(f"Unsupported agent type {agent!r}")
        if isinstance(size, int) and size <= 0:
            _raise_440("the number of threads in a CooperativeGroup must be greater than 0")
        self.agent = agent
        self.size = size

    def __repr__(self):
        return f"CooperativeGroup({self.agent}, {self.size})"


class PipelineState:
    def __init__(self, stages: int, count: int, index: int, phase: int):
        self.stages, self.count, self.index, self.phase = stages, count, index, phase

    def advance(self, k: int = 1):
        self.index += k
        self.count += k
        if self.index >= self.stages:
            self.index -= self.stages
            self.phase ^= 1


def make_pipeline_state(type: PipelineUserType, stages: int) -> PipelineState:
    phase = 1 if type is PipelineUserType.Producer else 0
    return PipelineState(stages, 0, 0, phase)


def _cutlass_loaded() -> bool:
    """Use cutlass's classes only when the user's program already imported cutlass."""
    return "cutlass" in sys.modules and importlib.util.find_spec("cutlass.pipeline") is not None


def __getattr__(name):
    if name in ("TSPipelineTmaAsync", "TSPipelineUmmaUmma", "TSPipelineAsyncUmma"):
        from .codegen import pipelines
        return getattr(pipelines, name)
    raise AttributeError(name)


if _cutlass_loaded():  # pragma: no cover - depends on the environment
    try:
        from cutlass.pipeline import Agent, CooperativeGroup, PipelineOp, PipelineUserType, make_pipeline_state  # noqa: F811
    except Exception:
        pass
