"""Every example kernel compiles through ts codegen (CPU only, fake tensors).

One subprocess per target architecture compiles all examples with
`CUTE_DSL_KEEP=ptx` (sm_100a: `ptx,sass` when nvdisasm is installed, the `sass` extra)
and reports each example's PTX and SASS; the tests then look for the instructions the
schedule must have produced, in both. The copy examples and the pipeline-group
example are also compiled for sm_90a (Hopper): they must not depend on Blackwell ops.
Skipped when nvidia-cutlass-dsl is not installed.
"""
from __future__ import annotations

import re

import pytest

from ._harness import EXAMPLES, ROOT, nvdisasm_status, run_script

SCRIPT = r'''
import importlib.util, json, os, sys, traceback, pathlib
dump = pathlib.Path(os.environ["CUTE_DSL_DUMP_DIR"])
out = {}
for name in NAMES:
    path = pathlib.Path(name) if "/" in name else pathlib.Path("examples") / name
    before = set(dump.iterdir())
    rec = {"ok": False, "error": "", "ptx": "", "sass": ""}
    try:
        spec = importlib.util.spec_from_file_location("ex_" + path.stem, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        mod.compile_fake()
        rec["ok"] = True
    except BaseException as exc:
        rec["error"] = "".join(traceback.format_exception(exc))[-4000:]
    new = sorted(p for p in set(dump.iterdir()) - before if p.suffix == ".ptx")
    rec["ptx"] = "\n".join(p.read_text() for p in new)
    rec["sass"] = "\n".join(p.read_text() for p in sorted(p for p in set(dump.iterdir()) - before
                                                         if p.suffix == ".sass"))
    out[name] = rec
print("RESULT " + json.dumps(out))
'''

ALL = sorted(p.name for p in EXAMPLES.glob("[0-9][0-9]_*.py"))
HOPPER_OK = [n for n in ALL if n[:2] in ("01", "02", "03", "04", "06", "07")]
KERNELS = sorted(f"tests/codegen/kernels/{p.name}" for p in (ROOT / "tests/codegen/kernels").glob("[a-z]*.py"))
BLACKWELL_ONLY = {"tests/codegen/kernels/clc_copy.py"}
HOPPER_KERNELS = [k for k in KERNELS if k not in BLACKWELL_ONLY]


def _compile_all(arch, names, tmp_path_factory, sass=False):
    dump = tmp_path_factory.mktemp(f"ptx_{arch}")
    script = f"NAMES = {names!r}\n" + SCRIPT
    keep = "ptx,sass" if sass and nvdisasm_status()[0] else "ptx"
    result, proc = run_script(script, env={"CUTE_DSL_ARCH": arch, "CUTE_DSL_KEEP": keep,
                                           "CUTE_DSL_DUMP_DIR": str(dump),
                                           "CUTE_DSL_DISABLE_FILE_CACHING": "1"})
    assert result is not None, f"compile script failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return result


@pytest.fixture(scope="module")
def sm100(tmp_path_factory):
    return _compile_all("sm_100a", ALL + KERNELS, tmp_path_factory, sass=True)


@pytest.fixture(scope="module")
def sm90(tmp_path_factory):
    return _compile_all("sm_90a", HOPPER_OK + HOPPER_KERNELS, tmp_path_factory)


def _ptx(results, name):
    rec = results[name]
    assert rec["ok"], rec["error"]
    assert rec["ptx"], "no PTX was dumped"
    # strip comments and debug locations
    return "\n".join(ln for ln in rec["ptx"].splitlines()
                     if not ln.lstrip().startswith(("//", ".loc", ".file")))


# name -> (patterns that must appear, patterns that must not)
EXPECT = {
    "01_copy_grid_stride.py": ([r"ld\.global", r"st\.global"], [r"mbarrier", r"setmaxnreg"]),
    "02_copy_tma.py": ([r"cp\.async\.bulk\.tensor", r"mbarrier\.init", r"mbarrier\.try_wait",
                        r"mbarrier\.arrive\.expect_tx", r"mbarrier\.arrive\.shared",
                        r"setmaxnreg\.dec\.sync\.aligned\.u32\s+160", r"setmaxnreg\.dec\.sync\.aligned\.u32\s+40",
                        r"prefetch\.tensormap"], []),
    "03_copy_persistent_skip.py": ([r"%nctaid", r"st\.global"], [r"mbarrier"]),
    "04_copy_varlen.py": ([r"ld\.global", r"st\.global"], [r"mbarrier"]),
    "05_gemm_schedule.py": ([r"tcgen05\.commit", r"mbarrier\.arrive\.expect_tx", r"mbarrier\.try_wait",
                             r"setmaxnreg"], []),
    "06_pdl.py": ([r"griddepcontrol\.wait", r"griddepcontrol\.launch_dependents"], [r"mbarrier"]),
    "07_pipeline_groups.py": ([r"cp\.async\.bulk\.tensor", r"mbarrier\.arrive\.expect_tx",
                               r"mbarrier\.arrive\.shared", r"mbarrier\.try_wait"], []),
}


