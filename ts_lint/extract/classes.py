"""Classes: definition, MRO, dataclass fields and generated `__init__`, work methods.

A class body is executed like Python does (its methods become functions, decorators
are applied); `@dataclass` is then interpreted from the annotations, and each
`@consumer_work` / `@producer_work` method becomes a `WorkMethodModel` of the class.
"""
from __future__ import annotations

from typing import List, Optional

import libcst as cst

from ts_runtime.source import SourceRange

from .values import (
    UNKNOWN, BoundMethod, BuiltinFunc, ClassVal, DataclassField, FieldVal, FuncVal, InstanceVal, QualRef,
)

_INTERNAL = ("__ts_class__", "__ts_qualprefix__", "__ts_annotations__")


def c3_mro(cls: ClassVal, bases: List[ClassVal]) -> List[ClassVal]:
    seqs = [list(b.mro) for b in bases] + [list(bases)]
    result = [cls]
    while True:
        seqs = [s for s in seqs if s]
        if not seqs:
            return result
        head = None
        for s in seqs:
            cand = s[0]
            if not any(cand in t[1:] for t in seqs):
                head = cand
                break
        if head is None:            # inconsistent hierarchy: fall back to a DFS order
            for s in seqs:
                for k in s:
                    if k not in result:
                        result.append(k)
            return result
        result.append(head)
        for s in seqs:
            if s and s[0] is head:
                s.pop(0)


def external_class(it, qualname: str) -> ClassVal:
    """A base class we cannot see (imported from elsewhere)."""
    obj = it.ts.builtin_classes["object"]
    k = ClassVal(qualname.rsplit(".", 1)[-1], qualname, module=qualname.rsplit(".", 1)[0]
                 if "." in qualname else "", builtin="external")
    k.mro = [k, obj]
    return k


def build_class(it, node: cst.ClassDef, scope):
    """Runs a `class` statement: the body, the class's creation by its metaclass (a user
    metaclass's `__new__` / `__init__`, a base's `__init_subclass__`), then the class
    decorators; returns what the class name is bound to (a ClassVal, or whatever a user
    metaclass or decorator returned)."""
    from .values import Scope
    ts = it.ts
    bases, raw_bases = [], []
    keywords = {}
    for arg in node.bases:
        if arg.keyword is not None:
            continue
        b = it.eval(arg.value, scope)
        raw_bases.append(b)
        if isinstance(b, type):
            bases.append(external_class(it, f"{b.__module__}.{b.__qualname__}"))
        elif isinstance(b, ClassVal):
            bases.append(b)
        elif isinstance(b, BuiltinFunc) and b.qualname == "builtins.object":
            continue
        elif isinstance(b, BuiltinFunc) and b.qualname == "builtins.type":
            bases.append(external_class(it, "type"))
        elif isinstance(b, BuiltinFunc) and b is ts.symbols.get("TaskManager"):
            bases.append(ts.builtin_classes["TaskManager"])     # `class GemmManager(TaskManager)`
        elif isinstance(b, QualRef):
            bases.append(external_class(it, b.qualname))
        else:
            bases.append(external_class(it, it.text(arg.value)))
    if not bases:
        bases = [ts.builtin_classes["object"]]
    for arg in node.keywords:
        if arg.keyword is not None:
            keywords[arg.keyword.value] = it.eval(arg.value, scope)
    name = node.name.value
    qual = it._qualname_in(scope, name)
    cls = ClassVal(name, qual, module=it.module_name, bases=bases, node=node)
    cls.mro = c3_mro(cls, bases)
    body_scope = Scope("class", scope, scope.module or it.module_scope)
    body_scope.vars["__ts_class__"] = cls
    body_scope.vars["__ts_qualprefix__"] = qual + "."
    it.exec_block(node.body, body_scope)
    ns = body_scope.vars
    cls.annotations = ns.get("__ts_annotations__", [])
    for k in _INTERNAL:
        ns.pop(k, None)
    cls.namespace = ns
    from .enums import build_enum, is_enum_class
    if any(is_enum_class(b) for b in raw_bases):
        return build_enum(it, node, cls, raw_bases, ns, scope)    # a real enum class, or UNKNOWN
    if any(b.builtin == "external" and b.qualname in _NAMED_TUPLE for b in bases):
        # `class Spec(NamedTuple)`: its fields and constructor are a dataclass's (positional
        # or keyword, defaults from the class body); as a tuple see named_tuple_items
        process_dataclass(it, cls, {})
        cls.named_tuple = True
    if any(arg.keyword is not None for arg in node.bases):
        cls.opaque_init = True          # a metaclass (or class keywords) may change construction
    value = create_class(it, cls, keywords, node)
    for dec in reversed(node.decorators):
        d = it.eval(dec.decorator, scope)
        if not (isinstance(d, BuiltinFunc) and d.qualname.startswith("dataclasses.dataclass")):
            cls.opaque_init = True      # a decorator that may replace __init__
        if isinstance(d, BuiltinFunc):
            r = it.call(d, [value], {}, dec.decorator)
            if isinstance(r, ClassVal):
                value = r
        elif isinstance(d, (FuncVal, BoundMethod, ClassVal)):
            # a user decorator runs with the class, as Python does (a registry it fills is
            # then known); one whose result is unknown leaves the class as it is, as for a def
            r = it.call(d, [value], {}, dec.decorator)
            if r is UNKNOWN and isinstance(d, FuncVal):
                continue
            value = r
        # anything else (an external decorator): the class as it is
    finish_work_methods(it, cls)
    if isinstance(value, ClassVal) and value is not cls:
        finish_work_methods(it, value)
    return value


