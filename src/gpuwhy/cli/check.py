"""`gpuwhy check`: hardware smoke checks with thresholds, for CI and fleets."""

from __future__ import annotations

from typing import Optional

import typer

from .app import app
from .common import CsvOpt, DeviceOpt, GpuOpt, JsonOpt, SpecsOpt, refuse_unused


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
    gpu: GpuOpt = None,
    specs: SpecsOpt = None,
    json_out: JsonOpt = False,
    csv_out: CsvOpt = False,
) -> None:
    """Health checks and quick measurements against thresholds: exit 0 all pass (warnings allowed), 1 a check failed, 3 no GPU, 4 a measurement error."""
    from ..check.policy import evaluate, load_policy, write_junit
    from ..errors import UsageError

    from ..units import parse_time

    lo_us = None if max_launch_overhead is None else parse_time(max_launch_overhead, "--max-launch-overhead") * 1e6
    pol = load_policy(policy, {
        "min_dram_bandwidth": min_bandwidth, "min_fp32": min_fp32, "min_tensor": min_tensor,
        "max_launch_overhead_us": lo_us,
    }, labels={"min_dram_bandwidth": "--min-bandwidth", "min_fp32": "--min-fp32", "min_tensor": "--min-tensor",
               "max_launch_overhead_us": "--max-launch-overhead"})
    if device is not None and all_devices:
        raise UsageError("-i and --all-devices exclude each other; pick one (--all-devices is -i all)")
    reports = []
    schedule, failed = None, []
    if overwrite and not save_baseline:
        raise UsageError("--overwrite applies to --save-baseline")
    base = _load_baseline(baseline, save_baseline, overwrite)
    host, date = "", ""
    if recorded:
        refuse_unused("with --recorded (the file names the GPUs and their sheets' figures)", gpu=gpu, device=device,
                      all_devices=all_devices, specs=specs)
        from ..check.document import read_recorded

        observations, host, date = read_recorded(recorded)
        reports = [_judge(recorded, i, obs, pol) for i, obs in enumerate(observations)]
    else:
        from ..device.select import resolve

        # -i as nvidia-smi reads it; each GPU chosen is then named by its UUID (else its CUDA ordinal)
        sel = resolve("all" if all_devices else device)
        observations, elapsed, schedule, failed = _observe_all(sel, pol, specs, gpu)
        reports = [evaluate(obs, pol, t) for obs, t in zip(observations, elapsed)]
    comparisons = [None] * len(reports)
    if base is not None:
        from ..check.baseline import judge_against

        reports, comparisons = judge_against(base, reports, observations, pol)
    if not recorded:
        host, date = _host(), _now()
    from ..check.document import check_document

    doc = check_document(reports, observations, pol, host=host, date=date, comparisons=comparisons,
                         schedule=schedule, failed=failed)
    if junit:
        write_junit(reports, junit)
    if csv_out:
        from ..render.csv_out import emit_csv

        emit_csv("check", doc, json_out)
    elif json_out:
        from ..render.jsonout import emit

        emit("check", doc)
    else:
        from ..render.check_view import render_check

        render_check(reports, pol, comparisons, doc)
    if failed:
        from ..bench.fanout import error_of

        raise error_of(failed)
    _finish(reports, doc, save_baseline, overwrite)


def _observe_all(sel, pol, specs, gpu):
    """Measure every GPU of ``sel`` as :func:`gpuwhy.model.multi_gpu.schedule.plan_runs` plans ``check``: all
    at once, one worker process per GPU, each pinned to its GPU's CPUs (one GPU: in this process).

    Returns ``(observations, seconds each, schedule or None, failed)``: the GPUs that measured, in
    order; the schedule (the plan, the wall time and the GPUs' own times added) with several GPUs;
    ``failed`` lists ``(label, Outcome)`` of the GPUs whose measurement raised.

    Raises:
        the one GPU's error when a single GPU was chosen; every GPU's when all failed.
    """
    import time

    from ..bench.fanout import error_of, run_plan, schedule_record, usable_cpus
    from ..check import observe
    from ..device.topology import close_cpus
    from ..model.multi_gpu.schedule import plan_runs

    devs = sel.devices
    targets = [d.uuid or f"cuda:{d.cuda_ordinal}" for d in devs]
    labels = [f"GPU {d.nvml_index if d.nvml_index is not None else 'cuda:%s' % d.cuda_ordinal} ({t})" for d, t in zip(devs, targets)]
    plan = plan_runs("check", len(targets), cpus=len(usable_cpus()))
    cpus = close_cpus([d.uuid for d in devs]) if len(devs) > 1 else None
    t0 = time.perf_counter()
    outs = run_plan(plan, observe.observe_device, [(t, pol, tuple(specs or ()), gpu) for t in targets], cpus)
    wall = time.perf_counter() - t0
    bad = [(label, o) for label, o in zip(labels, outs) if not o.ok]
    if len(devs) == 1 and bad:
        raise error_of(bad, prefix=False)
    if bad and len(bad) == len(outs):
        raise error_of(bad)
    good = [o for o in outs if o.ok]
    schedule = None
    if len(devs) > 1:
        schedule = schedule_record(plan, outs, wall)
    return [o.value[0] for o in good], [o.value[1] for o in good], schedule, bad


def _judge(path: str, i: int, obs, pol):
    """Evaluate one recorded GPU; a value of the wrong type is a usage error naming the entry."""
    from ..check.policy import evaluate
    from ..errors import UsageError

    try:
        return evaluate(obs, pol)
    except (TypeError, ValueError, ZeroDivisionError, AttributeError, IndexError) as exc:
        raise UsageError(f"--recorded {path!r}: entry {i} has a bad value ({exc}); numbers must be numbers > 0") from None


def _load_baseline(baseline, save_baseline, overwrite):
    """The ``--baseline`` file read, and the ``--save-baseline`` path checked, before anything is measured."""
    if save_baseline:
        from ..check.baseline import check_writable

        check_writable(save_baseline, overwrite)
    if not baseline:
        return None
    from ..check.baseline import load_baseline

    return load_baseline(baseline)


def _finish(reports, doc, save_baseline, overwrite) -> None:
    """Warnings on stderr; the baseline saved when nothing failed; exit 1 (CheckFailed) when a check failed."""
    from ..check.policy import NOTHING_CHECKED
    from ..errors import CheckFailed
    from ..render.console import note, warn

    warned = [f"{c.name} on {r.device}" for r in reports for c in r.checks if c.status == "warn"]
    if warned:
        warn(f"{len(warned)} check(s) warned: {', '.join(warned)}")
    failed = [r for r in reports if r.failed]
    if save_baseline and not failed:
        from ..check.baseline import write_baseline
        from ..render.jsonout import SCHEMA_VERSION, to_plain
        from ..version import __version__

        path = write_baseline(save_baseline, {"gpuwhy": __version__, "schema": SCHEMA_VERSION, "kind": "check", **to_plain(doc)},
                              overwrite)
        note(f"baseline saved to {path}")
    if failed:
        names = [f"{c.name} on {r.device}" for r in failed for c in r.checks if c.status == "fail"]
        empty = [r.device for r in failed if r.nothing_checked]
        parts = [f"{len(names)} check(s) failed: {', '.join(names)}"] if names else []
        if empty:
            parts.append(f"{NOTHING_CHECKED} on {', '.join(empty)}")
        if save_baseline:
            parts.append(f"baseline not saved to {save_baseline!r} (a baseline is a run that passed)")
        raise CheckFailed("; ".join(parts))


def _host() -> str:
    import socket

    return socket.gethostname()


def _now() -> str:
    import datetime as dt

    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()
