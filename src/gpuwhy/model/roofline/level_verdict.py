"""One workload's verdict per memory level: the roofline verdict of
:func:`gpuwhy.model.roofline.classify.classify`, judged against the level its working set lives in,
and said in full where it sits far below that roof (Little's law). Pure: no GPU, no I/O.

:func:`judge_workload` is what ``gpuwhy classify --working-set`` and
``gpuwhy.measure(..., working_set=...)`` call (through :func:`gpuwhy.api.classify.run_classify`):

- a working set that fits in the L2 (:func:`~gpuwhy.model.roofline.hierarchy.place_working_set`)
  is judged against the L2 roof: measured (the profile), else the sheet's figure with its
  source; when neither exists, the L2 roof is unknown: no share of any roof is given, and
  the lines say how to measure it (never an invented figure);
- a timed kernel with no working set given whose bytes fit in the L2 and that moved them faster
  than DRAM allows is L2-resident by its own figures (:func:`l2_resident`): judged against the L2
  as if its bytes were the working set, and said so;
- bytes that do not fit in the L2 but would put a timed kernel above the DRAM roof say that the
  data must come from the L2 (or the counts are wrong), not "above the roof";
- a timed kernel on the memory side below :data:`~gpuwhy.model.roofline.hierarchy.LATENCY_FRACTION`
  of its roof (or with a launch shape Little's law calls too small) is
  ``latency`` (memory latency-bound: too few bytes in flight); a tensor-core kernel below
  :data:`~gpuwhy.model.roofline.hierarchy.ISSUE_FRACTION` of its compute roof is ``issue``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .hierarchy import (
    DEFAULT_LATENCY_S,
    DEFAULT_LATENCY_SOURCE,
    ISSUE_FRACTION,
    LEVEL_TEXT,
    LatencyDiagnosis,
    LevelRoof,
    Placement,
    how_to_measure_l2,
    is_latency_bound,
    latency_diagnosis,
    level_roofs,
    place_working_set,
)
from .classify import Ceilings, Verdict, Workload, classify
from ...units import fmt_fixed, fmt_num, fmt_pct, fmt_size

#: Precisions that run on tensor cores (the ``issue`` verdict applies to them).
TENSOR_PRECISIONS = ("tf32", "fp16", "bf16", "fp8", "int8", "fp4", "fp64_tensor")
_ABOVE_ROOF = "the measured time is faster than the roofline allows"


@dataclass(frozen=True)
class LevelJudgement:
    """How a workload was judged against the memory hierarchy.

    Attributes:
        level: the level the verdict's memory roof belongs to (``DRAM`` or ``L2``).
        placement: where its working set lives (None without ``working_set``).
        roof: that level's :class:`~gpuwhy.model.roofline.hierarchy.LevelRoof` (None: unknown).
        dram_roof: the DRAM roof (B/s), for the "x the DRAM roof" figure.
        times_dram: achieved bandwidth / the DRAM roof (timed workloads), or None.
        latency: the Little's-law diagnosis when the verdict is ``latency``.
        lines: what to tell the user, in order.
        working_set_from_bytes: no working set was given and the bytes themselves were taken as
            one (:func:`l2_resident`): the placement is theirs.
    """

    level: str
    placement: Placement | None = None
    roof: LevelRoof | None = None
    dram_roof: float | None = None
    times_dram: float | None = None
    latency: LatencyDiagnosis | None = None
    lines: tuple[str, ...] = ()
    working_set_from_bytes: bool = False

    def to_dict(self) -> dict:
        return {"level": self.level, "placement": self.placement.to_dict() if self.placement else None,
                "roof": self.roof.to_dict() if self.roof else None,
                "l2_roof_known": self.roof is not None if self.level == "L2" else None,
                "dram_roof_gbs": None if self.dram_roof is None else self.dram_roof / 1e9,
                "dram_roof_ratio": self.times_dram, "latency": self.latency.to_dict() if self.latency else None,
                "lines": list(self.lines), "working_set_from_bytes": self.working_set_from_bytes}


def l2_resident(workload: Workload, dram_bandwidth: float, l2_bytes: int | None) -> bool:
    """Whether a timed workload with no working set given is L2-resident by its own figures: all its
    bytes fit in the L2 (:func:`~gpuwhy.model.roofline.hierarchy.place_working_set`: the distinct bytes
    are at most the bytes moved, so they fit too) and it moved them faster than the DRAM roof
    (``dram_bandwidth``, B/s) allows. Then DRAM cannot have served them, and the L2 is the roof to
    judge against; without a time, or with bytes that do not fit, nothing says so."""
    t = workload.time_s
    if t is None or not l2_bytes or workload.bytes / t <= dram_bandwidth:
        return False
    return place_working_set(workload.bytes, l2_bytes).level == "L2"


def _latency_for(level: str, profile) -> tuple[float, str]:
    """(s, source): the profile's measured latency of ``level`` (the near L2 for L2), else the default."""
    measured = (getattr(profile, "latency_s", None) or {}) if profile is not None else {}
    if measured.get(level):
        return float(measured[level]), f"measured by gpuwhy bench --latency ({getattr(profile, 'latency_date', '')})"
    lat = DEFAULT_LATENCY_S[level]
    return lat, DEFAULT_LATENCY_SOURCE.format(ns=lat * 1e9, level=LEVEL_TEXT[level])


