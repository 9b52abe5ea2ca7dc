"""`classify` asks the verdict engine too: a workload with a measured time gets the same budget and remedies
(with their "at most") the engine gives a trace, `run` or an ncu pass; the figures worked by hand."""

from __future__ import annotations

import json

import pytest

from gpuwhy.api.classify import classify_values


def test_an_fp32_gemm_gets_the_engines_budget_and_the_lower_precision_ceiling():
    # 1.1e12 FLOP in 60 ms on an H100 SXM in fp32: compute-bound at 1.1e12 / 0.06 / 67e12 = 27.4% of the roof.
    # In bf16 or fp16 on tensor cores (989.5 TFLOP/s dense, the sheet) it takes at least 1.1e12 / 989.5e12 s:
    # the fix removes 60 ms less that, at most 0.06 / (1.1e12 / 989.5e12) = 53.97x.
    c = classify_values(flops=1.1e12, bytes_=805306368, time=0.06, gpu="H100 SXM", dtype="fp32")
    d = c.diagnosis
    assert d is not None and d.top.cause.value == "compute_bound" and d.window_s == pytest.approx(0.06)
    assert d.scope == "the workload's measured time" and not d.idle_known
    lp = d.remedy("lower_precision")
    assert lp.ceiling_x == pytest.approx(0.06 / (1.1e12 / 989.5e12), rel=1e-9)
    fk = d.remedy("faster_kernels")  # to the fp32 roof: 60 ms at 27.4% -> 16.4 ms
    assert fk.ceiling_x == pytest.approx(100.0 / c.verdict.sol_pct, rel=1e-9)
    assert d.remedy("fuse") is None  # one launch is no chain
    doc = c.to_dict()["diagnosis"]
    assert doc["top_cause"] == "compute_bound" and doc["idle_s"] is None
    json.dumps(doc, allow_nan=False)


def test_a_memory_bound_workload_and_one_without_a_time():
    # 8 GB in 3 ms = 2,667 GB/s on a 3,350 GB/s roof: 79.6% -> at most 1/0.796 = 1.256x from reaching the roof.
    c = classify_values(flops=1e9, bytes_=8e9, time=3e-3, gpu="H100 SXM")
    d = c.diagnosis
    assert d.top.cause.value == "memory_bound" and d.top.level == "DRAM"
    assert d.remedy("faster_kernels").ceiling_x == pytest.approx(3350e9 / (8e9 / 3e-3), rel=1e-6)
    assert d.remedy("lower_precision") is None  # not compute-bound
    # no measured time: a predicted regime, nothing to budget
    assert classify_values(flops=1e9, bytes_=8e9, gpu="H100 SXM").diagnosis is None


def test_cli_json_carries_the_diagnosis_and_validates(cli):
    code, out, err = cli("classify", "--json", "--flops", "1.1e12", "--bytes", "768MiB", "--time", "60ms",
                         "--gpu", "H100 SXM")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["diagnosis"]["remedies"][0]["key"] == "lower_precision"
    from test_schema import check_document

    check_document(doc)


def test_workload_figure_by_hand():
    from types import SimpleNamespace as NS

    from gpuwhy.verdict.workload import workload_figure

    def verdict(regime, time_s, launches=1, sol=50.0):
        return NS(workload=NS(time_s=time_s, launches=launches, flops=2e9), regime=regime, sol_pct=sol)

    f = workload_figure(verdict("memory", 4e-3, launches=10), name="w", precision="bf16", level="L2")
    assert (f.total_s, f.launches, f.mean_s, f.level, f.regime, f.roof_pct) == (4e-3, 10, 4e-4, "L2", "memory", 50.0)
    assert (f.flops, f.precision, f.name) == (2e9, "bf16", "w")
    one = workload_figure(verdict("compute", 1e-3), name="w", precision="fp32", level="DRAM")
    assert (one.launches, one.mean_s, one.level) == (1, 1e-3, "compute")  # the compute roof decides
    assert workload_figure(verdict("latency", 1e-3), name="w", precision="fp32", level="DRAM").level is None
    assert workload_figure(verdict("memory", 0.0), name="w", precision="fp32", level="DRAM") is None
    assert workload_figure(verdict("memory", None), name="w", precision="fp32", level="DRAM") is None
