"""The `host` family of benchmarks/agreement.py: single-defect edits of the host-side code
of a tutorial (everything outside `@schedule` bodies).

Operators: drop `@schedule` or a work decorator, swap consumer/producer work, drop a work
decorator keyword, `WorkAttr.AUXILIARY` -> `NONE`; delete or duplicate an allocator /
manager statement (`add_resource`, `compute_layout`, ...); delete a task-local variable
field or its assignment; a stage-count variable set to 0, 1 or 64; per `Task(...)`: a
resource dropped from or moved between src/dst, `warp_idx` / `num_warps` / `num_registers`
changed or dropped, another keyword dropped; per `TaskManager(...)`: a task deleted or
duplicated, a keyword dropped; per pipeline factory: another factory kind, `num_stages`
0 / 1 / 64, `num_bytes` halved, a cooperative group doubled or dropped; per
`PipelineGroup`: another mode, a member dropped; a resource's `pipeline_config` dropped;
per dependency-graph dict: an entry deleted, a self edge, a dependency deleted,
duplicated or reversed.

`host_variants` visits the operators round-robin (one realised variant of each operator
per round, the sites of each operator shuffled with a fixed seed), so every operator is
represented whatever the number of sites.
"""
from __future__ import annotations

import hashlib
import random
import re

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

CFG_KINDS = ["create_tma_umma_pipeline_cfg", "create_umma_async_pipeline_cfg", "create_tma_async_pipeline_cfg",
             "create_async_umma_pipeline_cfg", "create_async_async_pipeline_cfg", "create_async_pipeline_cfg",
             "create_umma_umma_pipeline_cfg", "create_clc_fetch_async_pipeline_cfg"]


def dec_name(d):
    e = d.decorator
    if isinstance(e, cst.Call):
        e = e.func
    if isinstance(e, cst.Name):
        return e.value
    if isinstance(e, cst.Attribute):
        return e.attr.value
    return None


def call_name(c):
    f = c.func
    if isinstance(f, cst.Name):
        return f.value
    if isinstance(f, cst.Attribute):
        return f.attr.value
    return None


def kw(call, name):
    for a in call.args:
        if a.keyword is not None and a.keyword.value == name:
            return a
    return None


