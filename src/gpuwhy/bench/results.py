"""Result types of `gpuwhy bench`: frozen dataclasses with ``to_dict()``, plus the
pure functions that turn timings into the reported figures (no CUDA here).

Conventions (stated beside every GB/s figure in the output, see :data:`CONVENTION`):

- bytes moved = bytes the kernel reads + bytes it writes, every array element
  counted once: the DRAM traffic when nothing is served from a cache. read: n
  elements read plus one partial sum written per block; write: n written; copy:
  n read + n written; vecadd: 2n read + n written.
- GB/s is 1e9 B/s; times are medians of CUDA-event-timed repetitions.
- A row's regime: ``fits in L2`` when one launch's working set fits in the L2
  (repeated launches then run from the cache: an L2 figure, never DRAM);
  ``DRAM`` when the bytes cycled between two uses of the same data (working set x
  buffer sets rotated) are at least :data:`DRAM_FACTOR` x L2; ``L2 partly``
  between the two. Only ``DRAM`` rows carry a % of the sheet's bandwidth.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..engine.timing import Measurement

CONVENTION = "bytes moved = bytes read + bytes written by the kernel, each element once; GB/s = 1e9 B/s"

REGIME_L2 = "fits in L2"
REGIME_MIXED = "L2 partly"
REGIME_DRAM = "DRAM"

#: A DRAM row cycles at least this many L2 sizes of data between two uses of the same bytes.
DRAM_FACTOR = 4


def classify_regime(working_set_bytes: int, buffer_sets: int, l2_bytes: int, factor: int = DRAM_FACTOR) -> str:
    """``fits in L2``, ``L2 partly`` or ``DRAM`` for one row (see the module docstring)."""
    if working_set_bytes <= l2_bytes:
        return REGIME_L2
    if working_set_bytes * max(1, buffer_sets) >= factor * l2_bytes:
        return REGIME_DRAM
    return REGIME_MIXED


def buffer_sets_needed(working_set_bytes: int, l2_bytes: int, factor: int = DRAM_FACTOR) -> int:
    """Buffer sets to rotate so a row over the L2 cycles ``factor`` x L2 bytes between uses.

    1 for a working set that fits in L2 (that row measures the L2 on purpose);
    otherwise at least 2, so no repetition starts on data the previous one left
    in the cache.
    """
    if working_set_bytes <= l2_bytes:
        return 1
    return max(2, math.ceil(factor * l2_bytes / working_set_bytes))


@dataclass(frozen=True)
class BandwidthRow:
    """One (kernel, dtype, size) timing.

    Attributes:
        kernel: ``read-vec16``, ``vecadd-naive``, ...; op/variant split it.
        elements: n; bytes_moved: reads + writes per launch (bytes);
        working_set_bytes: distinct bytes one launch touches;
        buffer_sets: sets rotated between repetitions;
        regime: see :func:`classify_regime`;
        time: per-launch :class:`Measurement` (s);
        spec_bandwidth_gbs: the sheet's DRAM bandwidth, or None without a sheet;
        grid, block: the launch shape.
    """

    kernel: str
    op: str
    variant: str
    dtype: str
    elements: int
    bytes_moved: int
    working_set_bytes: int
    buffer_sets: int
    regime: str
    time: Measurement
    spec_bandwidth_gbs: float | None
    grid: int
    block: int

    @property
    def gbs(self) -> float:
        """Achieved bandwidth at the median time, GB/s (1e9 B/s)."""
        return self.bytes_moved / self.time.median_s / 1e9

    @property
    def pct_of_spec(self) -> float | None:
        """% of the sheet's DRAM bandwidth, for DRAM rows only (None otherwise)."""
        if self.regime != REGIME_DRAM or not self.spec_bandwidth_gbs:
            return None
        return 100.0 * self.gbs / self.spec_bandwidth_gbs

    @property
    def elements_per_s(self) -> float:
        """Elements processed per second at the median time."""
        return self.elements / self.time.median_s

    def to_dict(self) -> dict:
        """Plain data; ``median_us`` etc. are convenience copies in microseconds."""
        return {
            "kernel": self.kernel,
            "op": self.op,
            "variant": self.variant,
            "dtype": self.dtype,
            "elements": self.elements,
            "bytes_moved": self.bytes_moved,
            "working_set_bytes": self.working_set_bytes,
            "buffer_sets": self.buffer_sets,
            "regime": self.regime,
            "median_s": self.time.median_s,
            "min_s": self.time.min_s,
            "max_s": self.time.max_s,
            "cv": self.time.cv,
            "reps": self.time.reps,
            "gbs": self.gbs,
            "pct_of_spec": self.pct_of_spec,
            "elements_per_s": self.elements_per_s,
            "grid": self.grid,
            "block": self.block,
        }


