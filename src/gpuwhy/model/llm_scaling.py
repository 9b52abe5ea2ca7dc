"""Extensions of the LLM roofline (:mod:`gpuwhy.model.llm`): mixture-of-experts,
several GPUs, and quantized weights with their scales. Pure maths, no I/O.

It reuses llm.py's formulas and dataclasses and leaves llm.py's behaviour as it
is: :func:`scaled_estimate` returns the same :class:`~gpuwhy.model.llm.LlmEstimate`
(figures for the whole group of GPUs) plus a :class:`ScalingReport` that spells
out the new arithmetic.

**Mixture of experts** (``active_params``): all ``params`` weights must be in
memory, but each token goes through only the ``active_params`` of its experts::

    weights to fit        = params x bytes_per_weight
    weights read per step = active_params x bytes_per_weight     (batch 1; see below)
    FLOPs per token       = 2 x active_params

At batch B the tokens may be routed to different experts, so a step reads at
least the active weights (all tokens on the same experts) and at most
``min(params, B x active_params)`` weights. The headline (the ceiling) uses the
lower bound; :attr:`ScalingReport.tokens_per_s_total_low` gives the other end.

**Tensor parallelism** (``num_gpus`` = N): every weight matrix is split N ways,
so each GPU holds and reads 1/N of the weights; bandwidth, peak and memory add
up N times. The KV cache splits over ``min(N, kv_heads)`` (with more GPUs than
KV heads the heads are replicated). Megatron-LM style tensor parallelism needs
two all-reduces of the activations per transformer block (one after attention,
one after the MLP: Shoeybi et al., "Megatron-LM", arXiv:1909.08053, section 3),
so each step gets an allowance of::

    t_allreduce = 2 x layers x allreduce_latency          (N > 1, shape known)

A decode step's messages are small (batch x hidden x 2 bytes), so the latency
term dominates; ``allreduce_latency`` defaults to :data:`DEFAULT_ALLREDUCE_LATENCY_S`.

**Quantized weights with scales**: a format of ``b`` bits with one
``scale_bits``-bit scale per group of ``g`` weights stores
``b + scale_bits / g`` bits per weight: 4-bit with a 16-bit scale per group of
32 is 4 + 16/32 = 4.5 bits = 0.5625 bytes. ``bytes_per_param`` overrides it.

Units: bytes, FLOP, seconds, B/s, FLOP/s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

from ..errors import UsageError
from . import llm as L

#: Latency of one all-reduce of a decode step's small activations, in seconds:
#: 10 us, a round figure assumed for an NCCL all-reduce of a few KiB over NVLink
#: (not a measurement). Measure yours with nccl-tests' all_reduce_perf
#: (https://github.com/NVIDIA/nccl-tests) and pass it as ``--allreduce-latency``.
DEFAULT_ALLREDUCE_LATENCY_S = 10e-6
DEFAULT_ALLREDUCE_SOURCE = "assumed, not measured (measure with nccl-tests all_reduce_perf: https://github.com/NVIDIA/nccl-tests)"

#: All-reduces per transformer block under tensor parallelism (Megatron-LM,
#: arXiv:1909.08053, section 3: one after self-attention, one after the MLP).
ALLREDUCES_PER_LAYER = 2

#: Scale width assumed when only a group size is given: a 16-bit (fp16) scale
#: per group, as in GGUF's Q4_0 or GPTQ/AWQ checkpoints.
DEFAULT_SCALE_BITS = 16.0

_QUANTIZED = ("int4", "fp4", "int8", "fp8")


def bits_per_weight(weight_dtype: str, group_size: int | None = None, scale_bits: float = DEFAULT_SCALE_BITS) -> float:
    """Stored bits per weight: the element's bits plus ``scale_bits / group_size``.

    E.g. int4 with a 16-bit scale per 32 weights: 4 + 16/32 = 4.5; fp4 with an
    8-bit scale per 32 (OCP MXFP4): 4 + 8/32 = 4.25; fp4 with an 8-bit scale per
    16 (NVFP4): 4 + 8/16 = 4.5.

    Raises:
        UsageError: for an unknown dtype, a group size below 1, a scale width not
            above zero, or a group size given for fp32/fp16/bf16 weights.
    """
    d = L.normalize_dtype(weight_dtype)
    bits = L.BYTES_PER_ELEMENT[d] * 8
    if group_size is None:
        return bits
    if d not in _QUANTIZED:
        raise UsageError(f"--quant-group applies to quantized weights ({', '.join(_QUANTIZED)}), not {d}; drop it or pick a quantized --weight-dtype")
    if isinstance(group_size, bool) or not isinstance(group_size, int) or group_size < 1:
        raise UsageError(f"--quant-group must be a whole number of weights per scale, at least 1, got {group_size!r}")
    if not (scale_bits > 0 and math.isfinite(scale_bits)):
        raise UsageError(f"--scale-bits must be greater than zero, got {scale_bits!r}")
    return bits + scale_bits / group_size


@dataclass(frozen=True)
class Scaling:
    """The new inputs of the LLM model.

    Attributes:
        active_params: parameters each token goes through (mixture of experts);
            None: all of them (a dense model).
        num_gpus: GPUs the model is split over (tensor parallel), >= 1.
        bytes_per_param: bytes per stored weight, overriding the dtype's width
            and any group scales (e.g. 0.5625); None: from the dtype.
        quant_group: weights per scale of a quantized format (e.g. 32); None: scales left out.
        scale_bits: bits per scale (default 16).
        allreduce_latency_s: seconds per all-reduce (default 10 us, assumed).
        allreduce_source: where ``allreduce_latency_s`` came from.
    """

    active_params: float | None = None
    num_gpus: int = 1
    bytes_per_param: float | None = None
    quant_group: int | None = None
    scale_bits: float = DEFAULT_SCALE_BITS
    allreduce_latency_s: float = DEFAULT_ALLREDUCE_LATENCY_S
    allreduce_source: str = DEFAULT_ALLREDUCE_SOURCE

    def __post_init__(self) -> None:
        if isinstance(self.num_gpus, bool) or not isinstance(self.num_gpus, int) or self.num_gpus < 1:
            raise UsageError(f"--num-gpus must be a whole number of GPUs, at least 1, got {self.num_gpus!r}")
        if self.active_params is not None and not (self.active_params > 0 and math.isfinite(self.active_params)):
            raise UsageError(f"--active-params must be greater than zero, got {self.active_params!r}")
        if self.bytes_per_param is not None and not (0 < self.bytes_per_param <= 8 and math.isfinite(self.bytes_per_param)):
            raise UsageError(f"--bytes-per-param must be above 0 and at most 8 (bytes per weight, e.g. 0.5625), got {self.bytes_per_param!r}")
        if not (self.allreduce_latency_s >= 0 and math.isfinite(self.allreduce_latency_s)):
            raise UsageError(f"--allreduce-latency must be zero or more seconds, got {self.allreduce_latency_s!r}")

    @property
    def is_default(self) -> bool:
        """True when nothing differs from llm.py's model (a dense model on one GPU, no scales)."""
        return self.active_params is None and self.num_gpus == 1 and self.bytes_per_param is None and self.quant_group is None


