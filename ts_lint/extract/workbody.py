"""Python errors in the work methods a kernel's schedules call, found without running them.

The kernel compiles (calls) every work method its schedules call, as `method(self,
stage_info, **inputs)`, and those call the resource's own helper methods. Five errors
there are certain from the text:

* TS963: `stage_info.<name>` where `StageInfo` (a frozen dataclass of the TS API) has no
  such field or attribute (`stage_info.stage_index`);
* TS966: `self.<name>` where no class in the resource's MRO defines `name` and no code of
  the program sets it (`self.bufs` for `self.buf`);
* TS907: `self.helper(...)` whose arguments do not bind to the helper method's
  parameters (`self._init()` for `def _init(self, stage_info)`);
* TS969: a barrier primitive whose count PTX rejects (`prims.barrier_cta_sync(1,
  thread_count=129)`), also in either branch of an `if` ts-lint cannot decide: the DSL
  traces both branches of a run-time `if` (a false `cutlass.const_expr` one it does not).

* TS973: a condition Python takes the truth of that is certainly a DSL run-time value, in
  a method without @cute.jit (`runtime_truths`, followed along the kernel's work calls
  in trace order by kernel.py, as an attribute's value depends on the calls before).

The same walk gives TS970 the attributes a work method tests alone as an `if` / `while`
condition (`tested_attributes`) and, with `compile_time_attributes`, which of them
hold a DSL constant when the kernel starts (kernel.py `_folded_predicates`).

Each is reported only where the body certainly reaches it: the flow analysis of TS962
(`unbound._Flow`: a statement after a branch that may leave, in an `if` ts-lint cannot
decide, a loop that may not run, a `try` or a non-TS `with` is not judged). A
`self.helper(...)` call that certainly runs and binds is followed into the helper, with
the parameters that receive `stage_info` known as StageInfo there.

What `self` may have (TS966) is an over-approximation, and any doubt gives up: the names
bound anywhere in the bodies of the user's classes of the MRO (methods, class attributes,
dataclass fields, properties, names bound under conditions), the attributes of the
interpreted instance, every attribute that any code of the analysed files stores or
deletes (`x.name = ...` with any `x`, `setattr(x, "name", ...)`, a string literal
`"name"` anywhere), the attributes of ts_runtime's base class, and every name that the
framework may set on a resource object (`base_attribute_names`: ts_runtime's base classes
and the names its modules set, which tests/test_api_surface.py checks cover the
reference's live objects). The check is off for a class with a
decorator other than `@dataclass`, a metaclass, `__getattr__` / `__getattribute__` /
`__setattr__` / `__slots__`, a base ts-lint cannot see, for a program that uses
`__dict__`, `setattr` / `__setattr__` with a computed name, `exec` or `eval`.
"""
from __future__ import annotations

import dataclasses
import functools
import os
import re
from difflib import get_close_matches
from typing import Optional, Set

import libcst as cst

from ts_runtime.source import SourceRange

from .unbound import _Flow, _qualname, _stmt_list, _bindings, scope_bindings

MAX_HELPER_DEPTH = 8


# ---------------------------------------------------------------------------- StageInfo
@functools.lru_cache(maxsize=1)
def stage_info_names() -> frozenset:
    """The attributes a `StageInfo` has: ts_runtime's dataclass fields and class attributes
    (tests/test_api_surface.py checks the reference's are among them)."""
    from ts_runtime.resources import StageInfo
    return frozenset(f.name for f in dataclasses.fields(StageInfo)) | frozenset(dir(StageInfo))


# ---------------------------------------------------------------------------- the base class
# what a module's source may set on an object: `.name =` (also augmented, annotated, a
# tuple / loop target), class-body and local bindings (`name =`, `name:`, `def name`), and
# identifier-like string literals (`setattr(obj, "name", ...)`, `object.__setattr__`)
_STORE = re.compile(r"\.[ \t]*([A-Za-z_]\w*)[ \t]*(?:=(?!=)|[-+*/%&|^@]=|//=|\*\*=|>>=|<<=|:(?!=)|[,)\]]|"
                    r"[ \t]+(?:in|for)\b)")
_BIND = re.compile(r"^[ \t]*(?:(?:async[ \t]+)?def|class)[ \t]+([A-Za-z_]\w*)|^[ \t]*([A-Za-z_]\w*)[ \t]*(?::|=(?!=))",
                   re.M)
_STR = re.compile(r"""["']([A-Za-z_]\w*)["']""")


def _names_in(text: str) -> Set[str]:
    names = set(_STORE.findall(text))
    for a, b in _BIND.findall(text):
        names.add(a or b)
    names.update(_STR.findall(text))
    return names


