"""node_exporter textfile metrics of `gpuwhy check` and `gpuwhy bench` (``--textfile FILE.prom``).

The file is Prometheus' text exposition format (version 0.0.4), for node_exporter's textfile
collector (the folder of its ``collector.textfile.directory`` flag): it is written atomically
(:func:`gpuwhy.outputs.write_atomically`) and every series is a gauge (:data:`METRICS`). Figures
are in base units with the unit in the name (``_bytes_per_second``, ``_ops_per_second``,
``_seconds``, ``_ratio``); each check's state is a state set: one series per state, 1 for the
state the check ended in and 0 for the others.

Every GPU series carries dcgm-exporter's labels (:data:`GPU_LABELS`), so a query can join
gpuwhy's figures with dcgm-exporter's on ``UUID`` (or ``Hostname`` and ``gpu``): ``gpu`` is
nvidia-smi's index, ``UUID`` NVML's (``GPU-...``), ``modelName`` NVML's name, ``Hostname`` the node
(``$NODE_NAME`` when set, else the host name, as dcgm-exporter's
``internal/pkg/hostname/hostname.go`` picks it). The names are those of dcgm-exporter's template,
``internal/pkg/rendermetrics/render_metrics.go`` (github.com/NVIDIA/dcgm-exporter), in every
release up to 4.5.3-4.8.2; its main branch renamed ``Hostname`` to ``hostname`` after that release
(commit d5e5f51, "Rename Hostname label to hostname", #655). Beside them: ``command`` (``check`` or
``bench``) and, for check, ``level`` (1 or 2), so the files of a health check, a check and a bench run
can sit in one folder without two of them writing the same series (node_exporter refuses that).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any, Iterable

#: dcgm-exporter's label names for a GPU (see the module docstring for the source).
GPU_LABELS = ("gpu", "UUID", "modelName", "Hostname")
STATES = ("pass", "warn", "fail", "skip")
GPU_STATES = ("pass", "warn", "fail")


@dataclass(frozen=True)
class Metric:
    """One gauge: its ``name`` (unit in the name), its ``help`` line and its own ``labels`` (beside the
    GPU's and the run's); ``per_gpu`` False for a series of the run as a whole (only ``Hostname``)."""

    name: str
    help: str
    labels: tuple[str, ...] = ()
    per_gpu: bool = True


METRICS: tuple[Metric, ...] = (
    Metric("gpuwhy_check_state", "1 for the state a check ended in (pass, warn, fail or skip: DCGM's four), 0 for the others",
           ("check", "state")),
    Metric("gpuwhy_gpu_state", "1 for the state the GPU's checks ended in as a whole (pass, warn or fail), 0 for the others",
           ("state",)),
    Metric("gpuwhy_dram_bandwidth_bytes_per_second", "measured sustained DRAM bandwidth in bytes per second"),
    Metric("gpuwhy_compute_ops_per_second", "measured arithmetic rate in operations per second, per precision "
           "(floating-point; integer for int8; tf32, fp16, bf16, fp8, int8 on tensor cores)", ("precision",)),
    Metric("gpuwhy_launch_overhead_seconds", "event-timed launch overhead of an empty kernel in seconds"),
    Metric("gpuwhy_sheet_dram_bandwidth_bytes_per_second", "the matched spec sheet's DRAM bandwidth in bytes per second"),
    Metric("gpuwhy_sheet_compute_ops_per_second", "the matched spec sheet's dense peak in operations per second, per precision",
           ("precision",)),
    Metric("gpuwhy_fraction_of_sheet_ratio", "a check's measured figure over its spec sheet's (dram_bandwidth, fp32_fma, "
           "tensor_<precision>)", ("check",)),
    Metric("gpuwhy_ecc_uncorrected_errors", "volatile uncorrected ECC errors since the driver loaded"),
    Metric("gpuwhy_other_processes", "compute processes on the GPU other than gpuwhy's own"),
    Metric("gpuwhy_pcie_link_generation", "PCIe link generation: now (link=current) and the most the link allows (link=max)",
           ("link",)),
    Metric("gpuwhy_pcie_link_width_lanes", "PCIe link width in lanes: now (link=current) and the most the link allows (link=max)",
           ("link",)),
    Metric("gpuwhy_check_duration_seconds", "seconds the GPU's check took (at level 1: the one NVML read of every GPU)"),
    Metric("gpuwhy_last_run_timestamp_seconds", "when the run was made, in seconds since the Unix epoch", per_gpu=False),
    Metric("gpuwhy_unmeasured_gpus", "GPUs chosen whose measurement failed (exit 3 or 4; the run's output names them)",
           per_gpu=False),
)
_BY_NAME = {m.name: m for m in METRICS}


@dataclass(frozen=True)
class GpuId:
    """One GPU as its series are labelled: nvidia-smi's ``index`` (None: unknown, written as ""),
    its ``uuid`` and ``model`` (NVML's name)."""

    index: int | None
    uuid: str
    model: str


def hostname(host: str) -> str:
    """The ``Hostname`` label: ``$NODE_NAME`` when set (Kubernetes), else ``host`` (as dcgm-exporter picks it)."""
    return os.environ.get("NODE_NAME") or host


def escape(value: str) -> str:
    """A label value as the exposition format quotes it: backslash, double quote and newline escaped."""
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return v


class Series:
    """The samples of one file, gathered by metric (a family's lines must sit together)."""

    def __init__(self, host: str, run: dict[str, str]):
        self.host = hostname(host)
        self.run = run
        self.samples: dict[str, list[tuple[dict[str, str], float]]] = {m.name: [] for m in METRICS}

    def add(self, name: str, gpu: GpuId | None, value: Any, **labels: Any) -> None:
        """One sample of metric ``name`` (a :data:`METRICS` name) for ``gpu`` (None: the run's); a value
        that is not a finite number is left out (a missing figure is never written as 0)."""
        v = _number(value)
        if v is None:
            return
        m = _BY_NAME[name]
        if set(labels) != set(m.labels):
            raise ValueError(f"{name} takes the labels {m.labels}, got {tuple(labels)}")
        ids = {"Hostname": self.host}
        if gpu is not None:
            ids = {"gpu": "" if gpu.index is None else str(gpu.index), "UUID": gpu.uuid, "modelName": gpu.model, **ids}
        self.samples[name].append(({**ids, **self.run, **{k: str(labels[k]) for k in m.labels}}, v))

    def states(self, gpu: GpuId, name: str, state: str, choices: Iterable[str], **labels: Any) -> None:
        """The state set of ``name``: 1 for ``state``, 0 for each other of ``choices``."""
        for s in choices:
            self.add(name, gpu, int(s == state), state=s, **labels)

    def text(self) -> str:
        """The file: the marker line, then each metric with samples: HELP, TYPE and its samples."""
        from ..outputs import TEXTFILE_MARK

        lines = [TEXTFILE_MARK.decode() + " (node_exporter textfile collector; see docs/fleet.md)"]
        for m in METRICS:
            rows = self.samples[m.name]
            if not rows:
                continue
            lines += [f"# HELP {m.name} {m.help}", f"# TYPE {m.name} gauge"]
            for labels, v in rows:
                inner = ",".join(f'{k}="{escape(val)}"' for k, val in labels.items())
                lines.append(f"{m.name}{{{inner}}} {v!r}")
        return "\n".join(lines) + "\n"


def add_figures(s: Series, gpu: GpuId, figures: dict[str, float], sheet: bool = False) -> None:
    """Figures keyed as :mod:`gpuwhy.check.figures` keys them (``dram_bandwidth_gbs``, ``bf16_tflops``,
    ``int8_tops``, ``launch_overhead_us``) as gauges in base units; ``sheet``: the sheet's figures."""
    from ..check.figures import DRAM, LAUNCH, figure

    prefix = "gpuwhy_sheet_" if sheet else "gpuwhy_"
    for key, value in figures.items():
        if key == DRAM:
            s.add(prefix + "dram_bandwidth_bytes_per_second", gpu, value * 1e9)
        elif key == LAUNCH:
            if not sheet:
                s.add("gpuwhy_launch_overhead_seconds", gpu, value * 1e-6)
        else:
            f = figure(key)
            s.add(prefix + "compute_ops_per_second", gpu, value * 1e12, precision=f.key.rsplit("_", 1)[0])


def add_checks(s: Series, gpu: GpuId, report) -> None:
    """A :class:`~gpuwhy.check.policy.DeviceChecks`: each check's state set and fraction of its sheet,
    the GPU's state set and the time its checks took."""
    for c in report.checks:
        s.states(gpu, "gpuwhy_check_state", c.status, STATES, check=c.name)
        s.add("gpuwhy_fraction_of_sheet_ratio", gpu, c.figures.get("fraction_of_sheet"), check=c.name)
    s.states(gpu, "gpuwhy_gpu_state", report.status, GPU_STATES)
    s.add("gpuwhy_check_duration_seconds", gpu, report.elapsed_s)


def timestamp(date: str) -> float:
    """Seconds since the Unix epoch of an ISO 8601 ``date`` (a document's), else now."""
    import datetime as dt
    import time

    try:
        when = dt.datetime.fromisoformat(date)
    except (TypeError, ValueError):
        return time.time()
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return when.timestamp()


def check_metrics(outcome, level: int) -> str:
    """The textfile of a `gpuwhy check` run (:class:`gpuwhy.api.check.CheckOutcome`) at ``level``."""
    from ..check.figures import figures_from_observations, rate_key

    doc = outcome.document
    s = Series(doc.get("host") or "", {"command": "check", "level": str(level)})
    for rep, obs in zip(outcome.reports, outcome.observations):
        gpu = GpuId(obs.nvml_index, obs.uuid or rep.uuid, obs.device)
        add_checks(s, gpu, rep)
        add_figures(s, gpu, figures_from_observations(obs.to_dict()))
        sheet = {"dram_bandwidth_gbs": obs.sheet_bandwidth_gbs, "fp32_tflops": obs.sheet_fp32_tflops,
                 rate_key(obs.tensor_precision): obs.sheet_tensor_tflops}
        add_figures(s, gpu, {k: v for k, v in sheet.items() if _number(v) is not None}, sheet=True)
        s.add("gpuwhy_ecc_uncorrected_errors", gpu, obs.ecc_uncorrected)
        s.add("gpuwhy_other_processes", gpu, obs.other_processes)
        for pos, link in enumerate(("current", "max")):
            s.add("gpuwhy_pcie_link_generation", gpu, obs.pcie_gen[pos] if obs.pcie_gen else None, link=link)
            s.add("gpuwhy_pcie_link_width_lanes", gpu, obs.pcie_width[pos] if obs.pcie_width else None, link=link)
    s.add("gpuwhy_last_run_timestamp_seconds", None, timestamp(doc.get("date") or ""))
    s.add("gpuwhy_unmeasured_gpus", None, len(outcome.failed))
    return s.text()


@dataclass(frozen=True)
class BenchGpu:
    """One GPU of a `gpuwhy bench` run as the textfile takes it: who it is, its figures (keys of
    :mod:`gpuwhy.check.figures`) and, with ``--baseline``, its judged checks (a DeviceChecks)."""

    gpu: GpuId
    figures: dict
    judged: Any = None


def bench_metrics(gpus: Iterable[BenchGpu], host: str, date: str, unmeasured: int = 0) -> str:
    """The textfile of a `gpuwhy bench --quick`/`--sweep` run: each GPU's figures and, against a
    baseline, its ``baseline_*`` checks' states; ``unmeasured`` GPUs failed."""
    s = Series(host, {"command": "bench"})
    for g in gpus:
        add_figures(s, g.gpu, g.figures)
        if g.judged is not None:
            add_checks(s, g.gpu, g.judged)
    s.add("gpuwhy_last_run_timestamp_seconds", None, timestamp(date))
    s.add("gpuwhy_unmeasured_gpus", None, unmeasured)
    return s.text()


def bench_outcome_metrics(outcome) -> str:
    """The textfile of a one-GPU `gpuwhy bench` run (:class:`gpuwhy.api.bench.BenchOutcome`)."""
    from ..check.figures import read_records
    from ..plain import to_plain

    doc = to_plain(outcome.document)
    rec = read_records({**doc, "kind": "bench"})[0]
    judged = outcome.judged[0] if outcome.judged is not None else None
    return bench_metrics([BenchGpu(GpuId(outcome.nvml_index, rec.uuid, rec.model), rec.figures, judged)], outcome.host,
                         doc.get("date") or "")


def multi_metrics(multi) -> str:
    """The textfile of `gpuwhy bench` on several GPUs (:class:`gpuwhy.bench.multi.MultiRun`): the GPUs
    that measured, and how many did not."""
    import socket

    from ..check.figures import read_records

    gpus, date = [], ""
    for r in multi.runs:
        if r.exit_code or not isinstance(r.document, dict):
            continue
        rec = read_records({**r.document, "kind": "bench"})[0]
        date = date or r.document.get("date") or ""
        gpus.append(BenchGpu(GpuId(r.index, r.uuid or rec.uuid, r.name or rec.model), rec.figures))
    return bench_metrics(gpus, socket.gethostname(), date, unmeasured=len(multi.failed))


def write_textfile(path: str, text: str) -> None:
    """Write ``text`` to ``path`` atomically (:func:`gpuwhy.outputs.write_atomically`).

    Raises:
        UsageError: the file must not or cannot be written.
    """
    from ..outputs import check_textfile_path, write_atomically

    write_atomically(check_textfile_path(path), text, "--textfile")
