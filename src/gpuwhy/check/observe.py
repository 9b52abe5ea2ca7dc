"""The measuring side of `gpuwhy check`: fill :class:`~gpuwhy.check.policy.Observations` on a GPU.

At level 1 (:func:`observe_health`) it reads NVML alone, every GPU chosen in one pass: no CUDA
context, nothing measured. At level 2 (:func:`observe_device`) it reads the probe's health facts (NVML, CUDA driver, NVRTC), then runs a
quick set of measurements on the same GPU -- DRAM bandwidth (vectorized read
and write over 1 GiB, several times the L2), the FP32 FMA rate, one
tensor-core precision and the event-timed launch overhead -- and records the
clock-event reasons NVML reports while measuring. The verdicts themselves are
:func:`gpuwhy.check.policy.evaluate`'s (pure).
"""

from __future__ import annotations

import time
from typing import Iterable

from .policy import Observations, Policy

#: Elements of the DRAM bandwidth rows: 2^28 fp32 = 1 GiB per buffer, >= 4 x the
#: L2 of every current GPU (the H200's 60 MiB included).
CHECK_ELEMENTS = 2**28
#: Clock-event reasons that fail ``clock_events`` when seen while measuring: thermal or
#: hardware slowdowns and the power brake. ``sw_power_cap`` (the board holding its
#: power limit under full load, common under a tensor-core loop) is the separate
#: ``power_cap`` check, a warning by default (the policy's ``severity``).
FAILING_CLOCK_EVENTS = ("hw_slowdown", "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown")


def _val(v):
    from ..na import is_na

    return None if is_na(v) else v


def _why(v, default: str) -> str:
    from ..na import is_na

    return v.reason if is_na(v) else default


def _health_observations(dev, software) -> dict:
    """Observations fields (and reasons) from one probed device and the software facts."""
    h = dev.health
    reasons: dict[str, str] = {}
    out: dict = {}
    if h is None:
        for k in ("ecc_uncorrected", "remapped_rows", "pcie_link", "other_processes"):
            reasons[k] = "NVML health not available"
        return {"reasons": reasons}
    ecc_on = _val(h.ecc_enabled)
    if ecc_on is False:
        reasons["ecc_uncorrected"] = "ECC is off on this GPU"
    else:
        out["ecc_uncorrected"] = _val(h.ecc_volatile_uncorrected)
        if out["ecc_uncorrected"] is None:
            reasons["ecc_uncorrected"] = _why(h.ecc_volatile_uncorrected, "not reported")
    out["remapped_rows_pending"] = _val(h.remapped_rows_pending)
    out["retired_pages_pending"] = _val(h.retired_pages_pending)
    if out["remapped_rows_pending"] is None and out["retired_pages_pending"] is None:
        reasons["remapped_rows"] = "NVML reports neither remapped rows nor retired pages on this GPU"
    gc, gm, wc, wm = (_val(h.pcie_gen_current), _val(h.pcie_gen_max), _val(h.pcie_width_current), _val(h.pcie_width_max))
    if None in (gc, gm, wc, wm):
        reasons["pcie_link"] = "PCIe link generation/width not reported"
    else:
        out["pcie_gen"], out["pcie_width"] = (gc, gm), (wc, wm)
    procs = _val(h.processes)
    if procs is None:
        reasons["other_processes"] = _why(h.processes, "process list not available")
    else:
        import os

        out["other_processes"] = sum(1 for p in procs if p.pid != os.getpid())
    if software is not None:
        drv = _val(software.cuda_driver_version)
        nvrtc = _val(software.nvrtc_version)
        if drv is not None and nvrtc:
            major, minor = (int(x) for x in str(nvrtc).split(".")[:2])
            out["driver_cuda_version"], out["nvrtc_version"] = int(drv), (major, minor)
        else:
            reasons["driver_nvrtc"] = "driver CUDA version or NVRTC version not readable"
    out["reasons"] = reasons
    return out


