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
        computed[id(self.node)] = (start, end)
        return False


class _OffsetState:
    """Duck-typed libcst CodegenState that only counts characters."""

    def __init__(self, module: cst.Module):
        self.default_indent = module.default_indent
        self.default_newline = module.default_newline
        self.provider = None
        self.indent_tokens: list = []
        self.tokens: list = []         # only ever holds the first token (Module checks emptiness)
        self.offset = 0
        self.indent_len = 0
        self.stack: list = []
        # keyed by id(node): libcst nodes hash with a Python-level __hash__, ints hash in C
        self.computed: Dict[int, Tuple[int, int]] = {}

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
            self.computed[key] = (start, self.offset)

    def pop_trailing_newline(self) -> None:
        pass

    def record_syntactic_position(self, node, *, start_node=None, end_node=None):
        return _Syntactic(self, node, start_node, end_node)


class Positions:
    """Node -> SourceRange (same convention as PositionProvider) for one file.

    The file's skeleton module is table 0; function bodies parsed later (ts_lint.extract.
    source) are added as further tables, each with the line offset of its text in the file.
    """

    def __init__(self, module: cst.Module, source: str, path: str):
        self.path = path
        self.source = source
        self._offsets: Dict[int, Tuple[int, int, int]] = {}     # id(node) -> (start, end, table)
        self._tables: list = []        # [(text, line starts, line offset, module)]
        self.add(module, source, 0)

    def add(self, module: cst.Module, text: str, line_offset: int) -> None:
        state = _OffsetState(module)
        module._codegen(state)
        t = len(self._tables)
        # the module is kept so that the ids of its nodes stay valid
        self._tables.append((text, [0] + [m.end() for m in _NEWLINE.finditer(text)], line_offset, module))
        self._offsets.update({key: (a, b, t) for key, (a, b) in state.computed.items()})

    def _line_col(self, t: int, offset: int) -> Tuple[int, int]:
        _text, starts, line_offset, _module = self._tables[t]
        i = bisect.bisect_right(starts, offset) - 1
        return i + 1 + line_offset, offset - starts[i]

    def owner(self, node) -> int:
        span = self._offsets.get(id(node))
        return span[2] if span is not None else -1

    def offsets(self, node) -> Tuple[int, int]:
        """(start, end) character offsets in the node's own text (for ordering within a table)."""
        a, b, t = self._offsets[id(node)]
        return a, b

    def range(self, node) -> SourceRange:
        span = self._offsets.get(id(node))
        if span is None:
            return SourceRange(self.path, 1, 0)
        (l1, c1), (l2, c2) = self._line_col(span[2], span[0]), self._line_col(span[2], span[1])
        return SourceRange(self.path, l1, c1, l2, c2)

    def line(self, node) -> int:
        span = self._offsets.get(id(node))
        return self._line_col(span[2], span[0])[0] if span is not None else 1

    def text(self, node) -> str:
        span = self._offsets.get(id(node))
        if span is None:
            return ""
        return self._tables[span[2]][0][span[0]:span[1]]

    def line_range(self, node) -> SourceRange:
        """Range with the node's start line, column 0 and no end (a `co_firstlineno` range)."""
        return SourceRange(self.path, self.line(node))
