from dataclasses import dataclass
from ts_runtime import schedule, domain_loop, consumer_work, producer_work, WorkAttr
from ts_runtime.resources import MemoryResource, PipelineConfig, TaskLocalVariable
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager
from ts_runtime.memory import SmemAllocation, SmemAllocator
from ts_runtime.pipeline import CooperativeGroup, Agent

@dataclass(kw_only=True)
class InGmem(MemoryResource):
    coord: object = TaskLocalVariable.uninitialized()
    def __post_init__(self):
        self.coord = TaskLocalVariable(dtype=int, default=0)
    @consumer_work(returns=coord)
    def compute_coords(self, stage_info):
        return stage_info.loop_offset

@dataclass(kw_only=True)
class Smem(MemoryResource):
    val: object = TaskLocalVariable.uninitialized()
    def __post_init__(self):
        self.val = TaskLocalVariable(dtype=int, default=0)
        self._a = SmemAllocation("smem_data", size_bytes=4096)
    def get_smem_requirements(self):
        return [self._a]
    @producer_work
    def tma_load(self, stage_info, gmem_idx):
        pass
    @consumer_work(returns=val)
    def read_smem(self, stage_info):
        return 0

@dataclass(kw_only=True)
class OutGmem(MemoryResource):
    @producer_work
    def store(self, stage_info, smem_val):
        pass

def build(stages=2, consumer=128):
    cfg = PipelineConfig.create_tma_async_pipeline_cfg(
        num_stages=stages, num_bytes=4096,
        producer_group=CooperativeGroup(Agent.Thread),
        consumer_group=CooperativeGroup(Agent.Thread, consumer))
    inp, out = InGmem(name="in"), OutGmem(name="out")
    smem = Smem(name="smem", pipeline_config=cfg)
    alloc = SmemAllocator(); alloc.add_resource(smem); alloc.compute_layout()

    @schedule
    def load_schedule(input_gmem, smem):
        with domain_loop(0, 8, 1):
            idx = input_gmem.compute_coords()
            smem.try_acquire()
            smem.acquire()
            smem.tma_load(gmem_idx=idx)
            smem.commit()

    @schedule
    def store_schedule(smem, output_gmem):
        with domain_loop(0, 8, 1):
            smem.try_wait()
            smem.wait()
            v = smem.read_smem()
            output_gmem.store(smem_val=v)
            smem.release()

    @schedule
    def pad(_r):
        with domain_loop(1):
            pass

    tasks = [
        Task(name="StoreTask", src_resources=[smem], dst_resources=[out], warp_idx=0, num_warps=4,
             schedule=store_schedule(smem, out)),
        Task(name="LoadTask", src_resources=[inp], dst_resources=[smem], warp_idx=4, num_warps=1,
             schedule=load_schedule(inp, smem)),
    ]
    graph = {
        smem: [inp],
        out: [smem],
    }
    return TaskManager(tasks=tasks, resource_dependency_graph=graph, smem_allocator=alloc)

if __name__ == "__main__":  # pragma: no cover
    tm = build()
    print("OK", tm.diagnostics)
