"""TS136 from source: a name an `@schedule` body reads where it certainly has no value.

A flow analysis over the libcst FunctionDef of the schedule (never executing it), with
Python's scoping: a name bound anywhere in the body is local to it for the whole body
(read before its first binding: UnboundLocalError); any other name must be bound in an
enclosing function, the module, or the builtins (else NameError).

Only reads that certainly fail are reported: the statement is reached on every path
(nothing before it may leave the function or the loop it is in), and no path reaching
it binds the name. `with` bodies run once at capture time; a `for` body is followed on
its first iteration only when its iteration count is known to be >= 1; an `if` on a
known condition follows the taken branch; other branches, `while` / `try` / `match`
bodies, a comprehension's body when its iterable may be empty, a generator
expression's body, and nested function / class / lambda bodies are not reported in, and
what they bind counts as possibly bound afterwards. Known values come from the
interpreter's closure scope of the schedule (`lookup`), at the time it is called.
"""
from __future__ import annotations

import builtins
import re
from typing import Callable, Dict, List, Optional, Set, Tuple

import libcst as cst

_BUILTINS = frozenset(dir(builtins)) | frozenset({
    "__name__", "__file__", "__doc__", "__package__", "__loader__", "__spec__", "__builtins__",
    "__cached__", "__annotations__", "__dict__", "__class__", "__path__",
})
# source text that can bind module names invisibly: the not-defined check gives up
# one pattern per construct, each starting with a literal (an alternation of them scans
# the whole module several times slower)
_DYNAMIC = tuple(re.compile(p) for p in (
    r"import\s*\(?\s*\*", r"exec\s*\(", r"__builtins__", r"builtins\s*[.,)]", r"vars\s*\(\s*\)",
    r"sys\.modules\["))
# `globals()["name"]` binds (or reads) that one name; `globals().get(...)` only reads
_GLOBALS = re.compile(r"\bglobals\s*\(\s*\)(\s*\[\s*(['\"])(\w+)\2\s*\]|\s*\.\s*get\b)?")
_GLOBAL = re.compile(r"^[ \t]*global[ \t]+([\w \t,]+)", re.M)
_NO = object()                 # "value not known"

D, M, U = "bound", "maybe", "unbound"


# ---------------------------------------------------------------------------- bindings
def _target_names(t, out: Set[str]) -> None:
    if isinstance(t, cst.Name):
        out.add(t.value)
    elif isinstance(t, (cst.Tuple, cst.List)):
        for e in t.elements:
            _target_names(e.value, out)
    elif isinstance(t, cst.StarredElement):
        _target_names(t.value, out)


def _alias_name(alias) -> Optional[str]:
    if alias.asname is not None:
        n = alias.asname.name
        return n.value if isinstance(n, cst.Name) else None
    node = alias.name
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


class _Binders:
    """Names a scope binds (not in nested function / class / lambda bodies; comprehension
    targets are the comprehension's own, walrus targets the scope's): filled by
    `_collect` (statements) and `_PatternNames` (match patterns)."""
    __slots__ = ("names", "globals", "nonlocals")

    def __init__(self):
        self.names: Set[str] = set()
        self.globals: Set[str] = set()
        self.nonlocals: Set[str] = set()


class _PatternNames(cst.CSTVisitor):
    """Capture names of a `case` pattern (`case Point(x=px)`, `case [a, *rest]`)."""

    def __init__(self, out: Set[str]):
        self.out = out

    def visit_MatchAs(self, node):
        if node.name is not None:
            self.out.add(node.name.value)

    def visit_MatchStar(self, node):
        if node.name is not None:
            self.out.add(node.name.value)

    def visit_MatchMapping(self, node):
        if node.rest is not None:
            self.out.add(node.rest.value)


_SEQUENCES = frozenset({cst.Tuple, cst.List, cst.Set})
_MATCH = getattr(cst, "Match", None)
_KIND: dict = {}


def _kind(t) -> tuple:
    """(compound statement, small statement) of a node class, cached: an isinstance on
    libcst's abstract bases goes through ABCMeta.__instancecheck__ on every call."""
    k = _KIND.get(t)
    if k is None:
        k = _KIND[t] = (issubclass(t, cst.BaseCompoundStatement), issubclass(t, cst.BaseSmallStatement))
    return k


def _compound(t) -> bool:
    return _kind(t)[0]


def _small(t) -> bool:
    return _kind(t)[1]
_COMPREHENSIONS = frozenset({cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp})
_LITERALS = frozenset({cst.SimpleString, cst.Integer, cst.Float, cst.Imaginary, cst.Ellipsis})


def _params(params: cst.Parameters) -> list:
    out = [*params.posonly_params, *params.params, *params.kwonly_params]
    for p in (params.star_arg, params.star_kwarg):
        if type(p) is cst.Param:
            out.append(p)
    return out


class _Walrus(cst.CSTVisitor):
    """`x := ...` targets of a scope (also in its comprehensions, not in nested scopes)."""

    def __init__(self, out: Set[str]):
        self.out = out

    def visit_NamedExpr(self, node):
        _target_names(node.target, self.out)

    def visit_FunctionDef(self, node):
        for d in node.decorators:
            d.visit(self)
        return False

    def visit_ClassDef(self, node):
        for d in node.decorators:
            d.visit(self)
        for a in (*node.bases, *node.keywords):
            a.visit(self)
        return False

    def visit_Lambda(self, node):
        return False


def _stmt_list(b) -> list:
    if isinstance(b, (cst.IndentedBlock, cst.SimpleStatementSuite)):
        return list(b.body)
    return [b] if b is not None else []


