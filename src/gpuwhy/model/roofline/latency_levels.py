"""The plateaus of a latency-vs-working-set curve: cache levels (L1, L2, far L2, DRAM),
where the steps between them fall, and Little's law at the DRAM level's latency.

Pure maths on measured (working set bytes, latency s) points; ``gpuwhy bench --latency``
(:mod:`gpuwhy.bench.latency`) measures them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

#: A first plateau ending above this is not L1 (largest L1 per SM on NVIDIA
#: GPUs so far: 256 KiB, Hopper and Blackwell; margin for the step's spread).
L1_MAX_BYTES = 1 << 20
#: A plateau that starts at or beyond this fraction of the L2 is DRAM.
DRAM_START_FRACTION = 0.8


@dataclass(frozen=True)
class Level:
    """One plateau of the latency curve.

    Attributes:
        name: ``L1``, ``L2``, ``L2 far`` (the far L2 partition), ``DRAM``; further
            steps as ``L2 (3)``, ``DRAM (2)``.
        latency_s: median latency of the plateau's points, s.
        first_bytes, last_bytes: working sets of its first and last point.
        points: how many points it has.
        edge_bytes: working set where the latency crosses the mean of this level's
            and the next one's (half the loads hit each): where the step falls.
            None for the last level.
        indices: positions of its points in the input (as given, not sorted).
        cycles: median clock64 cycles per load of its points (filled by the runner).
        cycles_at_clock: latency_s x the sampled SM clock (filled by the runner).
    """

    name: str
    latency_s: float
    first_bytes: int
    last_bytes: int
    points: int
    edge_bytes: float | None = None
    indices: tuple[int, ...] = ()
    cycles: float | None = None
    cycles_at_clock: float | None = None

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "latency_s": self.latency_s,
            "cycles": self.cycles,
            "cycles_at_clock": self.cycles_at_clock,
            "first_bytes": self.first_bytes,
            "last_bytes": self.last_bytes,
            "points": self.points,
            "edge_bytes": self.edge_bytes,
        }


def detect_levels(
    sizes: Sequence[float],
    latencies: Sequence[float],
    *,
    l2_bytes: int | None = None,
    l1_cached: bool = True,
    l1_max_bytes: int = L1_MAX_BYTES,
    tol: float = 0.12,
    flat_slope: float = 0.35,
    min_points: int = 2,
    min_span_octaves: float = 0.2,
) -> list[Level]:
    """Find the plateaus (cache levels) of a latency-vs-working-set curve.

    Args:
        sizes: working sets, bytes (any order; each once).
        latencies: latency at each size (any unit; ``latency_s`` keeps it).
        l2_bytes: the L2 size; plateaus starting at >= 0.8 x L2 are DRAM. Without
            it the last plateau is DRAM.
        l1_cached: False for a chase that bypasses L1 (``.cg``): no L1 level.
        tol: relative change that separates two plateaus (0.12: 12%).
        flat_slope: |d ln(latency) / d log2(size)| at or below which a point is on
            a plateau (per octave; 0.35 is a 42% rise per octave).
        min_points, min_span_octaves: the fewest points a plateau needs and the
            fewest octaves of working set it must span (0.2: three points at 8
            per octave, two at 2 per octave), so the slow start of a step is
            not taken for a level of its own.

    Method: median-of-3 smoothing in log latency; a point is flat when the
    central difference of the smoothed curve through it is within
    ``flat_slope``; runs of flat points are split where consecutive points
    (or a point and the run's median) differ by more than ``tol``; runs with
    ``min_points`` points over ``min_span_octaves`` become levels;
    neighbouring levels within ``tol`` of each other merge. (Tuned on
    synthetic curves with logistic steps of various widths and 0.3-2% noise.)
    Names: the first level is L1 (``l1_cached`` and it ends at or below
    ``l1_max_bytes``); levels that start below 0.8 x L2 are L2, then
    ``L2 far`` (H100/H200: each SM reaches the L2 half that is not wired to
    its GPCs at a higher latency); the rest DRAM.

    Returns: levels by increasing working set.

    Raises:
        ValueError: mismatched lengths, fewer than 2 points, or a non-positive value.
    """
    s = np.asarray(sizes, dtype=float)
    lat = np.asarray(latencies, dtype=float)
    if s.shape != lat.shape or s.ndim != 1:
        raise ValueError("sizes and latencies must be 1-D and of equal length")
    if s.size < 2:
        raise ValueError("need at least 2 points")
    if not (np.all(np.isfinite(s)) and np.all(np.isfinite(lat)) and np.all(s > 0) and np.all(lat > 0)):
        raise ValueError("sizes and latencies must be positive and finite")
    idx = np.argsort(s, kind="stable")
    s, lat = s[idx], lat[idx]
    x, y = np.log2(s), np.log(lat)
    n = s.size
    ys = y.copy()
    for i in range(1, n - 1):
        ys[i] = float(np.median(y[i - 1 : i + 2]))
    flat = np.zeros(n, dtype=bool)
    for i in range(n):
        a, b = max(0, i - 1), min(n - 1, i + 1)
        flat[i] = abs(ys[b] - ys[a]) / max(x[b] - x[a], 1e-9) <= flat_slope
    jump = math.log1p(tol)

    runs: list[list[int]] = []
    cur: list[int] = []
    for i in range(n):
        if not flat[i]:
            if cur:
                runs.append(cur)
            cur = []
            continue
        if cur and (abs(y[i] - y[cur[-1]]) > jump or abs(y[i] - float(np.median(y[cur]))) > jump):
            runs.append(cur)
            cur = []
        cur.append(i)
    if cur:
        runs.append(cur)
    runs = [r for r in runs if len(r) >= min_points and x[r[-1]] - x[r[0]] >= min_span_octaves - 1e-9]
    merged: list[list[int]] = []
    for r in runs:
        if merged and abs(float(np.median(y[r])) - float(np.median(y[merged[-1]]))) <= jump:
            merged[-1] = merged[-1] + r
        else:
            merged.append(r)

    names = _name_levels([(s[r[0]], s[r[-1]]) for r in merged], l2_bytes, l1_cached, l1_max_bytes)
    levels = []
    for k, r in enumerate(merged):
        edge = None
        if k + 1 < len(merged):
            edge = _crossing(x, lat, r[-1], merged[k + 1][0], float(np.median(lat[r])), float(np.median(lat[merged[k + 1]])))
        levels.append(Level(
            name=names[k], latency_s=float(np.median(lat[r])), first_bytes=int(round(s[r[0]])),
            last_bytes=int(round(s[r[-1]])), points=len(r), edge_bytes=edge,
            indices=tuple(int(idx[i]) for i in r),
        ))
    return levels


def _crossing(x, lat, i0: int, i1: int, lo: float, hi: float) -> float:
    """Working set (bytes) where the latency first crosses the mean of two levels'
    latencies between points i0 and i1 (half the loads served by each level),
    interpolated linearly in latency against log2(size)."""
    mid = 0.5 * (lo + hi)
    up = hi >= lo
    for i in range(i0, i1):
        a, b = lat[i], lat[i + 1]
        if (a < mid <= b) if up else (a > mid >= b):
            t = (mid - a) / (b - a)
            return float(2.0 ** (x[i] + t * (x[i + 1] - x[i])))
    return float(2.0 ** (0.5 * (x[i0] + x[i1])))


def _name_levels(spans, l2_bytes, l1_cached: bool, l1_max_bytes: int) -> list[str]:
    names: list[str] = []
    rest = list(range(len(spans)))
    if l1_cached and len(spans) >= 2 and spans[0][1] <= l1_max_bytes:
        names.append("L1")
        rest = rest[1:]
    if l2_bytes:
        cache = [k for k in rest if spans[k][0] < DRAM_START_FRACTION * l2_bytes]
    else:
        cache = rest[:-1] if len(rest) >= 2 else []
    dram = [k for k in rest if k not in cache]
    l2_names = ["L2", "L2 far"]
    for j, _ in enumerate(cache):
        names.append(l2_names[j] if j < len(l2_names) else f"L2 ({j + 1})")
    for j, _ in enumerate(dram):
        names.append("DRAM" if j == 0 else f"DRAM ({j + 1})")
    return names


def dram_littles_law(levels: Sequence[Level], info, bandwidth_gbs: float | None, bandwidth_source: str):
    """Little's law for the DRAM level's latency at ``bandwidth_gbs`` (None when either is missing)."""
    from .littles_law import littles_law

    dram = next((lv for lv in levels if lv.name == "DRAM"), None)
    if dram is None or not bandwidth_gbs:
        return None
    return littles_law(bandwidth_gbs, dram.latency_s, int(info.sm_count), int(info.max_threads_per_sm),
                       bandwidth_source=bandwidth_source, latency_source="measured DRAM latency (pointer chase)")
