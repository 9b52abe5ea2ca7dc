"""CI-grade behaviour (issue 19): faults a newcomer's trial found, each pinned. No GPU."""

from __future__ import annotations

import json

import pytest

from conftest import ROOT, one_line

FIX = ROOT / "tests" / "fixtures"
H200_PROFILE = FIX / "profiles" / "h200-2026-11-29.json"



@pytest.mark.parametrize("bandwidth, needle", [(-4800, "not a plausible figure"), (1e30, "not a plausible figure"),
                                               ("fast", "must be a number of GB/s")])
def test_profile_with_bad_bandwidth_is_refused_on_load(cli, tmp_path, bandwidth, needle):
    doc = json.loads(H200_PROFILE.read_text())
    doc["dram_bandwidth_gbs"] = bandwidth
    p = tmp_path / "p.json"
    p.write_text(json.dumps(doc))
    line = one_line(*cli("roofline", "--profile", str(p))[::2])
    assert "dram_bandwidth_gbs" in line and needle in line and "is not a gpuwhy device profile" in line
    # In the cache the same file is skipped, never a negative ridge or exit 70.
    from gpuwhy.profiles import _read_all

    gpu_dir = tmp_path / "store" / "GPU-x"
    gpu_dir.mkdir(parents=True)
    (gpu_dir / "a.json").write_text(json.dumps(doc))
    assert _read_all(tmp_path / "store") == []


@pytest.mark.parametrize("gpu", ["H100 SXM", "rtx 5070"])
def test_profile_of_another_gpu_model_is_refused(cli, gpu):
    # issue 31: the H200's measured roofs were drawn on the other GPU's chart with one warning;
    # refused as `check --baseline` refuses another model's baseline (one refusal, check.figures).
    sheet = "H100 SXM" if gpu == "H100 SXM" else "GeForce RTX 5070"
    code, out, err = cli("roofline", "--gpu", gpu, "--measured", "--profile", str(H200_PROFILE))
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert f"is a run of the H200 SXM, not the {sheet}: compare runs of the same GPU model" in err
    code, out, err = cli("roofline", "--gpu", "H200 SXM", "--profile", str(H200_PROFILE))
    assert code == 0 and "another GPU" not in err and "same GPU model" not in err


def test_profile_no_sheet_matches_is_refused_unless_the_sheet_lists_its_name(cli, tmp_path):
    doc = json.loads(H200_PROFILE.read_text())
    doc.update(name="NVIDIA Mystery GPU", pci_device_id="0xffff", sheet=None)
    p = tmp_path / "p.json"
    p.write_text(json.dumps(doc))
    code, out, err = cli("roofline", "--gpu", "H200 SXM", "--profile", str(p))
    assert code == 2 and "a 'NVIDIA Mystery GPU' (no sheet matches it), not the H200 SXM" in err


def test_a_profile_is_matched_to_its_sheet_by_name_and_pci_id(cli, tmp_path):
    from gpuwhy.profiles import DeviceProfile, find_profile, save_profile

    # an H200 NVL reports the NVML name the H200 SXM sheet lists; its PCI id decides, as for a probed GPU
    nvl = DeviceProfile(uuid="GPU-0000aaaa", name="NVIDIA H200", date="2026-12-01T00:00:00+00:00",
                        dram_bandwidth_gbs=4000.0, pci_device_id="0x233b")
    save_profile(nvl, tmp_path)
    assert find_profile("H200 NVL", folder=tmp_path).uuid == nvl.uuid
    assert find_profile("H200 SXM", folder=tmp_path) is None
    path = next(tmp_path.rglob("*.json"))
    code, out, err = cli("roofline", "--profile", str(path), "--json")
    assert code == 0 and json.loads(out)["gpu"] == "H200 NVL", err
    # a profile written before the id was kept is matched by its name alone
    old = DeviceProfile(uuid="GPU-0000bbbb", name="NVIDIA H200", date="2026-12-01T00:00:00+00:00", dram_bandwidth_gbs=4000.0)
    save_profile(old, tmp_path / "old")
    assert find_profile("H200 SXM", folder=tmp_path / "old").uuid == old.uuid


def _store(tmp_path, monkeypatch, names):
    from gpuwhy.profiles import DeviceProfile, save_profile

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    base = json.loads(H200_PROFILE.read_text())
    for i, (uuid, name, sheet) in enumerate(names):
        d = {**{k: v for k, v in base.items() if not k.startswith("_")}, "uuid": uuid, "name": name, "sheet": sheet,
             "date": f"2026-01-0{i + 1}T00:00:00Z"}
        save_profile(DeviceProfile.from_dict(d))


