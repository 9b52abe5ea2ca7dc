"""CSV for machines, the one way every table command writes it (``--csv``), as
``nvidia-smi --format=csv`` users expect: a header row, then one row per record.

The rows come from the command's ``--json`` document (:func:`gpuwhy.render.jsonout.to_plain`
of the same result), so the column names are its keys, with their SI units in them
(``*_s``, ``*_bytes``, ``*_gbs`` = 1e9 B/s, ``*_tflops`` = 1e12 FLOP/s, ``*_pct``); a
nested object's keys are joined to its own with ``_`` (``peak_tflops_fp32``). Numbers are
written plain, to :data:`CSV_DIGITS` significant figures in Python's shortest form (``7.04e-05``,
``0.3``, never the float noise ``0.30000000000000004``), true/false as ``true``/``false``, a
list of plain values as its items joined by ``"; "``, a missing value as an empty cell;
lists of objects (nested tables) and a text beside its own figure (``time_resolution`` beside
``time_resolution_s``) are left out of a row. :data:`TABLES` says, per
document kind, which records are the rows; a kind not listed is one row, the document.
"""

from __future__ import annotations

import csv
import io
import sys
from typing import Any, Callable, Iterable, Mapping

#: Keys of every ``--json`` document that are not figures of the result.
_HEADER = ("gpuwhy", "schema", "kind")


#: Significant figures of a number in a CSV cell: more than any figure gpuwhy measures holds, fewer
#: than the 17 that show a binary float's rounding (0.1 + 0.2 = 0.30000000000000004).
CSV_DIGITS = 12


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(float(f"{v:.{CSV_DIGITS}g}"))
    if isinstance(v, (list, tuple)):
        return "; ".join(_cell(x) for x in v)
    return str(v)


#: The unit suffixes of a figure's key (docs/schema/README.md): a text value whose key plus one of
#: them names a figure of the same record is that figure for people (``time_resolution``: "1 us"
#: beside ``time_resolution_s``: 1e-06), left out of the CSV, whose cells hold numbers.
_UNIT_SUFFIXES = ("_s", "_us", "_bytes", "_gbs", "_tflops", "_pct")


