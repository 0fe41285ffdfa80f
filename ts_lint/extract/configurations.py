"""The program's other command-line configurations: the `__main__` block run again with
each value of an argparse `choices=` argument.

A tutorial-style program selects what it builds on its command line
(`--mode {gmem,tma}`, `--ab-sync-mode {merge,fused}`, `--dtype {fp16,bf16}`), and a
kernel author runs every mode. The default run (argparse defaults) checks one of them;
a defect in a branch only another mode builds (`if cutlass.const_expr(use_tma_res):`)
would go unseen. So after the default run the `__main__` block is run once more per
other choice value, one argument at a time (not their product: the runs stay few), each
from the module state the import left (so one run's `globals()[...] = ...` does not leak
into the next).

What such a run finds that the default run did not is reported as a *warning* naming the
configuration: the program as run with its defaults does not build it, so neither the
reference nor the runtime rejects that run, but the user who passes the option gets the
error at compile time.
"""
from __future__ import annotations

import dataclasses

from ts_runtime.diagnostics import Severity

__all__ = ["run_configurations", "MAX_CONFIG_RUNS"]

MAX_CONFIG_RUNS = 6          # re-runs of `__main__` per module


def _flag(parser_dest: str) -> str:
    return "--" + parser_dest.replace("_", "-")


def run_configurations(it, budget_exc, imported: dict) -> None:
    """Re-runs the `__main__` block once per non-default `choices=` value (at most
    MAX_CONFIG_RUNS runs), each from `imported` (the module's names after its import);
    their new findings become warnings naming the option. The module's names are left as
    the default run left them."""
    ctx = it.ctx
    if not ctx.cli_choices or not ctx.kernels:
        return
    runs = []
    seen = set()
    for parser, dest in list(ctx.cli_choices):
        if (id(parser), dest) in seen:
            continue
        seen.add((id(parser), dest))
        default = parser.defaults.get(dest)
        for value in parser.choices.get(dest, ()):
            if value == default and type(value) is type(default):
                continue
            runs.append((parser, dest, value))
    if not runs:
        return
    module_vars = dict(it.module_scope.vars)
    root_errors = ctx.root_errors
    have = {(d.code, d.range) for d in ctx.diagnostics}
    for parser, dest, value in runs[:MAX_CONFIG_RUNS]:
        label = f"{_flag(dest)} {value}"
        start = len(ctx.diagnostics)
        ctx.cli_overrides = {dest: value}
        ctx.config_label = label
        it.module_scope.vars.clear()
        it.module_scope.vars.update(imported)
        try:
            it.run_module(main=True)
        except budget_exc:
            pass
        finally:
            ctx.cli_overrides = {}
            ctx.config_label = ""
        new = ctx.diagnostics[start:]
        del ctx.diagnostics[start:]
        for d in new:
            key = (d.code, d.range)
            if key in have:
                continue
            have.add(key)
            if d.severity is Severity.ERROR:
                d = dataclasses.replace(
                    d, severity=Severity.WARNING,
                    message=f"{d.message} (a warning here: found in the configuration `{label}`, which the "
                            f"program's default run does not build)")
            else:
                d = dataclasses.replace(d, message=f"{d.message} (in the configuration `{label}`)")
            ctx.diagnostics.append(d)
    it.module_scope.vars.clear()
    it.module_scope.vars.update(module_vars)
    ctx.root_name = "__main__"
    ctx.root_errors = root_errors
