"""`gpuwhy ncu` asks the verdict engine too: the kernels' time split by regime, each fix with its
Amdahl ceiling over the kernel time (ncu records no idle time), worked here by hand from the
export's own per-kernel figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuwhy.importers.ncu import load_ncu_report
from gpuwhy.importers.ncu.diagnosis import SCOPE, diagnose_kernels, kernel_figure
from gpuwhy.verdict.causes import Cause

FIX = Path(__file__).parent / "fixtures" / "ncu"


@pytest.fixture(scope="module")
def basic():
    return load_ncu_report(FIX / "raw_basic.csv").devices[0]


def test_the_budget_is_the_kernel_time_by_regime(basic):
    d = basic.diagnosis
    total = sum(k.total_time_s for k in basic.kernels)
    assert d.window_s == pytest.approx(total) and d.idle_s == pytest.approx(0.0)
    mem = sum(k.total_time_s for k in basic.kernels if k.regime == "memory")
    assert d.top.cause is Cause.MEMORY_BOUND and d.top.level == "DRAM"
    assert d.top.seconds == pytest.approx(mem)
    assert d.verdict == "memory-bound"
    assert f"{100 * mem / total:.0f}% of {SCOPE}" in d.line


def test_faster_kernels_removes_each_kernels_distance_to_its_roof(basic):
    d = basic.diagnosis
    removed = sum(k.total_time_s * (1 - k.roof_pct / 100) for k in basic.kernels
                  if k.regime in ("compute", "memory") and k.roof_pct is not None)
    r = d.remedy("faster_kernels")
    assert r.removed_s == pytest.approx(removed)
    assert r.ceiling_x == pytest.approx(d.judged_s / (d.judged_s - removed))


def test_lower_precision_only_for_compute_bound_kernels(basic):
    r = basic.diagnosis.remedy("lower_precision")
    assert r is not None and {c for c, _ in r.removes} == {Cause.COMPUTE_BOUND}
    gemm = next(k for k in basic.kernels if k.regime == "compute")
    assert r.removed_s < gemm.total_time_s


def test_a_kernel_without_time_is_left_out_and_no_time_is_no_diagnosis(basic):
    import dataclasses

    k = dataclasses.replace(basic.kernels[0], total_time_s=None)
    assert kernel_figure(k) is None
    assert diagnose_kernels([k], peaks={}) is None


def test_the_command_prints_the_engines_line_and_json_holds_it(capsys):
    from gpuwhy.cli.app import main

    assert main(["ncu", str(FIX / "raw_basic.csv"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    diag = doc["devices"][0]["diagnosis"]
    assert diag["top_cause"] == "memory_bound" and diag["remedies"]
    assert main(["ncu", str(FIX / "raw_basic.csv")]) == 0
    assert "what the kernels wait for: memory-bound" in capsys.readouterr().out
