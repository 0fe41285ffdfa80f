"""TS401-TS440: pipeline configuration rules (exact code and line), derived metadata, UNKNOWN silence.

Programs are built with the same templates as the rule examples; `# expect:` markers give
the exact (code, line) pairs. Only TS4xx findings are compared, so other families' rules
do not make these tests brittle (tests/rules/test_rule_examples.py checks whole programs).
"""
import pytest

from ts_runtime.diagnostics import Severity
from ts_runtime.enums import PipelineType, ScheduleStage, SignalingThreads
from ts_runtime.model import (
    UNKNOWN, Entry, KernelModel, LoweredSchedule, PipelineModel, ResourceModel, TaskModel,
)
from ts_runtime.model import derive as D
from ts_runtime.model.config_checks import check_pipeline_config, check_pipeline_config_at
from ts_runtime.rules import load_all
from ts_runtime.rules.pipeline_config import chain_program, config, object_program, program, task
from ts_runtime.testing import expected_findings, run_source

RULES = load_all()
CL = "SignalingThreads.CtaLeader"
TWL = "SignalingThreads.TaskWarpLeader"
P1C4 = [task("P", 1), task("C", 4)]


def ts4(diags):
    return {(d.code, d.range.line) for d in diags if d.code.startswith("TS4")}


def assert_exact(src):
    diags = run_source(src)
    assert ts4(diags) == set(expected_findings(src)), "\n".join(d.format() for d in diags)
    return diags


