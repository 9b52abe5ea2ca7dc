"""GPU probing: not built yet; this stub says so."""

from __future__ import annotations

from ..errors import NoDeviceError


def local_sheet(spec_dirs=()):
    """The spec sheet of the first visible GPU.

    Raises:
        NoDeviceError: always, until probing is built.
    """
    raise NoDeviceError("GPU probing is not built yet")
