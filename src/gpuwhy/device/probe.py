"""`gpuwhy probe`: what each visible GPU is, from NVML and the CUDA driver.

:func:`probe_devices` builds a :class:`~gpuwhy.device.probe_report.ProbeReport`
(one :class:`~gpuwhy.device.probe_report.DeviceReport` per visible GPU, plus
machine-wide :class:`~gpuwhy.device.probe_report.Software` facts); :func:`gpu_sheet`
is the spec sheet other commands use: ``--gpu``'s, else the first visible GPU's
(matched by :func:`gpuwhy.device.sheet.sheet_for`).

Which devices there are and which ``-i`` names is :mod:`gpuwhy.device.select`'s answer:
the CUDA driver applies ``CUDA_VISIBLE_DEVICES``, each CUDA device is matched to its
NVML device by UUID (MIG devices by their ``MIG-`` UUID), and devices are listed in
nvidia-smi's order (NVML index) with each one's CUDA ordinal beside.

Every field is a value or an :class:`~gpuwhy.na.NA` with its reason;
a value NVML cannot give is taken from the CUDA driver where it has one.
Health is read by :mod:`gpuwhy.device.health`, software facts by
:mod:`gpuwhy.device.software`.

Raises :class:`~gpuwhy.errors.NoDeviceError` (exit 3) with one line saying which
of these it is: ``CUDA_VISIBLE_DEVICES`` hides every GPU, no NVIDIA driver (no
libcuda.so and no libnvidia-ml.so.1), the kernel driver is not loaded, or no GPU.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable

from ..archs import parse_arch
from ..errors import NoDeviceError, UsageError
from . import derive
from .health import nvml_query, read_health
from ..na import NA, is_na
from .nvml import is_lenient
from .probe_report import (
    Derived,
    DeviceReport,
    GpuProcess,
    Health,
    Identity,
    MigSlice,
    ProbeReport,
    Shape,
    Software,
    pick,
)
from .sheet import SheetChoice, sheet_for
from .software import is_wsl2, perf_counter_access, read_software
from .uuids import with_uuid_prefix
from .select import visible_targets
from .visible import Candidate, Target, VisibleSelection, cvd_hides_all_message, resolve_cuda_visible_devices
from ..units import fmt_g, fmt_num

__all__ = [
    "probe_devices", "device_sheet", "gpu_sheet",
    # at home in visible, software and probe_report; importable from here too
    "Candidate", "VisibleSelection", "resolve_cuda_visible_devices", "cvd_hides_all_message",
    "perf_counter_access", "is_wsl2",
    "ProbeReport", "DeviceReport", "Identity", "Shape", "Derived", "Health", "Software", "MigSlice", "GpuProcess",
]


# ---------------------------------------------------------------------------------
# Building one device report
# ---------------------------------------------------------------------------------


def _match_sheet(name: Any, pci_id: Any, mig: MigSlice | None, spec_dirs) -> SheetChoice:
    """The sheet for the device's name and PCI id; a name that is unknown or was not clean text
    (:class:`~gpuwhy.device.nvml.Lenient`) leaves the PCI id to decide alone."""
    pci = None if is_na(pci_id) else pci_id
    if is_na(name) and pci is None:
        return SheetChoice(None, "none", f"no sheet matched: the device name is unknown ({name.reason})")
    clean = None if (is_na(name) or is_lenient(name)) else name
    return sheet_for(nvml_name=clean, pci_device_id=pci, mig=mig, spec_dirs=spec_dirs)


#: A MIG slice's own figure when CUDA sees the slice but NVML's MIG device was not identified.
_MIG_NOT_IN_NVML = NA("MIG device not identified in NVML", "unavailable")


class _Fields:
    """A record's fields as they are read: each value, and for a value picked from sources, which one gave it."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.sources: dict[str, str] = {}

    def set(self, key: str, value: Any, source: str | None = None) -> Any:
        """Set ``key`` to ``value`` (noting ``source`` when given); returns ``value``."""
        self.values[key] = value
        if source is not None:
            self.sources[key] = source
        return value

    def pick(self, key: str, *pairs: tuple[str, Any]) -> Any:
        """Set ``key`` by :func:`~gpuwhy.device.probe_report.pick` on (source, value) ``pairs``; returns the value."""
        value, source = pick(*pairs)
        return self.set(key, value, source or "n/a")


