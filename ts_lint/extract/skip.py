"""What a statement would change if it ran: used when the interpreter cannot run it.

A branch under an unknown condition (or a loop over an unknown iterable) is not executed;
every name it would bind becomes UNKNOWN, every `obj.attr = ...` marks that attribute
UNKNOWN, and every container it would mutate (`xs.append(...)`, `d[k] = ...`) is marked
tainted, so a model built from it is known to be incomplete.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update",
                      "setdefault", "add", "discard", "popitem", "sort", "reverse"})


@dataclass
class Effects:
    names: set = field(default_factory=set)
    attrs: set = field(default_factory=set)        # (base name, attribute)
    mutated: set = field(default_factory=set)      # base names of mutated containers
    callee_roots: set = field(default_factory=set)
    returns: bool = False
    breaks: bool = False                           # a break / continue of an enclosing loop
    any_call: bool = False
    yields: bool = False                           # a yield of the enclosing function
    global_keys: set = field(default_factory=set)  # module names written through `globals()["name"]`
    global_any: bool = False                       # a `globals()` write whose names are not literal

    @property
    def ts_calls(self) -> bool:
        return bool(self.callee_roots)


def _root_name(node):
    while isinstance(node, (cst.Attribute, cst.Subscript, cst.Call)):
        node = node.value if not isinstance(node, cst.Call) else node.func
    return node.value if isinstance(node, cst.Name) else None


def _is_globals(node) -> bool:
    """`globals()`."""
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "globals" \
        and not node.args


def _literal_key(node):
    """The string of a plain string literal subscript / argument, else None."""
    if isinstance(node, cst.SimpleString) and "\\" not in node.value and node.value[:1] in "'\"":
        q = 3 if node.value[:3] in ('"""', "'''") else 1
        return node.value[q:-q]
    return None


def _globals_write(sub: cst.Subscript, eff: Effects):
    """`globals()[key] = ...` / `del globals()[key]`."""
    sl = sub.slice[0].slice if len(sub.slice) == 1 else None
    key = _literal_key(sl.value) if isinstance(sl, cst.Index) else None
    if key is None:
        eff.global_any = True
    else:
        eff.global_keys.add(key)


def _globals_call(call: cst.Call, method: str, eff: Effects):
    """`globals().update({...}, k=v)` / `.setdefault("k", v)` / `.pop("k")` / anything else."""
    keys = {a.keyword.value for a in call.args if a.keyword is not None}
    pos = [a for a in call.args if a.keyword is None]
    if method == "update" and all(a.star == "" for a in call.args):
        for a in pos:
            if not isinstance(a.value, cst.Dict):
                eff.global_any = True
                return
            for el in a.value.elements:
                k = _literal_key(el.key) if isinstance(el, cst.DictElement) else None
                if k is None:
                    eff.global_any = True
                    return
                keys.add(k)
    elif method in ("setdefault", "pop") and pos and _literal_key(pos[0].value) is not None:
        keys.add(_literal_key(pos[0].value))
    else:
        eff.global_any = True
        return
    eff.global_keys |= keys


def _targets(t, eff: Effects):
    if isinstance(t, cst.Name):
        eff.names.add(t.value)
    elif isinstance(t, (cst.Tuple, cst.List)):
        for e in t.elements:
            _targets(e.value, eff)
    elif isinstance(t, cst.StarredElement):
        _targets(t.value, eff)
    elif isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name):
        eff.attrs.add((t.value.value, t.attr.value))
    elif isinstance(t, cst.Subscript):
        if _is_globals(t.value):
            _globals_write(t, eff)
            return
        r = _root_name(t.value)
        if r:
            eff.mutated.add(r)


