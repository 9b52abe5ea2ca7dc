"""The bench use case: `gpuwhy bench`. One bench mode (:mod:`gpuwhy.bench.modes` picks it from the
options) on one GPU, judged against a saved baseline when asked, or on several GPUs at once.

What only the command line has is handed in (:class:`BenchHooks`): the progress bar, the CSV
writer and the worker that runs one GPU of several and returns its ``--json`` document.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping

from ..units import fmt_counted


@dataclass(frozen=True)
class BenchJob:
    """What `gpuwhy bench` was asked: ``options``, the mode's options by the names of
    :class:`gpuwhy.bench.modes.BenchRequest` (``sweep``, ``device``, ``csv``, ...), and the baseline
    options (``baseline`` to compare with, ``save_baseline``, ``overwrite``, ``policy``), and the
    ``textfile`` to write metrics to (``--quick``/``--sweep``; checked before anything is measured)."""

    options: Mapping[str, Any] = field(default_factory=dict)
    baseline: str | None = None
    save_baseline: str | None = None
    overwrite: bool = False
    policy: str | None = None
    textfile: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))


@dataclass(frozen=True)
class BenchHooks:
    """The command line's part of a run: ``bar`` (a progress-bar context manager factory, see
    :data:`gpuwhy.bench.modes.ProgressBar`), ``writable(path, option)`` (refuses an output path
    before measuring), ``write_csv(path, result)`` (``--csv FILE``), and ``one_gpu(mode, fields,
    device)``, a module-level function run in a worker process per GPU that returns
    ``{"document", "exit_code", "error"}`` (:func:`gpuwhy.bench.multi.run_several`)."""

    bar: Callable[..., Any] | None = None
    writable: Callable[[str, str], None] | None = None
    write_csv: Callable[[str, Any], None] | None = None
    one_gpu: Callable[..., dict] | None = None


@dataclass(frozen=True)
class BenchOutcome:
    """One GPU's bench run: the mode's ``name``, ``kind`` (its ``--json`` kind) and ``view`` (a render
    function, ``"module:function"``), its ``result`` and ``document`` (the ``--json`` body), and with
    ``--baseline`` the ``judged`` ``(DeviceChecks, Comparison)`` and the ``policy``; ``host`` ran it;
    with ``--textfile`` the GPU's ``nvml_index`` (nvidia-smi's; the document's index is CUDA's)."""

    name: str
    kind: str
    view: str
    result: Any
    document: Any
    judged: tuple | None = None
    policy: Any = None
    host: str = ""
    nvml_index: int | None = None

    def to_dict(self):
        """The ``--json`` document's body: the mode's, with the baseline comparison under ``baseline``."""
        if self.judged is None:
            return self.document
        return {**self.document, "baseline": {**self.judged[1].to_dict(), "status": self.judged[0].status}}

    def baseline_body(self, with_comparison: bool) -> dict:
        """What ``--save-baseline`` saves under the document header: ``host``, then the document
        (``with_comparison``: as ``--json`` printed it, the comparison under ``baseline`` included)."""
        from ..plain import to_plain

        return {"host": self.host, **to_plain(self.to_dict() if with_comparison else self.document)}

    def failure(self):
        """The error the result carries for after its output (a kernel that failed to compile), or None."""
        from ..bench.modes import failure

        return failure(self.result)

    def regressed(self, status: str) -> list[str]:
        """The baseline figures whose check has ``status`` (``fail`` or ``warn``)."""
        return [c.name for c in self.judged[0].checks if c.status == status] if self.judged is not None else []

    def regression(self, save_baseline: str | None = None):
        """The :class:`~gpuwhy.errors.CheckFailed` (exit 1) naming the figures that regressed against
        the baseline (and that ``save_baseline`` was not written), or None."""
        from ..errors import CheckFailed

        regressed = self.regressed("fail")
        if not regressed:
            return None
        tail = f"; baseline not saved to {save_baseline!r} (a baseline is a run that passed)" if save_baseline else ""
        return CheckFailed(f"{fmt_counted(len(regressed), 'figure')} regressed against the baseline: {', '.join(regressed)}{tail}")


def bench(job: BenchJob, hooks: BenchHooks):
    """Run ``job``: a :class:`BenchOutcome` on one GPU, or a :class:`~gpuwhy.bench.multi.MultiRun` when
    ``-i`` names several GPUs and the mode runs on several (noted first).

    Raises:
        UsageError: options that exclude each other or that the mode refuses; baseline options
            with several GPUs or another mode; an unreadable baseline or policy; a path that
            must not be written.
        NoDeviceError, MeasurementError: the GPU, driver or a measurement failed.
    """
    from ..bench.modes import BenchRequest, RunHooks, choose

    req = BenchRequest(**job.options)
    mode = choose(req)
    if job.textfile:
        from ..outputs import check_textfile_path

        if mode.name not in ("quick", "sweep"):
            from ..errors import UsageError

            raise UsageError("--textfile applies to bench --quick and --sweep (bandwidth, launch overhead and, with --sweep, "
                             "the compute rates); `gpuwhy check --textfile` writes the checks' states")
        check_textfile_path(job.textfile)
    several = _several_gpus(mode.name, req)
    if several is not None:
        from .options import refuse_unused

        refuse_unused("with several GPUs (one file per GPU would be needed; use -i N, or `gpuwhy check -i all --baseline`)",
                      csv_file=req.csv, baseline=job.baseline, save_baseline=job.save_baseline, overwrite=job.overwrite,
                      policy=job.policy)
        return _bench_several(mode, req, several, hooks.one_gpu)
    against = _baseline_options(mode.name, job.baseline, job.save_baseline, job.overwrite, job.policy)
    given = {k: v for k, v in (("bar", hooks.bar), ("writable", hooks.writable), ("write_csv", hooks.write_csv)) if v is not None}
    result = mode.run(req, RunHooks(**given))
    document = mode.document(result)
    judged = _judge(against, document, req.kernel) if against is not None and against[0] is not None else None
    index = _nvml_index(document) if job.textfile else None
    return BenchOutcome(mode.name, mode.json_kind, mode.view, result, document, judged,
                        against[1] if against is not None else None, _host(), index)


def _nvml_index(document) -> int | None:
    """nvidia-smi's index of the GPU a bench document names by UUID (None when it names none or NVML
    cannot say): dcgm-exporter's ``gpu`` label, which the document's CUDA ordinal is not."""
    from ..errors import GpuwhyError
    from ..plain import to_plain

    uuid = (to_plain(document).get("device") or {}).get("uuid")
    if not uuid:
        return None
    from ..device.select import resolve

    try:
        sel = resolve(uuid)
    except GpuwhyError:
        return None
    return sel.devices[0].nvml_index if sel.devices else None


def one_gpu(mode: str, fields: dict, device: str) -> tuple[str, Any, Any]:
    """One GPU's run of bench ``mode`` (in a worker process of :func:`gpuwhy.bench.multi.run_several`):
    the request ``fields`` with ``-i`` set to ``device``; returns ``(kind, document body, error or None)``,
    the error being the one its result carries for after printing."""
    from ..bench.modes import BenchRequest, RunHooks, failure
    from ..bench.modes import mode as mode_named

    m = mode_named(mode)
    result = m.run(BenchRequest(**{**fields, "device": device}), RunHooks())
    return m.json_kind, m.document(result), failure(result)


def several_failure(result):
    """The error to raise after a several-GPU run's output, naming every GPU that failed, or None."""
    from ..bench.fanout import Outcome, error_of

    bad = [(f"GPU {r.index} ({r.uuid})", Outcome(i, None, r.exit_code, r.error)) for i, r in enumerate(result.runs) if r.exit_code]
    return error_of(bad) if bad else None


