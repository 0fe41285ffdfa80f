"""Typed editor settings of ts-lsp, with defaults; a bad value is reported and replaced.

Where settings come from, lowest precedence first (like esbonio's `_configuration.py`):

1. the defaults below;
2. `initializationOptions` of the `initialize` request (a flat object, or one nested under
   `"ts"` or `"settings"`);
3. `workspace/configuration`, section `ts`, global scope;
4. `workspace/configuration`, section `ts`, scoped to the document's workspace folder.

Each key is validated on its own: a value of the wrong type or out of range produces one
message (the server shows it with `window/showMessage`) and that key keeps its default;
the other keys still apply. Unknown keys are reported once too. `server` (the client's
`ts.server.command` / `ts.server.args`) belongs to the editor extension and is ignored.

Then, per file, `[tool.ts-lint]` of the nearest `pyproject.toml` (read by
`ts_lint.config`) applies *under* the editor's `select` / `ignore`, the way ts-lint's
command-line options apply over the file: `select` / `ignore` given here behave like
`--select` / `--ignore`. Left at their defaults, the project's configuration decides.

| key | type | default | meaning |
|---|---|---|---|
| `select` | list of codes or prefixes, or null | null | like `ts-lint --select` (null: the project's) |
| `ignore` | list of codes or prefixes | [] | like `ts-lint --ignore` |
| `lintOn` | `"type"` or `"save"` | `"type"` | lint while typing (debounced) or on open/save only |
| `debounceMs` | integer 0-10000 | 300 | delay after the last keystroke before linting |
| `docsBaseUrl` | URL or null | null: `docs/rules.md` of this checkout | rule links are `<url>#ts201` |
| `explainUnknown` | bool | false | also report TS95x "cannot evaluate statically" infos |
| `checker` | bool | true | run the exhaustive interleaving checker (TS80x) |
"""
from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Tuple

__all__ = ["Settings", "parse_settings", "merge_raw", "extract_options", "default_docs_url",
           "SECTION", "KEYS"]

SECTION = "ts"
_SELECTOR = re.compile(r"TS\d{0,3}|ALL")
LINT_ON = ("type", "save")
MAX_DEBOUNCE_MS = 10_000
_CLIENT_ONLY = ("server", "trace")


@dataclass(frozen=True)
class Settings:
    """The editor settings that apply to one document."""
    select: Optional[Tuple[str, ...]] = None
    ignore: Tuple[str, ...] = ()
    lint_on: str = "type"
    debounce_ms: int = 300
    docs_base_url: Optional[str] = None
    explain_unknown: bool = False
    checker: bool = True

    @property
    def debounce_s(self) -> float:
        return self.debounce_ms / 1000.0

    def docs_url(self) -> Optional[str]:
        """The base of rule links (a configured one, else the local docs page if present)."""
        return self.docs_base_url or default_docs_url()

    def rule_url(self, code: str) -> Optional[str]:
        base = self.docs_url()
        if not base:
            return None
        return f"{base.split('#', 1)[0]}#{code.lower()}"


# camelCase key -> (dataclass field, validator returning (value, error or None))

def _codes(value: Any, key: str, allow_null: bool):
    if value is None and allow_null:
        return None, None
    if isinstance(value, str):   # "TS2,TS3" is accepted too
        value = [v for v in re.split(r"[,\s]+", value) if v]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        return _BAD, f"'{key}' must be a list of rule codes such as [\"TS2\", \"TS801\"]"
    out = []
    for v in value:
        code = v.strip().upper()
        if not _SELECTOR.fullmatch(code):
            return _BAD, (f"'{key}': invalid rule selector {v!r} (expected 'TS' followed by up "
                          "to three digits, or 'ALL')")
        out.append(code)
    return tuple(out), None


def _bool(value: Any, key: str):
    if isinstance(value, bool):
        return value, None
    return _BAD, f"'{key}' must be true or false, got {value!r}"


def _lint_on(value: Any, key: str):
    if isinstance(value, str) and value.lower() in LINT_ON:
        return value.lower(), None
    return _BAD, f"'{key}' must be \"type\" or \"save\", got {value!r}"


def _debounce(value: Any, key: str):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return _BAD, f"'{key}' must be a number of milliseconds, got {value!r}"
    if not 0 <= value <= MAX_DEBOUNCE_MS:
        return _BAD, f"'{key}' must be between 0 and {MAX_DEBOUNCE_MS}, got {value!r}"
    return int(value), None


def _url(value: Any, key: str):
    if value is None or value == "":
        return None, None
    if isinstance(value, str) and re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", value):
        return value, None
    return _BAD, f"'{key}' must be a URL such as https://example.org/rules.md, got {value!r}"


_BAD = object()

