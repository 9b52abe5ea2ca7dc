"""The ``gpuwhy check --json`` document, and reading recorded observations back (``--recorded``).

The document (``kind: check``) holds: ``host`` and ``date`` (ISO 8601 UTC) of the run;
``status`` (``pass``/``warn``/``fail``) and ``passed`` (false only for ``fail``);
``counts`` of checks per state; the ``policy``; per GPU in ``devices`` its checks (each a
``name``, a ``status``, its numbers with units in the keys, and the texts people read);
the raw ``observations`` (numbers with units in the keys: what ``--recorded``,
``--baseline`` and ``gpuwhy fleet summarize`` read back); and ``baseline``, what each GPU
was compared with (None without ``--baseline``). It is also what ``--save-baseline`` writes.
"""

from __future__ import annotations


from ..errors import UsageError
from .policy import STATES, DeviceChecks, Observations, Policy


def check_document(reports: list[DeviceChecks], observations: list[Observations], policy: Policy, *,
                   host: str = "", date: str = "", comparisons: list | None = None) -> dict:
    """The ``--json`` document body (see the module docstring); ``comparisons`` holds one
    :class:`~gpuwhy.check.baseline.Comparison` (or None) per report."""
    failed = any(r.failed for r in reports)
    warned = any(r.status == "warn" for r in reports)
    base = None
    if comparisons and any(c is not None for c in comparisons):
        base = {"file": next(c.source for c in comparisons if c is not None),
                "devices": [None if c is None else {"uuid": r.uuid, "against": c.against, "note": c.note}
                            for r, c in zip(reports, comparisons)]}
    return {
        "host": host,
        "date": date,
        "status": "fail" if failed else "warn" if warned else "pass",
        "passed": not failed,
        "counts": {s: sum(r.count(s) for r in reports) for s in STATES},
        "policy": policy.to_dict(),
        "devices": [r.to_dict() for r in reports],
        "observations": [o.to_dict() for o in observations],
        "baseline": base,
    }


def read_recorded(path: str) -> tuple[list[Observations], str, str]:
    """The observations of a recorded run (a JSON list of them, or a ``check --json`` document),
    with the document's ``host`` and ``date`` ("" when it has none).

    Raises:
        UsageError: the file cannot be read, is not JSON, holds no observations, or an entry
            is not an object or has an unknown key or a bad value.
    """
    from ..inputs import read_json

    try:
        data = read_json(path, "recorded observations (a `gpuwhy check --json` file or a JSON list)")
    except UsageError as exc:
        raise UsageError(f"--recorded: {exc}") from None
    items = data.get("observations", data) if isinstance(data, dict) else data
    if not isinstance(items, list) or not items:
        raise UsageError(f"--recorded {path!r}: expected a non-empty list of observations (one per GPU)")
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise UsageError(f"--recorded {path!r}: entry {i} is not an object of observations")
        try:
            out.append(Observations.from_dict(item))
        except UsageError as exc:
            raise UsageError(f"--recorded {path!r}: entry {i}: {exc}") from None
    host = data.get("host") if isinstance(data, dict) and isinstance(data.get("host"), str) else ""
    date = data.get("date") if isinstance(data, dict) and isinstance(data.get("date"), str) else ""
    return out, host, date
