"""TS4xx: pipeline configuration consistency (types, interleave, arrival counts, bytes, layouts).

Object-phase checks of one config (TS401-TS407) live in `ts_runtime.model.config_checks`
and `CooperativeGroup` (TS440); the manager rules below compare each pipelined resource's
config with the tasks that drive it (model.md §5.4-§5.6), using the derived metadata of
`ts_runtime.model.derive`. Codegen-time checks (TS438, TS439) are reported by
`ts_runtime/codegen/runtime.py` while the kernel is traced.

Producer tasks of a resource are the tasks that `commit` it, consumer tasks those that
`release` it (model.md §5.6); domain-lane tasks are counted per lane group. A resource
whose `cta_layout_vmnk` is an opaque layout gets an INFO note (TS432) instead of count
checks, and nothing fires on values a front end could not evaluate (UNKNOWN).
"""
from __future__ import annotations

import textwrap

from ..diagnostics import Related, Severity
from ..enums import PipelineType, SignalingThreads
from ..model import derive as D
from ..model.values import UNKNOWN, is_static_int
from .base import Rule
from .declare import rule
from .registry import register

PT = PipelineType
TWL = SignalingThreads.TaskWarpLeader
CTA = SignalingThreads.CtaLeader

# model.md §6 step x 10
ORDER_WAIT_SIGNALING = 130
ORDER_ARRIVALS = 140
ORDER_BYTES = 150
ORDER_INTERLEAVE = 160
ORDER_LAYOUT = 170


# =========================================================================== example programs
_HEADER = '''\
from dataclasses import dataclass

from ts_runtime import consumer_work, domain_loop, producer_work, schedule
from ts_runtime.enums import PipelineType, SignalingThreads
from ts_runtime.pipeline import CooperativeGroup, Agent
from ts_runtime.resources import MemoryResource, PipelineConfig
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager


@dataclass(kw_only=True)
class Gmem(MemoryResource):
    @consumer_work
    def load(self, stage_info):
        pass

    @producer_work
    def store(self, stage_info):
        pass


@dataclass(kw_only=True)
class Buf(MemoryResource):
    @producer_work
    def fill(self, stage_info):
        pass

    @consumer_work
    def read(self, stage_info):
        pass
'''

FACTORIES = {
    "AsyncAsync": "create_async_async_pipeline_cfg",
    "TmaAsync": "create_tma_async_pipeline_cfg",
    "TmaUmma": "create_tma_umma_pipeline_cfg",
    "UmmaAsync": "create_umma_async_pipeline_cfg",
    "AsyncUmma": "create_async_umma_pipeline_cfg",
    "UmmaUmma": "create_umma_umma_pipeline_cfg",
    "ClcFetchAsync": "create_clc_fetch_async_pipeline_cfg",
}
_BYTES = ("TmaAsync", "TmaUmma", "ClcFetchAsync")


def group(size=None) -> str:
    """Source of a `CooperativeGroup(Agent.Thread[, size])`."""
    return "CooperativeGroup(Agent.Thread)" if size is None else f"CooperativeGroup(Agent.Thread, {size})"


def config(ptype: str, p=1, c=1, *, direct=False, var="cfg", marks=None, **kw) -> str:
    """Source of `var = PipelineConfig.create_<ptype>_pipeline_cfg(...)`, one keyword per line.

    `marks` maps a keyword (or "CALL" for the call line) to the code expected there;
    `direct=True` calls the `PipelineConfig(...)` constructor instead of the factory.
    Keyword values are source text; `cta_layout_vmnk` defaults to `(1, 1, 1, 1)`.
    """
    marks = marks or {}
    args = {"num_stages": "4"}
    if ptype in _BYTES or direct:
        args["num_bytes"] = "4096" if ptype != "ClcFetchAsync" else "16"
    args["producer_group"] = group(p)
    args["consumer_group"] = group(c)
    if direct:
        args["pipeline_type"] = f"PipelineType.{ptype}"
    if ptype != "TmaAsync" or direct:
        args["cta_layout_vmnk"] = "(1, 1, 1, 1)"
    args.update({k: str(v) for k, v in kw.items()})
    callee = "PipelineConfig" if direct else f"PipelineConfig.{FACTORIES[ptype]}"
    first = f"{var} = {callee}("
    lines = [first + (f"  # expect: {marks['CALL']}" if "CALL" in marks else "")]
    for k, v in args.items():
        lines.append(f"    {k}={v}," + (f"  # expect: {marks[k]}" if k in marks else ""))
    lines.append(")")
    return "\n".join(lines)


def task(role: str, warps: int, start=0, step=1, cta=None, mark=None) -> tuple:
    """A task of `program()`: role P (acquire/fill/commit), C (wait/read/release),
    W (wait only), R (release only, after storing)."""
    return (role, warps, start, step, cta, mark)


_ROLES = {
    "P": ("src, buf", ["src.load()", "buf.acquire()", "buf.fill()", "buf.commit()"], "[src]", "[buf]"),
    "C": ("buf, dst", ["buf.wait()", "buf.read()", "dst.store()", "buf.release()"], "[buf]", "[dst]"),
    "W": ("buf", ["buf.wait()"], "[buf]", "[]"),
    "R": ("buf, dst", ["dst.store()", "buf.release()"], "[buf]", "[dst]"),
}
_NAMES = {"P": "Load", "C": "Store", "W": "Wait", "R": "Release"}


def program(cfg: str, tasks, n: int = 8) -> str:
    """A kernel src -> buf -> dst: `buf` is pipelined with `cfg` (from `config()`)."""
    out = [_HEADER, "", "def build():", textwrap.indent(cfg, "    "),
           '    src, dst = Gmem(name="src"), Gmem(name="dst")',
           '    buf = Buf(name="buf", pipeline_config=cfg)', ""]
    calls, warp, used = [], 0, {}
    for i, (role, warps, start, step, cta, mark) in enumerate(tasks):
        params, body, src, dst = _ROLES[role]
        used[role] = used.get(role, 0) + 1
        name = f"{_NAMES[role]}{used[role] - 1 if sum(1 for t in tasks if t[0] == role) > 1 else ''}"
        out += ["    @schedule", f"    def s{i}({params}):", f"        with domain_loop({start}, {n}, {step}):"]
        out += [f"            {b}" for b in body] + [""]
        extra = f", run_only_on_cta_id={cta}" if cta is not None else ""
        calls.append(f'        Task(name="{name}", src_resources={src}, dst_resources={dst}, warp_idx={warp}, '
                     f'num_warps={warps}, schedule=s{i}({params}){extra}),'
                     + (f"  # expect: {mark}" if mark else ""))
        warp += warps
    out += ["    tasks = ["] + calls + ["    ]",
            "    graph = {buf: [src], dst: [buf]}",
            "    return TaskManager(tasks=tasks, resource_dependency_graph=graph, verbose=False)", ""]
    return "\n".join(out)


def chain_program(cfg1: str, cfg2: str) -> str:
    """A kernel src -> buf1 -> buf2 -> dst with two pipelined buffers (`cfg1`, `cfg2`)."""
    return _HEADER + f'''

def build():
{textwrap.indent(cfg1, "    ")}
{textwrap.indent(cfg2, "    ")}
    src, dst = Gmem(name="src"), Gmem(name="dst")
    buf1 = Buf(name="buf1", pipeline_config=cfg1)
    buf2 = Buf(name="buf2", pipeline_config=cfg2)

    @schedule
    def load(src, buf1):
        with domain_loop(0, 8, 1):
            src.load()
            buf1.acquire()
            buf1.fill()
            buf1.commit()

    @schedule
    def relay(buf1, buf2):
        with domain_loop(0, 8, 1):
            buf1.wait()
            buf1.read()
            buf2.acquire()
            buf2.fill()
            buf2.commit()
            buf1.release()

    @schedule
    def store(buf2, dst):
        with domain_loop(0, 8, 1):
            buf2.wait()
            buf2.read()
            dst.store()
            buf2.release()

    tasks = [
        Task(name="Load", src_resources=[src], dst_resources=[buf1], warp_idx=0, num_warps=1,
             schedule=load(src, buf1)),
        Task(name="Relay", src_resources=[buf1], dst_resources=[buf2], warp_idx=1, num_warps=1,
             schedule=relay(buf1, buf2)),
        Task(name="Store", src_resources=[buf2], dst_resources=[dst], warp_idx=2, num_warps=1,
             schedule=store(buf2, dst)),
    ]
    graph = {{buf1: [src], buf2: [buf1], dst: [buf2]}}
    return TaskManager(tasks=tasks, resource_dependency_graph=graph, verbose=False)
'''


def object_program(body: str) -> str:
    """A `build()` that only constructs objects (object-phase rules)."""
    return _HEADER + "\n\ndef build():\n" + textwrap.indent(body, "    ") + "\n"


# the canonical valid kernels used by many rules
P1C4 = [task("P", 1), task("C", 4)]
VALID_TMA_ASYNC = program(config("TmaAsync", 1, 128), P1C4)
VALID_ASYNC_ASYNC = program(config("AsyncAsync", 32, 128), P1C4)


# =========================================================================== object phase
OBJ = dict(phase="object")