class _Collector(cst.CSTVisitor):
    def __init__(self, eff: Effects):
        self.eff = eff
        self.depth = 0           # nested function / class / lambda depth
        self.loops = 0           # loops inside the skipped code

    def visit_FunctionDef(self, node):
        self.eff.names.add(node.name.value)
        self.depth += 1

    def leave_FunctionDef(self, node):
        self.depth -= 1

    def visit_ClassDef(self, node):
        self.eff.names.add(node.name.value)
        self.depth += 1

    def leave_ClassDef(self, node):
        self.depth -= 1

    def visit_Lambda(self, node):
        self.depth += 1

    def leave_Lambda(self, node):
        self.depth -= 1

    def visit_Return(self, node):
        if self.depth == 0:
            self.eff.returns = True

    def visit_For(self, node):
        if self.depth == 0:
            _targets(node.target, self.eff)
        self.loops += 1

    def leave_For(self, node):
        self.loops -= 1

    def visit_While(self, node):
        self.loops += 1

    def leave_While(self, node):
        self.loops -= 1

    def visit_Break(self, node):
        if self.depth == 0 and self.loops == 0:
            self.eff.breaks = True

    def visit_Continue(self, node):
        if self.depth == 0 and self.loops == 0:
            self.eff.breaks = True

    def visit_Assign(self, node):
        if self.depth == 0:
            for t in node.targets:
                _targets(t.target, self.eff)

    def visit_AnnAssign(self, node):
        if self.depth == 0:
            _targets(node.target, self.eff)

    def visit_AugAssign(self, node):
        if self.depth == 0:
            _targets(node.target, self.eff)

    def visit_NamedExpr(self, node):
        if self.depth == 0:
            _targets(node.target, self.eff)

    def visit_WithItem(self, node):
        if self.depth == 0 and node.asname is not None:
            _targets(node.asname.name, self.eff)

    def visit_ImportAlias(self, node):
        if self.depth == 0:
            if node.asname is not None:
                _targets(node.asname.name, self.eff)
            else:
                n = node.name
                while isinstance(n, cst.Attribute):
                    n = n.value
                if isinstance(n, cst.Name):
                    self.eff.names.add(n.value)

    def visit_Del(self, node):
        if self.depth == 0:
            t = node.target
            for x in ([e.value for e in t.elements] if isinstance(t, (cst.Tuple, cst.List)) else [t]):
                if isinstance(x, cst.Subscript) and _is_globals(x.value):
                    _globals_write(x, self.eff)

    def visit_Yield(self, node):
        if self.depth == 0:
            self.eff.yields = True

    def visit_MatchAs(self, node):
        if self.depth == 0 and node.name is not None:
            self.eff.names.add(node.name.value)

    def visit_MatchStar(self, node):
        if self.depth == 0 and node.name is not None:
            self.eff.names.add(node.name.value)

    def visit_Call(self, node):
        if self.depth:
            return
        self.eff.any_call = True
        f = node.func
        if isinstance(f, cst.Attribute) and _is_globals(f.value) and f.attr.value in MUTATORS:
            _globals_call(node, f.attr.value, self.eff)
        elif isinstance(f, cst.Attribute) and f.attr.value in MUTATORS:
            r = _root_name(f.value)
            if r:
                self.eff.mutated.add(r)
        r = _root_name(f)
        if r:
            self.eff.callee_roots.add(r)


def effects(node, cache: dict = None) -> Effects:
    """What `node` may change; `cache` (node -> Effects) avoids re-walking it in loops."""
    if cache is not None:
        eff = cache.get(node)
        if eff is not None:
            return eff
    eff = Effects()
    if isinstance(node, (cst.For, cst.While)):
        # the loop statement itself is skipped: its own break / continue stay inside it
        c = _Collector(eff)
        c.loops = 1
        if isinstance(node, cst.For):
            _targets(node.target, eff)
        for part in (node.body, node.orelse):
            if part is not None:
                part.visit(c)
        if isinstance(node, cst.For):
            node.iter.visit(c)
        else:
            node.test.visit(c)
    else:
        node.visit(_Collector(eff))
    if cache is not None:
        cache[node] = eff
    return eff
