"""CUDA driver queries through ``cuda.bindings.driver``, and the NVRTC version.

The driver is the authority on what CUDA sees: it applies ``CUDA_VISIBLE_DEVICES``
and numbers the devices the way every CUDA program will. gpuwhy uses it for
device attributes NVML lacks (threads and shared memory per SM, L2), as the
fallback where NVML fails, and to map CUDA ordinals to NVML devices by UUID.

Like :mod:`gpuwhy.device.nvml`, every query returns a value or an
:class:`~gpuwhy.na.NA`; nothing raises. ``cuda.bindings`` is imported
inside functions (via ``importlib``, so tests can replace
``sys.modules["cuda.bindings.driver"]``).
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from typing import Any

from .derive import format_uuid_hex
from ..errors import MIN_DRIVER_FOR_CUDA
from ..na import NA, is_na
from .nvml import positive, text

#: Attributes read per device: our name -> (CUdevice_attribute member, unit divisor).
#: Clock attributes are in kHz; we keep MHz.
ATTRIBUTES: dict[str, tuple[str, float]] = {
    "cc_major": ("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR", 1),
    "cc_minor": ("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR", 1),
    "sm_count": ("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT", 1),
    "max_threads_per_sm": ("CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR", 1),
    "shared_mem_per_sm_bytes": ("CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR", 1),
    "l2_bytes": ("CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE", 1),
    "bus_width_bits": ("CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH", 1),
    "memory_clock_mhz": ("CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE", 1000.0),
    "clock_mhz": ("CU_DEVICE_ATTRIBUTE_CLOCK_RATE", 1000.0),
    "integrated": ("CU_DEVICE_ATTRIBUTE_INTEGRATED", 1),
    "pci_device_id_raw": ("CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID", 1),
}


@dataclass(frozen=True)
class DriverDevice:
    """What the CUDA driver says about one CUDA device (ordinal after ``CUDA_VISIBLE_DEVICES``).

    ``uuid_hex`` has NVML's dashed layout without the ``GPU-``/``MIG-`` prefix.
    Clocks in MHz, sizes in bytes. ``integrated`` is True for iGPUs/Tegra.
    """

    ordinal: int
    name: str | NA
    uuid_hex: str | NA
    pci_bus_id: str | NA
    pci_device_id: str | NA
    total_memory_bytes: int | NA
    compute_capability: str | NA
    sm_count: int | NA
    max_threads_per_sm: int | NA
    shared_mem_per_sm_bytes: int | NA
    l2_bytes: int | NA
    bus_width_bits: int | NA
    memory_clock_mhz: float | NA
    clock_mhz: float | NA
    integrated: bool | NA


def _err_name(err: Any) -> str:
    return getattr(err, "name", None) or str(err)


def _ok(err: Any) -> bool:
    try:
        return int(err) == 0
    except (TypeError, ValueError):
        return False


class CudaDriver:
    """An initialised CUDA driver (``cuInit`` succeeded). Build with :func:`open_driver`."""

    def __init__(self, module: Any):
        self.mod = module

    def call(self, fn: str, *args: Any) -> Any:
        """``driver.<fn>(*args)`` -> its value(s) after the CUresult, or an NA."""
        f = getattr(self.mod, fn, None)
        if f is None:
            return NA(f"this cuda-bindings has no {fn}", "missing_function")
        try:
            res = f(*args)
        except Exception as exc:
            missing = missing_driver_function(exc, fn)
            if missing:
                return NA(missing, "missing_function")
            return NA(f"{type(exc).__name__}: {exc} ({fn})", "error")
        if not isinstance(res, tuple) or not res:
            return NA(f"{fn} returned {res!r}", "error")
        if not _ok(res[0]):
            return NA(f"{_err_name(res[0])} ({fn})", "not_supported" if "NOT_SUPPORTED" in _err_name(res[0]) else "error")
        if len(res) == 1:
            return None
        return res[1] if len(res) == 2 else res[1:]

    def version(self) -> int | NA:
        """``cuDriverGetVersion``: 13000 for CUDA 13.0."""
        return positive(self.call("cuDriverGetVersion"), "CUDA driver version")

    def count(self) -> int | NA:
        """Number of CUDA devices visible to this process."""
        v = self.call("cuDeviceGetCount")
        return v if is_na(v) or (isinstance(v, int) and v >= 0) else NA(f"cuDeviceGetCount returned {v!r}", "error")

    def attribute(self, dev: Any, name: str) -> Any:
        """One device attribute by its short name (see :data:`ATTRIBUTES`), scaled to gpuwhy's unit."""
        member, div = ATTRIBUTES[name]
        enum = getattr(self.mod, "CUdevice_attribute", None)
        attr = getattr(enum, member, None) if enum is not None else None
        if attr is None:
            return NA(f"this cuda-bindings has no {member}", "missing_function")
        v = self.call("cuDeviceGetAttribute", attr, dev)
        if is_na(v):
            return v
        if not isinstance(v, int):
            return NA(f"{member} returned {v!r}", "error")
        return v / div if div != 1 else v

    def device(self, ordinal: int) -> DriverDevice:
        """Everything gpuwhy reads from the driver about CUDA device ``ordinal``."""
        dev = self.call("cuDeviceGet", ordinal)
        if is_na(dev):
            na = dev
            return DriverDevice(ordinal, *([na] * 14))
        a = {k: self.attribute(dev, k) for k in ATTRIBUTES}
        name = text(self.call("cuDeviceGetName", 256, dev), "name")
        uuid = self._uuid(dev)
        bus = text(self.call("cuDeviceGetPCIBusId", 64, dev), "PCI bus id")
        mem = positive(self.call("cuDeviceTotalMem", dev), "total memory", "B")
        if is_na(a["cc_major"]) or is_na(a["cc_minor"]):
            cc: str | NA = a["cc_major"] if is_na(a["cc_major"]) else a["cc_minor"]
        else:
            cc = f"{a['cc_major']}.{a['cc_minor']}"
        raw = a["pci_device_id_raw"]
        if is_na(raw):
            pci: str | NA = raw
        else:
            from .derive import pci_device_id_hex

            pci = pci_device_id_hex(raw) or NA(f"PCI id {raw:#x} unreadable", "error")
        integ = a["integrated"]
        return DriverDevice(
            ordinal=ordinal,
            name=name,
            uuid_hex=uuid,
            pci_bus_id=bus,
            pci_device_id=pci,
            total_memory_bytes=mem,
            compute_capability=cc,
            sm_count=positive(a["sm_count"], "SM count"),
            max_threads_per_sm=positive(a["max_threads_per_sm"], "max threads per SM"),
            shared_mem_per_sm_bytes=positive(a["shared_mem_per_sm_bytes"], "shared memory per SM", "B"),
            l2_bytes=positive(a["l2_bytes"], "L2 size", "B"),
            bus_width_bits=positive(a["bus_width_bits"], "memory bus width", "bits"),
            memory_clock_mhz=positive(a["memory_clock_mhz"], "memory clock", "MHz"),
            clock_mhz=positive(a["clock_mhz"], "clock rate", "MHz"),
            integrated=integ if is_na(integ) else bool(integ),
        )

    def _uuid(self, dev: Any) -> str | NA:
        # cuDeviceGetUuid_v2 (CUDA 11.4-12.x) returns the MIG UUID for MIG devices;
        # CUDA 13 folds that behaviour into cuDeviceGetUuid.
        u = self.call("cuDeviceGetUuid_v2", dev) if hasattr(self.mod, "cuDeviceGetUuid_v2") else NA("", "missing_function")
        if is_na(u):
            u = self.call("cuDeviceGetUuid", dev)
        if is_na(u):
            return u
        raw = getattr(u, "bytes", u)
        try:
            if isinstance(raw, str):
                raw = raw.encode("latin-1")
            b = bytes(raw)
        except (TypeError, ValueError, UnicodeEncodeError):
            return NA(f"UUID {raw!r} unreadable", "undecodable")
        if len(b) != 16 or not any(b):
            return NA("UUID not reported", "not_supported")
        return format_uuid_hex(b)


