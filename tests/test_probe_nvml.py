"""`gpuwhy probe` against fake NVML / CUDA driver / NVRTC modules (no GPU needed).

The fakes are injected through ``sys.modules`` (``pynvml``, ``cuda.bindings.driver``,
``cuda.bindings.nvrtc``), which is where gpuwhy's device layer imports them from.
Device values come from recorded fixtures in tests/fixtures/probe/*.json; values
a test invents to simulate a state (throttling, MIG, busy GPU) are set in the test.
"""

from __future__ import annotations

import json
import os
import sys

import pytest

from gpuwhy.device import probe as probe_mod
from gpuwhy.na import is_na
from gpuwhy.errors import NoDeviceError, UsageError

from fakes import (  # the fake NVML, CUDA driver and NVRTC (shared with the other device tests)
    DRIVER_NOT_LOADED, CUresult, Machine, load_fixture, make_driver, make_pynvml,
)


@pytest.fixture
def machine(monkeypatch, tmp_path):
    return Machine(monkeypatch, tmp_path)


# Health values a test adds to a recorded device to exercise the health section.
HEALTHY = {
    "temperature_c": 34,
    "power_mw": 74000,
    "clock_event_reasons": 0x1,
    "ecc_volatile_uncorrected": 0,
    "remapped_rows": [0, 0, 0, 0],
    "persistence_mode": 1,
    "compute_mode": 0,
    "pcie_gen_gpu_max": 5,
    "utilization_gpu": 0,
    "processes": [],
    "clock_sm": 345,
    "clock_mem": 3201,
    "memory_free": 150000000000,
}


# ---------------------------------------------------------------------------------
# Recorded devices
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["h200", "a100-sxm4-40gb", "rtx4090", "rtx5090"])
def test_recorded_devices_derive_and_match(machine, name):
    fx = machine.fixture(name)
    exp = fx["expected"]
    rep = probe_mod.probe_devices()
    assert len(rep.devices) == 1
    d = rep.devices[0]
    assert d.identity.name == fx["nvml"]["name"]
    assert d.identity.compute_capability == exp["compute_capability"]
    assert d.identity.architecture == exp["architecture"]
    assert d.shape.fp32_lanes_per_sm == exp["fp32_lanes_per_sm"]
    assert d.shape.memory_type == exp["memory_type"]
    assert d.derived.data_rate_factor == exp["data_rate_factor"]
    assert d.derived.dram_bandwidth_gbs == pytest.approx(exp["dram_bandwidth_gbs"], rel=1e-9)
    assert d.derived.fp32_tflops == pytest.approx(exp["fp32_tflops"], rel=1e-9)
    assert d.sheet.matched and d.sheet.sheet.name == exp["sheet"]
    assert d.derived.comparisons and all(c.ok for c in d.derived.comparisons), [c.message for c in d.derived.comparisons]
    assert not [w for w in d.warnings if "sheet" in w], d.warnings


def test_h200_recorded_values_in_full(machine):
    fx = machine.fixture("h200", nvml_extra=HEALTHY)
    d = probe_mod.probe_devices().devices[0]
    s, h, i = d.shape, d.health, d.identity
    assert i.pci_device_id == "0x2335" and i.uuid == fx["nvml"]["uuid"]
    assert i.sources["name"] == "NVML"
    assert (s.sm_count, s.cuda_cores, s.max_threads_per_sm, s.shared_mem_per_sm_bytes) == (132, 16896, 2048, 233472)
    assert (s.l2_bytes, s.memory_total_bytes, s.memory_bus_width_bits) == (62914560, 150754820096, 6016)
    assert (s.sm_clock_max_mhz, s.memory_clock_mhz) == (1980, 3201)
    # No customer-boost reading in the record: the boost clock falls to the next source.
    assert s.boost_clock_mhz == 1980 and s.sources["boost_clock_mhz"] == "NVML max SM clock"
    assert (h.pcie_gen_current, h.pcie_width_current, h.pcie_gen_max, h.pcie_width_max) == (5, 16, 5, 16)
    assert h.power_limit_w == 700.0 and h.power_draw_w == 74.0
    assert h.ecc_enabled is True and h.ecc_volatile_uncorrected == 0
    assert h.mig_mode is False and h.mig_instances == ()
    assert h.clock_event_reasons == ("idle",)
    assert h.processes == ()
    assert d.warnings == ()
    sw = probe_mod.probe_devices().software
    assert sw.driver_version == "580.159.04"
    assert sw.cuda_driver_version == 13000 and sw.cuda_driver_version_text == "13.0"
    assert sw.nvrtc_version == "13.0" and sw.warnings == ()
    assert sw.wsl2 is False and is_na(sw.perf_counters)


