"""Differential fuzzing: ts_runtime, ts-lint and the reference on random single-defect
variants of TS programs, with the exhaustive checker on.

usage: python benchmarks/differential.py [--variants N] [--seed S] [--jobs J]
                                         [--markdown FILE] [--keep DIR]

Why: agreement.py judges ts-lint on the tutorials' variants, with the checker flags the
tutorials set. This one aims at the checker and at the two front ends agreeing with
each other: every variant runs with `exhaustive_deadlock_race_check=True` forced into its
`TaskManager(...)` call, through

* ts_runtime: the variant imported as a fresh module in this process and its `build()`
  called; the verdict is the exception it raises (its diagnostics' codes, if any);
* ts-lint: one folder run (`python -m ts_lint DIR --format json --isolated`), never
  running the variant; its verdict is the set of error codes per file;
* the reference: `tests/oracle_batch.py` (the variant with `ts_runtime` rewritten to
  `cutlass.experimental.task_scheduling`, imported and `build()` called in a batch
  subprocess).

Bases: the GEMM skeletons of benchmarks/checker.py (`gemm_program`, random stage / K /
epilogue counts, persistent tiles, C aliasing A/B, a split A|B Merge group, two epilogue
warpgroups, a 2-CTA cluster) and the programs of examples/. Operators, one per variant
(none for one variant in ten): in an `@schedule` body, a statement deleted (`pass`),
duplicated or swapped with the next one, a pipeline operation swapped for its
counterpart (acquire <-> wait, commit <-> release), a call's receiver replaced by
another resource the file's schedules use, a statement moved into or out of a loop; or a
stage / iteration count changed (0, 1, +-1, x2: the generator's constants, a `build()`
default, a pipeline factory's literal `num_stages=`).

Judged, per variant:

* *verdict*: ts_runtime rejects it exactly when the reference does;
* *checker*: where the reference's error is its exhaustive checker's (deadlock, aliasing
  race, PDL order), ts_runtime reports the same finding (TS801 / TS802 / TS803, or the
  variant codes TS804 / TS805);
* *front ends*: ts-lint's error codes are ts_runtime's (a syntax error: ts-lint's TS000,
  the runtime's SyntaxError; an AttributeError or a TypeError, which the runtime raises as
  Python does: ts-lint's TS963 or TS907).
"""
from __future__ import annotations

import argparse
import collections
import concurrent.futures as cf
import contextlib
import datetime
import importlib.util
import io
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

# benchmarks/copy.py would shadow the stdlib `copy`: this folder leaves the import path
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

EXAMPLES = sorted(p.stem for p in (ROOT / "examples").glob("0*.py"))
OPS = ["del", "dup", "swap", "opswap", "recv", "indent"]
COUNTERPART = {".acquire()": ".wait()", ".wait()": ".acquire()", ".commit()": ".release()",
               ".release()": ".commit()", ".try_acquire()": ".try_wait()", ".try_wait()": ".try_acquire()"}
CHECKER = {"deadlock": "TS801", "aliasing race": "TS802", "PDL order": "TS803"}


