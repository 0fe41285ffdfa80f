"""Code actions: quick fixes carried by diagnostics, and "Disable TSxxx for this line".

* A ts `Diagnostic.fix` travels to the client in the LSP diagnostic's `data` (edits already
  in client coordinates, see convert.fix_to_data), so the action is rebuilt from what the
  client sends back. Safe fixes are `isPreferred`; unsafe ones say so in the title;
  display-only fixes are not offered as edits.
* The edit is versioned (`documentChanges`) when the client supports it, so a fix computed
  for an older text is rejected rather than applied in the wrong place.
* `source.fixAll.ts` applies every safe fix of the current report (non-overlapping).
* "Disable TSxxx for this line" adds `  # noqa: TSxxx` to the finding's start line or adds
  the code to a `# noqa: ...` already there (see features/noqa.py).
"""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Sequence

from lsprotocol import types

from ..convert import SOURCE, LineIndex
from .noqa import LineFacts, add_code_edit

__all__ = ["code_actions", "FIX_ALL_KIND", "fix_title"]

FIX_ALL_KIND = "source.fixAll.ts"
_UNUSED_NOQA = "TS960"


def fix_title(fix: Dict[str, Any]) -> str:
    title = fix.get("title") or "Apply fix"
    if fix.get("applicability") == "unsafe":
        title += " (unsafe)"
    return title


def _edits(fix: Dict[str, Any]) -> List[types.TextEdit]:
    out = []
    for e in fix.get("edits") or ():
        r = e["range"]
        out.append(types.TextEdit(
            range=types.Range(types.Position(r["start"]["line"], r["start"]["character"]),
                              types.Position(r["end"]["line"], r["end"]["character"])),
            new_text=e["newText"]))
    return out


def _workspace_edit(uri: str, version: Optional[int], edits: List[types.TextEdit],
                    document_changes: bool) -> types.WorkspaceEdit:
    if document_changes:
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
            edits=edits)])
    return types.WorkspaceEdit(changes={uri: edits})


def _wanted(only: Optional[Sequence[str]], kind: str) -> bool:
    if not only:
        return True
    return any(kind == k or kind.startswith(k + ".") for k in only)


def _data(d: types.Diagnostic) -> Dict[str, Any]:
    return d.data if isinstance(d.data, dict) else {}


def code_actions(uri: str, version: Optional[int], index: LineIndex,
                 context: types.CodeActionContext, *, facts: Optional[LineFacts] = None,
                 report_items: Iterable[types.Diagnostic] = (), report_version: Optional[int] = None,
                 document_changes: bool = False) -> List[types.CodeAction]:
    """All actions for the diagnostics the client sent (and fix-all over `report_items`)."""
    only = context.only
    actions: List[types.CodeAction] = []
    mine = [d for d in context.diagnostics if d.source == SOURCE and d.code]
    report_items = list(report_items)

    if _wanted(only, types.CodeActionKind.QuickFix):
        for d in mine:
            fix = _data(d).get("fix") or _matching_fix(d, report_items)
            if fix and fix.get("applicability") != "display-only" and fix.get("edits"):
                edit_version = _data(d).get("version", version)
                actions.append(types.CodeAction(
                    title=fix_title(fix),
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[d],
                    is_preferred=fix.get("applicability") == "safe",
                    edit=_workspace_edit(uri, edit_version, _edits(fix), document_changes)))
        seen = set()
        for d in mine:
            code = str(d.code)
            line0 = d.range.start.line
            if code == _UNUSED_NOQA or (code, line0) in seen:
                continue
            seen.add((code, line0))
            text = index.line_text(line0)
            edit = add_code_edit(text, line0 + 1, code, facts)
            if edit is None:
                continue
            start, end, new = edit
            rng = types.Range(index.position(line0 + 1, start), index.position(line0 + 1, end))
            actions.append(types.CodeAction(
                title=f"Disable {code} for this line",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[d],
                edit=_workspace_edit(uri, version, [types.TextEdit(rng, new)], document_changes)))

    if only and _wanted(only, FIX_ALL_KIND) and report_items:
        edits = _non_overlapping(
            e for item in report_items
            for fix in [_data(item).get("fix")]
            if fix and fix.get("applicability") == "safe"
            for e in [_edits(fix)])
        if edits:
            actions.append(types.CodeAction(
                title="ts: apply all safe fixes", kind=FIX_ALL_KIND,
                edit=_workspace_edit(uri, report_version, edits, document_changes)))
    return actions


def _matching_fix(d: types.Diagnostic, items: List[types.Diagnostic]) -> Optional[Dict[str, Any]]:
    """The fix of the report's diagnostic with the same code and range (client dropped data)."""
    for item in items:
        if item.code == d.code and item.range == d.range:
            return _data(item).get("fix")
    return None


def _non_overlapping(groups: Iterable[List[types.TextEdit]]) -> List[types.TextEdit]:
    taken: List[types.TextEdit] = []

    def key(p: types.Position):
        return (p.line, p.character)

    for group in groups:
        clash = any(not (key(e.range.end) <= key(t.range.start) or key(t.range.end) <= key(e.range.start))
                    for e in group for t in taken)
        if not clash:
            taken.extend(group)
    return sorted(taken, key=lambda e: key(e.range.start))
