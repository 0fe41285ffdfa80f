"""Helpers for the ts-lsp end-to-end tests (imported by the test modules; not a conftest,
so that it cannot clash with the other test folders' conftest modules): a real pytest-lsp
client talking to the server in a subprocess over stdio.

`session(...)` starts `tests/lsp/fake_server.py` (ts-lsp with fake_engine.py standing in
for `ts_lint.api`) unless `real=True`, which starts `python -m ts_lsp` with the real
engine (those tests skip while `ts_lint.api` does not exist).
"""
from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import pathlib
import sys
import time
from typing import Any, Callable, Dict, List, Optional

import pytest
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FAKE_SERVER = [sys.executable, str(HERE / "fake_server.py")]
REAL_SERVER = [sys.executable, "-m", "ts_lsp"]


def real_engine_available() -> bool:
    try:
        return importlib.util.find_spec("ts_lint.api") is not None
    except Exception:
        return False


needs_real_engine = pytest.mark.skipif(not real_engine_available(),
                                       reason="ts_lint.api does not exist yet")


class RecordingClient(LanguageClient):
    """pytest-lsp's client, also keeping every publishDiagnostics in order."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.published: List[types.PublishDiagnosticsParams] = []
        self.refreshes = 0


def _publish(client: RecordingClient, params: types.PublishDiagnosticsParams):
    client.published.append(params)
    client.diagnostics[params.uri] = params.diagnostics


def _refresh(client: RecordingClient, params: None):
    client.refreshes += 1
    client.diagnostic_refresh_count += 1


def make_client() -> RecordingClient:
    client = RecordingClient(converter_factory=default_converter)
    features = dict(DEFAULT_CLIENT_FEATURES)
    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = _publish
    features[types.WORKSPACE_DIAGNOSTIC_REFRESH] = _refresh
    register_lsp_features(client, features)
    return client


def push_caps(**workspace) -> types.ClientCapabilities:
    return types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(
                related_information=True, version_support=True),
            hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.Markdown]),
            code_action=types.CodeActionClientCapabilities(
                code_action_literal_support=types.ClientCodeActionLiteralOptions(
                    code_action_kind=types.ClientCodeActionKindOptions(
                        value_set=[types.CodeActionKind.QuickFix, "source.fixAll"])),
                is_preferred_support=True)),
        workspace=types.WorkspaceClientCapabilities(
            configuration=workspace.get("configuration", True),
            workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True),
            diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)),
    )


def pull_caps() -> types.ClientCapabilities:
    caps = push_caps()
    caps.text_document.diagnostic = types.DiagnosticClientCapabilities(related_information=True)
    return caps


@contextlib.asynccontextmanager
async def session(capabilities: Optional[types.ClientCapabilities] = None, *,
                  init: Any = None, configuration: Optional[Dict[str, Any]] = None,
                  real: bool = False, root: Optional[pathlib.Path] = None,
                  env: Optional[Dict[str, str]] = None, args: List[str] = ()):
    client = make_client()
    if configuration is not None:
        for scope, value in configuration.items():
            client.set_configuration(value, scope_uri=scope or None)
    cmd = (REAL_SERVER if real else FAKE_SERVER) + list(args)
    full_env = dict(os.environ)
    full_env.update(env or {})
    await client.start_io(*cmd, env=full_env, cwd=str(root or ROOT))
    folders = None
    root_uri = None
    if root is not None:
        root_uri = root.as_uri()
        folders = [types.WorkspaceFolder(uri=root_uri, name=root.name)]
    await client.initialize_session(types.InitializeParams(
        capabilities=capabilities if capabilities is not None else push_caps(),
        initialization_options=init, root_uri=root_uri, workspace_folders=folders))
    try:
        yield client
    finally:
        try:
            await asyncio.wait_for(client.shutdown_session(), 10)
        finally:
            await client.stop()


def open_doc(client, uri: str, text: str, version: int = 1) -> None:
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)))


def change_full(client, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


def insert(client, uri: str, version: int, line: int, character: int, text: str) -> None:
    pos = types.Position(line, character)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(pos, pos), text=text)]))


async def wait_for(predicate: Callable[[], Any], timeout: float = 10.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        await asyncio.sleep(0.02)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def published_for(client, uri: str) -> List[types.PublishDiagnosticsParams]:
    return [p for p in client.published if p.uri == uri]


async def pull(client, uri: str, previous: Optional[str] = None):
    return await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
        text_document=types.TextDocumentIdentifier(uri=uri), previous_result_id=previous))


def uri_of(path: pathlib.Path) -> str:
    return path.as_uri()