def _checker_module():
    spec = importlib.util.spec_from_file_location("ts_bench_checker", HERE / "checker.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["ts_bench_checker"] = mod
    spec.loader.exec_module(mod)
    return mod


# ----------------------------------------------------------------------------- variants
def _gemm_base(rng, bench) -> tuple:
    kw = dict(stages=rng.choice([1, 2, 3, 4]), k=rng.choice([1, 2, 3, 5]), epi=rng.choice([1, 2, 3]))
    for key, p, value in (("persistent", 0.4, True), ("alias_c", 0.4, True), ("split_ab", 0.25, True),
                          ("epi_groups", 0.2, 2), ("cluster", 0.2, (2, 1, 1, 1))):
        if rng.random() < p:
            kw[key] = value
    label = "gemm " + " ".join(f"{k}={v}" for k, v in kw.items())
    return label, bench.gemm_program(bench.Gemm(**kw))


def _schedule_lines(lines: list) -> list:
    """Indices of the statements of `@schedule` bodies (not `with` headers or comments)."""
    out, base, inside = [], 0, False
    for i, line in enumerate(lines):
        text = line.strip()
        if text == "@schedule":
            inside, base = True, None
            continue
        if inside and base is None and text.startswith("def "):
            base = len(line) - len(line.lstrip())
            continue
        if inside and base is not None:
            if not text or len(line) - len(line.lstrip()) <= base:
                inside = False
            elif not text.startswith(("with ", "#")):
                out.append(i)
    return out


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _mutate(rng, src: str):
    """(variant, description) or None when the drawn edit does not apply."""
    lines = src.split("\n")
    sched = _schedule_lines(lines)
    if rng.random() < 0.15:
        sites = [j for j, line in enumerate(lines)
                 if re.match(r"^(STAGES, K_ITERS, EPI_SUBTILES = |def build\(|STAGES = \d+$)", line)
                 or re.search(r"num_stages=\d+", line)]
        nums = [(j, m) for j in sites for m in re.finditer(r"(?<![\w.])\d+(?![\w.])", lines[j])
                if not re.search(r"num_stages=", lines[j]) or lines[j][:m.start()].endswith("num_stages=")]
        if not nums:
            return None
        j, m = rng.choice(nums)
        v = int(m.group(0))
        new = rng.choice([0, 1, max(0, v - 1), v + 1, 2 * v])
        old = lines[j]
        lines[j] = old[:m.start()] + str(new) + old[m.end():]
        return "\n".join(lines), f"count L{j + 1}: {old.strip()} -> {lines[j].strip()}"
    if not sched:
        return None
    i = rng.choice(sched)
    op = rng.choice(OPS)
    old = lines[i].strip()
    if op == "del":
        lines[i] = " " * _indent(lines[i]) + "pass"
    elif op == "dup":
        lines.insert(i + 1, lines[i])
    elif op == "swap":
        if i + 1 >= len(lines) or _indent(lines[i + 1]) != _indent(lines[i]) or not lines[i + 1].strip():
            return None
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
    elif op == "opswap":
        got = next((a for a in COUNTERPART if lines[i].rstrip().endswith(a)), None)
        if got is None:
            return None
        lines[i] = lines[i].rstrip()[:-len(got)] + COUNTERPART[got]
    elif op == "recv":
        m = re.match(r"(\s*)(\w+)(\.\w+\(.*)$", lines[i])
        names = sorted({n.group(1) for j in sched for n in [re.match(r"\s*(\w+)\.", lines[j])] if n})
        names = [n for n in names if m is None or n != m.group(2)]
        if m is None or not names:
            return None
        lines[i] = m.group(1) + rng.choice(names) + m.group(3)
    else:   # indent: out of the enclosing block, or into the `with` block just above
        cur = _indent(lines[i])
        if lines[i - 1].rstrip().endswith(":"):
            return None
        delta = rng.choice([-4, 4])
        if delta > 0:
            k = i - 1
            while k > 0 and _indent(lines[k]) > cur:
                k -= 1
            if not lines[k].strip().startswith("with ") or k == i - 1:
                return None
        lines[i] = " " * (cur + delta) + lines[i].lstrip()
    out = "\n".join(lines)
    try:
        compile(out, "variant", "exec")
    except SyntaxError:
        return None
    return out, f"{op} L{i + 1}: {old}" + (f" -> {lines[i].strip()}" if op in ("opswap", "recv") else "")


def _force_check(src: str) -> str:
    """`exhaustive_deadlock_race_check=True` in every `TaskManager(...)` call."""
    return re.sub(r"(?<![\w.])TaskManager\((?!\))", "TaskManager(exhaustive_deadlock_race_check=True, ", src)


def make_variants(n: int, seed: int) -> list:
    bench = _checker_module()
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        if rng.random() < 0.5:
            base, src = _gemm_base(rng, bench)
        else:
            base = rng.choice(EXAMPLES)
            src = (ROOT / "examples" / f"{base}.py").read_text()
        if rng.random() < 0.1:
            got = (src, "none")
        else:
            got = _mutate(rng, src)
        if got is None:
            continue
        variant, desc = got
        out.append({"base": base, "edit": desc, "op": desc.split()[0], "source": _force_check(variant)})
    return out


# ----------------------------------------------------------------------------- judges
def runtime_verdict(path: Path, name: str) -> dict:
    """ts_runtime: import the variant and call its `build()`."""
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    try:
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            spec.loader.exec_module(mod)
            mod.build()
    except BaseException as exc:     # noqa: BLE001 (the verdict is the exception)
        from ts_runtime.diagnostics import Severity
        codes = sorted({d.code for d in getattr(exc, "diagnostics", []) if d.severity is Severity.ERROR})
        return {"accepted": False, "exc": type(exc).__name__, "codes": codes, "message": str(exc)[:300]}
    return {"accepted": True, "exc": None, "codes": [], "message": ""}


def lint_verdicts(folder: Path) -> dict:
    """ts-lint: error codes per file name, from one folder run."""
    out = subprocess.run([sys.executable, "-m", "ts_lint", str(folder), "--format", "json", "--isolated"],
                         cwd=ROOT, capture_output=True, text=True)
    by = collections.defaultdict(set)
    for d in json.loads(out.stdout or "[]"):
        if d["severity"] == "error":
            by[Path(d["filename"]).name].add(d["code"])
    return by


def reference_verdicts(sources: list, jobs: int) -> list:
    from oracle_batch import reference_verdicts as batch
    chunks = [sources[i::jobs] for i in range(jobs)]
    with cf.ThreadPoolExecutor(jobs) as pool:
        parts = list(pool.map(lambda c: batch(c, entry="build", timeout=1800), chunks))
    out = [None] * len(sources)
    for j, part in enumerate(parts):
        for k, v in enumerate(part):
            out[j + k * jobs] = v
    return out


def reference_checker_finding(v) -> str | None:
    if v is None or v.accepted:
        return None
    for key in CHECKER:
        if key in v.message:
            return key
    return None


# ----------------------------------------------------------------------------- report
def judge(rec: dict) -> dict:
    rt, ref, lint = rec["runtime"], rec["reference"], set(rec["lint"])
    out = {}
    out["verdict"] = None if ref is None else rt["accepted"] == ref["accepted"]
    finding = ref and ref.get("checker")
    if finding:
        code = CHECKER[finding]
        out["checker"] = code in rt["codes"] or bool({"TS804", "TS805"} & set(rt["codes"]))
    else:
        out["checker"] = None
    codes = set(rt["codes"])
    if rt["accepted"]:
        same = not lint
    elif codes:
        same = lint == codes
    elif rt["exc"] == "SyntaxError":
        same = lint == {"TS000"}
    elif rt["exc"] == "AttributeError":
        same = lint == {"TS963"}
    elif rt["exc"] == "TypeError":
        same = lint == {"TS907"}
    else:
        same = bool(lint)
    out["front ends"] = same
    return out


def table(records: list, key) -> list:
    rows = collections.OrderedDict()
    for r in records:
        rows.setdefault(key(r), []).append(r)
    lines = ["| | variants | verdict = reference | checker finding = reference's | ts-lint = ts_runtime |",
             "|---|---|---|---|---|"]

    def frac(rs, what):
        judged = [r["judged"][what] for r in rs if r["judged"][what] is not None]
        return f"{sum(judged)}/{len(judged)}" if judged else "-"
    for k, rs in sorted(rows.items()) + [("**all**", records)]:
        lines.append(f"| {k} | {len(rs)} | {frac(rs, 'verdict')} | {frac(rs, 'checker')} | {frac(rs, 'front ends')} |")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variants", type=int, default=600)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", "-j", type=int, default=max(1, min(4, os.cpu_count() or 1)))
    ap.add_argument("--markdown", help="write the tables to this file")
    ap.add_argument("--keep", help="write the variants to this folder (default: a temporary one)")
    args = ap.parse_args(argv)
    from oracle import reference_available
    if not reference_available():
        print("the reference (nvidia-cutlass-dsl with cutlass.experimental.task_scheduling) is not importable "
              "here: nothing to compare with", file=sys.stderr)
        return 2
    t0 = time.time()
    variants = make_variants(args.variants, args.seed)
    with tempfile.TemporaryDirectory(prefix="ts_differential_") as tmp:
        folder = Path(args.keep or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for i, v in enumerate(variants):
            v["file"] = f"variant_{args.seed}_{i:04d}.py"
            (folder / v["file"]).write_text(v["source"])
        lint = lint_verdicts(folder)
        for i, v in enumerate(variants):
            v["runtime"] = runtime_verdict(folder / v["file"], f"ts_differential_{i}")
            v["lint"] = sorted(lint.get(v["file"], ()))
    refs = reference_verdicts([v["source"] for v in variants], args.jobs)
    for v, ref in zip(variants, refs):
        v["reference"] = None if ref is None else {
            "accepted": ref.accepted, "exc": ref.exc_type, "message": ref.message[:300],
            "checker": reference_checker_finding(ref)}
        v["judged"] = judge(v)
    elapsed = time.time() - t0
    out = [
        "# Differential fuzzing: ts_runtime, ts-lint and the reference on single-defect variants",
        "",
        f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"- command: `python benchmarks/differential.py --variants {args.variants} --seed {args.seed}` "
        f"({len(variants)} variants, {elapsed:.0f} s)",
        "- every variant runs with `exhaustive_deadlock_race_check=True`; see the module docstring for the "
        "bases, the operators and what each column judges",
        "",
        "## By operator", "", *table(variants, lambda r: r["op"]), "",
        "## By base program", "",
        *table(variants, lambda r: r["base"] if not r["base"].startswith("gemm") else "gemm (generated)"), "",
        "## Outcomes (ts_runtime / reference)", "",
    ]
    pairs = collections.Counter(
        ("accepted" if v["runtime"]["accepted"] else "rejected",
         "-" if v["reference"] is None else
         ("accepted" if v["reference"]["accepted"] else (v["reference"]["checker"] or "rejected")))
        for v in variants)
    out += ["| ts_runtime | reference | variants |", "|---|---|---|"]
    out += [f"| {a} | {b} | {n} |" for (a, b), n in sorted(pairs.items())]
    out += ["", "## Disagreements", ""]
    bad = [v for v in variants if False in v["judged"].values()]
    for v in bad:
        ref = v["reference"] or {}
        out.append(f"- `{v['file']}` ({v['base']}; {v['edit']}): judged {v['judged']}; ts_runtime "
                   f"{v['runtime']['exc']} {v['runtime']['codes']}; ts-lint {v['lint']}; reference "
                   f"{ref.get('exc')} '{ref.get('message', '')[:160]}'")
    if not bad:
        out.append("None.")
    text = "\n".join(out) + "\n"
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text)
    return 0 if not bad else 1


if __name__ == "__main__":
    raise SystemExit(main())
