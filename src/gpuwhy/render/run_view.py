"""Rich rendering of `gpuwhy run`: the window, the one time budget (idle by cause, busy by regime), the top
kernels with their regimes, the fixes with the most each can give, and the verdict."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from ..importers.kernel_names import shorten_middle
from ..units import fmt_time
from .cells import kernel_regime
from .console import note, out
from .diagnosis_view import budget_table, fixes_table, render_remedies


def _kernels_table(r) -> Table | None:
    if not r.kernels:
        return None
    ncu_alone = r.mode == "ncu"
    t = Table(title="top kernels" + (" (ncu)" if ncu_alone else " in the window"), title_justify="left", pad_edge=False)
    t.add_column("kernel", overflow="fold")
    t.add_column("time", justify="right")
    t.add_column("launches", justify="right")
    t.add_column("mean", justify="right")
    t.add_column("regime", overflow="fold")
    t.add_column("% roof", justify="right")
    for k in r.kernels:
        t.add_row(shorten_middle(k.name, 36), fmt_time(k.total_s), f"{k.launches:,}", fmt_time(k.mean_s), kernel_regime(k.regime, k.level, bool(k.measured_launches))
                  + (" (XLA cost)" if k.regime and (k.source or "").startswith("cost_analysis") else ""),
                  "-" if k.roof_pct is None else f"{k.roof_pct:.0f}%")
    return t


def _header(con, r) -> None:
    p = r.program
    if r.mode == "ncu":
        con.print(Text(f"program: {' '.join(p.argv)} ({fmt_time(p.wall_s)} wall under ncu)"))
        return
    con.print(Text(f"program: {' '.join(p.argv)} (exit {p.exit_code}, {fmt_time(p.wall_s)} wall under the profiler)"))
    con.print(Text(f"window: {r.window.how}, {fmt_time(r.window.seconds)}" + (f"; GPU {r.gpu.device}" if r.gpu else "")))


def render_run(r) -> None:
    """Print a :class:`~gpuwhy.api.run.RunResult`: the window, its time budget and fixes (the one
    rendering of a diagnosis, :mod:`.diagnosis_view`), the top kernels, the verdict and what to do."""
    con = out()
    _header(con, r)
    b = r.budget
    if b is None:
        con.print(Text("verdict: no GPU work in the window (the program launched no kernel there)"
                       if r.mode != "ncu" else "verdict: ncu profiled no kernel with a duration", style="bold"))
        for n in r.notes:
            note(n)
        return
    con.print(budget_table(b, "where the window went" if r.mode != "ncu" else "where the profiled kernel time went"))
    kt = _kernels_table(r)
    if kt is not None:
        con.print(kt)
    fixes = fixes_table(b)
    if fixes is not None:
        con.print(fixes)
    if r.mode == "ncu":
        con.print(Text("GPU idle time: not measured (ncu alone records no timeline)"))
    top = b.top
    if top is not None:
        for e in top.evidence:
            con.print(Text(f"  {top.label}: {e}", style="dim"))
    style = "bold green" if top is not None and top.busy else "bold yellow"
    con.print(Text("verdict: ", style="bold") + Text(b.line, style=style))
    if b.remedies or b.next_steps:
        con.print(Text("what to do:", style="bold"))
        render_remedies(con, b)
    for n in r.notes:
        note(n)
    if r.program.trace:
        note(f"trace kept at {r.program.trace} (open it in Perfetto or chrome://tracing; `gpuwhy trace` reads it)")
    if r.kernel_pass is not None:
        run = r.kernel_pass.run
        note(f"ncu report kept at {run.rep_path} (open it in Nsight Compute; `gpuwhy ncu {run.csv_path}` reads its CSV)")