def effective_bytes_per_weight(weight_dtype: str, s: Scaling) -> tuple[float, str]:
    """``(bytes per weight, the arithmetic in words)`` for ``weight_dtype`` under ``s``.

    Raises:
        UsageError: see :func:`bits_per_weight`.
    """
    d = L.normalize_dtype(weight_dtype)
    if s.bytes_per_param is not None:
        if s.quant_group is not None:
            raise UsageError("--bytes-per-param sets the bytes per weight; drop --quant-group/--scale-bits or drop --bytes-per-param")
        return s.bytes_per_param, f"{s.bytes_per_param:g} B per weight (--bytes-per-param)"
    bits = bits_per_weight(d, s.quant_group, s.scale_bits)
    elem = L.BYTES_PER_ELEMENT[d] * 8
    if s.quant_group is None:
        return bits / 8, f"{elem:g}-bit {d} = {bits / 8:g} B per weight" + (" (scales left out; --quant-group G counts them)" if d in _QUANTIZED else "")
    return bits / 8, f"{elem:g}-bit {d} + a {s.scale_bits:g}-bit scale per {s.quant_group} weights = {elem:g} + {s.scale_bits:g}/{s.quant_group} = {bits:g} bits = {bits / 8:g} B per weight"


@dataclass(frozen=True)
class ScalingReport:
    """The arithmetic :func:`scaled_estimate` adds, for the reader to check.

    Bytes per step and per GPU as named; times in seconds; rates in tokens/s.
    ``*_low`` figures are the other end of the mixture-of-experts range (every
    token of the batch on different experts); equal to the headline for a
    dense model or batch 1. ``lines`` is the arithmetic in words.
    """

    params: float
    active_params: float
    num_gpus: int
    bytes_per_weight: float
    bytes_per_weight_text: str
    weight_bytes_total: float
    weight_bytes_per_gpu: float
    weight_read_bytes_per_step: float
    weight_read_bytes_per_step_max: float
    kv_split: int
    gpu_name: str
    bandwidth_per_gpu: float
    peak_flops_per_gpu: float
    memory_bytes_per_gpu: float | None
    allreduces_per_step: int
    allreduce_latency_s: float
    allreduce_source: str
    allreduce_time_s: float
    step_time_s: float
    step_time_max_s: float
    tokens_per_s_total: float
    tokens_per_s_total_low: float
    batch_ridge_spread: float | None
    lines: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain data for ``--json``."""
        return {
            "params": self.params,
            "active_params": self.active_params,
            "num_gpus": self.num_gpus,
            "bytes_per_weight": self.bytes_per_weight,
            "bytes_per_weight_text": self.bytes_per_weight_text,
            "weight_bytes_total": self.weight_bytes_total,
            "weight_bytes_per_gpu": self.weight_bytes_per_gpu,
            "weight_read_bytes_per_step": self.weight_read_bytes_per_step,
            "weight_read_bytes_per_step_max": self.weight_read_bytes_per_step_max,
            "kv_split": self.kv_split,
            "gpu": self.gpu_name,
            "memory_bandwidth_gbs_per_gpu": self.bandwidth_per_gpu / 1e9,
            "peak_tflops_per_gpu": self.peak_flops_per_gpu / 1e12,
            "memory_size_gb_per_gpu": None if self.memory_bytes_per_gpu is None else self.memory_bytes_per_gpu / 1e9,
            "allreduces_per_step": self.allreduces_per_step,
            "allreduce_latency_s": self.allreduce_latency_s,
            "allreduce_source": self.allreduce_source,
            "allreduce_time_s": self.allreduce_time_s,
            "step_time_s": self.step_time_s,
            "step_time_max_s": self.step_time_max_s,
            "tokens_per_s_total": self.tokens_per_s_total,
            "tokens_per_s_total_low": self.tokens_per_s_total_low,
            "batch_ridge_spread": self.batch_ridge_spread,
            "lines": list(self.lines),
        }


@dataclass(frozen=True)
class ScaledEstimate:
    """:class:`~gpuwhy.model.llm.LlmEstimate` for the whole group of GPUs, plus the :class:`ScalingReport`."""

    estimate: L.LlmEstimate
    scaling: ScalingReport

    def to_dict(self) -> dict[str, Any]:
        """llm.py's JSON document with a ``scaling`` key added."""
        out = self.estimate.to_dict()
        out["scaling"] = self.scaling.to_dict()
        return out


