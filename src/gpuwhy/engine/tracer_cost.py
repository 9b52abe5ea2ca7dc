"""What torch.profiler costs the host per recorded event, measured in this process before `gpuwhy run`
starts the program (CUDA and PyTorch; no figure is assumed).

A tracer records each operator and API call on the host, and that costs host time: a launch-bound
loop of small kernels runs slower traced than alone. Idle time the trace shows while the GPU waited
on the host is partly the tracer's, and a sync's wait is shorter in the trace than alone (the host
reached it later). The timeline analysis takes the cost per event from the trace (key
:data:`~gpuwhy.importers.timeline.activities.TRACER_KEY`) and allows for it (see
:func:`gpuwhy.importers.timeline.gaps.sync_lead` and :func:`gpuwhy.verdict.engine.floor_after`).

How: ``LOOP`` one-element ``add_`` launches, timed on the host (``time.perf_counter``, no sync inside:
the GPU keeps up with them) ``REPS`` times alone and ``REPS`` times under a profiler like the one that
will trace the program; the cost per event is the difference of the medians over the events that
profiler recorded per loop (counted as the analysis counts them: API calls and host ranges).
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Callable

#: Set to 1, `gpuwhy run` measures its tracer's cost; off by default: the measurement runs a profiler session
#: of its own before the program's, and on the H100 box of 2026-12-07 the traced launch-bound programs ran
#: slower after it (tiny_layers 2.1-2.5x its plain step against 1.7-1.8x without; not yet told apart from
#: the box being slower that day). Without the figure the ceilings take the trace as it is.
ENV = "GPUWHY_TRACER_COST"
#: Launches per timed loop, and timed loops per side (one more, untimed, warms each side up).
LOOP = 300
REPS = 7


def measure(make_profiler: Callable[[], object], count_events: Callable[[Path], int], loop: int = LOOP,
            reps: int = REPS) -> dict | None:
    """``{"event_us", "events", "plain_us", "traced_us", "loop"}``: the host time (us) the profiler
    ``make_profiler()`` adds per recorded event, the events it recorded per loop of ``loop`` launches
    (``count_events(trace)`` counts a written trace's as the analysis does), and the median host
    time (us) of a loop alone and traced. None unless :data:`ENV` is ``1``, or when anything fails (no
    CUDA, the profiler refuses): the run goes on without the figure.
    """
    if os.environ.get(ENV, "").strip() != "1":
        return None
    try:
        import torch

        x = torch.zeros(1, device="cuda")

        def timed() -> float:
            t0 = time.perf_counter()
            for _ in range(loop):
                x.add_(1.0)
            return time.perf_counter() - t0

        timed()
        torch.cuda.synchronize()
        plain = [timed() for _ in range(reps)]
        torch.cuda.synchronize()
        prof = make_profiler()
        prof.start()
        try:
            timed()
            traced = [timed() for _ in range(reps)]
            torch.cuda.synchronize()
        finally:
            prof.stop()
        with tempfile.TemporaryDirectory(prefix="gpuwhy-tracer-cost-") as d:
            path = Path(d) / "cost.json"
            prof.export_chrome_trace(str(path))
            events = count_events(path) / (reps + 1)
        if not events > 0:
            return None
        p, q = statistics.median(plain), statistics.median(traced)
        return {"event_us": max(q - p, 0.0) / events * 1e6, "events": events, "plain_us": p * 1e6,
                "traced_us": q * 1e6, "loop": loop}
    except Exception:  # noqa: BLE001 - a figure we could not measure is left out, never guessed
        return None


__all__ = ["ENV", "LOOP", "REPS", "measure"]
