"""`gpuwhy probe`: what each visible GPU is, from NVML and the CUDA driver.

:func:`probe_devices` builds a :class:`ProbeReport` (one :class:`DeviceReport` per
visible GPU, plus machine-wide :class:`Software` facts); :func:`gpu_sheet` is
the spec sheet other commands use: ``--gpu``'s, else the first visible GPU's
(matched by :func:`gpuwhy.device.sheet.sheet_for`).

Device numbering follows CUDA, not NVML: the CUDA driver applies
``CUDA_VISIBLE_DEVICES`` and each CUDA device is matched to its NVML device
by UUID (MIG devices by their ``MIG-`` UUID). Without a working CUDA driver the
``CUDA_VISIBLE_DEVICES`` rules are applied here by
:func:`resolve_cuda_visible_devices`.

Every field is a value or an :class:`~gpuwhy.device.nvml.NA` with its reason;
a value NVML cannot give is taken from the CUDA driver where it has one.

Raises :class:`~gpuwhy.errors.NoDeviceError` (exit 3) with one line saying which
of these it is: ``CUDA_VISIBLE_DEVICES`` hides every GPU, no NVIDIA driver (no
libcuda.so and no libnvidia-ml.so.1), the kernel driver is not loaded, or no GPU.
"""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..errors import NoDeviceError, UsageError
from . import derive
from .nvml import NA, MigDevice, is_na
from .sheet import SheetChoice, sheet_for

#: Where /proc is read from (tests point this at a folder of recorded files).
PROC = Path("/proc")

#: CUDA's documented rules for CUDA_VISIBLE_DEVICES (indices, UUIDs and prefixes, MIG UUIDs).
CVD_SOURCE = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#cuda-environment-variables"
WSL_SOURCE = "https://docs.nvidia.com/cuda/wsl-user-guide/index.html#known-limitations-for-linux-cuda-applications"
PERF_COUNTERS_SOURCE = "https://developer.nvidia.com/ERR_NVGPUCTRPERM"
WSL_LIMITS = (
    "NVML reports only part of its fields under WSL2 (expect n/a for clocks, processes, utilization)",
    "managed memory has no concurrent CPU/GPU access and no oversubscription; pinned host memory is limited",
    "GPU performance counters and some profiler features are limited; measured numbers include Windows' GPU scheduling",
)


# ---------------------------------------------------------------------------------
# CUDA_VISIBLE_DEVICES
# ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """A device CUDA could enumerate: a whole GPU (``GPU-…``) or a MIG device (``MIG-…``)."""

    uuid: str
    parent_uuid: str | None = None
    gpu_instance_id: int | None = None
    compute_instance_id: int | None = None

    @property
    def is_mig(self) -> bool:
        """True for a MIG device."""
        return self.uuid.lower().startswith("mig-")


@dataclass(frozen=True)
class VisibleSelection:
    """Result of applying ``CUDA_VISIBLE_DEVICES`` to a candidate list.

    ``indices`` are positions in the candidate list, in CUDA's order;
    ``stopped_at``/``why`` name the entry at which the list stopped, if any.
    """

    indices: tuple[int, ...]
    stopped_at: str | None = None
    why: str = ""


_INDEX_RE = re.compile(r"^\d+$")


def _entry_syntax_ok(entry: str) -> bool:
    e = entry.strip().lower()
    return bool(_INDEX_RE.match(e)) or e.startswith("gpu-") or e.startswith("mig-")


def resolve_cuda_visible_devices(value: str | None, candidates: Sequence[Candidate]) -> VisibleSelection:
    """Apply ``CUDA_VISIBLE_DEVICES`` the way the CUDA runtime does (source: :data:`CVD_SOURCE`).

    ``value`` None: every candidate, in order. Otherwise a comma-separated list of
    indices into ``candidates``, ``GPU-`` UUIDs or unique prefixes of them, ``MIG-``
    UUIDs or prefixes, or legacy ``MIG-GPU-<uuid>/<gi>/<ci>``; devices appear in
    the order listed. The list stops at the first entry that names no device (a
    negative or out-of-range index, an unknown or ambiguous UUID, a repeat, an
    empty entry): ``0,2,-1,1`` makes 0 and 2 visible; ``-1`` or an empty value
    hides everything.
    """
    if value is None:
        return VisibleSelection(tuple(range(len(candidates))))
    chosen: list[int] = []
    for raw in value.split(","):
        e = raw.strip()
        idx, why = _resolve_entry(e, candidates)
        if idx is None:
            return VisibleSelection(tuple(chosen), e, why)
        if idx in chosen:
            return VisibleSelection(tuple(chosen), e, "names a device already listed")
        chosen.append(idx)
    return VisibleSelection(tuple(chosen))


def _resolve_entry(e: str, candidates: Sequence[Candidate]) -> tuple[int | None, str]:
    low = e.lower()
    if not e:
        return None, "is empty"
    if _INDEX_RE.match(e):
        i = int(e)
        if i >= len(candidates):
            return None, f"is past the last device (there are {len(candidates)})"
        return i, ""
    if low.startswith("mig-gpu-"):
        parts = low[len("mig-"):].split("/")
        if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
            return None, "is not MIG-GPU-<uuid>/<gpu instance>/<compute instance>"
        hits = [
            i
            for i, c in enumerate(candidates)
            if c.is_mig
            and c.parent_uuid
            and c.parent_uuid.lower().startswith(parts[0])
            and c.gpu_instance_id == int(parts[1])
            and c.compute_instance_id == int(parts[2])
        ]
    elif low.startswith("gpu-") or low.startswith("mig-"):
        hits = [i for i, c in enumerate(candidates) if c.uuid.lower().startswith(low)]
    else:
        return None, "is neither a device index nor a GPU-/MIG- UUID"
    if not hits:
        return None, "matches no device's UUID"
    if len(hits) > 1:
        return None, f"matches {len(hits)} devices' UUIDs (give more digits)"
    return hits[0], ""