def sustained_dram(rows, l2_bytes: int, factor: int = DRAM_FACTOR):
    """The best DRAM figure of the vectorized kernels at large sizes, or None.

    Candidates: ``vec16`` rows in the DRAM regime whose own working set is at
    least ``factor`` x L2 (large sizes, so launch overhead is amortised and no
    cache effect can lift them). Returns the row with the highest GB/s.
    """
    cands = [r for r in rows if r.variant == "vec16" and r.regime == REGIME_DRAM and r.working_set_bytes >= factor * l2_bytes]
    return max(cands, key=lambda r: r.gbs) if cands else None


@dataclass(frozen=True)
class LaunchOverhead:
    """An empty kernel's launch cost, four ways (each a per-launch :class:`Measurement`, s).

    round_trip: launch + stream synchronize, host clock.
    submit: back-to-back launches, host time per launch (the host submission rate,
        Python included); ``submit_path`` says which API launched.
    event: CUDA-event-timed duration of one launch (the floor a small kernel pays;
        the classify model's launch overhead).
    graph_per_kernel: one graph of ``graph_kernels`` launches, event-timed, divided by its size.
    """

    round_trip: Measurement
    submit: Measurement
    event: Measurement
    graph_per_kernel: Measurement
    graph_kernels: int
    submit_path: str = "cuda.core.launch"

    def to_dict(self) -> dict:
        return {
            "round_trip_s": self.round_trip.median_s,
            "submit_s": self.submit.median_s,
            "event_s": self.event.median_s,
            "graph_per_kernel_s": self.graph_per_kernel.median_s,
            "graph_kernels": self.graph_kernels,
            "submit_path": self.submit_path,
            "detail": {
                "round_trip": self.round_trip.to_dict(),
                "submit": self.submit.to_dict(),
                "event": self.event.to_dict(),
                "graph_per_kernel": self.graph_per_kernel.to_dict(),
            },
        }


@dataclass(frozen=True)
class CpuComparison:
    """The same vecadd on one CPU core (numpy), against the GPU's time at the same size.

    time: numpy ``np.add(a, b, out=c)`` wall time (s); gbs at the same byte count
    as the GPU row (3 x n x element size); gpu_time_s and gpu_kernel from the GPU
    row of the same n (None when that row was not measured).
    """

    elements: int
    dtype: str
    time: Measurement
    bytes_moved: int
    gpu_kernel: str | None = None
    gpu_time_s: float | None = None

    @property
    def gbs(self) -> float:
        return self.bytes_moved / self.time.median_s / 1e9

    @property
    def speedup(self) -> float | None:
        """CPU time / GPU time (kernel only, data already on the GPU)."""
        return self.time.median_s / self.gpu_time_s if self.gpu_time_s else None

    def to_dict(self) -> dict:
        return {
            "elements": self.elements,
            "dtype": self.dtype,
            "cpu_time_s": self.time.median_s,
            "cpu_gbs": self.gbs,
            "bytes_moved": self.bytes_moved,
            "gpu_kernel": self.gpu_kernel,
            "gpu_time_s": self.gpu_time_s,
            "speedup": self.speedup,
        }


@dataclass(frozen=True)
class CorrectnessCheck:
    """A kernel checked against numpy at each of ``sizes`` before it was timed."""

    kernel: str
    dtype: str
    sizes: tuple[int, ...]

    def to_dict(self) -> dict:
        return {"kernel": self.kernel, "dtype": self.dtype, "sizes": list(self.sizes), "ok": True}


