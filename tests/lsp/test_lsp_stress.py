"""Stress: 1,000 rapid edits, malformed messages, a 20,000-line file; the server keeps
answering and ends with the diagnostics of the last version."""
from __future__ import annotations

import asyncio
import json
import time

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from lsp_helpers import insert, open_doc, published_for, pull, pull_caps, session, wait_for

pytestmark = pytest.mark.asyncio


async def alive(client, uri) -> bool:
    h = await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri), position=types.Position(0, 0))), 30)
    return h is None or isinstance(h, types.Hover)


async def test_a_thousand_rapid_edits_end_with_the_last_version(tmp_path):
    async with session(root=tmp_path, init={"debounceMs": 50}) as client:
        uri = (tmp_path / "a.py").as_uri()
        open_doc(client, uri, "x = 0\n")
        await wait_for(lambda: published_for(client, uri))
        for v in range(2, 1002):
            # every tenth edit adds a finding; the others type characters on line 0
            if v % 10 == 0:
                insert(client, uri, v, 1, 0, "bad_call(1)\n")
            else:
                insert(client, uri, v, 0, 5, "1")
            if v % 100 == 0:
                await asyncio.sleep(0)
        await wait_for(lambda: published_for(client, uri)[-1].version == 1001, timeout=60,
                       what="diagnostics of version 1001")
        assert len(published_for(client, uri)[-1].diagnostics) == 100
        versions = [p.version for p in published_for(client, uri)]
        assert versions == sorted(versions) and len(versions) < 100   # debounced
        assert await alive(client, uri)


async def test_malformed_messages_do_not_stop_the_server(tmp_path):
    async with session(root=tmp_path, init={"debounceMs": 0}) as client:
        uri = (tmp_path / "a.py").as_uri()
        open_doc(client, uri, "bad_call(1)\n")
        await wait_for(lambda: published_for(client, uri))
        stdin = client._server.stdin
        for body in (b"{not json at all", b'{"jsonrpc": "2.0", "id": 99, "method": 5}',
                     json.dumps({"jsonrpc": "2.0", "method": "textDocument/didChange",
                                 "params": {"textDocument": {"uri": uri}}}).encode(),
                     json.dumps({"jsonrpc": "2.0", "id": "raw-1", "method": "textDocument/hover",
                                 "params": {"bogus": True}}).encode(),
                     json.dumps({"jsonrpc": "2.0", "id": "raw-2", "method": "textDocument/codeAction",
                                 "params": {"textDocument": {"uri": uri}, "range": None,
                                            "context": {"diagnostics": [{"x": 1}]}}}).encode()):
            stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        stdin.write(b"Content-Length: 5\r\n\r\n{}")           # a short body, then more
        await stdin.drain()
        await asyncio.sleep(0.2)
        stdin.write(b"}}}\r\n")
        await stdin.drain()
        # an unknown method gets an error answer
        with pytest.raises(JsonRpcException):
            await client.protocol.send_request_async("ts/noSuchMethod", {})
        # a hover on a position far outside the document, and a command without arguments
        h = await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri), position=types.Position(500, 900)))
        assert h is None
        await client.workspace_execute_command_async(types.ExecuteCommandParams(
            command="ts.showSchedule", arguments=[{"weird": []}]))
        assert await alive(client, uri)
        insert(client, uri, 2, 0, 0, "bad_call(0)\n")
        await wait_for(lambda: published_for(client, uri)[-1].version == 2)
        assert len(published_for(client, uri)[-1].diagnostics) == 2
        # output written to stdout by the engine goes to stderr, not into the protocol
        insert(client, uri, 3, 0, 0, "# PRINT_STDOUT\n")
        await wait_for(lambda: published_for(client, uri)[-1].version == 3)
        assert len(published_for(client, uri)[-1].diagnostics) == 2 and client.error is None


async def test_a_twenty_thousand_line_file(tmp_path):
    lines = []
    for i in range(20_000):
        lines.append("bad_call(1)" if i % 1000 == 0 else f"value_{i} = {i}  # ünïcödé 😀")
    text = "\n".join(lines) + "\n"
    async with session(root=tmp_path, init={"debounceMs": 100}) as client:
        uri = (tmp_path / "big.py").as_uri()
        t0 = time.monotonic()
        open_doc(client, uri, text)
        pub = await wait_for(lambda: published_for(client, uri), timeout=60)
        assert len(pub[0].diagnostics) == 20
        first = time.monotonic() - t0
        for v in range(2, 22):
            insert(client, uri, v, 10_000, 0, "bad_call(2)\n" if v == 21 else "# more\n")
        await wait_for(lambda: published_for(client, uri)[-1].version == 21, timeout=60)
        assert len(published_for(client, uri)[-1].diagnostics) == 21
        assert await alive(client, uri)
        print(f"20,000 lines: first diagnostics after {first:.2f}s")

    async with session(pull_caps(), root=tmp_path) as client:
        uri = (tmp_path / "big.py").as_uri()
        open_doc(client, uri, text)
        report = await asyncio.wait_for(pull(client, uri), 60)
        assert len(report.items) == 20
