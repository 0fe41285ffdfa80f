"""SMEM / TMEM allocations and the bump allocators with alias phases.

Pure arithmetic (no cutlass) until `allocate()` / `get()`, which run at kernel time and
hand back typed pointers through `ts_runtime.codegen`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from .api_calls import checked_init, checked_method
from .diagnostics import raise_finding
from .source import caller_range

__all__ = ["SmemAllocation", "TmemAllocation", "ResourceContext", "SmemAllocator", "TmemAllocator",
           "BARRIER_BYTES_PER_STAGE"]

BARRIER_BYTES_PER_STAGE = 16   # full + empty mbarrier, 8 B each


def _align_up(value: int, alignment: int) -> int:
    if not isinstance(alignment, int) or isinstance(alignment, bool) or alignment <= 0 \
            or alignment & (alignment - 1):
        raise_finding("TS701", AssertionError, f"alignment must be a power of 2, got {alignment!r}", caller_range())
    return (value + alignment - 1) // alignment * alignment


def layout(allocations, alias_groups, size_of, align_of=lambda a: getattr(a, "alignment", 1)):
    """Assigns `.offset` to every allocation; returns the total size (TS701 on a bad alignment).

    The order the reference uses: standalone allocations (in `add` order) and alias groups
    (in `add_alias_group` order) are placed as units, stably sorted by alignment, largest
    first; a group's alignment is the largest of its allocations. A group starts at one
    aligned base; each phase lays its allocations out back to back from that base (in the
    given order) and the group ends where its longest phase ends.
    """
    units = [("alloc", a, align_of(a)) for a in allocations]
    for g in alias_groups:
        aligns = [align_of(a) for ph in g for a in ph]
        units.append(("group", g, max(aligns, default=1)))

    def key(u):
        al = u[2]
        return -al if isinstance(al, int) and not isinstance(al, bool) else 0
    offset = 0
    for kind, item, align in sorted(units, key=key):
        if kind == "alloc":
            offset = _align_up(offset, align)
            item.offset = offset
            offset += size_of(item)
            continue
        base = _align_up(offset, align) if item and any(item) else offset
        end = base
        for ph in item:
            o = base
            for a in ph:
                o = _align_up(o, align_of(a))
                a.offset = o
                o += size_of(a)
            end = max(end, o)
        offset = end
    return offset


@checked_init
@dataclass(eq=False)
class SmemAllocation:
    """A named SMEM region; with `dtype` and size_bytes == 0, size = count * dtype.width // 8."""
    name: str
    size_bytes: int = 0
    alignment: int = 128
    dtype: Any = None
    count: int = 1
    # as the reference: not an argument; 0 until compute_layout() places it (TS715 warns
    # about a task's allocation that is never placed)
    offset: Optional[int] = field(init=False, default=0)

    def __post_init__(self):
        if self.dtype is not None and not self.size_bytes:
            width = getattr(self.dtype, "width", None)
            if isinstance(width, int):
                self.size_bytes = self.count * width // 8


@checked_init
@dataclass(eq=False)
class TmemAllocation:
    """A named range of TMEM columns (no alignment)."""
    name: str
    num_columns: int
    # as the reference: only `name` and `num_columns` are arguments
    offset: Optional[int] = field(init=False, default=None)
    alignment: int = field(init=False, default=1)


@checked_init
@dataclass(frozen=True)
class ResourceContext:
    smem_base: Any = None
    tmem_ptr_i32: Any = None


@checked_init
class _LayoutAllocator:
    unit = "B"
    space = "smem"

    def __init__(self):
        self._ts_range = caller_range()
        self.allocations: list = []
        self.alias_groups: list = []       # [[ [alloc, ...] phase, ... ]]
        self._laid_out = False
        self._total = 0
        self._allocated = False

    def _size(self, a) -> int:
        return a.size_bytes if self.space == "smem" else a.num_columns

    @checked_method
    def add(self, alloc):
        # as in the reference, an allocation registered twice is laid out (and counted) twice
        if not any(alloc in ph for g in self.alias_groups for ph in g):
            self.allocations.append(alloc)
        return alloc

    @checked_method
    def add_alias_group(self, phases):
        phases = [list(p) if isinstance(p, (list, tuple)) else [p] for p in phases]
        if len(phases) < 2:
            raise_finding("TS702", ValueError, "Alias group must contain at least 2 phases", caller_range())
        for ph in phases:
            for a in ph:
                while a in self.allocations:
                    self.allocations.remove(a)
        self.alias_groups.append(phases)

    @checked_method
    def compute_layout(self):
        if self._laid_out:
            raise_finding("TS703", RuntimeError, "compute_layout() already called", caller_range())
        self._total = layout(self.allocations, self.alias_groups, self._size)
        self._laid_out = True
        return self._total

    def _require_layout(self, what: str):
        if not self._laid_out:
            raise_finding("TS704", RuntimeError, f"Call compute_layout() first (before {what})", caller_range())

    @property
    def total(self) -> int:
        self._require_layout("total")
        return self._total

    @property
    def all_allocations(self) -> list:
        return list(self.allocations) + [a for g in self.alias_groups for ph in g for a in ph]

    @property
    def alias_savings(self) -> int:
        return sum(self._size(a) for a in self.all_allocations) - self._total if self._laid_out else 0

    @checked_method
    def print_usage_report(self):
        self._require_layout("print_usage_report()")
        print("\n" + self.usage_report() + "\n")

    def model(self):
        """This allocator as the shared model (`AllocatorModel`, offsets as laid out)."""
        from .model.kernel import AllocationModel, AllocatorModel

        def m(a):
            return AllocationModel(a.name, self.space, self._size(a), getattr(a, "alignment", 1) or 1, a.offset or 0)
        barriers = self.barrier_smem_bytes if self.space == "smem" else 0
        self._require_layout("total")
        out = AllocatorModel(self.space, self._total, barriers, [m(a) for a in self.allocations],
                             self._ts_range)
        out.alias_groups = [[[m(a) for a in ph] for ph in g] for g in self.alias_groups]
        return out

    def usage_report(self) -> str:
        """The `[smem-layout]` / `[tmem-layout]` report (printout.allocator_report)."""
        from .printout import allocator_report
        return allocator_report(self.model())


