"""Models of the standard-library calls kernel-building code makes: argparse defaults,
dataclasses (`field`, `replace`), math, functools, typing, copy, collections, the finite
itertools and the operator functions.

`stdlib(qualname)` gives the value of a stdlib name (a BuiltinFunc, a constant) or None
when it is not modelled, and the name stays unknown. Every model computes on plain data
only (`is_concrete`) and gives UNKNOWN otherwise: a value ts-lint is not sure of is never
guessed.
"""
from __future__ import annotations

import math

import libcst as cst

from .pybuiltins import _concrete_call, _property, _seq_builtin
from .values import (
    UNKNOWN, ArgParserVal, BoundMethod, BuiltinFunc, ClassVal, FieldVal, FuncVal, NamespaceVal,
    is_concrete,
)

__all__ = ["stdlib"]


def _argparser(it, args, kwargs, call):
    return ArgParserVal()


def _parser_error(it, args, kwargs, call):
    """`parser.error(...)` exits the program. In a re-run with another command-line value
    (configurations.py) that is the program refusing the combination: the run stops there
    and builds nothing. Elsewhere its result stays unknown, as before."""
    if it.ctx.config_label:
        from .frames import UserRaise
        raise UserRaise(call, reported=True)
    return UNKNOWN


def _argparse_method(parser: ArgParserVal, name):
    def add_argument(it, args, kwargs, call):
        flags = [a for a in args if isinstance(a, str)]
        dest = kwargs.get("dest")
        if not isinstance(dest, str):
            longs = [f for f in flags if f.startswith("--")]
            pick = longs[0] if longs else (flags[0] if flags else None)
            if pick is None:
                return None
            dest = pick.lstrip("-").replace("-", "_")
        action = kwargs.get("action")
        if "default" in kwargs:
            default = kwargs["default"]
        elif action == "store_true":
            default = False
        elif action == "store_false":
            default = True
        elif action == "count":
            default = None
        else:
            default = None
        typ = kwargs.get("type")
        if isinstance(default, str) and typ is not None and action not in ("store_true", "store_false"):
            default = it.call(typ, [default], {}, call)
        nargs = kwargs.get("nargs")
        if isinstance(default, str) and nargs in ("+", "*") and False:
            default = [default]
        parser.defaults[dest] = default
        if action in ("store_true", "store_false") and isinstance(default, bool):
            # an on/off option: its other setting is a configuration too
            parser.choices[dest] = [default, not default]
            parser.flags[dest] = next((f for f in flags if f.startswith("--")), flags[0] if flags else dest)
            it.ctx.cli_choices.append((parser, dest))
        elif "choices" in kwargs and action not in ("store_true", "store_false", "count") \
                and nargs in (None, "?"):
            items = it.iterate(kwargs["choices"])
            if items is not None and all(is_concrete(c) and not isinstance(c, (list, dict, set)) for c in items):
                parser.choices[dest] = list(items)
                it.ctx.cli_choices.append((parser, dest))
        return None

    def parse_args(it, args, kwargs, call):
        values = dict(parser.defaults)
        for dest, v in it.ctx.cli_overrides.items():
            if dest in parser.defaults:
                values[dest] = v
        return NamespaceVal(values)

    def set_defaults(it, args, kwargs, call):
        parser.defaults.update(kwargs)
        return None

    table = {
        "add_argument": add_argument,
        "parse_args": parse_args,
        "parse_known_args": lambda it, a, k, c: (parse_args(it, a, k, c), []),
        "parse_intermixed_args": parse_args,
        "add_argument_group": lambda it, a, k, c: parser,
        "add_mutually_exclusive_group": lambda it, a, k, c: parser,
        "set_defaults": set_defaults,
        "print_help": lambda it, a, k, c: None,
        "print_usage": lambda it, a, k, c: None,
        "error": _parser_error,
        "add_subparsers": lambda it, a, k, c: UNKNOWN,
    }
    impl = table.get(name)
    return BuiltinFunc(name, impl, qualname=f"argparse.ArgumentParser.{name}") if impl else UNKNOWN


