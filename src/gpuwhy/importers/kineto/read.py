"""Reading a trace file and refusing JSON that is not a Chrome trace, in one line.

A torch.profiler trace is ``{"traceEvents": [...], ...}`` (or, from some
tools, the bare event list), plain or gzipped, named ``*.json``,
``*.json.gz`` or ``*.pt.trace.json[.gz]`` (the name does not matter: gzip is
told by its first bytes). Other JSON people pass by mistake is refused with
what it looks like: ``export_memory_timeline`` writes a list of lists, a
TensorBoard or HTA summary is an object without ``traceEvents``.
"""

from __future__ import annotations

from pathlib import Path

from ...errors import UsageError
from ...inputs import loads_json, open_input_text, read_input

_WHAT = "a torch.profiler trace (.json or .json.gz)"
_PASS = "pass the file written by torch.profiler's export_chrome_trace or tensorboard_trace_handler"
#: Elements looked at to tell a list of events from some other list.
_SNIFF = 1000


def read_trace_text(path: str | Path) -> str:
    """The text of a trace file, plain or gzipped (detected by its first bytes).

    Raises:
        UsageError: the file cannot be read, is not gzip, not UTF-8, or too large.
    """
    p = Path(path)
    data = read_input(p, _WHAT, expect="json")
    try:
        return data.decode("utf-8-sig")  # a UTF-8 byte-order mark (Windows editors write one) is not part of the JSON
    except UnicodeDecodeError as exc:
        raise UsageError(f"{p}: not UTF-8 text ({exc.reason} at byte {exc.start}); {_PASS}") from None


def open_trace(path: str | Path):
    """The trace file opened as UTF-8 text to be read a piece at a time (plain or gzipped, told by
    its first bytes; a BOM dropped; bytes that are not UTF-8 raise ``UnicodeDecodeError`` while
    reading). Close it, or use it in a ``with``.

    Raises:
        UsageError: the file cannot be read, is not JSON by its first bytes, or is too large
            (also while it is read: a broken gzip stream, past the size limit).
    """
    return open_input_text(path, _WHAT, expect="json", errors="strict")


def parse_trace_text(text: str, path: str | Path):
    """``json.loads(text)``, refusing what is not JSON in one line naming ``path``.

    Raises:
        UsageError: not valid JSON, or nested too deeply to parse.
    """
    try:
        return loads_json(text)  # json's parser a few MiB at a time: Ctrl-C is seen within a second
    except ValueError as exc:
        raise UsageError(f"{path}: not valid JSON ({str(exc).splitlines()[0][:120]}); {_PASS}") from None
    except RecursionError:
        raise UsageError(f"{path}: JSON nested too deeply to be a trace; {_PASS}") from None


def load_trace_json(path: str | Path):
    """The parsed JSON of a trace file, plain or gzipped (detected by its first bytes).

    Raises:
        UsageError: the file cannot be read, is not gzip/JSON, or is empty.
    """
    # The bytes go before the parse (read_trace_text keeps only the text), so the peak is the text and its objects.
    return parse_trace_text(read_trace_text(path), Path(path))


def _describe_list(items: list) -> str:
    head = items[:_SNIFF]
    if all(isinstance(x, list) for x in head):
        return "a JSON list of lists (the shape export_memory_timeline writes)"
    if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in head):
        return "a JSON list of numbers"
    if all(isinstance(x, str) for x in head):
        return "a JSON list of strings"
    return "a JSON list without trace events (no object with a 'ph' field)"


def looks_like_events(items: list) -> bool:
    """True when some of the first elements are trace events (objects with a 'ph' field)."""
    return any(type(x) is dict and "ph" in x for x in items[:_SNIFF])