def open_driver() -> CudaDriver | NA:
    """Import ``cuda.bindings.driver`` and call ``cuInit(0)``.

    Returns a :class:`CudaDriver`, or an NA whose ``kind`` is ``not_installed``
    (no cuda-bindings), ``library_not_found`` (no libcuda.so: no driver),
    ``no_device`` (CUDA_ERROR_NO_DEVICE, which ``CUDA_VISIBLE_DEVICES`` can
    cause), ``driver_not_loaded`` or ``error``.
    """
    try:
        mod = importlib.import_module("cuda.bindings.driver")
    except ImportError as exc:
        return NA(f"cuda-bindings is not importable ({type(exc).__name__})", "not_installed")
    except Exception as exc:  # some cuda-bindings versions look for libcuda.so at import
        missing = missing_driver_function(exc, "cuInit")
        if missing:
            return NA(missing, "missing_function")
        return NA("CUDA driver library libcuda.so not found", "library_not_found")
    if mod is None:
        return NA("cuda-bindings is not importable", "not_installed")
    init = getattr(mod, "cuInit", None)
    if init is None:
        return NA("this cuda-bindings has no cuInit", "not_installed")
    try:
        res = init(0)
    except Exception as exc:
        name = type(exc).__name__
        missing = missing_driver_function(exc, "cuInit")
        if missing:
            return NA(missing, "missing_function")
        if "DynamicLibNotFoundError" in {c.__name__ for c in type(exc).__mro__} or isinstance(exc, OSError):
            return NA("CUDA driver library libcuda.so not found", "library_not_found")
        return NA(f"cuInit failed: {name}: {exc}", "error")
    err = res[0] if isinstance(res, tuple) and res else res
    if not _ok(err):
        n = _err_name(err)
        kind = {
            "CUDA_ERROR_NO_DEVICE": "no_device",
            "CUDA_ERROR_NOT_INITIALIZED": "driver_not_loaded",
            "CUDA_ERROR_INSUFFICIENT_DRIVER": "error",
        }.get(n, "error")
        return NA(f"cuInit: {n}", kind)
    return CudaDriver(mod)


