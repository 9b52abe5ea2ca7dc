#!/usr/bin/env python3
"""gpuwhy's compute ceilings against their peers, in one process, on the GPU machine.

Runs ``gpuwhy.bench.compute`` (every case; ``--variants all`` times every wgmma
variant), then in the same process:

- torch.matmul bf16 and fp16 on 8192^3, torch fp32 matmul with TF32 allowed,
  torch._scaled_mm fp8 e4m3 on 8192^3 (bf16 output), torch._int_mm int8, torch
  fp32 matmul without TF32 (CUDA-core SGEMM, for reference);
- a hand-written cupy FP32 and FP64 FMA kernel (RawKernel, 8 chains x 16 unroll).

Each peer is timed with CUDA events (3 warm-ups, median of 20) on random
inputs, with the SM clock sampled through NVML while it runs. FLOPs of a matmul
are 2 M N K. With ``--sass`` it also disassembles the cubins gpuwhy built
(cuobjdump --dump-sass) and counts the math instructions of each kernel
(HGMMA/QGMMA/IGMMA for wgmma, HMMA/IMMA for mma.sync, FFMA/DFMA/HFMA2).

Writes ``$OUT/compute_peers.json`` when ``OUT`` is set (or ``--json PATH``) and
prints a short table last, with the same-run ratios the issue asks for. Exit
status 0 even when a ratio falls short (the table says so); 4 when a gpuwhy
kernel gave a wrong result.

Usage (on the GPU machine, from the repository root)::

    PYTHONPATH=src python3 benchmarks/bench_compute_peers.py --variants all --sass
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import numpy as np  # noqa: E402

from gpuwhy.bench import compute as C  # noqa: E402
from gpuwhy.device.sample import ClockSampler  # noqa: E402
from gpuwhy.device.sheet import sheet_for  # noqa: E402

N = 8192


def median(xs):
    xs = sorted(xs)
    k = len(xs) // 2
    return xs[k] if len(xs) % 2 else 0.5 * (xs[k - 1] + xs[k])


def torch_time(fn, clock, warmup=3, reps=20):
    """(median seconds, clock samples MHz) of fn() timed with torch CUDA events."""
    import torch

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    st = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    en = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        st[i].record()
        fn()
        en[i].record()
    samples = []
    while not en[-1].query():
        samples.append(clock.sample())
        time.sleep(0.004)
    torch.cuda.synchronize()
    return median([s.elapsed_time(e) * 1e-3 for s, e in zip(st, en)]), samples


def torch_peers(clock):
    import torch

    out = {}
    dev = "cuda"
    flops = 2.0 * N**3

    def rec(name, fn):
        try:
            t, samples = torch_time(fn, clock)
            out[name] = {"tflops": flops / t / 1e12, "median_s": t, **C.sample_summary(samples)}
        except Exception as exc:  # a peer that does not run is reported, not fatal
            traceback.print_exc()
            out[name] = {"error": f"{type(exc).__name__}: {exc}"}

    g = torch.Generator(device=dev).manual_seed(1234)
    for dt, name in ((torch.bfloat16, "torch.matmul bf16"), (torch.float16, "torch.matmul fp16")):
        a = torch.randn(N, N, device=dev, dtype=dt, generator=g)
        b = torch.randn(N, N, device=dev, dtype=dt, generator=g)
        rec(name, lambda a=a, b=b: torch.matmul(a, b))
    a = torch.randn(N, N, device=dev, dtype=torch.float32, generator=g)
    b = torch.randn(N, N, device=dev, dtype=torch.float32, generator=g)
    old = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = True
    rec("torch.matmul tf32", lambda a=a, b=b: torch.matmul(a, b))
    torch.backends.cuda.matmul.allow_tf32 = False
    rec("torch.matmul fp32 (no tf32)", lambda a=a, b=b: torch.matmul(a, b))
    torch.backends.cuda.matmul.allow_tf32 = old
    a8 = a.clamp(-8, 8).to(torch.float8_e4m3fn)
    b8 = b.clamp(-8, 8).to(torch.float8_e4m3fn)
    one = torch.tensor(1.0, device=dev)
    rec("torch._scaled_mm fp8",
        lambda a8=a8, b8=b8: torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16))
    ai = torch.randint(-64, 64, (N, N), device=dev, dtype=torch.int8, generator=g)
    bi = torch.randint(-64, 64, (N, N), device=dev, dtype=torch.int8, generator=g)
    rec("torch._int_mm int8", lambda ai=ai, bi=bi: torch._int_mm(ai, bi))
    torch.cuda.empty_cache()
    return out


CUPY_FMA = r"""
extern "C" __global__ void cupy_fma_f32(float* out, float a, float b, int iters) {
    float x0 = threadIdx.x * 1e-3f, x1 = x0 + 1.f, x2 = x0 + 2.f, x3 = x0 + 3.f;
    float x4 = x0 + 4.f, x5 = x0 + 5.f, x6 = x0 + 6.f, x7 = x0 + 7.f;
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < 16; ++u) {
            x0 = fmaf(x0, a, b); x1 = fmaf(x1, a, b); x2 = fmaf(x2, a, b); x3 = fmaf(x3, a, b);
            x4 = fmaf(x4, a, b); x5 = fmaf(x5, a, b); x6 = fmaf(x6, a, b); x7 = fmaf(x7, a, b);
        }
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
}
extern "C" __global__ void cupy_fma_f64(double* out, double a, double b, int iters) {
    double x0 = threadIdx.x * 1e-3, x1 = x0 + 1., x2 = x0 + 2., x3 = x0 + 3.;
    double x4 = x0 + 4., x5 = x0 + 5., x6 = x0 + 6., x7 = x0 + 7.;
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < 16; ++u) {
            x0 = fma(x0, a, b); x1 = fma(x1, a, b); x2 = fma(x2, a, b); x3 = fma(x3, a, b);
            x4 = fma(x4, a, b); x5 = fma(x5, a, b); x6 = fma(x6, a, b); x7 = fma(x7, a, b);
        }
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
}
"""


def cupy_peers(clock, sm_count):
    import cupy as cp

    out = {}
    mod = cp.RawModule(code=CUPY_FMA)
    block, grid = 256, sm_count * 8
    for name, kname, dt, iters in (("cupy FMA fp32", "cupy_fma_f32", np.float32, 20000),
                                    ("cupy FMA fp64", "cupy_fma_f64", np.float64, 5000)):
        try:
            k = mod.get_function(kname)
            buf = cp.empty(grid * block, dtype=dt)
            args = (buf, dt(0.999), dt(0.001), np.int32(iters))
            for _ in range(2):
                k((grid,), (block,), args)
            cp.cuda.Device().synchronize()
            st = [cp.cuda.Event() for _ in range(10)]
            en = [cp.cuda.Event() for _ in range(10)]
            for i in range(10):
                st[i].record()
                k((grid,), (block,), args)
                en[i].record()
            samples = []
            while not en[-1].done:
                samples.append(clock.sample())
                time.sleep(0.004)
            cp.cuda.Device().synchronize()
            t = median([cp.cuda.get_elapsed_time(s, e) * 1e-3 for s, e in zip(st, en)])
            flops = 2.0 * 8 * 16 * iters * grid * block
            out[name] = {"tflops": flops / t / 1e12, "median_s": t, **C.sample_summary(samples)}
            if not np.all(np.isfinite(cp.asnumpy(buf))):
                out[name]["error"] = "non-finite output"
        except Exception as exc:
            out[name] = {"error": f"{type(exc).__name__}: {exc}"}
    return out


def sass_counts(arch):
    """{kernel: {opcode: count}} of the math instructions in gpuwhy's compute cubins."""
    from gpuwhy.engine.compile import compile_file

    tool = shutil.which("cuobjdump")
    if tool is None:
        return {"error": "cuobjdump not found"}
    pats = re.compile(r"\b([HQI]GMMA\.[0-9x]+[A-Z0-9.]*|HMMA\.[0-9A-Z.]+|IMMA\.[0-9A-Z.]+|FFMA|DFMA|HFMA2|F2FP\.F16\.E4M3\.UNPACK[A-Z_.]*)")
    counts = {}
    logs = {}
    builds = [("compute_fma.cu", arch), ("compute_mma.cu", arch)]
    if arch == "sm_90":
        builds.append(("compute_wgmma.cu", "sm_90a"))
    with tempfile.TemporaryDirectory() as td:
        for src, a in builds:
            mod = compile_file(src, a, use_cache=False)
            logs[src] = [ln for ln in mod.log.splitlines() if "C75" in ln or "warning" in ln.lower()]
            p = Path(td) / f"{src}.{a}.cubin"
            p.write_bytes(mod.cubin)
            sass = subprocess.run([tool, "--dump-sass", str(p)], capture_output=True, text=True, timeout=120).stdout
            fn = None
            for line in sass.splitlines():
                m = re.search(r"Function : (\S+)", line)
                if m:
                    fn = m.group(1)
                    counts[fn] = {}
                    continue
                if fn:
                    for op in pats.findall(line):
                        counts[fn][op] = counts[fn].get(op, 0) + 1
    return {"counts": counts, "ptxas_warnings": logs}


