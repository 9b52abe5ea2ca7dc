"""The inputs that extend the LLM roofline: mixture-of-experts, several GPUs, and
quantized weights with their scales (:class:`Scaling`), and their arithmetic.
Pure maths, no I/O.

:func:`gpuwhy.model.llm.estimate.scaled_estimate` applies them: it returns the
:class:`~gpuwhy.model.llm.result.LlmEstimate` of the whole group of GPUs plus a
:class:`~gpuwhy.model.llm.result.ScalingReport` that spells out the arithmetic;
with the default :class:`Scaling` its figures are the plain model's.

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

    t_allreduce = 2 x layers x (allreduce_latency          (N > 1, shape known)
                  + bytes x 2(N-1)/N / busbw)              (busbw: measured by bench --allreduce)

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

from ...errors import UsageError
from .dtypes import BYTES_PER_ELEMENT, normalize_dtype
from .roofline import AttentionShape, LlmGpu
from ...units import fmt_g, fmt_num

#: Latency of one all-reduce of a decode step's small activations, in seconds:
#: 10 us, a round figure assumed for an NCCL all-reduce of a few KiB over NVLink
#: (not a measurement). `gpuwhy bench --allreduce` measures this host's (and `gpuwhy llm`
#: then uses it), or pass one as ``--allreduce-latency`` (e.g. from nccl-tests' all_reduce_perf,
#: https://github.com/NVIDIA/nccl-tests).
DEFAULT_ALLREDUCE_LATENCY_S = 10e-6
DEFAULT_ALLREDUCE_SOURCE = ("assumed, not measured (measure with gpuwhy bench --allreduce, or nccl-tests all_reduce_perf: "
                            "https://github.com/NVIDIA/nccl-tests)")

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
    d = normalize_dtype(weight_dtype)
    bits = BYTES_PER_ELEMENT[d] * 8
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
        allreduce_busbw_gbs: the all-reduce's bus bandwidth (GB/s = 1e9 B/s) for the transfer term,
            from a `gpuwhy bench --allreduce` profile; None: the latency alone (small messages).
    """

    active_params: float | None = None
    num_gpus: int = 1
    bytes_per_param: float | None = None
    quant_group: int | None = None
    scale_bits: float = DEFAULT_SCALE_BITS
    allreduce_latency_s: float = DEFAULT_ALLREDUCE_LATENCY_S
    allreduce_source: str = DEFAULT_ALLREDUCE_SOURCE
    allreduce_busbw_gbs: float | None = None

    def __post_init__(self) -> None:
        if isinstance(self.num_gpus, bool) or not isinstance(self.num_gpus, int) or self.num_gpus < 1:
            raise UsageError(f"--num-gpus must be a whole number of GPUs, at least 1, got {self.num_gpus!r}")
        if self.active_params is not None and not (self.active_params > 0 and math.isfinite(self.active_params)):
            raise UsageError(f"--active-params must be greater than zero, got {self.active_params!r}")
        if self.bytes_per_param is not None and not (0 < self.bytes_per_param <= 8 and math.isfinite(self.bytes_per_param)):
            raise UsageError(f"--bytes-per-param must be above 0 and at most 8 (bytes per weight, e.g. 0.5625), got {self.bytes_per_param!r}")
        if not (self.allreduce_latency_s >= 0 and math.isfinite(self.allreduce_latency_s)):
            raise UsageError(f"--allreduce-latency must be zero or more seconds, got {self.allreduce_latency_s!r}")
        if self.allreduce_busbw_gbs is not None and not (self.allreduce_busbw_gbs > 0 and math.isfinite(self.allreduce_busbw_gbs)):
            raise UsageError(f"the all-reduce bus bandwidth must be above 0 GB/s, got {self.allreduce_busbw_gbs!r}")

    @property
    def is_default(self) -> bool:
        """True when nothing differs from the plain model (a dense model on one GPU, no scales)."""
        return self.active_params is None and self.num_gpus == 1 and self.bytes_per_param is None and self.quant_group is None


