"""Crop a parsed Chrome trace to a window: skip the warm-up seconds, or keep the last N profiler steps.

Pure functions on the parsed JSON (a dict with ``traceEvents`` or a bare list
of events); timestamps and durations in microseconds as Chrome traces hold
them. Complete events (``ph: "X"``) that cross an edge of the window are
clipped to it, so busy time inside the window is counted exactly; events
outside it are dropped; metadata events (``ph: "M"``) are kept.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..errors import UsageError
from ..units import fmt_g, fmt_num, fmt_time
from .trace.read import events_of
from .trace.scan import is_gpu_work

_STEP = re.compile(r"^ProfilerStep#(\d+)$")


@dataclass(frozen=True)
class Window:
    """``[start_us, end_us]`` in the trace's clock; ``how`` says how it was chosen (for the output)."""

    start_us: float
    end_us: float
    how: str

    @property
    def seconds(self) -> float:
        return (self.end_us - self.start_us) / 1e6


def _num(x) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def extent(data) -> tuple[float, float]:
    """``(first start, last end)`` over the timed events, in us.

    Raises:
        UsageError: no event has a timestamp.
    """
    lo, hi = math.inf, -math.inf
    for e in events_of(data):
        if not isinstance(e, dict) or e.get("ph") == "M":
            continue
        ts = _num(e.get("ts"))
        if ts is None:
            continue
        d = _num(e.get("dur")) or 0.0
        lo, hi = min(lo, ts), max(hi, ts + max(d, 0.0))
    if lo > hi:
        raise UsageError("the trace has no timed events")
    return lo, hi


def first_gpu_us(data) -> float | None:
    """Start (us) of the first GPU event (kernel, copy, memset), or None when there is none."""
    first = None
    for e in events_of(data):
        if isinstance(e, dict) and is_gpu_work(e.get("cat")):
            ts = _num(e.get("ts"))
            if ts is not None and (first is None or ts < first):
                first = ts
    return first


def choose_window(data, *, skip_first_s: float = 0.0, steps: int | None = None, from_first_gpu: bool = False) -> Window:
    """The window to judge: the whole trace, minus ``skip_first_s`` seconds, or its last ``steps`` ProfilerStep ranges
    (each step from its host range's start to the end of the GPU work it launched, as the GPU-track copy shows).

    With neither and ``from_first_gpu``, the window starts at the first GPU
    event (a program's start-up before any GPU work is not judged).

    Raises:
        UsageError: ``skip_first_s`` negative or longer than the trace;
            ``steps`` < 1, or more steps asked than the trace marks (the
            message says how many it has), or none marked.
    """
    lo, hi = extent(data)
    if steps is not None:
        if steps < 1:
            raise UsageError(f"--steps must be at least 1, not {steps}")
        host: dict[int, tuple[float, float]] = {}
        gpu: dict[int, tuple[float, float]] = {}
        for e in events_of(data):
            if not (isinstance(e, dict) and e.get("ph") == "X"):
                continue
            m = _STEP.match(str(e.get("name", "")))
            ts, d = _num(e.get("ts")), _num(e.get("dur"))
            if m is None or ts is None or d is None or d <= 0:
                continue
            # torch.profiler mirrors each host step range on the GPU track (gpu_user_annotation):
            # that one spans the GPU work the step launched, which runs after the host range ends
            side = gpu if e.get("cat") == "gpu_user_annotation" else host
            k = int(m.group(1))
            lo0, hi0 = side.get(k, (ts, ts + d))
            side[k] = (min(lo0, ts), max(hi0, ts + d))
        if not host:
            raise UsageError("the program marks no steps (no ProfilerStep#N ranges in the trace): use --skip-first "
                             "SECONDS, or call prof.step() / record_function('ProfilerStep#N') in the program")
        order = sorted(host, key=lambda k: host[k][0])
        if steps > len(order):
            raise UsageError(f"--steps {steps}: the trace marks only {len(order)} steps")
        chosen = order[-steps:]
        start = min(min(host[k][0], gpu.get(k, host[k])[0]) for k in chosen)
        end = max(max(host[k][1], gpu.get(k, host[k])[1]) for k in chosen)
        return Window(start, end, f"the last {steps} of {len(order)} steps")
    if skip_first_s < 0 or not math.isfinite(skip_first_s):
        raise UsageError(f"--skip-first must be a number of seconds >= 0, not {skip_first_s}")
    if skip_first_s == 0 and from_first_gpu:
        g = first_gpu_us(data)
        if g is not None and g > lo:
            return Window(g, hi, f"from the first GPU work to the end ({fmt_time((g - lo) / 1e6)} of start-up before it not judged)")
    start = lo + skip_first_s * 1e6
    if start >= hi:
        raise UsageError(f"--skip-first {fmt_g(skip_first_s)} s skips the whole trace ({fmt_num((hi - lo) / 1e6)} s long)")
    how = "the whole run" if skip_first_s == 0 else f"after the first {fmt_g(skip_first_s)} s"
    return Window(start, hi, how)


def crop(data, window: Window) -> dict:
    """A copy of the trace holding only what lies in ``window`` (complete events clipped to its edges)."""
    kept = []
    a, b = window.start_us, window.end_us
    for e in events_of(data):
        if not isinstance(e, dict):
            continue
        if e.get("ph") == "M":
            kept.append(e)
            continue
        ts = _num(e.get("ts"))
        if ts is None:
            kept.append(e)
            continue
        d = _num(e.get("dur"))
        end = ts + (d if d is not None and d > 0 else 0.0)
        if end < a or ts > b:
            continue
        if e.get("ph") == "X" and d is not None and (ts < a or end > b):
            e = dict(e)
            s2, e2 = max(ts, a), min(end, b)
            e["ts"], e["dur"] = s2, max(e2 - s2, 0.0)
        kept.append(e)
    out = dict(data) if isinstance(data, dict) else {}
    out["traceEvents"] = kept
    return out
