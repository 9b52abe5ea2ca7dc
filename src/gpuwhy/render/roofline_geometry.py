"""The one roofline geometry behind every drawing gpuwhy makes of a roofline: the terminal
chart and the PNG/SVG file of :mod:`gpuwhy.render.plot`, and the inline SVG of the HTML
report (:mod:`gpuwhy.render.report_svg`).

Pure: numbers in, numbers and plain strings out (no matplotlib, no markup).

Axes, the same in every drawing, both log10 with a tick at every decade:

- x: arithmetic intensity in FLOP/byte (FLOP per DRAM byte read + written), ticks
  written ``0.01``, ``1``, ``1,000`` (``1e5``, ``1e-4`` outside 1e-3 .. 1e4);
- y: the rate in FLOP/s, each decade written with an SI prefix (``10 GFLOP/s``,
  ``100 TFLOP/s``, ``1 PFLOP/s``; ``OP/s`` when the first roof is an integer
  precision such as int8).

Inside, rates are FLOP/s and bandwidths B/s (:class:`Roof`); GB/s = 1e9 B/s and
TFLOP/s = 1e12 FLOP/s appear only in label text.

What is here: :class:`Roof` (min(peak, bandwidth x I) and its ridge point);
:class:`Frame` (axis extents: whole decades for a character grid, or with headroom
for labels inside the plot) and the decade and minor ticks; :class:`Plane` (a frame
on a pixel box); :func:`drawn_at` / :class:`Mark` (where a classified point sits:
at its achieved rate when timed, else on the roof). Where the labels go (the placement
rules with their collision handling, :func:`~gpuwhy.render.roofline_labels.layout`) is
:mod:`gpuwhy.render.roofline_labels`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from ..units import fmt_cell, fmt_decade, fmt_si

#: Line height of multi-line labels, in font sizes.
LINE = 1.2
#: A pixel box: (x0, y0, x1, y1) with y growing downwards.
Box = tuple[float, float, float, float]


# ---------------------------------------------------------------------------
# Roofs
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Roof:
    """One roof: min(peak, bandwidth x I).

    Attributes:
        precision: the ``peak_tflops`` key (``fp32``, ``bf16``, ``fp16_nontensor``).
        kind: ``spec`` (from a spec sheet, drawn dashed) or ``measured`` (solid).
        peak_flops: FLOP/s; bandwidth: B/s.
        source: where the figures came from.
    """

    precision: str
    kind: str
    peak_flops: float
    bandwidth: float
    source: str = ""

    @property
    def ridge(self) -> float:
        """FLOP/byte where the slope meets the flat roof (peak / bandwidth)."""
        return self.peak_flops / self.bandwidth

    @property
    def measured(self) -> bool:
        return self.kind == "measured"

    @property
    def label(self) -> str:
        """``fp32 spec``, ``bf16 measured``."""
        return f"{self.precision} {self.kind}"

    @property
    def peak_tflops(self) -> float:
        return self.peak_flops / 1e12

    @property
    def bandwidth_gbs(self) -> float:
        return self.bandwidth / 1e9

    def at(self, intensity: float) -> float:
        """Attainable FLOP/s at ``intensity`` FLOP/byte."""
        return min(self.peak_flops, self.bandwidth * intensity)

    def vertices(self, frame: Frame) -> tuple[tuple[float, float], ...]:
        """The roof inside ``frame`` as (FLOP/byte, FLOP/s) corners: where the slope
        enters (the left edge or the bottom), the ridge, the right edge."""
        x0 = max(frame.x_lo, frame.y_lo / self.bandwidth)
        return (x0, self.bandwidth * x0), (self.ridge, self.peak_flops), (frame.x_hi, self.peak_flops)

    def to_dict(self) -> dict:
        return {"precision": self.precision, "kind": self.kind, "peak_tflops": self.peak_flops / 1e12,
                "bandwidth_gbs": self.bandwidth / 1e9, "ridge": self.ridge, "source": self.source}


def slots(roofs: Sequence[Roof]) -> dict[str, int]:
    """A colour slot per precision, in the order the precisions first appear (a
    precision's spec and measured roofs share a colour)."""
    out: dict[str, int] = {}
    for r in roofs:
        out.setdefault(r.precision, len(out))
    return out


#: How each memory level is written in labels (``L1`` is the L1 data cache and shared memory).
LEVEL_WORDS = {"DRAM": "DRAM", "L2": "L2", "L1": "L1/shared"}
#: An elementwise kernel's intensity (FLOP/byte): every frame reaches left of it, so
#: vecadd-like kernels are always on the chart.
ELEMENTWISE_INTENSITY = 0.08


@dataclass(frozen=True)
class LevelSlope:
    """A memory level's roof besides DRAM's (whose slope the :class:`Roof` s draw):
    bandwidth x I up to the highest compute roof of the drawing, where its ridge is marked.

    Attributes:
        level: ``L2`` or ``L1`` (L1 and shared memory).
        kind: ``measured`` (solid), ``spec`` (a sheet's published figure) or ``clock``
            (derived from the clock: shared memory's 128 B/clk/SM); the last two dashed.
        bandwidth: B/s.
        source: where the figure came from.
    """

    level: str
    kind: str
    bandwidth: float
    source: str = ""

    @property
    def measured(self) -> bool:
        return self.kind == "measured"

    @property
    def bandwidth_gbs(self) -> float:
        return self.bandwidth / 1e9

    def ridge(self, top: float) -> float:
        """FLOP/byte where the slope meets the ``top`` FLOP/s roof."""
        return top / self.bandwidth

    def vertices(self, frame: "Frame", top: float) -> tuple[tuple[float, float], tuple[float, float]]:
        """Where the slope enters ``frame`` (left edge or bottom) and its ridge on ``top``."""
        x0 = max(frame.x_lo, frame.y_lo / self.bandwidth)
        return (x0, self.bandwidth * x0), (self.ridge(top), top)

    def to_dict(self) -> dict:
        return {"level": self.level, "kind": self.kind, "bandwidth_gbs": self.bandwidth / 1e9, "source": self.source}


def slope_texts(level: str, slopes: Sequence, spec_word: str = "spec") -> list[str]:
    """The label of a level's slopes, longest first: ``L1/shared GB/s: clock limit 33,454,
    measured 31,200``, then the measured figure alone, then the shortest form (a label
    that does not fit along its line takes the next)."""
    word = {"measured": "measured", "spec": spec_word, "clock": "clock limit"}
    name = LEVEL_WORDS.get(level, level)
    parts, meas = [], None
    for s in slopes:
        part = f"{word.get(s.kind, s.kind)} {fmt_cell(s.bandwidth / 1e9)}"
        if part not in parts:
            parts.append(part)
        if s.kind == "measured":
            meas = s
    out = [f"{name} GB/s: {', '.join(parts)}"]
    if len(parts) > 1 and meas is not None:
        out.append(f"{name} GB/s: measured {fmt_cell(meas.bandwidth / 1e9)}")
    best = meas or max(slopes, key=lambda s: s.bandwidth)
    out.append(f"{name} {fmt_cell(best.bandwidth / 1e9)} GB/s")
    return list(dict.fromkeys(out))


def slope_text(level: str, slopes: Sequence, spec_word: str = "spec") -> str:
    """``L2 GB/s: measured 9,850`` / ``DRAM GB/s: spec 4,800, measured 4,598``: the full label of a level."""
    return slope_texts(level, slopes, spec_word)[0]


def drawn_at(verdict) -> float:
    """FLOP/s at which a classified point is drawn: its achieved rate when it was timed,
    else the attainable rate on the roof (``verdict``: a :class:`~gpuwhy.model.roofline.classify.Verdict`)."""
    return verdict.achieved_flops if verdict.achieved_flops else verdict.attainable_flops


@dataclass(frozen=True)
class Mark:
    """A user's point to draw: ``intensity`` FLOP/byte at ``flops`` FLOP/s, ``attainable``
    FLOP/s on the roof above it; ``timed`` when ``flops`` is the achieved rate. ``levels``
    holds ``(level, FLOP/byte)`` of the same kernel at other memory levels (Nsight
    Compute's bytes per level): drawn as markers at the same rate, joined by a line."""

    label: str
    intensity: float
    flops: float
    attainable: float
    timed: bool
    levels: tuple[tuple[str, float], ...] = ()

    @classmethod
    def of(cls, label: str, verdict, levels: Sequence[tuple[str, float]] = ()) -> Mark:
        return cls(label, verdict.arithmetic_intensity, drawn_at(verdict), verdict.attainable_flops,
                   bool(verdict.achieved_flops), tuple(levels))


# ---------------------------------------------------------------------------
# Axes: extents and ticks
# ---------------------------------------------------------------------------


def decade_floor(x: float) -> float:
    """The largest power of ten <= x (x > 0)."""
    return 10.0 ** math.floor(math.log10(x))


def decade_ceil(x: float) -> float:
    """The smallest power of ten >= x (x > 0)."""
    return 10.0 ** math.ceil(math.log10(x))


def log_grid(lo: float, hi: float, n: int = 200) -> list[float]:
    """``n`` geometric steps from ``lo`` to ``hi`` inclusive."""
    return [lo * (hi / lo) ** (i / (n - 1)) for i in range(n)]


def rate_unit(precision: str) -> str:
    """The y axis unit for roofs of ``precision``: ``OP/s`` for integer precisions, else ``FLOP/s``."""
    return "OP/s" if precision.startswith("int") else "FLOP/s"


def decades(lo: float, hi: float) -> list[int]:
    """Exponents of the powers of ten in [lo, hi]."""
    l0, l1 = math.log10(lo), math.log10(hi)
    return [e for e in range(math.floor(l0), math.ceil(l1) + 1) if l0 - 1e-9 <= e <= l1 + 1e-9]


def minor_ticks(lo: float, hi: float) -> list[float]:
    """2..9 x each decade strictly inside (lo, hi)."""
    out = []
    for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        for m in range(2, 10):
            v = 10.0**e * m
            if lo < v < hi:
                out.append(v)
    return out


@dataclass(frozen=True)
class Frame:
    """Axis extents: x in FLOP/byte, y in FLOP/s (both > 0)."""

    x_lo: float
    x_hi: float
    y_lo: float
    y_hi: float

    @classmethod
    def compact(cls, roofs: Sequence[Roof], xs: Sequence[float] = (), ys: Sequence[float] = ()) -> Frame:
        """Whole decades for a character grid: a decade of margin either side of every
        ridge and of ``xs`` (FLOP/byte); from the lowest roof (or ``ys``, FLOP/s) at the
        left edge to the decade above the highest peak."""
        px = [r.ridge for r in roofs] + list(xs)
        px = [x for x in px if x and x > 0 and math.isfinite(x)] or [1.0]
        x_lo = min(decade_floor(min(px) / 10), decade_floor(ELEMENTWISE_INTENSITY))
        x_hi = decade_ceil(max(px) * 10)
        tops = [r.peak_flops for r in roofs] + list(ys)
        lows = [r.bandwidth * x_lo for r in roofs] + list(ys)
        tops = [t for t in tops if t and t > 0] or [1.0]
        lows = [t for t in lows if t and t > 0] or [min(tops)]
        return cls(x_lo, x_hi, decade_floor(min(lows)), decade_ceil(max(tops) * 1.01))

    @classmethod
    def labelled(cls, roofs: Sequence[Roof], xs: Sequence[float] = (), ys: Sequence[float] = ()) -> Frame:
        """Room for labels inside the plot: x from the decade below a third of the
        smallest of :data:`ELEMENTWISE_INTENSITY`, the ridges and ``xs`` to 6 x the largest
        (at least four decades); y from the lowest roof at the left edge (or ``ys``) to 5 x the
        highest peak or ``ys`` (two rows of labels above the highest roof), at least
        three decades and at most eight.

        Raises:
            ValueError: no roof.
        """
        if not roofs:
            raise ValueError("a roofline frame needs at least one roof")
        px = [r.ridge for r in roofs] + list(xs)
        py = [r.peak_flops for r in roofs] + list(ys)
        x_lo = decade_floor(min(min(px), ELEMENTWISE_INTENSITY) / 3)
        x_hi = max(px) * 6
        if math.log10(x_hi / x_lo) < 4:
            x_hi = x_lo * 1e4
        y_hi = max(py) * 5
        y_floor = min([min(r.bandwidth for r in roofs) * x_lo] + [y for y in py if y > 0])
        y_lo = decade_floor(max(y_floor, y_hi * 1e-8))
        if math.log10(y_hi / y_lo) < 3:
            y_lo = decade_floor(y_hi / 1e3)
        return cls(x_lo, x_hi, y_lo, y_hi)


# ---------------------------------------------------------------------------
# A frame on pixels
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Tick:
    """A decade tick at pixel ``pos`` with its text (``""`` where only every other decade is labelled)."""

    pos: float
    text: str


@dataclass(frozen=True)
class Plane:
    """``frame`` drawn in a ``width`` x ``height`` px picture, the plot area inset by the
    margins (px); y grows downwards."""

    frame: Frame
    width: float
    height: float
    left: float
    right: float
    top: float
    bottom: float

    @classmethod
    def fit(cls, frame: Frame, width: float, height: float, unit: str = "FLOP/s", font: float = 13,
            top: float = 8, bottom: float = 44, right: float = 8) -> Plane:
        """A plane whose left margin holds the longest y tick text at ``font`` px."""
        widest = max((len(t) for _, t in _y_labels(frame, unit)), default=4)
        return cls(frame, width, height, math.ceil(widest * font * 0.57) + 10, right, top, bottom)

    @property
    def pw(self) -> float:
        return self.width - self.left - self.right

    @property
    def ph(self) -> float:
        return self.height - self.top - self.bottom

    @property
    def logs(self) -> tuple[float, float, float, float]:
        f = self.frame
        return math.log10(f.x_lo), math.log10(f.x_hi), math.log10(f.y_lo), math.log10(f.y_hi)

    def X(self, x: float) -> float:
        """Pixel column of ``x`` FLOP/byte."""
        lx0, lx1, _, _ = self.logs
        return self.left + (math.log10(x) - lx0) / (lx1 - lx0) * self.pw

    def Y(self, y: float) -> float:
        """Pixel row of ``y`` FLOP/s."""
        _, _, ly0, ly1 = self.logs
        return self.top + self.ph - (math.log10(y) - ly0) / (ly1 - ly0) * self.ph

    def x_ticks(self) -> list[Tick]:
        """A tick per decade of FLOP/byte; every decade labelled up to seven, else every other."""
        es = decades(self.frame.x_lo, self.frame.x_hi)
        step = 1 if len(es) <= 7 else 2
        return [Tick(self.X(10.0**e), fmt_decade(e) if i % step == 0 else "") for i, e in enumerate(es)]

    def y_ticks(self, unit: str = "FLOP/s") -> list[Tick]:
        """A tick per decade of ``unit``; every decade labelled up to nine, else every other."""
        return [Tick(self.Y(10.0**e), t) for e, t in _y_labels(self.frame, unit)]

    def x_tick_anchor(self, tick: Tick, font: float) -> tuple[float, str]:
        """Where an x tick's text goes: centred under it, or pulled in at the picture's edges
        (``(x, "middle" | "start" | "end")``)."""
        half = len(tick.text) * font * 0.3
        if tick.pos + half > self.width - 1:
            return self.width - 1, "end"
        if tick.pos - half < 1:
            return 1, "start"
        return tick.pos, "middle"


def _y_labels(frame: Frame, unit: str) -> list[tuple[int, str]]:
    """(exponent, text) per decade of y; every decade labelled up to nine, else every other."""
    es = decades(frame.y_lo, frame.y_hi)
    step = 1 if len(es) <= 9 else 2
    return [(e, fmt_si(10.0**e, unit) if i % step == 0 else "") for i, e in enumerate(es)]
