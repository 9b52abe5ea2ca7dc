"""`gpuwhy report`'s page written to its file: the sources a report is made from
(:class:`~gpuwhy.api.report.ReportSources`) drawn into one self-contained HTML page
(:func:`gpuwhy.render.report_html.render_report`), written without ever replacing a file gpuwhy
did not write, and what was written (:class:`ReportWritten`, the ``--json`` document)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass


#: The comment gpuwhy puts just before a report's end: the SHA-256 of the page without it. A page
#: edited in place after gpuwhy wrote it (still ending where gpuwhy's ended) no longer matches.
SIGNATURE = "<!-- gpuwhy-sha256 "
_SIGNED = re.compile(r"<!-- gpuwhy-sha256 ([0-9a-f]{64}) -->\n")
#: Largest existing file read to check its signature (bytes); a report is well under this.
_CHECK_MAX_BYTES = 256 * 1024 * 1024


def sign_report(text: str) -> str:
    """``text`` (a page ending in :data:`~gpuwhy.render.report_html.REPORT_END`) with its signature
    inserted just before the end, so the file still ends where gpuwhy's page ends."""
    from .report_html import REPORT_END

    cut = text.rindex(REPORT_END)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return f"{text[:cut]}{SIGNATURE}{digest} -->\n{text[cut:]}"


def _edited(data: bytes) -> bool:
    """True when the signed page ``data`` is not what gpuwhy wrote (False for a page without a signature:
    an older gpuwhy's, judged by its end alone)."""
    text = data.decode("utf-8", errors="surrogateescape")
    found = list(_SIGNED.finditer(text))
    if not found:
        return False
    m = found[-1]
    rest = text[:m.start()] + text[m.end():]
    return hashlib.sha256(rest.encode("utf-8", errors="surrogateescape")).hexdigest() != m.group(1)


def check_out_path(out: str, flag: str = "--out") -> None:
    """Refuse an ``--out`` that gpuwhy must not write (:func:`gpuwhy.outputs.writable_output`): a folder,
    a missing folder, a symbolic link, an existing file that is not a gpuwhy report (no
    ``<meta name="generator" content="gpuwhy``), one that was appended to since gpuwhy wrote it, or
    one edited in place since (its :data:`SIGNATURE` no longer matches).

    Raises:
        UsageError: with the reason.
    """
    from ..errors import UsageError
    from ..outputs import writable_output
    from .report_html import GENERATOR_MARK, REPORT_END

    p = writable_output(out, flag, marker=GENERATOR_MARK.encode(), end=REPORT_END.encode())
    if not p.is_file():
        return
    try:
        with open(p, "rb") as fh:
            data = fh.read(_CHECK_MAX_BYTES + 1)
    except OSError:
        return  # unreadable: the write says why
    if len(data) > _CHECK_MAX_BYTES or _edited(data):
        size = " (and is larger than any report)" if len(data) > _CHECK_MAX_BYTES else ""
        raise UsageError(f"{flag} {out!r} was written by gpuwhy but has been changed since{size} (edited after "
                         f"gpuwhy wrote it); remove it or choose another path")


def write_report(out: str, text: str, flag: str = "--out") -> int:
    """Write the report ``text`` to ``out`` (already checked by :func:`check_out_path`), signed
    (:func:`sign_report`), through a temporary file in its folder, so a reader never sees half a
    page; the bytes written.

    Raises:
        UsageError: the file cannot be written (one line naming ``flag``).
    """
    import os
    import tempfile

    from ..errors import UsageError

    data = sign_report(text).encode("utf-8")
    parent = os.path.dirname(os.path.abspath(out))
    try:
        fd, tmp = tempfile.mkstemp(dir=parent, prefix=".gpuwhy-report-", suffix=".html")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    except OSError as exc:
        raise UsageError(f"{flag} {out!r} cannot be written ({exc.strerror}); pass a writable path") from None
    return len(data)


def report_checks():
    """The checks :func:`gpuwhy.api.report.gather` makes for this writer before reading anything."""
    from ..api.report import ReportChecks
    from .report_run import run_document_problem

    return ReportChecks(out_path=check_out_path, run_document=run_document_problem)


