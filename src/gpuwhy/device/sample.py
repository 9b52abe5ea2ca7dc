"""NVML readings taken around and during a measurement: is the GPU fit to be measured,
and what were its clocks while it ran?

Both go through the one NVML layer (:mod:`gpuwhy.device.nvml`): :func:`sample` is one
reading of clocks, clock-event reasons, utilisation and other processes before or
after a benchmark, and :func:`health_warnings` (pure) says what in two such readings
is worth a warning; :class:`ClockSampler` reads the SM clock, power and clock-event
mask while timed kernels run. Every read may fail or be unsupported: it reads as None
and never stops a measurement. Clock-event reason bits: NVML's
``nvmlClocksEventReason*`` (nvml.h,
https://docs.nvidia.com/deploy/nvml-api/group__nvmlClocksEventReasons.html), decoded
with the probe's table in :mod:`gpuwhy.device.derive`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from .derive import CLOCK_EVENT_REASONS, clock_event_keys
from ..na import is_na
from .nvml import open_nvml


#: Clock-event reason keys that hold the clocks down (power, thermal, hardware slowdowns):
#: worth a warning when seen during a run (:data:`gpuwhy.device.derive.CLOCK_EVENT_REASONS`).
LIMITING_KEYS = frozenset(r.key for r in CLOCK_EVENT_REASONS if r.limiting)


@dataclass(frozen=True)
class HealthSample:
    """One NVML reading of the device (None where NVML could not say).

    Attributes:
        sm_clock_mhz, mem_clock_mhz: current clocks, MHz.
        max_sm_clock_mhz, max_mem_clock_mhz: the highest clocks, MHz.
        reasons: names of the clock-event reasons set (``sw_power_cap``, ...).
        gpu_util_pct: utilisation over NVML's last sample period, %.
        other_processes: ``(pid, name)`` of compute processes other than this one.
        temperature_c, power_w: °C, W.
        driver_version: e.g. ``580.159.03``.
    """

    sm_clock_mhz: int | None = None
    mem_clock_mhz: int | None = None
    max_sm_clock_mhz: int | None = None
    max_mem_clock_mhz: int | None = None
    reasons: tuple[str, ...] = ()
    gpu_util_pct: int | None = None
    other_processes: tuple[tuple[int, str], ...] = field(default_factory=tuple)
    temperature_c: int | None = None
    power_w: float | None = None
    driver_version: str | None = None

    def to_dict(self) -> dict:
        """Plain data for ``--json``."""
        d = dict(self.__dict__)
        d["reasons"] = list(self.reasons)
        d["other_processes"] = [{"pid": p, "name": n} for p, n in self.other_processes]
        return d


def _val(v: Any) -> Any:
    return None if is_na(v) else v


def _handle(nv, uuid: str | None, index: int) -> Any:
    h = nv.handle_by_uuid(uuid) if uuid else None
    if h is None or is_na(h):
        h = nv.handle(index)
    return None if is_na(h) else h


def sample(uuid: str | None = None, index: int = 0) -> HealthSample | None:
    """Read the device by UUID (``GPU-...``; else by NVML index ``index``); None without NVML."""
    nv = open_nvml()
    if is_na(nv):
        return None
    try:
        h = _handle(nv, uuid, index)
        if h is None:
            return None
        me = os.getpid()
        others = []
        for p in _val(nv.processes(h)) or []:
            if p.pid and p.pid != me:
                name = _val(nv.process_name(p.pid))
                others.append((p.pid, os.path.basename(name) if name else ""))
        mask = _val(nv.clock_event_reasons(h))
        return HealthSample(
            sm_clock_mhz=_val(nv.clock(h, "sm")),
            mem_clock_mhz=_val(nv.clock(h, "mem")),
            max_sm_clock_mhz=_val(nv.max_clock(h, "sm")),
            max_mem_clock_mhz=_val(nv.max_clock(h, "mem")),
            reasons=clock_event_keys(int(mask)) if mask is not None else (),
            gpu_util_pct=_val(nv.utilization_gpu_pct(h)),
            other_processes=tuple(others),
            temperature_c=_val(nv.temperature_c(h)),
            power_w=_val(nv.power_w(h)),
            driver_version=_val(nv.driver_version()),
        )
    finally:
        nv.close()


def health_warnings(before: HealthSample | None, after: HealthSample | None) -> list[str]:
    """Warnings for the output: throttling reasons seen, other processes, a busy GPU.

    ``before`` is sampled before gpuwhy touches the GPU, ``after`` right after the
    last timed kernel.
    """
    warns: list[str] = []
    bad = LIMITING_KEYS
    seen = []
    for s in (before, after):
        if s is not None:
            seen.extend(r for r in s.reasons if r in bad and r not in seen)
    if seen:
        clock = ""
        if after is not None and after.sm_clock_mhz and after.max_sm_clock_mhz:
            clock = f" (SM clock {after.sm_clock_mhz} of {after.max_sm_clock_mhz} MHz after the run)"
        warns.append(f"clocks were throttled during the run: {', '.join(seen)}{clock}; figures may be low")
    if before is not None and before.other_processes:
        procs = ", ".join(f"{n or '?'} (pid {p})" for p, n in before.other_processes[:4])
        warns.append(f"other processes use this GPU: {procs}; they compete for bandwidth and time")
    if before is not None and before.gpu_util_pct is not None and before.gpu_util_pct >= 10 and not before.other_processes:
        warns.append(f"the GPU was {before.gpu_util_pct}% busy before the run (another container or VM?); figures may be low")
    return warns


class ClockSampler:
    """Reads one device's SM clock (MHz), power (W) and clock-event mask while kernels run.

    ``nvmlDeviceGetClockInfo(handle, NVML_CLOCK_SM)`` and friends; the device is found by
    ``uuid`` (``GPU-...``), else NVML index 0. Without NVML every read is None. Close
    with :meth:`close`, or use as a context manager.
    """

    def __init__(self, uuid: str | None = None):
        nv = open_nvml()
        self._nv = None if is_na(nv) else nv
        self._h = _handle(self._nv, uuid, 0) if self._nv is not None else None

    def read(self) -> float | None:
        """The current SM clock in MHz, or None."""
        v = _val(self._nv.clock(self._h, "sm")) if self._h is not None else None
        return float(v) if v else None

    def power_w(self) -> float | None:
        """Board power draw in W, or None."""
        return _val(self._nv.power_w(self._h)) if self._h is not None else None

    def reasons(self) -> int | None:
        """The current clock-event reason bit mask, or None."""
        return _val(self._nv.clock_event_reasons(self._h)) if self._h is not None else None

    def sample(self) -> tuple[float | None, float | None, int | None]:
        """(SM clock MHz, power W, clock-event mask), each None when unreadable."""
        return self.read(), self.power_w(), self.reasons()

    def close(self) -> None:
        """Shut this NVML session down."""
        if self._nv is not None:
            self._nv.close()
        self._nv = self._h = None

    def __enter__(self) -> "ClockSampler":
        return self

    def __exit__(self, *exc):
        self.close()
        return False
