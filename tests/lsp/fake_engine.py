"""A deterministic stand-in for `ts_lint.api`, for protocol-level tests of ts-lsp.

The server under test imports it as `ts_lint.api` (see fake_server.py). Findings are
driven by markers in the text, so each test states exactly what it expects:

    bad_call(      TS101 error at the marker
    warn_here      TS127 warning; safe fix: `warn_here` -> `fixed_here`
    risky_here     TS132 warning; unsafe fix: `risky_here` -> `safe_here`
    shown_only     TS133 warning with a display-only fix
    race_here      TS802 error with a related range and a 2-step trace (only with the checker)
    unknown_here   TS950 info (only with explain_unknown)
    SLEEP=0.5      the lint sleeps that long (stale-result tests)
    CRASH_ENGINE   the lint raises
    PRINT_STDOUT   the lint prints to sys.stdout and writes to fd 1

Selection and `# noqa` are ts-lint's own (ts_lint.cli.check_source, which the server
calls with this module as the API). `analyze_source` returns the same findings plus the
KernelModels that running the text's `build()` through the *tracing* front end builds
(ts_runtime, no cutlass needed), so hovers see real ranges.
"""
from __future__ import annotations

import os
import re
import sys
import tempfile
import threading
import time
import types as _types
import uuid
from dataclasses import dataclass, field

from ts_runtime.diagnostics import Diagnostic, Edit, Fix, Related, Severity, TraceStep
from ts_runtime.rules.registry import make_diagnostic
from ts_runtime.source import SourceRange

CALLS = []   # (explain_unknown, run_checker) of each lint, for in-process tests
_TRACING = threading.Lock()   # analyze_source patches TaskManager: one at a time


def _find(source: str, marker: str):
    for i, line in enumerate(source.splitlines(), 1):
        for m in re.finditer(re.escape(marker), line):
            yield i, m.start(), m.end()


def lint_source(source: str, path: str = "<string>", *, explain_unknown=False, run_checker=True):
    CALLS.append((explain_unknown, run_checker))
    m = re.search(r"SLEEP=([0-9.]+)", source)
    if m:
        time.sleep(float(m.group(1)))
    if "PRINT_STDOUT" in source:       # must not reach the LSP stream
        print("a stray print from the engine")
        os.write(1, b"a stray write to fd 1\n")
    if "CRASH_ENGINE" in source:
        raise RuntimeError("the fake engine crashed on purpose")
    out = []

    def rng(line, a, b):
        return SourceRange(path, line, a, line, b)

    for line, a, b in _find(source, "bad_call("):
        out.append(make_diagnostic("TS101", "block outside a schedule", rng(line, a, b - 1)))
    for line, a, b in _find(source, "warn_here"):
        out.append(make_diagnostic("TS127", "a warning with a safe fix", rng(line, a, b),
                                   fix=Fix("Rename to `fixed_here`",
                                           (Edit(rng(line, a, b), "fixed_here"),), "safe")))
    for line, a, b in _find(source, "risky_here"):
        out.append(make_diagnostic("TS132", "a warning with an unsafe fix", rng(line, a, b),
                                   fix=Fix("Rename to `safe_here`",
                                           (Edit(rng(line, a, b), "safe_here"),), "unsafe")))
    for line, a, b in _find(source, "shown_only"):
        out.append(make_diagnostic("TS133", "a warning with a display-only fix", rng(line, a, b),
                                   fix=Fix("Think about it", (Edit(rng(line, a, b), "x"),),
                                           "display-only")))
    if run_checker:
        for line, a, b in _find(source, "race_here"):
            other = rng(1, 0, 3)
            out.append(make_diagnostic(
                "TS802", "aliasing race on `smem`", rng(line, a, b),
                related=(Related(other, "the other access"),),
                trace=(TraceStep("LoadTask", "ProducerAcquire(smem)", rng(line, a, b)),
                       TraceStep("StoreTask", "ConsumerWait(smem)", other))))
    if explain_unknown:
        for line, a, b in _find(source, "unknown_here"):
            out.append(Diagnostic("TS950", "cannot-evaluate", Severity.INFO,
                                  "cannot evaluate this statically", rng(line, a, b)))
    return out


@dataclass
class Analysis:
    diagnostics: list
    kernels: list = field(default_factory=list)
    unknowns: list = field(default_factory=list)


def analyze_source(source: str, path: str = "<string>", *, explain_unknown=False, run_checker=True):
    """The findings, and the KernelModels of every TaskManager the text builds when
    `build()` runs (tracing)."""
    diags = lint_source(source, path, explain_unknown=explain_unknown, run_checker=run_checker)
    with _TRACING:
        return Analysis(diags, _trace(source, path), [])


def _trace(source: str, path: str) -> list:
    import ts_runtime.task_manager as tm_mod
    kernels = []
    orig = tm_mod.TaskManager.print_and_verify

    def print_and_verify(self):       # runs inside TaskManager.__init__, model built
        kernels.append(self.kernel)
        self.verbose = False
        return orig(self)

    tmp = tempfile.mkdtemp()
    fname = os.path.join(tmp, os.path.basename(path) if path.endswith(".py") else "prog.py")
    with open(fname, "w", encoding="utf-8") as f:
        f.write(source)
    name = f"_ts_fake_{uuid.uuid4().hex}"
    mod = _types.ModuleType(name)
    mod.__file__ = fname
    tm_mod.TaskManager.print_and_verify = print_and_verify
    try:
        sys.modules[name] = mod
        exec(compile(source, fname, "exec"), mod.__dict__)
        if callable(mod.__dict__.get("build")):
            try:
                mod.build()
            except Exception:
                pass
    except Exception:
        pass
    finally:
        tm_mod.TaskManager.print_and_verify = orig
        sys.modules.pop(name, None)
    _repath(kernels, fname, path)
    return kernels


def _repath(kernels, old, new):
    """Ranges point at the temporary file; make them point at `path` like the linter's."""
    import dataclasses as dc
    from ts_runtime.model.schedule import ScheduleModel

    def fix(r):
        return dc.replace(r, path=new) if isinstance(r, SourceRange) and r.path == old else r

    def walk(nodes):
        for n in nodes:
            n.range = fix(n.range)
            walk(getattr(n, "body", []) or [])

    for k in kernels:
        k.range = fix(k.range)
        for r in k.resources.values():
            r.range = fix(r.range)
            if r.pipeline is not None:
                r.pipeline.range = fix(r.pipeline.range)
        for t in k.tasks:
            t.range = fix(t.range)
            if isinstance(t.schedule, ScheduleModel):
                t.schedule.range = fix(t.schedule.range)
                walk(t.schedule.body)