def cvd_hides_all_message(value: str | None) -> str | None:
    """The one-line reason when ``CUDA_VISIBLE_DEVICES`` hides every GPU by its syntax alone, else None.

    Catches an empty value and a first entry that can name no device (``-1``,
    ``none``, ``,0``), before any library is loaded.
    """
    if value is None:
        return None
    if not value.strip():
        return "CUDA_VISIBLE_DEVICES is set but empty, which hides every GPU from CUDA; unset it or list a device index or UUID"
    first = value.split(",")[0].strip()
    if not _entry_syntax_ok(first):
        return (
            f"CUDA_VISIBLE_DEVICES={value!r} hides every GPU from CUDA (the list stops at its first entry {first!r}, "
            f"which names no device); unset it or list a device index or UUID"
        )
    return None


# ---------------------------------------------------------------------------------
# Report dataclasses
# ---------------------------------------------------------------------------------


def _plain(v: Any) -> Any:
    if is_na(v):
        return None
    if hasattr(v, "to_dict"):
        return v.to_dict()
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    return v


def _fields_dict(obj: Any) -> dict:
    """Dataclass fields as plain data; NA fields become null and their reasons go under ``"n/a"``."""
    out: dict[str, Any] = {}
    na: dict[str, str] = {}
    for f in dataclasses.fields(obj):
        v = getattr(obj, f.name)
        if is_na(v):
            out[f.name] = None
            na[f.name] = v.reason
        else:
            out[f.name] = _plain(v)
    if na:
        out["n/a"] = na
    return out


@dataclass(frozen=True)
class MigSlice:
    """A MIG device: its share of the parent's SMs and memory (shares in 0..1)."""

    uuid: str | NA
    profile: str | NA
    sm_count: int | NA
    memory_bytes: int | NA
    gpu_instance_id: int | NA
    compute_instance_id: int | NA
    parent_sm_count: int | NA = NA("not read", "unavailable")
    parent_memory_bytes: int | NA = NA("not read", "unavailable")
    sm_share: float | NA = NA("not read", "unavailable")
    memory_share: float | NA = NA("not read", "unavailable")

    def to_dict(self) -> dict:
        """Plain data (NA as null, reasons under ``n/a``)."""
        return _fields_dict(self)


@dataclass(frozen=True)
class Identity:
    """Who the device is. ``cuda_ordinal`` is its CUDA number (after CUDA_VISIBLE_DEVICES)."""

    cuda_ordinal: int | NA
    nvml_index: int | NA
    name: str | NA
    uuid: str | NA
    pci_bus_id: str | NA
    pci_device_id: str | NA
    brand: str | NA
    compute_capability: str | NA
    architecture: str | NA
    mig: MigSlice | None
    sources: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        """Plain data (NA as null, reasons under ``n/a``); ``sources`` names where each value came from."""
        return _fields_dict(self)


@dataclass(frozen=True)
class Shape:
    """The device's shape. Sizes in bytes, clocks in MHz; for a MIG slice, SMs and memory are the slice's."""

    sm_count: int | NA
    fp32_lanes_per_sm: int | NA
    cuda_cores: int | NA
    max_threads_per_sm: int | NA
    shared_mem_per_sm_bytes: int | NA
    l2_bytes: int | NA
    memory_total_bytes: int | NA
    memory_free_bytes: int | NA
    memory_type: str | NA
    memory_bus_width_bits: int | NA
    memory_clock_mhz: float | NA
    memory_clock_current_mhz: float | NA
    sm_clock_max_mhz: float | NA
    sm_clock_current_mhz: float | NA
    boost_clock_mhz: float | NA
    sources: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        """Plain data (NA as null, reasons under ``n/a``)."""
        return _fields_dict(self)


@dataclass(frozen=True)
class Derived:
    """Peaks derived from the shape, beside the sheet's.

    ``dram_bandwidth_gbs`` in GB/s (1e9 B/s), ``fp32_tflops`` in TFLOP/s; the
    formulas are spelled out with the numbers used.
    """

    dram_bandwidth_gbs: float | NA
    dram_formula: str
    data_rate_factor: int | NA
    fp32_tflops: float | NA
    fp32_formula: str
    comparisons: tuple[derive.SheetComparison, ...] = ()

    def to_dict(self) -> dict:
        """Plain data (NA as null, reasons under ``n/a``)."""
        return _fields_dict(self)


@dataclass(frozen=True)
class GpuProcess:
    """A process with a CUDA context on the GPU."""

    pid: int
    name: str | NA
    used_memory_bytes: int | None

    def to_dict(self) -> dict:
        """Plain data."""
        return _fields_dict(self)


@dataclass(frozen=True)
class Health:
    """State that makes measurements trustworthy or not. Temperatures in C, power in W."""

    temperature_c: int | NA
    power_draw_w: float | NA
    power_limit_w: float | NA
    clock_event_reasons: tuple[str, ...] | NA
    ecc_enabled: bool | NA
    ecc_pending: bool | NA
    ecc_volatile_uncorrected: int | NA
    retired_pages_pending: bool | NA
    remapped_rows_pending: bool | NA
    remapped_rows_failure: bool | NA
    persistence_mode: bool | NA
    compute_mode: str | NA
    pcie_gen_current: int | NA
    pcie_gen_max: int | NA
    pcie_gen_gpu_max: int | NA
    pcie_width_current: int | NA
    pcie_width_max: int | NA
    utilization_gpu_pct: int | NA
    mig_mode: bool | NA
    mig_mode_pending: bool | NA
    mig_instances: tuple[MigSlice, ...] | NA
    processes: tuple[GpuProcess, ...] | NA

    def to_dict(self) -> dict:
        """Plain data (NA as null, reasons under ``n/a``)."""
        return _fields_dict(self)


