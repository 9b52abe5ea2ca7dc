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
import io
import json
import os
import re
import stat
import zlib
from pathlib import Path
from typing import Any

from gpuwhy.errors import UsageError
from gpuwhy.units import fmt_file_size

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


#: What :func:`read_input` can check in the first bytes: ``"text"`` (no NUL bytes: not a
#: binary file), ``"json"`` (text that starts with ``{`` or ``[``), or None (anything).
EXPECT = ("text", "json", None)
_HEAD = 4096


def check_head(head: bytes, path: str | Path, what: str, expect: str | None) -> None:
    """Refuse a file whose first bytes (``head``, after gzip) are not the ``expect``-ed format.

    Raises:
        UsageError: NUL bytes (a binary file, e.g. a core dump or a zeroed file) where text is
            expected, or a JSON file that does not start with ``{`` or ``[`` (one line naming the
            file and what was expected; the file's content is never echoed: it may be a secret,
            such as ``gpuwhy trace /etc/shadow``).
    """
    if expect is None:
        return
    where = str(path)
    if b"\0" in head[:_HEAD]:
        raise UsageError(f"{where!r} is a binary file (NUL bytes in its first {_HEAD} bytes), not {what}")
    if expect == "json":
        text = head.lstrip(b"\xef\xbb\xbf").lstrip()
        if text and text[:1] not in (b"{", b"["):
            raise UsageError(f"{where!r} is not JSON (a JSON document starts with {{ or [, this file does not); pass {what}")


def check_input_folder(path: str | Path, what: str) -> Path:
    """``path`` as a Path once it is known to be an existing folder.

    ``what`` says what the folder is for ("a folder of spec-sheet *.yaml files (--specs)").

    Raises:
        UsageError: it does not exist, or it is a file, not a folder.
    """
    p = Path(path).expanduser()
    if p.is_dir():
        return p
    if p.exists():
        raise UsageError(f"{str(path)!r} is a file, not a folder; pass {what}")
    raise UsageError(f"{str(path)!r} does not exist; pass {what}")


class _Bounded(io.RawIOBase):
    """The bytes of an open (maybe gzip) stream, the first ones checked, the total bounded.

    Errors while reading become one :class:`UsageError` line: over ``limit`` bytes, a broken
    gzip stream, an OS error.
    """

    def __init__(self, fh, src, path: Path, what: str, limit: int, packed: bool, head: bytes) -> None:
        super().__init__()
        self._fh, self._src, self._path, self._what = fh, src, path, what
        self._limit, self._packed = limit, packed
        self._pending = head
        self._total = len(head)

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        if self._pending:
            n = min(len(buf), len(self._pending))
            buf[:n] = self._pending[:n]
            self._pending = self._pending[n:]
            return n
        chunk = _guarded(self._path, self._what, self._src.read, min(len(buf), _CHUNK))
        self._total += len(chunk)
        if self._total > self._limit:
            verb = "unpacks to" if self._packed else "is"
            raise UsageError(f"{str(self._path)!r} {verb} more than the {fmt_file_size(self._limit)} input limit{_OVER}")
        buf[:len(chunk)] = chunk
        return len(chunk)

    def close(self) -> None:
        if not self.closed:
            try:
                if self._src is not self._fh:
                    self._src.close()
            finally:
                self._fh.close()
        super().close()


_OVER = f"; raise the limit with {ENV_MAX_BYTES}=BYTES if the file is meant to be this large"


def _guarded(path: Path, what: str, read, *args):
    """``read(*args)``, a broken gzip stream or an OS error turned into one :class:`UsageError` line."""
    try:
        return read(*args)
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise UsageError(f"{str(path)!r} is a broken gzip file ({exc}); pass {what}") from None
    except OSError as exc:
        raise UsageError(f"cannot read {str(path)!r} ({exc.strerror or exc}); pass {what}") from None


