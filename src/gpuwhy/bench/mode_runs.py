"""What each mode of `gpuwhy bench` does with a request: the runners and their results.

A runner is ``run(request, hooks)`` (:class:`RunHooks`: what it takes from the command line);
it opens the GPU (or compiles), measures, saves what it measured in the device profile
(:func:`gpuwhy.profiles.record`, one call per :mod:`profile section <gpuwhy.profile_sections>`
the mode declares, unless ``--no-save``) and returns its result. The declarations that name
these runners are in :mod:`gpuwhy.bench.modes`. Nothing heavy is imported before a runner runs.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Callable, ContextManager

from ..errors import CheckFailed, GpuwhyError, UsageError
from ..units import fmt_counted

#: A request: the :class:`gpuwhy.bench.modes.BenchRequest` built from the mode declarations
#: (not imported here: the declarations import these runners).
BenchRequest = Any
#: ``progress(total=, advance=, description=)`` (all keywords optional).
Progress = Callable[..., None]
#: ``bar(label)``: a context manager yielding a :data:`Progress` callable, or None (no terminal).
ProgressBar = Callable[[str], ContextManager["Progress | None"]]


def no_bar(label: str) -> ContextManager[None]:
    """A :data:`ProgressBar` that draws nothing."""
    return contextlib.nullcontext(None)


@dataclass(frozen=True)
class RunHooks:
    """What a runner takes from the command line: a progress bar (:data:`ProgressBar`),
    ``writable(path, option)``, which raises UsageError when an output file must not be
    written (checked before measuring, so no run is lost to a bad path), and the CSV
    writer. The defaults do nothing."""

    bar: ProgressBar = no_bar
    writable: Callable[[str, str], None] = lambda path, option: None
    #: ``write_csv(path, result)``: write a BenchResult's rows to ``path`` (the CLI's CSV writer).
    write_csv: Callable[[str, object], None] = lambda path, result: None


# ------------------------------------------------------------------ runners --


@dataclass(frozen=True)
class MemoryRun:
    """``--quick`` / ``--sweep``: the bandwidth run, and the compute and cache ceilings a sweep
    adds (else None; ``caches`` a :class:`~gpuwhy.bench.cache_bandwidth.CacheResult`)."""

    result: Any
    compute: list | None = None
    caches: Any = None

    @property
    def failure(self) -> GpuwhyError | None:
        """The error to raise once everything is printed and saved (exit 4): a cache ceiling
        not reported (:attr:`~gpuwhy.bench.cache_bandwidth.CacheResult.failure`), or None."""
        return getattr(self.caches, "failure", None)


@dataclass(frozen=True)
class RooflineRun:
    """``--roofline``: the sweep and the sheet its roofs were read from (None: no sheet)."""

    sweep: Any
    sheet: Any = None


@dataclass(frozen=True)
class CompileRun:
    """``--compile-only``: one report per source and target, for ``arch``."""

    reports: list
    arch: str

    @property
    def failure(self) -> CheckFailed | None:
        """The error to raise once the reports are printed (exit 1), or None when all compiled."""
        bad = [r for r in self.reports if not r.ok]
        if not bad:
            return None
        return CheckFailed(f"{fmt_counted(len(bad), 'bundled kernel source')} failed to compile for {self.arch}: "
                           f"{bad[0].source}: {bad[0].message}")


def _sheet(req: BenchRequest):
    """The ``--gpu`` sheet, or None without ``--gpu``."""
    if not req.gpu:
        return None
    from ..device.sheet import sheet_for

    return sheet_for(req.gpu, spec_dirs=req.specs or ()).sheet


def measure_compute(req: BenchRequest, precisions) -> list:
    """Open the GPU and measure its compute ceilings; save them into the newest profile
    (unless ``--no-save``).

    Raises:
        UsageError: an unknown ``--precision`` (before the GPU is touched).
    """
    from ..engine.context import open_device
    from .compute import PRECISIONS, run_compute

    for p in precisions or ():
        if p not in PRECISIONS:
            raise UsageError(f"--precision {p!r} is not one of: {', '.join(PRECISIONS)}")
    sheet = _sheet(req)
    with open_device(req.device) as ctx:
        results = run_compute(ctx, precisions or None, sheet=sheet)
        info = ctx.info
    if not req.no_save:
        from ..profile_sections import COMPUTE
        from ..profiles import record

        record(COMPUTE, info.uuid, results, name=info.name, sheet=getattr(sheet, "name", None))
    return results


def run_memory(req: BenchRequest, hooks: RunHooks) -> MemoryRun:
    """``--quick``/``--sweep``: the bandwidth run (:func:`gpuwhy.bench.runner.run_bench`, which saves
    the profile), its rows to ``--csv``, and with ``--sweep`` (no ``--kernel``) the compute and cache
    ceilings.

    Raises:
        UsageError: a ``--dtype`` other than fp32/fp64, an unknown ``--kernel`` or a ``--csv`` that
            must not be written (all before the GPU is touched).
    """
    dtype = req.dtype or "fp32"
    if dtype not in ("fp32", "fp64"):
        raise UsageError(f"--dtype {req.dtype!r} is not one of: fp32, fp64")
    if req.csv:
        hooks.writable(req.csv, "--csv")
    from .memory import select_cases
    from .runner import BenchOptions, run_bench

    select_cases(req.kernel)  # validate names before touching the GPU
    opts = BenchOptions(
        mode="sweep" if req.sweep else "quick", kernels=req.kernel, dtype=dtype, device=req.device, gpu=req.gpu,
        spec_dirs=req.spec_dirs, save_profile=not req.no_save,
    )
    with hooks.bar("gpuwhy bench") as progress:
        result = run_bench(opts, progress)
    if req.csv:
        hooks.write_csv(req.csv, result)
    compute = measure_compute(req, None) if req.sweep and not req.kernel else None
    caches = measure_caches(req, hooks) if req.sweep and not req.kernel else None
    return MemoryRun(result, compute, caches)


def measure_caches(req: BenchRequest, hooks: RunHooks):
    """Open the GPU and measure the L2, shared-memory and L1 ceilings
    (:func:`gpuwhy.bench.cache_bandwidth.measure_caches`); save them into the newest profile
    (unless ``--no-save``)."""
    from .cache_bandwidth import measure_caches as _measure

    with hooks.bar("cache ceilings") as progress:
        caches = _measure(req.device, progress=progress)
    if not req.no_save:
        from ..profile_sections import CACHES
        from ..profiles import record

        record(CACHES, caches.device.uuid, caches, name=caches.device.name, sheet=getattr(_sheet(req), "name", None))
    return caches


def memory_document(run: MemoryRun) -> dict:
    """The ``bench`` document: the bandwidth run's, with ``compute`` and ``caches`` when a sweep measured them."""
    doc = run.result.to_dict()
    if run.compute is not None:
        doc["compute"] = [r.to_dict() for r in run.compute]
    if run.caches is not None:
        doc["caches"] = run.caches.to_dict()
    return doc


