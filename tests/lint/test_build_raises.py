"""TS968: a `raise` (or failing `assert`) the build certainly reaches, in the TS code an
entry point runs with its own values. The reference fails with that exception (for the
probe shape of a schedule factory whose mode constant was misspelt: `ValueError: unknown
mode cpy`, and a `match` default reached with a misspelt pipeline kind)."""
from ts_runtime.diagnostics import Severity
from ts_lint.api import lint_source
from ts_lint.rules_lint import _VALID

_FACTORY = '''
MODE = "{MODE}"


def pick(load, store):
    match MODE:
        case "copy":
            return load
        case "swap":
            return store
        case _:
            raise ValueError(f"unknown mode {{MODE}}")


'''


def _program(mode: str, wrap: str = "") -> str:
    src = _VALID.replace("def build(stages=2, consumer=128):\n", _FACTORY.format(MODE=mode)
                         + "def build(stages=2, consumer=128):\n", 1)
    old = "schedule=load_schedule(inp, smem)"
    assert old in src
    call = "pick(load_schedule, store_schedule)(inp, smem)"
    if wrap:
        call = wrap.format(call=call)
    return src.replace(old, f"schedule={call}", 1)


def _errors(src):
    return sorted((d.code, d.range.line) for d in lint_source(src, "kernel.py") if d.severity is Severity.ERROR)


def _line(src, text):
    return src[:src.index(text)].count("\n") + 1


def test_a_match_default_reached_by_the_build():
    src = _program("cpy")
    assert _errors(src) == [("TS968", _line(src, "            raise ValueError"))]


def test_the_valid_mode_builds():
    assert _errors(_program("copy")) == []


def test_not_judged_in_the_main_block_run():
    src = _program("cpy").replace("def build(stages=2, consumer=128):", "def build(stages, consumer=128):", 1)
    src += '\n\nif __name__ == "__main__":\n    build(2)\n'
    assert ("TS968", _line(src, "            raise ValueError")) not in _errors(src)


def test_a_condition_ts_lint_cannot_decide_is_not_judged():
    src = _program("cpy").replace('MODE = "cpy"', "import os\nMODE = os.environ['TS_MODE']", 1)
    assert _errors(src) == []


def test_a_host_drivers_own_input_check_is_not_judged():
    """A tutorial's `run()` asserts its sizes before it builds anything (`assert n_elements
    % tile_n == 0`): the kernel itself compiles with the reference (its harness compiles
    the host function directly), so this is not the kernel build failing."""
    src = _program("copy") + '''

TILE = 127


def run(n_elements: int = 1024):
    assert n_elements % TILE == 0, "n_elements must be divisible by the tile"
    return build()
'''
    assert _errors(src) == []
