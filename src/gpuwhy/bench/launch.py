"""Launch overhead: an empty kernel (``microbench/launch.cu``) measured four ways.

1. round trip: launch, then synchronize the stream; host clock per pair.
2. submission: back-to-back launches with no synchronization; host time per
   launch (the rate a Python program can submit work, Python included).
3. event-timed: CUDA events around one launch; the GPU-side duration a user's
   smallest kernel pays. The events and the launch are queued behind a short
   spin kernel, so the host's time to submit them (several microseconds from
   Python) is not counted. The classify model takes this one as its launch overhead.
4. graph: one CUDA graph of many launches, event-timed, divided by their number.

All four report the median of their repetitions (seconds per launch).

The one bench module that imports cuda itself: it calls cuda.core's ``launch`` (and,
for ``submit_path="cuLaunchKernel"``, the driver's ``cuLaunchKernel``) directly rather
than through :mod:`gpuwhy.engine.context`, because the cost of that call is what it
measures; a wrapper would add its own.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from .results import LaunchOverhead


@dataclass(frozen=True)
class EmptyLaunch:
    """The case: ``empty_kernel`` in launch.cu, one block of one thread, no arguments."""

    source: str = "launch.cu"
    kernel: str = "empty_kernel"
    grid: int = 1
    block: int = 1


def measure_launch_overhead(ctx, *, quick: bool = False, graph_kernels: int = 1000, submit_path: str = "cuda.core.launch") -> LaunchOverhead:
    """Measure :class:`LaunchOverhead` on an open engine context.

    Args:
        quick: fewer repetitions (for ``bench --quick``).
        graph_kernels: launches captured in the graph.
        submit_path: ``cuda.core.launch`` (default) or ``cuLaunchKernel`` (the
            driver call through cuda.bindings, with the function handle and the
            empty argument list prepared once) for the submission figure.

    Raises:
        MeasurementError: a CUDA error (through the context).
    """
    from cuda.core import launch

    from ..engine.timing import summarize, time_gpu

    case = EmptyLaunch()
    k = ctx.kernel(case.source, case.kernel)
    cfg = ctx.config(case.grid, case.block)
    s = ctx.stream
    for _ in range(100):
        launch(s, cfg, k)
    ctx.sync("warming up the empty kernel")

    # 1. launch + synchronize
    n_rt = 100 if quick else 300
    rt = []
    for _ in range(n_rt):
        t0 = time.perf_counter()
        launch(s, cfg, k)
        s.sync()
        rt.append(time.perf_counter() - t0)
    round_trip = summarize(rt)

    # 2. back-to-back submission
    submit_one = _submitter(ctx, k, cfg, submit_path)
    batch, batches = (500, 5) if quick else (1000, 9)
    sub = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(batch):
            submit_one()
        sub.append((time.perf_counter() - t0) / batch)
        s.sync()
    submit = summarize(sub)

    # 3. event-timed single launch, queued behind a spin so the host's submission gap stays out
    event = time_gpu(s, ctx.events, lambda i: launch(s, cfg, k), warmup=10, reps=100 if quick else 300,
                     pad=ctx.spin, pad_below_s=float("inf"))

    # 4. per kernel inside a graph
    graph = None
    gb = s.create_graph_builder()
    try:
        gb.begin_building()
        for _ in range(graph_kernels):
            launch(gb, cfg, k)
        gb.end_building()
        graph = gb.complete()
        graph.upload(s)
        g = time_gpu(s, ctx.events, lambda i: graph.launch(s), warmup=2, reps=5 if quick else 15)
        graph_per_kernel = g.scaled(graph_kernels)
    finally:
        ctx.sync("running the launch graph")
        if graph is not None:
            graph.close()
        gb.close()
    return LaunchOverhead(round_trip, submit, event, graph_per_kernel, graph_kernels, submit_path)


def _submitter(ctx, kernel, cfg, path: str):
    """A no-argument callable that enqueues one empty launch by ``path``."""
    s = ctx.stream
    if path == "cuLaunchKernel":
        from cuda.bindings import driver

        from ..engine.context import check

        fn = driver.CUfunction(int(kernel.handle))
        h = s.handle
        call = driver.cuLaunchKernel
        check(call(fn, 1, 1, 1, 1, 1, 1, 0, h, 0, 0), "cuLaunchKernel of the empty kernel")

        def one():
            call(fn, 1, 1, 1, 1, 1, 1, 0, h, 0, 0)

        return one
    from cuda.core import launch

    def one():
        launch(s, cfg, kernel)

    return one
