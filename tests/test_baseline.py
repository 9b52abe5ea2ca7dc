"""`check --baseline` / `bench --baseline` and `--save-baseline`: a planted 10% regression fails
naming the figure, a 2% wobble passes, tolerances come from the policy, no user file is lost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuwhy.check.baseline import Baseline, baseline_figures, compare, load_baseline
from gpuwhy.check.figures import RunRecord, read_records
from gpuwhy.check.policy import FAIL, PASS, SKIP, WARN, load_policy
from gpuwhy.errors import UsageError

ROOT = Path(__file__).resolve().parents[1]
#: A real `gpuwhy check --json` document recorded on the H200.
H200_CHECK = ROOT / "docs" / "results" / "raw" / "2026-12-01-h200-refactor" / "check.json"
#: Its figures: 4589.6 GB/s, 66.17 TFLOP/s fp32, 923.9 TFLOP/s bf16, 3.52 us launch.
H200 = read_records(json.loads(H200_CHECK.read_text()))[0].figures
EXPECTED = ("dram_bandwidth_gbs", "fp32_tflops", "bf16_tflops", "launch_overhead_us")


def _worse(figs, fraction):
    """Every figure worse by ``fraction``: rates lower, launch overhead higher."""
    return {k: v * (1 + fraction) if k == "launch_overhead_us" else v * (1 - fraction) for k, v in figs.items()}


def _status(checks):
    return {c.name: c.status for c in checks}


def test_recorded_h200_figures():
    assert H200 == pytest.approx({"dram_bandwidth_gbs": 4589.58, "fp32_tflops": 66.166, "bf16_tflops": 923.94,
                                  "launch_overhead_us": 3.52}, rel=1e-4)


def test_a_two_percent_wobble_passes_and_a_ten_percent_regression_fails_each_figure():
    pol = load_policy()
    assert set(_status(compare(_worse(H200, 0.02), H200, pol, EXPECTED)).values()) == {PASS}
    assert set(_status(compare(_worse(H200, -0.02), H200, pol, EXPECTED)).values()) == {PASS}
    for key in EXPECTED:
        cur = dict(H200)
        cur[key] = _worse({key: H200[key]}, 0.10 if key != "launch_overhead_us" else 0.25)[key]
        st = _status(compare(cur, H200, pol, EXPECTED))
        failed = [n for n, s in st.items() if s == FAIL]
        assert failed == ["baseline_" + key.rsplit("_", 1)[0]], (key, st)


def test_regression_names_the_figure_and_the_numbers():
    cur = dict(H200, dram_bandwidth_gbs=H200["dram_bandwidth_gbs"] * 0.9)
    c = {c.name: c for c in compare(cur, H200, load_policy(), EXPECTED)}["baseline_dram_bandwidth"]
    assert c.status == FAIL and "regressed 10.0%" in c.detail and "5% is allowed" in c.detail
    d = c.to_dict()
    assert d["baseline_gbs"] == pytest.approx(4589.58, rel=1e-5) and d["change_fraction"] == pytest.approx(-0.10)
    assert d["threshold_gbs"] == pytest.approx(0.95 * H200["dram_bandwidth_gbs"]) and d["tolerance_fraction"] == 0.05


def test_default_tolerances_are_5_5_and_20_percent():
    pol = load_policy()
    assert (pol.tolerance("dram_bandwidth_gbs"), pol.tolerance("fp32_tflops"), pol.tolerance("bf16_tflops"),
            pol.tolerance("int8_tops"), pol.tolerance("launch_overhead_us")) == (0.05, 0.05, 0.05, 0.05, 0.20)
    # launch overhead: +15% passes, +25% fails; better figures always pass
    st = _status(compare(dict(H200, launch_overhead_us=3.52 * 1.15), H200, pol))
    assert st["baseline_launch_overhead"] == PASS
    st = _status(compare(dict(H200, launch_overhead_us=3.52 * 1.25, dram_bandwidth_gbs=9000.0), H200, pol))
    assert st["baseline_launch_overhead"] == FAIL and st["baseline_dram_bandwidth"] == PASS


def test_policy_tolerances_per_family_and_per_figure(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("baseline: {flops: 0.12, bf16_tflops: 0.02, dram_bandwidth: 0.01}\nseverity: {baseline: warn}\n")
    pol = load_policy(f)
    assert pol.tolerance("fp32_tflops") == 0.12 and pol.tolerance("bf16_tflops") == 0.02
    st = _status(compare(_worse(H200, 0.03), H200, pol, EXPECTED))
    # 3% worse: over the 1% bandwidth and 2% bf16 tolerances (warn, as the policy says), within 12% fp32
    assert st == {"baseline_dram_bandwidth": WARN, "baseline_fp32": PASS, "baseline_bf16": WARN,
                  "baseline_launch_overhead": PASS}


@pytest.mark.parametrize("text, expected", [
    ("baseline: {dram_bandwidth: 1.5}\n", "0 < f < 1"),
    ("baseline: {flops: -0.1}\n", "0 < f < 1"),
    ("baseline: {launch_overhead: 0}\n", "f > 0"),
    ("baseline: {bandwidth: 0.1}\n", "unknown baseline figure 'bandwidth'"),
    ("baseline: 0.05\n", "mapping"),
])
def test_bad_tolerances(tmp_path, text, expected):
    f = tmp_path / "bad.yaml"
    f.write_text(text)
    with pytest.raises(UsageError) as exc:
        load_policy(f)
    assert expected in str(exc.value) and "\n" not in str(exc.value)


def test_missing_figures_skip_with_the_reason():
    base = {k: v for k, v in H200.items() if k != "bf16_tflops"}
    cur = {k: v for k, v in H200.items() if k != "launch_overhead_us"}
    c = {c.name: c for c in compare(cur, base, load_policy(), EXPECTED)}
    assert c["baseline_bf16"].status == SKIP and "baseline has no" in c["baseline_bf16"].detail
    assert c["baseline_launch_overhead"].status == SKIP and "not measured" in c["baseline_launch_overhead"].detail


def _rec(uuid, model="NVIDIA H200", **figs):
    return RunRecord("node", uuid, model, "H200 SXM", {**H200, **figs})


def test_which_baseline_run_a_gpu_is_compared_with():
    b = Baseline("b.json", (_rec("GPU-aaa", dram_bandwidth_gbs=4000.0), _rec("GPU-bbb", dram_bandwidth_gbs=4500.0),
                            _rec("GPU-ccc", dram_bandwidth_gbs=4600.0)))
    figs, how = baseline_figures(b, "NVIDIA H200", "gpu-BBB")  # its own UUID, any case
    assert figs["dram_bandwidth_gbs"] == 4500.0 and "this GPU" in how
    figs, how = baseline_figures(b, "nvidia  h200", "GPU-zzz")  # another H200: the median of the baseline's
    assert figs["dram_bandwidth_gbs"] == 4500.0 and "median of 3" in how
    with pytest.raises(UsageError) as exc:
        baseline_figures(b, "NVIDIA H100 80GB HBM3", "GPU-zzz")
    assert "not NVIDIA H100 80GB HBM3" in str(exc.value) and "same GPU model" in str(exc.value)


def test_profiles_and_bench_documents_are_baselines(tmp_path):
    prof = {"uuid": "GPU-p", "name": "NVIDIA H200", "date": "2026-12-01T00:00:00+00:00", "sheet": "H200 SXM",
            "dram_bandwidth_gbs": 4588.3, "launch_overhead_s": 3.55e-6, "peak_tflops_measured": {"fp32": 66.17, "bf16": 865.2, "int8": 1896.5}}
    f = tmp_path / "prof.json"
    f.write_text(json.dumps(prof))
    b = load_baseline(str(f))
    assert b.kind == "profile"
    assert b.records[0].figures == pytest.approx({"dram_bandwidth_gbs": 4588.3, "launch_overhead_us": 3.55,
                                                  "fp32_tflops": 66.17, "bf16_tflops": 865.2, "int8_tops": 1896.5})
    import gzip

    bench = json.loads(gzip.decompress((ROOT / "docs/results/raw/2026-12-01-h200-refactor/bench_sweep.json.gz").read_bytes()))
    rec = read_records(bench)[0]
    assert rec.kind == "bench" and rec.model == "NVIDIA H200"
    assert rec.figures["dram_bandwidth_gbs"] == pytest.approx(4588.3, rel=1e-4)
    assert rec.figures["launch_overhead_us"] == pytest.approx(3.552, rel=1e-3)
    assert rec.figures["bf16_tflops"] == pytest.approx(859.34, rel=1e-4)  # the faster of wgmma (859.3) and mma.sync (652.1)


@pytest.mark.parametrize("content, expected", [
    ("not json", "is not JSON"),
    ('{"kind": "llm"}', "is not a `gpuwhy check --json` document"),
    ('{"kind": "check", "observations": []}', "holds no GPU"),
])
def test_bad_baseline_files_are_one_line(tmp_path, content, expected):
    f = tmp_path / "b.json"
    f.write_text(content)
    with pytest.raises(UsageError) as exc:
        load_baseline(str(f))
    assert expected in str(exc.value) and "\n" not in str(exc.value)
    with pytest.raises(UsageError) as exc:
        load_baseline(str(tmp_path))
    assert "is a folder" in str(exc.value)


# ------------------------------------------------------------------ the CLI --


def _obs_file(tmp_path, name, **change):
    doc = json.loads(H200_CHECK.read_text())
    doc["observations"][0].update(change)
    f = tmp_path / name
    f.write_text(json.dumps(doc))
    return f


def test_cli_save_then_compare_then_planted_regression(cli, tmp_path):
    base = tmp_path / "base.json"
    code, out, err = cli("check", "--recorded", str(H200_CHECK), "--save-baseline", str(base))
    assert code == 0, err
    assert "baseline saved" in err and json.loads(base.read_text())["kind"] == "check"
    # the same run against itself, and a 2% wobble of every figure, pass
    code, out, err = cli("check", "--recorded", str(H200_CHECK), "--baseline", str(base), "--json")
    assert code == 0, err
    assert {c["status"] for c in json.loads(out)["devices"][0]["checks"] if c["name"].startswith("baseline_")} == {PASS}
    o = json.loads(H200_CHECK.read_text())["observations"][0]
    wob = _obs_file(tmp_path, "wobble.json", dram_bandwidth_gbs=o["dram_bandwidth_gbs"] * 0.98, fp32_tflops=o["fp32_tflops"] * 0.98,
                    tensor_tflops=o["tensor_tflops"] * 0.98, launch_overhead_us=o["launch_overhead_us"] * 1.02)
    code, out, err = cli("check", "--recorded", str(wob), "--baseline", str(base))
    assert code == 0, err
    # the baseline edited up by 10%: this run is 10% slower than it -- exit 1 naming the figure
    doc = json.loads(base.read_text())
    doc["observations"][0]["dram_bandwidth_gbs"] *= 1.10
    base.write_text(json.dumps(doc))
    code, out, err = cli("check", "--recorded", str(H200_CHECK), "--baseline", str(base), "--junit", str(tmp_path / "c.xml"))
    assert code == 1
    assert err.strip().splitlines()[-1] == "gpuwhy: error: 1 check failed: baseline_dram_bandwidth on NVIDIA H200"
    assert "regressed" in out and "9.1% against the" in out  # the detail cell may wrap between them
    assert '<testcase classname="gpuwhy.check.GPU-c0b62778-fa04-78c1-0cfd-cea75364fc73" name="baseline_dram_bandwidth">' in (tmp_path / "c.xml").read_text()


def test_cli_never_overwrites_a_file_without_overwrite(cli, tmp_path):
    mine = tmp_path / "notes.json"
    mine.write_text("my notes")
    code, out, err = cli("check", "--recorded", str(H200_CHECK), "--save-baseline", str(mine))
    assert code == 2 and "already exists" in err and "--overwrite" in err and out == ""
    assert mine.read_text() == "my notes"
    code, out, err = cli("check", "--recorded", str(H200_CHECK), "--save-baseline", str(mine), "--overwrite")
    assert code == 0, err
    assert json.loads(mine.read_text())["observations"][0]["uuid"].startswith("GPU-c0b6")
    code, out, err = cli("check", "--recorded", str(H200_CHECK), "--overwrite")
    assert code == 2 and "--overwrite applies to --save-baseline" in err
    code, out, err = cli("check", "--recorded", str(H200_CHECK), "--save-baseline", str(tmp_path / "no" / "b.json"))
    assert code == 2 and "does not exist" in err


def test_cli_a_failing_run_is_not_saved_as_a_baseline(cli, tmp_path):
    bad = _obs_file(tmp_path, "bad.json", ecc_uncorrected=4)
    code, out, err = cli("check", "--recorded", str(bad), "--save-baseline", str(tmp_path / "b.json"))
    assert code == 1 and "baseline not saved" in err and not (tmp_path / "b.json").exists()


def test_cli_another_gpu_model_is_refused(cli, tmp_path):
    other = _obs_file(tmp_path, "h100.json", device="NVIDIA H100 80GB HBM3", uuid="GPU-other")
    code, out, err = cli("check", "--recorded", str(H200_CHECK), "--baseline", str(other))
    assert code == 2 and "not NVIDIA H200" in err and len(err.strip().splitlines()) == 1


# --------------------------------------------------------- bench (fake GPU) --


@pytest.fixture
def fake(monkeypatch, tmp_path):
    from fakes import install_quick

    return install_quick(monkeypatch, tmp_path)


def test_bench_save_baseline_then_baseline_then_planted_regression(cli, fake, tmp_path):
    base = tmp_path / "bench-base.json"
    code, out, err = cli("bench", "--quick", "--no-save", "--save-baseline", str(base))
    assert code == 0, err
    saved = json.loads(base.read_text())
    assert saved["kind"] == "bench" and saved["host"] and saved["sustained_dram_gbs"] > 0
    code, out, err = cli("bench", "--quick", "--no-save", "--baseline", str(base), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["baseline"]["status"] == PASS
    assert {c["name"] for c in doc["baseline"]["checks"]} == {"baseline_dram_bandwidth", "baseline_launch_overhead"}
    saved["sustained_dram_gbs"] *= 1.10
    base.write_text(json.dumps(saved))
    code, out, err = cli("bench", "--quick", "--no-save", "--baseline", str(base))
    assert code == 1
    assert "regressed against the baseline: baseline_dram_bandwidth" in err and "baseline_dram_bandwidth" in out


def test_bench_baseline_options_are_checked_before_measuring(cli, tmp_path):
    code, out, err = cli("bench", "--latency", "--baseline", str(H200_CHECK))
    assert code == 2 and "apply to bench --quick and --sweep" in err
    code, out, err = cli("bench", "--quick", "--policy", "x.yaml")
    assert code == 2 and "--policy applies to --baseline" in err
    (tmp_path / "taken.json").write_text("{}")
    code, out, err = cli("bench", "--quick", "--save-baseline", str(tmp_path / "taken.json"))
    assert code == 2 and "already exists" in err
