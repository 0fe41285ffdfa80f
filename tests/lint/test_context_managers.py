"""`with` blocks of the user's own context managers in a schedule.

A class with `__enter__` / `__exit__` is run as Python runs it: `__enter__` before the
block, `__exit__` after it, so pipeline ops in them land where the runtime records them.
A `@contextlib.contextmanager` function of the form `setup; yield value; teardown` (no
`try`, one top-level `yield`) runs its setup before the block and its teardown after it,
as Python does; any other form is not modelled: the schedule is then not judged (an
incomplete capture, TS95x), never reported with the ops in the wrong order.
"""
import pytest

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


def test_a_generator_context_manager_runs_around_the_block(tmp_path):
    """`setup; yield; teardown`: the ops before the yield, the block, the ops after it."""
    k = assert_parity(GENERATOR_CM, tmp_path)
    load = next(t for t in k.tasks if t.name == "LoadTask")
    stages = [e.stage.value for e in load.lowered.entries]
    assert stages.index("ProducerAcquire") < stages.index("ProducerWork") < stages.index("ProducerCommit")


def test_a_generator_context_manager_that_forgets_the_commit_is_found(tmp_path):
    """The reference rejects it (ValueError "Schedule is blocked! smem ConsumerWait 0 is
    blocked: waiting for producer commit credit ..."); both front ends report the same
    findings (TS810 in the store schedule)."""
    src = GENERATOR_CM.replace("    yield res\n    res.commit()\n", "    yield res\n")
    path = tmp_path / "program.py"
    path.write_text(src)
    lint = codes_and_lines(analyze_source(src, str(path)).diagnostics, (Severity.ERROR,))
    assert lint and lint == codes_and_lines(run_program(str(path), "build"), (Severity.ERROR,))


def test_a_typo_in_the_yielded_value_is_found(tmp_path):
    """`yield res.tma_lod()`: the proxy has no such work method (TS224, the reference's
    AttributeError), at the yield's line."""
    src = GENERATOR_CM.replace("    yield res\n", "    yield res.tma_lod()\n")
    path = tmp_path / "program.py"
    path.write_text(src)
    line = src[:src.index("yield res.tma_lod()")].count("\n") + 1
    lint = codes_and_lines(analyze_source(src, str(path)).diagnostics, (Severity.ERROR,))
    assert lint == {("TS224", line)}
    assert lint == codes_and_lines(run_program(str(path), "build"), (Severity.ERROR,))


def test_a_generator_context_manager_with_a_try_leaves_the_schedule_unjudged():
    """A `try` (the teardown in a `finally`, an exception handled) is not modelled: the
    schedule is not judged (an incomplete capture, TS95x), never with ops misplaced."""
    src = GENERATOR_CM.replace("    yield res\n    res.commit()\n", "    try:\n        yield res\n    finally:\n"
                               "        pass\n")
    assert "finally" in src
    analysis = analyze_source(src, "program.py")
    assert [d for d in analysis.diagnostics if d.severity is Severity.ERROR] == []
    notes = [d for d in analysis.unknowns if "@contextmanager" in d.message]
    assert notes and notes[0].range.line == src[:src.index("with producer_stage")].count("\n") + 1


@pytest.mark.reference
def test_reference_verdicts():
    from oracle import reference_available
    from oracle_batch import reference_verdicts
    if not reference_available():
        pytest.skip("reference not installed")
    no_commit = GENERATOR_CM.replace("    yield res\n    res.commit()\n", "    yield res\n")
    typo = GENERATOR_CM.replace("    yield res\n", "    yield res.tma_lod()\n")
    v = reference_verdicts([GENERATOR_CM, no_commit, typo])
    assert [x.accepted for x in v] == [True, False, False]
    assert v[2].exc_type == "AttributeError" and "tma_lod" in v[2].message
