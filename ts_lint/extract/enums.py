"""User-defined enum classes (`class Role(enum.IntEnum): ...`) as real Python enums.

A class whose bases include a stdlib enum base (`enum.Enum`, `IntEnum`, `Flag`,
`IntFlag`, `StrEnum`, `ReprEnum`, or a member-less enum built this way) becomes a real
enum class when every member value its body assigns is plain data the interpreter knows
(ints, strings, tuples, ... or `enum.auto()`): the class statement is replayed on the
enum metaclass with those values only (`types.prepare_class` + the metaclass call, as
Python runs a class statement), so no user code runs, and member `.value` / `.name`,
iteration, `len()`, `Role["NAME"]`, `Role(value)`, comparisons, hashing, `int(member)`
and flag arithmetic are Python's own (`iterate`, `getitem`, `compare` treat any real
enum class the same way, the TS enums of `ts_runtime.enums` included).

Methods, properties, static and class methods of the body are not put into the real
class: they are kept by the interpreter (`Interpreter.user_enums`: real class -> its
namespace of functions) and found by `enum_attr` on a member or the class, walking the
real class's MRO, so they run as interpreted functions with the member as `self`.

Anything the real class would need user code for, or whose members the interpreter
cannot be sure of, makes the class UNKNOWN instead (never a guessed enum): a dunder or
sunder definition (`__init__`, `__new__`, `__str__`, `_missing_`,
`_generate_next_value_`, `_ignore_`, ...), a member value that is not plain data, a
name bound twice, a statement other than assignments, definitions and docstrings,
class keywords (`boundary=`, `metaclass=`), a decorator other than `enum.unique`, a
base other than enums and `int` / `str` / `float`, or an error raised by the enum
machinery (the program raises there too).
"""
from __future__ import annotations

import enum
import types

import libcst as cst

from .values import UNKNOWN, BuiltinFunc, FuncVal, is_concrete

__all__ = ["build_enum", "enum_attr", "enum_stdlib", "is_enum_class", "enum_functional"]

_STDLIB_BASES = ("Enum", "IntEnum", "Flag", "IntFlag", "StrEnum", "ReprEnum")
_MIXINS = {"builtins.int": int, "builtins.str": str, "builtins.float": float}


def is_enum_class(v) -> bool:
    return isinstance(v, type) and issubclass(v, enum.Enum)


def _unique(it, args, kwargs, call):
    if len(args) != 1 or kwargs or not is_enum_class(args[0]):
        return UNKNOWN
    try:
        return enum.unique(args[0])
    except ValueError:
        return UNKNOWN            # Python raises: the class never exists


def _auto(it, args, kwargs, call):
    return enum.auto() if not args and not kwargs else UNKNOWN


def enum_stdlib(name: str):
    """The value of `enum.<name>` (the real stdlib base classes, `auto`, `unique`), or
    None when not modelled."""
    if name in _STDLIB_BASES:
        return getattr(enum, name, None)
    if name == "auto":
        return BuiltinFunc("auto", _auto, qualname="enum.auto")
    if name == "unique":
        return BuiltinFunc("unique", _unique, qualname="enum.unique")
    return None


