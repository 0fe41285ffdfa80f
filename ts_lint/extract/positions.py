"""Source ranges of libcst nodes, computed in one cheap code-generation pass.

`libcst.metadata.PositionProvider` computes the same ranges (1-based lines, 0-based
columns, exclusive end, syntactic: without surrounding whitespace) but builds two
dataclass objects per node and splits every token with a regex; on a 3,000-line module
that pass alone costs several times our whole budget. This pass records character
offsets only, and turns an offset into (line, column) on demand with a binary search.
`tests/lint/test_extract.py` checks that both agree on every node of the examples.
"""
from __future__ import annotations

import bisect
import re
from typing import Dict, Tuple

import libcst as cst

from ts_runtime.source import SourceRange

_NEWLINE = re.compile(r"\r\n?|\n")


class _Syntactic:
    """The `record_syntactic_position` context manager, without generator overhead."""
    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(self, state, node, start_node, end_node):
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node

    def __enter__(self):
        self.start = self.state.offset

    def __exit__(self, *exc):
        st = self.state
        computed = st.computed
        start = computed[id(self.start_node)][0] if self.start_node is not None else self.start
        end = computed[id(self.end_node)][1] if self.end_node is not None else st.offset
        computed[id(self.node)] = (start, end, st.unit)
        return False


class _OffsetState:
    """Duck-typed libcst CodegenState that only counts characters."""

    def __init__(self, module: cst.Module, unit=None):
        self.unit = unit
        self.default_indent = module.default_indent
        self.default_newline = module.default_newline
        self.provider = None
        self.indent_tokens: list = []
        self.tokens: list = []         # only ever holds the first token (Module checks emptiness)
        self.offset = 0
        self.indent_len = 0
        self.stack: list = []
        # keyed by id(node): libcst nodes hash with a Python-level __hash__, ints hash in C
        self.computed: Dict[int, tuple] = {}     # id(node) -> (start, end, unit)

    def increase_indent(self, value: str) -> None:
        self.indent_tokens.append(value)
        self.indent_len += len(value)

    def decrease_indent(self) -> None:
        self.indent_len -= len(self.indent_tokens.pop())

    def add_indent_tokens(self) -> None:
        self.offset += self.indent_len

    def add_token(self, value: str) -> None:
        self.offset += len(value)
        if not self.tokens:
            self.tokens.append(value)

    def before_codegen(self, node) -> None:
        self.stack.append(self.offset)

    def after_codegen(self, node) -> None:
        start = self.stack.pop()
        key = id(node)
        if key not in self.computed:
            self.computed[key] = (start, self.offset, self.unit)

    def pop_trailing_newline(self) -> None:
        pass

    def record_syntactic_position(self, node, *, start_node=None, end_node=None):
        return _Syntactic(self, node, start_node, end_node)


class Unit:
    """One parsed piece of a file (a top-level statement or a function) and the character
    offsets of its nodes in its own text. Units are immutable and cached by text
    (ts_lint.extract.source), so the same unit can be placed at different lines in
    different analyses; a `Positions` maps it to its place in one file.

    `ranges` keeps the last SourceRange made for each node with the file and line offset
    it was made for: a warm re-lint places most units where they were before, and then
    reuses them instead of locating every node again."""
    __slots__ = ("module", "text", "starts", "offsets", "kind", "ranges", "__weakref__")

    def __init__(self, module: cst.Module, text: str, kind: str = "skeleton"):
        state = _OffsetState(module, self)
        module._codegen(state)
        self.module = module                      # keeps the ids of its nodes valid
        self.text = text
        self.kind = kind
        self.starts = [0] + [m.end() for m in _NEWLINE.finditer(text)]
        self.offsets = state.computed             # id(node) -> (start, end, self)
        self.ranges: Dict[int, tuple] = {}        # id(node) -> (path, line offset, SourceRange)


class Positions:
    """Node -> SourceRange (same convention as PositionProvider) for one file.

    Each parsed unit (the skeleton of a top-level statement, a function body parsed later:
    ts_lint.extract.source) is placed with the line offset of its text in the file.
    """

    def __init__(self, module: cst.Module = None, source: str = "", path: str = "<unknown>"):
        self.path = path
        self.source = source
        self._offsets: Dict[int, Tuple[int, int, Unit]] = {}     # id(node) -> (start, end, unit)
        self._line_offset: Dict[int, int] = {}                   # id(unit) -> line offset
        self._units: list = []                                   # keeps placed units alive
        if module is not None:
            self.add(module, source, 0)

    def add(self, module: cst.Module, text: str, line_offset: int) -> Unit:
        unit = Unit(module, text)
        self.place(unit, line_offset)
        return unit

    def place(self, unit: Unit, line_offset: int) -> None:
        self._units.append(unit)
        self._line_offset[id(unit)] = line_offset
        self._offsets.update(unit.offsets)

    def _line_col(self, unit: Unit, offset: int) -> Tuple[int, int]:
        starts = unit.starts
        i = bisect.bisect_right(starts, offset) - 1
        return i + 1 + self._line_offset[id(unit)], offset - starts[i]

    def owner(self, node):
        """The unit of a node (None for a node of no placed unit)."""
        span = self._offsets.get(id(node))
        return span[2] if span is not None else None

    def offsets(self, node) -> Tuple[int, int]:
        """(start, end) character offsets in the node's own text (for ordering within a unit)."""
        a, b, _u = self._offsets[id(node)]
        return a, b

    def range(self, node) -> SourceRange:
        key = id(node)
        span = self._offsets.get(key)
        if span is None:
            return SourceRange(self.path, 1, 0)
        unit = span[2]
        off = self._line_offset[id(unit)]
        hit = unit.ranges.get(key)
        if hit is not None and hit[1] == off and hit[0] == self.path:
            return hit[2]
        (l1, c1), (l2, c2) = self._line_col(unit, span[0]), self._line_col(unit, span[1])
        r = SourceRange(self.path, l1, c1, l2, c2)
        unit.ranges[key] = (self.path, off, r)
        return r

    def path_of(self, node) -> str:
        """The file of a node (ts_lint.extract.imports.MultiPositions: one of several)."""
        return self.path

    def line(self, node) -> int:
        span = self._offsets.get(id(node))
        return self._line_col(span[2], span[0])[0] if span is not None else 1

    def text(self, node) -> str:
        span = self._offsets.get(id(node))
        if span is None:
            return ""
        return span[2].text[span[0]:span[1]]

    def line_range(self, node) -> SourceRange:
        """Range with the node's start line, column 0 and no end (a `co_firstlineno` range)."""
        return SourceRange(self.path, self.line(node))
