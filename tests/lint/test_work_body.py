"""ts-lint in the bodies of the work methods a kernel traces (ts_lint/extract/workbody.py):
TS963 on `stage_info.<name>`, TS966 on `self.<name>`, TS907 on `self.helper(...)`, only
where the body certainly gets there and what `self` has is certainly known.

The errors themselves are checked against the reference in
tests/codegen/test_work_body_reference.py; these pin where ts-lint stays silent.
"""
from __future__ import annotations

import pytest

from ts_runtime.diagnostics import Severity
from ts_runtime.testing import expected_findings, run_source

from ts_lint.api import lint_source

from codegen.rule_programs import simple

_PUT = ("    def put(self, stage_info: StageInfo, v: cutlass.Int32) -> None:\n"
        "        self.out[stage_info.loop_offset] = v\n")


def _put(body: str, extra: str = "") -> str:
    src = simple()
    assert _PUT in src
    return src.replace(_PUT, "    def put(self, stage_info: StageInfo, v: cutlass.Int32) -> None:\n" + body + extra, 1)


def _errors(src: str) -> set:
    return {(d.code, d.range.line) for d in lint_source(src, "kernel.py") if d.severity is Severity.ERROR}


def _check(src: str):
    assert _errors(src) == set(expected_findings(src))


# ------------------------------------------------------------------ reported
def test_a_misspelt_attribute_with_the_closest_name_and_a_fix():
    src = _put("        self.outt[stage_info.loop_offset] = v  # expect: TS966\n")
    _check(src)
    d = next(d for d in lint_source(src, "kernel.py") if d.code == "TS966")
    assert d.message.startswith("'Dst' object has no attribute 'outt'; did you mean 'out'?")
    assert "work method 'Dst.put'" in d.message
    assert d.fix is not None and d.fix.edits[0].new_text == "out"


def test_a_misspelt_stage_info_field():
    src = _put("        self.out[stage_info.loop_ofset] = v  # expect: TS963\n")
    _check(src)
    d = next(d for d in lint_source(src, "kernel.py") if d.code == "TS963")
    assert "'StageInfo' object has no attribute 'loop_ofset'; did you mean 'loop_offset'?" in d.message


def test_every_certain_read_after_a_known_condition_and_a_loop():
    _check(_put("        if 2 > 1:\n"
                "            x = self.outt  # expect: TS966\n"
                "        for i in range(2):\n"
                "            y = stage_info.stage_index  # expect: TS963\n"
                "        self.out[stage_info.loop_offset] = v\n"))


def test_a_helper_called_with_too_many_arguments():
    _check(_put("        self.out[self._index(stage_info, 1)] = v  # expect: TS907\n",
                "\n    def _index(self, stage_info):\n        return stage_info.loop_offset\n"))


def test_a_helper_of_a_helper_is_followed_with_its_stage_info():
    _check(_put("        self.out[self._a(stage_info)] = v\n",
                "\n    def _a(self, si):\n        return self._b(info=si)\n"
                "\n    def _b(self, info):\n        return info.loop_ofset  # expect: TS963\n"))


def test_a_comprehension_that_certainly_runs():
    _check(_put("        xs = [self.outt[i] for i in range(2)]  # expect: TS966\n"
                "        self.out[stage_info.loop_offset] = v\n"))


# ------------------------------------------------------------------ not reported
@pytest.mark.parametrize("body", [
    # a condition ts-lint cannot decide (the DSL may trace both branches: not judged)
    "        if stage_info.loop_offset > 0:\n            self.outt[0] = v\n",
    # after a branch that may return
    "        if stage_info.loop_offset > 0:\n            return\n        self.outt[0] = v\n",
    # in a loop that may not run, a try, a generator expression, a lambda
    "        for i in range(stage_info.loop_end):\n            self.outt[i] = v\n",
    "        try:\n            self.outt[0] = v\n        except AttributeError:\n            pass\n",
    "        g = (self.outt for _ in range(2))\n",
    "        f = lambda: self.outt\n",
    # the name is rebound: not the StageInfo / not the resource any more
    "        stage_info = self\n        x = stage_info.out\n",
])
def test_reads_that_may_not_run_are_not_judged(body):
    assert not {c for c, _ in _errors(_put(body))} & {"TS963", "TS966"}