def wgmma_probe(ctx, case, kern, grid, block, rng):
    """Raw inputs/outputs of a wgmma case on structured inputs, for offline diagnosis of a layout bug."""
    a, b = case._operands(rng)
    kel = a.bits.shape[1]
    eye_a = np.zeros_like(a.bits)
    # An "identity" A: A[m, k] = 1 where k == m (m < K); bits of 1.0 in the format.
    one_bits = {"bf16": 0x3F80, "fp16": 0x3C00, "tf32": 0x3F800000, "fp8": 0x38, "int8": 1}[case.precision]
    for m in range(64):
        eye_a[m, m % kel] = one_bits
    ia = C.Operand(eye_a, (eye_a != 0).astype(np.float64), a.elem_bits)
    eye_b = np.zeros_like(b.bits)
    for nn in range(256):
        eye_b[nn, nn % kel] = one_bits
    ib = C.Operand(eye_b, (eye_b != 0).astype(np.float64), b.elem_bits)
    res = {}
    for tag, (x, y) in {"rand": (a, b), "eyeA": (ia, b), "eyeB": (a, ib)}.items():
        got = case.run_once(ctx, kern, grid, block, x, y, 1)
        res[f"{tag}_got"] = got[0, 0]
        res[f"{tag}_a"] = x.values
        res[f"{tag}_b"] = y.values
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variants", default="default", choices=("default", "all"))
    ap.add_argument("--precisions", default=None, help="comma-separated subset of " + ",".join(C.PRECISIONS))
    ap.add_argument("--sass", action="store_true", help="count math instructions in the cubins (cuobjdump)")
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--target-ms", type=float, default=30.0)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--json", default=None)
    ap.add_argument("--explore", action="store_true",
                    help="also time wgmma build knobs (passes per commit group, wait depth) for bf16/fp16/fp8")
    args = ap.parse_args(argv)
    torch_import_error = None
    if not args.no_peers:
        try:  # import torch first, before cuda-python and NVML are loaded in this process
            import torch  # noqa: F401  (an import after cuda-python/NVML failed on the H200 machine once)
        except Exception:
            torch_import_error = traceback.format_exc()
            print("torch import failed:\n" + torch_import_error, flush=True)

    from gpuwhy.engine.context import open_device
    from gpuwhy.errors import MeasurementError

    outdir = os.environ.get("OUT")
    jpath = args.json or (os.path.join(outdir, "compute_peers.json") if outdir else None)
    report: dict = {"results": [], "errors": [], "peers": {}}
    precs = args.precisions.split(",") if args.precisions else None
    failed = False
    diag = {}
    with open_device(0) as ctx:
        info = ctx.info
        report["device"] = info.to_dict()
        sheet = sheet_for(device=ctx.info).sheet
        report["sheet"] = sheet.name if sheet else None
        print(f"device: {info.name} {info.arch} SMs={info.sm_count} sheet={report['sheet']}", flush=True)
        if args.sass:
            try:
                report["sass"] = sass_counts(info.arch)
                for fn, cnt in sorted(report["sass"].get("counts", {}).items()):
                    print(f"SASS {fn}: {cnt}")
                for src, w in report["sass"].get("ptxas_warnings", {}).items():
                    for ln in w:
                        print(f"PTXAS {src}: {ln}")
            except Exception as exc:
                report["sass"] = {"error": f"{type(exc).__name__}: {exc}"}
                print("SASS check failed:", exc)
        rng = np.random.default_rng()
        with ClockSampler(info.uuid) as clock:
            cases = C.select_cases(info.arch, precs, args.variants)
            if args.explore and info.arch == "sm_90":
                for p in ("bf16", "fp16", "fp8"):
                    if precs and p not in precs:
                        continue
                    for passes, inflight in ((2, 1), (1, -1), (4, 0)):
                        for a_src, wgs in (("ss", 2), ("ss", 3), ("rs", 2)):
                            cases.append(C.WgmmaCase(p, C.wgmma_kernel_name(p, a_src, "n256"), a_src, "n256", wgs,
                                                     passes, inflight))
            for case in cases:
                if isinstance(case, C.NotMeasured):
                    r = C.not_measured_result(case, sheet)
                else:
                    try:
                        r = C.measure_case(ctx, case, sheet=sheet, target_s=args.target_ms / 1e3, reps=args.reps,
                                           rng=rng, sample=clock.sample)
                    except MeasurementError as exc:
                        failed = True
                        label = getattr(case, "label", case.kernel)
                        report["errors"].append({"kernel": label, "error": str(exc)})
                        print(f"FAILED {label}: {exc}", flush=True)
                        if isinstance(case, C.WgmmaCase) and case.kernel not in {k.split(':')[0] for k in diag}:
                            try:
                                kern = case.load(ctx, info.arch)
                                g, bl = case.shape(ctx, kern)
                                for k2, v in wgmma_probe(ctx, case, kern, g, bl, rng).items():
                                    diag[f"{case.kernel}:{k2}"] = v
                            except Exception:
                                traceback.print_exc()
                        continue
                report["results"].append(r.to_dict())
                pc = r.pct_of_clock_peak
                ps = r.pct_of_sheet
                print(f"{r.precision:15s} {(r.variant or r.kernel):34s} {r.status:9s} "
                      f"{(r.tflops or 0):8.1f} TFLOP/s  clock {r.sm_clock_mhz or 0:5.0f} MHz "
                      f"[{r.sm_clock_min_mhz or 0:.0f}-{r.sm_clock_max_mhz or 0:.0f}, n={r.clock_samples}] "
                      f"{r.power_w or 0:5.0f} W {','.join(r.clock_events) or '-'}  "
                      f"clock-peak {r.clock_peak_tflops or 0:7.1f} "
                      f"({(pc or 0):5.1f}%)  sheet {r.sheet_peak_tflops or 0:7.1f} ({(ps or 0):5.1f}%)  "
                      f"cv {r.cv or 0:.3f}  grid {r.grid}x{r.block} iters {r.iters}  [{r.verify}]", flush=True)
            if not args.no_peers:
                try:
                    report["peers"].update(torch_peers(clock))
                except Exception as exc:
                    traceback.print_exc()
                    report["peers"]["torch"] = {"error": f"{type(exc).__name__}: {exc}",
                                                "import_error": torch_import_error}
                try:
                    report["peers"].update(cupy_peers(clock, info.sm_count))
                except Exception as exc:
                    report["peers"]["cupy"] = {"error": f"{type(exc).__name__}: {exc}"}
    if diag and outdir:
        np.savez_compressed(os.path.join(outdir, "wgmma_diag.npz"), **{k.replace(":", "__"): v for k, v in diag.items()})
    report["summary"] = summary(report)
    if jpath:
        Path(jpath).write_text(json.dumps(report, indent=1, default=str))
    print_table(report)
    return 4 if failed else 0


