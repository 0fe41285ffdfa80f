"""`with` blocks of the user's own context managers in a schedule.

A class with `__enter__` / `__exit__` is run as Python runs it: `__enter__` before the
block, `__exit__` after it, so pipeline ops in them land where the runtime records them.
A `@contextlib.contextmanager` function runs its body around the block (before and after
its `yield`), which ts-lint does not model: the schedule is then not judged (an
incomplete capture, TS95x), never reported with the ops in the wrong order.
"""
from ts_runtime.diagnostics import Severity
from ts_runtime.testing import codes_and_lines, run_program

from ts_lint.api import analyze_source

from lint_parity import assert_parity
from test_extract import COPY

LOAD = '''            smem.try_acquire()
            smem.acquire()
            smem.tma_load(gmem_idx=idx)
            smem.commit()
'''
assert LOAD in COPY

CLASS_CM = COPY.replace(LOAD, '''            with ProducerStage(smem):
                smem.tma_load(gmem_idx=idx)
''').replace("def build(stages=2, consumer=128):", '''class ProducerStage:
    """acquire before the block, commit after it"""

    def __init__(self, res):
        self.res = res

    def __enter__(self):
        self.res.try_acquire()
        self.res.acquire()
        return self.res

    def __exit__(self, *exc):
        self.res.commit()
        return False


def build(stages=2, consumer=128):''')

GENERATOR_CM = COPY.replace(LOAD, '''            with producer_stage(smem):
                smem.tma_load(gmem_idx=idx)
''').replace("from dataclasses import dataclass\n", "import contextlib\nfrom dataclasses import dataclass\n", 1).replace(
    "def build(stages=2, consumer=128):", '''@contextlib.contextmanager
def producer_stage(res):
    res.try_acquire()
    res.acquire()
    yield res
    res.commit()


def build(stages=2, consumer=128):''')


def test_a_class_context_manager_runs_its_exit_after_the_block(tmp_path):
    k = assert_parity(CLASS_CM, tmp_path)
    load = next(t for t in k.tasks if t.name == "LoadTask")
    stages = [e.stage.value for e in load.lowered.entries]
    assert stages.index("ProducerCommit") > stages.index("ProducerWork")


def test_a_class_context_manager_that_forgets_the_commit_is_found(tmp_path):
    src = CLASS_CM.replace("        self.res.commit()\n", "        pass\n")
    path = tmp_path / "program.py"
    path.write_text(src)
    lint = codes_and_lines(analyze_source(src, str(path)).diagnostics, (Severity.ERROR,))
    assert lint and lint == codes_and_lines(run_program(str(path), "build"), (Severity.ERROR,))


def test_a_generator_context_manager_leaves_the_schedule_unjudged():
    assert "yield res" in GENERATOR_CM
    analysis = analyze_source(GENERATOR_CM, "program.py")
    assert [d for d in analysis.diagnostics if d.severity is Severity.ERROR] == []
    notes = [d for d in analysis.unknowns if "@contextmanager" in d.message]
    assert notes and notes[0].range.line == GENERATOR_CM[:GENERATOR_CM.index("with producer_stage")].count("\n") + 1
