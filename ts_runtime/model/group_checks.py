"""PipelineGroup construction checks and merged-config derivation (TS460-TS471).

Shared by `PipelineGroup.__post_init__` and ts-lint. Works on PipelineModels.
"""
from __future__ import annotations

import dataclasses

from ..enums import PipelineGroupMode, PipelineType
from .values import UNKNOWN, is_static_int

_ALLOWED = {PipelineType.AsyncAsync, PipelineType.TmaAsync, PipelineType.TmaUmma,
            PipelineType.UmmaAsync, PipelineType.AsyncUmma, PipelineType.UmmaUmma}


def derive_group_config(name: str, mode, members: list, explicit=None):
    """members: [(member name, PipelineModel | None)]. Returns (PipelineModel|None, findings).

    findings: (code, exception type, message).
    """
    findings = []
    if not members:
        return None, [("TS460", ValueError, f"PipelineGroup '{name}' requires at least one member")]
    cfgs = []
    for mname, cfg in members:
        if cfg is None:
            findings.append(("TS462", ValueError, f"PipelineGroup '{name}' member '{mname}' has no pipeline_config"))
        else:
            cfgs.append((mname, cfg))
    if findings:
        return None, findings
    for mname, c in cfgs:
        if c.pipeline_type is not UNKNOWN and c.pipeline_type not in _ALLOWED:
            findings.append(("TS465", ValueError, f"PipelineGroup only supports AsyncAsync, TmaAsync, TmaUmma, "
                             f"UmmaAsync, AsyncUmma, UmmaUmma members; '{mname}' is {c.pipeline_type.value}"))
    if findings:
        return None, findings
    first = cfgs[0][1]
    for attr in ("num_stages", "advance_on_wait", "advance_on_acquire", "interleave_strides",
                 "cta_layout_vmnk", "mcast_mode_mn"):
        vals = {repr(getattr(c, attr)) for _, c in cfgs if getattr(c, attr) is not UNKNOWN}
        if len(vals) > 1:
            findings.append(("TS463", ValueError, f"PipelineGroup '{name}' members have mismatched {attr}"))
    if mode is PipelineGroupMode.FusedMerge and isinstance(first.interleave_strides, tuple) \
            and any(s != 1 for s in first.interleave_strides if is_static_int(s)):
        findings.append(("TS470", ValueError, f"FusedMerge group '{name}' cannot use interleaved strides"))
    collapsed = {PipelineGroupMode.Merge: ("consumer_signaling_threads",),
                 PipelineGroupMode.Fork: ("producer_signaling_threads",),
                 PipelineGroupMode.FusedMerge: ("producer_signaling_threads", "consumer_signaling_threads")}
    for attr in collapsed.get(mode, ()):
        if len({getattr(c, attr) for _, c in cfgs}) > 1:
            findings.append(("TS464", ValueError, f"PipelineGroup '{name}' members have mismatched {attr}"))
    types = [c.pipeline_type for _, c in cfgs if c.pipeline_type is not UNKNOWN]
    pkinds = {t.producer_kind for t in types}
    ckinds = {t.consumer_kind for t in types}
    if len(pkinds) > 1 and len(ckinds) > 1:
        findings.append(("TS466", ValueError, f"PipelineGroup '{name}' members differ on both producer and consumer sides"))
    elif len(pkinds) > 1 and mode is PipelineGroupMode.Fork:
        findings.append(("TS467", ValueError, f"PipelineGroup '{name}': mode Fork contradicts the derived topology "
                         "(producer kinds differ: Merge or FusedMerge)"))
    elif len(ckinds) > 1 and mode in (PipelineGroupMode.Merge, PipelineGroupMode.FusedMerge):
        findings.append(("TS467", ValueError, f"PipelineGroup '{name}': mode {mode.value} contradicts the derived "
                         "topology (consumer kinds differ: Fork)"))

    def sizes(attr, skip_tma):
        vals = []
        for _, c in cfgs:
            if skip_tma and c.pipeline_type is not UNKNOWN and c.pipeline_type.producer_kind == "tma":
                continue
            vals.append(getattr(c, attr))
        return {v for v in vals if v is not UNKNOWN}
    mixed_tma = len({c.pipeline_type.producer_kind == "tma" for _, c in cfgs if c.pipeline_type is not UNKNOWN}) > 1
    if mode is PipelineGroupMode.Merge and len(sizes("consumer_group_size", mixed_tma)) > 1:
        findings.append(("TS468", ValueError, f"Merge members of '{name}' have different consumer_group.size"))
    if mode is PipelineGroupMode.Fork and len(sizes("producer_group_size", mixed_tma)) > 1:
        findings.append(("TS468", ValueError, f"Non-TMA Fork members of '{name}' have different producer_group.size"))
    if mode is PipelineGroupMode.Fork and len({c.num_bytes for _, c in cfgs if c.num_bytes is not UNKNOWN}) > 1:
        findings.append(("TS469", ValueError, f"Fork members of '{name}' must have the same num_bytes"))
    if findings:
        return None, findings
    merged = dataclasses.replace(first)
    byte_vals = [c.num_bytes for _, c in cfgs]
    if mode is not PipelineGroupMode.Fork:
        merged.num_bytes = sum(byte_vals) if all(is_static_int(b) for b in byte_vals) else UNKNOWN
        ps = [c.producer_group_size for _, c in cfgs]
        merged.producer_group_size = sum(ps) if all(is_static_int(v) for v in ps) else UNKNOWN
    else:
        cs = [c.consumer_group_size for _, c in cfgs]
        merged.consumer_group_size = sum(cs) if all(is_static_int(v) for v in cs) else UNKNOWN
    if explicit is not None:
        for mname, c in cfgs:
            if c.num_stages != explicit.num_stages:
                findings.append(("TS471", ValueError, f"member '{mname}' num_stages differs from the group's "
                                 "explicit num_stages"))
            if c.interleave_strides != explicit.interleave_strides:
                findings.append(("TS471", ValueError, f"member '{mname}' differs from the group's explicit "
                                 "interleave_strides"))
        if len(set(types)) == 1 and explicit.pipeline_type is not UNKNOWN and types and types[0] != explicit.pipeline_type:
            findings.append(("TS471", ValueError, f"group '{name}' explicit pipeline_type differs from its members'"))
        if all(is_static_int(b) for b in byte_vals) and is_static_int(explicit.num_bytes) \
                and sum(byte_vals) != explicit.num_bytes:
            findings.append(("TS471", ValueError, f"group '{name}' explicit num_bytes={explicit.num_bytes} != "
                             f"sum of member num_bytes {sum(byte_vals)}"))
        return explicit, findings
    return merged, findings