@pytest.mark.parametrize("edit", [
    # set by another method, by the kernel on the object, through setattr with its name,
    # declared as a field without a default, a class attribute, a property
    lambda s: _put("        self.extra[0] = v\n", "\n    def setup(self):\n        self.extra = None\n"),
    lambda s: _put("        self.extra[0] = v\n").replace(
        '    dst = Dst(name="dst", out=out)\n', '    dst = Dst(name="dst", out=out)\n    dst.extra = out\n', 1),
    lambda s: _put("        self.extra[0] = v\n").replace(
        '    dst = Dst(name="dst", out=out)\n', '    dst = Dst(name="dst", out=out)\n'
        '    setattr(dst, "extra", out)\n', 1),
    lambda s: _put("        self.extra[0] = v\n").replace("    out: cute.Tensor = None\n",
                                                          "    out: cute.Tensor = None\n"
                                                          "    extra: object = field(init=False)\n", 1).replace(
        "from dataclasses import dataclass\n", "from dataclasses import dataclass, field\n", 1),
    lambda s: _put("        self.extra[0] = v\n").replace("    out: cute.Tensor = None\n",
                                                          "    out: cute.Tensor = None\n    if True:\n"
                                                          "        extra = None\n", 1),
    lambda s: _put("        self.extra[0] = v\n", "\n    @property\n    def extra(self):\n        return self.out\n"),
    # the MemoryResource base's attributes (also those only the reference has)
    lambda s: _put("        x = (self.name, self.pipeline, self.consumer_state)\n"
                   "        self.out[stage_info.loop_offset] = v\n"),
])
def test_attributes_that_may_exist_are_not_reported(edit):
    assert "TS966" not in {c for c, _ in _errors(edit(None))}


@pytest.mark.parametrize("edit", [
    # hooks that decide attributes at run time
    lambda s: s.replace("    out: cute.Tensor = None\n",
                        "    out: cute.Tensor = None\n\n    def __getattr__(self, name):\n        return 0\n", 1),
    lambda s: s.replace("    out: cute.Tensor = None\n", "    out: cute.Tensor = None\n    __slots__ = ()\n", 1),
    # a computed setattr or __dict__ anywhere in the program
    lambda s: s.replace('    dst = Dst(name="dst", out=out)\n',
                        '    dst = Dst(name="dst", out=out)\n    for k in ("a",):\n        setattr(dst, k, 1)\n', 1),
    lambda s: s.replace('    dst = Dst(name="dst", out=out)\n',
                        '    dst = Dst(name="dst", out=out)\n    dst.__dict__.update(a=1)\n', 1),
    # a class decorator ts-lint does not know, a base it cannot see
    lambda s: s.replace("@dataclass(kw_only=True)\nclass Dst(", "@register\n@dataclass(kw_only=True)\nclass Dst(", 1)
    .replace("\n\n@dataclass(kw_only=True)\nclass Src(",
             "\n\ndef register(c):\n    return c\n\n\n@dataclass(kw_only=True)\nclass Src(", 1),
    lambda s: s.replace("class Dst(MemoryResource):", "class Dst(MemoryResource, SomeMixin):", 1).replace(
        "from ts_runtime.task import Task\n", "from ts_runtime.task import Task\nfrom elsewhere import SomeMixin\n", 1),
])
def test_classes_whose_attributes_are_not_known_are_not_judged(edit):
    src = edit(_put("        self.outt[stage_info.loop_offset] = v\n"))
    assert "TS966" not in {c for c, _ in _errors(src)}


def test_a_name_the_framework_sets_is_not_judged(monkeypatch):
    """`self.<name>` for a name ts_runtime's resource base has or its modules set on an
    object (the drop-in's view of what the reference's framework sets) is not reported."""
    from ts_lint.extract import workbody
    src = _put("        self.outt[stage_info.loop_offset] = v  # expect: TS966\n")
    _check(src)
    monkeypatch.setattr(workbody, "base_attribute_names", lambda: frozenset({"outt"}))
    assert "TS966" not in {c for c, _ in _errors(src + "\n")}


@pytest.mark.parametrize("extra,call", [
    # a decorator that may change the signature, *args at the call, a data attribute
    ("\n    @some_decorator\n    def _index(self, stage_info):\n        return 0\n", "self._index()"),
    ("\n    def _index(self, stage_info):\n        return 0\n", "self._index(*())"),
    ("\n    @staticmethod\n    def _index(stage_info):\n        return 0\n", "self._index(stage_info)"),
    ("\n    def _index(self, stage_info, n=1):\n        return 0\n", "self._index(stage_info, n=2)"),
])
def test_helper_calls_that_may_bind_are_not_reported(extra, call):
    src = _put(f"        self.out[{call}] = v\n", extra).replace(
        "from ts_runtime.task import Task\n", "from ts_runtime.task import Task\nfrom elsewhere import some_decorator\n", 1)
    assert "TS907" not in {c for c, _ in _errors(src)}


def test_valid_program_is_clean():
    assert _errors(simple()) == set()


# ------------------------------------------------------------------ TS314's related location
def test_ts314_points_at_the_returns_keyword_in_both_front_ends():
    src = simple().replace("    @consumer_work(returns=v)\n", '    @consumer_work(returns="vv")\n', 1)
    line = src.splitlines().index('    @consumer_work(returns="vv")') + 1
    for diags in (lint_source(src, "kernel.py"), run_source(src)):
        d = next(d for d in diags if d.code == "TS314")
        assert [(r.range.line, r.message) for r in d.related] == [(line, "returns= is declared here")]
