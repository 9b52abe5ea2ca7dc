"""The pure maths of `gpuwhy probe` on recorded values (tests/fixtures/probe/*.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuwhy.device import derive
from gpuwhy.na import is_na
from gpuwhy.device.software import is_wsl2, perf_counter_access
from gpuwhy.device.visible import cvd_hides_all_message

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "probe"

# Datasheet DRAM bandwidth (GB/s) and FP32 (TFLOP/s) of the recorded cards, from
# NVIDIA's datasheets/whitepapers (the URLs are in the fixtures and in specs/*.yaml).
DATASHEET = {
    "h200": (4800.0, 67.0),
    "a100-sxm4-40gb": (1555.0, 19.5),
    "rtx4090": (1008.0, 82.6),
    "rtx5090": (1792.0, 104.8),
}


def recorded(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def recorded_shape(fx: dict) -> tuple[float, int, int, int, float]:
    """(memory clock MHz, bus bits, SMs, cc, boost MHz) from whichever side recorded them."""
    nv, cu = fx["nvml"], fx["cuda"]
    mclk = nv.get("max_clock_mem") or cu["memory_clock_khz"] / 1000
    bus = nv.get("bus_width") or cu["bus_width_bits"]
    boost = nv.get("max_clock_sm") or cu["clock_khz"] / 1000
    return mclk, bus, cu["sm_count"], ".".join(map(str, cu["cc"])), boost


@pytest.mark.parametrize(
    "cc, lanes",
    [
        ("6.0", 64), ("6.1", 128), ("7.0", 64), ("7.2", 64), ("7.5", 64), ("8.0", 64), ("8.6", 128), ("8.7", 128),
        ("8.9", 128), ("9.0", 128), ("10.0", 128), ("10.3", 128), ("12.0", 128), ("12.1", 128), ((9, 0), 128),
        ("3.5", None), ("11.0", None), ("13.0", None), ("nine", None), ("", None),
    ],
)
def test_fp32_lanes_table(cc, lanes):
    assert derive.fp32_lanes_per_sm(cc) == lanes


@pytest.mark.parametrize(
    "cc, arch",
    [("7.0", "Volta"), ("7.5", "Turing"), ("8.0", "Ampere"), ("8.6", "Ampere"), ("8.9", "Ada"), ("9.0", "Hopper"),
     ("10.0", "Blackwell"), ("12.0", "Blackwell"), ("6.1", "Pascal"), ("2.0", None), ("x", None)],
)
def test_architecture_names(cc, arch):
    assert derive.architecture_name(cc) == arch


@pytest.mark.parametrize("name", sorted(DATASHEET))
def test_bandwidth_on_recorded_values_matches_the_datasheet(name):
    fx = recorded(name)
    mclk, bus, sm, cc, boost = recorded_shape(fx)
    factor = derive.data_rate_factor(fx["expected"]["memory_type"])
    bw = derive.dram_bandwidth_bytes_per_s(mclk, bus, factor) / 1e9
    assert bw == pytest.approx(fx["expected"]["dram_bandwidth_gbs"], rel=1e-9)
    sheet_bw, _ = DATASHEET[name]
    assert abs(bw / sheet_bw - 1) < 0.005, f"{name}: {bw:.1f} GB/s vs datasheet {sheet_bw}"


def test_h200_numbers_from_the_issue():
    # 3201 MHz x 2 x 6016 / 8 = 4.81 TB/s; 132 x 128 x 2 x 1980 MHz = 66.9 TFLOP/s
    assert derive.dram_bandwidth_bytes_per_s(3201, 6016, derive.data_rate_factor("HBM3e")) == pytest.approx(4.814304e12)
    assert derive.fp32_peak_flops(132, derive.fp32_lanes_per_sm("9.0"), 1980) == pytest.approx(66.90816e12)
    assert 132 * derive.fp32_lanes_per_sm("9.0") == 16896  # the CUDA core count NVML reports


@pytest.mark.parametrize("name", ["rtx4090", "rtx5090"])
def test_gddr_clock_is_not_the_data_rate(name):
    """GeForce GDDR6X/GDDR7: taking the reported clock as the per-pin data rate gives half the bandwidth."""
    fx = recorded(name)
    mclk, bus, *_ = recorded_shape(fx)
    sheet_bw, _ = DATASHEET[name]
    wrong = derive.dram_bandwidth_bytes_per_s(mclk, bus, 1) / 1e9
    assert not derive.compare_to_sheet("DRAM bandwidth", wrong, sheet_bw, "GB/s").ok
    right = derive.dram_bandwidth_bytes_per_s(mclk, bus, derive.data_rate_factor(fx["expected"]["memory_type"])) / 1e9
    assert derive.compare_to_sheet("DRAM bandwidth", right, sheet_bw, "GB/s").ok
    # and the per-pin rate the whitepapers print: 21 Gbps (4090), 28 Gbps (5090)
    assert mclk * derive.data_rate_factor(fx["expected"]["memory_type"]) / 1000 == pytest.approx({"rtx4090": 21.0, "rtx5090": 28.0}[name], rel=1e-3)


@pytest.mark.parametrize("name", sorted(DATASHEET))
def test_fp32_on_recorded_values(name):
    fx = recorded(name)
    _, _, sm, cc, boost = recorded_shape(fx)
    tf = derive.fp32_peak_flops(sm, derive.fp32_lanes_per_sm(cc), boost) / 1e12
    assert tf == pytest.approx(fx["expected"]["fp32_tflops"], rel=1e-9)
    assert derive.compare_to_sheet("FP32 peak", tf, DATASHEET[name][1], "TFLOP/s").ok


def test_a100_has_64_lanes():
    assert derive.fp32_lanes_per_sm("8.0") == 64
    # with 128 lanes the A100 would be 39 TFLOP/s and the 10% check would flag it
    assert not derive.compare_to_sheet("FP32 peak", derive.fp32_peak_flops(108, 128, 1410) / 1e12, 19.5, "TFLOP/s").ok


@pytest.mark.parametrize(
    "mtype, factor",
    [("HBM3e", 2), ("hbm2", 2), ("HBM2e", 2), ("GDDR6X", 2), ("GDDR7", 2), ("gddr6", 2), ("GDDR", 2), ("HBM", 2),
     ("LPDDR5X", None), ("", None), (None, None), ("DDR4", None)],
)
def test_data_rate_factors(mtype, factor):
    assert derive.data_rate_factor(mtype) == factor


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="memory clock, bus width and data-rate factor must be positive"):
        derive.dram_bandwidth_bytes_per_s(0, 6016, 2)
    with pytest.raises(ValueError, match="SM count, lanes and clock must be positive"):
        derive.fp32_peak_flops(132, 128, 0)
    with pytest.raises(ValueError, match="sheet value must be positive"):
        derive.compare_to_sheet("x", 1.0, 0.0, "u")
    with pytest.raises(ValueError, match="shares need positive sizes"):
        derive.scale_share(0, 10)


def test_compare_to_sheet_tolerance():
    assert derive.compare_to_sheet("FP32 peak", 110.0, 100.0, "TFLOP/s").ok
    assert derive.compare_to_sheet("FP32 peak", 90.0, 100.0, "TFLOP/s").ok
    c = derive.compare_to_sheet("FP32 peak", 110.5, 100.0, "TFLOP/s", hint="not the boost clock")
    assert not c.ok and c.diff == pytest.approx(0.105)
    assert "+10.5%" in c.message and "more than 10% apart: not the boost clock" in c.message
    assert not derive.compare_to_sheet("FP32 peak", 89.0, 100.0, "TFLOP/s").ok
    assert c.to_dict()["diff_pct"] == pytest.approx(10.5)


@pytest.mark.parametrize(
    "mask, words",
    [
        (0, ()),
        (0x1, ("idle",)),
        (0x4 | 0x40, ("software power cap", "hardware thermal slowdown")),
        (0x8 | 0x80, ("hardware slowdown", "hardware power brake slowdown")),
        (0x2 | 0x100, ("application clocks setting", "display clock setting")),
        (0x1 | 0x8000, ("idle", "unknown reason 0x8000")),
    ],
)
def test_clock_event_reasons(mask, words):
    assert derive.decode_clock_event_reasons(mask) == words


def test_limiting_clock_events():
    assert derive.limiting_clock_events(0x1 | 0x2 | 0x10) == ()
    assert derive.limiting_clock_events(0x1 | 0x20) == ("software thermal slowdown",)


def test_pcie_link_findings():
    assert derive.pcie_link_findings(5, 5, 16, 16) == ()
    ((level, msg),) = derive.pcie_link_findings(4, 5, 16, 16)
    assert level == "warning" and "gen 4, below its max gen 5 under load" in msg
    ((level, msg),) = derive.pcie_link_findings(1, 5, 16, 16, idle=True)
    assert level == "note" and "idle" in msg and "check under load" in msg
    ((level, msg),) = derive.pcie_link_findings(5, 5, 8, 16, idle=True)
    assert level == "warning" and "x8, below its max x16" in msg
    assert derive.pcie_link_findings(None, 5, None, 16) == ()


def test_versions():
    assert not derive.nvrtc_newer_than_driver((13, 0), 13000)
    assert derive.nvrtc_newer_than_driver((13, 5), 13000)
    assert not derive.nvrtc_newer_than_driver((12, 8), 13000)
    assert derive.nvrtc_newer_than_driver((13, 0), 12080)
    assert derive.cuda_version_text(13000) == "13.0" and derive.cuda_version_text(12080) == "12.8"


def test_pci_and_uuid_helpers():
    assert derive.pci_device_id_hex(0x233510DE) == "0x2335"
    assert derive.pci_device_id_hex(0x2B8510DE) == "0x2b85"
    assert derive.pci_device_id_hex(0) is None
    assert derive.pci_device_id_hex(0x74A11002) is None  # AMD vendor id
    raw = bytes.fromhex("8932f937d72c4106c12f20bd9faed9f6")
    assert derive.format_uuid_hex(raw) == "8932f937-d72c-4106-c12f-20bd9faed9f6"
    assert derive.uuid_key("GPU-8932F937-d72c") == derive.uuid_key("8932f937d72c") == "8932f937d72c"
    assert derive.uuid_key("MIG-5f1c0c2e-1111") == "5f1c0c2e1111"


def test_memory_family_guess():
    assert derive.memory_family_from_cc("9.0") == "HBM" and derive.memory_family_from_cc("10.0") == "HBM"
    assert derive.memory_family_from_cc("8.9") == "GDDR" and derive.memory_family_from_cc("12.0") == "GDDR"
    assert derive.memory_family_from_cc("8.7") is None  # Orin: LPDDR5
    assert derive.memory_family_from_cc("12.1", integrated=True) is None


def test_perf_counter_access():
    text_, open_ = perf_counter_access("RmProfilingAdminOnly: 0\n", 1000)
    assert open_ is True and "all users" in text_
    text_, open_ = perf_counter_access("Foo: 1\nRmProfilingAdminOnly: 1\n", 1000)
    assert open_ is False and "ERR_NVGPUCTRPERM" in text_
    assert perf_counter_access("RmProfilingAdminOnly: 1\n", 0)[1] is True
    missing, unknown = perf_counter_access(None, 1000)
    assert is_na(missing) and is_na(unknown)
    assert is_na(perf_counter_access("Foo: 1\n", 1000)[0])


def test_wsl2_detection():
    assert is_wsl2("Linux version 5.15.153.1-microsoft-standard-WSL2 (root@941d701f84f1)")
    assert not is_wsl2("Linux version 6.8.0-45-generic (buildd@lcy02-amd64-075)")
    assert not is_wsl2(None)


@pytest.mark.parametrize(
    "value, hides",
    [(None, False), ("0", False), ("GPU-abc", False), ("MIG-abc", False), ("", True), (" ", True), ("-1", True), ("none", True), (",0", True), ("1,-1", False)],
)
def test_cvd_hides_all(value, hides):
    assert (cvd_hides_all_message(value) is not None) == hides


def _nvidia_sheets():
    from gpuwhy.specs import library

    return [s for s in library() if s.vendor == "NVIDIA" and derive.fp32_lanes_per_sm(s.compute_capability)]


@pytest.mark.parametrize("sheet", _nvidia_sheets(), ids=lambda s: s.name)
def test_lanes_table_against_every_bundled_datasheet(sheet):
    """The lanes table reproduces each datasheet's FP32 peak from its SMs and boost clock (within 1%)."""
    lanes = derive.fp32_lanes_per_sm(sheet.compute_capability)
    if sheet.fp32_lanes_per_sm is not None:
        assert lanes == sheet.fp32_lanes_per_sm
    tf = derive.fp32_peak_flops(sheet.sm_count, lanes, sheet.boost_clock_mhz) / 1e12
    assert tf == pytest.approx(sheet.peak_tflops["fp32"], rel=0.01)
