"""Roofline drawings: the shared text canvas and matplotlib helpers, the roofline chart
of `gpuwhy roofline` and `classify --plot`, and the tables of `bench --roofline`.

Two back ends draw the same :class:`~gpuwhy.render.roofline_chart.RooflineChart` (built in
:mod:`gpuwhy.render.roofline_chart`), both from the geometry of
:mod:`gpuwhy.render.roofline_geometry` (the one the HTML report's SVG uses too):

- :func:`text_chart`: a log-log roofline in the terminal (:class:`LogCanvas`, also
  used by `gpuwhy compare`'s text roofline), on whole decades
  (:meth:`~gpuwhy.render.roofline_geometry.Frame.compact`);
- :func:`save_chart`: a PNG or SVG file through matplotlib (the optional extra
  ``pip install 'gpuwhy[plot]'``; Agg back end, no display needed), laid out like
  the report's SVG (:meth:`~gpuwhy.render.roofline_geometry.Frame.labelled`, the
  same label placement).

Conventions in both: x = arithmetic intensity (FLOP/byte), y = FLOP/s with SI
prefixes (OP/s for integer precisions), both logarithmic; spec-sheet ceilings
dashed, measured ceilings solid; ridge points marked on their roof; the
mixed-intensity sweep as a line of dots; workload points labelled with their
verdict (:func:`gpuwhy.model.roofline.classify.classify`).

Building a chart is pure (no I/O): :func:`~gpuwhy.render.roofline_chart.build_chart` takes a
sheet, optional measured ceilings from a device profile and workload points.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..units import fmt_decade, fmt_num, fmt_pct, fmt_si
from .fit import chart_columns
from .roofline_chart import (  # noqa: F401  (the chart's parts: importable here too, beside the drawings)
    PointSpec, RooflineChart, SweepSeries, WorkloadPoint, build_chart, ceiling_key, chart_from_classification,
    chart_from_sweep, chart_slopes,
)
from .roofline_geometry import LEVEL_WORDS

#: The one line every plotting path raises when matplotlib is missing.
MISSING_MATPLOTLIB = "plots need matplotlib: pip install 'gpuwhy[plot]'"
#: File types the plotting paths write, and the check of a plot's path: with the file guard (gpuwhy.outputs).
from ..outputs import PLOT_SUFFIXES, check_plot_path  # noqa: E402,F401


# ---------------------------------------------------------------------------
# The text canvas (pure: returns lines)
# ---------------------------------------------------------------------------


class LogCanvas:
    """A character grid with log-log axes: x in FLOP/byte, y in ``unit`` (FLOP/s), ticks
    written as in every roofline drawing (:func:`~gpuwhy.units.fmt_decade` on x,
    :func:`~gpuwhy.units.fmt_si` of the decade on y).

    Args:
        x_lo, x_hi, y_lo, y_hi: the axis ranges (powers of ten read best).
        width, height: the plot area in characters.
        unit: the y unit (``FLOP/s``; ``OP/s`` for integer precisions).
    """

    def __init__(self, x_lo: float, x_hi: float, y_lo: float, y_hi: float, width: int = 64, height: int = 16,
                 unit: str = "FLOP/s"):
        self.width, self.height, self.unit = int(width), int(height), unit
        self.lx0, self.lx1, self.ly0, self.ly1 = (math.log10(v) for v in (x_lo, x_hi, y_lo, y_hi))
        self.grid = [[" "] * self.width for _ in range(self.height)]

    def row_of(self, y: float) -> int:
        """Grid row of FLOP/s ``y`` (row 0 at the top), clamped to the grid."""
        r = int((math.log10(y) - self.ly0) / (self.ly1 - self.ly0) * self.height)
        return self.height - 1 - min(max(r, 0), self.height - 1)

    def col_of(self, x: float) -> int:
        """Grid column of FLOP/byte ``x``, clamped to the grid."""
        c = int((math.log10(x) - self.lx0) / (self.lx1 - self.lx0) * self.width)
        return min(max(c, 0), self.width - 1)

    def x_at(self, col: int) -> float:
        """FLOP/byte at the middle of column ``col``."""
        return 10 ** (self.lx0 + (col + 0.5) / self.width * (self.lx1 - self.lx0))

    def vline(self, x: float, ch: str = "|") -> None:
        """A vertical line at FLOP/byte ``x``."""
        c = self.col_of(x)
        for r in range(self.height):
            self.grid[r][c] = ch

    def roof(self, peak: float, bandwidth: float, mark: str, dashed: bool = False, overlap: str = "*",
             passable: str = " |") -> None:
        """Draw min(peak, bandwidth x I) with ``mark``; a cell already holding another mark
        becomes ``overlap`` (cells in ``passable`` are overwritten). Vertical gaps between
        neighbouring columns are filled so steep slopes stay connected. ``dashed`` draws
        every other column only."""
        prev = None
        for c in range(self.width):
            r = self.row_of(min(peak, bandwidth * self.x_at(c)))
            rows = [r] if prev is None else range(min(prev, r), max(prev, r) + 1) if abs(prev - r) > 1 else [r]
            prev = r
            if dashed and c % 2:
                continue
            for rr in rows:
                cell = self.grid[rr][c]
                self.grid[rr][c] = mark if (cell in passable or cell == mark) else overlap

    def put(self, x: float, y: float, ch: str) -> None:
        """One marker at (FLOP/byte ``x``, FLOP/s ``y``), over whatever is there."""
        self.grid[self.row_of(y)][self.col_of(x)] = ch

    def contains(self, ch: str) -> bool:
        """Whether any cell holds ``ch``."""
        return any(ch in row for row in self.grid)

    def y_labels(self) -> dict[int, str]:
        """Decade labels by row (``1 PFLOP/s``, ``100 TFLOP/s``, ...)."""
        labels = {}
        for k in range(round(self.ly0), round(self.ly1) + 1):
            row = self.row_of(10.0**k * 1.0001) if k < round(self.ly1) else 0
            labels[row] = fmt_si(10.0**k, self.unit)
        return labels

    @property
    def label_width(self) -> int:
        return max(len(v) for v in self.y_labels().values())

    def lines(self, x_unit: str = "FLOP/byte") -> list[str]:
        """The grid with its y labels, the x axis and its decade ticks."""
        labels = self.y_labels()
        lw = max(len(v) for v in labels.values())
        out = [f"{labels.get(r, ''):>{lw}} |" + "".join(self.grid[r]) for r in range(self.height)]
        out.append(" " * lw + " +" + "-" * self.width)
        axis = [" "] * (self.width + 12)
        for k in range(round(self.lx0), round(self.lx1) + 1):
            c = self.col_of(10.0**k * 1.0001) if k < round(self.lx1) else self.width - 1
            t = fmt_decade(k)
            start = min(max(c - len(t) // 2, 0), self.width + 12 - len(t))
            if all(ch == " " for ch in axis[max(start - 1, 0): start + len(t) + 1]):
                axis[start: start + len(t)] = t
        out.append(" " * (lw + 2) + "".join(axis).rstrip() + f"   {x_unit}")
        return out

    def pointer(self, x: float, text: str) -> str:
        """A line with ``^`` under column of ``x`` followed by ``text``."""
        return " " * (self.label_width + 2) + " " * self.col_of(x) + f"^ {text}"


# ---------------------------------------------------------------------------
# matplotlib
# ---------------------------------------------------------------------------


def require_pyplot(missing: str = MISSING_MATPLOTLIB):
    """``matplotlib.pyplot`` on the Agg back end (no display needed).

    Raises:
        UsageError: matplotlib is not installed (``missing``: one line saying how to install it).
    """
    from ..errors import UsageError

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise UsageError(missing) from None
    return plt


def save_figure(plt, fig, path: str) -> str:
    """Write ``fig`` to ``path`` (marked as gpuwhy's in its metadata) and close it; returns the path.

    Raises:
        UsageError: the file cannot be written, or it exists and gpuwhy did not write it.
    """
    from ..version import __version__
    from ..errors import UsageError
    from .outputs import writable_output

    writable_output(path, "plot file")
    key = "Creator" if str(path).lower().endswith(".svg") else "Software"
    try:
        fig.savefig(path, metadata={key: f"gpuwhy {__version__}"})
    except OSError as exc:
        raise UsageError(f"cannot write {path!r} ({exc.strerror or exc}); pick a writable path") from None
    finally:
        plt.close(fig)
    return path


# --------------------------------------------------------------- drawing --

#: Markers of the roofs in the text chart (one per roof, in order), of the workloads, of the sweeps.
ROOF_MARKS = "123456789"
WORKLOAD_MARKS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
SWEEP_MARKS = "o%&"
#: Marks of the other memory levels' slopes in the text chart.
SLOPE_MARKS = {"L2": "l", "L1": "s"}


def text_chart(chart: RooflineChart, width: int = 64, height: int = 18) -> list[str]:
    """The chart as text lines: roofs (spec dashed: every other column), ridge points
    ``R`` on their roof, sweep points ``o``, workloads ``A``, ``B``, ... and a legend."""
    if not chart.roofs:
        return []
    fr = chart.frame()
    cv = LogCanvas(fr.x_lo, fr.x_hi, fr.y_lo, fr.y_hi, width, height, unit=chart.unit)
    # Spec roofs first (dashed; "+" where two share a cell), then the measured ones over them
    # (solid; "*" where two measured roofs share a cell).
    spec_marks = "".join(ROOF_MARKS[i % len(ROOF_MARKS)] for i, r in enumerate(chart.roofs) if r.kind == "spec")
    for i, r in enumerate(chart.roofs):
        if r.kind == "spec":
            cv.roof(r.peak_flops, r.bandwidth, ROOF_MARKS[i % len(ROOF_MARKS)], dashed=True, overlap="+")
    for i, r in enumerate(chart.roofs):
        if r.kind != "spec":
            cv.roof(r.peak_flops, r.bandwidth, ROOF_MARKS[i % len(ROOF_MARKS)], overlap="*",
                    passable=" |+" + spec_marks)
    top = max(r.peak_flops for r in chart.roofs)
    for ls in chart.slopes:  # other memory levels: only into blank cells, so the roofs stay readable
        cv.roof(top, ls.bandwidth, SLOPE_MARKS.get(ls.level, "m"), dashed=not ls.measured, overlap=" ",
                passable=" ")
    for r in chart.roofs:
        cv.put(r.ridge, r.peak_flops, "R")
    for ls in chart.slopes:
        cv.put(ls.ridge(top), top, "R")
    for j, s in enumerate(chart.sweeps):
        for i, f in s.points:
            cv.put(i, f, SWEEP_MARKS[j % len(SWEEP_MARKS)])
        if s.ridge:
            cv.put(s.ridge, max((y for _, y in s.points), default=fr.y_lo), "X")
    for j, w in enumerate(chart.workloads):
        cv.put(w.intensity, w.flops, WORKLOAD_MARKS[j % len(WORKLOAD_MARKS)])
    lines = cv.lines()
    for i, r in enumerate(chart.roofs):
        style = "dashed" if r.kind == "spec" else "solid"
        lines.append(f"  {ROOF_MARKS[i % len(ROOF_MARKS)]}  {r.label} ({style}): {r.bandwidth / 1e9:,.0f} GB/s, "
                     f"{fmt_si(r.peak_flops, 'FLOP/s')}, ridge {fmt_num(r.ridge)} FLOP/byte  [{r.source}]")
    for ls in chart.slopes:
        style = "solid" if ls.measured else "dashed"
        lines.append(f"  {SLOPE_MARKS.get(ls.level, 'm')}  {LEVEL_WORDS.get(ls.level, ls.level)} {ls.kind} ({style}): "
                     f"{ls.bandwidth / 1e9:,.0f} GB/s, ridge {fmt_num(ls.ridge(top))} FLOP/byte  [{ls.source}]")
    lines.append("  R  ridge point of a roof")
    for j, s in enumerate(chart.sweeps):
        ridge = f"empirical ridge {fmt_num(s.ridge)} FLOP/byte (X)" if s.ridge else "no empirical ridge"
        lines.append(f"  {SWEEP_MARKS[j % len(SWEEP_MARKS)]}  {s.dtype} mixed-intensity sweep, {len(s.points)} points; {ridge}")
    for j, w in enumerate(chart.workloads):
        where = "on the roof" if w.on_roof else f"{fmt_si(w.flops, 'FLOP/s')} achieved"
        lines.append(f"  {WORKLOAD_MARKS[j % len(WORKLOAD_MARKS)]}  {w.label} ({fmt_num(w.intensity)} FLOP/byte, {where})")
    if cv.contains("+"):
        lines.append("  +  spec roofs share the cell")
    if cv.contains("*"):
        lines.append("  *  measured roofs share the cell")
    return lines


_COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink", "tab:olive")
#: The file drawing: width x height in px at this many px per inch (800 x 520 px).
FILE_SIZE, FILE_DPI = (800, 520), 100
_TICK_PX = 13  # tick labels; the placed labels are 12 and 11 px, as in the report's SVG


#: Colours of the other memory levels' slopes (DRAM's take their precision's colour).
_LEVEL_COLORS = {"L2": "teal", "L1": "sienna"}
#: Where the legend may go, in order: the first that covers no point is taken.
_LEGEND_SPOTS = ("lower right", "upper left", "lower left", "center right", "upper right", "center left")


@dataclass
class Drawing:
    """A drawn chart before it is saved: the matplotlib objects and what the layout placed
    (for tests that check every label's box)."""

    plt: object
    fig: object
    ax: object
    layout: object
    legend: object
    labels: list  # the coloured label Text artists (their white halos left out)
    points_px: list  # (x, y) px, y down, of every workload marker (all levels)


def draw_chart(chart: RooflineChart) -> Drawing:
    """Draw ``chart`` with matplotlib on :data:`FILE_SIZE` px (nothing saved; see :func:`save_chart`).

    Raises:
        UsageError: matplotlib missing (:data:`MISSING_MATPLOTLIB`).
    """
    from .roofline_geometry import LINE, Mark, Plane, decades, minor_ticks, slots
    from .roofline_labels import layout

    plt = require_pyplot()
    from matplotlib import patheffects

    W, H = FILE_SIZE
    pt = 72 / FILE_DPI  # points per px
    frame = chart.frame(labelled=True)
    plane = Plane.fit(frame, W, H, chart.unit, font=_TICK_PX, top=30, bottom=58, right=12)
    fig = plt.figure(figsize=(W / FILE_DPI, H / FILE_DPI), dpi=FILE_DPI)
    ax = fig.add_axes((plane.left / W, plane.bottom / H, plane.pw / W, plane.ph / H))
    slot = slots(chart.roofs)
    top = max(r.peak_flops for r in chart.roofs)

    def colour(s: int | None) -> str:
        return "black" if s is None else _COLORS[s % len(_COLORS)]

    for r in chart.roofs:
        col = colour(slot[r.precision])
        (x0, y0), (xr, yr), (x1, y1) = r.vertices(frame)
        ax.plot([x0, xr, x1], [y0, yr, y1], linestyle="--" if r.kind == "spec" else "-", color=col,
                linewidth=1.2 if r.kind == "spec" else 1.8,
                label=f"{r.label}: {r.bandwidth / 1e9:,.0f} GB/s, {fmt_num(r.peak_flops / 1e12, 4)} TFLOP/s, ridge {fmt_num(r.ridge)}")
        ax.plot([r.ridge], [r.peak_flops], marker="o", color=col, markersize=5,
                markerfacecolor="white" if r.kind == "spec" else col)
    for ls in chart.slopes:
        col = _LEVEL_COLORS.get(ls.level, "grey")
        (x0, y0), (xr, yr) = ls.vertices(frame, top)
        ax.plot([x0, xr], [y0, yr], linestyle="-" if ls.measured else (0, (6, 2, 1, 2)), color=col,
                linewidth=1.6 if ls.measured else 1.1,
                label=f"{LEVEL_WORDS.get(ls.level, ls.level)} {ls.kind}: {ls.bandwidth / 1e9:,.0f} GB/s, ridge {fmt_num(ls.ridge(top))}")
        ax.plot([xr], [yr], marker="D", color=col, markersize=4, markerfacecolor=col if ls.measured else "white")
    for s in chart.sweeps:
        col = colour(slot.get(s.precision))
        ax.plot([i for i, _ in s.points], [f for _, f in s.points], linestyle=":", marker=".", color=col,
                markersize=6, label=f"{s.dtype} mixed-intensity sweep (measured)")
        if s.ridge:
            ax.axvline(s.ridge, color=col, linestyle=":", linewidth=0.8)
    points_px = []
    for w in chart.workloads:
        if not w.on_roof:  # a dotted line from the achieved rate up to the roof
            ax.plot([w.intensity] * 2, [w.flops, w.verdict.attainable_flops], linestyle=":", color="black", linewidth=0.8)
        if w.levels:  # the same kernel at the other levels: one marker each, joined by a line
            xs = [w.intensity] + [i for _, i in w.levels]
            ax.plot([min(xs), max(xs)], [w.flops] * 2, linestyle="-", color="black", linewidth=0.8)
            for lv, i in w.levels:
                ax.plot([i], [w.flops], marker="o", markersize=6, linestyle="none", color=_LEVEL_COLORS.get(lv, "grey"),
                        markeredgecolor="black")
                points_px.append((plane.X(i), plane.Y(w.flops)))
        ax.plot([w.intensity], [w.flops], marker="*", markersize=11, color="black", linestyle="none",
                markerfacecolor="gold" if not w.on_roof else "white")
        points_px.append((plane.X(w.intensity), plane.Y(w.flops)))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(frame.x_lo, frame.x_hi)
    ax.set_ylim(frame.y_lo, frame.y_hi)
    ax.set_xticks([10.0**e for e in decades(frame.x_lo, frame.x_hi)], [t.text for t in plane.x_ticks()])
    ax.set_yticks([10.0**e for e in decades(frame.y_lo, frame.y_hi)], [t.text for t in plane.y_ticks(chart.unit)])
    ax.set_xticks(minor_ticks(frame.x_lo, frame.x_hi), minor=True)
    ax.set_yticks(minor_ticks(frame.y_lo, frame.y_hi), minor=True)
    ax.tick_params(which="both", labelsize=_TICK_PX * pt)
    ax.tick_params(which="minor", labelleft=False, labelbottom=False)
    ax.set_xlabel("arithmetic intensity (FLOP/byte)", fontsize=_TICK_PX * pt)
    ax.set_title(chart.title or f"roofline: {chart.gpu}", fontsize=11)
    ax.grid(True, which="major", alpha=0.3)
    fig.text(0.01, 0.01, "dashed: spec sheet (dash-dot: a clock-derived or published cache figure); solid: measured "
             "(gpuwhy bench); dots: mixed-intensity sweep", fontsize=6, color="grey")
    renderer = fig.canvas.get_renderer()
    legend, lb = None, None
    for spot in _LEGEND_SPOTS:  # the legend never covers a point
        if legend is not None:
            legend.remove()
        legend = ax.legend(fontsize="x-small", loc=spot)
        e = legend.get_window_extent(renderer)  # px, y up
        lb = (e.x0, H - e.y1, e.x1, H - e.y0)
        if not any(lb[0] - 8 <= x <= lb[2] + 8 and lb[1] - 8 <= y <= lb[3] + 8 for x, y in points_px):
            break
    marks = [Mark.of(w.label, w.verdict, w.levels) for w in chart.workloads]
    lay = layout(plane, chart.roofs, marks, spec_word="spec", reserved=[lb], slopes=chart.slopes,
                 sweep_ridges=[(s.ridge, max(f for _, f in s.points), f"empirical ridge {fmt_num(s.ridge)}",
                                slot.get(s.precision, 0)) for s in chart.sweeps if s.ridge and s.points])
    halo = [patheffects.withStroke(linewidth=3 * pt, foreground="white")]
    placed = []

    def text(x: float, y: float, t: str, size: float, col: str, **kw) -> None:
        """``t`` at (x, y) px, its baseline there, over a white halo (drawn apart: a file's
        SVG keeps the plain text)."""
        for c, effects in (("white", halo), (col, None)):
            art = fig.text(x / W, 1 - y / H, t, fontsize=size * pt, color=c, va="baseline", path_effects=effects, **kw)
        placed.append(art)

    for sl, col in [(lay.slope, colour(lay.slope.slot))] + [
            (sl, _LEVEL_COLORS.get(ls_level, "grey")) for sl, ls_level in
            zip(lay.level_labels, [lv for lv in dict.fromkeys(s.level for s in chart.slopes)])]:
        if not sl.text:  # no free spot along its line: written under the plot instead
            continue
        bx, by = sl.baseline()
        text(bx, by, sl.text, 12, col, ha="left", rotation=-sl.angle, rotation_mode="anchor")
    if lay.unplaced:
        fig.text(0.01, 0.035, "; ".join(lay.unplaced), fontsize=7, color="dimgrey")
    for lab in lay.labels:
        col = colour(lab.slot)
        if lab.leader:
            x1, y1, x2, y2 = lab.leader
            fig.add_artist(plt.Line2D([x1 / W, x2 / W], [1 - y1 / H, 1 - y2 / H], transform=fig.transFigure,
                                      color=col, linewidth=0.8))
        ha = {"start": "left", "middle": "center", "end": "right"}[lab.anchor]
        for k, line in enumerate(lab.lines):
            text(lab.x, lab.y + k * lab.size * LINE, line, lab.size, col, ha=ha, fontweight="bold" if lab.bold else "normal")
    return Drawing(plt, fig, ax, lay, legend, placed, points_px)


def save_chart(chart: RooflineChart, path: str) -> str:
    """Draw ``chart`` to ``path`` (``.png`` or ``.svg``) with matplotlib; returns the path.

    The plot area and every label come from :func:`~gpuwhy.render.roofline_labels.layout`
    on a :class:`~gpuwhy.render.roofline_geometry.Plane` of :data:`FILE_SIZE` px (the axes
    are put exactly on that plane), so the file and the report's SVG agree
    (:func:`draw_chart`).

    Raises:
        UsageError: a wrong suffix, matplotlib missing (:data:`MISSING_MATPLOTLIB`),
            or a file that cannot be written.
    """
    check_plot_path(path)
    d = draw_chart(chart)
    return save_figure(d.plt, d.fig, path)


def save_classification_plot(c, path: str) -> str:
    """``classify --plot``: draw a :class:`~gpuwhy.api.classify.Classification` on its roofline."""
    return save_chart(chart_from_classification(c), path)


def render_chart(chart: RooflineChart, text: bool = True) -> None:
    """Print ``chart``: a table of the roofs, the workloads' verdicts, notes and (``text``) the text roofline."""
    from rich.table import Table
    from rich.text import Text

    from .console import out

    con = out()
    t = Table(title=chart.title, title_justify="left")
    for name, kw in (("roof", {}), ("GB/s", {"justify": "right"}), ("TFLOP/s", {"justify": "right"}),
                     ("ridge FLOP/byte", {"justify": "right"}), ("source", {})):
        t.add_column(name, **kw)
    for r in chart.roofs:
        t.add_row(r.label, f"{r.bandwidth / 1e9:,.0f}", f"{fmt_num(r.peak_flops / 1e12, 4)}", f"{fmt_num(r.ridge)}", r.source)
    top = max((r.peak_flops for r in chart.roofs), default=None)
    for ls in chart.slopes:
        t.add_row(f"{LEVEL_WORDS.get(ls.level, ls.level)} {ls.kind}", f"{ls.bandwidth / 1e9:,.0f}", "-",
                  f"{fmt_num(ls.ridge(top))}" if top else "-", ls.source)
    for s in chart.sweeps:
        t.add_row(f"{s.dtype} sweep (empirical)", "", f"{fmt_num(max(f for _, f in s.points) / 1e12, 4)}",
                  "n/a" if not s.ridge else f"{fmt_num(s.ridge)}", s.source)
    con.print(t)
    if chart.workloads:
        w = Table(title="workloads", title_justify="left")
        for name, kw in (("point", {}), ("FLOP/byte", {"justify": "right"}), ("verdict", {}),
                         ("attainable", {"justify": "right"}), ("achieved", {"justify": "right"}),
                         ("% SOL", {"justify": "right"})):
            w.add_column(name, **kw)
        for p in chart.workloads:
            v = p.verdict
            w.add_row(p.name, f"{fmt_num(v.arithmetic_intensity)}", f"{v.regime}-bound" + (
                f" ({fmt_num(v.bound_ratio)}x)" if math.isfinite(v.bound_ratio) else ""),
                fmt_si(v.attainable_flops, "FLOP/s"),
                "n/a" if v.achieved_flops is None else fmt_si(v.achieved_flops, "FLOP/s"),
                fmt_pct(v.sol_pct, 0))
        con.print(w)
        for p in chart.workloads:
            for msg in p.verdict.warnings:
                con.print(Text(f"warning ({p.name}): ", style="bold yellow") + Text(msg))
    for n in chart.notes:
        con.print(Text("note: ", style="bold") + Text(n))
    if text:
        con.print(Text("roofline (log-log)", style="bold"))
        for line in text_chart(chart, width=chart_columns(con.width)):
            con.print(Text(line))


# ---------------------------------------------------------------------------
# bench --roofline
# ---------------------------------------------------------------------------


def render_roofline_sweep(sweep, sheet=None) -> None:
    """Print a :class:`~gpuwhy.bench.intensity.RooflineSweep`: per dtype a row per point
    (FLOP/byte, time, GB/s, TFLOP/s, the roof there and the % of it), the empirical ridge
    beside the ceilings' ridge, the knee, then the text roofline of all curves."""
    from rich.table import Table
    from rich.text import Text

    from ..model.roofline.intensity_sweep import CONVENTION
    from ..model.roofline.ridge_fit import RIDGE_METHOD
    from ..units import fmt_time
    from .console import out

    con = out()
    for c in sweep.curves:
        t = Table(title=f"mixed-intensity sweep, {c.dtype} ({c.instruction}), {c.n_words:,} words per array, "
                        f"{c.working_set_bytes / 2**20:,.0f} MiB working set", title_justify="left")
        for name, kw in (("FMAs/vector", {"justify": "right"}), ("FLOP/byte", {"justify": "right"}),
                         ("median", {"justify": "right"}), ("cv", {"justify": "right"}), ("GB/s", {"justify": "right"}),
                         ("TFLOP/s", {"justify": "right"}), ("roof TFLOP/s", {"justify": "right"}),
                         ("% roof", {"justify": "right"}), ("bound", {})):
            t.add_column(name, **kw)
        for p in c.points:
            t.add_row(str(p.fmas), f"{fmt_num(p.intensity)}", fmt_time(p.time.median_s), f"{p.time.cv * 100:.1f}%",
                      f"{p.achieved_bandwidth / 1e9:,.0f}", f"{fmt_num(p.achieved_flops / 1e12)}",
                      "n/a" if p.roof_flops is None else f"{fmt_num(p.roof_flops / 1e12)}",
                      "n/a" if p.pct_of_roof is None else f"{p.pct_of_roof:.1f}%", p.bound or "")
        con.print(t)
        f = c.fit
        line = Text(f"{c.dtype}: ", style="bold")
        if f.ridge:
            line += Text(f"empirical ridge {fmt_num(f.ridge)} FLOP/byte (fitted roofs {f.bandwidth / 1e9:,.0f} GB/s and "
                         f"{fmt_num(f.peak_flops / 1e12)} TFLOP/s)")
        else:
            line += Text("no empirical ridge")
        if c.model_ridge:
            line += Text(f"; ceilings' ridge {fmt_num(c.model_ridge)} FLOP/byte")
        if f.knee:
            line += Text(f"; reaches {f.knee_fraction:.0%} of the compute ceiling at {fmt_num(f.knee)} FLOP/byte")
        con.print(line)
        con.print(Text(f"ceilings: peak {c.peak_source}; bandwidth {c.bandwidth_source}", style="dim"))
        if c.check:
            con.print(Text(c.check, style="dim"))
        for n in c.notes:
            con.print(Text("note: ", style="bold") + Text(n))
    for n in sweep.notes:
        con.print(Text("note: ", style="bold") + Text(n))
    con.print(Text(CONVENTION, style="dim"))
    con.print(Text("ridge: " + RIDGE_METHOD, style="dim"))
    chart = chart_from_sweep(sweep, sheet)
    lines = text_chart(chart, width=chart_columns(con.width))
    if lines:
        con.print(Text("measured roofline (log-log)", style="bold"))
        for ln in lines:
            con.print(Text(ln))
    con.print(Text(sweep.summary_line()))
