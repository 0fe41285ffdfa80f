"""Python builtins and methods of Python values (the stdlib models: stdlib.py).

Everything is computed only on concrete values; any abstract input gives UNKNOWN.
Mutating container methods (`append`, `update`, ...) work on any contents, so lists of
resources and tasks can be built the usual way.
"""
from __future__ import annotations

import enum

from .classes import named_tuple_items
from .values import (
    RUNTIME, UNKNOWN, BoundMethod, BuiltinFunc, ClassVal, FuncVal,
    InstanceVal, NamespaceVal, ResourceObj, is_abstract, is_concrete,
)


def _b(name, impl):
    return BuiltinFunc(name, impl, qualname=f"builtins.{name}")


def _concrete_call(fn):
    """Builtin applied to concrete positional/keyword arguments only."""
    def impl(it, args, kwargs, call):
        if not all(is_concrete(a) for a in args) or not all(is_concrete(v) for v in kwargs.values()):
            if any(a is RUNTIME for a in args):
                return RUNTIME
            return UNKNOWN
        try:
            return fn(*args, **kwargs)
        except Exception:
            return UNKNOWN
    return impl


def _small_spec(spec) -> bool:
    """A format spec without a huge width / precision (which could allocate a lot)."""
    import re
    return isinstance(spec, str) and all(int(n) <= 1000 for n in re.findall(r"\d+", spec))


def _safe_format(it, args, kwargs, call):
    if len(args) == 2 and not _small_spec(args[1]):
        return UNKNOWN
    return _concrete_call(format)(it, args, kwargs, call)


def _len(it, args, kwargs, call):
    if len(args) != 1:
        return UNKNOWN
    v = args[0]
    if isinstance(v, (list, dict, set)) and it.ts.is_tainted(v):
        return UNKNOWN
    if isinstance(v, (list, tuple, dict, str, set, frozenset, range)):
        return len(v)
    if v is RUNTIME:
        return RUNTIME
    items = named_tuple_items(v)
    if items is not None:
        return len(items)
    seq = it.iterate(v) if isinstance(v, type) or isinstance(v, enum.Flag) else None
    return len(seq) if seq is not None else UNKNOWN     # an enum class: its members


def _range(it, args, kwargs, call):
    if any(a is RUNTIME for a in args):
        return RUNTIME
    if not args or not all(isinstance(a, int) and not isinstance(a, bool) for a in args) or len(args) > 3:
        return UNKNOWN
    try:
        return range(*args)
    except Exception:
        return UNKNOWN


def _seq_builtin(kind):
    def impl(it, args, kwargs, call):
        if not args:
            return {"list": [], "tuple": (), "dict": {}, "set": set()}[kind] if kind != "dict" else dict(
                kwargs)
        seq = it.iterate(args[0]) if kind != "dict" else None
        if kind == "dict":
            v = args[0]
            if isinstance(v, dict):
                out = dict(v)
                out.update(kwargs)
                return out
            items = it.iterate(v)
            if items is None:
                return UNKNOWN
            out = {}
            for pair in items:
                if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                    return UNKNOWN
                try:
                    out[pair[0]] = pair[1]
                except TypeError:
                    return UNKNOWN
            out.update(kwargs)
            return out
        if seq is None:
            return UNKNOWN
        if kind == "list":
            return list(seq)
        if kind == "tuple":
            return tuple(seq)
        try:
            return set(seq)
        except TypeError:
            return UNKNOWN
    return impl


def _sort_keys(it, seq, key, call):
    """The key of each item (`key=` of sorted / list.sort / min / max), or None when one is
    not plain data (then the order is unknown)."""
    keys = []
    for x in seq:
        k = it.call(key, [x], {}, call)
        if not is_concrete(k):
            return None
        keys.append(k)
    return keys


def _order(it, seq, key, reverse, call):
    """`sorted(seq, key=key, reverse=reverse)` as a list, or None when unknown."""
    if key is None:
        if not is_concrete(seq):
            return None
        keys = seq
    else:
        keys = _sort_keys(it, seq, key, call)
        if keys is None:
            return None
    try:
        order = sorted(range(len(seq)), key=keys.__getitem__, reverse=bool(reverse))
    except Exception:
        return None
    return [seq[i] for i in order]


