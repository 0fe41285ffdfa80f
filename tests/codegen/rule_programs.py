"""VALID / INVALID programs of the rules ts codegen reports while the kernel is traced
(TS316, TS317, TS327, TS438, TS439, TS906).

Each program validates on the host (`build()`) and is compiled for sm_100a with fake
tensors (`compile_fake()`); an INVALID program marks the line of its finding with
`# expect: TSxxx`. `tests/codegen/test_codegen_rules.py` runs them through ts and, when
it is installed, through the reference.
"""
from __future__ import annotations

_SIMPLE = '''\
from dataclasses import dataclass

import cutlass
import cutlass.cute as cute

from ts_runtime import consumer_work, domain_loop, producer_work, schedule
from ts_runtime.resources import MemoryResource, StageInfo, TaskLocalVariable
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager


@dataclass(kw_only=True)
class Src(MemoryResource):
    v: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    w: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()

    def __post_init__(self) -> None:
        self.v = TaskLocalVariable(dtype=cutlass.Int32, default={DEFAULT})
        self.w = TaskLocalVariable(dtype=cutlass.Int32, default=cutlass.Int32(0))

{GET}

@dataclass(kw_only=True)
class Dst(MemoryResource):
    out: cute.Tensor = None

    @producer_work
    @cute.jit
    def put(self, stage_info: StageInfo, v: cutlass.Int32) -> None:
        self.out[stage_info.loop_offset] = v


def make_task_manager(*, n, out=None, warp=0):
    src = Src(name="src")
    dst = Dst(name="dst", out=out)

    @schedule
    def sched(src: Src, dst: Dst) -> None:
        with domain_loop(0, n, 1):
{SCHED}

    task = Task(name="T", src_resources=[src], dst_resources=[dst], warp_idx={WARP}, num_warps=1,{TASKMARK}
                schedule=sched(src, dst))
    return TaskManager(tasks=[task], resource_dependency_graph={{dst: [src]}})


def build():
    return make_task_manager(n=4)


@cute.kernel
def rule_kernel(out: cute.Tensor, warp: cutlass.Int32):
    tm = make_task_manager(n=out.shape[0], out=out, warp=warp)
    tm.setup_resources_and_tasks()
    tm.run()


@cute.jit
def launch(out: cute.Tensor, warp: cutlass.Int32, stream):
    rule_kernel(out, warp).launch(grid=(1, 1, 1), block=(32, 1, 1), stream=stream)


def compile_fake():
    from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream
    return cute.compile(launch, make_fake_compact_tensor(cutlass.Int32, (64,)), cutlass.Int32(0),
                        make_fake_stream())
'''

_GET_ONE = '''\
    @consumer_work(returns=v)
    @cute.jit
    def get(self, stage_info: StageInfo) -> cutlass.Int32:
        return {RET}
'''
_GET_TWO = '''\
    @consumer_work(returns=(v, w))
    @cute.jit
    def get(self, stage_info: StageInfo):
        return {RET}
'''
_SCHED_ONE = '''\
            v = src.get(){MARK}
            dst.put(v=v)'''
_SCHED_TWO = '''\
            v, w = src.get(){MARK}
            dst.put(v=v)'''


def simple(get=_GET_ONE, ret="cutlass.Int32(stage_info.loop_offset)", sched=_SCHED_ONE, mark="",
           default="cutlass.Int32(0)", warp="0", task_mark="") -> str:
    return _SIMPLE.format(GET=get.format(RET=ret), SCHED=sched.format(MARK=mark), DEFAULT=default, WARP=warp,
                          TASKMARK=task_mark)


# a vector default exists only while the kernel is traced (`cute.full` builds IR); the
# host-side build() keeps a scalar
_VEC0 = "cute.full((4,), 0, cutlass.Int32) if self.vec else cutlass.Int32(0)"


def _vector(src: str) -> str:
    """`put` takes the routed value untyped and stores its first element; `Src.vec` says
    whether the program is being traced in the kernel."""
    src = src.replace("class Src(MemoryResource):\n", "class Src(MemoryResource):\n    vec: bool = False\n")
    src = src.replace('src = Src(name="src")', 'src = Src(name="src", vec=out is not None)')
    return src.replace("def put(self, stage_info: StageInfo, v: cutlass.Int32) -> None:\n"
                       "        self.out[stage_info.loop_offset] = v",
                       "def put(self, stage_info: StageInfo, v) -> None:\n"
                       "        self.out[stage_info.loop_offset] = v[0]")


