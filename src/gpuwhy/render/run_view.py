"""Rich rendering of `gpuwhy run`: the window, the one time budget (idle by cause, busy by regime), the top
kernels with their regimes, the fixes by size."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from ..importers.kernel_names import shorten_middle
from ..units import fmt_num, fmt_time
from .cells import kernel_regime
from .console import note, out


def _ceiling(x: float) -> str:
    return "all of it" if x == float("inf") else f"at most {fmt_num(x)}x"


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
        t.add_row(shorten_middle(k.name, 36), fmt_time(k.total_s), f"{k.launches:,}", fmt_time(k.mean_s), kernel_regime(k.regime, k.level, bool(k.measured_launches)),
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
    """Print a :class:`~gpuwhy.api.run.RunResult`."""
    con = out()
    _header(con, r)
    b = r.budget
    if b is None:
        con.print(Text("verdict: no GPU work in the window (the program launched no kernel there)"
                       if r.mode != "ncu" else "verdict: ncu profiled no kernel with a duration", style="bold"))
        for n in r.notes:
            note(n)
        return
    title = "where the window went" if r.mode != "ncu" else "where the profiled kernel time went"
    t = Table(title=title, title_justify="left", pad_edge=False)
    t.add_column("share", overflow="fold")
    t.add_column("time", justify="right")
    t.add_column("% window" if r.mode != "ncu" else "% kernels", justify="right")
    for s in b.idle:
        t.add_row(f"GPU idle: {s.name}", fmt_time(s.seconds), f"{s.pct:.1f}%")
    for s in b.busy:
        t.add_row(f"GPU busy: {s.name}", fmt_time(s.seconds), f"{s.pct:.1f}%")
    t.add_row("total", fmt_time(b.window_s), f"{b.shares_pct_total:.1f}%")
    con.print(t)
    kt = _kernels_table(r)
    if kt is not None:
        con.print(kt)
    if b.fixes:
        of = "the profiled kernel time" if r.mode == "ncu" else "the window"
        f = Table(title=f"fixes by what they can remove (Amdahl ceiling of {of})", title_justify="left", pad_edge=False)
        f.add_column("share to remove", overflow="fold")
        f.add_column("removes", justify="right")
        f.add_column("speed-up", justify="right")
        for x in b.fixes:
            f.add_row(x.detail, f"{x.share_pct:.0f}%", _ceiling(x.ceiling_x))
        con.print(f)
    if r.mode == "ncu":
        con.print(Text("GPU idle time: not measured (ncu alone records no timeline)"))
    elif b.idle_fix is not None:
        con.print(Text(f"{b.idle_fix.detail}: removing all of it gives {_ceiling(b.idle_fix.ceiling_x)}"))
    v = b.verdict
    if b.gpu_bound and r.mode != "ncu":  # ncu alone sees no idle time: it says nothing of GPU-bound
        kinds = ", ".join(f"{s.name} {s.pct:.0f}%" for s in b.busy[:4])
        con.print(Text("verdict: ", style="bold") + Text(f"GPU-bound: busy {100 * b.busy_s / b.window_s:.0f}% of the window", style="bold green"))
        measured = any(k.measured_launches for k in r.kernels)
        con.print(Text(f"  the time is in the kernels ({kinds})"
                       + ("" if measured else "; their roofline regimes need FLOP and byte counts: add --kernels")))
        if v is not None and v.kind == "kernel":
            con.print(Text(f"  largest kernel fix: {v.detail}: a faster version gives {_ceiling(v.ceiling_x)}"))
        v = None
    if v is not None:
        con.print(Text("verdict: ", style="bold") + Text(f"{v.detail}: removing it gives {_ceiling(v.ceiling_x)}",
                                                          style="bold yellow"))
        if v.remedies:
            con.print(Text("remedies:", style="bold"))
            for m in v.remedies:
                con.print(Text("  - ") + Text(m, style="green"))
    for n in r.notes:
        note(n)
    if r.program.trace:
        note(f"trace kept at {r.program.trace} (open it in Perfetto or chrome://tracing; `gpuwhy trace` reads it)")
    if r.kernel_pass is not None:
        run = r.kernel_pass.run
        note(f"ncu report kept at {run.rep_path} (open it in Nsight Compute; `gpuwhy ncu {run.csv_path}` reads its CSV)")
