"""What `gpuwhy trace` returns: frozen results, seconds and percentages, ``to_dict()`` for ``--json``.

Times are seconds (``*_s``), shares percent 0-100 (``*_pct``) of the span they
name, speed-up bounds plain ratios (``*_x``). Nothing here computes anything.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING

from ...verdict.causes import IDLE, LABEL
from ...verdict.engine import Diagnosis
from ...verdict.figures import WindowFigures

if TYPE_CHECKING:
    from ...model.timeline.bins import BinnedWindow

#: The idle causes, in the order they are described (docs/diagnose.md), with their labels.
CAUSE_LABELS = {c.value: LABEL[c] for c in IDLE}


@dataclass(frozen=True)
class IdleCause:
    """One cause of GPU idle time on one GPU.

    ``time_s``: idle seconds put down to it; ``span_pct`` / ``idle_pct``: that
    time as a share of the GPU's span / idle time; ``gaps``: idle gaps that hold
    some of it; ``evidence``: what in the trace shows it. What removing it is
    worth is the remedies' (:attr:`TraceGpu.diagnosis`).
    """

    key: str
    label: str
    time_s: float
    span_pct: float
    idle_pct: float
    gaps: int
    evidence: tuple[str, ...] = ()


@dataclass(frozen=True)
class HostOp:
    """A top-level host operation and the time it ran while the GPU waited for the host (s)."""

    name: str
    time_s: float


@dataclass(frozen=True)
class TraceStep:
    """One ``ProfilerStep#N`` range of the host: its wall time, the GPU busy and idle time
    inside it, and that idle time by cause (s; a gap that straddles two steps is split at the boundary)."""

    name: str
    start_s: float
    wall_s: float
    busy_s: float
    idle_s: float
    idle_pct: float
    causes_s: dict
    first_cause: str | None


@dataclass(frozen=True)
class KernelKind:
    """GPU time of one family of work (GEMM, attention, ..., memcpy): count, summed durations (s), share of the summed GPU time (%)."""

    kind: str
    count: int
    time_s: float
    gpu_time_pct: float


@dataclass(frozen=True)
class CommOverlap:
    """Communication kernels (NCCL/RCCL) against compute, as HTA reports it.

    ``comm_s``: the union of communication kernel time; ``overlapped_s``: the
    part of it during which a compute kernel ran on another stream;
    ``exposed_s`` = comm_s - overlapped_s; ``overlap_pct`` = overlapped / comm.
    """

    kernels: int
    comm_s: float
    overlapped_s: float
    exposed_s: float
    overlap_pct: float


@dataclass(frozen=True)
class IdleBreakdown:
    """The idle time of one GPU by cause: what `gpuwhy run` and others build on.

    ``causes`` hold every cause with time, largest first, and sum to
    ``idle_s`` (to rounding). ``steady_*`` leave out the warm-up cause.
    ``steps`` are the ``ProfilerStep#N`` ranges when the trace has them;
    ``step_median`` then holds the median wall, busy and idle time and the
    median time of each cause over the steps. ``cause`` is the cause the
    verdict names (None when the GPU is not starved).
    """

    device: str
    span_s: float
    busy_s: float
    idle_s: float
    idle_pct: float
    steady_span_s: float
    steady_idle_pct: float
    causes: tuple[IdleCause, ...]
    host_ops: tuple[HostOp, ...]
    outside_ops_s: float
    steps: tuple[TraceStep, ...]
    step_median: dict | None
    kernel_speedup_max_x: float | None
    cause: str | None

    def cause_s(self, key: str) -> float:
        """Seconds of idle time put down to ``key`` (0 when none)."""
        for c in self.causes:
            if c.key == key:
                return c.time_s
        return 0.0

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class TraceKernel:
    """One kernel name on one GPU: launches, total and mean time (s), share of the GPU's busy time (%).

    ``flops`` and ``achieved_tflops`` are set when the trace was recorded with
    ``with_flops=True`` and the kernel's operator carries a FLOP count.
    """

    name: str
    full_name: str
    count: int
    total_s: float
    mean_s: float
    busy_pct: float
    flops: float | None = None
    achieved_tflops: float | None = None


@dataclass(frozen=True)
class TraceGpu:
    """The timeline of one GPU (seconds; percentages 0-100 of ``span_s``).

    span, busy and idle: see :mod:`gpuwhy.importers.timeline.track`. ``host_wait_s``,
    ``back_to_back_s`` and ``unattributed_idle_s`` are the plain three-way
    split of idle time by whether the launch that ended each gap came after
    the GPU went idle; ``idle`` holds the finer breakdown by cause.
    ``launch_latency_*`` is kernel start minus its launch call's start
    (queueing included), over the kernels linked to a launch event.
    ``zero_duration_kernels`` are kernels recorded with ``dur: 0`` (their
    time is below the trace's resolution, ``time_resolution_s``: 1e-6 where every time in the
    trace is a whole microsecond, else 1e-9; ``to_dict()`` also writes it as text,
    ``time_resolution``): counted, no time.
    ``diagnosis``: the verdict engine's time budget of the GPU's span (of the analysis window when
    one was given), ``figures`` what it was given (for a caller that adds measured kernels; not part
    of ``to_dict()``).
    ``timeline``: busy and idle by cause per bin of a window
    (:class:`gpuwhy.model.timeline.bins.BinnedWindow`), when the analysis was asked for one
    (`gpuwhy run`); not part of ``to_dict()``. ``name``: the GPU's name where the source names it
    (an Nsight Systems report's GPU table; torch.profiler traces name none).
    """

    device: str
    span_s: float
    busy_s: float
    idle_s: float
    busy_pct: float
    idle_pct: float
    host_wait_s: float
    back_to_back_s: float
    unattributed_idle_s: float
    gaps: int
    host_wait_gaps: int
    kernels: int
    memcpys: int
    memsets: int
    kernel_s: float
    memcpy_s: float
    memset_s: float
    streams: int
    median_kernel_s: float | None
    short_kernel_pct: float | None
    short_kernel_time_pct: float | None
    launch_latency_median_s: float | None
    launch_latency_p90_s: float | None
    linked_kernels: int
    zero_duration_kernels: int
    time_resolution_s: float
    graph_launches: int
    top_kernels: tuple[TraceKernel, ...]
    kinds: tuple[KernelKind, ...]
    communication: CommOverlap | None
    idle: IdleBreakdown
    verdict: str
    cause: str | None
    reasons: tuple[str, ...]
    remedies: tuple[str, ...]
    diagnosis: Diagnosis | None = None
    figures: WindowFigures | None = field(default=None, repr=False, compare=False)
    timeline: BinnedWindow | None = field(default=None, repr=False, compare=False)
    name: str | None = None

    def to_dict(self) -> dict:
        d = asdict(replace(self, timeline=None, diagnosis=None, figures=None))
        del d["timeline"], d["figures"]
        from ...units import fmt_time

        d["time_resolution"] = fmt_time(self.time_resolution_s)  # the same as text, as schema 2 documents hold it
        d["diagnosis"] = self.diagnosis.to_dict() if self.diagnosis is not None else None
        return d


@dataclass(frozen=True)
class TraceReport:
    """`gpuwhy trace`: per GPU, busy vs idle, idle by cause and the verdict; what was dropped and why.

    ``verdict`` is that of the judged GPU with the most idle time when any GPU
    is starved, ``gpu-bound`` when all are busy, ``too-little-to-judge`` when
    no GPU holds enough work, ``no-gpu-events`` when the trace has none.
    ``host_sync_calls`` and ``host_sync_s`` count the blocking runtime calls
    (the host waiting on the GPU).
    """

    source: str
    verdict: str
    cause: str | None
    summary: str
    devices: tuple[TraceGpu, ...]
    events: int
    gpu_events: int
    runtime_events: int
    host_sync_calls: int
    host_sync_s: float
    capture_s: float | None
    dropped: dict[str, int]
    notes: tuple[str, ...]
    top: int
    thresholds: dict

    def to_dict(self) -> dict:
        return {
            "source": self.source,
            "verdict": self.verdict,
            "cause": self.cause,
            "summary": self.summary,
            "devices": [d.to_dict() for d in self.devices],
            "events": self.events,
            "gpu_events": self.gpu_events,
            "runtime_events": self.runtime_events,
            "host_sync_calls": self.host_sync_calls,
            "host_sync_s": self.host_sync_s,
            "capture_s": self.capture_s,
            "dropped": dict(self.dropped),
            "notes": list(self.notes),
            "top": self.top,
            "thresholds": dict(self.thresholds),
        }


__all__ = [
    "CAUSE_LABELS",
    "CommOverlap",
    "HostOp",
    "IdleBreakdown",
    "IdleCause",
    "KernelKind",
    "TraceGpu",
    "TraceKernel",
    "TraceReport",
    "TraceStep",
]
