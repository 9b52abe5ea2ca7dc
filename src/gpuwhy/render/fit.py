"""Tables that fit the terminal without cutting a number.

rich shrinks a table that is wider than the terminal by cutting cells with "…",
numbers included ("19…" for 1,935 GB/s). :func:`fit_table` runs before every table is
printed (the consoles in :mod:`gpuwhy.render.console` call it): a column whose cells
are all numbers (with an optional short unit: ``4,800``, ``87%``, ``3.49 us``) gets a
fixed width that holds its widest number, its header wrapped onto lines of that width;
text columns wrap (folded, never cut with "…") as they must, a number and its unit kept on one
line (:class:`JoinedText`). When even that does not fit, a table with headers is printed as one
key/value block per row instead, and a key/value table (no headers) as each key on its own line with
its value indented below it, which never cuts a value.
"""

from __future__ import annotations

import re
from typing import Any

from rich.cells import cell_len
from rich.text import Text

#: A number, optionally with a short unit or suffix: 4,800 | 1.2e+03 | 87% | 171x | 3.49 us | 4.59 TB/s.
_NUMBER = re.compile(r"[-+~<>=]*\s?(\d[\d,]*(\.\d+)?|\.\d+)(e[-+]?\d+)?(\s?[%x]|\s?[A-Za-z/]{1,9})?")
#: Cells that say "no value" and may stand in a column of numbers.
_BLANK = {"", "n/a", "-", "—", "–", "none", "?"}


#: A space between a number and its unit (``3.35 TB/s``, ``1.76 us``, ``60 MiB``, ``67 TFLOP/s``): a
#: line may not break there. The units are those :mod:`gpuwhy.units` writes.
_NUMBER_UNIT_SPACE = re.compile(
    r"(?<=\d) (?=(?:(?:[kKMGTPE]i?)?(?:FLOPs?|OPS|B|Hz|W|bytes?)(?:/(?:s|byte|h))?|TOPS|ns|us|µs|ms|s|min|h|days)(?![\w/]))")
#: What a joined space is while rich wraps a line: one cell wide and not whitespace, so that
#: rich (which breaks at anything ``str.isspace`` calls a space, no-break spaces included) keeps
#: the number and its unit together. A private-use character, never in gpuwhy's text.
_JOINER = "\ue000"


def join_units(text: str) -> str:
    """``text`` with each space between a number and its unit replaced by the joiner that
    :class:`JoinedText` wraps around (same length, so styles keep their places)."""
    return _NUMBER_UNIT_SPACE.sub(_JOINER, text)


class JoinedText(Text):
    """A rich ``Text`` wrapped and measured with each number and its unit as one word."""

    def wrap(self, console, width, **kwargs):  # rich's signature
        joined = _retyped(Text, self)  # a plain Text (its own wrap), with the units joined
        joined.plain = join_units(self.plain)  # the same length: the spans stay valid
        lines = joined.wrap(console, width, **kwargs)
        for line in lines:
            line.plain = line.plain.replace(_JOINER, " ")
        return lines

    def __rich_measure__(self, console, options):
        from rich.measure import Measurement

        m = super().__rich_measure__(console, options)
        return Measurement(max([m.minimum] + [cell_len(w) for w in join_units(self.plain).split()]), m.maximum)


def _retyped(cls, text: Text) -> Text:
    """A ``cls`` (``Text`` or :class:`JoinedText`) with ``text``'s characters, styles and options."""
    out = cls(text.plain, style=text.style, justify=text.justify, overflow=text.overflow, no_wrap=text.no_wrap,
              end=text.end, tab_size=text.tab_size)
    out._spans[:] = text._spans
    return out


