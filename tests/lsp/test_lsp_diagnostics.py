"""Diagnostics end to end: push vs pull (never both), debounce, stale drop, close, save,
UTF-16 positions, engine failures."""
from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from lsp_helpers import (change_full, insert, open_doc, published_for, pull, pull_caps,
                      session, wait_for)

pytestmark = pytest.mark.asyncio

TEXT = "import x\nbad_call(1)\nwarn_here = 1\nrace_here = 2\n"


async def test_push_publishes_full_diagnostics_on_open(tmp_path):
    async with session(root=tmp_path, init={"debounceMs": 50,
                                            "docsBaseUrl": "https://ts.example/rules.md"}) as client:
        uri = (tmp_path / "a.py").as_uri()
        open_doc(client, uri, TEXT)
        pub = await wait_for(lambda: published_for(client, uri), what="publish")
        assert pub[0].version == 1
        diags = {d.code: d for d in pub[0].diagnostics}
        assert set(diags) == {"TS101", "TS127", "TS802"}
        d = diags["TS101"]
        assert d.source == "ts" and d.severity == types.DiagnosticSeverity.Error
        assert d.code_description.href == "https://ts.example/rules.md#ts101"
        assert d.range == types.Range(types.Position(1, 0), types.Position(1, 8))
        assert diags["TS127"].severity == types.DiagnosticSeverity.Warning
        race = diags["TS802"]
        msgs = [r.message for r in race.related_information]
        assert msgs == ["the other access", "trace 1/2: LoadTask: ProducerAcquire(smem)",
                        "trace 2/2: StoreTask: ConsumerWait(smem)"]
        assert race.related_information[0].location.uri == uri


async def test_push_debounces_a_burst_and_reports_the_last_version(tmp_path):
    async with session(root=tmp_path, init={"debounceMs": 150}) as client:
        uri = (tmp_path / "a.py").as_uri()
        open_doc(client, uri, "x = 1\n")
        await wait_for(lambda: published_for(client, uri))
        for v in range(2, 12):
            change_full(client, uri, v, "x = 1\n" + "bad_call(1)\n" * (v - 1))
            await asyncio.sleep(0.01)
        await wait_for(lambda: published_for(client, uri)[-1].version == 11, what="v11")
        await asyncio.sleep(0.4)
        versions = [p.version for p in published_for(client, uri)]
        # the first edit after a quiet spell is linted at once (leading edge; its report is
        # published unless v3.. arrived first and made it stale), the rest of the burst once
        assert versions in ([1, 11], [1, 2, 11])
        assert len(published_for(client, uri)[-1].diagnostics) == 10


async def test_pull_client_gets_reports_and_no_pushes(tmp_path):
    async with session(pull_caps(), root=tmp_path, init={"debounceMs": 30}) as client:
        uri = (tmp_path / "a.py").as_uri()
        open_doc(client, uri, TEXT)
        first = await pull(client, uri)
        assert first.kind == "full" and {d.code for d in first.items} == {"TS101", "TS127", "TS802"}
        again = await pull(client, uri, previous=first.result_id)
        assert again.kind == "unchanged" and again.result_id == first.result_id
        change_full(client, uri, 2, "x = 1\n")
        second = await pull(client, uri, previous=first.result_id)
        assert second.kind == "full" and not second.items and second.result_id != first.result_id
        client.text_document_did_close(types.DidCloseTextDocumentParams(
            types.TextDocumentIdentifier(uri)))
        await asyncio.sleep(0.3)
        assert client.published == []          # never both: a pull client gets no pushes


async def test_stale_results_are_dropped(tmp_path):
    """v2 takes 0.8 s to lint; v3 arrives meanwhile: v2's result is never published."""
    async with session(root=tmp_path, init={"debounceMs": 20}) as client:
        uri = (tmp_path / "a.py").as_uri()
        open_doc(client, uri, "x = 1\n")
        await wait_for(lambda: published_for(client, uri))
        change_full(client, uri, 2, "# SLEEP=0.8\nbad_call(1)\n")
        await asyncio.sleep(0.3)                 # v2 is being linted now
        change_full(client, uri, 3, "warn_here\n")
        await wait_for(lambda: published_for(client, uri)[-1].version == 3, what="v3")
        await asyncio.sleep(0.8)
        assert [p.version for p in published_for(client, uri)] == [1, 3]
        assert [d.code for d in published_for(client, uri)[-1].diagnostics] == ["TS127"]


async def test_pull_while_the_text_changes_asks_the_client_to_retry(tmp_path):
    async with session(pull_caps(), root=tmp_path, init={"debounceMs": 0}) as client:
        uri = (tmp_path / "a.py").as_uri()
        open_doc(client, uri, "x = 1\n")
        assert not (await pull(client, uri)).items
        change_full(client, uri, 2, "# SLEEP=0.6\nbad_call(1)\n")
        request = asyncio.ensure_future(pull(client, uri))
        await asyncio.sleep(0.25)                 # v2 is being linted for this request
        change_full(client, uri, 3, "warn_here\n")
        with pytest.raises(JsonRpcException) as err:
            await request
        assert err.value.code == -32802 and err.value.data == {"retriggerRequest": True}
        report = await pull(client, uri)
        assert [d.code for d in report.items] == ["TS127"]


