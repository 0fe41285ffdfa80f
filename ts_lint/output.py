"""Output formats of ts-lint: text, concise, json, sarif, github; and `--statistics`.

Positions: the model stores 1-based lines and 0-based columns with an exclusive end
(LibCST's convention). Every format here shows 1-based columns, like ruff: text and
concise print `line:column+1`, json's `range.start.column` / `range.end.column` and SARIF's
`startColumn` / `endColumn` are 1-based (the end stays exclusive). A range without an end
is shown as an empty range at its start.
"""
from __future__ import annotations

import json
import os
import re
from collections import Counter
from typing import Dict, Iterable, List, Optional, Sequence

from ts_runtime.diagnostics import Diagnostic, Severity

__all__ = ["FORMATS", "format_text", "format_concise", "format_json", "format_sarif",
           "format_github", "format_statistics", "summary_line", "HELP_URI_BASE", "render"]

FORMATS = ("text", "concise", "json", "sarif", "github")

# Rule pages: docs/rules.md is generated from the catalogue with one `## TSxxx` heading each.
HELP_URI_BASE = "docs/rules.md"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
TOOL_URI = "docs/ts-lint.md"


def _end(rng):
    line = rng.end_line if rng.end_line is not None else rng.line
    col = rng.end_column if rng.end_column is not None else (
        rng.column if line == rng.line else 0)
    return line, col


def _loc(rng) -> str:
    return f"{rng.path}:{rng.line}:{rng.column + 1}"


def _sev(d: Diagnostic) -> str:
    s = d.severity
    return s.value if isinstance(s, Severity) else str(s)


# --- text / concise ------------------------------------------------------------------------

def format_text(diags: Sequence[Diagnostic]) -> str:
    """ruff-like: `path:line:col: TS201 [name] message`, then indented related, trace, fix.

    Further lines of a multi-line message are indented by four spaces.
    """
    out: List[str] = []
    for d in diags:
        first, *more = d.message.split("\n")
        out.append(f"{_loc(d.range)}: {d.code} [{d.name}] {first}")
        out.extend(f"    {line}" for line in more)
        for r in d.related:
            out.append(f"  {_loc(r.range)}: {r.message}")
        if d.trace:
            out.append("  counterexample:")
            for i, step in enumerate(d.trace, 1):
                where = f" ({_loc(step.range)})" if getattr(step, "range", None) is not None else ""
                out.append(f"    {i}. {step.task}: {step.step}{where}")
        if d.fix is not None:
            out.append(f"  fix ({d.fix.applicability}): {d.fix.title}")
    return "".join(line + "\n" for line in out)


def format_concise(diags: Sequence[Diagnostic]) -> str:
    """One line per finding: `path:line:col: TS201 message` (message newlines become spaces)."""
    return "".join(f"{_loc(d.range)}: {d.code} {_one_line(d.message)}\n" for d in diags)


def _one_line(message: str) -> str:
    return re.sub(r"\s*\n\s*", " ", message.strip())


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def summary_line(diags: Sequence[Diagnostic]) -> str:
    """`All checks passed!` or `Found 3 findings (2 errors, 1 warning, 0 info).`"""
    if not diags:
        return "All checks passed!"
    c = Counter(_sev(d) for d in diags)
    return (f"Found {_count(len(diags), 'finding')} ({_count(c['error'], 'error')}, "
            f"{_count(c['warning'], 'warning')}, {c['info']} info).")


# --- json ----------------------------------------------------------------------------------

def _range_json(rng) -> dict:
    end_line, end_col = _end(rng)
    return {"start": {"line": rng.line, "column": rng.column + 1},
            "end": {"line": end_line, "column": end_col + 1}}


def diagnostic_json(d: Diagnostic) -> dict:
    fix = None
    if d.fix is not None:
        fix = {"title": d.fix.title, "applicability": d.fix.applicability,
               "edits": [{"range": _range_json(e.range), "content": e.new_text}
                         for e in d.fix.edits]}
    trace = []
    for step in d.trace:
        rng = getattr(step, "range", None)
        trace.append({"task": step.task, "step": step.step,
                      "filename": rng.path if rng is not None else None,
                      "range": _range_json(rng) if rng is not None else None})
    return {
        "code": d.code,
        "name": d.name,
        "severity": _sev(d),
        "message": d.message,
        "filename": d.range.path,
        "range": _range_json(d.range),
        "related": [{"filename": r.range.path, "range": _range_json(r.range),
                     "message": r.message} for r in d.related],
        "fix": fix,
        "trace": trace,
    }


def format_json(diags: Sequence[Diagnostic]) -> str:
    return json.dumps([diagnostic_json(d) for d in diags], indent=2) + "\n"


# --- SARIF 2.1.0 ---------------------------------------------------------------------------