@checked_init
class SmemAllocator(_LayoutAllocator):
    """Packs data SMEM (with alias phases) and pipeline barrier storage into one block."""

    def __init__(self):
        super().__init__()
        self.resources: list = []
        self.groups: list = []
        self.tmem_ptr_alloc = None
        self.smem_base = None

    @checked_method
    def add_resource(self, resource):
        # no de-duplication (the reference's behaviour): a resource added twice has its data
        # and its barriers counted twice (TS707)
        self.resources.append(resource)
        for a in requirements(resource, "get_smem_requirements", SmemAllocation):
            self.add(a)

    @checked_method
    def add_pipeline_group(self, group):
        from .pipeline_group import PipelineGroup
        if getattr(group, "pipeline_config", None) is None and getattr(group, "_merged_model", None) is None:
            raise_finding("TS706", ValueError, "PipelineGroup has no pipeline_config: pass a constructed "
                          "PipelineGroup (plain resources go through add_resource())", caller_range())
        if not isinstance(group, PipelineGroup):
            raise_finding("TS706", TypeError, f"add_pipeline_group() needs a PipelineGroup, got "
                          f"{type(group).__name__} (add plain resources with add_resource())", caller_range())
        if group not in self.groups:
            self.groups.append(group)
        # only the group's barrier storage: its members' data goes through add_resource(), as
        # in the reference (a member not added keeps offset 0 and may alias another buffer)

    @checked_method
    def add_tmem_ptr(self, alloc):
        self.tmem_ptr_alloc = alloc
        self.add(alloc)
        return alloc

    @property
    def data_bytes(self) -> int:
        return self.total

    @property
    def barrier_smem_bytes(self) -> int:
        total = 0
        for r in self.resources:
            cfg = r.pipeline_config
            if cfg is not None and getattr(r, "pipeline_group", None) is None and isinstance(cfg.num_stages, int):
                total += BARRIER_BYTES_PER_STAGE * cfg.num_stages
        for g in self.groups:
            model = getattr(g, "_merged_model", None)
            stages = model.num_stages if model is not None else 0
            if isinstance(stages, int):
                total += g.num_barriers_per_stage * stages * BARRIER_BYTES_PER_STAGE
        return total

    @property
    def total_smem_bytes(self) -> int:
        return self.total + self.barrier_smem_bytes

    @checked_method
    def allocate(self):
        self._require_layout("allocate()")
        self._allocated = True
        if self._total == 0 and self.barrier_smem_bytes == 0:
            # as the reference: nothing registered, no SMEM block (`context.smem_base` is None)
            self.smem_base = None
            return None
        from .codegen.smem import allocate_smem
        self.smem_base = allocate_smem(self)
        return self.smem_base

    @checked_method
    def assign_barrier_ptrs(self):
        from .codegen.smem import assign_barrier_ptrs
        assign_barrier_ptrs(self)

    @checked_method
    def get(self, alloc):
        if not self._allocated:
            raise_finding("TS705", RuntimeError, "Call allocate() before get()", caller_range())
        if alloc.dtype is None:
            raise_finding("TS705", TypeError, f"allocation '{alloc.name}' has no dtype; use get_as_type()", caller_range())
        return self.get_as_type(alloc, alloc.dtype, alloc.count)

    @checked_method
    def get_as_type(self, alloc, dtype, count=1):
        if not self._allocated:
            raise_finding("TS705", RuntimeError, "Call allocate() before get_as_type()", caller_range())
        from .codegen.smem import typed_view
        return typed_view(self, alloc, dtype, count)

    @checked_method
    def get_typed_ptr(self, alloc, dtype, count=1):
        return self.get_as_type(alloc, dtype, count)


class TmemAllocator(_LayoutAllocator):
    """TMEM column layout (the hardware alloc/dealloc stays in the kernel)."""
    unit = "columns"
    space = "tmem"

    @checked_method
    def add_resource(self, resource):
        for a in requirements(resource, "get_tmem_requirements", TmemAllocation):
            self.add(a)

    @property
    def total_tmem_columns(self) -> int:
        return self.total

    @checked_method
    def allocate(self):
        self._require_layout("allocate()")
        self._allocated = True


def requirements_message(resource_class: str, method: str, got: str, index=None) -> str:
    """TS717's text (the same from ts-lint)."""
    what = f"returned {got}" if index is None else f"returned an element {index} that is {got}"
    return f"{resource_class}.{method}() {what}, not a list of allocations"


def requirements(resource, method: str, kind) -> list:
    """`resource.<method>()` checked: a list (or tuple) of `kind` allocations, as the
    allocator iterates it (TS717)."""
    reqs = getattr(resource, method)()
    cls = type(resource).__name__
    if not isinstance(reqs, (list, tuple)):
        raise_finding("TS717", TypeError, requirements_message(cls, method, type(reqs).__name__), caller_range())
    for i, a in enumerate(reqs):
        if not isinstance(a, kind):
            raise_finding("TS717", TypeError, requirements_message(cls, method, type(a).__name__, i),
                          caller_range())
    return list(reqs)
