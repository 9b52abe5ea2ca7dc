"""Kernels judged per memory level through ``gpuwhy.measure``, on this machine's GPU.

Run on a GPU machine from the repository root, after ``gpuwhy bench --latency`` and
``gpuwhy bench --sweep`` (so the profile holds measured DRAM and L2 ceilings and latencies)::

    PYTHONPATH=src python3 benchmarks/hierarchy_measure.py

Four CuPy kernels, each timed by ``gpuwhy.measure(..., measured=True)``:

- ``l2_resident``: 50 passes of 16-byte reads over a buffer of L2/4 bytes, given as
  ``working_set=``: must be judged against the L2 roof (``memory_level`` L2), not DRAM.
- ``vecadd_naive``: the course's one-element-per-thread vecadd over 2^28 floats (256
  threads per block, 8 bytes in flight per thread): must be memory latency-bound with the
  cause "few bytes per thread".
- ``vecadd_vec4``: the same sum with one float4 of each input per thread (32 bytes in
  flight per thread): must stay memory-bound.
- ``small_grid``: a grid-stride float4 read of 1 GiB by 8 blocks of 256 threads: must be
  memory latency-bound with the cause "small grid" (a fraction of a wave on the SMs).

Prints one line per kernel and writes ``$OUT/hierarchy_measure.json`` when ``OUT`` is set.
Exits 1 when a verdict is not the expected one, 3 without a GPU (one line).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

SRC = r"""
extern "C" __global__ void vecadd_naive(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void vecadd_vec4(const float4* __restrict__ a, const float4* __restrict__ b, float4* __restrict__ c, int nv) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < nv) { float4 x = a[i], y = b[i]; c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w); }
}
"""


def main() -> int:
    import gpuwhy
    from gpuwhy.errors import GpuwhyError, NoDeviceError

    try:
        from gpuwhy.engine.context import device_identity, init_driver

        init_driver()
        _, l2 = device_identity(0)
    except NoDeviceError as exc:
        print(f"hierarchy_measure: no GPU: {exc}; nothing measured")
        return 3
    except (ImportError, GpuwhyError) as exc:
        print(f"hierarchy_measure: no GPU: {type(exc).__name__}: {exc}; nothing measured")
        return 3
    try:
        import cupy as cp
    except ImportError as exc:
        print(f"hierarchy_measure: no GPU run: needs cupy ({exc})")
        return 3

    from bench_l2_peers import PEER_SRC  # the grid-stride __ldcg read with passes: l2_peer_1

    mod = cp.RawModule(code=SRC + PEER_SRC)
    k_naive, k_vec4, k_read = (mod.get_function(n) for n in ("vecadd_naive", "vecadd_vec4", "l2_peer_1"))
    sm = cp.cuda.Device().attributes["MultiProcessorCount"]
    out = cp.zeros(1, cp.float32)
    results, bad = [], []

    def record(name, r, want_regime, want_level=None, want_cause=None):
        h = r.hierarchy
        lat = getattr(h, "latency", None)
        d = {"name": name, "summary": r.summary(), "regime": r.verdict.regime, "memory_level": r.verdict.ceilings.level,
             "sol_pct": r.verdict.sol_pct, "memory_sol_pct": r.verdict.memory_sol_pct,
             "achieved_gbs": r.verdict.achieved_bandwidth / 1e9, "cause": lat.cause if lat else None,
             "reason": lat.reason if lat else None, "lines": list(h.lines) if h else [], "notes": list(r.notes),
             "time_s": r.time_s}
        ok = r.verdict.regime == want_regime and (want_level is None or d["memory_level"] == want_level) and (
            want_cause is None or d["cause"] == want_cause)
        d["expected"] = {"regime": want_regime, "level": want_level, "cause": want_cause}
        d["ok"] = ok
        results.append(d)
        print(f"{'ok ' if ok else 'NO '} {name}: {r.summary()}")
        for line in d["lines"]:
            print(f"      {line}")
        if not ok:
            bad.append(name)

    def l2_resident():  # an L2-resident read: L2/4 bytes, 50 passes in one launch
        ws = (l2 // 4) // 512 * 512
        x = cp.random.random(ws // 4, dtype=cp.float32) + 0.5
        passes = 50
        r = gpuwhy.measure(lambda: k_read((sm * 4,), (512,), (x, cp.uint64(ws // 16), cp.int32(passes), out)),
                           flops=passes * ws // 4, bytes=passes * ws, working_set=ws, measured=True, name="l2_resident")
        record("l2_resident", r, "memory", want_level="L2")

    def vecadds():  # vecadd over 2^28 floats: one element per thread, then one float4 per thread
        n = 2**28
        a = cp.random.random(n, dtype=cp.float32) + 0.5
        b = cp.random.random(n, dtype=cp.float32) + 0.5
        c = cp.empty_like(a)
        k_naive(((n + 255) // 256,), (256,), (a, b, c, cp.int32(n)))
        assert bool(cp.allclose(c, a + b))
        r = gpuwhy.measure(lambda: k_naive(((n + 255) // 256,), (256,), (a, b, c, cp.int32(n))), flops=n, bytes=12 * n,
                           measured=True, launch=((n + 255) // 256, 256), bytes_per_thread=8, name="vecadd_naive")
        record("vecadd_naive", r, "latency", want_cause="few bytes per thread")
        nv = n // 4
        c[...] = 0
        k_vec4(((nv + 255) // 256,), (256,), (a, b, c, cp.int32(nv)))
        assert bool(cp.allclose(c, a + b))
        r = gpuwhy.measure(lambda: k_vec4(((nv + 255) // 256,), (256,), (a, b, c, cp.int32(nv))), flops=n, bytes=12 * n,
                           measured=True, launch=((nv + 255) // 256, 256), bytes_per_thread=32, name="vecadd_vec4")
        record("vecadd_vec4", r, "memory")

    def small_grid():  # a deliberately small grid: 8 blocks of 256 threads reading 1 GiB
        big = cp.random.random(2**28, dtype=cp.float32) + 0.5
        r = gpuwhy.measure(lambda: k_read((8,), (256,), (big, cp.uint64(2**26), cp.int32(1), out)), flops=2**28,
                           bytes=2**30, measured=True, launch=(8, 256), bytes_per_thread=16, name="small_grid", reps=10)
        record("small_grid", r, "latency", want_cause="small grid")

    for step in (l2_resident, vecadds, small_grid):
        step()
        cp.get_default_memory_pool().free_all_blocks()
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], "hierarchy_measure.json").write_text(json.dumps(results, indent=2) + "\n")
    print(f"{len(results) - len(bad)} of {len(results)} verdicts as expected" + (f"; not: {', '.join(bad)}" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