@dataclass(frozen=True)
class DeviceReport:
    """Everything `gpuwhy probe` says about one device. ``health`` is None for a quick probe."""

    identity: Identity
    shape: Shape
    derived: Derived
    health: Health | None
    sheet: SheetChoice
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        """Plain data for ``--json``."""
        return {
            "identity": self.identity.to_dict(),
            "shape": self.shape.to_dict(),
            "derived": self.derived.to_dict(),
            "health": self.health.to_dict() if self.health is not None else None,
            "sheet": self.sheet.to_dict(),
            "warnings": list(self.warnings),
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class Software:
    """Driver, CUDA and NVRTC versions, profiler access and WSL2 (machine-wide)."""

    driver_version: str | NA
    cuda_driver_version: int | NA
    cuda_driver_version_text: str | NA
    nvrtc_version: str | NA
    nvml: str
    cuda_driver: str
    perf_counters: str | NA
    perf_counters_open: bool | NA
    wsl2: bool
    wsl2_limits: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        """Plain data (NA as null, reasons under ``n/a``)."""
        return _fields_dict(self)


@dataclass(frozen=True)
class ProbeReport:
    """One probe: the devices (CUDA order) and the machine's software facts."""

    devices: tuple[DeviceReport, ...]
    software: Software | None
    cuda_visible_devices: str | None
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        """``{"devices": [...], "software": {...}, "cuda_visible_devices": ..., "notes": [...]}``."""
        return {
            "devices": [d.to_dict() for d in self.devices],
            "software": self.software.to_dict() if self.software is not None else None,
            "cuda_visible_devices": self.cuda_visible_devices,
            "notes": list(self.notes),
        }


# ---------------------------------------------------------------------------------
# Enumeration and matching
# ---------------------------------------------------------------------------------


@dataclass
class _NvGpu:
    index: int
    handle: Any
    uuid: str | NA
    mig_enabled: bool
    migs: list[MigDevice]


@dataclass
class _Target:
    ordinal: int | NA
    drv: Any  # DriverDevice | None
    gpu: _NvGpu | None
    mig: MigDevice | None
    mig_from_driver: bool = False  # a MIG slice CUDA sees whose NVML MIG device was not identified
    notes: list[str] = field(default_factory=list)


def _enumerate_nvml(nv) -> list[_NvGpu] | NA:
    n = nv.device_count()
    if is_na(n):
        return n
    gpus: list[_NvGpu] = []
    for i in range(n):
        h = nv.handle(i)
        if is_na(h):
            continue
        mode = nv.mig_mode(h)
        enabled = (not is_na(mode)) and mode[0]
        migs = nv.mig_devices(h) if enabled else []
        gpus.append(_NvGpu(i, h, nv.uuid(h), enabled, [] if is_na(migs) else migs))
    return gpus


def _candidates(gpus: list[_NvGpu]) -> list[tuple[Candidate, _NvGpu, MigDevice | None]]:
    out = []
    for g in gpus:
        guuid = g.uuid if not is_na(g.uuid) else f"GPU-unknown-{g.index}"
        if g.mig_enabled:
            for m in g.migs:
                muuid = m.uuid if not is_na(m.uuid) else f"MIG-unknown-{g.index}"
                gi = m.gpu_instance_id if isinstance(m.gpu_instance_id, int) else None
                ci = m.compute_instance_id if isinstance(m.compute_instance_id, int) else None
                out.append((Candidate(muuid, guuid, gi, ci), g, m))
        else:
            out.append((Candidate(guuid), g, None))
    return out


def _bus_key(bus: Any) -> tuple[int, ...] | None:
    if is_na(bus) or not isinstance(bus, str):
        return None
    m = re.match(r"^([0-9a-fA-F]+):([0-9a-fA-F]+):([0-9a-fA-F]+)\.([0-9a-fA-F]+)$", bus.strip())
    return tuple(int(x, 16) for x in m.groups()) if m else None


def _match_driver_devices(devs: list, gpus: list[_NvGpu], nv) -> list[_Target]:
    by_key: dict[str, tuple[_NvGpu, MigDevice | None]] = {}
    for g in gpus:
        if not is_na(g.uuid):
            by_key[derive.uuid_key(g.uuid)] = (g, None)
        for m in g.migs:
            if not is_na(m.uuid):
                by_key[derive.uuid_key(m.uuid)] = (g, m)
    targets: list[_Target] = []
    for d in devs:
        t = _Target(d.ordinal, d, None, None)
        hit = by_key.get(derive.uuid_key(d.uuid_hex)) if not is_na(d.uuid_hex) else None
        if hit is None and nv is not None:
            bk = _bus_key(d.pci_bus_id)
            same_bus = [g for g in gpus if bk is not None and _bus_key(nv.pci(g.handle).bus_id) == bk]
            if len(same_bus) == 1:
                hit = (same_bus[0], None)
                t.notes.append("matched to NVML by PCI bus id (the CUDA UUID matched none)")
        if hit is not None:
            t.gpu, t.mig = hit
            if t.mig is None and t.gpu.mig_enabled:
                t.mig = _guess_mig(d, t.gpu)
                t.mig_from_driver = t.mig is None
        elif nv is not None:
            t.notes.append("no NVML device has this CUDA device's UUID: NVML fields are n/a")
        if t.mig is None and not t.mig_from_driver and _is_mig_name(d.name):
            t.mig_from_driver = True  # NVML cannot say; the driver's name does
        targets.append(t)
    return targets


def _is_mig_name(name: Any) -> bool:
    return isinstance(name, str) and re.search(r"\sMIG\s+\S+$", name) is not None


def _guess_mig(d, g: _NvGpu) -> MigDevice | None:
    """CUDA reported the parent's UUID for a MIG slice: pick the MIG device of the same size, if unique."""
    if not isinstance(d.sm_count, int):
        return None
    same = [m for m in g.migs if isinstance(m.sm_count, int) and m.sm_count == d.sm_count]
    if len(same) > 1 and not is_na(d.total_memory_bytes):
        same = [m for m in same if isinstance(m.memory_bytes, int) and abs(m.memory_bytes - d.total_memory_bytes) <= 0.02 * m.memory_bytes]
    return same[0] if len(same) == 1 else None


def _select(device: str | None, targets: list[_Target], uuid_of) -> list[_Target]:
    if device is None:
        return targets
    d = device.strip()
    listing = ", ".join(f"{i}: {uuid_of(t)}" for i, t in enumerate(targets))
    if _INDEX_RE.match(d):
        i = int(d)
        if i >= len(targets):
            raise UsageError(f"--device {d}: there are {len(targets)} visible GPU(s) ({listing}); pass an index below {len(targets)} or a UUID")
        return [targets[i]]
    want = d.lower()
    want_prefix = want[:4] if want[:4] in ("gpu-", "mig-") else None
    key = derive.uuid_key(d)
    if not key:
        raise UsageError(f"--device {d!r} is neither an index nor a UUID; visible GPUs: {listing}")
    hits = []
    for t in targets:
        u = uuid_of(t)
        if not isinstance(u, str):
            continue
        if want_prefix and not u.lower().startswith(want_prefix):
            continue
        if derive.uuid_key(u).startswith(key):
            hits.append(t)
    if not hits:
        raise UsageError(f"--device {d!r} matches no visible GPU's UUID; visible GPUs: {listing}")
    if len(hits) > 1:
        raise UsageError(f"--device {d!r} matches {len(hits)} GPUs; give more of the UUID ({listing})")
    return hits


# ---------------------------------------------------------------------------------
# Building one device report
# ---------------------------------------------------------------------------------


def _pick(*pairs: tuple[str, Any]) -> tuple[Any, str | None]:
    """First non-NA value of (source, value) pairs -> (value, source); all NA -> (NA of all reasons, None)."""
    reasons = []
    for src, v in pairs:
        if not is_na(v):
            return v, src
        reasons.append(f"{src}: {v.reason}")
    return NA("; ".join(reasons), "unavailable"), None


def _mig_profile(name: Any) -> str | NA:
    if is_na(name):
        return name
    m = re.search(r"\bMIG\s+(\S+)", name)
    return m.group(1) if m else name


def _base_name(name: Any) -> Any:
    """Drop a MIG suffix from a CUDA device name (``NVIDIA A100-SXM4-40GB MIG 1g.5gb``)."""
    if is_na(name):
        return name
    return re.sub(r"\s+MIG\s+\S+$", "", name).strip() or name


def _match_sheet(name: Any, pci_id: Any, mig: MigSlice | None, spec_dirs) -> SheetChoice:
    if is_na(name):
        return SheetChoice(None, "none", f"no sheet matched: the device name is unknown ({name.reason})")
    return sheet_for(nvml_name=name, pci_device_id=None if is_na(pci_id) else pci_id, mig=mig, spec_dirs=spec_dirs)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _process_name(nv, pid: int) -> str | NA:
    name = nv.process_name(pid) if nv is not None else NA("NVML unavailable", "unavailable")
    if not is_na(name):
        return name
    comm = _read(PROC / str(pid) / "comm")
    if comm and comm.strip():
        return comm.strip()
    return NA("name not visible (another container or user?)", "not_supported")


def _build_device(t: _Target, nv, nv_na: NA | None, drv_na: NA | None, spec_dirs, full: bool) -> DeviceReport:
    warnings: list[str] = []
    notes: list[str] = list(t.notes)
    no_nvml = nv_na or NA("no NVML device matched", "unavailable")
    no_drv = drv_na or NA("CUDA driver unavailable", "unavailable")
    d = t.drv
    g = t.gpu
    h = g.handle if (g is not None and nv is not None) else None
    mh = t.mig.handle if (t.mig is not None and nv is not None) else None

    def nvq(fn: str, *args, handle: Any = None) -> Any:
        hh = handle if handle is not None else h
        if hh is None:
            return no_nvml
        return getattr(nv, fn)(hh, *args)

    def dv(attr: str) -> Any:
        return getattr(d, attr) if d is not None else no_drv

    # ---- identity
    src: dict[str, str] = {}
    name, s = _pick(("NVML", nvq("name")), ("CUDA driver", _base_name(dv("name"))))
    src["name"] = s or "n/a"
    if mh is not None:
        uuid, s = _pick(("NVML", nv.uuid(mh)), ("CUDA driver", dv("uuid_hex")))
    elif t.mig_from_driver and g is not None:
        uuid, s = NA("MIG slice: CUDA reports the parent GPU's UUID and no NVML MIG device matched", "unavailable"), None
    elif t.mig_from_driver:
        uuid, s = _pick(("CUDA driver", dv("uuid_hex")))
    else:
        uuid, s = _pick(("NVML", nvq("uuid")), ("CUDA driver", dv("uuid_hex")))
    if s == "CUDA driver" and isinstance(uuid, str) and not uuid.startswith(("GPU-", "MIG-")):
        # CUDA 11.4+ reports a MIG device's own UUID, with no prefix
        uuid = ("MIG-" if (t.mig is not None or t.mig_from_driver) else "GPU-") + uuid
    src["uuid"] = s or "n/a"
    pci = nvq("pci") if h is not None else None
    bus, s = _pick(("NVML", pci.bus_id if pci is not None else no_nvml), ("CUDA driver", dv("pci_bus_id")))
    src["pci_bus_id"] = s or "n/a"
    pci_id, s = _pick(("NVML", pci.device_id if pci is not None else no_nvml), ("CUDA driver", dv("pci_device_id")))
    src["pci_device_id"] = s or "n/a"
    brand = nvq("brand")
    cc, s = _pick(("NVML", nvq("compute_capability")), ("CUDA driver", dv("compute_capability")))
    src["compute_capability"] = s or "n/a"
    arch: Any = NA("compute capability unknown", "unavailable") if is_na(cc) else (
        derive.architecture_name(cc) or NA(f"no architecture known for compute capability {cc}", "unavailable")
    )
    lanes: Any = NA("compute capability unknown", "unavailable") if is_na(cc) else (
        derive.fp32_lanes_per_sm(cc) or NA(f"FP32 lanes per SM unknown for compute capability {cc}", "unavailable")
    )

    # ---- SMs (slice for MIG) and the full GPU's SM count
    cores = nvq("num_cores")
    full_sm_from_cores: Any = (
        cores // lanes if (not is_na(cores) and not is_na(lanes) and cores % lanes == 0) else NA("needs NVML's core count and the lanes table", "unavailable")
    )
    is_mig = t.mig is not None or t.mig_from_driver
    if is_mig:
        mig_sm = t.mig.sm_count if t.mig is not None else NA("MIG device not identified in NVML", "unavailable")
        sm, s = _pick(("CUDA driver", dv("sm_count")), ("NVML MIG attributes", mig_sm))
    else:
        attrs = nvq("attributes")
        attr_sm = attrs["sm_count"] if isinstance(attrs, dict) else attrs
        sm, s = _pick(("CUDA driver", dv("sm_count")), ("NVML attributes", attr_sm), ("NVML cores / lanes", full_sm_from_cores))
    shape_src: dict[str, str] = {"sm_count": s or "n/a"}
    if not is_na(cores) and not is_na(sm) and not is_na(lanes) and not is_mig and cores != sm * lanes:
        notes.append(f"NVML reports {cores} CUDA cores but {sm} SMs x {lanes} lanes = {sm * lanes}: check the lanes table for cc {cc}")

    # ---- memory
    if mh is not None:
        mem = nv.memory(mh)
    else:
        mem = nvq("memory")
    mem_total_nv = mem.total_bytes if not isinstance(mem, NA) else mem
    if t.mig_from_driver and t.mig is None:
        mem_total_nv = NA("MIG device not identified in NVML", "unavailable")
    mem_total, s = _pick(("NVML", mem_total_nv), ("CUDA driver", dv("total_memory_bytes")))
    shape_src["memory_total_bytes"] = s or "n/a"
    mem_free = mem.free_bytes if not isinstance(mem, NA) else mem
    if t.mig_from_driver and t.mig is None:
        mem_free = NA("MIG device not identified in NVML", "unavailable")
    bus_w, s = _pick(("NVML", nvq("bus_width")), ("CUDA driver", dv("bus_width_bits")))
    shape_src["memory_bus_width_bits"] = s or "n/a"
    mclk, s = _pick(("NVML max", nvq("max_clock", "mem")), ("CUDA driver", dv("memory_clock_mhz")))
    shape_src["memory_clock_mhz"] = s or "n/a"
    mclk_cur = nvq("clock", "mem")
    smax, s = _pick(("NVML max", nvq("max_clock", "sm")), ("CUDA driver", dv("clock_mhz")))
    shape_src["sm_clock_max_mhz"] = s or "n/a"
    scur = nvq("clock", "sm")
    boost, s = _pick(
        ("NVML max customer boost", nvq("customer_boost_clock")),
        ("CUDA driver clock rate", dv("clock_mhz")),
        ("NVML max SM clock", nvq("max_clock", "sm")),
    )
    shape_src["boost_clock_mhz"] = s or "n/a"

    # ---- MIG slice and shares
    mig_slice: MigSlice | None = None
    if is_mig:
        parent_mem = nvq("memory").total_bytes if h is not None else no_nvml
        parent_sm, _ = _pick(("NVML cores / lanes", full_sm_from_cores))
        m = t.mig
        mig_slice = MigSlice(
            uuid=uuid,
            profile=_mig_profile(m.name if m is not None else dv("name")),
            sm_count=sm,
            memory_bytes=mem_total,
            gpu_instance_id=m.gpu_instance_id if m is not None else NA("MIG device not identified", "unavailable"),
            compute_instance_id=m.compute_instance_id if m is not None else NA("MIG device not identified", "unavailable"),
            parent_sm_count=parent_sm,
            parent_memory_bytes=parent_mem,
        )

    # ---- sheet (sheet-based fallbacks for the MIG parent's size)
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
    sheet = sheet_match.sheet
    if sheet is None and mig_slice is None:
        warnings.append(sheet_match.note)

    # ---- memory type and derived peaks
    integrated = dv("integrated")
    if full_sheet is not None:
        mtype: Any = full_sheet.memory_type
        shape_src["memory_type"] = f"sheet {full_sheet.name}"
    else:
        fam = None if is_na(cc) else derive.memory_family_from_cc(cc, integrated if isinstance(integrated, bool) else None)
        mtype = fam or NA("no sheet, and not guessable from the compute capability", "unavailable")
        shape_src["memory_type"] = "guessed from compute capability" if fam else "n/a"
    factor: Any = NA("memory type unknown", "unavailable") if is_na(mtype) else (
        derive.data_rate_factor(mtype) or NA(f"data-rate factor for {mtype} not verified", "unavailable")
    )
    bw: Any
    if any(is_na(v) for v in (mclk, bus_w, factor)):
        bw = NA("needs " + ", ".join(w for w, v in (("memory clock", mclk), ("bus width", bus_w), ("data-rate factor", factor)) if is_na(v)), "unavailable")
        bw_formula = "n/a"
    else:
        bw = derive.dram_bandwidth_bytes_per_s(mclk, bus_w, factor) / 1e9
        bw_formula = f"{mclk:g} MHz x {factor} ({mtype}) x {bus_w} bits / 8"
        if mig_slice is not None:
            if is_na(mig_slice.memory_share):
                bw = NA("MIG slice: memory share unknown", "unavailable")
                bw_formula = "n/a"
            else:
                bw *= mig_slice.memory_share
                bw_formula += f" x {mig_slice.memory_share:.3f} (MIG memory share)"
    fp32: Any
    if any(is_na(v) for v in (sm, lanes, boost)):
        fp32 = NA("needs " + ", ".join(w for w, v in (("SM count", sm), ("lanes per SM", lanes), ("boost clock", boost)) if is_na(v)), "unavailable")
        fp32_formula = "n/a"
    else:
        fp32 = derive.fp32_peak_flops(sm, lanes, boost) / 1e12
        fp32_formula = f"{sm} SMs x {lanes} lanes x 2 x {boost:g} MHz"
    comparisons: list[derive.SheetComparison] = []
    if sheet is not None:
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
                    hint=f"a wrong sheet match, or a clock read ({shape_src['boost_clock_mhz']}) that is not the boost clock",
                )
            )
        for c in comparisons:
            if not c.ok:
                warnings.append(c.message)
        if not is_na(sm) and mig_slice is None and sm != sheet.sm_count:
            warnings.append(f"the {sheet.name} sheet says {sheet.sm_count} SMs, the device has {sm}: a different SKU or a wrong match")
        if not is_na(cc) and cc != sheet.compute_capability:
            warnings.append(f"the {sheet.name} sheet says compute capability {sheet.compute_capability}, the device reports {cc}")

    identity = Identity(
        cuda_ordinal=t.ordinal,
        nvml_index=g.index if g is not None else no_nvml,
        name=name,
        uuid=uuid,
        pci_bus_id=bus,
        pci_device_id=pci_id,
        brand=brand,
        compute_capability=cc,
        architecture=arch,
        mig=mig_slice,
        sources=src,
    )
    shape = Shape(
        sm_count=sm,
        fp32_lanes_per_sm=lanes,
        cuda_cores=cores if not is_mig else NA("MIG slice: see SMs x lanes", "unavailable"),
        max_threads_per_sm=dv("max_threads_per_sm"),
        shared_mem_per_sm_bytes=dv("shared_mem_per_sm_bytes"),
        l2_bytes=dv("l2_bytes"),
        memory_total_bytes=mem_total,
        memory_free_bytes=mem_free,
        memory_type=mtype,
        memory_bus_width_bits=bus_w,
        memory_clock_mhz=mclk,
        memory_clock_current_mhz=mclk_cur,
        sm_clock_max_mhz=smax,
        sm_clock_current_mhz=scur,
        boost_clock_mhz=boost,
        sources=shape_src,
    )
    derived = Derived(
        dram_bandwidth_gbs=bw,
        dram_formula=bw_formula,
        data_rate_factor=factor,
        fp32_tflops=fp32,
        fp32_formula=fp32_formula,
        comparisons=tuple(comparisons),
    )
    health = _health(nv, h, mh, g, no_nvml, warnings, notes) if full else None
    return DeviceReport(identity, shape, derived, health, sheet_match, tuple(warnings), tuple(notes))


