"""TS350-TS359: the resource dependency graph and ping-pong resources.

The graph is `{downstream: [upstream, ...]}`; the model holds one `GraphEdge` per
(downstream, upstream) pair with the range of the upstream entry in the dict.

* TS350 / TS360 are raised by `TaskManager(...)` itself before the model exists (declared
  here): no graph, or an entry that is not a list of resources;
* step 6 (order 60): every graph resource is used (TS351, TS352), every edge is backed
  by a task (TS353), every ping-pong self-edge has both sides (TS354);
* step 8 (order 80): every task resource appears in the graph (TS355);
* step 23 (order 230): ping-pong resources are pipelined with a synchronous consumer
  side (TS356, TS357). TS358 / TS359 repeat TS354's condition; they are declared open.

A *ping-pong* resource has a self-edge `R: [R, ...]` and is not a WorkQueue (a WorkQueue
self-edge is an ordinary edge and needs a task with it in both lists).
"""
from __future__ import annotations

from ..diagnostics import Related
from ..enums import PipelineType
from ..fixes import add_to_graph, replace_graph_edge
from ..source import UNKNOWN_RANGE
from .base import Rule
from .declare import rule
from .registry import register
from .roles import _examples, _VALID, pipeline_program

_SYNC_CONSUMER_REJECTED = (PipelineType.TmaUmma, PipelineType.AsyncUmma, PipelineType.UmmaUmma)


def _used(kernel) -> set:
    out = set()
    for t in kernel.tasks:
        out.update(t.src)
        out.update(t.dst)
    return out


def ping_pong_resources(kernel) -> list:
    """Resource ids with a self-edge that are not WorkQueues, in graph order."""
    out = []
    for e in kernel.graph:
        if e.upstream == e.downstream and e.downstream not in out:
            r = kernel.resources.get(e.downstream)
            if r is not None and not r.is_work_queue:
                out.append(e.downstream)
    return out


def _ping_pong_edge(kernel, rid):
    return next(e for e in kernel.graph if e.upstream == rid and e.downstream == rid)


def _first_edges(kernel, attr) -> dict:
    """rid -> first GraphEdge whose `attr` ("downstream" / "upstream") is that rid."""
    out = {}
    for e in kernel.graph:
        out.setdefault(getattr(e, attr), e)
    return out


@register
class UnusedGraphDownstream(Rule):
    """A dependency-graph key that no task uses.

    ## What it does
    Every downstream resource (a key of `resource_dependency_graph`) must be in some
    task's `src_resources` or `dst_resources`.
    ## Why is this bad?
    The graph states an ordering for a resource no schedule touches: it is stale, or the
    task that should use the resource is missing.
    ## Example
    ```python
    resource_dependency_graph={smem: [src], out: [smem], spare: [src]}
    ```
    ## Use instead
    Drop the entry, or add the task that produces / consumes the resource.
    """
    code = "TS351"
    name = "unused-graph-downstream"
    order = 60

    def check(self, kernel):
        used = _used(kernel)
        firsts = _first_edges(kernel, "downstream")
        for rid, edge in firsts.items():
            if rid not in used:
                yield self.diag(f"resource_dependency_graph: downstream resource '{kernel.name(rid)}' is not "
                                "used by any task", edge.range)
        for rid, rng in getattr(kernel, "graph_keys", ()):   # keys with an empty upstream list
            if rid not in firsts and rid not in used:
                firsts[rid] = None
                yield self.diag(f"resource_dependency_graph: downstream resource '{kernel.name(rid)}' is not "
                                "used by any task", rng)


@register
class UnusedGraphUpstream(Rule):
    """A dependency-graph upstream entry that no task uses.

    ## What it does
    Every upstream resource (in a value list of `resource_dependency_graph`) must be in
    some task's `src_resources` or `dst_resources`.
    ## Why is this bad?
    The ordering it declares can never be realised by any schedule.
    ## Example
    ```python
    resource_dependency_graph={smem: [src], out: [smem, spare]}
    ```
    ## Use instead
    Drop the upstream entry, or add the task that uses it.
    """
    code = "TS352"
    name = "unused-graph-upstream"
    order = 60

    def check(self, kernel):
        used = _used(kernel)
        done = set()
        for e in kernel.graph:
            if e.upstream in used or e.upstream in done or e.upstream == e.downstream:
                continue
            done.add(e.upstream)
            yield self.diag(f"resource_dependency_graph: upstream resource '{kernel.name(e.upstream)}' "
                            f"(dependency of '{kernel.name(e.downstream)}') is not used by any task", e.range)


