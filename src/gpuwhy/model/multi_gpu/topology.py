"""How the GPUs of one host are connected, assembled from what NVML reports (pure).

The device layer (:mod:`gpuwhy.device.topology`) reads, per GPU, its active NVLinks (the
far end's PCI bus id and kind: another GPU, an NVSwitch, a CPU), its PCIe link, its NUMA
node and CPU affinity, and per pair the nearest common ancestor on the PCIe tree; this
module turns that into a :class:`Topology`: one :class:`PairLink` per pair with the label
``nvidia-smi topo -m`` would print (``X``, ``NV#``, ``PIX``, ``PXB``, ``PHB``, ``NODE``,
``SYS``) and the pair's theoretical rate (:mod:`gpuwhy.model.multi_gpu.links`).

Two GPUs are NVLink-connected when links of one end at the other's bus id (``NV#`` counts
them), or when both have links to a common NVSwitch (an NVSwitch system's GPUs all reach
each other through the fabric; ``NV#`` is then the fewer of their switch links, which is
what bounds one pair's traffic). Otherwise the pair talks over PCIe, through the common
ancestor NVML names; its rate is the slower of the two GPUs' PCIe links. Bus ids must be
given in one form (the device layer writes ``0000:18:00.0``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from ...units import fmt_counted, fmt_g
from .links import NVLINK_SOURCE, PCIE_SOURCE, nvlink_gbs, nvlink_version, pcie_theoretical_gbs, topology_label

#: What ``unidirectional`` and ``bidirectional`` mean in every figure (also in the docs).
CONVENTION = ("GB/s = 1e9 B/s; unidirectional = bytes copied one way / time; "
              "bidirectional = bytes moved both ways together / time")


@dataclass(frozen=True)
class NvLinkEnd:
    """One active NVLink of a GPU.

    Attributes:
        link: NVML's link number.
        version: NVML's ``nvmlNvlinkVersion_t`` value (None when unread).
        remote_bus: the far end's PCI bus id (None when unread).
        remote_kind: ``gpu``, ``switch`` (an NVSwitch), ``cpu`` (an IBM NPU) or ``unknown``.
    """

    link: int
    version: int | None
    remote_bus: str | None
    remote_kind: str

    def to_dict(self) -> dict:
        v = nvlink_version(self.version)
        return {"link_index": self.link, "nvml_version": self.version, "version": v.name if v else None,
                "remote_pci_bus_id": self.remote_bus, "remote_kind": self.remote_kind}


@dataclass(frozen=True)
class GpuPlace:
    """Where one GPU sits.

    Attributes:
        index: nvidia-smi's index (what ``-i`` takes).
        name, uuid, bus_id: as NVML reports them (bus id in the one form the caller uses).
        nvlinks: its active NVLinks; ``nvlink_note`` says why there are none when NVML could not say.
        pcie_gen, pcie_width: the PCIe link's maximum generation and width (None when unread).
        numa_node: the NUMA node of the GPU (None when unread or not a NUMA machine).
        cpus: the CPUs NVML names as close to it (its CPU affinity); empty when unread.
    """

    index: int
    name: str
    uuid: str | None = None
    bus_id: str | None = None
    nvlinks: tuple[NvLinkEnd, ...] = ()
    nvlink_note: str = ""
    pcie_gen: int | None = None
    pcie_width: int | None = None
    numa_node: int | None = None
    cpus: tuple[int, ...] = ()

    @property
    def pcie_gbs(self) -> float | None:
        """Per-direction PCIe rate, GB/s (None without generation and width)."""
        if not (self.pcie_gen and self.pcie_width):
            return None
        try:
            return pcie_theoretical_gbs(self.pcie_gen, self.pcie_width)
        except ValueError:
            return None

    def to_dict(self) -> dict:
        return {
            "index": self.index, "name": self.name, "uuid": self.uuid, "pci_bus_id": self.bus_id,
            "numa_node": self.numa_node, "cpu_affinity": cpu_ranges(self.cpus) or None, "cpu_count": len(self.cpus),
            "pcie": {"gen": self.pcie_gen, "width": self.pcie_width, "theoretical_gbs": self.pcie_gbs},
            "nvlinks": [n.to_dict() for n in self.nvlinks], "nvlink_note": self.nvlink_note,
        }


@dataclass(frozen=True)
class PairLink:
    """The connection between GPUs ``a`` and ``b`` (positions in :attr:`Topology.gpus`).

    Attributes:
        kind: ``self`` (a == b), ``nvlink`` (direct links), ``nvswitch`` (through an NVSwitch),
            ``pcie`` or ``unknown``.
        label: what ``nvidia-smi topo -m`` prints: ``X``, ``NV18``, ``PIX``, ``PXB``, ``PHB``,
            ``NODE``, ``SYS`` (``BRD`` for one board, ``?`` unknown).
        links: NVLinks between them (None over PCIe); ``version``: the NVLink version name.
        per_link_gbs: GB/s per link per direction.
        uni_gbs: theoretical unidirectional rate, GB/s; ``bidir_gbs``: both ways together (2x).
        pcie_path: the PCIe label of the pair's common ancestor, also for NVLink pairs.
        note: how the rate was found, or why there is none.
    """

    a: int
    b: int
    kind: str
    label: str
    links: int | None = None
    version: str | None = None
    per_link_gbs: float | None = None
    uni_gbs: float | None = None
    pcie_path: str = "?"
    note: str = ""

    @property
    def bidir_gbs(self) -> float | None:
        """Both ways together: twice the unidirectional rate (each direction has its own lanes)."""
        return None if self.uni_gbs is None else 2.0 * self.uni_gbs

    def to_dict(self) -> dict:
        """Plain data, without the positions (:meth:`Topology.to_dict` names the GPUs by index)."""
        return {"kind": self.kind, "label": self.label, "nvlink_count": self.links,
                "nvlink_version": self.version, "per_link_gbs": self.per_link_gbs,
                "theoretical_unidirectional_gbs": self.uni_gbs, "theoretical_bidirectional_gbs": self.bidir_gbs,
                "pcie_path": self.pcie_path, "note": self.note}


@dataclass(frozen=True)
class Topology:
    """Every GPU's place and every pair's link; ``pairs[i][j]`` is the :class:`PairLink` of
    positions i and j (symmetric; ``X`` on the diagonal)."""

    gpus: tuple[GpuPlace, ...]
    pairs: tuple[tuple[PairLink, ...], ...]
    notes: tuple[str, ...] = ()

    def pair(self, a: int, b: int) -> PairLink:
        return self.pairs[a][b]

    def labels(self) -> list[list[str]]:
        """The matrix of labels, ``nvidia-smi topo -m``'s body."""
        return [[p.label for p in row] for row in self.pairs]

    def legend(self) -> dict[str, str]:
        """Each label in the matrix (``X`` first) -> its meaning, with the rate where known."""
        out: dict[str, str] = {}
        rates: dict[str, set] = {}
        for row in self.pairs:
            for p in row:
                if p.label not in out:
                    out[p.label] = legend_text(p)
                if p.kind == "pcie":
                    rates.setdefault(p.label, set()).add(p.uni_gbs)
        for label, rs in rates.items():
            if rs == {None}:
                continue
            if len(rs) == 1:
                out[label] += f"; PCIe, the slower GPU's link: {next(iter(rs)):.1f} GB/s one way"
            else:
                out[label] += "; PCIe, the slower GPU's link, which differs by pair (see --json)"
        return dict(sorted(out.items(), key=lambda kv: (kv[0] != "X", kv[0])))

    def to_dict(self) -> dict:
        n = len(self.gpus)
        return {
            "gpus": [g.to_dict() for g in self.gpus],
            "matrix": self.labels(),
            "pairs": [{"index_a": self.gpus[i].index, "index_b": self.gpus[j].index, **self.pairs[i][j].to_dict()}
                      for i in range(n) for j in range(i + 1, n)],
            "legend": self.legend(),
            "convention": CONVENTION,
            "sources": {"nvlink": NVLINK_SOURCE, "pcie": PCIE_SOURCE},
            "notes": list(self.notes),
        }