def events_of(data) -> list:
    """The event list of a parsed trace (``{"traceEvents": [...]}`` or a bare event list).

    Raises:
        UsageError: the JSON is not a Chrome trace (one line saying what it looks like).
    """
    if isinstance(data, dict):
        ev = data.get("traceEvents")
        if ev is None:
            keys = ", ".join(repr(k) for k in list(data)[:5]) or "none"
            raise UsageError(f"the JSON has no 'traceEvents' list (its keys: {keys}); {_PASS}")
        if not isinstance(ev, list):
            raise UsageError(f"'traceEvents' is {type(ev).__name__}, not a list; {_PASS}")
        if ev and not looks_like_events(ev):
            raise UsageError(f"'traceEvents' holds no trace events (objects with a 'ph' field); {_PASS}")
        return ev
    if isinstance(data, list):
        if not data:
            raise UsageError(f"the JSON is an empty list, not a trace; {_PASS}")
        if not looks_like_events(data):
            raise UsageError(f"the JSON is {_describe_list(data)}, not a Chrome trace; {_PASS}")
        return data
    raise UsageError(f"the JSON is a {type(data).__name__}, neither a Chrome trace object nor an event list; {_PASS}")


__all__ = ["TRACER_EVENT_MAX_US", "events_of", "header_tracer_event_us", "load_trace_json", "looks_like_events", "open_trace",
           "parse_trace_text", "read_trace_text", "trace_header", "tracer_event_us"]


#: Bytes of a trace's start looked through for its header (kineto writes ``deviceProperties`` first).
HEADER_BYTES = 1 << 16


#: The most host time (us) a tracer can plausibly add per recorded event; a larger figure is not believed.
TRACER_EVENT_MAX_US = 1000.0


def tracer_event_us(value) -> float | None:
    """The tracer's host cost per recorded event (us) from the value under
    :data:`~gpuwhy.importers.timeline.activities.TRACER_KEY` (a dict with ``event_us``, or a JSON string
    of one, as kineto may keep it); None where it is missing, not a number, negative or above
    :data:`TRACER_EVENT_MAX_US`."""
    import json
    import math

    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    x = value.get("event_us") if isinstance(value, dict) else None
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        return None
    return float(x) if 0.0 <= x <= TRACER_EVENT_MAX_US else None


def header_tracer_event_us(path: str | Path) -> float | None:
    """:func:`tracer_event_us` of a trace file, from its first :data:`HEADER_BYTES` (kineto writes a
    profiler's metadata before the events); None where the header does not hold it.

    Raises:
        UsageError: the file cannot be read.
    """
    import json
    import re

    from ...inputs import open_input
    from ..timeline.activities import TRACER_KEY

    with open_input(path, "a torch.profiler trace (.json or .json.gz)") as fh:
        head = fh.read(HEADER_BYTES).decode("utf-8", errors="replace")
    m = re.search(r'"%s"\s*:\s*' % re.escape(TRACER_KEY), head)
    if not m:
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(head, m.end())
    except ValueError:
        return None
    return tracer_event_us(value)


def trace_header(path: str | Path) -> tuple[dict[str, str], str | None]:
    """The GPUs a trace's header names (device id -> name, from kineto's ``deviceProperties``) and
    its ``cuda_driver_version`` in words (``CUDA driver API 13.0``), read from the first
    :data:`HEADER_BYTES` of the file (plain or gzipped); ``({}, None)`` where the header does not say.

    Raises:
        UsageError: the file cannot be read (see :func:`gpuwhy.inputs.check_input_path`).
    """
    import json
    import re

    from ...inputs import open_input

    with open_input(path, "a torch.profiler trace (.json or .json.gz)") as fh:
        head = fh.read(HEADER_BYTES).decode("utf-8", errors="replace")
    names: dict[str, str] = {}
    m = re.search(r'"deviceProperties"\s*:\s*', head)
    if m:
        try:
            props, _ = json.JSONDecoder().raw_decode(head, m.end())
        except ValueError:
            props = []
        for d in props if isinstance(props, list) else []:
            if isinstance(d, dict) and isinstance(d.get("name"), str) and d.get("id") is not None:
                names[str(d["id"])] = d["name"]
    v = re.search(r'"cuda_driver_version"\s*:\s*(\d+)', head)
    driver = None
    if v:
        n = int(v.group(1))
        driver = f"CUDA driver API {n // 1000}.{n % 1000 // 10}"
    return names, driver
