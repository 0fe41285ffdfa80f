"""TS136 from ts-lint: a name an @schedule body reads where it certainly has no value
(Python's scoping; silent wherever the failure is not certain)."""
import textwrap

import pytest

from ts_runtime.rules._programs import copy_program, custom_program

from ts_lint.api import lint_source


def ts136(src):
    return [(d.range.line, d.range.column, d.message) for d in lint_source(src, "program.py")
            if d.code == "TS136"]


def where(src, marker, name):
    """(line, column) of `name` on the line holding `marker`."""
    for i, line in enumerate(src.splitlines(), 1):
        if marker in line:
            return i, line.index(name)
    raise AssertionError(marker)


def errors(src):
    return [d for d in lint_source(src, "program.py") if d.severity.name == "ERROR"]


LOCAL = "local variable '{}' is read before it is assigned in schedule 'copy'"
NOT_DEFINED = "name '{}' is not defined in schedule 'copy'"


def nested(schedule_body, before="", after="", extra=""):
    """build() -> kernel() (an enclosing @cute.kernel-style function) -> @schedule copy."""
    body = textwrap.indent(textwrap.dedent(schedule_body), " " * 16)
    return custom_program(f'''
    def build():
        src, dst = Src(name="src"), Dst(name="dst")

        def kernel():
{textwrap.indent(textwrap.dedent(before), " " * 12)}
            @schedule
            def copy(src, dst):
{body}
{textwrap.indent(textwrap.dedent(after), " " * 12)}
            return copy(src, dst)

        task = Task(name="Copy", src_resources=[src], dst_resources=[dst], warp_idx=0, num_warps=1,
                    schedule=kernel())
        return TaskManager(tasks=[task], resource_dependency_graph={{dst: [src]}}, verbose=False)
    ''', extra=extra)


# ---------------------------------------------------------------------------- reported
def test_swapped_statements_in_domain_loop():
    src = copy_program('''
    with domain_loop(0, 8, 1):
        dst.set_item(data=v)  # here
        v = src.get_item()
    ''')
    assert ts136(src) == [(*where(src, "# here", "v)"), LOCAL.format("v"))]


def test_not_defined_name():
    src = copy_program('''
    with domain_loop(0, steps, 1):  # here
        v = src.get_item()
        dst.set_item(data=v)
    ''')
    assert ts136(src) == [(*where(src, "# here", "steps"), NOT_DEFINED.format("steps"))]
    assert [d.code for d in errors(src)] == ["TS136"]      # the capture stops there


def test_assignment_after_the_with_that_reads_it():
    src = copy_program('''
    with domain_loop(0, 8, step):  # here
        v = src.get_item()
        dst.set_item(data=v)
    step = 1
    ''')
    assert ts136(src) == [(*where(src, "# here", "step"), LOCAL.format("step"))]


def test_for_body_with_known_count():
    src = nested('''
    with domain_loop(0, 8, 1):
        v = src.get_item()
        for k in range(n_sub):
            dst.set_item(data=w)  # here
            w = src.get_item()
    ''', before="n_sub = 2")
    assert ts136(src) == [(*where(src, "# here", "w)"), LOCAL.format("w"))]


def test_for_body_range_constexpr_from_instance_attribute():
    src = nested('''
    with domain_loop(0, 8, 1):
        v = src.get_item()
        for k in cutlass.range_constexpr(cfg.subtiles):
            dst.set_item(data=w)  # here
            w = src.get_item()
    ''', before="cfg = Cfg()", extra='''
class Cfg:
    def __init__(self):
        self.subtiles = 4


class cutlass:
    @staticmethod
    def range_constexpr(n):
        return range(n)
''')
    assert ts136(src) == [(*where(src, "# here", "w)"), LOCAL.format("w"))]


def test_augmented_assignment_of_unbound_local():
    src = copy_program('''
    total += 1  # here
    with domain_loop(0, 8, 1):
        v = src.get_item()
        dst.set_item(data=v)
    total = 0
    ''')
    assert ts136(src) == [(*where(src, "# here", "total"), LOCAL.format("total"))]


def test_if_on_known_true_condition():
    src = copy_program('''
    with domain_loop(0, 8, 1):
        v = src.get_item()
        if VERBOSE:
            dst.set_item(data=w)  # here
        w = v
        dst.set_item(data=w)
    ''', extra="\nVERBOSE = True\n")
    assert ts136(src) == [(*where(src, "# here", "w)"), LOCAL.format("w"))]


