"""The check use case: `gpuwhy check`. Health checks and quick measurements of each GPU chosen (or
recorded observations) against the policy's thresholds, and optionally against a baseline run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..units import fmt_counted


@dataclass(frozen=True)
class CheckRequest:
    """What `gpuwhy check` was given: the GPUs (``device`` as ``-i`` takes it, or ``all_devices``),
    the ``policy`` file and the thresholds that override it (fractions of the sheet; the launch
    overhead as typed, with its unit), ``recorded`` observations to judge instead of measuring,
    a ``baseline`` to compare with, the ``save_baseline`` path (checked before anything is
    measured) and ``overwrite``, the sheet ``gpu`` and the ``--specs`` folders; the ``level``
    (:data:`~gpuwhy.check.policy.LEVELS`: 1 NVML health alone, 2 health and quick measurements) and
    the ``textfile`` path (checked before anything is read)."""

    device: str | None = None
    all_devices: bool = False
    policy: str | None = None
    min_bandwidth: float | None = None
    min_fp32: float | None = None
    min_tensor: float | None = None
    max_launch_overhead: str | None = None
    recorded: str | None = None
    baseline: str | None = None
    save_baseline: str | None = None
    overwrite: bool = False
    gpu: str | None = None
    spec_dirs: tuple[str, ...] = ()
    level: int = 2
    textfile: str | None = None


@dataclass(frozen=True)
class CheckOutcome:
    """What `gpuwhy check` found: one :class:`~gpuwhy.check.policy.DeviceChecks` per GPU judged
    (``reports``), their ``observations``, the ``policy``, each report's baseline ``comparisons``
    (None each without ``--baseline``), the ``--json`` ``document``, ``failed``: ``(label,
    Outcome)`` of each GPU whose measurement raised, and the ``level`` checked."""

    reports: tuple
    observations: tuple
    policy: Any
    comparisons: tuple
    document: dict
    failed: tuple = ()
    level: int = 2

    @property
    def drain_reason(self) -> str | None:
        """The one line to drain the node with (:mod:`gpuwhy.check.drain`), or None when nothing failed."""
        return self.document.get("drain_reason")

    def to_dict(self) -> dict:
        return self.document

    def write_junit(self, path: str) -> None:
        """Write the reports as JUnit XML to ``path``, one testcase per check, each suite with the run's host
        and date (:func:`gpuwhy.check.policy.write_junit`).

        Raises:
            UsageError: the file must not or cannot be written.
        """
        from ..check.policy import write_junit

        write_junit(list(self.reports), path, host=self.document.get("host") or "", timestamp=self.document.get("date") or "")

    def gpu_error(self):
        """The error to raise after the output when some GPUs could not be measured, else None."""
        if not self.failed:
            return None
        from ..bench.fanout import error_of

        return error_of(list(self.failed))

    def label(self, i: int) -> str:
        """How a message names the ``i``-th GPU judged: its model alone when it is the only one;
        with several (eight of one model on a node), its place in the document (``#3``, as the
        per-GPU table and ``slowest`` number them) and its UUID: ``#3 NVIDIA H200 (GPU-...)``."""
        r = self.reports[i]
        if len(self.reports) == 1:
            return r.device
        return f"#{i} {r.device}" + (f" ({r.uuid})" if r.uuid else "")

    def warned(self) -> list[str]:
        """``"<check> on <GPU>"`` for each check that warned (the GPU as :meth:`label` names it)."""
        return [f"{c.name} on {self.label(i)}" for i, r in enumerate(self.reports) for c in r.checks if c.status == "warn"]

    @property
    def passed(self) -> bool:
        """No check failed (a warning passes) and every GPU had something checked."""
        return not any(r.failed for r in self.reports)

    def failure(self, save_baseline: str | None = None):
        """The :class:`~gpuwhy.errors.CheckFailed` (exit 1) naming the checks that failed and the GPUs
        that had nothing checked (and that ``save_baseline`` was not written), or None when it passed."""
        from ..check.policy import NOTHING_CHECKED
        from ..errors import CheckFailed

        failed = [i for i, r in enumerate(self.reports) if r.failed]
        if not failed:
            return None
        names = [f"{c.name} on {self.label(i)}" for i in failed for c in self.reports[i].checks if c.status == "fail"]
        empty = [self.label(i) for i in failed if self.reports[i].nothing_checked]
        parts = [f"{fmt_counted(len(names), 'check')} failed: {', '.join(names)}"] if names else []
        if empty:
            parts.append(f"{NOTHING_CHECKED} on {', '.join(empty)}")
        if save_baseline:
            parts.append(f"baseline not saved to {save_baseline!r} (a baseline is a run that passed)")
        return CheckFailed("; ".join(parts))


def drain_reason_of_error(exc: BaseException, level: int) -> str:
    """The drain reason (:mod:`gpuwhy.check.drain`) of a check that could not read or measure the GPU."""
    from ..check.drain import drain_reason

    return drain_reason([str(exc)], level)


