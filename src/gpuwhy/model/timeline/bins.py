"""The timeline of a profiled window: the window cut into bins, and in each bin the seconds of
each part (GPU busy, GPU idle by cause, host-only time) -- intervals to bins, pure arithmetic.

No I/O. Interval arrays are ``starts``/``ends`` of any one time unit (a trace's
microseconds); an interval is ``[start, end)``. The bins are ``n`` equal slices of
``[edges[0], edges[-1]]``. Cutting an interval at the edges gives pieces, each
inside one bin; summing pieces per bin gives the seconds of each part per bin.
When the parts tile the window (every instant is busy, or idle for exactly one
cause, or host-only), the parts of each bin add up to the bin's length, and each
part's bins add up to its total.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: The most bins a timeline has: about one per 4-6 CSS pixels of a 40-64rem wide page.
MAX_BINS = 160
#: The shortest bin (s): 10 us, ten steps of a kineto trace's 1 us timestamps, so a bin is
#: never thinner than what the trace can resolve (a short window gets fewer bins).
MIN_BIN_S = 10e-6


def bin_count(window_s: float, max_bins: int = MAX_BINS, min_bin_s: float = MIN_BIN_S) -> int:
    """How many bins for a window of ``window_s`` seconds: ``max_bins``, fewer when bins would be
    shorter than ``min_bin_s``; at least 1.

    Raises:
        ValueError: ``window_s`` not positive and finite, ``max_bins`` < 1 or ``min_bin_s`` not positive.
    """
    if not (window_s > 0 and math.isfinite(window_s)):
        raise ValueError(f"the window must be a positive number of seconds, not {window_s}")
    if max_bins < 1 or not min_bin_s > 0:
        raise ValueError(f"need max_bins >= 1 and min_bin_s > 0, not {max_bins} and {min_bin_s}")
    return max(1, min(max_bins, int(window_s / min_bin_s)))


def cover(window_lo: float, window_hi: float, span_lo: float, span_hi: float) -> tuple[float, float]:
    """The range to bin: ``max(window, span)`` long, holding the span (the GPU's first-to-last
    work), starting at the window's start unless the span begins earlier or would end past it.

    With the span inside the window this is the window itself.
    """
    length = max(window_hi - window_lo, span_hi - span_lo)
    lo = min(window_lo, span_lo)
    hi = max(lo + length, span_hi)
    return hi - length, hi


def bin_edges(lo: float, hi: float, n: int) -> np.ndarray:
    """``n + 1`` edges of ``n`` equal bins over ``[lo, hi]`` (the last edge is ``hi`` exactly).

    Raises:
        ValueError: ``hi <= lo`` or ``n < 1``.
    """
    if not hi > lo:
        raise ValueError(f"an empty range to bin: [{lo}, {hi}]")
    if n < 1:
        raise ValueError(f"need at least one bin, not {n}")
    e = lo + (hi - lo) * (np.arange(n + 1, dtype=np.float64) / n)
    e[-1] = hi
    return e


def cut(edges, starts, ends) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each interval ``[starts[i], ends[i])``, clipped to the edges' range, cut at the edges.

    Returns ``(src, bins, lo, hi)``, one entry per non-empty piece: the interval it comes
    from, the bin it lies in, and its ends. Pieces of one interval come in time order.
    """
    e = np.asarray(edges, dtype=np.float64)
    s = np.clip(np.asarray(starts, dtype=np.float64), e[0], e[-1])
    t = np.clip(np.asarray(ends, dtype=np.float64), e[0], e[-1])
    keep = np.flatnonzero(t > s)
    s, t = s[keep], t[keep]
    # e[first] <= s < e[first + 1] and e[last] < t <= e[last + 1]: with e[0] <= s < t <= e[-1], both are
    # bins (0..n-1), last >= first, and every piece below has a positive length.
    first = np.searchsorted(e, s, side="right") - 1
    last = np.searchsorted(e, t, side="left") - 1
    reps = last - first + 1
    src = np.repeat(keep, reps)
    offset = np.arange(int(reps.sum())) - np.repeat(np.cumsum(reps) - reps, reps)
    bins = np.repeat(first, reps) + offset
    lo = np.maximum(np.repeat(s, reps), e[bins])
    hi = np.minimum(np.repeat(t, reps), e[bins + 1])
    return src, bins, lo, hi


