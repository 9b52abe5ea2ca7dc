"""The verdict engine's reading of an Nsight Compute export: what the kernels wait for.

ncu replays kernels one at a time and records no timeline, so the window is the profiled kernels'
own time (no idle time is known): the time budget splits it by regime (compute-, memory- at a
level, latency-, issue-bound, launch-sized, not classifiable) and every remedy's "at most" is
Amdahl over that kernel time, the same engine `gpuwhy trace` and `gpuwhy run` ask
(:func:`gpuwhy.verdict.engine.diagnose`).
"""

from __future__ import annotations

from typing import Iterable, Mapping

from ...verdict.engine import Diagnosis, diagnose
from ...verdict.figures import KernelFigure, WindowFigures
from ..timeline.kinds import kernel_kind


#: What the window of an ncu pass is, in the verdict's words.
SCOPE = "the kernel time (ncu records no idle time)"


def kernel_figure(k) -> KernelFigure | None:
    """The engine's figure of one judged kernel name (an :class:`~gpuwhy.importers.ncu.analyse.NcuKernel`):
    its time, launches, regime, share of its roof at the deciding level and FLOPs summed over its
    launches; None when ncu recorded no time for it."""
    if not k.total_time_s or k.total_time_s <= 0 or not k.launches:
        return None
    mean = k.mean_time_s if k.mean_time_s else k.total_time_s / k.launches
    return KernelFigure(k.full_name, float(k.total_time_s), int(k.launches), float(mean), kernel_kind(k.full_name),
                        k.regime, k.roof_pct, k.deciding_level, k.flops, k.precision)


def sheet_peaks(sheet) -> dict[str, float]:
    """Dense FLOP/s per precision of ``sheet`` (its ``peak_tflops``, TFLOP/s x 1e12), for the lower-precision remedy."""
    return {p: float(v) * 1e12 for p, v in (sheet.peak_tflops or {}).items() if v}


def diagnose_kernels(kernels: Iterable, peaks: Mapping[str, float]) -> Diagnosis | None:
    """The diagnosis of one GPU's kernels (every judged :class:`~gpuwhy.importers.ncu.analyse.NcuKernel`
    name, not only the top ones; ``peaks``: dense FLOP/s per precision, :func:`sheet_peaks`): the
    window is their summed time (s), idle time unknown. None when no kernel has a time."""
    figs = tuple(f for f in (kernel_figure(k) for k in kernels) if f is not None)
    total = sum(f.total_s for f in figs)
    if not figs or not total > 0:
        return None
    return diagnose(WindowFigures(window_s=total, idle={}, kernels=figs, peaks=dict(peaks), scope=SCOPE,
                                  idle_known=False))


__all__ = ["diagnose_kernels", "kernel_figure", "sheet_peaks"]