def legend_text(p: PairLink) -> str:
    """One line for a label: what the connection is and its theoretical rate."""
    if p.kind == "self":
        return "the GPU itself"
    rate = (f": {p.links} x {fmt_g(p.per_link_gbs)} GB/s = {fmt_g(p.uni_gbs)} GB/s one way, {fmt_g(p.bidir_gbs)} both ways"
            if p.uni_gbs is not None and p.links else "")
    if p.kind == "nvlink":
        return f"{fmt_counted(p.links, 'direct NVLink ' + (p.version or '?') + ' link')}{rate}"
    if p.kind == "nvswitch":
        return f"NVLink {p.version or '?'} through an NVSwitch, {fmt_counted(p.links, 'link')} each{rate}"
    return topology_label_meaning(p.label)


def topology_label_meaning(label: str) -> str:
    """The meaning of a PCIe label (``SYS`` ...), from :data:`~gpuwhy.model.multi_gpu.links.TOPOLOGY_LEVELS`."""
    from .links import TOPOLOGY_LEVELS

    for lab, meaning in TOPOLOGY_LEVELS.values():
        if lab == label:
            return meaning
    return "not reported by NVML"


def _version(ends: Sequence[NvLinkEnd]) -> tuple[int | None, str | None]:
    """The slowest version among ``ends`` (NVML value, name): a bond runs at its slowest link."""
    known = [e.version for e in ends if nvlink_version(e.version) is not None]
    if not known:
        return None, None
    v = min(known, key=lambda x: (nvlink_version(x).per_link_gbs or 0.0, x))
    return v, nvlink_version(v).name