rule("TS401", "invalid-signaling-threads", """
    A signaling-threads setting that is not a supported `SignalingThreads` value.

    ## What it does
    Checks `producer_signaling_threads`, `consumer_signaling_threads` and
    `consumer_wait_signaling_threads`: each must be a `SignalingThreads` member and one of
    `All`, `CtaLeader`, `TaskWarpLeader` or `CtaLeader | TaskWarpLeader`.
    ## Why is this bad?
    The barrier code is generated from these flags; `All` combined with a leader mode, or a
    plain int, names no valid set of signaling threads.
    ## Example
    `producer_signaling_threads=SignalingThreads.All | SignalingThreads.CtaLeader`
    ## Use instead
    `producer_signaling_threads=SignalingThreads.CtaLeader`
    """, **OBJ,
     valid=[object_program(config("TmaAsync", producer_signaling_threads="SignalingThreads.CtaLeader")
                           + "\nreturn cfg")],
     invalid=[object_program(config("TmaAsync", marks={"consumer_signaling_threads": "TS401"},
                                    consumer_signaling_threads="SignalingThreads.All | SignalingThreads.CtaLeader")
                             + "\nreturn cfg"),
              object_program(config("TmaAsync", marks={"producer_signaling_threads": "TS401"},
                                    producer_signaling_threads="1") + "\nreturn cfg")])
rule("TS402", "invalid-async-producer-op", """
    An `async_producer_op` other than `AsyncThread`/`AsyncLoad`, or changed on a non-AsyncAsync pipeline.

    ## What it does
    The AsyncAsync factory's `producer_op` (the config's `async_producer_op`) selects how
    async producers arrive on the full barrier; only `PipelineOp.AsyncThread` and
    `PipelineOp.AsyncLoad` exist, and only `AsyncAsync` may use `AsyncLoad`.
    ## Why is this bad?
    Any other op would emit an arrive that does not match the producer's writes.
    ## Example
    `create_async_async_pipeline_cfg(..., producer_op=PipelineOp.TmaLoad)`
    ## Use instead
    `producer_op=PipelineOp.AsyncLoad` for `cp.async` producers, else leave the default.
    """, **OBJ,
     valid=[object_program("from ts_runtime.pipeline import PipelineOp\n"
                           + config("AsyncAsync", 32, 32, producer_op="PipelineOp.AsyncLoad") + "\nreturn cfg")],
     invalid=[object_program("from ts_runtime.pipeline import PipelineOp\n"
                             + config("AsyncAsync", 32, 32, marks={"producer_op": "TS402"},
                                      producer_op="PipelineOp.TmaLoad") + "\nreturn cfg"),
              object_program("from ts_runtime.pipeline import PipelineOp\n"
                             + config("TmaAsync", direct=True, marks={"async_producer_op": "TS402"},
                                      async_producer_op="PipelineOp.AsyncLoad") + "\nreturn cfg")])
rule("TS403", "invalid-umma-consumer-producer-op", """
    A `umma_consumer_producer_op` other than `AsyncThread`/`AsyncLoad`, or changed on a non-AsyncUmma pipeline.

    ## What it does
    The AsyncUmma factory's `producer_op` (the config's `umma_consumer_producer_op`) may be
    `PipelineOp.AsyncThread` or `PipelineOp.AsyncLoad`, and only `AsyncUmma` may change it.
    ## Why is this bad?
    Any other op would emit an arrive that does not match the producer's writes.
    ## Example
    `create_async_umma_pipeline_cfg(..., producer_op=PipelineOp.TmaLoad)`
    ## Use instead
    `producer_op=PipelineOp.AsyncLoad` for `cp.async` producers, else leave the default.
    """, **OBJ,
     valid=[object_program("from ts_runtime.pipeline import PipelineOp\n"
                           + config("AsyncUmma", 32, 1, producer_op="PipelineOp.AsyncLoad") + "\nreturn cfg")],
     invalid=[object_program("from ts_runtime.pipeline import PipelineOp\n"
                             + config("AsyncUmma", 32, 1, marks={"producer_op": "TS403"},
                                      producer_op="PipelineOp.TmaLoad") + "\nreturn cfg")])
rule("TS404", "invalid-interleave-stride", """
    An `interleave_stride` that is not an int >= 1 or a 4-tuple of such ints.

    ## What it does
    Accepts an int (not a bool) `>= 1`, or `(producer_acquire, producer_commit,
    consumer_wait, consumer_release)` of such ints.
    ## Why is this bad?
    The stride is the number of lanes that share the barriers; anything else has no lane
    arithmetic.
    ## Example
    `interleave_stride=0`, `interleave_stride=(1, 2, 1)`
    ## Use instead
    `interleave_stride=2` or `interleave_stride=(1, 1, 2, 2)`
    """, **OBJ,
     valid=[object_program(config("AsyncAsync", 32, 32, interleave_stride="(2, 2, 1, 1)") + "\nreturn cfg")],
     invalid=[object_program(config("AsyncAsync", 32, 32, marks={"interleave_stride": "TS404"},
                                    interleave_stride="0") + "\nreturn cfg"),
              object_program(config("AsyncAsync", 32, 32, marks={"interleave_stride": "TS404"},
                                    interleave_stride="(2, 2, 1)") + "\nreturn cfg"),
              object_program(config("AsyncAsync", 32, 32, marks={"interleave_stride": "TS404"},
                                    interleave_stride="True") + "\nreturn cfg")])
rule("TS405", "interleave-stride-not-dividing-stages", """
    An interleave stride that does not divide `num_stages`.

    ## What it does
    Every role stride must evenly divide `num_stages`.
    ## Why is this bad?
    Lane `L` owns stages `L, L + k, L + 2k, ...`; with a remainder the lanes would collide
    when the stage index wraps.
    ## Example
    `num_stages=4, interleave_stride=3`
    ## Use instead
    `num_stages=6, interleave_stride=3`, or a stride that divides 4.
    """, **OBJ, order=ORDER_INTERLEAVE,
     valid=[object_program(config("AsyncAsync", 32, 32, interleave_stride="2") + "\nreturn cfg")],
     invalid=[object_program(config("AsyncAsync", 32, 32, marks={"interleave_stride": "TS405"},
                                    interleave_stride="3") + "\nreturn cfg")])
rule("TS406", "asymmetric-producer-strides-without-advance-on-acquire", """
    Different acquire and commit interleave strides without `advance_on_acquire=True`.

    ## What it does
    When `producer_acquire` and `producer_commit` strides differ, the producer needs two
    pipeline states, which `advance_on_acquire=True` provides.
    ## Why is this bad?
    With one producer state the acquire and the commit would walk the stages at different
    strides through the same cursor.
    ## Example
    `interleave_stride=(2, 1, 1, 1)`
    ## Use instead
    `interleave_stride=(2, 1, 1, 1), advance_on_acquire=True`
    """, **OBJ,
     valid=[object_program(config("AsyncAsync", 32, 32, interleave_stride="(2, 1, 1, 1)",
                                  advance_on_acquire="True") + "\nreturn cfg")],
     invalid=[object_program(config("AsyncAsync", 32, 32, marks={"interleave_stride": "TS406"},
                                    interleave_stride="(2, 1, 1, 1)") + "\nreturn cfg")])
rule("TS407", "asymmetric-consumer-strides-without-advance-on-wait", """
    Different wait and release interleave strides without `advance_on_wait=True`.

    ## What it does
    When `consumer_wait` and `consumer_release` strides differ, the consumer needs two
    pipeline states, which `advance_on_wait=True` provides.
    ## Why is this bad?
    With one consumer state the wait and the release would walk the stages at different
    strides through the same cursor.
    ## Example
    `interleave_stride=(1, 1, 4, 1)`
    ## Use instead
    `interleave_stride=(1, 1, 4, 1), advance_on_wait=True`
    """, **OBJ,
     valid=[object_program(config("TmaAsync", interleave_stride="(1, 1, 2, 1)", advance_on_wait="True")
                           + "\nreturn cfg")],
     invalid=[object_program(config("TmaAsync", marks={"interleave_stride": "TS407"},
                                    interleave_stride="(1, 1, 2, 1)") + "\nreturn cfg")])
rule("TS440", "invalid-cooperative-group", """
    A `CooperativeGroup` with a size <= 0 or an unknown agent.

    ## What it does
    `CooperativeGroup(agent, size)` needs `size > 0` and an agent of `Agent.Thread`,
    `Agent.Warp`, `Agent.ThreadBlock` or `Agent.ThreadBlockCluster`.
    ## Why is this bad?
    The group size is a barrier's arrival count; zero or negative arrivals never complete.
    ## Example
    `CooperativeGroup(Agent.Thread, 0)`
    ## Use instead
    `CooperativeGroup(Agent.Thread, 128)`
    """, **OBJ,
     valid=[object_program("return CooperativeGroup(Agent.Thread, 128)")],
     invalid=[object_program("return CooperativeGroup(Agent.Thread, 0)  # expect: TS440"),
              object_program('return CooperativeGroup("Thread", 32)  # expect: TS440')])


# =========================================================================== manager-phase helpers
def _pipelined(kernel):
    """(rid, resource, PipelineModel) of every pipelined resource that is not a group."""
    for rid, r in kernel.resources.items():
        p = r.pipeline
        if p is None or r.is_group or not isinstance(p.pipeline_type, PipelineType):
            continue
        yield rid, r, p


def _tasks_text(tasks) -> str:
    return "[" + ", ".join(f"'{t.name}' ({t.num_warps} warps)" for t in tasks) + "]"


