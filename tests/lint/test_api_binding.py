"""Calls of the public ts API whose arguments do not bind (TS907), `Task(schedule=...)`
values that are no captured schedule (TS112), dependency-graph entries that are no list of
resources (TS360), a schedule of a nameless `functools.partial` (TS138), and operations on
a value that is certainly a number (TS964, ts-lint only): the same code on the same line
from the runtime and from ts-lint, and silence on the valid controls.

Each defect is a one-line change of tests/rules/sample_program.py (or of its variant with a
resource that has its own `__init__`); the reference's exception is recorded per case and
checked by `test_the_reference_rejects_each_defect_and_accepts_each_control`.
"""
from pathlib import Path

import pytest

from ts_runtime.diagnostics import Severity
from ts_runtime.testing import run_source

BASE = (Path(__file__).resolve().parents[1] / "rules" / "sample_program.py").read_text()

# OutGmem with its own `__init__(self, dst, **kwargs)` (as the tutorials' output resources)
CUSTOM = BASE.replace('''@dataclass(kw_only=True)
class OutGmem(MemoryResource):
''', '''@dataclass(kw_only=True)
class OutGmem(MemoryResource):
    dst: object = None

    def __init__(self, dst, **kwargs):
        super().__init__(**kwargs)
        self.dst = dst

''').replace('OutGmem(name="out")', 'OutGmem(name="out", dst=None)')
assert CUSTOM != BASE

# a Task subclass with its own `__init__(self, tag, **kwargs)` (as the varlen tutorial's
# DynamicDomainTask) making the store task
TASKSUB = BASE.replace("from ts_runtime.task import Task\n", """from ts_runtime.task import Task


class TaggedTask(Task):
    def __init__(self, tag, **kwargs):
        super().__init__(**kwargs)
        self.tag = tag
""", 1).replace('        Task(name="StoreTask", src_resources=[smem], dst_resources=[out], warp_idx=0, num_warps=4,',
                '        TaggedTask(tag=1, name="StoreTask", src_resources=[smem], dst_resources=[out], warp_idx=0,\n'
                '                   num_warps=4,', 1)
assert "TaggedTask(tag=1" in TASKSUB

_RES = 'inp, out = InGmem(name="in"), OutGmem(name="out", dst=None)'


def _after_resources(stmt: str):
    """A (old, new) change that adds `stmt` after the resources are made (in CUSTOM)."""
    return (_RES, _RES + "\n    " + stmt)


