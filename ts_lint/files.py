"""Which files `ts-lint PATH...` lints: recursive `*.py`, honouring .gitignore and `exclude`.

* A file named on the command line is linted whatever its suffix, unless the `exclude` of
  its configuration matches it (so pre-commit, which passes file names, honours `exclude`);
  .gitignore does not apply to named files (like ruff).
* A folder is walked recursively for `*.py`. Folders in `DEFAULT_EXCLUDE` (`.git`, `.venv`,
  `__pycache__`, `build`, ...) and symlinked folders are not entered. Inside a git work
  tree, ignored entries are asked of `git check-ignore --stdin` (one call per folder depth),
  so `.gitignore` files, `.git/info/exclude` and the global excludes file all count, and
  tracked files are never ignored. Outside git (or without a git binary), `.gitignore`
  files of the walked folders and their parents are read by `GitIgnoreFile`, a small parser
  (comments, `!` negation, trailing `/` for folders, leading or middle `/` anchors,
  `*`, `?`, `[...]`, `**`).
"""
from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Set

from .config import DEFAULT_EXCLUDE, ConfigResolver, glob_to_regex

__all__ = ["discover", "GitIgnoreFile", "GitIgnore", "PathError"]


class PathError(Exception):
    """A command-line path that does not exist (exit status 2)."""


# --- the fallback .gitignore parser -------------------------------------------------------

@dataclass(frozen=True)
class _Pattern:
    regex: "re.Pattern"
    negate: bool
    dir_only: bool
    anchored: bool


class GitIgnoreFile:
    """The patterns of one .gitignore file, relative to its folder."""

    def __init__(self, base: Path, text: str):
        self.base = base
        self.patterns: List[_Pattern] = []
        for raw in text.splitlines():
            pat = self._parse(raw)
            if pat is not None:
                self.patterns.append(pat)

    @staticmethod
    def _parse(raw: str) -> Optional[_Pattern]:
        line = raw.rstrip("\n").rstrip("\r")
        # trailing spaces are dropped unless escaped with a backslash
        stripped = line.rstrip(" ")
        if stripped.endswith("\\") and len(stripped) < len(line):
            stripped += " "
        line = stripped
        if not line or line.startswith("#"):
            return None
        negate = False
        if line.startswith("!"):
            negate, line = True, line[1:]
        elif line.startswith("\\!") or line.startswith("\\#"):
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            return None
        anchored = "/" in line
        line = line.lstrip("/")
        return _Pattern(re.compile(glob_to_regex(line), re.S), negate, dir_only, anchored)

    @classmethod
    def read(cls, folder: Path) -> Optional["GitIgnoreFile"]:
        path = folder / ".gitignore"
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        return cls(folder, text)

    def match(self, rel: str, is_dir: bool) -> Optional[bool]:
        """True (ignored), False (re-included by `!`) or None (no pattern matches)."""
        result = None
        name = rel.rsplit("/", 1)[-1]
        for p in self.patterns:
            if p.dir_only and not is_dir:
                continue
            target = rel if p.anchored else name
            if p.regex.fullmatch(target):
                result = not p.negate
        return result


