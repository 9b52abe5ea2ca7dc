"""`gpuwhy trace TRACE.json`: a torch.profiler Chrome trace (plain or gzipped) into a
per-GPU timeline: busy vs idle, idle time by cause with its evidence, and the verdict."""

from __future__ import annotations

import typer

from .app import app
from .common import CsvOpt, JsonOpt
from .profiler_files import TopOpt, readable


@app.command("trace")
def trace_cmd(
    trace: str = typer.Argument(..., metavar="TRACE.json",
                                help="A torch.profiler Chrome trace (.json, .json.gz, .pt.trace.json)."),
    top: str = TopOpt,
    json_out: JsonOpt = False,
    csv_out: CsvOpt = False,
) -> None:
    """Per GPU of a torch.profiler trace: busy vs idle, why it was idle (host launch, syncs, DataLoader, pageable copies,
    other streams, warm-up), per step, kernel time by kind, the verdict and its remedies."""
    from ..importers.kineto import load_trace
    from ..units import parse_count

    n = parse_count(top, "--top")
    report = readable(trace, "torch.profiler trace", load_trace, trace, top=n)
    if csv_out:
        from ..render.csv_out import emit_csv

        return emit_csv("trace", report, json_out)
    if json_out:
        from ..render.jsonout import emit

        emit("trace", report)
        return
    from ..render.trace_view import render_trace

    render_trace(report)
