"""Compact declaration of rules whose logic lives in the shared model code.

Capture, task and object-phase rules are reported by the builder, the lowering and the
config validators (one copy, both front ends); here they get their catalogue entry:
code, name, severity, phase, documentation and VALID/INVALID programs.
"""
from __future__ import annotations

import inspect
import sys

from ..diagnostics import Severity
from .base import Rule
from .registry import register


def rule(code: str, name: str, doc: str, *, phase: str = "capture", severity=Severity.ERROR,
         valid=(), invalid=(), open_reason=None, exc: str = "ValueError", order: int = 100,
         reference_checks_at: str = ""):
    """Creates and registers a Rule subclass; `doc` holds the four doc sections."""
    cls = type(f"Rule{code}", (Rule,), {
        "__doc__": inspect.cleandoc(doc), "code": code, "name": name, "phase": phase,
        "severity": severity, "VALID": list(valid), "INVALID": list(invalid),
        "open_reason": open_reason, "reference_exception": exc, "order": order,
        **({"reference_checks_at": reference_checks_at} if reference_checks_at else {}),
        # sys._getframe, not inspect.stack(): the latter reads source context for every frame
        # and made loading the catalogue take seconds
        "__module__": sys._getframe(1).f_globals.get("__name__", __name__),
    })
    return register(cls)