def nvrtc_version() -> tuple[int, int] | NA:
    """``(major, minor)`` of the NVRTC gpuwhy compiles with (needs no driver), or an NA saying
    why it cannot be loaded (:func:`load_nvrtc`'s line)."""
    from ..errors import NoDeviceError

    try:
        mod = load_nvrtc()
    except NoDeviceError as exc:
        return NA(str(exc), "not_installed")
    res = mod.nvrtcVersion()
    if not isinstance(res, tuple) or len(res) != 3 or not _ok(res[0]):
        return NA(f"nvrtcVersion returned {res!r}", "error")
    return int(res[1]), int(res[2])


# ------------------------------------------------------------- libraries --
# One answer to "the CUDA library could not be used": NVRTC missing, and a
# libcuda.so.1 that loads but lacks a function (a driver older than cuda-bindings needs).

#: The NVIDIA driver each cuda-bindings major needs at least (Linux), from the CUDA Toolkit
#: release notes' table "CUDA Toolkit and Corresponding Driver Versions"
#: (https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html#id7): CUDA 12.x
#: needs R525 (525.60.13) and CUDA 13.x R580 (580.65.06) for minor-version compatibility.
#: Kept in :mod:`gpuwhy.errors` (``MIN_DRIVER_FOR_CUDA``) beside the GPU packages of each major.

