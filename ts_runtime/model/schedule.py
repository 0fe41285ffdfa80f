"""The captured schedule tree (what an @schedule function records)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ..enums import ScheduleStage
from ..source import SourceRange, UNKNOWN_RANGE


@dataclass(frozen=True)
class Token:
    """One produced value (`returns=` variable) of one recorded step; None var = no value."""
    step_uid: int
    var: Optional[str]
    resource: int
    generation: int = 0


@dataclass
class RouteIn:
    """Data-flow edge into a step: `src_var` of step `src_uid` feeds argument `dest_arg`."""
    src_uid: int
    src_var: str
    dest_arg: str


@dataclass
class Step:
    uid: int
    resource: int
    stage: ScheduleStage
    label: Optional[str] = None
    via_group: Optional[int] = None
    range: SourceRange = UNKNOWN_RANGE
    routes_in: list = field(default_factory=list)
    constexpr_kwargs: dict = field(default_factory=dict)
    returned: tuple = ()

    kind = "step"


@dataclass
class Block:
    """kind: "domain_loop" | "work_tile_loop" | "guard" | "skippable"."""
    kind: str
    range: SourceRange = UNKNOWN_RANGE
    body: list = field(default_factory=list)
    guard: Any = None
    start: Any = 0
    end: Any = None
    step: Any = 1
    unroll: Any = None
    work_queue: Optional[int] = None
    skip_if: Any = None


@dataclass
class ScheduleModel:
    name: str
    body: list = field(default_factory=list)
    params: list = field(default_factory=list)      # resource ids, in parameter order
    range: SourceRange = UNKNOWN_RANGE
    diagnostics: list = field(default_factory=list)  # capture findings (errors + warnings)

    def walk_steps(self):
        def rec(nodes):
            for n in nodes:
                if isinstance(n, Step):
                    yield n
                else:
                    yield from rec(n.body)
        yield from rec(self.body)