def per_bin(n: int, bins, amounts) -> np.ndarray:
    """``amounts`` summed by bin: an array of ``n``."""
    return np.bincount(np.asarray(bins, dtype=np.int64), weights=np.asarray(amounts, dtype=np.float64), minlength=n)[:n]


def overlap(edges, starts, ends) -> np.ndarray:
    """The length of the intervals inside each bin (overlapping intervals count twice: pass a union)."""
    _, bins, lo, hi = cut(edges, starts, ends)
    return per_bin(len(edges) - 1, bins, hi - lo)


@dataclass(frozen=True)
class TimelineBin:
    """One bin: ``[start_s, end_s)`` in seconds from the timeline's start, GPU busy seconds,
    and idle seconds by part name (only parts with time in the bin)."""

    start_s: float
    end_s: float
    busy_s: float
    idle_s: dict

    @property
    def seconds(self) -> float:
        return self.end_s - self.start_s


@dataclass(frozen=True)
class BinnedWindow:
    """A binned window (seconds).

    ``start_us``: where bin 0 starts, in the trace's clock (us); ``edges_s``: the
    ``n + 1`` bin edges in seconds from there; ``busy_s``: GPU busy seconds per bin;
    ``idle_s``: part name -> idle seconds per bin (GPU idle causes and host-only time,
    only parts with time somewhere, largest first).
    """

    start_us: float
    edges_s: tuple[float, ...]
    busy_s: tuple[float, ...]
    idle_s: dict

    @property
    def n(self) -> int:
        return len(self.busy_s)

    @property
    def window_s(self) -> float:
        return self.edges_s[-1]  # the edges count from the first, 0

    def bins(self) -> list[TimelineBin]:
        """The bins in time order."""
        return [TimelineBin(self.edges_s[i], self.edges_s[i + 1], self.busy_s[i],
                            {k: v[i] for k, v in self.idle_s.items() if v[i] > 0}) for i in range(self.n)]

    def totals(self) -> dict:
        """Seconds of each part over all bins: ``{"busy": ..., part: ...}``."""
        return {"busy": float(sum(self.busy_s)), **{k: float(sum(v)) for k, v in self.idle_s.items()}}

    def renamed(self, names: dict) -> "BinnedWindow":
        """The same timeline with idle parts renamed by ``names`` (others keep their name; parts
        that get one name are added)."""
        out: dict = {}
        for k, v in self.idle_s.items():
            new = names.get(k, k)
            out[new] = tuple(a + b for a, b in zip(out[new], v)) if new in out else v
        return BinnedWindow(self.start_us, self.edges_s, self.busy_s, _largest_first(out))


def timeline(edges, busy, idle: dict, unit_s: float = 1e-6) -> BinnedWindow:
    """A :class:`BinnedWindow` from ``edges`` (in a unit of ``unit_s`` seconds: 1e-6 for a trace's us),
    ``busy`` (the same unit per bin) and ``idle`` (part -> the same unit per bin; parts with no
    time are left out)."""
    e = np.asarray(edges, dtype=np.float64)
    rel = tuple(float(x) for x in (e - e[0]) * unit_s)
    parts = {k: tuple(float(x) * unit_s for x in np.asarray(v)) for k, v in idle.items() if float(np.sum(v)) > 0}
    return BinnedWindow(float(e[0]) * (unit_s / 1e-6), rel, tuple(float(x) * unit_s for x in np.asarray(busy)),
                    _largest_first(parts))


def _largest_first(parts: dict) -> dict:
    return dict(sorted(parts.items(), key=lambda kv: -sum(kv[1])))


__all__ = ["MAX_BINS", "MIN_BIN_S", "BinnedWindow", "TimelineBin", "bin_count", "bin_edges", "cover", "cut", "overlap",
           "per_bin", "timeline"]
