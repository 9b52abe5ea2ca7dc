"""The memory hierarchy on the roofline: which level's roof bounds a kernel, and why a
kernel sits far below its roof (Little's law). Pure maths: no GPU, no I/O.

Levels, outermost first (:data:`LEVELS`): ``DRAM``, ``L2`` and ``L1`` (the L1 data cache
and shared memory, one SRAM per SM). A roof per level is a bandwidth in B/s
(:class:`LevelRoof`), measured by ``gpuwhy bench`` (the device profile), read from the
spec sheet (with its source), or derived from the clock (shared memory: 128 bytes per
clock per SM, :data:`SHARED_BYTES_PER_CLOCK`).

Three questions, three functions:

- :func:`place_working_set`: where does a working set of N bytes live? In the L2 when it
  is at most :data:`L2_FIT_FRACTION` of the L2 (the rest is left for other traffic),
  else in DRAM.
- :func:`judge_levels`: bytes per level (DRAM, L2, L1/shared, e.g. ``dram__bytes``,
  ``lts__t_bytes``, ``l1tex__t_bytes`` of one Nsight Compute kernel) + FLOPs + time + a
  roof per level: the level whose roof is nearest decides, as in Nsight Compute's
  hierarchical roofline. The nearest roof is the one the kernel reaches the largest share
  of: achieved / (bandwidth x intensity) = bytes / (bandwidth x time).
- :func:`latency_diagnosis`: a kernel on the memory side far below its roof (under
  :data:`LATENCY_FRACTION`) has too few bytes in flight: Little's law
  (:mod:`gpuwhy.model.roofline.littles_law`) says how many it needs per SM and per thread; with
  the launch shape (or Nsight Compute's waves and achieved occupancy) it says which of
  "the grid is too small", "occupancy is low" or "too few bytes per thread" it is.

Units: bytes, FLOP, seconds, B/s, FLOP/s; GB/s (1e9 B/s) only in text.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from .littles_law import LittlesLaw, littles_law
from ...units import fmt_g, fmt_kb, fmt_num, fmt_size

#: The levels, outermost first. ``L1`` is the L1 data cache and shared memory.
LEVELS = ("DRAM", "L2", "L1")
#: How each level is written for people.
LEVEL_TEXT = {"DRAM": "DRAM", "L2": "L2", "L1": "L1/shared"}

#: A working set up to this share of the L2 is judged L2-resident; the rest of the L2 is
#: left for the kernel's other traffic (outputs, indices, page-table walks) and for set
#: conflicts. Public L2-bandwidth sweeps keep their plateau to about two thirds of the L2
#: and fall beyond it: H100 PCIe 6.9 TB/s to 33 MB of its 52 MB (65%), down 6% at 71% and
#: halved at 78% (https://github.com/te42kyfo/gpu-benches/blob/70c3826d5f0999617878ceb5938dc546d7f68708/gpu-l2-cache/h100_pcie.txt);
#: H200 9.7 TB/s to 41 MB of 63 MB (66%), 7.5 TB/s at 77%
#: (https://github.com/te42kyfo/gpu-benches/blob/3088b3337998d1d9fff53c7af665f587af83a178/gpu-l2-cache/h200.txt).
L2_FIT_FRACTION = 2 / 3

#: Bytes per clock per SM that shared memory serves: 32 banks of 32 bits each per clock
#: (CUDA C++ Programming Guide, "Shared Memory" for compute capability 5.x, which later
#: architectures keep: https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#shared-memory-5-x).
SHARED_BYTES_PER_CLOCK = 128
SHARED_LIMIT_SOURCE = ("32 banks x 4 bytes per clock per SM (CUDA C++ Programming Guide, shared memory, cc 5.x and later: "
                       "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#shared-memory-5-x)")

#: A timed kernel on the memory side below this share of its roof is latency-bound.
LATENCY_FRACTION = 0.40
#: Above this share of the roof a kernel is never called latency-bound (the launch-shape
#: test below may call it so between LATENCY_FRACTION and this).
LATENCY_CEILING_FRACTION = 0.90
#: With a launch shape, the bytes a kernel can keep in flight are compared with bandwidth
#: x this many times the idle (pointer-chase) latency: a loaded memory system answers
#: slower than an idle one. On the H200 the naive vecadd keeps 16 KB per SM in flight and
#: reaches 3,396 GB/s: its Little's-law latency is 16,384 B x 132 / 3,396 GB/s = 637 ns,
#: 1.8x the idle 347 ns (docs/results/2026-11-29-h200.md).
LOADED_LATENCY_FACTOR = 2.0
#: Compute side: a timed kernel on tensor cores below this share of the compute roof is
#: issue/latency-bound on the math pipe.
ISSUE_FRACTION = 0.40

#: Load-to-use latency per level when no measured figure is at hand (s). DRAM 500 ns:
#: the course's Little's-law example, inside the 300-600 ns that pointer chases measure
#: on current GPUs (V100 436 cycles at 1,380 MHz = 316 ns,
#: https://github.com/te42kyfo/gpu-benches/blob/01d2bb5303d4f74a62c92ef444147e60bd257029/README.md#cuda-latency;
#: H200 347 ns, docs/results/2026-11-29-h200.md). L2 200 ns: V100 214 cycles = 155 ns
#: (same README), H200 144-275 ns near/far. L1 and shared memory 30 ns (V100 30 cycles = 22 ns).
DEFAULT_LATENCY_S = {"DRAM": 500e-9, "L2": 200e-9, "L1": 30e-9}
DEFAULT_LATENCY_SOURCE = ("gpuwhy's default {ns:.0f} ns for {level} (no measured latency: run `gpuwhy bench --latency` "
                          "on this GPU)")

#: Verdict words per regime (the roofline's three, and the two this module adds).
REGIME_TEXT = {
    "compute": "compute-bound",
    "memory": "memory-bound",
    "overhead": "overhead-bound",
    "latency": "memory latency-bound: too few bytes in flight",
    "issue": "issue/latency-bound on the math pipe",
}


def regime_text(regime: str) -> str:
    """``memory-bound``, ``memory latency-bound: too few bytes in flight``, ..."""
    return REGIME_TEXT.get(regime, f"{regime}-bound")


# ---------------------------------------------------------------------------
# Roofs per level
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class LevelRoof:
    """One memory level's roof.

    Attributes:
        level: ``DRAM``, ``L2`` or ``L1``.
        bandwidth: B/s.
        kind: ``measured`` (gpuwhy bench), ``spec`` (a sheet's figure) or ``clock``
            (derived from the clock: shared memory's 128 B/clk/SM).
        source: where the figure came from (a profile date, a sheet and its URL, the rule).
        size_bytes: the level's capacity (the L2's size), or None.
    """

    level: str
    bandwidth: float
    kind: str
    source: str
    size_bytes: int | None = None

    @property
    def bandwidth_gbs(self) -> float:
        return self.bandwidth / 1e9

    def to_dict(self) -> dict:
        return {"level": self.level, "bandwidth_gbs": self.bandwidth / 1e9, "kind": self.kind, "source": self.source,
                "size_bytes": self.size_bytes}


def shared_clock_limit(sm_count: int, sm_clock_mhz: float) -> float:
    """Shared-memory bandwidth limit in B/s: 128 B/clk/SM x ``sm_count`` x ``sm_clock_mhz``.

    Raises:
        ValueError: a count or clock that is not positive.
    """
    if not (sm_count >= 1 and sm_clock_mhz > 0 and math.isfinite(sm_clock_mhz)):
        raise ValueError(f"sm_count={sm_count!r} and sm_clock_mhz={sm_clock_mhz!r} must be positive")
    return SHARED_BYTES_PER_CLOCK * int(sm_count) * float(sm_clock_mhz) * 1e6


def level_roofs(sheet, profile=None, *, measured: bool = True) -> dict[str, LevelRoof]:
    """The roof of each level that has one: DRAM, L2, L1/shared.

    ``sheet`` is a :class:`~gpuwhy.specs.Sheet`; ``profile`` a
    :class:`~gpuwhy.profiles.DeviceProfile` or None. With a profile and ``measured``, a
    level's measured figure wins; else the sheet's figure (DRAM always; L2 only where
    the sheet gives ``l2_bandwidth_gbs`` with a source); L1/shared falls back to the
    clock-derived limit at the sheet's boost clock. A level with neither is absent: its
    roof is unknown, never invented.
    """
    roofs: dict[str, LevelRoof] = {}
    use = profile if (profile is not None and measured) else None
    l2_size = (getattr(use, "l2_bytes", None) if use is not None else None) or sheet.l2_bytes
    if use is not None and getattr(use, "dram_bandwidth_gbs", None):
        roofs["DRAM"] = LevelRoof("DRAM", use.dram_bandwidth_gbs * 1e9, "measured", f"measured by gpuwhy bench ({use.date})")
    else:
        roofs["DRAM"] = LevelRoof("DRAM", sheet.bandwidth_bytes_per_s, "spec",
                                  f"{sheet.name} sheet ({sheet.source_for('memory_bandwidth_gbs')})")
    l2_meas = getattr(use, "l2_read_bandwidth_gbs", None) if use is not None else None
    l2_sheet = getattr(sheet, "l2_bandwidth_gbs", None)
    if l2_meas:
        roofs["L2"] = LevelRoof("L2", l2_meas * 1e9, "measured",
                                f"measured by gpuwhy bench ({getattr(use, 'cache_date', None) or use.date})", l2_size)
    elif l2_sheet:
        roofs["L2"] = LevelRoof("L2", l2_sheet * 1e9, "spec",
                                f"{sheet.name} sheet ({sheet.source_for('l2_bandwidth_gbs')})", l2_size)
    sh_meas = getattr(use, "shared_bandwidth_gbs", None) if use is not None else None
    if sh_meas:
        roofs["L1"] = LevelRoof("L1", sh_meas * 1e9, "measured",
                                f"shared memory, measured by gpuwhy bench ({getattr(use, 'cache_date', None) or use.date})")
    elif getattr(sheet, "boost_clock_mhz", None) and getattr(sheet, "sm_count", None):
        roofs["L1"] = LevelRoof("L1", shared_clock_limit(sheet.sm_count, sheet.boost_clock_mhz), "clock",
                                f"128 B/clk/SM x {sheet.sm_count} SMs x {fmt_g(sheet.boost_clock_mhz)} MHz boost ({sheet.name} sheet)")
    return roofs


def how_to_measure_l2(gpu: str) -> str:
    """The sentence that says an L2 roof is unknown and how to get one."""
    return (f"the L2 roof of the {gpu} is unknown (no measured figure, none on its sheet): run `gpuwhy bench --sweep` "
            "on that GPU (it measures L2 and shared-memory bandwidth), then judge with --measured")


# ---------------------------------------------------------------------------
# Where a working set lives
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Placement:
    """Where a working set lives: ``level`` (``L2`` or ``DRAM``) and why (``reason``)."""

    working_set_bytes: float
    l2_bytes: int
    level: str
    reason: str

    @property
    def fraction_of_l2(self) -> float:
        return self.working_set_bytes / self.l2_bytes

    def to_dict(self) -> dict:
        return {"working_set_bytes": self.working_set_bytes, "l2_bytes": self.l2_bytes, "level": self.level,
                "fraction_of_l2": self.fraction_of_l2, "reason": self.reason}


def place_working_set(working_set_bytes: float, l2_bytes: int, fit_fraction: float = L2_FIT_FRACTION) -> Placement:
    """``L2`` when ``working_set_bytes`` <= ``fit_fraction`` x ``l2_bytes``, else ``DRAM``.

    Raises:
        ValueError: a working set or L2 size that is not positive.
    """
    if not (working_set_bytes > 0 and math.isfinite(working_set_bytes)):
        raise ValueError(f"working set {working_set_bytes!r} must be a positive number of bytes")
    if not l2_bytes or l2_bytes <= 0:
        raise ValueError("the L2 size is unknown")
    ws, l2 = float(working_set_bytes), int(l2_bytes)
    if ws <= fit_fraction * l2:
        return Placement(ws, l2, "L2", f"fits in the {fmt_size(l2)} L2 ({100 * ws / l2:.0f}% of it)")
    if ws <= l2:
        return Placement(ws, l2, "DRAM", f"{100 * ws / l2:.0f}% of the {fmt_size(l2)} L2: above the {fit_fraction:.0%} "
                                         "left after other traffic, so part of it comes from DRAM; judged against DRAM")
    return Placement(ws, l2, "DRAM", f"does not fit in the {fmt_size(l2)} L2 ({fmt_num(ws / l2)}x its size): judged against DRAM")


# ---------------------------------------------------------------------------
# Little's law: why a kernel sits below its roof
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class LatencyDiagnosis:
    """Why a memory-side kernel is far below its roof.

    Attributes:
        level: the level judged (``DRAM``, ``L2``, ``L1``).
        fraction_of_roof: achieved / roof bandwidth (0-1).
        littles: Little's law at the roof's bandwidth and the level's latency
            (:class:`~gpuwhy.model.roofline.littles_law.LittlesLaw`; its ``needs`` hold 4 and 16
            bytes per thread, and the kernel's own bytes per thread when given).
        achieved_in_flight_bytes: achieved bandwidth x latency (what the kernel kept in
            flight on average if its loads took the idle latency), bytes.
        waves: blocks / (SMs x resident blocks per SM), or None.
        achieved_occupancy: resident warps / the SM's limit (0-1), or None.
        bytes_per_thread: the kernel's bytes in flight per thread, or None.
        kernel_in_flight_per_sm: resident threads per SM x bytes_per_thread, or None.
        need_loaded_per_sm: bytes per SM in flight needed at LOADED_LATENCY_FACTOR x
            the latency (what ``kernel_in_flight_per_sm`` is compared with).
        cause: ``small grid``, ``low occupancy``, ``few bytes per thread`` or ``too few bytes in flight``.
        reason: one line saying it, with the numbers.
    """

    level: str
    fraction_of_roof: float
    littles: LittlesLaw
    achieved_in_flight_bytes: float
    waves: float | None = None
    achieved_occupancy: float | None = None
    bytes_per_thread: float | None = None
    kernel_in_flight_per_sm: float | None = None
    need_loaded_per_sm: float | None = None
    cause: str = "too few bytes in flight"
    reason: str = ""

    def to_dict(self) -> dict:
        return {
            "level": self.level, "fraction_of_roof": self.fraction_of_roof, "littles_law": self.littles.to_dict(),
            "achieved_in_flight_bytes": self.achieved_in_flight_bytes, "waves": self.waves,
            "achieved_occupancy": self.achieved_occupancy, "bytes_per_thread": self.bytes_per_thread,
            "kernel_in_flight_per_sm_bytes": self.kernel_in_flight_per_sm,
            "need_loaded_per_sm_bytes": self.need_loaded_per_sm, "cause": self.cause, "reason": self.reason,
        }


def blocks_per_sm(block: int, max_threads_per_sm: int, max_blocks_per_sm: int | None = None) -> int:
    """The most blocks of ``block`` threads one SM holds by thread count and block count
    (registers and shared memory may allow fewer), at least 1."""
    per_sm = max(1, max_threads_per_sm // max(1, block))
    return min(per_sm, int(max_blocks_per_sm)) if max_blocks_per_sm else per_sm


def waves_of(grid: int, block: int, sm_count: int, max_threads_per_sm: int, max_blocks_per_sm: int | None = None) -> float:
    """Waves of a launch: blocks / (SMs x :func:`blocks_per_sm`)."""
    return grid / (sm_count * blocks_per_sm(block, max_threads_per_sm, max_blocks_per_sm))


def latency_diagnosis(
    level: str,
    achieved_bandwidth: float,
    roof_bandwidth: float,
    latency_s: float,
    sm_count: int,
    max_threads_per_sm: int,
    *,
    latency_source: str = "",
    bandwidth_source: str = "",
    grid: int | None = None,
    block: int | None = None,
    bytes_per_thread: float | None = None,
    max_blocks_per_sm: int | None = None,
    waves: float | None = None,
    achieved_occupancy: float | None = None,
) -> LatencyDiagnosis:
    """Little's law for a kernel at ``achieved_bandwidth`` B/s under a roof of ``roof_bandwidth``.

    Args:
        level: the level judged (``DRAM``, ``L2``, ``L1``).
        latency_s: that level's load-to-use latency, s (measured, else
            :data:`DEFAULT_LATENCY_S`; ``latency_source`` says which).
        sm_count, max_threads_per_sm: of the GPU.
        grid, block: the launch (blocks, threads per block), when known.
        bytes_per_thread: bytes each thread has in flight (4 for one float load, 8 for
            two, 16 for a float4), when known.
        waves, achieved_occupancy: Nsight Compute's figures (``launch__waves_per_multiprocessor``,
            ``sm__warps_active`` as a share of the limit, 0-1), when known; ``waves`` is
            computed from ``grid``/``block`` otherwise.

    The cause, first that holds: fewer than one wave (``small grid``); achieved occupancy
    under 50% (``low occupancy``); resident threads x bytes_per_thread below bandwidth x
    :data:`LOADED_LATENCY_FACTOR` x latency per SM (``few bytes per thread``); else
    ``too few bytes in flight`` with the law's figures.

    Raises:
        ValueError: non-positive bandwidths, latency or counts.
    """
    if not (achieved_bandwidth > 0 and roof_bandwidth > 0):
        raise ValueError("bandwidths must be positive")
    cases = [4, 16]
    if bytes_per_thread and int(bytes_per_thread) == bytes_per_thread and int(bytes_per_thread) not in cases:
        cases.append(int(bytes_per_thread))
    law = littles_law(roof_bandwidth / 1e9, latency_s, sm_count, max_threads_per_sm, tuple(cases),
                      bandwidth_source=bandwidth_source, latency_source=latency_source)
    frac = achieved_bandwidth / roof_bandwidth
    if waves is None and grid and block:
        waves = waves_of(grid, block, sm_count, max_threads_per_sm, max_blocks_per_sm)
    need_loaded = law.bytes_in_flight_per_sm * LOADED_LATENCY_FACTOR
    in_flight = None
    if bytes_per_thread:
        resident = float(max_threads_per_sm)
        if grid and block:
            resident = min(blocks_per_sm(block, max_threads_per_sm, max_blocks_per_sm) * block, grid * block / sm_count)
        if achieved_occupancy:
            resident = min(resident, achieved_occupancy * max_threads_per_sm)
        in_flight = resident * float(bytes_per_thread)
    name = LEVEL_TEXT.get(level, level)
    head = (f"{100 * frac:.0f}% of the {name} roof; Little's law: {law.bandwidth_gbs:,.0f} GB/s x "
            f"{law.latency_s * 1e9:,.0f} ns = {fmt_kb(law.bytes_in_flight)} in flight, {fmt_kb(law.bytes_in_flight_per_sm)} per SM")
    if waves is not None and waves < 1:
        cause = "small grid"
        blocks = f" ({grid:,} blocks of {block})" if grid and block else ""
        reason = f"{fmt_num(waves, 2)} waves: the grid{blocks} is too small to fill {sm_count} SMs; {head}"
    elif achieved_occupancy is not None and achieved_occupancy < 0.5:
        cause = "low occupancy"
        w = f"{fmt_num(waves)} waves, " if waves is not None else ""
        reason = (f"{w}{100 * achieved_occupancy:.0f}% achieved occupancy: too few warps per SM keep loads in flight; {head}")
    elif in_flight is not None and in_flight < need_loaded:
        cause = "few bytes per thread"
        reason = (f"{fmt_g(bytes_per_thread)} bytes in flight per thread x {in_flight / bytes_per_thread:,.0f} threads per SM = "
                  f"{fmt_kb(in_flight)} per SM, below the {fmt_kb(need_loaded)} Little's law needs under load "
                  f"({law.bandwidth_gbs:,.0f} GB/s x {fmt_g(LOADED_LATENCY_FACTOR)} x {law.latency_s * 1e9:,.0f} ns / {sm_count} SMs)")
    else:
        cause = "too few bytes in flight"
        need4, need16 = law.need(4), law.need(16)
        reason = (f"{head}: at 4 bytes per thread that is {need4.threads_per_sm:,.0f} threads per SM "
                  f"({100 * need4.fraction_of_limit:.0f}% of the {max_threads_per_sm:,}-thread limit), at 16 bytes "
                  f"{need16.threads_per_sm:,.0f} ({100 * need16.fraction_of_limit:.0f}%)")
    return LatencyDiagnosis(level, frac, law, achieved_bandwidth * latency_s, waves, achieved_occupancy,
                            bytes_per_thread, in_flight, need_loaded, cause, reason)


def is_latency_bound(fraction_of_roof: float, diagnosis: LatencyDiagnosis | None = None) -> bool:
    """Under :data:`LATENCY_FRACTION` of the roof; or under :data:`LATENCY_CEILING_FRACTION`
    with a launch-shape cause (small grid, low occupancy, few bytes per thread)."""
    if fraction_of_roof < LATENCY_FRACTION:
        return True
    return (diagnosis is not None and fraction_of_roof < LATENCY_CEILING_FRACTION
            and diagnosis.cause in ("small grid", "low occupancy", "few bytes per thread"))


# ---------------------------------------------------------------------------
# Bytes per level: the deciding level (Nsight Compute's hierarchical roofline)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class LevelPoint:
    """One level's view of a kernel.

    Attributes:
        level: ``DRAM``, ``L2``, ``L1``.
        bytes: bytes through that level.
        intensity: FLOPs / bytes (FLOP/byte).
        roof: the level's :class:`LevelRoof`, or None (unknown).
        t_roof_s: bytes / bandwidth, s (None without a roof).
        achieved_bandwidth: bytes / time, B/s.
        fraction_of_roof: achieved / roof bandwidth = t_roof / time (None without a roof).
    """

    level: str
    bytes: float
    intensity: float
    roof: LevelRoof | None
    t_roof_s: float | None
    achieved_bandwidth: float
    fraction_of_roof: float | None

    def to_dict(self) -> dict:
        return {"level": self.level, "bytes": self.bytes, "intensity": self.intensity,
                "roof": self.roof.to_dict() if self.roof else None, "t_roof_s": self.t_roof_s,
                "achieved_bandwidth_gbs": self.achieved_bandwidth / 1e9,
                "pct_of_roof": None if self.fraction_of_roof is None else 100 * self.fraction_of_roof}


@dataclass(frozen=True)
class HierarchyVerdict:
    """A kernel judged against every memory level and the compute roof.

    Attributes:
        points: one :class:`LevelPoint` per level given (outermost first).
        deciding: the level whose roof is nearest (``DRAM``, ``L2``, ``L1``) or ``compute``.
        regime: ``memory``, ``compute``, ``latency`` (memory latency-bound) or ``issue``
            (issue/latency-bound on the math pipe).
        flops: FLOP; time_s: s; peak_flops: FLOP/s.
        compute_fraction: achieved FLOP/s / peak.
        latency: the :class:`LatencyDiagnosis` when memory latency-bound.
        notes: levels without a roof, and the like.
    """

    points: tuple[LevelPoint, ...]
    deciding: str
    regime: str
    flops: float
    time_s: float
    peak_flops: float
    compute_fraction: float
    latency: LatencyDiagnosis | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    def point(self, level: str) -> LevelPoint | None:
        return next((p for p in self.points if p.level == level), None)

    @property
    def text(self) -> str:
        """One line: the verdict and the deciding level."""
        if self.deciding == "compute":
            return f"{regime_text(self.regime)} ({100 * self.compute_fraction:.0f}% of the compute roof)"
        p = self.point(self.deciding)
        pct = f"{100 * p.fraction_of_roof:.0f}%" if p and p.fraction_of_roof is not None else "n/a"
        return f"{regime_text(self.regime)}, {LEVEL_TEXT.get(self.deciding, self.deciding)} decides ({pct} of its roof)"

    def to_dict(self) -> dict:
        return {"deciding_level": self.deciding, "regime": self.regime, "verdict": self.text, "flops": self.flops,
                "time_s": self.time_s, "peak_tflops": self.peak_flops / 1e12,
                "compute_pct_of_roof": 100 * self.compute_fraction, "levels": [p.to_dict() for p in self.points],
                "latency": self.latency.to_dict() if self.latency else None, "notes": list(self.notes)}


def judge_levels(
    bytes_by_level: Mapping[str, float],
    flops: float,
    time_s: float,
    roofs: Mapping[str, LevelRoof | float],
    peak_flops: float,
    *,
    tensor: bool = False,
    latency_s: Mapping[str, float] | None = None,
    latency_sources: Mapping[str, str] | None = None,
    sm_count: int | None = None,
    max_threads_per_sm: int | None = None,
    waves: float | None = None,
    achieved_occupancy: float | None = None,
    grid: int | None = None,
    block: int | None = None,
    bytes_per_thread: float | None = None,
    max_blocks_per_sm: int | None = None,
) -> HierarchyVerdict:
    """Judge one timed kernel against every memory level it has bytes for.

    Args:
        bytes_by_level: bytes through each level, keys in :data:`LEVELS` (``DRAM``:
            ``dram__bytes``; ``L2``: ``lts__t_bytes``; ``L1``: ``l1tex__t_bytes``); levels
            without bytes (or 0) are left out.
        flops: FLOPs of the kernel (0 allowed: a copy; intensity is then 0).
        time_s: its measured time, s.
        roofs: per level a :class:`LevelRoof` or a bandwidth in B/s (see :func:`level_roofs`).
        peak_flops: the compute roof of the kernel's precision, FLOP/s.
        tensor: the work runs on tensor cores (for the ``issue`` verdict).
        latency_s: load-to-use latency per level, s (default :data:`DEFAULT_LATENCY_S`).
        sm_count, max_threads_per_sm: for Little's law (without them no latency diagnosis).
        waves, achieved_occupancy, grid, block, bytes_per_thread, max_blocks_per_sm: see
            :func:`latency_diagnosis`.

    The deciding level is the one with the largest bytes / bandwidth (the roof the kernel
    comes nearest to); when FLOPs / peak is larger still, compute decides. Then: on the
    memory side, a share of the roof that :func:`is_latency_bound` calls low gives
    ``latency``; on the compute side with ``tensor``, under :data:`ISSUE_FRACTION` gives ``issue``.

    Raises:
        ValueError: no level with bytes, an unknown level, a non-positive time or peak,
            negative bytes or FLOPs.
    """
    if not (time_s > 0 and math.isfinite(time_s)):
        raise ValueError(f"time_s={time_s!r} must be a positive number of seconds")
    if not (peak_flops > 0):
        raise ValueError("peak_flops must be positive")
    if flops < 0 or not math.isfinite(flops):
        raise ValueError("flops must be >= 0")
    unknown = [k for k in bytes_by_level if k not in LEVELS]
    if unknown:
        raise ValueError(f"unknown level {unknown[0]!r}; levels: {', '.join(LEVELS)}")
    points: list[LevelPoint] = []
    notes: list[str] = []
    for lv in LEVELS:
        b = bytes_by_level.get(lv)
        if b is None or b == 0:
            continue
        if b < 0 or not math.isfinite(b):
            raise ValueError(f"bytes for {lv} must be >= 0")
        r = roofs.get(lv)
        if r is not None and not isinstance(r, LevelRoof):
            r = LevelRoof(lv, float(r), "given", "given")
        t_roof = b / r.bandwidth if r is not None else None
        if r is None:
            notes.append(f"no {LEVEL_TEXT[lv]} roof: its {b:,.0f} bytes are not judged")
        points.append(LevelPoint(lv, float(b), flops / b, r, t_roof, b / time_s,
                                 None if t_roof is None else t_roof / time_s))
    if not points:
        raise ValueError("no level has bytes")
    t_compute = flops / peak_flops
    compute_fraction = t_compute / time_s
    judged = [p for p in points if p.t_roof_s is not None]
    nearest = max(judged, key=lambda p: p.t_roof_s, default=None)
    latency = None
    if nearest is None or t_compute >= nearest.t_roof_s:
        deciding = "compute"
        regime = "issue" if tensor and compute_fraction < ISSUE_FRACTION else "compute"
    else:
        deciding, regime = nearest.level, "memory"
        if sm_count and max_threads_per_sm and nearest.fraction_of_roof < LATENCY_CEILING_FRACTION:
            lat = (latency_s or {}).get(nearest.level) or DEFAULT_LATENCY_S[nearest.level]
            src = (latency_sources or {}).get(nearest.level) or (
                "measured" if (latency_s or {}).get(nearest.level) else
                DEFAULT_LATENCY_SOURCE.format(ns=lat * 1e9, level=LEVEL_TEXT[nearest.level]))
            diag = latency_diagnosis(nearest.level, nearest.achieved_bandwidth, nearest.roof.bandwidth, lat, sm_count,
                                     max_threads_per_sm, latency_source=src, bandwidth_source=nearest.roof.source,
                                     grid=grid, block=block, bytes_per_thread=bytes_per_thread,
                                     max_blocks_per_sm=max_blocks_per_sm, waves=waves,
                                     achieved_occupancy=achieved_occupancy)
            if is_latency_bound(nearest.fraction_of_roof, diag):
                regime, latency = "latency", diag
    return HierarchyVerdict(tuple(points), deciding, regime, float(flops), float(time_s), float(peak_flops),
                            compute_fraction, latency, tuple(notes))


def hierarchy_remedy_hint(verdict: HierarchyVerdict) -> str:
    """A one-line hint for the deciding level (what to change to move to another roof)."""
    if verdict.deciding == "L2":
        return "the kernel streams from L2: reuse data in shared memory or registers (tiling) to move to the L1/shared roof"
    if verdict.deciding == "L1":
        return "the kernel is bound by L1/shared-memory traffic: avoid bank conflicts, use wider (16-byte) accesses, keep reuse in registers"
    if verdict.deciding == "DRAM":
        return "the kernel streams from DRAM: fewer bytes (fusion, lower precision) or a working set that fits in the L2"
    return ""


def levels_from_bytes(dram: float | None = None, l2: float | None = None, l1: float | None = None) -> dict[str, float]:
    """``{"DRAM": dram, "L2": l2, "L1": l1}`` without the Nones (a helper for importers)."""
    return {k: float(v) for k, v in (("DRAM", dram), ("L2", l2), ("L1", l1)) if v is not None}


__all__: Sequence[str] = (
    "LEVELS", "LEVEL_TEXT", "LevelRoof", "level_roofs", "place_working_set", "Placement", "latency_diagnosis",
    "LatencyDiagnosis", "judge_levels", "HierarchyVerdict", "LevelPoint", "regime_text", "shared_clock_limit",
)
