"""`# noqa` directives of one line: where they are, which codes, where to add one.

Suppression (ts_lint.suppress) matches a finding by its *start* line and reads directives
from COMMENT tokens only. The editor side needs just the line's comment: the code action
adds `  # noqa: TS201` or extends an existing `# noqa: E501` to `# noqa: E501, TS201`, and
hover finds the code under the cursor. `line_facts` tokenizes the whole text once (cached
by the caller per version) to know each line's comment and whether the line ends inside a
multi-line string or with a backslash continuation, where no comment can go.
"""
from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

__all__ = ["LineFacts", "line_facts", "NoqaDirective", "find_directives", "add_code_edit",
           "code_at"]

_CODE = r"[A-Za-z]+[0-9]+"
_DIRECTIVE = re.compile(
    rf"#\s*noqa(?![A-Za-z0-9_-])(?P<colon>\s*:\s*(?P<codes>{_CODE}(?:[,\s]+{_CODE})*)?)?", re.I)
_FILE_DIRECTIVE = re.compile(r"#\s*ts-lint\s*:\s*noqa", re.I)
_ONE = re.compile(_CODE)


@dataclass
class LineFacts:
    comments: Dict[int, Tuple[int, str]] = field(default_factory=dict)  # line1 -> (col, text)
    no_comment: Set[int] = field(default_factory=set)   # lines that cannot take a comment
    complete: bool = True                               # tokenize reached the end


def line_facts(source: str) -> LineFacts:
    facts = LineFacts()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                facts.comments[tok.start[0]] = (tok.start[1], tok.string)
            elif tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
                facts.no_comment.update(range(tok.start[0], tok.end[0]))
            elif getattr(tokenize, "FSTRING_MIDDLE", None) == tok.type and tok.end[0] > tok.start[0]:
                facts.no_comment.update(range(tok.start[0], tok.end[0]))
    except (tokenize.TokenError, SyntaxError, ValueError):
        facts.complete = False
    for i, line in enumerate(source.splitlines(), 1):
        if line.rstrip().endswith("\\") and i not in facts.comments:
            facts.no_comment.add(i)
    return facts


@dataclass
class NoqaDirective:
    start: int                      # column of '#'
    end: int                        # after the last code (or 'noqa')
    codes: Optional[Tuple[Tuple[str, int, int], ...]]   # None: bare `# noqa`


def find_directives(comment_col: int, comment: str) -> List[NoqaDirective]:
    """`# noqa` directives inside one comment token (file-level `# ts-lint: noqa` excluded)."""
    skip = [m.span() for m in _FILE_DIRECTIVE.finditer(comment)]
    out = []
    for m in _DIRECTIVE.finditer(comment):
        if any(a <= m.start() < b for a, b in skip):
            continue
        if m.group("codes") is None:
            out.append(NoqaDirective(comment_col + m.start(), comment_col + m.end(), None))
            continue
        base = comment_col + m.start("codes")
        codes = tuple((c.group(0).upper(), base + c.start(), base + c.end())
                      for c in _ONE.finditer(m.group("codes")))
        out.append(NoqaDirective(comment_col + m.start(), comment_col + m.end(), codes))
    return out


def _comment_of(line_text: str, line1: int, facts: Optional[LineFacts]):
    if facts is not None and facts.complete:
        return facts.comments.get(line1)
    # no full tokenization: tokenize the line alone, falling back to the last '#'
    try:
        for tok in tokenize.generate_tokens(io.StringIO(line_text + "\n").readline):
            if tok.type == tokenize.COMMENT:
                return tok.start[1], tok.string
        return None
    except (tokenize.TokenError, SyntaxError, ValueError):
        i = line_text.find("#")
        return (i, line_text[i:]) if i >= 0 else None


def add_code_edit(line_text: str, line1: int, code: str,
                  facts: Optional[LineFacts] = None) -> Optional[Tuple[int, int, str]]:
    """(start column, end column, new text) that makes line `line1` suppress `code`.

    None when the line already suppresses it (bare `# noqa` or the code is listed) or when
    no comment can be added (the line ends inside a string or with a backslash).
    """
    comment = _comment_of(line_text, line1, facts)
    if comment is not None:
        directives = find_directives(*comment)
        for d in directives:
            if d.codes is None:
                return None
            if any(c == code.upper() for c, _, _ in d.codes):
                return None
        with_codes = [d for d in directives if d.codes]
        if with_codes:
            last = with_codes[0].codes[-1]
            return last[2], last[2], f", {code}"
        if directives:     # `# noqa:` with a colon and no codes is bare (all codes)
            return None
    if facts is not None and line1 in facts.no_comment:
        return None
    stripped = len(line_text.rstrip())
    return stripped, len(line_text), f"  # noqa: {code}"


def code_at(line_text: str, line1: int, column: int,
            facts: Optional[LineFacts] = None) -> Optional[str]:
    """The rule code of a `# noqa: ...` directive under `column`, if any."""
    comment = _comment_of(line_text, line1, facts)
    if comment is None or column < comment[0]:
        return None
    for d in find_directives(*comment):
        for c, a, b in d.codes or ():
            if a <= column <= b:
                return c
    return None
