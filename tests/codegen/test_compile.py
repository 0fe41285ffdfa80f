"""Every example kernel compiles through ts codegen (CPU only, fake tensors).

One subprocess per target architecture compiles all examples with
`CUTE_DSL_KEEP=ptx` and reports each example's PTX; the tests then look for the
instructions the schedule must have produced. The copy examples and the pipeline-group
example are also compiled for sm_90a (Hopper): they must not depend on Blackwell ops.
Skipped when nvidia-cutlass-dsl is not installed.
"""
from __future__ import annotations

import re

import pytest

from ._harness import EXAMPLES, ROOT, run_script

SCRIPT = r'''
import importlib.util, json, os, sys, traceback, pathlib
dump = pathlib.Path(os.environ["CUTE_DSL_DUMP_DIR"])
out = {}
for name in NAMES:
    path = pathlib.Path(name) if "/" in name else pathlib.Path("examples") / name
    before = set(dump.iterdir())
    rec = {"ok": False, "error": "", "ptx": ""}
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
    out[name] = rec
print("RESULT " + json.dumps(out))
'''

ALL = sorted(p.name for p in EXAMPLES.glob("[0-9][0-9]_*.py"))
HOPPER_OK = [n for n in ALL if n[:2] in ("01", "02", "03", "04", "06", "07")]
KERNELS = sorted(f"tests/codegen/kernels/{p.name}" for p in (ROOT / "tests/codegen/kernels").glob("[a-z]*.py"))
BLACKWELL_ONLY = {"tests/codegen/kernels/clc_copy.py"}
HOPPER_KERNELS = [k for k in KERNELS if k not in BLACKWELL_ONLY]


def _compile_all(arch, names, tmp_path_factory):
    dump = tmp_path_factory.mktemp(f"ptx_{arch}")
    script = f"NAMES = {names!r}\n" + SCRIPT
    result, proc = run_script(script, env={"CUTE_DSL_ARCH": arch, "CUTE_DSL_KEEP": "ptx",
                                           "CUTE_DSL_DUMP_DIR": str(dump),
                                           "CUTE_DSL_DISABLE_FILE_CACHING": "1"})
    assert result is not None, f"compile script failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return result


@pytest.fixture(scope="module")
def sm100(tmp_path_factory):
    return _compile_all("sm_100a", ALL + KERNELS, tmp_path_factory)


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


def test_clc_scheduler(sm100):
    """CLC queue: the scheduler arms the stage with the 16 response bytes, issues the
    cancel query onto that stage's barrier, and every task decodes the response."""
    ptx = _ptx(sm100, "tests/codegen/kernels/clc_copy.py")
    assert re.search(r"clusterlaunchcontrol\.try_cancel\.async", ptx)
    assert re.search(r"clusterlaunchcontrol\.query_cancel\.is_canceled", ptx)
    assert re.search(r"mbarrier\.arrive\.expect_tx", ptx)
