"""How a captured schedule receives its resources, in both front ends: the `@schedule`
wrapper takes them positionally and passes them on positionally (`fn(*proxies)`, as the
reference's `traced(*resources)` does), so a `*resources` parameter gets a tuple of
proxies, and a wrapper `def bound(*r): body(n, *r)` given to `schedule()` works.
`schedule()` of a bound method, of `getattr(obj, name)` and of a named functools.partial
captures the body with `self` / the partial's arguments bound. TS101 is reported where the
module's run reaches a block API outside a schedule, never in a function the run does not
reach (it may be a schedule body given to schedule() in a way ts-lint does not follow).

Reference verdicts (nvidia-cutlass-dsl 4.8.1): every VALID program below is accepted, and
BOUND_METHOD, PARTIAL_NAMED, UNREACHED_BODY too; `TS221_STAR` is rejected with
ScheduleError "@schedule arguments must be MemoryResource instances (or PipelineGroup
member refs such as `group.member`); got int.", METHOD_TYPO with AttributeError "Smem
schedule proxy has no work method 'read_smme'", PARTIAL_UNNAMED with AttributeError
"'functools.partial' object has no attribute '__name__'", BODY_CALLED_DIRECTLY with
ScheduleError "DSL block APIs must be called inside an @schedule function".
"""
import pytest

from ts_lint.api import analyze_source, lint_source

from lint_parity import HEADER, assert_parity

_BUILD = '''

def build():
    cfg = PipelineConfig.create_tma_async_pipeline_cfg(
        num_stages=2, num_bytes=4096,
        producer_group=CooperativeGroup(Agent.Thread),
        consumer_group=CooperativeGroup(Agent.Thread, 128))
    inp, out = InGmem(name="in"), OutGmem(name="out")
    smem = Smem(name="smem", pipeline_config=cfg)
    alloc = SmemAllocator(); alloc.add_resource(smem); alloc.compute_layout()
{schedules}
    tasks = [
        Task(name="StoreTask", src_resources=[smem], dst_resources=[out], warp_idx=0, num_warps=4,
             schedule={store}),
        Task(name="LoadTask", src_resources=[inp], dst_resources=[smem], warp_idx=4, num_warps=1,
             schedule={load}),
    ]
    return TaskManager(tasks=tasks, resource_dependency_graph={{smem: [inp], out: [smem]}})
'''

_BODIES = '''

def _load_body(n, input_gmem, smem):
    with domain_loop(0, n, 1):
        idx = input_gmem.compute_coords()
        smem.try_acquire()
        smem.acquire()
        smem.tma_load(gmem_idx=idx)
        smem.commit()


def _store_body(n, smem, output_gmem):
    with domain_loop(0, n, 1):
        smem.try_wait()
        smem.wait()
        v = smem.read_smem()
        output_gmem.store(smem_val=v)
        smem.release()
'''

STAR_DIRECT = HEADER + _BUILD.format(schedules='''
    @schedule
    def load_schedule(*res):
        input_gmem, smem = res
        with domain_loop(0, 8, 1):
            idx = input_gmem.compute_coords()
            smem.try_acquire()
            smem.acquire()
            smem.tma_load(gmem_idx=idx)
            smem.commit()

    @schedule
    def store_schedule(smem, *rest):
        (output_gmem,) = rest
        with domain_loop(0, 8, 1):
            smem.try_wait()
            smem.wait()
            v = smem.read_smem()
            output_gmem.store(smem_val=v)
            smem.release()
''', store="store_schedule(smem, out)", load="load_schedule(inp, smem)")

STAR_WRAPPER = HEADER + _BODIES + _BUILD.format(schedules='''
    def bind(body, n):
        def bound(*resources):
            body(n, *resources)
        return schedule(bound)
''', store="bind(_store_body, 8)(smem, out)", load="bind(_load_body, 8)(inp, smem)")

