"""Where the labels of a roofline drawing go: :func:`layout` places every label of the
PNG/SVG file (:mod:`gpuwhy.render.plot`) and of the HTML report's SVG
(:mod:`gpuwhy.render.report_svg`) on a :class:`~gpuwhy.render.roofline_geometry.Plane`.

Pure: numbers in, pixel positions and plain strings out. :class:`Labels` is the greedy
placement with its collision handling (markers and labels are hard boxes, roof lines
soft ones); :func:`layout` blocks the markers and lines, then places, in priority order,
the bandwidth labels along the slopes, each point's label, one label per precision
with its peaks, one ridge label per precision and the measured sweeps' ridges.
Positions are px of the plane (y grows downwards); text sizes px.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

from ..units import fmt_cell, tera_unit
from .roofline_geometry import LINE, Box, LevelSlope, Mark, Plane, Roof, slope_texts, slots


def text_box(x: float, y: float, text: str, size: float, anchor: str, bold: bool = False) -> Box:
    """The box of ``text`` (lines split at ``\\n``) at ``size`` px with its first baseline
    at ``y``, anchored at ``x`` (``start``, ``middle``, ``end``); glyphs 0.57 em wide (0.63 bold)."""
    lines = text.split("\n")
    w = max(len(t) for t in lines) * size * (0.63 if bold else 0.57)
    x0 = x if anchor == "start" else (x - w if anchor == "end" else x - w / 2)
    return (x0, y - size * 0.85, x0 + w, y + size * (0.25 + LINE * (len(lines) - 1)))


def _hits(b: Box, boxes: Sequence[Box]) -> bool:
    return any(b[0] < o[2] and o[0] < b[2] and b[1] < o[3] and o[1] < b[3] for o in boxes)


class Labels:
    """Greedy placement of text labels in the plot: the first candidate position whose
    box stays inside ``bounds`` and overlaps nothing placed before it wins (see
    :meth:`place` for the "near" candidates that may cross a roof line), else the
    candidate with the least overlap. Hard boxes are markers and labels; soft boxes
    are roof lines."""

    def __init__(self, bounds: Box):
        self.bounds = bounds
        self.boxes: list[Box] = []
        self.soft: list[Box] = []

    def inside(self, b: Box) -> bool:
        bx0, by0, bx1, by1 = self.bounds
        return bx0 <= b[0] and b[2] <= bx1 and by0 <= b[1] and b[3] <= by1

    def block(self, b: Box, soft: bool = False) -> None:
        (self.soft if soft else self.boxes).append(b)

    def block_line(self, a: tuple[float, float], b: tuple[float, float]) -> None:
        """Soft boxes every 5 px or so along the segment a-b."""
        (ax, ay), (bx, by) = a, b
        n = max(1, int(math.hypot(bx - ax, by - ay) / 5))
        for k in range(n + 1):
            qx, qy = ax + (bx - ax) * k / n, ay + (by - ay) * k / n
            self.block((qx - 1, qy - 1, qx + 1, qy + 1), soft=True)

    def overlap(self, b: Box) -> float:
        """Area of ``b`` covered by the boxes placed so far (summed; hard boxes count ten
        times as much as soft ones)."""
        def area(boxes):
            return sum(max(0.0, min(b[2], o[2]) - max(b[0], o[0])) * max(0.0, min(b[3], o[3]) - max(b[1], o[1]))
                       for o in boxes)
        return 10 * area(self.boxes) + area(self.soft)

    def place(self, text: str, size: float, candidates: Sequence[tuple], near: int = 0,
              bold: bool = False, strict: bool = False) -> tuple[float, float, str, str] | None:
        """Pick a position for ``text``: ``candidates`` are ``(x, y, anchor)`` or
        ``(x, y, anchor, other_text)`` (another wording of the label for that spot).
        With ``near`` > 0 the first ``near`` candidates may cross soft boxes (a line)
        before any later candidate is considered. Returns ``(x, y, anchor, text)``
        and reserves its box (the last of :attr:`boxes`); with ``strict``, None (and nothing
        reserved) when no candidate is inside and clear of every box."""
        full = [(c[0], c[1], c[2], c[3] if len(c) > 3 else text) for c in candidates]
        boxed = [(c, text_box(c[0], c[1], c[3], size, c[2], bold)) for c in full]
        inside = [(i, c, b) for i, (c, b) in enumerate(boxed) if self.inside(b)]
        passes: list[Callable[[int, Box], bool]] = []
        if near:
            passes += [lambda i, b: i < near and not _hits(b, self.boxes) and not _hits(b, self.soft),
                       lambda i, b: i < near and not _hits(b, self.boxes)]
        passes.append(lambda i, b: not _hits(b, self.boxes) and not _hits(b, self.soft))
        pick = None
        for ok in passes:
            pick = next(((c, b) for i, c, b in inside if ok(i, b)), None)
            if pick is not None:
                break
        if pick is None:
            if strict:  # only a spot inside, clear of every label and line, will do
                return None
            pick = min([(c, b) for _, c, b in inside] or boxed, key=lambda cb: self.overlap(cb[1]))
        (x, y, anchor, t), b = pick
        self.boxes.append(b)
        return x, y, anchor, t


@dataclass(frozen=True)
class Label:
    """A placed label: first baseline at (``x``, ``y``) px, ``anchor`` start/middle/end,
    ``text`` lines split at ``\\n``, ``size`` px. ``slot`` is the colour slot of its
    roofs (None: a user's point). ``leader`` is a line (x1, y1, x2, y2) px from the
    point to a label placed away from it, or None."""

    kind: str  # point | roof | ridge | sweep
    x: float
    y: float
    anchor: str
    text: str
    size: float
    bold: bool = False
    slot: int | None = None
    leader: tuple[float, float, float, float] | None = None

    @property
    def lines(self) -> list[str]:
        return self.text.split("\n")


@dataclass(frozen=True)
class SlopeLabel:
    """A bandwidth label along a slope: anchored at (``x``, ``y``) px on the slope, rotated
    by ``angle`` degrees (clockwise, as SVG), its baseline ``offset`` px above the line (7;
    negative: below it, where the line above leaves no room)."""

    x: float
    y: float
    angle: float
    text: str
    slot: int
    #: The small boxes (px) that cover the rotated text, reserved against other labels.
    boxes: tuple[Box, ...] = ()
    offset: float = 7.0

    def baseline(self) -> tuple[float, float]:
        """The start of the text's baseline, px."""
        th = math.radians(self.angle)
        return self.x + self.offset * math.sin(th), self.y - self.offset * math.cos(th)


@dataclass(frozen=True)
class PlacedMark:
    """A :class:`Mark` at (``x``, ``y``) px; ``roof_y``: the roof above it (px) when timed, else None;
    ``level_xs``: ``(level, x px)`` of its markers at other memory levels (same ``y``)."""

    mark: Mark
    x: float
    y: float
    roof_y: float | None
    level_xs: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class Layout:
    """Everything a drawing places, in px of its :class:`Plane`: the roofs' corners, the
    ridge points, the user's points, the slope label and the other labels (in drawing order)."""

    plane: Plane
    slots: dict
    paths: tuple  # (Roof, ((x, y), (x, y), (x, y)))
    ridges: tuple  # (Roof, x, y)
    marks: tuple[PlacedMark, ...]
    slope: SlopeLabel
    labels: tuple[Label, ...]
    #: The other memory levels: (LevelSlope, (entry, ridge) px), their ridges, their labels.
    level_paths: tuple = ()
    level_labels: tuple[SlopeLabel, ...] = ()
    #: Slope labels with no free spot (their full text): written under the plot, never over a label.
    unplaced: tuple[str, ...] = ()


def layout(plane: Plane, roofs: Sequence[Roof], marks: Sequence[Mark] = (), *, two_line: bool = False,
           spec_word: str = "spec", reserved: Sequence[Box] = (), colour_slots: dict | None = None,
           sweep_ridges: Sequence[tuple[float, float, str, int]] = (), slopes: Sequence[LevelSlope] = ()) -> Layout:
    """Place the labels of a roofline drawing on ``plane``.

    Markers and ridge points are blocked first, the roof lines softly; then, in
    priority order: one DRAM bandwidth label along the slope, each point's label
    (bold; right of the point, then below, above, or further away with a leader
    line), one label per precision with its peaks (over the flat part of its roofs),
    one ridge label per precision (below its ridge), then each of ``sweep_ridges``
    ((FLOP/byte, FLOP/s, text, colour slot): empirical ridges of measured sweeps).
    ``two_line`` breaks point labels after the name (narrow drawings);
    ``spec_word`` names the spec-sheet roofs (``spec``, ``sheet``); ``reserved``
    boxes (px) are kept free (a legend). ``colour_slots`` (precision -> slot) replaces
    the default :func:`slots` of ``roofs``. ``slopes`` are the other memory levels
    (:class:`LevelSlope`): each drawn up to the highest peak, its ridge marked, one label
    per level along it (placed after the DRAM label, before the points' labels).

    Raises:
        ValueError: no roof.
    """
    if not roofs:
        raise ValueError("a roofline layout needs at least one roof")
    slot = colour_slots if colour_slots is not None else slots(roofs)
    labels = Labels((plane.left + 2, plane.top + 2, plane.left + plane.pw - 2, plane.top + plane.ph - 2))
    for b in reserved:
        labels.block(b)
    placed = _block_marks(plane, marks, labels)
    paths, ridges = _block_roofs(plane, roofs, labels)
    top_peak = max(r.peak_flops for r in roofs)
    level_paths, own = _block_levels(plane, slopes, top_peak, labels)

    def slope_labels():
        return _slope_labels(plane, roofs, slopes, slot, spec_word, labels, own, top_peak)

    # Alone, the DRAM label takes its place along the slope first (the points' labels keep
    # clear of it); beside other levels' slopes the points', roofs' and ridges' labels go
    # first and the slope labels find their spots along their lines after them.
    along = None if slopes else slope_labels()
    roof_top = min(plane.Y(r.peak_flops) for r in roofs)
    out = [_point_label(pm, labels, two_line, bool(slopes), roof_top, plane.left + plane.pw - 4) for pm in placed]
    by_prec: dict[str, list[Roof]] = {}
    for r in roofs:
        by_prec.setdefault(r.precision, []).append(r)
    for prec, rs in by_prec.items():  # one per precision, right-aligned along the flat part
        out.append(_roof_label(plane, prec, rs, slot[prec], spec_word, labels))
    for prec, rs in by_prec.items():  # "ridge 206 sheet" / "188 measured"
        out.append(_ridge_label(plane, rs, slot[prec], spec_word, labels))
    if along is None:  # beside other levels: the slope labels last, they have the most spots to choose from
        along = slope_labels()
    out += [_sweep_label(plane, sweep, labels) for sweep in sweep_ridges]
    slope, level_labels, unplaced = along
    return Layout(plane, slot, tuple(paths), tuple(ridges), tuple(placed), slope, tuple(out), tuple(level_paths),
                  tuple(level_labels), tuple(unplaced))


def _block_marks(plane: Plane, marks: Sequence[Mark], labels: Labels) -> list[PlacedMark]:
    """Each point at its pixels, its marker (and its markers at other levels, joined by a line) blocked."""
    placed = []
    for m in marks:
        px, py = plane.X(m.intensity), plane.Y(m.flops)
        lx = tuple((lv, plane.X(i)) for lv, i in m.levels if i > 0)
        placed.append(PlacedMark(m, px, py, plane.Y(m.attainable) if m.timed else None, lx))
        labels.block((px - 7, py - 7, px + 7, py + 7))
        for _, x in lx:
            labels.block((x - 6, py - 6, x + 6, py + 6))
        if lx:
            xs_all = [px] + [x for _, x in lx]
            labels.block_line((min(xs_all), py), (max(xs_all), py))
    return placed


def _block_roofs(plane: Plane, roofs: Sequence[Roof], labels: Labels) -> tuple[list, list]:
    """(each roof's corners in px, each ridge point in px); the ridges blocked, the roof lines softly."""
    paths, ridges = [], []
    for r in roofs:
        corners = tuple((plane.X(x), plane.Y(y)) for x, y in r.vertices(plane.frame))
        paths.append((r, corners))
        cx, cy = corners[1]
        ridges.append((r, cx, cy))
        labels.block((cx - 6, cy - 6, cx + 6, cy + 6))
        labels.block_line(corners[0], corners[1])  # keep labels off the roof lines
        labels.block_line(corners[1], corners[2])
    return paths, ridges


def _block_levels(plane: Plane, slopes: Sequence[LevelSlope], top_peak: float, labels: Labels) -> tuple[list, dict]:
    """(each other level's slope in px up to ``top_peak`` FLOP/s, level -> the soft boxes of its own
    lines); their ridges blocked, their lines softly."""
    level_paths, own = [], {}
    for ls in slopes:
        (x0, y0), (xr, yr) = ls.vertices(plane.frame, top_peak)
        corners = ((plane.X(x0), plane.Y(y0)), (plane.X(xr), plane.Y(yr)))
        level_paths.append((ls, corners))
        labels.block((corners[1][0] - 6, corners[1][1] - 6, corners[1][0] + 6, corners[1][1] + 6))
        n0 = len(labels.soft)
        labels.block_line(*corners)
        own.setdefault(ls.level, []).extend(labels.soft[n0:])
    return level_paths, own


def _slope_labels(plane: Plane, roofs: Sequence[Roof], slopes: Sequence[LevelSlope], slot: dict, spec_word: str,
                  labels: Labels, own: dict, top_peak: float) -> tuple[SlopeLabel, list[SlopeLabel], list[str]]:
    """(the DRAM label along its slope, one label along each other level's slopes, the full text of
    each that found no spot)."""
    unplaced: list[str] = []
    dram = _slope_label(plane, roofs, slot, spec_word, labels, crowded=bool(slopes))
    if not dram.text:
        unplaced.append(_dram_text(roofs, spec_word))
    by_level: dict[str, list[LevelSlope]] = {}
    for ls in slopes:
        by_level.setdefault(ls.level, []).append(ls)
    level_labels = []
    for lv, group in by_level.items():
        ref = max(group, key=lambda g: g.bandwidth)
        texts = slope_texts(lv, group, spec_word)
        got = _along(plane, ref.bandwidth, ref.ridge(top_peak), texts, -1, labels, own.get(lv, ()))
        level_labels.append(got)
        if not got.text:
            unplaced.append(texts[0])
    return dram, level_labels, unplaced


def _point_label(pm: PlacedMark, labels: Labels, two_line: bool, crowded: bool, roof_top: float, edge: float) -> Label:
    """A point's bold label: right of the point (which may cross a line), then below, above, or
    further away with a leader line; in a ``crowded`` drawing a clean spot next to the point, on
    one line, else on two, before any farther one. ``roof_top``: the highest roof's row, ``edge``:
    the rightmost column (px)."""
    px, py = pm.x, pm.y
    text = pm.mark.label.replace(": ", "\n", 1) if two_line else pm.mark.label
    up = 12 * LINE * text.count("\n")  # a label above something starts higher by its extra lines
    cands = [(px + 9, py + 4, "start"), (px + 9, py + 18, "start"), (px - 9, py + 18, "end"), (px - 9, py + 4, "end"),
             (edge, roof_top - 10 - up, "end"), (px, roof_top - 10 - up, "middle"),
             (px, py - 12 - up, "middle"), (px + 9, py - 10 - up, "start"), (px - 9, py - 10 - up, "end"),
             (edge, py + 20, "end")]
    for dy in range(34, 260, 16):
        cands += [(px - 9, py + dy, "end"), (px + 9, py + dy, "start"), (edge, py + dy, "end")]
    got = None
    if crowded and "\n" not in text and ": " in text:
        two = text.replace(": ", "\n", 1)
        got = labels.place(text, 12, cands[:4], bold=True, strict=True) or labels.place(
            text, 12, [(px + 9, py + 4, "start", two), (px - 9, py + 4, "end", two),
                       (px + 9, py - 10 - 12 * LINE, "start", two), (px - 9, py - 10 - 12 * LINE, "end", two)],
            bold=True, strict=True)
    x, y, anc, text = got or labels.place(text, 12, cands, near=2, bold=True)  # right of the point may cross a line
    b = labels.boxes[-1]
    qx, qy = min(max(px, b[0]), b[2]), min(max(py, b[1]), b[3])  # the box's nearest point
    leader = (px, py, qx, qy) if math.hypot(qx - px, qy - py) > 16 else None
    return Label("point", x, y, anc, text, 12, bold=True, leader=leader)


def _ridge_label(plane: Plane, rs: Sequence[Roof], slot: int, spec_word: str, labels: Labels) -> Label:
    """``ridge 206 sheet`` over ``188 measured``: below the ridge of one precision's roofs (``rs``)."""
    top = max(rs, key=lambda r: r.peak_flops)
    cx, cy = plane.X(top.ridge), plane.Y(top.peak_flops)
    low_y = max(plane.Y(r.peak_flops) for r in rs)
    text = "\n".join(f"{'ridge ' if i == 0 else ''}{fmt_cell(r.ridge)} {'measured' if r.measured else spec_word}"
                     for i, r in enumerate(rs))
    cands = [(cx - 8, low_y + 17, "end"), (cx + 8, low_y + 17, "start"), (cx - 8, low_y + 31, "end"),
             (cx + 8, low_y + 31, "start"), (cx - 10, cy - 24, "end"), (cx + 8, low_y + 45, "start"),
             (cx + 8, low_y + 59, "start"), (cx, low_y + 45, "middle"), (plane.left + plane.pw - 4, low_y + 17, "end")]
    x, y, anc, text = labels.place(text, 11, cands)
    return Label("ridge", x, y, anc, text, 11, slot=slot)


def _sweep_label(plane: Plane, sweep: tuple[float, float, str, int], labels: Labels) -> Label:
    """A measured sweep's empirical ridge ((FLOP/byte, FLOP/s, text, colour slot)), below or above it."""
    rx, top_flops, text, s = sweep
    cx, cy = plane.X(rx), plane.Y(top_flops)
    cands = [(cx + 6, cy + dy, "start") for dy in (24, 38, 52)] + [(cx - 6, cy + dy, "end") for dy in (24, 38, 52)]
    cands += [(cx + 6, cy - 12, "start"), (cx - 6, cy - 12, "end")]
    x, y, anc, text = labels.place(text, 11, cands)
    return Label("sweep", x, y, anc, text, 11, slot=s)


def _dram_text(roofs: Sequence[Roof], spec_word: str) -> str:
    """``DRAM GB/s: spec 4,800, measured 4,598`` (the measured figure only where it differs)."""
    sheet_bw = next((r for r in roofs if not r.measured), None)
    meas_bw = next((r for r in roofs if r.measured), None)
    parts = []
    if sheet_bw:
        parts.append(f"{spec_word} {fmt_cell(sheet_bw.bandwidth_gbs)}")
    if meas_bw and (not sheet_bw or abs(meas_bw.bandwidth - sheet_bw.bandwidth) > 0.5e9):
        parts.append(f"measured {fmt_cell(meas_bw.bandwidth_gbs)}")
    return f"DRAM GB/s: {', '.join(parts)}"


def _slope_label(plane: Plane, roofs: Sequence[Roof], slot: dict, spec_word: str, labels: Labels,
                 crowded: bool = False) -> SlopeLabel:
    """One bandwidth label along the slope, above it (nothing else is drawn above-left of
    the roof): the spec sheet's figure and the measured one where they differ. With other
    levels' slopes drawn (``crowded``) the spot is searched along the slope (:func:`_along`)."""
    f = plane.frame
    sheet_bw = next((r for r in roofs if not r.measured), None)
    meas_bw = next((r for r in roofs if r.measured), None)
    ref = sheet_bw or meas_bw
    bw = ref.bandwidth
    lowest_ridge = min(r.ridge for r in roofs if r.bandwidth == bw)
    text = _dram_text(roofs, spec_word)
    parts = text.split(": ", 1)[1].split(", ")
    if crowded:  # the next level's line runs close above: below the line first
        texts = [text] + ([f"DRAM GB/s: measured {fmt_cell(meas_bw.bandwidth_gbs)}"] if meas_bw and len(parts) > 1 else [])
        texts.append(f"DRAM {fmt_cell((meas_bw or ref).bandwidth_gbs)} GB/s")
        return _along(plane, bw, min(lowest_ridge, f.x_hi), texts, slot[ref.precision], labels, (), sides=(-1, 1))
    xa, xb = max(f.x_lo, f.y_lo / bw), min(lowest_ridge, f.x_hi)
    xm = 10 ** (math.log10(xa) + (math.log10(xb) - math.log10(xa)) * 0.08)
    boxes = _rotated_boxes(plane, bw, xm, text)
    for b in boxes:  # keep other labels off the rotated text
        labels.block(b)
    return SlopeLabel(plane.X(xm), plane.Y(bw * xm), _slope_angle(plane), text, slot[ref.precision], tuple(boxes))


def _slope_angle(plane: Plane) -> float:
    """Degrees (clockwise, as SVG) of a bandwidth line on ``plane``."""
    lx0, lx1, ly0, ly1 = plane.logs
    return -math.degrees(math.atan2(plane.ph / (ly1 - ly0), plane.pw / (lx1 - lx0)))


#: Baseline offsets (px) of a slope label above (+1) and below (-1) its line, and the
#: perpendicular distance of the centre of its text from the line.
_SIDE_OFFSET = {1: 7.0, -1: -17.0}
_SIDE_CENTRE = {1: 13.0, -1: -11.0}


def _rotated_boxes(plane: Plane, bw: float, xm: float, text: str, side: int = 1) -> list[Box]:
    """Small boxes covering a 12 px label rotated along the ``bw`` line from ``xm`` FLOP/byte,
    above the line (``side`` 1, baseline 7 px above) or below it (-1)."""
    th = math.radians(_slope_angle(plane))
    x0, y0 = plane.X(xm), plane.Y(bw * xm)
    c = _SIDE_CENTRE[side]
    out = []
    for k in range(0, int(len(text) * 12 * 0.56) + 8, 8):
        cx = x0 + k * math.cos(th) + c * math.sin(th)
        cy = y0 + k * math.sin(th) - c * math.cos(th)
        out.append((cx - 6, cy - 7, cx + 6, cy + 7))
    return out


def _along(plane: Plane, bw: float, x_end: float, texts: Sequence[str], slot: int, labels: Labels, own: Sequence[Box],
           sides: Sequence[int] = (1, -1)) -> SlopeLabel:
    """A rotated label along the ``bw`` line between the frame's edge and ``x_end`` FLOP/byte,
    on one of ``sides`` (1 above, -1 below; in that order of preference). Each wording of
    ``texts`` (longest first) is tried in turn: the first spot whose boxes stay inside the
    plot, clear of every label and of every other line, else clear of every label, wins;
    its boxes are reserved. When no wording finds one the label is not placed: its ``text``
    is empty (a drawing writes the figure under the plot instead of over another label)."""
    f = plane.frame
    xa, xb = max(f.x_lo, f.y_lo / bw), min(x_end, f.x_hi)
    lx0, lx1, _, _ = plane.logs
    la = math.log10(xa)
    own_set = set(own)
    others = [b for b in labels.soft if b not in own_set]
    steps = (0.0, 0.12, 0.25, 0.37, 0.5, 0.62, 0.75, 0.87, 1.0, 0.06, 0.19, 0.31, 0.44, 0.56, 0.69, 0.81, 0.94)
    pick = cands = inside = None
    for text in texts:
        # the text's length along the line, in decades: spots are where it starts and still ends by xb
        run = len(text) * 12 * 0.56 * math.cos(math.radians(_slope_angle(plane))) / (plane.pw / (lx1 - lx0))
        lb = max(la + 1e-4, math.log10(max(xb, xa * 1.0001)) - abs(run))
        spots = [max(xa * 1.0001, 10 ** (la + (lb - la) * t)) for t in steps]
        cands = [(side, xm, _rotated_boxes(plane, bw, xm, text, side), text) for side in sides for xm in spots]
        inside = [c for c in cands if all(labels.inside(b) for b in c[2])]
        pick = next((c for c in inside if not any(_hits(b, labels.boxes) or _hits(b, others) for b in c[2])), None)
        if pick is None:
            pick = next((c for c in inside if not any(_hits(b, labels.boxes) for b in c[2])), None)
        if pick is not None:
            break
    if pick is None:
        return SlopeLabel(plane.X(xa), plane.Y(bw * xa), _slope_angle(plane), "", slot)
    side, xm, bs, text = pick
    for b in bs:
        labels.block(b)
    return SlopeLabel(plane.X(xm), plane.Y(bw * xm), _slope_angle(plane), text, slot, tuple(bs), _SIDE_OFFSET[side])


def _roof_label(plane: Plane, prec: str, rs: Sequence[Roof], slot: int, spec_word: str, labels: Labels) -> Label:
    """``bf16 TFLOP/s`` over ``sheet 990, measured 862`` (or on one line), right-aligned over
    the flat part of the precision's roofs when there is room, else below them or further left."""
    X, Y = plane.X, plane.Y
    unit = tera_unit(prec)
    figures = ", ".join(f"{'measured' if r.measured else spec_word} {fmt_cell(r.peak_tflops)}" for r in rs)
    text = f"{prec} {unit}\n{figures}"
    one_line = f"{prec}: {figures} {unit}"
    y_top = min(Y(r.peak_flops) for r in rs)
    y_low = max(Y(r.peak_flops) for r in rs)
    right = plane.left + plane.pw - 4
    above = y_top - 6 - 12 * LINE
    steps = range(0, int(plane.pw), 30)
    cands: list[tuple] = [(right - dx, above, "end") for dx in steps] + [(right - dx, y_low + 15, "end") for dx in steps]
    cands += [(right - dx, yy, "end", one_line) for yy in (y_top - 6, y_top - 24, y_low + 15) for dx in steps]
    # first the spots over the flat part of these roofs (right of the ridge), then the rest
    ridge_x = X(max(r.ridge for r in rs))
    cands.sort(key=lambda c: max(0.0, ridge_x - 4 - text_box(c[0], c[1], c[3] if len(c) > 3 else text, 12, c[2])[0]))
    x, y, anc, text = labels.place(text, 12, cands)
    return Label("roof", x, y, anc, text, 12, slot=slot)
