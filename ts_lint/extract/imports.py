"""Imports of the user's own modules: ts-lint reads them, it never imports them.

Kernel authors split a kernel into modules (resources in one file, schedules and the
TaskManager in another). An import that names a module of the user's project (found as a
file, see `find_absolute` / `find_relative`) is followed: the module's text is parsed with
libcst and its body interpreted on the same interpreter and Context, with `__name__` set
to its module name (its `if __name__ == "__main__":` block does not run), so that the
importing file binds the real classes, functions and values. TS packages, the standard
library, well-known libraries and whatever is not found keep the old behaviour (a
`QualRef`, TS954 / TS956 info where used).

* Once per analysis: a module is interpreted the first time it is imported and bound by
  its absolute path afterwards (`Loader.modules`, like `sys.modules`). The parse is cached
  across analyses by (path, display path, text), so an edit is seen.
* Transitive: what an imported module imports is followed too, TS code or not (a TS
  module's constants often come from a plain config module); at most `MAX_PLAIN_MODULES`
  plain-Python modules are read below the linted file's own imports.
* Cycles terminate: a module being imported binds what it has so far, as Python does;
  nesting deeper than `MAX_DEPTH` modules leaves the names unknown.
* Findings of the module's own body (and its kernels, tasks and unknowns) are dropped:
  they are that file's, reported when it is linted itself. What runs later, because the
  importing file calls the module's code, keeps its findings, with the imported file's
  path and lines (`MultiPositions`, `MultiSource` dispatch by node).
* A module that cannot be read, has a syntax error or whose analysis fails binds unknown
  names and says why with a TS956 info finding at the import; never a crash.
* `Loader.deps` (path -> hash of the text read) lets ts_lint.incremental drop cached
  results when an imported module changes.
"""
from __future__ import annotations

import os
import sys
import threading
from collections import OrderedDict
from typing import Dict, List, Optional, Tuple

from .values import NamespaceVal, Scope, UNKNOWN

MAX_DEPTH = 8            # nested module imports followed (a -> b -> c ...)
MAX_PLAIN_MODULES = 32   # plain-Python modules read through other modules, per analysis
_PARSED: "OrderedDict[tuple, object]" = OrderedDict()   # (abs, display, text) -> SourceFile | str
_PARSED_MAX = 64
_PARSED_LOCK = threading.Lock()      # ts-lsp analyses in a thread of its own
_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ()))


class ModuleVal(NamespaceVal):
    """A user module: its attributes are its module scope's variables (the live dict, so a
    module still being imported shows what it has bound so far)."""

    def __init__(self, name: str, attrs: dict, path: str):
        super().__init__(attrs)
        self.name = name
        self.path = path

    def __repr__(self):
        return f"<module {self.name}>"


# ------------------------------------------------------------------ positions / sources
class MultiPositions:
    """`Positions` of the analysed file plus those of the modules it imports: each
    question about a node goes to the file whose parse holds it (node ids are unique:
    imported files are parsed with a private unit cache)."""

    def __init__(self, main):
        self.main = main
        self.others: list = []
        self.path = main.path
        self.source = main.source

    def _of(self, node):
        k = id(node)
        if k in self.main._offsets:
            return self.main
        for p in self.others:
            if k in p._offsets:
                return p
        return self.main

    def range(self, node):
        return self._of(node).range(node)

    def line(self, node):
        return self._of(node).line(node)

    def text(self, node):
        return self._of(node).text(node)

    def owner(self, node):
        return self._of(node).owner(node)

    def offsets(self, node):
        return self._of(node).offsets(node)

    def line_range(self, node):
        return self._of(node).line_range(node)

    def path_of(self, node) -> str:
        return self._of(node).path

    def place(self, unit, line_offset):
        self.main.place(unit, line_offset)


