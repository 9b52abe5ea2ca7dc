"""The roofline picture of one GPU of an Nsight Compute export (`gpuwhy ncu REPORT --plot FILE`):
each kernel with FLOPs drawn at its DRAM intensity, with one more marker per other memory
level it has bytes for (L2, L1), joined by a line, as Nsight Compute's hierarchical roofline
draws a kernel; labelled with gpuwhy's verdict of it (regime and share of its roof)."""

from __future__ import annotations

import dataclasses

from ..model.roofline.ceilings import DTYPES

#: Kernels drawn (the top by time): more labels do not fit beside each other on one chart.
MAX_POINTS = 5
#: Longest kernel name on the chart (longer ones end in an ellipsis; the tables have them whole).
MAX_NAME = 28
#: A level's marker is drawn when its bytes are at least this share of the DRAM bytes (a GEMM's
#: few kilobytes through L1 put a marker at 1e7 FLOP/byte that says nothing and squeezes the chart).
MIN_LEVEL_SHARE = 0.01


def _short(name: str) -> str:
    """``name`` cut to :data:`MAX_NAME` characters, keeping a telling ``<template argument>`` at its end."""
    if len(name) <= MAX_NAME:
        return name
    tail = name[name.index("<"):] if "<" in name and name.endswith(">") else ""
    if tail and len(tail) <= MAX_NAME - 5:
        return name[:MAX_NAME - len(tail) - 1] + "\u2026" + tail
    return name[:MAX_NAME - 1] + "\u2026"


def ncu_chart(device, sheet):
    """A :class:`~gpuwhy.render.plot.RooflineChart` of ``device`` (an
    :class:`~gpuwhy.importers.ncu.NcuDevice`, its top kernels) on ``sheet``.

    The top :data:`MAX_POINTS` kernels by time are drawn; kernels without FLOPs (judged
    from utilisations) or with a precision the chart has no roof for are left out, with a
    note. Labels carry the kernel's own regime and roof
    share (its peak scaled to the SM clock it ran at); the roofs are drawn at the sheet's.

    Raises:
        UsageError: no kernel of ``device`` can be drawn.
    """
    from ..errors import UsageError
    from .plot import PointSpec, build_chart

    drawn, left = [], []
    for k in device.kernels:
        if k.flops is None or not k.bytes or not k.total_time_s or k.precision not in DTYPES:
            left.append(k.name)
            continue
        if len(drawn) == MAX_POINTS:
            continue
        lv = {lvl.upper(): (k.memory_levels.get(lvl) or {}).get("bytes") for lvl in ("l2", "l1")}
        drawn.append((k, PointSpec(_short(k.name), k.flops, k.bytes, k.total_time_s, k.precision,
                                   {x: b for x, b in lv.items() if b and b >= MIN_LEVEL_SHARE * k.bytes})))
    if not drawn:
        raise UsageError(f"GPU {device.device}: no kernel has FLOPs and bytes to draw (judged from utilisations only); "
                         "drop --plot or profile with the FLOP counters (`gpuwhy ncu -- CMD` chooses them)")
    dtypes = list(dict.fromkeys(k.precision for k, _ in drawn))
    chart = build_chart(sheet, dtypes, workloads=[p for _, p in drawn],
                        title=f"gpuwhy ncu: GPU {device.device} ({sheet.name})")
    points = []
    for (k, _), w in zip(drawn, chart.workloads):
        v = dataclasses.replace(w.verdict, regime=k.regime, sol_pct=k.roof_pct,
                                bound_ratio=k.bound_ratio if k.bound_ratio is not None else w.verdict.bound_ratio)
        points.append(dataclasses.replace(w, verdict=v))
    notes = list(chart.notes)
    if left:
        notes.append(f"not drawn (no FLOP count or no roof for its precision): {', '.join(left)}")
    rest = len([k for k in device.kernels if k.name not in left]) - len(drawn)
    if rest > 0:
        notes.append(f"the top {len(drawn)} kernels by time are drawn; {rest} more are in the tables")
    if any(k.compute_peak_scale is not None for k, _ in drawn):
        notes.append("roofs at the sheet's boost clock; each label's % of SOL is at the SM clock its kernel ran at")
    return dataclasses.replace(chart, workloads=tuple(points), notes=tuple(notes))


__all__ = ["ncu_chart"]
