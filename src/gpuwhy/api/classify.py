"""The classify use case: a workload's FLOPs and bytes in, a verdict with remedies out.

This joins the spec sheets (or a measured profile) with the pure roofline model
and the remedies. The CLI, :func:`gpuwhy.classify` and :func:`gpuwhy.measure`
all call :func:`run_classify`, so the same profile gives the same ceilings.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Iterable

from ..device.sheet import sheet_for
from ..errors import UsageError
from ..model.roofline.ceilings import ceilings_from_profile, ceilings_from_sheet, sheet_precision
from ..model.roofline.level_verdict import judge_workload
from ..model.roofline.limits import refuse_impossible_workload
from ..model.roofline.remedies import Remedies, remedies_for
from ..model.roofline.classify import Verdict, Workload
from ..specs import Sheet
from ..importers.ncu.diagnosis import sheet_peaks
from ..verdict.workload import diagnose_workload
from .examples import example_workload, load_examples


@dataclass(frozen=True)
class Classification:
    """A verdict, its remedies and the sheet it was judged against."""

    verdict: Verdict
    remedies: Remedies
    sheet: Sheet
    dtype: str
    example: str | None = None
    spec_ridge_point: float | None = None
    notes: tuple[str, ...] = ()
    counts: Any = None  # gpuwhy.model.kernels.shapes.WorkCount: the shape the FLOPs and bytes were counted from
    shape_advice: Any = None  # gpuwhy.model.kernels.gemm_shape.GemmAdvice: alignment, tiles, waves of a GEMM
    #: How the memory hierarchy judged it (:class:`~gpuwhy.model.roofline.level_verdict.LevelJudgement`).
    hierarchy: object = None
    #: The named example's words (shown above the table; not part of ``to_dict()``).
    example_description: str = ""
    #: The verdict engine's budget of the measured time (:func:`gpuwhy.verdict.workload.diagnose_workload`):
    #: the regime's share, each remedy with its "at most"; None without a measured time.
    diagnosis: Any = None

    def to_dict(self) -> dict:
        """One JSON document: the verdict's fields at top level, plus ``remedies`` and ``sheet``.

        With measured ceilings, ``spec_ridge_point`` is the sheet's ridge for the
        same precision, beside the measured ``ridge_point``.
        """
        out = self.verdict.to_dict()
        out["dtype"] = self.dtype
        out["example"] = self.example
        out["spec_ridge_point"] = self.spec_ridge_point
        out["notes"] = list(self.notes)
        out["remedies"] = self.remedies.to_dict()
        out["counts"] = None if self.counts is None else self.counts.to_dict()
        out["shape_advice"] = None if self.shape_advice is None else self.shape_advice.to_dict()
        out["hierarchy"] = self.hierarchy.to_dict() if self.hierarchy is not None else None
        out["sheet"] = {"name": self.sheet.name, "path": self.sheet.path, "ridge_points": self.sheet.ridge_points()}
        out["diagnosis"] = None if self.diagnosis is None else self.diagnosis.to_dict()
        return out


def run_classify(
    workload: Workload,
    gpu: str | Sheet,
    dtype: str = "fp32",
    tensor_cores: bool = True,
    launch_overhead_s: float | None = None,
    spec_dirs: Iterable[str] = (),
    example: str | None = None,
    measured: bool = False,
    uuid: str | None = None,
    bytes_minimal: bool = False,
    working_set: float | None = None,
    launch: tuple[int, int] | None = None,
    bytes_per_thread: float | None = None,
) -> Classification:
    """Classify ``workload`` on the GPU named ``gpu`` (a name or a :class:`Sheet`).

    With ``measured``, the ceilings come from the newest bench profile of that
    GPU (``uuid`` when known, else the newest profile of a GPU of that sheet;
    :func:`gpuwhy.profiles.find_profile`), and the sheet's ridge point is kept
    beside the measured one. ``bytes_minimal``: the bytes are a shape's minimum, as
    an ``example``'s are (remedies that cut bytes by reuse are left out).

    ``working_set`` (bytes the workload touches) judges an L2-resident workload against
    the L2 roof; ``launch`` ``(grid, block)`` and ``bytes_per_thread`` (bytes each thread
    has in flight) sharpen the latency-bound diagnosis
    (:func:`gpuwhy.model.roofline.level_verdict.judge_workload`).

    Raises:
        UsageError: unknown/ambiguous GPU, unknown dtype, a precision the sheet
            lacks, non-positive workload figures, no profile with ``measured``, a
            working set larger than the GPU's memory, or a time faster than any roof of
            the GPU allows (:func:`~gpuwhy.model.roofline.limits.refuse_impossible_workload`).
        SpecError: a malformed sheet or remedies file.
    """
    if gpu is None or (isinstance(gpu, str) and not gpu.strip()):
        raise UsageError("classify needs a GPU: pass gpu='NAME' (see `gpuwhy specs list`)")
    sheet = sheet_for(gpu, spec_dirs=spec_dirs).sheet
    spec = ceilings_from_sheet(sheet, dtype, tensor_cores, launch_overhead_s)
    notes: list[str] = []
    prof = None
    if working_set is not None and not (working_set > 0):
        raise UsageError(f"the working set must be a positive number of bytes, got {working_set!r}")
    _refuse_working_set_above_memory(working_set, sheet)
    if measured:
        from dataclasses import replace

        from ..profiles import find_profile

        prof = find_profile(sheet, uuid, spec_dirs=spec_dirs)
        if prof is None:
            raise UsageError(f"no bench profile for the {sheet.name}; run `gpuwhy bench --sweep` on that GPU first, "
                             "or drop --measured")
        ceilings, notes = ceilings_from_profile(prof, sheet, dtype, tensor_cores)
        if launch_overhead_s is not None:
            ceilings = replace(ceilings, launch_overhead_s=spec.launch_overhead_s, launch_overhead_source=spec.launch_overhead_source)
    else:
        ceilings = spec
    refuse_impossible_workload(workload.flops, workload.bytes, workload.time_s, sheet, prof)
    try:
        threads, blocks = _sm_limits(sheet, spec_dirs)
        grid, block = launch if launch else (None, None)
        verdict, judged = judge_workload(workload, ceilings, sheet, prof, working_set=working_set, grid=grid, block=block,
                                         bytes_per_thread=bytes_per_thread, max_threads_per_sm=threads,
                                         max_blocks_per_sm=blocks)
    except ValueError as exc:
        raise UsageError(f"cannot classify: {exc}") from None
    rem = remedies_for(verdict, dtype, sheet.peak_tflops, bytes_minimal=bytes_minimal or example is not None,
                       level=judged.level)
    diag = diagnose_workload(verdict, sheet_peaks(sheet),
                             name=example or workload.name or "the workload", precision=dtype, level=judged.level)
    return Classification(verdict=verdict, remedies=rem, sheet=sheet, dtype=dtype, example=example,
                          spec_ridge_point=spec.ridge_point if measured else None, notes=tuple(notes), hierarchy=judged,
                          diagnosis=diag)


def _refuse_working_set_above_memory(working_set: float | None, sheet: Sheet) -> None:
    """Refuse a working set larger than the GPU's memory (``memory_size_gb``, GB = 1e9 B): no kernel
    on that GPU can touch it, so the figure is wrong (a unit, or the bytes of all launches).

    Raises:
        UsageError: it is larger (names both sizes).
    """
    from ..units import fmt_si

    memory = float(sheet.memory_size_gb) * 1e9
    if working_set is not None and working_set > memory:
        raise UsageError(f"the working set {fmt_si(working_set, 'B')} is larger than the {sheet.name}'s "
                         f"{fmt_si(memory, 'B')} of memory; give the distinct bytes one launch touches")


def _sm_limits(sheet: Sheet, spec_dirs: Iterable[str]) -> tuple[int | None, int | None]:
    """(resident threads, resident blocks) per SM of the sheet's architecture, or (None, None)."""
    from ..errors import GpuwhyError
    from ..model.kernels.occupancy import arch_limits, load_arch_limits

    try:
        lim = arch_limits(sheet.compute_capability, load_arch_limits(tuple(spec_dirs)))
    except GpuwhyError:
        return None, None
    return lim.max_threads_per_sm, lim.max_blocks_per_sm