def _best(results, precision, unit_prefix):
    rows = [r for r in results if r["precision"] == precision and r["kernel"].startswith(unit_prefix) and r["tflops"]]
    best = max(rows, key=lambda r: r["tflops"]) if rows else None
    if best is not None:
        best = dict(best, kernel=best.get("variant") or best["kernel"])
    return best


def summary(report):
    """The same-run comparisons the issue's 'Must show' lists."""
    res, peers = report["results"], report["peers"]
    out = []

    def peer(name):
        p = peers.get(name) or {}
        return p.get("tflops")

    for prec, kprefix, target in (("fp32", "fma_", 0.97), ("fp64", "fma_", 0.97)):
        r = _best(res, prec, kprefix)
        if r:
            ratio = (r["tflops"] / r["clock_peak_tflops"]) if r["clock_peak_tflops"] else None
            out.append({"what": f"{prec} FMA vs clock peak", "gpuwhy": r["tflops"], "peer": r["clock_peak_tflops"],
                        "ratio": ratio, "target": target, "clock_mhz": r["sm_clock_mhz"], "kernel": r["kernel"]})
    for prec, pname, target in (("bf16", "torch.matmul bf16", 1.15), ("fp16", "torch.matmul fp16", 1.15),
                                ("fp8", "torch._scaled_mm fp8", 1.15), ("tf32", "torch.matmul tf32", 1.0),
                                ("int8", "torch._int_mm int8", None)):
        r = _best(res, prec, "wgmma_") or _best(res, prec, "mma_")
        if r:
            pv = peer(pname)
            out.append({"what": f"{prec} tensor vs {pname}", "gpuwhy": r["tflops"], "peer": pv,
                        "ratio": (r["tflops"] / pv) if pv else None, "target": target, "clock_mhz": r["sm_clock_mhz"],
                        "kernel": r["kernel"], "pct_of_sheet": r.get("pct_of_sheet"),
                        "pct_of_clock_peak": r.get("pct_of_clock_peak")})
    r = _best(res, "fp32", "fma_")
    if r and peer("cupy FMA fp32"):
        out.append({"what": "fp32 FMA vs cupy FMA kernel", "gpuwhy": r["tflops"], "peer": peer("cupy FMA fp32"),
                    "ratio": r["tflops"] / peer("cupy FMA fp32"), "target": None, "kernel": r["kernel"]})
    return out


