"""What a roofline drawing shows, built from a spec sheet, a device profile, a classification
or a fresh mixed-intensity sweep: :class:`RooflineChart` (roofs, other memory levels' slopes,
sweep series, the user's workloads with their verdicts, notes), the one input of every
drawing of :mod:`gpuwhy.render.plot` and of ``gpuwhy roofline --json``.

Pure (no I/O, no drawing): rates in FLOP/s, bandwidths in B/s, intensities in FLOP/byte.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from ..units import fmt_num, fmt_pct
from .roofline_geometry import LEVEL_WORDS, Frame, LevelSlope, Roof, drawn_at, rate_unit


@dataclass(frozen=True)
class SweepSeries:
    """Measured points of one mixed-intensity sweep (from a profile or a fresh run).

    ``points`` are (FLOP/byte, achieved FLOP/s); ``ridge`` the empirical ridge (FLOP/byte) or None;
    ``precision`` the roof it belongs to (``fp32``, ``fp16_nontensor``, ...).
    """

    dtype: str
    precision: str
    points: tuple[tuple[float, float], ...]
    ridge: float | None = None
    source: str = ""

    def to_dict(self) -> dict:
        return {"dtype": self.dtype, "precision": self.precision, "ridge": self.ridge, "source": self.source,
                "points": [{"intensity": i, "achieved_tflops": f / 1e12} for i, f in self.points]}


@dataclass(frozen=True)
class WorkloadPoint:
    """A user's workload on the chart with its verdict.

    ``verdict`` is a :class:`~gpuwhy.model.roofline.classify.Verdict`; the point sits at its
    achieved FLOP/s when a time was given, else on the roof (attainable).
    """

    name: str
    verdict: object
    #: ``(level, FLOP/byte)`` of the same kernel at other memory levels (Nsight Compute's
    #: bytes per level); drawn as markers at the same rate, joined by a line.
    levels: tuple[tuple[str, float], ...] = ()

    @property
    def intensity(self) -> float:
        return self.verdict.arithmetic_intensity

    @property
    def flops(self) -> float:
        """FLOP/s where it is drawn (:func:`~gpuwhy.render.roofline_geometry.drawn_at`)."""
        return drawn_at(self.verdict)

    @property
    def on_roof(self) -> bool:
        """True when drawn at the attainable rate (no measured time)."""
        return not self.verdict.achieved_flops

    @property
    def label(self) -> str:
        """``NAME: memory-bound (92x), 71% of SOL``."""
        v = self.verdict
        plain = v.regime in ("compute", "memory", "overhead")
        ratio = f" ({fmt_num(v.bound_ratio)}x)" if math.isfinite(v.bound_ratio) and plain else ""
        text = f"{self.name}: {v.regime}-bound{ratio}"
        if v.sol_pct is not None:
            level = getattr(v.ceilings, "level", "DRAM")
            text += f", {fmt_pct(v.sol_pct, 0)} of SOL" + (f" ({LEVEL_WORDS.get(level, level)})" if level != "DRAM" else "")
        return text

    def to_dict(self) -> dict:
        d = self.verdict.to_dict()
        d["name"] = self.name
        d["levels"] = [{"level": lv, "intensity": i} for lv, i in self.levels]
        d["label"] = self.label
        d["drawn_at_tflops"] = self.flops / 1e12
        return d


@dataclass(frozen=True)
class RooflineChart:
    """Everything one roofline drawing shows (the same data feeds the text, the file and ``--json``).

    Attributes:
        gpu: the sheet's name.
        roofs: spec and measured roofs.
        sweeps: mixed-intensity sweep series.
        workloads: the user's points with their verdicts.
        notes: what fell back to what.
        title: the drawing's title.
    """

    gpu: str
    roofs: tuple[Roof, ...]
    sweeps: tuple[SweepSeries, ...] = ()
    workloads: tuple[WorkloadPoint, ...] = ()
    notes: tuple[str, ...] = ()
    title: str = ""
    #: The other memory levels' roofs (:class:`~gpuwhy.render.roofline_geometry.LevelSlope`).
    slopes: tuple[LevelSlope, ...] = ()

    def to_dict(self) -> dict:
        return {
            "gpu": self.gpu,
            "title": self.title,
            "roofs": [r.to_dict() for r in self.roofs],
            "slopes": [s.to_dict() for s in self.slopes],
            "sweeps": [s.to_dict() for s in self.sweeps],
            "workloads": [w.to_dict() for w in self.workloads],
            "notes": list(self.notes),
        }

    @property
    def unit(self) -> str:
        """The y unit of the drawings: the first roof's (FLOP/s; OP/s for integer precisions)."""
        return rate_unit(self.roofs[0].precision) if self.roofs else "FLOP/s"

    def frame(self, labelled: bool = False) -> Frame:
        """Axis extents covering every roof, workload, sweep point and empirical ridge:
        whole decades (the terminal), or with room for labels inside the plot (``labelled``, files).

        Raises:
            ValueError: ``labelled`` without any roof.
        """
        xs = [w.intensity for w in self.workloads] + [i for s in self.sweeps for i, _ in s.points]
        xs += [i for w in self.workloads for _, i in w.levels]
        xs += [s.ridge for s in self.sweeps if s.ridge]
        ys = [w.flops for w in self.workloads] + [f for s in self.sweeps for _, f in s.points]
        if not labelled:
            return Frame.compact(self.roofs, xs, ys)
        ys += [w.verdict.attainable_flops for w in self.workloads]
        return Frame.labelled(self.roofs, [x for x in xs if x > 0], [y for y in ys if y > 0])


