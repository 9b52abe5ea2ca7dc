"""Per step: each ``ProfilerStep#N`` range's wall time, the GPU's busy and idle time inside it,
and that idle time by cause (a gap that straddles two steps is split at the boundary); and the
median step. Times in us inside, seconds in the results."""

from __future__ import annotations

import numpy as np

from .gaps import CAUSES, Gaps, split
from .host import STEP_PREFIX, HostView
from .results import TraceStep
from .track import GpuTrack


def first_step(step_names) -> int | None:
    """The smallest N of the ``ProfilerStep#N`` ranges, None without any."""
    ns = [int(x[len(STEP_PREFIX):]) for x in step_names if isinstance(x, str) and x[len(STEP_PREFIX):].isdigit()]
    return min(ns) if ns else None


def steps_of(gaps: Gaps, view: HostView, track: GpuTrack) -> tuple[list[TraceStep], dict | None]:
    """The steps of ``view`` on ``track`` and their median (None without steps): ``steps``, the
    median ``wall_s``, ``busy_s``, ``idle_s``, ``idle_pct`` and ``causes_s`` per cause, the
    ``slowest`` step's name and ``slowest_wall_s``."""
    if not view.step_start.size:
        return [], None
    t0 = float(track.start.min())
    steps = []
    for a, b, nm in zip(view.step_start.tolist(), view.step_end.tolist(), view.step_name):
        if b <= a:
            continue
        i0 = int(np.searchsorted(gaps.g1, a, side="right"))
        i1 = int(np.searchsorted(gaps.g0, b, side="left"))
        d = split(gaps, view, np.arange(i0, max(i0, i1)), a, b)
        idle = sum(d[k] for k in CAUSES)
        wall = b - a
        idle = min(idle, wall)
        first = max(CAUSES, key=lambda k: d[k]) if idle > 0 else None
        steps.append(TraceStep(name=str(nm), start_s=(a - t0) * 1e-6, wall_s=wall * 1e-6,
                               busy_s=(wall - idle) * 1e-6, idle_s=idle * 1e-6,
                               idle_pct=100.0 * idle / wall, causes_s={k: d[k] * 1e-6 for k in CAUSES}, first_cause=first))
    if not steps:
        return [], None
    med = {
        "steps": len(steps),
        "wall_s": float(np.median([x.wall_s for x in steps])),
        "busy_s": float(np.median([x.busy_s for x in steps])),
        "idle_s": float(np.median([x.idle_s for x in steps])),
        "idle_pct": float(np.median([x.idle_pct for x in steps])),
        "causes_s": {k: float(np.median([x.causes_s[k] for x in steps])) for k in CAUSES},
        "slowest": max(steps, key=lambda x: x.wall_s).name,
        "slowest_wall_s": max(x.wall_s for x in steps),
    }
    return steps, med


__all__ = ["first_step", "steps_of"]
