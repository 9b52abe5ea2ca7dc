"""`gpuwhy probe --topo` on fake 8-GPU nodes (tests/fakes.py: a fake NVML with NVLinks, a PCIe
tree, NUMA nodes and CPU affinity), and the pure link arithmetic (model/links.py,
model/topology.py): the matrix layout, each pair's theoretical rate, the --json shape."""

from __future__ import annotations

import json

import pytest

from fakes import Machine, h200_node
from gpuwhy.model.multi_gpu import links as L
from gpuwhy.model.multi_gpu.topology import GpuPlace, NvLinkEnd, assemble, connect, cpu_ranges, cpus_from_mask, legend_text

# NVML's topology levels (nvmlGpuTopologyLevel_t) and NVLink remote types
PIX, PXB, PHB, NODE, SYS = 10, 20, 30, 40, 50
GPU_END, SWITCH_END = 0, 2


def _bus(i: int) -> str:
    """h200_node's PCI bus of GPU i, in the driver's form."""
    return f"0000:{0x18 + 0x12 * i:02X}:00.0"


def _cpu_mask(node: int) -> list[int]:
    """A 224-CPU machine, 2 sockets: node 0 has CPUs 0-55 and 112-167, node 1 56-111 and 168-223."""
    cpus = [*range(0, 56), *range(112, 168)] if node == 0 else [*range(56, 112), *range(168, 224)]
    words = [0] * 4
    for c in cpus:
        words[c // 64] |= 1 << (c % 64)
    return words


def _level(a: int, b: int, same_pair: int) -> int:
    if a // 4 != b // 4:
        return SYS
    return same_pair if a // 2 == b // 2 else NODE


def two_switch_islands(machine: Machine) -> None:
    """GPUs 0-3 on NVSwitches A0..A3, GPUs 4-7 on B0..B3 (18 links of NVLink 4.0 each); PCIe between
    the islands crosses the sockets (SYS); NUMA node 0 for 0-3, 1 for 4-7."""
    extra = []
    for i in range(8):
        island = "A" if i < 4 else "B"
        links = [{"link": k, "version": 6, "remote_bus": f"00000000:{island}{k % 4}:00.0", "remote_type": SWITCH_END}
                 for k in range(18)]
        extra.append({"nvlinks": links, "numa_node": i // 4, "cpu_affinity": _cpu_mask(i // 4)})
    topo = {f"{a},{b}": _level(a, b, PXB) for a in range(8) for b in range(a + 1, 8)}
    h200_node(machine, 8, nvml_extra=extra, system_extra={"topology": topo})


def four_bridged_pairs(machine: Machine) -> None:
    """NVLink 3.0 bridges (4 links) between 0-1, 2-3, 4-5, 6-7; PCIe gen 4 x16; sockets as above."""
    extra = []
    for i in range(8):
        peer = i ^ 1
        links = [{"link": k, "version": 4, "remote_bus": f"00000000:{0x18 + 0x12 * peer:02X}:00.0", "remote_type": GPU_END}
                 for k in range(4)]
        extra.append({"nvlinks": links, "nvlink_count": 4, "numa_node": i // 4, "cpu_affinity": _cpu_mask(i // 4),
                      "pcie_gen_max": 4, "pcie_width_max": 16})
    topo = {f"{a},{b}": _level(a, b, PIX) for a in range(8) for b in range(a + 1, 8)}
    h200_node(machine, 8, nvml_extra=extra, system_extra={"topology": topo})


@pytest.fixture
def machine(monkeypatch, tmp_path):
    import os

    monkeypatch.setattr(os, "cpu_count", lambda: 224)  # the fake node's CPUs (NVML is asked for 4 words of mask)
    return Machine(monkeypatch, tmp_path)


# --------------------------------------------------------------------------- the arithmetic


def test_nvlink_table_per_link_per_direction():
    # NVIDIA's totals both ways / links / 2
    assert L.NVLINK[1].per_link_gbs == 160 / 4 / 2 == 20.0
    assert L.NVLINK[2].per_link_gbs == 300 / 6 / 2 == 25.0
    assert L.NVLINK[4].per_link_gbs == 600 / 12 / 2 == 25.0
    assert L.NVLINK[5].per_link_gbs == 112.5 / 4 / 2
    assert L.NVLINK[6].per_link_gbs == 900 / 18 / 2 == 25.0
    assert L.NVLINK[7].per_link_gbs == 1800 / 18 / 2 == 50.0
    assert [L.NVLINK[k].name for k in range(1, 9)] == ["1.0", "2.0", "2.2", "3.0", "3.1", "4.0", "5.0", "6.0"]
    assert "nvmlNvlinkVersion_t" in L.NVLINK_SOURCE and "nvidia.com" in L.NVLINK_SOURCE


def test_nvlink_rate_of_links():
    assert L.nvlink_gbs(6, 18) == 18 * 25.0 == 450.0  # H100 SXM: 450 one way, 900 both ways
    assert L.nvlink_gbs(7, 18) == 900.0
    assert L.nvlink_gbs(4, 1) == 25.0
    assert L.nvlink_gbs(3, 4) is None and L.nvlink_gbs(0, 4) is None and L.nvlink_gbs(None, 4) is None
    with pytest.raises(ValueError, match="at least 1 link, got 0"):
        L.nvlink_gbs(6, 0)


@pytest.mark.parametrize("level, label", [(0, "BRD"), (10, "PIX"), (20, "PXB"), (30, "PHB"), (40, "NODE"), (50, "SYS"),
                                          (None, "?"), (45, "?")])
def test_topology_labels(level, label):
    assert L.topology_label(level)[0] == label


def test_cpu_masks_and_ranges():
    assert cpus_from_mask([0b1011]) == (0, 1, 3)
    assert cpus_from_mask([0, 1]) == (64,)  # CPU 64 is bit 0 of the second word
    assert cpus_from_mask([1 << 63]) == (63,)
    assert cpu_ranges([0, 1, 2, 3, 7, 9, 10]) == "0-3,7,9-10"
    assert cpu_ranges([]) == ""
    assert cpu_ranges(cpus_from_mask(_cpu_mask(1))) == "56-111,168-223"


def _gpu(i, links=(), gen=5, width=16):
    return GpuPlace(i, "G", bus_id=f"B{i}", nvlinks=tuple(links), pcie_gen=gen, pcie_width=width)


def test_connect_direct_switch_and_pcie():
    ends = [NvLinkEnd(k, 4, "B1", "gpu") for k in range(3)]
    p = connect(_gpu(0, ends), _gpu(1), PIX)
    assert (p.kind, p.label, p.links, p.version) == ("nvlink", "NV3", 3, "3.0")
    assert p.uni_gbs == 3 * 25.0 and p.bidir_gbs == 150.0 and p.pcie_path == "PIX"
    # a bond runs at its slowest link's version: 2 links at 5.0 and 1 at 3.1 -> 3 x 14.0625
    mixed = [NvLinkEnd(0, 7, "B1", "gpu"), NvLinkEnd(1, 7, "B1", "gpu"), NvLinkEnd(2, 5, "B1", "gpu")]
    assert connect(_gpu(0, mixed), _gpu(1), PIX).uni_gbs == 3 * 14.0625
    # switches: the fewer switch links of the two bound the pair
    sw = lambda n, bus="S": [NvLinkEnd(k, 6, bus, "switch") for k in range(n)]  # noqa: E731
    q = connect(_gpu(0, sw(18)), _gpu(1, sw(12)), SYS)
    assert (q.kind, q.label, q.uni_gbs) == ("nvswitch", "NV12", 12 * 25.0)
    # different switches: no NVLink path, PCIe instead, the slower link of the two
    r = connect(_gpu(0, sw(18, "S1")), _gpu(1, sw(18, "S2"), gen=4), SYS)
    assert (r.kind, r.label) == ("pcie", "SYS") and r.uni_gbs == L.pcie_theoretical_gbs(4, 16) == pytest.approx(31.508, abs=1e-3)
    assert "crosses the CPU sockets" in r.note
    assert connect(_gpu(0), _gpu(1), PHB).note.startswith("the slower PCIe link")
    s = connect(_gpu(0), _gpu(1, gen=None), PHB)
    assert s.uni_gbs is None and "not read" in s.note
    u = connect(_gpu(0), _gpu(1), None)
    assert (u.kind, u.label, u.uni_gbs) == ("unknown", "?", None)


def test_connect_from_either_end_unknown_versions_and_the_slower_link():
    back = connect(_gpu(0), _gpu(1, [NvLinkEnd(k, 6, "B0", "gpu") for k in range(2)]), PIX)  # only GPU 1 reports the links
    assert (back.kind, back.label, back.uni_gbs) == ("nvlink", "NV2", 50.0)
    assert (back.a, back.b) == (0, 1)
    # a bond with a link of a version without a figure (2.2) has no rate, and says why
    odd = connect(_gpu(0, [NvLinkEnd(0, 6, "B1", "gpu"), NvLinkEnd(1, 3, "B1", "gpu")]), _gpu(1), PIX)
    assert (odd.version, odd.uni_gbs, odd.per_link_gbs) == ("2.2", None, None)
    assert odd.note == "NVLink version 2.2 has no per-link figure in gpuwhy's table"
    assert legend_text(odd) == "2 direct NVLink 2.2 links"
    unread = connect(_gpu(0, [NvLinkEnd(0, None, "B1", "gpu")]), _gpu(1), PIX)
    assert unread.version is None and legend_text(unread) == "1 direct NVLink ? link"
    # equal PCIe rates (gen 4 x16 and gen 5 x8: 31.5 GB/s): the first GPU's link is named
    eq = connect(_gpu(0, gen=4, width=16), _gpu(1, gen=5, width=8), PHB)
    assert eq.uni_gbs == pytest.approx(31.508, abs=1e-3) and eq.note.endswith("gen 4 x16")
    slow_b = connect(_gpu(0, gen=5), _gpu(1, gen=3), PHB)
    assert slow_b.note.endswith("gen 3 x16") and slow_b.uni_gbs == pytest.approx(15.754, abs=1e-3)


def test_legend_order_and_pcie_rates():
    gpus = [_gpu(0, [NvLinkEnd(k, 4, "B1", "gpu") for k in range(4)]), _gpu(1), _gpu(2, gen=4), _gpu(3)]
    levels = {(0, 1): PIX, (0, 2): SYS, (0, 3): SYS, (1, 2): SYS, (1, 3): NODE, (2, 3): SYS}
    leg = assemble(gpus, levels).legend()
    assert list(leg) == ["X", "NODE", "NV4", "SYS"]  # X first, then in order
    assert leg["NODE"].endswith("; PCIe, the slower GPU's link: 63.0 GB/s one way")  # 1-3 only: one rate
    assert leg["SYS"].endswith("which differs by pair (see --json)")  # 31.5 with GPU 2, 63.0 between 0 and 3
    assert leg["NV4"] == "4 direct NVLink 3.0 links: 4 x 25 GB/s = 100 GB/s one way, 200 both ways"


def test_assemble_is_symmetric_with_x_on_the_diagonal():
    gpus = [_gpu(i) for i in range(3)]
    topo = assemble(gpus, {(0, 1): PIX, (0, 2): SYS, (1, 2): NODE})
    assert topo.labels() == [["X", "PIX", "SYS"], ["PIX", "X", "NODE"], ["SYS", "NODE", "X"]]
    assert topo.pair(2, 0).a == 2 and topo.pair(2, 0).b == 0
    assert list(topo.legend())[0] == "X"


# --------------------------------------------------------------------------- on fake nodes


def test_two_nvswitch_islands(machine):
    from gpuwhy.device.topology import read_topology

    two_switch_islands(machine)
    topo = read_topology("all")
    want = [["X" if a == b else ("NV18" if a // 4 == b // 4 else "SYS") for b in range(8)] for a in range(8)]
    assert topo.labels() == want
    p = topo.pair(0, 3)
    assert (p.kind, p.links, p.version, p.uni_gbs, p.bidir_gbs, p.pcie_path) == ("nvswitch", 18, "4.0", 450.0, 900.0, "NODE")
    q = topo.pair(3, 4)
    assert q.kind == "pcie" and q.uni_gbs == pytest.approx(32 * 128 / 130 * 16 / 8)  # gen 5 x16
    assert [g.numa_node for g in topo.gpus] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert cpu_ranges(topo.gpus[5].cpus) == "56-111,168-223"


def test_four_bridged_pairs_matrix_and_selection(machine):
    from gpuwhy.device.topology import read_topology

    four_bridged_pairs(machine)
    topo = read_topology("all")
    assert topo.labels()[0] == ["X", "NV4", "NODE", "NODE", "SYS", "SYS", "SYS", "SYS"]
    assert topo.labels()[6] == ["SYS", "SYS", "SYS", "SYS", "NODE", "NODE", "X", "NV4"]
    assert topo.pair(4, 5).uni_gbs == 4 * 25.0
    assert topo.pair(1, 2).uni_gbs == pytest.approx(16 * 128 / 130 * 16 / 8)  # gen 4 x16 = 31.5 GB/s
    sub = read_topology("6,1")
    assert [g.index for g in sub.gpus] == [6, 1] and sub.labels() == [["X", "SYS"], ["SYS", "X"]]


def test_topo_cli_matrix_fits_80_columns(machine, cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    two_switch_islands(machine)
    code, out, err = cli("probe", "--topo")
    assert code == 0, err
    lines = out.splitlines()
    assert max(len(x) for x in lines) <= 80
    row0 = next(x for x in lines if x.startswith("GPU0"))
    assert row0.split() == ["GPU0", "X", "NV18", "NV18", "NV18", "SYS", "SYS", "SYS", "SYS", "0", "0-55,112-167"]
    text = " ".join(out.split())
    assert "NV18 NVLink 4.0 through an NVSwitch, 18 links each: 18 x 25 GB/s = 450 GB/s one way, 900 both ways" in text
    assert "SYS across the CPU sockets' interconnect (QPI/UPI, Infinity Fabric); PCIe, the slower GPU's link: 63.0 GB/s one way" in text
    assert "bidirectional = bytes moved both ways together / time" in text


def test_topo_cli_json_shape(machine, cli):
    from test_schema import check_document

    four_bridged_pairs(machine)
    code, out, err = cli("probe", "--topo", "--json")
    assert code == 0, err
    doc = json.loads(out)
    check_document(doc)
    assert doc["kind"] == "probe-topo" and len(doc["gpus"]) == 8 and len(doc["matrix"]) == 8
    assert len(doc["pairs"]) == 8 * 7 // 2
    first = doc["pairs"][0]
    assert (first["index_a"], first["index_b"], first["label"], first["nvlink_count"]) == (0, 1, "NV4", 4)
    assert first["theoretical_unidirectional_gbs"] == 100.0 and first["theoretical_bidirectional_gbs"] == 200.0
    g = doc["gpus"][7]
    assert (g["numa_node"], g["cpu_affinity"], g["cpu_count"]) == (1, "56-111,168-223", 112)
    assert g["nvlinks"][0] == {"link_index": 0, "nvml_version": 4, "version": "3.0", "remote_pci_bus_id": _bus(6),
                               "remote_kind": "gpu"}


def test_sixteen_gpus_fall_back_to_a_pair_list(machine, cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    h200_node(machine, 16, system_extra={"topology": {f"{a},{b}": SYS for a in range(16) for b in range(a + 1, 16)}})
    code, out, err = cli("probe", "--topo")
    assert code == 0, err
    assert max(len(x) for x in out.splitlines()) <= 80
    assert "one line per" in out and any(x.split()[:2] == ["0-15", "SYS"] for x in out.splitlines() if x.strip())
    assert "GPU0" in out  # the NUMA table


def test_one_gpu_and_no_nvlink_functions(machine, cli):
    h200_node(machine, 1)
    code, out, err = cli("probe", "--topo")
    assert code == 0, err
    text = " ".join(out.split())
    assert "1 GPU: nothing to pair" in text and "GPU0 X n/a n/a" in text
    assert "no NVLink: not supported on this GPU" in text


def test_topo_refuses_options_it_ignores(machine, cli):
    h200_node(machine, 2)
    code, out, err = cli("probe", "--topo", "-L")
    assert code == 2 and "--list has no effect with --topo" in err