@pytest.mark.parametrize("name", ALL)
def test_example_compiles_sm100(sm100, name):
    ptx = _ptx(sm100, name)
    assert ".target sm_100a" in ptx
    must, must_not = EXPECT.get(name, ([], []))
    for pat in must:
        assert re.search(pat, ptx), f"{name}: expected /{pat}/ in the PTX"
    for pat in must_not:
        assert not re.search(pat, ptx), f"{name}: unexpected /{pat}/ in the PTX"


@pytest.mark.parametrize("name", HOPPER_OK)
def test_copy_examples_compile_for_hopper(sm90, name):
    ptx = _ptx(sm90, name)
    assert ".target sm_90a" in ptx
    assert "tcgen05" not in ptx


def test_tma_copy_barrier_protocol(sm100):
    """02: four barriers (2 stages x full/empty) with the configured arrival counts; the
    loader arms `full` with the 256-byte stage and the store warps release `empty`."""
    ptx = _ptx(sm100, "02_copy_tma.py")
    inits = re.findall(r"mbarrier\.init\.shared\.b64\s+\[[^\]]+\],\s*(%r\d+|\d+)", ptx)
    assert len(inits) == 4
    assert re.search(r"mov\.b32\s+%r\d+,\s*256;\s*\n\s*mbarrier\.arrive\.expect_tx", ptx)
    assert re.search(r"mov\.b32\s+%r\d+,\s*128;\s*\n\s*mbarrier\.init", ptx)


@pytest.mark.parametrize("name", HOPPER_KERNELS)
def test_feature_kernel_compiles_for_hopper(sm90, name):
    ptx = _ptx(sm90, name)
    assert ".target sm_90a" in ptx


def test_interleave_lanes(sm90):
    """Warp-lane interleave: each warp's cursor starts at its lane, so every one of the
    4 stages' full/empty barriers is initialised with one warp's 32 arrivals."""
    ptx = _ptx(sm90, "tests/codegen/kernels/interleave.py")
    assert len(re.findall(r"mbarrier\.init\.shared\.b64", ptx)) == 8
    assert re.search(r"mov\.b32\s+%r\d+,\s*32;\s*\n\s*mbarrier\.init", ptx)


@pytest.mark.parametrize("name", KERNELS)
def test_feature_kernel_compiles_sm100(sm100, name):
    assert ".target sm_100a" in _ptx(sm100, name)


def test_umma_gemm(sm100):
    """A real UMMA GEMM: TMA loads of A and B, tcgen05.mma from SMEM descriptors into TMEM,
    tcgen05.commit onto the SMEM ring's empty barrier and the accumulator's full barrier,
    and the tcgen05.ld epilogue."""
    ptx = _ptx(sm100, "08_gemm_umma.py")
    for pat in (r"cp\.async\.bulk\.tensor", r"tcgen05\.mma\.cta", r"tcgen05\.commit", r"tcgen05\.ld",
                r"tcgen05\.alloc", r"mbarrier\.arrive\.expect_tx", r"mbarrier\.try_wait"):
        assert re.search(pat, ptx), f"expected /{pat}/ in the PTX"


def test_clc_scheduler(sm100):
    """CLC queue: the scheduler arms the stage with the 16 response bytes, issues the
    cancel query onto that stage's barrier, and every task decodes the response."""
    ptx = _ptx(sm100, "tests/codegen/kernels/clc_copy.py")
    assert re.search(r"clusterlaunchcontrol\.try_cancel\.async", ptx)
    assert re.search(r"clusterlaunchcontrol\.query_cancel\.is_canceled", ptx)
    assert re.search(r"mbarrier\.arrive\.expect_tx", ptx)


