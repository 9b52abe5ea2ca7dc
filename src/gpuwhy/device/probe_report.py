"""What `gpuwhy probe` reports: per device its identity, shape, derived peaks and
health (:class:`DeviceReport`), and the machine's software (:class:`Software`).

Every field is a value or an :class:`~gpuwhy.na.NA` with its reason;
``to_dict`` gives plain data for ``--json`` (an NA as null, its reason under
``"n/a"``). :func:`pick` takes a field from the first source that has it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from . import derive
from ..na import NA, is_na
from .nvml import is_lenient
from .sheet import SheetChoice


def pick(*pairs: tuple[str, Any]) -> tuple[Any, str | None]:
    """First non-NA value of (source, value) pairs -> (value, source); all NA -> (NA of all reasons, None).

    Text decoded with replacements (:class:`~gpuwhy.device.nvml.Lenient`) is taken only when no
    later source has clean text."""
    reasons = []
    lenient = None
    for src, v in pairs:
        if is_lenient(v):
            lenient = lenient or (v, src)
            continue
        if not is_na(v):
            return v, src
        reasons.append(f"{src}: {v.reason}")
    if lenient is not None:
        return lenient
    undecodable = any(is_na(v) and v.kind == "undecodable" for _, v in pairs)  # the warning's cue (probe)
    return NA("; ".join(reasons), "undecodable" if undecodable else "unavailable"), None


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


class _PlainFields:
    """Gives a dataclass ``to_dict``: its fields as plain data (NA as null, reasons under ``"n/a"``)."""

    def to_dict(self) -> dict:
        """Plain data (NA as null, reasons under ``n/a``)."""
        return _fields_dict(self)


@dataclass(frozen=True)
class MigSlice(_PlainFields):
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


@dataclass(frozen=True)
class Identity(_PlainFields):
    """Who the device is. ``cuda_ordinal`` is its CUDA number (after CUDA_VISIBLE_DEVICES);
    ``sources`` names where each value came from."""

    cuda_ordinal: int | NA
    nvml_index: int | NA
    name: str | NA  # "NVIDIA H200"
    uuid: str | NA  # "GPU-..."; a MIG device's own "MIG-..."
    pci_bus_id: str | NA  # "00000000:19:00.0"
    pci_device_id: str | NA  # "0x2335"
    brand: str | NA
    compute_capability: str | NA  # "9.0"
    architecture: str | NA  # "Hopper"
    mig: MigSlice | None  # None for a whole GPU
    sources: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Shape(_PlainFields):
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


@dataclass(frozen=True)
class Derived(_PlainFields):
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


@dataclass(frozen=True)
class GpuProcess(_PlainFields):
    """A process with a CUDA context on the GPU."""

    pid: int
    name: str | NA
    used_memory_bytes: int | None


@dataclass(frozen=True)
class Health(_PlainFields):
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
class Software(_PlainFields):
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
    nvrtc_library: str | NA = NA("not read", "unavailable")


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
