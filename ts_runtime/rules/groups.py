"""TS460-TS473: PipelineGroup construction, merged configs and the manager's re-check.

Object-phase logic (TS460-TS471) lives in `ts_runtime.model.group_checks`, shared by
`PipelineGroup.__post_init__` and ts-lint; TS472 is a manager rule; TS473 is raised when
the group's barriers are laid out at setup.
"""
from __future__ import annotations

import textwrap

from ..diagnostics import Related
from ..enums import PipelineGroupMode
from ..model.values import UNKNOWN, is_static_int
from .base import Rule
from .declare import rule
from .pipeline_config import _HEADER, config
from .registry import make_diagnostic, register

OBJ = dict(phase="object")

_GROUP_IMPORTS = '''\
from ts_runtime.enums import PipelineGroupMode
from ts_runtime.pipeline_group import PipelineGroup
'''


def group_program(members, mode="Merge", *, mark=None, explicit=None, before="", after="",
                  mark_member=None) -> str:
    """A `build()` creating members `m0, m1, ...` (configs from `config(...)` or None) and one
    PipelineGroup `grp` over them; `mark` is the code expected on the group's line, or on
    member `mark_member`'s line when given (findings that blame one member)."""
    lines = [before] if before else []
    names = []
    for i, cfg in enumerate(members):
        if cfg is None:
            lines.append(f'm{i} = Buf(name="m{i}")')
        else:
            lines.append(config(*cfg[0], var=f"cfg{i}", **cfg[1]))
            lines.append(f'm{i} = Buf(name="m{i}", pipeline_config=cfg{i})'
                         + (f"  # expect: {mark}" if mark and mark_member == i else ""))
        names.append(f"m{i}")
    extra = ""
    if explicit is not None:
        lines.append(config(*explicit[0], var="group_cfg", **explicit[1]))
        extra = ", pipeline_config=group_cfg"
    lines.append(f'grp = PipelineGroup(name="grp", members=[{", ".join(names)}], mode=PipelineGroupMode.{mode}'
                 f'{extra})' + (f"  # expect: {mark}" if mark and mark_member is None else ""))
    if after:
        lines.append(after)
    lines.append("return grp")
    return _HEADER + _GROUP_IMPORTS + "\n\ndef build():\n" + textwrap.indent("\n".join(lines), "    ") + "\n"


def M(ptype, p=1, c=1, **kw):
    """A member config spec for `group_program`."""
    return ((ptype, p, c), kw)


TA = M("TmaAsync", 1, 128, cta_layout_vmnk="(1, 1, 1, 1)")
VALID_MERGE = group_program([TA, TA])


def merge_program(cfg_a: str, cfg_b: str, *, mode="Merge", after="") -> str:
    """A full Merge/FusedMerge kernel: LoadA/LoadB produce smem_a/smem_b, one 4-warp task
    consumes both and releases (and for FusedMerge waits on) the group once."""
    fused = mode == "FusedMerge"
    waits = "            grp.wait()\n" if fused else "            smem_a.wait()\n            smem_b.wait()\n"
    body = f'''
def build():
{textwrap.indent(cfg_a, "    ")}
{textwrap.indent(cfg_b, "    ")}
    src, dst = Gmem(name="src"), Gmem(name="dst")
    smem_a = Buf(name="smem_a", pipeline_config=cfg_a)
    smem_b = Buf(name="smem_b", pipeline_config=cfg_b)
    grp = PipelineGroup(name="grp", members=[smem_a, smem_b], mode=PipelineGroupMode.{mode})
{textwrap.indent(after, "    ") if after else ""}
    @schedule
    def load(src, smem):
        with domain_loop(0, 8, 1):
            src.load()
            smem.acquire()
            smem.fill()
            smem.commit()

    @schedule
    def consume(smem_a, smem_b, grp, dst):
        with domain_loop(0, 8, 1):
{waits}            smem_a.read()
            smem_b.read()
            dst.store()
            grp.release()

    tasks = [
        Task(name="LoadA", src_resources=[src], dst_resources=[smem_a], warp_idx=0, num_warps=1,
             schedule=load(src, grp.smem_a)),
        Task(name="LoadB", src_resources=[src], dst_resources=[smem_b], warp_idx=1, num_warps=1,
             schedule=load(src, grp.smem_b)),
        Task(name="Consume", src_resources=[smem_a, smem_b], dst_resources=[dst], warp_idx=2, num_warps=4,
             schedule=consume(grp.smem_a, grp.smem_b, grp, dst)),
    ]
    graph = {{smem_a: [src], smem_b: [src], dst: [smem_a, smem_b]}}
    return TaskManager(tasks=tasks, resource_dependency_graph=graph, verbose=False)
'''
    return _HEADER + _GROUP_IMPORTS + body


