"""PipelineGroup construction checks and merged-config derivation (TS460-TS471, TS475).

Shared by `PipelineGroup.__post_init__` and ts-lint. Works on PipelineModels.

Two paths, as in the reference: without an explicit group `pipeline_config` the members'
configs are checked for compatibility and merged (TS463-TS469); with one, only the
explicit config is validated against the members (TS471). TS460, TS462, TS465 and
TS470 apply to both.
"""
from __future__ import annotations

import dataclasses

from ..enums import PipelineGroupMode, PipelineType
from .values import UNKNOWN, is_static_int

_ALLOWED = (PipelineType.AsyncAsync, PipelineType.AsyncUmma, PipelineType.TmaAsync,
            PipelineType.TmaUmma, PipelineType.UmmaAsync, PipelineType.UmmaUmma)
_ALLOWED_NAMES = ", ".join(t.value for t in _ALLOWED)

# the side(s) each mode collapses onto one shared barrier
COLLAPSED_SIGNALING = {
    PipelineGroupMode.Merge: ("consumer_signaling_threads",),
    PipelineGroupMode.Fork: ("producer_signaling_threads",),
    PipelineGroupMode.FusedMerge: ("producer_signaling_threads", "consumer_signaling_threads",
                                   "consumer_wait_signaling_threads"),
}


def check_membership(members):
    """TS461: members = [(member name, identity key, key of the group it already belongs
    to, or None)]. A resource can belong to one group only (listing it twice counts)."""
    seen = set()
    for mname, key, owner in members:
        if owner is not None or key in seen:
            yield ("TS461", ValueError, f"Member '{mname}' already belongs to a PipelineGroup")
        seen.add(key)


def check_mode(name, mode, type_name: str):
    """TS475: `mode` must be a PipelineGroupMode (`type_name`: how the front end names
    the value's type). The reference takes any value when the group is built and fails
    later, inside the TaskManager, with a Python error (a dict or a str used as a key)."""
    if mode is UNKNOWN or isinstance(mode, PipelineGroupMode):
        return []
    return [("TS475", TypeError, f"PipelineGroup '{name}': mode must be a PipelineGroupMode (Merge, Fork or "
                                 f"FusedMerge), got a {type_name}")]


def _known(values):
    return [v for v in values if v is not UNKNOWN]


def _effective_wait(c):
    w = c.consumer_wait_signaling_threads
    return c.consumer_signaling_threads if w is None else w


def _sig(v):
    return getattr(v, "name", None) or repr(v)


def derive_group_config(name: str, mode, members: list, explicit=None):
    """members: [(member name, PipelineModel | None)], or (member name, None, class name)
    for a member whose own `__init__` dropped the pipeline_config given to it (it never
    called `super().__init__`). Returns (PipelineModel|None, findings).

    findings: (code, exception type, message).
    """
    if not members:
        return None, [("TS460", ValueError, f"PipelineGroup '{name}' requires at least one member")]
    findings = []
    cfgs = []
    for mname, cfg, *lost in members:
        if cfg is None:
            findings.append(("TS462", ValueError, _no_config(name, mname, lost[0] if lost else None)))
        else:
            cfgs.append((mname, cfg))
    if findings:
        return None, findings
    for mname, c in cfgs:
        if c.pipeline_type is not UNKNOWN and c.pipeline_type not in _ALLOWED:
            findings.append(("TS465", ValueError, f"PipelineGroup '{name}' only supports {_ALLOWED_NAMES} "
                             f"members; '{mname}' is {c.pipeline_type.value}"))
    if explicit is not None and explicit.pipeline_type is not UNKNOWN and explicit.pipeline_type not in _ALLOWED:
        findings.append(("TS465", ValueError, f"PipelineGroup '{name}' only supports {_ALLOWED_NAMES}; its "
                         f"explicit pipeline_config is {explicit.pipeline_type.value}"))
    if findings:
        return None, findings
    if explicit is not None:
        findings = list(_validate_explicit(name, cfgs, explicit))
        findings += _fused_interleave(name, mode, explicit)
        return explicit, findings
    findings = list(_check_compatible(name, mode, cfgs))
    findings += _fused_interleave(name, mode, cfgs[0][1])
    if findings:
        return None, findings
    return _merge(mode, cfgs), findings


