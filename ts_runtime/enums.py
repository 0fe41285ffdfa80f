"""Enumerations and schedule guards (pure Python; same names and values as the reference).

`ScheduleStage` is the vocabulary of every checker: ten operation kinds, five per side.
Guards (`FIRST_ITER`, `LAST_ITER`, `Every`, `OpaqueCondition`, `SKIPPABLE`) are plain
values so both front ends can build them and the checkers can evaluate them.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Optional

from .api_calls import checked_init

__all__ = [
    "PipelineType", "TileSchedulerType", "PipelineGroupMode", "SignalingThreads", "WorkAttr",
    "ScheduleStage", "ScheduleStageType", "LoopGuard", "BlockGuard", "IterationPredicate",
    "FIRST_ITER", "LAST_ITER", "Every", "OpaqueCondition", "SKIPPABLE", "guard_fires",
    "is_iteration_predicate", "is_loop_guard", "is_skippable_guard", "PRODUCER_STAGES",
    "CONSUMER_STAGES", "BLOCKING_STAGES", "WORK_STAGES",
]


def _raise(code, exc, msg):
    from .diagnostics import raise_finding
    from .source import caller_range
    raise_finding(code, exc, msg, caller_range())


class PipelineType(enum.Enum):
    AsyncAsync = "AsyncAsync"
    TmaAsync = "TmaAsync"
    TmaUmma = "TmaUmma"
    UmmaAsync = "UmmaAsync"
    AsyncUmma = "AsyncUmma"
    UmmaUmma = "UmmaUmma"
    ClcFetchAsync = "ClcFetchAsync"
    # ts extension (Hopper, not in the reference): TMA producer, wgmma warpgroup consumer
    # whose release first waits (wgmma.wait_group) for the wgmma reading the stage
    # (docs/hopper.md).
    TmaWgmma = "TmaWgmma"

    @property
    def producer_kind(self) -> str:
        return {"Async": "async", "Tma": "tma", "Umma": "umma", "Clc": "clc"}[
            next(p for p in ("Async", "Tma", "Umma", "Clc") if self.value.startswith(p))]

    @property
    def consumer_kind(self) -> str:
        if self.value.endswith("Wgmma"):
            return "wgmma"
        return "umma" if self.value.endswith("Umma") else "async"

    @property
    def hardware_producer(self) -> bool:
        """Producer is a DMA / tensor-core / CLC engine (TMA, UMMA, CLC), not threads."""
        return self in (PipelineType.TmaAsync, PipelineType.TmaUmma, PipelineType.UmmaAsync,
                        PipelineType.UmmaUmma, PipelineType.ClcFetchAsync, PipelineType.TmaWgmma)

    @property
    def hardware_consumer(self) -> bool:
        """Consumer reads asynchronously after release (tensor cores): a DMA consumer.

        TmaWgmma is not one: its release waits for the wgmma reads first (docs/hopper.md)."""
        return self in (PipelineType.TmaUmma, PipelineType.AsyncUmma, PipelineType.UmmaUmma)


class TileSchedulerType(enum.Enum):
    StaticPersistent = "StaticPersistent"
    ClcDynamicPersistent = "ClcDynamicPersistent"


class PipelineGroupMode(enum.Enum):
    Merge = "Merge"
    Fork = "Fork"
    FusedMerge = "FusedMerge"


class SignalingThreads(enum.IntFlag):
    All = 1
    CtaLeader = 2
    TaskWarpLeader = 4

    @classmethod
    def is_valid_combination(cls, value) -> bool:
        return isinstance(value, SignalingThreads) and int(value) in (1, 2, 4, 6)

    @classmethod
    def validate(cls, value, field_name: str = "signaling_threads"):
        if not isinstance(value, SignalingThreads):
            _raise("TS401", TypeError, f"{field_name} must be a SignalingThreads value, got {value!r}")
        if not cls.is_valid_combination(value):
            _raise("TS401", ValueError, f"unsupported SignalingThreads combination for {field_name}: {value!r}")
        return value

    def has_cta_leader(self) -> bool:
        return bool(self & SignalingThreads.CtaLeader)

    def has_task_warp_leader(self) -> bool:
        return bool(self & SignalingThreads.TaskWarpLeader)


class WorkAttr(enum.IntFlag):
    NONE = 0
    AUXILIARY = 1

    @classmethod
    def is_valid_combination(cls, value) -> bool:
        return isinstance(value, WorkAttr) and int(value) in (0, 1)

    @classmethod
    def validate(cls, value, field_name: str = "work_attrs"):
        if not isinstance(value, WorkAttr):
            _raise("TS232", TypeError, f"{field_name} must be a WorkAttr value, got {value!r}")
        if not cls.is_valid_combination(value):
            _raise("TS232", ValueError, f"unsupported WorkAttr combination: {value!r}")
        return value

    def is_auxiliary(self) -> bool:
        return bool(self & WorkAttr.AUXILIARY)


class ScheduleStage(enum.Enum):
    ConsumerAuxWork = "ConsumerAuxWork"
    ConsumerRelease = "ConsumerRelease"
    ConsumerTryWait = "ConsumerTryWait"
    ConsumerWait = "ConsumerWait"
    ConsumerWork = "ConsumerWork"
    ProducerAuxWork = "ProducerAuxWork"
    ProducerTryAcquire = "ProducerTryAcquire"
    ProducerAcquire = "ProducerAcquire"
    ProducerCommit = "ProducerCommit"
    ProducerWork = "ProducerWork"

    def __str__(self) -> str:
        return _STAGE_LABELS[self]

    @property
    def is_producer(self) -> bool:
        return self.value.startswith("Producer")

    @property
    def is_consumer(self) -> bool:
        return self.value.startswith("Consumer")

    @property
    def is_work(self) -> bool:
        return self in WORK_STAGES

    @property
    def is_aux(self) -> bool:
        return self in (ScheduleStage.ConsumerAuxWork, ScheduleStage.ProducerAuxWork)

    @property
    def short(self) -> str:
        return _STAGE_LABELS[self].strip()


_STAGE_LABELS = {
    ScheduleStage.ConsumerRelease: "<-ConsRel",
    ScheduleStage.ConsumerWait: "->ConsWai",
    ScheduleStage.ConsumerAuxWork: "  ConsAux",
    ScheduleStage.ConsumerTryWait: "  ConsTrW",
    ScheduleStage.ConsumerWork: "  ConsWrk",
    ScheduleStage.ProducerAuxWork: "  ProdAux",
    ScheduleStage.ProducerTryAcquire: "  ProdTrA",
    ScheduleStage.ProducerAcquire: "  ProdAcq<-",
    ScheduleStage.ProducerCommit: "  ProdCmt->",
    ScheduleStage.ProducerWork: "  ProdWrk",
}

PRODUCER_STAGES = frozenset(s for s in ScheduleStage if s.is_producer)
CONSUMER_STAGES = frozenset(s for s in ScheduleStage if s.is_consumer)
BLOCKING_STAGES = frozenset({ScheduleStage.ConsumerWait, ScheduleStage.ProducerAcquire})
WORK_STAGES = frozenset({ScheduleStage.ConsumerWork, ScheduleStage.ProducerWork,
                         ScheduleStage.ConsumerAuxWork, ScheduleStage.ProducerAuxWork})


class ScheduleStageType(enum.Enum):
    Head = "Head"
    Loop = "Loop"
    LoopFirstIter = "LoopFirstIter"
    LoopLastIter = "LoopLastIter"
    Tail = "Tail"


class BlockGuard:
    """Marker base of every block guard."""


class LoopGuard(BlockGuard, enum.Enum):
    Always = "Always"
    LastIter = "LastIter"
    FirstIter = "FirstIter"


class IterationPredicate(BlockGuard):
    """A guard decidable from the iteration index alone."""

    tag = "?"

    def fires(self, iter_idx: int, num_iters: int) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError


class _FirstIter(IterationPredicate):
    tag = "F"

    def fires(self, iter_idx: int, num_iters: int) -> bool:
        return iter_idx == 0

    def __repr__(self) -> str:
        return "FIRST_ITER"


class _LastIter(IterationPredicate):
    tag = "L"

    def fires(self, iter_idx: int, num_iters: int) -> bool:
        return num_iters > 0 and iter_idx == num_iters - 1

    def __repr__(self) -> str:
        return "LAST_ITER"


FIRST_ITER = _FirstIter()
LAST_ITER = _LastIter()

_INT32_MAX = 2**31 - 1


@checked_init
@dataclass(frozen=True)
class Every(IterationPredicate):
    period: int
    start: int = 0

    tag = "P"

    def __post_init__(self):
        from .model.values import check_every  # shared with ts-lint
        for code, exc, msg in check_every(self.period, self.start):
            _raise(code, exc, msg)

    def fires(self, iter_idx: int, num_iters: int) -> bool:
        return iter_idx >= self.start and (iter_idx - self.start) % self.period == 0


@dataclass(frozen=True)
class OpaqueCondition(BlockGuard):
    key: Any
    negated: bool = False
    resource: Any = None
    method_label: Optional[str] = None
    result_name: Optional[str] = None

    tag = "I"


class _SkippableGuard(BlockGuard):
    tag = "S"

    def __repr__(self) -> str:
        return "SKIPPABLE"


SKIPPABLE = _SkippableGuard()


def is_iteration_predicate(guard) -> bool:
    return isinstance(guard, IterationPredicate)


def is_loop_guard(guard) -> bool:
    return isinstance(guard, (IterationPredicate, OpaqueCondition, LoopGuard))


def is_skippable_guard(guard) -> bool:
    return guard is SKIPPABLE


def guard_fires(guard, iter_idx: int, num_iters: int, *, opaque_assignment=None) -> bool:
    """Whether a guarded entry runs on 0-based iteration `iter_idx` of `num_iters`."""
    if guard is None or guard is LoopGuard.Always:
        return True
    if guard is LoopGuard.FirstIter:
        return iter_idx == 0
    if guard is LoopGuard.LastIter:
        return num_iters > 0 and iter_idx == num_iters - 1
    if isinstance(guard, IterationPredicate):
        return guard.fires(iter_idx, num_iters)
    if isinstance(guard, OpaqueCondition):
        value = bool((opaque_assignment or {}).get(guard.key, False))
        return value != guard.negated
    if guard is SKIPPABLE:
        return True
    raise ValueError(f"TS905: unknown guard type {guard!r}")
