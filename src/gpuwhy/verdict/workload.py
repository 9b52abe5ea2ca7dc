"""The verdict engine's reading of one classified workload (`gpuwhy classify`, :func:`gpuwhy.measure`).

A workload with a measured time is one kernel (or group of launches) whose time is the whole window:
no idle time is known, the budget is that time in the share of its regime, and every remedy's "at
most" is Amdahl over it, the same engine `gpuwhy trace`, `run` and `ncu` ask
(:func:`gpuwhy.verdict.engine.diagnose`). Without a measured time there is nothing to budget.
"""

from __future__ import annotations

from typing import Mapping

from .engine import Diagnosis, diagnose
from .figures import KernelFigure, WindowFigures

#: What the window of a classified workload is, in the verdict's words.
SCOPE = "the workload's measured time"


def workload_figure(verdict, *, name: str, precision: str, level: str | None) -> KernelFigure | None:
    """The engine's figure of a classified workload (a :class:`~gpuwhy.model.roofline.classify.Verdict`
    with its measured time, s): its regime, its speed of light at the deciding roof (``sol_pct``, 0-100),
    the memory ``level`` judged, FLOPs over all launches and ``precision``; None without a time."""
    w = verdict.workload
    if w.time_s is None or not w.time_s > 0:
        return None
    launches = max(int(w.launches), 1)
    return KernelFigure(name, float(w.time_s), launches, float(w.time_s) / launches, "other", verdict.regime,
                        verdict.sol_pct, level if verdict.regime == "memory" else
                        ("compute" if verdict.regime == "compute" else None), w.flops, precision)


def diagnose_workload(verdict, peaks: Mapping[str, float], *, name: str, precision: str,
                      level: str | None = None) -> Diagnosis | None:
    """The diagnosis of one classified workload (``peaks``: dense FLOP/s per precision, for the
    lower-precision remedy); None without a measured time."""
    fig = workload_figure(verdict, name=name, precision=precision, level=level)
    if fig is None:
        return None
    return diagnose(WindowFigures(window_s=fig.total_s, idle={}, kernels=(fig,), peaks=dict(peaks), scope=SCOPE,
                                  idle_known=False))


__all__ = ["SCOPE", "diagnose_workload", "workload_figure"]
