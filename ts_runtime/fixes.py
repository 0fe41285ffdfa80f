"""Building `Fix` edits from source ranges (shared by every rule that knows its edit).

Edits refer to the original text (LSP WorkspaceEdit semantics: non-overlapping, applied
at once), so a move is a whole-line deletion plus an insertion after another line.
"""
from __future__ import annotations

from typing import Optional

from .diagnostics import Edit, Fix
from .source import SourceRange, source_line


def move_statement_after(stmt: SourceRange, anchor: SourceRange, title: str,
                         applicability: str = "unsafe") -> Optional[Fix]:
    """Moves the one-line statement at `stmt` to just after the statement at `anchor`,
    re-indented like the anchor. None when the text is not available or the statement
    does not stand alone on its line."""
    text = source_line(stmt.path, stmt.line)
    anchor_end = anchor.end_line or anchor.line
    anchor_text = source_line(anchor.path, anchor.line)
    if not text or not anchor_text or (stmt.end_line or stmt.line) != stmt.line:
        return None
    body = text.strip()
    call_end = stmt.end_column if stmt.end_column is not None else len(text.rstrip("\n"))
    code = text[stmt.column:call_end]
    if not body.startswith(code) or not code:
        return None            # something else shares the line (e.g. `x = a.release()`)
    if stmt.line <= anchor_end and stmt.line >= anchor.line:
        return None
    indent = anchor_text[:len(anchor_text) - len(anchor_text.lstrip())]
    edits = (
        Edit(SourceRange(stmt.path, stmt.line, 0, stmt.line + 1, 0), ""),
        Edit(SourceRange(anchor.path, anchor_end + 1, 0, anchor_end + 1, 0), indent + body + "\n"),
    )
    return Fix(title, edits, applicability)


def receiver(rng: SourceRange) -> Optional[str]:
    """`smem` of a call `smem.tma_load(...)` starting at `rng` (None if not that shape)."""
    text = source_line(rng.path, rng.line)
    head = text[rng.column:]
    recv = head.split("(", 1)[0].rsplit(".", 1)[0] if "." in head.split("(", 1)[0] else ""
    return recv if recv and recv.replace(".", "").replace("_", "").isalnum() else None


def insert_call(anchor: SourceRange, method: str, *, before: bool, title: str,
                applicability: str = "unsafe") -> Optional[Fix]:
    """Inserts `<receiver>.<method>()` on its own line before/after the statement at
    `anchor` (a work call on the same resource), at the anchor's indentation."""
    recv = receiver(anchor)
    if recv is None:
        return None
    at = anchor if before else SourceRange(anchor.path, (anchor.end_line or anchor.line) + 1)
    return insert_statement(at, f"{recv}.{method}()", title=title, applicability=applicability,
                            indent_of=anchor)


# --------------------------------------------------------------------------- source text
# The helpers below read the analysed text (the source registry, else the file) and parse
# it with `ast`; positions are converted to code points (ast columns are UTF-8 bytes).

def insert_statement(anchor: SourceRange, code: str, *, title: str, applicability: str = "unsafe",
                     indent_of: Optional[SourceRange] = None) -> Optional[Fix]:
    """Inserts `code` on its own line just before line `anchor.line`, at the indentation
    of the statement at `indent_of` (default: the one at the anchor)."""
    ref = indent_of or anchor
    text = source_line(ref.path, ref.line)
    if not text or not text.strip():
        return None
    indent = text[:len(text) - len(text.lstrip())]
    return Fix(title, (Edit(SourceRange(anchor.path, anchor.line, 0, anchor.line, 0), f"{indent}{code}\n"),),
               applicability)


_INDEX: dict = {}      # path -> (tree, {(start, end): [nodes]}) of the module last indexed


def _module(path: str):
    """The parsed module of `path` (None when it does not parse): source.parsed's one
    cached parse of the analysed text."""
    from .source import parsed
    return parsed(path)


def _col(path: str, line: int, byte_col: int) -> int:
    text = source_line(path, line)
    if text.isascii():
        return byte_col
    return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


def _start(path: str, node) -> tuple:
    return node.lineno, _col(path, node.lineno, node.col_offset)


def _end(path: str, node) -> tuple:
    return node.end_lineno, _col(path, node.end_lineno, node.end_col_offset)


