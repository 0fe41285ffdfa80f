"""Statements: assignments, imports, definitions and control flow (with the skip rule
for conditions and iterables that are not known)."""
from __future__ import annotations

import operator

import libcst as cst

from .expressions import binop, truth
from .frames import _Break, _Continue, _LoopUnknown, _Return, UserRaise, param_list
from .values import (
    BlockCM, BuiltinFunc, ClassVal, DataFlowToken, FuncVal, GeneratorCMVal, InstanceVal, is_concrete,
    NamespaceVal, PartialVal, QualRef, RUNTIME, Scope, TaskManagerVal, TracedUnbound, UNKNOWN,
)


_AUGOPS = {
    cst.AddAssign: operator.add, cst.SubtractAssign: operator.sub, cst.MultiplyAssign: operator.mul,
    cst.DivideAssign: operator.truediv, cst.FloorDivideAssign: operator.floordiv,
    cst.ModuloAssign: operator.mod, cst.PowerAssign: operator.pow,
    cst.LeftShiftAssign: operator.lshift, cst.RightShiftAssign: operator.rshift,
    cst.BitOrAssign: operator.or_, cst.BitAndAssign: operator.and_, cst.BitXorAssign: operator.xor,
    cst.MatrixMultiplyAssign: operator.matmul,
}

# a string expression statement (a docstring) has no effect
_STRINGS = frozenset({cst.SimpleString, cst.ConcatenatedString, cst.FormattedString})