def _collect(stmts, acc: _Binders) -> None:
    """The names statements bind, by a direct walk of the statement structure (libcst's
    visitor is too slow for whole kernel / host functions); walrus targets are added
    separately (`_Walrus`), only when the text has one."""
    for st in stmts:
        t = type(st)
        if t is cst.SimpleStatementLine or t is cst.SimpleStatementSuite:
            _collect(st.body, acc)
        elif t is cst.Assign:
            for x in st.targets:
                _target_names(x.target, acc.names)
        elif t is cst.AugAssign or t is cst.AnnAssign:
            _target_names(st.target, acc.names)
        elif t is cst.Import or t is cst.ImportFrom:
            if not isinstance(st.names, cst.ImportStar):
                for a in st.names:
                    n = _alias_name(a)
                    if n:
                        acc.names.add(n)
        elif t is cst.Del:
            _target_names(st.target, acc.names)
        elif t is cst.Global:
            acc.globals.update(n.name.value for n in st.names)
        elif t is cst.Nonlocal:
            acc.nonlocals.update(n.name.value for n in st.names)
        elif t is cst.FunctionDef or t is cst.ClassDef:
            acc.names.add(st.name.value)
        elif t is cst.For:
            _target_names(st.target, acc.names)
            _collect(_stmt_list(st.body), acc)
            if st.orelse is not None:
                _collect(_stmt_list(st.orelse.body), acc)
        elif t is cst.With:
            for item in st.items:
                if item.asname is not None:
                    _target_names(item.asname.name, acc.names)
            _collect(_stmt_list(st.body), acc)
        elif t is cst.If:
            _collect(_stmt_list(st.body), acc)
            if st.orelse is not None:
                _collect([st.orelse] if isinstance(st.orelse, cst.If) else _stmt_list(st.orelse.body), acc)
        elif t is cst.While:
            _collect(_stmt_list(st.body), acc)
            if st.orelse is not None:
                _collect(_stmt_list(st.orelse.body), acc)
        elif not _compound(t):
            pass                                             # Expr, Return, Pass, ...: no binding
        elif hasattr(st, "handlers"):                        # try / try*
            _collect(_stmt_list(st.body), acc)
            for h in st.handlers:
                if h.name is not None:
                    _target_names(h.name.name, acc.names)
                _collect(_stmt_list(h.body), acc)
            for extra in (st.orelse, st.finalbody):
                if extra is not None:
                    _collect(_stmt_list(extra.body), acc)
        elif t is _MATCH:
            for c in st.cases:
                c.pattern.visit(_PatternNames(acc.names))
                _collect(_stmt_list(c.body), acc)
        else:                                                # anything newer: its blocks
            for part in (st, getattr(st, "orelse", None), getattr(st, "finalbody", None)):
                body = getattr(part, "body", None)
                if body is not None:
                    _collect(_stmt_list(body), acc)


class _CountingSet(set):
    """A set that counts how often each name was added: how many binding sites a name
    has in a scope (`_single_bindings`)."""

    def __init__(self):
        super().__init__()
        self.counts: Dict[str, int] = {}

    def add(self, name) -> None:
        self.counts[name] = self.counts.get(name, 0) + 1
        super().add(name)

    def update(self, names) -> None:
        for n in names:
            self.add(n)


def _single_bindings(fn: cst.FunctionDef, walrus: bool) -> Set[str]:
    """The names the function body binds at exactly one site (a loop target, a `+=` and,
    with `walrus`, a `:=` target are sites of their own)."""
    acc = _Binders()
    names = acc.names = _CountingSet()
    _collect(_stmt_list(fn.body), acc)
    if walrus:
        w = _Walrus(names)
        for st in _stmt_list(fn.body):
            st.visit(w)
    return {n for n, c in names.counts.items() if c == 1}


def _bindings(stmts, walrus: bool) -> _Binders:
    acc = _Binders()
    _collect(stmts, acc)
    if walrus:
        w = _Walrus(acc.names)
        for st in stmts:
            st.visit(w)
    return acc


def scope_bindings(fn: cst.FunctionDef, walrus: bool = True) -> Tuple[Set[str], Set[str], Set[str], Set[str]]:
    """(params, names bound in the body, global-declared, nonlocal-declared); `walrus`:
    whether the body may hold `:=` (False skips looking for it)."""
    v = _bindings(_stmt_list(fn.body), walrus)
    params = {p.name.value for p in _params(fn.params)}
    return params, v.names, v.globals, v.nonlocals


def module_bindings(module: cst.Module, walrus: bool = True) -> Set[str]:
    """Names bound by the module's own statements (at any block depth, not in functions
    or class bodies; class-level names are not visible to functions)."""
    v = _bindings(list(module.body), walrus)
    return v.names | v.globals


# ---------------------------------------------------------------------------- enclosing scopes
def _blocks(st) -> list:
    """The statement lists directly inside a compound statement."""
    out = []
    for attr in ("body", "orelse", "finalbody"):
        b = getattr(st, attr, None)
        if b is None:
            continue
        if isinstance(b, cst.If):                # elif
            out.extend(_blocks(b) + [[b]])
            continue
        inner = getattr(b, "body", None)
        if isinstance(b, (cst.IndentedBlock, cst.SimpleStatementSuite)):
            out.append(list(b.body))
        elif inner is not None and isinstance(inner, (cst.IndentedBlock, cst.SimpleStatementSuite)):
            out.append(list(inner.body))
    for h in getattr(st, "handlers", ()) or ():
        out.append(list(h.body.body))
    for c in getattr(st, "cases", ()) or ():
        out.append(list(c.body.body))
    return out


# the TS capture blocks: their bodies run exactly once while the schedule is captured
_TS_BLOCKS = frozenset({"domain_loop", "work_tile_loop", "when_true", "when_false", "skippable",
                        "first_iter", "last_iter", "every"})


def _ts_block(expr) -> bool:
    if not isinstance(expr, cst.Call):
        return False
    f = expr.func
    name = f.attr.value if isinstance(f, cst.Attribute) else f.value if isinstance(f, cst.Name) else None
    return name in _TS_BLOCKS


# ---------------------------------------------------------------------------- known values
def _plain(v) -> bool:
    if v is None or type(v) in (int, bool, float, str):
        return True
    if type(v) in (tuple, list):
        return len(v) < 10_000 and all(_plain(x) for x in v)
    return False


# certain sources of DSL run-time values (`_Flow.dynamic`: TS973, and the branches of a
# run-time `if` a JIT function traces both of): functions that return one (those of
# _DYN_TUPLES a tuple of them), and the DSL number types, which keep one dynamic
_DYN_TUPLES = frozenset(f"cutlass.cute.arch.{n}" for n in ("thread_idx", "block_idx"))
_DYN_CALLS = frozenset(f"cutlass.cute.arch.{n}" for n in ("warp_idx", "lane_idx", "block_idx_in_cluster")) | \
    frozenset({"cutlass.experimental.primitives.elect_sync"})
