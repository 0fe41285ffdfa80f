"""Registries filled when a class is created: a user class decorator runs with the class
(as a function decorator does), a base's `__init_subclass__` runs for each subclass, a
user metaclass's `__new__` / `__init__` run for each class it makes (`super().__new__`
gives the class). The task list built from such a registry is then the real one, so no
TS351 / TS352 ("not used by any task") comes from a registry taken for empty. Where the
class creation cannot be run, the containers it could fill are incomplete: the manager
checks that need the task list are skipped; so are those of a registry given to code
ts-lint does not run (`register_all(ROLES)` from a module it does not read).

Reference verdicts (nvidia-cutlass-dsl 4.8.1): every REGISTRIES program is accepted;
`NOT_REGISTERED` (a decorator that returns the class without registering it: the task
list really is empty) is rejected with TaskManagerError (no tasks) and gets TS351/TS352
from both front ends.
"""
import pytest

from ts_runtime.diagnostics import Severity
from ts_runtime.testing import codes_and_lines, run_program

from ts_lint.api import analyze_source
from ts_lint.rules_lint import COPY_SCHEDULES

from lint_parity import HEADER, assert_parity

_BUILD = '''

def build():
    cfg = PipelineConfig.create_tma_async_pipeline_cfg(
        num_stages=2, num_bytes=4096,
        producer_group=CooperativeGroup(Agent.Thread),
        consumer_group=CooperativeGroup(Agent.Thread, 128))
    inp, out = InGmem(name="in"), OutGmem(name="out")
    smem = Smem(name="smem", pipeline_config=cfg)
    alloc = SmemAllocator(); alloc.add_resource(smem); alloc.compute_layout()
''' + COPY_SCHEDULES + '''
    io = {{"StoreTask": ([smem], [out], store_schedule), "LoadTask": ([inp], [smem], load_schedule)}}
    tasks = []
    for role in {roles}:
        src, dst, sched = io[role.NAME]
        tasks.append(Task(name=role.NAME, src_resources=src, dst_resources=dst, warp_idx=role.WARP,
                          num_warps=role.WARPS, schedule=sched(*src, *dst)))
    return TaskManager(tasks=tasks, resource_dependency_graph={{smem: [inp], out: [smem]}},
                       smem_allocator=alloc, verbose=False)  # TM
'''

_ROLES = '''
{deco}class StoreRole{base}:
    NAME, WARP, WARPS = "StoreTask", 0, 4


{deco}class LoadRole{base}:
    NAME, WARP, WARPS = "LoadTask", 4, 1
'''


def program(registry: str, roles: str = "ROLES", base: str = "", deco: str = "") -> str:
    return HEADER + registry + _ROLES.format(base=base, deco=deco) + _BUILD.format(roles=roles)


DECORATOR_LIST = program('''
ROLES = []


def role(cls):
    ROLES.append(cls)
    return cls
''', deco="@role\n")

DECORATOR_DICT = program('''
ROLES = {}


def role(cls):
    ROLES[cls.NAME] = cls
    return cls
''', roles="ROLES.values()", deco="@role\n")

DECORATOR_FACTORY = program('''
class Registry:
    def __init__(self):
        self.items = []

    def register(self, kind):
        def deco(cls):
            cls.KIND = kind
            self.items.append(cls)
            return cls
        return deco


REG = Registry()
''', roles="REG.items", deco='@REG.register("copy")\n')

INIT_SUBCLASS = program('''
class Role:
    registry = []

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        Role.registry.append(cls)
''', roles="Role.registry", base="(Role)")

INIT_SUBCLASS_KEYWORD = program('''
class Role:
    registry = {}

    def __init_subclass__(cls, order=0, **kw):
        super().__init_subclass__(**kw)
        Role.registry[order] = cls
''', roles="[Role.registry[k] for k in sorted(Role.registry)]", base="(Role)").replace(
    "class LoadRole(Role)", "class LoadRole(Role, order=1)")

METACLASS_NEW = program('''
class _Registry(type):
    roles = []

    def __new__(mcls, name, bases, ns):
        cls = super().__new__(mcls, name, bases, ns)
        if name != "Role":
            mcls.roles.append(cls)
        return cls


class Role(metaclass=_Registry):
    pass
''', roles="_Registry.roles", base="(Role)")

METACLASS_INIT = program('''
class _Registry(type):
    roles = []

    def __init__(cls, name, bases, ns):
        super().__init__(name, bases, ns)
        _Registry.roles.append(cls)
''', roles="_Registry.roles", base="(metaclass=_Registry)")

METACLASS_TYPE_NEW = METACLASS_NEW.replace("super().__new__(mcls, name, bases, ns)",
                                          "type.__new__(mcls, name, bases, dict(ns, TAG=1))")