# Names the reference's framework gives its resource objects that ts_runtime's classes do
# not have, observed on live objects only (tests/test_api_surface.py: the `dir()` of its
# resource base classes, the `vars()` of a resource it built and of the resources of a
# kernel it compiled; the test fails when a new one appears). Pipeline state kept on the
# resource while a kernel is traced, and private helpers.
FRAMEWORK_NAMES = frozenset("""
consumer_release_state consumer_state consumer_status consumer_work_stage producer_commit_state
producer_state producer_status copy_consumer_vars_to copy_consumer_vars_to_consumer_of
create_consumer_variables_internal create_producer_variables_internal dummy
get_producer_acquire_state get_producer_commit_state get_producer_work_state initial_work_tile_info
initialize_runtime_state_internal load_consumer_status load_producer_status store_consumer_status
store_producer_status _apply_task_warp_leader_to_tma_umma _decode_clc_response _fetch_work_tile_impl
_get_and_advance_work_tile_impl _get_consumer_var_from_ts _get_cta_v_size _get_producer_var_from_ts
_get_stage_response_ptr _make_initial_work_tile _producer_task_warp_leader_predicate
_producer_warp_leader_idxs _raise_captured_schedule_var_access _reset_task_local_variables_to_defaults
_set_consumer_var_from_ts _set_producer_var_from_ts _state_src_owner
_tma_async_consumer_release_uses_all_threads _ts_captured_schedule_access_context
_ts_captured_schedule_depth _ts_captured_schedule_execution _ts_captured_schedule_user_hook
_ts_is_captured_schedule_execution _ts_task_local_variables _work_tile_info_from_clc_response
""".split())


@functools.lru_cache(maxsize=1)
def base_attribute_names() -> frozenset:
    """Every name a resource object may have from the framework: the attributes of
    ts_runtime's resource base classes, and every name ts_runtime's own modules may set on
    an object (over-approximated from their source, `_names_in`). ts_runtime is the drop-in
    for the reference; with FRAMEWORK_NAMES, the rest of what the reference's objects were
    seen to have. tests/test_api_surface.py checks, on live objects of the reference (its
    classes' `dir()`, a built resource's and a compiled kernel's resources' `vars()`), that
    every name they have is among these."""
    from ts_runtime import resources as R
    names: Set[str] = set()
    for k in (R.MemoryResource, R.PdlWaitBarrier, R.PdlLaunchBarrier, R.WorkQueue):
        names.update(dir(k))
        if dataclasses.is_dataclass(k):
            names.update(f.name for f in dataclasses.fields(k))
    folder = os.path.dirname(os.path.abspath(R.__file__))
    for root, _dirs, files in os.walk(folder):
        for fn in sorted(files):
            if fn.endswith(".py"):
                try:
                    with open(os.path.join(root, fn), encoding="utf-8") as f:
                        names |= _names_in(f.read())
                except (OSError, UnicodeDecodeError):
                    continue
    return frozenset(names) | FRAMEWORK_NAMES


# ---------------------------------------------------------------------------- the user's files
_DYNAMIC = re.compile(r"__dict__|\bexec\s*\(|\beval\s*\(")
_SETATTR = re.compile(r"(?:\bsetattr|__setattr__)\s*\(")
_SETATTR_LITERAL = re.compile(r"""(?:\bsetattr|__setattr__)\s*\(\s*[^,()]*,\s*(['"])\w+\1""")
_FILE_FACTS: dict = {}         # text -> [dynamic, {name: stored?}, ast stores or None]


def _file_facts(text: str) -> list:
    facts = _FILE_FACTS.get(text)
    if facts is None:
        dynamic = bool(_DYNAMIC.search(text)) or \
            len(_SETATTR.findall(text)) != len(_SETATTR_LITERAL.findall(text))
        if len(_FILE_FACTS) > 64:
            _FILE_FACTS.clear()
        facts = _FILE_FACTS[text] = [dynamic, {}, None]
    return facts


def _ast_stores(text: str, facts: list) -> Optional[Set[str]]:
    """Attribute names stored or deleted anywhere in `text` (`ast`), None if it does not
    parse."""
    if facts[2] is None:
        import ast
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            facts[2] = False
            return None
        stores = set()
        for n in ast.walk(tree):
            if type(n) is ast.Attribute and type(n.ctx) is not ast.Load:
                stores.add(n.attr)
        facts[2] = stores
    return facts[2] or None


def _may_set(text: str, name: str, dynamic: bool = True) -> bool:
    """Whether the code in `text` may set attribute `name` on some object (or, with
    `dynamic`, sets attributes dynamically)."""
    facts = _file_facts(text)
    if facts[0] and dynamic:
        return True
    hit = facts[1].get(name)
    if hit is None:
        hit = False
        if re.search(r"""["']""" + re.escape(name) + r"""["']""", text):
            hit = True
        else:
            for m in re.finditer(r"\.[ \t]*" + re.escape(name) + r"\b", text):
                rest = text[m.end():m.end() + 8]
                if re.match(r"[ \t]*(?:=(?!=)|[-+*/%&|^@]=|//=|\*\*=|>>=|<<=|:(?!=))", rest):
                    hit = True            # a store (or an annotation, or a slice / dict key)
                    break
                if re.match(r"[ \t]*(?:[,)\]]|\\|$|\n|in\b|for\b)", rest):
                    stores = _ast_stores(text, facts)    # a tuple / loop target, or a read
                    hit = stores is None or name in stores
                    break
        facts[1][name] = hit
    return hit


