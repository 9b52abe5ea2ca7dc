"""Robust centre and spread of a figure measured on many GPUs, and how far one GPU is off it.

Pure maths, no I/O. The median and the median absolute deviation (MAD) are used rather
than the mean and standard deviation because a fleet's slow GPUs are exactly what must
not move the reference: half the values can be wrong before the median moves off the
good ones. For normally distributed values the MAD is about 0.6745 standard deviations,
so 5 MADs are about 3.4 standard deviations (Iglewicz and Hoaglin's "modified z-score"
rule flags |0.6745 (x - median) / MAD| > 3.5, i.e. about 5.2 MADs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence


def median(values: Sequence[float]) -> float:
    """The median of ``values`` (the mean of the two middle ones for an even count).

    Raises:
        ValueError: ``values`` is empty or holds a NaN.
    """
    xs = sorted(float(v) for v in values)
    if not xs:
        raise ValueError("median of no values")
    if any(math.isnan(x) for x in xs):
        raise ValueError("median of a NaN")
    mid = len(xs) // 2
    return xs[mid] if len(xs) % 2 else (xs[mid - 1] + xs[mid]) / 2.0


def mad(values: Sequence[float], centre: float | None = None) -> float:
    """The median absolute deviation of ``values`` from ``centre`` (default their median), in their unit."""
    c = median(values) if centre is None else centre
    return median([abs(float(v) - c) for v in values])


@dataclass(frozen=True)
class Spread:
    """A figure over ``n`` GPUs, in the figure's unit: median, MAD, lowest and highest value."""

    n: int
    median: float
    mad: float
    low: float
    high: float

    @property
    def mad_fraction(self) -> float | None:
        """The MAD as a fraction of the median (None when the median is 0)."""
        return self.mad / abs(self.median) if self.median else None


def spread(values: Sequence[float]) -> Spread:
    """:class:`Spread` of ``values``.

    Raises:
        ValueError: ``values`` is empty or holds a NaN.
    """
    m = median(values)
    return Spread(len(values), m, mad(values, m), float(min(values)), float(max(values)))


def worse_by(value: float, reference: float, higher_is_better: bool) -> float:
    """How much worse ``value`` is than ``reference``, in their unit (negative: better).

    Lower is worse for a rate (bandwidth, FLOP/s); higher is worse for a time (launch overhead).
    """
    return reference - value if higher_is_better else value - reference


def is_outlier(value: float, s: Spread, higher_is_better: bool, mads: float, floor_fraction: float) -> bool:
    """True when ``value`` is worse than the median by more than ``mads`` MADs *and* by more
    than ``floor_fraction`` of the median.

    The floor keeps a tight population's ordinary noise from being called an outlier: when
    eight GPUs agree to 0.1 %, a GPU 0.5 % slower is 5 MADs off but not a bad GPU.
    """
    worse = worse_by(value, s.median, higher_is_better)
    return worse > mads * s.mad and worse > floor_fraction * abs(s.median)


def mads_off(value: float, s: Spread, higher_is_better: bool) -> float | None:
    """How many MADs ``value`` is worse than the median (None when the MAD is 0)."""
    return worse_by(value, s.median, higher_is_better) / s.mad if s.mad > 0 else None


def relative_change(value: float, reference: float) -> float | None:
    """``(value - reference) / reference`` (None when the reference is 0)."""
    return (value - reference) / reference if reference else None
