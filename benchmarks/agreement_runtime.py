"""ts_runtime as a drop-in for the reference: its verdict on a sample of the tutorial
variants of benchmarks/agreement.py, against the reference's cached verdicts.

usage: python benchmarks/agreement_runtime.py --tutorials DIR [--variants N] [--seed S]
                                              [--jobs J] [--markdown FILE]

agreement.py judges ts-lint, which never runs a program. This judges the other front
end: each variant is run as the reference's own harness runs it
(`agreement_reference.py`: imported, its kernel compiled for sm_100a with fake tensors and
the tutorial's own arguments), with `cutlass.experimental.task_scheduling` rewritten to
`ts_runtime`, so that ts_runtime validates, checks and generates the kernel. Its verdict
(accepted, or the exception raised) is compared with the reference's verdict on the same
text, from `results/agreement_reference.json` (no reference run here). A compile takes
seconds, so a random sample of the cached variants is judged (`--variants`, default 160),
in `--jobs` batch processes. A variant the reference rejects with an error that is not a
TS check (agreement.py's NON_TS) is counted apart.
"""
from __future__ import annotations

import argparse
import collections
import concurrent.futures as cf
import datetime
import importlib.util
import json
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# benchmarks/copy.py would shadow the stdlib `copy`: this folder leaves the import path
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

# one batch process: each variant a fresh module, compiled by agreement_reference's hook
_RUNNER = r'''
import contextlib, importlib.util, io, json, os, sys, tempfile, warnings
os.environ.setdefault("CUTE_DSL_ARCH", "sm_100a")
sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != os.path.realpath(sys.argv[2])]
sys.path.insert(0, sys.argv[3])
spec = importlib.util.spec_from_file_location("ts_agree_hooks", os.path.join(sys.argv[2], "agreement_reference.py"))
hooks = importlib.util.module_from_spec(spec); spec.loader.exec_module(hooks)
for k, (path, key) in enumerate(json.load(open(sys.argv[1]))):
    text = open(path).read().replace("cutlass.experimental.task_scheduling", "ts_runtime")
    # deep enough for the tutorials' `Path(__file__).resolve().parents[10]`
    folder = os.path.join(tempfile.mkdtemp(prefix="ts_rt_"), *["d"] * 12)
    os.makedirs(folder)
    prog = os.path.join(folder, os.path.basename(path))
    open(prog, "w").write(text)
    res = {"path": path, "accepted": True}
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        try:
            name = f"ts_rt_prog_{k}"
            spec = importlib.util.spec_from_file_location(name, prog)
            mod = importlib.util.module_from_spec(spec)
            sys.modules[name] = mod
            spec.loader.exec_module(mod)
            hooks.HOOKS[key](mod)
        except BaseException as exc:
            res = {"path": path, "accepted": False, "exc": type(exc).__name__, "message": str(exc)[:300],
                   "codes": sorted({d.code for d in getattr(exc, "diagnostics", [])})}
    print("@@" + json.dumps(res), flush=True)
'''


def _agreement_module():
    spec = importlib.util.spec_from_file_location("ts_agreement", HERE / "agreement.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tutorials", required=True, help="folder with the tutorial .py files")
    ap.add_argument("--variants", type=int, default=160)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--jobs", "-j", type=int, default=2)
    ap.add_argument("--reference-cache", default=str(HERE / "results" / "agreement_reference.json"))
    ap.add_argument("--markdown", help="write the table to this file")
    args = ap.parse_args(argv)
    t0 = time.time()
    A = _agreement_module()
    tutorials = A.load_tutorials(args.tutorials)
    if not tutorials:
        print(f"no tutorial program of {A.TUTORIALS} under {args.tutorials}", file=sys.stderr)
        return 2
    cache = json.loads(Path(args.reference_cache).read_text())
    cached = [v for v in A.generate(tutorials) if A._md5(v[1]) in cache]
    random.Random(args.seed).shuffle(cached)
    sample = cached[:args.variants]
    folder = Path(tempfile.mkdtemp(prefix="ts_agreement_runtime_"))
    jobs = []
    for name, text, _, tutorial in sample:
        (folder / f"{name}.py").write_text(text, encoding="utf-8")
        jobs.append((str(folder / f"{name}.py"), tutorial))
    runner = folder / "runner.py"
    runner.write_text(_RUNNER)

    def batch(chunk):
        listing = folder / f"jobs_{len(chunk)}_{id(chunk)}.json"
        listing.write_text(json.dumps(chunk))
        out = subprocess.run([sys.executable, str(runner), str(listing), str(HERE), str(ROOT)],
                             capture_output=True, text=True, timeout=6 * 3600)
        return [json.loads(line[2:]) for line in out.stdout.splitlines() if line.startswith("@@")]

    verdicts = {}
    with cf.ThreadPoolExecutor(args.jobs) as ex:
        for part in ex.map(batch, [jobs[i::args.jobs] for i in range(args.jobs)]):
            verdicts.update((r["path"], r) for r in part)
    rows = collections.defaultdict(collections.Counter)
    misses = []
    for name, text, op, tutorial in sample:
        ref, got = cache[A._md5(text)], verdicts.get(str(folder / f"{name}.py"))
        if got is None:
            c = "no run"
        elif got["accepted"] == ref["accepted"]:
            c = "agree"
        elif not ref["accepted"] and any(s in f"{ref.get('exc_type')} {ref.get('message')}" for s in A.NON_TS):
            c = "not TS"
        else:
            c = "false error" if ref["accepted"] else "missed"
            misses.append((name, c, got, ref))
        rows[tutorial][c] += 1
    cols = ["agree", "false error", "missed", "not TS", "no run"]
    out = ["# ts_runtime (drop-in) against the reference on tutorial variants", "",
           f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
           f"- command: `python benchmarks/agreement_runtime.py --tutorials DIR --variants {args.variants} "
           f"--seed {args.seed}` ({len(sample)} of the {len(cached)} variants with a cached reference verdict, "
           f"{time.time() - t0:.0f} s)",
           "- *agree*: ts_runtime rejects the variant exactly when the reference does (compiled with fake "
           "tensors as the tutorial's run() would); *false error*: ts_runtime rejects it, the reference "
           "compiles it; *missed*: the reference rejects it, ts_runtime compiles it; *not TS*: the reference "
           "rejects it with an error that is not a TS check", "",
           "| tutorial | variants | " + " | ".join(cols) + " |", "|---|---|" + "---|" * len(cols)]
    total = collections.Counter()
    for t in sorted(rows):
        total.update(rows[t])
        out.append(f"| {t} | {sum(rows[t].values())} | " + " | ".join(str(rows[t][k]) for k in cols) + " |")
    out.append(f"| **all** | {sum(total.values())} | " + " | ".join(str(total[k]) for k in cols) + " |")
    out += ["", "## Disagreements", ""]
    for name, c, got, ref in misses:
        msg = re.sub(r"\x1b\[[0-9;]*m", "", ref.get("message") or "").strip().splitlines()
        out.append(f"- `{name}`: {c}; ts_runtime: {got.get('exc')} {got.get('codes')}; reference: "
                   f"{ref.get('exc_type')} {(msg[0] if msg else '')[:160]!r}")
    if not misses:
        out.append("None.")
    text = "\n".join(out) + "\n"
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
