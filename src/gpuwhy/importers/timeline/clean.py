"""Cleaning a timeline before it is judged: strays, activities outside the capture window, and
each GPU activity's launch call.

- a GPU activity whose start or end lies far from the bulk of the timeline's timestamps
  (farther from their median than :data:`STRAY_FACTOR` times their interquartile range and
  than :data:`STRAY_MIN_US`: a timestamp near 0 in a trace whose clock reads 1.6e15 us) is a
  stray and dropped, when such activities are few (:data:`STRAY_MAX_SHARE`); so is one that
  starts more than :data:`BEFORE_LAUNCH_US` before its own launch call, when such activities
  are rare (when they are common the clocks disagree: a note says so);
- API calls and host ranges far outside the bulk are dropped the same way;
- GPU work outside the capture window markers is dropped.

Dropped activities are counted by reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import repeat

import numpy as np

from ...units import fmt_time
from .activities import Timeline

#: A timestamp farther from the median of the timeline's timestamps than this many interquartile ranges...
STRAY_FACTOR = 10.0
#: ...and than this (us: one minute), so a real pause is not taken for one, is a stray...
STRAY_MIN_US = 60e6
#: ...when at most this share of the activities (or one) lie that far out.
STRAY_MAX_SHARE = 0.01
#: A GPU activity starting this long before its own launch call (us) has a bad timestamp.
BEFORE_LAUNCH_US = 1000.0
#: Above this share of linked activities starting before their launch, the clocks disagree (not strays).
BEFORE_LAUNCH_MAX_SHARE = 0.01


@dataclass
class Cleaned:
    """What the cleaning keeps and links (arrays over the timeline's columns).

    ``gpu_keep`` / ``api_keep`` / ``range_keep``: masks of what is judged; ``launch_api``: index of
    each GPU activity's launch call (-1 for none); ``launch_us`` / ``launch_end_us``: its start and
    end (NaN where unknown; a flow-linked launch has a start only); ``dropped``: counts by reason;
    ``notes``: what the reader should know.
    """

    gpu_keep: np.ndarray
    api_keep: np.ndarray
    range_keep: np.ndarray
    launch_api: np.ndarray
    launch_us: np.ndarray
    launch_end_us: np.ndarray
    dropped: dict
    notes: list


def _bounds(parts) -> tuple[float, float] | None:
    """The (low, high) limits of timestamps that are not strays (us), or None without timestamps."""
    allv = np.concatenate([p for p in parts if p.size]) if any(p.size for p in parts) else np.empty(0)
    if allv.size == 0:
        return None
    q25, med, q75 = np.quantile(allv, [0.25, 0.5, 0.75])
    margin = max(STRAY_FACTOR * float(q75 - q25), STRAY_MIN_US)
    return float(med) - margin, float(med) + margin


def _strays(mask: np.ndarray, total: int) -> np.ndarray:
    """``mask`` when it marks few activities (at most STRAY_MAX_SHARE of ``total``, or one), else none:
    many activities far out are a trace of two parts, not strays."""
    n = int(mask.sum())
    return mask if n and n <= max(1, STRAY_MAX_SHARE * total) else np.zeros_like(mask)


def clean(t: Timeline) -> Cleaned:
    """Link each GPU activity to its launch call and mark what is judged (see the module docstring)."""
    dropped = dict(t.dropped)
    notes: list[str] = []
    n = t.gpu_count
    ts, dur = t.gpu_start, t.gpu_dur
    r_ts = t.api_start
    r_end = r_ts + t.api_dur
    h_ts = t.range_start
    h_end = h_ts + t.range_dur
    if t.host_bad_ts:
        dropped["host events with a missing or non-positive timestamp"] = t.host_bad_ts

    # Launch call per GPU activity: by correlation id, else the launch time the reader linked.
    lau_i = np.fromiter(map(t.corr_api().get, t.gpu_corr, repeat(-1)), dtype=np.int64, count=n)
    launch = np.full(n, np.nan)
    launch_end = np.full(n, np.nan)
    has = lau_i >= 0
    launch[has] = r_ts[lau_i[has]]
    launch_end[has] = r_end[lau_i[has]]
    flow = ~has & ~np.isnan(t.gpu_launch_us) if n else np.zeros(0, dtype=bool)
    launch[flow] = t.gpu_launch_us[flow]

    keep = np.ones(n, dtype=bool)
    r_keep = np.ones(r_ts.size, dtype=bool)
    h_keep = np.ones(h_ts.size, dtype=bool)
    b = _bounds((ts, r_ts, h_ts))
    if b is not None:
        lo, hi = b
        total = ts.size + r_ts.size + h_ts.size
        stray = _strays((ts < lo) | (ts + dur > hi), total)
        if stray.any():
            dropped["GPU events with a timestamp far outside the rest of the trace"] = int(stray.sum())
            keep &= ~stray
        r_keep = ~_strays((r_ts < lo) | (r_end > hi), total)
        h_keep = ~_strays((h_ts < lo) | (h_end > hi), total)
        bad_host = int((~r_keep).sum() + (~h_keep).sum())
        if bad_host:
            dropped["host events with a timestamp far outside the rest of the trace"] = bad_host
        in_range = np.isfinite(launch) & (launch >= lo) & (launch <= hi)
        early = keep & in_range & (ts < launch - BEFORE_LAUNCH_US)
        linked = int((keep & np.isfinite(launch)).sum())
        if early.any():
            if early.sum() <= max(1, BEFORE_LAUNCH_MAX_SHARE * linked):
                dropped["GPU events that start before their own launch call"] = int(early.sum())
                keep &= ~early
            else:
                notes.append(
                    f"{int(early.sum())} of {linked} GPU events start more than {fmt_time(BEFORE_LAUNCH_US * 1e-6)} "
                    "before their launch call: the GPU and host clocks disagree, so the split of idle time by host "
                    "activity is unsure"
                )
    w0, w1 = t.window
    if w0 is not None:
        out = keep & (ts < w0)
        if out.any():
            dropped["GPU events that start before the capture window"] = int(out.sum())
        keep &= ~out
    if w1 is not None:
        out = keep & (ts > w1)
        if out.any():
            dropped["GPU events that start after the capture window"] = int(out.sum())
        keep &= ~out
    # A launch call dropped as a stray links nothing.
    if r_keep.size:
        dead = has & ~r_keep[np.clip(lau_i, 0, None)]
        launch[dead] = np.nan
        launch_end[dead] = np.nan
    return Cleaned(keep, r_keep, h_keep, lau_i, launch, launch_end, dropped, notes)


__all__ = ["BEFORE_LAUNCH_US", "STRAY_FACTOR", "STRAY_MAX_SHARE", "STRAY_MIN_US", "Cleaned", "clean"]
