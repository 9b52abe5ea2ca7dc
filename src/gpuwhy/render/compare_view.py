"""Rendering of `gpuwhy compare` (table, ranking sentence, overlaid text roofline, optional
matplotlib file) and of `gpuwhy occupancy`."""

from __future__ import annotations

from typing import Sequence

from ..units import fmt_g, fmt_num, fmt_si, fmt_time
from .fit import chart_columns

#: Markers of the GPUs in the text roofline, in the order given; ``*`` marks cells two GPUs share.
MARKERS = "123456789abcdefghijklmnopqrstuvwxyz"
_REGIME_STYLE = {"compute": "bold magenta", "memory": "bold cyan"}


# ---------------------------------------------------------------------------
# The text roofline (pure: returns lines)
# ---------------------------------------------------------------------------


def text_roofline(
    series: Sequence[tuple[str, float, float]],
    intensity: float | None = None,
    width: int = 64,
    height: int = 16,
) -> list[str]:
    """A log-log roofline of several GPUs as text lines.

    Args:
        series: ``(name, peak FLOP/s, bandwidth B/s)`` per GPU; the i-th is drawn
            with ``MARKERS[i]`` (``*`` where two GPUs' roofs share a cell).
        intensity: the workload's FLOP/byte, drawn as a column of ``|``.
        width, height: the plot area in characters.

    The x axis is FLOP/byte, the y axis FLOP/s, both in decades; each roof is
    min(peak, bandwidth x I). The legend follows the plot. Drawn on the shared
    :class:`~gpuwhy.render.plot.LogCanvas`.
    """
    from .plot import LogCanvas
    from .roofline_geometry import decade_ceil, decade_floor

    series = [s for s in series if s[1] and s[2]]
    if not series:
        return []
    ridges = [p / b for _, p, b in series]
    xs = ridges + ([intensity] if intensity else [])
    x_lo, x_hi = decade_floor(min(xs) / 10), decade_ceil(max(xs) * 10)
    y_hi = decade_ceil(max(p for _, p, _ in series) * 1.01)
    y_lo = decade_floor(min(b * x_lo for _, _, b in series))
    cv = LogCanvas(x_lo, x_hi, y_lo, y_hi, width, height)
    if intensity:
        cv.vline(intensity, "|")
    for i, (_, peak, bw) in enumerate(series):
        cv.roof(peak, bw, MARKERS[i] if i < len(MARKERS) else "+")
    lines = cv.lines()
    if intensity:
        lines.append(cv.pointer(intensity, f"workload at {fmt_num(intensity)} FLOP/byte"))
    for i, (name, peak, bw) in enumerate(series):
        mark = MARKERS[i] if i < len(MARKERS) else "+"
        lines.append(f"  {mark}  {name}: {fmt_g(bw / 1e9)} GB/s, {fmt_si(peak, 'FLOP/s')}, ridge {fmt_num(peak / bw)} FLOP/byte")
    if cv.contains("*"):
        lines.append("  *  two or more GPUs share the cell")
    return lines


# ---------------------------------------------------------------------------
# compare
# ---------------------------------------------------------------------------


_PREFIXES = ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))


def column_scale(values, unit: str) -> tuple[float, str]:
    """``(divisor, header unit)`` so a column's largest value reads between 1 and 1000,
    e.g. FLOP/s values up to 2.5e15 -> ``(1e15, "PFLOP/s")``; counts in tokens stay plain."""
    vals = [abs(v) for v in values if v is not None]
    if vals and unit == "tok/J" and max(vals) < 1:
        return 1e-3, "tok/kJ"
    if not vals or unit.startswith("tok"):
        return 1.0, unit
    top = max(vals)
    for f, p in _PREFIXES:
        if top >= f * 0.9995:
            return f, p + unit
    return 1.0, unit


def roofline_series(c) -> list[tuple[str, float, float]]:
    """``(name, peak FLOP/s, bandwidth B/s)`` of each row of a :class:`~gpuwhy.model.roofline.compare.GpuComparison` with figures."""
    return [(r.gpu, r.peak_flops, r.bandwidth) for r in c.rows if r.peak_flops]


