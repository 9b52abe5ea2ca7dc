"""The roofline model of LLM inference. Pure maths, no I/O.

A decoder-only transformer generating text runs two phases:

- **prefill**: the whole prompt goes through the model at once, a large
  matrix-matrix product per layer; usually compute-bound.
- **decode**: one token per sequence per step. Each step reads every weight
  once (whatever the batch size) and the KV cache of every sequence in the
  batch, but does only ``2 x params`` FLOPs per sequence; at small batches it
  is memory-bound.

Per decode step (all SI: bytes, FLOP, seconds, B/s, FLOP/s)::

    bytes     = params x bytes_per_weight                           (weights)
              + batch x context x kv_bytes_per_token                (KV read; needs the shape)
    FLOPs     = 2 x params x batch                                  (matmuls)
              + batch x 4 x layers x heads x head_dim x context     (attention; needs the shape)
    t_memory  = bytes / bandwidth,  t_compute = FLOPs / peak
    step time = max(t_memory, t_compute)
    tokens/s  = 1 / step time per sequence, batch / step time in total

Constants and their sources:

- 2 FLOPs per parameter per token (one multiply and one add per weight): the
  forward-pass estimate C_forward ~ 2N of Kaplan et al., "Scaling Laws for
  Neural Language Models", arXiv:2001.08361 (2020), section 2.1.
- Attention per token per layer: ``q.K^T`` and ``softmax(..).V`` each take one
  multiply-add (2 FLOPs) per head dimension per head per cached token, hence
  4 x heads x head_dim x context (derived from the shapes of the two products;
  softmax and scaling are left out).
- KV cache: each layer stores one key and one value vector of kv_heads x head_dim
  elements per token, hence 2 x layers x kv_heads x head_dim x bytes per token
  (grouped-query attention: Ainslie et al., "GQA", arXiv:2305.13245, 2023).
- Bytes per element: fp32 4, fp16/bf16 2, fp8/int8 1, int4/fp4 0.5 (the widths
  of the formats; scales and zero points of quantized formats are left out).

The model leaves out activations (their memory traffic and footprint), the
write of the new token's KV entries, sampling, kernel-launch and host
overhead, and communication between GPUs. Real inference engines reach about
60-85% of these ceilings (:data:`ENGINE_EFFICIENCY`, a rule of thumb, not a
measurement).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from ..errors import UsageError

#: Bytes per element of each weight or KV-cache dtype (the format's width; the
#: scales of quantized formats are left out).
BYTES_PER_ELEMENT: dict[str, float] = {
    "fp32": 4.0,
    "fp16": 2.0,
    "bf16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5,
    "fp4": 0.5,
}
#: Names ``--weight-dtype`` and ``--kv-dtype`` accept.
WEIGHT_DTYPES = ("fp16", "bf16", "fp8", "int8", "int4", "fp4", "fp32")

#: FLOPs per parameter per generated token: one multiply-add per weight
#: (Kaplan et al. 2020, arXiv:2001.08361, C_forward ~ 2N).
FLOPS_PER_PARAM = 2.0

#: The share of these ceilings real inference engines reach: about 60-85%, a
#: rule of thumb quoted in the design issue (gpuwhy issue 7), not a measurement.
ENGINE_EFFICIENCY = (0.60, 0.85)

#: Batch sizes of ``--sweep-batch`` (the batch asked for, the batch ridge and the
#: largest batch that fits are added).
DEFAULT_SWEEP = (1, 8, 32, 64, 128, 256, 512, 1024)

#: What the model leaves out, for renderers and JSON (the engine efficiency,
#: :data:`ENGINE_EFFICIENCY`, is reported beside it).
LEAVES_OUT = (
    "activations (their DRAM traffic and memory footprint)",
    "the write of each new token's KV entries, sampling, and the scales of quantized formats",
    "kernel-launch and host overhead, and communication between GPUs",
)

# Which peak bounds the math of each weight dtype, in order of preference.
_PEAK_PREFERENCE: dict[str, tuple[str, ...]] = {
    "fp32": ("fp32",),
    "fp16": ("fp16", "bf16", "fp32"),
    "bf16": ("bf16", "fp16", "fp32"),
    "fp8": ("fp8", "fp16", "bf16", "fp32"),
    "int8": ("int8", "fp16", "bf16", "fp32"),
    "int4": ("fp4", "fp16", "bf16", "fp32"),
    "fp4": ("fp4", "fp16", "bf16", "fp32"),
}

_PARAMS_RE = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*([A-Za-z]*)\s*$")
#: Suffixes of ``--params``: k thousand, M million, B or G billion, T trillion.
PARAMS_SUFFIXES = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}
_MIN_PARAMS = 1e5
_MAX_PARAMS = 1e14


def parse_params(text: str | float | int, what: str = "--params") -> float:
    """Parse a parameter count: ``3B``, ``124M``, ``8e9``, ``70.6B``, ``1.5k``.

    For a parameter count ``B`` means billion (1e9), unlike
    :func:`gpuwhy.units.parse_quantity` where ``B`` is bytes; ``G`` is accepted as
    a synonym, ``k``/``M``/``T`` are 1e3/1e6/1e12; suffixes are case-insensitive.

    Raises:
        UsageError: for text that is not a number, an unknown suffix, a value that
            is not finite, not positive, or outside 1e5 to 1e14 parameters (a
            bare ``3`` is caught as "did you mean 3B?").
    """
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        s, value = str(text), float(text)
    else:
        s = str(text)
        m = _PARAMS_RE.match(s)
        if not m:
            raise UsageError(f"{what} {s!r} is not a parameter count; give e.g. 3B, 124M or 8e9")
        suffix = m.group(2).lower()
        if suffix not in PARAMS_SUFFIXES:
            raise UsageError(f"{what} {s!r} has an unknown suffix {m.group(2)!r}; use k, M, B (billion) or T, e.g. 3B")
        value = float(m.group(1)) * PARAMS_SUFFIXES[suffix]
    if not math.isfinite(value) or value <= 0:
        raise UsageError(f"{what} {s!r} must be a finite number greater than zero, e.g. 3B")
    if value < _MIN_PARAMS:
        raise UsageError(f"{what} {s!r} is {value:g} parameters, too few for an LLM; did you mean {s.strip()}B (billion)?")
    if value > _MAX_PARAMS:
        raise UsageError(f"{what} {s!r} is {value:.3g} parameters, more than 1e14; give the count, e.g. 3B or 124M")
    return value


def normalize_dtype(dtype: str, what: str = "--weight-dtype") -> str:
    """The canonical name of a weight/KV dtype (``"FP16"`` -> ``"fp16"``).

    Raises:
        UsageError: for a name not in :data:`WEIGHT_DTYPES`.
    """
    d = str(dtype).strip().lower()
    if d not in BYTES_PER_ELEMENT:
        raise UsageError(f"unknown {what} {dtype!r}; use one of: {', '.join(WEIGHT_DTYPES)}")
    return d


def bytes_per_element(dtype: str, what: str = "--weight-dtype") -> float:
    """Bytes per element of ``dtype``: fp32 4, fp16/bf16 2, fp8/int8 1, int4/fp4 0.5.

    Raises:
        UsageError: for an unknown dtype.
    """
    return BYTES_PER_ELEMENT[normalize_dtype(dtype, what)]


def default_kv_dtype(weight_dtype: str) -> str:
    """The KV-cache dtype assumed when none is given: the weight dtype for
    fp32/fp16/bf16, fp16 for quantized weights (engines keep the KV cache in the
    activation dtype unless told otherwise)."""
    d = normalize_dtype(weight_dtype)
    return d if d in ("fp32", "fp16", "bf16") else "fp16"


def compute_precision(weight_dtype: str, available: Iterable[str]) -> tuple[str, str | None]:
    """The ``peak_tflops`` key whose peak bounds the math of ``weight_dtype`` weights.

    fp16/bf16 -> the fp16/bf16 tensor peak; fp8 -> fp8; int8 -> int8; int4/fp4 ->
    fp4 if ``available`` has it, else fp16 (the weights are dequantized); fp32 ->
    fp32. A missing precision falls back along fp16, bf16, fp32.

    Returns:
        ``(precision, note)``; ``note`` is a sentence when the choice is not the
        obvious one (a fallback, or int4 math taken at the fp4 peak), else None.

    Raises:
        UsageError: for an unknown dtype, or when ``available`` has none of the
            candidate precisions.
    """
    d = normalize_dtype(weight_dtype)
    have = set(available)
    prefs = _PEAK_PREFERENCE[d]
    for prec in prefs:
        if prec in have:
            break
    else:
        raise UsageError(f"the GPU sheet has none of the peaks {', '.join(prefs)} needed for {d} weights")
    note = None
    if prec != prefs[0]:
        if d in ("int4", "fp4", "fp8", "int8"):
            note = f"the sheet has no {prefs[0]} peak: {d} weights are taken as dequantized to {prec}, and the math runs at the {prec} peak"
        else:
            note = f"the sheet has no {prefs[0]} peak; the {prec} peak is used"
    elif d == "int4":
        note = "int4 weights: the math is taken at the fp4 tensor peak; engines that dequantize int4 to fp16 get the fp16 peak (only matters when compute-bound)"
    return prec, note


def fmt_rate(x: float) -> str:
    """Tokens/s for sentences: thousands separators at 100 and above, 3 digits below;
    ``"unbounded"`` when not finite."""
    if not math.isfinite(x):
        return "unbounded"
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


@dataclass(frozen=True)
class AttentionShape:
    """The part of a model's shape the KV cache and attention FLOPs need.

    Attributes:
        layers: transformer blocks.
        kv_heads: key/value heads per layer (fewer than ``heads`` under
            grouped-query attention).
        head_dim: elements per head.
        heads: query (attention) heads per layer; defaults to ``kv_heads``
            (multi-head attention), which undercounts attention FLOPs for
            grouped-query models.
    """

    layers: int
    kv_heads: int
    head_dim: int
    heads: int | None = None

    def __post_init__(self) -> None:
        for name in ("layers", "kv_heads", "head_dim"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise UsageError(f"the model shape's {name} must be a whole number greater than zero, got {v!r}")
        if self.heads is not None and (not isinstance(self.heads, int) or isinstance(self.heads, bool) or self.heads < 1):
            raise UsageError(f"the model shape's heads must be a whole number greater than zero, got {self.heads!r}")

    @property
    def query_heads(self) -> int:
        """Query heads (``heads``, or ``kv_heads`` when not given)."""
        return self.heads if self.heads is not None else self.kv_heads

    def to_dict(self) -> dict[str, Any]:
        """Plain data for ``--json``."""
        return {"layers": self.layers, "heads": self.query_heads, "kv_heads": self.kv_heads, "head_dim": self.head_dim}


def kv_bytes_per_token(shape: AttentionShape, kv_dtype: str = "fp16") -> float:
    """KV-cache bytes one token occupies: 2 (K and V) x layers x kv_heads x head_dim x bytes.

    E.g. Llama-3 8B (32 layers, 8 KV heads of 128) in fp16: 2 x 32 x 8 x 128 x 2 = 131,072 B.
    """
    return 2.0 * shape.layers * shape.kv_heads * shape.head_dim * bytes_per_element(kv_dtype, "--kv-dtype")


def attention_flops_decode(shape: AttentionShape, context: int) -> float:
    """Attention FLOPs of one decode step of one sequence with ``context`` cached tokens:
    4 x layers x heads x head_dim x context (q.K^T and the weighted sum of V)."""
    return 4.0 * shape.layers * shape.query_heads * shape.head_dim * context


def attention_flops_prefill(shape: AttentionShape, prompt_len: int) -> float:
    """Causal attention FLOPs of a prefill of ``prompt_len`` tokens for one sequence:
    token i attends to i tokens, so sum over i=1..L of 4 x layers x heads x head_dim x i
    = 2 x layers x heads x head_dim x L x (L + 1)."""
    return 2.0 * shape.layers * shape.query_heads * shape.head_dim * prompt_len * (prompt_len + 1)


@dataclass(frozen=True)
class LlmGpu:
    """The GPU figures the LLM model needs.

    Attributes:
        name: the GPU's name.
        bandwidth: DRAM bandwidth in B/s.
        peak_flops: dense peak in FLOP/s of ``precision``.
        precision: the ``peak_tflops`` key used (see :func:`compute_precision`).
        memory_bytes: GPU memory in bytes (None if unknown).
        source: where the figures came from (e.g. ``"spec sheet (bundled)"``).
        precision_note: why ``precision`` was chosen, when not obvious.
    """

    name: str
    bandwidth: float
    peak_flops: float
    precision: str
    memory_bytes: float | None = None
    source: str = "spec sheet"
    precision_note: str | None = None

    def __post_init__(self) -> None:
        if not (self.bandwidth > 0 and self.peak_flops > 0):
            raise UsageError(f"the {self.name} figures need a bandwidth and a peak greater than zero")

    def to_dict(self) -> dict[str, Any]:
        """Plain data for ``--json`` (``memory_bandwidth_gbs``, ``peak_tflops``, ``memory_size_gb``)."""
        return {
            "name": self.name,
            "memory_bandwidth_gbs": self.bandwidth / 1e9,
            "peak_tflops": self.peak_flops / 1e12,
            "precision": self.precision,
            "memory_size_gb": None if self.memory_bytes is None else self.memory_bytes / 1e9,
            "source": self.source,
            "precision_note": self.precision_note,
        }


def gpu_from_sheet(sheet: Any, weight_dtype: str) -> LlmGpu:
    """:class:`LlmGpu` from a :class:`gpuwhy.specs.Sheet`: its DRAM bandwidth, its
    memory size and the dense peak :func:`compute_precision` picks for ``weight_dtype``.

    Raises:
        UsageError: for an unknown dtype or a sheet without a usable peak.
    """
    prec, note = compute_precision(weight_dtype, sheet.peak_tflops)
    return LlmGpu(
        name=sheet.name,
        bandwidth=sheet.bandwidth_bytes_per_s,
        peak_flops=sheet.peak_flops(prec),
        precision=prec,
        memory_bytes=sheet.memory_size_gb * 1e9,
        source=f"spec sheet ({sheet.origin})",
        precision_note=note,
    )


@dataclass(frozen=True)
class DecodeStep:
    """One decode step of ``batch`` sequences, each with ``context`` cached tokens.

    Bytes and FLOPs are per step for the whole batch; times in seconds; rates in
    tokens/s. ``kv_read_bytes`` and ``attention_flops`` are 0 without a shape.
    ``kv_cache_bytes`` is the batch's resident KV cache at ``seq_len`` tokens per
    sequence and ``fits_in_memory`` whether weights plus that cache fit in the
    GPU's memory (both None when unknown).
    """

    batch: int
    context: int
    weight_bytes: float
    kv_read_bytes: float
    bytes: float
    matmul_flops: float
    attention_flops: float
    flops: float
    t_memory_s: float
    t_compute_s: float
    step_time_s: float
    regime: str
    bound_ratio: float
    tokens_per_s_per_seq: float
    tokens_per_s_total: float
    kv_cache_bytes: float | None = None
    fits_in_memory: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain data for ``--json``."""
        return {
            "batch": self.batch,
            "context": self.context,
            "weight_bytes": self.weight_bytes,
            "kv_read_bytes": self.kv_read_bytes,
            "bytes": self.bytes,
            "matmul_flops": self.matmul_flops,
            "attention_flops": self.attention_flops,
            "flops": self.flops,
            "arithmetic_intensity": self.flops / self.bytes,
            "t_memory_s": self.t_memory_s,
            "t_compute_s": self.t_compute_s,
            "step_time_s": self.step_time_s,
            "regime": self.regime,
            "bound_ratio": self.bound_ratio,
            "tokens_per_s_per_seq": self.tokens_per_s_per_seq,
            "tokens_per_s_total": self.tokens_per_s_total,
            "kv_cache_bytes": self.kv_cache_bytes,
            "fits_in_memory": self.fits_in_memory,
        }


