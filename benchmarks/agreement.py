"""ts-lint's verdict against the reference's on single-defect variants of the reference's
tutorials (issue 4's target: the reference's verdict on at least 95% of files written in
the tutorials' style).

usage: python benchmarks/agreement.py --tutorials DIR [--markdown FILE] [--jobs N]
                                      [--reference-cache FILE] [--no-reference-runs]

DIR holds the tutorial programs (`01_copy_grid_stride.py`, ... the `.py` files of
examples/python/CuTeDSL/experimental/task_scheduling/blackwell/tutorial/*/ in the CUTLASS
repository; the stems of `TUTORIALS`). Each program is mutated one
defect at a time by six families of operators, written out, and judged twice:

* ts-lint: one folder run (`python -m ts_lint DIR --format json --isolated`); a variant is
  rejected when ts-lint reports an error in it;
* the reference: `agreement_reference.py` imports the variant and compiles its kernel
  with fake tensors (the reference checks only then). Its verdicts are kept in a cache
  keyed by the variant's text (`--reference-cache`), because a compile takes seconds;
  `--no-reference-runs` judges only the variants already in the cache.

Families (the same operators, seeds and sampling as the harness the numbers of earlier
sessions came from, so the cached verdicts apply):

* `schedule`: delete, duplicate or swap-with-next one statement of a `@schedule` body;
* `expr`: in a `@schedule` body, another resource as a call's receiver, a pipeline op
  swapped for its counterpart (acquire <-> wait, commit <-> release), a work call's
  keyword dropped, a `domain_loop` end +-1 (at most 8 of each kind per tutorial);
* `class`: delete, duplicate or swap a statement of a resource class body or of its
  `__init__` / `__post_init__` / `get_*_requirements` (at most 25 per tutorial);
* `host`: host-side edits: decorators, pipeline factory kinds and arguments, Task and
  TaskManager arguments, dependency-graph entries, allocator statements, task-local
  variables, PipelineGroup members and modes (round-robin over the operators);
* `kernel`: delete or swap-with-next one statement of a `@cute.kernel` / `@cute.jit`
  function body outside its `@schedule`s (at most 12 per tutorial);
* `module`: a module-level integer constant (`num_stages = 4`) +-1 or its assignment
  deleted (at most 6 per tutorial).

A variant the reference rejects with a plain Python or DSL error that is not about TS
(`NameError`, a value "never given a value", an IR dominance error, a None item) is
counted apart: no TS checker can be asked to find it, and ts-lint does not try to.
"""
from __future__ import annotations

import argparse
import collections
import concurrent.futures as cf
import datetime
import hashlib
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# benchmarks/copy.py (the copy-kernel benchmark) would shadow the stdlib `copy` that libcst
# imports: this folder leaves the import path before anything else is imported
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import libcst as cst  # noqa: E402
from libcst.metadata import MetadataWrapper, PositionProvider  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

# the reference's rejections that are not about TS (counted apart)
NON_TS = ("NameError", "never given a value", "does not dominate", "contained a None item", "NoneType")
BASE = ["01_copy_grid_stride", "02_copy_tma", "03_copy_tma_conditional", "01_copy_persistent_skip_tile",
        "02_copy_varlen_dynamic_domain", "01_merge_copy", "01_fp16_bf16_gemm_3", "02_merge_gemm"]
EXTRA = ["01_gemm_split_k_fp16", "04_fork_load_gemm_act", "03_merge_gemm_resadd", "01_fp16_bf16_gemm_3_cluster"]
HOST_ONLY = ["02_fp16_bf16_gemm_3_cute_cluster", "01_gemm_nvfp4", "01_fp16_bf16_gemm_3_cluster_clc"]
TUTORIALS = BASE + EXTRA + HOST_ONLY     # the stems agreement_reference.HOOKS compiles


def _md5(text: str) -> str:
    return hashlib.md5(text.encode()).hexdigest()


