"""Rich rendering of `gpuwhy mfu`."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from .console import out
from ..units import fmt_num

_VERDICT_STYLE = {"cost emergency": "bold red", "ok": "bold green"}


def render_mfu(m) -> None:
    """Print a :class:`~gpuwhy.model.llm.mfu.Mfu`: the arithmetic, the MFU and its verdict, then notes."""
    con = out()
    what = "training" if m.mode == "train" else "inference"
    t = Table(title=f"model FLOPs utilisation: {what}, {fmt_num(m.params / 1e9)}B parameters on {m.gpus} x {m.gpu}",
              show_header=False, title_justify="left", box=None, pad_edge=False)
    t.add_column(style="bold", no_wrap=True)
    t.add_column()
    for line in m.lines:
        head, sep, rest = line.partition(": ")
        t.add_row(head if sep else "", Text(rest if sep else line))
    con.print(t)
    verdict = Text("verdict: ", style="bold")
    words = {"ok": f"MFU {fmt_num(m.mfu_pct)}%", "cost emergency": f"MFU {fmt_num(m.mfu_pct)}%: a cost emergency (below 30%)"}
    verdict.append(words.get(m.verdict, m.verdict), style=_VERDICT_STYLE.get(m.verdict, "bold"))
    con.print(verdict)
    for n in m.notes:
        con.print(Text("note: ", style="bold") + Text(n))
