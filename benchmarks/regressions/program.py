"""program: one realistic training loop, and ten ways to make it slower (``--regress NAME``).

A small vision transformer (ViT) classifier trained on synthetic images:

- data: a map-style Dataset whose sample ``i`` is made by numpy on the CPU (a seeded 3 x S x S
  normal image, ``--passes`` tanh "augmentation" passes, a label, and the sample's contrast and
  brightness jitter), batched by a ``DataLoader`` with ``--workers`` (8) persistent workers and
  pinned memory, copied with ``non_blocking=True``;
- the step: per-step host bookkeeping (``--book-ms``, 1 ms of Python: schedule, metrics), the
  batch's jitter applied on the GPU, then the ViT (patches of P x P pixels as tokens, ``--depth``
  pre-LN blocks of fused ``scaled_dot_product_attention`` and a GELU MLP) under bf16 autocast, its
  last block, final LayerNorm and head in fp32 with TF32 (the final layers kept in full precision),
  cross-entropy, backward, fused AdamW;
- the loss is logged without a sync: a side stream copies it into pinned memory after the step
  and queues a host function (the log writer, ``--log-ms`` of I/O: a sleep) that reads it; the
  main stream never waits for the logger.

Sized (defaults) for about 10 ms a step on an H100, the GPU busy most of it. Each ``--regress``
plants exactly one change (benchmarks/regressions/README.md: the cause ``gpuwhy diff`` should
name for each, and why):

=================  ==========================================================================
``sync_item``      the loss logged the simple way: ``loss.item()`` at the end of every step, then
                   the log write on the main thread (a sync: the write, the next step's
                   bookkeeping and its first launches then run with the GPU idle)
``pageable``       ``pin_memory=False``: batches copied from pageable memory (the same
                   ``non_blocking=True`` copy, which from pageable memory the driver stages
                   through a pinned buffer after a stream sync, holding the host)
``no_bf16``        autocast off: the whole model in fp32 (TF32 still on)
``no_tf32``        TF32 off: the fp32 tail (last block and head) on the FP32 cores
``loader_workers`` ``num_workers=0``: every sample made on the main process
``split_fused``    attention as ``softmax(Q K^T / sqrt(d)) V`` in eager pieces, not the fused SDPA
``side_stream_wait``  the main stream waits for the previous step's logger (its host function)
                   at the start of every step: the GPU idles with the step's work queued
``host_work``      ``--host-ms`` (15) of extra Python per step (metrics serialised to JSON)
``micro_batches``  the batch run as ``--micro`` (8) micro-batches with gradient accumulation:
                   8x the launches, each kernel an eighth of the size
``cpu_op``         the jitter applied on the CPU in the main process, image by image and channel
                   by channel, on the pinned batch before its copy (CPU-tensor ops, not GPU ones)
=================  ==========================================================================

Every variant computes the same training: the same batches in the same order, the same model,
optimizer and steps; ``checksum`` is how far the weights moved (the sum of ``|p - p0|``, float64),
compared by the runner with the baseline's within ``checksum_rtol`` (precision and summation order
move it a little; a skipped step moves it by several %). In-process: every step's loss is logged
once and finite, and ``cpu_op`` checks its CPU jitter against the GPU's on the first batch.

Conventions of the diagnosis programs (benchmarks/diagnosis/programs/diag_common.py, imported):
``--steps``/``--warmup``, each step in ``record_function("ProfilerStep#i")``, one
``DIAG_RESULT {json}`` line. ``--cpu-smoke``: runs on the CPU with the CUDA calls stood in for
(benchmarks/diagnosis/cpu_smoke.py's shims; bf16 autocast on the CPU; the host function called in
place), to check shapes, API use and checksums on tiny sizes, never speed.
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DIAG = HERE.parent / "diagnosis"
sys.path.insert(0, str(DIAG / "programs"))
import diag_common as dc  # noqa: E402

NAME = "regressions"
#: The regressions ``--regress`` plants (one at a time); "none" is the baseline.
REGRESSIONS = ("sync_item", "pageable", "no_bf16", "no_tf32", "loader_workers", "split_fused", "side_stream_wait",
               "host_work", "micro_batches", "cpu_op")


def add(ap):
    ap.add_argument("--regress", default="none", choices=("none", *REGRESSIONS), help="the one regression to plant")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--image", type=int, default=160, help="images are 3 x S x S (default 160)")
    ap.add_argument("--patch", type=int, default=10, help="patch size P: (S/P)^2 tokens (default 10: 256)")
    ap.add_argument("--dim", type=int, default=1024, help="width (default 1024: GPU-bound; 512 was launch-bound)")
    ap.add_argument("--depth", type=int, default=8)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--classes", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=8, help="DataLoader workers (loader_workers: 0)")
    ap.add_argument("--passes", type=int, default=1, help="numpy tanh passes per sample (the Dataset's CPU cost)")
    ap.add_argument("--book-ms", type=float, default=1.0, help="per-step host bookkeeping, every variant (ms)")
    ap.add_argument("--log-ms", type=float, default=3.0, help="the loss logger's I/O per step, off the GPU's path (ms)")
    ap.add_argument("--host-ms", type=float, default=15.0, help="host_work: the extra Python per step (ms)")
    ap.add_argument("--micro", type=int, default=8, help="micro_batches: micro-batches per step")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--cpu-smoke", action="store_true", help="run on the CPU with CUDA stood in for (tiny sizes)")


def check_args(a) -> None:
    if a.image % a.patch or a.dim % a.heads or a.batch % a.micro or min(a.batch, a.depth, a.micro) < 1:
        dc.fail(f"sizes: --image {a.image} must be a multiple of --patch {a.patch}, --dim {a.dim} of --heads "
                f"{a.heads}, --batch {a.batch} of --micro {a.micro}; --depth at least 1")
    if a.depth < 2:
        dc.fail("--depth must be at least 2 (the last block runs in fp32)")


def host_busy(seconds: float, tag: int) -> int:
    """Real Python work (a metrics record serialised to JSON, over and over) for ``seconds`` of wall time;
    the GIL is let go between records (``time.sleep(0)``, as a write would), so the DataLoader's
    pin-memory thread is not starved. Returns the records made."""
    t0 = time.perf_counter()
    n = 0
    while time.perf_counter() - t0 < seconds:
        rec = {"step": tag, "n": n, "lr": 1e-3 * math.cos(0.01 * tag), "ema": [0.9 ** k for k in range(16)]}
        json.dumps(rec, sort_keys=True)
        n += 1
        time.sleep(0)
    return n


class Samples:
    """Map-style Dataset: sample ``i`` -> (3 x S x S float32 image, label, [contrast, brightness])."""

    def __init__(self, n: int, size: int, classes: int, passes: int) -> None:
        self.n, self.size, self.classes, self.passes = n, size, classes, passes

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        import numpy as np
        import torch

        rng = np.random.default_rng(1000 + i)
        img = rng.standard_normal((3, self.size, self.size), dtype=np.float32)
        for _ in range(self.passes):
            img = np.tanh(img * 1.1 + 0.01)
        jit = np.array([1.0 + 0.4 * (rng.random() - 0.5), 0.2 * (rng.random() - 0.5)], dtype=np.float32)
        return torch.from_numpy(img), int(rng.integers(self.classes)), torch.from_numpy(jit)


def jitter(x, jit):
    """Standardise each image's channels, then its contrast and brightness: ``(x - mean) / std * c + b``
    over a batch (B x 3 x S x S, float32; mean and std per image and channel; ``jit`` B x 2: c, b)."""
    m = x.mean(dim=(2, 3), keepdim=True)
    s = x.std(dim=(2, 3), keepdim=True)
    return (x - m) / s * jit[:, 0].view(-1, 1, 1, 1) + jit[:, 1].view(-1, 1, 1, 1)


def jitter_cpu_in_place(x, jit) -> None:
    """:func:`jitter` image by image and channel by channel on a CPU batch, in place (the ``cpu_op``
    regression: 6 CPU-tensor ops per channel, 1,152 for a batch of 64)."""
    for j in range(x.shape[0]):
        c, b = float(jit[j, 0]), float(jit[j, 1])
        for xc in x[j]:
            m, s = xc.mean(), xc.std()
            xc.sub_(m).div_(s).mul_(c).add_(b)


def build_model(a, fused_attention: bool, amp_device: str):
    import torch
    import torch.nn.functional as F
    from torch import nn

    heads, scale = a.heads, (a.dim // a.heads) ** -0.5

    class Block(nn.Module):
        def __init__(self, d: int) -> None:
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, heads, d // heads).permute(2, 0, 3, 1, 4)
            if fused_attention:
                o = F.scaled_dot_product_attention(q, k, v)
            else:  # split_fused: the same maths in eager pieces, the T x T scores in memory
                o = ((q @ k.transpose(-2, -1)) * scale).softmax(dim=-1) @ v
            x = x + self.proj(o.transpose(1, 2).reshape(b, t, d))
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    class ViT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            p, n = a.patch, (a.image // a.patch) ** 2
            self.embed = nn.Linear(3 * p * p, a.dim)
            self.pos = nn.Parameter(torch.randn(1, n, a.dim) * 0.02)
            self.blocks = nn.ModuleList(Block(a.dim) for _ in range(a.depth))
            self.norm, self.head = nn.LayerNorm(a.dim), nn.Linear(a.dim, a.classes)

        def forward(self, x):
            b, p, g = x.shape[0], a.patch, a.image // a.patch
            x = x.view(b, 3, g, p, g, p).permute(0, 2, 4, 1, 3, 5).reshape(b, g * g, 3 * p * p)
            h = self.embed(x) + self.pos
            for blk in self.blocks[:-1]:
                h = blk(h)
            with torch.autocast(amp_device, enabled=False):  # the tail in fp32 (TF32 for its matmuls)
                h = self.blocks[-1](h.float())
                return self.head(self.norm(h).mean(dim=1))

    return ViT()


class Logger:
    """The loss log without a sync: after each step a side stream copies the loss into pinned memory and
    queues a host function that "writes" it (``log_s`` of sleep, standing in for I/O) and keeps the value.
    ``done[i]`` is an event recorded on the side stream after step ``i``'s host function."""

    def __init__(self, torch, total: int, log_s: float, smoke: bool) -> None:
        self.torch, self.log_s, self.smoke = torch, log_s, smoke
        self.values: list[float | None] = [None] * total
        self.slots = torch.zeros(total, pin_memory=not smoke)
        self.slots_np = self.slots.numpy()  # the host function reads numpy: no torch call off the main thread
        self.side = torch.cuda.Stream()
        self.done = [torch.cuda.Event() for _ in range(total)]
        self.keep: list = []  # the losses the side stream still reads, and the host functions queued
        self._launch = self._launcher()

    def _launcher(self):
        if self.smoke:
            return lambda fn: fn()  # the CPU stand-in: the host function runs in place
        torch = self.torch
        try:
            import cupy  # as benchmarks/diagnosis/programs/stream_wait.py: proven on the GPU machine

            with cupy.cuda.Device(torch.cuda.current_device()):
                ext = cupy.cuda.ExternalStream(self.side.cuda_stream)
            return lambda fn: ext.launch_host_func(lambda _arg: fn(), None)
        except ImportError:
            import ctypes

            lib = ctypes.CDLL("libcuda.so.1")
            hostfn = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
            lib.cuLaunchHostFunc.argtypes = [ctypes.c_void_p, hostfn, ctypes.c_void_p]
            lib.cuLaunchHostFunc.restype = ctypes.c_int
            stream = ctypes.c_void_p(self.side.cuda_stream)

            def launch(fn):
                cb = hostfn(lambda _p: fn())
                self.keep.append(cb)
                rc = lib.cuLaunchHostFunc(stream, cb, None)
                if rc != 0:
                    raise RuntimeError(f"cuLaunchHostFunc failed: CUresult {rc}")

            return launch

    def _write(self, i: int) -> None:
        time.sleep(self.log_s)
        self.values[i] = float(self.slots_np[i])

    def log_async(self, i: int, loss) -> None:
        torch = self.torch
        end = torch.cuda.Event()
        end.record()
        with torch.cuda.stream(self.side):
            self.side.wait_event(end)
            self.slots[i:i + 1].copy_(loss.detach().float().reshape(1), non_blocking=True)
            self._launch(lambda: self._write(i))
            self.done[i].record(self.side)
        self.keep.append(loss)

    def log_sync(self, i: int, loss) -> None:
        """sync_item: ``loss.item()``, then the same write, on the main thread."""
        self.values[i] = float(loss.item())
        time.sleep(self.log_s)


