"""TS967: `cutlass.range_constexpr(...)` run where the CuTe DSL's preprocessor does not
unroll it. The reference compiles the `@cute.jit` / `@cute.kernel` function's source
(nested functions included) with the loop unrolled; a schedule defined at module level, or
a plain helper, runs `range_constexpr` itself and the compile fails with
`DSLRuntimeError: range_constexpr should be preprocessed by preprocessor` (seen on the
reference for each INVALID shape here: a module-level schedule, one returned by a plain
factory, a schedule method of a plain class)."""
from ts_runtime.diagnostics import Severity
from ts_lint.api import lint_source
from ts_lint.rules_lint import _DSL_KERNEL

_MODULE_SCHEDULE = '''
@schedule
def copy_module(src: Src, dst: Dst) -> None:
    with domain_loop(0, 64, 1):
        for _ in cutlass.range_constexpr(1):{MARK}
            v = src.get()
            dst.put(v=v)


'''


def _program(mark: str = "", factory: str = "") -> str:
    src = _DSL_KERNEL.replace("@cute.kernel\ndef copy_kernel(out: cute.Tensor):\n",
                              _MODULE_SCHEDULE.replace("{MARK}", mark) + factory
                              + "@cute.kernel\ndef copy_kernel(out: cute.Tensor):\n", 1)
    return src.replace("schedule=copy(src, dst))", "schedule=make()(src, dst))", 1)


def _errors(src):
    return sorted((d.code, d.range.line) for d in lint_source(src, "kernel.py") if d.severity is Severity.ERROR)


def _line(src, text):
    return src[:src.index(text)].count("\n") + 1


def test_a_module_level_schedule_returned_by_a_plain_factory():
    src = _program(factory="def make():\n    return copy_module\n\n\n")
    assert _errors(src) == [("TS967", _line(src, "        for _ in cutlass.range_constexpr(1):"))]


def test_a_jit_factory_defining_the_schedule_is_preprocessed():
    nested = "".join("    " + line + "\n" if line else "\n" for line in _MODULE_SCHEDULE.strip("\n").replace(
        "copy_module", "copy_inner").replace("{MARK}", "").splitlines())
    src = _program(factory="@cute.jit\ndef make():\n" + nested + "    return copy_inner\n\n\n")
    # the module-level copy_module is never called: only the jit factory's schedule runs
    assert _errors(src) == []


def test_not_judged_under_a_try_with_a_handler():
    src = _program(factory="def make():\n    return copy_module\n\n\n").replace(
        "schedule=make()(src, dst))", "schedule=_guarded(src, dst))", 1).replace(
        "@cute.kernel\ndef copy_kernel", "def _guarded(src, dst):\n    try:\n        return make()(src, dst)\n"
        "    except Exception:\n        return None\n\n\n@cute.kernel\ndef copy_kernel", 1)
    assert ("TS967", _line(src, "        for _ in cutlass.range_constexpr(1):")) not in _errors(src)


_PUT_JIT = "    @producer_work\n    @cute.jit\n    def put(self, stage_info: StageInfo, v: cutlass.Int32) -> None:\n"
_PUT_LOOP = _DSL_KERNEL.replace(
    _PUT_JIT + "        self.out[stage_info.loop_offset] = v\n",
    "    @producer_work\n    def put(self, stage_info: StageInfo, v: cutlass.Int32) -> None:\n"
    "        for _ in cutlass.range_constexpr(1):\n            self.out[stage_info.loop_offset] = v\n", 1)


def test_a_work_method_without_jit():
    # the kernel traces `put` as plain Python (the reference: the same DSLRuntimeError,
    # reported as an internal DSL error)
    assert _PUT_LOOP != _DSL_KERNEL
    assert _errors(_PUT_LOOP) == [("TS967", _line(_PUT_LOOP, "        for _ in cutlass.range_constexpr(1):"))]
    assert _errors(_PUT_LOOP.replace("    @producer_work\n    def put(", "    @producer_work\n    @cute.jit\n    def put(",
                                     1)) == []


def test_the_main_blocks_run_is_judged():
    # the kernel compiled only by the script's own run (argparse defaults)
    src = _program(factory="def make():\n    return copy_module\n\n\n").replace("def build():", "def main():", 1) \
        + '\n\nif __name__ == "__main__":\n    main()\n'
    assert _errors(src) == [("TS967", _line(src, "        for _ in cutlass.range_constexpr(1):"))]