class Collect(cst.CSTVisitor):
    """Collects mutation sites as (op, line, node, payload). Skips @schedule bodies."""
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self):
        self.sites = []
        self.in_sched = 0
        self.task_warp_vals = []  # source of warp_idx values

    def line(self, n):
        return self.get_metadata(PositionProvider, n).start.line

    def add(self, op, node, payload=None):
        self.sites.append((op, self.line(node), node, payload))

    def visit_FunctionDef(self, node):
        names = [dec_name(d) for d in node.decorators]
        if self.in_sched:
            self.in_sched += 1
            return
        if "schedule" in names:
            self.add("drop_schedule_decorator", node)
            self.in_sched = 1
            return
        for i, d in enumerate(node.decorators):
            n = dec_name(d)
            if n in ("consumer_work", "producer_work"):
                self.add("drop_work_decorator", node, i)
                self.add("swap_work_decorator_kind", node, i)
                if isinstance(d.decorator, cst.Call):
                    for a in d.decorator.args:
                        if a.keyword is not None:
                            self.add(f"drop_{a.keyword.value}_kw", node, (i, a.keyword.value))
                            if a.keyword.value == "work_attrs":
                                self.add("workattr_to_NONE", node, i)

    def leave_FunctionDef(self, node):
        if self.in_sched:
            self.in_sched -= 1

    def visit_SimpleStatementLine(self, node):
        if self.in_sched:
            return
        st = node.body[0] if len(node.body) == 1 else None
        if isinstance(st, cst.Expr) and isinstance(st.value, cst.Call):
            n = call_name(st.value)
            if n in ("add_resource", "add_pipeline_group", "compute_layout", "setup_resources_and_tasks",
                     "add_alias_group", "allocate"):
                self.add(f"del_stmt_{n}", node)
                if n in ("add_resource", "compute_layout", "add_pipeline_group"):
                    self.add(f"dup_stmt_{n}", node)
        if isinstance(st, (cst.Assign, cst.AnnAssign)):
            val = st.value
            if isinstance(val, cst.Call):
                n = call_name(val)
                if n == "TaskLocalVariable":
                    self.add("del_tlv_assign", node)
                if n == "uninitialized":
                    self.add("del_tlv_field", node)
            tgt = st.targets[0].target if isinstance(st, cst.Assign) else st.target
            if isinstance(tgt, cst.Name) and "stages" in tgt.value and isinstance(val, cst.Integer):
                for v in ("0", "1", "64"):
                    if v != val.value:
                        self.add(f"stages_var_{v}", node, v)

    def visit_Call(self, node):
        if self.in_sched:
            return
        n = call_name(node)
        if n == "Task":
            for k in ("src_resources", "dst_resources"):
                a = kw(node, k)
                if a is not None and isinstance(a.value, cst.List):
                    for j, _ in enumerate(a.value.elements):
                        self.add(f"task_del_{k}", node, (k, j))
                        self.add(f"task_move_{k}", node, (k, j))
            a = kw(node, "warp_idx")
            if a is not None:
                self.add("task_warp_idx_plus1", node)
                self.add("task_warp_idx_0", node)
            if kw(node, "num_warps") is not None:
                self.add("task_num_warps_plus1", node)
                self.add("task_num_warps_minus1", node)
            a = kw(node, "num_registers")
            if a is not None:
                self.add("task_regs_plus4", node)
                self.add("task_regs_232", node)
                self.add("task_drop_num_registers", node)
            for a in node.args:
                if a.keyword is not None and a.keyword.value not in ("src_resources", "dst_resources", "num_registers"):
                    self.add(f"task_drop_{a.keyword.value}", node, a.keyword.value)
        elif n == "TaskManager":
            a = kw(node, "tasks")
            if a is not None and isinstance(a.value, cst.List):
                for j, _ in enumerate(a.value.elements):
                    self.add("tm_del_task", node, j)
                self.add("tm_dup_task", node, 0)
            for a in node.args:
                if a.keyword is not None and a.keyword.value != "tasks":
                    self.add(f"tm_drop_{a.keyword.value}", node, a.keyword.value)
            a = kw(node, "resource_dependency_graph")
            if a is not None and isinstance(a.value, cst.Dict):
                self.graph_dict(a.value)
        elif n and n.startswith("create_") and n.endswith("_cfg"):
            for k in CFG_KINDS:
                if k != n:
                    self.add("cfg_kind", node, k)
            a = kw(node, "num_stages")
            if a is not None:
                for v in ("0", "1", "64"):
                    self.add(f"cfg_stages_{v}", node, v)
            if kw(node, "num_bytes") is not None:
                self.add("cfg_bytes_half", node)
            for g in ("producer_group", "consumer_group"):
                a = kw(node, g)
                if a is not None and isinstance(a.value, cst.Call) and len(a.value.args) >= 2:
                    self.add(f"cfg_{g}_count_x2", node, g)
                if a is not None:
                    self.add(f"cfg_drop_{g}", node, g)
        elif n == "PipelineGroup":
            a = kw(node, "mode")
            if a is not None:
                for m in ("Fork", "Merge", "FusedMerge"):
                    self.add("pg_mode", node, m)
            for k in ("members", "resources"):
                a = kw(node, k)
                if a is not None and isinstance(a.value, cst.List):
                    for j, _ in enumerate(a.value.elements):
                        self.add("pg_del_member", node, (k, j))
        if n and kw(node, "pipeline_config") is not None and n != "Task":
            self.add("res_drop_pipeline_config", node)

    def visit_Assign(self, node):
        if self.in_sched:
            return
        t = node.targets[0].target
        if isinstance(t, cst.Name) and "graph" in t.value and isinstance(node.value, cst.Dict):
            self.graph_dict(node.value)

    def graph_dict(self, d):
        for i, el in enumerate(d.elements):
            if not isinstance(el, cst.DictElement):
                continue
            self.add("graph_del_entry", d, i)
            self.add("graph_self_edge", d, i)
            if isinstance(el.value, (cst.List, cst.Tuple)):
                for j, _ in enumerate(el.value.elements):
                    self.add("graph_del_dep", d, (i, j))
                    self.add("graph_dup_dep", d, (i, j))
                    self.add("graph_swap_edge", d, (i, j))


def with_kw(call, name, value=None, drop=False):
    args = []
    for a in call.args:
        if a.keyword is not None and a.keyword.value == name:
            if drop:
                continue
            a = a.with_changes(value=value)
        args.append(a)
    if drop and args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT) if len(args) == 1 else args[-1]
    return call.with_changes(args=args)


def expr(s):
    return cst.parse_expression(s)


def list_del(lst, j):
    els = list(lst.elements)
    del els[j]
    if els and j == len(els):
        pass
    return lst.with_changes(elements=els)


