"""`ts-lint [PATH...]`: lint TS schedules in Python files without running them.

Exit status: 0 no error or warning (info findings do not count), 1 findings, 2 a usage or
configuration error (bad option, invalid `[tool.ts-lint]`, a path that does not exist).
Any exception while linting one file becomes a TS999 finding for that file and the run
goes on; the driver itself never shows a traceback (set TS_DEBUG=1 to see them).

The per-file pipeline (`check_source`) is public so other front ends (the LSP) apply the
same selection and suppressions: api.lint_source / analyze_source -> selection
(select / ignore / per-file-ignores) -> `# noqa` -> TS960 for unused codes.
"""
from __future__ import annotations

import argparse
import dataclasses
import importlib
import io
import os
import sys
import tokenize
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional, Sequence

from ts_runtime.diagnostics import Diagnostic, Severity
from ts_runtime.source import SourceRange

from . import output
from .config import CliOverrides, ConfigError, ConfigResolver, Settings, split_codes
from .files import PathError, discover
from .suppress import apply_suppressions, parse_suppressions

__all__ = ["main", "build_parser", "check_source", "check_file", "fix_file", "fix_text", "FileResult",
           "internal_error", "read_source", "format_schedule", "schedule_texts", "display_path"]

INTERNAL = "TS999"
_PLACEHOLDER_PATHS = ("<unknown>", "<string>", "")


@dataclass
class FileResult:
    path: str
    diagnostics: List[Diagnostic] = field(default_factory=list)
    kernels: Optional[list] = field(default_factory=list)
    kernel_roots: list = field(default_factory=list)   # the run that built each kernel
    fixed: int = 0          # findings whose fixes were applied (--fix / --diff)
    diff: str = ""          # --diff: the unified diff of the fixes


def _debug() -> bool:
    return bool(os.environ.get("TS_DEBUG"))


def internal_error(path: str, message: str, line: int = 1) -> Diagnostic:
    """A TS999 finding for `path` (the catalogue entry when declared, else a fallback)."""
    rng = SourceRange(path, line, 0)
    try:
        from ts_runtime.rules.registry import get, make_diagnostic
        if get(INTERNAL) is not None:
            return make_diagnostic(INTERNAL, message, rng, severity=Severity.ERROR)
    except Exception:  # pragma: no cover - the registry is always importable
        pass
    return Diagnostic(INTERNAL, "internal-error", Severity.ERROR, message, rng)


