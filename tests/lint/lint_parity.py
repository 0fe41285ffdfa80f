"""Helpers: run one program through the tracing DSL and through ts-lint and compare."""
import contextlib
import importlib.util
import io
import sys
import uuid
import warnings

from ts_runtime.diagnostics import Severity
from ts_runtime.model.values import DynamicBound
from ts_runtime.testing import codes_and_lines, run_program

from ts_lint.api import analyze_source

HEADER = '''\
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
'''


def _owner(v):
    if isinstance(v, DynamicBound):    # the module name differs (import name vs __main__)
        return repr(DynamicBound(v.name, v.owner.rsplit(".", 1)[-1], v.accessed_on_class,
                                 v.required_positional, v.is_callable))
    return repr(v)


def _module_free(qualname: str) -> str:
    """User classes: the module is `__main__` for ts-lint and the import name at run time."""
    mod, _, rest = qualname.partition(".")
    return rest if mod == "__main__" or mod.startswith("_ts_") else qualname


def norm_kernel(k) -> dict:
    """A comparable digest of a KernelModel (names instead of ids, lines instead of paths)."""
    names = {rid: r.label for rid, r in k.resources.items()}

    def rng(r):
        return (r.line, r.column, r.end_line, r.end_column)
    out = {
        "resources": sorted((r.label, r.class_name, r.kind.value, r.is_barrier, names.get(r.group),
                             tuple(sorted(names[m] for m in r.members)), tuple(sorted(r.work_methods)),
                             tuple(sorted(r.tlv_names)), rng(r.range),
                             tuple((a.name, a.size, a.alignment, a.offset) for a in r.smem + r.tmem),
                             tuple(sorted((n, w.stage.value, w.returns, tuple((p.name, p.kind, p.constexpr)
                                                                              for p in w.params), w.range.line)
                                          for n, w in r.work_methods.items())),
                             repr(None if r.pipeline is None else {
                                 f: getattr(r.pipeline, f) for f in (
                                     "pipeline_type", "num_stages", "num_bytes", "producer_group_size",
                                     "consumer_group_size", "producer_agent", "consumer_agent",
                                     "cta_layout_vmnk", "producer_signaling_threads",
                                     "consumer_signaling_threads", "interleave_strides",
                                     "advance_on_wait", "advance_on_acquire")}),
                             None if r.pipeline is None else rng(r.pipeline.range),
                             None if r.pipeline is None else sorted(
                                 (k2, rng(v)) for k2, v in r.pipeline.arg_ranges.items()))
                            for r in k.resources.values()),
        "mro": sorted(tuple(_module_free(q) for q in r.class_mro) for r in k.resources.values()),
        "graph": sorted((names[e.downstream], names[e.upstream], rng(e.range)) for e in k.graph),
        "range": rng(k.range),
        "args": sorted((k2, rng(v)) for k2, v in k.arg_ranges.items()),
        "allocators": [None if a is None else (a.space, a.data_bytes, a.barrier_bytes, rng(a.range),
                                               [(x.name, x.size, x.offset) for x in a.allocations])
                       for a in (k.smem_allocator, k.tmem_allocator)],
        "options": repr(k.options),
    }
    tasks = []
    for t in k.tasks:
        low = t.lowered
        tasks.append((t.name, t.warp_idx, t.num_warps, t.num_registers, [names[x] for x in t.src],
                       [names[x] for x in t.dst], rng(t.range), sorted((k2, rng(v)) for k2, v in t.arg_ranges.items()),
                       tuple(_module_free(q) for q in t.class_mro),
                       None if low is None else (
                           repr(low.domain_start), _owner(low.domain_end), repr(low.domain_step),
                           repr(low.unroll), low.work_queue and names[low.work_queue], repr(low.skip_if),
                           [(names[e.resource], e.stage.value, e.section, repr(e.guard), e.call_idx, e.label,
                             rng(e.range), e.pre_wtl, e.post_wtl, e.skippable,
                             sorted(e.constexpr_kwargs.items()), e.via_group and names[e.via_group])
                            for e in low.entries],
                           [(r.writer, r.reader, r.src_var, r.dest_arg) for r in low.routes])))
    out["tasks"] = tasks
    return out


def runtime_kernel(path, entry="build"):
    name = f"_ts_parity_{uuid.uuid4().hex}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            spec.loader.exec_module(module)
            tm = getattr(module, entry)()
    finally:
        sys.modules.pop(name, None)
    return tm.kernel


def lint_kernel(src, path="program.py"):
    a = analyze_source(src, path)
    assert len(a.kernels) == 1, (a.kernels, [str(d) for d in a.diagnostics + a.unknowns])
    return a.kernels[0]


def assert_parity(src, tmp_path, entry="build"):
    """Same findings (code, line) and the same kernel model from both front ends."""
    path = tmp_path / "program.py"
    path.write_text(src)
    rt_findings = codes_and_lines(run_program(str(path), entry), tuple(Severity))
    analysis = analyze_source(src, str(path))
    lint_findings = codes_and_lines(analysis.diagnostics, tuple(Severity))
    assert lint_findings == rt_findings
    rk = runtime_kernel(str(path), entry)
    lk = analysis.kernels[0]
    a, b = norm_kernel(rk), norm_kernel(lk)
    for key in a:
        assert a[key] == b[key], key
    return lk
