"""`gpuwhy ncu REPORT`: an Nsight Compute export (``--csv`` raw or details page, or a ``.ncu-rep``)
into per-kernel verdicts (also ``gpuwhy classify --ncu``); `gpuwhy ncu -- CMD ARGS...` runs
the program under ncu first, with the metrics chosen for this GPU."""

from __future__ import annotations

from typing import Optional

import typer
from typer.core import TyperCommand

from .app import app
from .completion import complete_dtype
from .common import CsvOpt, GpuOpt, JsonOpt, SpecsOpt
from .profiler_files import ExampleOpt, TopOpt, example_file


class _CommandAfterDashes(TyperCommand):
    """Keeps what follows ``--`` (the program to run) in ``ctx.meta["ncu_cmd"]``, untouched by option parsing."""

    def parse_args(self, ctx, args):
        if "--" in args:
            i = args.index("--")
            ctx.meta["ncu_cmd"] = list(args[i + 1:])
            args = args[:i]
        return super().parse_args(ctx, args)


def run_ncu(
    path: str,
    gpu: Optional[str] = None,
    top: str = "10",
    json_out: bool = False,
    specs=None,
    dtype: Optional[str] = None,
    device: Optional[str] = None,
    run=None,
    csv_out: bool = False,
    measured: bool = False,
    plot: Optional[str] = None,
) -> None:
    """Read, judge and render an ncu export (shared by `gpuwhy ncu` and `gpuwhy classify --ncu`).

    With ``--json`` an error still prints one JSON document (with ``error``) before it is raised.

    Raises:
        UsageError, NoDeviceError: see :func:`gpuwhy.api.ncu.read_ncu_export` and
            :func:`gpuwhy.api.ncu.plot_of`.
    """
    from ..api.ncu import read_ncu_export
    from ..errors import GpuwhyError
    from ..render.output import Format, show, show_failure

    fmt = Format(json=json_out, csv=csv_out)
    try:
        if plot is not None:
            from ..render.plot import check_plot_path

            check_plot_path(plot, "--plot")
        from .progress import reading_label, working

        with working(reading_label("the ncu export", path), quiet=json_out or csv_out):  # a status on a terminal only
            report = read_ncu_export(path, gpu=gpu, top=top, dtype=dtype, device=device, measured=measured,
                                     spec_dirs=specs or ())
    except GpuwhyError as exc:
        show_failure("ncu", exc, fmt, {"run": run} if run is not None else None)
        raise
    from ..render.ncu_view import render_ncu

    files = [_plot_file(report, plot, specs)] if plot is not None else []
    payload = report.to_dict() if fmt.json else None
    if payload is not None and run is not None:
        payload["run"] = run.to_dict()
    show("ncu", report, fmt, lambda r: render_ncu(r, run), document=payload, files=files)


def _plot_file(report, path: str, specs):
    """The roofline of the first GPU of ``report``, drawn to ``path`` (:func:`~gpuwhy.render.ncu_chart.ncu_chart`)."""
    from ..api.ncu import plot_of
    from ..render.ncu_chart import ncu_chart
    from ..render.output import FileOut
    from ..render.plot import save_chart

    what = plot_of(report, path, specs or ())
    return FileOut(lambda: save_chart(ncu_chart(what.device, what.sheet), path), what.said)


def run_profile(cmd: list[str], json_out: bool, **options):
    """Run ``cmd`` under ncu (:func:`gpuwhy.api.ncu.profile_program`, ``options`` as given on the
    command line); with ``--json`` an error prints one JSON document first.

    Raises:
        NoDeviceError, UsageError, MeasurementError: see ``profile_program``.
    """
    from ..api.ncu import profile_program
    from ..errors import GpuwhyError
    from ..render.output import Format, show_failure

    try:
        return profile_program(cmd, **options)
    except GpuwhyError as exc:
        show_failure("ncu", exc, Format(json=json_out))
        raise


