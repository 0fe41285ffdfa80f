"""TS974 from ts-lint: a call of the program's own function whose arguments do not bind
(Python's TypeError; the DSL's ARG_BIND_FAILED for a @cute.jit / @cute.kernel function),
at the call, the run stopping there. The reference rejects the program of each finding
below (TypeError, or DSLUserCodeError ARG_BIND_FAILED for the kernel) and accepts each
one of CLEAN (checked with tests/oracle_batch.py)."""
import pytest

from ts_lint.api import lint_source
from ts_lint.rules_lint import _DSL_KERNEL, _HELPER_ALL_ARGS, _KERNEL_EXTRA_ARG

CALL = "    tm = make_manager([task], {dst: [src]})\n"
assert CALL in _HELPER_ALL_ARGS


def _call(new):
    return _HELPER_ALL_ARGS.replace(CALL, new, 1)


def _ts974(src):
    return [(d.range.line, d.message) for d in lint_source(src, "k.py") if d.code == "TS974"]


def _line(src, text):
    return src[:src.index(text)].count("\n") + 1


_METHOD = _HELPER_ALL_ARGS.replace(
    "def make_manager(tasks, graph):\n    return TaskManager(tasks=tasks, resource_dependency_graph=graph)\n",
    "class Builder:\n    def make(self, tasks, graph):\n"
    "        return TaskManager(tasks=tasks, resource_dependency_graph=graph)\n", 1).replace(
    CALL, "    tm = Builder().make([task])\n", 1)

FOUND = {
    "kernel_extra_argument": (_KERNEL_EXTRA_ARG.replace("  # expect: TS974", ""), "    copy_kernel(out, stream)",
                              "copy_kernel() takes 1 positional argument but 2 were given: the CuTe DSL raises "
                              "DSLUserCodeError (ARG_BIND_FAILED, the arguments do not match the function signature) "
                              "when it compiles this call"),
    "missing": (_call("    tm = make_manager([task])\n"), "    tm = make_manager(",
                "make_manager() missing 1 required positional argument: 'graph': Python raises TypeError here"),
    "unexpected_keyword": (_call("    tm = make_manager([task], grph={dst: [src]})\n"), "    tm = make_manager(",
                           "make_manager() got an unexpected keyword argument 'grph': Python raises TypeError here"),
    "multiple_values": (_call("    tm = make_manager([task], {dst: [src]}, tasks=[task])\n"), "    tm = make_manager(",
                        "make_manager() got multiple values for argument 'tasks': Python raises TypeError here"),
    "method": (_METHOD, "    tm = Builder().make(",
               "Builder.make() missing 1 required positional argument: 'graph': Python raises TypeError here"),
}


@pytest.mark.parametrize("name", sorted(FOUND))
def test_reported_at_the_call(name):
    src, at, message = FOUND[name]
    assert _ts974(src) == [(_line(src, at), message)]


def test_the_run_stops_at_the_call():
    src = _call("    tm = make_manager([task])\n    undefined_name\n")
    assert [d.code for d in lint_source(src, "k.py") if d.severity.name == "ERROR"] == ["TS974"]


CLEAN = {
    "binds": _HELPER_ALL_ARGS,
    "keywords": _call("    tm = make_manager(graph={dst: [src]}, tasks=[task])\n"),
    "star_arguments": _call("    parts = ([task], {dst: [src]})\n    tm = make_manager(*parts)\n"),
    "default": _HELPER_ALL_ARGS.replace("def make_manager(tasks, graph):", "def make_manager(tasks, graph=None):", 1)
    .replace(CALL, "    tm = make_manager([task], {dst: [src]})\n", 1),
}


@pytest.mark.parametrize("name", sorted(CLEAN))
def test_not_reported(name):
    assert _ts974(CLEAN[name]) == []


def test_a_decorated_function_is_not_judged():
    # a decorator may change the signature (this one does not: the reference's TypeError)
    src = _call("    tm = make_manager([task])\n").replace(
        "def make_manager(tasks, graph):", "def traced(f):\n    return f\n\n\n@traced\ndef make_manager(tasks, graph):", 1)
    assert "@traced" in src and _ts974(src) == []