def _check_count(value: Any, name: str, allow_zero: bool = False) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < (0 if allow_zero else 1):
        bound = "zero or more" if allow_zero else "greater than zero"
        raise UsageError(f"{name} must be a whole number {bound}, got {value!r}")
    return value


def decode_step(
    params: float,
    weight_dtype: str,
    gpu: LlmGpu,
    batch: int = 1,
    shape: AttentionShape | None = None,
    kv_dtype: str | None = None,
    context: int = 0,
    seq_len: int | None = None,
    *,
    bytes_per_weight: float | None = None,
    active_params: float | None = None,
    read_params: float | None = None,
    kv_copies: float = 1.0,
    overhead_s: float = 0.0,
) -> DecodeStep:
    """The roofline of one decode step (see the module docstring for the formulas).

    Args:
        params: parameter count (all of them must fit in memory).
        weight_dtype: one of :data:`WEIGHT_DTYPES`.
        gpu: bandwidth (B/s), peak (FLOP/s) and memory (bytes).
        batch: sequences decoded together (>= 1).
        shape: the attention shape; without it the KV cache and attention are left out.
        kv_dtype: KV-cache dtype (default :func:`default_kv_dtype`).
        context: tokens already in each sequence's KV cache (>= 0).
        seq_len: tokens per sequence for the resident KV cache and the fit check
            (default ``context``).
        bytes_per_weight: bytes per stored weight (default: the dtype's width;
            e.g. 0.5625 for 4-bit weights with a 16-bit scale per 32).
        active_params: parameters each token goes through, for the matmul FLOPs
            (default ``params``; fewer for a mixture of experts).
        read_params: parameters whose weights the step reads (default ``active_params``).
        kv_copies: copies of each KV entry held and read (default 1; more when
            GPUs outnumber the KV heads under tensor parallelism).
        overhead_s: seconds added to the step beyond max(t_memory, t_compute)
            (e.g. all-reduces); the regime and bound ratio ignore it.

    Raises:
        UsageError: for a non-positive params or batch, a negative context, or an unknown dtype.
    """
    if not (params > 0 and math.isfinite(params)):
        raise UsageError(f"params must be greater than zero, got {params!r}")
    _check_count(batch, "batch")
    _check_count(context, "context", allow_zero=True)
    bpw = bytes_per_element(weight_dtype) if bytes_per_weight is None else bytes_per_weight
    kvd = kv_dtype or default_kv_dtype(weight_dtype)
    active = params if active_params is None else active_params
    weight_fit = params * bpw
    weight_bytes = (active if read_params is None else read_params) * bpw
    kv_read = attn = 0.0
    kv_cache = fits = None
    if shape is not None:
        per_token = kv_bytes_per_token(shape, kvd) * kv_copies
        kv_read = batch * context * per_token
        attn = batch * attention_flops_decode(shape, context)
        sl = context if seq_len is None else seq_len
        if sl:
            kv_cache = batch * sl * per_token
            if gpu.memory_bytes is not None:
                fits = weight_fit + kv_cache <= gpu.memory_bytes
    total_bytes = weight_bytes + kv_read
    matmul = FLOPS_PER_PARAM * active * batch
    flops = matmul + attn
    t_m = total_bytes / gpu.bandwidth
    t_c = flops / gpu.peak_flops
    step = max(t_m, t_c) + overhead_s
    regime = "memory" if t_m >= t_c else "compute"
    ratio = max(t_m, t_c) / min(t_m, t_c)
    return DecodeStep(
        batch=batch,
        context=context,
        weight_bytes=weight_bytes,
        kv_read_bytes=kv_read,
        bytes=total_bytes,
        matmul_flops=matmul,
        attention_flops=attn,
        flops=flops,
        t_memory_s=t_m,
        t_compute_s=t_c,
        step_time_s=step,
        regime=regime,
        bound_ratio=ratio,
        tokens_per_s_per_seq=1.0 / step,
        tokens_per_s_total=batch / step,
        kv_cache_bytes=kv_cache,
        fits_in_memory=fits,
    )


