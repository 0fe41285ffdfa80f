"""ts-lsp with the real engine offers the dependency-graph and work-queue quick fixes:
the safe TS355 fix (add the missing resource) as preferred, the unsafe TS504 move of the
work-queue epilogue to the tile tail marked "(unsafe)"."""
from __future__ import annotations

import shutil

import pytest
from lsprotocol import types

from lsp_helpers import ROOT, needs_real_engine, open_doc, published_for, session, wait_for

pytestmark = [pytest.mark.asyncio, needs_real_engine]


def _edits(action, uri):
    edit = action.edit
    return list(edit.document_changes[0].edits) if edit.document_changes else list(edit.changes[uri])


async def test_graph_and_tile_tail_fixes_are_offered(tmp_path):
    names = {"02_out_missing_from_graph.py": "TS355", "04_work_queue_in_loop.py": "TS504"}
    for name in names:
        shutil.copy(ROOT / "examples" / "bad" / name, tmp_path / name)
    async with session(root=tmp_path, real=True, init={"debounceMs": 0}) as client:
        for name in names:
            open_doc(client, (tmp_path / name).as_uri(), (tmp_path / name).read_text())
        got = {}
        for name, code in names.items():
            uri = (tmp_path / name).as_uri()
            pub = await wait_for(lambda: published_for(client, uri), timeout=120)
            (diag,) = [d for d in pub[-1].diagnostics if d.code == code]
            actions = await client.text_document_code_action_async(types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri), range=diag.range,
                context=types.CodeActionContext(diagnostics=[diag]))) or []
            fixes = [a for a in actions if isinstance(a, types.CodeAction)
                     and not a.title.startswith("Disable ")]
            assert len(fixes) == 1, [a.title for a in actions]
            got[code] = (fixes[0], _edits(fixes[0], uri))

        graph, edits = got["TS355"]
        assert graph.is_preferred and "out: [smem]" in graph.title and "(unsafe)" not in graph.title
        assert [e.new_text for e in edits] == [", out: [smem]"]

        tail, edits = got["TS504"]
        assert not tail.is_preferred and tail.title.endswith("(unsafe)") and "tile tail" in tail.title
        assert len(edits) == 5                     # four deletions, one insertion after the loop
        (ins,) = [e for e in edits if e.new_text]
        assert [ln.split("#")[0].strip() for ln in ins.new_text.splitlines()] == [
            "wq.try_wait()", "wq.wait()", "wq.get_and_advance_work_tile()", "wq.release()"]