rule("TS460", "empty-pipeline-group", """
    A `PipelineGroup` without members.

    ## What it does
    A group needs at least one member resource.
    ## Why is this bad?
    There is nothing to share a barrier between, and no config to derive.
    ## Example
    `PipelineGroup(name="ab", members=[])`
    ## Use instead
    `PipelineGroup(name="ab", members=[smem_a, smem_b])`
    """, **OBJ, valid=[VALID_MERGE], invalid=[_HEADER + _GROUP_IMPORTS + '''

def build():
    return PipelineGroup(name="grp", members=[])  # expect: TS460
'''])
rule("TS461", "resource-in-multiple-groups", """
    A resource that is a member of more than one `PipelineGroup` (or listed twice).

    ## What it does
    Each resource can belong to one group only.
    ## Why is this bad?
    The group re-points its members' pipelines at its own barrier set; a second group
    would re-point them again.
    ## Example
    `PipelineGroup(members=[a, b])` and later `PipelineGroup(members=[a, c])`.
    ## Use instead
    One group per set of resources driven together.
    """, **OBJ, valid=[VALID_MERGE],
     invalid=[group_program([TA, TA], after='other = PipelineGroup(name="other", members=[m0])  # expect: TS461'),
              _HEADER + _GROUP_IMPORTS + '\n\ndef build():\n' + textwrap.indent(
                  config("TmaAsync", 1, 128) + '\nm0 = Buf(name="m0", pipeline_config=cfg)\n'
                  'return PipelineGroup(name="grp", members=[m0, m0])  # expect: TS461\n', "    ")])
rule("TS462", "group-member-without-pipeline", """
    A `PipelineGroup` member that has no `pipeline_config`.

    ## What it does
    Every member must be pipelined: the group's barrier protocol is derived from the
    members' configs. When the member's class has its own `__init__` that never calls
    `super().__init__(**kwargs)`, the `pipeline_config` passed to it was dropped there:
    the message names the class and the missing call.
    ## Why is this bad?
    An unpipelined member has no stages to share.
    ## Example
    `PipelineGroup(members=[smem_a, gmem_b])` where `gmem_b` has no pipeline.
    ## Use instead
    Give each member its own standalone config.
    """, **OBJ, valid=[VALID_MERGE], invalid=[group_program([TA, None], mark="TS462")])
rule("TS463", "group-member-config-mismatch", """
    Group members that disagree on stages, advance flags, strides, cluster layout or multicast mode.

    ## What it does
    Without an explicit group config, members must agree on `num_stages`,
    `advance_on_wait`, `advance_on_acquire`, the interleave strides, `cta_layout_vmnk` and
    `mcast_mode_mn`.
    ## Why is this bad?
    Members advance in lock-step over one shared barrier set; different stage walks would
    signal different stages.
    ## Example
    `smem_a` with `num_stages=4` and `smem_b` with `num_stages=2` in one group.
    ## Use instead
    The same stage count and layout for every member.
    """, **OBJ, valid=[VALID_MERGE],
     invalid=[group_program([TA, M("TmaAsync", 1, 128, cta_layout_vmnk="(1, 1, 1, 1)", num_stages=2)],
                            mark="TS463", mark_member=1),
              group_program([TA, M("TmaAsync", 1, 128, cta_layout_vmnk="(2, 1, 1, 1)")], mark="TS463",
                            mark_member=1)])