def group_gpu(gpu: L.LlmGpu, num_gpus: int) -> L.LlmGpu:
    """The figures of ``num_gpus`` copies of ``gpu`` working as one: bandwidth,
    peak and memory times ``num_gpus``; named ``"4 x H100 SXM"``."""
    if num_gpus == 1:
        return gpu
    return L.LlmGpu(
        name=f"{num_gpus} x {gpu.name}",
        bandwidth=gpu.bandwidth * num_gpus,
        peak_flops=gpu.peak_flops * num_gpus,
        precision=gpu.precision,
        memory_bytes=None if gpu.memory_bytes is None else gpu.memory_bytes * num_gpus,
        source=gpu.source,
        precision_note=gpu.precision_note,
    )


def kv_split(num_gpus: int, shape: L.AttentionShape | None) -> int:
    """Ways the KV cache splits over ``num_gpus`` tensor-parallel GPUs: min(N, kv_heads)."""
    return num_gpus if shape is None else min(num_gpus, shape.kv_heads)


def allreduce_time(num_gpus: int, shape: L.AttentionShape | None, latency_s: float) -> tuple[int, float]:
    """``(all-reduces per step, seconds)``: 2 x layers x latency for N > 1 with a shape, else (0, 0)."""
    if num_gpus <= 1 or shape is None:
        return 0, 0.0
    n = ALLREDUCES_PER_LAYER * shape.layers
    return n, n * latency_s