_DSL_NUMBERS = frozenset(f"cutlass.{n}" for n in (
    "Int8", "Int16", "Int32", "Int64", "Uint8", "Uint16", "Uint32", "Uint64", "Float16", "BFloat16",
    "Float32", "Float64", "Boolean"))
_IDENTITY_OPS = (cst.Is, cst.IsNot, cst.In, cst.NotIn)
_NONE, _ALWAYS, _LOOP = frozenset(), frozenset({"always"}), frozenset({"loop"})


def _qualname(flow, node) -> Optional[str]:
    """The qualified name of an imported function a `name` / `mod.attr` expression names
    (QualRef or a builtin of the interpreter), or None."""
    v = flow.value_obj(node) if type(node) is cst.Name else _NO
    if type(node) is cst.Attribute:
        base = _qualname(flow, node.value)
        if base is not None:
            return f"{base}.{node.attr.value}"
        v = flow.value_obj(node)
    if v is _NO or v is None:
        return None
    from .values import BuiltinFunc, QualRef
    q = v.qualname if isinstance(v, (QualRef, BuiltinFunc)) else None
    return q if isinstance(q, str) and q else None


# ---------------------------------------------------------------------------- the analysis
class _Flow:
    def __init__(self, name: str, fn: cst.FunctionDef, free_ok: Callable[[str], bool],
                 check_free: bool, lookup: Callable[[str], object], report, builtin_range: bool = False,
                 walrus: bool = True, branches: bool = False):
        self.schedule = name
        # `branches`: also judge the reads in each branch of an `if` on an unknown
        # condition, as reads that fail if that branch runs (`report` then gets a fourth
        # argument, True for them); `cond` counts the enclosing such branches
        self.branches = branches
        self.cond = 0
        params, bound, glob, nonloc = scope_bindings(fn, walrus)
        self.locals = (params | bound) - glob - nonloc
        self.state: Dict[str, str] = {n: (D if n in params else U) for n in self.locals}
        self.free_ok = free_ok
        self.check_free = check_free
        self.lookup = lookup
        self.report = report
        self.certain = True
        self.shadow: List[Set[str]] = []
        self.seen: Set[str] = set()
        self.found = False
        self.failed = False     # (branches mode) a read of the current branch certainly fails
        self.builtin_range = builtin_range      # `range` is not rebound outside the schedule
        # local constants: a local the body binds once, by `name = <known value>` run where
        # the flow is certain (so that `for i in range_constexpr(n)` with `n = tile // 32`
        # is known to run); made on first use
        self._fn, self._walrus = fn, walrus
        self._single: Optional[Set[str]] = None
        self.consts: Dict[str, object] = {}
        # locals certainly bound to a DSL run-time value, with the conditions under which
        # it is one (`dynamic`); `traced`: how many of the `cond` enclosing branches are of
        # an `if` whose test is certainly a run-time value (a JIT function traces both)
        self.dyn: Dict[str, frozenset] = {}
        self.traced = 0

    # -------------------------------------------------------------- names
    def check(self, node: cst.Name):
        name = node.value
        if not self.certain or name in self.seen or any(name in s for s in self.shadow):
            return
        if name in self.locals:
            if self.state.get(name) == U:
                self.seen.add(name)
                self.found = self.failed = True
                self._report(node, name, True)
        elif self.check_free and not self.free_ok(name):
            self.seen.add(name)
            self.found = self.failed = True
            self._report(node, name, False)

    def _report(self, node, name: str, local: bool):
        if self.branches:
            # True: under an `if` on an unknown condition; "traced": only under `if`s on a
            # certainly run-time value, whose branches a JIT function traces both
            self.report(node, name, local, True if self.cond > self.traced else ("traced" if self.cond else False))
        else:
            self.report(node, name, local)

    def bind(self, target):
        names: Set[str] = set()
        _target_names(target, names)
        if self.dyn:
            for n in names:
                self.dyn.pop(n, None)
        for n in names:
            if n in self.locals and not any(n in s for s in self.shadow):
                self.state[n] = D
        self.read_target(target)

    def read_target(self, t):
        """The parts of an assignment target that are evaluated (x.a / x[i])."""
        if isinstance(t, (cst.Tuple, cst.List)):
            for e in t.elements:
                self.read_target(e.value)
        elif isinstance(t, cst.StarredElement):
            self.read_target(t.value)
        elif isinstance(t, cst.Attribute):
            self.read(t.value)
        elif isinstance(t, cst.Subscript):
            self.read(t.value)
            for s in t.slice:
                self.read(s)

    # -------------------------------------------------------------- run-time values
    def dynamic(self, node) -> frozenset:
        """When `node` is certainly a DSL run-time value, as alternatives (it is one if any
        holds; empty: not known to be one): "always"; "loop", where a domain loop traces
        the method (`stage_info.loop_offset`, a Python int in a schedule's head or tail);
        "attr:<name>", where `self.<name>` holds one when the method is traced (known only
        along the kernel's work calls: `runtime_truths`). Certain sources only: the thread
        / block / warp index functions of `cute.arch`, `elect_sync()`, the loop offset,
        locals bound to them, and arithmetic, comparisons (not `is` / `in`), indexing and
        DSL number casts of such values. (A DSL number made from a Python value,
        `cutlass.Int32(0)`, is a compile-time constant, and a routed work input is one
        when its producer made it from constants: neither is judged.)"""
        t = type(node)
        if t is cst.Name:
            n = node.value
            if any(n in sh for sh in self.shadow):
                return _NONE
            return self.dyn.get(n, _NONE)
        if t is cst.Attribute:
            base = self._base(node.value)
            if base == "stage":
                return _LOOP if node.attr.value == "loop_offset" else _NONE
            if base == "self":
                return frozenset({"attr:" + node.attr.value})
            return _NONE
        if t is cst.Call:
            qual = _qualname(self, node.func)
            if qual in _DYN_CALLS:
                return _ALWAYS
            if qual in _DSL_NUMBERS and len(node.args) == 1 and node.args[0].keyword is None \
                    and not node.args[0].star:
                return self.dynamic(node.args[0].value)
            return _NONE
        if t is cst.Subscript:
            # an item of `cute.arch.thread_idx()` (a tuple of run-time values)
            v = node.value
            if type(v) is cst.Call and _qualname(self, v.func) in _DYN_TUPLES:
                return _ALWAYS
            return _NONE
        if t is cst.BinaryOperation:
            return self.dynamic(node.left) | self.dynamic(node.right)
        if t is cst.UnaryOperation:
            return _NONE if type(node.operator) is cst.Not else self.dynamic(node.expression)
        if t is cst.Comparison:
            if any(type(c.operator) in _IDENTITY_OPS for c in node.comparisons):
                return _NONE
            got = self.dynamic(node.left)
            for c in node.comparisons:
                got = got | self.dynamic(c.comparator)
            return got
        return _NONE

    def _base(self, node) -> Optional[str]:
        """"self" / "stage" for the receiver / StageInfo parameter of a method (the
        subclass of a work-method walk knows them), else None."""
        return None

    def _self_set(self, attr: str, alts: frozenset) -> None:
        """`self.<attr> = <value that is a run-time one under alts>` (for a subclass)."""

    def _dyn_assign(self, s) -> None:
        """A certain `name = <run-time value>` (also `tx, _, _ = cute.arch.thread_idx()`)."""
        if len(s.targets) != 1:
            return
        target = s.targets[0].target
        t = type(target)
        if t is cst.Name:
            alts = self.dynamic(s.value)
            if alts:
                self.dyn[target.value] = alts
        elif t is cst.Attribute and self._base(target.value) == "self":
            alts = self.dynamic(s.value)
            if alts:
                self._self_set(target.attr.value, alts)
        elif t in (cst.Tuple, cst.List) and type(s.value) is cst.Call \
                and _qualname(self, s.value.func) in _DYN_TUPLES:
            for el in target.elements:
                if type(el.value) is cst.Name:
                    self.dyn[el.value.value] = _ALWAYS

    # -------------------------------------------------------------- known values
    def value(self, node):
        """The value of a small expression of free names and literals, else _NO."""
        if isinstance(node, cst.Integer):
            try:
                return int(node.evaluated_value)
            except Exception:
                return _NO
        if isinstance(node, cst.Name):
            n = node.value
            if n in ("True", "False", "None"):
                return {"True": True, "False": False, "None": None}[n]
            if any(n in s for s in self.shadow):
                return _NO
            if n in self.locals:
                return self.consts.get(n, _NO)
            try:
                v = self.lookup(n)
            except Exception:
                return _NO
            return v if _plain(v) else _NO
        if isinstance(node, cst.Attribute):
            base = self.value_obj(node.value)
            if base is _NO:
                return _NO
            from .values import ClassVal, InstanceVal, NamespaceVal
            attr = node.attr.value
            if isinstance(base, InstanceVal):
                v = base.attrs.get(attr, _NO)
            elif isinstance(base, ClassVal):
                v = base.namespace.get(attr, _NO)
            elif isinstance(base, NamespaceVal):
                v = base.attrs.get(attr, _NO)
            else:
                return _NO
            return v if v is not _NO and _plain(v) else _NO
        if isinstance(node, cst.Subscript):
            # `mma_tiler_mnk[2]` of a known tuple / list constant
            base = self.value(node.value)
            if not isinstance(base, (tuple, list)) or len(node.slice) != 1 or \
                    not isinstance(node.slice[0].slice, cst.Index):
                return _NO
            i = self.value(node.slice[0].slice.value)
            if type(i) is not int or not -len(base) <= i < len(base):
                return _NO
            v = base[i]
            return v if _plain(v) else _NO
        if isinstance(node, cst.UnaryOperation):
            v = self.value(node.expression)
            if v is _NO:
                return _NO
            if isinstance(node.operator, cst.Not):
                return not v
            if isinstance(v, (int, float)) and isinstance(node.operator, cst.Minus):
                return -v
            if isinstance(v, (int, float)) and isinstance(node.operator, cst.Plus):
                return v
            return _NO
        if isinstance(node, cst.BinaryOperation):
            a, b = self.value(node.left), self.value(node.right)
            if a is _NO or b is _NO or not all(type(x) in (int, bool) for x in (a, b)):
                return _NO
            op = type(node.operator)
            try:
                if op is cst.Add:
                    return a + b
                if op is cst.Subtract:
                    return a - b
                if op is cst.Multiply:
                    return a * b
                if op is cst.FloorDivide:
                    return a // b
                if op is cst.Modulo:
                    return a % b
            except Exception:
                return _NO
            return _NO
        if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
            a, b = self.value(node.left), self.value(node.comparisons[0].comparator)
            if a is _NO or b is _NO:
                return _NO
            op = type(node.comparisons[0].operator)
            try:
                return {cst.Equal: lambda: a == b, cst.NotEqual: lambda: a != b,
                        cst.LessThan: lambda: a < b, cst.LessThanEqual: lambda: a <= b,
                        cst.GreaterThan: lambda: a > b, cst.GreaterThanEqual: lambda: a >= b,
                        cst.Is: lambda: a is b, cst.IsNot: lambda: a is not b}.get(op, lambda: _NO)()
            except Exception:
                return _NO
        if isinstance(node, cst.BooleanOperation):
            a = self.value(node.left)
            if a is _NO:
                return _NO
            if isinstance(node.operator, cst.And):
                return self.value(node.right) if a else a
            return a if a else self.value(node.right)
        return _NO

    def _constant(self, name: str, expr) -> None:
        """Records `name = expr` as a local constant when `name` has no other binding
        site in the body and `expr`'s value is known (ints, bools, strings...)."""
        if name not in self.locals or any(name in s for s in self.shadow):
            return
        if self._single is None:
            self._single = _single_bindings(self._fn, self._walrus)
        if name not in self._single:
            return
        v = self.value(expr)
        if v is not _NO and _plain(v):
            self.consts[name] = v

    def value_obj(self, node):
        """Like value(), for the base of an attribute: any interpreter object."""
        if isinstance(node, cst.Name):
            n = node.value
            if n in self.locals or any(n in s for s in self.shadow):
                return _NO
            try:
                return self.lookup(n)
            except Exception:
                return _NO
        if isinstance(node, cst.Attribute):
            base = self.value_obj(node.value)
            from .values import ClassVal, InstanceVal, NamespaceVal
            if isinstance(base, (InstanceVal, NamespaceVal)):
                return base.attrs.get(node.attr.value, _NO)
            if isinstance(base, ClassVal):
                return base.namespace.get(node.attr.value, _NO)
        return _NO

    def truth(self, node) -> Optional[bool]:
        v = self.value(node)
        if v is _NO:
            return None
        try:
            return bool(v)
        except Exception:
            return None

    def count(self, it) -> Optional[int]:
        """The number of items of a `for` iterable when known."""
        if isinstance(it, (cst.Tuple, cst.List)):
            if any(isinstance(e, cst.StarredElement) for e in it.elements):
                return None
            return len(it.elements)
        if isinstance(it, cst.Call):
            f = it.func
            fname = f.attr.value if isinstance(f, cst.Attribute) else None
            if isinstance(f, cst.Name) and f.value == "range" and "range" not in self.locals \
                    and not any("range" in s for s in self.shadow) and self.builtin_range:
                fname = "range"
            if fname not in ("range", "range_constexpr"):
                return None
            if any(a.keyword is not None or a.star for a in it.args) or not 1 <= len(it.args) <= 3:
                return None
            vals = [self.value(a.value) for a in it.args]
            if any(type(v) is not int for v in vals):
                return None
            try:
                return len(range(*vals))
            except Exception:
                return None
        v = self.value(it)
        if isinstance(v, (tuple, list, str)):
            return len(v)
        return None

    # -------------------------------------------------------------- regions
    def uncertain(self, fn):
        """Runs `fn` with reports off; what it binds is possibly bound afterwards."""
        before = dict(self.state)
        certain = self.certain
        self.certain = False
        try:
            fn()
        finally:
            self.certain = certain
        for n, s in self.state.items():
            b = before.get(n, U)
            self.state[n] = D if b == D else (M if (s != U or b == M) else U)

    # -------------------------------------------------------------- statements
    def block(self, body) -> Optional[str]:
        """Runs a statement list; returns 'loop' / 'func' when it certainly leaves there."""
        if isinstance(body, (cst.IndentedBlock, cst.SimpleStatementSuite)):
            body = body.body
        for st in body:
            out = self.stmt(st)
            if out:
                return out
        return None

    def stmt(self, st) -> Optional[str]:
        if _small(type(st)):                              # the body of `with x: y = 1`
            return self.small(st)
        if isinstance(st, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in st.body:
                out = self.small(small)
                if out:
                    return out
            return None
        if isinstance(st, cst.If):
            return self.if_(st)
        if isinstance(st, cst.For):
            return self.for_(st)
        if isinstance(st, cst.With):
            for item in st.items:
                self.read(item.item)
                if item.asname is not None:
                    self.bind(item.asname.name)
            if all(_ts_block(item.item) for item in st.items):
                return self.block(st.body)
            # another context manager might swallow the body's NameError
            self.region(lambda: self.block(st.body), st.body)
            return None
        if isinstance(st, cst.While):
            self.read(st.test)
            self.region(lambda: (self.block(st.body), st.orelse and self.block(st.orelse.body)), st)
            return None
        if isinstance(st, cst.FunctionDef):
            for d in st.decorators:
                self.read(d.decorator)
            for p in _params(st.params):
                if p.default is not None:
                    self.read(p.default)
            self.bind(st.name)
            return None
        if isinstance(st, cst.ClassDef):
            for d in st.decorators:
                self.read(d.decorator)
            for a in (*st.bases, *st.keywords):
                self.read(a.value)
            self.bind(st.name)
            return None
        if isinstance(st, (cst.Try, getattr(cst, "TryStar", cst.Try))):
            def run():
                self.block(st.body)
                for h in st.handlers:
                    if h.type is not None:
                        self.read(h.type)
                    if h.name is not None:
                        self.bind(h.name.name)
                    self.block(h.body)
                if st.orelse is not None:
                    self.block(st.orelse.body)
                if st.finalbody is not None:
                    self.block(st.finalbody.body)
            self.region(run, st)
            return None
        match = getattr(cst, "Match", None)
        if match is not None and isinstance(st, match):
            self.read(st.subject)
            self.region(lambda: [self._case(c) for c in st.cases], st)
            return None
        # anything else: whatever it binds is possibly bound, nothing is reported in it
        self.region(lambda: None, st, binds=True)
        return None

    def _case(self, c):
        names: Set[str] = set()
        c.pattern.visit(_PatternNames(names))
        for n in names:
            if n in self.locals:
                self.state[n] = D
        if c.guard is not None:
            self.read(c.guard)
        self.block(c.body)

    def region(self, fn, node, binds: bool = False):
        """An uncertain region: afterwards, code is certain only if the region cannot leave."""
        def run():
            fn()
            if binds:
                for n in _bindings([node], True).names:
                    if n in self.locals:
                        self.state[n] = D
        self.uncertain(run)
        if _may_leave(node):
            self.certain = False

    def if_(self, st: cst.If) -> Optional[str]:
        self.read(st.test)
        t = self.truth(st.test) if self.certain else None
        if t is True:
            return self.block(st.body)
        if t is False:
            if isinstance(st.orelse, cst.If):
                return self.if_(st.orelse)
            if isinstance(st.orelse, cst.Else):
                return self.block(st.orelse.body)
            return None

        def run():
            self.block(st.body)
            if isinstance(st.orelse, cst.If):
                self.if_(st.orelse)
            elif isinstance(st.orelse, cst.Else):
                self.block(st.orelse.body)
        if self.branches and self.certain:
            self._branches(st)
        else:
            self.uncertain(run)
        if _may_leave(st.body) or (st.orelse is not None and _may_leave(st.orelse)):
            self.certain = False
        return None

    def _branches(self, st: cst.If) -> None:
        """An `if` on an unknown condition, in `branches` mode: each branch from the state
        before it, its failing reads reported as conditional; afterwards a name is bound if
        both branches bind it, unbound if neither does, else possibly bound. A branch that
        certainly fails when it runs (a read in it certainly fails: `srcs += [wq]` with
        `srcs` unbound) never reaches the code after the `if`: the state after it is the
        other branch's."""
        entry, seen = dict(self.state), set(self.seen)
        outer_failed = self.failed
        ends, fails = [], []
        traced = "always" in self.dynamic(st.test)
        self.cond += 1
        self.traced += traced
        try:
            for part in (st.body, st.orelse):
                # each branch from the state before the `if`: a name read in both is
                # judged in both (the run takes one of them)
                self.state, self.certain, self.failed, self.seen = dict(entry), True, False, set(seen)
                if part is None:
                    pass
                elif isinstance(part, cst.If):
                    self.if_(part)
                elif isinstance(part, cst.Else):
                    self.block(part.body)
                else:
                    self.block(part)
                ends.append(self.state)
                fails.append(self.failed)
        finally:
            self.cond -= 1
            self.traced -= traced
            self.certain = True
            self.seen = seen
        # (the enclosing branch fails for certain if it did before, or if both of these do)
        self.failed = outer_failed or (len(fails) == 2 and all(fails))
        a, b = ends if len(ends) == 2 else (entry, entry)
        if len(fails) == 2 and fails[0] != fails[1]:
            a = b = ends[1] if fails[0] else ends[0]
        self.state = {n: (a.get(n, U) if a.get(n, U) == b.get(n, U) and a.get(n, U) != M else
                          (M if (a.get(n, U) != U or b.get(n, U) != U) else U))
                      for n in set(entry) | set(a) | set(b)}

    def for_(self, st: cst.For) -> Optional[str]:
        self.read(st.iter)
        n = self.count(st.iter) if self.certain else None
        if n is not None and n >= 1:
            before = dict(self.state)
            certain = self.certain
            self.bind(st.target)
            out = self.block(st.body)
            # a break / continue under an unknown condition ends only the loop (or iteration)
            self.certain = certain and not _may_leave(st.body, loops_ok=True)
            first = dict(self.state)
            body_names: Set[str] = set()
            v = _bindings(_stmt_list(st.body), True)
            _target_names(st.target, body_names)
            body_names |= v.names
            for name in body_names:
                if name in self.locals:
                    self.state[name] = D if first.get(name) == D else (M if before.get(name) != D else D)
            if out == "func":
                return "func"
            if st.orelse is not None:
                self.region(lambda: self.block(st.orelse.body), st.orelse)
            return None
        if n == 0:
            if st.orelse is not None:
                return self.block(st.orelse.body)
            return None

        def run():
            self.bind(st.target)
            self.block(st.body)
            if st.orelse is not None:
                self.block(st.orelse.body)
        self.uncertain(run)
        if _may_leave(st.body, loops_ok=True) or (st.orelse is not None and _may_leave(st.orelse)):
            self.certain = False
        return None

    def small(self, s) -> Optional[str]:
        if isinstance(s, cst.Expr):
            self.read(s.value)
        elif isinstance(s, cst.Assign):
            self.read(s.value)
            for t in s.targets:
                self.bind(t.target)
            if len(s.targets) == 1 and isinstance(s.targets[0].target, cst.Name) and self.certain \
                    and not self.cond:
                self._constant(s.targets[0].target.value, s.value)
            if self.certain and not self.cond:
                self._dyn_assign(s)
        elif isinstance(s, cst.AnnAssign):
            if s.value is not None:
                self.read(s.value)
                self.bind(s.target)
        elif isinstance(s, cst.AugAssign):
            if isinstance(s.target, cst.Name):
                self.check(s.target)
            else:
                self.read_target(s.target)
            self.read(s.value)
            self.bind(s.target)
        elif isinstance(s, cst.Return):
            if s.value is not None:
                self.read(s.value)
            return "func"
        elif isinstance(s, cst.Raise):
            if s.exc is not None:
                self.read(s.exc)
            if s.cause is not None:
                self.read(s.cause.item)
            return "func"
        elif isinstance(s, (cst.Break, cst.Continue)):
            return "loop"
        elif isinstance(s, cst.Assert):
            self.read(s.test)
            if s.msg is not None:
                self.uncertain(lambda: self.read(s.msg))
        elif isinstance(s, cst.Del):
            names: Set[str] = set()
            _target_names(s.target, names)
            self.read_target(s.target)
            for n in names:
                if n in self.locals:
                    self.state[n] = M
        elif isinstance(s, (cst.Import, cst.ImportFrom)):
            if isinstance(s, cst.ImportFrom) and isinstance(s.names, cst.ImportStar):
                return None
            for a in s.names:
                n = _alias_name(a)
                if n and n in self.locals:
                    self.state[n] = D
        return None

    # -------------------------------------------------------------- expressions
    def read(self, node):
        if node is None:
            return
        # dispatch on the exact node class: isinstance on libcst's ABC-based classes goes
        # through ABCMeta.__instancecheck__, a measurable share of a warm lint
        t = type(node)
        if t is cst.Name:
            self.check(node)
        elif t is cst.Attribute:
            self.read(node.value)
        elif t is cst.Call:      # the common shapes by their fields: libcst's
            self.read(node.func)              # `children` runs a visitor per node
            for a in node.args:
                self.read(a.value)
        elif t is cst.Arg:
            self.read(node.value)
        elif t is cst.BinaryOperation:
            self.read(node.left)
            self.read(node.right)
        elif t in _SEQUENCES:
            for el in node.elements:
                self.read(el.value)
        elif t is cst.Subscript:
            self.read(node.value)
            for el in node.slice:
                sl = el.slice
                if type(sl) is cst.Index:
                    self.read(sl.value)
                else:
                    self.read(sl.lower)
                    self.read(sl.upper)
                    self.read(sl.step)
        elif t is cst.Comparison:
            self.read(node.left)
            for c in node.comparisons:
                self.read(c.comparator)
        elif t is cst.UnaryOperation:
            self.read(node.expression)
        elif t is cst.NamedExpr:
            self.read(node.value)
            names: Set[str] = set()
            _target_names(node.target, names)
            for n in names:
                if n in self.locals:
                    self.state[n] = D
        elif t is cst.Lambda:
            for p in _params(node.params):
                if p.default is not None:
                    self.read(p.default)
        elif t is cst.IfExp:
            self.read(node.test)
            self.uncertain(lambda: (self.read(node.body), self.read(node.orelse)))
        elif t is cst.BooleanOperation:
            self.read(node.left)
            self.uncertain(lambda: self.read(node.right))
        elif t in _COMPREHENSIONS:
            self.comprehension(node)
        elif t in _LITERALS:
            return
        else:
            for c in node.children:
                if isinstance(c, (cst.BaseParenthesizableWhitespace, cst.Comma, cst.LeftParen,
                                  cst.RightParen)):
                    continue
                self.read(c)

    def comprehension(self, node):
        gens = []
        f = node.for_in
        while f is not None:
            gens.append(f)
            f = f.inner_for_in
        first = gens[0]
        self.read(first.iter)
        n = self.count(first.iter) if self.certain else None
        names: Set[str] = set()
        for g in gens:
            _target_names(g.target, names)
        self.shadow.append(names)
        try:
            def rest():
                for g in gens[1:]:
                    self.read(g.iter)
                    for c in g.ifs:
                        self.read(c.search)
                if isinstance(node, cst.DictComp):
                    self.read(node.key)
                    self.read(node.value)
                else:
                    self.read(node.elt)
            lazy = isinstance(node, cst.GeneratorExp)
            if n is not None and n >= 1 and not lazy:
                for c in first.ifs:
                    self.read(c.search)
                if first.ifs or len(gens) > 1:
                    self.uncertain(rest)
                else:
                    rest()
            else:
                def all_():
                    for c in first.ifs:
                        self.read(c.search)
                    rest()
                self.uncertain(all_)
        finally:
            self.shadow.pop()


class _Leaves(cst.CSTVisitor):
    def __init__(self, loops_ok: bool):
        self.found = False
        self.depth = 1 if loops_ok else 0

    def visit_Return(self, node):
        self.found = True

    def visit_Raise(self, node):
        self.found = True

    def visit_Break(self, node):
        if self.depth == 0:
            self.found = True

    visit_Continue = visit_Break

    def visit_For(self, node):
        self.depth += 1

    def leave_For(self, node):
        self.depth -= 1

    visit_While, leave_While = visit_For, leave_For

    def visit_FunctionDef(self, node):
        return False

    def visit_ClassDef(self, node):
        return False

    def visit_Lambda(self, node):
        return False


def _may_leave(node, loops_ok: bool = False) -> bool:
    """Whether `node` holds a return / raise (or a break / continue of an enclosing loop).

    Only statements can leave, so the walk goes through statement blocks and never into
    expressions (a libcst visitor over whole kernel bodies made the unbound-name
    analysis the largest cost of a lint); statement kinds it does not know are walked
    by the `_Leaves` visitor."""
    stack = [(node, 1 if loops_ok else 0)]
    while stack:
        n, depth = stack.pop()
        t = type(n)
        if t is cst.Return or t is cst.Raise:
            return True
        if t is cst.Break or t is cst.Continue:
            if depth == 0:
                return True
        elif t in _BLOCKS:
            stack.extend((x, depth) for x in n.body)
        elif t is cst.For or t is cst.While:
            # the visitor's depth covers the whole loop statement, its `else` too
            stack.append((n.body, depth + 1))
            if n.orelse is not None:
                stack.append((n.orelse, depth + 1))
        elif t is cst.If:
            stack.append((n.body, depth))
            if n.orelse is not None:
                stack.append((n.orelse, depth))
        elif t is cst.Try or t is _TRY_STAR:
            stack.append((n.body, depth))
            stack.extend((h.body, depth) for h in n.handlers)
            for extra in (n.orelse, n.finalbody):
                if extra is not None:
                    stack.append((extra.body, depth))
        elif t is cst.Else or t is cst.With:
            stack.append((n.body, depth))
        elif t is _MATCH:
            stack.extend((c.body, depth) for c in n.cases)
        elif t in _NO_LEAVING or _kind(t)[1]:
            continue                  # a nested scope, or a small statement of another kind
        else:
            v = _Leaves(depth > 0)
            n.visit(v)
            if v.found:
                return True
    return False


_BLOCKS = frozenset({cst.IndentedBlock, cst.SimpleStatementLine, cst.SimpleStatementSuite})
_TRY_STAR = getattr(cst, "TryStar", None)
_NO_LEAVING = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})


