"""When to lint, where results go (push or pull, never both) and when they are dropped.

* **Push** (the client did not announce `textDocument.diagnostic`): open and save lint at
  once, changes lint `debounceMs` after the last keystroke (`lintOn: "type"`) or not at all
  (`lintOn: "save"`); results are published with the version they belong to; closing a
  document publishes an empty list.
* **Pull** (the client announced `textDocument.diagnostic`, e.g. VS Code, Neovim 0.10+):
  nothing is ever published. Open/change/save still precompute in the background through
  the same debouncer, so a `textDocument/diagnostic` request usually finds its report
  ready; otherwise it waits for the pending run or lints there and then. The result id is
  `<version>.<generation>`, so an unchanged document answers "unchanged".
* **Stale results are dropped.** A run snapshots (text, version) before linting in a
  worker thread; when it finishes and the document is closed or at another version, the
  result is discarded (push) or the request fails with `ServerCancelled` +
  `retriggerRequest` (pull), and the newer run reports instead.
* A settings or pyproject change bumps the *generation*: every open document is linted
  again (push) or the client is asked to pull again (`workspace/diagnostic/refresh`).
"""
from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, List, Optional

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from ..convert import Context, LineIndex, same_file, to_diagnostic
from ..debounce import KeyedDebouncer
from ..engine import EngineUnavailable

if TYPE_CHECKING:  # pragma: no cover
    from ..server import TsLanguageServer

__all__ = ["DiagnosticsFeature", "Report", "SERVER_CANCELLED"]

log = logging.getLogger(__name__)

SERVER_CANCELLED = -32802


@dataclass
class Report:
    uri: str
    version: Optional[int]
    generation: int
    diagnostics: list                     # ts Diagnostics
    items: List[types.Diagnostic]         # the same, converted for this client
    saves: int = 0                        # how many saves the document had then
    kernels: Optional[list] = None        # KernelModels of the same run (for hovers)

    @property
    def result_id(self) -> str:
        return f"{self.version}.{self.generation}"


@dataclass
class Stats:
    runs: int = 0
    dropped: int = 0
    published: int = 0
    pulls: int = 0


