#!/usr/bin/env python3
"""Record the torch.profiler traces of issue 17 that tests/fixtures/real/ lacks, on a GPU machine.

Each is one program people write, profiled the way they profile it, exported
with ``prof.export_chrome_trace`` and gzipped:

- ``trace_workers_pinned.json.gz``: the CNN training loop of trace_dataloader.json
  (same Dataset, six numpy passes per 3x64x64 sample, batch 64), now with
  ``DataLoader(num_workers=8, pin_memory=True, persistent_workers=True,
  prefetch_factor=4)`` and ``non_blocking=True`` copies;
  ``schedule(wait=1, warmup=2, active=3)``;
- ``trace_h2d_pageable_pinned.json.gz``: 64 MiB host-to-device copies, six from
  pageable memory and two from pinned memory, each followed by a small kernel
  and a synchronize; ``schedule(wait=1, warmup=1, active=8)``;
- ``trace_cuda_graph.json.gz``: a CUDA graph of 80 elementwise kernels on 2^20
  fp32 elements, replayed 20 times back to back;
- ``trace_item_heavy.json.gz``: two bf16 8192^3 matmuls per step, then
  ``loss.item()`` and 2 ms of host work (``time.sleep``);
  ``schedule(wait=1, warmup=1, active=6)``;
- ``trace_streams_sync.json.gz``: the two-stream program of trace_streams.json
  after one unprofiled warm-up round, recorded with
  ``enable_cuda_sync_events=True`` (kineto's ``cuda_sync`` events say which
  stream each ``cudaStreamWaitEvent`` made wait) when this PyTorch has it.

Usage: python3 benchmarks/make_trace_cases.py OUT_DIR; writes ``cases.json``
(what was recorded, torch and GPU versions, each case's status) beside the traces.
"""

from __future__ import annotations

import gzip
import json
import sys
import time
from pathlib import Path

import numpy as np


class Noisy:
    """The Dataset of trace_dataloader.json (benchmarks/make_real_exports.py): a 3x64x64 sample, six numpy passes."""

    def __len__(self):
        return 10_000

    def __getitem__(self, i):
        import torch

        rng = np.random.default_rng(i)
        img = rng.standard_normal((3, 64, 64)).astype(np.float32)
        for _ in range(6):
            img = np.clip(img * 1.01 + rng.standard_normal(img.shape).astype(np.float32) * 0.01, -3, 3)
        return torch.from_numpy(img), int(i % 10)


def log(msg: str) -> None:
    sys.stderr.write(f"[make_trace_cases] {msg}\n")
    sys.stderr.flush()


def export(prof, out: Path, name: str) -> int:
    tmp = out / (name + ".tmp.json")
    prof.export_chrome_trace(str(tmp))
    data = tmp.read_bytes()
    tmp.unlink()
    path = out / (name + ".json.gz")
    with gzip.open(path, "wb", compresslevel=9) as fh:
        fh.write(data)
    log(f"{path.name}: {path.stat().st_size} bytes ({len(data)} bytes of JSON)")
    return path.stat().st_size


def workers_pinned(out: Path, acts) -> None:
    import torch
    from torch import nn
    from torch.profiler import profile, schedule

    dev = "cuda"
    model = nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.Conv2d(32, 64, 3, padding=1, stride=2), nn.BatchNorm2d(64), nn.ReLU(),
        nn.Conv2d(64, 128, 3, padding=1, stride=2), nn.BatchNorm2d(128), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loader = torch.utils.data.DataLoader(Noisy(), batch_size=64, shuffle=True, num_workers=8, pin_memory=True,
                                         persistent_workers=True, prefetch_factor=4)
    lossf = nn.CrossEntropyLoss()
    with profile(activities=acts, schedule=schedule(wait=1, warmup=2, active=3, repeat=1)) as prof:
        for i, (xb, yb) in enumerate(loader):
            xb, yb = xb.to(dev, non_blocking=True), yb.to(dev, non_blocking=True)
            opt.zero_grad(set_to_none=True)
            loss = lossf(model(xb), yb)
            loss.backward()
            opt.step()
            prof.step()
            if i >= 6:
                break
    export(prof, out, "trace_workers_pinned")