def test_a100_falls_back_to_the_cuda_driver(machine):
    machine.fixture("a100-sxm4-40gb")
    d = probe_mod.probe_devices().devices[0]
    src = d.shape.sources
    assert src["sm_count"] == "CUDA driver"
    assert src["memory_clock_mhz"] == "CUDA driver" and d.shape.memory_clock_mhz == 1215
    assert src["memory_bus_width_bits"] == "CUDA driver"
    assert src["boost_clock_mhz"] == "CUDA driver clock rate" and d.shape.boost_clock_mhz == 1410
    assert is_na(d.shape.cuda_cores) and "not supported" in d.shape.cuda_cores.reason
    assert d.identity.sources["compute_capability"] == "CUDA driver"


# ---------------------------------------------------------------------------------
# Odd NVML answers
# ---------------------------------------------------------------------------------


def test_not_supported_everywhere_is_na_never_zero(machine):
    fx = load_fixture("h200")
    machine.nvml(make_pynvml([{"name": "NVIDIA H200", "uuid": fx["nvml"]["uuid"]}], {}))
    machine.driver(make_driver([{"name": "NVIDIA H200", "uuid": fx["cuda"]["uuid"], "pci_bus_id": "0000:19:00.0", "cc": [9, 0], "total_memory_bytes": 150754820096}]))
    rep = probe_mod.probe_devices()
    d = rep.devices[0]
    for obj in (d.shape, d.health):
        for f, v in vars(obj).items():
            assert v != 0 or isinstance(v, bool), f"{f} reads 0"
    assert is_na(d.shape.sm_count) and is_na(d.derived.fp32_tflops) and is_na(d.derived.dram_bandwidth_gbs)
    assert "not supported" in d.health.temperature_c.reason
    assert is_na(rep.software.driver_version)
    doc = rep.to_dict()
    health = doc["devices"][0]["health"]
    assert health["temperature_c"] is None and "not supported" in health["n/a"]["temperature_c"]
    json.dumps(doc, allow_nan=False)


def test_bytes_names_and_undecodable_bytes(machine):
    fx = load_fixture("h200")
    nv = {**fx["nvml"], "name": b"NVIDIA H200\x00\x00\x00", "pci_bus_id": b"00000000:19:00.0"}
    machine.nvml(make_pynvml([nv], fx["nvml_system"]))
    machine.driver(make_driver([fx["cuda"]]))
    d = probe_mod.probe_devices().devices[0]
    assert d.identity.name == "NVIDIA H200" and d.sheet.sheet.name == "H200 SXM"
    assert d.identity.pci_bus_id == "00000000:19:00.0"

    nv = {**fx["nvml"], "name": b"\xff\xfeNVIDIA\x80"}
    machine.nvml(make_pynvml([nv], fx["nvml_system"]))
    d = probe_mod.probe_devices().devices[0]
    assert d.identity.name == "NVIDIA H200" and d.identity.sources["name"] == "CUDA driver"
    # With no driver either, the name is n/a with its reason, never the undecoded bytes with
    # source "NVML" (issue 31; issue 19 showed them escaped), a warning says so, and the PCI
    # device id still picks the sheet.
    machine.no_driver_library()
    d = probe_mod.probe_devices().devices[0]
    assert d.identity.name.kind == "undecodable" and d.identity.sources["name"] == "n/a"
    assert "bytes b'\\xff\\xfeNVIDIA' at 0 are not UTF-8" in d.identity.name.reason
    assert d.sheet.sheet.name == "H200 SXM" and d.sheet.rule == "pci_id"
    assert any("the name the driver reports is unreadable" in w and "PCI device id picked the sheet" in w
               for w in d.warnings)
    ident = d.identity.to_dict()
    assert ident["name"] is None and "not UTF-8" in ident["n/a"]["name"] and ident["sources"]["name"] == "n/a"


def test_unicode_error_raised_inside_pynvml_is_na(machine):
    fx = machine.fixture("h200")
    mod = sys.modules["pynvml"]

    def boom(h):
        raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")

    mod.nvmlDeviceGetName = boom
    d = probe_mod.probe_devices().devices[0]
    assert d.identity.name == fx["cuda"]["name"] and d.identity.sources["name"] == "CUDA driver"


def test_zero_clocks_are_na_and_fall_back(machine):
    machine.fixture("h200", nvml_extra={"max_clock_mem": 0, "max_clock_sm": 0}, cuda_extra={"memory_clock_khz": 3201000})
    d = probe_mod.probe_devices().devices[0]
    assert d.shape.memory_clock_mhz == 3201 and d.shape.sources["memory_clock_mhz"] == "CUDA driver"
    assert is_na(d.shape.sm_clock_max_mhz) and "reads 0" in d.shape.sm_clock_max_mhz.reason
    assert is_na(d.shape.boost_clock_mhz) and "reads 0" in d.shape.boost_clock_mhz.reason
    assert is_na(d.derived.fp32_tflops) and "boost clock" in d.derived.fp32_tflops.reason


