"""`gpuwhy check --junit` files fit the JUnit schema pytest checks its own xunit2 output against
(tests/fixtures/junit/junit-10.xsd, see SOURCE.md there), in every state, and each suite says which
machine measured and when (``hostname``, ``timestamp``)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest
from test_check import H200
from test_check_states import CAPPED

from gpuwhy.check.policy import evaluate, junit_xml, load_policy

XSD = Path(__file__).resolve().parent / "fixtures" / "junit" / "junit-10.xsd"
xmlschema = pytest.importorskip("xmlschema")  # the `test` extra installs it


@pytest.fixture(scope="module")
def schema():
    return xmlschema.XMLSchema(str(XSD))


def _reports():
    policy = load_policy()
    return [
        evaluate(H200, policy),  # every check passes
        evaluate(CAPPED, policy),  # a warning (the software power cap)
        evaluate(replace(CAPPED, uuid="GPU-2", ecc_uncorrected=2, other_processes=None), policy),  # a failure and a skip
    ]


def test_every_state_fits_the_schema(schema):
    xml = junit_xml(_reports(), host="node-17", timestamp="2026-12-07T02:38:22+00:00")
    schema.validate(xml)
    root = ET.fromstring(xml.split("\n", 1)[1])
    suites = root.findall("testsuite")
    assert len(suites) == 3
    for s in suites:
        assert s.get("hostname") == "node-17" and s.get("timestamp") == "2026-12-07T02:38:22+00:00"
        assert s.get("errors") == "0"
    assert suites[1].find("properties/property[@name='gpuwhy.warned']").get("value") == "power_cap"


def test_nothing_checked_fits_the_schema(schema):
    nothing = replace(H200, **{k: None for k in ("dram_bandwidth_gbs", "fp32_tflops", "tensor_tflops", "launch_overhead_us",
                                                 "ecc_uncorrected", "remapped_rows_pending", "retired_pages_pending",
                                                 "clock_events", "pcie_gen", "pcie_width", "other_processes",
                                                 "driver_cuda_version", "nvrtc_version")})
    rep = evaluate(nothing, load_policy())
    assert rep.nothing_checked
    xml = junit_xml([rep])  # no host, no date: the attributes are left out
    schema.validate(xml)
    assert 'name="nothing_checked"' in xml and "hostname" not in xml and "timestamp" not in xml


def test_a_file_written_by_the_command(schema, cli, tmp_path):
    out = tmp_path / "check.xml"
    code, _, err = cli("check", "--example", "h100-check", "--junit", str(out))
    assert code == 0, err
    schema.validate(str(out))
    suite = ET.parse(out).getroot().find("testsuite")
    assert suite.get("hostname") == "vm" and suite.get("timestamp") == "2026-12-07T02:38:22+00:00"  # the recorded run's


def test_the_schema_is_strict_enough_to_catch_the_old_file(schema):
    """The file gpuwhy wrote before: no ``errors`` on the suites, ``skipped`` on the root, properties in a testcase."""
    old = ('<testsuites name="gpuwhy check" tests="1" failures="0" skipped="0">'
           '<testsuite name="s" tests="1" failures="0" skipped="0" time="1.000"><testcase classname="c" name="x">'
           '<properties><property name="gpuwhy.status" value="warn"/></properties></testcase></testsuite></testsuites>')
    assert not schema.is_valid(old)
