"""ts-lint speed: per-file lint time (cold and warm) and time-to-verdict against the reference.

    /work/venv/bin/python benchmarks/lint.py                # all tables
    /work/venv/bin/python benchmarks/lint.py --quick        # one repeat per process measurement
    /work/venv/bin/python benchmarks/lint.py --markdown benchmarks/results/lint.md
    /work/venv/bin/python benchmarks/lint.py --write-modules DIR   # only write the generated modules

Files: every example of examples/ and generated modules:

* `examples x N`: renamed copies of the example programs concatenated to about 1,000 and
  3,000 lines (`generate_module` of benchmarks/lsp.py, so ts-lsp is measured on the
  same modules);
* `GEMM programs x N`: the generated GEMM skeleton programs of benchmarks/checker.py
  (5 resource classes, a WorkQueue subclass, 4 schedules and one TaskManager each; many
  persistent), renamed and concatenated to about 3,000 lines.

Table 1, per file, each file in its own fresh interpreter (`python -c`, `ts_lint.api`):

* *CLI s*: `python -m ts_lint FILE` from spawn to exit (what a pre-commit hook pays:
  interpreter start, imports, lint, output), the child's CPU time and wall-clock, median
  of `--repeats` runs, with compiled bytecode cached (PYTHONPYCACHEPREFIX in /tmp, as
  after a normal install); *CLI no .pyc s*: the same with PYTHONDONTWRITEBYTECODE=1, as
  on the development machine, where every process compiles ts's ~100 modules again;
* *import s*: importing `ts_lint.api` in the fresh interpreter;
* *first*: the first `lint_source(text, path)` call after that import (cold caches, lazy
  imports of libcst and the rule catalogue), CPU and wall;
* *warm*: the median of 5-9 later calls in the same interpreter, CPU and wall, and lines per
  CPU second. The text gets a different trailing comment each time, so no whole-text cache
  can serve it; the parses of unchanged top-level statements are reused (ts-lint caches
  them by text in the process, `ts_lint.extract.source`), the analysis runs in full;
* *warm, no reuse*: the same calls after `ts_lint.api.clear_caches()`, so every statement
  is parsed again (what a second file of that size costs in a long-running process);
* *edit, incremental*: what ts-lsp pays per edit: `analyze_source(..., cache=AnalysisCache())`
  after a comment line is inserted in the middle of the module (a different line each
  time), so only the parts whose text changed are analysed again (ts_lint.incremental).

Table 2, time to verdict per example, measured in the same run: a fresh process running
`python -m ts_lint FILE` against a fresh process doing the only check the reference
offers: import cutlass and run the program's `build()` (tests/oracle.py's runner), both
with cached bytecode. Wall-clock median of `--repeats` runs and the children's CPU time
(user + sys, from `getrusage(RUSAGE_CHILDREN)`), which other load on the machine inflates
less. An untimed warm-up run fills the bytecode cache first.
"""
from __future__ import annotations

import os
import sys

# Run as a script, benchmarks/ is sys.path[0]; its modules must not shadow the standard
# library (benchmarks/copy.py would hide `copy`).
sys.path[:] = [p for p in sys.path
               if os.path.abspath(p or os.curdir) != os.path.dirname(os.path.abspath(__file__))]

import argparse
import importlib.util
import json
import re
import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Tuple

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*.py") if re.match(r"\d\d_", p.name))
TARGET_LINES, TARGET_MS = 3000, 300


def _load_sibling(name: str):
    """benchmarks/<name>.py as a module (benchmarks/ is not a package)."""
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------- generated modules

_IMPORT = re.compile(r"^(from \S+ import .*|import .*)$")


