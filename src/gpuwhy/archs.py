"""The one parser of GPU architecture names: ``sm_90a``, ``sm90``, ``90``, ``9.0``, ``compute_90``.

Pure; used by the NVRTC build (:mod:`gpuwhy.engine.compile`), the compute
ceilings, the roofline sweep, occupancy and the probe's compute-capability
tables. ``cc`` is the compute capability as one number (9.0 -> 90, 12.0 -> 120);
``suffix`` is ``a`` (arch-specific, e.g. Hopper's wgmma) or ``f`` (family).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import UsageError

_ARCH_RE = re.compile(r"(sm_?|compute_?)?(\d{2,3})([af]?)", re.IGNORECASE)
_CC_RE = re.compile(r"(\d{1,2})\.(\d)")


@dataclass(frozen=True)
class Arch:
    """An SM architecture: ``cc`` 90 and ``suffix`` "a" is ``sm_90a``; ``ptx`` when written ``compute_XX``."""

    cc: int
    suffix: str = ""
    ptx: bool = False

    @property
    def name(self) -> str:
        """``"sm_90a"``."""
        return f"sm_{self.cc}{self.suffix}"

    @property
    def base(self) -> str:
        """``"sm_90"`` (the suffix dropped)."""
        return f"sm_{self.cc}"

    @property
    def major_minor(self) -> tuple[int, int]:
        """``(9, 0)`` for sm_90, ``(12, 0)`` for sm_120."""
        return self.cc // 10, self.cc % 10


def parse_arch(text: str | tuple[int, int], *, what: str = "architecture", allow_ptx: bool = False) -> Arch:
    """Parse ``text``: ``sm_90``, ``SM90``, ``sm_90a``, ``90``, ``120``, ``9.0``, ``12.0``,
    ``(9, 0)``; ``compute_90`` only with ``allow_ptx`` (gpuwhy builds cubins, never PTX).

    Raises:
        UsageError: text that names no SM architecture (the message starts with ``what``).
    """
    if isinstance(text, tuple) and len(text) == 2:
        return Arch(int(text[0]) * 10 + int(text[1]))
    s = str(text).strip()
    m = _CC_RE.fullmatch(s)
    if m:
        return Arch(int(m.group(1)) * 10 + int(m.group(2)))
    m = _ARCH_RE.fullmatch(s)
    ptx = bool(m and m.group(1) and m.group(1).lower().startswith("compute"))
    if not m or (ptx and not allow_ptx):
        tail = " (gpuwhy builds cubins, never compute_XX PTX)" if ptx else ""
        raise UsageError(f"{what} {text!r} is not an SM architecture; give e.g. sm_80, sm_89, sm_90, sm_90a, "
                         f"sm_100, sm_120 or 9.0{tail}")
    return Arch(int(m.group(2)), m.group(3).lower(), ptx)