def _dc_field(it, args, kwargs, call):
    """`dataclasses.field(...)`: its keywords bound to Python's own signature first, as a
    misspelt one (`field(iit=False)` in a resource class) is a TypeError at import (TS907,
    with Python's message); not judged for a call with `*` / `**` unpacking."""
    import dataclasses
    import inspect
    if isinstance(call, cst.Call) and not any(a.star for a in call.args):
        try:
            inspect.signature(dataclasses.field).bind(*args, **kwargs)
        except TypeError as exc:
            from ts_runtime.api_calls import message
            it.certain_error(call, "TS907", message("field(...)", str(exc)))
    f = FieldVal()
    if "default" in kwargs:
        f.default, f.has_default = kwargs["default"], True
    if "default_factory" in kwargs:
        f.default_factory = kwargs["default_factory"]
    if "init" in kwargs:
        f.init = kwargs["init"] is not False
    if "kw_only" in kwargs:
        f.kw_only = kwargs["kw_only"]
    return f


_MATH = frozenset({"ceil", "floor", "trunc", "sqrt", "isqrt", "log", "log2", "log10", "exp", "gcd",
                   "lcm", "prod", "fabs", "copysign", "isclose", "isfinite", "isinf", "isnan", "pi",
                   "e", "inf", "nan", "tau", "pow", "fsum", "hypot", "sin", "cos", "tan", "modf",
                   "frexp", "ldexp", "fmod", "remainder"})


def _math(name):
    if name not in _MATH:
        return None
    fn = getattr(math, name, None)
    if fn is None:
        return None
    if not callable(fn):
        return fn
    return BuiltinFunc(name, _concrete_call(fn), qualname=f"math.{name}")


def stdlib(qualname: str):
    """Value for a stdlib qualified name, or None when not modelled."""
    if qualname == "argparse.ArgumentParser":
        return BuiltinFunc("ArgumentParser", _argparser, qualname=qualname)
    if qualname in ("dataclasses.dataclass",):
        from .classes import dataclass_decorator
        return BuiltinFunc("dataclass", dataclass_decorator, qualname=qualname)
    if qualname == "dataclasses.field":
        return BuiltinFunc("field", _dc_field, qualname=qualname)
    if qualname == "dataclasses.replace":
        from .classes import dataclass_replace
        return BuiltinFunc("replace", dataclass_replace, qualname=qualname)
    if qualname.startswith("math."):
        return _math(qualname[5:])
    if qualname == "functools.cached_property":
        return BuiltinFunc("cached_property", _property, qualname=qualname)
    if qualname == "collections.defaultdict":
        return BuiltinFunc("defaultdict", _defaultdict, qualname=qualname)
    if qualname == "collections.namedtuple":
        from .classes import namedtuple_factory
        return BuiltinFunc("namedtuple", namedtuple_factory, qualname=qualname)
    if qualname == "collections.OrderedDict":
        return BuiltinFunc("OrderedDict", lambda it, a, k, c: _seq_builtin("dict")(it, a, k, c),
                           qualname=qualname)
    if qualname == "builtins.dict.fromkeys":
        return BuiltinFunc("fromkeys", _fromkeys, qualname=qualname)
    if qualname == "typing.cast":
        return BuiltinFunc("cast", lambda it, a, k, c: a[1] if len(a) == 2 else UNKNOWN, qualname=qualname)
    if qualname in ("copy.copy", "copy.deepcopy"):
        return BuiltinFunc(qualname[5:], _copy(qualname[5:]), qualname=qualname)
    if qualname in ("functools.lru_cache", "functools.cache",
                    "functools.wraps", "typing.overload", "typing.final", "abc.abstractmethod"):
        return BuiltinFunc(qualname, _identity_decorator, qualname=qualname)
    if qualname == "contextlib.contextmanager":
        return BuiltinFunc("contextmanager", _contextmanager, qualname=qualname)
    if qualname == "functools.partial":
        return BuiltinFunc("partial", _partial, qualname=qualname)
    if qualname in ("typing.TYPE_CHECKING",):
        return False
    if qualname.startswith("operator.") and qualname[9:] in _OPERATOR:
        return _operator(qualname[9:])
    if qualname.startswith("itertools.") and qualname[10:] in _ITERTOOLS:
        return BuiltinFunc(qualname[10:], _ITERTOOLS[qualname[10:]], qualname=qualname)
    if qualname == "functools.reduce":
        return BuiltinFunc("reduce", _reduce, qualname=qualname)
    if qualname in ("os.getenv", "os.environ.get"):
        return BuiltinFunc(qualname.rsplit(".", 1)[-1], _env_default, qualname=qualname)
    if qualname.startswith("enum."):
        from .enums import enum_stdlib
        return enum_stdlib(qualname[5:])
    return None


