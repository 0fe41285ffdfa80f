"""A small abstract interpreter for the Python that builds TS kernels.

It runs the user's module *on libcst nodes*, never on Python: module-level code, class
bodies and the functions that construct a `TaskManager` (and whatever they call with the
values at hand). Values are plain Python data where known, `UNKNOWN` where the source
does not determine them, `RUNTIME` for traced run-time values (kernel parameters typed
`cutlass.Int32`, tensors, `cute.arch.*` results), and objects of `values.py` for TS
things. What it supports: ints, floats, strings, tuples, lists, dicts and enums with
arithmetic and comparisons; local, module and class-level names; attributes set in
`__init__` / `__post_init__` / other methods; dataclasses; calls of user functions and
methods (inlined with their arguments); `for` over known iterables (incl.
`cutlass.range_constexpr`), `if` / `while` on known conditions; argparse defaults.

Where a condition or iterable is not known, the branch is not run and every name it
would have assigned becomes UNKNOWN (no guessing): rules that need such a value stay
silent, and ts-lint says why with an info finding (TS950) when asked.
"""
from __future__ import annotations

import contextlib

import enum
from typing import Optional

import libcst as cst

from .expressions import ExpressionsMixin, binop, compare, truth  # noqa: F401  (re-exported)
from .callbind import check_call
from .frames import (  # noqa: F401  (re-exported)
    Frame, UserRaise, _Break, _Continue, _LoopUnknown, _Return, param_list,
)
from .statements import StatementsMixin
from .classes import named_tuple_items
from .context import Budget, Context
from .values import (
    BoundMethod, BuiltinFunc, ClassVal, DataFlowToken, FuncVal, InstanceVal, is_concrete,
    QualRef, ResourceObj, RUNTIME, ScheduleFuncVal, Scope, TaskManagerObj, TaskObj, UNKNOWN,
)


def _import_raises_message(it, node) -> str:
    """TS961's message for the `assert` / `raise` statement that stopped the import."""
    if isinstance(node, cst.Assert):
        text = " ".join(it.text(node.test).split())
        if len(text) > 80:
            text = text[:77] + "..."
        return (f"importing this module raises AssertionError: `assert {text}` is false with the values "
                f"the module computes")
    if isinstance(node, cst.Raise) and node.exc is not None:
        exc = node.exc.func if isinstance(node.exc, cst.Call) else node.exc
        name = " ".join(it.text(exc).split())
        return f"importing this module raises {name}: this `raise` is reached with the values the module computes"
    return "importing this module raises here: this statement is reached with the values the module computes"


def build_raises_message(it, node, func) -> str:
    """TS968's message for the `assert` / `raise` the build reaches in `func`."""
    where = f"building the kernel raises in '{func.name}'"
    if isinstance(node, cst.Assert):
        text = " ".join(it.text(node.test).split())
        if len(text) > 80:
            text = text[:77] + "..."
        return f"{where}: AssertionError, `assert {text}` is false with the values the program computes"
    if isinstance(node, cst.Raise) and node.exc is not None:
        exc = node.exc.func if isinstance(node.exc, cst.Call) else node.exc
        name = " ".join(it.text(exc).split())
        return f"{where}: {name}, this `raise` is reached with the values the program computes"
    return f"{where}: this statement is reached with the values the program computes"


def _ts_class(cls) -> bool:
    """A MemoryResource or Task subclass (their methods have TS-specific checks)."""
    return isinstance(cls, ClassVal) and (cls.is_sub("MemoryResource") or cls.is_sub("Task"))


# the setup methods of a TS class: TS137 judges their reads (unbound_in_setup)
_SETUP = frozenset({"__init__", "__post_init__"})


