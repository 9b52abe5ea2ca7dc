"""Read how this host's GPUs are connected (``gpuwhy probe --topo``), through the one NVML layer.

Per GPU: its active NVLinks (:meth:`~gpuwhy.device.nvml.Nvml.nvlinks`), PCIe link, NUMA
node and CPU affinity; per pair: the nearest common ancestor on the PCIe tree. The
assembly into a matrix is :func:`gpuwhy.model.multi_gpu.topology.assemble` (pure). Every value
NVML cannot give is left out with a note, never guessed. A MIG device stands for its
GPU (links belong to the GPU); each GPU is listed once.
"""

from __future__ import annotations

import os
from typing import Any

from ..model.multi_gpu.topology import GpuPlace, NvLinkEnd, Topology, assemble
from ..na import is_na
from .select import choose, pci_key, visible_targets


def canonical_bus(bus: Any) -> str | None:
    """A PCI bus id in one form, ``0000:18:00.0`` (NVML's ``00000000:18:00.0`` and the driver's
    ``0000:18:00.0`` read the same); None for an NA or a text that is not a bus id."""
    if bus is None or is_na(bus):
        return None
    key = pci_key(str(bus))
    if key is None:
        return None
    dom, b, dev, fn = key
    return f"{dom:04X}:{b:02X}:{dev:02X}.{fn}"


def _int(v: Any) -> int | None:
    return None if v is None or is_na(v) else int(v)


def read_topology(device: str | None = "all") -> Topology:
    """The :class:`~gpuwhy.model.multi_gpu.topology.Topology` of the GPUs ``device`` names (``-i`` forms;
    None or ``all``: every visible GPU), in the order chosen.

    Raises:
        NoDeviceError: no driver, no GPU, ``CUDA_VISIBLE_DEVICES`` hiding every GPU.
        UsageError: ``device`` names no visible GPU.
    """
    ncpu = os.cpu_count() or 1
    with visible_targets() as vt:
        sel = choose(device, vt.listing, vt.cvd)
        nv = vt.nv
        notes = list(vt.notes) + ([sel.note] if sel.note else [])
        places: list[GpuPlace] = []
        handles: list[Any] = []
        seen: set[int] = set()
        for d in sel.devices:
            t = vt.targets[d.key]
            g = t.gpu
            if g is not None and g.index in seen:
                continue
            if g is not None:
                seen.add(g.index)
            if nv is None or g is None:
                idx = d.nvml_index if d.nvml_index is not None else d.cuda_ordinal
                places.append(GpuPlace(int(idx), d.name or "GPU", d.uuid, canonical_bus(d.pci_bus_id),
                                       nvlink_note="NVML unavailable"))
                handles.append(None)
                continue
            h = g.handle
            links = nv.nvlinks(h)
            ends: tuple[NvLinkEnd, ...] = ()
            link_note = ""
            if is_na(links):
                link_note = links.reason
            else:
                ends = tuple(NvLinkEnd(x.link, _int(x.version), canonical_bus(x.remote_bus), x.remote_kind) for x in links)
            pcie = nv.pcie(h)
            numa = nv.numa_node(h)
            cpus = nv.cpu_affinity(h, ncpu)
            name = nv.name(h)
            places.append(GpuPlace(
                index=int(g.index), name=str(name) if not is_na(name) else (d.name or "GPU"),
                uuid=None if is_na(g.uuid) else str(g.uuid), bus_id=canonical_bus(nv.pci(h).bus_id),
                nvlinks=ends, nvlink_note=link_note, pcie_gen=_int(pcie["gen_max"]), pcie_width=_int(pcie["width_max"]),
                numa_node=_int(numa), cpus=() if is_na(cpus) else tuple(cpus),
            ))
            handles.append(h)
        levels: dict[tuple[int, int], int | None] = {}
        unread = []
        for i in range(len(places)):
            for j in range(i + 1, len(places)):
                if handles[i] is None or handles[j] is None:
                    levels[(i, j)] = None
                    continue
                lv = nv.common_ancestor(handles[i], handles[j])
                levels[(i, j)] = None if is_na(lv) else int(lv)
                if is_na(lv):
                    unread.append(f"{places[i].index}-{places[j].index} ({lv.reason})")
        if unread:
            notes.append("PCIe path not read for " + ", ".join(unread))
        if len(places) == 1:
            notes.append("1 GPU: nothing to pair")
    return assemble(places, levels, notes)


def close_cpus(uuids) -> list[tuple[int, ...]]:
    """The CPUs NVML names as close to each GPU (its CPU affinity), by UUID; ``()`` for a GPU
    whose affinity NVML cannot read, and for every GPU without NVML. Never raises."""
    from .nvml import open_nvml

    uuids = list(uuids)
    nv = open_nvml()
    if is_na(nv):
        return [()] * len(uuids)
    try:
        out = []
        for u in uuids:
            h = nv.handle_by_uuid(u) if u else None
            cpus = nv.cpu_affinity(h, os.cpu_count() or 1) if h is not None and not is_na(h) else None
            out.append(() if cpus is None or is_na(cpus) else tuple(cpus))
        return out
    finally:
        nv.close()
