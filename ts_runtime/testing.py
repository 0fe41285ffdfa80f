"""Running TS programs and rule examples through the tracing front end (for tests and ts-validate).

`run_program` imports a program file as a fresh module and calls its `build()` entry,
collecting every Diagnostic: from the exception that stopped it (capture, task or manager
phase) and from TSWarnings. `expected_findings` reads `# expect: TSxxx` markers.
"""
from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import re
import sys
import tempfile
import uuid
import warnings
from typing import List, Optional, Tuple

from .diagnostics import Diagnostic, Severity, TSWarning

_EXPECT = re.compile(r"#\s*expect:\s*([A-Z]{2}\d{3}(?:\s*,\s*[A-Z]{2}\d{3})*)")


def expected_findings(source: str) -> List[Tuple[str, int]]:
    """[(code, line)] from trailing `# expect: TS123[, TS456]` comments."""
    out = []
    for i, line in enumerate(source.splitlines(), 1):
        m = _EXPECT.search(line)
        if m:
            out.extend((c.strip(), i) for c in m.group(1).split(","))
    return out


def run_program(path: str, entry: Optional[str] = "build", quiet: bool = True) -> List[Diagnostic]:
    """Imports `path` under a unique module name, calls `entry()`, returns its findings."""
    name = f"_ts_prog_{uuid.uuid4().hex}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    diags: List[Diagnostic] = []
    out = io.StringIO()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with contextlib.redirect_stdout(out) if quiet else contextlib.nullcontext():
                sys.modules[name] = module
                spec.loader.exec_module(module)
                if entry and hasattr(module, entry):
                    result = getattr(module, entry)()
                    # info notes are printed, not warned: read them off the manager(s) returned
                    for obj in (result if isinstance(result, (tuple, list)) else (result,)):
                        diags.extend(d for d in getattr(obj, "diagnostics", None) or ()
                                     if getattr(d, "severity", None) is Severity.INFO)
        except Exception as exc:  # the program's first failing phase
            found = getattr(exc, "diagnostics", None)
            if found:
                diags.extend(found)
                diags.extend(d for d in getattr(exc, "all_diagnostics", ()) if d.severity is Severity.INFO)
            else:
                raise
        finally:
            sys.modules.pop(name, None)
    for w in caught:
        d = getattr(w.message, "diagnostic", None)
        if isinstance(w.message, TSWarning) and d is not None:
            diags.append(d)
    return diags


def run_source(source: str, entry: Optional[str] = "build", filename: str = "program.py") -> List[Diagnostic]:
    """Writes `source` to a temporary file (so lines are real) and runs it."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, filename)
        with open(path, "w") as f:
            f.write(source)
        diags = run_program(path, entry)
    return diags


def codes_and_lines(diags, severities=(Severity.ERROR, Severity.WARNING)) -> set:
    return {(d.code, d.range.line) for d in diags if d.severity in severities}