REGISTRIES = {"decorator-list": DECORATOR_LIST, "decorator-dict": DECORATOR_DICT,
              "decorator-factory": DECORATOR_FACTORY, "init-subclass": INIT_SUBCLASS,
              "init-subclass-keyword": INIT_SUBCLASS_KEYWORD, "metaclass-new": METACLASS_NEW,
              "metaclass-type-new": METACLASS_TYPE_NEW,
              "metaclass-init": METACLASS_INIT}

NOT_REGISTERED = program('''
ROLES = []


def role(cls):
    return cls
''', deco="@role\n")


@pytest.mark.parametrize("name", list(REGISTRIES))
def test_a_registry_filled_at_class_creation_is_known(name, tmp_path):
    kernel = assert_parity(REGISTRIES[name], tmp_path)
    assert sorted(t.name for t in kernel.tasks) == ["LoadTask", "StoreTask"]
    assert [d for d in analyze_source(REGISTRIES[name], "p.py").diagnostics
            if d.severity is not Severity.INFO] == []


def test_a_registry_the_decorator_never_fills_is_empty(tmp_path):
    """The control: the list really is empty, and both front ends say so at the manager."""
    line = next(i for i, l in enumerate(NOT_REGISTERED.splitlines(), 1) if l.endswith("# TM")) - 1
    path = tmp_path / "program.py"
    path.write_text(NOT_REGISTERED)
    lint = codes_and_lines(analyze_source(NOT_REGISTERED, str(path)).diagnostics, (Severity.ERROR,))
    assert {"TS351", "TS352"} <= {c for c, _ in lint} and {l for _, l in lint} == {line}
    assert lint == codes_and_lines(run_program(str(path)), (Severity.ERROR,))


def test_a_class_creation_ts_lint_cannot_run_leaves_the_registry_unknown():
    """`__init_subclass__` (or a metaclass method) that is not a function the interpreter
    can run: the registry may have been filled; no TS351 / TS352 from it."""
    src = program('''
from role_registry import register_role


class Role:
    registry = []
    __init_subclass__ = classmethod(register_role)
''', roles="Role.registry", base="(Role)")
    a = analyze_source(src, "p.py")
    assert [d for d in a.diagnostics if d.severity is Severity.ERROR] == []
    assert any("cannot run" in d.message for d in a.unknowns)


@pytest.mark.parametrize("fill", ["register_all(ROLES)", "plugins.load(into=ROLES)", "unknown_registry().fill(ROLES)",
                                  "register_all((ROLES, 1))", "register_all(holder)"])
def test_a_registry_given_to_code_ts_lint_does_not_run_is_unknown(fill):
    """A list given to a function of a module ts-lint does not read (or to an unknown
    callee) may be filled there: the task list built from it is not taken for empty."""
    src = program('''
import plugins
from role_plugins import register_all, unknown_registry

ROLES = []


class Holder:
    def __init__(self, roles):
        self.roles = roles


holder = Holder(ROLES)
''' + fill + "\n")
    a = analyze_source(src, "p.py")
    assert [d for d in a.diagnostics if d.severity is Severity.ERROR] == []
    # the control: nothing receives the list, which stays certainly empty
    empty = analyze_source(src.replace(fill + "\n", "\n"), "p.py")
    assert {"TS351", "TS352"} <= {d.code for d in empty.diagnostics if d.severity is Severity.ERROR}


def test_a_metaclass_new_that_returns_something_else():
    """A metaclass `__new__` whose result is not the class: the name is bound to that."""
    src = program('''
class _Registry(type):
    roles = []

    def __new__(mcls, name, bases, ns):
        cls = super().__new__(mcls, name, bases, ns)
        mcls.roles.append(cls)
        return 7 if name == "Marker" else cls


class Marker(metaclass=_Registry):
    pass


assert Marker == 7
''', roles="_Registry.roles[1:]", base="(metaclass=_Registry)")
    a = analyze_source(src, "p.py")
    assert [d for d in a.diagnostics if d.severity is not Severity.INFO] == []
    bad = analyze_source(src.replace("assert Marker == 7", "assert Marker != 7"), "p.py")
    assert [d.code for d in bad.diagnostics if d.severity is Severity.ERROR]


@pytest.mark.reference
def test_reference_verdicts():
    from oracle import reference_available
    from oracle_batch import reference_verdicts
    if not reference_available():
        pytest.skip("reference not installed")
    progs = list(REGISTRIES.values()) + [NOT_REGISTERED]
    verdicts = reference_verdicts(progs)
    assert [v.accepted for v in verdicts[:-1]] == [True] * len(REGISTRIES), \
        [(v.exc_type, v.message[:200]) for v in verdicts]
    assert not verdicts[-1].accepted
