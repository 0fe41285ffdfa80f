"""Task(...) and TaskManager(...): the TaskModel (task_checks, lowering), the KernelModel
(graph edges with the ranges of locate.dict_entries, options, allocators) and the
manager-phase rules (rules.engine), plus the manager lifecycle (TS902-TS904)."""
from __future__ import annotations

import libcst as cst

from ts_runtime.model.kernel import GraphEdge, KernelModel, ManagerOptions, TaskModel
from ts_runtime.model.values import is_static_int

from .common import WorkMethodVal, _Abort, _signature_bind, _static
from .values import (
    AllocatorVal, BoundMethod, FuncVal, ResourceObj, ScheduleFuncVal, ScheduleVal, TaskManagerObj, TaskManagerVal,
    TaskObj, UNKNOWN,
)


def _not_a_schedule(v) -> bool:
    """A `schedule=` value that certainly is no captured schedule (no `schedule_list` under
    the reference): the @schedule function itself, a plain function, or plain data. A
    function whose def has a decorator ts-lint may have taken for the identity (another
    decorator than `@schedule`) is not judged."""
    def plain_def(f, allowed: int) -> bool:
        return type(f) is FuncVal and len(getattr(f.node, "decorators", ())) <= allowed

    if isinstance(v, ScheduleFuncVal):
        return plain_def(v.func, 1)
    if type(v) is FuncVal:
        return v.kind == "function" and plain_def(v, 0)
    if type(v) is BoundMethod:
        return plain_def(v.func, 0) and v.func.kind == "function"
    return type(v) in (bool, int, float, str, bytes, list, tuple, dict, set, frozenset, range)


def _work_calls(kernel, objects):
    """(entry, resource object, class that defines the method, work method) of each work
    call of the kernel's schedules, in the order the kernel's `tm.run()` traces them: the
    TaskManager's task order, then each schedule's order (head, domain-loop body, tail)."""
    for t in kernel.tasks:
        for e in (t.lowered.entries if t.lowered is not None else ()):
            o = objects.get(e.resource)
            if not e.label or not e.stage.is_work or o is None:
                continue
            owner, v = o.cls.lookup(e.label)
            if isinstance(v, WorkMethodVal):
                yield e, o, owner, v


