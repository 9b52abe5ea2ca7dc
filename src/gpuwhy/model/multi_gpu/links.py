"""The theoretical rate of the links between GPUs, and between a GPU and its host: PCIe
(generation x width) and NVLink (version x links). Pure: no NVML, no CUDA.

Byte convention, everywhere in gpuwhy's multi-GPU figures: GB/s is 1e9 bytes per second;
**unidirectional** is the bytes copied one way divided by the time; **bidirectional** is
the bytes moved both ways together divided by the time (so a link that carries its full
rate each way at once shows twice its unidirectional figure). The per-link NVLink rates
in :data:`NVLINK` are per direction, the figure NVIDIA's "total bandwidth" pages divide
into: total both ways / links / 2.
"""

from __future__ import annotations

from dataclasses import dataclass

#: PCIe data rate per lane (GT/s) and line encoding (payload bits, line bits) by
#: generation. Source: PCI-SIG, PCI Express Base Specification revisions 1.0a to 6.0
#: (https://pcisig.com/specifications): 2.5 and 5.0 GT/s with 8b/10b encoding (gen 1,
#: 2), 8.0, 16.0 and 32.0 GT/s with 128b/130b (gen 3, 4, 5), 64.0 GT/s PAM4 in FLIT
#: mode with no line code (gen 6; FLIT framing, CRC and FEC then take ~8% of each
#: 256-byte FLIT, not counted here).
PCIE_GT_PER_S = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0}
PCIE_ENCODING = {1: (8, 10), 2: (8, 10), 3: (128, 130), 4: (128, 130), 5: (128, 130), 6: (1, 1)}
PCIE_SOURCE = "PCI-SIG, PCI Express Base Specification rev. 1.0a-6.0, https://pcisig.com/specifications"

#: Where the NVLink figures come from: NVIDIA's NVLink page (per GPU: 2nd generation
#: 300 GB/s over 6 links (V100), 3rd 600 GB/s over 12 (A100), 4th 900 GB/s over 18
#: (H100), 5th 1,800 GB/s over 18 (Blackwell); totals both ways), the Tesla P100
#: whitepaper (NVLink 1.0: 4 links, 160 GB/s both ways) and the RTX A6000 datasheet
#: (GA102's NVLink 3.1 bridge: 4 links, 112.5 GB/s both ways); NVML's version numbers
#: are its ``nvmlNvlinkVersion_t`` enum (1 = 1.0, 2 = 2.0, 3 = 2.2, 4 = 3.0, 5 = 3.1,
#: 6 = 4.0, 7 = 5.0, 8 = 6.0), not the generation.
NVLINK_SOURCE = ("https://www.nvidia.com/en-us/data-center/nvlink/; "
                 "https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceEnumvs.html (nvmlNvlinkVersion_t)")


@dataclass(frozen=True)
class NvLinkVersion:
    """One NVLink version as NVML numbers it.

    Attributes:
        nvml: NVML's ``nvmlNvlinkVersion_t`` value.
        name: the version (``4.0``).
        per_link_gbs: GB/s per link per direction (None: gpuwhy has no published figure).
        example: the GPU and published total the figure is derived from.
    """

    nvml: int
    name: str
    per_link_gbs: float | None
    example: str


#: NVML version value -> :class:`NvLinkVersion`; per link per direction = total both ways / links / 2.
NVLINK: dict[int, NvLinkVersion] = {v.nvml: v for v in (
    NvLinkVersion(1, "1.0", 20.0, "P100: 160 GB/s both ways over 4 links"),
    NvLinkVersion(2, "2.0", 25.0, "V100: 300 GB/s both ways over 6 links"),
    NvLinkVersion(3, "2.2", None, "no published per-GPU total"),
    NvLinkVersion(4, "3.0", 25.0, "A100: 600 GB/s both ways over 12 links"),
    NvLinkVersion(5, "3.1", 14.0625, "RTX A6000/3090 bridge: 112.5 GB/s both ways over 4 links"),
    NvLinkVersion(6, "4.0", 25.0, "H100 SXM: 900 GB/s both ways over 18 links"),
    NvLinkVersion(7, "5.0", 50.0, "B200: 1,800 GB/s both ways over 18 links"),
    NvLinkVersion(8, "6.0", None, "no per-link figure in gpuwhy's table yet"),
)}

#: NVML's ``nvmlGpuTopologyLevel_t`` (the nearest common ancestor of two GPUs on the PCIe
#: tree) -> (the label ``nvidia-smi topo -m`` prints, what it means). Same source as
#: :data:`NVLINK_SOURCE`'s NVML page; ``BRD`` (NVML's "internal": two GPUs on one board) is
#: gpuwhy's label, nvidia-smi has none.
TOPOLOGY_LEVELS: dict[int, tuple[str, str]] = {
    0: ("BRD", "on one board (NVML: internal)"),
    10: ("PIX", "through at most one PCIe bridge"),
    20: ("PXB", "through several PCIe bridges, not the host bridge"),
    30: ("PHB", "through a PCIe host bridge (the CPU's root complex)"),
    40: ("NODE", "across PCIe host bridges within one NUMA node"),
    50: ("SYS", "across the CPU sockets' interconnect (QPI/UPI, Infinity Fabric)"),
}


def pcie_theoretical_gbs(gen: int, width: int) -> float:
    """Per-direction PCIe data rate, GB/s (1e9 B/s): GT/s x encoding efficiency x lanes / 8.

    gen 5 x16: 32 x 128/130 x 16 / 8 = 63.0 GB/s; gen 4 x16: 31.5; gen 3 x16:
    15.75; gen 2 x16: 8.0; gen 1 x1: 0.25. Transaction-layer overhead (TLP
    headers, flow control) is not subtracted: a practical link reaches
    roughly 80-90% of it.

    Raises:
        ValueError: an unknown generation (1-6) or a width below 1.
    """
    if int(gen) not in PCIE_GT_PER_S:
        raise ValueError(f"PCIe generation {gen!r} is not one of 1..6")
    if int(width) < 1:
        raise ValueError(f"PCIe width x{width!r} must be at least 1")
    payload, line = PCIE_ENCODING[int(gen)]
    return PCIE_GT_PER_S[int(gen)] * payload / line * int(width) / 8.0


def nvlink_version(nvml_value: int | None) -> NvLinkVersion | None:
    """The :class:`NvLinkVersion` of an NVML version value, or None for an unknown one (0 included)."""
    return NVLINK.get(nvml_value) if nvml_value is not None else None


def nvlink_gbs(nvml_value: int | None, links: int) -> float | None:
    """Per-direction NVLink rate of ``links`` links of one version, GB/s: links x per-link rate.

    18 links of NVLink 4.0 (NVML 6): 18 x 25 = 450 GB/s one way (900 both ways). None for a
    version without a figure.

    Raises:
        ValueError: ``links`` below 1.
    """
    if int(links) < 1:
        raise ValueError(f"an NVLink connection has at least 1 link, got {links!r}")
    v = nvlink_version(nvml_value)
    if v is None or v.per_link_gbs is None:
        return None
    return int(links) * v.per_link_gbs


def topology_label(level: int | None) -> tuple[str, str]:
    """``(label, meaning)`` of an NVML topology level; ``("?", ...)`` for None or an unknown value."""
    if level is None:
        return "?", "not reported by NVML"
    return TOPOLOGY_LEVELS.get(int(level), ("?", f"NVML topology level {level} (unknown to gpuwhy)"))
