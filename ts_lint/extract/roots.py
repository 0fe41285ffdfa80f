"""Which functions to run, and in which order.

The module body runs first (imports, classes, constants, and the `__main__` block with
argparse defaults), which usually reaches every TaskManager through real calls. Then
every module-level function or method that uses TS (directly, or by calling another
such function) and was not reached is run on its own, callers before callees, with its
parameter defaults (UNKNOWN, or RUNTIME for traced parameters of `@cute.jit` /
`@cute.kernel` functions). A root is skipped when every TS function it can reach has
already run: each `TaskManager(...)` is analysed in the first context that reaches it
(the `__main__` block or a host-side `build()` with plain ints before a `@cute.kernel`
with traced values).
"""
from __future__ import annotations

import re
from typing import List

from .values import BoundMethod, ClassVal, FuncVal

_IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


def _candidates(it) -> list:
    """[(label, FuncVal, owner ClassVal or None)] of module-level functions and methods."""
    out = []
    for name, v in it.module_scope.vars.items():
        if isinstance(v, FuncVal) and v.module == it.module_name and v.owner is None \
                and not isinstance(v.node, type(None)) and hasattr(v.node, "body") \
                and v.node.__class__.__name__ == "FunctionDef":
            out.append((name, v, None))
        elif isinstance(v, ClassVal) and v.builtin is None and v.node is not None \
                and v.module == it.module_name:     # not a class imported from a user module
            if any(k.builtin in ("MemoryResource", "Task") for k in v.mro):
                continue          # resource / task methods run when the runtime would call them
            for mname, m in v.namespace.items():
                if isinstance(m, FuncVal) and m.owner is v and not mname.startswith("__") or \
                        mname == "__call__" and isinstance(m, FuncVal):
                    out.append((f"{v.name}.{mname}", m, v))
    return out


def _is_ts(it, v) -> bool:
    from .names import is_ts_module
    from .values import QualRef, ScheduleFuncVal
    if isinstance(v, ScheduleFuncVal):
        return True
    if isinstance(v, FuncVal) and v.module != it.module_name:
        return True       # imported from a user module (imports.py): may build the kernel
    if isinstance(v, ClassVal):
        return (v.builtin is not None and v.builtin not in ("object", "external")) or any(
            k.builtin in ("MemoryResource", "Task", "TaskManager") for k in v.mro)
    if isinstance(v, QualRef):
        return is_ts_module(v.qualname)
    return any(v is s for s in it.ts.symbols.values())


def root_order(it) -> List[tuple]:
    """[(label, FuncVal, owner, reach)] of the TS functions, callers first."""
    ctx = it.ctx
    cands = _candidates(it)
    ts_names = {"TaskManager", "schedule", "domain_loop", "work_tile_loop"} | {
        n for n, v in it.module_scope.vars.items() if _is_ts(it, v)}
    src = ctx.src
    tokens = {id(f): set(_IDENT.findall(src.function_text(f.node) if src is not None else it.text(f.node)))
              for _, f, _ in cands}
    direct = {id(f) for _, f, _ in cands if tokens[id(f)] & ts_names}
    related = set(direct)
    # a method is reached through its own name (`self.kernel(...)`) and, for a host-side
    # class, through the class's name (`GemmKernel(cfg)(a, b)` runs `__init__` and
    # `__call__`): the class name joins `names` once one of its methods is TS-related
    names = {_name(f, owner) for _, f, owner in cands if id(f) in related}
    names |= {owner.name for _, f, owner in cands if owner is not None and id(f) in related}
    changed = True
    while changed:
        changed = False
        for label, f, owner in cands:
            if id(f) not in related and tokens[id(f)] & names:
                related.add(id(f))
                names.add(_name(f, owner))
                if owner is not None:
                    names.add(owner.name)
                changed = True
    chosen = [(label, f, owner) for label, f, owner in cands if id(f) in related]
    # the functions that build TS code or call what does (TS962 judges only those)
    ctx.ts_related = {f.node for _, f, _ in chosen}
    by_name: dict = {}
    for label, f, owner in chosen:
        by_name.setdefault(_name(f, owner), []).append(f)
        if owner is not None:
            by_name.setdefault(owner.name, []).append(f)
    calls = {id(f): [g for n in tokens[id(f)] & set(by_name) for g in by_name[n] if g is not f]
             for _, f, _ in chosen}
    out = []
    mentioned = {id(g) for fs in calls.values() for g in fs}
    for label, f, owner in chosen:
        reach, stack = set(), [f]
        while stack:
            x = stack.pop()
            if id(x) in reach:
                continue
            reach.add(id(x))
            stack.extend(calls.get(id(x), ()))
        ts_reach = [g for _, g, _ in chosen if id(g) in reach and id(g) in direct]
        out.append((label, f, owner, ts_reach))
    out.sort(key=lambda c: (id(c[1]) in mentioned, ctx.pos.line(c[1].node)))
    return out


def _name(f: FuncVal, owner) -> str:
    """The name a call of `f` is written with: a `__call__` method is called through an
    instance (its class's name stands for it), any other function by its own name."""
    return owner.name if owner is not None and f.name == "__call__" else f.name


def _no_arguments_needed(f: FuncVal, owner) -> bool:
    """Whether `f()` can be called as is (every parameter has a default)."""
    from .interpreter import param_list
    if owner is not None and f.kind != "staticmethod":
        return False
    return all(p.default is not None or kind in ("var_pos", "var_kw")
               for p, kind in param_list(f.node.params))


def run_roots(it, phase: str = "all"):
    """phase "entry": functions callable without arguments (a `build()` entry point, as the
    runtime's test harness calls it); "rest": every other TS function not reached yet."""
    from .context import Budget
    ctx = it.ctx
    ctx.assumed = phase == "rest"
    try:
        _run_roots(it, ctx, phase, Budget)
    finally:
        ctx.assumed = False


def _run_roots(it, ctx, phase, Budget):
    for label, f, owner, ts_reach in root_order(it):
        if f.node in ctx.entered:
            continue
        if phase == "entry" and not _no_arguments_needed(f, owner):
            continue
        if ts_reach and all(g.node in ctx.entered for g in ts_reach if g is not f):
            if f.node not in [g.node for g in ts_reach]:
                continue        # everything TS it reaches has been analysed already
        target = f
        if owner is not None and f.kind != "staticmethod":
            if f.kind == "classmethod":
                target = BoundMethod(owner, f)
            else:
                try:
                    ctx.steps = 0
                    inst = it.instantiate(owner, [], {}, None)
                except Budget:
                    ctx.unknown(ctx.range(f.node), f"analysis budget exhausted building `{owner.name}()`", "budget")
                    continue
                target = BoundMethod(inst, f)
        try:
            it.run_root(target, label)
        except Budget:
            ctx.unknown(ctx.range(f.node), f"analysis budget exhausted in `{label}`; the rest of it is "
                        "not analyzed", "budget")