POSITIONAL_ONLY = HEADER + _BUILD.format(schedules='''
    @schedule
    def load_schedule(input_gmem, smem, /):
        with domain_loop(0, 8, 1):
            idx = input_gmem.compute_coords()
            smem.try_acquire()
            smem.acquire()
            smem.tma_load(gmem_idx=idx)
            smem.commit()

    @schedule
    def store_schedule(smem, output_gmem, /):
        with domain_loop(0, 8, 1):
            smem.try_wait()
            smem.wait()
            v = smem.read_smem()
            output_gmem.store(smem_val=v)
            smem.release()
''', store="store_schedule(smem, out)", load="load_schedule(inp, smem)")

TS221_STAR = HEADER + _BUILD.format(schedules='''
    @schedule
    def load_schedule(*res):
        with domain_loop(1):
            pass
''', store="load_schedule(smem, 3)", load="load_schedule(inp, smem)")

VALID = [STAR_DIRECT, STAR_WRAPPER, POSITIONAL_ONLY]


@pytest.mark.parametrize("src", VALID, ids=["star-direct", "star-wrapper", "positional-only"])
def test_star_resources_bind_as_in_python(src, tmp_path):
    """No TS221 ('res' is tuple): both front ends capture the same kernel, without errors."""
    kernel = assert_parity(src, tmp_path)
    assert [t.name for t in kernel.tasks] == ["StoreTask", "LoadTask"]
    assert all(t.lowered is not None and t.lowered.entries for t in kernel.tasks)
    errors = [d for d in lint_source(src, str(tmp_path / "program.py")) if d.severity.name != "INFO"]
    assert errors == []


def test_a_star_argument_that_is_no_resource(tmp_path):
    """TS221 names the item of the `*args` parameter (the reference's ScheduleError)."""
    line = next(i for i, l in enumerate(TS221_STAR.splitlines(), 1) if "load_schedule(smem, 3)" in l)
    found = [(d.code, d.range.line, d.message) for d in lint_source(TS221_STAR, "p.py")
             if d.severity.name == "ERROR"]
    assert found == [("TS221", line, "@schedule arguments must be MemoryResource instances or "
                      "`group.member` refs; 'res[1]' is int")]
    from ts_runtime.diagnostics import Severity
    from ts_runtime.testing import codes_and_lines, run_program
    path = tmp_path / "program.py"
    path.write_text(TS221_STAR)
    assert codes_and_lines(run_program(str(path)), (Severity.ERROR,)) == {("TS221", line)}


@pytest.mark.reference
def test_reference_verdicts():
    from oracle import reference_available
    from oracle_batch import reference_verdicts
    if not reference_available():
        pytest.skip("reference not installed")
    verdicts = reference_verdicts(VALID + [TS221_STAR])
    assert [v.accepted for v in verdicts] == [True] * len(VALID) + [False]
    assert verdicts[-1].exc_type == "ScheduleError" and "got int" in verdicts[-1].message


# ---------------------------------------------------------------- schedule(callable)
_METHODS = '''

class Schedules:
    def __init__(self, n):
        self.n = n

    def load(self, input_gmem, smem):
        _load_body(self.n, input_gmem, smem)

    def store(self, smem, output_gmem):
        with domain_loop(0, self.n, 1):
            smem.try_wait()
            smem.wait()
            v = smem.read_smem()
            output_gmem.store(smem_val=v)
            smem.release()
'''

BOUND_METHOD = HEADER + _BODIES + _METHODS + _BUILD.format(schedules='''
    s = Schedules(8)
''', store='schedule(getattr(s, "store"))(smem, out)', load="schedule(s.load)(inp, smem)")

PARTIAL_NAMED = HEADER + "import functools\n" + _BODIES + _METHODS + _BUILD.format(schedules='''
    load = functools.partial(_load_body, 8)
    load.__name__ = "load"
    store = functools.partial(Schedules(8).store)
    store.__name__ = "store"
''', store="schedule(store)(smem, out)", load="schedule(load)(inp, smem)")

METHOD_TYPO = BOUND_METHOD.replace("            v = smem.read_smem()", "            v = smem.read_smme()")

PARTIAL_UNNAMED = PARTIAL_NAMED.replace('    load.__name__ = "load"\n', "")


