"""Runs the manager-phase rules and the exhaustive checker over one KernelModel.

This is the single entry point both front ends call after building the model: the
TaskManager at run time, ts-lint on source. A rule that crashes becomes a TS999 finding
for that rule instead of a traceback.
"""
from __future__ import annotations

import traceback
from typing import List

from ..diagnostics import Diagnostic, Severity
from .registry import make_diagnostic, manager_rules


def run_manager_rules(kernel, *, with_checker: bool = True) -> List[Diagnostic]:
    diags: List[Diagnostic] = []
    for rule_cls in manager_rules():
        rule = rule_cls()
        try:
            diags.extend(rule.check(kernel))
        except Exception as exc:  # a bug in one rule must not hide the others
            diags.append(make_diagnostic(
                "TS999", f"internal error in rule {rule_cls.code}: {type(exc).__name__}: {exc}",
                kernel.range, severity=Severity.WARNING))
            if __debug__ and _debug():
                traceback.print_exc()
    if with_checker and kernel.options.exhaustive_deadlock_race_check:
        diags.extend(run_checker(kernel))
    return diags


def run_checker(kernel) -> List[Diagnostic]:
    """The exhaustive interleaving checker (TS801-TS806), through its one interface."""
    try:
        from ..checker import check_kernel
    except ImportError:
        return []
    result = check_kernel(kernel)
    kernel.check_result = result
    return list(result.diagnostics)


def _debug() -> bool:
    import os
    return bool(os.environ.get("TS_DEBUG"))
