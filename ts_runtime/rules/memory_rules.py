"""TS701-TS714: SMEM / TMEM allocators and the register budget.

TS701-TS706 are object-phase checks raised by the allocators themselves
(`ts_runtime.memory`, mirrored by ts-lint's allocator model); TS712 is a `Task(...)`
check (`ts_runtime.model.task_checks`). The rest are manager rules: capacities over the
attached allocators (TS707/TS708) and the warp-group register checks over the tasks
(TS709-TS711, TS713/TS714), with the arithmetic in `ts_runtime.model.registers`.
"""
from __future__ import annotations

import textwrap
from typing import Iterable

from ..diagnostics import Related, Severity
from ..model.registers import (REGISTER_FILE, WARPS_PER_GROUP, default_registers, register_usage,
                               total_warps, warp_groups)
from ..model.values import UNKNOWN, is_static_int
from .base import Rule
from .declare import rule
from .registry import register

ORDER_WARP_GROUPS = 20   # model.md §6 step 2
ORDER_BUDGET = 30        # step 3
ORDER_SMEM = 200         # step 20
ORDER_TMEM = 210         # step 21
OBJ = dict(phase="object")

# --------------------------------------------------------------------------- programs
_HEADER = '''\
from dataclasses import dataclass
from ts_runtime import schedule, domain_loop, consumer_work, producer_work
from ts_runtime.resources import MemoryResource, TaskLocalVariable
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager
from ts_runtime.memory import SmemAllocation, SmemAllocator, TmemAllocation, TmemAllocator


@dataclass(kw_only=True)
class InGmem(MemoryResource):
    val: object = TaskLocalVariable.uninitialized()

    def __post_init__(self):
        self.val = TaskLocalVariable(dtype=int, default=0)

    @consumer_work(returns=val)
    def load(self, stage_info):
        return 0


@dataclass(kw_only=True)
class Staging(MemoryResource):
    """An unpipelined SMEM staging buffer of `size` bytes."""
    size: int = 4096

    def __post_init__(self):
        self._alloc = SmemAllocation("staging", size_bytes=self.size)

    def get_smem_requirements(self):
        return [self._alloc]

    @producer_work
    def store(self, stage_info, v):
        pass


@dataclass(kw_only=True)
class Accum(MemoryResource):
    """An unpipelined TMEM accumulator of `columns` columns."""
    columns: int = 128

    def __post_init__(self):
        self._alloc = TmemAllocation("acc", self.columns)

    def get_tmem_requirements(self):
        return [self._alloc]

    @producer_work
    def store(self, stage_info, v):
        pass
'''

_BUILD = '''\
inp, out = InGmem(name="in"), Staging(name="staging", size={size})
{alloc}

@schedule
def copy_schedule(inp, out):
    with domain_loop(0, 4, 1):
        v = inp.load()
        out.store(v=v)

@schedule
def pad_schedule():
    with domain_loop(1):
        pass

tasks = [
{tasks}
]
return TaskManager(tasks=tasks, resource_dependency_graph={{out: [inp]}}, verbose=False{options}){tm_mark}
'''

ALLOC = "smem = SmemAllocator(); smem.add_resource(out); smem.compute_layout()"
COPY_TASK = ('Task(name="Copy", src_resources=[inp], dst_resources=[out], warp_idx={w}, num_warps={n},'
             ' num_registers={r},{mark}\n     schedule=copy_schedule(inp, out)),')
PAD_TASK = ('Task(name="{name}", src_resources=[], dst_resources=[], warp_idx={w}, num_warps={n},'
            ' num_registers={r},{mark}\n     schedule=pad_schedule()),')


def _m(code):
    return f"  # expect: {code}" if code else ""


def memory_program(*, size: int = 4096, alloc: str = ALLOC, options: str = ", smem_allocator=smem",
                   tasks=None, tm_mark: str = "") -> str:
    """One Copy task (warp 0) in->staging plus optional padding tasks.

    `tasks`: [(name, warp_idx, num_warps, num_registers, expected code on that line)];
    the first is the Copy task."""
    tasks = tasks or [("Copy", 0, 1, None, "")]
    rendered = []
    for name, w, n, r, mark in tasks:
        tmpl = COPY_TASK if name == "Copy" else PAD_TASK
        rendered.append(textwrap.indent(tmpl.format(name=name, w=w, n=n, r=r, mark=_m(mark)), "    "))
    body = _BUILD.format(size=size, alloc=textwrap.dedent(alloc).strip("\n"), tasks="\n".join(rendered),
                         options=options, tm_mark=_m(tm_mark))
    return _HEADER + "\n\ndef build():\n" + textwrap.indent(body, "    ")


