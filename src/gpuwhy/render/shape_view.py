"""Rich rendering of the counts a shape gave (`gpuwhy classify --gemm/--attention/--elementwise`)
and of a GEMM's shape advice (alignment, tiles, waves)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from .console import out


def _lines_table(title: str, lines) -> Table:
    t = Table(title=title, show_header=False, title_justify="left", box=None, pad_edge=False)
    t.add_column(style="bold", no_wrap=True)
    t.add_column()
    for line in lines:
        head, sep, rest = line.partition(" = ") if " = " in line.split(":")[0] else line.partition(": ")
        if sep and len(head) <= 24:
            t.add_row(head, Text((sep.strip() + " " if sep.strip() == "=" else "") + rest))
        else:
            t.add_row("", Text(line))
    return t


def render_counts(counts, advice=None) -> None:
    """Print a :class:`~gpuwhy.model.kernels.shapes.WorkCount`'s arithmetic, line by line, and a
    :class:`~gpuwhy.model.kernels.gemm_shape.GemmAdvice` when given."""
    con = out()
    con.print(_lines_table(f"counted from the shape: {counts.label}", counts.lines))
    if advice is not None:
        con.print(_lines_table("the shape on tensor cores", advice.lines))
