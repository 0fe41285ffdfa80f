"""Incremental analysis: re-analyse only the parts of a module whose text changed.

A module is split into *components*: groups of top-level statements that can only affect
one another through module-level names. Statement A depends on statement B when an
identifier written anywhere in A's text (the same textual test `roots.py` uses to relate
functions) is a name that B binds at module level; both then belong to one component.
Import-only statements (imports, `try: import ... except ImportError: import ...`) are
copied into every component. Each component is analysed on its own, exactly as the whole
module would be (module body, entry points, `__main__` block, remaining TS functions),
and its findings are cached by the text of its statements. When a later text has a
component with the same statements, its findings are reused, moved to the statements'
new lines, unless a module of the user's that the component imported (read from disk,
ts_lint.extract.imports) has changed since.

The union of the components' findings equals the findings of a whole-module analysis;
where that is not guaranteed the whole module is analysed instead:

* dynamic name access (`globals()`, `vars()`, `exec`, `eval`, `sys.modules`, `__dict__`);
* errors at import time (they change how every later TaskManager is treated);
* module bodies that together come near the step budget;
* tasks built without any TaskManager anywhere (a per-file note);
* a single component (nothing to gain).

A cached component is reused only if every range in its findings lies in its own
statements (so each can be moved with its statement), and if the dependency-graph
lookups it made by name (`name = {...}` found anywhere earlier in the file) still find
the same assignment. Kernel models of a reused component are not moved: the analysis
then says `kernels_stale`, and callers that need models (hover) analyse again.

`tests/lint/test_incremental.py` compares incremental and whole-module results on the
examples, the rule examples and random edits of the generated benchmark modules.
"""
from __future__ import annotations

import ast
import bisect
import dataclasses
import re
import threading
from collections import OrderedDict
from typing import Dict, List, Optional, Sequence, Tuple

from ts_runtime.diagnostics import Diagnostic, Edit, Fix, Related, TraceStep
from ts_runtime.source import SourceRange

__all__ = ["AnalysisCache", "partition", "analyze_incremental"]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_DYNAMIC = frozenset({"globals", "vars", "locals", "exec", "eval", "__dict__", "__import__",
                      "import_module", "modules", "__builtins__", "builtins"})


class AnalysisCache:
    """Component results of one document (or several), least recently used out first."""

    def __init__(self, max_entries: int = 512):
        self.max_entries = max_entries
        self._entries: "OrderedDict[tuple, list]" = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = self.fallbacks = 0

    def get(self, key: tuple):
        with self._lock:
            entries = self._entries.get(key)
            if entries is None:
                return None
            self._entries.move_to_end(key)
            return list(entries)

    def put(self, key: tuple, entry) -> None:
        with self._lock:
            lst = self._entries.setdefault(key, [])
            lst.insert(0, entry)
            del lst[2:]
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


# ---------------------------------------------------------------- partition

def _bound_names(nodes: Sequence[ast.AST], tokens: set) -> set:
    """Names a top-level statement binds in the module namespace (conservatively)."""
    out = set()
    stack = list(nodes)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
            # decorators, defaults, bases and annotations run in the module scope
            stack.extend(n.decorator_list)
            if isinstance(n, ast.ClassDef):
                stack.extend(n.bases)
                stack.extend(k.value for k in n.keywords)
            else:
                stack.append(n.args)
                if n.returns is not None:
                    stack.append(n.returns)
            continue
        if isinstance(n, ast.Lambda):
            stack.append(n.args)
            continue
        if isinstance(n, ast.Name):
            if not isinstance(n.ctx, ast.Load):
                out.add(n.id)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            for a in n.names:
                out.add(a.asname or a.name.split(".")[0])
        elif isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name):
            out.add(n.target.id)
        elif isinstance(n, (ast.MatchAs, ast.MatchStar)):
            if n.name:
                out.add(n.name)
        elif isinstance(n, ast.MatchMapping) and n.rest:
            out.add(n.rest)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            out.add(n.name)
        stack.extend(ast.iter_child_nodes(n))
    if "global" in tokens:
        for node in nodes:
            for n in ast.walk(node):
                if isinstance(n, ast.Global):
                    out.update(n.names)
    return out


