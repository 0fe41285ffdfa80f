"""ts-lint recognises TS by qualified name: the same answer as libcst's QualifiedNameProvider.

ts-lint's interpreter binds every import to the qualified name it imports and follows it
through assignments, parameters and calls (`ts_lint/extract/names.py`). This test holds it
to libcst's `QualifiedNameProvider` on every callee and decorator of real programs (the
examples, the tutorial-style programs, and one module per import style): where the
provider says a callee is a TS name (`ts_runtime...` or
`cutlass.experimental.task_scheduling...`), the interpreter evaluated it to that TS object;
where the interpreter produced a TS object, the provider names the same symbol. A spelling
match (`schedule` defined locally, `ts.schedule` on an unrelated module) is TS for neither.
"""
from __future__ import annotations

import enum
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider, QualifiedNameProvider, QualifiedNameSource

from ts_lint.extract import names as N
from ts_lint.extract.interpreter import Interpreter
from ts_lint.extract.common import BuiltinNS
from ts_lint.extract.values import BuiltinFunc, ClassVal

ROOT = Path(__file__).resolve().parents[2]


def provider_names(source: str) -> dict:
    """(line, column) of each callee / decorator the provider resolves to an imported name
    -> the TS symbol it is (None: an import, but not TS)."""
    wrapper = MetadataWrapper(cst.parse_module(source))
    out = {}

    class Visit(cst.CSTVisitor):
        METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider)

        def _add(self, node):
            if not isinstance(node, (cst.Name, cst.Attribute)):
                return
            start = self.get_metadata(PositionProvider, node).start
            imported = [q.name for q in self.get_metadata(QualifiedNameProvider, node, set())
                        if q.source is QualifiedNameSource.IMPORT]
            if not imported:
                return      # local or computed (`super().__init__`): the provider cannot say
            syms = {N.ts_symbol(q) for q in imported}
            syms.discard(None)
            out[(start.line, start.column)] = syms.pop() if len(syms) == 1 else None

        def visit_Call(self, node):
            self._add(node.func)

        def visit_Decorator(self, node):
            self._add(node.decorator.func if isinstance(node.decorator, cst.Call) else node.decorator)

    wrapper.visit(Visit())
    return out


def _ts_name(it, value):
    """The TS symbol an interpreter value stands for, or None."""
    for name, sym in it.ts.symbols.items():
        if sym is value:
            return name
        if isinstance(sym, BuiltinNS):
            for attr, member in sym.attrs.items():
                if member is value:
                    return f"{name}.{attr}"
    if isinstance(value, ClassVal) and value.builtin not in (None, "object") and value.module != "__main__":
        return value.builtin
    if isinstance(value, BuiltinFunc) and value.qualname.split(".")[0] in N.TS_SYMBOLS:
        return value.qualname
    if isinstance(value, enum.Enum) and type(value).__name__ in N.TS_SYMBOLS:
        return f"{type(value).__name__}.{value.name}"
    return None


def interpreter_names(source: str, monkeypatch) -> dict:
    """(line, column) of each Name / Attribute ts-lint evaluated -> the TS symbol of its value."""
    from ts_lint.api import analyze_source, clear_caches
    seen: dict = {}
    original = Interpreter.eval

    def recording_eval(self, node, scope):
        value = original(self, node, scope)
        if isinstance(node, (cst.Name, cst.Attribute)):
            r = self.rng(node)
            name = _ts_name(self, value)
            key = (r.line, r.column)
            if name is not None or key not in seen:
                seen[key] = name
        return value

    monkeypatch.setattr(Interpreter, "eval", recording_eval)
    clear_caches()
    try:
        analyze_source(source, "program.py", run_checker=False)
    finally:
        clear_caches()
    return seen


def compare(source: str, monkeypatch) -> int:
    """Asserts agreement on every callee / decorator the interpreter evaluated; returns how
    many TS callees were compared."""
    expected = provider_names(source)
    got = interpreter_names(source, monkeypatch)
    compared = 0
    for key, sym in expected.items():
        if key not in got:
            continue        # code the interpreter never ran (e.g. an unused helper)
        if sym is not None or got[key] is not None:
            assert got[key] == sym, (key, sym, got[key])
            compared += 1
    return compared


# the examples, the Hopper examples and every fourth single-defect variant in examples/bad
PROGRAMS = (sorted((ROOT / "examples").glob("*.py")) + sorted((ROOT / "examples" / "hopper").glob("*.py"))
            + sorted((ROOT / "examples" / "bad").glob("*.py"))[::4])


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: str(p.relative_to(ROOT)))
def test_examples_agree_with_the_provider(path, monkeypatch):
    assert compare(path.read_text(), monkeypatch) >= 5


BODY = '''
@{dataclass}
class Src({MemoryResource}):
    @{producer_work}
    def put(self, stage_info) -> None:
        pass


@{schedule}
def body(src: {MemoryResource}) -> None:
    with {domain_loop}(0, 4, 1):
        src.put()


captured = body(Src(name="src"))
'''

STYLES = {
    "from-imports": ("from dataclasses import dataclass\n"
                     "from cutlass.experimental.task_scheduling import schedule, domain_loop\n"
                     "from cutlass.experimental.task_scheduling.resources import MemoryResource, producer_work\n",
                     dict(dataclass="dataclass", MemoryResource="MemoryResource", producer_work="producer_work",
                          schedule="schedule", domain_loop="domain_loop")),
    "module-alias": ("import dataclasses\nimport cutlass.experimental.task_scheduling as ts\n"
                     "import cutlass.experimental.task_scheduling.resources as R\n",
                     dict(dataclass="dataclasses.dataclass", MemoryResource="R.MemoryResource",
                          producer_work="R.producer_work", schedule="ts.schedule", domain_loop="ts.domain_loop")),
    "renamed": ("from dataclasses import dataclass as dc\n"
                "from ts_runtime import schedule as sched, domain_loop as loop\n"
                "from ts_runtime.resources import MemoryResource as MR, producer_work as pw\n",
                dict(dataclass="dc", MemoryResource="MR", producer_work="pw", schedule="sched", domain_loop="loop")),
    "dotted-import": ("import dataclasses\nimport ts_runtime\nimport ts_runtime.resources\n",
                      dict(dataclass="dataclasses.dataclass", MemoryResource="ts_runtime.resources.MemoryResource",
                           producer_work="ts_runtime.resources.producer_work", schedule="ts_runtime.schedule",
                           domain_loop="ts_runtime.domain_loop")),
}


@pytest.mark.parametrize("style", sorted(STYLES))
def test_import_styles_agree_with_the_provider(style, monkeypatch):
    header, names = STYLES[style]
    source = header + BODY.format(**names)
    # the TS callees and decorators: @producer_work, @schedule, domain_loop(...)
    assert compare(source, monkeypatch) == 3


def test_spelling_alone_is_not_ts(monkeypatch):
    # a local `schedule` and an unrelated module named `ts`: neither the provider nor the
    # interpreter calls them TS, so nothing is compared and nothing is captured
    source = '''
import json as ts


def schedule(fn):
    return fn


@schedule
def body(src) -> None:
    with ts.domain_loop(0, 4, 1):
        src.put()
'''
    assert compare(source, monkeypatch) == 0
    assert all(v is None for v in provider_names(source).values())
    assert all(v is None for v in interpreter_names(source, monkeypatch).values())
