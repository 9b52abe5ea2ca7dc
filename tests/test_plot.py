"""Roofline drawings without a GPU: `gpuwhy roofline`, `classify --plot`, the shared text canvas
and matplotlib path, and the one-line message when matplotlib is missing.

The measured figures come from tests/fixtures/profiles/h200-2026-11-29.json, transcribed from
the H200 runs in docs/results/raw/ (its ``_source`` says from which files). Sweep points, where a
test needs them, are synthetic and built here (no sweep has been recorded yet).
"""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from gpuwhy.profiles import DeviceProfile
from gpuwhy.render import plot
from gpuwhy.specs import library

FIXTURE = Path(__file__).parent / "fixtures" / "profiles" / "h200-2026-11-29.json"
H200 = library().match("H200")


def recorded() -> DeviceProfile:
    return DeviceProfile.from_dict(json.loads(FIXTURE.read_text()))


def with_synthetic_sweep(p: DeviceProfile) -> DeviceProfile:
    """The recorded profile plus a synthetic fp32 sweep (a smooth bend at 4.3 TB/s and 64 TFLOP/s)."""
    xs = np.array([2 ** (k / 2) for k in range(-6, 21)])
    fs = ((xs * 4.3e12) ** -4 + 64e12 ** -4) ** -0.25
    return replace(p, roofline_points={"fp32": [[float(a), float(b)] for a, b in zip(xs, fs)]},
                   roofline_ridge={"fp32": 14.9}, roofline_date="synthetic")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache"


# ----------------------------------------------------------- the fixture ----


def test_recorded_profile_holds_the_h200_figures():
    p = recorded()
    assert p.sheet == "H200 SXM" and p.name == "NVIDIA H200"
    assert p.dram_bandwidth_gbs == pytest.approx(4597.8, abs=0.1)
    assert p.launch_overhead_s == pytest.approx(3.36e-6, rel=1e-3)
    want = {"fp32": 66.2, "fp64": 33.4, "bf16": 867.4, "fp16": 826.9, "tf32": 466.0, "fp8": 1653.8, "int8": 1880.8}
    for k, v in want.items():
        assert p.peak_tflops_measured[k] == pytest.approx(v, abs=0.05), k
    assert "docs/results/raw" in " ".join(json.loads(FIXTURE.read_text())["_source"])


# ------------------------------------------------------------- the chart ----


def test_build_chart_spec_and_measured_roofs_and_verdicts():
    ch = plot.build_chart(H200, ["fp32", "bf16"], profile=recorded(),
                          workloads=[("vecadd", 2.7e8, 3.2e9, 0.8e-3), ("gemm", 1.1e12, 4e8, None)])
    roofs = {(r.precision, r.kind): r for r in ch.roofs}
    assert set(roofs) == {("fp32", "spec"), ("fp32", "measured"), ("bf16", "spec"), ("bf16", "measured")}
    # spec ridge 67e12 / 4.8e12 = 13.96; measured 66.17e12 / 4597.8e9 = 14.39
    assert roofs[("fp32", "spec")].ridge == pytest.approx(67e12 / 4800e9)
    assert roofs[("fp32", "measured")].ridge == pytest.approx(66.17035639788263e12 / 4597.757094917308e9)
    vec, gemm = ch.workloads
    # vecadd: 2.7e8 / 3.2e9 = 0.084 FLOP/byte, memory-bound on the measured fp32 roof; with its time it sits at
    # 2.7e8 / 0.8e-3 = 3.375e11 FLOP/s achieved.
    assert vec.verdict.regime == "memory" and vec.flops == pytest.approx(3.375e11) and not vec.on_roof
    assert vec.verdict.ceilings.bandwidth == pytest.approx(4597.757094917308e9)
    assert vec.verdict.ceilings.launch_overhead_s == pytest.approx(3.36e-6, rel=1e-3)
    assert "memory-bound" in vec.label and "% of SOL" in vec.label
    assert gemm.verdict.regime == "compute" and gemm.on_roof and gemm.flops == pytest.approx(66.17035639788263e12)
    assert any("drawn on the roof" in n for n in ch.notes)


