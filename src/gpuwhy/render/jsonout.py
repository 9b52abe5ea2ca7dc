"""The JSON writer used by every ``--json`` flag: one document on stdout."""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from typing import Any

SCHEMA_VERSION = 2


def to_plain(obj: Any) -> Any:
    """Convert result objects to JSON-ready data.

    Objects with ``to_dict()`` use it; other dataclasses are converted field by
    field; NaN and infinity become ``None`` (JSON has neither); tuples become lists.
    """
    if hasattr(obj, "to_dict"):
        return to_plain(obj.to_dict())
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): to_plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [to_plain(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalars
        return to_plain(obj.item())
    return obj


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
    out.flush()