class MultiSource:
    """`SourceFile` of the analysed file plus those of imported modules; node questions go
    to the owning file, everything else (the module, segments, lines) to the main one."""

    def __init__(self, main, pos: MultiPositions):
        self.main = main
        self.others: list = []
        self.pos = pos

    def of(self, node):
        k = id(node)
        if self.main is not None and k in self.main.pos._offsets:
            return self.main
        for s in self.others:
            if k in s.pos._offsets:
                return s
        return self.main

    def body(self, node):
        s = self.of(node)
        return s.body(node) if s is not None else node.body

    def full(self, node):
        s = self.of(node)
        return s.full(node) if s is not None else node

    def function_text(self, node):
        s = self.of(node)
        return s.function_text(node) if s is not None else self.pos.text(node)

    def ast_function(self, node):
        s = self.of(node)
        return s.ast_function(node) if s is not None else None

    def def_line(self, node):
        return self.pos.line(node.name)

    def __getattr__(self, name):
        main = self.__dict__.get("main")
        if main is None:
            raise AttributeError(name)
        return getattr(main, name)


def source_of(ctx, node):
    """The SourceFile that holds `node` (the main one when there are no imports)."""
    src = ctx.src
    return src.of(node) if isinstance(src, MultiSource) else src


# ------------------------------------------------------------------ finding files
def _isfile(p: str) -> bool:
    return os.path.isfile(p)


def _is_package(d: str) -> bool:
    return _isfile(os.path.join(d, "__init__.py"))


def _external(head: str) -> bool:
    """A top-level name ts-lint never looks for on disk (TS, stdlib, known libraries)."""
    from .common import _library
    from .names import is_ts_module
    return head in _STDLIB or _library(head) or is_ts_module(head) or head.startswith("cutlass") \
        or head.startswith("__")


def search_roots(file_abs: str) -> List[str]:
    """Folders an absolute import is looked up in, for a file: its folder and the ancestors
    up to the first folder that is not a package, then the nearest pyproject.toml's folder."""
    d = os.path.dirname(file_abs)
    roots = [d]
    while _is_package(d):
        parent = os.path.dirname(d)
        if parent == d:
            break
        roots.append(parent)
        d = parent
    p = os.path.dirname(file_abs)
    for _ in range(32):
        if _isfile(os.path.join(p, "pyproject.toml")):
            if p not in roots:
                roots.append(p)
            break
        parent = os.path.dirname(p)
        if parent == p:
            break
        p = parent
    return roots


def module_name_of(file_abs: str) -> str:
    """The dotted name of a module file, from its package folders."""
    d, base = os.path.split(file_abs)
    stem = base[:-3] if base.endswith(".py") else base
    parts = [] if stem == "__init__" else [stem]
    while _is_package(d):
        parts.insert(0, os.path.basename(d))
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    name = ".".join(parts) or os.path.basename(d)
    return name if name != "__main__" else "__main__.imported"


def _chain(base: str, parts: List[str], base_is_module: bool) -> Optional[List[Tuple[str, Optional[str]]]]:
    """[(folder or file path, module file or None)] from `base` down `parts`, or None when
    not every part exists. A folder without `__init__.py` is a namespace package; the last
    part must be a real file (a module or a package's `__init__.py`)."""
    out: List[Tuple[str, Optional[str]]] = []
    if base_is_module:
        init = os.path.join(base, "__init__.py")
        out.append((base, init if _isfile(init) else None))
    cur = base
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        d = os.path.join(cur, part)
        init = os.path.join(d, "__init__.py")
        if _isfile(init):
            out.append((d, init))
            cur = d
            continue
        f = d + ".py"
        if last and _isfile(f):
            out.append((f, f))
            return out
        if not last and os.path.isdir(d):
            out.append((d, None))
            cur = d
            continue
        return None
    return out if out and out[-1][1] is not None else None


def find_absolute(importer_abs: str, dotted: str):
    """The chain of an absolute import `a.b.c` (see `_chain`), or None."""
    parts = dotted.split(".")
    if not parts[0] or _external(parts[0]):
        return None
    for root in search_roots(importer_abs):
        ch = _chain(root, parts, False)
        if ch is not None:
            return ch
    return None