async def test_pull_waits_out_the_debounce_and_save_mode_keeps_the_saved_report(tmp_path):
    async with session(pull_caps(), root=tmp_path,
                       init={"debounceMs": 300}) as client:
        uri = (tmp_path / "a.py").as_uri()
        open_doc(client, uri, "x = 1\n")
        await pull(client, uri)
        loop = asyncio.get_running_loop()
        # a burst (the second edit within debounceMs of the first) waits out the delay;
        # an isolated edit would be linted at once
        change_full(client, uri, 2, "bad_call(0)\n")
        change_full(client, uri, 3, "bad_call(1)\n")
        t0 = loop.time()
        report = await pull(client, uri)
        assert loop.time() - t0 >= 0.25 and len(report.items) == 1
        # a change within the delay cancels the waiting request
        change_full(client, uri, 4, "bad_call(1)\nbad_call(3)\n")
        change_full(client, uri, 5, "bad_call(1)\nbad_call(2)\n")
        request = asyncio.ensure_future(pull(client, uri))
        await asyncio.sleep(0.1)
        change_full(client, uri, 6, "warn_here\n")
        with pytest.raises(JsonRpcException):
            await request
        assert [d.code for d in (await pull(client, uri)).items] == ["TS127"]

    async with session(pull_caps(), root=tmp_path, init={"lintOn": "save"}) as client:
        uri = (tmp_path / "b.py").as_uri()
        open_doc(client, uri, "bad_call(1)\n")
        first = await pull(client, uri)
        change_full(client, uri, 2, "x = 1\n")
        again = await pull(client, uri, previous=first.result_id)
        assert again.kind == "unchanged"            # not saved yet
        client.text_document_did_save(types.DidSaveTextDocumentParams(
            types.TextDocumentIdentifier(uri)))
        await wait_for(lambda: client.refreshes >= 1, what="diagnostic refresh")
        saved = await pull(client, uri, previous=first.result_id)
        assert saved.kind == "full" and not saved.items


async def test_close_clears_and_save_mode_waits_for_save(tmp_path):
    async with session(root=tmp_path, init={"lintOn": "save", "debounceMs": 0}) as client:
        uri = (tmp_path / "a.py").as_uri()
        open_doc(client, uri, "bad_call(1)\n")
        pub = await wait_for(lambda: published_for(client, uri))
        assert len(pub[0].diagnostics) == 1
        change_full(client, uri, 2, "bad_call(1)\nbad_call(2)\n")
        await asyncio.sleep(0.4)
        assert len(published_for(client, uri)) == 1       # typing does not lint
        client.text_document_did_save(types.DidSaveTextDocumentParams(
            types.TextDocumentIdentifier(uri)))
        await wait_for(lambda: len(published_for(client, uri)) == 2, what="save publish")
        assert published_for(client, uri)[-1].version == 2
        assert len(published_for(client, uri)[-1].diagnostics) == 2
        client.text_document_did_close(types.DidCloseTextDocumentParams(
            types.TextDocumentIdentifier(uri)))
        await wait_for(lambda: len(published_for(client, uri)) == 3, what="clear")
        assert not published_for(client, uri)[-1].diagnostics


async def test_utf16_positions_after_non_ascii_text(tmp_path):
    line = 'label = "größe 😀 €"; bad_call(1)'
    col = line.index("bad_call")                      # code points
    units = len(line[:col].encode("utf-16-le")) // 2   # UTF-16 code units (the emoji counts 2)
    assert units == col + 1
    async with session(root=tmp_path) as client:
        uri = (tmp_path / "a.py").as_uri()
        open_doc(client, uri, f"# ünïcödé header 😀😀\n{line}\n")
        pub = await wait_for(lambda: published_for(client, uri))
        (d,) = pub[0].diagnostics
        assert d.range == types.Range(types.Position(1, units), types.Position(1, units + 8))
        # an incremental edit addressed in UTF-16 units lands where the client meant
        insert(client, uri, 2, 1, units, "bad_call(0); ")
        pub = await wait_for(lambda: published_for(client, uri)[-1].version == 2)
        starts = sorted(x.range.start.character for x in published_for(client, uri)[-1].diagnostics)
        assert starts == [units, units + len("bad_call(0); ")]


async def test_an_engine_crash_is_reported_and_the_server_keeps_serving(tmp_path):
    async with session(root=tmp_path, init={"debounceMs": 0}) as client:
        uri = (tmp_path / "a.py").as_uri()
        open_doc(client, uri, "CRASH_ENGINE\n")
        (d,) = (await wait_for(lambda: published_for(client, uri)))[0].diagnostics
        assert d.code == "TS999" and "crashed on purpose" in d.message   # like ts-lint
        change_full(client, uri, 2, "bad_call(1)\n")
        pub = await wait_for(lambda: published_for(client, uri)[-1].version == 2)
        assert [d.code for d in published_for(client, uri)[-1].diagnostics] == ["TS101"]


async def test_the_recorded_clients_get_push_or_pull_by_their_capabilities(tmp_path):
    from pytest_lsp import client_capabilities
    for spec, mode in (("neovim@v0.7.0", "push"), ("neovim@v0.11.0", "pull"),
                       ("visual_studio_code@v1.65.2", "push")):
        async with session(client_capabilities(spec), root=tmp_path,
                           init={"debounceMs": 0}) as client:
            uri = (tmp_path / "a.py").as_uri()
            open_doc(client, uri, 'é = "😀"; bad_call(1)\n')
            if mode == "pull":
                report = await pull(client, uri)
                (d,) = report.items
                await asyncio.sleep(0.2)
                assert client.published == []
            else:
                (d,) = (await wait_for(lambda: published_for(client, uri)))[0].diagnostics
            # Neovim 0.11 offers UTF-8 first; the others count UTF-16 units
            expected = len('é = "😀"; '.encode("utf-8")) if spec == "neovim@v0.11.0" else \
                len('é = "😀"; '.encode("utf-16-le")) // 2
            assert d.range.start.character == expected, spec
