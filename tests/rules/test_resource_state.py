"""TS237: work methods that use resource state their task has not set up.

The attribute analysis (`model/attr_effects.py`) on method bodies, and whole programs
through both front ends (the DSL and ts-lint), asserting the code and the line.
"""
import ast
import textwrap

import pytest

from ts_runtime.model.attr_effects import NOT_A_METHOD, function_effects, method_effects, resolve
from ts_runtime.rules.resource_state import _STAGED, _STAGED_SUBS
from ts_runtime.rules.roles import pipeline_program
from ts_runtime.testing import codes_and_lines, expected_findings, run_source


def _fx(src):
    return method_effects(textwrap.dedent(src))


def test_uses_writes_calls_and_tests():
    e = _fx('''
        @cute.jit
        def mma(self, stage_info, desc):
            ptr = make_ptr(self.raw_addr, 4)          # an argument is a use
            self.acc = self.acc_view[stage_info.stage_idx]
            self.count += self.step * 2
            self._helper(stage_info)
            if self.bias is not None:
                add(self.bias)
            return self.holder.view.subview(0) if self.holder.ready else None
    ''')
    # raw reads; resolve() drops the tested and the written ones
    assert e.uses == {"raw_addr", "acc_view", "count", "step", "holder", "bias"}
    assert e.writes == {"acc", "count"}
    assert e.calls == {"_helper"}
    assert e.tested == {"bias", "holder"}
    assert e.foreign == {("holder", "view"), ("holder", "ready")}


def test_a_branch_of_a_const_expr_test_is_not_a_use():
    # the DSL traces only the branch the constant picks: `self.gB` may never be read (a
    # resource whose gB is None when the TMA branch is the one built: no TS237), while
    # `self.buf`, read by both branches, is read whichever is picked
    e = _fx('''
        @cute.jit
        def load(self, stage_info):
            if cutlass.const_expr(USE_TMA):
                copy(self.tma_desc, self.buf)
            else:
                v = self.gB.load(0)
                self.buf.store(v)
            return self.view
    ''')
    assert e.maybe == {"tma_desc", "gB", "buf"} and e.uses == {"buf", "view"}
    assert resolve("load", lambda m: e if m == "load" else None).uses == {"buf", "view"}


def test_setattr_is_a_write_and_a_def_without_self_is_skipped():
    assert _fx('''
        def init(self, stage_info):
            setattr(self, "view", 1)
            object.__setattr__(self, "other", 2)
    ''').writes == {"view", "other"}
    assert _fx("def f():\n    return 1\n") is None
    assert method_effects("def broken(:\n") is None


def test_resolve_follows_self_calls_once():
    bodies = {
        "work": '''
            def work(self, stage_info):
                self._bind(stage_info)
                return self.view.subview(self.offset)
        ''',
        "_bind": '''
            def _bind(self, stage_info):
                self.view = make(self.base)
                self.work(stage_info)
        ''',
    }

    def lookup(name):
        if name in bodies:
            return function_effects(ast.parse(textwrap.dedent(bodies[name])).body[0])
        return NOT_A_METHOD

    r = resolve("work", lookup)
    assert r.writes == {"view"}
    assert r.uses == {"offset", "base"}      # view is set (by the helper) before the use
    assert not r.writes_any


def test_unknown_callee_may_set_anything():
    def lookup(name):
        if name == "work":
            return _fx("def work(self):\n    self.create()\n    return self.view.x\n")
        return None      # a method whose body is unknown (e.g. a ts_runtime base method)

    r = resolve("work", lookup)
    assert r.writes_any and not r.uses


def test_calling_a_data_attribute_uses_it():
    def lookup(name):
        if name == "work":
            return _fx("def work(self):\n    return self.fn(1)\n")
        return NOT_A_METHOD

    assert resolve("work", lookup).uses == {"fn"}


# ----------------------------------------------------------------------------- programs
def _both(src):
    """(code, line) of the errors from the DSL and from ts-lint."""
    from ts_lint.cli import check_source
    runtime = codes_and_lines(run_source(src))
    lint = codes_and_lines(check_source(src, "program.py").diagnostics)
    return runtime, lint


def _program(load, store=None, extra="", subs=()):
    kw = {} if store is None else {"store": store}
    return pipeline_program(load=load, extra=_STAGED + extra, subs=list(_STAGED_SUBS) + list(subs), **kw)


_LOAD_SET_IN_LOOP = '''\
with domain_loop(0, 4, 1):
    v = src.load()
    smem.init_view()
    smem.acquire()
    smem.fill(data=v)
    smem.commit()
'''

_INHERITED = '''

@dataclass(kw_only=True)
class Derived(Staged):
    @producer_work
    def fill_twice(self, stage_info, data):
        self.fill(stage_info, data)
        self.view[1] = data
'''


