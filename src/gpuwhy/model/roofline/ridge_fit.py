"""The ridge point of a measured roofline: two roofs fitted to (intensity, FLOP/s) points.

The measured points are fitted, in log-log space by least squares, with two roofs,
``log F = log B + log I`` below a split and ``log F = log P`` above it (for a
fixed split the best B and P are geometric means; every split with at least two
points on each side is tried and the one with the smallest squared error
kept). The empirical ridge is where the fitted roofs cross, P / B (FLOP/byte). A bend is
reported only when the two-roof fit is clearly better than either roof alone
(rms error under half the better single roof's, which must miss by more than
:data:`BEND_MIN_DECADES`). Beside it, the *knee*: the intensity (log-log
interpolated) at which the achieved FLOP/s first reaches :data:`KNEE_FRACTION`
of the compute ceiling (the measured peak when known).

Pure maths (numpy); ``gpuwhy bench --roofline`` (:mod:`gpuwhy.bench.intensity`) feeds it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from ...units import fmt_num

KNEE_FRACTION = 0.9
BEND_MIN_DECADES = 0.05
BEND_GAIN = 0.5
RIDGE_METHOD = (
    "least-squares fit of two roofs in log-log space (memory: F = B x I below a split, compute: F = P above it; "
    "every split with >= 2 points a side tried); empirical ridge = P / B, where the fitted roofs cross; "
    f"knee = intensity where the achieved FLOP/s first reaches {KNEE_FRACTION:.0%} of the compute ceiling"
)


@dataclass(frozen=True)
class RidgeFit:
    """The bend of a measured roofline (see :data:`RIDGE_METHOD`).

    Attributes:
        ridge: FLOP/byte where the fitted roofs cross (None: no bend found; ``note`` says why).
        bandwidth: the fitted memory roof, B/s (the kernel's bandwidth below the ridge).
        peak_flops: the fitted compute roof, FLOP/s.
        memory_points, compute_points: points on each side of the best split.
        rms_log10: rms error of the two-roof fit, decades of FLOP/s.
        knee: FLOP/byte where the achieved FLOP/s first reaches ``knee_fraction`` x
            ``knee_ref_flops`` (log-log interpolated), None if it never does or the
            lowest point already does.
        knee_fraction: e.g. 0.9.
        knee_ref_flops: the compute ceiling the knee refers to, FLOP/s.
        note: why there is no ridge or knee, or "".
    """

    ridge: float | None
    bandwidth: float | None
    peak_flops: float | None
    memory_points: int
    compute_points: int
    rms_log10: float | None
    knee: float | None
    knee_fraction: float
    knee_ref_flops: float | None
    note: str = ""

    def to_dict(self) -> dict:
        """Plain data (FLOP/byte, GB/s, TFLOP/s)."""
        return {
            "ridge": self.ridge,
            "bandwidth_gbs": None if self.bandwidth is None else self.bandwidth / 1e9,
            "peak_tflops": None if self.peak_flops is None else self.peak_flops / 1e12,
            "memory_points": self.memory_points,
            "compute_points": self.compute_points,
            "rms_log10": self.rms_log10,
            "knee": self.knee,
            "knee_fraction": self.knee_fraction,
            "knee_ref_tflops": None if self.knee_ref_flops is None else self.knee_ref_flops / 1e12,
            "method": RIDGE_METHOD,
            "note": self.note,
        }


def _knee(lx: np.ndarray, ly: np.ndarray, target: float) -> tuple[float | None, str]:
    lt = math.log10(target)
    hit = np.flatnonzero(ly >= lt)
    if hit.size == 0:
        return None, f"the achieved FLOP/s never reaches {fmt_num(10 ** lt)} FLOP/s"
    i = int(hit[0])
    if i == 0:
        return None, "the lowest intensity already reaches that fraction of the compute ceiling (start the sweep lower)"
    t = (lt - ly[i - 1]) / (ly[i] - ly[i - 1])
    return float(10 ** (lx[i - 1] + t * (lx[i] - lx[i - 1]))), ""


def fit_ridge(intensities: Sequence[float], flops: Sequence[float], *, ref_peak: float | None = None,
              knee_fraction: float = KNEE_FRACTION, min_side: int = 2) -> RidgeFit:
    """Fit two roofs to measured (intensity FLOP/byte, achieved FLOP/s) points and find their crossing.

    Args:
        intensities, flops: the points, any order; non-positive or non-finite ones are dropped.
        ref_peak: the compute ceiling (FLOP/s) for the knee; default the fitted compute
            roof (or the highest point when there is no bend).
        knee_fraction: the knee is where the curve reaches this fraction of ``ref_peak``.
        min_side: points required on each side of the split.

    Returns:
        a :class:`RidgeFit`; ``ridge`` is None when the points show no bend (all on one
        roof, too few points, or roofs that cross outside the swept range).
    """
    pts = sorted((float(i), float(f)) for i, f in zip(intensities, flops)
                 if math.isfinite(i) and math.isfinite(f) and i > 0 and f > 0)
    m = len(pts)
    lx = np.log10(np.array([p[0] for p in pts], dtype=np.float64))
    ly = np.log10(np.array([p[1] for p in pts], dtype=np.float64))
    if m < 2 * min_side:
        knee, why = _knee(lx, ly, knee_fraction * ref_peak) if (m and ref_peak) else (None, "")
        return RidgeFit(None, None, None, 0, 0, None, knee, knee_fraction, ref_peak,
                        f"{m} points: at least {2 * min_side} are needed to fit two roofs" + (f"; {why}" if why else ""))

    def sq_err(lb: float, lp: float) -> float:
        return float(np.sum((ly - np.minimum(lp, lb + lx)) ** 2))

    best = None
    for k in range(min_side, m - min_side + 1):
        lb = float(np.mean(ly[:k] - lx[:k]))
        lp = float(np.mean(ly[k:]))
        e = sq_err(lb, lp)
        if best is None or e < best[0]:
            best = (e, k, lb, lp)
    e, k, lb, lp = best
    rms_two = math.sqrt(e / m)
    lb_all = float(np.mean(ly - lx))
    rms_mem = math.sqrt(float(np.mean((ly - lb_all - lx) ** 2)))
    rms_comp = math.sqrt(float(np.mean((ly - ly.mean()) ** 2)))
    single = min(rms_mem, rms_comp)
    ridge = 10 ** (lp - lb)
    note = ""
    bent = single > BEND_MIN_DECADES and rms_two < BEND_GAIN * single
    if not bent:
        side = "memory" if rms_mem <= rms_comp else "compute"
        note = (f"no bend: the points follow the {side} roof alone (rms {single:.3f} decades; two roofs "
                f"{rms_two:.3f}); sweep a wider intensity range")
    elif not (10 ** lx[0] <= ridge <= 10 ** lx[-1]):
        bent = False
        note = f"the fitted roofs cross at {fmt_num(ridge)} FLOP/byte, outside the swept range; no ridge reported"
    # The knee needs a compute ceiling: the given one, else the fitted compute roof (none without a bend).
    ref = ref_peak if ref_peak else (10 ** lp if bent else None)
    knee, why = _knee(lx, ly, knee_fraction * ref) if ref else (None, "")
    if why:
        note = (note + "; " if note else "") + f"knee: {why}"
    if not bent:
        return RidgeFit(None, None, None, 0, 0, rms_two, knee, knee_fraction, ref, note)
    return RidgeFit(ridge, 10 ** lb, 10 ** lp, k, m - k, rms_two, knee, knee_fraction, ref, note)