class GitIgnore:
    """Answers "is this entry ignored?" for batches of paths, through git or the parser."""

    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        self._toplevel: Dict[Path, Optional[Path]] = {}
        self._files: Dict[Path, Optional[GitIgnoreFile]] = {}
        self.git_ok = True

    # git ---------------------------------------------------------------------------------
    def toplevel(self, folder: Path) -> Optional[Path]:
        if folder in self._toplevel:
            return self._toplevel[folder]
        top = None
        parent_top = self._toplevel.get(folder.parent)
        if parent_top is not None and not (folder / ".git").exists():
            self._toplevel[folder] = parent_top  # same work tree as the parent (no git call)
            return parent_top
        if self.git_ok:
            try:
                out = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=folder,
                                     capture_output=True, text=True, timeout=30)
                if out.returncode == 0 and out.stdout.strip():
                    top = Path(os.path.abspath(out.stdout.strip()))
            except (OSError, subprocess.SubprocessError):
                self.git_ok = False
        self._toplevel[folder] = top
        return top

    def _git_ignored(self, top: Path, paths: Sequence[Path]) -> Set[Path]:
        rels = {}
        for p in paths:
            try:
                rels[os.path.relpath(p, top)] = p
            except ValueError:  # pragma: no cover - other drive
                continue
        if not rels:
            return set()
        data = "\0".join(rels) + "\0"
        try:
            out = subprocess.run(["git", "check-ignore", "--stdin", "-z"], cwd=top, input=data,
                                 capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.SubprocessError):
            return self._parsed_ignored(paths)
        if out.returncode not in (0, 1):
            return self._parsed_ignored(paths)
        return {rels[r] for r in out.stdout.split("\0") if r in rels}

    # fallback ----------------------------------------------------------------------------
    def _gitignore(self, folder: Path) -> Optional[GitIgnoreFile]:
        if folder not in self._files:
            self._files[folder] = GitIgnoreFile.read(folder)
        return self._files[folder]

    def _parsed_ignored(self, paths: Sequence[Path]) -> Set[Path]:
        out = set()
        for p in paths:
            is_dir = p.is_dir()
            result = None
            folders = list(reversed(p.parents))
            for folder in folders:
                gi = self._gitignore(folder)
                if gi is None:
                    continue
                rel = p.relative_to(folder).as_posix()
                r = gi.match(rel, is_dir)
                if r is not None:
                    result = r
            if result:
                out.add(p)
        return out

    def ignored(self, paths: Sequence[Path]) -> Set[Path]:
        """The subset of `paths` (absolute) that .gitignore rules exclude."""
        if not self.enabled or not paths:
            return set()
        groups: Dict[Optional[Path], List[Path]] = {}
        for p in paths:
            groups.setdefault(self.toplevel(p.parent), []).append(p)
        out: Set[Path] = set()
        for top, group in groups.items():
            if top is None:
                out |= self._parsed_ignored(group)
            else:
                out |= self._git_ignored(top, group)
        return out


# --- discovery ----------------------------------------------------------------------------

def discover(paths: Iterable[str], resolver: ConfigResolver, *,
             respect_gitignore: bool = True) -> List[Path]:
    """Absolute paths of the files to lint, sorted, without duplicates.

    Raises PathError for a path that does not exist and ConfigError (from the resolver) for
    an invalid configuration met on the way.
    """
    roots = [Path(os.path.abspath(p)) for p in paths]
    for given, p in zip(paths, roots):
        if not os.path.lexists(p):
            raise PathError(f"{given}: no such file or directory")
    gitignore = GitIgnore(enabled=respect_gitignore)
    found: Set[Path] = set()
    for root in roots:
        if root.is_dir():
            if resolver.for_file(root).is_excluded(root):
                continue
            found.update(_walk(root, resolver, gitignore))
        elif not resolver.for_file(root).is_excluded(root):
            found.add(root)
    return sorted(found)


def _walk(root: Path, resolver: ConfigResolver, gitignore: GitIgnore) -> List[Path]:
    files: List[Path] = []
    level = [root]
    while level:
        entries: List[Path] = []
        for folder in level:
            try:
                names = sorted(os.listdir(folder))
            except OSError:
                continue
            cfg = resolver.for_dir(folder)
            for name in names:
                p = folder / name
                if p.is_dir():
                    if name in DEFAULT_EXCLUDE or p.is_symlink() or name.endswith(".egg-info"):
                        continue
                    if cfg.is_excluded(p):
                        continue
                elif not name.endswith(".py") or not p.is_file():
                    continue
                elif cfg.is_excluded(p):
                    continue
                entries.append(p)
        ignored = gitignore.ignored(entries)
        level = []
        for p in entries:
            if p in ignored:
                continue
            if p.is_dir():
                level.append(p)
            else:
                files.append(p)
    return files
