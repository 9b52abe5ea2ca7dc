"""Pure maths behind `gpuwhy probe`: peaks derived from device attributes, and decoders.

Nothing here touches NVML, the CUDA driver or the file system, so every function
is testable on recorded values without a GPU.

Formulas (the way CUDA's ``deviceQuery``/``bandwidthTest`` era samples and the
course's ``devquery`` compute them):

* DRAM bandwidth (B/s) = memory clock (Hz) x data-rate factor x bus width (bits) / 8
* FP32 peak (FLOP/s)   = SMs x FP32 lanes per SM x 2 (an FMA is two FLOPs) x boost clock (Hz)

Sources of the constants are given next to each table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, NamedTuple

from ..archs import parse_arch
from ..errors import UsageError
from ..units import fmt_num

#: Where the FP32 lanes per SM come from: the CUDA C++ Programming Guide, section
#: "Arithmetic Instructions", table "Throughput of Native Arithmetic Instructions
#: (operations per clock cycle per multiprocessor)", row "32-bit floating-point add,
#: multiply, multiply-add".
FP32_LANES_SOURCE = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#arithmetic-instructions"

# Exact (major, minor) entries first; a (major, None) entry covers a whole family.
_FP32_LANES: dict[tuple[int, int | None], int] = {
    (5, None): 128,  # Maxwell
    (6, 0): 64,  # Pascal GP100
    (6, 1): 128,
    (6, 2): 128,
    (7, 0): 64,  # Volta
    (7, 2): 64,  # Xavier
    (7, 5): 64,  # Turing
    (8, 0): 64,  # Ampere GA100
    (8, 6): 128,  # Ampere GA10x
    (8, 7): 128,  # Orin
    (8, 9): 128,  # Ada
    (9, 0): 128,  # Hopper
    (10, None): 128,  # Blackwell datacenter (10.0, 10.3)
    (12, None): 128,  # Blackwell GeForce/workstation (12.0, 12.1)
}

# Architecture names by compute capability (NVIDIA's CUDA GPUs list / the
# Programming Guide's "Compute Capabilities" chapter).
_ARCH: dict[tuple[int, int | None], str] = {
    (5, None): "Maxwell",
    (6, None): "Pascal",
    (7, 0): "Volta",
    (7, 2): "Volta",
    (7, 5): "Turing",
    (8, 0): "Ampere",
    (8, 6): "Ampere",
    (8, 7): "Ampere",
    (8, 9): "Ada",
    (9, 0): "Hopper",
    (10, None): "Blackwell",
    (11, None): "Blackwell",
    (12, None): "Blackwell",
}

#: Data-rate factor: the per-pin data rate (transfers/s) divided by the memory
#: clock that NVML (``nvmlDeviceGetMaxClockInfo(NVML_CLOCK_MEM)``) and the CUDA
#: driver (``CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE``) report. Both report the same
#: number, and for every memory type below it is half the per-pin data rate:
#:
#: * HBM2/HBM2e/HBM3/HBM3e are DDR: A100-SXM4-40GB reports 1215 MHz, 5120-bit:
#:   1215e6 x 2 x 5120 / 8 = 1555 GB/s, the datasheet's 1555 GB/s; the H200 reports
#:   3201 MHz, 6016-bit: 4815 GB/s against the datasheet's 4.8 TB/s.
#: * GDDR6X (PAM4) and GDDR7 (PAM3): the reported clock is NOT the data rate and not
#:   a physical clock either; it is half the per-pin rate. RTX 4090: 10501 MHz
#:   reported, 21 Gbps per pin (NVIDIA Ada whitepaper), 384-bit: 1008 GB/s.
#:   RTX 5090: 14001 MHz reported, 28 Gbps per pin (NVIDIA RTX Blackwell
#:   whitepaper), 512-bit: 1792 GB/s.
#: * GDDR5/GDDR5X/GDDR6: likewise half the data rate (NVIDIA's bandwidth formula
#:   "clock x (bus/8) x 2" for DDR memory).
#:
#: LPDDR (Jetson, integrated parts) is left out: not verified, so no bandwidth is derived.
DATA_RATE_FACTORS: dict[str, int] = {
    "HBM": 2,
    "HBM2": 2,
    "HBM2E": 2,
    "HBM3": 2,
    "HBM3E": 2,
    "GDDR": 2,
    "GDDR5": 2,
    "GDDR5X": 2,
    "GDDR6": 2,
    "GDDR6X": 2,
    "GDDR7": 2,
}
DATA_RATE_SOURCES = {
    "formula": "https://developer.nvidia.com/blog/how-implement-performance-metrics-cuda-cc/",
    "GDDR6X": "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf",
    "GDDR7": "https://images.nvidia.com/aem-dam/Solutions/geforce/blackwell/nvidia-rtx-blackwell-gpu-architecture.pdf",
}

#: Relative difference above which a derived peak and the sheet's figure disagree.
SHEET_TOLERANCE = 0.10


class ClockEventReason(NamedTuple):
    """One NVML clock-event reason bit: ``bit``; ``key``, its name in JSON and in the
    bench's health checks (``"sw_power_cap"``); ``words`` for people (``"software
    power cap"``); ``limiting``, whether it means the clocks are held below what the
    workload asks for."""

    bit: int
    key: str
    words: str
    limiting: bool


#: NVML clock-event (formerly "throttle") reason bits, from nvml.h
#: (``nvmlClocksEventReason*``; 0x200 and 0x400 as ``nvmlClocksThrottleReasonBoardLimit``
#: and ``...Reliability``). The one table for the probe (:func:`decode_clock_event_reasons`)
#: and the bench's health samples (:func:`clock_event_keys`, :mod:`gpuwhy.device.sample`).
CLOCK_EVENT_REASONS: tuple[ClockEventReason, ...] = (
    ClockEventReason(0x001, "gpu_idle", "idle", False),
    ClockEventReason(0x002, "applications_clocks_setting", "application clocks setting", False),
    ClockEventReason(0x004, "sw_power_cap", "software power cap", True),
    ClockEventReason(0x008, "hw_slowdown", "hardware slowdown", True),
    ClockEventReason(0x010, "sync_boost", "sync boost", False),
    ClockEventReason(0x020, "sw_thermal_slowdown", "software thermal slowdown", True),
    ClockEventReason(0x040, "hw_thermal_slowdown", "hardware thermal slowdown", True),
    ClockEventReason(0x080, "hw_power_brake_slowdown", "hardware power brake slowdown", True),
    ClockEventReason(0x100, "display_clock_setting", "display clock setting", False),
    ClockEventReason(0x200, "board_limit", "board limit", True),
    ClockEventReason(0x400, "reliability", "reliability", True),
)
_CLOCK_EVENTS_BY_BIT = {r.bit: r for r in CLOCK_EVENT_REASONS}
_KNOWN_CLOCK_EVENTS = sum(_CLOCK_EVENTS_BY_BIT)  # distinct single bits: the sum is their OR


def _lookup(table: dict, cc) -> object | None:
    try:
        major, minor = parse_arch(cc).major_minor
    except (TypeError, ValueError, UsageError):
        return None
    if (major, minor) in table:
        return table[(major, minor)]
    return table.get((major, None))


def fp32_lanes_per_sm(cc: str | tuple[int, int]) -> int | None:
    """FP32 lanes (FMA results per clock) per SM for compute capability ``cc``, or None if unknown.

    64 on 6.0/7.x/8.0, 128 on 8.6/8.7/8.9/9.0/10.x/12.x. Source: :data:`FP32_LANES_SOURCE`.
    """
    v = _lookup(_FP32_LANES, cc)
    return int(v) if v is not None else None


def architecture_name(cc: str | tuple[int, int]) -> str | None:
    """Architecture name (Volta, Turing, Ampere, Ada, Hopper, Blackwell, ...) for ``cc``, or None."""
    v = _lookup(_ARCH, cc)
    return str(v) if v is not None else None


def normalize_memory_type(memory_type: str | None) -> str | None:
    """``"HBM3e"`` -> ``"HBM3E"``; ``None``/blank -> None."""
    if not memory_type or not str(memory_type).strip():
        return None
    return str(memory_type).strip().upper().replace(" ", "").replace("-", "")


def data_rate_factor(memory_type: str | None) -> int | None:
    """Per-pin transfers per reported memory-clock cycle for ``memory_type``, or None if unverified.

    See :data:`DATA_RATE_FACTORS` for the recorded values behind each factor.
    """
    t = normalize_memory_type(memory_type)
    if t is None:
        return None
    return DATA_RATE_FACTORS.get(t)


def memory_family_from_cc(cc: str | tuple[int, int], integrated: bool | None = None) -> str | None:
    """Memory family ("HBM" or "GDDR") typical of a discrete GPU of compute capability ``cc``.

    Used only when no spec sheet names the memory type. The data-rate factor is 2
    for both families, so the guess does not change the derived bandwidth; it is
    None for integrated/Tegra parts (LPDDR, not verified) and unknown capabilities.
    """
    if integrated:
        return None
    try:
        major, minor = parse_arch(cc).major_minor
    except (TypeError, ValueError, UsageError):
        return None
    if (major, minor) in {(6, 0), (7, 0), (8, 0), (9, 0)} or (major == 10):
        return "HBM"
    if (major, minor) in {(6, 1), (7, 5), (8, 6), (8, 9)} or (major, minor) == (12, 0):
        return "GDDR"
    return None


def dram_bandwidth_bytes_per_s(memory_clock_mhz: float, bus_width_bits: int, factor: int) -> float:
    """DRAM bandwidth in B/s: ``memory_clock_mhz * 1e6 * factor * bus_width_bits / 8``.

    ``memory_clock_mhz`` is the clock NVML/the driver reports (MHz), ``factor`` the
    data-rate factor of :func:`data_rate_factor`.

    Raises:
        ValueError: for a non-positive clock, bus width or factor.
    """
    if memory_clock_mhz <= 0 or bus_width_bits <= 0 or factor <= 0:
        raise ValueError("memory clock, bus width and data-rate factor must be positive")
    return memory_clock_mhz * 1e6 * factor * bus_width_bits / 8.0


def fp32_peak_flops(sm_count: int, lanes_per_sm: int, boost_clock_mhz: float) -> float:
    """FP32 peak in FLOP/s: ``sm_count * lanes_per_sm * 2 * boost_clock_mhz * 1e6``.

    Raises:
        ValueError: for a non-positive input.
    """
    if sm_count <= 0 or lanes_per_sm <= 0 or boost_clock_mhz <= 0:
        raise ValueError("SM count, lanes and clock must be positive")
    return sm_count * lanes_per_sm * 2.0 * boost_clock_mhz * 1e6


@dataclass(frozen=True)
class SheetComparison:
    """A derived figure beside the sheet's: ``diff`` is derived/sheet - 1; ``ok`` when within tolerance."""

    quantity: str
    derived: float
    sheet: float
    unit: str
    diff: float
    ok: bool
    message: str

    def to_dict(self) -> dict:
        """Plain data, ``diff_pct`` in percent."""
        return {
            "quantity": self.quantity,
            "derived": self.derived,
            "sheet": self.sheet,
            "unit": self.unit,
            "diff_pct": 100.0 * self.diff,
            "ok": self.ok,
            "message": self.message,
        }