class KernelMixin:
    # ================================================================== TaskManager lifecycle
    def _tm_lifecycle(self, tm, name, call):
        """TS902 (second setup) / TS903 (run before setup), in program order."""
        if getattr(tm, "setup_unknown", False):
            return None     # a setup call under an unresolved condition (statements.skip)
        if name == "setup_resources_and_tasks":
            if getattr(tm, "setup_done", False):
                self.ctx.report("TS902", "setup_resources_and_tasks must be called exactly once", self._r(call))
            else:
                self._setup_group_barriers(tm)
            tm.setup_done = True
        elif not getattr(tm, "setup_done", False):
            self.ctx.report("TS903", "setup_resources_and_tasks must be called before run", self._r(call))
        return None

    def _setup_group_barriers(self, tm):
        """TS473 at setup: without an SmemAllocator on the manager no PipelineGroup gets its
        barrier storage (the reference's `create()` fails; with an allocator the manager rule
        checks the registration). Only groups without an explicit `pipeline_config` (which
        could carry a `barrier_ptr`) are reported."""
        kernel = getattr(tm, "kernel", None)
        objects = getattr(tm, "objects", None)
        if kernel is None or objects is None or getattr(kernel, "_ts_skipped", None) \
                or kernel.smem_allocator is not None or getattr(tm, "smem_allocator_given", False):
            return
        for rid, r in kernel.resources.items():
            obj = objects.get(rid)
            if r.is_group and obj is not None and obj.attrs.get("pipeline_config", UNKNOWN) is None:
                self.ctx.report("TS473", f"PipelineGroup '{r.label}' barrier_ptr not set: register the group with "
                                "SmemAllocator.add_pipeline_group() and pass the allocator to the TaskManager "
                                "(smem_allocator=) before setup_resources_and_tasks() creates its barriers",
                                r.range)

    def _tm_mermaid(self, args, kwargs, call):
        direction = args[0] if args else kwargs.get("direction", "TD")
        if direction == "":
            self.ctx.report("TS904", "direction must be a non-empty Mermaid flowchart direction (e.g. 'TD' or "
                            "'LR')", self._r(call))
        return UNKNOWN

    # ================================================================== Task
    def _task_init(self, it, args, kwargs, call):
        from ts_runtime.model.lower import lower
        from ts_runtime.model.task_checks import check_task_fields
        task = args[0]
        import inspect
        from ts_runtime.task import Task as LiveTask
        bound = _signature_bind(LiveTask.__init__, [None] + list(args[1:]), kwargs)
        if bound is None:
            task.ok, task.reason = False, "Task(...) arguments do not match its signature"
            self._unbound_call("Task(...)", LiveTask.__init__, [None] + list(args[1:]), kwargs, call)
            return None
        # placed where the object is made (a subclass's super().__init__ call is shared by
        # all its instances), as the runtime's construction_range
        rng = self._r(task.node if task.node is not None else call)
        name = bound["name"]
        for k in ("name", "src_resources", "dst_resources", "warp_idx", "num_warps", "num_registers",
                  "run_only_on_cta_id", "schedule"):
            task.attrs[k] = bound[k]
        task.attrs["warp_start"] = bound["warp_idx"]
        arg_ranges = self.call_arguments(call, ("src_resources", "dst_resources", "warp_idx", "num_warps"))
        reasons = []

        def res_list(key):
            v = bound[key]
            if v is None:
                return []
            if isinstance(v, ResourceObj) or type(v) in (int, float, bool):
                # `src_resources=smem`: the runtime raises TS140 (Python: not iterable)
                from ts_runtime.task import resource_list_message
                got = v.cls.name if isinstance(v, ResourceObj) else type(v).__name__
                at = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == key), call)
                it.certain_error(at, "TS140", resource_list_message(
                    bound["name"] if isinstance(bound["name"], str) else "", key, got))
            if not isinstance(v, (list, tuple)) or self.is_tainted(v):
                reasons.append(f"`{key}` could not be resolved")
                return []
            out = []
            for x in v:
                if isinstance(x, ResourceObj):
                    out.append(x)
                else:
                    reasons.append(f"an element of `{key}` could not be resolved")
                    self.ctx.unknown(arg_ranges.get(key, rng), f"an element of `{key}` could not be "
                                     "resolved to a resource; checks over this task are skipped", "resource")
            return out
        src, dst = res_list("src_resources"), res_list("dst_resources")
        resources, objects = {}, {}
        if not self.collect_resources(src + dst, resources, objects, call):
            task.ok, task.reason = False, "a resource model failed"
            return None
        if not isinstance(name, str):
            if name is UNKNOWN:
                it.unknown(call, "Task name could not be resolved statically")
            name = "" if name is UNKNOWN else str(name)
        model = TaskModel(name=name, warp_idx=bound["warp_idx"], num_warps=bound["num_warps"],
                          src=[r.rid for r in src], dst=[r.rid for r in dst],
                          num_registers=bound["num_registers"], run_only_on_cta_id=bound["run_only_on_cta_id"],
                          class_mro=tuple(self._qual(k) for k in task.cls.mro), range=rng,
                          arg_ranges=arg_ranges)
        task.model = model
        self.ctx.tasks_built.append(model)
        for key in ("warp_idx", "num_warps"):
            if bound[key] is UNKNOWN:
                self.ctx.unknown(model.at(key), f"Task `{key}` could not be resolved statically; checks "
                                 "that need it are skipped")
        quiet = False

        def report(code, message, r=None):
            if not quiet:
                self.ctx.report(code, message, r or rng)
        for code, message, key in check_task_fields(model, resources):
            report(code, message, model.at(key) if key else rng)
        sched = bound["schedule"]
        if sched is None:
            report("TS112", f"Task '{name}': 'schedule' is required", arg_ranges.get("schedule", rng))
        elif isinstance(sched, ScheduleVal):
            for k, v in sched.resources.items():
                resources.setdefault(k, v)
            model.schedule = sched.model
            if not sched.complete:
                reasons.append(f"its schedule is incomplete ({sched.reason})")
                quiet = True
            if sched.has_errors:
                quiet = True      # the runtime raised at capture: this Task is never built
            model.lowered = lower(sched.model, resources, report, model.class_mro, rng)
            from ts_runtime.model.task_checks import check_lowered_task
            for code, message, key in check_lowered_task(model, resources):
                report(code, message, model.at(key) if key else rng)
            unroll = model.lowered.unroll
            if unroll is not None and unroll is not UNKNOWN and (isinstance(unroll, bool) or not isinstance(unroll, int)):
                report("TS113", f"'unroll' must be a compile-time int or None, got {unroll!r}",
                       model.lowered.domain_range)
        elif _not_a_schedule(sched):
            # the reference fails reading `schedule.schedule_list` (AttributeError); the
            # runtime reports TS112 there (task.schedule_value_message)
            from ts_runtime.task import schedule_value_message
            fn = sched.func.name if isinstance(sched, ScheduleFuncVal) else None
            got = "function" if isinstance(sched, FuncVal) else type(sched).__name__
            report("TS112", schedule_value_message(name, got, fn), arg_ranges.get("schedule", rng))
            task.ok, task.reason = False, "its schedule is not a captured schedule"
            if not quiet and not it._try_depth:
                from .frames import UserRaise
                raise UserRaise(call, reported=True)    # the program stops here, as at run time
        else:
            reasons.append("its schedule could not be resolved")
            if sched is UNKNOWN:
                it.unknown(call, "the schedule of this Task could not be resolved statically", "schedule")
        task.objects = objects
        task.sched = sched
        if reasons:
            task.ok, task.reason = False, "; ".join(reasons)
        return None

    # ================================================================== TaskManager
    def _task_manager(self, it, args, kwargs, call, target=None):
        """`TaskManager(...)`; or, with `target` (an instance of a user subclass), the
        base's `__init__` run on it (the subclass's own or implicit one), analysed at the
        subclass's construction (`GemmManager(...)`: the site and keyword ranges)."""
        from ts_runtime.task_manager import TaskManager as LiveTM
        ctx = self.ctx
        what = "TaskManager(...)"
        if isinstance(target, TaskManagerObj):
            what = f"{target.cls.name}(...)"
            if isinstance(target.node, cst.Call):
                call = target.node
        rng = self._r(call)
        bound = _signature_bind(LiveTM.__init__, [None] + list(args), kwargs)
        if bound is None:
            self._unbound_call(what, LiveTM.__init__, [None] + list(args), kwargs, call)
            if target is not None:
                target.failed = True         # Python's TypeError: the object never exists
                return None
            return TaskManagerVal(None)
        tm_val = target if isinstance(target, TaskManagerObj) else TaskManagerVal(None)
        tm_val.smem_allocator_given = bound.get("smem_allocator") is not None
        for key in ("smem_allocator", "tmem_allocator"):   # its setup allocates them (TS705)
            if isinstance(bound.get(key), AllocatorVal):
                bound[key].managed = tm_val
        site = (rng.line, rng.column)
        first_root = ctx.site_roots.setdefault(site, ctx.root_name)
        # a command-line configuration's re-run of `__main__` (configurations.py) analyses
        # the site again: it may build another kernel
        count_key = (site, ctx.config_label) if ctx.config_label else site
        ctx.site_counts[count_key] = ctx.site_counts.get(count_key, 0) + 1
        if (first_root != ctx.root_name and not ctx.config_label) \
                or ctx.site_counts[count_key] > ctx.MAX_KERNELS_PER_SITE:
            # analysed in an earlier context already; its model serves the setup-time check
            tm_val.kernel, tm_val.objects = getattr(ctx, "site_models", {}).get(site, (None, None))
            return tm_val
        arg_ranges = self.call_arguments(call, ("tasks", "resource_dependency_graph"))
        graph = bound["resource_dependency_graph"]
        graph_rng = arg_ranges.get("resource_dependency_graph", rng)
        if isinstance(graph, dict) and not graph and not self.is_tainted(graph):
            ctx.report("TS350", "resource_dependency_graph must be provided and non-empty", graph_rng)
            return tm_val
        if graph is None or (type(graph) in (list, tuple) and not graph and not self.is_tainted(graph)):
            ctx.report("TS350", "resource_dependency_graph must be provided and non-empty", graph_rng)
            return tm_val
        if self._bad_graph_entry(graph, graph_rng, call):
            return tm_val
        reasons = []
        tasks_v = bound["tasks"]
        tasks = []
        if not isinstance(tasks_v, (list, tuple)) or self.is_tainted(tasks_v):
            reasons.append("the task list could not be resolved")
        else:
            for t in tasks_v:
                if isinstance(t, TaskObj) and t.model is not None:
                    tasks.append(t)
                    if not t.ok:
                        reasons.append(f"task '{t.model.name}': {t.reason}")
                else:
                    reasons.append("a task could not be resolved")
                    if isinstance(t, TaskObj) and not t.ok:
                        reasons[-1] = f"a task failed: {t.reason}"
        if not isinstance(graph, dict) or self.is_tainted(graph):
            reasons.append("the dependency graph could not be resolved")
            graph = {}
        options = ManagerOptions()
        for key in ("skip_validation", "verbose", "exhaustive_deadlock_race_check", "assume_pdl_wait_completed"):
            v = bound[key]
            if isinstance(v, bool):
                setattr(options, key, v)
            elif v is UNKNOWN:
                ctx.unknown(arg_ranges.get(key, rng), f"`{key}` could not be resolved; the default is assumed")
        for key, default in (("smem_capacity_bytes", 232448), ("tmem_capacity_columns", 512)):
            v = bound[key]
            setattr(options, key, default if v is None else _static(v))
        if is_static_int(bound["max_states"]) and bound["max_states"]:
            options.max_states = bound["max_states"]
        if isinstance(bound["timeout"], (int, float)):
            options.timeout = bound["timeout"]
        objs = []
        for t in tasks:
            for key in ("src_resources", "dst_resources"):
                v = t.attrs.get(key)
                if isinstance(v, (list, tuple)):   # (anything else: the Task recorded why it is unresolved)
                    objs.extend(v)
            sched = getattr(t, "sched", None)
            if isinstance(sched, ScheduleVal):
                objs.extend(sched.objects.values())
        items = list(graph.items())
        for down, ups in items:
            objs.append(down)
            if isinstance(ups, (list, tuple, set, frozenset)):
                objs.extend(ups)
            elif ups is not None:
                reasons.append("a dependency-graph entry could not be resolved")
        if any(not isinstance(o, ResourceObj) for o in objs if o is not None and not isinstance(
                o, (list, tuple))):
            reasons.append("a resource could not be resolved")
        resources, objects = {}, {}
        try:
            if not isinstance(tasks_v, (list, tuple)) or not self.collect_resources(
                    [o for o in objs if isinstance(o, ResourceObj)], resources, objects, call):
                if isinstance(tasks_v, (list, tuple)):
                    return tm_val
            for rid, m in resources.items():
                self.refresh_allocations(objects[rid], m, call)
            for o in objects.values():
                if o.uncertain:
                    reasons.append(f"resource '{o.attrs.get('name', '?')}': {o.uncertain}")
                if getattr(o, "failed", False):
                    reasons.append(f"resource '{o.attrs.get('name', '?')}' failed")
            for t in tasks:
                self._probe_domain(t, call)
            kernel = KernelModel(resources=resources, tasks=[t.model for t in tasks], options=options,
                                 range=rng, arg_ranges=arg_ranges)
            entries = self._dict_entries(call)
            for i, (down, ups) in enumerate(items):
                ent = entries[i] if len(entries) == len(items) else None
                if not isinstance(down, ResourceObj) or not isinstance(ups, (list, tuple, set, frozenset)):
                    continue
                kernel.graph_keys.append((down.rid, ent[0] if ent is not None else graph_rng))
                for j, up in enumerate(ups):
                    if not isinstance(up, ResourceObj):
                        continue
                    erng = graph_rng
                    if ent is not None:
                        erng = ent[1][j] if j < len(ent[1]) else ent[0]
                    kernel.graph.append(GraphEdge(down.rid, up.rid, erng))
            labels = bound["dma_consumer_release_labels"]
            if isinstance(labels, dict) and labels:
                conv = {}
                for key, v in labels.items():
                    if isinstance(key, tuple) and len(key) == 2 and all(isinstance(x, ResourceObj) for x in key):
                        conv[(key[0].rid, key[1].rid)] = list(v) if isinstance(v, (list, tuple)) else v
                    else:
                        reasons.append("dma_consumer_release_labels could not be resolved")
                options.dma_consumer_release_labels = conv
            elif labels is UNKNOWN:
                reasons.append("dma_consumer_release_labels could not be resolved")
            for key, space in (("smem_allocator", "smem"), ("tmem_allocator", "tmem")):
                am = self.allocator_model(bound[key], space, call)
                if am is UNKNOWN:
                    reasons.append(f"`{key}` could not be resolved")
                    am = None
                elif am is not None and bound[key].uncertain:
                    reasons.append(f"`{key}`: {bound[key].uncertain}")
                setattr(kernel, f"{space}_allocator", am)
        except _Abort:
            return tm_val
        ctx.kernels.append(kernel)
        ctx.kernel_roots.append(f"{ctx.root_name} ({ctx.config_label})" if ctx.config_label else ctx.root_name)
        self._work_method_reads(kernel, objects)
        self._runtime_truths(kernel, objects)
        self._folded_predicates(kernel, objects)
        if ctx.import_errors:
            reasons.insert(0, "the module has errors that stop it at import")
        elif ctx.root_errors:
            reasons.insert(0, "earlier errors stop the program before this TaskManager")
        if reasons:
            seen = []
            for r in reasons:
                if r not in seen:
                    seen.append(r)
            ctx.unknown(rng, "manager-phase checks skipped for this TaskManager: " + "; ".join(seen[:4]),
                        "skipped")
            kernel._ts_skipped = seen
            tm_val.kernel = kernel
            return tm_val
        self._run_rules(kernel, options, rng)
        tm_val.kernel, tm_val.objects = kernel, objects
        if not hasattr(ctx, "site_models"):
            ctx.site_models = {}
        ctx.site_models.setdefault(site, (kernel, objects))
        return tm_val

    def _work_method_reads(self, kernel, objects):
        """TS962 in the work methods the kernel's schedules call: the kernel compiles them, so
        a read that certainly fails there (unbound.failing_reads) raises NameError then; and
        the attribute / helper-call errors of their bodies (workbody.py: TS963, TS966, TS907),
        per work method and class of the resource it is called on."""
        from .statements import _rewritten_by_dsl
        from .unbound import failing_reads, name_error_message
        from .workbody import check_work_method
        ctx = self.ctx
        done, bodies = set(), set()
        for e, o, owner, v in _work_calls(kernel, objects):
            if not isinstance(v.func, FuncVal):
                continue
            helpers = []
            if (id(v), id(o.cls)) not in bodies:      # what `self` has depends on its class
                bodies.add((id(v), id(o.cls)))
                helpers = check_work_method(self.it, o, v, e.label)
            for func, where in [(v.func, f"work method '{owner.name}.{e.label}'")] + [
                    (h, f"'{h.owner.name if h.owner is not None else owner.name}.{h.name}' (called by work "
                        f"method '{owner.name}.{e.label}')") for h in helpers]:
                if id(func.node) in done:
                    continue
                done.add(id(func.node))
                jit = func.is_jit or _rewritten_by_dsl(func)
                names = set()
                for node, name, local, cond in failing_reads(self.it, func, conditional=True):
                    if cond and local and not (cond == "traced" and jit):
                        # a local read in a branch the compile may not trace (a JIT
                        # function traces both branches of an `if` on a run-time value)
                        continue
                    if name in names:
                        continue        # the first read of a name stops the trace
                    names.add(name)
                    msg = name_error_message(name, local, where)
                    ctx.report("TS962", msg + ": Python raises NameError when the kernel is compiled",
                               ctx.range(node))

    def _runtime_truths(self, kernel, objects):
        """TS973 in work methods: the kernel's `tm.run()` traces the work calls one after
        the other, in the TaskManager's task order, then each schedule's order (head,
        domain-loop body, tail); a work method without @cute.jit is run as Python then,
        and a condition in it that is certainly a DSL run-time value raises
        PHASE_DYNAMIC_TO_STATIC_BOOL (workbody.runtime_truths). Followed in that order per
        resource object, from the attributes that hold a run-time value when the
        TaskManager is made (set in the kernel, from a thread index or a kernel argument),
        so that `if self.cta_rank == 0:` is judged after the setup work call that sets it.
        Only in a kernel being compiled; one finding per kernel, as the trace stops."""
        if not self.it.in_jit_build():
            return
        from ts_runtime.model.lowered import LOOP
        from ts_runtime.model.values import RUNTIME
        from .workbody import runtime_truths
        state: dict = {}
        for e, o, _owner, v in _work_calls(kernel, objects):
            cur = state.get(e.resource)
            if cur is None:
                cur = state[e.resource] = {a for a, x in o.attrs.items() if x is RUNTIME}
            if runtime_truths(self.it, o, v, e.label, cur, e.section == LOOP):
                return

    def _folded_predicates(self, kernel, objects):
        """TS970: FrontendNext (`cute.compile[cute.FrontendNext]`) traces the tasks'
        schedules one after the other, in the TaskManager's task order, inside a loop of
        its own; an `if self.flag:` in a work method, met while `flag` holds a DSL constant
        (`cutlass.Boolean(False)` from `__init__`), is folded to that value, and a later
        work call (of any task) that sets `flag` on the same resource object is rejected
        with PHASE_PREDICATE_FOLDED_STALE. Reported at that work call, with the work call
        that tested it as a related location. A work method that both tests and sets an
        attribute does not fold it (which comes first is not followed)."""
        it = self.it
        if getattr(it, "frontend", None) != "next" or not it.in_jit_build():
            return
        from ts_runtime.diagnostics import Related
        from .workbody import compile_time_attributes, tested_attributes
        const: dict = {}       # rid -> attributes still holding their compile-time value
        folded: dict = {}      # (rid, attribute) -> (work call label, its range)
        reported = set()
        for e, o, _owner, v in _work_calls(kernel, objects):
            res = kernel.resources.get(e.resource)
            wm = res.work_methods.get(e.label) if res is not None else None
            if wm is None:
                continue
            if e.resource not in const:
                const[e.resource] = set(compile_time_attributes(it, o))
            live = const[e.resource]
            writes = wm.writes
            for a in sorted(writes):
                hit = folded.get((e.resource, a))
                if hit is not None and (e.resource, a) not in reported:
                    reported.add((e.resource, a))
                    self.ctx.report(
                        "TS970", f"{e.label}() changes '{a}' of '{res.label}', which {hit[0]}() already tested "
                        f"as a condition while it held a compile-time value (line {hit[1].line}): FrontendNext "
                        f"folded that branch when it traced the kernel, and rejects the change "
                        f"(PHASE_PREDICATE_FOLDED_STALE); set '{a}' to its run-time value before the first "
                        f"work call that tests it (the setup work call of this task's schedule)", e.range,
                        related=[Related(hit[1], f"{hit[0]}() tests '{a}' here, while it holds the "
                                                 f"constant set when the resource was built")])
            if wm.writes_any:
                live.clear()
                continue
            tests = tested_attributes(it, o, v) if live else None
            for a in sorted((tests or frozenset()) & live - writes):
                folded.setdefault((e.resource, a), (e.label, e.range))
            live -= writes

    def _run_rules(self, kernel, options, rng):
        from ts_runtime.diagnostics import Severity
        from ts_runtime.rules.engine import run_manager_rules
        ctx = self.ctx
        try:
            # (ts-lint prints no verbose report: the checker keeps no complete-run witness)
            diags = run_manager_rules(kernel, with_checker=ctx.run_checker, witness=False)
        except Exception as exc:  # a crash in shared code must not lose the file's other findings
            ctx.report("TS999", f"internal error while checking this TaskManager: {type(exc).__name__}: {exc}",
                       rng, severity=Severity.WARNING)
            return
        if options.skip_validation is True:   # TS901, shared with the runtime
            from ts_runtime.rules.other import apply_skip_validation
            diags = apply_skip_validation(kernel, diags)
        for d in diags:
            ctx.emit(d)

    # ------------------------------------------------------------------ graph entry ranges
    def _probe_domain(self, task, call):
        """As at run time (TaskManager._probe_domain): a dynamic domain end is probed with
        tile (0, 0, 0). An int makes the checkers exact; a traced value is RUNTIME (the
        documented fallback, TS814); what ts-lint cannot evaluate stays UNKNOWN."""
        from ts_runtime.model.values import RUNTIME
        low = getattr(getattr(task, "model", None), "lowered", None)
        if low is None or not low.dynamic_domain or not isinstance(task, TaskObj):
            return
        _cls, fn = task.cls.lookup("get_domain")
        if fn is None:
            return
        try:
            value = self.it.call(fn, [task, (0, 0, 0)], {}, call)
        except Exception:
            return
        if is_static_int(value):
            low.domain_probe = value
        elif value is RUNTIME:
            low.domain_probe = RUNTIME

    def _bad_graph_entry(self, graph, graph_rng, call) -> bool:
        """TS360 (as the runtime's `TaskManager._check_graph_entries`): a graph that is
        certainly no dict, an entry whose value is certainly no list of resources (None, a
        single resource, a number or string) or an element of a known list that is plain
        data. A dict or list that may have been changed where ts-lint could not follow is
        not judged."""
        from ts_runtime.task_manager import GRAPH_PLAIN, bad_graph_entry, graph_entry_message
        if type(graph) in GRAPH_PLAIN + (list, tuple, set, frozenset):
            if not self.is_tainted(graph):
                self.ctx.report("TS360", graph_entry_message(None, type(graph).__name__), graph_rng)
                return True
            return False
        if not isinstance(graph, dict) or self.is_tainted(graph):
            return False
        items = list(graph.items())
        found = bad_graph_entry(items, lambda v: isinstance(v, ResourceObj) or type(v) in GRAPH_PLAIN,
                                lambda v: type(v) in (list, tuple) and not self.is_tainted(v))
        if found is None:
            return False
        i, index, bad = found
        label = items[i][0].attrs.get("name") if isinstance(items[i][0], ResourceObj) else None
        label = label if isinstance(label, str) else "?"
        entries = self._dict_entries(call)
        rng = graph_rng
        if len(entries) == len(items):
            values = entries[i][1]
            rng = values[index or 0] if (index or 0) < len(values) else entries[i][0]
        if isinstance(bad, ResourceObj):
            name = bad.attrs.get("name")
            msg = graph_entry_message(label, bad.cls.name, index, name if isinstance(name, str) else None,
                                      resource=True)
        else:
            msg = graph_entry_message(label, type(bad).__name__, index)
        self.ctx.report("TS360", msg, rng)
        return True

    def _dict_entries(self, call):
        """locate.dict_entries: [(key range, [value ranges])] of the graph dict literal.

        A name is followed, as at run time, to the latest `name = {...}` on or before the
        call's line anywhere in the file (read from the file's `ast`)."""
        if not isinstance(call, cst.Call):
            return []
        it = self.it
        expr = None
        for a in call.args:
            if a.keyword is not None and a.keyword.value == "resource_dependency_graph":
                expr = a.value
        pos = [a for a in call.args if a.keyword is None and a.star != "**"]
        if expr is None and len(pos) > 1:
            expr = pos[1].value
        if isinstance(expr, cst.Dict):
            out = []
            for el in expr.elements:
                if not isinstance(el, cst.DictElement):
                    continue
                v = el.value
                vals = [e.value for e in v.elements] if isinstance(v, (cst.List, cst.Tuple)) else [v]
                out.append((it.rng(el.key), [it.rng(x) for x in vals]))
            return out
        if not isinstance(expr, cst.Name):
            return []
        import ast
        from .imports import source_of
        src = source_of(self.ctx, call)    # the file of the call (imports.py)
        index = src.ast_dict_assignments() if src is not None else None
        if not index:
            return []
        line = it.ctx.pos.line(call)
        cand = None
        for aline, names_, dnode, off in index:
            if aline <= line and expr.value in names_ and (cand is None or aline > cand[0]):
                cand = (aline, dnode, off)
        lookups = getattr(src, "dict_lookups", None)
        if lookups is not None:     # what the result depends on outside the call's text
            lookups.append((line, expr.value, cand[0] if cand is not None else None))
        if cand is None:
            return []
        out = []
        for k, v in zip(cand[1].keys, cand[1].values):
            if k is None:
                continue
            vals = v.elts if isinstance(v, (ast.List, ast.Tuple)) else [v]
            out.append((src.ast_range(k, cand[2]), [src.ast_range(x, cand[2]) for x in vals]))
        return out