rule("TS464", "group-collapsed-signaling-mismatch", """
    Group members whose signaling on the collapsed side differs.

    ## What it does
    The collapsed side is signaled once for all members, so members must agree on it:
    consumer signaling for Merge, producer signaling for Fork, and producer, consumer and
    effective consumer-wait signaling for FusedMerge.
    ## Why is this bad?
    One shared barrier cannot be signaled by all CTAs and by the leader CTA only at once.
    ## Example
    A Merge group whose members use `consumer_signaling_threads=All` and `CtaLeader`.
    ## Use instead
    The same signaling on the collapsed side.
    """, **OBJ, valid=[VALID_MERGE, group_program(
        [TA, M("TmaAsync", 1, 128, cta_layout_vmnk="(1, 1, 1, 1)", producer_signaling_threads="SignalingThreads.CtaLeader")])],
     invalid=[group_program([TA, M("TmaAsync", 1, 128, cta_layout_vmnk="(1, 1, 1, 1)", consumer_signaling_threads="SignalingThreads.CtaLeader")],
                            mark="TS464")])
rule("TS465", "unsupported-group-member-type", """
    A `PipelineGroup` member (or explicit group config) of type `ClcFetchAsync`.

    ## What it does
    Groups support `AsyncAsync`, `AsyncUmma`, `TmaAsync`, `TmaUmma`, `UmmaAsync` and
    `UmmaUmma` pipelines.
    ## Why is this bad?
    The CLC work-id queue has its own barrier protocol that cannot be shared.
    ## Example
    `PipelineGroup(members=[clc_queue_a, clc_queue_b])`
    ## Use instead
    Keep CLC pipelines ungrouped.
    """, **OBJ, valid=[VALID_MERGE],
     invalid=[group_program([M("ClcFetchAsync", 1, 128), M("ClcFetchAsync", 1, 128)], mark="TS465")])
rule("TS466", "group-members-differ-on-both-sides", """
    Group members whose producer kinds and consumer kinds both differ.

    ## What it does
    Heterogeneous members may differ on one side only (the side that is not collapsed).
    ## Why is this bad?
    No merged pipeline type exists: both sides would need a shared barrier for different
    kinds of agents.
    ## Example
    A `TmaAsync` and an `AsyncUmma` member in one group.
    ## Use instead
    Members that share the producer kind (Fork) or the consumer kind (Merge).
    """, **OBJ, valid=[VALID_MERGE],
     invalid=[group_program([TA, M("AsyncUmma", 32, 1)], mark="TS466")])
rule("TS467", "group-mode-contradicts-member-types", """
    A group mode that contradicts which side its heterogeneous members differ on.

    ## What it does
    When member types differ on the producer side the group must be Merge or FusedMerge;
    when they differ on the consumer side it must be Fork.
    ## Why is this bad?
    The collapsed (shared) side must be homogeneous; the declared mode would share the
    side whose kinds differ.
    ## Example
    `mode=PipelineGroupMode.Fork` over a `TmaAsync` and an `AsyncAsync` member.
    ## Use instead
    `mode=PipelineGroupMode.Merge`
    """, **OBJ, valid=[group_program([TA, M("AsyncAsync", 32, 128)], "Merge")],
     invalid=[group_program([TA, M("AsyncAsync", 32, 128)], "Fork", mark="TS467")])
rule("TS468", "group-collapsed-size-mismatch", """
    Group members with different cooperative-group sizes on the collapsed side.

    ## What it does
    Merge and FusedMerge members must have equal `consumer_group.size`, Fork members equal
    `producer_group.size` (when TMA and non-TMA producers are mixed, only the non-TMA
    members are compared).
    ## Why is this bad?
    One task drives the collapsed side, so one arrival count must fit every member.
    ## Example
    A Merge group with consumer sizes 128 and 64.
    ## Use instead
    Size both members' consumer groups for the task that consumes them.
    """, **OBJ, valid=[VALID_MERGE],
     invalid=[group_program([TA, M("TmaAsync", 1, 64, cta_layout_vmnk="(1, 1, 1, 1)")], mark="TS468"),
              group_program([M("AsyncAsync", 32, 32), M("AsyncAsync", 64, 32)], "Fork", mark="TS468")])