def batch_ridge(peak_flops: float, bytes_per_weight: float, bandwidth: float) -> float:
    """The batch at which a decode step (weights only) turns compute-bound:
    peak x bytes_per_weight / (2 x bandwidth). The parameter count cancels:
    t_compute = 2 x P x batch / peak equals t_memory = P x bytes_per_weight / bandwidth there.

    E.g. RTX 5070 fp16: 61.7e12 x 2 / (2 x 672e9) = 91.8.

    Raises:
        UsageError: if an argument is not positive.
    """
    if not (peak_flops > 0 and bytes_per_weight > 0 and bandwidth > 0):
        raise UsageError("the batch ridge needs a peak, bytes per weight and bandwidth greater than zero")
    return peak_flops * bytes_per_weight / (FLOPS_PER_PARAM * bandwidth)


def batch_ridge_with_kv(
    params: float,
    bytes_per_weight: float,
    gpu: LlmGpu,
    shape: AttentionShape,
    kv_dtype: str,
    context: int,
    kv_copies: float = 1.0,
) -> float:
    """The batch at which a decode step turns compute-bound once each sequence's KV
    read (K bytes) and attention FLOPs (A) are counted:

        batch x (2 P + A) / peak = (P x bytes_per_weight + batch x K) / bandwidth
        batch = (P x bytes_per_weight / bandwidth) / ((2 P + A) / peak - K / bandwidth)

    ``params`` (P) are the parameters each token reads and goes through (the
    active ones of a mixture of experts); ``kv_copies`` multiplies K (see
    :func:`decode_step`). Returns ``math.inf`` when the KV read grows faster than
    the compute (the step never turns compute-bound at this context).
    """
    k = context * kv_bytes_per_token(shape, kv_dtype) * kv_copies
    a = attention_flops_decode(shape, context)
    denom = (FLOPS_PER_PARAM * params + a) / gpu.peak_flops - k / gpu.bandwidth
    if denom <= 0:
        return math.inf
    return (params * bytes_per_weight / gpu.bandwidth) / denom