VALID = memory_program()
TMEM_ALLOC = '''\
smem = SmemAllocator(); smem.add_resource(out); smem.compute_layout()
acc = Accum(name="acc", columns={columns})
tmem = TmemAllocator(); tmem.add_resource(acc); tmem.compute_layout()'''
TMEM_OPTIONS = ", smem_allocator=smem, tmem_allocator=tmem"


# --------------------------------------------------------------------------- object rules
rule("TS701", "non-power-of-two-alignment", """
    An SMEM allocation whose alignment is not a positive power of two.

    ## What it does
    `compute_layout()` rejects an allocation alignment that is not 1, 2, 4, 8, ...
    ## Why is this bad?
    Offsets are rounded up to the alignment with bit arithmetic; other values produce
    misaligned buffers (TMA and MMA descriptors need power-of-two alignment).
    ## Example
    `SmemAllocation("buf", size_bytes=4096, alignment=96)`
    ## Use instead
    `SmemAllocation("buf", size_bytes=4096, alignment=128)`
    """, exc="AssertionError", **OBJ, valid=[VALID],
     invalid=[memory_program(alloc='''\
         smem = SmemAllocator(); smem.add_resource(out)
         smem.add(SmemAllocation("scratch", size_bytes=256, alignment=96))
         smem.compute_layout()  # expect: TS701''')])

rule("TS702", "single-phase-alias-group", """
    An alias group with fewer than two phases.

    ## What it does
    `add_alias_group(phases)` requires at least two phases (lists of allocations that
    take turns using one region).
    ## Why is this bad?
    With one phase nothing shares the region: the call is a mistake (often a missing level
    of brackets, `[a, b]` instead of `[[a], [b]]`).
    ## Example
    `smem.add_alias_group([[a_tile, b_tile]])`
    ## Use instead
    `smem.add_alias_group([[a_tile, b_tile], [epilogue_staging]])`
    """, **OBJ, valid=[memory_program(alloc='''\
         smem = SmemAllocator()
         smem.add_alias_group([[out._alloc], [SmemAllocation("epilogue", size_bytes=2048)]])
         smem.compute_layout()''')],
     invalid=[memory_program(alloc='''\
         smem = SmemAllocator()
         smem.add_alias_group([[out._alloc]])  # expect: TS702
         smem.compute_layout()''')])

rule("TS703", "repeated-compute-layout", """
    `compute_layout()` called twice on one allocator.

    ## What it does
    Rejects a second `compute_layout()`.
    ## Why is this bad?
    Offsets were already handed out (and possibly read); laying out again would move
    buffers under code that holds the old offsets.
    ## Example
    `smem.compute_layout(); ...; smem.compute_layout()`
    ## Use instead
    Add every allocation first, then call `compute_layout()` once.
    """, exc="RuntimeError", **OBJ, valid=[VALID],
     invalid=[memory_program(alloc='''\
         smem = SmemAllocator(); smem.add_resource(out); smem.compute_layout()
         smem.compute_layout()  # expect: TS703''')])

rule("TS704", "layout-not-computed", """
    An allocator used before `compute_layout()`.

    ## What it does
    `total`, `print_usage_report()`, `allocate()` and a `TaskManager(smem_allocator=...)`
    need the layout; they fail on an allocator whose `compute_layout()` was not called.
    ## Why is this bad?
    There are no offsets and no size yet: capacity checks, the race checker and the kernel
    would all see every buffer at offset 0.
    ## Example
    `smem = SmemAllocator(); smem.add_resource(buf); TaskManager(..., smem_allocator=smem)`
    ## Use instead
    Call `smem.compute_layout()` after the last `add*()` call.
    """, exc="RuntimeError", **OBJ, valid=[VALID],
     invalid=[memory_program(alloc="smem = SmemAllocator(); smem.add_resource(out)", tm_mark="TS704")])

