"""Hopper (H200) benchmarks of examples/hopper: the TS wgmma GEMM vs cuBLAS, the TS TMA copy vs copy_.

* GEMM (bf16 in, fp32 accumulate, bf16 out; C = A @ B^T with A: M x K, B: N x K, both
  K-major): `gemm_wgmma.py` in a 2x1 cluster (and without a cluster at 8192^3) against
  `torch.matmul(a, b.T)` (cuBLAS) on the same inputs, at 8192^3 and two LLM shapes. Each
  kernel's output is checked first (finite everywhere, relative Frobenius error vs cuBLAS
  < 1e-2); TFLOP/s = 2 M N K / median time.
* Copy (fp16, 1 GiB): `copy_tma.py` in a few (stages, CTAs per SM) configurations against
  `dst.copy_(src)`; checked bit for bit into a NaN-poisoned output; GB/s counts bytes read
  + written.

Times are CUDA-event medians of `--iters` launches after warm-up, all measured in the same
run; each launch is timed alone (events around one launch, synchronized), so the host's
launch latency is in every figure. `--b2b` adds back-to-back columns for the GEMMs: events
around `--iters` launches enqueued back to back (the host's latency hides behind the queued
kernels, the GPU never idles), the per-launch mean, median of 5 batches; for ts and cuBLAS.

`--variants a,b,...` adds GEMM rows (2x1 cluster, every shape) for kernel options of
`gemm_wgmma.VARIANTS` (tile order swizzle, epilogue barriers; `base` is the default kernel,
already in the table). Writes a markdown table (date, GPU) to `--markdown` (default
benchmarks/results/hopper.md) and prints it.

    python benchmarks/hopper.py [--markdown PATH] [--iters 30] [--quick] [--only gemm|copy]
                                [--variants swz8,swz8-epi1] [--b2b]
"""
from __future__ import annotations

import sys
from pathlib import Path

# benchmarks/copy.py would shadow the stdlib's `copy` (dataclasses, argparse, cutlass):
# keep this folder off the import path (see benchmarks/README.md, Notes).
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import argparse  # noqa: E402
import datetime  # noqa: E402
import importlib.util  # noqa: E402
import statistics  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GEMM_SHAPES = [(8192, 8192, 8192), (4096, 4096, 14336), (8192, 1024, 8192)]
COPY_CONFIGS = [(3, 2), (6, 1), (2, 3)]          # (num_stages, CTAs per SM); 32 KiB per stage
COPY_SHAPE = (32768, 16384)                      # 1 GiB of fp16


def load(name: str):
    path = ROOT / "examples" / "hopper" / name
    spec = importlib.util.spec_from_file_location("hopper_" + path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def time_ms(fn, iters: int, warmup: int = 10) -> float:
    import torch
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def time_b2b_ms(fn, iters: int, batches: int = 5, warmup: int = 10) -> float:
    """Mean time per launch of `iters` launches enqueued back to back; median of `batches`."""
    import torch
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(batches):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        fn()                              # keeps the GPU busy while `start` is enqueued
        start.record()
        for _ in range(iters):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / iters)
    return statistics.median(times)


def gemm_label(gemm, m: int, n: int, cluster_m: int, variant: str) -> str:
    label = f"ts wgmma 128x256, cluster {cluster_m}x1"
    v = gemm.VARIANTS[variant]
    s = gemm.effective_swizzle(m, n, cluster_m, v)
    extra = gemm.Variant(swizzle=s, raster_along_m=v.raster_along_m, epi_barriers=v.epi_barriers).label
    return f"{label}, {extra} [{variant}]" if extra else (label if variant == "base" else f"{label} [{variant}]")


def bench_gemm(iters: int, quick: bool, variants=(), b2b: bool = False):
    import torch
    gemm = load("gemm_wgmma.py")
    shapes = [(2048, 2048, 2048)] if quick else GEMM_SHAPES
    rows = []
    for m, n, k in shapes:
        configs = [(2, "base"), (1, "base")] if (m, n, k) == (8192, 8192, 8192) else [(2, "base")]
        configs += [(2, v) for v in variants if v != "base"]
        cublas_out = {}
        for cluster_m, variant in configs:
            r = gemm.launcher(m, n, k, cluster_m=cluster_m, variant=variant)
            a, b, c = r["a"], r["b"], r["c"]
            if "ref" not in cublas_out:
                cublas_out["ref"] = torch.matmul(a, b.T)
                t_cublas = time_ms(lambda: torch.matmul(a, b.T), iters)
                cublas_out["ms"] = t_cublas
                if b2b:
                    cublas_out["b2b_ms"] = time_b2b_ms(lambda: torch.matmul(a, b.T), iters)
            r["launch"]()
            torch.cuda.synchronize()
            ref = cublas_out["ref"].float()
            out = c.float()
            finite = bool(torch.isfinite(out).all())
            rel = float((out - ref).norm() / ref.norm())
            ok = finite and rel < 1e-2
            t = time_ms(r["launch"], iters)
            flops = 2.0 * m * n * k
            rows.append(dict(shape=f"{m}x{n}x{k}", variant=gemm_label(gemm, m, n, cluster_m, variant),
                             ok=ok, rel=rel, ms=t, tflops=flops / t / 1e9,
                             cublas_ms=cublas_out["ms"], cublas_tflops=flops / cublas_out["ms"] / 1e9))
            if b2b:
                t2 = time_b2b_ms(r["launch"], iters)
                rows[-1].update(b2b_tflops=flops / t2 / 1e9, cublas_b2b_tflops=flops / cublas_out["b2b_ms"] / 1e9)
            print("gemm", rows[-1], flush=True)
            del r, a, b, c, out
            torch.cuda.empty_cache()
        cublas_out.clear()
    return rows


