"""examples/hopper/ (TmaWgmma GEMM, TMA copy): validated, linted and compiled for sm_90a.

CPU only (CI): the host-side `build()` must validate clean through the runtime and through
ts-lint with the same findings (none); one subprocess compiles both kernels for sm_90a with
fake tensors and keeps the PTX (and the SASS when nvdisasm is available), in which the
instructions the schedules imply must appear: `wgmma.mma_async` / `HGMMA`, TMA loads and
stores (`cp.async.bulk.tensor`, `UTMALDG`, `UTMASTG`), TMA multicast in the 2x1 cluster,
`setmaxnreg` for the register split, and the TmaWgmma release's `wgmma.wait_group 1` in the
K loop and `wgmma.wait_group 0` after it. Skipped without cutlass.
"""
from __future__ import annotations

import re

import pytest

from ts_runtime.diagnostics import Severity

from ._harness import ROOT, nvdisasm_status, run_script

HOPPER = ROOT / "examples" / "hopper"
FILES = sorted(HOPPER.glob("[a-z]*.py"))

SCRIPT = r'''
import importlib.util, json, os, pathlib, traceback
dump = pathlib.Path(os.environ["CUTE_DSL_DUMP_DIR"])
out = {}
for name, kwargs in CASES:
    path = pathlib.Path("examples/hopper") / name
    before = set(dump.iterdir())
    rec = {"ok": False, "error": "", "ptx": "", "sass": ""}
    try:
        spec = importlib.util.spec_from_file_location("hx_" + path.stem, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        mod.compile_fake(**kwargs)
        rec["ok"] = True
    except BaseException as exc:
        rec["error"] = "".join(traceback.format_exception(exc))[-4000:]
    new = set(dump.iterdir()) - before
    rec["ptx"] = "\n".join(p.read_text() for p in sorted(new) if p.suffix == ".ptx")
    rec["sass"] = "\n".join(p.read_text() for p in sorted(new) if p.suffix == ".sass")
    out[name + repr(sorted(kwargs.items()))] = rec
print("RESULT " + json.dumps(out))
'''

CASES = [("gemm_wgmma.py", {"cluster_m": 2}), ("gemm_wgmma.py", {"cluster_m": 1}), ("copy_tma.py", {}),
         ("gemm_wgmma.py", {"cluster_m": 2, "variant": "swz8-epi1"})]
KEYS = [n + repr(sorted(k.items())) for n, k in CASES]


def _key(name, **kwargs):
    return name + repr(sorted(kwargs.items()))


@pytest.fixture(scope="module")
def sm90(tmp_path_factory):
    dump = tmp_path_factory.mktemp("ptx_hopper")
    keep = "ptx,sass" if nvdisasm_status()[0] else "ptx"
    result, proc = run_script(f"CASES = {CASES!r}\n" + SCRIPT,
                              env={"CUTE_DSL_ARCH": "sm_90a", "CUTE_DSL_KEEP": keep, "CUTE_DSL_DUMP_DIR": str(dump),
                                   "CUTE_DSL_DISABLE_FILE_CACHING": "1"})
    assert result is not None, f"compile script failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return result


def test_hopper_examples_present():
    assert [p.name for p in FILES] == ["copy_tma.py", "gemm_wgmma.py"]


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_validates_clean_runtime_and_lint(path):
    pytest.importorskip("cutlass", reason="examples import cutlass")
    from ts_lint.api import lint_source
    from ts_runtime.testing import run_program
    runtime = run_program(str(path))
    lint = lint_source(path.read_text(), str(path))
    for diags in (runtime, lint):
        errors = [d for d in diags if d.severity is not Severity.INFO]
        assert not errors, "\n".join(d.format() for d in errors)


@pytest.mark.parametrize("key", KEYS)
def test_compiles_for_sm90a(sm90, key):
    rec = sm90[key]
    assert rec["ok"], rec["error"]
    assert "cp.async.bulk.tensor" in rec["ptx"]
    assert re.search(r"mbarrier\.(try_wait|arrive)", rec["ptx"])


