"""XProf traces, the profiler of JAX (``jax.profiler.trace(logdir)``, ``jax.profiler.start_trace``):
the reader that reduces one to a :class:`~gpuwhy.importers.timeline.activities.Timeline`.

Reads the Chrome trace JAX writes under ``LOGDIR/plugins/profile/RUN/`` (``perfetto_trace.json.gz``
with ``create_perfetto_trace=True``, and ``HOST.trace.json.gz``), or that folder or the log folder
itself (the newest run). The trace becomes CUPTI records (:mod:`.convert`) and those the trace
`gpuwhy run --tracer cupti` writes (:func:`gpuwhy.importers.cupti.records.chrome_trace`), so the
timeline, budget and verdict are the same as for every other source. JAX's profiler holds CUPTI
while it traces, so it is the trace to read when `gpuwhy run --tracer cupti` cannot run beside it.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ...errors import UsageError
from ...inputs import open_input_text
from ...units import fmt_num
from ..timeline.activities import Timeline
from ..timeline.analyze import analyze
from ..timeline.results import TraceReport
from ..timeline.steps import steps_from as mark_steps
from .convert import convert, is_xprof

#: The names XProf gives its traces inside a run folder, the one read first first.
TRACE_NAMES = ("perfetto_trace.json.gz", "*.trace.json.gz", "*.trace.json")
#: Characters of a trace's text looked at to tell XProf's from torch.profiler's (XProf writes its
#: process names first).
SNIFF_CHARS = 1 << 16
_WHAT = "a JAX profiler trace (perfetto_trace.json.gz or HOST.trace.json.gz from jax.profiler.trace)"
_PROFILE = "trace it with jax.profiler.trace(LOGDIR) on a GPU and pass LOGDIR or the trace file"


def looks_like_xprof(path: str | Path) -> bool:
    """True when the trace file's first characters name XProf's processes (``/device:GPU:0``,
    ``/host:CPU``); False for anything else, unreadable files included (the other readers say why)."""
    try:
        with open_input_text(path, _WHAT, expect="json", errors="replace") as fh:
            head = fh.read(SNIFF_CHARS)
    except (UsageError, OSError, EOFError, ValueError):
        return False
    return '"/host:CPU"' in head or '"/device:GPU:' in head or '"/device:TPU:' in head


def find_trace(folder: str | Path) -> Path | None:
    """The trace to read in a folder: the folder's own XProf trace, else the one of its newest run
    under ``plugins/profile/`` (JAX's log folder) or of its newest sub-folder (``plugins/profile``); None
    when there is none."""
    base = Path(folder)
    for pattern in TRACE_NAMES:
        hits = sorted(base.glob(pattern))
        if hits:
            return hits[0]
    for runs in (base / "plugins" / "profile", base):
        subs = sorted((p for p in runs.glob("*") if p.is_dir()), key=lambda p: p.name)
        for run in reversed(subs):  # run folders are named by date and time: the last is the newest
            for pattern in TRACE_NAMES:
                hits = sorted(run.glob(pattern))
                if hits:
                    return hits[0]
    return None


def read_xprof_timeline(path: str | Path) -> Timeline:
    """The timeline of an XProf trace file, with notes on what it lacked.

    Raises:
        UsageError: unreadable, not JSON, not an XProf trace, a TPU trace, or no GPU activity.
    """
    from ..cupti.records import chrome_trace
    from ..kineto import load_trace_json, trace_timeline
    from ..kineto.read import events_of

    data = load_trace_json(path)
    events = events_of(data)
    if not is_xprof(events):
        raise UsageError(f"{path}: not a JAX profiler trace (no /device:GPU:N or /host:CPU process); {_PROFILE}")
    try:
        c = convert(events)
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"{path}: a JAX profiler trace with an unreadable event ({type(exc).__name__}: "
                         f"{str(exc)[:100]}); {_PROFILE}") from None
    if not c.devices:
        other = f" (it traced {', '.join(sorted(c.other_devices))} devices)" if c.other_devices else ""
        raise UsageError(f"{path}: the JAX profiler trace holds no GPU{other}: gpuwhy judges CUDA GPU work; {_PROFILE}")
    if not any(r["k"] in ("kernel", "memcpy", "memset") for r in c.records):
        raise UsageError(f"{path}: the JAX profiler trace holds no kernel, copy or memset (the program ran no GPU work "
                         f"while it traced); {_PROFILE}")
    doc = chrome_trace(c.records, start_ns=c.start_ns, stop_ns=c.stop_ns, pid=c.pid, devices=c.devices)
    t = trace_timeline(doc)
    notes = ["read a JAX profiler (XProf) trace: GPU activities, CUDA driver calls named by the work they "
             "started, XLA's host ranges; JAX writes no GPU name, so no spec sheet is chosen from it"]
    if c.frames:
        notes.append(f"{fmt_num(c.frames)} Python-tracer frames left out (host time outside CUDA calls is host "
                     "work without them)")
    if c.skipped_lines:
        notes.append(f"XProf's derived lines of the GPU not read as activities: {', '.join(sorted(c.skipped_lines))}")
    return replace(t, notes=[*t.notes, *notes])


def load_xprof(path: str | Path, top: int = 10, steps_from: str | None = None) -> TraceReport:
    """Read an XProf trace (or the newest in a JAX log folder) and analyse it. ``steps_from``: the
    host range that marks one step (``jax.profiler.StepTraceAnnotation``'s name, ``PjitFunction(step)``).

    Raises:
        UsageError: see :func:`read_xprof_timeline`; ``top`` < 1; no range named ``steps_from``; a folder
            without a trace.
    """
    if top < 1:
        raise UsageError(f"--top {top} must be at least 1")
    p = Path(path)
    if p.name.endswith(".xplane.pb"):
        raise UsageError(f"{str(p)!r} is a JAX profiler run as an XSpace protobuf, which gpuwhy does not read; pass "
                         "the perfetto_trace.json.gz beside it (jax.profiler.trace(LOGDIR, create_perfetto_trace=True))")
    if p.is_dir():
        found = find_trace(p)
        if found is None and any(p.glob("**/*.xplane.pb")):
            raise UsageError(f"{str(p)!r} holds JAX profiler runs as XSpace protobufs (*.xplane.pb) only, which gpuwhy "
                             "does not read; trace with jax.profiler.trace(LOGDIR, create_perfetto_trace=True) and pass "
                             "LOGDIR again")
        if found is None:
            raise UsageError(f"{str(p)!r} is a folder, not a file, and holds no JAX profiler trace (no plugins/profile/"
                             "RUN/perfetto_trace.json.gz or *.trace.json.gz); pass a trace file, or the log folder of "
                             "jax.profiler.trace")
        p = found
    t = read_xprof_timeline(p)
    if steps_from is not None:
        t = mark_steps(t, steps_from)
    return analyze(t, str(p), top)


__all__ = ["find_trace", "load_xprof", "looks_like_xprof", "read_xprof_timeline"]
