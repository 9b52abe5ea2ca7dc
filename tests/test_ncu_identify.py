"""Which sheet an export's GPU attributes fit (device/sheet.sheet_for, rule ``attributes``), and the
regime from utilisations (model/utilisation.classify_utilisation) that judges exports without FLOPs."""

from __future__ import annotations

import math
import re

import pytest

from gpuwhy.device.sheet import sheet_for
from gpuwhy.model.roofline.utilisation import classify_utilisation


def test_compute_capability_alone_lists_every_fit():
    c = sheet_for(compute_capability="8.0")
    assert c.sheet is None and set(c.candidates) == {"A100 PCIe 80GB", "A100 SXM4 40GB", "A100 SXM4 80GB"}
    assert "pass --gpu" in c.note


def test_memory_size_tells_the_a100s_apart():
    # what an A100 40GB reports: 39.4 GiB (42,298,834,944 bytes)
    c = sheet_for(compute_capability="8.0", sm_count=108, memory_bytes=42_298_834_944)
    assert c.sheet.name == "A100 SXM4 40GB" and c.rule == "attributes"
    two = sheet_for(compute_capability="8.0", sm_count=108, memory_bytes=85_051_572_224)  # 79.2 GiB
    assert set(two.candidates) == {"A100 PCIe 80GB", "A100 SXM4 80GB"}


def test_h200_attributes_from_the_real_export():
    # device__attribute_* of tests/fixtures/real/ncu_pct_raw.csv
    c = sheet_for(compute_capability="9.0", sm_count=132, memory_bytes=150_109_880_320, clock_mhz=1980)
    assert set(c.candidates) == {"GH200 144GB", "H200 SXM"}  # the clock rules out the 1785 MHz H200 NVL
    assert sheet_for(pci_device_id="0x2335").sheet.name == "H200 SXM"


def test_attributes_that_fit_nothing():
    c = sheet_for(compute_capability="9.0", sm_count=77)
    assert c.sheet is None and not c.candidates and "no sheet fits" in c.note


def test_a_name_still_decides_first():
    c = sheet_for(nvml_name="NVIDIA H200", compute_capability="8.0")
    assert c.sheet.name == "H200 SXM" and c.rule == "nvml_name"


@pytest.mark.parametrize("p, m, t, regime", [
    (0.91, 0.17, 220e-6, "compute"),   # the bf16 GEMM: tensor pipe 91%, DRAM 17%
    (0.32, 0.37, 138e-6, "memory"),    # the softmax: ALU 32%, DRAM 37%
    (0.05, 0.0001, 2.5e-6, "overhead"),  # a 256-element op: 2.5 us < one 5 us launch
])
def test_regime_from_utilisations(p, m, t, regime):
    v = classify_utilisation(p, m, t, 1, 5e-6)
    assert v.regime == regime
    assert v.t_compute_s == pytest.approx(min(p, 1) * t) and v.t_memory_s == pytest.approx(m * t)
    assert v.sol_pct == pytest.approx(100 * max(p, m))


def test_utilisation_input_checks():
    assert classify_utilisation(1.3, 0.2, 1e-3, 1, 5e-6).t_compute_s == pytest.approx(1e-3)  # clipped at the peak
    assert math.isinf(classify_utilisation(0.5, 0.0, 1e-3, 1, 0.0).bound_ratio)
    shares, counts = "utilisations must be finite and >= 0", "time_s must be > 0, launches >= 1 and the launch overhead >= 0"
    for bad, words in (((-0.1, 0.1, 1e-3, 1), shares), ((0.1, float("nan"), 1e-3, 1), shares), ((0.1, 0.1, 0.0, 1), counts),
                       ((0.1, 0.1, 1e-3, 0), counts)):
        with pytest.raises(ValueError, match=f"^{re.escape(words)}$"):
            classify_utilisation(*bad, 5e-6)