def max_batch_fit(weight_bytes: float, kv_bytes_per_seq: float, memory_bytes: float) -> int:
    """The largest batch whose KV cache (``kv_bytes_per_seq`` each) fits in
    ``memory_bytes`` beside the weights: floor((memory - weights) / kv per sequence),
    0 when the weights alone do not fit. Activations and the engine's own memory are
    left out, so real engines fit fewer.

    Raises:
        UsageError: if ``kv_bytes_per_seq`` is not positive.
    """
    if not kv_bytes_per_seq > 0:
        raise UsageError("the KV cache per sequence must be greater than zero")
    free = memory_bytes - weight_bytes
    return max(0, int(math.floor(free / kv_bytes_per_seq)))


@dataclass(frozen=True)
class Prefill:
    """The prefill of ``batch`` prompts of ``prompt_len`` tokens.

    FLOPs = 2 x params x prompt_len x batch + causal attention
    (:func:`attention_flops_prefill`); bytes = the weights once + the KV cache
    written for the prompts. ``ttft_s`` (time to first token) is max(t_compute,
    t_memory): the prefill's last position yields the first token.
    """

    prompt_len: int
    batch: int
    matmul_flops: float
    attention_flops: float
    flops: float
    bytes: float
    t_compute_s: float
    t_memory_s: float
    ttft_s: float
    regime: str
    tokens_per_s: float

    def to_dict(self) -> dict[str, Any]:
        """Plain data for ``--json``."""
        return {
            "prompt_len": self.prompt_len,
            "batch": self.batch,
            "matmul_flops": self.matmul_flops,
            "attention_flops": self.attention_flops,
            "flops": self.flops,
            "bytes": self.bytes,
            "t_compute_s": self.t_compute_s,
            "t_memory_s": self.t_memory_s,
            "ttft_s": self.ttft_s,
            "regime": self.regime,
            "tokens_per_s": self.tokens_per_s,
        }


