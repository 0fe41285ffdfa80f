"""Resources: WorkQueue and PipelineGroup construction (TS461-TS471 via
model.group_checks) and the ResourceModel of an instance, as tracing.resource_model builds
it (work methods and TS222/TS223, task-local variables TS319/TS320, allocations)."""
from __future__ import annotations

import dataclasses
from typing import Optional

import libcst as cst

from ts_runtime.enums import PipelineGroupMode
from ts_runtime.model.builder import RESERVED_WORK_NAMES
from ts_runtime.model.kernel import AllocationModel, ResourceKind, ResourceModel, WorkMethodModel
from ts_runtime.model.work_signature import duplicate_return
from ts_runtime.source import SourceRange

from .common import _Abort, _static, _type_name
from .values import (
    AllocationVal, ClassVal, ConfigVal, FieldVal, FuncVal, ResourceObj, TileSchedCfgVal, TLVVal, UNKNOWN,
)


_KINDS = {"positional_only": "POSITIONAL_ONLY", "pos_or_kw": "POSITIONAL_OR_KEYWORD",
          "var_pos": "VAR_POSITIONAL", "kw_only": "KEYWORD_ONLY", "var_kw": "VAR_KEYWORD"}


# Python values a PipelineGroup `mode=` can be that ts-lint knows are not a PipelineGroupMode (TS475)
_PLAIN = (str, int, float, dict, list, tuple, set, type(None))