# (id, base, old, new, code, reference exception, reference message)
DEFECTS = [
    # TS907: the runtime's checked_init / checked_api / checked_method, ts-lint's bind_api
    ("tlv_kw", BASE, "self.val = TaskLocalVariable(dtype=int, default=0)",
     "self.val = TaskLocalVariable(dtype=int, default=0, doc='v')", "TS907",
     "TypeError", "TaskLocalVariable.__init__() got an unexpected keyword argument 'doc'"),
    ("tlv_uninitialized", BASE, "coord: object = TaskLocalVariable.uninitialized()",
     "coord: object = TaskLocalVariable.uninitialized(int)", "TS907",
     "TypeError", "TaskLocalVariable.uninitialized() takes 0 positional arguments but 1 was given"),
    ("smem_allocation_kw", BASE, 'SmemAllocation("smem_data", size_bytes=4096)',
     'SmemAllocation("smem_data", size_bytes=4096, aligment=128)', "TS907",
     "TypeError", "SmemAllocation.__init__() got an unexpected keyword argument 'aligment'"),
    ("smem_allocation_offset", BASE, 'SmemAllocation("smem_data", size_bytes=4096)',
     'SmemAllocation("smem_data", size_bytes=4096, offset=0)', "TS907",
     "TypeError", "SmemAllocation.__init__() got an unexpected keyword argument 'offset'"),
    ("consumer_work_kw", BASE, "@consumer_work(returns=val)",
     "@consumer_work(returns=val, work_attr=WorkAttr.NONE)", "TS907",
     "TypeError", "consumer_work() got an unexpected keyword argument 'work_attr'"),
    ("producer_work_kw", BASE, "    @producer_work\n    def tma_load",
     "    @producer_work(work_attr=WorkAttr.NONE)\n    def tma_load", "TS907",
     "TypeError", "producer_work() got an unexpected keyword argument 'work_attr'"),
    ("schedule_no_fn", BASE, "    @schedule\n    def pad(_r):", "    @schedule()\n    def pad(_r):", "TS907",
     "TypeError", "schedule() missing 1 required positional argument: 'fn'"),
    ("cooperative_group_kw", BASE, "CooperativeGroup(Agent.Thread, consumer)",
     "CooperativeGroup(Agent.Thread, consumer, align=1)", "TS907",
     "TypeError", "CooperativeGroup.__init__() got an unexpected keyword argument 'align'"),
    ("allocator_arg", BASE, "alloc = SmemAllocator()", "alloc = SmemAllocator(1)", "TS907",
     "TypeError", "SmemAllocator.__init__() takes 1 positional argument but 2 were given"),
    ("allocator_method_kw", BASE, "alloc.add_resource(smem)", "alloc.add_resource(res=smem)", "TS907",
     "TypeError", "SmemAllocator.add_resource() got an unexpected keyword argument 'res'"),
    ("allocator_method_arg", BASE, "alloc.compute_layout()", "alloc.compute_layout(1)", "TS907",
     "TypeError", "compute_layout() takes 1 positional argument but 2 were given"),
    ("manager_method_kw", BASE,
     "return TaskManager(tasks=tasks, resource_dependency_graph=graph, smem_allocator=alloc)",
     "tm = TaskManager(tasks=tasks, resource_dependency_graph=graph, smem_allocator=alloc)\n"
     "    tm.get_marmaid_string_dependency_graph(dir='LR')\n    return tm", "TS907",
     "TypeError", "get_marmaid_string_dependency_graph() got an unexpected keyword argument 'dir'"),
    ("pdl_barrier_kw", CUSTOM, *_after_resources(
        "from ts_runtime.resources import PdlWaitBarrier; w = PdlWaitBarrier(nam='w')"), "TS907",
     "TypeError", "PdlWaitBarrier.__init__() got an unexpected keyword argument 'nam'"),
    ("tile_scheduler_factory_kw", CUSTOM, *_after_resources(
        "from ts_runtime.resources import TileSchedulerConfig; "
        "t = TileSchedulerConfig.create_static_persistent_tile_scheduler_params(params=None)"), "TS907",
     "TypeError", "got an unexpected keyword argument 'params'"),
    ("every_kw", CUSTOM, *_after_resources("from ts_runtime import Every; e = Every(4, begin=0)"), "TS907",
     "TypeError", "Every.__init__() got an unexpected keyword argument 'begin'"),
    ("resource_context_kw", CUSTOM, *_after_resources(
        "from ts_runtime.memory import ResourceContext; c = ResourceContext(smem=None)"), "TS907",
     "TypeError", "ResourceContext.__init__() got an unexpected keyword argument 'smem'"),
    # a keyword OutGmem's own `__init__(self, dst, **kwargs)` passes on through
    # `super().__init__(**kwargs)`: the base's TypeError, at the construction
    ("forwarded_kw", CUSTOM, 'OutGmem(name="out", dst=None)', 'OutGmem(namee="out", dst=None)', "TS907",
     "TypeError", "MemoryResource.__init__() got an unexpected keyword argument 'namee'"),
    # ... and a Task argument a Task subclass's own `__init__` no longer passes on
    ("forwarded_task_missing", TASKSUB, "                   num_warps=4,\n", "", "TS907",
     "TypeError", "Task.__init__() missing 1 required positional argument: 'num_warps'"),
    ("forwarded_task_kw", TASKSUB, "                   num_warps=4,", "                   num_warpz=4,", "TS907",
     "TypeError", "Task.__init__() got an unexpected keyword argument 'num_warpz'"),
    ("tmem_allocation_kw", CUSTOM, *_after_resources(
        "from ts_runtime.memory import TmemAllocation; a = TmemAllocation('t', 32, alignment=32)"), "TS907",
     "TypeError", "TmemAllocation.__init__() got an unexpected keyword argument 'alignment'"),
    ("pipeline_config_direct", CUSTOM, *_after_resources("c = PipelineConfig(2, 4096)"), "TS907",
     "TypeError", "PipelineConfig.__init__() missing 3 required positional arguments"),
    # a resource's own __init__: bound to its parameters
    ("own_init_missing", CUSTOM, 'OutGmem(name="out", dst=None)', 'OutGmem(name="out")', "TS907",
     "TypeError", "OutGmem.__init__() missing 1 required positional argument: 'dst'"),
    ("own_init_kw_typo", CUSTOM, 'OutGmem(name="out", dst=None)', 'OutGmem(name="out", dts=None)', "TS907",
     "TypeError", "OutGmem.__init__() missing 1 required positional argument: 'dst'"),
    ("own_init_too_many", CUSTOM, 'OutGmem(name="out", dst=None)', 'OutGmem(None, None, name="out")', "TS907",
     "TypeError", "OutGmem.__init__() takes 2 positional arguments but 3 were given"),
    # TS112: schedule= that is no captured schedule
    ("schedule_not_called", BASE, "schedule=load_schedule(inp, smem)", "schedule=load_schedule", "TS112",
     "AttributeError", "'function' object has no attribute 'schedule_list'"),
    ("schedule_is_int", BASE, "schedule=load_schedule(inp, smem)", "schedule=4", "TS112",
     "AttributeError", "'int' object has no attribute 'schedule_list'"),
    # TS360: a graph value that is no list of resources
    ("graph_value_resource", BASE, "smem: [inp],", "smem: inp,", "TS360",
     "TypeError", "'InGmem' object is not iterable"),
    ("graph_value_int", BASE, "smem: [inp],", "smem: 3,", "TS360", "TypeError", "'int' object is not iterable"),
    ("graph_value_none", BASE, "smem: [inp],", "smem: None,", "TS360",
     "TypeError", "'NoneType' object is not iterable"),
    ("graph_element_int", BASE, "smem: [inp],", "smem: [inp, 3],", "TS360",
     "AttributeError", "'int' object has no attribute 'name'"),
    ("graph_not_a_dict", BASE, "resource_dependency_graph=graph,", "resource_dependency_graph=[graph],",
     "TS360", "AttributeError", "'list' object has no attribute 'items'"),
]