def prefill(
    params: float,
    weight_dtype: str,
    gpu: LlmGpu,
    prompt_len: int,
    batch: int = 1,
    shape: AttentionShape | None = None,
    kv_dtype: str | None = None,
    *,
    bytes_per_weight: float | None = None,
    active_params: float | None = None,
    kv_copies: float = 1.0,
    overhead_s: float = 0.0,
) -> Prefill:
    """The roofline of a prefill (see :class:`Prefill`).

    ``bytes_per_weight``, ``active_params``, ``kv_copies`` and ``overhead_s`` are
    as in :func:`decode_step`: the prefill reads all ``params`` weights once, does
    2 x ``active_params`` FLOPs per token, and ``overhead_s`` is added to the TTFT.

    Raises:
        UsageError: for a non-positive prompt length or batch, or an unknown dtype.
    """
    _check_count(prompt_len, "prompt length")
    _check_count(batch, "batch")
    bpw = bytes_per_element(weight_dtype) if bytes_per_weight is None else bytes_per_weight
    kvd = kv_dtype or default_kv_dtype(weight_dtype)
    active = params if active_params is None else active_params
    matmul = FLOPS_PER_PARAM * active * prompt_len * batch
    attn = batch * attention_flops_prefill(shape, prompt_len) if shape is not None else 0.0
    nbytes = params * bpw + (batch * prompt_len * kv_bytes_per_token(shape, kvd) * kv_copies if shape is not None else 0.0)
    flops = matmul + attn
    t_c = flops / gpu.peak_flops
    t_m = nbytes / gpu.bandwidth
    t = max(t_c, t_m) + overhead_s
    return Prefill(
        prompt_len=prompt_len,
        batch=batch,
        matmul_flops=matmul,
        attention_flops=attn,
        flops=flops,
        bytes=nbytes,
        t_compute_s=t_c,
        t_memory_s=t_m,
        ttft_s=t,
        regime="compute" if t_c >= t_m else "memory",
        tokens_per_s=prompt_len * batch / t,
    )


