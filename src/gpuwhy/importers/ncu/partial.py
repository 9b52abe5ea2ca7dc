"""A partial verdict for a kernel whose export has its pipe utilisations but no memory figure:
what the busiest pipe (else ncu's SM throughput) rules out, and the metrics that would decide it."""

from __future__ import annotations

from ...units import fmt_num, fmt_pct


#: How a kernel's ``how["regime"]`` starts when only its pipes give a partial verdict
#: (:func:`partial_from_pipes`); the rest of it up to `` (`` is the verdict's short form.
PARTIAL_PREFIX = "partial: "


def partial_from_pipes(util: dict[str, float], pipe: str | None) -> tuple[str, str] | None:
    """``(short verdict, the reason in words)`` from a kernel's busiest pipe (else ncu's SM throughput)
    when the export has no memory figure at all, or None without either utilisation.

    The busiest arithmetic pipe at ``p`` percent of its peak needs ``p``% of the kernel's time at
    full speed (:mod:`gpuwhy.model.roofline.utilisation`); memory can need at most all of it. So at
    or above :data:`~gpuwhy.model.roofline.issue_bound.BUSY_PCT` (60%, the line of ncu's SOLBottleneck
    rule) the kernel is compute-bound or within ``100 / p`` times of it ("near compute-bound");
    below it the unit is not busy, which rules out compute-bound ("not compute-bound": ncu then
    reports memory or latency issues). The reason names the metrics that would decide it.
    """
    from ...model.roofline.issue_bound import BUSY_PCT

    if "pipe" in util:
        p, unit = util["pipe"], f"its busiest pipe ({pipe})" if pipe else "its busiest pipe"
    elif "sm" in util:
        p, unit = util["sm"], "the SM (ncu's SM throughput)"
    else:
        return None
    decide = ("no memory figure in the export: add --metrics dram__bytes_read.sum,dram__bytes_write.sum "
              "(or the SpeedOfLight section) to decide it")
    if p >= BUSY_PCT:
        within = f"within {fmt_num(100.0 / p)}x of it" if p < 100 else "at its roof"
        return "near compute-bound", (
            f"partial verdict, near compute-bound: {unit} ran at {fmt_pct(p, 0)} of peak, so arithmetic alone needs "
            f"{fmt_pct(p, 0)} of the time: compute-bound, or {within} if memory limits it; {decide}")
    return "not compute-bound", (
        f"partial verdict, not compute-bound: {unit} ran at {fmt_pct(p, 0)} of peak, under the "
        f"{fmt_pct(BUSY_PCT, 0)} at which a unit is busy; memory bandwidth, memory latency or instruction issue "
        f"limits it; {decide}")


__all__ = ["PARTIAL_PREFIX", "partial_from_pipes"]