@pytest.mark.parametrize("load", [_LOAD_SET_IN_LOOP, '''\
with domain_loop(0, 4, 1):
    v = src.load()
    smem.acquire()
    smem.fill_checked(data=v)
    smem.fill(data=v)
    smem.commit()
'''], ids=["setter-in-loop-first", "conditional-setter-first"])
def test_a_setter_earlier_in_the_task_is_enough(load):
    runtime, lint = _both(_program(load))
    assert not {c for c, _ in runtime | lint if c == "TS237"}


def test_inherited_method_through_self_call():
    src = _program('''\
    with domain_loop(0, 4, 1):
        v = src.load()
        smem.acquire()
        smem.fill_twice(data=v)  # expect: TS237
        smem.commit()
    ''', extra=_INHERITED, subs=[("Staged(name=\"smem\"", "Derived(name=\"smem\"")])
    expected = set(expected_findings(src))
    runtime, lint = _both(src)
    assert expected <= runtime and expected <= lint
    assert {c for c, _ in runtime} == {c for c, _ in lint} == {"TS237"}


def test_another_tasks_setter_does_not_count():
    """Load sets smem.view; Store reads it through `out.staged.view` without its own
    setup call: the Store task is reported, at its work call."""
    src = pipeline_program(load='''\
    smem.init_view()
    with domain_loop(0, 4, 1):
        v = src.load()
        smem.acquire()
        smem.fill(data=v)
        smem.commit()
    ''', store='''\
    with domain_loop(0, 4, 1):
        smem.wait()
        v = smem.read()
        smem.release()
        out.store(data=v)  # expect: TS237
    ''', extra=_STAGED, subs=[(
        '    src, smem, out = Gmem(name="src"), Smem(name="smem", pipeline_config=cfg), Gmem(name="out")',
        '    src, smem = Gmem(name="src"), Staged(name="smem", pipeline_config=cfg)\n'
        '    out = Sink(name="out", staged=smem)')])
    expected = set(expected_findings(src))
    runtime, lint = _both(src)
    assert runtime == lint == expected


def test_field_set_in_init_is_not_unset():
    extra = '''

@dataclass(kw_only=True)
class Bound(Staged):
    def __post_init__(self):
        super().__post_init__()
        self.view = [0, 0]
'''
    src = _program('''\
    with domain_loop(0, 4, 1):
        v = src.load()
        smem.acquire()
        smem.fill(data=v)
        smem.commit()
    ''', extra=extra, subs=[("Staged(name=\"smem\"", "Bound(name=\"smem\"")])
    runtime, lint = _both(src)
    assert not {c for c, _ in runtime | lint if c == "TS237"}


def test_fix_calls_the_setup_method_before_the_domain_loop():
    """INVALID examples on the call's own resource carry a fix (both front ends); after
    applying it nothing is reported."""
    from ts_lint.api import lint_source
    from ts_runtime.rules.registry import RULES, load_all
    from ts_runtime.diagnostics import Severity
    from test_fixes import apply_edits
    load_all()
    for i, program in enumerate(RULES["TS237"].INVALID[:2]):
        path = f"<TS237-invalid-{i}>"
        (d,) = [d for d in lint_source(program, path) if d.code == "TS237"]
        assert d.fix is not None and d.fix.title == "Call smem.init_view() before the domain loop"
        (r,) = [x for x in run_source(program) if x.code == "TS237"]

        def edits(fix):
            return fix.title, [(e.range.line, e.range.column, e.new_text) for e in fix.edits]
        assert edits(r.fix) == edits(d.fix)
        fixed = apply_edits(program, d.fix.edits)
        assert "    smem.init_view()\n        with domain_loop" in fixed
        assert [x.format() for x in lint_source(fixed, path) if x.severity is Severity.ERROR] == []


_NEVER_SET = '''

@dataclass(kw_only=True)
class Held(Staged):
    table: object = field(init=False, default=None)
    given: object = None

    def __init__(self, table, **kwargs):
        super().__init__(**kwargs)
        # `self.table = table` missing

    @producer_work
    def fill_table(self, stage_info, data):
        self.table[0] = data

    @producer_work
    def fill_given(self, stage_info, data):
        self.given[0] = data
'''


@pytest.mark.parametrize("method,expected", [("fill_table", True), ("fill_given", False)])
def test_a_field_no_method_sets(method, expected):
    """An `init=False` field that is None and that no method of the class sets is reported
    at the work call that uses it; a constructor field passed as None (host-side checks
    without tensors) is not."""
    src = _program(f'''\
    with domain_loop(0, 4, 1):
        v = src.load()
        smem.acquire()
        smem.{method}(data=v)  # here
        smem.commit()
    ''', extra=_NEVER_SET, subs=[('Staged(name="smem"', 'Held(table=[0], name="smem"')])
    line = next(i for i, ln in enumerate(src.splitlines(), 1) if ln.endswith("# here"))
    runtime, lint = _both(src)
    assert runtime == lint == ({("TS237", line)} if expected else set())