def power_cap_fields(bandwidth_sample, compute_rows) -> dict:
    """The :class:`Observations` power-cap fields (pure).

    ``bandwidth_sample`` is the :class:`~gpuwhy.device.sample.HealthSample` taken right
    after the bandwidth run (or None); ``compute_rows`` pairs a check name with the
    :class:`~gpuwhy.bench.compute.ComputeResult` whose rate that check judges. A
    measurement counts as capped when ``sw_power_cap`` was among its clock-event
    reasons; the clock and power reported are those of the capped measurement with the
    lowest SM clock.
    """
    capped: list[tuple[str, float | None, float | None]] = []  # (check, SM clock MHz, power W)
    top = None
    if bandwidth_sample is not None:
        top = bandwidth_sample.max_sm_clock_mhz
        if "sw_power_cap" in bandwidth_sample.reasons:
            capped.append(("dram_bandwidth", bandwidth_sample.sm_clock_mhz, bandwidth_sample.power_w))
    for name, r in compute_rows:
        if r is not None and "sw_power_cap" in (r.clock_events or ()):
            capped.append((name, r.sm_clock_mhz, r.power_w))
    with_clock = [c for c in capped if c[1]]
    worst = min(with_clock, key=lambda c: c[1]) if with_clock else (capped[0] if capped else None)
    return {
        "power_capped": tuple(c[0] for c in capped),
        "capped_sm_clock_mhz": float(worst[1]) if worst and worst[1] else None,
        "capped_power_w": float(worst[2]) if worst and worst[2] else None,
        "max_sm_clock_mhz": float(top) if top else None,
    }


def observe_health(device: str | None, spec_dirs: Iterable[str] = (), gpu: str | None = None) -> tuple[list[Observations], float]:
    """Level 1: NVML's health of every GPU ``device`` names (``-i`` forms; None: the first, ``all``: each),
    the CUDA driver left closed (:func:`gpuwhy.device.probe.probe_devices` with ``cuda=False``) and
    nothing measured; the clock-event reasons are those NVML gives now. Returns ``(observations, seconds
    taken by all)``; the measuring fields are None with the reason.

    Raises:
        NoDeviceError: no NVML or no GPU (exit 3).
        UsageError: ``device`` names no GPU; a bad sheet name.
    """
    from ..device.derive import clock_event_key
    from ..device.probe import probe_devices
    from ..na import is_na

    t0 = time.perf_counter()
    report = probe_devices(device or None, spec_dirs, cuda=False)
    devices = report.devices if device is not None else report.devices[:1]
    sheet_name = None
    if gpu:
        from ..device.sheet import sheet_for

        sheet_name = sheet_for(gpu, spec_dirs=spec_dirs).sheet.name
    out = []
    for dev in devices:
        fields = _health_observations(dev, report.software)
        reasons = fields.pop("reasons")
        reasons.update({k: "not measured at --level 1 (NVML health only)" for k in ("dram_bandwidth", "fp32_fma", "launch_overhead", "power_cap")})
        events = dev.health.clock_event_reasons if dev.health is not None else None
        if events is None or is_na(events):
            reasons["clock_events"] = "NVML clock-event reasons not readable"
            clock_events = None
        else:
            keys = (clock_event_key(w) for w in events)
            clock_events = tuple(k for k in keys if k in FAILING_CLOCK_EVENTS)
        sheet = dev.sheet.sheet
        index = _val(dev.identity.nvml_index)
        out.append(Observations(device=str(_val(dev.identity.name) or "GPU"), uuid=_val(dev.identity.uuid) or "",
                                nvml_index=index if isinstance(index, int) else None,
                                sheet=sheet_name or (sheet.name if sheet else None), clock_events=clock_events,
                                reasons=reasons, **fields))
    return out, time.perf_counter() - t0


