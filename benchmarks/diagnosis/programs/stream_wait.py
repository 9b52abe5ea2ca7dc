"""stream_wait: stream B's main work waits on stream A's event, which waits on a host callback.

Planted cause ``dependency_wait``. Two streams. Each step:

- stream A waits on stream B's event of the previous step (its host-side producer needs the
  previous step's result), then runs a host function (``cudaLaunchHostFunc``, through CuPy on
  torch's stream) that takes ``--host-ms`` (3 ms) to return, standing in for what a real step
  waits on off the GPU (another rank's message, a host-side producer); then a small pinned
  host-to-device copy of the step's statistic, then it records event A;
- stream B runs its main work, a chain of elementwise passes over a 64 MiB fp32 state
  (memory-bound, about 1.6 ms on an H100), which does not read the statistic, then a short
  tail that scales the state by the statistic (the only op that needs stream A), then it
  records event B.

In the planted version stream B calls ``wait_event(A)`` *before* its main work. The host
queues every step far ahead (it never synchronises inside a step), so each step's main work
sits queued while nothing runs on the GPU: the host function holds stream A, and stream B
waits on A's event; and the next host function waits for this step's tail. A step is the
host function and then the main work, one after the other: the GPU idles about 3 ms a step
with work queued, a dependency wait on a host callback, not launch latency.

Fixed twin (remedy ``reorder_dependency``): the same ops in the same order on the same
streams, with ``wait_event(A)`` moved to just before the tail. The main work runs while the
host function holds stream A (both wait only for the previous step's tail); a step takes the
longer of the two, and what is left of the wait is the callback's time beyond the main work's. Same values: in-process the whole run is replayed serially on one stream without the
callbacks and the accumulated tails compared (exact up to 1e-6); the runner compares the
checksum with the planted run's.
"""

from __future__ import annotations

import time

import diag_common as dc

NAME = "stream_wait"


def add(ap):
    ap.add_argument("--host-ms", type=float, default=3.0, help="what the host function takes (ms)")
    ap.add_argument("--chain", type=int, default=12, help="elementwise rounds in B's main work (3 ops each)")
    ap.add_argument("--n", type=int, default=4096, help="the state is n x n fp32 (default 4096: 64 MiB)")


def main() -> None:
    a = dc.options(NAME, __doc__, add)
    import cupy
    import torch

    dev = "cuda"
    N = a.n
    host_s = a.host_ms * 1e-3

    def wait_host(_arg):  # runs on the driver's callback thread; touches no GPU state
        time.sleep(host_s)

    total = a.warmup + a.steps

    def init_state():
        torch.manual_seed(0)
        h = torch.randn(N, N, device=dev)
        stats = [torch.empty(1, device=dev) for _ in range(2)]
        # one pinned buffer per step: the host never refills one a queued copy still has to read
        host_stats = [torch.full((1,), 0.5 + 0.01 * (i % 7)).pin_memory() for i in range(total)]
        acc = torch.zeros(N, device=dev, dtype=torch.float64)
        return h, stats, host_stats, acc

    def main_work(h):
        for _ in range(a.chain):
            h = torch.tanh(h * 1.01 + 0.01)
        return h

    def tail(h, s, acc):
        acc += (h * (1.0 / (1.0 + s))).sum(0, dtype=torch.float64)

    def step(i, h, stats, host_stats, acc, sa, sb, ev_a, ev_b, fixed, callbacks):
        """One step on two streams (``sa is sb`` and no events/callbacks: the serial reference)."""
        with torch.cuda.stream(sa):
            if ev_b is not None and i > 0:
                sa.wait_event(ev_b[(i - 1) % 2])  # the producer needs the previous step's result
            if callbacks is not None:
                callbacks.launch_host_func(wait_host, None)
            stats[i % 2].copy_(host_stats[i], non_blocking=True)  # the step's statistic, known on the host
            if ev_a is not None:
                ev_a[i % 2].record(sa)
        with torch.cuda.stream(sb):
            if ev_a is not None and not fixed:
                sb.wait_event(ev_a[i % 2])  # planted: too early, the main work does not need it
            h = main_work(h)
            if ev_a is not None and fixed:
                sb.wait_event(ev_a[i % 2])  # fixed: just before the one op that reads the statistic
            tail(h, stats[i % 2], acc)
            if ev_b is not None:
                ev_b[i % 2].record(sb)
        return h

    sa, sb = torch.cuda.Stream(), torch.cuda.Stream()
    with cupy.cuda.Device(torch.cuda.current_device()):
        callbacks = cupy.cuda.ExternalStream(sa.cuda_stream)
    ev_a = [torch.cuda.Event() for _ in range(2)]
    ev_b = [torch.cuda.Event() for _ in range(2)]
    h, stats, host_stats, acc = init_state()
    main_work(h)  # the kernels' first launches outside the steps
    torch.cuda.synchronize()
    steps = dc.Steps(a)
    for i in steps:
        h = step(i, h, stats, host_stats, acc, sa, sb, ev_a, ev_b, a.fixed, callbacks)
    got = acc.clone()

    # the serial reference: the same ops on one stream, no events, no host functions
    h, stats, host_stats, acc = init_state()
    cur = torch.cuda.current_stream()
    for i in range(total):
        h = step(i, h, stats, host_stats, acc, cur, cur, None, None, a.fixed, None)
        torch.cuda.synchronize()
    check = dc.check_tensors(got, acc, 1e-6, "accumulated tails against a serial replay")
    res = steps.result(NAME, a.fixed, check, checksum=float(got.abs().sum()), checksum_rtol=1e-6,
                       host_ms=a.host_ms, chain=a.chain)
    dc.emit(res)


if __name__ == "__main__":
    main()