def _minmax(fn):
    def impl(it, args, kwargs, call):
        vals = args
        if len(args) == 1:
            vals = it.iterate(args[0])
            if vals is None:
                return UNKNOWN
        key = kwargs.get("key")
        if key is not None:
            if not vals:
                return kwargs.get("default", UNKNOWN)
            keys = _sort_keys(it, list(vals), key, call)
            if keys is None:
                return UNKNOWN
            try:
                best = fn(range(len(keys)), key=keys.__getitem__)   # the first of equal keys, as Python
            except Exception:
                return UNKNOWN
            return vals[best]
        if any(v is UNKNOWN for v in vals):
            return UNKNOWN
        if any(v is RUNTIME for v in vals):
            return RUNTIME
        if not is_concrete(list(vals)) or not vals:
            return kwargs.get("default", UNKNOWN) if not vals else UNKNOWN
        try:
            return fn(vals)
        except Exception:
            return UNKNOWN
    return impl


def _vars(it, args, kwargs, call):
    """`vars(ns)` of an argparse namespace or an instance: its attributes (the live dict,
    as in Python: `vars(args).update(...)` changes `args`)."""
    from .values import InstanceVal, NamespaceVal
    if len(args) == 1 and isinstance(args[0], (NamespaceVal, InstanceVal)):
        return args[0].attrs
    return UNKNOWN


def _sum(it, args, kwargs, call):
    if not args:
        return UNKNOWN
    vals = it.iterate(args[0])
    if vals is None:
        return RUNTIME if args[0] is RUNTIME else UNKNOWN
    start = args[1] if len(args) > 1 else kwargs.get("start", 0)
    if any(v is UNKNOWN for v in vals):
        return UNKNOWN
    if any(v is RUNTIME for v in vals):
        return RUNTIME
    if not is_concrete(list(vals)) or not is_concrete(start):
        return UNKNOWN
    try:
        return sum(vals, start)
    except Exception:
        return UNKNOWN


def _enumerate(it, args, kwargs, call):
    if not args:
        return UNKNOWN
    seq = it.iterate(args[0])
    if seq is None:
        return UNKNOWN
    start = args[1] if len(args) > 1 else kwargs.get("start", 0)
    if not isinstance(start, int):
        return UNKNOWN
    return [(start + i, v) for i, v in enumerate(seq)]


def _zip(it, args, kwargs, call):
    seqs = [it.iterate(a) for a in args]
    if any(s is None for s in seqs):
        return UNKNOWN
    return [tuple(t) for t in zip(*seqs)]


def _reversed(it, args, kwargs, call):
    seq = it.iterate(args[0]) if args else None
    return UNKNOWN if seq is None else list(reversed(seq))


def _sorted(it, args, kwargs, call):
    seq = it.iterate(args[0]) if args else None
    if seq is None:
        return UNKNOWN
    out = _order(it, seq, kwargs.get("key"), kwargs.get("reverse", False), call)
    return UNKNOWN if out is None else out


def _anyall(fn):
    def impl(it, args, kwargs, call):
        seq = it.iterate(args[0]) if args else None
        if seq is None:
            return UNKNOWN
        from .interpreter import truth
        ts = [truth(v) for v in seq]
        if fn is any:
            if any(t is True for t in ts):
                return True
            return UNKNOWN if any(t is None for t in ts) else False
        if any(t is False for t in ts):
            return False
        return UNKNOWN if any(t is None for t in ts) else True
    return impl


def _map(it, args, kwargs, call):
    if len(args) < 2:
        return UNKNOWN
    seqs = [it.iterate(a) for a in args[1:]]
    if any(s is None for s in seqs):
        return UNKNOWN
    return [it.call(args[0], list(t), {}, call) for t in zip(*seqs)]


def _filter(it, args, kwargs, call):
    if len(args) != 2:
        return UNKNOWN
    seq = it.iterate(args[1])
    if seq is None:
        return UNKNOWN
    from .interpreter import truth
    out = []
    for v in seq:
        t = truth(v if args[0] is None else it.call(args[0], [v], {}, call))
        if t is None:
            return UNKNOWN
        if t:
            out.append(v)
    return out