rule("TS705", "smem-not-allocated", """
    `SmemAllocator.get()` / `get_as_type()` before `allocate()`, or `get()` on an allocation without a dtype.

    ## What it does
    Typed views of SMEM exist only once the unified block has been allocated (in the
    kernel, by `setup_resources_and_tasks()`); `get()` also needs the allocation's `dtype`.
    ## Why is this bad?
    There is no SMEM pointer before allocation; without a dtype the view's element type
    is unknown.
    ## Example
    `smem.get(buf._alloc)` on the host, before the kernel allocates.
    ## Use instead
    Call `get()` inside the kernel after `task_manager.setup_resources_and_tasks()`, or
    `get_as_type(alloc, dtype)` for allocations declared by size only.
    """, exc="RuntimeError", phase="codegen", valid=[VALID],
     invalid=[memory_program(alloc='''\
         smem = SmemAllocator(); smem.add_resource(out); smem.compute_layout()
         view = smem.get(out._alloc)  # expect: TS705''')])

def _requirements_program(body: str, mark: bool) -> str:
    """VALID / INVALID programs of TS717: Staging's get_smem_requirements() body replaced."""
    src = memory_program(alloc="smem = SmemAllocator()\nsmem.add_resource(out)" + ("  # expect: TS717" if mark else "")
                         + "\nsmem.compute_layout()")
    old = "    def get_smem_requirements(self):\n        return [self._alloc]\n"
    assert old in src
    return src.replace(old, "    def get_smem_requirements(self):\n        " + body + "\n", 1)


rule("TS717", "invalid-allocation-requirements", """
    `get_smem_requirements()` / `get_tmem_requirements()` that does not return a list of allocations.

    ## What it does
    When a resource is added to an allocator (`add_resource`, or a group member through
    `add_pipeline_group`), its requirements must be a list (or tuple) of
    `SmemAllocation` / `TmemAllocation`; `None` (a body left as `pass`) or a `None`
    element (an allocation attribute never assigned) is reported at that call.
    ## Why is this bad?
    The allocator iterates the list and lays out each allocation: `'NoneType' object is
    not iterable` / `has no attribute 'size_bytes'`.
    ## Example
    ```python
    def get_smem_requirements(self):
        return [self._alloc_a]      # self._alloc_a = SmemAllocation(...) missing from __init__
    ```
    ## Use instead
    Create the allocations in `__init__` / `__post_init__` and return them in a list
    (`[]` when there are none).
    """, **OBJ, exc="TypeError", valid=[VALID],
     invalid=[_requirements_program("pass", True), _requirements_program("return [None]", True)])

rule("TS706", "invalid-pipeline-group-allocation", """
    `SmemAllocator.add_pipeline_group()` given something that is not a PipelineGroup with a config.

    ## What it does
    Requires a constructed `PipelineGroup` with a (derived or explicit) pipeline config.
    ## Why is this bad?
    The allocator reserves `num_barriers_per_stage x stages` barriers for the group; a plain
    resource or a group without a config has no such layout.
    ## Example
    `smem.add_pipeline_group(buffer)` for an ordinary resource.
    ## Use instead
    `smem.add_resource(buffer)` for resources, `add_pipeline_group(group)` for groups.
    """, **OBJ, valid=[VALID],
     invalid=[memory_program(alloc='''\
         smem = SmemAllocator(); smem.add_resource(out)
         smem.add_pipeline_group(inp)  # expect: TS706
         smem.compute_layout()''')])