def ceiling_key(dtype: str, tensor_cores: bool = True) -> str:
    """The ``peak_tflops`` key bounding ``dtype`` work (as :func:`~gpuwhy.model.roofline.ceilings.sheet_precision`,
    without needing a sheet that lists it).

    Raises:
        UsageError: an unknown dtype, or a tensor-only type with ``tensor_cores=False``.
    """
    from ..errors import UsageError
    from ..model.roofline.ceilings import DTYPES

    d = str(dtype).lower().strip()
    if d not in DTYPES:
        raise UsageError(f"unknown dtype {dtype!r}; use one of: {', '.join(DTYPES)}")
    if not tensor_cores:
        if d in ("fp8", "int8", "fp4", "fp64_tensor"):
            raise UsageError(f"{d} runs only on tensor cores; drop --no-tensor-cores or pick fp32/fp16/bf16")
        d = {"tf32": "fp32", "fp16": "fp16_nontensor", "bf16": "bf16_nontensor"}.get(d, d)
    return d


@dataclass(frozen=True)
class PointSpec:
    """A workload to place on a chart: FLOPs, bytes (DRAM), time (s, or None), its precision
    (``dtype``; None: the chart's first) and, for an Nsight Compute kernel, ``level_bytes``
    (``{"L2": ..., "L1": ...}``: bytes through the other memory levels)."""

    name: str
    flops: float
    bytes: float
    time_s: float | None = None
    dtype: str | None = None
    level_bytes: dict | None = None


def _point(w) -> PointSpec:
    if isinstance(w, PointSpec):
        return w
    w = tuple(w)
    return PointSpec(w[0], w[1], w[2], w[3] if len(w) > 3 else None, w[4] if len(w) > 4 else None)


def chart_slopes(sheet, profile=None) -> list[LevelSlope]:
    """The L2 and L1/shared slopes to draw: the sheet's published L2 figure and the
    clock-derived shared-memory limit (dashed), and the profile's measured ones (solid)
    (:func:`gpuwhy.model.roofline.hierarchy.level_roofs`; a level with no figure is left out)."""
    from ..model.roofline.hierarchy import level_roofs

    out: list[LevelSlope] = []
    for prof in (None, profile):
        if prof is None and out:
            continue
        roofs = level_roofs(sheet, prof, measured=prof is not None)
        for lv in ("L2", "L1"):
            r = roofs.get(lv)
            if r is not None and (prof is None or r.kind == "measured"):
                out.append(LevelSlope(lv, r.kind, r.bandwidth, r.source))
    return out


