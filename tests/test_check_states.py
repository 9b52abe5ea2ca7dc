"""`gpuwhy check`'s four states (DCGM's pass, warn, fail, skip): the policy says what a miss is,
a software power cap is a warning with its figures, JUnit maps each state, exit 1 only for fail."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import replace

import pytest
from test_check import H200

from gpuwhy.check.observe import power_cap_fields
from gpuwhy.check.policy import (
    FAIL,
    PASS,
    SKIP,
    WARN,
    Policy,
    evaluate,
    junit_xml,
    load_policy,
)
from gpuwhy.errors import UsageError

# The H200's tensor-core run as `bench --compute` recorded it (docs/results/raw/2026-12-01-h200-refactor):
# wgmma bf16 at 1755 of 1980 MHz, 484 W, sw_power_cap set; power limit 700 W (probe.json).
CAPPED = replace(H200, power_capped=("tensor_bf16",), capped_sm_clock_mhz=1755.0, max_sm_clock_mhz=1980.0,
                 capped_power_w=484.0, power_limit_w=700.0)


def _by_name(rep):
    return {c.name: c for c in rep.checks}


def test_power_cap_is_a_warning_with_its_figures_and_exit_0_state():
    rep = evaluate(CAPPED, load_policy())
    c = _by_name(rep)["power_cap"]
    assert c.status == WARN
    assert "tensor_bf16" in c.value_text and "1755 of 1980 MHz" in c.value_text and "484 of 700 W" in c.value_text
    d = c.to_dict()
    assert d["sm_clock_mhz"] == 1755.0 and d["max_sm_clock_mhz"] == 1980.0
    assert d["power_w"] == 484.0 and d["power_limit_w"] == 700.0 and d["capped_measurements"] == ["tensor_bf16"]
    assert not rep.failed and rep.warned and rep.status == WARN
    # clock_events (thermal, hardware slowdowns, power brake) is a separate check and passes
    assert _by_name(rep)["clock_events"].status == PASS


def test_no_power_cap_passes_and_unrecorded_skips():
    assert _by_name(evaluate(replace(H200, power_capped=()), load_policy()))["power_cap"].status == PASS
    c = _by_name(evaluate(H200, load_policy()))["power_cap"]  # older recordings lack the field
    assert c.status == SKIP and c.detail


def test_policy_file_says_which_checks_warn_and_which_fail(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("severity: {power_cap: fail, dram_bandwidth: warn, tensor: warn}\n")
    pol = load_policy(f)
    slow = replace(CAPPED, dram_bandwidth_gbs=3000.0, tensor_tflops=500.0)
    st = {c.name: c.status for c in evaluate(slow, pol).checks}
    assert st["power_cap"] == FAIL and st["dram_bandwidth"] == WARN and st["tensor_bf16"] == WARN
    # the bundled default: a slow DRAM fails, a power cap warns
    st = {c.name: c.status for c in evaluate(slow, load_policy()).checks}
    assert st["dram_bandwidth"] == FAIL and st["power_cap"] == WARN and st["tensor_bf16"] == FAIL
    f.write_text("health: {power_cap: false}\n")
    assert _by_name(evaluate(CAPPED, load_policy(f)))["power_cap"].status == SKIP


def test_bundled_policy_file_states_the_code_defaults():
    loaded, code = load_policy(), Policy()
    assert replace(loaded, source="") == replace(code, source="")
    assert loaded.severity["power_cap"] == WARN and loaded.severity["baseline"] == FAIL
    assert loaded.tolerances == {"dram_bandwidth": 0.05, "flops": 0.05, "launch_overhead": 0.20}


@pytest.mark.parametrize("text, expected", [
    ("severity: {power_cap: maybe}\n", "fail or warn"),
    ("severity: {ecc: warn}\n", "unknown check 'ecc'"),
    ("severity: [power_cap]\n", "mapping"),
])
def test_bad_severity(tmp_path, text, expected):
    f = tmp_path / "bad.yaml"
    f.write_text(text)
    with pytest.raises(UsageError) as exc:
        load_policy(f)
    assert expected in str(exc.value) and "bad.yaml" in str(exc.value)


def test_power_cap_fields_from_the_samples():
    from types import SimpleNamespace as NS

    after = NS(reasons=("sw_power_cap",), sm_clock_mhz=1900, power_w=600.0, max_sm_clock_mhz=1980)
    rows = [("fp32_fma", NS(clock_events=(), sm_clock_mhz=1980.0, power_w=146.0)),
            ("tensor_bf16", NS(clock_events=("sw_power_cap",), sm_clock_mhz=1755.0, power_w=484.0))]
    f = power_cap_fields(after, rows)
    assert f == {"power_capped": ("dram_bandwidth", "tensor_bf16"), "capped_sm_clock_mhz": 1755.0,
                 "capped_power_w": 484.0, "max_sm_clock_mhz": 1980.0}
    none = power_cap_fields(NS(reasons=(), sm_clock_mhz=1980, power_w=90.0, max_sm_clock_mhz=1980), rows[:1])
    assert none["power_capped"] == () and none["capped_sm_clock_mhz"] is None


def test_junit_maps_the_four_states():
    warn_rep = evaluate(CAPPED, load_policy())
    fail_rep = evaluate(replace(CAPPED, uuid="GPU-2", ecc_uncorrected=2, other_processes=None), load_policy())
    root = ET.fromstring(junit_xml([warn_rep, fail_rep]).split("\n", 1)[1])
    s1, s2 = root.findall("testsuite")
    pc = s1.find("testcase[@name='power_cap']")
    # warn: a passed testcase (no failure, no skipped) that says WARNING; its suite names it
    assert pc.find("failure") is None and pc.find("skipped") is None
    assert pc.find("system-out").text.startswith("WARNING:") and "1755" in pc.find("system-out").text
    assert pc.find("properties") is None  # xunit2 has no testcase properties
    assert s1.find("properties/property[@name='gpuwhy.warned']").get("value") == "power_cap"
    assert s1.get("failures") == "0" and s1.find("properties/property[@name='gpuwhy.warnings']").get("value") == "1"
    assert s1.find("properties/property[@name='gpuwhy.status']").get("value") == "warn"
    # fail: a failure; skip: skipped
    assert s2.find("testcase[@name='ecc_uncorrected']/failure") is not None
    assert s2.find("testcase[@name='other_processes']/skipped") is not None
    assert s2.get("failures") == "1" and s2.get("skipped") == "1"
    assert root.get("failures") == "1"


def _recorded(tmp_path, obs):
    f = tmp_path / "obs.json"
    f.write_text(json.dumps([obs.to_dict()]))
    return f


def test_cli_warn_exits_0_fail_exits_1(cli, tmp_path):
    code, out, err = cli("check", "--recorded", str(_recorded(tmp_path, CAPPED)), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["status"] == "warn" and doc["passed"] is True and doc["counts"]["warn"] == 1
    assert doc["devices"][0]["status"] == "warn"
    assert "warning:" in err and "power_cap" in err
    code, out, err = cli("check", "--recorded", str(_recorded(tmp_path, replace(CAPPED, pcie_width=(8, 16)))), "--json")
    assert code == 1
    assert json.loads(out)["status"] == "fail" and "pcie_link" in err


def test_every_check_figure_in_json_is_a_number():
    """`--json` holds numbers with units in the keys; the texts are beside them, named *_text."""
    doc = json.loads(json.dumps(evaluate(CAPPED, load_policy()).to_dict()))
    for c in doc["checks"]:
        for k, v in c.items():
            if k in ("name", "status", "detail") or k.endswith("_text"):
                assert isinstance(v, str)
            elif k in ("capped_measurements", "clock_events"):
                assert isinstance(v, list)
            else:
                assert v is None or isinstance(v, (int, float)), (c["name"], k, v)
    by = {c["name"]: c for c in doc["checks"]}
    assert by["launch_overhead"]["measured_us"] == 2.1 and by["launch_overhead"]["threshold_us"] == 20.0
    assert by["tensor_bf16"]["measured_tflops"] == 900.0 and by["pcie_link"]["pcie_width_lanes"] == 16
