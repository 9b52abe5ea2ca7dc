"""Rich rendering of `gpuwhy ncu`: per GPU of an Nsight Compute export, the top kernels
on the roofline and the time per regime."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from ..units import fmt_num, fmt_time
from .cells import num, pct
from .console import note, note_left_out, out

_REGIME_STYLE = {
    "compute": "bold magenta",
    "memory": "bold cyan",
    "overhead": "bold yellow",
    "not classifiable": "dim",
}


def render_ncu(report) -> None:
    """Print a :class:`~gpuwhy.importers.ncu.NcuReport`: per GPU, the top kernels and the time per regime."""
    con = out()
    con.print(f"{report.source}: ncu --csv, {report.page} page")
    for d in report.devices:
        c = d.ceilings
        who = f"GPU {d.device}" + (f" ({d.name})" if d.name else "")
        con.print(Text(f"{who} judged against the {d.sheet} sheet: {fmt_num(c['memory_bandwidth_gbs'], 6)} GB/s DRAM, "
                       f"{d.launches} launches, {fmt_time(d.total_time_s)} of kernel time", style="bold"))
        t = Table(title_justify="left", pad_edge=False)
        t.add_column("kernel", overflow="fold", max_width=48)
        t.add_column("launches", justify="right")
        t.add_column("total", justify="right")
        t.add_column("mean", justify="right")
        t.add_column("FLOP/B", justify="right")
        t.add_column("TFLOP/s", justify="right")
        t.add_column("GB/s", justify="right")
        t.add_column("% roof", justify="right")
        t.add_column("regime", no_wrap=True)
        t.add_column("top remedy (or why not classifiable)", overflow="fold", ratio=1)
        for k in d.kernels:
            if k.classifiable:
                regime = Text(k.regime, style=_REGIME_STYLE.get(k.regime, "bold"))
                if k.precision:
                    regime.append(f" {k.precision}", style="dim")
                remedy = k.top_remedy or ""
            else:
                regime = Text("not classifiable", style="dim")
                remedy = k.reason
            t.add_row(
                k.name, str(k.launches), fmt_time(k.total_time_s), fmt_time(k.mean_time_s),
                num(k.intensity), num(k.achieved_tflops), num(k.achieved_gbs, ".0f"), pct(k.roof_pct),
                regime, remedy,
            )
        con.print(t)
        if d.other_kernels:
            con.print(f"... and {d.other_kernels} more kernels ({fmt_time(d.other_time_s)}); --top N shows more")
        parts = Text("time per regime: ", style="bold")
        first = True
        for regime, secs in sorted(d.regime_time_s.items(), key=lambda kv: -kv[1]):
            if not first:
                parts.append(", ")
            first = False
            share = 100 * secs / d.total_time_s if d.total_time_s > 0 else 0.0
            parts.append(f"{regime} {share:.0f}%", style=_REGIME_STYLE.get(regime, ""))
            parts.append(f" ({fmt_time(secs)})")
        con.print(parts)
        con.print(Text("verdict: ", style="bold") + Text(d.verdict))
        for k in d.kernels:
            for n in k.notes:
                note(f"{k.name}: {n}")
    for m in report.messages:
        note(f"ncu: {m}")
    note_left_out("skipped", report.dropped, report.notes)


__all__ = ["render_ncu"]
