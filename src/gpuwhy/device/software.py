"""The machine's software as `gpuwhy probe` reports it: driver, CUDA and NVRTC
versions, GPU performance-counter access and WSL2 (:func:`read_software`).
"""

from __future__ import annotations

import os
import re
from typing import Any

from . import derive
from ..na import NA, is_na
from .nvml import is_lenient
from .probe_report import Software, pick
from .procfs import read_proc

WSL_SOURCE = "https://docs.nvidia.com/cuda/wsl-user-guide/index.html#known-limitations-for-linux-cuda-applications"
PERF_COUNTERS_SOURCE = "https://developer.nvidia.com/ERR_NVGPUCTRPERM"
WSL_LIMITS = (
    "NVML reports only part of its fields under WSL2 (expect n/a for clocks, processes, utilization)",
    "managed memory has no concurrent CPU/GPU access and no oversubscription; pinned host memory is limited",
    "GPU performance counters and some profiler features are limited; measured numbers include Windows' GPU scheduling",
)


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


def read_software(nv, nv_na: NA | None, drv, drv_na: NA | None, archs: list[str]) -> Software:
    """Machine-wide facts from NVML ``nv`` and the CUDA driver ``drv`` (each None when it could not
    be opened, ``nv_na``/``drv_na`` saying why); ``archs`` (``sm_90``, ...) name the GPUs' archs in the
    NVRTC warning."""
    warnings: list[str] = []
    drv_ver: Any = nv.driver_version() if nv is not None else nv_na
    if is_na(drv_ver) and drv_ver.kind == "undecodable":
        warnings.append(f"the driver version NVML reports is unreadable ({drv_ver.reason})")
    if is_na(drv_ver):
        txt = read_proc("driver", "nvidia", "version")
        m = re.search(r"Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)", txt or "")
        if m:
            drv_ver = m.group(1)
    if is_lenient(drv_ver):
        warnings.append(f"the driver version NVML reports is not clean text ({drv_ver.replaced}); shown with \\x escapes")
    cuda_ver, _ = pick(
        ("CUDA driver", drv.version() if drv is not None else drv_na),
        ("NVML", nv.cuda_driver_version() if nv is not None else nv_na),
    )
    cuda_txt: Any = cuda_ver if is_na(cuda_ver) else derive.cuda_version_text(cuda_ver)
    from .driver import nvrtc_library_path, nvrtc_version

    nvrtc = nvrtc_version()
    nvrtc_lib: Any = nvrtc_library_path() if not is_na(nvrtc) else nvrtc
    nvrtc_txt: Any = nvrtc if is_na(nvrtc) else f"{nvrtc[0]}.{nvrtc[1]}"
    if not is_na(nvrtc) and not is_na(cuda_ver) and derive.nvrtc_newer_than_driver(nvrtc, cuda_ver):
        arch = ", ".join(sorted(set(archs))) or "the GPU's exact arch"
        warnings.append(
            f"NVRTC {nvrtc_txt} is newer than the driver's CUDA {cuda_txt}: PTX it emits will not load "
            f"(CUDA_ERROR_UNSUPPORTED_PTX_VERSION); compile to cubin for the exact arch ({arch})"
        )
    perf, perf_open = perf_counter_access(read_proc("driver", "nvidia", "params"), os.geteuid() if hasattr(os, "geteuid") else -1)
    if perf_open is False:
        warnings.append("GPU performance counters are admin-only for this user: `ncu` profiling will fail (ERR_NVGPUCTRPERM)")
    wsl = is_wsl2(read_proc("version"))
    return Software(
        driver_version=drv_ver,
        cuda_driver_version=cuda_ver,
        cuda_driver_version_text=cuda_txt,
        nvrtc_version=nvrtc_txt,
        nvrtc_library=nvrtc_lib,
        nvml="ok" if nv is not None else f"unavailable: {nv_na.reason}",
        cuda_driver="ok" if drv is not None else f"unavailable: {drv_na.reason}",
        perf_counters=perf,
        perf_counters_open=perf_open,
        wsl2=wsl,
        wsl2_limits=WSL_LIMITS if wsl else (),
        warnings=tuple(warnings),
    )
