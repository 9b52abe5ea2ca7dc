"""Is the GPU fit to be measured? NVML samples before and after a benchmark run.

A small, guarded pynvml helper (the probe's ``gpuwhy.device`` has the full
NVML layer; this module only needs clocks, clock-event reasons, utilisation and
other processes). Every query may fail or be unsupported: a failed query reads
as None and never stops a measurement. Pure helpers (:func:`reason_names`,
:func:`health_warnings`) take plain values so they are testable without NVML.

Clock-event reason bits: NVML's ``nvmlClocksEventReason*`` constants (nvml.h,
https://docs.nvidia.com/deploy/nvml-api/group__nvmlClocksEventReasons.html), decoded
with the probe's table in :mod:`gpuwhy.device.derive`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..device.derive import CLOCK_EVENT_REASONS, clock_event_keys

#: Bit -> (name, a warning worth printing when it is set during a run): the probe's
#: table (:data:`gpuwhy.device.derive.CLOCK_EVENT_REASONS`), by key and "limiting" flag.
REASON_BITS: dict[int, tuple[str, bool]] = {r.bit: (r.key, r.limiting) for r in CLOCK_EVENT_REASONS}


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


def reason_names(mask: int | None) -> tuple[str, ...]:
    """Names of the clock-event reason bits set in ``mask`` (unknown bits as ``bit_0x..``);
    :func:`gpuwhy.device.derive.clock_event_keys`."""
    return clock_event_keys(mask)


def health_warnings(before: HealthSample | None, after: HealthSample | None) -> list[str]:
    """Warnings for the output: throttling reasons seen, other processes, a busy GPU.

    ``before`` is sampled before gpuwhy touches the GPU, ``after`` right after the
    last timed kernel.
    """
    warns: list[str] = []
    bad = {name for name, warn in REASON_BITS.values() if warn}
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


def sample(uuid: str | None = None, index: int = 0) -> HealthSample | None:
    """Read the device by UUID (``GPU-...``; else by NVML index ``index``); None without NVML."""
    try:
        import pynvml as nv
    except Exception:
        return None
    try:
        nv.nvmlInit()
    except Exception:
        return None
    try:
        h = None
        if uuid:
            try:
                h = nv.nvmlDeviceGetHandleByUUID(uuid if uuid.upper().startswith("GPU-") else f"GPU-{uuid}")
            except Exception:
                h = None
        if h is None:
            h = nv.nvmlDeviceGetHandleByIndex(index)

        def q(fn, *a):
            try:
                return fn(*a)
            except Exception:
                return None

        mask = q(getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None) or nv.nvmlDeviceGetCurrentClocksThrottleReasons, h)
        util = q(nv.nvmlDeviceGetUtilizationRates, h)
        procs = q(nv.nvmlDeviceGetComputeRunningProcesses, h) or []
        me = os.getpid()
        others = []
        for p in procs:
            pid = int(getattr(p, "pid", 0) or 0)
            if pid and pid != me:
                name = q(nv.nvmlSystemGetProcessName, pid)
                if isinstance(name, bytes):
                    name = name.decode(errors="replace")
                others.append((pid, os.path.basename(str(name)) if name else ""))
        power = q(nv.nvmlDeviceGetPowerUsage, h)
        drv = q(nv.nvmlSystemGetDriverVersion)
        if isinstance(drv, bytes):
            drv = drv.decode()

        def mhz(v):
            return int(v) if v else None  # 0 means "not reported"

        return HealthSample(
            sm_clock_mhz=mhz(q(nv.nvmlDeviceGetClockInfo, h, nv.NVML_CLOCK_SM)),
            mem_clock_mhz=mhz(q(nv.nvmlDeviceGetClockInfo, h, nv.NVML_CLOCK_MEM)),
            max_sm_clock_mhz=mhz(q(nv.nvmlDeviceGetMaxClockInfo, h, nv.NVML_CLOCK_SM)),
            max_mem_clock_mhz=mhz(q(nv.nvmlDeviceGetMaxClockInfo, h, nv.NVML_CLOCK_MEM)),
            reasons=reason_names(int(mask)) if mask is not None else (),
            gpu_util_pct=int(util.gpu) if util is not None else None,
            other_processes=tuple(others),
            temperature_c=q(nv.nvmlDeviceGetTemperature, h, nv.NVML_TEMPERATURE_GPU),
            power_w=power / 1000.0 if power else None,
            driver_version=drv or None,
        )
    except Exception:
        return None
    finally:
        try:
            nv.nvmlShutdown()
        except Exception:
            pass


def open_and_sample(device) -> tuple[int, str | None, "HealthSample | None"]:
    """Initialise the CUDA driver, resolve ``device`` (index or UUID; None: the first GPU)
    and take the NVML sample before gpuwhy creates a CUDA context on it (so any process
    NVML lists then is someone else). Returns ``(cuda index, UUID or None, sample or None)``.

    Raises:
        NoDeviceError: no GPU or driver (exit 3).
        UsageError: ``device`` names no visible GPU.
    """
    from ..engine.context import init_driver, resolve_device

    index = resolve_device(device, init_driver())
    uuid = None
    try:
        from cuda.core import Device

        uuid = str(Device(index).uuid)
    except Exception:
        pass
    return index, uuid, sample(uuid, index)