def test_chart_without_profile_is_spec_only_and_missing_peaks_are_explained():
    from gpuwhy.errors import UsageError

    ch = plot.build_chart(H200, ["fp32"])
    assert [(r.precision, r.kind) for r in ch.roofs] == [("fp32", "spec")]
    with pytest.raises(UsageError, match=r"no bf16 on CUDA cores \(--no-tensor-cores\) peak and no measured one"):
        plot.build_chart(H200, ["bf16"], tensor_cores=False)
    # The profile measured fp16 half2 (fp16_nontensor) although the sheet lists none: a measured roof alone.
    ch = plot.build_chart(H200, ["fp16"], tensor_cores=False, profile=recorded())
    assert [(r.precision, r.kind) for r in ch.roofs] == [("fp16_nontensor", "measured")]
    # fp4 is on no H200 sheet and not measured
    with pytest.raises(UsageError, match="no fp4 peak"):
        plot.build_chart(H200, ["fp4"], profile=recorded())


def test_sweep_points_follow_their_roof():
    p = with_synthetic_sweep(recorded())
    ch = plot.build_chart(H200, ["fp32"], profile=p)
    assert len(ch.sweeps) == 1 and ch.sweeps[0].ridge == 14.9 and len(ch.sweeps[0].points) == 27
    ch = plot.build_chart(H200, ["bf16"], profile=p)
    assert not ch.sweeps and any("--dtype fp32" in n for n in ch.notes)


def test_text_chart_marks_roofs_ridges_sweeps_and_workloads():
    ch = plot.build_chart(H200, ["fp32", "bf16"], profile=with_synthetic_sweep(recorded()),
                          workloads=[("vecadd", 2.7e8, 3.2e9, 0.8e-3)])
    lines = plot.text_chart(ch)
    grid = "\n".join(lines[:18])
    for mark in ("R", "o", "A", "X"):
        assert mark in grid, mark
    body = "\n".join(lines)
    assert "1  fp32 spec (dashed)" in body and "2  fp32 measured (solid)" in body
    assert "4  bf16 measured (solid): 4,598 GB/s, 867 TFLOP/s, ridge 189 FLOP/byte" in body
    assert "o  fp32 mixed-intensity sweep, 27 points; empirical ridge 14.9 FLOP/byte (X)" in body
    assert "A  vecadd: memory-bound" in body and "FLOP/byte" in lines[19]


def test_log_canvas_dashed_roofs_skip_columns():
    cv = plot.LogCanvas(0.1, 1000, 1e9, 1e15, width=40, height=10)
    cv.roof(67e12, 4.8e12, "1", dashed=True)
    top = "".join(cv.grid[cv.row_of(67e12)])
    assert "1 1" in top and "11" not in top
    cv2 = plot.LogCanvas(0.1, 1000, 1e9, 1e15, width=40, height=10)
    cv2.roof(67e12, 4.8e12, "2")
    assert "2222" in "".join(cv2.grid[cv2.row_of(67e12)])


# ------------------------------------------------------------------- CLI ----


