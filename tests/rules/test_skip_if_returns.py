"""TS518: a `skip_if` predicate written with `def` whose body never returns a value, in
every form work_tile_loop accepts; the same code and line from the runtime and ts-lint."""
import pytest

from ts_runtime.rules.persistent import skip_program
from ts_runtime.testing import codes_and_lines, run_program

from ts_lint.api import lint_source

QUEUE = "    def skip_empty(self, work_tile):\n        return False\n"


def _program(skip_if: str, body: str) -> str:
    """skip_program with TileQueue given a method `skip_quiet` whose body is `body`."""
    src = skip_program(skip_if)
    assert QUEUE in src
    return src.replace(QUEUE, QUEUE + "\n    def skip_quiet(self, work_tile):\n" + body, 1)


def _both(src, tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(src)
    lint = {(d.code, d.range.line) for d in lint_source(src, str(path))}
    return lint, codes_and_lines(run_program(str(path)))


def _def_line(src):
    return src[:src.index("def skip_quiet")].count("\n") + 1


def test_a_method_without_return_value(tmp_path):
    src = _program("TileQueue.skip_quiet", "        first = work_tile == 0\n")
    lint, runtime = _both(src, tmp_path)
    assert lint == runtime == {("TS518", _def_line(src))}


@pytest.mark.parametrize("body", ["        return work_tile == 0\n",
                                  "        if work_tile:\n            return True\n        return False\n"])
def test_a_method_that_returns_is_accepted(body, tmp_path):
    lint, runtime = _both(_program("TileQueue.skip_quiet", body), tmp_path)
    assert lint == runtime == set()


def test_a_bare_return_is_no_value(tmp_path):
    src = _program("TileQueue.skip_quiet", "        if work_tile:\n            return\n")
    lint, runtime = _both(src, tmp_path)
    assert lint == runtime == {("TS518", _def_line(src))}


def test_a_lambda_is_not_judged(tmp_path):
    lint, runtime = _both(skip_program("lambda tile: None"), tmp_path)
    assert lint == runtime == set()


def test_only_when_the_predicate_is_otherwise_valid(tmp_path):
    # an unbound predicate of the wrong arity is TS515, whatever it returns
    src = _program("TileQueue.skip_quiet", "        first = work_tile == 0\n").replace(
        "def skip_quiet(self, work_tile):", "def skip_quiet(self):", 1)
    lint, runtime = _both(src, tmp_path)
    assert {c for c, _ in lint} == {c for c, _ in runtime} == {"TS515"}
