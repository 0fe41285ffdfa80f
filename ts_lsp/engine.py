"""The ts_lint engine, in-process, behind one small adapter.

`ts_lint.api` is imported lazily (on the first lint), so `import ts_lsp` stays light and a
missing or broken engine becomes a message instead of a crash. Per file, the project's
`[tool.ts-lint]` (via `ts_lint.config.ConfigResolver`) is combined with the editor's
settings the way ts-lint's command line combines with the file: the editor's `select` /
`ignore` are the top layer, `explainUnknown` / `checker` are or-ed / and-ed with the file's.

Everything here runs in a worker thread; it must not touch the pygls workspace.
"""
from __future__ import annotations

import importlib
import inspect
import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from .settings import Settings

__all__ = ["Engine", "LintResult", "EngineUnavailable", "ensure_catalogue", "rule"]

log = logging.getLogger(__name__)

_catalogue_lock = threading.Lock()
_catalogue_ready = False


def ensure_catalogue() -> None:
    """Loads the rule catalogue once, under a lock.

    `ts_runtime.rules.registry.load_all` marks itself loaded before its imports finish, so
    a second thread calling it meanwhile sees a partial catalogue; the server has two
    worker threads and the event loop, so the first load is serialised here.
    """
    global _catalogue_ready
    if _catalogue_ready:
        return
    with _catalogue_lock:
        if not _catalogue_ready:
            from ts_runtime.rules.registry import load_all
            load_all()
            _catalogue_ready = True


def rule(code: str):
    """The Rule class of `code` (None when unknown)."""
    ensure_catalogue()
    from ts_runtime.rules.registry import get
    return get(code)


class EngineUnavailable(Exception):
    """ts_lint.api cannot be imported (not installed yet, or broken)."""


@dataclass
class LintResult:
    diagnostics: list
    problems: List[str] = field(default_factory=list)   # config errors to show once
    kernels: Optional[list] = None                       # KernelModels, when analysed


@dataclass(frozen=True)
class FileOptions:
    """What applies to one file after combining editor settings and pyproject."""
    enabled: Callable[[str], bool]
    explain_unknown: bool
    checker: bool
    settings: Any = None            # a ts_lint.config.Settings when ts_lint.config exists