# ------------------------------------------------------------------ class creation
def create_class(it, cls: ClassVal, keywords: dict, node):
    """What `metaclass(name, bases, namespace, **keywords)` gives for the class body
    already run into `cls`. `type` (any metaclass that is not a user class) makes the class
    and calls the first base's `__init_subclass__` (a user function is run, implicitly a
    class method, with the class keywords). A user metaclass's own `__new__` and `__init__`
    are run as functions; `super().__new__(mcls, name, bases, ns)` inside gives `cls` (with
    that namespace). A user metaclass method the interpreter cannot run makes the state it
    could touch unknown (`_havoc`)."""
    meta = keywords.pop("metaclass", None)
    if meta is None:
        for b in cls.bases:
            m = getattr(b, "metaclass", None)
            if m is not None:
                meta = m
                break
    if isinstance(meta, ClassVal) and meta.builtin is None:
        cls.metaclass = meta
    elif meta is not None and not isinstance(meta, (ClassVal, QualRef, BuiltinFunc)):
        return cls             # an unknown metaclass: not followed
    else:
        meta = None
    if meta is None:
        init_subclass(it, cls, keywords, node)
        return cls
    stack = it.__dict__.setdefault("_creating", [])
    owner, new = meta.lookup("__new__")
    value = cls
    stack.append((cls, keywords))
    try:
        if owner is not None and owner.builtin is None:
            if not isinstance(new, FuncVal):
                _havoc(it, meta, cls)
                return UNKNOWN
            value = it.call_function(new, [meta, cls.name, tuple(cls.bases), dict(cls.namespace)],
                                     dict(keywords), node)
        else:
            init_subclass(it, cls, keywords, node)
        owner, init = meta.lookup("__init__")
        if isinstance(value, ClassVal) and owner is not None and owner.builtin is None:
            if isinstance(init, FuncVal):
                it.call_function(init, [value, cls.name, tuple(cls.bases), dict(cls.namespace)],
                                 dict(keywords), node)
            else:
                _havoc(it, meta, value)
    finally:
        stack.pop()
    return value


def type_new(it, args, kwargs, call):
    """`type.__new__(mcls, name, bases, ns)` reached from a user metaclass's `__new__`
    while a class statement runs: the class being created (its namespace is the `ns`
    given), after the first base's `__init_subclass__`."""
    stack = getattr(it, "_creating", None)
    if not stack or len(args) != 4:
        return UNKNOWN
    cls, keywords = stack[-1]
    _mcls, name, bases, ns = args
    if name != cls.name or not isinstance(bases, tuple) or list(bases) != list(cls.bases) \
            or not isinstance(ns, dict):
        return UNKNOWN
    cls.namespace = dict(ns)
    init_subclass(it, cls, dict(keywords), call)
    return cls


def init_subclass(it, cls: ClassVal, keywords: dict, node):
    """`super(cls, cls).__init_subclass__(**keywords)`, as `type.__new__` calls it."""
    for k in cls.mro[1:]:
        v = k.namespace.get("__init_subclass__")
        if v is None:
            continue
        if k.builtin is not None:
            return
        if isinstance(v, FuncVal) and v.kind in ("function", "classmethod"):
            it.call_function(v, [cls], dict(keywords), node)
        else:
            _havoc(it, k, cls)
        return