def _texts(ctx) -> Optional[list]:
    src = ctx.src
    if src is None:
        return None
    files = [src.main] + list(src.others) if hasattr(src, "others") and hasattr(src, "main") else [src]
    if any(f is None for f in files):
        return None
    out = []
    for f in files:
        t = getattr(f, "source", None)
        if not isinstance(t, str):
            return None
        out.append(t)
    return out


# ---------------------------------------------------------------------------- the class
_HOOKS = frozenset({"__getattr__", "__getattribute__", "__setattr__", "__slots__", "__dict__"})


def _walrus(it, node) -> bool:
    """Whether the file that holds `node` has a `:=` at all (the walrus scan is slow)."""
    from .imports import source_of
    from .unbound import _module_facts
    try:
        return _module_facts(it, source_of(it.ctx, node))[1]
    except Exception:
        return True


def _dataclass_decorator(it, dec) -> bool:
    d = dec.decorator
    if isinstance(d, cst.Call):
        d = d.func
    text = it.text(d).strip()
    return text in ("dataclass", "dataclasses.dataclass")


def class_names(it, cls) -> Optional[tuple]:
    """(names the class and its bases define, whether a TS base is among them) for the
    attribute check, or None when ts-lint cannot know them (see the module docstring);
    cached on the ClassVal."""
    cached = getattr(cls, "_ts_attr_names", False)
    if cached is not False:
        return cached
    result = _class_names(it, cls)
    try:
        cls._ts_attr_names = result
    except AttributeError:
        pass
    return result


def _class_names(it, cls) -> Optional[tuple]:
    from ts_runtime.resources import BASE_FIELDS
    names: Set[str] = set()
    ts_base = False
    for k in cls.mro:
        if k.builtin is None:
            node = k.node
            if not isinstance(node, cst.ClassDef) or node.keywords or \
                    any(a.keyword is not None for a in node.bases) or \
                    not all(_dataclass_decorator(it, d) for d in node.decorators):
                return None
            names.update(k.namespace)
            names.update(t.value for t, _a, _s in getattr(k, "annotations", ()) if isinstance(t, cst.Name))
            names.update(f.name for f in getattr(k, "own_fields", ()))
            names |= _bindings(_stmt_list(node.body), _walrus(it, node)).names
            if names & _HOOKS:
                return None
        elif k.builtin == "object":
            names.update(dir(object))
        elif k.live is not None and isinstance(k.live, type):
            live = k.live
            if any(h in vars(c) for c in live.__mro__ if c is not object for h in _HOOKS - {"__dict__"}):
                return None
            names.update(dir(live))
            if dataclasses.is_dataclass(live):
                names.update(f.name for f in dataclasses.fields(live))
            names.update(BASE_FIELDS)
            ts_base = True
        else:
            return None            # a class ts-lint cannot see into
    return frozenset(names), ts_base