rule("TS469", "fork-member-bytes-mismatch", """
    Fork members with different `num_bytes`.

    ## What it does
    The members of a Fork group must declare the same transaction byte count.
    ## Why is this bad?
    One producer fills every member with one load; the shared full barrier expects one
    byte count.
    ## Example
    A Fork over members with `num_bytes=4096` and `num_bytes=2048`.
    ## Use instead
    Equal `num_bytes` on every member.
    """, **OBJ, valid=[group_program([TA, TA], "Fork")],
     invalid=[group_program([TA, M("TmaAsync", 1, 128, cta_layout_vmnk="(1, 1, 1, 1)", num_bytes=2048)], "Fork", mark="TS469")])
rule("TS470", "fused-merge-interleave", """
    A FusedMerge group whose members (or explicit config) use interleaved strides.

    ## What it does
    FusedMerge shares one full and one empty barrier per stage, so strides must be 1.
    ## Why is this bad?
    Lanes would need per-lane barriers that a FusedMerge layout does not have.
    ## Example
    `mode=PipelineGroupMode.FusedMerge` over members with `interleave_stride=2`.
    ## Use instead
    Merge mode, or no interleave.
    """, **OBJ, valid=[group_program([M("AsyncAsync", 32, 64, interleave_stride=2)] * 2, "Merge")],
     invalid=[group_program([M("AsyncAsync", 32, 64, interleave_stride=2)] * 2, "FusedMerge", mark="TS470")])
rule("TS471", "explicit-group-config-mismatch", """
    An explicit group `pipeline_config` that does not match its members.

    ## What it does
    With an explicit group config, every member's `num_stages` and interleave strides
    must equal the group's, a homogeneous group's `pipeline_type` must equal the members',
    and the group's `num_bytes` must be the sum of the members' (for Fork too).
    ## Why is this bad?
    The group's barriers are initialized from the explicit config while the members
    advance with their own.
    ## Example
    Two 4096-byte members and `pipeline_config` with `num_bytes=4096`.
    ## Use instead
    Omit the explicit config (it is derived), or make it consistent (`num_bytes=8192`).
    """, **OBJ, valid=[group_program([TA, TA], explicit=M("TmaAsync", 1, 128, cta_layout_vmnk="(1, 1, 1, 1)", num_bytes=8192))],
     invalid=[group_program([TA, TA], explicit=M("TmaAsync", 1, 128, cta_layout_vmnk="(1, 1, 1, 1)"), mark="TS471"),
              group_program([TA, TA], explicit=M("TmaAsync", 1, 128, cta_layout_vmnk="(1, 1, 1, 1)", num_bytes=8192, num_stages=2), mark="TS471")])