def _health(nv, h, mh, g: _NvGpu | None, no_nvml: NA, warnings: list[str], notes: list[str]) -> Health:
    def q(fn: str, *args, handle: Any = None) -> Any:
        hh = handle if handle is not None else h
        if hh is None:
            return no_nvml
        return getattr(nv, fn)(hh, *args)

    mask = q("clock_event_reasons")
    reasons: Any = mask if is_na(mask) else derive.decode_clock_event_reasons(mask)
    util = q("utilization_gpu_pct")
    idle = (not is_na(mask) and bool(mask & 0x1)) or (not is_na(util) and util == 0)
    if not is_na(mask):
        limiting = derive.limiting_clock_events(mask)
        if limiting:
            warnings.append(f"clocks are being held down: {', '.join(limiting)}; measurements now will read low")
    ecc = q("ecc_mode")
    ecc_on: Any = ecc if is_na(ecc) else ecc[0]
    ecc_pending: Any = ecc if is_na(ecc) else ecc[1]
    if ecc_on is True:
        ecc_err = q("ecc_volatile_uncorrected")
    elif ecc_on is False:
        ecc_err = NA("ECC is off", "not_supported")
    else:
        ecc_err = ecc_on
    if isinstance(ecc_err, int) and ecc_err > 0:
        warnings.append(f"{ecc_err} uncorrected ECC error(s) since the driver loaded: check `nvidia-smi -q -d ECC`; results may be wrong")
    if ecc_on is not ecc_pending and not is_na(ecc_on) and not is_na(ecc_pending):
        notes.append(f"ECC will be {'on' if ecc_pending else 'off'} after the next GPU reset")
    retired = q("retired_pages_pending")
    if retired is True:
        warnings.append("retired memory pages are pending: reset the GPU (or reboot) to retire them")
    rr = q("remapped_rows")
    rr_pending: Any = rr if is_na(rr) else rr[2]
    rr_fail: Any = rr if is_na(rr) else rr[3]
    if rr_pending is True:
        warnings.append("memory row remapping is pending: reset the GPU to apply it")
    if rr_fail is True:
        warnings.append("memory row remapping failed: the GPU needs service (see `nvidia-smi -q -d ROW_REMAPPER`)")
    persist = q("persistence_mode")
    if persist is False:
        notes.append("persistence mode is off: the first CUDA call after idle pays driver start-up (`sudo nvidia-smi -pm 1`)")
    cmode = q("compute_mode")
    if cmode == "Prohibited":
        warnings.append("compute mode is Prohibited: no CUDA context can be created on this GPU")
    elif cmode == "Exclusive Process":
        notes.append("compute mode is Exclusive Process: one process at a time may use this GPU")
    pcie = q("pcie") if h is not None else {k: no_nvml for k in ("gen_current", "gen_max", "gen_gpu_max", "width_current", "width_max")}
    for level, msg in derive.pcie_link_findings(
        None if is_na(pcie["gen_current"]) else pcie["gen_current"],
        None if is_na(pcie["gen_max"]) else pcie["gen_max"],
        None if is_na(pcie["width_current"]) else pcie["width_current"],
        None if is_na(pcie["width_max"]) else pcie["width_max"],
        idle=idle,
    ):
        (warnings if level == "warning" else notes).append(msg)
    if not any(is_na(pcie[k]) for k in ("gen_max", "gen_gpu_max")) and pcie["gen_max"] < pcie["gen_gpu_max"]:
        notes.append(f"the GPU supports PCIe gen {pcie['gen_gpu_max']} but the slot/host links at most gen {pcie['gen_max']}")
    mig = q("mig_mode")
    mig_on: Any = mig if is_na(mig) else mig[0]
    mig_pending: Any = mig if is_na(mig) else mig[1]
    if not is_na(mig_on) and mig_on != mig_pending:
        notes.append(f"MIG mode will be {'on' if mig_pending else 'off'} after the next GPU reset")
    if g is not None and g.mig_enabled:
        instances: Any = tuple(
            MigSlice(m.uuid, _mig_profile(m.name), m.sm_count, m.memory_bytes, m.gpu_instance_id, m.compute_instance_id) for m in g.migs
        )
    elif is_na(mig_on):
        instances = mig_on
    else:
        instances = ()
    procs_raw = q("processes", handle=mh) if mh is not None else q("processes")
    if is_na(procs_raw) and mh is not None:
        procs_raw = q("processes")
    if is_na(procs_raw):
        procs: Any = procs_raw
    else:
        me = os.getpid()
        procs = tuple(GpuProcess(p.pid, _process_name(nv, p.pid), p.used_memory_bytes) for p in procs_raw if p.pid != me)
        if procs:
            who = ", ".join(f"{p.pid} ({p.name if not is_na(p.name) else '?'})" for p in procs[:5])
            more = f" and {len(procs) - 5} more" if len(procs) > 5 else ""
            warnings.append(f"{len(procs)} other process(es) use this GPU: {who}{more}; benchmarks on a busy GPU are noise")
        elif not is_na(util) and util > 10:
            warnings.append(f"the GPU is {util}% busy with no process visible here (another container?); benchmarks on a busy GPU are noise")
    return Health(
        temperature_c=q("temperature_c"),
        power_draw_w=q("power_w"),
        power_limit_w=q("power_limit_w"),
        clock_event_reasons=reasons,
        ecc_enabled=ecc_on,
        ecc_pending=ecc_pending,
        ecc_volatile_uncorrected=ecc_err,
        retired_pages_pending=retired,
        remapped_rows_pending=rr_pending,
        remapped_rows_failure=rr_fail,
        persistence_mode=persist,
        compute_mode=cmode,
        pcie_gen_current=pcie["gen_current"],
        pcie_gen_max=pcie["gen_max"],
        pcie_gen_gpu_max=pcie["gen_gpu_max"],
        pcie_width_current=pcie["width_current"],
        pcie_width_max=pcie["width_max"],
        utilization_gpu_pct=util,
        mig_mode=mig_on,
        mig_mode_pending=mig_pending,
        mig_instances=instances,
        processes=procs,
    )