# ---------------------------------------------------------------------------- entry point
def analyze(name: str, fn: cst.FunctionDef, enclosing: Optional[List[cst.FunctionDef]],
            module_names: Optional[Set[str]], lookup: Callable[[str], object], walrus: bool = True,
            branches: bool = False):
    """[(Name node, name, local)] of the reads in `fn` that certainly fail.

    `enclosing`: the FunctionDefs around `fn` (None: unknown; the not-defined check is
    then off, as it is when `module_names` is None). `branches`: entries are (Name node,
    name, local, conditional), and the reads in the branches of an `if` on an unknown
    condition that fail when that branch runs are included, conditional."""
    out = []
    outer: Set[str] = set()
    check_free = enclosing is not None and module_names is not None
    if check_free:
        for e in enclosing:
            params, bound, glob, nonloc = scope_bindings(e, walrus)
            outer |= params | bound | nonloc
            module_names = module_names | glob

    def free_ok(n: str) -> bool:
        return n in outer or n in module_names or n in _BUILTINS

    flow = _Flow(name, fn, free_ok if check_free else (lambda n: True), check_free, lookup,
                 lambda node, n, local, *cond: out.append((node, n, local) + cond),
                 builtin_range=check_free and "range" not in outer and "range" not in module_names,
                 walrus=walrus, branches=branches)
    flow.block(fn.body)
    return out


