"""What the kernel and the NVIDIA driver say under /proc, read as text."""

from __future__ import annotations

from pathlib import Path

#: Where /proc is read from (tests point this at a folder of recorded files).
PROC = Path("/proc")


def read_proc(*parts: str) -> str | None:
    """The text of ``/proc/<parts>`` (undecodable bytes replaced), or None when it cannot be read."""
    try:
        return PROC.joinpath(*parts).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
