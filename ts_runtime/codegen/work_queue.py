"""WorkQueue at kernel time: the persistent tile scheduler and the work tile.

Static persistent scheduling (`TileSchedulerType.StaticPersistent`) uses CuTe's
`StaticPersistentTileScheduler`: every persistent task builds its own scheduler at
task start (static scheduling is a pure function of the CTA index, so all tasks of a
CTA walk the same tiles) and keeps it in the task's carried state. The WorkQueue is
unpipelined in that mode: its try_wait / wait / release are no-ops.

`get_and_advance_work_tile` advances the scheduler and returns the *next* tile; the
work-tile loop re-reads the WorkQueue's `work_tile` at the top of every iteration and
stops at the first invalid one. CLC (dynamic) scheduling is not implemented yet.
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


def create_tile_scheduler(wq):
    """A fresh scheduler for the calling task (static persistent only)."""
    cfg = wq.tile_scheduler_config
    kind = getattr(cfg, "tile_scheduler_type", None)
    if kind is TileSchedulerType.StaticPersistent:
        from cutlass.utils import StaticPersistentTileScheduler
        params = cfg.tile_scheduler_params
        if params is None:
            raise ValueError(f"WorkQueue '{wq.name}': tile_scheduler_params is None inside the kernel")
        return StaticPersistentTileScheduler.create(params, cute.arch.block_idx(), cute.arch.grid_dim())
    raise NotImplementedError(f"WorkQueue '{wq.name}': {getattr(kind, 'value', kind)} scheduling is not "
                              "supported by ts codegen yet (only StaticPersistent)")


def initial_tile(scheduler) -> TileInfo:
    return as_tile(scheduler.initial_work_tile_info())


def scheduler_key(wq):
    return ("sched", id(wq))


def get_and_advance_work_tile(wq, stage_info):
    em = active_emitter()
    key = scheduler_key(wq)
    sched = em.state[key]
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
    raise NotImplementedError("WorkQueue.fetch_work_tile (CLC dynamic scheduling) is not supported by ts "
                              "codegen yet")
