"""ts `Diagnostic` -> LSP `Diagnostic`, and SourceRange <-> LSP positions.

Our ranges follow LibCST: 1-based lines, 0-based columns counted in code points, exclusive
end. LSP positions are 0-based lines and columns counted in the negotiated encoding
(UTF-16 code units unless the client offered something else), so every column goes
through pygls' `PositionCodec` with the document's lines. Nothing here talks to a client.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

__all__ = ["LineIndex", "Context", "to_range", "to_diagnostic", "severity_of", "fix_to_data",
           "SOURCE", "same_file"]

SOURCE = "ts"
_UNKNOWN_PATHS = ("<unknown>",)


class LineIndex:
    """The lines of one text, for converting columns (code points <-> client units)."""

    def __init__(self, source: str, codec: Optional[PositionCodec] = None):
        self.lines: List[str] = source.splitlines(True) or [""]
        if source.endswith(("\n", "\r")):
            self.lines.append("")
        self.codec = codec or PositionCodec()

    def line_text(self, line0: int) -> str:
        if 0 <= line0 < len(self.lines):
            return self.lines[line0].rstrip("\r\n")
        return ""

    def position(self, line1: int, column: Optional[int]) -> types.Position:
        """LSP position of (1-based line, code-point column); clamped into the text."""
        line0 = max(0, line1 - 1)
        if line0 >= len(self.lines):
            last = len(self.lines) - 1
            return types.Position(last, self.codec.client_num_units(self.line_text(last)))
        text = self.line_text(line0)
        col = len(text) if column is None else max(0, min(column, len(text)))
        return types.Position(line0, self.codec.client_num_units(text[:col]))

    def code_point_column(self, pos: types.Position) -> Tuple[int, int]:
        """(1-based line, code-point column) of an LSP position."""
        line0 = max(0, pos.line)
        if line0 >= len(self.lines):
            return len(self.lines), 0
        text = self.line_text(line0)
        units, col = 0, 0
        for ch in text:
            if units >= pos.character:
                break
            units += self.codec.client_num_units(ch)
            col += 1
        return line0 + 1, col


def to_range(rng, index: LineIndex) -> types.Range:
    """LSP range of a SourceRange. A range without an end covers the rest of its line
    (the identifier-or-call it points at is rarely known); an unknown one is (0,0)."""
    if rng is None or getattr(rng, "path", None) in _UNKNOWN_PATHS:
        return types.Range(types.Position(0, 0), types.Position(0, 0))
    start = index.position(rng.line, rng.column)
    if rng.end_line is None:
        end = index.position(rng.line, None)
    else:
        end = index.position(rng.end_line, rng.end_column)
    if (end.line, end.character) < (start.line, start.character):
        end = start
    return types.Range(start, end)


_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
}


def severity_of(d) -> types.DiagnosticSeverity:
    s = getattr(d.severity, "value", d.severity)
    return _SEVERITY.get(str(s), types.DiagnosticSeverity.Warning)


def same_file(path: Optional[str], doc_path: Optional[str]) -> bool:
    """Does a range's path denote the document (`<string>`, its path, or a relative spelling)?"""
    if not path or path in ("<string>", "<stdin>") or doc_path is None:
        return True
    if path == doc_path:
        return True
    try:
        return os.path.abspath(path) == os.path.abspath(doc_path) or \
            os.path.basename(path) == os.path.basename(doc_path) and not os.path.isabs(path)
    except (TypeError, ValueError):
        return False


@dataclass
class Context:
    """What conversion needs to know about the document and the client."""
    uri: str
    path: Optional[str]
    index: LineIndex
    rule_url: Callable[[str], Optional[str]] = lambda code: None
    related_support: bool = True
    other_index: Callable[[str], Tuple[str, LineIndex]] = None   # path -> (uri, index)

    def locate(self, rng) -> Optional[types.Location]:
        if rng is None or getattr(rng, "path", None) in _UNKNOWN_PATHS:
            return None
        if same_file(rng.path, self.path) or self.other_index is None:
            return types.Location(self.uri, to_range(rng, self.index))
        try:
            uri, index = self.other_index(rng.path)
        except Exception:
            return types.Location(self.uri, to_range(rng, self.index))
        return types.Location(uri, to_range(rng, index))


def fix_to_data(fix, ctx: Context) -> Optional[Dict[str, Any]]:
    """A ts `Fix` as JSON-able data (edits already in LSP coordinates of this document)."""
    if fix is None:
        return None
    edits = []
    for e in fix.edits:
        if not same_file(e.range.path, ctx.path):
            return None      # a fix touching other files is not offered from here
        r = to_range(e.range, ctx.index)
        edits.append({"range": {"start": {"line": r.start.line, "character": r.start.character},
                                "end": {"line": r.end.line, "character": r.end.character}},
                      "newText": e.new_text})
    return {"title": fix.title, "applicability": fix.applicability, "edits": edits}


def to_diagnostic(d, ctx: Context) -> types.Diagnostic:
    """One LSP Diagnostic: code, link, severity, related ranges and trace steps, fix as data."""
    related: List[types.DiagnosticRelatedInformation] = []
    extra: List[str] = []
    for rel in d.related or ():
        loc = ctx.locate(rel.range)
        if loc is not None:
            related.append(types.DiagnosticRelatedInformation(loc, rel.message))
        extra.append(f"{rel.message} ({rel.range})" if loc is not None else rel.message)
    trace = list(d.trace or ())
    for i, step in enumerate(trace, 1):
        text = f"trace {i}/{len(trace)}: {step.task}: {step.step}"
        loc = ctx.locate(step.range)
        if loc is not None:
            related.append(types.DiagnosticRelatedInformation(loc, text))
        extra.append(text)
    message = d.message
    if extra and not ctx.related_support:
        message = message + "\n" + "\n".join(extra)
    url = ctx.rule_url(d.code)
    data: Dict[str, Any] = {"code": d.code, "name": d.name, "line": d.range.line}
    fix = fix_to_data(d.fix, ctx)
    if fix is not None:
        data["fix"] = fix
    return types.Diagnostic(
        range=to_range(d.range, ctx.index),
        message=message,
        severity=severity_of(d),
        code=d.code,
        code_description=types.CodeDescription(href=url) if url else None,
        source=SOURCE,
        related_information=related or None,
        data=data,
    )
