"""TS973 from ts-lint: a condition Python takes the truth of, certainly a DSL run-time value,
in a function the CuTe DSL does not rewrite (a work method or kernel helper without
@cute.jit): the DSL's PHASE_DYNAMIC_TO_STATIC_BOOL. The reference rejects each program
with a finding below with that error, and accepts each one asserted clean, except where a
comment says otherwise (checked with tests/oracle_batch.py)."""
import pytest

from ts_lint.api import lint_source
from ts_lint.rules_lint import _DSL_KERNEL, _PUT_JIT

SCHED = _DSL_KERNEL[_DSL_KERNEL.index("        if cutlass.const_expr(UNROLL > 1):"):_DSL_KERNEL.index("\n    task = Task(")]
LOOP = "        with domain_loop(0, 64, 1):\n            v = src.get()\n            dst.put(v=v)\n"
RANK_TEST = "        if self.rank == 0:\n            self.out[stage_info.loop_offset] = v\n"
SET_RANK = '''
    @producer_work(work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def set_rank(self, stage_info: StageInfo) -> None:
        self.rank = cute.arch.block_idx()[0] % 2
'''


def _put(body, extra=""):
    """The kernel with `Dst.put` a plain method (no @cute.jit) whose body is `body`."""
    return _DSL_KERNEL.replace(
        _PUT_JIT, "    @producer_work\n    def put(self, stage_info: StageInfo, v: cutlass.Int32) -> None:\n"
        + body + extra, 1)


def _with_rank(prog, sched, field="    rank: object = None\n"):
    p = prog.replace("from ts_runtime import consumer_work,", "from ts_runtime import WorkAttr, consumer_work,", 1)
    p = p.replace("    out: cute.Tensor = None\n", "    out: cute.Tensor = None\n" + field, 1)
    return p.replace(SCHED, sched, 1)


def _ts973(src):
    return [(d.range.line, d.range.column) for d in lint_source(src, "k.py") if d.code == "TS973"]


def _at(src, text):
    """(line, column) of `text`'s first character (0-based column, as the ranges are)."""
    i = src.index(text)
    return src[:i].count("\n") + 1, i - src.rfind("\n", 0, i) - 1


PROGRAMS = {
    # the thread / warp index, `elect_sync()`, through locals, `not`, `x if c else y`, `while`
    "not_thread": (_put("        if not cute.arch.thread_idx()[0]:\n            self.out[stage_info.loop_offset] = v\n"),
                   "cute.arch.thread_idx()[0]:"),
    "ifexp_warp": (_put("        w = cute.arch.warp_idx()\n"
                        "        self.out[stage_info.loop_offset] = v if w == 0 else v + 1\n"), "w == 0"),
    "while_tid": (_put("        i = cute.arch.thread_idx()[0]\n        while i < 3:\n            i = i + 32\n"
                       "        self.out[stage_info.loop_offset] = v\n"), "i < 3"),
    "elect_sync": (_put("        if prims.elect_sync():\n            self.out[stage_info.loop_offset] = v\n").replace(
        "import cutlass.cute as cute\n", "import cutlass.cute as cute\nfrom cutlass.experimental import primitives as prims\n",
        1), "prims.elect_sync()"),
    # an attribute a setup work call set from the block index before the call that tests it
    "rank_set_before": (_with_rank(_put(RANK_TEST, SET_RANK), "        dst.set_rank()\n" + LOOP), "self.rank == 0"),
    # ... or that the resource's construction in the kernel set
    "rank_from_init": (_with_rank(_put(RANK_TEST), LOOP, field="    rank: object = None\n\n"
                                  "    def __post_init__(self) -> None:\n"
                                  "        self.rank = cute.arch.block_idx()[0] % 2\n"), "self.rank == 0"),
    # a plain helper the kernel calls, with the warp index
    "kernel_helper": (_DSL_KERNEL.replace("    tm.setup_resources_and_tasks()\n    tm.run()\n",
                                          "    _go(tm, cute.arch.warp_idx())\n", 1).replace(
        "@cute.kernel\ndef copy_kernel", "def _go(tm, warp):\n    tm.setup_resources_and_tasks()\n    if warp == 0:\n"
        "        tm.run()\n\n\n@cute.kernel\ndef copy_kernel", 1), "warp == 0"),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_reported_at_the_condition(name):
    src, text = PROGRAMS[name]
    assert _ts973(src) == [_at(src, text)]


def test_the_fix_decorates_the_function():
    src, _ = PROGRAMS["rank_set_before"]
    d = next(d for d in lint_source(src, "k.py") if d.code == "TS973")
    (edit,) = d.fix.edits
    assert d.fix.applicability == "unsafe" and edit.new_text == "    @cute.jit\n"
    assert edit.range.line == _at(src, "    def put(")[0] and edit.range.column == 0
    fixed = src.replace("    @producer_work\n    def put(", "    @producer_work\n    @cute.jit\n    def put(", 1)
    assert _ts973(fixed) == []


CLEAN = {
    # the loop offset of a call in the schedule's head is a Python int
    "head_loop_offset": _put("        if stage_info.loop_offset == 0:\n            self.out[0] = v\n").replace(
        SCHED, "        v = src.get()\n        dst.put(v=v)\n        with domain_loop(0, 64, 1):\n"
        "            v = src.get()\n", 1),
    "identity_test": _put("        tx = cute.arch.thread_idx()[0]\n        if tx is None:\n            self.out[0] = v\n"
                          "        self.out[stage_info.loop_offset] = v\n"),
    "rebound_to_a_constant": _put("        x = cute.arch.thread_idx()[0]\n        x = 3\n        if x == 3:\n"
                                  "            self.out[stage_info.loop_offset] = v\n"),
    "kernel_helper_python_int": PROGRAMS["kernel_helper"][0].replace("    _go(tm, cute.arch.warp_idx())\n",
                                                                     "    _go(tm, 0)\n", 1),
    "compile_time_condition": _put("        if cutlass.const_expr(UNROLL > 1):\n"
                                   "            self.out[stage_info.loop_offset] = v\n"),
    # not judged, though the reference rejects them: the set comes after the test
    # (CONTAINER_STRUCTURE_CHANGED), the attribute holds `cutlass.Int32(0)` (a constant
    # ts-lint does not claim is a run-time value), the helper is a jit function whose
    # run-time `if` wraps `tm.run()` (TYPE_DYNAMIC_EXPR_UNSUPPORTED)
    "rank_set_after": _with_rank(_put(RANK_TEST, SET_RANK), LOOP + "        dst.set_rank()\n"),
    "rank_constant": _with_rank(_put(RANK_TEST), LOOP, field="    rank: object = None\n\n"
                                "    def __post_init__(self) -> None:\n        self.rank = cutlass.Int32(0)\n"),
    "kernel_helper_jit": PROGRAMS["kernel_helper"][0].replace("def _go(tm, warp):", "@cute.jit\ndef _go(tm, warp):", 1),
}


@pytest.mark.parametrize("name", sorted(CLEAN))
def test_not_reported(name):
    assert _ts973(CLEAN[name]) == []


def test_a_host_side_build_is_not_judged():
    # the same work method, with a TaskManager built on the host (no kernel is traced)
    from ts_lint.rules_lint import _VALID
    src = _VALID.replace("    def store(self, stage_info, smem_val):\n        pass\n",
                         "    def store(self, stage_info, smem_val):\n        if stage_info.loop_offset < 4:\n"
                         "            pass\n", 1)
    assert src != _VALID and _ts973(src) == []