def pageable_pinned(out: Path, acts) -> None:
    import torch
    from torch.profiler import profile, schedule

    n = 16 << 20  # 64 MiB of fp32
    pageable = torch.randn(n)
    pinned = torch.randn(n).pin_memory()
    dst = torch.empty(n, device="cuda")
    torch.cuda.synchronize()
    order = [pageable, pageable] + [pageable] * 3 + [pinned] + [pageable] * 3 + [pinned]  # 2 unprofiled, then 6 + 2
    with profile(activities=acts, schedule=schedule(wait=1, warmup=1, active=8, repeat=1)) as prof:
        for src in order:
            dst.copy_(src, non_blocking=True)
            dst.mul_(0.5)
            torch.cuda.synchronize()
            prof.step()
    export(prof, out, "trace_h2d_pageable_pinned")


def cuda_graph(out: Path, acts) -> None:
    import torch
    from torch.profiler import profile

    x = torch.randn(1 << 20, device="cuda")

    def step(t):
        for _ in range(40):
            t = t * 1.0001 + 0.5
        return t

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step(x)
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = step(x)
    torch.cuda.synchronize()
    with profile(activities=acts) as prof:
        for _ in range(20):
            g.replay()
        torch.cuda.synchronize()
    del y
    export(prof, out, "trace_cuda_graph")


def item_heavy(out: Path, acts) -> None:
    import torch
    from torch.profiler import profile, schedule

    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    torch.cuda.synchronize()
    hist = []
    with profile(activities=acts, schedule=schedule(wait=1, warmup=1, active=6, repeat=1)) as prof:
        for _ in range(8):
            y = (a @ w) @ w
            loss = y.float().mean()
            hist.append(loss.item())  # the host waits for both matmuls here
            time.sleep(0.002)  # logging / metrics on the host
            prof.step()
    export(prof, out, "trace_item_heavy")


def streams_sync(out: Path, acts) -> str:
    import torch
    from torch.profiler import profile

    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    big = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    small = torch.randn(1 << 20, device="cuda")

    def rounds(n):
        nonlocal big
        for _ in range(n):
            with torch.cuda.stream(s1):
                for _ in range(4):
                    big = (big @ big).clamp_(-1, 1)
            s2.wait_stream(s1)
            with torch.cuda.stream(s2):
                for _ in range(8):
                    small.mul_(0.999)
            s1.wait_stream(s2)

    rounds(1)
    torch.cuda.synchronize()
    kw, how = {}, "without cuda_sync events"
    try:
        from torch._C._profiler import _ExperimentalConfig

        kw["experimental_config"] = _ExperimentalConfig(enable_cuda_sync_events=True)
        how = "enable_cuda_sync_events=True"
    except (ImportError, TypeError) as exc:
        log(f"no enable_cuda_sync_events in this PyTorch ({exc}); recording without it")
    def record(kwargs):
        with profile(activities=acts, **kwargs) as prof:
            rounds(20)
            torch.cuda.synchronize()
        return prof

    try:
        prof = record(kw)
    except (RuntimeError, TypeError, ValueError) as exc:
        log(f"profiling with {how} failed ({type(exc).__name__}: {exc}); recording without it")
        how = "without cuda_sync events"
        prof = record({})
    export(prof, out, "trace_streams_sync")
    return how


def main() -> int:
    if len(sys.argv) != 2:
        sys.stderr.write("usage: python3 benchmarks/make_trace_cases.py OUT_DIR\n")
        return 2
    out = Path(sys.argv[1]).resolve()
    out.mkdir(parents=True, exist_ok=True)
    import torch
    from torch.profiler import ProfilerActivity

    acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    info = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "gpu": torch.cuda.get_device_name(0),
            "torch": torch.__version__, "torch_cuda": torch.version.cuda, "python": sys.version.split()[0], "cases": {}}
    ok = True
    for fn in (workers_pinned, pageable_pinned, cuda_graph, item_heavy, streams_sync):
        t0 = time.perf_counter()
        try:
            note = fn(out, acts)
            info["cases"][fn.__name__] = {"ok": True, "seconds": round(time.perf_counter() - t0, 1), "note": note}
        except Exception as exc:  # noqa: BLE001 - one failed case must not lose the others
            ok = False
            log(f"{fn.__name__} failed: {type(exc).__name__}: {exc}")
            info["cases"][fn.__name__] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    (out / "cases.json").write_text(json.dumps(info, indent=2) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
