"""What `gpuwhy report` draws from: its inputs, the ceilings they hold, the classified points.

Pure: no CUDA, no NVML, no files, no markup. The inputs are the JSON documents gpuwhy's
commands print with ``--json`` (already parsed into dicts):

- ``probe``   -- `gpuwhy probe --json` (``kind: probe``; identity, shape, derived peaks, health, sheet);
- ``bench``   -- `gpuwhy bench --json` (``kind: bench``; the sweep rows, the ``compute`` ceilings,
  launch overhead), or a device profile (:meth:`gpuwhy.profiles.DeviceProfile.to_dict`, marked
  ``kind: profile`` by the caller: ceilings only, no sweep rows);
- ``check``   -- `gpuwhy check --json` (``kind: check``; pass/fail/skip per check);
- ``latency`` -- `gpuwhy bench --latency --json` (``kind: bench-latency``; read defensively:
  ``levels`` [{name, latency_s, cycles, first_bytes, last_bytes, edge_bytes}], ``points``,
  ``littles_law``, ``summary``);
- ``link``    -- `gpuwhy bench --link --json` (``kind: bench-link``; read defensively: a ``summary``
  line and any list of flat records is tabulated).

Units: bandwidths in GB/s = 1e9 B/s and peaks in TFLOP/s = 1e12 FLOP/s (int8: TOPS) as the
documents give them; the roofs (:class:`~gpuwhy.render.roofline_geometry.Roof`) in FLOP/s
and B/s; intensities in FLOP/byte.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

from ..units import finite, fmt_cell
from .roofline_geometry import LevelSlope, Roof

#: Sheet precisions with the words used for their ceilings, in the order tables list them.
PRECISION_WORDS = {
    "fp64": "FP64 (CUDA cores)",
    "fp64_tensor": "FP64 tensor",
    "fp32": "FP32 (CUDA cores)",
    "tf32": "TF32 tensor",
    "fp16": "FP16 tensor",
    "bf16": "BF16 tensor",
    "fp8": "FP8 tensor",
    "int8": "INT8 tensor (TOPS)",
    "fp4": "FP4 tensor",
    "fp16_nontensor": "FP16 (CUDA cores, half2)",
    "bf16_nontensor": "BF16 (CUDA cores)",
}
_ORDER = list(PRECISION_WORDS)


def precision_order(prec: str) -> int:
    """Sort key: the precisions in :data:`PRECISION_WORDS` order, unknown ones last."""
    return _ORDER.index(prec) if prec in _ORDER else 99


@dataclass(frozen=True)
class ReportPoint:
    """A workload to place on the roofline.

    Attributes:
        name: label shown next to the point.
        flops: operations, > 0.
        bytes: DRAM bytes read plus written, > 0.
        time_s: measured time in s, or None (then the point sits on the roof).
        dtype: the precision it is judged against (``bf16`` for a bf16 GEMM), or None: the
            report's ``--dtype``.
    """

    name: str
    flops: float
    bytes: float
    time_s: float | None = None
    dtype: str | None = None


@dataclass(frozen=True)
class ReportInput:
    """Everything :func:`~gpuwhy.render.report_html.render_report` draws from (all optional except ``version``).

    Attributes:
        version: the gpuwhy version writing the report.
        commands: command lines to print verbatim under "How this report was made".
        generated: when the report was written (ISO 8601), shown as given.
        probe, bench, check, latency, link: the parsed JSON documents (see the module docstring).
        sheet: a spec sheet as :meth:`gpuwhy.specs.Sheet.to_dict` gives it (``name``,
            ``memory_bandwidth_gbs``, ``peak_tflops``); without it the sheet inside
            ``probe`` (or ``bench``'s compute rows) is used.
        dtype: the precision of the roofline's main compute ceiling and of the points.
        points: workloads to classify and draw.
        inputs: (what, where) pairs naming the input files, e.g. ``("bench", "bench.json")``.
        notes: extra lines shown in the summary (e.g. a live probe of another GPU).
        run: a `gpuwhy run --json` document (``kind: run``): the run section (window, timeline
            strip, budget, fixes, top kernels; :mod:`gpuwhy.render.report_run`).
    """

    version: str
    commands: tuple[str, ...] = ()
    generated: str = ""
    probe: dict | None = None
    bench: dict | None = None
    check: dict | None = None
    latency: dict | None = None
    link: dict | None = None
    sheet: dict | None = None
    dtype: str = "fp32"
    points: tuple[ReportPoint, ...] = ()
    inputs: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = ()
    run: dict | None = None

    @property
    def only_run(self) -> bool:
        """True when the run is all there is to show (no GPU document, sheet or point): the page is the run's."""
        return self.run is not None and not any((self.probe, self.bench, self.check, self.latency, self.link, self.sheet,
                                                 self.points))


def get(d: Any, *path: Any, default: Any = None) -> Any:
    """``d[path[0]][path[1]]...`` or ``default`` when any step is missing or of the wrong type."""
    cur = d
    for key in path:
        if isinstance(cur, dict) and key in cur:
            cur = cur[key]
        elif isinstance(cur, list) and isinstance(key, int) and -len(cur) <= key < len(cur):
            cur = cur[key]
        else:
            return default
    return default if cur is None else cur


def records(v: Any) -> list[dict]:
    """The dicts in ``v`` when it is a list (anything else: none)."""
    return [x for x in v if isinstance(x, dict)] if isinstance(v, list) else []


# ---------------------------------------------------------------------------
# What the inputs say: sheet ceilings, measured ceilings
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Spec:
    """The spec sheet's ceilings: ``bandwidth_gbs`` GB/s, ``peaks`` precision -> TFLOP/s."""

    name: str
    bandwidth_gbs: float | None
    peaks: dict


@dataclass(frozen=True)
class Measured:
    """Measured ceilings: ``source`` (words), ``bandwidth_gbs`` GB/s and its kernel,
    ``peaks`` precision -> (TFLOP/s, kernel), ``launch`` event/submit/round_trip/graph -> s."""

    source: str
    date: str
    bandwidth_gbs: float | None
    bandwidth_kernel: str
    peaks: dict
    launch: dict


def first_device(doc: dict | None) -> dict:
    devs = get(doc, "devices", default=[])
    return devs[0] if isinstance(devs, list) and devs and isinstance(devs[0], dict) else {}


def spec_of(inp: ReportInput) -> Spec | None:
    """The sheet ceilings: ``inp.sheet``, else the probe's matched sheet, else what the
    bench and check documents repeat of it (bandwidth and the compute rows' sheet peaks)."""
    for sheet in (inp.sheet, get(first_device(inp.probe), "sheet")):
        if isinstance(sheet, dict) and finite(sheet.get("memory_bandwidth_gbs")):
            peaks = {k: finite(v) for k, v in (sheet.get("peak_tflops") or {}).items() if finite(v)}
            name = sheet.get("name") or sheet.get("full_sheet_name") or "spec sheet"
            return Spec(str(name), finite(sheet.get("memory_bandwidth_gbs")), peaks)
    bw = finite(get(inp.bench, "sheet", "memory_bandwidth_gbs")) or finite(get(inp.bench, "spec_bandwidth_gbs"))
    name = get(inp.bench, "sheet", "name") or get(inp.bench, "sheet")
    peaks: dict = {}
    for row in records(get(inp.bench, "compute", default=[])):
        if row.get("sheet_key") and finite(row.get("sheet_peak_tflops")):
            peaks[str(row["sheet_key"])] = finite(row["sheet_peak_tflops"])
    obs = get(inp.check, "observations", 0, default={})
    if bw is None and isinstance(obs, dict):
        bw = finite(obs.get("sheet_bandwidth_gbs"))
        name = name or obs.get("sheet")
        if finite(obs.get("sheet_fp32_tflops")):
            peaks.setdefault("fp32", finite(obs["sheet_fp32_tflops"]))
        if finite(obs.get("sheet_tensor_tflops")) and obs.get("tensor_precision"):
            peaks.setdefault(str(obs["tensor_precision"]), finite(obs["sheet_tensor_tflops"]))
    if bw is None:
        return None
    return Spec(str(name) if isinstance(name, str) else "spec sheet", bw, peaks)


def _launch(d: dict, keys: Sequence[str]) -> dict:
    return {k: finite(d.get(key)) for k, key in zip(("event", "submit", "round_trip", "graph"), keys)}


def measured_of(inp: ReportInput) -> Measured | None:
    """The measured ceilings: from a bench document, a profile, or (last) a check's observations."""
    b = inp.bench
    if isinstance(b, dict) and b.get("kind") == "profile":
        return Measured(
            source=f"bench profile {b.get('date', '')}".strip(),
            date=str(b.get("date", "")),
            bandwidth_gbs=finite(b.get("dram_bandwidth_gbs")),
            bandwidth_kernel=str(b.get("dram_kernel") or ""),
            peaks={k: (finite(v), "") for k, v in (b.get("peak_tflops_measured") or {}).items() if finite(v)},
            launch=_launch(b, ("launch_overhead_s", "launch_submit_s", "launch_round_trip_s", "launch_graph_per_kernel_s")),
        )
    if isinstance(b, dict):
        peaks: dict = {}
        for row in b.get("compute") or []:
            if not isinstance(row, dict) or row.get("status") != "measured":
                continue
            t = finite(row.get("tflops"))
            p = str(row.get("precision", ""))
            if t and (p not in peaks or t > peaks[p][0]):
                peaks[p] = (t, str(row.get("kernel", "")))
        dtype = b.get("dtype")
        kernel = str(b.get("sustained_dram_kernel") or "")
        return Measured(
            source=f"gpuwhy bench{' --' + b['mode'] if isinstance(b.get('mode'), str) else ''} {b.get('date', '')}".strip(),
            date=str(b.get("date", "")),
            bandwidth_gbs=finite(b.get("sustained_dram_gbs")),
            bandwidth_kernel=f"{kernel} {dtype}".strip() if kernel else "",
            peaks=peaks,
            launch=_launch(b.get("launch_overhead") or {}, ("event_s", "submit_s", "round_trip_s", "graph_per_kernel_s")),
        )
    obs = get(inp.check, "observations", 0, default=None)
    if isinstance(obs, dict):
        peaks = {}
        if finite(obs.get("fp32_tflops")):
            peaks["fp32"] = (finite(obs["fp32_tflops"]), "check fp32_fma")
        if finite(obs.get("tensor_tflops")) and obs.get("tensor_precision"):
            peaks[str(obs["tensor_precision"])] = (finite(obs["tensor_tflops"]), "check tensor")
        lo = finite(obs.get("launch_overhead_us"))
        return Measured(
            source="gpuwhy check", date="", bandwidth_gbs=finite(obs.get("dram_bandwidth_gbs")), bandwidth_kernel="",
            peaks=peaks, launch={"event": None if lo is None else lo * 1e-6},
        )
    return None


def gpu_name(inp: ReportInput, spec: Spec | None) -> str:
    """The GPU's name from the probe, bench or check document, else the sheet's, else ``GPU``."""
    for v in (
        get(first_device(inp.probe), "identity", "name"),
        get(inp.bench, "device", "name"),
        get(inp.bench, "name"),
        get(inp.check, "devices", 0, "device"),
        spec.name if spec else None,
    ):
        if isinstance(v, str) and v:
            return v
    return "GPU"


# ---------------------------------------------------------------------------
# Classified points, roofs
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PlacedPoint:
    """A :class:`ReportPoint` with its verdict (``verdict`` is a
    :class:`gpuwhy.model.roofline.classify.Verdict`)."""

    point: ReportPoint
    verdict: Any

    @property
    def label(self) -> str:
        """``name: memory-bound (12x)`` and the speed of light when timed."""
        v = self.verdict
        ratio = f" ({v.bound_ratio:.0f}x)" if math.isfinite(v.bound_ratio) and v.bound_ratio >= 1.5 else ""
        sol = f", {fmt_cell(v.sol_pct)}% SOL" if v.sol_pct is not None else ""
        return f"{self.point.name}: {v.regime}-bound{ratio}{sol}"

    @property
    def above_roof(self) -> str | None:
        """The loud warning of a timed point above 100% of its roof (no kernel beats its roof: a count,
        the time, the precision or the GPU is wrong), or None. The terminal, the page and ``--json``
        all say it (:func:`gpuwhy.render.report_file.write_report_file`); the words are
        :func:`gpuwhy.model.roofline.limits.above_roof`'s."""
        from ..model.roofline.limits import above_roof

        return above_roof(self.point.name, self.verdict)


def point_ceilings(inp: ReportInput, spec: Spec | None, meas: Measured | None, precision: str | None = None):
    """The :class:`~gpuwhy.model.roofline.classify.Ceilings` points of ``precision`` (default
    ``inp.dtype``) are classified against: measured bandwidth and launch overhead where known, the
    measured peak for that precision where known, the sheet's otherwise. None without any bandwidth
    and peak."""
    from ..model.roofline.classify import DEFAULT_LAUNCH_OVERHEAD_S, DEFAULT_LAUNCH_OVERHEAD_SOURCE, Ceilings

    prec = precision or inp.dtype
    bw = meas.bandwidth_gbs if meas and meas.bandwidth_gbs else (spec.bandwidth_gbs if spec else None)
    peak = meas.peaks[prec][0] if meas and prec in meas.peaks else (spec.peaks.get(prec) if spec else None)
    if not bw or not peak:
        return None
    bw_src = "measured" if meas and meas.bandwidth_gbs else "sheet"
    peak_src = "measured" if meas and prec in meas.peaks else "sheet"
    lo = meas.launch.get("event") if meas else None
    return Ceilings(
        peak_flops=peak * 1e12,
        bandwidth=bw * 1e9,
        launch_overhead_s=lo if lo else DEFAULT_LAUNCH_OVERHEAD_S,
        precision=prec,
        gpu=spec.name if spec else "GPU",
        source=f"{bw_src} bandwidth, {peak_src} {prec} peak",
        launch_overhead_source=f"measured, event-timed ({meas.source})" if lo else DEFAULT_LAUNCH_OVERHEAD_SOURCE,
    )


def point_precisions(inp: ReportInput) -> list[str]:
    """The precisions the points are judged against: ``inp.dtype`` for a point without its own
    DTYPE, in the order the points give them."""
    out: list[str] = []
    for p in inp.points:
        d = p.dtype or inp.dtype
        if d not in out:
            out.append(d)
    return out


def ceilings_by_precision(inp: ReportInput, spec: Spec | None, meas: Measured | None) -> dict:
    """``{precision: Ceilings or None}`` for every precision a point is judged against (:func:`point_ceilings`)."""
    return {d: point_ceilings(inp, spec, meas, d) for d in point_precisions(inp)}


def place_points(points: Sequence[ReportPoint], ceilings, default_dtype: str = "fp32") -> list[PlacedPoint]:
    """Classify every point (see :func:`gpuwhy.model.roofline.classify.classify`) against ``ceilings``:
    one :class:`~gpuwhy.model.roofline.classify.Ceilings` for all, or ``{precision: Ceilings}``
    (:func:`ceilings_by_precision`), a point taking its own ``dtype``'s, else ``default_dtype``'s.

    Raises:
        ValueError: a point with non-positive FLOPs, bytes or time.
        KeyError: a mapping without a point's precision.
    """
    from ..model.roofline.classify import Workload, classify

    out = []
    for p in points:
        c = ceilings[p.dtype or default_dtype] if isinstance(ceilings, dict) else ceilings
        w = Workload(flops=p.flops, bytes=p.bytes, time_s=p.time_s, name=p.name)
        out.append(PlacedPoint(p, classify(w, c)))
    return out


def roof_precisions(inp: ReportInput) -> list[str]:
    """The precisions the roofline draws: ``inp.dtype``, those the points are judged against, then
    FP32 when that is another one (their colour slots, whether or not a roof of each is known)."""
    out = [inp.dtype] + [d for d in point_precisions(inp) if d != inp.dtype]
    return out + (["fp32"] if "fp32" not in out else [])


def roofs_for(inp: ReportInput, spec: Spec | None, meas: Measured | None) -> list[Roof]:
    """The roofs to draw (:func:`roof_precisions`), each as the sheet's (``spec``, dashed)
    and the measured (solid) where known."""
    roofs: list[Roof] = []
    for prec in roof_precisions(inp):
        if spec and spec.bandwidth_gbs and spec.peaks.get(prec):
            roofs.append(Roof(prec, "spec", spec.peaks[prec] * 1e12, spec.bandwidth_gbs * 1e9, f"{spec.name} sheet"))
        if meas and prec in meas.peaks:
            bw = meas.bandwidth_gbs or (spec.bandwidth_gbs if spec else None)
            if bw:
                roofs.append(Roof(prec, "measured", meas.peaks[prec][0] * 1e12, bw * 1e9, meas.source))
    return roofs


def slopes_for(inp: ReportInput) -> list[LevelSlope]:
    """The L2 and L1/shared slopes to draw: the sheet's published L2 figure and its
    clock-derived shared-memory limit (128 B/clk/SM x SMs x boost clock), dashed; the
    measured cache ceilings of a profile or a ``bench --sweep`` document (``caches``), solid."""
    from ..model.roofline.hierarchy import shared_clock_limit

    out: list[LevelSlope] = []
    shape = get(first_device(inp.probe), "shape", default={})
    for sheet in (inp.sheet, get(first_device(inp.probe), "sheet")):
        if not isinstance(sheet, dict):
            continue
        if finite(sheet.get("l2_bandwidth_gbs")):
            out.append(LevelSlope("L2", "spec", finite(sheet["l2_bandwidth_gbs"]) * 1e9, f"{sheet.get('name', '')} sheet"))
        break
    sheet = inp.sheet if isinstance(inp.sheet, dict) else {}
    sms = finite(sheet.get("sm_count")) or finite(get(shape, "sm_count"))
    clk = finite(sheet.get("boost_clock_mhz")) or finite(get(shape, "boost_clock_mhz"))
    if sms and clk and sms >= 1:
        out.append(LevelSlope("L1", "clock", shared_clock_limit(int(sms), clk), "128 B/clk/SM x SMs x boost clock"))
    b = inp.bench
    l2 = sh = None
    if isinstance(b, dict) and b.get("kind") == "profile":
        l2, sh = finite(b.get("l2_read_bandwidth_gbs")), finite(b.get("shared_bandwidth_gbs"))
    elif isinstance(b, dict):
        l2, sh = finite(get(b, "caches", "best_gbs", "L2_read")), finite(get(b, "caches", "best_gbs", "shared_read"))
    if l2:
        out.append(LevelSlope("L2", "measured", l2 * 1e9, "measured by gpuwhy bench"))
    if sh:
        out.append(LevelSlope("L1", "measured", sh * 1e9, "shared memory, measured by gpuwhy bench"))
    return out


def roof_name(r: Roof) -> str:
    """The report's name of a roof: ``bf16 sheet``, ``bf16 measured``."""
    return f"{r.precision} {'measured' if r.measured else 'sheet'}"


def sweep_points(inp: ReportInput) -> list[tuple[float, float]]:
    """(FLOP/byte, FLOP/s) of a profile's mixed-intensity sweep for ``inp.dtype`` (a bench
    document's sweep rows are memory kernels, not drawn)."""
    pts = get(inp.bench, "roofline_points", inp.dtype, default=[]) if get(inp.bench, "kind") == "profile" else []
    out = []
    for p in pts or []:
        if isinstance(p, (list, tuple)) and len(p) == 2 and finite(p[0]) and finite(p[1]):
            out.append((finite(p[0]), finite(p[1])))
    return out