class StatementsMixin:
    # ================================================================== statements
    def exec_block(self, body, scope):
        t = type(body)
        stmts = body.body if t is cst.IndentedBlock or t is cst.SimpleStatementSuite else body
        for stmt in stmts:
            self.exec_stmt(stmt, scope)

    def exec_stmt(self, stmt, scope):
        self.ctx.step()
        fn = self._exec.get(type(stmt))
        if fn is not None:
            fn(stmt, scope)

    def _x_simple_line(self, node, scope):
        for s in node.body:
            self.exec_stmt(s, scope)

    def _x_expr(self, node: cst.Expr, scope):
        if type(node.value) in _STRINGS:
            return                        # a docstring / string statement has no effect
        self.eval(node.value, scope)

    def _x_assign(self, node: cst.Assign, scope):
        v = self.eval(node.value, scope)
        for t in node.targets:
            self.bind_target(t.target, v, scope, value_node=node.value)

    def _x_annassign(self, node: cst.AnnAssign, scope):
        if scope.kind == "class":
            self.class_annotations(scope).append((node.target, node.annotation.annotation, node))
        self._import_time_annotation(node.annotation, scope)
        if node.value is not None:
            v = self.eval(node.value, scope)
            self.bind_target(node.target, v, scope, value_node=node.value)

    def _import_time_annotation(self, ann, scope) -> None:
        """Evaluates an annotation that Python evaluates while the module is imported (of
        a module- or class-level variable, or a parameter / return of a function defined
        there), so that a name bound nowhere in it is the NameError it is (TS962), as
        `_e_name` judges the module body's reads. Not with `from __future__ import
        annotations` (annotations are then strings), nor for a string annotation."""
        if ann is None or scope.kind not in ("module", "class") or self.frames or not self.ctx.importing \
                or not self._annotations_evaluated():
            return
        self.eval(ann.annotation, scope)

    def _annotations_evaluated(self) -> bool:
        got = self.__dict__.get("_eager_annotations")
        if got is None:
            got = True
            for st in self.module_node.body:
                for small in getattr(st, "body", ()) if isinstance(st, cst.SimpleStatementLine) else ():
                    if isinstance(small, cst.ImportFrom) and isinstance(small.module, cst.Name) and \
                            small.module.value == "__future__" and not isinstance(small.names, cst.ImportStar) \
                            and any(isinstance(a.name, cst.Name) and a.name.value == "annotations"
                                    for a in small.names):
                        got = False
            self.__dict__["_eager_annotations"] = got
        return got

    def class_annotations(self, scope) -> list:
        return scope.vars.setdefault("__ts_annotations__", [])

    def _x_augassign(self, node: cst.AugAssign, scope):
        op = _AUGOPS.get(type(node.operator))
        cur = self.eval(node.target, scope)
        v = self.eval(node.value, scope)
        if isinstance(cur, list) and op is operator.add:
            seq = self.iterate(v)
            if seq is None:
                self.ctx_taint(cur)
            else:
                cur.extend(seq)
            return
        if isinstance(cur, dict) and op is operator.or_ and isinstance(v, dict):
            cur.update(v)
            return
        new = binop(op, cur, v) if op is not None else UNKNOWN
        self.bind_target(node.target, new, scope)

    def ctx_taint(self, container):
        self.ts.taint(container)

    def bind_target(self, target, value, scope, value_node=None):
        if isinstance(target, cst.Name):
            self.assign_name(target.value, value, scope)
        elif isinstance(target, (cst.Tuple, cst.List)):
            elems = target.elements
            if isinstance(value, DataFlowToken):
                if value.cap is not None:
                    value.cap.token_misuse(value, value_node if value_node is not None else target,
                                           indexed=False)
                value = UNKNOWN
            if type(value) in (int, float, bool):     # `a, b = n` with `n` an int: TS964
                self.type_error(value_node if value_node is not None else target,
                                f"cannot unpack non-iterable {type(value).__name__} object")
            seq = self.iterate(value) if value is not RUNTIME else None
            star = [i for i, e in enumerate(elems) if isinstance(e, cst.StarredElement)]
            if seq is None or (not star and len(seq) != len(elems)) or (star and len(seq) < len(elems) - 1):
                fill = RUNTIME if value is RUNTIME else UNKNOWN
                for e in elems:
                    self.bind_target(e.value, fill, scope)
                return
            if star:
                i = star[0]
                n_after = len(elems) - i - 1
                for e, v in zip(elems[:i], seq[:i]):
                    self.bind_target(e.value, v, scope)
                self.bind_target(elems[i].value, list(seq[i:len(seq) - n_after]), scope)
                for e, v in zip(elems[i + 1:], seq[len(seq) - n_after:]):
                    self.bind_target(e.value, v, scope)
            else:
                for e, v in zip(elems, seq):
                    self.bind_target(e.value, v, scope)
        elif isinstance(target, cst.Attribute):
            obj = self.eval(target.value, scope)
            self.setattr(obj, target.attr.value, value, target)
        elif isinstance(target, cst.Subscript):
            base = self.eval(target.value, scope)
            if len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index):
                key = self.eval(target.slice[0].slice.value, scope)
            else:
                key = UNKNOWN
            if type(base) in (int, float, bool):      # `n[0] = x` with `n` an int: TS964
                self.type_error(target, f"'{type(base).__name__}' object does not support item assignment")
            self.setitem(base, key, value)
        elif isinstance(target, cst.StarredElement):
            self.bind_target(target.value, value, scope)

    def setitem(self, base, key, value):
        if isinstance(base, dict):
            if key is UNKNOWN or key is RUNTIME:
                self.ctx_taint(base)
                return
            try:
                base[key] = value
            except TypeError:
                self.ctx_taint(base)
        elif isinstance(base, list):
            if isinstance(key, int) and -len(base) <= key < len(base):
                base[key] = value
            else:
                self.ctx_taint(base)

    def setattr(self, obj, name, value, node=None):
        if isinstance(obj, InstanceVal):
            h = self.ts.setattr_hook(obj, name, value, node)
            if h is NotImplemented:
                obj.attrs[name] = value
        elif isinstance(obj, ClassVal):
            obj.namespace[name] = value
        elif isinstance(obj, NamespaceVal):
            obj.attrs[name] = value
        elif isinstance(obj, (FuncVal, PartialVal)):
            obj.attrs[name] = value        # `fn.__name__ = ...`, `fn.NAME = ...`

    def _x_return(self, node: cst.Return, scope):
        raise _Return(self.eval(node.value, scope) if node.value is not None else None)

    def _x_break(self, node, scope):
        raise _Break()

    def _x_continue(self, node, scope):
        raise _Continue()

    def _x_global(self, node: cst.Global, scope):
        for n in node.names:
            scope.globals_.add(n.name.value)

    def _x_nonlocal(self, node: cst.Nonlocal, scope):
        for n in node.names:
            scope.nonlocals.add(n.name.value)

    def _x_del(self, node: cst.Del, scope):
        t = node.target
        targets = [e.value for e in t.elements] if isinstance(t, cst.Tuple) else [t]
        for x in targets:
            if isinstance(x, cst.Name):
                scope.vars.pop(x.value, None)
            elif isinstance(x, cst.Subscript):
                self._del_item(x, scope)

    def _del_item(self, x: cst.Subscript, scope):
        """`del d[k]` / `del xs[i]` (`del globals()["name"]` unbinds a module name)."""
        base = self.eval(x.value, scope)
        if not isinstance(base, (dict, list)):
            return
        if len(x.slice) != 1 or not isinstance(x.slice[0].slice, cst.Index):
            self.ctx_taint(base)
            return
        key = self.eval(x.slice[0].slice.value, scope)
        try:
            if isinstance(base, dict) and is_concrete(key) or isinstance(base, list) and type(key) is int:
                del base[key]
                return
        except (KeyError, IndexError, TypeError):
            return                    # Python raises here
        self.ctx_taint(base)

    def _x_raise(self, node, scope):
        self._build_raises(node)
        raise UserRaise(node)

    def _x_assert(self, node: cst.Assert, scope):
        v = self.eval(node.test, scope)
        self._runtime_truth(node.test, v)
        t = truth(v)
        if t is False:
            self._build_raises(node)
            raise UserRaise(node)

    def _build_raises(self, node):
        """TS968: a `raise` / failing `assert` that building the kernel certainly reaches (in
        a @cute.jit / @cute.kernel function being compiled, or a `build()` entry point, and
        the functions they call), from TS code (`build()`-style entry
        points, `compile_fake()`, the kernels they compile), with the guards of
        `type_error`: not under a `try` with a handler, not in a function run with assumed
        arguments, not in the `__main__` block's run (a command-line value may differ from
        its argparse default), not after a branch ts-lint could not decide that may have
        returned, not while a schedule is captured (TS136's and the capture's own
        findings). The import's own raises are TS961 (`run_module`)."""
        fr = self.frame
        if fr is None or self.captures or self.ctx.assumed or self._try_depth \
                or self.ctx.root_name in (None, "", "<module>", "__main__") \
                or any(f.maybe_returned for f in self.frames):
            return
        if not any(isinstance(f.func, FuncVal) and self._ts_code(f.func) for f in self.frames):
            return               # not reached from TS code (a plain helper of another kernel)
        if not self.in_kernel_build():
            # only what building the kernel runs: a @cute.jit / @cute.kernel function being
            # compiled, or a `build()` entry point; not a host driver such as a tutorial's
            # `run()` checking its inputs (the kernel compiles; the run fails later, on the GPU
            # side of the program)
            return
        from .interpreter import build_raises_message
        self.ctx.report("TS968", build_raises_message(self, node, fr.func), self.rng(node))
        raise UserRaise(node, reported=True)

    # ------------------------------------------------------------------ imports
    @staticmethod
    def _dotted(node) -> str:
        if isinstance(node, cst.Name):
            return node.value
        if isinstance(node, cst.Attribute):
            return StatementsMixin._dotted(node.value) + "." + node.attr.value
        return ""

    def _ts_import_check(self, mod: str, name, node) -> None:
        """TS971 where importing a TS module, or a name from one, raises ImportError
        (a misspelt name, a class imported from the wrong module): the run stops there,
        as in Python (`certain_error`: under a `try` with a handler, the handler runs)."""
        from .tsapi import ts_import_error
        got = ts_import_error(mod, name)
        if got is None:
            return
        msg, close = got
        fix = None
        if close is not None and isinstance(node, cst.Name):
            from ts_runtime.diagnostics import Edit, Fix
            fix = Fix(f"Replace with `{close}`", (Edit(self.rng(node), close),), "unsafe")
        self.certain_error(node, "TS971", msg, fix)

    def _x_import(self, node: cst.Import, scope):
        from .imports import import_module
        for alias in node.names:
            full = self._dotted(alias.name)
            mods = import_module(self, full, node)    # a module of the user's project
            if mods is not None:
                if alias.asname is not None:
                    self.bind_target(alias.asname.name, mods[-1], scope)
                else:
                    self.assign_name(full.split(".")[0], mods[0], scope)
                continue
            self._ts_import_check(full, None, alias.name)
            if alias.asname is not None:
                self.bind_target(alias.asname.name, self.resolve_qual(full), scope)
            else:
                head = full.split(".")[0]
                self.assign_name(head, self.resolve_qual(head), scope)

    def _x_importfrom(self, node: cst.ImportFrom, scope):
        mod = self._dotted(node.module) if node.module is not None else ""
        mod = "." * len(node.relative) + mod
        from .imports import from_import, import_module, star_names
        mods = import_module(self, mod, node)          # a module of the user's project
        if mods is not None:
            if isinstance(node.names, cst.ImportStar):
                for name in star_names(mods[-1]):
                    self.assign_name(name, mods[-1].attrs.get(name, UNKNOWN), scope)
                return
            for alias in node.names:
                target = alias.asname.name if alias.asname is not None else alias.name
                self.bind_target(target, from_import(self, mods, self._dotted(alias.name), node), scope)
            return
        if isinstance(node.names, cst.ImportStar):
            self._ts_import_check(mod, None, node.module)
            for name in self.ts.star_names(mod):
                self.assign_name(name, self.resolve_qual(f"{mod}.{name}"), scope)
            return
        self._ts_import_check(mod, None, node.module)
        for alias in node.names:
            name = self._dotted(alias.name)
            self._ts_import_check(mod, name, alias.name)
            target = alias.asname.name if alias.asname is not None else alias.name
            self.bind_target(target, self.resolve_qual(f"{mod}.{name}" if mod else name), scope)

    # ------------------------------------------------------------------ definitions
    def _qualname_in(self, scope: Scope, name: str) -> str:
        if scope.kind == "module":
            return name
        if scope.kind == "class":
            return f"{scope.vars.get('__ts_qualprefix__', '')}{name}"
        s = scope
        while s is not None and s.kind == "comprehension":
            s = s.parent
        prefix = getattr(s, "qualprefix", "") if s is not None and s.kind == "function" else ""
        return f"{prefix}{name}"

    def _x_funcdef(self, node: cst.FunctionDef, scope):
        from .tsapi import apply_decorators
        name = node.name.value
        closure = scope.parent if scope.kind == "class" else scope
        qual = self._qualname_in(scope, name)
        func = FuncVal(node, closure, name, qual, self.module_name,
                       owner=scope.vars.get("__ts_class__") if scope.kind == "class" else None,
                       defaults=self._defaults(node.params, scope),
                       first_decorator=node.decorators[0] if node.decorators else None)
        for p, _kind in param_list(node.params):
            self._import_time_annotation(p.annotation, scope)
        self._import_time_annotation(node.returns, scope)
        value = apply_decorators(self, func, node.decorators, scope)
        self.assign_name(name, value, scope)

    def _x_classdef(self, node: cst.ClassDef, scope):
        from .classes import build_class
        cls = build_class(self, node, scope)
        self.assign_name(node.name.value, cls, scope)

    # ------------------------------------------------------------------ control flow
    def _x_if(self, node: cst.If, scope):
        if self.capture is not None and self.frontend == "plain" and not _const_expr_test(node.test):
            self._dsl_traced_block(node, "if", scope)
        cond = self.eval(node.test, scope)
        self._runtime_truth(node.test, cond)
        t = truth(cond)
        if t is True:
            self.exec_block(node.body, scope)
        elif t is False:
            if isinstance(node.orelse, cst.If):
                self._x_if(node.orelse, scope)
            elif isinstance(node.orelse, cst.Else):
                self.exec_block(node.orelse.body, scope)
        elif cond is RUNTIME and self.capture is None and self.frame is not None \
                and getattr(self.frame.func, "is_jit", False) and self._x_if_traced(node, scope):
            return
        elif not self._x_if_compile_entry(node, scope):
            self.skip(node, scope, node.test, "condition")

    def _runtime_truth(self, test, value) -> None:
        """TS973: an `if` / `while` / `assert` test that is a DSL run-time value, in a
        function the DSL does not rewrite (neither @cute.jit nor defined inside one) that
        a kernel being compiled runs (a plain helper the @cute.kernel calls): Python takes
        its truth, and the DSL raises PHASE_DYNAMIC_TO_STATIC_BOOL. The run stops there
        (`certain_error`'s guards apply; not after a branch that may have returned)."""
        if value is not RUNTIME or self.frame is None or self.capture is not None:
            return
        fn = self.frame.func
        if fn is None or getattr(fn, "is_jit", False) or _rewritten_by_dsl(fn) or not self.in_jit_build() \
                or any(f.maybe_returned for f in self.frames):
            return
        from .workbody import jit_fix, runtime_truth_message
        self.certain_error(test, "TS973", runtime_truth_message(self.text(test), fn.name), fix=jit_fix(self, fn))

    def _x_if_compile_entry(self, node: cst.If, scope) -> bool:
        """`if hasattr(cute, "FrontendNext"): comp = cute.compile[cute.FrontendNext]` /
        `else: comp = cute.compile` under a condition ts-lint cannot decide: each branch
        binds one name to a compile entry point (an expression of names, attributes and
        subscripts only, which has no effect), so the name is a compile entry either way
        (TSApi.join_compile). False, with nothing done, for anything else."""
        if not isinstance(node.orelse, cst.Else):
            return False
        picked = []
        for block in (node.body, node.orelse.body):
            stmts = block.body if isinstance(block, cst.IndentedBlock) else [block]
            if len(stmts) != 1 or not isinstance(stmts[0], (cst.SimpleStatementLine, cst.SimpleStatementSuite)) \
                    or len(stmts[0].body) != 1 or not isinstance(stmts[0].body[0], cst.Assign):
                return False
            a = stmts[0].body[0]
            if len(a.targets) != 1 or not isinstance(a.targets[0].target, cst.Name) or not _pure_ref(a.value):
                return False
            picked.append((a.targets[0].target.value, a.value))
        (n1, v1), (n2, v2) = picked
        if n1 != n2:
            return False
        joined = self.ts.join_compile(self.eval(v1, scope), self.eval(v2, scope))
        if joined is None:
            return False
        self.assign_name(n1, joined, scope)
        return True

    def _dsl_traced_block(self, node, kind: str, scope):
        """TS965: a plain `if` / `for ... in range(...)` in a schedule body the CuTe DSL
        rewrites (a schedule defined inside a @cute.jit / @cute.kernel function), compiled
        with `cute.compile` without FrontendNext: the DSL makes it a run-time branch or
        loop, and a schedule parameter (a resource proxy, a plain Python object) used in it
        cannot be carried through (the reference's TYPE_DYNAMIC_EXPR_UNSUPPORTED). Reported
        when the block uses a schedule parameter; the run stops there."""
        if not _rewritten_by_dsl(self.frame.func if self.frame is not None else None):
            return
        cap = self.capture
        params = {n for n, v in scope.vars.items() if type(v).__name__ == "ResourceProxy"}
        used = _names_in(node.body) | (_names_in(node.orelse) if getattr(node, "orelse", None) else set())
        hit = sorted(params & used)
        if not hit:
            return
        use = "`if cutlass.const_expr(...)`" if kind == "if" else "`cutlass.range_constexpr(...)`"
        what = "`if`" if kind == "if" else "`for ... in range(...)`"
        cap.b.report("TS965", f"a plain {what} in this schedule is compiled by the CuTe DSL as a run-time "
                     f"{'branch' if kind == 'if' else 'loop'} (cute.compile without FrontendNext), and the schedule "
                     f"resource '{hit[0]}' cannot be carried through it: use {use}", self.rng(node),
                     fix=self._compile_time_fix(node, kind, scope))
        cap.abort()

    def _compile_time_fix(self, node, kind: str, scope):
        """TS965's fix: `if cutlass.const_expr(<test>):` / `cutlass.range_constexpr(...)`,
        when the module names the `cutlass` package `cutlass`."""
        from ts_runtime.diagnostics import Edit, Fix
        qual = self.lookup("cutlass", scope)
        if getattr(qual, "qualname", None) != "cutlass":
            return None
        if kind == "if":
            r = self.rng(node.test)
            start = type(r)(r.path, r.line, r.column, r.line, r.column)
            end = type(r)(r.path, r.end_line, r.end_column, r.end_line, r.end_column)
            return Fix("Fold the condition at compile time: `cutlass.const_expr(...)`",
                       (Edit(start, "cutlass.const_expr("), Edit(end, ")")), "unsafe")
        return Fix("Unroll at compile time: `cutlass.range_constexpr(...)`",
                   (Edit(self.rng(node.iter.func), "cutlass.range_constexpr"),), "unsafe")

    def _x_if_traced(self, node: cst.If, scope) -> bool:
        """A dynamic `if` in JIT code: the DSL traces both branches (their side effects
        both happen); a name the branches bind differently is RUNTIME / UNKNOWN after it.
        False (nothing to undo but the bindings) when a branch leaves by return/break."""
        before = dict(scope.vars)
        try:
            self.exec_block(node.body, scope)
            then_vars = dict(scope.vars)
            scope.vars.clear()
            scope.vars.update(before)
            if isinstance(node.orelse, cst.If):
                self._x_if(node.orelse, scope)
            elif isinstance(node.orelse, cst.Else):
                self.exec_block(node.orelse.body, scope)
        except (_Return, _Break, _Continue, _LoopUnknown):
            scope.vars.clear()
            scope.vars.update(before)
            return False
        missing = object()
        for name in set(then_vars) | set(scope.vars):
            a, b = then_vars.get(name, missing), scope.vars.get(name, missing)
            if a is b:
                continue
            if (a is missing or b is missing) and name not in before and scope.kind == "function" \
                    and not name.startswith("__"):
                # given a value by one branch only, and none before: not carried out of the `if`
                scope.vars[name] = TracedUnbound(name, node)
                continue
            try:
                same = is_concrete(a) and is_concrete(b) and type(a) is type(b) and a == b
            except Exception:
                same = False
            if same:
                continue
            scope.vars[name] = RUNTIME if any(x is RUNTIME for x in (a, b)) and all(
                x is RUNTIME or isinstance(x, (int, float, bool)) for x in (a, b)) else UNKNOWN
        return True

    def _x_match(self, node, scope):
        """`match` on a subject whose value is known: the first case whose pattern matches
        and whose guard holds runs, as in Python. A pattern or guard that cannot be
        decided (unknown subject, class or mapping pattern) skips the whole statement."""
        subject = self.eval(node.subject, scope)
        for case in node.cases:
            binds: dict = {}
            m = self._match(case.pattern, subject, scope, binds)
            if m is None:
                return self.skip(node, scope, node.subject, "match subject")
            if not m:
                continue
            for name, v in binds.items():
                self.assign_name(name, v, scope)
            if case.guard is not None:
                t = truth(self.eval(case.guard, scope))
                if t is None:
                    return self.skip(node, scope, case.guard, "match guard")
                if not t:
                    continue
            self.exec_block(case.body, scope)
            return

    def _match(self, p, v, scope, binds: dict):
        """Whether pattern `p` matches value `v` (True / False), None when undecidable;
        fills `binds` with the captures."""
        if isinstance(p, cst.MatchAs):
            if p.pattern is not None:
                m = self._match(p.pattern, v, scope, binds)
                if not m:
                    return m
            if p.name is not None:
                binds[p.name.value] = v
            return True
        if v is UNKNOWN or v is RUNTIME or isinstance(v, DataFlowToken):
            return None
        if isinstance(p, cst.MatchSingleton):
            return v is {"None": None, "True": True, "False": False}[p.value.value]
        if isinstance(p, cst.MatchValue):
            return truth(binop(operator.eq, v, self.eval(p.value, scope)))
        if isinstance(p, cst.MatchOr):
            undecided = False
            for el in p.patterns:
                trial: dict = {}
                m = self._match(el.pattern, v, scope, trial)
                if m:
                    binds.update(trial)
                    return True
                undecided = undecided or m is None
            return None if undecided else False
        if isinstance(p, (cst.MatchList, cst.MatchTuple)):
            if not isinstance(v, (list, tuple)):
                return None if isinstance(v, InstanceVal) else False
            items = [el for el in p.patterns]
            stars = [i for i, el in enumerate(items) if isinstance(el, cst.MatchStar)]
            if not stars:
                if len(items) != len(v):
                    return False
                pairs = [(el.value, x) for el, x in zip(items, v)]
            else:
                k = stars[0]
                tail = len(items) - k - 1
                if len(v) < len(items) - 1:
                    return False
                rest = list(v[k:len(v) - tail])
                if items[k].name is not None:
                    binds[items[k].name.value] = rest
                pairs = [(el.value, x) for el, x in zip(items[:k], v[:k])]
                pairs += [(el.value, x) for el, x in zip(items[k + 1:], v[len(v) - tail:])]
            for sub, x in pairs:
                m = self._match(sub, x, scope, binds)
                if not m:
                    return m
            return True
        return None             # class and mapping patterns

    def skip(self, node, scope, cond_node, what: str):
        """Does not run `node` (unknown condition / iterable): what it assigns becomes UNKNOWN."""
        from .skip import effects
        eff = effects(node, self._effects_cache)
        for name in eff.names:
            self.assign_name(name, UNKNOWN, scope)
        for base, attr in eff.attrs:
            obj = self.lookup(base, scope)
            if isinstance(obj, InstanceVal):
                obj.attrs[attr] = UNKNOWN
        for base in eff.mutated:
            obj = self.lookup(base, scope)
            if isinstance(obj, (list, dict)):
                self.ctx_taint(obj)
        if (eff.global_keys or eff.global_any) and self.lookup("globals", scope) is self.builtins.get("globals"):
            module = self.module_globals(scope)      # `globals()["name"] = ...` in the skipped code
            if eff.global_any:
                self.clobber_globals(module, cond_node)
            for name in eff.global_keys:
                module[name] = UNKNOWN
        for base in eff.callee_roots:
            obj = self.lookup(base, scope)
            if isinstance(obj, TaskManagerVal):
                obj.setup_unknown = True     # whether it is set up there is unknown (TS705 / TS902 / TS903)
        if eff.returns and self.frame is not None:
            self.frame.maybe_returned = True
        if eff.yields and self.frame is not None and self.frame.yields is not None:
            self.frame.yields_unknown = True      # a generator's items are then unknown
        if (eff.breaks or eff.returns) and self._loop_depth:
            raise _LoopUnknown()          # whether the enclosing loop goes on is unknown
        if any(self._relevant_callee(r, scope) for r in eff.callee_roots):
            self.unknown(cond_node, f"{what} `{self.text(cond_node)}` could not be resolved statically; "
                         "the TS code it guards is not analyzed", "control-flow")
        if self.capture is not None and eff.any_call:
            self.capture.incomplete(cond_node, f"{what} `{self.text(cond_node)}` is not known at trace time")

    def _relevant_callee(self, name: str, scope) -> bool:
        """Whether a call rooted at `name` may build TS objects (not an external library call)."""
        v = self.lookup(name, scope)
        if v is UNKNOWN or v is RUNTIME or isinstance(v, QualRef):
            return False
        if isinstance(v, BuiltinFunc) and v.qualname.startswith(("builtins.", "math.", "argparse.")):
            return False
        if is_concrete(v) or isinstance(v, (list, dict, tuple)):
            return False
        return True

    def _x_for(self, node: cst.For, scope):
        cap = self.capture
        if cap is None or self.frontend not in ("plain", "next") or not _plain_range(node.iter, self, scope):
            return self._x_for_run(node, scope)
        if self.frontend == "plain":
            self._dsl_traced_block(node, "for", scope)
            return self._x_for_run(node, scope)
        # FrontendNext runs a `range` loop at run time too, and a routed value recorded in
        # it changes the schedule's route list inside that loop (CONTAINER_LIST_SHAPE_MUTATED)
        before = cap.b.route_count
        self._x_for_run(node, scope)
        if cap.b.route_count > before and _rewritten_by_dsl(self.frame.func if self.frame is not None else None):
            cap.b.report("TS965", "a plain `for ... in range(...)` in this schedule is compiled by the CuTe DSL as a "
                         "run-time loop, and a work call in it passes a routed value (a task-local variable), "
                         "which cannot be recorded inside one: use `cutlass.range_constexpr(...)`", self.rng(node),
                         fix=self._compile_time_fix(node, "for", scope))
            cap.abort()

    def _x_for_run(self, node: cst.For, scope):
        it = self.eval(node.iter, scope)
        if type(it) in (int, float, bool):
            fn = self.frame.func if self.frame is not None else None
            # `for x in n` with `n` an int: TS964 (not where the CuTe DSL rewrites the loop)
            if not getattr(fn, "is_jit", False) and not _rewritten_by_dsl(fn):
                self.type_error(node.iter, f"'{type(it).__name__}' object is not iterable")
        seq = self.iterate(it)
        if seq is None and self.capture is not None and _work_only_range_loop(node):
            # `for i in range_constexpr(n)` with n unknown around work calls only (no
            # pipeline / work-queue / PDL op): the sync structure does not depend on n, so
            # the body is traced once with an unknown index instead of dropping the schedule
            seq = [UNKNOWN]
        if seq is None:
            self.skip(node, scope, node.iter, "iterable")
            return
        count = 0
        broke = False
        self._loop_depth += 1
        try:
            for item in seq:
                count += 1
                if count > self.ctx.MAX_LOOP:
                    self._loop_depth -= 1
                    try:
                        self.skip(node, scope, node.iter, "loop (too many iterations)")
                    finally:
                        self._loop_depth += 1
                    return
                self.bind_target(node.target, item, scope)
                try:
                    self.exec_block(node.body, scope)
                except _Break:
                    broke = True
                    break
                except _Continue:
                    continue
        except _LoopUnknown:
            self._loop_depth -= 1
            try:
                self.skip(node, scope, node.iter, "loop exit")
            finally:
                self._loop_depth += 1
            return
        finally:
            self._loop_depth -= 1
        if not broke and node.orelse is not None:
            self.exec_block(node.orelse.body, scope)

    def _x_while(self, node: cst.While, scope):
        count = 0
        self._loop_depth += 1
        try:
            while True:
                v = self.eval(node.test, scope)
                if not count:
                    self._runtime_truth(node.test, v)
                t = truth(v)
                if t is None or count >= self.ctx.MAX_LOOP:
                    raise _LoopUnknown()
                if not t:
                    break
                count += 1
                try:
                    self.exec_block(node.body, scope)
                except _Break:
                    return
                except _Continue:
                    continue
        except _LoopUnknown:
            self._loop_depth -= 1
            try:
                self.skip(node, scope, node.test, "loop condition")
            finally:
                self._loop_depth += 1
            return
        finally:
            self._loop_depth -= 1
        if node.orelse is not None:
            self.exec_block(node.orelse.body, scope)

    def _x_with(self, node: cst.With, scope):
        entered = []
        failed = True
        try:
            for item in node.items:
                cm = self.eval(item.item, scope)
                value = self.enter(cm, item.item)
                if isinstance(cm, (BlockCM, InstanceVal)) or (isinstance(cm, GeneratorCMVal) and cm.state):
                    entered.append((cm, item.item))
                if item.asname is not None:
                    self.bind_target(item.asname.name, value, scope)
            self.exec_block(node.body, scope)
            failed = False
        except (_Return, _Break, _Continue):
            failed = False              # leaving the block normally: a generator's rest runs
            raise
        finally:
            for cm, item_node in reversed(entered):
                self.exit(cm, item_node, failed)

    def enter(self, cm, node):
        if isinstance(cm, BlockCM):
            return self.ts.enter_block(cm, node)
        if (cm is UNKNOWN or cm is RUNTIME) and self.capture is not None:
            self.capture.incomplete(node, f"`with {self.text(node)}` could not be resolved")
        if isinstance(cm, GeneratorCMVal) and self.capture is not None:
            # its code before the `yield` runs before the block and the rest after it
            split = _generator_cm_split(self, cm.func)
            if split is not None:
                return self._enter_generator_cm(cm, split, node)
            self.capture.incomplete(node, f"`with {self.text(node)}` runs a @contextmanager function around "
                                    "the block whose form (a `try`, a `yield` not at the top of its body) "
                                    "is not modelled")
        if isinstance(cm, InstanceVal):
            fn = self.getattr(cm, "__enter__", node)
            if fn is not UNKNOWN:
                return self.call(fn, [], {}, node)
        return UNKNOWN

    def _enter_generator_cm(self, cm, split, node):
        """The statements of a `@contextmanager` function before its `yield`, run with its
        arguments; the yielded value is what `as` binds. The frame's scope is kept for the
        rest (`exit`)."""
        before, value_node, after = split
        scope, self_val = self.open_call(cm.func, cm.args, cm.kwargs, node)
        with self.in_frame(cm.func, scope, self_val):
            self.exec_block(before, scope)
            value = self.eval(value_node, scope) if value_node is not None else None
        cm.state = (scope, self_val, after)
        return value

    def exit(self, cm, node, failed: bool = False):
        if isinstance(cm, GeneratorCMVal):
            # the rest of the generator runs when the block is left normally; an exception
            # in the block is raised at its `yield`, and with no handler there the rest is
            # skipped (the run stops anyway)
            state, cm.state = cm.state, None
            if state is not None and not failed:
                scope, self_val, after = state
                with self.in_frame(cm.func, scope, self_val):
                    self.exec_block(after, scope)
            return
        if isinstance(cm, BlockCM):
            self.ts.exit_block(cm, node)
        elif isinstance(cm, InstanceVal):
            # a class with `__enter__` / `__exit__`: its `__exit__` runs after the block
            fn = self.getattr(cm, "__exit__", node)
            if fn is not UNKNOWN:
                self.call(fn, [None, None, None], {}, node)

    def _x_try(self, node: cst.Try, scope):
        try:
            if self._try_body(node, scope):
                self.exec_block(node.handlers[0].body, scope)
            elif node.orelse is not None:
                self.exec_block(node.orelse.body, scope)
        finally:
            if node.finalbody is not None:
                self.exec_block(node.finalbody.body, scope)

    def _try_body(self, node: cst.Try, scope) -> bool:
        """Runs a `try` body; whether a raise in it went to the (first) handler. While a
        body with handlers runs, `_try_depth` counts it: an exception there may be caught,
        so a NameError is not reported (TS962)."""
        handled = 1 if node.handlers else 0
        self._try_depth += handled
        try:
            self.exec_block(node.body, scope)
        except UserRaise:
            if not handled:
                raise
            return True
        finally:
            self._try_depth -= handled
        return False