_PYTYPES = {"int": int, "float": float, "str": str, "bool": bool, "tuple": tuple, "list": list,
            "dict": dict, "set": set, "frozenset": frozenset, "bytes": bytes, "object": object,
            "type": type}


def _ts_value_types():
    """TS classes whose instances ts-lint models by a value class of its own (values.py):
    symbol name -> whether an interpreter value is an instance of it."""
    from .values import (
        AllocationVal, AllocatorVal, ConfigVal, CoopGroupVal, TaskManagerVal, TileSchedCfgVal, TLVVal)
    return {
        "SmemAllocation": lambda v: isinstance(v, AllocationVal) and v.space == "smem",
        "TmemAllocation": lambda v: isinstance(v, AllocationVal) and v.space == "tmem",
        "SmemAllocator": lambda v: isinstance(v, AllocatorVal) and v.space == "smem",
        "TmemAllocator": lambda v: isinstance(v, AllocatorVal) and v.space == "tmem",
        "PipelineConfig": lambda v: isinstance(v, ConfigVal),
        "TileSchedulerConfig": lambda v: isinstance(v, TileSchedCfgVal),
        "CooperativeGroup": lambda v: isinstance(v, CoopGroupVal),
        "TaskLocalVariable": lambda v: isinstance(v, TLVVal),
        "TaskManager": lambda v: isinstance(v, TaskManagerVal),
    }


def _ts_object(v) -> bool:
    """An instance of one of those TS classes (an object of exactly that class, as the TS
    API built it)."""
    from .values import (
        AllocationVal, AllocatorVal, ConfigVal, CoopGroupVal, TaskManagerVal, TileSchedCfgVal, TLVVal)
    return isinstance(v, (AllocationVal, AllocatorVal, ConfigVal, CoopGroupVal, TaskManagerVal, TileSchedCfgVal,
                          TLVVal))


def _known_instance(v) -> bool:
    """An instance of a user class whose every base ts-lint sees (no class it cannot
    read in its MRO, which could derive from anything)."""
    return isinstance(v, InstanceVal) and all(k.builtin != "external" for k in v.cls.mro)


def _isinstance(it, args, kwargs, call):
    if len(args) != 2:
        return UNKNOWN
    obj, types = args
    tlist = list(types) if isinstance(types, tuple) else [types]
    if is_abstract(obj):
        return UNKNOWN
    result = False
    ts_types = None
    for t in tlist:
        name = getattr(t, "ts_name", None) if not isinstance(t, ClassVal) else None
        if name is None and isinstance(t, BuiltinFunc) and not t.qualname.startswith("builtins."):
            name = t.qualname
        if name is not None:
            ts_types = ts_types or _ts_value_types()
            pred = ts_types.get(name)
            if pred is not None and it.ts.symbols.get(name) is t:
                # `isinstance(alloc, SmemAllocation)`: the object ts-lint built for it, or
                # surely none (plain data, another TS object, a user class it fully sees)
                if pred(obj):
                    return True
                if is_concrete(obj) or _ts_object(obj) or _known_instance(obj) \
                        or isinstance(obj, (list, tuple, dict, set, FuncVal, BoundMethod, ClassVal)):
                    continue
                return UNKNOWN
        if isinstance(t, ClassVal):
            if isinstance(obj, InstanceVal):
                if t in obj.cls.mro:
                    return True
                continue
            if is_concrete(obj) or _ts_object(obj):
                continue
            return UNKNOWN
        if isinstance(t, BuiltinFunc) and t.qualname.startswith("builtins."):
            py = _PYTYPES.get(t.name)
            if py is None:
                return UNKNOWN
            if py is object:
                return True
            if is_concrete(obj) or isinstance(obj, (list, tuple, dict)):
                if isinstance(obj, py):
                    return True
                continue
            if isinstance(obj, InstanceVal) or _ts_object(obj):
                continue
            return UNKNOWN
        if isinstance(t, type):
            if isinstance(obj, t):
                return True
            if is_concrete(obj) or _ts_object(obj) or _known_instance(obj):
                continue
            return UNKNOWN
        return UNKNOWN
    return result


