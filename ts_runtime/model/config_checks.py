"""Object-time checks of one pipeline config (TS401-TS407), shared by both front ends.

`PipelineConfig.__post_init__` raises the first finding (as the reference does);
ts-lint reports all of them. `check_pipeline_config_at` also gives the range of the
keyword each finding is about, so both front ends point at `interleave_stride=...`
rather than at the whole factory call (`PipelineModel.at(...)` falls back to the call
when the keyword is absent).
"""
from __future__ import annotations

from ..enums import PipelineType, SignalingThreads
from .values import UNKNOWN, is_static_int

_ASYNC_OPS = ("AsyncThread", "AsyncLoad")
_ROLES = ("producer_acquire", "producer_commit", "consumer_wait", "consumer_release")


def check_pipeline_config(p):
    """Yields (code, exception type, message) for a PipelineModel."""
    for code, exc, msg, _keys in _checks(p):
        yield code, exc, msg


def check_pipeline_config_at(p):
    """Yields (code, exception type, message, SourceRange of the offending keyword)."""
    for code, exc, msg, keys in _checks(p):
        yield code, exc, msg, p.at(*keys)


def _checks(p):
    """Yields (code, exception type, message, keywords the finding points at)."""
    for fname in ("producer_signaling_threads", "consumer_signaling_threads", "consumer_wait_signaling_threads"):
        v = getattr(p, fname)
        if v is UNKNOWN or (v is None and fname == "consumer_wait_signaling_threads"):
            continue
        if not isinstance(v, SignalingThreads):
            yield ("TS401", TypeError, f"{fname} must be a SignalingThreads value, got {type(v).__name__}",
                   (fname,))
        elif not SignalingThreads.is_valid_combination(v):
            yield ("TS401", ValueError, f"{fname} has unsupported SignalingThreads combination {v!r}; "
                   "supported values are All, CtaLeader, TaskWarpLeader and CtaLeader|TaskWarpLeader", (fname,))
    ptype = p.pipeline_type
    for code, fname, allowed_type in (("TS402", "async_producer_op", PipelineType.AsyncAsync),
                                      ("TS403", "umma_consumer_producer_op", PipelineType.AsyncUmma)):
        op = getattr(p, fname)
        if op is UNKNOWN or op is None:
            continue
        keys = (fname, "producer_op")
        if op not in _ASYNC_OPS:
            yield (code, ValueError, f"{fname} must be AsyncThread or AsyncLoad, got {op}", keys)
        elif op != "AsyncThread" and ptype is not UNKNOWN and ptype is not allowed_type:
            yield (code, ValueError, f"{fname} can only be changed for PipelineType.{allowed_type.value}", keys)
    strides = p.interleave_strides
    if strides is UNKNOWN:
        return
    keys = ("interleave_stride",)
    if not (isinstance(strides, tuple) and len(strides) == 4):
        yield ("TS404", ValueError, "interleave_stride tuple must be (producer_acquire, producer_commit, "
               "consumer_wait, consumer_release)", keys)
        return
    uniform = len(set(map(repr, strides))) == 1
    for role, s in zip(_ROLES, strides):
        if s is UNKNOWN:
            return
        what = "uniform interleave_stride" if uniform else f"{role} interleave_stride"
        if not is_static_int(s):
            yield ("TS404", TypeError, f"{what} must be an int, got {s!r}", keys)
            return
        if s < 1:
            yield ("TS404", ValueError, f"{what} must be >= 1, got {s}", keys)
            return
    n = p.num_stages
    if is_static_int(n):
        for role, s in zip(_ROLES, strides):
            if n % s:
                yield ("TS405", ValueError, f"{role} interleave_stride={s} must evenly divide num_stages={n}",
                       keys + ("num_stages",))
                return
    acq, com, wai, rel = strides
    if acq != com and p.advance_on_acquire is False:
        yield ("TS406", ValueError, f"producer_acquire and producer_commit interleave strides differ ({acq} vs "
               f"{com}): advance_on_acquire=True is required so the two roles use separate producer pipeline "
               "states", keys + ("advance_on_acquire",))
    if wai != rel and p.advance_on_wait is False:
        yield ("TS407", ValueError, f"consumer_wait and consumer_release interleave strides differ ({wai} vs "
               f"{rel}): advance_on_wait=True is required so the two roles use separate consumer pipeline "
               "states", keys + ("advance_on_wait",))