def _needs(*inputs: tuple[str, Any]) -> NA | None:
    """The NA naming the missing of (words, value) ``inputs`` a formula needs, or None when none is missing."""
    missing = [w for w, v in inputs if is_na(v)]
    return NA("needs " + ", ".join(missing), "unavailable") if missing else None


def _dram_peak(mclk: Any, bus_w: Any, factor: Any, mtype: Any, mig_slice: MigSlice | None) -> tuple[Any, str]:
    """(DRAM bandwidth in GB/s or an NA, its formula) from the memory clock (MHz), bus width (bits) and data-rate
    factor; a MIG slice gets its memory share of it."""
    missing = _needs(("memory clock", mclk), ("bus width", bus_w), ("data-rate factor", factor))
    if missing is not None:
        return missing, "n/a"
    bw = derive.dram_bandwidth_bytes_per_s(mclk, bus_w, factor) / 1e9
    formula = f"{fmt_g(mclk)} MHz x {factor} ({mtype}) x {bus_w} bits / 8"
    if mig_slice is None:
        return bw, formula
    if is_na(mig_slice.memory_share):
        return NA("MIG slice: memory share unknown", "unavailable"), "n/a"
    return bw * mig_slice.memory_share, formula + f" x {mig_slice.memory_share:.3f} (MIG memory share)"


def _fp32_peak(sm: Any, lanes: Any, boost: Any) -> tuple[Any, str]:
    """(FP32 peak in TFLOP/s or an NA, its formula) from the SMs, FP32 lanes per SM and boost clock (MHz)."""
    missing = _needs(("SM count", sm), ("lanes per SM", lanes), ("boost clock", boost))
    if missing is not None:
        return missing, "n/a"
    return derive.fp32_peak_flops(sm, lanes, boost) / 1e12, f"{sm} SMs x {lanes} lanes x 2 x {fmt_g(boost)} MHz"


@dataclasses.dataclass(frozen=True)
class _Reads:
    """Where one target's values come from: NVML (``nvq``: its device ``h``, MIG device ``mh``; ``no_nvml``
    without one) and the CUDA driver (:meth:`dv`; ``no_drv`` without it)."""

    t: Target
    nv: Any
    h: Any
    mh: Any
    no_nvml: NA
    no_drv: NA

    @classmethod
    def of(cls, t: Target, nv, nv_na: NA | None, drv_na: NA | None) -> "_Reads":
        g = t.gpu
        return cls(t, nv, g.handle if (g is not None and nv is not None) else None,
                   t.mig.handle if (t.mig is not None and nv is not None) else None,
                   nv_na or NA("no NVML device matched", "unavailable"), drv_na or NA("CUDA driver unavailable", "unavailable"))

    def nvq(self, fn: str, *args) -> Any:
        """NVML's ``fn`` on the device (:func:`~gpuwhy.device.health.nvml_query`)."""
        return nvml_query(self.nv, self.h, self.no_nvml)(fn, *args)

    def dv(self, attr: str) -> Any:
        """The CUDA driver's ``attr`` of the device."""
        return getattr(self.t.drv, attr) if self.t.drv is not None else self.no_drv

    @property
    def is_mig(self) -> bool:
        return self.t.mig is not None or self.t.mig_from_driver


def _uuid(r: _Reads) -> tuple[Any, str | None]:
    """(UUID, its source): a MIG slice's own where one is known; a driver UUID without its prefix gets it."""
    t = r.t
    if r.mh is not None:
        uuid, s = pick(("NVML", r.nv.uuid(r.mh)), ("CUDA driver", r.dv("uuid_hex")))
    elif t.mig_from_driver and t.gpu is not None:
        uuid, s = NA("MIG slice: CUDA reports the parent GPU's UUID and no NVML MIG device matched", "unavailable"), None
    elif t.mig_from_driver:
        uuid, s = pick(("CUDA driver", r.dv("uuid_hex")))
    else:
        uuid, s = pick(("NVML", r.nvq("uuid")), ("CUDA driver", r.dv("uuid_hex")))
    if s == "CUDA driver" and isinstance(uuid, str):
        # CUDA 11.4+ reports a MIG device's own UUID, with no prefix
        uuid = with_uuid_prefix(uuid, mig=r.is_mig)
    return uuid, s