def _env_default(it, args, kwargs, call):
    """`os.environ.get("X", default)` / `os.getenv("X", default)`: the default, which is
    what the program gets with the variable unset (ts-lint has no environment to read, and
    follows the defaults the program states, as it follows argparse defaults). Without a
    default (None when unset, anything when set), and `os.environ["X"]`, stay unknown."""
    if len(args) == 2 and not kwargs:
        return args[1]
    if len(args) == 1 and set(kwargs) == {"default"}:
        return kwargs["default"]
    return UNKNOWN


def _contextmanager(it, args, kwargs, call):
    """`@contextlib.contextmanager`: the decorated function, when called, gives a
    GeneratorCMVal with its arguments and runs nothing yet (its body is split around the
    `with` block)."""
    from .values import GeneratorCMVal
    if len(args) != 1 or kwargs:
        return UNKNOWN
    fn = args[0]
    return BuiltinFunc(getattr(fn, "name", "contextmanager"),
                       lambda i, a, k, c, f=fn: GeneratorCMVal(f, list(a), dict(k)),
                       qualname=f"contextmanager.{getattr(fn, 'name', '?')}")


def _defaultdict(it, args, kwargs, call):
    """`defaultdict(factory, [mapping or pairs], **kw)`."""
    from .values import DefaultDictVal
    factory = args[0] if args else None
    if factory is not None and not isinstance(factory, (BuiltinFunc, FuncVal, ClassVal, BoundMethod)):
        return UNKNOWN
    init = _seq_builtin("dict")(it, list(args[1:2]), kwargs, call) if len(args) > 1 or kwargs else {}
    if not isinstance(init, dict):
        return UNKNOWN
    return DefaultDictVal(factory, init)


def _fromkeys(it, args, kwargs, call):
    keys = it.iterate(args[0]) if args else None
    if keys is None:
        return UNKNOWN
    try:
        return dict.fromkeys(keys, args[1] if len(args) > 1 else None)
    except TypeError:
        return UNKNOWN


def _copy(name):
    """copy.copy / copy.deepcopy of plain data (a shallow copy of a list, dict or set of
    anything); a copy of another object stays unknown."""
    import copy

    def impl(it, args, kwargs, call):
        if len(args) != 1:
            return UNKNOWN
        v = args[0]
        if is_concrete(v):
            return copy.deepcopy(v)
        if name == "copy" and isinstance(v, (list, dict, set)):
            return type(v)(v)
        if isinstance(v, tuple) and name == "copy":
            return v
        return UNKNOWN
    return impl


def _identity_decorator(it, args, kwargs, call):
    if len(args) == 1 and not kwargs and isinstance(args[0], (FuncVal, BoundMethod, BuiltinFunc)):
        return args[0]
    return BuiltinFunc("decorator", lambda i, a, k, c: a[0] if a else UNKNOWN, qualname="decorator")


def _partial(it, args, kwargs, call):
    if not args:
        return UNKNOWN
    fn, pre = args[0], list(args[1:])
    pre_kw = dict(kwargs)
    from .values import PartialVal
    out = PartialVal("partial", lambda i, a, k, c: i.call(fn, pre + list(a), {**pre_kw, **k}, c),
                     qualname="functools.partial", target=fn, pre=tuple(pre), pre_kw=pre_kw)
    out.made_at = call        # the `functools.partial(...)` call that made it (tsapi._fresh_partial)
    return out


def _reduce(it, args, kwargs, call):
    if len(args) < 2:
        return UNKNOWN
    seq = it.iterate(args[1])
    if seq is None:
        return UNKNOWN
    if len(args) > 2:
        acc, rest = args[2], seq
    elif seq:
        acc, rest = seq[0], seq[1:]
    else:
        return UNKNOWN
    for v in rest:
        acc = it.call(args[0], [acc, v], {}, call)
    return acc


# --- itertools: the finite ones, as lists (kernel-building code uses them to lay out warps,
# stages and task lists: `[0, *accumulate(warps)]`, `chain(loads, mmas)`, `product(...)`)
_ITER_CAP = 10_000        # items; a bigger result stays unknown


def _seqs(it, args):
    seqs = [it.iterate(a) for a in args]
    return None if any(s is None for s in seqs) else seqs