def _nvlink_pair(kind: str, ia: int, ib: int, ends: Sequence[NvLinkEnd], links: int, path: str) -> PairLink:
    """An NVLink :class:`PairLink` of ``links`` links at the slowest version among ``ends``."""
    v, name = _version(ends)
    uni = nvlink_gbs(v, links)
    per = nvlink_version(v).per_link_gbs if v is not None else None
    note = "" if uni is not None else f"NVLink version {name or '?'} has no per-link figure in gpuwhy's table"
    return PairLink(ia, ib, kind, f"NV{links}", links, name, per, uni, path, note)


def connect(a: GpuPlace, b: GpuPlace, level: int | None, ia: int = 0, ib: int = 1) -> PairLink:
    """The :class:`PairLink` of two different GPUs; ``level`` is NVML's common-ancestor level."""
    path, _ = topology_label(level)
    direct = [e for e in a.nvlinks if e.remote_kind == "gpu" and e.remote_bus and e.remote_bus == b.bus_id]
    back = [e for e in b.nvlinks if e.remote_kind == "gpu" and e.remote_bus and e.remote_bus == a.bus_id]
    if direct or back:
        return _nvlink_pair("nvlink", ia, ib, direct or back, max(len(direct), len(back)), path)
    sw_a = [e for e in a.nvlinks if e.remote_kind == "switch"]
    sw_b = [e for e in b.nvlinks if e.remote_kind == "switch"]
    shared = {e.remote_bus for e in sw_a if e.remote_bus} & {e.remote_bus for e in sw_b if e.remote_bus}
    if shared:
        return _nvlink_pair("nvswitch", ia, ib, sw_a + sw_b, min(len(sw_a), len(sw_b)), path)
    if level is None:
        return PairLink(ia, ib, "unknown", "?", pcie_path=path, note="NVML reports no NVLink and no PCIe path for this pair")
    rates = [g.pcie_gbs for g in (a, b)]
    if None in rates:
        return PairLink(ia, ib, "pcie", path, pcie_path=path, note="PCIe generation/width not read; no theoretical rate")
    slow = a if rates[0] <= rates[1] else b
    note = f"the slower PCIe link of the two: gen {slow.pcie_gen} x{slow.pcie_width}"
    if path == "SYS":
        note += "; the traffic crosses the CPU sockets' interconnect, which may be slower still"
    return PairLink(ia, ib, "pcie", path, uni_gbs=min(rates), pcie_path=path, note=note)


def assemble(gpus: Sequence[GpuPlace], levels: Mapping[tuple[int, int], int | None], notes: Sequence[str] = ()) -> Topology:
    """The :class:`Topology` of ``gpus`` (in the order given); ``levels[(i, j)]`` (i < j, positions)
    is NVML's common-ancestor level of the pair (missing or None: not read)."""
    n = len(gpus)
    rows: list[list[PairLink]] = [[PairLink(i, i, "self", "X") if i == j else None for j in range(n)] for i in range(n)]  # type: ignore[misc]
    for i in range(n):
        for j in range(i + 1, n):
            lv = levels.get((i, j), levels.get((j, i)))
            p = connect(gpus[i], gpus[j], lv, i, j)
            rows[i][j] = p
            rows[j][i] = PairLink(j, i, p.kind, p.label, p.links, p.version, p.per_link_gbs, p.uni_gbs, p.pcie_path, p.note)
    return Topology(tuple(gpus), tuple(tuple(r) for r in rows), tuple(notes))


def cpus_from_mask(words: Sequence[int], word_bits: int = 64) -> tuple[int, ...]:
    """The CPU numbers set in an affinity mask given as words, lowest word first (NVML's
    ``nvmlDeviceGetCpuAffinity``: an array of unsigned longs, CPU k at bit k % 64 of word k // 64)."""
    out = []
    for w, word in enumerate(words):
        word = int(word)
        for bit in range(word_bits):
            if word >> bit & 1:
                out.append(w * word_bits + bit)
    return tuple(out)


def cpu_ranges(cpus: Sequence[int]) -> str:
    """``0-55,112-167``: CPU numbers as ranges, the form ``nvidia-smi topo -m`` and taskset use."""
    xs = sorted(set(int(c) for c in cpus))
    parts: list[str] = []
    k = 0
    while k < len(xs):
        j = k
        while j + 1 < len(xs) and xs[j + 1] == xs[j] + 1:
            j += 1
        parts.append(str(xs[k]) if j == k else f"{xs[k]}-{xs[j]}")
        k = j + 1
    return ",".join(parts)