class Interpreter(ExpressionsMixin, StatementsMixin):
    def __init__(self, ctx: Context, module: cst.Module, module_name: str = "__main__"):
        from . import pybuiltins, tsapi
        self.ctx = ctx
        self.module_node = module
        self.module_name = module_name
        self.module_scope = Scope("module")
        self.module_scope.vars["__name__"] = "__main__"
        self.module_scope.vars["__file__"] = ctx.path
        self.frames: list = []
        self.builtins = pybuiltins.builtin_names(self)
        self.ts = tsapi.TSApi(self)
        self.captures: list = []          # active schedule captures (innermost last)
        self._effects_cache: dict = {}
        self._generators: dict = {}     # id(def node) -> whether it is a generator function
        self._unbound_armed: set = set()   # def nodes whose failing reads are marked
        self._unbound_reads: dict = {}     # id(Name node) -> (node, name, local, function name)
        self._try_depth = 0                # `try` bodies with handlers being run
        self.frontend = None               # DSL front end of the cute.compile being run ("plain" / "next")
        self._loop_depth = 0
        self.user_enums: dict = {}         # real enum class of a user's enum -> its methods (enums.py)
        self.globals_dicts: dict = {}      # id -> module variables that `globals()` returned
        self._eval = {
            cst.Name: self._e_name, cst.Attribute: self._e_attribute, cst.Call: self._e_call,
            cst.Integer: self._e_number, cst.Float: self._e_number, cst.Imaginary: self._e_number,
            cst.SimpleString: self._e_string, cst.ConcatenatedString: self._e_concat,
            cst.FormattedString: self._e_fstring, cst.Tuple: self._e_tuple, cst.List: self._e_list,
            cst.Set: self._e_set, cst.Dict: self._e_dict, cst.ListComp: self._e_listcomp,
            cst.SetComp: self._e_setcomp, cst.GeneratorExp: self._e_listcomp,
            cst.DictComp: self._e_dictcomp, cst.BinaryOperation: self._e_binop,
            cst.UnaryOperation: self._e_unary, cst.BooleanOperation: self._e_boolop,
            cst.Comparison: self._e_compare, cst.IfExp: self._e_ifexp, cst.Lambda: self._e_lambda, cst.Yield: self._e_yield,
            cst.Subscript: self._e_subscript, cst.NamedExpr: self._e_namedexpr,
            cst.Ellipsis: lambda n, s: Ellipsis,
        }
        self._exec = {
            cst.SimpleStatementLine: self._x_simple_line, cst.SimpleStatementSuite: self._x_simple_line,
            cst.Expr: self._x_expr, cst.Assign: self._x_assign, cst.AnnAssign: self._x_annassign,
            cst.AugAssign: self._x_augassign, cst.Return: self._x_return, cst.Pass: lambda n, s: None,
            cst.Break: self._x_break, cst.Continue: self._x_continue, cst.Import: self._x_import,
            cst.ImportFrom: self._x_importfrom, cst.Global: self._x_global,
            cst.Nonlocal: self._x_nonlocal, cst.Del: self._x_del, cst.Raise: self._x_raise,
            cst.Assert: self._x_assert, cst.FunctionDef: self._x_funcdef,
            cst.ClassDef: self._x_classdef, cst.If: self._x_if, cst.For: self._x_for,
            cst.While: self._x_while, cst.With: self._x_with, cst.Try: self._x_try,
            cst.Match: self._x_match,
        }

    # ================================================================== helpers
    @property
    def frame(self) -> Optional[Frame]:
        return self.frames[-1] if self.frames else None

    @property
    def capture(self):
        return self.captures[-1] if self.captures else None

    def rng(self, node):
        t = type(node)
        if (t is cst.Tuple or t is cst.GeneratorExp) and node.lpar and node.rpar:
            # ast (and so the runtime's locate.py) counts a tuple's parentheses as part of it
            a, b = self.ctx.range(node.lpar[0]), self.ctx.range(node.rpar[-1])
            from ts_runtime.source import SourceRange
            return SourceRange(a.path, a.line, a.column, b.end_line, b.end_column)
        return self.ctx.range(node)

    def text(self, node) -> str:
        return self.ctx.pos.text(node)

    def unknown(self, node, message: str, kind: str = "value"):
        if node is not None:
            self.ctx.unknown(self.rng(node), message, kind)

    # ================================================================== scopes
    def lookup(self, name: str, scope: Scope):
        s, first = scope, True
        while s is not None:
            if s.kind == "class" and not first:
                s = s.parent
                continue
            if name in s.globals_:      # the module the code is defined in (imports.py)
                return (s.module or self.module_scope).vars.get(name, self.builtins.get(name, UNKNOWN))
            if name in s.vars:
                return s.vars[name]
            s, first = s.parent, False
        return self.builtins.get(name, UNKNOWN)

    def assign_name(self, name: str, value, scope: Scope):
        if name in scope.globals_:
            (scope.module or self.module_scope).vars[name] = value
            return
        if name in scope.nonlocals:
            s = scope.parent
            while s is not None:
                if s.kind == "function" and name in s.vars:
                    s.vars[name] = value
                    return
                s = s.parent
        scope.vars[name] = value


    # ------------------------------------------------------------------ qualified names
    def resolve_qual(self, qualname: str):
        return self.ts.resolve(qualname)


    def call(self, fn, args: list, kwargs: dict, node=None):
        self.ctx.step()
        if isinstance(fn, FuncVal):
            check_call(self, fn, args, kwargs, node, 0)
            return self.call_function(fn, args, kwargs, node)
        if isinstance(fn, BoundMethod):
            f = fn.func
            if isinstance(f, BuiltinFunc):
                if f.live is not None:
                    self.ts.bind_api(f.live, f.live_what, args, kwargs, node, method=True)
                return f.impl(self, [fn.self_val] + list(args), kwargs, node)
            if isinstance(fn.self_val, ResourceObj):
                from .tsapi import WorkMethodVal, direct_work_call
                if isinstance(f, WorkMethodVal):
                    direct_work_call(self, fn.self_val, f, args, kwargs, node)
            if isinstance(f, FuncVal):
                check_call(self, f, [fn.self_val] + list(args), kwargs, node, 1)
                return self.call_function(f, [fn.self_val] + list(args), kwargs, node)
            return self.call(f, [fn.self_val] + list(args), kwargs, node)
        if isinstance(fn, BuiltinFunc) and isinstance(fn.self_val, ResourceObj):
            from .tsapi import direct_live_work_call
            direct_live_work_call(self, fn, args, kwargs, node)
        if isinstance(fn, BuiltinFunc):
            if fn.live is not None:
                self.ts.bind_api(fn.live, fn.live_what, args, kwargs, node, method=fn.live_method)
            if fn.self_val is not None:
                return fn.impl(self, [fn.self_val] + list(args), kwargs, node)
            return fn.impl(self, list(args), kwargs, node)
        if isinstance(fn, ClassVal):
            return self.instantiate(fn, args, kwargs, node)
        if isinstance(fn, ScheduleFuncVal):
            return self.ts.call_schedule(fn, args, kwargs, node)
        from .tsapi import WorkMethodVal
        if isinstance(fn, WorkMethodVal):
            return self.call(fn.func, args, kwargs, node)
        if fn is RUNTIME:
            return RUNTIME
        if isinstance(fn, QualRef):
            return self.ts.call_qualref(fn, args, kwargs, node)
        h = self.ts.call_hook(fn, args, kwargs, node)
        if h is not NotImplemented:
            return h
        if type(fn) is InstanceVal and fn.cls.builtin is None:
            # calling an instance of a user class runs its class's `__call__` (a host-side
            # kernel object, `GemmKernel(cfg)(a, b, c)`); looked up on the class, as Python does
            owner, m = fn.cls.lookup("__call__")
            if owner is not None and isinstance(m, FuncVal) and m.kind not in ("staticmethod", "classmethod"):
                return self.call(BoundMethod(fn, m), args, kwargs, node)
        if isinstance(fn, type) and issubclass(fn, enum.Enum):
            if len(args) == 2 and not fn.__members__:
                from .enums import enum_functional
                return enum_functional(self, fn, args, kwargs)      # `enum.IntEnum("Role", "A B")`
            if len(args) == 1 and not kwargs and is_concrete(args[0]):
                try:
                    return fn(args[0])        # `Role(0)`: the member of that value
                except Exception:
                    return UNKNOWN
        if fn is UNKNOWN:
            self.ts.escape(args, kwargs)     # code ts-lint does not see may change them
        return UNKNOWN

    def _defaults(self, params: cst.Parameters, scope) -> dict:
        out = {}
        for p, _kind in param_list(params):
            if p.default is not None:
                out[p.name.value] = self.eval(p.default, scope)
        return out

    def bind_params(self, func: FuncVal, args: list, kwargs: dict, call_node=None) -> Optional[dict]:
        """Python argument binding; missing arguments become UNKNOWN (or RUNTIME by annotation)."""
        params = param_list(func.node.params)
        bound: dict = {}
        args = list(args)
        kwargs = dict(kwargs)
        rest_pos: list = []
        var_kw_name = None
        for p, kind in params:
            name = p.name.value
            if kind in ("positional_only", "pos_or_kw"):
                if args:
                    bound[name] = args.pop(0)
                elif kind == "pos_or_kw" and name in kwargs:
                    bound[name] = kwargs.pop(name)
            elif kind == "var_pos":
                rest_pos = args
                args = []
                bound[name] = tuple(rest_pos)
            elif kind == "kw_only":
                if name in kwargs:
                    bound[name] = kwargs.pop(name)
            elif kind == "var_kw":
                var_kw_name = name
        if var_kw_name is not None:
            bound[var_kw_name] = kwargs
            kwargs = {}
        for p, kind in params:
            name = p.name.value
            if name in bound:
                continue
            if name in func.defaults:
                bound[name] = func.defaults[name]
            else:
                bound[name] = self.missing_param(func, p)
        if func.is_jit:
            # At a JIT boundary (the function `cute.compile` compiles, or a `@cute.kernel`
            # launch) plain Python ints / floats / bools, alone or in tuples, become dynamic
            # values unless the parameter is annotated `cutlass.Constexpr` (as the DSL does);
            # a `@cute.jit` helper called from traced code keeps them as Python values.
            boundary = func.is_kernel or getattr(self, "jit_boundary", None) is func
            if boundary:
                self.jit_boundary = None
                self._boundary_annotations(func)
            for p, kind in params:
                if kind in ("var_pos", "var_kw"):
                    continue
                ann = p.annotation.annotation if p.annotation is not None else None
                if ann is not None and self.ts.runtime_annotation(ann, func.closure):
                    # a helper called from traced code gets the Python value it is passed
                    # (a layout / shape tuple stays a tuple); only a boundary makes it dynamic
                    if boundary or bound[p.name.value] is UNKNOWN:
                        bound[p.name.value] = RUNTIME
                elif boundary and (ann is None or not self.ts.constexpr_annotation(ann, func.closure)):
                    v = bound[p.name.value]
                    if ann is not None:
                        # not (all) known, but typed as plain numbers: whatever the caller
                        # passes is traced (`mnk: Tuple[int, int, int]` -> three dynamic ints)
                        v = _fill_unknown(v, _number_shape(ann))
                    bound[p.name.value] = _dynamic(v)
        return bound

    def _ts_code(self, func: FuncVal) -> bool:
        """Whether `func` is TS code: a function that builds TS objects or calls one that
        does (roots.root_order), or a function defined inside one. Plain Python or CuTe
        helpers (a non-TS kernel next to the TS one) are other linters' business."""
        related = self.ctx.ts_related
        if related is None:
            return False          # the import, before the TS functions are known
        if func.node in related:
            return True
        s = func.closure
        while s is not None:
            f = getattr(s, "func", None)
            if f is not None and f.node in related:
                return True
            s = s.parent
        return False

    def _arm_unbound(self, func: FuncVal):
        """Marks the reads of `func` that certainly fail (unbound.failing_reads): when the
        run reaches one, `_e_name` reports TS962 there and stops, as Python raises NameError
        there. @schedule bodies (TS136) and the setup methods of TS classes (`__init__` /
        `__post_init__`: TS137) have their own checks; the other methods of a resource
        class that the build runs (`get_smem_requirements()` for the allocator) are armed
        here (its work methods are compiled, not run: workbody.py judges them). Functions
        run only with assumed arguments (the "rest" roots) are not judged."""
        from .unbound import failing_reads
        self._unbound_armed.add(func.node)
        # a read in a branch of an `if` ts-lint cannot decide fails too when the run reaches
        # it: the run enters such a branch only where the DSL traces both (a run-time `if`)
        for node, name, local, _cond in failing_reads(self, func, conditional=True):
            self._unbound_reads[id(node)] = (node, name, local, func.name, None)

    def arm_schedule(self, func: FuncVal, cap):
        """The reads of the @schedule function `func` that fail when the branch of an `if`
        they are in runs (the certain ones are TS136 before the capture): the capture
        `cap` decides such an `if` (a `cutlass.const_expr` of the schedule's
        configuration), so reaching one of them in it is TS136 there (`_unbound_read`)."""
        from .unbound import failing_reads
        for node, name, local, cond in failing_reads(self, func, conditional=True):
            if cond and id(node) not in self._unbound_reads:
                self._unbound_reads[id(node)] = (node, name, local, func.name, cap)

    def _unbound_read(self, node):
        """Reaching a read that certainly fails: TS962 (TS136 in the schedule being
        captured that `arm_schedule` armed it for), once per read, then stop."""
        _node, name, local, fname, cap = self._unbound_reads[id(node)]
        ctx = self.ctx
        if cap is not None:
            if ctx.assumed or self._try_depth or not self.captures or self.captures[-1] is not cap:
                return
            from ts_runtime.rules.structure import unbound_name_message
            ctx.report("TS136", unbound_name_message(name, fname, local), self.rng(node))
            raise UserRaise(node, reported=True)
        if ctx.assumed or self.captures or self._try_depth:
            raise UserRaise(node)         # assumed arguments, or a handler may catch it
        from .unbound import name_error_message
        ctx.report("TS962", name_error_message(name, local, f"'{fname}'") + ": Python raises NameError here",
                   self.rng(node))
        raise UserRaise(node, reported=True)

    def in_kernel_build(self) -> bool:
        """Whether the run is building the kernel: inside a @cute.jit / @cute.kernel function
        being compiled, or in a `build()` entry point (the runtime harness's). A host
        driver such as a tutorial's `run()` (inputs, torch, checks around the compile) is
        not: the reference's verdict is the compile's."""
        return self.ctx.root_name == "build" or self.in_jit_build()

    def in_jit_build(self) -> bool:
        """Whether the run is inside a @cute.jit / @cute.kernel function being compiled (a
        TaskManager made there has its `run()` traced: its work methods are compiled)."""
        return any(getattr(f.func, "is_jit", False) for f in self.frames)

    def certain_error(self, node, code: str, message: str, fix=None, related=None):
        """An operation the run reaches that certainly raises (TS963 AttributeError on a ts
        API class, TS964 TypeError of an operator): reported there, then the run stops, as
        Python's exception would stop it. Not reported under a `try` with a handler, or in a
        function run with assumed arguments (its values may not be the real ones)."""
        if self.ctx.assumed or self._try_depth:
            raise UserRaise(node)
        self.ctx.report(code, message, self.rng(node), fix=fix, related=related or ())
        raise UserRaise(node, reported=True)

    def type_error(self, node, message: str):
        """TS964 for an operation on a value of a type that certainly lacks it (`n[0]`,
        `n()`, `for x in n`, `a, b = n` with `n` an int): Python raises TypeError there.
        As `certain_error`; in addition not in the `__main__` block's run, whose
        command-line values may have another type than their argparse defaults, and not
        after a branch ts-lint could not decide that may have returned from a function on
        the call stack (the operation may not be reached); there the caller goes on with an
        unknown result."""
        if self.ctx.root_name == "__main__" or any(f.maybe_returned for f in self.frames):
            return
        self.certain_error(node, "TS964", f"{message}: Python raises TypeError here")

    def _module_level_read(self, node, scope):
        """A read in the module body (or a class body in it) while it is imported, of a
        name that no scope on the way has: TS962 when the module binds that name nowhere
        (a deleted or misspelt module constant), as Python raises NameError there."""
        from .unbound import main_module_names
        name = node.value
        s = scope
        while s is not None:
            if name in s.vars:
                return
            s = s.parent
        if name in self.builtins or name.startswith("__"):
            return
        names = main_module_names(self)
        if names is None or name in names:
            return
        if self._try_depth or self.captures:
            raise UserRaise(node)
        self.ctx.report("TS962", f"name '{name}' is not defined: Python raises NameError here, when the module "
                        "is imported", self.rng(node))
        raise UserRaise(node, reported=True)

    def _boundary_annotations(self, func: FuncVal) -> None:
        """TS962 for a name bound nowhere in the module, read by an annotation of a
        parameter or the return of the function `cute.compile` compiles or of a
        `@cute.kernel` launched: the CuTe DSL evaluates them then (in the module's globals),
        also under `from __future__ import annotations`, which leaves them unevaluated at
        import (without it, Python evaluated them at the `def`: `_import_time_annotation`).
        Module-level functions of the file being linted only."""
        from .unbound import main_module_names
        if self._annotations_evaluated() or func.closure is not self.module_scope or self.ctx.assumed \
                or self._try_depth or self.captures or not isinstance(func.node, cst.FunctionDef):
            return
        names = main_module_names(self)
        if names is None:
            return
        anns = [p.annotation for p, _kind in param_list(func.node.params)] + [func.node.returns]
        for ann in anns:
            for node in _root_names(ann.annotation) if ann is not None else ():
                name = node.value
                if name in names or name in self.builtins or name.startswith("__"):
                    continue
                self.certain_error(node, "TS962", f"name '{name}' is not defined (in an annotation of "
                                   f"'{func.name}', which the CuTe DSL evaluates when it compiles it): Python "
                                   "raises NameError there")

    def missing_param(self, func: FuncVal, p: cst.Param):
        if func.is_jit and p.annotation is not None and \
                self.ts.runtime_annotation(p.annotation.annotation, func.closure):
            return RUNTIME
        return UNKNOWN

    def call_function(self, func: FuncVal, args: list, kwargs: dict, node=None):
        ctx = self.ctx
        if ctx.depth >= ctx.MAX_DEPTH:
            self.unknown(node, f"call depth limit reached at `{func.name}`; not analyzed", "budget")
            return UNKNOWN
        scope, self_val = self._call_scope(func, args, kwargs, node)
        if isinstance(func.node, cst.Lambda):
            ctx.depth += 1
            try:
                return self.eval(func.node.body, scope)
            finally:
                ctx.depth -= 1
        ctx.entered.add(func.node)
        if not self.captures and not ctx.assumed and func.node not in self._unbound_armed \
                and (self._ts_code(func) if func.owner is None or not _ts_class(func.owner)
                     else func.name not in _SETUP):
            self._arm_unbound(func)
        frame = Frame(func, scope, self_val)
        body = self.ctx.src.body(func.node) if self.ctx.src is not None else func.node.body
        if self._is_generator(func, body):
            frame.yields = []
        self.frames.append(frame)
        ctx.depth += 1
        loops, self._loop_depth = self._loop_depth, 0     # the caller's loops are not ours
        try:
            self.exec_block(body, scope)
            result = None
        except _Return as r:
            result = r.value
        except (_Break, _Continue, _LoopUnknown):
            result = UNKNOWN
        finally:
            ctx.depth -= 1
            self.frames.pop()
            self._loop_depth = loops
        if frame.yields is not None:
            # a generator function: run to completion when called, its items as a list
            # (lazy consumption, send() and the generator's return value are not modelled)
            if frame.maybe_returned or frame.yields_unknown or result is UNKNOWN:
                return UNKNOWN
            return frame.yields
        if frame.maybe_returned:
            return UNKNOWN
        return result

    def open_call(self, func: FuncVal, args: list, kwargs: dict, node=None):
        """(scope, self_val) of a call of `func` with these arguments, to run parts of its
        body in (`in_frame`): a `@contextmanager` function around a `with` block."""
        scope, self_val = self._call_scope(func, args, kwargs, node)
        self.ctx.entered.add(func.node)
        return scope, self_val

    def _call_scope(self, func: FuncVal, args: list, kwargs: dict, node):
        """(the scope of a call of `func` with its parameters bound, the receiver of a
        method call or None)."""
        scope = Scope("function", func.closure, func.closure.module or self.module_scope)
        scope.func = func
        bound = self.bind_params(func, args, kwargs, node)
        scope.vars.update(bound)
        scope.qualprefix = f"{func.qualname}.<locals>."
        params = param_list(func.node.params)
        self_val = bound.get(params[0][0].name.value) if params and func.owner is not None else None
        return scope, self_val

    @contextlib.contextmanager
    def in_frame(self, func: FuncVal, scope, self_val):
        """Runs statements of `func` in its call frame (see `open_call`)."""
        ctx = self.ctx
        if ctx.depth >= ctx.MAX_DEPTH:
            raise UserRaise(None, reported=True)
        self.frames.append(Frame(func, scope, self_val))
        ctx.depth += 1
        loops, self._loop_depth = self._loop_depth, 0
        try:
            yield
        finally:
            ctx.depth -= 1
            self.frames.pop()
            self._loop_depth = loops

    def _is_generator(self, func, body) -> bool:
        """Whether `func` has a yield of its own (memoised per def; a text without the
        word is not walked)."""
        hit = self._generators.get(id(func.node))
        if hit is None:
            from .imports import source_of
            from .skip import effects
            src = source_of(self.ctx, func.node)
            text = src.function_text(func.node) if src is not None else ""
            if text and "yield" not in text:
                hit = False
            else:
                stmts = body.body if isinstance(body, (cst.IndentedBlock, cst.SimpleStatementSuite)) else body
                hit = any(effects(st, self._effects_cache).yields for st in stmts)
            self._generators[id(func.node)] = hit
        return hit

    # ------------------------------------------------------------------ classes / instances
    def init_of(self, k: ClassVal):
        """How class `k` itself initialises instances: a callable kind or None (inherits)."""
        if "__init__" in k.namespace:
            return "own"
        if k.builtin is not None:
            return "builtin"
        if k.is_dataclass and k.dc_init:
            return "dataclass"
        return None

    def run_init(self, k: ClassVal, inst, args, kwargs, call_node):
        kind = self.init_of(k)
        if kind == "own":
            v = k.namespace["__init__"]
            if isinstance(v, BuiltinFunc):
                return v.impl(self, [inst] + list(args), kwargs, call_node)
            if k.builtin is None and isinstance(v, FuncVal) and k.is_sub("MemoryResource") \
                    and self.unbound_in_setup(k, v):
                inst.failed = True       # TS137: the runtime raises there
                return None
            if k.builtin is None and isinstance(v, FuncVal) and call_node is not None \
                    and (isinstance(inst, TaskObj) or k.is_sub("MemoryResource")) \
                    and self._skips_super_init(v):
                # the user's own __init__ never runs the TS base's. A Task: TS139, as the
                # runtime reports after the construction (the object never exists there).
                # A resource keeps the class defaults of the base fields, as at run time;
                # the manager's TS238 judges whether the kernel needs them (lost_init)
                if isinstance(inst, TaskObj):
                    from ts_runtime.task import task_super_init_message
                    self.ctx.report("TS139", task_super_init_message(inst.cls.name), self.rng(call_node))
                    inst.ok, inst.reason = False, "its __init__ never calls Task.__init__"
                    return None
                from ts_runtime.resources import BASE_FIELDS
                out = self.call(v, [inst] + list(args), kwargs, call_node)
                inst.lost_init = tuple(k for k in (kwargs or {}) if k in BASE_FIELDS and k not in inst.attrs)
                return out
            return self.call(v, [inst] + list(args), kwargs, call_node)
        if kind == "dataclass":
            from .classes import dataclass_init
            return dataclass_init(self, k, inst, args, kwargs, call_node)
        return None

    def new_instance(self, cls: ClassVal, call_node):
        if cls.is_sub("Task"):
            return TaskObj(cls, node=call_node)
        if cls.is_sub("TaskManager"):
            return TaskManagerObj(None, cls, node=call_node)
        if cls.is_sub("MemoryResource"):
            return ResourceObj(cls, rid=self.ctx.new_rid(), node=call_node,
                               range=self.rng(call_node) if call_node is not None else None)
        return InstanceVal(cls)

    def unbound_in_setup(self, k: ClassVal, fn: FuncVal) -> bool:
        """TS137: reads in a resource's own `__init__` / `__post_init__` that certainly fail
        (reported; True when there are any)."""
        from ts_runtime.resources import setup_unbound_message
        from .unbound import check_function
        return bool(check_function(self, fn, "TS137", setup_unbound_message(f"{k.name}.{fn.name}")))

    def _bind_construction(self, cls: ClassVal, k: ClassVal, args, kwargs, node):
        """TS907 when a resource or Task construction does not bind to the `__init__` that
        runs (the class `k`'s own): the runtime's `MemoryResource.__new__` / `CheckedCall`
        bind `cls.__init__` first, and Python raises TypeError there (the reference's
        `OutputGmem.__init__() missing 1 required positional argument: 'dst'`). A user
        `__init__` is bound to its own parameters; a ts class's (PdlWaitBarrier, WorkQueue,
        PipelineGroup, MemoryResource) to the runtime's. Not judged: calls with `*` / `**`
        unpacking, a decorated `__init__`, a class with a `__new__`, a metaclass or a class
        decorator ts-lint does not model; Task's own binding is `_task_init`'s."""
        if node is None or not isinstance(node, cst.Call) or any(a.star for a in node.args):
            return
        users = [c for c in cls.mro if c.builtin is None]
        if any(c.opaque_init or "__new__" in c.namespace or "__init_subclass__" in c.namespace for c in users):
            return
        v = k.namespace.get("__init__")
        what = f"{cls.name}(...)"
        if k.builtin is not None:
            # (Task's and TaskManager's own binding is `_task_init`'s / `_task_manager`'s)
            if k.builtin in ("Task", "TaskManager") or k.live is None or not isinstance(v, BuiltinFunc):
                return
            self.ts.bind_api(k.live.__init__, what, args, kwargs, node, method=True)
            return
        if not isinstance(v, FuncVal) or v.kind != "function" or v.first_decorator is not None \
                or not isinstance(v.node, cst.FunctionDef):
            return
        from .schedules import _signature
        try:
            _signature(v).bind(None, *args, **kwargs)
        except TypeError as exc:
            if self._try_depth:
                raise UserRaise(node)
            from ts_runtime.api_calls import message
            self.ctx.report("TS907", message(what, str(exc)), self.rng(node))
            raise UserRaise(node, reported=True)

    def _skips_super_init(self, fn: FuncVal) -> bool:
        """Whether a user `__init__` certainly calls no `__init__` of a base class (no
        `super().__init__(...)`, `Base.__init__(self, ...)`), from its `ast`."""
        import ast
        memo = self.__dict__.setdefault("_super_init_memo", {})
        hit = memo.get(id(fn.node))
        if hit is not None:
            return hit
        src = self.ctx.src
        node = src.ast_function(fn.node) if src is not None else None
        memo[id(fn.node)] = result = node is not None and self._no_base_init(node)
        return result

    @staticmethod
    def _no_base_init(node) -> bool:
        import ast
        for n in ast.walk(node):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "__init__":
                return False
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("setattr", "exec", "eval"):
                return False
        return True

    def instantiate(self, cls: ClassVal, args, kwargs, node):
        if cls.builtin == "external":
            return UNKNOWN
        ext = [k for k in cls.mro if k.builtin == "external"]
        if ext and node is not None:
            from .tsapi import _library
            if not all(_library(k.qualname) for k in ext):
                self.unknown(node, f"class `{cls.name}` derives from `{ext[0].qualname}`, which ts-lint "
                             "cannot see; what that base defines is unknown", "class")
        inst = self.new_instance(cls, node)
        for k in cls.mro:
            if self.init_of(k) is not None:
                if self.init_of(k) == "own" and (cls.is_sub("MemoryResource") or cls.is_sub("Task")
                                                 or cls.is_sub("TaskManager")):
                    self._bind_construction(cls, k, args, kwargs, node)
                if self.init_of(k) == "dataclass" and cls.is_sub("MemoryResource") \
                        and not any(getattr(a, "star", "") for a in getattr(node, "args", ())):
                    from .classes import dataclass_bind_error
                    error = dataclass_bind_error(k, args, kwargs)
                    if error is not None:    # TS907, as the runtime's CheckedCall metaclass
                        from ts_runtime.api_calls import message
                        self.ctx.report("TS907", message(f"{cls.name}(...)", error), self.rng(node))
                        return UNKNOWN
                if k.named_tuple:
                    from .classes import dataclass_bind_error
                    if dataclass_bind_error(cls, args, kwargs) is not None:
                        return UNKNOWN    # Python raises TypeError
                self.run_init(k, inst, args, kwargs, node)
                break
        if getattr(inst, "failed", False):
            return UNKNOWN        # its constructor raised at run time: the object never exists
        return inst

    # ------------------------------------------------------------------ iteration
    def iterate(self, v) -> Optional[list]:
        """The items of a known iterable, else None (a container marked incomplete, one a
        skipped statement or an unrun class creation may have changed, has no known items)."""
        if isinstance(v, (list, dict, set)) and self.ts.is_tainted(v):
            return None
        if isinstance(v, (list, tuple)):
            return list(v)
        if isinstance(v, range):
            if len(v) > self.ctx.MAX_LOOP:
                return None
            return list(v)
        if isinstance(v, dict):
            return list(v.keys())
        if isinstance(v, _DICT_VIEWS):
            return list(v)
        if isinstance(v, (str, set, frozenset)) and is_concrete(v):
            try:
                return sorted(v) if isinstance(v, (set, frozenset)) else list(v)
            except TypeError:
                return list(v)
        if isinstance(v, (set, frozenset)) and len(v) <= 1:
            return list(v)      # one object: no order to know (`list({ring})`)
        if isinstance(v, DataFlowToken):
            if v.cap is not None:
                v.cap.token_misuse(v, None, indexed=False)
            return None
        if isinstance(v, InstanceVal):
            items = named_tuple_items(v)
            return list(items) if items is not None else None
        if isinstance(v, (type, enum.Flag)) and (isinstance(v, enum.Flag) or issubclass(v, enum.Enum)):
            try:
                return list(v)        # an enum class's members (a flag value's bits), as Python iterates them
            except TypeError:
                return None
        return None


    # ================================================================== roots
    def run_module(self, main: bool = False):
        """Imports the module (`main=False`: up to its `if __name__ == "__main__":` block) or
        runs that block (`main=True`)."""
        ctx = self.ctx
        body = self.module_node.body
        ctx.root_name = "__main__" if main else "<module>"
        ctx.root_errors = ctx.import_errors if main else 0
        ctx.steps = 0
        ctx.importing = not main
        main_idx = None
        for i, stmt in enumerate(body):
            if isinstance(stmt, cst.If) and self._is_main_guard(stmt.test):
                main_idx = i
                break
        if main:
            stmts = body[main_idx:] if main_idx is not None else []
        else:
            stmts = body[:main_idx] if main_idx is not None else body
        try:
            for stmt in stmts:
                self.exec_stmt(stmt, self.module_scope)
        except UserRaise as e:
            if e.reported:
                pass
            elif not main and e.node is not None:
                # nothing caught it: importing the module raises (TS961)
                ctx.report("TS961", _import_raises_message(self, e.node), self.rng(e.node))
            else:
                self.unknown(e.node, "analysis of the module stopped at this `raise` (reached with the "
                             "statically resolved values)", "control-flow")
        except (_Return, _Break, _Continue):
            pass
        finally:
            ctx.importing = False

    def _is_main_guard(self, test) -> bool:
        if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
            return False
        names = {self.text(test.left).strip(), self.text(test.comparisons[0].comparator).strip()}
        return "__name__" in names and any(n.strip("'\"") == "__main__" for n in names)

    def run_root(self, func, label: str):
        """Runs one root function/method with parameter defaults (or UNKNOWN)."""
        ctx = self.ctx
        ctx.root_name = label
        ctx.root_errors = 0
        ctx.steps = 0
        try:
            if isinstance(func, BoundMethod) or isinstance(func, FuncVal):
                self.call(func, [], {}, None)
        except UserRaise as e:
            if not e.reported:
                self.unknown(e.node, f"analysis of `{label}` stopped at this `raise` (reached with the "
                             "statically resolved values)", "control-flow")
        except Budget:
            raise