def _accumulate(it, args, kwargs, call):
    seq = it.iterate(args[0]) if args else None
    if seq is None:
        return UNKNOWN
    func = args[1] if len(args) > 1 else kwargs.get("func")
    out, acc = [], kwargs.get("initial")
    if acc is not None:
        out.append(acc)
    from .expressions import binop
    import operator
    for v in seq:
        if acc is None and not out:
            acc = v
        elif func is None:
            acc = binop(operator.add, acc, v)
        else:
            acc = it.call(func, [acc, v], {}, call)
        out.append(acc)
    return out


def _chain(it, args, kwargs, call):
    seqs = _seqs(it, args)
    return UNKNOWN if seqs is None else [v for s in seqs for v in s]


def _from_iterable(it, args, kwargs, call):
    outer = it.iterate(args[0]) if args else None
    return UNKNOWN if outer is None else _chain(it, outer, {}, call)


def _product(it, args, kwargs, call):
    seqs = _seqs(it, args)
    rep = kwargs.get("repeat", 1)
    if seqs is None or not isinstance(rep, int) or rep < 0:
        return UNKNOWN
    seqs = seqs * rep
    n = 1
    for s in seqs:
        n *= len(s)
    if n > _ITER_CAP:
        return UNKNOWN
    import itertools
    return [tuple(t) for t in itertools.product(*seqs)]


def _repeat(it, args, kwargs, call):
    times = args[1] if len(args) > 1 else kwargs.get("times")
    if not args or not isinstance(times, int) or isinstance(times, bool) or not 0 <= times <= _ITER_CAP:
        return UNKNOWN        # without a count: infinite
    return [args[0]] * times


def _islice(it, args, kwargs, call):
    seq = it.iterate(args[0]) if args else None
    bounds = args[1:]
    if seq is None or not 1 <= len(bounds) <= 3 or not all(b is None or isinstance(b, int) for b in bounds):
        return UNKNOWN
    import itertools
    try:
        return list(itertools.islice(seq, *bounds))
    except (ValueError, TypeError):
        return UNKNOWN


def _zip_longest(it, args, kwargs, call):
    seqs = _seqs(it, args)
    if seqs is None:
        return UNKNOWN
    import itertools
    return [tuple(t) for t in itertools.zip_longest(*seqs, fillvalue=kwargs.get("fillvalue"))]


def _starmap(it, args, kwargs, call):
    seq = it.iterate(args[1]) if len(args) == 2 else None
    if seq is None:
        return UNKNOWN
    out = []
    for v in seq:
        items = it.iterate(v)
        if items is None:
            return UNKNOWN
        out.append(it.call(args[0], items, {}, call))
    return out


def _pairwise(it, args, kwargs, call):
    seq = it.iterate(args[0]) if args else None
    return UNKNOWN if seq is None else list(zip(seq, seq[1:]))


def _combinatoric(name):
    def impl(it, args, kwargs, call):
        seq = it.iterate(args[0]) if args else None
        r = args[1] if len(args) > 1 else kwargs.get("r")
        if seq is None or len(seq) > 16 or not (r is None or isinstance(r, int)):
            return UNKNOWN
        import itertools
        out = list(getattr(itertools, name)(seq, r) if r is not None or name == "permutations" else [])
        return UNKNOWN if len(out) > _ITER_CAP else [tuple(t) for t in out]
    return impl


_ITERTOOLS = {
    "accumulate": _accumulate, "chain": _chain, "chain.from_iterable": _from_iterable,
    "product": _product, "repeat": _repeat, "islice": _islice, "zip_longest": _zip_longest,
    "starmap": _starmap, "pairwise": _pairwise, "combinations": _combinatoric("combinations"),
    "permutations": _combinatoric("permutations"),
}

# operator functions on plain values (`functools.reduce(operator.add, ...)`, `accumulate(xs, operator.mul)`)
_OPERATOR = frozenset({"add", "sub", "mul", "floordiv", "truediv", "mod", "pow", "neg", "pos", "abs",
                       "eq", "ne", "lt", "le", "gt", "ge", "and_", "or_", "xor", "lshift", "rshift",
                       "not_", "truth", "index"})


def _operator(name):
    import operator
    fn = getattr(operator, name)
    if name in ("pow", "lshift"):
        def guarded(a, b, fn=fn):
            if isinstance(b, int) and abs(b) > 4096:
                raise ValueError("too large")
            return fn(a, b)
        return BuiltinFunc(name, _concrete_call(guarded), qualname=f"operator.{name}")
    return BuiltinFunc(name, _concrete_call(fn), qualname=f"operator.{name}")
