"""`gpuwhy run`: profile a program, crop the window, and build its one time budget.

The steps: run the program under torch.profiler (:mod:`gpuwhy.api.run_program`),
read its trace as a timeline (:mod:`gpuwhy.importers.kineto`), crop it to the window
(:mod:`gpuwhy.importers.timeline.window`), analyse it
(:mod:`gpuwhy.importers.timeline.analyze`), and put every second of
the window in one share (:mod:`gpuwhy.model.timeline.budget`): GPU idle by cause,
GPU busy by regime.

Busy time from a trace alone is split by kind of work (GEMM, attention,
elementwise, ... from kernel-name families) with launch-sized kernels apart:
regimes (compute, memory, latency, issue) need FLOPs and bytes, and are never
guessed from names. With ``kernels`` (``--kernels``) a second, short pass runs
the program under Nsight Compute over a few launches of each top kernel
(:mod:`gpuwhy.api.run_kernels`); those kernels' time is then put under their
measured regime, each with its share of its roof and the Amdahl ceiling of a
faster version. A program that is not Python, or any program when PyTorch is
missing, is profiled by ncu alone (:func:`run_under_ncu`): kernel time by
regime, no idle time (ncu serialises kernels and records no timeline).
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from ..errors import GpuwhyError, Interrupted, UsageError
from ..importers.kineto import read_timeline
from ..importers.timeline.activities import crop
from ..importers.timeline.analyze import analyze
from ..importers.timeline.results import TraceGpu, TraceReport
from ..importers.timeline.window import Window, choose_window
from ..model.roofline.classify import launch_sized
from ..model.timeline.budget import KernelTime, TimeBudget, time_budget
from .run_kernels import KernelPass
from .run_program import ProgramRun, Profiler, parse_program, run_python
from ..units import fmt_num

#: The idle time outside the GPU's first-to-last event, inside the window.
HOST_ONLY = "host work, nothing queued"
#: Busy time in kernels shorter than the launch-sized cutoff (10 us).
OVERHEAD_SIZED = "launch-sized kernels (< 10 us)"
#: Kernels listed in the output and measured by ``--kernels`` (largest total time first).
TOP_KERNELS = 5
#: Kernel launches profiled by ncu alone (a program that is not Python, or no PyTorch).
NCU_LAUNCHES = 200


@dataclass(frozen=True)
class KernelRow:
    """One kernel of the window: its time (s) there, launches and mean (s), kind (from its name), and
    its regime with its share of its roof (% of the roof at its intensity, at the ``level`` that
    decides) where ncu measured it (``measured_launches`` > 0), else ``regime`` None and ``why``."""

    name: str
    full_name: str
    total_s: float
    launches: int
    mean_s: float
    kind: str
    regime: str | None = None
    roof_pct: float | None = None
    level: str | None = None
    measured_launches: int = 0
    why: str = ""

    def to_dict(self) -> dict:
        return {"name": self.name, "full_name": self.full_name, "total_s": self.total_s, "launches": self.launches,
                "mean_s": self.mean_s, "kind": self.kind, "regime": self.regime, "roof_pct": self.roof_pct,
                "deciding_level": self.level, "measured_launches": self.measured_launches, "why": self.why}


@dataclass(frozen=True)
class RunResult:
    """What `gpuwhy run` found: the program's run, the window, the timeline of the busiest GPU and the budget.

    ``mode`` is ``trace`` (torch.profiler), ``trace+ncu`` (and an ncu pass over the top kernels) or
    ``ncu`` (ncu alone: ``window``, ``trace`` and ``gpu`` are None, the budget's window is the
    profiled kernels' time). ``gpu`` is ``None`` (and ``budget`` too) when the window holds no GPU
    work. ``kernels`` are the top kernels by time in the window. ``pass_error`` is why the ncu pass
    of ``--kernels`` failed (the budget is then the trace's alone; the CLI exits with its code).
    """

    program: ProgramRun
    window: Window | None
    trace: TraceReport | None
    gpu: TraceGpu | None
    budget: TimeBudget | None
    notes: tuple[str, ...]
    kernels: tuple[KernelRow, ...] = ()
    kernel_pass: KernelPass | None = None
    mode: str = "trace"
    pass_error: Exception | None = None


def idle_by_cause(gpu: TraceGpu, window_s: float) -> tuple[dict[str, float], dict[str, tuple[str, ...]]]:
    """Seconds of GPU idle time in the window by cause, and each cause's remedies.

    The causes are the trace analysis's (:attr:`TraceGpu.idle`: host launch,
    syncs, DataLoader, pageable copies, other streams, warm-up, ...); the part
    of the window outside the GPU's first-to-last event is host-only time.
    """
    causes = {c.label: c.time_s for c in gpu.idle.causes if c.time_s > 0}
    remedies = {c.label: tuple(c.remedies) for c in gpu.idle.causes}
    outside = max(window_s - gpu.span_s, 0.0)
    if outside > 1e-9 * window_s:  # below that it is float rounding of the window's edges, not host time
        causes[HOST_ONLY] = causes.get(HOST_ONLY, 0.0) + outside
    return causes, remedies


def regime_share(regime: str | None) -> str:
    """The budget's name for the busy time of kernels of a measured regime (``memory`` -> "memory-bound kernels")."""
    return "kernels ncu could not classify" if regime is None else f"{regime}-bound kernels"


def kernel_rows(gpu: TraceGpu, measured: KernelPass | None = None) -> list[KernelRow]:
    """Every kernel of ``gpu`` (largest total time first) with the regime ncu measured for it, if any."""
    from ..importers.timeline.kinds import kernel_kind

    got = measured.kernels if measured is not None else {}
    rows = []
    for k in gpu.top_kernels:
        m = got.get(k.full_name)
        if m is not None:
            rows.append(measured_row(k.name, k.total_s, k.count, k.mean_s, m))
        else:
            why = ("launch-sized: its time is the launch overhead" if launch_sized(k.mean_s) else
                   "not measured: add --kernels" if measured is None else "not measured by the ncu pass")
            rows.append(KernelRow(k.name, k.full_name, k.total_s, k.count, k.mean_s, kernel_kind(k.full_name), why=why))
    return rows


def measured_row(name: str, total_s: float, launches: int, mean_s: float, m) -> KernelRow:
    """A kernel's row with what ncu measured of it (``m``, an :class:`~gpuwhy.importers.ncu.analyse.NcuKernel`);
    ``total_s``/``launches``/``mean_s`` are the window's (the trace's, or ncu's own for ncu alone)."""
    from ..importers.timeline.kinds import kernel_kind

    return KernelRow(name, m.full_name, total_s, launches, mean_s, kernel_kind(m.full_name), m.regime, m.roof_pct,
                     m.deciding_level, m.launches, "" if m.regime is not None else (m.reason or "not classifiable"))


def busy_shares(rows: Sequence[KernelRow], kinds: Sequence = ()) -> dict[str, float]:
    """Seconds of GPU busy time: measured kernels by regime, launch-sized kernels apart, the rest by
    kind of work (from kernel names), and the copies and memsets of ``kinds`` (a trace's
    :attr:`TraceGpu.kinds`) as themselves.

    The seconds are summed durations (streams that overlap count twice: the
    budget scales busy shares down to the busy union)."""
    parts: dict[str, float] = {}

    def add(name: str, s: float) -> None:
        if s > 0:
            parts[name] = parts.get(name, 0.0) + s

    unmeasured = " (regime not measured)" if any(r.measured_launches for r in rows) else ""
    for r in rows:
        if r.measured_launches:
            add(regime_share(r.regime), r.total_s)
        elif launch_sized(r.mean_s):
            add(OVERHEAD_SIZED, r.total_s)
        else:
            add(f"{r.kind} kernels{unmeasured}", r.total_s)
    for k in kinds:
        if k.kind in ("memcpy", "memset"):
            add(k.kind, k.time_s)
    return parts


def kernel_times(rows: Sequence[KernelRow]) -> list[KernelTime]:
    """The kernels the budget turns into fixes: those with a measured share of their roof."""
    return [KernelTime(r.name, r.total_s, r.regime or "unknown", r.roof_pct,
                       None if r.level in (None, "DRAM", "compute") else r.level)
            for r in rows if r.roof_pct is not None and r.regime is not None]


def busiest_gpu(report: TraceReport) -> TraceGpu | None:
    """The GPU of ``report`` with the most busy time (None when the trace has none)."""
    return max(report.devices, key=lambda d: d.busy_s) if report.devices else None


def budget_of(report: TraceReport, window: Window, measured: KernelPass | None = None
              ) -> tuple[TraceGpu | None, TimeBudget | None, list[KernelRow]]:
    """The busiest GPU of ``report``, its budget over ``window`` and its kernels
    (``(None, None, [])`` when no GPU worked)."""
    gpu = busiest_gpu(report)
    if gpu is None:
        return None, None, []
    if gpu.busy_s <= 0:
        return gpu, None, []
    w = max(window.seconds, gpu.span_s)
    rows = kernel_rows(gpu, measured)
    idle, remedies = idle_by_cause(gpu, w)
    warm = [c.label for c in gpu.idle.causes if c.key == "warmup"]
    return gpu, time_budget(w, idle, busy_shares(rows, gpu.kinds), kernel_times(rows), idle_remedies=remedies,
                            not_fixes=warm), rows


def _out_folder(out_dir: Path) -> Path:
    """``out_dir`` made absolute (the program may change directory) and created.

    Raises:
        UsageError: it is a file, or cannot be made (one line, naming it).
    """
    out_dir = Path(os.path.abspath(out_dir))
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"--out {str(out_dir)!r} is a file, not a folder: give a folder for the trace")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {str(out_dir)!r} cannot be made ({exc.strerror or exc}): give a folder you can "
                         "write") from None
    return out_dir


