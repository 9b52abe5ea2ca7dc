"""The health of one GPU: what makes measurements on it trustworthy or not.

:func:`read_health` reads temperature, power, clock-event reasons, ECC, row
remapping, persistence and compute mode, the PCIe link, utilization, MIG mode
and the processes on the GPU into a :class:`~gpuwhy.device.probe_report.Health`,
and says in words what of it will spoil a benchmark.
"""

from __future__ import annotations

import os
from typing import Any

from . import derive
from ..na import NA, is_na
from ..units import fmt_counted
from .probe_report import GpuProcess, Health, MigSlice
from .procfs import read_proc
from .visible import NvGpu


def nvml_query(nv, h, no_nvml: NA):
    """``q(fn, *args, handle=None)``: NVML's ``fn`` on ``handle`` (default ``h``), or ``no_nvml`` without a handle."""

    def q(fn: str, *args, handle: Any = None) -> Any:
        hh = handle if handle is not None else h
        if hh is None:
            return no_nvml
        return getattr(nv, fn)(hh, *args)

    return q


def process_name(nv, pid: int) -> str | NA:
    """A process's name from NVML, else from /proc/<pid>/comm, else an NA."""
    name = nv.process_name(pid) if nv is not None else NA("NVML unavailable", "unavailable")
    if not is_na(name):
        return name
    comm = read_proc(str(pid), "comm")
    if comm and comm.strip():
        return comm.strip()
    return NA("name not visible (another container or user?)", "not_supported")


def _items(value: Any, *indices: int) -> tuple:
    """``value[i]`` for each of ``indices``; an NA ``value`` stands for each."""
    return tuple(value if is_na(value) else value[i] for i in indices)


def read_health(nv, h, mh, g: NvGpu | None, no_nvml: NA, warnings: list[str], notes: list[str]) -> Health:
    """The health of the GPU with NVML handle ``h`` (``mh``: its MIG device's handle; None when absent).

    ``no_nvml`` is the NA of fields NVML cannot give; what a benchmark should
    know is appended to ``warnings`` and ``notes``.
    """
    q = nvml_query(nv, h, no_nvml)
    mask = q("clock_event_reasons")
    util = q("utilization_gpu_pct")
    idle = (not is_na(mask) and bool(mask & 0x1)) or (not is_na(util) and util == 0)
    if not is_na(mask):
        limiting = derive.limiting_clock_events(mask)
        if limiting:
            warnings.append(f"clocks are being held down: {', '.join(limiting)}; measurements now will read low")
    no_pcie = {k: no_nvml for k in ("gen_current", "gen_max", "gen_gpu_max", "width_current", "width_max")}
    return Health(
        temperature_c=q("temperature_c"),
        power_draw_w=q("power_w"),
        power_limit_w=q("power_limit_w"),
        clock_event_reasons=mask if is_na(mask) else derive.decode_clock_event_reasons(mask),
        **_memory_errors(q, warnings, notes),
        **_modes(q, warnings, notes),
        **_pcie(q("pcie") if h is not None else no_pcie, idle, warnings, notes),
        utilization_gpu_pct=util,
        **_mig(q, g, notes),
        processes=_processes(nv, q, mh, util, warnings),
    )


def _memory_errors(q, warnings: list[str], notes: list[str]) -> dict[str, Any]:
    """Health's ECC, retired-page and row-remapping fields."""
    ecc_on, ecc_pending = _items(q("ecc_mode"), 0, 1)
    if ecc_on is True:
        ecc_err = q("ecc_volatile_uncorrected")
    elif ecc_on is False:
        ecc_err = NA("ECC is off", "not_supported")
    else:
        ecc_err = ecc_on
    if isinstance(ecc_err, int) and ecc_err > 0:
        warnings.append(f"{fmt_counted(ecc_err, 'uncorrected ECC error')} since the driver loaded: check `nvidia-smi -q -d ECC`; results may be wrong")
    if ecc_on is not ecc_pending and not is_na(ecc_on) and not is_na(ecc_pending):
        notes.append(f"ECC will be {'on' if ecc_pending else 'off'} after the next GPU reset")
    retired = q("retired_pages_pending")
    if retired is True:
        warnings.append("retired memory pages are pending: reset the GPU (or reboot) to retire them")
    rr_pending, rr_fail = _items(q("remapped_rows"), 2, 3)
    if rr_pending is True:
        warnings.append("memory row remapping is pending: reset the GPU to apply it")
    if rr_fail is True:
        warnings.append("memory row remapping failed: the GPU needs service (see `nvidia-smi -q -d ROW_REMAPPER`)")
    return {
        "ecc_enabled": ecc_on,
        "ecc_pending": ecc_pending,
        "ecc_volatile_uncorrected": ecc_err,
        "retired_pages_pending": retired,
        "remapped_rows_pending": rr_pending,
        "remapped_rows_failure": rr_fail,
    }