def _type_ctor(name):
    py = _PYTYPES[name]

    def impl(it, args, kwargs, call):
        if name in ("list", "tuple", "dict", "set"):
            return _seq_builtin(name)(it, args, kwargs, call)
        if name == "type":
            if len(args) == 1:
                v = args[0]
                if isinstance(v, InstanceVal):
                    return v.cls
                if is_concrete(v):
                    return type(v)
            return UNKNOWN
        if name == "object":
            return NamespaceVal()
        if args and args[0] is RUNTIME:
            return RUNTIME
        if name == "bool" and args:
            from .interpreter import truth
            t = truth(args[0])
            return UNKNOWN if t is None else t
        return _concrete_call(py)(it, args, kwargs, call)
    return impl


def _getattr(it, args, kwargs, call):
    if len(args) < 2 or not isinstance(args[1], str):
        return UNKNOWN
    v = it.getattr(args[0], args[1], call)
    if v is UNKNOWN and len(args) == 3 and isinstance(args[0], InstanceVal) \
            and args[1] not in args[0].attrs and args[0].cls.lookup(args[1])[0] is None:
        return args[2]
    return v


def _setattr(it, args, kwargs, call):
    if len(args) != 3:
        return None
    obj, name, value = args
    if not isinstance(name, str):
        if isinstance(obj, InstanceVal):
            obj.attrs.clear()   # any attribute may have changed
            if isinstance(obj, ResourceObj):
                obj.lost_attrs = True
        return None
    it.setattr(obj, name, value, call)
    return None


def _hasattr(it, args, kwargs, call):
    if len(args) != 2 or not isinstance(args[1], str):
        return UNKNOWN
    obj = args[0]
    if isinstance(obj, InstanceVal):
        return args[1] in obj.attrs or obj.cls.lookup(args[1])[0] is not None or UNKNOWN
    return UNKNOWN


def _print(it, args, kwargs, call):
    return None


def _super(it, args, kwargs, call):
    from .values import SuperVal
    if len(args) == 2 and isinstance(args[0], ClassVal):
        return SuperVal(args[0], args[1])
    return UNKNOWN


def _staticmethod(it, args, kwargs, call):
    if args and isinstance(args[0], FuncVal):
        args[0].kind = "staticmethod"
        return args[0]
    return args[0] if args else UNKNOWN


def _classmethod(it, args, kwargs, call):
    if args and isinstance(args[0], FuncVal):
        args[0].kind = "classmethod"
        return args[0]
    return args[0] if args else UNKNOWN


def _property(it, args, kwargs, call):
    if args and isinstance(args[0], FuncVal):
        args[0].kind = "property"
        return args[0]
    return UNKNOWN


def _exception_class(name):
    return BuiltinFunc(name, lambda it, a, k, c: NamespaceVal({"args": tuple(a)}), qualname=f"builtins.{name}")


