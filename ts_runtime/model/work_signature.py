"""Work-method signature and `returns=` analysis, shared by the decorator and ts-lint.

Contract: `(self, stage_info, <routed inputs...>, *, <constexpr params>)`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Tuple

from .kernel import ParamSpec


@dataclass
class RawParam:
    name: str
    kind: str              # positional_only | pos_or_kw | var_pos | kw_only | var_kw
    constexpr: bool = False
    has_default: bool = False


def analyze_params(method: str, params: List[RawParam]) -> Tuple[list, list]:
    """Returns ([ParamSpec] for the params after (self, stage_info), [(code, exc, message)])."""
    findings, specs = [], []
    for i, p in enumerate(params):
        if p.kind == "positional_only":
            findings.append(("TS230", TypeError, f"work method '{method}' parameter '{p.name}' is positional-only"))
            continue
        if p.kind == "var_pos":
            findings.append(("TS230", TypeError, f"work method '{method}' cannot take routed inputs from *{p.name}"))
            continue
        if p.kind == "var_kw":
            findings.append(("TS230", TypeError, f"work method '{method}' cannot take routed inputs from **{p.name}"))
            continue
        if i < 2:  # self, stage_info
            continue
        if p.constexpr and p.kind != "kw_only":
            findings.append(("TS230", TypeError, f"work method '{method}' requires Constexpr parameter "
                             f"'{p.name}' to be keyword-only (put it after `*`)"))
            continue
        specs.append(ParamSpec(p.name, "kw" if p.kind == "kw_only" else "pos", p.constexpr, p.has_default))
    return specs, findings


def normalize_returns(method: str, returns) -> Tuple[list, list]:
    """`returns=` -> ([str or field-ref], findings). Items that are not str stay as given
    (dataclass Field objects are resolved to names once their class exists)."""
    findings = []
    if returns is None:
        return [], findings
    items = list(returns) if isinstance(returns, (list, tuple)) else [returns]
    if not items:
        findings.append(("TS313", ValueError, f"@consumer_work(returns=...) of '{method}' cannot be empty"))
    out = []
    for it in items:
        if isinstance(it, str):
            if not it:
                findings.append(("TS313", ValueError, f"@consumer_work(returns=...) of '{method}' contains an empty string"))
                continue
        elif not _is_field(it):
            findings.append(("TS313", TypeError, f"@consumer_work(returns=...) of '{method}' expects a str, "
                             f"dataclasses.Field or a list/tuple of those, got {type(it).__name__}"))
            continue
        out.append(it)
    dup = duplicate_return(method, [x for x in out if isinstance(x, str)])
    if dup is not None:
        findings.append(("TS313", ValueError, dup))
    return out, findings


def duplicate_return(method: str, names) -> "str | None":
    """TS313's message when the resolved `returns=` names of a @consumer_work method repeat
    one (written as strings or as the same dataclass field twice: `returns=[a, a]`), else
    None. Checked once every item has its name."""
    seen = set()
    for n in names:
        if n in seen:
            return f"@consumer_work '{method}': returns= contains duplicate TaskLocalVariable name '{n}'"
        seen.add(n)
    return None


def _is_field(x) -> bool:
    import dataclasses
    return isinstance(x, dataclasses.Field)


def stage_info_problem(params: List[RawParam]) -> "str | None":
    """Why the framework's call of a work method, `method(self, stage_info, **inputs)` (two
    positional arguments, the routed inputs and Constexpr values by keyword), does not bind
    to its parameters `params` (all of them, `self` first), with Python's wording; None when
    it binds as far as the positional arguments go. A `*args` parameter takes them (TS230
    judges it)."""
    if any(p.kind == "var_pos" for p in params):
        return None
    n = sum(1 for p in params if p.kind in ("positional_only", "pos_or_kw"))
    if n >= 2:
        return None
    return f"takes {n} positional argument{'' if n == 1 else 's'} but 2 were given"


# keyword arguments of `@cute.jit(...)` / `@cute.kernel(...)` the DSL's decorator check knows
_DSL_DECORATOR_KWARGS = frozenset({"preprocess", "attributes"})


def misplaced_dsl_decorator(decorators) -> "int | None":
    """The index (outermost first) of a `@<module>.jit` / `@<module>.kernel` decorator that
    is not the innermost decorator of its function, or None.

    `decorators`: the `ast` expressions of a def's decorators, outermost first. Mirrors the
    check the CuTe DSL's AST preprocessor makes when it first compiles the function
    (`DSLPreprocessor.get_dsl_decorator_index` / `check_decorator`), which raises
    `DSLUserCodeError` UNSUP_DECORATOR_ORDER: a decorator that is an attribute named `jit`
    or `kernel`, bare or called without keywords or with only the keywords it knows
    (`@jit` by a bare name is not recognised by the DSL, nor here). A call with a
    `preprocess=` keyword is not judged (the DSL then reads the keyword's value)."""
    import ast
    found = None
    for i, d in enumerate(decorators):
        if isinstance(d, ast.Call):
            f = d.func
            if not (isinstance(f, ast.Attribute) and f.attr in ("jit", "kernel")):
                continue
            names = {k.arg for k in d.keywords}
            if any(k.arg == "preprocess" for k in d.keywords):
                return None
            if not d.keywords or names <= _DSL_DECORATOR_KWARGS or (f.attr == "kernel" and "attributes" in names):
                found = i
                break
        elif isinstance(d, ast.Attribute) and d.attr in ("jit", "kernel"):
            found = i
            break
    if found is not None and found < len(decorators) - 1:
        return found
    return None


def returns_keyword_value(decorators):
    """The `ast` value of the `returns=` keyword of the decorators (`@consumer_work(returns=
    ...)`), or None."""
    import ast
    for d in decorators:
        if isinstance(d, ast.Call):
            for k in d.keywords:
                if k.arg == "returns":
                    return k.value
    return None
