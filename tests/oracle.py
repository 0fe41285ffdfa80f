"""Black-box oracle: ask NVIDIA's reference TS implementation whether a program is valid.

A program is written against ``ts_runtime`` (our drop-in package). The oracle rewrites the
``ts_runtime`` module prefix to ``cutlass.experimental.task_scheduling`` (line-preserving,
so reported line numbers still point into the original text), runs it in a fresh
subprocess with a Python that has ``nvidia-cutlass-dsl`` installed, optionally calls an
entry function, and reports what happened as a :class:`Verdict`.

Why a subprocess: the reference prints its schedule table on stdout, keeps global state
between programs and takes ~1 s to import; isolating each program keeps tests honest and
lets a hung exhaustive search be killed by a timeout.

Names that the tutorials import from ``cutlass.pipeline`` (``CooperativeGroup``,
``Agent``, ...) are not attributes of the reference's ``task_scheduling.pipeline``
module; ``ts_runtime.pipeline`` offers them, so the runner adds the missing public names
of ``cutlass.pipeline`` to that module before the program runs. Nothing else is changed.
"""
from __future__ import annotations

import functools
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

REFERENCE_PACKAGE = "cutlass.experimental.task_scheduling"
VENV_PYTHON = Path("/work/venv/bin/python")

# `ts_runtime` as a module name: not part of a longer identifier or dotted path.
_PREFIX = re.compile(r"(?<![\w.])ts_runtime\b")

__all__ = ["Verdict", "translate", "reference_python", "reference_available",
           "reference_verdict", "reference_verdict_file"]


@dataclass
class Verdict:
    """Outcome of one program run under the reference.

    ``accepted`` is False iff an exception escaped (module body or entry). ``warnings``
    holds each distinct warning raised while running, as ``"Category: message"``
    (deprecation notices of the DSL itself are dropped).
    """
    accepted: bool
    exc_type: Optional[str]
    message: str
    warnings: list[str] = field(default_factory=list)
    stdout: str = ""
    traceback: str = ""
    # Line numbers (1-based, in the program text) of traceback frames inside the program,
    # outermost first. The last one is where the program called into the reference.
    program_lines: list[int] = field(default_factory=list)

    def warned(self, fragment: str) -> bool:
        return any(fragment in w for w in self.warnings)


def translate(source: str) -> str:
    """Point every ``ts_runtime`` module reference at the reference package."""
    return _PREFIX.sub(REFERENCE_PACKAGE, source)


def _has_cutlass(python: str) -> bool:
    probe = f"import {REFERENCE_PACKAGE}"
    try:
        return subprocess.run([python, "-c", probe], capture_output=True,
                              timeout=120).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@functools.lru_cache(maxsize=1)
def reference_python() -> Optional[str]:
    """A Python executable that can import the reference, or None.

    Order: $TS_REFERENCE_PYTHON, this interpreter (if cutlass is importable), /work/venv.
    """
    env = os.environ.get("TS_REFERENCE_PYTHON")
    if env:
        return env if _has_cutlass(env) else None
    if importlib.util.find_spec("cutlass") is not None and _has_cutlass(sys.executable):
        return sys.executable
    if VENV_PYTHON.exists() and _has_cutlass(str(VENV_PYTHON)):
        return str(VENV_PYTHON)
    return None


def reference_available() -> bool:
    """True when some Python here can import the reference (see `reference_python`)."""
    return reference_python() is not None


# Runs inside the subprocess: argv = program path, entry ("" = none), result path.
_RUNNER = r'''
import importlib.util, json, sys, traceback, warnings
path, entry, out = sys.argv[1], sys.argv[2], sys.argv[3]
import cutlass.pipeline as _cp
import cutlass.experimental.task_scheduling.pipeline as _tsp
for _n in getattr(_cp, "__all__", [n for n in dir(_cp) if not n.startswith("_")]):
    if not hasattr(_tsp, _n):
        setattr(_tsp, _n, getattr(_cp, _n))
result = {"accepted": True, "exc_type": None, "message": "", "traceback": "", "lines": []}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        spec = importlib.util.spec_from_file_location("ts_oracle_program", path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules["ts_oracle_program"] = mod
        spec.loader.exec_module(mod)
        if entry:
            getattr(mod, entry)()
    except BaseException as exc:
        result.update(accepted=False, exc_type=type(exc).__name__, message=str(exc),
                      traceback=traceback.format_exc())
        result["lines"] = [f.lineno for f in traceback.extract_tb(exc.__traceback__)
                           if f.filename == path]
# DSL deprecation notices say nothing about the schedule; keep each other warning once.
result["warnings"] = list(dict.fromkeys(
    f"{w.category.__name__}: {w.message}" for w in caught
    if not issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning))))
sys.stdout.flush()
with open(out, "w") as fh:
    json.dump(result, fh)
'''


def reference_verdict(source: str, entry: Optional[str] = "build", timeout: float = 120,
                      env: Optional[dict] = None) -> Verdict:
    """Run ``source`` (a ts_runtime program) under the reference and report the outcome.

    ``entry``: name of a zero-argument function to call after the module body ran (None:
    module top level only). Skips the calling test when no reference is installed.
    """
    python = reference_python()
    if python is None:
        import pytest
        pytest.skip("reference (nvidia-cutlass-dsl) is not importable")
    with tempfile.TemporaryDirectory(prefix="ts_oracle_") as tmp:
        prog = Path(tmp, "program.py")
        prog.write_text(translate(source))
        runner = Path(tmp, "runner.py")
        runner.write_text(_RUNNER)
        out = Path(tmp, "result.json")
        run_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        run_env.setdefault("CUTE_DSL_ARCH", "sm_100a")
        run_env.update(env or {})
        try:
            proc = subprocess.run([python, str(runner), str(prog), entry or "", str(out)],
                                  cwd=tmp, env=run_env, capture_output=True, text=True,
                                  timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            return Verdict(False, "TimeoutExpired", f"no verdict after {timeout} s",
                           stdout=stdout)
        if not out.exists():
            raise RuntimeError(f"oracle runner failed (rc={proc.returncode}):\n{proc.stderr}")
        res = json.loads(out.read_text())
    return Verdict(accepted=res["accepted"], exc_type=res["exc_type"], message=res["message"],
                   warnings=res["warnings"], stdout=proc.stdout, traceback=res["traceback"],
                   program_lines=res["lines"])


def reference_verdict_file(path: os.PathLike | str, entry: Optional[str] = "build",
                           timeout: float = 120) -> Verdict:
    """`reference_verdict` on the text of a file (e.g. one of examples/)."""
    return reference_verdict(Path(path).read_text(), entry=entry, timeout=timeout)
