"""`[tool.ts-lint]` in pyproject.toml, rule selection by code prefix, and CLI overrides.

Each file is linted with the configuration of the nearest `pyproject.toml` that has a
`[tool.ts-lint]` table, found by walking up from the file's folder (like ruff; a
pyproject.toml without the table is passed over). Globs in `exclude` and
`per-file-ignores` are relative to the folder of that pyproject.toml.

Selection follows ruff: selectors are code prefixes (`TS`, `TS2`, `TS201`, or `ALL`). A
layer (the config file, then the command line) that has `select` starts afresh; within a
layer the longest matching prefix decides, and on a tie `ignore` wins. Later layers
override earlier ones, so the command line overrides the file.

Keys: select, extend-select, ignore, exclude, per-file-ignores, explain-unknown, checker.
An unknown key, a value of the wrong type, a malformed selector or unreadable TOML is a
`ConfigError` (the CLI exits 2).
"""
from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, Optional, Sequence, Tuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

__all__ = [
    "ConfigError", "Layer", "FileConfig", "Settings", "CliOverrides", "ConfigResolver",
    "parse_selectors", "glob_to_regex", "path_matches", "DEFAULT_EXCLUDE", "KEYS",
]

KEYS = ("select", "extend-select", "ignore", "exclude", "per-file-ignores",
        "explain-unknown", "checker")

# Folders never walked into (like ruff's default `exclude`); explicit files are still linted.
DEFAULT_EXCLUDE = (
    ".bzr", ".direnv", ".eggs", ".git", ".hg", ".mypy_cache", ".nox", ".pants.d",
    ".pytype", ".ruff_cache", ".pytest_cache", ".svn", ".tox", ".venv", "__pypackages__",
    "__pycache__", "_build", "buck-out", "build", "dist", "node_modules", "site-packages",
    "venv",
)

_SELECTOR = re.compile(r"TS\d{0,3}")


class ConfigError(Exception):
    """An invalid configuration or command-line selection (exit status 2)."""


def parse_selectors(values: Iterable[str], where: str) -> Tuple[str, ...]:
    """Validates code prefixes (`TS`, `TS2`, `TS20`, `TS201`, `ALL`); returns them ("" for ALL)."""
    out = []
    for raw in values:
        if not isinstance(raw, str):
            raise ConfigError(f"{where}: expected rule codes as strings, got {raw!r}")
        code = raw.strip().upper()
        if code == "ALL":
            out.append("")
        elif _SELECTOR.fullmatch(code):
            out.append(code)
        else:
            raise ConfigError(f"{where}: invalid rule selector {raw!r} "
                              "(expected 'TS' followed by up to three digits, or 'ALL')")
    return tuple(out)


@dataclass(frozen=True)
class Layer:
    """One level of selection: `select` (None = keep the previous level's set), extend, ignore."""
    select: Optional[Tuple[str, ...]] = None
    extend_select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()

    def apply(self, code: str, state: bool) -> bool:
        if self.select is not None:
            state = False
        sel = max((len(p) for p in (self.select or ()) + self.extend_select if code.startswith(p)),
                  default=-1)
        ign = max((len(p) for p in self.ignore if code.startswith(p)), default=-1)
        if sel > ign:
            return True
        if ign >= 0:
            return False
        return state


DEFAULT_LAYER = Layer(select=("TS",))


@dataclass(frozen=True)
class FileConfig:
    """One `[tool.ts-lint]` table (or the defaults when `path` is None)."""
    root: Path
    path: Optional[Path] = None
    layer: Layer = Layer()
    exclude: Tuple[str, ...] = ()
    per_file_ignores: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    explain_unknown: Optional[bool] = None
    checker: Optional[bool] = None

    def relpath(self, path: Path) -> Optional[str]:
        """`path` relative to the config folder (posix), None when outside it."""
        try:
            return Path(os.path.abspath(path)).relative_to(self.root).as_posix()
        except ValueError:
            return None

    def is_excluded(self, path: Path) -> bool:
        """True when `path` or one of its folders (below the config root) matches `exclude`."""
        if not self.exclude:
            return False
        rel = self.relpath(path)
        if rel is None or rel == ".":
            return False
        return any(path_matches(p, rel, prefixes=True) for p in self.exclude)

    def ignored_codes(self, path: Path) -> Tuple[str, ...]:
        """Code prefixes `per-file-ignores` removes for `path`."""
        rel = self.relpath(path)
        if rel is None:
            return ()
        out: list = []
        for pattern, codes in self.per_file_ignores:
            if path_matches(pattern, rel, prefixes=True):
                out.extend(codes)
        return tuple(out)


