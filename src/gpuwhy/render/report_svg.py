"""The inline SVG roofline of the HTML report, drawn from the shared geometry
(:mod:`gpuwhy.render.roofline_geometry`) through ``templates/roofline.svg.j2``.

Log-log axes with a tick, a label and a grid line at every decade: x in FLOP/byte,
y in FLOP/s with SI prefixes. Sheet roofs dashed, measured roofs solid, each ridge
point marked; the user's points drawn at their achieved rate when timed (else on
the roof; a dotted line joins the achieved rate to the roof) and labelled with their
verdict; a profile's mixed-intensity sweep as small dots. No external references.
"""

from __future__ import annotations

from typing import Sequence

from .report_data import roof_name
from .roofline_geometry import LEVEL_WORDS, Frame, LevelSlope, Mark, Plane, Roof, minor_ticks, rate_unit
from .roofline_labels import layout
from ..units import fmt_num, tera_unit

#: Colours of the precisions' roofs, in slot order (:func:`~gpuwhy.render.roofline_geometry.slots`).
COLORS = ("#0b5cad", "#c0560c", "#2b7a3d", "#8a3ea8")
#: Colours of the other memory levels' slopes.
LEVEL_COLORS = {"L2": "#0f7b7b", "L1": "#8a4b20"}
#: Colour of the user's points and their labels.
POINT_COLOR, POINT_LABEL_COLOR = "#cf222e", "#a40e26"
_FONT = 13  # tick labels; the other labels 12 and 11


def roofline_svg(roofs: Sequence[Roof], points: Sequence = (), sweep: Sequence[tuple[float, float]] = (),
                 title: str = "Roofline", size: tuple[int, int] = (520, 410), uid: str = "rl", css_class: str = "",
                 colour_slots: dict | None = None, slopes: Sequence[LevelSlope] = ()) -> str:
    """An inline SVG roofline (a ``<svg>`` element as a string, "" with no roof).

    Args:
        roofs: the roofs, in the order their colours are given.
        points: the user's classified points: anything with ``label`` and ``verdict``
            (a :class:`~gpuwhy.model.roofline.classify.Verdict`), e.g. a
            :class:`~gpuwhy.render.report_data.PlacedPoint`.
        sweep: measured (FLOP/byte, FLOP/s) pairs drawn as small dots.
        size: the viewBox (width, height) in px at 12-13 px text; below 440 wide the
            points' labels take two lines (name, verdict).
        uid: prefixes the element ids (several plots in one page).
        css_class: added to the ``<svg>``'s class.
        colour_slots: precision -> index in :data:`COLORS` (default: in the order the
            precisions first appear in ``roofs``).
        slopes: the other memory levels (:class:`~gpuwhy.render.roofline_geometry.LevelSlope`),
            one slope each up to the highest peak, its ridge marked, one label per level.
    """
    if not roofs:
        return ""
    from .templates_env import environment

    W, H = size
    marks = [Mark.of(pp.label, pp.verdict) for pp in points]
    xs = [m.intensity for m in marks] + [x for x, _ in sweep]
    ys = [y for m in marks for y in ((m.attainable, m.flops) if m.timed else (m.attainable,))] + [y for _, y in sweep]
    frame = Frame.labelled(roofs, xs, ys)
    unit = rate_unit(roofs[0].precision)
    plane = Plane.fit(frame, W, H, unit, font=_FONT)
    lay = layout(plane, roofs, marks, two_line=W < 440, spec_word="sheet", colour_slots=colour_slots, slopes=slopes)
    caption = ""
    if lay.unplaced:  # a slope label found no free spot: its figure goes under the plot, never over a label
        plane = Plane.fit(frame, W, H, unit, font=_FONT, bottom=60)
        lay = layout(plane, roofs, marks, two_line=W < 440, spec_word="sheet", colour_slots=colour_slots, slopes=slopes)
        caption = "; ".join(lay.unplaced)
    desc = "; ".join(f"{roof_name(r)}: {r.bandwidth_gbs:.0f} GB/s, {fmt_num(r.peak_tflops, 4)} {tera_unit(r.precision)}, "
                     f"ridge {fmt_num(r.ridge)} FLOP/byte" for r in roofs)
    desc += "".join(f"; {LEVEL_WORDS.get(sl.level, sl.level)} {sl.kind}: {sl.bandwidth_gbs:.0f} GB/s" for sl in slopes)
    levels = list(dict.fromkeys(sl.level for sl in slopes))
    desc += "".join(f"; {pp.label}" for pp in points)
    x_ticks = [(t, *plane.x_tick_anchor(t, _FONT)) for t in plane.x_ticks()]
    return environment().get_template("roofline.svg.j2").render(
        W=W, H=H, p=plane, lay=lay, uid=uid, css_class=css_class, title=title, desc=desc, font=_FONT,
        x_ticks=x_ticks, y_ticks=plane.y_ticks(unit), x_minors=[plane.X(v) for v in minor_ticks(frame.x_lo, frame.x_hi)],
        y_minors=[plane.Y(v) for v in minor_ticks(frame.y_lo, frame.y_hi)],
        sweep=[(plane.X(x), plane.Y(y)) for x, y in sweep if x > 0 and y > 0],
        color=lambda slot: POINT_LABEL_COLOR if slot is None else COLORS[slot % len(COLORS)],
        point_color=POINT_COLOR, roof_name=roof_name, level_color=lambda lv: LEVEL_COLORS.get(lv, "#59636e"),
        level_labels=list(zip(lay.level_labels, levels)), level_word=lambda lv: LEVEL_WORDS.get(lv, lv),
        caption=caption, axis_y=H - 8 - (16 if caption else 0))