# (id, base, old, new, code, reference exception, reference message): ts-lint only (the
# runtime sees Python's plain exception there)
LINT_ONLY = [
    ("int_subscript", BASE, "num_stages=stages, num_bytes=4096,", "num_stages=stages[0], num_bytes=4096,",
     "TS964", "TypeError", "'int' object is not subscriptable"),
    ("int_call", BASE, "CooperativeGroup(Agent.Thread, consumer)", "CooperativeGroup(Agent.Thread, consumer())",
     "TS964", "TypeError", "'int' object is not callable"),
    ("int_unpack", BASE, "alloc = SmemAllocator();", "lo, hi = stages; alloc = SmemAllocator();",
     "TS964", "TypeError", "cannot unpack non-iterable int object"),
    ("int_iterated", BASE, "alloc = SmemAllocator();", "alloc = [s for s in stages]; alloc = SmemAllocator();",
     "TS964", "TypeError", "'int' object is not iterable"),
    ("int_for_loop", BASE, "alloc = SmemAllocator();", "for s in stages: pass\n    alloc = SmemAllocator();",
     "TS964", "TypeError", "'int' object is not iterable"),
]

_PARTIAL_BODY = '''
import functools


def _pad_body(n, _r):
    with domain_loop(n):
        pass

'''
_PARTIAL = BASE.replace("\ndef build(", _PARTIAL_BODY + "\ndef build(").replace(
    '''    @schedule
    def pad(_r):
        with domain_loop(1):
            pass
''', '''    pad = schedule(functools.partial(_pad_body, 1))
''').replace("        Task(name=\"LoadTask\"", "        Task(name=\"Pad\", src_resources=[], dst_resources=[], "
             "warp_idx=5, num_warps=3,\n             schedule=pad(inp)),\n        Task(name=\"LoadTask\"")
assert "schedule=pad(inp)" in _PARTIAL and "functools.partial(_pad_body, 1)" in _PARTIAL
DEFECTS.append(("partial_schedule", _PARTIAL, "schedule=pad(inp)),", "schedule=pad(inp)),", "TS138",
                "AttributeError", "'functools.partial' object has no attribute '__name__'"))

