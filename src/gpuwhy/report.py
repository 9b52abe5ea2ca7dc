"""The shareable report of `gpuwhy report`: data in, one self-contained HTML string out.

Pure: no CUDA, no NVML, no files. The inputs are the JSON documents gpuwhy's
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

Every section whose input is missing says "not measured" instead. The roofline
is an inline SVG drawn here (log-log axes with decade ticks; sheet ceilings
dashed, measured ceilings solid, ridge points marked, the user's points
labelled with their verdict from :func:`gpuwhy.model.roofline.classify`).
The page needs no network: styles are inline, there is no script, and nothing
is loaded from a URL. Every piece of text from the inputs is escaped with
:func:`html.escape`.

Units: GB/s = 1e9 B/s, TFLOP/s = 1e12 FLOP/s (int8: TOPS), times in s formatted
with :func:`gpuwhy.units.fmt_time`, intensities in FLOP/byte.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from .units import fmt_bytes, fmt_si, fmt_time

#: The start of the tag every gpuwhy report carries; `gpuwhy report` replaces an
#: existing --out file only when it finds this in it.
GENERATOR_MARK = '<meta name="generator" content="gpuwhy'

#: Sheet precisions with the words used for their ceilings.
_PRECISION_WORDS = {
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
_ORDER = list(_PRECISION_WORDS)


@dataclass(frozen=True)
class ReportPoint:
    """A workload to place on the roofline.

    Attributes:
        name: label shown next to the point.
        flops: operations, > 0.
        bytes: DRAM bytes read plus written, > 0.
        time_s: measured time in s, or None (then the point sits on the roof).
    """

    name: str
    flops: float
    bytes: float
    time_s: float | None = None


@dataclass(frozen=True)
class ReportInput:
    """Everything :func:`render_report` draws from (all optional except ``version``).

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


# ---------------------------------------------------------------------------------
# Small helpers: escaping, defensive access, number formatting
# ---------------------------------------------------------------------------------


def esc(value: Any) -> str:
    """``value`` as escaped HTML text (None is ``n/a``)."""
    if value is None:
        return "n/a"
    return html.escape(str(value), quote=True)


def _get(d: Any, *path: Any, default: Any = None) -> Any:
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


