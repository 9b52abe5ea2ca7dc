"""Which GPU an Nsight Compute export was made on, and so which spec sheet judges it.

What an export may say about its GPU, best first: ``device__attribute_display_name``
(the NVML name), the PCI device id (``device__attribute_gpu_pci_ext_device_id``, or
the high half of ``device__attribute_gpu_pci_device_id``), and the compute
capability (the ``CC`` column or ``device__attribute_compute_capability_*``) with the
SM count (``device__attribute_multiprocessor_count``, the details page's ``# SMs``),
memory size (``device__attribute_total_memory``) and clock
(``device__attribute_clock_rate``). All of it goes to the one sheet lookup,
:func:`gpuwhy.device.sheet.sheet_for`. When several sheets fit (compute capability
8.0 alone: three A100s) the error lists exactly those and says ``--gpu``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ...errors import UsageError
from .figures import lookup
from .read import Launch


class GpuNotIdentified(UsageError):
    """The export's GPU fits no sheet, or several (``candidates``); the message says to pass --gpu (exit 2)."""

    def __init__(self, message: str, candidates: tuple[str, ...] = ()):
        super().__init__(message)
        self.candidates = candidates


@dataclass(frozen=True)
class ExportGpu:
    """What an export says about one of its GPUs (None where it says nothing).

    ``memory_bytes`` bytes, ``clock_mhz`` the maximum SM clock in MHz, ``pci_device_id``
    like ``"0x2335"``.
    """

    name: str | None
    pci_device_id: str | None
    compute_capability: str | None
    sm_count: int | None
    memory_bytes: float | None
    clock_mhz: float | None

    def says(self) -> str:
        """What is known, for messages (``"compute capability 9.0, 132 SMs"``)."""
        parts = []
        if self.name:
            parts.append(repr(self.name))
        if self.pci_device_id:
            parts.append(f"PCI device id {self.pci_device_id}")
        if self.compute_capability:
            parts.append(f"compute capability {self.compute_capability}")
        if self.sm_count:
            parts.append(f"{self.sm_count} SMs")
        if self.memory_bytes:
            parts.append(f"{self.memory_bytes / 2**30:.1f} GiB")
        return ", ".join(parts) or "nothing"

    def to_dict(self) -> dict:
        return {"name": self.name, "pci_device_id": self.pci_device_id, "compute_capability": self.compute_capability,
                "sm_count": self.sm_count, "memory_bytes": self.memory_bytes, "clock_mhz": self.clock_mhz}


def _first(launches: Iterable[Launch], fn):
    for la in launches:
        v = fn(la)
        if v is not None:
            return v
    return None


def _cc(la: Launch) -> str | None:
    if la.cc:
        try:
            return f"{float(la.cc):.1f}"
        except ValueError:
            return la.cc.strip()
    major, _, _ = lookup(la, ("device__attribute_compute_capability_major",))
    minor, _, _ = lookup(la, ("device__attribute_compute_capability_minor",))
    if major is not None and minor is not None:
        return f"{int(major)}.{int(minor)}"
    return None


def _pci(la: Launch) -> str | None:
    ext, _, _ = lookup(la, ("device__attribute_gpu_pci_ext_device_id",))
    if ext:
        return f"0x{int(ext):04x}"
    full, _, _ = lookup(la, ("device__attribute_gpu_pci_device_id",))
    if full and int(full) > 0xFFFF:
        return f"0x{int(full) >> 16:04x}"
    return None


def _int(la: Launch, names) -> int | None:
    v, _, _ = lookup(la, names)
    return int(v) if v else None


def export_gpu(launches: list[Launch]) -> ExportGpu:
    """What ``launches`` (those of one ``Device``) say about their GPU."""
    clock_khz = _first(launches, lambda la: lookup(la, ("device__attribute_clock_rate", "device__attribute_max_gpu_frequency_khz"))[0])
    memory = _first(launches, lambda la: lookup(la, ("device__attribute_total_memory",))[0])
    return ExportGpu(
        name=_first(launches, lambda la: la.device_name),
        pci_device_id=_first(launches, _pci),
        compute_capability=_first(launches, _cc),
        sm_count=_first(launches, lambda la: _int(la, ("device__attribute_multiprocessor_count", "# SMs"))),
        memory_bytes=memory or None,
        clock_mhz=clock_khz / 1000.0 if clock_khz else None,
    )


def sheet_for_export(gpu_info: ExportGpu, gpu=None, spec_dirs: Iterable[str] = (),
                     local: Callable[[], object] | None = None):
    """The :class:`~gpuwhy.device.sheet.SheetChoice` for an export's GPU.

    ``gpu`` (``--gpu``) decides when given. Otherwise the export's name, PCI id or
    attributes pick the sheet; when the export says too little (several sheets fit,
    or it says nothing), ``local()`` (this machine's GPU's choice, or None) is used if
    its sheet is one of those that fit.

    Raises:
        UsageError: an unknown ``gpu``.
        GpuNotIdentified: a name no sheet matches, several sheets that fit and no
            local GPU among them, or nothing to go on (the message lists the
            candidates and says ``--gpu``).
    """
    from ...device.sheet import sheet_for

    if gpu is not None:
        return sheet_for(gpu, spec_dirs=spec_dirs)
    g = gpu_info
    choice = sheet_for(nvml_name=g.name, pci_device_id=g.pci_device_id, fuzzy=True, spec_dirs=spec_dirs,
                       compute_capability=g.compute_capability, sm_count=g.sm_count, memory_bytes=g.memory_bytes,
                       clock_mhz=g.clock_mhz)
    if choice.sheet is not None:
        return choice
    if g.name:
        raise GpuNotIdentified(f"the export's GPU {g.name!r} matches no spec sheet; pass --gpu NAME (see `gpuwhy specs list`)")
    fits = choice.candidates
    here = local() if local is not None else None
    here_sheet = getattr(here, "sheet", None)
    if here_sheet is not None and (not g.compute_capability or (fits and here_sheet.name in fits)):
        import dataclasses

        why = (f"the export names no GPU; {len(fits)} sheets fit its {g.says()} and this machine's {here_sheet.name} is one"
               if fits else "the export says nothing about its GPU; judged against this machine's")
        return dataclasses.replace(here, note=f"{why}: judged against the {here_sheet.name} sheet")
    if fits:
        raise GpuNotIdentified(
            f"the export does not name its GPU and {len(fits)} sheets fit its {g.says()}: {', '.join(fits)}; "
            "pass --gpu NAME", candidates=fits)
    if g.compute_capability:
        raise GpuNotIdentified(f"the export does not name its GPU and no sheet fits its {g.says()}; "
                               "pass --gpu NAME (see `gpuwhy specs list`) or add a sheet with --specs DIR")
    raise GpuNotIdentified(
        "the export does not name its GPU (no device__attribute_display_name, CC column or device attributes) "
        "and no --gpu was given; pass --gpu NAME (see `gpuwhy specs list`)")


def local_choice(spec_dirs: Iterable[str] = ()):
    """This machine's GPU's sheet choice, or None when there is no GPU (or none a sheet matches)."""
    from ...device.probe import gpu_sheet

    try:
        return gpu_sheet(None, spec_dirs)
    except UsageError:
        return None


__all__ = ["ExportGpu", "GpuNotIdentified", "export_gpu", "local_choice", "sheet_for_export"]
