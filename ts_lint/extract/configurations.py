"""The program's other command-line configurations: the `__main__` block run again with
each value of an argparse `choices=` argument and each on/off option switched.

A tutorial-style program selects what it builds on its command line
(`--mode {gmem,tma}`, `--ab-sync-mode {merge,fused}`, `--dtype {fp16,bf16}`), and a
kernel author runs every mode. The default run (argparse defaults) checks one of them;
a defect in a branch only another mode builds (`if cutlass.const_expr(use_tma_res):`)
would go unseen. So after the default run the `__main__` block is run once more per
other choice value (and per `store_true` / `store_false` option, switched), one argument
at a time (not their product: the runs stay few), each
from the module state the import left (so one run's `globals()[...] = ...` does not leak
into the next). A combination the program refuses (`parser.error(...)`, stdlib.py) stops
its run there.

What such a run finds that the default run did not is reported as a *warning* naming the
configuration: the program as run with its defaults does not build it, so neither the
reference nor the runtime rejects that run, but the user who passes the option gets the
error at compile time.
"""
from __future__ import annotations

import dataclasses
import os
import traceback

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

    def rerun(label: str, overrides: dict) -> list:
        """The findings of one re-run of `__main__` (taken out of the context)."""
        start = len(ctx.diagnostics)
        k0 = len(ctx.kernels)
        ctx.cli_overrides = overrides
        ctx.config_label = label
        it.module_scope.vars.clear()
        it.module_scope.vars.update(imported)
        failed = False
        try:
            it.run_module(main=True)
        except budget_exc:
            pass
        except RecursionError:
            failed = True
        except Exception:           # an extra run must never cost the file its default findings
            if os.environ.get("TS_DEBUG"):
                traceback.print_exc()
            failed = True
        finally:
            ctx.cli_overrides = {}
            ctx.config_label = ""
            while it.frames:            # a run stopped in a call leaves its frames
                it.frames.pop()
        if failed:
            del ctx.kernels[k0:], ctx.kernel_roots[k0:], ctx.diagnostics[start:]
            return []
        if overrides:
            _keep_new_kernels(ctx, k0)
        else:
            del ctx.kernels[k0:], ctx.kernel_roots[k0:]
        new = ctx.diagnostics[start:]
        del ctx.diagnostics[start:]
        return new

    if any(root != "__main__" for root in ctx.site_roots.values()):
        # an entry point (`build()`) analysed a TaskManager before the `__main__` block, whose
        # argparse defaults may build another kernel there: what that one shows is not
        # a finding of an option (the module's own run is judged by the entry point, as before)
        have |= {(d.code, d.range) for d in rerun("(defaults)", {})}
    for parser, dest, value in runs[:MAX_CONFIG_RUNS]:
        label = parser.flags[dest] if dest in parser.flags else f"{_flag(dest)} {value}"
        for d in rerun(label, {dest: value}):
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


def _keep_new_kernels(ctx, k0: int) -> None:
    """Drops the kernels a re-run built (from index `k0`) that are the same as one already
    kept (`_signature`): an option such as `--verbose` builds the default kernel again,
    which --show-schedule and the editor need not see twice."""
    have = {_signature(k) for k in ctx.kernels[:k0]}
    kept, roots = list(ctx.kernels[:k0]), list(ctx.kernel_roots[:k0])
    for k, root in zip(ctx.kernels[k0:], ctx.kernel_roots[k0:]):
        sig = _signature(k)
        if sig not in have:
            have.add(sig)
            kept.append(k)
            roots.append(root)
    ctx.kernels[:], ctx.kernel_roots[:] = kept, roots


def _signature(kernel) -> str:
    """What tells two analysed kernels apart for the user: the resources (name, class,
    pipeline type, stages and group sizes), the tasks (name, warps) and each task's
    lowered steps (resource, stage, work label, section, guard)."""
    res = kernel.resources
    parts = []
    for rid in sorted(res):
        r = res[rid]
        p = r.pipeline
        parts.append((r.label, r.class_name, str(getattr(p, "pipeline_type", None)),
                      str(getattr(p, "num_stages", None)), str(getattr(p, "producer_group_size", None)),
                      str(getattr(p, "consumer_group_size", None))))
    for t in kernel.tasks:
        low = t.lowered
        steps = tuple((res[e.resource].label if e.resource in res else e.resource, str(e.stage), e.label,
                       e.section, str(e.guard)) for e in (low.entries if low is not None else ()))
        parts.append((t.name, str(t.warp_idx), str(t.num_warps), steps))
    return repr(parts)