PROGRAMS = {
    # TS316: the work body returns one value, the schedule declares two outputs
    ("TS316", "valid"): simple(_GET_TWO, "cutlass.Int32(stage_info.loop_offset), cutlass.Int32(1)", _SCHED_TWO),
    ("TS316", "invalid"): simple(_GET_TWO, "cutlass.Int32(stage_info.loop_offset)", _SCHED_TWO,
                                 "  # expect: TS316"),
    # TS317: a tuple returned into an Int32 task-local variable
    ("TS317", "valid"): simple(),
    ("TS317", "invalid"): simple(ret="cutlass.Float32(1.5)", mark="  # expect: TS317"),
    # TS327: the routed variable has no default value to seed the slot it is copied into
    ("TS327", "valid"): simple(),
    ("TS327", "invalid"): simple(default="None", mark="  # expect: TS327"),
    # TS316 too: None is no value (a 2-tuple for one output would be two values); computed,
    # not a literal `return None`, which TS328 reports before the kernel is traced
    ("TS316", "invalid-none"): simple(ret="{}.get('v')", mark="  # expect: TS316"),
    # TS317 on vectors (register fragments, as GEMM epilogues return): the element dtype
    # must be the variable's; a matching vector is fine
    ("TS317", "valid-vector"): _vector(simple(ret="cute.full((4,), 7, cutlass.Int32)",
                                              default=_VEC0)),
    ("TS317", "invalid-vector"): _vector(simple(ret="cute.full((4,), 7.0, cutlass.Float32)",
                                                default=_VEC0,
                                                mark="  # expect: TS317")),
}