@dataclass(frozen=True)
class BenchResult:
    """Everything one `gpuwhy bench` run measured.

    ``device`` is a :class:`~gpuwhy.engine.context.DeviceInfo`; ``sheet_*`` come from
    the matched spec sheet (None without one); ``sustained`` is the row
    :func:`sustained_dram` picked (None when no row qualified); ``health_*`` are
    :class:`~gpuwhy.device.sample.HealthSample` or None.
    """

    device: Any
    mode: str
    dtype: str
    rows: tuple[BandwidthRow, ...]
    launch: LaunchOverhead | None
    cpu: CpuComparison | None
    checks: tuple[CorrectnessCheck, ...]
    sheet_name: str | None
    sheet_bandwidth_gbs: float | None
    sustained: BandwidthRow | None
    nvrtc: str
    duration_s: float
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    health_before: Any = None
    health_after: Any = None
    profile_path: str | None = None
    date: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def sustained_gbs(self) -> float | None:
        return self.sustained.gbs if self.sustained else None

    @property
    def sustained_pct(self) -> float | None:
        if self.sustained is None or not self.sheet_bandwidth_gbs:
            return None
        return 100.0 * self.sustained.gbs / self.sheet_bandwidth_gbs

    def summary_line(self) -> str:
        """One line to paste into an issue or a CI log."""
        d = self.device
        parts = [f"gpuwhy bench: {d.name} ({d.arch}, driver CUDA {d.driver_cuda_version}"]
        if self.health_before is not None and getattr(self.health_before, "driver_version", None):
            parts[0] += f" {self.health_before.driver_version}"
        parts[0] += ")"
        if self.sustained is not None:
            s = f"DRAM {self.sustained.gbs:.0f} GB/s ({self.sustained.kernel} {self.sustained.dtype}, read+write bytes"
            if self.sustained_pct is not None:
                s += f"; {self.sustained_pct:.1f}% of the {self.sheet_name} sheet's {self.sheet_bandwidth_gbs:.0f} GB/s"
            parts.append(s + ")")
        else:
            parts.append("DRAM n/a (no large vectorized row)")
        if self.launch is not None:
            lo = self.launch
            parts.append(
                f"launch {lo.event.median_s * 1e6:.2f} us event-timed, {lo.submit.median_s * 1e6:.2f} us submit, "
                f"{lo.round_trip.median_s * 1e6:.1f} us round trip, {lo.graph_per_kernel.median_s * 1e6:.2f} us/kernel in a graph"
            )
        return "; ".join(parts)

    def to_dict(self) -> dict:
        return {
            "date": self.date,
            "mode": self.mode,
            "dtype": self.dtype,
            "device": self.device.to_dict() if hasattr(self.device, "to_dict") else self.device,
            "nvrtc": self.nvrtc,
            "sheet": {"name": self.sheet_name, "memory_bandwidth_gbs": self.sheet_bandwidth_gbs},
            "convention": CONVENTION,
            "sustained_dram_gbs": self.sustained_gbs,
            "sustained_dram_pct_of_spec": self.sustained_pct,
            "sustained_dram_kernel": self.sustained.kernel if self.sustained else None,
            "launch_overhead": self.launch.to_dict() if self.launch else None,
            "cpu_vecadd": self.cpu.to_dict() if self.cpu else None,
            "checks": [c.to_dict() for c in self.checks],
            "rows": [r.to_dict() for r in self.rows],
            "warnings": list(self.warnings),
            "notes": list(self.notes),
            "health_before": self.health_before.to_dict() if self.health_before is not None else None,
            "health_after": self.health_after.to_dict() if self.health_after is not None else None,
            "profile_path": self.profile_path,
            "duration_s": self.duration_s,
            "summary": self.summary_line(),
            **({"extra": self.extra} if self.extra else {}),
        }

    def to_dataframe(self):
        """Every bandwidth row as a pandas DataFrame (one row per measurement; SI units).
        pandas is imported here only (``pip install pandas``); ``bench --csv`` needs none.

        Raises:
            UsageError: pandas is not installed.
        """
        try:
            import pandas as pd
        except ImportError:
            from ..errors import UsageError

            raise UsageError("BenchResult.to_dataframe needs pandas: python3 -m pip install pandas") from None

        cols = list(BandwidthRow.__dataclass_fields__)  # keep a stable column set when empty
        recs = [r.to_dict() for r in self.rows]
        if not recs:
            return pd.DataFrame(columns=cols)
        df = pd.DataFrame.from_records(recs)
        df.insert(0, "gpu", self.device.name)
        df.insert(1, "uuid", self.device.uuid)
        return df