@register
class UnbackedGraphEdge(Rule):
    """A dependency-graph edge that no task realises.

    ## What it does
    Each edge `U -> D` (`D: [U]`) needs a task with `U` in `src_resources` and `D` in
    `dst_resources`. When `U` or `D` is an ordering-only resource (`is_barrier`: PDL
    barriers, groups) or a ping-pong resource, any task that lists both (either side) is
    enough. Edges whose ends no task uses are reported by TS351 / TS352 instead.
    ## Why is this bad?
    The graph claims `D` is produced from `U`, but no schedule reads `U` and writes `D`;
    the ordering the graph states is not what the kernel does.
    ## Example
    ```python
    resource_dependency_graph={smem: [src], out: [smem, src]}   # nothing reads src into out
    ```
    ## Use instead
    Declare the edges the tasks implement: `{smem: [src], out: [smem]}`.
    """
    code = "TS353"
    name = "unbacked-graph-edge"
    order = 60

    def check(self, kernel):
        used = _used(kernel)
        pp = set(ping_pong_resources(kernel))
        done = set()
        for e in kernel.graph:
            u, d = e.upstream, e.downstream
            if (u, d) in done or u not in used or d not in used:
                continue
            done.add((u, d))
            ru, rd = kernel.resources.get(u), kernel.resources.get(d)
            if ru is None or rd is None:
                continue
            relaxed = ru.is_barrier or rd.is_barrier or u in pp or d in pp
            if relaxed:
                backed = any({u, d} <= (set(t.src) | set(t.dst)) for t in kernel.tasks)
                how = (f"relaxed rule: no task lists both '{ru.label}' and '{rd.label}' in its "
                       "src_resources or dst_resources")
            else:
                backed = any(u in t.src and d in t.dst for t in kernel.tasks)
                how = (f"standard rule: no task has '{ru.label}' in src_resources and '{rd.label}' in "
                       "dst_resources")
            if not backed:
                yield self.diag(f"resource_dependency_graph: edge '{ru.label}' -> '{rd.label}' is not backed "
                                f"by any task ({how})", e.range, fix=replace_graph_edge(kernel, e))


@register
class OneSidedPingPong(Rule):
    """A ping-pong self-edge on a resource without both a producer and a consumer task.

    ## What it does
    For a self-edge `R: [R]` (R not a WorkQueue) some task must have `R` in
    `src_resources` and some task must have it in `dst_resources`.
    ## Why is this bad?
    Ping-pong alternates production and consumption of one buffer; with one side
    missing the self-edge orders nothing.
    ## Example
    ```python
    resource_dependency_graph={smem: [src], out: [smem, out]}   # out is only produced
    ```
    ## Use instead
    Drop the self-edge, or add the task for the missing side.
    """
    code = "TS354"
    name = "one-sided-ping-pong"
    order = 60

    def check(self, kernel):
        used = _used(kernel)
        for rid in ping_pong_resources(kernel):
            if rid not in used:
                continue          # TS351 reports it
            has_src = any(rid in t.src for t in kernel.tasks)
            has_dst = any(rid in t.dst for t in kernel.tasks)
            if not (has_src and has_dst):
                missing = "src_resources (no consumer)" if not has_src else "dst_resources (no producer)"
                yield self.diag(f"resource_dependency_graph: ping-pong self-edge on '{kernel.name(rid)}' "
                                "requires at least one task with the resource in src_resources and at least "
                                f"one task with it in dst_resources; none has it in {missing}",
                                _ping_pong_edge(kernel, rid).range)


