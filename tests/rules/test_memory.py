"""TS701-TS714 (allocators, capacities, registers), the layout order and the printout blocks.

Expected offsets and report text were printed by the reference (nvidia-cutlass-dsl 4.8.1)
for the same allocations.
"""
import pytest

from ts_runtime.diagnostics import Severity
from ts_runtime.memory import SmemAllocation as SA, SmemAllocator, TmemAllocation as TA, TmemAllocator
from ts_runtime.model import KernelModel, TaskModel
from ts_runtime.model.registers import default_registers, register_usage, total_warps, warp_groups
from ts_runtime.model.values import RUNTIME, UNKNOWN
from ts_runtime.printout import register_lines
from ts_runtime.rules import load_all
from ts_runtime.rules.memory_rules import (NegativeRegisterBudget, NonStaticWarpIdx, RegisterFileExceeded,
                                           TMEM_ALLOC, TMEM_OPTIONS, UncoveredWarpGroupRegisters,
                                           WarpGroupRegisterMismatch, memory_program)
from ts_runtime.testing import run_source

RULES = load_all()


def line_of(src, text, nth=0):
    return [i for i, line in enumerate(src.splitlines(), 1) if text in line][nth]


def errors(src):
    return sorted({(d.code, d.range.line) for d in run_source(src) if d.severity is Severity.ERROR})


def stdout_of(src):
    import contextlib
    import io
    import os
    import tempfile
    from ts_runtime.testing import run_program
    out = io.StringIO()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "program.py")
        with open(path, "w") as f:
            f.write(src)
        with contextlib.redirect_stdout(out):
            run_program(path, quiet=False)
    return out.getvalue()


def both(src):
    got = errors(src)
    lint = pytest.importorskip("ts_lint.api")
    assert sorted({(d.code, d.range.line) for d in lint.lint_source(src, "program.py")
                   if d.severity is Severity.ERROR}) == got
    return got


# ---------------------------------------------------------------------------- layout (reference order)
def test_layout_sorts_allocations_and_alias_groups_by_alignment():
    a = SmemAllocator()
    a1, a16, a128, b4 = SA("a1", 10, 1), SA("a16", 20, 16), SA("a128", 30, 128), SA("b4", 5, 4)
    for x in (a1, a16, a128, b4):
        a.add(x)
    g1, g2, g3 = SA("g1", 7, 8), SA("g2", 3, 64), SA("g3", 1, 1)
    a.add_alias_group([[g1], [g2, g3]])
    assert a.compute_layout() == 115
    assert [(x.name, x.offset) for x in (a128, g1, g2, g3, a16, b4, a1)] == [
        ("a128", 0), ("g1", 64), ("g2", 64), ("g3", 67), ("a16", 80), ("b4", 100), ("a1", 105)]


def test_ties_keep_standalone_allocations_before_groups():
    a = SmemAllocator()
    g1, g2 = SA("g1", 7, 16), SA("g2", 3, 16)
    a.add_alias_group([[g1], [g2]])
    x, y = SA("a16", 20, 16), SA("b16", 20, 16)
    a.add(x)
    a.add(y)
    a.compute_layout()
    assert [x.offset, y.offset, g1.offset, g2.offset] == [0, 32, 64, 64]


REPORT = """\
[smem-layout] SMEM Usage Report
  Name                             Size  Align    Offset       End
  ────────────────────────────────────────────────────────────────
  a128                               30    128         0        30
  g1 *                                7      8        64        71
  g2 *                                3     64        64        67
  g3 *                                1      1        67        68
  a16                                20     16        80       100
  b4                                  5      4       100       105
  a1                                 10      1       105       115
  ────────────────────────────────────────────────────────────────
  Alias group 1:
    Phase 1: g1 (7 B)
    Phase 2: g2 (3 B), g3 (1 B)
  ────────────────────────────────────────────────────────────────
  Data SMEM:             115 B
  Total:               115 B"""

