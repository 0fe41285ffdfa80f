"""How a captured schedule receives its resources, in both front ends: the `@schedule`
wrapper takes them positionally and passes them on positionally (`fn(*proxies)`, as the
reference's `traced(*resources)` does), so a `*resources` parameter gets a tuple of
proxies, and a wrapper `def bound(*r): body(n, *r)` given to `schedule()` works.

Reference verdicts (nvidia-cutlass-dsl 4.8.1): every VALID program below is accepted;
`TS221_STAR` is rejected with ScheduleError "@schedule arguments must be MemoryResource
instances (or PipelineGroup member refs such as `group.member`); got int."
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
