"""`gpuwhy fleet summarize` on a few hundred synthetic H200 results made from the recorded H200
figures (tests/fleet_synth.py): every planted slow GPU found, no false positive, failing GPUs
listed by host and UUID; --json and --csv; exit codes."""

from __future__ import annotations

import csv
import io
import json

import pytest
from fleet_synth import make_fleet

from gpuwhy.check.fleet import gather, summarize
from gpuwhy.check.policy import load_policy
from gpuwhy.model.multi_gpu.spread import Spread, is_outlier, mad, median, spread

SEEDS = (1, 2, 3, 4, 5)


def _found(summary):
    return {(o.record.uuid, o.figure) for o in summary.outliers}


def test_median_and_mad():
    assert median([3, 1, 2]) == 2 and median([4, 1, 2, 3]) == 2.5
    assert mad([1, 2, 3, 4, 100]) == 1  # one wild value moves neither
    s = spread([10.0, 10.1, 9.9, 10.0, 5.0])
    assert (s.n, s.median, s.low, s.high) == (5, 10.0, 5.0, 10.1) and s.mad == pytest.approx(0.1)
    with pytest.raises(ValueError, match=r"^median of no values$"):
        median([])


def test_outlier_needs_both_mads_and_the_floor():
    tight = Spread(8, 100.0, 0.1, 99.8, 100.2)
    assert not is_outlier(99.0, tight, True, 5, 0.05)  # 10 MADs off, but only 1% below: noise of a tight fleet
    assert is_outlier(94.0, tight, True, 5, 0.05)
    wide = Spread(8, 100.0, 3.0, 90.0, 110.0)
    assert not is_outlier(90.0, wide, True, 5, 0.05)  # 10% below, but within 5 MADs of a wide population
    assert is_outlier(84.0, wide, True, 5, 0.05)
    assert is_outlier(1.3, Spread(8, 1.0, 0.01, 0.98, 1.02), False, 5, 0.20)  # a time: higher is worse
    assert not is_outlier(0.5, Spread(8, 1.0, 0.01, 0.98, 1.02), False, 5, 0.20)


@pytest.mark.parametrize("seed", SEEDS)
def test_every_planted_slow_gpu_found_and_no_false_positive(tmp_path, seed):
    truth = make_fleet(tmp_path, seed)  # 40 nodes x 8 = 320 GPUs
    summary = summarize(gather([str(tmp_path)]), load_policy())
    assert summary.to_dict()["gpus"] == 320 and summary.gathered.files == 40
    assert _found(summary) == truth["slow"]
    failing = {r.uuid for r in summary.failing}
    assert failing == truth["fail"] | truth.get("also_failing", set())
    assert truth["fail"] <= failing and not (truth["wobble"] & ({u for u, _ in _found(summary)} | failing))
    # listed by host and UUID
    hosts = {(o.record.host, o.record.uuid) for o in summary.outliers}
    assert ("node-003", f"GPU-{seed:04x}0003-0000-4000-8000-000000000005") in hosts
    assert not summary.passed


@pytest.mark.parametrize("seed", SEEDS)
def test_a_clean_fleet_passes(tmp_path, seed):
    make_fleet(tmp_path, seed + 100, plants=())
    summary = summarize(gather([str(tmp_path)]), load_policy())
    assert summary.outliers == () and summary.failing == () and summary.passed
    (model,) = summary.models
    dram = next(f for f in model.figures if f.key == "dram_bandwidth_gbs")
    assert dram.spread.n == 320 and 4580 < dram.spread.median < 4605 and dram.judged


