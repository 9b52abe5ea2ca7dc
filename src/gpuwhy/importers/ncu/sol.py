"""Nsight Compute's own Speed-of-Light verdict, and how often gpuwhy's regimes agree with it.

ncu's SpeedOfLight section compares two throughputs of the same run, each in
percent of its peak: compute (``sm__throughput``, "Compute (SM) Throughput", old
"SM [%]"/"SOL SM") and memory (``gpu__compute_memory_throughput``, "Memory
Throughput", old "Memory [%]"; where only "SOL FB/L2/TEX" exist, the busiest of
them). Its SOLBottleneck rule says compute or memory by which is higher, and
"latency" (neither unit busy) when both are below 60%.

gpuwhy's regime agrees (:func:`agrees`) when it is ``compute`` or ``issue`` (the SM's
pipes or issue are the limit: the compute side) and ncu's compute throughput is at
least its memory throughput; ``memory`` and the memory throughput is higher;
``latency`` (memory latency-bound) and the memory throughput is higher or both are
below :data:`LATENCY_PCT` (ncu's own "latency issues"); ``overhead`` and both are
below :data:`LATENCY_PCT`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...model.roofline.issue_bound import BUSY_PCT

#: Below this (percent of peak) on both throughputs ncu's rule reports latency issues.
LATENCY_PCT = BUSY_PCT


@dataclass(frozen=True)
class NcuSol:
    """ncu's Speed-of-Light numbers for a kernel (percent of peak) and the verdict they give."""

    compute_pct: float
    memory_pct: float

    @property
    def verdict(self) -> str:
        """``compute`` or ``memory`` (the busier), ``latency`` appended when both are low."""
        side = "compute" if self.compute_pct >= self.memory_pct else "memory"
        return f"{side} (latency)" if max(self.compute_pct, self.memory_pct) < LATENCY_PCT else side

    def agrees(self, regime: str | None) -> bool | None:
        """Whether gpuwhy's ``regime`` says what ncu says (None when there is no regime)."""
        if regime is None:
            return None
        low = max(self.compute_pct, self.memory_pct) < LATENCY_PCT
        if regime in ("compute", "issue"):
            return self.compute_pct >= self.memory_pct
        if regime == "memory":
            return self.memory_pct > self.compute_pct
        if regime == "latency":
            return self.memory_pct > self.compute_pct or low
        if regime == "overhead":
            return low
        return False

    def to_dict(self, regime: str | None = None) -> dict:
        return {"compute_pct": self.compute_pct, "memory_pct": self.memory_pct, "verdict": self.verdict,
                "agrees": self.agrees(regime)}


def sol_of(pct: dict[str, float]) -> NcuSol | None:
    """ncu's verdict from a launch's (or kernel's) utilisations (``sm``, ``memory``, else the busiest of
    ``dram``/``l2``/``l1``), or None when the export lacks them."""
    c = pct.get("sm")
    m = pct.get("memory")
    if m is None:
        levels = [pct[k] for k in ("dram", "l2", "l1") if k in pct]
        m = max(levels) if levels else None
    if c is None or m is None:
        return None
    return NcuSol(c, m)


def agreement(kernels) -> dict:
    """Over ``kernels`` (with ``regime``, ``total_time_s`` and ``ncu_sol``): the kernel time where both
    verdicts exist, the part of it where they agree, that fraction, and the kernels that disagree."""
    compared = agree = 0.0
    disagree: list[str] = []
    for k in kernels:
        if k.regime is None or k.ncu_sol is None or not k.total_time_s:
            continue
        compared += k.total_time_s
        if k.ncu_sol.agrees(k.regime):
            agree += k.total_time_s
        else:
            disagree.append(k.name)
    return {"compared_time_s": compared, "agreeing_time_s": agree,
            "fraction": agree / compared if compared > 0 else None, "disagreeing_kernels": disagree}


__all__ = ["LATENCY_PCT", "NcuSol", "agreement", "sol_of"]
