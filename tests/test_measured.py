"""classify --measured and check --recorded without a GPU (recorded profiles and observations)."""

import json

import pytest

from gpuwhy.profiles import DeviceProfile, save_profile


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path


def _profile(**kw):
    base = dict(uuid="GPU-1234abcd-0000-0000-0000-000000000000", name="NVIDIA H200", date="2026-11-29T08:00:00+00:00",
                sheet="H200 SXM", dram_bandwidth_gbs=4500.0, launch_overhead_s=3.4e-6)
    base.update(kw)
    return DeviceProfile(**base)


def test_classify_measured_uses_profile_bandwidth_and_keeps_spec_ridge(cli, cache):
    save_profile(_profile())
    code, out, err = cli("classify", "--example", "vecadd", "--gpu", "H200", "--measured", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["memory_bandwidth_gbs"] == pytest.approx(4500.0)
    assert doc["launch_overhead_s"] == pytest.approx(3.4e-6)
    assert doc["spec_ridge_point"] == pytest.approx(67e12 / 4.8e12)
    assert doc["ridge_point"] == pytest.approx(67e12 / 4.5e12)  # no measured fp32 peak: sheet peak, measured bandwidth
    assert any("no measured fp32 peak" in n for n in doc["notes"])


def test_classify_measured_newest_profile_wins(cli, cache):
    save_profile(_profile(dram_bandwidth_gbs=4000.0, date="2026-11-28T08:00:00+00:00"))
    save_profile(_profile(dram_bandwidth_gbs=4400.0, date="2026-11-29T09:00:00+00:00"))
    code, out, _ = cli("classify", "--example", "vecadd", "--gpu", "H200", "--measured", "--json")
    assert json.loads(out)["memory_bandwidth_gbs"] == pytest.approx(4400.0)


def test_classify_measured_without_profile_is_one_line(cli, cache):
    code, out, err = cli("classify", "--example", "vecadd", "--gpu", "H200", "--measured")
    assert code == 2 and out == "" and "no bench profile" in err and len(err.strip().splitlines()) == 1


def test_check_recorded_observations(cli, tmp_path):
    obs = {"device": "NVIDIA H200", "uuid": "GPU-x", "sheet": "H200 SXM", "sheet_bandwidth_gbs": 4800.0,
           "sheet_fp32_tflops": 67.0, "sheet_tensor_tflops": 989.5, "dram_bandwidth_gbs": 4500.0, "fp32_tflops": 66.0,
           "tensor_tflops": 860.0, "launch_overhead_us": 3.4, "ecc_uncorrected": 0, "remapped_rows_pending": False,
           "clock_events": [], "pcie_gen": [5, 5], "pcie_width": [16, 16], "other_processes": 0,
           "driver_cuda_version": 13000, "nvrtc_version": [13, 0]}
    f = tmp_path / "obs.json"
    f.write_text(json.dumps([obs]))
    xml = tmp_path / "check.xml"
    code, out, err = cli("check", "--recorded", str(f), "--junit", str(xml), "--json")
    assert code == 0, err
    assert json.loads(out)["passed"] is True
    code, out, err = cli("check", "--recorded", str(f), "--min-bandwidth", "0.99", "--junit", str(xml))
    assert code == 1
    assert "dram_bandwidth" in err and len(err.strip().splitlines()) == 1
    assert '<testcase classname="gpuwhy.check.GPU-x" name="dram_bandwidth">' in xml.read_text()
    assert "<failure" in xml.read_text()
    code, _, err = cli("check", "--recorded", str(f), "--min-bandwidth", "1.5")
    assert code == 2 and "0 < f <= 1" in err


def test_compute_peaks_survive_a_later_memory_only_profile(cli, cache):
    from types import SimpleNamespace

    from gpuwhy.profile_sections import COMPUTE
    from gpuwhy.profiles import carry_sections, latest_profile, record

    uuid = _profile().uuid
    save_profile(_profile(date="2026-11-29T08:00:00+00:00"))
    results = [SimpleNamespace(precision="bf16", status="measured", tflops=860.0),
               SimpleNamespace(precision="bf16", status="measured", tflops=650.0),  # mma.sync: the slower path
               SimpleNamespace(precision="fp8", status="not measured", tflops=None)]
    assert record(COMPUTE, uuid, results) is not None
    assert latest_profile(uuid).peak_tflops_measured == {"bf16": 860.0}
    later = carry_sections(_profile(date="2099-01-01T00:00:00+00:00", dram_bandwidth_gbs=4600.0))
    save_profile(later)
    code, out, err = cli("classify", "--example", "gemm-bf16-8192", "--gpu", "H200", "--measured", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["peak_tflops"] == pytest.approx(860.0)
    assert doc["memory_bandwidth_gbs"] == pytest.approx(4600.0)
    assert doc["ridge_point"] == pytest.approx(860e12 / 4600e9)
    assert doc["spec_ridge_point"] == pytest.approx(989.5e12 / 4800e9)