class ResourcesMixin:
    # ================================================================== resources
    def _work_queue_init(self, it, args, kwargs, call):
        inst, rest = args[0], list(args[1:])
        wq = self.builtin_classes["WorkQueue"]
        from .classes import all_fields, call_post_init
        tsc = rest[0] if rest else kwargs.pop("tile_scheduler_config", None)
        kwargs = dict(kwargs)
        kwargs.pop("tile_scheduler_config", None)
        fields = all_fields(wq)
        names = {f.name for f in fields}
        extra = {k: kwargs.pop(k) for k in list(kwargs) if k not in names}
        for f in fields:
            if f.init and f.name in kwargs:
                inst.attrs[f.name] = kwargs.pop(f.name)
            elif f.init:
                inst.attrs[f.name] = it.call(f.default_factory, [], {}, call) \
                    if f.default_factory is not None else f.default
        inst.attrs["tile_scheduler_config"] = tsc
        for k, v in extra.items():
            it.setattr(inst, k, v, call)
        inst.attrs["work_tile"] = TLVVal("WorkTileInfo")
        inst.attrs["skip_work_tile"] = TLVVal("Boolean")
        call_post_init(it, inst, call)
        return None

    @staticmethod
    def _members(g) -> list:
        m = g.attrs.get("members", [])
        return list(m) if isinstance(m, (list, tuple)) else []

    def _group_post_init(self, it, args, kwargs, call):
        from ts_runtime.model.group_checks import check_mode, derive_group_config
        g = args[0]
        g.attrs["is_barrier"] = True
        members = g.attrs.get("members")
        rng = g.range
        mode = g.attrs.get("mode")
        if isinstance(mode, _PLAIN) and not self.is_tainted(mode):   # (a value ts-lint knows, first, as the runtime)
            for code, _exc, msg in check_mode(g.attrs.get("name"), mode, _type_name(mode)):
                self.ctx.report(code, msg, rng)
                g.failed = True
                return None
        if not isinstance(members, (list, tuple)) or self.is_tainted(members) or \
                not all(isinstance(m, ResourceObj) for m in members):
            g.uncertain = "the members of this PipelineGroup could not be resolved"
            self.it.unknown(call, "PipelineGroup members could not be resolved statically", "resource")
            return None
        try:
            from ts_runtime.model.group_checks import check_membership
            membership = list(check_membership(
                [(m.attrs.get("name"), m.rid, None if m.group is None or m.group is g else m.group.rid)
                 for m in members]))
        except ImportError:
            membership = [("TS461", ValueError, f"resource '{m.attrs.get('name')}' already belongs to a "
                           "PipelineGroup") for m in members if m.group is not None and m.group is not g]
        for code, _exc, msg in membership[:1]:
            self.ctx.report(code, msg, rng)
            g.failed = True
            return None
        cfg = g.attrs.get("pipeline_config")
        explicit = cfg.model if isinstance(cfg, ConfigVal) else None
        mlist = []
        for m in members:
            c = m.attrs.get("pipeline_config")
            if c is not None and not isinstance(c, ConfigVal):
                g.uncertain = f"the pipeline_config of member '{m.attrs.get('name')}' could not be resolved"
                return None
            if c is not None:
                mlist.append((m.attrs.get("name"), dataclasses.replace(c.model)))
            else:
                lost = m.lost_init is not None and "pipeline_config" in m.lost_init
                mlist.append((m.attrs.get("name"), None, m.cls.name if lost else None))
        mode = g.attrs.get("mode")
        if mode is UNKNOWN:
            g.uncertain = "the PipelineGroup mode could not be resolved"
            return None
        merged, findings = derive_group_config(g.attrs.get("name"), mode, mlist, explicit)
        for code, _exc, msg, *blame in findings[:1]:   # __post_init__ raises the first one
            if blame:   # anchor on the disagreeing member's `pipeline_config=` (as the runtime)
                m = next((m for m in members if m.attrs.get("name") == blame[0]), None)
                if m is not None and getattr(m, "node", None) is not None:
                    rng = self.call_arguments(m.node).get("pipeline_config", m.range or rng)
            self.ctx.report(code, msg, rng)
            g.failed = True
            return None
        g.merged = merged
        for m in members:
            m.group = g
        return None

    def resource_model(self, obj: ResourceObj, call=None) -> Optional[ResourceModel]:
        """tracing.resource_model: built once per resource (None if it raised)."""
        if obj.model is not None:
            return obj.model
        if obj.model_error:
            return None
        try:
            m = self._resource_model(obj, call)
        except _Abort:
            obj.model_error = True
            return None
        obj.model = m
        return m

    def _resource_model(self, obj: ResourceObj, call):
        from .classes import all_fields
        cls = obj.cls
        if cls.is_sub("PipelineGroup"):
            kind = ResourceKind.GROUP
        elif cls.is_sub("WorkQueue"):
            kind = ResourceKind.WORK_QUEUE
        elif cls.is_sub("PdlWaitBarrier"):
            kind = ResourceKind.PDL_WAIT
        elif cls.is_sub("PdlLaunchBarrier"):
            kind = ResourceKind.PDL_LAUNCH
        else:
            kind = ResourceKind.PLAIN
        methods, findings = self._work_methods(cls)
        name = obj.attrs.get("name", "")
        if not isinstance(name, str):
            if name is UNKNOWN:
                obj.uncertain = obj.uncertain or "its name could not be resolved"
            name = ""
        is_barrier = obj.attrs.get("is_barrier", False)
        if is_barrier is UNKNOWN:
            obj.uncertain = obj.uncertain or "is_barrier could not be resolved"
            is_barrier = False
        r = ResourceModel(
            rid=obj.rid, name=name, class_name=cls.name, kind=kind, is_barrier=bool(is_barrier),
            work_methods=methods, reserved_collisions=findings,
            range=obj.range or SourceRange(self.ctx.path, 1, 0),
            class_mro=tuple(self._qual(k) for k in cls.mro),
            consumer_wait_signaling_threads=obj.attrs.get("consumer_wait_signaling_threads"),
        )
        if cls.unknown_work or any(k.unknown_work for k in cls.mro):
            obj.uncertain = obj.uncertain or "a work method's stage or returns= could not be resolved"
        if kind is not ResourceKind.GROUP:
            fields = all_fields(cls)
            r.tlv_names = self._tlv_names(obj, fields)
            r.tlv_dtypes = _tlv_dtypes(obj, r.tlv_names)
            r.unset_fields = self._unset_fields(obj, fields)
            r.internal_fields = frozenset(f.name for f in fields if not f.init) & r.unset_fields
            r.legacy_factories = self._legacy_factories(cls)
            r.framework_overrides = self._framework_overrides(cls)
            r.lost_init = obj.lost_init
            if methods:
                held = {k: v.rid for k, v in obj.attrs.items() if isinstance(v, ResourceObj) and v is not obj}
                r.settable_fields = self._attr_effects(cls, methods, held)
        cfg = obj.attrs.get("pipeline_config")
        if isinstance(cfg, ConfigVal):
            r.pipeline = dataclasses.replace(cfg.model)
        elif kind is ResourceKind.GROUP:
            r.pipeline = getattr(obj, "merged", None)
            if getattr(obj, "uncertain", None):
                pass
        elif cfg is not None:
            obj.uncertain = obj.uncertain or "its pipeline_config could not be resolved"
        self.refresh_allocations(obj, r, call)
        for which in ("producer", "consumer"):
            v = self._requirements(obj, f"get_{which}_requirements", call) if self._overrides(
                cls, f"get_{which}_requirements") else None
            if v is UNKNOWN:
                obj.uncertain = obj.uncertain or f"get_{which}_requirements() could not be resolved"
                v = None
            names_ = None if v is None else [x.name if isinstance(x, AllocationVal) else str(x) for x in v]
            setattr(r, f"{which}_requirements", names_)
        if obj.group is not None:
            r.group = obj.group.rid
        if kind is ResourceKind.GROUP:
            mode = obj.attrs.get("mode")
            r.group_mode = mode if isinstance(mode, PipelineGroupMode) else UNKNOWN
            members = [m for m in self._members(obj) if isinstance(m, ResourceObj)]
            r.members = [m.rid for m in members]
            r.member_names = {m.attrs.get("name"): m.rid for m in members}
        if kind is ResourceKind.WORK_QUEUE:
            tsc = obj.attrs.get("tile_scheduler_config")
            r.tile_scheduler_type = tsc.tile_scheduler_type if isinstance(tsc, TileSchedCfgVal) else (
                None if tsc is None else UNKNOWN)
        return r

    @staticmethod
    def _overrides(cls: ClassVal, method: str) -> bool:
        owner, _ = cls.lookup(method)
        return owner is not None and owner.builtin is None

    @staticmethod
    def _qual(k: ClassVal) -> str:
        if k.builtin == "object":
            return "builtins.object"
        if k.live is not None:
            return f"{k.live.__module__}.{k.live.__qualname__}"
        if k.builtin == "external":
            return k.qualname
        return k.full_qualname

    def refresh_allocations(self, obj: ResourceObj, r: ResourceModel, call=None):
        for space, method in (("smem", "get_smem_requirements"), ("tmem", "get_tmem_requirements")):
            if not self._overrides(obj.cls, method):
                setattr(r, space, [])
                continue
            v = self._requirements(obj, method, call)
            if v is UNKNOWN:
                obj.uncertain = obj.uncertain or f"{method}() could not be resolved"
                setattr(r, space, [])
                continue
            out = []
            for a in v:
                if not isinstance(a, AllocationVal):
                    obj.uncertain = obj.uncertain or f"an allocation of {method}() could not be resolved"
                    continue
                out.append(AllocationModel(a.name if isinstance(a.name, str) else "?", space,
                                           _static(a.size) if a.size is not None else 0,
                                           a.alignment if a.alignment is not None else 1,
                                           0 if a.offset is None else a.offset))
            setattr(r, space, out)

    def _work_methods(self, cls: ClassVal):
        """tracing._work_methods over the interpreted MRO."""
        methods, findings, seen_stage = {}, [], {}
        for klass in reversed(cls.mro):
            for name, wm in klass.work.items():
                if wm.stage is None:
                    continue
                side = "producer" if wm.stage.is_producer else "consumer"
                prev = seen_stage.get(name)
                if prev is not None and prev != side:
                    other = "consumer" if side == "producer" else "producer"
                    findings.append((name, f"@{side}_work '{name}' collides with a @{other}_work of the same "
                                     "name", wm.range, "TS223"))
                seen_stage[name] = side
                if name in RESERVED_WORK_NAMES:
                    findings.append((name, f"work method '{name}' collides with the standard pipeline method "
                                     f"'{name}'; rename it", wm.range, "TS222"))
                returns = []
                for x in getattr(wm, "_ts_raw_returns", wm.returns):
                    if isinstance(x, str):
                        returns.append(x)
                    elif isinstance(x, FieldVal):
                        if x.name is None:
                            self.ctx.report("TS313", f"returns= Field of '{name}' has no .name (is the resource "
                                            "class a dataclass?)", wm.range)
                            raise _Abort()
                        returns.append(x.name)
                raw = getattr(wm, "_ts_raw_returns", wm.returns)
                dup = duplicate_return(name, returns)
                if dup is not None and not all(isinstance(x, str) for x in raw):
                    self.ctx.report("TS313", dup, wm.range)     # (all strings: checked by the decorator)
                    raise _Abort()
                m = methods[name] = WorkMethodModel(name, wm.stage, tuple(returns), list(wm.params), wm.range,
                                                    wm.defined_on)
                m.stage_info_problem, m.def_range = wm.stage_info_problem, wm.def_range
                m.misplaced_dsl_decorator, m.returns_range = wm.misplaced_dsl_decorator, wm.returns_range
        return methods, findings

    def _tlv_names(self, obj: ResourceObj, fields) -> set:
        names = set()
        for f in fields:
            declared = f.tlv_placeholder or f.tlv_declared
            value = obj.attrs.get(f.name, None)
            if isinstance(value, TLVVal):
                self._bind_owner(value, obj, f.name)
                names.add(f.name)
            elif declared:
                if value is UNKNOWN:
                    obj.uncertain = obj.uncertain or f"task-local variable '{f.name}' could not be resolved"
                    names.add(f.name)
                    continue
                if value is None:
                    self.ctx.report("TS320", f"field '{f.name}' of {obj.cls.name} is declared as a "
                                    "TaskLocalVariable field but was not initialized in __init__/__post_init__",
                                    obj.range)
                    raise _Abort()
                self.ctx.report("TS320", f"field '{f.name}' of {obj.cls.name} is declared as a "
                                f"TaskLocalVariable field but contains {_type_name(value)}", obj.range)
                raise _Abort()
        for k, v in obj.attrs.items():
            if isinstance(v, TLVVal) and not k.startswith("_"):
                self._bind_owner(v, obj, k)
                names.add(k)
        return names

    def _legacy_factories(self, cls) -> list:
        """[(name, def line)] of the legacy variable factories the user's classes define (TS234)."""
        from ts_runtime.model.kernel import LEGACY_FACTORIES
        out, seen = [], set()
        for k in cls.mro:
            if k.builtin is not None:
                continue
            for name in LEGACY_FACTORIES:
                fn = k.namespace.get(name)
                if name in seen or not isinstance(fn, FuncVal):
                    continue
                seen.add(name)
                pos = self.ctx.pos
                out.append((name, SourceRange(pos.path_of(fn.node), pos.line(fn.node.name))))
        return out

    def _framework_overrides(self, cls) -> list:
        """tracing._framework_overrides: [(name, why, def line, defining class)] of the
        FRAMEWORK_CALLS methods the user's classes define that the framework's call does
        not bind (TS239)."""
        from ts_runtime.model.kernel import FRAMEWORK_CALLS, framework_call_problem
        from .frames import param_list
        out, seen = [], set()
        for k in cls.mro:
            if k.builtin is not None:
                continue
            for name, nargs in FRAMEWORK_CALLS.items():
                if name in seen or name not in k.namespace:
                    continue
                seen.add(name)
                fn = k.namespace[name]
                if not isinstance(fn, FuncVal) or fn.kind == "property" \
                        or not isinstance(fn.node, cst.FunctionDef):
                    continue              # as the runtime: only functions are judged
                ps = param_list(fn.node.params)
                if fn.kind != "staticmethod":
                    ps = ps[1:]           # self / cls
                params = [(p.name.value, _KINDS[kind], p.default is not None) for p, kind in ps]
                why = framework_call_problem(params, nargs)
                if why is not None:
                    pos = self.ctx.pos
                    out.append((name, why, SourceRange(pos.path_of(fn.node), pos.line(fn.node.name)), k.name))
        return out

    @staticmethod
    def _unset_fields(obj: ResourceObj, fields) -> frozenset:
        """tracing._user_fields (first part): the user's dataclass fields that are None once built."""
        out = set()
        mro = obj.cls.mro
        for f in fields:
            owner = next((k for k in mro if any(g.name == f.name for g in k.own_fields)), None)
            if owner is None or owner.builtin is not None:
                continue
            if f.name in obj.attrs:
                v = obj.attrs[f.name]
            else:
                k, v = obj.cls.lookup(f.name)
                if k is None:
                    continue
            if v is None:
                out.add(f.name)
        return frozenset(out)

    def _attr_effects(self, cls: ClassVal, methods: dict, held: dict):
        """tracing._attr_effects: uses / writes of each work method, from the text of
        the user's methods (model/attr_effects.py); ts_runtime's classes and classes
        ts-lint cannot see have unknown bodies."""
        from ts_runtime.model.attr_effects import NOT_A_METHOD, class_table, fill, function_effects
        from .common import WorkMethodVal
        from .values import FuncVal
        table = getattr(cls, "_ts_effects", None)
        if table is None:
            src = self.ctx.src
            cache: dict = {}

            def lookup(name):
                if name in cache:
                    return cache[name]
                result = NOT_A_METHOD
                for k in cls.mro:
                    if k.builtin is None:
                        if name not in k.namespace:
                            continue
                        v = k.namespace[name]
                        fn = v.func if isinstance(v, WorkMethodVal) else v
                        if isinstance(fn, FuncVal):
                            result = None
                            if fn.kind == "function" and src is not None:
                                result = _effects_of(src, fn.node, function_effects)
                            elif fn.kind == "property":
                                result = NOT_A_METHOD
                        elif v is UNKNOWN or callable(v) or hasattr(v, "impl"):
                            result = None
                        break
                    if k.live is not None:
                        if name in vars(k.live):
                            result = None if callable(vars(k.live)[name]) else NOT_A_METHOD
                            break
                        continue
                    if k.builtin == "object":
                        if name in vars(object):
                            result = None
                            break
                        continue
                    result = None      # a class ts-lint cannot see into
                    break
                cache[name] = result
                return result

            names = {n for k in cls.mro if k.builtin is None for n, v in k.namespace.items()
                     if isinstance(v, WorkMethodVal) or isinstance(v, FuncVal) and v.kind != "property"}
            table = cls._ts_effects = class_table(methods, names, lookup)
        table, settable = table
        fill(methods, table, held)
        return settable

    def _bind_owner(self, tlv: TLVVal, owner, field_name):
        if tlv.owner is not None and (tlv.owner is not owner or tlv.field_name != field_name):
            self.ctx.report("TS319", f"TaskLocalVariable bound to '{tlv.field_name}' cannot be reused across "
                            f"resource fields ('{field_name}')", owner.range)
            raise _Abort()
        tlv.owner, tlv.field_name = owner, field_name

    def collect_resources(self, objs, out: dict, objects: dict, call=None) -> bool:
        """tracing.collect_resources; False when a model raised (the caller aborts)."""
        for o in objs:
            if o is None or not isinstance(o, ResourceObj) or o.rid in out:
                continue
            m = self.resource_model(o, call)
            if m is None:
                return False
            out[m.rid] = m
            objects[m.rid] = o
            if o.group is not None:
                if not self.collect_resources([o.group], out, objects, call):
                    return False
            if o.cls.is_sub("PipelineGroup"):
                if not self.collect_resources(self._members(o), out, objects, call):
                    return False
        return True


_EFFECTS_BY_TEXT: dict = {}    # function text -> MethodEffects (None: no `self`), across runs


def _effects_of(src, node, function_effects):
    """function_effects of a method, memoised by its text: a re-lint after an edit
    elsewhere finds the unchanged methods here."""
    text = src.function_text(node)
    if text in _EFFECTS_BY_TEXT:
        return _EFFECTS_BY_TEXT[text]
    tree = src.ast_function(node)
    if tree is None:
        return None
    eff = function_effects(tree)
    if len(_EFFECTS_BY_TEXT) > 4096:
        _EFFECTS_BY_TEXT.clear()
    _EFFECTS_BY_TEXT[text] = eff
    return eff


def _tlv_dtypes(obj: ResourceObj, names) -> dict:
    """tracing._tlv_dtypes: {task-local variable: DSL type name} where the dtype is known."""
    from ts_runtime.model.dtypes import DTYPE_NAMES
    from .values import DtypeVal
    out = {}
    for n in names:
        v = obj.attrs.get(n)
        d = getattr(v, "dtype", None) if isinstance(v, TLVVal) else None
        if isinstance(d, DtypeVal) and d.name in DTYPE_NAMES:
            out[n] = d.name
    return out