def _root_names(node) -> list:
    """The names an annotation expression reads from its scope: `a` of `a.b.c`, each
    name of a subscript, a union, a call (not a string annotation's contents)."""
    t = type(node)
    if t is cst.Name:
        return [node]
    if t is cst.Attribute:
        return _root_names(node.value)
    if t is cst.Subscript:
        out = _root_names(node.value)
        for el in node.slice:
            if isinstance(el.slice, cst.Index):
                out += _root_names(el.slice.value)
        return out
    if t is cst.BinaryOperation:
        return _root_names(node.left) + _root_names(node.right)
    if t in (cst.Tuple, cst.List):
        return [n for e in node.elements for n in _root_names(e.value)]
    if t is cst.Call:
        return _root_names(node.func) + [n for a in node.args for n in _root_names(a.value)]
    return []


_NUMBER_TYPES = ("int", "float", "bool")
_DICT_VIEWS = (type({}.keys()), type({}.values()), type({}.items()))


def _number_shape(ann):
    """What a parameter annotated `ann` holds at a JIT boundary when its value is not
    known: RUNTIME for `int` / `float` / `bool` and for a tuple of them of any length
    (`Tuple[int, ...]`), a tuple of RUNTIME for a fixed-length one (`Tuple[int, int]`,
    `tuple[int, int]`), else UNKNOWN (an object's fields may be Python values)."""
    if isinstance(ann, cst.Name):
        return RUNTIME if ann.value in _NUMBER_TYPES else UNKNOWN
    if isinstance(ann, cst.Subscript):
        base = ann.value
        name = base.value if isinstance(base, cst.Name) else base.attr.value if isinstance(base, cst.Attribute) else ""
        if name not in ("Tuple", "tuple"):
            return UNKNOWN
        items = [e.slice.value for e in ann.slice if isinstance(e.slice, cst.Index)]
        if len(items) != len(ann.slice):
            return UNKNOWN
        if len(items) == 2 and isinstance(items[1], cst.Ellipsis):
            return RUNTIME if _number_shape(items[0]) is RUNTIME else UNKNOWN
        shapes = tuple(_number_shape(x) for x in items)
        return shapes if shapes and all(x is not UNKNOWN for x in shapes) else UNKNOWN
    return UNKNOWN


