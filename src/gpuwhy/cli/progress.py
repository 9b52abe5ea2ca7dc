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