def test_comprehension_reads_enclosing_local_before_it_is_assigned():
    src = copy_program('''
    with domain_loop(0, 8, 1):
        items = [v for _ in range(2)]  # here
        v = src.get_item()
        dst.set_item(data=v)
    ''')
    assert ts136(src) == [(*where(src, "# here", "v for"), LOCAL.format("v"))]


def test_nested_def_called_before_its_definition():
    src = copy_program('''
    helper()  # here
    def helper():
        pass
    with domain_loop(0, 8, 1):
        v = src.get_item()
        dst.set_item(data=v)
    ''')
    assert ts136(src) == [(*where(src, "# here", "helper"), LOCAL.format("helper"))]


def test_class_body_names_are_not_visible():
    src = custom_program('''
    class Builder:
        NUM = 8

        def build(self):
            src, dst = Src(name="src"), Dst(name="dst")

            @schedule
            def copy(src, dst):
                with domain_loop(0, NUM, 1):  # here
                    v = src.get_item()
                    dst.set_item(data=v)

            task = Task(name="Copy", src_resources=[src], dst_resources=[dst], warp_idx=0,
                        num_warps=1, schedule=copy(src, dst))
            return TaskManager(tasks=[task], resource_dependency_graph={dst: [src]}, verbose=False)


    def build():
        return Builder().build()
    ''')
    assert ts136(src) == [(*where(src, "# here", "NUM"), NOT_DEFINED.format("NUM"))]


# ---------------------------------------------------------------------------- silent
def test_for_body_with_unknown_count_is_silent():
    src = copy_program('''
    with domain_loop(0, 8, 1):
        v = src.get_item()
        for k in range(len(sys.argv)):
            dst.set_item(data=w)
            w = src.get_item()
    ''', extra="\nimport sys\n")
    assert ts136(src) == []


def test_for_body_with_zero_iterations_is_silent():
    src = nested('''
    with domain_loop(0, 8, 1):
        v = src.get_item()
        for k in range(n_sub):
            dst.set_item(data=w)
            w = src.get_item()
        dst.set_item(data=v)
    ''', before="n_sub = 0")
    assert ts136(src) == []


def test_unknown_if_is_silent_inside_and_after():
    src = copy_program('''
    with domain_loop(0, 8, 1):
        if len(sys.argv) > 1:
            dst.set_item(data=w)
            u = src.get_item()
        else:
            u = src.get_item()
        dst.set_item(data=u)
        w = u
    ''', extra="\nimport sys\n")
    assert ts136(src) == []


def test_known_false_if_is_silent():
    src = copy_program('''
    with domain_loop(0, 8, 1):
        if DEBUG:
            dst.set_item(data=undefined_name)
        v = src.get_item()
        dst.set_item(data=v)
    ''', extra="\nDEBUG = False\n")
    assert ts136(src) == []


def test_closure_from_enclosing_kernel_function():
    src = nested('''
    with domain_loop(0, n_iters, 1):
        v = src.get_item()
        dst.set_item(data=v)
    ''', before="n_iters = 8")
    assert ts136(src) == []


def test_enclosing_binding_after_the_def_counts():
    src = nested('''
    with domain_loop(0, late, 1):
        v = src.get_item()
        dst.set_item(data=v)
    ''', after="late = 8")
    assert ts136(src) == []


def test_module_level_builtin_and_global_names():
    src = copy_program('''
    global counter
    counter = len(TABLE) + max(1, 2)
    with domain_loop(0, LIMIT, 1):
        v = src.get_item()
        dst.set_item(data=v)
    ''', extra="\nLIMIT = 8\nTABLE = (1, 2)\n")
    assert ts136(src) == []


def test_names_bound_under_a_main_guard_or_try_at_module_level():
    src = copy_program('''
    with domain_loop(0, LIMIT, 1):
        v = src.get_item()
        dst.set_item(data=v)
    ''', extra="\ntry:\n    import numpy as np\nexcept ImportError:\n    np = None\nLIMIT = 8\n")
    assert ts136(src) == []


def test_star_import_disables_the_not_defined_check():
    src = copy_program('''
    with domain_loop(0, 8, 1):
        v = src.get_item()
        dst.set_item(data=v if sep else v)
    ''', extra="\nfrom os.path import *\n")
    assert ts136(src) == []