class Mut(cst.CSTTransformer):
    def __init__(self, op, node, payload, mod):
        self.op, self.node, self.payload, self.mod = op, node, payload, mod
        self.done = False

    def code(self, n):
        return self.mod.code_for_node(n)

    def on_leave(self, orig, upd):
        if orig is not self.node:
            return upd
        self.done = True
        op, p = self.op, self.payload
        if op == "drop_schedule_decorator":
            return upd.with_changes(decorators=[d for d in upd.decorators if dec_name(d) != "schedule"])
        if op == "drop_work_decorator":
            ds = list(upd.decorators); del ds[p]; return upd.with_changes(decorators=ds)
        if op == "swap_work_decorator_kind":
            ds = list(upd.decorators); d = ds[p]; e = d.decorator
            other = "producer_work" if dec_name(d) == "consumer_work" else "consumer_work"
            f = e.func if isinstance(e, cst.Call) else e
            nf = f.with_changes(value=other) if isinstance(f, cst.Name) else f.with_changes(attr=cst.Name(other))
            ds[p] = d.with_changes(decorator=e.with_changes(func=nf) if isinstance(e, cst.Call) else nf)
            return upd.with_changes(decorators=ds)
        if op.startswith("drop_") and op.endswith("_kw"):
            i, k = p; ds = list(upd.decorators); c = ds[i].decorator
            args = [a for a in c.args if not (a.keyword is not None and a.keyword.value == k)]
            if args:
                args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            ds[i] = ds[i].with_changes(decorator=c.with_changes(args=args) if args else c.func)
            return upd.with_changes(decorators=ds)
        if op == "workattr_to_NONE":
            ds = list(upd.decorators); c = ds[p].decorator
            a = kw(c, "work_attrs")
            ds[p] = ds[p].with_changes(decorator=with_kw(c, "work_attrs", expr(self.code(a.value).replace("AUXILIARY", "NONE"))))
            return upd.with_changes(decorators=ds)
        if op.startswith("del_stmt_") or op in ("del_tlv_assign", "del_tlv_field"):
            return cst.RemoveFromParent()
        if op.startswith("dup_stmt_"):
            return cst.FlattenSentinel([upd, upd.deep_clone()])
        if op.startswith("stages_var_"):
            st = upd.body[0]
            return upd.with_changes(body=[st.with_changes(value=cst.Integer(p))])
        if op in ("task_del_src_resources", "task_del_dst_resources"):
            k, j = p; a = kw(upd, k)
            return with_kw(upd, k, list_del(a.value, j))
        if op in ("task_move_src_resources", "task_move_dst_resources"):
            k, j = p; other = "dst_resources" if k == "src_resources" else "src_resources"
            a = kw(upd, k); b = kw(upd, other)
            el = a.value.elements[j]
            if b is None or not isinstance(b.value, cst.List):
                return upd
            upd = with_kw(upd, k, list_del(a.value, j))
            nb = list(b.value.elements) + [cst.Element(el.value)]
            nb = [e.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) for e in nb[:-1]] + [nb[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)]
            return with_kw(upd, other, b.value.with_changes(elements=nb))
        if op == "task_warp_idx_plus1":
            return with_kw(upd, "warp_idx", expr(f"({self.code(kw(upd, 'warp_idx').value)}) + 1"))
        if op == "task_warp_idx_0":
            if self.code(kw(upd, 'warp_idx').value).strip() == "0":
                return with_kw(upd, "warp_idx", expr("1"))
            return with_kw(upd, "warp_idx", expr("0"))
        if op == "task_num_warps_plus1":
            return with_kw(upd, "num_warps", expr(f"({self.code(kw(upd, 'num_warps').value)}) + 1"))
        if op == "task_num_warps_minus1":
            return with_kw(upd, "num_warps", expr(f"({self.code(kw(upd, 'num_warps').value)}) - 1"))
        if op == "task_regs_plus4":
            return with_kw(upd, "num_registers", expr(f"({self.code(kw(upd, 'num_registers').value)}) + 4"))
        if op == "task_regs_232":
            return with_kw(upd, "num_registers", expr("232"))
        if op == "task_drop_num_registers":
            return with_kw(upd, "num_registers", drop=True)
        if op.startswith("task_drop_") or op.startswith("tm_drop_"):
            return with_kw(upd, p, drop=True)
        if op == "tm_del_task":
            return with_kw(upd, "tasks", list_del(kw(upd, "tasks").value, p))
        if op == "tm_dup_task":
            lst = kw(upd, "tasks").value
            els = list(lst.elements)
            els = [e.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) for e in els] + [cst.Element(els[0].value.deep_clone())]
            return with_kw(upd, "tasks", lst.with_changes(elements=els))
        if op == "cfg_kind":
            return upd.with_changes(func=upd.func.with_changes(attr=cst.Name(p)))
        if op.startswith("cfg_stages_"):
            return with_kw(upd, "num_stages", cst.Integer(p))
        if op == "cfg_bytes_half":
            return with_kw(upd, "num_bytes", expr(f"({self.code(kw(upd, 'num_bytes').value)}) // 2"))
        if op.startswith("cfg_") and op.endswith("_count_x2"):
            g = kw(upd, p).value; args = list(g.args)
            args[1] = args[1].with_changes(value=expr(f"({self.code(args[1].value)}) * 2"))
            return with_kw(upd, p, g.with_changes(args=args))
        if op.startswith("cfg_drop_"):
            return with_kw(upd, p, drop=True)
        if op == "pg_mode":
            a = kw(upd, "mode"); s = self.code(a.value)
            ns = re.sub(r"\b(Fork|Merge|FusedMerge)\b", p, s)
            if ns == s:
                return upd
            return with_kw(upd, "mode", expr(ns))
        if op == "pg_del_member":
            k, j = p
            return with_kw(upd, k, list_del(kw(upd, k).value, j))
        if op == "res_drop_pipeline_config":
            return with_kw(upd, "pipeline_config", drop=True)
        if op.startswith("graph_"):
            els = list(upd.elements)
            if op == "graph_del_entry":
                del els[p]
            elif op == "graph_self_edge":
                e = els[p]
                els[p] = e.with_changes(value=expr(f"[{self.code(e.key)}]"))
            else:
                i, j = p; e = els[i]; lst = e.value; items = list(lst.elements)
                if op == "graph_del_dep":
                    del items[j]
                    els[i] = e.with_changes(value=lst.with_changes(elements=items))
                elif op == "graph_dup_dep":
                    items = [x.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) for x in items] + [cst.Element(items[j].value.deep_clone())]
                    els[i] = e.with_changes(value=lst.with_changes(elements=items))
                elif op == "graph_swap_edge":
                    dep = items[j].value
                    del items[j]
                    els[i] = e.with_changes(value=lst.with_changes(elements=items))
                    # add the reversed edge dep -> key
                    found = False
                    for q, e2 in enumerate(els):
                        if isinstance(e2, cst.DictElement) and self.code(e2.key) == self.code(dep) and isinstance(e2.value, (cst.List, cst.Tuple)):
                            it2 = [x.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) for x in e2.value.elements] + [cst.Element(e.key.deep_clone())]
                            els[q] = e2.with_changes(value=e2.value.with_changes(elements=it2))
                            found = True
                    if not found:
                        els.append(cst.DictElement(dep.deep_clone(), expr(f"[{self.code(e.key)}]")))
            fixed = []
            for q, x in enumerate(els):
                if isinstance(x, cst.DictElement) and q < len(els) - 1 and x.comma is cst.MaybeSentinel.DEFAULT:
                    x = x.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                fixed.append(x)
            return upd.with_changes(elements=fixed)
        raise AssertionError(op)

    def on_leave_dispatch(self, orig, upd):
        return self.on_leave(orig, upd)

    leave_FunctionDef = on_leave_dispatch
    leave_SimpleStatementLine = on_leave_dispatch
    leave_Call = on_leave_dispatch
    leave_Dict = on_leave_dispatch


