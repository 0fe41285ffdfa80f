"""TS962 from ts-lint: a read that raises NameError in code the kernel build runs (outside
@schedule bodies, which have TS136), reported where the run reaches it."""
import textwrap

import pytest

from ts_lint.api import lint_source

KERNEL = '''
import cutlass
import cutlass.cute as cute
from ts_runtime.memory import SmemAllocator


@cute.kernel
def kernel(n: cutlass.Constexpr[int]):
    smem = SmemAllocator()           # TS code: TS962 judges TS functions and their callers
    stages = 2
{body}


@cute.jit
def host():
    kernel(4).launch(grid=(1, 1, 1), block=(128, 1, 1))


def helper(x):
    return undefined_everywhere + x       # never called: not judged


@cute.kernel
def plain_kernel():
    return undefined_too                  # not TS code: other linters' business


@cute.jit
def plain_host():
    plain_kernel().launch(grid=(1, 1, 1), block=(32, 1, 1))


if __name__ == "__main__":
    cute.compile(host)
    cute.compile(plain_host)
'''


def ts962(body):
    src = KERNEL.format(body=textwrap.indent(textwrap.dedent(body), "    "))
    lines = src.splitlines()
    return [(lines[d.range.line - 1].strip(), d.message) for d in lint_source(src, "k.py")
            if d.code == "TS962"]


def test_a_deleted_assignment_in_a_kernel_body():
    assert ts962('''
        allocator.add_resource(None)
        allocator.compute_layout()
    ''') == [("allocator.add_resource(None)",
              "name 'allocator' is not defined in 'kernel': Python raises NameError here")]


def test_a_read_before_the_assignment():
    assert ts962('''
        depth = stages * width
        width = 4
    ''') == [("depth = stages * width",
              "local variable 'width' is read before it is assigned in 'kernel': Python raises NameError here")]


def test_what_may_not_raise_is_not_reported():
    assert ts962('''
        if n > 2:
            extra = 1
        total = stages + extra          # bound when n > 2 (n is 4): not certain either way
        try:
            x = missing_name
        except NameError:
            x = 0
        if cutlass.const_expr(n < 0):
            y = never_bound             # the branch is not taken
        allocator = SmemAllocator()
        allocator.compute_layout()
    ''') == []


def test_the_run_stops_at_the_failing_read():
    # Python stops at the first NameError: the second unbound read is never reached
    assert [m for _, m in ts962('''
        a = first_missing
        b = second_missing
    ''')] == ["name 'first_missing' is not defined in 'kernel': Python raises NameError here"]


def test_a_module_constant_bound_nowhere():
    src = textwrap.dedent('''
        import os
        NUM_LOAD_WARPS = 1
        if os.environ.get("WIDE"):
            EXTRA = 2
        WIDTH = EXTRA if os.environ.get("WIDE") else 1     # bound in a branch: not certain
        class Cfg:
            STAGES = 4
            BYTES = STAGES * 1024
        try:
            DEBUG = DEBUG_FLAG
        except NameError:
            DEBUG = False
        TOTAL = NUM_STORE_WARPS + NUM_LOAD_WARPS
    ''')
    got = [(d.code, d.range.line, d.range.column, d.message) for d in lint_source(src, "m.py")]
    assert got == [("TS962", 14, 8, "name 'NUM_STORE_WARPS' is not defined: Python raises NameError here, "
                                   "when the module is imported")]


def test_a_work_method_the_schedule_calls():
    from ts_runtime.rules._programs import copy_program
    src = copy_program()
    body = "        return stage_info.loop_offset\n"
    assert body in src
    bad = src.replace(body, "        return base + stage_info.loop_offset\n", 1)
    line = bad.splitlines().index("        return base + stage_info.loop_offset") + 1
    got = [(d.code, d.range.line, d.message) for d in lint_source(bad, "p.py") if d.code == "TS962"]
    assert got == [("TS962", line, "name 'base' is not defined in work method 'Src.get_item': Python raises "
                                   "NameError when the kernel is compiled")]
    # a work method no schedule calls is not compiled with the kernel
    assert "get_flag()" not in src
    unused = src.replace("        return True\n", "        return missing_flag\n", 1)
    assert unused != src and [d for d in lint_source(unused, "p.py") if d.code == "TS962"] == []


