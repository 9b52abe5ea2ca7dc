"""`gpuwhy check`: every threshold at exactly its limit and just past it, and the figures the checks print.

Default policy (specs/policy/default.yaml): DRAM >= 0.85 x sheet, FP32 >= 0.90 x sheet, tensor >= 0.70 x sheet,
launch overhead <= 20 us. Fractions of 0.5 and sheets that are powers of two keep the limits exact in binary.
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
    assert below.value.endswith("(49.2% of sheet)") and below.detail == "below the threshold by 0.8% of the sheet figure"
    assert below.threshold == f">= 0.50 x 64 {unit} = 32 {unit}"
    assert below.value == f"31.5 {unit} (49.2% of sheet)"


def test_default_dram_threshold_figures():
    # 0.85 x 4800 = 4080 GB/s; the recorded 4450 GB/s is 92.7% of the sheet
    c = _check(H200, "dram_bandwidth")
    assert c.status == PASS
    assert c.threshold == ">= 0.85 x 4800 GB/s = 4080 GB/s"
    assert c.value == "4450 GB/s (92.7% of sheet)"
    fail = _check(replace(H200, dram_bandwidth_gbs=4000.0), "dram_bandwidth")
    # short by (4080 - 4000) / 4800 = 1.7%
    assert fail.status == FAIL and fail.detail == "below the threshold by 1.7% of the sheet figure"


def test_fraction_check_skips_without_a_figure():
    assert _check(replace(H200, sheet_bandwidth_gbs=None), "dram_bandwidth").status == SKIP
    c = _check(replace(H200, dram_bandwidth_gbs=None), "dram_bandwidth")
    assert c.status == SKIP and c.detail == "not measured" and c.threshold == ">= 0.85 x 4800 GB/s = 4080 GB/s"


def test_launch_overhead_limit():
    at = _check(replace(H200, launch_overhead_us=20.0), "launch_overhead")
    assert at.status == PASS and at.value == "20 us" and at.threshold == "<= 20 us"
    assert _check(replace(H200, launch_overhead_us=20.0001), "launch_overhead").status == FAIL
    assert _check(replace(H200, launch_overhead_us=4.0), "launch_overhead", max_launch_overhead_us=4.0).status == PASS
    assert _check(replace(H200, launch_overhead_us=None), "launch_overhead").status == SKIP


def test_health_limits():
    assert _check(replace(H200, ecc_uncorrected=0), "ecc_uncorrected").status == PASS
    assert _check(replace(H200, ecc_uncorrected=1), "ecc_uncorrected").status == FAIL
    assert _check(replace(H200, other_processes=1), "other_processes").status == FAIL
    # the driver's CUDA version 13.0 (13000) serves NVRTC 13.x; 12.9 (12090) does not
    ok = _check(replace(H200, driver_cuda_version=13000, nvrtc_version=(13, 5)), "driver_nvrtc")
    assert ok.status == PASS and ok.value == "driver CUDA 13.0, NVRTC 13.5"
    assert _check(replace(H200, driver_cuda_version=12090), "driver_nvrtc").status == FAIL
    assert _check(replace(H200, driver_cuda_version=12999), "driver_nvrtc").status == FAIL
    # the PCIe link at its maximum passes; a lower generation or width fails; a wider one than the maximum is fine
    link = _check(H200, "pcie_link")
    assert link.status == PASS and link.value == "gen 5 x16 (max gen 5 x16)"
    assert _check(replace(H200, pcie_gen=(5, 4)), "pcie_link").status == PASS
    assert _check(replace(H200, pcie_width=(16, 8)), "pcie_link").status == PASS
    assert _check(replace(H200, pcie_gen=None), "pcie_link").status == SKIP
    assert _check(replace(H200, remapped_rows_pending=None, retired_pages_pending=True), "remapped_rows").status == FAIL