def test_cli_tables_json_csv_and_exit_codes(cli, tmp_path):
    truth = make_fleet(tmp_path, 7)
    code, out, err = cli("fleet", "summarize", str(tmp_path))
    assert code == 1
    assert "outlier GPUs" in err and "failing GPUs" in err and len(err.strip().splitlines()) == 1
    assert "NVIDIA H200, check runs: 320 GPUs" in out and "node-003" in out
    code, out, err = cli("fleet", "summarize", str(tmp_path), "--json")
    assert code == 1
    doc = json.loads(out)
    assert doc["kind"] == "fleet" and doc["passed"] is False and doc["gpus"] == 320
    fig = doc["models"][0]["figures"]["dram_bandwidth_gbs"]
    assert fig["unit"] == "GB/s" and isinstance(fig["median"], float) and isinstance(fig["mad"], float)
    assert {(o["uuid"], o["figure"]) for o in doc["outliers"]} == truth["slow"]
    assert {f["uuid"] for f in doc["failing"]} >= truth["fail"]
    assert all(f["failed_checks"] for f in doc["failing"])
    code, out, err = cli("fleet", "summarize", str(tmp_path), "--csv")
    assert code == 1
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 320 and "dram_bandwidth_gbs" in rows[0] and "launch_overhead_us" in rows[0]
    flagged = {(r["uuid"], f) for r in rows for f in r["outlier_figures"].split()}
    assert flagged == truth["slow"]
    assert float(rows[0]["dram_bandwidth_gbs"]) > 4000


def test_cli_expect_catches_nodes_that_never_reported(cli, tmp_path):
    make_fleet(tmp_path, 8, nodes=6, plants=())
    code, out, err = cli("fleet", "summarize", str(tmp_path), "--expect", "48")
    assert code == 0, err
    code, out, err = cli("fleet", "summarize", str(tmp_path), "--expect", "64")
    assert code == 1 and "found 48 GPUs, expected 64" in err


def test_newest_run_of_a_gpu_counts_once(tmp_path):
    make_fleet(tmp_path, 9, nodes=5, plants=())
    doc = json.loads((tmp_path / "node-000.json").read_text())
    doc["date"] = "2026-11-01T00:00:00+00:00"  # an older run of node 0, slower: must be dropped
    for o in doc["observations"]:
        o["dram_bandwidth_gbs"] *= 0.5
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "node-000.json").write_text(json.dumps(doc))
    g = gather([str(tmp_path)])
    assert g.duplicates == 8 and len(g.records) == 40
    assert summarize(g, load_policy()).outliers == ()


def test_profiles_and_check_runs_are_summarized_apart(tmp_path):
    make_fleet(tmp_path, 10, nodes=1, plants=())
    prof = {"uuid": "GPU-p1", "name": "NVIDIA H200", "date": "2026-12-01T00:00:00+00:00", "dram_bandwidth_gbs": 4588.0,
            "launch_overhead_s": 3.5e-6}
    (tmp_path / "prof.json").write_text(json.dumps(prof))
    s = summarize(gather([str(tmp_path)]), load_policy())
    assert sorted((m.method, m.gpus) for m in s.models) == [("bench", 1), ("check", 8)]
    bench = next(m for m in s.models if m.method == "bench")
    assert not bench.figures[0].judged  # one GPU: too few to call outliers


def test_bad_inputs_are_one_line(cli, tmp_path):
    code, out, err = cli("fleet", "summarize", str(tmp_path / "nope"))
    assert code == 2 and "does not exist" in err
    (tmp_path / "notes.txt").write_text("hello")
    code, out, err = cli("fleet", "summarize", str(tmp_path))
    assert code == 2 and "no GPU results found" in err
    (tmp_path / "x.json").write_text('{"kind": "llm"}')
    code, out, err = cli("fleet", "summarize", str(tmp_path / "x.json"))
    assert code == 2 and "is not a `gpuwhy check --json` document" in err
    code, out, err = cli("fleet", "summarize", str(tmp_path), "--json")  # found in a folder: skipped, then nothing left
    assert code == 2 and "1 file skipped" in err
    make_fleet(tmp_path, 11, nodes=1, plants=())
    code, out, err = cli("fleet", "summarize", str(tmp_path), "--mads", "0")
    assert code == 2 and "--mads" in err
    code, out, err = cli("fleet", "summarize", str(tmp_path), "--json", "--csv")
    assert code == 2 and "exclude each other" in err
    for e in (err,):
        assert "Traceback" not in e
