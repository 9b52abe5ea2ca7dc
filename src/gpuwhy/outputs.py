"""Files gpuwhy writes at the user's request (plots, CSV, JUnit XML, the HTML report): the one
guard that never loses a file the user owns (:func:`writable_output`)."""

from __future__ import annotations

from pathlib import Path

from .errors import UsageError

#: Bytes every plot gpuwhy writes carries near its start (PNG "Software" text chunk,
#: SVG "Creator" metadata), so an earlier gpuwhy plot may be replaced and nothing else.
MARK = b"gpuwhy"


def writable_output(path: str, what: str, marker: bytes | None = MARK, end: bytes | None = None) -> Path:
    """Check, before any work, that ``path`` can be written without destroying anything.

    The one guard of every file gpuwhy writes (plots, CSV, JUnit XML, the HTML report).
    An existing file is replaced only when ``marker`` occurs in its first 8 KiB (a
    file gpuwhy wrote earlier) and, with ``end``, the file still ends with ``end``
    (nothing was appended to it since); with ``marker=None`` no existing file is
    replaced. A symbolic link is never written through.

    Raises:
        UsageError: ``path`` is empty or ``-`` (standard output is not a file gpuwhy writes), a folder, a symbolic link, a device or pipe, its folder
            does not exist, or it holds a file gpuwhy did not write or that was added to since
            (one line naming the option and what to do).
    """
    if not str(path).strip():
        raise UsageError(f"{what} is empty; give a file name")
    if str(path).strip() == "-":
        raise UsageError(f"{what} '-': this file is written by gpuwhy, not to standard output (which carries the "
                         "command's own output: use --json or --csv there); give a file name")
    p = Path(path)
    if p.is_symlink():
        raise UsageError(f"{what} {path!r} is a symbolic link (to {str(p.resolve())!r}); gpuwhy does not write through "
                         "links: pass the real file or another path")
    if p.is_dir():
        raise UsageError(f"{what} {path!r} is a folder, not a file; give a file name")
    if not p.parent.is_dir():
        why = "is a file, not a folder" if p.parent.exists() else "does not exist"
        raise UsageError(f"{what} {path!r}: folder {str(p.parent)!r} {why}")
    if p.exists() and not p.is_file():  # a device (/dev/full, /dev/zero), a named pipe, a socket: never read or written
        raise UsageError(f"{what} {path!r} is not a regular file (a device, pipe or socket); give a file name")
    if p.exists():
        head, tail = b"", b""
        try:
            with p.open("rb") as fh:
                head = fh.read(8192)
                if end is not None:
                    fh.seek(max(0, p.stat().st_size - len(end) - 64))
                    tail = fh.read()
        except OSError:
            pass
        if marker is None or marker not in head:
            raise UsageError(f"{what} {path!r} already exists and gpuwhy did not write it; remove it or choose another path")
        if end is not None and not tail.rstrip().endswith(end.rstrip()):
            raise UsageError(f"{what} {path!r} was written by gpuwhy but has been changed since (it no longer ends "
                             "where gpuwhy's file ended); remove it or choose another path")
    return p


#: File types the plotting paths write.
PLOT_SUFFIXES = (".png", ".svg")


def check_plot_path(path: str, option: str = "--out") -> str:
    """``path`` if it ends in .png or .svg and can be written without losing a user's file.

    Raises:
        UsageError: any other suffix, a missing folder, or an existing file gpuwhy
            did not write (one line naming the option).
    """
    if Path(path).is_dir():
        writable_output(path, option)  # the folder line
    if not str(path).lower().endswith(PLOT_SUFFIXES):
        raise UsageError(f"{option} {path!r} must end in .png or .svg")
    writable_output(path, option)
    return path


#: The first line of every node_exporter textfile gpuwhy writes (a comment the exposition format
#: ignores), so an earlier one may be replaced and nothing else.
TEXTFILE_MARK = b"# gpuwhy textfile metrics"


def check_textfile_path(path: str, option: str = "--textfile") -> Path:
    """``path`` if node_exporter's textfile collector would read it (a ``*.prom`` file, the only
    files that collector reads) and it can be replaced without losing a user's file (a file gpuwhy
    wrote before, :data:`TEXTFILE_MARK`): checked before anything is measured.

    Raises:
        UsageError: another suffix, or what :func:`writable_output` refuses (one line naming the option).
    """
    p = writable_output(path, option, marker=TEXTFILE_MARK)
    if not p.name.endswith(".prom") or p.name.startswith("."):
        raise UsageError(f"{option} {path!r} must be a file named *.prom (node_exporter's textfile collector reads "
                         "only those, and skips names that start with a dot), e.g. gpuwhy.prom in the folder node_exporter's textfile collector reads")
    return p


def write_atomically(path: str | Path, text: str, option: str) -> Path:
    """Write ``text`` to ``path`` so that a reader sees the old file or the new one, never half of
    either: a temporary file in the same folder (a dot name without ``.prom``, which the textfile
    collector skips), flushed to disk, made world-readable (0644: node_exporter often runs as
    another user), then renamed over ``path``. The temporary file is removed when anything fails.

    Raises:
        UsageError: the folder cannot be written (one line naming ``option`` and the reason).
    """
    import os
    import tempfile

    p = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    except OSError as exc:
        raise UsageError(f"{option} {str(p)!r}: cannot write in {str(p.parent)!r} ({exc.strerror or exc})") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, p)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise UsageError(f"{option} {str(p)!r}: cannot write ({exc.strerror or exc})") from None
    return p