@pytest.mark.parametrize("cluster_m", [2, 1])
def test_gemm_ptx(sm90, cluster_m):
    ptx = sm90[_key("gemm_wgmma.py", cluster_m=cluster_m)]["ptx"]
    assert re.search(r"wgmma\.mma_async\.sync\.aligned\.m64n256k16\.f32\.bf16\.bf16", ptx)
    assert "wgmma.commit_group" in ptx and "wgmma.fence" in ptx
    # the TmaWgmma release: one group in flight inside the K loop, none after it
    assert re.search(r"wgmma\.wait_group\.sync\.aligned\s+1;", ptx)
    assert re.search(r"wgmma\.wait_group\.sync\.aligned\s+0;", ptx)
    assert re.search(r"cp\.async\.bulk\.tensor\.\dd\.global\.shared::cta", ptx), "TMA store epilogue"
    assert "setmaxnreg.dec.sync.aligned.u32 \t40" in ptx.replace("  ", " ") or re.search(
        r"setmaxnreg\.dec\.sync\.aligned\.u32\s+40;", ptx)
    assert re.search(r"setmaxnreg\.inc\.sync\.aligned\.u32\s+232;", ptx)
    assert "stmatrix" in ptx
    if cluster_m > 1:
        assert "multicast::cluster" in ptx, "B is multicast across the 2x1 cluster"
        assert "barrier.cluster" in ptx
    else:
        assert "multicast::cluster" not in ptx


def test_gemm_variant_ptx(sm90):
    """swizzled tile order + one named barrier per epilogue subtile (benchmarks' --variants)."""
    base = sm90[_key("gemm_wgmma.py", cluster_m=2)]["ptx"]
    var = sm90[_key("gemm_wgmma.py", cluster_m=2, variant="swz8-epi1")]["ptx"]
    assert re.search(r"wgmma\.mma_async\.sync\.aligned\.m64n256k16\.f32\.bf16\.bf16", var)
    # 2 barriers per subtile and wait_group.read 3 by default; 1 and wait_group.read 2 here
    assert re.findall(r"cp\.async\.bulk\.wait_group\.read\s+(\d+);", base).count("3") == 8
    assert re.findall(r"cp\.async\.bulk\.wait_group\.read\s+(\d+);", var).count("2") == 8
    assert len(re.findall(r"bar\.sync\s+1, 256;", base)) == 16
    assert len(re.findall(r"bar\.sync\s+1, 256;", var)) == 8


def test_effective_swizzle():
    pytest.importorskip("cutlass", reason="examples import cutlass")
    import importlib.util
    spec = importlib.util.spec_from_file_location("hx_gemm_wgmma", HOPPER / "gemm_wgmma.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    v = mod.VARIANTS
    assert mod.effective_swizzle(8192, 8192, 2, v["swz8"]) == 8        # 32 N tiles
    assert mod.effective_swizzle(8192, 1024, 2, v["swz8"]) == 4        # 4 N tiles
    assert mod.effective_swizzle(1024, 768, 1, v["swz8"]) == 1         # 3 N tiles
    assert mod.effective_swizzle(8192, 1024, 2, v["swz8n"]) == 8       # 32 M clusters
    assert mod.effective_swizzle(768, 8192, 2, v["swz8n"]) == 1        # 3 M clusters
    assert mod.effective_swizzle(8192, 8192, 2, v["base"]) == 1


def test_copy_ptx(sm90):
    ptx = sm90[_key("copy_tma.py")]["ptx"]
    assert re.search(r"cp\.async\.bulk\.tensor\.\dd\.shared::(cta|cluster)\.global", ptx), "TMA load"
    assert re.search(r"cp\.async\.bulk\.tensor\.\dd\.global\.shared::cta", ptx), "TMA store"
    assert re.search(r"cp\.async\.bulk\.wait_group\.read\s+1;", ptx)
    assert "wgmma" not in ptx


def _ops(rec):
    path, why = nvdisasm_status()
    if not path:
        pytest.skip(f"no nvdisasm for CUTE_DSL_KEEP=sass ({why}); pip install -e '.[sass]'")
    assert rec["sass"], "no SASS was dumped"
    return set(re.findall(r"^\s+/\*[0-9a-f]+\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_.]*)", rec["sass"], re.M))


def test_gemm_sass(sm90):
    rec = sm90[_key("gemm_wgmma.py", cluster_m=2)]
    ops = _ops(rec)
    for op in ("HGMMA", "UTMALDG", "UTMASTG", "WARPGROUP.DEPBAR.LE", "USETMAXREG.DEALLOC",
               "USETMAXREG.TRY_ALLOC", "STSM"):
        assert any(o.startswith(op) for o in ops), (op, sorted(ops))
    assert "HGMMA.64x256x16.F32.BF16" in rec["sass"]
    assert re.search(r"UTMALDG\.2D\.MULTICAST", rec["sass"]), "B is multicast"
    assert not {o for o in ops if o.startswith(("STL", "LDL"))}, "register spills"


def test_copy_sass(sm90):
    ops = _ops(sm90[_key("copy_tma.py")])
    assert any(o.startswith("UTMALDG") for o in ops) and any(o.startswith("UTMASTG") for o in ops), sorted(ops)