def _import_only(nodes: Sequence[ast.AST]) -> bool:
    for n in nodes:
        if isinstance(n, (ast.Import, ast.ImportFrom, ast.Pass)):
            continue
        if isinstance(n, ast.Try) and not getattr(n, "is_star", False):
            parts = list(n.body) + list(n.orelse) + list(n.finalbody)
            for h in n.handlers:
                parts.extend(h.body)
            if _handlers_unnamed(n) and _import_only(parts):
                continue
        return False
    return True


def _handlers_unnamed(n: ast.Try) -> bool:
    return all(h.name is None for h in n.handlers)


def segment_facts(src, seg) -> tuple:
    """(text, identifiers, names bound, import-only) of a top-level statement, kept with
    its cached chunk (so an unchanged statement is not read again)."""
    chunk = seg.chunk
    if chunk is not None:
        hit = chunk.facts.get(seg.index)
        if hit is not None:
            return hit
        first, last, _nodes = chunk.segs[seg.index]
        text = "".join(chunk.lines[first - 1:last])
    else:
        text = "".join(src.lines[seg.first - 1:seg.last])
    tokens = set(_IDENT.findall(text))
    out = (text, tokens, _bound_names(seg.ast_nodes, tokens), _import_only(seg.ast_nodes))
    if chunk is not None:
        chunk.facts[seg.index] = out
    return out


def _is_main_guard(nodes, text: str) -> bool:
    return any(isinstance(n, ast.If) for n in nodes) and "__name__" in text and "__main__" in text


