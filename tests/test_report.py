"""`gpuwhy report` without a GPU: the HTML built from the H200 JSON recorded in run 5, its
self-containedness, escaping, the overwrite guard and bad input."""

from __future__ import annotations

import gzip
import json
import re
import shutil
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import gpu_available
from gpuwhy.render.report_data import ReportInput, ReportPoint
from gpuwhy.render.report_html import GENERATOR_MARK, render_report
from gpuwhy.render.report_svg import roofline_svg
from gpuwhy.render.roofline_geometry import Roof

RAW = Path(__file__).resolve().parents[1] / "docs" / "results" / "raw" / "2026-11-29-h200-run5"
POINTS = (
    "--point", "vecadd-vec16:268435456:3221225472:733.408us",
    "--point", "gemm-bf16-8192:1099511627776:402653184",
)


@pytest.fixture
def recorded(tmp_path):
    """The recorded probe/check JSON and the gunzipped `bench --sweep --json` in tmp_path."""
    for name in ("probe.json", "check.json"):
        shutil.copy(RAW / name, tmp_path / name)
    with gzip.open(RAW / "bench_sweep.json.gz", "rb") as src, open(tmp_path / "bench.json", "wb") as dst:
        shutil.copyfileobj(src, dst)
    return tmp_path


def _files(d: Path) -> list[str]:
    return ["--probe", str(d / "probe.json"), "--bench", str(d / "bench.json"), "--check", str(d / "check.json")]


def _one_line_error(code: int, err: str, expect_code: int = 2) -> str:
    assert code == expect_code, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("gpuwhy: error: ")
    assert "Traceback" not in err
    return lines[0]


class _TagBalance(HTMLParser):
    """Checks that every non-void element is closed in order."""

    VOID = {"meta", "br", "hr", "img", "input", "link", "line", "circle", "rect", "path", "col", "wbr"}

    def __init__(self):
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        pass

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1] if self.stack else 'nothing'}")
        else:
            self.stack.pop()


def test_recorded_h200_report(cli, recorded):
    out = recorded / "report.html"
    code, stdout, err = cli("report", "--out", str(out), *_files(recorded), "--dtype", "bf16", *POINTS)
    assert code == 0, err
    html = out.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    assert GENERATOR_MARK + ' 0.1.0"' in html or GENERATOR_MARK in html
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in html
    # identity, derived vs sheet, health
    assert "gpuwhy report: NVIDIA H200" in html
    assert "GPU-fb3a3935-dc87-fe9d-076f-38952996bd0d" in html
    assert "3201 MHz x 2 (HBM3e) x 6016 bits / 8" in html and "4,814" in html and "+0.3%" in html
    assert "580.159.04" in html
    # the bench: sustained DRAM 4597.76 GB/s = 95.8% of 4800; the sweep rows; launch overhead four ways
    assert "4,598" in html and "95.8%" in html
    assert "write-vec16" in html and "vecadd-naive" in html and "fits in L2" in html
    assert "All 152 rows of the sweep" in html
    for how in ("event-timed", "host submission", "round trip", "per kernel in a CUDA graph"):
        assert how in html
    assert "3.60" in html  # event-timed launch overhead, us
    # compute ceilings measured vs sheet: bf16 wgmma 862.3 of 989.5 (87.1%); the fp8 mma row not measured
    assert "wgmma_bf16_rs_n256" in html and "862" in html and "87.1%" in html
    assert "not measured" in html
    # the check: 9 pass, tensor_bf16 fails
    assert html.count('<span class="st pass">pass</span>') >= 9
    assert re.search(r"tensor_bf16</td><td><span class=\"st fail\">fail</span>", html)
    assert "646.3 TFLOP/s (65.3% of sheet)" in html
    # the roofline: an SVG with decade ticks, dashed sheet roofs, solid measured roofs, the ridges, the points
    # two drawings of one plot: for wide screens/print and for phones (CSS picks one)
    assert html.count("<svg") == 2 and 'class="roofline rl-wide"' in html and 'class="roofline rl-narrow"' in html
    svgs = re.findall(r"<svg.*?</svg>", html, flags=re.S)
    for one in svgs:
        ET.fromstring(one)  # well-formed XML
    assert 'id="rl-clip"' in svgs[0] and 'id="rln-clip"' in svgs[1]  # ids unique in the page
    svg = svgs[0]
    assert "ridge 206 sheet" in svg and "188 measured" in svg  # 989.5/4.8 and 862.3/4.598 FLOP/byte
    assert 'stroke-dasharray="7 5"' in svg
    for tick in (">0.01<", ">1<", ">100<", ">1,000<"):
        assert tick in svg
    assert "vecadd-vec16: memory-bound" in svg and "gemm-bf16-8192: compute-bound" in svg
    # latency and link were not given
    assert "Not measured: latency ladder" in html and "Not measured: host-device link bandwidth" in html
    # version and command line
    assert "gpuwhy report \\\n    --out" in html and "--dtype bf16" in html
    # balanced tags
    p = _TagBalance()
    p.feed(html)
    assert not p.errors and p.stack == [], (p.errors, p.stack)
    # the terminal got the verdicts and where the file went
    assert "vecadd-vec16: memory-bound" in stdout
    assert "report written to" in err


