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
    # ts-lint: found while running a function with assumed arguments (code that no entry
    # point or `__main__` run of the module reached); see ts_lint.api._finish
    assumed: bool = False

    def format(self) -> str:
        return f"{self.range.path}:{self.range.line}:{self.range.column + 1}: {self.code} [{self.name}] {self.message}"

    def __str__(self) -> str:
        return self.format()

    def with_severity(self, severity: Severity) -> "Diagnostic":
        return Diagnostic(self.code, self.name, severity, self.message, self.range,
                          self.related, self.fix, self.trace, self.assumed)

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

    def __init__(self, message: str = "", diagnostic: Optional[Diagnostic] = None):
        super().__init__(message)
        self.diagnostic = diagnostic


class TSTypeError(TypeError):
    """TypeError carrying diagnostics (where the reference raises TypeError)."""

    def __init__(self, message: str, diagnostics: Sequence[Diagnostic] = ()):
        super().__init__(message)
        self.diagnostics = list(diagnostics)


class TSAssertionError(AssertionError):
    """AssertionError carrying diagnostics (the reference asserts these; never downgraded)."""

    def __init__(self, message: str, diagnostics: Sequence[Diagnostic] = ()):
        super().__init__(message)
        self.diagnostics = list(diagnostics)


class TSRuntimeError(RuntimeError):
    def __init__(self, message: str, diagnostics: Sequence[Diagnostic] = ()):
        super().__init__(message)
        self.diagnostics = list(diagnostics)


class TSValueError(ValueError):
    def __init__(self, message: str, diagnostics: Sequence[Diagnostic] = ()):
        super().__init__(message)
        self.diagnostics = list(diagnostics)


class TSAttributeError(AttributeError):
    """AttributeError carrying diagnostics (unknown method on a schedule proxy, TS224)."""

    def __init__(self, message: str, diagnostics: Sequence[Diagnostic] = ()):
        super().__init__(message)
        self.diagnostics = list(diagnostics)


class TSNameError(NameError):
    """NameError carrying diagnostics (a name read in an @schedule body with no value, TS136)."""

    def __init__(self, message: str, diagnostics: Sequence[Diagnostic] = (), name: Optional[str] = None):
        super().__init__(message, name=name)
        self.diagnostics = list(diagnostics)


class TSNotImplementedError(NotImplementedError):
    """NotImplementedError carrying diagnostics (an input ts codegen cannot lower, TS906)."""

    def __init__(self, message: str, diagnostics: Sequence[Diagnostic] = ()):
        super().__init__(message)
        self.diagnostics = list(diagnostics)


_EXC = {TypeError: TSTypeError, AssertionError: TSAssertionError, RuntimeError: TSRuntimeError,
        ValueError: TSValueError, AttributeError: TSAttributeError, NotImplementedError: TSNotImplementedError}


def raise_finding(code: str, exc_type: type, message: str, range: Optional[SourceRange] = None):
    """Raises `exc_type` (as a subclass carrying the Diagnostic) for an immediate finding.

    Object-, decoration- and task-phase checks raise at once like the reference does, with
    the same exception type, so `except TypeError:` code keeps working.
    """
    from .rules.registry import make_diagnostic
    d = make_diagnostic(code, message, range)
    cls = _EXC.get(exc_type, TSValueError)
    raise cls(f"{code}: {message} ({d.range})", [d])


def warn_finding(d: Diagnostic, stacklevel: int = 3):
    """Emits a TSWarning whose `.diagnostic` is the finding (the code is in the text)."""
    import warnings
    warnings.warn(TSWarning(f"{d.code}: {d.message} ({d.range})", d), stacklevel=stacklevel)
