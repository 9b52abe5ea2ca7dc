"""Shared scaffolding of the diagnosis programs: the options, the step loop, the result line.

Every program takes ``--fixed`` (run the fixed twin), ``--steps N`` (measured steps) and
``--warmup W`` (warm-up steps before them). Steps are numbered from 0 across warm-up and
measured steps, and each is wrapped in ``record_function(f"ProfilerStep#{i}")``, so
``gpuwhy run --steps N`` judges exactly the measured ones.

Timing (no ``torch.cuda.synchronize()`` inside any step):

- one synchronize after the last warm-up step, outside any step, so the measured stretch
  does not start with warm-up work still queued on the GPU;
- the wall clock (``time.perf_counter``) at the start of every measured step;
- one synchronize after the last step; the stretch runs from the first measured step's
  start to the end of that synchronize, so it holds all the GPU work of the N steps.

``step_s_mean`` = stretch / N is the figure to compare. ``step_s_median`` is the median of
the per-step times taken at step starts (the last one ends at the final synchronize); when
the host runs ahead of the GPU those are the host's times, not the GPU's, so use it only
as a second look.

At the end a program prints exactly one line ``DIAG_RESULT {json}``. Optional keys:
``checksum`` (a number the planted run and its twin must agree on within
``checksum_rtol``; the runner compares them), ``calib_args`` (options a calibrating program
measured; the runner passes them to every later run of that program, so all runs do the
same amount of work), ``check`` (what the program compared in-process, and how close).
"""

from __future__ import annotations

import argparse
import os
import json
import math
import statistics
import sys
import time


def options(name: str, doc: str, add=None, steps: int = 30, warmup: int = 5) -> argparse.Namespace:
    """Parse the common options (and the program's own, added by ``add(parser)``)."""
    first = doc.strip().splitlines()[0] if doc and doc.strip() else name
    ap = argparse.ArgumentParser(prog=name, description=first)
    ap.add_argument("--fixed", action="store_true", help="run the fixed twin (the remedy applied)")
    ap.add_argument("--steps", type=int, default=steps, help=f"measured steps (default {steps})")
    ap.add_argument("--warmup", type=int, default=warmup, help=f"warm-up steps before them (default {warmup})")
    if add is not None:
        add(ap)
    a = ap.parse_args()
    if a.steps < 1:
        ap.error("--steps must be at least 1")
    if a.warmup < 0:
        ap.error("--warmup must be 0 or more")
    a.program = name
    return a


def fail(msg: str) -> None:
    """A correctness check failed: say so on stderr and exit 1 (the runner records the row's error)."""
    sys.stderr.write(f"DIAG_CHECK_FAILED {msg}\n")
    sys.stderr.flush()
    raise SystemExit(1)


def rel_err(a: float, b: float) -> float:
    """|a - b| relative to the larger magnitude (0 when both are 0)."""
    scale = max(abs(a), abs(b))
    return 0.0 if scale == 0 else abs(a - b) / scale


def check_close(got: float, want: float, rtol: float, what: str) -> str:
    """Fail unless ``got`` is within ``rtol`` of ``want`` (both finite); return a one-line summary."""
    if not (math.isfinite(got) and math.isfinite(want)):
        fail(f"{what}: not finite (got {got!r}, want {want!r})")
    e = rel_err(got, want)
    if e > rtol:
        fail(f"{what}: relative error {e:.3g} > {rtol:g} (got {got!r}, want {want!r})")
    return f"{what}: relative error {e:.2g} <= {rtol:g}"


def check_tensors(got, want, rtol: float, what: str) -> str:
    """Fail unless the tensors agree: max |got - want| <= rtol * max |want| (a relative, norm-style test)."""
    import torch

    g, w = got.detach().double(), want.detach().double()
    if g.shape != w.shape:
        fail(f"{what}: shape {tuple(g.shape)} != {tuple(w.shape)}")
    if not bool(torch.isfinite(g).all()):
        fail(f"{what}: non-finite values")
    scale = float(w.abs().max())
    err = float((g - w).abs().max())
    e = err / scale if scale > 0 else err
    if e > rtol:
        fail(f"{what}: max error {err:.3g} = {e:.3g} of max |value| > {rtol:g}")
    return f"{what}: max error {e:.2g} of max |value| <= {rtol:g}"


