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

#: The names XProf gives its traces inside a run folder, in the order they are looked for.
TRACE_NAMES = ("*perfetto_trace.json.gz", "*.trace.json.gz", "*.trace.json")
#: Characters of a trace's text looked at to tell XProf's from torch.profiler's (XProf writes its
#: process names first).
SNIFF_CHARS = 1 << 16
_WHAT = "a JAX profiler trace (perfetto_trace.json.gz or HOST.trace.json.gz from jax.profiler.trace)"
_PROFILE = "trace it with jax.profiler.trace(LOGDIR) on a GPU and pass LOGDIR or the trace file"


def is_xprof_name(path: str | Path) -> bool:
    """True for a file named as JAX's profiler names its traces: ``perfetto_trace.json.gz`` (or a name ending so),
    or ``HOST.trace.json[.gz]`` inside a run folder ``plugins/profile/RUN/`` (not torch.profiler's ``.pt.trace.json``)."""
    p = Path(path)
    if p.name.endswith("perfetto_trace.json.gz"):
        return True
    in_run = p.parent.parent.name == "profile" and p.parent.parent.parent.name == "plugins"
    return in_run and p.name.endswith((".trace.json.gz", ".trace.json")) and ".pt.trace.json" not in p.name


def looks_like_xprof(path: str | Path) -> bool:
    """True when the trace file's first characters name XProf's processes (``/device:GPU:0``,
    ``/host:CPU``), or when its name is XProf's (:func:`is_xprof_name`) and its first characters cannot
    be read (a broken gzip stream, an empty file: the XProf reader says why, in JAX's words); False for
    anything else (the other readers say why)."""
    try:
        with open_input_text(path, _WHAT, expect="json", errors="replace") as fh:
            head = fh.read(SNIFF_CHARS)
    except (UsageError, OSError, EOFError, ValueError):
        return is_xprof_name(path) and Path(path).is_file()
    if not head.strip():
        return is_xprof_name(path)
    return '"/host:CPU"' in head or '"/device:GPU:' in head or '"/device:TPU:' in head


def _holds_run(folder: Path) -> bool:
    return any(any(folder.glob(pattern)) for pattern in (*TRACE_NAMES, "*.xplane.pb"))


def _trace_in(run: Path) -> Path | None:
    for pattern in TRACE_NAMES:
        hits = sorted(run.glob(pattern))
        if hits:
            return hits[0]
    return None


def locate(folder: str | Path) -> tuple[Path | None, Path | None, list[str]]:
    """``(trace, run, notes)`` of a folder: the folder's own XProf trace, else the trace of its newest run
    under ``plugins/profile/`` (JAX's log folder; ``profile/`` of ``LOGDIR/plugins``) or of its newest sub-folder
    (``plugins/profile``), run
    folders being named by date and time; ``trace`` None when that run holds none (an older run's is not
    read in its place: it is not the run the user just traced); ``run`` the run folder looked in (None:
    no run); ``notes`` what else the folder holds that was not read (older runs, other hosts' traces)."""
    base = Path(folder)
    run, notes = base, []
    if _trace_in(base) is None and not any(base.glob("*.xplane.pb")):
        runs = []
        for parent in (base / "plugins" / "profile", base / "profile", base):
            runs = sorted((p for p in parent.glob("*") if p.is_dir() and _holds_run(p)), key=lambda p: p.name)
            if runs:
                break
        if not runs:
            return None, None, []
        run = runs[-1]
        if len(runs) > 1:
            notes.append(f"read the newest of {len(runs)} JAX profiler runs, {run.name}; pass another run's folder to "
                         "read it")
    trace = _trace_in(run)
    hosts = sorted(p.name for pattern in TRACE_NAMES[1:] for p in run.glob(pattern))
    if trace is not None and len(hosts) > 1:
        notes.append(f"the run holds the traces of {len(hosts)} hosts ({', '.join(hosts[:4])}"
                     f"{', ...' if len(hosts) > 4 else ''}); read {trace.name}, one host's: pass another host's "
                     "file to read it")
    return trace, run, notes


def find_trace(folder: str | Path) -> Path | None:
    """The trace to read in a folder (see :func:`locate`); None when there is none."""
    return locate(folder)[0]


