"""TS460-TS473: PipelineGroup checks (exact code and line) and the shared group_checks logic."""
import dataclasses

import pytest

from ts_runtime.enums import PipelineGroupMode as Mode
from ts_runtime.enums import PipelineType, SignalingThreads
from ts_runtime.model import UNKNOWN, KernelModel, PipelineModel, ResourceKind, ResourceModel
from ts_runtime.model.group_checks import check_membership, derive_group_config
from ts_runtime.rules import load_all
from ts_runtime.rules.groups import M, TA, group_program, merge_program
from ts_runtime.rules.pipeline_config import config
from ts_runtime.testing import expected_findings, run_source

RULES = load_all()


def ts4(diags):
    return {(d.code, d.range.line) for d in diags if d.code.startswith("TS4")}


def assert_exact(src):
    diags = run_source(src)
    assert ts4(diags) == set(expected_findings(src)), "\n".join(d.format() for d in diags)
    return diags


# ----------------------------------------------------------------------------- programs
L1 = dict(cta_layout_vmnk="(1, 1, 1, 1)")
CASES = {
    "fused-merge-consumer-sizes": group_program([TA, M("TmaAsync", 1, 64, **L1)], "FusedMerge", mark="TS468"),
    "fused-merge-wait-signaling": group_program(
        [M("AsyncUmma", 32, 1), M("AsyncUmma", 32, 1, consumer_wait_signaling_threads="SignalingThreads.CtaLeader")],
        "FusedMerge", mark="TS464"),
    "merge-wait-signaling-free": group_program(
        [M("AsyncUmma", 32, 1), M("AsyncUmma", 32, 1, consumer_wait_signaling_threads="SignalingThreads.CtaLeader")],
        "Merge"),
    "fork-producer-signaling": group_program(
        [TA, M("TmaAsync", 1, 128, producer_signaling_threads="SignalingThreads.CtaLeader", **L1)], "Fork",
        mark="TS464"),
    "merge-mixed-tma-sizes-ok": group_program([M("TmaAsync", 1, 4, **L1), M("AsyncAsync", 32, 128)]),
    "merge-mixed-tma-non-tma-differ": group_program(
        [M("TmaAsync", 1, 4, **L1), M("AsyncAsync", 32, 128), M("UmmaAsync", 1, 64)], mark="TS468"),
    "fork-consumer-sizes-free": group_program([TA, M("TmaAsync", 1, 64, **L1)], "Fork"),
    "fork-mixed-consumer-kinds": group_program([TA, M("TmaUmma", 1, 1)], "Fork"),
    "merge-mixed-consumer-kinds": group_program([TA, M("TmaUmma", 1, 1)], "Merge", mark="TS467"),
    "advance-flag-mismatch": group_program([TA, M("TmaAsync", 1, 128, advance_on_wait=True, **L1)], mark="TS463",
                                           mark_member=1),
    "explicit-skips-derivation": group_program(
        [M("TmaAsync", 1, 4, advance_on_wait=True, **L1), M("TmaAsync", 1, 2, **L1)],
        explicit=M("TmaAsync", 1, 4, num_bytes=8192, **L1)),
    "explicit-heterogeneous-type-free": group_program([TA, M("UmmaAsync", 1, 128)],
                                                      explicit=M("TmaUmma", 1, 1, num_bytes=4096)),
    "explicit-homogeneous-type": group_program([TA, TA], explicit=M("TmaUmma", 1, 1, num_bytes=8192), mark="TS471"),
    "explicit-fork-sums-bytes": group_program([TA, TA], "Fork", explicit=M("TmaAsync", 1, 128, **L1), mark="TS471"),
    "explicit-strides": group_program([M("AsyncAsync", 32, 64)] * 2,
                                      explicit=M("AsyncAsync", 32, 64, interleave_stride=2), mark="TS471"),
    "explicit-fused-interleave": group_program(
        [M("AsyncAsync", 32, 64, interleave_stride=2)] * 2, "FusedMerge",
        explicit=M("AsyncAsync", 32, 64, interleave_stride=2), mark="TS470"),
    "explicit-clc": group_program([M("ClcFetchAsync", 1, 128)] * 2, explicit=M("ClcFetchAsync", 1, 128),
                                  mark="TS465"),
    "explicit-member-without-config": group_program([TA, None], explicit=M("TmaAsync", 1, 128, **L1), mark="TS462"),
    # manager phase: members of a Merge group are not released by any task (the group is),
    # so their consumer counts are not derived; producer counts are
    "merge-member-consumer-not-counted": merge_program(config("TmaAsync", 1, 999, var="cfg_a"),
                                                       config("TmaAsync", 1, 999, var="cfg_b")),
    "merge-member-producer-counted": merge_program(config("TmaAsync", 2, 128, var="cfg_a",
                                                          marks={"producer_group": "TS423"}),
                                                   config("TmaAsync", 1, 128, var="cfg_b")),
    "fused-merge-kernel": merge_program(config("TmaAsync", 1, 128, var="cfg_a"),
                                        config("TmaAsync", 1, 128, var="cfg_b"), mode="FusedMerge"),
    "group-lanes-checked": merge_program(
        config("AsyncAsync", 32, 32, var="cfg_a", interleave_stride=2),
        config("AsyncAsync", 32, 32, var="cfg_b", interleave_stride=2)).replace(
            "warp_idx=0, num_warps=1,", "warp_idx=0, num_warps=1,  # expect: TS412").replace(
            "warp_idx=1, num_warps=1,", "warp_idx=1, num_warps=1,  # expect: TS412").replace(
            "warp_idx=2, num_warps=4,", "warp_idx=2, num_warps=4,  # expect: TS412"),
    "changed-type-after-grouping": merge_program(
        config("TmaAsync", 1, 128, var="cfg_a"), config("TmaAsync", 1, 128, var="cfg_b"),
        after=config("TmaUmma", 1, 1, var="smem_a.pipeline_config", marks={"CALL": "TS472"}) + "\n"
        + config("TmaUmma", 1, 1, var="smem_b.pipeline_config")),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_program(name):
    assert_exact(CASES[name])


def test_group_findings_point_at_group_call():
    src = group_program([TA, None], mark="TS462")
    (d,) = [d for d in run_source(src) if d.code == "TS462"]
    assert "member 'm1' has no pipeline_config" in d.message


def test_second_group_line():
    src = group_program([TA, TA], after='other = PipelineGroup(name="other", members=[m0])  # expect: TS461')
    assert_exact(src)


# ----------------------------------------------------------------------------- shared logic
def _p(ptype=PipelineType.TmaAsync, **kw):
    base = dict(pipeline_type=ptype, num_stages=4, num_bytes=4096, producer_group_size=1,
                consumer_group_size=128, cta_layout_vmnk=(1, 1, 1, 1))
    base.update(kw)
    return PipelineModel(**base)


def _codes(mode, members, explicit=None):
    _, findings = derive_group_config("g", mode, [(f"m{i}", c) for i, c in enumerate(members)], explicit)
    return [c for c, *_ in findings]


@pytest.mark.parametrize("mode,members,explicit,codes", [
    (Mode.Merge, [], None, ["TS460"]),
    (Mode.Merge, [_p(), None], None, ["TS462"]),
    (Mode.Merge, [_p(), _p(num_stages=2)], None, ["TS463"]),
    (Mode.Merge, [_p(), _p(num_stages=UNKNOWN)], None, []),
    (Mode.Merge, [_p(), _p(consumer_group_size=UNKNOWN)], None, []),
    (Mode.Merge, [_p(), _p(consumer_signaling_threads=UNKNOWN)], None, []),
    (Mode.Merge, [_p(), _p(pipeline_type=UNKNOWN)], None, []),
    (Mode.Fork, [_p(), _p(num_bytes=UNKNOWN)], None, []),
    (Mode.FusedMerge, [_p(), _p(consumer_group_size=64)], None, ["TS468"]),
    (Mode.FusedMerge, [_p(), _p(interleave_strides=UNKNOWN)], None, []),
    (Mode.FusedMerge, [_p(consumer_wait_signaling_threads=SignalingThreads.All), _p()], None, []),
    (Mode.FusedMerge, [_p(consumer_wait_signaling_threads=SignalingThreads.CtaLeader), _p()], None, ["TS464"]),
    (Mode.Merge, [_p(), _p()], _p(num_bytes=8192), []),
    (Mode.Merge, [_p(), _p(consumer_group_size=4)], _p(num_bytes=8192), []),
    (Mode.Merge, [_p(), _p()], _p(num_bytes=UNKNOWN), []),
    (Mode.Merge, [_p(), _p()], _p(num_bytes=8192, pipeline_type=PipelineType.ClcFetchAsync), ["TS465"]),
    (Mode.Fork, [_p(), _p()], _p(num_bytes=4096), ["TS471"]),
])
def test_derive_group_config(mode, members, explicit, codes):
    assert _codes(mode, members, explicit) == codes


def test_merged_config():
    merged, findings = derive_group_config("g", Mode.Merge, [("a", _p()), ("b", _p(producer_group_size=2))])
    assert not findings
    assert (merged.num_bytes, merged.producer_group_size, merged.consumer_group_size) == (8192, 3, 128)
    merged, _ = derive_group_config("g", Mode.Fork, [("a", _p()), ("b", _p(consumer_group_size=64))])
    assert (merged.num_bytes, merged.producer_group_size, merged.consumer_group_size) == (4096, 1, 192)
    merged, _ = derive_group_config("g", Mode.Merge, [("a", _p()), ("b", _p(producer_group_size=UNKNOWN))])
    assert merged.producer_group_size is UNKNOWN


def test_membership():
    assert [c for c, *_ in check_membership([("a", 1, None), ("b", 2, None)])] == []
    assert [c for c, *_ in check_membership([("a", 1, None), ("a", 1, None)])] == ["TS461"]
    assert [c for c, *_ in check_membership([("a", 1, 99)])] == ["TS461"]


def _kernel(gp, members, mode=Mode.Merge):
    res = {10: ResourceModel(rid=10, name="g", kind=ResourceKind.GROUP, is_barrier=True, pipeline=gp,
                             group_mode=mode, members=[m for m in members])}
    for rid, p in members.items():
        res[rid] = ResourceModel(rid=rid, name=f"m{rid}", pipeline=p, group=10)
    return KernelModel(resources=res)


@pytest.mark.parametrize("gp,members,mode,codes", [
    (_p(num_bytes=8192), {1: _p(), 2: _p()}, Mode.Merge, []),
    (_p(num_bytes=8192), {1: _p(), 2: _p(num_stages=2)}, Mode.Merge, ["TS472"]),
    (_p(num_bytes=8192), {1: _p(), 2: _p(num_bytes=1024)}, Mode.Merge, ["TS472"]),
    (_p(num_bytes=4096), {1: _p(), 2: _p(num_bytes=1024)}, Mode.Fork, []),
    (_p(num_bytes=8192), {1: _p(), 2: _p(num_bytes=UNKNOWN)}, Mode.Merge, []),
    (_p(num_bytes=8192), {1: _p(), 2: _p(num_stages=UNKNOWN)}, Mode.Merge, []),
    (_p(num_bytes=8192), {1: _p(), 2: None}, Mode.Merge, ["TS462"]),
    (_p(num_bytes=8192, pipeline_type=PipelineType.TmaUmma), {1: _p(), 2: _p()}, Mode.Merge, ["TS472"]),
    (_p(num_bytes=8192, pipeline_type=UNKNOWN), {1: _p(), 2: _p()}, Mode.Merge, []),
])
def test_manager_recheck(gp, members, mode, codes):
    k = _kernel(gp, members, mode)
    assert [d.code for d in RULES["TS472"]().check(k)] == codes


def test_merged_model_is_a_copy():
    a = _p()
    merged, _ = derive_group_config("g", Mode.Merge, [("a", a), ("b", _p())])
    assert merged is not a and a.num_bytes == 4096 and dataclasses.is_dataclass(merged)


# ----------------------------------------------------------------------------- TS474
def _group_of(*names):
    from ts_runtime.pipeline_group import PipelineGroup
    from ts_runtime.resources import MemoryResource, PipelineConfig
    from ts_runtime.pipeline import Agent, CooperativeGroup

    def cfg():
        return PipelineConfig.create_async_async_pipeline_cfg(
            num_stages=2, producer_group=CooperativeGroup(Agent.Thread, 32),
            consumer_group=CooperativeGroup(Agent.Thread, 32), cta_layout_vmnk=(1, 1, 1, 1))
    members = [MemoryResource(name=n, pipeline_config=cfg()) for n in names]
    return PipelineGroup(name="ab", members=members, mode=Mode.Merge)


def test_unknown_member_carries_the_finding_and_probes_stay_silent():
    from ts_runtime.diagnostics import TSAttributeError
    g = _group_of("a", "b")
    assert g.a.member.name == "a"
    assert not hasattr(g, "c")        # a probe: AttributeError, no error recorded anywhere
    with pytest.raises(TSAttributeError) as info:
        g.c  # noqa: B018
    (d,) = info.value.diagnostics
    assert d.code == "TS474"
    assert d.message == "PipelineGroup 'ab' has no member or attribute 'c' (members: 'a', 'b')"
    assert d.range.path.endswith("test_groups.py")


def test_unknown_member_from_ts_lint_only_when_every_member_is_known():
    from ts_lint.cli import check_source
    from ts_runtime.rules.roles import group_program as two_member_program
    src = two_member_program(subs=[("schedule=load(src, group.b)),", "schedule=load(src, group.zz)),")])
    (d,) = [d for d in check_source(src, "p.py").diagnostics if d.code == "TS474"]
    assert "'zz'" in d.message and d.range.line == src.splitlines().index(
        next(ln for ln in src.splitlines() if "group.zz" in ln)) + 1
    # an attribute of PipelineGroup itself is not a member access
    src = two_member_program(subs=[("    tasks = [\n", "    n = group.num_barriers_per_stage\n    tasks = [\n")])
    assert not [d for d in check_source(src, "p.py").diagnostics if d.code == "TS474"]
    # a member whose name ts-lint cannot resolve: no finding
    src = two_member_program(subs=[('Smem(name="b", pipeline_config=cfg())', 'Smem(name=NAME_B, pipeline_config=cfg())'),
                                   ("def build():", "NAME_B = __import__('os').environ.get('X', 'b')\n\n\ndef build():"),
                                   ("schedule=load(src, group.b)),", "schedule=load(src, group.zz)),")])
    assert not [d for d in check_source(src, "p.py").diagnostics if d.code == "TS474"]


# a member class whose own `__init__` never calls `super().__init__`: the pipeline_config
# given to it is dropped (and its name with it); the group is never built, so the
# TaskManager's TS238 cannot run and TS462 names the class and the missing call
_OWN_INIT_MEMBER = '''
@dataclass(kw_only=True)
class Own(MemoryResource):
    def __init__(self, **kwargs) -> None:
        {SUPER}self.tag = 1
'''


def _own_init_group(super_init: bool) -> str:
    src = group_program([TA, TA], mark=None if super_init else "TS462")
    src = src.replace('m1 = Buf(name="m1", pipeline_config=cfg1)', 'm1 = Own(name="m1", pipeline_config=cfg1)')
    return src.replace("\n\ndef build():", _OWN_INIT_MEMBER.format(
        SUPER="super().__init__(**kwargs)\n        " if super_init else "") + "\n\ndef build():", 1)


@pytest.mark.parametrize("front", ["runtime", "lint"])
def test_a_member_whose_init_skips_super_is_named_with_the_missing_call(front):
    from ts_lint.api import lint_source
    run = run_source if front == "runtime" else (lambda s: lint_source(s, "kernel.py"))
    src = _own_init_group(False)
    diags = run(src)
    assert ts4(diags) == set(expected_findings(src))
    (d,) = [d for d in diags if d.code == "TS462"]
    assert d.message == ("PipelineGroup 'grp' member Own has no pipeline_config: Own.__init__ does not call "
                         "super().__init__(...), so the pipeline_config passed to it is dropped; call "
                         "super().__init__(**kwargs)")
    assert not [d for d in run(_own_init_group(True)) if d.code.startswith("TS4")]