@dataclass(frozen=True)
class KvCache:
    """KV-cache sizes: ``bytes_per_token`` (2 x layers x kv_heads x head_dim x
    bytes), ``bytes_per_seq`` at ``seq_len`` tokens, ``bytes_total`` for ``batch``
    sequences. Bytes; ``seq_len`` None when no length was known."""

    dtype: str
    bytes_per_element: float
    bytes_per_token: float
    seq_len: int | None
    bytes_per_seq: float | None
    batch: int
    bytes_total: float | None

    def to_dict(self) -> dict[str, Any]:
        """Plain data for ``--json``."""
        return {
            "dtype": self.dtype,
            "bytes_per_element": self.bytes_per_element,
            "bytes_per_token": self.bytes_per_token,
            "seq_len": self.seq_len,
            "bytes_per_seq": self.bytes_per_seq,
            "batch": self.batch,
            "bytes_total": self.bytes_total,
        }


def kv_cache(shape: AttentionShape, kv_dtype: str, seq_len: int | None, batch: int = 1) -> KvCache:
    """KV-cache sizes of ``batch`` sequences of ``seq_len`` tokens (see :class:`KvCache`)."""
    d = normalize_dtype(kv_dtype, "--kv-dtype")
    per_token = kv_bytes_per_token(shape, d)
    per_seq = None if not seq_len else per_token * seq_len
    return KvCache(
        dtype=d,
        bytes_per_element=BYTES_PER_ELEMENT[d],
        bytes_per_token=per_token,
        seq_len=seq_len or None,
        bytes_per_seq=per_seq,
        batch=batch,
        bytes_total=None if per_seq is None else per_seq * batch,
    )


def ceiling_sentence(step: DecodeStep, gpu_name: str, precision: str) -> str:
    """The decode ceiling in words, e.g. "no kernel can beat 112 tokens/s per
    sequence on the GeForce RTX 5070 without reading fewer bytes per step"."""
    if step.regime == "memory":
        total = f" ({fmt_rate(step.tokens_per_s_total)} tokens/s in total at batch {step.batch})" if step.batch > 1 else ""
        return (
            f"no kernel can beat {fmt_rate(step.tokens_per_s_per_seq)} tokens/s per sequence{total} "
            f"on the {gpu_name} without reading fewer bytes per step"
        )
    return (
        f"no kernel can beat {fmt_rate(step.tokens_per_s_total)} tokens/s in total at batch {step.batch} "
        f"({fmt_rate(step.tokens_per_s_per_seq)} per sequence) on the {gpu_name} "
        f"without doing fewer FLOPs per token or using a faster precision than {precision}"
    )