# --------------------------------------------------------------------------- capacities
@register
class SmemCapacityExceeded(Rule):
    """
    The SMEM laid out by the attached `SmemAllocator` exceeds the capacity.

    ## What it does
    Compares data bytes (the allocator's layout) plus barrier bytes (16 B per stage of each
    pipelined resource, `num_barriers_per_stage x stages x 16 B` per pipeline group) with
    `smem_capacity_bytes` (default 232448 B). Only runs when an allocator is attached.

    ## Why is this bad?
    The kernel cannot launch with more dynamic shared memory than the SM has.

    ## Example
    A 4-stage pipeline of 64 KiB tiles: 262144 B of data.

    ## Use instead
    Fewer stages or smaller tiles, or alias buffers that are never live together
    (`add_alias_group`).
    """
    code = "TS707"
    name = "smem-capacity-exceeded"
    order = ORDER_SMEM
    VALID = [VALID, memory_program(size=232448)]
    INVALID = [memory_program(size=232449, tm_mark="TS707"),
               memory_program(options=", smem_allocator=smem, smem_capacity_bytes=4000", tm_mark="TS707")]

    def check(self, kernel) -> Iterable:
        s = kernel.smem_allocator
        cap = kernel.options.smem_capacity_bytes
        if s is None or not is_static_int(cap):
            return
        total = s.total
        if is_static_int(total) and total > cap:
            yield self.diag(f"SMEM usage ({total} B = {s.data_bytes} B data + {s.barrier_bytes} B barriers) exceeds "
                            f"hardware capacity ({cap} B). Reduce buffer sizes, pipeline stages, or use alias groups "
                            "to share physical memory", kernel.at("smem_allocator"),
                            related=[Related(s.range, "the allocator is created here")])


_NOT_ADDED = memory_program(alloc="smem = SmemAllocator(); smem.compute_layout()").replace(
    'Staging(name="staging", size=4096)', 'Staging(name="staging", size=4096)  # expect: TS715')


@register
class ResourceNotAllocated(Rule):
    """
    A task's resource declares SMEM / TMEM allocations that the manager's allocator never laid out.

    ## What it does
    For every resource of the manager's tasks, each allocation its
    `get_smem_requirements()` / `get_tmem_requirements()` returns must have been added to
    the `SmemAllocator` / `TmemAllocator` given to the `TaskManager` (by
    `add_resource`, `add` or an alias group) before `compute_layout()`. A PipelineGroup's
    members are resources like any other: `add_pipeline_group(group)` reserves only the
    group's barrier storage, so each member needs its own `add_resource`, as in the
    reference. Only runs when the allocator is attached and everything added to it is
    known.

    ## Why is this bad?
    The allocation never gets an offset and no SMEM is reserved for it: work that reads
    the buffer through the allocator fails while the kernel is traced (the reference:
    `'NoneType' object has no attribute 'data_ptr'`), and work that computes its own
    address overlaps whatever the allocator placed there. A warning, because a program
    that never uses the allocation still runs.

    ## Example
    `allocator = SmemAllocator(); allocator.compute_layout()` without
    `allocator.add_resource(smem_buffer)`.

    ## Use instead
    `allocator.add_resource(smem_buffer)` before `allocator.compute_layout()`.
    """
    code = "TS715"
    name = "resource-not-allocated"
    severity = Severity.WARNING       # fatal only when the work reads the buffer through its offset
    order = ORDER_SMEM - 1
    VALID = [VALID]
    INVALID = [_NOT_ADDED]

    def check(self, kernel) -> Iterable:
        for space, alloc, label, kw in (("smem", kernel.smem_allocator, "SmemAllocator", "smem_allocator"),
                                        ("tmem", kernel.tmem_allocator, "TmemAllocator", "tmem_allocator")):
            if alloc is None or not getattr(alloc, "complete", False):
                continue
            laid_out = {a.name for a in alloc.allocations}
            laid_out |= {a.name for g in alloc.alias_groups for ph in g for a in ph}
            if "?" in laid_out:
                continue
            for r in kernel.resources.values():
                if r.is_group:
                    continue
                missing = [a.name for a in getattr(r, space, ()) if a.name != "?" and a.name not in laid_out]
                if missing:
                    names = ", ".join(f"'{n}'" for n in missing)
                    yield self.diag(f"resource '{r.label}' needs {space.upper()} allocation(s) {names} but was not "
                                    f"added to the {label} passed to the TaskManager; add it with "
                                    f"`{label.lower()[:4]}_allocator.add_resource(...)` before compute_layout()",
                                    r.range,
                                    related=[Related(alloc.range, f"the {label} it is not added to"),
                                             Related(kernel.at(kw), f"the {label} given to the TaskManager")])