def run_check(req: CheckRequest) -> CheckOutcome:
    """Check the GPUs of ``req`` (or judge its recorded observations), in this order: the launch
    overhead parsed, the policy loaded, the options checked, the baseline read and the path to save
    one checked, then the GPUs measured (all at once, one worker process per GPU) and judged.

    Raises:
        UsageError: a bad option, policy, recorded file or baseline; an option the recorded file
            makes meaningless; ``-i`` naming no GPU.
        NoDeviceError, MeasurementError: the one GPU chosen, or every GPU, could not be measured.
    """
    from ..check.document import check_document
    from ..check.policy import HEALTH_LEVEL, evaluate, level_of, load_policy
    from ..errors import UsageError
    from ..units import parse_time

    level = level_of(req.level)
    if req.textfile:
        from ..outputs import check_textfile_path

        check_textfile_path(req.textfile)
    if level == HEALTH_LEVEL:
        from .options import refuse_unused

        refuse_unused("at --level 1 (NVML health alone: nothing is measured)", min_bandwidth=req.min_bandwidth,
                      min_fp32=req.min_fp32, min_tensor=req.min_tensor, max_launch_overhead=req.max_launch_overhead,
                      baseline=req.baseline, save_baseline=req.save_baseline)
    lo = req.max_launch_overhead
    lo_us = None if lo is None else parse_time(lo, "--max-launch-overhead") * 1e6
    pol = load_policy(req.policy, {
        "min_dram_bandwidth": req.min_bandwidth, "min_fp32": req.min_fp32, "min_tensor": req.min_tensor,
        "max_launch_overhead_us": lo_us,
    }, labels={"min_dram_bandwidth": "--min-bandwidth", "min_fp32": "--min-fp32", "min_tensor": "--min-tensor",
               "max_launch_overhead_us": "--max-launch-overhead"})
    if req.device is not None and req.all_devices:
        raise UsageError("-i and --all-devices exclude each other; pick one (--all-devices is -i all)")
    schedule, failed = None, []
    if req.overwrite and not req.save_baseline:
        raise UsageError("--overwrite applies to --save-baseline")
    base = _load_baseline(req.baseline, req.save_baseline, req.overwrite)
    host, date = "", ""
    if req.recorded:
        from ..check.document import read_recorded
        from .options import refuse_unused

        refuse_unused("with --recorded (the file names the GPUs and their sheets' figures)", gpu=req.gpu, device=req.device,
                      all_devices=req.all_devices, specs=req.spec_dirs)
        observations, host, date = read_recorded(req.recorded)
        reports = [_judge(req.recorded, i, obs, pol, level) for i, obs in enumerate(observations)]
    elif level == HEALTH_LEVEL:
        from ..check.observe import observe_health

        observations, took = observe_health("all" if req.all_devices else req.device, req.spec_dirs, req.gpu)
        reports = [evaluate(obs, pol, took, level) for obs in observations]
    else:
        from ..device.select import resolve

        # -i as nvidia-smi reads it; each GPU chosen is then named by its UUID (else its CUDA ordinal)
        sel = resolve("all" if req.all_devices else req.device)
        observations, elapsed, schedule, failed = _observe_all(sel, pol, req.spec_dirs, req.gpu)
        reports = [evaluate(obs, pol, t) for obs, t in zip(observations, elapsed)]
    comparisons = [None] * len(reports)
    if base is not None:
        from ..check.baseline import judge_against

        reports, comparisons = judge_against(base, reports, observations, pol)
    host, date, sources = _host_and_date(req.recorded, host, date)
    doc = check_document(reports, observations, pol, host=host, date=date, sources=sources, comparisons=comparisons,
                         schedule=schedule, failed=failed, level=level)
    return CheckOutcome(tuple(reports), tuple(observations), pol, tuple(comparisons), doc, tuple(failed), level)


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


def _judge(path: str, i: int, obs, pol, level: int):
    """Evaluate one recorded GPU at ``level``; a value of the wrong type is a usage error naming the entry."""
    from ..check.policy import evaluate
    from ..errors import UsageError

    try:
        return evaluate(obs, pol, None, level)
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


def _host_and_date(recorded: str | None, host: str, date: str) -> tuple[str, str, dict]:
    """``(host, date, sources)`` of the document: a recorded document's own host and date, else
    (a live run, or a recorded file that names none) this host and now; ``sources`` says which
    for each (:data:`gpuwhy.check.document.SOURCES`)."""
    from ..check.document import SOURCES

    if not recorded:
        return _host(), _now(), {"host": SOURCES["this"], "date": SOURCES["this"]}
    sources = {"host": SOURCES["recorded"], "date": SOURCES["recorded"]}
    if not host.strip():
        host, sources["host"] = _host(), SOURCES["judged"]
    if not date.strip():
        date, sources["date"] = _now(), SOURCES["judged"]
    return host, date, sources


def _host() -> str:
    import socket

    return socket.gethostname()


def _now() -> str:
    import datetime as dt

    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()
