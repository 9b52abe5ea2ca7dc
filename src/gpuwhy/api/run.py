"""`gpuwhy run`: profile a program, crop the window, and build its one time budget.

The steps: run the program under torch.profiler (:mod:`gpuwhy.api.run_program`),
read its trace as a timeline (:mod:`gpuwhy.importers.kineto`), crop it to the window
(:mod:`gpuwhy.importers.timeline.window`), analyse it
(:mod:`gpuwhy.importers.timeline.analyze`), and put every second of
the window in one share (:mod:`gpuwhy.verdict.engine`, as `gpuwhy trace` does): GPU idle by cause,
GPU busy by regime.

Busy time from a trace alone is split by kind of work (GEMM, attention,
elementwise, ... from kernel-name families) with launch-sized kernels apart:
regimes (compute, memory, latency, issue) need FLOPs and bytes, and are never
guessed from names. With ``kernels`` (``--kernels``) a second, short pass runs
the program under Nsight Compute over a few launches of each top kernel
(:mod:`gpuwhy.api.run_kernels`); those kernels' time is then put under their
measured regime, each with its share of its roof and the ceiling of a
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
from ..importers.ncu.diagnosis import diagnose_kernels
from ..importers.timeline.activities import Timeline, crop
from ..importers.timeline.analyze import analyze
from ..importers.timeline.results import TraceGpu, TraceReport
from ..importers.timeline.window import Window, choose_window
from ..model.roofline.classify import launch_sized
from ..verdict.engine import Diagnosis, diagnose
from ..verdict.figures import KernelFigure, LinkRate
from .run_costs import CostPass
from .run_kernels import KernelPass
from .run_program import ProgramRun, Profiler, parse_program, run_python
from ..units import fmt_counted, fmt_num

#: Kernels listed in the output and measured by ``--kernels`` (largest total time first).
TOP_KERNELS = 5
#: Kernel launches profiled by ncu alone (a program that is not Python, or no PyTorch).
NCU_LAUNCHES = 200


@dataclass(frozen=True)
class KernelRow:
    """One kernel of the window: its time (s) there, launches and mean (s), kind (from its name), and
    its regime with its share of its roof (% of the roof at its intensity, at the ``level`` that
    decides) where ncu measured it (``measured_launches`` > 0) or a framework's cost model judged the
    executable it ran in, else ``regime`` None and ``why``; ``source`` says where the regime came from
    (``ncu``, ``cost_analysis of jit(step)``; None without one)."""

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
    source: str | None = None

    def to_dict(self) -> dict:
        return {"name": self.name, "full_name": self.full_name, "total_s": self.total_s, "launches": self.launches,
                "mean_s": self.mean_s, "kind": self.kind, "regime": self.regime, "roof_pct": self.roof_pct,
                "deciding_level": self.level, "measured_launches": self.measured_launches, "why": self.why,
                "source": self.source}


@dataclass(frozen=True)
class RunResult:
    """What `gpuwhy run` found: the program's run, the window, the timeline of the busiest GPU and the budget.

    ``mode`` is ``trace`` (torch.profiler), ``trace+ncu`` (and an ncu pass over the top kernels) or
    ``ncu`` (ncu alone: ``window``, ``trace`` and ``gpu`` are None, the budget's window is the
    profiled kernels' time). ``budget`` is the window's :class:`~gpuwhy.verdict.engine.Diagnosis`,
    the same engine `gpuwhy trace` asks. ``gpu`` is ``None`` (and ``budget`` too) when the window holds no GPU
    work. ``kernels`` are the top kernels by time in the window. ``pass_error`` is why the ncu pass
    of ``--kernels`` failed (the budget is then the trace's alone; the CLI exits with its code).
    """

    program: ProgramRun
    window: Window | None
    trace: TraceReport | None
    gpu: TraceGpu | None
    budget: Diagnosis | None
    notes: tuple[str, ...]
    kernels: tuple[KernelRow, ...] = ()
    kernel_pass: KernelPass | None = None
    mode: str = "trace"
    pass_error: Exception | None = None


def kernel_rows(gpu: TraceGpu, measured: KernelPass | None = None, costs: CostPass | None = None) -> list[KernelRow]:
    """Every kernel of ``gpu`` (largest total time first) with the regime ncu measured for it, else the
    one its executable's cost model gave (``costs``), if any."""
    from ..importers.timeline.kinds import kernel_kind

    got = measured.kernels if measured is not None else {}
    costed = costs.kernels if costs is not None else {}
    rows = []
    for k in gpu.top_kernels:
        m = got.get(k.full_name)
        c = costed.get(k.full_name)
        if m is not None and (m.regime is not None or c is None):
            rows.append(measured_row(k.name, k.total_s, k.count, k.mean_s, m))
        elif c is not None:
            rows.append(KernelRow(k.name, k.full_name, k.total_s, k.count, k.mean_s, kernel_kind(k.full_name),
                                  c.regime, c.roof_pct, c.level, source=f"cost_analysis of {c.name}"))
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
                     m.deciding_level, m.launches, "" if m.regime is not None else (m.reason or "not classifiable"),
                     "ncu" if m.regime is not None else None)


def kernel_figures(gpu: TraceGpu, measured: KernelPass | None = None, costs: CostPass | None = None
                   ) -> tuple[KernelFigure, ...]:
    """The engine's figure of every kernel of ``gpu``, with the regime, share of roof, deciding level,
    FLOPs (ncu's per launch, times the window's launches) and precision ncu measured, where it did;
    else the regime, share of roof and level of the executable it ran in (``costs``), where known."""
    got = measured.kernels if measured is not None else {}
    costed = costs.kernels if costs is not None else {}
    out = []
    for k in gpu.figures.kernels:
        m = got.get(k.name)
        if m is None or m.regime is None:
            c = costed.get(k.name)
            out.append(k if c is None else dataclasses.replace(k, regime=c.regime, roof_pct=c.roof_pct, level=c.level))
            continue
        flops = m.flops / m.launches * k.launches if m.flops and m.launches else None
        out.append(dataclasses.replace(k, regime=m.regime, roof_pct=m.roof_pct, level=m.deciding_level, flops=flops,
                                       precision=m.precision))
    return tuple(out)


def measured_peaks(measured: KernelPass | None, spec_dirs: Sequence[str] = ()) -> dict[str, float]:
    """Dense FLOP/s per precision of the GPU the ncu pass ran on (its sheet's,
    :func:`~gpuwhy.importers.ncu.diagnosis.sheet_peaks`), for lower precision; {} without one."""
    if measured is None or not measured.report.devices:
        return {}
    from ..device.sheet import sheet_for
    from ..importers.ncu.diagnosis import sheet_peaks

    try:
        return sheet_peaks(sheet_for(measured.report.devices[0].sheet, spec_dirs=spec_dirs).sheet)
    except GpuwhyError:
        return {}


def busiest_gpu(report: TraceReport) -> TraceGpu | None:
    """The GPU of ``report`` with the most busy time (None when the trace has none)."""
    return max(report.devices, key=lambda d: d.busy_s) if report.devices else None


def budget_of(report: TraceReport, window: Window, measured: KernelPass | None = None, costs: CostPass | None = None
              ) -> tuple[TraceGpu | None, Diagnosis | None, list[KernelRow]]:
    """The busiest GPU of ``report`` (analysed over ``window``), its diagnosis and its kernels
    (``(None, None, [])`` when no GPU worked). With ``measured`` (ncu) or ``costs`` (a cost model's,
    where ncu did not measure), those kernels are judged by their regime; else the GPU's diagnosis is
    the trace analysis's own."""
    gpu = busiest_gpu(report)
    if gpu is None:
        return None, None, []
    if gpu.busy_s <= 0 or gpu.diagnosis is None:
        return gpu, None, []
    rows = kernel_rows(gpu, measured, costs)
    if measured is None and not (costs is not None and costs.kernels):
        return gpu, gpu.diagnosis, rows
    figures = dataclasses.replace(gpu.figures, kernels=kernel_figures(gpu, measured, costs),
                                  peaks=measured_peaks(measured))
    return gpu, diagnose(figures), rows


def cost_pass(t, gpu: TraceGpu | None, trace: Path) -> CostPass | None:
    """The kernels of ``gpu`` in the window ``t`` judged by the cost model of the calls that launched
    them (:mod:`gpuwhy.api.run_costs`; jitted JAX functions under the CUPTI tracer); None without any."""
    from ..importers.kineto.read import trace_header
    from ..importers.timeline.costs import executable_calls
    from .run_costs import judge_costs

    if gpu is None or not t.op_costs:
        return None
    functions = executable_calls(t, gpu.device)
    if not functions:
        return None
    try:
        names, _ = trace_header(trace)
    except GpuwhyError:
        names = {}
    return judge_costs(functions, names.get(str(gpu.device)) or getattr(gpu, "name", None))


def host_links() -> dict[str, LinkRate]:
    """The host link of this machine's first GPU as NVML reads it (both directions), {} without one."""
    from ..device.host_link import host_link

    got = host_link(0)
    if got is None:
        return {}
    rate = LinkRate(*got)
    return {"HtoD": rate, "DtoH": rate}


def check_out_dir(out_dir: str | Path) -> None:
    """Refuse, before the program runs, an ``--out`` that can be no folder: ``-``.

    Raises:
        UsageError: ``out_dir`` is ``-`` (a folder cannot be standard output).
    """
    if str(out_dir).strip() == "-":
        raise UsageError("--out '-': --out is the folder the trace is saved in, not standard output (which carries "
                         "the run's own output: use --json there); give a folder")


def _out_folder(out_dir: Path) -> Path:
    """``out_dir`` made absolute (the program may change directory) and created.

    Raises:
        UsageError: it is ``-`` (a folder cannot be standard output), a file, or cannot be made (one
            line, naming it).
    """
    check_out_dir(out_dir)
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


def _own_trace(run: ProgramRun) -> tuple[Timeline, Path, list[str]]:
    """The timeline to judge, where it came from, and what to say of it: the tracer's trace, or, where the
    program started JAX's own profiler (which takes CUPTI over: the CUPTI trace holds no GPU work from then
    on), the trace JAX wrote (:mod:`gpuwhy.importers.xprof`); the tracer's, and why, where JAX's cannot be read."""
    if run.other_trace is None:
        return read_timeline(run.trace), run.trace, []
    from ..importers.xprof import locate, read_xprof_timeline

    try:
        found, _, _ = locate(run.other_trace)
        if found is None:
            raise UsageError(f"{run.other_trace} holds no trace JSON: trace with create_perfetto_trace=True")
        return (read_xprof_timeline(found), found,
                [f"judged JAX's own trace ({found}), which holds the GPU work the CUPTI trace lost"])
    except (UsageError, OSError) as exc:
        return read_timeline(run.trace), run.trace, [f"JAX's own trace could not be read ({exc}): the CUPTI trace "
                                                      "is judged"]


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
    tl, source, said = _own_trace(run)
    try:
        window = choose_window(tl, skip_first_s=skip_first_s, steps=steps, from_first_gpu=True)
    except UsageError as exc:
        raise UsageError(" ".join((f"{exc} (the trace is kept: {source})", *run.notes, *said))) from None
    cropped = crop(tl, window.start_us, window.end_us)
    report = analyze(cropped, source=str(source), top=100_000, timeline_us=(window.start_us, window.end_us),
                     links=host_links())
    notes = [*run.notes, *said, f"window: {window.how}, {fmt_num(window.seconds)} s"]
    costs = cost_pass(cropped, busiest_gpu(report), run.trace)
    if costs is not None:
        notes.extend(costs.notes)
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
    gpu, budget, rows = budget_of(report, window, kp, costs)
    if budget is not None and budget.judged_s < budget.window_s:
        notes.append("warm-up is listed but not judged: leave it out of the window with --steps N (the last N "
                     "ProfilerStep ranges) or --skip-first TIME")
    if kp is not None:
        measured = [x for x in rows if x.measured_launches]
        notes.append(f"--kernels: {fmt_counted(len(measured), 'kernel')} measured by ncu "
                     f"({fmt_counted(sum(x.measured_launches for x in measured), 'launch', 'launches')}; regimes judged against {kp.roofline})")
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
    budget = diagnose_kernels(ks, measured_peaks(kp))
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
    tracer: str = "auto",
) -> RunResult:
    """`gpuwhy run`: a Python program under a tracer (:func:`run_program`, with ``kernels`` an ncu
    pass too), or, for any other program or where no tracer can run, its kernels under ncu alone
    (:func:`run_under_ncu`, ``launch_count`` launches, default :data:`NCU_LAUNCHES`).

    ``tracer``: ``torch`` (torch.profiler), ``cupti`` (CUPTI through cupti-python: any CUDA program in
    Python), or ``auto``: torch.profiler where PyTorch is importable, else CUPTI where cupti-python is,
    else ncu alone.

    Raises:
        UsageError: no command; an unknown tracer; a window (``skip_first_s``/``steps``) for ncu alone;
            ``launch_count`` with a trace; see :func:`run_program` and :func:`run_under_ncu`.
        NoDeviceError: no GPU; neither a tracer nor ncu (the message names them); the tracer asked for
            cannot run (its message says what to install).
        MeasurementError: the program failed (its exit code; the trace is deleted), or failed under ncu.

    An ``out_dir`` this call made is removed again when the run fails and leaves it empty.
    """
    if not cmd:
        raise UsageError("no program given: write it after `--`, e.g. gpuwhy run -- python train.py --epochs 1")
    folder = Path(os.path.abspath(out_dir))  # now: the program may change directory
    made = not folder.exists()
    try:
        return _profile(cmd, out_dir, skip_first_s=skip_first_s, steps=steps, kernels=kernels, top=top,
                        launch_count=launch_count, ncu=ncu, stdout_to_stderr=stdout_to_stderr, tracer=tracer)
    except BaseException:
        _drop_if_empty(folder, made)
        raise