@register
class TmemCapacityExceeded(Rule):
    """
    The TMEM columns laid out by the attached `TmemAllocator` exceed the capacity.

    ## What it does
    Compares the allocator's total columns with `tmem_capacity_columns` (default 512).
    Only runs when a TMEM allocator is attached.

    ## Why is this bad?
    Tensor memory has 512 columns per SM; the allocation fails (or the kernel hangs waiting
    for columns that never free up).

    ## Example
    Two accumulator stages of 384 columns each.

    ## Use instead
    Fewer accumulator stages or a narrower tile, or alias accumulators that are never live
    together.
    """
    code = "TS708"
    name = "tmem-capacity-exceeded"
    order = ORDER_TMEM
    VALID = [memory_program(alloc=TMEM_ALLOC.format(columns=512), options=TMEM_OPTIONS)]
    INVALID = [memory_program(alloc=TMEM_ALLOC.format(columns=640), options=TMEM_OPTIONS, tm_mark="TS708")]

    def check(self, kernel) -> Iterable:
        t = kernel.tmem_allocator
        cap = kernel.options.tmem_capacity_columns
        if t is None or not is_static_int(cap):
            return
        cols = t.data_bytes
        if is_static_int(cols) and cols > cap:
            yield self.diag(f"TMEM usage ({cols} columns) exceeds hardware capacity ({cap} columns). Reduce "
                            "accumulator stages or tile sizes, or use alias groups to share TMEM regions",
                            kernel.at("tmem_allocator"), related=[Related(t.range, "the allocator is created here")])


# --------------------------------------------------------------------------- registers
def _group_label(g) -> str:
    return f"Warp group {g} (warps [{g * WARPS_PER_GROUP}, {(g + 1) * WARPS_PER_GROUP}))"


def _listing(tasks) -> str:
    return ", ".join(f"'{t.name}' (num_registers={t.num_registers})" for t in tasks)


@register
class NonStaticWarpIdx(Rule):
    """
    A task whose `warp_idx` is not a compile-time Python int.

    ## What it does
    Flags `warp_idx` values that are known not to be plain ints (floats, strings, traced
    values). Values ts-lint cannot evaluate are left alone.

    ## Why is this bad?
    Warp specialization and register reallocation are decided when the kernel is generated;
    a task's warp range must be known then.

    ## Example
    `Task(..., warp_idx=4.0, ...)`

    ## Use instead
    `Task(..., warp_idx=4, ...)`
    """
    code = "TS709"
    name = "non-static-warp-idx"
    order = ORDER_WARP_GROUPS
    VALID = [VALID]
    INVALID = [memory_program(tasks=[("Copy", 0, 1, None, ""), ("Pad", 1.0, 3, None, "TS709")])]

    def check(self, kernel) -> Iterable:
        for t in kernel.tasks:
            w = t.warp_idx
            if w is not UNKNOWN and not is_static_int(w):
                yield self.diag(f"Task '{t.name}': warp_idx is not a static int: {w!r}", t.at("warp_idx"))


@register
class WarpGroupRegisterMismatch(Rule):
    """
    Tasks of one 4-warp group ask for different `num_registers`.

    ## What it does
    For each aligned group of 4 warps (`[0, 4)`, `[4, 8)`, ...), compares the
    `num_registers` of the tasks whose warps fall in it (tasks without `num_registers` are
    left out) and flags every value that differs from the first one.

    ## Why is this bad?
    `setmaxnreg` reallocates registers per warp group: all four warps must request the same
    count, or the reallocation is undefined.

    ## Example
    A 1-warp load task with `num_registers=40` and its 3-warp padding task with `48`.

    ## Use instead
    Give every task of the warp group the same `num_registers`.
    """
    code = "TS710"
    name = "warp-group-register-mismatch"
    order = ORDER_WARP_GROUPS
    VALID = [memory_program(tasks=[("Copy", 0, 1, 40, ""), ("Pad", 1, 3, 40, "")]),
             # a 0-warp task whose warp_idx starts a group belongs to no group
             memory_program(tasks=[("Copy", 0, 1, 40, ""), ("Pad", 1, 3, 40, ""), ("Idle", 4, 0, 48, "")])]
    INVALID = [memory_program(tasks=[("Copy", 0, 1, 40, ""), ("Pad", 1, 3, 48, "TS710")]),
               # a 0-warp task inside a group is compared like any other
               memory_program(tasks=[("Copy", 0, 1, 40, ""), ("Pad", 1, 3, 40, ""), ("Idle", 2, 0, 48, "TS710")])]

    def check(self, kernel) -> Iterable:
        seen = set()
        for g, tasks in warp_groups(kernel).items():
            set_ = [t for t in tasks if is_static_int(t.num_registers)]
            if len({t.num_registers for t in set_}) <= 1:
                continue
            first = set_[0]
            for t in set_[1:]:
                if t.num_registers != first.num_registers and id(t) not in seen:
                    seen.add(id(t))
                    yield self.diag(f"{_group_label(g)} has tasks with different num_registers values: "
                                    f"{_listing(tasks)}. All tasks within the same warp group of 4 warps must use "
                                    "the same num_registers setting", t.at("num_registers"),
                                    related=[Related(first.at("num_registers"),
                                                     f"'{first.name}' uses {first.num_registers}")])