# valid controls: both front ends silent, the reference accepts
CONTROLS = [
    ("base", BASE, None, None),
    ("own_init", CUSTOM, None, None),
    ("forwarded_base_kw", CUSTOM, 'OutGmem(name="out", dst=None)', 'OutGmem(name="out", dst=None, is_barrier=False)'),
    # the reference's parameter name of consumer_work is `method`
    ("consumer_work_method_kw", BASE, "    @consumer_work(returns=val)\n    def read_smem(self, stage_info):",
     "    def read_smem(self, stage_info):\n        return 0\n    read_smem = consumer_work(method=read_smem, "
     "returns=val)\n    def _unused(self, stage_info):"),
    ("graph_tuple", BASE, "smem: [inp],", "smem: (inp,),"),
    # a named partial is a schedule like any other
    ("partial_named", _PARTIAL, "    pad = schedule(functools.partial(_pad_body, 1))\n",
     "    body = functools.partial(_pad_body, 1)\n    body.__name__ = 'pad'\n    pad = schedule(body)\n"),
    # a TypeError that a handler catches (a newer keyword tried first)
    ("caught_type_error", BASE, 'self._a = SmemAllocation("smem_data", size_bytes=4096)',
     'try:\n            self._a = SmemAllocation("smem_data", size_bytes=4096, offset=0)\n'
     '        except TypeError:\n            self._a = SmemAllocation("smem_data", size_bytes=4096)'),
    ("caught_subscript", BASE, "num_stages=stages, num_bytes=4096,",
     "num_stages=first(stages), num_bytes=4096,"),
    ("star_kwargs", BASE, 'SmemAllocation("smem_data", size_bytes=4096)',
     'SmemAllocation("smem_data", **{"size_bytes": 4096})'),
]
_FIRST = '''
def first(v):
    try:
        return v[0]
    except TypeError:
        return v

'''


def _program(base, old, new):
    if old is None:
        return base
    assert base.count(old) == 1, old
    src = base.replace(old, new)
    if "first(stages)" in src:
        src = src.replace("\ndef build(", _FIRST + "\ndef build(")
    return src


def _line(src, text):
    return next(i for i, line in enumerate(src.splitlines(), 1) if text in line)


def _errors(diags):
    return sorted({(d.code, d.range.line) for d in diags if d.severity is Severity.ERROR})


def _lint(src):
    from ts_lint.cli import check_source
    return check_source(src, "program.py").diagnostics


@pytest.mark.parametrize("case", DEFECTS, ids=[c[0] for c in DEFECTS])
def test_both_front_ends_report_the_defect_at_its_line(case):
    name, base, old, new, code, _exc, _msg = case
    src = _program(base, old, new)
    if name.startswith("forwarded_task"):
        line = _line(src, "TaggedTask(tag=1")      # the construction, where the keywords are written
    else:
        line = _line(src, new.splitlines()[-1] if name != "partial_schedule" else "schedule=pad(inp)")
    if name == "producer_work_kw":
        line = _line(src, "@producer_work(work_attr")
    if name == "manager_method_kw":
        line = _line(src, "get_marmaid_string_dependency_graph(dir=")
    if name == "schedule_no_fn":
        line = _line(src, "@schedule()")
    assert _errors(run_source(src)) == [(code, line)]
    assert _errors(_lint(src)) == [(code, line)]


@pytest.mark.parametrize("case", LINT_ONLY, ids=[c[0] for c in LINT_ONLY])
def test_ts_lint_reports_an_operation_on_a_number(case):
    name, base, old, new, code, _exc, msg = case
    src = _program(base, old, new)
    line = _line(src, new.splitlines()[0])
    found = [d for d in _lint(src) if d.severity is Severity.ERROR]
    assert [(d.code, d.range.line) for d in found] == [(code, line)]
    assert found[0].message == f"{msg}: Python raises TypeError here"
    with pytest.raises(TypeError, match=msg.replace("(", r"\(")):
        run_source(src)       # Python's own exception at run time


@pytest.mark.parametrize("case", CONTROLS, ids=[c[0] for c in CONTROLS])
def test_valid_controls_are_silent(case):
    _name, base, old, new = case
    src = _program(base, old, new)
    assert _errors(run_source(src)) == []
    assert _errors(_lint(src)) == []


def test_messages_are_the_same_from_both_front_ends():
    for name, base, old, new, code, _exc, _msg in DEFECTS:
        src = _program(base, old, new)
        rt = [d.message for d in run_source(src) if d.code == code]
        li = [d.message for d in _lint(src) if d.code == code]
        assert rt == li, name