# ---------------------------------------------------------------------------- the flow
class _Body(_Flow):
    """The TS962 flow over one method body, recording the attribute reads on `self` and
    on its StageInfo parameters and the `self.helper(...)` calls that certainly run
    (`events`: ("self", Attribute), ("stage", Attribute), ("call", Call, (positional
    indices, keywords) of the arguments that pass a StageInfo parameter))."""

    def __init__(self, fn, me: Optional[str], stage: Set[str], walrus: bool, builtin_range: bool, lookup):
        # `branches`: each branch of an `if` ts-lint cannot decide is walked too (`cond` >
        # 0 there), for the barrier calls, which the DSL traces in both branches of a
        # run-time `if`; the other events are kept only outside such branches
        super().__init__(fn.name.value, fn, lambda n: True, False, lookup, lambda *a: None,
                         builtin_range=builtin_range, walrus=walrus, branches=True)
        _params, bound, glob, nonloc = scope_bindings(fn, walrus)
        rebound = bound | glob | nonloc
        self.me = me if me is not None and me not in rebound else None
        self.stage = {s for s in stage if s not in rebound}
        self.events: list = []

    def _base(self, node) -> Optional[str]:
        if type(node) is not cst.Name:
            return None
        n = node.value
        if n != self.me and n not in self.stage:
            return None
        if any(n in s for s in self.shadow):
            return None
        return "self" if n == self.me else "stage"

    def if_(self, st):
        self._test(st.test)
        self._truth(st.test)
        return super().if_(st)

    def stmt(self, st):
        if type(st) is cst.While:
            self._test(st.test)
            self._truth(st.test)
        return super().stmt(st)

    def for_(self, st):
        # `for i in cutlass.range_constexpr(n):` outside JIT code raises (TS967)
        it = st.iter
        if self.certain and not self.cond and type(it) is cst.Call \
                and _qualname(self, it.func) == "cutlass.range_constexpr":
            self.events.append(("range_constexpr", it))
        return super().for_(st)

    def small(self, s):
        if type(s) is cst.Assert:
            self._truth(s.test)
        return super().small(s)

    def bind(self, target):
        self._self_stores(target)
        super().bind(target)

    def _self_stores(self, target) -> None:
        """("self_set", attribute, None) for each `self.<attribute>` an assignment target
        sets (possibly to anything: `_dyn_assign` follows it with what it certainly sets)."""
        t = type(target)
        if t is cst.Attribute and self._base(target.value) == "self":
            self.events.append(("self_set", target.attr.value, None))
        elif t in (cst.Tuple, cst.List):
            for el in target.elements:
                self._self_stores(el.value)
        elif t is cst.StarredElement:
            self._self_stores(target.value)

    # -------------------------------------------------------------- TS973
    def _truth(self, node) -> None:
        """("dyn_test", node, alternatives) for a condition Python takes the truth of (an
        `if` / `while` / `assert` test, the operand of `not`, the left of `and` / `or`,
        the test of `x if c else y`) that may be a DSL run-time value (`dynamic`), where
        the body certainly gets there: `bool()` of a run-time value raises
        PHASE_DYNAMIC_TO_STATIC_BOOL in a function the DSL does not rewrite."""
        if not self.certain or self.cond:
            return
        while True:
            t = type(node)
            if t is cst.UnaryOperation and type(node.operator) is cst.Not:
                node = node.expression
            elif t is cst.BooleanOperation:
                node = node.left
            else:
                break
        alts = self.dynamic(node)
        if alts:
            self.events.append(("dyn_test", node, alts))

    def _self_set(self, attr: str, alts: frozenset) -> None:
        self.events.append(("self_set", attr, alts))

    def _test(self, node) -> None:
        """("test", attribute) for an `if` / `while` test that is `self.<attribute>` or
        `not self.<attribute>` alone, where the body certainly gets there (either branch
        of an undecided `if` above it: the DSL traces both of a run-time `if`)."""
        if not self.certain:
            return
        if type(node) is cst.UnaryOperation and type(node.operator) is cst.Not:
            node = node.expression
        if type(node) is cst.Attribute and self._base(node.value) == "self":
            self.events.append(("test", node.attr.value))

    def truth(self, node):
        """`cutlass.const_expr(x)` is decided as `x` (the DSL folds it)."""
        from .statements import _const_expr_test
        if _const_expr_test(node) and len(node.args) == 1 and node.args[0].keyword is None:
            node = node.args[0].value
        return super().truth(node)

    def read(self, node):
        t = type(node)
        if t is cst.Call and self.certain:
            self._barrier(node)
        elif t is cst.IfExp:
            self._truth(node.test)
        elif t is cst.BooleanOperation or (t is cst.UnaryOperation and type(node.operator) is cst.Not):
            self._truth(node)
        if self.certain and not self.cond:
            if t is cst.Attribute:
                kind = self._base(node.value)
                if kind is not None:
                    self.events.append((kind, node))
            elif t is cst.Call:
                f = node.func
                if type(f) is cst.Attribute and self._base(f.value) == "self":
                    super().read(node)
                    if self.certain and not self.cond:
                        pos, kws = set(), set()
                        i = 0
                        for a in node.args:
                            if a.keyword is None:
                                if self._base(a.value) == "stage":
                                    pos.add(i)
                                i += 1
                            elif self._base(a.value) == "stage":
                                kws.add(a.keyword.value)
                        self.events.append(("call", node, (frozenset(pos), frozenset(kws))))
                    return
        super().read(node)

    def _barrier(self, node: cst.Call) -> None:
        """A barrier primitive (tsapi.barrier_count_problem) called with a count this flow
        knows: ("barrier", argument node, message) when PTX rejects the count."""
        from .tsapi import barrier_count_problem, barrier_count_param
        qual = _qualname(self, node.func)
        spec = barrier_count_param(qual) if qual is not None else None
        if spec is None:
            return
        param, pos = spec
        arg = None
        i = 0
        for a in node.args:
            if a.star:
                return
            if a.keyword is None:
                if pos is not None and i == pos:
                    arg = a
                i += 1
            elif a.keyword.value == param:
                arg = a
        if arg is None:
            return
        n = self.value(arg.value)
        if type(n) is not int:
            return
        msg = barrier_count_problem(qual, n)
        if msg is not None:
            self.events.append(("barrier", arg.value, msg))