#: What one run writes into its --out folder: the trace, and the ncu pass's report, CSV and log.
_RUN_FILES = (".json", ".ncu-rep", ".csv", ".log", ".first.log")


def _run_names(out_dir: Path) -> tuple[Path, str]:
    """``(trace path, ncu export base)`` of a new run in ``out_dir``, numbered together
    (``gpuwhy-run-trace-N.json`` beside ``gpuwhy-run-ncu-N.*``) so that neither overwrites a file."""
    n = 0
    while True:
        suffix = f"-{n}" if n else ""
        trace, ncu = out_dir / f"gpuwhy-run-trace{suffix}.json", str(out_dir / f"gpuwhy-run-ncu{suffix}")
        if not any(os.path.lexists(p) for p in (trace, *(ncu + e for e in _RUN_FILES))):
            return trace, ncu
        n += 1


def python_argv(cmd: Sequence[str]) -> list[str]:
    """The command line that runs ``cmd`` (a Python program, :func:`~gpuwhy.api.run_program.parse_program`)
    as its own process with this interpreter: for the ncu pass."""
    is_module, target, args = parse_program(list(cmd))
    return [sys.executable, *(["-m", target] if is_module else [target]), *args]


def is_python(cmd: Sequence[str]) -> bool:
    """True when ``cmd`` is a Python program (``python[3] ...``, ``-m module``, ``X.py``)."""
    try:
        parse_program(list(cmd))
    except UsageError:
        return False
    return True


