"""Shared rich consoles: results on stdout, warnings and notes on stderr.

Both print text literally: rich markup is off, so a kernel name, a sheet name or a
``--point`` label holding ``[...]`` is shown as written (styles come from ``Text``
objects, never from markup in data). The width comes from :func:`terminal_columns`;
every table goes through :func:`gpuwhy.render.fit.fit_table` first, so a narrow terminal
never cuts a number. No line ends in spaces (rich pads table cells to their column's width).
"""

from __future__ import annotations

import os
import re
from functools import lru_cache

#: Narrower than this is not a terminal width (``COLUMNS=0``, ``-5``, ``abc``, ``""``).
MIN_COLUMNS = 20
#: Width of piped output (standard output not a terminal) when ``COLUMNS`` gives none: the
#: width a terminal has when it says none, so a file or a pager reads as the terminal would.
PIPE_COLUMNS = 80
#: The end of a line after its last character: spaces (rich pads every table cell to its column's
#: width) and the style codes among them.
_LINE_END_PADDING = re.compile(r"(?:[ ]|\x1b\[[0-9;]*m)+(?=\n)")


def strip_line_ends(text: str) -> str:
    """``text`` without the spaces at the ends of its lines (style codes there kept)."""
    return _LINE_END_PADDING.sub(lambda m: "".join(re.findall(r"\x1b\[[0-9;]*m", m.group(0))), text)


def terminal_columns() -> int | None:
    """``COLUMNS`` as a width when it is a whole number of at least :data:`MIN_COLUMNS`, else None."""
    try:
        n = int(os.environ.get("COLUMNS", "").strip())
    except ValueError:
        return None
    return n if n >= MIN_COLUMNS else None


def sanitize_columns() -> None:
    """Drop a ``COLUMNS`` that is no width (empty, not a number, under :data:`MIN_COLUMNS`) from
    this process's environment, so rich, typer and click measure the terminal instead of
    printing nothing or failing."""
    if "COLUMNS" in os.environ and terminal_columns() is None:
        del os.environ["COLUMNS"]


def _console(stderr: bool):
    import sys

    from rich.console import Console
    from rich.table import Table

    from .fit import fit_table

    class _Console(Console):
        def print(self, *objects, **kwargs):  # noqa: A003 (rich's name)
            super().print(*(fit_table(o, self) if isinstance(o, Table) else o for o in objects), **kwargs)

        def _render_buffer(self, buffer):  # rich's: the text written, here without trailing spaces
            return strip_line_ends(super()._render_buffer(buffer))

    stream = sys.stderr if stderr else sys.stdout
    width = terminal_columns()
    if width is None and not stream.isatty() and not stderr:
        width = PIPE_COLUMNS  # not rich's own guess, which may read the size of another stream's terminal
    return _Console(stderr=stderr, highlight=False, markup=False, emoji=False, width=width)


@lru_cache(maxsize=None)
def out():
    """The rich Console for results (stdout)."""
    return _console(stderr=False)


@lru_cache(maxsize=None)
def err():
    """The rich Console for warnings and progress (stderr)."""
    return _console(stderr=True)


def warn(message: str) -> None:
    """Print one warning line on stderr (``message`` literally)."""
    from rich.text import Text

    err().print(Text.assemble(("warning:", "yellow"), " ", message), highlight=False, soft_wrap=True)


def note(message: str) -> None:
    """Print one informational line on stderr (``message`` literally)."""
    from rich.text import Text

    err().print(Text(message, style="dim"), highlight=False, soft_wrap=True)


#: Notes kept for the end of a command (:func:`note_later`): printed when it succeeds, dropped
#: when it fails, so that an error stays the one line on stderr.
_LATER: list[str] = []


def note_later(message: str) -> None:
    """Keep ``message`` to print on stderr once the command has succeeded (:func:`flush_later`)."""
    if message not in _LATER:
        _LATER.append(message)


def flush_later(print_them: bool = True) -> None:
    """Print (or, after an error, drop) the notes kept by :func:`note_later`."""
    kept = list(_LATER)
    _LATER.clear()
    for message in kept if print_them else ():
        note(message)


def note_left_out(verb: str, left_out: dict[str, int], notes) -> None:
    """Print on stderr what reading a file left out (``<verb> <count> <reason>``), then its ``notes``, one a line."""
    for reason, n in left_out.items():
        note(f"{verb} {n} {reason}")
    for n in notes:
        note(n)