@register
class ResourceMissingFromGraph(Rule):
    """A task resource that does not appear in the dependency graph.

    ## What it does
    Every resource in a task's `src_resources` / `dst_resources` must appear in
    `resource_dependency_graph`, as a key or in a value list.
    ## Why is this bad?
    Orderings involving the resource cannot be checked; a missing edge slips through.
    ## Example
    ```python
    resource_dependency_graph={smem: [src]}       # out is used by the store task
    ```
    ## Use instead
    ```python
    resource_dependency_graph={smem: [src], out: [smem]}
    ```
    """
    code = "TS355"
    name = "resource-missing-from-graph"
    order = 80

    def check(self, kernel):
        in_graph = set()
        for e in kernel.graph:
            in_graph.add(e.upstream)
            in_graph.add(e.downstream)
        for rid, _rng in getattr(kernel, "graph_keys", ()):   # a key with an empty list counts
            in_graph.add(rid)
        done = set()
        for t in kernel.tasks:
            for rid in t.resources:
                if rid in in_graph or rid in done:
                    continue
                done.add(rid)
                where = t.at("src_resources") if rid in t.src else t.at("dst_resources")
                yield self.diag(f"Task '{t.name}': resource '{kernel.name(rid)}' is in src_resources or "
                                "dst_resources but does not appear anywhere in resource_dependency_graph",
                                kernel.at("resource_dependency_graph"),
                                related=[Related(where, f"used by task '{t.name}'")],
                                fix=add_to_graph(kernel, rid))


@register
class UnpipelinedPingPong(Rule):
    """A ping-pong resource without a `pipeline_config`.

    ## What it does
    A resource with a self-edge in the dependency graph must be pipelined.
    ## Why is this bad?
    Without a pipeline nothing separates the stage being consumed from the next one
    being produced in the same buffer.
    ## Example
    ```python
    scratch = Gmem(name="scratch")            # graph: {scratch: [src, scratch], ...}
    ```
    ## Use instead
    Give the resource a pipeline config, or drop the self-edge.
    """
    code = "TS356"
    name = "unpipelined-ping-pong"
    order = 230

    def check(self, kernel):
        for rid in ping_pong_resources(kernel):
            r = kernel.resources[rid]
            if r.pipeline is None:
                edge = _ping_pong_edge(kernel, rid)
                rng = r.range if r.range is not UNKNOWN_RANGE else edge.range
                yield self.diag(f"Ping-pong resource '{r.label}' has a self-edge in resource_dependency_graph "
                                "but no pipeline_config; ping-pong resources must be pipelined", rng,
                                related=[Related(edge.range, "the self-edge")])


@register
class AsyncConsumerPingPong(Rule):
    """A ping-pong resource whose pipeline consumer side is a hardware (UMMA) consumer.

    ## What it does
    Rejects `TmaUmma`, `AsyncUmma` and `UmmaUmma` pipelines on resources with a
    self-edge; the consumer side must be threads (`AsyncAsync`, `TmaAsync`, `UmmaAsync`).
    ## Why is this bad?
    Ping-pong relies on the consumer releasing the slot synchronously so production and
    consumption strictly alternate; an MMA consumer releases through hardware later.
    ## Example
    ```python
    PipelineConfig.create_tma_umma_pipeline_cfg(...)   # on a self-edge resource
    ```
    ## Use instead
    A pipeline type with an async-thread consumer, or no self-edge.
    """
    code = "TS357"
    name = "async-consumer-ping-pong"
    order = 230

    def check(self, kernel):
        for rid in ping_pong_resources(kernel):
            r = kernel.resources[rid]
            if r.pipeline is None or r.pipeline.pipeline_type not in _SYNC_CONSUMER_REJECTED:
                continue
            edge = _ping_pong_edge(kernel, rid)
            rng = r.pipeline.range if r.pipeline.range is not UNKNOWN_RANGE else edge.range
            yield self.diag(f"Ping-pong resource '{r.label}' uses pipeline type "
                            f"'{r.pipeline.pipeline_type.value}' whose consumer side is TCGen05Mma (hardware "
                            "async); ping-pong requires a synchronous (AsyncThread) consumer side", rng,
                            related=[Related(edge.range, "the self-edge")])


rule("TS350", "missing-dependency-graph", """
    `TaskManager` without a (non-empty) `resource_dependency_graph`.

    ## What it does
    The manager refuses to start without a graph.
    ## Why is this bad?
    Graph coverage, edge backing, DMA ordering and the proxy opens of split consumers all
    read the graph; without it none of them can be checked.
    ## Example
    ```python
    TaskManager(tasks=tasks, resource_dependency_graph={})
    ```
    ## Use instead
    ```python
    TaskManager(tasks=tasks, resource_dependency_graph={smem: [src], out: [smem]})
    ```
    """, phase="manager", order=0)
