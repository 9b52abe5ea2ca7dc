"""Number words shared by the HTML report and the roofline drawings: table figures,
percentages, element counts, and the unit word of a precision's peak."""

from __future__ import annotations

import math
from typing import Any

from ..units import fmt_num


def finite(v: Any) -> float | None:
    """A finite float, or None for anything else (strings, bools, NaN, missing)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    v = float(v)
    return v if math.isfinite(v) else None


def num(v: Any, digits: int = 3) -> str:
    """A rate or count for a table (:func:`gpuwhy.units.fmt_num`): about ``digits`` significant
    figures, thousands separated (``4,598``, ``862``, ``66.1``, ``3.36``), engineering notation
    when huge or tiny (``71.6e6``); ``n/a`` for a non-number."""
    x = finite(v)
    return "n/a" if x is None else fmt_num(x, digits, trim=False)


def pct(v: Any) -> str:
    """``95.8%`` (one decimal), ``n/a`` for a non-number."""
    x = finite(v)
    return "n/a" if x is None else f"{x:.1f}%"


def count(v: Any) -> str:
    """An element count: ``2^28`` for a power of two from 1024 up, else ``1,000``; ``n/a`` for a non-number."""
    x = finite(v)
    if x is None:
        return "n/a"
    n = int(x)
    if n >= 1024 and n & (n - 1) == 0:
        return f"2^{n.bit_length() - 1}"
    return f"{n:,}"


def tera_unit(precision: str) -> str:
    """The unit of a peak given in 1e12 operations per second: ``TOPS`` for integer
    precisions (``int8``), else ``TFLOP/s``."""
    return "TOPS" if precision.startswith("int") else "TFLOP/s"