#: A driver API name (``cuInit``, ``cuLaunchKernelEx``): ``cu`` then a capital letter.
_CU_FUNCTION = re.compile(r"\b(cu[A-Z][A-Za-z0-9_]*)\b")
#: Words that say a symbol is absent, in any version's phrasing ("not found", "is not found",
#: "undefined symbol", "missing", "not available").
_ABSENT = re.compile(r"not\s+(?:be\s+)?found|undefined\s+symbol|missing|not\s+available|unavailable", re.IGNORECASE)


def cuda_bindings_major() -> int | None:
    """The major version of the installed cuda-bindings (12, 13), or None when unknown."""
    try:
        from importlib.metadata import version

        return int(version("cuda-bindings").split(".")[0])
    except Exception:
        try:
            import cuda.bindings

            return int(str(cuda.bindings.__version__).split(".")[0])
        except Exception:
            return None


def nvrtc_package() -> str:
    """The pip package of the NVRTC library that the installed cuda-bindings loads."""
    major = cuda_bindings_major()
    return "nvidia-cuda-nvrtc-cu12" if major == 12 else "nvidia-cuda-nvrtc"


def _nvrtc_search_path() -> str:
    """Where cuda-bindings looks for libnvrtc, in words (site-packages wheels, the system loader, CUDA_HOME)."""
    import os
    import site
    import sys
    from pathlib import Path

    dirs = []
    try:
        import cuda.bindings

        dirs.append(str(Path(cuda.bindings.__file__).resolve().parents[2]))  # where the wheel would be
    except Exception:
        pass
    for d in [*getattr(site, "getsitepackages", lambda: [])(), site.getusersitepackages(), *sys.path]:
        if d and d.endswith(("site-packages", "dist-packages")) and d not in dirs and os.path.isdir(d):
            dirs.append(d)
    parts = [", ".join(f"{d}/nvidia/*/lib" for d in dirs[:3]) or "no site-packages folder"]
    ld = os.environ.get("LD_LIBRARY_PATH")
    parts.append(f"the system loader (LD_LIBRARY_PATH={ld})" if ld else "the system loader (LD_LIBRARY_PATH unset)")
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    parts.append(f"CUDA_HOME={home}" if home else "CUDA_HOME unset")
    return "; ".join(parts)


def load_nvrtc():
    """The ``cuda.bindings.nvrtc`` module, once its library (libnvrtc.so) is known to load.

    The one place NVRTC is opened (compiling and the probe both come here).

    Raises:
        NoDeviceError: cuda-bindings is not installed, or libnvrtc cannot be loaded: one
            line naming the package to install and where it was searched (exit 3).
    """
    from ..errors import NoDeviceError

    try:
        mod = importlib.import_module("cuda.bindings.nvrtc")
    except ImportError:
        from .cuda_version import gpu_packages_missing_here as gpu_packages_missing

        raise gpu_packages_missing("cuda-bindings") from None
    except Exception as exc:  # a broken install: the module is there but does not load
        raise NoDeviceError(f"cuda-bindings' NVRTC module does not load ({type(exc).__name__}: {exc}); "
                            f"reinstall it: pip install --force-reinstall cuda-bindings {nvrtc_package()}") from None
    try:
        mod.nvrtcVersion()
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0].split(": ", 1)[0]
        raise NoDeviceError(f"NVRTC (libnvrtc.so, CUDA's runtime compiler) cannot be loaded ({first}); install it with "
                            f"`pip install {nvrtc_package()}`; searched: {_nvrtc_search_path()}") from None
    return mod


def nvrtc_library_path() -> str | NA:
    """The file of the libnvrtc this process has loaded (read from /proc/self/maps)."""
    from .procfs import read_proc

    maps = read_proc("self", "maps") or ""
    for line in maps.splitlines():
        path = line.split()[-1] if line.split() else ""
        if "libnvrtc.so" in path.rsplit("/", 1)[-1]:
            return path
    return NA("libnvrtc is not loaded in this process", "unavailable")


