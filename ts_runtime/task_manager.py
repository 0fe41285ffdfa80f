"""`TaskManager`: builds the kernel model from live objects, validates it, runs the kernel.

Construction runs `print_and_verify()` as in the reference, but collects every finding of
every rule and raises one `ScheduleValidationError` listing them with code and
`file:line`. Warnings go through `warnings.warn` with the code in the text;
`skip_validation=True` downgrades errors to warnings (except the reference's assertion
and type errors, which it never downgrades either).
"""
from __future__ import annotations

import warnings
from typing import Any, Optional

from .diagnostics import Diagnostic, ScheduleValidationError, Severity, raise_finding, warn_finding
from .locate import call_arguments, dict_entries
from .model.kernel import GraphEdge, KernelModel, ManagerOptions
from .rules.registry import get as get_rule, make_diagnostic
from .api_calls import CheckedCall, checked_method
from .source import caller_range, construction_range

__all__ = ["TaskManager", "WARP_SIZE", "expand_loop", "graph_entry_message"]

WARP_SIZE = 32
_NEVER_DOWNGRADED = ("AssertionError", "TypeError")


class TaskManager(metaclass=CheckedCall):
    def __init__(self, tasks, resource_dependency_graph, dma_consumer_release_labels=None,
                 iket_enable_profiling=False, iket_profiling_stages=None, iket_profiling_resources=None,
                 skip_validation=False, smem_allocator=None, tmem_allocator=None, tmem_ptr_i32=None,
                 verbose=True, smem_capacity_bytes=None, tmem_capacity_columns=None,
                 exhaustive_deadlock_race_check=True, assume_pdl_wait_completed=False,
                 max_states=None, timeout=None):
        # the construction: `GemmManager(...)` for a subclass whose own __init__ calls
        # super().__init__(...), as ts-lint places it
        self._ts_range = construction_range(self)
        self.tasks = list(tasks)
        self.resource_dependency_graph = resource_dependency_graph
        self.dma_consumer_release_labels = dma_consumer_release_labels
        self.skip_validation = skip_validation
        self._smem_allocator = smem_allocator
        self.tmem_allocator = tmem_allocator
        self.tmem_ptr_i32 = tmem_ptr_i32
        self.verbose = verbose
        self.smem_capacity_bytes = 232448 if smem_capacity_bytes is None else smem_capacity_bytes
        self.tmem_capacity_columns = 512 if tmem_capacity_columns is None else tmem_capacity_columns
        self.exhaustive_deadlock_race_check = exhaustive_deadlock_race_check
        self.assume_pdl_wait_completed = assume_pdl_wait_completed
        self.iket_enable_profiling = iket_enable_profiling
        self._setup_done = False
        self.diagnostics: list = []
        self.check_result = None
        options = ManagerOptions(
            skip_validation=skip_validation, verbose=verbose,
            exhaustive_deadlock_race_check=exhaustive_deadlock_race_check,
            assume_pdl_wait_completed=assume_pdl_wait_completed,
            smem_capacity_bytes=self.smem_capacity_bytes, tmem_capacity_columns=self.tmem_capacity_columns,
            max_states=max_states or 1_000_000, timeout=timeout)
        args = call_arguments(self._ts_range, ("tasks", "resource_dependency_graph"))
        if not resource_dependency_graph:
            d = make_diagnostic("TS350", "resource_dependency_graph must be provided and non-empty",
                                args.get("resource_dependency_graph", self._ts_range))
            raise ScheduleValidationError([d])
        self._check_graph_entries(args)
        self.kernel = self._build_model(options, args)
        self.print_and_verify()

    def _check_graph_entries(self, args: dict) -> None:
        """TS360: a graph that is not a dict, an entry whose value is not a list of upstream
        resources (a bare resource, None, a number) or an element that is not a resource;
        the reference fails iterating it (TypeError) or reading the element's name
        (AttributeError)."""
        from .resources import MemoryResource
        graph = self.resource_dependency_graph
        graph_rng = args.get("resource_dependency_graph", self._ts_range)
        if not hasattr(graph, "items"):
            raise_finding("TS360", TypeError, graph_entry_message(None, type(graph).__name__), graph_rng)
        items = list(graph.items())
        found = bad_graph_entry(items, lambda v: isinstance(v, (MemoryResource,) + GRAPH_PLAIN)
                                or not hasattr(v, "__iter__"), lambda v: isinstance(v, (list, tuple)))
        if found is None:
            return
        i, index, bad = found
        label = getattr(items[i][0], "name", None)
        label = label if isinstance(label, str) else "?"
        entries = dict_entries(self._ts_range, "resource_dependency_graph")
        rng = graph_rng
        if len(entries) == len(items):
            values = entries[i][3]
            rng = values[index or 0] if (index or 0) < len(values) else entries[i][2]
        is_res = isinstance(bad, MemoryResource)
        name = bad.name if is_res and isinstance(bad.name, str) else None
        raise_finding("TS360", TypeError, graph_entry_message(label, type(bad).__name__, index, name,
                                                              resource=is_res), rng)

    # ------------------------------------------------------------------ model
    def _build_model(self, options: ManagerOptions, args: dict) -> KernelModel:
        from .tracing import allocator_model, collect_resources, refresh_allocations
        resources: dict = {}
        objs = []
        for t in self.tasks:
            objs.extend(t.src_resources + t.dst_resources)
            sched = getattr(t, "schedule", None)
            if sched is not None:
                objs.extend(sched.objects.values())
        for down, ups in self.resource_dependency_graph.items():
            objs.append(down)
            objs.extend(ups or ())
        collect_resources(objs, resources)
        self._objects = {}
        for o in objs:
            self._objects[id(o)] = o
        for rid, m in resources.items():
            if rid in self._objects:
                refresh_allocations(self._objects[rid], m)
        for t in self.tasks:
            _probe_domain(t)
        kernel = KernelModel(resources=resources, tasks=[t.model for t in self.tasks], options=options,
                             range=self._ts_range, arg_ranges=args)
        entries = dict_entries(self._ts_range, "resource_dependency_graph")
        items = list(self.resource_dependency_graph.items())
        graph_rng = args.get("resource_dependency_graph", self._ts_range)
        for i, (down, ups) in enumerate(items):
            ent = entries[i] if len(entries) == len(items) else None
            kernel.graph_keys.append((id(down), ent[2] if ent is not None else graph_rng))
            for j, up in enumerate(ups or ()):
                rng = graph_rng
                if ent is not None:
                    rng = ent[3][j] if j < len(ent[3]) else ent[2]
                kernel.graph.append(GraphEdge(id(down), id(up), rng))
        if options.dma_consumer_release_labels is None and self.dma_consumer_release_labels:
            options.dma_consumer_release_labels = {
                (id(a), id(b)): list(v) for (a, b), v in self.dma_consumer_release_labels.items()}
        kernel.smem_allocator = allocator_model(self._smem_allocator, "smem")
        kernel.tmem_allocator = allocator_model(self.tmem_allocator, "tmem")
        return kernel

    @property
    def smem_allocator(self):
        return self._smem_allocator

    # ------------------------------------------------------------------ validation
    @checked_method
    def validate(self) -> list:
        """All findings (errors, warnings, infos) of every rule, without raising."""
        from .rules.engine import run_manager_rules
        diags = run_manager_rules(self.kernel)
        self.check_result = getattr(self.kernel, "check_result", None)
        return sorted(diags, key=lambda d: (d.severity is not Severity.ERROR, d.sort_key()))

    @checked_method
    def print_and_verify(self):
        diags = self.validate()
        if self.skip_validation:   # TS901: shared with ts-lint
            from .rules.other import apply_skip_validation
            diags = apply_skip_validation(self.kernel, diags)
        self.diagnostics = diags
        if self.verbose:
            from .printout import print_report
            print_report(self.kernel, diags)
        errors = [d for d in diags if d.severity is Severity.ERROR]
        for d in diags:
            if d.severity is Severity.WARNING:    # info notes are printed (verbose), not warned
                warn_finding(d)
        if errors:
            exc = ScheduleValidationError(errors)
            exc.all_diagnostics = list(diags)   # with the warnings and info notes
            raise exc

    # ------------------------------------------------------------------ kernel time
    @checked_method
    def setup_resources_and_tasks(self):
        if self._setup_done:
            raise_finding("TS902", AssertionError, "setup_resources_and_tasks must be called exactly once",
                          caller_range())
        from .codegen.runtime import setup_resources_and_tasks
        setup_resources_and_tasks(self)
        self._setup_done = True

    @checked_method
    def run(self):
        if not self._setup_done:
            raise_finding("TS903", AssertionError, "setup_resources_and_tasks must be called before run",
                          caller_range())
        from .codegen.runtime import run_tasks
        run_tasks(self)

    @checked_method
    def get_marmaid_string_dependency_graph(self, direction="TD", include_resource_details=True,
                                            collapse_work_queue_edges=True) -> str:
        from .mermaid import mermaid_graph
        return mermaid_graph(self.kernel, direction, include_resource_details, collapse_work_queue_edges)

    get_mermaid_string_dependency_graph = get_marmaid_string_dependency_graph