def test_a_number_operation_that_may_not_be_reached_is_not_judged():
    # a branch ts-lint cannot decide that may return first: the subscript may never run
    src = BASE.replace("def build(stages=2, consumer=128):\n", "def build(stages=2, consumer=128):\n"
                       "    import os\n    if os.environ.get('X'):\n        return None\n    stages[0]\n")
    assert _errors(_lint(src)) == []
    # in the __main__ block's run, a command-line value may have another type
    main = BASE.replace('if __name__ == "__main__":  # pragma: no cover\n',
                        'if __name__ == "__main__":  # pragma: no cover\n    n = 3\n    n[0]\n')
    assert main != BASE and _errors(_lint(main)) == []


def test_an_opaque_class_decorator_or_dunder_new_is_not_bound():
    # a class decorator ts-lint does not model may replace __init__: not judged
    deco = CUSTOM.replace("@dataclass(kw_only=True)\nclass OutGmem", "@keep\n@dataclass(kw_only=True)\nclass OutGmem")
    deco = deco.replace("\n@keep\n", "\ndef keep(cls):\n    return cls\n\n\n@keep\n", 1)
    bad = deco.replace('OutGmem(name="out", dst=None)', 'OutGmem(name="out")')
    assert "TS907" not in {c for c, _ in _errors(_lint(bad))}


def test_the_named_tuple_probe_swapped_fields():
    # /tmp/probeB/copy_c2b_s8_d_namedtuple_asdict.py, reduced: Task(**spec._asdict()) with
    # the schedule and num_warps fields swapped (the reference: AttributeError "'int' object
    # has no attribute 'schedule_list'"); one report, then the run stops, as Python's does
    src = BASE.replace('''    tasks = [
        Task(name="StoreTask", src_resources=[smem], dst_resources=[out], warp_idx=0, num_warps=4,
             schedule=store_schedule(smem, out)),
        Task(name="LoadTask", src_resources=[inp], dst_resources=[smem], warp_idx=4, num_warps=1,
             schedule=load_schedule(inp, smem)),
    ]''', '''    from typing import NamedTuple

    class Spec(NamedTuple):
        name: str
        src_resources: list
        dst_resources: list
        schedule: object
        num_warps: int

    specs = [("StoreTask", [smem], [out], 4, store_schedule(smem, out)),
             ("LoadTask", [inp], [smem], 1, load_schedule(inp, smem))]
    tasks, warp = [], 0
    for s in map(Spec._make, specs):
        tasks.append(Task(warp_idx=warp, **s._asdict()))
        warp += 4''')
    line = _line(src, "tasks.append(Task(")
    assert _errors(_lint(src)) == [("TS112", line)]
    assert _errors(run_source(src)) == [("TS112", line)]


@pytest.mark.reference
def test_the_reference_rejects_each_defect_and_accepts_each_control():
    from oracle import reference_available
    if not reference_available():
        pytest.skip("reference not installed")
    from oracle_batch import reference_verdicts
    bad = [(c[0], _program(c[1], c[2], c[3]), c[5], c[6]) for c in DEFECTS + LINT_ONLY]
    good = [(c[0], _program(c[1], c[2], c[3])) for c in CONTROLS]
    verdicts = reference_verdicts([src for _, src, _, _ in bad] + [src for _, src in good])
    for (name, _src, exc, msg), v in zip(bad, verdicts):
        assert not v.accepted, name
        assert v.exc_type == exc and msg in v.message, (name, v.exc_type, v.message)
    for (name, _src), v in zip(good, verdicts[len(bad):]):
        assert v.accepted, (name, v.exc_type, v.message)


def test_a_misspelt_keyword_of_dataclasses_field_is_a_type_error_at_import():
    from ts_lint.api import lint_source
    # a resource class's `field(...)`: Python binds it when the class body runs (import)
    src = ("from dataclasses import dataclass, field\nfrom ts_runtime.resources import MemoryResource\n\n\n"
           "@dataclass(kw_only=True)\nclass Res(MemoryResource):\n"
           "    ok: object = field(init=False, default=None)\n"
           "    bad: object = field(iit=False, default=None)\n")
    got = [(d.code, d.range.line, d.message) for d in lint_source(src, "m.py") if d.severity.name == "ERROR"]
    assert got == [("TS907", 8, "field(...): got an unexpected keyword argument 'iit' (Python raises TypeError "
                                "here)")]

