#!/usr/bin/env python3
"""Tests of the diagnosis benchmark's scoring and runner, on hand-made documents (testdata/): no GPU, no torch.

Run: python3 benchmarks/diagnosis/test_score.py (plain asserts; prints "N passed, 0 failed").
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import stat
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "testdata"
sys.path.insert(0, str(HERE))
import run_all  # noqa: E402
import score  # noqa: E402


def load(name):
    return json.loads((DATA / name).read_text())


def runs(*steps):
    return [{"step_s_mean": s, "checksum": 1.0, "checksum_rtol": 1e-6} for s in steps]


P = score.BY_NAME


def test_parse_diag_result_takes_the_first_line():
    # under --kernels the second line is the run under ncu, its steps many times slower
    text = "hello\nDIAG_RESULT {\"step_s_mean\": 1}\nnoise\nDIAG_RESULT {\"step_s_mean\": 2}\nbye\n"
    assert score.parse_diag_result(text) == {"step_s_mean": 1}
    assert score.parse_diag_result("nothing here") is None
    assert score.parse_diag_result("DIAG_RESULT {not json") is None
    assert score.parse_diag_result("DIAG_RESULT [1, 2]") is None
    assert score.parse_diag_result("") is None and score.parse_diag_result(None) is None


def test_checksums():
    a = {"checksum": 100.0, "checksum_rtol": 1e-3}
    assert score.compare_checksums(a, {"checksum": 100.05}).startswith("same")
    assert score.compare_checksums(a, {"checksum": 101.0}).startswith("DIFFER")
    assert score.compare_checksums(a, {"checksum": float("nan")}).startswith("DIFFER")
    assert score.compare_checksums(a, {}).startswith("not compared")
    assert score.compare_checksums(None, a).startswith("not compared")
    assert score.compare_checksums({"checksum": 0.0}, {"checksum": 0.0}).startswith("same")


def test_achieved_is_the_ratio_of_means_with_the_pair_spread():
    a = score.achieved([0.010, 0.012], [0.002, 0.0025])
    assert abs(a["x"] - 0.011 / 0.00225) < 1e-12
    assert abs(a["x_low"] - 0.010 / 0.0025) < 1e-12 and abs(a["x_high"] - 0.012 / 0.002) < 1e-12
    assert abs(a["planted_spread_pct"] - 0.002 / 0.011 * 100) < 1e-9
    assert score.achieved([], [0.1]) is None
    assert score.achieved([0.1], [None, 0.0]) is None  # no usable twin time
    assert score.achieved([0.1], [0.05])["fixed_spread_pct"] == 0.0


def test_right_cause_below_the_ceiling():
    row = score.score_program(P["python_work"], load("right.json"), runs(0.0102, 0.0100), runs(0.0011, 0.0012))
    assert row["ok"] is True and row["top_cause"] == "host_work"
    assert row["ceiling_x"] == 10.0
    assert abs(row["achieved_x"] - 0.0101 / 0.00115) < 1e-9
    assert abs(row["ach_over_ceiling"] - row["achieved_x"] / 10.0) < 1e-12
    assert row["beats_ceiling"] is False and not row["notes"], row["notes"]
    assert row["checksums"].startswith("same")


def test_a_twin_faster_than_the_ceiling_beats_it():
    row = score.score_program(P["pageable_h2d"], load("low_ceiling.json"), runs(0.020, 0.021), runs(0.005, 0.0052))
    assert row["ok"] is True and row["ceiling_x"] == 2.0
    assert row["beats_ceiling"] is True and row["beats_beyond_spread"] is True
    assert any(score.BEATS in n and "slowest pair" in n for n in row["notes"]), row["notes"]
    # within the spread: the mean beats the ceiling, the slowest pair does not
    row = score.score_program(P["pageable_h2d"], load("low_ceiling.json"), runs(0.0100, 0.0125), runs(0.0050, 0.0060))
    assert row["beats_ceiling"] is True and row["beats_beyond_spread"] is False
    assert any("within the runs' spread" in n for n in row["notes"])


def test_wrong_top_cause():
    row = score.score_program(P["python_work"], load("wrong.json"), runs(0.0102), runs(0.0011))
    assert row["ok"] is False and row["top_cause"] == "launch_overhead"
    assert row["ceiling_x"] == 1.5  # the planted remedy's ceiling, wherever it is listed
    assert row["beats_ceiling"] is True


def test_no_diagnosis_is_reported_not_fatal():
    row = score.score_program(P["d2h_sync"], load("no_diagnosis.json"), runs(0.0026), runs(0.0014))
    assert row["ok"] is None and row["ceiling_x"] is None and row["top_cause"] is None
    assert score.NO_DIAGNOSIS in row["notes"]
    assert abs(row["achieved_x"] - 0.0026 / 0.0014) < 1e-9  # the timings still count


def test_level_is_reported_not_scored():
    row = score.score_program(P["l2_resident"], load("l2_at_dram.json"), runs(0.0011), runs(0.0003))
    assert row["ok"] is True  # the cause is right
    assert row["level"] == "DRAM" and row["level_ok"] is False  # the largest memory_bound share says DRAM
    assert any("level: DRAM (expected L2" in n for n in row["notes"]), row["notes"]
    # a document that names L2 on the top share
    doc = load("l2_at_dram.json")
    doc["diagnosis"]["shares"][0]["seconds"] = 1.0
    row = score.score_program(P["l2_resident"], doc, runs(0.0011), runs(0.0003))
    assert row["level"] == "L2" and row["level_ok"] is True and not row["notes"]
    # programs with no expected level ignore it
    assert score.score_program(P["python_work"], load("right.json"), runs(1), runs(1))["level_ok"] is None


def test_remedy_not_offered():
    row = score.score_program(P["fp32_gemm"], load("not_offered.json"), runs(0.02), runs(0.002))
    assert row["ok"] is True and row["ceiling_x"] is None and row["ach_over_ceiling"] is None
    assert any("lower_precision not offered (offered: faster_kernel)" in n for n in row["notes"]), row["notes"]


def test_malformed_and_missing_documents():
    row = score.score_program(P["fp32_gemm"], load("malformed.json"), runs(0.02), runs(0.002))
    assert row["ok"] is None and any("shares is not a list" in n for n in row["notes"])
    for doc, why in ((None, "no gpuwhy document"), ({"diagnosis": 3}, "not an object"),
                     ({"diagnosis": {"shares": []}}, "no top_cause")):
        row = score.score_program(P["fp32_gemm"], doc, runs(0.02), runs(0.002))
        assert row["ok"] is None and any(why in n for n in row["notes"]), (why, row["notes"])
    row = score.score_program(P["fp32_gemm"], load("right.json"), runs(0.02), [], doc_error="gpuwhy exit 4")
    assert row["ok"] is None and row["notes"] == ["gpuwhy exit 4"] and row["achieved_x"] is None


def test_a_twin_that_computes_something_else_is_flagged():
    fixed = [{"step_s_mean": 0.001, "checksum": 2.0, "checksum_rtol": 1e-6}]
    row = score.score_program(P["python_work"], load("right.json"), runs(0.01), fixed)
    assert row["checksums"].startswith("DIFFER") and any("differs" in n for n in row["notes"])


def test_summary_and_table():
    rows = [
        score.score_program(P["python_work"], load("right.json"), runs(0.0102), runs(0.0011)),
        score.score_program(P["pageable_h2d"], load("low_ceiling.json"), runs(0.020), runs(0.005)),
        score.score_program(P["item_gate"], load("wrong.json"), runs(0.004), runs(0.001)),
        score.score_program(P["d2h_sync"], load("no_diagnosis.json"), runs(0.0026), runs(0.0014)),
        score.score_program(P["l2_resident"], load("l2_at_dram.json"), runs(0.0011), runs(0.0003)),
    ]
    rows[3]["error"] = "d2h_sync fixed #2: exit 1: DIAG_CHECK_FAILED something"
    s = score.summarize(rows)
    assert s["judged"] == 4 and s["top_cause_right"] == 3 and s["without_diagnosis"] == 1
    assert s["beating_ceiling"] == 1 and s["beating_ceiling_beyond_spread"] == 1  # pageable: 4x > 2x
    ratios = sorted(r["ach_over_ceiling"] for r in rows if r["ach_over_ceiling"] is not None)
    assert len(ratios) == 3 and s["median_achieved_over_ceiling"] == ratios[1]
    assert s["errors"] == 1
    table = score.format_table(rows, s)
    lines = table.splitlines()
    assert all(len(ln) <= 80 for ln in lines), max(lines, key=len)
    assert lines[0].startswith("program") and "prof" in lines[0] and "a/c" in lines[0]
    assert "top cause right in 3 of 4 (1 of 5 without a diagnosis)" in table
    assert "twins beating their ceiling: 1 (1 beyond the runs' spread)" in table
    assert f"median achieved/ceiling: {ratios[1]:.2f} (over 3 programs)" in table
    assert "  " + score.NO_DIAGNOSIS in table and "error: d2h_sync fixed #2" in table
    assert "programs with an error: 1" in table
    row_line = next(ln for ln in lines if ln.startswith("item_gate"))
    assert "|launch_overhead|" in row_line and "| NO|" in row_line
    empty = score.format_table([], score.summarize([]))
    assert "top cause right in 0 of 0" in empty and "median achieved/ceiling: -" in empty


def test_catalog_matches_the_programs():
    names = {p.stem for p in (HERE / "programs").glob("*.py") if p.stem != "diag_common"}
    assert names == set(score.BY_NAME), names ^ set(score.BY_NAME)
    assert len(score.PROGRAMS) >= 12
    kernels = {p.name for p in score.PROGRAMS if p.kernels}
    assert kernels == {"fp32_gemm", "elementwise_chain", "few_blocks", "l2_resident"}
    assert score.BY_NAME["l2_resident"].level == "L2"
    readme = (HERE / "README.md").read_text()
    for p in score.PROGRAMS:  # the README names each program with its cause and remedy keys
        assert p.name in readme and p.cause in readme and p.remedy in readme, p.name


def _dry(args):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = run_all.main(["--dry-run", *args])
    return rc, buf.getvalue()


def test_dry_run_prints_the_plan():
    rc, out = _dry([])
    assert rc == 0
    cmds = [ln for ln in out.splitlines() if ln.startswith("phase ")]
    assert len(cmds) == 12 * 6, len(cmds)  # 2 plain runs + gpuwhy on both variants in phase 1, 2 plain runs in phase 2
    gw = [ln for ln in cmds if " gpuwhy " in ln.split("$")[0]]
    assert len(gw) == 12 and sum("--kernels" in ln for ln in gw) == 4
    assert all("--json --steps 30" in ln and "-- python3 benchmarks/diagnosis/programs/" in ln for ln in gw)
    assert "[calib_args of the first planted run]" in next(ln for ln in cmds if "d2h_sync fixed #1" in ln)
    assert "[calib_args" not in next(ln for ln in cmds if "d2h_sync planted #1" in ln)
    rc, out = _dry(["--only", "few_blocks,decode_b1", "--skip-gpuwhy", "--repeats", "1", "--steps", "7"])
    cmds = [ln for ln in out.splitlines() if ln.startswith("phase ")]
    assert rc == 0 and len(cmds) == 4 and all("--steps 7" in ln for ln in cmds)
    assert "MISSING" not in out
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            run_all.main(["--dry-run", "--only", "nope"])
            raise AssertionError("an unknown program must be refused")
        except SystemExit as exc:
            assert exc.code == 2
    assert "unknown program(s): nope" in err.getvalue()


def _fake_python(tmp: Path) -> str:
    exe = tmp / "python3-fake"
    exe.write_text(f"#!/bin/sh\nexec {sys.executable} {DATA / 'fake_python.py'} \"$@\"\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return str(exe)


def test_runner_end_to_end_with_a_fake_python():
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        out = tmp / "res.json"
        env = dict(os.environ, FAKE_CRASH="tiny_layers", FAKE_DIFFER="d2h_sync")
        p = subprocess.run([sys.executable, str(HERE / "run_all.py"), "--python", _fake_python(tmp), "--out", str(out),
                            "--trace-dir", str(tmp / "traces"), "--only",
                            "python_work,tiny_layers,pageable_h2d,d2h_sync,l2_resident"],
                           capture_output=True, text=True, env=env, timeout=120)
        assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)  # tiny_layers crashed
        res = json.loads(out.read_text())
        rows = {r["program"]: r for r in res["rows"]}
        assert rows["python_work"]["ok"] is True and rows["python_work"]["ceiling_x"] == 10.0
        assert abs(rows["python_work"]["achieved_x"] - 0.0102 / 0.0011) < 1e-9
        assert len(rows["python_work"]["runs"]["planted"]) == 2 and len(rows["python_work"]["runs"]["fixed"]) == 2
        assert rows["python_work"]["profiled_step_s_mean"] == 0.0102
        assert rows["pageable_h2d"]["beats_ceiling"] is True
        assert rows["l2_resident"]["level"] == "DRAM"
        assert "exit 1: DIAG_CHECK_FAILED fake failure" in rows["tiny_layers"]["error"]
        assert rows["tiny_layers"]["achieved_x"] is None
        d2h = rows["d2h_sync"]
        assert d2h["calib_args"] == ["--host-units", "17"]
        later = d2h["runs"]["fixed"] + d2h["runs"]["planted"][1:]
        assert later and all(r["result"]["got_args"] == ["--host-units"] for r in later)
        assert "--host-units 17" in d2h["runs"]["gpuwhy"]["cmd"]
        assert d2h["checksums"].startswith("DIFFER") and score.NO_DIAGNOSIS in d2h["notes"]
        docs = out.with_name("res-docs")
        assert (docs / "python_work.gpuwhy.json").is_file() and (docs / "python_work.planted1.log").is_file()
        assert res["summary"]["top_cause_right"] == 3 and res["summary"]["judged"] == 3
        tail = p.stdout.rstrip().splitlines()
        assert tail[-1].startswith("programs with an error: 1"), tail[-4:]
        assert any(ln.startswith("top cause right in 3 of 3") for ln in tail[-6:])
        assert "no diagnosis in the document (engine not built yet)" in p.stdout
        # a deadline with room for phase 1 only drops the repeats (each fake run takes 1 s, each is
        # estimated at 6 s: the second starts at about 1 s, 7 s <= 7.4; the third at about 2 s, 8 s > 7.4)
        p = subprocess.run([sys.executable, str(HERE / "run_all.py"), "--python", _fake_python(tmp), "--out",
                            str(tmp / "d.json"), "--only", "python_work", "--skip-gpuwhy", "--deadline-s", "7.4"],
                           capture_output=True, text=True, timeout=120, env=dict(os.environ, FAKE_SLEEP="1.0"))
        r = json.loads((tmp / "d.json").read_text())["rows"][0]
        assert p.returncode == 0, (p.stdout, p.stderr)
        assert len(r["runs"]["planted"]) == 1 and len(r["runs"]["fixed"]) == 1 and r["runs"]["gpuwhy"] is None
        assert any("skipped for the deadline: python_work planted #2, python_work fixed #2" in n for n in r["notes"])
        assert "gpuwhy not run (--skip-gpuwhy)" in r["notes"]


def main() -> int:
    tests = [(n, f) for n, f in sorted(globals().items()) if n.startswith("test_") and callable(f)]
    failed = 0
    for name, fn in tests:
        try:
            fn()
        except Exception:  # noqa: BLE001 - report every failing test, then the count
            failed += 1
            print(f"FAIL {name}")
            traceback.print_exc()
    print(f"{len(tests) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