KEYS: Dict[str, Tuple[str, Any]] = {
    "select": ("select", lambda v, k: _codes(v, k, True)),
    "ignore": ("ignore", lambda v, k: _codes(v, k, False)),
    "lintOn": ("lint_on", _lint_on),
    "debounceMs": ("debounce_ms", _debounce),
    "docsBaseUrl": ("docs_base_url", _url),
    "explainUnknown": ("explain_unknown", _bool),
    "checker": ("checker", _bool),
}
# snake_case and kebab-case spellings are accepted as well (ts-lint's pyproject uses kebab)
_ALIASES = {}
for _camel, (_field, _) in KEYS.items():
    _ALIASES[_field] = _camel
    _ALIASES[_field.replace("_", "-")] = _camel


def extract_options(raw: Any) -> Dict[str, Any]:
    """The ts settings inside an `initializationOptions` or `didChangeConfiguration` payload."""
    if not isinstance(raw, Mapping):
        return {}
    for nest in (SECTION, "settings"):
        inner = raw.get(nest)
        if isinstance(inner, Mapping):
            if nest == "settings" and isinstance(inner.get(SECTION), Mapping):
                return dict(inner[SECTION])
            return dict(inner)
    return dict(raw)


def merge_raw(*layers: Any) -> Dict[str, Any]:
    """Later layers override earlier ones key by key (non-mappings are skipped)."""
    out: Dict[str, Any] = {}
    for layer in layers:
        if isinstance(layer, Mapping):
            for k, v in layer.items():
                out[_ALIASES.get(k, k)] = v
    return out


def parse_settings(raw: Any, where: str = "settings") -> Tuple[Settings, List[str]]:
    """Settings from a raw mapping, and one message per rejected key (which keeps its default)."""
    problems: List[str] = []
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        return Settings(), [f"ts {where}: expected an object, got {type(raw).__name__}; "
                            "using the defaults"]
    values = {}
    defaults = Settings()
    for key, value in raw.items():
        camel = _ALIASES.get(key, key)
        if camel in _CLIENT_ONLY:
            continue
        if camel not in KEYS:
            problems.append(f"ts {where}: unknown setting '{key}' (known: {', '.join(KEYS)})")
            continue
        fname, check = KEYS[camel]
        parsed, err = check(value, camel)
        if err is not None:
            default = getattr(defaults, fname)
            shown = list(default) if isinstance(default, tuple) else default
            problems.append(f"ts {where}: {err}; using the default ({_json(shown)})")
            continue
        values[fname] = parsed
    return dataclasses.replace(defaults, **values), problems


def _json(value) -> str:
    import json
    return json.dumps(value)


def default_docs_url() -> Optional[str]:
    """file:// URL of `docs/rules.md` next to the installed package (a checkout or editable
    install), else None: the project has no published docs site to point at."""
    env = os.environ.get("TS_LSP_DOCS_BASE_URL")
    if env:
        return env
    here = Path(__file__).resolve().parent.parent / "docs" / "rules.md"
    if here.parent.is_dir():
        return here.as_uri()
    return None


class SettingsStore:
    """The raw layers (initializationOptions, global and per-folder configuration) and the
    parsed Settings of each combination, with the problems found while parsing them."""

    def __init__(self):
        self.init: Dict[str, Any] = {}
        self.global_: Dict[str, Any] = {}
        self.folders: Dict[str, Dict[str, Any]] = {}
        self._cache: Dict[Optional[str], Tuple[Settings, List[str]]] = {}

    def set_initialization(self, raw: Any) -> None:
        self.init = extract_options(raw)
        self._cache.clear()

    def set_configuration(self, global_raw: Any, folders: Mapping[str, Any]) -> bool:
        """Replaces the workspace/configuration layers; True when they changed."""
        new_global = extract_options(global_raw) if global_raw else {}
        new_folders = {uri.rstrip("/"): extract_options(v) if v else {}
                       for uri, v in folders.items()}
        new_folders = {k: v for k, v in new_folders.items() if v}
        if new_global == self.global_ and new_folders == self.folders:
            return False
        self.global_, self.folders = new_global, new_folders
        self._cache.clear()
        return True

    def folder_of(self, uri: str, folder_uris) -> Optional[str]:
        best = None
        for f in folder_uris:
            f = f.rstrip("/")
            if (uri == f or uri.startswith(f + "/")) and (best is None or len(f) > len(best)):
                best = f
        return best

    def get(self, folder: Optional[str]) -> Tuple[Settings, List[str]]:
        hit = self._cache.get(folder)
        if hit is None:
            raw = merge_raw(self.init, self.global_, self.folders.get(folder) if folder else None)
            hit = self._cache[folder] = parse_settings(raw)
        return hit