rule("TS360", "invalid-dependency-graph-entry", """
    A `resource_dependency_graph` entry that is not a list of upstream resources.

    ## What it does
    Checks, when the `TaskManager` is built, that the graph is a dict and that each value
    is a list (or tuple) of resources: not a single resource (`{smem: src}`), `None` or
    a number, and no element that is plain data. ts-lint reports it where the value is
    certainly such (a dict it could not follow is not judged).
    ## Why is this bad?
    The reference iterates every value: a bare resource fails with `TypeError: 'Src'
    object is not iterable`, an element that is no resource with `AttributeError` when
    its name is read; the kernel is never built.
    ## Example
    `resource_dependency_graph={smem: src, out: [smem]}`
    ## Use instead
    `resource_dependency_graph={smem: [src], out: [smem]}`
    """, phase="manager", order=0, exc="TypeError")
rule("TS358", "ping-pong-without-producer", """
    A ping-pong resource that no task produces.

    ## What it does
    A self-edge resource needs a task with it in `dst_resources`.
    ## Why is this bad?
    Nothing ever fills the buffer the self-edge orders.
    ## Example
    `{scratch: [scratch]}` with `scratch` only in `src_resources`.
    ## Use instead
    Add the producing task or drop the self-edge.
    """, phase="manager", order=230,
     open_reason="same condition as TS354, which the reference checks earlier (step 6) and ts reports")
rule("TS359", "ping-pong-without-consumer", """
    A ping-pong resource that no task consumes.

    ## What it does
    A self-edge resource needs a task with it in `src_resources`.
    ## Why is this bad?
    Nothing ever drains the buffer the self-edge orders.
    ## Example
    `{scratch: [scratch]}` with `scratch` only in `dst_resources`.
    ## Use instead
    Add the consuming task or drop the self-edge.
    """, phase="manager", order=230,
     open_reason="same condition as TS354, which the reference checks earlier (step 6) and ts reports")


# --------------------------------------------------------------------------- examples
_P = pipeline_program
_GRAPH_CALL = ('''    return TaskManager(tasks=tasks, resource_dependency_graph={smem: [src], out: [smem]},
                       verbose=False)''')


def _graph(lines: str, mark: str = "") -> list:
    """subs that move the graph into a `graph = {...}` block with the given entry lines."""
    return [(_GRAPH_CALL, "    graph = {\n" + lines + "    }\n"
             f"    return TaskManager(tasks=tasks, resource_dependency_graph=graph,{mark}\n"
             "                       verbose=False)")]


_SCRATCH = [('src, smem, out = Gmem(name="src")', 'scratch = Gmem(name="scratch")\n    src, smem, out = Gmem(name="src")'),
            ("def load(src, smem):", "def load(src, smem, scratch):"),
            ("def store(smem, out):", "def store(smem, out, scratch):"),
            ("schedule=load(src, smem)", "schedule=load(src, smem, scratch)"),
            ("schedule=store(smem, out)", "schedule=store(smem, out, scratch)"),
            ("dst_resources=[smem], warp_idx=0", "dst_resources=[smem, scratch], warp_idx=0"),
            ("src_resources=[smem], dst_resources=[out]", "src_resources=[smem, scratch], dst_resources=[out]")]
_SCRATCH_LOAD = '''\
with domain_loop(0, 4, 1):
    v = src.load()
    scratch.store(data=v)
    smem.acquire()
    smem.fill(data=v)
    smem.commit()
'''
_SCRATCH_STORE = '''\
with domain_loop(0, 4, 1):
    smem.wait()
    v = smem.read()
    smem.release()
    w = scratch.load()
    out.store(data=v)
    out.store(data=w)
'''
_PP_VALID = _P(load=_SCRATCH_LOAD, store=_SCRATCH_STORE, subs=_SCRATCH + _graph(
    "        smem: [src],\n        scratch: [src],\n        out: [smem, scratch],\n"))

_examples("TS350", [_VALID], [_P(subs=[(
    _GRAPH_CALL, "    return TaskManager(tasks=tasks, resource_dependency_graph={},  # expect: TS350\n"
                 "                       verbose=False)")])])
_examples("TS360", [_VALID, _P(subs=_graph("        smem: (src,),\n        out: [smem],\n"))], [
    _P(subs=_graph("        smem: src,  # expect: TS360\n        out: [smem],\n")),
    _P(subs=_graph("        smem: [src],\n        out: None,  # expect: TS360\n")),
    _P(subs=_graph("        smem: [src],\n        out: [smem, 0],  # expect: TS360\n"))])
