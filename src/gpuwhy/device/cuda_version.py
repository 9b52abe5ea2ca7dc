"""The CUDA version of the installed NVIDIA driver, read without the GPU packages.

``cuDriverGetVersion`` needs no ``cuInit`` and no GPU: it is read straight from the driver
library (``libcuda.so.1`` on Linux, ``nvcuda.dll`` on Windows) through :mod:`ctypes`, so that a
machine without cuda-bindings is told which extra fits its driver (``gpuwhy[cu12]`` for a CUDA 12
driver, ``gpuwhy[cu13]`` for 13). The one place the version is read without cuda-bindings.
"""

from __future__ import annotations

import ctypes
import sys

from ..errors import NoDeviceError, gpu_packages_missing

#: The driver library's name on each platform (NVIDIA's driver installs these on the loader's path).
LIBRARY = "nvcuda.dll" if sys.platform == "win32" else "libcuda.so.1"


def driver_cuda_version() -> int | None:
    """The driver's ``cuDriverGetVersion`` (12040 for CUDA 12.4), or None when there is no driver
    library, it lacks the function, or the call fails. Never raises."""
    try:
        lib = ctypes.CDLL(LIBRARY)
        fn = lib.cuDriverGetVersion
    except (OSError, AttributeError):
        return None
    out = ctypes.c_int(0)
    try:
        err = fn(ctypes.byref(out))
    except Exception:  # noqa: BLE001 (a broken library)
        return None
    return int(out.value) if err == 0 and out.value > 0 else None


def gpu_packages_missing_here(what: str) -> NoDeviceError:
    """:func:`gpuwhy.errors.gpu_packages_missing` for this machine's driver: the exit-3 error naming
    the extra (``gpuwhy[cu12]``, ``gpuwhy[cu13]``) that fits the driver's CUDA major version."""
    return gpu_packages_missing(what, driver_cuda_version())