def run_classify_shape(
    shape,
    gpu: str | Sheet,
    dtype: str = "fp32",
    tensor_cores: bool = True,
    launch_overhead_s: float | None = None,
    spec_dirs: Iterable[str] = (),
    time_s: float | None = None,
    launches: int = 1,
    tile: tuple[int, int] | None = None,
    measured: bool = False,
    working_set: float | None = None,
) -> Classification:
    """Count the FLOPs and minimum bytes of ``shape`` (a :class:`~gpuwhy.model.kernels.shapes.Gemm`,
    :class:`~gpuwhy.model.kernels.shapes.Attention` or :class:`~gpuwhy.model.kernels.shapes.Elementwise`) in
    ``dtype`` and classify them as :func:`run_classify` does; the result carries the
    counts and, for a GEMM, its alignment, tile and wave quantization on the sheet's SM
    count (``tile`` (TM, TN) overrides the typical tile of the architecture).

    Raises:
        UsageError: what :func:`run_classify` raises; a bad shape or tile.
    """
    from ..model.kernels.gemm_shape import gemm_advice
    from ..model.kernels.shapes import Gemm

    counts = shape.count(str(dtype).lower().strip())
    result = run_classify(counts.workload(launches, time_s), gpu, dtype, tensor_cores, launch_overhead_s, spec_dirs,
                          measured=measured, bytes_minimal=True, working_set=working_set)
    advice = None
    if isinstance(shape, Gemm):
        s = result.sheet
        advice = gemm_advice(shape, counts.dtype, s.sm_count, s.compute_capability, tile, tensor_cores)
    return replace(result, counts=counts, shape_advice=advice)


