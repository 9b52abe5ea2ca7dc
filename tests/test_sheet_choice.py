"""The one "which sheet is this GPU?" answer: NVML name and PCI device id together."""

from __future__ import annotations

import json

import pytest

from test_probe_nvml import machine  # noqa: F401  (the fake-NVML machine fixture)
from gpuwhy.device.sheet import sheet_for
from gpuwhy.errors import UsageError


def test_pci_id_of_another_sheet_wins_and_the_conflict_is_stated():
    # NVML says "NVIDIA H200" (the H200 SXM sheet's NVML name) but the PCI id is the NVL's.
    c = sheet_for(nvml_name="NVIDIA H200", pci_device_id="0x233B")
    assert c.sheet.name == "H200 NVL"
    assert c.rule == "pci_id"
    assert c.conflict is not None and "0x233b" in c.conflict and "H200 SXM" in c.conflict and "H200 NVL" in c.conflict
    assert c.conflict in c.note


def test_name_and_pci_id_agree():
    c = sheet_for(nvml_name="NVIDIA H200", pci_device_id="0x2335")
    assert (c.sheet.name, c.rule, c.conflict) == ("H200 SXM", "nvml_name+pci_id", None)


def test_name_alone_and_pci_id_alone():
    assert sheet_for(nvml_name="NVIDIA H200").rule == "nvml_name"
    c = sheet_for(nvml_name="NVIDIA H100 Engineering Sample", pci_device_id="0x2321")
    assert c.sheet.name == "H100 NVL" and c.rule == "pci_id" and c.conflict is None
    # An id no sheet lists leaves the name to decide.
    assert sheet_for(nvml_name="NVIDIA H200", pci_device_id="0xffff").sheet.name == "H200 SXM"


def test_given_name_decides_and_unknown_is_usage_error():
    c = sheet_for("H200 NVL", nvml_name="NVIDIA H200", pci_device_id="0x2335")
    assert c.sheet.name == "H200 NVL" and c.rule == "given"
    with pytest.raises(UsageError, match="unknown GPU \'no such gpu\'"):
        sheet_for("no such gpu")


def test_no_match_is_none_with_closest_never_a_guess():
    c = sheet_for(nvml_name="NVIDIA H200 Mystery Edition")
    assert c.sheet is None and c.rule == "none" and c.closest
    assert sheet_for(nvml_name="Mystery GPU", fuzzy=True).sheet is None
    assert sheet_for(nvml_name="NVIDIA H100 SXM", fuzzy=True).rule == "name"


def test_probe_says_which_rule_decided(machine, cli):
    # A fake H200 whose NVML name is the SXM sheet's and whose PCI id is the NVL's.
    machine.fixture("h200", nvml_extra={"pci_device_id": "0x233b10de"})
    code, out, err = cli("probe", "--json")
    assert code == 0, err
    sheet = json.loads(out)["devices"][0]["sheet"]
    assert sheet["name"] == "H200 NVL" and sheet["rule"] == "pci_id" and "PCI id decides" in sheet["conflict"]
    code, out, err = cli("probe")
    # the words as a reader sees them: the panel's box characters out, its lines joined (where the words wrap
    # depends on how long the sheet's path is, so on where the checkout lies)
    words = " ".join(w for w in out.translate({ord(c): " " for c in "│┃║╭╮╰╯─━═┌┐└┘"}).split())
    assert code == 0 and "PCI id decides" in words


def test_api_asks_for_a_gpu_name_instead_of_guessing():
    import gpuwhy

    for bad in (None, "", "  "):
        with pytest.raises(UsageError, match="GPU name"):
            gpuwhy.load_spec(bad)
        with pytest.raises(UsageError, match="needs a GPU"):
            gpuwhy.classify(flops=1e12, bytes=1e9, gpu=bad)
    # One folder given as a string is one folder, not one per character.
    with pytest.raises(UsageError, match="'/no/such/folder'"):
        gpuwhy.load_spec("H200", spec_dirs="/no/such/folder")
