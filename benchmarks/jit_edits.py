"""Edits of the tutorials' JIT code: does ts-lint reject exactly what the reference rejects?

usage: python benchmarks/jit_edits.py --tutorials DIR [--per-file N] [--seed S]
                                      [--no-reference-runs] [--markdown FILE] [--jobs J]

Why: agreement.py's operators edit statements of schedules, resource set-up, kernels and
the host; two single-line slips they never make are common in the reference's style of
code, where most of the kernel is in `@cute.jit` methods of resource classes:

* `drop_jit`: one `@cute.jit` decorator line deleted (each of them, one per variant): a
  work method, a helper, the host launch function is then plain Python;
* `del_method_stmt`: one statement of a method body of a class deleted (a work method or
  a helper it calls; not `__init__` / `__post_init__` / `get_*`, which agreement.py's
  `class` family edits), `--per-file` of them per tutorial drawn with `--seed`;
* `del_jit_line`: one line inside a class or a `@cute.jit` / `@cute.kernel` function
  deleted (any code line whose deletion leaves the file parseable: a decorator, an
  argument of a call, a field, an `else:`), `--lines-per-file` of them per tutorial
  drawn with `--line-seed`.

Each variant is linted once and judged against the reference's verdict (the tutorial's
kernel compiled with fake tensors, agreement_reference.py), cached in agreement.py's
cache by the text's hash (`--no-reference-runs`: the cached ones only). Classes as in
agreement.py: *agree*, *false error*, *missed*, *not TS* (a Python NameError or a DSL
error about a value "never given a value": no TS check, not counted); *base rejected*:
the reference does not compile the unedited tutorial with this harness (the newer
02_fp16_bf16_gemm_3_cute_cluster), so its variants are not judged.
"""
from __future__ import annotations

import argparse
import ast
import collections
import datetime
import random
import re
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# benchmarks/copy.py would shadow the stdlib `copy` (libcst imports it): this folder leaves
# the import path before libcst is imported
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]

import libcst as cst  # noqa: E402
from libcst.metadata import MetadataWrapper, PositionProvider  # noqa: E402

_JIT_LINE = re.compile(r"\s*@cute\.jit\s*$")


def _agreement():
    import importlib.util
    spec = importlib.util.spec_from_file_location("ts_agreement", HERE / "agreement.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def drop_jit(stem: str, text: str) -> list:
    """[(name, text, family, tutorial)]: each `@cute.jit` line deleted, one per variant."""
    lines = text.splitlines(keepends=True)
    return [(f"{stem}__dropjit_L{i + 1}", "".join(lines[:i] + lines[i + 1:]), "drop_jit", stem)
            for i, line in enumerate(lines) if _JIT_LINE.match(line)]


class _MethodStatements(cst.CSTVisitor):
    """(first line, last line, method) of the statements of the methods of classes, outside
    `__init__` / `__post_init__` / `get_*`, docstrings and one-statement bodies excluded."""
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self):
        self.sites = []
        self.classes = 0
        self.functions = 0

    def visit_ClassDef(self, node):
        self.classes += 1

    def leave_ClassDef(self, node):
        self.classes -= 1

    def visit_FunctionDef(self, node):
        name = node.name.value
        if self.classes and not self.functions and name not in ("__init__", "__post_init__") \
                and not name.startswith("get_") and len(node.body.body) > 1:
            for st in node.body.body:
                if isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 and \
                        isinstance(st.body[0], cst.Expr) and \
                        isinstance(st.body[0].value, (cst.SimpleString, cst.ConcatenatedString)):
                    continue
                pos = self.get_metadata(PositionProvider, st)
                self.sites.append((pos.start.line, pos.end.line, name))
        self.functions += 1

    def leave_FunctionDef(self, node):
        self.functions -= 1


def del_method_stmt(stem: str, text: str, per_file: int, rnd: random.Random) -> list:
    """[(name, text, family, tutorial)]: `per_file` method statements deleted, one each."""
    v = _MethodStatements()
    MetadataWrapper(cst.parse_module(text)).visit(v)
    sites = v.sites
    rnd.shuffle(sites)
    lines = text.splitlines(keepends=True)
    return [(f"{stem}__delwb_{name}_L{a}", "".join(lines[:a - 1] + lines[b:]), "del_method_stmt", stem)
            for a, b, name in sites[:per_file]]


class _JitSpans(cst.CSTVisitor):
    """(first line, last line) of each class and each `@cute.jit` / `@cute.kernel`
    function (outermost)."""
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, dec_name):
        self.spans = []
        self.dec_name = dec_name          # agreement_host.dec_name

    def visit_ClassDef(self, node):
        pos = self.get_metadata(PositionProvider, node)
        self.spans.append((pos.start.line, pos.end.line))
        return False

    def visit_FunctionDef(self, node):
        if any(self.dec_name(d) in ("jit", "kernel") for d in node.decorators):
            pos = self.get_metadata(PositionProvider, node)
            self.spans.append((pos.start.line, pos.end.line))
            return False


