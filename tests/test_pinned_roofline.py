"""Every figure of the roofline verdict, checked against arithmetic written out here.

Datasheet figures (bundled sheets, sources in specs/*.yaml):
  H200 SXM  https://www.nvidia.com/en-us/data-center/h200/ : 4800 GB/s HBM3e,
            989.5 TFLOP/s dense bf16 (1979 "with sparsity" / 2), 67 TFLOP/s fp32
  RTX 5070  672 GB/s GDDR7, 30.9 TFLOP/s fp32

Boundary tests use ceilings and workloads that are powers of two, so that the
times are exact in binary and a comparison at the limit is really at the limit.
"""

from __future__ import annotations

import json
import math

import pytest

import gpuwhy
from gpuwhy.api.classify import run_classify
from gpuwhy.errors import UsageError
from gpuwhy.model.roofline import classify as roofline
from gpuwhy.model.roofline.classify import Ceilings, Workload, arithmetic_intensity, attainable_flops, classify, ridge_point

H200_BW = 4800e9  # B/s
H200_BF16 = 989.5e12  # FLOP/s
H200_FP32 = 67e12  # FLOP/s


def binary(lo: float = 0.0) -> Ceilings:
    """2^40 FLOP/s and 2^40 B/s: a workload of 2^20 FLOP and 2^20 B takes 2^-20 s (0.954 us) on each roof."""
    return Ceilings(peak_flops=2.0**40, bandwidth=2.0**40, launch_overhead_s=lo, precision="fp32", gpu="binary")


T20 = 2.0**-20  # s


# --- the documented constants ------------------------------------------------------------------


def test_documented_constants():
    # 5 us default launch overhead, 2x unexplained factor, 10 us launch-sized kernel, 100 us rule cutoff.
    assert roofline.DEFAULT_LAUNCH_OVERHEAD_S == 5e-6
    assert roofline.UNEXPLAINED_FACTOR == 2.0
    assert roofline.SHORT_KERNEL_S == 10e-6
    assert roofline.SHORT_WORKLOAD_S == 100e-6


# --- the H200 bf16 worked example: every figure classify prints -----------------------------------

# 1.1 TFLOP and 402 MB in 1.6 ms, bf16 on the H200 SXM:
#   intensity  1.1e12 / 402e6            = 2736.32 FLOP/byte
#   ridge      989.5e12 / 4800e9         = 206.146 FLOP/byte      (intensity > ridge: on the flat roof)
#   attainable min(989.5e12, 4800e9 x 2736.32 = 13.13e15) = 989.5 TFLOP/s
#   t_compute  1.1e12 / 989.5e12         = 1.111672 ms
#   t_memory   402e6 / 4800e9            = 83.75 us
#   t_overhead 1 x 5 us                  = 5 us
#   predicted  1.111672 ms + 5 us        = 1.116672 ms
#   bound      1.111672 ms / 83.75 us    = 13.2737 (compute over memory)
#   achieved   1.1e12 / 1.6e-3           = 687.5 TFLOP/s ; 402e6 / 1.6e-3 = 251.25 GB/s
#   SOL        1.111672 / 1.6            = 69.4795 % ; compute 687.5 / 989.5 = 69.4795 % ; memory 251.25 / 4800 = 5.234375 %
#   unexplained (1.6 - 1.116672) / 1.6   = 0.302080
WORKED = {
    "arithmetic_intensity": 1.1e12 / 402e6,
    "ridge_point": 989.5 / 4800 * 1e3,
    "attainable_tflops": 989.5,
    "t_compute_s": 1.1e12 / 989.5e12,
    "t_memory_s": 83.75e-6,
    "t_overhead_s": 5e-6,
    "predicted_time_s": 1.1e12 / 989.5e12 + 5e-6,
    "bound_ratio": (1.1e12 / 989.5e12) / 83.75e-6,
    "achieved_tflops": 687.5,
    "achieved_bandwidth_gbs": 251.25,
    "sol_pct": 100 * (1.1e12 / 989.5e12) / 1.6e-3,
    "compute_sol_pct": 100 * 687.5 / 989.5,
    "memory_sol_pct": 100 * 251.25 / 4800,
    "unexplained_fraction": (1.6e-3 - (1.1e12 / 989.5e12 + 5e-6)) / 1.6e-3,
    "peak_tflops": 989.5,
    "memory_bandwidth_gbs": 4800.0,
    "launch_overhead_s": 5e-6,
    "measured_time_s": 1.6e-3,
}


