"""One ncu kernel on the hierarchical roofline: its DRAM, L2 and L1 bytes judged against a
roof per level (:func:`gpuwhy.model.roofline.hierarchy.judge_levels`), as Nsight Compute's
hierarchical roofline draws it.

Roofs (:func:`level_roofs_for`): DRAM is the bandwidth the kernel's roofline verdict
used (the sheet's); L2 and L1/shared come from :func:`gpuwhy.model.roofline.hierarchy.level_roofs`:
measured by ``gpuwhy bench --sweep`` when a profile is given (``gpuwhy ncu --measured``),
else the sheet's L2 figure with its source, else none (the L2 roof is unknown: its bytes
are shown, not judged); L1/shared falls back to the clock-derived 128 B/clk/SM, taken at
the SM clock the kernel ran at when the export gives it (ncu locks clocks to base unless
``--clock-control none``).
"""

from __future__ import annotations

from functools import lru_cache

from ...model.roofline.hierarchy import (
    HierarchyVerdict,
    LevelRoof,
    judge_levels,
    level_roofs,
    levels_from_bytes,
    shared_clock_limit,
)

#: Resident threads per SM when the architecture is not in the limits table: 2,048, the
#: limit of compute capability 7.0, 8.0, 9.0 and 10.0 (1,024 on 7.5, 1,536 on 8.6, 8.9 and
#: 12.0; CUDA C++ Programming Guide, technical specifications per compute capability).
DEFAULT_MAX_THREADS_PER_SM = 2048


@lru_cache(maxsize=None)
def max_threads_per_sm(compute_capability: str | None) -> int:
    """The SM's resident-thread limit for a compute capability (``specs/arch/limits.yaml``),
    else :data:`DEFAULT_MAX_THREADS_PER_SM`."""
    if not compute_capability:
        return DEFAULT_MAX_THREADS_PER_SM
    from ...errors import GpuwhyError
    from ...model.kernels.occupancy import arch_limits, load_arch_limits

    try:
        return int(arch_limits(str(compute_capability), load_arch_limits()).max_threads_per_sm)
    except (GpuwhyError, ValueError):
        return DEFAULT_MAX_THREADS_PER_SM


def level_roofs_for(sheet, ceilings, profile=None, sm_clock_hz: float | None = None) -> dict[str, LevelRoof]:
    """The roof of each level for one kernel (see the module docstring); a level without one is absent."""
    dram_kind = "measured" if ceilings.source.startswith("measured") else "spec"
    roofs = {"DRAM": LevelRoof("DRAM", ceilings.bandwidth, dram_kind, ceilings.source)}
    others = level_roofs(sheet, profile, measured=profile is not None)
    if "L2" in others:
        roofs["L2"] = others["L2"]
    l1 = others.get("L1")
    if l1 is not None and l1.kind == "clock" and sm_clock_hz and getattr(sheet, "sm_count", None):
        mhz = sm_clock_hz / 1e6
        l1 = LevelRoof("L1", shared_clock_limit(sheet.sm_count, mhz), "clock",
                       f"128 B/clk/SM x {sheet.sm_count} SMs x {mhz:,.0f} MHz (the SM clock the kernel ran at)")
    if l1 is not None:
        roofs["L1"] = l1
    return roofs


def judge_kernel_levels(memory_levels: dict, flops: float, time_s: float, roofs: dict[str, LevelRoof], peak_flops: float,
                        sheet, *, tensor: bool = False, waves: float | None = None,
                        occupancy_pct: float | None = None) -> HierarchyVerdict | None:
    """The kernel's :class:`~gpuwhy.model.roofline.hierarchy.HierarchyVerdict`, or None when no level has bytes.

    ``memory_levels`` maps ``dram``/``l2``/``l1`` to ``{"bytes": ...}`` (the kernel's
    ``memory_levels``); ``flops`` FLOPs, ``time_s`` seconds, ``peak_flops`` FLOP/s (the
    roof its verdict used); ``waves`` and ``occupancy_pct`` (achieved, percent) are ncu's,
    for the Little's-law diagnosis.
    """
    by = levels_from_bytes(*((memory_levels.get(k) or {}).get("bytes") for k in ("dram", "l2", "l1")))
    if not any(b > 0 for b in by.values()) or not time_s or time_s <= 0:
        return None
    occ = occupancy_pct / 100.0 if occupancy_pct is not None and occupancy_pct > 0 else None
    return judge_levels(by, flops, time_s, roofs, peak_flops, tensor=tensor,
                        sm_count=getattr(sheet, "sm_count", None) or None,
                        max_threads_per_sm=max_threads_per_sm(getattr(sheet, "compute_capability", None)),
                        waves=waves, achieved_occupancy=occ)


__all__ = ["DEFAULT_MAX_THREADS_PER_SM", "judge_kernel_levels", "level_roofs_for", "max_threads_per_sm"]
