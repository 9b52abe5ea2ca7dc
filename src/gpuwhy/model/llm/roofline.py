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
60-85% of these ceilings (:data:`gpuwhy.model.llm.result.ENGINE_EFFICIENCY`, a
rule of thumb, not a measurement). :func:`gpuwhy.model.llm.estimate.estimate` puts the
pieces together; :mod:`gpuwhy.model.llm.scaling` adds mixture of experts,
several GPUs and quantization scales.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ...errors import UsageError
from .dtypes import BYTES_PER_ELEMENT, bytes_per_element, compute_precision, default_kv_dtype, normalize_dtype

#: FLOPs per parameter per generated token: one multiply-add per weight
#: (Kaplan et al. 2020, arXiv:2001.08361, C_forward ~ 2N).
FLOPS_PER_PARAM = 2.0


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
        source: where the figures came from (e.g. ``"bundled spec sheet"``).
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
        source=sheet.origin_words,
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


@dataclass(frozen=True)
class StepTerms:
    """What mixture of experts, quantization scales and tensor parallelism change in
    a decode step or a prefill; the defaults are the plain model's.

    Attributes:
        bytes_per_weight: bytes per stored weight; None: the dtype's width
            (e.g. 0.5625 for 4-bit weights with a 16-bit scale per 32).
        active_params: parameters each token goes through, for the matmul FLOPs;
            None: all of them (fewer for a mixture of experts).
        kv_copies: copies of each KV entry held and read (more than 1 when GPUs
            outnumber the KV heads under tensor parallelism).
        overhead_s: seconds added beyond max(t_memory, t_compute), e.g.
            all-reduces; the regime and bound ratio ignore it.
    """

    bytes_per_weight: float | None = None
    active_params: float | None = None
    kv_copies: float = 1.0
    overhead_s: float = 0.0

    def weights(self, params: float, weight_dtype: str) -> tuple[float, float]:
        """``(bytes per weight, active parameters)`` for ``params`` weights of ``weight_dtype``.

        Raises:
            UsageError: for an unknown dtype (when ``bytes_per_weight`` is None).
        """
        bpw = bytes_per_element(weight_dtype) if self.bytes_per_weight is None else self.bytes_per_weight
        return bpw, params if self.active_params is None else self.active_params


#: The plain model's terms: the dtype's width, all parameters active, one KV copy, nothing added.
PLAIN_TERMS = StepTerms()


def check_count(value: Any, name: str, allow_zero: bool = False) -> int:
    """``value`` if it is a whole number >= 1 (>= 0 with ``allow_zero``).

    Raises:
        UsageError: naming ``name``, for anything else (bools included).
    """
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
    terms: StepTerms = PLAIN_TERMS,
    read_params: float | None = None,
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
        terms: bytes per weight, active parameters, KV copies and added seconds
            (default: the plain model's, see :class:`StepTerms`).
        read_params: parameters whose weights the step reads (default: the
            active ones).

    Raises:
        UsageError: for a non-positive params or batch, a negative context, or an unknown dtype.
    """
    if not (params > 0 and math.isfinite(params)):
        raise UsageError(f"params must be greater than zero, got {params!r}")
    check_count(batch, "batch")
    check_count(context, "context", allow_zero=True)
    bpw, active = terms.weights(params, weight_dtype)
    kvd = kv_dtype or default_kv_dtype(weight_dtype)
    weight_fit = params * bpw
    weight_bytes = (active if read_params is None else read_params) * bpw
    kv_read = attn = 0.0
    kv_cache = fits = None
    if shape is not None:
        per_token = kv_bytes_per_token(shape, kvd) * terms.kv_copies
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
    step = max(t_m, t_c) + terms.overhead_s
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
    :class:`StepTerms`). Returns ``math.inf`` when the KV read grows faster than
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
    terms: StepTerms = PLAIN_TERMS,
) -> Prefill:
    """The roofline of a prefill (see :class:`Prefill`).

    ``terms`` as in :func:`decode_step`: the prefill reads all ``params`` weights
    once, does 2 x the active parameters FLOPs per token, and ``terms.overhead_s``
    is added to the TTFT.

    Raises:
        UsageError: for a non-positive prompt length or batch, or an unknown dtype.
    """
    check_count(prompt_len, "prompt length")
    check_count(batch, "batch")
    bpw, active = terms.weights(params, weight_dtype)
    kvd = kv_dtype or default_kv_dtype(weight_dtype)
    matmul = FLOPS_PER_PARAM * active * prompt_len * batch
    attn = batch * attention_flops_prefill(shape, prompt_len) if shape is not None else 0.0
    nbytes = params * bpw + (batch * prompt_len * kv_bytes_per_token(shape, kvd) * terms.kv_copies if shape is not None else 0.0)
    flops = matmul + attn
    t_c = flops / gpu.peak_flops
    t_m = nbytes / gpu.bandwidth
    t = max(t_c, t_m) + terms.overhead_s
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

