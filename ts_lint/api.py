"""ts-lint's entry points: static analysis of TS programs, without importing them.

`lint_source` / `lint_file` return the findings of one module; `analyze_source` also
returns the kernel models it built (one per analysed `TaskManager(...)` call and calling
context) and the unresolved values (TS950 info findings). The source is parsed with
libcst and interpreted abstractly (ts_lint.extract); the user's code is never imported
or executed. The model, the checks and the Diagnostic objects are ts_runtime's, so a
rule reports the same code at the same line as it does at run time.

Never raises for a bad input: a syntax error is TS000 at its location, an internal
failure on a file is TS999 for that file.
"""
from __future__ import annotations

import io
import os
import tokenize
import traceback
import dataclasses
from dataclasses import dataclass, field
from typing import List, Optional

from ts_runtime.diagnostics import Diagnostic, Severity
from ts_runtime.source import SourceRange

__all__ = ["Analysis", "AnalysisCache", "analyze_source", "lint_source", "lint_file", "clear_caches"]


@dataclass
class Analysis:
    diagnostics: List[Diagnostic] = field(default_factory=list)
    kernels: list = field(default_factory=list)          # [KernelModel]
    unknowns: List[Diagnostic] = field(default_factory=list)
    kernel_roots: List[str] = field(default_factory=list)  # root function of each kernel
    # True when findings were reused from an `AnalysisCache` and moved to new lines: the
    # kernel models (and their ranges) are then those of the earlier text; analyse again
    # without a cache when models are needed
    kernels_stale: bool = False


def AnalysisCache(max_entries: int = 512):
    """A cache for `analyze_source(..., cache=)`: findings of unchanged parts of a module
    are reused when it is analysed again (ts_lint.incremental)."""
    from .incremental import AnalysisCache as _Cache
    return _Cache(max_entries)


def clear_caches() -> None:
    """Forgets what is kept between calls: the parsed statements
    (ts_lint.extract.source.UNITS), the parsed imported modules (extract.imports) and the
    work-method effects by text."""
    from .extract import imports
    from .extract.resources import _EFFECTS_BY_TEXT
    from .extract.source import clear_cache
    clear_cache()
    imports.clear_cache()
    _EFFECTS_BY_TEXT.clear()


def _sort_key(d: Diagnostic):
    return (d.range.line, d.range.column, d.code, d.message)


def _dedupe(diags) -> list:
    seen, out = set(), []
    for d in diags:
        key = (d.code, d.severity, d.message, d.range)
        if key in seen:
            continue
        seen.add(key)
        out.append(d)
    return out


def analyze_source(source: str, path: str = "<string>", *, explain_unknown: bool = False,
                   run_checker: bool = True, cache=None) -> Analysis:
    """Findings, kernel models and unresolved values of one module. With `cache` (an
    `AnalysisCache`, e.g. one per open document), the findings of the parts of the module
    whose text did not change since an earlier call are reused (same results as without)."""
    import gc
    # parsing builds tens of thousands of short-lived objects: the cyclic collector would
    # spend a third of the time scanning them (any cycles are collected after the call)
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _analyze(source, path, explain_unknown, run_checker, cache)
    finally:
        if gc_was_enabled:
            gc.enable()


def _analyze(source: str, path: str, explain_unknown: bool, run_checker: bool, cache=None) -> Analysis:
    from ts_runtime.source import register_source
    register_source(path, source)      # rules that attach fixes read the analysed text
    from .extract.context import make
    try:
        import libcst as cst
        from .extract.source import parse
        try:
            src = parse(source, path)
        except cst.ParserSyntaxError as e:
            return Analysis([_syntax_error(source, path, e)], [], [])
        bad = _compile_error(source, path)
        if bad is not None:
            return Analysis([bad], [], [])
        if cache is not None and src.segments:
            from .incremental import analyze_incremental
            result = analyze_incremental(
                src, path, explain_unknown, run_checker, cache,
                lambda d, u, k, r, c: _finish(d, u, k, r, explain_unknown, c))
            if result is not None:
                return result
        return _extract(src, path, explain_unknown, run_checker)
    except RecursionError:
        d = make("TS999", "internal error: the file is nested too deeply to analyse", SourceRange(path, 1, 0))
        return Analysis([d], [], [])
    except Exception as exc:
        if os.environ.get("TS_DEBUG"):
            traceback.print_exc()
        d = make("TS999", f"internal error while analysing this file: {type(exc).__name__}: {exc}",
                 SourceRange(path, 1, 0))
        return Analysis([d], [], [])


def _compile_error(source: str, path: str) -> Optional[Diagnostic]:
    """TS000 for a file that parses but that Python's compiler rejects (a duplicated
    parameter name, `return` outside a function, `nonlocal` of an unknown name): Python
    cannot import it, and ts-lint's analysis of it would describe a program that does
    not exist (or fail inside). libcst and ast.parse accept these; the compiler's symbol
    table pass does not. Compiling to bytecode runs nothing; its warnings (an invalid
    escape sequence) are not ts-lint's to print.

    The file is compiled in the pieces the parser cuts it into (top-level statements, or
    the whole file when it has a `from __future__` import), each compiled once per text
    (extract/source.py): an edit in the editor recompiles only what it changed."""
    from .extract.context import make
    from .extract.source import compile_error, split_chunks
    chunks = split_chunks(source)
    found = [(offset, chunk.compile_error) for offset, chunk, _text in chunks] if chunks is not None \
        else [(0, compile_error(source))]
    for offset, err in found:
        if err is not None:
            return make("TS000", f"syntax error: {err[0]}", SourceRange(path, offset + err[1], err[2]))
    return None


