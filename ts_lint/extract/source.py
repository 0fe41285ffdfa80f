"""Parsing for speed: function bodies are parsed only when the interpreter runs them.

Most of a TS module is code the analysis never executes: work-method bodies (TMA, MMA,
epilogue code), reference kernels, test harnesses. Building libcst nodes for them is
most of the cost of linting a large file. So the module is first read with `ast` (fast,
in C) to find every function body, the bodies are blanked out (line numbers and columns
of everything else are kept), libcst parses that skeleton, and a body is parsed on its
own the first time the interpreter calls the function (`SourceFile.body`). Positions of
lazily parsed nodes are shifted to their place in the file, so every range is the same
as in a full parse.

libcst validates every node it builds; the parser only builds valid trees, so
validation is switched off while parsing (`_fast_parse`; libcst's own comment says the
check belongs elsewhere).
"""
from __future__ import annotations

import ast
import threading
from typing import Dict, Optional

import libcst as cst

from .positions import Positions

_MIN_BODY_LINES = 3          # shorter bodies are not worth a separate parse
_parse_lock = threading.Lock()


def _fast_parse(text: str) -> cst.Module:
    from libcst._nodes.base import CSTNode
    with _parse_lock:
        original = CSTNode.__post_init__
        CSTNode.__post_init__ = _no_validation
        try:
            return cst.parse_module(text)
        finally:
            CSTNode.__post_init__ = original


def _no_validation(self) -> None:
    pass


class _Span:
    __slots__ = ("start", "end", "indent", "ast_node")

    def __init__(self, start: int, end: int, indent: int, ast_node):
        self.start, self.end, self.indent, self.ast_node = start, end, indent, ast_node


class SourceFile:
    """One module: the skeleton tree, its positions, and lazily parsed function bodies."""

    def __init__(self, source: str, path: str, prune: bool = True):
        self.source = source
        self.path = path
        self.lines = source.splitlines(True)
        self.tree: Optional[ast.Module] = None
        self._spans: Dict[int, _Span] = {}        # def line -> pruned function
        self._ast_defs: Dict[int, ast.AST] = {}   # def line -> ast function (all functions)
        skeleton = source
        if prune:
            try:
                self.tree = ast.parse(source)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self.tree = None
            if self.tree is not None:
                skeleton = self._prune()
        try:
            self.module = _fast_parse(skeleton)
        except cst.ParserSyntaxError:
            if skeleton is source:
                raise
            self._spans.clear()
            self.module = _fast_parse(source)
            skeleton = source
        self.pos = Positions(self.module, skeleton, path)
        self._full: Dict[int, cst.FunctionDef] = {}
        self._dict_assigns = None

    # ------------------------------------------------------------------ pruning
    def _statements(self):
        """Every statement of the file (not expressions: cheap compared with ast.walk)."""
        stack = list(reversed(self.tree.body))
        while stack:
            st = stack.pop()
            yield st
            for field in ("body", "orelse", "finalbody"):
                sub = getattr(st, field, None)
                if sub:
                    stack.extend(reversed(sub))
            for h in getattr(st, "handlers", None) or ():
                stack.extend(reversed(h.body))
            for case in getattr(st, "cases", None) or ():
                stack.extend(reversed(case.body))

    def _prune(self) -> str:
        lines = list(self.lines)
        defs = []
        for node in self._statements():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._ast_defs[node.lineno] = node
                defs.append(node)
        defs.sort(key=lambda n: n.lineno)
        pruned_until = 0
        for node in defs:
            if node.lineno <= pruned_until:
                continue                                  # inside a body already blanked
            first = node.body[0]
            b0, end = first.lineno, node.end_lineno
            if end - b0 + 1 < _MIN_BODY_LINES or b0 - 1 >= len(lines):
                continue
            head = lines[b0 - 1][:first.col_offset] if first.col_offset else ""
            if head.strip() or not lines[b0 - 1].startswith(head):
                continue                                  # body on the header's line
            start = node.decorator_list[0].lineno if node.decorator_list else node.lineno
            self._spans[node.lineno] = _Span(start, end, node.col_offset, node)
            lines[b0 - 1] = head + "..." + _eol(lines[b0 - 1])
            for i in range(b0, end):
                lines[i] = _eol(lines[i])
            pruned_until = end
        return "".join(lines)

    # ------------------------------------------------------------------ lazy bodies
    def def_line(self, node) -> int:
        return self.pos.line(node.name)

    def full(self, node) -> cst.FunctionDef:
        """The complete FunctionDef for a (possibly pruned) skeleton node."""
        if not isinstance(node, cst.FunctionDef) or self.pos.owner(node) != 0:
            return node
        line = self.def_line(node)
        span = self._spans.get(line)
        if span is None:
            return node
        cached = self._full.get(line)
        if cached is not None:
            return cached
        segment = "".join(self.lines[span.start - 1:span.end])
        if not segment.endswith(("\n", "\r")):
            segment += "\n"
        if span.indent:
            text, offset = "if 1:\n" + segment, span.start - 2
        else:
            text, offset = segment, span.start - 1
        module = _fast_parse(text)
        stmt = module.body[0]
        fn = stmt.body.body[0] if span.indent else stmt
        self.pos.add(module, text, offset)
        self._full[line] = fn
        return fn

    def body(self, node):
        return self.full(node).body

    def function_text(self, node) -> str:
        """The source of a function as written (also for pruned ones)."""
        if isinstance(node, cst.FunctionDef) and self.pos.owner(node) == 0:
            span = self._spans.get(self.def_line(node))
            if span is not None:
                return "".join(self.lines[span.start - 1:span.end])
        return self.pos.text(node)

    def ast_function(self, node):
        """The `ast` node of a libcst FunctionDef (by its `def` line), if known."""
        if self.tree is None or not isinstance(node, cst.FunctionDef):
            return None
        return self._ast_defs.get(self.pos.line(node.name))

    def ast_dict_assignments(self):
        """[(line, {target names}, ast.Dict)] of `name = {...}` anywhere in the file."""
        if self.tree is None:
            return None
        if self._dict_assigns is None:
            out = []
            for n in self._statements():
                if isinstance(n, ast.Assign) and isinstance(n.value, ast.Dict):
                    names = {t.id for t in n.targets if isinstance(t, ast.Name)}
                    if names:
                        out.append((n.lineno, names, n.value))
            self._dict_assigns = out
        return self._dict_assigns

    def ast_range(self, node):
        """SourceRange of an ast node, with character (not byte) columns like libcst."""
        from ts_runtime.source import SourceRange

        def col(line, byte_col):
            text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
            return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))
        return SourceRange(self.path, node.lineno, col(node.lineno, node.col_offset), node.end_lineno,
                           col(node.end_lineno, node.end_col_offset))


def _eol(line: str) -> str:
    if line.endswith("\r\n"):
        return "\r\n"
    if line.endswith(("\n", "\r")):
        return line[-1]
    return ""


def parse(source: str, path: str, prune: bool = True) -> SourceFile:
    return SourceFile(source, path, prune)


__all__ = ["SourceFile", "parse"]