def find_relative(importer_abs: str, level: int, rest: str):
    """The chain of `from ..rest import ...` (the package folder first): relative to the
    importing file's package, or to its folder when it is in none."""
    base = os.path.dirname(importer_abs)
    for _ in range(level - 1):
        parent = os.path.dirname(base)
        if parent == base:
            return None
        base = parent
    parts = rest.split(".") if rest else []
    if not parts:
        init = os.path.join(base, "__init__.py")
        return [(base, init if _isfile(init) else None)]
    return _chain(base, parts, True)


# ------------------------------------------------------------------ parsing (cached)
def read_text(path: str) -> str:
    from ..api import read_source
    return read_source(path)


def fingerprint(path: str) -> Optional[int]:
    """Hash of a module file's current text (None: unreadable), for cache validation."""
    try:
        return hash(read_text(path))
    except Exception:
        return None


def _parse(abs_path: str, display: str, text: str):
    """SourceFile of an imported module (cached), or the text of the reason it has none.
    A private unit cache keeps its nodes distinct from those of any other parse."""
    key = (abs_path, display, text)
    with _PARSED_LOCK:
        hit = _PARSED.get(key)
        if hit is not None:
            _PARSED.move_to_end(key)
            return hit
    import libcst as cst
    from .source import UnitCache, parse
    try:
        src = parse(text, display, cache=UnitCache(0))
        src.dict_lookups = None        # graph lookups are recorded for the analysed file only
        out = src
    except cst.ParserSyntaxError as e:
        out = _syntax_message(text, display, e)
    except RecursionError:
        out = "it is nested too deeply to analyse"
    with _PARSED_LOCK:
        _PARSED[key] = out
        while len(_PARSED) > _PARSED_MAX:
            _PARSED.popitem(last=False)
    return out


def _syntax_message(text: str, display: str, err) -> str:
    import ast
    try:
        ast.parse(text, display)
    except SyntaxError as e:
        return f"it has a syntax error at line {e.lineno or 1}: {e.msg}"
    except (ValueError, RecursionError, MemoryError):
        pass
    return "ts-lint cannot parse it"


def clear_cache() -> None:
    with _PARSED_LOCK:
        _PARSED.clear()