def runtime_truth_message(text: str, fname: str, where: str = "") -> str:
    """TS973's message (work bodies here, interpreted functions in statements.py)."""
    text = " ".join(text.split())
    if len(text) > 60:
        text = text[:57] + "..."
    where = f" ({where})" if where else ""
    return (f"`{text}` is a DSL run-time value, and '{fname}' is not a @cute.jit function{where}: Python takes "
            "its truth, which the CuTe DSL rejects when it traces the kernel (DSLUserCodeError "
            "PHASE_DYNAMIC_TO_STATIC_BOOL); decorate the function with @cute.jit (the DSL then compiles the "
            "condition as a run-time branch), or decide it at compile time with `cutlass.const_expr(...)`")


def jit_fix(it, func):
    """The unsafe fix of TS972 / TS973: `@cute.jit` on the line of the function's `def`
    (below any work decorator, the order TS241 asks for), when the def is in the file being
    linted and its module names `cutlass.cute` `cute`; else None."""
    from ts_runtime.diagnostics import Edit, Fix
    node = getattr(func, "node", None)
    if not isinstance(node, cst.FunctionDef) or \
            getattr(it.lookup("cute", func.closure), "qualname", None) != "cutlass.cute":
        return None
    try:
        whole, name = it.rng(node), it.rng(node.name)
    except Exception:          # a def in another module
        return None
    start = SourceRange(whole.path, name.line, 0, name.line, 0)
    return Fix("Decorate the function with @cute.jit", (Edit(start, " " * whole.column + "@cute.jit\n"),), "unsafe")


# (id(def), me, stage params, builtin range, walrus) -> (def, {name: value looked up}, events):
# a warm re-lint places the unchanged functions' parsed units again (the same node
# objects), and their flow is reused when every plain value it looked up is the same
_EVENTS: dict = {}
_RAISED = object()


def _plain(v) -> bool:
    from .unbound import _plain as plain
    return plain(v)


def _events(it, func, fn, me, stage, walrus: bool, builtin_range: bool) -> list:
    closure = func.closure
    key = (id(fn), me, frozenset(stage), builtin_range, walrus)

    def lookup(n):
        return it.lookup(n, closure)

    hit = _EVENTS.get(key)
    if hit is not None and hit[0] is fn:
        try:
            if all(_same_lookup(lookup, n, v) for n, v in hit[1].items()):
                return hit[2]
        except Exception:
            pass
    deps, cacheable = {}, [True]

    def recording(n):
        try:
            v = lookup(n)
        except Exception:
            deps[n] = _RAISED
            raise
        if _plain(v):
            deps[n] = v
        else:
            cacheable[0] = False
        return v

    body = _Body(fn, me, stage, walrus, builtin_range, recording)
    body.block(fn.body)
    if cacheable[0]:
        if len(_EVENTS) > 4096:
            _EVENTS.clear()
        _EVENTS[key] = (fn, deps, body.events)
    return body.events


def _same_lookup(lookup, n, v) -> bool:
    try:
        now = lookup(n)
    except Exception:
        return v is _RAISED
    return v is not _RAISED and type(now) is type(v) and now == v


