"""Rich rendering of `gpuwhy run`: the window, the one time budget (idle by cause, busy by regime), the fixes by size."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from ..units import fmt_num, fmt_time
from .console import note, out


def _ceiling(x: float) -> str:
    return "all of it" if x == float("inf") else f"at most {fmt_num(x)}x"


def render_run(r) -> None:
    """Print a :class:`~gpuwhy.api.run.RunResult`."""
    con = out()
    p = r.program
    con.print(Text(f"program: {' '.join(p.argv)} (exit {p.exit_code}, {fmt_time(p.wall_s)} wall under the profiler)"))
    con.print(Text(f"window: {r.window.how}, {fmt_time(r.window.seconds)}"
                   + (f"; GPU {r.gpu.device}" if r.gpu else "")))
    b = r.budget
    if b is None:
        con.print(Text("verdict: no GPU work in the window (the program launched no kernel there)", style="bold"))
        return
    t = Table(title="where the window went", title_justify="left", pad_edge=False)
    t.add_column("share", overflow="fold")
    t.add_column("time", justify="right")
    t.add_column("% window", justify="right")
    for s in b.idle:
        t.add_row(f"GPU idle: {s.name}", fmt_time(s.seconds), f"{s.pct:.1f}%")
    for s in b.busy:
        t.add_row(f"GPU busy: {s.name}", fmt_time(s.seconds), f"{s.pct:.1f}%")
    t.add_row("total", fmt_time(b.window_s), f"{b.shares_pct_total:.1f}%")
    con.print(t)
    if b.fixes:
        f = Table(title="fixes by what they can remove (Amdahl ceiling of the window)", title_justify="left", pad_edge=False)
        f.add_column("share to remove", overflow="fold")
        f.add_column("removes", justify="right")
        f.add_column("speed-up", justify="right")
        for x in b.fixes:
            f.add_row(x.detail, f"{x.share_pct:.0f}%", _ceiling(x.ceiling_x))
        con.print(f)
    if b.idle_fix is not None:
        con.print(Text(f"{b.idle_fix.detail}: removing all of it gives {_ceiling(b.idle_fix.ceiling_x)}"))
    v = b.verdict
    if b.gpu_bound:
        kinds = ", ".join(f"{s.name} {s.pct:.0f}%" for s in b.busy[:4])
        con.print(Text("verdict: ", style="bold") + Text(f"GPU-bound: busy {100 * b.busy_s / b.window_s:.0f}% of the window", style="bold green"))
        con.print(Text(f"  the time is in the kernels ({kinds}); their roofline regimes need FLOP and byte counts: "
                       "`gpuwhy ncu -- CMD` measures them"))
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
    if p.trace:
        note(f"trace kept at {p.trace} (open it in Perfetto or chrome://tracing; `gpuwhy trace` reads it)")
