"""`gpuwhy run --tracer cupti`: kernel regimes from a framework's cost model, without hardware counters.

Under the CUPTI tracer each call of a jitted JAX function carries XLA's count of the FLOPs and bytes
its executable does, the FLOPs counted from its jaxpr where XLA counts fewer (on a GPU XLA counts
cuBLAS matmuls as nothing; :mod:`gpuwhy.engine.jax_costs`), and the kernels launched inside it are linked
to it (:mod:`gpuwhy.importers.cupti.records`). Here each function's calls in the window are judged
as one workload: their FLOPs and bytes over the summed GPU time of their kernels, on this GPU's
roofline (:func:`gpuwhy.model.roofline.classify.classify`; the ceilings from the newest `gpuwhy bench`
profile of it where one has a DRAM bandwidth, else its spec sheet, as run's ``--kernels`` pass finds
them), with no launch-overhead term (the time is GPU time). Each of its kernels gets that regime and
share of roof (a kernel that several functions launched: the one it ran longest under). XLA's
bytes are its own model of the executable's memory traffic (each fusion's operands and results
once), not a counter: the regime is the executable's, not any one kernel's.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, Sequence

from ..errors import GpuwhyError
from ..importers.timeline.costs import ExecutableCalls
from ..model.roofline.classify import Ceilings, Workload, classify
from ..units import fmt_counted, fmt_pct, fmt_si

#: The ``--dtype`` of the roof a function is judged against, from the floating dtype holding most of
#: its arguments' bytes (cost_analysis does not say which units ran; fp32 where unknown).
PRECISION = {"float64": "fp64", "float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}
#: JAX matmul precisions that keep float32 matmuls in full fp32 (any other, and XLA's default, lets
#: them run as TF32 on tensor cores: JAX's ``jax_default_matmul_precision`` documentation).
FULL_FP32 = ("highest", "float32")


def precision_of(dtype: str | None, matmul: str | None) -> str:
    """The roof's precision for a function whose arguments are mostly ``dtype`` (``float32``, ...)
    under the matmul precision ``matmul`` (None: the default): ``tf32`` for float32 unless ``matmul``
    is one of :data:`FULL_FP32`; else :data:`PRECISION` (fp32 for an unknown dtype)."""
    p = PRECISION.get(dtype or "", "fp32")
    return "tf32" if p == "fp32" and (matmul or "").lower() not in FULL_FP32 else p
#: The level a regime is read at (the ceilings are DRAM's and the dense peak).
LEVEL = {"memory": "DRAM", "compute": "compute"}
#: Counts that put a function above this % of its roof are not judged: the roof is an upper bound (measured or
#: from the sheet), so a cost model's figures above it count work that did not run (the lowered module's FLOPs
#: before dead code is removed, say); 10% over allows for a measured roof a little under the true one.
IMPLAUSIBLE_ROOF_PCT = 110.0


@dataclass(frozen=True)
class CostRegime:
    """One function's calls judged as one: ``name`` (``jit(step)``), ``calls``, ``flops``/``bytes`` a
    call (None unknown), ``kernel_s`` (s, its kernels' GPU time in the window), ``regime``,
    ``roof_pct`` (percent of the attainable roof at its intensity), ``level`` (``DRAM`` or
    ``compute``); all None with ``why`` where it was not judged. ``line`` says it in words."""

    name: str
    calls: int
    flops: float | None
    bytes: float | None
    kernel_s: float
    regime: str | None
    roof_pct: float | None
    level: str | None
    line: str
    why: str | None = None


@dataclass(frozen=True)
class CostPass:
    """``kernels``: kernel full name -> the :class:`CostRegime` of the function it ran under;
    ``functions`` every costed function of the window; ``roofline`` what the ceilings were."""

    kernels: dict
    functions: tuple[CostRegime, ...]
    roofline: str
    notes: tuple[str, ...] = ()


def function_name(range_name: str) -> str:
    """``jit(step)`` for the range ``jax.jit step`` (a name without the prefix is kept)."""
    from ..importers.cupti.records import JIT_PREFIX

    return f"jit({range_name[len(JIT_PREFIX):]})" if range_name.startswith(JIT_PREFIX) else range_name


def gpu_ceilings(gpu_name: str | None, precision: str, spec_dirs: Sequence[str] = ()) -> tuple[Ceilings, str]:
    """``(ceilings, what they are)`` of the GPU named ``gpu_name`` (as the trace names it) for
    ``precision``: its newest bench profile's where it has a DRAM bandwidth, else its sheet's.

    Raises:
        UsageError: no name, no sheet matches it, or the sheet lacks the precision's peak.
    """
    from ..device.sheet import sheet_for
    from ..errors import UsageError
    from ..model.roofline.ceilings import ceilings_from_profile, ceilings_from_sheet
    from ..profiles import find_profile

    if not gpu_name:
        raise UsageError("the trace does not name its GPU, so no roofline is known")
    choice = sheet_for(nvml_name=gpu_name, fuzzy=True, spec_dirs=spec_dirs)
    if choice.sheet is None:
        raise UsageError(f"no spec sheet matches {gpu_name!r} ({choice.note})")
    sheet = choice.sheet
    prof = find_profile(sheet, need="dram_bandwidth_gbs", spec_dirs=spec_dirs)
    if prof is not None:
        c, _ = ceilings_from_profile(prof, sheet, precision)
        return c, f"the measured roofline of the {sheet.name} ({c.source})"
    return ceilings_from_sheet(sheet, precision), (f"the {sheet.name} spec sheet (no `gpuwhy bench --sweep` profile "
                                                   "of this GPU: run it to judge against the measured roofline)")


def flops_said(flops: float | None, e: ExecutableCalls) -> str:
    """``flops`` (a call) in words, with where they came from when it was the jaxpr (``FLOPs counted
    from the jaxpr``, ``... for some calls`` where others were the cost model's) and ``e``'s note."""
    said = fmt_si(flops, "FLOP") if flops else "no FLOPs counted"
    why = []
    if "jaxpr" in e.flops_from:
        why.append("FLOPs counted from the jaxpr" + (" for some calls" if len(e.flops_from) > 1 else ""))
    if e.flops_note:
        why.append(e.flops_note)
    return f"{said} ({'; '.join(why)})" if why else said


def judge_function(e: ExecutableCalls, ceilings: Ceilings) -> CostRegime:
    """``e``'s calls as one workload on ``ceilings`` (no launch-overhead term: the time is GPU time)."""
    name = function_name(e.name)
    per = (lambda v: None if v is None else v / e.calls) if e.calls else (lambda v: None)
    flops, nbytes = per(e.flops), per(e.bytes)
    said = (f"cost_analysis of {name}: {flops_said(flops, e)}, "
            f"{fmt_si(nbytes, 'B')} a call" if nbytes else f"cost_analysis of {name}")
    why = e.why
    if why is None and not e.kernel_s > 0:
        why = "its kernels took no measurable GPU time"
    if why is not None:
        return CostRegime(name, e.calls, flops, nbytes, e.kernel_s, None, None, None,
                          f"{said}: not judged ({why})", why)
    try:
        v = classify(Workload(e.flops, e.bytes, launches=max(1, e.launches), time_s=e.kernel_s, name=name),
                     dataclasses.replace(ceilings, launch_overhead_s=0.0))
    except ValueError as exc:
        return CostRegime(name, e.calls, flops, nbytes, e.kernel_s, None, None, None, f"{said}: not judged ({exc})",
                          str(exc))
    if v.sol_pct is not None and v.sol_pct > IMPLAUSIBLE_ROOF_PCT:
        who = "the jaxpr counts" if "jaxpr" in e.flops_from else "XLA counted"
        why = (f"its counts over its kernels' time are {fmt_pct(v.sol_pct, 0)} of this GPU's roof: {who} "
               "work the kernels did not do (or not all its kernels' time was seen)")
        return CostRegime(name, e.calls, flops, nbytes, e.kernel_s, None, None, None, f"{said}: not judged ({why})", why)
    level = LEVEL.get(v.regime)
    where = f"{v.regime}-bound{' at ' + level if level == 'DRAM' else ''} against the {ceilings.precision} roof"
    whose = "its kernel" if len(e.kernels) == 1 else f"the executable's {fmt_counted(len(e.kernels), 'kernel')}"
    line = (f"{said}; {whose} judged as one: {where}, "
            f"{fmt_pct(v.sol_pct, 0)} of roof ({fmt_counted(e.calls, 'call')}, {fmt_si(e.kernel_s, 's')} of kernels)")
    return CostRegime(name, e.calls, flops, nbytes, e.kernel_s, v.regime, v.sol_pct, level, line)


def judge_costs(functions: Sequence[ExecutableCalls], gpu_name: str | None, spec_dirs: Sequence[str] = (), *,
                ceilings: Callable[[str | None, str, Sequence[str]], tuple[Ceilings, str]] = gpu_ceilings
                ) -> CostPass | None:
    """Each function of ``functions`` judged on the roofline of the GPU ``gpu_name`` (``ceilings``,
    default :func:`gpu_ceilings`, by precision); None when there are none. Where no roofline is
    known, every function is left unjudged and a note says why."""
    if not functions:
        return None
    judged, notes, roofline = [], [], ""
    for e in functions:
        prec = precision_of(e.dtype, e.matmul)
        try:
            try:
                c, roofline = ceilings(gpu_name, prec, spec_dirs)
            except GpuwhyError:
                if prec != "tf32":
                    raise
                c, roofline = ceilings(gpu_name, "fp32", spec_dirs)  # a GPU without TF32 tensor cores
        except GpuwhyError as exc:
            judged.append(CostRegime(function_name(e.name), e.calls, None, None, e.kernel_s, None, None, None,
                                     f"cost_analysis of {function_name(e.name)}: not judged ({exc})", str(exc)))
            continue
        judged.append(judge_function(e, c))
    owner: dict[str, tuple[float, CostRegime]] = {}
    for e, r in zip(functions, judged):
        if r.regime is None:
            continue
        for k, s in e.kernels:
            if k not in owner or s > owner[k][0]:
                owner[k] = (s, r)
    notes.extend(r.line for r in judged)
    if owner:
        whose = ("XLA's cost_analysis and the jaxpr's FLOPs" if any("jaxpr" in e.flops_from for e in functions)
                 else "XLA's cost_analysis")
        notes.append(f"kernel regimes from {whose} (no hardware counters), judged against {roofline}")
    return CostPass({k: r for k, (_, r) in owner.items()}, tuple(judged), roofline, tuple(notes))


__all__ = ["CostPass", "CostRegime", "FULL_FP32", "IMPLAUSIBLE_ROOF_PCT", "LEVEL", "PRECISION", "flops_said",
           "function_name", "precision_of", "gpu_ceilings", "judge_costs", "judge_function"]