class Steps:
    """The step loop: ``for i in steps: ...`` runs warm-up then measured steps, each a ProfilerStep range."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.warmup, self.steps = args.warmup, args.steps
        self.starts: list[float] = []
        self.t0: float | None = None
        self.t_end: float | None = None

    def measured(self, i: int) -> int:
        """The index of step ``i`` among the measured steps (negative during warm-up)."""
        return i - self.warmup

    def __iter__(self):
        import torch
        from torch.profiler import record_function

        nvtx = torch.cuda.nvtx if os.environ.get("DIAG_NVTX") == "1" else None  # steps a CUPTI trace sees
        for i in range(self.warmup + self.steps):
            if i == self.warmup:
                torch.cuda.synchronize()  # outside any step: the stretch starts with an idle GPU
                self.t0 = time.perf_counter()
            if i >= self.warmup:
                self.starts.append(time.perf_counter())
            if nvtx is not None:
                nvtx.range_push(f"ProfilerStep#{i}")
            with record_function(f"ProfilerStep#{i}"):
                yield i
            if nvtx is not None:
                nvtx.range_pop()
        torch.cuda.synchronize()  # after the last step: the stretch holds all its GPU work
        self.t_end = time.perf_counter()

    def result(self, name: str, fixed: bool, check: str, checksum: float | None = None,
               checksum_rtol: float | None = None, **extra) -> dict:
        if self.t0 is None or self.t_end is None or len(self.starts) != self.steps:
            raise RuntimeError("the step loop did not run to its end")
        ends = self.starts[1:] + [self.t_end]
        per = [b - a for a, b in zip(self.starts, ends)]
        stretch = self.t_end - self.t0
        d = {
            "program": name,
            "fixed": bool(fixed),
            "steps": self.steps,
            "warmup": self.warmup,
            "step_s_median": statistics.median(per),
            "stretch_s": stretch,
            "step_s_mean": stretch / self.steps,
            "check": check,
        }
        if checksum is not None:
            d["checksum"] = float(checksum)
            d["checksum_rtol"] = float(checksum_rtol if checksum_rtol is not None else 1e-6)
        d.update(extra)
        try:
            import torch

            d["torch"] = torch.__version__
            d["device"] = torch.cuda.get_device_name(0)
        except Exception:  # noqa: BLE001 - the figures matter more than the labels
            pass
        return d


def emit(result: dict) -> None:
    """Print the one DIAG_RESULT line (flushed)."""
    sys.stdout.write("DIAG_RESULT " + json.dumps(result, sort_keys=True) + "\n")
    sys.stdout.flush()


#: The wall time of one unit of the host work the host-bound programs plant (s): each unit does a little
#: real Python and then holds the CPU until its time is up, so a step's host work takes the same wall
#: time however fast this machine's cores run today (their speed moved by half between runs on the
#: H100 box), under the profiler or not.
HOST_UNIT_S = 50e-6


def calibration_fields(calib: dict | None, units: int) -> dict:
    """The result's ``calib`` (what this run measured to calibrate) and ``calib_args`` (the
    ``--host-units`` every later run is given) when it calibrated; {} when it was given the units."""
    return {} if calib is None else {"calib": calib, "calib_args": ["--host-units", str(units)]}


def hold_host(t0: float, seconds: float) -> None:
    """Busy-wait (holding the CPU and the GIL, as Python work does) until ``seconds`` after ``t0``
    (a ``time.perf_counter()`` reading)."""
    end = t0 + seconds
    while time.perf_counter() < end:
        pass


def median_time(fn, reps: int = 5) -> float:
    """Median wall seconds of ``fn()`` over ``reps`` calls (for calibration, outside the steps)."""
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def launch_time(fn, reps: int = 5) -> float:
    """Median host seconds ``fn()`` takes to return with the GPU idle before it: the host's time to
    launch its work (calibration only; a synchronize after each, outside the time)."""
    import torch

    ts = []
    torch.cuda.synchronize()
    for _ in range(reps + 1):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
        torch.cuda.synchronize()
    return statistics.median(ts[1:])


def gpu_time(fn, reps: int = 3) -> float:
    """Median wall seconds of ``fn()`` followed by a synchronize (calibration only, never inside a step)."""
    import torch

    def run():
        fn()
        torch.cuda.synchronize()

    torch.cuda.synchronize()
    run()  # first call: library initialisation, autotuning, compiles
    return median_time(run, reps)