def test_nested_def_body_is_not_reported():
    src = copy_program('''
    def helper():
        return missing_name + later
    later = 1
    with domain_loop(0, 8, 1):
        v = src.get_item()
        dst.set_item(data=v)
    ''')
    assert ts136(src) == []


def test_comprehension_targets_and_walrus():
    src = copy_program('''
    sizes = [k * 2 for k in range(4)]
    if (n := len(sizes)) > 0:
        pass
    with domain_loop(0, n, 1):
        v = src.get_item()
        dst.set_item(data=v)
    ''')
    assert ts136(src) == []


def test_maybe_return_before_the_read_is_silent():
    src = copy_program('''
    if len(sys.argv) > 5:
        return
    with domain_loop(0, 8, 1):
        dst.set_item(data=v)
        v = src.get_item()
    ''', extra="\nimport sys\n")
    assert ts136(src) == []


def test_while_try_and_del_are_silent():
    src = copy_program('''
    while len(sys.argv) > 9:
        dst.set_item(data=a)
        a = 1
    try:
        dst.set_item(data=b)
    except NameError:
        pass
    c = 1
    del c
    with domain_loop(0, 8, 1):
        v = src.get_item()
        dst.set_item(data=v)
    ''', extra="\nimport sys\n")
    assert ts136(src) == []


def test_valid_tutorial_shape_is_silent():
    src = nested('''
    start = 0
    step = 1
    with domain_loop(start, num_entries, step):
        res = src.get_item()
        dst.set_item(data=res)
    ''', before="num_entries = 8")
    assert ts136(src) == []
    assert errors(src) == []


def test_break_under_unknown_condition_ends_only_the_loop():
    src = copy_program('''
    for i in range(3):
        if i > 1:
            break
    with domain_loop(0, 8, 1): dst.set_item(data=v); v = src.get_item()  # here
    ''')
    assert ts136(src) == [(*where(src, "# here", "v)"), LOCAL.format("v"))]


def test_body_of_another_context_manager_is_silent():
    src = copy_program('''
    with contextlib.suppress(NameError):
        dst.set_item(data=w)
        w = 1
    with domain_loop(0, 8, 1):
        v = src.get_item()
        dst.set_item(data=v)
    ''', extra="\nimport contextlib\n")
    assert ts136(src) == []


def test_match_case_captures_bind_the_schedules_names():
    # a name bound only by a `case` pattern is possibly bound after the match (silent);
    # a name bound nowhere is still reported
    src = copy_program('''
    match (4, 8):
        case (lo, hi):
            pass
    with domain_loop(lo, hi, 1):
        v = src.get_item()
        dst.set_item(data=v)
    ''')
    assert ts136(src) == []
    bad = src.replace("with domain_loop(lo, hi, 1):", "with domain_loop(lo, top, 1):  # here")
    assert ts136(bad) == [(*where(bad, "# here", "top"), NOT_DEFINED.format("top"))]


# a local bound once, to a known value, gives the count of a loop after it (a work
# method's `elems = tile // 32` before `for i in range_constexpr(elems)`); bound twice, or
# to zero, it gives none
_COUNTED_LOOP = '''
    {before}
    with domain_loop(0, 8, 1):
        v = src.get_item()
        for k in range(n_sub):
            dst.set_item(data=w)  # here
            w = src.get_item()
        dst.set_item(data=v)
    '''


@pytest.mark.parametrize("before,reported", [
    ("n_sub = TILE // 32\n", True),
    ("n_sub = TILE // 32\n    n_sub = n_sub + 4\n", False),
    ("n_sub = TILE // 256\n", False),
    ("n_sub = TILE // 32\n    for n_sub in range(0):\n        pass\n", False),
])
def test_for_body_with_a_count_from_a_local_constant(before, reported):
    src = copy_program(_COUNTED_LOOP.format(before=before), extra="\nTILE = 128\n")
    assert ts136(src) == ([(*where(src, "# here", "w)"), LOCAL.format("w"))] if reported else [])


@pytest.mark.parametrize("fast,reported", [(False, True), (True, False)])
def test_a_branch_the_capture_decides(fast, reported):
    # `cutlass.const_expr(FAST)`: the flow analysis leaves the `if` open, the capture runs
    # one branch; a name the branch it runs reads and nothing binds is the NameError there
    from ts_runtime.rules._programs import const_expr_branch_program
    src = const_expr_branch_program(fast)
    expected = [(*where(src, "# here", "undefined_name"), NOT_DEFINED.format("undefined_name"))]
    assert ts136(src) == (expected if reported else [])
