"""d2h_sync: each step copies a result to the host with ``.cpu()`` and digests it in Python.

Planted cause ``host_sync``. A step's GPU work (four bf16 4096^3 matmuls with tanh, then a few
elementwise passes over a 128 MiB fp32 buffer and a row-wise abs-max: about 1.3 ms on an
H100, two thirds of it GEMM) ends in a 4096-float statistic. The host copies it with
``.cpu()``, which waits for the whole step, then digests the values in Python (a histogram
and moments, then holding the CPU until a calibrated time is up: shorter than the GPU work less
the host's time to launch it, see calibration; a held time, not a count of Python operations, so
the core's speed does not move it) before it launches the next step. The GPU has nothing queued while the host digests: the gap after each sync is the
sync's, since without it the host would have digested while the GPU computed.

Fixed twin (remedy ``remove_syncs``): the statistic is copied with
``copy_(non_blocking=True)`` into one of two pinned host buffers and an event is recorded;
the host digests step i-1's values at step i, after waiting on that step's event (which has
finished or is about to: the GPU then still holds step i's work). The host digest and the
GPU work overlap. Same values, same digests in the same order: the sum of the digests is
compared by the runner with the planted run's (it must be equal), and in-process the last
statistic is fetched again with a plain ``.cpu()`` and compared.

Calibration: without ``--host-units`` the program times the step's GPU work G and the host's
time L to launch it, and picks the units so that the digest takes ``--ratio`` (0.5) times G - L:
in the twin the digest then fits beside the GPU work (the step is the GPU's, and the sync was the
whole of what held it back), and in the planted program the whole gap after the sync (the
``.tolist()``, the digest and the next step's first launches, about 0.25 ms more under the
profiler) is shorter than the sync's wait, so all of it is the sync's. (At 0.8 the gap outgrew the
wait, and the twin, 2026-12-07 on an H100, gained more than the wait: the host's launches after a
blocking ``.cpu()`` ran 1.5x slower than the twin's, 400 against 260 us a step, a cost of the sync
that the trace cannot tell apart from launch time.)
It reports ``calib_args`` and the runner passes them to every later run, so every run digests the
same amount.
"""

from __future__ import annotations

import time

import diag_common as dc

NAME = "d2h_sync"
UNIT = 256


def add(ap):
    ap.add_argument("--host-units", type=int, default=None, help="digest units per step (default: calibrate)")
    ap.add_argument("--ratio", type=float, default=0.5, help="calibration target: host digest / (GPU work - launch time)")
    ap.add_argument("--n", type=int, default=4096, help="matrix size (default 4096)")


def digest(vals, units: int) -> float:
    """A histogram and moments of the values in plain Python, holding the host ``units`` x
    :data:`diag_common.HOST_UNIT_S` in all (the same wall time on a fast or a slow core)."""
    t0 = time.perf_counter()
    n = len(vals)
    hist = [0] * 32
    s1 = s2 = 0.0
    for v in vals[: min(n, UNIT)]:
        b = int(v * 7.99)
        b = 31 if b > 31 else (0 if b < 0 else b)
        hist[b] += 1
        s1 += v
        s2 += v * v
    dc.hold_host(t0, units * dc.HOST_UNIT_S)
    return s1 + 1e-3 * s2 + sum(k * c for k, c in enumerate(hist)) + units


def main() -> None:
    a = dc.options(NAME, __doc__, add)
    import torch

    dev, n = "cuda", a.n

    def init_state():
        torch.manual_seed(0)
        ws = [(torch.randn(n, n, device=dev) / n**0.5).to(torch.bfloat16) for _ in range(4)]
        h = torch.randn(n, n, device=dev).to(torch.bfloat16)
        e = torch.randn(2, n, n, device=dev)
        return ws, h, e

    def gpu_work(ws, h, e):
        for w in ws:
            h = torch.tanh(h @ w)
        e.mul_(0.95).add_(h)
        e.clamp_(-4.0, 4.0)
        return h, e[0].abs().amax(dim=1)

    calib = None
    units = a.host_units
    if units is None:
        ws, h, e = init_state()
        x_s = dc.gpu_time(lambda: gpu_work(ws, h, e), reps=5)
        l_s = dc.launch_time(lambda: gpu_work(ws, h, e), reps=5)
        vals = gpu_work(ws, h, e)[1].cpu().tolist()
        u_s = dc.HOST_UNIT_S
        units = max(1, round(a.ratio * max(x_s - l_s, 0.0) / u_s))
        calib = {"gpu_work_s": x_s, "launch_s": l_s, "unit_s": u_s, "units": units}
    ws, h, e = init_state()  # calibration touched the state: start again from the seed
    gpu_work(ws, h.clone(), e.clone())  # cuBLAS initialisation outside the steps
    torch.cuda.synchronize()

    pinned = [torch.empty(n, pin_memory=True) for _ in range(2)]
    events = [torch.cuda.Event() for _ in range(2)]
    total = 0.0
    steps = dc.Steps(a)
    last_stat = None
    for i in steps:
        h, stat = gpu_work(ws, h, e)
        last_stat = stat
        if not a.fixed:
            total += digest(stat.cpu().tolist(), units)  # the planted sync
        else:
            pinned[i % 2].copy_(stat, non_blocking=True)
            events[i % 2].record()
            if i > 0:
                events[(i - 1) % 2].synchronize()  # step i-1's copy: the GPU now holds step i's work
                total += digest(pinned[(i - 1) % 2].tolist(), units)
    last = a.warmup + a.steps - 1
    if a.fixed:
        events[last % 2].synchronize()
        total += digest(pinned[last % 2].tolist(), units)
        check = dc.check_tensors(pinned[last % 2], last_stat.cpu(), 0.0, "last statistic against .cpu()")
    else:
        check = "planted: values read with .cpu()"
    extra = {"host_units": units, **dc.calibration_fields(calib, units)}
    res = steps.result(NAME, a.fixed, check, checksum=total, checksum_rtol=1e-9, **extra)
    dc.emit(res)


if __name__ == "__main__":
    main()