def _word_match(pattern, source: str) -> bool:
    """A match of `pattern` that does not continue an identifier (`exec(`, not `my_exec(`)."""
    for m in pattern.finditer(source):
        i = m.start()
        if i == 0 or not (source[i - 1].isalnum() or source[i - 1] == "_"):
            return True
    return False


def module_names_of(src, module, source: str) -> Optional[Set[str]]:
    """Every name the module binds (None when it may bind names invisibly)."""
    if any(_word_match(p, source) for p in _DYNAMIC):
        return None
    names = module_bindings(module, ":=" in source)
    for m in _GLOBALS.finditer(source):
        if m.group(1) is None:
            return None
        if m.group(3):
            names.add(m.group(3))
    for m in _GLOBAL.finditer(source):
        names.update(x.strip() for x in m.group(1).split(",") if x.strip())
    return names


def _enclosing(src, func) -> Optional[List[cst.FunctionDef]]:
    """The FunctionDefs around `func`, outermost first, from the interpreter's call scopes
    (None when a scope on the way is not a known function call)."""
    chain = []
    s = func.closure
    while s is not None and s.kind != "module":
        if s.kind == "function":
            f = getattr(s, "func", None)
            if f is None or not isinstance(f.node, cst.FunctionDef):
                return None
            chain.append(src.full(f.node) if src is not None else f.node)
        s = s.parent
    chain.reverse()
    return chain


