"""The JSON writer used by every ``--json`` flag: one document on stdout, and the one builder of
the header every gpuwhy document carries (:func:`document`: ``gpuwhy``, ``schema``, ``kind``).
Result objects become plain data through :func:`gpuwhy.plain.to_plain` (re-exported here)."""

from __future__ import annotations

import json
import sys
from typing import Any

from ..plain import to_plain

SCHEMA_VERSION = 2
#: Documents written on standard output by this process (:func:`documents_written`).
_WRITTEN = [0]


def document(kind: str, payload: Any) -> dict:
    """``{"gpuwhy": version, "schema": SCHEMA_VERSION, "kind": kind, **payload}`` in plain data (a payload that is
    no mapping goes under ``result``): the document ``--json`` prints, and a file gpuwhy saves."""
    from ..version import __version__

    doc = {"gpuwhy": __version__, "schema": SCHEMA_VERSION, "kind": kind}
    plain = to_plain(payload)
    if isinstance(plain, dict):
        doc.update(plain)
    else:
        doc["result"] = plain
    return doc


def emit(kind: str, payload: Any, stream=None) -> None:
    """Write :func:`document` of ``kind`` and ``payload`` as one JSON document."""
    doc = document(kind, payload)
    out = stream or sys.stdout
    out.write(json.dumps(doc, indent=2, allow_nan=False) + "\n")
    if stream is None:
        _WRITTEN[0] += 1
    out.flush()


def documents_written() -> int:
    """How many documents :func:`emit` has written on standard output in this process: the CLI
    compares it before and after a command, so that a failed command's error document
    (:func:`gpuwhy.render.output.show_error`) is printed only where no document came before it."""
    return _WRITTEN[0]


__all__ = ["SCHEMA_VERSION", "document", "documents_written", "emit", "to_plain"]
