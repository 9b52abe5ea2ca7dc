"""What the engine is given about a profiled window, from any source (a trace, `gpuwhy run`, an ncu
pass): plain figures in seconds, bytes and FLOPs, with no file format and no profiler's spelling."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from ..model.roofline.classify import SHORT_KERNEL_S
from ..model.roofline.classify import launch_sized as _launch_sized
from .causes import REGIME, Cause

#: Kernels shorter than this (s) are launch-sized: their launch, not their work, is their cost (the
#: 10 us of :data:`gpuwhy.model.roofline.classify.SHORT_KERNEL_S`, and its rule: a mean equal to it
#: up to float rounding is not shorter).
LAUNCH_SIZED_S = SHORT_KERNEL_S


@dataclass(frozen=True)
class KernelFigure:
    """One kernel name in the window.

    ``total_s``: its time in the window (its share of the kernels' busy union); ``launches`` and
    ``mean_s`` (s per launch); ``kind``: its family from the name (``gemm``, ``elementwise``, ...);
    ``regime``: as measured (``compute``, ``memory``, ``latency``, ``issue``, ``overhead``), None when
    not measured; ``roof_pct``: its share of its roof (0-100); ``level``: the roof that decides
    (``DRAM``, ``L2``, ``L1``, ``compute``); ``flops`` per launch summed over the window's launches
    and ``precision`` (``fp32``, ``bf16``, ...) when counted.
    """

    name: str
    total_s: float
    launches: int
    mean_s: float
    kind: str = "other"
    regime: str | None = None
    roof_pct: float | None = None
    level: str | None = None
    flops: float | None = None
    precision: str | None = None

    @property
    def launch_sized(self) -> bool:
        return _launch_sized(self.mean_s)

    @property
    def cause(self) -> Cause:
        """The busy share this kernel's time goes to: its measured regime's, else launch-sized
        kernels (mean under :data:`LAUNCH_SIZED_S`), else kernels whose regime was not measured."""
        if self.regime in REGIME:
            return REGIME[self.regime]
        return Cause.LAUNCH_SIZED if self.launch_sized else Cause.KERNELS


@dataclass(frozen=True)
class CopyFigure:
    """Copies of one direction (``HtoD``, ``DtoH``, ``DtoD``, ...) and host memory (``pageable``,
    ``pinned``, ``device``, ``unknown``): how many, ``bytes`` (None unknown), ``time_s`` (summed
    durations) and ``exposed_s`` (the part of their union not hidden under kernels or memsets)."""

    direction: str
    memory: str
    count: int
    bytes: float | None
    time_s: float
    exposed_s: float

    @property
    def gbs(self) -> float | None:
        """Achieved rate, 1e9 B/s (None without bytes or time)."""
        return self.bytes / self.time_s / 1e9 if self.bytes and self.time_s > 0 else None


@dataclass(frozen=True)
class LinkRate:
    """The fastest pinned copy rate known for one direction (1e9 B/s) and where it comes from."""

    gbs: float
    source: str


def assumed_link() -> LinkRate:
    """The pinned rate to hold copies against when nothing better is known: PCIe 5.0 x16, the fastest
    host link in common use (a faster one, NVLink-C2C on Grace Hopper, makes the pinning bound low)."""
    from ..model.multi_gpu.links import PCIE_SOURCE, pcie_theoretical_gbs

    return LinkRate(pcie_theoretical_gbs(5, 16), f"assumed PCIe 5.0 x16, one way ({PCIE_SOURCE}); the trace names "
                                                 "no link: gpuwhy run on the GPU reads it")


def best_links(*maps) -> dict[str, LinkRate]:
    """Per direction, the fastest of the rates in ``maps`` (each direction -> :class:`LinkRate`; the first on a tie)."""
    out: dict[str, LinkRate] = {}
    for m in maps:
        for d, r in (m or {}).items():
            if r is not None and (d not in out or r.gbs > out[d].gbs):
                out[d] = r
    return out


@dataclass(frozen=True)
class WindowFigures:
    """A profiled window.

    ``window_s``: its wall time; ``idle``: GPU idle seconds by cause (the idle causes of
    :data:`~.causes.IDLE`, host-only time of the window included); ``busy``: GPU busy seconds
    that are not kernels, by cause (``copy``, ``pageable_copy``, ``communication``, ``memset``, and
    ``warmup``: work launched inside a JIT compiler's ranges, not judged);
    ``kernels``: every kernel, their ``total_s`` adding up to the kernels' busy union; ``copies``:
    by direction and memory; ``evidence``: lines per cause; ``steps``: the steps the window holds
    (None unknown); ``links``: the pinned rate to compare copies with, per direction; ``peaks``:
    dense FLOP/s per precision of this GPU (for lower precision); ``graphs``: CUDA-graph replays
    in the window, ``graph_queue_s`` the queue latency inside them (a graph already replays those
    gaps: capturing one again does not remove them); ``scope``: what the window is, in words, for
    the verdict's line (an ncu pass: ``the kernel time``); ``idle_known``: False where idle time was
    not seen at all (an ncu pass serialises kernels and records no timeline); ``tracer_s``: the most
    host time the tracer added in the window (its measured cost per recorded event times the events;
    0 unknown): a run without it may be that much shorter, and the ceilings allow for it; ``framework``:
    the framework the trace shows (``"jax"``; None: PyTorch or unknown), whose words the remedies use.
    """

    window_s: float
    idle: Mapping[Cause, float]
    busy: Mapping[Cause, float] = field(default_factory=dict)
    kernels: tuple[KernelFigure, ...] = ()
    copies: tuple[CopyFigure, ...] = ()
    evidence: Mapping[Cause, tuple[str, ...]] = field(default_factory=dict)
    steps: int | None = None
    links: Mapping[str, LinkRate] = field(default_factory=dict)
    peaks: Mapping[str, float] = field(default_factory=dict)
    graphs: int = 0
    graph_queue_s: float = 0.0
    scope: str = "the judged window"
    idle_known: bool = True
    tracer_s: float = 0.0
    framework: str | None = None


__all__ = ["LAUNCH_SIZED_S", "CopyFigure", "KernelFigure", "LinkRate", "WindowFigures", "assumed_link", "best_links"]
