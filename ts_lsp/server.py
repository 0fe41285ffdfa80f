"""The ts language server: pygls 2 handlers, kept thin; the logic is in plain modules.

    settings.py            typed settings, defaults, validation, where they come from
    engine.py              ts_lint in-process (lazy import), pyproject [tool.ts-lint]
    convert.py             ts Diagnostic -> LSP (code, link, severity, related, UTF-16)
    debounce.py            keyed, locked, capped debouncer
    features/diagnostics   push or pull, debounce, stale drop, clear on close
    features/code_actions  quick fixes and `# noqa`
    features/hover         resources / stage calls / `# noqa` codes
    features/schedule      ts.showSchedule

The linter runs in worker threads (one for lint runs, one for hover analyses), so the
event loop keeps answering while a large file is linted.
"""
from __future__ import annotations

import asyncio
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from . import __version__
from .convert import LineIndex, to_range
from .engine import Engine, EngineUnavailable, ensure_catalogue, rule
from .features import code_actions as ca
from .features import hover as hv
from .features import schedule as sch
from .features.diagnostics import SERVER_CANCELLED, DiagnosticsFeature
from .features.noqa import LineFacts, code_at, line_facts
from .settings import SECTION, Settings, SettingsStore

__all__ = ["TsLanguageServer", "create_server", "Snapshot", "SHOW_SCHEDULE"]

log = logging.getLogger(__name__)

SHOW_SCHEDULE = "ts.showSchedule"


