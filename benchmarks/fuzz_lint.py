"""Fuzzing ts-lint on large TS programs: random line edits of the reference's tutorials
(or any folder of TS programs), each file linted in-process; a file that ends in an
internal error (TS999) or an exception is kept and listed.

usage: python benchmarks/fuzz_lint.py --tutorials DIR [DIR ...] [--seconds N] [--seed S]
                                      [--jobs J] [--keep DIR] [--markdown FILE]

Why: tests/lint/test_fuzz.py fuzzes the bundled examples (a few hundred lines each) on
every test run. The tutorials are ten times longer and use far more of the API (groups,
clusters, allocators, argparse configurations), so edits of them reach code the examples
do not. This is what a file looks like while someone types: one to three edits per file,
each a line deleted, duplicated, swapped with another, truncated, dedented, indented, or
one of its space-separated tokens replaced by a plain value or name, drawn again (a few
times) while the result does not parse, so that most files reach the analysis. The run
is timed, not counted: `--seconds` per worker.

A finding is a file ts-lint could not analyse: a diagnostic TS999 or an exception out of
`lint_source`. Each is written to `--keep` with the edits that made it, and the table
lists the error message, so that a fix can start from the file. The slowest analyses are
listed too (a file that makes the analysis hang is a bug as well).
"""
from __future__ import annotations

import argparse
import ast
import collections
import datetime
import json
import multiprocessing as mp
import os
import random
import sys
import time
import traceback
from pathlib import Path

# benchmarks/copy.py would shadow the stdlib `copy` that libcst imports
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

ROOT = Path(__file__).resolve().parent.parent
TOKENS = ["None", "0", "1", "x", "self", "()", "[]", "{}", "cutlass.Int32(0)", "True", '"merge"']
OPS = ["delete", "duplicate", "swap", "truncate", "dedent", "indent", "token"]


def edit(text: str, rnd: random.Random) -> tuple:
    """(edited text, [(op, line index), ...]) with one to three random line edits."""
    lines = text.splitlines()
    ops = []
    for _ in range(rnd.randint(1, 3)):
        if not lines:
            break
        i = rnd.randrange(len(lines))
        op = rnd.choice(OPS)
        ops.append((op, i))
        if op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "swap":
            j = rnd.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "truncate":
            lines[i] = lines[i][:rnd.randrange(len(lines[i]) + 1)]
        elif op == "dedent":
            lines[i] = lines[i][4:] if lines[i].startswith("    ") else lines[i].lstrip()
        elif op == "indent":
            lines[i] = "    " + lines[i]
        else:
            toks = lines[i].split(" ")
            if len(toks) > 1:
                k = rnd.randrange(len(toks))
                toks[k] = rnd.choice(TOKENS)
                lines[i] = " ".join(toks)
    return "\n".join(lines) + "\n", ops


# Most random line edits of Python make a syntax error, which ts-lint stops at (TS000): an
# edit is drawn again, up to this many times, until the file parses, so that most files
# reach the analysis (the rest are linted as they are).
_TRIES = 6


def _parses(text: str) -> bool:
    try:
        compile(text, "<fuzz>", "exec", dont_inherit=True, flags=ast.PyCF_ONLY_AST)
    except (SyntaxError, ValueError):
        return False
    return True


def worker(args) -> dict:
    """Lints edited files for `seconds`; returns the counts, the findings and the times."""
    sources, seed, seconds, keep = args
    sys.path.insert(0, str(ROOT))
    from ts_lint.api import lint_source
    rnd = random.Random(seed)
    t_end = time.time() + seconds
    n, syntax, findings, slow = 0, 0, [], []
    while time.time() < t_end:
        name, text = rnd.choice(sources)
        for _ in range(_TRIES):
            edited, ops = edit(text, rnd)
            if _parses(edited):
                break
        n += 1
        t0 = time.perf_counter()
        try:
            diags = lint_source(edited, name)
            msgs = [d.message for d in diags if d.code == "TS999"]
            syntax += any(d.code == "TS000" for d in diags)
        except Exception:  # a crash of the API itself: reported with its traceback
            msgs = ["exception: " + traceback.format_exc(limit=3)[-600:]]
        dt = time.perf_counter() - t0
        slow.append((dt, name, ops))
        if msgs:
            path = Path(keep) / f"fuzz_{seed}_{n}_{name}"
            path.write_text(edited)
            findings.append({"file": str(path), "base": name, "ops": ops, "message": msgs[0][:400]})
    slow.sort(reverse=True)
    return {"files": n, "syntax": syntax, "findings": findings, "slow": slow[:5]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tutorials", nargs="+", required=True, help="folders of TS programs (.py)")
    ap.add_argument("--seconds", type=float, default=300, help="fuzzing time per worker")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", "-j", type=int, default=2)
    ap.add_argument("--keep", default="fuzz_findings", help="folder for the files that failed")
    ap.add_argument("--markdown", help="write the table to this file")
    args = ap.parse_args(argv)
    sources = [(p.name, p.read_text()) for d in args.tutorials for p in sorted(Path(d).glob("*.py"))]
    if not sources:
        ap.error("no .py files in " + " ".join(args.tutorials))
    Path(args.keep).mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    jobs = [(sources, args.seed * 1000 + k, args.seconds, args.keep) for k in range(args.jobs)]
    with mp.Pool(args.jobs) as pool:
        results = pool.map(worker, jobs)
    files = sum(r["files"] for r in results)
    syntax = sum(r["syntax"] for r in results)
    findings = [f for r in results for f in r["findings"]]
    slow = sorted((s for r in results for s in r["slow"]), reverse=True)[:5]
    by_message = collections.Counter(f["message"].split(": ", 1)[-1][:160] for f in findings)
    out = [
        "# ts-lint fuzzing: line edits of the tutorials",
        "",
        f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"- command: `python benchmarks/fuzz_lint.py --tutorials {' '.join(args.tutorials)} --seconds "
        f"{args.seconds:g} --seed {args.seed} --jobs {args.jobs}`",
        f"- {len(sources)} base programs, {files} edited files linted in {time.time() - t0:.0f} s; "
        f"{files - syntax} of them analysed ({syntax} stopped at a syntax error, TS000)",
        f"- files ts-lint could not analyse (TS999 or an exception): **{len(findings)}**",
        "",
    ]
    if by_message:
        out += ["| files | error |", "|---|---|"]
        out += [f"| {n} | {m.replace('|', '/')} |" for m, n in by_message.most_common()]
        out.append("")
    out += ["Slowest analyses:", "", "| s | base | edits |", "|---|---|---|"]
    out += [f"| {dt:.2f} | {name} | {json.dumps(ops)} |" for dt, name, ops in slow]
    text = "\n".join(out) + "\n"
    print(text)
    for f in findings:
        print(json.dumps(f))
    if args.markdown:
        Path(args.markdown).write_text(text)
    return 1 if findings else 0


if __name__ == "__main__":
    raise SystemExit(main())
