"""One GPU's window as a timeline: per bin, GPU busy time, idle time by cause, and host-only time.

The idle gaps are those :func:`.gaps.classify` found and the split by cause is
:func:`.gaps.split_gaps`'s: each gap is cut at the bin edges
(:func:`gpuwhy.model.timeline.bins.cut`) and each piece split as the gap is, so the
bins of a cause add up to its total in the diagnosis of the window. Busy time is
the track's busy union; the window before the GPU's first work and after its last is
split by cause as the gaps there are (what the host did).
Times in us inside, seconds in the :class:`~gpuwhy.model.timeline.bins.BinnedWindow`.
"""

from __future__ import annotations

import numpy as np

from ...model.timeline.bins import BinnedWindow, bin_count, bin_edges, cover, cut, overlap, per_bin, timeline
from .gaps import CAUSES, Gaps, split_gaps
from .host import HostView
from .track import GpuTrack

def gpu_timeline(gaps: Gaps, view: HostView, track: GpuTrack, window_us: tuple[float, float],
                 bins: int | None = None) -> BinnedWindow | None:
    """The timeline of one GPU over ``window_us`` (trace clock, us), widened to hold the GPU's span.

    ``gaps``/``view``: the GPU's classified gaps and host view; ``track``: its work and busy
    union; ``bins``: how many (default
    :func:`gpuwhy.model.timeline.bins.bin_count` of the range). Idle parts are keyed by
    :data:`.gaps.CAUSES`. None when the window and the span have no length.
    """
    span_lo, span_hi = float(track.start.min()), float(track.end.max())
    lo, hi = cover(float(window_us[0]), float(window_us[1]), span_lo, span_hi)
    if not hi > lo:  # a window and span of no length (one dur-0 kernel): nothing to bin
        return None
    n = bins if bins is not None else bin_count((hi - lo) * 1e-6)
    edges = bin_edges(lo, hi, n)
    a, b = track.busy_intervals()
    busy = overlap(edges, a, b)
    every = np.arange(gaps.g0.size)
    src, where, p_lo, p_hi = cut(edges, gaps.g0, gaps.g1)
    parts = split_gaps(gaps, view, every[src], p_lo, p_hi)
    idle = {k: per_bin(n, where, parts[k]) for k in CAUSES}
    return timeline(edges, busy, idle, unit_s=1e-6)


__all__ = ["gpu_timeline"]
