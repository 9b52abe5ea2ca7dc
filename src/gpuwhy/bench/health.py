"""Is the GPU fit to be measured? Warnings from the NVML samples taken before and after a run.

The samples themselves are :func:`gpuwhy.device.sample.sample` (through the one NVML
layer); the helpers here (:func:`reason_names`, :func:`health_warnings`) are pure and
take plain values, so they are testable without NVML.

Clock-event reason bits: NVML's ``nvmlClocksEventReason*`` constants (nvml.h,
https://docs.nvidia.com/deploy/nvml-api/group__nvmlClocksEventReasons.html), decoded
with the probe's table in :mod:`gpuwhy.device.derive`.
"""

from __future__ import annotations

from ..device.derive import CLOCK_EVENT_REASONS, clock_event_keys
from ..device.sample import HealthSample, sample

#: Bit -> (name, a warning worth printing when it is set during a run): the probe's
#: table (:data:`gpuwhy.device.derive.CLOCK_EVENT_REASONS`), by key and "limiting" flag.
REASON_BITS: dict[int, tuple[str, bool]] = {r.bit: (r.key, r.limiting) for r in CLOCK_EVENT_REASONS}


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


def open_and_sample(device) -> tuple[int, str | None, "HealthSample | None"]:
    """Initialise the CUDA driver, resolve ``device`` (index or UUID; None: the first GPU)
    and take the NVML sample before gpuwhy creates a CUDA context on it (so any process
    NVML lists then is someone else). Returns ``(cuda index, UUID or None, sample or None)``.

    Raises:
        NoDeviceError: no GPU or driver (exit 3).
        UsageError: ``device`` names no visible GPU.
    """
    from ..engine.context import device_identity, init_driver, resolve_device

    index = resolve_device(device, init_driver())
    uuid = device_identity(index)[0]
    return index, uuid, sample(uuid, index)
