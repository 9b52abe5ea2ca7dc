"""Rich rendering of the compute-ceiling results (`gpuwhy bench --compute`)."""

from __future__ import annotations

from rich.table import Table

from ..units import fmt_fixed, fmt_g, fmt_num, fmt_pct
from .console import out


def render_compute(results, device_name: str = "") -> None:
    """Print one row per :class:`~gpuwhy.bench.compute.ComputeResult`.

    Columns: precision, unit, kernel, measured TFLOP/s, the clock-derived peak at
    the SM clock sampled while timing (and that clock), the sheet's dense peak,
    both percentages, clock-event reasons, and the correctness check.
    """
    con = out()
    t = Table(title=f"compute ceilings{(' on ' + device_name) if device_name else ''} (dense; int8 in TOPS)",
              title_justify="left", pad_edge=False)
    for name, kw in (
        ("precision", {}), ("unit", {}), ("kernel", {}), ("TFLOP/s", {"justify": "right"}),
        ("SM clock", {"justify": "right"}), ("clock peak", {"justify": "right"}), ("% clock", {"justify": "right"}),
        ("sheet", {"justify": "right"}), ("% sheet", {"justify": "right"}), ("clock events", {}), ("check", {}),
    ):
        t.add_column(name, **kw)
    notes: list[str] = []
    for r in results:
        if r.status != "measured":
            t.add_row(r.precision, r.unit, r.kernel or "-", r.status, "", "", "", fmt_g(r.sheet_peak_tflops), "", "", r.note[:60])
            continue
        clock = "n/a" if r.sm_clock_mhz is None else f"{r.sm_clock_mhz:.0f} MHz"
        t.add_row(
            r.precision, r.unit, r.variant or r.kernel, f"{r.tflops:.1f}", clock, fmt_fixed(r.clock_peak_tflops, 1, grouped=False),
            fmt_pct(r.pct_of_clock_peak, compact=False), fmt_g(r.sheet_peak_tflops), fmt_pct(r.pct_of_sheet, compact=False),
            ", ".join(r.clock_events) or "none", r.verify,
        )
        if r.note and r.note not in notes:
            notes.append(r.note)
    con.print(t)
    for n in notes:
        con.print(f"note: {n}", soft_wrap=True)
    con.print("Tensor-core figures are the instruction-issue peak of a loop with operands in registers and shared "
              "memory; a real GEMM, which also moves its operands, reaches less.", soft_wrap=True)