def builtin_names(it) -> dict:
    out = {
        "True": True, "False": False, "None": None, "NotImplemented": NotImplemented,
        "Ellipsis": Ellipsis,
        "len": _b("len", _len), "range": _b("range", _range),
        "min": _b("min", _minmax(min)), "max": _b("max", _minmax(max)), "sum": _b("sum", _sum),
        "abs": _b("abs", _concrete_call(abs)), "round": _b("round", _concrete_call(round)),
        "divmod": _b("divmod", _concrete_call(divmod)), "pow": _b("pow", _concrete_call(pow)),
        "enumerate": _b("enumerate", _enumerate), "zip": _b("zip", _zip),
        "reversed": _b("reversed", _reversed), "sorted": _b("sorted", _sorted),
        "any": _b("any", _anyall(any)), "all": _b("all", _anyall(all)),
        "map": _b("map", _map), "filter": _b("filter", _filter),
        "isinstance": _b("isinstance", _isinstance),
        "issubclass": _b("issubclass", lambda it, a, k, c: UNKNOWN),
        "getattr": _b("getattr", _getattr), "setattr": _b("setattr", _setattr),
        "hasattr": _b("hasattr", _hasattr), "print": _b("print", _print),
        "super": _b("super", _super), "staticmethod": _b("staticmethod", _staticmethod),
        "classmethod": _b("classmethod", _classmethod), "property": _b("property", _property),
        "repr": _b("repr", _concrete_call(repr)), "format": _b("format", _safe_format),
        "ord": _b("ord", _concrete_call(ord)), "chr": _b("chr", _concrete_call(chr)),
        "hex": _b("hex", _concrete_call(hex)), "bin": _b("bin", _concrete_call(bin)),
        "iter": _b("iter", lambda it, a, k, c: a[0] if a and isinstance(a[0], (list, tuple)) else UNKNOWN),
        "next": _b("next", lambda it, a, k, c: UNKNOWN),
        "id": _b("id", lambda it, a, k, c: UNKNOWN), "hash": _b("hash", _concrete_call(hash)),
        "callable": _b("callable", lambda it, a, k, c: True if a and isinstance(
            a[0], (FuncVal, BuiltinFunc, BoundMethod, ClassVal)) else UNKNOWN),
        "vars": _b("vars", _vars),
        # `globals()` written as such is the module's namespace (expressions._e_call); the
        # function reached any other way (`g = globals; g()`) gives nothing known
        "globals": _b("globals", lambda it, a, k, c: UNKNOWN),
        "open": _b("open", lambda it, a, k, c: UNKNOWN),
        "input": _b("input", lambda it, a, k, c: UNKNOWN),
        "exit": _b("exit", lambda it, a, k, c: UNKNOWN),
        "__import__": _b("__import__", lambda it, a, k, c: UNKNOWN),
        "exec": _b("exec", lambda it, a, k, c: UNKNOWN), "eval": _b("eval", lambda it, a, k, c: UNKNOWN),
    }
    for name in _PYTYPES:
        out[name] = _b(name, _type_ctor(name))
    for exc in ("Exception", "ValueError", "TypeError", "RuntimeError", "AssertionError", "KeyError",
                "IndexError", "NotImplementedError", "AttributeError", "ImportError",
                "ModuleNotFoundError", "ZeroDivisionError", "StopIteration", "SystemExit",
                "ArithmeticError", "LookupError", "OSError", "Warning", "UserWarning",
                "DeprecationWarning", "BaseException", "KeyboardInterrupt"):
        out[exc] = _exception_class(exc)
    return out


# ------------------------------------------------------------------ methods of Python values
_PURE_METHODS = {
    str: {"split", "rsplit", "join", "format", "upper", "lower", "strip", "lstrip", "rstrip",
          "startswith", "endswith", "replace", "find", "rfind", "index", "count", "partition",
          "rpartition", "isdigit", "isidentifier", "title", "capitalize", "zfill", "splitlines",
          "removeprefix", "removesuffix", "casefold", "encode"},
    tuple: {"index", "count"},
    list: {"index", "count", "copy"},
    dict: {"copy"},
    int: {"bit_length", "bit_count", "to_bytes", "conjugate"},
    float: {"is_integer", "hex", "as_integer_ratio"},
}


