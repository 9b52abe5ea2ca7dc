"""NVML access for gpuwhy: the one choke point.

Every query returns a value or an :class:`~gpuwhy.na.NA` naming why the value is missing:
NOT_SUPPORTED, no permission, a function the driver's NVML lacks, a clock or size
that reads 0. A missing value is never 0. Text that is not UTF-8 is decoded
leniently (:class:`Lenient`: replaced bytes shown as ``\\xNN``), never an error.
``pynvml`` (nvidia-ml-py) is imported inside :func:`open_nvml`, so importing this
module needs neither NVML nor a GPU. Tests replace ``sys.modules["pynvml"]``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from ..na import NA, is_na
from .uuids import with_uuid_prefix


# NVML return codes (nvml.h nvmlReturn_t) -> (words, kind).
_CODES: dict[int, tuple[str, str]] = {
    1: ("NVML not initialised", "error"),
    2: ("invalid argument", "error"),
    3: ("not supported on this GPU", "not_supported"),
    4: ("no permission (root may be needed)", "no_permission"),
    6: ("not found", "not_supported"),
    9: ("NVIDIA kernel driver not loaded", "driver_not_loaded"),
    10: ("timed out", "error"),
    12: ("NVML library libnvidia-ml.so.1 not found", "library_not_found"),
    13: ("not in this driver's NVML (driver too old)", "missing_function"),
    15: ("GPU is lost (fell off the bus)", "error"),
    16: ("GPU needs a reset", "error"),
    17: ("blocked by the operating system", "no_permission"),
    18: ("NVML and kernel driver versions differ (reload the driver or reboot)", "error"),
    21: ("no data yet", "not_supported"),
    26: ("deprecated in this NVML", "missing_function"),
    27: ("not ready", "error"),
    28: ("GPU not found", "error"),
    999: ("unknown NVML error", "error"),
}

_BRANDS = {
    0: "unknown", 1: "Quadro", 2: "Tesla", 3: "NVS", 4: "GRID", 5: "GeForce", 6: "TITAN",
    7: "NVIDIA Virtual Applications", 8: "NVIDIA Virtual PC", 9: "NVIDIA Virtual Compute Server",
    10: "NVIDIA RTX Virtual Workstation", 11: "NVIDIA Cloud Gaming", 12: "Quadro RTX", 13: "NVIDIA RTX",
    14: "NVIDIA", 15: "GeForce RTX", 16: "TITAN RTX",
}
_COMPUTE_MODES = {0: "Default", 1: "Exclusive Thread", 2: "Prohibited", 3: "Exclusive Process"}

# nvml.h constants, used when a (fake or old) pynvml lacks the name.
_CLOCK = {"graphics": 0, "sm": 1, "mem": 2}
_TEMPERATURE_GPU = 0
_MEMORY_ERROR_UNCORRECTED = 1
_VOLATILE_ECC = 0


class Lenient(str):
    """Text from NVML (or the driver) with unprintable characters, each shown as a ``\\xNN``
    escape. ``replaced`` says what was replaced, for a warning; ``what`` names the field. (Bytes
    that are not UTF-8 are no text at all: :func:`text` makes them an ``undecodable`` NA.)"""

    replaced: str = ""
    what: str = ""

    def __new__(cls, value: str, replaced: str, what: str = "") -> "Lenient":
        obj = super().__new__(cls, value)
        obj.replaced, obj.what = replaced, what
        return obj


def is_lenient(value: Any) -> bool:
    """True when ``value`` is text decoded with replacements (:class:`Lenient`)."""
    return isinstance(value, Lenient)


def _escape_unprintable(value: str) -> str:
    return "".join(c if c.isprintable() else (f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}") for c in value)


def text(value: Any, what: str) -> str | NA:
    """A string from NVML: bytes are decoded (UTF-8), NULs and blanks stripped.

    Bytes that are not UTF-8 (seen on WSL2 drivers) are no reading: an NA of kind
    ``undecodable`` whose reason names the bytes, never the bytes shown as the value (a GPU
    "named" ``NVIDIA H\\xff200`` by NVML would be a wrong answer; a name then comes from
    another source or is n/a, and the PCI id still picks the sheet). Unprintable characters in
    valid text are shown as ``\\xNN`` escapes in a :class:`Lenient` string that says so. Returns
    NA for an empty string or a value that is not text; an NA passes through.
    """
    if isinstance(value, NA):
        return value
    replaced = ""
    if isinstance(value, (bytes, bytearray)):
        raw = bytes(value).split(b"\0", 1)[0]
        try:
            value = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return NA(f"{what}: unreadable, bytes {raw[exc.start:exc.start + 8]!r} at {exc.start} are not UTF-8",
                      "undecodable")
    if not isinstance(value, str):
        return NA(f"{what}: not text ({type(value).__name__})", "error")
    value = value.split("\0", 1)[0].strip()
    if not value:
        return NA(f"{what}: empty", "not_supported")
    if not value.isprintable():
        bad = next(c for c in value if not c.isprintable())
        value = _escape_unprintable(value)
        replaced = replaced or f"unprintable character {bad!r}"
    return Lenient(value, replaced, what) if replaced else value


def field(struct: Any, name: str) -> Any:
    """``struct.name`` of an NVML structure; pynvml decodes char arrays as it reads them and raises
    on bytes that are not UTF-8, so those come back as the raw bytes (for :func:`text`)."""
    try:
        return getattr(struct, name, None)
    except UnicodeDecodeError as exc:
        raw = getattr(exc, "object", b"")
        return bytes(raw) if isinstance(raw, (bytes, bytearray)) else None


def positive(value: Any, what: str, unit: str = "") -> Any:
    """``value`` if it is a number above 0, else NA (a 0 means 'not reported', never a reading)."""
    if isinstance(value, NA):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return NA(f"{what}: not a number ({value!r})", "error")
    if value <= 0:
        return NA(f"NVML reads {value}{' ' + unit if unit else ''} for {what} (not reported)", "zero")
    return value


def _either(first: Any, second: Any) -> Any:
    """``second`` unless it is also NA, then the more telling of the two NAs (not a missing fallback)."""
    if not is_na(second):
        return second
    if is_na(first) and second.kind == "missing_function":
        return first
    return second


@dataclass(frozen=True)
class PciInfo:
    """PCI identity from NVML: ``bus_id`` like ``00000000:19:00.0``, ``device_id`` like ``0x2335``."""

    bus_id: str | NA
    device_id: str | NA


@dataclass(frozen=True)
class MemInfo:
    """Device memory in bytes (NVML ``nvmlDeviceGetMemoryInfo``)."""

    total_bytes: int | NA
    free_bytes: int | NA
    used_bytes: int | NA


@dataclass(frozen=True)
class MigDevice:
    """One MIG device (a GPU instance + compute instance) under a parent GPU."""

    handle: Any
    parent: Any
    uuid: str | NA
    name: str | NA
    sm_count: int | NA
    memory_bytes: int | NA
    gpu_instance_id: int | NA
    compute_instance_id: int | NA


@dataclass(frozen=True)
class Process:
    """A process with a CUDA context on the GPU; ``used_memory_bytes`` None where NVML hides it."""

    pid: int
    used_memory_bytes: int | None


@dataclass(frozen=True)
class NvLink:
    """One active NVLink of a GPU (``nvmlDeviceGetNvLink*``): NVML's link number, its version
    (NVML's ``nvmlNvlinkVersion_t`` value), the far end's PCI bus id and kind (``gpu``,
    ``switch``, ``cpu`` for an IBM NPU, ``unknown``)."""

    link: int
    version: int | NA
    remote_bus: str | NA
    remote_kind: str


#: nvml.h ``NVML_NVLINK_DEVICE_TYPE_*`` -> gpuwhy's word.
_NVLINK_REMOTE = {0: "gpu", 1: "cpu", 2: "switch"}


class Nvml:
    """An initialised NVML session. Build with :func:`open_nvml`; call :meth:`close` when done.

    Every method returns a value or an :class:`NA`; none raises.
    """

    def __init__(self, module: Any):
        self.mod = module

    # -- plumbing -----------------------------------------------------------------
    def call(self, fn: str, *args: Any) -> Any:
        """``pynvml.<fn>(*args)``, or an NA naming the failure."""
        f = getattr(self.mod, fn, None)
        if f is None:
            return NA(f"this nvidia-ml-py has no {fn}", "missing_function")
        try:
            return f(*args)
        except UnicodeDecodeError as exc:
            # pynvml decodes strings itself and raises on bytes that are not UTF-8: keep the
            # bytes, which text() decodes leniently.
            raw = getattr(exc, "object", None)
            if isinstance(raw, (bytes, bytearray)):
                return bytes(raw)
            return NA(f"{fn} returned undecodable bytes", "undecodable")
        except Exception as exc:  # NVMLError or anything else from ctypes
            return self.error_na(fn, exc)

    def error_na(self, fn: str, exc: BaseException) -> NA:
        """The NA for an exception raised by ``fn``."""
        err_cls = getattr(self.mod, "NVMLError", None)
        if isinstance(err_cls, type) and isinstance(exc, err_cls):
            code = getattr(exc, "value", None)
            if code in _CODES:
                words, kind = _CODES[code]
            else:
                try:
                    words = str(exc) or f"NVML error {code}"
                except Exception:
                    words = f"NVML error {code}"
                kind = "error"
            return NA(f"{words} ({fn})", kind)
        return NA(f"{type(exc).__name__}: {exc} ({fn})", "error")

    def const(self, name: str, default: int) -> int:
        """An nvml.h constant from pynvml, or ``default`` where pynvml lacks it."""
        v = getattr(self.mod, name, default)
        return v if isinstance(v, int) else default

    def close(self) -> None:
        """Shut NVML down (errors ignored)."""
        self.call("nvmlShutdown")

    # -- system -------------------------------------------------------------------
    def driver_version(self) -> str | NA:
        """Driver version string, e.g. ``580.159.04``."""
        return text(self.call("nvmlSystemGetDriverVersion"), "driver version")

    def cuda_driver_version(self) -> int | NA:
        """Highest CUDA version the driver supports, as an int (``13000`` = 13.0)."""
        v = self.call("nvmlSystemGetCudaDriverVersion_v2")
        if is_na(v):
            v = _either(v, self.call("nvmlSystemGetCudaDriverVersion"))
        return positive(v, "CUDA driver version")

    def device_count(self) -> int | NA:
        """Number of physical GPUs NVML sees (MIG devices not counted)."""
        v = self.call("nvmlDeviceGetCount")
        if is_na(v):
            return v
        if not isinstance(v, int) or v < 0:
            return NA(f"nvmlDeviceGetCount returned {v!r}", "error")
        return v

    def handle(self, index: int) -> Any:
        """Handle of GPU ``index`` (NVML order, which is PCI bus order)."""
        return self.call("nvmlDeviceGetHandleByIndex", index)

    def handle_by_uuid(self, uuid: str) -> Any:
        """Handle of the GPU (or MIG device) with UUID ``uuid`` (``GPU-...``; the prefix may be left out)."""
        return self.call("nvmlDeviceGetHandleByUUID", with_uuid_prefix(str(uuid).strip()))

    def process_name(self, pid: int) -> str | NA:
        """Process name as NVML knows it."""
        return text(self.call("nvmlSystemGetProcessName", pid), "process name")

    # -- identity -----------------------------------------------------------------
    def name(self, h: Any) -> str | NA:
        """Product name, e.g. ``NVIDIA H200`` (bytes or str from pynvml, both handled)."""
        return text(self.call("nvmlDeviceGetName", h), "name")

    def uuid(self, h: Any) -> str | NA:
        """``GPU-…`` or ``MIG-…`` UUID."""
        return text(self.call("nvmlDeviceGetUUID", h), "UUID")

    def pci(self, h: Any) -> PciInfo:
        """Bus id and PCI device id (NVML's pciDeviceId is 0xDDDDVVVV: device id in the high 16 bits)."""
        from .derive import pci_device_id_hex

        info = self.call("nvmlDeviceGetPciInfo_v3", h)
        if is_na(info):
            info = _either(info, self.call("nvmlDeviceGetPciInfo", h))
        if is_na(info):
            return PciInfo(info, info)
        bus = text(field(info, "busId") or field(info, "busIdLegacy") or b"", "PCI bus id")
        raw = field(info, "pciDeviceId")
        if isinstance(raw, int) and not isinstance(raw, bool):
            hx = pci_device_id_hex(raw)
            dev: str | NA = hx if hx else NA(f"PCI device id {raw:#010x} is not an NVIDIA id", "error")
        else:
            dev = NA("PCI device id not reported", "not_supported")
        return PciInfo(bus, dev)

    def brand(self, h: Any) -> str | NA:
        """Brand word (GeForce, Tesla, NVIDIA, ...)."""
        v = self.call("nvmlDeviceGetBrand", h)
        if is_na(v):
            return v
        return _BRANDS.get(v, f"brand {v}")

    def compute_capability(self, h: Any) -> str | NA:
        """``"9.0"``."""
        v = self.call("nvmlDeviceGetCudaComputeCapability", h)
        if is_na(v):
            return v
        try:
            major, minor = int(v[0]), int(v[1])
        except (TypeError, ValueError, IndexError):
            return NA(f"compute capability {v!r} unreadable", "error")
        if major <= 0:
            return NA(f"NVML reads compute capability {major}.{minor}", "zero")
        return f"{major}.{minor}"

    def num_cores(self, h: Any) -> int | NA:
        """CUDA cores NVML reports (SMs x FP32 lanes)."""
        return positive(self.call("nvmlDeviceGetNumGpuCores", h), "CUDA cores")

    def memory(self, h: Any) -> MemInfo:
        """Total/free/used device memory in bytes."""
        m = self.call("nvmlDeviceGetMemoryInfo", h)
        if is_na(m):
            return MemInfo(m, m, m)
        total = positive(getattr(m, "total", None), "memory total", "B")
        free = getattr(m, "free", None)
        used = getattr(m, "used", None)
        free = free if isinstance(free, int) and not is_na(total) else NA("memory free not reported", "not_supported")
        used = used if isinstance(used, int) and not is_na(total) else NA("memory used not reported", "not_supported")
        return MemInfo(total, free, used)

    def bus_width(self, h: Any) -> int | NA:
        """Memory bus width in bits."""
        return positive(self.call("nvmlDeviceGetMemoryBusWidth", h), "memory bus width", "bits")

    def max_clock(self, h: Any, kind: str) -> int | NA:
        """Max clock of ``kind`` (``sm``, ``mem``, ``graphics``) in MHz."""
        c = self.const(f"NVML_CLOCK_{kind.upper()}", _CLOCK[kind])
        return positive(self.call("nvmlDeviceGetMaxClockInfo", h, c), f"max {kind} clock", "MHz")

    def clock(self, h: Any, kind: str) -> int | NA:
        """Current clock of ``kind`` in MHz."""
        c = self.const(f"NVML_CLOCK_{kind.upper()}", _CLOCK[kind])
        return positive(self.call("nvmlDeviceGetClockInfo", h, c), f"current {kind} clock", "MHz")

    def customer_boost_clock(self, h: Any) -> int | NA:
        """The rated max boost SM clock in MHz (NOT_SUPPORTED on many GeForce boards)."""
        c = self.const("NVML_CLOCK_SM", _CLOCK["sm"])
        return positive(self.call("nvmlDeviceGetMaxCustomerBoostClock", h, c), "max customer boost clock", "MHz")

    # -- health -------------------------------------------------------------------
    def temperature_c(self, h: Any) -> int | NA:
        """GPU core temperature in degrees C."""
        c = self.const("NVML_TEMPERATURE_GPU", _TEMPERATURE_GPU)
        return positive(self.call("nvmlDeviceGetTemperature", h, c), "temperature", "C")

    def power_w(self, h: Any) -> float | NA:
        """Board power draw in W."""
        v = positive(self.call("nvmlDeviceGetPowerUsage", h), "power draw", "mW")
        return v if is_na(v) else v / 1000.0

    def power_limit_w(self, h: Any) -> float | NA:
        """Enforced power limit in W."""
        v = self.call("nvmlDeviceGetEnforcedPowerLimit", h)
        if is_na(v):
            v = _either(v, self.call("nvmlDeviceGetPowerManagementLimit", h))
        v = positive(v, "power limit", "mW")
        return v if is_na(v) else v / 1000.0

    def clock_event_reasons(self, h: Any) -> int | NA:
        """Bitmask of active clock-event (throttle) reasons."""
        v = self.call("nvmlDeviceGetCurrentClocksEventReasons", h)
        if is_na(v) and v.kind == "missing_function":
            v = self.call("nvmlDeviceGetCurrentClocksThrottleReasons", h)
        if is_na(v) or (isinstance(v, int) and v >= 0):
            return v
        return NA(f"clock-event reasons {v!r} unreadable", "error")

    def ecc_mode(self, h: Any) -> tuple[bool, bool] | NA:
        """(current, pending) ECC mode."""
        v = self.call("nvmlDeviceGetEccMode", h)
        if is_na(v):
            return v
        try:
            return bool(v[0]), bool(v[1])
        except (TypeError, IndexError):
            return NA(f"ECC mode {v!r} unreadable", "error")

    def ecc_volatile_uncorrected(self, h: Any) -> int | NA:
        """Uncorrected ECC errors since the driver loaded."""
        v = self.call(
            "nvmlDeviceGetTotalEccErrors",
            h,
            self.const("NVML_MEMORY_ERROR_TYPE_UNCORRECTED", _MEMORY_ERROR_UNCORRECTED),
            self.const("NVML_VOLATILE_ECC", _VOLATILE_ECC),
        )
        if is_na(v) or (isinstance(v, int) and v >= 0):
            return v
        return NA(f"ECC error count {v!r} unreadable", "error")

    def retired_pages_pending(self, h: Any) -> bool | NA:
        """Retired pages waiting for a reset (pre-Ampere page retirement)."""
        v = self.call("nvmlDeviceGetRetiredPagesPendingStatus", h)
        return v if is_na(v) else bool(v)

    def remapped_rows(self, h: Any) -> tuple[int, int, bool, bool] | NA:
        """(corrected, uncorrected, pending, failure) row remapping (Ampere and newer)."""
        v = self.call("nvmlDeviceGetRemappedRows", h)
        if is_na(v):
            return v
        try:
            return int(v[0]), int(v[1]), bool(v[2]), bool(v[3])
        except (TypeError, ValueError, IndexError):
            return NA(f"remapped rows {v!r} unreadable", "error")

    def persistence_mode(self, h: Any) -> bool | NA:
        """Persistence mode on/off."""
        v = self.call("nvmlDeviceGetPersistenceMode", h)
        return v if is_na(v) else bool(v)

    def compute_mode(self, h: Any) -> str | NA:
        """Default, Exclusive Process or Prohibited."""
        v = self.call("nvmlDeviceGetComputeMode", h)
        return v if is_na(v) else _COMPUTE_MODES.get(v, f"mode {v}")

    def pcie(self, h: Any) -> dict[str, int | NA]:
        """PCIe link: ``gen_current``, ``gen_max`` (of the link), ``gen_gpu_max``, ``width_current``, ``width_max``."""
        return {
            "gen_current": positive(self.call("nvmlDeviceGetCurrPcieLinkGeneration", h), "PCIe generation"),
            "gen_max": positive(self.call("nvmlDeviceGetMaxPcieLinkGeneration", h), "max PCIe generation"),
            "gen_gpu_max": positive(self.call("nvmlDeviceGetGpuMaxPcieLinkGeneration", h), "GPU max PCIe generation"),
            "width_current": positive(self.call("nvmlDeviceGetCurrPcieLinkWidth", h), "PCIe width"),
            "width_max": positive(self.call("nvmlDeviceGetMaxPcieLinkWidth", h), "max PCIe width"),
        }

    def utilization_gpu_pct(self, h: Any) -> int | NA:
        """Percent of the last sample period a kernel ran."""
        v = self.call("nvmlDeviceGetUtilizationRates", h)
        if is_na(v):
            return v
        g = getattr(v, "gpu", None)
        return g if isinstance(g, int) and 0 <= g <= 100 else NA(f"utilization {g!r} unreadable", "error")

    def processes(self, h: Any) -> list[Process] | NA:
        """Compute processes with a context on the device."""
        v = self.call("nvmlDeviceGetComputeRunningProcesses", h)
        if is_na(v):
            return v
        out: list[Process] = []
        for p in v or []:
            pid = getattr(p, "pid", None)
            if not isinstance(pid, int):
                continue
            used = getattr(p, "usedGpuMemory", None)
            # NVML_VALUE_NOT_AVAILABLE is (unsigned long long)-1
            used = used if isinstance(used, int) and 0 <= used < 2**63 else None
            out.append(Process(pid, used))
        return out

    # -- several GPUs: links, PCIe tree, NUMA ----------------------------------------
    def nvlinks(self, h: Any) -> list[NvLink] | NA:
        """The GPU's active NVLinks (``nvidia-smi nvlink -s``/``topo -m``): links 0 ..
        ``NVML_NVLINK_MAX_LINKS - 1`` whose state is on; a link NVML calls invalid is skipped.
        An NA when the GPU has no NVLink (every link not supported) or NVML lacks the call."""
        n = self.const("NVML_NVLINK_MAX_LINKS", 18)
        out: list[NvLink] = []
        first_na = None
        for link in range(n):
            st = self.call("nvmlDeviceGetNvLinkState", h, link)
            if is_na(st):
                first_na = first_na or st
                if st.kind in ("not_supported", "missing_function") and link == 0:
                    return NA(f"no NVLink: {st.reason}", st.kind)
                continue
            if not st:
                continue
            ver = self.call("nvmlDeviceGetNvLinkVersion", h, link)
            if not is_na(ver) and not (isinstance(ver, int) and ver > 0):
                ver = NA(f"NVLink version {ver!r} unreadable", "error")
            info = self.call("nvmlDeviceGetNvLinkRemotePciInfo", h, link)
            bus = info if is_na(info) else text(field(info, "busId") or field(info, "busIdLegacy") or b"", "NVLink remote bus id")
            kind = self.call("nvmlDeviceGetNvLinkRemoteDeviceType", h, link)
            out.append(NvLink(link, ver, bus, "unknown" if is_na(kind) else _NVLINK_REMOTE.get(kind, "unknown")))
        if not out and first_na is not None and first_na.kind != "error":
            return NA(f"no NVLink: {first_na.reason}", first_na.kind)
        return out

    def common_ancestor(self, h1: Any, h2: Any) -> int | NA:
        """NVML's ``nvmlGpuTopologyLevel_t`` of two GPUs' nearest common ancestor on the PCIe tree
        (0 one board, 10 one bridge, 20 several bridges, 30 host bridge, 40 NUMA node, 50 across sockets)."""
        v = self.call("nvmlDeviceGetTopologyCommonAncestor", h1, h2)
        if is_na(v) or (isinstance(v, int) and not isinstance(v, bool) and v >= 0):
            return v
        return NA(f"topology level {v!r} unreadable", "error")

    def numa_node(self, h: Any) -> int | NA:
        """The GPU's NUMA node (``nvmlDeviceGetNumaNodeId``); NA on a machine without NUMA (-1)."""
        v = self.call("nvmlDeviceGetNumaNodeId", h)
        if is_na(v):
            return v
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            return NA(f"NVML reads NUMA node {v!r} (no NUMA node)", "not_supported")
        return v

    def cpu_affinity(self, h: Any, cpus: int) -> tuple[int, ...] | NA:
        """The CPUs close to the GPU (``nvmlDeviceGetCpuAffinity``), for a machine of ``cpus``
        CPUs; NA when unread or empty."""
        from ..model.multi_gpu.topology import cpus_from_mask

        words = max(1, -(-int(cpus) // 64))
        v = self.call("nvmlDeviceGetCpuAffinity", h, words)
        if is_na(v):
            return v
        try:
            got = cpus_from_mask([int(w) for w in v])
        except (TypeError, ValueError):
            return NA(f"CPU affinity {v!r} unreadable", "error")
        return got if got else NA("NVML reads an empty CPU affinity", "zero")

    # -- MIG ----------------------------------------------------------------------
    def mig_mode(self, h: Any) -> tuple[bool, bool] | NA:
        """(current, pending) MIG mode; NA on GPUs without MIG."""
        v = self.call("nvmlDeviceGetMigMode", h)
        if is_na(v):
            return v
        try:
            return bool(v[0]), bool(v[1])
        except (TypeError, IndexError):
            return NA(f"MIG mode {v!r} unreadable", "error")

    def attributes(self, h: Any) -> dict[str, int | NA] | NA:
        """``sm_count`` and ``memory_bytes`` of a (MIG) device from nvmlDeviceGetAttributes."""
        a = self.call("nvmlDeviceGetAttributes", h)
        if is_na(a):
            return a
        mb = getattr(a, "memorySizeMB", None)
        mem = positive(mb * 2**20 if isinstance(mb, int) else mb, "MIG memory", "B")
        return {"sm_count": positive(getattr(a, "multiprocessorCount", None), "SM count"), "memory_bytes": mem}

    def mig_devices(self, h: Any) -> list[MigDevice] | NA:
        """The MIG devices that exist under GPU ``h`` (empty slots skipped)."""
        n = self.call("nvmlDeviceGetMaxMigDeviceCount", h)
        if is_na(n):
            return n
        out: list[MigDevice] = []
        for i in range(int(n)):
            mh = self.call("nvmlDeviceGetMigDeviceHandleByIndex", h, i)
            if is_na(mh):
                continue  # NOT_FOUND: no MIG device in this slot
            attrs = self.attributes(mh)
            mem = self.memory(mh).total_bytes
            out.append(
                MigDevice(
                    handle=mh,
                    parent=h,
                    uuid=self.uuid(mh),
                    name=self.name(mh),
                    sm_count=attrs if is_na(attrs) else attrs["sm_count"],
                    memory_bytes=mem if not is_na(mem) else (attrs if is_na(attrs) else attrs["memory_bytes"]),
                    gpu_instance_id=self.call("nvmlDeviceGetGpuInstanceId", mh),
                    compute_instance_id=self.call("nvmlDeviceGetComputeInstanceId", mh),
                )
            )
        return out


def open_nvml() -> Nvml | NA:
    """Import pynvml and initialise NVML.

    Returns an :class:`Nvml` session, or an NA whose ``kind`` is
    ``not_installed`` (no nvidia-ml-py), ``library_not_found`` (no
    libnvidia-ml.so.1: no driver), ``driver_not_loaded`` or ``error``.
    """
    try:
        mod = importlib.import_module("pynvml")
    except Exception as exc:
        return NA(f"nvidia-ml-py (pynvml) is not importable ({type(exc).__name__})", "not_installed")
    if mod is None:
        return NA("nvidia-ml-py (pynvml) is not importable", "not_installed")
    session = Nvml(mod)
    init = getattr(mod, "nvmlInit", None)
    if init is None:
        return NA("this nvidia-ml-py has no nvmlInit", "not_installed")
    try:
        init()
    except Exception as exc:
        na = session.error_na("nvmlInit", exc)
        return NA(na.reason, na.kind if na.kind in ("library_not_found", "driver_not_loaded") else "error")
    return session