class Engine:
    MAX_CACHED_DOCUMENTS = 8

    def __init__(self, api_module: str = "ts_lint.api"):
        self.api_module = api_module
        self._api = None
        self._lock = threading.Lock()
        self._resolvers: Dict[Any, Any] = {}
        self._caches: Dict[str, Any] = {}       # document path -> AnalysisCache

    # ---------------------------------------------------------------- loading
    def api(self):
        if self._api is None:
            with self._lock:
                if self._api is None:
                    try:
                        self._api = importlib.import_module(self.api_module)
                    except Exception as exc:   # ImportError, or a bug at import time
                        raise EngineUnavailable(
                            f"the ts_lint engine ({self.api_module}) cannot be imported: "
                            f"{type(exc).__name__}: {exc}") from exc
        return self._api

    # ---------------------------------------------------------------- configuration
    def invalidate_config(self) -> None:
        """Forget cached pyproject lookups (a pyproject.toml changed)."""
        with self._lock:
            self._resolvers.clear()

    def file_options(self, path: Optional[str], settings: Settings,
                     root: Optional[str] = None) -> Tuple[FileOptions, List[str]]:
        problems: List[str] = []
        try:
            cfg = importlib.import_module("ts_lint.config")
        except Exception:
            cfg = None
        if cfg is None:
            return self._plain_options(settings), problems
        try:
            sel = None if settings.select is None else _prefixes(settings.select)
            cli = cfg.CliOverrides(select=sel, ignore=_prefixes(settings.ignore),
                                   explain_unknown=settings.explain_unknown,
                                   no_checker=not settings.checker)
            key = (cli, root)
            with self._lock:
                resolver = self._resolvers.get(key)
                if resolver is None:
                    resolver = cfg.ConfigResolver(cli, default_root=Path(root) if root else None)
                    self._resolvers[key] = resolver
            target = Path(path) if path else Path(root or ".") / "untitled.py"
            try:
                s = resolver.settings(target)
            except cfg.ConfigError as exc:
                problems.append(f"ts: {exc}; ignoring that pyproject.toml")
                s = cfg.ConfigResolver(cli, isolated=True,
                                       default_root=Path(root) if root else None).settings(target)
            return FileOptions(enabled=s.enabled, explain_unknown=s.explain_unknown,
                               checker=s.checker, settings=s), problems
        except Exception as exc:   # never let configuration stop linting
            log.exception("reading the ts-lint configuration failed")
            problems.append(f"ts: reading [tool.ts-lint] failed ({exc}); using the defaults")
            return self._plain_options(settings), problems

    @staticmethod
    def _plain_options(settings: Settings) -> FileOptions:
        select = _prefixes(settings.select if settings.select is not None else ("TS",))
        ignore = _prefixes(settings.ignore)

        def enabled(code: str) -> bool:
            sel = max((len(p) for p in select if code.startswith(p)), default=-1)
            ign = max((len(p) for p in ignore if code.startswith(p)), default=-1)
            return sel >= 0 and sel > ign

        return FileOptions(enabled, settings.explain_unknown, settings.checker)

    # ---------------------------------------------------------------- running
    def lint(self, source: str, path: Optional[str], settings: Settings,
             root: Optional[str] = None) -> LintResult:
        """Findings after selection and `# noqa`, plus the kernel models when available.

        Uses ts-lint's own per-file pipeline (`ts_lint.cli.check_source`: analysis ->
        select / ignore / per-file-ignores -> `# noqa` -> TS960), so the editor shows
        exactly what `ts-lint` prints; falls back to `lint_source` + the same steps done
        here when that pipeline is not available.
        """
        ensure_catalogue()
        api = self.api()
        opts, problems = self.file_options(path, settings, root)
        name = path or "<string>"
        check = _optional("ts_lint.cli", "check_source")
        if check is not None and opts.settings is not None:
            kw: Dict[str, Any] = {}
            cache = self.analysis_cache(name, api)
            if cache is not None and "cache" in _parameters(check):
                kw["cache"] = cache
            res = check(source, name, opts.settings, api=api,
                        analyze=hasattr(api, "analyze_source"), **kw)
            kernels = list(res.kernels) if hasattr(api, "analyze_source") and res.kernels is not None \
                else None
            return LintResult(_sorted(res.diagnostics), problems, kernels)
        fn = api.lint_source
        kwargs: Dict[str, Any] = {"explain_unknown": opts.explain_unknown,
                                  "run_checker": opts.checker}
        params = _parameters(fn)
        kwargs = {k: v for k, v in kwargs.items() if k in params or _has_var_kw(fn)}
        diags = [d for d in fn(source, name, **kwargs) if opts.enabled(d.code)]
        sup = _optional("ts_lint.suppress", "parse_suppressions")
        apply = _optional("ts_lint.suppress", "apply_suppressions")
        if sup is not None and apply is not None:
            diags = apply(diags, sup(source), name, enabled=opts.enabled)
        return LintResult(_sorted(diags), problems)

    def analysis_cache(self, name: str, api=None):
        """The incremental-analysis cache of one document (`ts_lint.api.AnalysisCache`):
        re-linting an edited file re-analyses only the statements whose text changed and
        what depends on them (same findings as a full lint). None for an engine without it."""
        api = api or self.api()
        factory = getattr(api, "AnalysisCache", None)
        if factory is None:
            return None
        with self._lock:
            cache = self._caches.pop(name, None)
            if cache is None:
                cache = factory()
            self._caches[name] = cache           # most recently used last
            while len(self._caches) > self.MAX_CACHED_DOCUMENTS:
                self._caches.pop(next(iter(self._caches)))
            return cache

    def forget(self, path: Optional[str]) -> None:
        """Drops the incremental-analysis cache of a closed document."""
        with self._lock:
            self._caches.pop(path or "<string>", None)

    def analyze(self, source: str, path: Optional[str]):
        """`ts_lint.api.analyze_source` (diagnostics, kernels, unknowns), or None if missing."""
        ensure_catalogue()
        api = self.api()
        fn = getattr(api, "analyze_source", None)
        if fn is None:
            return None
        kwargs = {"run_checker": False} if "run_checker" in _parameters(fn) else {}
        return fn(source, path or "<string>", **kwargs)


def _sorted(diags) -> list:
    return sorted(diags, key=lambda d: (d.range.line, d.range.column, d.code, d.message))


def _optional(module: str, attr: str):
    try:
        return getattr(importlib.import_module(module), attr, None)
    except Exception:
        return None


def _prefixes(codes) -> tuple:
    return tuple("" if c == "ALL" else c for c in codes)


def _parameters(fn) -> set:
    try:
        return set(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return set()


def _has_var_kw(fn) -> bool:
    try:
        return any(p.kind is inspect.Parameter.VAR_KEYWORD
                   for p in inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