def name_error_message(name: str, local: bool, where: str) -> str:
    """TS962's message for a read that raises NameError in `where` (a quoted function or a
    described work method)."""
    if local:
        return f"local variable '{name}' is read before it is assigned in {where}"
    return f"name '{name}' is not defined in {where}"


def check_schedule(it, func) -> list:
    """TS136 findings of the @schedule function `func` (a FuncVal), emitted once per read."""
    from ts_runtime.rules.structure import unbound_name_message
    return check_function(it, func, "TS136", lambda name, local: unbound_name_message(name, func.name, local))


def _module_facts(it, src) -> tuple:
    """(every name the module of `src` binds or None when it may bind names invisibly,
    whether it has a walrus), cached per file for one analysis."""
    ctx = it.ctx
    caches = getattr(ctx, "_ts136_module", None)
    if caches is None:
        caches = ctx._ts136_module = {}
    facts = caches.get(id(src))
    if facts is None:
        module = src.module if src is not None else it.module_node
        source = getattr(src, "source", None) or ctx.pos.source or ""
        facts = caches[id(src)] = (module_names_of(src, module, source), ":=" in source)
    return facts


def main_module_names(it) -> Optional[Set[str]]:
    """Every name the analysed file's module binds (None when it may bind names invisibly)."""
    return _module_facts(it, it.ctx.src)[0] if it.ctx.src is not None else None


