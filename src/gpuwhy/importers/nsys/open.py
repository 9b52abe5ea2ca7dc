"""Opening a user's Nsight Systems report: an ``nsys export --type sqlite`` file (plain or gzipped), or a
``.nsys-rep`` / ``.qdrep`` report exported through ``nsys`` when it is on PATH.

Nothing the user owns is written: a ``.sqlite`` is opened read-only and immutable (SQLite makes no
journal beside it), a gzipped one is unpacked into a temporary folder, and a ``.nsys-rep`` is exported
into a temporary folder (``nsys export --type sqlite --output TMP/report.sqlite REPORT.nsys-rep``), each
removed once read.
"""

from __future__ import annotations

import gzip
import os
import shutil
import sqlite3
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from ...errors import NoDeviceError, UsageError
from ...inputs import GZIP_MAGIC, check_input_path, read_input

#: The first 16 bytes of every SQLite 3 database file (sqlite.org/fileformat.html, section 1.3.1).
SQLITE_MAGIC = b"SQLite format 3\x00"
#: File names of Nsight Systems reports (``.qdrep`` before 2021.4).
REP_SUFFIXES = (".nsys-rep", ".qdrep")
WHAT = "an Nsight Systems report (`nsys export --type sqlite` .sqlite, .sqlite.gz, or .nsys-rep)"
#: Every timeline file `gpuwhy trace` reads, for a path refused before its kind is known.
ANY_TRACE = ("a torch.profiler trace (.json, .json.gz), " + WHAT + ", or the log folder of "
             "jax.profiler.trace(LOGDIR)")
#: How to export a report where ``nsys`` is.
EXPORT_HINT = "nsys export --type sqlite --output REPORT.sqlite REPORT.nsys-rep"
#: Seconds an ``nsys export`` may take (a report of a long run exports in a minute or two).
EXPORT_TIMEOUT_S = 1800


def kind_of(path: str | Path) -> str | None:
    """What ``path`` holds, by its first bytes and then its name: ``"sqlite"`` (an SQLite database,
    plain or gzipped), ``"nsys-rep"`` (named ``.nsys-rep`` or ``.qdrep``), ``"sqlite-named"`` (named
    ``.sqlite`` but not an SQLite database: empty, cut short, another format), or None (not an
    Nsight Systems file: a torch.profiler trace, anything else).

    Raises:
        UsageError: the path is not a readable regular file (the message names every trace gpuwhy
            reads: the caller has not told which it is yet).
    """
    p = check_input_path(path, ANY_TRACE)
    try:
        with open(p, "rb") as fh:
            head = fh.read(len(SQLITE_MAGIC))
            if head[:2] == GZIP_MAGIC:
                fh.seek(0)
                with gzip.GzipFile(fileobj=fh) as gz:
                    head = gz.read(len(SQLITE_MAGIC))
    except (OSError, EOFError, gzip.BadGzipFile):
        head = b""
    if head == SQLITE_MAGIC:
        return "sqlite"
    name = p.name.lower()
    if name.endswith(REP_SUFFIXES):
        return "nsys-rep"
    if name.endswith((".sqlite", ".sqlite.gz", ".db")):
        return "sqlite-named"
    return None


def _connect(path: Path) -> sqlite3.Connection:
    """A read-only, immutable connection to the database file ``path`` (SQLite writes nothing beside it)."""
    uri = f"file:{quote(str(path.resolve()))}?mode=ro&immutable=1"
    return sqlite3.connect(uri, uri=True)


def _first_line(text: str) -> str:
    return next((ln.strip() for ln in text.splitlines() if ln.strip()), "no output")[:300]


def find_nsys() -> str | None:
    """The ``nsys`` executable on PATH, None when there is none."""
    return shutil.which("nsys")


def export_command(nsys: str, rep: str | Path, out: str | Path) -> list[str]:
    """The ``nsys export`` command that writes ``rep`` as the SQLite database ``out`` (a new file)."""
    return [nsys, "export", "--type", "sqlite", "--output", str(out), str(rep)]


def _export(rep: Path, folder: Path) -> Path:
    """``rep`` exported to ``folder/report.sqlite`` by ``nsys``.

    Raises:
        NoDeviceError: ``nsys`` is not on PATH (exit 3, as a ``.ncu-rep`` without ``ncu``).
        UsageError: ``nsys export`` failed or wrote nothing (its first line of output).
    """
    nsys = find_nsys()
    if nsys is None:
        raise NoDeviceError(f"{rep} is an Nsight Systems report and `nsys` is not on PATH to export it; export it "
                            f"where nsys is ({EXPORT_HINT}) and pass the .sqlite, or install Nsight Systems "
                            "(https://developer.nvidia.com/nsight-systems) and put `nsys` on PATH")
    out = folder / "report.sqlite"
    try:
        done = subprocess.run(export_command(nsys, rep, out), capture_output=True, text=True, errors="replace",
                              timeout=EXPORT_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError) as exc:
        raise UsageError(f"{rep}: `nsys export` could not run ({exc})") from None
    if done.returncode != 0 or not out.is_file():
        raise UsageError(f"{rep}: `nsys export --type sqlite` failed (exit {done.returncode}): "
                         f"{_first_line(done.stderr + done.stdout)}")
    return out


@contextmanager
def opened(path: str | Path):
    """A read-only connection to the report ``path`` (see the module docstring), closed (and any
    temporary copy removed) on leaving.

    Raises:
        UsageError: not a file; empty; not an SQLite database (``file`` names what to pass); a gzip
            stream that is broken or over the input limit; ``nsys export`` failed.
        NoDeviceError: a ``.nsys-rep`` and no ``nsys`` on PATH.
    """
    p = check_input_path(path, WHAT)
    kind = kind_of(p)
    if p.stat().st_size == 0:
        raise UsageError(f"{str(p)!r} is empty; pass {WHAT}")
    with tempfile.TemporaryDirectory(prefix="gpuwhy-nsys-") as tmp:
        if kind == "nsys-rep":
            db = _export(p, Path(tmp))
        elif kind == "sqlite":
            db = p
            with open(p, "rb") as fh:
                packed = fh.read(2) == GZIP_MAGIC
            if packed:
                db = Path(tmp) / "report.sqlite"
                db.write_bytes(read_input(p, WHAT))
        else:
            raise UsageError(f"{str(p)!r} is not an SQLite database (it does not start with the SQLite header: empty, "
                             f"cut short or another format); pass {WHAT}")
        conn = _connect(db)
        try:
            yield conn
        finally:
            conn.close()
            if db != p:
                try:
                    os.remove(db)
                except OSError:
                    pass


__all__ = ["EXPORT_HINT", "REP_SUFFIXES", "SQLITE_MAGIC", "WHAT", "export_command", "find_nsys", "kind_of", "opened"]