def _generator_cm_split(it, func):
    """(statements before, the yielded expression or None, statements after) of a
    `@contextmanager` function of the form `setup; yield value; teardown`: one `yield`,
    a statement of the function body itself, no `try` or `return` anywhere in the body,
    no other `yield`; else None."""
    if not isinstance(func, FuncVal) or isinstance(func.node, cst.Lambda):
        return None
    memo = it.__dict__.setdefault("_gen_cm_split", {})
    key = id(func.node)
    if key in memo:
        return memo[key]
    from .skip import effects
    body = it.ctx.src.body(func.node) if it.ctx.src is not None else func.node.body
    stmts = list(body.body) if isinstance(body, cst.IndentedBlock) else None
    out = None
    if stmts is not None:
        at = [i for i, st in enumerate(stmts) if _is_yield_stmt(st)]
        if len(at) == 1:
            i = at[0]
            rest = stmts[:i] + stmts[i + 1:]
            if not any(_has_try(st) or effects(st).yields or effects(st).returns for st in rest):
                y = stmts[i].body[0].value
                out = (tuple(stmts[:i]), y.value, tuple(stmts[i + 1:]))
    memo[key] = out
    return out


def _is_yield_stmt(st) -> bool:
    return isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 and isinstance(st.body[0], cst.Expr) \
        and isinstance(st.body[0].value, cst.Yield) and not isinstance(st.body[0].value.value, cst.From)