@dataclass(frozen=True)
class CliOverrides:
    select: Optional[Tuple[str, ...]] = None
    extend_select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()
    explain_unknown: bool = False
    no_checker: bool = False

    @property
    def layer(self) -> Optional[Layer]:
        if self.select is None and not self.extend_select and not self.ignore:
            return None
        return Layer(self.select, self.extend_select, self.ignore)


@dataclass(frozen=True)
class Settings:
    """What applies to one file: selection layers, per-file ignores, front-end switches."""
    layers: Tuple[Layer, ...] = (DEFAULT_LAYER,)
    per_file_ignores: Tuple[str, ...] = ()
    explain_unknown: bool = False
    checker: bool = True
    config_path: Optional[Path] = None

    def selected(self, code: str) -> bool:
        """Selected by select/extend-select/ignore (before per-file-ignores)."""
        state = False
        for layer in self.layers:
            state = layer.apply(code, state)
        return state

    def enabled(self, code: str) -> bool:
        """Reported for this file: selected and not removed by `per-file-ignores`."""
        if any(code.startswith(p) for p in self.per_file_ignores):
            return False
        return self.selected(code)

    def produced(self, code: str) -> bool:
        """Whether this run could have produced `code` at all (checker / explain switches)."""
        if code.startswith("TS95") and not self.explain_unknown:
            return False
        if not self.checker and _is_checker_code(code):
            return False
        return True


def _is_checker_code(code: str) -> bool:
    try:
        from ts_runtime.rules.registry import get
        rule = get(code)
    except Exception:  # pragma: no cover - the catalogue is always importable
        rule = None
    if rule is not None:
        return rule.phase == "checker"
    return code.startswith("TS80")


# --- globs -------------------------------------------------------------------------------

def glob_to_regex(pattern: str) -> str:
    """gitignore-style glob: `*`, `?`, `[...]` stay in one path part, `**` spans parts."""
    i, n, out = 0, len(pattern), []
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                i += 2
                if i < n and pattern[i] == "/":
                    i += 1
                    out.append("(?:.*/)?")
                else:
                    out.append(".*")
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pattern.find("]", i + 2 if pattern[i + 1:i + 2] in ("!", "^") else i + 1)
            if j < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1:j]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = j
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def path_matches(pattern: str, rel: str, *, prefixes: bool = False) -> bool:
    """Does the posix relative path `rel` match `pattern`?

    A pattern without `/` matches any single part (a file or folder name at any depth); one
    with `/` matches from the root (a leading `/` or `./` is dropped). With `prefixes`, a match
    of any parent folder counts too (`tests` or `tests/fixtures` covers the files below).
    """
    pat = pattern.strip()
    if pat.startswith("./"):
        pat = pat[2:]
    pat = pat.lstrip("/") if pat.startswith("/") else pat
    dir_only = pat.endswith("/")
    pat = pat.rstrip("/")
    if not pat:
        return False
    rx = re.compile(glob_to_regex(pat), re.S)
    parts = rel.split("/")
    if "/" not in pat:
        candidates = parts if prefixes else parts[-1:]
        if dir_only:
            candidates = parts[:-1] if prefixes else []
        return any(rx.fullmatch(p) for p in candidates)
    cands = ["/".join(parts[:k]) for k in range(1, len(parts) + 1)] if prefixes else [rel]
    if dir_only:
        cands = cands[:-1]
    return any(rx.fullmatch(c) for c in cands)


# --- reading pyproject.toml --------------------------------------------------------------

def _str_list(table: dict, key: str, where: str) -> Tuple[str, ...]:
    value = table[key]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        got = repr(value) if isinstance(value, list) else _tname(value)
        raise ConfigError(f"{where}: '{key}' must be a list of strings, got {got}")
    return tuple(value)


def _bool(table: dict, key: str, where: str) -> bool:
    value = table[key]
    if not isinstance(value, bool):
        raise ConfigError(f"{where}: '{key}' must be true or false, got {_tname(value)}")
    return value


def _tname(value) -> str:
    return {str: "a string", int: "an integer", float: "a float", bool: "a boolean",
            list: "a list", dict: "a table"}.get(type(value), type(value).__name__)


