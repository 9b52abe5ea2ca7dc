"""`gpuwhy ncu` and `gpuwhy trace`: diagnose what profilers wrote.

- ``gpuwhy ncu REPORT.csv``: an Nsight Compute ``--csv`` export (raw or details
  page) into per-kernel roofline verdicts (also ``gpuwhy classify --ncu``).
- ``gpuwhy trace TRACE.json``: a torch.profiler Chrome trace (plain or
  gzipped) into a per-GPU timeline verdict: overhead-bound or not.
"""

from __future__ import annotations

from typing import Optional

import typer

from .app import app
from .common import GpuOpt, JsonOpt, SpecsOpt

TopOpt = typer.Option("10", "--top", metavar="N", help="Kernels to list per GPU, by total time.")


def _readable(path, what: str, fn, *args, **kwargs):
    """Run an importer; input it cannot make sense of becomes one UsageError line naming the file.

    The importers raise UsageError for every quirk they know; anything else they
    trip over is a malformed file, not a bug worth a traceback.
    """
    import csv

    from ..errors import GpuwhyError, UsageError

    try:
        return fn(*args, **kwargs)
    except GpuwhyError:
        raise
    except (AttributeError, TypeError, ValueError, KeyError, IndexError, csv.Error, RecursionError) as exc:
        raise UsageError(f"{path}: not a readable {what} ({type(exc).__name__}: {str(exc)[:120]})") from None


def run_ncu(
    path: str,
    gpu: Optional[str] = None,
    top: str = "10",
    json_out: bool = False,
    specs=None,
    dtype: Optional[str] = None,
    device: Optional[str] = None,
) -> None:
    """Read, judge and render an ncu export (shared by `gpuwhy ncu` and `gpuwhy classify --ncu`).

    Raises:
        UsageError: an unreadable or non-ncu file, a permission-error export, a
            bad --top, an unknown --gpu or --dtype, or a GPU no sheet matches.
    """
    from ..importers.ncu import load_ncu_report
    from ..units import parse_count

    n = parse_count(top, "--top")
    report = _readable(path, "Nsight Compute CSV export", load_ncu_report, path, gpu=gpu, dtype=dtype, top=n,
                       spec_dirs=specs or (), device=device)
    if json_out:
        from ..render.jsonout import emit

        emit("ncu", report)
        return
    from ..render.diagnose_view import render_ncu

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
) -> None:
    """Per kernel of an Nsight Compute export: intensity, achieved FLOP/s and bandwidth, % of the roof, regime, top remedy."""
    run_ncu(report, gpu=gpu, top=top, json_out=json_out, specs=specs, dtype=dtype, device=device)


@app.command("trace")
def trace_cmd(
    trace: str = typer.Argument(..., metavar="TRACE.json", help="A torch.profiler Chrome trace (.json or .json.gz)."),
    top: str = TopOpt,
    json_out: JsonOpt = False,
) -> None:
    """Per GPU of a torch.profiler trace: busy vs idle (waiting on the host or back-to-back gaps), launch-sized kernels, the verdict."""
    from ..importers.torch_trace import load_trace
    from ..units import parse_count

    n = parse_count(top, "--top")
    report = _readable(trace, "torch.profiler trace", load_trace, trace, top=n)
    if json_out:
        from ..render.jsonout import emit

        emit("trace", report)
        return
    from ..render.diagnose_view import render_trace

    render_trace(report)
