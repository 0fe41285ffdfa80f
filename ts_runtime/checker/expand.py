"""Flattening task schedules into the step lists both simulators run (model.md §7.1, §9).

A task's lowered schedule (head / loop / tail entries with guards) becomes one flat list:
`head + loop x n + tail`, each loop entry kept on iteration `i` iff its guard fires at
`(i, n)`. The exhaustive checker additionally

* runs persistent kernels (a WorkQueue exists) for two work tiles: pre-WTL head entries
  once, then the per-tile part (head, loop, tail minus the pre/post-WTL entries) per tile,
  then post-WTL tail entries once;
* uses the skipped-tile list on tiles where `skip_if` holds (non-skippable head and tail
  entries only, no loop iterations);
* splits work calls on unpipelined, non-barrier resources into two steps, so another task
  can interleave inside the call (see `split_work`).

`n` is exact when the loop bounds are Python ints (or a probed dynamic getter returned
one); otherwise the reference's fallback count is used and the result says so. A bound
the front end could not evaluate (`UNKNOWN`) makes `n` unknown: callers must then not
report anything that depends on it.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Iterator, List, NamedTuple, Optional, Sequence, Tuple

from ..enums import LoopGuard, OpaqueCondition, ScheduleStage, guard_fires
from ..model.kernel import ResourceKind
from ..model.lowered import HEAD, LOOP, TAIL, Entry, LoweredSchedule
from ..model.values import RUNTIME, UNKNOWN, DynamicBound, is_static_int

__all__ = [
    "IterationCount", "iteration_count", "ExpandedEntry", "expand_loop",
    "expand_skipped", "expand_task", "opaque_keys", "opaque_assignments", "Variant",
    "variants", "table_fallback", "is_persistent_kernel", "domain_probe",
]

_WORK_QUEUE = ResourceKind.WORK_QUEUE
_GUARD_TAGS = {LoopGuard.Always: "", LoopGuard.FirstIter: "F", LoopGuard.LastIter: "L"}


# ---------------------------------------------------------------------------- counts
@dataclass(frozen=True)
class IterationCount:
    """Number of domain-loop iterations used for one task.

    `n` is None when a bound is UNKNOWN (nothing that depends on it may be reported);
    `exact` is False when the reference's fallback count was used (a traced bound or a
    dynamic getter that did not return an int); `reason` says which bound.
    """
    n: Optional[int]
    exact: bool = True
    reason: str = ""


_EXACT: dict = {}


def _exact(n: int) -> IterationCount:
    """IterationCount(n), one object per count (a frozen dataclass is slow to make, and
    every check asks for one per task)."""
    got = _EXACT.get(n)
    if got is None:
        got = IterationCount(n)
        if n < 4096:                     # (a bounded table)
            _EXACT[n] = got
    return got


def domain_probe(low: LoweredSchedule):
    """What the front end recorded for a dynamic getter probed at tile (0, 0, 0)."""
    return getattr(low, "domain_probe", UNKNOWN)


def iteration_count(low: Optional[LoweredSchedule], fallback: int = 1) -> IterationCount:
    """model.md §7.1: exact count for int bounds, else `len(range(start|0, max(1, fallback), step|1))`."""
    if low is None or not low.has_domain_loop:
        return _exact(0)
    start, end, step = low.domain_start, low.domain_end, low.domain_step
    if type(start) is int and type(end) is int and type(step) is int and step:
        return _exact(len(range(start, end, step)))     # (the common case)
    if isinstance(end, DynamicBound):
        probe = domain_probe(low)
        if probe is UNKNOWN:
            return IterationCount(None, False, f"dynamic domain '{end.name}' was not probed")
        reason = f"dynamic domain '{end.name}' did not yield an int at tile (0, 0, 0)"
        end = probe if is_static_int(probe) else RUNTIME
    else:
        reason = "domain bound is not a compile-time int"
    for b in (start, end, step):
        if b is UNKNOWN:
            return IterationCount(None, False, "domain bound is unknown")
    if is_static_int(start) and is_static_int(end) and is_static_int(step):
        if step == 0:
            return IterationCount(None, False, "domain step is 0")
        return IterationCount(len(range(start, end, step)))
    s0 = start if is_static_int(start) else 0
    st = step if is_static_int(step) and step != 0 else 1
    hi = max(1, fallback)
    if st > 0:
        n = len(range(s0, hi, st))
    else:  # mirrored: count as if the loop ran upwards with -step
        n = len(range(-s0, hi, -st))
    return IterationCount(n, False, reason)


def table_fallback(kernel) -> int:
    """Schedule-table fallback end: max over static domain starts, plus one."""
    starts = [t.lowered.domain_start for t in kernel.tasks
              if t.lowered is not None and t.lowered.has_domain_loop and is_static_int(t.lowered.domain_start)]
    return (max(starts) if starts else 0) + 1


def is_persistent_kernel(kernel) -> bool:
    for r in kernel.resources.values():
        if r.kind is _WORK_QUEUE:
            return True
    return False


# ---------------------------------------------------------------------------- entries
def _loop_tag(entry: Entry) -> str:
    g = entry.guard
    if g is None:
        return ""
    if g in _GUARD_TAGS:
        return _GUARD_TAGS[g]
    return getattr(g, "tag", "?")


def _tag(entry: Entry, skipped: bool = False) -> str:
    if entry.section == HEAD:
        return "SH" if skipped else "H"
    if entry.section == TAIL:
        return "ST" if skipped else "T"
    return _loop_tag(entry)


class _E4(NamedTuple):
    resource: int
    stage: ScheduleStage
    call_idx: int
    tag: str


class ExpandedEntry(_E4):
    """`(resource, stage, call_idx, tag)` like the reference's `expand_loop` items, plus
    `.entry` (the lowered Entry), `.iteration` (loop index or None) and `.tile`."""

    def __new__(cls, entry: Entry, tag: str, iteration=None, tile: int = 0):
        self = super().__new__(cls, entry.resource, entry.stage, entry.call_idx, tag)
        self.entry = entry
        self.iteration = iteration
        self.tile = tile
        return self


def expand_loop(low: LoweredSchedule, n: int, opaque_assignment: Optional[dict] = None,
                tile: int = 0, *, entries=None) -> List[ExpandedEntry]:
    """`head + loop x n + tail`; loop entries kept where their guard fires."""
    entries = low.entries if entries is None else entries
    head = [e for e in entries if e.section == HEAD]
    loop = [e for e in entries if e.section == LOOP]
    tail = [e for e in entries if e.section == TAIL]
    out = [ExpandedEntry(e, _tag(e), None, tile) for e in head]
    for i in range(n):
        for e in loop:
            if guard_fires(e.guard, i, n, opaque_assignment=opaque_assignment):
                out.append(ExpandedEntry(e, _tag(e), i, tile))
    out.extend(ExpandedEntry(e, _tag(e), None, tile) for e in tail)
    return out


def expand_skipped(low: LoweredSchedule, tile: int = 0, *, entries=None) -> List[ExpandedEntry]:
    """Skipped-tile list: the non-skippable head and tail entries (tags SH / ST)."""
    entries = low.entries if entries is None else entries
    return [ExpandedEntry(e, _tag(e, True), None, tile) for e in entries
            if e.section != LOOP and not e.skippable]


def expand_task(task, dynamic_domain_fallback: int = 1, opaque_assignment: Optional[dict] = None,
                *, tiles: int = 1, skip: Sequence[bool] = (), n: Optional[int] = None) -> List[ExpandedEntry]:
    """One task's flat list.

    With `tiles == 1` this is the reference's `expand_loop(task, fallback, assignment)`.
    With `tiles > 1` (persistent kernels) pre-WTL head entries run once, the per-tile
    part once per tile (skipped-tile list where `skip[tile]`), post-WTL tail entries once.
    An unknown iteration count raises ValueError (callers check `iteration_count` first).
    """
    low = task.lowered if hasattr(task, "lowered") else task
    if low is None:
        return []
    if n is None:
        cnt = iteration_count(low, dynamic_domain_fallback)
        if cnt.n is None:
            raise ValueError(f"iteration count unknown: {cnt.reason}")
        n = cnt.n
    skip = list(skip) + [False] * (tiles - len(skip))
    if tiles == 1 and not low.has_work_tile_loop:
        return expand_skipped(low) if skip[0] else expand_loop(low, n, opaque_assignment)
    pre = [e for e in low.entries if e.pre_wtl]
    post = [e for e in low.entries if e.post_wtl]
    body = [e for e in low.entries if not e.pre_wtl and not e.post_wtl]
    out = [ExpandedEntry(e, _tag(e), None, 0) for e in pre]
    for t in range(tiles):
        if skip[t]:
            out.extend(expand_skipped(low, t, entries=body))
        else:
            out.extend(expand_loop(low, n, opaque_assignment, t, entries=body))
    out.extend(ExpandedEntry(e, _tag(e), None, tiles - 1) for e in post)
    return out


# ---------------------------------------------------------------------------- variants
def opaque_keys(kernel) -> list:
    """Distinct opaque-condition keys, in order of first appearance (task order)."""
    keys: list = []
    for t in kernel.tasks:
        if t.lowered is None:
            continue
        for e in t.lowered.entries:
            if isinstance(e.guard, OpaqueCondition) and e.guard.key not in keys:
                keys.append(e.guard.key)
    return keys


def opaque_assignments(keys: list) -> Iterator[dict]:
    """All 2^k True/False assignments (False first for each key)."""
    for values in itertools.product((False, True), repeat=len(keys)):
        yield dict(zip(keys, values))


def _key_label(key) -> str:
    if isinstance(key, tuple) and len(key) == 3 and not isinstance(key[0], str):
        return f"{key[1]}.{key[2]}" if key[1] else str(key[2])
    if isinstance(key, tuple) and key and key[0] == "fresh":
        return f"cond#{key[1]}"
    return str(key)


@dataclass(frozen=True)
class Variant:
    """One exhaustive run: an opaque assignment and a per-tile skip pattern."""
    index: int
    assignment: Optional[dict] = None
    assignment_index: int = 0
    assignment_count: int = 1
    skip: Tuple[bool, ...] = (False,)
    key_labels: Tuple[str, ...] = ()

    @property
    def any_skip(self) -> bool:
        return any(self.skip)

    @property
    def all_normal(self) -> bool:
        return not any(self.skip)

    def skip_suffix(self) -> str:
        if not self.any_skip:
            return ""
        if all(self.skip):
            return "during skipped-tile execution"
        tiles = ", ".join(str(i + 1) for i, s in enumerate(self.skip) if s)
        return f"during skipped-tile execution (tile {tiles} of {len(self.skip)} skipped)"

    def opaque_suffix(self) -> str:
        if self.assignment is None or not self.assignment:
            return ""
        vals = ", ".join(f"{lbl}={v}" for lbl, v in zip(self.key_labels, self.assignment.values()))
        return f"during opaque assignment {self.assignment_index + 1}/{self.assignment_count} ({vals})"

    def describe(self) -> str:
        parts = [p for p in (self.opaque_suffix(), self.skip_suffix()) if p]
        return "; ".join(parts)


_PLAIN: dict = {}      # tiles -> the Variant of a kernel without opaque keys or skip_if


def variants(kernel, *, tiles: int = 1, mixed_skip: bool = True, keys: Optional[list] = None) -> List[Variant]:
    """Every run of the exhaustive checker: opaque assignments x skip patterns.

    Order: all-normal tiles first (each assignment), then all-skipped, then mixed
    patterns (persistent kernels only, `mixed_skip`). `keys`: `opaque_keys(kernel)`
    when the caller has them.
    """
    if keys is None:
        keys = opaque_keys(kernel)
    has_skip = any(t.lowered is not None and t.lowered.skip_if is not None for t in kernel.tasks)
    if not keys and not has_skip:
        # the one run of most kernels (Variants are immutable: one object serves every check)
        v = _PLAIN.get(tiles)
        if v is None:
            v = _PLAIN[tiles] = Variant(0, skip=tuple([False] * tiles))
        return [v]
    labels = tuple(_key_label(k) for k in keys)
    assigns = list(opaque_assignments(keys)) if keys else [None]
    patterns = [tuple([False] * tiles)]
    if has_skip:
        patterns.append(tuple([True] * tiles))
        if mixed_skip and tiles > 1:
            for p in itertools.product((False, True), repeat=tiles):
                if any(p) and not all(p):
                    patterns.append(p)
    out = []
    for p in patterns:
        for i, a in enumerate(assigns):
            out.append(Variant(len(out), a, i, len(assigns), p, labels))
    return out
