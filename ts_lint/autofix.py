"""Applying the fixes that findings carry: `ts-lint --fix`, `--diff` and `--unsafe-fixes`.

Kernel authors used to ruff expect the linter to make the edits it already describes
(the quick fixes ts-lsp offers). The rules are ruff's:

* only `safe` fixes by default; `unsafe` ones with `--unsafe-fixes`; a `display-only`
  fix is never applied;
* the fixes of one lint are applied together when their edits do not overlap, in the
  order of their first edit; a fix that overlaps one already taken waits for the next
  pass;
* the file is linted again after each pass, and passes repeat while a fix applies (at
  most `MAX_PASSES`): a fix can make room for another one or change what is found;
* only edits in the file being fixed: a fix that also touches another file (code of an
  imported user module) is left to the run that lints that file.

The result is the fixed text, the findings fixed and those that remain (the last lint's
findings). Nothing here reads or writes files: the CLI does (`cli.py`).
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Callable, FrozenSet, List, Sequence, Tuple

from ts_runtime.diagnostics import Diagnostic, Fix

__all__ = ["FixOutcome", "MAX_PASSES", "applicable", "apply_fixes", "fix_source", "unified_diff"]

MAX_PASSES = 10
SAFE: FrozenSet[str] = frozenset({"safe"})
WITH_UNSAFE: FrozenSet[str] = frozenset({"safe", "unsafe"})

# the newlines the tokenizer (and so every reported line number) counts
_NEWLINE = re.compile(r"\r\n|\r|\n")


@dataclass
class FixOutcome:
    text: str
    fixed: List[Diagnostic] = field(default_factory=list)
    remaining: List[Diagnostic] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.fixed)


def applicable(d: Diagnostic, path: str, allowed: FrozenSet[str] = SAFE) -> bool:
    """Whether `d`'s fix may be applied to file `path`."""
    fix = d.fix
    return (fix is not None and fix.applicability in allowed and bool(fix.edits)
            and all(e.range.path == path for e in fix.edits))


def _line_starts(text: str) -> List[int]:
    return [0] + [m.end() for m in _NEWLINE.finditer(text)]


def _offset(text: str, starts: List[int], line: int, column: int) -> int:
    """The text offset of (1-based line, 0-based column), clamped to the line's own
    characters; a line past the end is the end of the text."""
    if line < 1:
        return 0
    if line > len(starts):
        return len(text)
    start = starts[line - 1]
    end = starts[line] if line < len(starts) else len(text)
    while end > start and text[end - 1] in "\r\n":
        end -= 1
    return start + min(max(column, 0), end - start)


def _spans(text: str, starts: List[int], fix: Fix) -> List[Tuple[int, int, str]]:
    out = []
    for e in fix.edits:
        r = e.range
        a = _offset(text, starts, r.line, r.column)
        end_line = r.end_line if r.end_line is not None else r.line
        end_col = r.end_column if r.end_column is not None else r.column
        b = _offset(text, starts, end_line, end_col)
        out.append((a, max(a, b), e.new_text))
    return sorted(out, key=lambda s: (s[0], s[1]))


def _newline_of(text: str) -> str:
    m = _NEWLINE.search(text)
    return m.group(0) if m else "\n"


def apply_fixes(text: str, diags: Sequence[Diagnostic], path: str,
                allowed: FrozenSet[str] = SAFE) -> Tuple[str, List[Diagnostic]]:
    """(new text, the findings whose fixes were applied): one pass over `diags`."""
    starts = _line_starts(text)
    newline = _newline_of(text)
    chosen: List[Tuple[int, int, str]] = []
    taken: List[Diagnostic] = []
    candidates = []
    for d in diags:
        if applicable(d, path, allowed):
            spans = _spans(text, starts, d.fix)
            candidates.append((spans[0][0], spans[0][1], len(candidates), d, spans))
    seen_fixes = set()
    for _, _, _, d, spans in sorted(candidates, key=lambda c: c[:3]):
        key = tuple(spans)
        if key in seen_fixes:
            taken.append(d)          # the same edits offered by two findings: one application
            continue
        if any(not (b <= a2 or b2 <= a) or (a == b == a2 == b2)
               for a, b, _ in spans for a2, b2, _ in chosen):
            continue
        chosen.extend(spans)
        seen_fixes.add(key)
        taken.append(d)
    if not chosen:
        return text, []
    out, pos = [], 0
    for a, b, new in sorted(chosen, key=lambda s: (s[0], s[1])):
        out.append(text[pos:a])
        out.append(new.replace("\n", newline) if newline != "\n" else new)
        pos = b
    out.append(text[pos:])
    return "".join(out), taken


def fix_source(source: str, path: str, lint: Callable[[str], List[Diagnostic]],
               allowed: FrozenSet[str] = SAFE) -> FixOutcome:
    """Lint, apply, lint again, while fixes apply (at most MAX_PASSES passes).
    `lint(text)` returns the findings of `text` as the run reports them (selection and
    suppressions applied)."""
    text = source
    fixed: List[Diagnostic] = []
    diags = lint(text)
    for _ in range(MAX_PASSES):
        new, taken = apply_fixes(text, diags, path, allowed)
        if not taken or new == text:
            break
        fixed.extend(taken)
        text = new
        diags = lint(text)
    return FixOutcome(text, fixed, list(diags))


def unified_diff(before: str, after: str, path: str) -> str:
    """`--- a/path` / `+++ b/path` unified diff of a fixed file ('' when unchanged; an
    absolute path is shown as is)."""
    if before == after:
        return ""
    a, b = (path, path) if path.startswith("/") else (f"a/{path}", f"b/{path}")
    lines = difflib.unified_diff(before.splitlines(True), after.splitlines(True), fromfile=a, tofile=b)
    out = []
    for ln in lines:
        out.append(ln if ln.endswith(("\n", "\r")) else ln + "\n\\ No newline at end of file\n")
    return "".join(out)
