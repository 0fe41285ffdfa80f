"""`PipelineGroup`: one barrier set shared by several resources driven together."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .diagnostics import raise_finding
from .enums import PipelineGroupMode
from .resources import MemoryResource

__all__ = ["PipelineGroup", "PipelineGroupMode"]


@dataclass(kw_only=True, eq=False)
class PipelineGroup(MemoryResource):
    """Merge (N producers -> 1 consumer), Fork (1 -> N) or FusedMerge over `members`."""
    members: list = field(default_factory=list)
    mode: PipelineGroupMode = PipelineGroupMode.Merge

    def __post_init__(self):
        from .model.group_checks import check_membership, check_mode, derive_group_config
        from .tracing import pipeline_model
        self.is_barrier = True
        for code, exc, msg in check_mode(self.name, self.mode, type(self.mode).__name__):
            raise_finding(code, exc, msg, self._ts_range)
        owners = [getattr(m, "pipeline_group", None) for m in self.members]
        for code, exc, msg in check_membership(
                [(m.name, id(m), None if g is None or g is self else id(g)) for m, g in zip(self.members, owners)]):
            raise_finding(code, exc, msg, self._ts_range)
        explicit = pipeline_model(self.pipeline_config) if self.pipeline_config is not None else None
        merged, findings = derive_group_config(
            self.name, self.mode,
            [(m.name, pipeline_model(m.pipeline_config)) if m.pipeline_config is not None else
             (m.name, None, _lost_config(m)) for m in self.members], explicit)
        for code, exc, msg, *blame in findings:
            raise_finding(code, exc, msg, self._member_config_range(blame[0]) if blame else self._ts_range)
        self._merged_model = merged
        for m in self.members:
            object.__setattr__(m, "pipeline_group", self)

    def _member_config_range(self, member_name):
        """Where a member's pipeline_config is given (its constructor keyword)."""
        from .locate import call_arguments
        for m in self.members:
            if m.name == member_name:
                rng = getattr(m, "_ts_range", None)
                return call_arguments(rng).get("pipeline_config", rng) if rng else self._ts_range
        return self._ts_range

    def __getattr__(self, attr):
        if attr.startswith("_"):
            raise AttributeError(attr)
        members = self.__dict__.get("members", ())
        for m in members:
            if getattr(m, "name", None) == attr:
                from .schedule_builder import _MemberRef
                return _MemberRef(m, self)
        # The exception carries the finding: a caught probe (hasattr) leaves no error.
        from .diagnostics import TSAttributeError
        from .rules.registry import make_diagnostic
        from .source import caller_range
        d = make_diagnostic("TS474", unknown_member_message(self.__dict__.get("name", ""), attr,
                                                           [getattr(m, "name", "") for m in members]),
                            caller_range())
        raise TSAttributeError(f"TS474: {d.message} ({d.range})", [d])

    @property
    def group_pipeline(self):
        return self.members[0].pipeline if self.members else None

    @property
    def is_heterogeneous(self) -> bool:
        return len({m.pipeline_config.pipeline_type for m in self.members if m.pipeline_config}) > 1

    @property
    def num_barriers_per_stage(self) -> int:
        return 2 if self.mode is PipelineGroupMode.FusedMerge else len(self.members) + 1

    def create(self):
        from .codegen.groups import create_group
        create_group(self)


def unknown_member_message(group: str, attr: str, members) -> str:
    """TS474's text (the same from ts-lint)."""
    names = ", ".join(f"'{n}'" for n in members) or "none"
    return f"PipelineGroup '{group}' has no member or attribute '{attr}' (members: {names})"


def _lost_config(member):
    """The member's class name when its own `__init__` dropped the pipeline_config given
    to it (resources.py records what it dropped), else None."""
    lost = getattr(member, "_ts_lost_init", None)
    return type(member).__name__ if lost and "pipeline_config" in lost else None
