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
from ..units import fmt_num

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


def _events(data) -> list:
    if isinstance(data, dict):
        ev = data.get("traceEvents")
        if isinstance(ev, list):
            return ev
    if isinstance(data, list):
        return data
    raise UsageError("not a Chrome trace: no traceEvents list")


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
    for e in _events(data):
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


def choose_window(data, *, skip_first_s: float = 0.0, steps: int | None = None) -> Window:
    """The window to judge: the whole trace, minus ``skip_first_s`` seconds, or its last ``steps`` ProfilerStep ranges.

    Raises:
        UsageError: ``skip_first_s`` negative or longer than the trace;
            ``steps`` < 1, or more steps asked than the trace marks (the
            message says how many it has), or none marked.
    """
    lo, hi = extent(data)
    if steps is not None:
        if steps < 1:
            raise UsageError(f"--steps must be at least 1, not {steps}")
        ranges = []
        for e in _events(data):
            if isinstance(e, dict) and e.get("ph") == "X" and _STEP.match(str(e.get("name", ""))):
                ts, d = _num(e.get("ts")), _num(e.get("dur"))
                if ts is not None and d is not None and d > 0:
                    ranges.append((ts, ts + d))
        if not ranges:
            raise UsageError("the program marks no steps (no ProfilerStep#N ranges in the trace): use --skip-first "
                             "SECONDS, or call prof.step() / record_function('ProfilerStep#N') in the program")
        ranges.sort()
        if steps > len(ranges):
            raise UsageError(f"--steps {steps}: the trace marks only {len(ranges)} steps")
        chosen = ranges[-steps:]
        return Window(chosen[0][0], max(r[1] for r in chosen), f"the last {steps} of {len(ranges)} steps")
    if skip_first_s < 0 or not math.isfinite(skip_first_s):
        raise UsageError(f"--skip-first must be a number of seconds >= 0, not {skip_first_s}")
    start = lo + skip_first_s * 1e6
    if start >= hi:
        raise UsageError(f"--skip-first {fmt_num(skip_first_s, 6)} s skips the whole trace ({fmt_num((hi - lo) / 1e6)} s long)")
    how = "the whole run" if skip_first_s == 0 else f"after the first {fmt_num(skip_first_s, 6)} s"
    return Window(start, hi, how)


def crop(data, window: Window) -> dict:
    """A copy of the trace holding only what lies in ``window`` (complete events clipped to its edges)."""
    kept = []
    a, b = window.start_us, window.end_us
    for e in _events(data):
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