# ------------------------------------------------------------------ shared syntax helpers
def _load_sibling(name):
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_host = _load_sibling("agreement_host")      # the `host` family (its own file: the largest)


def _is_schedule(fn) -> bool:
    return any(_host.dec_name(d) == "schedule" for d in fn.decorators)


def _is_docstring(st) -> bool:
    return (isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 and isinstance(st.body[0], cst.Expr)
            and isinstance(st.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


class _BlockEdit(cst.CSTTransformer):
    """del / dup / swap-with-next of statement `idx` of one IndentedBlock."""

    def __init__(self, block, idx, kind):
        self.block, self.idx, self.kind = block, idx, kind

    def leave_IndentedBlock(self, orig, upd):
        if orig is not self.block:
            return upd
        b, i = list(upd.body), self.idx
        if self.kind == "del":
            del b[i]
            if not any(not _is_docstring(s) for s in b):
                b.append(cst.SimpleStatementLine([cst.Pass()]))
        elif self.kind == "dup":
            b.insert(i + 1, b[i].deep_clone())
        else:
            b[i], b[i + 1] = b[i + 1], b[i]
        return upd.with_changes(body=b)


# ------------------------------------------------------------------ family: schedule
class _ScheduleSites(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self):
        self.sites, self.fn = [], []

    def visit_FunctionDef(self, node):
        self.fn.append(node.name.value if _is_schedule(node) else (self.fn[-1] if self.fn and self.fn[-1] else None))

    def leave_FunctionDef(self, node):
        self.fn.pop()

    def visit_IndentedBlock(self, node):
        if self.fn and self.fn[-1]:
            for i, st in enumerate(node.body):
                if not _is_docstring(st):
                    self.sites.append((node, i, self.fn[-1], self.get_metadata(PositionProvider, st).start.line))


def schedule_variants(t, src):
    w = MetadataWrapper(cst.parse_module(src))
    c = _ScheduleSites()
    w.visit(c)
    out, seen = [], set()
    for block, i, fname, line in c.sites:
        for kind in ("del", "dup", "swap"):
            if kind == "swap" and i + 1 >= len(block.body):
                continue
            new = w.module.visit(_BlockEdit(block, i, kind)).code
            h = _md5(new)
            if new == src or h in seen:
                continue
            seen.add(h)
            out.append((f"{t}__{kind}_{fname}_L{line}", new, f"schedule:{kind}"))
    return out


# ------------------------------------------------------------------ family: expr
_OPSWAP = {"acquire": "wait", "wait": "acquire", "commit": "release", "release": "commit",
           "try_acquire": "try_wait", "try_wait": "try_acquire"}


class _ExprSites(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self):
        self.fn, self.sites = [], []

    def visit_FunctionDef(self, node):
        self.fn.append((_is_schedule(node), [p.name.value for p in node.params.params], node.name.value))

    def leave_FunctionDef(self, node):
        self.fn.pop()

    def visit_Call(self, node):
        if not self.fn or not self.fn[-1][0]:
            return
        _, params, fname = self.fn[-1]
        line = self.get_metadata(PositionProvider, node).start.line
        f = node.func
        if isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.value.value in params:
            for q in params:
                if q != f.value.value:
                    self.sites.append(("recv", node, line, q, fname))
            if f.attr.value in _OPSWAP:
                self.sites.append(("op", node, line, _OPSWAP[f.attr.value], fname))
            for i, a in enumerate(node.args):
                if a.keyword is not None:
                    self.sites.append(("kw", node, line, i, fname))
        if isinstance(f, cst.Name) and f.value == "domain_loop":
            if len([a for a in node.args if a.keyword is None]) >= 2:
                for d in ("+ 1", "- 1"):
                    self.sites.append(("bound", node, line, d, fname))


class _ExprEdit(cst.CSTTransformer):
    def __init__(self, target, kind, extra):
        self.target, self.kind, self.extra = target, kind, extra

    def leave_Call(self, orig, upd):
        if orig is not self.target:
            return upd
        k, x = self.kind, self.extra
        if k == "recv":
            return upd.with_changes(func=upd.func.with_changes(value=cst.Name(x)))
        if k == "op":
            return upd.with_changes(func=upd.func.with_changes(attr=cst.Name(x)))
        args = list(upd.args)
        if k == "kw":
            del args[x]
            if args:
                args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return upd.with_changes(args=args)
        i = [j for j, a in enumerate(args) if a.keyword is None][1]
        code = cst.Module([]).code_for_node(args[i].value)
        args[i] = args[i].with_changes(value=cst.parse_expression(f"({code}) {x}"))
        return upd.with_changes(args=args)


def expr_variants(t, src, per=8):
    w = MetadataWrapper(cst.parse_module(src))
    c = _ExprSites()
    w.visit(c)
    rnd = random.Random(t)
    out, seen, by_kind = [], set(), {}
    for s in c.sites:
        by_kind.setdefault(s[0], []).append(s)
    for kind, sites in sorted(by_kind.items()):
        rnd.shuffle(sites)
        n = 0
        for _, node, line, extra, fname in sites:
            if n >= per:
                break
            new = w.module.visit(_ExprEdit(node, kind, extra)).code
            h = _md5(new)
            if new == src or h in seen:
                continue
            seen.add(h)
            n += 1
            tag = str(extra).replace(" ", "").replace("+", "p").replace("-", "m")
            out.append((f"{t}__{kind}_{fname}_L{line}_{tag}", new, f"expr:{kind}"))
    return out


# ------------------------------------------------------------------ family: class
_CLASS_METHODS = {"__init__", "__post_init__", "get_smem_requirements", "get_tmem_requirements",
                  "get_producer_requirements", "get_consumer_requirements"}


class _ClassSites(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self):
        self.sites, self.stack = [], []

    def visit_ClassDef(self, node):
        self.stack.append(("class", node.name.value))
        if node.bases:
            self._block(node.body, node.name.value)

    def leave_ClassDef(self, node):
        self.stack.pop()

    def visit_FunctionDef(self, node):
        if self.stack and self.stack[-1][0] == "class" and node.name.value in _CLASS_METHODS:
            self._block(node.body, f"{self.stack[-1][1]}.{node.name.value}")
        self.stack.append(("def", node.name.value))

    def leave_FunctionDef(self, node):
        self.stack.pop()

    def _block(self, block, label):
        if not isinstance(block, cst.IndentedBlock):
            return
        for i, st in enumerate(block.body):
            if not (_is_docstring(st) or isinstance(st, (cst.FunctionDef, cst.ClassDef))):
                self.sites.append((block, i, label, self.get_metadata(PositionProvider, st).start.line))


def class_variants(t, src, per=25):
    return _sampled_block_edits(t, src, _ClassSites(), ("del", "dup", "swap"), per, t, "class")


def _sampled_block_edits(t, src, sites, kinds, per, seed, family):
    """At most `per` distinct block edits (`kinds` of _BlockEdit) at the statements the
    `sites` visitor collects, in an order shuffled with `seed`."""
    w = MetadataWrapper(cst.parse_module(src))
    w.visit(sites)
    cands = [(s, k) for s in sites.sites for k in kinds]
    random.Random(seed).shuffle(cands)
    out, seen = [], set()
    for (block, i, label, line), kind in cands:
        if len(out) >= per:
            break
        if kind == "swap" and (i + 1 >= len(block.body) or isinstance(block.body[i + 1], (cst.FunctionDef, cst.ClassDef))):
            continue
        new = w.module.visit(_BlockEdit(block, i, kind)).code
        h = _md5(new)
        if new == src or h in seen:
            continue
        seen.add(h)
        out.append((f"{t}__{kind}_{label}_L{line}", new, f"{family}:{kind}"))
    return out


# ------------------------------------------------------------------ family: kernel
class _KernelSites(cst.CSTVisitor):
    """Statements of `@cute.kernel` / `@cute.jit` function bodies outside `@schedule`s."""
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self):
        self.sites = []

    def visit_FunctionDef(self, node):
        if not any(_host.dec_name(d) in ("kernel", "jit") for d in node.decorators):
            return
        if not isinstance(node.body, cst.IndentedBlock):
            return
        for i, st in enumerate(node.body.body):
            if not (_is_docstring(st) or isinstance(st, (cst.FunctionDef, cst.ClassDef))):
                self.sites.append((node.body, i, node.name.value, self.get_metadata(PositionProvider, st).start.line))


def kernel_variants(t, src, per=12):
    return _sampled_block_edits(t, src, _KernelSites(), ("del", "swap"), per, "kernel:" + t, "kernel")


# ------------------------------------------------------------------ family: module
class _ConstantEdit(cst.CSTTransformer):
    """`NAME = <int>` at module level: the literal + delta, or the statement deleted."""

    def __init__(self, target, delta):
        self.target, self.delta = target, delta

    def leave_SimpleStatementLine(self, orig, upd):
        if orig is not self.target:
            return upd
        if self.delta is None:
            return cst.RemoveFromParent()
        a = upd.body[0]
        return upd.with_changes(body=[a.with_changes(value=cst.Integer(str(int(a.value.value) + self.delta)))])


def module_variants(t, src, per=6):
    mod = cst.parse_module(src)
    w = MetadataWrapper(mod)
    pos = w.resolve(PositionProvider)
    sites = []
    for st in w.module.body:
        if isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 and isinstance(st.body[0], cst.Assign):
            a = st.body[0]
            if (len(a.targets) == 1 and isinstance(a.targets[0].target, cst.Name)
                    and isinstance(a.value, cst.Integer) and a.value.value.isdigit()):
                sites.append((st, a.targets[0].target.value, pos[st].start.line))
    cands = [(s, d) for s in sites for d in (1, -1, None)]
    random.Random("module:" + t).shuffle(cands)
    out, seen = [], set()
    for (st, name, line), delta in cands:
        if len(out) >= per:
            break
        if delta is not None and int(st.body[0].value.value) + delta < 0:
            continue
        new = w.module.visit(_ConstantEdit(st, delta)).code
        h = _md5(new)
        if new == src or h in seen:
            continue
        seen.add(h)
        kind = "del" if delta is None else ("p1" if delta > 0 else "m1")
        out.append((f"{t}__const_{kind}_{name}_L{line}", new, f"module:{kind}"))
    return out


# ------------------------------------------------------------------ generation
def generate(tutorials: dict) -> list:
    """[(name, text, operator, tutorial)] of every variant."""
    out = []
    have = [t for t in BASE + EXTRA if t in tutorials]
    for t in have:
        out += [(n, s, op, t) for n, s, op in schedule_variants(t, tutorials[t])]
    for t in have:
        out += [(n, s, op, t) for n, s, op in expr_variants(t, tutorials[t])]
    for t in have:
        out += [(n, s, op, t) for n, s, op in class_variants(t, tutorials[t])]
    out += [(n, s, op, n.split("__")[0]) for n, s, op in _host.host_variants(
        {t: tutorials[t] for t in BASE + EXTRA + HOST_ONLY if t in tutorials})]
    for t in [t for t in BASE + EXTRA + HOST_ONLY if t in tutorials]:
        out += [(n, s, op, t) for n, s, op in kernel_variants(t, tutorials[t])]
        out += [(n, s, op, t) for n, s, op in module_variants(t, tutorials[t])]
    seen, uniq = set(), []
    for v in out:
        h = _md5(v[1])
        if h not in seen:
            seen.add(h)
            uniq.append(v)
    return uniq


def load_tutorials(folder) -> dict:
    """stem -> text of the tutorial programs (TUTORIALS) found under `folder` (the first
    of each stem)."""
    tutorials = {}
    for p in sorted(Path(folder).rglob("*.py")):
        if p.stem in TUTORIALS and p.stem not in tutorials:
            tutorials[p.stem] = p.read_text(encoding="utf-8")
    return tutorials


def variant_arguments(ap, per_file: int, seed: int) -> None:
    """The command line of the scripts that edit the tutorials (typos.py, jit_edits.py):
    the tutorials' folder, variants per tutorial and the seed that draws them, jobs and
    the markdown file."""
    ap.add_argument("--tutorials", required=True, help="folder with the tutorial .py files")
    ap.add_argument("--per-file", type=int, default=per_file)
    ap.add_argument("--seed", type=int, default=seed)
    ap.add_argument("--jobs", "-j", type=int, default=2)
    ap.add_argument("--markdown", help="write the table to this file")


def tutorials_or_report(folder) -> dict:
    """`load_tutorials(folder)`; when there is none, says so on stderr (the scripts then
    exit with status 2)."""
    tutorials = load_tutorials(folder)
    if not tutorials:
        print(f"no tutorial program of {TUTORIALS} under {folder}", file=sys.stderr)
    return tutorials


# ------------------------------------------------------------------ judging
def cached_verdicts(variants, folder: Path, cache_path: Path, run: bool, jobs: int) -> dict:
    """Writes each variant (name, text, operator, tutorial) to `folder` and returns the
    reference's verdicts by md5 of the text: those cached in `cache_path`, and, with
    `run`, those of the variants not cached yet (run now and added to the cache)."""
    cache = json.loads(cache_path.read_text()) if cache_path.exists() else {}
    for name, text, _, _ in variants:
        (folder / f"{name}.py").write_text(text, encoding="utf-8")
    todo = [v for v in variants if _md5(v[1]) not in cache]
    if todo and run:
        print(f"running the reference on {len(todo)} variants ...", file=sys.stderr)
        with cf.ThreadPoolExecutor(jobs) as ex:
            for k, ((name, text, _, t), verdict) in enumerate(zip(todo, ex.map(
                    lambda v: reference_verdict(folder / f"{v[0]}.py", v[3]), todo)), 1):
                if verdict["accepted"] is not None:
                    cache[_md5(text)] = {"accepted": verdict["accepted"], "exc_type": verdict.get("exc_type"),
                                         "message": (verdict.get("message") or "")[:300]}
                if k % 20 == 0 or k == len(todo):      # an interrupted run keeps what it has
                    cache_path.write_text(json.dumps(cache, indent=0, sort_keys=True) + "\n")
    return cache


def lint_folder(folder: Path, jobs: int) -> dict:
    """variant stem -> ts-lint findings (one folder run)."""
    p = subprocess.run([sys.executable, "-m", "ts_lint", str(folder), "--format", "json", "--isolated",
                        "-j", str(jobs)], cwd=str(ROOT), capture_output=True, text=True)
    by = collections.defaultdict(list)
    for d in json.loads(p.stdout):
        by[Path(d["filename"]).stem].append(d)
    return by


def reference_verdict(path: Path, key: str) -> dict:
    try:
        p = subprocess.run([sys.executable, str(HERE / "agreement_reference.py"), str(path), key],
                           capture_output=True, text=True, timeout=300,
                           env={**os.environ, "CUTE_DSL_ARCH": "sm_100a"})
    except subprocess.TimeoutExpired:
        return {"accepted": None, "exc_type": "Timeout", "message": ""}
    for line in p.stdout.splitlines():
        if line.startswith("@@VERDICT@@"):
            return json.loads(line[len("@@VERDICT@@"):])
    return {"accepted": None, "exc_type": "HarnessCrash", "message": p.stderr[-600:]}


def classify(ref: dict, findings: list) -> str:
    rejected = any(d["severity"] == "error" for d in findings)
    if ref["accepted"] and rejected:
        return "false error"
    if not ref["accepted"] and not rejected:
        return "not TS" if any(s in ref.get("message", "") for s in NON_TS) else "missed"
    return "agree"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tutorials", required=True, help="folder with the tutorial .py files")
    ap.add_argument("--reference-cache", default=str(HERE / "results" / "agreement_reference.json"))
    ap.add_argument("--no-reference-runs", action="store_true",
                    help="judge only the variants whose reference verdict is cached")
    ap.add_argument("--jobs", "-j", type=int, default=2)
    ap.add_argument("--markdown", help="write the table to this file")
    args = ap.parse_args(argv)
    t0 = time.time()
    tutorials = tutorials_or_report(args.tutorials)
    if not tutorials:
        return 2
    variants = generate(tutorials)
    folder = Path(tempfile.mkdtemp(prefix="ts_agreement_"))
    cache = cached_verdicts(variants, folder, Path(args.reference_cache), not args.no_reference_runs, args.jobs)
    lint = lint_folder(folder, args.jobs)
    rows = collections.defaultdict(collections.Counter)
    ops = collections.defaultdict(collections.Counter)
    misses = []
    for name, text, op, t in variants:
        ref = cache.get(_md5(text))
        if ref is None:
            rows[t]["no reference verdict"] += 1
            continue
        c = classify(ref, lint.get(name, []))
        rows[t][c] += 1
        ops[op.split(":")[0]][c] += 1
        if c in ("false error", "missed"):
            misses.append((name, c, ref, [(d["code"], d["range"]["start"]["line"]) for d in lint.get(name, [])
                                          if d["severity"] == "error"]))
    text = _report(rows, ops, misses, len(variants), time.time() - t0)
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text)
    return 0


