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
import time
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


class TorchEvents:
    """The :class:`EventPool` interface over ``torch.cuda.Event`` (for timing PyTorch work on
    PyTorch's current stream); pair it with :class:`TorchStream`."""

    def __init__(self):
        self._events: list = []

    def get(self, n: int) -> list:
        """``n`` events (the pool grows as needed)."""
        while len(self._events) < n:
            self._events.append(_TorchEvent())
        return self._events[:n]

    def close(self) -> None:
        self._events.clear()


class _TorchEvent:
    def __init__(self):
        import torch

        self.ev = torch.cuda.Event(enable_timing=True)

    @property
    def is_done(self) -> bool:
        return bool(self.ev.query())

    def sync(self) -> None:
        self.ev.synchronize()

    def __sub__(self, start: "_TorchEvent") -> float:
        """Milliseconds from ``start`` to this event (cuda.core's convention)."""
        return start.ev.elapsed_time(self.ev)


class TorchStream:
    """A ``torch.cuda.Stream`` seen as the stream :func:`time_gpu` records events on."""

    def __init__(self, stream):
        self.stream = stream

    def record(self, event: _TorchEvent) -> None:
        event.ev.record(self.stream)


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
    estimate: bool = True,
    pad: Callable[[], None] | None = None,
    pad_below_s: float = 2e-4,
    sample: Callable[[], None] | None = None,
    interval_s: float = 0.004,
) -> Measurement:
    """Time ``fn(rep)`` on ``stream`` with a pair of CUDA events around each call.

    The one timing loop of gpuwhy: the benchmarks, the compute ceilings (with a
    clock sampler) and :func:`gpuwhy.measure` (PyTorch events, an L2 flush between
    repetitions) all call it.

    Args:
        stream: records the events: a ``cuda.core.Stream`` (``fn`` must enqueue its
            work there), or a :class:`TorchStream`.
        events: an :class:`EventPool` of the stream's device, or :class:`TorchEvents`.
        fn: enqueues the region to time; gets the repetition index (use it to
            rotate buffer sets so each repetition reads data not in the L2).
        between: enqueued before each repetition outside the events (an L2
            flush, say), also before warm-up calls.
        warmup: untimed calls first (module load and first-touch stay out).
        budget_s: the time all repetitions should take together; the count is
            estimated from 3 timed calls and clamped to [min_reps, max_reps].
        reps: a fixed repetition count instead of the budget.
        estimate: time 3 calls first (for the budget and ``pad``); with
            ``estimate=False`` give ``reps``, and the first timed call is the first after warm-up.
        pad: enqueues GPU busy-work (e.g. :meth:`GpuContext.spin`) before each
            repetition's first event, so the events and ``fn``'s launches queue
            up behind it and the events time the GPU only, not the host's time
            to submit them (without it a few-microsecond kernel reads as the
            host's launch latency). Used while the estimated time per call is
            under ``pad_below_s``; the padding itself is never timed.
        sample: called every ``interval_s`` while the timed repetitions run (all are
            enqueued first, then the host polls the last event), e.g. to read the SM
            clock (:class:`gpuwhy.device.sample.ClockSampler`); it stores what it reads.

    Returns:
        a :class:`Measurement` (seconds per call).

    Raises:
        ValueError: ``estimate=False`` without ``reps``.
        whatever the CUDA calls raise (the engine context turns CUDA errors into
        :class:`~gpuwhy.errors.MeasurementError`).
    """
    for i in range(warmup):
        if between:
            between(i)
        fn(i)
    offset = warmup
    if estimate:
        probe = _timed(stream, events, fn, between, 3, offset, pad=pad)
        offset += 3
        est = statistics.median(probe)
        if pad is not None and est >= pad_below_s:
            pad = None
        if reps is None:
            reps = choose_reps(est, budget_s, min_reps, max_reps)
    elif reps is None:
        raise ValueError("time_gpu(estimate=False) needs reps")
    samples = _timed(stream, events, fn, between, reps, offset, pad=pad, sample=sample, interval_s=interval_s)
    return summarize(samples, warmup)


def collect(read: Callable[[], object] | None) -> tuple[Callable[[], None] | None, list]:
    """``(hook, samples)``: a ``sample`` hook for :func:`time_gpu` that appends each non-None
    ``read()`` (e.g. :meth:`gpuwhy.device.sample.ClockSampler.sample`) to ``samples``;
    ``(None, [])`` without ``read``."""
    samples: list = []
    if read is None:
        return None, samples

    def hook() -> None:
        v = read()
        if v is not None:
            samples.append(v)

    return hook, samples


def _timed(stream, events: EventPool, fn, between, n: int, offset: int, pad=None, sample=None,
           interval_s: float = 0.004) -> list[float]:
    evs = events.get(2 * n)
    for r in range(n):
        if between:
            between(offset + r)
        if pad is not None:
            pad()
        stream.record(evs[2 * r])
        fn(offset + r)
        stream.record(evs[2 * r + 1])
    last = evs[2 * n - 1]
    if sample is not None:
        while not last.is_done:
            sample()
            time.sleep(interval_s)
    last.sync()
    return [(evs[2 * r + 1] - evs[2 * r]) * 1e-3 for r in range(n)]