# ----------------------------------------------------------------------------- programs
CASES = {
    # consumer counts come from the releasing tasks only (the wait-only task is not counted)
    "tma-async-split-consumer-ok": program(config("TmaAsync", 1, 4), [task("P", 1), task("W", 2), task("R", 4)]),
    "tma-async-split-consumer-bad": program(config("TmaAsync", 1, 2, marks={"consumer_group": "TS430"}),
                                            [task("P", 1), task("W", 2), task("R", 4)]),
    "tma-async-two-consumers": program(config("TmaAsync", 1, 6), [task("P", 1), task("C", 4), task("C", 2)]),
    "tma-async-lanes-per-warp": program(config("TmaAsync", 1, 8, cta_layout_vmnk="(2, 2, 1, 1)"), P1C4),
    "tma-async-3-dim-layout": program(config("TmaAsync", 1, 4, cta_layout_vmnk="(2, 2, 1)"), P1C4),
    "tma-async-mcast-01": program(config("TmaAsync", 1, 8, direct=True, cta_layout_vmnk="(1, 2, 3, 1)",
                                         mcast_mode_mn="(0, 1)"), P1C4),
    "tma-async-mcast-11-bad": program(config("TmaAsync", 1, 12, direct=True, cta_layout_vmnk="(1, 2, 3, 1)",
                                             marks={"consumer_group": "TS430"}), P1C4),
    "tma-producers-sum": program(config("TmaAsync", 2, 128), [task("P", 1), task("P", 1), task("C", 4)]),
    # CLC: tasks with run_only_on_cta_id count one CTA
    "clc-mixed-ownership": program(config("ClcFetchAsync", 1, 576, cta_layout_vmnk="(2, 2, 1, 1)"),
                                   [task("P", 1), task("C", 4), task("C", 2, cta=0)]),
    "clc-mixed-ownership-bad": program(config("ClcFetchAsync", 1, 768, cta_layout_vmnk="(2, 2, 1, 1)",
                                              marks={"consumer_group": "TS429"}),
                                       [task("P", 1), task("C", 4), task("C", 2, cta=0)]),
    "clc-cta-leader": program(config("ClcFetchAsync", 1, 128, cta_layout_vmnk="(2, 2, 1, 1)",
                                     consumer_signaling_threads=CL), P1C4),
    # AsyncUmma / UmmaAsync cluster scale
    "async-umma-async-load": program(config("AsyncUmma", 32, 1, cta_layout_vmnk="(2, 1, 1, 1)",
                                            producer_op="PipelineOp.AsyncLoad"), P1C4),
    "async-umma-cta-leader": program(config("AsyncUmma", 32, 1, cta_layout_vmnk="(2, 1, 1, 1)",
                                            producer_signaling_threads=CL), P1C4),
    "umma-async-cta-leader": program(config("UmmaAsync", 1, 128, cta_layout_vmnk="(2, 1, 1, 1)",
                                            consumer_signaling_threads=CL), P1C4),
    "tma-umma-cta-leader": program(config("TmaUmma", 1, 2, cta_layout_vmnk="(2, 2, 1, 1)", num_bytes=2048,
                                          num_bytes_per_warp_per_cta=1024, consumer_signaling_threads=CL), P1C4),
    # domain lanes are checked per lane group
    "lanes-per-group": program(config("AsyncAsync", 128, 32, interleave_stride=2),
                               [task("P", 4, 0, 2), task("P", 4, 1, 2), task("C", 2)]),
    "lanes-per-group-bad": program(config("AsyncAsync", 128, 32, interleave_stride=2,
                                          marks={"producer_group": "TS424"}),
                                   [task("P", 4, 0, 2), task("P", 3, 1, 2), task("C", 2)]),
    "umma-async-consumer-lanes": program(config("UmmaAsync", 1, 256, cta_layout_vmnk="(2, 1, 1, 1)",
                                                interleave_stride="(1, 1, 2, 2)"),
                                         [task("P", 1), task("C", 4, 0, 2), task("C", 4, 1, 2)]),
    "warp-lane-consumer": program(config("AsyncAsync", 32, 32, interleave_stride=2), [task("P", 2), task("C", 2)]),
    "interleaved-one-warp-bad": program(config("TmaAsync", 1, 1, interleave_stride=2),
                                        [task("P", 1, mark="TS412"), task("C", 2)]),
    "tma-lanes-task-warp-leader": program(config("TmaAsync", 1, 1, interleave_stride=2, producer_signaling_threads=TWL),
                                          [task("P", 1, 0, 2), task("P", 1, 1, 2), task("C", 2)]),
    "tma-consumer-only-interleave-multi-warp": program(config("TmaAsync", 1, 1, interleave_stride="(1, 1, 2, 2)"),
                                                       [task("P", 2, mark="TS420"), task("C", 2)]),
    # opaque layouts: a note, TS409 and TS434 still apply
    "opaque-note": program(config("TmaAsync", 1, 3, cta_layout_vmnk="object()", marks={"cta_layout_vmnk": "TS432"}),
                           P1C4),
    "opaque-interleave": program(config("TmaAsync", 1, 1, cta_layout_vmnk="object()", interleave_stride=2,
                                        marks={"cta_layout_vmnk": "TS432", "interleave_stride": "TS409"}),
                                 [task("P", 2), task("C", 2)]),
    "opaque-task-warp-leader": program(config("TmaAsync", 1, 1, cta_layout_vmnk="object()",
                                              producer_signaling_threads=TWL,
                                              marks={"cta_layout_vmnk": "TS432, TS434"}),
                                       [task("P", 2), task("C", 4)]),
    "opaque-leader-consumer-not-required": program(config("TmaAsync", 1, 1, cta_layout_vmnk="object()",
                                                          consumer_signaling_threads=CL,
                                                          marks={"cta_layout_vmnk": "TS432"}), P1C4),
    # leader-routed bytes
    "leader-by-run-only-waiter": program(config("TmaAsync", 1, 4, cta_layout_vmnk="(2, 2, 1, 1)", marks={"CALL": "TS433"}),
                                         [task("P", 1), task("C", 2, cta=0)]),
    "leader-producer-on-one-cta": program(config("TmaAsync", 1, 2, cta_layout_vmnk="(2, 2, 1, 1)",
                                                 consumer_signaling_threads=CL), [task("P", 1, cta=0), task("C", 1)]),
    "tma-async-leader-bytes": program(config("TmaAsync", 1, 2, cta_layout_vmnk="(2, 2, 1, 1)", num_bytes=4,
                                             num_bytes_per_warp_per_cta=1, consumer_signaling_threads=CL),
                                      [task("P", 1), task("C", 1)]),
    "tma-umma-leader-bytes-bad": program(config("TmaUmma", 1, 2, cta_layout_vmnk="(2, 2, 1, 1)", num_bytes=8,
                                                num_bytes_per_warp_per_cta=1, consumer_signaling_threads=CL,
                                                producer_signaling_threads=TWL, marks={"num_bytes": "TS435"}),
                                         [task("P", 2), task("C", 1)]),
    "declared-bytes-not-leader-routed": program(config("TmaUmma", 1, 4, cta_layout_vmnk="(2, 2, 1, 1)",
                                                       num_bytes=7, num_bytes_per_warp_per_cta=7), P1C4),
    # signaling
    "consumer-wait-task-warp-leader": program(config("AsyncUmma", 32, 1, consumer_wait_signaling_threads=TWL,
                                                     marks={"consumer_wait_signaling_threads": "TS417"}),
                                              [task("P", 1), task("W", 2), task("R", 1)]),
    "task-warp-leader-single-warp-tasks": program(config("TmaAsync", 2, 128, producer_signaling_threads=TWL),
                                                  [task("P", 1), task("P", 1), task("C", 4)]),
    # layouts
    "layout-none-note": chain_program(config("TmaAsync", 1, 1, var="cfg1", marks={"CALL": "TS436"}),
                                      config("AsyncAsync", 32, 32, var="cfg2", cta_layout_vmnk="(2, 1, 1, 1)")),
    "layout-list-equals-tuple": chain_program(config("TmaAsync", 1, 1, var="cfg1", cta_layout_vmnk="[1, 1, 1, 1]"),
                                              config("AsyncAsync", 32, 32, var="cfg2")),
    "layout-dims-differ": chain_program(config("TmaAsync", 1, 1, var="cfg1", cta_layout_vmnk="(1, 1, 1)"),
                                        config("AsyncAsync", 32, 32, var="cfg2", marks={"cta_layout_vmnk": "TS436"})),
}
# the `producer_op=PipelineOp.AsyncLoad` cases need the import inside build()
for _k in ("async-umma-async-load",):
    CASES[_k] = CASES[_k].replace("def build():\n", "def build():\n    from ts_runtime.pipeline import PipelineOp\n")


