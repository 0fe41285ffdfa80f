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
