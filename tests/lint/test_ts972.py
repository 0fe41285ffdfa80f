"""TS972 from ts-lint: `cute.compile(f, ...)` of a function without @cute.jit (the DSL's
CALL_MISSING_JIT_DECORATOR), reported at the argument, the run stopping there. The
reference rejects the program of each finding below with CALL_MISSING_JIT_DECORATOR
(the front end makes no difference) and accepts the one under `try`."""
from ts_lint.api import lint_source
from ts_lint.rules_lint import _COMPILE_NO_JIT, _DSL_KERNEL


def _line(src, text):
    return src[:src.index(text)].count("\n") + 1


def _ts972(src):
    return [(d.range.line, d.range.column, [r.range.line for r in d.related])
            for d in lint_source(src, "k.py") if d.code == "TS972"]


def test_the_host_function_without_its_decorator():
    line = _line(_COMPILE_NO_JIT, "    return cute.compile(launch,")
    assert _ts972(_COMPILE_NO_JIT) == [(line, len("    return cute.compile("), [_line(_COMPILE_NO_JIT, "def launch(")])]


def test_any_front_end():
    src = _COMPILE_NO_JIT.replace("cute.compile(launch,", "cute.compile[cute.FrontendNext](launch,", 1)
    assert [x[0] for x in _ts972(src)] == [_line(src, "    return cute.compile[")]


def test_the_decorated_function_and_other_decorators_are_not_judged():
    assert _ts972(_DSL_KERNEL) == []
    # a decorator may return a jit function: ts-lint does not judge a decorated def
    src = _COMPILE_NO_JIT.replace("def launch(out: cute.Tensor, stream):\n",
                                  "@my_wrapper\ndef launch(out: cute.Tensor, stream):\n", 1).replace(
        "\n\n@cute.kernel\n", "\n\ndef my_wrapper(f):\n    return cute.jit(f)\n\n\n@cute.kernel\n", 1)
    assert _ts972(src) == []


def test_not_under_a_try_with_a_handler():
    src = _COMPILE_NO_JIT.replace("    return cute.compile(launch,  # expect: TS972\n",
                                  "    try:\n        return cute.compile(launch,\n", 1).replace(
        "make_fake_stream())\n", "make_fake_stream())\n    except Exception:\n        return None\n")
    assert "except Exception" in src and _ts972(src) == []


def test_the_run_stops_at_the_compile():
    # nothing of the kernel is traced: an error inside it is not reached
    src = _COMPILE_NO_JIT.replace("    tm.run()\n", "    tm.run()\n    undefined_name\n", 1)
    codes = [d.code for d in lint_source(src, "k.py") if d.severity.name == "ERROR"]
    assert codes == ["TS972"]
    assert [d.code for d in lint_source(src.replace("def launch(", "@cute.jit\ndef launch(", 1), "k.py")
            if d.severity.name == "ERROR"] == ["TS962"]
