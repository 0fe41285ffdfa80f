"""WorkQueue at kernel time: the persistent tile scheduler and the work tile.

Every persistent task builds its own scheduler at task start and keeps it in the task's
carried state; the work-tile loop re-reads the WorkQueue's `work_tile` at the top of
every iteration and stops at the first invalid one.

* Static persistent (`StaticPersistentTileScheduler`): scheduling is a pure function of
  the CTA index, so all tasks of a CTA walk the same tiles; the WorkQueue is unpipelined
  (its try_wait / wait / release are no-ops) and `get_and_advance_work_tile` advances the
  scheduler and returns the next tile.
* CLC dynamic persistent (`ClcDynamicPersistentTileScheduler`, Blackwell): the WorkQueue
  owns a ClcFetchAsync pipeline and a 16-byte response slot per stage. The scheduler
  task's `fetch_work_tile` issues the cancel query into the acquired stage (its full
  barrier receives the response bytes); every task's `get_and_advance_work_tile` decodes
  the response of the stage it waited on.
"""
from __future__ import annotations

import cutlass
import cutlass.cute as cute
from cutlass.cutlass_dsl import extract_mlir_values, new_from_mlir_values

from ..enums import TileSchedulerType
from ..resources import WorkTileInfo

_ACTIVE: list = []


def active_emitter():
    """The task emitter currently lowering a schedule (WorkQueue works reach its state)."""
    if not _ACTIVE:
        raise RuntimeError("WorkQueue work called outside TaskManager.run()")
    return _ACTIVE[-1]


class TileInfo(WorkTileInfo):
    """A `WorkTileInfo` whose (m, n, l) Int32 index and Boolean validity can be carried
    through loops and branches."""

    def __init__(self, tile_idx, is_valid_tile):
        idx = tuple(cutlass.Int32(x) for x in tile_idx)
        idx = (idx + (cutlass.Int32(0),) * 3)[:3]
        super().__init__(idx, cutlass.Boolean(is_valid_tile))

    def __extract_mlir_values__(self):
        return extract_mlir_values(list(self.tile_idx)) + extract_mlir_values(self.is_valid_tile)

    def __new_from_mlir_values__(self, values):
        idx = tuple(new_from_mlir_values(t, [v]) for t, v in zip(self.tile_idx, values[:3]))
        return TileInfo(idx, new_from_mlir_values(self.is_valid_tile, [values[3]]))


def as_tile(info) -> TileInfo:
    if isinstance(info, TileInfo):
        return info
    return TileInfo(tuple(info.tile_idx), info.is_valid_tile)


def block_tile() -> TileInfo:
    """The work tile of a non-persistent task: (block_idx, valid)."""
    bx, by, bz = cute.arch.block_idx()
    return TileInfo((bx, by, bz), True)


def is_clc(wq) -> bool:
    cfg = getattr(wq, "tile_scheduler_config", None)
    return getattr(cfg, "tile_scheduler_type", None) is TileSchedulerType.ClcDynamicPersistent


def response_ptr(wq):
    """CLC: the 16-byte-per-stage response buffer as an Int128 SMEM `cute.Pointer`.

    `TileSchedulerConfig.response_ptr` may be a pointer, a `cutlass.Array`, an
    `SmemAllocation` (resolved through the manager's allocator) or None (allocated here,
    once, at setup)."""
    cached = getattr(wq, "_ts_response_ptr", None)
    if cached is not None:
        return cached
    from ..memory import SmemAllocation
    from .smem import smem_array
    raw = wq.tile_scheduler_config.response_ptr
    stages = wq.pipeline_config.num_stages if wq.pipeline_config is not None else 1
    if raw is None:
        raw = smem_array(cutlass.Int128, stages, 16)
    if isinstance(raw, SmemAllocation):
        alloc = getattr(wq, "_ts_smem_allocator", None)
        if alloc is None:
            from ..diagnostics import raise_finding
            raise_finding("TS705", ValueError, f"WorkQueue '{wq.name}': response_ptr is an SmemAllocation but no "
                          "SmemAllocator is attached to the TaskManager", getattr(wq, "_ts_range", None))
        raw = alloc.get_as_type(raw, cutlass.Int128, stages)
    if hasattr(raw, "data_ptr"):
        raw = raw.data_ptr()
    if not isinstance(raw, cute.Pointer):
        raw = cute.make_ptr(cutlass.Int128, raw.to_llvm_ptr(), assumed_align=16)
    elif raw.dtype is not cutlass.Int128:
        raw = cute.recast_ptr(raw, dtype=cutlass.Int128)
    object.__setattr__(wq, "_ts_response_ptr", raw)
    return raw


def create_tile_scheduler(wq):
    """A fresh scheduler for the calling task."""
    cfg = wq.tile_scheduler_config
    kind = getattr(cfg, "tile_scheduler_type", None)
    params = getattr(cfg, "tile_scheduler_params", None)
    if params is None:
        from .control import unsupported
        unsupported(f"WorkQueue '{wq.name}': tile_scheduler_params is None inside the kernel (build the "
                    "scheduler params in the kernel's host function and pass them in)", getattr(wq, "_ts_range", None))
    if kind is TileSchedulerType.StaticPersistent:
        from cutlass.utils import StaticPersistentTileScheduler
        return StaticPersistentTileScheduler.create(params, cute.arch.block_idx(), cute.arch.grid_dim())
    if kind is TileSchedulerType.ClcDynamicPersistent:
        from cutlass.utils import ClcDynamicPersistentTileScheduler
        return ClcDynamicPersistentTileScheduler.create(params, cute.arch.block_idx(), cute.arch.grid_dim(),
                                                        response_ptr(wq))
    from .control import unsupported
    unsupported(f"WorkQueue '{wq.name}': tile scheduler {kind!r} is not supported by ts codegen "
                "(StaticPersistent and ClcDynamicPersistent are)", getattr(wq, "_ts_range", None))


def initial_tile(scheduler) -> TileInfo:
    return as_tile(scheduler.initial_work_tile_info())


def scheduler_key(wq):
    return ("sched", id(wq))


def get_and_advance_work_tile(wq, stage_info):
    em = active_emitter()
    key = scheduler_key(wq)
    sched = em.state[key]
    if is_clc(wq):
        # the tile the scheduler task fetched into this stage's response slot
        if stage_info.stage_idx is None:
            from .control import unsupported
            unsupported(f"WorkQueue '{wq.name}': CLC scheduling needs a ClcFetchAsync pipeline_config",
                        getattr(wq, "_ts_range", None))
        return as_tile(sched.work_tile_info_from_clc_response(response_ptr(wq) + stage_info.stage_idx))
    sched.advance_to_next_work()
    em.state[key] = sched
    return as_tile(sched.get_current_work())


def init_work_tile(wq, stage_info):
    em = active_emitter()
    sched = em.state[scheduler_key(wq)]
    tile = as_tile(sched.get_current_work())
    skip = wq.skip_work_tile_if(tile)
    return tile, cutlass.Boolean(skip if skip is not None else False)


def fetch_work_tile(wq, stage_info):
    """CLC: one elected thread asks the hardware to cancel a not-yet-launched cluster; the
    response lands in this stage's slot and completes the stage's full barrier."""
    if not is_clc(wq):
        return None
    from .smem import mbarrier_ptr
    mbar = mbarrier_ptr(stage_info.barrier)
    resp = response_ptr(wq) + stage_info.stage_idx
    with cute.arch.elect_one():
        cute.arch.issue_clc_query(mbar, resp)
    return None