def open_input(path: str | Path, what: str, *, max_bytes: int | None = None, gunzip: bool = True,
               expect: str | None = None) -> io.BufferedReader:
    """The user's file ``path`` opened for reading in binary, gunzipped as it is read when it starts
    with the gzip magic and ``gunzip`` is set: what :func:`read_input` gives, a piece at a time, so a
    reader that streams holds a bounded part of the file (close it, or use it in a ``with``).

    The first bytes are checked against ``expect`` (:func:`check_head`) before it is returned;
    reading past ``max_bytes`` (after decompression), a broken gzip stream or an OS error while
    reading raise :class:`UsageError`.

    Raises:
        UsageError: see :func:`read_input`.
    """
    p = check_input_path(path, what)
    limit = max_input_bytes(max_bytes)
    size = p.stat().st_size
    if size > limit:
        raise UsageError(f"{str(p)!r} is {fmt_file_size(size)}, over the {fmt_file_size(limit)} input limit{_OVER}")
    fh = _guarded(p, what, open, p, "rb")
    try:
        magic = _guarded(p, what, fh.read, 2)
        fh.seek(0)
        packed = gunzip and magic == GZIP_MAGIC
        src = gzip.GzipFile(fileobj=fh) if packed else fh
        head = _guarded(p, what, src.read, _HEAD)
        check_head(head, p, what, expect)
        if len(head) > limit:
            raise UsageError(f"{str(p)!r} unpacks to more than the {fmt_file_size(limit)} input limit{_OVER}")
        return io.BufferedReader(_Bounded(fh, src, p, what, limit, packed, head), buffer_size=_CHUNK)
    except BaseException:
        fh.close()
        raise


def open_input_text(path: str | Path, what: str, *, max_bytes: int | None = None,
                    expect: str | None = "text", errors: str = "replace") -> io.TextIOWrapper:
    """:func:`open_input` decoded as UTF-8 as it is read (a BOM dropped; ``errors`` as
    :func:`codecs.decode` takes it: ``"replace"`` never raises, ``"strict"`` raises
    ``UnicodeDecodeError`` while reading); lines are not translated (``newline=""``, as
    :mod:`csv` wants them)."""
    return io.TextIOWrapper(open_input(path, what, max_bytes=max_bytes, expect=expect),
                            encoding="utf-8-sig", errors=errors, newline="")


def read_input(path: str | Path, what: str, *, max_bytes: int | None = None, gunzip: bool = True,
               expect: str | None = None) -> bytes:
    """The bytes of the user's file ``path``, gunzipped when it starts with the gzip magic and ``gunzip`` is set.

    Read in 1 MiB chunks (Ctrl-C stops it at once) through :func:`open_input`; the first bytes
    are checked against ``expect`` (:func:`check_head`) before the rest is read. Readers of
    large files stream them through :func:`open_input` instead of holding all the bytes.

    Args:
        path: the file.
        what: what the command expects, for messages ("a torch.profiler trace (.json or .json.gz)").
        max_bytes: limit in bytes after decompression (default :func:`max_input_bytes`).
        gunzip: undo gzip (detected by the first two bytes, not the name).
        expect: ``"text"``, ``"json"`` or None (see :data:`EXPECT`).

    Raises:
        UsageError: see :func:`check_input_path`; the file or its decompressed
            content is over the limit (the message names the limit and
            ``GPUWHY_MAX_INPUT_BYTES``); it cannot be read; the gzip stream is broken;
            its first bytes are not the expected format.
    """
    with open_input(path, what, max_bytes=max_bytes, gunzip=gunzip, expect=expect) as fh:
        out = bytearray()
        while True:
            chunk = fh.read(_CHUNK)
            if not chunk:
                return bytes(out)
            out += chunk


def read_input_text(path: str | Path, what: str, *, max_bytes: int | None = None, expect: str | None = "text") -> str:
    """:func:`read_input` decoded as UTF-8 (a BOM dropped; undecodable bytes replaced, never raised);
    a binary file is refused by its first bytes (``expect``)."""
    return read_input(path, what, max_bytes=max_bytes, expect=expect).decode("utf-8-sig", errors="replace")


