"""The one progress bar of the command line: a rich bar on stderr when it is a terminal."""

from __future__ import annotations

import contextlib
from typing import Callable, Iterator


@contextlib.contextmanager
def progress_bar(label: str) -> Iterator[Callable[..., None] | None]:
    """A ``progress(total=, advance=, description=)`` callable (keywords optional) drawing a
    transient bar titled ``label`` on stderr, or None when stderr is not a terminal."""
    from ..render.console import err

    con = err()
    if not con.is_terminal:
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    # The description names kernels and sizes: shown literally (markup off), the label in bold.
    with Progress(TextColumn(label.replace("{", "{{").replace("}", "}}"), style="bold", markup=False),
                  TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=con, transient=True) as bar:
        task = bar.add_task("starting", total=None)

        def progress(total=None, advance=0, description=None):
            t = bar.tasks[0]
            bar.update(task, total=total if total is not None else t.total, advance=advance,
                       description=description if description is not None else t.description)

        yield progress


@contextlib.contextmanager
def working(label: str, *, quiet: bool = False) -> Iterator[None]:
    """A transient status line (a spinner, ``label`` and the time so far) on stderr while the block
    runs, for long reads such as a large trace or ncu export; shown only when stderr is a terminal
    and not ``quiet`` (``--json``/``--csv``: nothing but the document, and no status either)."""
    from ..render.console import err

    con = err()
    if quiet or not con.is_terminal:
        yield
        return
    from rich.text import Text

    with con.status(Text(label), spinner="dots"):
        yield


def reading_label(what: str, path: str) -> str:
    """``reading PATH (SIZE)``: the status of :func:`working` for a file (the size when it can be read)."""
    import os

    from ..units import fmt_bytes

    try:
        size = f" ({fmt_bytes(os.path.getsize(path))})"
    except OSError:
        size = ""
    return f"reading {what} {path}{size}"