_TMA = '''\
from dataclasses import dataclass, field

import cutlass
import cutlass.cute as cute
from cutlass.cute.nvgpu import cpasync

from ts_runtime import consumer_work, domain_loop, producer_work, schedule
from ts_runtime.enums import SignalingThreads
from ts_runtime.memory import SmemAllocation, SmemAllocator
from ts_runtime.pipeline import Agent, CooperativeGroup
from ts_runtime.resources import MemoryResource, PipelineConfig, StageInfo, TaskLocalVariable
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager

COLS = 128
DTYPE = cutlass.Float16


@dataclass(kw_only=True)
class Rows(MemoryResource):
    row: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()

    def __post_init__(self) -> None:
        self.row = TaskLocalVariable(dtype=cutlass.Int32, default=cutlass.Int32(0))

    @consumer_work(returns=row)
    @cute.jit
    def next_row(self, stage_info: StageInfo) -> cutlass.Int32:
        return cutlass.Int32(stage_info.loop_offset)


@dataclass(kw_only=True)
class Tile(MemoryResource):
    tma_atom: object = None
    tma_tensor: cute.Tensor = None
    value: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()
    alloc: cutlass.Constexpr[SmemAllocation] = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.value = TaskLocalVariable(dtype=DTYPE, default=DTYPE(0))
        self.alloc = SmemAllocation(self.name, dtype=DTYPE, count=2 * COLS, alignment=128)

    def get_smem_requirements(self):
        return [self.alloc]

    @cute.jit
    def _ptr(self, stage_info: StageInfo):
        base = stage_info.context.smem_base.data_ptr() + self.alloc.offset
        return cute.make_ptr(DTYPE, base.to_llvm_ptr(), assumed_align=128) + stage_info.stage_idx * COLS

    @producer_work
    @cute.jit
    def load(self, stage_info: StageInfo, row: cutlass.Int32) -> None:
        bx, _, _ = cute.arch.block_idx()
        s_tile = cute.make_tensor(self._ptr(stage_info), cute.make_layout((1, COLS), stride=(COLS, 1)))
        g_tile = cute.local_tile(self.tma_tensor, (1, COLS), (row, bx))
        s_part, g_part = cpasync.tma_partition(
            self.tma_atom, 0, cute.make_layout(1), cute.group_modes(s_tile, 0, 2), cute.group_modes(g_tile, 0, 2))
        mbar = cute.make_ptr(cutlass.Int64, stage_info.barrier.data_ptr().to_llvm_ptr(), assumed_align=8)
        cute.copy(self.tma_atom, g_part, s_part, tma_bar_ptr=mbar)

    @consumer_work(returns=value)
    @cute.jit
    def read(self, stage_info: StageInfo) -> cutlass.Float16:
        tx, _, _ = cute.arch.thread_idx()
        return cute.make_tensor(self._ptr(stage_info), cute.make_layout(COLS))[tx % COLS]


@dataclass(kw_only=True)
class Out(MemoryResource):
    dst: cute.Tensor = None

    @producer_work
    @cute.jit
    def store(self, stage_info: StageInfo, value: cutlass.Float16) -> None:
        bx, _, _ = cute.arch.block_idx()
        tx, _, _ = cute.arch.thread_idx()
        self.dst[stage_info.loop_offset, bx * COLS + tx % COLS] = value


def make_task_manager(*, num_rows, atom=None, tensor=None, dst=None, stride=1):
    rows = Rows(name="rows")
    cfg = PipelineConfig.create_tma_async_pipeline_cfg(
        num_stages=2, num_bytes=COLS * 2, producer_group=CooperativeGroup(Agent.Thread, 1),
        consumer_group={CONSUMER}{CFGEXTRA}){CFGMARK}
    tile = Tile(name="tile", tma_atom=atom, tma_tensor=tensor, pipeline_config=cfg)
    out = Out(name="out", dst=dst)
    alloc = SmemAllocator()
    alloc.add_resource(tile)
    alloc.compute_layout()

    @schedule
    def load(rows: Rows, tile: Tile) -> None:
        with domain_loop(0, num_rows, 1):
            row = rows.next_row()
            tile.acquire()
            tile.load(row=row)
            tile.commit()

    @schedule
    def store(tile: Tile, out: Out) -> None:
        with domain_loop(0, num_rows, 1):
            tile.wait()
            v = tile.read()
            tile.release()
            out.store(value=v)

    tasks = [
        Task(name="Store", src_resources=[tile], dst_resources=[out], warp_idx=0, num_warps=4,
             schedule=store(tile, out)),
        Task(name="Load", src_resources=[rows], dst_resources=[tile], warp_idx=4, num_warps=1,
             schedule=load(rows, tile)),
    ]
    return TaskManager(tasks=tasks, resource_dependency_graph={{tile: [rows], out: [tile]}},
                       smem_allocator=alloc)


def build():
    return make_task_manager(num_rows=4)


@cute.kernel
def rule_kernel(atom: cute.CopyAtom, tensor: cute.Tensor, dst: cute.Tensor, stride: cutlass.Int32):
    tm = make_task_manager(num_rows=dst.shape[0], atom=atom, tensor=tensor, dst=dst, stride=stride)
    tm.setup_resources_and_tasks()
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    tm.run()


@cute.jit
def launch(src: cute.Tensor, dst: cute.Tensor, stride: cutlass.Int32, stream):
    layout = cute.make_layout((1, COLS), stride=(COLS, 1))
    atom, tensor = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), src, layout, (1, COLS))
    rule_kernel(atom, tensor, dst, stride).launch(grid=(dst.shape[1] // COLS, 1, 1), block=(5 * 32, 1, 1),
                                                  stream=stream)


def compile_fake():
    from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream
    src = make_fake_compact_tensor(DTYPE, (64, 512), stride_order=(1, 0), assumed_align=16)
    dst = make_fake_compact_tensor(DTYPE, (64, 512), stride_order=(1, 0), assumed_align=16)
    return cute.compile(launch, src, dst, cutlass.Int32(1), make_fake_stream())
'''


def tma(consumer="CooperativeGroup(Agent.Thread, 128)", extra="", cfg_mark="") -> str:
    return _TMA.format(CONSUMER=consumer, CFGEXTRA=extra, CFGMARK=cfg_mark)


PROGRAMS.update({
    # TS438: an all-thread release (128 arrivals for 4 warps) counted by a Warp cooperative group
    ("TS438", "valid"): tma(),
    ("TS438", "invalid"): tma(cfg_mark="  # expect: TS438", consumer="CooperativeGroup(Agent.Warp, 128)"),
    # TS906: a ThreadBlock cooperative group (the reference rejects it too, reporting TS438's error)
    ("TS906", "valid"): tma(),
    ("TS906", "invalid"): tma(cfg_mark="  # expect: TS906", consumer="CooperativeGroup(Agent.ThreadBlock, 128)"),
})