def bench_copy(iters: int, quick: bool):
    import torch
    cp = load("copy_tma.py")
    rows_, cols = (4096, 4096) if quick else COPY_SHAPE
    out = []
    torch_gbs = None
    for stages, per_sm in COPY_CONFIGS:
        r = cp.launcher(rows_, cols, num_stages=stages, ctas_per_sm=per_sm)
        src, dst = r["src"], r["dst"]
        r["launch"]()
        torch.cuda.synchronize()
        bad = int((dst.view(torch.int16) != src.view(torch.int16)).sum())
        t = time_ms(r["launch"], iters)
        if torch_gbs is None:
            t_torch = time_ms(lambda: dst.copy_(src), iters)
            torch_gbs = r["bytes"] / t_torch / 1e6
        gbs = r["bytes"] / t / 1e6
        out.append(dict(variant=f"ts TMA copy, {stages} stages x 32 KiB, {per_sm} CTA/SM", ok=bad == 0,
                        mismatches=bad, ms=t, gbs=gbs, torch_gbs=torch_gbs, gib=r["bytes"] / 2 / 2**30))
        print("copy", out[-1], flush=True)
        del r, src, dst
        torch.cuda.empty_cache()
    return out


def markdown(gemm_rows, copy_rows, iters) -> str:
    import torch
    name = torch.cuda.get_device_name(0)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    b2b = any("b2b_tflops" in r for r in gemm_rows)
    head = "| M×N×K | kernel | check | ms | TFLOP/s | cuBLAS ms | cuBLAS TFLOP/s | ratio |"
    rule = "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |"
    if b2b:
        head += " b2b TFLOP/s | cuBLAS b2b TFLOP/s | b2b ratio |"
        rule += " ---: | ---: | ---: |"
    lines = [f"# Hopper benchmarks (`benchmarks/hopper.py`)", "",
             f"{now} · {name} · torch {torch.__version__} · CUDA-event median of {iters} launches after warm-up"
             + (f"; b2b: mean of {iters} back-to-back launches, median of 5 batches" if b2b else ""),
             "", "## bf16 GEMM (C = A·Bᵀ, fp32 accumulate), TS wgmma vs cuBLAS (`torch.matmul`)", "",
             head, rule]
    for r in gemm_rows:
        check = f"ok (rel {r['rel']:.1e})" if r["ok"] else f"FAIL (rel {r['rel']:.1e})"
        line = (f"| {r['shape']} | {r['variant']} | {check} | {r['ms']:.3f} | {r['tflops']:.0f} | "
                f"{r['cublas_ms']:.3f} | {r['cublas_tflops']:.0f} | {r['tflops'] / r['cublas_tflops']:.2f}× |")
        if b2b:
            line += (f" {r['b2b_tflops']:.0f} | {r['cublas_b2b_tflops']:.0f} | "
                     f"{r['b2b_tflops'] / r['cublas_b2b_tflops']:.2f}× |")
        lines.append(line)
    lines += ["", "## Copy (fp16, bytes read + written), TS TMA copy vs `dst.copy_(src)`", "",
              "| size | kernel | check | ms | GB/s | copy_ GB/s | ratio |", "| --- | --- | --- | ---: | ---: | ---: | ---: |"]
    for r in copy_rows:
        check = "bit-exact" if r["ok"] else f"FAIL ({r['mismatches']} mismatches)"
        lines.append(f"| {r['gib']:.2f} GiB | {r['variant']} | {check} | {r['ms']:.3f} | {r['gbs']:.0f} | "
                     f"{r['torch_gbs']:.0f} | {r['gbs'] / r['torch_gbs']:.2f}× |")
    lines += ["", "Targets (issue #7): GEMM ≥ 0.95× cuBLAS at 8192³; copy ≥ 0.9× copy_.", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--markdown", default=str(ROOT / "benchmarks" / "results" / "hopper.md"))
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    ap.add_argument("--only", choices=["gemm", "copy"], default=None)
    ap.add_argument("--variants", default="",
                    help="extra GEMM rows: comma-separated keys of gemm_wgmma.VARIANTS (e.g. swz8,swz8-epi1)")
    ap.add_argument("--b2b", action="store_true", help="also time GEMMs with back-to-back launches")
    args = ap.parse_args(argv)
    variants = [v for v in args.variants.split(",") if v]
    known = load("gemm_wgmma.py").VARIANTS
    unknown = [v for v in variants if v not in known]
    if unknown:
        ap.error(f"unknown --variants {unknown}; known: {sorted(known)}")
    # the copy first: it is cheap, and a GEMM problem must not cost its figures
    copy_rows = [] if args.only == "gemm" else bench_copy(args.iters, args.quick)
    gemm_rows = [] if args.only == "copy" else bench_gemm(args.iters, args.quick, variants, args.b2b)
    text = markdown(gemm_rows, copy_rows, args.iters)
    Path(args.markdown).parent.mkdir(parents=True, exist_ok=True)
    Path(args.markdown).write_text(text)
    print(text)
    return 0 if all(r["ok"] for r in gemm_rows + copy_rows) else 1


if __name__ == "__main__":
    sys.exit(main())
