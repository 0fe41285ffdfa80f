"""TS111 at run time for a `domain_loop` bound naming an attribute its class lacks: the
schedule's own AttributeError carries the finding, at the attribute's range, with the
message ts-lint gives; other AttributeErrors pass through unchanged."""
import pytest
from program_module import run_build as run

from ts_runtime.diagnostics import TSAttributeError
from ts_runtime.rules._programs import dynamic_program


def test_missing_getter_is_ts111_at_the_attribute(tmp_path):
    src = dynamic_program('''
    with domain_loop(0, VarlenTask.get_domian, 1):
        v = src.get_item()
        dst.set_item(data=v)
    ''')
    with pytest.raises(TSAttributeError) as info:
        run(tmp_path, src)
    (d,) = info.value.diagnostics
    line = next(i for i, t in enumerate(src.splitlines(), 1) if "get_domian" in t)
    col = src.splitlines()[line - 1].index("VarlenTask.get_domian")
    assert (d.code, d.range.line, d.range.column, d.range.end_column) == (
        "TS111", line, col, col + len("VarlenTask.get_domian"))
    assert d.message.startswith("type object 'VarlenTask' has no attribute 'get_domian'")
    assert isinstance(info.value.__cause__, AttributeError)
    from ts_lint.api import lint_source
    found = [(x.code, x.range.line, x.range.column, x.message) for x in lint_source(src, "program.py")
             if x.code == "TS111"]
    assert found == [("TS111", line, col, d.message)]


def test_other_attribute_errors_are_not_ts111(tmp_path):
    # the same missing attribute outside a domain_loop bound stays a plain AttributeError
    src = dynamic_program('''
    n = VarlenTask.get_domian
    with domain_loop(0, VarlenTask.get_domain, 1):
        v = src.get_item()
        dst.set_item(data=v)
    ''')
    with pytest.raises(AttributeError) as info:
        run(tmp_path, src)
    assert not isinstance(info.value, TSAttributeError)