def py_attr(it, obj, name: str, node):
    if isinstance(obj, list):
        if name in ("append", "extend", "insert", "pop", "remove", "clear", "reverse", "sort"):
            return BuiltinFunc(name, lambda i, a, k, c, o=obj, n=name: _list_mut(i, o, n, a, k),
                               qualname=f"list.{name}")
    if isinstance(obj, dict):
        if name in ("items", "keys", "values", "get", "update", "setdefault", "pop", "clear", "popitem"):
            return BuiltinFunc(name, lambda i, a, k, c, o=obj, n=name: _dict_method(i, o, n, a, k),
                               qualname=f"dict.{name}")
    if isinstance(obj, set):
        if name in ("add", "discard", "update", "remove"):
            return BuiltinFunc(name, lambda i, a, k, c, o=obj, n=name: _set_mut(o, n, a),
                               qualname=f"set.{name}")
    import enum
    if isinstance(obj, enum.Enum) or (isinstance(obj, type) and issubclass(obj, enum.Enum)):
        from .enums import enum_attr
        v = enum_attr(it, obj, name, node)        # a method / property of a user enum's body
        if v is not NotImplemented:
            return v
    if isinstance(obj, enum.Enum) and name in ("name", "value", "_name_", "_value_"):
        return getattr(obj, name)
    if isinstance(obj, type) and issubclass(obj, enum.Enum):
        member = obj.__members__.get(name)
        if member is not None:
            return member
        if name in ("__name__", "__qualname__"):
            return getattr(obj, name)
        if name == "__members__":
            return dict(obj.__members__)
        if name == "_member_names_":
            return list(obj._member_names_)
        if name in ("is_valid_combination", "validate"):
            return BuiltinFunc(name, _concrete_call(getattr(obj, name)), qualname=f"{obj.__name__}.{name}")
        if obj.__module__ == "ts_runtime.enums":     # a TS enum: `PipelineGroupMode.Merged` (TS963)
            from .tsapi import missing_api_attribute
            missing_api_attribute(it, obj.__name__, obj, name, node)
        return UNKNOWN
    if isinstance(obj, enum.Enum):
        if name in ("has_cta_leader", "has_task_warp_leader", "is_auxiliary"):
            return BuiltinFunc(name, _concrete_call(getattr(obj, name)), qualname=name)
        return UNKNOWN
    if type(obj) is str and name == "format":
        import re
        specs = [f.split(":", 1)[1] for f in re.findall(r"\{[^{}]*\}", obj) if ":" in f]
        if not all(_small_spec(sp) for sp in specs):
            return UNKNOWN
    for t, names in _PURE_METHODS.items():
        if type(obj) is t and name in names:
            return BuiltinFunc(name, _concrete_call(getattr(obj, name)), qualname=f"{t.__name__}.{name}")
    if isinstance(obj, complex) and name in ("real", "imag"):
        return getattr(obj, name)
    if isinstance(obj, range) and name in ("start", "stop", "step"):
        return getattr(obj, name)
    if isinstance(obj, slice) and name in ("start", "stop", "step"):
        return getattr(obj, name)
    return UNKNOWN


def _list_mut(it, lst, name, args, kwargs):
    taint = it.ts.taint
    if name == "append" and len(args) == 1:
        lst.append(args[0])
        return None
    if name == "extend" and len(args) == 1:
        seq = it.iterate(args[0])
        if seq is None:
            taint(lst)
        else:
            lst.extend(seq)
        return None
    if name == "insert" and len(args) == 2 and isinstance(args[0], int):
        lst.insert(args[0], args[1])
        return None
    if name == "pop":
        if not args and lst:
            return lst.pop()
        if args and isinstance(args[0], int) and -len(lst) <= args[0] < len(lst):
            return lst.pop(args[0])
    if name == "clear":
        lst.clear()
        return None
    if name == "reverse":
        lst.reverse()
        return None
    if name == "remove" and len(args) == 1:
        for i, x in enumerate(lst):
            if x is args[0] or (is_concrete(x) and is_concrete(args[0]) and x == args[0]):
                del lst[i]
                return None
    if name == "sort" and not args and set(kwargs) <= {"key", "reverse"}:
        out = _order(it, list(lst), kwargs.get("key"), kwargs.get("reverse", False), None)
        if out is not None:
            lst[:] = out
            return None
    taint(lst)
    return UNKNOWN


def _dict_method(it, d, name, args, kwargs):
    taint = it.ts.taint
    try:
        if name == "items":
            return list(d.items())
        if name == "keys":
            return list(d.keys())
        if name == "values":
            return list(d.values())
        if name == "get":
            if args and is_abstract(args[0]):
                return UNKNOWN
            return d.get(args[0], args[1] if len(args) > 1 else None)
        if name == "update":
            if args and isinstance(args[0], dict):
                d.update(args[0])
            elif args:
                taint(d)
            d.update(kwargs)
            return None
        if name == "setdefault":
            if is_abstract(args[0]):
                taint(d)
                return UNKNOWN
            return d.setdefault(args[0], args[1] if len(args) > 1 else None)
        if name == "pop":
            if is_abstract(args[0]):
                taint(d)
                return UNKNOWN
            return d.pop(*args)
        if name == "clear":
            d.clear()
            return None
        if name == "popitem":
            return d.popitem()
    except Exception:
        pass
    return UNKNOWN


def _set_mut(s, name, args):
    try:
        if name in ("add", "discard", "remove"):
            getattr(s, name)(args[0])
        elif name == "update":
            s.update(args[0])
    except Exception:
        pass
    return None


__all__ = ["builtin_names", "py_attr"]