class _QuietCancellations(logging.Filter):
    """pygls logs every failed request with a traceback; a ServerCancelled answer to a
    diagnostic pull is routine (the text changed), so it is not logged."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return getattr(exc, "code", None) != SERVER_CANCELLED


logging.getLogger("pygls.protocol.json_rpc").addFilter(_QuietCancellations())


@dataclass(frozen=True)
class Snapshot:
    uri: str
    version: Optional[int]
    source: str
    path: Optional[str]
    root: Optional[str]


def _cap(obj: Any, *names: str) -> Any:
    for n in names:
        if obj is None:
            return None
        obj = getattr(obj, n, None)
    return obj


class TsLanguageServer(LanguageServer):
    def __init__(self, engine: Optional[Engine] = None):
        super().__init__("ts-lsp", __version__,
                         text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.engine = engine or Engine()
        self.lint_executor = ThreadPoolExecutor(1, thread_name_prefix="ts-lint")
        self.analysis_executor = ThreadPoolExecutor(1, thread_name_prefix="ts-analyze")
        self.store = SettingsStore()
        self.diagnostics = DiagnosticsFeature(self, self.lint_executor)
        self.pull_diagnostics = False
        self._shown: set = set()
        self._analyses: Dict[str, Tuple[Optional[int], Any]] = {}
        self._facts: Dict[str, Tuple[Optional[int], LineFacts]] = {}

    # ---------------------------------------------------------------- client capabilities
    @property
    def related_support(self) -> bool:
        """Whether the client shows relatedInformation (else it goes into the message).

        For pull diagnostics the capability is `textDocument.diagnostic.relatedInformation`,
        which vscode-languageclient 9 leaves unset although VS Code shows related
        information of pulled diagnostics; the publishDiagnostics capability decides then.
        """
        caps = self.client_capabilities
        pulled = _cap(caps, "text_document", "diagnostic", "related_information") \
            if self.pull_diagnostics else None
        if pulled is not None:
            return bool(pulled)
        return bool(_cap(caps, "text_document", "publish_diagnostics", "related_information"))

    @property
    def document_changes(self) -> bool:
        return bool(_cap(self.client_capabilities, "workspace", "workspace_edit", "document_changes"))

    @property
    def markdown_hover(self) -> bool:
        fmts = _cap(self.client_capabilities, "text_document", "hover", "content_format")
        return fmts is None or types.MarkupKind.Markdown in fmts

    def codec(self):
        return self.workspace.position_codec

    # ---------------------------------------------------------------- documents
    def _doc(self, uri: str):
        try:
            return self.workspace.text_documents.get(unquote(uri))
        except RuntimeError:           # not initialized yet
            return None

    def open_uris(self) -> List[str]:
        try:
            return [d.uri for d in self.workspace.text_documents.values()]
        except RuntimeError:
            return []

    def folder_uris(self) -> List[str]:
        try:
            return [f.uri for f in self.workspace.folders.values()] + \
                ([self.workspace.root_uri] if self.workspace.root_uri else [])
        except RuntimeError:
            return []

    def snapshot(self, uri: str) -> Optional[Snapshot]:
        doc = self._doc(uri)
        if doc is None:
            return None
        path = to_fs_path(uri) if uri.startswith("file:") else None
        folder = self.store.folder_of(uri, self.folder_uris())
        root = to_fs_path(folder) if folder and folder.startswith("file:") else None
        return Snapshot(uri, doc.version, doc.source, path, root)

    def snapshot_version(self, uri: str):
        """The open document's version, or False when it is not open."""
        doc = self._doc(uri)
        return False if doc is None else doc.version

    def index_for_path(self, path: str) -> Tuple[str, LineIndex]:
        uri = from_fs_path(os.path.abspath(path))
        doc = self._doc(uri)
        if doc is not None:
            return uri, LineIndex(doc.source, self.codec())
        with open(path, encoding="utf-8", errors="replace") as f:
            return uri, LineIndex(f.read(), self.codec())

    # ---------------------------------------------------------------- settings
    def settings_for(self, uri: Optional[str]) -> Settings:
        folder = self.store.folder_of(uri, self.folder_uris()) if uri else None
        settings, problems = self.store.get(folder)
        for p in problems:
            self.show_problem(p, types.MessageType.Warning)
        return settings

    async def fetch_configuration(self) -> bool:
        """workspace/configuration for section `ts`, globally and per workspace folder;
        True when it changed anything."""
        if not _cap(self.client_capabilities, "workspace", "configuration"):
            return False
        folders = [f.uri for f in self.workspace.folders.values()]
        items = [types.ConfigurationItem(section=SECTION)] + \
            [types.ConfigurationItem(scope_uri=f, section=SECTION) for f in folders]
        try:
            result = await asyncio.wait_for(
                self.workspace_configuration_async(types.ConfigurationParams(items=items)), 10)
        except Exception as exc:
            log.warning("workspace/configuration failed: %s", exc)
            return False
        result = list(result or [])
        return self.store.set_configuration(result[0] if result else None,
                                            dict(zip(folders, result[1:])))

    # ---------------------------------------------------------------- output
    def publish(self, uri: str, items: List[types.Diagnostic], version: Optional[int]) -> None:
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=items, version=version))

    def show_problem(self, message: str, kind=types.MessageType.Warning) -> None:
        """window/showMessage, once per distinct text (settings are re-read often)."""
        if message in self._shown:
            return
        self._shown.add(message)
        log.warning("%s", message)
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def log(self, message: str, kind=types.MessageType.Info) -> None:
        log.info("%s", message)
        self.window_log_message(types.LogMessageParams(type=kind, message=message))

    def request_diagnostic_refresh(self) -> None:
        if _cap(self.client_capabilities, "workspace", "diagnostics", "refresh_support"):
            self.workspace_diagnostic_refresh(None)

    def report_server_error(self, error, source):
        # a malformed message or a failing handler: log it instead of a popup per keystroke
        if getattr(error, "code", None) == SERVER_CANCELLED:
            return
        log.error("%s: %s", getattr(source, "__name__", source), error)
        try:
            self.window_log_message(types.LogMessageParams(
                type=types.MessageType.Error, message=f"ts-lsp: {error}"))
        except Exception:
            pass

    # ---------------------------------------------------------------- analyses (hover)
    async def analysis(self, uri: str):
        """An object with `.kernels` for the current text: the last lint's when it is of
        this version, else a fresh `analyze_source` in the analysis thread (cached)."""
        snap = self.snapshot(uri)
        if snap is None:
            return None
        report = self.diagnostics.reports.get(uri)
        if report is not None and report.version == snap.version and report.kernels is not None:
            return report
        hit = self._analyses.get(uri)
        if hit is not None and hit[0] == snap.version:
            return hit[1]
        loop = asyncio.get_running_loop()
        try:
            result = await loop.run_in_executor(self.analysis_executor, self.engine.analyze,
                                                snap.source, snap.path)
        except EngineUnavailable as exc:
            self.show_problem(f"ts-lsp: {exc}", types.MessageType.Error)
            return None
        except Exception:
            log.exception("analysing %s failed", uri)
            return None
        self._analyses[uri] = (snap.version, result)
        return result

    def facts(self, uri: str) -> Optional[LineFacts]:
        doc = self._doc(uri)
        if doc is None:
            return None
        hit = self._facts.get(uri)
        if hit is None or hit[0] != doc.version:
            hit = self._facts[uri] = (doc.version, line_facts(doc.source))
        return hit[1]

    def forget(self, uri: str) -> None:
        """A closed document: drop its analyses and the engine's incremental cache."""
        self._analyses.pop(uri, None)
        self._facts.pop(uri, None)
        drop = getattr(self.engine, "forget", None)
        if drop is not None:
            drop(to_fs_path(uri) if uri.startswith("file:") else None)

    def shutdown(self):
        self.lint_executor.shutdown(wait=False, cancel_futures=True)
        self.analysis_executor.shutdown(wait=False, cancel_futures=True)
        super().shutdown()


