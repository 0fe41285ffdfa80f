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

from .dtypes import annotation_dtypes

__all__ = ["MethodEffects", "method_effects", "function_effects", "resolve", "NOT_A_METHOD", "Effects",
           "returns_a_value"]


@dataclass(frozen=True)
class MethodEffects:
    """One method body on its own: `uses` are the attributes it reads (anything but a call
    `self.name(...)` and a condition), `writes` the attributes it assigns, `calls` the names
    called as `self.name(...)` (a method, or a callable attribute), `tested` the attributes
    a condition looks at (`if self.x is None:`: the method copes with an unset value, so
    it is never reported for them), `maybe` the attributes only some branches of a
    `cutlass.const_expr(...)` test read (the DSL traces the branch the constant picks
    only; one every branch reads is a use), `foreign` the (attribute, attribute) pairs it reads
    through another object it holds (`self.smem_a_resource.shared_smem_a`), `context` the
    fields of the kernel context it reads outside any condition (`stage_info.context.
    smem_base`: None when the kernel has no SMEM block, TS716)."""
    uses: frozenset
    writes: frozenset
    calls: frozenset
    tested: frozenset
    foreign: frozenset = frozenset()
    context: frozenset = frozenset()
    returns_value: bool = True   # False: no `return <value>` (and no yield): it returns None (TS328)
    # the value counts its exits return (TS328, `_return_counts`): `return a, b` 2, `return`
    # / `return None` / falling off the end 0, `return v` -1 (not known); None: a generator
    return_counts: Optional[frozenset] = None
    return_dtypes: Optional[tuple] = None   # the DSL types its return annotation names (TS329)
    returns_literal: bool = False           # an exit returns a Python number / bool literal
    maybe: frozenset = frozenset()


@dataclass(frozen=True)
class Effects:
    """A method with the `self.` calls it makes followed. `writes_any`: it calls a method
    whose body is not known, which may set anything (it then claims no use)."""
    uses: frozenset = frozenset()
    writes: frozenset = frozenset()
    writes_any: bool = False
    foreign: frozenset = frozenset()
    context: frozenset = frozenset()
    touched: frozenset = frozenset()     # every self.<name> read, set, tested or called (TS233)
    returns_value: bool = True           # the method's own body (TS328), calls not followed
    return_counts: Optional[frozenset] = None
    return_dtypes: Optional[tuple] = None
    returns_literal: bool = False


NOT_A_METHOD = object()     # lookup result: the name is not a method (a data attribute)


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
    """Effects of one `ast` function; None when it takes no `self`. One pass over the body
    (`ast.walk` per question costs several times more on long work methods)."""
    params = fn.args.posonlyargs + fn.args.args
    if not params:
        return None
    me = params[0].arg
    uses, writes, calls, tested, foreign, context, maybe = set(), set(), set(), set(), set(), set(), set()
    aliases = set()
    for n in fn.body:      # top-level `ctx = stage_info.context`
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) \
                and isinstance(n.value, ast.Attribute) and n.value.attr == "context":
            aliases.add(n.targets[0].id)
    Attribute, Name, Call, Load = ast.Attribute, ast.Name, ast.Call, ast.Load
    # (node, parent, inside a condition's test, inside a branch / nested function, inside
    # a branch of a `cutlass.const_expr` test)
    stack = [(n, fn, False, False, False) for n in fn.body]
    while stack:
        n, parent, in_test, in_branch, folded = stack.pop()
        t = type(n)
        if t is Attribute:
            v = n.value
            load = type(n.ctx) is Load
            called = type(parent) is Call and parent.func is n
            if type(v) is Name and v.id == me:
                a = n.attr
                if in_test:
                    tested.add(a)
                if not load:
                    writes.add(a)
                elif called:
                    calls.add(a)
                elif folded:
                    maybe.add(a)
                else:
                    uses.add(a)
                continue
            if load and not called and type(v) is Attribute and type(v.value) is Name and v.value.id == me:
                foreign.add((v.attr, n.attr))
            if load and not in_branch and (type(v) is Attribute and v.attr == "context"
                                           or type(v) is Name and v.id in aliases):
                context.add(n.attr)
        elif t is ast.AugAssign:
            tg = n.target
            if type(tg) is Attribute and type(tg.value) is Name and tg.value.id == me:
                uses.add(tg.attr)          # `self.n += 1` reads it first
        elif t is Call:
            f = n.func
            name = f.id if type(f) is Name else f.attr if type(f) is Attribute else None
            if name in ("setattr", "__setattr__") and len(n.args) >= 2 and type(n.args[0]) is Name \
                    and n.args[0].id == me and type(n.args[1]) is ast.Constant \
                    and isinstance(n.args[1].value, str):
                writes.add(n.args[1].value)
        if t in _TESTED:
            stack.append((n.test, n, True, True, folded))
            inner = folded
            if t is ast.If and _const_expr_call(n.test):
                # the DSL traces only the branch the constant picks: what one branch reads
                # may never be read (maybe); what every branch reads is read whichever
                # it picks (a use)
                inner = True
                if not folded and not in_test:
                    uses.update(_branch_reads(n.body, me) & _branch_reads(n.orelse, me))
            for c in ast.iter_child_nodes(n):
                if c is not n.test:
                    stack.append((c, n, in_test, True, inner))
            continue
        if t is ast.BoolOp:
            for c in n.values:
                stack.append((c, n, True, True, folded))
            continue
        branch = in_branch or t in _OPAQUE
        for c in ast.iter_child_nodes(n):
            stack.append((c, n, in_test, branch, folded))
    return MethodEffects(frozenset(uses), frozenset(writes), frozenset(calls), frozenset(tested),
                         frozenset(foreign), frozenset(context), _returns_value(fn), _return_counts(fn),
                         annotation_dtypes(fn.returns), _returns_literal(fn), frozenset(maybe))


