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

    @property
    def ts_calls(self) -> bool:
        return bool(self.callee_roots)


def _root_name(node):
    while isinstance(node, (cst.Attribute, cst.Subscript, cst.Call)):
        node = node.value if not isinstance(node, cst.Call) else node.func
    return node.value if isinstance(node, cst.Name) else None


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
        if isinstance(f, cst.Attribute) and f.attr.value in MUTATORS:
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
