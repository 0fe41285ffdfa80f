"""The TS API as the interpreter sees it: each call builds the shared model.

Every function here mirrors its tracing counterpart (ts_runtime/resources.py,
pipeline.py, pipeline_group.py, memory.py, task.py, task_manager.py, tracing.py) and
calls the same shared code (model.config_checks, model.group_checks, model.lower,
model.task_checks, model.work_signature, rules.engine) so findings are the same, at the
same anchors: the call expression for configs / tasks / the manager, the keyword value
for an argument, the constructor call for a resource, the first decorator line for a
work method, each value of the dependency-graph dict literal for an edge.
"""
from __future__ import annotations

import dataclasses
from typing import Optional

import libcst as cst

from ts_runtime import enums as E
from ts_runtime.model.builder import STANDARD_OPS
from ts_runtime.model.kernel import WorkMethodModel
from ts_runtime.model.values import is_static_int
from ts_runtime.source import SourceRange

from .allocators import AllocatorsMixin
from .common import (  # noqa: F401  (re-exported for the other extract modules)
    _LIBRARIES, _TLV_TAG, BuiltinNS, WorkMethodVal, _Abort, _b, _layout, _LayoutError, _library,
    _name_of, _signature_bind, _static, _strides, _type_name,
)
from .configs import _FACTORIES, ConfigsMixin
from .kernel import KernelMixin
from .resources import ResourcesMixin
from . import names as N
from .values import (
    AllocationVal, AllocatorVal, ArgParserVal, BlockCM, BoundMethod, BuiltinFunc, ClassVal,
    ConfigVal, CoopGroupVal, DataclassField, DataFlowToken, DtypeVal, FieldVal, FuncVal,
    InstanceVal, is_abstract, LoopHandle, MemberRefVal, NamespaceVal, QualRef, ResourceObj,
    ResourceProxy, RUNTIME, ScheduleFuncVal, ScheduleVal, TaskManagerVal, TileSchedCfgVal,
    TLVVal, UNKNOWN, WtlHandle,
)


