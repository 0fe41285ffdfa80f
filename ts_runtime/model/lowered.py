"""The flat (head / loop / tail) form of a task schedule that every checker consumes."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ..enums import ScheduleStage
from ..source import SourceRange, UNKNOWN_RANGE
from .values import UNKNOWN

HEAD, LOOP, TAIL = "head", "loop", "tail"


@dataclass
class Entry:
    index: int
    resource: int
    stage: ScheduleStage
    section: str
    guard: Any = None
    call_idx: int = 0
    label: Optional[str] = None
    via_group: Optional[int] = None
    range: SourceRange = UNKNOWN_RANGE
    step_uid: int = -1
    pre_wtl: bool = False
    post_wtl: bool = False
    skippable: bool = False
    constexpr_kwargs: dict = field(default_factory=dict)

    @property
    def slot(self):
        return (self.resource, self.stage, self.section, self.call_idx)

    @property
    def tag(self) -> str:
        if self.section == HEAD:
            return "H"
        if self.section == TAIL:
            return "T"
        return getattr(self.guard, "tag", "") if self.guard is not None else ""


@dataclass
class Route:
    writer: int          # entry index
    reader: int          # entry index
    src_var: str
    dest_arg: str


@dataclass
class LoweredSchedule:
    entries: list = field(default_factory=list)
    routes: list = field(default_factory=list)
    domain_start: Any = 0
    domain_end: Any = None
    domain_step: Any = 1
    unroll: Any = None
    has_domain_loop: bool = False
    has_work_tile_loop: bool = False
    work_queue: Optional[int] = None
    skip_if: Any = None
    domain_range: SourceRange = UNKNOWN_RANGE
    # What a dynamic `end` getter returned when probed at tile (0, 0, 0): an int, RUNTIME
    # (a non-int value), or UNKNOWN when it was not probed (ts-lint). Filled by the front end.
    domain_probe: Any = UNKNOWN

    def section(self, name: str) -> list:
        return [e for e in self.entries if e.section == name]

    @property
    def head(self):
        return self.section(HEAD)

    @property
    def loop(self):
        return self.section(LOOP)

    @property
    def tail(self):
        return self.section(TAIL)

    @property
    def dynamic_domain(self) -> bool:
        from .values import DynamicBound
        return isinstance(self.domain_end, DynamicBound)
