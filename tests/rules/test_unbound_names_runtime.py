"""TS136 at run time: a NameError raised by the @schedule body itself carries the finding
(same message as ts-lint), at the user's line and column; the original error is chained."""
import pytest
from program_module import run_build as run

from ts_runtime.diagnostics import TSNameError
from ts_runtime.rules._programs import copy_program, custom_program


def where(src, marker, name):
    for i, line in enumerate(src.splitlines(), 1):
        if marker in line:
            return i, line.index(name)
    raise AssertionError(marker)


def lint136(src):
    pytest.importorskip("ts_lint.api")
    from ts_lint.api import lint_source
    return [(d.range.line, d.range.column, d.message) for d in lint_source(src, "program.py")
            if d.code == "TS136"]


def test_read_before_assignment(tmp_path):
    src = copy_program('''
    with domain_loop(0, 8, 1):
        dst.set_item(data=res)  # here
        res = src.get_item()
    ''')
    with pytest.raises(TSNameError) as info:
        run(tmp_path, src)
    d = info.value.diagnostics[0]
    assert d.code == "TS136"
    assert (d.range.line, d.range.column) == where(src, "# here", "res")
    assert d.message == "local variable 'res' is read before it is assigned in schedule 'copy'"
    assert isinstance(info.value.__cause__, UnboundLocalError)
    assert info.value.name == "res"
    assert lint136(src) == [(d.range.line, d.range.column, d.message)]


def test_not_defined(tmp_path):
    src = copy_program('''
    start = bx * threads_per_block  # here
    with domain_loop(0, 8, 1):
        v = src.get_item()
        dst.set_item(data=v)
    ''', extra="\nbx = 0\n")
    with pytest.raises(TSNameError) as info:
        run(tmp_path, src)
    d = info.value.diagnostics[0]
    assert d.code == "TS136"
    assert (d.range.line, d.range.column) == where(src, "# here", "threads_per_block")
    assert d.message == "name 'threads_per_block' is not defined in schedule 'copy'"
    assert lint136(src) == [(d.range.line, d.range.column, d.message)]


def test_comprehension_frame(tmp_path):
    src = copy_program('''
    with domain_loop(0, 8, 1):
        items = [v for _ in range(2)]  # here
        v = src.get_item()
        dst.set_item(data=v)
    ''')
    with pytest.raises(TSNameError) as info:
        run(tmp_path, src)
    d = info.value.diagnostics[0]
    assert (d.code, d.range.line, d.range.column) == ("TS136", *where(src, "# here", "v for"))
    assert d.message == "local variable 'v' is read before it is assigned in schedule 'copy'"
    assert lint136(src) == [(d.range.line, d.range.column, d.message)]


def test_name_error_in_a_called_helper_is_not_ts136(tmp_path):
    src = custom_program('''
    def helper():
        return missing_helper_name

    def build():
        src, dst = Src(name="src"), Dst(name="dst")

        @schedule
        def copy(src, dst):
            helper()
            with domain_loop(0, 8, 1):
                v = src.get_item()
                dst.set_item(data=v)

        task = Task(name="Copy", src_resources=[src], dst_resources=[dst], warp_idx=0, num_warps=1,
                    schedule=copy(src, dst))
        return TaskManager(tasks=[task], resource_dependency_graph={dst: [src]}, verbose=False)
    ''')
    with pytest.raises(NameError) as info:
        run(tmp_path, src)
    assert not isinstance(info.value, TSNameError)


def test_explicit_raise_is_not_ts136(tmp_path):
    src = copy_program('''
    raise NameError("name 'x' is not defined")
    ''')
    with pytest.raises(NameError) as info:
        run(tmp_path, src)
    assert not isinstance(info.value, TSNameError)


def test_a_branch_decided_by_a_compile_time_condition(tmp_path):
    # the branch `cutlass.const_expr(FAST)` picks raises; ts-lint reports the same read
    pytest.importorskip("cutlass")
    from ts_runtime.rules._programs import const_expr_branch_program
    src = const_expr_branch_program(False)
    with pytest.raises(TSNameError) as info:
        run(tmp_path, src)
    d = info.value.diagnostics[0]
    assert (d.code, d.range.line, d.range.column) == ("TS136", *where(src, "# here", "undefined_name"))
    assert lint136(src) == [(d.range.line, d.range.column, d.message)]