@dataclass(frozen=True)
class ReportWritten:
    """A report written: where (``out``), its size in ``bytes``, the sheet compared against (``sheet``
    name or None), ``dtype``, the ``sections`` filled, ``inputs`` (section, where from), the ``placed``
    points (:class:`~gpuwhy.render.report_data.PlacedPoint`), ``commands`` and ``notes``; ``warnings``:
    the loud lines of points above 100% of their roof (:attr:`~gpuwhy.render.report_data.PlacedPoint.above_roof`)."""

    out: str
    bytes: int
    sheet: str | None
    dtype: str
    sections: dict
    inputs: tuple[tuple[str, str], ...]
    placed: tuple
    commands: tuple[str, ...]
    notes: tuple[str, ...]

    def to_dict(self) -> dict:
        """The ``report`` document's body."""
        return {
            "out": self.out,
            "bytes": self.bytes,
            "sheet": self.sheet,
            "dtype": self.dtype,
            "sections": dict(self.sections),
            "inputs": [{"section": w, "from": p} for w, p in self.inputs],
            "points": [pp.verdict.to_dict() for pp in self.placed],
            "commands": list(self.commands),
            "notes": list(self.notes),
            "warnings": list(self.warnings),
        }

    @property
    def warnings(self) -> tuple[str, ...]:
        """The points above 100% of their roof, one loud line each."""
        return tuple(pp.above_roof for pp in self.placed if pp.above_roof)


def write_report_file(src) -> ReportWritten:
    """Draw the page of ``src`` (a :class:`~gpuwhy.api.report.ReportSources`) and write it to ``src.out``;
    a live probe's body gets the document header (:func:`gpuwhy.render.jsonout.document`).

    A point above 100% of its roof is warned of at once (:func:`gpuwhy.notices.warn`: stderr, in
    every output format).

    Raises:
        UsageError: a point and no ceiling of its dtype in the inputs; a point the roofline cannot
            place; the file cannot be written.
    """
    import datetime as _dt

    from ..api.report import SECTIONS
    from ..errors import UsageError
    from ..version import __version__
    from .jsonout import document
    from .report_data import ReportInput, ReportPoint, ceilings_by_precision, measured_of, place_points, spec_of
    from .report_html import render_report

    docs = dict(src.docs)
    if src.live_probe:
        docs["probe"] = document("probe", docs["probe"])
    points = tuple(ReportPoint(*p) for p in src.points)
    generated = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
    inp = ReportInput(
        version=__version__, commands=src.commands, generated=generated,
        probe=docs.get("probe"), bench=docs.get("bench"), check=docs.get("check"),
        latency=docs.get("latency"), link=docs.get("link"), sheet=src.sheet, dtype=src.dtype, points=points,
        inputs=src.inputs, notes=src.notes, run=docs.get("run"),
    )
    spec, meas = spec_of(inp), measured_of(inp)
    ceil = ceilings_by_precision(inp, spec, meas)
    missing = [d for d, c in ceil.items() if c is None]
    if points and missing:
        have = ", ".join(sorted((set(spec.peaks) if spec else set()) | set(meas.peaks if meas else {}))) or "none"
        raise UsageError(f"--point needs a {missing[0]} ceiling and the inputs have none (peaks known: {have}); "
                         f"pass --dtype or the point's DTYPE with one of those, or --gpu NAME")
    try:
        placed = place_points(points, ceil, src.dtype) if points else []
    except ValueError as exc:
        raise UsageError(f"--point: {exc}") from None
    from ..notices import warn

    for pp in placed:
        if pp.above_roof:  # loud on stderr whatever the format (--json too), and on the page
            warn(pp.above_roof)
    size = write_report(src.out, render_report(inp))
    return ReportWritten(src.out, size, spec.name if spec else None, src.dtype, {k: k in docs for k in SECTIONS},
                         src.inputs, tuple(placed), src.commands, src.notes)


def render_report_written(w: ReportWritten) -> None:
    """The terminal's account of a report written: its notes, each point's verdict, and where it went
    (a point above its roof was warned of on stderr as it was placed, in every format)."""
    from .console import note, out

    for n in w.notes:
        note(n)
    for pp in w.placed:
        out().print(pp.label, markup=False, highlight=False)
    shown = ", ".join(k for k, filled in w.sections.items() if filled) or "spec sheet only"
    note(f"report written to {w.out} ({w.bytes / 1024:.0f} KiB; {shown})")