def _havoc(it, owner: ClassVal, cls: ClassVal):
    """A metaclass / `__init_subclass__` the interpreter cannot run may have changed any
    module-level state: every container bound at module level or held in a class's
    namespace becomes incomplete, so no check takes an empty registry for a certain one."""
    it.unknown(owner.node, f"`{owner.name}` creates class `{cls.name}` in a way ts-lint cannot run; "
               "module-level containers it may fill are treated as incomplete", "value")
    seen = set()

    def visit(v, depth=0):
        if id(v) in seen or depth > 3:
            return
        seen.add(id(v))
        if isinstance(v, (list, dict, set)):
            it.ts.taint(v)
            for x in (v.values() if isinstance(v, dict) else v):
                visit(x, depth + 1)
        elif isinstance(v, ClassVal) and v.builtin is None:
            for x in v.namespace.values():
                visit(x, depth + 1)
    for v in list(it.module_scope.vars.values()):
        visit(v)


_NAMED_TUPLE = ("typing.NamedTuple", "typing_extensions.NamedTuple")


# ------------------------------------------------------------------ dataclasses
def dataclass_decorator(it, args, kwargs, call):
    if len(args) == 1 and isinstance(args[0], ClassVal) and not kwargs:
        return process_dataclass(it, args[0], {})
    if args:
        return args[0]
    opts = dict(kwargs)
    return BuiltinFunc("dataclass", lambda i, a, k, c: process_dataclass(i, a[0], opts)
                       if a and isinstance(a[0], ClassVal) else (a[0] if a else UNKNOWN),
                       qualname="dataclasses.dataclass()")


def _mentions(it, annotation, symbol: str) -> bool:
    """Whether an annotation names TS `symbol` (through any alias) or spells it."""
    if annotation is None:
        return False
    if symbol in it.text(annotation):
        return True
    # a plain walk over the children: a CSTVisitor class per annotation and libcst's
    # visitor dispatch cost more than the rest of the dataclass processing
    stack = [annotation]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Name):
            if getattr(it.lookup(n.value, it.module_scope), "ts_name", None) == symbol:
                return True
        else:
            stack.extend(n.children)
    return False


def process_dataclass(it, cls: ClassVal, opts: dict) -> ClassVal:
    cls.is_dataclass = True
    cls.dc_init = opts.get("init", True) is not False
    cls.dc_kw_only = opts.get("kw_only", False) is True
    fields = []
    ns = cls.namespace
    seen = set()
    for target, annotation, _stmt in getattr(cls, "annotations", []):
        if not isinstance(target, cst.Name):
            continue
        name = target.value
        ann_text = it.text(annotation)
        if "ClassVar" in ann_text or "InitVar" in ann_text:
            continue
        if name in seen:
            fields = [f for f in fields if f.name != name]
        seen.add(name)
        f = DataclassField(name, annotation=annotation, kw_only=cls.dc_kw_only)
        v = ns.get(name, _MISSING)
        if isinstance(v, FieldVal):
            f.has_default, f.default = v.has_default, v.default
            f.default_factory = v.default_factory
            f.init = v.init
            if v.kw_only is not None:
                f.kw_only = v.kw_only is True
            f.tlv_placeholder = v.tlv
            v.name = name
            if v.has_default:
                ns[name] = v.default
            else:
                ns.pop(name, None)
        elif v is not _MISSING:
            f.has_default, f.default = True, v
        f.tlv_declared = f.tlv_placeholder or _mentions(it, annotation, "TaskLocalVariable")
        fields.append(f)
    cls.own_fields = fields
    return cls


class _Missing:
    pass


_MISSING = _Missing()


def all_fields(cls: ClassVal) -> List[DataclassField]:
    """Dataclass fields of `cls` (bases first; a redefinition keeps its position)."""
    out: dict = {}
    for k in reversed(cls.mro):
        if k.is_dataclass:
            for f in k.own_fields:
                out[f.name] = f
    return list(out.values())