GRAPH_PLAIN = (bool, int, float, str, bytes)


def bad_graph_entry(items, scalar, known_sequence):
    """TS360's verdict on a dependency graph's `items` ((downstream, value) pairs), shared
    by both front ends: (position of the first bad entry, index of the bad element in its
    list or None when the value itself is bad, the bad value), or None. `scalar(v)`: the
    value is certainly not a collection of resources (a single resource, a number, a
    string); `known_sequence(v)`: a list or tuple whose items are all known. An element
    is bad when it is None, plain data or a container."""
    for i, (_down, ups) in enumerate(items):
        if ups is None or scalar(ups):
            return i, None, ups
        if known_sequence(ups):
            index = next((j for j, x in enumerate(ups)
                          if x is None or isinstance(x, GRAPH_PLAIN + (list, tuple, dict, set))), None)
            if index is not None:
                return i, index, ups[index]
    return None


def graph_entry_message(down, got: str, index=None, name=None, resource: bool = False) -> str:
    """TS360's text (the same from ts-lint): `down` is the downstream resource's name (None:
    the graph itself is not a dict), `got` the offending value's type name, `index` the
    position of a bad element in the entry's list (None: the value itself), `resource`
    whether the value is a single resource (`name` its name)."""
    if down is None:
        return f"resource_dependency_graph must be a dict {{downstream: [upstream, ...]}}, got {got}"
    if index is not None:
        return (f"resource_dependency_graph: upstream {index} of '{down}' is {got}, not a resource (the "
                f"reference fails reading its name)")
    if resource:
        what = f"the resource {got} '{name}'" if name is not None else f"the resource {got}"
        return (f"resource_dependency_graph: the entry of '{down}' is {what}, not a list of its upstream "
                f"resources (write [{name or '...'}]); the reference fails iterating it (TypeError)")
    return (f"resource_dependency_graph: the entry of '{down}' must be a list of its upstream resources, "
            f"got {got}; the reference fails iterating it (TypeError)")


def _probe_domain(task):
    """A dynamic domain end is probed with tile (0, 0, 0) (as the reference does): a Python
    int makes the checkers exact; anything else (a traced value, an error because the
    getter needs a kernel) is RUNTIME and the checkers use their documented fallback."""
    low = getattr(getattr(task, "model", None), "lowered", None)
    if low is None or not low.dynamic_domain:
        return
    from .model.values import RUNTIME, is_static_int
    try:
        value = task.get_domain((0, 0, 0))
    except Exception:
        value = RUNTIME
    low.domain_probe = value if is_static_int(value) else RUNTIME


def expand_loop(task, dynamic_domain_fallback=1, opaque_assignment=None) -> list:
    """Head + loop x n + tail entries of one task (see ts_runtime.checker.expand)."""
    from .checker.expand import expand_task
    return expand_task(task.model if hasattr(task, "model") else task, dynamic_domain_fallback,
                       opaque_assignment)
