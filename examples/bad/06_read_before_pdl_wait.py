# Single-defect variant of examples/06_pdl.py: the wait for the previous grid comes after the loop that reads its output.
# reference: ValueError: uses PDL-dependent resource 'input_gmem' before waiting on PDL barrier 'pdl_wait'
"""06 - programmatic dependent launch (PDL) around a grid-stride copy.

This kernel reads what the previous kernel in the stream wrote. With PDL it may start
before that kernel has finished, so the copy task must execute `wait_griddep()` before
its first read of the input; once its own reads are issued it may let the next kernel
start (`launch_griddep()`).

    PdlWaitBarrier ..> InputGmem --value--> OutputGmem ..> PdlLaunchBarrier

The dotted edges are ordering-only: both PDL resources are barriers (no pipeline, no
data). The graph edge `input_gmem <- pdl_wait` is what tells TS that reading the input
depends on the wait; without it TS would not check the order.
"""
import argparse
from dataclasses import dataclass

import cutlass
import cutlass.cute as cute

from ts_runtime import consumer_work, domain_loop, producer_work, schedule
from ts_runtime.resources import (MemoryResource, PdlLaunchBarrier, PdlWaitBarrier,
                                  StageInfo, TaskLocalVariable)
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager


@dataclass(kw_only=True)
class InputGmem(MemoryResource):
    src: cute.Tensor = None
    num_entries: cutlass.Int32 = 0
    value: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()

    def __post_init__(self) -> None:
        self.value = TaskLocalVariable(dtype=cutlass.Float32, default=cutlass.Float32(0))

    @consumer_work(returns=value)
    @cute.jit
    def load(self, stage_info: StageInfo) -> cutlass.Float32:
        val = cutlass.Float32(0)
        if stage_info.loop_offset < self.num_entries:
            val = self.src[stage_info.loop_offset]
        return val


@dataclass(kw_only=True)
class OutputGmem(MemoryResource):
    dst: cute.Tensor = None
    num_entries: cutlass.Int32 = 0

    @producer_work
    @cute.jit
    def store(self, stage_info: StageInfo, value: cutlass.Float32) -> None:
        if stage_info.loop_offset < self.num_entries:
            self.dst[stage_info.loop_offset] = value * 2.0


def make_task_manager(*, num_entries, start, step, num_warps: int = 4, src=None, dst=None,
                      verbose: bool = False) -> TaskManager:
    pdl_wait = PdlWaitBarrier(name="pdl_wait")
    pdl_launch = PdlLaunchBarrier(name="pdl_launch")
    input_gmem = InputGmem(name="input_gmem", src=src, num_entries=num_entries)
    output_gmem = OutputGmem(name="output_gmem", dst=dst, num_entries=num_entries)

    @schedule
    def copy_schedule(pdl_wait: PdlWaitBarrier, inp: InputGmem, out: OutputGmem,
                      pdl_launch: PdlLaunchBarrier) -> None:
        with domain_loop(start, num_entries, step):
            value = inp.load()
            out.store(value=value)
        pdl_wait.wait_griddep()  # expect: TS602
        pdl_launch.launch_griddep()    # the next grid may start now

    task = Task(
        name="PdlCopyTask",
        src_resources=[pdl_wait, input_gmem],
        dst_resources=[output_gmem, pdl_launch],
        warp_idx=0,
        num_warps=num_warps,
        schedule=copy_schedule(pdl_wait, input_gmem, output_gmem, pdl_launch),
    )
    return TaskManager(
        tasks=[task],
        resource_dependency_graph={
            input_gmem: [pdl_wait],
            output_gmem: [input_gmem],
            pdl_launch: [output_gmem],
        },
        verbose=verbose,
    )


def build(num_entries: int = 2048, num_warps: int = 4, num_ctas: int = 4,
          verbose: bool = False) -> TaskManager:
    """Host-side validation, seen from thread 0 of CTA 0 (plain ints only)."""
    return make_task_manager(num_entries=num_entries, start=0, step=num_ctas * num_warps * 32,
                             num_warps=num_warps, verbose=verbose)


@cute.kernel
def pdl_copy_kernel(src: cute.Tensor, dst: cute.Tensor, num_entries: cutlass.Int32,
                    num_warps: cutlass.Constexpr):
    bx, _, _ = cute.arch.block_idx()
    tx, _, _ = cute.arch.thread_idx()
    gdx, _, _ = cute.arch.grid_dim()
    threads = num_warps * 32
    tm = make_task_manager(num_entries=num_entries, start=bx * threads + tx,
                           step=gdx * threads, num_warps=num_warps, src=src, dst=dst)
    tm.setup_resources_and_tasks()
    tm.run()


@cute.jit
def pdl_copy(src: cute.Tensor, dst: cute.Tensor, num_entries: cutlass.Int32, stream,
             num_warps: cutlass.Constexpr = 4, num_ctas: cutlass.Constexpr = 4):
    pdl_copy_kernel(src, dst, num_entries, num_warps).launch(
        grid=(num_ctas, 1, 1), block=(num_warps * 32, 1, 1), stream=stream)


def compile_fake(num_entries: int = 2048):
    """Trace and compile the kernel with fake tensors (CUTE_DSL_ARCH=sm_100a; no GPU)."""
    from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream
    src = make_fake_compact_tensor(cutlass.Float32, (num_entries,))
    dst = make_fake_compact_tensor(cutlass.Float32, (num_entries,))
    return cute.compile(pdl_copy, src, dst, cutlass.Int32(num_entries), make_fake_stream())


def run_on_gpu(num_entries: int = (1 << 20) + 3, num_warps: int = 4, num_ctas: int = 264,
               seed: int = 0) -> dict:
    """Compile for the local GPU (PDL: sm_90+) and check dst == 2 * src bit for bit on a
    NaN-poisoned output (a plain launch: the PDL instructions then wait for nothing)."""
    import torch
    from cutlass.cute.runtime import from_dlpack
    from cutlass.torch import current_stream

    gen = torch.Generator(device="cuda").manual_seed(seed)
    src = torch.randn(num_entries, dtype=torch.float32, device="cuda", generator=gen)
    dst = torch.full_like(src, float("nan"))
    src_c, dst_c = from_dlpack(src, assumed_align=16), from_dlpack(dst, assumed_align=16)
    stream = current_stream()
    n = cutlass.Int32(num_entries)
    compiled = cute.compile(pdl_copy, src_c, dst_c, n, stream, num_warps, num_ctas)
    compiled(src_c, dst_c, n, stream)
    torch.cuda.synchronize()
    bad = int((dst.view(torch.int32) != (src * 2.0).view(torch.int32)).sum())
    return {"ok": bad == 0, "mismatches": bad, "bytes": 2 * src.numel() * src.element_size(),
            "launch": lambda: compiled(src_c, dst_c, n, stream), "src": src, "dst": dst}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--num-entries", type=int, default=2048)
    ap.add_argument("--verbose", action="store_true", help="print the schedule table")
    ap.add_argument("--compile", action="store_true", help="also compile with fake tensors")
    ap.add_argument("--gpu", action="store_true", help="run on the local GPU and check the result")
    args = ap.parse_args()
    build(num_entries=args.num_entries, verbose=args.verbose)
    if args.compile:
        compile_fake(args.num_entries)
    if args.gpu:
        res = run_on_gpu(args.num_entries)
        print("GPU:", "match" if res["ok"] else f"{res['mismatches']} mismatches")
        if not res["ok"]:
            raise SystemExit(1)
    print("OK")