def test_old_pynvml_without_a_function(machine):
    fx = load_fixture("h200")
    machine.nvml(make_pynvml([fx["nvml"]], fx["nvml_system"], absent=("nvmlDeviceGetNumGpuCores", "nvmlDeviceGetMemoryBusWidth")))
    machine.driver(make_driver([{**fx["cuda"], "bus_width_bits": 6016}]))
    d = probe_mod.probe_devices().devices[0]
    assert is_na(d.shape.cuda_cores) and "has no nvmlDeviceGetNumGpuCores" in d.shape.cuda_cores.reason
    assert d.shape.memory_bus_width_bits == 6016 and d.shape.sources["memory_bus_width_bits"] == "CUDA driver"


def test_nvml_missing_but_driver_present(machine):
    machine.no_nvml_library()
    fx = load_fixture("rtx4090")
    machine.driver(make_driver([fx["cuda"]]))
    rep = probe_mod.probe_devices()
    d = rep.devices[0]
    assert d.identity.name == "NVIDIA GeForce RTX 4090" and d.sheet.sheet.name == "GeForce RTX 4090"
    assert d.derived.dram_bandwidth_gbs == pytest.approx(1008.096)
    assert is_na(d.health.temperature_c) and "libnvidia-ml.so.1" in d.health.temperature_c.reason
    assert any("NVML unavailable" in n for n in rep.notes)
    assert rep.software.nvml.startswith("unavailable")


# ---------------------------------------------------------------------------------
# Several devices, CUDA_VISIBLE_DEVICES and UUID matching
# ---------------------------------------------------------------------------------


def _two_gpu_machine(machine, cuda_order):
    a, h = load_fixture("a100-sxm4-40gb"), load_fixture("h200")
    machine.nvml(make_pynvml([a["nvml"], h["nvml"]], h["nvml_system"]))
    by = {"a100": a["cuda"], "h200": h["cuda"]}
    machine.driver(make_driver([by[k] for k in cuda_order]))
    return a, h


def test_cuda_ordinals_map_to_nvml_by_uuid(machine):
    _two_gpu_machine(machine, ["h200", "a100"])  # CUDA's order differs from NVML's
    rep = probe_mod.probe_devices()
    names = [(d.identity.cuda_ordinal, d.identity.nvml_index, d.identity.name) for d in rep.devices]
    # listed in nvidia-smi's order, each with the CUDA ordinal the driver gave it
    assert names == [(1, 0, "NVIDIA A100-SXM4-40GB"), (0, 1, "NVIDIA H200")]
    assert rep.devices[1].shape.cuda_cores == 16896  # NVML data of the right device


def test_driver_applied_cvd_one_device(machine, monkeypatch):
    _two_gpu_machine(machine, ["h200"])  # what the driver shows with CUDA_VISIBLE_DEVICES=1
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    rep = probe_mod.probe_devices()
    assert [d.identity.name for d in rep.devices] == ["NVIDIA H200"]
    assert rep.devices[0].identity.cuda_ordinal == 0 and rep.devices[0].identity.nvml_index == 1
    assert rep.cuda_visible_devices == "1"


@pytest.mark.parametrize(
    "cvd, expect",
    [
        ("1", ["NVIDIA H200"]),
        ("1,0", ["NVIDIA A100-SXM4-40GB", "NVIDIA H200"]),  # listed in nvidia-smi's order; CUDA's ordinals beside
        ("GPU-0a1b2c3d-0000-4000-8000-000000000200", ["NVIDIA H200"]),
        ("0,-1,1", ["NVIDIA A100-SXM4-40GB"]),
        ("0,0", ["NVIDIA A100-SXM4-40GB"]),
    ],
)
def test_nvml_only_applies_cvd_itself(machine, monkeypatch, cvd, expect):
    a, h = load_fixture("a100-sxm4-40gb"), load_fixture("h200")
    machine.nvml(make_pynvml([a["nvml"], h["nvml"]], h["nvml_system"]))
    machine.no_driver_library()
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", cvd)
    rep = probe_mod.probe_devices()
    assert [d.identity.name for d in rep.devices] == expect
    assert any("CUDA_DEVICE_ORDER=PCI_BUS_ID" in n for n in rep.notes)


def test_nvml_only_cvd_selecting_nothing(machine, monkeypatch):
    h = load_fixture("h200")
    machine.nvml(make_pynvml([h["nvml"]], h["nvml_system"]))
    machine.no_driver_library()
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-ffff")
    with pytest.raises(NoDeviceError, match=r"CUDA_VISIBLE_DEVICES='GPU-ffff' hides every GPU from CUDA: its entry 'GPU-ffff' matches no device's UUID"):
        probe_mod.probe_devices()


