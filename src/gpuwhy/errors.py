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


#: The GPU packages: pyproject.toml's platform-marked dependencies (a test keeps the two equal).
#: NVIDIA publishes wheels for Linux and Windows; without them only the GPU commands stop.
GPU_PACKAGES = ("nvidia-ml-py>=12.535", "cuda-bindings>=13.0,<14", "cuda-core>=1.2,<2", "nvidia-cuda-nvrtc>=13.0,<14")
#: The one line that installs them.
GPU_PIP_LINE = "python3 -m pip install " + " ".join(f"'{p}'" for p in GPU_PACKAGES)


def gpu_packages_missing(what: str) -> NoDeviceError:
    """The :class:`NoDeviceError` (exit 3) for a GPU command run without ``what`` (a package name,
    e.g. ``cuda-bindings``) importable: one line ending in :data:`GPU_PIP_LINE`."""
    return NoDeviceError(
        f"this command needs the GPU packages and {what} cannot be imported (the other commands need none); "
        f"install them (Linux and Windows) with: {GPU_PIP_LINE}"
    )


class OutputError(GpuwhyError):
    """A file gpuwhy must write cannot be written (a read-only home, a full disk): exit code 74."""

    exit_code = EXIT_OUTPUT


class Interrupted(GpuwhyError):
    """Ctrl-C stopped the work after part of it was reported (`gpuwhy run`: the window until then)."""

    exit_code = EXIT_INTERRUPTED