def test_no_external_references(cli, recorded):
    out = recorded / "r.html"
    code, _, err = cli("report", "--out", str(out), *_files(recorded), *POINTS)
    assert code == 0, err
    html = out.read_text(encoding="utf-8")
    assert "<script" not in html.lower()
    assert "<link" not in html.lower() and "<img" not in html.lower() and "<iframe" not in html.lower()
    assert "@import" not in html and "url(http" not in html
    refs = re.findall(r"""\b(?:src|href|xlink:href|action|srcset)\s*=\s*["']?([^"'\s>]*)""", html, flags=re.I)
    assert refs, "expected the in-page table of contents"
    assert all(r.startswith("#") for r in refs), [r for r in refs if not r.startswith("#")]
    assert not re.search(r"url\((?!#)", html)  # only url(#rl-clip)


def test_overwrite_guard(cli, recorded):
    out = recorded / "notes.html"
    out.write_text("<html>my own notes</html>\n")
    code, _, err = cli("report", "--out", str(out), *_files(recorded))
    line = _one_line_error(code, err)
    assert "gpuwhy did not write it" in line and "notes.html" in line
    assert out.read_text() == "<html>my own notes</html>\n"
    # a report gpuwhy wrote is replaced
    mine = recorded / "mine.html"
    assert cli("report", "--out", str(mine), *_files(recorded))[0] == 0
    first = mine.read_text()
    code, _, err = cli("report", "--out", str(mine), *_files(recorded), "--dtype", "bf16")
    assert code == 0, err
    assert mine.read_text() != first and "--dtype bf16" in mine.read_text()
    # a folder is refused
    code, _, err = cli("report", "--out", str(recorded), *_files(recorded))
    assert "is a folder" in _one_line_error(code, err)


def test_bad_inputs_exit_2_one_line(cli, recorded):
    out = recorded / "r.html"
    bad = recorded / "bad.json"
    bad.write_text("{not json")
    line = _one_line_error(*cli("report", "--out", str(out), "--bench", str(bad))[::2])
    assert "--bench" in line and "bad.json" in line and "not valid JSON" in line
    line = _one_line_error(*cli("report", "--out", str(out), "--probe", str(recorded / "check.json"))[::2])
    assert "--probe" in line and "'check'" in line
    line = _one_line_error(*cli("report", "--out", str(out), "--check", str(recorded / "missing.json"))[::2])
    assert "does not exist" in line
    lst = recorded / "list.json"
    lst.write_text("[1, 2]")
    assert "not an object" in _one_line_error(*cli("report", "--out", str(out), "--latency", str(lst))[::2])
    line = _one_line_error(*cli("report", "--out", str(out), "--gpu", "H200 SXM", "--point", "k:1e9")[::2])
    assert "NAME:FLOPS:BYTES" in line
    line = _one_line_error(*cli("report", "--out", str(out), "--gpu", "H200 SXM", "--point", "k:-5:1e9")[::2])
    assert "--point" in line
    assert "unknown dtype" in _one_line_error(*cli("report", "--out", str(out), "--gpu", "H200 SXM", "--dtype", "fp12")[::2])
    assert "unknown GPU" in _one_line_error(*cli("report", "--out", str(out), "--gpu", "Voodoo 5")[::2])
    assert not out.exists()


@pytest.mark.skipif(gpu_available()[0], reason="with a GPU present the report probes it")
def test_no_gpu_no_files_needs_gpu(cli, tmp_path):
    line = _one_line_error(*cli("report", "--out", str(tmp_path / "r.html"))[::2])
    assert "--gpu" in line


def test_spec_only_report(cli, tmp_path):
    out = tmp_path / "spec.html"
    code, stdout, err = cli("report", "--out", str(out), "--gpu", "H100 SXM", "--dtype", "bf16",
                            "--point", "decode:2.8G:16.1GB", "--json")
    assert code == 0, err
    doc = json.loads(stdout)
    assert doc["kind"] == "report" and doc["sheet"] == "H100 SXM" and doc["dtype"] == "bf16"
    assert doc["points"][0]["regime"] == "memory"
    html = out.read_text()
    assert "Not probed" in html and "Not measured: memory sweep" in html and "Not measured: gpuwhy check" in html
    assert "decode: memory-bound" in html and "<svg" in html
    assert 'stroke-dasharray="7 5"' in html  # sheet roofs only


