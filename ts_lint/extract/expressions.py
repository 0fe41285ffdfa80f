"""Expressions: values of names, literals, operators, attributes, subscripts and calls."""
from __future__ import annotations

import enum
import operator
from typing import Optional

import libcst as cst

from .classes import is_named_tuple, named_tuple_attr, named_tuple_items
from .values import (
    BoundMethod, BuiltinFunc, ClassVal, DataFlowToken, DefaultDictVal, DtypeVal, FieldVal, FuncVal, InstanceVal,
    is_abstract, is_concrete, NamespaceVal, PartialVal, QualRef, RUNTIME, ScheduleFuncVal, Scope, SuperVal,
    TaskManagerObj, TracedUnbound, UNKNOWN,
)


_BINOPS = {
    cst.Add: operator.add, cst.Subtract: operator.sub, cst.Multiply: operator.mul,
    cst.Divide: operator.truediv, cst.FloorDivide: operator.floordiv, cst.Modulo: operator.mod,
    cst.Power: operator.pow, cst.LeftShift: operator.lshift, cst.RightShift: operator.rshift,
    cst.BitOr: operator.or_, cst.BitAnd: operator.and_, cst.BitXor: operator.xor,
    cst.MatrixMultiply: operator.matmul,
}


_CMPOPS = {
    cst.Equal: operator.eq, cst.NotEqual: operator.ne, cst.LessThan: operator.lt,
    cst.LessThanEqual: operator.le, cst.GreaterThan: operator.gt,
    cst.GreaterThanEqual: operator.ge,
}


def _numeric(v) -> bool:
    return isinstance(v, (int, float)) or v is RUNTIME or isinstance(v, enum.IntFlag)


def binop(op, a, b):
    """`a op b` on abstract values."""
    if a is UNKNOWN or b is UNKNOWN:
        return UNKNOWN
    if a is RUNTIME or b is RUNTIME:
        other = b if a is RUNTIME else a
        return RUNTIME if (other is RUNTIME or _numeric(other) or isinstance(other, DtypeVal)) else UNKNOWN
    if op is operator.add and isinstance(a, (list, tuple)) and type(a) is type(b):
        return a + b
    if op is operator.mul and isinstance(b, (list, tuple, str, bytes)) and isinstance(a, int):
        a, b = b, a
    if op is operator.mul and isinstance(a, (list, tuple, str, bytes)) and isinstance(b, int) \
            and not isinstance(b, bool):
        return a * b if 0 <= b and len(a) * b <= 10_000 else UNKNOWN
    if not (is_concrete(a) and is_concrete(b)):
        return UNKNOWN
    if op is operator.pow and isinstance(b, int) and abs(b) > 4096:
        return UNKNOWN
    if op is operator.lshift and isinstance(b, int) and b > 4096:
        return UNKNOWN
    try:
        return op(a, b)
    except Exception:
        return UNKNOWN


def truth(v) -> Optional[bool]:
    """True / False, or None when unknown."""
    if v is UNKNOWN or v is RUNTIME or isinstance(v, DataFlowToken):
        return None
    if v is None or isinstance(v, (bool, int, float, str, bytes, tuple, list, dict, set, range,
                                   frozenset)):
        try:
            return bool(v)
        except Exception:
            return None
    if isinstance(v, enum.Enum):
        return bool(v)
    return True


