"""Rooflines with one slope per memory level, checked on what matplotlib actually drew: every
placed label's box (rotated ones as rotated rectangles) inside the axes and apart from every
other label, no label or legend over a point, elementwise intensities on the chart, and points
judged against the ceiling of their own precision. No GPU needed.

Measured figures: tests/fixtures/profiles/h200-2026-11-29.json (the H200 runs); the cache
figures added to it here (L2 9,850 GB/s, shared memory 31,200 GB/s) are made up for the drawing.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from gpuwhy.profiles import DeviceProfile
from gpuwhy.render import plot
from gpuwhy.render import roofline_geometry as G
from gpuwhy.specs import library

FIXTURE = Path(__file__).parent / "fixtures" / "profiles" / "h200-2026-11-29.json"
H200 = library().match("H200")


def profile() -> DeviceProfile:
    p = DeviceProfile.from_dict(json.loads(FIXTURE.read_text()))
    return replace(p, l2_read_bandwidth_gbs=9850.0, shared_bandwidth_gbs=31200.0, cache_date="2026-12-02")


def _polygon(t, renderer):
    """The four corners (display px, y up) of a Text as drawn, rotation included."""
    rot = t.get_rotation()
    t.set_rotation(0)
    e = t.get_window_extent(renderer)
    t.set_rotation(rot)
    ax_, ay_ = t.get_transform().transform(t.get_position())
    th = math.radians(rot)
    out = []
    for cx, cy in ((e.x0, e.y0), (e.x1, e.y0), (e.x1, e.y1), (e.x0, e.y1)):
        dx, dy = cx - ax_, cy - ay_
        out.append((ax_ + dx * math.cos(th) - dy * math.sin(th), ay_ + dx * math.sin(th) + dy * math.cos(th)))
    return out


def _apart(p, q) -> bool:
    """Separating-axis test for two convex quadrilaterals: True when they do not overlap."""
    for poly in (p, q):
        for i in range(4):
            (x1, y1), (x2, y2) = poly[i], poly[(i + 1) % 4]
            nx, ny = y2 - y1, x1 - x2
            a = [nx * x + ny * y for x, y in p]
            b = [nx * x + ny * y for x, y in q]
            if max(a) <= min(b) + 1e-6 or max(b) <= min(a) + 1e-6:
                return True
    return False


def _inside(poly, box) -> bool:
    return all(box.x0 - 0.5 <= x <= box.x1 + 0.5 and box.y0 - 0.5 <= y <= box.y1 + 0.5 for x, y in poly)


def check_drawing(chart, spoil=None) -> plot.Drawing:
    """Draw ``chart`` and assert the label rules on the drawn artists (``spoil(drawing)`` may
    break the drawing first, to see that the checks fail)."""
    pytest.importorskip("matplotlib")
    d = plot.draw_chart(chart)
    if spoil is not None:
        spoil(d)
    d.fig.canvas.draw()
    r = d.fig.canvas.get_renderer()
    axes = d.ax.get_window_extent(r)
    polys = [(t.get_text(), _polygon(t, r)) for t in d.labels if t.get_text().strip()]
    H = plot.FILE_SIZE[1]
    points = [(x, H - y) for x, y in d.points_px]
    for text, poly in polys:
        assert _inside(poly, axes), f"label {text!r} leaves the axes"
        for x, y in points:
            xs, ys = [p[0] for p in poly], [p[1] for p in poly]
            if min(xs) < x < max(xs) and min(ys) < y < max(ys):
                assert _apart(poly, [(x - 2, y - 2), (x + 2, y - 2), (x + 2, y + 2), (x - 2, y + 2)]), \
                    f"label {text!r} covers a point at {x:.0f},{y:.0f}"
    for i, (a, pa) in enumerate(polys):
        for b, pb in polys[i + 1:]:
            assert _apart(pa, pb), f"labels {a!r} and {b!r} overlap"
    leg = d.legend.get_window_extent(r)
    for x, y in points:
        assert not (leg.x0 <= x <= leg.x1 and leg.y0 <= y <= leg.y1), "the legend covers a point"
    assert d.ax.get_xlim()[0] <= G.ELEMENTWISE_INTENSITY
    d.plt.close(d.fig)
    return d


def test_hierarchical_roofline_labels_stay_inside_and_apart():
    ch = plot.build_chart(H200, ["fp32", "bf16"], profile=profile(), workloads=[
        ("vecadd", 2.7e8, 3.2e9, 0.8e-3), plot.PointSpec("gemm", 1.1e12, 4e8, 1.6e-3, "bf16"),
        plot.PointSpec("tiled", 4e10, 2e8, 2e-3, None, {"L2": 6e9, "L1": 2.4e10})])
    levels = {(s.level, s.kind) for s in ch.slopes}
    assert levels == {("L2", "measured"), ("L1", "clock"), ("L1", "measured")}
    d = check_drawing(ch)
    texts = [t.get_text() for t in d.labels]
    assert "L2 GB/s: measured 9,850" in texts and "L1/shared GB/s: clock limit 33,454, measured 31,200" in texts
    assert "DRAM GB/s: spec 4,800, measured 4,598" in texts
    # the tiled kernel: one marker per level, joined (three markers at one rate)
    tiled = next(w for w in ch.workloads if w.name == "tiled")
    assert [lv for lv, _ in tiled.levels] == ["L2", "L1"] and tiled.levels[1][1] == pytest.approx(4e10 / 2.4e10)
    ys = {round(y, 3) for x, y in d.points_px[2:5]}
    assert len(d.points_px) == 5 and len(ys) == 1


def test_the_checks_catch_a_broken_drawing():
    ch = plot.build_chart(H200, ["fp32"], workloads=[("vecadd", 2.7e8, 3.2e9, 0.8e-3)])

    def twin(d):  # a second label on top of the first
        t = d.labels[0]
        d.labels.append(d.fig.text(*t.get_position(), t.get_text() + " (copy)", fontsize=t.get_fontsize(),
                                   rotation=t.get_rotation(), rotation_mode="anchor", va="baseline"))

    def outside(d):  # a label past the right edge
        d.labels.append(d.fig.text(0.97, 0.5, "a label that runs out of the axes", fontsize=9))

    def over_point(d):  # a label on the point
        x, y = d.points_px[0]
        W, H = plot.FILE_SIZE
        d.labels.append(d.fig.text((x - 20) / W, 1 - y / H, "covering the point", fontsize=9, va="center"))

    for spoil, what in ((twin, "overlap"), (outside, "leaves the axes"), (over_point, "covers a point")):
        with pytest.raises(AssertionError, match=what):
            check_drawing(ch, spoil)


def test_spec_only_and_classify_plots_keep_labels_apart():
    check_drawing(plot.build_chart(H200, ["fp32"], workloads=[("vecadd", 2.7e8, 3.2e9, 0.8e-3)]))
    check_drawing(plot.build_chart(library().match("H100 PCIe"), ["fp32", "fp64", "bf16"],
                                   workloads=[("saxpy", 2e8, 1.2e9, None), ("gemm", 2.2e12, 4e8, 3.1e-3, "bf16")]))
    from gpuwhy.api.classify import run_classify
    from gpuwhy.model.roofline.classify import Workload

    c = run_classify(Workload(8e6, 32 * 2**20, time_s=9e-6, name="l2k"), "H100 PCIe", working_set=32 * 2**20)
    ch = plot.chart_from_classification(c)
    # the DRAM roof stays DRAM's (the verdict's ceiling is the L2's) and the L2 slope is drawn
    assert [r.bandwidth for r in ch.roofs] == [2000e9] and any(s.level == "L2" for s in ch.slopes)
    assert "(L2)" in ch.workloads[0].label
    check_drawing(ch)


def test_points_are_judged_against_their_own_precision():
    """`--dtype all` with a bf16 GEMM: judged against bf16, not fp64 (it read '2123% of SOL')."""
    from gpuwhy.api.roofline import parse_dtypes

    dtypes = parse_dtypes(["all"], H200)
    assert dtypes[0] == "fp32"  # unlabelled points are judged against fp32, not the sheet's first (fp64)
    ch = plot.build_chart(H200, dtypes, workloads=[plot.PointSpec("gemm", 1.1e12, 4e8, 1.6e-3, "bf16"),
                                                   ("vecadd", 2.7e8, 3.2e9, 0.8e-3)])
    gemm, vec = ch.workloads
    assert gemm.verdict.ceilings.precision == "bf16" and gemm.verdict.sol_pct < 100
    assert vec.verdict.ceilings.precision == "fp32"
    # a point's precision not among --dtype is drawn too
    ch = plot.build_chart(H200, ["fp32"], workloads=[plot.PointSpec("gemm", 1.1e12, 4e8, 1.6e-3, "bf16")])
    assert {r.precision for r in ch.roofs} == {"fp32", "bf16"} and ch.workloads[0].name == "gemm (bf16)"


def test_cli_point_with_a_precision(cli, tmp_path):
    code, out, err = cli("roofline", "--gpu", "H200", "--dtype", "all", "--point", "gemm:1.1T:400MB:1.6ms:bf16", "--json")
    assert code == 0, err
    w = json.loads(out)["workloads"][0]
    assert w["precision"] == "bf16" and w["sol_pct"] < 100
    code, out, err = cli("roofline", "--gpu", "H200", "--point", "gemm:1.1T:400MB:fp7")
    assert code == 2 and "--point gemm" in err and err.count("\n") == 1


def test_text_chart_draws_the_levels():
    ch = plot.build_chart(H200, ["fp32"], profile=profile(), workloads=[("vecadd", 2.7e8, 3.2e9, 0.8e-3)])
    lines = plot.text_chart(ch)
    grid = "\n".join(lines[:18])
    assert "l" in grid and "s" in grid
    body = "\n".join(lines)
    assert "l  L2 measured (solid): 9,850 GB/s" in body and "s  L1/shared clock (dashed): 33,454 GB/s" in body
    assert "0.01" in lines[19]  # the x axis reaches elementwise kernels


def test_no_l2_roof_is_said_on_the_chart():
    ch = plot.build_chart(library().match("H100 SXM"), ["fp32"])
    assert not any(s.level == "L2" for s in ch.slopes)
    assert any("L2 roof of the H100 SXM is unknown" in n for n in ch.notes)


def test_report_svg_layout_with_levels_keeps_labels_apart():
    """The report's inline SVG (no renderer here): the shared layout's boxes, the rotated slope labels
    as the small boxes the layout reserves, at both report sizes."""
    from gpuwhy.render.report_svg import roofline_svg

    ch = plot.build_chart(H200, ["fp32", "bf16"], profile=profile(),
                          workloads=[("vecadd", 2.7e8, 3.2e9, 0.8e-3), ("gemm", 1.1e12, 4e8, 1.6e-3, "bf16")])
    marks = [G.Mark.of(w.label, w.verdict) for w in ch.workloads]
    for size in ((520, 410), (420, 420)):
        plane = G.Plane.fit(ch.frame(labelled=True), *size)
        lay = G.layout(plane, ch.roofs, marks, two_line=size[0] < 440, spec_word="sheet", slopes=ch.slopes)
        inner = (plane.left, plane.top, plane.left + plane.pw, plane.top + plane.ph)
        boxes = [G.text_box(lb.x, lb.y, lb.text, lb.size, lb.anchor, lb.bold) for lb in lay.labels]
        rotated = [lay.slope, *lay.level_labels]
        assert len(lay.level_labels) == 2  # L2 and L1/shared
        for i, b in enumerate(boxes):
            assert inner[0] <= b[0] and b[2] <= inner[2] and inner[1] <= b[1] and b[3] <= inner[3], (size, lay.labels[i])
            for o in boxes[i + 1:]:
                assert not (b[0] < o[2] and o[0] < b[2] and b[1] < o[3] and o[1] < b[3]), (size, b, o)
        # every slope label inside the plot, clear of every other label and of the other slope labels
        def hit(a, o):
            return a[0] < o[2] and o[0] < a[2] and a[1] < o[3] and o[1] < a[3]

        placed_texts = [sl.text for sl in rotated if sl.text]
        assert len(placed_texts) + len(lay.unplaced) == 3  # every level's figure is on the plot or under it
        rotated = [sl for sl in rotated if sl.text]
        for k, sl in enumerate(rotated):
            assert sl.boxes, sl.text
            for a in sl.boxes:
                assert inner[0] <= a[0] and a[2] <= inner[2] and inner[1] <= a[1] and a[3] <= inner[3], (size, sl.text)
                assert not any(hit(a, b) for b in boxes), (size, sl.text)
                for other in rotated[k + 1:]:
                    assert not any(hit(a, o) for o in other.boxes), (size, sl.text, other.text)
    svg = roofline_svg(ch.roofs, [], slopes=ch.slopes)
    assert "L2 GB/s: measured 9,850" in svg and "L1/shared GB/s: clock limit 33,454, measured 31,200" in svg
    import xml.etree.ElementTree as ET

    ET.fromstring(svg)
    narrow = roofline_svg(ch.roofs, [], slopes=ch.slopes, size=(420, 420))
    ET.fromstring(narrow)
    for fig in ("9,850", "31,200", "4,598"):
        assert fig in narrow
    assert svg.count("<polyline") == len(ch.roofs) + len(ch.slopes)
