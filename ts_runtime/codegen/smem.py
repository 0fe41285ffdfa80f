"""Kernel-time side of `SmemAllocator`: one unified SMEM block, barrier storage, typed views.

Layout of the block (offsets from its base):

    [ data allocations, as laid out by compute_layout() ][ pad to 8 ][ barriers ... ]

Barrier storage is handed out in allocator order: every pipelined resource added with
`add_resource` (group members excluded) gets `2 * num_stages` mbarriers
(`full[S]` then `empty[S]`), then every pipeline group gets its own block (see
`groups.py`). The pointer is stored on a private copy of the resource's
`PipelineConfig` (`barrier_ptr`), so a config shared by several resources is never
patched twice.
"""
from __future__ import annotations

import copy

import cutlass
import cutlass.cute as cute

MBARRIER_BYTES = 8


def _align_up(v: int, a: int) -> int:
    return (v + a - 1) // a * a


def smem_array(dtype, count: int, alignment: int):
    """A fresh SMEM allocation as a `cutlass.Array` (what `StageInfo.context.smem_base` is)."""
    return cutlass.Array(dtype, count, space=cutlass.AddressSpace.smem, alignment=alignment)


def mbarrier_ptr(array_or_ptr, byte_offset: int = 0):
    """A `cute.Pointer` to Int64 mbarriers at `byte_offset` inside an SMEM array / pointer."""
    p = array_or_ptr.data_ptr(byte_offset) if hasattr(array_or_ptr, "data_ptr") else array_or_ptr
    return cute.make_ptr(cutlass.Int64, p.to_llvm_ptr(), assumed_align=8)


def barrier_view(ptr):
    """`StageInfo.barrier`: a one-element Int64 SMEM `cutlass.Array` at an mbarrier."""
    return cutlass.Array(ptr, shape=(1,), alignment=8)


def _barrier_bytes_needed(allocator) -> int:
    total = 0
    for r in allocator.resources:
        cfg = r.pipeline_config
        if cfg is not None and getattr(r, "pipeline_group", None) is None:
            total += 2 * cfg.num_stages * MBARRIER_BYTES
    for g in allocator.groups:
        total += group_barrier_bytes(g)
    return total


def group_barrier_count(group) -> int:
    stages = group._merged_model.num_stages
    return group.num_barriers_per_stage * stages


def group_barrier_bytes(group) -> int:
    """What the allocator accounts for a group (16 B per barrier kind and stage); the
    group uses the first half of it."""
    from ..memory import BARRIER_BYTES_PER_STAGE
    return group.num_barriers_per_stage * group._merged_model.num_stages * BARRIER_BYTES_PER_STAGE


def allocate_smem(allocator):
    """Emits the unified SMEM block; returns it (a Uint8 `cutlass.Array`)."""
    data = allocator.total
    aligns = [getattr(a, "alignment", 1) or 1 for a in allocator.all_allocations]
    base_align = min(1024, max([128] + [a for a in aligns if isinstance(a, int)]))
    barrier_off = _align_up(data, MBARRIER_BYTES)
    size = barrier_off + max(allocator.barrier_smem_bytes, _barrier_bytes_needed(allocator))
    allocator._ts_barrier_offset = barrier_off
    return smem_array(cutlass.Uint8, max(size, 1), base_align)


def set_barrier_ptr(resource, ptr):
    """Stores `ptr` as the resource's `pipeline_config.barrier_ptr` (on a private copy)."""
    cfg = resource.pipeline_config
    if cfg is None:
        return
    new = copy.copy(cfg)
    object.__setattr__(new, "barrier_ptr", ptr)
    resource.pipeline_config = new


def assign_barrier_ptrs(allocator):
    """Hands each pipelined resource / group of the allocator its barrier storage."""
    base = allocator.smem_base
    if base is None and _barrier_bytes_needed(allocator) == 0:
        return      # an empty allocator (allocate() made no SMEM block): no barrier to place
    if base is None:
        raise RuntimeError("SmemAllocator.allocate() must run before assign_barrier_ptrs()")
    off = allocator._ts_barrier_offset
    for r in allocator.resources:
        cfg = r.pipeline_config
        if cfg is None or getattr(r, "pipeline_group", None) is not None:
            continue
        if cfg.barrier_ptr is None:
            set_barrier_ptr(r, mbarrier_ptr(base, off))
        off += 2 * cfg.num_stages * MBARRIER_BYTES
    for g in allocator.groups:
        if g.pipeline_config is None or g.pipeline_config.barrier_ptr is None:
            g._ts_barrier_ptr = mbarrier_ptr(base, off)
        else:
            g._ts_barrier_ptr = g.pipeline_config.barrier_ptr
        off += group_barrier_bytes(g)


def typed_view(allocator, alloc, dtype, count):
    """`SmemAllocator.get_as_type`: a typed `cutlass.Array` over one allocation."""
    if alloc.offset is None:
        from ..diagnostics import raise_finding
        from ..source import caller_range
        raise_finding("TS704", RuntimeError, f"allocation '{alloc.name}' has no offset: it was not added to the "
                      "allocator before compute_layout()", caller_range())
    ptr = allocator.smem_base.data_ptr(alloc.offset)
    align = getattr(alloc, "alignment", None) or max(1, dtype.width // 8)
    return cutlass.Array(ptr, shape=(count,), dtype=dtype, alignment=align)
