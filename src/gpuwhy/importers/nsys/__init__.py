"""Nsight Systems reports: the reader that reduces one to a
:class:`~gpuwhy.importers.timeline.activities.Timeline`, and the report of it.

Reads what ``nsys export --type sqlite`` writes (``.sqlite``, also gzipped) and ``.nsys-rep``
reports through ``nsys`` when it is on PATH. Modules: :mod:`.open` (the file: read-only, a temporary
export or unpacked copy), :mod:`.schema` (which tables and columns this export has, its version, its
GPUs, what it lacks), :mod:`.read` (the tables as a timeline). The analysis is
:mod:`gpuwhy.importers.timeline`'s, the same as for a torch.profiler trace.
"""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

import numpy as np

from ...errors import UsageError
from ...units import fmt_time
from ..timeline.activities import Timeline
from ..timeline.analyze import analyze
from ..timeline.results import TraceReport
from ..timeline.steps import steps_from as mark_steps
from .open import EXPORT_HINT, kind_of, opened
from .read import read_timeline
from .schema import GPU_WORK, STRINGS, Schema

#: CUDA API calls that set memory on the legacy default stream (Nsight Systems' "synchronous memset" rule).
SYNC_MEMSET_NAMES = frozenset({"cudaMemset", "cudaMemset2D", "cudaMemset3D", "cuMemsetD8_v2", "cuMemsetD16_v2",
                               "cuMemsetD32_v2", "cuMemsetD2D8_v2", "cuMemsetD2D16_v2", "cuMemsetD2D32_v2"})
_PROFILE = "profile with `nsys profile --trace=cuda,nvtx,osrt` and export with " + EXPORT_HINT


def _refuse_other(path, s: Schema) -> None:
    """Refuse an export that is no Nsight Systems export, or holds no CUDA GPU trace (one line each).

    Raises:
        UsageError: see above.
    """
    if not s.has(STRINGS) and not any(s.has(t) for t in GPU_WORK):
        shown = ", ".join(sorted(s.tables)[:6]) or "no tables"
        raise UsageError(f"{path}: an SQLite database but not an Nsight Systems export (no {STRINGS} or "
                         f"CUPTI_ACTIVITY_KIND_* table; it holds {shown}); pass the file {EXPORT_HINT} writes")
    if not any(s.has(t) for t in GPU_WORK):
        raise UsageError(f"{path}: the report holds no CUDA GPU trace (no CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY or "
                         f"_MEMSET table: nsys traced no CUDA work); {_PROFILE}")


def _notes(t: Timeline, s: Schema, counts: dict) -> list[str]:
    """What the report's reader should know about this export: its version, what it lacks, graph
    nodes, synchronous memsets, GPUs the GPU table does not name."""
    notes = [f"read an Nsight Systems {s.version} export" if s.version else
             "read an Nsight Systems export (its version is not recorded: an export before 2022)"]
    notes += s.missing_notes()
    if counts["in_graph"]:
        notes.append(f"{counts['in_graph']:,} GPU activities ran as CUDA graph nodes (graphNodeId): their launch "
                     "call is the graph's launch")
    hit = np.isin(t.api_name, t.api_ids(SYNC_MEMSET_NAMES))
    if hit.any():
        called = ", ".join(sorted({t.api_names[i] for i in t.api_name[hit].tolist()}))
        notes.append(f"{int(hit.sum()):,} synchronous memset calls ({called}; {fmt_time(float(t.api_dur[hit].sum()) * 1e-6)} "
                     "in the calls): they run on the default stream, which waits for and holds back every other "
                     "stream; use cudaMemsetAsync on the work's stream")
    unnamed = sorted(set(t.gpu_device) - set(t.device_names))
    if unnamed:
        notes.append(f"the GPU table names no GPU {', '.join(unnamed)}")
    return notes


def _slowest(report: TraceReport) -> TraceReport:
    """With several GPUs, a note naming the slowest (the most busy time: the one the others wait for)."""
    if len(report.devices) < 2:
        return report
    d = max(report.devices, key=lambda x: x.busy_s)
    name = f" ({d.name})" if d.name else ""
    note = (f"{len(report.devices)} GPUs, one budget each; the slowest is GPU {d.device}{name}: busy "
            f"{fmt_time(d.busy_s)} of its {fmt_time(d.span_s)} span")
    return replace(report, notes=(*report.notes, note))


def read_nsys_timeline(path: str | Path) -> Timeline:
    """The timeline of the Nsight Systems report ``path`` (``.sqlite``, ``.sqlite.gz``, ``.nsys-rep``),
    with the reader's notes (version, missing tables, graphs, synchronous memsets).

    Raises:
        UsageError: not an SQLite database or a cut-short one; not an Nsight Systems export; no CUDA
            trace; no GPU activity at all; ``nsys export`` failed.
        NoDeviceError: a ``.nsys-rep`` without ``nsys`` on PATH.
    """
    try:
        with opened(path) as conn:
            s = Schema.probe(conn)
            _refuse_other(path, s)
            t, counts = read_timeline(s)
    except sqlite3.Error as exc:
        raise UsageError(f"{path}: not a readable SQLite database ({str(exc)[:120]}): the file may be cut short or "
                         f"damaged; export it again ({EXPORT_HINT})") from None
    if t.gpu_count == 0:
        raise UsageError(f"{path}: the report holds no kernel, memcpy or memset (its GPU activity tables are empty): "
                         f"the program ran no GPU work while nsys traced it; {_PROFILE}")
    t.notes = _notes(t, s, counts)
    return t


def load_nsys(path: str | Path, top: int = 10, steps_from: str | None = None) -> TraceReport:
    """Read an Nsight Systems report and analyse it: one budget and verdict per GPU, the slowest named.
    ``steps_from``: the NVTX range name that marks one step.

    Raises:
        UsageError: see :func:`read_nsys_timeline`; ``top`` < 1; no range named ``steps_from``.
        NoDeviceError: a ``.nsys-rep`` without ``nsys`` on PATH.
    """
    if top < 1:
        raise UsageError(f"--top {top} must be at least 1")
    t = read_nsys_timeline(path)
    if steps_from is not None:
        t = mark_steps(t, steps_from)
    return _slowest(analyze(t, str(path), top))


def is_nsys_report(path: str | Path) -> bool:
    """True when ``path`` is an Nsight Systems report by its first bytes or name (see :func:`.open.kind_of`).

    Raises:
        UsageError: the path is not a readable regular file.
    """
    return kind_of(path) is not None


__all__ = ["SYNC_MEMSET_NAMES", "is_nsys_report", "load_nsys", "read_nsys_timeline"]