@register
class GroupMemberChangedAfterGrouping(Rule):
    """A group member whose config no longer matches the group it belongs to.

    ## What it does
    When the manager is built it re-checks every group: each member's `num_stages` must
    equal the group's, a homogeneous group's `pipeline_type` must equal the members', and
    (except for Fork) the members' `num_bytes` must sum to the group's. A member without a
    pipeline config is reported as TS462.
    ## Why is this bad?
    The group's barriers were sized from the configs the members had when it was built;
    a config replaced afterwards is silently out of sync with them.
    ## Example
    `smem_b.pipeline_config = other_cfg` after `PipelineGroup(members=[smem_a, smem_b])`.
    ## Use instead
    Give members their final configs before building the group.
    """
    code = "TS472"
    name = "group-member-changed-after-grouping"
    phase = "manager"
    order = 40
    VALID = [merge_program(config("TmaAsync", 1, 128, var="cfg_a"), config("TmaAsync", 1, 128, var="cfg_b"))]
    INVALID = [
        merge_program(config("TmaAsync", 1, 128, var="cfg_a"), config("TmaAsync", 1, 128, var="cfg_b"),
                      after=config("TmaAsync", 1, 128, var="smem_b.pipeline_config", num_stages=2,
                                   marks={"num_stages": "TS472"})),
        merge_program(config("TmaAsync", 1, 128, var="cfg_a"), config("TmaAsync", 1, 128, var="cfg_b"),
                      after=config("TmaAsync", 1, 128, var="smem_b.pipeline_config", num_bytes=1024,
                                   marks={"num_bytes": "TS472"})),
    ]

    def check(self, kernel):
        for gid, g in kernel.resources.items():
            gp = g.pipeline
            if not g.is_group or gp is None:
                continue
            members = [kernel.resources[m] for m in g.members if m in kernel.resources]
            missing = [m for m in members if m.pipeline is None]
            for m in missing:
                yield make_diagnostic("TS462", f"PipelineGroup '{g.label}' member '{m.label}' has no pipeline_config",
                                      m.range, related=[Related(g.range, "the group")])
            cfgs = [(m, m.pipeline) for m in members if m.pipeline is not None]
            for m, p in cfgs:
                if is_static_int(p.num_stages) and is_static_int(gp.num_stages) and p.num_stages != gp.num_stages:
                    yield self.diag(f"PipelineGroup '{g.label}': member '{m.label}' num_stages={p.num_stages} "
                                    f"differs from the group's ({gp.num_stages})", p.at("num_stages"),
                                    related=[Related(g.range, "the group")])
            types = [p.pipeline_type for _, p in cfgs]
            if cfgs and not missing and UNKNOWN not in types and len(set(types)) == 1 \
                    and gp.pipeline_type is not UNKNOWN and types[0] is not gp.pipeline_type:
                yield self.diag(f"PipelineGroup '{g.label}': member pipeline_type {types[0].value} differs from the "
                                f"group's ({gp.pipeline_type.value})", cfgs[0][1].range,
                                related=[Related(g.range, "the group")])
            if g.group_mode is PipelineGroupMode.Fork or missing or not cfgs:
                continue
            sizes = [p.num_bytes for _, p in cfgs]
            if all(is_static_int(b) for b in sizes) and is_static_int(gp.num_bytes) and sum(sizes) != gp.num_bytes:
                changed = [(m, p) for m, p in cfgs if _differs(p, gp, len(cfgs))] or cfgs
                yield self.diag(f"PipelineGroup '{g.label}': sum(member.num_bytes)={sum(sizes)} != "
                                f"group.num_bytes={gp.num_bytes}", changed[-1][1].at("num_bytes"),
                                related=[Related(g.range, "the group")]
                                + [Related(p.at("num_bytes"), f"num_bytes of '{m.label}'") for m, p in cfgs])


def _differs(p, gp, n):
    """Heuristic for where to point: a member whose bytes are not the group's average share."""
    return is_static_int(p.num_bytes) and is_static_int(gp.num_bytes) and p.num_bytes * n != gp.num_bytes


def _unregistered_group_program(register: bool) -> str:
    """merge_program with an SmemAllocator attached; `register`: the group is given to it."""
    src = merge_program(config("TmaAsync", 1, 128, var="cfg_a"), config("TmaAsync", 1, 128, var="cfg_b"))
    grp_line = 'grp = PipelineGroup(name="grp", members=[smem_a, smem_b], mode=PipelineGroupMode.Merge)'
    alloc = ("\n    smem = SmemAllocator()\n    smem.add_resource(smem_a)\n    smem.add_resource(smem_b)\n"
             + ("    smem.add_pipeline_group(grp)\n" if register else "") + "    smem.compute_layout()")
    src = src.replace(grp_line, grp_line + ("" if register else "  # expect: TS473") + alloc)
    src = src.replace("verbose=False)", "verbose=False, smem_allocator=smem)")
    return src.replace("from ts_runtime.pipeline_group import PipelineGroup\n",
                       "from ts_runtime.pipeline_group import PipelineGroup\n"
                       "from ts_runtime.memory import SmemAllocator\n", 1)