@pytest.mark.parametrize("name", sorted(CASES))
def test_program(name):
    assert_exact(CASES[name])


def test_info_note_severity():
    diags = run_source(CASES["opaque-note"])
    assert {d.code: d.severity for d in diags if d.code == "TS432"} == {"TS432": Severity.INFO}
    diags = run_source(CASES["layout-none-note"])
    assert [d.severity for d in diags if d.code == "TS436"] == [Severity.INFO]


def test_arrival_message_names_expected_value():
    diags = run_source(program(config("TmaAsync", 1, 64), P1C4))
    (d,) = [d for d in diags if d.code == "TS430"]
    assert "expected 4 or 128" in d.message and "'Store' (4 warps)" in d.message
    assert [r.message for r in d.related][0] == "task 'Store' releases with 4 warp(s)"


# ----------------------------------------------------------------------------- object phase
def test_object_phase_points_at_keyword():
    src = object_program(config("AsyncAsync", 32, 32, interleave_stride="(2, 1, 1, 1)",
                                marks={"interleave_stride": "TS406"}) + "\nreturn cfg")
    assert_exact(src)


def test_object_phase_raises_reference_exception_types():
    from ts_runtime.pipeline import Agent, CooperativeGroup
    from ts_runtime.resources import PipelineConfig
    g = CooperativeGroup(Agent.Thread)
    with pytest.raises(TypeError) as e:
        PipelineConfig.create_tma_async_pipeline_cfg(num_stages=4, num_bytes=64, producer_group=g, consumer_group=g,
                                                     producer_signaling_threads=1)
    assert [d.code for d in e.value.diagnostics] == ["TS401"]
    with pytest.raises(ValueError) as e:
        PipelineConfig.create_tma_async_pipeline_cfg(num_stages=4, num_bytes=64, producer_group=g, consumer_group=g,
                                                     interleave_stride=(1, 1, 2, 1))
    assert [d.code for d in e.value.diagnostics] == ["TS407"]
    with pytest.raises(ValueError) as e:
        CooperativeGroup(Agent.Thread, 0)
    assert [d.code for d in e.value.diagnostics] == ["TS440"]


