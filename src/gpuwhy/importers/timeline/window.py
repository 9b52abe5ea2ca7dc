"""The window of a timeline to judge: skip the warm-up seconds, or keep the last N profiler steps;
and the timeline cropped to it (:func:`~.activities.crop`: activities crossing an edge clipped).
Times in us in the timeline's clock."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ...errors import UsageError
from ...units import fmt_counted, fmt_g, fmt_num, fmt_time
from .activities import ANNOTATION, Timeline, extent

_STEP = re.compile(r"^ProfilerStep#(\d+)$")


@dataclass(frozen=True)
class Window:
    """``[start_us, end_us]`` in the timeline's clock; ``how`` says how it was chosen (for the output)."""

    start_us: float
    end_us: float
    how: str

    @property
    def seconds(self) -> float:
        return (self.end_us - self.start_us) / 1e6


def _step_spans(pairs) -> dict[int, tuple[float, float]]:
    """Step number -> (first start, last end) over ``(name, start, end)`` ranges named ``ProfilerStep#N``."""
    out: dict[int, tuple[float, float]] = {}
    for name, s, e in pairs:
        m = _STEP.match(str(name))
        if m is None or not e > s:
            continue
        k = int(m.group(1))
        lo0, hi0 = out.get(k, (s, e))
        out[k] = (min(lo0, s), max(hi0, e))
    return out


def choose_window(t: Timeline, *, skip_first_s: float = 0.0, steps: int | None = None,
                  from_first_gpu: bool = False) -> Window:
    """The window to judge: the whole timeline, minus ``skip_first_s`` seconds, or its last ``steps``
    ``ProfilerStep#N`` ranges (each step from its host range's start to the end of the GPU work it
    launched, as the GPU-track copy of the step shows).

    With neither and ``from_first_gpu``, the window starts at the first GPU activity (a program's
    start-up before any GPU work is not judged).

    Raises:
        UsageError: ``skip_first_s`` negative or longer than the timeline; ``steps`` < 1, or more
            steps asked than the timeline marks (the message says how many it has), or none marked;
            a timeline with nothing timed.
    """
    ext = extent(t)
    if ext is None:
        raise UsageError("the trace has no timed events")
    lo, hi = ext
    if steps is not None:
        if steps < 1:
            raise UsageError(f"--steps must be at least 1, not {steps}")
        ann = (t.range_kind == ANNOTATION).nonzero()[0].tolist()
        host = _step_spans((t.range_names[t.range_name[i]], float(t.range_start[i]),
                            float(t.range_start[i] + t.range_dur[i])) for i in ann)
        gpu = _step_spans(t.gpu_ranges)
        if not host:
            raise UsageError("the program marks no steps (no ProfilerStep#N ranges in the trace): use --skip-first "
                             "SECONDS, or call prof.step() / record_function('ProfilerStep#N') in the program")
        order = sorted(host, key=lambda k: host[k][0])
        if steps > len(order):
            raise UsageError(f"--steps {steps}: the trace marks only {len(order)} steps")
        chosen = order[-steps:]
        start = min(min(host[k][0], gpu.get(k, host[k])[0]) for k in chosen)
        end = max(max(host[k][1], gpu.get(k, host[k])[1]) for k in chosen)
        return Window(start, end, f"the last {steps} of {fmt_counted(len(order), 'step')}")
    if skip_first_s < 0 or not math.isfinite(skip_first_s):
        raise UsageError(f"--skip-first must be a number of seconds >= 0, not {skip_first_s}")
    if skip_first_s == 0 and from_first_gpu and t.gpu_count:
        g = float(t.gpu_start.min())
        if g > lo:
            return Window(g, hi, f"from the first GPU work to the end ({fmt_time((g - lo) / 1e6)} of start-up before it not judged)")
    start = lo + skip_first_s * 1e6
    if start >= hi:
        raise UsageError(f"--skip-first {fmt_g(skip_first_s)} s skips the whole trace ({fmt_num((hi - lo) / 1e6)} s long)")
    how = "the whole run" if skip_first_s == 0 else f"after the first {fmt_g(skip_first_s)} s"
    return Window(start, hi, how)


__all__ = ["Window", "choose_window"]
