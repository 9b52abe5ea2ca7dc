"""When a figure is impossible, not merely suspicious: the one rule for the figures users give gpuwhy.

A figure a little above its roof is *suspicious*: the verdicts say so loudly (a count, a unit or
the sheet is probably off) and still judge it. A figure more than :data:`IMPOSSIBLE_FACTOR` times
the highest roof that could hold it is *impossible*: no clock, cache or counting convention
reaches it, so the input is wrong (a unit, a count, a file of another GPU) and the command refuses
it as an input error (exit 2) naming the figure and the limit, instead of printing a verdict.

Why 1.5x: a sheet's peaks and bandwidths hold at its boost clock and memory clock. GPU Boost,
factory and user overclocks run boards above those by about 10-20% on the SM clock and about
10-15% on the memory clock (consumer boards; data-centre parts stay at or below their sheet), and
the sheets round. Half again the roof is beyond every one of them, and still below what the usual
mistakes give (a time in ms read as us is 1000x; bytes counted twice, 2x).

Where users count FLOPs themselves (``classify``), 2:4 structured sparsity may double the counted
rate (the sheets hold dense peaks): :data:`SPARSITY_FACTOR` allows for it, on top of the fastest
precision the sheet lists. Bytes are held against the fastest memory level
(:func:`~gpuwhy.model.roofline.hierarchy.level_roofs`: L1/shared, else the L2 or DRAM), so a
working set served by a cache is never called impossible.

MFU is the one figure whose roof is 100% itself (model FLOPs over the dense peak, the whole run
including what is not matrix maths): see :func:`gpuwhy.model.llm.mfu.mfu`.
"""

from __future__ import annotations

from ...errors import UsageError
from ...units import fmt_num, fmt_si

#: A figure above this many times the highest roof that could hold it is impossible (see the module docstring).
IMPOSSIBLE_FACTOR = 1.5
#: 2:4 structured sparsity doubles a rate counted in dense FLOPs (NVIDIA's sparse tensor-core peaks are 2x the dense).
SPARSITY_FACTOR = 2.0


def over_roof(value: float, roof: float | None, factor: float = IMPOSSIBLE_FACTOR) -> bool:
    """Whether ``value`` is more than ``factor`` x ``roof`` (same unit); False without a roof (unknown)."""
    return bool(roof) and roof > 0 and value > factor * roof


def impossible_error(what: str, value_text: str, ratio: float, roof_text: str, fix: str,
                     factor: float = IMPOSSIBLE_FACTOR) -> UsageError:
    """The one-line input error for an impossible figure: ``"<what> is impossible: <value> is <ratio>x
    <roof>, more than the <factor>x any boost clock or overclock reaches; <fix>"``."""
    return UsageError(f"{what} is impossible: {value_text} is {fmt_num(ratio)}x {roof_text}, more than the "
                      f"{fmt_num(factor)}x any boost clock or overclock reaches; {fix}")


def refuse_impossible_workload(flops: float | None, bytes_: float, time_s: float | None, sheet, profile=None,
                               what: str = "the measured time") -> None:
    """Refuse a timed workload faster than anything the GPU of ``sheet`` could do.

    Args:
        flops, bytes_: the workload's FLOPs (None: not counted) and bytes (counts); ``time_s``: its
            measured time (s), or None.
        sheet: the :class:`~gpuwhy.specs.Sheet` (every precision's dense peak, the memory roofs).
        profile: a :class:`~gpuwhy.profiles.DeviceProfile` whose measured roofs count too, or None.
        what: how the message names the time (``--point gemm's time``).

    Raises:
        UsageError: ``bytes_ / time_s`` is above :data:`IMPOSSIBLE_FACTOR` x the fastest memory level's
            roof, or ``flops / time_s`` above :data:`IMPOSSIBLE_FACTOR` x :data:`SPARSITY_FACTOR` x the
            sheet's fastest dense peak (any precision).
    """
    from .hierarchy import level_roofs

    if time_s is None or not time_s > 0:
        return
    roofs = level_roofs(sheet, profile, measured=profile is not None)
    fastest = max(roofs.values(), key=lambda r: r.bandwidth)
    rate = bytes_ / time_s
    if over_roof(rate, fastest.bandwidth):
        where = "L1/shared" if fastest.level == "L1" else fastest.level
        raise impossible_error(f"{what} {_time(time_s)}", f"{fmt_si(bytes_, 'B')} at {fmt_si(rate, 'B/s')}",
                               rate / fastest.bandwidth,
                               f"the fastest memory roof of the {sheet.name} ({where}, {fmt_si(fastest.bandwidth, 'B/s')})",
                               "check the time's unit and the byte count")
    if flops is None:  # not counted: no FLOP rate to hold against a peak
        return
    peak_prec = max(sheet.peak_tflops, key=lambda p: sheet.peak_tflops[p])
    peak = SPARSITY_FACTOR * sheet.peak_tflops[peak_prec] * 1e12
    rate = flops / time_s
    if over_roof(rate, peak):
        raise impossible_error(f"{what} {_time(time_s)}", f"{fmt_si(flops, 'FLOP')} at {fmt_si(rate, 'FLOP/s')}",
                               rate / peak,
                               f"the fastest peak of the {sheet.name} ({peak_prec} with 2:4 sparsity, {fmt_si(peak, 'FLOP/s')})",
                               "check the time's unit and the FLOP count")


def above_roof(name: str, verdict) -> str | None:
    """The loud warning of a timed point above 100% of its roof (a
    :class:`~gpuwhy.model.roofline.classify.Verdict`): suspicious, not impossible (below
    :data:`IMPOSSIBLE_FACTOR` of the fastest roof it is still judged), but no kernel beats its roof, so
    a count, the time, the precision or the GPU is wrong. None at or below 100% or untimed. The
    ``report`` and ``roofline`` points say it in the terminal, on the page and in ``--json``."""
    from ...units import fmt_pct

    sol = verdict.sol_pct
    if sol is None or not sol > 100:
        return None
    prec = verdict.ceilings.precision
    return (f"{name}: {fmt_pct(sol)} of its {prec} roof, faster than the roofline allows: check the FLOP and byte "
            f"counts, the time, its precision (judged against {prec}; give another as the point's DTYPE field, "
            "NAME:FLOPS:BYTES:TIME:DTYPE) and the GPU")


def _time(seconds: float) -> str:
    from ...units import fmt_time

    return fmt_time(seconds)


__all__ = ["IMPOSSIBLE_FACTOR", "SPARSITY_FACTOR", "above_roof", "impossible_error", "over_roof", "refuse_impossible_workload"]
