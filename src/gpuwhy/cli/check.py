"""`gpuwhy check`: hardware smoke checks with thresholds, for CI and fleets."""

from __future__ import annotations

from typing import Optional

import typer

from .app import app
from .common import CsvOpt, DeviceOpt, GpuOpt, JsonOpt, SpecsOpt
from .profiler_files import example_file


@app.command("check")
def check_cmd(
    device: DeviceOpt = None,
    all_devices: bool = typer.Option(False, "--all-devices", help="Check every visible GPU (the same as -i all)."),
    policy: Optional[str] = typer.Option(None, "--policy", metavar="FILE.yaml", help="Thresholds and health checks overriding the bundled policy."),
    min_bandwidth: Optional[float] = typer.Option(None, "--min-bandwidth", metavar="F", help="DRAM bandwidth >= F x sheet (0 < F <= 1)."),
    min_fp32: Optional[float] = typer.Option(None, "--min-fp32", metavar="F", help="FP32 FMA rate >= F x sheet."),
    min_tensor: Optional[float] = typer.Option(None, "--min-tensor", metavar="F", help="Tensor-core rate >= F x sheet dense peak."),
    max_launch_overhead: Optional[str] = typer.Option(None, "--max-launch-overhead", metavar="T", help="Event-timed launch overhead <= T, with its unit: 5us, 0.02ms."),
    junit: Optional[str] = typer.Option(None, "--junit", metavar="FILE.xml", help="Write JUnit XML (one testcase per check)."),
    recorded: Optional[str] = typer.Option(None, "--recorded", metavar="FILE.json", help="Evaluate recorded observations (a JSON list, e.g. from --json) instead of measuring."),
    baseline: Optional[str] = typer.Option(None, "--baseline", metavar="FILE.json", help="Fail on figures that regressed against a saved run of the same GPU model (check/bench --json or a profile); tolerances from the policy."),
    save_baseline: Optional[str] = typer.Option(None, "--save-baseline", metavar="FILE.json", help="Write this run as a baseline (the --json document), when no check failed."),
    overwrite: bool = typer.Option(False, "--overwrite", help="With --save-baseline: replace an existing file."),
    level: int = typer.Option(2, "--level", "-r", metavar="N", help="1: NVML health alone, no CUDA context, nothing measured (no CUDA start-up: for a Slurm prolog); 2: health and the quick measurements (as dcgmi diag -r)."),
    textfile: Optional[str] = typer.Option(None, "--textfile", metavar="FILE.prom", help="Write node_exporter textfile metrics (atomically; dcgm-exporter's labels): each check's state and each figure."),
    drain_reason: bool = typer.Option(False, "--drain-reason", help="Print only one line on stdout: why to drain this node (for scontrol ... reason=\"...\"), nothing when no check failed."),
    gpu: GpuOpt = None,
    specs: SpecsOpt = None,
    json_out: JsonOpt = False,
    csv_out: CsvOpt = False,
    example: Optional[str] = typer.Option(None, "--example", metavar="NAME",
                                          help="Judge a recorded run shipped with gpuwhy (as --recorded FILE) instead of "
                                               "measuring; `--example list` lists them."),
) -> None:
    """Health checks and quick measurements against thresholds: exit 0 all pass (warnings allowed), 1 a check failed, 3 no GPU, 4 a measurement error."""
    from ..api.check import CheckRequest
    from ..render.check_view import print_drain_reason, render_check_outcome, warn_warned
    from ..render.output import FileOut, Format, save_baseline as save, show

    if example is not None:
        recorded = example_file("check", recorded, example, json_out=json_out, csv_out=csv_out, given_name="--recorded")
        if recorded is None:
            return
    fmt = Format(json_out, csv_out)
    fmt.check()
    if drain_reason and (json_out or csv_out):
        from ..errors import UsageError

        raise UsageError(f"--drain-reason and {'--json' if json_out else '--csv'} exclude each other (each is all of stdout); pick one")
    request = CheckRequest(device, all_devices, policy, min_bandwidth, min_fp32, min_tensor, max_launch_overhead, recorded,
                           baseline, save_baseline, overwrite, gpu, tuple(specs or ()), level, textfile)
    if drain_reason:
        outcome = _drain_reason_run(request)
    else:
        from ..api.check import run_check

        outcome = run_check(request)
    files = (FileOut(lambda: outcome.write_junit(junit)),) if junit else ()
    if textfile:
        from ..render.textfile import check_metrics, write_textfile

        files += (FileOut(lambda: write_textfile(textfile, check_metrics(outcome, outcome.level)), f"metrics written to {textfile}"),)
    view = (lambda o: print_drain_reason(o.drain_reason)) if drain_reason else render_check_outcome
    show("check", outcome, fmt, view, files=files)
    from ..render.github import publish_check

    publish_check(outcome)  # under GitHub Actions: annotations and the step summary
    error = outcome.gpu_error()
    if error is not None:
        raise error
    warn_warned(outcome.warned(), "check", "warned")
    if save_baseline and outcome.passed:
        save("check", outcome.document, save_baseline, overwrite)
    failure = outcome.failure(save_baseline)
    if failure is not None:
        raise failure



def _drain_reason_run(request):
    """``--drain-reason``: the run, and when the GPU cannot be read or measured (exit 3 or 4) the one
    line ``gpuwhy check -rN: <the error>`` on stdout before the error goes on to its exit code (bad
    input, exit 2, is the caller's mistake, not the node's: no line)."""
    from ..api.check import drain_reason_of_error, run_check
    from ..errors import MeasurementError, NoDeviceError
    from ..render.check_view import print_drain_reason

    try:
        return run_check(request)
    except (NoDeviceError, MeasurementError) as exc:
        print_drain_reason(drain_reason_of_error(exc, request.level))
        raise