# ----------------------------------------------------------------------------- SASS
# What ptxas made of the schedule's instructions on sm_100a (nvdisasm mnemonics):
#   UTMALDG           cp.async.bulk.tensor (TMA load)     UTMACCTL.PF  prefetch.tensormap
#   SYNCS.EXCH.64     mbarrier.init                       SYNCS.ARRIVE.TRANS64  mbarrier.arrive(.expect_tx)
#   SYNCS.PHASECHK    mbarrier.try_wait (phase check)     UTCBAR       tcgen05.commit (mbarrier arrive)
#   UTCHMMA           tcgen05.mma (f16 kind)              ACQBULK / PREEXIT  griddepcontrol.wait / launch_dependents
#   LDTM              tcgen05.ld (TMEM -> registers)      UGETNEXTWORKID  clusterlaunchcontrol.try_cancel
SYNCS = [r"SYNCS\.EXCH\.64", r"SYNCS\.ARRIVE\.TRANS64", r"SYNCS\.PHASECHK\.TRANS64"]
SASS_EXPECT = {
    "01_copy_grid_stride.py": ([r"LDG", r"STG"], [r"SYNCS", r"UTMA"]),
    "02_copy_tma.py": ([r"UTMALDG", r"UTMACCTL\.PF"] + SYNCS, [r"UTC\w*MMA"]),
    "03_copy_persistent_skip.py": ([r"STG"], [r"SYNCS"]),
    "04_copy_varlen.py": ([r"LDG", r"STG"], [r"SYNCS"]),
    "05_gemm_schedule.py": ([r"UTCBAR"] + SYNCS, []),
    "06_pdl.py": ([r"ACQBULK", r"PREEXIT"], [r"SYNCS"]),
    "07_pipeline_groups.py": ([r"UTMALDG"] + SYNCS, []),
    "tests/codegen/kernels/clc_copy.py": ([r"UGETNEXTWORKID"] + SYNCS, []),
    "tests/codegen/kernels/persistent_tma.py": ([r"UTMALDG"] + SYNCS, []),
    "tests/codegen/kernels/twl_tma.py": ([r"UTMALDG"] + SYNCS, []),
    "tests/codegen/kernels/merge_aow.py": ([r"UTMALDG"] + SYNCS, []),
    "08_gemm_umma.py": ([r"UTMALDG", r"UTCHMMA", r"UTCBAR", r"LDTM"] + SYNCS, []),
    "tests/codegen/kernels/fused_merge.py": (SYNCS[:1] + SYNCS[2:] + [r"SYNCS\.ARRIVE"], []),
    "tests/codegen/kernels/interleave.py": (SYNCS[:1] + SYNCS[2:] + [r"SYNCS\.ARRIVE"], []),
}


def _sass(results, name):
    path, why = nvdisasm_status()
    if path is None:
        pytest.skip(f"no nvdisasm for CUTE_DSL_KEEP=sass ({why}); pip install -e '.[sass]'")
    rec = results[name]
    assert rec["ok"], rec["error"]
    assert rec["sass"], "no SASS was dumped"
    # instruction lines only: "/*0070*/   @P0 BRA ..." -> the opcode with its modifiers
    ops = re.findall(r"^\s+/\*[0-9a-f]+\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_.]*)", rec["sass"], re.M)
    return "\n".join(ops)


@pytest.mark.parametrize("name", sorted(SASS_EXPECT))
def test_sass_sm100(sm100, name):
    ops = _sass(sm100, name)
    must, must_not = SASS_EXPECT[name]
    for pat in must:
        assert re.search(r"^" + pat, ops, re.M), f"{name}: expected /{pat}/ in the SASS"
    for pat in must_not:
        assert not re.search(r"^" + pat, ops, re.M), f"{name}: unexpected /{pat}/ in the SASS"


@pytest.mark.reference
def test_reference_compiles_umma_gemm(tmp_path):
    """The reference builds the same UMMA GEMM program (translated to its package), and
    its PTX has the instructions ts's has."""
    from oracle import reference_available, reference_verdict
    if not reference_available():
        pytest.skip("reference not installed")
    v = reference_verdict((EXAMPLES / "08_gemm_umma.py").read_text(), entry="compile_fake",
                          timeout=600, env={"CUTE_DSL_ARCH": "sm_100a", "CUTE_DSL_KEEP": "ptx",
                                            "CUTE_DSL_DUMP_DIR": str(tmp_path),
                                            "CUTE_DSL_DISABLE_FILE_CACHING": "1"})
    assert v.accepted, f"{v.exc_type}: {v.message[:1000]}"
    ptx = "\n".join(p.read_text() for p in tmp_path.glob("*.ptx"))
    for pat in (r"cp\.async\.bulk\.tensor", r"tcgen05\.mma\.cta", r"tcgen05\.commit", r"tcgen05\.ld"):
        assert re.search(pat, ptx), f"expected /{pat}/ in the reference's PTX"
