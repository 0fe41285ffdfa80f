"""Object-time checks of one pipeline config (TS401-TS407), shared by both front ends.

`PipelineConfig.__post_init__` raises the first finding (as the reference does);
ts-lint reports all of them at the factory call.
"""
from __future__ import annotations

from ..enums import PipelineType, SignalingThreads
from .values import UNKNOWN, is_static_int

_ASYNC_OPS = ("AsyncThread", "AsyncLoad")


def check_pipeline_config(p):
    """Yields (code, exception type, message) for a PipelineModel."""
    for fname in ("producer_signaling_threads", "consumer_signaling_threads", "consumer_wait_signaling_threads"):
        v = getattr(p, fname)
        if v is UNKNOWN or (v is None and fname == "consumer_wait_signaling_threads"):
            continue
        if not isinstance(v, SignalingThreads):
            yield ("TS401", TypeError, f"{fname} must be a SignalingThreads value, got {v!r}")
        elif not SignalingThreads.is_valid_combination(v):
            yield ("TS401", ValueError, f"unsupported SignalingThreads combination for {fname}: {v!r}")
    ptype = p.pipeline_type
    op = p.async_producer_op
    if op is not UNKNOWN and op is not None:
        if op not in _ASYNC_OPS:
            yield ("TS402", ValueError, f"async_producer_op must be AsyncThread or AsyncLoad, got {op}")
        elif op != "AsyncThread" and ptype is not UNKNOWN and ptype is not PipelineType.AsyncAsync:
            yield ("TS402", ValueError, "async_producer_op can only be changed for PipelineType.AsyncAsync")
    op = p.umma_consumer_producer_op
    if op is not UNKNOWN and op is not None:
        if op not in _ASYNC_OPS:
            yield ("TS403", ValueError, f"umma_consumer_producer_op must be AsyncThread or AsyncLoad, got {op}")
        elif op != "AsyncThread" and ptype is not UNKNOWN and ptype is not PipelineType.AsyncUmma:
            yield ("TS403", ValueError, "umma_consumer_producer_op can only be changed for PipelineType.AsyncUmma")
    strides = p.interleave_strides
    if strides is UNKNOWN:
        return
    if not (isinstance(strides, tuple) and len(strides) == 4):
        yield ("TS404", ValueError, "interleave_stride tuple must be (producer_acquire, producer_commit, "
               "consumer_wait, consumer_release)")
        return
    for s in strides:
        if s is UNKNOWN:
            return
        if not is_static_int(s):
            yield ("TS404", TypeError, f"interleave_stride must be an int or a 4-tuple of ints, got {s!r}")
            return
        if s < 1:
            yield ("TS404", ValueError, f"interleave_stride must be >= 1, got {s}")
            return
    n = p.num_stages
    if is_static_int(n):
        for role, s in zip(("producer_acquire", "producer_commit", "consumer_wait", "consumer_release"), strides):
            if n % s:
                yield ("TS405", ValueError, f"{role} interleave stride {s} must evenly divide num_stages={n}")
                return
    acq, com, wai, rel = strides
    if acq != com and p.advance_on_acquire is False:
        yield ("TS406", ValueError, "acquire and commit interleave strides differ: advance_on_acquire=True is required")
    if wai != rel and p.advance_on_wait is False:
        yield ("TS407", ValueError, "wait and release interleave strides differ: advance_on_wait=True is required")
