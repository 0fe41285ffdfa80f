"""TS969: a barrier primitive's count that PTX rejects, in the kernel being built
(ts_lint.extract.tsapi._barrier_count_check)."""
from ts_lint.api import lint_source
from ts_lint.rules_lint import _BARRIER_OK

CALL = "    prims.barrier_cta_sync(1, thread_count=SYNC_THREADS)\n"


def _codes(src):
    return [(d.code, d.range.line) for d in lint_source(src, "k.py")]


def _line(src, text):
    return src[:src.index(text)].count("\n") + 1


def _with(call, threads="32"):
    return _BARRIER_OK.replace("SYNC_THREADS = 32\n", f"SYNC_THREADS = {threads}\n", 1).replace(CALL, call, 1)


def test_a_count_of_whole_warps_is_accepted():
    assert _codes(_with(CALL, "4 * 32")) == []


def test_a_count_that_is_not_whole_warps():
    src = _with(CALL, "4 * 32 + 1")
    assert _codes(src) == [("TS969", _line(src, CALL.strip()))]


def test_cute_arch_barrier_and_mbarrier_init():
    src = _with("    cute.arch.barrier(barrier_id=1, number_of_threads=SYNC_THREADS)\n", "48")
    assert _codes(src) == [("TS969", _line(src, "cute.arch.barrier("))]
    src = _with("    prims.mbarrier_init(None, SYNC_THREADS - 32)\n")
    assert _codes(src) == [("TS969", _line(src, "prims.mbarrier_init("))]
    assert _codes(_with("    prims.mbarrier_init(None, SYNC_THREADS)\n")) == []


def test_an_unknown_count_is_not_judged():
    src = _with("    prims.barrier_cta_sync(1, thread_count=out.shape[0] + 1)\n")
    assert _codes(src) == []


def test_a_count_in_a_branch_on_the_warp_is_judged():
    # `if task.is_selected():` and `if prims.elect_sync():` are run-time branches the DSL
    # compiles both ways: the call in them is built
    src = _with("    if task.is_selected():\n        if prims.elect_sync():\n"
                "            prims.mbarrier_init(None, SYNC_THREADS - 32)\n")
    assert _codes(src) == [("TS969", _line(src, "prims.mbarrier_init("))]


# ---------------------------------------------------------------- in a work method's body
# `tm.run()` in the kernel traces every work method the schedules call, both branches of a
# run-time `if` included: a barrier there is built (workbody._Body._barrier)
PUT = "        self.out[stage_info.loop_offset] = v\n"


def _in_put(body, threads="33", extra=""):
    return _with(CALL, "32").replace(CALL, "", 1).replace("SYNC_THREADS = 32\n", f"SYNC_THREADS = {threads}\n{extra}",
                                                         1).replace(PUT, PUT + body, 1)


def test_a_barrier_in_a_work_method():
    src = _in_put("        prims.barrier_cta_sync(1, thread_count=SYNC_THREADS)\n")
    assert _codes(src) == [("TS969", _line(src, "prims.barrier_cta_sync("))]
    assert _codes(_in_put("        prims.barrier_cta_sync(1, thread_count=SYNC_THREADS)\n", "64")) == []


def test_a_barrier_under_a_run_time_if_in_a_work_method():
    # the split-k tutorial's epilogue: `if subtile_idx < subtile_cnt:` around the sync
    src = _in_put("        if v > 0:\n            pass\n        else:\n"
                  "            prims.barrier_cta_sync(1, thread_count=SYNC_THREADS)\n")
    assert _codes(src) == [("TS969", _line(src, "prims.barrier_cta_sync("))]


def test_a_barrier_in_a_folded_false_branch_is_not_judged():
    # `cutlass.const_expr(False)`: the DSL does not trace the branch
    src = _in_put("        if cutlass.const_expr(USE_SYNC):\n"
                  "            prims.barrier_cta_sync(1, thread_count=SYNC_THREADS)\n", extra="USE_SYNC = False\n")
    assert _codes(src) == []
    src = src.replace("USE_SYNC = False\n", "USE_SYNC = True\n", 1)
    assert _codes(src) == [("TS969", _line(src, "prims.barrier_cta_sync("))]


def test_a_barrier_in_a_helper_the_work_method_calls():
    src = _in_put("        self._sync()\n\n    @cute.jit\n    def _sync(self):\n"
                  "        prims.barrier_cta_sync(1, thread_count=SYNC_THREADS)\n")
    assert _codes(src) == [("TS969", _line(src, "prims.barrier_cta_sync("))]


def test_a_work_method_the_kernel_does_not_build_is_not_judged():
    # a TaskManager made by a host `build()` (no kernel compiled): `run()` is never traced
    from ts_lint.rules_lint import _VALID
    src = _VALID.replace("def build(stages=2, consumer=128):",
                         "SYNC_THREADS = 33\n\n\ndef build(stages=2, consumer=128):", 1).replace(
        "    def store(self, stage_info, smem_val):\n        pass\n",
        "    def store(self, stage_info, smem_val):\n        prims.barrier_cta_sync(1, thread_count=SYNC_THREADS)\n",
        1).replace("from dataclasses import dataclass\n",
                   "from dataclasses import dataclass\nfrom cutlass.experimental import primitives as prims\n", 1)
    assert "barrier_cta_sync" in src
    assert [c for c in _codes(src) if c[0] == "TS969"] == []
