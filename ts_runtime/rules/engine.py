"""Runs the manager-phase rules and the exhaustive checker over one KernelModel.

This is the single entry point both front ends call after building the model: the
TaskManager at run time, ts-lint on source. A rule that crashes becomes a TS999 finding
for that rule instead of a traceback.
"""
from __future__ import annotations

import traceback
from typing import List, Optional

from ..diagnostics import Diagnostic, Severity
from .registry import make_diagnostic, manager_rules


def run_manager_rules(kernel, *, with_checker: bool = True, witness: Optional[bool] = None) -> List[Diagnostic]:
    """Every manager rule on `kernel`, then the exhaustive checker when the kernel asks
    for it. `witness`: passed to the checker (`check_kernel`); a front end that never
    prints the verbose report (ts-lint, ts-lsp) passes False and saves the complete-run
    witness."""
    diags: List[Diagnostic] = []
    # one pass shared by the codes of a rule family (`shared_pass`) runs once per call
    kernel._ts_pass_cache = {}
    try:
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
    finally:
        del kernel._ts_pass_cache
    if with_checker and kernel.options.exhaustive_deadlock_race_check:
        diags.extend(run_checker(kernel, witness=witness))
    return drop_consequences(diags)


def shared_pass(kernel, fn):
    """`fn(kernel)`, computed once per `run_manager_rules` call for every rule of a family
    that reads it (a family's pass yields the findings of a dozen codes; each code's rule
    would otherwise run it again)."""
    cache = getattr(kernel, "_ts_pass_cache", None)
    if cache is None:
        return fn(kernel)
    hit = cache.get(fn)
    if hit is None:
        hit = cache[fn] = fn(kernel)
    return hit


# A finding of the key code restates (a consequence of) an error of one of the value codes:
# the reference would stop at the first of them; we report the root cause and keep every
# independent finding. Fixing the root cause makes the consequence disappear too.
CONSEQUENCES = {
    "TS321": {"TS201", "TS202", "TS203"},          # route writer not a src resource
    "TS322": {"TS201", "TS202", "TS203"},
    "TS351": {"TS203"},                            # graph resource "not used by any task"
    "TS352": {"TS203"},
    "TS353": {"TS201", "TS202", "TS203"},          # edge not backed by src/dst lists
    "TS205": {"TS601"},                            # PDL wait resource listed, its wait missing
    "TS803": {"TS601", "TS602"},                   # launch-before-wait, already reported statically
    "TS801": {"TS810", "TS811", "TS812", "TS813"},  # deadlock already shown by the table run
    "TS208": {"TS810", "TS812", "TS813"},          # missing release, shown by the credit balance
    "TS212": {"TS810", "TS812", "TS813"},
    "TS209": {"TS810", "TS811"},
}


def drop_consequences(diags: List[Diagnostic]) -> List[Diagnostic]:
    errors = {d.code for d in diags if d.severity is Severity.ERROR}
    return [d for d in diags
            if not (d.severity is Severity.ERROR and CONSEQUENCES.get(d.code, set()) & errors)]


def run_checker(kernel, witness: Optional[bool] = None) -> List[Diagnostic]:
    """The exhaustive interleaving checker (TS801-TS806), through its one interface."""
    try:
        from ..checker import check_kernel
    except ImportError:
        return []
    result = check_kernel(kernel, witness=witness)
    kernel.check_result = result
    return list(result.diagnostics)


def _debug() -> bool:
    import os
    return bool(os.environ.get("TS_DEBUG"))