def compare_to_sheet(quantity: str, derived: float, sheet: float, unit: str, tolerance: float = SHEET_TOLERANCE, hint: str = "") -> SheetComparison:
    """Compare a derived figure with the sheet's; not ``ok`` when they differ by more than ``tolerance``.

    ``derived`` and ``sheet`` share ``unit``. The message says by how much they
    differ and, when they disagree, the likely causes (``hint``).

    Raises:
        ValueError: if ``sheet`` is not positive.
    """
    if sheet <= 0:
        raise ValueError("sheet value must be positive")
    diff = derived / sheet - 1.0
    ok = abs(diff) <= tolerance + 1e-9  # "more than 10%" apart, not float noise at exactly 10%
    msg = f"{quantity}: derived {fmt_num(derived, 4)} {unit} vs sheet {fmt_num(sheet, 4)} {unit} ({100 * diff:+.1f}%)"
    if not ok:
        msg += f", more than {100 * tolerance:.0f}% apart"
        if hint:
            msg += f": {hint}"
    return SheetComparison(quantity, derived, sheet, unit, diff, ok, msg)


def decode_clock_event_reasons(mask: int) -> tuple[str, ...]:
    """Words for the bits set in an NVML clock-event reason ``mask`` (empty for 0).

    Unknown bits come back together as ``"unknown reason 0x..."``.
    """
    words = [r.words for r in CLOCK_EVENT_REASONS if mask & r.bit]
    rest = mask & ~_KNOWN_CLOCK_EVENTS
    if rest:
        words.append(f"unknown reason {rest:#x}")
    return tuple(words)


