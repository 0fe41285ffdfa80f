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

The skeleton is parsed one top-level statement at a time (`ast` gives the statements'
lines), and every parsed piece (a `Unit`: libcst nodes + their character offsets) is
cached by its text (`UnitCache`): re-linting an edited module, in the same process,
parses only the statements whose text changed; the others are placed at their new lines.
Within one analysis a unit is used once (node identity is meaningful to the interpreter),
so a statement whose text appears twice in a file gets two units.
"""
from __future__ import annotations

import ast
import re
import threading
from collections import OrderedDict
from typing import Dict, List, Optional

import libcst as cst

from .positions import Positions, Unit

_MIN_BODY_LINES = 3          # shorter bodies are not worth a separate parse
SEGMENTED = True             # False: read the file in one piece (tests compare both ways)
_parse_lock = threading.RLock()


def _fast_parse(text: str) -> cst.Module:
    with _validation_off():
        return cst.parse_module(text)


class _validation_off:
    """Switches libcst's node validation off (re-entrant, one thread at a time)."""
    _depth = 0
    _original = None

    def __enter__(self):
        from libcst._nodes.base import CSTNode
        _parse_lock.acquire()
        cls = _validation_off
        if cls._depth == 0:
            cls._original = CSTNode.__post_init__
            CSTNode.__post_init__ = _no_validation
        cls._depth += 1
        return self

    def __exit__(self, *exc):
        from libcst._nodes.base import CSTNode
        cls = _validation_off
        cls._depth -= 1
        if cls._depth == 0:
            CSTNode.__post_init__ = cls._original
        _parse_lock.release()
        return False


def _no_validation(self) -> None:
    pass


class UnitCache:
    """Parsed units by (kind, text), least recently used first out, bounded by the total
    length of the cached texts. Thread-safe; units are immutable once built."""

    def __init__(self, max_chars: int = 500_000):
        self.max_chars = max_chars
        self._units: "OrderedDict[tuple, List[Unit]]" = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, key: tuple, used: set) -> Optional[Unit]:
        with self._lock:
            units = self._units.get(key)
            if units is None:
                return None
            self._units.move_to_end(key)
            for u in units:
                if id(u) not in used:
                    self.hits += 1
                    return u
        return None

    def put(self, key: tuple, unit: Unit) -> None:
        if self.max_chars <= 0:
            return
        with self._lock:
            self._units.setdefault(key, []).append(unit)
            self._units.move_to_end(key)
            self._chars += len(unit.text)
            while self._chars > self.max_chars and self._units:
                _k, old = self._units.popitem(last=False)
                self._chars -= sum(len(u.text) for u in old)

    def clear(self) -> None:
        with self._lock:
            self._units.clear()
            self._chars = 0
            self.hits = self.misses = 0

    def __len__(self) -> int:
        return sum(len(v) for v in self._units.values())


UNITS = UnitCache()


def clear_cache() -> None:
    """Forgets every cached parse (for measurements and tests)."""
    UNITS.clear()
    _CHUNKS.clear()


class _Span:
    __slots__ = ("start", "end", "indent", "ast_node")

    def __init__(self, start: int, end: int, indent: int, ast_node):
        self.start, self.end, self.indent, self.ast_node = start, end, indent, ast_node


def split_chunks(source: str, lines: Optional[List[str]] = None):
    """[(line offset, _Chunk, text)]: the file cut before top-level statements into pieces
    that are valid Python on their own (see SourceFile), or None if the file is not."""
    last = _LAST_SPLIT
    if last is not None and last[0] is source:
        return last[1]              # the analysis and the `# noqa` reader cut the same text
    out = _split_chunks(source, lines)
    globals()["_LAST_SPLIT"] = (source, out)
    return out


_LAST_SPLIT = None


def _split_chunks(source: str, lines: Optional[List[str]]):
    if lines is None:
        lines = source.splitlines(True)
    if "__future__" in source or _ODD_NEWLINES.search(source):
        chunk = _CHUNKS.get(source) if len(source) < 4_000_000 else _uncached(source)
        return [(0, chunk, source)] if chunk is not None else None
    starts = [0]
    for i in range(1, len(lines)):
        c = lines[i][0]
        if c not in _NOT_A_START and (c not in "ef" or not _CONTINUATION.match(lines[i])):
            starts.append(i)
    starts.append(len(lines))
    out = []
    a, j = 0, 1
    while j < len(starts):
        b = starts[j]
        text = "".join(lines[a:b])
        chunk = _CHUNKS.get(text)
        if chunk is None:
            j += 1                  # not whole statements: extend to the next start
            continue
        out.append((a, chunk, text))
        a, j = b, j + 1
    if a != len(lines) or not out:
        return None
    return out