def test_driver_no_device_because_of_cvd(machine, monkeypatch):
    h = load_fixture("h200")
    machine.nvml(make_pynvml([h["nvml"]], h["nvml_system"]))
    machine.driver(make_driver([], init=CUresult.CUDA_ERROR_NO_DEVICE))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
    with pytest.raises(NoDeviceError, match=r"CUDA_VISIBLE_DEVICES='3' hides every GPU from CUDA: its entry '3' is past the last device index \(0\).*this machine has 1 GPU: 0 = GPU-"):
        probe_mod.probe_devices()


CANDS = [
    probe_mod.Candidate("GPU-8932f937-d72c-4106-c12f-20bd9faed9f6"),
    probe_mod.Candidate("GPU-8932aaaa-0000-0000-0000-000000000001"),
    probe_mod.Candidate("GPU-1234abcd-0000-0000-0000-000000000002"),
    probe_mod.Candidate("MIG-5f1c0c2e-1111-5222-8333-444455556666", "GPU-1234abcd-0000-0000-0000-000000000002", 7, 0),
]


@pytest.mark.parametrize(
    "value, indices, stopped",
    [
        (None, (0, 1, 2, 3), None),
        ("2,1", (2, 1), None),  # CUDA docs: device 0 invisible, 2 enumerated before 1
        ("0,2,-1,1", (0, 2), "-1"),  # CUDA docs: the list stops at the invalid index
        ("-1", (), "-1"),
        ("", (), ""),
        ("GPU-8932f937", (0,), None),  # unique short UUID
        ("GPU-8932", (), "GPU-8932"),  # ambiguous prefix
        ("gpu-1234ABCD", (2,), None),  # case-insensitive
        ("MIG-5f1c0c2e", (3,), None),
        ("MIG-GPU-1234abcd-0000-0000-0000-000000000002/7/0", (3,), None),  # legacy MIG form
        ("MIG-GPU-1234abcd-0000-0000-0000-000000000002/1/0", (), "MIG-GPU-1234abcd-0000-0000-0000-000000000002/1/0"),
        ("1, 0", (1, 0), None),
        ("0,9,1", (0,), "9"),
        ("1,1", (1,), "1"),
        ("abc", (), "abc"),
    ],
)
def test_resolve_cuda_visible_devices(value, indices, stopped):
    sel = probe_mod.resolve_cuda_visible_devices(value, CANDS)
    assert sel.indices == indices
    assert sel.stopped_at == stopped


@pytest.mark.parametrize("value", ["-1", "", "  ", "none", ",0"])
def test_cvd_hiding_everything_fails_before_loading_anything(machine, monkeypatch, value):
    fake = machine.nvml(make_pynvml([load_fixture("h200")["nvml"]]))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", value)
    with pytest.raises(NoDeviceError, match="CUDA_VISIBLE_DEVICES"):
        probe_mod.probe_devices()
    assert fake.calls == []


def test_device_option(machine):
    """-i as nvidia-smi reads it: an index is NVML's (PCI order), not CUDA's; UUIDs and prefixes."""
    _two_gpu_machine(machine, ["h200", "a100"])  # CUDA 0 is the H200, nvidia-smi's 0 the A100
    assert [d.identity.name for d in probe_mod.probe_devices(device="1").devices] == ["NVIDIA H200"]
    assert [d.identity.name for d in probe_mod.probe_devices(device="cuda:1").devices] == ["NVIDIA A100-SXM4-40GB"]
    assert [d.identity.name for d in probe_mod.probe_devices(device="GPU-0a1b2c3d-0000-4000-8000-0000000002").devices] == ["NVIDIA H200"]
    assert [d.identity.name for d in probe_mod.probe_devices(device="0a1b2c3d-0000-4000-8000-000000000100").devices] == ["NVIDIA A100-SXM4-40GB"]
    assert [d.identity.name for d in probe_mod.probe_devices(device="1,0").devices] == ["NVIDIA H200", "NVIDIA A100-SXM4-40GB"]
    with pytest.raises(UsageError, match="-i 5: nvidia-smi lists 2 GPU"):
        probe_mod.probe_devices(device="5")
    with pytest.raises(UsageError, match="is the start of 2 GPUs' UUIDs"):
        probe_mod.probe_devices(device="GPU-0a1b2c3d")
    with pytest.raises(UsageError, match="matches no GPU's UUID"):
        probe_mod.probe_devices(device="MIG-0a1b")


# ---------------------------------------------------------------------------------
# MIG
# ---------------------------------------------------------------------------------

MIG_UUID = "MIG-5f1c0c2e-1111-5222-8333-444455556666"