@register
class UncoveredWarpGroupRegisters(Rule):
    """
    A 4-warp group where some task sets `num_registers` but not all four warps are covered by such tasks.

    ## What it does
    For each aligned group of 4 warps in which a task sets `num_registers`, lists the warps
    of the group that no task with `num_registers` covers (warps beyond the last task
    included).

    ## Why is this bad?
    `setmaxnreg` is a warp-group operation: warps that do not execute it leave the group's
    register reallocation incomplete.

    ## Example
    A 1-warp task at warp 4 with `num_registers=40` and nothing on warps 5-7.

    ## Use instead
    Add a padding task over the remaining warps with the same `num_registers`
    (`Task(src_resources=[], dst_resources=[], warp_idx=5, num_warps=3, num_registers=40,
    schedule=pad())`).
    """
    code = "TS711"
    name = "uncovered-warp-group-registers"
    order = ORDER_WARP_GROUPS
    VALID = [memory_program(tasks=[("Copy", 0, 1, 40, ""), ("Pad", 1, 3, 40, "")])]
    INVALID = [memory_program(tasks=[("Copy", 0, 1, 40, "TS711"), ("Pad", 1, 2, 40, "")])]

    def check(self, kernel) -> Iterable:
        if any(not (is_static_int(t.warp_idx) and is_static_int(t.num_warps)) for t in kernel.tasks):
            return   # a task with an unknown warp range might cover the gap
        for g, tasks in warp_groups(kernel).items():
            setting = [t for t in tasks if t.num_registers is not None]
            if not setting:
                continue
            covered = set()
            for t in setting:
                covered.update(range(t.warp_idx, t.warp_idx + t.num_warps))
            missing = [w for w in range(g * WARPS_PER_GROUP, (g + 1) * WARPS_PER_GROUP) if w not in covered]
            if missing:
                yield self.diag(f"{_group_label(g)} has num_registers set but warps {missing} are not covered by any "
                                "task with num_registers specified. When num_registers is set, all 4 warps in the "
                                "group must be covered; add a padding task for the missing warps. Tasks in this "
                                f"group: {_listing(tasks)}", setting[0].at("num_registers"))


rule("TS712", "invalid-num-registers", """
    `num_registers` outside 8..256 or not a multiple of 8.

    ## What it does
    Checks at `Task(...)` that `num_registers` is in (0, 256] and divisible by 8.
    ## Why is this bad?
    `setmaxnreg` only accepts multiples of 8 up to 256 registers per thread.
    ## Example
    `Task(..., num_registers=36)`
    ## Use instead
    `Task(..., num_registers=40)`
    """, phase="task", exc="AssertionError", valid=[VALID],
     invalid=[memory_program(tasks=[("Copy", 0, 1, 36, "TS712")])])


def _budget_related(kernel, d):
    return [Related(t.at("num_registers"), f"'{t.name}' asks for {t.num_registers} (default {d})")
            for t in kernel.tasks if is_static_int(t.num_registers)]


# Twelve warps: default budget D = 65536 // (12 * 32 * 8) * 8 = 168 registers per thread.
_TWELVE = [("Copy", 0, 1, "{a}", ""), ("Pad0", 1, 3, "{a}", ""), ("Pad1", 4, 4, "{b}", ""), ("Pad2", 8, 4, "{b}", "")]


