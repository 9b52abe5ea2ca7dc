"""`gpuwhy check` without a GPU: policy loading, thresholds and report writers on recorded observations."""

import json
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest

from gpuwhy.check.policy import FAIL, PASS, SKIP, Observations, evaluate, junit_xml, load_policy, write_junit
from gpuwhy.errors import UsageError

# A healthy H200 as a check run would record it (figures of the order seen on the H200).
H200 = Observations(
    device="NVIDIA H200", uuid="GPU-test", sheet="H200 SXM",
    sheet_bandwidth_gbs=4800.0, sheet_fp32_tflops=67.0, sheet_tensor_tflops=989.5,
    dram_bandwidth_gbs=4450.0, fp32_tflops=64.8, tensor_tflops=900.0, launch_overhead_us=2.1,
    ecc_uncorrected=0, remapped_rows_pending=False, retired_pages_pending=None, clock_events=(),
    pcie_gen=(5, 5), pcie_width=(16, 16), other_processes=0, driver_cuda_version=13000, nvrtc_version=(13, 0),
)


def _status(rep):
    return {c.name: c.status for c in rep.checks}


def test_default_policy():
    p = load_policy()
    assert (p.min_dram_bandwidth, p.min_fp32, p.min_tensor, p.max_launch_overhead_us) == (0.85, 0.90, 0.70, 20.0)
    assert all(p.health.values())


def test_healthy_gpu_passes():
    rep = evaluate(H200, load_policy())
    assert not rep.failed
    st = _status(rep)
    assert st["dram_bandwidth"] == PASS and st["fp32_fma"] == PASS and st["tensor_bf16"] == PASS
    assert st["remapped_rows"] == PASS  # remap info present, retired pages n/a


def test_impossible_threshold_fails_that_check_only():
    rep = evaluate(H200, load_policy(overrides={"min_dram_bandwidth": 0.99}))
    st = _status(rep)
    assert st["dram_bandwidth"] == FAIL
    assert [n for n, s in st.items() if s == FAIL] == ["dram_bandwidth"]
    c = next(c for c in rep.checks if c.name == "dram_bandwidth")
    assert "4,752" in c.threshold_text and "92.7%" in c.value_text
    # the numbers behind the texts, units in the keys
    d = c.to_dict()
    assert d["measured_gbs"] == 4450.0 and d["threshold_gbs"] == pytest.approx(4752.0) and d["sheet_gbs"] == 4800.0
    assert d["fraction_of_sheet"] == pytest.approx(4450 / 4800)


@pytest.mark.parametrize(
    "change, failing",
    [
        ({"ecc_uncorrected": 3}, "ecc_uncorrected"),
        ({"remapped_rows_pending": True}, "remapped_rows"),
        ({"clock_events": ("hw_thermal_slowdown",)}, "clock_events"),
        ({"pcie_width": (8, 16)}, "pcie_link"),
        ({"pcie_gen": (4, 5)}, "pcie_link"),
        ({"other_processes": 2}, "other_processes"),
        ({"driver_cuda_version": 12080}, "driver_nvrtc"),
        ({"launch_overhead_us": 35.0}, "launch_overhead"),
        ({"fp32_tflops": 40.0}, "fp32_fma"),
    ],
)
def test_each_health_failure(change, failing):
    rep = evaluate(replace(H200, **change), load_policy())
    assert [c.name for c in rep.checks if c.status == FAIL] == [failing]


def test_missing_values_skip_with_reason_never_pass():
    obs = replace(H200, ecc_uncorrected=None, remapped_rows_pending=None, tensor_tflops=None,
                  reasons={"remapped_rows": "NVML does not report remapped rows on this GPU"})
    st = {c.name: c for c in evaluate(obs, load_policy()).checks}
    assert st["ecc_uncorrected"].status == SKIP
    assert st["remapped_rows"].status == SKIP and "does not report remapped rows" in st["remapped_rows"].detail
    assert st["tensor_bf16"].status == SKIP


