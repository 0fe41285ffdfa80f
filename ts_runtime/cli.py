"""`ts-validate`: runs TS programs through the tracing front end and prints every finding.

Unlike ts-lint this EXECUTES the programs (it imports each file and calls its `build()`),
so it needs whatever the programs import (cutlass for tutorial-style examples). It is the
run-time counterpart used to cross-check ts-lint.
"""
from __future__ import annotations

import argparse
import os
import sys

from .diagnostics import Severity
from .testing import run_program


def _files(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__")))
                for f in sorted(files):
                    if f.endswith(".py") and not f.startswith("_"):
                        yield os.path.join(root, f)
        else:
            yield p


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="ts-validate", description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="*", default=["examples"])
    ap.add_argument("--entry", default="build", help="function each program defines (default: build)")
    args = ap.parse_args(argv)
    n_err = 0
    for path in _files(args.paths):
        try:
            diags = run_program(path, args.entry)
        except Exception as exc:  # the program itself is broken (not a TS finding)
            print(f"{path}: cannot run: {type(exc).__name__}: {exc}")
            n_err += 1
            continue
        for d in sorted(diags, key=lambda d: d.sort_key()):
            rel = os.path.relpath(d.range.path) if os.path.isabs(d.range.path) else d.range.path
            print(f"{rel}:{d.range.line}:{d.range.column + 1}: {d.code} [{d.name}] {d.severity.value}: {d.message}")
            n_err += d.severity is Severity.ERROR
    print(f"{n_err} error(s)")
    return 1 if n_err else 0


if __name__ == "__main__":
    sys.exit(main())