def _identity(r: _Reads) -> _Fields:
    """Ordinal, index, name, UUID, PCI ids, brand, compute capability and architecture (``mig`` is set later)."""
    ident = _Fields()
    ident.set("cuda_ordinal", r.t.ordinal)
    ident.set("nvml_index", r.t.gpu.index if r.t.gpu is not None else r.no_nvml)
    ident.pick("name", ("NVML", r.nvq("name")), ("CUDA driver", derive.without_mig_suffix(r.dv("name"))))
    uuid, s = _uuid(r)
    ident.set("uuid", uuid, s or "n/a")
    pci = r.nvq("pci") if r.h is not None else None
    ident.pick("pci_bus_id", ("NVML", pci.bus_id if pci is not None else r.no_nvml), ("CUDA driver", r.dv("pci_bus_id")))
    ident.pick("pci_device_id", ("NVML", pci.device_id if pci is not None else r.no_nvml), ("CUDA driver", r.dv("pci_device_id")))
    ident.set("brand", r.nvq("brand"))
    cc = ident.pick("compute_capability", ("NVML", r.nvq("compute_capability")), ("CUDA driver", r.dv("compute_capability")))
    arch: Any = NA("compute capability unknown", "unavailable") if is_na(cc) else (
        derive.architecture_name(cc) or NA(f"no architecture known for compute capability {cc}", "unavailable")
    )
    ident.set("architecture", arch)
    return ident


def _lanes(cc: Any) -> Any:
    """FP32 lanes per SM for compute capability ``cc``, or an NA."""
    return NA("compute capability unknown", "unavailable") if is_na(cc) else (
        derive.fp32_lanes_per_sm(cc) or NA(f"FP32 lanes per SM unknown for compute capability {cc}", "unavailable")
    )


def _shape(r: _Reads, cc: Any, lanes: Any, notes: list[str]) -> tuple[_Fields, Any]:
    """The SMs (the slice's for MIG), memory and clocks (``memory_type`` is set later), and the full
    GPU's SM count from NVML's cores / lanes (or an NA); a note when cores and SMs x lanes disagree."""
    cores = r.nvq("num_cores")
    full_sm_from_cores: Any = (
        cores // lanes if (not is_na(cores) and not is_na(lanes) and cores % lanes == 0) else NA("needs NVML's core count and the lanes table", "unavailable")
    )
    shape = _Fields()
    if r.is_mig:
        mig_sm = r.t.mig.sm_count if r.t.mig is not None else _MIG_NOT_IN_NVML
        sm = shape.pick("sm_count", ("CUDA driver", r.dv("sm_count")), ("NVML MIG attributes", mig_sm))
    else:
        attrs = r.nvq("attributes")
        attr_sm = attrs["sm_count"] if isinstance(attrs, dict) else attrs
        sm = shape.pick("sm_count", ("CUDA driver", r.dv("sm_count")), ("NVML attributes", attr_sm), ("NVML cores / lanes", full_sm_from_cores))
    if not is_na(cores) and not is_na(sm) and not is_na(lanes) and not r.is_mig and cores != sm * lanes:
        notes.append(f"NVML reports {cores} CUDA cores but {sm} SMs x {lanes} lanes = {sm * lanes}: check the lanes table for cc {cc}")
    shape.set("fp32_lanes_per_sm", lanes)
    shape.set("cuda_cores", cores if not r.is_mig else NA("MIG slice: see SMs x lanes", "unavailable"))
    for attr in ("max_threads_per_sm", "shared_mem_per_sm_bytes", "l2_bytes"):
        shape.set(attr, r.dv(attr))
    _memory_and_clocks(r, shape)
    return shape, full_sm_from_cores