def effective_bytes_per_weight(weight_dtype: str, s: Scaling) -> tuple[float, str]:
    """``(bytes per weight, the arithmetic in words)`` for ``weight_dtype`` under ``s``.

    Raises:
        UsageError: see :func:`bits_per_weight`.
    """
    d = normalize_dtype(weight_dtype)
    if s.bytes_per_param is not None:
        if s.quant_group is not None:
            raise UsageError("--bytes-per-param sets the bytes per weight; drop --quant-group/--scale-bits or drop --bytes-per-param")
        return s.bytes_per_param, f"{fmt_g(s.bytes_per_param)} B per weight (--bytes-per-param)"
    bits = bits_per_weight(d, s.quant_group, s.scale_bits)
    elem = BYTES_PER_ELEMENT[d] * 8
    if s.quant_group is None:
        return bits / 8, f"{fmt_g(elem)}-bit {d} = {fmt_g(bits / 8)} B per weight" + (" (scales left out; --quant-group G counts them)" if d in _QUANTIZED else "")
    return bits / 8, f"{fmt_g(elem)}-bit {d} + a {fmt_g(s.scale_bits)}-bit scale per {s.quant_group} weights = {fmt_g(elem)} + {fmt_g(s.scale_bits)}/{s.quant_group} = {fmt_g(bits)} bits = {fmt_g(bits / 8)} B per weight"


def group_gpu(gpu: LlmGpu, num_gpus: int) -> LlmGpu:
    """The figures of ``num_gpus`` copies of ``gpu`` working as one: bandwidth,
    peak and memory times ``num_gpus``; named ``"4 x H100 SXM"``."""
    if num_gpus == 1:
        return gpu
    return LlmGpu(
        name=f"{num_gpus} x {gpu.name}",
        bandwidth=gpu.bandwidth * num_gpus,
        peak_flops=gpu.peak_flops * num_gpus,
        precision=gpu.precision,
        memory_bytes=None if gpu.memory_bytes is None else gpu.memory_bytes * num_gpus,
        source=gpu.source,
        precision_note=gpu.precision_note,
    )


def kv_split(num_gpus: int, shape: AttentionShape | None) -> int:
    """Ways the KV cache splits over ``num_gpus`` tensor-parallel GPUs: min(N, kv_heads)."""
    return num_gpus if shape is None else min(num_gpus, shape.kv_heads)


def allreduce_time(num_gpus: int, shape: AttentionShape | None, latency_s: float, message_bytes: float = 0.0,
                   busbw_gbs: float | None = None) -> tuple[int, float]:
    """``(all-reduces per step, seconds)`` for N > 1 GPUs with a shape, else (0, 0): 2 x layers
    all-reduces, each ``latency_s`` plus, with a measured bus bandwidth, its transfer time
    ``message_bytes x 2(N-1)/N / busbw`` (the bytes each GPU moves in a ring all-reduce over the
    bus bandwidth: nccl-tests' PERFORMANCE.md convention, busbw = algbw x 2(N-1)/N)."""
    if num_gpus <= 1 or shape is None:
        return 0, 0.0
    n = ALLREDUCES_PER_LAYER * shape.layers
    transfer = message_bytes * 2 * (num_gpus - 1) / num_gpus / (busbw_gbs * 1e9) if busbw_gbs else 0.0
    return n, n * (latency_s + transfer)


#: Bytes per activation element an all-reduce of tensor parallelism moves (bf16/fp16 activations).
ACTIVATION_BYTES = 2


def allreduce_message_bytes(batch: int, shape: AttentionShape | None) -> float:
    """Bytes of one decode step's all-reduce: ``batch`` tokens x the model width (query heads x head
    size) x :data:`ACTIVATION_BYTES`; 0 without a shape."""
    if shape is None:
        return 0.0
    return float(batch * (shape.heads or shape.kv_heads) * shape.head_dim * ACTIVATION_BYTES)


__all__ = [
    "ALLREDUCES_PER_LAYER",
    "DEFAULT_ALLREDUCE_LATENCY_S",
    "DEFAULT_SCALE_BITS",
    "Scaling",
    "ACTIVATION_BYTES",
    "allreduce_message_bytes",
    "allreduce_time",
    "bits_per_weight",
    "effective_bytes_per_weight",
    "group_gpu",
    "kv_split",
]