def parse_table(table, root: Path, path: Optional[Path], where: str) -> FileConfig:
    """Validates one `[tool.ts-lint]` table."""
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [tool.ts-lint] must be a table")
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        hint = ""
        underscored = unknown[0].replace("_", "-")
        if underscored in KEYS:
            hint = f" (did you mean '{underscored}'?)"
        raise ConfigError(f"{where}: unknown option '{unknown[0]}'{hint}; "
                          f"valid options: {', '.join(KEYS)}")
    select = extend = ignore = None
    if "select" in table:
        select = parse_selectors(_str_list(table, "select", where), f"{where}: 'select'")
    if "extend-select" in table:
        extend = parse_selectors(_str_list(table, "extend-select", where), f"{where}: 'extend-select'")
    if "ignore" in table:
        ignore = parse_selectors(_str_list(table, "ignore", where), f"{where}: 'ignore'")
    exclude = _str_list(table, "exclude", where) if "exclude" in table else ()
    pfi = []
    if "per-file-ignores" in table:
        value = table["per-file-ignores"]
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: 'per-file-ignores' must be a table of glob = [codes], "
                              f"got {_tname(value)}")
        for pattern, codes in value.items():
            if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
                got = repr(codes) if isinstance(codes, list) else _tname(codes)
                raise ConfigError(f"{where}: 'per-file-ignores' entry {pattern!r} must be a "
                                  f"list of strings, got {got}")
            pfi.append((pattern, parse_selectors(codes, f"{where}: 'per-file-ignores' {pattern!r}")))
    explain = _bool(table, "explain-unknown", where) if "explain-unknown" in table else None
    checker = _bool(table, "checker", where) if "checker" in table else None
    return FileConfig(root=root, path=path, layer=Layer(select, extend or (), ignore or ()),
                      exclude=exclude, per_file_ignores=tuple(pfi), explain_unknown=explain,
                      checker=checker)


def load_pyproject(path: Path) -> Optional[FileConfig]:
    """The `[tool.ts-lint]` table of `path`, or None when it has none."""
    where = _display(path)
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: invalid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read: {exc.strerror or exc}") from None
    tool = data.get("tool")
    if not isinstance(tool, dict) or "ts-lint" not in tool:
        return None
    return parse_table(tool["ts-lint"], Path(os.path.abspath(path)).parent, path, where)


def _display(path: Path) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:  # pragma: no cover - other drive on Windows
        return str(path)
    return str(path) if rel.startswith("..") else rel


class ConfigResolver:
    """Finds and caches the configuration that applies in each folder."""

    def __init__(self, cli: CliOverrides = CliOverrides(), *, isolated: bool = False,
                 default_root: Optional[Path] = None):
        self.cli = cli
        self.isolated = isolated
        self.default = FileConfig(root=Path(os.path.abspath(default_root or os.getcwd())))
        self._by_dir: Dict[Path, FileConfig] = {}

    def for_dir(self, folder: Path) -> FileConfig:
        folder = Path(os.path.abspath(folder))
        if self.isolated:
            return self.default
        chain = []
        cur: Optional[Path] = folder
        found = self.default
        while cur is not None:
            if cur in self._by_dir:
                found = self._by_dir[cur]
                break
            chain.append(cur)
            candidate = cur / "pyproject.toml"
            if candidate.is_file():
                cfg = load_pyproject(candidate)
                if cfg is not None:
                    found = cfg
                    break
            parent = cur.parent
            cur = parent if parent != cur else None
        for d in chain:
            self._by_dir[d] = found
        return found

    def for_file(self, path: Path) -> FileConfig:
        return self.for_dir(Path(os.path.abspath(path)).parent)

    def settings(self, path: Path) -> Settings:
        cfg = self.for_file(path)
        layers = [DEFAULT_LAYER]
        if cfg.layer != Layer():
            layers.append(cfg.layer)
        if self.cli.layer is not None:
            layers.append(self.cli.layer)
        explain = self.cli.explain_unknown or bool(cfg.explain_unknown)
        checker = (not self.cli.no_checker) and (cfg.checker is not False)
        return Settings(layers=tuple(layers), per_file_ignores=cfg.ignored_codes(path),
                        explain_unknown=explain, checker=checker, config_path=cfg.path)


def split_codes(values: Optional[Sequence[str]], option: str) -> Optional[Tuple[str, ...]]:
    """`--select TS2,TS3 --select TS4` -> validated prefixes (None when not given)."""
    if values is None:
        return None
    items = [c for v in values for c in v.split(",") if c.strip()]
    return parse_selectors(items, option)