def print_table(report):
    print()
    print("peers (same process):")
    for name, p in report["peers"].items():
        if "tflops" in p:
            print(f"  {name:28s} {p['tflops']:8.1f} TFLOP/s  clock {p.get('sm_clock_mhz') or 0:6.0f} MHz "
                  f"{p.get('power_w') or 0:5.0f} W {','.join(p.get('clock_events') or ()) or '-'}")
        else:
            print(f"  {name:28s} {p.get('error')}")
    for e in report["errors"]:
        print(f"  ERROR {e['kernel']}: {e['error']}")
    print()
    print(f"{'comparison':42s} {'gpuwhy':>9s} {'peer/peak':>9s} {'ratio':>7s} {'target':>7s}  verdict")
    for s in report["summary"]:
        ratio, target = s["ratio"], s["target"]
        verdict = "" if ratio is None or target is None else ("ok" if ratio >= target else f"SHORT by {100 * (target - ratio) / target:.1f}%")
        print(f"{s['what']:42s} {s['gpuwhy']:9.1f} {(s['peer'] or 0):9.1f} {(ratio or 0):7.3f} "
              f"{(target or 0):7.2f}  {verdict} [{s['kernel']} @ {s.get('clock_mhz') or 0:.0f} MHz]")


if __name__ == "__main__":
    sys.exit(main())
