"""benchmarks/regressions/ (issue 30's ten planted regressions): the catalog, the scoring of
`gpuwhy diff` on hand-made documents, the runner's plan and table, and (where a Python with
PyTorch is found: GPUWHY_TORCH_PYTHON, or this one) program.py's CPU smoke run and checksums."""

from __future__ import annotations

import copy
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks" / "regressions"
TEMPLATE = ROOT / "tests" / "fixtures" / "diff" / "dataloader.fixed.json.gz"
sys.path.insert(0, str(BENCH))
import catalog  # noqa: E402
import program  # noqa: E402  (no torch at import)
import run_regressions  # noqa: E402

from gpuwhy.verdict.causes import Cause  # noqa: E402


def _doc(shares: dict[str, float], regress: str | None, steps: int = 10) -> dict:
    """A `gpuwhy run --json` document of program.py (a recorded one's frame, hand-made shares: seconds over
    ``steps`` steps)."""
    doc = json.loads(gzip.decompress(TEMPLATE.read_bytes()))
    doc = copy.deepcopy(doc)
    doc["argv"] = ["python3", "benchmarks/regressions/program.py", "--steps", str(steps),
                   *(["--regress", regress] if regress else [])]
    doc["trace"] = None
    window = sum(shares.values())
    doc["window"] = {**doc["window"], "seconds": window, "how": f"the last {steps} of {steps + 3} steps"}
    d = doc["diagnosis"]
    d.update(window_s=window, judged_s=window, top_cause=max(shares, key=shares.get), remedies=[])
    d["shares"] = [{"cause": c, "label": c, "seconds": s, "share_pct": 100 * s / window, "side": "idle",
                    "busy_s": 0.0, "level": None, "evidence": []} for c, s in shares.items()]
    return doc


#: The baseline: GPU-busy, 10 steps of 10 ms (seconds per cause over the window).
BASE = {"kernels": 0.080, "launch_sized": 0.006, "copy": 0.004, "launch_overhead": 0.006, "host_work": 0.004}


def _write(tmp_path, name, doc) -> Path:
    p = tmp_path / f"{name}.gpuwhy.json"
    p.write_text(json.dumps(doc))
    return p


def test_the_catalog_is_the_programs_ten_with_known_causes():
    assert [r.name for r in catalog.REGRESSIONS] == list(program.REGRESSIONS)
    assert len(catalog.REGRESSIONS) == 10
    for r in catalog.REGRESSIONS:
        Cause(r.cause)  # a key of the one typed set
        assert r.why and not r.remedy


def test_a_planted_sync_scores_through_gpuwhy_diff(tmp_path):
    base = _write(tmp_path, "baseline", _doc(BASE, None))
    reg = dict(BASE, host_sync=0.015, launch_overhead=0.0075)  # +15 ms of sync, +1.5 ms of launch ramp
    after = _write(tmp_path, "sync_item", _doc(reg, "sync_item"))
    d = run_regressions.diff(run_regressions.parse_args([]), catalog.BY_NAME["sync_item"], base, after)
    assert "error" not in d, d
    row = catalog.score(catalog.BY_NAME["sync_item"], d)
    assert row["ok"] and row["top_contributor"] == "host_sync"
    assert row["named"] == ["host_sync", "launch_overhead"] and row["explained_pct"] == pytest.approx(100.0)
    assert row["explains"] and row["change_pct"] == pytest.approx(16.5) and row["notes"] == []


def test_a_wrong_top_contributor_and_a_thin_explanation_are_said(tmp_path):
    base = _write(tmp_path, "baseline", _doc(BASE, None))
    # the engine saw the planted sync as host work; four causes rose about as much: the three named hold < 80%
    reg = dict(BASE, host_work=0.009, launch_overhead=0.010, data_loading=0.004, queue_latency=0.004, host_sync=0.004)
    after = _write(tmp_path, "sync_item", _doc(reg, "sync_item"))
    d = run_regressions.diff(run_regressions.parse_args([]), catalog.BY_NAME["sync_item"], base, after)
    row = catalog.score(catalog.BY_NAME["sync_item"], d)
    assert row["ok"] is False and row["top_contributor"] == "host_work"
    assert row["explains"] is False and row["explained_pct"] == pytest.approx(100 * 0.013 / 0.021)
    assert any(n.startswith("top contributor host_work, planted host_sync") for n in row["notes"])
    assert any("< 80%" in n for n in row["notes"])


def test_a_regression_that_is_faster_is_flagged(tmp_path):
    base = _write(tmp_path, "baseline", _doc(BASE, None))
    after = _write(tmp_path, "no_bf16", _doc(dict(BASE, kernels=0.060), "no_bf16"))
    row = catalog.score(catalog.BY_NAME["no_bf16"],
                        run_regressions.diff(run_regressions.parse_args([]), catalog.BY_NAME["no_bf16"], base, after))
    assert row["change_pct"] < 0 and any(n.startswith("NOT SLOWER") for n in row["notes"])
    assert catalog.summarize([row])["not_slower"] == 1


