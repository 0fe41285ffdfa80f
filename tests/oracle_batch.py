"""Many programs through the reference in ONE subprocess (the reference takes seconds to
import; one process per program would make the differential suite take half an hour).

Each program runs as its own fresh module; a program that hangs is cut off by the
per-batch timeout and the remaining ones are re-run in a new batch.
"""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import List, Optional

from oracle import Verdict, reference_python, translate

_BATCH_RUNNER = r'''
import importlib.util, json, sys, traceback, warnings, io, contextlib
listing, out = sys.argv[1], sys.argv[2]
import cutlass.pipeline as _cp
import cutlass.experimental.task_scheduling.pipeline as _tsp
for _n in getattr(_cp, "__all__", [n for n in dir(_cp) if not n.startswith("_")]):
    if not hasattr(_tsp, _n):
        setattr(_tsp, _n, getattr(_cp, _n))
jobs = json.load(open(listing))
with open(out, "a") as fh:
    for k, (path, entry) in enumerate(jobs):
        result = {"accepted": True, "exc_type": None, "message": "", "warnings": []}
        with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("always")
            try:
                name = f"ts_oracle_program_{k}"
                spec = importlib.util.spec_from_file_location(name, path)
                mod = importlib.util.module_from_spec(spec)
                sys.modules[name] = mod
                spec.loader.exec_module(mod)
                if entry:
                    getattr(mod, entry)()
            except BaseException as exc:
                result.update(accepted=False, exc_type=type(exc).__name__, message=str(exc)[:2000])
        result["warnings"] = list(dict.fromkeys(
            f"{w.category.__name__}: {w.message}" for w in caught
            if not issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning))))
        fh.write(json.dumps(result) + "\n")
        fh.flush()
'''


def reference_verdicts(sources: List[str], entry: Optional[str] = "build",
                       timeout: float = 600) -> List[Verdict]:
    python = reference_python()
    if python is None:
        import pytest
        pytest.skip("reference (nvidia-cutlass-dsl) is not importable")
    results: List[Verdict] = []
    with tempfile.TemporaryDirectory(prefix="ts_oracle_batch_") as tmp:
        paths = []
        for i, src in enumerate(sources):
            p = Path(tmp, f"program_{i}.py")
            p.write_text(translate(src))
            paths.append(str(p))
        runner = Path(tmp, "runner.py")
        runner.write_text(_BATCH_RUNNER)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env.setdefault("CUTE_DSL_ARCH", "sm_100a")
        start = 0
        while start < len(paths):
            listing = Path(tmp, f"jobs_{start}.json")
            listing.write_text(json.dumps([[p, entry] for p in paths[start:]]))
            out = Path(tmp, f"out_{start}.jsonl")
            try:
                subprocess.run([python, str(runner), str(listing), str(out)], cwd=tmp, env=env,
                               capture_output=True, text=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                pass
            lines = out.read_text().splitlines() if out.exists() else []
            for line in lines:
                r = json.loads(line)
                results.append(Verdict(accepted=r["accepted"], exc_type=r["exc_type"],
                                       message=r["message"], warnings=r["warnings"]))
            start += len(lines)
            if start < len(paths) and not lines:   # the next program hung or crashed the process
                results.append(Verdict(False, "TimeoutExpired", "no verdict (timeout or crash)"))
                start += 1
    return results
