"""Building `Fix` edits from source ranges (shared by every rule that knows its edit).

Edits refer to the original text (LSP WorkspaceEdit semantics: non-overlapping, applied
at once), so a move is a whole-line deletion plus an insertion after another line.
"""
from __future__ import annotations

from typing import Optional

from .diagnostics import Edit, Fix
from .source import SourceRange, source_line


def move_statement_after(stmt: SourceRange, anchor: SourceRange, title: str,
                         applicability: str = "unsafe") -> Optional[Fix]:
    """Moves the one-line statement at `stmt` to just after the statement at `anchor`,
    re-indented like the anchor. None when the text is not available or the statement
    does not stand alone on its line."""
    text = source_line(stmt.path, stmt.line)
    anchor_end = anchor.end_line or anchor.line
    anchor_text = source_line(anchor.path, anchor.line)
    if not text or not anchor_text or (stmt.end_line or stmt.line) != stmt.line:
        return None
    body = text.strip()
    call_end = stmt.end_column if stmt.end_column is not None else len(text.rstrip("\n"))
    code = text[stmt.column:call_end]
    if not body.startswith(code) or not code:
        return None            # something else shares the line (e.g. `x = a.release()`)
    if stmt.line <= anchor_end and stmt.line >= anchor.line:
        return None
    indent = anchor_text[:len(anchor_text) - len(anchor_text.lstrip())]
    edits = (
        Edit(SourceRange(stmt.path, stmt.line, 0, stmt.line + 1, 0), ""),
        Edit(SourceRange(anchor.path, anchor_end + 1, 0, anchor_end + 1, 0), indent + body + "\n"),
    )
    return Fix(title, edits, applicability)


def _receiver(rng: SourceRange) -> Optional[str]:
    """`smem` of a call `smem.tma_load(...)` starting at `rng` (None if not that shape)."""
    text = source_line(rng.path, rng.line)
    head = text[rng.column:]
    recv = head.split("(", 1)[0].rsplit(".", 1)[0] if "." in head.split("(", 1)[0] else ""
    return recv if recv and recv.replace(".", "").replace("_", "").isalnum() else None


def insert_call(anchor: SourceRange, method: str, *, before: bool, title: str,
                applicability: str = "unsafe") -> Optional[Fix]:
    """Inserts `<receiver>.<method>()` on its own line before/after the statement at
    `anchor` (a work call on the same resource), at the anchor's indentation."""
    recv = _receiver(anchor)
    text = source_line(anchor.path, anchor.line)
    if recv is None or not text:
        return None
    indent = text[:len(text) - len(text.lstrip())]
    line = anchor.line if before else (anchor.end_line or anchor.line) + 1
    return Fix(title, (Edit(SourceRange(anchor.path, line, 0, line, 0), f"{indent}{recv}.{method}()\n"),),
               applicability)
