"""TS441-TS443: the Hopper `TmaWgmma` pipeline (a ts extension; docs/hopper.md).

`PipelineType.TmaWgmma` = a TMA producer (as `TmaAsync`: one elected arrive_and_expect_tx
per producer warp, the TMA completes the transaction) and a wgmma warpgroup consumer. The
consumer's work issues asynchronous wgmmas that keep reading the stage after the work
returns; its `release()` therefore first runs `wgmma.wait_group(depth)` (depth = the
stages the task still holds after this release, `model.derive.wgmma_release_depths`) and
then arrives on `empty` like a TmaAsync consumer (lane-based, multicast-aware, or all
threads). Checkers treat the release as the end of the read, as for a thread consumer.

The reference (Blackwell-only) has no such pipeline type, so these rules are ts-only: their
example programs cannot go through the reference oracle (`reference_checks_at = "never"`).
Producer-side counts, TaskWarpLeader and leader-routed bytes are the TMA rules TS416-TS423,
TS433-TS435 (TmaWgmma is one of `derive.TMA_TYPES`); interleave is rejected by TS408.
"""
from __future__ import annotations

import textwrap

from ..diagnostics import Related
from ..enums import PipelineType, ScheduleStage
from ..model import derive as D
from ..model.values import is_static_int
from .base import Rule
from .pipeline_config import ORDER_ARRIVALS, _HEADER, _check_size, _Finding, _pipelined
from .registry import register

S = ScheduleStage
WARPS_PER_WARPGROUP = 4


# =========================================================================== example programs
def _cfg(consumer: str, *, cluster: str = "(1, 1, 1, 1)", mark: str = "", advance_on_wait=False,
         call_mark: str = "") -> str:
    lines = ["cfg = PipelineConfig.create_tma_wgmma_pipeline_cfg(" + (f"  # expect: {call_mark}" if call_mark else ""),
             "    num_stages=4,", "    num_bytes=4096,", "    producer_group=CooperativeGroup(Agent.Thread),",
             f"    consumer_group={consumer}," + (f"  # expect: {mark}" if mark else ""),
             f"    cta_layout_vmnk={cluster},"]
    if advance_on_wait:
        lines.append("    advance_on_wait=True,")
    return "\n".join(lines + [")"])


def wgmma_program(*, consumer="CooperativeGroup(Agent.Thread, 4)", cluster="(1, 1, 1, 1)", cfg_mark="",
                  mma_warp=0, mma_warps=4, mma_mark="", split=False, lag=False, advance_on_wait=None,
                  call_mark="") -> str:
    """src -> buf (TmaWgmma) -> dst: a 1-warp TMA load task and a wgmma task (or, with
    `split`, a waiting task and a separate releasing task); `lag` releases stage k-1 after
    the wait of stage k (and turns on advance_on_wait unless told otherwise)."""
    if advance_on_wait is None:
        advance_on_wait = lag
    load_warp = mma_warp + mma_warps if mma_warp == 0 else 0
    if lag:
        mma_body = """\
        with domain_loop(0, 8, 1) as k:
            buf.wait()
            buf.read()
            with k.every(1, start=1):
                buf.release()
        buf.release()
        dst.store()"""
    else:
        mma_body = """\
        with domain_loop(0, 8, 1):
            buf.wait()
            buf.read()
            dst.store()
            buf.release()"""
    tasks = [f'        Task(name="Load", src_resources=[src], dst_resources=[buf], warp_idx={load_warp}, num_warps=1,'
             f' schedule=load(src, buf)),']
    if split:
        tasks += [f'        Task(name="Mma", src_resources=[buf], dst_resources=[dst], warp_idx={mma_warp}, '
                  f'num_warps={mma_warps}, schedule=mma(buf, dst)),',
                  f'        Task(name="Release", src_resources=[buf], dst_resources=[], warp_idx=8, num_warps=4, '
                  f'schedule=rel(buf)),{f"  # expect: {mma_mark}" if mma_mark else ""}']
        mma_body = """\
        with domain_loop(0, 8, 1):
            buf.wait()
            dst.store()"""
    else:
        tasks.append(f'        Task(name="Mma", src_resources=[buf], dst_resources=[dst], warp_idx={mma_warp}, '
                     f'num_warps={mma_warps}, schedule=mma(buf, dst)),{f"  # expect: {mma_mark}" if mma_mark else ""}')
    rel = """

    @schedule
    def rel(buf):
        with domain_loop(0, 8, 1):
            buf.release()
""" if split else "\n"
    return _HEADER + f'''

def build():
{textwrap.indent(_cfg(consumer, cluster=cluster, mark=cfg_mark, advance_on_wait=advance_on_wait,
                     call_mark=call_mark), "    ")}
    src, dst = Gmem(name="src"), Gmem(name="dst")
    buf = Buf(name="buf", pipeline_config=cfg)

    @schedule
    def load(src, buf):
        with domain_loop(0, 8, 1):
            src.load()
            buf.acquire()
            buf.fill()
            buf.commit()

    @schedule
    def mma(buf, dst):
{mma_body}
{rel}
    tasks = [
{chr(10).join(tasks)}
    ]
    graph = {{buf: [src], dst: [buf]}}
    return TaskManager(tasks=tasks, resource_dependency_graph=graph, verbose=False)
'''