def test_a_point_takes_its_own_dtype_and_above_its_roof_is_loud_everywhere(cli, tmp_path):
    """Issue 31: ``report --point`` had no DTYPE field, so a bf16 GEMM was judged against fp32 at
    "1,040% SOL" with the warning only in an off-screen column of the page. The point's DTYPE picks
    its roof; a point above 100% of its roof is a loud warning in the terminal, the page and --json."""
    out = tmp_path / "r.html"
    # 2.2 TFLOP in 3.1 ms = 710 TFLOP/s: 71.7% of the H100 SXM's 989.5 bf16 peak, 1,059% of its 67 fp32 peak
    code, stdout, err = cli("report", "--out", str(out), "--gpu", "H100 SXM", "--point", "gemm:2.2T:100MB:3.1ms:bf16",
                            "--point", "fp32gemm:2.2T:100MB:3.1ms", "--json")
    assert code == 0, err
    doc = json.loads(stdout)
    bf16, fp32 = doc["points"]
    assert bf16["precision"] == "bf16" and bf16["sol_pct"] == pytest.approx(71.72, abs=0.01)
    assert fp32["precision"] == "fp32" and fp32["sol_pct"] == pytest.approx(1059.2, abs=0.1)
    assert len(doc["warnings"]) == 1 and doc["warnings"][0].startswith("fp32gemm: 1,059% of its fp32 roof")
    assert "warning: fp32gemm: 1,059% of its fp32 roof" in err and "warning: gemm" not in err
    html = out.read_text()
    top = html.index('<section id="roofline">')
    assert html.count('class="warnbox">fp32gemm: 1,059% of its fp32 roof') == 2  # at the top of the page and above the table
    assert html.index('class="warnbox">fp32gemm') < top
    assert "Classified against (bf16)" in html and "Classified against (fp32)" in html
    # a precision neither the sheet nor a measurement has is one line, naming it
    line = _one_line_error(*cli("report", "--out", str(tmp_path / "x.html"), "--gpu", "rtx 5070",
                                "--point", "g:1T:1GB:1ms:fp64_tensor")[::2])
    assert "needs a fp64_tensor ceiling" in line


def test_a_roofline_point_faster_than_any_roof_is_an_input_error(cli):
    line = _one_line_error(*cli("roofline", "--gpu", "H200", "--point", "k:1T:1GB:1e-30s")[::2])
    assert line.startswith("gpuwhy: error: --point k's time 1e-30 s is impossible") and "L1/shared" in line


def test_roofline_points_above_their_roof_are_loud_too(cli):
    code, out, err = cli("roofline", "--gpu", "H100 SXM", "--point", "gemm:2.2T:100MB:3.1ms",
                         "--point", "g16:2.2T:100MB:3.1ms:bf16", "--json")
    assert code == 0, err
    assert "warning: gemm: 1,059% of its fp32 roof, faster than the roofline allows" in err and "g16" not in err


class _Dev:
    """A stand-in for the engine's DeviceInfo: what the latency/link results read of it."""

    name, arch, sm_count, max_threads_per_sm = "NVIDIA H200", "sm_90", 132, 2048

    def to_dict(self):
        return {"name": self.name, "arch": self.arch}


def _latency_doc() -> dict:
    """A `bench --latency --json` document built by the real result classes (figures made up, not measured)."""
    from gpuwhy.bench.latency import LatencyPoint, LatencyResult, Level
    from gpuwhy.model.roofline.littles_law import littles_law
    from gpuwhy.render.jsonout import to_plain

    pts = (LatencyPoint(4096, 32, 16384, 3, 2.6e-7, 2.5e-7, 2.7e-7, 515.0, 1980.0, "L2"),
           LatencyPoint(256 << 20, 2 << 20, 16384, 3, 6.1e-7, 6.0e-7, 6.2e-7, 1208.0, 1980.0, "DRAM"))
    levels = (Level("L2", 2.6e-7, 4096, 4096, 1, 33554432.0, (0,), 515.0, 515.0),
              Level("DRAM", 6.1e-7, 256 << 20, 256 << 20, 1, None, (1,), 1208.0, 1208.0))
    ll = littles_law(4598.0, 6.1e-7, 132, 2048, bandwidth_source="test", latency_source="test")
    res = LatencyResult(device=_Dev(), mode="cg", points=pts, levels=levels, sm_clock={}, littles=ll)
    return {"gpuwhy": "0.1.0", "schema": 1, "kind": "bench-latency", **to_plain(res.to_dict())}


