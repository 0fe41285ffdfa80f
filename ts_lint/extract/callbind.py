"""TS974: a call of one of the program's own functions whose arguments do not bind.

Python binds a call's arguments to the function's parameters before running it and raises
TypeError when they do not fit (`f() missing 1 required positional argument: 'x'`, `takes
2 positional arguments but 3 were given`, `got an unexpected keyword argument 'y'`); the
CuTe DSL does the same for a `@cute.jit` / `@cute.kernel` function and raises
DSLUserCodeError ARG_BIND_FAILED. Typically a parameter was deleted from a kernel's
signature, or an argument from its call. The interpreter binds leniently (a missing
argument is an unknown value), so the check is made here, from the text of the call and
of the `def`, where both are certain: no `*` / `**` at the call, a plain `def` (no
decorator but `@cute.jit` / `@cute.kernel`), and the interpreter's argument list is the
call's own (the guards of `Interpreter.certain_error` apply, and not after a branch that
may have returned).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from .frames import param_list

def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _names(names: list) -> str:
    quoted = [f"'{n}'" for n in names]
    if len(quoted) == 1:
        return quoted[0]
    return ", ".join(quoted[:-1]) + (", and " if len(quoted) > 2 else " and ") + quoted[-1]


def binding_error(name: str, params: cst.Parameters, n_positional: int, keywords: list) -> Optional[str]:
    """Python's TypeError message for binding `n_positional` positional arguments and the
    keyword arguments `keywords` to `params` (the function is called `name`), or None when
    they bind. The messages are CPython's."""
    plist = param_list(params)
    positional = [p for p, k in plist if k in ("positional_only", "pos_or_kw")]
    var_pos = any(k == "var_pos" for _, k in plist)
    var_kw = any(k == "var_kw" for _, k in plist)
    if n_positional > len(positional) and not var_pos:
        required = sum(1 for p in positional if p.default is None)
        if required == len(positional):
            takes = _plural(len(positional), "positional argument")
        else:
            takes = f"from {required} to {len(positional)} positional arguments"
        were = "was" if n_positional == 1 else "were"
        return f"{name}() takes {takes} but {n_positional} {were} given"
    filled = {p.name.value for p in positional[:n_positional]}
    by_name = {p.name.value: k for p, k in plist}
    for kw in keywords:
        kind = by_name.get(kw)
        if kind in ("pos_or_kw", "kw_only"):
            if kw in filled:
                return f"{name}() got multiple values for argument '{kw}'"
            filled.add(kw)
        elif not var_kw:
            return f"{name}() got an unexpected keyword argument '{kw}'"
    missing = [p.name.value for p in positional if p.name.value not in filled and p.default is None]
    if missing:
        return f"{name}() missing {_plural(len(missing), 'required positional argument')}: {_names(missing)}"
    missing = [p.name.value for p, k in plist if k == "kw_only" and p.name.value not in filled and p.default is None]
    if missing:
        return f"{name}() missing {_plural(len(missing), 'required keyword-only argument')}: {_names(missing)}"
    return None


def check_call(it, func, args: list, kwargs: dict, node, implicit: int) -> None:
    """TS974 at `node` (the call) when `func` (a FuncVal) certainly cannot take `args` /
    `kwargs` (`implicit`: how many of `args` the call does not spell, 1 for a bound
    method's receiver); the run then stops, as the exception stops it."""
    if type(node) is not cst.Call or not isinstance(func.node, cst.FunctionDef) or func.kind != "function":
        return
    if any(a.star for a in node.args):
        return
    spelt_pos = sum(1 for a in node.args if a.keyword is None)
    spelt_kw = [a.keyword.value for a in node.args if a.keyword is not None]
    if spelt_pos + implicit != len(args) or sorted(spelt_kw) != sorted(kwargs):
        return                     # the interpreter's arguments are not the call's own
    from .workbody import _dsl_decorator
    if not all(_dsl_decorator(d) for d in func.node.decorators):
        return
    if any(f.maybe_returned for f in it.frames):
        return
    qual = func.qualname.replace(".<locals>", "") if func.owner is not None else func.name
    msg = binding_error(qual, func.node.params, len(args), spelt_kw)
    if msg is None:
        return
    if func.is_jit:
        text = (f"{msg}: the CuTe DSL raises DSLUserCodeError (ARG_BIND_FAILED, the arguments do not match the "
                "function signature) when it compiles this call")
    else:
        text = f"{msg}: Python raises TypeError here"
    from ts_runtime.diagnostics import Related
    related = None
    try:
        related = [Related(it.rng(func.node.name), f"'{func.name}' is defined here")]
    except Exception:          # a def in another module
        pass
    it.certain_error(node, "TS974", text, related=related)