# ------------------------------------------------------------------ loading
class Loader:
    """The user modules of one analysis (one Context), by absolute path."""

    def __init__(self, ctx):
        self.ctx = ctx
        p = ctx.path
        self.main_abs = None if not p or p.startswith("<") else os.path.abspath(p)
        self.show_abs = bool(p) and os.path.isabs(p)
        self.modules: Dict[str, object] = {}     # module file -> ModuleVal | UNKNOWN
        self.failed: Dict[str, str] = {}         # module file -> why its names are unknown
        self.deps: Dict[str, int] = {}           # module file -> hash of the text read
        self.files: Dict[int, str] = {}          # id(SourceFile) -> its absolute path
        self.namespaces: Dict[str, ModuleVal] = {}
        self.depth = 0
        self.plain_read = 0                      # plain-Python modules read at depth > 0
        # only TS code follows imports (a package of plain Python is not interpreted
        # module by module for each of its files: see `uses_ts`)
        self.enabled = self.main_abs is not None and uses_ts(getattr(ctx.pos, "source", "") or "")

    def importer(self, node) -> Optional[str]:
        """Absolute path of the file that holds the import statement `node`."""
        src = source_of(self.ctx, node)
        return self.files.get(id(src), self.main_abs)

    def display(self, abs_path: str) -> str:
        if self.show_abs:
            return abs_path
        try:
            rel = os.path.relpath(abs_path)
        except ValueError:
            return abs_path
        return abs_path if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel

    def load_chain(self, it, chain, node) -> List[object]:
        """The module values of a chain, parents linked to children as attributes."""
        out = []
        parent = None
        for path, file in chain:
            if file is None:
                mod = self.namespaces.get(path)
                if mod is None:
                    mod = self.namespaces[path] = ModuleVal(os.path.basename(path), {}, path)
            else:
                mod = self.load(it, file, node)
            if isinstance(parent, ModuleVal) and mod is not UNKNOWN:
                parent.attrs.setdefault(os.path.basename(path[:-3] if path.endswith(".py") else path), mod)
            out.append(mod)
            parent = mod
        return out

    def load(self, it, file_abs: str, node):
        if file_abs in self.modules:
            if file_abs in self.failed:
                self.explain(it, node, file_abs)
            return self.modules[file_abs]
        name = module_name_of(file_abs)
        display = self.display(file_abs)
        if self.depth >= MAX_DEPTH:
            it.unknown(node, f"`{name}` is imported through more than {MAX_DEPTH} nested modules; "
                       "ts-lint does not follow it and the names it binds are unknown", "import")
            return UNKNOWN
        try:
            text = read_text(file_abs)
        except Exception as exc:
            return self.fail(it, node, file_abs, f"it cannot be read ({type(exc).__name__})")
        self.deps[file_abs] = hash(text)
        if self.depth > 0 and not uses_ts(text):
            # imports are followed transitively, plain-Python modules included (a TS module's
            # constants often come from a config module); the number of plain modules read
            # below the linted file's own imports is bounded, so a kernel that imports a
            # large plain-Python package does not interpret all of it
            if self.plain_read >= MAX_PLAIN_MODULES:
                return self.fail(it, node, file_abs, f"more than {MAX_PLAIN_MODULES} plain-Python modules "
                                 "are imported through other modules")
            self.plain_read += 1
        src = _parse(file_abs, display, text)
        if isinstance(src, str):
            return self.fail(it, node, file_abs, src)
        self._install(src, file_abs)
        mod = ModuleVal(name, {}, display)
        self.modules[file_abs] = mod
        try:
            self._run_body(it, src, mod, file_abs)
        except RecursionError:
            return self.fail(it, node, file_abs, "it is nested too deeply to analyse")
        except Exception as exc:
            if os.environ.get("TS_DEBUG"):
                import traceback
                traceback.print_exc()
            return self.fail(it, node, file_abs, f"its analysis failed ({type(exc).__name__}: {exc})")
        return mod

    def fail(self, it, node, file_abs: str, why: str):
        self.modules[file_abs] = UNKNOWN
        self.failed[file_abs] = why
        self.explain(it, node, file_abs)
        return UNKNOWN

    def explain(self, it, node, file_abs: str):
        it.unknown(node, f"`{module_name_of(file_abs)}` ({self.display(file_abs)}) is not read: "
                   f"{self.failed[file_abs]}; the names it binds are unknown", "import")

    def _install(self, src, file_abs: str):
        ctx = self.ctx
        if not isinstance(ctx.pos, MultiPositions):
            ctx.pos = MultiPositions(ctx.pos)
            ctx.src = MultiSource(ctx.src, ctx.pos)
        if src.pos not in ctx.pos.others:
            ctx.pos.others.append(src.pos)
            ctx.src.others.append(src)
        self.files[id(src)] = file_abs

    def _run_body(self, it, src, mod: ModuleVal, file_abs: str):
        """Runs the module body as an import does; its own findings are dropped."""
        from .context import Budget
        from .frames import _Break, _Continue, _Return, UserRaise
        ctx = self.ctx
        scope = Scope("module")
        scope.vars["__name__"] = mod.name
        scope.vars["__file__"] = file_abs
        mod.attrs = scope.vars
        saved_it = (it.module_node, it.module_name, it.module_scope, it.frames, it.captures,
                    it._loop_depth, getattr(it, "jit_boundary", None))
        saved_ctx = {k: getattr(ctx, k) for k in _CTX_FIELDS if hasattr(ctx, k)}
        for k, make in _CTX_FIELDS.items():
            if make is not None:
                setattr(ctx, k, make())
            elif hasattr(ctx, k):
                delattr(ctx, k)
        ctx.importing = True
        it.module_node, it.module_name, it.module_scope = src.module, mod.name, scope
        it.frames, it.captures, it._loop_depth, it.jit_boundary = [], [], 0, None
        self.depth += 1
        try:
            for stmt in src.module.body:
                if _is_main_guard(stmt, src):
                    break
                it.exec_stmt(stmt, scope)
        except (UserRaise, Budget, _Return, _Break, _Continue):
            pass                       # the module binds what it has so far
        finally:
            self.depth -= 1
            (it.module_node, it.module_name, it.module_scope, it.frames, it.captures,
             it._loop_depth, it.jit_boundary) = saved_it
            for k in _CTX_FIELDS:
                if k in saved_ctx:
                    setattr(ctx, k, saved_ctx[k])
                elif hasattr(ctx, k):
                    delattr(ctx, k)