# =================================================================== handlers

def create_server(engine: Optional[Engine] = None) -> TsLanguageServer:
    server = TsLanguageServer(engine)

    @server.feature(types.INITIALIZE)
    def initialize(ls: TsLanguageServer, params: types.InitializeParams):
        ls.store.set_initialization(params.initialization_options)
        ls.pull_diagnostics = _cap(params.capabilities, "text_document", "diagnostic") is not None
        log.info("client %s: %s diagnostics", _cap(params, "client_info", "name"),
                 "pull" if ls.pull_diagnostics else "push")

    @server.feature(types.INITIALIZED)
    async def initialized(ls: TsLanguageServer, params: types.InitializedParams):
        await _register_watchers(ls)
        changed = await ls.fetch_configuration()
        ls.settings_for(None)              # report bad initializationOptions at once
        loop = asyncio.get_running_loop()
        loop.run_in_executor(ls.lint_executor, _warm_up, ls.engine)
        if changed and ls.open_uris():
            ls.diagnostics.settings_changed()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TsLanguageServer, params: types.DidOpenTextDocumentParams):
        ls.diagnostics.opened(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: TsLanguageServer, params: types.DidChangeTextDocumentParams):
        ls.diagnostics.changed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: TsLanguageServer, params: types.DidSaveTextDocumentParams):
        uri = params.text_document.uri
        if uri.endswith("/pyproject.toml"):
            _config_files_changed(ls)
        else:
            ls.diagnostics.saved(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TsLanguageServer, params: types.DidCloseTextDocumentParams):
        ls.forget(params.text_document.uri)
        ls.diagnostics.closed(params.text_document.uri)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: TsLanguageServer,
                                       params: types.DidChangeConfigurationParams):
        if _cap(ls.client_capabilities, "workspace", "configuration"):
            changed = await ls.fetch_configuration()
        else:
            changed = ls.store.set_configuration(
                params.settings if isinstance(params.settings, dict) else None, {})
        if changed:
            ls.diagnostics.settings_changed()

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: TsLanguageServer, params: types.DidChangeWatchedFilesParams):
        if any(c.uri.endswith("pyproject.toml") for c in params.changes):
            _config_files_changed(ls)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def did_change_folders(ls: TsLanguageServer, params):
        if await ls.fetch_configuration():
            ls.diagnostics.settings_changed()

    @server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC,
                    types.DiagnosticOptions(identifier="ts", inter_file_dependencies=False,
                                            workspace_diagnostics=False))
    async def document_diagnostic(ls: TsLanguageServer, params: types.DocumentDiagnosticParams):
        return await ls.diagnostics.pull_report(params)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix,
                                                               ca.FIX_ALL_KIND],
                                            resolve_provider=False))
    def code_action(ls: TsLanguageServer, params: types.CodeActionParams):
        uri = params.text_document.uri
        doc = ls._doc(uri)
        if doc is None:
            return None
        wanted = [d for d in params.context.diagnostics if d.source == "ts"]
        if not wanted and not params.context.only:
            return None
        report = ls.diagnostics.reports.get(uri)
        items = report.items if report is not None and report.version == doc.version else []
        return ca.code_actions(
            uri, doc.version, LineIndex(doc.source, ls.codec()), params.context,
            facts=ls.facts(uri) if wanted else None, report_items=items,
            report_version=report.version if report is not None else None,
            document_changes=ls.document_changes) or None

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: TsLanguageServer, params: types.HoverParams):
        return await _hover(ls, params.text_document.uri, params.position)

    @server.command(SHOW_SCHEDULE)
    async def show_schedule(ls: TsLanguageServer, *args):
        return await _show_schedule(ls, list(args))

    return server