# ---------------------------------------------------------------------------------
# Software
# ---------------------------------------------------------------------------------


def perf_counter_access(params_text: str | None, euid: int) -> tuple[str | NA, bool | NA]:
    """(words, open_to_this_user) from the text of /proc/driver/nvidia/params.

    ``RmProfilingAdminOnly: 1`` restricts GPU performance counters to admin users
    (Nsight Compute then fails with ERR_NVGPUCTRPERM, source
    :data:`PERF_COUNTERS_SOURCE`); root is always allowed.
    """
    if params_text is None:
        return NA("/proc/driver/nvidia/params not present", "not_supported"), NA("unknown", "not_supported")
    m = re.search(r"^\s*RmProfilingAdminOnly\s*:\s*(\d+)", params_text, re.M)
    if not m:
        return NA("RmProfilingAdminOnly not in /proc/driver/nvidia/params", "not_supported"), NA("unknown", "not_supported")
    if m.group(1) == "0":
        return "open to all users (RmProfilingAdminOnly=0)", True
    if euid == 0:
        return "admin only (RmProfilingAdminOnly=1); this process is root, so profilers can read them", True
    return (
        f"admin only (RmProfilingAdminOnly=1): Nsight Compute will fail with ERR_NVGPUCTRPERM for this user; see {PERF_COUNTERS_SOURCE}",
        False,
    )