def _is_frame(e) -> bool:
    """A Python-tracer frame (a complete event named ``$file.py:12 function``): left out of the timeline."""
    return isinstance(e, dict) and e.get("ph") == "X" and isinstance(e.get("name"), str) and e["name"].startswith("$")


def _events(path: Path) -> tuple[list, int]:
    """The event list of the trace file ``path`` without its Python-tracer frames, and how many frames
    were left out; refused in JAX's words where it is not one. The list is parsed a piece at a time
    (:func:`gpuwhy.importers.kineto.stream.event_pieces`) and the frames (85% of the H100 trace's events)
    dropped as they come, so they never sit in memory together; text in any other shape is read whole.

    Raises:
        UsageError: unreadable, a broken gzip stream, not JSON, no ``traceEvents`` list.
    """
    from ...inputs import read_json
    from ..kineto.stream import NotStreamable, event_pieces

    kept, frames = [], 0
    try:
        with open_input_text(path, _WHAT, expect="json", errors="strict") as fh:
            for piece in event_pieces(fh):
                for e in piece:
                    if _is_frame(e):
                        frames += 1
                    else:
                        kept.append(e)
        return kept, frames
    except (NotStreamable, UsageError, UnicodeDecodeError, OSError, EOFError, ValueError):
        pass  # read whole below: it gives the reason, in JAX's words, or the same events
    data = read_json(path, _WHAT)
    events = data.get("traceEvents") if isinstance(data, dict) else data
    if not isinstance(events, list):
        raise UsageError(f"{path}: not a JAX profiler trace (no traceEvents list); {_PROFILE}")
    frames = sum(1 for e in events if _is_frame(e))
    return [e for e in events if not _is_frame(e)], frames


def read_xprof_timeline(path: str | Path) -> Timeline:
    """The timeline of an XProf trace file, with notes on what it lacked.

    Raises:
        UsageError: unreadable, not JSON, not an XProf trace, a TPU trace, or no GPU activity.
    """
    from ..cupti.records import chrome_trace
    from ..kineto import trace_timeline

    events, frames = _events(Path(path))
    if not is_xprof(events):
        raise UsageError(f"{path}: not a JAX profiler trace (no /device:GPU:N or /host:CPU process); {_PROFILE}")
    try:
        c = convert(events)
        c.frames += frames
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"{path}: a JAX profiler trace with an unreadable event ({type(exc).__name__}: "
                         f"{str(exc)[:100]}); {_PROFILE}") from None
    if not c.devices:
        other = (f" (it traced {', '.join(sorted(c.other_devices))} devices)" if c.other_devices
                 else " (only the host: JAX ran on the CPU)")
        raise UsageError(f"{path}: the JAX profiler trace holds no GPU{other}: gpuwhy judges CUDA GPU work; {_PROFILE}")
    if not any(r["k"] in ("kernel", "memcpy", "memset") for r in c.records) and c.skipped_lines:
        lines = ", ".join(repr(n) for n in sorted(c.skipped_lines)[:3])
        raise UsageError(f"{path}: the GPU events of this trace lie only on lines that are not streams ({lines}), "
                         "no 'Stream #N' line of kernels and copies as JAX's profiler writes it; not a trace gpuwhy "
                         f"reads: {_PROFILE}")
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
    notes: list[str] = []
    if p.is_dir():
        found, run, notes = locate(p)
        if found is None and run is not None:
            where = "" if run == p else f"its newest run, {run.name}, "
            raise UsageError(f"{str(p)!r}: {where}holds the JAX profiler run as XSpace protobufs (*.xplane.pb) only, "
                             "which gpuwhy does not read; trace with jax.profiler.trace(LOGDIR, create_perfetto_trace=True) "
                             "and pass LOGDIR again" + (", or pass an older run's trace file" if where else ""))
        if found is None:
            raise UsageError(f"{str(p)!r} is a folder, not a file, and holds no JAX profiler trace (no plugins/profile/"
                             "RUN/perfetto_trace.json.gz or *.trace.json.gz); pass a trace file, or the log folder of "
                             "jax.profiler.trace")
        p = found
    t = read_xprof_timeline(p)
    if notes:
        t = replace(t, notes=[*t.notes, *notes])
    if steps_from is not None:
        t = mark_steps(t, steps_from)
    return analyze(t, str(p), top)


__all__ = ["find_trace", "is_xprof_name", "load_xprof", "locate", "looks_like_xprof", "read_xprof_timeline"]