def _pm(**kw):
    base = dict(pipeline_type=PipelineType.AsyncAsync, num_stages=4, producer_group_size=32,
                consumer_group_size=32, cta_layout_vmnk=(1, 1, 1, 1))
    base.update(kw)
    return PipelineModel(**base)


@pytest.mark.parametrize("kw,codes", [
    (dict(interleave_strides=(2, 1, 1, 1)), ["TS406"]),
    (dict(interleave_strides=(2, 1, 2, 1)), ["TS406", "TS407"]),
    (dict(interleave_strides=(3, 3, 3, 3)), ["TS405"]),
    (dict(interleave_strides=(0, 0, 0, 0)), ["TS404"]),
    (dict(interleave_strides=(2, 1, 1, 1), advance_on_acquire=UNKNOWN), []),
    (dict(interleave_strides=UNKNOWN), []),
    (dict(interleave_strides=(2, UNKNOWN, 1, 1)), []),
    (dict(num_stages=UNKNOWN, interleave_strides=(3, 3, 3, 3)), []),
    (dict(producer_signaling_threads=UNKNOWN, async_producer_op=UNKNOWN), []),
    (dict(pipeline_type=UNKNOWN, async_producer_op="AsyncLoad"), []),
    (dict(pipeline_type=PipelineType.TmaAsync, async_producer_op="AsyncLoad"), ["TS402"]),
    (dict(consumer_wait_signaling_threads=SignalingThreads.All | SignalingThreads.CtaLeader), ["TS401"]),
])
def test_config_checks(kw, codes):
    assert [c for c, *_ in check_pipeline_config(_pm(**kw))] == codes
    assert [c for c, *_ in check_pipeline_config_at(_pm(**kw))] == codes


# ----------------------------------------------------------------------------- model level
def _task(name, rid, stages, warps=1, start=0, step=1, cta=None, warp_idx=0):
    low = LoweredSchedule(entries=[Entry(i, rid, s, "loop") for i, s in enumerate(stages)], domain_start=start,
                          domain_step=step, has_domain_loop=True)
    return TaskModel(name=name, warp_idx=warp_idx, num_warps=warps, src=[rid], dst=[rid], lowered=low,
                     run_only_on_cta_id=cta)


S = ScheduleStage
PROD = [S.ProducerAcquire, S.ProducerWork, S.ProducerCommit]
CONS = [S.ConsumerWait, S.ConsumerWork, S.ConsumerRelease]


def _kernel(p, tasks):
    return KernelModel(resources={1: ResourceModel(rid=1, name="buf", pipeline=p)}, tasks=tasks)


def _codes(kernel):
    out = []
    for code in sorted(RULES):
        r = RULES[code]
        if code.startswith("TS4") and r.phase == "manager" and r.open_reason is None:
            out += [d.code for d in r().check(kernel)]
    return out


def test_model_level_counts():
    k = _kernel(_pm(producer_group_size=64), [_task("P", 1, PROD), _task("C", 1, CONS)])
    assert _codes(k) == ["TS424"]