def _several_gpus(mode: str, req):
    """The devices ``-i`` names when it names several and ``mode`` runs on several GPUs, else None
    (``-i all`` on a one-GPU machine is a one-GPU run, as before)."""
    from ..bench.multi import SEVERAL

    text = (req.device or "").strip()
    if mode not in SEVERAL or not (text.lower() == "all" or "," in text):
        return None
    from ..device.select import resolve

    sel = resolve(text)
    return sel.devices if len(sel.devices) > 1 else None


def _bench_several(mode, req, devices, worker):
    """Run ``mode`` on ``devices`` (:func:`gpuwhy.bench.multi.run_several`) through ``worker``."""
    import dataclasses

    from ..bench.multi import run_several
    from ..notices import note

    fields = {f.name: getattr(req, f.name) for f in dataclasses.fields(req) if f.name not in ("device", "json_out")}
    note(f"bench --{mode.name} on {len(devices)} GPUs")
    return run_several(mode.name, mode.json_kind, fields, devices, worker)


def _baseline_options(mode: str, baseline, save_baseline, overwrite, policy):
    """``(Baseline or None, Policy)`` for --baseline/--save-baseline, checked before the GPU is
    touched; None when neither is given.

    Raises:
        UsageError: the options given to another mode, --overwrite or --policy alone, an
            unreadable baseline or policy, or a --save-baseline path that must not be written.
    """
    from ..errors import UsageError

    if overwrite and not save_baseline:
        raise UsageError("--overwrite applies to --save-baseline")
    if policy and not baseline:
        raise UsageError("--policy applies to --baseline (its tolerances); `gpuwhy check --policy` takes thresholds")
    if not (baseline or save_baseline):
        return None
    if mode not in ("quick", "sweep"):
        raise UsageError("--baseline and --save-baseline apply to bench --quick and --sweep (bandwidth, launch overhead "
                         "and, with --sweep, the compute ceilings); for the other figures use `gpuwhy check --baseline`")
    from ..check.baseline import check_writable, load_baseline
    from ..check.policy import load_policy

    if save_baseline:
        check_writable(save_baseline, overwrite)
    return (load_baseline(baseline) if baseline else None), load_policy(policy)


def _judge(against, document, kernel):
    """The run's ``baseline_*`` checks and the comparison (see :func:`gpuwhy.check.baseline.judge_bench`)."""
    from ..check.baseline import judge_bench
    from ..check.figures import DRAM, LAUNCH
    from ..plain import to_plain

    expected = () if kernel else (DRAM, LAUNCH)
    return judge_bench(against[0], to_plain(document), against[1], expected)


def _host() -> str:
    import socket

    return socket.gethostname()