def run_program(
    cmd: list[str],
    out_dir: Path,
    *,
    skip_first_s: float = 0.0,
    steps: int | None = None,
    profiler_factory: Callable[[], Profiler] | None = None,
    stdout_to_stderr: bool = False,
    kernels: bool = False,
    top: int = TOP_KERNELS,
    ncu: str | None = None,
    measure: Callable[..., KernelPass | None] | None = None,
) -> RunResult:
    """Profile ``cmd`` (a Python program) and build its budget; the trace is kept in ``out_dir``.

    ``out_dir`` is created when missing; the trace file is
    ``gpuwhy-run-trace.json``, or ``gpuwhy-run-trace-N.json`` when that or its ncu files exist
    (a user's file is never overwritten, nor a link written through). With ``kernels``, the ``top``
    kernels by time in the window are measured by an ncu pass (``measure``,
    default :func:`~gpuwhy.api.run_kernels.measure_top_kernels`; its files go
    beside the trace).

    Raises:
        UsageError: bad command, window or out_dir; the program left no trace.
        NoDeviceError: no PyTorch or no GPU (from the profiler); with
            ``kernels``, no ncu.
    """
    trace_path, ncu_base = _run_names(_out_folder(Path(out_dir)))
    run = run_python(cmd, trace_path, profiler_factory=profiler_factory, stdout_to_stderr=stdout_to_stderr)
    if run.trace is None:
        raise UsageError(f"the program ran (exit {run.exit_code}) but the profiler wrote no trace")
    tl = read_timeline(run.trace)
    try:
        window = choose_window(tl, skip_first_s=skip_first_s, steps=steps, from_first_gpu=True)
    except UsageError as exc:
        raise UsageError(f"{exc} (the trace is kept: {run.trace})") from None
    report = analyze(crop(tl, window.start_us, window.end_us), source=str(run.trace), top=100_000,
                     timeline_us=(window.start_us, window.end_us))
    notes = [f"window: {window.how}, {fmt_num(window.seconds)} s"]
    kp, pass_error = None, None
    if kernels and run.interrupted:
        notes.append("--kernels: no ncu pass: the program was interrupted (Ctrl-C)")
    if kernels and run.exit_code == 0 and not run.interrupted:
        gpu0 = busiest_gpu(report)
        rows0 = kernel_rows(gpu0) if gpu0 is not None and gpu0.busy_s > 0 else []
        targets = [r.full_name for r in rows0 if not launch_sized(r.mean_s)][:top]
        if targets:
            from ..importers.timeline.launches import kernel_launches
            from .run_kernels import measure_top_kernels

            try:
                kp = (measure or measure_top_kernels)(python_argv(cmd), kernel_launches(tl), targets,
                                                      window.start_us, export=ncu_base, ncu=ncu)
            except GpuwhyError as exc:
                pass_error = exc
                notes.append(f"--kernels: the ncu pass failed ({exc}); the budget is the trace's alone")
            except KeyboardInterrupt:
                pass_error = Interrupted("interrupted (Ctrl-C) during the ncu pass of --kernels: the budget above is "
                                         "the trace's alone")
                notes.append("--kernels: the ncu pass was interrupted (Ctrl-C); the budget is the trace's alone")
        if kp is None and pass_error is None:
            notes.append("--kernels: no kernel of the window runs longer than launch size: nothing for ncu to measure")
    gpu, budget, rows = budget_of(report, window, kp)
    if budget is not None and budget.not_judged:
        notes.append(f"{', '.join(budget.not_judged)} is listed but not judged: leave it out of the window with "
                     "--steps N (the last N ProfilerStep ranges) or --skip-first TIME")
    if kp is not None:
        measured = [x for x in rows if x.measured_launches]
        notes.append(f"--kernels: {len(measured)} kernels measured by ncu ({sum(x.measured_launches for x in measured)} "
                     f"launches; regimes judged against {kp.roofline})")
        notes.extend(kp.notes)
    if run.interrupted:
        notes.append("the program was interrupted (Ctrl-C): the window is what ran until then")
    return RunResult(run, window, report, gpu, budget, tuple(notes), tuple(rows[:max(top, 1)]), kp,
                     "trace+ncu" if kp is not None else "trace", pass_error)