def build_chart(sheet, dtypes: Sequence[str] = ("fp32",), *, tensor_cores: bool = True, profile=None,
                workloads: Sequence = (), launch_overhead_s: float | None = None,
                title: str = "", levels: bool = True) -> RooflineChart:
    """The roofline of ``sheet`` for ``dtypes``, with measured roofs from ``profile`` and workload points.

    Args:
        sheet: a :class:`~gpuwhy.specs.Sheet`.
        dtypes: ``--dtype`` values; the first one classifies the workloads.
        tensor_cores: False for CUDA-core ceilings (tf32 -> fp32, fp16 -> fp16_nontensor, ...).
        profile: a :class:`~gpuwhy.profiles.DeviceProfile` or None. With it, each dtype
            gets a measured roof (measured bandwidth; measured peak where the profile
            has one, else the sheet's, with a note), and the profile's sweep series
            whose roof is drawn are added.
        workloads: :class:`PointSpec` or ``(name, FLOPs, bytes, time in s or None[, dtype])``;
            each is classified (one launch) against the roof of its own precision (its
            ``dtype``, else the first of ``dtypes``; added to the drawing when missing):
            the measured roof when there is one, else the spec roof.
        launch_overhead_s: per-launch overhead for the verdicts (default: the
            profile's measured figure, else gpuwhy's default).
        levels: draw the L2 and L1/shared slopes (:func:`chart_slopes`).

    Raises:
        UsageError: a dtype without any ceiling (neither on the sheet nor measured),
            bad workload figures, a profile without DRAM bandwidth.
    """
    from ..errors import UsageError
    from ..model.roofline.classify import (
        DEFAULT_LAUNCH_OVERHEAD_S,
        DEFAULT_LAUNCH_OVERHEAD_SOURCE,
        Ceilings,
        Workload,
        classify,
    )

    notes: list[str] = []
    roofs: list[Roof] = []
    keys: list[str] = []
    points = [_point(w) for w in workloads]
    for d in list(dtypes) + [p.dtype for p in points if p.dtype]:
        k = ceiling_key(d, tensor_cores)
        if k not in keys:
            keys.append(k)
    if profile is not None and not getattr(profile, "dram_bandwidth_gbs", None):
        raise UsageError(f"the bench profile of the {sheet.name} ({profile.date}) has no DRAM bandwidth; "
                         "run `gpuwhy bench --quick` on that GPU")
    measured_peaks = (getattr(profile, "peak_tflops_measured", None) or {}) if profile is not None else {}
    for k in keys:
        spec = None
        if k in sheet.peak_tflops:
            spec = Roof(k, "spec", sheet.peak_flops(k), sheet.bandwidth_bytes_per_s, f"{sheet.name}, {sheet.origin_words}")
            roofs.append(spec)
        if profile is not None:
            bw = profile.dram_bandwidth_gbs * 1e9
            if measured_peaks.get(k):
                roofs.append(Roof(k, "measured", measured_peaks[k] * 1e12, bw,
                                  f"bench profile {profile.date} ({profile.name})"))
            elif spec is not None:
                roofs.append(Roof(k, "measured", spec.peak_flops, bw,
                                  f"bench profile {profile.date}: measured bandwidth, sheet {k} peak"))
                notes.append(f"the profile has no measured {k} peak (run `gpuwhy bench --compute`); "
                             "its measured roof uses the sheet's dense peak")
        if not any(r.precision == k for r in roofs):
            from ..model.roofline.ceilings import missing_peak

            raise missing_peak(sheet, k, " and no measured one")
    sweeps: list[SweepSeries] = []
    if profile is not None:
        from ..model.roofline.intensity_sweep import CEILING_KEY

        pts = getattr(profile, "roofline_points", None) or {}
        ridges = getattr(profile, "roofline_ridge", None) or {}
        for d, series in pts.items():
            prec = CEILING_KEY.get(d, d)
            clean = tuple((float(i), float(f)) for i, f in series if i and f and i > 0 and f > 0)
            if not clean:
                continue
            if prec not in keys:
                notes.append(f"the profile's {d} sweep is bounded by the {prec} roof, not drawn; "
                             f"add --dtype {d}{' --no-tensor-cores' if prec.endswith('_nontensor') else ''} to show it")
                continue
            sweeps.append(SweepSeries(d, prec, clean, ridges.get(d),
                                      f"gpuwhy bench --roofline {getattr(profile, 'roofline_date', None) or profile.date}"))
    wl: list[WorkloadPoint] = []
    if points:
        from ..model.roofline.limits import above_roof
        from ..notices import warn

        if launch_overhead_s is not None:
            lo, lo_src = launch_overhead_s, "--launch-overhead"
        elif profile is not None and getattr(profile, "launch_overhead_s", None):
            lo, lo_src = profile.launch_overhead_s, f"measured, event-timed ({profile.date})"
        else:
            lo, lo_src = DEFAULT_LAUNCH_OVERHEAD_S, DEFAULT_LAUNCH_OVERHEAD_SOURCE
        for p in points:
            prec = ceiling_key(p.dtype, tensor_cores) if p.dtype else keys[0]
            roof = next((r for r in roofs if r.precision == prec and r.kind == "measured"), None) or \
                next(r for r in roofs if r.precision == prec)
            ce = Ceilings(peak_flops=roof.peak_flops, bandwidth=roof.bandwidth, launch_overhead_s=lo, precision=prec,
                          gpu=sheet.name, source=roof.source, launch_overhead_source=lo_src)
            try:
                v = classify(Workload(flops=p.flops, bytes=p.bytes, launches=1, time_s=p.time_s, name=p.name), ce)
            except ValueError as exc:
                raise UsageError(f"cannot classify point {p.name!r}: {exc}") from None
            lv = tuple((k, p.flops / b) for k, b in (p.level_bytes or {}).items() if b and b > 0 and k != "DRAM")
            name = f"{p.name} ({prec})" if prec != keys[0] else p.name
            loud = above_roof(p.name, v)
            if loud:  # on stderr in every format, as report's points
                warn(loud)
            wl.append(WorkloadPoint(name, v, lv))
        if any(w.on_roof for w in wl):
            notes.append("points without a time are drawn on the roof (attainable FLOP/s); give NAME:FLOPS:BYTES:TIME "
                         "to place them at their achieved rate")
    slopes = tuple(chart_slopes(sheet, profile)) if levels else ()
    if levels and not any(sl.level == "L2" for sl in slopes):
        from ..model.roofline.hierarchy import how_to_measure_l2

        notes.append(how_to_measure_l2(sheet.name) + "; no L2 slope is drawn")
    return RooflineChart(gpu=sheet.name, roofs=tuple(roofs), sweeps=tuple(sweeps), workloads=tuple(wl),
                         notes=tuple(notes), title=title or f"roofline: {sheet.name}", slopes=slopes)


