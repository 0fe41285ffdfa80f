"""SmemAllocator / TmemAllocator: add, alias groups, compute_layout (memory.layout on
concrete values), barrier bytes and the AllocatorModel the manager sees (TS701-TS706)."""
from __future__ import annotations

from ts_runtime import enums as E
from ts_runtime.model.kernel import AllocationModel, AllocatorModel
from ts_runtime.model.values import is_static_int

from .common import _Abort, _b, _LayoutError, _static
from .values import (
    AllocationVal, AllocatorVal, BuiltinFunc, ConfigVal, ResourceObj, RUNTIME, UNKNOWN,
)


class AllocatorsMixin:
    # ================================================================== allocators
    def _alloc_get(self, a: AllocatorVal, name, call):
        """TS705: a typed view before allocate(). An allocator handed to a TaskManager is
        allocated by that manager's `setup_resources_and_tasks()`: a view taken before it
        (the manager known not to be set up yet, as for TS903) is reported too."""
        tm = getattr(a, "managed", None)
        if getattr(a, "allocated", False):
            pass
        elif tm is None or not (getattr(tm, "setup_done", False) or getattr(tm, "setup_unknown", False)):
            self.ctx.report("TS705", f"Call allocate() before {name}()", self._r(call))
        return RUNTIME

    def _allocator_attr(self, a: AllocatorVal, name, node):
        from ts_runtime.memory import SmemAllocator, TmemAllocator
        live_cls = SmemAllocator if a.space == "smem" else TmemAllocator
        live = getattr(live_cls, name, None)
        # a call binds to the runtime method's signature first (TS907, `checked_method`)
        api = dict(live=live, live_method=True, live_what=f"{live_cls.__name__}.{name}(...)") \
            if callable(live) else {}
        m = {
            "add": self._alloc_add, "add_resource": self._alloc_add_resource,
            "add_alias_group": self._alloc_alias, "compute_layout": self._alloc_layout,
            "add_pipeline_group": self._alloc_add_group, "add_tmem_ptr": self._alloc_add_tmem_ptr,
        }
        if name in m:
            return BuiltinFunc(name, m[name], qualname=f"Allocator.{name}", self_val=a, **api)
        if name == "allocate":
            def allocate(i, args, k, c, _a=a):
                _a.allocated = True
                return RUNTIME
            return _b(name, allocate, **api)
        if name in ("assign_barrier_ptrs", "print_usage_report"):
            return _b(name, lambda i, args, k, c: None, **api)
        if name in ("get", "get_as_type", "get_typed_ptr"):
            return _b(name, lambda i, args, k, c, _n=name: self._alloc_get(a, _n, c), **api)
        if name == "smem_base":
            return RUNTIME
        if name in ("total", "total_tmem_columns", "data_bytes"):
            return self._alloc_total(a, node)
        if name == "barrier_smem_bytes":
            return self._barrier_bytes(a)
        if name == "total_smem_bytes":
            from .interpreter import binop
            import operator
            return binop(operator.add, self._alloc_total(a, node), self._barrier_bytes(a))
        if name == "allocations":
            return list(a.allocations)
        if name == "tmem_ptr_alloc":
            return getattr(a, "tmem_ptr", None)
        return UNKNOWN

    def _alloc_total(self, a: AllocatorVal, node):
        if not a.laid_out:
            self.ctx.report("TS704", "Call compute_layout() first (before total)", self._r(node))
            return UNKNOWN
        return a.total

    def _alloc_add(self, it, args, kwargs, call):
        a, alloc = args[0], (args[1] if len(args) > 1 else kwargs.get("alloc", UNKNOWN))
        if not isinstance(alloc, AllocationVal):
            a.uncertain = a.uncertain or "an allocation could not be resolved"
            return alloc
        if not any(alloc in ph for g in a.alias_groups for ph in g):   # twice: laid out twice
            a.allocations.append(alloc)
        return alloc

    def _alloc_add_tmem_ptr(self, it, args, kwargs, call):
        a = args[0]
        alloc = args[1] if len(args) > 1 else kwargs.get("alloc", UNKNOWN)
        a.tmem_ptr = alloc
        return self._alloc_add(it, [a, alloc], {}, call)

    def _requirements(self, res, method, call):
        it = self.it
        fn = it.getattr(res, method, call)
        v = it.call(fn, [], {}, call) if fn is not UNKNOWN else UNKNOWN
        if v is None:
            return [] if not getattr(self, "_strict_requirements", False) else None
        if isinstance(v, (list, tuple)):
            return list(v)
        return UNKNOWN

    def _bad_requirements(self, res, space, reqs, call) -> bool:
        """TS717 (memory.requirements): a known None instead of a list, or a known
        element that is not an allocation."""
        from ts_runtime.memory import requirements_message
        method = f"get_{space}_requirements"
        owner, _ = res.cls.lookup(method)
        if owner is None or owner.builtin is not None:
            return False               # the base class's `[]`
        if reqs is None:
            self.ctx.report("TS717", requirements_message(res.cls.name, method, "NoneType"), self._r(call))
            return True
        for i, r in enumerate(reqs):
            if r is None or isinstance(r, (int, str, float, bool)):
                self.ctx.report("TS717", requirements_message(res.cls.name, method, type(r).__name__, i),
                                self._r(call))
                return True
        return False

    def _alloc_add_resource(self, it, args, kwargs, call):
        """`add_resource`: no de-duplication, as in the runtime (a resource added twice is
        counted twice)."""
        a, res = args[0], (args[1] if len(args) > 1 else kwargs.get("resource", UNKNOWN))
        if not isinstance(res, ResourceObj):
            a.uncertain = a.uncertain or f"`{it.text(call)}`: the resource could not be resolved"
            return None
        self._strict_requirements = True
        try:
            if a.space == "smem":
                a.resources.append(res)
                reqs = self._requirements(res, "get_smem_requirements", call)
            else:
                reqs = self._requirements(res, "get_tmem_requirements", call)
        finally:
            self._strict_requirements = False
        if reqs is UNKNOWN:
            a.uncertain = a.uncertain or f"allocations of '{res.attrs.get('name', '?')}' could not be resolved"
            return None
        if self._bad_requirements(res, a.space, reqs, call):
            return None
        for r in reqs or ():
            self._alloc_add(it, [a, r], {}, call)
        return None

    def _alloc_add_group(self, it, args, kwargs, call):
        a, g = args[0], (args[1] if len(args) > 1 else kwargs.get("group", UNKNOWN))
        if not isinstance(g, ResourceObj):
            a.uncertain = a.uncertain or "a pipeline group could not be resolved"
            a.groups_unknown = True
            return None
        if g.attrs.get("pipeline_config") is None and getattr(g, "merged", None) is None:
            if getattr(g, "uncertain", None) or getattr(g, "failed", False):
                a.groups_unknown = True
                # members / mode not resolved (e.g. configs built under an unknown
                # const_expr branch), or the group already reported: not a missing config
                a.uncertain = a.uncertain or g.uncertain or "a pipeline group could not be resolved"
                return None
            self.ctx.report("TS706", "PipelineGroup has no pipeline_config", self._r(call))
            return None
        if g not in a.groups:
            a.groups.append(g)     # the barrier storage only (memory.SmemAllocator.add_pipeline_group)
        return None

    def _alloc_alias(self, it, args, kwargs, call):
        a, phases = args[0], (args[1] if len(args) > 1 else kwargs.get("phases", UNKNOWN))
        seq = it.iterate(phases)
        if seq is None:
            a.uncertain = a.uncertain or "an alias group could not be resolved"
            return None
        phases = [list(p) if isinstance(p, (list, tuple)) else [p] for p in seq]
        if len(phases) < 2:
            self.ctx.report("TS702", "Alias group must contain at least 2 phases", self._r(call))
            return None
        for ph in phases:
            for x in ph:
                while x in a.allocations:
                    a.allocations.remove(x)
        a.alias_groups.append(phases)
        return None

    def _alloc_layout(self, it, args, kwargs, call):
        """SmemAllocator.compute_layout: the shared `memory.layout` on concrete values, the same
        algorithm on abstract ones (an UNKNOWN size or alignment makes what follows UNKNOWN)."""
        a = args[0]
        rng = self._r(call)
        if a.laid_out:
            self.ctx.report("TS703", "compute_layout() already called", rng)
            return UNKNOWN
        a.laid_out = True
        allocs = [x for x in a.allocations if isinstance(x, AllocationVal)]
        groups = [[[x for x in ph if isinstance(x, AllocationVal)] for ph in g] for g in a.alias_groups]
        everything = allocs + [x for g in groups for ph in g for x in ph]
        if all(is_static_int(x.size) and is_static_int(x.alignment) for x in everything):
            try:
                from ts_runtime.memory import layout
            except ImportError:
                layout = None
            if layout is not None:
                try:
                    a.total = layout(allocs, groups, lambda x: x.size, lambda x: x.alignment)
                except Exception as exc:          # TS701 from _align_up
                    for d in getattr(exc, "diagnostics", ())[:1]:
                        self.ctx.report(d.code, d.message, rng)
                    a.total = UNKNOWN
                    return UNKNOWN
                return a.total
        try:
            a.total = self._layout(allocs, groups, rng)
        except _LayoutError:
            a.total = UNKNOWN
        return a.total

    def _layout(self, allocations, alias_groups, rng):
        from .interpreter import binop
        import operator

        def align_up(value, alignment):
            if alignment is UNKNOWN or alignment is RUNTIME:
                return UNKNOWN
            if not is_static_int(alignment) or alignment <= 0 or alignment & (alignment - 1):
                self.ctx.report("TS701", f"alignment must be a power of 2, got {alignment!r}", rng)
                raise _LayoutError()
            return binop(operator.mul, binop(operator.floordiv, binop(operator.add, value, alignment - 1),
                                             alignment), alignment)
        units = [("alloc", x, x.alignment) for x in allocations]
        for g in alias_groups:
            aligns = [x.alignment for ph in g for x in ph]
            units.append(("group", g, max(aligns, default=1) if all(is_static_int(v) for v in aligns)
                          else UNKNOWN))
        if any(not is_static_int(u[2]) for u in units):
            for _k, item, _al in units:           # the order itself is unknown
                for x in ([item] if _k == "alloc" else [x for ph in item for x in ph]):
                    x.offset = UNKNOWN
            return UNKNOWN
        offset = 0
        for kind, item, align in sorted(units, key=lambda u: -u[2]):
            if kind == "alloc":
                offset = align_up(offset, align)
                item.offset = offset
                offset = binop(operator.add, offset, item.size)
                continue
            base = align_up(offset, align) if item and any(item) else offset
            end = base
            for ph in item:
                o = base
                for x in ph:
                    o = align_up(o, x.alignment)
                    x.offset = o
                    o = binop(operator.add, o, x.size)
                if is_static_int(end) and is_static_int(o):
                    end = max(end, o)
                else:
                    end = RUNTIME if (end is RUNTIME or o is RUNTIME) and UNKNOWN not in (end, o) else UNKNOWN
            offset = end
        return offset

    def _barrier_bytes(self, a: AllocatorVal):
        total = 0
        for r in a.resources:
            cfg = r.attrs.get("pipeline_config")
            if cfg is None or r.group is not None:
                continue
            if not isinstance(cfg, ConfigVal):
                return UNKNOWN
            stages = cfg.model.num_stages
            if stages is UNKNOWN:
                return UNKNOWN
            if is_static_int(stages):
                total += 16 * stages
        for g in a.groups:
            merged = getattr(g, "merged", None)
            stages = merged.num_stages if merged is not None else 0
            if stages is UNKNOWN:
                return UNKNOWN
            if is_static_int(stages):
                mode = g.attrs.get("mode")
                per = 2 if mode is E.PipelineGroupMode.FusedMerge else len(self._members(g)) + 1
                total += per * stages * 16
        return total

    def allocator_model(self, a, space, call):
        if a is None:
            return None
        if not isinstance(a, AllocatorVal):
            return UNKNOWN
        if not a.laid_out:
            self.ctx.report("TS704", "Call compute_layout() first (before total)", self._r(call))
            raise _Abort()
        data = a.total
        barriers = self._barrier_bytes(a) if space == "smem" else 0
        def m(x):
            return AllocationModel(x.name if isinstance(x.name, str) else "?", space, _static(x.size),
                                   x.alignment if x.alignment not in (None, 0) else 1,
                                   0 if x.offset is None else x.offset)
        out = AllocatorModel(space, _static(data) if data is not UNKNOWN else UNKNOWN, barriers,
                             [m(x) for x in a.allocations if isinstance(x, AllocationVal)], a.range)
        if hasattr(out, "alias_groups"):
            out.alias_groups = [[[m(x) for x in ph if isinstance(x, AllocationVal)] for ph in g]
                                for g in a.alias_groups]
        if space == "smem" and not getattr(a, "groups_unknown", False):
            out.groups = [g.rid for g in a.groups]
        out.complete = not a.uncertain
        return out