def gemm_module(min_lines: int) -> str:
    """Renamed copies of benchmarks/checker.py's generated GEMM programs, about `min_lines`."""
    checker = _load_sibling("checker")
    imports: List[str] = []
    out: List[str] = []
    rows = checker.COMPARE_ROWS
    k = 0
    while len(imports) + len(out) < min_lines:
        g = rows[k % len(rows)]
        text = checker.gemm_program(g)
        lines = text.splitlines()
        body: List[str] = []
        i = 1                                   # line 0 is the docstring
        while i < len(lines):
            line = lines[i]
            if _IMPORT.match(line):
                stmt = [line]
                while stmt[-1].rstrip().endswith("(") or ("(" in "".join(stmt) and ")" not in "".join(stmt)):
                    i += 1
                    stmt.append(lines[i])
                joined = " ".join(s.strip() for s in stmt).replace("( ", "(").replace(" )", ")")
                if joined not in imports:
                    imports.append(joined)
            else:
                body.append(line)
            i += 1
        names = set(re.findall(r"^(?:class|def) (\w+)", "\n".join(body), re.M))
        names |= set(re.findall(r"^([A-Z_][A-Z0-9_]*(?:, [A-Z_][A-Z0-9_]*)*) =", "\n".join(body), re.M))
        flat = sorted({n.strip() for group in names for n in group.split(",")}, key=len, reverse=True)
        rx = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, flat)) + r")\b")
        out.append(f"# ---- copy {k}: {g.label}")
        out.extend(rx.sub(lambda m: f"{m.group(1)}_{k}", l) for l in body)
        out.append("")
        k += 1
    head = ['"""Generated by benchmarks/lint.py: renamed copies of the GEMM programs of '
            'benchmarks/checker.py."""', "from dataclasses import dataclass"]
    head += [i for i in imports if i != "from dataclasses import dataclass"]
    return "\n".join(head + ["", ""] + out).rstrip() + "\n"


def generated_modules() -> List[Tuple[str, str]]:
    lsp = _load_sibling("lsp")
    return [("examples x N (1,000 lines)", lsp.generate_module(1000)),
            ("examples x N (3,000 lines)", lsp.generate_module(3000)),
            ("GEMM programs x N (3,000 lines)", gemm_module(3000))]


# ---------------------------------------------------------------- measuring

_WORKER = r'''
import json, sys, time
w0, c0 = time.perf_counter(), time.process_time()
from ts_lint.api import analyze_source, lint_source
imp = (time.perf_counter() - w0, time.process_time() - c0)
path, budget = sys.argv[1], float(sys.argv[2])
text = open(path, encoding="utf-8").read()
w0, c0 = time.perf_counter(), time.process_time()
diags = lint_source(text, path)
first = (time.perf_counter() - w0, time.process_time() - c0)
n = max(5, min(9, int(budget / max(first[1], 1e-3))))
warm = []
for i in range(n):
    t = text + f"\n# warm run {i}\n"
    w0, c0 = time.perf_counter(), time.process_time()
    lint_source(t, path)
    warm.append((time.perf_counter() - w0, time.process_time() - c0))
from ts_lint.api import AnalysisCache, clear_caches
fresh = []
for i in range(n):
    t = text + f"\n# fresh run {i}\n"
    clear_caches()
    w0, c0 = time.perf_counter(), time.process_time()
    lint_source(t, path)
    fresh.append((time.perf_counter() - w0, time.process_time() - c0))
cache = AnalysisCache()
analyze_source(text, path, cache=cache)
lines = text.splitlines(True)
mid = len(lines) // 2
edit = []
for i in range(n):
    t = "".join(lines[:mid + i] + [f"# edit {i}\n"] + lines[mid + i:])
    w0, c0 = time.perf_counter(), time.process_time()
    analyze_source(t, path, cache=cache)
    edit.append((time.perf_counter() - w0, time.process_time() - c0))
analysis = analyze_source(text, path)
errors = sum(1 for d in diags if d.severity.value == "error")
print(json.dumps({"import": imp, "first": first, "warm": warm, "fresh": fresh, "edit": edit,
                  "findings": len(diags), "errors": errors, "kernels": len(analysis.kernels)}))
'''


PYCACHE = os.path.join(tempfile.gettempdir(), "ts_bench_pycache")