_MODS = {}


def sites(t, src):
    w = MetadataWrapper(cst.parse_module(src))
    c = Collect(); w.visit(c)
    _MODS[t] = (src, w.module)
    return [dict(t=t, op=op, line=line, node=node, payload=payload) for op, line, node, payload in c.sites
            if op not in ("task_drop_name", "task_drop_debug_print")]


def realize(s):
    src, mod = _MODS[s["t"]]
    m = Mut(s["op"], s["node"], s["payload"], mod)
    try:
        new = mod.visit(m).code
        compile(new, "x", "exec")
    except Exception:
        return None
    if new == src or not m.done:
        return None
    payload = s["payload"]
    ptag = "" if payload is None else "_" + re.sub(r"[^A-Za-z0-9]+", "", str(payload))[:20]
    return dict(t=s["t"], name=f"{s['t']}__{s['op']}_L{s['line']}{ptag}", src=new,
                hash=hashlib.md5(new.encode()).hexdigest(), op=s["op"], line=s["line"])


def host_variants(tutorials: dict, seed: int = 0, limit: int = 375) -> list:
    """The first `limit` [(name, text, "host:<operator>")] of the round-robin over the
    tutorials (stem -> text). Each variant rewrites a whole module, so all of the several
    thousand sites would take many minutes; 375 covers every operator several times."""
    _MODS.clear()
    ss = [x for t, text in tutorials.items() for x in sites(t, text)]
    buckets = {}
    for x in ss:
        buckets.setdefault(x["op"], []).append(x)
    rnd = random.Random(seed)
    for b in buckets.values():
        rnd.shuffle(b)
    order, seen = [], set()
    while any(buckets.values()) and len(order) < limit:
        for k in sorted(buckets):
            while buckets[k]:
                v = realize(buckets[k].pop())
                if v and v["hash"] not in seen:
                    seen.add(v["hash"])
                    order.append((v["name"], v["src"], f"host:{v['op']}"))
                    break
    return order