def is_wsl2(proc_version: str | None) -> bool:
    """True when /proc/version names Microsoft's kernel (WSL2)."""
    return bool(proc_version) and "microsoft" in proc_version.lower()


def _software(nv, nv_na: NA | None, drv, drv_na: NA | None, archs: list[str]) -> Software:
    warnings: list[str] = []
    drv_ver: Any = nv.driver_version() if nv is not None else nv_na
    if is_na(drv_ver):
        txt = _read(PROC / "driver" / "nvidia" / "version")
        m = re.search(r"Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)", txt or "")
        if m:
            drv_ver = m.group(1)
    cuda_ver, _ = _pick(
        ("CUDA driver", drv.version() if drv is not None else drv_na),
        ("NVML", nv.cuda_driver_version() if nv is not None else nv_na),
    )
    cuda_txt: Any = cuda_ver if is_na(cuda_ver) else derive.cuda_version_text(cuda_ver)
    from .driver import nvrtc_version

    nvrtc = nvrtc_version()
    nvrtc_txt: Any = nvrtc if is_na(nvrtc) else f"{nvrtc[0]}.{nvrtc[1]}"
    if not is_na(nvrtc) and not is_na(cuda_ver) and derive.nvrtc_newer_than_driver(nvrtc, cuda_ver):
        arch = ", ".join(sorted(set(archs))) or "the GPU's exact arch"
        warnings.append(
            f"NVRTC {nvrtc_txt} is newer than the driver's CUDA {cuda_txt}: PTX it emits will not load "
            f"(CUDA_ERROR_UNSUPPORTED_PTX_VERSION); compile to cubin for the exact arch ({arch})"
        )
    perf, perf_open = perf_counter_access(_read(PROC / "driver" / "nvidia" / "params"), os.geteuid() if hasattr(os, "geteuid") else -1)
    if perf_open is False:
        warnings.append("GPU performance counters are admin-only for this user: `ncu` profiling will fail (ERR_NVGPUCTRPERM)")
    wsl = is_wsl2(_read(PROC / "version"))
    return Software(
        driver_version=drv_ver,
        cuda_driver_version=cuda_ver,
        cuda_driver_version_text=cuda_txt,
        nvrtc_version=nvrtc_txt,
        nvml="ok" if nv is not None else f"unavailable: {nv_na.reason}",
        cuda_driver="ok" if drv is not None else f"unavailable: {drv_na.reason}",
        perf_counters=perf,
        perf_counters_open=perf_open,
        wsl2=wsl,
        wsl2_limits=WSL_LIMITS if wsl else (),
        warnings=tuple(warnings),
    )


