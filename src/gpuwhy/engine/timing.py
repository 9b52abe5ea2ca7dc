"""Exact GPU timing: warm-up, CUDA events around each repetition, robust statistics.

In the spirit of ``triton.testing.do_bench``: warm up, estimate the time of one
call, pick a repetition count that fills a time budget, then time every
repetition separately between two CUDA events on the stream and report the
median with min/max and the coefficient of variation. Work that must not be
timed (rotating to a fresh buffer set, flushing the L2) runs between the
repetitions, outside the events.

Pure statistics (:func:`summarize`, :func:`choose_reps`) are separate from the
CUDA part (:func:`time_gpu`) so they are testable without a GPU.

Units: seconds everywhere (CUDA events report milliseconds; converted here).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Callable, Sequence


@dataclass(frozen=True)
class Measurement:
    """Repeated timings of one GPU region.

    Attributes:
        median_s: median of the repetitions (the figure gpuwhy reports), s.
        min_s, max_s, mean_s: s.
        cv: coefficient of variation, stdev / mean (0 for one repetition).
        reps: timed repetitions.
        warmup: untimed calls before them.
        samples_s: every repetition's time, s (kept for --json; may be long).
    """

    median_s: float
    min_s: float
    max_s: float
    mean_s: float
    cv: float
    reps: int
    warmup: int = 0
    samples_s: tuple[float, ...] = ()

    def to_dict(self, samples: bool = False) -> dict:
        """Plain data (seconds); ``samples`` adds every repetition."""
        d = {
            "median_s": self.median_s,
            "min_s": self.min_s,
            "max_s": self.max_s,
            "mean_s": self.mean_s,
            "cv": self.cv,
            "reps": self.reps,
            "warmup": self.warmup,
        }
        if samples:
            d["samples_s"] = list(self.samples_s)
        return d

    def scaled(self, factor: float) -> "Measurement":
        """The same statistics divided by ``factor`` (e.g. per kernel of a batch of ``factor``)."""
        return Measurement(
            self.median_s / factor, self.min_s / factor, self.max_s / factor, self.mean_s / factor,
            self.cv, self.reps, self.warmup, tuple(s / factor for s in self.samples_s),
        )


def summarize(samples_s: Sequence[float], warmup: int = 0) -> Measurement:
    """Statistics of repeated timings (seconds).

    Raises:
        ValueError: for no samples, or a negative or non-finite sample.
    """
    xs = [float(x) for x in samples_s]
    if not xs:
        raise ValueError("no timing samples")
    if any(not math.isfinite(x) or x < 0 for x in xs):
        raise ValueError(f"bad timing sample in {xs[:5]}...")
    mean = statistics.fmean(xs)
    cv = statistics.pstdev(xs) / mean if len(xs) > 1 and mean > 0 else 0.0
    return Measurement(statistics.median(xs), min(xs), max(xs), mean, cv, len(xs), warmup, tuple(xs))


def choose_reps(estimate_s: float, budget_s: float, min_reps: int = 5, max_reps: int = 200) -> int:
    """Repetitions that fit ``budget_s`` at ``estimate_s`` each, clamped to [min_reps, max_reps]."""
    if estimate_s <= 0 or not math.isfinite(estimate_s):
        return max_reps
    return int(max(min_reps, min(max_reps, budget_s // estimate_s)))


class EventPool:
    """Timing-enabled CUDA events, created once and re-recorded (creating events
    per repetition costs host time that would show up between repetitions)."""

    def __init__(self, device):
        from cuda.core import EventOptions

        self._device = device
        self._opts = EventOptions(timing_enabled=True)
        self._events: list = []

    def get(self, n: int) -> list:
        """``n`` events (the pool grows as needed)."""
        while len(self._events) < n:
            self._events.append(self._device.create_event(options=self._opts))
        return self._events[:n]

    def close(self) -> None:
        for e in self._events:
            try:
                e.close()
            except Exception:
                pass
        self._events.clear()


def time_gpu(
    stream,
    events: EventPool,
    fn: Callable[[int], None],
    *,
    between: Callable[[int], None] | None = None,
    warmup: int = 2,
    budget_s: float = 0.02,
    min_reps: int = 5,
    max_reps: int = 200,
    reps: int | None = None,
    pad: Callable[[], None] | None = None,
    pad_below_s: float = 2e-4,
) -> Measurement:
    """Time ``fn(rep)`` on ``stream`` with a pair of CUDA events around each call.

    Args:
        stream: a ``cuda.core.Stream``; ``fn`` must enqueue its work there.
        events: an :class:`EventPool` of the stream's device.
        fn: enqueues the region to time; gets the repetition index (use it to
            rotate buffer sets so each repetition reads data not in the L2).
        between: enqueued before each repetition outside the events (an L2
            flush, say), also before warm-up calls.
        warmup: untimed calls first (module load and first-touch stay out).
        budget_s: the time all repetitions should take together; the count is
            estimated from 3 timed calls and clamped to [min_reps, max_reps].
        reps: a fixed repetition count instead of the budget.
        pad: enqueues GPU busy-work (e.g. :meth:`GpuContext.spin`) before each
            repetition's first event, so the events and ``fn``'s launches queue
            up behind it and the events time the GPU only, not the host's time
            to submit them (without it a few-microsecond kernel reads as the
            host's launch latency). Used while the estimated time per call is
            under ``pad_below_s``; the padding itself is never timed.

    Returns:
        a :class:`Measurement` (seconds per call).

    Raises:
        whatever the CUDA calls raise (the engine context turns CUDA errors into
        :class:`~gpuwhy.errors.MeasurementError`).
    """
    for i in range(warmup):
        if between:
            between(i)
        fn(i)
    probe = _timed(stream, events, fn, between, 3, offset=warmup, pad=pad)
    estimate = statistics.median(probe)
    if pad is not None and estimate >= pad_below_s:
        pad = None
    if reps is None:
        reps = choose_reps(estimate, budget_s, min_reps, max_reps)
    samples = _timed(stream, events, fn, between, reps, offset=warmup + 3, pad=pad)
    return summarize(samples, warmup)


def _timed(stream, events: EventPool, fn, between, n: int, offset: int, pad=None) -> list[float]:
    evs = events.get(2 * n)
    for r in range(n):
        if between:
            between(offset + r)
        if pad is not None:
            pad()
        stream.record(evs[2 * r])
        fn(offset + r)
        stream.record(evs[2 * r + 1])
    evs[2 * n - 1].sync()
    return [(evs[2 * r + 1] - evs[2 * r]) * 1e-3 for r in range(n)]
