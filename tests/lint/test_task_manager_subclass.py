"""A TaskManager subclass (`class GemmManager(TaskManager)`) is analysed like a
`TaskManager(...)` call, by both front ends.

ts-lint used to model TaskManager only as a function: a class deriving from it was a class
ts-lint could not see, its construction built no kernel, and ts-lint reported nothing for
the whole program (a schedule that never releases, which the runtime rejects, passed).
Now the subclass's construction runs the base's `__init__` on the instance (implicitly,
or through the subclass's own `__init__` and `super().__init__(...)`), its own methods and
attributes stay its own, and the manager's methods (`setup_resources_and_tasks`, ...) are
the manager's, also through `super()`. Both front ends place the kernel at the
subclass's construction (`GemmManager(...)`), as they place a Task subclass's.

The reference's verdicts on these programs (tests/oracle_batch.py, checked when this
was written): the three valid ones accepted; without the release "Schedule is blocked!";
with an empty graph "resource_dependency_graph must be provided and non-empty."; without
`tasks=` "TaskManager.__init__() missing 1 required positional argument: 'tasks'";
without `tag=` "GemmManager.__init__() missing 1 required positional argument: 'tag'".
"""
from pathlib import Path

import pytest

from ts_runtime.diagnostics import Severity
from ts_runtime.testing import run_source

BASE = (Path(__file__).resolve().parents[1] / "rules" / "sample_program.py").read_text()
_CALL = "    return TaskManager(tasks=tasks, resource_dependency_graph=graph, smem_allocator=alloc)"
assert BASE.count(_CALL) == 1

# the subclasses: no __init__ (and a method of its own), an own __init__ passing
# everything on, one overriding setup_resources_and_tasks and calling the base's
_PLAIN = '''

class GemmManager(TaskManager):
    """A manager with a helper of its own."""

    def describe(self):
        return f"{len(self.tasks)} tasks"
'''
_OWN_INIT = '''

class GemmManager(TaskManager):
    def __init__(self, tag, **kwargs):
        self.tag = tag
        super().__init__(**kwargs)

    def describe(self):
        return f"manager {self.tag}"
'''
_OVERRIDE = '''

class GemmManager(TaskManager):
    def setup_resources_and_tasks(self):
        self.ready = True
        super().setup_resources_and_tasks()
'''
_CALLS = {
    "plain": "    return GemmManager(tasks=tasks, resource_dependency_graph=graph, smem_allocator=alloc)",
    "own_init": "    return GemmManager(tag=1, tasks=tasks, resource_dependency_graph=graph, smem_allocator=alloc)",
    "override": "    return GemmManager(tasks=tasks, resource_dependency_graph=graph, smem_allocator=alloc)",
}
_CLASSES = {"plain": _PLAIN, "own_init": _OWN_INIT, "override": _OVERRIDE}


def _program(kind: str, old: str = None, new: str = None) -> str:
    src = BASE.replace("from ts_runtime.task_manager import TaskManager\n",
                       "from ts_runtime.task_manager import TaskManager\n" + _CLASSES[kind], 1)
    src = src.replace(_CALL, _CALLS[kind])
    if old is not None:
        assert src.count(old) == 1, old
        src = src.replace(old, new)
    return src


def _line(src: str, text: str) -> int:
    return next(i for i, line in enumerate(src.splitlines(), 1) if text in line)


def _errors(diags):
    return sorted({(d.code, d.range.line) for d in diags if d.severity is Severity.ERROR})


def _lint(src):
    from ts_lint.cli import check_source
    return check_source(src, "program.py").diagnostics


KINDS = sorted(_CLASSES)


@pytest.mark.parametrize("kind", KINDS)
def test_a_valid_program_with_a_manager_subclass_is_clean(kind):
    src = _program(kind)
    assert _errors(run_source(src)) == []
    assert _errors(_lint(src)) == []


@pytest.mark.parametrize("kind", KINDS)
def test_a_schedule_defect_is_found_through_a_manager_subclass(kind):
    # the consumer never releases smem: the producer's acquires run out of stages and the
    # consumer's next wait blocks; TS810 where the release is missing (after the read), as
    # without the subclass
    src = _program(kind, "            smem.release()\n", "")
    line = _line(src, "            v = smem.read_smem()")
    assert _errors(run_source(src)) == [("TS810", line)]
    assert _errors(_lint(src)) == [("TS810", line)]


@pytest.mark.parametrize("kind", KINDS)
def test_a_manager_level_defect_is_placed_at_the_subclass_construction(kind):
    # an empty dependency graph: TS350 at the keyword of the subclass's construction
    src = _program(kind, "resource_dependency_graph=graph,", "resource_dependency_graph={},")
    line = _line(src, "return GemmManager(")
    assert ("TS350", line) in _errors(run_source(src))
    assert ("TS350", line) in _errors(_lint(src))
    assert _errors(run_source(src)) == _errors(_lint(src))


def test_a_keyword_the_own_init_passes_on_must_bind_to_the_base():
    # `tasks=` dropped: the base's TypeError through super().__init__, at the construction
    src = _program("own_init", "tag=1, tasks=tasks, ", "tag=1, ")
    line = _line(src, "return GemmManager(")
    assert _errors(run_source(src)) == [("TS907", line)]
    assert _errors(_lint(src)) == [("TS907", line)]
    rt = [d.message for d in run_source(src) if d.code == "TS907"]
    assert rt == [d.message for d in _lint(src) if d.code == "TS907"]
    assert "missing a required argument: 'tasks'" in rt[0]


def test_the_subclass_own_init_is_bound_to_its_parameters():
    # `tag=` dropped: the subclass's own __init__ does not bind
    src = _program("own_init", "tag=1, tasks=tasks, ", "tasks=tasks, ")
    line = _line(src, "return GemmManager(")
    assert _errors(run_source(src)) == [("TS907", line)]
    assert _errors(_lint(src)) == [("TS907", line)]


def test_the_manager_lifecycle_is_followed_through_super():
    # TS903's INVALID example (run() before setup_resources_and_tasks()) with a subclass
    # whose own run() calls the base's: reported at that call, by both front ends
    from ts_runtime.rules.registry import get
    src = get("TS903").INVALID[0]
    assert src.count("    tm = TaskManager(") == 1 and "\ndef build():" in src
    src = src.replace("\ndef build():", '''
class LoggedManager(TaskManager):
    def run(self):
        self.runs = getattr(self, "runs", 0) + 1
        return super().run()


def build():''').replace("    tm = TaskManager(", "    tm = LoggedManager(")
    line = _line(src, "        return super().run()")
    assert ("TS903", line) in _errors(run_source(src))
    assert _errors(run_source(src)) == _errors(_lint(src))
