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
74    standard output cannot be written (the CLI's ``EXIT_OUTPUT``)
====  =====================================================
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_USAGE = 2
EXIT_NO_DEVICE = 3
EXIT_MEASUREMENT = 4


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