def _mig_h200(machine, driver_uuid_is_mig=True):
    fx = load_fixture("h200")
    mig = {"uuid": MIG_UUID, "name": "NVIDIA H200 MIG 1g.18gb", "sm_count": 16, "memory_mb": 16896, "memory_total": 17716740096, "gi": 9, "ci": 0}
    nv = {**fx["nvml"], **HEALTHY, "mig_mode": [1, 1], "mig_devices": [mig]}
    machine.nvml(make_pynvml([nv], fx["nvml_system"]))
    cu = {**fx["cuda"], "name": "NVIDIA H200 MIG 1g.18gb", "sm_count": 16, "total_memory_bytes": 17716740096}
    if driver_uuid_is_mig:
        cu["uuid"] = MIG_UUID[4:]
    machine.driver(make_driver([cu]))
    return fx


@pytest.mark.parametrize("driver_uuid_is_mig", [True, False])
def test_mig_slice_gets_scaled_peaks_never_the_full_sheet(machine, driver_uuid_is_mig):
    _mig_h200(machine, driver_uuid_is_mig)
    d = probe_mod.probe_devices().devices[0]
    m = d.identity.mig
    assert m is not None and m.profile == "1g.18gb" and m.sm_count == 16 and m.parent_sm_count == 132
    assert m.sm_share == pytest.approx(16 / 132)
    assert m.memory_share == pytest.approx(17716740096 / 150754820096)
    sheet = d.sheet.sheet
    assert sheet.name == "H200 SXM MIG 1g.18gb" and sheet.sm_count == 16
    assert sheet.peak_tflops["fp32"] == pytest.approx(67.0 * 16 / 132)
    assert sheet.memory_bandwidth_gbs == pytest.approx(4800 * m.memory_share)
    assert any("MIG slice" in w for w in d.warnings)
    assert d.derived.fp32_tflops == pytest.approx(16 * 128 * 2 * 1980e6 / 1e12)
    assert all(c.ok for c in d.derived.comparisons), [c.message for c in d.derived.comparisons]
    assert d.identity.uuid == MIG_UUID
    assert d.health.mig_mode is True and [x.profile for x in d.health.mig_instances] == ["1g.18gb"]
    local = probe_mod.device_sheet()[0].sheet
    assert local.name == "H200 SXM MIG 1g.18gb" and local.peak_tflops["fp32"] < 67.0


def test_mig_slice_seen_only_by_the_driver_refuses_the_full_sheet(machine):
    machine.no_nvml_library()
    fx = load_fixture("h200")
    machine.driver(make_driver([{**fx["cuda"], "name": "NVIDIA H200 MIG 1g.18gb", "sm_count": 16, "total_memory_bytes": 17716740096}]))
    d = probe_mod.probe_devices().devices[0]
    m = d.identity.mig
    assert m is not None and m.profile == "1g.18gb" and m.sm_count == 16
    assert m.parent_sm_count == 132  # from the matched sheet
    assert is_na(m.memory_share)  # the parent's memory size needs NVML
    assert d.sheet.sheet is None and "full-GPU sheet is not used" in d.sheet.note
    assert d.identity.uuid.startswith("MIG-")
    assert any("MIG slice" in w for w in d.warnings)
    with pytest.raises(NoDeviceError, match="full-GPU sheet is not used"):
        probe_mod.device_sheet()


def test_mig_parent_uuid_without_matching_nvml_mig_device(machine):
    fx = load_fixture("h200")
    nv = {k: v for k, v in fx["nvml"].items() if k != "num_cores"}
    nv.update(mig_mode=[1, 1], mig_devices=[])  # NVML lists no MIG device that matches
    machine.nvml(make_pynvml([nv], fx["nvml_system"]))
    machine.driver(make_driver([{**fx["cuda"], "name": "NVIDIA H200 MIG 1g.18gb", "sm_count": 16, "total_memory_bytes": 17716740096}]))
    d = probe_mod.probe_devices().devices[0]
    m = d.identity.mig
    assert m is not None and is_na(d.identity.uuid) and "parent GPU's UUID" in d.identity.uuid.reason
    # SM share from the sheet's 132 SMs (NVML's core count is missing); memory share from
    # the driver's slice size over NVML's parent size.
    assert m.parent_sm_count == 132 and m.sm_share == pytest.approx(16 / 132)
    assert m.memory_share == pytest.approx(17716740096 / 150754820096)
    assert d.sheet.sheet.name == "H200 SXM MIG 1g.18gb"


def test_mig_share_unknown_refuses_the_full_sheet(machine):
    fx = load_fixture("h200")
    nv = {k: v for k, v in fx["nvml"].items() if k != "memory_total"}
    nv.update(mig_mode=[1, 1], mig_devices=[])
    machine.nvml(make_pynvml([nv], fx["nvml_system"]))
    machine.driver(make_driver([{**fx["cuda"], "name": "NVIDIA H200 MIG 1g.18gb", "sm_count": 16, "total_memory_bytes": 17716740096}]))
    d = probe_mod.probe_devices().devices[0]
    assert d.sheet.sheet is None and d.sheet.full_sheet_name == "H200 SXM"
    with pytest.raises(NoDeviceError, match="full-GPU sheet is not used"):
        probe_mod.device_sheet()