def _node_at(path: str, rng: SourceRange, types: tuple):
    """The outermost node of one of `types` that spans exactly `rng`."""
    import ast
    tree = _module(path)
    if tree is None or rng.end_line is None or rng.end_column is None:
        return None
    want = ((rng.line, rng.column), (rng.end_line, rng.end_column))
    hit = _INDEX.get(path)
    index = hit[1] if hit is not None and hit[0] is tree else None
    if index is None:
        index = {}
        for node in ast.walk(tree):
            if getattr(node, "end_lineno", None) is not None:
                index.setdefault((_start(path, node), _end(path, node)), []).append(node)
        _INDEX.clear()                     # one module at a time: the one being analysed
        _INDEX[path] = (tree, index)
    return next((n for n in index.get(want, ()) if isinstance(n, types)), None)


def _segment(path: str, node) -> str:
    (l0, c0), (l1, c1) = _start(path, node), _end(path, node)
    if l0 == l1:
        return source_line(path, l0)[c0:c1]
    lines = [source_line(path, n) for n in range(l0, l1 + 1)]
    return lines[0][c0:] + "".join(lines[1:-1]) + lines[-1][:c1]


def _indent(text: str) -> str:
    return text[:len(text) - len(text.lstrip())]


def _insert(path: str, line: int, col: int, text: str) -> Edit:
    return Edit(SourceRange(path, line, col, line, col), text)


# --------------------------------------------------------------------------- dependency graph
def resource_expressions(kernel) -> dict:
    """rid -> the source text that names the resource (from the tasks' `src_resources` /
    `dst_resources` list literals and the graph's entries)."""
    import ast
    out: dict = {}
    for t in kernel.tasks:
        for key, rids in (("src_resources", t.src), ("dst_resources", t.dst)):
            rng = t.arg_ranges.get(key)
            node = _node_at(rng.path, rng, (ast.List, ast.Tuple)) if rng is not None else None
            if node is None or len(node.elts) != len(rids) or any(isinstance(e, ast.Starred) for e in node.elts):
                continue
            for rid, elt in zip(rids, node.elts):
                out.setdefault(rid, _segment(rng.path, elt))
    for e in kernel.graph:
        node = _node_at(e.range.path, e.range, (ast.expr,))
        if node is not None:
            out.setdefault(e.upstream, _segment(e.range.path, node))
    return {rid: text for rid, text in out.items() if text.replace(".", "").replace("_", "").isalnum()}


def _graph_dict(kernel):
    import ast
    rng = kernel.arg_ranges.get("resource_dependency_graph")
    if rng is None:
        return None, None
    node = _node_at(rng.path, rng, (ast.Dict, ast.Name))
    if isinstance(node, ast.Name):       # `graph = {...}` earlier: its last assignment before the call
        tree = _module(rng.path)
        assigns = [a for a in ast.walk(tree) if isinstance(a, ast.Assign) and a.lineno < rng.line
                   and len(a.targets) == 1 and isinstance(a.targets[0], ast.Name)
                   and a.targets[0].id == node.id]
        last = max(assigns, key=lambda a: a.lineno, default=None)
        node = last.value if last is not None and isinstance(last.value, ast.Dict) else None
    if node is None or any(k is None for k in node.keys):
        return None, None
    return rng.path, node


def _dict_key_of(path, node, rid, names):
    """The list value of key `rid` in the graph dict (None if absent or not a list)."""
    import ast
    for k, v in zip(node.keys, node.values):
        if _segment(path, k) == names.get(rid):
            return v if isinstance(v, (ast.List, ast.Tuple)) else False
    return None


def _add_entry(path, node, text) -> Edit:
    """Adds `text` (`key: [value]`) as the dict's last entry, in the dict's layout."""
    if not node.keys:
        line, col = node.lineno, _col(path, node.lineno, node.col_offset) + 1
        return _insert(path, line, col, text)
    last_key, last = node.keys[-1], node.values[-1]
    (ll, lc) = _end(path, last)
    close_line = node.end_lineno
    key_line = source_line(path, last_key.lineno)
    own_line = (close_line > ll and last_key.lineno > node.lineno
                and key_line[:_col(path, last_key.lineno, last_key.col_offset)].strip() == "")
    if not own_line:
        return _insert(path, ll, lc, f", {text}")
    indent = _indent(key_line)
    rest = source_line(path, ll)[lc:].lstrip()
    if rest.startswith(","):                              # trailing comma: a new line after it
        return _insert(path, ll + 1, 0, f"{indent}{text},\n")
    return _insert(path, ll, lc, f",\n{indent}{text}")