class Segment:
    """One top-level statement (or statements sharing a line): its lines in the file, its
    libcst statements and its `ast` statements."""
    __slots__ = ("first", "last", "stmts", "ast_nodes", "chunk", "index")

    def __init__(self, first: int, last: int, stmts: list, ast_nodes: list, chunk=None, index=0):
        self.first, self.last, self.stmts, self.ast_nodes = first, last, stmts, ast_nodes
        self.chunk, self.index = chunk, index    # the cached chunk and the statement's index in it


_NOT_A_START = frozenset(" \t\f#)]}\r\n")
_CONTINUATION = re.compile(r"(?:else|elif|except|finally)\b")
_ODD_NEWLINES = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


class _Chunk:
    """`ast` facts of a piece of the file made of whole top-level statements, with line
    numbers relative to the piece (cached by its text: `_CHUNKS`)."""
    __slots__ = ("defs", "spans", "skeleton", "dicts", "segs", "lines", "facts", "compile_error")

    def __init__(self, text: str):
        tree = ast.parse(text)
        self.compile_error = compile_error(tree)
        lines = text.splitlines(True)
        self.lines = list(lines)
        self.facts: dict = {}     # per top-level statement, filled by ts_lint.incremental
        self.defs = []            # [(def line, ast function)] of every function
        self.dicts = []           # [(line, {names}, ast.Dict)] of `name = {...}`
        for node in _statements(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.defs.append((node.lineno, node))
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
                names = {t.id for t in node.targets if isinstance(t, ast.Name)}
                if names:
                    self.dicts.append((node.lineno, names, node.value))
        self.defs.sort(key=lambda d: d[0])
        # function bodies are blanked out (kept: line numbers and columns of the rest)
        self.spans = []           # [(def line, first line, last line, indent, ast function)]
        pruned_until = 0
        for lineno, node in self.defs:
            if lineno <= pruned_until:
                continue                                  # inside a body already blanked
            first = node.body[0]
            decos = getattr(first, "decorator_list", None)   # a decorated def opens the body
            b0 = min([first.lineno] + [d.lineno for d in decos]) if decos else first.lineno
            end = node.end_lineno
            if end - b0 + 1 < _MIN_BODY_LINES or b0 - 1 >= len(lines):
                continue
            head = lines[b0 - 1][:first.col_offset] if first.col_offset else ""
            if head.strip() or not lines[b0 - 1].startswith(head):
                continue                                  # body on the header's line
            start = node.decorator_list[0].lineno if node.decorator_list else node.lineno
            self.spans.append((lineno, start, end, node.col_offset, node))
            lines[b0 - 1] = head + "..." + _eol(lines[b0 - 1])
            for i in range(b0, end):
                lines[i] = _eol(lines[i])
            pruned_until = end
        self.skeleton = lines
        # top-level statements (decorators included; statements sharing a line are one)
        self.segs = []
        for node in tree.body:
            decos = getattr(node, "decorator_list", None)
            first = min([node.lineno] + [d.lineno for d in decos]) if decos else node.lineno
            last = node.end_lineno or node.lineno
            if self.segs and first <= self.segs[-1][1]:
                f, l, nodes = self.segs[-1]
                self.segs[-1] = (f, max(l, last), nodes + [node])
            else:
                self.segs.append((first, last, [node]))


def compile_error(code) -> Optional[tuple]:
    """(message, line, column) of what Python's compiler rejects in source text or an `ast`
    tree that parses (a parameter name given twice, `return` outside a function), or None:
    ts-lint reports it as TS000 (api._compile_error). A piece's is kept with it (_Chunk), so
    that an edit recompiles only the pieces it changed. Compiling to bytecode runs nothing;
    its warnings are not ours."""
    import warnings
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(code, "<ts-lint>", "exec", dont_inherit=True)
    except SyntaxError as e:
        return (e.msg, e.lineno or 1, max(0, (e.offset or 1) - 1))
    except (ValueError, TypeError, RecursionError, MemoryError, OverflowError):
        pass
    return None


class _ChunkCache:
    """_Chunk by text (False: not valid on its own), bounded by the total text length."""

    def __init__(self, max_chars: int = 1_000_000):
        self.max_chars = max_chars
        self._chars = 0
        self._chunks: "OrderedDict[str, object]" = OrderedDict()
        self._lock = threading.Lock()

    def get(self, text: str):
        """The _Chunk of `text`, or None when `text` is not valid Python on its own."""
        with self._lock:
            hit = self._chunks.get(text)
            if hit is not None:
                self._chunks.move_to_end(text)
                return hit if isinstance(hit, _Chunk) else None
        try:
            chunk = _Chunk(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            chunk = False
        with self._lock:
            if text not in self._chunks:
                self._chars += len(text)
            self._chunks[text] = chunk
            while self._chars > self.max_chars and len(self._chunks) > 1:
                old, _c = self._chunks.popitem(last=False)
                self._chars -= len(old)
        return chunk if isinstance(chunk, _Chunk) else None

    def clear(self) -> None:
        with self._lock:
            self._chunks.clear()
            self._chars = 0


_CHUNKS = _ChunkCache()


def _statements(tree):
    """Every statement of a tree (not expressions: cheap compared with ast.walk)."""
    stack = list(reversed(tree.body))
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


class SourceFile:
    """One module: the skeleton tree, its positions, and lazily parsed function bodies.

    The file is read in *chunks*: runs of lines that start with a top-level statement (a
    line at column 0 that does not continue an earlier statement). A chunk that is not
    valid Python on its own (the line only looked like a statement start, e.g. inside a
    string) is extended to the next candidate until it is, so every chunk is made of whole
    statements; `ast` facts are cached per chunk text, so an edited file re-reads only
    its changed chunks. Files with `from __future__` imports or unusual line separators
    are read in one piece.
    """

    def __init__(self, source: str, path: str, prune: bool = True, segment: Optional[bool] = None,
                 cache: Optional[UnitCache] = None):
        if segment is None:
            segment = SEGMENTED
        self.source = source
        self.path = path
        self.lines = source.splitlines(True)
        self.ast_ok = False
        self.cache = UNITS if cache is None else cache
        self._spans: Dict[int, _Span] = {}        # def line -> pruned function
        self._ast_defs: Dict[int, ast.AST] = {}   # def line -> ast function (all functions)
        self._used: set = set()                   # ids of the units placed in this file
        self.pos = Positions(None, source, path)
        self._full: Dict[int, cst.FunctionDef] = {}
        self._dicts: list = []                    # [(line, {names}, ast.Dict, line offset)]
        self.dict_lookups: list = []              # [(line, name, found line)] (see kernel.py)
        self.segments: List[Segment] = []         # the top-level statements, in order
        chunks = None
        if prune:
            chunks = self._chunks(segment)
        if chunks is not None:
            self.ast_ok = True
            skeleton = self._facts(chunks)
            if segment:
                try:
                    self.module = self._parse_segments(chunks)
                    return
                except cst.ParserSyntaxError:
                    # a statement libcst cannot parse on its own: parse the file in one
                    # piece, so that the error is reported where a whole-file parse puts it
                    self._used.clear()
                    self.segments = []
                    self.pos = Positions(None, source, path)
        else:
            skeleton = source
        try:
            module = _fast_parse(skeleton)
        except cst.ParserSyntaxError:
            if skeleton is source:
                raise
            self._spans.clear()
            module = _fast_parse(source)
            skeleton = source
        self.module = module
        self.pos.place(Unit(module, skeleton), 0)

    # ------------------------------------------------------------------ chunks
    def _chunks(self, split: bool):
        """[(line offset, _Chunk)] covering the file, or None if it is not valid Python."""
        if not split:
            chunk = _CHUNKS.get(self.source)
            return [(0, chunk)] if chunk is not None else None
        out = split_chunks(self.source, self.lines)
        return None if out is None else [(off, chunk) for off, chunk, _text in out]

    def _facts(self, chunks) -> str:
        """Fills the line-indexed `ast` facts; returns the skeleton text of the file."""
        skeleton = []
        for off, chunk in chunks:
            for lineno, node in chunk.defs:
                self._ast_defs[lineno + off] = node
            for lineno, start, end, indent, node in chunk.spans:
                self._spans[lineno + off] = _Span(start + off, end + off, indent, node)
            for lineno, names, value in chunk.dicts:
                self._dicts.append((lineno + off, names, value, off))
            skeleton.extend(chunk.skeleton)
        return "".join(skeleton)

    # ------------------------------------------------------------------ segments
    def _parse_segments(self, chunks) -> cst.Module:
        with _validation_off():
            return self._parse_segments_unlocked(chunks)

    def _parse_segments_unlocked(self, chunks) -> cst.Module:
        body = []
        for off, chunk in chunks:
            sk_lines = chunk.skeleton
            for k, (first, last, nodes) in enumerate(chunk.segs):
                text = "".join(sk_lines[first - 1:last])
                if not text.endswith(("\n", "\r")):
                    text += "\n"
                unit = self._unit(("s", text), text)
                self.pos.place(unit, first - 1 + off)
                stmts = list(unit.module.body)
                self.segments.append(Segment(first + off, last + off, stmts, nodes, chunk, k))
                body.extend(stmts)
        return cst.Module(body=body)

    def _unit(self, key: tuple, text: str, kind: str = "skeleton") -> Unit:
        unit = self.cache.get(key, self._used)
        if unit is None:
            self.cache.misses += 1
            unit = Unit(_fast_parse(text), text, kind)
            self.cache.put(key, unit)
        self._used.add(id(unit))
        return unit

    def def_line(self, node) -> int:
        return self.pos.line(node.name)

    # ------------------------------------------------------------------ lazy bodies
    def full(self, node) -> cst.FunctionDef:
        """The complete FunctionDef for a (possibly pruned) skeleton node."""
        if not isinstance(node, cst.FunctionDef):
            return node
        owner = self.pos.owner(node)
        if owner is None or owner.kind != "skeleton":
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
        unit = self._unit(("b", text), text, "body")
        stmt = unit.module.body[0]
        fn = stmt.body.body[0] if span.indent else stmt
        self.pos.place(unit, offset)
        self._full[line] = fn
        return fn

    def body(self, node):
        return self.full(node).body

    def function_text(self, node) -> str:
        """The source of a function as written (also for pruned ones)."""
        owner = self.pos.owner(node)
        if isinstance(node, cst.FunctionDef) and owner is not None and owner.kind == "skeleton":
            span = self._spans.get(self.def_line(node))
            if span is not None:
                return "".join(self.lines[span.start - 1:span.end])
        return self.pos.text(node)

    def ast_function(self, node):
        """The `ast` node of a libcst FunctionDef (by its `def` line), if known."""
        if not self.ast_ok or not isinstance(node, cst.FunctionDef):
            return None
        return self._ast_defs.get(self.pos.line(node.name))

    def ast_dict_assignments(self):
        """[(line, {target names}, ast.Dict, line offset)] of `name = {...}` anywhere in the
        file; the ast node's own line numbers are `line offset` lines before the file's."""
        if not self.ast_ok:
            return None
        return self._dicts

    def ast_range(self, node, line_offset: int = 0):
        """SourceRange of an ast node, with character (not byte) columns like libcst."""
        from ts_runtime.source import SourceRange

        def col(line, byte_col):
            text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
            return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))
        l1, l2 = node.lineno + line_offset, node.end_lineno + line_offset
        return SourceRange(self.path, l1, col(l1, node.col_offset), l2, col(l2, node.end_col_offset))