def _link_doc() -> dict:
    """A `bench --link --json` document built by the real result classes (figures made up, not measured)."""
    from gpuwhy.bench import link as L
    from gpuwhy.engine.timing import summarize
    from gpuwhy.render.jsonout import to_plain

    info = L.link_info_from("NVIDIA H200", 5, 16)
    rows = []
    for n in (4096, 1 << 20, 1 << 26, 1 << 28):
        t = summarize([2e-6 + n / 55.1e9])
        rows.append(L.LinkRow("h2d", "pinned", n, t, summarize([8e-6 + n / 55.1e9]), L.TIMING["pinned"]))
        rows.append(L.LinkRow("h2d", "pageable", n, summarize([12e-6 + n / 11e9]), summarize([12e-6 + n / 11e9]),
                              L.TIMING["pageable"]))
    res = L.LinkResult(device=_Dev(), link=info, rows=tuple(rows), curves=tuple(L.summarize_curves(rows, info)),
                       checks=("pinned: H2D then D2H, byte for byte",))
    return {"gpuwhy": "0.1.0", "schema": 1, "kind": "bench-link", **to_plain(res.to_dict())}


def test_latency_and_link_sections(cli, recorded):
    (recorded / "lat.json").write_text(json.dumps(_latency_doc()))
    (recorded / "link.json").write_text(json.dumps(_link_doc()))
    out = recorded / "r.html"
    code, _, err = cli("report", "--out", str(out), *_files(recorded), "--latency", str(recorded / "lat.json"),
                       "--link", str(recorded / "link.json"))
    assert code == 0, err
    html = out.read_text()
    assert "Not measured: latency" not in html and "Not measured: host-device" not in html
    # the latency levels: ns and cycles; Little's law 4598 GB/s x 610 ns = 2.80 MB in flight
    assert ">DRAM</td><td class=n>610</td><td class=n>1,208</td>" in html
    assert "Little's law: 4,598 GB/s x 610 ns = 2.8 MB in flight, 21.2 kB per SM" in html
    assert "All 2 working sets" in html
    # the link: PCIe gen 5 x16 at 63.0 GB/s theoretical; the pinned H2D plateau near 55 GB/s, pinned vs pageable
    assert "PCIe gen 5 x16, 63.0 GB/s per direction theoretical" in html
    assert "host to device</td><td>pinned</td><td class=n>55." in html
    assert "pinned" in html and "x pageable on large copies" in html
    assert "All 8 timed copies" in html and "byte for byte" in html
    p = _TagBalance()
    p.feed(html)
    assert not p.errors and p.stack == [], (p.errors, p.stack)
    # a file from another command is refused
    line = _one_line_error(*cli("report", "--out", str(out), "--link", str(recorded / "lat.json"))[::2])
    assert "--link" in line and "bench-latency" in line


def test_unknown_link_shape_is_tabulated(cli, recorded):
    link = {"kind": "bench-link", "summary": "made-up shape",
            "transfers": [{"direction": "h2d", "size_bytes": 1 << 30, "gbs": 50.5, "median_s": 0.02}]}
    (recorded / "link.json").write_text(json.dumps(link))
    out = recorded / "r.html"
    code, _, err = cli("report", "--out", str(out), *_files(recorded), "--link", str(recorded / "link.json"))
    assert code == 0, err
    html = out.read_text()
    assert "made-up shape" in html and "<h3>transfers</h3>" in html and "50.5" in html and "1 GiB" in html


def test_text_is_escaped():
    probe = json.loads((RAW / "probe.json").read_text())
    probe["devices"][0]["identity"]["name"] = "<b>evil</b> & co"
    html = render_report(ReportInput(version="0.1.0", probe=probe, commands=("gpuwhy report --out 'a<b>.html'",),
                                     points=(ReportPoint("<script>alert(1)</script>", 1e9, 1e9),)))
    assert "<script" not in html and "<b>evil" not in html
    assert "&lt;b&gt;evil&lt;/b&gt; &amp; co" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "a&lt;b&gt;.html" in html


