"""Rich rendering of `gpuwhy check` reports."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from .console import out

_STYLE = {"pass": "green", "fail": "bold red", "skip": "yellow"}


def render_check(reports, policy) -> None:
    """One table per GPU: check, status, measured value, threshold, why."""
    con = out()
    for rep in reports:
        took = "" if rep.elapsed_s is None else f", {rep.elapsed_s:.1f} s"
        t = Table(title=f"gpuwhy check: {rep.device} {rep.uuid} (sheet {rep.sheet or 'none'}{took})", title_justify="left", pad_edge=False)
        for col in ("check", "status", "value", "threshold", "detail"):
            t.add_column(col)
        for c in rep.checks:
            t.add_row(c.name, Text(c.status, style=_STYLE[c.status]), c.value, c.threshold, c.detail)
        con.print(t)
    con.print(f"policy: {policy.source}", soft_wrap=True)
