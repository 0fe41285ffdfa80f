"""TS238 (a resource whose own `__init__` skips `super().__init__`) on kernels compiled by
the reference. Without the base part the object keeps the class defaults of the
MemoryResource fields; the reference builds every one of these programs and fails only
while tracing a kernel whose work calls route values through the missing
`producer_vars` / `consumer_vars` (AttributeError). ts reports TS238 as an error at the
construction exactly for those, and as a warning for a resource nothing reads the base
part of (a trace resource with argument-less producer work: the reference compiles it).

The programs are tests/codegen/rule_programs.py's one-task kernel with an own
`__init__` on one resource, and with a third, trace-like resource.
"""
from __future__ import annotations

import pathlib

import pytest

from ts_runtime.diagnostics import Severity
from ts_runtime.testing import run_source

from ts_lint.api import lint_source

from .rule_programs import simple
from .reference_compile import compile_problems

_DST_INIT = '''\
class Dst(MemoryResource):
    out: cute.Tensor = None

    def __init__(self, out=None, **kwargs) -> None:
        {SUPER}self.out = out
'''
_SRC_INIT = '''\
    def __init__(self, **kwargs) -> None:
        {SUPER}self.v = TaskLocalVariable(dtype=cutlass.Int32, default=cutlass.Int32(0))
        self.w = TaskLocalVariable(dtype=cutlass.Int32, default=cutlass.Int32(0))

    def __post_init__(self) -> None:
'''
_MARK = '''\
@dataclass(kw_only=True)
class Mark(MemoryResource):
    def __init__(self, **kwargs) -> None:
        {SUPER}self.seen = 0

    @producer_work
    @cute.jit
    def tick(self, stage_info: StageInfo) -> None:
        pass


@dataclass(kw_only=True)
class Dst(MemoryResource):
'''


def _dst(super_init: bool) -> str:
    src = simple()
    old = "class Dst(MemoryResource):\n    out: cute.Tensor = None\n"
    assert old in src
    return src.replace(old, _DST_INIT.format(SUPER="super().__init__(**kwargs)\n        " if super_init else ""))


def _src(super_init: bool) -> str:
    src = simple()
    old = "    def __post_init__(self) -> None:\n"
    assert src.count(old) == 1
    return src.replace(old, _SRC_INIT.format(SUPER="super().__init__(**kwargs)\n        " if super_init else ""))


def _mark(super_init: bool) -> str:
    src = simple()
    for old, new in (
            ("@dataclass(kw_only=True)\nclass Dst(MemoryResource):\n",
             _MARK.format(SUPER="super().__init__(**kwargs)\n        " if super_init else "")),
            ('    dst = Dst(name="dst", out=out)\n', '    dst = Dst(name="dst", out=out)\n    mark = Mark(name="mark")\n'),
            ("    def sched(src: Src, dst: Dst) -> None:\n", "    def sched(src: Src, dst: Dst, mark: Mark) -> None:\n"),
            ("            dst.put(v=v)", "            dst.put(v=v)\n            mark.tick()"),
            ("dst_resources=[dst]", "dst_resources=[dst, mark]"),
            ("schedule=sched(src, dst))", "schedule=sched(src, dst, mark))"),
            ("resource_dependency_graph={dst: [src]}", "resource_dependency_graph={dst: [src], mark: [src]}")):
        assert old in src, old
        src = src.replace(old, new)
    return src


def _persistent(super_init: bool) -> str:
    """examples/03_copy_persistent_skip.py (a static persistent copy) with an own
    `__init__` on its resource: the resource's work takes no routed value, but the
    persistent task routes the tile state through its variables."""
    src = (pathlib.Path(__file__).resolve().parents[2] / "examples" / "03_copy_persistent_skip.py").read_text()
    old = "    dst: cute.Tensor = None\n\n    @producer_work\n"
    assert old in src
    init = ("    dst: cute.Tensor = None\n\n"
            "    def __init__(self, src=None, dst=None, **kwargs) -> None:\n"
            "        {SUPER}self.src = src\n"
            "        self.dst = dst\n\n"
            "    @producer_work\n")
    return src.replace(old, init.format(SUPER="super().__init__(**kwargs)\n        " if super_init else ""), 1)


# name -> (program, the construction TS238 points at or None, whether it is an error)
PROGRAMS = {
    "dst-routed-input": (_dst(False), 'dst = Dst(name="dst", out=out)', True),
    "dst-with-super": (_dst(True), None, False),
    "src-returned-values": (_src(False), 'src = Src(name="src")', True),
    "src-with-super": (_src(True), None, False),
    "trace-argless-work": (_mark(False), 'mark = Mark(name="mark")', False),
    "trace-with-super": (_mark(True), None, False),
    "persistent-argless-work": (_persistent(False), 'row_copy = RowCopy(name="row_copy", src=src, dst=dst)', True),
    "persistent-with-super": (_persistent(True), None, False),
}
NAMES = sorted(PROGRAMS)


def _line(src: str, text: str) -> int:
    return src[:src.index(text)].count("\n") + 1


def _ts238(diags) -> set:
    return {(d.range.line, d.severity) for d in diags if d.code == "TS238"}


@pytest.mark.parametrize("name", NAMES)
def test_both_front_ends_report_ts238_where_the_kernel_needs_the_base(name):
    src, at, error = PROGRAMS[name]
    want = set() if at is None else {(_line(src, at), Severity.ERROR if error else Severity.WARNING)}
    linted = lint_source(src, "kernel.py")
    assert _ts238(linted) == want
    assert not [d for d in linted if d.severity is Severity.ERROR and d.code != "TS238"]
    traced = run_source(src)
    assert _ts238(traced) == want
    assert not [d for d in traced if d.severity is Severity.ERROR and d.code != "TS238"]


@pytest.mark.reference
def test_reference_compiles_exactly_the_programs_without_a_ts238_error():
    problems = compile_problems({n: PROGRAMS[n][0] for n in NAMES}, lambda n: None if not PROGRAMS[n][2] else (
        lambda v: v.exc_type == "AttributeError" and "_vars'" in v.message))
    assert not problems, "\n".join(problems)
