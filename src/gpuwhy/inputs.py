"""Reading a file the user names: the one place that refuses what is not a file, bounds the size and opens gzip.

Every command that reads a user's file (``ncu``, ``trace``, ``report``,
``check --recorded``, profiles, spec sheets given as paths) goes through
:func:`read_input`, so ``gpuwhy trace /dev/zero``, a folder, a FIFO or a 40 GB
file gets one clear line (exit 2) instead of a hang or an out-of-memory kill.

The limit is :data:`DEFAULT_MAX_BYTES` (bytes, after gzip is undone), or the
``GPUWHY_MAX_INPUT_BYTES`` environment variable; commands may pass their own.
"""

from __future__ import annotations

import gzip
import os
import stat
import zlib
from pathlib import Path

from gpuwhy.errors import UsageError

#: Largest input read, in bytes (after decompression): 4 GiB. Real Kineto
#: traces of long training runs reach about 1 GB; ncu CSV exports are smaller.
DEFAULT_MAX_BYTES = 4 * 1024**3
ENV_MAX_BYTES = "GPUWHY_MAX_INPUT_BYTES"
GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 20


def max_input_bytes(override: int | None = None) -> int:
    """The size limit in bytes: ``override``, else ``$GPUWHY_MAX_INPUT_BYTES``, else :data:`DEFAULT_MAX_BYTES`.

    Raises:
        UsageError: the environment variable is not a positive whole number of bytes.
    """
    if override is not None:
        if override <= 0:
            raise UsageError(f"the input size limit must be positive, not {override} bytes")
        return int(override)
    env = os.environ.get(ENV_MAX_BYTES, "").strip()
    if not env:
        return DEFAULT_MAX_BYTES
    try:
        value = int(env)
    except ValueError:
        value = 0
    if value <= 0:
        raise UsageError(f"{ENV_MAX_BYTES}={env!r} is not a positive number of bytes; unset it or give e.g. 8589934592")
    return value


def _human(n: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"  # pragma: no cover


def check_input_path(path: str | Path, what: str) -> Path:
    """``path`` as a Path once it is known to be an existing regular file (symlinks followed).

    ``what`` names what the command expects ("an `ncu --csv` export"), for the message.

    Raises:
        UsageError: it does not exist, is a folder, or is not a regular file
            (a device such as /dev/zero, a FIFO, a socket).
    """
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise UsageError(f"{str(p)!r} does not exist; pass {what}") from None
    except OSError as exc:
        raise UsageError(f"cannot read {str(p)!r} ({exc.strerror or exc}); pass {what}") from None
    if stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{str(p)!r} is a folder, not a file; pass {what}")
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{str(p)!r} is not a regular file (a device, pipe or socket); pass {what} saved to a file")
    return p


def read_input(path: str | Path, what: str, *, max_bytes: int | None = None, gunzip: bool = True) -> bytes:
    """The bytes of the user's file ``path``, gunzipped when it starts with the gzip magic and ``gunzip`` is set.

    Args:
        path: the file.
        what: what the command expects, for messages ("a torch.profiler trace (.json or .json.gz)").
        max_bytes: limit in bytes after decompression (default :func:`max_input_bytes`).
        gunzip: undo gzip (detected by the first two bytes, not the name).

    Raises:
        UsageError: see :func:`check_input_path`; the file or its decompressed
            content is over the limit (the message names the limit and
            ``GPUWHY_MAX_INPUT_BYTES``); it cannot be read; the gzip stream is broken.
    """
    p = check_input_path(path, what)
    limit = max_input_bytes(max_bytes)
    size = p.stat().st_size
    over = (f"; raise the limit with {ENV_MAX_BYTES}=BYTES if the file is meant to be this large")
    if size > limit:
        raise UsageError(f"{str(p)!r} is {_human(size)}, over the {_human(limit)} input limit{over}")
    try:
        with open(p, "rb") as fh:
            head = fh.read(2)
            fh.seek(0)
            if not (gunzip and head == GZIP_MAGIC):
                data = fh.read(limit + 1)
                if len(data) > limit:
                    raise UsageError(f"{str(p)!r} is over the {_human(limit)} input limit{over}")
                return data
            out = bytearray()
            with gzip.GzipFile(fileobj=fh) as gz:
                while True:
                    chunk = gz.read(_CHUNK)
                    if not chunk:
                        break
                    out += chunk
                    if len(out) > limit:
                        raise UsageError(f"{str(p)!r} unpacks to more than the {_human(limit)} input limit{over}")
            return bytes(out)
    except UsageError:
        raise
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise UsageError(f"{str(p)!r} is a broken gzip file ({exc}); pass {what}") from None
    except OSError as exc:
        raise UsageError(f"cannot read {str(p)!r} ({exc.strerror or exc}); pass {what}") from None


def read_input_text(path: str | Path, what: str, *, max_bytes: int | None = None) -> str:
    """:func:`read_input` decoded as UTF-8 (a BOM dropped; undecodable bytes replaced, never raised)."""
    return read_input(path, what, max_bytes=max_bytes).decode("utf-8-sig", errors="replace")