def test_cli_roofline_json_from_a_recorded_profile(cli, cache):
    code, out, err = cli("roofline", "--profile", str(FIXTURE), "--dtype", "fp32,bf16", "--point", "vecadd:2.7e8:3.2GB:800us", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["kind"] == "roofline" and doc["gpu"] == "H200 SXM"
    kinds = {(r["precision"], r["kind"]): r for r in doc["roofs"]}
    assert kinds[("bf16", "measured")]["peak_tflops"] == pytest.approx(867.369, abs=1e-3)
    assert kinds[("fp32", "spec")]["bandwidth_gbs"] == 4800
    w = doc["workloads"][0]
    assert w["name"] == "vecadd" and w["regime"] == "memory" and w["sol_pct"] is not None


def test_cli_roofline_measured_reads_the_cache(cli, cache):
    d = cache / "gpuwhy" / "profiles" / "GPU-fb3a3935-dc87-fe9d-076f-38952996bd0d"
    d.mkdir(parents=True)
    shutil.copy(FIXTURE, d / "20261129T081110.json")
    code, out, err = cli("roofline", "--gpu", "H200", "--measured", "--json")
    assert code == 0, err
    assert {(r["precision"], r["kind"]) for r in json.loads(out)["roofs"]} == {("fp32", "spec"), ("fp32", "measured")}
    code, out, err = cli("roofline", "--gpu", "H100", "--measured")
    assert code == 2 and out == "" and "no bench profile for the H100 SXM" in err and err.count("\n") == 1


def test_cli_roofline_terminal_drawing(cli, cache):
    code, out, err = cli("roofline", "--gpu", "H200", "--dtype", "fp32", "--dtype", "fp64", "--point", "saxpy:2e8:1.2e9")
    assert code == 0, err
    assert "roofline (log-log)" in out and "1  fp32 spec (dashed)" in out and "2  fp64 spec (dashed)" in out
    assert "A  saxpy: memory-bound" in out and "FLOP/byte" in out


@pytest.mark.parametrize("args,needle", [
    (["--gpu", "H200", "--point", "bad"], "--point 'bad' must be NAME:FLOPS:BYTES"),
    (["--gpu", "H200", "--point", "x:1T:0"], "--point x BYTES"),
    (["--gpu", "H200", "--point", "x:1T:1GB:soon"], "--point x TIME"),
    (["--gpu", "H200", "--dtype", "fp7"], "unknown --dtype 'fp7'"),
    (["--gpu", "H200", "--out", "r.pdf"], "must end in .png or .svg"),
    (["--profile", "/nonexistent/p.json"], "--profile: '/nonexistent/p.json' does not exist"),
    (["--gpu", "H200", "--dtype", "fp8", "--no-tensor-cores"], "runs only on tensor cores"),
])
def test_cli_roofline_bad_input_is_one_line(cli, cache, args, needle):
    code, out, err = cli("roofline", *args)
    assert code == 2 and out == "" and needle in err and err.count("\n") == 1, err


def test_cli_profile_that_is_not_a_profile(cli, tmp_path):
    f = tmp_path / "p.json"
    f.write_text(json.dumps({"name": "x"}))
    code, out, err = cli("roofline", "--profile", str(f))
    assert code == 2 and "is not a gpuwhy device profile" in err and err.count("\n") == 1


# ------------------------------------------------------------- matplotlib ----


def test_roofline_png_and_svg_from_a_recorded_profile(cli, tmp_path, cache):
    pytest.importorskip("matplotlib")
    png, svg = tmp_path / "r.png", tmp_path / "r.svg"
    code, out, err = cli("roofline", "--profile", str(FIXTURE), "--dtype", "fp32,bf16", "--point", "vecadd:2.7e8:3.2GB:800us",
                         "--out", str(png))
    assert code == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
    assert "roofline drawn to" in err and "roofline (log-log)" not in out and "fp32 measured" in out
    ch = plot.build_chart(H200, ["fp32"], profile=with_synthetic_sweep(recorded()),
                          workloads=[("vecadd", 2.7e8, 3.2e9, 0.8e-3), ("gemm", 1.1e12, 4e8, None)])
    assert plot.save_chart(ch, str(svg)) == str(svg)
    text = svg.read_text()
    for needle in ("<svg", "fp32 measured: 4,598 GB/s", "fp32 spec: 4,800 GB/s", "mixed-intensity sweep",
                   "empirical ridge 14.9", "vecadd: memory-bound", "gemm: compute-bound", "ridge 14.4"):
        assert needle in text, needle


def test_classify_plot(cli, tmp_path, cache):
    pytest.importorskip("matplotlib")
    f = tmp_path / "c.svg"
    code, out, err = cli("classify", "--gpu", "H200", "--example", "vecadd", "--plot", str(f))
    assert code == 0, err
    assert "roofline drawn to" in err and "memory" in out
    text = f.read_text()
    assert "vecadd: memory-bound" in text and "fp32 spec" in text and "fp32 measured" not in text
    # with measured ceilings: both roofs; --json keeps stdout to the one document
    d = cache / "gpuwhy" / "profiles" / "GPU-fb3a3935-dc87-fe9d-076f-38952996bd0d"
    d.mkdir(parents=True)
    shutil.copy(FIXTURE, d / "20261129T081110.json")
    g = tmp_path / "m.png"
    code, out, err = cli("classify", "--gpu", "H200", "--example", "vecadd", "--measured", "--plot", str(g), "--json")
    assert code == 0, err
    assert json.loads(out)["kind"] == "classify" and g.stat().st_size > 10_000
    ch = plot.chart_from_classification(__import__("gpuwhy.api.classify", fromlist=["x"]).run_classify(
        __import__("gpuwhy.model.roofline.classify", fromlist=["x"]).Workload(2.7e8, 3.2e9, name="v"), "H200", measured=True))
    assert [r.kind for r in ch.roofs] == ["spec", "measured"]


@pytest.mark.parametrize("args,needle", [
    (["--gpu", "H200", "--example", "vecadd", "--plot", "x.pdf"], "--plot 'x.pdf' must end in .png or .svg"),
    (["--ncu", "r.csv", "--plot", "x.png"], "drop --plot with --ncu"),
])
def test_classify_plot_bad_input(cli, args, needle):
    code, out, err = cli("classify", *args)
    assert code == 2 and out == "" and needle in err and err.count("\n") == 1, err


def test_compare_out_still_draws(cli, tmp_path):
    pytest.importorskip("matplotlib")
    f = tmp_path / "cmp.svg"
    code, out, err = cli("compare", "H100", "H200", "--intensity", "10", "--out", str(f))
    assert code == 0, err
    assert "H100 SXM (ridge" in f.read_text()


# ------------------------------------------------- matplotlib is missing ----


@pytest.fixture
def no_matplotlib(monkeypatch):
    """Make ``import matplotlib`` fail as it does where the [plot] extra is not installed."""
    for name in list(sys.modules):
        if name == "matplotlib" or name.startswith("matplotlib."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)


def test_missing_matplotlib_is_one_clear_line(cli, tmp_path, no_matplotlib, cache):
    from gpuwhy.errors import UsageError

    with pytest.raises(UsageError) as ei:
        plot.require_pyplot()
    assert str(ei.value) == "plots need matplotlib: pip install 'gpuwhy[plot]'"
    for args in (["roofline", "--gpu", "H200", "--out", str(tmp_path / "r.png")],
                 ["roofline", "--profile", str(FIXTURE), "--out", str(tmp_path / "r.svg"), "--json"],
                 ["classify", "--gpu", "H200", "--example", "vecadd", "--plot", str(tmp_path / "c.png")]):
        code, out, err = cli(*args)
        assert code == 2 and out == ("" if "--json" not in args else out), args
        if "--json" in args:  # the error document holds the same words
            assert json.loads(out)["error"]["message"] == "plots need matplotlib: pip install 'gpuwhy[plot]'"
        assert err.strip() == "gpuwhy: error: plots need matplotlib: pip install 'gpuwhy[plot]'", err
        assert not list(tmp_path.glob("*.png")) and not list(tmp_path.glob("*.svg"))
    # compare says the same
    code, out, err = cli("compare", "H100", "--intensity", "1", "--out", str(tmp_path / "x.png"))
    assert code == 2 and err.strip() == "gpuwhy: error: plots need matplotlib: pip install 'gpuwhy[plot]'"


def test_roofline_terminal_works_without_matplotlib(cli, no_matplotlib, cache):
    code, out, err = cli("roofline", "--profile", str(FIXTURE))
    assert code == 0, err
    assert "roofline (log-log)" in out and "2  fp32 measured (solid)" in out


# ------------------------------------------------- bench --roofline view ----


def test_render_sweep_and_its_chart(cli):
    """The rich view of a sweep (for `bench --roofline`), on a synthetic sweep object."""
    import contextlib
    import io

    from gpuwhy.bench import intensity as I
    from gpuwhy.engine.timing import Measurement
    from gpuwhy.render import console

    pts = []
    n = 4 * 2**20
    for f in I.sweep_fmas("fp32"):
        fl, by = I.launch_flops(n, f, "fp32"), I.launch_bytes(n)
        t = max(fl / 64e12, by / 4.3e12)  # synthetic, a hard roofline
        pts.append(I.IntensityPoint("fp32", f, n, fl, by, Measurement(t, t, t, t, 0.0, 5), 66.17e12, 4597.8e9, 1, 256))
    fit = I.fit_ridge([p.intensity for p in pts], [p.achieved_flops for p in pts], ref_peak=66.17e12)
    curve = I.RooflineCurve("fp32", "intensity_f32", "FFMA", "fp32", 66.17e12, "measured fp32 (x)", 4597.8e9,
                            "measured (y)", tuple(pts), fit, n, by, 2, check="checked")
    sweep = I.RooflineSweep(device={"name": "NVIDIA H200"}, sheet_name="H200 SXM", curves=(curve,), date="d")
    buf = io.StringIO()
    console.out.cache_clear()
    with contextlib.redirect_stdout(buf):
        plot.render_roofline_sweep(sweep, H200)
    console.out.cache_clear()
    text = buf.getvalue()
    assert "mixed-intensity sweep, fp32" in text and "empirical ridge 14.9 FLOP/byte" in text
    assert "measured roofline (log-log)" in text and "% roof" in text
    ch = plot.chart_from_sweep(sweep, H200)
    assert [(r.precision, r.kind) for r in ch.roofs] == [("fp32", "spec"), ("fp32", "measured")]
    assert ch.sweeps[0].ridge == pytest.approx(64e12 / 4.3e12)


def test_no_gpu_no_name(cli, cache):
    from conftest import gpu_available

    if gpu_available()[0]:
        pytest.skip("a GPU is present")
    code, out, err = cli("roofline")
    assert code == 2 and "pass --gpu NAME" in err and err.count("\n") == 1
    # --measured without a GPU here: the newest profile in the cache names the GPU
    d = cache / "gpuwhy" / "profiles" / "GPU-fb3a3935-dc87-fe9d-076f-38952996bd0d"
    d.mkdir(parents=True)
    shutil.copy(FIXTURE, d / "20261129T081110.json")
    code, out, err = cli("roofline", "--measured", "--json")
    assert code == 0, err
    assert json.loads(out)["gpu"] == "H200 SXM"


# ------------------------------------------------- one geometry for all ----


def test_terminal_file_and_report_share_the_axes(tmp_path):
    """The three roofline drawings write the same ticks: FLOP/byte on x (0.1, 1,000), FLOP/s with SI prefixes on y."""
    pytest.importorskip("matplotlib")
    from gpuwhy.render.report_svg import roofline_svg

    ch = plot.build_chart(H200, ["fp32", "bf16"], profile=recorded(), workloads=[("vecadd", 2.7e8, 3.2e9, 0.8e-3)])
    term = "\n".join(plot.text_chart(ch))
    f = tmp_path / "r.svg"
    plot.save_chart(ch, str(f))
    file_text = f.read_text()
    html_svg = roofline_svg(ch.roofs, ch.workloads)
    for tick in ("1 PFLOP/s", "100 TFLOP/s", "0.1", "1,000"):
        assert tick in term, tick
        assert f"<!-- {tick} -->" in file_text, tick  # matplotlib keeps each text as a comment
        assert f">{tick}<" in html_svg, tick
    assert "TFLOP/s (1e12" not in html_svg and "1e+" not in file_text


def test_layout_keeps_labels_apart_and_inside():
    """The shared label placement on the recorded H200 roofs with three points: no two labels overlap,
    none leaves the plot, none covers a point."""
    from gpuwhy.render import roofline_geometry as G
    from gpuwhy.render import roofline_labels as RL

    ch = plot.build_chart(H200, ["bf16", "fp32"], profile=recorded(),
                          workloads=[("vecadd", 2.7e8, 3.2e9, 0.8e-3), ("gemm", 1.1e12, 4e8, 1.6e-3), ("gemv", 3.4e7, 3.4e7, None)])
    marks = [G.Mark.of(w.label, w.verdict) for w in ch.workloads]
    for size in ((520, 410), (420, 420)):
        plane = G.Plane.fit(ch.frame(labelled=True), *size)
        lay = RL.layout(plane, ch.roofs, marks, two_line=size[0] < 440)
        boxes = [RL.text_box(lb.x, lb.y, lb.text, lb.size, lb.anchor, lb.bold) for lb in lay.labels]
        assert len(boxes) == 3 + 2 + 2  # points, roof labels and ridge labels per precision
        inner = (plane.left, plane.top, plane.left + plane.pw, plane.top + plane.ph)
        for i, b in enumerate(boxes):
            assert inner[0] <= b[0] and b[2] <= inner[2] and inner[1] <= b[1] and b[3] <= inner[3], (size, lay.labels[i])
            for o in boxes[i + 1:]:
                assert not (b[0] < o[2] and o[0] < b[2] and b[1] < o[3] and o[1] < b[3]), (size, b, o)
            for m in lay.marks:
                assert not (b[0] < m.x < b[2] and b[1] < m.y < b[3]), (size, lay.labels[i], m)