def _no_config(name, mname, lost_cls) -> str:
    """TS462's text. The reference's names only the member, whose name is empty when its
    class's `__init__` skipped the base's: the class and the missing call are then named
    too (the TaskManager's TS238 never runs, as the group is not built)."""
    if lost_cls is None:
        return f"PipelineGroup '{name}' member '{mname}' has no pipeline_config"
    who = f"'{mname}' ({lost_cls})" if mname else lost_cls
    return (f"PipelineGroup '{name}' member {who} has no pipeline_config: {lost_cls}.__init__ does not call "
            f"super().__init__(...), so the pipeline_config passed to it is dropped; call "
            f"super().__init__(**kwargs)")


def _fused_interleave(name, mode, cfg):
    """TS470: a FusedMerge group shares one full and one empty barrier: no lanes."""
    s = cfg.interleave_strides
    if mode is PipelineGroupMode.FusedMerge and isinstance(s, tuple) and any(is_static_int(x) and x != 1 for x in s):
        return [("TS470", ValueError, f"FusedMerge group '{name}' cannot use interleaved strides (got {s})")]
    return []


def culprit(cfgs, get) -> str:
    """The member to point at for a mismatch: the first whose value differs from the
    first member's (a finding carries it as a 4th element; callers anchor on its config)."""
    first = repr(get(cfgs[0][1]))
    for mname, c in cfgs[1:]:
        v = get(c)
        if v is not UNKNOWN and repr(v) != first:
            return mname
    return cfgs[0][0]


def _check_compatible(name, mode, cfgs):
    """TS463, TS464, TS466-TS469 on the derived (no explicit config) path."""
    for attr in ("num_stages", "advance_on_wait", "advance_on_acquire", "interleave_strides",
                 "cta_layout_vmnk", "mcast_mode_mn"):
        vals = _known(getattr(c, attr) for _, c in cfgs)
        if len({repr(v) for v in vals}) > 1:
            shown = " vs ".join(dict.fromkeys(repr(v) for v in vals))
            yield ("TS463", ValueError, f"PipelineGroup '{name}' members have mismatched {attr}: {shown}",
                   culprit(cfgs, lambda c, a=attr: getattr(c, a)))
    # (a mode that is not a PipelineGroupMode, which the reference takes too, collapses nothing)
    for attr in (COLLAPSED_SIGNALING.get(mode, ()) if isinstance(mode, PipelineGroupMode) else ()):
        get = _effective_wait if attr == "consumer_wait_signaling_threads" else (lambda c, a=attr: getattr(c, a))
        vals = _known(get(c) for _, c in cfgs)
        if len(set(vals)) > 1:
            label = "effective consumer_wait_signaling_threads" if attr.startswith("consumer_wait") else attr
            shown = " vs ".join(dict.fromkeys(_sig(v) for v in vals))
            yield ("TS464", ValueError, f"{mode.value} group '{name}' members have mismatched {label}: {shown}")
    types = _known(c.pipeline_type for _, c in cfgs)
    pkinds = {t.producer_kind for t in types}
    ckinds = {t.consumer_kind for t in types}
    if len(pkinds) > 1 and len(ckinds) > 1:
        yield ("TS466", ValueError, f"PipelineGroup '{name}' members differ on both producer and consumer sides "
               f"(producer kinds {sorted(pkinds)}, consumer kinds {sorted(ckinds)}): no merged pipeline_type exists")
    elif len(pkinds) > 1 and mode is PipelineGroupMode.Fork:
        yield ("TS467", ValueError, f"PipelineGroup '{name}': mode=Fork contradicts the topology derived from the "
               "member types (their producer kinds differ: Merge or FusedMerge)")
    elif len(ckinds) > 1 and mode in (PipelineGroupMode.Merge, PipelineGroupMode.FusedMerge):
        yield ("TS467", ValueError, f"PipelineGroup '{name}': mode={mode.value} contradicts the topology derived "
               "from the member types (their consumer kinds differ: Fork)")
    # collapsed-side cooperative-group sizes; when TMA and non-TMA producers are mixed,
    # the TMA members' counts are transaction-based and only the others are compared
    tma = [c.pipeline_type.producer_kind == "tma" for _, c in cfgs if c.pipeline_type is not UNKNOWN]
    mixed_tma = len(set(tma)) > 1

    def sizes(attr):
        vals = []
        for _, c in cfgs:
            if mixed_tma and c.pipeline_type is not UNKNOWN and c.pipeline_type.producer_kind == "tma":
                continue
            vals.append(getattr(c, attr))
        return set(_known(vals))
    prefix = "Non-TMA " if mixed_tma else ""
    if mode in (PipelineGroupMode.Merge, PipelineGroupMode.FusedMerge):
        s = sizes("consumer_group_size")
        if len(s) > 1:
            yield ("TS468", ValueError, f"{prefix}Merge members of '{name}' have different consumer_group.size: "
                   f"{sorted(s, key=repr)}")
    if mode is PipelineGroupMode.Fork:
        s = sizes("producer_group_size")
        if len(s) > 1:
            yield ("TS468", ValueError, f"{prefix}Fork members of '{name}' have different producer_group.size: "
                   f"{sorted(s, key=repr)}")
        b = _known(c.num_bytes for _, c in cfgs)
        if len(set(b)) > 1:
            yield ("TS469", ValueError, f"Fork members of '{name}' must have the same num_bytes (one producer loads "
                   f"the data once), got {b}")