@pytest.mark.parametrize("src", [BOUND_METHOD, PARTIAL_NAMED], ids=["bound-method", "partial-named"])
def test_schedule_of_a_bound_method_or_a_partial_is_captured(src, tmp_path):
    """`schedule(obj.method)`, `schedule(getattr(obj, name))`, `schedule(partial)` (with a
    `__name__`): the body is captured with `self` / the partial's arguments bound."""
    kernel = assert_parity(src, tmp_path)
    assert all(t.lowered is not None and len(t.lowered.entries) == 5 for t in kernel.tasks)
    assert [d for d in analyze_source(src, "p.py").diagnostics if d.severity.name != "INFO"] == []


def test_a_typo_in_a_bound_method_schedule_is_found(tmp_path):
    """The reference: AttributeError "Smem schedule proxy has no work method 'read_smme'"."""
    line = next(i for i, l in enumerate(METHOD_TYPO.splitlines(), 1) if "read_smme" in l)
    path = tmp_path / "program.py"
    path.write_text(METHOD_TYPO)
    found = {(d.code, d.range.line) for d in analyze_source(METHOD_TYPO, str(path)).diagnostics
             if d.severity.name == "ERROR"}
    assert found == {("TS224", line)}
    from ts_runtime.diagnostics import Severity
    from ts_runtime.testing import codes_and_lines, run_program
    assert codes_and_lines(run_program(str(path)), (Severity.ERROR,)) == found


def test_a_partial_without_a_name_is_not_judged():
    """The reference's wrapper reads `fn.__name__` (AttributeError for a partial): ts-lint
    does not capture it, and gives no finding from it (no TS101 either)."""
    a = analyze_source(PARTIAL_UNNAMED, "p.py", explain_unknown=True)
    assert [d for d in a.diagnostics if d.severity.name != "INFO"] == []
    assert any("functools.partial without `__name__`" in d.message for d in a.unknowns)


# ---------------------------------------------------------------- TS101
UNREACHED_BODY = STAR_DIRECT.replace("\n\ndef build():", _BODIES + "\n\ndef build():")

BODY_CALLED_DIRECTLY = STAR_DIRECT.replace("\n\ndef build():", _BODIES + "\n\ndef build():").replace(
    "    tasks = [\n", "    _store_body(8, smem, out)  # TS101\n    tasks = [\n")


def test_a_schedule_body_the_run_does_not_reach_gets_no_ts101():
    """A function that calls domain_loop() and that the module's run never reaches may be
    given to schedule() in a way ts-lint does not follow: no TS101 (not even a warning)."""
    a = analyze_source(UNREACHED_BODY, "p.py", explain_unknown=True)
    assert [d for d in a.diagnostics if d.severity.name != "INFO"] == []
    assert any("reached outside a captured schedule" in d.message for d in a.unknowns)


def test_a_block_api_the_run_reaches_outside_a_schedule_is_ts101(tmp_path):
    """The reference: ScheduleError "DSL block APIs must be called inside an @schedule function"."""
    body = next(i for i, l in enumerate(BODY_CALLED_DIRECTLY.splitlines(), 1)
                if l.startswith("def _store_body")) + 1
    path = tmp_path / "program.py"
    path.write_text(BODY_CALLED_DIRECTLY)
    found = {(d.code, d.range.line) for d in analyze_source(BODY_CALLED_DIRECTLY, str(path)).diagnostics
             if d.severity.name == "ERROR"}
    assert found == {("TS101", body)}
    from ts_runtime.diagnostics import Severity
    from ts_runtime.testing import codes_and_lines, run_program
    assert codes_and_lines(run_program(str(path)), (Severity.ERROR,)) == found


@pytest.mark.reference
def test_reference_verdicts_of_callables():
    from oracle import reference_available
    from oracle_batch import reference_verdicts
    if not reference_available():
        pytest.skip("reference not installed")
    v = reference_verdicts([BOUND_METHOD, PARTIAL_NAMED, UNREACHED_BODY, METHOD_TYPO, PARTIAL_UNNAMED,
                            BODY_CALLED_DIRECTLY])
    assert [x.accepted for x in v] == [True, True, True, False, False, False]
    assert v[3].exc_type == "AttributeError" and "read_smme" in v[3].message
    assert v[4].exc_type == "AttributeError" and "__name__" in v[4].message
    assert v[5].exc_type == "ScheduleError"
