"""The HTML report of `gpuwhy run` (--report) and `gpuwhy report --run`: the timeline strip, the budget,
the fixes, the top kernels, escaping, and the guards on files. Driven by the fake profiler of the run
tests (a real H200 trace stands in for the program's), so no GPU and no PyTorch are needed."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from conftest import one_line

from gpuwhy.api import run_program as rp
from gpuwhy.api.run import run_program, to_json
from gpuwhy.importers.timeline.results import CAUSE_LABELS
from gpuwhy.render.jsonout import SCHEMA_VERSION
from gpuwhy.units import fmt_cell
from gpuwhy.render.report_data import ReportInput
from gpuwhy.render.report_html import GENERATOR_MARK, REPORT_END, render_report
from gpuwhy.render.report_run import BUSY_COLOR, CAUSE_COLORS, STRIP_H, run_section, strip
from test_run_program import FakeProfiler

REAL = Path(__file__).parent / "fixtures" / "real"


def _doc(tmp_path, trace="trace_dataloader.json") -> dict:
    script = tmp_path / "prog.py"
    script.write_text("pass\n")
    r = run_program(["python", str(script), "--lr", "1"], tmp_path / "out",
                    profiler_factory=lambda: FakeProfiler(REAL / trace))
    return json.loads(json.dumps({"gpuwhy": "test", "schema": SCHEMA_VERSION, "kind": "run", **to_json(r)}))


#: An idle cause's label (the timeline's parts are named by the budget's shares).
HOST = CAUSE_LABELS["host_work"]


def _section(page: str) -> str:
    a = page.index('<section id="run">')
    return page[a:page.index("</section>", a)]


# --------------------------------------------------------------------------- the strip


def test_strip_geometry_by_hand():
    # two bins of 1 s: busy 0.25 + "data" 0.75; then host work 1.0
    tl = {"window_s": 2.0, "bin_s": 1.0, "causes": ["data", HOST],
          "bins": [{"start_s": 0.0, "end_s": 1.0, "busy_s": 0.25, "idle_s": {"data": 0.75, HOST: 0.0}},
                   {"start_s": 1.0, "end_s": 2.0, "busy_s": 0.0, "idle_s": {"data": 0.0, HOST: 1.0}}]}
    s = strip(tl)
    c0, c1 = s["cols"]
    assert (c0["x"], c0["w"], c1["x"]) == ("0", "500", "500")  # 1000 units wide, two columns
    # stacked from the bottom (y grows down, height 100): busy 25 units at y 75, then data 75 units at y 0
    assert [(g["name"], g["y"], g["h"]) for g in c0["segs"]] == [("GPU busy", "75", "25"), ("data", "0", "75")]
    assert [(g["name"], g["y"], g["h"]) for g in c1["segs"]] == [(HOST, "0", "100")]  # empty parts: no segment
    assert c1["segs"][0]["color"] == CAUSE_COLORS[HOST] and c0["segs"][0]["color"] == BUSY_COLOR
    assert c0["title"] == "0 s to 1 s: GPU busy 250 ms (25%); data 750 ms (75%)"
    assert s["segments"] == 3
    assert [(x["name"], x["time"], x["pct"]) for x in s["legend"]] == [
        ("GPU busy", "250 ms", "12.5%"), ("data", "750 ms", "37.5%"), (HOST, "1 s", "50.0%")]
    assert [(t["pct"], t["label"], t["align"]) for t in s["ticks"]] == [
        (0, "0", "start"), (25, "500 ms", "mid"), (50, "1 s", "mid"), (75, "1.5 s", "mid"), (100, "2 s", "end")]
    assert (s["n"], s["bin"], s["window"]) == (2, "1 s", "2 s")
    # a document without window_s and bin_s (hand-made): both from the bins, the same figures
    bare = strip({k: v for k, v in tl.items() if k not in ("window_s", "bin_s")})
    assert bare["legend"] == s["legend"] and (bare["bin"], bare["window"]) == ("1 s", "2 s") and bare["ticks"] == s["ticks"]
    # a bin of no length (a broken document) draws nothing and divides by nothing
    odd = strip({"causes": ["data"], "bins": [{"start_s": 1.0, "end_s": 1.0, "busy_s": 0.5, "idle_s": {"data": 0.0}}]})
    assert odd["cols"][0]["segs"][0]["h"] == "0" and odd["cols"][0]["title"] == "1 s to 1 s: GPU busy"
    assert odd["legend"][0]["pct"] == "n/a" and odd["ticks"] == []
    assert strip({"bins": []}) is None


def test_every_budget_share_has_its_own_colour():
    names = list(CAUSE_LABELS.values())
    assert set(names) == set(CAUSE_COLORS)
    colours = [CAUSE_COLORS[n] for n in names] + [BUSY_COLOR]
    assert len(set(colours)) == len(colours)


def test_real_trace_page_has_one_rect_per_non_empty_segment(tmp_path):
    doc = _doc(tmp_path)
    page = render_report(ReportInput(version="test", run=doc))
    want = sum((b["busy_s"] > 0) + sum(v > 0 for v in b["idle_s"].values()) for b in doc["timeline"]["bins"])
    sec = _section(page)
    assert sec.count("<rect ") == want and want >= len(doc["timeline"]["bins"])
    assert sec.count("<g><title>") == len(doc["timeline"]["bins"]) == 160
    # each column's segments fill the strip's height (bins are full: busy + idle = the bin)
    for col in re.findall(r"<g><title>.*?</g>", sec, re.S):
        hs = [float(h) for h in re.findall(r'height="([0-9.]+)"', col)]
        assert sum(hs) == pytest.approx(STRIP_H, abs=1e-3)
    assert "data loading (DataLoader)" in sec and CAUSE_COLORS["data loading (DataLoader)"] in sec
    assert html.escape(doc["trace"]) in sec and "Perfetto" in sec
    diag = doc["diagnosis"]
    assert f"<b>Verdict:</b> {html.escape(diag['line'])}" in sec
    assert diag["line"].startswith("data-loading-bound: data loading (DataLoader), 93% of the judged window")
    fix = diag["remedies"][0]
    assert fix["key"] == "more_loader_workers" and f"the window runs at most {fmt_cell(fix['ceiling_x'])}x faster" in sec
    # the ceiling is the judged window over the fix's floor, not Amdahl's law (which it may exceed)
    assert "Amdahl" not in sec and "the larger of the GPU time and the host time the fix leaves" in sec
    assert "not measured" in sec  # regimes from a trace alone
    assert page.startswith("<!DOCTYPE html>") and GENERATOR_MARK in page and page.rstrip().endswith(REPORT_END)
    assert 'id="roofline"' not in page  # a run alone: the page is the run's


def test_kernel_names_and_all_text_are_escaped(tmp_path):
    doc = _doc(tmp_path)
    evil = "void gemm<float, 4><<<grid>>>(T*) <script>alert(1)</script>"
    doc["kernels"][0]["name"] = evil
    doc["kernels"][0]["regime"] = "memory"
    doc["kernels"][0]["roof_pct"] = 91.4
    doc["argv"] = ["python", "<b>x.py"]
    doc["timeline"]["causes"][0] = "<i>cause</i>"
    for b in doc["timeline"]["bins"]:
        b["idle_s"]["<i>cause</i>"] = b["idle_s"].pop("data loading (DataLoader)")
    page = render_report(ReportInput(version="test", run=doc))
    assert "<script>" not in page and "<b>x.py" not in page and "<i>cause</i>" not in page
    assert html.escape(evil, quote=False) in page or html.escape(evil) in page
    assert "&lt;i&gt;cause&lt;/i&gt;" in page  # in the legend and the hover titles
    row = page[page.index(html.escape(evil)[:30]):]
    row = row[:row.index("</tr>")]
    assert ">memory<" in row and ">91%<" in row  # regime and % of roof shown when the document has them


def test_fixes_and_the_whole_window(tmp_path):
    doc = _doc(tmp_path)
    doc["diagnosis"]["remedies"][0]["ceiling_x"] = None  # removing the whole window (inf, null in JSON)
    sec = run_section(doc)
    assert sec["fixes"][0]["speedup"] == "nothing would be left of the window"
    second = doc["diagnosis"]["remedies"][1]
    assert sec["fixes"][1]["speedup"] == f"the window runs at most {fmt_cell(second['ceiling_x'])}x faster"
    assert sec["fixes"][1]["detail"].startswith(second["key"].replace("_", " ") + ": removes ")
    assert sec["fixes"][1]["remedies"] == [second["text"]]
    assert sec["verdict"] == doc["diagnosis"]["line"]


def test_measured_regimes_and_levels_are_shown_and_the_rest_not_measured(tmp_path):
    doc = _doc(tmp_path)
    doc["kernels"][1].update(regime="memory", roof_pct=64.0, deciding_level="L2", measured_launches=2)
    doc["kernels"][2].update(regime=None, roof_pct=None, measured_launches=2)
    sec = run_section(doc)
    assert sec["kernels"].rows[1][5:] == ["memory (L2)", "64%"]
    assert sec["kernels"].rows[2][5:] == ["not classified", "not measured"]  # measured, but ncu could not say
    assert sec["kernels"].rows[0][5:] == ["not measured", "not measured"]
    k = doc["kernels"][1]  # its share of the window: its time over the budget's window
    assert sec["kernels"].rows[1][4] == f"{100 * k['total_s'] / doc['diagnosis']['window_s']:.1f}%"


def test_no_budget_and_old_document(tmp_path):
    doc = _doc(tmp_path)
    no_gpu = {**doc, "diagnosis": None, "timeline": None, "kernels": []}
    page = render_report(ReportInput(version="test", run=no_gpu))
    assert "No GPU work in the window" in page and "<rect " not in page
    old = {k: v for k, v in doc.items() if k not in ("timeline", "kernels")}
    page = render_report(ReportInput(version="test", run=old))
    assert "no timeline" in page and "The time budget of the window" in page


def test_run_section_in_the_full_report(tmp_path, cli):
    doc_path = tmp_path / "run.json"
    doc_path.write_text(json.dumps(_doc(tmp_path)))
    out = tmp_path / "r.html"
    code, o, err = cli("report", "--out", str(out), "--gpu", "H200", "--run", str(doc_path), "--json")
    assert code == 0, err
    rep = json.loads(o)
    assert rep["sections"]["run"] is True
    page = out.read_text()
    assert 'id="run"' in page and 'id="roofline"' in page and '<a href="#run">Run</a>' in page
    assert "--dtype fp32" in page


def test_report_run_alone_probes_nothing(tmp_path, cli, monkeypatch):
    from gpuwhy.device import probe
    from gpuwhy.errors import NoDeviceError

    calls = []

    def no_gpu(*a, **k):
        calls.append(1)
        raise NoDeviceError("no GPU here")

    monkeypatch.setattr(probe, "probe_devices", no_gpu)
    doc_path = tmp_path / "run.json"
    doc_path.write_text(json.dumps(_doc(tmp_path)))
    code, o, err = cli("report", "--out", str(tmp_path / "r.html"), "--run", str(doc_path))
    assert code == 0, err
    assert calls == []
    check = REAL.parents[2] / "docs" / "results" / "raw" / "2026-12-01-h200-refactor" / "check.json"
    code, o, err = cli("report", "--out", str(tmp_path / "r2.html"), "--run", str(doc_path), "--check", str(check))
    assert code == 0, err
    assert calls == [1]  # with another document the live probe is tried, as before

# --------------------------------------------------------------------------- the commands


SCRIPT = "import pathlib, sys\npathlib.Path(sys.argv[1]).write_text('ran')\n"


@pytest.fixture
def prog(tmp_path, monkeypatch):
    """A script that writes a file when it runs (the file, not yet there), under the fake profiler of the decode trace."""
    script = tmp_path / "prog.py"
    script.write_text(SCRIPT)
    monkeypatch.setattr(rp, "torch_profiler", lambda: FakeProfiler(REAL / "trace_decode.json.gz"))
    return script, tmp_path / "ran.txt"


def test_run_report_end_to_end_and_report_run_gives_the_same_section(tmp_path, cli, prog):
    script, ran = prog
    page = tmp_path / "run.html"
    code, out, err = cli("run", "--json", "--report", str(page), "--out", str(tmp_path / "o"), "--",
                         "python", str(script), str(ran))
    assert code == 0, err
    assert ran.read_text() == "ran"
    doc = json.loads(out)
    assert doc["kind"] == "run" and len(doc["timeline"]["bins"]) == 160
    text = page.read_text()
    assert text.rstrip().endswith(REPORT_END) and CAUSE_LABELS["launch_overhead"] in _section(text)
    made = text[text.index('<section id="made">'):]
    made = html.unescape(made).replace(" \\\n    ", " ")  # the command is shown wrapped before each option
    assert f"gpuwhy run --out {tmp_path / 'o'} --json --report {page} -- python {script} {ran}" in made
    saved = tmp_path / "run.json"
    saved.write_text(out)
    again = tmp_path / "again.html"
    code, out2, err = cli("report", "--out", str(again), "--run", str(saved))
    assert code == 0, err
    assert f"report written to {again}" in err
    assert _section(again.read_text()) == _section(text)
    assert "--dtype" not in again.read_text()  # a run alone draws no roofline: no dtype in its command line
    # gpuwhy's own report is replaced on the next run; one edited in place since is not (issue 31)
    before = page.read_text()
    code, screen, err = cli("run", "--report", str(page), "--out", str(tmp_path / "o"), "--", "python", str(script), str(ran))
    assert code == 0, err
    assert f"report written to {page}" in err and "launch overhead" in screen  # the screen, then the note
    assert page.read_text() != before  # the new run's page (its own command line and time)
    page.write_text(page.read_text().replace("<h1>", "<h1>OLD "))  # edited in place, still ending as it did
    code, _, err = cli("run", "--report", str(page), "--out", str(tmp_path / "o"), "--", "python", str(script), str(ran))
    assert code == 2 and "has been changed since" in err
    assert "<h1>OLD " in page.read_text()


def test_run_report_refuses_a_users_file_before_running(tmp_path, cli, prog):
    script, ran = prog
    mine = tmp_path / "notes.html"
    mine.write_text("<html>my notes</html>\n")
    code, out, err = cli("run", "--report", str(mine), "--out", str(tmp_path / "o"), "--", "python", str(script), str(ran))
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "--report" in err and "gpuwhy did not write it" in err
    assert mine.read_text() == "<html>my notes</html>\n" and not ran.exists()  # the program never ran
    code, out, err = cli("run", "--report", str(tmp_path / "nope" / "r.html"), "--", "python", str(script), str(ran))
    assert code == 2 and "does not exist" in err and len(err.strip().splitlines()) == 1


def test_no_report_when_the_program_fails(tmp_path, cli, prog):
    _, ran = prog
    bad = tmp_path / "bad.py"
    bad.write_text("import sys\nsys.exit(3)\n")
    page = tmp_path / "r.html"
    code, out, err = cli("run", "--report", str(page), "--out", str(tmp_path / "o"), "--", "python", str(bad))
    assert code == 4 and "exit code 3" in err and len(err.strip().splitlines()) == 1
    assert not page.exists()


def test_report_run_refuses_other_documents(tmp_path, cli):
    other = tmp_path / "probe.json"
    other.write_text(json.dumps({"gpuwhy": "0.1.0", "schema": 1, "kind": "trace"}))
    listing = tmp_path / "list.json"
    listing.write_text("[1, 2]")
    for path, words in ((other, "holds a 'trace' document, not the output of `gpuwhy run --json`"),
                        (listing, "holds a JSON list, not an object")):
        code, out, err = cli("report", "--out", str(tmp_path / "r.html"), "--run", str(path))
        assert code == 2 and len(err.strip().splitlines()) == 1 and words in err, err
        assert "--run" in err
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("edit, says", [
    (lambda d: {"kind": "run"}, "schema None"),
    (lambda d: {**d, "schema": 999}, "schema 999, and this gpuwhy reads schema 2"),
    (lambda d: {**d, "schema": 1}, "schema 1, and this gpuwhy reads schema 2"),  # before the verdict engine
    (lambda d: {**d, "argv": "python x.py"}, "no 'argv' list"),
    (lambda d: {**d, "diagnosis": [1, 2]}, "'diagnosis' is a list, not an object"),
    (lambda d: {**d, "diagnosis": {**d["diagnosis"], "window_s": "lots"}}, "diagnosis.window_s 'lots' is not a positive number"),
    (lambda d: {**d, "diagnosis": {**d["diagnosis"], "window_s": 0}}, "diagnosis.window_s 0 is not a positive number"),
    (lambda d: {**d, "diagnosis": {**d["diagnosis"], "shares": d["diagnosis"]["shares"] * 3}},
     "the shares add up to 300%, more than the window"),
    (lambda d: {**d, "kernels": [{**d["kernels"][0], "launches": -5}]}, "a kernel with a time or launch count"),
    (lambda d: {**d, "timeline": {**d["timeline"], "bins": d["timeline"]["bins"] * 70}}, "more than 10,000 bins"),
])
def test_report_run_refuses_what_gpuwhy_run_did_not_write(tmp_path, cli, edit, says):
    doc = _doc(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(edit(doc)))
    code, out, err = cli("report", "--run", str(bad), "--out", str(tmp_path / "r.html"))
    line = one_line(code, err)
    assert says in line and "--run" in line
    assert not (tmp_path / "r.html").exists()


def test_report_output_that_is_a_device_or_pipe_is_refused(tmp_path, cli):
    import os

    doc = tmp_path / "run.json"
    doc.write_text(json.dumps(_doc(tmp_path)))
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for out in ("/dev/null", str(fifo)):
        code, _, err = cli("report", "--run", str(doc), "--out", out)
        assert "is not a regular file (a device, pipe or socket)" in one_line(code, err)
