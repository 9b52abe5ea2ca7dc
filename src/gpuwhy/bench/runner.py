"""`gpuwhy bench` end to end: open the GPU, check, time, measure launches, save a profile.

:func:`run_bench` returns a :class:`~gpuwhy.bench.results.BenchResult`; it
prints nothing (the CLI renders). Order of work: NVML sample (before gpuwhy
creates a CUDA context, so any process NVML lists is someone else), correctness
checks of every selected kernel, the timed sizes, a second NVML sample, the
launch-overhead measurements, the CPU comparison, the profile.
"""

from __future__ import annotations

import datetime as _dt
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

#: Per-row timing budgets (seconds of timed repetitions) and repetition bounds.
BUDGETS = {"quick": (0.010, 5, 100), "sweep": (0.020, 10, 200)}

Progress = Callable[..., None]


@dataclass
class BenchOptions:
    """What to run. ``mode`` is ``quick`` or ``sweep``; ``kernels`` the ``--kernel``
    values (None: all); ``gpu`` a sheet name overriding the NVML match;
    ``defines``/``waves`` tune the vectorized kernels (benchmarks/ uses them)."""

    mode: str = "quick"
    kernels: Sequence[str] | None = None
    dtype: str = "fp32"
    device: str | None = None
    gpu: str | None = None
    spec_dirs: Sequence[str] = ()
    sizes: Sequence[int] | None = None
    defines: dict = field(default_factory=dict)
    waves: int = 4
    save_profile: bool = True
    submit_path: str = "cuda.core.launch"


def _nvrtc_text() -> str:
    try:
        from ..engine.compile import nvrtc_version

        return "%d.%d" % nvrtc_version()
    except Exception:
        return "n/a"


def _sheet_for(info, opts: BenchOptions, notes: list[str]):
    from ..device.sheet import sheet_for

    choice = sheet_for(opts.gpu, device=info, spec_dirs=opts.spec_dirs)
    if choice.conflict:
        notes.append(choice.conflict)
    if choice.sheet is None:
        if choice.note.startswith("spec sheets not loaded"):
            notes.append(f"{choice.note}; no % of spec")
        else:
            notes.append(f"no spec sheet matches {info.name!r}; pass --gpu NAME for % of the sheet's bandwidth")
    return choice.sheet


def run_bench(opts: BenchOptions, progress: Progress | None = None) -> "BenchResult":  # noqa: F821
    """Run the benchmark described by ``opts``.

    ``progress(total=..., advance=..., description=...)`` is called as work is
    planned and done (all keywords optional).

    Raises:
        NoDeviceError: no GPU or driver (exit 3).
        UsageError: a bad option value (kernel, dtype, device, sheet name).
        MeasurementError: a wrong kernel result or a CUDA error (exit 4).
    """
    from ..device.sample import sample
    from ..engine.context import open_device
    from .preflight import open_and_sample
    from .launch import measure_launch_overhead
    from .memory import QUICK_SIZES, MemoryBench, cpu_comparison, select_cases, sweep_sizes
    from .results import BenchResult, sustained_dram

    prog = progress or (lambda **kw: None)
    t0 = time.perf_counter()
    date = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
    cases = select_cases(opts.kernels)
    if opts.dtype not in ("fp32", "fp64"):
        from ..errors import UsageError

        raise UsageError(f"--dtype {opts.dtype!r} is not one of: fp32, fp64")
    sizes = list(opts.sizes) if opts.sizes else (list(QUICK_SIZES) if opts.mode == "quick" else sweep_sizes())
    budget, min_reps, max_reps = BUDGETS.get(opts.mode, BUDGETS["quick"])

    index, uuid, before = open_and_sample(opts.device)
    notes: list[str] = []
    if before is None:
        notes.append("NVML unavailable: no clock, throttling or busy-GPU check")
    prog(total=len(cases) + len(cases) * len(sizes) + 2, description="compiling kernels")

    with open_device(index) as ctx:
        sheet = _sheet_for(ctx.info, opts, notes)
        spec_gbs = sheet.memory_bandwidth_gbs if sheet else None
        bench = MemoryBench(ctx, opts.dtype, opts.defines, opts.waves)
        checks = []
        for c in cases:
            prog(description=f"checking {c.name} {opts.dtype}")
            checks.append(bench.check(c))
            prog(advance=1)
        rows = []
        for n in sizes if cases else ():
            def on_row(row, note, n=n):
                prog(advance=1, description=f"timing n={n:,}")

            got, size_notes = bench.time_size(cases, n, spec_gbs=spec_gbs, budget_s=budget, min_reps=min_reps,
                                              max_reps=max_reps, on_row=on_row)
            rows.extend(got)
            notes.extend(size_notes)
        after = sample(uuid, index) if before is not None else None
        prog(description="launch overhead")
        launch = measure_launch_overhead(ctx, quick=opts.mode == "quick", submit_path=opts.submit_path)
        prog(advance=1)
        info = ctx.info
    prog(description="numpy vecadd on one CPU core")
    cpu = cpu_comparison(rows, opts.dtype) if any(c.op == "vecadd" for c in cases) else None
    prog(advance=1)

    from ..device.sample import health_warnings

    warnings = health_warnings(before, after)
    best = sustained_dram(rows, info.l2_bytes)
    if cases and best is None and any(c.variant == "vec16" for c in cases):
        notes.append("no vectorized row reached a working set of 4 x L2; no sustained DRAM figure (use larger sizes)")
    result = BenchResult(
        device=info, mode=opts.mode, dtype=opts.dtype, rows=tuple(rows), launch=launch, cpu=cpu,
        checks=tuple(checks), sheet_name=sheet.name if sheet else None, sheet_bandwidth_gbs=spec_gbs,
        sustained=best, nvrtc=_nvrtc_text(), duration_s=0.0, warnings=tuple(warnings), notes=tuple(notes),
        health_before=before, health_after=after, date=date,
    )
    path = None
    if opts.save_profile:
        from ..profiles import carry_sections, profile_from_result, save_profile

        try:
            path = str(save_profile(carry_sections(profile_from_result(result))))
        except (OSError, ValueError) as exc:
            notes.append(f"device profile not saved ({exc})")
    from dataclasses import replace

    return replace(result, profile_path=path, notes=tuple(notes), duration_s=time.perf_counter() - t0)