def run_under_ncu(cmd: list[str], out_dir: Path, *, launch_count: int = NCU_LAUNCHES, top: int = TOP_KERNELS,
                  ncu: str | None = None, profile: Callable[..., KernelPass] | None = None) -> RunResult:
    """Profile any program's first ``launch_count`` kernel launches with ncu alone and budget their time.

    The budget's window is the profiled kernels' summed time (ncu serialises
    kernels and records no timeline: no idle time is seen); each kernel's
    regime and share of its roof are measured. ``profile`` defaults to
    :func:`~gpuwhy.api.run_kernels.profile_kernels`.

    Raises:
        UsageError: no command, or a program that does not exist.
        NoDeviceError: no ncu (the message says what to install), or no GPU.
        MeasurementError: the program failed under ncu.
    """
    import time

    from ..importers.kernel_names import display_names

    if not cmd:
        raise UsageError("no program given: write it after `--`, e.g. gpuwhy run --kernels -- ./app ARGS")
    argv = python_argv(cmd) if is_python(cmd) else list(cmd)
    _, base = _run_names(_out_folder(Path(out_dir)))
    if profile is None:
        from .run_kernels import profile_kernels as profile
    t0 = time.perf_counter()
    kp = profile(argv, launch_count=launch_count, export=base, ncu=ncu)
    wall = time.perf_counter() - t0
    ks = sorted(kp.kernels.values(), key=lambda k: -(k.total_time_s or 0.0))
    names = display_names([k.full_name for k in ks])
    rows = [measured_row(names[k.full_name], k.total_time_s, k.launches, k.mean_time_s or 0.0, k)
            for k in ks if k.total_time_s]
    total = sum(r.total_s for r in rows)
    program = ProgramRun(tuple(cmd), 0, wall, None)
    notes = [f"ncu alone: {sum(r.launches for r in rows)} kernel launches profiled ({fmt_num(total * 1e3)} ms of kernel "
             "time, each launch run alone); ncu records no timeline, so GPU idle time is not seen: for a Python "
             "program with PyTorch, `gpuwhy run --kernels -- python ...` adds it",
             f"regimes judged against {kp.roofline}", *kp.notes]
    if total <= 0:
        return RunResult(program, None, None, None, None, tuple(notes), tuple(rows[:top]), kp, "ncu")
    budget = time_budget(total, {}, busy_shares(rows), kernel_times(rows))  # every row measured: by regime
    return RunResult(program, None, None, None, budget, tuple(notes), tuple(rows[:top]), kp, "ncu")