def read_json(path: str | Path, what: str, *, max_bytes: int | None = None) -> Any:
    """The parsed JSON of the user's file ``path`` (plain or gzip), read by :func:`read_input`
    and parsed by :func:`loads_json` (Ctrl-C stops it within a fraction of a second).

    Raises:
        UsageError: see :func:`read_input`; the text is not valid JSON (one line with the
            position and what the command expects).
    """
    data = read_input(path, what, max_bytes=max_bytes, expect="json")
    try:
        return loads_json(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise UsageError(f"{str(path)!r} is not UTF-8 text ({exc.reason} at byte {exc.start}); pass {what}") from None
    except ValueError as exc:
        raise UsageError(f"{str(path)!r} is not valid JSON ({str(exc).splitlines()[0][:120]}); pass {what}") from None


# ------------------------------------------------------------- JSON parsing --
# json.loads is one C call that holds the interpreter for seconds on a big file, so Ctrl-C
# waits. loads_json parses the top-level object or array itself and hands the C parser
# slabs of a few MiB of a big array's elements at a time; between slabs Ctrl-C is seen.

#: Bytes of array text parsed per C call (about 20-40 ms of parsing).
JSON_SLAB = 4 * 1024 * 1024
#: Cuts tried per slab (each a C call over JSON_SLAB characters) before one element at a time.
_SLAB_CUTS = 2
_WS = re.compile(r"[ \t\n\r]*")
_ELEMENT_GAP = re.compile(r"[}\]][ \t\n\r]*,[ \t\n\r]*[{\[]")


def loads_json(text: str) -> Any:
    """``json.loads(text)``, the same result and the same errors, interruptible on big documents.

    Small texts (under :data:`JSON_SLAB` characters) go to ``json.loads`` at once. A big
    top-level object or array is walked here (two levels deep), its big arrays parsed in slabs.

    Raises:
        json.JSONDecodeError: (a ValueError) as json.loads raises it.
        ValueError: the document is nested deeper than the parser can follow (json.loads raises
            RecursionError there, which no caller expects from a file): "nested too deeply ...",
            so every caller names the file as it does for any text that is not JSON.
    """
    try:
        if len(text) <= JSON_SLAB:
            return json.loads(text)
        decoder = json.JSONDecoder()
        i = _WS.match(text).end()
        value, i = _value(text, i, decoder, 0)
        i = _WS.match(text, i).end()
        if i != len(text):
            raise json.JSONDecodeError("Extra data", text, i)
        return value
    except RecursionError:
        raise ValueError("nested too deeply to read, arrays or objects about a thousand levels inside each other: "
                         "is it the right file?") from None


def _value(s: str, i: int, dec: json.JSONDecoder, depth: int) -> tuple[Any, int]:
    c = s[i:i + 1]
    if depth < 2 and c == "{":
        return _object(s, i, dec, depth)
    if depth < 2 and c == "[":
        return _array(s, i, dec, depth)
    try:
        return dec.scan_once(s, i)
    except StopIteration as exc:
        raise json.JSONDecodeError("Expecting value", s, exc.value) from None


def _next_item(s: str, i: int, close: str) -> int:
    """After a member or element ending at ``i``: the start of the next one, or minus the index
    just past ``close`` when the container ends there.

    Raises:
        json.JSONDecodeError: neither a comma nor ``close`` follows.
    """
    i = _WS.match(s, i).end()
    c = s[i:i + 1]
    if c == close:
        return -(i + 1)
    if c != ",":
        raise json.JSONDecodeError("Expecting ',' delimiter", s, i)
    return _WS.match(s, i + 1).end()


def _object(s: str, i: int, dec: json.JSONDecoder, depth: int) -> tuple[dict, int]:
    out: dict = {}
    i = _WS.match(s, i + 1).end()
    if s[i:i + 1] == "}":
        return out, i + 1
    while True:
        if s[i:i + 1] != '"':
            raise json.JSONDecodeError("Expecting property name enclosed in double quotes", s, i)
        key, i = dec.scan_once(s, i)
        i = _WS.match(s, i).end()
        if s[i:i + 1] != ":":
            raise json.JSONDecodeError("Expecting ':' delimiter", s, i)
        i = _WS.match(s, i + 1).end()
        out[key], i = _value(s, i, dec, depth + 1)
        i = _next_item(s, i, "}")
        if i < 0:
            return out, -i


def _array(s: str, i: int, dec: json.JSONDecoder, depth: int) -> tuple[list, int]:
    out: list = []
    i = _WS.match(s, i + 1).end()
    if s[i:i + 1] == "]":
        return out, i + 1
    failed_end = -1
    while True:
        # A slab of whole elements in one C call: cut after an element that closes near
        # JSON_SLAB on; the cut is right exactly when the slab parses (a cut inside a string
        # or a nested value leaves it unbalanced). A wrong cut tries the next one (_SLAB_CUTS
        # cuts in all); when those fail too, the elements up to the last cut tried are parsed
        # one at a time before a slab is tried again. (Trying again at the next element made text whose
        # elements hold "}, {" in a string quadratic: the same kind of wrong cut one
        # element on, JSON_SLAB characters parsed per element.)
        gap = _ELEMENT_GAP.search(s, i + JSON_SLAB) if len(s) - i > JSON_SLAB and i > failed_end else None
        for _ in range(_SLAB_CUTS):
            if gap is None:
                break
            end = gap.start() + 1
            try:
                out.extend(json.loads("[" + s[i:end] + "]"))
                i = _WS.match(s, s.index(",", end) + 1).end()
                break
            except ValueError:
                failed_end = end
                gap = _ELEMENT_GAP.search(s, end)
        else:
            gap = None
        if gap is not None:
            continue
        value, i = _value(s, i, dec, depth + 1)
        out.append(value)
        i = _next_item(s, i, "]")
        if i < 0:
            return out, -i