def _report(rows, ops, misses, n_variants, seconds) -> str:
    def pct(c):
        judged = c["agree"] + c["false error"] + c["missed"]
        return f"{100 * c['agree'] / judged:.1f}%" if judged else "-"

    cols = ["agree", "false error", "missed", "not TS", "no reference verdict"]
    out = ["# ts-lint against the reference on single-defect variants of the tutorials", "",
           f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
           f"- command: `python benchmarks/agreement.py --tutorials DIR --markdown "
           f"benchmarks/results/agreement.md` ({n_variants} variants, {seconds:.0f} s)",
           "- *agree*: ts-lint reports an error exactly when the reference rejects the variant; "
           "*false error*: ts-lint reports an error, the reference compiles it; *missed*: the "
           "reference rejects it, ts-lint reports no error; *not TS*: the reference rejects it "
           "with a Python or DSL error that is not a TS check (not counted in the rate).", "",
           "| tutorial | variants | " + " | ".join(cols) + " | agreement |",
           "|---|---|" + "---|" * (len(cols) + 1)]
    total = collections.Counter()
    for t in sorted(rows):
        c = rows[t]
        total.update(c)
        out.append(f"| {t} | {sum(c.values())} | " + " | ".join(str(c[k]) for k in cols) + f" | {pct(c)} |")
    out.append(f"| **all** | {sum(total.values())} | " + " | ".join(str(total[k]) for k in cols)
               + f" | **{pct(total)}** |")
    out += ["", "| operator family | " + " | ".join(cols[:4]) + " | agreement |", "|---|" + "---|" * 5]
    for f in sorted(ops):
        out.append(f"| {f} | " + " | ".join(str(ops[f][k]) for k in cols[:4]) + f" | {pct(ops[f])} |")
    out += ["", f"Target: the reference's verdict on at least 95% of the variants: {pct(total)} "
            f"({'met' if total['agree'] >= 0.95 * (total['agree'] + total['false error'] + total['missed']) else 'MISSED'}).",
            "", "## Disagreements", ""]
    for name, c, ref, codes in misses:
        msg = re.sub(r"\x1b\[[0-9;]*m", "", ref.get("message") or "").strip().splitlines()
        out.append(f"- `{name}`: {c}; reference: {ref.get('exc_type')} "
                   f"{(msg[0] if msg else '')[:160]!r}; ts-lint errors: {codes}")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
