"""The roofline maths against the worked figures of the design issue."""

import math

import pytest

from gpuwhy.model.roofline.classify import Ceilings, Workload, arithmetic_intensity, attainable_flops, classify, ridge_point

RTX5070_BW = 672e9  # B/s


@pytest.mark.parametrize(
    "peak_tflops, expected_ridge",
    [(30.9, 46), (61.7, 92), (123.5, 184), (493.9, 735)],
)
def test_rtx5070_ridge_points(peak_tflops, expected_ridge):
    # RTX 5070: 672 GB/s; fp32 30.9, fp16 tensor 61.7, fp8 123.5, fp4 493.9 TFLOP/s
    assert round(ridge_point(peak_tflops * 1e12, RTX5070_BW)) == expected_ridge


def test_vecadd_fp32_on_rtx5070():
    n = 2**28
    flops, nbytes = n, 12 * n  # one add per element; read a, b and write c, 4 B each
    ai = arithmetic_intensity(flops, nbytes)
    assert round(ai, 3) == 0.083
    c = Ceilings(peak_flops=30.9e12, bandwidth=RTX5070_BW, launch_overhead_s=0.0, precision="fp32", gpu="RTX 5070")
    v = classify(Workload(flops, nbytes), c)
    assert v.regime == "memory"
    # elements per second at the memory roof: bandwidth / 12 bytes = 56 billion
    elements_per_s = n / v.predicted_time_s
    assert round(elements_per_s / 1e9) == 56
    assert v.attainable_flops == pytest.approx(RTX5070_BW / 12)


def test_a100_and_h200_ridges():
    assert round(ridge_point(312e12, 2.0e12)) == 156
    assert round(ridge_point(989e12, 4.8e12)) == 206


def test_attainable_is_min_of_two_roofs():
    assert attainable_flops(100.0, 10.0, 2.0) == 20.0
    assert attainable_flops(100.0, 10.0, 50.0) == 100.0


def _c(lo=5e-6):
    return Ceilings(peak_flops=100e12, bandwidth=1e12, launch_overhead_s=lo, precision="fp32", gpu="test")


def test_time_model_and_regimes():
    v = classify(Workload(flops=1e12, bytes=1e9), _c())  # 10 ms compute vs 1 ms memory
    assert v.regime == "compute"
    assert v.t_compute_s == pytest.approx(0.01)
    assert v.t_memory_s == pytest.approx(0.001)
    assert v.predicted_time_s == pytest.approx(0.01 + 5e-6)
    assert v.bound_ratio == pytest.approx(10)
    v = classify(Workload(flops=1e9, bytes=1e9), _c())
    assert v.regime == "memory"
    v = classify(Workload(flops=1e3, bytes=1e3, launches=100), _c())
    assert v.regime == "overhead"
    assert v.t_overhead_s == pytest.approx(100 * 5e-6)


def test_measured_time_sol_and_unexplained():
    v = classify(Workload(flops=1e9, bytes=1e9, time_s=2e-3), _c(0.0))
    assert v.sol_pct == pytest.approx(50.0)
    assert v.memory_sol_pct == pytest.approx(50.0)
    assert v.achieved_bandwidth == pytest.approx(0.5e12)
    assert v.unexplained_fraction == pytest.approx(0.5)
    assert v.warnings == ()


def test_faster_than_roofline_warns():
    v = classify(Workload(flops=1e9, bytes=1e9, time_s=0.5e-3), _c(0.0))
    assert v.sol_pct == pytest.approx(200.0)
    assert any("faster than the roofline" in w for w in v.warnings)


def test_short_kernel_far_above_model_is_overhead():
    v = classify(Workload(flops=1e6, bytes=1e6, time_s=20e-6), _c(0.0))  # model: 1 us
    assert v.regime == "overhead"
    assert any("short workload" in w for w in v.warnings)


@pytest.mark.parametrize(
    "wl, msg",
    [
        (Workload(0, 1), "flops and bytes must be > 0"),
        (Workload(1, 0), "flops and bytes must be > 0"),
        (Workload(-1, 1), "flops and bytes must be > 0"),
        (Workload(1, 1, launches=0), "launches >= 1"),
        (Workload(1, 1, time_s=0.0), "time_s must be > 0"),
        (Workload(1, 1, time_s=math.nan), "time_s must be > 0"),
    ],
)
def test_classify_rejects_bad_workloads(wl, msg):
    with pytest.raises(ValueError, match=msg):
        classify(wl, _c())