def test_h200_bf16_json_figures(cli):
    code, out, err = cli("classify", "--flops", "1.1T", "--bytes", "402MB", "--dtype", "bf16", "--gpu", "H200", "--time", "1.6ms", "--json")
    assert code == 0, err
    doc = json.loads(out)
    for key, want in WORKED.items():
        assert doc[key] == pytest.approx(want, rel=1e-9), key
    # to the digits a reader would quote
    assert round(doc["arithmetic_intensity"], 1) == 2736.3 and round(doc["ridge_point"], 2) == 206.15
    assert round(doc["bound_ratio"], 2) == 13.27 and round(doc["sol_pct"], 2) == 69.48
    assert round(doc["memory_sol_pct"], 3) == 5.234 and round(doc["unexplained_fraction"], 4) == 0.3021
    assert doc["regime"] == "compute" and doc["precision"] == "bf16" and doc["warnings"] == []
    assert doc["workload"] == {"flops": 1.1e12, "bytes": 402e6, "launches": 1, "time_s": 1.6e-3, "name": "workload"}
    # the sheet's ridge points: peak / 4800 GB/s, e.g. fp32 67 / 4.8 = 13.958, fp8 1979 / 4.8 = 412.29
    rp = doc["sheet"]["ridge_points"]
    assert rp["fp32"] == pytest.approx(67 / 4.8) and rp["fp8"] == pytest.approx(1979 / 4.8) and rp["fp64"] == pytest.approx(34 / 4.8)


def test_h200_bf16_printed_figures(cli):
    code, out, err = cli("classify", "--flops", "1.1T", "--bytes", "402MB", "--dtype", "bf16", "--gpu", "H200", "--time", "1.6ms")
    assert code == 0, err
    text = " ".join(out.split())
    for shown in (
        "1.1 TFLOP, 402 MB",
        "990 TFLOP/s bf16 dense peak, 4.8 TB/s DRAM",  # 989.5 to 3 digits
        "arithmetic intensity 2,736 FLOP/byte",
        "ridge point 206 FLOP/byte",
        "attainable 990 TFLOP/s",
        "t_compute 1.11 ms",
        "t_memory 83.8 us",
        "t_overhead 5 us (1 x 5 us",
        "predicted time 1.12 ms",
        "measured time 1.6 ms",
        "achieved 688 TFLOP/s, 251 GB/s",
        "speed of light 69.5% of the roof (compute 69.5%, memory 5.2%)",
        "unexplained 30% of the measured time",
        "verdict: compute-bound (13.3x the next term)",
    ):
        assert shown in text, shown


