"""Quick fixes carried by diagnostics: applying the edits removes the finding."""
import pathlib

import pytest

from ts_runtime.diagnostics import Severity

ROOT = pathlib.Path(__file__).resolve().parents[1]


def apply_edits(text: str, edits) -> str:
    lines = text.splitlines(keepends=True)
    offs = [0]
    for ln in lines:
        offs.append(offs[-1] + len(ln))

    def pos(line, col):
        return offs[line - 1] + col if line - 1 < len(offs) else len(text)
    for e in sorted(edits, key=lambda e: (e.range.line, e.range.column), reverse=True):
        start = pos(e.range.line, e.range.column)
        end = pos(e.range.end_line or e.range.line, e.range.end_column or 0)
        text = text[:start] + e.new_text + text[end:]
    return text


def test_release_before_dma_producer_fix_moves_the_release():
    from ts_lint.api import lint_source
    path = ROOT / "examples" / "bad" / "05_release_before_mma.py"
    text = path.read_text()
    (d,) = [d for d in lint_source(text, str(path)) if d.code == "TS215"]
    assert d.fix is not None and d.fix.applicability == "safe"
    assert "release after" in d.fix.title
    fixed = apply_edits(text, d.fix.edits)
    after = [x for x in lint_source(fixed, str(path)) if x.severity is Severity.ERROR]
    assert after == [], [x.format() for x in after]
    # the release now follows the MMA call, at the MMA's indentation
    lines = fixed.splitlines()
    i = next(n for n, ln in enumerate(lines) if "tmem_acc.mma(" in ln)
    assert lines[i + 1].split("#")[0].strip() == "smem_ab.release()"   # the comment moves with it


def _fix_roundtrip(name, code):
    from ts_lint.api import lint_source
    path = ROOT / "examples" / "bad" / name
    text = path.read_text()
    (d,) = [d for d in lint_source(text, str(path)) if d.code == code]
    assert d.fix is not None and d.fix.applicability == "unsafe"
    fixed = apply_edits(text, d.fix.edits)
    return [x for x in lint_source(fixed, str(path)) if x.severity is Severity.ERROR], fixed


def test_producer_work_before_acquire_fix_inserts_acquire():
    after, fixed = _fix_roundtrip("02_producer_work_before_acquire.py", "TS207")
    assert [x.code for x in after if x.code == "TS207"] == []


def test_read_before_wait_fix_inserts_wait():
    after, fixed = _fix_roundtrip("02_read_before_wait.py", "TS206")
    assert [x.code for x in after if x.code == "TS206"] == []


# ---------------------------------------------------------------- dependency graph, work-queue tail
def _lint_fixes(name, code):
    from ts_lint.api import lint_source
    path = ROOT / "examples" / "bad" / name
    text = path.read_text()
    found = [d for d in lint_source(text, str(path)) if d.code == code]
    assert found and all(d.fix is not None for d in found), [d.format() for d in found]
    return path, text, found


def _errors_after(path, text):
    from ts_lint.api import lint_source
    return [x.format() for x in lint_source(text, str(path)) if x.severity is Severity.ERROR]


def test_resource_missing_from_graph_fix_adds_the_producing_edge():
    path, text, (d,) = _lint_fixes("02_out_missing_from_graph.py", "TS355")
    assert d.fix.applicability == "safe" and "out: [smem]" in d.fix.title
    fixed = apply_edits(text, d.fix.edits)
    assert "resource_dependency_graph={smem: [coords], out: [smem]}," in fixed
    assert _errors_after(path, fixed) == []


def test_unbacked_graph_edge_fix_replaces_it_with_the_backed_edge():
    path, text, (d,) = _lint_fixes("02_graph_edge_not_backed.py", "TS353")
    assert d.fix.applicability == "unsafe"
    fixed = apply_edits(text, d.fix.edits)
    assert "resource_dependency_graph={smem: [coords], out: [smem]}," in fixed
    assert _errors_after(path, fixed) == []


