"""Verdicts and figures on the real fixtures made on the H200 by benchmarks/make_diag_fixtures.py.

The files live in tests/fixtures/real/ (``python3 benchmarks/make_diag_fixtures.py
tests/fixtures/real`` on the GPU machine); each test skips while its file is absent.
Reading them needs no GPU.

The ncu program (see the script): two ``torch.add`` of 2^26 fp32 elements,
one 8192^3 bf16 ``torch.matmul``, two in-place ops on 256 elements.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuwhy.importers.ncu import launch_figures, load_ncu_report, read_ncu_csv
from gpuwhy.importers.kineto import load_trace

REAL = Path(__file__).parent / "fixtures" / "real"
ADD_N = 1 << 26
MM_N = 8192
NCU_FILES = ("ncu_raw.csv", "ncu_details.csv", "ncu_raw_base.csv")


def _need(name: str) -> Path:
    for cand in (REAL / name, REAL / (name + ".gz")):
        if cand.exists():
            return cand
    pytest.skip(f"real fixture {name} not made yet (run benchmarks/make_diag_fixtures.py tests/fixtures/real on the GPU)")


def _kernels(report):
    return [k for d in report.devices for k in list(d.kernels)]


def _add_groups(report):
    """Kernel groups whose FLOPs are CUDA-core fp32 only and 2 x ADD_N per launch (the torch.add).

    torch.add(a, b) computes a + alpha * b: one FFMA per element on the H200 (seen in the
    real export), and ncu's instruction counters count an FMA as 2 FLOPs.
    """
    out = []
    for k in _kernels(report):
        if k.classifiable and set(k.flops_by) == {"fp32"} and k.flops == pytest.approx(2 * ADD_N * k.launches, rel=1e-3):
            out.append(k)
    return out


@pytest.mark.parametrize("name", NCU_FILES)
def test_elementwise_add_is_memory_bound(name):
    r = load_ncu_report(_need(name), top=50)
    (add,) = _add_groups(r)
    assert add.launches == 2
    assert add.regime == "memory"
    # a and b read, out written: 12 bytes per element; up to an L2's worth of writes may still be in cache.
    assert add.bytes / add.launches == pytest.approx(12 * ADD_N, rel=0.10)
    assert 60.0 <= add.roof_pct <= 105.0


@pytest.mark.parametrize("name", NCU_FILES)
def test_bf16_matmul_is_compute_bound_with_2n3_flops(name):
    r = load_ncu_report(_need(name), top=50)
    tensor = [k for k in _kernels(r) if any(x.startswith("tensor_") for x in k.flops_by)]
    assert tensor, "no kernel with tensor-core FLOPs: the export lacks sm__ops_path_tensor_* counters"
    total = sum(v for k in tensor for x, v in k.flops_by.items() if x.startswith("tensor_"))
    # sm__ops_path_tensor_* counted as FLOPs (an MMA multiply-add = 2 ops): 2 n^3 for one n^3 matmul.
    assert total == pytest.approx(2 * MM_N**3, rel=0.03)
    main = max(tensor, key=lambda k: k.flops)
    assert main.regime == "compute" and main.precision == "bf16"
    assert 30.0 <= main.roof_pct <= 105.0


@pytest.mark.parametrize("name", NCU_FILES)
def test_tiny_ops_are_launch_sized(name):
    r = load_ncu_report(_need(name), top=50)
    tiny = [k for k in _kernels(r) if k.mean_time_s is not None and k.mean_time_s < 10e-6]
    assert tiny, "the two 256-element ops should be there"
    assert all(k.regime == "overhead" for k in tiny if k.classifiable)


@pytest.mark.parametrize("name", NCU_FILES)
def test_parsed_figures_match_ncus_own_numbers(name):
    t = read_ncu_csv(_need(name))
    assert len(t.launches) == 5  # two adds, one matmul, two 256-element ops
    rated = 0
    for la in t.launches:
        f = launch_figures(la)
        own_bytes = la.metrics["dram__bytes.sum"][0]
        own_rate = la.metrics["dram__bytes.sum.per_second"][0]
        # read + write against ncu's own total, and bytes / duration against ncu's own rate
        assert f.bytes == pytest.approx(own_bytes, rel=0.01, abs=64 * 1024)
        if own_bytes > 1e6:  # the tiny ops move a few KB in a few us: their rate is rounding noise
            assert f.bytes / f.time_s == pytest.approx(own_rate, rel=0.03)
            rated += 1
    assert rated == 3  # the adds and the matmul


def test_raw_and_details_pages_agree():
    pages = [load_ncu_report(_need(n), top=50) for n in NCU_FILES[1:]]  # details and raw (base units): one report
    a, b = ({k.name: k for k in _kernels(p)} for p in pages)
    assert set(a) == set(b)
    for name in a:
        ka, kb = a[name], b[name]
        assert ka.launches == kb.launches and ka.regime == kb.regime
        for field in ("total_time_s", "bytes", "flops"):
            x, y = getattr(ka, field), getattr(kb, field)
            assert x is not None and y is not None, field
            assert x == pytest.approx(y, rel=0.01, abs=1e-9 if field == "total_time_s" else 1024)


# The counter-permission error (ERR_NVGPUCTRPERM) is tested on a synthetic export in test_ncu_import.py:
# ncu had counter access on the GPU machine, so no real export of it exists.


def test_small_op_loop_trace_is_overhead_bound():
    r = load_trace(_need("trace_overhead.json"))
    assert r.verdict == "overhead-bound"
    d = max(r.devices, key=lambda x: x.kernels)
    assert d.kernels >= 400  # 200 steps of a mul and an add, plus the sums
    assert d.short_kernel_pct > 90
    assert d.linked_kernels > 0.9 * d.kernels  # launches linked by correlation id
    assert r.host_sync_calls >= 10 or d.host_wait_s > 0


def test_matmul_loop_trace_is_gpu_bound():
    r = load_trace(_need("trace_matmul.json"))
    assert r.verdict == "gpu-bound"
    d = max(r.devices, key=lambda x: x.kernel_s)
    assert d.busy_pct > 90
    top = d.top_kernels[0]
    assert top.count == 20
    # The trace was recorded without with_flops: no FLOPs on the kernel, so none are reported.
    assert top.flops is None and top.achieved_tflops is None
    # Its time is a real 8192^3 bf16 matmul: 2 x 8192^3 FLOP in the mean kernel time is below the H200
    # sheet's dense bf16 peak (989.5 TFLOP/s) and above half of it.
    rate = 2 * MM_N**3 / top.mean_s
    assert 0.5 * 989.5e12 < rate < 989.5e12
    assert top.total_s == pytest.approx(top.count * top.mean_s)


def _measure():
    return json.loads(_need("measure.json").read_text())


# gpuwhy.measure's records on the H200 (benchmarks/make_diag_fixtures.py): the recorded FLOPs, bytes and median
# time, classified again here by gpuwhy's code and checked against the arithmetic written out.
#   torch.add 2^28 fp32: 2^28 FLOP (one add per element), 3 x 4 x 2^28 = 3,221,225,472 B (a, b read, out written)
#   torch.matmul 8192^3 bf16: 2 x 8192^3 = 1.0995e12 FLOP, 3 x 8192^2 x 2 B = 402,653,184 B (A, B read, C written)
#   H200 SXM sheet: 4800 GB/s, 67 TFLOP/s fp32, 989.5 TFLOP/s bf16; launch overhead default 5 us


def test_measure_sheet_roof_records_classify_again_to_the_same_figures():
    import gpuwhy

    m = _measure()
    add = m["torch.add 2^28 fp32 [sheet roof]"]["result"]
    wl = add["workload"]
    assert (wl["flops"], wl["bytes"]) == (2**28, 12 * 2**28) and add["bytes_is_lower_bound"]
    v = gpuwhy.classify(flops=wl["flops"], bytes=wl["bytes"], gpu="H200", dtype="fp32", time=wl["time_s"]).verdict
    # t_memory = 3.221e9 / 4.8e12 = 671.09 us; measured 737.47 us: 91.0% of speed of light, 4.368 TB/s
    assert v.regime == "memory" == add["regime"]
    assert v.sol_pct == pytest.approx(100 * (12 * 2**28 / 4.8e12) / wl["time_s"]) == pytest.approx(add["sol_pct"])
    assert round(v.sol_pct, 1) == 91.0
    assert v.achieved_bandwidth / 1e9 == pytest.approx(add["achieved_bandwidth_gbs"]) and round(v.achieved_bandwidth / 1e12, 3) == 4.368
    mm = m[f"torch.matmul {MM_N}^3 bf16 [sheet roof]"]["result"]
    wl = mm["workload"]
    assert (wl["flops"], wl["bytes"]) == (2 * MM_N**3, 3 * MM_N**2 * 2)
    v = gpuwhy.classify(flops=wl["flops"], bytes=wl["bytes"], gpu="H200", dtype="bf16", time=wl["time_s"]).verdict
    # t_compute = 1.0995e12 / 989.5e12 = 1.1112 ms; measured 1.5516 ms: 71.6%, 708.7 TFLOP/s
    assert v.regime == "compute" == mm["regime"]
    assert v.sol_pct == pytest.approx(100 * (2 * MM_N**3 / 989.5e12) / wl["time_s"]) == pytest.approx(mm["sol_pct"])
    assert round(v.sol_pct, 1) == 71.6 and round(v.achieved_flops / 1e12, 1) == 708.7


def test_measure_measured_roof_records_classify_again_on_the_profile_ceilings():
    from gpuwhy.model.roofline.classify import Ceilings, Workload, classify

    m = _measure()
    add = m["torch.add 2^28 fp32 [measured roof]"]["result"]
    # the profile's ceilings: the DRAM sweep's 4596.18 GB/s (95.75% of the sheet's 4800) and a 3.52 us launch
    assert add["memory_bandwidth_gbs"] == pytest.approx(m["bench_sustained_gbs"])
    assert m["bench_sustained_pct_of_spec"] == pytest.approx(100 * m["bench_sustained_gbs"] / 4800)
    c = Ceilings(67e12, add["memory_bandwidth_gbs"] * 1e9, add["launch_overhead_s"], "fp32", "H200 SXM")
    wl = add["workload"]
    v = classify(Workload(wl["flops"], wl["bytes"], time_s=wl["time_s"]), c)
    # 3.221e9 / 4596.18e9 = 700.85 us on the measured roof; measured 736.86 us: 95.1%
    assert v.regime == "memory" and round(v.sol_pct, 1) == 95.1
    assert v.sol_pct == pytest.approx(add["sol_pct"]) and v.predicted_time_s == pytest.approx(add["predicted_time_s"])
    assert add["sol_pct"] >= 85.0  # a memory-bound add reaches most of the measured DRAM roof
