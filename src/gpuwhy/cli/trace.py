"""`gpuwhy trace TRACE.json`: a torch.profiler Chrome trace (plain or gzipped) into a
per-GPU timeline: busy vs idle, idle time by cause with its evidence, and the verdict."""

from __future__ import annotations

import typer

from .app import app
from .common import CsvOpt, JsonOpt
from .profiler_files import TopOpt


@app.command("trace")
def trace_cmd(
    trace: str = typer.Argument(..., metavar="TRACE.json",
                                help="A torch.profiler Chrome trace (.json, .json.gz, .pt.trace.json)."),
    top: str = TopOpt,
    json_out: JsonOpt = False,
    csv_out: CsvOpt = False,
) -> None:
    """Per GPU of a torch.profiler trace: the time budget (busy by what ran, idle by cause: launch overhead, host
    work, syncs, DataLoader, pageable copies, dependency waits, warm-up), the fixes with the most each can give,
    per step, kernel time by kind, and the verdict."""
    from ..api.readers import read_trace
    from ..render.output import Format, show
    from ..render.trace_view import render_trace
    from ..units import parse_count

    fmt = Format(json=json_out, csv=csv_out)
    show("trace", read_trace(trace, top=parse_count(top, "--top")), fmt, render_trace)