def observe_device(device: str | None, policy: Policy, spec_dirs: Iterable[str] = (), gpu: str | None = None) -> tuple[Observations, float]:
    """Probe one GPU and run the quick measurements. Returns ``(observations, seconds taken)``.

    ``device`` is one ``-i`` form (:mod:`gpuwhy.device.select`; None: the first visible GPU); ``gpu`` a
    sheet name overriding the NVML match.

    Raises:
        NoDeviceError: no GPU, driver or NVML (exit 3).
        MeasurementError: a kernel gave a wrong result or a CUDA error (exit 4).
        UsageError: a bad device or sheet name.
    """
    from ..bench.compute import run_compute
    from ..bench.runner import BenchOptions, run_bench
    from ..device.probe import probe_devices
    from ..engine.context import open_device

    t0 = time.perf_counter()
    report = probe_devices(device, spec_dirs)
    dev = report.devices[0]
    sheet = dev.sheet.sheet
    if gpu:
        from ..device.sheet import sheet_for

        sheet = sheet_for(gpu, spec_dirs=spec_dirs).sheet
    fields = _health_observations(dev, report.software)
    reasons = fields.pop("reasons")
    uuid = _val(dev.identity.uuid) or ""
    dev_arg = uuid or _val(dev.identity.cuda_ordinal)  # what the engine opens: a UUID, else the CUDA ordinal

    bench = run_bench(BenchOptions(mode="quick", kernels=["read-vec16", "write-vec16"], sizes=[CHECK_ELEMENTS],
                                   device=dev_arg, gpu=sheet.name if sheet else None, spec_dirs=tuple(spec_dirs),
                                   save_profile=False))
    tp = policy.tensor_precision
    with open_device(dev_arg) as ctx:
        compute = run_compute(ctx, ["fp32", tp], sheet=sheet, target_s=0.02, reps=5)
    # Several kernels may measure one precision (wgmma and mma.sync on Hopper): the fastest is the ceiling.
    by_prec: dict = {}
    for r in compute:
        best = by_prec.get(r.precision)
        if best is None or (r.status == "measured" and (best.status != "measured" or r.tflops > best.tflops)):
            by_prec[r.precision] = r

    events: list[str] = []
    for smp in (bench.health_before, bench.health_after):
        if smp is not None:
            events.extend(smp.reasons)
    for r in compute:
        events.extend(r.clock_events)
    failing = tuple(dict.fromkeys(e for e in events if e in FAILING_CLOCK_EVENTS))
    if bench.health_after is None:
        reasons["clock_events"] = "NVML clock-event reasons not readable"
        reasons["power_cap"] = "NVML clock-event reasons not readable"
    clock_events = failing if bench.health_after is not None else None
    cap = power_cap_fields(bench.health_after, [(("fp32_fma" if p == "fp32" else f"tensor_{p}"), r) for p, r in by_prec.items()])
    if bench.health_after is None:
        cap["power_capped"] = None
    limit = _val(dev.health.power_limit_w) if dev.health is not None else None

    def rate(prec: str):
        r = by_prec.get(prec)
        if r is None or r.status != "measured":
            reasons[f"tensor_{prec}" if prec == tp else "fp32_fma"] = (r.note if r else "not measured") or r.status
            return None
        return r.tflops

    tensor_sheet = sheet.peak_tflops.get(tp) if sheet else None
    if sheet is None:
        for k in ("dram_bandwidth", "fp32_fma", f"tensor_{tp}"):
            reasons[k] = f"no spec sheet matches {dev.identity.name}; pass --gpu NAME"
    index = _val(dev.identity.nvml_index)
    obs = Observations(
        device=str(_val(dev.identity.name) or "GPU"),
        uuid=uuid,
        nvml_index=index if isinstance(index, int) else None,
        sheet=sheet.name if sheet else None,
        sheet_bandwidth_gbs=sheet.memory_bandwidth_gbs if sheet else None,
        sheet_fp32_tflops=sheet.peak_tflops.get("fp32") if sheet else None,
        sheet_tensor_tflops=tensor_sheet,
        tensor_precision=tp,
        dram_bandwidth_gbs=bench.sustained.gbs if bench.sustained else None,
        fp32_tflops=rate("fp32"),
        tensor_tflops=rate(tp),
        launch_overhead_us=bench.launch.event.median_s * 1e6 if bench.launch else None,
        clock_events=clock_events,
        power_limit_w=float(limit) if limit else None,
        reasons=reasons,
        **cap,
        **fields,
    )
    return obs, time.perf_counter() - t0
