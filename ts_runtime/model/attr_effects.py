"""Which `self.<attribute>`s a resource method sets and which it reads (TS237).

Reference-style resources keep device state in dataclass fields that start as `None`
(`shared_smem_a: cutlass.Array = field(init=False, default=None)`) and are set by a setup
work method (`init_load_state()` -> `self.shared_smem_a = cutlass.Array(...)`); later work
methods use them (`self.shared_smem_a.subview(...)`). A schedule that calls the user
before the setter fails while the kernel is traced: `None.subview`, or a value that a
different task created. The rule needs, per work method, the attributes it sets and the
ones it reads, following its `self.helper(...)` calls.

Both front ends hand each method over as an `ast` function: the runtime parses the text
`inspect.getsource` gives (`method_effects`), ts-lint passes the `ast` node it already
has for every function of the module (`function_effects`). The analysis is written
once, over the standard `ast`, so that the runtime needs no libcst.
"""
from __future__ import annotations

import ast
import functools
import textwrap
from dataclasses import dataclass
from typing import Callable, Optional, Tuple, Union

__all__ = ["MethodEffects", "method_effects", "function_effects", "resolve", "NOT_A_METHOD", "Effects"]


@dataclass(frozen=True)
class MethodEffects:
    """One method body on its own: `uses` are the attributes it reads (anything but a call
    `self.name(...)` and a condition), `writes` the attributes it assigns, `calls` the names
    called as `self.name(...)` (a method, or a callable attribute), `tested` the attributes
    a condition looks at (`if self.x is None:`: the method copes with an unset value, so
    it is never reported for them), `foreign` the (attribute, attribute) pairs it reads
    through another object it holds (`self.smem_a_resource.shared_smem_a`), `context` the
    fields of the kernel context it reads outside any condition (`stage_info.context.
    smem_base`: None when the kernel has no SMEM block, TS716)."""
    uses: frozenset
    writes: frozenset
    calls: frozenset
    tested: frozenset
    foreign: frozenset = frozenset()
    context: frozenset = frozenset()


@dataclass(frozen=True)
class Effects:
    """A method with the `self.` calls it makes followed. `writes_any`: it calls a method
    whose body is not known, which may set anything (it then claims no use)."""
    uses: frozenset = frozenset()
    writes: frozenset = frozenset()
    writes_any: bool = False
    foreign: frozenset = frozenset()
    context: frozenset = frozenset()


NOT_A_METHOD = object()     # lookup result: the name is not a method (a data attribute)
_CONDITIONS = (ast.If, ast.IfExp, ast.While, ast.Assert)
_BRANCHES = (ast.If, ast.IfExp, ast.While, ast.Try, ast.BoolOp) + ((ast.Match,) if hasattr(ast, "Match") else ())


@functools.lru_cache(maxsize=2048)
def method_effects(source: str) -> Optional[MethodEffects]:
    """Effects of the first function defined in `source` (a `def` with its decorators, at
    any indentation); None when it does not parse or takes no `self`."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except (SyntaxError, ValueError):
        return None
    fn = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    return None if fn is None else function_effects(fn)


def function_effects(fn) -> Optional[MethodEffects]:
    """Effects of one `ast` function; None when it takes no `self`."""
    params = fn.args.posonlyargs + fn.args.args
    if not params:
        return None
    me = params[0].arg
    uses, writes, calls, tested, foreign, context = set(), set(), set(), set(), set(), set()
    call_funcs = set()
    _context_reads(fn.body, context)

    def own_attr(n) -> Optional[str]:
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == me:
            return n.attr
        return None

    for node in ast.walk(fn):
        if isinstance(node, _CONDITIONS) or isinstance(node, ast.BoolOp):
            for sub in ast.walk(node.test if isinstance(node, _CONDITIONS) else node):
                a = own_attr(sub)
                if a is not None:
                    tested.add(a)
        elif isinstance(node, ast.AugAssign):
            a = own_attr(node.target)
            if a is not None:
                uses.add(a)          # `self.n += 1` reads it first
        elif isinstance(node, ast.Call):
            call_funcs.add(id(node.func))
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name in ("setattr", "__setattr__") and len(node.args) >= 2 and isinstance(node.args[0], ast.Name) \
                    and node.args[0].id == me and isinstance(node.args[1], ast.Constant) \
                    and isinstance(node.args[1].value, str):
                writes.add(node.args[1].value)
    for node in ast.walk(fn):
        if not isinstance(node, ast.Attribute):
            continue
        a = own_attr(node)
        if a is not None:
            if not isinstance(node.ctx, ast.Load):
                writes.add(a)
            elif id(node) in call_funcs:
                calls.add(a)
            else:
                uses.add(a)
            continue
        inner = own_attr(node.value)
        if inner is not None and isinstance(node.ctx, ast.Load) and id(node) not in call_funcs:
            foreign.add((inner, node.attr))
    return MethodEffects(frozenset(uses), frozenset(writes), frozenset(calls), frozenset(tested),
                         frozenset(foreign), frozenset(context))


def _context_reads(nodes, out: set) -> None:
    """`<x>.context.<name>` loads (also through a local `ctx = <x>.context`), not under a
    condition or in a nested function."""
    aliases = set()
    for n in nodes:      # top-level `ctx = stage_info.context`
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) \
                and isinstance(n.value, ast.Attribute) and n.value.attr == "context":
            aliases.add(n.targets[0].id)
    stack = list(nodes)
    while stack:
        n = stack.pop()
        if isinstance(n, _BRANCHES) or isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                                      ast.ClassDef)):
            continue
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load) and (
                isinstance(n.value, ast.Attribute) and n.value.attr == "context"
                or isinstance(n.value, ast.Name) and n.value.id in aliases):
            out.add(n.attr)
        stack.extend(ast.iter_child_nodes(n))


Lookup = Callable[[str], Union[MethodEffects, None, object]]


def resolve(name: str, lookup: Lookup) -> Effects:
    """`name`'s effects with its `self.m(...)` calls followed. `lookup(m)` gives the
    MethodEffects of method `m`, NOT_A_METHOD when `m` is a data attribute (a call of it
    reads it), or None when `m` is a method whose body is unknown."""
    uses, writes, tested, foreign, context = set(), set(), set(), set(), set()
    writes_any = False
    seen = set()
    stack = [name]
    while stack:
        m = stack.pop()
        if m in seen:
            continue
        seen.add(m)
        eff = lookup(m)
        if eff is NOT_A_METHOD:
            uses.add(m)
            continue
        if eff is None:
            writes_any = True
            continue
        uses |= eff.uses
        writes |= eff.writes
        tested |= eff.tested
        foreign |= eff.foreign
        context |= eff.context
        stack.extend(eff.calls)
    if writes_any:
        # an unknown callee may set (or check) anything: claim no use
        return Effects(frozenset(), frozenset(writes), True, context=frozenset(context))
    return Effects(frozenset(uses - writes - tested), frozenset(writes), False,
                   frozenset(p for p in foreign if p[0] not in writes), frozenset(context))

