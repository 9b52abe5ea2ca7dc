"""Per step: each ``ProfilerStep#N`` range's wall time, the GPU's busy and idle time inside it,
and that idle time by cause (a gap that straddles two steps is split at the boundary); and the
median step. Times in us inside, seconds in the results."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import numpy as np

from ...errors import UsageError
from .activities import ANNOTATION, STEP_PREFIX, Timeline
from .gaps import CAUSES, Gaps, split
from .host import HostView
from .intervals import nested_order, top_level
from .results import TraceStep
from .track import GpuTrack


def first_step(step_names, prefix: str = STEP_PREFIX) -> int | None:
    """The smallest N of the ``<prefix>N`` step ranges (``ProfilerStep#N``), None without any."""
    ns = [int(x[len(prefix):]) for x in step_names
          if isinstance(x, str) and x.startswith(prefix) and x[len(prefix):].isdigit()]
    return min(ns) if ns else None


#: Range names listed when ``--steps-from`` names none of them.
_SHOWN = 5


def steps_from(t: Timeline, name: str) -> Timeline:
    """A copy of ``t`` whose steps are its host ranges named ``name`` (``--steps-from NAME``): each
    becomes the annotation ``NAME#k`` (k = 0, 1, ... by start time) and ``NAME#`` the step prefix, so
    the ranges of any other name, ``ProfilerStep#N`` included, are not steps; one nested in another of
    the same name on its thread is part of that one's step.

    Raises:
        UsageError: no host range of ``t`` is named ``name`` (the message lists the most common names).
    """
    idx = [i for i, n in enumerate(t.range_names) if n == name]
    hit = np.flatnonzero(np.isin(t.range_name, np.asarray(idx, dtype=np.int64))) if idx else np.empty(0, dtype=np.int64)
    if hit.size == 0:
        counts = Counter(t.range_names[i] for i in t.range_name.tolist())
        common = ", ".join(repr(n) for n, _ in counts.most_common(_SHOWN)) or "none: the source holds no host ranges"
        raise UsageError(f"--steps-from {name!r}: no range of that name (the most common: {common}); "
                         "pass the name of the range that marks one step")
    # A range inside another of the same name on its thread is not a step of its own (XProf writes each jitted
    # call as two nested ``PjitFunction(step)`` ranges; a recursive NVTX range nests too): the top-level ones.
    keep = []
    for th in np.unique(t.range_thread[hit]).tolist():
        sel = hit[t.range_thread[hit] == th]
        sel = sel[nested_order(t.range_start[sel], t.range_start[sel] + t.range_dur[sel])]
        keep.append(sel[top_level(t.range_start[sel], t.range_start[sel] + t.range_dur[sel])])
    hit = np.concatenate(keep)
    hit = hit[np.argsort(t.range_start[hit], kind="stable")]
    names = list(t.range_names)
    range_name = t.range_name.copy()
    kind = t.range_kind.copy()
    for k, i in enumerate(hit.tolist()):
        range_name[i] = len(names)
        names.append(f"{name}#{k}")
    kind[hit] = ANNOTATION
    return replace(t, range_names=names, range_name=range_name, range_kind=kind, step_prefix=f"{name}#")


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


__all__ = ["first_step", "steps_from", "steps_of"]
