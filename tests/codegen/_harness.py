"""Shared helpers for the codegen tests: find a Python with cutlass, run a script in it.

Kernels are compiled in a subprocess: the CuTe DSL reads CUTE_DSL_* variables once,
a hung GPU kernel must not hang pytest, and the main test process stays cutlass-free
(tests/test_import_boundary.py).
"""
from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
VENV_PYTHON = Path("/work/venv/bin/python")


def _has_cutlass(python: str) -> bool:
    try:
        return subprocess.run([python, "-c", "import cutlass.cute"], capture_output=True,
                              timeout=180).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@functools.lru_cache(maxsize=1)
def cutlass_python():
    """A Python that can import cutlass: $TS_CODEGEN_PYTHON, this one, /work/venv; else None."""
    for cand in (os.environ.get("TS_CODEGEN_PYTHON"), sys.executable,
                 str(VENV_PYTHON) if VENV_PYTHON.exists() else None):
        if cand and _has_cutlass(cand):
            return cand
    return None


def require_cutlass() -> str:
    py = cutlass_python()
    if py is None:
        pytest.skip("nvidia-cutlass-dsl is not installed")
    return py


def run_script(script: str, *, env: dict | None = None, timeout: float = 600):
    """Runs `script` with the cutlass Python; it must print one JSON line prefixed
    'RESULT ' on stdout. Returns (parsed result or None, completed process)."""
    py = require_cutlass()
    run_env = {k: v for k, v in os.environ.items()}
    run_env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [run_env.get("PYTHONPATH")] if p])
    run_env.update(env or {})
    proc = subprocess.run([py, "-c", textwrap.dedent(script)], cwd=str(ROOT), env=run_env,
                          capture_output=True, text=True, timeout=timeout)
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):]), proc
    return None, proc


_NVDISASM_PROBE = r'''
import json
try:
    from cutlass.base_dsl.env_manager import _find_nvdisasm_binary
except ImportError:
    import shutil
    found, why = shutil.which("nvdisasm"), "nvdisasm is not on PATH"
else:
    try:
        found, why = _find_nvdisasm_binary(), ""
    except Exception as exc:
        found, why = None, str(exc).splitlines()[0]
print("RESULT " + json.dumps([found, why]))
'''


@functools.lru_cache(maxsize=1)
def nvdisasm_status():
    """(path or None, why not): the nvdisasm the CuTe DSL would use for CUTE_DSL_KEEP=sass
    (the `nvidia-cuda-nvdisasm` wheel of the `sass` extra, or a CUDA toolkit's)."""
    if cutlass_python() is None:
        return None, "nvidia-cutlass-dsl is not installed"
    result, proc = run_script(_NVDISASM_PROBE, timeout=180)
    if result is None:
        return None, f"nvdisasm probe failed: {proc.stderr[-300:]}"
    return result[0], result[1] or "nvdisasm not found"