def _exc_text(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def read_source(path: Path) -> str:
    """The file's text, decoded by its PEP 263 coding line (UTF-8 by default, BOM dropped)."""
    return decode_source(path.read_bytes())


def decode_source(data: bytes) -> str:
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:
        data.decode("utf-8")  # bytes that are not UTF-8 say so, rather than "bad cookie"
        raise
    return data.decode(encoding)


def display_path(path: Path, cwd: Optional[str] = None) -> str:
    """Relative to the working folder when inside it (like ruff), else absolute."""
    cwd = cwd or os.getcwd()
    try:
        rel = os.path.relpath(path, cwd)
    except ValueError:  # pragma: no cover - other drive on Windows
        return str(path)
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return str(path)
    return rel


def _load_api():
    return importlib.import_module("ts_lint.api")


def _normalize(d: Diagnostic, path: str) -> Diagnostic:
    """Gives a finding without a real file the linted file's path."""
    if d.range.path in _PLACEHOLDER_PATHS:
        return dataclasses.replace(d, range=dataclasses.replace(d.range, path=path))
    return d


def check_source(source: str, path: str, settings: Settings = Settings(), *, api=None,
                 analyze: bool = False, cache=None) -> FileResult:
    """Lints one source with `settings`; never raises (failures become TS999).

    `cache` (`ts_lint.api.AnalysisCache`, with `analyze`): reuse the findings of the parts
    of the module that did not change since the last call with the same cache; the result
    is the same. `kernels` is then None when the models are those of an earlier text."""
    result = FileResult(path)
    raw: List[Diagnostic] = []
    try:
        if api is None:
            api = _load_api()
        kwargs = dict(explain_unknown=settings.explain_unknown, run_checker=settings.checker)
        if analyze and hasattr(api, "analyze_source"):
            if cache is not None and _accepts(api.analyze_source, "cache"):
                kwargs["cache"] = cache
            analysis = api.analyze_source(source, path, **kwargs)
            raw = list(analysis.diagnostics)
            if settings.explain_unknown:
                raw.extend(u for u in getattr(analysis, "unknowns", ()) or () if u not in raw)
            result.kernels = list(getattr(analysis, "kernels", ()) or ())
            result.kernel_roots = list(getattr(analysis, "kernel_roots", ()) or ())
            if getattr(analysis, "kernels_stale", False):
                result.kernels = None
        else:
            raw = list(api.lint_source(source, path, **kwargs))
    except Exception as exc:
        if _debug():
            traceback.print_exc()
        raw = [internal_error(path, f"internal error while linting: {_exc_text(exc)}")]
    try:
        raw = [_normalize(d, path) for d in raw]
        selected = [d for d in raw if settings.enabled(d.code)]
        sup = parse_suppressions(source)
        own = [d for d in selected if d.range.path == path]
        foreign = [d for d in selected if d.range.path != path]
        kept = apply_suppressions(own, sup, path, enabled=settings.enabled,
                                  produced=settings.produced)
        kept.extend(_foreign_kept(foreign, sup))
    except Exception as exc:
        if _debug():
            traceback.print_exc()
        kept = [d for d in raw if isinstance(d, Diagnostic)]
        kept.append(internal_error(path, f"internal error while filtering findings: {_exc_text(exc)}"))
    result.diagnostics = sorted(kept, key=_sort_key)
    return result


def _foreign_kept(diags: List[Diagnostic], sup) -> List[Diagnostic]:
    """Findings located in another file (code of an imported user module that this file's
    kernel runs): this file's `noqa` lines do not apply to them, its file-wide directives
    do, and so do the `noqa` comments of the file they are in."""
    out: List[Diagnostic] = []
    others: dict = {}
    for d in diags:
        if sup.file_all or d.code in sup.file_codes:
            continue
        p = d.range.path
        if p not in others:
            try:
                others[p] = parse_suppressions(read_source(Path(p)))
            except (OSError, SyntaxError, UnicodeDecodeError, LookupError, ValueError):
                others[p] = None
        if others[p] is not None and others[p].suppresses(d):
            continue
        out.append(d)
    return out


def dedupe(diags: List[Diagnostic]) -> List[Diagnostic]:
    """One copy of each finding of a run: a file that imports another reports the findings
    of the imported code its kernel runs, which linting that file may report too."""
    seen, out = set(), []
    for d in diags:
        r = d.range
        key = (d.code, r.path, r.line, r.column, r.end_line, r.end_column, d.message)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def _sort_key(d: Diagnostic):
    return (d.range.line, d.range.column, d.code, d.message)


def _accepts(fn, name: str) -> bool:
    import inspect
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def check_file(path: Path, display: str, settings: Settings, *, api=None,
               analyze: bool = False) -> FileResult:
    """Reads and lints one file; an unreadable file is a TS999 finding."""
    try:
        source = read_source(path)
    except (OSError, SyntaxError, UnicodeDecodeError, LookupError) as exc:
        return _unreadable(display, f"cannot read file: {_exc_text(exc)}", settings)
    return check_source(source, display, settings, api=api, analyze=analyze)


def fix_file(path: Path, display: str, settings: Settings, *, mode: str, unsafe: bool = False,
             api=None) -> FileResult:
    """`--fix` (mode "fix": the file is rewritten) or `--diff` (mode "diff": only the
    diff is kept) on one file; the result holds the findings that remain."""
    try:
        data = path.read_bytes()
        source = decode_source(data)
    except (OSError, SyntaxError, UnicodeDecodeError, LookupError) as exc:
        return _unreadable(display, f"cannot read file: {_exc_text(exc)}", settings)
    result, fixed_text = fix_text(source, display, settings, unsafe=unsafe, api=api)
    if mode == "diff":
        from .autofix import unified_diff
        result.diff = unified_diff(source, fixed_text, display)
    elif fixed_text != source:
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
            path.write_bytes(fixed_text.encode(encoding))
        except (OSError, SyntaxError, UnicodeError, LookupError) as exc:
            result.diagnostics.append(internal_error(display, f"cannot write the fixes: {_exc_text(exc)}"))
            result.fixed = 0
    return result


def fix_text(source: str, display: str, settings: Settings, *, unsafe: bool = False,
             api=None):
    """(FileResult of the fixed text, the fixed text): `autofix.fix_source` with the
    run's selection and suppressions."""
    from .autofix import SAFE, WITH_UNSAFE, fix_source
    last: List[FileResult] = []

    def lint(text: str) -> List[Diagnostic]:
        r = check_source(text, display, settings, api=api)
        last[:] = [r]
        return r.diagnostics

    outcome = fix_source(source, display, lint, WITH_UNSAFE if unsafe else SAFE)
    result = last[0]
    result.fixed = len(outcome.fixed)
    return result, outcome.text


def _unreadable(display: str, message: str, settings: Settings) -> FileResult:
    d = internal_error(display, message)
    return FileResult(display, [d] if settings.enabled(d.code) else [])


# --- --show-schedule --------------------------------------------------------------------------

def format_schedule(kernel) -> str:
    """The schedule table of one TaskManager (the simulation's when available)."""
    try:
        from ts_runtime.rules.simulation import format_schedule_table
    except ImportError:
        format_schedule_table = None
    if format_schedule_table is not None:
        return str(format_schedule_table(kernel)).rstrip("\n")
    return _lowered_table(kernel)


def _lowered_table(kernel) -> str:
    lines = []
    for t in kernel.tasks:
        lines.append(f"Task {t.name} [warps {t.warp_idx}:{t.warp_end})")
        low = t.lowered
        if low is None:
            lines.append("  (schedule not lowered)")
            continue
        for section in ("head", "loop", "tail"):
            entries = low.section(section)
            title = section
            if section == "loop" and low.has_domain_loop:
                title += f" domain_loop({low.domain_start}, {low.domain_end}, {low.domain_step})"
            lines.append(f"  {title}:")
            if not entries:
                lines.append("    -")
            for e in entries:
                stage = getattr(e.stage, "value", e.stage)
                guard = e.tag if section == "loop" else ""
                extra = f" [{guard}]" if guard else ""
                extra += f" ({e.label})" if isinstance(e.label, str) and e.label else ""
                where = f"  line {e.range.line}" if e.range.path != "<unknown>" else ""
                lines.append(f"    {kernel.name(e.resource)}.{stage}{extra}{where}")
    return "\n".join(lines)


def schedule_texts(result: FileResult) -> List[str]:
    """`path:line: TaskManager schedule` + table, for each kernel of `result`."""
    out = []
    roots = result.kernel_roots if len(result.kernel_roots) == len(result.kernels or ()) else []
    for i, kernel in enumerate(result.kernels):
        rng = getattr(kernel, "range", None)
        line = rng.line if rng is not None and rng.path != "<unknown>" else 1
        try:
            table = format_schedule(kernel)
        except Exception as exc:
            table = f"(schedule unavailable: {_exc_text(exc)})"
        # a kernel of another command-line configuration (configurations.py) says which
        root = roots[i] if roots else ""
        config = f" (configuration {root[root.index('(') + 1:-1]})" if root.endswith(")") and "(" in root else ""
        out.append(f"{result.path}:{line}: TaskManager schedule{config}\n{table}\n\n")
    return out


def _lint_job(job):
    """One file in a worker process (--jobs): kernels become their printed schedules."""
    path, shown, settings, analyze, fix = job
    if fix is not None:
        result = fix_file(path, shown, settings, mode=fix[0], unsafe=fix[1])
        texts = []
    else:
        result = check_file(path, shown, settings, analyze=analyze)
        texts = schedule_texts(result) if analyze else []
    result.kernels = []
    return result, texts


def _run_parallel(jobs, n: int):
    """[(FileResult, schedule texts)] in file order; a lost worker is TS999 for its file."""
    from concurrent.futures import ProcessPoolExecutor
    out = []
    with ProcessPoolExecutor(max_workers=n) as pool:
        futures = [pool.submit(_lint_job, job) for job in jobs]
        for job, fut in zip(jobs, futures):
            try:
                out.append(fut.result())
            except Exception as exc:
                out.append((_unreadable(job[1], f"internal error while linting: {_exc_text(exc)}",
                                        job[2]), []))
    return out


# --- the command ------------------------------------------------------------------------------

def _version() -> str:
    try:
        from importlib.metadata import PackageNotFoundError, version
        try:
            return version("ts-toolkit")
        except PackageNotFoundError:
            return "0+unknown"
    except ImportError:  # pragma: no cover
        return "0+unknown"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ts-lint",
        description="Static linter for NVIDIA Task Scheduling (TS) kernel schedules.",
        epilog="Exit status: 0 clean, 1 errors or warnings found, 2 usage or configuration "
               "error. Configure in [tool.ts-lint] of pyproject.toml; see docs/ts-lint.md.")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="files or folders to lint (folders: *.py, recursively); '-' reads "
                        "stdin (default: .)")
    p.add_argument("--format", choices=output.FORMATS, default="text",
                   help="output format (default: text)")
    p.add_argument("--select", action="append", metavar="CODES",
                   help="comma-separated code prefixes to enable (replaces the config's select)")
    p.add_argument("--extend-select", action="append", metavar="CODES",
                   help="code prefixes to enable in addition")
    p.add_argument("--ignore", action="append", metavar="CODES",
                   help="code prefixes to disable")
    p.add_argument("--statistics", action="store_true",
                   help="print the number of findings per code instead of the findings")
    p.add_argument("--show-schedule", action="store_true",
                   help="print the schedule table of each TaskManager found")
    p.add_argument("--explain-unknown", action="store_true",
                   help="report values the linter could not resolve (TS95x, info)")
    p.add_argument("--no-checker", action="store_true",
                   help="skip the exhaustive interleaving checker")
    p.add_argument("--exit-zero", action="store_true",
                   help="exit 0 even when there are findings")
    p.add_argument("--fix", action="store_true",
                   help="apply the safe fixes of the findings to the files, then report what "
                        "remains ('-': the fixed source is written to stdout)")
    p.add_argument("--unsafe-fixes", action="store_true",
                   help="with --fix or --diff: apply the unsafe fixes too")
    p.add_argument("--diff", action="store_true",
                   help="print the fixes as a unified diff instead of applying them (exit 1 "
                        "when there is one)")
    p.add_argument("--jobs", "-j", type=_jobs, default=1, metavar="N",
                   help="lint N files at a time in worker processes (0: one per CPU; "
                        "default: 1)")
    p.add_argument("--isolated", action="store_true",
                   help="ignore every pyproject.toml")
    p.add_argument("--stdin-filename", metavar="PATH",
                   help="the file name to report (and find the config) for '-'")
    p.add_argument("--version", action="version", version=f"ts-lint {_version()}")
    return p