def _syntax_error(source: str, path: str, err) -> Diagnostic:
    """TS000 where Python itself reports the error (libcst's position can be a line later)."""
    import ast
    from .extract.context import make
    try:
        ast.parse(source, path)
    except SyntaxError as e:
        line = e.lineno or 1
        col = max(0, (e.offset or 1) - 1)
        return make("TS000", f"syntax error: {e.msg}", SourceRange(path, line, col))
    except (ValueError, RecursionError, MemoryError):
        pass
    line, col = max(1, getattr(err, "raw_line", 1)), max(0, getattr(err, "raw_column", 0))
    return make("TS999", f"ts-lint cannot parse this file (its parser, libcst, does not support this "
                f"syntax): {str(getattr(err, 'message', err)).splitlines()[0]}", SourceRange(path, line, col))


def _extract(src, path, explain_unknown, run_checker) -> Analysis:
    from .extract.context import Budget, Context
    from .extract.interpreter import Interpreter
    from .extract.roots import run_roots
    ctx = Context(path, src.pos, run_checker, src)
    it = Interpreter(ctx, src.module)
    from .extract.configurations import run_configurations
    imported = {}
    for main in (False, True):
        # import, then the entry points (zero-argument functions such as `build()`), then
        # the `__main__` block (argparse defaults) and its other command-line
        # configurations, then whatever TS code is still unreached
        if main:
            imported = dict(it.module_scope.vars)
        try:
            it.run_module(main=main)
        except Budget:
            ctx.unknown(SourceRange(path, 1, 0), "analysis budget exhausted in the module body", "budget")
        if not main:
            run_roots(it, "entry")
    run_configurations(it, Budget, imported)
    configured = bool(ctx.kernels)
    run_roots(it, "rest")
    if ctx.tasks_built and not ctx.kernels:
        ctx.unknown(ctx.tasks_built[0].range, "tasks are built but no TaskManager(...) call was analysed "
                    "for them: only capture, task and object checks ran", "manager")
    return _finish(ctx.diagnostics, ctx.unknowns, ctx.kernels, ctx.kernel_roots, explain_unknown, configured)


UNREACHED_NOTE = (" (a warning here: this code is not reached by the module's own run, its entry "
                  "points and `__main__` block, and was analysed with assumed arguments)")


def _unreached(diagnostics, configured: bool) -> list:
    """Errors found in code that the module's own run does not reach (functions analysed
    with assumed arguments) become warnings when that run reached a TaskManager: the
    configuration the module runs never executes them, so neither the reference nor the
    runtime rejects the program for them, but the defect is still shown. In a module with
    no run of its own (a library of kernels) they stay errors. An error that the run
    itself also found is kept once, as an error."""
    if not any(d.assumed for d in diagnostics):
        return diagnostics
    if not configured:
        return [dataclasses.replace(d, assumed=False) if d.assumed else d for d in diagnostics]
    reached = {(d.code, d.message, d.range) for d in diagnostics if not d.assumed}
    return [dataclasses.replace(d, severity=Severity.WARNING, message=d.message + UNREACHED_NOTE, assumed=False)
            if d.assumed else d for d in diagnostics
            if not (d.assumed and (d.code, d.message, d.range) in reached)]


def _finish(diagnostics, unknowns, kernels, kernel_roots, explain_unknown, configured=False) -> Analysis:
    diags = _dedupe(_unreached(diagnostics, configured))
    unknowns = _dedupe(unknowns)
    if explain_unknown:
        diags = _dedupe(diags + unknowns)
    diags.sort(key=_sort_key)
    unknowns.sort(key=_sort_key)
    return Analysis(diags, list(kernels), unknowns, list(kernel_roots))


def lint_source(source: str, path: str = "<string>", *, explain_unknown: bool = False,
                run_checker: bool = True, cache=None) -> List[Diagnostic]:
    """Findings of one module's source (sorted by position)."""
    return analyze_source(source, path, explain_unknown=explain_unknown, run_checker=run_checker,
                          cache=cache).diagnostics


def read_source(path: str) -> str:
    """A Python file's text, decoded like the interpreter would (PEP 263 coding cookie)."""
    with open(path, "rb") as f:
        data = f.read()
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    text = data.decode(encoding)
    return text[1:] if text.startswith("\ufeff") else text


def lint_file(path, *, explain_unknown: bool = False, run_checker: bool = True) -> List[Diagnostic]:
    from .extract.context import make
    path = os.fspath(path)
    try:
        source = read_source(path)
    except (OSError, SyntaxError, UnicodeDecodeError, LookupError) as exc:
        return [make("TS999", f"cannot read {path}: {exc}", SourceRange(path, 1, 0))]
    return lint_source(source, path, explain_unknown=explain_unknown, run_checker=run_checker)
