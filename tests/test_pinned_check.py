"""`gpuwhy check`: every threshold at exactly its limit and just past it, and the figures the checks print.

Default policy (specs/policy/default.yaml): DRAM >= 0.85 x sheet, FP32 >= 0.90 x sheet, tensor >= 0.70 x sheet,
launch overhead <= 20 us. Fractions of 0.5 and sheets that are powers of two keep the limits exact in binary.
Each result carries its texts (``value_text``, ``threshold_text``) and the numbers behind them in
``figures``, units in the keys (issue 20); both are pinned.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpuwhy.check.policy import FAIL, PASS, SKIP, evaluate, load_policy
from test_check import H200


def _check(obs, name, **overrides):
    rep = evaluate(obs, load_policy(overrides=overrides) if overrides else load_policy())
    return next(c for c in rep.checks if c.name == name)


@pytest.mark.parametrize(
    "field, sheet_field, name, key, unit",
    [
        ("dram_bandwidth_gbs", "sheet_bandwidth_gbs", "dram_bandwidth", "min_dram_bandwidth", "GB/s"),
        ("fp32_tflops", "sheet_fp32_tflops", "fp32_fma", "min_fp32", "TFLOP/s"),
        ("tensor_tflops", "sheet_tensor_tflops", "tensor_bf16", "min_tensor", "TFLOP/s"),
    ],
)
def test_fraction_thresholds_at_the_limit(field, sheet_field, name, key, unit):
    obs = replace(H200, **{sheet_field: 64.0})
    at = _check(replace(obs, **{field: 32.0}), name, **{key: 0.5})  # 0.5 x 64 = 32: at the limit passes
    assert at.status == PASS and at.detail == ""
    below = _check(replace(obs, **{field: 31.5}), name, **{key: 0.5})
    assert below.status == FAIL
    # 31.5 / 64 = 49.2%; short by (32 - 31.5) / 64 = 0.8% of the sheet
    assert below.value_text.endswith("(49.2% of sheet)") and below.detail == "below the threshold by 0.8% of the sheet figure"
    assert below.threshold_text == f">= 0.50 x 64 {unit} = 32 {unit}"
    assert below.value_text == f"31.5 {unit} (49.2% of sheet)"
    u = {"GB/s": "gbs", "TFLOP/s": "tflops"}[unit]
    # the numbers: measured 31.5, limit 0.5 x 64 = 32, sheet 64, 31.5 / 64 = 0.4921875 (exact in binary)
    assert below.figures == {f"measured_{u}": 31.5, f"threshold_{u}": 32.0, f"sheet_{u}": 64.0,
                             "min_fraction_of_sheet": 0.5, "fraction_of_sheet": 0.4921875}
    assert at.figures[f"measured_{u}"] == 32.0 and at.figures[f"threshold_{u}"] == 32.0 and at.figures["fraction_of_sheet"] == 0.5


def test_default_dram_threshold_figures():
    # 0.85 x 4800 = 4,080 GB/s; the recorded 4450 GB/s is 92.7% of the sheet
    c = _check(H200, "dram_bandwidth")
    assert c.status == PASS
    assert c.threshold_text == ">= 0.85 x 4800 GB/s = 4,080 GB/s"
    assert c.value_text == "4,450 GB/s (92.7% of sheet)"
    # 4450 / 4800 = 0.927083...
    assert c.figures["measured_gbs"] == 4450.0 and c.figures["threshold_gbs"] == pytest.approx(4080.0)
    assert c.figures["sheet_gbs"] == 4800.0 and c.figures["fraction_of_sheet"] == pytest.approx(0.9270833, rel=1e-6)
    fail = _check(replace(H200, dram_bandwidth_gbs=4000.0), "dram_bandwidth")
    # short by (4080 - 4000) / 4800 = 1.7%
    assert fail.status == FAIL and fail.detail == "below the threshold by 1.7% of the sheet figure"
    # 4000 / 4800 = 0.8333...
    assert fail.figures["measured_gbs"] == 4000.0 and fail.figures["fraction_of_sheet"] == pytest.approx(0.8333333, rel=1e-6)


def test_fraction_check_skips_without_a_figure():
    no_sheet = _check(replace(H200, sheet_bandwidth_gbs=None), "dram_bandwidth")
    assert no_sheet.status == SKIP and no_sheet.threshold_text == ">= 0.85 x sheet"
    assert no_sheet.figures == {"min_fraction_of_sheet": 0.85}
    c = _check(replace(H200, dram_bandwidth_gbs=None), "dram_bandwidth")
    assert c.status == SKIP and c.detail == "not measured" and c.threshold_text == ">= 0.85 x 4800 GB/s = 4,080 GB/s"
    # a skipped check has the limit (0.85 x 4800 = 4080) but no measured figure
    assert "measured_gbs" not in c.figures and c.figures["threshold_gbs"] == pytest.approx(4080.0) and c.value_text == ""


def test_launch_overhead_limit():
    at = _check(replace(H200, launch_overhead_us=20.0), "launch_overhead")
    assert at.status == PASS and at.value_text == "20 us" and at.threshold_text == "<= 20 us"
    assert at.figures == {"measured_us": 20.0, "threshold_us": 20.0}
    past = _check(replace(H200, launch_overhead_us=20.0001), "launch_overhead")
    assert past.status == FAIL and past.figures == {"measured_us": 20.0001, "threshold_us": 20.0}
    assert _check(replace(H200, launch_overhead_us=4.0), "launch_overhead", max_launch_overhead_us=4.0).status == PASS
    skip = _check(replace(H200, launch_overhead_us=None), "launch_overhead")
    assert skip.status == SKIP and skip.figures == {"threshold_us": 20.0}


def test_health_limits():
    assert _check(replace(H200, ecc_uncorrected=0), "ecc_uncorrected").status == PASS
    ecc = _check(replace(H200, ecc_uncorrected=1), "ecc_uncorrected")
    assert ecc.status == FAIL and ecc.figures == {"measured_errors": 1, "threshold_errors": 0}
    assert _check(replace(H200, other_processes=1), "other_processes").status == FAIL
    # the driver's CUDA version 13.0 (13000) serves NVRTC 13.x; 12.9 (12090) does not
    ok = _check(replace(H200, driver_cuda_version=13000, nvrtc_version=(13, 5)), "driver_nvrtc")
    assert ok.status == PASS and ok.value_text == "driver CUDA 13.0, NVRTC 13.5"
    assert ok.figures == {"driver_cuda_version": 13000, "nvrtc_major": 13, "nvrtc_minor": 5}
    assert _check(replace(H200, driver_cuda_version=12090), "driver_nvrtc").status == FAIL
    assert _check(replace(H200, driver_cuda_version=12999), "driver_nvrtc").status == FAIL
    # the PCIe link at its maximum passes; a lower generation or width fails; a wider one than the maximum is fine
    link = _check(H200, "pcie_link")
    assert link.status == PASS and link.value_text == "gen 5 x16 (max gen 5 x16)"
    assert link.figures == {"pcie_gen": 5, "pcie_max_gen": 5, "pcie_width_lanes": 16, "pcie_max_width_lanes": 16}
    assert _check(replace(H200, pcie_gen=(5, 4)), "pcie_link").status == PASS
    assert _check(replace(H200, pcie_width=(16, 8)), "pcie_link").status == PASS
    assert _check(replace(H200, pcie_gen=None), "pcie_link").status == SKIP
    assert _check(replace(H200, remapped_rows_pending=None, retired_pages_pending=True), "remapped_rows").status == FAIL