def test_a_diff_that_fails_gives_an_error_row(tmp_path):
    base = _write(tmp_path, "baseline", _doc(BASE, None))
    empty = tmp_path / "cpu_op.gpuwhy.json"
    empty.write_text("")
    d = run_regressions.diff(run_regressions.parse_args([]), catalog.BY_NAME["cpu_op"], base, empty)
    assert d.get("error")
    row = catalog.score(catalog.BY_NAME["cpu_op"], d)
    assert row["ok"] is None and row["notes"][0].startswith("diff failed: ")
    assert catalog.score(catalog.BY_NAME["cpu_op"], None)["notes"] == ["no diff (a document is missing)"]


def test_the_table_fits_80_columns_and_counts():
    rows = []
    for i, r in enumerate(catalog.REGRESSIONS):
        d = {"top_contributor": r.cause if i else "host_work", "named": [r.cause], "explained_pct": 95.0 - 20 * (i == 3),
             "speedup_x": 0.8, "line": "x"}
        row = catalog.score(r, d)
        row["checksums"] = "same (relative 0 <= 0.02)" if i != 5 else "DIFFER (relative 0.1 > 0.02: planted 1, fixed 2)"
        row["alone_pct"] = 31.0
        rows.append(row)
    rows[2]["error"] = "no_bf16 gpuwhy: timed out after 180 s " + "x" * 120
    s = catalog.summarize(rows)
    assert (s["top_right"], s["explained"], s["both"], s["checksums_differ"], s["errors"]) == (9, 9, 8, 1, 1)
    text = catalog.format_table(rows, s)
    assert max(len(x) for x in text.splitlines()) <= 80
    assert "planted cause top contributor in 9 of 10" in text and "+25%" in text and "DIFF" in text


def test_the_plan_and_host_work_calibration():
    a = run_regressions.parse_args(["--only", "host_work,pageable", "--alone", "2"])
    jobs = run_regressions.plan(a)
    assert [j.label for j in jobs] == ["baseline gpuwhy", "pageable gpuwhy", "host_work gpuwhy",
                                       "baseline alone #1", "pageable alone #1", "host_work alone #1",
                                       "baseline alone #2", "pageable alone #2", "host_work alone #2"]
    cmd = run_regressions.command(a, jobs[2], 17.25, Path("/t"))
    assert cmd[1:5] == ["-m", "gpuwhy", "run", "--json"] and cmd[-6:] == ["--warmup", "3", "--regress", "host_work",
                                                                          "--host-ms", "17.2"]
    assert run_regressions.host_ms_for(0.0115) == pytest.approx(17.25) and run_regressions.host_ms_for(0.001) == 5.0
    assert run_regressions.host_ms_for(None) is None
    with pytest.raises(SystemExit):
        run_regressions.parse_args(["--only", "nope"])


def test_dry_run_prints_every_command_and_the_diffs(capsys):
    assert run_regressions.main(["--dry-run", "--only", "pageable"]) == 0
    out = capsys.readouterr().out
    assert "planted pageable_copy" in out and "--regress pageable" in out
    assert "gpuwhy diff" in out and "baseline.gpuwhy.json" in out


def _torch_python() -> str | None:
    for py in (os.environ.get("GPUWHY_TORCH_PYTHON"), sys.executable):
        if py and subprocess.run([py, "-c", "import torch, numpy"], capture_output=True).returncode == 0:
            return py
    return None


TORCH_PY = _torch_python()
needs_torch = pytest.mark.skipif(TORCH_PY is None, reason="no Python with PyTorch (set GPUWHY_TORCH_PYTHON)")


@needs_torch
def test_cpu_smoke_every_regression_trains_the_same():
    res = subprocess.run([sys.executable, str(BENCH / "run_regressions.py"), "--cpu-smoke", "--python", TORCH_PY],
                         capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stdout + res.stderr
    assert json.loads(res.stdout.splitlines()[-1]) == {"variants": 11, "failures": 0}
    assert res.stdout.count("checksum same") == 10


@needs_torch
def test_a_skipped_step_changes_the_checksum():
    """The checksum is how a regression that skips work is caught: one step fewer must fall outside the tolerance."""
    import score  # benchmarks/diagnosis, on the path through run_regressions

    def run(steps):
        p = subprocess.run([TORCH_PY, str(BENCH / "program.py"), *run_regressions.SMOKE_ARGS, "--steps", str(steps),
                            "--warmup", "1"], capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        return score.parse_diag_result(p.stdout)

    assert score.compare_checksums(run(3), run(2)).startswith("DIFFER")