def test_a_read_inside_a_run_time_if_is_reached():
    # the DSL traces both branches of an `if` on a run-time value: a read there is reached
    warp = "        warp = cute.arch.warp_idx()\n"
    assert ts962(warp + '''
        if warp == 0:
            cols = num_cols * 2
    ''') == [("cols = num_cols * 2", "name 'num_cols' is not defined in 'kernel': Python raises NameError here")]
    # an `if` ts-lint decides runs one branch only, as Python does
    assert ts962('''
        if cutlass.const_expr(n > 8):
            cols = num_cols * 2
        allocator = SmemAllocator()
    ''') == []


def test_a_name_only_one_branch_of_a_run_time_if_binds():
    src = '''
        warp = cute.arch.warp_idx()
        if warp == 0:
            addr = cutlass.Int32(1)
        ptr = addr + 1
    '''
    got = ts962(src)
    assert [line for line, _ in got] == ["ptr = addr + 1"]
    assert "only one branch of the run-time `if`" in got[0][1] and "SCOPE_UNBOUND_NAME_IN_TRACE" in got[0][1]
    # bound before the `if`, bound by both branches, or never read after it: no finding
    assert ts962(src.replace("        warp = cute.arch.warp_idx()\n",
                             "        warp = cute.arch.warp_idx()\n        addr = cutlass.Int32(0)\n")) == []
    assert ts962(src.replace("        ptr = addr + 1\n",
                             "        else:\n            addr = cutlass.Int32(2)\n        ptr = addr + 1\n")) == []
    assert ts962(src.replace("        ptr = addr + 1\n", "        ptr = 1\n")) == []


def test_a_helper_method_a_work_method_calls():
    from ts_runtime.rules._programs import copy_program
    src = copy_program()
    body = "        return stage_info.loop_offset\n"
    helper = ("        return self._offset(stage_info)\n\n"
              "    def _offset(self, stage_info):\n"
              "        if stage_info.loop_offset > 0:\n"
              "            return base + stage_info.loop_offset\n"
              "        return stage_info.loop_offset\n")
    bad = src.replace(body, helper, 1)
    line = bad.splitlines().index("            return base + stage_info.loop_offset") + 1
    got = [(d.code, d.range.line, d.message) for d in lint_source(bad, "p.py") if d.code == "TS962"]
    assert got == [("TS962", line, "name 'base' is not defined in 'Src._offset' (called by work method "
                                   "'Src.get_item'): Python raises NameError when the kernel is compiled")]
    # a local the branch may not bind, in code ts-lint does not run: not judged
    local = bad.replace("            return base + stage_info.loop_offset\n",
                        "            base = 1\n        if stage_info.loop_offset > 1:\n"
                        "            return base + stage_info.loop_offset\n", 1)
    assert [d for d in lint_source(local, "p.py") if d.code == "TS962"] == []


def test_a_work_method_loop_whose_count_is_a_local_constant():
    # `elems = TILE // 32` then `for i in range(elems)`: the body certainly runs (4 times),
    # so its misspelt name is a NameError when the kernel is compiled; with a zero count
    # the body never runs
    from ts_runtime.rules._programs import copy_program
    src = copy_program()
    body = "        return stage_info.loop_offset\n"
    loop = ("        elems = TILE // 32\n        acc = 0\n        for i in range(elems):\n"
            "            acc = acc + valu\n        return stage_info.loop_offset + acc\n")
    bad = src.replace(body, loop, 1) + "\nTILE = 128\n"
    line = bad.splitlines().index("            acc = acc + valu") + 1
    got = [(d.code, d.range.line, d.message) for d in lint_source(bad, "p.py") if d.code == "TS962"]
    assert got == [("TS962", line, "name 'valu' is not defined in work method 'Src.get_item': Python raises "
                                   "NameError when the kernel is compiled")]
    never = bad.replace("TILE = 128", "TILE = 16")
    assert [d for d in lint_source(never, "p.py") if d.code == "TS962"] == []