def test_policy_can_disable_a_health_check(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("health: {other_processes: false}\nthresholds: {min_dram_bandwidth: 0.9}\n")
    p = load_policy(f)
    assert p.min_dram_bandwidth == 0.9 and p.health["other_processes"] is False
    st = {c.name: c for c in evaluate(replace(H200, other_processes=5), p).checks}
    assert st["other_processes"].status == SKIP and "disabled" in st["other_processes"].detail
    # a single flag overrides the file
    assert load_policy(f, {"min_dram_bandwidth": 0.8}).min_dram_bandwidth == 0.8


@pytest.mark.parametrize(
    "text, expected",
    [
        ("thresholds: {min_bandwidth: 0.9}\n", "unknown threshold 'min_bandwidth'"),
        ("colour: blue\n", "unknown key 'colour'"),
        ("thresholds: {min_dram_bandwidth: 1.5}\n", "0 < f <= 1"),
        ("thresholds: {min_fp32: 0}\n", "0 < f <= 1"),
        ("thresholds: {min_tensor: -0.2}\n", "0 < f <= 1"),
        ("thresholds: {min_fp32: high}\n", "0 < f <= 1"),
        ("thresholds: {max_launch_overhead_us: -3}\n", "max_launch_overhead_us"),
        ("health: {ecc: true}\n", "unknown health check 'ecc'"),
        ("health: {ecc_uncorrected: maybe}\n", "true or false"),
        ("tensor_precision: fp64\n", "tensor_precision"),
        ("thresholds: [1, 2\n", "malformed YAML"),
        ("- a list\n", "must be a YAML mapping"),
    ],
)
def test_bad_policy_files(tmp_path, text, expected):
    f = tmp_path / "bad.yaml"
    f.write_text(text)
    with pytest.raises(UsageError) as exc:
        load_policy(f)
    msg = str(exc.value)
    assert expected in msg and "\n" not in msg and "bad.yaml" in msg


def test_bad_override_and_missing_file(tmp_path):
    with pytest.raises(UsageError, match="min_dram_bandwidth must be a fraction of the spec sheet\'s figure, 0 < f <= 1, got 1.2"):
        load_policy(overrides={"min_dram_bandwidth": 1.2})
    with pytest.raises(UsageError) as exc:
        load_policy(tmp_path / "nope.yaml")
    assert "does not exist" in str(exc.value)


def test_junit_and_json_writers(tmp_path):
    reps = [evaluate(H200, load_policy(overrides={"min_dram_bandwidth": 0.99})),
            evaluate(replace(H200, uuid="GPU-2", ecc_uncorrected=None), load_policy())]
    xml = junit_xml(reps)
    root = ET.fromstring(xml.split("\n", 1)[1])
    assert root.tag == "testsuites" and root.get("failures") == "1"
    suites = root.findall("testsuite")
    assert len(suites) == 2
    failed = [tc.get("name") for tc in suites[0].findall("testcase") if tc.find("failure") is not None]
    assert failed == ["dram_bandwidth"]
    assert suites[1].find("testcase[@name='ecc_uncorrected']/skipped") is not None
    out = tmp_path / "check.xml"
    write_junit(reps, out)
    write_junit(reps, out)  # replacing our own report is fine
    assert out.read_text().startswith("<?xml")
    doc = json.loads(json.dumps([r.to_dict() for r in reps]))
    assert doc[0]["passed"] is False and doc[1]["passed"] is True


def test_junit_never_overwrites_a_user_file(tmp_path):
    f = tmp_path / "notes.xml"
    f.write_text("my notes")
    with pytest.raises(UsageError, match="already exists and gpuwhy did not write it"):
        write_junit([evaluate(H200, load_policy())], f)
    assert f.read_text() == "my notes"
    with pytest.raises(UsageError, match="missing-dir"):
        write_junit([], tmp_path / "missing-dir" / "x.xml")


def test_recorded_observations_roundtrip():
    d = json.loads(json.dumps(H200.to_dict()))
    assert Observations.from_dict(d) == H200
    with pytest.raises(UsageError, match="recorded observations: unknown key \'bogus\'"):
        Observations.from_dict({"device": "x", "bogus": 1})


@pytest.mark.parametrize("key, value, sheet_key", [
    ("dram_bandwidth_gbs", 1e12, "sheet_bandwidth_gbs"),  # issue 31: passed as "20833333333% of the sheet"
    ("fp32_tflops", 101.0, "sheet_fp32_tflops"),  # 1.51x the 67 TFLOP/s sheet
    ("tensor_tflops", 1500.0, "sheet_tensor_tflops"),
])
def test_recorded_impossible_figure_is_an_input_error(cli, tmp_path, key, value, sheet_key):
    rec = tmp_path / "obs.json"
    rec.write_text(json.dumps([{**H200.to_dict(), key: value}]))
    code, out, err = cli("check", "--recorded", str(rec))
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"entry 0 (NVIDIA H200): {key} is impossible" in err and sheet_key in err and "1.5x" in err


def test_recorded_figure_up_to_half_again_its_sheet_is_judged(cli, tmp_path):
    # An overclocked board may beat its sheet a little: judged (and passed), not refused.
    rec = tmp_path / "obs.json"
    rec.write_text(json.dumps([{**H200.to_dict(), "fp32_tflops": 100.0}]))  # 1.49x the sheet
    code, out, err = cli("check", "--recorded", str(rec), "--json")
    assert code == 0, err
    assert json.loads(out)["devices"][0]["status"] == "pass"