def failing_reads(it, func, conditional: bool = False) -> list:
    """[(Name node, name, local)] of the reads in `func` (a FuncVal) that certainly fail
    (memoised per def and closure); [] when the analysis cannot tell. `conditional`:
    [(Name node, name, local, conditional)], also with the reads in a branch of an `if`
    on an unknown condition that fail when the branch runs (for a caller that knows
    whether it runs: the interpreter reaching the read)."""
    found = _failing_reads(it, func)
    if conditional:
        return found
    return [f[:3] for f in found if not f[3]]


def _failing_reads(it, func) -> list:
    ctx = it.ctx
    memo = getattr(ctx, "_unbound_memo", None)
    if memo is None:
        memo = ctx._unbound_memo = {}
    key = (id(func.node), id(func.closure))
    hit = memo.get(key)
    if hit is not None:
        return hit
    found = []
    try:
        src = ctx.src
        fn = src.full(func.node) if src is not None else func.node
        if isinstance(fn, cst.FunctionDef):
            from .imports import source_of
            src = source_of(ctx, func.node)    # the file that defines it (imports.py)
            names, walrus = _module_facts(it, src)
            closure = func.closure
            found = _analyze_reusing(func.name, fn, _enclosing(src, func), names,
                                     lambda n: it.lookup(n, closure), walrus)
    except RecursionError:
        found = []
    except Exception:               # the lint never fails on its own analysis
        found = []
    memo[key] = found
    return found