TMEM_REPORT = """\
[tmem-layout] TMEM Usage Report
  Name                             Size    Offset       End
  ─────────────────────────────────────────────────────────
  acc                               128         0       128
  acc2                               64       128       192
  x *                                32       192       224
  y *                                16       192       208
  z *                                40       208       248
  ─────────────────────────────────────────────────────────
  Alias group 1:
    Phase 1: x (32 cols)
    Phase 2: y (16 cols), z (40 cols)
  ─────────────────────────────────────────────────────────
  Total:               248 cols
  Alias savings:        32 cols"""


def test_usage_reports_match_the_reference(capsys):
    a = SmemAllocator()
    for x in (SA("a1", 10, 1), SA("a16", 20, 16), SA("a128", 30, 128), SA("b4", 5, 4)):
        a.add(x)
    a.add_alias_group([[SA("g1", 7, 8)], [SA("g2", 3, 64), SA("g3", 1, 1)]])
    a.compute_layout()
    a.print_usage_report()
    assert capsys.readouterr().out == "\n" + REPORT + "\n\n"
    t = TmemAllocator()
    t.add(TA("acc", 128))
    t.add(TA("acc2", 64))
    t.add_alias_group([[TA("x", 32)], [TA("y", 16), TA("z", 40)]])
    t.compute_layout()
    assert t.usage_report() == TMEM_REPORT


def test_report_without_alignment_column_and_with_barriers():
    a = SmemAllocator()
    a.add(SA("plain", 10, 1))
    a.add(SA("plain2", 20, 1))
    a.compute_layout()
    assert a.usage_report().splitlines()[1:5] == [
        "  Name                             Size    Offset       End",
        "  " + "─" * 57,
        "  plain                              10         0        10",
        "  plain2                             20        10        30"]
    text = stdout_of(RULES["TS708"].VALID[0].replace("verbose=False", "verbose=True"))
    assert "SMEM usage: 4096 B (data 4096 B + barriers 0 B) / 232448 B capacity" in text
    assert "TMEM usage: 512 columns / 512 columns capacity" in text


def test_sample_program_prints_barrier_lines():
    import pathlib
    src = (pathlib.Path(__file__).parent / "sample_program.py").read_text()
    text = stdout_of(src.replace("smem_allocator=alloc)", "smem_allocator=alloc, exhaustive_deadlock_race_check=False)"))
    for line in ("Task  0 'StoreTask           ', numWarps x (defaultMaxNumRegs - numRegsPerThread) = 4 x (256 - 256) = 0",
                 "Num. regs: 40960 (free reg blocks: 24)", "Reg budget: 0",
                 "SMEM usage: 4128 B (data 4096 B + barriers 32 B) / 232448 B capacity",
                 "  Barrier SMEM:           32 B", "  Total SMEM:           4128 B  (data + barriers)"):
        assert line in text.splitlines(), line


# ---------------------------------------------------------------------------- object rules
@pytest.mark.parametrize("code", ["TS701", "TS702", "TS703", "TS704", "TS705", "TS706", "TS712"])
def test_object_and_task_rules_report_the_marked_line(code):
    src = RULES[code].INVALID[0]
    marked = [i for i, line in enumerate(src.splitlines(), 1) if f"# expect: {code}" in line]
    assert both(src) == [(code, marked[0])]


def test_ts701_zero_alignment_and_exception_type():
    a = SmemAllocator()
    a.add(SA("z", 4, 0))
    with pytest.raises(AssertionError) as e:
        a.compute_layout()
    assert e.value.diagnostics[0].code == "TS701"


def test_ts702_ts703_ts704_exception_types():
    a = SmemAllocator()
    with pytest.raises(ValueError):
        a.add_alias_group([[SA("x", 4)]])
    with pytest.raises(RuntimeError):
        a.total
    with pytest.raises(RuntimeError):
        a.print_usage_report()
    a.compute_layout()
    with pytest.raises(RuntimeError):
        a.compute_layout()
    with pytest.raises(RuntimeError):
        a.get(SA("y", 4))


