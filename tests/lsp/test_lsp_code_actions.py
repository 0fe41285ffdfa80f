"""Code actions end to end: `# noqa` insertion / extension, quick fixes from Diagnostic.fix
(safe preferred, unsafe labelled, display-only not offered), fix-all, versioned edits."""
from __future__ import annotations

from typing import List

import pytest
from lsprotocol import types

from lsp_helpers import change_full, open_doc, published_for, push_caps, session, wait_for

pytestmark = pytest.mark.asyncio


def apply_edits(text: str, edits: List[types.TextEdit]) -> str:
    """Applies LSP edits (UTF-16 positions) to `text`."""
    lines = text.splitlines(True)

    def offset(p: types.Position) -> int:
        before = sum(len(line) for line in lines[:p.line])
        line = lines[p.line] if p.line < len(lines) else ""
        units, i = 0, 0
        while i < len(line) and units < p.character:
            units += 2 if ord(line[i]) > 0xFFFF else 1
            i += 1
        return before + i

    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:offset(e.range.start)] + e.new_text + text[offset(e.range.end):]
    return text


async def actions(client, uri, diags, only=None):
    rng = diags[0].range if diags else types.Range(types.Position(0, 0), types.Position(0, 0))
    return await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri), range=rng,
        context=types.CodeActionContext(diagnostics=list(diags), only=only))) or []


def edits_of(action: types.CodeAction) -> List[types.TextEdit]:
    edit = action.edit
    if edit.document_changes:
        return list(edit.document_changes[0].edits)
    return list(next(iter(edit.changes.values())))


async def test_disable_for_this_line_adds_then_extends_noqa(tmp_path):
    text = 'msg = "ünï 😀"; bad_call(1)\nbad_call(2)  # noqa: E501\n'
    async with session(root=tmp_path, init={"debounceMs": 0}) as client:
        uri = (tmp_path / "a.py").as_uri()
        open_doc(client, uri, text)
        pub = await wait_for(lambda: published_for(client, uri))
        d1, d2 = sorted(pub[0].diagnostics, key=lambda d: d.range.start.line)
        (a1,) = [a for a in await actions(client, uri, [d1]) if a.title.startswith("Disable")]
        assert a1.title == "Disable TS101 for this line" and a1.kind == types.CodeActionKind.QuickFix
        assert a1.edit.document_changes[0].text_document.version == 1
        (a2,) = [a for a in await actions(client, uri, [d2]) if a.title.startswith("Disable")]
        new = apply_edits(apply_edits(text, edits_of(a1)), edits_of(a2))
        assert new == ('msg = "ünï 😀"; bad_call(1)  # noqa: TS101\n'
                       'bad_call(2)  # noqa: E501, TS101\n')
        change_full(client, uri, 2, new)
        await wait_for(lambda: published_for(client, uri)[-1].version == 2)
        assert not published_for(client, uri)[-1].diagnostics     # both suppressed


async def test_quick_fixes_follow_applicability(tmp_path):
    text = "warn_here = 1\nrisky_here = 2\nshown_only = 3\n"
    async with session(root=tmp_path, init={"debounceMs": 0}) as client:
        uri = (tmp_path / "a.py").as_uri()
        open_doc(client, uri, text)
        pub = await wait_for(lambda: published_for(client, uri))
        by_code = {d.code: d for d in pub[0].diagnostics}

        safe = [a for a in await actions(client, uri, [by_code["TS127"]])
                if not a.title.startswith("Disable")]
        assert [(a.title, a.is_preferred) for a in safe] == [("Rename to `fixed_here`", True)]
        unsafe = [a for a in await actions(client, uri, [by_code["TS132"]])
                  if not a.title.startswith("Disable")]
        assert [(a.title, a.is_preferred) for a in unsafe] == [("Rename to `safe_here` (unsafe)", False)]
        shown = [a.title for a in await actions(client, uri, [by_code["TS133"]])]
        assert shown == ["Disable TS133 for this line"]      # display-only: no edit offered

        fixed = apply_edits(text, edits_of(safe[0]))
        assert fixed.startswith("fixed_here = 1\n")
        change_full(client, uri, 2, fixed)
        await wait_for(lambda: published_for(client, uri)[-1].version == 2)
        assert {d.code for d in published_for(client, uri)[-1].diagnostics} == {"TS132", "TS133"}


async def test_fix_all_and_plain_changes_for_clients_without_document_changes(tmp_path):
    caps = push_caps()
    caps.workspace.workspace_edit = types.WorkspaceEditClientCapabilities(document_changes=False)
    text = "warn_here = warn_here\nrisky_here\n"
    async with session(caps, root=tmp_path, init={"debounceMs": 0}) as client:
        uri = (tmp_path / "a.py").as_uri()
        open_doc(client, uri, text)
        await wait_for(lambda: published_for(client, uri))
        (fix_all,) = await actions(client, uri, [], only=["source.fixAll"])
        assert fix_all.kind == "source.fixAll.ts" and fix_all.edit.changes
        assert apply_edits(text, edits_of(fix_all)) == "fixed_here = fixed_here\nrisky_here\n"
        assert await actions(client, uri, [], only=[types.CodeActionKind.QuickFix]) == []
