"""Errors in TS code that the module's own run does not reach are warnings when that run
reached a TaskManager (ts_lint.api._unreached): the configuration the module runs never
executes them, so neither the reference nor the runtime rejects the program (the
reference's tutorials keep task factories for non-default modes next to the default
ones), but the defect is still shown. A module with no run of its own keeps them as
errors, and an error the run itself reaches stays one error."""
from ts_runtime.diagnostics import Severity
from ts_runtime.testing import codes_and_lines, run_program

from ts_lint.api import UNREACHED_NOTE, analyze_source, lint_source
from ts_lint.incremental import AnalysisCache

from test_extract import COPY

# a task factory no run calls, with 20 registers (TS712: not a multiple of 8)
SPARE = '''

def make_spare_task(smem, out, store_schedule):
    return Task(name="Spare", src_resources=[smem], dst_resources=[out], warp_idx=5, num_warps=1,
                num_registers=20, schedule=store_schedule(smem, out))
'''


def _line(src, text):
    return src[:src.index(text)].count("\n") + 1


def _found(src):
    return {(d.code, d.severity, d.range.line) for d in lint_source(src, "program.py")}


def test_an_error_in_code_the_run_does_not_reach_is_a_warning(tmp_path):
    src = COPY + SPARE
    line = _line(src, "num_registers=20")
    found = [d for d in lint_source(src, "program.py") if d.code == "TS712"]
    assert [(d.severity, d.range.line) for d in found] == [(Severity.WARNING, line)]
    assert found[0].message.endswith(UNREACHED_NOTE)
    # the runtime runs build() only: it accepts the program
    path = tmp_path / "program.py"
    path.write_text(src)
    assert codes_and_lines(run_program(str(path), "build"), (Severity.ERROR,)) == set()


def test_without_a_run_of_its_own_the_module_keeps_the_error():
    # build() needs arguments: nothing runs the module by itself, so every function is
    # analysed with assumed arguments and judged as it is
    src = COPY.replace("def build(stages=2, consumer=128):", "def build(stages, consumer):") + SPARE
    assert ("TS712", Severity.ERROR, _line(src, "num_registers=20")) in _found(src)


def test_an_error_the_run_reaches_stays_an_error():
    src = COPY.replace('Task(name="LoadTask", src_resources=[inp], dst_resources=[smem], warp_idx=4, num_warps=1,',
                       'Task(name="LoadTask", src_resources=[inp], dst_resources=[smem], warp_idx=4, num_warps=1,\n'
                       '             num_registers=20,')
    assert src != COPY
    found = [d for d in lint_source(src + SPARE, "program.py") if d.code == "TS712"]
    assert sorted((d.severity.value, d.range.line) for d in found) == sorted(
        [(Severity.ERROR.value, _line(src, "num_registers=20")),
         (Severity.WARNING.value, _line(src + SPARE, "num_registers=20, schedule"))])


def test_the_incremental_analysis_agrees():
    src = COPY + SPARE
    whole = analyze_source(src, "program.py").diagnostics
    cache = AnalysisCache()
    for text in (src, src.replace("# ", "#  ") + "\n# edited\n"):
        inc = analyze_source(text, "program.py", cache=cache).diagnostics
        assert [(d.code, d.severity, d.message) for d in inc] == [(d.code, d.severity, d.message) for d in whole]
    assert cache.fallbacks == 0 and cache.hits > 0     # analysed by components, the second time reused