_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def _uri(path: str) -> str:
    if os.path.isabs(path):
        from pathlib import Path
        return Path(path).as_uri()
    return path.replace(os.sep, "/")


def _region(rng) -> dict:
    end_line, end_col = _end(rng)
    return {"startLine": rng.line, "startColumn": rng.column + 1,
            "endLine": end_line, "endColumn": end_col + 1}


def _physical(rng) -> dict:
    return {"artifactLocation": {"uri": _uri(rng.path)}, "region": _region(rng)}


def _rule_descriptor(code: str, rule) -> dict:
    if rule is None:
        return {"id": code, "helpUri": f"{HELP_URI_BASE}#{code.lower()}"}
    doc = rule.doc()
    return {
        "id": code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary()},
        "fullDescription": {"text": doc},
        "help": {"text": doc, "markdown": doc},
        "helpUri": f"{HELP_URI_BASE}#{code.lower()}",
        "defaultConfiguration": {"level": _LEVEL.get(rule.severity.value, "warning")},
        "properties": {"phase": rule.phase},
    }


def format_sarif(diags: Sequence[Diagnostic], *, version: str = "", rules: Optional[Dict] = None) -> str:
    """SARIF 2.1.0: one run, the whole catalogue as `tool.driver.rules`, one result per finding."""
    if rules is None:
        from ts_runtime.rules.registry import load_all
        rules = dict(load_all())
    codes = sorted(set(rules) | {d.code for d in diags})
    index = {c: i for i, c in enumerate(codes)}
    results = []
    for d in diags:
        res = {
            "ruleId": d.code,
            "ruleIndex": index[d.code],
            "level": _LEVEL.get(_sev(d), "warning"),
            "message": {"text": d.message},
            "locations": [{"physicalLocation": _physical(d.range)}],
        }
        if d.related:
            res["relatedLocations"] = [
                {"id": i, "physicalLocation": _physical(r.range), "message": {"text": r.message}}
                for i, r in enumerate(d.related)]
        if d.fix is not None and d.fix.edits:
            by_file: Dict[str, list] = {}
            for e in d.fix.edits:
                by_file.setdefault(e.range.path, []).append(
                    {"deletedRegion": _region(e.range), "insertedContent": {"text": e.new_text}})
            res["fixes"] = [{"description": {"text": d.fix.title},
                             "artifactChanges": [{"artifactLocation": {"uri": _uri(p)},
                                                  "replacements": reps}
                                                 for p, reps in by_file.items()]}]
        results.append(res)
    driver = {"name": "ts-lint", "informationUri": TOOL_URI,
              "rules": [_rule_descriptor(c, rules.get(c)) for c in codes]}
    if version:
        driver["version"] = version
    doc = {"$schema": SARIF_SCHEMA, "version": "2.1.0",
           "runs": [{"tool": {"driver": driver}, "columnKind": "unicodeCodePoints",
                     "results": results}]}
    return json.dumps(doc, indent=2) + "\n"


# --- GitHub Actions workflow commands --------------------------------------------------------

_GH_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def _gh_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_prop(s: str) -> str:
    return _gh_data(s).replace(":", "%3A").replace(",", "%2C")


def format_github(diags: Sequence[Diagnostic]) -> str:
    """`::error file=PATH,line=L,col=C,title=TS201::message` (warning / notice by severity)."""
    out = []
    for d in diags:
        level = _GH_LEVEL.get(_sev(d), "warning")
        out.append(f"::{level} file={_gh_prop(d.range.path)},line={d.range.line},"
                   f"col={d.range.column + 1},title={_gh_prop(d.code)}::{_gh_data(d.message)}\n")
    return "".join(out)


# --- statistics ------------------------------------------------------------------------------

def format_statistics(diags: Sequence[Diagnostic], fmt: str = "text") -> str:
    """Count per code, most frequent first (ties by code). json: [{code, name, count}]."""
    counts = Counter(d.code for d in diags)
    names = {d.code: d.name for d in diags}
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if fmt == "json":
        return json.dumps([{"code": c, "name": names[c], "count": n} for c, n in rows],
                          indent=2) + "\n"
    if not rows:
        return ""
    width = max(len(str(n)) for _, n in rows)
    return "".join(f"{n:>{width}}\t{c}\t{names[c]}\n" for c, n in rows)


def render(fmt: str, diags: Sequence[Diagnostic], *, version: str = "") -> str:
    if fmt == "text":
        body = format_text(diags)
        return body + ("\n" if body else "") + summary_line(diags) + "\n"
    if fmt == "concise":
        return format_concise(diags) + summary_line(diags) + "\n"
    if fmt == "json":
        return format_json(diags)
    if fmt == "sarif":
        return format_sarif(diags, version=version)
    if fmt == "github":
        return format_github(diags)
    raise ValueError(f"unknown format {fmt!r}")