def judge_workload(
    workload: Workload,
    ceilings: Ceilings,
    sheet,
    profile=None,
    *,
    working_set: float | None = None,
    grid: int | None = None,
    block: int | None = None,
    bytes_per_thread: float | None = None,
    max_threads_per_sm: int | None = None,
    max_blocks_per_sm: int | None = None,
) -> tuple[Verdict, LevelJudgement]:
    """The verdict of ``workload`` judged against its memory level, and how it was judged.

    Args:
        workload, ceilings: as for :func:`~gpuwhy.model.roofline.classify.classify` (``ceilings``
            holds the DRAM bandwidth, from the sheet or the profile).
        sheet: the :class:`~gpuwhy.specs.Sheet` (L2 size and figure, SM count).
        profile: the :class:`~gpuwhy.profiles.DeviceProfile` the ceilings came from
            (measured L2 bandwidth and latencies), or None for sheet ceilings.
        working_set: distinct bytes the workload touches (None: not given).
        grid, block, bytes_per_thread: the launch, for the Little's-law diagnosis.
        max_threads_per_sm, max_blocks_per_sm: the SM's limits (default 2,048 threads).

    Raises:
        ValueError: as :func:`~gpuwhy.model.roofline.classify.classify`; a working set that is not positive.
    """
    roofs = level_roofs(sheet, profile, measured=profile is not None)
    lines: list[str] = []
    placement = None
    level, roof = "DRAM", LevelRoof("DRAM", ceilings.bandwidth, "measured" if profile is not None else "spec",
                                    ceilings.source)
    dram_bw = ceilings.bandwidth
    l2_size = (getattr(profile, "l2_bytes", None) if profile is not None else None) or sheet.l2_bytes
    from_bytes = working_set is None and l2_resident(workload, dram_bw, l2_size)
    if from_bytes:
        working_set = workload.bytes
    if working_set is not None:
        placement = place_working_set(working_set, l2_size)
        what = (f"the {fmt_size(working_set, 'KiB')} it moves {placement.reason} and the time is faster than DRAM allows "
                f"({fmt_num(workload.bytes / workload.time_s / dram_bw)}x the DRAM roof): an L2-resident working set,"
                if from_bytes else f"working set {fmt_size(working_set, 'KiB')} {placement.reason}:")
        if placement.level == "L2":
            level = "L2"
            roof = roofs.get("L2")
            if roof is not None:
                ceilings = replace(ceilings, bandwidth=roof.bandwidth, level="L2")  # its source: roof.source
                lines.append(f"{what} judged against the L2 roof, {fmt_fixed(roof.bandwidth / 1e9, 0)} GB/s ({roof.source})")
            else:
                lines.append(f"{what} judged against the L2; " + how_to_measure_l2(sheet.name))
        else:
            lines.append(what.rstrip(":,"))
    verdict = classify(workload, ceilings)
    timed = workload.time_s is not None
    times_dram = verdict.achieved_bandwidth / dram_bw if timed else None
    if level == "L2" and roof is None:
        # No L2 roof: no share of a roof is given (a DRAM share would mislead), the DRAM
        # "above the roof" warning becomes what it means.
        warns = tuple(w for w in verdict.warnings if not w.startswith(_ABOVE_ROOF))
        verdict = replace(verdict, sol_pct=None, memory_sol_pct=None, unexplained_fraction=None, warnings=warns)
        if timed and not from_bytes:  # from the bytes, the first line said it
            lines.append(f"the achieved {fmt_fixed(verdict.achieved_bandwidth / 1e9, 0)} GB/s is {fmt_num(times_dram)}x the DRAM roof "
                         f"({fmt_fixed(dram_bw / 1e9, 0)} GB/s){': only the L2 can deliver that' if times_dram > 1 else ''}")
    elif level == "L2" and timed:
        lines.append(f"the achieved {fmt_fixed(verdict.achieved_bandwidth / 1e9, 0)} GB/s is {fmt_num(times_dram)}x the DRAM roof ({fmt_fixed(dram_bw / 1e9, 0)} GB/s), "
                     f"{fmt_pct(verdict.memory_sol_pct, 0)} of the L2 roof")
    elif timed and working_set is None and verdict.memory_sol_pct is not None and verdict.memory_sol_pct > 100 \
            and (verdict.compute_sol_pct or 0) <= 100:
        warns = tuple(w for w in verdict.warnings if not w.startswith(_ABOVE_ROOF))
        l2 = roofs.get("L2")
        head = (f"{_ABOVE_ROOF} on DRAM bytes alone ({fmt_num(times_dram)}x the DRAM roof: {fmt_fixed(verdict.achieved_bandwidth / 1e9, 0)} GB/s "
                f"of {fmt_fixed(dram_bw / 1e9, 0)} GB/s)")
        if l2 is not None and verdict.achieved_bandwidth > l2.bandwidth:
            msg = (f"{head}, and faster than even the L2 roof ({fmt_fixed(l2.bandwidth / 1e9, 0)} GB/s): check the byte and FLOP counts, "
                   "their units and that the right GPU sheet is used")
        else:
            msg = (f"{head}: the data must be coming from the L2 (or the byte count is wrong); give the working set "
                   "(--working-set BYTES) to judge it against the L2 roof")
        verdict = replace(verdict, warnings=warns + (msg,))
    latency = None
    if timed and verdict.regime == "memory" and verdict.memory_sol_pct is not None and roof is not None:
        lat, src = _latency_for(level, profile)
        threads = max_threads_per_sm or 2048
        diag = latency_diagnosis(level, verdict.achieved_bandwidth, ceilings.bandwidth, lat, int(sheet.sm_count), threads,
                                 latency_source=src, bandwidth_source=roof.source, grid=grid, block=block,
                                 bytes_per_thread=bytes_per_thread, max_blocks_per_sm=max_blocks_per_sm)
        if is_latency_bound(verdict.memory_sol_pct / 100, diag):
            latency = diag
            verdict = replace(verdict, regime="latency")
            lines.append(f"why: {diag.reason}")
    elif timed and verdict.regime == "compute" and ceilings.precision in TENSOR_PRECISIONS \
            and verdict.compute_sol_pct is not None and verdict.compute_sol_pct < 100 * ISSUE_FRACTION:
        verdict = replace(verdict, regime="issue")
        lines.append(f"why: {verdict.compute_sol_pct:.0f}% of the {ceilings.precision} "
                     "tensor-core roof - the tensor cores wait on issue (too few warps issuing MMAs, dependent MMA "
                     "chains, operands not staged ahead), not on memory")
    return verdict, LevelJudgement(level, placement, roof, dram_bw, times_dram, latency, tuple(lines), from_bytes)