def joined_text(cell: Any):
    """``cell`` (a string or a rich ``Text``) as a :class:`JoinedText`; any other renderable as it is."""
    if isinstance(cell, str):
        cell = Text(cell)
    if not isinstance(cell, Text) or isinstance(cell, JoinedText):
        return cell
    return _retyped(JoinedText, cell)


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
    if not table.columns or getattr(table, "_gpuwhy_fitted", False):
        return table
    table._gpuwhy_fitted = True
    options = console.options.update_width(console.width)
    if _width(table, console, options, "maximum") <= console.width:
        return table  # rich shrinks nothing: leave the table as it is
    numeric = []
    for col in table.columns:
        w = numeric_width([_plain(c) for c in col._cells])
        if w is None:
            col.no_wrap, col.overflow = False, "fold"  # text may wrap (whole, never with "…") to make room
            col._cells[:] = [joined_text(c) for c in col._cells]  # but never between a number and its unit
            continue
        head = _plain(col.header)
        numeric.append((col, head, w))
        col.width, col.no_wrap = max([w] + [len(word) for word in head.split()]), True
    slack = console.width - _width(table, console, options, "minimum")
    for col, head, w in numeric:  # a header on one line where the width allows, else wrapped to its column
        grow = min(max(0, len(head) - col.width), max(0, slack))
        col.width, slack = col.width + grow, slack - grow
        style = col.header.style if isinstance(col.header, Text) else ""
        col.header = Text(wrap_words(head, col.width), style=style) if head else col.header
    if _width(table, console, options, "minimum") <= console.width and not _cramped(table, console, options):
        return table
    return _as_records(table, console, options) if table.show_header else _stacked(table)


#: A word of text longer than this may be folded onto the next line (a URL, a path, a long kernel
#: name): it does not make its column that wide. Numbers are never folded.
FOLD_FROM = 20


def _width(table, console, options, which: str) -> int:
    """The table's ``minimum`` or ``maximum`` width in cells, borders and padding included; the
    minimum counts a wrapping column's words as at most :data:`FOLD_FROM` wide."""
    widths = []
    for c in table.columns:
        w = getattr(table._measure_column(console, options, c), which)
        widths.append(min(w, max(FOLD_FROM, c.width or 0)) if which == "minimum" and not c.no_wrap else w)
    return sum(widths) + table._extra_width


def _cramped(table, console, options) -> bool:
    """Whether ``table`` is a key/value table (no headers) whose keys would take more than half of
    ``console``'s width: then its values are better on lines of their own (:func:`_stacked`)."""
    if table.show_header or len(table.columns) < 2:
        return False
    keys = sum(table._measure_column(console, options, c).maximum for c in table.columns[:-1])
    return keys + table._extra_width > console.width // 2


def _one_column(table):
    """An empty table of one folding column with ``table``'s title and no headers."""
    from rich.table import Table

    t = Table(title=table.title, title_justify=table.title_justify, title_style=table.title_style, show_header=False,
              box=None, pad_edge=False)
    t.add_column(overflow="fold")
    t._gpuwhy_fitted = True
    return t


def _as_records(table, console, options):
    """The rows of ``table`` (a table with headers) as ``header  value`` lines, one block per row
    (blank line between); stacked (:func:`_stacked`) when even that is wider than ``console``."""
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
                kv.add_row(joined_text(head), joined_text(cell))
    kv._gpuwhy_fitted = True
    if _width(kv, console, options, "minimum") > console.width:
        return _stacked(kv)
    return kv


def _stacked(table):
    """A key/value table (no headers) too narrow for its two columns: each row's first cell on a
    line of its own (in the first column's style), the others indented below it."""
    from rich.padding import Padding

    t = _one_column(table)
    first = table.columns[0]
    for r, row in enumerate(zip(*(c._cells for c in table.columns))):
        if not any(_plain(c).strip() for c in row):
            if r:
                t.add_row("")
            continue
        key = row[0] if isinstance(row[0], Text) else Text(str(row[0]), style=first.style or "")
        if _plain(key).strip():
            t.add_row(key)
        for cell in row[1:]:
            if _plain(cell).strip():
                t.add_row(Padding(joined_text(cell), (0, 0, 0, 2)))
    return t


#: Columns of a text chart's grid: at most the default, at least enough to read it.
CHART_COLUMNS, MIN_CHART_COLUMNS = 64, 24
#: What a text chart needs beside its grid: the y labels, the axis and the x unit.
CHART_MARGIN = 28


def chart_columns(terminal_width: int) -> int:
    """Grid columns of a text roofline for a terminal ``terminal_width`` columns wide."""
    return max(MIN_CHART_COLUMNS, min(CHART_COLUMNS, int(terminal_width) - CHART_MARGIN))
