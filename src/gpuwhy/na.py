"""The value of a figure that could not be read, and why (:class:`NA`): gpuwhy's bottom layer, so
every layer can hold one (NVML, the CUDA driver, a profile, an export) without importing the one
that made it. A missing value is never 0."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class NA:
    """A value that could not be read, and why (``reason`` is one short phrase).

    ``kind`` is a machine-readable tag: ``not_supported``, ``no_permission``,
    ``missing_function``, ``undecodable``, ``zero``, ``library_not_found``,
    ``driver_not_loaded``, ``no_device``, ``not_installed``, ``unavailable``, ``error``.
    """

    reason: str
    kind: str = "error"

    def __str__(self) -> str:
        return f"n/a: {self.reason}"

    def to_dict(self) -> dict:
        """``{"n/a": reason}``: how a stray NA looks in JSON."""
        return {"n/a": self.reason}


def is_na(value: Any) -> bool:
    """True when ``value`` is an :class:`NA`."""
    return isinstance(value, NA)


__all__ = ["NA", "is_na"]
