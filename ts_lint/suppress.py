"""Inline suppressions: `# noqa: TS201`, bare `# noqa`, file-level `# ts-lint: noqa`.

Directives are read from COMMENT tokens (the `tokenize` module), so `# noqa` inside a
string or docstring never counts. Rules:

* `# noqa: TS201, TS202` (commas or spaces) on a line suppresses those codes for findings
  that start on that line (a multi-line finding is matched by its start line).
* A bare `# noqa` (or `# noqa:` with no codes) suppresses every finding on the line.
* `# ts-lint: noqa` in any comment of the file suppresses the whole file;
  `# ts-lint: noqa: TS201, TS3xx...` suppresses only those codes (exact codes) in the file.
* Codes of other tools (`# noqa: E501`) are left alone.
* A `# noqa: TSxxx` code that suppressed nothing is reported as TS960 `unused-noqa`, with a
  safe fix that drops the stale codes (or the whole directive). Codes switched off for the
  file (selection, per-file-ignores) or that this run could not produce (`--no-checker`,
  TS95x without `--explain-unknown`) are not reported, nor is TS960 itself.

A source that cannot be tokenized to the end keeps the directives read before the error.
"""
from __future__ import annotations

import bisect
import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from ts_runtime.diagnostics import Diagnostic, Edit, Fix, Severity
from ts_runtime.source import SourceRange

__all__ = ["Directive", "Suppressions", "parse_suppressions", "apply_suppressions", "UNUSED_NOQA"]

UNUSED_NOQA = "TS960"

_CODE = r"[A-Za-z]+[0-9]+"
_CODES = rf"(?P<codes>{_CODE}(?:[,\s]+{_CODE})*)"
_LINE = re.compile(rf"#\s*noqa(?![A-Za-z0-9_-])(?P<colon>\s*:\s*{_CODES}?)?", re.I)
_FILE = re.compile(rf"#\s*ts-lint\s*:\s*noqa(?![A-Za-z0-9_-])(?:\s*:\s*{_CODES}?)?", re.I)
_ONE_CODE = re.compile(_CODE)


@dataclass
class Directive:
    """One `# noqa` directive; `codes` is None for a bare one (all codes)."""
    line: int
    column: int                         # of the directive's '#'
    end_column: int                     # after its last code (or after 'noqa')
    codes: Optional[Tuple[str, ...]]
    code_spans: Tuple[Tuple[str, int, int], ...] = ()
    comment_column: int = 0             # where the whole comment token starts
    comment: str = ""                   # the whole comment token
    line_text: str = ""
    used: set = field(default_factory=set)

    @property
    def ts_codes(self) -> Tuple[str, ...]:
        return tuple(c for c in (self.codes or ()) if c.startswith("TS"))


@dataclass
class Suppressions:
    file_all: bool = False
    file_codes: frozenset = frozenset()
    lines: Dict[int, List[Directive]] = field(default_factory=dict)

    def suppresses(self, d: Diagnostic) -> bool:
        """True (and marks the directive used) when `d` is suppressed."""
        if self.file_all or d.code in self.file_codes:
            return True
        hit = False
        for directive in self.lines.get(d.range.line, ()):
            if directive.codes is None:
                hit = True
            elif d.code in directive.codes:
                directive.used.add(d.code)
                hit = True
        return hit


def _comments(source: str):
    """(line, column, text, line_text) of every comment token, up to a tokenize error.

    Only the parts of the file that contain "noqa" are tokenized: the file is cut before
    top-level statements (ts_lint.extract.source.split_chunks, cached), where tokenizing
    can start afresh; a file that cannot be cut (a syntax error) is tokenized whole."""
    if "\r" not in source:
        try:
            from .extract.source import split_chunks
            chunks = split_chunks(source)
        except Exception:       # pragma: no cover - never let suppressions fail on this
            chunks = None
        if chunks is not None:
            # the lines that mention noqa, then the chunks that hold them
            hits, pos, line = [], 0, 0
            for m in _ANY_NOQA.finditer(source):
                line += source.count("\n", pos, m.start())
                pos = m.start()
                hits.append(line)          # 0-based
            offsets = [off for off, _c, _t in chunks]
            wanted = sorted({bisect.bisect_right(offsets, h) - 1 for h in hits})
            out = []
            for k in wanted:
                off, _chunk, text = chunks[k]
                out.extend((line + off, col, t, lt) for line, col, t, lt in _tokenize_comments(text))
            return out
    return _tokenize_comments(source)


def _tokenize_comments(source: str):
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                out.append((tok.start[0], tok.start[1], tok.string, tok.line))
    except (tokenize.TokenError, SyntaxError, ValueError):
        pass
    return out


