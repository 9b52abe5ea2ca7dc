"""The pure parts of `gpuwhy bench`: sizes, regimes, byte counts, statistics, verify
functions, launch shapes, health warnings, profiles. No GPU needed."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from gpuwhy.bench import memory as M
from gpuwhy.device.derive import clock_event_keys as reason_names
from gpuwhy.device.sample import HealthSample, health_warnings
from gpuwhy.bench.results import (
    REGIME_DRAM,
    REGIME_L2,
    REGIME_MIXED,
    BandwidthRow,
    buffer_sets_needed,
    classify_regime,
    sustained_dram,
)
from gpuwhy.engine.timing import choose_reps, summarize
from gpuwhy.errors import UsageError

MiB = 2**20
L2 = 60 * MiB  # an H200's L2


# ---------------------------------------------------------------- sizes ----


def test_sweep_sizes_are_geometric_from_1k_to_256m():
    s = M.sweep_sizes()
    assert s[0] == 1024 and s[-1] == 256 * 2**20
    assert all(b == 2 * a for a, b in zip(s, s[1:]))
    assert len(s) == 19
    assert M.sweep_sizes(10, 100, 3) == [10, 30, 90]
    with pytest.raises(ValueError, match="need 1 <= lo <= hi and factor >= 2"):
        M.sweep_sizes(0, 10)


def test_buffer_sets_are_capped_to_free_memory():
    GiB = 2**30
    assert M.plan_sets(3 * GiB, 2, free_bytes=100 * GiB) == 2
    assert M.plan_sets(3 * GiB, 2, free_bytes=5 * GiB) == 1  # rotation cut to fit
    assert M.plan_sets(12 * GiB, 2, free_bytes=4 * GiB) == 0  # skipped: 12 GiB > 0.8 x 4 GiB
    assert M.plan_sets(GiB, 4, free_bytes=4 * GiB, extra_bytes=GiB) == 2


def test_quick_sizes_reach_dram_on_an_h200():
    # the largest quick size must give a vectorized row >= 4 x L2 (sustained figure)
    assert max(M.QUICK_SIZES) * 4 >= 4 * L2


# --------------------------------------------------------------- regimes ----


def test_l2_marking():
    assert classify_regime(8 * MiB, 1, L2) == REGIME_L2
    assert classify_regime(L2, 1, L2) == REGIME_L2
    assert classify_regime(L2 + 1, 1, L2) == REGIME_MIXED
    assert classify_regime(100 * MiB, 2, L2) == REGIME_MIXED  # 200 MiB cycled < 240
    assert classify_regime(100 * MiB, 3, L2) == REGIME_DRAM
    assert classify_regime(4 * L2, 1, L2) == REGIME_DRAM


def test_buffer_sets_rotate_only_above_l2():
    assert buffer_sets_needed(L2 // 2, L2) == 1  # the L2 row measures the L2 on purpose
    assert buffer_sets_needed(L2 + 1, L2) == 4
    assert buffer_sets_needed(100 * MiB, L2) == 3
    assert buffer_sets_needed(2**30, L2) == 2  # never reuse the previous repetition's buffer
    for ws in (61 * MiB, 97 * MiB, 2**30, 3 * 2**30):
        k = buffer_sets_needed(ws, L2)
        assert classify_regime(ws, k, L2) == REGIME_DRAM


# ------------------------------------------------------------ byte counts ----


@pytest.mark.parametrize("dtype,es", [("fp32", 4), ("fp64", 8)])
def test_bytes_moved_is_reads_plus_writes(dtype, es):
    n = 1000003
    cases = {c.name: c for c in M.ALL_CASES}
    assert M.bytes_for_case(cases["read-vec16"], n, dtype, grid=1056) == n * es + 1056 * es
    assert M.bytes_for_case(cases["write-naive"], n, dtype, grid=1) == n * es
    assert M.bytes_for_case(cases["copy-vec16"], n, dtype, grid=1) == 2 * n * es
    assert M.bytes_for_case(cases["vecadd-naive"], n, dtype, grid=1) == 3 * n * es
    assert cases["vecadd-vec16"].working_set(n, es) == 3 * n * es


def test_row_figures():
    t = summarize([1e-3, 1e-3, 2e-3])
    row = BandwidthRow("copy-vec16", "copy", "vec16", "fp32", 2**28, 2 * 2**30, 2 * 2**30, 2, REGIME_DRAM, t, 4800.0, 1056, 256)
    assert row.gbs == pytest.approx(2 * 2**30 / 1e-3 / 1e9)
    assert row.pct_of_spec == pytest.approx(100 * row.gbs / 4800)
    assert row.elements_per_s == pytest.approx(2**28 / 1e-3)
    l2row = BandwidthRow("copy-vec16", "copy", "vec16", "fp32", 2**20, 8 * MiB, 8 * MiB, 1, REGIME_L2, t, 4800.0, 1056, 256)
    assert l2row.pct_of_spec is None  # an L2 figure is never a % of DRAM
    assert row.to_dict()["regime"] == REGIME_DRAM


def _row(kernel, n, gbs_time, regime, ws):
    op, variant = kernel.split("-")
    return BandwidthRow(kernel, op, variant, "fp32", n, 10**9, ws, 2, regime, summarize([gbs_time]), 4800.0, 1, 256)


def test_sustained_is_the_best_large_vectorized_dram_row():
    rows = [
        _row("copy-vec16", 2**28, 1e9 / 4.2e12, REGIME_DRAM, 2 * 2**30),
        _row("read-vec16", 2**28, 1e9 / 4.4e12, REGIME_DRAM, 2**30),
        _row("read-naive", 2**28, 1e9 / 4.6e12, REGIME_DRAM, 2**30),  # naive rows never count
        _row("read-vec16", 2**22, 1e9 / 9.0e12, REGIME_L2, 16 * MiB),  # L2 rows never count
        _row("read-vec16", 2**24, 1e9 / 5.0e12, REGIME_DRAM, 64 * MiB),  # too small: < 4 x L2
    ]
    best = sustained_dram(rows, L2)
    assert best.kernel == "read-vec16" and best.elements == 2**28
    assert sustained_dram(rows[2:4], L2) is None


# ------------------------------------------------------------- statistics ----


def test_summarize():
    m = summarize([3.0, 1.0, 2.0, 10.0])
    assert m.median_s == 2.5 and m.min_s == 1.0 and m.max_s == 10.0 and m.mean_s == 4.0
    assert m.cv == pytest.approx(np.std([3.0, 1.0, 2.0, 10.0]) / 4.0)
    assert m.reps == 4
    one = summarize([5e-6])
    assert one.cv == 0.0 and one.median_s == 5e-6
    half = m.scaled(2)
    assert half.median_s == 1.25 and half.cv == m.cv
    for bad, msg in (([], "no timing samples"), ([float("nan")], r"bad timing sample in \[nan\]"), ([-1.0], r"bad timing sample in \[-1.0\]")):
        with pytest.raises(ValueError, match=msg):
            summarize(bad)


def test_choose_reps():
    assert choose_reps(1e-3, 0.02) == 20
    assert choose_reps(1e-6, 0.02, max_reps=200) == 200
    assert choose_reps(1.0, 0.02, min_reps=5) == 5
    assert choose_reps(0.0, 0.02, max_reps=50) == 50


# ----------------------------------------------------------- launch shape ----


def test_launch_shapes():
    cases = {c.name: c for c in M.ALL_CASES}
    naive = cases["vecadd-naive"]
    assert naive.launch_shapes(1000003, 4, 132, 8) == [(3907, 256)]  # one element per thread
    assert naive.launch_shape(1, 4, 132, 8) == (1, 256)
    with pytest.raises(UsageError, match=r"uses a 32-bit index .*n=2147483648 must be < 2\^31"):
        naive.launch_shape(2**31, 4, 132, 8)
    vec = cases["copy-vec16"]
    # one block per chunk of 256 x 1 vectors first, then a persistent grid of 4 waves
    assert vec.launch_shapes(2**28, 4, 132, 8) == [(2**26 // 256, 256), (132 * 8 * 4, 256)]
    assert vec.launch_shapes(2**28, 8, 132, 8, unroll=2, waves=1) == [(2**27 // 512, 256), (132 * 8, 256)]
    read = cases["read-vec16"]  # read and write take 4 vectors per thread per chunk
    assert read.launch_shapes(2**28, 4, 132, 8) == [(2**26 // 1024, 256), (132 * 8 * 4, 256)]
    assert cases["write-vec16"].launch_shapes(2**28, 4, 132, 8)[0] == (2**26 // 1024, 256)
    assert set(M.DEFAULT_UNROLLS) == set(M.FAMILIES) == set(M.UNROLL_MACROS)
    assert read.launch_shapes(2**20, 4, 132, 8) == [(256, 256)]  # the persistent grid would not be smaller
    assert vec.launch_shapes(2**20, 4, 132, 8, block=128) == [(2048, 128)]
    assert vec.launch_shapes(31, 4, 132, 8) == [(1, 256)]
    assert vec.launch_shapes(1, 8, 132, 8) == [(1, 256)]


def test_kernel_names_and_selection():
    assert [c.kernel_name("fp32") for c in M.select_cases(["read"])] == ["read_naive_f32", "read_vec16_f32"]
    assert [c.name for c in M.select_cases(["vecadd-naive,copy_vec16"])] == ["vecadd-naive", "copy-vec16"]
    assert M.select_cases(["launch"]) == []
    assert len(M.select_cases(None)) == 8 and len(M.select_cases(["all", "read"])) == 8
    with pytest.raises(UsageError, match="unknown --kernel 'memcpy'"):
        M.select_cases(["memcpy"])


# ------------------------------------------------------ verify functions ----


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_verify_read(rng, dtype):
    case = M.ReadCase("vec16")
    (a,) = case.make_inputs(rng, 2**20 + 7, dtype)
    assert a.dtype == dtype and a.min() >= 1 and a.max() <= 8  # never zero, sums exact
    parts = np.add.reduceat(a, np.arange(0, a.size, 997)).astype(dtype)
    assert case.verify([a], [parts], 0.0) is None
    dropped = parts.copy()
    dropped[3] -= a[3 * 997]  # one element left out of one block's sum
    assert "sum is" in case.verify([a], [dropped], 0.0)
    (f,) = M.random_inputs(rng, 1000, dtype, 1)  # fractional data: a relative tolerance
    assert np.all(f >= 0.5) and np.all(f < 1.5)
    assert case.verify([f], [np.array([f.sum(dtype=np.float64)], dtype)], 0.0) is None
    poisoned = parts.copy()
    poisoned[-1] = np.nan
    assert "not written" in case.verify([a], [poisoned], 0.0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_verify_write(dtype):
    case = M.WriteCase("naive")
    n, v = 2**20 + 7, 1.3
    good = M.WriteCase.expected(n, dtype, v)
    assert good.dtype == dtype and good[1023] == dtype(v) + dtype(1023) and good[1024] == dtype(v)
    assert case.verify([], [good], v) is None
    bad = good.copy()
    bad[1000] = bad[999]
    assert "element 1000" in case.verify([], [bad], v)
    assert case.verify([], [good], v + 1) is not None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_verify_copy_and_vecadd(rng, dtype):
    a, b = M.random_inputs(rng, 31, dtype, 2)
    assert M.CopyCase().verify([a], [a.copy()], 0) is None
    missing = a.copy()
    missing[-1] = np.nan  # the poison left in an unwritten element
    assert "element 30" in M.CopyCase().verify([a], [missing], 0)
    assert M.VecaddCase().verify([a, b], [a + b], 0) is None
    assert M.VecaddCase().verify([a, b], [a + a], 0) is not None
    assert M.VecaddCase().verify([a, b], [(a + b)[:-1]], 0) is not None


# ---------------------------------------------------------------- health ----


def test_reason_names_and_warnings():
    assert reason_names(0) == () and reason_names(None) == ()
    assert reason_names(0x1 | 0x4 | 0x40) == ("gpu_idle", "sw_power_cap", "hw_thermal_slowdown")
    assert reason_names(0x8000) == ("bit_0x8000",)
    calm = HealthSample(sm_clock_mhz=1980, max_sm_clock_mhz=1980, reasons=("gpu_idle",), gpu_util_pct=0)
    assert health_warnings(calm, calm) == []
    assert health_warnings(None, None) == []
    hot = HealthSample(sm_clock_mhz=1500, max_sm_clock_mhz=1980, reasons=("sw_thermal_slowdown",))
    (w,) = health_warnings(calm, hot)
    assert "throttled" in w and "sw_thermal_slowdown" in w and "1500 of 1980" in w
    busy = HealthSample(other_processes=((4242, "python3"),), gpu_util_pct=90)
    (w,) = health_warnings(busy, calm)
    assert "python3 (pid 4242)" in w
    (w,) = health_warnings(HealthSample(gpu_util_pct=55), calm)
    assert "55% busy" in w


# --------------------------------------------------------------- profile ----


def test_profile_round_trip_and_latest(tmp_path):
    from gpuwhy.profiles import DeviceProfile, latest_profile, list_profiles, normalize_uuid, save_profile

    assert normalize_uuid("ABCD-12") == "GPU-abcd-12" == normalize_uuid("gpu-ABCD-12")
    old = DeviceProfile(uuid="GPU-abc", name="NVIDIA H200", date="2026-01-01T00:00:00+00:00", dram_bandwidth_gbs=4400.0,
                        launch_overhead_s=2.5e-6)
    new = DeviceProfile(uuid="GPU-abc", name="NVIDIA H200", date="2026-02-01T00:00:00+00:00", dram_bandwidth_gbs=None,
                        launch_overhead_s=2.4e-6)
    save_profile(new, tmp_path)
    p = save_profile(old, tmp_path)
    assert json.loads(p.read_text())["dram_bandwidth_gbs"] == 4400.0
    assert latest_profile("abc", tmp_path).date.startswith("2026-02")
    assert latest_profile("GPU-abc", tmp_path, need="dram_bandwidth_gbs").dram_bandwidth == pytest.approx(4.4e12)
    assert latest_profile("GPU-other", tmp_path) is None
    (tmp_path / "GPU-abc" / "broken.json").write_text("{not json")
    assert len(list_profiles("GPU-abc", tmp_path)) == 2
    with pytest.raises(ValueError, match="profile lacks \'uuid\'"):
        DeviceProfile.from_dict({"name": "x"})
    assert math.isclose(DeviceProfile.from_dict({**old.to_dict(), "future_field": 1}).launch_overhead_s, 2.5e-6)


def test_host_chunk_sizes_match_the_kernel_defaults():
    """The host sizes one-block-per-chunk grids from the same unroll the kernels use."""
    import re

    from gpuwhy.resources import bundled_dir

    src = (bundled_dir("microbench") / "memory.cu").read_text()
    defaults = dict(re.findall(r"#define (GPUWHY_UNROLL\w*) (\d+)", src))
    for op, macro in M.UNROLL_MACROS.items():
        assert int(defaults[macro]) == M.DEFAULT_UNROLLS[op], op