_examples("TS351", [_VALID], [_P(extra="", subs=[
    ('src, smem, out = Gmem(name="src")', 'spare = Gmem(name="spare")\n    src, smem, out = Gmem(name="src")')]
    + _graph("        smem: [src],\n        out: [smem],\n        spare: [src],  # expect: TS351\n"))])
_examples("TS352", [_VALID], [_P(subs=[
    ('src, smem, out = Gmem(name="src")', 'spare = Gmem(name="spare")\n    src, smem, out = Gmem(name="src")')]
    + _graph("        smem: [src],\n        out: [smem,\n              spare],  # expect: TS352\n"))])
_examples("TS353", [_VALID], [_P(subs=_graph(
    "        smem: [src],\n        out: [smem,\n              src],  # expect: TS353\n"))])
_RING = [('src, smem, out = Gmem(name="src")',
           'ring = Smem(name="ring", pipeline_config=cfg)\n    src, smem, out = Gmem(name="src")'),
          ("def store(smem, out):", "def store(smem, out, ring):"),
          ("schedule=store(smem, out)", "schedule=store(smem, out, ring)"),
          ("src_resources=[smem], dst_resources=[out]", "src_resources=[smem, ring], dst_resources=[out]")]
_RING_STORE = '''\
with domain_loop(0, 4, 1):
    ring.prefetch()
    smem.wait()
    v = smem.read()
    smem.release()
    out.store(data=v)
'''
_examples("TS354", [_P(store=_RING_STORE, subs=_RING + _graph(
    "        smem: [src],\n        out: [smem, ring],\n"))],
    [_P(store=_RING_STORE, subs=_RING + _graph(
        "        smem: [src],\n        ring: [ring],  # expect: TS354\n        out: [smem, ring],\n"))])
_examples("TS355", [_VALID], [_P(subs=_graph("        smem: [src],\n", "  # expect: TS355"))])
_examples("TS356", [_PP_VALID], [_P(load=_SCRATCH_LOAD, store=_SCRATCH_STORE, subs=[
    (_SCRATCH[0][0], 'scratch = Gmem(name="scratch")  # expect: TS356\n    src, smem, out = Gmem(name="src")')]
    + _SCRATCH[1:] + _graph("        smem: [src],\n        scratch: [src, scratch],\n        out: [smem, scratch],\n"))])
_TU_LOAD = '''\
with domain_loop(0, 4, 1):
    v = src.load()
    scratch.acquire()
    scratch.fill(data=v)
    scratch.commit()
    smem.acquire()
    smem.fill(data=v)
    smem.commit()
'''
_TU_STORE = '''\
with domain_loop(0, 4, 1):
    smem.wait()
    v = smem.read()
    smem.release()
    scratch.wait()
    w = scratch.read()
    scratch.release()
    out.store(data=v)
    out.store(data=w)
'''


def _tu(ctor: str, graph: str) -> str:
    return _P(load=_TU_LOAD, store=_TU_STORE, subs=[
        (_SCRATCH[0][0], ctor + '\n    src, smem, out = Gmem(name="src")')] + _SCRATCH[1:] + _graph(graph))


_TU_CFG = ('''tu = PipelineConfig.create_tma_umma_pipeline_cfg({mark}
        num_stages=2, num_bytes=1024, producer_group=CooperativeGroup(Agent.Thread, 1),
        consumer_group=CooperativeGroup(Agent.Thread, 1), cta_layout_vmnk=(1, 1, 1, 1))
    scratch = Smem(name="scratch", pipeline_config=tu)''')
_AA_CFG = ('''aa = PipelineConfig.create_async_async_pipeline_cfg(
        num_stages=2, producer_group=CooperativeGroup(Agent.Thread, 32),
        consumer_group=CooperativeGroup(Agent.Thread, 32), cta_layout_vmnk=(1, 1, 1, 1))
    scratch = Smem(name="scratch", pipeline_config=aa)''')
_examples("TS357", [_tu(_AA_CFG, "        smem: [src],\n        scratch: [src, scratch],\n        out: [smem, scratch],\n"),
                    _tu(_TU_CFG.format(mark=""), "        smem: [src],\n        scratch: [src],\n"
                        "        out: [smem, scratch],\n")],
          [_tu(_TU_CFG.format(mark="  # expect: TS357"),
               "        smem: [src],\n        scratch: [src, scratch],\n        out: [smem, scratch],\n")])
