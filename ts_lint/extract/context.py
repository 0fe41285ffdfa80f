"""Per-file analysis state: findings, unresolved values, limits, kernel models."""
from __future__ import annotations

import dataclasses
from typing import List, Optional

from ts_runtime.diagnostics import Diagnostic, Severity
from ts_runtime.source import SourceRange

# catalogue entries that may not exist yet while rules are being added; the fallback keeps
# ts-lint usable (same code, same severity) until rules/other.py declares them
_FALLBACK = {
    "TS000": ("syntax-error", Severity.ERROR),
    "TS950": ("unresolved-value", Severity.INFO),
    "TS999": ("internal-error", Severity.ERROR),
}


def make(code: str, message: str, range: Optional[SourceRange] = None, **kw) -> Diagnostic:
    """`make_diagnostic`, tolerant of a few front-end codes not yet in the catalogue."""
    from ts_runtime.rules.registry import get, make_diagnostic
    if get(code) is None and code in _FALLBACK:
        name, sev = _FALLBACK[code]
        return Diagnostic(code, name, kw.get("severity") or sev, message,
                          range or SourceRange("<unknown>", 1, 0), tuple(kw.get("related", ())))
    return make_diagnostic(code, message, range, **kw)


def unresolved_code(kind: str) -> str:
    try:
        from ts_runtime.rules.other import UNRESOLVED
    except ImportError:
        return "TS950"
    code = UNRESOLVED.get(kind, "TS950")
    from ts_runtime.rules.registry import get
    return code if get(code) is not None else "TS950"


class Budget(Exception):
    """Raised when the interpreter exceeds its step budget for one root."""


class Context:
    MAX_STEPS = 100_000          # evaluated nodes per root function (a real builder uses a few thousand)
    MAX_DEPTH = 40               # nested user calls
    MAX_LOOP = 4096              # iterations of one unrolled Python loop
    MAX_KERNELS_PER_SITE = 4     # analyses of one TaskManager(...) call site

    def __init__(self, path: str, positions, run_checker: bool = True, src=None):
        self.path = path
        self.pos = positions
        self.src = src                # ts_lint.extract.source.SourceFile (lazy function bodies)
        self.run_checker = run_checker
        self.diagnostics: List[Diagnostic] = []
        self.unknowns: List[Diagnostic] = []
        self._unknown_keys: set = set()
        self.kernels: list = []
        self.kernel_roots: list = []
        self.root_name = ""
        self.root_errors = 0          # error findings since the current root started
        self.import_errors = 0        # error findings while the module body was imported
        self.importing = False
        self.assumed = False          # running a root with assumed arguments (roots.py "rest")
        self.ts_related = None        # def nodes of the TS functions and their callers (roots.root_order)
        self.suppress = 0             # >0: findings are being discarded (unreliable capture)
        self.steps = 0
        self.depth = 0
        self._rid = 0
        self.site_counts: dict = {}
        self.site_roots: dict = {}    # TaskManager call site -> the root that analysed it first
        self.entered: set = set()     # FunctionDef nodes that have been executed
        self.tasks_built: list = []   # TaskModels of every Task(...) analysed
        # command-line configurations (configurations.py): the (parser, dest) of every
        # argparse argument with `choices=`, and the values a re-run of `__main__` uses
        self.cli_choices: list = []
        self.cli_overrides: dict = {}
        self.config_label: str = ""   # "--mode tma" while such a re-run is analysed

    # ------------------------------------------------------------------ ids
    def new_rid(self) -> int:
        self._rid += 1
        return self._rid

    # ------------------------------------------------------------------ findings
    def range(self, node) -> SourceRange:
        return self.pos.range(node)

    def emit(self, d: Diagnostic):
        if self.suppress:
            return
        if self.assumed and d.severity is Severity.ERROR:
            d = dataclasses.replace(d, assumed=True)
        self.diagnostics.append(d)
        if d.severity is Severity.ERROR:
            self.root_errors += 1
            if self.importing:
                self.import_errors += 1

    def report(self, code: str, message: str, range: SourceRange, **kw):
        self.emit(make(code, message, range, **kw))

    def unknown(self, range: SourceRange, message: str, kind: str = "value"):
        """An info finding (TS950-TS959 by `kind`, see rules/other.py UNRESOLVED)."""
        key = (range.line, range.column, message)
        if key in self._unknown_keys:
            return
        self._unknown_keys.add(key)
        self.unknowns.append(make(unresolved_code(kind), message, range))

    def step(self):
        self.steps += 1
        if self.steps > self.MAX_STEPS:
            raise Budget()