def flatten(record: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``record`` as one level of ``key: value``: nested objects joined with ``_``, lists of
    objects (a nested table) left out, lists of plain values kept whole, a text that stands
    beside its figure left out (:data:`_UNIT_SUFFIXES`)."""
    out: dict[str, Any] = {}
    for k, v in record.items():
        key = f"{prefix}{k}"
        if isinstance(v, str) and any(isinstance(record.get(k + u), (int, float)) for u in _UNIT_SUFFIXES):
            continue
        if isinstance(v, Mapping):
            if not v.get("n/a"):  # an NA ({"n/a": reason}) is an empty cell, not a column
                out.update(flatten(v, key + "_"))
            else:
                out[key] = None
        elif isinstance(v, (list, tuple)):
            if not any(isinstance(x, (Mapping, list, tuple)) for x in v):
                out[key] = list(v)
        else:
            out[key] = v
    return out


def write_csv(records: Iterable[Mapping[str, Any]], stream=None, columns: list[str] | None = None) -> None:
    """Write ``records`` (flattened with :func:`flatten`) as CSV: the header row (``columns``,
    else every key in the order first seen), then one row per record."""
    rows = [flatten(r) for r in records]
    if columns is None:
        columns = list(dict.fromkeys(k for r in rows for k in r))
    buf = io.StringIO()  # one write, as the JSON writer does: a reader that stops early is the CLI's to handle
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for r in rows:
        w.writerow([_cell(r.get(c)) for c in columns])
    out = stream or sys.stdout
    out.write(buf.getvalue())
    out.flush()


def _each(doc: dict, outer: str, inner: str, keep: tuple[str, ...]) -> list[dict]:
    """The ``inner`` records of every ``outer`` record, each led by the outer record's ``keep`` fields."""
    rows = []
    for o in doc.get(outer) or []:
        lead = {k: o.get(k) for k in keep}
        rows.extend({**lead, **r} for r in o.get(inner) or [])
    return rows


def _check_rows(doc: dict) -> list[dict]:
    """One row per GPU: its observations (every measured figure), pass/fail, each check's status."""
    rows = []
    devices = doc.get("devices") or []
    observations = doc.get("observations") or [{} for _ in devices]
    for dev, obs in zip(devices, observations):
        row = {"device": dev.get("device"), "uuid": dev.get("uuid"), "sheet": dev.get("sheet"), "passed": dev.get("passed")}
        row.update({k: v for k, v in obs.items() if k not in row and k != "reasons"})
        row.update({f"{c['name']}_status": c.get("status") for c in dev.get("checks") or []})
        rows.append(row)
    return rows


def _llm_rows(doc: dict) -> list[dict]:
    """The decode step, then the batch sweep's steps, each led by the model, GPU and dtypes."""
    lead = {"model": doc.get("model"), "params": doc.get("params"), "weight_dtype": doc.get("weight_dtype"),
            "kv_dtype": doc.get("kv_dtype"), "gpu": (doc.get("gpu") or {}).get("name")}
    steps = [doc["decode"]] if doc.get("decode") else []
    seen = {(s.get("batch"), s.get("context")) for s in steps}
    steps += [s for s in doc.get("sweep") or [] if (s.get("batch"), s.get("context")) not in seen]
    return [{**lead, **s} for s in steps]


def _bench_rows(d: dict) -> list[dict]:
    return [{"gpu": (d.get("device") or {}).get("name"), "uuid": (d.get("device") or {}).get("uuid"), **r}
            for r in d.get("rows") or []]


#: Document kind -> its rows. The rest: the document itself, one row.
TABLES: dict[str, Callable[[dict], list[dict]]] = {
    "specs.list": lambda d: d.get("sheets") or [],
    "compare": lambda d: d.get("gpus") or [],
    "ncu": lambda d: _each(d, "devices", "kernels", ("device", "sheet")),
    "trace": lambda d: d.get("devices") or [],
    "check": _check_rows,
    "llm": _llm_rows,
    "probe": lambda d: d.get("devices") or [],
    "diff": lambda d: ([{"key": k, **v} for k, v in (d.get("figures") or {}).items()] if d.get("figures")
                       else d.get("contributions") or []),
    # `bench --csv`: a memory run's bandwidth rows (those `--csv-file` writes); other modes one row
    "bench": lambda d: _bench_rows(d) if d.get("rows") else [d],
    "bench.rows": _bench_rows,
}


def csv_records(kind: str, payload: Any) -> list[dict]:
    """The rows of ``payload`` (a result object or its plain data) for document ``kind``."""
    from .jsonout import to_plain

    doc = to_plain(payload)
    if not isinstance(doc, dict):
        doc = {"result": doc}
    doc = {k: v for k, v in doc.items() if k not in _HEADER}
    pick = TABLES.get(kind)
    return pick(doc) if pick is not None else [doc]


def emit_csv(kind: str, payload: Any, json_out: bool = False, stream=None) -> None:
    """Write ``payload`` as CSV on stdout: the command's ``--csv``.

    Raises:
        UsageError: ``json_out`` is also asked for (one document format at a time).
    """
    if json_out:
        from ..errors import UsageError

        raise UsageError("--csv and --json exclude each other; pick one")
    write_csv(csv_records(kind, payload), stream)


def write_csv_file(kind: str, payload: Any, path: str, option: str = "--csv") -> None:
    """Write ``payload``'s rows to the file ``path`` (``bench --csv FILE``).

    Raises:
        UsageError: the file cannot be written (one line naming it).
    """
    from ..errors import UsageError

    try:
        with open(path, "w", newline="", encoding="utf-8") as f:
            write_csv(csv_records(kind, payload), f)
    except OSError as exc:
        raise UsageError(f"{option} {path!r} cannot be written ({exc.strerror or exc}); give a writable path") from None
