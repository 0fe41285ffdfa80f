"""01 - grid-stride GMEM copy: the smallest TS program.

Two global-memory resources and one task. The input resource's consumer work reads one
element and hands it to the output resource's producer work through a task-local value
(`value`); neither resource has shared memory or a pipeline, so the schedule needs no
acquire/commit/wait/release brackets.

    InputGmem --value--> OutputGmem          (one task, warps 0..num_warps-1)

`build()` constructs and validates the whole TS skeleton on the host with plain ints
(no GPU, no kernel). `copy_kernel` does the same inside a kernel with runtime bounds and
then runs it; `compile_fake()` compiles it for sm_100a with fake tensors (no GPU).
"""
import argparse
from dataclasses import dataclass

import cutlass
import cutlass.cute as cute

from ts_runtime import consumer_work, domain_loop, producer_work, schedule
from ts_runtime.resources import MemoryResource, StageInfo, TaskLocalVariable
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager


@dataclass(kw_only=True)
class InputGmem(MemoryResource):
    """Source tensor; consumer work reads element `loop_offset`."""
    src: cute.Tensor = None
    num_entries: cutlass.Int32 = 0
    value: cutlass.Constexpr[TaskLocalVariable] = TaskLocalVariable.uninitialized()

    def __post_init__(self) -> None:
        self.value = TaskLocalVariable(dtype=cutlass.Int16, default=cutlass.Int16(0),
                                       docs="element read in the current iteration")

    @consumer_work(returns=value)
    @cute.jit
    def load(self, stage_info: StageInfo) -> cutlass.Int16:
        idx = stage_info.loop_offset
        val = cutlass.Int16(0)
        if idx < self.num_entries:
            val = self.src[idx]
        return val


@dataclass(kw_only=True)
class OutputGmem(MemoryResource):
    """Destination tensor; producer work writes element `loop_offset`."""
    dst: cute.Tensor = None
    num_entries: cutlass.Int32 = 0

    @producer_work
    @cute.jit
    def store(self, stage_info: StageInfo, value: cutlass.Int16) -> None:
        idx = stage_info.loop_offset
        if idx < self.num_entries:
            self.dst[idx] = value


def make_task_manager(*, num_entries, start, step, num_warps: int, src=None, dst=None,
                      verbose: bool = False) -> TaskManager:
    """Resources -> schedule -> task -> TaskManager (validates). Shared by host and kernel."""
    input_gmem = InputGmem(name="input_gmem", src=src, num_entries=num_entries)
    output_gmem = OutputGmem(name="output_gmem", dst=dst, num_entries=num_entries)

    @schedule
    def copy_schedule(inp: InputGmem, out: OutputGmem) -> None:
        with domain_loop(start, num_entries, step):
            value = inp.load()
            out.store(value=value)

    copy_task = Task(
        name="CopyTask",
        src_resources=[input_gmem],
        dst_resources=[output_gmem],
        warp_idx=0,
        num_warps=num_warps,
        schedule=copy_schedule(input_gmem, output_gmem),
    )
    return TaskManager(
        tasks=[copy_task],
        resource_dependency_graph={output_gmem: [input_gmem]},
        verbose=verbose,
    )


def build(num_entries: int = 4096, num_warps: int = 4, num_ctas: int = 4,
          verbose: bool = False) -> TaskManager:
    """Host-side validation, seen from thread 0 of CTA 0 (plain ints only)."""
    threads = num_warps * 32
    return make_task_manager(num_entries=num_entries, start=0, step=num_ctas * threads,
                             num_warps=num_warps, verbose=verbose)


@cute.kernel
def copy_kernel(src: cute.Tensor, dst: cute.Tensor, num_entries: cutlass.Int32,
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
def copy(src: cute.Tensor, dst: cute.Tensor, num_entries: cutlass.Int32, stream,
         num_warps: cutlass.Constexpr = 4, num_ctas: cutlass.Constexpr = 4):
    copy_kernel(src, dst, num_entries, num_warps).launch(
        grid=(num_ctas, 1, 1), block=(num_warps * 32, 1, 1), stream=stream)


def compile_fake(num_entries: int = 4096):
    """Trace and compile the kernel with fake tensors (set CUTE_DSL_ARCH=sm_100a; no GPU)."""
    from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream
    src = make_fake_compact_tensor(cutlass.Int16, (num_entries,))
    dst = make_fake_compact_tensor(cutlass.Int16, (num_entries,))
    return cute.compile(copy, src, dst, cutlass.Int32(num_entries), make_fake_stream())


def run_on_gpu(num_entries: int = (1 << 20) + 7, num_warps: int = 4, num_ctas: int = 264,
               seed: int = 0) -> dict:
    """Compile for the local GPU, copy fresh random data into a poisoned (0xFFFF) output
    and compare bit for bit with the input. Returns {"ok", "mismatches", "launch",
    "bytes"}; `launch()` reruns the compiled kernel on the same buffers (benchmarks)."""
    import torch
    from cutlass.cute.runtime import from_dlpack
    from cutlass.torch import current_stream

    gen = torch.Generator(device="cuda").manual_seed(seed)
    src = torch.randint(-(1 << 15), 1 << 15, (num_entries,), dtype=torch.int16, device="cuda",
                        generator=gen)
    dst = torch.full_like(src, -1)                     # 0xFFFF everywhere
    src_c, dst_c = from_dlpack(src, assumed_align=16), from_dlpack(dst, assumed_align=16)
    stream = current_stream()
    n = cutlass.Int32(num_entries)
    compiled = cute.compile(copy, src_c, dst_c, n, stream, num_warps, num_ctas)
    compiled(src_c, dst_c, n, stream)
    torch.cuda.synchronize()
    bad = int((dst != src).sum())
    return {"ok": bad == 0, "mismatches": bad, "bytes": 2 * src.numel() * src.element_size(),
            "launch": lambda: compiled(src_c, dst_c, n, stream), "src": src, "dst": dst}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--num-entries", type=int, default=4096)
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
