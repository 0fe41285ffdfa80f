"""A tiny test double of `ts_lint.api` for the CLI / config / suppression / output tests.

The double reads markers from the source instead of analysing it, so these tests pin the
driver's behaviour (exact output) whatever the real extractor finds:

* `# expect: TS201[, TS202]` -> an error per code on that line (the rule-example contract)
* `# warn: TS301`            -> a warning on that line
* `# unknown: TS951`         -> an info finding, only with explain_unknown=True
* `# checker: TS801`         -> an error, only with run_checker=True
* `# crash`                  -> lint_source raises RuntimeError("boom")
* a line containing `TaskManager(` -> a KernelModel in analyze_source's `kernels`

A finding's range: from the first non-blank character to the end of the code before the
comment. Names are `fake-<code>`, messages `fake finding <code>`. Not autouse: tests ask
for `fake_api` explicitly, so tests/lint of the extractor are unaffected.
"""
import re
import types

import pytest

from ts_runtime.diagnostics import Diagnostic, Severity
from ts_runtime.source import SourceRange

_MARK = re.compile(r"#\s*(expect|warn|unknown|checker):\s*(TS\d{3}(?:\s*,\s*TS\d{3})*)")


class FakeAPI:
    def __init__(self):
        self.calls = []

    def _diags(self, source, path, explain_unknown, run_checker):
        if "# crash" in source:
            raise RuntimeError("boom")
        out = []
        for i, line in enumerate(source.splitlines(), 1):
            code_part = line.split("#", 1)[0].rstrip()
            col = len(line) - len(line.lstrip())
            for m in _MARK.finditer(line):
                kind = m.group(1)
                if kind == "unknown" and not explain_unknown:
                    continue
                if kind == "checker" and not run_checker:
                    continue
                sev = {"expect": Severity.ERROR, "warn": Severity.WARNING,
                       "unknown": Severity.INFO, "checker": Severity.ERROR}[kind]
                for code in (c.strip() for c in m.group(2).split(",")):
                    out.append(Diagnostic(code, f"fake-{code.lower()}", sev,
                                          f"fake finding {code}",
                                          SourceRange(path, i, col, i, max(col, len(code_part)))))
        return out

    def lint_source(self, source, path="<string>", *, explain_unknown=False, run_checker=True):
        self.calls.append(("lint", path, explain_unknown, run_checker))
        return self._diags(source, path, explain_unknown, run_checker)

    def analyze_source(self, source, path="<string>", *, explain_unknown=False, run_checker=True):
        self.calls.append(("analyze", path, explain_unknown, run_checker))
        diags = self._diags(source, path, explain_unknown, run_checker)
        kernels = [fake_kernel(path, i) for i, line in enumerate(source.splitlines(), 1)
                   if "TaskManager(" in line]
        return types.SimpleNamespace(diagnostics=diags, kernels=kernels,
                                     unknowns=[d for d in diags if d.severity is Severity.INFO])


def fake_kernel(path, line):
    from ts_runtime.enums import ScheduleStage
    from ts_runtime.model.kernel import KernelModel, ResourceModel, TaskModel
    from ts_runtime.model.lowered import Entry, LoweredSchedule
    low = LoweredSchedule(entries=[
        Entry(0, 0, ScheduleStage.ProducerAcquire, "loop", range=SourceRange(path, 5, 4)),
        Entry(1, 0, ScheduleStage.ProducerCommit, "loop", range=SourceRange(path, 6, 4)),
    ], has_domain_loop=True, domain_start=0, domain_end=8, domain_step=1)
    task = TaskModel("LoadTask", warp_idx=4, num_warps=1, lowered=low)
    return KernelModel(resources={0: ResourceModel(0, "smem")}, tasks=[task],
                       range=SourceRange(path, line, 4, line, 20))


@pytest.fixture
def fake_api(monkeypatch):
    """Makes ts_lint.cli use the double; returns it (its `.calls` records each call)."""
    import ts_lint.cli as cli
    api = FakeAPI()
    monkeypatch.setattr(cli, "_load_api", lambda: api)
    return api


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    """Runs the test inside tmp_path (paths in the output are relative to it)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path