class TSApi(ConfigsMixin, AllocatorsMixin, ResourcesMixin, KernelMixin):
    def __init__(self, it):
        self.it = it
        self.ctx = it.ctx
        self.tainted: dict = {}
        self.builtin_classes = self._builtin_classes()
        self.symbols = self._symbols()

    # ================================================================== taint
    def taint(self, container):
        self.tainted[id(container)] = container
        if id(container) in self.it.globals_dicts:
            self.it.clobber_globals(container)    # `globals()[unknown] = v`: any module name may change

    def is_tainted(self, container) -> bool:
        return id(container) in self.tainted

    # ================================================================== builtins
    def _builtin_classes(self) -> dict:
        from ts_runtime import pipeline_group as G, resources as R, task as T
        from ts_runtime.tracing import _qualname
        from .classes import c3_mro
        it = self.it
        obj = ClassVal("object", "object", module="builtins", builtin="object")
        obj.mro = [obj]
        obj.namespace = {"__init__": _b("__init__", lambda i, a, k, c: None, "object.__init__")}
        out = {"object": obj}

        def mk(live, bases):
            k = ClassVal(live.__name__, live.__qualname__, module=live.__module__, builtin=live.__name__,
                         bases=bases, live=live)
            k.mro = c3_mro(k, bases)
            if dataclasses.is_dataclass(live):
                k.is_dataclass = True
                for f in dataclasses.fields(live):
                    df = DataclassField(f.name, kw_only=f.kw_only is True, init=f.init)
                    if f.default is not dataclasses.MISSING:
                        df.has_default, df.default = True, f.default
                    if f.default_factory is not dataclasses.MISSING:
                        fac = f.default_factory
                        df.default_factory = _b("factory", lambda i, a, kw, c, fac=fac: fac())
                    df.tlv_placeholder = bool(f.metadata.get(_TLV_TAG))
                    df.tlv_declared = df.tlv_placeholder or "TaskLocalVariable" in str(f.type)
                    k.own_fields.append(df)
            for name, attr in vars(live).items():
                info = getattr(attr, "__ts_work__", None)
                if info is None:
                    continue
                rng = SourceRange(info.path, info.line) if info.path else SourceRange("<unknown>", 1, 0)
                wm = WorkMethodModel(name, info.stage, tuple(info.returns), list(info.params), rng,
                                     _qualname(live))
                wm._ts_raw_returns = list(info.returns)
                k.work[name] = wm
                k.namespace[name] = _b(name, lambda i, a, kw, c: None, f"{live.__qualname__}.{name}")
            return k

        mr = mk(R.MemoryResource, [obj])
        ns = mr.namespace
        ns["__init__"] = _b("__init__", lambda i, a, kw, c, k=mr: self._dc_init(k, a, kw, c),
                            "MemoryResource.__init__")
        ns["__post_init__"] = _b("__post_init__", lambda i, a, kw, c: None, "MemoryResource.__post_init__")
        for m in ("get_smem_requirements", "get_tmem_requirements", "physical_ranges"):
            ns[m] = _b(m, lambda i, a, kw, c: [], f"MemoryResource.{m}")
        for m in ("get_producer_requirements", "get_consumer_requirements", "consumer_work",
                  "producer_work", "consumer_aux_work", "producer_aux_work", "create",
                  "create_pipeline"):
            ns[m] = _b(m, lambda i, a, kw, c: None, f"MemoryResource.{m}")
        out["MemoryResource"] = mr
        for live in (R.PdlWaitBarrier, R.PdlLaunchBarrier):
            k = mk(live, [mr])
            k.namespace["__init__"] = _b("__init__", lambda i, a, kw, c, k=k: self._dc_init(k, a, kw, c),
                                         f"{live.__name__}.__init__")
            out[live.__name__] = k
        wq = mk(R.WorkQueue, [mr])
        wq.namespace["__init__"] = _b("__init__", self._work_queue_init, "WorkQueue.__init__")
        wq.namespace["skip_work_tile_if"] = BuiltinFunc(
            "skip_work_tile_if", lambda i, a, kw, c: False, qualname="WorkQueue.skip_work_tile_if",
            owner="ts_runtime.resources.WorkQueue", required_positional=2)
        out["WorkQueue"] = wq
        pg = mk(G.PipelineGroup, [mr])
        pg.namespace["__init__"] = _b("__init__", lambda i, a, kw, c, k=pg: self._dc_init(k, a, kw, c),
                                      "PipelineGroup.__init__")
        pg.namespace["__post_init__"] = _b("__post_init__", self._group_post_init,
                                           "PipelineGroup.__post_init__")
        out["PipelineGroup"] = pg
        task = mk(T.Task, [obj])
        task.namespace["__init__"] = _b("__init__", self._task_init, "Task.__init__")
        task.namespace["get_domain"] = BuiltinFunc("get_domain", lambda i, a, kw, c: UNKNOWN,
                                                   qualname="Task.get_domain",
                                                   owner="ts_runtime.task.Task", required_positional=2)
        for m in ("make_task_cache", "run", "init_variables", "run_body"):
            task.namespace[m] = _b(m, lambda i, a, kw, c: None, f"Task.{m}")
        # whether the executing warp runs the task: a DSL Boolean of the warp index, so an
        # `if task.is_selected():` in the kernel is a run-time branch the DSL traces both ways
        task.namespace["is_selected"] = _b("is_selected", lambda i, a, kw, c: RUNTIME, "Task.is_selected")
        out["Task"] = task
        # the base of a user class derived from TaskManager (`class GemmManager(TaskManager)`):
        # its `__init__` builds the kernel on the instance (a TaskManagerObj) as the
        # `TaskManager(...)` call does; its other methods are the manager's (tm_attr)
        from ts_runtime.task_manager import TaskManager as LiveTM
        tm = mk(LiveTM, [obj])
        tm.namespace["__init__"] = _b("__init__", lambda i, a, kw, c: self._task_manager(
            i, a[1:], kw, c, target=a[0] if a else None), "TaskManager.__init__")
        out["TaskManager"] = tm
        for k in out.values():
            k.ts_name = k.builtin
        return out

    def _dc_init(self, k, args, kwargs, call):
        from .classes import dataclass_init
        inst, rest = args[0], args[1:]
        return dataclass_init(self.it, k, inst, rest, kwargs, call)

    def _symbols(self) -> dict:
        from ts_runtime import enums as En, memory as M, pipeline as P, resources as R
        from ts_runtime.resources import PipelineConfig
        from ts_runtime.schedule_builder import schedule as live_schedule
        from . import schedules as S
        bc = self.builtin_classes
        TSC = R.TileSchedulerConfig

        def api(name, impl, live, what=None):
            """A ts API callable whose calls bind to `live`'s signature first (TS907)."""
            qual = what[:-5] if what else name
            return BuiltinFunc(name, impl, qualname=qual, live=live, live_what=what or f"{name}(...)")
        sym = {
            "schedule": api("schedule", self._schedule_decorator, live_schedule),
            "domain_loop": _b("domain_loop", S.domain_loop, "domain_loop"),
            "work_tile_loop": _b("work_tile_loop", S.work_tile_loop, "work_tile_loop"),
            "when_true": _b("when_true", lambda i, a, k, c: S.when(i, a, k, c, False), "when_true"),
            "when_false": _b("when_false", lambda i, a, k, c: S.when(i, a, k, c, True), "when_false"),
            "consumer_work": api("consumer_work", self._work_decorator("consumer"), R.consumer_work),
            "producer_work": api("producer_work", self._work_decorator("producer"), R.producer_work),
            "Every": api("Every", S.every_ctor, En.Every),
            "FIRST_ITER": En.FIRST_ITER, "LAST_ITER": En.LAST_ITER, "SKIPPABLE": En.SKIPPABLE,
            "IterationPredicate": En.IterationPredicate, "OpaqueCondition": En.OpaqueCondition,
            "BlockGuard": En.BlockGuard, "LoopGuard": En.LoopGuard,
            "WorkAttr": En.WorkAttr, "PipelineType": En.PipelineType,
            "SignalingThreads": En.SignalingThreads, "TileSchedulerType": En.TileSchedulerType,
            "PipelineGroupMode": En.PipelineGroupMode, "ScheduleStage": En.ScheduleStage,
            "Agent": P.Agent, "PipelineOp": P.PipelineOp, "PipelineUserType": P.PipelineUserType,
            "MemoryResource": bc["MemoryResource"], "WorkQueue": bc["WorkQueue"],
            "PdlWaitBarrier": bc["PdlWaitBarrier"], "PdlLaunchBarrier": bc["PdlLaunchBarrier"],
            "PDL_BARRIER_TYPES": (bc["PdlWaitBarrier"], bc["PdlLaunchBarrier"]),
            "PipelineGroup": bc["PipelineGroup"], "Task": bc["Task"],
            "TaskManager": _b("TaskManager", self._task_manager, "TaskManager"),
            "TaskLocalVariable": BuiltinNS("TaskLocalVariable", {
                "uninitialized": api("uninitialized", lambda i, a, k, c: FieldVal(
                    default=None, has_default=True, init=False, tlv=True), R.TaskLocalVariable.uninitialized,
                    "TaskLocalVariable.uninitialized(...)"),
            }, self._tlv, live=R.TaskLocalVariable),
            "PipelineConfig": BuiltinNS("PipelineConfig", {
                name: _b(name, lambda i, a, k, c, name=name: self._config_factory(name, a, k, c),
                         f"PipelineConfig.{name}") for name in _FACTORIES
            }, self._config_direct, live=PipelineConfig),
            "TileSchedulerConfig": BuiltinNS("TileSchedulerConfig", {
                "create_static_persistent_tile_scheduler_params": api(
                    "create_static_persistent_tile_scheduler_params",
                    lambda i, a, k, c: TileSchedCfgVal(E.TileSchedulerType.StaticPersistent),
                    TSC.create_static_persistent_tile_scheduler_params,
                    "TileSchedulerConfig.create_static_persistent_tile_scheduler_params(...)"),
                "create_clc_dynamic_persistent_tile_scheduler_params": api(
                    "create_clc_dynamic_persistent_tile_scheduler_params",
                    lambda i, a, k, c: TileSchedCfgVal(E.TileSchedulerType.ClcDynamicPersistent),
                    TSC.create_clc_dynamic_persistent_tile_scheduler_params,
                    "TileSchedulerConfig.create_clc_dynamic_persistent_tile_scheduler_params(...)"),
            }, lambda i, a, k, c: TileSchedCfgVal(a[0] if a else k.get("tile_scheduler_type", UNKNOWN)),
                live=TSC),
            "CooperativeGroup": api("CooperativeGroup", self._coop_group, P.CooperativeGroup),
            "SmemAllocation": api("SmemAllocation", self._smem_allocation, M.SmemAllocation),
            "TmemAllocation": api("TmemAllocation", self._tmem_allocation, M.TmemAllocation),
            "SmemAllocator": api("SmemAllocator", lambda i, a, k, c: AllocatorVal("smem", self._r(c)),
                                 M.SmemAllocator),
            "TmemAllocator": api("TmemAllocator", lambda i, a, k, c: AllocatorVal("tmem", self._r(c)),
                                 M.TmemAllocator),
            "ResourceContext": api("ResourceContext", lambda i, a, k, c: NamespaceVal(
                {"smem_base": RUNTIME, "tmem_ptr_i32": RUNTIME}), M.ResourceContext),
        }
        for name in ("StageInfo", "WorkTileInfo", "DataFlowToken", "ScheduleError",
                     "ScheduleValidationError"):
            sym[name] = BuiltinNS(name, {}, None)
        self._PipelineConfig = PipelineConfig
        return sym

    def _r(self, node):
        return self.it.rng(node) if node is not None else SourceRange(self.ctx.path, 1, 0)

    def bind_api(self, live, what: str, args, kwargs, call, method: bool = False) -> None:
        """TS907 when a call of the ts API callable `live` does not bind to its signature, as
        the runtime's `checked_init` / `checked_api` / `checked_method` raise TypeError there
        (`SmemAllocation("a", aligment=128)`, `TaskLocalVariable(doc="...")`): reported at
        the call, then the run stops there, as Python's exception stops it. Under a `try`
        with a handler the handler runs instead, unreported. Calls with `*` / `**`
        unpacking, whose contents ts-lint may not know, are not judged."""
        if call is None or not isinstance(call, cst.Call) or any(a.star for a in call.args):
            return
        from ts_runtime.api_calls import bind_error, message
        error = bind_error(live, ([None] if method else []) + list(args), kwargs)
        if error is None:
            return
        from .frames import UserRaise
        if self.it._try_depth:
            raise UserRaise(call)
        self.ctx.report("TS907", message(what, error), self._r(call))
        raise UserRaise(call, reported=True)

    def _unbound_call(self, what: str, fn, args, kwargs, call) -> None:
        """A ts API call whose arguments did not bind: TS907 with Python's message when the
        call spells every argument out (no `*` / `**` unpacking, whose contents may be
        unknown to ts-lint), else an unresolved note."""
        from ts_runtime.api_calls import bind_error, message
        starred = any(getattr(a, "star", "") for a in getattr(call, "args", ()))
        error = None if starred else bind_error(fn, args, kwargs)
        if error is not None:
            self.ctx.report("TS907", message(what, error), self._r(call))
        else:
            self.it.unknown(call, f"{what} arguments could not be matched to its signature")

    # ================================================================== name resolution
    def resolve(self, qualname: str):
        sym = N.ts_symbol(qualname)
        if sym is not None:
            head, _, rest = sym.partition(".")
            v = self.symbols.get(head, UNKNOWN)
            for part in rest.split(".") if rest else ():
                v = self.it.getattr(v, part)
            return v
        if N.is_ts_module(qualname):
            return QualRef(qualname)
        width = N.dtype_width(qualname)
        if width is not None:
            return DtypeVal(qualname.rsplit(".", 1)[-1], width)
        from .stdlib import stdlib
        v = stdlib(qualname)
        if v is not None:
            return v
        c = self._cutlass(qualname)
        if c is not None:
            return c
        return QualRef(qualname)

    def _cutlass(self, qualname: str):
        it = self.it
        short = qualname
        if qualname in ("cutlass.range_constexpr", "cutlass.cute.range_constexpr"):
            return _b("range_constexpr", _range_constexpr, qualname)
        if qualname in ("cutlass.const_expr", "cutlass.cute.const_expr"):
            return _b("const_expr", lambda i, a, k, c: a[0] if a else UNKNOWN, qualname)
        if qualname in ("cutlass.dynamic_expr", "cutlass.range", "cutlass.cute.range",
                        "cutlass.range_dynamic"):
            return _b(short, lambda i, a, k, c: RUNTIME, qualname)
        if qualname in ("cutlass.cute.jit", "cutlass.cute.kernel", "cutlass.jit", "cutlass.kernel",
                        "cutlass.dsl_user_op", "cutlass.cute.struct"):
            if qualname in ("cutlass.cute.kernel", "cutlass.kernel"):
                return _b(short, self._kernel_decorator, qualname)
            return _b(short, self._jit_decorator, qualname)
        if qualname == "cutlass.cute.compile":
            return self.compile_entry("plain")
        if qualname in ("cutlass.cute.ceil_div", "cutlass.utils.ceil_div"):
            return _b("ceil_div", lambda i, a, k, c: (-(-a[0] // a[1])) if len(a) == 2 and all(
                is_static_int(x) for x in a) and a[1] else (RUNTIME if RUNTIME in a else UNKNOWN), qualname)
        if qualname in _ARCH_CONSTANTS:
            return _ARCH_CONSTANTS[qualname]
        if qualname in _BARRIER_COUNTS:
            return _b(qualname.rsplit(".", 1)[-1], _barrier_count_check(qualname), qualname)
        if qualname.startswith("cutlass.cute.arch."):
            return _b(short, lambda i, a, k, c: RUNTIME, qualname)
        if qualname in ("cutlass.memory.get_smem_capacity_in_bytes", "cutlass.utils.get_smem_capacity_in_bytes"):
            return _b("get_smem_capacity_in_bytes", _smem_capacity, qualname)
        if qualname in ("cutlass.utils.blackwell_helpers.compute_epilogue_tile_size",
                        "cutlass.utils.sm100.compute_epilogue_tile_size"):
            return _b("compute_epilogue_tile_size", _epilogue_tile_size, qualname)
        return None

    def _kernel_decorator(self, it, args, kwargs, call):
        out = self._jit_decorator(it, args, kwargs, call)
        if isinstance(out, FuncVal):
            out.is_kernel = True
        return out

    def _jit_decorator(self, it, args, kwargs, call):
        if len(args) == 1 and not kwargs and isinstance(args[0], FuncVal):
            args[0].is_jit = True
            return args[0]
        if len(args) == 1 and not kwargs and isinstance(args[0], WorkMethodVal):
            # `@cute.jit` above `@consumer_work`: the class attribute is still the work
            # method (the runtime's functools.wraps copies its registration); the DSL
            # rejects the order when the kernel is traced (TS241, from the def's decorators)
            if isinstance(args[0].func, FuncVal):
                args[0].func.is_jit = True
            return args[0]
        return _b("jit", lambda i, a, k, c: self._jit_decorator(i, a, {}, c), "cute.jit()")

    def _cute_compile(self, it, args, kwargs, call, frontend: str = "plain"):
        """`cute.compile(f, *args)` compiles (calls) `f`; `frontend` is the DSL front end it
        uses: "next" for `cute.compile[cute.FrontendNext, ...]`, else "plain" (their
        control flow rules differ, TS965)."""
        if args:
            fn = args[0]
            if isinstance(fn, InstanceVal):
                fn = it.getattr(fn, "__call__", call)
            if isinstance(fn, FuncVal) and not fn.is_jit and isinstance(fn.node, cst.FunctionDef) \
                    and not fn.node.decorators and isinstance(call, cst.Call) and call.args:
                _compile_without_jit(it, fn, call)
            if fn is not UNKNOWN:
                # the compiled entry receives its plain Python arguments as dynamic values
                it.jit_boundary = fn
                outer, it.frontend = it.frontend, frontend
                try:
                    it.call(fn, list(args[1:]), {k: v for k, v in kwargs.items() if k != "options"}, call)
                finally:
                    it.jit_boundary = None
                    it.frontend = outer
        return UNKNOWN

    def compile_with(self, options, node=None):
        """`cute.compile[options]`: the same compile, with the front end the options name
        (an option ts-lint cannot resolve, `cute.GenerateLineInfo(True)`, is no front end
        unless its text says FrontendNext)."""
        opts = options if isinstance(options, tuple) else (options,)
        nxt = any(getattr(o, "qualname", "").endswith("FrontendNext") for o in opts)
        text = self.it.text(node) if node is not None else ""
        frontend = "next" if nxt else (None if "FrontendNext" in text else "plain")
        return self.compile_entry(frontend)

    def compile_entry(self, frontend):
        """A `cute.compile` entry point compiling with `frontend` ("plain", "next", or None
        when it is not known which)."""
        f = _b("compile", lambda i, a, k, c: self._cute_compile(i, a, k, c, frontend), "cutlass.cute.compile")
        f.frontend = frontend
        return f

    def join_compile(self, a, b):
        """`cute.compile[cute.FrontendNext] if hasattr(cute, "FrontendNext") else cute.compile`:
        when both alternatives are compile entry points, the call compiles the function
        either way; the front end is known only when both name the same one (TS965 needs
        it, and is silent without). None when `a` and `b` are not both compile entries."""
        if all(isinstance(x, BuiltinFunc) and x.qualname == "cutlass.cute.compile" and x.self_val is None
               and hasattr(x, "frontend") for x in (a, b)):
            return self.compile_entry(a.frontend if a.frontend == b.frontend else None)
        return None

    def constexpr_annotation(self, ann, scope) -> bool:
        """`cutlass.Constexpr` / `cutlass.Constexpr[...]`: the parameter stays a Python value."""
        if isinstance(ann, cst.Subscript):
            ann = ann.value
        v = self.it.eval(ann, scope)
        return isinstance(v, QualRef) and v.qualname.split(".")[-1] == "Constexpr"

    def star_names(self, mod: str) -> list:
        if N.is_ts_module(mod):
            import importlib
            sub = mod.split("task_scheduling", 1)[-1] if mod.startswith("cutlass") else mod[len("ts_runtime"):]
            try:
                live = importlib.import_module("ts_runtime" + sub)
                return list(getattr(live, "__all__", []))
            except ImportError:
                return []
        return []

    def runtime_annotation(self, ann, scope) -> bool:
        """A @cute.jit parameter annotation that makes it a traced value."""
        if isinstance(ann, cst.Subscript):
            return False
        v = self.it.eval(ann, scope)
        if isinstance(v, DtypeVal):
            return True
        return isinstance(v, QualRef) and N.is_runtime_annotation(v.qualname)

    # ================================================================== generic hooks
    def getattr_hook(self, obj, name, node):
        from . import schedules as S
        if isinstance(obj, BuiltinNS):
            if name in obj.attrs:
                return obj.attrs[name]
            missing_api_attribute(self.it, obj.ts_name, _live_api_class(obj.ts_name), name, node)
            return UNKNOWN
        if isinstance(obj, ResourceProxy):
            return S.proxy_attr(self.it, obj, name, node)
        if isinstance(obj, DataFlowToken):
            if name == "variable":
                return obj.token.var
            return UNKNOWN
        if isinstance(obj, (LoopHandle, WtlHandle, BlockCM)):
            return S.handle_attr(self.it, obj, name, node)
        if isinstance(obj, ConfigVal):
            return obj.fields.get(name, UNKNOWN) if hasattr(obj, "fields") else UNKNOWN
        if isinstance(obj, CoopGroupVal):
            return {"agent": obj.agent, "size": obj.size}.get(name, UNKNOWN)
        if isinstance(obj, AllocationVal):
            return self._allocation_attr(obj, name)
        if isinstance(obj, AllocatorVal):
            return self._allocator_attr(obj, name, node)
        if isinstance(obj, TLVVal):
            return {"dtype": obj.dtype, "owner": obj.owner, "field_name": obj.field_name}.get(name, UNKNOWN)
        if isinstance(obj, TileSchedCfgVal):
            return obj.tile_scheduler_type if name == "tile_scheduler_type" else UNKNOWN
        if isinstance(obj, ArgParserVal):
            from .stdlib import _argparse_method
            return _argparse_method(obj, name)
        if isinstance(obj, TaskManagerVal):
            if isinstance(obj, InstanceVal) and (name in obj.attrs or _user_defined(obj.cls, name)):
                return NotImplemented        # the subclass's own attribute or method
            return self.tm_attr(obj, name)
        if isinstance(obj, (ScheduleVal, MemberRefVal)):
            if isinstance(obj, MemberRefVal):
                return self.it.getattr(obj.member, name, node)
            return UNKNOWN
        if isinstance(obj, ResourceObj) and name == "pipeline_group":
            return obj.group
        return NotImplemented

    def tm_attr(self, obj, name: str):
        """An attribute of a TaskManager (a `TaskManager(...)` value, or an instance of a
        user subclass reaching the base's: `super().setup_resources_and_tasks()`)."""
        from ts_runtime.task_manager import TaskManager as LiveTM
        live = getattr(LiveTM, name, None)
        tm_api = dict(live=live, live_method=True, live_what=f"TaskManager.{getattr(live, '__name__', name)}(...)")
        if name in ("setup_resources_and_tasks", "run"):   # TS902 / TS903 (rules/other.py)
            return _b(name, lambda i, a, k, c, _n=name, _tm=obj: self._tm_lifecycle(_tm, _n, c),
                      f"TaskManager.{name}", **tm_api)
        if name in ("get_marmaid_string_dependency_graph", "get_mermaid_string_dependency_graph"):
            return _b(name, lambda i, a, k, c: self._tm_mermaid(a, k, c), f"TaskManager.{name}", **tm_api)
        if name in ("print_and_verify", "validate"):
            return _b(name, lambda i, a, k, c: None, f"TaskManager.{name}", **tm_api)
        if name == "diagnostics":
            return []
        return UNKNOWN

    def missing_attr(self, obj, name, node):
        if isinstance(obj, ResourceObj) and obj.cls.is_sub("PipelineGroup") and not name.startswith("_"):
            members = self._members(obj)
            for m in members:
                if isinstance(m, ResourceObj) and m.attrs.get("name") == name:
                    return MemberRefVal(m, obj)
            self._unknown_group_member(obj, name, members, node)
        elif isinstance(obj, ResourceObj) and node is not None and \
                (self.it.captures or name in STANDARD_OPS) and _resource_lacks(self.it, obj, name):
            # in an @schedule body, any attribute; elsewhere, a pipeline operation (never
            # an attribute of a resource object, so never one set where ts-lint did not look)
            missing_resource_attribute(self.it, obj, name, node)
        return UNKNOWN

    def _unknown_group_member(self, obj, name, members, node):
        """TS474, when every member and the group's own attributes are known."""
        from ts_runtime.pipeline_group import unknown_member_message
        if node is None or not isinstance(members, list) or any(k.live is None and k.builtin is not None
                                                                 and k.builtin != "object" for k in obj.cls.mro):
            return
        if any(k.live is not None and hasattr(k.live, name) for k in obj.cls.mro):
            return
        names = [m.attrs.get("name") if isinstance(m, ResourceObj) else None for m in members]
        group_name = obj.attrs.get("name", "")
        if any(not isinstance(n, str) for n in names) or not isinstance(group_name, str):
            return
        self.it.ctx.report("TS474", unknown_member_message(group_name, name, names), self.it.rng(node))

    def setattr_hook(self, obj, name, value, node):
        return NotImplemented

    def call_hook(self, fn, args, kwargs, node):
        if isinstance(fn, BuiltinNS):
            if fn.live is not None:
                self.bind_api(fn.live, f"{fn.ts_name}(...)", args, kwargs, node)
            if fn.call is None:
                return UNKNOWN
            return fn.call(self.it, args, kwargs, node)
        if isinstance(fn, MemberRefVal):
            return UNKNOWN
        return NotImplemented

    def escape(self, args, kwargs):
        """Arguments given to code ts-lint does not run (an unknown callee, a function of a
        module it does not read): a list, dict or set among them (or inside them, or held
        by an object among them) may be changed there, so it is marked incomplete: no check
        takes a registry that `register_all(ROLES)` fills for an empty one."""
        seen = set()

        def visit(v, depth):
            if depth > 2 or id(v) in seen:
                return
            if isinstance(v, (list, dict, set)):
                seen.add(id(v))
                self.taint(v)
                for x in (list(v.values()) if isinstance(v, dict) else list(v)):
                    visit(x, depth + 1)
            elif isinstance(v, tuple):
                seen.add(id(v))
                for x in v:
                    visit(x, depth + 1)
            elif isinstance(v, ResourceObj):
                v.lost_attrs = True      # the code may set attributes on it (TS963 then stays silent)
            elif type(v) is InstanceVal and v.cls.builtin is None:
                seen.add(id(v))
                for x in list(v.attrs.values()):
                    visit(x, depth + 1)
        for v in list(args) + list(kwargs.values()):
            visit(v, 0)

    def call_qualref(self, q: QualRef, args, kwargs, node):
        if q.qualname.startswith("cutlass.cute.arch."):
            return RUNTIME
        if q.qualname.startswith("cutlass.experimental.primitives.") and q.qualname.count(".") == 3 \
                and q.qualname.rsplit(".", 1)[-1][:1].islower() and self.it.frame is not None \
                and getattr(self.it.frame.func, "is_jit", False):
            # a device primitive called in JIT code (`prims.elect_sync()`,
            # `prims.cluster_ctarank()`): a run-time DSL value, so an `if` on it is a branch
            # the DSL traces both ways
            self.escape(args, kwargs)
            return RUNTIME
        if not q.qualname.startswith(_PURE_PREFIXES):
            self.escape(args, kwargs)
        if not _library(q.qualname) and node is not None:
            self.it.unknown(node, f"`{q.qualname}` is imported from a module ts-lint does not read; "
                            "the result of this call is unknown", "import")
        return UNKNOWN

    def enter_block(self, cm, node):
        from . import schedules as S
        return S.enter_block(self.it, cm, node)

    def exit_block(self, cm, node):
        from . import schedules as S
        return S.exit_block(self.it, cm, node)

    def call_schedule(self, sf, args, kwargs, node):
        from .schedules import capture_schedule
        return capture_schedule(self.it, sf, args, kwargs, node)

    # ================================================================== decorators
    def _schedule_decorator(self, it, args, kwargs, call):
        if len(args) == 1 and not kwargs:
            if _fresh_partial(args[0], call):
                # made in this very call: nothing gave it a `__name__` (TS138 when called)
                return _b("schedule()", self._nameless_schedule, "schedule()")
            sf = schedule_target(args[0])
            if sf is not None:
                return sf
        return UNKNOWN

    def _nameless_schedule(self, it, args, kwargs, call):
        """TS138: calling `schedule(functools.partial(...))`'s result, as the runtime's
        `traced` raises (the reference's AttributeError reading the partial's __name__)."""
        from ts_runtime.schedule_builder import nameless_schedule_message
        from .frames import UserRaise
        if call is None or it._try_depth:
            raise UserRaise(call)
        self.ctx.report("TS138", nameless_schedule_message("functools.partial"), self._r(call))
        raise UserRaise(call, reported=True)

    def _work_decorator(self, side: str):
        def decorator(it, args, kwargs, call):
            fn = args[0] if args else kwargs.get("method")
            work_attrs = kwargs.get("work_attrs", E.WorkAttr.NONE)
            returns = kwargs.get("returns")
            rng = it.rng(call) if call is not None else None
            failed = False
            if fn is not None and not self._callable(fn):
                self.ctx.report("TS231", f"@{side}_work must decorate a method directly", rng)
                return UNKNOWN
            unknown = False
            if work_attrs is UNKNOWN:
                unknown = True
            elif not isinstance(work_attrs, E.WorkAttr):
                self.ctx.report("TS232", f"work_attrs must be a WorkAttr value, got {work_attrs!r}", rng)
                failed = True
            elif not E.WorkAttr.is_valid_combination(work_attrs):
                self.ctx.report("TS232", f"unsupported WorkAttr combination: {work_attrs!r}", rng)
                failed = True
            if side == "producer" and returns is not None and returns is not UNKNOWN:
                self.ctx.report("TS313", "returns= is only supported on @consumer_work", rng)
                failed = True

            def wrap(i, a, k, c):
                f = a[0] if a else UNKNOWN
                return self._make_work(side, f, work_attrs, returns, failed, unknown)
            if fn is not None:
                return wrap(it, [fn], {}, call)
            return _b(f"{side}_work()", wrap, f"{side}_work()")
        return decorator

    @staticmethod
    def _callable(v) -> bool:
        if isinstance(v, (FuncVal, BuiltinFunc, BoundMethod, ClassVal, WorkMethodVal, ScheduleFuncVal)):
            return True
        if is_abstract(v) or isinstance(v, QualRef):
            return True
        return False

    def _make_work(self, side, f, work_attrs, returns, failed, unknown):
        from ts_runtime.model.work_signature import RawParam, analyze_params, normalize_returns
        from .interpreter import param_list
        it = self.it
        if isinstance(f, WorkMethodVal):
            f = f.func
        if not isinstance(f, FuncVal) or isinstance(f.node, cst.Lambda):
            if not self._callable(f):
                self.ctx.report("TS231", f"@{side}_work must decorate a method directly", None)
            return WorkMethodVal(f, side, unknown=True)
        node = f.node
        line = it.ctx.pos.line(f.first_decorator if f.first_decorator is not None else node)
        rng = SourceRange(it.ctx.pos.path_of(node), line)
        raw = []
        for p, kind in param_list(node.params):
            ann = p.annotation.annotation if p.annotation is not None else None
            raw.append(RawParam(p.name.value, kind, ann is not None and "Constexpr" in it.text(ann),
                                p.default is not None))
        specs, findings = analyze_params(f.name, raw)
        ret_list = []
        if returns is UNKNOWN or (isinstance(returns, (list, tuple)) and any(is_abstract(r) for r in returns)):
            unknown = True
        else:
            fieldmap = {}
            conv = returns
            if isinstance(returns, (list, tuple)):
                conv = []
                for r in returns:
                    if isinstance(r, FieldVal):
                        fo = dataclasses.field()
                        fieldmap[id(fo)] = r
                        conv.append(fo)
                    else:
                        conv.append(r)
                conv = type(returns)(conv) if isinstance(returns, tuple) else conv
            elif isinstance(returns, FieldVal):
                conv = dataclasses.field()
                fieldmap[id(conv)] = returns
            out, rfind = normalize_returns(f.name, conv)
            findings += rfind
            ret_list = [fieldmap.get(id(x), x) for x in out]
        if side == "consumer" and _returns_dict_literal(it, node):
            findings.append(("TS315", ValueError, f"consumer work '{f.name}' must not return a dict; "
                             "declare returns=(...) and return a tuple"))
        for code, _exc, msg in findings[:1]:          # the decorator raises the first one
            self.ctx.report(code, msg, rng)
        if unknown:
            stage = None
        else:
            aux = isinstance(work_attrs, E.WorkAttr) and work_attrs.is_auxiliary()
            if side == "consumer":
                stage = E.ScheduleStage.ConsumerAuxWork if aux else E.ScheduleStage.ConsumerWork
            else:
                stage = E.ScheduleStage.ProducerAuxWork if aux else E.ScheduleStage.ProducerWork
        from ts_runtime.model.work_signature import stage_info_problem
        return WorkMethodVal(f, side, stage, ret_list, specs, line, failed or bool(findings), unknown,
                             stage_info_problem(raw))


    def call_arguments(self, call, positional_names=()) -> dict:
        """locate.call_arguments: {name: range of the argument expression, "=kw": keyword range}."""
        out = {}
        if not isinstance(call, cst.Call):
            return out
        pos = [a for a in call.args if a.keyword is None and a.star != "**"]
        for name, a in zip(positional_names, pos):
            out[name] = self.it.rng(a.value)
        for a in call.args:
            if a.keyword is not None:
                out[a.keyword.value] = self.it.rng(a.value)
                out["=" + a.keyword.value] = self.it.rng(a)
        return out


def _fresh_partial(v, call) -> bool:
    """Whether `v` is a `functools.partial` object made by the argument expression of
    `call` itself (`schedule(functools.partial(body, 8))`): nothing can have given it a
    `__name__`."""
    if not isinstance(v, BuiltinFunc) or v.qualname != "functools.partial" or not isinstance(call, cst.Call):
        return False
    if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        return False
    return getattr(v, "made_at", None) is call.args[0].value


def _returns_dict_literal(it, node) -> bool:
    """TS315: a `return {...}` anywhere in the function (the runtime scans its source with ast)."""
    import ast
    src = it.ctx.src
    fn = src.ast_function(node) if src is not None else None
    if fn is not None:
        return any(isinstance(n, ast.Return) and isinstance(n.value, (ast.Dict, ast.DictComp))
                   for n in ast.walk(fn))
    if src is not None:
        node = src.full(node)
    found = []

    class V(cst.CSTVisitor):
        def visit_Return(self, n):
            if isinstance(n.value, (cst.Dict, cst.DictComp)):
                found.append(n)
    node.visit(V())
    return bool(found)


# modules whose functions do not change the Python containers they are given
_PURE_PREFIXES = ("cutlass.", "logging.", "warnings.", "json.", "math.", "time.", "pprint.",
                  "textwrap.", "re.", "os.path.", "os.environ.", "inspect.", "typing.")


def schedule_target(v):
    """`schedule(v)` for a callable whose body the interpreter can capture: a user function,
    a method bound to its object (`schedule(obj.method)`, `schedule(getattr(obj, name))`),
    a `functools.partial` of either; else None."""
    if isinstance(v, FuncVal) and v.kind != "property":
        return ScheduleFuncVal(v, source=v)
    if isinstance(v, BoundMethod) and isinstance(v.func, FuncVal):
        return ScheduleFuncVal(v.func, pre=(v.self_val,), source=v)
    from .values import PartialVal
    if isinstance(v, PartialVal):
        inner = schedule_target(v.target)
        if inner is not None:
            return ScheduleFuncVal(inner.func, pre=inner.pre + tuple(v.pre),
                                   pre_kw={**inner.pre_kw, **v.pre_kw}, source=v)
    return None


def apply_decorators(it, func: FuncVal, decorators, scope):
    """Applies a def's decorators bottom-up (unknown decorators leave the function as is)."""
    value = func
    for dec in reversed(decorators):
        d = it.eval(dec.decorator, scope)
        if isinstance(d, (BuiltinFunc, FuncVal, BoundMethod)) or isinstance(d, ClassVal):
            r = it.call(d, [value], {}, dec.decorator)
            if r is UNKNOWN and isinstance(d, FuncVal):
                continue     # a user decorator we could not follow: keep the function
            value = r
        # anything else (external decorator): keep the function
    return value


_EPI_PARAMS = ("cta_tile_m", "cta_tile_n", "use_2cta", "elem_width_d", "elem_width_c", "d_is_m_major",
               "c_is_m_major", "tmem_warp_shape_mn")


def _epilogue_tile_size(it, args, kwargs, call):
    """`cutlass.utils.blackwell_helpers.compute_epilogue_tile_size(...)`: plain Python
    arithmetic on compile-time ints (its docstring states the algorithm), modelled here so a
    schedule loop over the epilogue subtiles has a known trip count. Any argument that is
    not a known value gives UNKNOWN.

    Warp grid (2, 2) for a 2-CTA MMA with a 64-row tile, else (4, 1) (or the given
    `tmem_warp_shape_mn`); tile_m = min(cta_tile_m, 32 * warp_m); the N target is 4096 (8192
    for 4-bit elements) elements / tile_m without a source C, otherwise 16/32/64 by element
    width and CTA shape, halved until it divides cta_tile_n; N floors from the TMA store
    alignment (8 * warp_n M-major, 128 / width * warp_n N-major, 128 * warp_n for 6-bit);
    tile_n = min(cta_tile_n, max(target, floors)), or cta_tile_n if that does not divide it.
    """
    vals = dict(zip(_EPI_PARAMS, args))
    vals.update({k: v for k, v in kwargs.items() if k in _EPI_PARAMS})
    vals.setdefault("elem_width_c", None)
    vals.setdefault("d_is_m_major", True)
    vals.setdefault("c_is_m_major", True)
    vals.setdefault("tmem_warp_shape_mn", None)
    if len(args) > len(_EPI_PARAMS) or set(kwargs) - set(_EPI_PARAMS) or any(
            p not in vals for p in _EPI_PARAMS[:4]):
        return UNKNOWN

    def known_int(x):
        return isinstance(x, int) and not isinstance(x, bool)

    m, n, two_cta, wd = (vals[p] for p in _EPI_PARAMS[:4])
    wc, d_m_major, c_m_major, warps = (vals[p] for p in _EPI_PARAMS[4:])
    if not (known_int(m) and known_int(n) and known_int(wd) and m > 0 and n > 0 and wd > 0):
        return UNKNOWN
    if not all(isinstance(x, bool) or known_int(x) for x in (two_cta, d_m_major, c_m_major)):
        return UNKNOWN
    if wc is not None and not (known_int(wc) and wc > 0):
        return UNKNOWN
    if warps is None:
        warp_m, warp_n = (2, 2) if (m == 64 and two_cta) else (4, 1)
    elif isinstance(warps, tuple) and len(warps) == 2 and all(known_int(w) and w > 0 for w in warps):
        warp_m, warp_n = warps
    else:
        return UNKNOWN
    bits = wd if wc is None else max(wd, wc)
    tile_m = min(m, 32 * warp_m)
    if wc is None:
        target = (8192 if bits == 4 else 4096) // tile_m
    elif bits == 32:
        target = 16 if (m > 64 and n <= 128) else 32
    elif bits == 16:
        target = 32 if n <= 128 else 64
    else:
        target = 64
    while target and n % target:
        target //= 2
    if not target:
        return UNKNOWN

    def floor_for(width, m_major):
        if m_major:
            return 8 * warp_n
        return 128 * warp_n if width == 6 else 128 // width * warp_n
    floor_d = floor_for(wd, d_m_major)
    floor_c = 8 * warp_n if (wc is None or c_m_major) else floor_for(wc, False)
    tile_n = min(n, max(target, floor_c, floor_d))
    if tile_n <= 0 or n % tile_n:
        tile_n = n
    return (tile_m, tile_n)


def _live_api_class(ts_name: str):
    """The ts_runtime class a BuiltinNS stands for (its attributes are the reference's)."""
    from ts_runtime import resources as R
    return getattr(R, ts_name, None)


# The reference's public MemoryResource attributes that ts_runtime's class does not have
# and workbody.FRAMEWORK_NAMES does not list (tests/test_api_surface.py checks, on the
# reference, that every name of its MemoryResource is ts_runtime's or among these two).
_REFERENCE_RESOURCE_NAMES = frozenset({"create_consumer_variables", "create_producer_variables", "get_consumer_var",
                                       "get_producer_var", "pipeline_group", "set_consumer_var"})


def reference_resource_names() -> frozenset:
    """Names a MemoryResource has under the reference beyond ts_runtime's class."""
    from .workbody import FRAMEWORK_NAMES
    return FRAMEWORK_NAMES | _REFERENCE_RESOURCE_NAMES


def _resource_lacks(it, obj, name: str) -> bool:
    """Whether the resource object `obj` (a direct MemoryResource subclass instance whose
    every class ts-lint has read) certainly has no attribute `name`: not set on it, not in
    its classes, not on MemoryResource under either implementation, no class that could
    make attributes up (`__getattr__`, a metaclass, an unmodelled decorator), not given to
    code ts-lint does not run nor to a `setattr` of a name it does not know (`lost_attrs`),
    and no store of that name in the user's files (it may run where ts-lint did not look).
    A `setattr` of a computed name elsewhere in the file does not stop the check, unlike
    TS966's (`_may_set(dynamic=False)`): the object's own such calls are `lost_attrs`."""
    if name.startswith("_") or obj.uncertain is not None or obj.lost_init is not None or obj.lost_attrs or \
            name in obj.attrs:
        return False
    live = []
    for k in obj.cls.mro:
        if k.live is not None:
            live.append(k.live)
        elif k.builtin is not None and k.builtin != "object":
            return False                 # a class ts-lint does not read
        elif k.builtin is None and ("__getattr__" in k.namespace or "__getattribute__" in k.namespace or
                                    k.metaclass is not None or k.opaque_init or k.decorate_error):
            return False
    from ts_runtime.resources import MemoryResource
    if live != [MemoryResource] or name in reference_resource_names() or hasattr(MemoryResource, name) or \
            name in {f.name for f in dataclasses.fields(MemoryResource)}:
        return False
    from .workbody import _may_set, _texts
    texts = _texts(it.ctx)
    return texts is not None and not any(_may_set(t, name, dynamic=False) for t in texts)


def missing_resource_attribute(it, obj, name: str, node) -> None:
    """TS963 for `res.name` where `res` is a resource object itself, not a schedule proxy
    (in an @schedule body, read from an enclosing scope instead of a parameter; or a
    pipeline operation called outside any schedule body) and its class has no attribute
    `name` (`out.try_acquire()`): Python raises AttributeError there, under either
    implementation, and the kernel is never built. The runtime reports the schedule-body
    case too (schedule_builder.captured_resource_finding), with the same text."""
    from ts_runtime.api_calls import resource_attribute_message
    it.certain_error(node, "TS963", resource_attribute_message(obj.cls.name, name, obj.attrs.get("name"),
                                                               bool(it.captures)))


def direct_work_call(it, obj, wm, args, kwargs, node) -> None:
    """TS907 for a work method called on a resource object itself, not through a schedule
    proxy: in an @schedule body on a resource read from an enclosing scope instead of a
    parameter, or outside any schedule body (a statement moved out of its schedule).
    Python calls the method itself, and without a `stage_info` the call does not bind
    (`SmemAB.tma_load() missing 1 required positional argument: 'stage_info'`), under
    either implementation (with a `@cute.jit` under the work decorator, the DSL binds the
    call as Python does). Only for a method with no other decorator (one may bind
    otherwise) and a call without `*` / `**` unpacking."""
    from .workbody import _dsl_decorator, _signature_of
    func = wm.func
    if not isinstance(func, FuncVal):
        return
    decorators = func.node.decorators
    if not decorators or len(decorators) > 2 or len(decorators) == 2 and not _dsl_decorator(decorators[1]):
        return
    _bind_direct(it, obj, func.name, _signature_of(func), args, kwargs, node)


def direct_live_work_call(it, fn, args, kwargs, node) -> None:
    """`direct_work_call` for a work method of a ts API resource class
    (`pdl_launch.launch_griddep()` outside its schedule): the method is ts_runtime's,
    whose signature is the reference's."""
    import inspect
    obj = fn.self_val
    for k in obj.cls.mro:
        m = getattr(k.live, fn.name, None) if k.live is not None else None
        if m is not None:
            if getattr(m, "__ts_work__", None) is None:
                return
            try:
                sig = inspect.signature(m)
            except (TypeError, ValueError):
                return
            _bind_direct(it, obj, fn.name, sig, args, kwargs, node)
            return


def _bind_direct(it, obj, name: str, sig, args, kwargs, node) -> None:
    """The runtime's work wrapper binds the same way and raises the same TS907
    (ts_runtime/resources.py, `api_calls.direct_work_message`)."""
    if sig is None or node is None or any(getattr(a, "star", "") for a in getattr(node, "args", ())):
        return
    try:
        sig.bind(obj, *args, **kwargs)
    except TypeError as exc:
        from ts_runtime.api_calls import direct_work_message
        it.certain_error(node, "TS907", direct_work_message(obj.cls.name, name, str(exc), obj.attrs.get("name"),
                                                            bool(it.captures)))


def missing_api_attribute(it, owner: str, live, name: str, node) -> None:
    """TS963 when `owner.name` names nothing on the ts API class or enum `live` (a
    misspelt factory, `PipelineConfig.create_async_pipeline_cfg`; an enum member that does
    not exist): Python raises AttributeError there. ts_runtime's classes have the
    reference's public attributes (tests/test_api_surface.py); private names are never
    judged."""
    if live is None or node is None or name.startswith("_") or hasattr(live, name):
        return
    from difflib import get_close_matches
    public = [n for n in dir(live) if not n.startswith("_")]
    close = get_close_matches(name, public, n=1)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    fix = None
    if close and isinstance(node, cst.Attribute):
        from ts_runtime.diagnostics import Edit, Fix
        fix = Fix(f"Replace with `{close[0]}`", (Edit(it.rng(node.attr), close[0]),), "unsafe")
    it.certain_error(node, "TS963", f"type object '{owner}' has no attribute '{name}'{hint}: Python raises "
                     "AttributeError here", fix)


# plain Python constants of `cutlass.cute.arch` (everything else there builds IR: RUNTIME)
_ARCH_CONSTANTS = {f"cutlass.cute.arch.{k}": v for k, v in {
    "WARP_SIZE": 32, "WARPS_PER_WARPGROUP": 4, "THREADS_PER_WARPGROUP": 128, "FULL_MASK": 0xFFFFFFFF,
    "SM100_TMEM_CAPACITY_COLUMNS": 512, "SM100_TMEM_MIN_ALLOC_COLUMNS": 32,
}.items()}

# shared memory per block (bytes) by compute capability, as `get_smem_capacity_in_bytes`
# gives it; without an argument it is the compile target's (sm_100, the TaskManager default)
_SMEM_CAPACITY = {"sm_90": 232448, "sm_100": 232448, "sm_103": 232448, "sm_120": 101376}


def _smem_capacity(it, args, kwargs, call):
    """`cutlass.memory.get_smem_capacity_in_bytes(cc=None)`."""
    cc = args[0] if args else kwargs.get("compute_capability")
    if cc is None:
        return _SMEM_CAPACITY["sm_100"]
    return _SMEM_CAPACITY.get(cc, UNKNOWN) if isinstance(cc, str) else UNKNOWN


# barrier primitives whose thread / arrival count PTX constrains: qualname -> (parameter
# name, its position, what the count is, check, the constraint in words)
_WARP_MULTIPLE = (lambda n: n > 0 and n % 32 == 0, "a positive multiple of 32 (the warp size)")
_MBAR_COUNT = (lambda n: 1 <= n <= (1 << 20) - 1, "in [1, 1048575]")
_BARRIER_COUNTS = {
    "cutlass.experimental.primitives.barrier_cta_sync": ("thread_count", None, "thread count", *_WARP_MULTIPLE),
    "cutlass.experimental.primitives.barrier_cta_sync_aligned": ("thread_count", None, "thread count",
                                                                 *_WARP_MULTIPLE),
    "cutlass.experimental.primitives.barrier_cta_arrive": ("thread_count", None, "thread count", *_WARP_MULTIPLE),
    "cutlass.experimental.primitives.barrier_cta_arrive_aligned": ("thread_count", None, "thread count",
                                                                   *_WARP_MULTIPLE),
    "cutlass.cute.arch.barrier": ("number_of_threads", None, "thread count", *_WARP_MULTIPLE),
    "cutlass.cute.arch.barrier_arrive": ("number_of_threads", None, "thread count", *_WARP_MULTIPLE),
    "cutlass.experimental.primitives.mbarrier_init": ("count", 1, "arrival count", *_MBAR_COUNT),
    "cutlass.cute.arch.mbarrier_init": ("cnt", 1, "arrival count", *_MBAR_COUNT),
}


def barrier_count_param(qualname: str) -> Optional[tuple]:
    """(parameter name, position or None) of a barrier primitive's count, or None."""
    spec = _BARRIER_COUNTS.get(qualname)
    return None if spec is None else (spec[0], spec[1])


def barrier_count_problem(qualname: str, n: int) -> Optional[str]:
    """TS969's message for a count `n` of the barrier primitive `qualname` that PTX
    rejects, or None."""
    _param, _pos, what, ok, words = _BARRIER_COUNTS[qualname]
    if ok(n):
        return None
    short = qualname.rsplit(".", 1)[-1]
    return f"{short}(...) gets {what} {n}, which must be {words}: the CuTe DSL raises ValueError compiling the kernel"


def _barrier_count_check(qualname: str):
    """A named-barrier sync / arrive or an mbarrier init whose count is a known int that PTX
    rejects (`bar.sync` counts threads in whole warps; `mbarrier.init` takes 1 to 2^20 - 1
    arrivals): the DSL raises ValueError while it compiles the kernel (TS969), where the
    run certainly gets there (`Interpreter.certain_error`: not under a `try`, not with
    assumed arguments; not after a branch that may have returned) while the kernel is
    built (`Interpreter.in_kernel_build`). Also in the `__main__` block's run: a count is
    an int whatever the command line, so argparse defaults do not make it uncertain the
    way they do the operand types of TS964. The call itself is run-time code: RUNTIME."""
    param, pos, what, ok, words = _BARRIER_COUNTS[qualname]
    short = qualname.rsplit(".", 1)[-1]

    def check(it, args, kwargs, call):
        n = kwargs.get(param, args[pos] if pos is not None and len(args) > pos else None)
        if call is not None and is_static_int(n) and not isinstance(n, bool) and not ok(n) \
                and it.in_kernel_build() and not any(f.maybe_returned for f in it.frames):
            rng = call
            for a in getattr(call, "args", ()):
                kw = getattr(a, "keyword", None)
                if kw is not None and kw.value == param or kw is None and pos is not None and \
                        call.args.index(a) == pos:
                    rng = a.value
            it.certain_error(rng, "TS969", barrier_count_problem(qualname, n))
        return RUNTIME
    return check


def _compile_without_jit(it, fn: FuncVal, call: cst.Call) -> None:
    """TS972: `cute.compile(f, ...)` of a function defined without any decorator. The CuTe
    DSL compiles only a @cute.jit (or @cute.kernel) function and raises DSLUserCodeError
    CALL_MISSING_JIT_DECORATOR before tracing anything; the run stops there, as the
    exception would stop it (`Interpreter.certain_error`'s guards apply). A function with
    any decorator is not judged (ts-lint may not know what the decorator returns). The
    fix is TS973's (`workbody.jit_fix`): `@cute.jit` above the def."""
    from ts_runtime.diagnostics import Related
    from .workbody import jit_fix
    try:
        related = [Related(it.rng(fn.node.name), f"'{fn.name}' is defined here, without @cute.jit")]
    except Exception:          # a def in another module: no range here
        related = None
    fix = jit_fix(it, fn)
    it.certain_error(call.args[0].value, "TS972",
                     f"'{fn.name}' is passed to cute.compile() but is not a @cute.jit function: the CuTe DSL "
                     "raises DSLUserCodeError (CALL_MISSING_JIT_DECORATOR: Function must be decorated with "
                     "@cute.jit before passing it to cute.compile()); decorate it with @cute.jit",
                     fix=fix, related=related)


def _range_constexpr(it, args, kwargs, call):
    """`cutlass.range_constexpr(...)`: a `range` the CuTe DSL's preprocessor unrolls, which
    it does only in the source of a @cute.jit / @cute.kernel function (and the functions
    defined inside one). Called anywhere else (a schedule or helper at module level, a
    plain method), the DSL raises "range_constexpr should be preprocessed by preprocessor"
    (TS967), with the guards of `Interpreter.type_error` (the run certainly gets there),
    while the kernel is built (`Interpreter.in_kernel_build`)."""
    from .pybuiltins import _range
    from .statements import _rewritten_by_dsl
    fn = it.frame.func if it.frame is not None else None
    if call is not None and not getattr(fn, "is_jit", False) and not _rewritten_by_dsl(fn) \
            and not any(f.maybe_returned for f in it.frames) \
            and it.in_kernel_build():
        where = f"'{fn.name}'" if fn is not None and getattr(fn, "name", None) else "the module body"
        it.certain_error(call, "TS967", range_constexpr_message(where))
    return _range(it, args, kwargs, call)


def range_constexpr_message(where: str) -> str:
    """TS967's message (interpreted code here, work methods in workbody.py)."""
    return (f"cutlass.range_constexpr(...) runs in {where}, which is not a @cute.jit / @cute.kernel function "
            "nor defined inside one, so the CuTe DSL never unrolls it and raises DSLRuntimeError "
            "('range_constexpr should be preprocessed by preprocessor'); define the function inside the "
            "@cute.kernel / @cute.jit function or decorate it with @cute.jit, or use a plain range(...)")


# TS modules ts-lint may import (ts_runtime's, without cutlass) to judge a `from ... import`
_LIGHT_MODULES = ("", ".resources", ".task", ".task_manager", ".memory", ".pipeline_group", ".enums",
                  ".schedule_builder", ".pipeline", ".diagnostics")
# the reference's internal modules that ts_runtime does not have: they exist, never judged
_REFERENCE_ONLY = (".exhaustive_checker", ".schedule_legacy_adapter")


def _ts_target(mod: str) -> Optional[tuple]:
    """(the TS package `mod` is under, the rest of its dotted name) or None."""
    for pkg in N.TS_PACKAGES:
        if mod == pkg or mod.startswith(pkg + "."):
            return pkg, mod[len(pkg):]
    return None


def ts_import_error(mod: str, name: Optional[str]) -> Optional[tuple]:
    """(message, closest name or None) of the ImportError that `from mod import name`
    (`import mod` when `name` is None) raises where `mod` is a TS package or one of its
    modules and the name or module does not exist; None when it imports, or when ts-lint
    does not judge it. ts_runtime's modules have the reference's public names and
    submodules (plus ts's own: those are not judged under the reference's prefix), so they
    stand for both packages; only modules that import without cutlass are looked into."""
    import importlib
    import importlib.util
    from difflib import get_close_matches
    got = _ts_target(mod)
    if got is None:
        return _misspelt_reference_module(mod, name)
    pkg, rest = got
    if rest not in _LIGHT_MODULES:
        if rest.count(".") == 1 and rest not in _REFERENCE_ONLY and \
                importlib.util.find_spec("ts_runtime" + rest) is None:
            close = get_close_matches(rest, _LIGHT_MODULES + _REFERENCE_ONLY, n=1)
            hint = f"; did you mean '{pkg}{close[0]}'?" if close else ""
            return f"No module named '{mod}'{hint}: Python raises ModuleNotFoundError here", None
        return None
    if name is None:
        return None
    try:
        live = importlib.import_module("ts_runtime" + rest)
    except ImportError:
        return None
    if hasattr(live, name) or (not rest and importlib.util.find_spec("ts_runtime." + name) is not None):
        return None
    where = None
    for other in _LIGHT_MODULES:
        if other == rest:
            continue
        try:
            obj = getattr(importlib.import_module("ts_runtime" + other), name, None)
        except ImportError:
            continue
        if obj is not None and getattr(obj, "__module__", None) == "ts_runtime" + other:
            where = pkg + other
            break
    close = None if where else (get_close_matches(name, [n for n in dir(live) if not n.startswith("_")], n=1)
                                or [None])[0]
    hint = f"; it is defined in '{where}'" if where else (f"; did you mean '{close}'?" if close else "")
    return f"cannot import name '{name}' from '{mod}'{hint}: Python raises ImportError here", close


_REFERENCE = N.TS_PACKAGES[1]
_REFERENCE_MODULES = tuple(_REFERENCE + m for m in _LIGHT_MODULES + _REFERENCE_ONLY)


def _misspelt_reference_module(mod: str, name: Optional[str]) -> Optional[tuple]:
    """The ModuleNotFoundError of a misspelt path to the reference's package
    (`cutlass.experimental.task_schedulin.resources`, `cutllass.experimental...`): a
    module under `cutlass` one or two letters away from one of the package's modules.
    Nothing else under `cutlass` is judged: ts-lint does not import cutlass, so it cannot
    tell which of its other modules exist."""
    from difflib import get_close_matches
    if not mod.startswith("cut"):
        return None
    if mod == "cutlass.experimental" and name is not None:
        if name != "task_scheduling" and get_close_matches(name, ["task_scheduling"], n=1, cutoff=0.85):
            return (f"cannot import name '{name}' from 'cutlass.experimental'; did you mean 'task_scheduling'?: "
                    f"Python raises ImportError here", None)
        return None
    close = get_close_matches(mod, _REFERENCE_MODULES, n=1, cutoff=0.93)
    if not close:
        return None
    return (f"No module named '{mod}'; did you mean '{close[0]}'?: Python raises ModuleNotFoundError here",
            None)


def _user_defined(cls, name: str) -> bool:
    """Whether a class of `cls`'s MRO that the program defines has `name`."""
    return any(k.builtin is None and name in k.namespace for k in cls.mro)