def compare(op_node, a, b):
    if isinstance(op_node, (cst.Is, cst.IsNot)):
        neg = isinstance(op_node, cst.IsNot)
        if a is UNKNOWN or b is UNKNOWN:
            return UNKNOWN
        if a is RUNTIME or b is RUNTIME:
            other = b if a is RUNTIME else a
            if other is None or isinstance(other, bool):
                return neg
            return UNKNOWN
        return (a is not b) if neg else (a is b)
    if isinstance(op_node, (cst.In, cst.NotIn)):
        neg = isinstance(op_node, cst.NotIn)
        if is_abstract(a) or is_abstract(b):
            return UNKNOWN
        if isinstance(b, (list, tuple, set, frozenset)):
            found = any(x is a or (is_concrete(x) and is_concrete(a) and x == a) for x in b)
            if not found and any(is_abstract(x) for x in b):
                return UNKNOWN
            return (not found) if neg else found
        if isinstance(b, dict):
            found = a in b if (is_concrete(a) or not isinstance(a, (list, dict))) else False
            return (not found) if neg else found
        if (isinstance(b, (str, range, enum.Flag)) or (isinstance(b, type) and issubclass(b, enum.Enum))) \
                and is_concrete(a):
            try:
                return (a not in b) if neg else (a in b)       # an enum class: membership of a member
            except Exception:
                return UNKNOWN
        return UNKNOWN
    fn = _CMPOPS[type(op_node)]
    if a is UNKNOWN or b is UNKNOWN:
        return UNKNOWN
    if a is RUNTIME or b is RUNTIME:
        return RUNTIME if fn not in (operator.eq, operator.ne) or _numeric(a) or _numeric(b) else UNKNOWN
    if fn in (operator.eq, operator.ne) and not (is_concrete(a) and is_concrete(b)):
        # identity semantics for objects (resources compare by identity)
        if isinstance(a, (list, tuple, dict)) or isinstance(b, (list, tuple, dict)):
            return UNKNOWN
        same = a is b
        return same if fn is operator.eq else not same
    if not (is_concrete(a) and is_concrete(b)):
        return UNKNOWN
    try:
        return fn(a, b)
    except Exception:
        return UNKNOWN


