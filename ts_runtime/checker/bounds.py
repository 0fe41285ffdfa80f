"""How many work tiles a persistent kernel must be checked with (docs/checker.md §6).

The reference checks persistent kernels with exactly two tiles. That is not enough in
general: with a double-buffered accumulator the MMA task can run two tiles ahead of the
epilogue, a state two tiles cannot represent. `tile_bound` computes a cutoff `T0` such
that every finding of a run with any number of tiles `T >= T0` is also a finding of a
run with fewer tiles; checking every `T < T0` then covers every tile count.

The cutoff is `T0 = L + D + M + 2` where

* `D` bounds the tile skew between any two tasks. A pool with one incrementing and one
  decrementing task, `K` initial credits and `rho` rounds per tile forces
  `tile(decrementer) - tile(incrementer) <= floor(K / rho) + 1`; `D` is the longest
  lead allowed by these difference constraints (shortest paths, Floyd-Warshall);
* `L` is the slot period: deleting `L` tiles leaves every pipeline cursor of an aliased
  resource (and every per-stage pool of a domain-interleaved one) on the same stage;
* `M` is a margin after the deleted window so that reads still in flight (DMA
  consumers) were retired: `ceil(S / rho) + 1` for DMA-consumer resources, else 1.

Conditions (otherwise no bound is claimed and `reason` says why): no `skip_if`, every
credit pool is balanced per tile, and has exactly one incrementing and one decrementing
task with single-participant rounds, and every task that matters (credit ops, aliased
accesses, PDL) is connected to the others by such constraints.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, Optional

from .credits import ROLE, CreditModel, Unknown, lane_info, tracked
from .expand import expand_task, iteration_count
from .program import DMA_CONSUMERS, alias_table

__all__ = ["TileBound", "tile_bound"]


@dataclass(frozen=True)
class TileBound:
    tiles: Optional[int]          # check T = 1 .. tiles; None when no bound could be shown
    skew: Optional[int] = None    # D
    period: int = 1               # L
    margin: int = 1               # M
    reason: str = ""


def _body_lists(kernel):
    """Per task: the per-tile part (no pre/post-WTL entries) of one normal tile."""
    out = []
    for t in kernel.tasks:
        cnt = iteration_count(t.lowered, 1)
        if cnt.n is None or not cnt.exact:
            raise Unknown(f"task '{t.name}': {cnt.reason or 'loop count is not exact'}")
        xs = expand_task(t, 1, None, n=cnt.n) if t.lowered is not None else []
        out.append([x for x in xs if not (x.entry.pre_wtl or x.entry.post_wtl)])
    return out


def tile_bound(kernel) -> TileBound:
    if any(t.lowered is not None and t.lowered.skip_if is not None for t in kernel.tasks):
        return TileBound(None, reason="skip_if: every skip pattern would be needed")
    try:
        bodies = _body_lists(kernel)
        cm = CreditModel(kernel, bodies, mode="checker")
    except Unknown as exc:
        return TileBound(None, reason=str(exc))
    T = len(kernel.tasks)
    # --- per pool, per task: increment / decrement events per tile
    inc: Dict[int, Dict[int, int]] = {}
    dec: Dict[int, Dict[int, int]] = {}
    for ti, effs in enumerate(cm.effects):
        for eff in effs:
            for mv in eff.moves:
                if mv.n != 1:
                    return TileBound(None, reason=f"several tasks share a barrier round on "
                                                  f"'{cm.pools[mv.pool].name}' (unbounded skew in the credit model)")
                side = inc if mv.delta > 0 else dec
                side.setdefault(mv.pool, {})
                side[mv.pool][ti] = side[mv.pool].get(ti, 0) + 1
    INF = math.inf
    dist = [[0 if i == j else INF for j in range(T)] for i in range(T)]   # dist[b][a] bounds t_a - t_b
    active = set()
    for p in set(inc) | set(dec):
        pi, pd = inc.get(p, {}), dec.get(p, {})
        rho_i, rho_d = sum(pi.values()), sum(pd.values())
        pool = cm.pools[p]
        if rho_i != rho_d:
            return TileBound(None, reason=f"the {pool.kind} credits of '{pool.name}' are not balanced per tile "
                                          f"({rho_i} in, {rho_d} out)")
        if len(pi) != 1 or len(pd) != 1:
            return TileBound(None, reason=f"'{pool.name}' has several producer or consumer tasks")
        (i,), (d,) = pi, pd
        active |= {i, d}
        w = pool.initial // rho_i + 1
        dist[i][d] = min(dist[i][d], w)        # t_d - t_i <= w
    # tasks without credit ops but with aliased accesses or PDL steps matter too
    table, pairs = alias_table(kernel)
    aliased = {r for pr in pairs for r in pr}
    for ti, body in enumerate(bodies):
        if any(x.resource in aliased or kernel.resources[x.resource].is_barrier and
               not kernel.resources[x.resource].is_group for x in body):
            active.add(ti)
    for k in range(T):
        for a in range(T):
            if dist[a][k] == INF:
                continue
            for b in range(T):
                if dist[a][k] + dist[k][b] < dist[a][b]:
                    dist[a][b] = dist[a][k] + dist[k][b]
    skew = 0
    for a in active:
        for b in active:
            if a != b:
                if dist[a][b] == INF:
                    return TileBound(None, reason=f"tasks '{kernel.tasks[a].name}' and '{kernel.tasks[b].name}' "
                                                  "are not ordered by any pipeline (unbounded tile skew)")
                skew = max(skew, int(dist[a][b]))
    # --- slot period of aliased resources and per-stage pools
    period = 1
    res = kernel.resources
    for ti, body in enumerate(bodies):
        counts: Dict[tuple, int] = {}
        for x in body:
            counts[(x.resource, x.stage)] = counts.get((x.resource, x.stage), 0) + 1
        for (rid, stage), n in counts.items():
            r = res.get(rid)
            if not tracked(r) or not (rid in aliased or cm.interleaved.get(rid)):
                continue
            if stage not in ROLE:
                continue
            role = ROLE[stage][0]
            S = r.pipeline.num_stages
            k = lane_info(kernel.tasks[ti], r, role)[2]
            adv = (n * k) % S
            period = _lcm(period, S // math.gcd(S, adv) if adv else 1)
    # --- margin for DMA reads still in flight
    margin = 1
    for rid in aliased:
        r = res[rid]
        if tracked(r) and r.pipeline.pipeline_type in DMA_CONSUMERS:
            p = cm.pool(rid, 0, "empty")
            rho = sum(dec.get(p, {}).values()) if p is not None else 0
            if rho:
                margin = max(margin, -(-r.pipeline.num_stages // rho) + 1)
    return TileBound(period + skew + margin + 1, skew, period, margin)


def _lcm(a: int, b: int) -> int:
    return a * b // math.gcd(a, b)