# ---------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------


def _no_device_message(nv_na: NA | None, drv_na: NA | None, cvd: str | None, nvml_gpus: int | None) -> str:
    kinds = {nv_na.kind if nv_na else "ok", drv_na.kind if drv_na else "ok"}
    nvr = nv_na.reason if nv_na else f"NVML sees {nvml_gpus} GPU(s)"
    dvr = drv_na.reason if drv_na else "ok"
    if cvd is not None and (nvml_gpus or 0) > 0:
        return (
            f"CUDA_VISIBLE_DEVICES={cvd!r} hides every GPU from CUDA (NVML sees {nvml_gpus} GPU(s); CUDA driver: {dvr}); "
            f"unset it or list a device index or UUID"
        )
    if nv_na and drv_na and nv_na.kind == "library_not_found" and drv_na.kind == "library_not_found":
        return "no NVIDIA driver on this machine: neither libcuda.so (CUDA driver) nor libnvidia-ml.so.1 (NVML) can be loaded; install the NVIDIA driver or run on a GPU machine"
    if "driver_not_loaded" in kinds:
        return f"the NVIDIA kernel driver is not loaded (NVML: {nvr}; CUDA driver: {dvr}); check `nvidia-smi` and `lsmod | grep nvidia`"
    if nv_na and drv_na and {nv_na.kind, drv_na.kind} <= {"not_installed"}:
        return "neither nvidia-ml-py nor cuda-bindings is installed; reinstall gpuwhy with its dependencies"
    if nvml_gpus == 0 or (drv_na and drv_na.kind == "no_device"):
        return f"no NVIDIA GPU found (NVML: {nvr}; CUDA driver: {dvr})"
    return f"no usable GPU (NVML: {nvr}; CUDA driver: {dvr})"