def dataclass_bind_error(k: ClassVal, args, kwargs):
    """What `inspect.Signature.bind` says about calling the `__init__` @dataclass generates
    for `k` with these arguments (None when they bind); the runtime binds the real one."""
    fields = [f for f in all_fields(k) if f.init]
    positional = [f for f in fields if not f.kw_only]
    if len(args) > len(positional):
        return "too many positional arguments"
    given = {f.name for f in positional[:len(args)]}
    names = {f.name for f in fields}
    for name in kwargs:
        if name not in names:
            return f"got an unexpected keyword argument '{name}'"
        if name in given:
            return f"multiple values for argument '{name}'"
    for f in positional + [f for f in fields if f.kw_only]:
        if f.name not in given and f.name not in kwargs and not f.has_default and f.default_factory is None:
            return f"missing a required argument: '{f.name}'"
    return None


def dataclass_init(it, k: ClassVal, inst: InstanceVal, args, kwargs, call_node):
    """The `__init__` that @dataclass generates for class `k`, run on `inst`."""
    fields = all_fields(k)
    values = {}
    pos_fields = [f for f in fields if f.init and not f.kw_only]
    for f, a in zip(pos_fields, args):
        values[f.name] = a
    init_names = {f.name for f in fields if f.init}
    for name, v in kwargs.items():
        if name in init_names:
            values[name] = v
    for f in fields:
        if f.init and f.name in values:
            val = values[f.name]
        elif f.has_default:
            val = f.default
        elif f.default_factory is not None:
            val = it.call(f.default_factory, [], {}, call_node)
        else:
            val = UNKNOWN
        it.setattr(inst, f.name, val, call_node)
    call_post_init(it, inst, call_node)
    return None


def dataclass_replace(it, args, kwargs, call):
    """`dataclasses.replace(obj, **changes)`: a new instance built by the class's own
    constructor from obj's init fields and the changes (as Python does)."""
    from .values import ConfigVal
    if len(args) == 1 and isinstance(args[0], ConfigVal):
        return it.ts.replace_config(args[0], kwargs, call)     # PipelineConfig is a dataclass
    # a subclass of a dataclass is one too (it inherits __dataclass_fields__)
    if len(args) != 1 or not isinstance(args[0], InstanceVal) or not any(k.is_dataclass for k in args[0].cls.mro):
        return UNKNOWN
    obj = args[0]
    fields = all_fields(obj.cls)
    init = {f.name for f in fields if f.init}
    if any(name not in init for name in kwargs):
        return UNKNOWN         # Python raises (a field with init=False, or no such field)
    values = {f.name: obj.attrs.get(f.name, UNKNOWN) for f in fields if f.init}
    values.update(kwargs)
    return it.call(obj.cls, [], values, call)


# ------------------------------------------------------------------ named tuples
def is_named_tuple(cls: ClassVal) -> bool:
    """A NamedTuple class or a subclass of one."""
    return any(k.named_tuple for k in cls.mro)


def named_tuple_items(v) -> Optional[tuple]:
    """The items of a NamedTuple instance as a tuple (fields in declaration order), else
    None: what indexing, unpacking, iteration and len() see."""
    if not isinstance(v, InstanceVal) or not is_named_tuple(v.cls):
        return None
    return tuple(v.attrs.get(f.name, UNKNOWN) for f in all_fields(v.cls))


def named_tuple_attr(it, obj, name: str):
    """`_fields`, `_asdict()`, `_replace(**kw)` of a NamedTuple instance, `_fields` and
    `_make(iterable)` of its class; NotImplemented for any other name."""
    cls = obj.cls if isinstance(obj, InstanceVal) else obj
    names = tuple(f.name for f in all_fields(cls))
    if name == "_fields":
        return names
    if isinstance(obj, InstanceVal):
        if name == "_asdict":
            return BuiltinFunc("_asdict", lambda i, a, k, c: dict(zip(names, named_tuple_items(obj)))
                               if not a and not k else UNKNOWN, qualname=f"{cls.qualname}._asdict")
        if name == "_replace":
            # dataclasses.replace's semantics: the class's constructor on the fields and changes
            return BuiltinFunc("_replace", lambda i, a, k, c: UNKNOWN if a else dataclass_replace(i, [obj], k, c),
                               qualname=f"{cls.qualname}._replace")
    elif name == "_make":
        def make(i, a, k, c):
            items = i.iterate(a[0]) if len(a) == 1 and not k else None
            return UNKNOWN if items is None else i.call(cls, list(items), {}, c)
        return BuiltinFunc("_make", make, qualname=f"{cls.qualname}._make")
    return NotImplemented