def test_ts706_rejects_a_pipelined_resource_that_is_not_a_group():
    from ts_runtime.pipeline import Agent, CooperativeGroup
    from ts_runtime.resources import MemoryResource, PipelineConfig
    cfg = PipelineConfig.create_async_async_pipeline_cfg(2, CooperativeGroup(Agent.Thread), CooperativeGroup(Agent.Thread),
                                                          None)
    r = MemoryResource(name="r", pipeline_config=cfg)
    with pytest.raises(TypeError) as e:
        SmemAllocator().add_pipeline_group(r)
    assert e.value.diagnostics[0].code == "TS706"


# ---------------------------------------------------------------------------- capacities
def test_ts707_exact_capacity_fits_and_one_byte_more_does_not():
    assert both(memory_program(size=232448)) == []
    src = memory_program(size=232449)
    assert both(src) == [("TS707", line_of(src, "return TaskManager("))]


def test_ts707_counts_barrier_bytes():
    import pathlib
    src = (pathlib.Path(__file__).parent / "sample_program.py").read_text()
    src = src.replace("smem_allocator=alloc)", "smem_allocator=alloc, smem_capacity_bytes=4127)")
    got = errors(src)
    assert got == [("TS707", line_of(src, "smem_capacity_bytes=4127"))]
    d = [d for d in run_source(src) if d.code == "TS707"][0]
    assert "4128 B = 4096 B data + 32 B barriers" in d.message


def test_ts707_counts_a_resource_added_twice_twice():
    # the reference does not de-duplicate `add_resource` / `add`: the second registration lays
    # the resource's allocations out again and counts its barriers again
    twice = "smem = SmemAllocator(); smem.add_resource(out); smem.add_resource(out); smem.compute_layout()"
    assert both(memory_program(size=116224, alloc=twice)) == []
    src = memory_program(size=116225, alloc=twice)
    assert both(src) == [("TS707", line_of(src, "return TaskManager("))]
    assert both(memory_program(size=116225)) == []
    a = SmemAllocator()
    x = SA("x", 100, 4)
    a.add(x)
    a.add(x)
    assert a.compute_layout() == 200


def test_empty_allocator_allocates_no_smem_block():
    # as the reference: nothing registered -> no SMEM block, `context.smem_base` is None (a
    # work method deriving its view from it then fails in the user's code, in both)
    a = SmemAllocator()
    a.compute_layout()
    assert a.allocate() is None and a.smem_base is None


def test_ts708():
    src = RULES["TS708"].INVALID[0]
    assert both(src) == [("TS708", line_of(src, "return TaskManager("))]
    ok = memory_program(alloc=TMEM_ALLOC.format(columns=640),
                        options=TMEM_OPTIONS + ", tmem_capacity_columns=1024")
    assert both(ok) == []


def test_capacity_rules_are_silent_without_allocators_or_on_unknown_totals():
    from ts_runtime.model import AllocatorModel
    from ts_runtime.rules.memory_rules import SmemCapacityExceeded, TmemCapacityExceeded
    k = KernelModel()
    assert list(SmemCapacityExceeded().check(k)) == [] and list(TmemCapacityExceeded().check(k)) == []
    k.smem_allocator = AllocatorModel("smem", UNKNOWN, 0)
    k.tmem_allocator = AllocatorModel("tmem", UNKNOWN, 0)
    assert list(SmemCapacityExceeded().check(k)) == [] and list(TmemCapacityExceeded().check(k)) == []
    k.smem_allocator = AllocatorModel("smem", 10**6, 0)
    k.options.smem_capacity_bytes = UNKNOWN
    assert list(SmemCapacityExceeded().check(k)) == []


# ---------------------------------------------------------------------------- register arithmetic
def _k(*tasks):
    return KernelModel(tasks=[TaskModel(n, warp_idx=w, num_warps=c, num_registers=r) for n, w, c, r in tasks])