def _branch_reads(stmts, me: str) -> set:
    """The attributes `me.<name>` that a branch's statements read (loads that are not
    calls of `me.<name>(...)`), nested functions and classes left out."""
    out = set()
    stack = list(stmts)
    while stack:
        n = stack.pop()
        t = type(n)
        if t in _SCOPES:
            continue
        if t is ast.Call and type(n.func) is ast.Attribute and type(n.func.value) is ast.Name \
                and n.func.value.id == me:
            stack.extend(n.args)
            stack.extend(k.value for k in n.keywords)
            continue
        if t is ast.Attribute and type(n.value) is ast.Name and n.value.id == me and type(n.ctx) is ast.Load:
            out.add(n.attr)
            continue
        stack.extend(ast.iter_child_nodes(n))
    return out


def returns_a_value(fn) -> bool:
    """Whether the `ast` function `fn` may return a value (TS328, TS518): both front ends
    ask this of a user's function."""
    return _returns_value(fn)


def _const_expr_call(test) -> bool:
    """`cutlass.const_expr(...)` / `const_expr(...)`: a condition the DSL decides while it
    traces the function."""
    if type(test) is not ast.Call:
        return False
    f = test.func
    return (type(f) is ast.Attribute and f.attr == "const_expr") or (type(f) is ast.Name and f.id == "const_expr")


def _returns_value(fn) -> bool:
    """Whether `fn` may return a value: a `return <value>` (not `return None`) in its own
    body, or a `yield` / `await` (a generator or coroutine is not judged)."""
    stack = list(fn.body)
    while stack:
        n = stack.pop()
        t = type(n)
        if t is ast.Return:
            v = n.value
            if v is not None and not (type(v) is ast.Constant and v.value is None):
                return True
        elif t is ast.Yield or t is ast.YieldFrom or t is ast.Await:
            return True
        elif t not in _SCOPES:
            stack.extend(ast.iter_child_nodes(n))
    return False


def _return_counts(fn) -> Optional[frozenset]:
    """How many values each exit of `fn` returns, as the consumer-work wrapper counts them
    (None: none; a tuple or list: one per item; anything else: one): `return` / `return
    None` 0, a tuple / list display without `*` its length, any other value -1 (a value
    whose count the text does not tell: `return v` may return a tuple). Falling off the
    end adds 0 (also when that end cannot be reached: the rule asks whether *every* exit
    mismatches, and an extra 0 never hides one that matches a non-empty `returns=`). None
    for a generator or coroutine."""
    counts = set()
    stack = list(fn.body)
    while stack:
        n = stack.pop()
        t = type(n)
        if t is ast.Return:
            v = n.value
            if v is None or (type(v) is ast.Constant and v.value is None):
                counts.add(0)
            elif type(v) in (ast.Tuple, ast.List) and not any(type(e) is ast.Starred for e in v.elts):
                counts.add(len(v.elts))
            else:
                counts.add(-1)
        elif t is ast.Yield or t is ast.YieldFrom or t is ast.Await:
            return None
        elif t not in _SCOPES:
            stack.extend(ast.iter_child_nodes(n))
    if not fn.body or type(fn.body[-1]) not in (ast.Return, ast.Raise):
        counts.add(0)
    return frozenset(counts)