class _Analysis:
    """One work method on one resource object (its class decides what `self` has)."""

    def __init__(self, it, obj, where: str, seen: set, quiet: bool = False, truth: "Optional[_Truth]" = None):
        self.it = it
        # TS973 along the kernel's work calls (`runtime_truths`): only that is judged then
        self.truth = truth
        self.quiet = quiet        # collect facts (`tests`), report nothing
        self.ctx = it.ctx
        self.obj = obj
        self.cls = obj.cls
        self.where = where
        self.seen = seen          # (id(def node), me, stage params) already analysed
        self.depth = 0
        self._defined: dict = {}
        self.helpers: list = []    # the helper methods followed (certainly called), for TS962
        self.tests: set = set()    # attributes tested alone as a condition (TS970)
        # the TaskManager is made inside a @cute.jit / @cute.kernel function being
        # compiled: its `run()` traces the work methods (TS969 in their bodies)
        self.it_builds_kernel = it.in_jit_build()

    # -------------------------------------------------------------- entry
    def method(self, func, me: Optional[str], stage: Set[str]):
        key = (id(func.node), me, frozenset(stage))
        if key in self.seen or self.depth > MAX_HELPER_DEPTH:
            return
        self.seen.add(key)
        if self.depth:
            self.helpers.append(func)
        ctx = self.ctx
        src = ctx.src
        fn = src.full(func.node) if src is not None else func.node
        if not isinstance(fn, cst.FunctionDef):
            return
        from .imports import source_of
        from .unbound import _enclosing, _module_facts
        fsrc = source_of(ctx, func.node)
        module_names, walrus = _module_facts(self.it, fsrc)
        # `range` is the builtin when neither the module nor an enclosing function binds it
        enclosing = _enclosing(fsrc, func)
        builtin_range = module_names is not None and "range" not in module_names and enclosing is not None \
            and not any("range" in set().union(*scope_bindings(e, walrus)) for e in enclosing)
        events = _events(self.it, func, fn, me, stage, walrus, builtin_range)
        truth = self.truth
        if truth is not None:
            from .statements import _rewritten_by_dsl
            plain = not func.is_jit and not _rewritten_by_dsl(func)
        self.depth += 1
        try:
            for ev in events:
                if truth is not None:
                    kind = ev[0]
                    if kind == "self_set":
                        (truth.cur.add if ev[2] is not None and truth.holds(ev[2]) else truth.cur.discard)(ev[1])
                    elif kind == "dyn_test":
                        if plain and truth.found is None and truth.holds(ev[2]):
                            truth.found = ("TS973", func, fn, ev[1])      # the trace stops at the first
                    elif kind == "range_constexpr":
                        if plain and truth.found is None:
                            truth.found = ("TS967", func, fn, ev[1])
                    elif kind == "call":
                        self.self_call(ev[1], ev[2])
                    continue
                if ev[0] == "test":
                    self.tests.add(ev[1])
                elif ev[0] == "barrier":
                    if self.it_builds_kernel:
                        self._report("TS969", f"{ev[2]} ({self.where})", ev[1])
                elif ev[0] in ("self_set", "dyn_test"):
                    pass
                elif ev[0] == "self":
                    self.self_attr(ev[1])
                elif ev[0] == "stage":
                    self.stage_attr(ev[1])
                else:
                    self.self_call(ev[1], ev[2])
        finally:
            self.depth -= 1

    # -------------------------------------------------------------- findings
    def _report(self, code: str, message: str, node, fix_names=(), fix=None):
        if self.quiet:
            return
        ctx = self.ctx
        rng = ctx.range(node)
        key = (code, rng.path, rng.line, rng.column)
        done = getattr(ctx, "_ts_workbody_seen", None)
        if done is None:
            done = ctx._ts_workbody_seen = set()
        if key in done:
            return
        done.add(key)
        if fix_names and isinstance(node, cst.Attribute):
            from ts_runtime.diagnostics import Edit, Fix
            fix = Fix(f"Replace with `{fix_names[0]}`", (Edit(ctx.range(node.attr), fix_names[0]),), "unsafe")
        ctx.report(code, message, rng, fix=fix)

    def stage_attr(self, node):
        name = node.attr.value
        if name.startswith("__") or name in stage_info_names():
            return
        public = sorted(n for n in stage_info_names() if not n.startswith("_"))
        close = get_close_matches(name, public, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        self._report("TS963", f"'StageInfo' object has no attribute '{name}'{hint}: Python raises AttributeError "
                     f"here when the kernel is traced ({self.where})", node, close)

    def self_attr(self, node):
        name = node.attr.value
        if name.startswith("__") or self.defined(name):
            return
        known = class_names(self.it, self.cls)
        pool = sorted(n for n in (known[0] if known else ()) if not n.startswith("__"))
        close = get_close_matches(name, pool, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        self._report("TS966", f"'{self.cls.name}' object has no attribute '{name}'{hint}: no class of its MRO "
                     f"defines it and no code sets it, so Python raises AttributeError here when the kernel "
                     f"is traced ({self.where})", node, close)

    def defined(self, name: str) -> bool:
        """Whether `self.<name>` may exist (any doubt: True)."""
        hit = self._defined.get(name)
        if hit is None:
            hit = self._defined[name] = self._may_exist(name)
        return hit

    def _may_exist(self, name: str) -> bool:
        if name in self.obj.attrs:
            return True
        known = class_names(self.it, self.cls)
        if known is None:
            return True
        names, ts_base = known
        if name in names:
            return True
        texts = _texts(self.ctx)
        if texts is None or any(_may_set(t, name) for t in texts):
            return True
        if ts_base and name in base_attribute_names():
            return True
        return False

    def self_call(self, call: cst.Call, stage_args: tuple):
        """`self.<name>(...)` that certainly runs: TS907 when its arguments do not bind
        to the method's parameters, else the method is followed."""
        from .values import FuncVal
        name = call.func.attr.value
        if name in self.obj.attrs:
            return                       # an instance attribute shadows the method
        _owner, v = self.cls.lookup(name)
        if not isinstance(v, FuncVal) or v.kind != "function" or not isinstance(v.node, cst.FunctionDef):
            return
        if not all(_dsl_decorator(d) for d in v.node.decorators):
            return                       # a decorator that may change the signature
        if any(a.star for a in call.args):
            return
        import inspect
        sig = _signature_of(v)
        if sig is None:
            return
        pos = [a for a in call.args if a.keyword is None]
        kws = {a.keyword.value: a for a in call.args if a.keyword is not None}
        try:
            bound = sig.bind(None, *pos, **kws)
        except TypeError as exc:
            self._report("TS907", f"{self.cls.name}.{name}(...): {exc}: Python raises TypeError here when the "
                         f"kernel is traced ({self.where})", call)
            return
        params = list(sig.parameters.values())
        if not params or params[0].kind not in (inspect.Parameter.POSITIONAL_ONLY,
                                                inspect.Parameter.POSITIONAL_OR_KEYWORD):
            return
        stage_pos, stage_kws = stage_args
        passed = {id(a) for i, a in enumerate(pos) if i in stage_pos}
        passed |= {id(a) for k, a in kws.items() if k in stage_kws}
        stage = {pname for pname, arg in bound.arguments.items() if isinstance(arg, cst.Arg) and id(arg) in passed}
        self.method(v, params[0].name, stage)


def tested_attributes(it, obj, wm) -> Optional[frozenset]:
    """The attributes that the work method `wm` (a WorkMethodVal) on the resource `obj`,
    or a helper method it certainly calls, tests alone (`if self.flag:`, `while not
    self.flag:`) where it certainly gets there: the walk of `check_work_method`, quiet;
    None when ts-lint cannot read it."""
    from .interpreter import param_list
    from .values import FuncVal
    func = getattr(wm, "func", None)
    if not isinstance(func, FuncVal) or not isinstance(func.node, cst.FunctionDef):
        return None
    try:
        positional = [p.name.value for p, kind in param_list(func.node.params)
                      if kind in ("positional_only", "pos_or_kw")]
        if not positional:
            return None
        a = _Analysis(it, obj, "", set(), quiet=True)
        a.method(func, positional[0], set(positional[1:2]))
        return frozenset(a.tests)
    except RecursionError:
        return None
    except Exception:          # the lint never fails on its own analysis
        return None


def compile_time_attributes(it, obj) -> frozenset:
    """The attributes of the resource object `obj` that hold a DSL compile-time constant
    when the kernel starts: a `cutlass` number made from a literal
    (`self.is_leader = cutlass.Boolean(False)`) by the last assignment
    to it in the body of its class's `__init__` / `__post_init__`, outside any branch,
    loop or nested function, with no other assignment to it in those methods, and still
    a DSL value (or one ts-lint could not evaluate) in the interpreted object."""
    from .values import FuncVal
    from ts_runtime.model.values import RUNTIME, UNKNOWN
    out = set()
    try:
        for meth in ("__init__", "__post_init__"):
            _owner, f = obj.cls.lookup(meth)
            if not isinstance(f, FuncVal) or not isinstance(f.node, cst.FunctionDef):
                continue
            fn = it.ctx.src.full(f.node) if it.ctx.src is not None else f.node
            params = fn.params.params
            if not params:
                continue
            me = params[0].name.value
            top: dict = {}
            nested: set = set()
            for st in _stmt_list(fn.body):
                for node, depth in _self_stores(st, me, 0):
                    (nested.add(node[0]) if depth else top.__setitem__(node[0], node[1]))
            for name, value in top.items():
                if name not in nested and _dsl_literal_number(value) and \
                        (obj.attrs.get(name) is RUNTIME or obj.attrs.get(name) is UNKNOWN):
                    out.add(name)
    except Exception:          # the lint never fails on its own analysis
        pass
    return frozenset(out)


def _self_stores(st, me: str, depth: int):
    """((attribute, value or None), nesting depth) of the `self.<attribute> = ...`
    stores in a statement (a store in a branch, loop, `with` or nested def: depth > 0);
    the value is given for a plain `self.<attribute> = value` only."""
    if isinstance(st, cst.SimpleStatementLine):
        for small in st.body:
            if isinstance(small, cst.Assign):
                targets = [t.target for t in small.targets]
            elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                targets = [small.target]
            else:
                continue
            plain = isinstance(small, cst.Assign) and len(targets) == 1
            for t in targets:
                for a in _attr_targets(t, me):
                    yield (a, small.value if plain and t is not None and isinstance(t, cst.Attribute) else None), depth
        return
    for child in st.children:
        if isinstance(child, (cst.IndentedBlock, cst.SimpleStatementSuite)):
            for inner in _stmt_list(child):
                yield from _self_stores(inner, me, depth + 1)
        elif isinstance(child, (cst.Else, cst.If, cst.ExceptHandler, cst.Finally)):
            yield from _self_stores(child, me, depth + 1)


def _attr_targets(t, me: str):
    if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == me:
        yield t.attr.value
    elif isinstance(t, (cst.Tuple, cst.List)):
        for e in t.elements:
            yield from _attr_targets(e.value, me)


_LITERAL_NUMBER = re.compile(r"(Int|Uint)(8|16|32|64)|Float(16|32|64)|BFloat16|Boolean")


def _dsl_literal_number(value) -> bool:
    """`cutlass.Boolean(False)`, `cutlass.Int32(0)`: a DSL number of a literal, which the
    DSL keeps as a compile-time constant."""
    if not isinstance(value, cst.Call) or len(value.args) != 1 or value.args[0].keyword is not None:
        return False
    f = value.func
    if not (isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.value.value == "cutlass"
            and _LITERAL_NUMBER.fullmatch(f.attr.value)):
        return False
    a = value.args[0].value
    if isinstance(a, cst.UnaryOperation) and isinstance(a.operator, cst.Minus):
        a = a.expression
    return isinstance(a, (cst.Integer, cst.Float)) or isinstance(a, cst.Name) and a.value in ("True", "False")


_SIGNATURES: dict = {}      # id(def node) -> (node, inspect.Signature or None)


def _signature_of(func):
    """schedules._signature of a method, kept per def node (the same node objects in a
    warm re-lint)."""
    node = func.node
    hit = _SIGNATURES.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    from .schedules import _signature
    try:
        sig = _signature(func)
    except Exception:
        sig = None
    if len(_SIGNATURES) > 4096:
        _SIGNATURES.clear()
    _SIGNATURES[id(node)] = (node, sig)
    return sig


def _dsl_decorator(dec) -> bool:
    """`@cute.jit` / `@cute.kernel` (bare or called): the DSL calls the function with
    Python's binding."""
    d = dec.decorator
    if isinstance(d, cst.Call):
        d = d.func
    return isinstance(d, cst.Attribute) and d.attr.value in ("jit", "kernel") or \
        isinstance(d, cst.Name) and d.value == "jit"


# ---------------------------------------------------------------------------- entry point
class _Truth:
    """TS973's state along the kernel's work calls on one resource object: the attributes
    that certainly hold a DSL run-time value (`cur`), whether the call being followed is
    in a domain loop, and the first test found that is certainly one (func, def, node)."""

    def __init__(self, cur: set, in_loop: bool):
        self.cur = cur
        self.in_loop = in_loop
        self.found = None

    def holds(self, alts: frozenset) -> bool:
        """Whether a value with these alternatives (`_Body.dynamic`) is a run-time one here."""
        for a in alts:
            if a == "always" or (a == "loop" and self.in_loop) or (a[:5] == "attr:" and a[5:] in self.cur):
                return True
        return False


def runtime_truths(it, obj, wm, label: str, cur: set, in_loop: bool):
    """TS973 / TS967 for one work call: follows the work method `wm` on the resource
    object `obj` (and the helpers it certainly calls) with `cur`, the attributes of `obj`
    that certainly hold a DSL run-time value when the call is traced (updated in place by
    the attributes it sets), and reports the first failure, in a method the DSL does not
    rewrite, that the trace certainly reaches: a condition that is certainly a run-time
    value (TS973), a `for` over `cutlass.range_constexpr(...)` (TS967). Returns True when
    it reported; never raises (on a failure `cur` is cleared: nothing is known after it)."""
    from .interpreter import param_list
    from .values import FuncVal
    func = getattr(wm, "func", None)
    try:
        if not isinstance(func, FuncVal) or not isinstance(func.node, cst.FunctionDef):
            raise ValueError
        positional = [p.name.value for p, kind in param_list(func.node.params)
                      if kind in ("positional_only", "pos_or_kw")]
        if not positional:
            raise ValueError
        owner = func.owner.name if getattr(func, "owner", None) is not None else obj.cls.name
        truth = _Truth(cur, in_loop)
        a = _Analysis(it, obj, f"work method '{owner}.{label}'", set(), truth=truth)
        a.method(func, positional[0], set(positional[1:2]))
    except Exception:          # the lint never fails on its own analysis (RecursionError too)
        cur.clear()
        return False
    if truth.found is None:
        return False
    code, hfunc, fn, node = truth.found
    if code == "TS967":
        from .tsapi import range_constexpr_message
        a._report(code, range_constexpr_message(f"'{fn.name.value}' ({a.where})"), node, fix=jit_fix(it, hfunc))
    else:
        a._report(code, runtime_truth_message(it.text(node), fn.name.value, a.where), node, fix=jit_fix(it, hfunc))
    return True


def check_work_method(it, obj, wm, label: str) -> list:
    """TS963 / TS966 / TS907 / TS969 in the work method `wm` (a WorkMethodVal) the
    kernel's schedules call on the resource `obj`, and in the helpers it calls; never
    raises. Returns the helper methods (FuncVals) it certainly calls, followed here."""
    from .interpreter import param_list
    from .values import FuncVal
    func = getattr(wm, "func", None)
    if not isinstance(func, FuncVal) or not isinstance(func.node, cst.FunctionDef):
        return []
    ctx = it.ctx
    seen = getattr(ctx, "_ts_workbody_done", None)
    if seen is None:
        seen = ctx._ts_workbody_done = {}
    per_class = seen.setdefault(id(obj.cls), set())
    try:
        positional = [p.name.value for p, kind in param_list(func.node.params)
                      if kind in ("positional_only", "pos_or_kw")]
        if not positional:
            return []
        me = positional[0]
        stage = {positional[1]} if len(positional) > 1 else set()
        owner = func.owner.name if getattr(func, "owner", None) is not None else obj.cls.name
        a = _Analysis(it, obj, f"work method '{owner}.{label}'", per_class)
        a.method(func, me, stage)
        return a.helpers
    except RecursionError:
        return []
    except Exception:          # the lint never fails on its own analysis
        return []