# =================================================================== handler bodies

def _warm_up(engine: Engine) -> None:
    """Import the engine and the rule catalogue before the first edit (in the lint thread)."""
    try:
        ensure_catalogue()
        engine.api()
    except Exception as exc:   # reported on the first lint
        log.info("engine warm-up: %s", exc)


def _config_files_changed(ls: TsLanguageServer) -> None:
    ls.engine.invalidate_config()
    ls.diagnostics.settings_changed()


async def _register_watchers(ls: TsLanguageServer) -> None:
    if not _cap(ls.client_capabilities, "workspace", "did_change_watched_files",
                "dynamic_registration"):
        return
    opts = types.DidChangeWatchedFilesRegistrationOptions(
        watchers=[types.FileSystemWatcher(glob_pattern="**/pyproject.toml")])
    try:
        await asyncio.wait_for(ls.client_register_capability_async(types.RegistrationParams(
            registrations=[types.Registration(id="ts-pyproject",
                                              method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                                              register_options=opts)])), 10)
    except Exception as exc:
        log.info("could not watch pyproject.toml files: %s", exc)


async def _hover(ls: TsLanguageServer, uri: str, position: types.Position):
    doc = ls._doc(uri)
    if doc is None:
        return None
    index = LineIndex(doc.source, ls.codec())
    line1, col = index.code_point_column(position)
    text = index.line_text(line1 - 1)
    settings = ls.settings_for(uri)

    def reply(markdown: str, rng: Optional[types.Range] = None) -> types.Hover:
        if ls.markdown_hover:
            return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, markdown), rng)
        return types.Hover(types.MarkupContent(types.MarkupKind.PlainText,
                                               hv.to_plaintext(markdown)), rng)

    code = code_at(text, line1, col, ls.facts(uri) if "#" in text else None)
    if code is not None:
        return reply(hv.render_rule(code, rule(code), settings.rule_url(code)))

    analysis = await ls.analysis(uri)
    kernels = getattr(analysis, "kernels", None) or []
    target = hv.find_target(kernels, line1, col, hv.word_at(text, col))
    if target is None:
        return None
    rng = None
    if target.kind == "step":
        rng = to_range(target.step.range, index)
    return reply(hv.render_target(target), rng)


def _schedule_args(args: List[Any]) -> Tuple[Optional[str], Optional[types.Position]]:
    uri, pos = None, None
    for a in args:
        if isinstance(a, str) and uri is None:
            uri = a
        elif isinstance(a, dict):
            if "textDocument" in a:
                uri = uri or (a["textDocument"] or {}).get("uri")
            if "uri" in a:
                uri = uri or a["uri"]
            p = a.get("position", a if "line" in a else None)
            if isinstance(p, dict) and "line" in p:
                pos = types.Position(int(p["line"]), int(p.get("character", 0)))
    return uri, pos


async def _show_schedule(ls: TsLanguageServer, args: List[Any]) -> Optional[str]:
    uri, pos = _schedule_args(args)
    if uri is None:
        uris = ls.open_uris()
        uri = uris[0] if len(uris) == 1 else None
    if uri is None or ls._doc(uri) is None:
        ls.show_problem("ts.showSchedule: pass the URI of an open document (and a position)")
        return None
    analysis = await ls.analysis(uri)
    kernels = getattr(analysis, "kernels", None) or []
    line1, col = (None, 0)
    if pos is not None:
        doc = ls._doc(uri)
        line1, col = LineIndex(doc.source, ls.codec()).code_point_column(pos)
    kernel = sch.kernel_at(kernels, line1, col)
    if kernel is None:
        where = "here" if kernels else "in this file"
        ls.window_show_message(types.ShowMessageParams(
            type=types.MessageType.Info, message=f"ts: no TaskManager {where}"))
        return None
    return sch.schedule_text(kernel)