# ---------------------------------------------------------------------------------
# Health and software
# ---------------------------------------------------------------------------------


def test_health_warnings(machine):
    me = __import__("os").getpid()
    bad = {
        **HEALTHY,
        "clock_event_reasons": 0x4 | 0x40,
        "utilization_gpu": 97,
        "pcie_gen_current": 3,
        "ecc_volatile_uncorrected": 2,
        "remapped_rows": [0, 1, 1, 0],
        "compute_mode": 3,
        "persistence_mode": 0,
        "processes": [{"pid": 4242, "used": 2**30}, {"pid": me, "used": 2**20}],
    }
    fx = load_fixture("h200")
    machine.nvml(make_pynvml([{**fx["nvml"], **bad}], {**fx["nvml_system"], "process_names": {"4242": "python3"}}))
    machine.driver(make_driver([fx["cuda"]]))
    d = probe_mod.probe_devices().devices[0]
    h = d.health
    assert h.clock_event_reasons == ("software power cap", "hardware thermal slowdown")
    assert [p.pid for p in h.processes] == [4242] and h.processes[0].name == "python3"
    text = "\n".join(d.warnings)
    assert "software power cap, hardware thermal slowdown" in text
    assert "1 other process using this GPU: 4242 (python3); benchmarks on a busy GPU are noise" in text
    assert "PCIe link at gen 3, below its max gen 5 under load" in text
    assert "2 uncorrected ECC errors" in text
    assert "row remapping is pending" in text
    assert any("Exclusive Process" in n for n in d.notes)
    assert any("persistence mode is off" in n for n in d.notes)


def test_busy_without_visible_processes(machine):
    machine.fixture("h200", nvml_extra={**HEALTHY, "utilization_gpu": 80, "clock_event_reasons": 0})
    d = probe_mod.probe_devices().devices[0]
    assert any("80% busy with no process visible" in w for w in d.warnings)


def test_idle_pcie_downshift_is_explained(machine):
    machine.fixture("h200", nvml_extra={**HEALTHY, "pcie_gen_current": 1})
    d = probe_mod.probe_devices().devices[0]
    assert not any("PCIe" in w for w in d.warnings)
    assert any("gen 1, below its max gen 5, while the GPU is idle" in n for n in d.notes)


def test_software_nvrtc_newer_perf_counters_wsl(machine, monkeypatch):
    machine.fixture("h200")
    machine.nvrtc(13, 5)
    (machine.proc / "driver" / "nvidia" / "params").write_text("ResmanDebugLevel: 4294967295\nRmProfilingAdminOnly: 1\n")
    (machine.proc / "version").write_text("Linux version 5.15.153.1-microsoft-standard-WSL2 (root@...) #1 SMP\n")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    sw = probe_mod.probe_devices().software
    assert sw.nvrtc_version == "13.5"
    assert any("NVRTC 13.5 is newer than the driver's CUDA 13.0" in w and "sm_90" in w and "cubin" in w for w in sw.warnings)
    assert sw.perf_counters_open is False and "ERR_NVGPUCTRPERM" in sw.perf_counters
    assert sw.wsl2 is True and sw.wsl2_limits


def test_driver_version_from_proc_when_nvml_is_missing(machine):
    machine.no_nvml_library()
    machine.driver(make_driver([load_fixture("h200")["cuda"]]))
    (machine.proc / "driver" / "nvidia" / "version").write_text(
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (dvs-builder@U16)  Thu\nGCC version:  gcc version 12\n"
    )
    sw = probe_mod.probe_devices().software
    assert sw.driver_version == "580.159.04" and sw.cuda_driver_version == 13000


# ---------------------------------------------------------------------------------
# No device, no sheet
# ---------------------------------------------------------------------------------


def test_no_driver_at_all(machine):
    machine.no_nvml_library()
    machine.no_driver_library()
    with pytest.raises(NoDeviceError, match=r"^no NVIDIA driver on this machine: neither libcuda.so .* nor libnvidia-ml.so.1"):
        probe_mod.probe_devices()


def test_kernel_driver_not_loaded(machine):
    machine.nvml(make_pynvml([], init_error=DRIVER_NOT_LOADED))
    machine.driver(make_driver([], init=CUresult.CUDA_ERROR_NOT_INITIALIZED))
    with pytest.raises(NoDeviceError, match="kernel driver is not loaded"):
        probe_mod.probe_devices()


def test_no_gpu(machine):
    machine.nvml(make_pynvml([]))
    machine.driver(make_driver([], init=CUresult.CUDA_ERROR_NO_DEVICE))
    with pytest.raises(NoDeviceError, match=r"^no NVIDIA GPU found \(NVML: NVML sees 0 GPUs; CUDA driver: cuInit: CUDA_ERROR_NO_DEVICE\)"):
        probe_mod.probe_devices()