class ExpressionsMixin:
    # ================================================================== expressions
    def eval(self, node, scope: Scope):
        self.ctx.step()
        fn = self._eval.get(type(node))
        if fn is None:
            return UNKNOWN
        return fn(node, scope)

    def _e_yield(self, node: cst.Yield, scope):
        """`yield v` / `yield from xs` in a generator function's frame (interpreter.
        call_function): the items are collected; the expression's value is None."""
        frame = self.frame
        if isinstance(node.value, cst.From):
            v = self.eval(node.value.item, scope)
            items = self.iterate(v)
        else:
            items = [None if node.value is None else self.eval(node.value, scope)]
        if frame is None or frame.yields is None:
            return UNKNOWN
        if items is None:
            frame.yields_unknown = True
        else:
            frame.yields.extend(items)
        return None

    def _e_name(self, node: cst.Name, scope):
        if self._unbound_reads and id(node) in self._unbound_reads:
            self._unbound_read(node)
        v = self.lookup(node.value, scope)
        if v is UNKNOWN and not self.frames and self.ctx.importing and self.module_name == "__main__":
            self._module_level_read(node, scope)
        elif type(v) is TracedUnbound:
            v = self._traced_unbound_read(node, v)
        return v

    def _traced_unbound_read(self, node, v):
        """TS962 for reading a name that only one branch of a run-time `if` gave a value
        (values.TracedUnbound), where the read is certainly reached (Interpreter.
        certain_error's guards); elsewhere the value is unknown."""
        ctx = self.ctx
        if ctx.assumed or self.captures or self._try_depth or any(f.maybe_returned for f in self.frames):
            return UNKNOWN
        line = self.rng(v.node).line     # (certain_error raises)
        self.certain_error(node, "TS962", f"name '{v.name}' is read here, but only one branch of the run-time "
                           f"`if` at line {line} gives it a value and it has none before: the CuTe DSL traces "
                           f"both branches and cannot carry '{v.name}' out of the `if` (SCOPE_UNBOUND_NAME_IN_"
                           f"TRACE); give it a value before the `if`")

    def _e_number(self, node, scope):
        v = node.value
        if isinstance(node, cst.Integer) and v.isdigit() and (v[0] != "0" or len(v) == 1):
            return int(v)                 # the common case, without literal_eval
        try:
            return node.evaluated_value
        except Exception:
            return UNKNOWN

    def _e_string(self, node: cst.SimpleString, scope):
        v = node.value
        if "\\" not in v and v[:1] in "'\"":      # plain literal: no need for literal_eval
            q = 3 if v[:3] in ('"""', "'''") else 1
            return v[q:-q]
        try:
            return node.evaluated_value
        except Exception:
            return UNKNOWN

    def _e_concat(self, node: cst.ConcatenatedString, scope):
        left, right = self.eval(node.left, scope), self.eval(node.right, scope)
        if isinstance(left, str) and isinstance(right, str):
            return left + right
        if isinstance(left, bytes) and isinstance(right, bytes):
            return left + right
        return UNKNOWN

    def _e_fstring(self, node: cst.FormattedString, scope):
        out = []
        for part in node.parts:
            if isinstance(part, cst.FormattedStringText):
                out.append(part.value)
                continue
            v = self.eval(part.expression, scope)
            if not is_concrete(v):
                name = getattr(v, "attrs", {}).get("name") if isinstance(v, InstanceVal) else None
                if isinstance(name, str) and part.conversion is None and part.format_spec is None:
                    out.append(repr(v))
                    continue
                return UNKNOWN
            spec = ""
            if part.format_spec:
                for sp in part.format_spec:
                    if isinstance(sp, cst.FormattedStringText):
                        spec += sp.value
                    else:
                        sv = self.eval(sp.expression, scope)
                        if not is_concrete(sv):
                            return UNKNOWN
                        spec += str(sv)
            from .pybuiltins import _small_spec
            if not _small_spec(spec):
                return UNKNOWN
            try:
                if part.conversion == "r":
                    v = repr(v)
                elif part.conversion == "s":
                    v = str(v)
                elif part.conversion == "a":
                    v = ascii(v)
                out.append(format(v, spec))
            except Exception:
                return UNKNOWN
        return "".join(out)

    def _elements(self, elements, scope):
        out = []
        for el in elements:
            if type(el) is cst.StarredElement:
                v = self.eval(el.value, scope)
                seq = self.iterate(v)
                if seq is None:
                    return None
                out.extend(seq)
            else:
                out.append(self.eval(el.value, scope))
        return out

    def _e_tuple(self, node, scope):
        items = self._elements(node.elements, scope)
        return UNKNOWN if items is None else tuple(items)

    def _e_list(self, node, scope):
        items = self._elements(node.elements, scope)
        return UNKNOWN if items is None else items

    def _e_set(self, node, scope):
        items = self._elements(node.elements, scope)
        if items is None:
            return UNKNOWN
        try:
            return set(items)
        except TypeError:
            return UNKNOWN

    def _e_dict(self, node: cst.Dict, scope):
        out = {}
        for el in node.elements:
            if isinstance(el, cst.StarredDictElement):
                v = self.eval(el.value, scope)
                if not isinstance(v, dict):
                    return UNKNOWN
                out.update(v)
            else:
                k = self.eval(el.key, scope)
                v = self.eval(el.value, scope)
                try:
                    out[k] = v
                except TypeError:
                    return UNKNOWN
        return out

    def _comprehension(self, node, scope, emit):
        """Runs the for/if clauses of a comprehension, calling emit(inner scope) per item."""
        inner = Scope("comprehension", scope, scope.module)
        count = [0]

        def run(comp: cst.CompFor):
            it = self.eval(comp.iter, inner if count[0] else scope)
            if comp is node.for_in and type(it) in _NO_ITEMS:
                # `[x for x in n]` with `n` an int: TS964 (the outermost iterable is
                # iterated at once, a generator expression's too)
                self.type_error(comp.iter, f"'{type(it).__name__}' object is not iterable")
            seq = self.iterate(it)
            if seq is None:
                return False
            for item in seq:
                count[0] += 1
                if count[0] > self.ctx.MAX_LOOP:
                    return False
                self.bind_target(comp.target, item, inner)
                ok = True
                for cond in comp.ifs:
                    t = truth(self.eval(cond.test, inner))
                    if t is None:
                        return False
                    if not t:
                        ok = False
                        break
                if not ok:
                    continue
                if comp.inner_for_in is not None:
                    if not run(comp.inner_for_in):
                        return False
                else:
                    emit(inner)
            return True
        return run(node.for_in)

    def _e_listcomp(self, node, scope):
        out = []
        ok = self._comprehension(node, scope, lambda s: out.append(self.eval(node.elt, s)))
        return out if ok else UNKNOWN

    def _e_setcomp(self, node, scope):
        v = self._e_listcomp(node, scope)
        try:
            return set(v) if isinstance(v, list) else UNKNOWN
        except TypeError:
            return UNKNOWN

    def _e_dictcomp(self, node, scope):
        out = {}

        def emit(s):
            k = self.eval(node.key, s)
            try:
                out[k] = self.eval(node.value, s)
            except TypeError:
                pass
        ok = self._comprehension(node, scope, emit)
        return out if ok else UNKNOWN

    def _e_binop(self, node: cst.BinaryOperation, scope):
        a = self.eval(node.left, scope)
        b = self.eval(node.right, scope)
        op = _BINOPS.get(type(node.operator))
        if op is not None and (_function_type(a) and _plain_number(b) or _plain_number(a) and _function_type(b)):
            # `MyTask.get_domain + 1`: a function object has no arithmetic (TS964)
            sym = node.operator.__class__.__name__
            sym = _OPERATOR_SYMBOLS.get(sym, sym)
            ta, tb = _function_type(a) or type(a).__name__, _function_type(b) or type(b).__name__
            self.certain_error(node, "TS964", f"unsupported operand type(s) for {sym}: '{ta}' and '{tb}': "
                               "Python raises TypeError here")
        return UNKNOWN if op is None else binop(op, a, b)

    def _e_unary(self, node: cst.UnaryOperation, scope):
        v = self.eval(node.expression, scope)
        if isinstance(node.operator, cst.Not):
            t = truth(v)
            return UNKNOWN if t is None else (not t)
        if v is RUNTIME:
            return RUNTIME
        if not is_concrete(v):
            return UNKNOWN
        try:
            if isinstance(node.operator, cst.Minus):
                return -v
            if isinstance(node.operator, cst.Plus):
                return +v
            if isinstance(node.operator, cst.BitInvert):
                return ~v
        except Exception:
            return UNKNOWN
        return UNKNOWN

    def _e_boolop(self, node: cst.BooleanOperation, scope):
        a = self.eval(node.left, scope)
        t = truth(a)
        is_and = isinstance(node.operator, cst.And)
        if t is None:
            b = self.eval(node.right, scope)
            tb = truth(b)
            if is_and and tb is False:
                return UNKNOWN if a is UNKNOWN else (b if a is not RUNTIME else RUNTIME)
            return RUNTIME if (a is RUNTIME and (b is RUNTIME or _numeric(b))) else UNKNOWN
        if is_and:
            return self.eval(node.right, scope) if t else a
        return a if t else self.eval(node.right, scope)

    def _e_compare(self, node: cst.Comparison, scope):
        left = self.eval(node.left, scope)
        result = True
        for ct in node.comparisons:
            right = self.eval(ct.comparator, scope)
            r = compare(ct.operator, left, right)
            if r is UNKNOWN or r is RUNTIME:
                result = r if result is True or result is r else UNKNOWN
            elif r is False and result is True:
                return False
            left = right
        return result

    def _e_ifexp(self, node: cst.IfExp, scope):
        t = truth(self.eval(node.test, scope))
        if t is True:
            return self.eval(node.body, scope)
        if t is False:
            return self.eval(node.orelse, scope)
        return self.join(self.eval(node.body, scope), self.eval(node.orelse, scope))

    def join(self, a, b):
        """The value of `a if <unknown> else b`: the value both are, a compile entry point
        when both are one (TSApi.join_compile), else UNKNOWN."""
        if is_concrete(a) and is_concrete(b) and type(a) is type(b) and a == b:
            return a
        if a is b:
            return a
        c = self.ts.join_compile(a, b)
        return UNKNOWN if c is None else c

    def _e_lambda(self, node: cst.Lambda, scope):
        defaults = self._defaults(node.params, scope)
        return FuncVal(node, scope, "<lambda>", self._qualname_in(scope, "<lambda>"), self.module_name,
                       defaults=defaults)

    def _e_namedexpr(self, node: cst.NamedExpr, scope):
        v = self.eval(node.value, scope)
        self.bind_target(node.target, v, scope)
        return v

    def _e_subscript(self, node: cst.Subscript, scope):
        base = self.eval(node.value, scope)
        keys = []
        for el in node.slice:
            sl = el.slice
            if isinstance(sl, cst.Index):
                keys.append(self.eval(sl.value, scope))
            else:
                parts = [None if x is None else self.eval(x, scope) for x in (sl.lower, sl.upper, sl.step)]
                if any(is_abstract(p) for p in parts):
                    keys.append(UNKNOWN)
                else:
                    keys.append(slice(*parts))
        key = keys[0] if len(keys) == 1 else tuple(keys)
        if type(base) in _NO_ITEMS:       # `warps[0]` with `warps` an int (two arguments swapped): TS964
            self.type_error(node, f"'{type(base).__name__}' object is not subscriptable")
        return self.getitem(base, key, node)

    def getitem(self, base, key, node=None):
        if base is RUNTIME:
            return RUNTIME
        if getattr(base, "qualname", None) == "cutlass.cute.compile" and not isinstance(base, QualRef):
            return self.ts.compile_with(key, node)  # cute.compile[cute.FrontendNext, ...](f, ...) calls f too
        if isinstance(base, DataFlowToken):
            cap = base.cap
            if cap is not None:
                cap.token_misuse(base, node, indexed=True)
            return UNKNOWN
        if isinstance(base, (QualRef, ClassVal)) or base is UNKNOWN:
            return UNKNOWN if not isinstance(base, QualRef) else QualRef(base.qualname + "[]")
        if isinstance(base, type):
            if issubclass(base, enum.Enum) and isinstance(key, str):
                return base.__members__.get(key, UNKNOWN)     # `Role["LOAD"]` (a KeyError otherwise)
            return UNKNOWN
        if key is UNKNOWN or key is RUNTIME:
            return UNKNOWN if not (isinstance(base, (list, tuple)) and base and all(
                x is RUNTIME for x in base)) else RUNTIME
        if isinstance(base, (list, tuple, str, range)):
            try:
                return base[key]
            except Exception:
                return UNKNOWN
        if isinstance(base, dict):
            try:
                return base[key]
            except KeyError:
                if isinstance(base, DefaultDictVal) and base.factory is not None:
                    v = base[key] = self.call(base.factory, [], {}, node)
                    return v
                return UNKNOWN
            except Exception:
                return UNKNOWN
        if isinstance(base, InstanceVal):
            items = named_tuple_items(base)
            if items is not None:
                try:
                    return items[key]
                except Exception:
                    return UNKNOWN
            fn = self.getattr(base, "__getitem__", node)
            if fn is not UNKNOWN:
                return self.call(fn, [key], {}, node)
        return UNKNOWN

    # ------------------------------------------------------------------ attributes
    def _e_attribute(self, node: cst.Attribute, scope):
        obj = self.eval(node.value, scope)
        return self.getattr(obj, node.attr.value, node)

    def getattr(self, obj, name: str, node=None):
        if obj is UNKNOWN:
            return UNKNOWN
        if obj is RUNTIME:
            return RUNTIME
        if isinstance(obj, QualRef):
            return self.resolve_qual(obj.qualname + "." + name)
        if isinstance(obj, (FuncVal, PartialVal)) and name in obj.attrs:
            return obj.attrs[name]
        if isinstance(obj, PartialVal):
            if name == "func":
                return obj.target
            if name == "args":
                return obj.pre
            if name == "keywords":
                return dict(obj.pre_kw)
            return UNKNOWN
        if isinstance(obj, BuiltinFunc) and obj.qualname == "builtins.type" and name == "__new__":
            from .classes import type_new        # `type.__new__(mcls, name, bases, ns)` in a metaclass
            return BuiltinFunc("__new__", type_new, qualname="type.__new__")
        if isinstance(obj, BuiltinFunc) and obj.qualname:
            from .stdlib import stdlib
            v = stdlib(f"{obj.qualname}.{name}")      # `itertools.chain.from_iterable`
            if v is not None:
                return v
        h = self.ts.getattr_hook(obj, name, node)
        if h is not NotImplemented:
            return h
        if isinstance(obj, SuperVal):
            return self._super_attr(obj, name, node)
        if isinstance(obj, InstanceVal):
            if name in obj.attrs:
                return obj.attrs[name]
            if name == "__class__":
                return obj.cls
            if name[:1] == "_" and is_named_tuple(obj.cls):
                v = named_tuple_attr(self, obj, name)
                if v is not NotImplemented:
                    return v
            owner, v = obj.cls.lookup(name)
            if owner is not None:
                return self._bind(v, obj, obj.cls, node)
            return self.ts.missing_attr(obj, name, node)
        if isinstance(obj, ClassVal):
            if name == "__name__":
                return obj.name
            if name == "__qualname__":
                return obj.qualname
            if name == "__new__":
                return BuiltinFunc("__new__", lambda it, a, k, c, cls=obj: self.new_instance(cls, c),
                                   qualname=f"{obj.qualname}.__new__")
            if name[:1] == "_" and is_named_tuple(obj):
                v = named_tuple_attr(self, obj, name)
                if v is not NotImplemented:
                    return v
            owner, v = obj.lookup(name)
            if owner is None:
                if node is not None and not name.startswith("__") and _class_lacks(obj, name):
                    # the program would raise AttributeError here; rules that take a class
                    # attribute (domain_loop's `MyTask.get_domain`) report it (TS111)
                    self.__dict__.setdefault("missing_class_attrs", {})[id(node)] = (obj, name)
                return UNKNOWN
            if isinstance(v, FuncVal):
                if v.kind == "classmethod":
                    return BoundMethod(obj, v)
                return v
            if isinstance(v, BuiltinFunc) and v.qualname.endswith(".__classmethod__"):
                return BoundMethod(obj, v)
            return v
        if isinstance(obj, NamespaceVal):
            return obj.attrs.get(name, UNKNOWN)
        if isinstance(obj, (FuncVal, BuiltinFunc)):
            if name == "__name__":
                return obj.name
            if name == "__qualname__":
                return obj.qualname
            return UNKNOWN
        if isinstance(obj, BoundMethod):
            if name in ("__func__",):
                return obj.func
            if name == "__self__":
                return obj.self_val
            if name == "__name__":
                return getattr(obj.func, "name", UNKNOWN)
            return UNKNOWN
        if isinstance(obj, DtypeVal):
            if name == "width":
                return obj.width
            return UNKNOWN
        if isinstance(obj, ScheduleFuncVal):
            # functools.wraps: a @schedule function keeps its name (a registry keyed by it)
            if name == "__name__":
                return obj.name if obj.name is not None else UNKNOWN
            if name == "__qualname__":
                return obj.func.qualname
            if name == "__wrapped__":
                return obj.source if obj.source is not None else obj.func
            return UNKNOWN
        from .pybuiltins import py_attr
        return py_attr(self, obj, name, node)

    def _bind(self, v, inst, cls, node):
        from .values import ScheduleFuncVal as _SF
        if isinstance(v, FuncVal):
            if v.kind == "staticmethod":
                return v
            if v.kind == "classmethod":
                return BoundMethod(cls, v)
            if v.kind == "property":
                return self.call_function(v, [inst], {}, node)
            return BoundMethod(inst, v)
        if isinstance(v, _SF):
            return BoundMethod(inst, v)
        if isinstance(v, BuiltinFunc):
            if v.qualname.endswith(".__property__"):
                return v.impl(self, [inst], {}, node)
            return BuiltinFunc(v.name, v.impl, v.qualname, v.owner, v.required_positional, inst)
        from .tsapi import WorkMethodVal
        if isinstance(v, WorkMethodVal):
            return BoundMethod(inst, v)
        if isinstance(v, FieldVal):
            return v.default if v.has_default else UNKNOWN
        return v

    def _super_attr(self, sup: SuperVal, name: str, node):
        inst = sup.self_val
        mro = inst.cls.mro if isinstance(inst, InstanceVal) else (
            inst.mro if isinstance(inst, ClassVal) else [])
        try:
            start = mro.index(sup.cls) + 1
        except ValueError:
            return UNKNOWN
        for k in mro[start:]:
            if name == "__init__":
                init = self.init_of(k)
                if init is not None:
                    return BuiltinFunc("__init__", lambda it, a, kw, c, k=k: self._super_init(k, inst, a, kw, c),
                                       qualname=f"{k.qualname}.__init__")
                continue
            if name == "__new__":
                if isinstance(k.namespace.get("__new__"), FuncVal):
                    return k.namespace["__new__"]          # a static method, implicitly
                if k.builtin == "external" and k.qualname == "type":
                    from .classes import type_new
                    return BuiltinFunc("__new__", type_new, qualname="type.__new__")
            if name in k.namespace:
                return self._bind(k.namespace[name], inst, inst.cls if isinstance(inst, InstanceVal) else inst,
                                  node)
            if k.builtin == "TaskManager" and isinstance(inst, TaskManagerObj):
                return self.ts.tm_attr(inst, name)     # `super().setup_resources_and_tasks()`
        return UNKNOWN

    def _super_init(self, k, inst, args, kwargs, call):
        """`super().__init__(...)` in the own `__init__` of a resource, task or manager
        class, reaching a ts base class (MemoryResource, Task, TaskManager): its arguments
        are bound to the base's signature first, as the keywords a construction passes through `**kwargs`
        land there (`Res(namee=...)` is `MemoryResource.__init__() got an unexpected
        keyword argument 'namee'`; a `DynamicTask(...)` without `num_warps=` is
        `Task.__init__() missing 1 required positional argument`): TS907 at the
        construction, where the keywords are written. Not judged when the construction
        itself unpacks `*` / `**` (bind_api)."""
        from .values import ResourceObj, TaskObj
        if k.builtin is not None and k.live is not None and \
                isinstance(inst, (ResourceObj, TaskObj, TaskManagerObj)) and \
                isinstance(inst.node, cst.Call) and isinstance(call, cst.Call):
            from ts_runtime.api_calls import forwarded_what
            self.ts.bind_api(k.live.__init__, forwarded_what(inst.cls.name, k.name), args, kwargs, inst.node,
                             method=True)
        return self.run_init(k, inst, args, kwargs, call)

    # ------------------------------------------------------------------ calls
    def _e_call(self, node: cst.Call, scope):
        if type(node.func) is cst.Name and node.func.value == "super" and not node.args \
                and self.lookup("super", scope) is self.builtins.get("super"):
            return self._zero_arg_super(scope)
        if type(node.func) is cst.Name and node.func.value == "globals" and not node.args \
                and self.lookup("globals", scope) is self.builtins.get("globals"):
            return self.module_globals(scope)
        fn = self.eval(node.func, scope)
        args, kwargs = [], {}
        for a in node.args:
            v = self.eval(a.value, scope)
            if a.star == "*":
                seq = self.iterate(v)
                if seq is None:
                    return self._unknown_call(fn, node)
                args.extend(seq)
            elif a.star == "**":
                if not isinstance(v, dict) or not all(isinstance(k, str) for k in v):
                    return self._unknown_call(fn, node)
                kwargs.update(v)
            elif a.keyword is not None:
                kwargs[a.keyword.value] = v
            else:
                args.append(v)
        if type(fn) in _NOT_CALLABLE:      # `n()` with `n` an int: TS964
            self.type_error(node, f"'{type(fn).__name__}' object is not callable")
        return self.call(fn, args, kwargs, node)

    def module_globals(self, scope) -> dict:
        """`globals()`: the live variables of the module the code is defined in, so that
        `globals()["name"] = v` / `globals().update(...)` rebind the module's names as a
        `global` statement would, and `globals()["name"]` / `.get(...)` read them. A write
        whose key is not known makes every name of that module unknown (TSApi.taint)."""
        d = (scope.module or self.module_scope).vars
        self.globals_dicts[id(d)] = d
        return d

    def clobber_globals(self, d: dict, node=None):
        """A module namespace written with a key ts-lint cannot resolve: any of its names
        may have changed."""
        for k in d:
            if not (k.startswith("__") and k.endswith("__")):
                d[k] = UNKNOWN
        if node is not None:
            self.unknown(node, "`globals()` is written with a key that could not be resolved statically; "
                         "the module's names are unknown from here", "value")

    def _unknown_call(self, fn, node):
        if isinstance(fn, ScheduleFuncVal) or (isinstance(fn, (ClassVal, FuncVal)) and fn is not None):
            self.unknown(node, f"arguments of `{self.text(node.func)}(...)` could not be resolved "
                         "(unpacked *args/**kwargs); the call is not analyzed", "call")
        return UNKNOWN

    def _zero_arg_super(self, scope):
        fr = self.frame
        if fr is None or not isinstance(fr.func, FuncVal) or fr.func.owner is None or fr.self_val is None:
            return UNKNOWN
        return SuperVal(fr.func.owner, fr.self_val)