def main() -> None:
    a = dc.options(NAME, __doc__, add, steps=10, warmup=3)
    check_args(a)
    if a.cpu_smoke:
        sys.path.insert(0, str(DIAG))
        import cpu_smoke

        cpu_smoke.install_shims(1)
    import torch
    import torch.nn.functional as F

    r = a.regress
    smoke = a.cpu_smoke
    dev, amp_device = ("cpu", "cpu") if smoke else ("cuda", "cuda")
    torch.set_float32_matmul_precision("highest" if r == "no_tf32" else "high")  # "high": TF32 matmuls
    torch.backends.cudnn.allow_tf32 = r != "no_tf32"
    total = a.warmup + a.steps
    workers = 0 if r == "loader_workers" else a.workers
    pinned = r != "pageable" and not smoke
    ds = Samples(total * a.batch, a.image, a.classes, a.passes)
    loader = torch.utils.data.DataLoader(ds, batch_size=a.batch, shuffle=False, num_workers=workers,
                                         pin_memory=pinned, persistent_workers=workers > 0, drop_last=True)
    torch.manual_seed(0)
    model = build_model(a, fused_attention=r != "split_fused", amp_device=amp_device).to(dev)
    p0 = [p.detach().clone() for p in model.parameters()]
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=0.05, fused=True)
    log = Logger(torch, total, a.log_ms * 1e-3, smoke)
    micro = a.micro if r == "micro_batches" else 1
    torch.cuda.synchronize()

    it = iter(loader)
    steps = dc.Steps(a)
    last = None
    for i in steps:
        host_busy(a.book_ms * 1e-3, i)  # schedule, metric averages, a progress line: every variant
        if r == "side_stream_wait" and i > 0:
            torch.cuda.current_stream().wait_event(log.done[i - 1])  # planted: waits for the previous logger
        x, y, jit = next(it)
        if r == "cpu_op":
            if i == 0:
                last = (x.clone(), jit.clone())  # the first batch (a warm-up step), for the check after the loop
            jitter_cpu_in_place(x, jit)  # planted: on the CPU, on the pinned batch, before the copy
        x = x.to(dev, non_blocking=True)
        y = y.to(dev, non_blocking=True)
        if r != "cpu_op":
            jit = jit.to(dev, non_blocking=True)
            x = jitter(x, jit)
        loss_total = torch.zeros((), device=dev)
        for xs, ys in zip(x.chunk(micro), y.chunk(micro)):
            with torch.autocast(amp_device, dtype=torch.bfloat16, enabled=r != "no_bf16"):
                loss = F.cross_entropy(model(xs), ys) / micro
            loss.backward()
            loss_total = loss_total + loss.detach()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if r == "sync_item":
            log.log_sync(i, loss_total)
        else:
            log.log_async(i, loss_total)
        if r == "host_work":
            host_busy(a.host_ms * 1e-3, i)  # planted: per-step metrics work in Python

    checks = []
    if any(v is None or not math.isfinite(v) for v in log.values):
        dc.fail(f"the loss log: {sum(v is None for v in log.values)} of {total} steps not logged, or not finite")
    checks.append(f"{total} losses logged, finite")
    if last is not None:
        x0, j0 = last
        want = jitter(x0.to(dev), j0.to(dev)).cpu()
        jitter_cpu_in_place(x0, j0)
        checks.append(dc.check_tensors(x0, want, 1e-4, "CPU jitter of the first batch against the GPU's"))
    moved = float(sum((p.detach().double() - q.double()).abs().sum() for p, q in zip(model.parameters(), p0)))
    del it, loader  # the workers stop before the interpreter exits
    res = steps.result(NAME, False, "; ".join(checks), checksum=moved, checksum_rtol=2e-2, regress=r,
                       loss_sum=float(sum(log.values)), batch=a.batch, tokens=(a.image // a.patch) ** 2,
                       dim=a.dim, depth=a.depth, workers=workers, micro=micro, host_ms=a.host_ms if r == "host_work"
                       else 0.0, book_ms=a.book_ms, log_ms=a.log_ms, cpu_smoke=smoke)
    dc.emit(res)


if __name__ == "__main__":
    main()