def namedtuple_factory(it, args, kwargs, call):
    """`collections.namedtuple(typename, field_names, *, defaults=None, ...)`: a class
    like `class typename(NamedTuple)` with those fields (names given as a list or as one
    string separated by spaces or commas; defaults apply to the rightmost fields)."""
    kwargs = dict(kwargs)
    if len(args) == 1 and "field_names" in kwargs:
        args = [args[0], kwargs.pop("field_names")]
    if len(args) != 2 or not isinstance(args[0], str) or set(kwargs) - {"defaults", "rename", "module"}:
        return UNKNOWN
    names = args[1]
    if isinstance(names, str):
        names = names.replace(",", " ").split()
    elif isinstance(names, (list, tuple)) and all(isinstance(n, str) for n in names):
        names = list(names)
    else:
        return UNKNOWN
    defaults = kwargs.get("defaults")
    if defaults is None:
        defaults = ()
    elif not isinstance(defaults, (list, tuple)) or len(defaults) > len(names):
        return UNKNOWN
    if not all(n.isidentifier() and not n.startswith("_") for n in names) or len(set(names)) != len(names):
        return UNKNOWN                  # Python raises (or renames, with rename=True)
    typename = args[0]
    obj = it.ts.builtin_classes["object"]
    cls = ClassVal(typename, typename, module=it.module_name, bases=[obj])
    cls.mro = [cls, obj]
    cls.is_dataclass = True
    cls.named_tuple = True
    first_default = len(names) - len(defaults)
    cls.own_fields = [DataclassField(n, has_default=i >= first_default,
                                     default=defaults[i - first_default] if i >= first_default else None)
                      for i, n in enumerate(names)]
    return cls


def call_post_init(it, inst: InstanceVal, call_node):
    owner, fn = inst.cls.lookup("__post_init__")
    if owner is None:
        return
    if isinstance(fn, BuiltinFunc):
        fn.impl(it, [inst], {}, call_node)
    elif isinstance(fn, FuncVal):
        if owner.builtin is None and inst.cls.is_sub("MemoryResource") and it.unbound_in_setup(owner, fn):
            inst.failed = True       # TS137: the runtime raises there
            return
        it.call_function(fn, [inst], {}, call_node)


# ------------------------------------------------------------------ work methods
def finish_work_methods(it, cls: ClassVal):
    """Turns the class's decorated work methods into WorkMethodModels (`cls.work`)."""
    from ts_runtime.model.kernel import WorkMethodModel
    from .tsapi import WorkMethodVal
    for name, v in cls.namespace.items():
        if not isinstance(v, WorkMethodVal):
            continue
        if v.failed:
            cls.decorate_error = True
        if v.unknown:
            cls.unknown_work = True
        rng = SourceRange(it.ctx.pos.path_of(getattr(v.func, "node", None)), v.line)
        wm = cls.work[name] = WorkMethodModel(name, v.stage, (), list(v.params), rng, cls.full_qualname)
        wm._ts_raw_returns = v.returns
        wm.stage_info_problem = v.stage_info_problem
        _decorator_facts(it, wm, v.func)


def _decorator_facts(it, wm, func) -> None:
    """tracing._decorator_facts: the `def` line (TS240), a DSL decorator above the work
    decorator (TS241) and the `returns=` value (TS314) of a work method, from its source
    (each decorator read with `ast`, as the runtime reads the function's)."""
    import ast
    node = getattr(func, "node", None)
    if not isinstance(node, cst.FunctionDef):
        return
    pos = it.ctx.pos
    try:
        wm.def_range = SourceRange(pos.path_of(node), pos.line(node.name))
        decos = [ast.parse(it.text(d.decorator).strip(), mode="eval").body for d in node.decorators]
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    from ts_runtime.model.work_signature import misplaced_dsl_decorator, returns_keyword_value
    i = misplaced_dsl_decorator(decos)
    if i is not None:
        d = node.decorators[i].decorator
        wm.misplaced_dsl_decorator = ("@" + ast.unparse(decos[i]), it.rng(d))
    if returns_keyword_value(decos) is not None:
        for d in node.decorators:
            if isinstance(d.decorator, cst.Call):
                for a in d.decorator.args:
                    if a.keyword is not None and a.keyword.value == "returns":
                        wm.returns_range = it.rng(a.value)
