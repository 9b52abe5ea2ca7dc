"""A CuPy program for `gpuwhy run --tracer cupti`: each step copies a 64 MiB pageable NumPy array to
the GPU, runs a few elementwise kernels and a reduction, and reads the result back (a sync).
Prints one line: steps, seconds per step (median), the last sum checked against NumPy."""

import statistics
import sys
import time

import cupy as cp
import numpy as np

STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 60
host = np.random.default_rng(0).random(16 * 1024 * 1024, dtype=np.float32)  # 64 MiB, pageable
times = []
for _ in range(STEPS):
    t = time.perf_counter()
    d = cp.asarray(host)
    d = cp.sqrt(d * 2.0 + 1.0)
    s = float(d.sum())
    times.append(time.perf_counter() - t)
want = float(np.sqrt(host.astype(np.float64) * 2.0 + 1.0).sum())
assert abs(s - want) / want < 1e-4, (s, want)
print(f"cupy_loop: {STEPS} steps, {statistics.median(times) * 1e3:.3f} ms/step, sum {s:.6g} (numpy {want:.6g})")