def profile_program(
    cmd: list[str],
    out_dir: Path,
    *,
    skip_first_s: float | None = None,
    steps: int | None = None,
    kernels: bool = False,
    top: int = TOP_KERNELS,
    launch_count: int | None = None,
    ncu: str | None = None,
    stdout_to_stderr: bool = False,
) -> RunResult:
    """`gpuwhy run`: a Python program under torch.profiler (:func:`run_program`, with ``kernels`` an ncu
    pass too), or, for any other program or where PyTorch is missing, its kernels under ncu alone
    (:func:`run_under_ncu`, ``launch_count`` launches, default :data:`NCU_LAUNCHES`).

    Raises:
        UsageError: no command; a window (``skip_first_s``/``steps``) for ncu alone; ``launch_count``
            with a trace; see :func:`run_program` and :func:`run_under_ncu`.
        NoDeviceError: no GPU; neither PyTorch nor ncu (the message names both).
        MeasurementError: the program failed (its exit code; the trace is deleted), or failed under ncu.
    """
    import importlib.util

    from ..errors import MeasurementError, NoDeviceError
    from ..importers.ncu.rep import find_ncu
    from .run_program import NoPyTorch

    if not cmd:
        raise UsageError("no program given: write it after `--`, e.g. gpuwhy run -- python train.py --epochs 1")
    window = skip_first_s is not None or steps is not None
    python = is_python(cmd)
    if not python and window:
        raise UsageError("--skip-first and --steps pick a window of a torch.profiler trace, which only a Python "
                         "program gets: drop them (ncu alone takes -c N)")
    if python:
        if launch_count is not None and importlib.util.find_spec("torch") is not None:
            raise UsageError("-c/--launch-count applies to ncu alone (a program that is not Python, or no "
                             "PyTorch); with a trace, --kernels measures the --top kernels a few launches each")
        try:
            r = run_program(cmd, out_dir, skip_first_s=skip_first_s or 0.0, steps=steps, kernels=kernels, top=top,
                            ncu=ncu, stdout_to_stderr=stdout_to_stderr)
        except NoPyTorch as exc:
            if find_ncu(ncu) is None:
                raise NoDeviceError(f"{exc}; and `ncu` is not on PATH either: install one of them") from None
            if window:
                raise UsageError("--skip-first and --steps pick a window of a torch.profiler trace, and PyTorch is "
                                 "not importable here: drop them (ncu alone takes -c N)") from None
        else:
            p = r.program
            if p.exit_code != 0 and not p.interrupted:
                if p.trace is not None:
                    p.trace.unlink(missing_ok=True)
                why = f": {p.error}" if p.error else ""
                raise MeasurementError(f"the program failed with exit code {p.exit_code}{why} (see its output above); "
                                       "nothing judged")
            return r
        r = run_under_ncu(cmd, out_dir, launch_count=launch_count or NCU_LAUNCHES, top=top, ncu=ncu)
        return dataclasses.replace(r, notes=("PyTorch is not importable: the program's kernels were profiled with ncu "
                                             "alone (no timeline)", *r.notes))
    r = run_under_ncu(cmd, out_dir, launch_count=launch_count or NCU_LAUNCHES, top=top, ncu=ncu)
    if kernels:
        r = dataclasses.replace(r, notes=(*r.notes, "--kernels adds nothing here: ncu alone measured every kernel "
                                                    "launch it profiled"))
    return r