def _fill_unknown(v, shape):
    """`v` with its unknown parts replaced by what the annotation's `shape` says arrives
    there (`_number_shape`): `(UNKNOWN, 128)` passed as `Tuple[int, int]` is two dynamic
    ints. Known parts are kept (`_dynamic` turns them into dynamic values)."""
    if v is UNKNOWN:
        return shape
    if type(v) is tuple:
        if type(shape) is tuple and len(shape) == len(v):
            return tuple(_fill_unknown(x, s) for x, s in zip(v, shape))
        if shape is RUNTIME:            # Tuple[int, ...]
            return tuple(_fill_unknown(x, RUNTIME) for x in v)
    return v


def _ts_enum(v) -> bool:
    """A member of a TS enum (`SignalingThreads.All`): it stays itself at a JIT boundary; a
    member of the user's `IntEnum` / `IntFlag` is an int there, as before user enums were
    modelled (enums.py)."""
    return isinstance(v, enum.Enum) and type(v).__module__.startswith("ts_runtime")


def _dynamic(v):
    """What a plain Python argument becomes when passed across a JIT boundary."""
    if isinstance(v, bool) or (isinstance(v, (int, float)) and not _ts_enum(v)):
        return RUNTIME
    if type(v) is tuple:
        return tuple(_dynamic(x) for x in v)
    if type(v) is list:
        return [_dynamic(x) for x in v]
    return v