def _drop_if_empty(folder: Path, made: bool) -> None:
    """Remove ``folder`` when this run ``made`` it and left nothing in it (a run that failed)."""
    if made and folder.is_dir():
        try:
            folder.rmdir()  # only an empty folder goes
        except OSError:
            pass


def pick_tracer(tracer: str, have=None) -> str | None:
    """The tracer `gpuwhy run` uses for a Python program: ``torch`` or ``cupti`` as asked; for ``auto``,
    ``cupti`` where cupti-python is importable and PyTorch is not, else ``torch`` (which says PyTorch is
    missing, and `gpuwhy run` turns to ncu alone).
    ``have(module) -> bool`` says what is importable (default: :func:`importlib.util.find_spec`).

    Raises:
        UsageError: an unknown tracer name.
    """
    if tracer not in ("auto", "torch", "cupti"):
        raise UsageError(f"--tracer {tracer!r} is not a tracer: give torch, cupti or auto")
    if tracer != "auto":
        return tracer
    if have is None:
        import importlib.util

        def have(m):
            try:
                return importlib.util.find_spec(m) is not None
            except (ImportError, ValueError):
                return False
    return "cupti" if not have("torch") and have("cupti") else "torch"


def _profile(cmd: list[str], out_dir: Path, *, skip_first_s, steps, kernels, top, launch_count, ncu,
             stdout_to_stderr, tracer="auto") -> RunResult:
    """:func:`profile_program` once the command is known not to be empty (same arguments, same errors)."""
    import importlib.util

    from ..errors import MeasurementError, NoDeviceError
    from ..importers.ncu.rep import find_ncu
    from ..engine.cupti_tracer import INSTALL as CUPTI_INSTALL, NoCupti
    from . import run_program as programs
    from .run_program import NoPyTorch

    window = skip_first_s is not None or steps is not None
    python = is_python(cmd)
    chosen = pick_tracer(tracer)
    if not python and window:
        raise UsageError("--skip-first and --steps pick a window of a torch.profiler trace, which only a Python "
                         "program gets: drop them (ncu alone takes -c N)")
    if not python and tracer != "auto":
        raise UsageError(f"--tracer {tracer} traces a Python program in-process: give `python script.py`, "
                         "`python -m module` or `script.py` (other programs' kernels go to ncu alone)")
    if python:
        if launch_count is not None and (chosen == "cupti" or importlib.util.find_spec("torch") is not None):
            raise UsageError("-c/--launch-count applies to ncu alone (a program that is not Python, or no "
                             "tracer); with a trace, --kernels measures the --top kernels a few launches each")
        try:
            r = run_program(cmd, out_dir, skip_first_s=skip_first_s or 0.0, steps=steps, kernels=kernels, top=top,
                            ncu=ncu, stdout_to_stderr=stdout_to_stderr,
                            profiler_factory=getattr(programs, programs.TRACERS[chosen]))
        except (NoPyTorch, NoCupti) as exc:
            if tracer != "auto":
                raise
            why = str(exc) if chosen == "cupti" else f"{exc}; nor is cupti-python: {CUPTI_INSTALL}"
            if find_ncu(ncu) is None:
                raise NoDeviceError(f"{why}; and `ncu` is not on PATH either: install one of them") from None
            if window:
                raise UsageError("--skip-first and --steps pick a window of a trace, and no tracer (PyTorch or "
                                 "cupti-python) can run here: drop them (ncu alone takes -c N)") from None
            fallback = f"CUPTI could not trace ({exc})" if chosen == "cupti" else \
                "neither PyTorch nor cupti-python is importable"
        else:
            p = r.program
            if p.exit_code != 0 and not p.interrupted:
                if p.trace is not None:
                    p.trace.unlink(missing_ok=True)
                why = f": {p.error}" if p.error else ""
                raise MeasurementError(f"the program failed with exit code {p.exit_code}{why} (see its output above); "
                                       "nothing judged")
            if chosen == "cupti":
                r = dataclasses.replace(r, notes=("timeline: a CUPTI activity trace (cupti-python): kernels, copies, "
                                                  "API calls; host time outside CUDA calls counts as host work",
                                                  *r.notes))
            return r
        r = run_under_ncu(cmd, out_dir, launch_count=launch_count or NCU_LAUNCHES, top=top, ncu=ncu)
        return dataclasses.replace(r, notes=(f"{fallback}: the program's kernels were profiled with ncu alone (no "
                                             "timeline)", *r.notes))
    if Path(cmd[0]).name.startswith("python") and find_ncu(ncu) is None:
        raise NoDeviceError(f"{' '.join(cmd[:2])!r} is not run in-process under torch.profiler (give a script or "
                            "-m module for a timeline), and `ncu` (Nsight Compute), which profiles any program's "
                            "kernels, is not on PATH: install it or pass --ncu PATH")
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
    doc["diagnosis"] = None if b is None else b.to_dict()  # an ncu pass: idle_s null (no timeline)
    doc["timeline"] = timeline_json(r)
    json.dumps(doc, allow_nan=False)
    return doc


def timeline_of(r: RunResult):
    """The window's :class:`~gpuwhy.model.timeline.bins.BinnedWindow` (busy and idle by cause per bin) of the
    budget's GPU, its idle parts named as the budget's shares; None without a budget."""
    from ..importers.timeline.results import CAUSE_LABELS

    if r.budget is None or r.gpu is None or r.gpu.timeline is None:
        return None
    return r.gpu.timeline.renamed(CAUSE_LABELS)


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
