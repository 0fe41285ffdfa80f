"""examples/hopper/ on the H200 (marked `gpu`): the wgmma GEMM against torch, the TMA copy
bit for bit.

Each case runs the example's `run_on_gpu()` in its own subprocess under a timeout (a
pipeline deadlock fails the test instead of hanging the run), with fresh random inputs
and NaN-poisoned outputs: the GEMM's output must be finite everywhere and within the
bf16 band of an fp32 reference (relative Frobenius error < 1e-2; bf16 rounding of the
output alone gives ~2e-3); the copy must match bit for bit.

    python -m pytest -q -p no:cacheprovider -m gpu tests/codegen/test_hopper_gpu.py
"""
from __future__ import annotations

import functools
import subprocess

import pytest

from ._harness import run_script

pytestmark = pytest.mark.gpu

SCRIPT = r'''
import importlib.util, json, pathlib
path = pathlib.Path(PATH)
spec = importlib.util.spec_from_file_location("hx", path)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
res = mod.run_on_gpu(**KWARGS)
print("RESULT " + json.dumps({k: v for k, v in res.items() if isinstance(v, (int, float, bool, str, list))}))
'''

GEMM = "examples/hopper/gemm_wgmma.py"
COPY = "examples/hopper/copy_tma.py"
CASES = [
    (COPY, {}),                                                                 # 4096 x 4096, 3 stages
    (COPY, {"rows": 2048, "cols": 768, "num_stages": 4, "seed": 1}),
    (COPY, {"rows": 1024, "cols": 256, "num_stages": 2, "seed": 2}),            # fewer tiles than CTAs
    (COPY, {"rows": 16384, "cols": 8192, "num_stages": 6, "seed": 3}),
    (GEMM, {"m": 1024, "n": 768, "k": 320, "cluster_m": 1, "seed": 1}),         # no cluster, odd tile counts
    (GEMM, {}),                                                                 # 2048x2048x1024, 2x1 cluster
    (GEMM, {"m": 512, "n": 512, "k": 64, "cluster_m": 2, "seed": 2}),           # one K tile
    (GEMM, {"m": 4096, "n": 4096, "k": 4096, "cluster_m": 2, "seed": 3}),       # several tiles per CTA
    (GEMM, {"m": 4096, "n": 4096, "k": 1024, "cluster_m": 2, "seed": 4, "variant": "swz8-epi1"}),
    (GEMM, {"m": 2048, "n": 1536, "k": 512, "cluster_m": 2, "seed": 5, "variant": "swz8n"}),  # 8 M clusters
    (GEMM, {"m": 2048, "n": 1536, "k": 512, "cluster_m": 1, "seed": 6, "variant": "swz8"}),   # swizzle 2
]
TIMEOUT_S = 90         # compile (~10 s) + run; a deadlocked pipeline fails here


def _id(case):
    path, kwargs = case
    return path.rsplit("/", 1)[-1].split("_")[0] + ("-" + "-".join(str(v) for v in kwargs.values()) if kwargs else "")


@functools.lru_cache(maxsize=1)
def _hopper_gpu() -> bool:
    result, _ = run_script('import json, torch\nok = torch.cuda.is_available() and '
                           'torch.cuda.get_device_capability(0)[0] == 9\nprint("RESULT " + json.dumps(ok))',
                           timeout=120)
    return bool(result)


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_hopper_example_on_gpu(case):
    if not _hopper_gpu():
        pytest.skip("needs a Hopper (sm_90) GPU with torch")
    path, kwargs = case
    script = f"PATH = {path!r}\nKWARGS = {kwargs!r}\n" + SCRIPT
    try:
        result, proc = run_script(script, env={"CUTE_DSL_ARCH": "sm_90a"}, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{case}: no result after {TIMEOUT_S} s (deadlock?)")
    assert result is not None, f"{path} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    assert result["ok"], f"{case}: {result}"