def _codes(m: "re.Match", offset: int) -> Tuple[Optional[Tuple[str, ...]], Tuple]:
    if m.group("codes") is None:
        return None, ()
    spans = tuple((c.group(0).upper(), offset + m.start("codes") + c.start(),
                   offset + m.start("codes") + c.end())
                  for c in _ONE_CODE.finditer(m.group("codes")))
    return tuple(s[0] for s in spans), spans


_ANY_NOQA = re.compile(r"noqa", re.I)


def parse_suppressions(source: str) -> Suppressions:
    sup = Suppressions()
    if not _ANY_NOQA.search(source):
        return sup           # every directive contains "noqa": no need to tokenize the file
    file_codes = set()
    for line, col, text, line_text in _comments(source):
        for m in _FILE.finditer(text):
            codes, _ = _codes(m, col)
            if codes is None:
                sup.file_all = True
            else:
                file_codes.update(codes)
        file_spans = [m.span() for m in _FILE.finditer(text)]
        for m in _LINE.finditer(text):
            if any(a <= m.start() < b for a, b in file_spans):
                continue
            codes, spans = _codes(m, col)
            sup.lines.setdefault(line, []).append(Directive(
                line=line, column=col + m.start(), end_column=col + m.end(), codes=codes,
                code_spans=spans, comment_column=col, comment=text, line_text=line_text))
    sup.file_codes = frozenset(file_codes)
    return sup


def _unused_fix(d: Directive, unused: Sequence[str], path: str) -> Fix:
    keep = [c for c in d.codes or () if c not in unused]
    if keep:
        start, end = d.code_spans[0][1], d.code_spans[-1][2]
        new = ", ".join(dict.fromkeys(keep))
        title = f"Remove unused {_plural('code', len(unused))} from `noqa`"
        return Fix(title, (Edit(SourceRange(path, d.line, start, d.line, end), new),), "safe")
    text = d.line_text.rstrip("\r\n")
    start, end = d.column, d.end_column
    rest = text[end:]
    if rest.strip():  # something follows in the comment: drop the directive and its spaces
        end += len(rest) - len(rest.lstrip())
        if start > d.comment_column:  # "# foo # noqa: X  # bar": keep one separator
            start -= len(text[:start]) - len(text[:start].rstrip())
            end = d.end_column
    else:  # nothing follows: drop the spaces before it too
        start = len(text[:start].rstrip())
    return Fix("Remove unused `noqa` directive",
               (Edit(SourceRange(path, d.line, start, d.line, end), ""),), "safe")


def _plural(word: str, n: int) -> str:
    return word if n == 1 else word + "s"


def apply_suppressions(diags: Sequence[Diagnostic], sup: Suppressions, path: str, *,
                       enabled: Callable[[str], bool] = lambda c: True,
                       produced: Callable[[str], bool] = lambda c: True,
                       known: Optional[Callable[[str], bool]] = None) -> List[Diagnostic]:
    """Drops suppressed findings and adds TS960 for unused codes.

    `diags` are this file's findings after selection; `enabled(code)` tells whether a code is
    reported for the file, `produced(code)` whether this run could have produced it, and
    `known(code)` whether the catalogue has it (else it is reported as "unknown").
    """
    if known is None:
        known = _known
    kept = [d for d in diags if not sup.suppresses(d)]
    if sup.file_all or not enabled(UNUSED_NOQA):
        return kept
    for line in sorted(sup.lines):
        for directive in sup.lines[line]:
            unused, unknown = [], []
            for code in dict.fromkeys(directive.ts_codes):
                if code == UNUSED_NOQA or code in directive.used:
                    continue
                if not known(code):
                    if enabled(code):
                        unknown.append(code)
                elif enabled(code) and produced(code):
                    unused.append(code)
            if not unused and not unknown:
                continue
            parts = []
            if unused:
                parts.append("unused: " + ", ".join(f"`{c}`" for c in unused))
            if unknown:
                parts.append("unknown: " + ", ".join(f"`{c}`" for c in unknown))
            stale = unused + unknown
            diag = _make_unused(
                f"Unused `noqa` directive ({'; '.join(parts)})",
                SourceRange(path, directive.line, directive.column, directive.line,
                            directive.end_column),
                _unused_fix(directive, stale, path))
            if UNUSED_NOQA in (directive.codes or ()) or UNUSED_NOQA in sup.file_codes:
                continue
            kept.append(diag)
    return kept


def _make_unused(message: str, rng: SourceRange, fix: Fix) -> Diagnostic:
    try:
        from . import rules_lint  # noqa: F401  (registers TS960)
        from ts_runtime.rules.registry import make_diagnostic
        return make_diagnostic(UNUSED_NOQA, message, rng, fix=fix)
    except Exception:  # pragma: no cover - the catalogue entry is always there
        return Diagnostic(UNUSED_NOQA, "unused-noqa", Severity.WARNING, message, rng, (), fix)


def _known(code: str) -> bool:
    try:
        from ts_runtime.rules.registry import get
        return get(code) is not None
    except Exception:  # pragma: no cover
        return True