def test_work_queue_ops_in_loop_fix_moves_them_to_the_tile_tail():
    path, text, (d,) = _lint_fixes("04_work_queue_in_loop.py", "TS504")
    assert d.fix.applicability == "unsafe" and "tile tail" in d.fix.title
    fixed = apply_edits(text, d.fix.edits)
    assert _errors_after(path, fixed) == []
    lines = fixed.splitlines()
    loop = next(i for i, ln in enumerate(lines) if "with domain_loop(" in ln)
    tail = [ln for ln in lines[loop:] if ln.strip().startswith("wq.")]
    assert [ln.split("#")[0].strip() for ln in tail] == [
        "wq.try_wait()", "wq.wait()", "wq.get_and_advance_work_tile()", "wq.release()"]
    indent = len(lines[loop]) - len(lines[loop].lstrip())
    assert all(len(ln) - len(ln.lstrip()) == indent for ln in tail)      # after the loop, not in it


def test_work_queue_ops_in_skippable_fix_moves_the_whole_epilogue():
    path, text, found = _lint_fixes("03_work_queue_in_skippable.py", "TS511")
    assert len(found) == 4 and len({d.fix for d in found}) == 1      # every finding offers the same edit
    fixed = apply_edits(text, found[0].fix.edits)
    assert _errors_after(path, fixed) == []
    lines = fixed.splitlines()
    skip = next(i for i, ln in enumerate(lines) if "tiles.skippable()" in ln)
    indent = len(lines[skip]) - len(lines[skip].lstrip())
    tail = [ln for ln in lines[skip:] if ln.strip().startswith("wq.")]
    assert len(tail) == 4 and all(len(ln) - len(ln.lstrip()) == indent for ln in tail)


@pytest.mark.parametrize("name,code", [
    ("02_out_missing_from_graph.py", "TS355"), ("02_graph_edge_not_backed.py", "TS353"),
    ("04_work_queue_in_loop.py", "TS504"), ("03_work_queue_in_skippable.py", "TS511")])
def test_the_runtime_attaches_the_same_fixes_as_ts_lint(name, code):
    """Fixes come from source ranges, so the tracing DSL carries the same edits."""
    import importlib.util
    path, text, found = _lint_fixes(name, code)
    spec = importlib.util.spec_from_file_location(f"_fix_{code}", path)
    mod = importlib.util.module_from_spec(spec)
    with pytest.raises(ValueError) as info:
        spec.loader.exec_module(mod)
        mod.build()
    got = [d.fix for d in info.value.diagnostics if d.code == code]
    assert got == [d.fix for d in found]


@pytest.mark.parametrize("code", ["TS215", "TS353", "TS355", "TS503", "TS504"])
def test_rule_examples_are_fixed_by_their_fix(code):
    """The rule's own INVALID programs (other layouts: a `graph = {...}` variable, the head)."""
    from ts_lint.api import lint_source
    from ts_runtime.rules.registry import RULES, load_all
    load_all()
    for i, program in enumerate(RULES[code].INVALID):
        path = f"<{code}-invalid-{i}>"
        (d,) = [d for d in lint_source(program, path) if d.code == code]
        assert d.fix is not None, d.format()
        fixed = apply_edits(program, d.fix.edits)
        assert [x.format() for x in lint_source(fixed, path) if x.severity is Severity.ERROR] == []


@pytest.mark.parametrize("ops", [("smem.acquire()", "smem.commit()"), ("smem.wait()", "smem.release()")])
def test_pipelined_work_without_brackets_fix_wraps_the_work(ops):
    """TS210: the work on a pipelined resource is wrapped in acquire()/commit() (producer)
    or wait()/release() (consumer)."""
    from ts_lint.api import lint_source
    from ts_runtime.rules.roles import _VALID
    program = "".join(ln for ln in _VALID.splitlines(keepends=True) if ln.strip() not in ops)
    path = "<ts210-wrap>"
    (d,) = [d for d in lint_source(program, path) if d.code == "TS210"]
    assert d.fix is not None and d.fix.applicability == "unsafe"
    assert f"{ops[0].split('.')[1]}/{ops[1].split('.')[1]}" in d.fix.title
    fixed = apply_edits(program, d.fix.edits)
    assert [x.format() for x in lint_source(fixed, path)] == []
    assert fixed == _VALID