def _validate_explicit(name, cfgs, explicit):
    """TS471: an explicit group config must match its members."""
    for mname, c in cfgs:
        if is_static_int(c.num_stages) and is_static_int(explicit.num_stages) and c.num_stages != explicit.num_stages:
            yield ("TS471", ValueError, f"PipelineGroup '{name}' explicit num_stages ({explicit.num_stages}) differs "
                   f"from member '{mname}' ({c.num_stages})")
        if UNKNOWN not in (c.interleave_strides, explicit.interleave_strides) \
                and c.interleave_strides != explicit.interleave_strides:
            yield ("TS471", ValueError, f"PipelineGroup '{name}' explicit interleave_strides "
                   f"({explicit.interleave_strides}) differ from member '{mname}' ({c.interleave_strides})")
    types = [c.pipeline_type for _, c in cfgs]
    if UNKNOWN not in types and len(set(types)) == 1 and explicit.pipeline_type is not UNKNOWN \
            and types[0] is not explicit.pipeline_type:
        yield ("TS471", ValueError, f"PipelineGroup '{name}' explicit pipeline_type ({explicit.pipeline_type.value}) "
               f"differs from its members' ({types[0].value})")
    byte_vals = [c.num_bytes for _, c in cfgs]
    if all(is_static_int(b) for b in byte_vals) and is_static_int(explicit.num_bytes) \
            and sum(byte_vals) != explicit.num_bytes:
        yield ("TS471", ValueError, f"PipelineGroup '{name}' explicit num_bytes ({explicit.num_bytes}) != sum of "
               f"member num_bytes ({sum(byte_vals)})")


def _merge(mode, cfgs):
    """The merged config (model.md §5.7): collapsed side equal, other side summed;
    num_bytes summed (Merge/FusedMerge) or shared (Fork)."""
    first = cfgs[0][1]
    merged = dataclasses.replace(first)

    def total(attr):
        vals = [getattr(c, attr) for _, c in cfgs]
        return sum(vals) if all(is_static_int(v) for v in vals) else UNKNOWN
    if mode is PipelineGroupMode.Fork:
        merged.consumer_group_size = total("consumer_group_size")
    else:
        merged.num_bytes = total("num_bytes")
        merged.producer_group_size = total("producer_group_size")
    return merged
