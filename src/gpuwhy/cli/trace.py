"""`gpuwhy trace TRACE`: a torch.profiler Chrome trace (plain or gzipped) or an Nsight Systems report
(``nsys export --type sqlite``, or ``.nsys-rep`` through ``nsys``) into a per-GPU timeline: busy vs idle,
idle time by cause with its evidence, and the verdict."""

from __future__ import annotations

from typing import Optional

import typer

from .app import app
from .common import CsvOpt, JsonOpt
from .profiler_files import ExampleOpt, TopOpt, example_file
from .progress import reading_label, working


@app.command("trace")
def trace_cmd(
    trace: Optional[str] = typer.Argument(None, metavar="TRACE",
                                help="A torch.profiler Chrome trace (.json, .json.gz, .pt.trace.json), an Nsight "
                                     "Systems report (.sqlite from `nsys export --type sqlite`, .sqlite.gz, "
                                     ".nsys-rep with nsys on PATH), or JAX's profiler trace: the LOGDIR of "
                                     "jax.profiler.trace(LOGDIR) (its newest run), a run folder or its "
                                     "trace file."),
    top: str = TopOpt,
    steps_from: Optional[str] = typer.Option(None, "--steps-from", metavar="NAME",
                                             help="The host range (NVTX range, record_function label, a JAX "
                                                  "jitted call such as 'PjitFunction(step)') that marks one step: "
                                                  "each range of that name is a step."),
    json_out: JsonOpt = False,
    csv_out: CsvOpt = False,
    example: Optional[str] = ExampleOpt,
) -> None:
    """Per GPU of a torch.profiler trace, an Nsight Systems report or JAX's profiler trace: the time budget (busy by what ran, idle by cause: launch overhead, host
    work, syncs, DataLoader, pageable copies, dependency waits, warm-up), the fixes with the most each can give,
    per step, kernel time by kind, and the verdict."""
    from ..api.readers import read_trace
    from ..errors import UsageError
    from ..render.output import Format, show
    from ..render.trace_view import render_trace
    from ..units import parse_count

    if example is None and trace is None:
        raise UsageError("give a trace (gpuwhy trace TRACE.json or REPORT.sqlite), or try a sample: gpuwhy trace --example list")
    trace = example_file("trace", trace, example, json_out=json_out, csv_out=csv_out, given_name="a trace")
    if trace is None:
        return
    fmt = Format(json=json_out, csv=csv_out)
    n = parse_count(top, "--top")
    with working(reading_label("the trace", trace), quiet=json_out or csv_out):  # a status on a terminal only
        result = read_trace(trace, top=n, steps_from=steps_from)
    show("trace", result, fmt, render_trace)