def _has_try(st) -> bool:
    found = []

    class _V(cst.CSTVisitor):
        def visit_Try(self, node):
            found.append(node)
            return False

        def visit_TryStar(self, node):
            found.append(node)
            return False

        def visit_FunctionDef(self, node):
            return False

        def visit_ClassDef(self, node):
            return False
    st.visit(_V())
    return bool(found)


# names whose call in a schedule is a pipeline, work-queue or PDL op (not a work call)
_SYNC_OP_NAMES = frozenset({
    "try_acquire", "acquire", "commit", "try_wait", "wait", "release",
    "fetch_work_tile", "get_and_advance_work_tile", "wait_griddep", "launch_griddep",
})


def _work_only_range_loop(node: cst.For) -> bool:
    """`for x in range(...)` / `range_constexpr(...)` whose body holds only simple
    statements and no call of a sync op (and no else clause)."""
    it = node.iter
    if node.orelse is not None or not isinstance(it, cst.Call):
        return False
    f = it.func
    fname = f.attr.value if isinstance(f, cst.Attribute) else f.value if isinstance(f, cst.Name) else None
    if fname not in ("range", "range_constexpr"):
        return False
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else [node.body]
    found = []

    class _V(cst.CSTVisitor):
        def visit_Call(self, call):
            g = call.func
            if isinstance(g, cst.Attribute) and g.attr.value in _SYNC_OP_NAMES:
                found.append(call)

    for stmt in body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            return False
        for small in stmt.body:
            if not isinstance(small, (cst.Expr, cst.Assign, cst.AnnAssign, cst.Pass)):
                return False
        stmt.visit(_V())
    return not found


