"""torch.profiler (Kineto) Chrome traces: the reader that reduces one to a
:class:`~gpuwhy.importers.timeline.activities.Timeline`, and the report of it.

Reads what ``prof.export_chrome_trace(path)`` or ``tensorboard_trace_handler`` writes
(``.json``, ``.json.gz``, ``.pt.trace.json``). Modules: :mod:`.read` (file and shape),
:mod:`.stream` (the event list parsed a piece at a time), :mod:`.scan` (one pass over the
events), :mod:`.convert` (the scan as a timeline: copy kinds from names, flow-linked launches).
The analysis is :mod:`gpuwhy.importers.timeline`'s, the same for every source.

Performance: the file is read a MiB at a time and the event list parsed, scanned and freed in
pieces of about 64 KB (neither the whole text nor the whole parsed trace sits in memory), the pass keeps numbers in typed arrays, then numpy per GPU
(``benchmarks/bench_trace_real.py`` measures a 500 MB trace against a bare ``json.load``).
"""

from __future__ import annotations

import gc
from dataclasses import replace
from pathlib import Path

from ..timeline.activities import TRACER_KEY, Timeline
from ..timeline.analyze import analyze
from ..timeline.results import IdleBreakdown, TraceReport
from .convert import timeline_of
from .read import (events_of, header_tracer_event_us, load_trace_json, open_trace, parse_trace_text, read_trace_text,
                   tracer_event_us)
from .scan import Scan, scan
from .stream import NotStreamable, event_pieces


def trace_timeline(data) -> Timeline:
    """The timeline of a parsed Chrome trace (the dict ``json.load`` gives, or a bare event list).

    Raises:
        UsageError: the JSON is not a Chrome trace.
    """
    t = timeline_of(scan(events_of(data)))
    return replace(t, tracer_event_us=tracer_event_us(data.get(TRACER_KEY) if isinstance(data, dict) else None))


def read_timeline(path: str | Path) -> Timeline:
    """The timeline of a torch.profiler trace file, read, parsed and scanned a piece at a time
    (:mod:`.stream`) so neither the whole text nor the whole parsed trace sits in memory (what
    is held is a window of about a MiB of text, one piece, and the scan's typed arrays); text in
    any unusual shape is read and parsed whole instead, with the same result or the same refusal.

    Raises:
        UsageError: unreadable or not a Chrome trace (see :func:`~.read.load_trace_json`).
    """
    try:
        with open_trace(path) as fh:
            s = Scan()
            for piece in event_pieces(fh):
                scan(piece, s)
    except NotStreamable:
        text = read_trace_text(path)
        s = _scan_whole(text, Path(path))
        del text
    return replace(timeline_of(s), tracer_event_us=header_tracer_event_us(path))


def _scan_whole(text: str, path: Path) -> Scan:
    """The text parsed at once (the shapes :func:`~.stream.event_pieces` does not cut), then scanned.

    The parsed trace is then millions of small acyclic containers, alive together: the
    cyclic garbage collector would rescan them over and over while they are built (2-3x
    the parse time); nothing here makes cycles, so it is paused and restored.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        data = parse_trace_text(text, path)
        return scan(events_of(data))
    finally:
        if was_enabled:
            gc.enable()


def analyze_trace(data, source: str = "<trace>", top: int = 10,
                  timeline_us: tuple[float, float] | None = None) -> TraceReport:
    """Analyze a parsed Chrome trace: :func:`~gpuwhy.importers.timeline.analyze.analyze` of its timeline.

    Raises:
        UsageError: the JSON is not a Chrome trace; ``top`` < 1.
    """
    return analyze(trace_timeline(data), source, top, timeline_us)


def load_trace(path: str | Path, top: int = 10) -> TraceReport:
    """Read a torch.profiler trace file (``.json``, ``.json.gz``, ``.pt.trace.json``) and analyze it.

    Raises:
        UsageError: unreadable or not a Chrome trace; ``top`` < 1.
    """
    from ...errors import UsageError

    if top < 1:
        raise UsageError(f"--top {top} must be at least 1")
    return analyze(read_timeline(path), str(path), top)


def host_events(path: str | Path) -> int:
    """The host events of a torch.profiler trace file that cost its tracer host time, counted as the
    timeline analysis counts them (:attr:`~gpuwhy.importers.timeline.host.HostView.event_ts`: API calls
    and host ranges other than Python frames).

    Raises:
        UsageError: unreadable or not a Chrome trace.
    """
    from ..timeline.activities import FRAME

    t = read_timeline(path)
    return int(t.api_start.size + (t.range_kind != FRAME).sum())


def idle_breakdown(data) -> tuple[IdleBreakdown, ...]:
    """The idle time of each GPU of a parsed trace by cause (seconds, % of span, evidence), one per GPU.

    Raises:
        UsageError: the JSON is not a Chrome trace.
    """
    return tuple(d.idle for d in analyze_trace(data).devices)


__all__ = ["analyze_trace", "events_of", "host_events", "idle_breakdown", "load_trace", "load_trace_json", "read_timeline",
           "trace_timeline"]