@dataclass(frozen=True)
class LlmEstimate:
    """The whole back-of-the-envelope model of LLM inference on one GPU.

    Attributes:
        params: parameter count.
        weight_dtype, bytes_per_weight, weight_bytes: the weights (bytes).
        kv_dtype: the KV-cache dtype.
        model: the bundled/user model's name, if one was named.
        shape: the attention shape, if known.
        gpu: the GPU figures.
        decode: the decode step at the asked batch and context.
        batch_ridge: peak x bytes_per_weight / (2 x bandwidth), weights only.
        batch_ridge_with_kv: the crossover with the KV read and attention counted
            (None without a shape or at context 0; inf when never reached).
        max_batch: the largest batch whose KV cache at ``fit_seq_len`` fits beside
            the weights (None when unknown).
        fit_seq_len: tokens per sequence used for ``max_batch``.
        kv: KV-cache sizes (None without a shape).
        prefill: the prefill (None without a prompt length).
        sweep: decode steps at several batch sizes (empty unless asked for).
        ceiling: the ceiling sentence.
        notes, warnings: sentences for the reader.
        leaves_out: what the model does not count.
    """

    params: float
    weight_dtype: str
    bytes_per_weight: float
    weight_bytes: float
    kv_dtype: str
    model: str | None
    shape: AttentionShape | None
    gpu: LlmGpu
    decode: DecodeStep
    batch_ridge: float
    batch_ridge_with_kv: float | None
    max_batch: int | None
    fit_seq_len: int | None
    kv: KvCache | None
    prefill: Prefill | None
    sweep: tuple[DecodeStep, ...]
    ceiling: str
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    leaves_out: tuple[str, ...] = LEAVES_OUT
    engine_efficiency: tuple[float, float] = ENGINE_EFFICIENCY

    def to_dict(self) -> dict[str, Any]:
        """One JSON document; SI units as the key names say."""
        return {
            "params": self.params,
            "weight_dtype": self.weight_dtype,
            "bytes_per_weight": self.bytes_per_weight,
            "weight_bytes": self.weight_bytes,
            "kv_dtype": self.kv_dtype,
            "model": self.model,
            "shape": None if self.shape is None else self.shape.to_dict(),
            "gpu": self.gpu.to_dict(),
            "decode": self.decode.to_dict(),
            "ceiling": self.ceiling,
            "batch_ridge": self.batch_ridge,
            "batch_ridge_with_kv": self.batch_ridge_with_kv,
            "max_batch": self.max_batch,
            "fit_seq_len": self.fit_seq_len,
            "kv_cache": None if self.kv is None else self.kv.to_dict(),
            "prefill": None if self.prefill is None else self.prefill.to_dict(),
            "sweep": [s.to_dict() for s in self.sweep],
            "engine_efficiency": list(self.engine_efficiency),
            "leaves_out": list(self.leaves_out),
            "notes": list(self.notes),
            "warnings": list(self.warnings),
        }


def sweep_batches(batch: int, ridge: float, max_batch: int | None, base: Sequence[int] = DEFAULT_SWEEP) -> tuple[int, ...]:
    """Batch sizes for a sweep: ``base`` plus the asked batch, the rounded batch
    ridge and the largest batch that fits (when >= 1), sorted and unique."""
    sizes = set(base) | {batch}
    if math.isfinite(ridge) and ridge >= 1:
        sizes.add(int(round(ridge)))
    if max_batch:
        sizes.add(max_batch)
    return tuple(sorted(sizes))


def check_request(batch: int, prompt_len: int | None = None, context: int | None = None, params: float | None = None) -> None:
    """Check the counts of an :func:`estimate` request, in this order: ``batch`` >= 1,
    ``params`` > 0 and finite (when given), ``prompt_len`` >= 1 and ``context`` >= 0
    (each when not None).

    Raises:
        UsageError: naming the first bad value.
    """
    _check_count(batch, "batch")
    if params is not None and not (params > 0 and math.isfinite(params)):
        raise UsageError(f"params must be greater than zero, got {params!r}")
    if prompt_len is not None:
        _check_count(prompt_len, "prompt length")
    if context is not None:
        _check_count(context, "context", allow_zero=True)


def decode_context(
    gpu: LlmGpu,
    shape: AttentionShape | None,
    context: int | None,
    prompt_len: int | None,
    max_context: int | None,
    notes: Sequence[str] = (),
) -> tuple[int, int | None, list[str]]:
    """``(context, fit_len, notes)`` of an :func:`estimate` request.

    ``context`` (cached tokens per sequence at the decode step) defaults to
    ``prompt_len``, else 0; ``fit_len`` (tokens per sequence for the largest batch
    that fits) is the context, else ``prompt_len``, else ``max_context``, and None
    without a shape. ``notes`` is a new list: the given notes, then the GPU's
    precision note and a note on a missing shape or a zero context.

    Raises:
        UsageError: a context or prompt longer than ``max_context``.
    """
    ctx = context if context is not None else (prompt_len or 0)
    notes = list(notes)
    if gpu.precision_note:
        notes.append(gpu.precision_note)
    if max_context is not None:
        longest = max(ctx, prompt_len or 0)
        if longest > max_context:
            raise UsageError(f"context {longest} is longer than the model's maximum context {max_context}; give at most {max_context}")
    fit_len = ctx or prompt_len or max_context
    if shape is None:
        fit_len = None
        notes.append("no model shape: the KV cache and attention are left out (give --model NAME or --layers/--kv-heads/--head-dim)")
    elif ctx == 0:
        notes.append("context 0: the decode step reads no KV cache; give --context C (cached tokens per sequence) to count it")
    return ctx, fit_len, notes