def render_compare(c, plot: bool = True) -> None:
    """Print a :class:`~gpuwhy.model.roofline.compare.GpuComparison`: one row per GPU, the
    sentence that says what decides the ranking, notes, and (``plot``) the
    overlaid text roofline."""
    from rich.table import Table
    from rich.text import Text

    from .console import out

    con = out()
    llm = c.kind == "llm"
    precs = sorted({r.precision for r in c.rows if r.precision})
    t = Table(title=f"compare: {c.workload}" + f"; dense {'/'.join(precs)} peaks", title_justify="left")
    thr_f, thr_u = column_scale([r.throughput for r in c.rows], "tokens/s" if llm else "FLOP/s")
    usd_f, usd_u = column_scale([r.per_dollar for r in c.rows], "tok/$" if llm else "FLOP/$")
    w_f, w_u = column_scale([r.per_watt for r in c.rows], "tok/J" if llm else "FLOP/J")
    t.add_column("#", justify="right")
    t.add_column("GPU", no_wrap=True)
    t.add_column("GB/s", justify="right")
    t.add_column("TFLOP/s", justify="right")
    t.add_column("ridge", justify="right")
    t.add_column("bound", no_wrap=True)
    t.add_column(thr_u if llm else f"attainable {thr_u}", justify="right")
    has_time = any(r.time_s is not None for r in c.rows)
    if has_time:
        t.add_column("step time" if llm else "time", justify="right")
    t.add_column("speed-up", justify="right")
    costs = any(r.usd_per_hour is not None for r in c.rows)
    watts = any(r.board_power_w is not None and r.per_watt is not None for r in c.rows)
    if costs:
        t.add_column("$/h", justify="right")
        t.add_column(f"per $ {usd_u}", justify="right")
    if watts:
        t.add_column("W", justify="right")
        t.add_column(f"per W {w_u}", justify="right")
    if llm:
        t.add_column("fits")
    for r in c.rows:
        if r.missing:
            row = ["", r.gpu, f"{fmt_g(r.bandwidth / 1e9)}", Text("n/a", style="yellow"), "", "", "n/a"]
            row += ["n/a"] if has_time else []
            row += ["n/a"]
            row += ["n/a" if r.usd_per_hour is None else f"{fmt_g(r.usd_per_hour)}", "n/a"] if costs else []
            row += [f"{fmt_g(r.board_power_w)}" if r.board_power_w else "n/a", "n/a"] if watts else []
            row += ["n/a"] if llm else []
            t.add_row(*row)
            continue
        bw = f"{fmt_g(r.bandwidth / 1e9)}" + ("*" if r.bandwidth_source != "spec sheet" else "")
        row = [
            str(r.rank),
            r.gpu + (f" x{r.num_gpus}" if r.num_gpus > 1 else ""),
            bw,
            f"{fmt_g(r.peak_flops / 1e12)}" + (f" {r.precision}" if len(precs) > 1 else ""),
            f"{fmt_num(r.ridge_point)}",
            Text(r.regime or "", style=_REGIME_STYLE.get(r.regime or "", "")),
            fmt_num(None if r.throughput is None else r.throughput / thr_f),
        ]
        if has_time:
            row.append(fmt_time(r.time_s) if r.time_s is not None else "n/a")
        row.append("n/a" if r.speedup is None else f"{r.speedup:.2f}x")
        if costs:
            row += ["n/a" if r.usd_per_hour is None else f"{fmt_g(r.usd_per_hour)}", fmt_num(None if r.per_dollar is None else r.per_dollar / usd_f)]
        if watts:
            row += [f"{fmt_g(r.board_power_w)}", fmt_num(None if r.per_watt is None else r.per_watt / w_f)]
        if llm:
            row.append("n/a" if r.fits is None else ("yes" if r.fits else Text("no", style="red")))
        t.add_row(*row)
    con.print(t)
    con.print(Text(c.sentence))
    for r in c.rows:
        if r.missing:
            con.print(Text(f"{r.gpu}: ", style="bold yellow") + Text(r.missing + "; no figures"))
    if c.ranking:
        groups: list[list[str]] = []
        rank_of = {r.gpu: r.rank for r in c.rows}
        for name in c.ranking:
            if groups and rank_of[groups[-1][0]] == rank_of[name]:
                groups[-1].append(name)
            else:
                groups.append([name])
        con.print(Text("ranking: ", style="bold") + Text(" > ".join(" = ".join(g) for g in groups)))
    if any(r.bandwidth_source != "spec sheet" for r in c.rows):
        for r in c.rows:
            if r.bandwidth_source != "spec sheet":
                con.print(Text(f"* {r.gpu}: bandwidth {r.bandwidth_source}"))
    for n in c.notes:
        con.print(Text("note: ", style="bold") + Text(n))
    for w in c.warnings:
        con.print(Text("warning: ", style="bold yellow") + Text(w))
    for r in c.rows:
        for n in r.notes:
            con.print(Text(f"{r.gpu}: ", style="bold") + Text(n))
    if not llm:
        con.print(Text("attainable = min(peak, bandwidth x intensity); launch overhead left out (gpuwhy classify counts it).", style="dim"))
    else:
        con.print(Text("tokens/s are decode ceilings (see gpuwhy llm); real engines reach about 60-85% of them.", style="dim"))
    if plot:
        lines = text_roofline(roofline_series(c), c.intensity, width=chart_columns(con.width))
        if lines:
            con.print(Text("roofline (log-log)", style="bold"))
            for line in lines:
                con.print(Text(line))


