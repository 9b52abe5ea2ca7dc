"""gpuwhy's bandwidth and launch figures against peers, measured in one process.

Run on a GPU machine from the repository root::

    PYTHONPATH=src python3 benchmarks/bench_memory_peers.py [--tune] [--rounds 3]

Peers (each timed the same way as gpuwhy: CUDA events around every repetition,
the median reported, warm-up first, data several times the L2, fresh random
non-zero data, every peer's result checked once):

- DRAM read: a hand-written 16-byte-vector read kernel through cupy (two
  versions: a grid-stride loop over one full wave, and one float4 per thread;
  the better one is the peer). Target: gpuwhy read-vec16 >= 0.98x.
- copy: ``torch.Tensor.copy_`` of 4 GiB (bytes = read + write). Target: gpuwhy
  copy-vec16 >= 1.0x.
- vecadd: ``torch.add(a, b, out=c)`` on 256M fp32. Target: gpuwhy vecadd-vec16
  >= 1.0x; the naive (course) vecadd is reported beside it.
- host submission: back-to-back launches of an empty kernel, cupy ``RawKernel``
  against gpuwhy's ``cuda.core.launch`` (and the bare ``cuLaunchKernel`` path).
  Target: gpuwhy within 1.2x of cupy.
- graph: per-kernel cost of one graph of 1000 empty launches (gpuwhy through
  cuda.core; cupy's stream capture beside it where it works).

Measurements alternate between gpuwhy and the peer for ``--rounds`` rounds and
report the median of the rounds, so clock drift hits both alike. With --tune it
first times the vectorized kernels over tuning macros and grid sizes.

Writes ``$OUT/peers.json`` when ``OUT`` is set; prints a short table last.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

GiB = 2**30

READ_SRC = r"""
extern "C" __global__ void read16_gridstride(const float4* __restrict__ a, unsigned long long nv, float* __restrict__ out) {
    float s = 0.f;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < nv;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        float4 v = a[i];
        s += (v.x + v.y) + (v.z + v.w);
    }
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(out, s);
}
extern "C" __global__ void read16_onepert(const float4* __restrict__ a, unsigned long long nv, float* __restrict__ out) {
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    float s = 0.f;
    if (i < nv) { float4 v = a[i]; s = (v.x + v.y) + (v.z + v.w); }
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(out, s);
}
extern "C" __global__ void empty_k() {}
"""


def med(xs):
    return statistics.median(xs)


class Peers:
    def __init__(self, sm_count: int):
        import cupy as cp
        import torch

        self.cp, self.torch, self.sm = cp, torch, sm_count
        self.mod = cp.RawModule(code=READ_SRC)
        self.read_gs = self.mod.get_function("read16_gridstride")
        self.read_1 = self.mod.get_function("read16_onepert")
        self.empty = self.mod.get_function("empty_k")

    # ------------------------------------------------------------ timing
    def time_cupy(self, fn, reps=30, warmup=3):
        cp = self.cp
        s = cp.cuda.get_current_stream()
        for i in range(warmup):
            fn(i)
        evs = [(cp.cuda.Event(), cp.cuda.Event()) for _ in range(reps)]
        for i, (a, b) in enumerate(evs):
            a.record(s)
            fn(warmup + i)
            b.record(s)
        evs[-1][1].synchronize()
        return med([cp.cuda.get_elapsed_time(a, b) for a, b in evs]) * 1e-3

    def time_torch(self, fn, reps=30, warmup=3):
        torch = self.torch
        for i in range(warmup):
            fn(i)
        evs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
        for i, (a, b) in enumerate(evs):
            a.record()
            fn(warmup + i)
            b.record()
        evs[-1][1].synchronize()
        return med([a.elapsed_time(b) for a, b in evs]) * 1e-3

    # ------------------------------------------------------------- peers
    def cupy_read(self, n: int, reps=30):
        """Best of the two cupy 16-byte read kernels over n fp32 (2 rotating buffers): (GB/s, which)."""
        cp = self.cp
        bufs = [cp.random.random(n, dtype=cp.float32) + 0.5 for _ in range(2)]
        out = cp.zeros(1, cp.float32)
        nv = n // 4
        best = (0.0, "")
        for name, k, grid in (
            ("grid-stride, 8 blocks/SM", self.read_gs, self.sm * 8),
            ("one float4 per thread", self.read_1, (nv + 255) // 256),
        ):
            out[...] = 0
            k((grid,), (256,), (bufs[0], cp.uint64(nv), out))
            want = float(bufs[0].astype(cp.float64).sum().get())
            got = float(out.get()[0])
            assert abs(got - want) <= 1e-2 * want, f"cupy {name} read gave {got}, expected {want}"
            t = self.time_cupy(lambda i: k((grid,), (256,), (bufs[i % 2], cp.uint64(nv), out)), reps)
            gbs = n * 4 / t / 1e9
            if gbs > best[0]:
                best = (gbs, name)
        del bufs, out
        cp.get_default_memory_pool().free_all_blocks()
        return best

    def torch_copy(self, nbytes: int, reps=20):
        torch = self.torch
        src = torch.rand(nbytes // 4, device="cuda", dtype=torch.float32) + 0.5
        dst = torch.empty_like(src)
        dst.copy_(src)
        assert torch.equal(dst, src)
        t = self.time_torch(lambda i: dst.copy_(src), reps)
        del src, dst
        torch.cuda.empty_cache()
        return 2 * nbytes / t / 1e9

    def torch_add(self, n: int, reps=20):
        torch = self.torch
        a = torch.rand(n, device="cuda", dtype=torch.float32) + 0.5
        b = torch.rand(n, device="cuda", dtype=torch.float32) + 0.5
        c = torch.empty_like(a)
        torch.add(a, b, out=c)
        assert torch.equal(c, a + b)
        t = self.time_torch(lambda i: torch.add(a, b, out=c), reps)
        del a, b, c
        torch.cuda.empty_cache()
        return 3 * n * 4 / t / 1e9

    def cupy_submit(self, batch=2000):
        cp = self.cp
        k = self.empty
        k((1,), (1,), ())
        cp.cuda.Device().synchronize()
        t0 = time.perf_counter()
        for _ in range(batch):
            k((1,), (1,), ())
        t1 = time.perf_counter()
        cp.cuda.Device().synchronize()
        return (t1 - t0) / batch

    def cupy_graph_per_kernel(self, kernels=1000, reps=10):
        cp = self.cp
        s = cp.cuda.Stream(non_blocking=True)
        with s:
            s.begin_capture()
            for _ in range(kernels):
                self.empty((1,), (1,), ())
            g = s.end_capture()
        g.launch(s)
        s.synchronize()
        ts = []
        for _ in range(reps):
            a, b = cp.cuda.Event(), cp.cuda.Event()
            a.record(s)
            g.launch(s)
            b.record(s)
            b.synchronize()
            ts.append(cp.cuda.get_elapsed_time(a, b) * 1e-3 / kernels)
        return med(ts)


GRIDS: dict = {}


def gpuwhy_row(bench, kernel: str, n: int, budget=0.1):
    """gpuwhy's own row for ``kernel`` at n, exactly as `gpuwhy bench` times it."""
    from gpuwhy.bench.memory import select_cases

    rows, notes = bench.time_size(select_cases([kernel]), n, spec_gbs=None, budget_s=budget, min_reps=20, max_reps=100)
    if not rows:
        raise SystemExit(f"gpuwhy {kernel} n={n} not measured: {notes}")
    GRIDS.setdefault(f"{kernel} n={n}", []).append(rows[0].grid)
    return rows[0]


