"""Program templates for rule examples (whole TS programs, importing only ts_runtime).

Each template renders a complete, runnable program; examples substitute the part their
rule is about. The rendered text is what the tests run through the DSL, ts-lint and the
reference, and what docs/rules.md shows.
"""
from __future__ import annotations

import textwrap

_HEADER = '''\
from dataclasses import dataclass

from ts_runtime import (
    Every, consumer_work, domain_loop, producer_work, schedule, when_false, when_true,
)
from ts_runtime.enums import FIRST_ITER, LAST_ITER
from ts_runtime.resources import MemoryResource, TaskLocalVariable
from ts_runtime.task import Task
from ts_runtime.task_manager import TaskManager


@dataclass(kw_only=True)
class Src(MemoryResource):
    item: object = TaskLocalVariable.uninitialized()
    flag: object = TaskLocalVariable.uninitialized()

    def __post_init__(self):
        self.item = TaskLocalVariable(dtype=int, default=0)
        self.flag = TaskLocalVariable(dtype=bool, default=False)

    @consumer_work(returns=item)
    def get_item(self, stage_info):
        return stage_info.loop_offset

    @consumer_work(returns=flag)
    def get_flag(self, stage_info):
        return True


@dataclass(kw_only=True)
class Dst(MemoryResource):
    @producer_work
    def set_item(self, stage_info, data):
        pass

    @producer_work
    def fill(self, stage_info):
        pass
'''

_BUILD = '''

def build():
    src, dst = Src(name="src"), Dst(name="dst")

    @schedule
    def copy(src, dst):
{body}

    task = Task(name="Copy", src_resources=[src], dst_resources=[dst], warp_idx=0, num_warps=1,
                schedule=copy(src, dst))
    return TaskManager(tasks=[task], resource_dependency_graph={{dst: [src]}}, verbose=False)
'''

COPY_BODY = '''\
with domain_loop(0, 8, 1):
    v = src.get_item()
    dst.set_item(data=v)
'''


def copy_program(body: str = COPY_BODY, extra: str = "") -> str:
    """One task copying Src -> Dst; `body` is the schedule body (unindented)."""
    return _HEADER + extra + _BUILD.format(body=textwrap.indent(textwrap.dedent(body), " " * 8))


# a schedule whose `else` branch, picked by a compile-time constant, reads a name that
# nothing binds (TS136 where the branch runs: tests of both front ends)
CONST_EXPR_BRANCH_BODY = '''
with domain_loop(0, 8, 1):
    if cutlass.const_expr(FAST):
        v = src.get_item()
    else:
        v = src.get_item()
        dst.set_item(data=undefined_name)  # here
    dst.set_item(data=v)
'''


def const_expr_branch_program(fast: bool) -> str:
    """copy_program with CONST_EXPR_BRANCH_BODY, `FAST = fast`."""
    return copy_program(CONST_EXPR_BRANCH_BODY, extra=f"\nimport cutlass\n\nFAST = {fast}\n")


def custom_program(build: str, extra: str = "") -> str:
    """Src/Dst classes plus `extra` definitions and a hand-written `build()`."""
    return _HEADER + extra + "\n\n" + textwrap.dedent(build)

_PERSISTENT_EXTRA = '''

from ts_runtime import work_tile_loop
from ts_runtime.resources import TileSchedulerConfig, WorkQueue


@dataclass(kw_only=True, init=False)
class Queue(WorkQueue):
    def skip_work_tile_if(self, work_tile):
        return False
'''

_PERSISTENT_BUILD = '''

def build():
    src, dst = Src(name="src"), Dst(name="dst")
    wq = Queue(name="wq", tile_scheduler_config=(
        TileSchedulerConfig.create_static_persistent_tile_scheduler_params(None)))

    @schedule
    def copy(src, dst, wq):
{body}

    task = Task(name="Copy", src_resources=[src, wq], dst_resources=[dst], warp_idx=0, num_warps=1,
                schedule=copy(src, dst, wq))
    return TaskManager(tasks=[task], resource_dependency_graph={{dst: [src, wq]}}, verbose=False)
'''

PERSISTENT_BODY = '''\
with work_tile_loop(wq, skip_if=Queue.skip_work_tile_if) as tiles:
    with tiles.skippable(), domain_loop(0, 8, 1):
        v = src.get_item()
        dst.set_item(data=v)
    wq.try_wait()
    wq.wait()
    wq.get_and_advance_work_tile()
    wq.release()
'''


def persistent_program(body: str = PERSISTENT_BODY) -> str:
    """One persistent task (static WorkQueue `wq`, Queue.skip_work_tile_if) copying Src -> Dst."""
    return (_HEADER + _PERSISTENT_EXTRA
            + _PERSISTENT_BUILD.format(body=textwrap.indent(textwrap.dedent(body), " " * 8)))


_DYNAMIC_EXTRA = '''

class VarlenTask(Task):
    def get_domain(self, work_tile_coord):
        return 4

    def get_rows(self, work_tile_coord):
        return 4

    def bad_domain(self):
        return 4
'''

_DYNAMIC_BUILD = '''

def build():
    src, dst = Src(name="src"), Dst(name="dst")

    @schedule
    def copy(src, dst):
{body}

    task = VarlenTask(name="Copy", src_resources=[src], dst_resources=[dst], warp_idx=0,
                      num_warps=1, schedule=copy(src, dst))
    return TaskManager(tasks=[task], resource_dependency_graph={{dst: [src]}}, verbose=False)
'''


def dynamic_program(body: str) -> str:
    """A VarlenTask (Task subclass with get_domain) copying Src -> Dst."""
    return (_HEADER + _DYNAMIC_EXTRA
            + _DYNAMIC_BUILD.format(body=textwrap.indent(textwrap.dedent(body), " " * 8)))