def _pure_ref(node) -> bool:
    """An expression of names, attributes, subscripts and tuples only (no call: nothing to
    run)."""
    if isinstance(node, cst.Name):
        return True
    if isinstance(node, cst.Attribute):
        return _pure_ref(node.value)
    if isinstance(node, cst.Tuple):
        return all(_pure_ref(e.value) for e in node.elements)
    if isinstance(node, cst.Subscript):
        return _pure_ref(node.value) and all(
            isinstance(e.slice, cst.Index) and _pure_ref(e.slice.value) for e in node.slice)
    return False


def _const_expr_test(test) -> bool:
    """`cutlass.const_expr(...)` / `const_expr(...)`: a condition the DSL folds while compiling."""
    f = test.func if isinstance(test, cst.Call) else None
    name = f.attr.value if isinstance(f, cst.Attribute) else (f.value if isinstance(f, cst.Name) else "")
    return name == "const_expr"


def _plain_range(iterable, it, scope) -> bool:
    """A `for` over Python's own `range(...)` (not `cutlass.range_constexpr`)."""
    if not (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "range"):
        return False
    return it.lookup("range", scope) is it.builtins.get("range")


def _rewritten_by_dsl(func) -> bool:
    """Whether the CuTe DSL rewrites `func`'s control flow: it is defined inside a
    @cute.jit / @cute.kernel function (the DSL transforms that function's source, nested
    functions included)."""
    s = getattr(func, "closure", None)
    while s is not None:
        f = getattr(s, "func", None)
        if f is not None and getattr(f, "is_jit", False):
            return True
        s = s.parent
    return False


def _names_in(block) -> set:
    """Identifiers read anywhere in a statement block (or an `else` / `elif`)."""
    out = set()
    stack = [block]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Name):
            out.add(n.value)
        stack.extend(n.children)
    return out