def test_missing_python_packages(machine):
    machine.mp.setitem(sys.modules, "pynvml", None)
    machine.mp.setitem(sys.modules, "cuda.bindings.driver", None)
    with pytest.raises(NoDeviceError, match=r"needs the GPU packages: nvidia-ml-py and cuda-bindings cannot be imported .*python3 -m pip install 'nvidia-ml-py>=12.535' 'cuda-bindings"):
        probe_mod.probe_devices()


def test_no_sheet_matched_names_the_closest(machine):
    machine.fixture("h200", nvml_extra={"name": "NVIDIA H200 Mystery Edition", "pci_device_id": "0x999910de"}, cuda_extra={"name": "NVIDIA H200 Mystery Edition"})
    d = probe_mod.probe_devices().devices[0]
    assert not d.sheet.matched and d.sheet.closest
    assert d.sheet.note.startswith("no sheet matched 'NVIDIA H200 Mystery Edition'; closest: ")
    assert any(w.startswith("no sheet matched") for w in d.warnings)
    assert not d.derived.comparisons
    with pytest.raises(NoDeviceError, match="found NVIDIA H200 Mystery Edition but no sheet matched"):
        probe_mod.device_sheet()


def test_device_sheet_is_the_first_visible_gpu(machine):
    _two_gpu_machine(machine, ["a100", "h200"])
    assert probe_mod.device_sheet()[0].sheet.name == "A100 SXM4 40GB"


def test_json_document(machine):
    import io

    from gpuwhy.render.jsonout import emit

    machine.fixture("h200", nvml_extra=HEALTHY)
    buf = io.StringIO()
    emit("probe", probe_mod.probe_devices(), stream=buf)
    doc = json.loads(buf.getvalue())
    assert doc["kind"] == "probe" and len(doc["devices"]) == 1
    dev = doc["devices"][0]
    assert dev["identity"]["name"] == "NVIDIA H200" and dev["sheet"]["name"] == "H200 SXM"
    assert dev["derived"]["dram_bandwidth_gbs"] == pytest.approx(4814.304)
    assert {c["quantity"] for c in dev["derived"]["comparisons"]} == {"DRAM bandwidth", "FP32 peak"}
    assert dev["shape"]["boost_clock_mhz"] == 1980 and dev["shape"]["sources"]["boost_clock_mhz"] == "NVML max SM clock"
    assert dev["health"]["temperature_c"] == 34 and "memory_clock_current_mhz" not in dev["shape"].get("n/a", {})
    assert dev["health"]["retired_pages_pending"] is None
    assert "not supported" in dev["health"]["n/a"]["retired_pages_pending"]
    assert doc["software"]["driver_version"] == "580.159.04"


# ---------------------------------------------------------------------------------
# The real nvidia-ml-py over a fake libnvidia-ml.so
# ---------------------------------------------------------------------------------