def _env(bytecode: bool = True) -> Dict[str, str]:
    """Environment of the measured processes. With `bytecode`, compiled modules are cached
    under PYCACHE (PYTHONPYCACHEPREFIX, outside the repository) for every package alike,
    as after a normal install; without, PYTHONDONTWRITEBYTECODE=1 as set on the development
    machine: the repository's modules (ts_runtime, ts_lint) are compiled from source in
    every process, while site-packages (cutlass, libcst) keep the .pyc files of their
    installation."""
    drop = ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["PYTHONPATH"] = str(ROOT)
    env.setdefault("CUTE_DSL_ARCH", "sm_100a")
    if bytecode:
        env["PYTHONPYCACHEPREFIX"] = PYCACHE
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _timed(cmd: List[str], **kw) -> Tuple[float, float, subprocess.CompletedProcess]:
    """(wall s, child CPU s, result) of one subprocess."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc


def lint_in_fresh_process(path: str, budget: float = 3.0) -> dict:
    wall, cpu, proc = _timed([sys.executable, "-c", _WORKER, path, str(budget)], cwd=str(ROOT), env=_env())
    if proc.returncode != 0:
        raise RuntimeError(f"lint worker failed on {path}:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def cli(path: str, repeats: int, bytecode: bool = True) -> dict:
    env = _env(bytecode)
    runs = [_timed([sys.executable, "-m", "ts_lint", path], cwd=str(ROOT), env=env) for _ in range(repeats)]
    return {"wall": statistics.median(r[0] for r in runs), "cpu": statistics.median(r[1] for r in runs),
            "rc": runs[-1][2].returncode, "out": runs[-1][2].stdout}


def reference(path: str, repeats: int) -> dict:
    """Fresh interpreter: import cutlass + the program's build() under the reference
    (bytecode cached like ts-lint's: `_env()`)."""
    sys.path.insert(0, str(ROOT / "tests"))
    import oracle
    python = oracle.reference_python()
    if python is None:
        return {}
    source = Path(path).read_text()
    runs = []
    with tempfile.TemporaryDirectory(prefix="ts_bench_ref_") as tmp:
        prog = Path(tmp, "program.py")
        prog.write_text(oracle.translate(source))
        runner = Path(tmp, "runner.py")
        runner.write_text(oracle._RUNNER)
        env = _env()
        env.pop("PYTHONPATH")
        for _ in range(repeats):
            result = Path(tmp, "result.json")
            if result.exists():
                result.unlink()
            wall, cpu, proc = _timed([python, str(runner), str(prog), "build", str(result)], cwd=tmp, env=env)
            verdict = json.loads(result.read_text()) if result.exists() else {"accepted": None}
            runs.append((wall, cpu, verdict))
    return {"wall": statistics.median(r[0] for r in runs), "cpu": statistics.median(r[1] for r in runs),
            "accepted": runs[-1][2].get("accepted")}


# ---------------------------------------------------------------- reporting

def machine_info() -> dict:
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as fh:
            names = [l.split(":", 1)[1].strip() for l in fh if l.startswith("model name")]
        cpu = names[0] if names else cpu
    except OSError:
        pass
    date = subprocess.run(["date"], capture_output=True, text=True).stdout.strip()
    import platform
    return {"date": date, "nproc": os.cpu_count(), "cpu": cpu, "python": platform.python_version(),
            "load": os.getloadavg()}


def _ms(x: float) -> str:
    return f"{x * 1000:.0f}"


def per_file_rows(files: List[Tuple[str, str, str]], repeats: int) -> List[dict]:
    rows = []
    for name, path, text in files:
        w = lint_in_fresh_process(path)
        c = cli(path, repeats)
        nc = cli(path, repeats, bytecode=False)
        warm_cpu = statistics.median(x[1] for x in w["warm"])
        warm_wall = statistics.median(x[0] for x in w["warm"])
        med = lambda key, k: statistics.median(x[k] for x in w[key])
        lines = len(text.splitlines())
        rows.append({"file": name, "lines": lines, "kernels": w["kernels"], "findings": w["findings"],
                     "cli_wall": c["wall"], "cli_cpu": c["cpu"], "import": w["import"][0],
                     "nopyc_wall": nc["wall"], "nopyc_cpu": nc["cpu"],
                     "first_cpu": w["first"][1], "first_wall": w["first"][0],
                     "warm_cpu": warm_cpu, "warm_wall": warm_wall, "warm_n": len(w["warm"]),
                     "fresh_cpu": med("fresh", 1), "fresh_wall": med("fresh", 0),
                     "edit_cpu": med("edit", 1), "edit_wall": med("edit", 0),
                     "lps": lines / warm_cpu if warm_cpu > 0 else float("nan")})
    return rows


PER_FILE_COLS = ["file", "lines", "kernels", "findings", "CLI s (CPU / wall)", "CLI no .pyc s (CPU / wall)",
                 "import s", "first ms (CPU / wall)",
                 "warm ms (CPU / wall)", "lines/s (CPU)", "warm, no reuse ms (CPU / wall)",
                 "edit, incremental ms (CPU / wall)"]


def per_file_cells(r: dict) -> List[str]:
    return [r["file"], str(r["lines"]), str(r["kernels"]), str(r["findings"]),
            f"{r['cli_cpu']:.2f} / {r['cli_wall']:.2f}", f"{r['nopyc_cpu']:.2f} / {r['nopyc_wall']:.2f}",
            f"{r['import']:.2f}", f"{_ms(r['first_cpu'])} / {_ms(r['first_wall'])}",
            f"{_ms(r['warm_cpu'])} / {_ms(r['warm_wall'])}", f"{r['lps']:,.0f}",
            f"{_ms(r['fresh_cpu'])} / {_ms(r['fresh_wall'])}", f"{_ms(r['edit_cpu'])} / {_ms(r['edit_wall'])}"]


VERDICT_COLS = ["example", "ts-lint s (wall)", "ts-lint CPU s", "ts-lint verdict", "reference s (wall)",
                "reference CPU s", "reference verdict", "ratio (wall)", "ratio (CPU)"]


def verdict_rows(repeats: int) -> List[dict]:
    rows = []
    for p in EXAMPLES:
        c = cli(str(p), repeats)
        r = reference(str(p), repeats)
        rows.append({"example": p.stem, "lint": c, "ref": r})
    return rows


def verdict_cells(r: dict) -> List[str]:
    c, ref = r["lint"], r["ref"]
    lint_v = "clean" if c["rc"] == 0 else f"findings (rc {c['rc']})"
    if not ref:
        return [r["example"], f"{c['wall']:.2f}", f"{c['cpu']:.2f}", lint_v, "-", "-", "no reference", "-", "-"]
    ref_v = {True: "accepted", False: "rejected", None: "no verdict"}[ref["accepted"]]
    return [r["example"], f"{c['wall']:.2f}", f"{c['cpu']:.2f}", lint_v, f"{ref['wall']:.2f}",
            f"{ref['cpu']:.2f}", ref_v, f"{ref['wall'] / c['wall']:.1f}x", f"{ref['cpu'] / c['cpu']:.1f}x"]


def text_table(cols: List[str], rows: List[List[str]]) -> str:
    widths = [max(len(c), *(len(r[i]) for r in rows)) if rows else len(c) for i, c in enumerate(cols)]
    fmt = lambda cells: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    return "\n".join([fmt(cols), "-" * len(fmt(cols))] + [fmt(r) for r in rows])


def md_table(cols: List[str], rows: List[List[str]]) -> str:
    return "\n".join(["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
                     + ["| " + " | ".join(r) + " |" for r in rows])


def target_line(rows: List[dict]) -> str:
    big = [r for r in rows if r["lines"] >= TARGET_LINES * 0.95 and r["file"] not in [p.stem for p in EXAMPLES]]
    if not big:
        return "no generated module of ~3,000 lines in this run"
    parts = []
    for r in big:
        ok = "met" if r["warm_cpu"] * 1000 < TARGET_MS else "MISSED"
        fresh = "met" if r["fresh_cpu"] * 1000 < TARGET_MS else "missed"
        parts.append(f"{r['file']}: {_ms(r['warm_cpu'])} ms CPU / {_ms(r['warm_wall'])} ms wall warm ({ok}); "
                     f"{_ms(r['fresh_cpu'])} ms CPU without reused parses ({fresh}); "
                     f"{_ms(r['edit_cpu'])} ms CPU per edit with the incremental cache")
    return (f"Target: a {TARGET_LINES:,}-line module in under {TARGET_MS} ms warm (CPU). "
            + "; ".join(parts) + ".")


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one repeat per process measurement")
    ap.add_argument("--repeats", type=int, default=3, help="process runs per measurement (default 3)")
    ap.add_argument("--markdown", metavar="FILE", help="also write the tables as markdown")
    ap.add_argument("--no-reference", action="store_true", help="skip the time-to-verdict table")
    ap.add_argument("--write-modules", metavar="DIR", help="write the generated modules to DIR and exit")
    args = ap.parse_args(argv)
    repeats = 1 if args.quick else args.repeats
    gens = generated_modules()
    if args.write_modules:
        os.makedirs(args.write_modules, exist_ok=True)
        for name, text in gens:
            path = os.path.join(args.write_modules, re.sub(r"\W+", "_", name).strip("_").lower() + ".py")
            Path(path).write_text(text)
            print(path)
        return
    info = machine_info()
    print(f"{info['date']} | {info['nproc']} CPUs ({info['cpu']}) | load {info['load'][0]:.2f} | "
          f"Python {info['python']}\n", flush=True)
    t0 = time.perf_counter()
    # warm-up (untimed): fills the bytecode cache of both implementations
    cli(str(EXAMPLES[0]), 1)
    lint_in_fresh_process(str(EXAMPLES[0]), budget=0)
    if not args.no_reference:
        reference(str(EXAMPLES[0]), 1)
    with tempfile.TemporaryDirectory(prefix="ts_bench_lint_") as tmp:
        files = [(p.stem, str(p), p.read_text()) for p in EXAMPLES]
        for name, text in gens:
            path = os.path.join(tmp, re.sub(r"\W+", "_", name).strip("_").lower() + ".py")
            Path(path).write_text(text)
            files.append((name, path, text))
        rows = per_file_rows(files, repeats)
    t1 = text_table(PER_FILE_COLS, [per_file_cells(r) for r in rows])
    print(t1)
    print("\n" + target_line(rows) + "\n", flush=True)
    vrows = [] if args.no_reference else verdict_rows(repeats)
    t2 = text_table(VERDICT_COLS, [verdict_cells(r) for r in vrows]) if vrows else ""
    if t2:
        print(t2)
    wall_total = time.perf_counter() - t0
    end = machine_info()
    print(f"\nwall-clock {wall_total:.0f} s; load average at end {end['load'][0]:.2f}")
    if args.markdown:
        load = lambda i: " / ".join(f"{x:.2f}" for x in i["load"])
        md = ["# ts-lint speed", "",
              f"- date: {info['date']}",
              f"- machine: {info['nproc']} CPUs ({info['cpu']}), Python {info['python']}",
              f"- load average (1/5/15 min) at start: {load(info)}, at end: {load(end)} (shared machine)",
              f"- command: `python benchmarks/lint.py {' '.join(argv)}`".replace(" `", " `").rstrip(),
              f"- process measurements: median of {repeats} run(s); total wall-clock of the run "
              f"{wall_total:.0f} s", "",
              "## Per file", "", md_table(PER_FILE_COLS, [per_file_cells(r) for r in rows]), "",
              target_line(rows), ""]
        if vrows:
            md += ["## Time to verdict per example", "",
                   "`python -m ts_lint FILE` against a fresh process that imports cutlass and runs the "
                   "example's `build()` under the reference (the reference's only way to check a program).",
                   "", md_table(VERDICT_COLS, [verdict_cells(r) for r in vrows]), ""]
        Path(args.markdown).write_text("\n".join(md))


if __name__ == "__main__":
    main()