def probe_devices(device: str | None = None, spec_dirs: Iterable[str] = (), *, full: bool = True) -> ProbeReport:
    """Probe every visible GPU (CUDA order), or the one ``device`` names (an index or UUID/prefix).

    ``spec_dirs`` are extra spec-sheet folders. ``full=False`` skips health and
    software (what :func:`local_sheet` needs is identity, shape and sheet).

    Raises:
        NoDeviceError: no driver, no NVML and no CUDA driver, the kernel driver not
            loaded, ``CUDA_VISIBLE_DEVICES`` hiding every GPU, or no GPU (one line
            saying which).
        UsageError: ``device`` names no visible GPU; a spec folder is missing.
        SpecError: a malformed spec sheet.
    """
    from . import nvml as nvml_mod
    from .driver import open_driver

    spec_dirs = tuple(spec_dirs)
    cvd = os.environ.get("CUDA_VISIBLE_DEVICES")
    msg = cvd_hides_all_message(cvd)
    if msg:
        raise NoDeviceError(msg)
    nv = nvml_mod.open_nvml()
    nv_na = nv if is_na(nv) else None
    nv = None if is_na(nv) else nv
    try:
        drv = open_driver()
        drv_na = drv if is_na(drv) else None
        drv = None if is_na(drv) else drv
        gpus: list[_NvGpu] = []
        if nv is not None:
            e = _enumerate_nvml(nv)
            if is_na(e):
                nv_na, nv = e, None
            else:
                gpus = e
        nvml_count = len(gpus) if nv is not None else None
        notes: list[str] = []
        if drv is not None:
            n = drv.count()
            if is_na(n) or n == 0:
                raise NoDeviceError(_no_device_message(nv_na, n if is_na(n) else NA("CUDA driver sees 0 devices", "no_device"), cvd, nvml_count))
            targets = _match_driver_devices([drv.device(i) for i in range(n)], gpus, nv)
        elif nv is not None and gpus and drv_na.kind != "no_device":
            cands = _candidates(gpus)
            sel = resolve_cuda_visible_devices(cvd, [c for c, _, _ in cands])
            if not sel.indices:
                why = f" (entry {sel.stopped_at!r} {sel.why})" if sel.stopped_at is not None else ""
                raise NoDeviceError(f"CUDA_VISIBLE_DEVICES={cvd!r} selects no GPU{why}; unset it or list a device index or UUID")
            targets = [_Target(k, None, cands[i][1], cands[i][2]) for k, i in enumerate(sel.indices)]
            notes.append(
                f"CUDA driver unavailable ({drv_na.reason}): devices numbered by NVML's PCI order with CUDA_VISIBLE_DEVICES applied here, "
                f"which matches CUDA only with CUDA_DEVICE_ORDER=PCI_BUS_ID"
            )
        else:
            raise NoDeviceError(_no_device_message(nv_na, drv_na, cvd, nvml_count))
        if nv is None:
            notes.append(f"NVML unavailable ({nv_na.reason}): health fields are n/a; shape from the CUDA driver")

        def uuid_of(t: _Target) -> Any:
            if t.mig is not None:
                return t.mig.uuid
            if t.gpu is not None and not is_na(t.gpu.uuid):
                return t.gpu.uuid
            if t.drv is not None and not is_na(t.drv.uuid_hex):
                return f"GPU-{t.drv.uuid_hex}"
            return NA("UUID unknown", "unavailable")

        chosen = _select(device, targets, uuid_of)
        reports = tuple(_build_device(t, nv, nv_na, drv_na, spec_dirs, full) for t in chosen)
        software = None
        if full:
            archs = [f"sm_{d.identity.compute_capability.replace('.', '')}" for d in reports if not is_na(d.identity.compute_capability)]
            software = _software(nv, nv_na, drv, drv_na, archs)
        return ProbeReport(reports, software, cvd, tuple(notes))
    finally:
        if nv is not None:
            nv.close()


def device_sheet(device: str | None = None, spec_dirs: Iterable[str] = ()) -> tuple[SheetChoice, DeviceReport]:
    """The sheet of the visible GPU ``device`` (CUDA index or UUID; None: the first), by
    :func:`~gpuwhy.device.sheet.sheet_for` on its NVML name and PCI id (MIG: scaled to the slice).

    Returns ``(choice, device report)``; ``choice.sheet`` is never None.

    Raises:
        NoDeviceError: no GPU, driver or NVML (the precise reason), or a GPU that
            no sheet matches (the message names it and the closest sheets), or a
            MIG slice whose share cannot be read.
        UsageError / SpecError: a missing spec folder or a malformed sheet; ``device`` names no GPU.
    """
    d = probe_devices(device, spec_dirs, full=False).devices[0]
    if d.sheet.sheet is None:
        name = d.identity.name if not is_na(d.identity.name) else "the GPU"
        raise NoDeviceError(f"found {name} but {d.sheet.note}")
    return d.sheet, d


def local_sheet(spec_dirs: Iterable[str] = ()):
    """The spec sheet of the first visible GPU (see :func:`device_sheet`).

    Raises:
        NoDeviceError, UsageError, SpecError: as :func:`device_sheet`.
    """
    return device_sheet(None, spec_dirs)[0].sheet


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