def _append_upstream(path, lst, text) -> Edit:
    if lst.elts:
        line, col = _end(path, lst.elts[-1])
        return _insert(path, line, col, f", {text}")
    line, col = _start(path, lst)
    return _insert(path, line, col + 1, text)


def add_to_graph(kernel, rid) -> Optional[Fix]:
    """Adds a task resource missing from `resource_dependency_graph` with the edges the
    tasks implement: `R: [srcs of the tasks that write R]` when tasks write R, else R is
    appended to the upstream lists of what the tasks reading R write."""
    path, node = _graph_dict(kernel)
    if node is None:
        return None
    names = resource_expressions(kernel)
    if rid not in names:
        return None
    ups = []
    for t in kernel.tasks:
        if rid in t.dst:
            ups += [u for u in t.src if u != rid and u not in ups]
    if ups:
        if any(u not in names for u in ups):
            return None
        entry = f"{names[rid]}: [{', '.join(names[u] for u in ups)}]"
        return Fix(f"Add '{entry}' to resource_dependency_graph", (_add_entry(path, node, entry),), "safe")
    downs = []
    for t in kernel.tasks:
        if rid in t.src:
            downs += [d for d in t.dst if d != rid and d not in downs]
    if not downs or any(d not in names for d in downs):
        return None
    edits, new = [], []
    for d in downs:
        lst = _dict_key_of(path, node, d, names)
        if lst is False:
            return None
        if lst is None:
            new.append(f"{names[d]}: [{names[rid]}]")
        else:
            edits.append(_append_upstream(path, lst, names[rid]))
    if new:
        edits.append(_add_entry(path, node, ", ".join(new)))
    what = ", ".join(f"'{names[rid]}' -> '{names[d]}'" for d in downs)
    return Fix(f"Add {what} to resource_dependency_graph", tuple(edits), "safe")


def replace_graph_edge(kernel, edge) -> Optional[Fix]:
    """For an edge `U -> D` no task backs: replaces `U` in D's upstream list by the sources
    of the tasks that write D (those not listed yet), or removes it when there are none."""
    import ast
    path, node = _graph_dict(kernel)
    if node is None:
        return None
    names = resource_expressions(kernel)
    d, u = edge.downstream, edge.upstream
    listed = {e.upstream for e in kernel.graph if e.downstream == d}
    ups = []
    for t in kernel.tasks:
        if d in t.dst:
            ups += [x for x in t.src if x != d and x not in listed and x not in ups]
    if any(x not in names for x in ups) or u not in names or d not in names:
        return None
    lst = next((v for v in node.values if isinstance(v, (ast.List, ast.Tuple))
                and any(_start(path, e) == (edge.range.line, edge.range.column) for e in v.elts)), None)
    if lst is None:
        return None
    i = next(i for i, e in enumerate(lst.elts) if _start(path, e) == (edge.range.line, edge.range.column))
    elt = lst.elts[i]
    (l0, c0), (l1, c1) = _start(path, elt), _end(path, elt)
    if ups:
        new = ", ".join(names[x] for x in ups)
        return Fix(f"Replace edge '{names[u]}' -> '{names[d]}' with "
                   + ", ".join(f"'{names[x]}' -> '{names[d]}'" for x in ups),
                   (Edit(SourceRange(path, l0, c0, l1, c1), new),), "unsafe")
    if i > 0:
        (l0, c0) = _end(path, lst.elts[i - 1])
    elif len(lst.elts) > 1:
        (l1, c1) = _start(path, lst.elts[1])
    return Fix(f"Remove edge '{names[u]}' -> '{names[d]}' from resource_dependency_graph",
               (Edit(SourceRange(path, l0, c0, l1, c1), ""),), "unsafe")


# --------------------------------------------------------------------------- work-queue tail
def _is_call_to(expr, name: str) -> bool:
    import ast
    if not isinstance(expr, ast.Call):
        return False
    f = expr.func
    return (isinstance(f, ast.Name) and f.id == name) or (isinstance(f, ast.Attribute) and f.attr == name)


def _parents(tree) -> dict:
    import ast
    out = {}
    for node in ast.walk(tree):
        for field_name, value in ast.iter_fields(node):
            if isinstance(value, list):
                for child in value:
                    if isinstance(child, ast.stmt):
                        out[id(child)] = (node, value)
    return out


def _receiver_of(stmt) -> Optional[str]:
    import ast
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
        return ast.dump(call.func.value)
    return None


