"""Which spec sheet is this GPU? The one answer (:func:`sheet_for`), used by every command.

A GPU is matched by what the user names (``--gpu``), else by what the device
reports: its NVML name and its PCI device id, read together. NVML names are
not unique across form factors (an H200 NVL may report a name an H200 SXM
sheet lists), while a PCI device id names one product: when the two point at
different sheets the PCI id wins and :attr:`SheetChoice.conflict` says so in
one sentence that callers print. A MIG slice gets the matched sheet scaled to
its share of SMs and memory (estimates, never the full-GPU figures).

Rules (:attr:`SheetChoice.rule`): ``given`` (a name or sheet the user passed),
``nvml_name+pci_id`` (both agree), ``pci_id`` (the id alone decided),
``nvml_name`` (the name alone: no id, or an id no sheet lists), ``name`` (a
free-text device name, e.g. from an Nsight Compute export, matched like
``--gpu``), ``attributes`` (no name and no id: compute capability, SM count and
memory size, as an Nsight Compute export may give them, fit exactly one sheet),
``none``. When several sheets fit the attributes, :attr:`SheetChoice.candidates`
lists them and no sheet is picked.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Iterable

from ..errors import UsageError
from ..na import is_na

RULES = ("given", "nvml_name+pci_id", "pci_id", "nvml_name", "name", "attributes", "none")
#: A device's reported memory (GiB, after ECC and driver reservations) against a sheet's
#: marketed size (GB): 0.88-1.04 takes an H200's 139.8 GiB for 141 GB and a T4's 14.7 GiB for 16 GB.
MEMORY_FIT = (0.88, 1.04)
#: The reported maximum SM clock against a sheet's boost clock (used only to narrow several fits).
CLOCK_FIT = 0.03

@dataclass(frozen=True)
class SheetChoice:
    """The sheet picked for a GPU, the rule that picked it and what to tell the user.

    Attributes:
        sheet: the :class:`~gpuwhy.specs.Sheet` to use (MIG: scaled to the slice), or None.
        rule: one of :data:`RULES`.
        note: one sentence for the output (what matched, or why nothing did).
        conflict: set when the NVML name and the PCI id named different sheets.
        closest: the nearest sheet names when nothing matched.
        full_sheet_name: the whole GPU's sheet for a MIG slice (else the sheet's name).
        family: set when a family name the user gave picked one variant (``H100`` -> H100 SXM):
            which, and the others, in one sentence; the CLI prints it as a note at the end of a
            command that succeeds (:func:`gpuwhy.api.sheets.noted`, :func:`gpuwhy.notices.note_later`).
        candidates: the sheets that all fit the attributes given, when more than one did.
    """

    sheet: Any
    rule: str
    note: str
    conflict: str | None = None
    closest: tuple[str, ...] = ()
    full_sheet_name: str | None = None
    family: str | None = None
    candidates: tuple[str, ...] = ()

    @property
    def matched(self) -> bool:
        """True when a sheet is usable."""
        return self.sheet is not None

    def to_dict(self) -> dict:
        """Name, file, rule and the (scaled) peaks used, or the closest names."""
        s = self.sheet
        return {
            "matched": self.matched,
            "name": s.name if s is not None else None,
            "full_sheet_name": self.full_sheet_name,
            "path": s.path if s is not None else None,
            "origin": s.origin if s is not None else None,
            "memory_bandwidth_gbs": s.memory_bandwidth_gbs if s is not None else None,
            "peak_tflops": dict(s.peak_tflops) if s is not None else None,
            "closest": list(self.closest),
            "candidates": list(self.candidates),
            "rule": self.rule,
            "conflict": self.conflict,
            "family": self.family,
            "note": self.note,
        }


def _norm(name: str) -> str:
    return " ".join(str(name).split()).lower()


def _names(sheets) -> str:
    return " or ".join(f"the {s.name}" for s in sheets)


def sheet_for(
    gpu: Any = None,
    *,
    device: Any = None,
    nvml_name: str | None = None,
    pci_device_id: str | None = None,
    mig: Any = None,
    fuzzy: bool = False,
    spec_dirs: Iterable[str] = (),
    library: Any = None,
    compute_capability: str | None = None,
    sm_count: int | None = None,
    memory_bytes: float | None = None,
    clock_mhz: float | None = None,
) -> SheetChoice:
    """Pick the spec sheet for a GPU.

    Args:
        gpu: what the user named (``--gpu``: a name, or a :class:`~gpuwhy.specs.Sheet`);
            it decides alone when given.
        device: an open device being measured (its ``name`` and ``pci_device_id``, e.g. an
            engine ``DeviceInfo``), read as ``nvml_name`` and ``pci_device_id``; without
            ``gpu``, a broken sheet folder then gives no sheet and the note "spec sheets not
            loaded (...)", never an error: a measurement must not stop for a spec sheet.
        nvml_name: the device's name as NVML reports it (``"NVIDIA H200"``).
        pci_device_id: the device id, ``"0x2335"`` (any case), or None.
        mig: a MIG slice (``profile``, ``sm_count``, ``parent_sm_count``, ``sm_share``,
            ``memory_share``, ``memory_bytes``): the sheet is scaled to it, or refused
            when a share is unknown.
        fuzzy: when the NVML name and PCI id match nothing, match ``nvml_name`` the way
            ``--gpu`` is matched (for free-text names in exports).
        spec_dirs: extra sheet folders; library: a :class:`~gpuwhy.specs.SpecLibrary` (tests).
        compute_capability, sm_count, memory_bytes, clock_mhz: what a device reports
            (``"9.0"``, SMs, bytes of memory, maximum SM clock in MHz), used when neither a
            name nor a PCI id is given: the sheets whose compute capability, SM count and
            memory size (:data:`MEMORY_FIT`) all fit, narrowed by the clock when that leaves
            one (rule ``attributes``).

    Returns:
        a :class:`SheetChoice`; ``sheet`` is None when nothing matched (never a guess).

    Raises:
        UsageError: ``gpu`` names no sheet or is ambiguous.
        SpecError: a malformed sheet in the searched folders (not for a ``device`` without ``gpu``).
    """
    if device is not None and gpu is None:
        from ..errors import GpuwhyError

        try:
            return sheet_for(nvml_name=device.name, pci_device_id=device.pci_device_id, mig=mig, fuzzy=fuzzy,
                             spec_dirs=spec_dirs, library=library)
        except GpuwhyError as exc:
            return SheetChoice(None, "none", f"spec sheets not loaded ({exc})")
    from ..specs import Sheet
    from ..specs import library as cached_library

    if isinstance(gpu, Sheet):
        return _scaled(SheetChoice(gpu, "given", f"the {gpu.name} sheet, as given"), mig)
    lib = library if library is not None else cached_library(spec_dirs)
    if gpu is not None and str(gpu).strip():
        s, family = lib.resolve(str(gpu))
        return _scaled(SheetChoice(s, "given", f"the {s.name} sheet, as named ({s.path})", family=family), mig)
    if gpu is not None:
        raise UsageError("empty GPU name; pass --gpu with a name from `gpuwhy specs list`")
    if not nvml_name:
        pci = str(pci_device_id).strip().lower() if pci_device_id else None
        by_pci = [s for s in lib if pci and pci in s.pci_device_ids]
        if len(by_pci) == 1:
            s = by_pci[0]
            return _scaled(SheetChoice(s, "pci_id", f"matched {s.name} by PCI device id {pci} ({s.path})"), mig)
        if compute_capability:
            return _scaled(_by_attributes(lib, compute_capability, sm_count, memory_bytes, clock_mhz), mig)
        return SheetChoice(None, "none", "no sheet matched: the device name is unknown")
    name = _norm(nvml_name)
    pci = str(pci_device_id).strip().lower() if pci_device_id else None
    by_name = [s for s in lib if name and name in (_norm(n) for n in s.nvml_names)]
    by_pci = [s for s in lib if pci and pci in s.pci_device_ids]
    choice = None
    if len(by_pci) == 1:
        s = by_pci[0]
        if s in by_name:
            choice = SheetChoice(s, "nvml_name+pci_id", f"matched {s.name} ({s.path})")
        elif by_name:
            conflict = (f"the NVML name {nvml_name!r} is listed by {_names(by_name)} sheet but PCI device id {pci} "
                        f"is the {s.name}'s; the PCI id decides: {s.name}")
            choice = SheetChoice(s, "pci_id", f"matched {s.name} by PCI device id {pci} ({s.path}); {conflict}",
                                 conflict=conflict)
        else:
            choice = SheetChoice(s, "pci_id", f"matched {s.name} by PCI device id {pci} ({s.path})")
    elif len(by_name) == 1:
        s = by_name[0]
        choice = SheetChoice(s, "nvml_name", f"matched {s.name} ({s.path})")
    elif len(by_name) > 1:
        why = f"PCI device id {pci} picks none of them" if pci else "no PCI device id tells them apart"
        return SheetChoice(None, "none", f"no sheet matched {nvml_name!r}: {_names(by_name)} sheets list that NVML "
                                         f"name and {why}; pass --gpu to choose", closest=tuple(s.name for s in by_name))
    elif fuzzy:
        try:
            s = lib.match(nvml_name)
        except UsageError:
            s = None
        if s is not None:
            choice = SheetChoice(s, "name", f"matched {s.name} by the name {nvml_name!r} ({s.path})")
    if choice is None:
        near = tuple(lib.closest(nvml_name)) if nvml_name else ()
        tail = ("; closest: " + ", ".join(near)) if near else ""
        what = repr(nvml_name) if nvml_name else f"PCI device id {pci} (the device name is unknown)"
        return SheetChoice(None, "none", f"no sheet matched {what}{tail}; add one with --specs DIR", closest=near)
    return _scaled(choice, mig)


def _by_attributes(lib, cc: str, sm_count, memory_bytes, clock_mhz) -> SheetChoice:
    """The one sheet that fits compute capability ``cc``, ``sm_count`` SMs and ``memory_bytes``
    (each only when known), narrowed by ``clock_mhz`` when that leaves one; else no sheet and
    the candidates (rule ``attributes`` / ``none``)."""
    cc = str(cc).strip()
    said = [f"compute capability {cc}"]
    fits = [s for s in lib if str(s.compute_capability).strip() == cc]
    if sm_count:
        said.append(f"{int(sm_count)} SMs")
        fits = [s for s in fits if s.sm_count == int(sm_count)]
    if memory_bytes:
        gib = memory_bytes / 2**30
        said.append(f"{gib:.1f} GiB of memory")
        fits = [s for s in fits if MEMORY_FIT[0] <= gib / s.memory_size_gb <= MEMORY_FIT[1]]
    what = ", ".join(said)
    if len(fits) > 1 and clock_mhz:
        by_clock = [s for s in fits if abs(s.boost_clock_mhz - clock_mhz) <= CLOCK_FIT * s.boost_clock_mhz]
        if by_clock:
            fits = by_clock
            what += f", a {clock_mhz:.0f} MHz clock"
    if len(fits) == 1:
        s = fits[0]
        return SheetChoice(s, "attributes", f"matched {s.name} by {what} ({s.path})")
    if not fits:
        return SheetChoice(None, "none", f"no sheet fits {what}; add one with --specs DIR or pass --gpu")
    names = tuple(s.name for s in fits)
    return SheetChoice(None, "none", f"{len(names)} sheets fit {what}: {', '.join(names)}; pass --gpu to choose",
                       candidates=names)


def _scaled(choice: SheetChoice, mig: Any) -> SheetChoice:
    """``choice`` for a MIG slice: the sheet scaled to the slice, or refused when a share is unknown."""
    sheet = choice.sheet
    if sheet is None:
        return choice
    if mig is None:
        return dataclasses.replace(choice, full_sheet_name=sheet.name)
    if any(is_na(v) for v in (mig.sm_share, mig.memory_share, mig.sm_count, mig.memory_bytes)):
        return dataclasses.replace(
            choice, sheet=None, full_sheet_name=sheet.name,
            note=f"MIG slice of a {sheet.name}: its share of SMs/memory is unknown, so the full-GPU sheet is not used; "
                 "pass --gpu to choose")
    profile = mig.profile if not is_na(mig.profile) else "slice"
    note = (
        f"MIG {profile}: {mig.sm_count} of {mig.parent_sm_count} SMs ({100 * mig.sm_share:.1f}%) and "
        f"{100 * mig.memory_share:.1f}% of the memory; peaks scaled from the {sheet.name} sheet by the SM share, "
        f"DRAM bandwidth and L2 by the memory share (estimates, not datasheet figures)"
    )
    scaled = dataclasses.replace(
        sheet,
        name=f"{sheet.name} MIG {profile}",
        aliases=(),
        nvml_names=(),
        pci_device_ids=(),
        sm_count=int(mig.sm_count),
        memory_size_gb=mig.memory_bytes / 1e9,
        memory_bandwidth_gbs=sheet.memory_bandwidth_gbs * mig.memory_share,
        l2_cache_mib=sheet.l2_cache_mib * mig.memory_share,
        peak_tflops={k: v * mig.sm_share for k, v in sheet.peak_tflops.items()},
        notes=(*sheet.notes, note),
    )
    if choice.conflict:
        note = f"{note}; {choice.conflict}"
    return dataclasses.replace(choice, sheet=scaled, full_sheet_name=sheet.name, note=note)
