"""Result objects as plain data (dicts, lists, strings, numbers, None): what a ``--json`` document
and a file gpuwhy saves hold. Below every layer, so a use case can compare a run's document with
a saved one; the document's header is :func:`gpuwhy.render.jsonout.document`'s."""

from __future__ import annotations

import dataclasses
import math
from typing import Any


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
