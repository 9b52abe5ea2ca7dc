"""`gpuwhy run`: profile a program, crop the window, and build its one time budget.

The steps: run the program under torch.profiler (:mod:`gpuwhy.api.run_program`),
crop the trace to the window (:mod:`gpuwhy.importers.trace_window`), analyse
the timeline (:mod:`gpuwhy.importers.torch_trace`), and put every second of
the window in one share (:mod:`gpuwhy.model.time_budget`): GPU idle by cause,
GPU busy by regime.

Busy time from a trace alone is split by kind of work (GEMM, attention,
elementwise, ... from kernel-name families) with launch-sized kernels apart;
their regimes (compute, memory, latency) need FLOPs and bytes, measured by ncu
(``--kernels``: not yet part of ``run``; ``gpuwhy ncu -- CMD`` does it), and
are never guessed from names.
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
#: Busy time in kernels shorter than the launch-sized cutoff (10 us).
OVERHEAD_SIZED = "launch-sized kernels (< 10 us)"


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


def idle_by_cause(gpu: TraceGpu, window_s: float) -> tuple[dict[str, float], dict[str, tuple[str, ...]]]:
    """Seconds of GPU idle time in the window by cause, and each cause's remedies.

    The causes are the trace analysis's (:attr:`TraceGpu.idle`: host launch,
    syncs, DataLoader, pageable copies, other streams, warm-up, ...); the part
    of the window outside the GPU's first-to-last event is host-only time.
    """
    causes = {c.label: c.time_s for c in gpu.idle.causes if c.time_s > 0}
    remedies = {c.label: tuple(c.remedies) for c in gpu.idle.causes}
    outside = max(window_s - gpu.span_s, 0.0)
    if outside > 0:
        causes[HOST_ONLY] = causes.get(HOST_ONLY, 0.0) + outside
    return causes, remedies


def busy_by_kind(gpu: TraceGpu) -> tuple[dict[str, float], list[KernelTime]]:
    """Seconds of GPU busy time by kind of work (GEMM, attention, elementwise, ..., from kernel names),
    with launch-sized kernels apart, and the kernels by total time (not judged: a trace holds no counts)."""
    overhead = 0.0
    kernels = []
    for k in gpu.top_kernels:
        if k.mean_s < SHORT_KERNEL_S:
            overhead += k.total_s
        kernels.append(KernelTime(k.name, k.total_s, "overhead" if k.mean_s < SHORT_KERNEL_S else UNJUDGED, None))
    parts = {f"{k.kind} kernels" if k.kind not in ("memcpy", "memset") else k.kind: k.time_s for k in gpu.kinds}
    total = sum(parts.values())
    if overhead > 0 and total > 0:  # launch-sized kernels apart, taken from the kinds in proportion
        scale = max(total - overhead, 0.0) / total
        parts = {k: v * scale for k, v in parts.items()}
        parts[OVERHEAD_SIZED] = overhead
    return {k: v for k, v in parts.items() if v > 0}, kernels


def budget_of(report: TraceReport, window: Window) -> tuple[TraceGpu | None, TimeBudget | None]:
    """The busiest GPU of ``report`` and its budget over ``window`` (``(None, None)`` when no GPU worked)."""
    if not report.devices:
        return None, None
    gpu = max(report.devices, key=lambda d: d.busy_s)
    if gpu.busy_s <= 0:
        return gpu, None
    w = max(window.seconds, gpu.span_s)
    busy, kernels = busy_by_kind(gpu)
    idle, remedies = idle_by_cause(gpu, w)
    warm = [c.label for c in gpu.idle.causes if c.key == "warmup"]
    return gpu, time_budget(w, idle, busy, kernels, idle_remedies=remedies, not_fixes=warm)


def run_program(
    cmd: list[str],
    out_dir: Path,
    *,
    skip_first_s: float = 0.0,
    steps: int | None = None,
    profiler_factory: Callable[[], Profiler] | None = None,
    stdout_to_stderr: bool = False,
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
    run = run_python(cmd, trace_path, profiler_factory=profiler_factory, stdout_to_stderr=stdout_to_stderr)
    if run.trace is None:
        raise UsageError(f"the program ran (exit {run.exit_code}) but the profiler wrote no trace")
    data = load_trace_json(run.trace)
    window = choose_window(data, skip_first_s=skip_first_s, steps=steps, from_first_gpu=True)
    report = analyze_trace(crop(data, window), source=str(run.trace), top=100_000,
                           timeline_us=(window.start_us, window.end_us))
    gpu, budget = budget_of(report, window)
    notes = [f"window: {window.how}, {fmt_num(window.seconds)} s"]
    if budget is not None and budget.not_judged:
        notes.append(f"{', '.join(budget.not_judged)} is listed but not judged: leave it out of the window with "
                     "--steps N (the last N ProfilerStep ranges) or --skip-first TIME")
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
            "idle_fix": None if b.idle_fix is None else {
                "removable_s": b.idle_fix.removable_s, "share_pct": b.idle_fix.share_pct,
                "ceiling_x": None if b.idle_fix.ceiling_x == float("inf") else b.idle_fix.ceiling_x},
            "not_judged": list(b.not_judged),
            "verdict": "gpu-bound" if b.gpu_bound else (None if b.verdict is None else b.verdict.what),
            "gpu_bound": b.gpu_bound,
            "fixes": [{"what": f.what, "kind": f.kind, "removable_s": f.removable_s, "share_pct": f.share_pct,
                       "ceiling_x": (None if f.ceiling_x == float("inf") else f.ceiling_x), "detail": f.detail,
                       "remedies": list(f.remedies)} for f in b.fixes],
            "shares_pct_total": b.shares_pct_total,
        }
    doc["timeline"] = timeline_json(r)
    doc["top_kernels"] = top_kernels_json(r)
    json.dumps(doc, allow_nan=False)
    return doc


def timeline_of(r: RunResult):
    """The window's :class:`~gpuwhy.model.timeline.Timeline` (busy and idle by cause per bin) of the
    budget's GPU, its idle parts named as the budget's idle shares; None without a budget."""
    from ..importers.torch_trace import CAUSE_LABELS
    from ..importers.trace.timeline import HOST_ONLY as HOST_ONLY_KEY

    if r.budget is None or r.gpu is None or r.gpu.timeline is None:
        return None
    return r.gpu.timeline.renamed({**CAUSE_LABELS, HOST_ONLY_KEY: HOST_ONLY})


def timeline_json(r: RunResult) -> dict | None:
    """The ``timeline`` of the `--json` document: the window's bins, each with ``start_s``/``end_s``
    (s from the timeline's start, ``start_us`` in the trace's clock), GPU ``busy_s``, and ``idle_s``
    by cause (every cause of ``causes``, the budget's idle share names; 0 where a bin has none)."""
    tl = timeline_of(r)
    if tl is None:
        return None
    causes = list(tl.idle_s)
    return {
        "start_us": tl.start_us, "window_s": tl.window_s, "bin_s": tl.window_s / tl.n, "causes": causes,
        "bins": [{"start_s": tl.edges_s[i], "end_s": tl.edges_s[i + 1], "busy_s": tl.busy_s[i],
                  "idle_s": {c: tl.idle_s[c][i] for c in causes}} for i in range(tl.n)],
    }


def top_kernels_json(r: RunResult, n: int = 10) -> list[dict]:
    """The ``n`` kernels with the most time in the window: launches, total and mean (s), % of the
    window, and the regime and % of its roof the budget judged it at (``None``: not measured)."""
    if r.gpu is None:
        return []
    _, judged = busy_by_kind(r.gpu)
    w = r.budget.window_s if r.budget is not None else None
    return [{"name": k.name, "full_name": k.full_name, "count": k.count, "total_s": k.total_s, "mean_s": k.mean_s,
             "window_pct": 100.0 * k.total_s / w if w else None,
             "regime": None if j.regime == UNJUDGED else j.regime, "roof_pct": j.roof_pct}
            for k, j in zip(r.gpu.top_kernels[:n], judged[:n])]
