"""Tables that fit the terminal without cutting a number.

rich shrinks a table that is wider than the terminal by cutting cells with "…",
numbers included ("19…" for 1,935 GB/s). :func:`fit_table` runs before every table is
printed (the consoles in :mod:`gpuwhy.render.console` call it): a column whose cells
are all numbers (with an optional short unit: ``4,800``, ``87%``, ``3.49 us``) gets a
fixed width that holds its widest number, its header wrapped onto lines of that width;
text columns wrap (folded, never cut with "…") as they must. When even that does not fit, the table is printed as
one key/value block per row instead, which never cuts a value.
"""

from __future__ import annotations

import re
from typing import Any

#: A number, optionally with a short unit or suffix: 4,800 | 1.2e+03 | 87% | 171x | 3.49 us | 4.59 TB/s.
_NUMBER = re.compile(r"[-+~<>=]*\s?(\d[\d,]*(\.\d+)?|\.\d+)(e[-+]?\d+)?(\s?[%x]|\s?[A-Za-z/]{1,9})?")
#: Cells that say "no value" and may stand in a column of numbers.
_BLANK = {"", "n/a", "-", "—", "–", "none", "?"}


def _plain(cell: Any) -> str:
    return cell.plain if hasattr(cell, "plain") else str(cell)


def _is_number(text: str) -> bool:
    return bool(_NUMBER.fullmatch(text.strip()))


def numeric_width(cells: list[str]) -> int | None:
    """The width of the widest cell when every cell is a number or blank (and one at least is
    a number), else None. Cells of several lines count by their longest line."""
    lines = [ln.strip() for c in cells for ln in c.splitlines() or [""]]
    if not any(_is_number(x) for x in lines) or not all(_is_number(x) or x.lower() in _BLANK for x in lines):
        return None
    return max(len(x) for x in lines)


def wrap_words(text: str, width: int) -> str:
    """``text`` with its words put on lines of at most ``width`` (a longer word keeps its own line)."""
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "\n".join(lines)


def fit_table(table, console):
    """``table`` made to fit ``console.width`` without cutting numbers (see the module docstring):
    the same table with its number columns fixed, or a key/value table when that is too wide."""
    from rich.text import Text

    if not table.columns or getattr(table, "_gpuwhy_fitted", False):
        return table
    table._gpuwhy_fitted = True
    options = console.options.update_width(console.width)
    if _width(table, console, options, "maximum") <= console.width:
        return table  # rich shrinks nothing: leave the table as it is
    for col in table.columns:
        w = numeric_width([_plain(c) for c in col._cells])
        if w is None:
            col.no_wrap, col.overflow = False, "fold"  # text may wrap (whole, never with "…") to make room
            continue
        head = _plain(col.header)
        width = max([w] + [len(word) for word in head.split()])
        style = col.header.style if isinstance(col.header, Text) else ""
        col.header = Text(wrap_words(head, width), style=style) if head else col.header
        col.width, col.no_wrap = width, True
    if _width(table, console, options, "minimum") <= console.width:
        return table
    return _as_records(table)


def _width(table, console, options, which: str) -> int:
    """The table's ``minimum`` or ``maximum`` width in cells, borders and padding included."""
    return sum(getattr(table._measure_column(console, options, c), which) for c in table.columns) + table._extra_width


def _as_records(table):
    """The rows of ``table`` as ``header  value`` lines, one block per row (blank line between)."""
    from rich.table import Table

    heads = [" ".join(_plain(c.header).split()) or f"column {i + 1}" for i, c in enumerate(table.columns)]
    kv = Table(title=table.title, title_justify=table.title_justify, title_style=table.title_style, show_header=False,
               box=None, pad_edge=False)
    kv.add_column(style="bold")
    kv.add_column(overflow="fold")
    rows = list(zip(*(c._cells for c in table.columns)))
    for r, row in enumerate(rows):
        if r:
            kv.add_row("", "")
        for head, cell in zip(heads, row):
            if _plain(cell).strip():
                kv.add_row(head, cell)
    kv._gpuwhy_fitted = True
    return kv


#: Columns of a text chart's grid: at most the default, at least enough to read it.
CHART_COLUMNS, MIN_CHART_COLUMNS = 64, 24
#: What a text chart needs beside its grid: the y labels, the axis and the x unit.
CHART_MARGIN = 28


def chart_columns(terminal_width: int) -> int:
    """Grid columns of a text roofline for a terminal ``terminal_width`` columns wide."""
    return max(MIN_CHART_COLUMNS, min(CHART_COLUMNS, int(terminal_width) - CHART_MARGIN))