VALID_WGMMA = wgmma_program()


# =========================================================================== checks
def _wgmma_resources(kernel):
    for rid, r, p in _pipelined(kernel):
        if p.pipeline_type is PipelineType.TmaWgmma:
            yield rid, r, p


def hopper_findings(kernel) -> list:
    out = []
    for rid, r, p in _wgmma_resources(kernel):
        cons = D.releasers(kernel, rid)
        if cons and D.layout_kind(p) in ("none", "tuple"):
            _check_size(out, "TS441", r, p, "consumer", D.tma_async_consumer_expected(p, cons))
        users = [t for t in kernel.tasks if D.stages_of(t, rid) & {S.ConsumerWait, S.ConsumerTryWait,
                                                                   S.ConsumerWork, S.ConsumerRelease}]
        for t in users:
            w, n = t.warp_idx, t.num_warps
            if not (is_static_int(w) and is_static_int(n)):
                continue
            if w % WARPS_PER_WARPGROUP or n % WARPS_PER_WARPGROUP:
                out.append(_Finding(
                    "TS442", f"task '{t.name}' (warps [{w}, {w + n})) consumes TmaWgmma resource '{r.label}', but a "
                    "wgmma consumer must be whole warpgroups: warp_idx and num_warps multiples of 4",
                    t.at("warp_idx"), [Related(r.range, "resource")]))
        for t in users:
            st = D.stages_of(t, rid)
            waits = bool(st & {S.ConsumerWait, S.ConsumerTryWait})
            releases = S.ConsumerRelease in st
            if waits != releases:
                what = "releases it without waiting on it" if releases else "waits on it without releasing it"
                out.append(_Finding(
                    "TS443", f"task '{t.name}' {what}: a TmaWgmma stage must be waited on and released by the same "
                    f"wgmma task (the release's wgmma.wait_group only covers the warps' own wgmmas) - resource "
                    f"'{r.label}'", t.at("schedule"), [Related(p.range, f"pipeline config of '{r.label}'")]))
        if D.effective_advance_on_wait(kernel, rid) is False:
            for t in users:
                most = D.stages_held(t, rid)[1]
                if most > 1:
                    out.append(_Finding(
                        "TS444", f"task '{t.name}' holds up to {most} stages of TmaWgmma resource '{r.label}' at once "
                        "(a lagged release), but advance_on_wait is False: wait and release share one cursor, so the "
                        "second wait re-waits the unreleased stage and the wgmma reads it again; set "
                        "advance_on_wait=True", p.at("advance_on_wait"), [Related(t.at("schedule"), f"task '{t.name}'")]))
    return out


class _Hopper(Rule):
    phase = "manager"
    order = ORDER_ARRIVALS
    reference_checks_at = "never"     # the reference has no TmaWgmma pipeline type

    def check(self, kernel):
        for code, message, rng, related, severity in hopper_findings(kernel):
            if code == self.code:
                yield self.diag(message, rng, related=related, severity=severity)


@register
class TmaWgmmaConsumerGroupSizeMismatch(_Hopper):
    """A `TmaWgmma` consumer_group size that does not match the releasing warps.

    ## What it does
    The wgmma task's release arrives on `empty` like a TmaAsync consumer: one arrival per
    releasing warp and per CTA the stage is multicast from (lanes-per-warp from
    `cta_layout_vmnk` and `mcast_mode_mn`: `M + N - 1` for (1, 1)), or one per thread.
    `consumer_group.size` must be `Σ warps × lanes-per-warp` or `Σ warps × 32`.
    ## Why is this bad?
    The empty barrier never completes (too large) or completes while a warpgroup, or the
    peer CTA of a multicast, still reads the stage (too small): the TMA overwrites SMEM
    under a running wgmma.
    ## Example
    Two wgmma warpgroups (8 warps) in a 2x1 cluster with `CooperativeGroup(Agent.Thread, 8)`.
    ## Use instead
    `CooperativeGroup(Agent.Thread, 16)`: 8 warps × 2 CTAs.
    """
    code = "TS441"
    name = "tma-wgmma-consumer-group-size-mismatch"
    VALID = [VALID_WGMMA, wgmma_program(consumer="CooperativeGroup(Agent.Thread, 128)", lag=True),
             wgmma_program(consumer="CooperativeGroup(Agent.Thread, 8)", cluster="(1, 2, 1, 1)")]
    INVALID = [wgmma_program(consumer="CooperativeGroup(Agent.Thread, 8)", cfg_mark="TS441"),
               wgmma_program(consumer="CooperativeGroup(Agent.Thread, 4)", cluster="(1, 2, 1, 1)",
                             cfg_mark="TS441")]