def del_jit_line(stem: str, text: str, per_file: int, rnd: random.Random, dec_name) -> list:
    """[(name, text, family, tutorial)]: `per_file` lines inside a class or a JIT function
    deleted, one each, drawn among the code lines whose deletion leaves the file parseable."""
    v = _JitSpans(dec_name)
    MetadataWrapper(cst.parse_module(text)).visit(v)
    inside = {n for a, b in v.spans for n in range(a, b + 1)}
    lines = text.splitlines(keepends=True)
    order = [i for i, line in enumerate(lines)
             if i + 1 in inside and line.strip() and not line.strip().startswith("#")]
    rnd.shuffle(order)
    out = []
    for i in order:
        if len(out) >= per_file:
            break
        edited = "".join(lines[:i] + lines[i + 1:])
        try:
            ast.parse(edited)
        except SyntaxError:
            continue
        out.append((f"{stem}__delline_L{i + 1}", edited, "del_jit_line", stem))
    return out


def generate(tutorials: dict, per_file: int, seed: int, lines_per_file: int, line_seed: int, dec_name) -> list:
    rnd = random.Random(seed)
    out = []
    for stem, text in sorted(tutorials.items()):
        out += drop_jit(stem, text)
    for stem, text in sorted(tutorials.items()):
        out += del_method_stmt(stem, text, per_file, rnd)
    rnd = random.Random(line_seed)
    for stem, text in sorted(tutorials.items()):
        if stem not in _NO_LINE_EDITS:
            out += del_jit_line(stem, text, lines_per_file, rnd, dec_name)
    return out


# the newer 02_fp16_bf16_gemm_3_cute_cluster does not compile unedited with the harness:
# no line edits drawn for it (its other variants are counted as *base rejected*)
_NO_LINE_EDITS = {"02_fp16_bf16_gemm_3_cute_cluster"}


def main(argv=None) -> int:
    A = _agreement()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    A.variant_arguments(ap, per_file=12, seed=5)
    ap.add_argument("--lines-per-file", type=int, default=18)
    ap.add_argument("--line-seed", type=int, default=13)
    ap.add_argument("--reference-cache", default=str(HERE / "results" / "agreement_reference.json"))
    ap.add_argument("--no-reference-runs", action="store_true",
                    help="judge only the variants whose reference verdict is cached")
    args = ap.parse_args(argv)
    t0 = time.time()
    tutorials = A.tutorials_or_report(args.tutorials)
    if not tutorials:
        return 2
    variants = generate(tutorials, args.per_file, args.seed, args.lines_per_file, args.line_seed,
                        A._host.dec_name)
    bases = [(f"{stem}__base", text, "base", stem) for stem, text in sorted(tutorials.items())]
    folder = Path(tempfile.mkdtemp(prefix="ts_jit_edits_"))
    cache = A.cached_verdicts(bases + variants, folder, Path(args.reference_cache), not args.no_reference_runs,
                              args.jobs)
    # a tutorial the reference does not compile unedited (with this harness) says nothing
    broken = {stem for _n, text, _f, stem in bases if (cache.get(A._md5(text)) or {}).get("accepted") is False}
    lint = A.lint_folder(folder, args.jobs)
    rows = collections.defaultdict(collections.Counter)
    wrong = []
    for name, text, family, stem in variants:
        ref = cache.get(A._md5(text))
        if stem in broken:
            rows[(family, stem)]["base rejected"] += 1
            continue
        if ref is None:
            rows[(family, stem)]["no reference verdict"] += 1
            continue
        c = A.classify(ref, lint.get(name, []))
        rows[(family, stem)][c] += 1
        if c in ("false error", "missed"):
            errs = [(d["code"], d["range"]["start"]["line"]) for d in lint.get(name, []) if d["severity"] == "error"]
            wrong.append((name, c, ref, errs))
    md = _report(rows, wrong, len(variants), args, time.time() - t0)
    print(md)
    if args.markdown:
        Path(args.markdown).write_text(md, encoding="utf-8")
    return 0


def _report(rows, wrong, n, args, seconds) -> str:
    classes = ("agree", "false error", "missed", "not TS", "no reference verdict", "base rejected")
    out = ["# Edits of the tutorials' JIT code: ts-lint against the reference", "",
           f"- date: {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC",
           f"- command: `python benchmarks/jit_edits.py --tutorials DIR --per-file {args.per_file} --seed {args.seed}"
           f" --lines-per-file {args.lines_per_file} --line-seed {args.line_seed}"
           f"{' --no-reference-runs' if args.no_reference_runs else ''}` ({n} variants, {seconds:.0f} s)",
           "- families and classes: see the module docstring", ""]
    for family in ("drop_jit", "del_method_stmt", "del_jit_line"):
        out += [f"## {family}", "", "| tutorial | " + " | ".join(classes) + " |", "|---|" + "---|" * len(classes)]
        total = collections.Counter()
        for (fam, stem), c in sorted(rows.items()):
            if fam == family:
                total.update(c)
                out.append(f"| {stem} | " + " | ".join(str(c[k]) for k in classes) + " |")
        out += [f"| **all** | " + " | ".join(f"**{total[k]}**" for k in classes) + " |", ""]
    out.append(f"False errors and misses ({len(wrong)}), with the reference's exception:")
    for name, c, ref, errs in wrong:
        msg = re.sub(r"\x1b\[[0-9;]*m", "", ref.get("message") or "").strip().replace("\n", " ")[:150]
        out.append(f"- `{name}`: {c}; reference: {ref.get('exc_type')} {msg!r}; ts-lint errors: {errs}")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
