"""The Rule type: code, kebab-case name, severity, phase, self-documenting docstring.

A rule's docstring is its documentation, with the sections "What it does", "Why is this
bad?", "Example" and "Use instead" (docs/rules.md is generated from them). `VALID` and
`INVALID` hold whole TS programs; an INVALID program marks the line the finding must
point at with a trailing `# expect: TSxxx` comment. Tests run every example through the
tracing DSL, ts-lint and the reference.

Phases say when the rule fires: "decorate" (work-method definition), "object" (config,
guard or allocator construction), "capture" (@schedule tracing, via the shared builder),
"task" (Task construction / lowering), "manager" (TaskManager validation, via `check`),
"setup"/"codegen" (kernel building), "checker" (exhaustive interleaving checker),
"frontend" (ts-lint's own limits). Only "manager" rules implement `check`; the others
are reported by the shared model code that owns that phase.
"""
from __future__ import annotations

import inspect
from typing import ClassVar, Iterable, Optional

from ..diagnostics import Diagnostic, Severity
from ..source import SourceRange, UNKNOWN_RANGE

DOC_SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead")


class Rule:
    code: ClassVar[str] = ""
    name: ClassVar[str] = ""
    severity: ClassVar[Severity] = Severity.ERROR
    phase: ClassVar[str] = "manager"
    order: ClassVar[int] = 100           # position among manager checks (model.md §6)
    VALID: ClassVar[list] = []
    INVALID: ClassVar[list] = []
    open_reason: ClassVar[Optional[str]] = None   # set when not implemented, with why
    reference_exception: ClassVar[str] = "ValueError"  # what the reference raises (for parity)
    # "build": the reference checks it when the TaskManager is built (host side);
    # "kernel": only while tracing the kernel — ts reports it earlier, at build time
    # "never": a ts-only rule (e.g. the Hopper TmaWgmma extension); the oracle test skips it
    reference_checks_at: ClassVar[str] = "build"

    @classmethod
    def doc(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def summary(cls) -> str:
        return cls.doc().split("\n", 1)[0]

    def check(self, kernel) -> Iterable[Diagnostic]:
        return ()

    @classmethod
    def diag(cls, message: str, range: Optional[SourceRange] = None, *, related=(), fix=None,
             trace=(), severity: Optional[Severity] = None) -> Diagnostic:
        return Diagnostic(cls.code, cls.name, severity or cls.severity, message,
                          range or UNKNOWN_RANGE, tuple(related), fix, tuple(trace))