def clock_event_key(words: str) -> str | None:
    """The key (``"hw_slowdown"``) of a reason as :func:`decode_clock_event_reasons` words it
    (``"hardware slowdown"``), or None for an unknown reason."""
    return next((r.key for r in CLOCK_EVENT_REASONS if r.words == words), None)


def clock_event_keys(mask: int | None) -> tuple[str, ...]:
    """Keys (``"sw_power_cap"``, ...) of the bits 0-31 set in an NVML clock-event reason
    ``mask``, lowest bit first; each unknown bit as ``"bit_0x..."``; empty for 0 or None."""
    if not mask:
        return ()
    out = []
    for i in range(32):
        bit = 1 << i
        if mask & bit:
            r = _CLOCK_EVENTS_BY_BIT.get(bit)
            out.append(r.key if r else f"bit_0x{bit:x}")
    return tuple(out)


def limiting_clock_events(mask: int) -> tuple[str, ...]:
    """The reasons in ``mask`` that hold clocks down (power, thermal, hardware slowdowns)."""
    return tuple(r.words for r in CLOCK_EVENT_REASONS if r.limiting and mask & r.bit)


def pcie_link_findings(
    gen_current: int | None,
    gen_max: int | None,
    width_current: int | None,
    width_max: int | None,
    idle: bool | None = None,
) -> tuple[tuple[str, str], ...]:
    """``(level, message)`` pairs for a PCIe link running below its max generation or width.

    ``level`` is ``"warning"``, or ``"note"`` for a generation drop while the GPU
    is ``idle`` (links drop their generation to save power; only a drop under
    load matters). Any argument may be None (unknown); nothing is said about an
    unknown side.
    """
    out: list[tuple[str, str]] = []
    if gen_current is not None and gen_max is not None and gen_current < gen_max:
        if idle:
            out.append(("note", f"PCIe link at gen {gen_current}, below its max gen {gen_max}, while the GPU is idle (power saving); check under load"))
        else:
            out.append(("warning", f"PCIe link at gen {gen_current}, below its max gen {gen_max} under load: host<->device copies run slower"))
    if width_current is not None and width_max is not None and width_current < width_max:
        out.append(("warning", f"PCIe link at x{width_current}, below its max x{width_max}: check the slot, riser or BIOS lane settings"))
    return tuple(out)


