"""stream_wait: stream B's main work waits on a long stream-A kernel it does not need yet.

Planted cause ``dependency_wait``. Two streams. Each step:

- stream A runs a running-statistics scan over the previous step's output (a decayed
  running max down the rows of 256 columns: a recurrence over rows, so it runs as 2 blocks
  of 128 columns, about as long as B's main work: see calibration), then records event A;
- stream B runs its main work, a chain of elementwise passes over a 64 MiB fp32 state
  (memory-bound, many small blocks), which does not read the statistic, and then a short
  tail that scales the state by the statistic (the only op that needs stream A's result);
  it records event B, which the next step's scan waits for (it reads this step's output).

In the planted version stream B calls ``wait_event(A)`` *before* its main work, so the main
work (queued by the host well ahead: the host never synchronises) starts only when the
2-block scan ends, although 130 SMs were free. The GPU is never fully idle (the scan runs),
but stream B's queued work waits milliseconds on the other stream's event every step.

Fixed twin (remedy ``reorder_dependency``): the same ops in the same order on the same
streams, with ``wait_event(A)`` moved to just before the tail that reads the statistic. The
main work runs beside the scan. Same values: in-process, the whole run is replayed serially
on one stream and the accumulated result compared (exact up to 1e-6); the runner compares
the checksum with the planted run's.

Calibration: without ``--scan-rows`` the program times B's main work and the scan over 4096
rows and picks rows (and passes over them) so that the scan takes as long as the main work;
it reports ``calib_args`` and the runner passes them to every later run.
"""

from __future__ import annotations

import math

import diag_common as dc

NAME = "stream_wait"
COLS = 128        # columns per scan block; 2 blocks scan 256 columns
DECAY = 0.999


def add(ap):
    ap.add_argument("--scan-rows", type=int, default=None, help="rows the scan walks (default: calibrate)")
    ap.add_argument("--scan-passes", type=int, default=1, help="passes of the scan over its rows")
    ap.add_argument("--chain", type=int, default=12, help="elementwise rounds in B's main work (3 ops each)")
    ap.add_argument("--n", type=int, default=4096, help="the state is n x n fp32 (default 4096: 64 MiB)")


def build_kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def running_max_scan(y_ptr, out_ptr, rows, row_stride, passes, decay, C: tl.constexpr):
        pid = tl.program_id(0)
        cols = pid * C + tl.arange(0, C)
        m = tl.zeros([C], dtype=tl.float32)
        for _p in range(passes):
            for r in range(rows):
                v = tl.load(y_ptr + r * row_stride + cols)
                m = tl.maximum(m * decay, tl.abs(v))
        tl.store(out_ptr + cols, m)

    return running_max_scan


def main() -> None:
    a = dc.options(NAME, __doc__, add)
    import torch

    scan = build_kernel()
    dev = "cuda"
    N = a.n
    if N < 2 * COLS:
        raise SystemExit(f"--n must be at least {2 * COLS}")

    def init_state():
        torch.manual_seed(0)
        h = torch.randn(N, N, device=dev)
        ybuf = [torch.randn(N, N, device=dev) for _ in range(2)]
        sbuf = [torch.zeros(2 * COLS, device=dev) for _ in range(2)]
        acc = torch.zeros(N, device=dev, dtype=torch.float64)
        return h, ybuf, sbuf, acc

    def main_work(h):
        for _ in range(a.chain):
            h = torch.tanh(h * 1.01 + 0.01)
        return h

    def run_scan(src, dst, rows, passes):
        scan[(2,)](src, dst, rows, N, passes, DECAY, C=COLS)

    def tail(h, s, acc):
        scale = 1.0 / (1.0 + s.mean())
        acc += (h * scale).sum(0, dtype=torch.float64)

    rows, passes = a.scan_rows, a.scan_passes
    calib = None
    if rows is None:
        h, ybuf, sbuf, acc = init_state()
        main_s = dc.gpu_time(lambda: main_work(h), reps=5)
        scan_s = dc.gpu_time(lambda: run_scan(ybuf[0], sbuf[0], N, 1), reps=3)
        want = N * main_s / scan_s  # rows the scan must walk to last as long as the main work
        passes = max(1, math.ceil(want / N))
        rows = max(16, min(N, round(want / passes)))
        calib = {"main_work_s": main_s, "scan_4096_rows_s": scan_s, "rows": rows, "passes": passes}

    def step(i, h, ybuf, sbuf, acc, sa, sb, ev_a, ev_b, fixed):
        """One step on two streams (sa is sb for the serial reference, with no events)."""
        with torch.cuda.stream(sa):
            if ev_b is not None and i > 0:
                sa.wait_event(ev_b[(i - 1) % 2])  # the scan reads the previous step's output
            run_scan(ybuf[(i - 1) % 2], sbuf[i % 2], rows, passes)
            if ev_a is not None:
                ev_a[i % 2].record(sa)
        with torch.cuda.stream(sb):
            if ev_a is not None and not fixed:
                sb.wait_event(ev_a[i % 2])  # planted: too early, the main work does not need it
            h = main_work(h)
            ybuf[i % 2].copy_(h)
            if ev_a is not None and fixed:
                sb.wait_event(ev_a[i % 2])  # fixed: just before the one op that reads the statistic
            tail(h, sbuf[i % 2], acc)
            if ev_b is not None:
                ev_b[i % 2].record(sb)
        return h

    sa, sb = torch.cuda.Stream(), torch.cuda.Stream()
    ev_a = [torch.cuda.Event() for _ in range(2)]
    ev_b = [torch.cuda.Event() for _ in range(2)]
    h, ybuf, sbuf, acc = init_state()
    run_scan(ybuf[0], sbuf[0], rows, passes)  # compile (this specialisation) outside the steps
    main_work(h)
    sbuf[0].zero_()
    torch.cuda.synchronize()
    steps = dc.Steps(a)
    for i in steps:
        h = step(i, h, ybuf, sbuf, acc, sa, sb, ev_a, ev_b, a.fixed)
    got = acc.clone()

    # the serial reference: the same ops on one stream, no events
    total = a.warmup + a.steps
    h, ybuf, sbuf, acc = init_state()
    cur = torch.cuda.current_stream()
    for i in range(total):
        h = step(i, h, ybuf, sbuf, acc, cur, cur, None, None, a.fixed)
    torch.cuda.synchronize()
    check = dc.check_tensors(got, acc, 1e-6, "accumulated tails against a serial replay")
    extra = {"scan_rows": rows, "scan_passes": passes, "chain": a.chain}
    if calib is not None:
        extra["calib"] = calib
        extra["calib_args"] = ["--scan-rows", str(rows), "--scan-passes", str(passes)]
    res = steps.result(NAME, a.fixed, check, checksum=float(got.abs().sum()), checksum_rtol=1e-6, **extra)
    dc.emit(res)


if __name__ == "__main__":
    main()