def to_json(r: RunResult) -> dict:
    """The `--json` document: numbers with units in the keys."""
    b = r.budget
    doc = {
        "mode": r.mode,
        "argv": list(r.program.argv),
        "exit_code": r.program.exit_code,
        "program_wall_s": r.program.wall_s,
        "trace": str(r.program.trace) if r.program.trace else None,
        "window": None if r.window is None else {
            "start_us": r.window.start_us, "end_us": r.window.end_us, "seconds": r.window.seconds, "how": r.window.how},
        "gpu": r.gpu.device if r.gpu else None,
        "notes": list(r.notes),
        "kernels": [k.to_dict() for k in r.kernels],
        "kernel_pass": None if r.kernel_pass is None else r.kernel_pass.to_dict(),
        "kernel_pass_error": None if r.pass_error is None else str(r.pass_error),
    }
    if b is not None:
        alone = r.mode == "ncu"  # no timeline: idle time was not measured, so nothing is said of it
        doc["budget"] = {
            "window_s": b.window_s, "busy_s": b.busy_s, "idle_s": None if alone else b.idle_s,
            "idle": [{"cause": s.name, "seconds": s.seconds, "pct": s.pct} for s in b.idle],
            "busy": [{"regime": s.name, "seconds": s.seconds, "pct": s.pct} for s in b.busy],
            "idle_fix": None if b.idle_fix is None else {
                "removable_s": b.idle_fix.removable_s, "share_pct": b.idle_fix.share_pct,
                "ceiling_x": None if b.idle_fix.ceiling_x == float("inf") else b.idle_fix.ceiling_x},
            "not_judged": list(b.not_judged),
            "verdict": "gpu-bound" if b.gpu_bound and not alone else (None if b.verdict is None else b.verdict.what),
            "gpu_bound": None if alone else b.gpu_bound,
            "fixes": [{"what": f.what, "kind": f.kind, "removable_s": f.removable_s, "share_pct": f.share_pct,
                       "ceiling_x": (None if f.ceiling_x == float("inf") else f.ceiling_x), "detail": f.detail,
                       "remedies": list(f.remedies)} for f in b.fixes],
            "shares_pct_total": b.shares_pct_total,
        }
    doc["timeline"] = timeline_json(r)
    json.dumps(doc, allow_nan=False)
    return doc


def timeline_of(r: RunResult):
    """The window's :class:`~gpuwhy.model.timeline.bins.BinnedWindow` (busy and idle by cause per bin) of the
    budget's GPU, its idle parts named as the budget's idle shares; None without a budget."""
    from ..importers.timeline.bins import HOST_ONLY as HOST_ONLY_KEY
    from ..importers.timeline.results import CAUSE_LABELS

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
