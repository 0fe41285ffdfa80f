"""Misspelt identifiers in the tutorials: does ts-lint report the error where Python (or
the DSL) raises it?

usage: python benchmarks/typos.py --tutorials DIR [--per-file N] [--seed S]
                                  [--reference N] [--markdown FILE] [--jobs J]

Why: agreement.py's operators edit statements and TS calls; a kernel author's most common
slip is a one-letter typo anywhere in the file (an import, an annotation, a keyword, a
local in a work method). Each variant here changes one identifier of one tutorial
(`benchmarks/agreement.py`'s TUTORIALS, from DIR) by dropping or doubling one of its
letters (identifiers longer than three letters, keywords excluded), and is linted once
(`python -m ts_lint DIR --format json --isolated`). Classified by where ts-lint's errors
are:

* *at the typo*: an error on the edited line;
* *elsewhere*: errors, none on that line (often right: a misspelt definition fails where
  it is used, a misspelt keyword at the call's first line);
* *none*: no error (the line may be code the build never runs: a host driver, argparse,
  a configuration not built by default).

`--reference N` also runs the reference (agreement_reference.py: the tutorial's kernel
compiled with fake tensors) on N variants of each class, drawn at random: a variant with a
ts-lint error that the reference compiles is a false error, one without that it rejects is
a miss (most are errors no TS checker can see: an attribute of a cutlass module ts-lint
does not import, a keyword of a CuTe call).
"""
from __future__ import annotations

import argparse
import collections
import concurrent.futures as cf
import datetime
import io
import keyword
import random
import sys
import tempfile
import time
import tokenize
from pathlib import Path

HERE = Path(__file__).resolve().parent
# benchmarks/copy.py would shadow the stdlib `copy`: this folder leaves the import path
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
ROOT = HERE.parent


def _agreement():
    import importlib.util
    spec = importlib.util.spec_from_file_location("ts_agreement", HERE / "agreement.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def variants(tutorials: dict, per_file: int, seed: int) -> list:
    """[(name, text, tutorial, line, old, new)]: one typo each."""
    rnd = random.Random(seed)
    out = []
    for stem, text in sorted(tutorials.items()):
        toks = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
                if t.type == tokenize.NAME and not keyword.iskeyword(t.string) and len(t.string) > 3]
        lines = text.splitlines(keepends=True)
        for k in range(per_file):
            t = rnd.choice(toks)
            s = t.string
            i = rnd.randrange(1, len(s))
            new = s[:i] + s[i + 1:] if rnd.random() < 0.5 else s[:i] + s[i] + s[i:]
            row, col = t.start
            ln = lines[row - 1]
            if ln[col:col + len(s)] != s:
                continue
            text2 = "".join(lines[:row - 1] + [ln[:col] + new + ln[col + len(s):]] + lines[row:])
            out.append((f"{stem}__typo_{k}_L{row}", text2, stem, row, s, new))
    return out


def main(argv=None) -> int:
    A = _agreement()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    A.variant_arguments(ap, per_file=40, seed=1)
    ap.add_argument("--reference", type=int, default=0, help="reference runs per class (0: none)")
    args = ap.parse_args(argv)
    t0 = time.time()
    tutorials = A.tutorials_or_report(args.tutorials)
    if not tutorials:
        return 2
    vs = variants(tutorials, args.per_file, args.seed)
    folder = Path(tempfile.mkdtemp(prefix="ts_typos_"))
    for name, text, *_ in vs:
        (folder / f"{name}.py").write_text(text, encoding="utf-8")
    found = A.lint_folder(folder, args.jobs)
    rows = []
    for name, _text, stem, line, old, new in vs:
        errs = [d for d in found.get(name, []) if d["severity"] == "error"]
        at = {d["range"]["start"]["line"] for d in errs}
        cls = "none" if not errs else ("at the typo" if line in at else "elsewhere")
        rows.append(dict(name=name, stem=stem, cls=cls, codes=sorted({d["code"] for d in errs}), old=old, new=new))
    by_stem = collections.defaultdict(collections.Counter)
    for r in rows:
        by_stem[r["stem"]][r["cls"]] += 1
    checked = []
    if args.reference:
        rnd = random.Random(args.seed)
        todo = []
        for cls in ("at the typo", "elsewhere", "none"):
            pool = [r for r in rows if r["cls"] == cls]
            todo += rnd.sample(pool, min(args.reference, len(pool)))
        with cf.ThreadPoolExecutor(args.jobs) as ex:
            verdicts = list(ex.map(lambda r: A.reference_verdict(folder / f"{r['name']}.py", r["stem"]), todo))
        checked = list(zip(todo, verdicts))
    md = _report(rows, by_stem, checked, args, time.time() - t0)
    print(md)
    if args.markdown:
        Path(args.markdown).write_text(md, encoding="utf-8")
    return 0


def _report(rows, by_stem, checked, args, seconds) -> str:
    classes = ("at the typo", "elsewhere", "none")
    out = ["# Misspelt identifiers in the tutorials: where ts-lint reports", "",
           f"- date: {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC",
           f"- command: `python benchmarks/typos.py --tutorials DIR --per-file {args.per_file} --seed {args.seed}"
           f"{f' --reference {args.reference}' if args.reference else ''}` ({len(rows)} variants, {seconds:.0f} s)",
           "- see the module docstring for the classes", "",
           "| tutorial | variants | " + " | ".join(classes) + " |", "|---|---|" + "---|" * len(classes)]
    total = collections.Counter()
    for stem in sorted(by_stem):
        c = by_stem[stem]
        total.update(c)
        out.append(f"| {stem} | {sum(c.values())} | " + " | ".join(str(c[k]) for k in classes) + " |")
    out.append(f"| **all** | {sum(total.values())} | " + " | ".join(f"**{total[k]}**" for k in classes) + " |")
    if checked:
        out += ["", "## The reference on a sample", "",
                "| class | sampled | the reference rejects | compiles | no verdict |", "|---|---|---|---|---|"]
        for cls in classes:
            vs = [v for r, v in checked if r["cls"] == cls]
            rej = sum(1 for v in vs if v.get("accepted") is False)
            acc = sum(1 for v in vs if v.get("accepted") is True)
            out.append(f"| {cls} | {len(vs)} | {rej} | {acc} | {len(vs) - rej - acc} |")
        false = [(r, v) for r, v in checked if r["cls"] != "none" and v.get("accepted") is True]
        out += ["", f"False errors (ts-lint reports an error, the reference compiles): {len(false)}."]
        for r, _v in false:
            out.append(f"- `{r['name']}`: `{r['old']}` -> `{r['new']}`, ts-lint: {', '.join(r['codes'])}")
        missed = [(r, v) for r, v in checked if r["cls"] == "none" and v.get("accepted") is False]
        if missed:
            out += ["", "Rejected by the reference, no ts-lint error (the reference's exception):"]
            for r, v in missed:
                msg = (v.get("message") or "").strip().replace("\n", " ")[:120]
                out.append(f"- `{r['name']}`: `{r['old']}` -> `{r['new']}`: {v.get('exc_type')}: {msg}")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