def chart_from_classification(c) -> RooflineChart:
    """The chart of a :class:`~gpuwhy.api.classify.Classification`: the sheet's roof for the
    precision (dashed), the measured one when the verdict used measured ceilings (solid),
    and the workload labelled with its verdict."""
    v = c.verdict
    ce = v.ceilings
    roofs = []
    sheet = c.sheet
    h = getattr(c, "hierarchy", None)
    dram_bw = h.dram_roof if h is not None and h.dram_roof else ce.bandwidth  # ce holds the L2's when judged there
    if ce.precision in sheet.peak_tflops:
        roofs.append(Roof(ce.precision, "spec", sheet.peak_flops(ce.precision), sheet.bandwidth_bytes_per_s,
                          f"{sheet.name} sheet"))
    measured = getattr(c, "spec_ridge_point", None) is not None
    if measured or not roofs:
        roofs.append(Roof(ce.precision, "measured" if measured else "spec", ce.peak_flops, dram_bw, ce.source))
    slopes = chart_slopes(sheet)
    if h is not None and h.roof is not None and h.level == "L2" and h.roof.kind == "measured":
        slopes.append(LevelSlope("L2", "measured", h.roof.bandwidth, h.roof.source))
    name = v.workload.name or "workload"
    return RooflineChart(gpu=ce.gpu, roofs=tuple(roofs), workloads=(WorkloadPoint(name, v),),
                         notes=tuple(getattr(c, "notes", ()) or ()), title=f"gpuwhy classify: {name} on {ce.gpu}",
                         slopes=tuple(slopes))


def chart_from_sweep(sweep, sheet=None) -> RooflineChart:
    """A chart of a fresh :class:`~gpuwhy.bench.intensity.RooflineSweep`: per curve the
    ceilings it was judged against (solid when measured, dashed when from the sheet), the
    sheet's roof (dashed) when the curve used measured ones, and its points."""
    roofs: list[Roof] = []
    sweeps: list[SweepSeries] = []
    for c in sweep.curves:
        measured = "measured" in c.peak_source or "measured" in c.bandwidth_source
        if sheet is not None and c.ceiling_key in sheet.peak_tflops and measured:
            roofs.append(Roof(c.ceiling_key, "spec", sheet.peak_flops(c.ceiling_key), sheet.bandwidth_bytes_per_s,
                              f"{sheet.name} sheet"))
        if c.peak_flops and c.bandwidth:
            roofs.append(Roof(c.ceiling_key, "measured" if measured else "spec", c.peak_flops, c.bandwidth,
                              f"peak: {c.peak_source}; bandwidth: {c.bandwidth_source}"))
        sweeps.append(SweepSeries(c.dtype, c.ceiling_key, tuple((p.intensity, p.achieved_flops) for p in c.points),
                                  c.fit.ridge, "this run"))
    name = getattr(sweep.device, "name", "GPU")
    return RooflineChart(gpu=sweep.sheet_name or name, roofs=tuple(roofs), sweeps=tuple(sweeps),
                         title=f"measured roofline: {name}")
