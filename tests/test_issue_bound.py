"""gpuwhy.model.roofline.issue_bound: the SM, not memory, limits a kernel the FLOP roofline puts on the
memory side (no GPU). The figures are those of the H200 exports in tests/fixtures/real/."""

from __future__ import annotations

import pytest

from gpuwhy.importers.ncu.sol import NcuSol
from gpuwhy.model.roofline import issue_bound as ib
from gpuwhy.model.roofline.issue_bound import issue_diagnosis, refine_regime

#: cunn_SoftMaxForwardReg, --set full (ncu_full_raw.csv)
SOFTMAX = {"sm": 73.6, "pipe": 32.3, "issue": 73.6, "memory": 37.7, "dram": 37.7, "l2": 49.3, "l1": 27.7}
#: vectorized_elementwise_kernel<GeluCUDAKernelImpl>, same export
GELU = {"sm": 63.0, "pipe": 51.0, "issue": 63.0, "memory": 83.7, "dram": 83.7, "l2": 90.8, "l1": 39.9}


def test_softmax_counters_give_issue_bound():
    d = issue_diagnosis("memory", 0.378, SOFTMAX, busiest_pipe="alu", level_fractions={"DRAM": 0.378, "L1": 0.078})
    assert d is not None and d.side == "memory" and d.roof == "DRAM"
    assert d.sm_pct == 73.6 and d.memory_unit == "L2" and d.memory_pct == 49.3
    assert "ncu's SM throughput is 74%" in d.reason and "busiest pipe alu at 32%" in d.reason
    assert "an instruction issued on 74% of cycles" in d.reason and "38% of the DRAM roof" in d.reason
    assert "no arithmetic pipe is near its peak" in d.reason and "not in the FLOP count" in d.reason
    doc = d.to_dict()
    assert doc["variant"] == "sm" and doc["roof_pct"] == pytest.approx(37.8)
    assert doc["thresholds"] == {"busy_pct": 60.0, "margin_pct": 10.0, "memory_roof_below_pct": 60.0,
                                 "compute_roof_below_pct": 40.0}


def test_a_memory_bound_kernel_is_not_issue_bound():
    assert issue_diagnosis("memory", 0.839, GELU, busiest_pipe="alu") is None  # near its roof
    assert issue_diagnosis("memory", 0.30, GELU, busiest_pipe="alu") is None  # the L2 (91%) is busier than the SM


@pytest.mark.parametrize("sm, expect", [(59.9, False), (60.0, True)])
def test_the_sm_must_be_busy(sm, expect):
    util = {"sm": sm, "memory": 20.0}
    assert (issue_diagnosis("memory", 0.2, util) is not None) is expect


@pytest.mark.parametrize("l2, expect", [(50.0, True), (50.1, False)])
def test_the_sm_must_be_clearly_busier_than_every_memory_unit(l2, expect):
    util = {"sm": 60.0, "dram": 20.0, "l2": l2}
    assert (issue_diagnosis("memory", 0.2, util) is not None) is expect


@pytest.mark.parametrize("frac, expect", [(0.59, True), (0.60, False)])
def test_memory_must_be_well_below_its_roof(frac, expect):
    assert (issue_diagnosis("memory", frac, {"sm": 90.0}) is not None) is expect


def test_a_level_near_its_roof_is_a_memory_figure():
    # DRAM low, but the L1 bytes reach 70% of the L1 roof: within 10 points of the SM's 75%
    assert issue_diagnosis("memory", 0.2, {"sm": 75.0}, level_fractions={"L1": 0.70}) is None
    assert issue_diagnosis("memory", 0.2, {"sm": 75.0}, level_fractions={"L1": 0.50}) is not None


