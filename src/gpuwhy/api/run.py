"""`gpuwhy run`: profile a program, crop the window, and build its one time budget.

The steps: run the program under torch.profiler (:mod:`gpuwhy.api.run_program`),
crop the trace to the window (:mod:`gpuwhy.importers.trace_window`), analyse
the timeline (:mod:`gpuwhy.importers.torch_trace`), and put every second of
the window in one share (:mod:`gpuwhy.model.time_budget`): GPU idle by cause,
GPU busy by regime.

Busy time by regime from a trace alone: kernels shorter than the launch-sized
cutoff are "overhead"; the rest are "unjudged" until their FLOPs and bytes
are measured (``--kernels``, an ncu pass: not yet part of ``run``), never
guessed from their names.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..errors import UsageError
from ..importers.torch_trace import SHORT_KERNEL_S, TraceGpu, TraceReport, analyze_trace, load_trace_json
from ..importers.trace_window import Window, choose_window, crop
from ..model.time_budget import KernelTime, TimeBudget, time_budget
from .run_program import ProgramRun, Profiler, run_python
from ..units import fmt_num

#: The idle time outside the GPU's first-to-last event, inside the window.
HOST_ONLY = "host work, nothing queued"
#: Kernels timed but not judged (no counts in a trace).
UNJUDGED = "unjudged (no FLOP/byte counts)"


@dataclass(frozen=True)
class RunResult:
    """What `gpuwhy run` found: the program's run, the window, the timeline of the busiest GPU and the budget.

    ``gpu`` is ``None`` (and ``budget`` too) when the window holds no GPU work.
    """

    program: ProgramRun
    window: Window
    trace: TraceReport
    gpu: TraceGpu | None
    budget: TimeBudget | None
    notes: tuple[str, ...]


def idle_by_cause(gpu: TraceGpu, window_s: float) -> dict[str, float]:
    """Seconds of GPU idle time in the window by cause, from the timeline's own split.

    The GPU's span (first to last event) splits into waiting on the host
    (``host_wait_s``: launch gaps), short gaps between back-to-back kernels
    and what is unattributed; the window beyond the span is host-only time.
    """
    causes = {
        "host launch gaps": gpu.host_wait_s + gpu.back_to_back_s,
        "unattributed": gpu.unattributed_idle_s,
        HOST_ONLY: max(window_s - gpu.span_s, 0.0),
    }
    return {k: v for k, v in causes.items() if v > 0}


def busy_by_regime(gpu: TraceGpu) -> tuple[dict[str, float], list[KernelTime]]:
    """Seconds of GPU busy time by regime, and the kernels (overhead-sized, or unjudged) by total time."""
    overhead = unjudged = 0.0
    kernels = []
    for k in gpu.top_kernels:
        regime = "overhead" if k.mean_s < SHORT_KERNEL_S else UNJUDGED
        if regime == "overhead":
            overhead += k.total_s
        else:
            unjudged += k.total_s
        kernels.append(KernelTime(k.name, k.total_s, regime, None))
    other = max(gpu.busy_s - overhead - unjudged, 0.0)  # copies, memsets, overlap
    parts = {"overhead-sized kernels": overhead, UNJUDGED: unjudged, "copies and memsets": other}
    return {k: v for k, v in parts.items() if v > 0}, kernels


def budget_of(report: TraceReport, window: Window) -> tuple[TraceGpu | None, TimeBudget | None]:
    """The busiest GPU of ``report`` and its budget over ``window`` (``(None, None)`` when no GPU worked)."""
    if not report.devices:
        return None, None
    gpu = max(report.devices, key=lambda d: d.busy_s)
    if gpu.busy_s <= 0:
        return gpu, None
    w = max(window.seconds, gpu.span_s)
    busy, kernels = busy_by_regime(gpu)
    return gpu, time_budget(w, idle_by_cause(gpu, w), busy, kernels)


def run_program(
    cmd: list[str],
    out_dir: Path,
    *,
    skip_first_s: float = 0.0,
    steps: int | None = None,
    profiler_factory: Callable[[], Profiler] | None = None,
) -> RunResult:
    """Profile ``cmd`` (a Python program) and build its budget; the trace is kept in ``out_dir``.

    ``out_dir`` is created when missing; the trace file is
    ``gpuwhy-run-trace.json``, or ``gpuwhy-run-trace-N.json`` when that exists
    (a user's file is never overwritten).

    Raises:
        UsageError: bad command, window or out_dir; the program left no trace.
        NoDeviceError: no PyTorch or no GPU (from the profiler).
    """
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"--out {str(out_dir)!r} is a file, not a folder: give a folder for the trace")
    out_dir.mkdir(parents=True, exist_ok=True)
    trace_path = out_dir / "gpuwhy-run-trace.json"
    n = 1
    while trace_path.exists():
        trace_path = out_dir / f"gpuwhy-run-trace-{n}.json"
        n += 1
    run = run_python(cmd, trace_path, profiler_factory=profiler_factory)
    if run.trace is None:
        raise UsageError(f"the program ran (exit {run.exit_code}) but the profiler wrote no trace")
    data = load_trace_json(run.trace)
    window = choose_window(data, skip_first_s=skip_first_s, steps=steps)
    report = analyze_trace(crop(data, window), source=str(run.trace), top=100_000)
    gpu, budget = budget_of(report, window)
    notes = [f"window: {window.how}, {fmt_num(window.seconds)} s"]
    if run.interrupted:
        notes.append("the program was interrupted (Ctrl-C): the window is what ran until then")
    return RunResult(run, window, report, gpu, budget, tuple(notes))


def to_json(r: RunResult) -> dict:
    """The `--json` document: numbers with units in the keys."""
    b = r.budget
    doc = {
        "argv": list(r.program.argv),
        "exit_code": r.program.exit_code,
        "program_wall_s": r.program.wall_s,
        "trace": str(r.program.trace) if r.program.trace else None,
        "window": {"start_us": r.window.start_us, "end_us": r.window.end_us, "seconds": r.window.seconds,
                   "how": r.window.how},
        "gpu": r.gpu.device if r.gpu else None,
        "notes": list(r.notes),
    }
    if b is not None:
        doc["budget"] = {
            "window_s": b.window_s, "busy_s": b.busy_s, "idle_s": b.idle_s,
            "idle": [{"cause": s.name, "seconds": s.seconds, "pct": s.pct} for s in b.idle],
            "busy": [{"regime": s.name, "seconds": s.seconds, "pct": s.pct} for s in b.busy],
            "fixes": [{"what": f.what, "kind": f.kind, "removable_s": f.removable_s, "share_pct": f.share_pct,
                       "ceiling_x": (None if f.ceiling_x == float("inf") else f.ceiling_x), "detail": f.detail,
                       "remedies": list(f.remedies)} for f in b.fixes],
            "shares_pct_total": b.shares_pct_total,
        }
    json.dumps(doc, allow_nan=False)
    return doc
