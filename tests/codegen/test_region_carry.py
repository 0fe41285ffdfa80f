"""Which resource fields a loop region carries (TaskEmitter.bind_region_attrs), compiled on
the CPU (sm_90a, fake tensors).

tests/codegen/kernels/colsum_late.py keeps its sum in fields that `__init__` leaves None:
`acc` (an init work call sets Float32(0)), `started` (a Python `False`, reset per tile,
`True` after the first row) and `sign` (set inside the work-tile loop, flipped per row).
With cute.FrontendNext the work-tile loop carries `acc` and `started` (the Python bool
turned into a Boolean, as that front end does), and `Rows.seen` (an Int32 the reduce task
counts rows in), and the domain loop carries `sign`. With
plain `cute.compile`, which keeps Python values as they are, `started` stays a Python
value and is not carried. The GPU tests check the sums these carries give.
"""
from __future__ import annotations

from ._harness import run_script

SCRIPT = r'''
import importlib.util, json
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream
import cutlass
import ts_runtime.codegen.task_runner as TR
seen = []
orig = TR.TaskEmitter.bind_region_attrs
def spy(self, entries):
    keys = orig(self, entries)
    seen.append([self.task.name, sorted(self.res(k[1]).label + "." + k[2] for k in keys)])
    return keys
TR.TaskEmitter.bind_region_attrs = spy
spec = importlib.util.spec_from_file_location("colsum_late", "tests/codegen/kernels/colsum_late.py")
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
src = make_fake_compact_tensor(cutlass.Float32, (64, 1024), stride_order=(1, 0), assumed_align=16)
dst = make_fake_compact_tensor(cutlass.Float32, (1024,), assumed_align=16)
out = {}
for name, compile_ in (("next", cute.compile[cute.FrontendNext]), ("plain", cute.compile)):
    seen.clear()
    compile_(mod.colsum_late, src, dst, make_fake_stream())
    out[name] = [list(x) for x in seen]
print("RESULT " + json.dumps(out))
'''


def test_loop_regions_carry_the_fields_their_bodies_assign():
    result, proc = run_script(SCRIPT, env={"CUTE_DSL_ARCH": "sm_90a"})
    assert result is not None, proc.stdout[-3000:] + proc.stderr[-3000:]
    # per task: the work-tile loop's keys, then the domain loop's (inside it)
    assert result["next"] == [["ReduceTask", ["colsum.acc", "colsum.started", "rows.seen"]], ["ReduceTask", ["colsum.sign"]],
                              ["LoadTask", []], ["LoadTask", []]]
    assert result["plain"] == [["ReduceTask", ["colsum.acc", "rows.seen"]], ["ReduceTask", ["colsum.sign"]],
                               ["LoadTask", []], ["LoadTask", []]]
