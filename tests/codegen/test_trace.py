"""Trace-level checks of the emitter (CPU; the kernels are traced and compiled for sm_100a).

`merge_aow.py`: with `advance_on_wait`, each separately waited Merge member owns its wait
cursor (the pre-fix emitter advanced the group's one cursor at every member wait, so the
second member waited on the next stage and the kernel deadlocked on the GPU); without it
both waits use the group's cursor, which only the group release advances.
"""
from __future__ import annotations

import pytest

from ._harness import run_script

SCRIPT = r'''
import importlib.util, json
from ts_runtime.codegen import task_runner
seen = []
orig = task_runner.TaskEmitter.op_wait
def op_wait(self, e):
    seen.append([AOW, self.res(e.resource).label, self.res(self.wsrc(e.resource)).label,
                 self.res(self.csrc(e.resource)).label])
    return orig(self, e)
task_runner.TaskEmitter.op_wait = op_wait
spec = importlib.util.spec_from_file_location("k", "tests/codegen/kernels/merge_aow.py")
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
for AOW in (True, False):
    mod.compile_fake(AOW)
print("RESULT " + json.dumps(seen))
'''


@pytest.fixture(scope="module")
def waits():
    result, proc = run_script(SCRIPT, env={"CUTE_DSL_ARCH": "sm_100a", "CUTE_DSL_DISABLE_FILE_CACHING": "1"})
    assert result is not None, f"trace failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    return result


def test_merge_members_own_their_wait_cursor_with_advance_on_wait(waits):
    got = sorted({(member, owner, group) for aow, member, owner, group in waits if aow})
    assert got == [("sa", "sa", "ab"), ("sb", "sb", "ab")]


def test_merge_members_share_the_group_cursor_otherwise(waits):
    got = sorted({(member, owner, group) for aow, member, owner, group in waits if not aow})
    assert got == [("sa", "ab", "ab"), ("sb", "ab", "ab")]