def _uncached(text: str):
    try:
        return _Chunk(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _eol(line: str) -> str:
    if line.endswith("\r\n"):
        return "\r\n"
    if line.endswith(("\n", "\r")):
        return line[-1]
    return ""


def parse(source: str, path: str, prune: bool = True, **kw) -> SourceFile:
    """The SourceFile of a module's text (the analysed file and the user modules it
    imports). Raises libcst's ParserSyntaxError for text libcst cannot parse, after one
    retry without dangling continuations (`without_dangling_continuations`)."""
    try:
        return SourceFile(source, path, prune, **kw)
    except cst.ParserSyntaxError:
        repaired = without_dangling_continuations(source)
        if repaired is None:
            raise
        try:
            return SourceFile(repaired, path, prune, **kw)
        except cst.ParserSyntaxError:
            pass
        raise


def without_dangling_continuations(source: str) -> Optional[str]:
    """The text with each backslash continuation that joins a blank line (or the end of the
    file) removed, when Python accepts the file and that changes it; else None.

    Python joins `pass\\` with a following blank line into the same logical line, which
    libcst's tokenizer rejects ("unexpected end of file after a line continuation"). The
    backslash is then pure whitespace: dropping it keeps every token, line and column.
    Backslashes inside string literals are left alone."""
    import ast
    if "\\\n" not in source and "\\\r" not in source:
        return None
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    # string literals as (start, end) (line, UTF-8 byte column) spans
    strings = [((n.lineno, n.col_offset), (n.end_lineno, n.end_col_offset)) for n in ast.walk(tree)
               if isinstance(n, ast.JoinedStr) or isinstance(n, ast.Constant) and isinstance(n.value, (str, bytes))]
    lines = source.splitlines(keepends=True)
    changed = False
    for i, line in enumerate(lines):
        body = line.rstrip("\r\n")
        if not body.endswith("\\"):
            continue
        following = lines[i + 1] if i + 1 < len(lines) else ""
        if following.strip():
            continue
        pos = (i + 1, len(body[:-1].encode("utf-8")))
        if any(a <= pos < b for a, b in strings):
            continue
        lines[i] = body[:-1] + line[len(body):]
        changed = True
    return "".join(lines) if changed else None


__all__ = ["SourceFile", "parse", "split_chunks", "UnitCache", "UNITS", "clear_cache"]