def run_caches(req: BenchRequest, hooks: RunHooks):
    """``--caches``: :func:`measure_caches` alone."""
    return measure_caches(req, hooks)


def run_compute(req: BenchRequest, hooks: RunHooks) -> list:
    """``--compute``: :func:`measure_compute` for ``--precision`` (default: every precision)."""
    return measure_compute(req, req.precision)


def run_roofline(req: BenchRequest, hooks: RunHooks) -> RooflineRun:
    """Open the GPU, run the mixed-intensity sweep (fp32, and fp16/bf16 half2 where the GPU has them), save it in the profile."""
    from ..engine.context import open_device
    from ..device.sheet import sheet_for
    from .intensity import DTYPES, run_roofline_sweep, supported

    sheet = _sheet(req)
    with open_device(req.device) as ctx:
        if sheet is None:
            sheet = sheet_for(device=ctx.info).sheet
        dtypes = [d for d in DTYPES if supported(d, ctx.info.arch)]
        sweep = run_roofline_sweep(ctx, sheet, dtypes)
        info = ctx.info
    if not req.no_save:
        from ..profile_sections import ROOFLINE
        from ..profiles import record

        record(ROOFLINE, info.uuid, sweep, name=info.name, sheet=sweep.sheet_name)
    return RooflineRun(sweep, sheet)


def run_compile(req: BenchRequest, hooks: RunHooks) -> CompileRun:
    """``--compile-only``: compile every bundled kernel for ``--arch`` (else this GPU's architecture).

    Raises:
        UsageError: no ``--arch`` and no GPU to read one from.
    """
    from ..engine.compile import compile_all
    from ..errors import NoDeviceError

    arch = req.arch
    if arch is None:
        try:
            from ..engine.context import open_device

            with open_device(req.device) as ctx:
                arch = ctx.info.arch
        except NoDeviceError:
            raise UsageError("--compile-only needs --arch sm_XX when there is no GPU (e.g. --arch sm_90)") from None
    reports = compile_all(arch)
    return CompileRun(reports, reports[0].arch if reports else arch)


def compile_document(run: CompileRun) -> dict:
    """The ``bench-compile`` document: the architecture, whether all compiled, one entry per source."""
    return {"arch": run.arch, "ok": all(r.ok for r in run.reports), "sources": [r.to_dict() for r in run.reports]}


def run_latency(req: BenchRequest, hooks: RunHooks):
    """``--latency``: the pointer-chase ladder (:func:`gpuwhy.bench.latency.measure_latency`); saved
    unless ``--no-save`` or ``--cg`` (an L1-bypassing chase is not the profile's ladder)."""
    from .latency import measure_latency

    with hooks.bar("gpuwhy bench --latency") as progress:
        result = measure_latency(req.device, req.spec_dirs, l1_bypass=req.l1_bypass, gpu=req.gpu, progress=progress)
    if not req.no_save and not req.l1_bypass:
        from ..profile_sections import LATENCY
        from ..profiles import record

        record(LATENCY, result.device.uuid, result, name=result.device.name)
    return result


def run_allreduce(req: BenchRequest, hooks: RunHooks):
    """NCCL's all-reduce over the GPUs ``-i`` names (default: all), through torch.distributed
    (:func:`gpuwhy.bench.allreduce.measure_allreduce`)."""
    from .allreduce import measure_allreduce

    with hooks.bar("gpuwhy bench --allreduce") as progress:
        return measure_allreduce(req.device, req.dtype, req.max_size, gpu=req.gpu, spec_dirs=req.spec_dirs,
                                 save=not req.no_save, progress=progress)


def run_p2p(req: BenchRequest, hooks: RunHooks):
    """``--p2p``: every pair of the GPUs ``-i`` names (:func:`gpuwhy.bench.p2p.measure_p2p`); nothing saved."""
    from .p2p import measure_p2p

    with hooks.bar("gpuwhy bench --p2p") as progress:
        return measure_p2p(req.device, progress=progress)


def run_link(req: BenchRequest, hooks: RunHooks):
    """``--link``: host<->device copies (:func:`gpuwhy.bench.link.measure_link`); nothing saved."""
    from .link import measure_link

    with hooks.bar("gpuwhy bench --link") as progress:
        return measure_link(req.device, req.spec_dirs, progress=progress)


def failure(result) -> GpuwhyError | None:
    """The error a mode's result carries for after its output is printed (compile-only), or None."""
    return getattr(result, "failure", None)