def _with_run(stmt, parents) -> list:
    """`stmt` and its neighbouring sibling statements that call methods of the same object."""
    _, body = parents[id(stmt)]
    recv = _receiver_of(stmt)
    i = next(k for k, x in enumerate(body) if x is stmt)
    lo, hi = i, i
    while lo > 0 and recv is not None and _receiver_of(body[lo - 1]) == recv:
        lo -= 1
    while hi + 1 < len(body) and recv is not None and _receiver_of(body[hi + 1]) == recv:
        hi += 1
    return body[lo:hi + 1]


def move_to_tile_tail(ranges, title: str, applicability: str = "unsafe", *,
                      whole_run: bool = False) -> Optional[Fix]:
    """Moves the statements at `ranges` (WorkQueue calls, one statement each) to the end of
    the body of the enclosing `with work_tile_loop(...)`, in their order, re-indented like
    that body; with `whole_run`, each call's neighbouring calls on the same object move with
    it (so every finding of one misplaced epilogue offers the same edit). None when a call
    is not a statement of its own, the statements are not in one work_tile_loop, or moving
    them would leave a block empty."""
    import ast
    uniq = {(r.path, r.line, r.column): r for r in ranges if r is not None}
    ranges = [uniq[k] for k in sorted(uniq)]
    if not ranges or len({r.path for r in ranges}) != 1:
        return None
    path = ranges[0].path
    tree = _module(path)
    if tree is None:
        return None
    parents = _parents(tree)
    stmts = []
    for r in ranges:
        stmt = next((n for n in ast.walk(tree) if isinstance(n, ast.Expr) and n.lineno == r.line
                     and _col(path, n.lineno, n.col_offset) == r.column), None)
        if stmt is None or id(stmt) not in parents:
            return None
        for stmt in (_with_run(stmt, parents) if whole_run else [stmt]):
            if stmt in stmts:
                continue
            text0 = source_line(path, stmt.lineno)
            if text0[:_col(path, stmt.lineno, stmt.col_offset)].strip():
                return None                               # something precedes it on its line
            after = source_line(path, stmt.end_lineno)[_col(path, stmt.end_lineno, stmt.end_col_offset):]
            if after.strip() and not after.strip().startswith("#"):
                return None                               # `a(); b()`
            stmts.append(stmt)
    stmts.sort(key=lambda n: n.lineno)
    wtls = [n for n in ast.walk(tree) if isinstance(n, (ast.With, ast.AsyncWith))
            and any(_is_call_to(it.context_expr, "work_tile_loop") for it in n.items)
            and all(n.lineno < s.lineno and s.end_lineno <= n.end_lineno for s in stmts)]
    if not wtls:
        return None
    wtl = max(wtls, key=lambda n: n.lineno)                # the innermost
    moved = {id(s) for s in stmts}
    for s in stmts:
        _, body = parents[id(s)]
        if all(id(x) in moved for x in body):
            return None                                   # the block would be left empty
    tail = wtl.body[-1]
    if id(tail) in moved:
        return None
    indent = _indent(source_line(path, wtl.body[0].lineno))
    block = []
    edits = []
    for s in stmts:
        lines = [source_line(path, n) for n in range(s.lineno, s.end_lineno + 1)]
        own = _indent(lines[0])
        block += [indent + (ln[len(own):] if ln.startswith(own) else ln.lstrip()) for ln in lines]
        edits.append(Edit(SourceRange(path, s.lineno, 0, s.end_lineno + 1, 0), ""))
    text = "".join(ln if ln.endswith("\n") else ln + "\n" for ln in block)
    edits.append(_insert(path, tail.end_lineno + 1, 0, text))
    return Fix(title, tuple(edits), applicability)


def wrap_calls(first: SourceRange, last: SourceRange, open_op: str, close_op: str, title: str,
               applicability: str = "unsafe") -> Optional[Fix]:
    """Brackets the work calls from `first` to `last` (same block) with `<recv>.<open_op>()`
    before and `<recv>.<close_op>()` after."""
    a = insert_call(first, open_op, before=True, title=title, applicability=applicability)
    b = insert_call(last, close_op, before=False, title=title, applicability=applicability)
    if a is None or b is None or receiver(first) != receiver(last) or first.path != last.path:
        return None
    if _indent(source_line(first.path, first.line)) != _indent(source_line(last.path, last.line)):
        return None                                   # not one block: leave it to the user
    return Fix(title, a.edits + b.edits, applicability)
