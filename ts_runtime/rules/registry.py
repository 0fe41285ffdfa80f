"""Code -> Rule, redirects, selection by code prefix, and diagnostic construction."""
from __future__ import annotations

import importlib
import pkgutil
import threading
from typing import Dict, Iterable, Optional

from ..diagnostics import Diagnostic, Severity
from ..source import SourceRange, UNKNOWN_RANGE
from .base import Rule

RULES: Dict[str, type] = {}
REDIRECTS: Dict[str, str] = {}
_loaded = False


def register(cls):
    """Class decorator: adds a Rule subclass to the catalogue (codes are unique)."""
    if not cls.code or not cls.name:
        raise TypeError(f"rule {cls.__name__} needs a code and a name")
    if cls.code in RULES and RULES[cls.code] is not cls:
        raise ValueError(f"duplicate rule code {cls.code}")
    RULES[cls.code] = cls
    return cls


_lock = threading.RLock()


def load_all() -> Dict[str, type]:
    """Imports every module of ts_runtime.rules so each registers its rules (thread-safe:
    the catalogue is complete before any caller sees it)."""
    global _loaded
    if _loaded:
        return RULES
    with _lock:
        if not _loaded:
            from . import __path__ as pkg_path
            for mod in sorted(m.name for m in pkgutil.iter_modules(pkg_path)):
                if mod not in ("base", "registry", "engine", "declare", "docgen"):
                    importlib.import_module(f"{__package__}.{mod}")
            _loaded = True
    return RULES


def get(code: str) -> Optional[type]:
    load_all()
    code = REDIRECTS.get(code, code)
    return RULES.get(code)


def make_diagnostic(code: str, message: str, range: Optional[SourceRange] = None, *,
                    related=(), fix=None, trace=(), severity: Optional[Severity] = None) -> Diagnostic:
    rule = get(code)
    if rule is None:
        raise KeyError(f"unknown rule code {code}")
    return rule.diag(message, range or UNKNOWN_RANGE, related=related, fix=fix, trace=trace,
                     severity=severity)


def manager_rules() -> list:
    """Rules run by TaskManager validation, in the reference's check order."""
    load_all()
    rules = [r for r in RULES.values() if r.phase == "manager" and r.open_reason is None]
    return sorted(rules, key=lambda r: (r.order, r.code))


def matches(code: str, prefixes: Iterable[str]) -> bool:
    return any(code.startswith(p) for p in prefixes)


def select(diags: Iterable[Diagnostic], select=("TS",), ignore=()) -> list:
    """ruff-style selection: a code is kept when selected and not ignored (longest prefix wins)."""
    out = []
    for d in diags:
        sel = max((len(p) for p in select if d.code.startswith(p)), default=-1)
        ign = max((len(p) for p in ignore if d.code.startswith(p)), default=-1)
        if sel >= 0 and sel > ign:   # ruff: on a tie the ignore wins
            out.append(d)
    return out