def _f(v: Any) -> float | None:
    """A finite float, or None for anything else (strings, bools, NaN, missing)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    v = float(v)
    return v if math.isfinite(v) else None


def num(v: Any, digits: int = 3) -> str:
    """A rate or count for a table: about ``digits`` significant figures, thousands
    separated (``4,598``, ``862``, ``66.1``, ``3.36``); ``n/a`` for a non-number."""
    x = _f(v)
    if x is None:
        return "n/a"
    a = abs(x)
    if a == 0:
        return "0"
    if a >= 10 ** (digits - 1):
        return f"{x:,.0f}"
    if a < 10 ** -(digits):
        return f"{x:.{digits - 1}e}"
    decimals = digits - 1 - int(math.floor(math.log10(a)))
    return f"{x:,.{max(decimals, 0)}f}"


def pct(v: Any) -> str:
    x = _f(v)
    return "n/a" if x is None else f"{x:.1f}%"


def _count(v: Any) -> str:
    x = _f(v)
    if x is None:
        return "n/a"
    n = int(x)
    if n >= 1024 and n & (n - 1) == 0:
        return f"2^{n.bit_length() - 1}"
    return f"{n:,}"


def _words(prec: str) -> str:
    return _PRECISION_WORDS.get(prec, prec)


def _flops_unit(prec: str) -> str:
    return "TOPS" if prec.startswith("int") else "TFLOP/s"


# ---------------------------------------------------------------------------------
# What the inputs say: sheet ceilings, measured ceilings
# ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Spec:
    name: str
    bandwidth_gbs: float | None
    peaks: dict  # precision -> TFLOP/s


@dataclass(frozen=True)
class _Measured:
    source: str  # words: where the figures came from
    date: str
    bandwidth_gbs: float | None
    bandwidth_kernel: str
    peaks: dict  # precision -> (TFLOP/s, kernel)
    launch: dict  # event/submit/round_trip/graph -> s


def _first_device(doc: dict | None) -> dict:
    devs = _get(doc, "devices", default=[])
    return devs[0] if isinstance(devs, list) and devs and isinstance(devs[0], dict) else {}


def spec_of(inp: ReportInput) -> _Spec | None:
    """The sheet ceilings: ``inp.sheet``, else the probe's matched sheet, else what the
    bench and check documents repeat of it (bandwidth and the compute rows' sheet peaks)."""
    for sheet in (inp.sheet, _get(_first_device(inp.probe), "sheet")):
        if isinstance(sheet, dict) and _f(sheet.get("memory_bandwidth_gbs")):
            peaks = {k: _f(v) for k, v in (sheet.get("peak_tflops") or {}).items() if _f(v)}
            name = sheet.get("name") or sheet.get("full_sheet_name") or "spec sheet"
            return _Spec(str(name), _f(sheet.get("memory_bandwidth_gbs")), peaks)
    bw = _f(_get(inp.bench, "sheet", "memory_bandwidth_gbs")) or _f(_get(inp.bench, "spec_bandwidth_gbs"))
    name = _get(inp.bench, "sheet", "name") or _get(inp.bench, "sheet")
    peaks: dict = {}
    for row in _get(inp.bench, "compute", default=[]) or []:
        if isinstance(row, dict) and row.get("sheet_key") and _f(row.get("sheet_peak_tflops")):
            peaks[str(row["sheet_key"])] = _f(row["sheet_peak_tflops"])
    obs = _get(inp.check, "observations", 0, default={})
    if bw is None and isinstance(obs, dict):
        bw = _f(obs.get("sheet_bandwidth_gbs"))
        name = name or obs.get("sheet")
        if _f(obs.get("sheet_fp32_tflops")):
            peaks.setdefault("fp32", _f(obs["sheet_fp32_tflops"]))
        if _f(obs.get("sheet_tensor_tflops")) and obs.get("tensor_precision"):
            peaks.setdefault(str(obs["tensor_precision"]), _f(obs["sheet_tensor_tflops"]))
    if bw is None:
        return None
    return _Spec(str(name) if isinstance(name, str) else "spec sheet", bw, peaks)


def measured_of(inp: ReportInput) -> _Measured | None:
    """The measured ceilings: from a bench document, a profile, or (last) a check's observations."""
    b = inp.bench
    if isinstance(b, dict) and b.get("kind") == "profile":
        peaks = {k: (_f(v), "") for k, v in (b.get("peak_tflops_measured") or {}).items() if _f(v)}
        return _Measured(
            source=f"bench profile {b.get('date', '')}".strip(),
            date=str(b.get("date", "")),
            bandwidth_gbs=_f(b.get("dram_bandwidth_gbs")),
            bandwidth_kernel=str(b.get("dram_kernel") or ""),
            peaks=peaks,
            launch={
                "event": _f(b.get("launch_overhead_s")),
                "submit": _f(b.get("launch_submit_s")),
                "round_trip": _f(b.get("launch_round_trip_s")),
                "graph": _f(b.get("launch_graph_per_kernel_s")),
            },
        )
    if isinstance(b, dict):
        peaks: dict = {}
        for row in b.get("compute") or []:
            if not isinstance(row, dict) or row.get("status") != "measured":
                continue
            t = _f(row.get("tflops"))
            p = str(row.get("precision", ""))
            if t and (p not in peaks or t > peaks[p][0]):
                peaks[p] = (t, str(row.get("kernel", "")))
        lo = b.get("launch_overhead") or {}
        dtype = b.get("dtype")
        kernel = str(b.get("sustained_dram_kernel") or "")
        return _Measured(
            source=f"gpuwhy bench{' --' + b['mode'] if isinstance(b.get('mode'), str) else ''} {b.get('date', '')}".strip(),
            date=str(b.get("date", "")),
            bandwidth_gbs=_f(b.get("sustained_dram_gbs")),
            bandwidth_kernel=f"{kernel} {dtype}".strip() if kernel else "",
            peaks=peaks,
            launch={
                "event": _f(lo.get("event_s")),
                "submit": _f(lo.get("submit_s")),
                "round_trip": _f(lo.get("round_trip_s")),
                "graph": _f(lo.get("graph_per_kernel_s")),
            },
        )
    obs = _get(inp.check, "observations", 0, default=None)
    if isinstance(obs, dict):
        peaks = {}
        if _f(obs.get("fp32_tflops")):
            peaks["fp32"] = (_f(obs["fp32_tflops"]), "check fp32_fma")
        if _f(obs.get("tensor_tflops")) and obs.get("tensor_precision"):
            peaks[str(obs["tensor_precision"])] = (_f(obs["tensor_tflops"]), "check tensor")
        lo = _f(obs.get("launch_overhead_us"))
        return _Measured(
            source="gpuwhy check", date="", bandwidth_gbs=_f(obs.get("dram_bandwidth_gbs")), bandwidth_kernel="",
            peaks=peaks, launch={"event": None if lo is None else lo * 1e-6},
        )
    return None


def _gpu_name(inp: ReportInput, spec: _Spec | None) -> str:
    for v in (
        _get(_first_device(inp.probe), "identity", "name"),
        _get(inp.bench, "device", "name"),
        _get(inp.bench, "name"),
        _get(inp.check, "devices", 0, "device"),
        spec.name if spec else None,
    ):
        if isinstance(v, str) and v:
            return v
    return "GPU"


# ---------------------------------------------------------------------------------
# Classified points
# ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlacedPoint:
    """A :class:`ReportPoint` with its verdict (``verdict`` is a
    :class:`gpuwhy.model.roofline.Verdict`)."""

    point: ReportPoint
    verdict: Any

    @property
    def label(self) -> str:
        """``name: memory-bound (12x)`` and the speed of light when timed."""
        v = self.verdict
        ratio = f" ({v.bound_ratio:.0f}x)" if math.isfinite(v.bound_ratio) and v.bound_ratio >= 1.5 else ""
        sol = f", {num(v.sol_pct)}% SOL" if v.sol_pct is not None else ""
        return f"{self.point.name}: {v.regime}-bound{ratio}{sol}"


def point_ceilings(inp: ReportInput, spec: _Spec | None, meas: _Measured | None):
    """The :class:`~gpuwhy.model.roofline.Ceilings` the points are classified against:
    measured bandwidth and launch overhead where known, the measured peak for
    ``inp.dtype`` where known, the sheet's otherwise. None without any bandwidth and peak."""
    from .model.roofline import DEFAULT_LAUNCH_OVERHEAD_S, DEFAULT_LAUNCH_OVERHEAD_SOURCE, Ceilings

    prec = inp.dtype
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


def place_points(points: Sequence[ReportPoint], ceilings) -> list[PlacedPoint]:
    """Classify every point against ``ceilings`` (see :func:`gpuwhy.model.roofline.classify`)."""
    from .model.roofline import Workload, classify

    out = []
    for p in points:
        w = Workload(flops=p.flops, bytes=p.bytes, time_s=p.time_s, name=p.name)
        out.append(PlacedPoint(p, classify(w, ceilings)))
    return out


# ---------------------------------------------------------------------------------
# The roofline SVG
# ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Roof:
    """One roof: ``bandwidth_gbs`` slope up to ``peak_tflops``; ``measured`` draws it solid."""

    label: str
    precision: str
    bandwidth_gbs: float
    peak_tflops: float
    measured: bool
    color: str

    @property
    def ridge(self) -> float:
        """FLOP/byte where the slope meets the flat roof."""
        return self.peak_tflops * 1e12 / (self.bandwidth_gbs * 1e9)


_COLORS = ("#0b5cad", "#c0560c", "#2b7a3d", "#8a3ea8")


def _tick_text(exp: int) -> str:
    if -3 <= exp <= 4:
        v = 10.0**exp
        return f"{v:,.0f}" if exp >= 0 else f"{v:.{-exp}f}"
    return f"1e{exp}"


_LINE = 1.2  # line height of multi-line SVG labels, in font sizes


def _svg_text(x: float, y: float, text: str, anchor: str, size: float, fill: str, halo: bool = False, bold: bool = False) -> str:
    """A ``<text>`` element; ``\n`` in ``text`` starts a new line (a ``<tspan>``), the first baseline at ``y``."""
    extra = ' font-weight="600"' if bold else ""
    if halo:
        extra += ' paint-order="stroke" stroke="#fff" stroke-width="3" stroke-linejoin="round"'
    lines = text.split("\n")
    body = esc(lines[0]) + "".join(f'<tspan x="{x:.1f}" dy="{size * _LINE:.1f}">{esc(t)}</tspan>' for t in lines[1:])
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" fill="{fill}" font-size="{size:g}"{extra}>{body}</text>'


class _Labels:
    """Greedy placement of text labels in the plot: the first candidate position whose
    box stays inside the plot and overlaps nothing placed before it wins (see
    :meth:`place` for the "near" candidates that may cross a roof line), else the
    candidate with the least overlap."""

    def __init__(self, bounds: tuple[float, float, float, float]):
        self.bounds = bounds
        self.boxes: list[tuple[float, float, float, float]] = []
        self.soft: list[tuple[float, float, float, float]] = []

    @staticmethod
    def box(x: float, y: float, text: str, size: float, anchor: str) -> tuple[float, float, float, float]:
        """The box of ``text`` (lines split at ``\n``) with its first baseline at ``y``;
        a negative ``size`` means bold (wider glyphs)."""
        lines = text.split("\n")
        w = max(len(t) for t in lines) * abs(size) * (0.63 if size < 0 else 0.57)
        size = abs(size)
        x0 = x if anchor == "start" else (x - w if anchor == "end" else x - w / 2)
        return (x0, y - size * 0.85, x0 + w, y + size * (0.25 + _LINE * (len(lines) - 1)))

    @staticmethod
    def _hits(b, boxes) -> bool:
        return any(b[0] < o[2] and o[0] < b[2] and b[1] < o[3] and o[1] < b[3] for o in boxes)

    def inside(self, b: tuple[float, float, float, float]) -> bool:
        bx0, by0, bx1, by1 = self.bounds
        return bx0 <= b[0] and b[2] <= bx1 and by0 <= b[1] and b[3] <= by1

    def block(self, b: tuple[float, float, float, float], soft: bool = False) -> None:
        (self.soft if soft else self.boxes).append(b)

    def overlap(self, b: tuple[float, float, float, float]) -> float:
        """Area of ``b`` covered by the boxes placed so far (summed; labels and markers
        count ten times as much as the soft line boxes)."""
        def area(boxes):
            return sum(max(0.0, min(b[2], o[2]) - max(b[0], o[0])) * max(0.0, min(b[3], o[3]) - max(b[1], o[1]))
                       for o in boxes)
        return 10 * area(self.boxes) + area(self.soft)

    def place(self, text: str, size: float, candidates: Sequence[tuple], near: int = 0) -> tuple[float, float, str, str]:
        """Pick a position for ``text``: ``candidates`` are ``(x, y, anchor)`` or
        ``(x, y, anchor, other_text)`` (another wording of the label for that spot).
        With ``near`` > 0 the first ``near`` candidates may cross soft boxes (a line)
        before any later candidate is considered. Returns ``(x, y, anchor, text)``
        and reserves its box."""
        full = [(c[0], c[1], c[2], c[3] if len(c) > 3 else text) for c in candidates]
        boxed = [(c, self.box(c[0], c[1], c[3], size, c[2])) for c in full]
        inside = [(i, c, b) for i, (c, b) in enumerate(boxed) if self.inside(b)]
        passes = []
        if near:
            passes += [lambda i, b: i < near and not self._hits(b, self.boxes) and not self._hits(b, self.soft),
                       lambda i, b: i < near and not self._hits(b, self.boxes)]
        passes.append(lambda i, b: not self._hits(b, self.boxes) and not self._hits(b, self.soft))
        pick = None
        for ok in passes:
            pick = next(((c, b) for i, c, b in inside if ok(i, b)), None)
            if pick is not None:
                break
        if pick is None:
            pick = min([(c, b) for _, c, b in inside] or boxed, key=lambda cb: self.overlap(cb[1]))
        (x, y, anchor, t), b = pick
        self.boxes.append(b)
        return x, y, anchor, t


def roofline_svg(roofs: Sequence[Roof], points: Sequence[PlacedPoint] = (), sweep: Sequence[tuple[float, float]] = (),
                 title: str = "Roofline", size: tuple[int, int] = (480, 410), uid: str = "rl", css_class: str = "") -> str:
    """An inline SVG roofline: intensity (FLOP/byte) on x, TFLOP/s on y, both log10 with
    a tick, a label and a grid line at every decade. Sheet roofs dashed, measured
    roofs solid, each ridge point marked with a circle and its FLOP/byte; ``points``
    drawn at their achieved rate when timed (else on the roof; a dotted line joins
    the achieved rate to the roof) and labelled with their verdict; ``sweep`` are
    measured (FLOP/byte, FLOP/s) pairs drawn as small dots.

    ``size`` is the viewBox (width, height) in px at 12-13 px text; below 440 wide the
    points' labels take two lines (name, verdict). ``uid`` prefixes the element ids
    (several plots in one page); ``css_class`` is added to the ``<svg>``'s class.

    Returns the ``<svg>`` element as a string (no external references), or "" with no roof.
    """
    W, H = size
    two_line = W < 440
    ml, mr, mt, mb = 54, 8, 8, 44
    pw, ph = W - ml - mr, H - mt - mb
    fs = 13  # tick labels; other labels 12

    xs = [r.ridge for r in roofs]
    xs += [pp.verdict.arithmetic_intensity for pp in points]
    xs += [x for x, _ in sweep]
    ys = [r.peak_tflops * 1e12 for r in roofs]
    for pp in points:
        ys.append(pp.verdict.attainable_flops)
        if pp.verdict.achieved_flops:
            ys.append(pp.verdict.achieved_flops)
    ys += [y for _, y in sweep]
    if not roofs:
        return ""
    x_lo = 10 ** math.floor(math.log10(min(min(xs), 1.0) / 3))
    x_hi = max(xs) * 6
    if math.log10(x_hi / x_lo) < 4:
        x_hi = x_lo * 1e4
    y_hi = max(ys) * 5  # room for two rows of labels above the highest roof
    min_bw = min(r.bandwidth_gbs * 1e9 for r in roofs)
    y_floor = min([min_bw * x_lo] + [y for y in ys if y > 0])
    y_lo = 10 ** math.floor(math.log10(max(y_floor, y_hi * 1e-8)))
    if math.log10(y_hi / y_lo) < 3:
        y_lo = 10 ** math.floor(math.log10(y_hi / 1e3))
    lx0, lx1, ly0, ly1 = math.log10(x_lo), math.log10(x_hi), math.log10(y_lo), math.log10(y_hi)

    def X(x: float) -> float:
        return ml + (math.log10(x) - lx0) / (lx1 - lx0) * pw

    def Y(y: float) -> float:
        return mt + ph - (math.log10(y) - ly0) / (ly1 - ly0) * ph

    labels = _Labels((ml + 2, mt + 2, ml + pw - 2, mt + ph - 2))
    o: list[str] = []
    a = o.append
    a(f'<svg class="roofline{" " + css_class if css_class else ""}" viewBox="0 0 {W} {H}" '
      f'xmlns="http://www.w3.org/2000/svg" role="img" aria-labelledby="{uid}-title {uid}-desc" font-family="system-ui, -apple-system, Segoe UI, Roboto, sans-serif" '
      f'font-size="{fs}" fill="#1f2328">')
    a(f'<title id="{uid}-title">{esc(title)}</title>')
    desc = "; ".join(f"{r.label}: {r.bandwidth_gbs:.0f} GB/s, {r.peak_tflops:.4g} {_flops_unit(r.precision)}, "
                     f"ridge {r.ridge:.3g} FLOP/byte" for r in roofs)
    desc += "".join(f"; {pp.label}" for pp in points)
    a(f'<desc id="{uid}-desc">{esc(desc)}</desc>')
    a(f'<defs><clipPath id="{uid}-clip"><rect x="{ml}" y="{mt}" width="{pw}" height="{ph}"/></clipPath></defs>')
    a(f'<rect x="{ml}" y="{mt}" width="{pw}" height="{ph}" fill="#fff" stroke="#59636e"/>')
    # decade grid, ticks and labels; minor ticks at 2..9 x each decade
    decades_x = [e for e in range(math.floor(lx0), math.ceil(lx1) + 1) if lx0 - 1e-9 <= e <= lx1 + 1e-9]
    decades_y = [e for e in range(math.floor(ly0), math.ceil(ly1) + 1) if ly0 - 1e-9 <= e <= ly1 + 1e-9]
    step_x = 1 if len(decades_x) <= 7 else 2
    step_y = 1 if len(decades_y) <= 9 else 2
    for e in range(math.floor(lx0), math.ceil(lx1) + 1):
        for m in range(2, 10):
            v = 10.0**e * m
            if x_lo < v < x_hi:
                a(f'<line x1="{X(v):.1f}" y1="{mt + ph}" x2="{X(v):.1f}" y2="{mt + ph - 4}" stroke="#59636e"/>')
    for i, e in enumerate(decades_x):
        x = X(10.0**e)
        a(f'<line x1="{x:.1f}" y1="{mt}" x2="{x:.1f}" y2="{mt + ph}" stroke="#d8dee4"/>')
        a(f'<line x1="{x:.1f}" y1="{mt + ph}" x2="{x:.1f}" y2="{mt + ph + 5}" stroke="#59636e"/>')
        if i % step_x == 0:
            t = _tick_text(e)
            half = len(t) * fs * 0.3
            anchor = "end" if x + half > W - 1 else ("start" if x - half < 1 else "middle")
            tx = W - 1 if anchor == "end" else (1 if anchor == "start" else x)
            a(f'<text x="{tx:.1f}" y="{mt + ph + 18}" text-anchor="{anchor}">{t}</text>')
    for e in range(math.floor(ly0), math.ceil(ly1) + 1):
        for m in range(2, 10):
            v = 10.0**e * m
            if y_lo < v < y_hi:
                a(f'<line x1="{ml}" y1="{Y(v):.1f}" x2="{ml + 4}" y2="{Y(v):.1f}" stroke="#59636e"/>')
    for i, e in enumerate(decades_y):
        y = Y(10.0**e)
        a(f'<line x1="{ml}" y1="{y:.1f}" x2="{ml + pw}" y2="{y:.1f}" stroke="#d8dee4"/>')
        a(f'<line x1="{ml - 5}" y1="{y:.1f}" x2="{ml}" y2="{y:.1f}" stroke="#59636e"/>')
        if i % step_y == 0:
            a(f'<text x="{ml - 8}" y="{y + 4.5:.1f}" text-anchor="end">{_tick_text(e - 12)}</text>')
    a(f'<text x="{ml + pw / 2:.1f}" y="{H - 8}" text-anchor="middle">arithmetic intensity (FLOP/byte)</text>')
    a(f'<text transform="translate(14 {mt + ph / 2:.1f}) rotate(-90)" text-anchor="middle">'
      f'{"TOPS (1e12 op/s)" if roofs[0].precision.startswith("int") else "TFLOP/s (1e12 FLOP/s)"}</text>')

    # roofs, clipped to the plot area
    a(f'<g clip-path="url(#{uid}-clip)" fill="none" stroke-width="2.2" stroke-linejoin="round">')
    for r in roofs:
        bw, peak = r.bandwidth_gbs * 1e9, r.peak_tflops * 1e12
        x_start = max(x_lo, y_lo / bw)
        dash = "" if r.measured else ' stroke-dasharray="7 5"'
        a(f'<polyline points="{X(x_start):.1f},{Y(bw * x_start):.1f} {X(r.ridge):.1f},{Y(peak):.1f} '
          f'{X(x_hi):.1f},{Y(peak):.1f}" stroke="{r.color}"{dash}><title>{esc(r.label)}</title></polyline>')
    a("</g>")
    # Labels are placed in priority order (the user's points, then roofs, then ridges),
    # each avoiding the markers and the labels placed before it, and drawn last.
    marks = []
    for pp in points:
        v = pp.verdict
        y = v.achieved_flops if v.achieved_flops else v.attainable_flops
        px, py = X(v.arithmetic_intensity), Y(y)
        marks.append((pp, px, py))
        labels.block((px - 7, py - 7, px + 7, py + 7))
    for r in roofs:
        cx, cy = X(r.ridge), Y(r.peak_tflops * 1e12)
        labels.block((cx - 6, cy - 6, cx + 6, cy + 6))
        # keep labels off the roof lines: small boxes every few pixels along them
        bw_r = r.bandwidth_gbs * 1e9
        x0 = max(x_lo, y_lo / bw_r)
        p0, p1, p2 = (X(x0), Y(bw_r * x0)), (cx, cy), (X(x_hi), cy)
        for (ax, ay), (bx, by) in ((p0, p1), (p1, p2)):
            n = max(1, int(math.hypot(bx - ax, by - ay) / 5))
            for k in range(n + 1):
                qx, qy = ax + (bx - ax) * k / n, ay + (by - ay) * k / n
                labels.block((qx - 1, qy - 1, qx + 1, qy + 1), soft=True)
    # one bandwidth label along the slope, above it (nothing else is drawn above-left of the roof)
    dec_x, dec_y = pw / (lx1 - lx0), ph / (ly1 - ly0)
    angle = -math.degrees(math.atan2(dec_y, dec_x))
    sheet_bw = next((r for r in roofs if not r.measured), None)
    meas_bw = next((r for r in roofs if r.measured), None)
    parts = []
    if sheet_bw:
        parts.append(f"sheet {num(sheet_bw.bandwidth_gbs)}")
    if meas_bw and (not sheet_bw or abs(meas_bw.bandwidth_gbs - sheet_bw.bandwidth_gbs) > 0.5):
        parts.append(f"measured {num(meas_bw.bandwidth_gbs)}")
    ref = sheet_bw or meas_bw
    bw = ref.bandwidth_gbs * 1e9
    lowest_ridge = min(r.ridge for r in roofs if r.bandwidth_gbs == ref.bandwidth_gbs)
    xa, xb = max(x_lo, y_lo / bw), min(lowest_ridge, x_hi)
    xm = 10 ** (math.log10(xa) + (math.log10(xb) - math.log10(xa)) * 0.08)
    bw_text = f"DRAM GB/s: {', '.join(parts)}"
    th = math.radians(angle)
    for k in range(0, int(len(bw_text) * 12 * 0.56) + 8, 8):  # keep other labels off the rotated text
        cx = X(xm) + k * math.cos(th) + 13 * math.sin(th)
        cy = Y(bw * xm) + k * math.sin(th) - 13 * math.cos(th)
        labels.block((cx - 6, cy - 7, cx + 6, cy + 7))
    texts: list[str] = []
    roof_top = min(Y(r.peak_tflops * 1e12) for r in roofs)
    for pp, px, py in marks:
        text = pp.label.replace(": ", "\n", 1) if two_line else pp.label
        edge = ml + pw - 4
        up = 12 * _LINE * text.count("\n")  # a label above something starts higher by its extra lines
        near = [(px + 9, py + 4, "start"), (px + 9, py + 18, "start"), (px - 9, py + 18, "end"), (px - 9, py + 4, "end"),
                (edge, roof_top - 10 - up, "end"), (px, roof_top - 10 - up, "middle"),
                (px, py - 12 - up, "middle"), (px + 9, py - 10 - up, "start"), (px - 9, py - 10 - up, "end"),
                (edge, py + 20, "end")]
        far = []
        for dy in range(34, 260, 16):
            far += [(px - 9, py + dy, "end"), (px + 9, py + dy, "start"), (edge, py + dy, "end")]
        x, y, anc, text = labels.place(text, -12, near + far, near=2)  # bold; right of the point may cross a line
        b = labels.boxes[-1]
        qx, qy = min(max(px, b[0]), b[2]), min(max(py, b[1]), b[3])  # the box's nearest point
        if math.hypot(qx - px, qy - py) > 16:  # a leader line from the point to its label
            texts.append(f'<line x1="{px:.1f}" y1="{py:.1f}" x2="{qx:.1f}" y2="{qy:.1f}" stroke="#a40e26" '
                         f'stroke-width="1"/>')
        texts.append(_svg_text(x, y, text, anc, 12, "#a40e26", halo=True, bold=True))
    by_prec: dict = {}
    for r in roofs:
        by_prec.setdefault(r.precision, []).append(r)
    for prec, rs in by_prec.items():  # roof labels, one per precision, right-aligned along the flat part
        unit = _flops_unit(prec)
        figures = ", ".join(f"{'measured' if r.measured else 'sheet'} {num(r.peak_tflops)}" for r in rs)
        text = f"{prec} {unit}\n{figures}"
        one_line = f"{prec}: {figures} {unit}"
        y_top = min(Y(r.peak_tflops * 1e12) for r in rs)
        y_low = max(Y(r.peak_tflops * 1e12) for r in rs)
        right = ml + pw - 4
        above = y_top - 6 - 12 * _LINE
        steps = range(0, int(pw), 30)
        cands = [(right - dx, above, "end") for dx in steps] + [(right - dx, y_low + 15, "end") for dx in steps]
        cands += [(right - dx, yy, "end", one_line) for yy in (y_top - 6, y_top - 24, y_low + 15) for dx in steps]
        # first the spots over the flat part of this roof (right of its ridge), then the rest
        ridge_x = X(max(r.ridge for r in rs))
        cands.sort(key=lambda c: max(0.0, ridge_x - 4 - labels.box(c[0], c[1], c[3] if len(c) > 3 else text, 12, c[2])[0]))
        x, y, anc, text = labels.place(text, 12, cands)
        texts.append(_svg_text(x, y, text, anc, 12, rs[0].color, halo=True))
    for prec, rs in by_prec.items():  # ridge labels, one per precision: "ridge 206 sheet" / "188 measured"
        top = max(rs, key=lambda r: r.peak_tflops)
        cx, cy = X(top.ridge), Y(top.peak_tflops * 1e12)
        low_y = max(Y(r.peak_tflops * 1e12) for r in rs)
        text = "\n".join(f"{'ridge ' if i == 0 else ''}{num(r.ridge)} {'measured' if r.measured else 'sheet'}"
                         for i, r in enumerate(rs))
        cands = [(cx - 8, low_y + 17, "end"), (cx + 8, low_y + 17, "start"), (cx - 8, low_y + 31, "end"),
                 (cx + 8, low_y + 31, "start"), (cx - 10, cy - 24, "end"), (cx + 8, low_y + 45, "start"),
                 (cx + 8, low_y + 59, "start"), (cx, low_y + 45, "middle"), (ml + pw - 4, low_y + 17, "end")]
        x, y, anc, text = labels.place(text, 11, cands)
        texts.append(_svg_text(x, y, text, anc, 11, top.color, halo=True))
    # measured sweep points
    for x, y in sweep:
        if x > 0 and y > 0:
            a(f'<circle cx="{X(x):.1f}" cy="{Y(y):.1f}" r="2.2" fill="#59636e"/>')
    for r in roofs:
        cx, cy = X(r.ridge), Y(r.peak_tflops * 1e12)
        fill = r.color if r.measured else "#fff"
        a(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="4.5" fill="{fill}" stroke="{r.color}" stroke-width="2">'
          f'<title>{esc(f"ridge of {r.label}: {r.ridge:.3g} FLOP/byte")}</title></circle>')
    a(f'<text transform="translate({X(xm):.1f} {Y(bw * xm):.1f}) rotate({angle:.1f}) translate(0 -7)" '
      f'fill="{ref.color}" font-size="12">{esc(bw_text)}</text>')
    # the user's points: a dotted line from the achieved rate up to the roof, a diamond
    for pp, px, py in marks:
        v = pp.verdict
        if v.achieved_flops:
            a(f'<line x1="{px:.1f}" y1="{py:.1f}" x2="{px:.1f}" y2="{Y(v.attainable_flops):.1f}" stroke="#cf222e" '
              f'stroke-dasharray="2 3"/>')
        a(f'<path d="M{px:.1f} {py - 6:.1f} L{px + 6:.1f} {py:.1f} L{px:.1f} {py + 6:.1f} L{px - 6:.1f} {py:.1f} Z" '
          f'fill="#cf222e" stroke="#fff" stroke-width="1"><title>{esc(pp.label)}</title></path>')
    o.extend(texts)
    a("</svg>")
    return "".join(o)


def roofs_for(inp: ReportInput, spec: _Spec | None, meas: _Measured | None) -> list[Roof]:
    """The roofs to draw: ``inp.dtype``'s, then FP32's when that is another precision;
    each as the sheet's (dashed) and the measured (solid) where known."""
    precs = [inp.dtype] + (["fp32"] if inp.dtype != "fp32" else [])
    roofs: list[Roof] = []
    for i, prec in enumerate(precs):
        color = _COLORS[i % len(_COLORS)]
        if spec and spec.bandwidth_gbs and spec.peaks.get(prec):
            roofs.append(Roof(f"{prec} sheet", prec, spec.bandwidth_gbs, spec.peaks[prec], False, color))
        if meas and prec in meas.peaks:
            bw = meas.bandwidth_gbs or (spec.bandwidth_gbs if spec else None)
            if bw:
                roofs.append(Roof(f"{prec} measured", prec, bw, meas.peaks[prec][0], True, color))
    return roofs


# ---------------------------------------------------------------------------------
# HTML pieces
# ---------------------------------------------------------------------------------

_CSS = """
:root{--fg:#1f2328;--muted:#59636e;--bg:#fff;--line:#d1d9e0;--head:#f6f8fa;--ok:#1a7f37;--bad:#cf222e;--skip:#6e7781;--warn:#9a6700}
*{box-sizing:border-box}
html{font-size:100%;-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;color:var(--fg);background:var(--bg);font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;font-size:1rem;line-height:1.45}
main{max-width:64rem;margin:0 auto;padding:1rem 1rem 3rem}
h1{font-size:1.5rem;line-height:1.25;margin:.5rem 0 .25rem}
h2{font-size:1.25rem;margin:2rem 0 .5rem;padding-bottom:.25rem;border-bottom:1px solid var(--line)}
h3{font-size:1.05rem;margin:1.25rem 0 .4rem}
p{margin:.4rem 0}
.sub,.muted{color:var(--muted)}
.sub{font-size:.9rem}
small,.small{font-size:.85rem}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85rem}
code{overflow-wrap:anywhere}
pre{background:var(--head);border:1px solid var(--line);border-radius:.375rem;padding:.5rem .75rem;white-space:pre-wrap;overflow-wrap:anywhere;margin:.4rem 0}
nav.toc{font-size:.9rem;margin:.75rem 0;display:flex;flex-wrap:wrap;gap:.25rem .9rem}
nav.toc a{color:#0969da;text-decoration:none}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(9.5rem,1fr));gap:.6rem;margin:.75rem 0}
.card{border:1px solid var(--line);border-radius:.5rem;padding:.55rem .75rem;background:var(--bg)}
.card .k{font-size:.8rem;color:var(--muted)}
.card .v{font-size:1.35rem;font-weight:600;font-variant-numeric:tabular-nums;line-height:1.3}
.card .d{font-size:.8rem;color:var(--muted)}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch;max-width:100%;margin:.4rem 0;border:1px solid var(--line);border-radius:.375rem}
table{border-collapse:collapse;width:100%;font-size:.875rem}
th,td{padding:.3rem .55rem;border-bottom:1px solid var(--line);text-align:left;vertical-align:top;white-space:nowrap}
tr:last-child td,tr:last-child th{border-bottom:0}
th{background:var(--head);font-weight:600}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
td.w{white-space:normal;min-width:14rem;max-width:40rem}
td.m{white-space:normal;min-width:9rem}
.kv th{width:1%;background:none;font-weight:500;color:var(--muted)}
.kv td{white-space:normal;overflow-wrap:anywhere}
.st{display:inline-block;padding:0 .45rem;border-radius:1rem;font-size:.8rem;font-weight:600;color:#fff;line-height:1.5}
.st.pass{background:var(--ok)}.st.fail{background:var(--bad)}.st.skip{background:var(--skip)}.st.warn{background:var(--warn)}
tr.fail td{background:#ffebe9}
.note{border-left:.25rem solid var(--line);padding:.15rem .6rem;margin:.5rem 0;color:var(--muted);font-size:.9rem}
.warnbox{border-left:.25rem solid var(--warn);padding:.15rem .6rem;margin:.5rem 0;font-size:.9rem}
.absent{color:var(--muted);font-style:italic}
.u{color:var(--muted);font-size:.8em}
figure{margin:.5rem 0}
figure svg{display:block;width:100%;height:auto;max-width:40rem}
figcaption{font-size:.85rem;color:var(--muted);margin-top:.3rem}
figure svg.rl-narrow{display:none}
@media (max-width:36rem){figure svg.rl-wide{display:none}figure svg.rl-narrow{display:block}}
.legend{display:flex;flex-wrap:wrap;gap:.2rem 1rem;font-size:.85rem;margin:.3rem 0}
.legend span{white-space:normal}
ol.notes{font-size:.85rem;color:var(--muted);margin:.3rem 0;padding-left:1.6rem}
.sw{display:inline-block;width:1.6rem;height:0;border-top:2px solid;vertical-align:middle;margin-right:.3rem}
.sw.d{border-top-style:dashed}
details{margin:.5rem 0}
summary{cursor:pointer;color:#0969da;font-size:.95rem}
footer{margin-top:2.5rem;font-size:.85rem;color:var(--muted)}
@media (max-width:30rem){main{padding:.75rem .6rem 2rem}h1{font-size:1.3rem}h2{font-size:1.15rem}.card .v{font-size:1.2rem}table{font-size:.8rem}}
@media print{
 body{font-size:10pt}
 main{max-width:none;padding:0}
 nav.toc,summary{display:none}
 .scroll{overflow:visible;border:0}
 th,td{white-space:normal;padding:.15rem .3rem;min-width:0!important}
 td.w{max-width:none}
 table{font-size:7.5pt}
 figure svg{max-width:32rem}
 figure svg.rl-narrow{display:none!important}
 figure svg.rl-wide{display:block!important}
 tr,figure,.card{break-inside:avoid}
 h2,h3{break-after:avoid}
 details>*{display:block}
 details::details-content{content-visibility:visible;display:contents}
 a{color:inherit;text-decoration:none}
}
"""


def _table(headers: Sequence[str], rows: Iterable[Sequence[Any]], numeric: Iterable[int] = (), wide: Iterable[int] = (),
           row_class: Sequence[str] | None = None, caption: str = "", wrap: Iterable[int] = ()) -> str:
    """A table inside its own horizontal-scroll container. Cells are pre-escaped HTML
    (build them with :func:`esc`); ``numeric`` columns align right, ``wide`` ones wrap
    (at least 14rem wide), ``wrap`` ones wrap (at least 9rem)."""
    numeric, wide, wrap = set(numeric), set(wide), set(wrap)
    o = ['<div class="scroll"><table>']
    if caption:
        o.append(f'<caption class="sub" style="text-align:left;padding:.3rem .55rem">{caption}</caption>')
    o.append("<thead><tr>")
    for i, h in enumerate(headers):
        o.append(f'<th{" class=n" if i in numeric else ""} scope="col">{h}</th>')
    o.append("</tr></thead><tbody>")
    for k, row in enumerate(rows):
        cls = f' class="{row_class[k]}"' if row_class and row_class[k] else ""
        o.append(f"<tr{cls}>")
        for i, cell in enumerate(row):
            c = "n" if i in numeric else ("w" if i in wide else ("m" if i in wrap else ""))
            o.append(f'<td{" class=" + c if c else ""}>{cell}</td>')
        o.append("</tr>")
    o.append("</tbody></table></div>")
    return "".join(o)


def _kv(pairs: Iterable[tuple[str, Any]]) -> str:
    """A two-column key/value table (values pre-escaped)."""
    rows = "".join(f'<tr><th scope="row">{esc(k)}</th><td>{v}</td></tr>' for k, v in pairs)
    return f'<div class="scroll"><table class="kv"><tbody>{rows}</tbody></table></div>'


def _absent(what: str, how: str) -> str:
    return f'<p class="absent">Not measured: {esc(what)} (run <code>{esc(how)}</code> and pass its JSON file).</p>'


def _status(s: Any) -> str:
    s = str(s or "").lower()
    cls = s if s in ("pass", "fail", "skip", "warn") else "skip"
    return f'<span class="st {cls}">{esc(s or "n/a")}</span>'


def _card(key: str, value: str, detail: str = "") -> str:
    d = f'<div class="d">{detail}</div>' if detail else ""
    return f'<div class="card"><div class="k">{esc(key)}</div><div class="v">{value}</div>{d}</div>'


# ---------------------------------------------------------------------------------
# Sections
# ---------------------------------------------------------------------------------


def _summary(inp: ReportInput, spec: _Spec | None, meas: _Measured | None, gpu: str) -> str:
    cards = []
    if meas and meas.bandwidth_gbs:
        sp = f"{100 * meas.bandwidth_gbs / spec.bandwidth_gbs:.1f}% of the sheet's {num(spec.bandwidth_gbs)} GB/s" \
            if spec and spec.bandwidth_gbs else ""
        cards.append(_card("DRAM bandwidth, sustained (GB/s)", esc(num(meas.bandwidth_gbs)), esc(sp)))
    elif spec and spec.bandwidth_gbs:
        cards.append(_card("DRAM bandwidth, sheet (GB/s)", esc(num(spec.bandwidth_gbs)), "not measured"))
    prec = inp.dtype
    unit = _flops_unit(prec)
    if meas and prec in meas.peaks:
        t = meas.peaks[prec][0]
        sp = f"{100 * t / spec.peaks[prec]:.1f}% of the sheet's {num(spec.peaks[prec])}" if spec and spec.peaks.get(prec) else ""
        cards.append(_card(f"{prec} peak, measured ({unit})", esc(num(t)), esc(sp)))
    elif spec and spec.peaks.get(prec):
        cards.append(_card(f"{prec} peak, sheet ({unit})", esc(num(spec.peaks[prec])), "not measured"))
    if spec and spec.bandwidth_gbs and spec.peaks.get(prec):
        rp = spec.peaks[prec] * 1e12 / (spec.bandwidth_gbs * 1e9)
        extra = ""
        if meas and meas.bandwidth_gbs and prec in meas.peaks:
            extra = f"measured: {num(meas.peaks[prec][0] * 1e12 / (meas.bandwidth_gbs * 1e9))}"
        cards.append(_card(f"{prec} ridge point, sheet (FLOP/byte)", esc(num(rp)), esc(extra)))
    if meas and meas.launch.get("event"):
        cards.append(_card("launch overhead, event-timed", esc(fmt_time(meas.launch["event"])),
                           esc(f"{fmt_time(meas.launch.get('graph'))} per kernel in a CUDA graph") if meas.launch.get("graph") else ""))
    if isinstance(inp.check, dict):
        checks = [c for d in (inp.check.get("devices") or []) if isinstance(d, dict) for c in (d.get("checks") or [])
                  if isinstance(c, dict)]
        fails = [str(c.get("name")) for c in checks if c.get("status") == "fail"]
        passed = sum(1 for c in checks if c.get("status") == "pass")
        verdict = "passed" if inp.check.get("passed") else ("failed" if inp.check.get("passed") is False else "n/a")
        det = f"{passed} of {len(checks)} pass" + (f"; failed: {', '.join(fails)}" if fails else "")
        cards.append(_card("gpuwhy check", _status("pass" if verdict == "passed" else "fail" if verdict == "failed" else "skip")
                           + f" {esc(verdict)}", esc(det)))
    o = [f'<div class="cards">{"".join(cards)}</div>']
    for n in inp.notes:
        o.append(f'<p class="warnbox">{esc(n)}</p>')
    return "".join(o)


def _roofline_section(inp: ReportInput, spec: _Spec | None, meas: _Measured | None, placed: list[PlacedPoint],
                      ceilings) -> str:
    o = ['<section id="roofline"><h2>Roofline (TFLOP/s vs FLOP/byte)</h2>']
    roofs = roofs_for(inp, spec, meas)
    sweep: list[tuple[float, float]] = []
    pts = _get(inp.bench, "roofline_points", inp.dtype, default=[]) if _get(inp.bench, "kind") == "profile" else []
    for p in pts or []:
        if isinstance(p, (list, tuple)) and len(p) == 2 and _f(p[0]) and _f(p[1]):
            sweep.append((_f(p[0]), _f(p[1])))
    if not roofs:
        o.append(_absent(f"no {inp.dtype} ceiling (sheet or measured)", "gpuwhy report --gpu NAME"))
        o.append("</section>")
        return "".join(o)
    gpu = spec.name if spec else "GPU"
    if not any(r.precision == inp.dtype for r in roofs):
        o.append(f'<p class="warnbox">No {esc(inp.dtype)} peak in the sheet or the measurements: only '
                 f'{esc(", ".join(sorted({r.precision for r in roofs})))} is drawn; pick another --dtype.</p>')
    o.append('<figure>')
    title = f"Roofline of the {gpu}, {inp.dtype}"
    # two drawings of the same plot: one for wide screens and print, one laid out for phones
    o.append(roofline_svg(roofs, placed, sweep, title=title, css_class="rl-wide"))
    o.append(roofline_svg(roofs, placed, sweep, title=title, size=(380, 420), uid="rln", css_class="rl-narrow"))
    legend = []
    for r in roofs:
        legend.append(f'<span><i class="sw{"" if r.measured else " d"}" style="border-color:{r.color}"></i>'
                      f'{esc(r.label)}: {esc(num(r.bandwidth_gbs))} GB/s, {esc(num(r.peak_tflops))} '
                      f'{esc(_flops_unit(r.precision))}, ridge {esc(num(r.ridge))}</span>')
    if placed:
        legend.append('<span><b style="color:#cf222e">&#9670;</b> your points: achieved when timed (a dotted line up to the roof), else on the roof</span>')
    if sweep:
        legend.append('<span>&#8226; measured mixed-intensity sweep</span>')
    o.append(f'<div class="legend">{"".join(legend)}</div>')
    o.append('<figcaption>Log-log axes, a grid line per decade. Dashed: the spec sheet; solid: measured by gpuwhy bench. '
             'Circles mark the ridge points (peak / bandwidth, in FLOP/byte): left of a ridge a kernel is memory-bound, right of it '
             'compute-bound. Attainable = min(peak, bandwidth x intensity).</figcaption></figure>')
    if placed:
        rows = []
        for pp in placed:
            v, p = pp.verdict, pp.point
            rows.append([
                esc(p.name),
                f"<b>{esc(v.regime)}-bound</b>" + (f" ({esc(num(v.bound_ratio))}x)" if math.isfinite(v.bound_ratio) else ""),
                esc(num(v.arithmetic_intensity)), esc(num(v.ridge_point)),
                esc(num(v.attainable_flops / 1e12)),
                esc(num(v.achieved_flops / 1e12)) if v.achieved_flops else "&ndash;",
                esc(num(v.sol_pct) + "%") if v.sol_pct is not None else "&ndash;",
                esc(fmt_time(p.time_s)) if p.time_s else "&ndash;",
                esc(fmt_time(v.predicted_time_s)),
                esc(num(v.achieved_bandwidth / 1e9)) if v.achieved_bandwidth else "&ndash;",
                esc(fmt_si(p.flops, "FLOP")), esc(fmt_si(p.bytes, "B")),
                esc("; ".join(v.warnings)) if v.warnings else "",
            ])
        u = _flops_unit(inp.dtype)
        o.append(f"<h3>Your points ({esc(inp.dtype)})</h3>")
        o.append(_table(
            ["point", "verdict", "FLOP/byte", "ridge", f"attainable {u}", f"achieved {u}", "speed of light",
             "measured time", "model time", "achieved GB/s", "FLOP", "bytes", "warnings"],
            rows, numeric=(2, 3, 4, 5, 6, 7, 8, 9, 10, 11), wide=(12,)))
        o.append(f'<p class="note">Classified against: {esc(ceilings.source)}; {esc(num(ceilings.bandwidth / 1e9))} GB/s, '
                 f'{esc(num(ceilings.peak_flops / 1e12))} {esc(_flops_unit(inp.dtype))}; launch overhead '
                 f'{esc(fmt_time(ceilings.launch_overhead_s))} ({esc(ceilings.launch_overhead_source)}).</p>')
    else:
        o.append('<p class="absent">No points given (add <code>--point NAME:FLOPS:BYTES[:TIME]</code> to place kernels).</p>')
    o.append("</section>")
    return "".join(o)


def _ceilings_section(inp: ReportInput, spec: _Spec | None, meas: _Measured | None) -> str:
    o = ['<section id="ceilings"><h2>Ceilings: measured vs spec sheet</h2>']
    if meas is None and spec is None:
        o.append(_absent("no ceilings", "gpuwhy bench --sweep --json"))
        return "".join(o) + "</section>"
    if meas is not None:
        o.append(f'<p class="sub">Measured: {esc(meas.source)}. Sheet: {esc(spec.name if spec else "none")}. '
                 'Dense peaks; GB/s = 1e9 B/s, TFLOP/s = 1e12 FLOP/s (int8: TOPS).</p>')
    else:
        o.append(f'<p class="sub">Sheet {esc(spec.name)} only: no bench measurements given.</p>')
    rows, classes = [], []
    sbw = spec.bandwidth_gbs if spec else None
    mbw = meas.bandwidth_gbs if meas else None
    rows.append(['DRAM bandwidth <span class="u">GB/s</span>', esc(num(mbw)) if mbw else "not measured",
                 esc(pct(100 * mbw / sbw)) if mbw and sbw else "n/a", esc(num(sbw)),
                 esc(meas.bandwidth_kernel if meas else ""), ""])
    classes.append("")
    compute_rows = [r for r in (_get(inp.bench, "compute", default=[]) or []) if isinstance(r, dict)]
    footnotes: list[str] = []

    def refs(note: Any) -> str:
        """The note's clauses as footnote numbers (the bench repeats the same clauses on many rows)."""
        nums = []
        for part in (p.strip() for p in str(note or "").split("; ")):
            if not part:
                continue
            if part not in footnotes:
                footnotes.append(part)
            nums.append(str(footnotes.index(part) + 1))
        return ", ".join(nums)

    if compute_rows:
        for r in compute_rows:
            prec = str(r.get("precision", ""))
            measured = r.get("status") == "measured" and _f(r.get("tflops"))
            sheet_v = _f(r.get("sheet_peak_tflops")) or (spec.peaks.get(prec) if spec else None)
            rows.append([
                f'{esc(_words(prec))} <span class="u">{esc(_flops_unit(prec))}</span>',
                esc(num(r.get("tflops"))) if measured else esc(r.get("status") or "not measured"),
                esc(pct(r.get("pct_of_sheet"))) if measured and _f(r.get("pct_of_sheet")) else "&ndash;",
                esc(num(sheet_v)) if sheet_v else "&ndash;",
                esc(f"{r.get('kernel', '')} ({r.get('unit', '')})"),
                esc(refs(r.get("note"))),
            ])
            classes.append("")
    else:
        precs = sorted(set((spec.peaks if spec else {})) | set(meas.peaks if meas else {}),
                       key=lambda p: _ORDER.index(p) if p in _ORDER else 99)
        for prec in precs:
            m = meas.peaks.get(prec) if meas else None
            s = spec.peaks.get(prec) if spec else None
            rows.append([f'{esc(_words(prec))} <span class="u">{esc(_flops_unit(prec))}</span>',
                         esc(num(m[0])) if m else "not measured", esc(pct(100 * m[0] / s)) if m and s else "&ndash;",
                         esc(num(s)) if s else "&ndash;", esc(m[1]) if m else "", ""])
            classes.append("")
    o.append(_table(["ceiling", "measured", "% of sheet", "sheet", "kernel", "notes"], rows,
                    numeric=(1, 2, 3), row_class=classes))
    if footnotes:
        o.append('<ol class="notes">' + "".join(f"<li>{esc(f)}</li>" for f in footnotes) + "</ol>")
    if spec and spec.peaks and spec.bandwidth_gbs:
        ridge_rows = []
        for prec in sorted(spec.peaks, key=lambda p: _ORDER.index(p) if p in _ORDER else 99):
            s = spec.peaks[prec]
            m = meas.peaks.get(prec) if meas else None
            mr = m[0] * 1e12 / (mbw * 1e9) if m and mbw else None
            ridge_rows.append([esc(_words(prec)), esc(num(s * 1e12 / (spec.bandwidth_gbs * 1e9))), esc(num(mr)) if mr else "&ndash;"])
        o.append("<h3>Ridge points (FLOP/byte = peak / DRAM bandwidth)</h3>")
        o.append(_table(["precision", "sheet", "measured"], ridge_rows, numeric=(1, 2)))
    o.append("</section>")
    return "".join(o)


def _launch_section(meas: _Measured | None) -> str:
    o = ['<section id="launch"><h2>Launch overhead (four ways, &micro;s)</h2>']
    lo = meas.launch if meas else {}
    if not any(lo.values()):
        o.append(_absent("launch overhead", "gpuwhy bench --quick --json"))
        return "".join(o) + "</section>"
    what = [
        ("event", "event-timed", "CUDA events around an empty kernel on the GPU's clock: the figure classify uses"),
        ("submit", "host submission", "back-to-back launches from Python, host time per launch"),
        ("round_trip", "round trip", "launch + synchronize, host wall time"),
        ("graph", "per kernel in a CUDA graph", "one graph of many launches, time per kernel"),
    ]
    rows = [[esc(name), esc(num(lo[k] * 1e6) if lo.get(k) else "n/a"), esc(meaning)] for k, name, meaning in what]
    o.append(_table(["how", "&micro;s", "what it measures"], rows, numeric=(1,), wide=(2,)))
    o.append(f'<p class="sub">Source: {esc(meas.source)}.</p></section>')
    return "".join(o)


def _sweep_section(inp: ReportInput) -> str:
    o = ['<section id="sweep"><h2>Memory sweep (GB/s = 1e9 B/s)</h2>']
    b = inp.bench if isinstance(inp.bench, dict) else None
    rows = [r for r in (_get(b, "rows", default=[]) or []) if isinstance(r, dict)]
    if not rows:
        if b is not None and b.get("kind") == "profile":
            o.append(f'<p class="absent">Not in this input: the bench profile ({esc(b.get("date"))}) keeps the ceilings only; '
                     'pass <code>--bench</code> with the file <code>gpuwhy bench --sweep --json</code> wrote for the table.</p>')
        else:
            o.append(_absent("memory sweep", "gpuwhy bench --sweep --json"))
        return "".join(o) + "</section>"
    if b.get("summary"):
        o.append(f"<pre>{esc(b['summary'])}</pre>")
    if b.get("convention"):
        o.append(f'<p class="sub">{esc(b["convention"])}. Median of the timed repetitions; % spec only for rows that '
                 'go through DRAM.</p>')
    headers = ["kernel", "elements", "bytes", "median time", "GB/s", "% spec", "regime"]

    def cells(r: dict) -> list[str]:
        return [esc(r.get("kernel")), esc(_count(r.get("elements"))), esc(fmt_bytes(_f(r.get("bytes_moved")))),
                esc(fmt_time(_f(r.get("median_s")))), esc(num(r.get("gbs"))),
                esc(pct(r.get("pct_of_spec"))) if _f(r.get("pct_of_spec")) is not None else "&ndash;", esc(r.get("regime"))]

    # condensed: per kernel, the largest size of each regime
    best: dict = {}
    order: list = []
    for r in rows:
        key = (str(r.get("kernel")), str(r.get("regime")))
        if key not in best:
            order.append(key)
        if key not in best or (_f(r.get("elements")) or 0) >= (_f(best[key].get("elements")) or 0):
            best[key] = r
    kernels = list(dict.fromkeys(k[0] for k in order))
    order.sort(key=lambda k: (0 if "L2" in k[1] else 1, kernels.index(k[0])))
    o.append("<h3>Largest size of each kernel in each regime</h3>")
    o.append(_table(headers, [cells(best[k]) for k in order], numeric=(1, 2, 3, 4, 5)))
    o.append(f"<details><summary>All {len(rows)} rows of the sweep</summary>")
    o.append(_table(headers, [cells(r) for r in rows], numeric=(1, 2, 3, 4, 5)))
    o.append("</details>")
    cpu = b.get("cpu_vecadd")
    if isinstance(cpu, dict) and _f(cpu.get("cpu_gbs")):
        o.append(f'<p class="note">CPU reference: numpy vecadd of {esc(_count(cpu.get("elements")))} {esc(cpu.get("dtype", ""))} '
                 f'on one core at {esc(num(cpu.get("cpu_gbs")))} GB/s; the GPU\'s {esc(cpu.get("gpu_kernel", ""))} was '
                 f'{esc(num(cpu.get("speedup")))}x faster.</p>')
    for key in ("warnings", "notes"):
        for w in b.get(key) or []:
            o.append(f'<p class="warnbox">{esc(w)}</p>')
    hb, ha = b.get("health_before"), b.get("health_after")
    if isinstance(hb, dict) or isinstance(ha, dict):
        def h(d):
            if not isinstance(d, dict):
                return "n/a"
            r = ", ".join(map(str, d.get("reasons") or [])) or "no clock events"
            return (f"SM {d.get('sm_clock_mhz', 'n/a')}/{d.get('max_sm_clock_mhz', 'n/a')} MHz, memory "
                    f"{d.get('mem_clock_mhz', 'n/a')}/{d.get('max_mem_clock_mhz', 'n/a')} MHz, {d.get('temperature_c', 'n/a')} C, "
                    f"{num(d.get('power_w'))} W, {r}")
        o.append(f'<p class="sub">GPU before: {esc(h(hb))}. After: {esc(h(ha))}.</p>')
    o.append("</section>")
    return "".join(o)


def _latency_section(doc: dict | None) -> str:
    """`bench --latency`: the levels (ns, cycles, working-set span, where the step
    falls), Little's law for DRAM, every working set (folded)."""
    o = ['<section id="latency"><h2>Memory latency ladder (ns per dependent load)</h2>']
    if not isinstance(doc, dict):
        o.append(_absent("latency ladder", "gpuwhy bench --latency --json"))
        return "".join(o) + "</section>"
    if doc.get("summary"):
        o.append(f"<pre>{esc(doc['summary'])}</pre>")
    if doc.get("load"):
        o.append(f'<p class="sub">Load: {esc(doc["load"])}.</p>')
    levels = [lv for lv in (doc.get("levels") or []) if isinstance(lv, dict)]
    if levels:
        rows = []
        for lv in levels:
            lat = _f(lv.get("latency_s"))
            span = esc(fmt_bytes(_f(lv.get("first_bytes")))) + " &ndash; " + esc(fmt_bytes(_f(lv.get("last_bytes"))))
            rows.append([esc(lv.get("name")), esc(num(lat * 1e9) if lat else "n/a"), esc(num(lv.get("cycles"))), span,
                         esc(fmt_bytes(_f(lv.get("edge_bytes")))) if _f(lv.get("edge_bytes")) else "&ndash;"])
        o.append(_table(["level", "ns", "SM cycles", "working sets", "step at"], rows, numeric=(1, 2)))
    else:
        o.append('<p class="absent">The file lists no latency levels.</p>')
    ll = doc.get("littles_law")
    if isinstance(ll, dict) and _f(ll.get("bandwidth_gbs")) and _f(ll.get("latency_s")):
        o.append(f'<p class="note">Little\'s law: {esc(num(ll["bandwidth_gbs"]))} GB/s x {esc(num(ll["latency_s"] * 1e9))} ns = '
                 f'{esc(fmt_si(_f(ll.get("bytes_in_flight")), "B"))} in flight'
                 + (f', {esc(fmt_si(_f(ll.get("bytes_in_flight_per_sm")), "B"))} per SM' if _f(ll.get("bytes_in_flight_per_sm")) else "")
                 + ".</p>")
        needs = [n for n in (ll.get("needs") or []) if isinstance(n, dict)]
        if needs:
            o.append(_table(["bytes in flight per thread", "threads per SM needed", "of the SM's limit"],
                            [[esc(n.get("bytes_per_thread")), esc(num(n.get("threads_per_sm"))),
                              esc(pct(100 * _f(n.get("fraction_of_limit")))) if _f(n.get("fraction_of_limit")) is not None else "n/a"]
                             for n in needs], numeric=(0, 1, 2)))
        srcs = [f"{w}: {ll[k]}" for w, k in (("bandwidth", "bandwidth_source"), ("latency", "latency_source")) if ll.get(k)]
        if srcs:
            o.append(f'<p class="sub">{esc("; ".join(srcs))}.</p>')
    points = [p for p in (doc.get("points") or []) if isinstance(p, dict)]
    if points:
        o.append(f"<details><summary>All {len(points)} working sets</summary>")
        o.append(_table(["working set", "ns per load", "SM cycles", "level"],
                        [[esc(fmt_bytes(_f(p.get("working_set_bytes")))),
                          esc(num(_f(p.get("latency_s")) * 1e9)) if _f(p.get("latency_s")) else "n/a",
                          esc(num(p.get("cycles"))), esc(p.get("level") or "")] for p in points],
                        numeric=(0, 1, 2)))
        o.append("</details>")
    for n in doc.get("notes") or []:
        o.append(f'<p class="note">{esc(n)}</p>')
    for w in doc.get("warnings") or []:
        o.append(f'<p class="warnbox">{esc(w)}</p>')
    o.append("</section>")
    return "".join(o)


def _flat_records(doc: dict) -> list[tuple[str, list[dict]]]:
    """Lists of flat dicts (scalar values) anywhere one level down in ``doc``."""
    out = []
    for k, v in doc.items():
        if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            flat = [{kk: vv for kk, vv in x.items() if not isinstance(vv, (dict, list))} for x in v]
            if any(flat):
                out.append((str(k), flat))
    return out


def _cell(k: str, v: Any) -> str:
    x = _f(v)
    if x is None:
        return esc(v) if v is not None else "&ndash;"
    if k.endswith("_s"):
        return esc(fmt_time(x))
    if k == "bytes" or k.endswith("_bytes"):
        return esc(fmt_bytes(x))
    return esc(num(x))


def _heading(k: str) -> str:
    """A column title from a JSON key: units spelled out (``gbs`` -> ``GB/s``, ``median_s`` -> ``median``)."""
    for suffix, unit in (("_gbs", " GB/s"), ("gbs", "GB/s"), ("_bytes", ""), ("_s", ""), ("_pct", " %"), ("_us", " (us)")):
        if k.endswith(suffix):
            k = k[: -len(suffix)] + unit
            break
    return k.replace("_", " ").strip()


_DIRECTIONS = {"h2d": "host to device", "d2h": "device to host", "bidir": "both ways at once"}


def _generic_tables(doc: dict, skip: set) -> list[str]:
    """Every list of flat records in ``doc`` (not under ``skip``) as a table: for a shape this report does not know."""
    o = []
    for k, recs in _flat_records(doc):
        if k in skip:
            continue
        keys: list[str] = []
        for r in recs:
            for kk in r:
                if kk not in keys:
                    keys.append(kk)
        keys = keys[:10]
        o.append(f"<h3>{esc(_heading(k))}</h3>")
        o.append(_table([esc(_heading(kk)) for kk in keys], [[_cell(kk, r.get(kk)) for kk in keys] for r in recs],
                        numeric=[i for i, kk in enumerate(keys) if any(_f(r.get(kk)) is not None for r in recs)]))
    return o


def _link_section(doc: dict | None) -> str:
    """`bench --link`: the link and its theoretical rate, per direction x memory the
    plateau, small-copy floor and half-bandwidth size, pinned vs pageable, every row
    (folded); any other shape is tabulated as it comes."""
    o = ['<section id="link"><h2>Host&ndash;device link (GB/s = 1e9 B/s)</h2>']
    if not isinstance(doc, dict):
        o.append(_absent("host-device link bandwidth", "gpuwhy bench --link --json"))
        return "".join(o) + "</section>"
    if doc.get("summary"):
        o.append(f"<pre>{esc(doc['summary'])}</pre>")
    link = doc.get("link") if isinstance(doc.get("link"), dict) else {}
    if link:
        theo = _f(link.get("theoretical_gbs"))
        o.append(f'<p class="sub">Link: {esc(link.get("label") or link.get("kind") or "n/a")}'
                 + (f", {esc(num(theo))} GB/s per direction theoretical" if theo else ", no theoretical rate")
                 + (f". {esc(link['note'])}" if link.get("note") else "") + ".</p>")
    curves = [c for c in (doc.get("curves") or []) if isinstance(c, dict)]
    rows = [r for r in (doc.get("rows") or []) if isinstance(r, dict)]
    if curves:
        o.append("<h3>Per direction and memory</h3>")
        o.append(_table(
            ["direction", "memory", "plateau GB/s", "% of theoretical", "small-copy floor", "half bandwidth at", "timing"],
            [[esc(_DIRECTIONS.get(str(c.get("direction")), c.get("direction"))), esc(c.get("memory")),
              esc(num(c.get("plateau_gbs"))), esc(pct(c.get("pct_of_theoretical"))) if _f(c.get("pct_of_theoretical")) else "&ndash;",
              esc(f"{fmt_time(_f(c.get('floor_s')))} at {fmt_bytes(_f(c.get('floor_bytes')))}") if _f(c.get("floor_s")) else "n/a",
              esc(fmt_bytes(_f(c.get("half_bytes")))) if _f(c.get("half_bytes")) else "&ndash;",
              esc(c.get("timing") or "")] for c in curves],
            numeric=(2, 3, 4, 5), wrap=(6,)))
    ratio = doc.get("pinned_pageable_ratio") if isinstance(doc.get("pinned_pageable_ratio"), dict) else {}
    said = []
    for d, r in ratio.items():
        if isinstance(r, dict) and _f(r.get("plateau")):
            small = f" ({num(r['small'])}x at the smallest size)" if _f(r.get("small")) else ""
            said.append(f"{_DIRECTIONS.get(d, d)}: pinned {num(r['plateau'])}x pageable on large copies{small}")
    if said:
        o.append(f'<p class="note">{esc("; ".join(said))} (both timed by the host clock).</p>')
    if rows:
        o.append(f"<details><summary>All {len(rows)} timed copies</summary>")
        o.append(_table(["direction", "memory", "size", "GB/s", "median time", "host-clock GB/s"],
                        [[esc(_DIRECTIONS.get(str(r.get("direction")), r.get("direction"))), esc(r.get("memory")),
                          esc(fmt_bytes(_f(r.get("size_bytes")))), esc(num(r.get("gbs"))), esc(fmt_time(_f(r.get("median_s")))),
                          esc(num(r.get("host_gbs"))) if _f(r.get("host_gbs")) else "&ndash;"] for r in rows],
                        numeric=(2, 3, 4, 5)))
        o.append("</details>")
    if not curves and not rows:
        tables = _generic_tables(doc, {"checks", "devices", "warnings", "notes"})
        o += tables
        if not tables and not doc.get("summary"):
            scal = [(k, v) for k, v in doc.items() if not isinstance(v, (dict, list)) and k not in ("gpuwhy", "schema", "kind")]
            o.append(_kv((k, _cell(k, v)) for k, v in scal) if scal else '<p class="absent">The file holds no link figures.</p>')
    checks = [c for c in (doc.get("checks") or []) if isinstance(c, str)]
    if checks:
        o.append('<p class="sub">Checked before timing:</p><ul class="small">' + "".join(f"<li>{esc(c)}</li>" for c in checks) + "</ul>")
    for n in doc.get("notes") or []:
        o.append(f'<p class="note">{esc(n)}</p>')
    for w in doc.get("warnings") or []:
        o.append(f'<p class="warnbox">{esc(w)}</p>')
    o.append("</section>")
    return "".join(o)


def _check_section(doc: dict | None) -> str:
    o = ['<section id="check"><h2>Check results</h2>']
    if not isinstance(doc, dict):
        o.append(_absent("gpuwhy check", "gpuwhy check --json"))
        return "".join(o) + "</section>"
    pol = doc.get("policy") if isinstance(doc.get("policy"), dict) else {}
    for dev in doc.get("devices") or []:
        if not isinstance(dev, dict):
            continue
        ok = dev.get("passed")
        head = f"{dev.get('device', 'GPU')} ({dev.get('sheet', 'no sheet')})"
        o.append(f"<h3>{esc(head)} {_status('pass' if ok else 'fail' if ok is False else 'skip')}</h3>")
        checks = [c for c in (dev.get("checks") or []) if isinstance(c, dict)]
        rows = [[esc(c.get("name")), _status(c.get("status")), esc(c.get("value")), esc(c.get("threshold")),
                 esc(c.get("detail") or "")] for c in checks]
        o.append(_table(["check", "status", "value", "threshold", "detail"], rows, wrap=(2, 3), wide=(4,),
                        row_class=["fail" if c.get("status") == "fail" else "" for c in checks]))
        if _f(dev.get("elapsed_s")):
            o.append(f'<p class="sub">Took {esc(fmt_time(_f(dev["elapsed_s"])))}.</p>')
    if pol:
        o.append(f'<p class="sub">Policy: {esc(pol.get("source", "n/a"))}; DRAM &ge; {esc(pol.get("min_dram_bandwidth"))} x sheet, '
                 f'FP32 &ge; {esc(pol.get("min_fp32"))} x sheet, {esc(pol.get("tensor_precision", "tensor"))} &ge; '
                 f'{esc(pol.get("min_tensor"))} x sheet, launch &le; {esc(pol.get("max_launch_overhead_us"))} &micro;s.</p>')
    o.append("</section>")
    return "".join(o)


def _device_section(doc: dict | None, spec: _Spec | None) -> str:
    o = ['<section id="device"><h2>The GPU (gpuwhy probe)</h2>']
    devs = [d for d in (_get(doc, "devices", default=[]) or []) if isinstance(d, dict)]
    if not devs:
        if spec:
            o.append(f'<p class="absent">Not probed: this report uses the {esc(spec.name)} spec sheet only '
                     '(run <code>gpuwhy probe --json</code> on the GPU and pass it with --probe).</p>')
        else:
            o.append(_absent("the GPU's identity and health", "gpuwhy probe --json"))
        return "".join(o) + "</section>"
    for d in devs:
        ident, shape, der, hl, sh = (d.get(k) if isinstance(d.get(k), dict) else {} for k in
                                     ("identity", "shape", "derived", "health", "sheet"))
        if len(devs) > 1:
            o.append(f"<h3>{esc(ident.get('name'))} (#{esc(ident.get('cuda_ordinal'))})</h3>")
        mig = ident.get("mig")
        mig_txt = "off" if not mig else (mig.get("profile") if isinstance(mig, dict) and mig.get("profile") else "MIG slice")
        o.append("<h3>Identity</h3>")
        o.append(_kv([
            ("name", esc(ident.get("name"))),
            ("UUID", f"<code>{esc(ident.get('uuid'))}</code>"),
            ("architecture", esc(f"{ident.get('architecture', 'n/a')}, compute capability {ident.get('compute_capability', 'n/a')}")),
            ("PCI", esc(f"bus {ident.get('pci_bus_id', 'n/a')}, device id {ident.get('pci_device_id', 'n/a')}")),
            ("MIG", esc(mig_txt)),
            ("spec sheet", esc(sh.get("note") or sh.get("name") or "no sheet matched")),
        ]))
        mem = _f(shape.get("memory_total_bytes"))
        l2 = _f(shape.get("l2_bytes"))
        o.append("<h3>Shape</h3>")
        o.append(_kv([
            ("SMs", esc(f"{shape.get('sm_count', 'n/a')} x {shape.get('fp32_lanes_per_sm', 'n/a')} FP32 lanes "
                        f"({_count(shape.get('cuda_cores'))} CUDA cores)")),
            ("memory", esc(f"{fmt_si(mem, 'B')} {shape.get('memory_type') or ''}, {shape.get('memory_bus_width_bits', 'n/a')}-bit bus, "
                           f"{shape.get('memory_clock_mhz', 'n/a')} MHz") if mem else "n/a"),
            ("L2", esc(fmt_bytes(l2)) if l2 else "n/a"),
            ("SM clock", esc(f"{shape.get('sm_clock_current_mhz', 'n/a')} MHz now, {shape.get('sm_clock_max_mhz', 'n/a')} MHz max")),
        ]))
        comps = [c for c in (der.get("comparisons") or []) if isinstance(c, dict)]
        o.append("<h3>Derived from the clocks vs the sheet</h3>")
        if comps:
            formulas = {"DRAM bandwidth": der.get("dram_formula"), "FP32 peak": der.get("fp32_formula")}
            rows = [[esc(c.get("quantity")), esc(c.get("unit")), esc(num(c.get("derived"))), esc(num(c.get("sheet"))),
                     esc(f"{_f(c.get('diff_pct')):+.1f}%") if _f(c.get("diff_pct")) is not None else "n/a",
                     _status("pass" if c.get("ok") else "warn"), f"<code>{esc(formulas.get(c.get('quantity')) or '')}</code>"]
                    for c in comps]
            o.append(_table(["quantity", "unit", "derived", "sheet", "diff", "", "formula"], rows, numeric=(2, 3, 4)))
        else:
            o.append('<p class="absent">No derived figures in the probe.</p>')
        o.append("<h3>Health</h3>")
        reasons = hl.get("clock_event_reasons")
        procs = hl.get("processes")
        na = hl.get("n/a") if isinstance(hl.get("n/a"), dict) else {}
        o.append(_kv([
            ("temperature, power", esc(f"{hl.get('temperature_c', 'n/a')} C, {num(hl.get('power_draw_w'))} W of "
                                       f"{num(hl.get('power_limit_w'))} W")),
            ("clock events", esc(", ".join(map(str, reasons)) if reasons else ("none" if isinstance(reasons, list) else "n/a"))),
            ("ECC", esc(f"{'on' if hl.get('ecc_enabled') else 'off' if hl.get('ecc_enabled') is False else 'n/a'}, "
                        f"{hl.get('ecc_volatile_uncorrected', 'n/a')} volatile uncorrected errors")),
            ("memory repair", esc(f"row remap pending: {hl.get('remapped_rows_pending', 'n/a')}, failed: "
                                  f"{hl.get('remapped_rows_failure', 'n/a')}, retired pages pending: "
                                  f"{hl.get('retired_pages_pending') if hl.get('retired_pages_pending') is not None else na.get('retired_pages_pending', 'n/a')}")),
            ("PCIe", esc(f"gen {hl.get('pcie_gen_current', 'n/a')} x{hl.get('pcie_width_current', 'n/a')} "
                         f"(max gen {hl.get('pcie_gen_max', 'n/a')} x{hl.get('pcie_width_max', 'n/a')})")),
            ("modes", esc(f"persistence {'on' if hl.get('persistence_mode') else 'off'}, compute mode "
                          f"{hl.get('compute_mode', 'n/a')}, utilisation {hl.get('utilization_gpu_pct', 'n/a')}%")),
            ("other processes", esc(str(len(procs)) if isinstance(procs, list) else "n/a")),
        ]))
        for w in (d.get("warnings") or []):
            o.append(f'<p class="warnbox">{esc(w)}</p>')
    sw = doc.get("software") if isinstance(doc.get("software"), dict) else None
    if sw:
        o.append("<h3>Software</h3>")
        o.append(_kv([
            ("driver", esc(f"{sw.get('driver_version', 'n/a')} (CUDA {sw.get('cuda_driver_version_text', 'n/a')})")),
            ("NVRTC", esc(sw.get("nvrtc_version"))),
            ("performance counters", esc(sw.get("perf_counters"))),
        ]))
    o.append("</section>")
    return "".join(o)


def _wrap_command(cmd: str) -> str:
    """``cmd`` with a shell line continuation before each ``--option`` (the same command
    to a shell; returned unchanged when that would not hold, e.g. " --" inside quotes)."""
    import shlex

    wrapped = cmd.replace(" --", " \\\n    --")
    try:
        same = shlex.split(wrapped.replace("\\\n", "")) == shlex.split(cmd)  # a shell drops backslash-newline
    except ValueError:
        same = False
    return wrapped if same and wrapped != cmd else cmd


def _provenance(inp: ReportInput) -> str:
    o = ['<section id="made"><h2>How this report was made</h2>']
    o.append(_kv([("gpuwhy", f"<code>{esc(inp.version)}</code>"), ("written", esc(inp.generated or "n/a"))]))
    if inp.commands:
        o.append("<h3>Commands</h3>")
        o.append("<pre>" + "\n".join(esc(_wrap_command(c)) for c in inp.commands) + "</pre>")
    docs = [("probe", inp.probe), ("bench", inp.bench), ("check", inp.check), ("latency", inp.latency), ("link", inp.link)]
    where = dict(inp.inputs)
    rows = []
    for what, doc in docs:
        if not isinstance(doc, dict):
            continue
        made = doc.get("gpuwhy") or ""
        when = doc.get("date") or ""
        kind = doc.get("kind") or ""
        mode = doc.get("mode") if isinstance(doc.get("mode"), str) else ""
        rows.append([esc(what), f"<code>{esc(where.get(what, 'n/a'))}</code>", esc(f"{kind}{' ' + mode if mode else ''}"),
                     esc(made or "n/a"), esc(when or "n/a")])
    if rows:
        o.append("<h3>Inputs</h3>")
        o.append(_table(["section", "from", "kind", "gpuwhy version", "date"], rows))
    o.append("</section>")
    return "".join(o)


def render_report(inp: ReportInput) -> str:
    """The whole report as one HTML document (UTF-8 text, self-contained).

    Sections: summary cards, the roofline with any points, ceilings measured vs
    sheet, the check results, the GPU (probe), the memory sweep, launch overhead,
    latency ladder, link, and how the report was made. Missing inputs give a
    "not measured" line in their section.

    Raises:
        ValueError: a point with non-positive FLOPs, bytes or time (see
            :func:`gpuwhy.model.roofline.classify`).
    """
    spec = spec_of(inp)
    meas = measured_of(inp)
    gpu = _gpu_name(inp, spec)
    ceilings = point_ceilings(inp, spec, meas)
    placed = place_points(inp.points, ceilings) if ceilings is not None and inp.points else []
    title = f"gpuwhy report: {gpu}"
    sub = [f"gpuwhy {inp.version}"]
    if inp.generated:
        sub.append(f"written {inp.generated}")
    if spec:
        sub.append(f"sheet {spec.name}")
    sub.append(f"roofline precision {inp.dtype}")
    toc = [("roofline", "Roofline"), ("ceilings", "Ceilings"), ("check", "Check"), ("device", "GPU"),
           ("sweep", "Memory sweep"), ("launch", "Launch"), ("latency", "Latency"), ("link", "Link"), ("made", "How made")]
    body = [
        f"<header><h1>{esc(title)}</h1><p class=\"sub\">{esc(' · '.join(sub))}</p></header>",
        '<nav class="toc" aria-label="sections">' + "".join(f'<a href="#{k}">{esc(v)}</a>' for k, v in toc) + "</nav>",
        _summary(inp, spec, meas, gpu),
        _roofline_section(inp, spec, meas, placed, ceilings),
        _ceilings_section(inp, spec, meas),
        _check_section(inp.check),
        _device_section(inp.probe, spec),
        _sweep_section(inp),
        _launch_section(meas),
        _latency_section(inp.latency),
        _link_section(inp.link),
        _provenance(inp),
        f'<footer>Written by gpuwhy {esc(inp.version)}. Units: GB/s = 1e9 B/s; TFLOP/s = 1e12 FLOP/s (int8: TOPS); '
        'intensity in FLOP per DRAM byte (read + written). Peaks are dense.</footer>',
    ]
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="generator" content="gpuwhy {esc(inp.version)}">'
        f"<title>{esc(title)}</title><style>{_CSS}</style></head>\n"
        "<body><main>\n" + "\n".join(body) + "\n</main></body></html>\n"
    )


def is_gpuwhy_report(text: str) -> bool:
    """True when ``text`` (the start of a file is enough) carries :data:`GENERATOR_MARK`."""
    return GENERATOR_MARK in text