def _memory_and_clocks(r: _Reads, shape: _Fields) -> None:
    """Memory size (a MIG slice's own), bus width and clocks (MHz) into ``shape``."""
    mem = r.nv.memory(r.mh) if r.mh is not None else r.nvq("memory")
    if r.t.mig_from_driver and r.t.mig is None:
        mem = _MIG_NOT_IN_NVML  # NVML's memory is the parent's
    mem_total_nv = mem.total_bytes if not isinstance(mem, NA) else mem
    shape.pick("memory_total_bytes", ("NVML", mem_total_nv), ("CUDA driver", r.dv("total_memory_bytes")))
    shape.set("memory_free_bytes", mem.free_bytes if not isinstance(mem, NA) else mem)
    shape.pick("memory_bus_width_bits", ("NVML", r.nvq("bus_width")), ("CUDA driver", r.dv("bus_width_bits")))
    shape.pick("memory_clock_mhz", ("NVML max", r.nvq("max_clock", "mem")), ("CUDA driver", r.dv("memory_clock_mhz")))
    shape.set("memory_clock_current_mhz", r.nvq("clock", "mem"))
    shape.pick("sm_clock_max_mhz", ("NVML max", r.nvq("max_clock", "sm")), ("CUDA driver", r.dv("clock_mhz")))
    shape.set("sm_clock_current_mhz", r.nvq("clock", "sm"))
    shape.pick(
        "boost_clock_mhz",
        ("NVML max customer boost", r.nvq("customer_boost_clock")),
        ("CUDA driver clock rate", r.dv("clock_mhz")),
        ("NVML max SM clock", r.nvq("max_clock", "sm")),
    )


def _mig_slice(r: _Reads, uuid: Any, sm: Any, mem_total: Any, full_sm_from_cores: Any) -> MigSlice:
    """The MIG slice's identity and size, with its parent's (shares are set with the sheet)."""
    parent_mem = r.nvq("memory").total_bytes if r.h is not None else r.no_nvml
    parent_sm, _ = pick(("NVML cores / lanes", full_sm_from_cores))
    m = r.t.mig
    return MigSlice(
        uuid=uuid,
        profile=derive.mig_profile(m.name if m is not None else r.dv("name")),
        sm_count=sm,
        memory_bytes=mem_total,
        gpu_instance_id=m.gpu_instance_id if m is not None else NA("MIG device not identified", "unavailable"),
        compute_instance_id=m.compute_instance_id if m is not None else NA("MIG device not identified", "unavailable"),
        parent_sm_count=parent_sm,
        parent_memory_bytes=parent_mem,
    )


def _sheet_and_shares(name: Any, pci_id: Any, mig_slice: MigSlice | None, sm: Any, mem_total: Any, spec_dirs,
                      warnings: list[str]) -> tuple[SheetChoice, Any, MigSlice | None]:
    """(the sheet match, the whole GPU's sheet or None, the MIG slice with its shares): a MIG slice's
    parent size falls back on the sheet's, and the slice is matched again as a slice (with a warning)."""
    sheet_match = _match_sheet(name, pci_id, None, spec_dirs)
    full_sheet = sheet_match.sheet
    if mig_slice is not None:
        psm = mig_slice.parent_sm_count
        if is_na(psm) and full_sheet is not None:
            psm = full_sheet.sm_count
        sm_share = derive.scale_share(sm, psm) if not is_na(sm) and not is_na(psm) else NA("SM share unknown", "unavailable")
        pmem = mig_slice.parent_memory_bytes
        mem_share = (
            derive.scale_share(mem_total, pmem) if not is_na(mem_total) and not is_na(pmem) else NA("memory share unknown", "unavailable")
        )
        mig_slice = dataclasses.replace(mig_slice, parent_sm_count=psm, sm_share=sm_share, memory_share=mem_share)
        if full_sheet is not None:
            sheet_match = _match_sheet(name, pci_id, mig_slice, spec_dirs)
        warnings.append(f"this is a MIG slice, not the whole GPU: {sheet_match.note}")
    return sheet_match, full_sheet, mig_slice


def _memory_type(r: _Reads, shape: _Fields, cc: Any, full_sheet) -> Any:
    """The memory type (the sheet's, else guessed from the compute capability) into ``shape``; returns it."""
    integrated = r.dv("integrated")
    if full_sheet is not None:
        return shape.set("memory_type", full_sheet.memory_type, f"sheet {full_sheet.name}")
    fam = None if is_na(cc) else derive.memory_family_from_cc(cc, integrated if isinstance(integrated, bool) else None)
    return shape.set(
        "memory_type",
        fam or NA("no sheet, and not guessable from the compute capability", "unavailable"),
        "guessed from compute capability" if fam else "n/a",
    )