_ANNOTATED = '''\
from dataclasses import dataclass, field
import cutlass
from ts_runtime.resources import MemoryResource, StageInfo, TaskLocalVariable


@dataclass(kw_only=True)
class Res(MemoryResource):
    coord: cutlass.Constexpr[TaskLocalVariable] = field(init=False, default=None)

    def load(self, stage_info: StageInfo) -> cutlass.Int32:
        return stage_info.loop_offset


def helper(res: Res, n: "NotYetDefined" = 0) -> tuple[int, int]:
    def inner(x: AlsoUnbound):          # evaluated only when helper runs: not judged
        return x
    return (n, n)
'''


@pytest.mark.parametrize("old,new,name", [
    ("coord: cutlass.Constexpr", "coord: cutlas.Constexpr", "cutlas"),
    ("stage_info: StageInfo)", "stage_info: StageInf)", "StageInf"),
    (") -> tuple[int, int]:", ") -> tuple[int, intt]:", "intt"),
])
def test_an_annotation_evaluated_at_import_that_reads_an_unbound_name(old, new, name):
    # class-level variable annotations and the parameter / return annotations of functions
    # defined at module or class level are evaluated when the module is imported
    assert _ANNOTATED.count(old) == 1
    src = _ANNOTATED.replace(old, new)
    line = next(i for i, t in enumerate(src.splitlines(), 1) if new in t)
    got = [(d.code, d.range.line, d.message) for d in lint_source(src, "m.py") if d.severity.name == "ERROR"]
    assert got == [("TS962", line, f"name '{name}' is not defined: Python raises NameError here, when the module "
                                   "is imported")]
    # with postponed evaluation, annotations are strings: nothing is evaluated
    assert [d for d in lint_source("from __future__ import annotations\n" + src, "m.py")
            if d.severity.name == "ERROR"] == []


def test_annotations_that_bind_are_clean():
    assert [d for d in lint_source(_ANNOTATED, "m.py") if d.severity.name == "ERROR"] == []


def test_a_work_method_loop_whose_count_is_an_item_of_a_tuple_constant():
    # `num_k_blocks = TILER[2] // INST[2]` (module tuples): the loop runs twice
    from ts_runtime.rules._programs import copy_program
    src = copy_program()
    body = "        return stage_info.loop_offset\n"
    loop = ("        num_k_blocks = TILER[2] // INST[2]\n        acc = 0\n"
            "        for k in range(num_k_blocks):\n            acc = acc + inc_bytes\n"
            "        return stage_info.loop_offset + acc\n")
    bad = src.replace(body, loop, 1) + "\nTILER = (128, 256, 64)\nINST = (128, 256, 32)\n"
    line = bad.splitlines().index("            acc = acc + inc_bytes") + 1
    got = [(d.code, d.range.line) for d in lint_source(bad, "p.py") if d.code == "TS962"]
    assert got == [("TS962", line)]
    # an index out of range, or a base that is not a known tuple, gives no count
    for tail in ("\nTILER = (128, 256)\nINST = (128, 256, 32)\n",
                 "\nimport random\nTILER = (128, 256, random.randint(0, 64))\nINST = (128, 256, 32)\n"):
        assert [d for d in lint_source(src.replace(body, loop, 1) + tail, "p.py") if d.code == "TS962"] == []



