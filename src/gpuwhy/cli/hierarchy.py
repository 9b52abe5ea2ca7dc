"""`gpuwhy bench --latency` and `gpuwhy bench --link`: the memory hierarchy, from L1 to the host link.

Not a command of its own: ``cli/bench.py`` calls :func:`run_latency_cmd` or
:func:`run_link_cmd` for ``--latency`` / ``--link``. Each measures (through
:mod:`gpuwhy.bench.latency` / :mod:`gpuwhy.bench.link`) and renders: rich
tables on stdout (progress on stderr when it is a terminal), or with
``--json`` one document of kind ``bench-latency`` / ``bench-link``.
Heavy imports happen inside the functions.
"""

from __future__ import annotations

import contextlib
from typing import Iterator, Sequence


@contextlib.contextmanager
def _progress(label: str) -> Iterator:
    """A ``progress(total=, advance=, description=)`` callable drawing a bar on a
    terminal's stderr, or None when stderr is not a terminal."""
    from ..render.console import err

    con = err()
    if not con.is_terminal:
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn(f"[bold]{label}[/bold] {{task.description}}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=con, transient=True) as bar:
        task = bar.add_task("starting", total=None)

        def progress(total=None, advance=0, description=None):
            t = bar.tasks[0]
            bar.update(task, total=total if total is not None else t.total, advance=advance,
                       description=description if description is not None else t.description)

        yield progress


def run_latency_cmd(device: str | None, json_out: bool, spec_dirs: Sequence[str] | None,
                    *, gpu: str | None = None, l1_bypass: bool = False) -> None:
    """Measure and print the latency ladder with Little's law (``gpuwhy bench --latency``).

    Args:
        device: ``--device`` (index or UUID; None: GPU 0).
        json_out: print one JSON document (kind ``bench-latency``) and nothing else on stdout.
        spec_dirs: ``--specs`` folders (for the sheet's bandwidth when no profile exists).
        gpu: ``--gpu`` sheet name overriding the NVML match (bandwidth only).
        l1_bypass: chase with ``ld.global.cg`` (no L1 level).

    Raises:
        NoDeviceError (exit 3), UsageError (exit 2), MeasurementError (exit 4).
    """
    from ..bench.latency import measure_latency

    with _progress("gpuwhy bench --latency") as prog:
        result = measure_latency(device, tuple(spec_dirs or ()), l1_bypass=l1_bypass, gpu=gpu, progress=prog)
    if json_out:
        from ..render.jsonout import emit

        emit("bench-latency", result.to_dict())
        return
    from ..render.hierarchy_view import render_latency

    render_latency(result)


def run_link_cmd(device: str | None, json_out: bool, spec_dirs: Sequence[str] | None) -> None:
    """Measure and print host <-> device copy bandwidth (``gpuwhy bench --link``).

    Args:
        device: ``--device`` (index or UUID; None: GPU 0).
        json_out: print one JSON document (kind ``bench-link``) and nothing else on stdout.
        spec_dirs: ``--specs`` folders (passed to the probe that reads the link).

    Raises:
        NoDeviceError (exit 3), UsageError (exit 2), MeasurementError (exit 4).
    """
    from ..bench.link import measure_link

    with _progress("gpuwhy bench --link") as prog:
        result = measure_link(device, tuple(spec_dirs or ()), progress=prog)
    if json_out:
        from ..render.jsonout import emit

        emit("bench-link", result.to_dict())
        return
    from ..render.hierarchy_view import render_link

    render_link(result)
