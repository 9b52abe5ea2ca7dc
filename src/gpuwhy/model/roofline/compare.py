"""Which GPU is worth it for this workload? The roofline of one workload on several GPUs. Pure maths, no I/O.

For a workload of arithmetic intensity ``I`` (FLOP/byte), on each GPU::

    ridge      = peak / bandwidth                      (FLOP/byte; peak of --dtype, dense)
    attainable = min(peak, bandwidth x I)              (FLOP/s; Williams et al., CACM 52(4), 2009)
    speed-up   = attainable / attainable of the first GPU
    per dollar = attainable x 3600 / (USD per hour)    (FLOP per USD)
    per watt   = attainable / board power              (FLOP/s per W = FLOP per joule)

Left of every GPU's ridge (``I`` below each ridge) every GPU is memory-bound and
the ranking is the ranking of DRAM bandwidth; right of every ridge it is the
ranking of the dense peak; in between it mixes the two. With ``--flops F
--bytes B``, ``I = F / B`` and each GPU's time is ``max(F / peak, B / bandwidth)``.
For an LLM the throughput is decode tokens/s from :func:`gpuwhy.model.llm.estimate.scaled_estimate`
(tokens per USD, tokens per joule).

Launch overhead is left out (it is the same order on every GPU and matters only
for short kernels; ``gpuwhy classify`` counts it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from ...errors import UsageError
from .ceilings import sheet_precision
from ...units import fmt_num

#: Kinds of workload.
KINDS = ("intensity", "flops_bytes", "llm")


@dataclass(frozen=True)
class GpuRow:
    """One GPU's line of a comparison.

    Rates in SI: ``bandwidth`` B/s, ``peak_flops`` and ``attainable`` FLOP/s (for
    an LLM ``throughput`` is tokens/s), ``ridge_point`` FLOP/byte, ``time_s``
    seconds (``--flops/--bytes`` and LLM decode steps), ``usd_per_hour`` USD per
    hour for the whole group of ``num_gpus``, ``board_power_w`` W for the group,
    ``per_dollar`` throughput x 3600 / usd_per_hour (FLOP or tokens per USD),
    ``per_watt`` throughput / board power (FLOP or tokens per joule).
    ``missing`` says why the row has no figures (e.g. the sheet lacks the dtype).
    """

    gpu: str
    architecture: str
    precision: str | None
    bandwidth: float
    bandwidth_source: str
    peak_flops: float | None
    ridge_point: float | None
    intensity: float | None
    regime: str | None
    attainable: float | None
    throughput: float | None
    time_s: float | None = None
    speedup: float | None = None
    rank: int | None = None
    usd_per_hour: float | None = None
    per_dollar: float | None = None
    board_power_w: float | None = None
    per_watt: float | None = None
    memory_bytes: float | None = None
    fits: bool | None = None
    num_gpus: int = 1
    missing: str | None = None
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain data for ``--json`` (``*_gbs`` 1e9 B/s, ``*_tflops`` 1e12 FLOP/s)."""
        return {
            "gpu": self.gpu,
            "architecture": self.architecture,
            "precision": self.precision,
            "num_gpus": self.num_gpus,
            "memory_bandwidth_gbs": self.bandwidth / 1e9,
            "bandwidth_source": self.bandwidth_source,
            "peak_tflops": None if self.peak_flops is None else self.peak_flops / 1e12,
            "ridge_point": self.ridge_point,
            "arithmetic_intensity": self.intensity,
            "regime": self.regime,
            "attainable_tflops": None if self.attainable is None else self.attainable / 1e12,
            "throughput": self.throughput,
            "time_s": self.time_s,
            "speedup": self.speedup,
            "rank": self.rank,
            "usd_per_hour": self.usd_per_hour,
            "per_dollar": self.per_dollar,
            "board_power_w": self.board_power_w,
            "per_watt": self.per_watt,
            "memory_size_gb": None if self.memory_bytes is None else self.memory_bytes / 1e9,
            "fits_in_memory": self.fits,
            "missing": self.missing,
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class GpuComparison:
    """One workload on several GPUs.

    Attributes:
        kind: ``intensity``, ``flops_bytes`` or ``llm``.
        workload: a description of the workload.
        intensity: FLOP/byte (for an LLM, the decode step's FLOPs / bytes).
        flops, bytes: the workload's, when given (for an LLM: per decode step).
        dtype: the ``--dtype`` (for an LLM, the weight dtype).
        throughput_unit: ``FLOP/s`` or ``tokens/s``.
        rows: one per GPU, in the order given.
        baseline: the GPU the speed-ups are against (the first with figures).
        ranking: GPU names, best first (ties keep the given order).
        decided_by: ``bandwidth``, ``peak`` or ``mixed``.
        sentence: what decides the ranking at this intensity, in words.
        notes, warnings: sentences.
        llm: the per-GPU LLM estimates (``ScaledEstimate``), for an LLM workload.
    """

    kind: str
    workload: str
    intensity: float | None
    flops: float | None
    bytes: float | None
    dtype: str
    throughput_unit: str
    rows: tuple[GpuRow, ...]
    baseline: str | None
    ranking: tuple[str, ...]
    decided_by: str | None
    sentence: str
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    llm: tuple[Any, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """One JSON document."""
        out = {
            "workload_kind": self.kind,
            "workload": self.workload,
            "arithmetic_intensity": self.intensity,
            "flops": self.flops,
            "bytes": self.bytes,
            "dtype": self.dtype,
            "throughput_unit": self.throughput_unit,
            "per_dollar_unit": self.throughput_unit.split("/")[0] + " per USD",
            "per_watt_unit": self.throughput_unit + " per W",
            "baseline": self.baseline,
            "ranking": list(self.ranking),
            "decided_by": self.decided_by,
            "sentence": self.sentence,
            "gpus": [r.to_dict() for r in self.rows],
            "notes": list(self.notes),
            "warnings": list(self.warnings),
        }
        if self.llm:
            out["llm"] = [e.to_dict() if e is not None else None for e in self.llm]
        return out


# ---------------------------------------------------------------------------
# Costs
# ---------------------------------------------------------------------------


def parse_cost_list(text: str) -> list[tuple[str, float]]:
    """``"H100=2.49, H200 SXM=$3.50"`` -> ``[("H100", 2.49), ("H200 SXM", 3.5)]`` (USD per hour).

    Raises:
        UsageError: for an empty list, an item without ``=``, an empty name, or a
            price that is not a number above zero.
    """
    items = [p.strip() for p in str(text).split(",") if p.strip()]
    if not items:
        raise UsageError(f"--cost {text!r} lists no price; give GPU=USD_PER_HOUR,... e.g. --cost H100=2.49,H200=3.50")
    out = []
    for item in items:
        name, sep, price = item.rpartition("=")
        if not sep or not name.strip():
            raise UsageError(f"--cost item {item!r} is not GPU=USD_PER_HOUR; e.g. --cost H100=2.49,H200=3.50")
        p = price.strip().lstrip("$").strip()
        try:
            usd = float(p)
        except ValueError:
            raise UsageError(f"--cost price {price.strip()!r} for {name.strip()!r} is not a number of USD per hour, e.g. 2.49") from None
        if not (usd > 0 and math.isfinite(usd)):
            raise UsageError(f"--cost price for {name.strip()!r} must be a number of USD per hour above zero, got {price.strip()!r}")
        out.append((name.strip(), usd))
    return out


def assign_costs(pairs: Iterable[tuple[str, float]], names: Sequence[str], match: Callable[[str], Any]) -> dict[str, float]:
    """Map each priced name to one of the compared GPUs' sheet names.

    ``match`` resolves a user's name to a sheet (e.g. ``SpecLibrary.match``);
    ``names`` are the sheet names compared.

    Raises:
        UsageError: a price for a GPU that is not among those compared, or two
            prices for one GPU (and whatever ``match`` raises for an unknown name).
    """
    out: dict[str, float] = {}
    for name, usd in pairs:
        sheet = match(name)
        if sheet.name not in names:
            raise UsageError(
                f"--cost names {name!r} ({sheet.name}), which is not among the GPUs compared ({', '.join(names)}); add it to the list or drop its price"
            )
        if sheet.name in out:
            raise UsageError(f"--cost gives two prices for the {sheet.name}; give one")
        out[sheet.name] = usd
    return out


# ---------------------------------------------------------------------------
# Ranking
# ---------------------------------------------------------------------------


def _ranks(rows: Sequence[GpuRow]) -> dict[str, int]:
    """Competition ranks by throughput (equal throughputs, within 1e-9, share a rank)."""
    have = sorted((r for r in rows if r.throughput is not None), key=lambda r: -r.throughput)
    ranks: dict[str, int] = {}
    for i, r in enumerate(have):
        if i and math.isclose(r.throughput, have[i - 1].throughput, rel_tol=1e-9):
            ranks[r.gpu] = ranks[have[i - 1].gpu]
        else:
            ranks[r.gpu] = i + 1
    return ranks


def ranking_sentence(rows: Sequence[GpuRow], intensity: float, dtype: str, what: str = "") -> tuple[str | None, str]:
    """``(decided_by, sentence)``: what decides the ranking at ``intensity`` FLOP/byte.

    ``decided_by`` is ``bandwidth`` when ``intensity`` is below every GPU's ridge
    point, ``peak`` when at or above every ridge, ``mixed`` otherwise (None when
    no GPU has figures).
    """
    have = [r for r in rows if r.ridge_point is not None]
    if not have:
        return None, f"no GPU listed has a {dtype} peak"
    at = f"At {fmt_num(intensity, 4)} FLOP/byte{what}"
    mem = [r for r in have if intensity < r.ridge_point]
    comp = [r for r in have if intensity >= r.ridge_point]
    if not comp:
        low = min(have, key=lambda r: r.ridge_point)
        return "bandwidth", (
            f"{at} every GPU is left of its ridge point (the lowest is {fmt_num(low.ridge_point)} FLOP/byte, on the {low.gpu}): "
            "all are memory-bound, so the ranking follows DRAM bandwidth."
        )
    if not mem:
        high = max(have, key=lambda r: r.ridge_point)
        return "peak", (
            f"{at} every GPU is right of its ridge point (the highest is {fmt_num(high.ridge_point)} FLOP/byte, on the {high.gpu}): "
            f"all are compute-bound, so the ranking follows the dense {dtype} peak."
        )
    return "mixed", (
        f"{at} the GPUs split: memory-bound on {', '.join(r.gpu for r in mem)} (ridge above {fmt_num(intensity)}), "
        f"compute-bound on {', '.join(r.gpu for r in comp)} (ridge at or below): the ranking mixes bandwidth and peak, "
        f"each GPU at min(peak, bandwidth x {fmt_num(intensity)})."
    )


def _finish(rows: list[GpuRow], costs: Mapping[str, float], per_watt: bool) -> tuple[list[GpuRow], str | None, tuple[str, ...]]:
    """Speed-ups against the first GPU with figures, ranks, per-dollar and per-watt figures."""
    from dataclasses import replace

    base = next((r for r in rows if r.throughput), None)
    ranks = _ranks(rows)
    out = []
    for r in rows:
        usd = costs.get(r.gpu)
        usd_total = None if usd is None else usd * r.num_gpus
        watts = r.board_power_w if per_watt else None
        thr = r.throughput
        out.append(
            replace(
                r,
                speedup=None if thr is None or base is None else thr / base.throughput,
                rank=ranks.get(r.gpu),
                usd_per_hour=usd_total,
                per_dollar=None if thr is None or usd_total is None else thr * 3600.0 / usd_total,
                board_power_w=watts,
                per_watt=None if thr is None or watts is None else thr / watts,
            )
        )
    ranking = tuple(sorted((r for r in out if r.rank is not None), key=lambda r: r.rank))
    return out, (base.gpu if base else None), tuple(r.gpu for r in ranking)


def _missing(sheet, dtype: str, exc: UsageError) -> str:
    have = ", ".join(sheet.peak_tflops)
    return f"no {dtype} peak on its sheet (it has {have})"


def compare_roofline(
    sheets: Sequence[Any],
    dtype: str = "fp32",
    intensity: float | None = None,
    flops: float | None = None,
    bytes_: float | None = None,
    costs: Mapping[str, float] | None = None,
    per_watt: bool = False,
    bandwidths: Mapping[str, tuple[float, str]] | None = None,
    tensor_cores: bool = True,
) -> GpuComparison:
    """Compare ``sheets`` (:class:`gpuwhy.specs.Sheet`, the first is the baseline) for
    a workload of ``intensity`` FLOP/byte, or of ``flops`` FLOPs and ``bytes_`` bytes.

    ``costs`` maps a sheet name to USD per hour; ``per_watt`` adds throughput per
    W of board power; ``bandwidths`` maps a sheet name to ``(B/s, source)`` to
    use instead of the sheet's (measured profiles). A GPU whose sheet lacks the
    dtype gets a row saying so, without figures.

    Raises:
        UsageError: no GPU, an unknown dtype, both or neither of intensity and
            flops/bytes, a non-positive figure, or no GPU with the dtype.
    """
    if not sheets:
        raise UsageError("compare needs at least one GPU; e.g. gpuwhy compare H100 H200 --intensity 0.33")
    if (intensity is None) == (flops is None and bytes_ is None):
        raise UsageError("give either --intensity I or --flops F --bytes B")
    if intensity is None:
        if flops is None or bytes_ is None:
            raise UsageError("--flops and --bytes go together; give both, or --intensity I")
        if not (flops > 0 and bytes_ > 0):
            raise UsageError("--flops and --bytes must be greater than zero")
        intensity = flops / bytes_
        kind, label = "flops_bytes", f"{fmt_num(flops, 4)} FLOP over {fmt_num(bytes_, 4)} bytes ({fmt_num(intensity)} FLOP/byte)"
    else:
        if not (intensity > 0 and math.isfinite(intensity)):
            raise UsageError(f"--intensity must be a number of FLOP/byte greater than zero, got {intensity!r}")
        kind, label = "intensity", f"{fmt_num(intensity, 4)} FLOP/byte"
    d = dtype.lower().strip()
    costs = dict(costs or {})
    bandwidths = dict(bandwidths or {})
    rows: list[GpuRow] = []
    for s in sheets:
        bw, bw_src = bandwidths.get(s.name, (s.bandwidth_bytes_per_s, "spec sheet"))
        common = dict(gpu=s.name, architecture=s.architecture, bandwidth=bw, bandwidth_source=bw_src,
                      board_power_w=s.board_power_w, memory_bytes=s.memory_size_gb * 1e9)
        try:
            prec = sheet_precision(s, d, tensor_cores)
        except UsageError as exc:
            if "unknown dtype" in str(exc) or "only on tensor cores" in str(exc):
                raise
            rows.append(GpuRow(precision=None, peak_flops=None, ridge_point=None, intensity=intensity, regime=None,
                               attainable=None, throughput=None, missing=_missing(s, d, exc), **common))
            continue
        peak = s.peak_flops(prec)
        ridge = peak / bw
        att = min(peak, bw * intensity)
        t = None if flops is None else max(flops / peak, bytes_ / bw)
        rows.append(GpuRow(precision=prec, peak_flops=peak, ridge_point=ridge, intensity=intensity,
                           regime="memory" if intensity < ridge else "compute", attainable=att, throughput=att,
                           time_s=t, **common))
    if all(r.throughput is None for r in rows):
        raise UsageError(f"none of the GPUs compared has a {d} peak on its sheet; pick another --dtype")
    rows, base, ranking = _finish(rows, costs, per_watt)
    decided, sentence = ranking_sentence(rows, intensity, d)
    notes = []
    if base and base != rows[0].gpu:
        notes.append(f"the {rows[0].gpu} has no {d} peak: speed-ups are against the {base}")
    if any(r.bandwidth_source != "spec sheet" for r in rows):
        notes.append("bandwidth from bench profiles where marked; peaks are the sheets' (bench measures no peak here)")
    return GpuComparison(kind, label, intensity, flops, bytes_, d, "FLOP/s", tuple(rows), base, ranking, decided, sentence, tuple(notes))


def compare_llm(
    sheets: Sequence[Any],
    params: float,
    weight_dtype: str,
    scaling: Any = None,
    costs: Mapping[str, float] | None = None,
    per_watt: bool = False,
    bandwidths: Mapping[str, tuple[float, str]] | None = None,
    label: str | None = None,
    **llm_kwargs: Any,
) -> GpuComparison:
    """Compare ``sheets`` for LLM decoding: per GPU (or group of
    ``scaling.num_gpus``) the decode tokens/s of
    :func:`gpuwhy.model.llm.estimate.scaled_estimate`, with the step's FLOP/byte
    against each GPU's ridge for the weight dtype's peak.

    ``llm_kwargs`` go to ``scaled_estimate`` (batch, shape, kv_dtype, context,
    prompt_len, max_context, model). ``costs``/``per_watt``/``bandwidths`` as
    in :func:`compare_roofline`; cost and power count every GPU of the group.

    Raises:
        UsageError: what scaled_estimate raises; no GPU.
    """
    from dataclasses import replace

    from ..llm.estimate import scaled_estimate
    from ..llm.dtypes import normalize_dtype
    from ..llm.roofline import gpu_from_sheet
    from ..llm.scaling import Scaling

    if not sheets:
        raise UsageError("compare needs at least one GPU; e.g. gpuwhy compare H100 H200 --llm --params 8B")
    scaling = scaling or Scaling()
    wd = normalize_dtype(weight_dtype)
    costs = dict(costs or {})
    bandwidths = dict(bandwidths or {})
    rows: list[GpuRow] = []
    ests = []
    warnings: list[str] = []
    n = scaling.num_gpus
    for s in sheets:
        bw, bw_src = bandwidths.get(s.name, (s.bandwidth_bytes_per_s, "spec sheet"))
        try:
            g = gpu_from_sheet(s, wd)
        except UsageError:
            rows.append(GpuRow(gpu=s.name, architecture=s.architecture, precision=None, bandwidth=bw, bandwidth_source=bw_src,
                               peak_flops=None, ridge_point=None, intensity=None, regime=None, attainable=None, throughput=None,
                               board_power_w=s.board_power_w * n, num_gpus=n, missing=f"no peak usable for {wd} weights on its sheet"))
            ests.append(None)
            continue
        if bw != g.bandwidth:
            g = replace(g, bandwidth=bw)
        e = scaled_estimate(params, wd, g, scaling, **llm_kwargs)
        ests.append(e)
        d = e.estimate.decode
        ridge = g.peak_flops / g.bandwidth
        inten = d.flops / d.bytes
        rows.append(
            GpuRow(
                gpu=s.name,
                architecture=s.architecture,
                precision=g.precision,
                bandwidth=g.bandwidth,
                bandwidth_source=bw_src,
                peak_flops=g.peak_flops,
                ridge_point=ridge,
                intensity=inten,
                regime=d.regime,
                attainable=min(g.peak_flops, g.bandwidth * inten),
                throughput=d.tokens_per_s_total,
                time_s=d.step_time_s,
                board_power_w=s.board_power_w * n,
                memory_bytes=e.estimate.gpu.memory_bytes,
                fits=_fits(e.estimate),
                num_gpus=n,
                notes=tuple(e.estimate.warnings),
            )
        )
    if all(r.throughput is None for r in rows):
        raise UsageError(f"none of the GPUs compared has a peak usable for {wd} weights")
    rows, base, ranking = _finish(rows, costs, per_watt)
    first = next(e for e in ests if e is not None).estimate
    inten = first.decode.flops / first.decode.bytes
    batch = first.decode.batch
    decided, sentence = ranking_sentence(rows, inten, wd, what=f" (the decode step at batch {batch})")
    if decided == "bandwidth":
        sentence += " Tokens/s scale with bandwidth."
    notes = []
    if n > 1:
        notes.append(f"each row is {n} GPUs (tensor parallel), with the all-reduce allowance; cost and power count all {n}")
    if any(r.fits is False for r in rows):
        warnings.append("on the GPUs marked 'no' the weights and KV cache do not fit; their figures assume they did")
    who = label or (first.model or f"{fmt_num(params, 4)} parameters")
    return GpuComparison(
        "llm",
        f"{who}, {wd} weights, decode at batch {batch}",
        inten,
        first.decode.flops,
        first.decode.bytes,
        wd,
        "tokens/s",
        tuple(rows),
        base,
        ranking,
        decided,
        sentence,
        tuple(notes),
        tuple(warnings),
        tuple(ests),
    )


def _fits(e) -> bool | None:
    """Whether the weights (and the decode step's KV cache) fit in the group's memory."""
    if e.gpu.memory_bytes is None:
        return None
    if e.weight_bytes > e.gpu.memory_bytes:
        return False
    if e.decode.fits_in_memory is not None:
        return e.decode.fits_in_memory
    return True


__all__ = ["GpuComparison", "GpuRow", "assign_costs", "compare_llm", "compare_roofline", "parse_cost_list", "ranking_sentence"]
