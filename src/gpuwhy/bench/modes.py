"""The modes of `gpuwhy bench`: a registry, one entry per mode, like a list of test cases.

Each :class:`BenchMode` has a name, the option that picks it, the options it refuses
(and the error that says so), the options that mean nothing without it, a runner, the
``--json`` document of its result and the view that prints it. :func:`choose` checks a
:class:`BenchRequest` (the parsed options) against :data:`RULES`, then walks
:data:`MODES` in order and returns the first mode the request picks; ``cli/bench.py``
parses, chooses, runs and prints. Every ``--X applies to --Y``, ``run alone`` and
``exclude each other`` error comes from here.

Each mode also lists the options it uses (``uses``); any other option given is an error
(``--csv has no effect with --compile-only``), never silently ignored.

Views are named ``"module:function"`` under :mod:`gpuwhy.render` (render sits above
bench, so the CLI looks them up); each takes the runner's result. No typer here, and
nothing heavy is imported before a runner runs.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Callable, ContextManager, Sequence

from ..errors import CheckFailed, GpuwhyError, UsageError

#: ``progress(total=, advance=, description=)`` (all keywords optional).
Progress = Callable[..., None]
#: ``bar(label)``: a context manager yielding a :data:`Progress` callable, or None (no terminal).
ProgressBar = Callable[[str], ContextManager["Progress | None"]]

#: The command-line spelling of each :class:`BenchRequest` field.
FLAGS = {
    "sweep": "--sweep", "quick": "--quick", "compute": "--compute", "roofline": "--roofline",
    "precision": "--precision", "kernel": "--kernel", "dtype": "--dtype", "device": "--device",
    "gpu": "--gpu", "specs": "--specs", "csv": "--csv", "compile_only": "--compile-only", "arch": "--arch",
    "no_save": "--no-save", "latency": "--latency", "link": "--link", "l1_bypass": "--cg", "json_out": "--json",
    "caches": "--caches", "allreduce": "--allreduce", "max_size": "--max-size", "p2p": "--p2p",
}


@dataclass(frozen=True)
class BenchRequest:
    """The options of one ``gpuwhy bench`` call, as the CLI parsed them (None / False: not given)."""

    sweep: bool = False
    quick: bool = False
    compute: bool = False
    roofline: bool = False
    precision: Sequence[str] | None = None
    kernel: Sequence[str] | None = None
    dtype: str | None = None
    device: str | None = None
    gpu: str | None = None
    specs: Sequence[str] | None = None
    csv: str | None = None
    compile_only: bool = False
    arch: str | None = None
    no_save: bool = False
    latency: bool = False
    link: bool = False
    l1_bypass: bool = False
    json_out: bool = False
    caches: bool = False
    allreduce: bool = False
    max_size: str | None = None
    p2p: bool = False

    def given(self, field: str) -> bool:
        """Whether the option was given: ``--arch`` when it has any value, the others when truthy."""
        value = getattr(self, field)
        return value is not None if field == "arch" else bool(value)

    @property
    def spec_dirs(self) -> tuple[str, ...]:
        return tuple(self.specs or ())


@dataclass(frozen=True)
class Exclusive:
    """Two options that cannot be given together."""

    options: tuple[str, ...]
    error: str

    def check(self, req: BenchRequest) -> None:
        if all(req.given(o) for o in self.options):
            raise UsageError(self.error)


@dataclass(frozen=True)
class AppliesTo:
    """An option that means nothing without another: ``--cg applies to --latency``."""

    option: str
    needs: str
    why: str = ""

    def check(self, req: BenchRequest) -> None:
        if req.given(self.option) and not req.given(self.needs):
            raise UsageError(f"{FLAGS[self.option]} applies to {FLAGS[self.needs]}{self.why}")


@dataclass(frozen=True)
class BenchMode:
    """One mode of ``gpuwhy bench``.

    Attributes:
        name: ``p2p``, ``quick``, ``sweep``, ``compute``, ``roofline``, ``latency``, ``link``, ``caches``,
            ``allreduce``, ``compile-only``.
        flag: the :class:`BenchRequest` field that picks it; None for the default (picked when reached).
        refuses: fields it cannot run with, and ``refuse_error`` the error then.
        partners: other modes' flags it cannot run beside, and ``partner_error`` the error then.
        owns: :class:`AppliesTo` rules checked when :func:`choose` reaches this mode.
        uses: the fields it reads besides its own flag and ``--json``; any other given is refused.
        run: ``run(request, hooks)`` measures (or compiles) and returns the result.
        json_kind: the ``kind`` of its ``--json`` document; ``document(result)`` its body.
        view: the render function, ``"module:function"`` under :mod:`gpuwhy.render`.
    """

    name: str
    flag: str | None
    run: Callable[[BenchRequest, "RunHooks"], Any]
    json_kind: str
    document: Callable[[Any], Any]
    view: str
    refuses: tuple[str, ...] = ()
    refuse_error: str = ""
    partners: tuple[str, ...] = ()
    partner_error: str = ""
    owns: tuple[AppliesTo, ...] = ()
    uses: tuple[str, ...] = ()

    def picked_by(self, req: BenchRequest) -> bool:
        return self.flag is None or req.given(self.flag)

    def check(self, req: BenchRequest) -> None:
        """Raise UsageError when the request gives a partner's flag or an option this mode refuses."""
        if any(req.given(p) for p in self.partners):
            raise UsageError(self.partner_error)
        if any(req.given(o) for o in self.refuses):
            raise UsageError(self.refuse_error)
        unused = [f for f in FLAGS if req.given(f) and f not in (*self.uses, self.flag, "json_out")]
        if unused:
            mode = FLAGS[self.flag] if self.flag else "a --quick run"
            raise UsageError(f"{FLAGS[unused[0]]} has no effect with {mode}; drop it")


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
        return CheckFailed(f"{len(bad)} bundled kernel source(s) failed to compile for {self.arch}: "
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
        from ..profiles import record_compute

        record_compute(info.uuid, results, name=info.name, sheet=getattr(sheet, "name", None))
    return results


def _run_memory(req: BenchRequest, hooks: RunHooks) -> MemoryRun:
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
        from ..profiles import record_caches

        record_caches(caches.device.uuid, caches, name=caches.device.name, sheet=getattr(_sheet(req), "name", None))
    return caches


def _memory_document(run: MemoryRun) -> dict:
    doc = run.result.to_dict()
    if run.compute is not None:
        doc["compute"] = [r.to_dict() for r in run.compute]
    if run.caches is not None:
        doc["caches"] = run.caches.to_dict()
    return doc


def _run_caches(req: BenchRequest, hooks: RunHooks):
    return measure_caches(req, hooks)


def _run_compute(req: BenchRequest, hooks: RunHooks) -> list:
    return measure_compute(req, req.precision)


def _run_roofline(req: BenchRequest, hooks: RunHooks) -> RooflineRun:
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
        from ..profiles import record_roofline

        record_roofline(info.uuid, sweep, name=info.name, sheet=sweep.sheet_name)
    return RooflineRun(sweep, sheet)


def _run_compile(req: BenchRequest, hooks: RunHooks) -> CompileRun:
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


def _compile_document(run: CompileRun) -> dict:
    return {"arch": run.arch, "ok": all(r.ok for r in run.reports), "sources": [r.to_dict() for r in run.reports]}


def _run_latency(req: BenchRequest, hooks: RunHooks):
    from .latency import measure_latency

    with hooks.bar("gpuwhy bench --latency") as progress:
        result = measure_latency(req.device, req.spec_dirs, l1_bypass=req.l1_bypass, gpu=req.gpu, progress=progress)
    if not req.no_save and not req.l1_bypass:
        from ..profiles import record_latency

        record_latency(result.device.uuid, result, name=result.device.name)
    return result


def _run_allreduce(req: BenchRequest, hooks: RunHooks):
    """NCCL's all-reduce over the GPUs ``-i`` names (default: all), through torch.distributed
    (:func:`gpuwhy.bench.allreduce.measure_allreduce`)."""
    from .allreduce import measure_allreduce

    with hooks.bar("gpuwhy bench --allreduce") as progress:
        return measure_allreduce(req.device, req.dtype, req.max_size, gpu=req.gpu, spec_dirs=req.spec_dirs,
                                 save=not req.no_save, progress=progress)


def _run_p2p(req: BenchRequest, hooks: RunHooks):
    from .p2p import measure_p2p

    with hooks.bar("gpuwhy bench --p2p") as progress:
        return measure_p2p(req.device, progress=progress)


def _run_link(req: BenchRequest, hooks: RunHooks):
    from .link import measure_link

    with hooks.bar("gpuwhy bench --link") as progress:
        return measure_link(req.device, req.spec_dirs, progress=progress)


# ----------------------------------------------------------------- registry --

#: Checked first, in this order, whatever the mode.
RULES = (
    Exclusive(("sweep", "quick"), "--sweep and --quick exclude each other; pick one"),
    AppliesTo("arch", "compile_only", "; a measurement always compiles for the GPU's own architecture"),
    AppliesTo("l1_bypass", "latency"),
    AppliesTo("max_size", "allreduce"),
)

_HIERARCHY_REFUSES = ("sweep", "quick", "compute", "roofline", "kernel", "compile_only", "csv", "precision", "caches")
_HIERARCHY_ALONE = "--latency and --link run alone; drop --sweep/--quick/--compute/--roofline/--kernel/--csv/--compile-only/--caches"
_HIERARCHY_APART = "--latency and --link are separate runs; pick one"
_CACHES_ALONE = ("--caches runs the L2, shared-memory and L1 ceilings alone; drop --quick/--compute/--roofline/--kernel/"
                 "--csv/--compile-only/--latency/--link (--sweep already includes them)")

_MEASURE = ("device", "gpu", "specs")  # which GPU, which sheet
_MEMORY_USES = ("kernel", "dtype", "csv", "no_save", "quick", *_MEASURE)

#: The modes, in the order :func:`choose` tries them (the first one a request picks runs).
MODES: tuple[BenchMode, ...] = (
    BenchMode("allreduce", "allreduce", _run_allreduce, "bench-allreduce", lambda r: r.to_dict(), "allreduce_view:render_allreduce",
              refuses=("sweep", "quick", "compute", "roofline", "kernel", "compile_only", "csv", "precision", "caches", "latency",
                       "link", "p2p"),
              refuse_error="--allreduce runs alone; drop --sweep/--quick/--compute/--roofline/--kernel/--csv/--compile-only/"
                           "--caches/--latency/--link/--p2p",
              uses=("dtype", "max_size", "no_save", *_MEASURE)),
    BenchMode("p2p", "p2p", _run_p2p, "bench-p2p", lambda r: r.to_dict(), "p2p_view:render_p2p",
              refuses=("sweep", "quick", "compute", "roofline", "kernel", "compile_only", "csv", "precision", "caches",
                       "latency", "link", "allreduce"),
              refuse_error="--p2p runs alone (every pair of the GPUs -i names, all by default); drop --sweep/--quick/"
                           "--compute/--roofline/--kernel/--csv/--compile-only/--caches/--latency/--link/--allreduce",
              uses=("device",)),
    BenchMode("latency", "latency", _run_latency, "bench-latency", lambda r: r.to_dict(), "hierarchy_view:render_latency",
              refuses=_HIERARCHY_REFUSES, refuse_error=_HIERARCHY_ALONE, partners=("link",), partner_error=_HIERARCHY_APART,
              uses=("l1_bypass", *_MEASURE)),
    BenchMode("link", "link", _run_link, "bench-link", lambda r: r.to_dict(), "hierarchy_view:render_link",
              refuses=_HIERARCHY_REFUSES, refuse_error=_HIERARCHY_ALONE, partners=("latency",), partner_error=_HIERARCHY_APART,
              uses=("device", "specs")),
    BenchMode("caches", "caches", _run_caches, "bench-caches", lambda r: r.to_dict(), "hierarchy_view:render_caches",
              refuses=("sweep", "quick", "compute", "roofline", "kernel", "compile_only", "csv", "precision", "latency",
                       "link"), refuse_error=_CACHES_ALONE, uses=("no_save", *_MEASURE)),
    BenchMode("compile-only", "compile_only", _run_compile, "bench-compile", _compile_document, "bench_view:render_compile_run",
              uses=("arch", "device")),
    BenchMode("compute", "compute", _run_compute, "bench-compute", lambda rs: {"compute": [r.to_dict() for r in rs]},
              "compute_view:render_compute", refuses=("sweep", "quick", "kernel"),
              refuse_error="--compute runs the compute ceilings alone; drop --sweep/--quick/--kernel (--sweep already includes them)",
              owns=(AppliesTo("precision", "compute"),), uses=("precision", "no_save", *_MEASURE)),
    BenchMode("roofline", "roofline", _run_roofline, "bench-roofline", lambda r: r.sweep, "bench_view:render_roofline_run",
              refuses=("sweep", "quick", "compute", "kernel"),
              refuse_error="--roofline runs the mixed-intensity sweep alone; drop --sweep/--quick/--compute/--kernel",
              uses=("no_save", *_MEASURE)),
    BenchMode("sweep", "sweep", _run_memory, "bench", _memory_document, "bench_view:render_bench_run", uses=_MEMORY_USES),
    BenchMode("quick", None, _run_memory, "bench", _memory_document, "bench_view:render_bench_run", uses=_MEMORY_USES),
)


def mode(name: str) -> BenchMode:
    """The mode called ``name``.

    Raises:
        KeyError: no such mode.
    """
    for m in MODES:
        if m.name == name:
            return m
    raise KeyError(name)


def choose(req: BenchRequest) -> BenchMode:
    """The mode ``req`` runs: :data:`RULES` first, then the first of :data:`MODES` it picks.

    Raises:
        UsageError: options that exclude each other, an option without the mode it applies
            to, or one the picked mode refuses (the messages name the flags).
    """
    for rule in RULES:
        rule.check(req)
    for m in MODES:
        for rule in m.owns:
            rule.check(req)
        if m.picked_by(req):
            m.check(req)
            return m
    raise AssertionError("the last mode is the default")  # pragma: no cover


def failure(result) -> GpuwhyError | None:
    """The error a mode's result carries for after its output is printed (compile-only), or None."""
    return getattr(result, "failure", None)