def _task_notes(tasks, what: str):
    return [Related(t.at("num_warps"), f"task '{t.name}' {what} with {t.num_warps} warp(s)") for t in tasks]


def _sig(v) -> str:
    return getattr(v, "name", None) or repr(v)


class _Finding(tuple):
    """(code, message, range, related, severity)."""

    def __new__(cls, code, message, rng, related=(), severity=None):
        return super().__new__(cls, (code, message, rng, tuple(related), severity))


def _check_size(out, code, r, p, side, exp):
    """Compares `<side>_group.size` with an Expectation; appends a finding on mismatch."""
    size = getattr(p, f"{side}_group_size")
    if exp is None or not is_static_int(size) or any(not is_static_int(v) for v in exp.values):
        return
    if size in exp.values:
        return
    lane = f" interleaved lane {exp.lane}/{exp.lanes}" if exp.lane is not None else ""
    expected = " or ".join(str(v) for v in exp.values)
    out.append(_Finding(
        code, f"resource '{r.label}' (pipeline={p.pipeline_type.value}): {side}_group.size={size} does not match"
        f"{lane} expected {expected} (= {exp.formula}); tasks: {_tasks_text(exp.tasks)}",
        p.at(f"{side}_group"),
        _task_notes(exp.tasks, "commits" if side == "producer" else "releases") + [Related(r.range, "resource")]))


def arrival_findings(kernel) -> list:
    """TS416-TS432 for every pipelined resource (model.md §5.6)."""
    out = []
    for rid, r, p in _pipelined(kernel):
        kind = D.layout_kind(p)
        if kind == "opaque":
            out.append(_Finding("TS432", f"resource '{r.label}' has an opaque cta_layout_vmnk; its barrier arrival "
                                "counts are not validated", p.at("cta_layout_vmnk"), severity=Severity.INFO))
            continue
        ptype = p.pipeline_type
        prod_ok = cons_ok = True
        twl = D.has_flag(p.producer_signaling_threads, TWL)
        if twl is True and ptype not in D.TMA_TYPES:
            out.append(_Finding("TS416", f"resource '{r.label}' (pipeline={ptype.value}) uses producer_signaling_"
                                "threads=TaskWarpLeader, which only TMA producer pipelines (TmaAsync, TmaUmma) "
                                "support", p.at("producer_signaling_threads")))
            prod_ok = False
        for fname in ("consumer_signaling_threads", "consumer_wait_signaling_threads"):
            v = getattr(p, fname)
            if v is not None and D.has_flag(v, TWL) is True:
                out.append(_Finding("TS417", f"resource '{r.label}' (pipeline={ptype.value}) uses {fname}="
                                    f"{_sig(v)}; TaskWarpLeader is producer-side only", p.at(fname)))
                cons_ok = False
        prod, cons = D.committers(kernel, rid), D.releasers(kernel, rid)
        if not cons and r.group is not None and r.group in kernel.resources \
                and ptype in (PT.AsyncUmma, PT.UmmaUmma, PT.TmaUmma):
            # a Merge member released through `group.release()`: its UMMA consumer count does
            # not depend on who releases (one tcgen05.commit arrival), and the reference checks
            # it for members too; task-dependent counts of members stay underived
            cons = D.releasers(kernel, r.group)
        if prod_ok and prod:
            _producer_side(out, r, p, prod, twl)
        if cons_ok and cons:
            _consumer_side(out, r, p, cons)
    return out


def _producer_side(out, r, p, prod, twl):
    ptype = p.pipeline_type
    commit = D.role_stride(p, "commit")
    if ptype in (PT.UmmaAsync, PT.UmmaUmma):
        _check_size(out, "TS418", r, p, "producer",
                    D.Expectation((1,), prod, "1 arrival per tcgen05.commit"))
    elif ptype is PT.ClcFetchAsync:
        _check_size(out, "TS419", r, p, "producer",
                    D.Expectation((1,), prod, "the CLC load targets one scheduler thread"))
    elif ptype in D.TMA_TYPES:
        if commit is UNKNOWN or twl is UNKNOWN:
            return
        multi = [t for t in prod if is_static_int(t.num_warps) and t.num_warps > 1]
        if multi and commit == 1 and twl is False:
            for t in multi:
                out.append(_Finding(
                    "TS420", f"task '{t.name}' has {t.num_warps} warps and produces TMA resource '{r.label}', but "
                    "interleave_stride=1 and producer_signaling_threads has no TaskWarpLeader: a multi-warp TMA "
                    "producer needs interleave_stride > 1 (one barrier stage per warp) or TaskWarpLeader (one "
                    "aggregate transaction-barrier arrive)", t.at("num_warps"),
                    [Related(p.range, f"pipeline config of '{r.label}'")]))
            return
        if multi and commit > 1 and twl is True:
            out.append(_Finding(
                "TS421", f"resource '{r.label}' (pipeline={ptype.value}) combines producer interleave_stride={commit} "
                "with producer_signaling_threads=TaskWarpLeader; multi-warp TMA producer tasks must choose either "
                "interleaved per-warp arrivals or one TaskWarpLeader aggregate arrival",
                p.at("producer_signaling_threads"),
                [Related(p.at("interleave_stride"), "interleave_stride")] + _task_notes(multi, "commits")))
            return
        _check_size(out, "TS422" if commit > 1 else "TS423", r, p, "producer", D.tma_producer_expected(p, prod))
    else:  # AsyncAsync, AsyncUmma
        if twl is not False:
            return
        cta = D.has_flag(p.producer_signaling_threads, CTA)
        if cta is UNKNOWN:
            return
        scale, label = 1, "cluster_scale"
        if not cta and ptype is PT.AsyncUmma and p.umma_consumer_producer_op == "AsyncThread":
            scale = D.cluster_v(p)
        exps, mixed = D.async_side_expectations(prod, commit, scale, label)
        if mixed:
            _mixed_lanes(out, r, p, prod, commit, "producer")
        for exp in exps:
            _check_size(out, "TS424", r, p, "producer", exp)