def test_memory_bound_attainable_is_bandwidth_times_intensity(cli):
    # vecadd of 2^28 fp32 on the RTX 5070: 2^28 FLOP over 12 x 2^28 B = 1/12 FLOP/byte; ridge 30.9e12 / 672e9 = 45.98;
    # attainable 672e9 / 12 = 56 GFLOP/s = 0.056 TFLOP/s. Measured 5 ms: achieved 2^28 / 5e-3 = 53.687 GFLOP/s,
    # 3.221e9 / 5e-3 = 644.25 GB/s; SOL = t_memory / t = (3.221225472e9 / 672e9) / 5e-3 = 95.87%;
    # compute SOL 53.687e9 / 30.9e12 = 0.1737%.
    code, out, err = cli("classify", "--flops", str(2**28), "--bytes", str(12 * 2**28), "--gpu", "rtx 5070", "--time", "5ms", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["regime"] == "memory"
    assert d["attainable_tflops"] == pytest.approx(0.056, rel=1e-12)
    assert d["achieved_tflops"] == pytest.approx(2**28 / 5e-3 / 1e12)
    assert d["achieved_bandwidth_gbs"] == pytest.approx(644.245094)
    assert d["sol_pct"] == pytest.approx(100 * (12 * 2**28 / 672e9) / 5e-3) and round(d["sol_pct"], 2) == 95.87
    assert d["memory_sol_pct"] == pytest.approx(d["sol_pct"])
    assert d["compute_sol_pct"] == pytest.approx(100 * 2**28 / 5e-3 / 30.9e12) and round(d["compute_sol_pct"], 4) == 0.1737
    # t_compute 2^28 / 30.9e12 = 8.687 us, t_memory 4.7935 ms: 551.8x memory-bound
    assert d["bound_ratio"] == pytest.approx((12 * 2**28 / 672e9) / (2**28 / 30.9e12))
    assert d["ridge_point"] == pytest.approx(30.9e12 / 672e9)


def test_without_a_time_the_measured_figures_are_null(cli):
    code, out, _ = cli("classify", "--example", "vecadd", "--gpu", "rtx 5070", "--json")
    d = json.loads(out)
    for key in ("achieved_tflops", "achieved_bandwidth_gbs", "sol_pct", "compute_sol_pct", "memory_sol_pct", "unexplained_fraction", "measured_time_s"):
        assert d[key] is None, key


# --- the regime at its boundaries ---------------------------------------------------------------


def test_equal_compute_and_memory_terms_are_compute_bound_at_the_ridge():
    v = classify(Workload(2.0**20, 2.0**20), binary())
    assert v.t_compute_s == v.t_memory_s == T20
    assert v.arithmetic_intensity == v.ridge_point == 1.0
    assert v.regime == "compute" and v.bound_ratio == 1.0
    assert v.attainable_flops == 2.0**40


@pytest.mark.parametrize("flops, regime", [(2.0**20 * (1 + 2**-20), "compute"), (2.0**20 * (1 - 2**-20), "memory")])
def test_just_either_side_of_the_ridge(flops, regime):
    v = classify(Workload(flops, 2.0**20), binary())
    assert v.regime == regime
    assert v.bound_ratio == pytest.approx(1.0, abs=2e-6) and v.bound_ratio > 1.0


def test_overhead_dominates_only_above_the_other_terms():
    # 4 launches x 2^-22 s = 2^-20 s: equal to t_compute = t_memory; the tie goes to compute.
    tie = classify(Workload(2.0**20, 2.0**20, launches=4), binary(2.0**-22))
    assert tie.t_overhead_s == T20 and tie.regime == "compute"
    assert tie.predicted_time_s == 2 * T20  # max(t_c, t_m) + t_o
    over = classify(Workload(2.0**20, 2.0**20, launches=5), binary(2.0**-22))
    # 5 x 2^-22 = 1.25 x 2^-20: overhead-bound, 1.25x the next term
    assert over.regime == "overhead" and over.bound_ratio == 1.25
    assert over.predicted_time_s == T20 + 1.25 * T20


def test_attainable_flops_both_roofs():
    # 100 FLOP/s peak, 10 B/s: at 2 FLOP/byte the slope gives 20; at 10 the roofs meet (100); at 50 the peak caps it.
    assert attainable_flops(100.0, 10.0, 2.0) == 20.0
    assert attainable_flops(100.0, 10.0, 10.0) == 100.0
    assert attainable_flops(100.0, 10.0, 50.0) == 100.0


# --- the faster-than-the-roofline warning ----------------------------------------------------------


def test_measured_exactly_at_the_roof_does_not_warn():
    v = classify(Workload(2.0**20, 2.0**20, time_s=T20), binary())
    assert v.sol_pct == 100.0
    assert v.unexplained_fraction == 0.0
    assert v.warnings == ()


def test_measured_just_faster_than_the_roof_warns_with_its_percentage():
    # t = 2^-20 x (1 - 2^-8): SOL = 100 / (1 - 1/256) = 100.392%, printed as "100%"
    v = classify(Workload(2.0**20, 2.0**20, time_s=T20 * (1 - 2**-8)), binary())
    assert v.sol_pct == pytest.approx(100 / (1 - 2**-8))
    assert len(v.warnings) == 1
    assert v.warnings[0].startswith("the measured time is faster than the roofline allows (100% of speed of light)")
    assert v.unexplained_fraction == 0.0  # max(0, (t - predicted) / t): never negative


def test_the_warning_prints_the_speed_of_light():
    # t = 2^-21: SOL = 2^-20 / 2^-21 = 200%
    v = classify(Workload(2.0**20, 2.0**20, time_s=T20 / 2), binary())
    assert "(200% of speed of light)" in v.warnings[0]
    assert v.achieved_flops == 2.0**41 and v.compute_sol_pct == 200.0 and v.memory_sol_pct == 200.0


# --- the short-workload "treat it as overhead-bound" rule ---------------------------------------------


def test_a_long_slow_memory_bound_kernel_stays_memory_bound():
    # The case: a 3 ms kernel at 22% of speed of light on the H200 (fp32). bytes = 0.66 ms x 4.8e12 B/s
    # = 3.168e9 B; flops 1e9 (t_compute 14.9 us). SOL = 0.66 / 3 = 22%. Far above the model, but 3 ms is no launch.
    c = Ceilings(H200_FP32, H200_BW, 5e-6, "fp32", "H200 SXM")
    v = classify(Workload(1e9, 3.168e9, time_s=3e-3), c)
    assert v.sol_pct == pytest.approx(22.0)
    assert v.regime == "memory" and v.warnings == ()
    assert v.bound_ratio == pytest.approx(0.66e-3 / (1e9 / 67e12))


@pytest.mark.parametrize(
    "time_s, overhead",
    [
        (99e-6, True),  # below 100 us, 99 / 0.954 = 104x the model
        (100e-6, False),  # at the cutoff: not below it
        (101e-6, False),
        (3e-3, False),
    ],
)
def test_short_workload_cutoff_is_100_us(time_s, overhead):
    v = classify(Workload(2.0**20, 2.0**19, time_s=time_s), binary())  # memory 2^-21 s, compute 2^-20 s: compute-bound
    assert (v.regime == "overhead") is overhead
    assert any("short workload" in w for w in v.warnings) is overhead
    if overhead:
        # the bound ratio becomes measured / model: 99e-6 / 2^-20 = 103.8x, and the warning says so
        assert v.bound_ratio == pytest.approx(99e-6 / T20)
        assert "103.8x the model's" in v.warnings[0]
    else:
        assert v.regime == "compute" and v.bound_ratio == 2.0


def test_short_workload_factor_is_strictly_above_2x():
    at = classify(Workload(2.0**20, 2.0**20, time_s=2 * T20), binary())  # exactly 2x the model
    assert at.regime == "compute" and at.warnings == ()
    assert at.sol_pct == 50.0 and at.unexplained_fraction == 0.5
    above = classify(Workload(2.0**20, 2.0**20, time_s=2 * T20 * (1 + 2**-20)), binary())
    assert above.regime == "overhead"
    assert above.bound_ratio == pytest.approx(2.0)


def test_an_overhead_bound_workload_keeps_its_bound_ratio():
    # 100 launches x 1 us = 100 us > 2^-20 s: overhead-bound by 100e-6 / 2^-20 = 104.9x; measured 1 ms is not short.
    v = classify(Workload(2.0**20, 2.0**20, launches=100), binary(1e-6))
    assert v.regime == "overhead" and v.bound_ratio == pytest.approx(100e-6 / T20)
    w = classify(Workload(2.0**20, 2.0**19, launches=20, time_s=90e-6), binary(1e-6))
    # model: 2^-20 + 20 us = 20.95 us; 90 us = 4.3x the model, below 100 us: the rule fires, the regime is already overhead
    assert w.regime == "overhead" and any("short workload" in x for x in w.warnings)
    assert w.bound_ratio == pytest.approx(20e-6 / T20)  # the model's ratio (overhead over compute), not 4.3x


# --- the pure functions' own guards (the Python API is a public surface) -----------------------------


def test_arithmetic_intensity_guards():
    assert arithmetic_intensity(0.0, 1.0) == 0.0  # no FLOPs is an intensity of zero
    assert arithmetic_intensity(3.0, 12.0) == 0.25
    assert arithmetic_intensity(0.25, 0.5) == 0.5  # fractions of a byte are bytes > 0
    for flops, nbytes in ((1.0, 0.0), (1.0, -1.0), (-1.0, 1.0)):
        with pytest.raises(ValueError, match="flops must be >= 0 and bytes > 0"):
            arithmetic_intensity(flops, nbytes)


def test_ridge_point_guards():
    assert ridge_point(989.5e12, 4.8e12) == pytest.approx(206.145833)
    assert ridge_point(0.5, 0.25) == 2.0  # any positive figures, however small
    for peak, bw in ((0.0, 1.0), (1.0, 0.0), (-1.0, 1.0), (1.0, -1.0)):
        with pytest.raises(ValueError, match="peak and bandwidth must be > 0"):
            ridge_point(peak, bw)


@pytest.mark.parametrize(
    "wl, msg",
    [
        (Workload(0, 1), "flops and bytes must be > 0"),
        (Workload(1, 0), "flops and bytes must be > 0"),
        (Workload(1, 1, launches=0), "launches >= 1"),
        (Workload(1, 1, time_s=0.0), "time_s must be > 0"),
        (Workload(1, 1, time_s=-1e-3), "time_s must be > 0"),
        (Workload(1, 1, time_s=math.inf), "time_s must be > 0"),
        (Workload(1, 1, time_s=math.nan), "time_s must be > 0"),
    ],
)
def test_classify_workload_guards(wl, msg):
    with pytest.raises(ValueError, match=msg):
        classify(wl, binary())


@pytest.mark.parametrize("peak, bw, lo", [(0.0, 1.0, 0.0), (1.0, 0.0, 0.0), (1.0, 1.0, -1e-6)])
def test_classify_ceiling_guards(peak, bw, lo):
    with pytest.raises(ValueError, match="ceilings must be positive"):
        classify(Workload(1, 1), Ceilings(peak, bw, lo, "fp32", "x"))


def test_small_positive_ceilings_are_ceilings():
    # 0.5 FLOP/s and 0.25 B/s: 1 FLOP takes 2 s, 1 byte 4 s: memory-bound by 2x, ridge 2 FLOP/byte
    v = classify(Workload(1, 1), Ceilings(0.5, 0.25, 0.0, "fp32", "tiny"))
    assert (v.t_compute_s, v.t_memory_s, v.regime, v.bound_ratio, v.ridge_point) == (2.0, 4.0, "memory", 2.0, 2.0)


def test_terms_that_underflow_to_zero_give_an_infinite_ratio_not_a_crash():
    # 5e-324 (the smallest subnormal) over 1e300 rounds to 0 s for both terms
    v = classify(Workload(5e-324, 5e-324), Ceilings(1e300, 1e300, 0.0, "fp32", "x"))
    assert v.t_compute_s == v.t_memory_s == 0.0 and v.bound_ratio == math.inf


def test_zero_launch_overhead_is_allowed():
    v = classify(Workload(1, 1, launches=3), binary(0.0))
    assert v.t_overhead_s == 0.0 and v.predicted_time_s == 2.0**-40


def test_python_api_guards_without_the_cli():
    with pytest.raises(UsageError, match="flops '0' must be greater than zero"):
        gpuwhy.classify(flops=0, bytes=1e9, gpu="H200")
    with pytest.raises(UsageError, match="bytes '-1' must be greater than zero"):
        gpuwhy.classify(flops=1e9, bytes=-1, gpu="H200")
    with pytest.raises(UsageError, match="launches '0' must be greater than zero"):
        gpuwhy.classify(flops=1e9, bytes=1e9, gpu="H200", launches=0)
    with pytest.raises(UsageError, match="time '0' must be greater than zero"):
        gpuwhy.classify(flops=1e9, bytes=1e9, gpu="H200", time=0)
    with pytest.raises(UsageError, match="cannot classify: flops and bytes must be > 0"):
        run_classify(Workload(0.0, 1e9), "H200")


def test_python_api_figures():
    # 2.5 TFLOP over 24 GB, bf16 on the H200: 104.17 FLOP/byte < 206.15: memory-bound, t_memory 24e9 / 4.8e12 = 5 ms,
    # t_compute 2.5e12 / 989.5e12 = 2.5265 ms; attainable 4.8e12 x 104.17 = 500 TFLOP/s.
    r = gpuwhy.classify(flops="2.5T", bytes="24GB", gpu="H200", dtype="bf16")
    v = r.verdict
    assert v.regime == "memory"
    assert v.arithmetic_intensity == pytest.approx(2.5e12 / 24e9)
    assert v.t_memory_s == pytest.approx(5e-3) and v.t_compute_s == pytest.approx(2.5e12 / 989.5e12)
    assert v.attainable_tflops == pytest.approx(500.0)
    assert v.bound_ratio == pytest.approx(5e-3 / (2.5e12 / 989.5e12))


# --- `gpuwhy roofline`: the legend and the workloads' figures ------------------------------------------


def test_roofline_command_legend_and_points(cli, monkeypatch):
    # fp32 on the H200: ridge 67e12 / 4.8e12 = 13.96 -> "14". The gemm point (1.1 TFLOP, 402 MB, 1.6 ms) against
    # the fp32 roof: t_compute 1.1e12 / 67e12 = 16.42 ms, t_memory 83.75 us -> 196x; SOL 16.42 / 1.6 = 1026%.
    # vec (2^28 FLOP, 3 x 2^30 B, no time): t_memory 671.09 us, next the 5 us launch (t_compute 4.0 us) -> 134x.
    monkeypatch.setenv("COLUMNS", "100")
    code, out, err = cli("roofline", "--gpu", "H200", "--point", "gemm:1.1T:402MB:1.6ms", "--point", f"vec:{2**28}:{3 * 2**30}")
    assert code == 0, err
    text = " ".join(out.split())
    assert "fp32 spec (dashed): 4,800 GB/s, 67 TFLOP/s, ridge 14 FLOP/byte" in text
    assert "gemm: compute-bound (196x), 1,026% of SOL (2,736 FLOP/byte, 688 TFLOP/s achieved)" in text
    assert "vec: memory-bound (134x) (0.0833 FLOP/byte, on the roof)" in text


def test_roofline_command_json(cli):
    code, out, err = cli("roofline", "--gpu", "H200", "--dtype", "bf16", "--point", "gemm:1.1T:402MB:1.6ms", "--json")
    assert code == 0, err
    d = json.loads(out)
    (roof,) = d["roofs"]
    assert roof == {"precision": "bf16", "kind": "spec", "peak_tflops": 989.5, "bandwidth_gbs": 4800.0,
                    "ridge": pytest.approx(989.5 / 4.8), "source": "H200 SXM, bundled spec sheet"}
    (w,) = d["workloads"]
    for key, want in WORKED.items():  # the same workload as the classify worked example, bf16
        assert w[key] == pytest.approx(want, rel=1e-9), key
