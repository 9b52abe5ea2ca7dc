"""All-reduce arithmetic: the message-size sweep, algorithm and bus bandwidth, the
slowest rank's time, the NVLink limit, and which measured figure a GPU count uses.
Pure maths, no I/O.

Bandwidth convention (nccl-tests, doc/PERFORMANCE.md,
https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md)::

    algbw = S / t                      S: bytes of the buffer each rank reduces, t: seconds
    busbw = algbw x 2 (n - 1) / n      n: ranks (GPUs)

In a ring all-reduce every rank sends and receives 2 (n - 1) / n x S bytes, so
busbw is the rate at which each GPU's link moved data; it is comparable across
GPU counts and with the link's one-way bandwidth (n = 8: factor 1.75). For one
rank the factor is 0: nothing crosses a link.

Correctness pattern: element i of rank r holds ``c_i x v_r`` with ``c_i`` in
(1, 2, 4) (period 3) and ``v_r = (r mod 4) + 1``; the sum is ``c_i x sum_r v_r``.
Every partial sum is a small integer times a power of two, so the result is
exact in bf16 (8 significant bits) for up to :data:`EXACT_RANKS_BF16` ranks and in
fp32 far beyond.

Units: bytes, seconds, GB/s = 1e9 B/s.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Mapping, Sequence

from ...errors import UsageError
from ...units import fmt_g

#: Where the busbw convention comes from.
BUSBW_DOC = "nccl-tests doc/PERFORMANCE.md"
BUSBW_SOURCE = f"{BUSBW_DOC} (busbw = algbw x 2(n-1)/n)"
#: Smallest message of the sweep (nccl-tests' usual ``-b 8``), bytes.
MIN_BYTES = 8
#: Default largest message, bytes (1 GiB, nccl-tests' usual ``-e 1G``).
DEFAULT_MAX_BYTES = 2**30
#: Largest ``--max-size`` accepted, bytes: each rank holds about three buffers of it.
MAX_MAX_BYTES = 2**34
#: Element bytes of the dtypes the sweep runs.
DTYPE_BYTES = {"bf16": 2, "fp32": 4}
#: Period of the per-element factor of the correctness pattern, and the factors.
PATTERN = (1, 2, 4)
#: Ranks up to which the pattern's sums are exact in bf16: every partial sum is ``c_i`` (a power
#: of two) times a whole number of at most sum_r v_r (10 per 4 ranks; 256 at 103 ranks), and
#: bf16 holds every whole number up to 256 = 2**8 exactly.
EXACT_RANKS_BF16 = 103


def busbw_factor(ranks: int) -> float:
    """2 (n - 1) / n for ``ranks`` = n >= 1 (:data:`BUSBW_SOURCE`): 1 for 2 GPUs, 1.75 for 8, 0 for 1.

    Raises:
        ValueError: ``ranks`` below 1.
    """
    if ranks < 1:
        raise ValueError(f"an all-reduce needs at least 1 rank, got {ranks}")
    return 2.0 * (ranks - 1) / ranks


def algbw_gbs(size_bytes: float, time_s: float) -> float:
    """Algorithm bandwidth S / t in GB/s (1e9 B/s).

    Raises:
        ValueError: a time not above zero.
    """
    if not time_s > 0:
        raise ValueError(f"an all-reduce time must be above zero, got {time_s!r}")
    return size_bytes / time_s / 1e9


def busbw_gbs(size_bytes: float, time_s: float, ranks: int) -> float:
    """Bus bandwidth algbw x 2 (n - 1) / n in GB/s (see the module docstring)."""
    return algbw_gbs(size_bytes, time_s) * busbw_factor(ranks)


def sweep_sizes(max_bytes: int = DEFAULT_MAX_BYTES, min_bytes: int = MIN_BYTES) -> list[int]:
    """Message sizes ``min_bytes x 2**k`` up to ``max_bytes``, bytes (x2 steps, as nccl-tests' ``-f 2``):
    8 B .. 1 GiB is 28 sizes.

    Raises:
        ValueError: ``max_bytes`` below ``min_bytes``.
    """
    if max_bytes < min_bytes:
        raise ValueError(f"the largest size {max_bytes} B is below the smallest {min_bytes} B")
    out, s = [], min_bytes
    while s <= max_bytes:
        out.append(s)
        s *= 2
    return out


def check_max_size(max_bytes: float, option: str = "--max-size") -> int:
    """``max_bytes`` as a whole power of two from :data:`MIN_BYTES` to :data:`MAX_MAX_BYTES`.

    Raises:
        UsageError: not a power of two, below 8 B or above 16 GiB (the message gives examples).
    """
    n = int(max_bytes)
    if n != max_bytes or n < MIN_BYTES or bin(n).count("1") != 1:
        raise UsageError(f"{option} must be a power of two from 8 B (the sweep doubles from 8 B), e.g. 1GiB or 256MiB; "
                         f"got {fmt_g(max_bytes)} B")
    if n > MAX_MAX_BYTES:
        raise UsageError(f"{option} {n} B is above 16 GiB (each GPU holds about three buffers of it); pick 16GiB or less")
    return n


def check_dtype(dtype: str | None, option: str = "--dtype") -> str:
    """The all-reduce dtype (default bf16).

    Raises:
        UsageError: not one of :data:`DTYPE_BYTES`.
    """
    d = (dtype or "bf16").strip().lower()
    if d not in DTYPE_BYTES:
        raise UsageError(f"{option} {dtype!r} is not one of: {', '.join(DTYPE_BYTES)} (for --allreduce)")
    return d


def rank_value(rank: int) -> int:
    """``v_r = (r mod 4) + 1``, the correctness pattern's value of rank ``rank``."""
    return rank % 4 + 1


def expected_sum(ranks: int) -> int:
    """``sum_r v_r`` over ``ranks`` ranks: element i of the result is ``c_i`` times this."""
    return sum(rank_value(r) for r in range(ranks))


@dataclass(frozen=True)
class SizeTiming:
    """One message size of the sweep, timed on every rank.

    Attributes:
        size_bytes, elements: the buffer each rank reduces.
        time_s: median over iterations of the slowest rank's time (what is reported).
        min_s, max_s, cv: of those per-iteration slowest times (cv = stdev / mean).
        rank_median_min_s, rank_median_max_s: the fastest and slowest rank's own median.
        iters: timed iterations.
        algbw_gbs, busbw_gbs: from ``time_s`` (:func:`algbw_gbs`, :func:`busbw_gbs`).
    """

    size_bytes: int
    elements: int
    time_s: float
    min_s: float
    max_s: float
    cv: float
    rank_median_min_s: float
    rank_median_max_s: float
    iters: int
    algbw_gbs: float
    busbw_gbs: float

    @property
    def rank_spread(self) -> float:
        """Slowest rank's median / fastest rank's median - 1 (0: the ranks agree)."""
        return self.rank_median_max_s / self.rank_median_min_s - 1.0

    def to_dict(self) -> dict:
        return {"size_bytes": self.size_bytes, "elements": self.elements, "time_s": self.time_s, "min_s": self.min_s,
                "max_s": self.max_s, "cv": self.cv, "rank_median_min_s": self.rank_median_min_s,
                "rank_median_max_s": self.rank_median_max_s, "rank_spread": self.rank_spread, "iters": self.iters,
                "algbw_gbs": self.algbw_gbs, "busbw_gbs": self.busbw_gbs}


def slowest_rank(samples_by_rank: Sequence[Sequence[float]], size_bytes: int, elements: int) -> SizeTiming:
    """The :class:`SizeTiming` of one size from every rank's per-iteration times (seconds;
    ``samples_by_rank[r][i]`` is rank r's iteration i).

    Each iteration counts at its slowest rank (a collective ends when its last rank does);
    the figure is the median of those maxima.

    Raises:
        ValueError: no ranks, ranks with different iteration counts, no iterations, or a
            time not above zero.
    """
    if not samples_by_rank:
        raise ValueError("no ranks' timings")
    iters = {len(s) for s in samples_by_rank}
    if len(iters) != 1 or 0 in iters:
        raise ValueError(f"every rank must time the same number of iterations, got {sorted(len(s) for s in samples_by_rank)}")
    if any(not (x > 0 and math.isfinite(x)) for s in samples_by_rank for x in s):
        raise ValueError("an all-reduce time that is not a positive number")
    worst = [max(col) for col in zip(*samples_by_rank)]
    mean = statistics.fmean(worst)
    cv = statistics.pstdev(worst) / mean  # 0 for one iteration
    medians = [statistics.median(s) for s in samples_by_rank]
    t = statistics.median(worst)
    n = len(samples_by_rank)
    return SizeTiming(size_bytes, elements, t, min(worst), max(worst), cv, min(medians), max(medians), len(worst),
                      algbw_gbs(size_bytes, t), busbw_gbs(size_bytes, t, n))


def allreduce_limit_gbs(per_link_gbs: float, links: int) -> float:
    """The most bus bandwidth an all-reduce can reach over NVLink: one GPU's one-way NVLink
    bandwidth, ``per_link_gbs`` (GB/s each way per link) x ``links`` (busbw is comparable to
    the link's one-way rate: :data:`BUSBW_SOURCE`). E.g. H100 SXM: 18 NVLink 4 links x 25 GB/s
    each way = 450 GB/s (NVIDIA quotes 900 GB/s, both ways together).

    Raises:
        ValueError: a rate not above zero or fewer than one link.
    """
    if not per_link_gbs > 0 or links < 1:
        raise ValueError(f"an NVLink limit needs a positive per-link rate and at least one link, got {per_link_gbs!r} x {links!r}")
    return per_link_gbs * links


@dataclass(frozen=True)
class Limit:
    """What the largest all-reduce is compared against: ``gbs`` (None: unknown) and where it came from."""

    gbs: float | None
    source: str

    def fraction(self, busbw: float | None) -> float | None:
        """``busbw / gbs``, or None when either is unknown."""
        return None if self.gbs is None or busbw is None else busbw / self.gbs


#: The comparison when no link figure is known.
UNKNOWN_LIMIT = Limit(None, "limit unknown: no NVLink figure for these GPUs (no NVLink in NVML's topology, and the spec sheet has none)")


def sheet_limit(sheet) -> Limit:
    """The limit from a spec sheet's one-way NVLink bandwidth per GPU (``nvlink_gbs``, GB/s)
    when the sheet carries one, else :data:`UNKNOWN_LIMIT`. (The bundled sheets carry none
    yet: the link count and per-link rate are for the topology, issue 21.)"""
    gbs = getattr(sheet, "nvlink_gbs", None)
    if not gbs:
        return UNKNOWN_LIMIT
    return Limit(float(gbs), f"the {sheet.name} sheet's NVLink bandwidth, one way per GPU")


def topology_limit(gpus) -> Limit:
    """The limit from this host's topology (``gpus``: :class:`~gpuwhy.model.multi_gpu.topology.GpuPlace` of the
    ranks): each GPU's one-way NVLink bandwidth, its active links x their version's per-link rate
    (:func:`allreduce_limit_gbs`), and the slowest GPU's is the ring's limit. :data:`UNKNOWN_LIMIT`
    when a GPU has no NVLink or a link whose version gpuwhy has no figure for (the data then
    crosses PCIe or an unknown link, and no NVLink limit applies)."""
    from .links import nvlink_version

    per_gpu = []
    for g in gpus:
        rates = [v.per_link_gbs if (v := nvlink_version(e.version)) is not None else None for e in g.nvlinks]
        if not rates or any(r is None for r in rates):
            return UNKNOWN_LIMIT
        per_gpu.append((sum(rates), len(rates), g.index))
    if len(per_gpu) < 2:
        return UNKNOWN_LIMIT
    gbs, links, idx = min(per_gpu)
    return Limit(gbs, f"NVLink, one way per GPU: {links} links on GPU {idx} (the slowest), from NVML's topology")


def nearest_count(counts: Sequence[int], want: int) -> int:
    """The GPU count of ``counts`` nearest ``want`` (the same one when present; a tie goes to the
    larger count, whose all-reduce is the slower: the safer guess).

    Raises:
        ValueError: no counts.
    """
    if not counts:
        raise ValueError("no measured GPU counts")
    return min(counts, key=lambda c: (abs(c - want), -c))


def measured_busbw(entries: Mapping[str, Mapping], want: int) -> float | None:
    """The largest all-reduce's bus bandwidth (GB/s) for the GPU count :func:`measured_latency` picks
    for ``want`` (the same entry), or None when that entry has none."""
    usable = {int(k): v for k, v in (entries or {}).items() if str(k).isdigit() and v.get("latency_s")}
    if not usable:
        return None
    v = usable[nearest_count(sorted(usable), want)].get("busbw_gbs")
    return float(v) if isinstance(v, (int, float)) and v > 0 else None


def measured_latency(entries: Mapping[str, Mapping], want: int, where: str) -> tuple[float, str] | None:
    """``(seconds, source)`` of the smallest measured all-reduce for ``want`` GPUs, from a profile's
    ``allreduce_by_gpus`` (GPU count as text -> ``{"latency_s", "busbw_gbs", "date", ...}``);
    the count nearest ``want`` when it was not measured, and the source says so. ``where`` names
    the profile. None when ``entries`` holds no usable figure."""
    usable = {int(k): v for k, v in (entries or {}).items() if str(k).isdigit() and v.get("latency_s")}
    if not usable:
        return None
    n = nearest_count(sorted(usable), want)
    e = usable[n]
    size = e.get("latency_bytes", MIN_BYTES)
    what = f"measured: the {size} B all-reduce over {n} GPUs (bench --allreduce, {e.get('date', 'undated')}, {where})"
    if n != want:
        what += f"; {want} GPUs not measured, {n} is the nearest count measured"
    return float(e["latency_s"]), what