def kv_fit(
    shape: AttentionShape | None,
    kv_dtype: str,
    fit_len: int | None,
    batch: int,
    gpu: LlmGpu,
    weight_bytes: float,
    kv_copies: float = 1.0,
    remedy: str = "split the model across GPUs",
) -> tuple[KvCache | None, int | None, str | None]:
    """``(kv, max_batch, warning)``: the KV-cache sizes at ``fit_len`` tokens per
    sequence (None without a shape), the largest batch whose KV cache (times
    ``kv_copies``) fits beside ``weight_bytes`` of weights (None when unknown),
    and a warning when the weights or the batch do not fit (``remedy`` ends the
    weights' one: "quantize the weights or <remedy>"), else None.
    """
    kv = None
    max_b = None
    if shape is not None:
        kv = kv_cache(shape, kv_dtype, fit_len, batch)
        if gpu.memory_bytes is not None and kv.bytes_per_seq:
            max_b = max_batch_fit(weight_bytes, kv.bytes_per_seq * kv_copies, gpu.memory_bytes)
    warning = None
    if gpu.memory_bytes is not None and weight_bytes > gpu.memory_bytes:
        warning = (
            f"the weights ({weight_bytes / 1e9:.3g} GB) do not fit in the {gpu.name}'s {gpu.memory_bytes / 1e9:.3g} GB; "
            f"the figures assume they did (quantize the weights or {remedy})"
        )
    elif max_b is not None and batch > max_b:
        warning = (
            f"batch {batch} does not fit: at {fit_len} tokens per sequence the {gpu.name}'s memory holds the KV cache "
            f"of at most {max_b} sequences beside the weights"
        )
    return kv, max_b, warning


def estimate(
    params: float,
    weight_dtype: str,
    gpu: LlmGpu,
    batch: int = 1,
    shape: AttentionShape | None = None,
    kv_dtype: str | None = None,
    context: int | None = None,
    prompt_len: int | None = None,
    max_context: int | None = None,
    model: str | None = None,
    sweep: bool | Sequence[int] = False,
    notes: Sequence[str] = (),
) -> LlmEstimate:
    """Decode step, ceiling, batch ridge, largest batch that fits, KV cache, prefill
    and (optionally) a batch sweep for ``params`` weights of ``weight_dtype`` on ``gpu``.

    ``context`` (cached tokens per sequence at the decode step) defaults to
    ``prompt_len``, else 0. The largest batch that fits uses ``context``, else
    ``prompt_len``, else ``max_context`` tokens per sequence. ``sweep`` is True
    for :func:`sweep_batches` or a sequence of batch sizes. ``notes`` are passed
    through to the result, before the model's own.

    Raises:
        UsageError: for an unknown dtype, a non-positive params/batch/prompt
            length, a negative context, or a context beyond ``max_context``.
    """
    wd = normalize_dtype(weight_dtype)
    kvd = normalize_dtype(kv_dtype, "--kv-dtype") if kv_dtype else default_kv_dtype(wd)
    check_request(batch, prompt_len, context)
    ctx, fit_len, notes = decode_context(gpu, shape, context, prompt_len, max_context, notes)
    warnings: list[str] = []
    bpw = BYTES_PER_ELEMENT[wd]
    step = decode_step(params, wd, gpu, batch, shape, kvd, ctx, fit_len)
    weight_bytes = step.weight_bytes
    ridge = batch_ridge(gpu.peak_flops, bpw, gpu.bandwidth)
    ridge_kv = None
    if shape is not None and ctx > 0:
        ridge_kv = batch_ridge_with_kv(params, bpw, gpu, shape, kvd, ctx)
    kv, max_b, fit_warning = kv_fit(shape, kvd, fit_len, batch, gpu, weight_bytes)
    if fit_warning:
        warnings.append(fit_warning)
    pf = prefill(params, wd, gpu, prompt_len, batch, shape, kvd) if prompt_len else None
    rows: tuple[DecodeStep, ...] = ()
    if sweep:
        sizes = sweep_batches(batch, ridge, max_b) if sweep is True else tuple(sweep)
        rows = tuple(decode_step(params, wd, gpu, b, shape, kvd, ctx, fit_len) for b in sizes)
    return LlmEstimate(
        params=params,
        weight_dtype=wd,
        bytes_per_weight=bpw,
        weight_bytes=weight_bytes,
        kv_dtype=kvd,
        model=model,
        shape=shape,
        gpu=gpu,
        decode=step,
        batch_ridge=ridge,
        batch_ridge_with_kv=ridge_kv,
        max_batch=max_b,
        fit_seq_len=fit_len if shape is not None else None,
        kv=kv,
        prefill=pf,
        sweep=rows,
        ceiling=ceiling_sentence(step, gpu.name, gpu.precision),
        notes=tuple(notes),
        warnings=tuple(warnings),
    )
