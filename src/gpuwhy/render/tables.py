"""Rich renderings of classify and spec-sheet results."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from ..units import fmt_g, fmt_num, fmt_pct, fmt_si, fmt_time
from .console import out

_REGIME_STYLE = {"compute": "bold magenta", "memory": "bold cyan", "overhead": "bold yellow", "latency": "bold red",
                 "issue": "bold red"}


def _kv_table(title: str) -> Table:
    t = Table(title=title, show_header=False, title_justify="left", box=None, pad_edge=False)
    t.add_column(style="bold")
    t.add_column()
    return t


def render_classification(c) -> None:
    """Print a :class:`~gpuwhy.api.classify.Classification`: the numbers, the verdict, the remedies."""
    v = c.verdict
    w, ce = v.workload, v.ceilings
    con = out()
    counted = w.flops is not None
    title = f"{w.name}: {fmt_si(w.flops, 'FLOP') if counted else 'FLOPs not counted'}, {fmt_si(w.bytes, 'B')}"
    if w.launches > 1:
        title += f", {w.launches} launches"
    if getattr(c, "counts", None) is not None:
        from .shape_view import render_counts

        render_counts(c.counts, c.shape_advice)
    t = _kv_table(title)
    t.add_row("GPU", f"{ce.gpu} ({ce.source})")
    t.add_row("ceilings", f"{fmt_si(ce.peak_flops, 'FLOP/s')} {ce.precision} dense peak, {fmt_si(ce.bandwidth, 'B/s')} "
                          f"{getattr(ce, 'level', 'DRAM')}")
    t.add_row("arithmetic intensity", f"{fmt_num(v.arithmetic_intensity)} FLOP/byte" if counted else "n/a (FLOPs not counted)")
    if c.spec_ridge_point is not None:
        t.add_row("ridge point", f"{fmt_num(v.ridge_point)} FLOP/byte measured, {fmt_num(c.spec_ridge_point)} on the spec sheet")
    else:
        t.add_row("ridge point", f"{fmt_num(v.ridge_point)} FLOP/byte")
    if counted:
        t.add_row("attainable", f"{fmt_si(v.attainable_flops, 'FLOP/s')} (min(peak, bandwidth x intensity))")
    t.add_row("t_compute", fmt_time(v.t_compute_s) if counted else "n/a (FLOPs not counted)")
    t.add_row("t_memory", fmt_time(v.t_memory_s))
    t.add_row("t_overhead", f"{fmt_time(v.t_overhead_s)} ({w.launches} x {fmt_time(ce.launch_overhead_s)}, {ce.launch_overhead_source})")
    t.add_row("predicted time", fmt_time(v.predicted_time_s))
    if w.time_s is not None:
        t.add_row("measured time", fmt_time(w.time_s))
        t.add_row("achieved", f"{fmt_si(v.achieved_flops, 'FLOP/s')}, {fmt_si(v.achieved_bandwidth, 'B/s')}" if counted
                  else fmt_si(v.achieved_bandwidth, 'B/s'))
        if v.sol_pct is not None:
            t.add_row(
                "speed of light",
                f"{fmt_pct(v.sol_pct)} of the roof (compute {fmt_pct(v.compute_sol_pct)}, memory {fmt_pct(v.memory_sol_pct)})"
                if counted else f"{fmt_pct(v.sol_pct)} of the memory roof (the compute roof not checked)",
            )
        else:
            t.add_row("speed of light", "n/a: the memory roof is unknown"
                      + (f" (compute {fmt_pct(v.compute_sol_pct)})" if counted else " (and the FLOPs were not counted)"))
        if v.unexplained_fraction is not None:
            t.add_row("unexplained", f"{100 * v.unexplained_fraction:.0f}% of the measured time")
    con.print(t)
    ratio = "" if v.bound_ratio == float("inf") else f" ({fmt_num(v.bound_ratio)}x the next term)"
    from ..model.roofline.hierarchy import regime_text

    verdict = Text("verdict: ", style="bold")
    verdict.append(regime_text(v.regime), style=_REGIME_STYLE.get(v.regime, "bold"))
    verdict.append(ratio if v.regime in ("compute", "memory", "overhead") else "")
    con.print(verdict)
    for line in getattr(getattr(c, "hierarchy", None), "lines", ()):
        con.print(Text("  " + line))
    for line in v.warnings:
        con.print(Text("warning: ", style="bold yellow") + Text(line))
    diag = getattr(c, "diagnosis", None)
    render_remedies(c.remedies, gains=diag is None)
    if diag is not None:  # a measured time: the verdict engine's "at most", the figures --json gives
        from .diagnosis_view import fixes_table

        con.print(Text(diag.line, style="bold"))
        fixes = fixes_table(diag)
        if fixes is not None:
            con.print(fixes)
    for h in c.remedies.hints:
        con.print(Text("hint: ", style="bold") + Text(h))
    for n in c.notes:
        con.print(Text("note: ", style="bold") + Text(n))


def _gain_cell(step) -> str:
    g = step.gain
    if g is None:
        return "-"
    return "unbounded" if g.speedup == float("inf") else f"{fmt_num(g.speedup)}x"


def render_remedies(r, gains: bool = True) -> None:
    """Print :class:`~gpuwhy.model.roofline.remedies.Remedies`: what helps in stage order, each with the
    most it can gain here (and the roof that stops it), then what does not help. ``gains`` False leaves
    the gains out (a measured time: the verdict engine's fixes table gives the one set of ceilings)."""
    from ..model.roofline.remedies import STAGE_WORDS

    con = out()
    title = ("remedies, in the order to try them (up to: the most each can gain here, from the roofs)" if gains
             else "remedies, in the order to try them (what each can give: the fixes below)")
    rem = Table(show_header=True, box=None, pad_edge=False, title_justify="left", title=title)
    rem.add_column("stage", style="bold", no_wrap=True)
    rem.add_column("helps", style="green", ratio=1)
    if gains:
        rem.add_column("up to", justify="right", no_wrap=True)
    for step in r.steps:
        text = Text(step.text)
        if gains and step.gain is not None and step.gain.capped_by:
            text.append(f" (then {step.gain.capped_by}-bound)", style="dim")
        row = [STAGE_WORDS.get(step.stage, step.stage), text] + ([_gain_cell(step)] if gains else [])
        rem.add_row(*row)
    con.print(rem)
    if r.does_not_help:
        dn = Table(show_header=True, box=None, pad_edge=False)
        dn.add_column("does not help", style="red")
        for line in r.does_not_help:
            dn.add_row(line)
        con.print(dn)


def render_sheet_list(sheets) -> None:
    """Print one row per sheet: name, architecture, bandwidth, fp32/bf16 peaks, origin."""
    t = Table(title="spec sheets (dense peaks)", title_justify="left")
    t.add_column("name", no_wrap=True)
    t.add_column("arch", no_wrap=True)
    t.add_column("cc", no_wrap=True)
    for col in ("DRAM GB/s", "fp32 TFLOP/s", "bf16 TFLOP/s", "ridge bf16"):
        t.add_column(col, justify="right")
    t.add_column("origin", no_wrap=True)
    for s in sheets:
        bf16 = s.peak_tflops.get("bf16")
        t.add_row(
            s.name,
            s.architecture,
            s.compute_capability,
            f"{fmt_g(s.memory_bandwidth_gbs)}",
            f"{fmt_g(s.peak_tflops['fp32'])}",
            "n/a" if bf16 is None else f"{fmt_g(bf16)}",
            "n/a" if bf16 is None else f"{s.ridge_point('bf16'):.0f}",
            s.origin,
        )
    out().print(t)


def render_sheet(s) -> None:
    """Print one sheet: identity, memory, and per precision the peak, ridge point and source."""
    con = out()
    t = _kv_table(f"{s.name} ({s.vendor} {s.architecture}, compute capability {s.compute_capability})")
    t.add_row("NVML names", ", ".join(s.nvml_names) or "n/a")
    if s.aliases:
        t.add_row("aliases", ", ".join(s.aliases))
    t.add_row("PCI device ids", ", ".join(s.pci_device_ids) or "n/a")
    t.add_row("SMs", f"{s.sm_count}" + (f" x {s.fp32_lanes_per_sm} FP32 lanes" if s.fp32_lanes_per_sm else ""))
    t.add_row("boost clock", f"{fmt_g(s.boost_clock_mhz)} MHz")
    bus = f", {s.memory_bus_width_bits}-bit bus" if s.memory_bus_width_bits else ""
    t.add_row("memory", f"{fmt_g(s.memory_size_gb)} GB {s.memory_type}{bus}, {fmt_g(s.memory_bandwidth_gbs)} GB/s")
    t.add_row("L2", f"{fmt_g(s.l2_cache_mib)} MiB")
    t.add_row("board power", f"{fmt_g(s.board_power_w)} W")
    t.add_row("file", f"{s.path} ({s.origin})")
    con.print(t)
    p = Table(title="dense peaks and ridge points", title_justify="left")
    p.add_column("precision")
    p.add_column("TFLOP/s", justify="right")
    p.add_column("ridge FLOP/byte", justify="right")
    p.add_column("source")
    for prec, tf in s.peak_tflops.items():
        p.add_row(prec, f"{fmt_g(tf)}", f"{s.ridge_point(prec):.1f}", s.source_for(f"peak_tflops.{prec}"))
    con.print(p)
    con.print(f"bandwidth source: {s.source_for('memory_bandwidth_gbs')}")
    for n in s.notes:
        con.print(f"note: {n}")