def _twelve(a, b, mark=""):
    return memory_program(tasks=[(n, w, c, r.format(a=a, b=b), m) for n, w, c, r, m in _TWELVE], tm_mark=mark)


@register
class RegisterFileExceeded(Rule):
    """
    The tasks together need more registers than the SM's register file.

    ## What it does
    Sums `num_warps x 32 x registers` over all tasks, where registers is the task's
    `num_registers` or the default `D = 65536 // (ceil4(W) x 32 x 8) x 8` (`W` = sum of all
    tasks' `num_warps`), and compares with 65536.

    ## Why is this bad?
    The block cannot be resident: `setmaxnreg` increases would wait forever for registers
    other warps never give back.

    ## Example
    Twelve warps where four ask for 232 and eight keep the default 168: 72704 registers.

    ## Use instead
    Lower `num_registers` of the other warp groups (donors) so the total fits, e.g. 232
    for the compute group and 136 for the others.
    """
    code = "TS713"
    name = "register-file-exceeded"
    order = ORDER_BUDGET
    VALID = [_twelve(232, 136)]
    INVALID = [_twelve(232, 168, "TS713")]

    def check(self, kernel) -> Iterable:
        usage = register_usage(kernel)
        if usage is None:
            return
        d, rows, total, budget = usage
        if total > REGISTER_FILE:
            yield self.diag(f"Too many registers needed: {total} (SM register file capacity: {REGISTER_FILE}); "
                            f"default per-thread budget is {d}", kernel.at("tasks"),
                            related=_budget_related(kernel, d))


@register
class NoTaskWarps(Rule):
    """
    The kernel's tasks have no warps at all (every `num_warps` is 0).

    ## What it does
    Sums `num_warps` over all tasks and flags a total of 0: the default per-thread
    register budget `D = 65536 // (ceil4(W) x 32 x 8) x 8` (TS713) divides by it.

    ## Why is this bad?
    The kernel would launch no thread that runs a schedule; the reference fails computing
    the default budget (`ZeroDivisionError: integer division or modulo by zero`), whatever
    `num_registers` says.

    ## Example
    One copy task with `num_warps=0`, or a warp count computed to 0
    (`num_warps=tile // 32 // 8` with a small tile).

    ## Use instead
    Give the task the warps that run it (`num_warps=1`).
    """
    code = "TS718"
    name = "no-task-warps"
    order = ORDER_BUDGET
    VALID = [memory_program(tasks=[("Copy", 0, 1, None, ""), ("Pad", 1, 0, None, "")])]
    INVALID = [memory_program(tasks=[("Copy", 0, 0, None, "")], tm_mark="TS718")]

    def check(self, kernel) -> Iterable:
        if kernel.tasks and total_warps(kernel) == 0:
            yield self.diag(f"The tasks have no warps in total (num_warps of {len(kernel.tasks)} task(s): all 0); "
                            "the default register budget divides by the warp count", kernel.at("tasks"))


@register
class NegativeRegisterBudget(Rule):
    """
    The tasks borrow more registers than they donate (negative register budget).

    ## What it does
    Sums `num_warps x (D - registers)` over all tasks (`D` as in TS713) and flags a
    negative total. Not repeated when TS713 already fires (a negative budget then follows).

    ## Why is this bad?
    The reference rejects it (the printout docs call a negative budget fine, but
    4.8.1 raises): warps that raise their budget rely on others lowering theirs.

    ## Example
    Twelve warps (D = 168): four ask for 176, the others keep 168 (budget -32), although
    the total (65536) still fits.

    ## Use instead
    Let other warp groups donate: lower their `num_registers` below the default.
    """
    code = "TS714"
    name = "negative-register-budget"
    order = ORDER_BUDGET
    VALID = [_twelve(176, 160)]
    INVALID = [_twelve(176, 168, "TS714")]

    def check(self, kernel) -> Iterable:
        usage = register_usage(kernel)
        if usage is None:
            return
        d, rows, total, budget = usage
        if budget < 0 and total <= REGISTER_FILE:
            yield self.diag(f"Negative register budget: {budget} (tasks raise their registers above the default "
                            f"{d} by more than others lower theirs)", kernel.at("tasks"),
                            related=_budget_related(kernel, d))
