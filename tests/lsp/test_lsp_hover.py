"""Hover and ts.showSchedule end to end (the fake engine builds KernelModels by tracing)."""
from __future__ import annotations

import pathlib

import pytest
from lsprotocol import types

from lsp_helpers import open_doc, session

pytestmark = pytest.mark.asyncio

SAMPLE = (pathlib.Path(__file__).resolve().parents[1] / "rules" / "sample_program.py").read_text()
TEXT = SAMPLE + 'NOTE = "größe 😀"  # noqa: TS127, TS801\n'


def position(token: str, offset: int = 1, text: str = TEXT) -> types.Position:
    for i, line in enumerate(text.splitlines()):
        j = line.find(token)
        if j >= 0:
            return types.Position(i, len(line[:j + offset].encode("utf-16-le")) // 2)
    raise AssertionError(token)


async def hover(client, uri, pos):
    return await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri), position=pos))


async def test_hover_on_resources_stage_calls_work_calls_and_noqa_codes(tmp_path):
    async with session(root=tmp_path, init={"docsBaseUrl": "https://ts.example/rules.md"}) as client:
        uri = (tmp_path / "prog.py").as_uri()
        open_doc(client, uri, TEXT)

        h = await hover(client, uri, position("smem.acquire()"))
        md = h.contents.value
        assert h.contents.kind == types.MarkupKind.Markdown
        assert "**ProducerAcquire** of `smem` in task `LoadTask` (warp 4)" in md
        assert "class: `Smem`" in md and "pipeline: `TmaAsync`, 2 stage(s)" in md
        assert "producers: `LoadTask` (warp 4)" in md and "consumers: `StoreTask` (warps 0-3)" in md
        assert h.range.start == types.Position(position("smem.acquire()").line, 12)

        md = (await hover(client, uri, position("smem.read_smem()", 6))).contents.value
        assert "**ConsumerWork** of `smem` in task `StoreTask` (warps 0-3)" in md
        assert "work method `read_smem()` returns val" in md

        md = (await hover(client, uri, position('Smem(name="smem"'))).contents.value
        assert md.startswith("**resource** `smem`") and "consumer group: Thread x 128" in md

        md = (await hover(client, uri, position('output_gmem.store('))).contents.value
        assert "ProducerWork** of `out`" in md and "no pipeline" in md

        md = (await hover(client, uri, position('Task(name="LoadTask"'))).contents.value
        assert md.startswith("**task** `LoadTask`") and "schedule `load_schedule`" in md

        md = (await hover(client, uri, position("TS801", 2))).contents.value
        assert md.startswith("**TS801** `interleaving-deadlock` (error) - [docs](https://ts.example/rules.md#ts801)")
        assert "## What it does" in md
        md = (await hover(client, uri, position("TS127", 0))).contents.value
        assert md.startswith("**TS127** `key-on-iteration-predicate`")

        assert await hover(client, uri, types.Position(0, 0)) is None


async def test_show_schedule_command(tmp_path):
    async with session(root=tmp_path) as client:
        uri = (tmp_path / "prog.py").as_uri()
        open_doc(client, uri, TEXT)
        text = await client.workspace_execute_command_async(types.ExecuteCommandParams(
            command="ts.showSchedule",
            arguments=[uri, {"line": position("smem.acquire()").line, "character": 10}]))
        assert "StoreTask[0:4)" in text and "LoadTask[4:5)" in text
        same = await client.workspace_execute_command_async(types.ExecuteCommandParams(
            command="ts.showSchedule",
            arguments=[{"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}]))
        assert same == text          # one TaskManager in the file: it is the one shown

        other = (tmp_path / "empty.py").as_uri()
        open_doc(client, other, "x = 1\n")
        none = await client.workspace_execute_command_async(types.ExecuteCommandParams(
            command="ts.showSchedule", arguments=[other]))
        assert none is None
        assert any("no TaskManager" in m.message for m in client.messages)


async def test_plaintext_hover_for_clients_without_markdown(tmp_path):
    from lsp_helpers import push_caps
    caps = push_caps()
    caps.text_document.hover = types.HoverClientCapabilities(
        content_format=[types.MarkupKind.PlainText])
    async with session(caps, root=tmp_path) as client:
        uri = (tmp_path / "prog.py").as_uri()
        open_doc(client, uri, TEXT)
        h = await hover(client, uri, position("smem.commit()"))
        assert h.contents.kind == types.MarkupKind.PlainText
        assert "ProducerCommit of smem in task LoadTask (warp 4)" in h.contents.value