def fork(twl: bool, mark: str = "") -> str:
    """The TMA program with a Fork group {tile, view}: one loader fills both members' shared
    full barrier with one `commit()` on the group; two store tasks release their member."""
    src = tma()
    signal = f",\n            producer_signaling_threads=SignalingThreads.TaskWarpLeader{mark}\n            " if twl else ""
    src = src.replace('''    cfg = PipelineConfig.create_tma_async_pipeline_cfg(
        num_stages=2, num_bytes=COLS * 2, producer_group=CooperativeGroup(Agent.Thread, 1),
        consumer_group=CooperativeGroup(Agent.Thread, 128))
    tile = Tile(name="tile", tma_atom=atom, tma_tensor=tensor, pipeline_config=cfg)
    out = Out(name="out", dst=dst)
    alloc = SmemAllocator()
    alloc.add_resource(tile)
    alloc.compute_layout()
''', f'''    def cfg():
        return PipelineConfig.create_tma_async_pipeline_cfg(
            num_stages=2, num_bytes=COLS * 2, producer_group=CooperativeGroup(Agent.Thread, 1),
            consumer_group=CooperativeGroup(Agent.Thread, 128){signal})
    tile = Tile(name="tile", tma_atom=atom, tma_tensor=tensor, pipeline_config=cfg())
    view = Tile(name="view", tma_atom=atom, tma_tensor=tensor, pipeline_config=cfg())
    sync = PipelineGroup(name="sync", members=[tile, view], mode=PipelineGroupMode.Fork)
    out = Out(name="out", dst=dst)
    out2 = Out(name="out2", dst=dst)
    alloc = SmemAllocator()
    alloc.add_resource(tile)
    alloc.add_resource(view)
    alloc.add_pipeline_group(sync)
    alloc.compute_layout()
''')
    src = src.replace('''    def load(rows: Rows, tile: Tile) -> None:
        with domain_loop(0, num_rows, 1):
            row = rows.next_row()
            tile.acquire()
            tile.load(row=row)
            tile.commit()
''', '''    def load(rows: Rows, tile: Tile, view: Tile, sync: PipelineGroup) -> None:
        with domain_loop(0, num_rows, 1):
            row = rows.next_row()
            tile.acquire()
            view.acquire()
            tile.load(row=row)
            sync.commit()
''')
    src = src.replace('''        Task(name="Store", src_resources=[tile], dst_resources=[out], warp_idx=0, num_warps=4,
             schedule=store(tile, out)),
        Task(name="Load", src_resources=[rows], dst_resources=[tile], warp_idx=4, num_warps=1,
             schedule=load(rows, tile)),
    ]
    return TaskManager(tasks=tasks, resource_dependency_graph={tile: [rows], out: [tile]},''', '''        Task(name="Store", src_resources=[tile], dst_resources=[out], warp_idx=0, num_warps=4,
             schedule=store(sync.tile, out)),
        Task(name="Store2", src_resources=[view], dst_resources=[out2], warp_idx=5, num_warps=4,
             schedule=store(sync.view, out2)),
        Task(name="Load", src_resources=[rows], dst_resources=[tile, view], warp_idx=4, num_warps=1,
             schedule=load(rows, sync.tile, sync.view, sync)),
    ]
    return TaskManager(tasks=tasks, resource_dependency_graph={tile: [rows], view: [rows], out: [tile],
                                                                out2: [view]},''')
    src = src.replace("block=(5 * 32, 1, 1)", "block=(9 * 32, 1, 1)")
    src = src.replace("from ts_runtime.enums import SignalingThreads",
                      "from ts_runtime.enums import PipelineGroupMode, SignalingThreads\n"
                      "from ts_runtime.pipeline_group import PipelineGroup")
    assert "sync.commit()" in src and "Store2" in src and "PipelineGroup(" in src
    return src


PROGRAMS.update({
    # TS439: TaskWarpLeader on Fork members: the producer commits the group, never the member
    ("TS439", "valid"): fork(twl=False),
    ("TS439", "invalid"): fork(twl=True, mark="  # expect: TS439"),
})


def fork_without_allocator() -> str:
    """The Fork program whose TaskManager gets no SmemAllocator: the group's barriers have
    no storage when setup creates them (the reference: "PipelineGroup barrier_ptr not set")."""
    src = fork(twl=False)
    group = 'sync = PipelineGroup(name="sync", members=[tile, view], mode=PipelineGroupMode.Fork)'
    assert group in src and "smem_allocator=alloc)" in src
    return src.replace(group, group + "  # expect: TS473").replace("smem_allocator=alloc)", ")")


PROGRAMS.update({
    # TS473: a PipelineGroup under a manager without an SmemAllocator (raised at setup)
    ("TS473", "valid"): fork(twl=False),
    ("TS473", "invalid"): fork_without_allocator(),
})