class FakeLibNvml:
    """Stands in for the ctypes CDLL of libnvidia-ml.so.1 under the real pynvml.

    Each C function fills its out-arguments the way NVML does and returns an
    nvmlReturn_t; a name it lacks raises AttributeError, which pynvml turns into
    NVML_ERROR_FUNCTION_NOT_FOUND (an old driver).
    """

    def __init__(self, gpu: dict, name_bytes: bytes):
        import ctypes

        self.ct = ctypes
        self.gpu = gpu
        self.name_bytes = name_bytes

    def __getattr__(self, name):
        ct, g = self.ct, self.gpu

        def out(arg, value):
            arg._obj.value = value
            return 0

        table = {
            "nvmlInitWithFlags": lambda flags: 0,
            "nvmlShutdown": lambda: 0,
            "nvmlDeviceGetCount_v2": lambda c: out(c, 1),
            "nvmlDeviceGetHandleByIndex_v2": lambda i, h: (ct.cast(ct.addressof(h._obj), ct.POINTER(ct.c_void_p)).contents.__setattr__("value", 0x1000), 0)[1],
            "nvmlDeviceGetName": lambda h, buf, n: (setattr(buf, "value", self.name_bytes), 0)[1],
            "nvmlDeviceGetUUID": lambda h, buf, n: (setattr(buf, "value", g["uuid"].encode()), 0)[1],
            "nvmlDeviceGetPciInfo_v3": lambda h, p: (setattr(p._obj, "busId", g["pci_bus_id"].encode()), setattr(p._obj, "pciDeviceId", int(g["pci_device_id"], 16)), 0)[2],
            "nvmlDeviceGetCudaComputeCapability": lambda h, a, b: (out(a, g["cuda_cc"][0]), out(b, g["cuda_cc"][1]))[1],
            "nvmlDeviceGetNumGpuCores": lambda h, c: out(c, g["num_cores"]),
            "nvmlDeviceGetMemoryInfo": lambda h, m: (setattr(m._obj, "total", g["memory_total"]), setattr(m._obj, "free", g["memory_total"] - 2**30), setattr(m._obj, "used", 2**30), 0)[3],
            "nvmlDeviceGetMemoryBusWidth": lambda h, c: out(c, g["bus_width"]),
            "nvmlDeviceGetMaxClockInfo": lambda h, kind, c: out(c, {1: g["max_clock_sm"], 2: g["max_clock_mem"]}.get(kind.value, 0)),
            "nvmlDeviceGetClockInfo": lambda h, kind, c: out(c, 0),  # clocks that read 0
            "nvmlDeviceGetMaxCustomerBoostClock": lambda h, kind, c: 3,  # NOT_SUPPORTED
            "nvmlDeviceGetEnforcedPowerLimit": lambda h, c: out(c, g["power_limit_mw"]),
            "nvmlDeviceGetEccMode": lambda h, a, b: (out(a, 1), out(b, 1))[1],
            "nvmlDeviceGetTotalEccErrors": lambda h, t, k, c: out(c, 0),
            "nvmlDeviceGetMigMode": lambda h, a, b: (out(a, 0), out(b, 0))[1],
            "nvmlDeviceGetCurrPcieLinkGeneration": lambda h, c: out(c, g["pcie_gen_current"]),
            "nvmlDeviceGetMaxPcieLinkGeneration": lambda h, c: out(c, g["pcie_gen_max"]),
            "nvmlDeviceGetCurrPcieLinkWidth": lambda h, c: out(c, g["pcie_width_current"]),
            "nvmlDeviceGetMaxPcieLinkWidth": lambda h, c: out(c, g["pcie_width_max"]),
            "nvmlDeviceGetComputeRunningProcesses_v3": lambda h, n, arr: out(n, 0),
            "nvmlSystemGetDriverVersion": lambda buf, n: (setattr(buf, "value", b"580.159.04"), 0)[1],
            "nvmlSystemGetCudaDriverVersion_v2": lambda c: out(c, 13000),
            "nvmlErrorString": lambda r: b"fake error",
        }
        if name in table:
            return table[name]
        if name.startswith("nvmlDevice"):
            return lambda *a: 3  # NVML_ERROR_NOT_SUPPORTED
        raise AttributeError(name)  # -> NVML_ERROR_FUNCTION_NOT_FOUND


@pytest.mark.parametrize("name_bytes", [b"NVIDIA H200", b"\xffNVIDIA\xfe"])
def test_real_pynvml_over_a_fake_library(machine, monkeypatch, name_bytes):
    pynvml = pytest.importorskip("pynvml")
    fx = load_fixture("h200")
    monkeypatch.setitem(sys.modules, "pynvml", pynvml)
    monkeypatch.setattr(pynvml, "nvmlLib", FakeLibNvml(fx["nvml"], name_bytes))
    monkeypatch.setattr(pynvml, "_nvmlGetFunctionPointer_cache", {})
    machine.driver(make_driver([fx["cuda"]]))
    rep = probe_mod.probe_devices()
    d = rep.devices[0]
    if name_bytes == b"NVIDIA H200":
        assert d.identity.name == "NVIDIA H200" and d.identity.sources["name"] == "NVML"
    else:  # pynvml's own decode fails inside nvmlDeviceGetName: NA, then the driver's name
        assert d.identity.name == "NVIDIA H200" and d.identity.sources["name"] == "CUDA driver"
    assert d.identity.pci_bus_id == fx["nvml"]["pci_bus_id"] and d.identity.pci_device_id == "0x2335"
    assert d.identity.uuid == fx["nvml"]["uuid"] and d.identity.compute_capability == "9.0"
    assert d.shape.cuda_cores == 16896 and d.shape.memory_bus_width_bits == 6016
    assert d.shape.memory_total_bytes == fx["nvml"]["memory_total"] and d.shape.memory_free_bytes == fx["nvml"]["memory_total"] - 2**30
    assert (d.shape.memory_clock_mhz, d.shape.sm_clock_max_mhz) == (3201, 1980)
    assert is_na(d.shape.sm_clock_current_mhz) and "reads 0" in d.shape.sm_clock_current_mhz.reason
    assert d.shape.sources["boost_clock_mhz"] == "NVML max SM clock"
    assert d.derived.dram_bandwidth_gbs == pytest.approx(4814.304)
    h = d.health
    assert h.power_limit_w == 700.0 and h.ecc_enabled is True and h.ecc_volatile_uncorrected == 0
    assert (h.pcie_gen_current, h.pcie_width_current) == (5, 16) and h.mig_mode is False and h.processes == ()
    assert "not supported" in h.temperature_c.reason
    assert rep.software.driver_version == "580.159.04" and rep.software.cuda_driver_version == 13000