def _modes(q, warnings: list[str], notes: list[str]) -> dict[str, Any]:
    """Health's persistence and compute mode."""
    persist = q("persistence_mode")
    if persist is False:
        notes.append("persistence mode is off: the first CUDA call after idle pays driver start-up (`sudo nvidia-smi -pm 1`)")
    cmode = q("compute_mode")
    if cmode == "Prohibited":
        warnings.append("compute mode is Prohibited: no CUDA context can be created on this GPU")
    elif cmode == "Exclusive Process":
        notes.append("compute mode is Exclusive Process: one process at a time may use this GPU")
    return {"persistence_mode": persist, "compute_mode": cmode}


def _pcie(pcie: dict[str, Any], idle: bool, warnings: list[str], notes: list[str]) -> dict[str, Any]:
    """Health's PCIe link fields from NVML's ``pcie`` (``gen_current``, ...); ``idle``: the GPU is idle now."""
    known = {k: None if is_na(v) else v for k, v in pcie.items()}
    for level, msg in derive.pcie_link_findings(
        known["gen_current"], known["gen_max"], known["width_current"], known["width_max"], idle=idle
    ):
        (warnings if level == "warning" else notes).append(msg)
    if not any(is_na(pcie[k]) for k in ("gen_max", "gen_gpu_max")) and pcie["gen_max"] < pcie["gen_gpu_max"]:
        notes.append(f"the GPU supports PCIe gen {pcie['gen_gpu_max']} but the slot/host links at most gen {pcie['gen_max']}")
    return {f"pcie_{k}": pcie[k] for k in ("gen_current", "gen_max", "gen_gpu_max", "width_current", "width_max")}


def _mig(q, g: NvGpu | None, notes: list[str]) -> dict[str, Any]:
    """Health's MIG mode (now and after the next reset) and the GPU's MIG devices."""
    mig_on, mig_pending = _items(q("mig_mode"), 0, 1)
    if not is_na(mig_on) and mig_on != mig_pending:
        notes.append(f"MIG mode will be {'on' if mig_pending else 'off'} after the next GPU reset")
    if g is not None and g.mig_enabled:
        instances: Any = tuple(
            MigSlice(m.uuid, derive.mig_profile(m.name), m.sm_count, m.memory_bytes, m.gpu_instance_id, m.compute_instance_id) for m in g.migs
        )
    elif is_na(mig_on):
        instances = mig_on
    else:
        instances = ()
    return {"mig_mode": mig_on, "mig_mode_pending": mig_pending, "mig_instances": instances}


def _processes(nv, q, mh, util: Any, warnings: list[str]) -> tuple[GpuProcess, ...] | NA:
    """The other processes on the GPU (or its MIG device ``mh``); a busy GPU is a warning."""
    procs_raw = q("processes", handle=mh) if mh is not None else q("processes")
    if is_na(procs_raw) and mh is not None:
        procs_raw = q("processes")
    if is_na(procs_raw):
        return procs_raw
    me = os.getpid()
    procs = tuple(GpuProcess(p.pid, process_name(nv, p.pid), p.used_memory_bytes) for p in procs_raw if p.pid != me)
    if procs:
        who = ", ".join(f"{p.pid} ({p.name if not is_na(p.name) else '?'})" for p in procs[:5])
        more = f" and {len(procs) - 5} more" if len(procs) > 5 else ""
        warnings.append(f"{fmt_counted(len(procs), 'other process', 'other processes')} using this GPU: {who}{more}; benchmarks on a busy GPU are noise")
    elif not is_na(util) and util > 10:
        warnings.append(f"the GPU is {util}% busy with no process visible here (another container?); benchmarks on a busy GPU are noise")
    return procs