def _driver_version_text() -> str:
    """The NVIDIA kernel driver's version from /proc/driver/nvidia/version, or words saying it is unknown."""
    from .procfs import read_proc

    m = re.search(r"Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)", read_proc("driver", "nvidia", "version") or "")
    return f"driver {m.group(1)}" if m else "a driver of unknown version"


def missing_function_name(exc: BaseException, called: str | None = None) -> str | None:
    """The driver function ``exc`` says libcuda lacks, or None when ``exc`` is not that.

    Judged by the kind of error, not one release's wording: an exception whose class (or a
    base) is a ``FunctionNotFoundError``/``SymbolNotFoundError`` (cuda-bindings 13.x raises
    ``FunctionNotFoundError('function cuInit is not found')``, a ``RuntimeError``) is one, named
    by the ``cu…`` function in its text, else ``called``; a ``RuntimeError`` or ``AttributeError``
    (ctypes' ``undefined symbol: cuInit``) is one when its text names a ``cu…`` function and
    says it is absent (cuda-bindings 12.x: ``RuntimeError('Function "cuInit" not found')``).
    The library itself missing (``DynamicLibNotFoundError``, an ``OSError``) is not. An error
    caused by one is one: cuda-core 1.2 reports a missing function as a ``SystemError`` whose
    ``__cause__`` is the ``FunctionNotFoundError`` (its error check calls the driver again while
    that exception is set), so the chain of causes and contexts is followed.
    """
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        fn = _missing_function_name_here(exc, called)
        if fn is not None:
            return fn
        exc = exc.__cause__ or exc.__context__
    return None


def _missing_function_name_here(exc: BaseException, called: str | None) -> str | None:
    """:func:`missing_function_name` for ``exc`` alone, not its causes."""
    names = {c.__name__ for c in type(exc).__mro__}
    if "DynamicLibNotFoundError" in names or isinstance(exc, OSError):
        return None
    text = str(exc)
    m = _CU_FUNCTION.search(text)
    if any(n.endswith(("FunctionNotFoundError", "SymbolNotFoundError")) for n in names):
        return m.group(1) if m else called or "a driver function"
    if isinstance(exc, (RuntimeError, AttributeError)) and m and _ABSENT.search(text):
        return m.group(1)
    return None


def missing_driver_function(exc: BaseException, called: str | None = None) -> str | None:
    """The one line for a libcuda that loaded but lacks a function cuda-bindings calls, or None
    when ``exc`` is not that (:func:`missing_function_name` says which errors are; ``called`` is
    the function that was being called, named when the error does not say)."""
    fn = missing_function_name(exc, called)
    if fn is None:
        return None
    major = cuda_bindings_major()
    need = (f"cuda-bindings {major}.x needs NVIDIA driver {MIN_DRIVER_FOR_CUDA[major]} or newer"
            if major in MIN_DRIVER_FOR_CUDA else "this cuda-bindings needs a newer NVIDIA driver")
    older = (f", or install the CUDA {major - 1} packages: python3 -m pip install 'gpuwhy[cu{major - 1}]'"
             if major and major - 1 in MIN_DRIVER_FOR_CUDA else "")
    return (f"libcuda.so.1 ({_driver_version_text()}) loaded but has no {fn}: {need}; "
            f"update the driver{older}")


def library_error(exc: BaseException):
    """The :class:`~gpuwhy.errors.NoDeviceError` for an exception that says a CUDA library cannot be used
    (a missing driver function, an NVRTC that cannot be found), or None for anything else."""
    from ..errors import NoDeviceError

    line = missing_driver_function(exc)
    if line:
        return NoDeviceError(line)
    names = {c.__name__ for c in type(exc).__mro__}
    if "DynamicLibNotFoundError" in names and "nvrtc" in str(exc).lower():
        try:
            load_nvrtc()
        except NoDeviceError as err:
            return err
    return None
