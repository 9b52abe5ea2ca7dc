"""Which measurements of several GPUs run at once and which one after another, and which GPU
is the slowest (pure).

A measurement that uses only its own GPU (the DRAM bandwidth, the compute ceilings, the
caches, the latency ladder, ``gpuwhy check``) runs on every GPU at once, one worker per
GPU: nothing is shared, so an 8-GPU node takes about the time of one GPU. A host-link
measurement (``bench --link``) shares the CPU's root complex and memory (and, on many
boards, a PCIe switch's uplink) with the other GPUs' copies, so it runs one GPU after
another; so do the GPU-to-GPU pairs (``bench --p2p``), which share NVSwitches, PCIe
switches and copy engines. Each worker also needs a CPU core for its host-side timing
(launch overhead is host time), so no more workers run than there are CPUs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from .spread import median

#: Measurements that touch only their own GPU: run on all GPUs at once.
OWN_GPU = ("quick", "sweep", "compute", "caches", "latency", "roofline", "check")
#: Measurements through a bottleneck the GPUs share, and the bottleneck.
SHARED = {
    "link": "the host link (the CPU's root complex and memory, PCIe switches' uplinks)",
    "p2p": "NVSwitches, PCIe switches and copy engines",
}


@dataclass(frozen=True)
class Plan:
    """How to run one kind of measurement on several GPUs.

    Attributes:
        what: the measurement (a key of :data:`OWN_GPU` or :data:`SHARED`).
        stages: groups of GPU positions; the GPUs of a group run at once, the groups one
            after another.
        workers: the most GPUs measured at once.
        why: one line saying why (for the output).
    """

    what: str
    stages: tuple[tuple[int, ...], ...]
    workers: int
    why: str

    @property
    def parallel(self) -> bool:
        """True when some stage runs several GPUs at once."""
        return self.workers > 1

    def to_dict(self) -> dict:
        return {"what": self.what, "parallel": self.parallel, "workers": self.workers,
                "stages": [list(s) for s in self.stages], "why": self.why}


def plan_runs(what: str, gpus: int, cpus: int | None = None, max_workers: int | None = None) -> Plan:
    """The :class:`Plan` for measuring ``what`` on ``gpus`` GPUs (positions 0..gpus-1).

    ``cpus``: CPU cores this process may use (None: no limit); ``max_workers``: a cap
    the user set (None: none). A shared bottleneck (:data:`SHARED`) gets one GPU per
    stage; otherwise ``min(gpus, cpus, max_workers)`` GPUs per stage, in order.

    Raises:
        ValueError: an unknown ``what``, fewer than 1 GPU, or a limit below 1.
    """
    if gpus < 1:
        raise ValueError(f"nothing to plan for {gpus} GPUs")
    for name, v in (("cpus", cpus), ("max_workers", max_workers)):
        if v is not None and v < 1:
            raise ValueError(f"{name}={v} must be at least 1")
    if what in SHARED:
        return Plan(what, tuple((i,) for i in range(gpus)), 1,
                    f"one GPU after another: {what} shares {SHARED[what]}")
    if what not in OWN_GPU:
        raise ValueError(f"unknown measurement {what!r}; known: {', '.join((*OWN_GPU, *SHARED))}")
    width = min(x for x in (gpus, cpus, max_workers) if x is not None)
    stages = tuple(tuple(range(s, min(gpus, s + width))) for s in range(0, gpus, width))
    if gpus == 1:
        why = "1 GPU: one worker"
    elif width == gpus:
        why = f"all {gpus} GPUs at once, one worker each: {what} uses only its own GPU"
    else:
        limit = "CPU cores" if cpus is not None and width == cpus else "the worker limit"
        why = f"{width} GPUs at a time ({limit}: {width}): {what} uses only its own GPU"
    return Plan(what, stages, width, why)


def ordered_pairs(n: int) -> list[tuple[int, int]]:
    """Every ordered pair (src, dst) of ``n`` GPUs with src != dst, src-major: n (n - 1) pairs."""
    return [(s, d) for s in range(n) for d in range(n) if s != d]


def unordered_pairs(n: int) -> list[tuple[int, int]]:
    """Every pair (a, b) with a < b: n (n - 1) / 2 pairs."""
    return [(a, b) for a in range(n) for b in range(a + 1, n)]


@dataclass(frozen=True)
class Slowest:
    """The GPU furthest behind the others.

    Attributes:
        position: its position in the rows given.
        figure: the figure it is furthest behind on.
        value: its value of that figure; ``median``: the median over the GPUs with one.
        ratio: how it compares, below 1 being worse: value / median for a figure where
            more is better, median / value where less is better.
    """

    position: int
    figure: str
    value: float
    median: float
    ratio: float

    def to_dict(self) -> dict:
        return {"position": self.position, "figure": self.figure, "value": self.value, "median": self.median,
                "ratio": self.ratio}


def slowest_gpu(rows: Sequence[Mapping[str, float | None]], figures: Mapping[str, bool]) -> Slowest | None:
    """The GPU whose worst figure is furthest below the median of the GPUs (ties: the first).

    ``rows`` holds one mapping per GPU, figure -> value (None or missing: not measured);
    ``figures`` maps each figure to compare to True when more is better (bandwidth, FLOP/s)
    or False when less is (launch overhead, latency). A figure counts when at least two
    GPUs have a value above 0. None when no figure counts (one GPU: nothing to compare).
    """
    worst: list[tuple[float, int, str, float, float]] = []
    medians: dict[str, float] = {}
    for fig in figures:
        vals = [r.get(fig) for r in rows]
        got = [float(v) for v in vals if v is not None and v > 0]
        if len(got) >= 2:
            medians[fig] = median(got)
    for pos, r in enumerate(rows):
        for fig, more_better in figures.items():
            v = r.get(fig)
            if fig not in medians or v is None or v <= 0:
                continue
            m = medians[fig]
            ratio = float(v) / m if more_better else m / float(v)
            worst.append((ratio, pos, fig, float(v), m))
    if not worst:
        return None
    ratio, pos, fig, v, m = min(worst, key=lambda w: (w[0], w[1]))
    return Slowest(pos, fig, v, m, ratio)
