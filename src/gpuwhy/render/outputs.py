"""Files gpuwhy writes at the user's request (plots, CSV): never lose a file the user owns."""

from __future__ import annotations

from pathlib import Path

from ..errors import UsageError

#: Bytes every plot gpuwhy writes carries near its start (PNG "Software" text chunk,
#: SVG "Creator" metadata), so an earlier gpuwhy plot may be replaced and nothing else.
MARK = b"gpuwhy"


def writable_output(path: str, what: str, marker: bytes | None = MARK) -> Path:
    """Check, before any work, that ``path`` can be written without destroying anything.

    An existing file is replaced only when ``marker`` occurs in its first 8 KiB
    (a file gpuwhy wrote earlier); with ``marker=None`` no existing file is replaced.

    Raises:
        UsageError: ``path`` is a folder, its folder does not exist, or it holds a
            file gpuwhy did not write (one line naming the option and what to do).
    """
    p = Path(path)
    if p.is_dir():
        raise UsageError(f"{what} {path!r} is a folder; give a file name")
    if not p.parent.is_dir():
        raise UsageError(f"{what} {path!r}: folder {str(p.parent)!r} does not exist")
    if p.exists():
        try:
            with p.open("rb") as fh:
                head = fh.read(8192)
        except OSError:
            head = b""
        if marker is None or marker not in head:
            raise UsageError(f"{what} {path!r} already exists and gpuwhy did not write it; remove it or choose another path")
    return p