def nvrtc_newer_than_driver(nvrtc: tuple[int, int], cuda_driver_version: int) -> bool:
    """True when NVRTC ``(major, minor)`` is newer than the driver's CUDA version (``13000`` = 13.0)."""
    drv = (cuda_driver_version // 1000, (cuda_driver_version % 1000) // 10)
    return tuple(nvrtc) > drv


def cuda_version_text(v: int) -> str:
    """``13000`` -> ``"13.0"``; ``12080`` -> ``"12.8"``."""
    return f"{v // 1000}.{(v % 1000) // 10}"


def pci_device_id_hex(pci_device_id: int) -> str | None:
    """NVML's combined ``pciDeviceId`` (0xDDDDVVVV: device id high 16 bits, vendor low) -> ``"0x2335"``.

    None when the value is 0 or the vendor is not NVIDIA (0x10de).
    """
    if not pci_device_id:
        return None
    vendor = pci_device_id & 0xFFFF
    if vendor != 0x10DE:
        return None
    return f"0x{(pci_device_id >> 16) & 0xFFFF:04x}"


def scale_share(part: float, whole: float) -> float:
    """``part / whole`` clipped to (0, 1].

    Raises:
        ValueError: for non-positive inputs.
    """
    if part <= 0 or whole <= 0:
        raise ValueError("shares need positive sizes")
    return min(1.0, part / whole)


def format_uuid_hex(raw: bytes | Iterable[int]) -> str:
    """16 UUID bytes -> ``"8932f937-d72c-4106-c12f-20bd9faed9f6"`` (NVML's layout, no prefix)."""
    h = bytes(raw).hex()
    return f"{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def uuid_key(uuid: str) -> str:
    """Comparable form of a GPU or MIG UUID: lower-case hex digits only, prefix dropped."""
    u = uuid.strip().lower()
    for p in ("gpu-", "mig-"):
        if u.startswith(p):
            u = u[len(p):]
            break
    return "".join(ch for ch in u if ch in "0123456789abcdef")


# MIG device names, as CUDA prints them: "NVIDIA A100-SXM4-40GB MIG 1g.5gb".
# Each accepts what NVML or the driver gave, a name or an NA; an NA comes back as it is
# (is_mig_name: False).


def is_mig_name(name: Any) -> bool:
    """True when ``name`` ends in a MIG profile (``... MIG 1g.5gb``)."""
    return isinstance(name, str) and re.search(r"\sMIG\s+\S+$", name) is not None


def mig_profile(name: Any) -> Any:
    """The MIG profile in a device name (``... MIG 1g.5gb`` -> ``1g.5gb``), else the name itself."""
    if not isinstance(name, str):
        return name
    m = re.search(r"\bMIG\s+(\S+)", name)
    return m.group(1) if m else name


def without_mig_suffix(name: Any) -> Any:
    """A CUDA device name without its MIG suffix (``NVIDIA A100-SXM4-40GB MIG 1g.5gb`` -> ``NVIDIA A100-SXM4-40GB``)."""
    if not isinstance(name, str):
        return name
    return re.sub(r"\s+MIG\s+\S+$", "", name).strip() or name
