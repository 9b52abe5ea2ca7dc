#!/usr/bin/env python3
"""Time and peak memory of `gpuwhy trace` on a large synthetic torch.profiler trace.

Target (issue 8): a 200 MB trace read in under 15 s and under 2 GB of memory.

Writes a kineto-shaped Chrome trace of about ``--mb`` MB (CPU operators,
``cudaLaunchKernel`` runtime events, kernels with PyTorch-style templated
names and the usual args, ``ac2g`` flow events, some memcpys) to a temporary
file, then runs :func:`gpuwhy.importers.kineto.load_trace` on it in a
fresh Python process and reports that process's wall time and peak resident
memory (``resource.getrusage(RUSAGE_SELF).ru_maxrss``, which includes the
interpreter and numpy). Prints one JSON document; ``--out FILE`` also writes it.

Usage: python3 benchmarks/bench_trace_import.py [--mb 200] [--gzip] [--keep PATH] [--out FILE]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_NAMES = [
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char *, 3>>(int, T2, T3)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float>>, at::detail::Array<char *, 2>>(int, T2, T3)",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator &)::[lambda(float, float) (instance 1)]>, unsigned int, float, 4>>(T3)",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
    "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, false>(T2 *, const T1 *, int, int, int, const bool *, int, bool)",
]
_OPS = ["aten::add", "aten::mul", "aten::sum", "aten::mm", "aten::softmax"]


def write_trace(path: Path, target_mb: float, gz: bool) -> dict:
    """Write the synthetic trace; returns counts and the file size."""
    opener = (lambda p: gzip.open(p, "wt", compresslevel=1)) if gz else (lambda p: open(p, "w"))
    pid, tid = 31337, 31337
    t = 1_700_000_000_000.0  # kineto writes absolute microseconds
    gpu_t = t + 50.0
    n_iter = 0
    written = 0
    target = target_mb * 1e6
    events = 0
    with opener(path) as fh:
        fh.write('{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H200"}], "traceEvents": [\n')
        first = True
        while written < target:
            k = n_iter % len(_NAMES)
            corr = 100_000 + n_iter
            ext = 500_000 + n_iter
            dur = 2.5 if k != 3 else 800.0
            launch = t + 3.0
            start = max(gpu_t, launch + 5.0)
            parts = [
                json.dumps({"ph": "X", "cat": "cpu_op", "name": _OPS[k], "pid": pid, "tid": tid, "ts": round(t, 3), "dur": 9.5,
                            "args": {"External id": ext, "Record function id": 0, "Sequence number": n_iter, "Fwd thread id": 0,
                                     "Ev Idx": n_iter}}),
                json.dumps({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": pid, "tid": tid, "ts": round(launch, 3),
                            "dur": 4.2, "args": {"External id": ext, "cbid": 211, "correlation": corr}}),
                json.dumps({"ph": "X", "cat": "kernel", "name": _NAMES[k], "pid": 0, "tid": 7, "ts": round(start, 3), "dur": dur,
                            "args": {"External id": ext, "queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": corr,
                                     "registers per thread": 32, "shared memory": 0, "blocks per SM": 7.757576, "warps per SM": 31.030304,
                                     "grid": [4096, 1, 1], "block": [128, 1, 1], "est. achieved occupancy %": 100}}),
                json.dumps({"ph": "s", "id": corr, "pid": pid, "tid": tid, "ts": round(launch, 3), "cat": "ac2g", "name": "ac2g"}),
                json.dumps({"ph": "f", "id": corr, "pid": 0, "tid": 7, "ts": round(start, 3), "cat": "ac2g", "name": "ac2g", "bp": "e"}),
            ]
            if n_iter % 50 == 0:
                parts.append(json.dumps({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pinned)", "pid": 0, "tid": 7,
                                         "ts": round(start + dur + 1.0, 3), "dur": 3.0,
                                         "args": {"device": 0, "stream": 7, "correlation": corr + 10_000_000, "bytes": 4}}))
                dur += 4.0
            chunk = (",\n" if not first else "") + ",\n".join(parts)
            first = False
            fh.write(chunk)
            written += len(chunk)
            events += len(parts)
            gpu_t = start + dur
            t += 12.0
            n_iter += 1
        fh.write('\n], "traceName": "synthetic", "displayTimeUnit": "ms"}\n')
    return {"events": events, "iterations": n_iter, "json_bytes": written, "file_bytes": path.stat().st_size}


_CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
from gpuwhy.importers.kineto import load_trace
r = load_trace(sys.argv[1])
t1 = time.perf_counter()
ru = resource.getrusage(resource.RUSAGE_SELF)
d = r.devices[0] if r.devices else None
print(json.dumps({"seconds": t1 - t0, "peak_rss_mb": ru.ru_maxrss / 1024.0, "verdict": r.verdict,
                  "gpu_events": r.gpu_events, "events": r.events, "kernels": d.kernels if d else 0,
                  "linked_kernels": d.linked_kernels if d else 0}))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=200.0, help="size of the JSON text in MB (1e6 bytes); default 200")
    ap.add_argument("--gzip", action="store_true", help="write the trace gzipped (.json.gz)")
    ap.add_argument("--keep", metavar="PATH", help="write the trace here and keep it")
    ap.add_argument("--out", metavar="FILE", help="also write the JSON result here")
    a = ap.parse_args()
    tmpdir = None
    if a.keep:
        path = Path(a.keep)
    else:
        tmpdir = tempfile.mkdtemp(prefix="gpuwhy-bench-trace-")
        path = Path(tmpdir) / ("trace.json.gz" if a.gzip else "trace.json")
    try:
        g0 = time.perf_counter()
        info = write_trace(path, a.mb, a.gzip)
        gen_s = time.perf_counter() - g0
        env = dict(os.environ)
        env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
        proc = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True, env=env, check=False)
        if proc.returncode != 0:
            sys.stderr.write(proc.stderr)
            return 1
        res = json.loads(proc.stdout)
        doc = {
            "benchmark": "bench_trace_import",
            "python": sys.version.split()[0],
            "trace": {**info, "gzip": a.gzip, "json_mb": info["json_bytes"] / 1e6, "file_mb": info["file_bytes"] / 1e6,
                      "generate_s": gen_s},
            "import": res,
            "targets": {"seconds": 15.0, "peak_rss_mb": 2048.0},
            "pass": res["seconds"] < 15.0 and res["peak_rss_mb"] < 2048.0,
        }
        text = json.dumps(doc, indent=2)
        print(text)
        if a.out:
            Path(a.out).write_text(text + "\n")
        return 0 if doc["pass"] else 1
    finally:
        if tmpdir:
            try:
                path.unlink()
                os.rmdir(tmpdir)
            except OSError:
                pass


if __name__ == "__main__":
    sys.exit(main())
