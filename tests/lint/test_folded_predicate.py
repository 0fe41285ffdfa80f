"""TS970: a resource attribute tested as a condition while it held a compile-time value,
then changed by a later work call, in a kernel compiled with FrontendNext
(ts_lint.extract.kernel._folded_predicates). Each case's verdict was checked against the
reference (PHASE_PREDICATE_FOLDED_STALE, or accepted)."""
from ts_lint.api import lint_source
from ts_lint.rules_lint import _FLAG_KERNEL, _FLAG_LOOP


def _codes(src):
    return [(d.code, d.range.line) for d in lint_source(src, "k.py") if d.code == "TS970"]


def _line(src, text):
    return src[:src.index(text)].count("\n") + 1


def _with(schedule, kernel=_FLAG_KERNEL):
    return kernel.replace(_FLAG_LOOP, schedule, 1)


def test_set_after_the_loop_that_tested_it():
    src = _with("        with domain_loop(0, 64, 1):\n            v = src.get()\n            dst.put(v=v)\n"
                "        dst.set_flag()\n")
    assert _codes(src) == [("TS970", _line(src, "        dst.set_flag()"))]


def test_set_first_is_accepted():
    src = _with("        dst.set_flag()\n        with domain_loop(0, 64, 1):\n            v = src.get()\n"
                "            dst.put(v=v)\n")
    assert _codes(src) == []


def test_the_plain_front_end_does_not_fold():
    src = _with("        with domain_loop(0, 64, 1):\n            v = src.get()\n            dst.put(v=v)\n"
                "        dst.set_flag()\n").replace("cute.compile[cute.FrontendNext](launch,", "cute.compile(launch,", 1)
    assert _codes(src) == []


def test_a_run_time_value_from_post_init_is_not_folded():
    src = _with("        with domain_loop(0, 64, 1):\n            v = src.get()\n            dst.put(v=v)\n"
                "        dst.set_flag()\n").replace("        self.flag = cutlass.Boolean(False)\n",
                                                  "        self.flag = cute.arch.thread_idx()[0] == 0\n", 1)
    assert _codes(src) == []


def test_a_test_in_a_helper_the_work_method_calls():
    src = _with("        with domain_loop(0, 64, 1):\n            v = src.get()\n            dst.put(v=v)\n"
                "        dst.set_flag()\n").replace(
        "        if self.flag:\n            self.out[stage_info.loop_offset] = v\n",
        "        self._store(stage_info, v)\n\n    @cute.jit\n    def _store(self, stage_info, v):\n"
        "        if self.flag:\n            self.out[stage_info.loop_offset] = v\n", 1)
    assert _codes(src) == [("TS970", _line(src, "        dst.set_flag()"))]


# two tasks: T tests the flag in its loop, U sets it in its head; FrontendNext traces them
# in the TaskManager's task order (not the warp order)
_TWO_TASKS = '''    @schedule
    def other(dst: Dst) -> None:
        dst.cset_flag()
        with domain_loop(0, 1, 1):
            pass

    task = Task(name="T", src_resources=[src], dst_resources=[dst], warp_idx={wt}, num_warps=1,
                schedule=copy(src, dst))
    utask = Task(name="U", src_resources=[dst], dst_resources=[], warp_idx={wu}, num_warps=1,
                 schedule=other(dst))
    tm = TaskManager(tasks={order}, resource_dependency_graph={{dst: [src]}})'''
_ONE_TASK = '''    task = Task(name="T", src_resources=[src], dst_resources=[dst], warp_idx=0, num_warps=1,
                schedule=copy(src, dst))
    tm = TaskManager(tasks=[task], resource_dependency_graph={dst: [src]})'''
_CSET = '''    @consumer_work(work_attrs=WorkAttr.AUXILIARY)
    @cute.jit
    def cset_flag(self, stage_info: StageInfo) -> None:
        self.flag = cutlass.Int32(stage_info.loop_offset) == 0

    @producer_work
    @cute.jit
    def put('''


def _two(order, wt, wu):
    src = _with("        with domain_loop(0, 64, 1):\n            v = src.get()\n            dst.put(v=v)\n")
    src = src.replace("    @producer_work\n    @cute.jit\n    def put(", _CSET, 1)
    return src.replace(_ONE_TASK, _TWO_TASKS.format(order=order, wt=wt, wu=wu), 1).replace(
        "block=(32, 1, 1)", "block=(64, 1, 1)", 1)


def test_another_task_sets_it_later_in_task_order():
    src = _two("[task, utask]", 1, 0)
    assert _codes(src) == [("TS970", _line(src, "        dst.cset_flag()"))]
    d = [d for d in lint_source(src, "k.py") if d.code == "TS970"][0]
    assert [r.range.line for r in d.related] == [_line(src, "            dst.put(v=v)")]   # the test


def test_another_task_sets_it_earlier_in_task_order():
    assert _codes(_two("[utask, task]", 0, 1)) == []


def test_a_python_bool_attribute_may_change():
    # `flag: bool = False`: folded too, but the reference accepts its change
    src = _with("        with domain_loop(0, 64, 1):\n            v = src.get()\n            dst.put(v=v)\n"
                "        dst.set_flag()\n").replace(
        "    flag: object = None\n\n    def __post_init__(self) -> None:\n        self.flag = cutlass.Boolean(False)\n",
        "    flag: bool = False\n", 1)
    assert "flag: bool = False" in src
    assert _codes(src) == []