def _consumer_side(out, r, p, cons):
    ptype = p.pipeline_type
    release = D.role_stride(p, "release")
    cta = D.has_flag(p.consumer_signaling_threads, CTA)
    if ptype in (PT.AsyncAsync, PT.UmmaAsync):
        if cta is UNKNOWN:
            return
        scale = 1 if (ptype is PT.AsyncAsync or cta) else D.cluster_v(p)
        exps, mixed = D.async_side_expectations(cons, release, scale, "cluster_scale")
        if mixed:
            _mixed_lanes(out, r, p, cons, release, "consumer")
        for exp in exps:
            _check_size(out, "TS425", r, p, "consumer", exp)
    elif ptype is PT.TmaAsync:
        if release == 1 and D.tma_async_lanes_per_warp(p) is None:
            out.append(_Finding("TS431", f"resource '{r.label}' uses invalid mcast_mode_mn={p.mcast_mode_mn!r}; "
                                "expected (1, 0), (0, 1) or (1, 1)", p.at("mcast_mode_mn")))
            return
        _check_size(out, "TS430", r, p, "consumer", D.tma_async_consumer_expected(p, cons))
    elif ptype is PT.TmaUmma:
        if release is UNKNOWN or cta is UNKNOWN:
            return
        if release > 1:
            exp = D.Expectation((1,), cons, "one arrival per interleaved barrier stage")
        else:
            total, v = D.cluster_total(p), D.cluster_v(p)
            if total is UNKNOWN or v is UNKNOWN:
                return
            exp = (D.Expectation((total // v,), cons, "cluster size / V: one tcgen05.commit per leader CTA (CtaLeader)")
                   if cta else D.Expectation((total,), cons, "cluster size: one tcgen05.commit multicast arrival per "
                                             "CTA (signaling=All)"))
        _check_size(out, "TS427", r, p, "consumer", exp)
    elif ptype in (PT.AsyncUmma, PT.UmmaUmma):
        _check_size(out, "TS428", r, p, "consumer",
                    D.Expectation((1,), cons, "1 arrival per tcgen05.commit (pair-local multicast)"))
    elif ptype is PT.ClcFetchAsync:
        total = D.cluster_total(p)
        if cta is UNKNOWN or total is UNKNOWN:
            return
        n = 0
        for t in cons:
            if not is_static_int(t.num_warps) or t.run_only_on_cta_id is UNKNOWN:
                return
            n += t.num_warps * 32 * (1 if (cta or t.run_only_on_cta_id is not None) else total)
        _check_size(out, "TS429", r, p, "consumer", D.Expectation(
            (n,), cons, "Σ task.num_warps × 32 × (1 for CtaLeader or run_only_on_cta_id tasks, else the cluster "
            "size) for mixed CLC ownership"))


def _mixed_lanes(out, r, p, tasks, stride, side):
    per_warp = [t for t in tasks if D.lane_mode(t, stride) == "warp"]
    lanes = [t for t in tasks if D.lane_mode(t, stride) == "domain"]
    for t in per_warp:
        out.append(_Finding(
            "TS426", f"resource '{r.label}' (pipeline={p.pipeline_type.value}) mixes domain-lane interleaved and "
            f"per-warp {side} arrivals: task '{t.name}' has one lane per warp while "
            f"{[x.name for x in lanes]} split the loop domain into lanes", t.at("num_warps"),
            [Related(x.at("schedule"), f"domain-lane task '{x.name}'") for x in lanes]))


def wait_signaling_findings(kernel) -> list:
    """TS437: consumer_wait_signaling_threads only with a split consumer."""
    out = []
    for rid, r, p in _pipelined(kernel):
        v = p.consumer_wait_signaling_threads
        if v is None or v is UNKNOWN:
            continue
        if any(t.lowered is None for t in kernel.tasks):
            continue
        if not D.split_consumer_tasks(kernel, rid):
            out.append(_Finding(
                "TS437", f"consumer_wait_signaling_threads is set on '{r.label}' but no task has a split-consumer "
                "pattern (a wait without a release) for it; remove the override or split the wait and the release "
                "into different tasks", p.at("consumer_wait_signaling_threads")))
    return out


def bytes_findings(kernel) -> list:
    """TS433-TS435: leader-routed TMA completions and num_bytes_per_warp_per_cta."""
    out = []
    for rid, r, p in _pipelined(kernel):
        if p.pipeline_type not in D.TMA_TYPES:
            continue
        prod = D.committers(kernel, rid)
        bpw = p.num_bytes_per_warp_per_cta
        if bpw is UNKNOWN or not prod:
            continue
        kind = D.layout_kind(p)
        if kind == "unknown":
            continue
        if kind == "opaque":
            twl = D.has_flag(p.producer_signaling_threads, TWL)
            w = sum(t.num_warps for t in prod) if all(is_static_int(t.num_warps) for t in prod) else UNKNOWN
            aggregates = twl is True and w is not UNKNOWN and w > len(prod)
            if bpw is not None or aggregates:
                out.append(_Finding(
                    "TS434", f"resource '{r.label}' needs its TMA num_bytes validated (num_bytes_per_warp_per_cta "
                    "declared or TaskWarpLeader aggregates several warps) but has an opaque cta_layout_vmnk; use an "
                    "inspectable tuple layout", p.at("cta_layout_vmnk")))
            continue
        required, _routed, reason = D.leader_routing(kernel, rid)
        if bpw is None:
            if required is True:
                out.append(_Finding(
                    "TS433", f"resource '{r.label}' must declare num_bytes_per_warp_per_cta because {reason}; "
                    "declare the per-producer-warp, per-CTA transaction byte count so num_bytes can be validated",
                    p.range, _task_notes(prod, "commits")))
            continue
        got = D.expected_num_bytes(kernel, rid)
        if got is UNKNOWN or not is_static_int(p.num_bytes):
            continue
        expected, m = got
        if p.num_bytes != expected:
            w = sum(t.num_warps for t in prod)
            out.append(_Finding(
                "TS435", f"resource '{r.label}' declares num_bytes={p.num_bytes}; expected {expected} "
                f"(= num_bytes_per_warp_per_cta {bpw} × {m} CTA(s) × {w} producer warp(s))", p.at("num_bytes"),
                [Related(p.at("num_bytes_per_warp_per_cta"), "num_bytes_per_warp_per_cta")]
                + _task_notes(prod, "commits")))
    return out


_ROLE_LABEL = {"acquire": "producer_acquire", "commit": "producer_commit", "wait": "consumer_wait",
               "release": "consumer_release"}


def interleave_findings(kernel) -> list:
    """TS408-TS415 (the manager's re-check of TS405 is covered at config creation).

    PipelineGroups are checked too, for the lanes of their own (collapsed) operations.
    """
    out = []
    groups = [(rid, r, r.pipeline) for rid, r in kernel.resources.items()
              if r.is_group and r.pipeline is not None and isinstance(r.pipeline.pipeline_type, PipelineType)]
    for rid, r, p in list(_pipelined(kernel)) + groups:
        s = D.strides(p)
        if s is UNKNOWN or max(s) == 1:
            continue
        ptype = p.pipeline_type
        at = p.at("interleave_stride")
        if r.is_group:
            pass   # a group's merged config: only its own ops' lanes (TS412-TS415) are checked here
        elif ptype not in D.INTERLEAVE_TYPES:
            out.append(_Finding("TS408", f"resource '{r.label}' uses interleave_stride={s} with pipeline="
                                f"{ptype.value}; interleaved pipelines are only supported for AsyncAsync, AsyncUmma, "
                                "TmaAsync, TmaUmma and UmmaAsync", at))
            continue
        if ptype is PT.TmaAsync and not r.is_group:
            total = D.cluster_total(p)
            kind = D.layout_kind(p)
            if kind == "opaque" or (total is not UNKNOWN and total != 1):
                out.append(_Finding("TS409", f"resource '{r.label}' uses interleave_stride={s} with pipeline=TmaAsync "
                                    f"and a {'opaque' if kind == 'opaque' else total}-CTA cluster; interleaved "
                                    "TmaAsync uses the stock release path, which is only valid for single-CTA "
                                    "pipelines", at, [Related(p.at("cta_layout_vmnk"), "cta_layout_vmnk")]))
        if ptype is PT.UmmaAsync and max(s[0], s[1]) > 1 and not r.is_group:
            out.append(_Finding("TS410", f"resource '{r.label}' uses interleaved producer strides with pipeline="
                                "UmmaAsync; UMMA producer-side interleave is not supported", at))
        if ptype is PT.AsyncUmma and max(s[2], s[3]) > 1 and not r.is_group:
            out.append(_Finding("TS411", f"resource '{r.label}' uses interleaved consumer strides with pipeline="
                                "AsyncUmma; UMMA consumer-side interleave is not supported", at))
        reported = set()
        for role, stride in zip(D.ROLES, s):
            if stride == 1:
                continue
            for t in D.role_users(kernel, rid, role):
                if id(t) in reported or D.lane_mode(t, stride) != "invalid":
                    continue
                reported.add(id(t))
                low = t.lowered
                out.append(_Finding(
                    "TS412", f"interleaved resource '{r.label}' uses {_ROLE_LABEL[role]} interleave_stride={stride}, "
                    f"but task '{t.name}' has num_warps={t.num_warps}, domain_start={low.domain_start!r} and "
                    f"step={low.domain_step!r}; each interleaved task must either cover exactly one warp per lane "
                    "(num_warps == stride) or split its loop with a static step equal to the stride",
                    t.at("num_warps"), [Related(at, "interleave_stride")]))
        for side, (opening, closing) in D.SIDE_ROLES.items():
            so, sc = s[D.ROLE_INDEX[opening]], s[D.ROLE_INDEX[closing]]
            if so == sc:
                continue
            lanes = [t for role, stride in ((opening, so), (closing, sc)) if stride > 1
                     for t in D.role_users(kernel, rid, role) if D.lane_mode(t, stride) == "domain"]
            if lanes:
                out.append(_Finding(
                    "TS413", f"interleaved resource '{r.label}' has domain-split {side} lanes (task(s) "
                    f"{sorted({t.name for t in lanes})}) but {_ROLE_LABEL[opening]} interleave_stride={so} differs "
                    f"from {_ROLE_LABEL[closing]} interleave_stride={sc}; domain-split lanes require matching opening "
                    "and closing strides", at,
                    [Related(t.lowered.domain_range if t.lowered else t.range, f"domain-lane task '{t.name}'")
                     for t in lanes]))
            code = "TS414" if side == "producer" else "TS415"
            for t in kernel.tasks:
                roles = D.roles_of(t, rid)
                if opening in roles and closing in roles:
                    out.append(_Finding(
                        code, f"interleaved resource '{r.label}' uses different {_ROLE_LABEL[opening]} ({so}) and "
                        f"{_ROLE_LABEL[closing]} ({sc}) interleave strides, but task '{t.name}' schedules both "
                        f"{opening} and {closing} stages for it; split the two roles into separate tasks so each "
                        "advances its own pipeline state", t.at("schedule"), [Related(at, "interleave_stride")]))
    return out


def layout_findings(kernel) -> list:
    """TS436: one cluster decomposition per kernel (an INFO note for None next to tuples)."""
    out = []
    first = None
    nones = []
    for rid, r, p in _pipelined(kernel):
        kind = D.layout_kind(p)
        if kind == "none":
            nones.append((r, p))
        elif kind == "tuple":
            if first is None:
                first = (r, p)
            elif tuple(p.cta_layout_vmnk) != tuple(first[1].cta_layout_vmnk):
                out.append(_Finding(
                    "TS436", f"inconsistent cta_layout_vmnk across pipeline resources: '{r.label}' uses "
                    f"{p.cta_layout_vmnk} but '{first[0].label}' uses {first[1].cta_layout_vmnk}; all pipelined "
                    "resources of a kernel must share one cluster decomposition", p.at("cta_layout_vmnk"),
                    [Related(first[1].at("cta_layout_vmnk"), f"cta_layout_vmnk of '{first[0].label}'")]))
    if first is not None:
        for r, p in nones:
            out.append(_Finding(
                "TS436", f"resource '{r.label}' has cta_layout_vmnk=None while '{first[0].label}' uses "
                f"{first[1].cta_layout_vmnk}; this is usually fine for single-CTA pipelines", p.at("cta_layout_vmnk")
                if "cta_layout_vmnk" in p.arg_ranges else p.range, severity=Severity.INFO))
    return out


class _Family(Rule):
    """A manager rule whose findings come from one shared pass over the kernel."""
    phase = "manager"
    _pass = staticmethod(lambda kernel: [])

    def check(self, kernel):
        from .engine import shared_pass
        for code, message, rng, related, severity in shared_pass(kernel, type(self)._pass):
            if code == self.code:
                yield self.diag(message, rng, related=related, severity=severity)


class _Interleave(_Family):
    order = ORDER_INTERLEAVE
    _pass = staticmethod(interleave_findings)


class _Arrivals(_Family):
    order = ORDER_ARRIVALS
    _pass = staticmethod(arrival_findings)


class _Bytes(_Family):
    order = ORDER_BYTES
    _pass = staticmethod(bytes_findings)


# =========================================================================== interleave (TS408-TS415)
def _aa(p=32, c=32, **kw):
    return config("AsyncAsync", p, c, **kw)


@register
class InterleaveOnUnsupportedPipelineType(_Interleave):
    """Interleaving on a pipeline type that does not support it (UmmaUmma, ClcFetchAsync).

    ## What it does
    `interleave_stride > 1` is only supported for `AsyncAsync`, `AsyncUmma`, `TmaAsync`,
    `TmaUmma` and `UmmaAsync` (their factories expose the keyword; the others can only get
    it through the `PipelineConfig` constructor).
    ## Why is this bad?
    UMMA-to-UMMA and CLC pipelines have no per-lane barrier walk; the stages would be
    signaled by the wrong agent.
    ## Example
    `PipelineConfig(..., pipeline_type=PipelineType.UmmaUmma, interleave_stride=2)`
    ## Use instead
    Drop `interleave_stride`, or use a pipeline type that supports interleaving.
    """
    code = "TS408"
    name = "interleave-on-unsupported-pipeline-type"
    VALID = [program(_aa(interleave_stride=2), [task("P", 2), task("C", 2)])]
    INVALID = [program(config("UmmaUmma", direct=True, marks={"interleave_stride": "TS408"}, interleave_stride=2),
                       [task("P", 2), task("C", 2)])]


@register
class InterleavedTmaAsyncInCluster(_Interleave):
    """An interleaved `TmaAsync` pipeline on a multi-CTA cluster.

    ## What it does
    Interleaved `TmaAsync` requires a single-CTA cluster: the product of `cta_layout_vmnk`
    must be 1 (`None` counts as 1; an opaque layout is rejected too).
    ## Why is this bad?
    Interleaved TmaAsync uses the stock per-CTA release path, which does not signal the
    peers of a multicast cluster.
    ## Example
    `create_tma_async_pipeline_cfg(..., cta_layout_vmnk=(2, 1, 1, 1), interleave_stride=2)`
    ## Use instead
    `TmaUmma`, or a non-interleaved `TmaAsync` pipeline for clustered kernels.
    """
    code = "TS409"
    name = "interleaved-tma-async-in-cluster"
    VALID = [program(config("TmaAsync", 1, 1, cta_layout_vmnk="(1, 1, 1, 1)", interleave_stride=2),
                     [task("P", 2), task("C", 2)])]
    INVALID = [program(config("TmaAsync", 1, 1, cta_layout_vmnk="(2, 1, 1, 1)", interleave_stride=2,
                              marks={"interleave_stride": "TS409"}), [task("P", 2), task("C", 2)])]


@register
class UmmaProducerInterleave(_Interleave):
    """Producer-side interleave on a `UmmaAsync` pipeline.

    ## What it does
    `UmmaAsync` supports interleaving only on its async consumer side: the acquire and
    commit strides must be 1.
    ## Why is this bad?
    The MMA signals the full barrier with one `tcgen05.commit`; there are no producer lanes.
    ## Example
    `create_umma_async_pipeline_cfg(..., interleave_stride=2)`
    ## Use instead
    `interleave_stride=(1, 1, 2, 2)`
    """
    code = "TS410"
    name = "umma-producer-interleave"
    VALID = [program(config("UmmaAsync", 1, 32, interleave_stride="(1, 1, 2, 2)"), [task("P", 1), task("C", 2)])]
    INVALID = [program(config("UmmaAsync", 1, 32, interleave_stride=2, marks={"interleave_stride": "TS410"}),
                       [task("P", 2), task("C", 2)])]


@register
class UmmaConsumerInterleave(_Interleave):
    """Consumer-side interleave on an `AsyncUmma` pipeline.

    ## What it does
    `AsyncUmma` supports interleaving only on its async producer side: the wait and
    release strides must be 1.
    ## Why is this bad?
    The MMA releases the empty barrier with one `tcgen05.commit`; there are no consumer lanes.
    ## Example
    `create_async_umma_pipeline_cfg(..., interleave_stride=2)`
    ## Use instead
    `interleave_stride=(2, 2, 1, 1)`
    """
    code = "TS411"
    name = "umma-consumer-interleave"
    VALID = [program(config("AsyncUmma", 32, 1, interleave_stride="(2, 2, 1, 1)"), [task("P", 2), task("C", 1)])]
    INVALID = [program(config("AsyncUmma", 32, 1, interleave_stride=2, marks={"interleave_stride": "TS411"}),
                       [task("P", 2), task("C", 2)])]


@register
class InterleavedTaskLaneMismatch(_Interleave):
    """A task driving an interleaved role without one warp per lane or one loop lane.

    ## What it does
    For every role (acquire, commit, wait, release) with stride `S > 1`, each task using it
    must either have `num_warps == S` (warp lanes) or split its loop: `num_warps != S`, a
    static `domain_start` and `step == S` (domain lanes). Aux work, `try_*` and work count
    as uses of the opening role.
    ## Why is this bad?
    Each lane owns stages `L, L + S, ...`; a task that is neither would walk stages owned by
    other lanes.
    ## Example
    `interleave_stride=2` with a 4-warp consumer task looping with step 1.
    ## Use instead
    A 2-warp task, or two tasks with `domain_loop(0, n, 2)` and `domain_loop(1, n, 2)`.
    """
    code = "TS412"
    name = "interleaved-task-lane-mismatch"
    VALID = [program(_aa(interleave_stride=2), [task("P", 2), task("C", 2)]),
             program(_aa(128, 32, interleave_stride=2), [task("P", 4, 0, 2), task("P", 4, 1, 2), task("C", 2)])]
    INVALID = [program(_aa(interleave_stride=2), [task("P", 2), task("C", 4, mark="TS412")])]


@register
class DomainLaneAsymmetricStrides(_Interleave):
    """Domain-lane tasks on a side whose opening and closing strides differ.

    ## What it does
    A task in domain-lane mode on a side (acquire/commit or wait/release) owns both states
    of that side, so that side's opening and closing strides must match.
    ## Why is this bad?
    One task-derived lane cannot advance two cursors at different strides.
    ## Example
    `interleave_stride=(1, 1, 1, 2), advance_on_wait=True` with two release tasks looping
    `domain_loop(0, n, 2)` / `domain_loop(1, n, 2)`.
    ## Use instead
    Equal strides on that side (`(1, 1, 2, 2)`), or warp-lane tasks.
    """
    code = "TS413"
    name = "domain-lane-asymmetric-strides"
    VALID = [program(_aa(128, 32, interleave_stride=2), [task("P", 4, 0, 2), task("P", 4, 1, 2), task("C", 2)])]
    INVALID = [program(config("TmaAsync", 1, 1, interleave_stride="(1, 1, 1, 2)", advance_on_wait=True,
                              marks={"interleave_stride": "TS413"}),
                       [task("P", 1), task("W", 1), task("R", 4, 0, 2), task("R", 4, 1, 2)])]


@register
class TaskDrivesAsymmetricAcquireAndCommit(_Interleave):
    """One task scheduling both acquire and commit of a resource whose acquire and commit strides differ.

    ## What it does
    With asymmetric producer strides (`advance_on_acquire=True`), the acquire-role stages
    (acquire, try_acquire, producer work) and the commit must live in different tasks.
    ## Why is this bad?
    Each role advances its own state at its own stride from a task-derived lane; one task
    cannot own both lanes.
    ## Example
    `interleave_stride=(2, 1, 1, 1), advance_on_acquire=True` and a task doing
    `acquire(); fill(); commit()`.
    ## Use instead
    Symmetric strides, or separate acquire and commit tasks.
    """
    code = "TS414"
    name = "task-drives-asymmetric-acquire-and-commit"
    VALID = [program(_aa(interleave_stride=2), [task("P", 2), task("C", 2)])]
    INVALID = [program(_aa(64, 32, interleave_stride="(2, 1, 1, 1)", advance_on_acquire=True),
                       [task("P", 2, mark="TS414"), task("C", 1)])]


@register
class TaskDrivesAsymmetricWaitAndRelease(_Interleave):
    """One task scheduling both wait and release of a resource whose wait and release strides differ.

    ## What it does
    With asymmetric consumer strides (`advance_on_wait=True`), the wait-role stages (wait,
    try_wait, consumer work) and the release must live in different tasks.
    ## Why is this bad?
    Each role advances its own state at its own stride from a task-derived lane; one task
    cannot own both lanes.
    ## Example
    `interleave_stride=(1, 1, 2, 1), advance_on_wait=True` and a 2-warp task doing
    `wait(); read(); release()`.
    ## Use instead
    A 2-warp wait-only task and a separate 1-warp release task (split consumer).
    """
    code = "TS415"
    name = "task-drives-asymmetric-wait-and-release"
    VALID = [program(config("TmaAsync", 1, 1, interleave_stride="(1, 1, 2, 1)", advance_on_wait=True),
                     [task("P", 1), task("W", 2), task("R", 1)])]
    INVALID = [program(config("TmaAsync", 1, 2, interleave_stride="(1, 1, 2, 1)", advance_on_wait=True),
                       [task("P", 1), task("C", 2, mark="TS415")])]


# =========================================================================== arrivals (TS416-TS432)
@register
class TaskWarpLeaderOnNonTmaProducer(_Arrivals):
    """`TaskWarpLeader` producer signaling on a pipeline whose producer is not TMA.

    ## What it does
    `producer_signaling_threads` may include `TaskWarpLeader` only for `TmaAsync` and
    `TmaUmma`.
    ## Why is this bad?
    The leader warp arms the TMA transaction barrier for its task; other producers arrive
    per thread and have no transaction count to aggregate.
    ## Example
    `create_async_async_pipeline_cfg(..., producer_signaling_threads=SignalingThreads.TaskWarpLeader)`
    ## Use instead
    `SignalingThreads.All` (or `CtaLeader`).
    """
    code = "TS416"
    name = "task-warp-leader-on-non-tma-producer"
    VALID = [program(config("TmaAsync", 1, 128, producer_signaling_threads="SignalingThreads.TaskWarpLeader"), P1C4)]
    INVALID = [program(_aa(32, 128, producer_signaling_threads="SignalingThreads.TaskWarpLeader",
                           marks={"producer_signaling_threads": "TS416"}), P1C4)]


@register
class TaskWarpLeaderOnConsumerSide(_Arrivals):
    """`TaskWarpLeader` in consumer or consumer-wait signaling.

    ## What it does
    `consumer_signaling_threads` and `consumer_wait_signaling_threads` may not include
    `TaskWarpLeader`.
    ## Why is this bad?
    `TaskWarpLeader` aggregates TMA producer arrivals; consumers arrive per thread or per CTA.
    ## Example
    `consumer_signaling_threads=SignalingThreads.TaskWarpLeader`
    ## Use instead
    `SignalingThreads.All` or `SignalingThreads.CtaLeader`.
    """
    code = "TS417"
    name = "task-warp-leader-on-consumer-side"
    VALID = [VALID_TMA_ASYNC]
    INVALID = [program(config("TmaAsync", 1, 128, consumer_signaling_threads="SignalingThreads.TaskWarpLeader",
                              marks={"consumer_signaling_threads": "TS417"}), P1C4)]


@register
class UmmaProducerGroupSizeMismatch(_Arrivals):
    """A UMMA producer (`UmmaAsync`, `UmmaUmma`) whose `producer_group.size` is not 1.

    ## What it does
    The full barrier of a UMMA producer receives exactly one arrival per `tcgen05.commit`.
    ## Why is this bad?
    A larger count never completes; the consumer waits forever.
    ## Example
    `create_umma_async_pipeline_cfg(..., producer_group=CooperativeGroup(Agent.Thread, 32))`
    ## Use instead
    `producer_group=CooperativeGroup(Agent.Thread)` (size 1).
    """
    code = "TS418"
    name = "umma-producer-group-size-mismatch"
    VALID = [program(config("UmmaAsync", 1, 128), P1C4)]
    INVALID = [program(config("UmmaAsync", 32, 128, marks={"producer_group": "TS418"}), P1C4)]


@register
class ClcProducerGroupSizeMismatch(_Arrivals):
    """A `ClcFetchAsync` producer whose `producer_group.size` is not 1.

    ## What it does
    The CLC query targets one scheduler thread, so the full barrier expects one arrival.
    ## Why is this bad?
    A larger count never completes; every consumer of the work queue hangs.
    ## Example
    `create_clc_fetch_async_pipeline_cfg(..., producer_group=CooperativeGroup(Agent.Thread, 32))`
    ## Use instead
    `producer_group=CooperativeGroup(Agent.Thread)` (size 1).
    """
    code = "TS419"
    name = "clc-producer-group-size-mismatch"
    VALID = [program(config("ClcFetchAsync", 1, 128), P1C4)]
    INVALID = [program(config("ClcFetchAsync", 32, 128, marks={"producer_group": "TS419"}), P1C4)]


@register
class MultiWarpTmaProducerWithoutLeader(_Arrivals):
    """A multi-warp TMA producer task with neither producer interleave nor `TaskWarpLeader`.

    ## What it does
    A TMA producer task with more than one warp must use a producer commit stride > 1
    (independent per-warp stages) or `producer_signaling_threads=TaskWarpLeader` (one
    aggregate arrive per task).
    ## Why is this bad?
    Every warp would arm the same transaction barrier, double-counting the expected bytes.
    ## Example
    A 2-warp load task on a default `create_tma_async_pipeline_cfg(...)`.
    ## Use instead
    `producer_signaling_threads=SignalingThreads.TaskWarpLeader` (declare
    `num_bytes_per_warp_per_cta`), or `interleave_stride=2`.
    """
    code = "TS420"
    name = "multi-warp-tma-producer-without-leader"
    VALID = [program(config("TmaAsync", 1, 128, num_bytes=4096, num_bytes_per_warp_per_cta=2048,
                            producer_signaling_threads="SignalingThreads.TaskWarpLeader"),
                     [task("P", 2), task("C", 4)])]
    INVALID = [program(config("TmaAsync", 1, 128), [task("P", 2, mark="TS420"), task("C", 4)])]


@register
class InterleavedTmaProducerWithTaskWarpLeader(_Arrivals):
    """A multi-warp TMA producer with both producer interleave and `TaskWarpLeader`.

    ## What it does
    Multi-warp TMA producer tasks must choose either interleaved per-warp arrivals
    (commit stride > 1) or one `TaskWarpLeader` aggregate arrival, not both.
    ## Why is this bad?
    With interleave each warp owns its own stage; a task leader arming them all would arm
    stages owned by other warps.
    ## Example
    `interleave_stride=2, producer_signaling_threads=SignalingThreads.TaskWarpLeader` with
    a 2-warp load task.
    ## Use instead
    Drop one of the two.
    """
    code = "TS421"
    name = "interleaved-tma-producer-with-task-warp-leader"
    VALID = [program(config("TmaAsync", 1, 1, interleave_stride=2), [task("P", 2), task("C", 2)])]
    INVALID = [program(config("TmaAsync", 1, 1, interleave_stride=2, num_bytes_per_warp_per_cta=2048,
                              producer_signaling_threads="SignalingThreads.TaskWarpLeader",
                              marks={"producer_signaling_threads": "TS421"}), [task("P", 2), task("C", 2)])]


@register
class InterleavedTmaProducerGroupSizeMismatch(_Arrivals):
    """An interleaved TMA producer whose `producer_group.size` is not 1.

    ## What it does
    With a producer commit stride > 1, each barrier stage is signaled by one elected thread
    of the warp that owns it, so `producer_group.size` must be 1.
    ## Why is this bad?
    A larger count never completes the stage.
    ## Example
    `interleave_stride=2, producer_group=CooperativeGroup(Agent.Thread, 2)` with a 2-warp task.
    ## Use instead
    `producer_group=CooperativeGroup(Agent.Thread)`.
    """
    code = "TS422"
    name = "interleaved-tma-producer-group-size-mismatch"
    VALID = [program(config("TmaAsync", 1, 1, interleave_stride=2), [task("P", 2), task("C", 2)])]
    INVALID = [program(config("TmaAsync", 2, 1, interleave_stride=2, marks={"producer_group": "TS422"}),
                       [task("P", 2), task("C", 2)])]


@register
class TmaProducerGroupSizeMismatch(_Arrivals):
    """A TMA producer whose `producer_group.size` differs from its producer warps (or tasks).

    ## What it does
    `arrive_and_expect_tx` is issued by one elected thread per warp, so `producer_group.size`
    must equal the summed `num_warps` of the tasks that commit the resource; with
    `TaskWarpLeader`, the number of those tasks.
    ## Why is this bad?
    A wrong arrival count completes the stage too early (a race) or never (a hang).
    ## Example
    One 1-warp load task and `producer_group=CooperativeGroup(Agent.Thread, 2)`.
    ## Use instead
    `producer_group=CooperativeGroup(Agent.Thread, 1)`.
    """
    code = "TS423"
    name = "tma-producer-group-size-mismatch"
    VALID = [VALID_TMA_ASYNC, program(config("TmaAsync", 2, 128), [task("P", 1), task("P", 1), task("C", 4)])]
    INVALID = [program(config("TmaAsync", 2, 128, marks={"producer_group": "TS423"}), P1C4)]


@register
class AsyncProducerGroupSizeMismatch(_Arrivals):
    """An async-thread producer (`AsyncAsync`, `AsyncUmma`) whose `producer_group.size` does not match its warps.

    ## What it does
    Every producer thread arrives, so `producer_group.size` must be `W × 32 × scale`: `W` is
    the summed `num_warps` of the committing tasks (1 for warp-lane interleave, the lane
    group's warps for domain lanes); `scale` is `cta_layout_vmnk[0]` for `AsyncUmma` with
    `AsyncThread` arrivals unless producer signaling is `CtaLeader`, else 1.
    ## Why is this bad?
    A wrong arrival count completes the stage too early (a race) or never (a hang).
    ## Example
    A 1-warp producer and `producer_group=CooperativeGroup(Agent.Thread, 64)`.
    ## Use instead
    `producer_group=CooperativeGroup(Agent.Thread, 32)`.
    """
    code = "TS424"
    name = "async-producer-group-size-mismatch"
    VALID = [VALID_ASYNC_ASYNC, program(config("AsyncUmma", 64, 1, cta_layout_vmnk="(2, 1, 1, 1)"), P1C4)]
    INVALID = [program(_aa(64, 128, marks={"producer_group": "TS424"}), P1C4),
               program(config("AsyncUmma", 32, 1, cta_layout_vmnk="(2, 1, 1, 1)", marks={"producer_group": "TS424"}),
                       P1C4)]


@register
class AsyncConsumerGroupSizeMismatch(_Arrivals):
    """An async-thread consumer (`AsyncAsync`, `UmmaAsync`) whose `consumer_group.size` does not match its warps.

    ## What it does
    Every releasing thread arrives, so `consumer_group.size` must be `W × 32 × scale`: `W`
    is the summed `num_warps` of the releasing tasks (1 for warp-lane interleave, the lane
    group's warps for domain lanes); `scale` is `cta_layout_vmnk[0]` for `UmmaAsync` unless
    consumer signaling is `CtaLeader`, else 1.
    ## Why is this bad?
    A wrong arrival count frees the stage too early (a race) or never (a hang).
    ## Example
    A 4-warp epilogue and `consumer_group=CooperativeGroup(Agent.Thread, 64)`.
    ## Use instead
    `consumer_group=CooperativeGroup(Agent.Thread, 4 * 32)`.
    """
    code = "TS425"
    name = "async-consumer-group-size-mismatch"
    VALID = [VALID_ASYNC_ASYNC, program(config("UmmaAsync", 1, 128), P1C4)]
    INVALID = [program(_aa(32, 64, marks={"consumer_group": "TS425"}), P1C4),
               program(config("UmmaAsync", 1, 128, cta_layout_vmnk="(2, 1, 1, 1)", marks={"consumer_group": "TS425"}),
                       P1C4)]


@register
class MixedDomainLaneAndPerWarpArrivals(_Arrivals):
    """Domain-lane and per-warp interleaved tasks mixed on one side of an async pipeline.

    ## What it does
    On one side of an interleaved async pipeline, all tasks must own lanes the same way:
    either one warp per lane or one loop lane per task.
    ## Why is this bad?
    The expected arrival count of a barrier stage cannot be both "one warp" and "a whole
    task"; one of the two kinds of lanes would under- or over-arrive.
    ## Example
    Two 4-warp tasks looping with step 2 plus a 2-warp task with step 1 producing the same
    resource with `interleave_stride=2`.
    ## Use instead
    Give every producer the same lane mode.
    """
    code = "TS426"
    name = "mixed-domain-lane-and-per-warp-arrivals"
    VALID = [program(_aa(128, 32, interleave_stride=2), [task("P", 4, 0, 2), task("P", 4, 1, 2), task("C", 2)])]
    INVALID = [program(_aa(128, 32, interleave_stride=2),
                       [task("P", 4, 0, 2), task("P", 4, 1, 2), task("P", 2, mark="TS426"), task("C", 2)])]


@register
class TmaUmmaConsumerGroupSizeMismatch(_Arrivals):
    """A `TmaUmma` consumer whose `consumer_group.size` does not match the cluster.

    ## What it does
    The MMA releases with a multicast `tcgen05.commit`: `consumer_group.size` must be the
    cluster size (product of `cta_layout_vmnk`), divided by `cta_layout_vmnk[0]` with
    `CtaLeader` consumer signaling; 1 with a release stride > 1.
    ## Why is this bad?
    A wrong arrival count frees the stage too early (a race) or never (a hang).
    ## Example
    `cta_layout_vmnk=(2, 1, 1, 1)` and `consumer_group=CooperativeGroup(Agent.Thread)`.
    ## Use instead
    `consumer_group=CooperativeGroup(Agent.Thread, 2)`.
    """
    code = "TS427"
    name = "tma-umma-consumer-group-size-mismatch"
    VALID = [program(config("TmaUmma", 1, 2, cta_layout_vmnk="(2, 1, 1, 1)"), P1C4)]
    INVALID = [program(config("TmaUmma", 1, 1, cta_layout_vmnk="(2, 1, 1, 1)", marks={"consumer_group": "TS427"}),
                       P1C4)]


@register
class UmmaConsumerGroupSizeMismatch(_Arrivals):
    """A UMMA consumer (`AsyncUmma`, `UmmaUmma`) whose `consumer_group.size` is not 1.

    ## What it does
    The empty barrier of a UMMA consumer receives exactly one arrival per `tcgen05.commit`.
    ## Why is this bad?
    A larger count never frees the stage; the producer waits forever.
    ## Example
    `create_async_umma_pipeline_cfg(..., consumer_group=CooperativeGroup(Agent.Thread, 128))`
    ## Use instead
    `consumer_group=CooperativeGroup(Agent.Thread)` (size 1).
    """
    code = "TS428"
    name = "umma-consumer-group-size-mismatch"
    VALID = [program(config("AsyncUmma", 32, 1), P1C4)]
    INVALID = [program(config("AsyncUmma", 32, 128, marks={"consumer_group": "TS428"}), P1C4)]


@register
class ClcConsumerGroupSizeMismatch(_Arrivals):
    """A `ClcFetchAsync` consumer whose `consumer_group.size` does not match the releasing threads.

    ## What it does
    `consumer_group.size` must be the sum over releasing tasks of `num_warps × 32`, times the
    cluster size for tasks that release on every CTA (not for `CtaLeader` signaling or tasks
    with `run_only_on_cta_id`).
    ## Why is this bad?
    A wrong arrival count frees a work-id slot too early (a race) or never (a hang).
    ## Example
    A 4-warp consumer on a 2-CTA cluster with `consumer_group=CooperativeGroup(Agent.Thread, 128)`.
    ## Use instead
    `consumer_group=CooperativeGroup(Agent.Thread, 256)`.
    """
    code = "TS429"
    name = "clc-consumer-group-size-mismatch"
    VALID = [program(config("ClcFetchAsync", 1, 256, cta_layout_vmnk="(2, 1, 1, 1)"), P1C4)]
    INVALID = [program(config("ClcFetchAsync", 1, 128, cta_layout_vmnk="(2, 1, 1, 1)",
                              marks={"consumer_group": "TS429"}), P1C4)]


@register
class TmaAsyncConsumerGroupSizeMismatch(_Arrivals):
    """A `TmaAsync` consumer whose `consumer_group.size` matches neither release form.

    ## What it does
    `consumer_group.size` must equal the stock release count (releasing warps × lanes per
    warp, from `cta_layout_vmnk` and `mcast_mode_mn`) or the all-thread count (releasing
    warps × 32); 1 with a release stride > 1.
    ## Why is this bad?
    A wrong arrival count frees the stage too early (a race) or never (a hang).
    ## Example
    A 4-warp consumer and `consumer_group=CooperativeGroup(Agent.Thread, 64)`.
    ## Use instead
    `consumer_group=CooperativeGroup(Agent.Thread, 4)` or `(Agent.Thread, 128)`.
    """
    code = "TS430"
    name = "tma-async-consumer-group-size-mismatch"
    VALID = [VALID_TMA_ASYNC, program(config("TmaAsync", 1, 4), P1C4)]
    INVALID = [program(config("TmaAsync", 1, 64, marks={"consumer_group": "TS430"}), P1C4)]


@register
class InvalidMcastMode(_Arrivals):
    """A `mcast_mode_mn` other than (1, 0), (0, 1) or (1, 1) on a `TmaAsync` pipeline.

    ## What it does
    The stock TmaAsync release count per warp is derived from `mcast_mode_mn` and the
    cluster's M and N extents; only the three multicast modes are defined.
    ## Why is this bad?
    The consumer arrival count cannot be derived, so the barrier cannot be sized.
    ## Example
    `PipelineConfig(..., pipeline_type=PipelineType.TmaAsync, mcast_mode_mn=(0, 0))`
    ## Use instead
    `mcast_mode_mn=(1, 1)`
    """
    code = "TS431"
    name = "invalid-mcast-mode"
    VALID = [program(config("TmaAsync", 1, 12, direct=True, cta_layout_vmnk="(1, 2, 3, 1)", mcast_mode_mn="(1, 0)"),
                     P1C4)]
    INVALID = [program(config("TmaAsync", 1, 8, direct=True, cta_layout_vmnk="(1, 2, 2, 1)", mcast_mode_mn="(0, 0)",
                              marks={"mcast_mode_mn": "TS431"}), P1C4)]


@register
class OpaqueClusterLayout(_Arrivals):
    """A pipelined resource whose `cta_layout_vmnk` is an opaque layout (arrival counts not checked).

    ## What it does
    Notes that the arrival-count checks (TS418-TS430) are skipped for a resource whose
    `cta_layout_vmnk` is a `cute.Layout` (or any non-tuple object) instead of a tuple.
    ## Why is this bad?
    The cluster shape cannot be inspected, so wrong cooperative-group sizes go unnoticed.
    ## Example
    `cta_layout_vmnk=cute.make_layout((2, 1, 1, 1))`
    ## Use instead
    `cta_layout_vmnk=(2, 1, 1, 1)`
    """
    code = "TS432"
    name = "opaque-cluster-layout"
    severity = Severity.INFO
    reference_exception = "print"
    VALID = [VALID_TMA_ASYNC]
    INVALID = [program(config("TmaAsync", 1, 128, cta_layout_vmnk="object()", marks={"cta_layout_vmnk": "TS432"}),
                       P1C4)]


# =========================================================================== bytes (TS433-TS435)
@register
class MissingBytesPerWarpPerCta(_Bytes):
    """A leader-routed TMA pipeline without `num_bytes_per_warp_per_cta`.

    ## What it does
    For `TmaAsync`/`TmaUmma`, requires `num_bytes_per_warp_per_cta` when (a) producers run
    on every CTA of a multi-CTA cluster and the consumer is leader-only (`CtaLeader` release
    or wait signaling, or a waiting task with `run_only_on_cta_id`), or (b) `TaskWarpLeader`
    aggregates more producer warps than producer tasks.
    ## Why is this bad?
    The leader arms the transaction barrier for all covered warps and CTAs; without the
    per-warp, per-CTA count TS cannot check that `num_bytes` covers all of them.
    ## Example
    `create_tma_umma_pipeline_cfg(..., cta_layout_vmnk=(2, 1, 1, 1), consumer_signaling_threads=SignalingThreads.CtaLeader)`
    ## Use instead
    Add `num_bytes_per_warp_per_cta=...` with `num_bytes` = that × CTAs × producer warps.
    """
    code = "TS433"
    name = "missing-bytes-per-warp-per-cta"
    VALID = [program(config("TmaUmma", 1, 1, cta_layout_vmnk="(2, 1, 1, 1)", num_bytes_per_warp_per_cta=2048,
                            consumer_signaling_threads="SignalingThreads.CtaLeader"), P1C4)]
    INVALID = [program(config("TmaUmma", 1, 1, cta_layout_vmnk="(2, 1, 1, 1)",
                              consumer_signaling_threads="SignalingThreads.CtaLeader", marks={"CALL": "TS433"}), P1C4),
               program(config("TmaAsync", 1, 128, producer_signaling_threads="SignalingThreads.TaskWarpLeader",
                              marks={"CALL": "TS433"}), [task("P", 2), task("C", 4)])]


@register
class OpaqueLayoutBytesValidation(_Bytes):
    """TMA byte validation needed on a resource whose `cta_layout_vmnk` is opaque.

    ## What it does
    When `num_bytes_per_warp_per_cta` is declared, or `TaskWarpLeader` aggregates several
    producer warps, `num_bytes` is validated against the cluster size, which needs a tuple
    `cta_layout_vmnk`.
    ## Why is this bad?
    The aggregate transaction count cannot be checked; a wrong `num_bytes` hangs or races.
    ## Example
    `cta_layout_vmnk=cute.make_layout(...)` with `num_bytes_per_warp_per_cta=...`
    ## Use instead
    `cta_layout_vmnk=(2, 1, 1, 1)` (an inspectable tuple).
    """
    code = "TS434"
    name = "opaque-layout-bytes-validation"
    VALID = [program(config("TmaAsync", 1, 128, num_bytes_per_warp_per_cta=4096), P1C4)]
    INVALID = [program(config("TmaAsync", 1, 128, cta_layout_vmnk="object()", num_bytes_per_warp_per_cta=4096,
                              marks={"cta_layout_vmnk": "TS434"}), P1C4)]


@register
class NumBytesMismatch(_Bytes):
    """`num_bytes` that is not `num_bytes_per_warp_per_cta` × CTAs × producer warps.

    ## What it does
    When `num_bytes_per_warp_per_cta` is declared (or required), `num_bytes` must equal it
    times the number of covered CTAs (`cta_layout_vmnk[0]` for leader-routed `TmaUmma`, the
    cluster size for leader-routed `TmaAsync`, else 1) times the summed `num_warps` of the
    producer tasks.
    ## Why is this bad?
    Too few expected bytes complete the stage before all TMA loads land (a race); too many
    never complete it (a hang).
    ## Example
    A 2-warp `TaskWarpLeader` producer with `num_bytes_per_warp_per_cta=1024, num_bytes=4096`.
    ## Use instead
    `num_bytes=2048`.
    """
    code = "TS435"
    name = "num-bytes-mismatch"
    VALID = [program(config("TmaAsync", 1, 128, num_bytes=2048, num_bytes_per_warp_per_cta=1024,
                            producer_signaling_threads="SignalingThreads.TaskWarpLeader"), [task("P", 2), task("C", 4)])]
    INVALID = [program(config("TmaAsync", 1, 128, num_bytes=4096, num_bytes_per_warp_per_cta=1024,
                              producer_signaling_threads="SignalingThreads.TaskWarpLeader",
                              marks={"num_bytes": "TS435"}), [task("P", 2), task("C", 4)])]


# =========================================================================== layout, signaling
@register
class InconsistentClusterLayout(Rule):
    """Pipelined resources of one kernel with different `cta_layout_vmnk` tuples.

    ## What it does
    All pipelined resources with a tuple `cta_layout_vmnk` must use the same tuple. A
    resource with `None` next to tuples only gets an INFO note; opaque layouts are skipped.
    ## Why is this bad?
    The same logical stage would refer to different CTA partitions of the cluster.
    ## Example
    `buf1` with `(1, 1, 1, 1)` and `buf2` with `(2, 1, 1, 1)`.
    ## Use instead
    One cluster decomposition for every pipeline of the kernel.
    """
    code = "TS436"
    name = "inconsistent-cluster-layout"
    phase = "manager"
    order = ORDER_LAYOUT
    VALID = [chain_program(config("TmaAsync", 1, 1, var="cfg1", cta_layout_vmnk="(1, 1, 1, 1)"),
                           config("AsyncAsync", 32, 32, var="cfg2"))]
    INVALID = [chain_program(config("TmaAsync", 1, 1, var="cfg1", cta_layout_vmnk="(1, 1, 1, 1)"),
                             config("AsyncAsync", 32, 32, var="cfg2", cta_layout_vmnk="(2, 1, 1, 1)",
                                    marks={"cta_layout_vmnk": "TS436"}))]

    def check(self, kernel):
        for code, message, rng, related, severity in layout_findings(kernel):
            yield self.diag(message, rng, related=related, severity=severity)


@register
class ConsumerWaitSignalingWithoutSplitConsumer(Rule):
    """`consumer_wait_signaling_threads` on a resource without a split consumer.

    ## What it does
    The wait-side override may be set only when some task waits on the resource without
    releasing it (the split-consumer pattern).
    ## Why is this bad?
    Without a separate wait-only task the override is either redundant or silently changes
    which CTAs wait in the task that also releases.
    ## Example
    `create_async_umma_pipeline_cfg(..., consumer_wait_signaling_threads=SignalingThreads.CtaLeader)`
    with one consumer task that waits and releases.
    ## Use instead
    Remove the override, or split the wait and the release into different tasks.
    """
    code = "TS437"
    name = "consumer-wait-signaling-without-split-consumer"
    phase = "manager"
    order = ORDER_WAIT_SIGNALING
    VALID = [program(config("AsyncUmma", 32, 1, consumer_signaling_threads="SignalingThreads.CtaLeader",
                            consumer_wait_signaling_threads="SignalingThreads.All"),
                     [task("P", 1), task("W", 2), task("R", 1)])]
    INVALID = [program(config("AsyncUmma", 32, 1, consumer_wait_signaling_threads="SignalingThreads.CtaLeader",
                              marks={"consumer_wait_signaling_threads": "TS437"}), [task("P", 1), task("C", 2)])]

    def check(self, kernel):
        for code, message, rng, related, severity in wait_signaling_findings(kernel):
            yield self.diag(message, rng, related=related, severity=severity)


# =========================================================================== codegen phase
rule("TS438", "all-thread-release-needs-thread-groups", """
    A TmaAsync all-thread consumer release whose cooperative groups are not `Agent.Thread`.

    ## What it does
    When a TmaAsync `consumer_group.size` is the all-thread count (releasing warps × 32)
    rather than the stock per-warp lane count, both cooperative groups must use
    `Agent.Thread` (checked when the pipeline is created). Checked by ts codegen while the kernel is traced (programs: `tests/codegen/rule_programs.py`).
    ## Why is this bad?
    The all-thread release arrives once per thread; other agents count arrivals differently.
    ## Example
    `consumer_group=CooperativeGroup(Agent.Warp, 128)` for a 4-warp consumer.
    ## Use instead
    `consumer_group=CooperativeGroup(Agent.Thread, 128)`.
    """, phase="codegen")
rule("TS439", "task-warp-leader-without-producer-task", """
    A `TaskWarpLeader` pipeline for which no producer leader warp can be derived.

    ## What it does
    `TaskWarpLeader` pipelines elect the first warp of each committing task as the leader;
    without a task that commits the resource there is no leader (checked when the pipeline
    is created). A Fork group's commit is on the group, not its members, so TaskWarpLeader
    members of a Fork have no leader. Checked by ts codegen while the kernel is traced (programs: `tests/codegen/rule_programs.py`).
    ## Why is this bad?
    No warp would arm the transaction barrier; the consumer waits forever.
    ## Example
    `producer_signaling_threads=SignalingThreads.TaskWarpLeader` on a resource no task commits.
    ## Use instead
    Schedule `commit` in the producer task, or drop `TaskWarpLeader`.
    """, phase="codegen")
