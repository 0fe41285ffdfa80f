"""The one Diagnostic type both front ends produce, and the errors that carry them.

A finding is data (code, severity, message, range, related ranges, fix, counterexample
trace); the runtime decides to raise or warn, ts-lint prints it, ts-lsp publishes it.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Iterable, Optional, Sequence

from .source import SourceRange, UNKNOWN_RANGE

__all__ = [
    "Severity", "Related", "TraceStep", "Edit", "Fix", "Diagnostic",
    "ScheduleError", "ScheduleValidationError", "TSWarning", "format_diagnostics",
]


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Related:
    range: SourceRange
    message: str


@dataclass(frozen=True)
class TraceStep:
    """One step of a counterexample interleaving: which task ran which op, and where."""
    task: str
    step: str
    range: Optional[SourceRange] = None


@dataclass(frozen=True)
class Edit:
    range: SourceRange
    new_text: str


@dataclass(frozen=True)
class Fix:
    title: str
    edits: tuple = ()
    applicability: str = "unsafe"  # "safe" | "unsafe" | "display-only"


@dataclass(frozen=True)
class Diagnostic:
    code: str
    name: str
    severity: Severity
    message: str
    range: SourceRange = UNKNOWN_RANGE
    related: tuple = ()
    fix: Optional[Fix] = None
    trace: tuple = ()

    def format(self) -> str:
        return f"{self.range.path}:{self.range.line}:{self.range.column + 1}: {self.code} [{self.name}] {self.message}"

    def __str__(self) -> str:
        return self.format()

    def with_severity(self, severity: Severity) -> "Diagnostic":
        return Diagnostic(self.code, self.name, severity, self.message, self.range,
                          self.related, self.fix, self.trace)

    def sort_key(self):
        return (self.range.path, self.range.line, self.range.column, self.code)


def format_diagnostics(diags: Iterable[Diagnostic]) -> str:
    return "\n".join(d.format() for d in diags)


class ScheduleError(ValueError):
    """A schedule-grammar error found while capturing an @schedule function.

    Same exception class name and base as the reference, so `except ValueError` code
    written against the reference keeps working; `diagnostics` lists every finding.
    """

    def __init__(self, message: str, diagnostics: Sequence[Diagnostic] = ()):
        super().__init__(message)
        self.diagnostics = list(diagnostics)


class ScheduleValidationError(ValueError):
    """Raised by TaskManager / Task when validation finds errors: lists all of them."""

    def __init__(self, diagnostics: Sequence[Diagnostic], header: str = "TS validation failed"):
        self.diagnostics = list(diagnostics)
        body = format_diagnostics(self.diagnostics)
        super().__init__(f"{header} ({len(self.diagnostics)} error(s)):\n{body}")

    @property
    def codes(self) -> list:
        return [d.code for d in self.diagnostics]


class TSWarning(UserWarning):
    """Category of the warnings ts_runtime emits; the rule code is in the text."""