def test_default_registers_use_the_sum_of_num_warps():
    # reference: tasks [0,4) [4,5) [1,5) -> 9 warps -> ceil4 12 -> D = 168 (not max end 5 -> 256)
    k = _k(("S", 0, 4, None), ("L", 4, 1, None), ("P", 1, 4, None))
    assert total_warps(k) == 9 and default_registers(k) == 168
    assert register_lines(k) == [
        "Task  0 'S                   ', numWarps x (defaultMaxNumRegs - numRegsPerThread) = 4 x (168 - 168) = 0",
        "Task  1 'L                   ', numWarps x (defaultMaxNumRegs - numRegsPerThread) = 1 x (168 - 168) = 0",
        "Task  2 'P                   ', numWarps x (defaultMaxNumRegs - numRegsPerThread) = 4 x (168 - 168) = 0",
        "Num. regs: 48384 (free reg blocks: 16)", "Reg budget: 0"]
    k = _k(("S", 0, 4, None), ("L", 4, 1, None), ("P", 9, 1, None))
    assert default_registers(k) == 256


def test_register_arithmetic_is_unknown_when_a_value_is():
    assert default_registers(_k(("A", 0, UNKNOWN, None))) is UNKNOWN
    assert register_usage(_k(("A", 0, 4, RUNTIME))) is None
    assert register_lines(_k(("A", 0, UNKNOWN, None))) == []


def test_warp_groups_list_spanning_tasks_in_each_group():
    k = _k(("A", 2, 4, None), ("B", 6, 1, None), ("C", UNKNOWN, 1, None))
    groups = warp_groups(k)
    assert {g: [t.name for t in ts] for g, ts in groups.items()} == {0: ["A"], 1: ["A", "B"]}


# ---------------------------------------------------------------------------- register rules
@pytest.mark.parametrize("code", ["TS709", "TS710", "TS711", "TS713", "TS714"])
def test_register_rules_report_the_marked_line(code):
    src = RULES[code].INVALID[0]
    marked = [i for i, line in enumerate(src.splitlines(), 1) if f"# expect: {code}" in line]
    assert both(src) == [(code, marked[0])]


def test_ts713_does_not_repeat_itself_as_ts714():
    src = RULES["TS713"].INVALID[0]
    assert [c for c, _ in errors(src)] == ["TS713"]


def test_ts710_flags_each_differing_task_once():
    k = _k(("A", 0, 1, 40), ("B", 1, 1, 48), ("C", 2, 1, 56), ("D", 3, 1, 40), ("E", 3, 5, 40))
    found = [(d.code, d.message.split(":")[0]) for d in WarpGroupRegisterMismatch().check(k)]
    assert len(found) == 2 and all(c == "TS710" for c, _ in found)


def test_ts711_lists_missing_warps_and_ignores_groups_without_num_registers():
    k = _k(("A", 0, 1, 40), ("B", 1, 2, 40), ("C", 4, 4, None))
    ds = list(UncoveredWarpGroupRegisters().check(k))
    assert len(ds) == 1 and "warps [3]" in ds[0].message
    k = _k(("A", 0, 8, 40))    # one task spanning two groups covers both
    assert list(UncoveredWarpGroupRegisters().check(k)) == []


def test_register_rules_stay_silent_on_unknown_values():
    k = _k(("A", 0, 1, 40), ("B", UNKNOWN, 3, 40))
    assert list(UncoveredWarpGroupRegisters().check(k)) == []
    assert list(NonStaticWarpIdx().check(k)) == []
    k = _k(("A", 0, 1, UNKNOWN), ("B", 1, 3, 40))
    assert list(WarpGroupRegisterMismatch().check(k)) == []
    assert list(RegisterFileExceeded().check(k)) == [] and list(NegativeRegisterBudget().check(k)) == []


def test_ts709_fires_on_known_non_int_values():
    k = _k(("A", RUNTIME, 1, None), ("B", "4", 1, None), ("C", 0, 1, None))
    assert [d.message for d in NonStaticWarpIdx().check(k)] == [
        "Task 'A': warp_idx is not a static int: RUNTIME", "Task 'B': warp_idx is not a static int: '4'"]


def test_register_rules_are_downgraded_by_skip_validation():
    src = RULES["TS711"].INVALID[0].replace("verbose=False", "verbose=False, skip_validation=True")
    diags = run_source(src)
    assert not [d for d in diags if d.severity is Severity.ERROR]
    assert {d.code for d in diags} == {"TS711", "TS901"}