class DiagnosticsFeature:
    def __init__(self, server: "TsLanguageServer", executor: ThreadPoolExecutor):
        self.server = server
        self.executor = executor
        self.debouncer = KeyedDebouncer(max_concurrent=4)
        self.reports: Dict[str, Report] = {}
        self.generation = 0
        self.stats = Stats()
        self._failed: Dict[str, str] = {}
        self._last_change: Dict[str, float] = {}
        self._burst: Dict[str, bool] = {}      # the last edit came within debounceMs of the one before
        self._saves: Dict[str, int] = {}

    # ---------------------------------------------------------------- mode
    @property
    def pull(self) -> bool:
        return self.server.pull_diagnostics

    # ---------------------------------------------------------------- events
    def opened(self, uri: str) -> None:
        if not self.pull:
            self._schedule(uri, 0.0)

    def changed(self, uri: str) -> None:
        """Leading- and trailing-edge debounce: an edit after a quiet spell (no edit for
        `debounceMs`, no lint queued or running) is linted at once, so a single edit shows
        its diagnostics in engine time; an edit inside a burst restarts the delay, so the
        burst is linted once, `debounceMs` after its last edit."""
        now = asyncio.get_running_loop().time()
        prev = self._last_change.get(uri)
        self._last_change[uri] = now
        settings = self.server.settings_for(uri)
        busy = self.debouncer.pending(uri) or self.debouncer.lock(uri).locked()
        quiet = (prev is None or now - prev >= settings.debounce_s) and not busy
        self._burst[uri] = not quiet
        if settings.lint_on == "type" and not self.pull:
            self._schedule(uri, 0.0 if quiet else settings.debounce_s)

    def saved(self, uri: str) -> None:
        self._saves[uri] = self._saves.get(uri, 0) + 1
        if self.pull:
            if self.server.settings_for(uri).lint_on == "save":
                self.server.request_diagnostic_refresh()
        else:
            self._schedule(uri, 0.0)

    def closed(self, uri: str) -> None:
        self.debouncer.forget(uri)
        self.reports.pop(uri, None)
        self._failed.pop(uri, None)
        self._last_change.pop(uri, None)
        self._burst.pop(uri, None)
        self._saves.pop(uri, None)
        if not self.pull:
            self.server.publish(uri, [], None)

    def settings_changed(self) -> None:
        """Settings or a pyproject.toml changed: every result is out of date."""
        self.generation += 1
        if self.pull:
            self.server.request_diagnostic_refresh()
            return
        for uri in self.server.open_uris():
            self._schedule(uri, 0.0)

    def _schedule(self, uri: str, delay: float) -> None:
        self.debouncer.schedule(uri, delay, lambda: self._run(uri))

    # ---------------------------------------------------------------- running
    async def _run(self, uri: str) -> None:
        """The debounced job: lint the current text, then publish (push) or keep (pull)."""
        before = self.reports.get(uri)
        report = await self._lint_current(uri)
        if report is not None and report is not before and not self.pull:
            self.server.publish(uri, report.items, report.version)
            self.stats.published += 1

    async def _lint_current(self, uri: str) -> Optional[Report]:
        snap = self.server.snapshot(uri)
        if snap is None:
            return None
        have = self.reports.get(uri)
        if have is not None and have.version == snap.version and have.generation == self.generation:
            have.saves = self._saves.get(uri, 0)
            return have                       # this very text is linted already
        generation = self.generation
        settings = self.server.settings_for(uri)
        loop = asyncio.get_running_loop()
        self.stats.runs += 1
        try:
            result = await loop.run_in_executor(
                self.executor, self.server.engine.lint, snap.source, snap.path, settings, snap.root)
        except EngineUnavailable as exc:
            self._failed[uri] = "unavailable"
            self.server.show_problem(f"ts-lsp: {exc}", types.MessageType.Error)
            return None
        except Exception as exc:  # an engine bug on this text: say so once, keep serving
            log.exception("linting %s failed", uri)
            key = f"{type(exc).__name__}: {exc}"
            if self._failed.get(uri) != key:
                self._failed[uri] = key
                self.server.log(f"ts-lsp: linting {snap.path or uri} failed: {key}",
                                types.MessageType.Error)
            return None
        self._failed.pop(uri, None)
        for problem in result.problems:
            self.server.show_problem(problem, types.MessageType.Warning)
        current = self.server.snapshot_version(uri)
        if current is False or current != snap.version or generation != self.generation:
            self.stats.dropped += 1
            log.debug("dropping stale diagnostics of %s (v%s, now %s)", uri, snap.version, current)
            return None
        ctx = Context(uri=uri, path=snap.path, index=LineIndex(snap.source, self.server.codec()),
                      rule_url=settings.rule_url, related_support=self.server.related_support,
                      other_index=self.server.index_for_path)
        # a finding located in an imported module of the user's (code of that module the
        # document's kernel runs) belongs to that file's ranges, not to this document's
        own = [d for d in result.diagnostics if same_file(d.range.path, snap.path)]
        items = [to_diagnostic(d, ctx) for d in own]
        for item in items:
            item.data["version"] = snap.version      # fixes are edits of this version
        report = Report(uri, snap.version, generation, own, items,
                        saves=self._saves.get(uri, 0), kernels=result.kernels)
        self.reports[uri] = report
        return report

    # ---------------------------------------------------------------- pull
    def _usable(self, report: Optional[Report], version, lint_on: str, uri: str) -> bool:
        if report is None or report.generation != self.generation:
            return False
        if lint_on == "save":
            return report.saves == self._saves.get(uri, 0)
        return report.version == version

    async def pull_report(self, params: types.DocumentDiagnosticParams):
        """textDocument/diagnostic: the report of the current text, linted on demand.

        In `lintOn: "type"` mode a request that comes within `debounceMs` of an edit that
        was itself part of a burst (within `debounceMs` of the edit before) waits for the
        rest of that delay; an isolated edit is linted at once; if the text changes meanwhile (or while it is
        linted) the request fails with ServerCancelled and `retriggerRequest: true`, and
        the client asks again for the newer text. In `"save"` mode the report of the
        last opened or saved text is answered until the next save.
        """
        uri = params.text_document.uri
        self.stats.pulls += 1
        snap = self.server.snapshot(uri)
        if snap is None:                       # not open: nothing to say about it
            return types.RelatedFullDocumentDiagnosticReport(items=[], result_id="closed")
        settings = self.server.settings_for(uri)
        report = self.reports.get(uri)
        if not self._usable(report, snap.version, settings.lint_on, uri):
            if settings.lint_on == "type":
                loop = asyncio.get_running_loop()
                wait = self._last_change.get(uri, 0.0) + settings.debounce_s - loop.time()
                if wait > 0 and self._burst.get(uri, False):
                    await asyncio.sleep(wait)
                    if self.server.snapshot_version(uri) != snap.version:
                        raise _retrigger()
            async with self.debouncer.lock(uri):
                report = self.reports.get(uri)
                if not self._usable(report, self.server.snapshot_version(uri),
                                    settings.lint_on, uri):
                    report = await self._lint_current(uri)
        current = self.server.snapshot_version(uri)
        if current is False:
            return types.RelatedFullDocumentDiagnosticReport(items=[], result_id="closed")
        if report is None:
            if self._failed.get(uri) is not None and current == snap.version:
                # the engine failed on this text (already logged): report nothing rather
                # than asking the client to retry forever
                return types.RelatedFullDocumentDiagnosticReport(items=[], result_id="failed")
            raise _retrigger()
        if settings.lint_on == "type" and report.version != current:
            raise _retrigger()
        if params.previous_result_id == report.result_id:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=report.result_id)
        return types.RelatedFullDocumentDiagnosticReport(items=report.items,
                                                         result_id=report.result_id)


def _retrigger() -> JsonRpcException:
    return JsonRpcException(message="the document changed while it was linted",
                            code=SERVER_CANCELLED, data={"retriggerRequest": True})
