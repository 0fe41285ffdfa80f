"""The reference's verdict on one tutorial program (or a variant of it): a child process of
benchmarks/agreement.py.

usage: python benchmarks/agreement_reference.py PROGRAM.py TUTORIAL_KEY

The reference checks a TS program only while the CuTe DSL compiles its kernel, so the
program is imported as a module and its host function is compiled for sm_100a with fake
tensors (no GPU), with the arguments its tutorial's `run()` would pass (HOOKS). The last
line of stdout is `@@VERDICT@@{json}`: accepted, the exception type and message, and the
program's lines in its traceback. `torch` is replaced by a stub: the tutorials import it
for their GPU run only.
"""
import importlib.util
import json
import os
import re
import sys
import tempfile
import traceback
import types
import warnings

# benchmarks/copy.py would shadow the stdlib `copy` that the DSL imports
sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != os.path.dirname(os.path.realpath(__file__))]

os.environ.setdefault("CUTE_DSL_ARCH", "sm_100a")


class _Stub(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return type(name, (), {})


sys.modules.setdefault("torch", _Stub("torch"))

import cutlass  # noqa: E402
import cutlass.cute as cute  # noqa: E402
from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream  # noqa: E402

F16, F32, I16, I32 = cutlass.Float16, cutlass.Float32, cutlass.Int16, cutlass.Int32


def T(dtype, shape, order=None, align=16):
    return make_fake_compact_tensor(dtype, shape, stride_order=order, assumed_align=align)


def _next(c=None):
    return cute.compile[cute.FrontendNext] if hasattr(cute, "FrontendNext") else cute.compile


def _gemm(m, n, k, *extra):
    def hook(mod):
        return _next()(mod.host_function, T(F16, (m, k), (1, 0)), T(F16, (n, k), (1, 0)),
                       T(F16, (m, n), (1, 0)), (m, n, k), *extra)
    return hook


def _as_written(mod):
    """The front end the tutorial's own `cute.compile` names: its newer versions compile
    with FrontendNext, the older ones without (and their kernels need it that way)."""
    import inspect
    return _next() if "FrontendNext" in inspect.getsource(mod) else cute.compile


def _copy_grid_stride(mod):
    n = 1 << 20
    return _as_written(mod)(mod.gmem_copy_kernel_host, n, T(I16, (n,)), T(I16, (n,)), 256, 8)


def _copy_tma(mod):
    return _as_written(mod)(mod.tma_copy_kernel_host, (256, 512), T(F16, (256, 512), (1, 0)),
                            T(F16, (256, 512), (1, 0)), False)


def _copy_tma_conditional(mod):
    return _next()(mod.tma_copy_conditional_kernel_host, (256, 512), 128, T(F16, (256, 512), (1, 0)),
                   T(F16, (256, 512), (1, 0)), T(F16, (256, 4), (1, 0)))


def _persistent_skip(mod):
    return _next()(mod.tma_copy_persistent_skip_kernel_host, (256, 512), T(F16, (256, 512), (1, 0)),
                   T(F16, (256, 512), (1, 0)), 4, 4)


def _varlen(mod):
    return cute.compile(mod.host_function, T(F32, (200,)), T(F32, (8, 20), (1, 0)), T(I32, (9,)), 8, 148)


def _merge_copy(mod):
    n = 1024
    return _next()(mod.host_function, T(F16, (n,)), T(F16, (1, n), (1, 0)), T(F16, (n,)),
                   T(F16, (1, n), (1, 0)), n // 128)


def _merge_gemm(mod):
    """Versions of the tutorial with a FusedMerge option take the group mode as an argument
    (its run() defaults to Merge)."""
    import inspect
    params = inspect.signature(mod.host_function).parameters
    extra = (mod.PipelineGroupMode.Merge,) if "ab_sync_mode" in params else ()
    return _gemm(256, 256, 256, *extra)(mod)


def _fork(mod):
    m, n, k = 256, 256, 256
    return _next()(mod.host_fn, T(F16, (m, k), (1, 0)), T(F16, (n, k), (1, 0)), T(F16, (m, n), (1, 0)),
                   T(F16, (8, 128 * 64), (1, 0)), (m, n, k), True)


def _resadd(mod):
    # both residual-load modes of the tutorial's --mode choice; versions whose host function
    # takes the two group modes get the ones its run() defaults to (fused A/B, merged epilogue)
    import inspect
    params = inspect.signature(mod.host_function).parameters
    modes = (mod.PipelineGroupMode.FusedMerge, mod.PipelineGroupMode.Merge) if "ab_sync_mode" in params else ()
    m, n, k = 256, 256, 256
    for use_tma in (False, True):
        _next()(mod.host_function, T(F16, (m, k), (1, 0)), T(F16, (n, k), (1, 0)), T(F16, (m, n), (1, 0)),
                T(F16, (m, n), (1, 0)), (m, n, k), use_tma, *modes)


def _nvfp4(mod):
    from cutlass.cute.runtime import make_ptr
    g = cutlass.AddressSpace.gmem
    a = make_ptr(mod.ab_dtype, 0, g, assumed_align=16)
    b = make_ptr(mod.ab_dtype, 0, g, assumed_align=16)
    c = make_ptr(mod.c_dtype, 0, g, assumed_align=32)
    sfa = make_ptr(mod.sf_dtype, 0, g, assumed_align=32)
    sfb = make_ptr(mod.sf_dtype, 0, g, assumed_align=32)
    return _next()(mod.gemm, a, b, sfa, sfb, c, (512, 512, 512, 1), make_fake_stream())


def _cluster(mod):
    return _gemm(512, 512, 512, 74, make_fake_stream())(mod)


# tutorial file stem -> compile of its kernel as its run() does it
HOOKS = {
    "01_copy_grid_stride": _copy_grid_stride,
    "02_copy_tma": _copy_tma,
    "03_copy_tma_conditional": _copy_tma_conditional,
    "01_copy_persistent_skip_tile": _persistent_skip,
    "02_copy_varlen_dynamic_domain": _varlen,
    "01_merge_copy": _merge_copy,
    "01_fp16_bf16_gemm_3": _gemm(256, 512, 256, make_fake_stream()),
    "02_merge_gemm": _merge_gemm,
    "01_gemm_split_k_fp16": _gemm(256, 256, 256),
    "04_fork_load_gemm_act": _fork,
    "03_merge_gemm_resadd": _resadd,
    "01_fp16_bf16_gemm_3_cluster": _cluster,
    "01_fp16_bf16_gemm_3_cluster_clc": _cluster,
    "02_fp16_bf16_gemm_3_cute_cluster": lambda mod: _gemm(512, 512, 256, 74)(mod),
    "01_gemm_nvfp4": _nvfp4,
    # a program of one's own that says how it is compiled (probe programs, tests)
    "compile_fake": lambda mod: mod.compile_fake(),
}


def _complete_pipeline_module():
    """The tutorials import some `cutlass.pipeline` names from the reference's pipeline
    module, which re-exports only part of them: benchmarks/checker.py's
    `_add_pipeline_names` adds them (as tests/oracle.py's runner does)."""
    here = os.path.dirname(os.path.realpath(__file__))
    spec = importlib.util.spec_from_file_location("ts_bench_checker", os.path.join(here, "checker.py"))
    checker = sys.modules[spec.name] = importlib.util.module_from_spec(spec)   # for its dataclasses
    spec.loader.exec_module(checker)
    checker._add_pipeline_names()


def main():
    path, key = sys.argv[1], sys.argv[2]
    text = open(path, encoding="utf-8").read()
    # deep enough for the tutorials' `Path(__file__).resolve().parents[10]` (their repository
    # root, for its sitecustomize): an IndexError at import in a shallow folder
    folder = os.path.join(tempfile.mkdtemp(prefix="ts_agree_"), *["d"] * 12)
    os.makedirs(folder)
    prog = os.path.join(folder, os.path.basename(path))
    with open(prog, "w", encoding="utf-8") as f:
        f.write(text)
    _complete_pipeline_module()
    result = {"accepted": True, "exc_type": None, "message": "", "lines": []}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            spec = importlib.util.spec_from_file_location("ts_agree_prog", prog)
            mod = importlib.util.module_from_spec(spec)
            sys.modules["ts_agree_prog"] = mod
            spec.loader.exec_module(mod)
            HOOKS[key](mod)
        except BaseException as exc:  # the verdict, whatever the program raised
            result.update(accepted=False, exc_type=type(exc).__name__, message=str(exc)[:600])
            result["lines"] = [fr.lineno for fr in traceback.extract_tb(exc.__traceback__)
                               if fr.filename == prog]
            result["msg_lines"] = [int(m) for m in re.findall(
                re.escape(os.path.basename(path)) + r"\"?(?:, line |:)(\d+)", str(exc))]
    print("@@VERDICT@@" + json.dumps(result))


if __name__ == "__main__":
    main()
