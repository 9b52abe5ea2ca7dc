"""The one rendering of a :class:`~gpuwhy.verdict.engine.Diagnosis`, for `gpuwhy trace` and
`gpuwhy run`: the time budget (every share of the window, its cause and time), the fixes (each
remedy, the shares it removes and the most it can give) and the evidence of the largest shares."""

from __future__ import annotations

import math

from rich.table import Table
from rich.text import Text

from ..units import fmt_num, fmt_time

#: Shares under this share of the judged window (%; warm-up: of the whole window) get no evidence lines.
EVIDENCE_MIN_PCT = 1.0


def ceiling(x: float) -> str:
    """A remedy's ceiling for people: ``3.4x``, ``71.6e6x``; ``all of it`` when it would remove the whole window."""
    return "all of it" if not math.isfinite(x) else f"{fmt_num(x)}x"


def budget_table(diag, title: str = "time budget") -> Table:
    """Every share of the window, largest first: what, time, % of the window; where warm-up was left out,
    % of the judged window (the verdict's and the fixes' figure; warm-up itself ``-``, not judged)."""
    warm = diag.judged_s < diag.window_s
    t = Table(title=title, title_justify="left", pad_edge=False)
    t.add_column("share", overflow="fold")
    t.add_column("side")
    t.add_column("time", justify="right")
    t.add_column("% of judged" if warm else "% of window", justify="right")
    for s in diag.shares:
        unjudged = s.cause.value == "warmup"
        label = s.label + (" (not judged)" if unjudged else "")
        pct = "-" if warm and unjudged else f"{diag.judged_pct(s):.1f}%"
        t.add_row(label, "busy" if s.busy else "idle", fmt_time(s.seconds), pct)
    return t


def fixes_table(diag) -> Table | None:
    """The remedies offered, with the shares each removes and the most it can give over the
    diagnosis's judged window (its ``scope``; :func:`gpuwhy.verdict.engine.floor_after`); None without any."""
    if not diag.remedies:
        return None
    t = Table(title=f"fixes (the most each can give over {diag.scope})", title_justify="left", pad_edge=False)
    t.add_column("fix", overflow="fold")
    t.add_column("removes", overflow="fold")
    t.add_column("time", justify="right")
    t.add_column("at most", justify="right")
    for r in diag.remedies:
        what = ", ".join(f"{c.value.replace('_', ' ')} {fmt_time(s)}" for c, s in r.removes)
        t.add_row(r.key.replace("_", " "), what, fmt_time(r.removed_s), ceiling(r.ceiling_x))
    return t


def render_diagnosis(con, diag, evidence: bool = True) -> None:
    """Print the budget, the fixes and (with ``evidence``) the evidence lines of the shares of at
    least :data:`EVIDENCE_MIN_PCT` % of the judged window (warm-up: of the whole window)."""
    con.print(budget_table(diag))
    if diag.judged_s < diag.window_s:
        con.print(Text(f"judged window: {fmt_time(diag.judged_s)} (warm-up {fmt_time(diag.window_s - diag.judged_s)} "
                       "listed, not judged)", style="dim"))
    if diag.tracer_s > 0:
        con.print(Text(f"tracer: up to {fmt_time(diag.tracer_s)} of host time (its measured cost per recorded event); "
                       "the ceilings allow a run without it to be that much shorter", style="dim"))
    fixes = fixes_table(diag)
    if fixes is not None:
        con.print(fixes)
    if evidence:
        for s in diag.shares:
            if diag.judged_pct(s) < EVIDENCE_MIN_PCT or not s.evidence:
                continue
            con.print(Text(f"{s.label}:", style="bold"))
            for e in s.evidence:
                con.print(Text(f"  - {e}"))


def render_remedies(con, diag) -> None:
    """The verdict's line and what to do, in order: each remedy's text with its ceiling, then next steps."""
    for r in diag.remedies:
        con.print(Text("  - ") + Text(f"{r.text} (at most {ceiling(r.ceiling_x)})", style="green"))
    for n in diag.next_steps:
        con.print(Text("  - ") + Text(n, style="green"))


__all__ = ["EVIDENCE_MIN_PCT", "budget_table", "ceiling", "fixes_table", "render_diagnosis", "render_remedies"]