def test_roofline_svg_geometry():
    roofs = [Roof("fp32", "spec", 100e12, 1000e9), Roof("fp32", "measured", 90e12, 800e9)]  # FLOP/s, B/s
    svg = roofline_svg(roofs)
    ET.fromstring(svg)
    # one dashed (sheet) and one solid (measured) polyline; ridges 100 and 112.5 FLOP/byte
    polys = re.findall(r"<polyline [^>]*>", svg)
    assert len(polys) == 2 and sum("stroke-dasharray" in p for p in polys) == 1
    assert "ridge of fp32 sheet: 100 FLOP/byte" in svg and "ridge of fp32 measured: 112 FLOP/byte" in svg
    # decade labels on both axes: x 0.01 .. 100 FLOP/byte (the axis reaches elementwise kernels'
    # 0.08 FLOP/byte), y 1 GFLOP/s .. 1 PFLOP/s
    for tick in (">10 GFLOP/s<", ">0.01<", ">0.1<", ">1<", ">10<", ">100<"):
        assert tick in svg
    # the ridge circle sits where the slope meets the flat roof: same y as the flat part
    circ = re.search(r'<circle cx="([\d.]+)" cy="([\d.]+)" r="4.5" fill="#fff"', svg)
    first = re.search(r'points="([\d.]+),([\d.]+) ([\d.]+),([\d.]+) ([\d.]+),([\d.]+)"', polys[0])
    assert circ and first
    assert abs(float(circ.group(1)) - float(first.group(3))) < 0.2 and abs(float(circ.group(2)) - float(first.group(4))) < 0.2
    assert abs(float(first.group(4)) - float(first.group(6))) < 1e-6  # flat roof is horizontal


def test_live_probe_uses_the_latest_profile(cli, tmp_path, monkeypatch):
    """No files and no --gpu: the report probes (here: a stand-in returning the recorded probe) and
    takes the GPU's newest profile from the cache (the hand-transcribed H200 fixture, plus two
    synthetic mixed-intensity points to see that the sweep is drawn)."""
    import gpuwhy.device.probe as probe_mod
    from gpuwhy.profiles import DeviceProfile, save_profile

    recorded = json.loads((RAW / "probe.json").read_text())
    live = {k: v for k, v in recorded.items() if k not in ("gpuwhy", "schema", "kind")}
    monkeypatch.setattr(probe_mod, "probe_devices", lambda device=None, spec_dirs=(), **kw: live)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    fixture = json.loads((Path(__file__).parent / "fixtures" / "profiles" / "h200-2026-11-29.json").read_text())
    prof = DeviceProfile.from_dict(fixture)
    from dataclasses import replace

    prof = replace(prof, roofline_points={"bf16": [[1.0, 4.0e12], [100.0, 3.9e14]]}, roofline_date=prof.date)
    save_profile(prof)
    out = tmp_path / "live.html"
    code, _, err = cli("report", "--out", str(out), "--dtype", "bf16")
    assert code == 0, err
    html = out.read_text()
    assert "gpuwhy report: NVIDIA H200" in html and "live probe at report time" in html
    assert "latest profile in" in html and "bench profile 2026-11-29T08:11:10+00:00" in html
    assert "4,598" in html  # the profile's sustained DRAM bandwidth
    assert "keeps the ceilings only" in html  # a profile has no sweep rows
    svg = re.findall(r"<svg.*?</svg>", html, flags=re.S)[0]
    assert svg.count('r="2.2" fill="#59636e"') == 2  # the two sweep points


def test_reports_of_earlier_versions_are_recognised(cli, tmp_path):
    """A report an earlier gpuwhy wrote (docs/results, by the pre-template code) may be replaced; a look-alike may not."""
    from gpuwhy.render.report_html import is_gpuwhy_report

    old = (Path(__file__).resolve().parents[1] / "docs" / "results" / "2026-11-29-h200-report.html").read_text(encoding="utf-8")
    assert is_gpuwhy_report(old[:8192])
    assert not is_gpuwhy_report('<html><head><meta name="generator" content="Hugo 0.1"></head></html>')
    out = tmp_path / "old.html"
    out.write_text(old, encoding="utf-8")
    code, _, err = cli("report", "--out", str(out), "--gpu", "H200 SXM")
    assert code == 0, err
    assert out.read_text(encoding="utf-8") != old and is_gpuwhy_report(out.read_text(encoding="utf-8"))


def test_jinja2_is_imported_by_the_report_only():
    import os
    import subprocess
    import sys

    code = ("import sys, gpuwhy, gpuwhy.cli.app, gpuwhy.render.plot, gpuwhy.render.report_html; "
            "print('jinja2' in sys.modules); "
            "from gpuwhy.render.report_data import ReportInput; from gpuwhy.render.report_html import render_report; "
            "render_report(ReportInput(version='x')); print('jinja2' in sys.modules)")
    src = str(Path(__file__).resolve().parents[1] / "src")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": src}, check=True)
    assert out.stdout.split() == ["False", "True"], out