def classify_shape_options(shape: dict, flops=None, bytes_=None, gpu=None, dtype="fp32", time=None, launches=1,
                           tensor_cores=True, launch_overhead=None, spec_dirs=()) -> Classification:
    """:func:`gpuwhy.classify` with shape keywords (``gemm=``, ``attention=``, ``elementwise=``
    and theirs, ``tile=``): the shape parsed as the CLI parses it, then :func:`run_classify_shape`.

    Raises:
        UsageError: an unknown keyword, a shape with ``flops``/``bytes``, no shape, or a bad value.
    """
    from ..model.kernels.shapes import shape_from_options
    from ..units import parse_count, parse_shape, parse_time

    kw = dict(shape)
    tile = kw.pop("tile", None)
    known = {"gemm", "attention", "elementwise", "batch", "accumulate", "causal", "kv_heads", "q_len", "inputs", "outputs",
             "flops_per_element"}
    unknown = sorted(set(kw) - known)
    if unknown:
        raise UsageError(f"classify got an unknown keyword {unknown[0]!r}; shape keywords: {', '.join(sorted(known | {'tile'}))}")
    s = shape_from_options(kw.pop("gemm", None), kw.pop("attention", None), kw.pop("elementwise", None), **kw)
    if s is None:
        raise UsageError("classify needs gemm=, attention= or elementwise= with those keywords (or flops= and bytes=)")
    if flops is not None or bytes_ is not None:
        raise UsageError("a shape counts the FLOPs and bytes; drop flops= and bytes=")
    if tile is not None and not hasattr(s, "k"):
        raise UsageError("tile= goes with gemm=")
    t = None if tile is None else parse_shape(tile, ("TM", "TN"), "x", "tile", "128x256")
    return run_classify_shape(s, gpu, dtype, tensor_cores, None if launch_overhead is None else parse_time(launch_overhead, "launch overhead"),
                              spec_dirs, None if time is None else parse_time(time), parse_count(launches, "launches"), t)


def classify(req) -> Classification:
    """`gpuwhy classify`'s use case: the workload, example or shape of ``req`` (a
    :class:`~gpuwhy.api.classify_request.ClassifyRequest`) judged on its GPU's sheet (with no
    GPU named, this machine's GPU's: :func:`gpuwhy.device.probe.gpu_sheet`).

    Raises:
        UsageError: what :func:`run_classify` and :func:`run_classify_shape` raise; no GPU
            named and none to probe.
    """
    from ..device.probe import gpu_sheet
    from .sheets import noted

    gpu = req.gpu if req.gpu is not None else noted(gpu_sheet(None, req.spec_dirs)).sheet
    if req.shape is not None:
        result = run_classify_shape(req.shape.shape, gpu, req.dtype, tensor_cores=req.tensor_cores,
                                    launch_overhead_s=req.launch_overhead_s, spec_dirs=req.spec_dirs, time_s=req.time_s,
                                    launches=req.launches, tile=req.shape.tile, measured=req.measured,
                                    working_set=req.working_set)
    else:
        result = run_classify(req.workload, gpu, req.dtype, tensor_cores=req.tensor_cores,
                              launch_overhead_s=req.launch_overhead_s, spec_dirs=req.spec_dirs, example=req.example,
                              measured=req.measured, working_set=req.working_set)
    return replace(result, example_description=req.example_description)


def classify_values(flops=None, bytes_=None, gpu=None, dtype="fp32", time=None, launches=1, tensor_cores=True,
                    launch_overhead=None, spec_dirs=(), working_set=None, shape=None) -> Classification:
    """:func:`gpuwhy.classify`: numbers or text (``"2.5T"``, ``"850us"``) for the workload, or
    the ``shape`` keywords (:func:`classify_shape_options`); the GPU must be named.

    Raises:
        UsageError: bad numbers or shapes, no or an unknown GPU, an unknown precision, both
            a shape and flops/bytes, or an unknown keyword.
    """
    from ..units import parse_count, parse_quantity, parse_time

    if shape:
        return classify_shape_options(shape, flops, bytes_, gpu, dtype, time, launches, tensor_cores, launch_overhead,
                                      spec_dirs)
    wl = Workload(
        flops=parse_quantity(flops, "flops", unit="FLOP"),
        bytes=parse_quantity(bytes_, "bytes", unit="B"),
        launches=parse_count(launches, "launches"),
        time_s=None if time is None else parse_time(time),
    )
    lo = None if launch_overhead is None else parse_time(launch_overhead, "launch overhead")
    ws = None if working_set is None else parse_quantity(working_set, "working_set")
    return run_classify(wl, gpu, dtype, tensor_cores, lo, spec_dirs, working_set=ws)


__all__ = ["Classification", "classify", "classify_values", "classify_shape_options", "run_classify", "run_classify_shape", "example_workload", "load_examples", "sheet_precision"]
