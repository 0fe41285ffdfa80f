"""Settings end to end: initializationOptions, workspace/configuration (global and per
folder), didChangeConfiguration, bad values falling back with a message, pyproject
[tool.ts-lint] per workspace folder, the default docs link."""
from __future__ import annotations


import pytest
from lsprotocol import types

from lsp_helpers import ROOT, open_doc, published_for, pull, pull_caps, push_caps, session, wait_for

pytestmark = pytest.mark.asyncio

TEXT = "bad_call(1)\nwarn_here\nrace_here\nunknown_here\n"


def codes(params) -> set:
    return {d.code for d in params.diagnostics}


async def test_initialization_options_select_and_ignore(tmp_path):
    async with session(root=tmp_path, init={"ts": {"select": ["TS1"], "ignore": ["TS127"]}}) as client:
        uri = (tmp_path / "a.py").as_uri()
        open_doc(client, uri, TEXT)
        pub = await wait_for(lambda: published_for(client, uri))
        assert codes(pub[0]) == {"TS101"}


async def test_bad_values_are_shown_and_replaced_by_defaults(tmp_path):
    init = {"debounceMs": "soon", "lintOn": "always", "checker": False, "colour": 1}
    async with session(root=tmp_path, init=init) as client:
        uri = (tmp_path / "a.py").as_uri()
        open_doc(client, uri, TEXT)
        pub = await wait_for(lambda: published_for(client, uri))
        assert codes(pub[0]) == {"TS101", "TS127"}          # checker=False still applied
        texts = [m.message for m in client.messages]
        assert any("'debounceMs' must be a number" in t and "default (300)" in t for t in texts)
        assert any("'lintOn' must be" in t and 'default ("type")' in t for t in texts)
        assert any("unknown setting 'colour'" in t for t in texts)
        assert all(m.type == types.MessageType.Warning for m in client.messages)
        # each problem is shown once, however often the settings are read
        assert len(texts) == len(set(texts)) == 3


async def test_workspace_configuration_scoped_and_changed(tmp_path):
    folder = tmp_path.as_uri()
    config = {"": {"ts": {"ignore": ["TS101"]}}, folder: {"ts": {"explainUnknown": True}}}
    async with session(root=tmp_path, configuration=config,
                       init={"ignore": ["TS127"], "debounceMs": 0}) as client:
        uri = (tmp_path / "a.py").as_uri()
        open_doc(client, uri, TEXT)
        pub = await wait_for(lambda: published_for(client, uri))
        # init ignore TS127 is overridden key-wise by the global ignore TS101
        assert codes(pub[-1]) == {"TS127", "TS802", "TS950"}

        client.set_configuration({"ts": {"checker": False}}, scope_uri=folder)
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        await wait_for(lambda: codes(published_for(client, uri)[-1]) == {"TS127"},
                       what="re-lint with the new settings")


async def test_did_change_configuration_payload_without_configuration_support(tmp_path):
    async with session(push_caps(configuration=False), root=tmp_path) as client:
        uri = (tmp_path / "a.py").as_uri()
        open_doc(client, uri, TEXT)
        await wait_for(lambda: published_for(client, uri))
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"ts": {"select": ["TS8"]}}))
        await wait_for(lambda: codes(published_for(client, uri)[-1]) == {"TS802"})


async def test_pyproject_per_workspace_folder_and_editor_overrides(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.ts-lint]\nignore = ["TS127", "TS101"]\n')
    sub = tmp_path / "pkg"
    sub.mkdir()
    (sub / "pyproject.toml").write_text('[tool.ts-lint]\nselect = ["TS1"]\n')
    async with session(root=tmp_path, init={"debounceMs": 0, "select": ["TS101"]}) as client:
        top, inner = (tmp_path / "a.py").as_uri(), (sub / "b.py").as_uri()
        open_doc(client, top, TEXT)
        open_doc(client, inner, TEXT)
        await wait_for(lambda: published_for(client, top) and published_for(client, inner))
        # the editor's select is the top layer, like `ts-lint --select TS101`
        assert codes(published_for(client, top)[-1]) == {"TS101"}
        assert codes(published_for(client, inner)[-1]) == {"TS101"}

    async with session(root=tmp_path, init={"debounceMs": 0}) as client:
        top, inner = (tmp_path / "a.py").as_uri(), (sub / "b.py").as_uri()
        open_doc(client, top, TEXT)
        open_doc(client, inner, TEXT)
        await wait_for(lambda: published_for(client, top) and published_for(client, inner))
        assert codes(published_for(client, top)[-1]) == {"TS802"}
        # the nearest [tool.ts-lint] applies (not merged with the parent's), like ruff
        assert codes(published_for(client, inner)[-1]) == {"TS101", "TS127"}

        (sub / "pyproject.toml").write_text('[tool.ts-lint]\nselect = ["TS8"]\n')
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
            types.FileEvent(uri=(sub / "pyproject.toml").as_uri(), type=types.FileChangeType.Changed)]))
        await wait_for(lambda: codes(published_for(client, inner)[-1]) == {"TS802"},
                       what="re-lint after pyproject change")


async def test_a_broken_pyproject_is_reported_and_defaults_apply(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.ts-lint]\nselect = "TS1"\n')
    async with session(root=tmp_path) as client:
        uri = (tmp_path / "a.py").as_uri()
        open_doc(client, uri, TEXT)
        pub = await wait_for(lambda: published_for(client, uri))
        assert codes(pub[-1]) == {"TS101", "TS127", "TS802"}
        await wait_for(lambda: any("'select' must be a list" in m.message for m in client.messages))


async def test_default_docs_link_and_pull_refresh_on_settings_change(tmp_path):
    async with session(pull_caps(), root=tmp_path, configuration={"": {"ts": {}}}) as client:
        uri = (tmp_path / "a.py").as_uri()
        open_doc(client, uri, "bad_call(1)\n")
        (d,) = (await pull(client, uri)).items
        assert d.code_description.href == (ROOT / "docs" / "rules.md").as_uri() + "#ts101"
        client.set_configuration({"ts": {"docsBaseUrl": "https://ts.example/r.md"}})
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        await wait_for(lambda: client.refreshes >= 1, what="workspace/diagnostic/refresh")
        (d,) = (await pull(client, uri)).items
        assert d.code_description.href == "https://ts.example/r.md#ts101"