@pytest.mark.parametrize("p,tasks", [
    (_pm(producer_group_size=UNKNOWN, consumer_group_size=UNKNOWN), None),
    (_pm(producer_group_size=64, consumer_group_size=1, cta_layout_vmnk=UNKNOWN,
         pipeline_type=PipelineType.AsyncUmma), None),
    (_pm(producer_group_size=64), "unknown-warps"),
    (_pm(producer_group_size=64, interleave_strides=UNKNOWN), None),
    (_pm(pipeline_type=UNKNOWN, producer_group_size=7), None),
    (_pm(pipeline_type=PipelineType.TmaAsync, producer_group_size=3, consumer_group_size=32,
         producer_signaling_threads=UNKNOWN, consumer_signaling_threads=UNKNOWN,
         num_bytes_per_warp_per_cta=UNKNOWN), None),
    (_pm(pipeline_type=PipelineType.TmaAsync, producer_group_size=1, consumer_group_size=1,
         interleave_strides=(2, 2, 2, 2), cta_layout_vmnk=UNKNOWN), "two-warps"),
    (_pm(interleave_strides=(2, 2, 2, 2)), "unknown-step"),
    (_pm(consumer_wait_signaling_threads=UNKNOWN), None),
    (_pm(pipeline_type=PipelineType.TmaAsync, producer_group_size=1, consumer_group_size=4,
         cta_layout_vmnk=(1, 2, 2, 1), mcast_mode_mn=UNKNOWN), None),
])
def test_unknown_values_stay_silent(p, tasks):
    if tasks == "unknown-warps":
        ts = [_task("P", 1, PROD, warps=UNKNOWN), _task("C", 1, CONS)]
    elif tasks == "two-warps":
        ts = [_task("P", 1, PROD, warps=2), _task("C", 1, CONS, warps=2)]
    elif tasks == "unknown-step":
        ts = [_task("P", 1, PROD, warps=4, step=UNKNOWN), _task("C", 1, CONS, warps=2)]
    else:
        ts = [_task("P", 1, PROD), _task("C", 1, CONS)]
    assert [c for c in _codes(_kernel(p, ts)) if c != "TS432"] == []


# ----------------------------------------------------------------------------- derived metadata
def test_lane_mode():
    assert D.lane_mode(_task("t", 1, PROD, warps=2), 2) == "warp"
    assert D.lane_mode(_task("t", 1, PROD, warps=4, start=1, step=2), 2) == "domain"
    assert D.domain_lane(_task("t", 1, PROD, warps=4, start=3, step=2), 2) == 1
    assert D.lane_mode(_task("t", 1, PROD, warps=4), 2) == "invalid"
    assert D.lane_mode(_task("t", 1, PROD, warps=4), 1) is None
    assert D.lane_mode(_task("t", 1, PROD, warps=UNKNOWN), 2) is UNKNOWN


@pytest.mark.parametrize("layout,mode,lanes", [
    (None, (1, 1), 1), ((2, 2, 1), (1, 1), 1), ((1, 2, 3, 1), (1, 0), 3), ((1, 2, 3, 1), (0, 1), 2),
    ((1, 2, 3, 1), (1, 1), 4), ((1, 2, 3, 1), (0, 0), None), ("opaque", (1, 1), UNKNOWN), (UNKNOWN, (1, 1), UNKNOWN),
])
def test_tma_async_lanes_per_warp(layout, mode, lanes):
    assert D.tma_async_lanes_per_warp(_pm(cta_layout_vmnk=layout, mcast_mode_mn=mode)) == lanes


def test_split_consumer_derivations():
    p = _pm(pipeline_type=PipelineType.TmaAsync, producer_signaling_threads=SignalingThreads.TaskWarpLeader)
    k = _kernel(p, [_task("P", 1, PROD, warps=2, warp_idx=4), _task("W", 1, [S.ConsumerWait], warps=2),
                    _task("R", 1, [S.ConsumerRelease], warps=4)])
    assert [t.name for t in D.split_consumer_tasks(k, 1)] == ["W"]
    assert D.split_consumer_resources(k) == {1}
    assert D.effective_advance_on_wait(k, 1) is True
    assert p.advance_on_wait is False          # the config is not mutated
    assert [t.name for t in D.committers(k, 1)] == ["P"]
    assert [t.name for t in D.releasers(k, 1)] == ["R"]
    assert D.producer_leader_warps(k, 1) == [4]
    assert D.leader_routing(k, 1)[0] is True   # TaskWarpLeader aggregates 2 warps


@pytest.mark.parametrize("size,flag", [(128, True), (4, False), (7, False)])
def test_tma_async_all_thread_release(size, flag):
    p = _pm(pipeline_type=PipelineType.TmaAsync, producer_group_size=1, consumer_group_size=size)
    k = _kernel(p, [_task("P", 1, PROD), _task("C", 1, CONS, warps=4)])
    assert D.tma_async_all_thread_release(k, 1) is flag