def _against_sheet(sheet, bw: Any, fp32: Any, shape: _Fields, cc: Any, mig_slice: MigSlice | None,
                   warnings: list[str]) -> list[derive.SheetComparison]:
    """The derived DRAM bandwidth and FP32 peak against the sheet's; a warning for each that is off,
    and for an SM count or compute capability the sheet does not have."""
    comparisons: list[derive.SheetComparison] = []
    if not is_na(bw):
        comparisons.append(
            derive.compare_to_sheet(
                "DRAM bandwidth", bw, sheet.memory_bandwidth_gbs, "GB/s",
                hint="a wrong sheet match, or a memory clock that is not the board's max",
            )
        )
    if not is_na(fp32):
        comparisons.append(
            derive.compare_to_sheet(
                "FP32 peak", fp32, sheet.peak_tflops["fp32"], "TFLOP/s",
                hint=f"a wrong sheet match, or a clock read ({shape.sources['boost_clock_mhz']}) that is not the boost clock",
            )
        )
    for c in comparisons:
        if not c.ok:
            warnings.append(c.message)
    sm = shape.values["sm_count"]
    if not is_na(sm) and mig_slice is None and sm != sheet.sm_count:
        warnings.append(f"the {sheet.name} sheet says {sheet.sm_count} SMs, the device has {sm}: a different SKU or a wrong match")
    if not is_na(cc) and cc != sheet.compute_capability:
        warnings.append(f"the {sheet.name} sheet says compute capability {sheet.compute_capability}, the device reports {cc}")
    return comparisons


def _build_device(t: Target, nv, nv_na: NA | None, drv_na: NA | None, spec_dirs, full: bool) -> DeviceReport:
    """The report of one target: NVML's values first, the CUDA driver's where NVML has none, then the sheet
    matched, the derived peaks against it and (``full``) the health."""
    warnings: list[str] = []
    notes: list[str] = list(t.notes)
    r = _Reads.of(t, nv, nv_na, drv_na)
    ident = _identity(r)
    name, uuid, pci_id, cc = (ident.values[k] for k in ("name", "uuid", "pci_device_id", "compute_capability"))
    lanes = _lanes(cc)
    shape, full_sm_from_cores = _shape(r, cc, lanes, notes)
    sm, mem_total = shape.values["sm_count"], shape.values["memory_total_bytes"]
    mig_slice = _mig_slice(r, uuid, sm, mem_total, full_sm_from_cores) if r.is_mig else None
    sheet_match, full_sheet, mig_slice = _sheet_and_shares(name, pci_id, mig_slice, sm, mem_total, spec_dirs, warnings)
    ident.set("mig", mig_slice)
    for key, value in ident.values.items():
        by_pci = "; the PCI device id picked the sheet" if key == "name" and sheet_match.rule == "pci_id" else ""
        if is_lenient(value):
            warnings.append(f"the {key.replace('_', ' ')} the driver reports is not clean text ({value.replaced}); "
                            "shown with \\x escapes" + by_pci)
        elif is_na(value) and value.kind == "undecodable":
            warnings.append(f"the {key.replace('_', ' ')} the driver reports is unreadable ({value.reason}): n/a" + by_pci)
    sheet = sheet_match.sheet
    if sheet is None and mig_slice is None:
        warnings.append(sheet_match.note)

    mtype = _memory_type(r, shape, cc, full_sheet)
    factor: Any = NA("memory type unknown", "unavailable") if is_na(mtype) else (
        derive.data_rate_factor(mtype) or NA(f"data-rate factor for {mtype} not verified", "unavailable")
    )
    bw, bw_formula = _dram_peak(shape.values["memory_clock_mhz"], shape.values["memory_bus_width_bits"], factor, mtype, mig_slice)
    fp32, fp32_formula = _fp32_peak(sm, lanes, shape.values["boost_clock_mhz"])
    comparisons = _against_sheet(sheet, bw, fp32, shape, cc, mig_slice, warnings) if sheet is not None else []

    health = read_health(nv, r.h, r.mh, t.gpu, r.no_nvml, warnings, notes) if full else None
    return DeviceReport(
        Identity(**ident.values, sources=ident.sources),
        Shape(**shape.values, sources=shape.sources),
        Derived(bw, bw_formula, factor, fp32, fp32_formula, tuple(comparisons)),
        health,
        sheet_match,
        tuple(warnings),
        tuple(notes),
    )