def test_a_resource_method_the_allocator_runs():
    # get_smem_requirements() runs when the allocator takes the resource: a misspelt name
    # there is a NameError while the kernel is built
    from ts_lint.rules_lint import _VALID
    body = "    def get_smem_requirements(self):\n        return [self._a]\n"
    assert body in _VALID
    bad = _VALID.replace(body, "    def get_smem_requirements(self):\n        return [slf._a]\n", 1)
    line = bad.splitlines().index("        return [slf._a]") + 1
    got = [(d.code, d.range.line, d.message) for d in lint_source(bad, "p.py") if d.severity.name == "ERROR"]
    assert got == [("TS962", line, "name 'slf' is not defined in 'get_smem_requirements': Python raises "
                                   "NameError here")]


def test_a_local_read_in_a_run_time_if_of_a_jit_work_method():
    # a @cute.jit work method: the DSL traces both branches of an `if` on the thread index,
    # so a local not yet bound there is read (the reference: NameError when the kernel is
    # compiled, for both programs); the same read under a Python condition is not judged
    from ts_lint.rules_lint import _DSL_KERNEL, _PUT_JIT
    body = "        self.out[stage_info.loop_offset] = v\n"

    def put(src):
        return _DSL_KERNEL.replace(_PUT_JIT, _PUT_JIT.replace(body, "") + src, 1)

    then = put("        tx = cute.arch.thread_idx()[0]\n        if tx < 48:\n"
               "            self.out[stage_info.loop_offset] = w\n        w = v\n        self.out[0] = w\n")
    other = put("        tx = cute.arch.thread_idx()[0]\n        if tx < 48:\n            self.out[0] = v\n"
                "        else:\n            self.out[stage_info.loop_offset] = w\n        w = v\n        self.out[0] = w\n")
    for src in (then, other):
        line = src.splitlines().index("            self.out[stage_info.loop_offset] = w") + 1
        assert [(d.code, d.range.line) for d in lint_source(src, "k.py") if d.severity.name == "ERROR"] == [
            ("TS962", line)]
    python_if = then.replace("        tx = cute.arch.thread_idx()[0]\n        if tx < 48:\n", "        if UNROLL > 5:\n", 1)
    assert python_if != then and [d for d in lint_source(python_if, "k.py") if d.code == "TS962"] == []


@pytest.mark.parametrize("old,new", [
    ("def launch(out: cute.Tensor, stream):", "def launch(out: cute.Tensor, stream, n: cutlas.Constexpr = 1):"),
    ("def launch(out: cute.Tensor, stream):", "def launch(out: cute.Tensor, stream) -> cutlas.Int32:"),
    ("def copy_kernel(out: cute.Tensor):", "def copy_kernel(out: cute.Tensor, n: cutlas.Constexpr = 1):"),
])
def test_an_annotation_the_dsl_evaluates_under_future_annotations(old, new):
    # `from __future__ import annotations` leaves them unevaluated at import; the DSL
    # evaluates those of the compiled function and of a launched kernel (the reference:
    # NameError for each program here)
    from ts_lint.rules_lint import _DSL_KERNEL
    src = ("from __future__ import annotations\n\n" + _DSL_KERNEL).replace(old, new, 1)
    line = src.splitlines().index(new) + 1
    got = [(d.code, d.range.line, d.range.column) for d in lint_source(src, "k.py") if d.severity.name == "ERROR"]
    assert got == [("TS962", line, new.index("cutlas"))]


def test_the_annotations_of_a_jit_helper_are_not_evaluated():
    # a @cute.jit function called from traced code: the reference compiles it
    from ts_lint.rules_lint import _DSL_KERNEL
    src = ("from __future__ import annotations\n\n" + _DSL_KERNEL).replace("    tm.run()\n", "    tm.run()\n    _h(1)\n", 1) \
        .replace("@cute.kernel\ndef copy_kernel", "@cute.jit\ndef _h(n: cutlas.Constexpr):\n    pass\n\n\n"
                 "@cute.kernel\ndef copy_kernel", 1)
    assert "_h(1)" in src and [d for d in lint_source(src, "k.py") if d.code == "TS962"] == []