def _decode(
    params: float,
    active: float,
    bpw: float,
    grp: L.LlmGpu,
    wd: str,
    batch: int,
    shape: L.AttentionShape | None,
    kvd: str,
    context: int,
    seq_len: int | None,
    kv_factor: float,
    comm_s: float,
    spread: bool = False,
) -> L.DecodeStep:
    """One decode step on the group (:func:`gpuwhy.model.llm.decode_step`); ``spread``
    takes the upper bound of the weights read, min(params, batch x active)."""
    return L.decode_step(
        params, wd, grp, batch, shape, kvd, context, seq_len,
        bytes_per_weight=bpw,
        active_params=active,
        read_params=min(params, batch * active) if spread else active,
        kv_copies=kv_factor,
        overhead_s=comm_s,
    )


def _num(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


def _fmt_scaled(x: float, scales: tuple[tuple[float, str], ...], sep: str = " ") -> str:
    """``x`` in the first of ``scales`` (factor, unit), largest first, it reaches
    (from 0.9995 x the factor, so that 999.96 MB reads 1 GB), else in the last; 4 digits."""
    for f, u in scales:
        if x >= f * 0.9995:
            break
    return f"{x / f:.4g}{sep}{u}"


def _fmt_b(x: float) -> str:
    return _fmt_scaled(x, ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"), (1.0, "B")))


def _fmt_t(s: float) -> str:
    return _fmt_scaled(s, ((1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns")))


def _fmt_flop(x: float) -> str:
    return _fmt_scaled(x, ((1e15, "PFLOP"), (1e12, "TFLOP"), (1e9, "GFLOP"), (1e6, "MFLOP"), (1.0, "FLOP")))


def _fmt_n(x: float) -> str:
    return _fmt_scaled(x, ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1.0, "")), sep="")


def scaled_estimate(
    params: float,
    weight_dtype: str,
    gpu: L.LlmGpu,
    scaling: Scaling = Scaling(),
    batch: int = 1,
    shape: L.AttentionShape | None = None,
    kv_dtype: str | None = None,
    context: int | None = None,
    prompt_len: int | None = None,
    max_context: int | None = None,
    model: str | None = None,
    sweep: bool | Sequence[int] = False,
    notes: Sequence[str] = (),
) -> ScaledEstimate:
    """:func:`gpuwhy.model.llm.estimate` with mixture-of-experts, tensor parallelism
    over ``scaling.num_gpus`` copies of ``gpu`` (one GPU's figures) and quantized
    sizes with scales (see the module docstring). With a default ``scaling`` the
    figures equal llm.estimate's.

    Raises:
        UsageError: what llm.estimate raises; active parameters above the
            parameter count; conflicting bytes-per-weight options.
    """
    wd = L.normalize_dtype(weight_dtype)
    kvd = L.normalize_dtype(kv_dtype, "--kv-dtype") if kv_dtype else L.default_kv_dtype(wd)
    L.check_request(batch, prompt_len, context, params=params)
    s = scaling
    active = params if s.active_params is None else s.active_params
    if active > params * (1 + 1e-9):
        raise UsageError(f"--active-params {active:.4g} is more than the {params:.4g} parameters; give the parameters each token uses (at most --params)")
    n = s.num_gpus
    bpw, bpw_text = effective_bytes_per_weight(wd, s)
    ctx, fit_len, notes = L.decode_context(gpu, shape, context, prompt_len, max_context, notes)
    warnings: list[str] = []
    grp = group_gpu(gpu, n)
    split = kv_split(n, shape)
    kv_factor = n / split
    n_ar, comm = allreduce_time(n, shape, s.allreduce_latency_s)
    if n > 1 and shape is None:
        warnings.append("--num-gpus without a model shape: the all-reduce allowance (2 per layer) is left out; give --model NAME or --layers/--kv-heads/--head-dim")
    if n > 1 and shape is not None and n > shape.kv_heads:
        notes.append(f"{n} GPUs but {shape.kv_heads} KV heads: each KV head is kept on {n // split if n % split == 0 else f'{n / split:.3g}'} GPUs, so the KV cache splits only {split} ways")

    step = _decode(params, active, bpw, grp, wd, batch, shape, kvd, ctx, fit_len, kv_factor, comm)
    step_hi = _decode(params, active, bpw, grp, wd, batch, shape, kvd, ctx, fit_len, kv_factor, comm, spread=True)
    weight_fit = params * bpw
    ridge = L.batch_ridge(grp.peak_flops, bpw, grp.bandwidth)
    spread_ridge = ridge * params / active if active < params else None
    ridge_kv = None
    if shape is not None and ctx > 0:
        ridge_kv = L.batch_ridge_with_kv(active, bpw, grp, shape, kvd, ctx, kv_copies=kv_factor)
    kv, max_b, fit_warning = L.kv_fit(shape, kvd, fit_len, batch, grp, weight_fit, kv_copies=kv_factor, remedy="use more GPUs")
    if fit_warning:
        warnings.append(fit_warning)
    pf = None
    if prompt_len:
        pf = L.prefill(params, wd, grp, prompt_len, batch, shape, kvd,
                       bytes_per_weight=bpw, active_params=active, kv_copies=kv_factor, overhead_s=comm)
        if active < params:
            notes.append("prefill reads all the weights once: a long prompt's tokens reach every expert")
        if comm:
            notes.append("prefill's all-reduces carry prompt x hidden activations; only their latency is counted, not the link's bandwidth")
    rows: tuple[L.DecodeStep, ...] = ()
    if sweep:
        sizes = L.sweep_batches(batch, ridge, max_b) if sweep is True else tuple(sweep)
        rows = tuple(_decode(params, active, bpw, grp, wd, b, shape, kvd, ctx, fit_len, kv_factor, comm) for b in sizes)

    # The arithmetic in words.
    lines = [f"bytes per weight: {bpw_text}"]
    per_gpu = f"; per GPU / {n} = {_fmt_b(weight_fit / n)}" if n > 1 else ""
    lines.append(f"weights to fit: {_fmt_n(params)} params x {bpw:g} B = {_fmt_b(weight_fit)}{per_gpu}")
    if active < params:
        extra = ""
        if batch > 1:
            extra = f"; at batch {batch} tokens on different experts read up to min(params, {batch} x active) x {bpw:g} B = {_fmt_b(step_hi.weight_bytes)}"
        lines.append(f"weights read per step: {_fmt_n(active)} active params x {bpw:g} B = {_fmt_b(active * bpw)} (each token reads only its experts{extra})")
        lines.append(f"FLOPs per token: 2 x {_fmt_n(active)} active params = {_fmt_flop(2 * active)}" + (" + attention" if shape is not None else ""))
    if n > 1:
        mem = f", memory {n} x {gpu.memory_bytes / 1e9:g} GB = {grp.memory_bytes / 1e9:g} GB" if gpu.memory_bytes else ""
        lines.append(
            f"{n} GPUs (tensor parallel): bandwidth {n} x {gpu.bandwidth / 1e9:g} GB/s = {grp.bandwidth / 1e9:g} GB/s, "
            f"peak {n} x {gpu.peak_flops / 1e12:g} = {grp.peak_flops / 1e12:g} TFLOP/s{mem}"
        )
    each = f" (each GPU reads {_fmt_b(step.bytes / n)} at {gpu.bandwidth / 1e9:g} GB/s)" if n > 1 else ""
    lines.append(
        f"times: t_memory = {_fmt_b(step.bytes)} / {grp.bandwidth / 1e9:g} GB/s = {_fmt_t(step.t_memory_s)}{each}; "
        f"t_compute = {_fmt_flop(step.flops)} / {grp.peak_flops / 1e12:g} TFLOP/s = {_fmt_t(step.t_compute_s)}"
    )
    if n > 1 and shape is not None:
        why = "assumed; set --allreduce-latency from nccl-tests" if s.allreduce_source == DEFAULT_ALLREDUCE_SOURCE else s.allreduce_source
        lines.append(f"all-reduce allowance: {ALLREDUCES_PER_LAYER} per layer x {shape.layers} layers x {_fmt_t(s.allreduce_latency_s)} = {_fmt_t(comm)} per step ({why})")
    comm_txt = f" + {_fmt_t(comm)}" if comm else ""
    lines.append(
        f"step: max({_fmt_t(step.t_memory_s)}, {_fmt_t(step.t_compute_s)}){comm_txt} = {_fmt_t(step.step_time_s)} -> "
        f"{L.fmt_rate(step.tokens_per_s_per_seq)} tokens/s per sequence" + (f", {L.fmt_rate(step.tokens_per_s_total)} in total" if batch > 1 else "")
    )
    if active < params and batch > 1 and step_hi.step_time_s > step.step_time_s:
        lines.append(f"experts spread: with every token on different experts, step {_fmt_t(step_hi.step_time_s)} -> {L.fmt_rate(step_hi.tokens_per_s_total)} tokens/s in total")
    if spread_ridge is not None:
        lines.append(
            f"batch ridge: {_num(ridge)} if the batch's tokens share experts; {_num(spread_ridge)} (x params/active) once they spread over all experts"
        )

    leaves = (
        "activations (their DRAM traffic and memory footprint)",
        "the write of each new token's KV entries and sampling" + ("" if (s.quant_group or s.bytes_per_param) else ", and the scales of quantized formats (--quant-group counts them)"),
        "kernel-launch and host overhead"
        + (", and the all-reduces' transfer time (only their latency is counted)" if n > 1 else ", and communication between GPUs"),
    )
    est = L.LlmEstimate(
        params=params,
        weight_dtype=wd,
        bytes_per_weight=bpw,
        weight_bytes=weight_fit,
        kv_dtype=kvd,
        model=model,
        shape=shape,
        gpu=grp,
        decode=step,
        batch_ridge=ridge,
        batch_ridge_with_kv=ridge_kv,
        max_batch=max_b,
        fit_seq_len=fit_len if shape is not None else None,
        kv=kv,
        prefill=pf,
        sweep=rows,
        ceiling=L.ceiling_sentence(step, grp.name, grp.precision),
        notes=tuple(notes),
        warnings=tuple(warnings),
        leaves_out=leaves,
    )
    rep = ScalingReport(
        params=params,
        active_params=active,
        num_gpus=n,
        bytes_per_weight=bpw,
        bytes_per_weight_text=bpw_text,
        weight_bytes_total=weight_fit,
        weight_bytes_per_gpu=weight_fit / n,
        weight_read_bytes_per_step=step.weight_bytes,
        weight_read_bytes_per_step_max=step_hi.weight_bytes,
        kv_split=split,
        gpu_name=gpu.name,
        bandwidth_per_gpu=gpu.bandwidth,
        peak_flops_per_gpu=gpu.peak_flops,
        memory_bytes_per_gpu=gpu.memory_bytes,
        allreduces_per_step=n_ar,
        allreduce_latency_s=s.allreduce_latency_s,
        allreduce_source=s.allreduce_source,
        allreduce_time_s=comm,
        step_time_s=step.step_time_s,
        step_time_max_s=step_hi.step_time_s,
        tokens_per_s_total=step.tokens_per_s_total,
        tokens_per_s_total_low=step_hi.tokens_per_s_total,
        batch_ridge_spread=spread_ridge,
        lines=tuple(lines),
    )
    return ScaledEstimate(est, rep)


__all__ = [
    "ALLREDUCES_PER_LAYER",
    "DEFAULT_ALLREDUCE_LATENCY_S",
    "ScaledEstimate",
    "Scaling",
    "ScalingReport",
    "allreduce_time",
    "bits_per_weight",
    "effective_bytes_per_weight",
    "group_gpu",
    "kv_split",
    "scaled_estimate",
]
