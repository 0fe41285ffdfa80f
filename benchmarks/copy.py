"""Bandwidth of the copy examples: ts codegen vs the reference TS vs torch `copy_`.

For each copy example the same `run_on_gpu()` harness is loaded twice: as written
(ts_runtime) and with the `ts_runtime` prefix rewritten to
`cutlass.experimental.task_scheduling` (the reference, when importable). Each kernel is
checked bit for bit first, then timed with CUDA events (median of `--iters` launches
after warm-up); torch's `dst.copy_(src)` on the same buffers is timed in the same run.
Bandwidth counts bytes read + written.

    python benchmarks/copy.py            # full sizes (a few hundred MB per example)
    python benchmarks/copy.py --quick    # small sizes, a smoke test
"""
from __future__ import annotations

import sys
from pathlib import Path

# This file is named like the stdlib's `copy`: keep its folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import argparse  # noqa: E402
import importlib  # noqa: E402
import importlib.util  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

REFERENCE = "cutlass.experimental.task_scheduling"

CASES = {
    "01 grid-stride": ("01_copy_grid_stride.py", dict(num_entries=1 << 28, num_warps=4, num_ctas=132 * 8),
                       dict(num_entries=1 << 20, num_ctas=264)),
    "02 TMA": ("02_copy_tma.py", dict(num_rows=8192, num_cols=128 * 264, num_stages=4),
               dict(num_rows=512, num_cols=128 * 66)),
    "03 persistent": ("03_copy_persistent_skip.py", dict(num_rows=8192, num_cols=128 * 264, overlaunch=4,
                                                         max_ctas=132),
                      dict(num_rows=256, num_cols=128 * 66)),
    "04 varlen": ("04_copy_varlen.py", dict(num_segments=4096, max_len=32768, max_ctas=132),
                  dict(num_segments=256, max_len=2048)),
}


def load(path: Path, reference: bool):
    src = path.read_text()
    if reference:
        src = re.sub(r"(?<![\w.])ts_runtime\b", REFERENCE, src)
        tmp = Path(tempfile.mkdtemp(prefix="ts_ref_")) / path.name
        tmp.write_text(src)
        path = tmp
    name = ("ref_" if reference else "ts_") + re.sub(r"\W", "_", path.stem)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def reference_available() -> bool:
    try:
        import cutlass.pipeline as cp
        tsp = importlib.import_module(REFERENCE + ".pipeline")
    except Exception:
        return False
    # tutorials import CooperativeGroup / Agent from the TS pipeline module
    for n in dir(cp):
        if not n.startswith("_") and not hasattr(tsp, n):
            setattr(tsp, n, getattr(cp, n))
    return True


def time_ms(fn, iters: int, warmup: int = 5) -> float:
    import torch
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def measure(row: dict, impl: str, fname: str, kwargs: dict, iters: int):
    """Fills row[impl] (GB/s, or why not) and, for ts, row["torch"] / row["bytes"]."""
    import torch
    mod = load(ROOT / "examples" / fname, reference=(impl == "ref"))
    res = mod.run_on_gpu(**kwargs)
    if not res["ok"]:
        row[impl] = f"WRONG ({res['mismatches']} mismatches)"
        return
    row[impl] = res["bytes"] / time_ms(res["launch"], iters) / 1e6
    row["bytes"] = res["bytes"]
    if impl == "ts":
        # torch's copy of the same number of bytes (read + write = res["bytes"])
        a = torch.empty(res["bytes"] // 2, dtype=torch.uint8, device="cuda")
        b = torch.empty_like(a)
        row["torch"] = res["bytes"] / time_ms(lambda: b.copy_(a), iters) / 1e6


def main(argv=None) -> int:
    import torch
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes")
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--only", default="", help="comma-separated case prefixes (01,02,...)")
    args = ap.parse_args(argv)
    have_ref = reference_available()
    rows, failed = [], False
    for label, (fname, full, quick) in CASES.items():
        if args.only and not any(label.startswith(p) for p in args.only.split(",")):
            continue
        kwargs = quick if args.quick else full
        row = {"case": label}
        for impl in ("ts", "ref") if have_ref else ("ts",):
            try:
                measure(row, impl, fname, kwargs, args.iters)
            except Exception as exc:       # report and keep going
                row[impl] = f"error: {type(exc).__name__}: {str(exc).splitlines()[0][:60]}"
            failed |= impl == "ts" and not isinstance(row.get(impl), float)
            torch.cuda.empty_cache()
        rows.append(row)

    def fmt(v):
        return f"{v:9.1f}" if isinstance(v, float) else f"{str(v):>9}"
    print(f"\n{torch.cuda.get_device_name()}  (GB/s = bytes read + written / median time, {args.iters} iters)")
    print(f"| {'case':<14} | {'MB moved':>9} | {'ts':>9} | {'reference':>9} | {'torch copy_':>11} | {'ts/ref':>6} |")
    print(f"|{'-' * 16}|{'-' * 11}|{'-' * 11}|{'-' * 11}|{'-' * 13}|{'-' * 8}|")
    for r in rows:
        ratio = r["ts"] / r["ref"] if isinstance(r.get("ts"), float) and isinstance(r.get("ref"), float) else None
        mb = r.get("bytes", 0) / 1e6
        print(f"| {r['case']:<14} | {mb:9.1f} | {fmt(r.get('ts', '-'))} | {fmt(r.get('ref', 'n/a'))} | "
              f"{fmt(r.get('torch', '-')):>11} | {('%.2f' % ratio) if ratio else '-':>6} |")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
