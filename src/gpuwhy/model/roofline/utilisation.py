"""The regime from utilisations when FLOPs are not counted. Pure functions, no I/O.

A profiler that reports how busy the busiest arithmetic pipe was (``p``, a
fraction of its peak at the clock the kernel ran) and how busy DRAM was (``m``,
a fraction of peak bandwidth) says what the roofline's time terms would say:
t_compute = p x t and t_memory = m x t, because achieved / peak = the share of
the time the unit needed at full speed. With the launch overhead term of
:mod:`gpuwhy.model.roofline.classify` the regime is the largest of the three, exactly as
:func:`gpuwhy.model.roofline.classify.classify` names it from FLOPs and bytes. This is
how Nsight Compute's Speed-of-Light section reads compute vs memory; it is the
fallback for exports without FLOP counters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class UtilisationVerdict:
    """The regime of a kernel from utilisations.

    ``t_compute_s``/``t_memory_s``/``t_overhead_s`` are the three terms in seconds,
    ``bound_ratio`` how many times the largest exceeds the next, ``sol_pct`` the
    busier of the two units in percent of its peak.
    """

    regime: str
    t_compute_s: float
    t_memory_s: float
    t_overhead_s: float
    bound_ratio: float
    sol_pct: float


def classify_utilisation(compute_frac: float, memory_frac: float, time_s: float, launches: int,
                         launch_overhead_s: float) -> UtilisationVerdict:
    """The regime of ``launches`` launches taking ``time_s`` seconds in all, whose busiest arithmetic
    pipe ran at ``compute_frac`` and DRAM at ``memory_frac`` of peak (fractions, 0-1; above 1 is
    clipped to 1), with ``launch_overhead_s`` seconds per launch.

    Raises:
        ValueError: a fraction is negative or not finite, ``time_s`` is not positive, or
            ``launches`` < 1.
    """
    if not (math.isfinite(compute_frac) and math.isfinite(memory_frac)) or compute_frac < 0 or memory_frac < 0:
        raise ValueError("utilisations must be finite and >= 0")
    if not (time_s > 0 and math.isfinite(time_s)) or launches < 1 or launch_overhead_s < 0:
        raise ValueError("time_s must be > 0, launches >= 1 and the launch overhead >= 0")
    t_c = min(compute_frac, 1.0) * time_s
    t_m = min(memory_frac, 1.0) * time_s
    t_o = launches * launch_overhead_s
    terms = sorted((("compute", t_c), ("memory", t_m), ("overhead", t_o)), key=lambda kv: kv[1], reverse=True)
    ratio = terms[0][1] / terms[1][1] if terms[1][1] > 0 else math.inf
    return UtilisationVerdict(terms[0][0], t_c, t_m, t_o, ratio, 100.0 * max(compute_frac, memory_frac))


__all__ = ["UtilisationVerdict", "classify_utilisation"]
