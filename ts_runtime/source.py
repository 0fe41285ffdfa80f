"""Source ranges shared by every front end.

Both the tracing DSL and the libcst linter point findings at the user's code with the
same convention (LibCST's): 1-based lines, 0-based columns, exclusive end. Only the
LSP edge converts to UTF-16 / 0-based lines.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Optional

__all__ = ["SourceRange", "caller_range", "construction_range", "UNKNOWN_RANGE"]


@dataclass(frozen=True)
class SourceRange:
    path: str
    line: int
    column: int = 0
    end_line: Optional[int] = None
    end_column: Optional[int] = None

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def stop_line(self) -> int:
        return self.end_line if self.end_line is not None else self.line


UNKNOWN_RANGE = SourceRange("<unknown>", 1, 0)

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))
_SKIP_PARTS = (os.sep + "contextlib.py", os.sep + "dataclasses.py", os.sep + "functools.py")


def _is_internal(filename: str) -> bool:
    if filename.startswith(_PKG_DIR):
        return True
    if filename.endswith(_SKIP_PARTS):
        return True
    if filename.startswith("<frozen"):
        return True
    # the CuTe DSL's AST rewriting and tracing layers: the user's line is further out
    return (os.sep + "cutlass" + os.sep) in filename and "base_dsl" in filename


def _is_generated(code) -> bool:
    """dataclass-generated __init__ and friends (compiled from a string)."""
    return code.co_filename == "<string>" and "__create_fn__" in getattr(code, "co_qualname", "__create_fn__")


def caller_range(depth: int = 1) -> SourceRange:
    """Range of the first frame outside ts_runtime (the user's call site).

    Uses the bytecode position table (3.11+) so the column and end are exact; on 3.10
    only the line is known.
    """
    frame = sys._getframe(depth)
    while frame is not None and (_is_internal(frame.f_code.co_filename) or _is_generated(frame.f_code)):
        frame = frame.f_back
    return _frame_range(frame)


def construction_range(obj, depth: int = 1) -> SourceRange:
    """Range of the call that constructs `obj`: like `caller_range`, but the user's
    `__init__` methods running on `obj` are skipped too, so a Task subclass whose
    `__init__` calls `super().__init__(...)` is placed at `SegmentTask(...)`, where the
    object is made (each such object at its own line), not at the shared super() line."""
    frame = sys._getframe(depth)
    while frame is not None:
        code = frame.f_code
        if _is_internal(code.co_filename) or _is_generated(code):
            frame = frame.f_back
        elif code.co_name == "__init__" and frame.f_locals.get("self") is obj:
            frame = frame.f_back
        else:
            break
    return _frame_range(frame)


def _frame_range(frame) -> SourceRange:
    if frame is None:
        return UNKNOWN_RANGE
    code = frame.f_code
    line = frame.f_lineno
    col, end_line, end_col = 0, None, None
    positions = getattr(code, "co_positions", None)
    if positions is not None and frame.f_lasti >= 0:
        try:
            pos = list(positions())[frame.f_lasti // 2]
            if pos[0] is not None:
                line, end_line = pos[0], pos[1]
                col = pos[2] or 0
                end_col = pos[3]
        except (IndexError, ValueError):
            pass
    return SourceRange(code.co_filename, line, _chars(code.co_filename, line, col),
                       end_line, _chars(code.co_filename, end_line, end_col))


def _chars(path: str, line, byte_col):
    """co_positions columns are UTF-8 byte offsets; ranges count code points (as libcst)."""
    if byte_col is None or line is None:
        return byte_col
    import linecache
    text = linecache.getline(path, line)
    if not text or text.isascii():
        return byte_col
    return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


# ---------------------------------------------------------------------------- source text
# Rules that attach a fix need the text of the lines they move. ts-lint and ts-lsp
# register the buffer they analyse (which may be unsaved); the runtime reads the file.
_SOURCES: dict = {}


def register_source(path: str, text: str) -> None:
    _SOURCES[path] = text.splitlines(keepends=True)


def source_line(path: str, line: int) -> str:
    """Text of 1-based `line` of `path` ("" when unknown)."""
    lines = _SOURCES.get(path)
    if lines is not None:
        return lines[line - 1] if 0 < line <= len(lines) else ""
    import linecache
    return linecache.getline(path, line)


def source_lines(path: str) -> list:
    """The analysed lines of `path`: the registered buffer, else the file (linecache)."""
    lines = _SOURCES.get(path)
    if lines is not None:
        return lines
    import linecache
    return linecache.getlines(path)


_PARSED: dict = {}      # path -> (lines, file mtime or None, ast.Module or None)


def parsed(path: str):
    """The `ast` of `path`'s analysed text (None when it does not parse): one parse per
    text, shared by the run-time argument ranges (locate.py) and the fix anchors
    (fixes.py). A file on disk is re-read when its mtime changes."""
    mtime = None
    if path not in _SOURCES:
        import linecache
        try:
            mtime = os.stat(path).st_mtime_ns
        except OSError:
            pass
        hit = _PARSED.get(path)
        if hit is not None and hit[1] != mtime:
            linecache.checkcache(path)
    lines = source_lines(path)
    if not lines:
        return None
    hit = _PARSED.get(path)
    if hit is not None and hit[0] is lines and hit[1] == mtime:
        return hit[2]
    import ast
    try:
        tree = ast.parse("".join(lines))
    except (SyntaxError, ValueError):
        tree = None
    if len(_PARSED) >= 64:
        _PARSED.clear()
    _PARSED[path] = (lines, mtime, tree)
    return tree