def save_roofline_plot(c, path: str) -> str:
    """Draw the overlaid rooflines of a comparison to ``path`` (``.png`` or ``.svg``) with matplotlib.

    Returns the path written.

    Raises:
        UsageError: matplotlib is not installed, or the file cannot be written.
    """
    from .plot import require_pyplot, save_figure
    from .roofline_geometry import decade_ceil, decade_floor, log_grid

    plt = require_pyplot()
    series = roofline_series(c)
    ridges = [p / b for _, p, b in series]
    xs = ridges + ([c.intensity] if c.intensity else [])
    lo, hi = decade_floor(min(xs) / 10), decade_ceil(max(xs) * 10)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    grid = log_grid(lo, hi, 200)
    for name, peak, bw in series:
        ax.plot(grid, [min(peak, bw * x) for x in grid], label=f"{name} (ridge {fmt_num(peak / bw)})")
    if c.intensity:
        ax.axvline(c.intensity, color="grey", linestyle="--", linewidth=1, label=f"workload {fmt_num(c.intensity)} FLOP/byte")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("attainable FLOP/s")
    ax.set_title(f"gpuwhy compare: {c.workload}")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    save_figure(plt, fig, path)
    return path


# ---------------------------------------------------------------------------
# occupancy
# ---------------------------------------------------------------------------


def render_occupancy(o) -> None:
    """Print an :class:`~gpuwhy.model.kernels.occupancy.Occupancy`: the result, each
    resource's limit with its arithmetic (the binding ones marked), notes and suggestions."""
    from rich.table import Table
    from rich.text import Text

    from .console import out

    con = out()
    lim = o.limits
    who = f"{o.gpu} ({lim.arch}, {lim.name})" if o.gpu else f"{lim.arch} ({lim.name})"
    smem = f"{o.shared_mem_bytes} B shared memory" if o.shared_mem_bytes else "no shared memory"
    title = f"occupancy on {who}: {o.block_size} threads, {o.registers} registers per thread, {smem} per block"
    head = Table(title=title, show_header=False, title_justify="left", box=None, pad_edge=False)
    head.add_column(style="bold", no_wrap=True)
    head.add_column()
    style = "bold green" if o.occupancy_pct >= 75 else ("bold yellow" if o.occupancy_pct >= 40 else "bold red")
    head.add_row("occupancy", Text(f"{o.occupancy_pct:.1f}%", style=style) + Text(f" ({o.active_warps} of {lim.max_warps_per_sm} warps per SM)"))
    head.add_row("active per SM", f"{o.active_blocks} block{'s' if o.active_blocks != 1 else ''}, {o.active_warps} warps, {o.active_threads} threads")
    head.add_row("binding limit", Text(", ".join(o.binding) or "none", style="bold"))
    head.add_row("per block", f"{o.warps_per_block} warps, {o.registers_per_block} registers ({o.registers_per_warp} per warp), "
                 f"{o.shared_mem_per_block_allocated} B shared memory allocated")
    if o.blocks_per_wave is not None:
        head.add_row("one wave", f"{o.blocks_per_wave} blocks ({o.active_blocks} x {o.sm_count} SMs): a grid of fewer leaves SMs idle")
    con.print(head)
    t = Table(title="limits (blocks per SM)", title_justify="left")
    t.add_column("resource", no_wrap=True)
    t.add_column("blocks", justify="right")
    t.add_column("arithmetic")
    for x in o.by_resource:
        mark = x.resource in o.binding
        t.add_row(
            Text(x.resource + (" *" if mark else ""), style="bold" if mark else ""),
            "no limit" if x.blocks is None else str(x.blocks),
            Text(x.detail),
        )
    con.print(t)
    for w in o.warnings:
        con.print(Text("warning: ", style="bold yellow") + Text(w))
    if o.suggestions:
        s = Table(title="to raise it", show_header=False, title_justify="left", box=None, pad_edge=False)
        s.add_column(style="green")
        for sg in o.suggestions:
            s.add_row(Text("- " + sg.text))
        con.print(s)
    for n in o.notes:
        con.print(Text("note: ", style="bold") + Text(n))
    con.print(Text(f"limits: {lim.source} ({lim.origin}); rules: the CUDA Occupancy Calculator (cuda_occupancy.h)", style="dim"))