def _body_ok(body) -> bool:
    """Only assignments to names, definitions, `pass` and docstrings at the top of the
    class body, and no name bound twice unless both bindings are functions (a property
    and its setter)."""
    seen: dict = {}
    stmts = [body] if isinstance(body, cst.SimpleStatementSuite) else body.body
    for st in stmts:
        if isinstance(st, cst.FunctionDef):
            if seen.get(st.name.value, "def") != "def":
                return False
            seen[st.name.value] = "def"
            continue
        if not isinstance(st, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            return False
        for s in st.body:
            if isinstance(s, cst.Pass):
                continue
            if isinstance(s, cst.Expr) and isinstance(s.value, (cst.SimpleString, cst.ConcatenatedString)):
                continue
            if isinstance(s, cst.AnnAssign):
                targets = [s.target] if s.value is not None else []
            elif isinstance(s, cst.Assign):
                targets = [t.target for t in s.targets]
            else:
                return False
            names = []
            for t in targets:
                if isinstance(t, cst.Name):
                    names.append(t.value)
                elif isinstance(t, (cst.Tuple, cst.List)) and all(isinstance(e.value, cst.Name) for e in t.elements):
                    names.extend(e.value.value for e in t.elements)
                else:
                    return False
            for n in names:
                if n in seen:
                    return False
                seen[n] = "value"
    return True


def build_enum(it, node: cst.ClassDef, placeholder, raw_bases: list, ns: dict, scope):
    """The real enum class for `node` (see the module docstring), or UNKNOWN."""
    bases = []
    for b in raw_bases:
        if is_enum_class(b):
            bases.append(b)
        elif isinstance(b, BuiltinFunc) and b.qualname in _MIXINS:
            bases.append(_MIXINS[b.qualname])
        else:
            return UNKNOWN
    if node.keywords or any(a.keyword is not None or a.star for a in node.bases) or not _body_ok(node.body):
        return UNKNOWN
    members, methods = [], {}
    for name, v in ns.items():
        if isinstance(v, FuncVal):
            if name.startswith("_") and name.endswith("_") and len(name) > 2:
                return UNKNOWN        # __init__ / __str__ / _missing_ / _generate_next_value_ ...
            methods[name] = v
        elif name.startswith("_"):
            return UNKNOWN            # _ignore_, _order_, private or dunder data
        elif is_concrete(v) or isinstance(v, enum.auto):
            members.append((name, v))
        else:
            return UNKNOWN            # a value the interpreter does not know (or a nested class)
    decorators = [it.eval(d.decorator, scope) for d in node.decorators]
    if any(not (isinstance(d, BuiltinFunc) and d.qualname == "enum.unique") for d in decorators):
        return UNKNOWN
    try:
        meta, cd, kwds = types.prepare_class(placeholder.name, tuple(bases))
        if kwds or not issubclass(meta, type(enum.Enum)):
            return UNKNOWN
        cd["__module__"] = it.module_name
        cd["__qualname__"] = placeholder.qualname
        for name, v in members:
            cd[name] = v
        real = meta(placeholder.name, tuple(bases), cd)
    except Exception:
        return UNKNOWN                # Python raises at the class statement too
    for d in reversed(decorators):
        real = it.call(d, [real], {}, node)
        if not is_enum_class(real):
            return UNKNOWN
    it.user_enums[real] = methods
    return real


def enum_functional(it, fn, args, kwargs):
    """`enum.Enum("Name", "A B")` / `IntEnum("Name", ["A", "B"], start=0)` (the functional
    API of a stdlib base) on plain data, else UNKNOWN."""
    if len(args) != 2 or not isinstance(args[0], str) or not is_concrete(args[1]) \
            or set(kwargs) - {"start"} or not all(is_concrete(v) for v in kwargs.values()):
        return UNKNOWN
    try:
        real = fn(args[0], args[1], module=it.module_name, **kwargs)
    except Exception:
        return UNKNOWN
    it.user_enums[real] = {}
    return real


def enum_attr(it, obj, name: str, node):
    """A method / property / static or class method that a user enum's body defines, looked
    up from a member or the class (NotImplemented when none defines `name`)."""
    registry = it.user_enums
    if not registry:
        return NotImplemented
    from .values import BoundMethod
    cls = obj if isinstance(obj, type) else type(obj)
    for k in cls.__mro__:
        ns = registry.get(k)
        if ns is None or name not in ns:
            continue
        v = ns[name]
        if v.kind == "staticmethod":
            return v
        if v.kind == "classmethod":
            return BoundMethod(cls, v)
        if isinstance(obj, type):
            return UNKNOWN if v.kind == "property" else v
        if v.kind == "property":
            return it.call_function(v, [obj], {}, node)
        return BoundMethod(obj, v)
    return NotImplemented