def partition(src, extra_links: Sequence[Tuple[int, int]] = ()) -> Optional[Tuple[List[int], List[List[int]]]]:
    """(import-only segments copied into every component, [component: segment indices])
    of a SourceFile parsed in segments, or None when the module must be analysed whole.
    `extra_links`: pairs of segments that must share a component."""
    segs = src.segments
    if not segs:
        return None
    facts = [segment_facts(src, s) for s in segs]
    tokens = [f[1] for f in facts]
    if any(t & _DYNAMIC for t in tokens):
        return None
    bound = [f[2] for f in facts]
    imports = [i for i, f in enumerate(facts) if f[3]]
    import_set = set(imports)
    definers: Dict[str, List[int]] = {}
    for i, names in enumerate(bound):
        if i not in import_set:
            for n in names:
                definers.setdefault(n, []).append(i)
    # an import whose names are also bound elsewhere, or whose text mentions such a name,
    # takes part like any other statement
    for i in list(imports):
        if bound[i] & definers.keys() or tokens[i] & definers.keys():
            import_set.discard(i)
            for n in bound[i]:
                definers.setdefault(n, []).append(i)
    # the interpreter runs what follows `if __name__ == "__main__":` after the entry points:
    # the guard and every later statement stay together (and are not copied imports)
    guard = next((i for i, s in enumerate(segs) if _is_main_guard(s.ast_nodes, facts[i][0])), None)
    if guard is not None:
        import_set -= set(range(guard, len(segs)))
    imports = sorted(import_set)
    parent = list(range(len(segs)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(a: int, b: int) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    for name, idx in definers.items():
        for j in idx[1:]:
            union(idx[0], j)
    for i in range(len(segs)):
        if i in import_set:
            continue
        for t in tokens[i] & definers.keys():
            union(i, definers[t][0])
    if guard is not None:
        for i in range(guard + 1, len(segs)):
            union(guard, i)
    for a, b in extra_links:
        union(a, b)
    groups: Dict[int, List[int]] = {}
    for i in range(len(segs)):
        if i not in import_set:
            groups.setdefault(find(i), []).append(i)
    comps = [g for _, g in sorted(groups.items())]
    # statements that define nothing others use and use nothing others define (a lone
    # docstring, a print) are grouped, so that each does not pay for an interpreter
    single, rest = [], []
    for g in comps:
        (single if len(g) == 1 and not bound[g[0]] else rest).append(g)
    if single:
        rest.append(sorted(i for g in single for i in g))
    rest.sort(key=lambda g: g[0])
    return imports, rest


# ---------------------------------------------------------------- one component

@dataclasses.dataclass
class _Result:
    diagnostics: list
    unknowns: list
    kernels: list
    kernel_roots: list
    import_errors: int
    module_steps: int
    module_budget: bool
    tasks_built: bool
    lookups: list
    methods: frozenset = frozenset()   # names of the methods the root finder considered
    configured: bool = False           # its entry points / `__main__` block reached a TaskManager
    deps: tuple = ()                   # ((user module file, hash of its text), ...) it read


def _run_component(src, path: str, seg_idx: Sequence[int], run_checker: bool) -> _Result:
    import libcst as cst
    from .extract.context import Budget, Context
    from .extract.interpreter import Interpreter
    from .extract.roots import run_roots
    stmts = [st for i in seg_idx for st in src.segments[i].stmts]
    ctx = Context(path, src.pos, run_checker, src)
    it = Interpreter(ctx, cst.Module(body=stmts))
    src.dict_lookups = []
    from .extract.configurations import run_configurations
    module_steps, module_budget = 0, False
    imported = {}
    for main in (False, True):
        if main:
            imported = dict(it.module_scope.vars)
        try:
            it.run_module(main=main)
        except Budget:
            ctx.unknown(SourceRange(path, 1, 0), "analysis budget exhausted in the module body", "budget")
            if not main:
                module_budget = True
        if not main:
            module_steps = ctx.steps
            run_roots(it, "entry")
    run_configurations(it, Budget, imported)
    configured = bool(ctx.kernels)
    run_roots(it, "rest")
    from .extract.roots import _candidates
    methods = frozenset(f.name for _label, f, owner in _candidates(it) if owner is not None)
    loader = getattr(ctx, "loader", None)
    deps = tuple(sorted(loader.deps.items())) if loader is not None else ()
    return _Result(list(ctx.diagnostics), list(ctx.unknowns), list(ctx.kernels),
                   list(ctx.kernel_roots), ctx.import_errors, module_steps, module_budget,
                   bool(ctx.tasks_built), list(src.dict_lookups), methods, configured, deps)


def _deps_unchanged(res: _Result) -> bool:
    """Whether every user module a cached result read (ts_lint.extract.imports) still has
    the same text on disk."""
    if not res.deps:
        return True
    from .extract.imports import fingerprint
    return all(fingerprint(path) == h for path, h in res.deps)


# ---------------------------------------------------------------- moving findings

class _Mover:
    """Moves ranges of the old places of a component's statements to their new places."""

    def __init__(self, path: str, old: Sequence[Tuple[int, int]], new_firsts: Sequence[int]):
        self.path = path
        order = sorted(range(len(old)), key=lambda k: old[k][0])
        self.firsts = [old[k][0] for k in order]
        self.lasts = [old[k][1] for k in order]
        self.deltas = [new_firsts[k] - old[k][0] for k in order]

    def delta(self, line: int) -> Optional[int]:
        k = bisect.bisect_right(self.firsts, line) - 1
        if k >= 0 and line <= self.lasts[k]:
            return self.deltas[k]
        return None

    def movable(self, r: Optional[SourceRange]) -> bool:
        if r is None or r.path != self.path:
            return True
        d = self.delta(r.line)
        return d is not None and (r.end_line is None or self.delta(r.end_line) == d)

    def range(self, r: Optional[SourceRange]) -> Optional[SourceRange]:
        if r is None or r.path != self.path:
            return r
        d = self.delta(r.line)
        if not d:
            return r
        return SourceRange(r.path, r.line + d, r.column,
                           None if r.end_line is None else r.end_line + d, r.end_column)

    def diagnostic(self, dg: Diagnostic) -> Diagnostic:
        changes = {"range": self.range(dg.range)}
        if dg.related:
            changes["related"] = tuple(
                dataclasses.replace(x, range=self.range(x.range)) if isinstance(x, Related) else x
                for x in dg.related)
        if dg.trace:
            changes["trace"] = tuple(
                dataclasses.replace(x, range=self.range(x.range)) if isinstance(x, TraceStep) else x
                for x in dg.trace)
        if isinstance(dg.fix, Fix) and dg.fix.edits:
            changes["fix"] = dataclasses.replace(dg.fix, edits=tuple(
                dataclasses.replace(e, range=self.range(e.range)) if isinstance(e, Edit) else e
                for e in dg.fix.edits))
        return dataclasses.replace(dg, **changes)

    def all_movable(self, diags: Sequence[Diagnostic]) -> bool:
        for dg in diags:
            if not isinstance(dg, Diagnostic) or not self.movable(dg.range):
                return False
            for x in dg.related:
                if not isinstance(x, Related) or not self.movable(x.range):
                    return False
            for x in dg.trace:
                if not isinstance(x, TraceStep) or not self.movable(x.range):
                    return False
            if dg.fix is not None:
                if not isinstance(dg.fix, Fix):
                    return False
                for e in dg.fix.edits:
                    if not isinstance(e, Edit) or not self.movable(e.range):
                        return False
        return True


def _lookup(src, line: int, name: str) -> Optional[int]:
    index = src.ast_dict_assignments() or []
    cand = None
    for aline, names_, _d, _off in index:
        if aline <= line and name in names_ and (cand is None or aline > cand):
            cand = aline
    return cand


# ---------------------------------------------------------------- driver

def analyze_incremental(src, path: str, explain_unknown: bool, run_checker: bool,
                        cache: AnalysisCache, finish):
    """Analysis of `src` (a segmented SourceFile) by components, reusing `cache`; `finish`
    turns (diagnostics, unknowns, kernels, kernel_roots, configured) into the api's Analysis. Returns
    None when the module must be analysed whole."""
    from .extract.context import Context
    links: List[Tuple[int, int]] = []
    for _round in range(8):
        parts = partition(src, links)
        if parts is None:
            return None
        imports, comps = parts
        if len(comps) <= 1:
            return None
        results, stale = _run_components(src, path, explain_unknown, run_checker, cache, imports, comps)
        # the root finder relates functions by the names of methods too (roots.root_order):
        # a method name of one component written in another component's text links them
        new = _method_links(src, comps, results, set(imports))
        if not new:
            break
        links.extend(new)
    else:
        return None
    if any(r.import_errors for r in results) or any(r.module_budget for r in results) \
            or sum(r.module_steps for r in results) >= Context.MAX_STEPS // 2:
        cache.fallbacks += 1
        return None
    kernels = [k for r in results for k in r.kernels]
    if not kernels and any(r.tasks_built for r in results):
        cache.fallbacks += 1
        return None
    diags = [d for r in results for d in r.diagnostics]
    unknowns = [d for r in results for d in r.unknowns]
    roots = [k for r in results for k in r.kernel_roots]
    analysis = finish(diags, unknowns, kernels, roots, any(r.configured for r in results))
    analysis.kernels_stale = stale
    return analysis


def _method_links(src, comps, results, imports) -> List[Tuple[int, int]]:
    tokens = []
    for comp in comps:
        t: set = set()
        for i in comp:
            t |= segment_facts(src, src.segments[i])[1]
        tokens.append(t)
    out = []
    for a, res in enumerate(results):
        if not res.methods:
            continue
        for b, tb in enumerate(tokens):
            if a != b and res.methods & tb:
                out.append((comps[a][0], comps[b][0]))
    return out


def _run_components(src, path, explain_unknown, run_checker, cache, imports, comps):
    segs = src.segments
    texts = [segment_facts(src, s)[0] for s in segs]
    results: List[_Result] = []
    stale = False
    for comp in comps:
        idx = sorted(set(imports) | set(comp))
        key = (path, explain_unknown, run_checker, tuple(texts[i] for i in idx))
        new_firsts = [segs[i].first for i in idx]
        reused = None
        for old_spans, res in cache.get(key) or ():
            if not _deps_unchanged(res):
                continue                 # an imported module of the user's changed
            mover = _Mover(path, old_spans, new_firsts)
            ok = True
            for line, name, found in res.lookups:
                d = mover.delta(line)
                want = None if found is None else (found + mover.delta(found))
                if d is None or _lookup(src, line + d, name) != want:
                    ok = False
                    break
            if not ok:
                continue
            if any(mover.deltas):
                res = dataclasses.replace(
                    res, diagnostics=[mover.diagnostic(x) for x in res.diagnostics],
                    unknowns=[mover.diagnostic(x) for x in res.unknowns],
                    lookups=[(l + mover.delta(l), n, None if f is None else f + mover.delta(f))
                             for l, n, f in res.lookups])
                stale = stale or bool(res.kernels)
            reused = res
            break
        if reused is not None:
            cache.hits += 1
            results.append(reused)
            continue
        cache.misses += 1
        res = _run_component(src, path, idx, run_checker)
        results.append(res)
        spans = [(segs[i].first, segs[i].last) for i in idx]
        mover = _Mover(path, spans, new_firsts)
        storable = mover.all_movable(res.diagnostics) and mover.all_movable(res.unknowns) and all(
            mover.delta(l) is not None and (f is None or mover.delta(f) is not None)
            for l, n, f in res.lookups)
        if storable:
            cache.put(key, (spans, res))
    return results, stale
