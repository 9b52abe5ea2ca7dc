"""`gpuwhy ncu REPORT.csv`: an Nsight Compute ``--csv`` export (raw or details page)
into per-kernel roofline verdicts (also ``gpuwhy classify --ncu``)."""

from __future__ import annotations

from typing import Optional

import typer

from .app import app
from .common import CsvOpt, GpuOpt, JsonOpt, SpecsOpt
from .profiler_files import TopOpt, readable


def run_ncu(
    path: str,
    gpu: Optional[str] = None,
    top: str = "10",
    json_out: bool = False,
    specs=None,
    dtype: Optional[str] = None,
    device: Optional[str] = None,
    csv_out: bool = False,
) -> None:
    """Read, judge and render an ncu export (shared by `gpuwhy ncu` and `gpuwhy classify --ncu`).

    Raises:
        UsageError: an unreadable or non-ncu file, a permission-error export, a
            bad --top, an unknown --gpu or --dtype, or a GPU no sheet matches.
    """
    from ..importers.ncu import load_ncu_report
    from ..units import parse_count

    n = parse_count(top, "--top")
    report = readable(path, "Nsight Compute CSV export", load_ncu_report, path, gpu=gpu, dtype=dtype, top=n,
                      spec_dirs=specs or (), device=device)
    if csv_out:
        from ..render.csv_out import emit_csv

        return emit_csv("ncu", report, json_out)
    if json_out:
        from ..render.jsonout import emit

        emit("ncu", report)
        return
    from ..render.ncu_view import render_ncu

    render_ncu(report)


@app.command("ncu")
def ncu_cmd(
    report: str = typer.Argument(..., metavar="REPORT.csv", help="An `ncu --csv` export, raw or details page (see docs/diagnose.md)."),
    gpu: GpuOpt = None,
    device: Optional[str] = typer.Option(None, "--device", metavar="ID|NAME", help="Only the GPU with this Device index (or name) in the export."),
    dtype: Optional[str] = typer.Option(None, "--dtype", help="Force the compute ceiling's precision (default: per kernel, from its FLOP counters)."),
    top: str = TopOpt,
    specs: SpecsOpt = None,
    json_out: JsonOpt = False,
    csv_out: CsvOpt = False,
) -> None:
    """Per kernel of an Nsight Compute export: intensity, achieved FLOP/s and bandwidth, % of the roof, regime, top remedy."""
    run_ncu(report, gpu=gpu, top=top, json_out=json_out, specs=specs, dtype=dtype, device=device, csv_out=csv_out)