def _class_lacks(cls, name: str) -> bool:
    """True only when `cls` surely has no attribute `name`: every class in its MRO is known
    (user classes with resolved bases, and ts classes whose live ts_runtime class is
    checked with hasattr) and none defines it. Anything unresolved answers False."""
    for k in cls.mro:
        if not isinstance(k, ClassVal) or any(not isinstance(b, ClassVal) for b in k.bases):
            return False
        if k.builtin is not None and k.builtin != "object":
            if k.live is None or hasattr(k.live, name):
                return False
        if name in k.namespace:
            return False
    return True


_OPERATOR_SYMBOLS = {"Add": "+", "Subtract": "-", "Multiply": "*", "Divide": "/", "FloorDivide": "//",
                     "Modulo": "%", "Power": "** or pow()", "LeftShift": "<<", "RightShift": ">>",
                     "BitAnd": "&", "BitOr": "|", "BitXor": "^", "MatrixMultiply": "@"}


def _function_type(v) -> str:
    """'function' / 'method' for a function object of the user's code (a `def`, a method
    looked up on a class or bound to an instance), which has no arithmetic; else ''."""
    if type(v) is FuncVal and v.kind not in ("property",):
        return "function"
    if type(v) is BoundMethod and type(v.func) is FuncVal:
        return "method"
    return ""


# exact types (not enum members or other subclasses) of values ts-lint knows: no `x[i]`,
# no `x(...)`, no iteration
_NO_ITEMS = (int, float, bool)
_NOT_CALLABLE = (int, float, bool, str)


def _plain_number(v) -> bool:
    return type(v) in (int, float, bool)