# Context state the imported module's body gets fresh (and gives back): its findings,
# kernels and per-root counters belong to that file. None: an attribute made on demand.
_CTX_FIELDS = {
    "diagnostics": list, "unknowns": list, "_unknown_keys": set, "kernels": list,
    "kernel_roots": list, "tasks_built": list, "site_counts": dict, "site_roots": dict,
    "root_errors": int, "import_errors": int, "steps": int, "depth": int, "importing": bool,
    "root_name": str, "_ts136_seen": None, "_ts136_memo": None,
}


def _is_main_guard(stmt, src) -> bool:
    import libcst as cst
    if not isinstance(stmt, cst.If) or not isinstance(stmt.test, cst.Comparison):
        return False
    text = src.pos.text(stmt.test)
    return "__name__" in text and "__main__" in text


def uses_ts(text: str) -> bool:
    """Whether a module's text names a TS package (the cheap test that keeps import
    following to TS code: linting a large plain-Python package stays linear)."""
    return "ts_runtime" in text or "task_scheduling" in text


def loader(ctx) -> Optional[Loader]:
    ld = getattr(ctx, "loader", None)
    if ld is None:
        ld = ctx.loader = Loader(ctx)
    return ld if ld.enabled else None


# ------------------------------------------------------------------ the import statements
def import_module(it, dotted: str, node) -> Optional[List[object]]:
    """`import a.b.c` / the module part of `from ... import`: the module values of the
    chain (package first), or None when it is not a user module (old behaviour)."""
    level = len(dotted) - len(dotted.lstrip("."))
    rest = dotted[level:]
    if level == 0 and (not rest or _external(rest.split(".", 1)[0])):
        return None                    # the fast path of every file without user imports
    ld = loader(it.ctx)
    if ld is None:
        return None
    importer = ld.importer(node)
    if importer is None:
        return None
    chain = find_relative(importer, level, rest) if level else find_absolute(importer, rest)
    if chain is None or _external(module_name_of(chain[-1][1] or chain[-1][0]).split(".")[0]):
        return None                    # not found, or a module of ts_runtime itself
    return ld.load_chain(it, chain, node)


def from_import(it, mods: List[object], name: str, node):
    """`from M import name` on a user module M: the attribute, else the submodule
    `M.name`, else unknown (with a TS956 note, as Python would raise ImportError)."""
    m = mods[-1]
    if m is UNKNOWN:
        return UNKNOWN
    if isinstance(m, ModuleVal) and name in m.attrs:
        return m.attrs[name]
    ld = loader(it.ctx)
    if ld is not None and isinstance(m, ModuleVal):
        base = _module_folder(ld, m)
        if base is not None:
            ch = _chain(base, [name], False)
            if ch is not None:
                sub = ld.load_chain(it, ch, node)[-1]
                m.attrs.setdefault(name, sub)
                return sub
    it.unknown(node, f"`{name}` is not defined by the module `{getattr(m, 'name', '?')}` as ts-lint reads "
               "it; the name is unknown", "import")
    return UNKNOWN


def _module_folder(ld: Loader, m: ModuleVal) -> Optional[str]:
    """The folder of a package module (where its submodules are), or None."""
    for path, mod in ld.modules.items():
        if mod is m:
            return os.path.dirname(path) if os.path.basename(path) == "__init__.py" else None
    for path, mod in ld.namespaces.items():
        if mod is m:
            return path
    return None


def star_names(m) -> List[str]:
    if not isinstance(m, ModuleVal):
        return []
    all_ = m.attrs.get("__all__")
    if isinstance(all_, (list, tuple)) and all(isinstance(x, str) for x in all_):
        return list(all_)
    return [k for k in m.attrs if not k.startswith("_")]
