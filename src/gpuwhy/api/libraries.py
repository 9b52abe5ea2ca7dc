"""Whether an exception a command raised means a CUDA library cannot be used here, wherever it
was first called: the CLI turns it into its exit code instead of calling it a bug."""

from __future__ import annotations


def unusable_library(exc: BaseException):
    """The :class:`~gpuwhy.errors.NoDeviceError` to report for ``exc`` when it says a CUDA library
    cannot be used (a missing driver function, an NVRTC that cannot be found), else None
    (:func:`gpuwhy.device.driver.library_error`)."""
    from ..device.driver import library_error

    return library_error(exc)