@app.command("ncu", cls=_CommandAfterDashes)
def ncu_cmd(
    ctx: typer.Context,
    report: Optional[str] = typer.Argument(None, metavar="REPORT",
                                           help="An `ncu --csv` export (raw or details page) or a .ncu-rep report, gzipped or not (see docs/diagnose.md). Or `-- CMD ARGS...` to run CMD under ncu."),
    gpu: GpuOpt = None,
    device: Optional[str] = typer.Option(None, "--device", metavar="ID|NAME", help="Only the GPU with this Device index (or name) in the export."),
    dtype: Optional[str] = typer.Option(None, "--dtype", help="Force the compute ceiling's precision (default: per kernel, from its FLOP counters).", autocompletion=complete_dtype),
    top: str = TopOpt,
    specs: SpecsOpt = None,
    json_out: JsonOpt = False,
    launch_count: Optional[str] = typer.Option(None, "-c", "--launch-count", metavar="N", help="With -- CMD: kernel launches to profile (default 200)."),
    kernel_name: Optional[str] = typer.Option(None, "--kernel-name", metavar="NAME", help="With -- CMD: only kernels of this name (ncu's --kernel-name, e.g. regex:gemm)."),
    launch_skip: Optional[str] = typer.Option(None, "--launch-skip", metavar="N", help="With -- CMD: skip this many launches first (ncu's --launch-skip)."),
    profile_from_start: str = typer.Option("on", "--profile-from-start", metavar="on|off", help="With -- CMD: off profiles only between cudaProfilerStart/Stop."),
    export: Optional[str] = typer.Option(None, "--export", metavar="PATH", help="With -- CMD: where to keep the .ncu-rep/.csv/.log (default gpuwhy-ncu-<program>-<time> here; never overwritten)."),
    ncu_path: Optional[str] = typer.Option(None, "--ncu", metavar="PATH", help="With -- CMD: the ncu executable (default: the one on PATH)."),
    plot: Optional[str] = typer.Option(None, "--plot", metavar="FILE", help="Also draw the kernels on the GPU's hierarchical roofline (one marker per memory level) to FILE.png or FILE.svg (needs matplotlib)."),
    measured: bool = typer.Option(False, "--measured", help="Judge L2 and L1/shared bytes against the newest `gpuwhy bench --sweep` profile's measured roofs (default: the sheet's, where it has them)."),
    csv_out: CsvOpt = False,
    example: Optional[str] = ExampleOpt,
) -> None:
    """Per kernel of an Nsight Compute export: regime (from FLOPs and bytes, or from pipe and DRAM utilisation), how each figure was derived, and ncu's own Speed-of-Light verdict."""
    from ..errors import UsageError
    from ..units import parse_count

    cmd = ctx.meta.get("ncu_cmd")
    run_opts = {"-c": launch_count, "--kernel-name": kernel_name, "--launch-skip": launch_skip, "--export": export, "--ncu": ncu_path}
    if cmd is not None and example is not None:
        raise UsageError(f"give either --example {example} or a program after `--`, not both")
    if cmd is None:
        given = [k for k, v in run_opts.items() if v is not None] + (["--profile-from-start"] if profile_from_start != "on" else [])
        if report is None and example is None:
            raise UsageError("give an ncu export (gpuwhy ncu REPORT.csv) or a program to run (gpuwhy ncu -- python3 train.py); "
                             "or try a sample: gpuwhy ncu --example list")
        report = example_file("ncu", report, example, json_out=json_out, csv_out=csv_out, given_name="an export")
        if report is None:
            return
        if given:
            raise UsageError(f"{', '.join(given)} apply to `gpuwhy ncu -- CMD`; drop them to read {report}")
        run_ncu(report, gpu=gpu, top=top, json_out=json_out, specs=specs, dtype=dtype, device=device, csv_out=csv_out,
                measured=measured, plot=plot)
        return
    if report is not None:
        raise UsageError(f"give either an export ({report}) or a program after `--`, not both")
    if profile_from_start not in ("on", "off"):
        raise UsageError(f"--profile-from-start {profile_from_start!r} must be on or off")
    parse_count(top, "--top")
    run = run_profile(cmd, json_out, ncu=ncu_path, launch_count=launch_count, kernel_name=kernel_name,
                      launch_skip=launch_skip, profile_from_start=profile_from_start, export=export)
    run_ncu(run.csv_path, gpu=gpu, top=top, json_out=json_out, specs=specs, dtype=dtype, device=device, run=run, csv_out=csv_out,
            measured=measured, plot=plot)