# ---------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------


def probe_devices(device: str | None = None, spec_dirs: Iterable[str] = (), *, full: bool = True,
                  cuda: bool = True) -> ProbeReport:
    """Probe the visible GPUs ``device`` names (``-i``: see :mod:`gpuwhy.device.select`;
    None or ``all``: every visible GPU), in nvidia-smi's order unless the selection gives one.

    ``spec_dirs`` are extra spec-sheet folders. ``full=False`` skips health and
    software (what :func:`device_sheet` needs is identity, shape and sheet). ``cuda=False``
    reads NVML alone, the CUDA driver left closed (:func:`~gpuwhy.device.select.visible_targets`):
    the CUDA ordinals and the driver's own figures are then n/a.

    Raises:
        NoDeviceError: no driver, no NVML and no CUDA driver, the kernel driver not
            loaded, ``CUDA_VISIBLE_DEVICES`` hiding every GPU, or no GPU (one line
            saying which).
        UsageError: ``device`` names no visible GPU; a spec folder is missing.
        SpecError: a malformed spec sheet.
    """
    from .select import choose

    spec_dirs = tuple(spec_dirs)
    with visible_targets(cuda) as vt:
        sel = choose(device, vt.listing, vt.cvd)
        notes = vt.notes + ([sel.note] if sel.note else [])
        chosen = [vt.targets[d.key] for d in sel.devices]
        reports = tuple(_build_device(t, vt.nv, vt.nv_na, vt.drv_na, spec_dirs, full) for t in chosen)
        software = None
        if full:
            archs = [parse_arch(d.identity.compute_capability).name for d in reports if not is_na(d.identity.compute_capability)]
            software = read_software(vt.nv, vt.nv_na, vt.drv, vt.drv_na, archs)
        return ProbeReport(reports, software, vt.cvd, tuple(notes))


def device_sheet(device: str | None = None, spec_dirs: Iterable[str] = ()) -> tuple[SheetChoice, DeviceReport]:
    """The sheet of the one visible GPU ``device`` names (``-i`` forms; None: the first), by
    :func:`~gpuwhy.device.sheet.sheet_for` on its NVML name and PCI id (MIG: scaled to the slice).

    Returns ``(choice, device report)``; ``choice.sheet`` is never None.

    Raises:
        NoDeviceError: no GPU, driver or NVML (the precise reason), or a GPU that
            no sheet matches (the message names it and the closest sheets), or a
            MIG slice whose share cannot be read.
        UsageError / SpecError: a missing spec folder or a malformed sheet; ``device`` names no GPU, or several.
    """
    rep = probe_devices(device, spec_dirs, full=False)
    if device is not None and len(rep.devices) > 1:
        names = "; ".join(f"{x.identity.nvml_index} {x.identity.name}" for x in rep.devices)
        raise UsageError(f"-i {device} names {len(rep.devices)} GPUs ({names}); this needs one")
    d = rep.devices[0]
    if d.sheet.sheet is None:
        name = d.identity.name if not is_na(d.identity.name) else "the GPU"
        raise NoDeviceError(f"found {name} but {d.sheet.note}")
    return d.sheet, d


def gpu_sheet(gpu=None, spec_dirs: Iterable[str] = ()) -> SheetChoice:
    """The sheet of ``gpu`` (a name the user gave, or a Sheet), else of the first visible GPU:
    what a command given no ``--gpu`` judges against.

    Raises:
        UsageError: ``gpu`` names no sheet; or no ``gpu`` and no GPU to probe (or none that
            a sheet matches): the message says to pass --gpu.
    """
    if gpu is not None:
        return sheet_for(gpu, spec_dirs=spec_dirs)
    try:
        return device_sheet(None, spec_dirs)[0]
    except NoDeviceError as exc:
        raise UsageError(f"no --gpu given and no GPU to probe ({exc}); pass --gpu NAME (see `gpuwhy specs list`)") from None
