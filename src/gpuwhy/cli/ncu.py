"""`gpuwhy ncu REPORT`: an Nsight Compute export (``--csv`` raw or details page, or a ``.ncu-rep``)
into per-kernel verdicts (also ``gpuwhy classify --ncu``); `gpuwhy ncu -- CMD ARGS...` runs
the program under ncu first, with the metrics chosen for this GPU."""

from __future__ import annotations

from typing import Optional

import typer
from typer.core import TyperCommand

from .app import app
from .common import CsvOpt, GpuOpt, JsonOpt, SpecsOpt
from .profiler_files import TopOpt


class _CommandAfterDashes(TyperCommand):
    """Keeps what follows ``--`` (the program to run) in ``ctx.meta["ncu_cmd"]``, untouched by option parsing."""

    def parse_args(self, ctx, args):
        if "--" in args:
            i = args.index("--")
            ctx.meta["ncu_cmd"] = list(args[i + 1:])
            args = args[:i]
        return super().parse_args(ctx, args)


def _error_doc(exc) -> dict:
    from ..errors import GpuwhyError

    doc = {"error": {"message": str(exc), "exit_code": exc.exit_code if isinstance(exc, GpuwhyError) else 70}}
    candidates = getattr(exc, "candidates", ())
    if candidates:
        doc["error"]["candidate_sheets"] = list(candidates)
    return doc


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
        UsageError: an unreadable or non-ncu file, a permission-error export, a
            bad --top, an unknown --gpu or --dtype, a GPU the export does not identify,
            or --measured without a bench profile of that GPU.
        NoDeviceError: a ``.ncu-rep`` and nothing installed to read it.
    """
    from ..api.readers import readable
    from ..errors import GpuwhyError
    from ..importers.ncu import load_ncu_report
    from ..units import parse_count

    try:
        if plot is not None:
            from ..render.plot import check_plot_path

            check_plot_path(plot, "--plot")
        n = parse_count(top, "--top")
        report = readable(path, "Nsight Compute export", load_ncu_report, path, gpu=gpu, dtype=dtype, top=n,
                          spec_dirs=specs or (), device=device, measured=measured)
    except GpuwhyError as exc:
        if json_out:
            from ..render.jsonout import emit

            emit("ncu", {**_error_doc(exc), **({"run": run} if run is not None else {})})
        raise
    if plot is not None:
        _save_plot(report, plot, specs)
    if csv_out:
        from ..render.csv_out import emit_csv

        return emit_csv("ncu", report, json_out)
    if json_out:
        from ..render.jsonout import emit

        payload = report.to_dict()
        if run is not None:
            payload["run"] = run.to_dict()
        emit("ncu", payload)
        return
    from ..render.ncu_view import render_ncu

    render_ncu(report, run)


def _save_plot(report, path: str, specs) -> None:
    """Draw the first GPU of ``report`` to ``path`` (:func:`~gpuwhy.render.ncu_chart.ncu_chart`)."""
    from ..device.sheet import sheet_for
    from ..errors import UsageError
    from ..render.console import note
    from ..render.ncu_chart import ncu_chart
    from ..render.plot import save_chart

    if not report.devices:
        raise UsageError("the export has no GPU to draw; drop --plot")
    d = report.devices[0]
    save_chart(ncu_chart(d, sheet_for(d.sheet, spec_dirs=specs or ()).sheet), path)
    more = f" (GPU {d.device} of {len(report.devices)}: --device picks another)" if len(report.devices) > 1 else ""
    note(f"roofline of GPU {d.device} drawn to {path}{more}")


def run_profile(cmd: list[str], json_out: bool, **options):
    """Run ``cmd`` under ncu (:func:`~gpuwhy.importers.ncu.runner.profile_command`); with ``--json`` an
    error prints one JSON document first.

    Raises:
        NoDeviceError, UsageError, MeasurementError: see ``profile_command``.
    """
    from ..errors import GpuwhyError
    from ..importers.ncu.runner import profile_command

    try:
        return profile_command(cmd, **options)
    except GpuwhyError as exc:
        if json_out:
            from ..render.jsonout import emit

            emit("ncu", _error_doc(exc))
        raise


@app.command("ncu", cls=_CommandAfterDashes)
def ncu_cmd(
    ctx: typer.Context,
    report: Optional[str] = typer.Argument(None, metavar="REPORT",
                                           help="An `ncu --csv` export (raw or details page) or a .ncu-rep report, gzipped or not (see docs/diagnose.md). Or `-- CMD ARGS...` to run CMD under ncu."),
    gpu: GpuOpt = None,
    device: Optional[str] = typer.Option(None, "--device", metavar="ID|NAME", help="Only the GPU with this Device index (or name) in the export."),
    dtype: Optional[str] = typer.Option(None, "--dtype", help="Force the compute ceiling's precision (default: per kernel, from its FLOP counters)."),
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
) -> None:
    """Per kernel of an Nsight Compute export: regime (from FLOPs and bytes, or from pipe and DRAM utilisation), how each figure was derived, and ncu's own Speed-of-Light verdict."""
    from ..errors import UsageError
    from ..units import parse_count

    cmd = ctx.meta.get("ncu_cmd")
    run_opts = {"-c": launch_count, "--kernel-name": kernel_name, "--launch-skip": launch_skip, "--export": export, "--ncu": ncu_path}
    if cmd is None:
        given = [k for k, v in run_opts.items() if v is not None] + (["--profile-from-start"] if profile_from_start != "on" else [])
        if report is None:
            raise UsageError("give an ncu export (gpuwhy ncu REPORT.csv) or a program to run (gpuwhy ncu -- python3 train.py)")
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
    run = run_profile(
        cmd, json_out,
        ncu=ncu_path,
        launch_count=parse_count(launch_count, "-c") if launch_count is not None else 200,
        kernel_name=kernel_name,
        launch_skip=parse_count(launch_skip, "--launch-skip") if launch_skip is not None else None,
        profile_from_start=profile_from_start == "on",
        export=export,
    )
    run_ncu(run.csv_path, gpu=gpu, top=top, json_out=json_out, specs=specs, dtype=dtype, device=device, run=run, csv_out=csv_out,
            measured=measured, plot=plot)
