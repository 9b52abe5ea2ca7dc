"""`gpuwhy check`: hardware smoke checks with thresholds, for CI and fleets."""

from __future__ import annotations

from typing import Optional

import typer

from .app import app
from .common import DeviceOpt, GpuOpt, JsonOpt, SpecsOpt, refuse_unused


@app.command("check")
def check_cmd(
    device: DeviceOpt = None,
    all_devices: bool = typer.Option(False, "--all-devices", help="Check every visible GPU."),
    policy: Optional[str] = typer.Option(None, "--policy", metavar="FILE.yaml", help="Thresholds and health checks overriding the bundled policy."),
    min_bandwidth: Optional[float] = typer.Option(None, "--min-bandwidth", metavar="F", help="DRAM bandwidth >= F x sheet (0 < F <= 1)."),
    min_fp32: Optional[float] = typer.Option(None, "--min-fp32", metavar="F", help="FP32 FMA rate >= F x sheet."),
    min_tensor: Optional[float] = typer.Option(None, "--min-tensor", metavar="F", help="Tensor-core rate >= F x sheet dense peak."),
    max_launch_overhead: Optional[str] = typer.Option(None, "--max-launch-overhead", metavar="T", help="Event-timed launch overhead <= T, with its unit: 5us, 0.02ms."),
    junit: Optional[str] = typer.Option(None, "--junit", metavar="FILE.xml", help="Write JUnit XML (one testcase per check)."),
    recorded: Optional[str] = typer.Option(None, "--recorded", metavar="FILE.json", help="Evaluate recorded observations (a JSON list, e.g. from --json) instead of measuring."),
    gpu: GpuOpt = None,
    specs: SpecsOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Health checks and quick measurements against thresholds: exit 0 all pass, 1 a check failed, 3 no GPU, 4 a measurement error."""
    from ..check.policy import NOTHING_CHECKED, Observations, evaluate, load_policy, write_junit
    from ..errors import CheckFailed, UsageError

    from ..units import parse_time

    lo_us = None if max_launch_overhead is None else parse_time(max_launch_overhead, "--max-launch-overhead") * 1e6
    pol = load_policy(policy, {
        "min_dram_bandwidth": min_bandwidth, "min_fp32": min_fp32, "min_tensor": min_tensor,
        "max_launch_overhead_us": lo_us,
    }, labels={"min_dram_bandwidth": "--min-bandwidth", "min_fp32": "--min-fp32", "min_tensor": "--min-tensor",
               "max_launch_overhead_us": "--max-launch-overhead"})
    if device is not None and all_devices:
        raise UsageError("--device and --all-devices exclude each other; pick one")
    reports = []
    if recorded:
        refuse_unused("with --recorded (the file names the GPUs and their sheets' figures)", gpu=gpu, device=device,
                      all_devices=all_devices, specs=specs)
        from ..inputs import read_json

        try:
            data = read_json(recorded, "a JSON list of observations (e.g. from `gpuwhy check --json`)")
        except UsageError as exc:
            raise UsageError(f"--recorded: {exc}") from None
        items = data.get("observations", data) if isinstance(data, dict) else data
        if not isinstance(items, list) or not items:
            raise UsageError(f"--recorded {recorded!r}: expected a non-empty list of observations (one per GPU)")
        observations = []
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                raise UsageError(f"--recorded {recorded!r}: entry {i} is not an object of observations")
            try:
                obs = Observations.from_dict(item)
                reports.append(evaluate(obs, pol))
            except (TypeError, ValueError, ZeroDivisionError, AttributeError, IndexError) as exc:
                raise UsageError(f"--recorded {recorded!r}: entry {i} has a bad value ({exc}); numbers must be numbers > 0") from None
            observations.append(obs)
    else:
        from ..check.observe import observe_device

        targets = [device]
        if all_devices:
            from ..device.probe import probe_devices

            targets = [str(i) for i in range(len(probe_devices(None, specs or (), full=False).devices))]
        observations = []
        for t in targets:
            obs, elapsed = observe_device(t, pol, specs or (), gpu)
            observations.append(obs)
            reports.append(evaluate(obs, pol, elapsed))
    if junit:
        write_junit(reports, junit)
    failed = [r for r in reports if r.failed]
    if json_out:
        from ..render.jsonout import emit

        emit("check", {"passed": not failed, "policy": pol.to_dict(), "devices": [r.to_dict() for r in reports],
                       "observations": [o.to_dict() for o in observations]})
    else:
        from ..render.check_view import render_check

        render_check(reports, pol)
    if failed:
        names = [f"{c.name} on {r.device}" for r in failed for c in r.checks if c.status == "fail"]
        empty = [r.device for r in failed if r.nothing_checked]
        parts = [f"{len(names)} check(s) failed: {', '.join(names)}"] if names else []
        if empty:
            parts.append(f"{NOTHING_CHECKED} on {', '.join(empty)}")
        raise CheckFailed("; ".join(parts))
