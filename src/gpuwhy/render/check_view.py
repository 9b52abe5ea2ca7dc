"""Rich rendering of `gpuwhy check` reports."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from .console import out

_STYLE = {"pass": "green", "warn": "bold yellow", "fail": "bold red", "skip": "dim"}


def render_check(reports, policy, comparisons=None) -> None:
    """One table per GPU (check, status, measured value, threshold, why), what each GPU was
    compared with under ``--baseline`` (``comparisons``: one Comparison or None per report),
    and a count of the four states."""
    con = out()
    comparisons = comparisons or [None] * len(reports)
    totals = dict.fromkeys(_STYLE, 0)
    for rep, comp in zip(reports, comparisons):
        took = "" if rep.elapsed_s is None else f", {rep.elapsed_s:.1f} s"
        t = Table(title=f"gpuwhy check: {rep.device} {rep.uuid} (sheet {rep.sheet or 'none'}{took})", title_justify="left", pad_edge=False)
        for col in ("check", "status", "value", "threshold", "detail"):
            t.add_column(col)
        for c in rep.checks:
            t.add_row(c.name, Text(c.status, style=_STYLE.get(c.status, "")), c.value_text, c.threshold_text, c.detail)
            totals[c.status] = totals.get(c.status, 0) + 1
        con.print(t)
        if comp is not None:
            con.print(f"baseline: {comp.source}, {comp.against}")
            if comp.note:
                con.print(f"note: {comp.note}")
    counts = Text.assemble(*[part for s, n in totals.items() for part in ((f"{n} {s}", _STYLE[s] if n else ""), ", ")][:-1])
    con.print(Text.assemble("checks: ", counts, f"; policy: {policy.source}"))