def tune(ctx, n: int = 2**28):
    """Time read/copy/vecadd vec16 over unroll, store kind, block size and launch shape (fp32, n elements)."""
    from gpuwhy.bench.memory import MemoryBench, select_cases

    out = []
    cases = select_cases(["read-vec16", "copy-vec16", "vecadd-vec16"])
    plans = [("chunk", 4, b) for b in (128, 256, 512)] + [("persistent", w, 256) for w in (1, 4, 16)]
    for unroll in (1, 2, 4, 8):
        for store in (0, 1):
            defines = {"GPUWHY_UNROLL": unroll, "GPUWHY_UNROLL_READ": unroll, "GPUWHY_UNROLL_WRITE": unroll,
                       "GPUWHY_LOAD": 0, "GPUWHY_STORE": store}
            for mode, waves, block in plans:
                bench = MemoryBench(ctx, "fp32", defines=defines, waves=waves, shapes=mode, block=block)
                rows, _ = bench.time_size(cases, n, spec_gbs=None, budget_s=0.02, min_reps=8, max_reps=40)
                for r in rows:
                    out.append({"kernel": r.kernel, "unroll": unroll, "store": store, "mode": mode, "waves": waves,
                                "block": block, "grid": r.grid, "gbs": r.gbs, "cv": r.time.cv})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tune", action="store_true", help="also sweep tuning macros and grid sizes first")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()

    from gpuwhy.bench.launch import _submitter, measure_launch_overhead
    from gpuwhy.bench.memory import MemoryBench
    from gpuwhy.engine.compile import nvrtc_version
    from gpuwhy.engine.context import open_device

    doc: dict = {"rounds": args.rounds}
    t_start = time.perf_counter()
    with open_device(None) as ctx:
        info = ctx.info
        doc["device"] = info.to_dict()
        doc["nvrtc"] = "%d.%d" % nvrtc_version()
        peers = Peers(info.sm_count)
        if args.tune:
            t0 = time.perf_counter()
            doc["tune"] = tune(ctx)
            doc["tune_s"] = time.perf_counter() - t0
            for k in ("read-vec16", "copy-vec16", "vecadd-vec16"):
                top = sorted((r for r in doc["tune"] if r["kernel"] == k), key=lambda r: -r["gbs"])[:4]
                print(f"tune {k}: " + "; ".join(
                    f"U{r['unroll']} S{r['store']} {r['mode'][0]}{r['waves'] if r['mode'] == 'persistent' else ''} "
                    f"b{r['block']} g{r['grid']} {r['gbs']:.0f}" for r in top), flush=True)
                u = 4 if k == "read-vec16" else 1
                dflt = [r for r in doc["tune"] if r["kernel"] == k and r["unroll"] == u and r["store"] == 0
                        and r["block"] == 256 and (r["mode"], r["waves"]) in (("chunk", 4), ("persistent", 4))]
                print(f"  default candidates: " + "; ".join(f"{r['mode']} {r['gbs']:.0f}" for r in dflt), flush=True)
        bench = MemoryBench(ctx, "fp32")
        res: dict[str, dict[str, list]] = {}

        def add(key, who, value):
            res.setdefault(key, {}).setdefault(who, []).append(value)

        for rnd in range(args.rounds):
            for n in (2**28, 2**30):
                add(f"read_{n}", "gpuwhy", gpuwhy_row(bench, "read-vec16", n).gbs)
                gbs, which = peers.cupy_read(n)
                add(f"read_{n}", "cupy", gbs)
                doc[f"cupy_read_{n}_kernel"] = which
            add("copy_4GiB", "gpuwhy", gpuwhy_row(bench, "copy-vec16", GiB).gbs)
            add("copy_4GiB", "torch", peers.torch_copy(4 * GiB))
            add("vecadd_256M", "gpuwhy_vec16", gpuwhy_row(bench, "vecadd-vec16", 2**28).gbs)
            add("vecadd_256M", "gpuwhy_naive", gpuwhy_row(bench, "vecadd-naive", 2**28).gbs)
            add("vecadd_256M", "torch", peers.torch_add(2**28))
            print(f"round {rnd + 1}: " + ", ".join(f"{k} {w} {v[-1]:.0f}" for k, d in res.items() for w, v in d.items()),
                  flush=True)

        # host submission, alternating
        k = ctx.kernel("launch.cu", "empty_kernel")
        cfg = ctx.config(1, 1)
        subs = {"gpuwhy cuda.core.launch": _submitter(ctx, k, cfg, "cuda.core.launch")}
        try:
            subs["gpuwhy cuLaunchKernel"] = _submitter(ctx, k, cfg, "cuLaunchKernel")
        except Exception as exc:  # noqa: BLE001
            doc["culaunchkernel_error"] = f"{type(exc).__name__}: {exc}"
        sub: dict[str, list] = {"cupy RawKernel": []}
        for _ in range(7):
            sub["cupy RawKernel"].append(peers.cupy_submit())
            for name, one in subs.items():
                for _ in range(200):
                    one()
                ctx.sync()
                t0 = time.perf_counter()
                for _ in range(2000):
                    one()
                sub.setdefault(name, []).append((time.perf_counter() - t0) / 2000)
                ctx.sync()
        lo = measure_launch_overhead(ctx)
        doc["launch_overhead"] = lo.to_dict()
        try:
            doc["cupy_graph_per_kernel_s"] = peers.cupy_graph_per_kernel()
        except Exception as exc:  # noqa: BLE001
            doc["cupy_graph_error"] = f"{type(exc).__name__}: {exc}"

    doc["gpuwhy_grids"] = GRIDS
    doc["bandwidth_gbs"] = {k: {w: med(v) for w, v in d.items()} for k, d in res.items()}
    doc["bandwidth_rounds_gbs"] = res
    doc["submit_s"] = {k: med(v) for k, v in sub.items()}
    bw = doc["bandwidth_gbs"]
    sb = doc["submit_s"]
    rows = []
    for n, label in ((2**28, "1 GiB"), (2**30, "4 GiB")):
        r = bw[f"read_{n}"]["gpuwhy"] / bw[f"read_{n}"]["cupy"]
        rows.append((f"DRAM read {label} fp32", bw[f"read_{n}"]["gpuwhy"], bw[f"read_{n}"]["cupy"], "cupy 16-B kernel", r, ">= 0.98", r >= 0.98))
    r = bw["copy_4GiB"]["gpuwhy"] / bw["copy_4GiB"]["torch"]
    rows.append(("copy 4 GiB", bw["copy_4GiB"]["gpuwhy"], bw["copy_4GiB"]["torch"], "torch copy_", r, ">= 1.0", r >= 1.0))
    r = bw["vecadd_256M"]["gpuwhy_vec16"] / bw["vecadd_256M"]["torch"]
    rows.append(("vecadd-vec16 256M fp32", bw["vecadd_256M"]["gpuwhy_vec16"], bw["vecadd_256M"]["torch"], "torch.add", r, ">= 1.0", r >= 1.0))
    r = bw["vecadd_256M"]["gpuwhy_naive"] / bw["vecadd_256M"]["torch"]
    rows.append(("vecadd-naive 256M fp32", bw["vecadd_256M"]["gpuwhy_naive"], bw["vecadd_256M"]["torch"], "torch.add", r, "(reported)", None))
    doc["checks"] = [
        {"what": w, "gpuwhy_gbs": g, "peer_gbs": p, "peer": pn, "ratio": r, "target": t, "ok": ok}
        for (w, g, p, pn, r, t, ok) in rows
    ]
    cu = sb["cupy RawKernel"]
    for name in [k for k in sb if k.startswith("gpuwhy")]:
        ratio = sb[name] / cu
        doc["checks"].append({"what": f"host submission ({name})", "gpuwhy_s": sb[name], "peer_s": cu,
                              "peer": "cupy RawKernel", "ratio": ratio, "target": "<= 1.2", "ok": ratio <= 1.2})
    doc["duration_s"] = time.perf_counter() - t_start
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], "peers.json").write_text(json.dumps(doc, indent=2) + "\n")

    print()
    print(f"{info.name} ({info.arch}, {info.sm_count} SMs, L2 {info.l2_bytes / 2**20:.0f} MiB), NVRTC {doc['nvrtc']}, "
          f"median of {args.rounds} alternating rounds; GB/s = 1e9 B/s, bytes = read + write")
    print(f"{'check':<32}{'gpuwhy':>14}{'peer':>14}  {'peer is':<18}{'ratio':>7}  {'target':<11}ok")
    for c in doc["checks"]:
        if "gpuwhy_gbs" in c:
            g, p = f"{c['gpuwhy_gbs']:.0f} GB/s", f"{c['peer_gbs']:.0f} GB/s"
        else:
            g, p = f"{c['gpuwhy_s'] * 1e6:.2f} us", f"{c['peer_s'] * 1e6:.2f} us"
        ok = "-" if c["ok"] is None else ("yes" if c["ok"] else "NO")
        print(f"{c['what']:<32}{g:>14}{p:>14}  {c['peer']:<18}{c['ratio']:>7.3f}  {c['target']:<11}{ok}")
    lo = doc["launch_overhead"]
    print(f"launch overhead: event-timed {lo['event_s'] * 1e6:.2f} us, round trip {lo['round_trip_s'] * 1e6:.2f} us, "
          f"submit {lo['submit_s'] * 1e6:.2f} us, graph {lo['graph_per_kernel_s'] * 1e6:.3f} us/kernel"
          + (f" (cupy graph {doc['cupy_graph_per_kernel_s'] * 1e6:.3f} us/kernel)" if "cupy_graph_per_kernel_s" in doc else ""))
    return 0 if all(c["ok"] in (True, None) for c in doc["checks"]) else 1


if __name__ == "__main__":
    sys.exit(main())
