"""Exceptions that map one-to-one onto gpuwhy's exit codes.

Every user-facing failure is one of these; the CLI catches them, prints the
message as a single line on stderr and exits with ``exit_code``. Nothing else
in the package prints errors.

Exit codes (also listed in README.md):

====  =====================================================
0     ok
1     a check or threshold failed (:class:`CheckFailed`)
2     bad input or usage (:class:`UsageError`)
3     no usable GPU, driver or NVML (:class:`NoDeviceError`)
4     a GPU error during a measurement (:class:`MeasurementError`)
70    a bug in gpuwhy (the CLI's ``EXIT_INTERNAL``)
130   interrupted (Ctrl-C), also after what ran until then was reported (:class:`Interrupted`)
74    output cannot be written: standard output (the CLI's ``EXIT_OUTPUT``), or a file gpuwhy
      writes into the user's environment (:class:`OutputError`: a read-only home)
====  =====================================================
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_USAGE = 2
EXIT_NO_DEVICE = 3
EXIT_MEASUREMENT = 4
EXIT_INTERRUPTED = 130
EXIT_OUTPUT = 74


class GpuwhyError(Exception):
    """Base class: a one-line message for the user and an exit code."""

    exit_code = EXIT_USAGE


class CheckFailed(GpuwhyError):
    """A check or threshold failed (exit code 1)."""

    exit_code = EXIT_CHECK_FAILED


class UsageError(GpuwhyError):
    """Bad input: a value, a file or a name the user gave (exit code 2)."""

    exit_code = EXIT_USAGE


class SpecError(UsageError):
    """A spec sheet (or another user-extendable YAML file) is malformed (exit code 2).

    The message names the file and the field.
    """


class NoDeviceError(GpuwhyError):
    """No usable GPU, driver or NVML library (exit code 3)."""

    exit_code = EXIT_NO_DEVICE


class MeasurementError(GpuwhyError):
    """A GPU error or a wrong kernel result during a measurement (exit code 4)."""

    exit_code = EXIT_MEASUREMENT


#: The GPU packages per CUDA major version of the driver: pyproject.toml's extras ``cu13`` and
#: ``cu12`` (a test keeps them equal). NVIDIA publishes wheels for Linux and Windows; without them
#: only the GPU commands stop.
GPU_EXTRAS: dict[int, tuple[str, ...]] = {
    13: ("nvidia-ml-py>=12.535", "cuda-bindings>=13.0,<14", "cuda-core>=1.2,<2", "nvidia-cuda-nvrtc>=13.0,<14"),
    12: ("nvidia-ml-py>=12.535", "cuda-bindings>=12.9,<13", "cuda-core>=1.2,<2", "nvidia-cuda-nvrtc-cu12>=12.8,<13"),
}
#: The CUDA major version whose packages are named when the driver's cannot be read.
NEWEST_CUDA_MAJOR = max(GPU_EXTRAS)
#: The oldest NVIDIA driver of each CUDA major version (NVIDIA's CUDA toolkit release notes, table 3:
#: "CUDA Toolkit and Corresponding Driver Versions", Linux x86_64).
MIN_DRIVER_FOR_CUDA = {12: "525.60.13", 13: "580.65.06"}
#: The packages of the newest CUDA major version (``gpuwhy[cu13]``).
GPU_PACKAGES = GPU_EXTRAS[NEWEST_CUDA_MAJOR]


def gpu_pip_line(cuda_major: int = NEWEST_CUDA_MAJOR) -> str:
    """The one line that installs the GPU packages for a driver of CUDA ``cuda_major`` (12, 13):
    the extra, then the packages themselves (for an install whose ``gpuwhy`` pip cannot find)."""
    pkgs = " ".join(f"'{p}'" for p in GPU_EXTRAS[cuda_major])
    return f"python3 -m pip install 'gpuwhy[cu{cuda_major}]' (or the packages themselves: python3 -m pip install {pkgs})"


#: The line for the newest CUDA major version.
GPU_PIP_LINE = gpu_pip_line()


def cuda_major_of(driver_version: int | None) -> int | None:
    """The CUDA major version of a ``cuDriverGetVersion`` figure (12040 -> 12), or None when unknown."""
    return driver_version // 1000 if isinstance(driver_version, int) and driver_version > 0 else None


def gpu_packages_missing(what: str, driver_version: int | None = None) -> NoDeviceError:
    """The :class:`NoDeviceError` (exit 3) for a GPU command run without ``what`` (a package name,
    e.g. ``cuda-bindings``) importable: one line naming the extra for the driver.

    ``driver_version``: the driver's ``cuDriverGetVersion`` (13000 for CUDA 13.0; None when no
    driver could be read, :func:`gpuwhy.device.cuda_version.driver_cuda_version` reads it). A
    driver of CUDA 12 gets ``gpuwhy[cu12]``, 13 or newer ``gpuwhy[cu13]``, older than 12 the driver
    to install; no driver both extras, each with the drivers it is for.
    """
    head = f"this command needs the GPU packages: {what} cannot be imported (the other commands need none)"
    major = cuda_major_of(driver_version)
    if major is None:
        newest, older = NEWEST_CUDA_MAJOR, NEWEST_CUDA_MAJOR - 1
        return NoDeviceError(
            f"{head}; install them (Linux and Windows) with: {gpu_pip_line(newest)}; for a driver older than "
            f"{MIN_DRIVER_FOR_CUDA[newest]} (`nvidia-smi` shows CUDA Version {older}.x) use 'gpuwhy[cu{older}]'"
        )
    if major < min(GPU_EXTRAS):
        oldest = min(GPU_EXTRAS)
        return NoDeviceError(
            f"{head}, and this driver is of CUDA {major}.{driver_version % 1000 // 10}: the GPU packages need CUDA "
            f"{oldest} (driver {MIN_DRIVER_FOR_CUDA[oldest]} or newer); update the NVIDIA driver, then: {gpu_pip_line(oldest)}"
        )
    chosen = min(major, NEWEST_CUDA_MAJOR)
    return NoDeviceError(
        f"{head}; for this driver (CUDA {major}.{driver_version % 1000 // 10}) install them (Linux and Windows) with: "
        f"{gpu_pip_line(chosen)}"
    )


class OutputError(GpuwhyError):
    """A file gpuwhy must write cannot be written (a read-only home, a full disk): exit code 74."""

    exit_code = EXIT_OUTPUT


class Interrupted(GpuwhyError):
    """Ctrl-C stopped the work after part of it was reported (`gpuwhy run`: the window until then)."""

    exit_code = EXIT_INTERRUPTED