@register
class GroupBarrierStorageUnassigned(Rule):
    """A `PipelineGroup` whose barrier storage was never assigned before setup.

    ## What it does
    The group owns the shared barrier SMEM; it must be registered with
    `SmemAllocator.add_pipeline_group(group)` so `barrier_ptr` is set before `create()`.
    Checked when the manager has an `smem_allocator`: every group of the kernel's resources
    must have been given to it. A manager without one cannot give any group its barriers:
    `setup_resources_and_tasks()` (ts codegen, and ts-lint at that call) reports every group
    without an explicit `pipeline_config.barrier_ptr`, where the reference fails the same way.
    ## Why is this bad?
    The shared barriers would be laid out at an unassigned address.
    ## Example
    `allocator.add_resource(smem_a); allocator.add_resource(smem_b)` without
    `allocator.add_pipeline_group(ab_sync)`.
    ## Use instead
    `allocator.add_pipeline_group(ab_sync)`
    """
    code = "TS473"
    name = "group-barrier-storage-unassigned"
    phase = "manager"
    order = 41
    reference_exception = "RuntimeError"
    reference_checks_at = "kernel"    # raised by setup_resources_and_tasks() while tracing
    VALID = [_unregistered_group_program(True)]
    INVALID = [_unregistered_group_program(False)]

    def check(self, kernel):
        s = kernel.smem_allocator
        registered = getattr(s, "groups", None) if s is not None else None
        if registered is None:
            return
        for gid, g in kernel.resources.items():
            if g.is_group and gid not in registered:
                yield self.diag(f"PipelineGroup '{g.label}' barrier_ptr not set: register the group with "
                                "SmemAllocator.add_pipeline_group() before setup_resources_and_tasks() "
                                "creates its barriers", g.range,
                                related=[Related(s.range, "the SmemAllocator it is not added to")])


_TS474 = rule("TS474", "unknown-group-member", """
    `group.<name>` where the PipelineGroup has no member of that name (and no such attribute).

    ## What it does
    A group member is reached by its resource `name` (`ab_sync.smem_a`); the access is
    checked against the group's `members`, from both front ends.
    ## Why is this bad?
    Python raises AttributeError: the member was left out of `members=[...]`, or the name
    is misspelt.
    ## Example
    ```python
    group = PipelineGroup(name="ab", members=[smem_a], mode=PipelineGroupMode.Merge)
    schedule=load(gmem, group.smem_b)
    ```
    ## Use instead
    List the resource in `members=[...]` and use its `name`.
    """, phase="object", exc="AttributeError")


def _member_program(old: str, new: str) -> str:
    from .roles import group_program as two_member_program
    return two_member_program(subs=[(old, new)])


_TS474.VALID = [_member_program("warp_idx=0", "warp_idx=0")]
_TS474.INVALID = [
    _member_program("schedule=load(src, group.b)),", "schedule=load(src, group.c)),  # expect: TS474"),
    _member_program("group = PipelineGroup(name=\"group\", members=[a, b],",
                    "group = PipelineGroup(name=\"group\", members=[a],").replace(
        "schedule=load(src, group.b)),", "schedule=load(src, group.b)),  # expect: TS474"),
]


_TS475 = rule("TS475", "group-mode-not-an-enum", """
    A `PipelineGroup` whose `mode=` is not a `PipelineGroupMode`.

    ## What it does
    `mode` must be `PipelineGroupMode.Merge`, `.Fork` or `.FusedMerge`. Checked when the
    group is built, from both front ends (ts-lint where it knows the value: a string, a
    number, a dict, None).
    ## Why is this bad?
    The mode decides which pipeline operations go on the group and how the members share
    their barriers. The reference takes any value when the group is built and then fails
    inside the TaskManager with a bare `KeyError` or `TypeError`. A typical slip is passing
    the command line's string (`"merge"`) or the whole name-to-mode table instead of its
    entry.
    ## Example
    ```python
    ab_mode = _GROUP_MODE_MAP            # the dict, not _GROUP_MODE_MAP[ab_sync_mode]
    group = PipelineGroup(name="ab", members=[smem_a, smem_b], mode=ab_mode)
    ```
    ## Use instead
    `mode=_GROUP_MODE_MAP[ab_sync_mode]`, or `mode=PipelineGroupMode.Merge`.
    """, phase="object", exc="TypeError")

_TS475.VALID = [_member_program("mode=PipelineGroupMode.Merge", "mode=PipelineGroupMode.Merge")]
_TS475.INVALID = [
    _member_program("mode=PipelineGroupMode.Merge)", "mode=\"merge\")  # expect: TS475"),
    _member_program("mode=PipelineGroupMode.Merge)", "mode={\"merge\": PipelineGroupMode.Merge})  # expect: TS475"),
    _member_program("mode=PipelineGroupMode.Merge)", "mode=None)  # expect: TS475"),
]
