"""Abstract values of the kernel-building interpreter.

Plain Python data (int, float, str, bool, None, tuple, list, dict) stands for itself;
`UNKNOWN` and `RUNTIME` (ts_runtime.model.values) stand for what cannot be known
statically and for traced run-time values. Everything else that TS code manipulates
(functions, classes, resources, configs, schedules, tasks, ...) has a class here.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ts_runtime.model.values import RUNTIME, UNKNOWN

__all__ = ["UNKNOWN", "RUNTIME", "is_abstract", "is_concrete"]


def is_abstract(v) -> bool:
    return v is UNKNOWN or v is RUNTIME


_SCALARS = (bool, int, float, str, bytes, complex)


def is_concrete(v, depth: int = 0, budget=None) -> bool:
    """Plain Python data with no abstract value inside (safe to compute with).

    Large or deep containers count as not concrete: computing on them is not worth it."""
    if v is None or isinstance(v, _SCALARS):
        return True
    if depth > 6:
        return False
    if budget is None:
        budget = [256]
    if isinstance(v, (tuple, list, set, frozenset)):
        budget[0] -= len(v)
        if budget[0] < 0:
            return False
        return all(is_concrete(x, depth + 1, budget) for x in v)
    if isinstance(v, dict):
        budget[0] -= 2 * len(v)
        if budget[0] < 0:
            return False
        return all(is_concrete(k, depth + 1, budget) and is_concrete(x, depth + 1, budget)
                   for k, x in v.items())
    if isinstance(v, range):
        return True
    import enum
    return isinstance(v, enum.Enum)


class QualRef:
    """An imported object known only by its qualified name (`cutlass.cute.arch.block_idx`)."""
    __slots__ = ("qualname",)

    def __init__(self, qualname: str):
        self.qualname = qualname

    def attr(self, name: str) -> "QualRef":
        return QualRef(f"{self.qualname}.{name}")

    def __repr__(self):
        return f"<{self.qualname}>"


@dataclass(eq=False)
class DtypeVal:
    """A cutlass numeric type such as `cutlass.Float16` (only `.width` is used)."""
    name: str
    width: int


class Scope:
    """Variables of a module, class body, function call or comprehension."""
    __slots__ = ("vars", "parent", "kind", "globals_", "nonlocals", "module", "qualprefix", "func")

    def __init__(self, kind: str, parent: Optional["Scope"] = None, module: Optional["Scope"] = None):
        self.vars: dict = {}
        self.parent = parent
        self.kind = kind            # module | class | function | comprehension
        self.globals_: set = set()
        self.nonlocals: set = set()
        self.module = module if module is not None else (self if kind == "module" else None)
        self.qualprefix = ""
        self.func = None            # the FuncVal a function scope is a call of


@dataclass(eq=False)
class FuncVal:
    """A user function or method (def or lambda) with its closure."""
    node: Any
    closure: Scope
    name: str
    qualname: str
    module: str = "__main__"
    owner: Any = None                 # ClassVal that defines it (methods)
    defaults: dict = field(default_factory=dict)     # param name -> default value
    is_jit: bool = False              # @cute.jit / @cute.kernel: annotated params are traced
    is_kernel: bool = False           # @cute.kernel: a launch turns plain Python values dynamic
    kind: str = "function"            # function | staticmethod | classmethod | property
    first_decorator: Any = None       # libcst node of the first decorator (co_firstlineno)
    attrs: dict = field(default_factory=dict)        # attributes set on the function object

    def __repr__(self):
        return f"<function {self.qualname}>"


@dataclass(eq=False)
class BuiltinFunc:
    """A function implemented by the interpreter (TS API, Python builtins, ...)."""
    name: str
    impl: Any                          # impl(interp, args, kwargs, call) -> value
    qualname: str = ""
    owner: Any = None
    required_positional: Optional[int] = None
    self_val: Any = None              # bound receiver, if any
    # the ts_runtime callable whose signature a call binds to first (TS907, `TSApi.bind_api`):
    # `live` as the user calls it (a class, a function), or an unbound method (`live_method`)
    live: Any = None
    live_what: str = ""
    live_method: bool = False

    def __repr__(self):
        return f"<builtin {self.qualname or self.name}>"


@dataclass(eq=False)
class PartialVal(BuiltinFunc):
    """`functools.partial(target, *pre, **pre_kw)`; `attrs` are attributes set on it
    (a partial has no `__name__` of its own)."""
    target: Any = None
    pre: tuple = ()
    pre_kw: dict = field(default_factory=dict)
    attrs: dict = field(default_factory=dict)


@dataclass(eq=False)
class BoundMethod:
    self_val: Any
    func: Any

    def __repr__(self):
        return f"<bound {self.func!r}>"


@dataclass(eq=False)
class FieldVal:
    """`dataclasses.field(...)` or `TaskLocalVariable.uninitialized()` in a class body."""
    default: Any = None
    has_default: bool = False
    default_factory: Any = None
    init: bool = True
    kw_only: Any = None
    tlv: bool = False
    name: Optional[str] = None


@dataclass(eq=False)
class DataclassField:
    name: str
    annotation: Any = None             # libcst annotation node (or None)
    default: Any = None
    has_default: bool = False
    default_factory: Any = None
    init: bool = True
    kw_only: bool = False
    tlv_declared: bool = False         # uninitialized() placeholder or TaskLocalVariable annotation
    tlv_placeholder: bool = False


@dataclass(eq=False)
class ClassVal:
    name: str
    qualname: str
    module: str = "__main__"
    bases: list = field(default_factory=list)
    namespace: dict = field(default_factory=dict)
    mro: list = field(default_factory=list)           # [ClassVal], self first
    node: Any = None
    builtin: Optional[str] = None      # TS class name for ts_runtime classes, "object"
    is_dataclass: bool = False
    dc_init: bool = True
    dc_kw_only: bool = False
    own_fields: list = field(default_factory=list)    # [DataclassField] declared in this class
    work: dict = field(default_factory=dict)          # name -> WorkMethodModel (own, decorated)
    decorate_error: bool = False       # a decorate-phase error in this class
    unknown_work: bool = False         # a work method whose stage/returns is unknown
    live: Any = None                   # the ts_runtime class for builtins
    named_tuple: bool = False          # a typing.NamedTuple / collections.namedtuple class
    metaclass: Any = None              # a user metaclass (ClassVal), inherited by subclasses
    opaque_init: bool = False          # a decorator / metaclass ts-lint does not model may change __init__

    @property
    def full_qualname(self) -> str:
        return f"{self.module}.{self.qualname}"

    def lookup(self, name: str):
        """(class, value) of the first class in the MRO whose namespace has `name`."""
        for k in self.mro:
            if name in k.namespace:
                return k, k.namespace[name]
        return None, None

    def is_sub(self, builtin_name: str) -> bool:
        return any(k.builtin == builtin_name for k in self.mro)

    def __repr__(self):
        return f"<class {self.qualname}>"


@dataclass(eq=False)
class InstanceVal:
    cls: ClassVal
    attrs: dict = field(default_factory=dict)

    def __repr__(self):
        return f"<{self.cls.name} instance>"


@dataclass(eq=False)
class ResourceObj(InstanceVal):
    """A MemoryResource instance (one per construction, as at run time)."""
    rid: int = 0
    range: Any = None
    model: Any = None                  # ResourceModel, built on first use
    model_error: bool = False
    group: Any = None                  # the PipelineGroup (ResourceObj) it belongs to
    uncertain: Optional[str] = None    # why the model is not reliable
    node: Any = None                   # the constructor call (for keyword ranges)
    lost_init: Optional[tuple] = None  # its own __init__ skipped the base's (ResourceModel.lost_init)
    lost_attrs: bool = False           # given to code ts-lint does not run, or a setattr of an unknown name

    def __repr__(self):
        return f"<{self.cls.name} {self.attrs.get('name', '')!r}>"


@dataclass(eq=False)
class TaskObj(InstanceVal):
    model: Any = None                  # TaskModel once Task.__init__ ran
    node: Any = None                   # the call that constructs it (`SegmentTask(...)`)
    ok: bool = True
    reason: Optional[str] = None


@dataclass(eq=False)
class TLVVal:
    """A TaskLocalVariable instance."""
    dtype: Any = None
    owner: Any = None
    field_name: Optional[str] = None


@dataclass(eq=False)
class CoopGroupVal:
    agent: Any
    size: Any = 1


@dataclass(eq=False)
class ConfigVal:
    model: Any                          # PipelineModel


@dataclass(eq=False)
class TileSchedCfgVal:
    tile_scheduler_type: Any


@dataclass(eq=False)
class AllocationVal:
    name: Any
    space: str = "smem"
    size: Any = 0
    alignment: Any = 128
    dtype: Any = None
    count: Any = 1
    offset: Any = None
    range: Any = None


@dataclass(eq=False)
class AllocatorVal:
    space: str
    range: Any
    allocations: list = field(default_factory=list)
    alias_groups: list = field(default_factory=list)
    resources: list = field(default_factory=list)
    groups: list = field(default_factory=list)
    laid_out: bool = False
    total: Any = 0
    uncertain: Optional[str] = None


@dataclass(eq=False)
class GeneratorCMVal:
    """What a `@contextlib.contextmanager` function returns when called: its body runs
    around the `with` block, the statements before its `yield` when the block is entered
    and the rest when it is left (statements.enter / exit), for a body of the simple form
    `setup; yield value; teardown` (no `try`, one top-level `yield`); any other body in a
    schedule makes the capture incomplete."""
    func: Any
    args: list = field(default_factory=list)
    kwargs: dict = field(default_factory=dict)
    state: Any = None                  # (scope, self_val, statements after the yield) once entered


@dataclass(eq=False)
class ScheduleFuncVal:
    """`schedule(fn)`: `func` is the function whose body is captured, called with `pre`
    (a bound method's `self`, a partial's leading arguments), the resource proxies and
    `pre_kw`; `source` is what `schedule()` was given (a partial's `__name__` is read from
    it when the schedule is called, as the reference's wrapper does)."""
    func: FuncVal
    pre: tuple = ()
    pre_kw: dict = field(default_factory=dict)
    source: Any = None

    @property
    def name(self):
        """The schedule's name (`fn.__name__`), or None when `fn` has none (a partial)."""
        src = self.source
        if isinstance(src, PartialVal):
            return src.attrs.get("__name__")
        return fn_name(self.func)


def fn_name(func) -> str:
    """`func.__name__` of a user function (an assigned `__name__` included)."""
    v = func.attrs.get("__name__", func.name)
    return v if isinstance(v, str) else func.name


@dataclass(eq=False)
class ScheduleVal:
    """A captured schedule (the result of calling an @schedule function)."""
    model: Any                          # ScheduleModel
    resources: dict                     # rid -> ResourceModel
    objects: dict                       # rid -> ResourceObj
    complete: bool = True
    reason: Optional[str] = None
    has_errors: bool = False


class ResourceProxy:
    """A schedule parameter while an @schedule body is interpreted (named as at run time)."""
    __slots__ = ("ref", "obj", "cap")

    def __init__(self, ref, obj, cap):
        self.ref, self.obj, self.cap = ref, obj, cap

    def __repr__(self):
        return f"<proxy {self.obj!r}>"


@dataclass(eq=False)
class MemberRefVal:
    """`group.member` outside a schedule."""
    member: ResourceObj
    group: ResourceObj


class DataFlowToken:
    __slots__ = ("token", "cap")

    def __init__(self, token, cap):
        self.token, self.cap = token, cap

    def __repr__(self):
        return f"DataFlowToken({self.token.var!r})"


@dataclass(eq=False)
class BlockCM:
    """A schedule block context manager (domain_loop(...), d.first_iter(), ...)."""
    opener: Any                         # () -> Scope (builder scope)
    cap: Any
    value: Any = None                   # (scope) -> value bound by `as`
    scope: Any = None
    range: Any = None


@dataclass(eq=False)
class LoopHandle:
    """`as d` of a domain_loop block (DomainLoopProxy)."""
    scope: Any
    cap: Any


@dataclass(eq=False)
class WtlHandle:
    """`as t` of a work_tile_loop block (WorkTileLoopProxy)."""
    scope: Any
    cap: Any


@dataclass(eq=False)
class TaskManagerVal:
    kernel: Any


@dataclass(eq=False)
class TaskManagerObj(InstanceVal, TaskManagerVal):
    """An instance of a user class derived from TaskManager (`class GemmManager(TaskManager)`):
    a TaskManagerVal once the base's `__init__` has run on it (its kernel, the manager's
    methods), with the class's own attributes and methods besides."""
    node: Any = None                   # the construction call (`GemmManager(...)`)


@dataclass(eq=False)
class TracedUnbound:
    """A local name after a run-time `if` in JIT code that only one of its branches gave
    a value (and that had none before): the CuTe DSL traces both branches and cannot
    carry the name out of the `if`, so reading it fails (statements._x_if_traced; the
    read reports TS962 in expressions._e_name)."""
    name: str
    node: Any                 # the `if` statement


@dataclass(eq=False)
class ArgParserVal:
    defaults: dict = field(default_factory=dict)
    # dest -> the values of `choices=` (configurations.py runs the `__main__` block with each)
    choices: dict = field(default_factory=dict)
    flags: dict = field(default_factory=dict)      # dest -> the option of a store_true / store_false


class DefaultDictVal(dict):
    """A `collections.defaultdict`: a dict everywhere, whose missing key read calls
    `factory` and stores the result (expressions.getitem)."""

    def __init__(self, factory, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.factory = factory


@dataclass(eq=False)
class NamespaceVal:
    attrs: dict = field(default_factory=dict)


@dataclass(eq=False)
class SuperVal:
    cls: ClassVal                       # class whose MRO successor is searched
    self_val: Any
