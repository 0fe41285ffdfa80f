"""Finds the source ranges of a call's arguments for the tracing front end.

ts-lint knows every argument's range from libcst; at run time we only know where a call
was made. To point findings at the same place (the `consumer_group=` keyword of a config,
the `src_resources=` of a Task, the entry of a dependency-graph dict), this module reads
the caller's file with `ast` once and looks the call up by position (and a function's
definition by its first line, for the work-method analysis of TS237 / TS716).
"""
from __future__ import annotations

import ast
from typing import Dict, Optional

from .source import SourceRange


def _tree(path: str):
    """The file's `ast`, from source.parsed (the parse fixes.py uses too)."""
    from .source import parsed
    return parsed(path)


_DEFS: Dict[str, tuple] = {}    # path -> (tree, {first line of a def, decorators included: node})


def function_def(fn) -> Optional[ast.AST]:
    """The `ast` node of a function, from the one cached parse of its file
    (`inspect.getsource` would tokenize the file again for every method)."""
    code = fn.__code__
    path = code.co_filename
    tree = _tree(path)
    if tree is None:
        return None
    hit = _DEFS.get(path)
    if hit is None or hit[0] is not tree:
        defs = {}
        stack = list(tree.body)
        while stack:          # statements only: a def is always one
            n = stack.pop()
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                defs[min([d.lineno for d in n.decorator_list] + [n.lineno])] = n
            for f in ("body", "orelse", "finalbody"):
                stack.extend(x for x in getattr(n, f, ()) if isinstance(x, ast.stmt))
            for h in getattr(n, "handlers", ()):
                stack.extend(h.body)
            for c in getattr(n, "cases", ()):
                stack.extend(c.body)
        hit = _DEFS[path] = (tree, defs)
    node = hit[1].get(code.co_firstlineno)
    return node if node is not None and node.name == fn.__name__ else None


def _rng(path: str, node) -> SourceRange:
    return SourceRange(path, node.lineno, node.col_offset, getattr(node, "end_lineno", None),
                       getattr(node, "end_col_offset", None))


_CALLS: Dict[str, tuple] = {}   # path -> (tree, {(line, column): call}, [every call, in ast.walk order])


def _calls(path: str, tree) -> tuple:
    """The file's calls, indexed once per parse: every resource, task and manager
    constructor looks its call up here, and walking the whole tree for each of them had
    cost more than the rest of building a kernel."""
    hit = _CALLS.get(path)
    if hit is None or hit[0] is not tree:
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
        at: Dict[tuple, ast.Call] = {}
        for n in calls:
            at.setdefault((n.lineno, n.col_offset), n)
        hit = _CALLS[path] = (tree, at, calls)
    return hit


def find_call(call: SourceRange) -> Optional[ast.Call]:
    """The call that starts at `call`'s position, else the shortest call spanning its
    line (the last one met in `ast.walk` order among equally short ones)."""
    tree = _tree(call.path)
    if tree is None:
        return None
    _, at, calls = _calls(call.path, tree)
    line = call.line
    node = at.get((line, call.column))
    if node is not None:
        return node
    best = None
    for node in calls:
        if node.lineno <= line <= (node.end_lineno or node.lineno):
            if best is None or (node.end_lineno or 0) - node.lineno <= (best.end_lineno or 0) - best.lineno:
                best = node
    return best


def call_arguments(call: SourceRange, positional_names=()) -> Dict[str, SourceRange]:
    """{keyword or positional parameter name: range of the argument expression}."""
    node = find_call(call)
    if node is None:
        return {}
    out = {}
    for name, arg in zip(positional_names, node.args):
        out[name] = _rng(call.path, arg)
    for kw in node.keywords:
        if kw.arg:
            out[kw.arg] = _rng(call.path, kw.value)
            out["=" + kw.arg] = _rng(call.path, kw)
    return out


def dict_entries(call: SourceRange, keyword: str, position: int = 1) -> list:
    """Ranges of the `key: [values]` entries of the dict passed as `keyword` (or positionally).

    Follows one level of `graph = {...}` assignment in the enclosing function.
    Returns [(key_src, [value_src...], key_range, [value_ranges])] with source text.
    """
    node = find_call(call)
    tree = _tree(call.path)
    if node is None or tree is None:
        return []
    expr = None
    for kw in node.keywords:
        if kw.arg == keyword:
            expr = kw.value
    if expr is None and len(node.args) > position:
        expr = node.args[position]
    if isinstance(expr, ast.Name):
        target = expr.id
        cand = None
        for n in ast.walk(tree):
            if isinstance(n, ast.Assign) and n.lineno <= node.lineno and isinstance(n.value, ast.Dict):
                if any(isinstance(t, ast.Name) and t.id == target for t in n.targets):
                    if cand is None or n.lineno > cand.lineno:
                        cand = n
        expr = cand.value if cand is not None else None
    if not isinstance(expr, ast.Dict):
        return []
    out = []
    for k, v in zip(expr.keys, expr.values):
        if k is None:
            continue
        vals = v.elts if isinstance(v, (ast.List, ast.Tuple)) else [v]
        out.append((ast.unparse(k), [ast.unparse(x) for x in vals], _rng(call.path, k),
                    [_rng(call.path, x) for x in vals]))
    return out