# id(FunctionDef) -> (the node, enclosing nodes, module names, walrus, {name: value looked up},
# findings): a warm re-lint places the unchanged functions' parsed units again (the same
# node objects), and their analysis is reused when everything it read is the same
_READS: dict = {}


def _analyze_reusing(name, fn, enclosing, module_names, lookup, walrus) -> list:
    """analyze(), reused across analyses of the same parsed function when the enclosing
    functions, the module's names and every plain value the analysis looked up are the
    same; an analysis that looked up an object (not plain data) is not kept."""
    key = id(fn)
    encl = tuple(map(id, enclosing)) if enclosing is not None else None
    hit = _READS.get(key)
    if hit is not None and hit[0] is fn and hit[1] == encl and hit[2] == module_names and hit[3] == walrus:
        deps = hit[4]
        try:
            if all(_same(lookup(n), v) for n, v in deps.items()):
                return hit[5]
        except Exception:
            pass
    deps, cacheable = {}, [True]

    def recording(n):
        v = lookup(n)
        if _plain(v):
            deps[n] = v
        else:
            cacheable[0] = False
        return v

    found = analyze(name, fn, enclosing, module_names, recording, walrus, branches=True)
    if cacheable[0]:
        if len(_READS) > 4096:
            _READS.clear()
        _READS[key] = (fn, encl, set(module_names) if module_names is not None else None, walrus, deps, found)
    return found


def _same(a, b) -> bool:
    return type(a) is type(b) and a == b


def check_function(it, func, code: str, message) -> list:
    """`code` findings (message(name, local)) of the reads in `func` (a FuncVal) that
    certainly fail, emitted once per read."""
    from .context import make
    ctx = it.ctx
    memo = getattr(ctx, "_ts136_memo", None)
    if memo is None:
        memo = ctx._ts136_memo = {}
    key = (id(func.node), id(func.closure), code)
    hit = memo.get(key)
    if hit is not None:
        return hit        # the same def in the same scope (a constructor run again): emitted already
    found = failing_reads(it, func)
    seen = getattr(ctx, "_ts136_seen", None)
    if seen is None:
        seen = ctx._ts136_seen = set()
    diags = []
    for node, name, local in found:
        rng = ctx.range(node)
        d = make(code, message(name, local), rng)
        diags.append(d)
        pos = (rng.line, rng.column)
        if pos not in seen:
            seen.add(pos)
            ctx.emit(d)
    memo[key] = diags
    return diags
