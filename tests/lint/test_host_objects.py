"""Host-side Python that kernel builders write around the TS objects, read by ts-lint as
the runtime runs it (same findings on the same lines, same kernel model:
tests/lint/lint_parity.py). Each case was a program ts-lint could not resolve, or placed
differently from the runtime, before:

* a host-side kernel object called like a function, `CopyKernel(stages)()`, runs its
  class's `__call__`;
* `dataclasses.replace(cfg, num_stages=...)` of a PipelineConfig (a dataclass) builds a new
  config, checked again as its constructor checks it;
* `TaskLocalVariable(dtype=None)` is accepted (only a missing dtype is TS318);
* a Task subclass whose `__init__` forwards to `super().__init__(**kwargs)` is placed where
  each object is made, so two such tasks get two lines.
"""
from ts_runtime.diagnostics import Severity
from ts_runtime.testing import codes_and_lines, run_program

from ts_lint.api import lint_source

from lint_parity import HEADER, assert_parity, lint_kernel
from test_extract import COPY

ALL = tuple(Severity)


def _line(src, text, nth=0):
    at = -1
    for _ in range(nth + 1):
        at = src.index(text, at + 1)
    return src[:at].count("\n") + 1


def _as_call_method(src):
    """COPY with its build() turned into `CopyKernel.__call__` and a build() that calls it."""
    head, body = src.split("def build(stages=2, consumer=128):\n")
    return head + '''class CopyKernel:
    """A host-side kernel object, configured once and called to build."""

    def __init__(self, stages, consumer=128):
        self.stages = stages
        self.consumer = consumer

    def __call__(self):
        stages, consumer = self.stages, self.consumer
''' + "".join("    " + line if line.strip() else line for line in body.splitlines(True)) + '''

def build():
    return CopyKernel(2)()
'''


CALLABLE_KERNEL = _as_call_method(COPY)


def _same_findings(src, tmp_path):
    """Lint and runtime findings (code, line) of a program the runtime rejects."""
    path = tmp_path / "program.py"
    path.write_text(src)
    rt = codes_and_lines(run_program(str(path), "build"), ALL)
    lint = codes_and_lines(lint_source(src, str(path)), ALL)
    assert lint == rt
    return lint


def test_calling_a_host_kernel_object_runs_its_call_method(tmp_path):
    k = assert_parity(CALLABLE_KERNEL, tmp_path)
    assert sorted(t.name for t in k.tasks) == ["LoadTask", "StoreTask"]


def test_a_defect_reached_through_call_is_reported_at_its_line(tmp_path):
    # 96 consumer threads for a TMA pipeline whose consumer task has 4 warps (128 threads)
    src = CALLABLE_KERNEL.replace("return CopyKernel(2)()", "return CopyKernel(2, consumer=96)()")
    found = _same_findings(src, tmp_path)
    assert found, "the consumer-size mismatch is found through __call__"


REPLACED_CONFIG = COPY.replace(
    "    inp, out = InGmem(name=\"in\"), OutGmem(name=\"out\")",
    "    import dataclasses\n    cfg = dataclasses.replace(cfg, num_stages=stages + 2)\n"
    "    inp, out = InGmem(name=\"in\"), OutGmem(name=\"out\")")


def test_dataclasses_replace_of_a_pipeline_config(tmp_path):
    k = assert_parity(REPLACED_CONFIG, tmp_path)
    stages = {r.label: r.pipeline.num_stages for r in k.resources.values() if r.pipeline is not None}
    assert stages == {"smem": 4}


def test_dataclasses_replace_of_a_pipeline_config_is_checked_again(tmp_path):
    src = REPLACED_CONFIG.replace("num_stages=stages + 2", "interleave_stride=(1, 2, 3)")
    found = _same_findings(src, tmp_path)
    assert found and all(line == _line(src, "dataclasses.replace(") for _, line in found), found


def test_task_local_variable_with_dtype_none_is_accepted(tmp_path):
    first = "TaskLocalVariable(dtype=int, default=0)"
    assert first in COPY
    assert_parity(COPY.replace(first, "TaskLocalVariable(dtype=None, default=0)", 1), tmp_path)
    missing = COPY.replace(first, "TaskLocalVariable(default=0)", 1)
    assert codes_and_lines(lint_source(missing, "program.py"), (Severity.ERROR,)) == {
        ("TS318", _line(missing, "TaskLocalVariable(default=0)"))}


SUBCLASSED_TASKS = COPY.replace("    tasks = [", '''    class NamedTask(Task):
        def __init__(self, label, **kwargs):
            super().__init__(name=label, **kwargs)

    tasks = [''').replace('Task(name="StoreTask",', 'NamedTask("StoreTask",').replace(
    'Task(name="LoadTask",', 'NamedTask("LoadTask",')


def test_each_subclassed_task_is_placed_where_it_is_made(tmp_path):
    k = assert_parity(SUBCLASSED_TASKS, tmp_path)
    lines = {t.name: t.range.line for t in k.tasks}
    assert lines == {"StoreTask": _line(SUBCLASSED_TASKS, 'NamedTask("StoreTask"'),
                     "LoadTask": _line(SUBCLASSED_TASKS, 'NamedTask("LoadTask"')}
