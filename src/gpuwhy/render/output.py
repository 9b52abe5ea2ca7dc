"""The one output path: every command hands its result here with the format chosen.

:func:`show` writes the files asked for first (a plot, JUnit XML), then one of: the CSV
(``--csv``, :mod:`gpuwhy.render.csv_out`), the JSON document (``--json``,
:func:`gpuwhy.render.jsonout.emit`, its header from :func:`gpuwhy.render.jsonout.document`),
or the command's terminal view followed by a note per file written. :func:`save_document`
writes a document to a file (a baseline) with the same header.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence


@dataclass(frozen=True)
class Format:
    """The output format asked for: ``json`` (``--json``), ``csv`` (``--csv``), else the terminal."""

    json: bool = False
    csv: bool = False

    def check(self) -> None:
        """Refuse ``--csv`` with ``--json`` now (a command that checks before any work).

        Raises:
            UsageError: both were asked for.
        """
        if self.json and self.csv:
            from ..errors import UsageError

            raise UsageError("--csv and --json exclude each other; pick one")


@dataclass(frozen=True)
class FileOut:
    """A file the command writes beside its output: ``write()`` writes it (before the output);
    ``said``, when set, is the note printed after the terminal view ("roofline drawn to r.png")."""

    write: Callable[[], Any]
    said: str | None = None


def show(kind: str, result: Any, fmt: Format, view: Callable[[Any], None], *, document: Any = None,
         rows: Any = None, csv: Callable[[Any], None] | None = None, files: Sequence[FileOut] = ()) -> None:
    """Write ``result`` of a command as ``fmt`` asks.

    Args:
        kind: the JSON document's ``kind`` and the CSV table's (:data:`gpuwhy.render.csv_out.TABLES`).
        result: what the command found; ``view(result)`` prints it for the terminal.
        document: what ``--json`` holds, when not ``result`` itself.
        rows: what ``--csv`` tabulates, when not ``result``; ``csv(result)``: a command's own
            CSV writer instead of the one of :mod:`gpuwhy.render.csv_out`.
        files: written first, whatever the format.

    Raises:
        UsageError: ``--csv`` with ``--json`` (after the files are written); what writing a file raises.
    """
    for f in files:
        f.write()
    if fmt.csv and csv is None:
        from .csv_out import emit_csv

        emit_csv(kind, result if rows is None else rows, fmt.json)
        return
    if fmt.json:
        from .jsonout import emit

        emit(kind, result if document is None else document)
        return
    if fmt.csv:
        csv(result)
        return
    view(result)
    said = [f.said for f in files if f.said]
    if said:
        from .console import note

        for words in said:
            note(words)


#: The ``kind`` of the document a failed command prints with ``--json`` (docs/schema/error.schema.json).
ERROR_KIND = "error"


def show_error(command: str, message: str, exit_code: int, *, candidates=(), extra: dict | None = None) -> None:
    """The one document a command given ``--json`` prints on stdout when it fails before its own
    document (its error line on stderr and its exit code stay as they are): ``kind`` "error",
    the ``command`` (``"specs list"``; ``""`` for gpuwhy with no command), ``error`` with the
    ``message`` (the stderr line's words), the ``exit_code`` and, where the GPU name matched
    several sheets, ``candidate_sheets``; and ``extra`` (what the command had done, e.g. the ncu
    run). The CLI calls it for every command (:func:`gpuwhy.cli.app.main`)."""
    from .jsonout import emit

    err: dict = {"message": message, "exit_code": int(exit_code)}
    if candidates:
        err["candidate_sheets"] = list(candidates)
    emit(ERROR_KIND, {"command": command, "error": err, **(extra or {})})


def show_failure(command: str, exc: BaseException, fmt: Format, extra: dict | None = None) -> None:
    """With ``--json``, :func:`show_error` of ``exc`` with ``extra`` (what the command had done: the
    ncu run), printed by the command itself before it raises ``exc`` (the CLI then prints no
    second document); nothing otherwise."""
    if not fmt.json:
        return
    from ..errors import GpuwhyError

    show_error(command, str(exc), exc.exit_code if isinstance(exc, GpuwhyError) else 70,
               candidates=getattr(exc, "candidates", ()), extra=extra)


def save_document(kind: str, payload: Any, write: Callable[[dict], Any]) -> Any:
    """``write(document)`` of ``kind`` and ``payload`` (:func:`gpuwhy.render.jsonout.document`: the
    header every ``--json`` document has) and what it returns (a saved baseline's path)."""
    from .jsonout import document

    return write(document(kind, payload))


def save_baseline(kind: str, payload: Any, path: str, overwrite: bool) -> None:
    """Save a run as a baseline: the ``kind`` document of ``payload`` written to ``path``
    (:func:`gpuwhy.check.baseline.write_baseline`; an existing file only with ``overwrite``), and
    a note saying where.

    Raises:
        UsageError: the file must not or cannot be written.
    """
    from ..check.baseline import write_baseline
    from .console import note

    note(f"baseline saved to {save_document(kind, payload, lambda doc: write_baseline(path, doc, overwrite))}")