def _returns_literal(fn) -> bool:
    """Whether an exit of `fn` returns a Python number or bool written as a literal (alone
    or in a tuple): the DSL accepts those for any numeric task-local variable, whatever the
    method's annotation says (TS329 does not judge such a method)."""
    stack = list(fn.body)
    while stack:
        n = stack.pop()
        t = type(n)
        if t is ast.Return and n.value is not None:
            vals = n.value.elts if type(n.value) in (ast.Tuple, ast.List) else [n.value]
            for v in vals:
                if type(v) is ast.UnaryOp and type(v.operand) is ast.Constant:
                    v = v.operand
                if type(v) is ast.Constant and type(v.value) in (int, float, bool):
                    return True
        elif t not in _SCOPES:
            stack.extend(ast.iter_child_nodes(n))
    return False


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


_TESTED = (ast.If, ast.IfExp, ast.While, ast.Assert)
_OPAQUE = (ast.Try, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef) + (
    (ast.Match,) if hasattr(ast, "Match") else ())
if hasattr(ast, "TryStar"):
    _OPAQUE = _OPAQUE + (ast.TryStar,)


Lookup = Callable[[str], Union[MethodEffects, None, object]]


def resolve(name: str, lookup: Lookup) -> Effects:
    """`name`'s effects with its `self.m(...)` calls followed. `lookup(m)` gives the
    MethodEffects of method `m`, NOT_A_METHOD when `m` is a data attribute (a call of it
    reads it), or None when `m` is a method whose body is unknown."""
    uses, writes, tested, foreign, context, touched = set(), set(), set(), set(), set(), set()
    writes_any = False
    own = lookup(name)
    returns_value = own.returns_value if isinstance(own, MethodEffects) else True
    return_counts = own.return_counts if isinstance(own, MethodEffects) else None
    return_dtypes = own.return_dtypes if isinstance(own, MethodEffects) else None
    returns_literal = own.returns_literal if isinstance(own, MethodEffects) else False
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
            touched.add(m)
            continue
        if eff is None:
            writes_any = True
            continue
        touched |= eff.uses | eff.writes | eff.tested | eff.calls | eff.maybe
        uses |= eff.uses
        writes |= eff.writes
        tested |= eff.tested
        foreign |= eff.foreign
        context |= eff.context
        stack.extend(eff.calls)
    if writes_any:
        # an unknown callee may set (or check) anything: claim no use
        return Effects(frozenset(), frozenset(writes), True, context=frozenset(context),
                       touched=frozenset(touched), returns_value=returns_value, return_counts=return_counts,
                       return_dtypes=return_dtypes, returns_literal=returns_literal)
    return Effects(frozenset(uses - writes - tested), frozenset(writes), False,
                   frozenset(p for p in foreign if p[0] not in writes), frozenset(context),
                   frozenset(touched), returns_value, return_counts, return_dtypes, returns_literal)


def class_table(work_names, method_names, lookup) -> tuple:
    """({work method: Effects}, what any of `method_names` may set, None when a body is
    unknown) of one class, given its `lookup`; both front ends build it here."""
    table = {name: resolve(name, lookup) for name in work_names}
    settable = set()
    for n in sorted(method_names):
        eff = lookup(n)
        if eff is None:
            return table, None
        if eff is not NOT_A_METHOD:
            settable |= eff.writes
    return table, frozenset(settable)


def fill(methods: dict, table: dict, held: dict) -> None:
    """Copies a class table onto one resource's WorkMethodModels; `held` maps the
    attributes that hold other resources to their rids."""
    for name, wm in methods.items():
        eff = table.get(name)
        if eff is not None:
            wm.uses, wm.writes, wm.writes_any = eff.uses, eff.writes, eff.writes_any
            wm.foreign_uses = frozenset((held[a], b) for a, b in eff.foreign if a in held)
            wm.context_uses = eff.context
            wm.touched = eff.touched
            wm.returns_value = eff.returns_value
            wm.return_counts = eff.return_counts
            wm.return_dtypes = eff.return_dtypes
            wm.returns_literal = eff.returns_literal
