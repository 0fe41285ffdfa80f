"""TS239 from both front ends: a `create` factory on a base class the user wrote, inherited
by the resource the kernel uses (the shape a kernel author writes it in)."""
from ts_runtime.diagnostics import Severity
from ts_runtime.rules._programs import copy_program
from ts_runtime.testing import codes_and_lines, run_source

BASE = '''

@dataclass(kw_only=True)
class Factory(MemoryResource):
    label = "dst"

    @classmethod
    def create(cls, *, tensor):{mark}
        return cls(name=cls.label)
'''


def _program(mark: str) -> str:
    # the kernel's Dst derives from the user's base class
    src = copy_program()
    head = "@dataclass(kw_only=True)\nclass Dst(MemoryResource):"
    assert head in src
    return src.replace(head, BASE.format(mark=mark).strip("\n") + "\n\n\n"
                       + head.replace("(MemoryResource)", "(Factory)"), 1)


def test_an_inherited_create_factory_same_finding_from_both_front_ends():
    from ts_lint.api import lint_source
    src = _program("  # expect: TS239")
    line = src.splitlines().index("    def create(cls, *, tensor):  # expect: TS239") + 1
    runtime = codes_and_lines(run_source(src), (Severity.ERROR,))
    lint = codes_and_lines(lint_source(src, "program.py"), (Severity.ERROR,))
    assert runtime == lint == {("TS239", line)}
    message = next(d.message for d in lint_source(src, "program.py") if d.code == "TS239")
    assert message == ("Factory.create replaces the MemoryResource method the framework calls as "
                       "`resource.create()`, and that call does not fit it: it is missing 1 required argument: "
                       "'tensor'; rename it or keep the framework's signature")


def test_a_create_the_framework_can_call_is_not_reported():
    from ts_lint.api import lint_source
    src = _program("").replace("def create(cls, *, tensor):", "def create(cls, *, tensor=None):")
    assert codes_and_lines(run_source(src), (Severity.ERROR,)) == set()
    assert codes_and_lines(lint_source(src, "program.py"), (Severity.ERROR,)) == set()