def test_roofline_measured_with_no_gpu_never_takes_any_gpus_profile(cli, tmp_path, monkeypatch):
    _store(tmp_path, monkeypatch, [("GPU-aaaa", "NVIDIA H200", "H200 SXM"), ("GPU-bbbb", "NVIDIA H100 80GB HBM3", "H100 SXM")])
    line = one_line(*cli("roofline", "--measured")[::2])
    assert "profiles exist for H100 SXM, H200 SXM" in line and "--gpu" in line
    code, out, err = cli("roofline", "--measured", "--gpu", "H200 SXM")
    assert code == 0, err


def test_roofline_measured_with_one_profiled_gpu_says_which(cli, tmp_path, monkeypatch):
    _store(tmp_path, monkeypatch, [("GPU-aaaa", "NVIDIA H200", "H200 SXM")])
    code, out, err = cli("roofline", "--measured")
    assert code == 0, err
    assert "the measured figures are the H200 SXM's newest profile" in err


def test_check_json_holds_numbers_with_units_in_the_keys(cli, tmp_path):
    rec = tmp_path / "obs.json"
    rec.write_text(json.dumps([{"device": "NVIDIA H200", "sheet": "H200 SXM", "sheet_bandwidth_gbs": 4800,
                                "dram_bandwidth_gbs": 4450.0, "launch_overhead_us": 4.0, "ecc_uncorrected": 0}]))
    code, out, err = cli("check", "--recorded", str(rec), "--json")
    assert code == 0, err
    checks = {c["name"]: c for c in json.loads(out)["devices"][0]["checks"]}
    bw = checks["dram_bandwidth"]
    assert bw["measured_gbs"] == 4450.0 and bw["threshold_gbs"] == pytest.approx(0.85 * 4800) and bw["sheet_gbs"] == 4800
    lo = checks["launch_overhead"]
    assert lo["measured_us"] == 4.0 and lo["threshold_us"] == 20.0
    assert checks["ecc_uncorrected"]["measured_errors"] == 0 and checks["ecc_uncorrected"]["threshold_errors"] == 0
    assert isinstance(bw["value_text"], str) and "GB/s" in bw["value_text"]
    assert checks["fp32_fma"]["status"] == "skip" and "measured_tflops" not in checks["fp32_fma"]
    for c in checks.values():  # every figure is a number (or a list of names), never text with a unit in it
        assert all(isinstance(v, (int, float, list, type(None))) and not isinstance(v, bool)
                   for k, v in c.items() if k not in ("name", "status", "value_text", "threshold_text", "detail"))


def test_specs_validate_reports_every_bad_file(cli):
    bad = sorted((FIX / "bad_specs").glob("*.yaml"))
    code, out, err = cli("specs", "validate", *map(str, bad[:3]), str(ROOT / "specs" / "h200-sxm.yaml"))
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 3 and all(ln.startswith("gpuwhy: error: ") for ln in lines)
    for f in bad[:3]:
        assert any(f.name in ln for ln in lines)
    assert "1 sheet valid, 3 invalid" in out
    code, out, err = cli("specs", "validate", *map(str, bad[:2]), "--json")
    doc = json.loads(out)
    assert code == 2 and doc["ok"] is False and len(doc["errors"]) == 2


def test_no_tensor_cores_error_names_the_peak_in_words(cli):
    line = one_line(*cli("classify", "--example", "vecadd", "--gpu", "H200 SXM", "--dtype", "bf16", "--no-tensor-cores")[::2])
    assert "bf16_nontensor" not in line and "bf16 on CUDA cores (--no-tensor-cores)" in line and "drop --no-tensor-cores" in line


def test_compile_only_for_sm_75_skips_the_sm_80_kernels_and_says_why(cli):
    pytest.importorskip("cuda.bindings.nvrtc")
    from gpuwhy.device.driver import nvrtc_version

    if not isinstance(nvrtc_version(), tuple):
        pytest.skip("no NVRTC here")
    from gpuwhy.engine.compile import needs_arch, source_path, supported_archs

    if 75 not in supported_archs():
        pytest.skip("this NVRTC cannot target sm_75")
    assert needs_arch(source_path("compute_mma.cu").read_text())[0] == 80
    code, out, err = cli("bench", "--compile-only", "--arch", "sm_75", "--json")
    assert code == 0, err
    doc = json.loads(out)
    mma = next(s for s in doc["sources"] if s["source"] == "compute_mma.cu")
    assert mma["skipped"] and "needs sm_80" in mma["message"] and doc["ok"]