def test_compute_side_far_below_the_flop_roof():
    rng = {"sm": 73.3, "pipe": 55.7, "memory": 15.5, "dram": 4.0, "l2": 17.6, "l1": 9.5}  # torch.randn's Philox
    d = issue_diagnosis("compute", 0.136, rng, busiest_pipe="alu", roof="fp32")
    assert d is not None and d.side == "compute" and "only 14% of the fp32 roof" in d.reason
    assert issue_diagnosis("compute", 0.40, rng) is None  # at the tensor-core issue threshold
    assert issue_diagnosis("compute", 0.136, rng, tensor=True) is None  # tensor cores: hierarchy's own case
    assert issue_diagnosis("compute", 0.136, {"sm": 80.0}) is None  # no memory figure: cannot say memory is idle


def test_without_an_sm_figure_nothing_is_said():
    assert issue_diagnosis("memory", 0.2, {"memory": 20.0, "dram": 20.0}) is None
    assert ib.sm_utilisation({"pipe": 61.0}) == 61.0 and ib.sm_utilisation({}) is None


def test_from_utilisations_the_reason_does_not_blame_flop_counters():
    d = issue_diagnosis("memory", 0.373, {"sm": 73.7, "pipe": 33.0, "memory": 37.3, "dram": 37.3}, busiest_pipe="alu",
                        flops_counted=False)
    assert d is not None and "FLOP count" not in d.reason


def test_bad_arguments():
    with pytest.raises(ValueError, match="side"):
        issue_diagnosis("disk", 0.2, {})
    with pytest.raises(ValueError, match="roof_fraction"):
        issue_diagnosis("memory", -0.1, {})


def test_refine_regime():
    assert refine_regime("memory", 0.378, SOFTMAX, busiest_pipe="alu").regime == "issue"
    assert refine_regime("latency", 0.378, SOFTMAX, busiest_pipe="alu").regime == "issue"
    assert refine_regime("overhead", 0.001, SOFTMAX).regime == "overhead"
    assert refine_regime("issue", 0.2, SOFTMAX).regime == "issue"
    assert refine_regime("memory", None, SOFTMAX).regime == "memory"
    assert refine_regime("compute", 0.75, {"sm": 84.4, "pipe": 75.7, "memory": 46.0}).regime == "compute"  # sgemm
    # latency needs an idle SM: unknown -> memory with a note; busy but not clearly -> memory; idle -> latency
    r = refine_regime("latency", 0.3, {})
    assert r.regime == "memory" and "cannot be told apart" in r.notes[0]
    r = refine_regime("latency", 0.3, {"sm": 65.0, "l2": 60.0})
    assert r.regime == "memory" and "not latency-bound" in r.notes[0]
    assert refine_regime("latency", 0.3, {"sm": 30.0, "dram": 30.0}).regime == "latency"
    r = refine_regime("latency", 0.1, {"sm": 45.0, "dram": 10.0, "l2": 82.0})  # a busy L2 is the limit itself
    assert r.regime == "memory" and "L2 is 82% busy" in r.notes[0]


def test_ncu_agreement_for_the_new_regimes():
    soft = NcuSol(73.6, 37.7)
    assert soft.agrees("issue") and not soft.agrees("memory")
    assert NcuSol(20.0, 30.0).agrees("latency") and NcuSol(25.0, 20.0).agrees("latency")  # ncu: "latency issues"
    assert not NcuSol(75.0, 65.0).agrees("latency")


def test_issue_sm_remedies_block():
    from gpuwhy.model.roofline.remedies import load_remedies, regime_block

    block = regime_block("issue_sm", load_remedies())
    assert any("Fewer instructions per element" in (h if isinstance(h, str) else h["text"]) for h in block["helps"])
    assert any("DRAM and L2 are not the limit" in x for x in block["does_not_help"])


def test_a_replacement_remedies_file_without_issue_sm_falls_back(tmp_path, monkeypatch):
    from gpuwhy.model.roofline.remedies import load_remedies, regime_block, remedies_path
    from gpuwhy.specs import load_yaml

    import yaml

    data = load_yaml(remedies_path())
    del data["regimes"]["issue_sm"]
    p = tmp_path / "remedies.yaml"
    p.write_text(yaml.safe_dump(data))
    mine = load_remedies(p)
    assert "issue_sm" not in mine["regimes"]
    assert regime_block("issue_sm", mine)["helps"]  # the bundled block
