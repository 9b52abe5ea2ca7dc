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

from gpuwhy.errors import UsageError
from gpuwhy.importers.ncu import launch_figures, load_ncu_report, read_ncu_csv
from gpuwhy.importers.torch_trace import load_trace

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
    checked = 0
    for la in t.launches:
        f = launch_figures(la)
        own_bytes = la.metrics.get("dram__bytes.sum", (None, None))[0]
        own_rate = la.metrics.get("dram__bytes.sum.per_second", (None, None))[0]
        if own_bytes is None or f.bytes is None or f.time_s is None:
            continue
        # read + write against ncu's own total, and bytes / duration against ncu's own rate
        assert f.bytes == pytest.approx(own_bytes, rel=0.01, abs=64 * 1024)
        if own_rate and own_bytes > 1e6:
            assert f.bytes / f.time_s == pytest.approx(own_rate, rel=0.03)
        checked += 1
    if checked == 0:
        pytest.skip("the export has no dram__bytes.sum column to compare against")


def test_raw_and_details_pages_agree():
    pages = [load_ncu_report(_need(n), top=50) for n in NCU_FILES[1:]]  # details and raw (base units): one report
    a, b = ({k.name: k for k in _kernels(p)} for p in pages)
    assert set(a) == set(b)
    for name in a:
        ka, kb = a[name], b[name]
        assert ka.launches == kb.launches and ka.regime == kb.regime
        for field in ("total_time_s", "bytes", "flops"):
            x, y = getattr(ka, field), getattr(kb, field)
            if x is not None and y is not None:
                assert x == pytest.approx(y, rel=0.01, abs=1e-9 if field == "total_time_s" else 1024)


def test_permission_error_export():
    p = REAL / "ncu_permission_error.csv"
    if not (REAL / "manifest.json").exists():
        pytest.skip("real fixtures not made yet")
    if not p.exists():
        pytest.skip("ncu had counter access on the GPU machine: no permission-error export")
    with pytest.raises(UsageError, match="ERR_NVGPUCTRPERM"):
        read_ncu_csv(p)


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
    assert top.count >= 20
    if top.flops is not None:  # with_flops=True: aten::mm's FLOPs on its kernel
        assert top.flops / top.count == pytest.approx(2 * MM_N**3, rel=0.01)
        assert 100 < top.achieved_tflops < 989.5  # below the H200 sheet's dense bf16 peak


def _measure():
    return json.loads(_need("measure.json").read_text())


def test_measure_add_is_memory_bound_at_85pct_of_the_measured_roof():
    m = _measure()
    key = "torch.add 2^28 fp32 [measured roof]"
    got = m.get(key, {})
    if "error" in got or not got:
        pytest.skip(f"no measured-roof result ({got.get('error', 'missing')}); the sheet-roof result is checked below")
    assert got["regime"] == "memory"
    assert got["sol_pct"] >= 85.0


def test_measure_sheet_roof_verdicts():
    m = _measure()
    add = m["torch.add 2^28 fp32 [sheet roof]"]
    mm = m[f"torch.matmul {MM_N}^3 bf16 [sheet roof]"]
    assert add["regime"] == "memory"
    assert add["result"]["workload"]["flops"] == 1 << 28 and add["result"]["bytes_is_lower_bound"]
    assert mm["regime"] == "compute"
    assert mm["result"]["workload"]["flops"] == 2 * MM_N**3