@register
class TmaWgmmaConsumerNotWarpgroup(_Hopper):
    """A `TmaWgmma` consumer task that is not made of whole warpgroups.

    ## What it does
    Every task that waits on, reads or releases a `TmaWgmma` resource must start at a
    warp index that is a multiple of 4 and span a multiple of 4 warps.
    ## Why is this bad?
    `wgmma.mma_async`, `wgmma.commit_group` and `wgmma.wait_group` are warpgroup-collective
    (`.sync.aligned` over 4 consecutive warps starting at a multiple of 4); a task that
    covers part of a warpgroup cannot issue them, and the release's `wait_group` would not
    cover the wgmmas reading the stage.
    ## Example
    `Task(..., warp_idx=1, num_warps=4, ...)` consuming a TmaWgmma resource.
    ## Use instead
    `warp_idx=4, num_warps=4` (one warpgroup) or `num_warps=8` (two).
    """
    code = "TS442"
    name = "tma-wgmma-consumer-not-warpgroup"
    VALID = [VALID_WGMMA, wgmma_program(mma_warp=4, consumer="CooperativeGroup(Agent.Thread, 8)", mma_warps=8)]
    INVALID = [wgmma_program(mma_warp=1, mma_mark="TS442"),
               wgmma_program(mma_warps=2, consumer="CooperativeGroup(Agent.Thread, 2)", mma_mark="TS442")]


@register
class TmaWgmmaSplitConsumer(_Hopper):
    """A `TmaWgmma` stage waited on by one task and released by another.

    ## What it does
    For a `TmaWgmma` resource, every task that waits on it must also release it, and every
    task that releases it must also wait on it.
    ## Why is this bad?
    The release waits for the wgmma groups reading the stage with `wgmma.wait_group`, which
    only tracks the wgmmas of the executing warps. A release from other warps arrives on
    `empty` while the wgmma task's tensor-core reads may still be running, and the next
    TMA load overwrites the stage under them.
    ## Example
    A wgmma task that only waits, and a separate task that releases the stage.
    ## Use instead
    Release in the wgmma task (lagged by one stage to keep one group in flight:
    `with k.every(1, start=1): buf.release()` in the loop and one `buf.release()` after it).
    """
    code = "TS443"
    name = "tma-wgmma-split-consumer"
    VALID = [VALID_WGMMA, wgmma_program(lag=True)]
    INVALID = [wgmma_program(split=True, mma_mark="TS443")]


@register
class TmaWgmmaLaggedReleaseWithoutAdvanceOnWait(_Hopper):
    """A lagged `TmaWgmma` release (two stages held) without `advance_on_wait=True`.

    ## What it does
    Counts, per task, the stages of a `TmaWgmma` resource it holds at once (waits minus
    releases, head → loop → tail). More than one (the pipelined wgmma pattern: release
    stage `k - 1` after waiting on stage `k`) needs `advance_on_wait=True`.
    ## Why is this bad?
    Without it, wait, work and release share one consumer cursor that only `release()`
    advances: the second `wait()` waits on the stage already held, and the wgmma reads the
    same SMEM stage again instead of the next one - wrong results, no deadlock, no race
    the interleaving checker could see.
    ## Example
    `create_tma_wgmma_pipeline_cfg(...)` with `with k.every(1, start=1): buf.release()`.
    ## Use instead
    `create_tma_wgmma_pipeline_cfg(..., advance_on_wait=True)`: the wait cursor and the
    release cursor advance separately.
    """
    code = "TS444"
    name = "tma-wgmma-lagged-release-without-advance-on-wait"
    VALID = [wgmma_program(lag=True), VALID_WGMMA]
    INVALID = [wgmma_program(lag=True, advance_on_wait=False, call_mark="TS444")]
