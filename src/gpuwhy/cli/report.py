"""`gpuwhy report --out REPORT.html`: one self-contained HTML page of what gpuwhy found."""

from __future__ import annotations

from typing import List, Optional

import typer

from ..render.report_file import check_out_path, write_report  # noqa: F401  (also `gpuwhy run --report`'s)
from .app import app
from .completion import complete_dtype
from .common import GpuOpt, JsonOpt, SpecsOpt

@app.command("report")
def report_cmd(
    out: str = typer.Option(..., "--out", metavar="REPORT.html", help="The HTML file to write; an existing file is replaced only if gpuwhy wrote it."),
    probe: Optional[str] = typer.Option(None, "--probe", metavar="probe.json", help="`gpuwhy probe --json` output (default: probe this machine's GPU when there is one and no --gpu)."),
    bench: Optional[str] = typer.Option(None, "--bench", metavar="bench.json", help="`gpuwhy bench --sweep --json` output, or a saved profile (default: the probed GPU's latest profile)."),
    check: Optional[str] = typer.Option(None, "--check", metavar="check.json", help="`gpuwhy check --json` output."),
    latency: Optional[str] = typer.Option(None, "--latency", metavar="latency.json", help="`gpuwhy bench --latency --json` output."),
    link: Optional[str] = typer.Option(None, "--link", metavar="link.json", help="`gpuwhy bench --link --json` output."),
    run: Optional[str] = typer.Option(None, "--run", metavar="run.json", help="`gpuwhy run --json` output: the run's timeline, budget, fixes and kernels (alone: a page of the run only)."),
    point: Optional[List[str]] = typer.Option(None, "--point", metavar="NAME:FLOPS:BYTES[:TIME][:DTYPE]", help="A workload to classify and draw on the roofline, e.g. gemm:2.2T:100MB:3.1ms:bf16; judged against its DTYPE's ceiling (default: --dtype). Repeatable."),
    gpu: GpuOpt = None,
    dtype: str = typer.Option("fp32", "--dtype", help="Precision of the roofline's compute ceiling and of the points: fp64|fp32|tf32|fp16|bf16|fp8|int8|...", autocompletion=complete_dtype),
    specs: SpecsOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Write one self-contained HTML report (probe, bench ceilings, sweep, check, roofline) for sharing.

    Reads the JSON files gpuwhy's commands print with --json. Without --probe and
    --gpu it probes this machine's GPU (and, without --bench, uses its latest
    bench profile); with no GPU and no files it needs --gpu for a spec-only report.
    With --run alone (a `gpuwhy run --json` file) the page is the run's, and nothing is probed.
    """
    from ..api.report import ReportRequest, gather
    from ..render.output import Format, show
    from ..render.report_file import render_report_written, report_checks, write_report_file

    req = ReportRequest(out, probe, bench, check, latency, link, run, tuple(point or ()), gpu, dtype, tuple(specs or ()), json_out)
    written = write_report_file(gather(req, report_checks()))
    show("report", written, Format(json_out), render_report_written)