def _jobs(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected a number of processes >= 0, got {text!r}")
    return n


def _error(message: str) -> int:
    sys.stderr.write(f"ts-lint: error: {message}\n")
    return 2


def main(argv: Optional[Sequence[str]] = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:
        sys.stderr.write("ts-lint: interrupted\n")
        return 130
    except BrokenPipeError:  # e.g. `ts-lint | head`
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:  # pragma: no cover
            pass
        return 1
    except SystemExit:
        raise
    except Exception as exc:  # a bug in the driver: a message, not a traceback
        if _debug():
            traceback.print_exc()
        return _error(f"internal error: {_exc_text(exc)} (set TS_DEBUG=1 for the traceback)")


def _main(argv: Optional[Sequence[str]]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        cli = CliOverrides(
            select=split_codes(args.select, "--select"),
            extend_select=split_codes(args.extend_select, "--extend-select") or (),
            ignore=split_codes(args.ignore, "--ignore") or (),
            explain_unknown=args.explain_unknown, no_checker=args.no_checker)
    except ConfigError as exc:
        return _error(str(exc))
    resolver = ConfigResolver(cli, isolated=args.isolated)
    if args.fix and args.diff:
        return _error("--fix and --diff cannot be combined (--diff shows the fixes --fix applies)")
    fix_mode = ("diff", args.unsafe_fixes) if args.diff else ("fix", args.unsafe_fixes) if args.fix else None
    if fix_mode is not None and (args.show_schedule or args.statistics):
        return _error(f"--{fix_mode[0]} cannot be combined with --show-schedule or --statistics")
    paths = list(args.paths) or ["."]
    use_stdin = "-" in paths
    if use_stdin and len(paths) > 1:
        return _error("'-' (stdin) cannot be combined with other paths")
    try:
        if use_stdin:
            files = []
        else:
            files = discover(paths, resolver)
    except (PathError, ConfigError) as exc:
        return _error(str(exc))

    try:
        api = _load_api()
    except Exception as exc:
        if _debug():
            traceback.print_exc()
        return _error(f"cannot load the linter core (ts_lint.api): {_exc_text(exc)}")

    machine = args.format in ("json", "sarif")
    sched_stream = sys.stderr if machine else sys.stdout
    results: List[FileResult] = []
    if use_stdin:
        name = args.stdin_filename or "-"
        target = Path(os.path.abspath(args.stdin_filename or "stdin.py"))
        try:
            settings = resolver.settings(target)
        except ConfigError as exc:
            return _error(str(exc))
        data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
        try:
            source = decode_source(data)
        except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
            results.append(_unreadable(name, f"cannot read stdin: {_exc_text(exc)}", settings))
        else:
            if fix_mode is not None:
                return _fix_stdin(source, name, settings, api, fix_mode, args)
            results.append(check_source(source, name, settings, api=api, analyze=args.show_schedule))
    else:
        if not files:
            sys.stderr.write("ts-lint: warning: no Python files found under the given paths\n")
        jobs = []
        for f in files:
            try:
                jobs.append((f, display_path(f), resolver.settings(f), args.show_schedule, fix_mode))
            except ConfigError as exc:
                return _error(str(exc))
        n = min(args.jobs or os.cpu_count() or 1, len(jobs))
        if n > 1:
            for result, texts in _run_parallel(jobs, n):
                results.append(result)
                if args.show_schedule:
                    sched_stream.write("".join(texts))
            jobs = []
        for f, shown, settings, analyze, fix in jobs:
            if fix is not None:
                result = fix_file(f, shown, settings, mode=fix[0], unsafe=fix[1], api=api)
            else:
                result = check_file(f, shown, settings, api=api, analyze=analyze)
            results.append(result)
            if analyze:
                sched_stream.write("".join(schedule_texts(result)))
    if use_stdin and args.show_schedule:
        sched_stream.write("".join(schedule_texts(results[0])))
    if fix_mode is not None and fix_mode[0] == "diff":
        return _report_diffs(results)

    diags = dedupe([d for r in results for d in r.diagnostics])
    if args.statistics:
        text = output.format_statistics(diags, "json" if args.format == "json" else "text")
    else:
        text = output.render(args.format, diags, version=_version())
    sys.stdout.write(text)
    fixed = sum(r.fixed for r in results)
    if fix_mode is not None:
        line = (f"Fixed {fixed} finding{'' if fixed == 1 else 's'} in "
                f"{sum(1 for r in results if r.fixed)} file(s).\n")
        (sys.stdout if args.format in ("text", "concise") else sys.stderr).write(line)
    sys.stdout.flush()
    failing = any(d.severity in (Severity.ERROR, Severity.WARNING) for d in diags)
    return 1 if failing and not args.exit_zero else 0


def _report_diffs(results: List[FileResult]) -> int:
    """--diff: the diffs on stdout, a count on stderr; exit 1 when a file would change."""
    diffs = [r.diff for r in results if r.diff]
    sys.stdout.write("".join(diffs))
    n = sum(r.fixed for r in results if r.diff)
    sys.stderr.write(f"Would fix {n} finding{'' if n == 1 else 's'} in {len(diffs)} file(s).\n")
    sys.stdout.flush()
    return 1 if diffs else 0


def _fix_stdin(source: str, name: str, settings: Settings, api, fix_mode, args) -> int:
    """--fix / --diff on '-': the fixed source (or the diff) on stdout, what remains on
    stderr in the chosen format."""
    result, fixed_text = fix_text(source, name, settings, unsafe=fix_mode[1], api=api)
    if fix_mode[0] == "diff":
        from .autofix import unified_diff
        result.diff = unified_diff(source, fixed_text, name)
        return _report_diffs([result])
    sys.stdout.write(fixed_text)
    sys.stdout.flush()
    diags = result.diagnostics
    if diags:
        sys.stderr.write(output.render(args.format, diags, version=_version()))
    failing = any(d.severity in (Severity.ERROR, Severity.WARNING) for d in diags)
    return 1 if failing and not args.exit_zero else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
