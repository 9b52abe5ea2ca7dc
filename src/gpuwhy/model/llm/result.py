"""What the LLM model returns: :class:`LlmEstimate` (with its ceiling sentence and
what it leaves out), and with the scaling options :class:`ScalingReport` and
:class:`ScaledEstimate`. Plain data, no I/O."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .roofline import AttentionShape, DecodeStep, KvCache, LlmGpu, Prefill
from .scaling import Scaling
from ...units import fmt_rate

#: The share of these ceilings real inference engines reach: about 60-85%, a
#: rule of thumb quoted in the design issue (gpuwhy issue 7), not a measurement.
ENGINE_EFFICIENCY = (0.60, 0.85)

#: What the model leaves out, for renderers and JSON (the engine efficiency,
#: :data:`ENGINE_EFFICIENCY`, is reported beside it).
LEAVES_OUT = (
    "activations (their DRAM traffic and memory footprint)",
    "the write of each new token's KV entries, sampling, and the scales of quantized formats",
    "kernel-launch and host overhead, and communication between GPUs",
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
            the weights (None when unknown); ``max_batch_reason`` says so in one
            line, naming what does not fit (:func:`gpuwhy.model.llm.estimate.fit_reason`).
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
    max_batch_reason: str | None = None

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
            "max_batch_reason": self.max_batch_reason,
            "fit_seq_len": self.fit_seq_len,
            "kv_cache": None if self.kv is None else self.kv.to_dict(),
            "prefill": None if self.prefill is None else self.prefill.to_dict(),
            "sweep": [s.to_dict() for s in self.sweep],
            "engine_efficiency": list(self.engine_efficiency),
            "leaves_out": list(self.leaves_out),
            "notes": list(self.notes),
            "warnings": list(self.warnings),
        }


@dataclass(frozen=True)
class ScalingReport:
    """The arithmetic mixture of experts, several GPUs and quantization scales add,
    for the reader to check.

    Attributes:
        params, active_params: all parameters, and those each token goes through.
        bytes_per_weight, bytes_per_weight_text: bytes per stored weight, and its
            arithmetic in words.
        kv_split: ways the KV cache splits over the GPUs.
        gpu: one GPU's figures (the estimate's ``gpu`` is the whole group's).
        inputs: the scaling inputs (GPUs, all-reduce latency in seconds and its source).
        allreduces_per_step, allreduce_time_s: all-reduces per decode step and
            their seconds.
        step: the headline decode step (the batch's tokens share experts).
        step_spread: the other end of the mixture-of-experts range (every token
            of the batch on different experts); equal to ``step`` for a dense
            model or batch 1.
        batch_ridge_spread: the batch ridge once tokens spread over all experts
            (None for a dense model).
        lines: the arithmetic in words.
    """

    params: float
    active_params: float
    bytes_per_weight: float
    bytes_per_weight_text: str
    kv_split: int
    gpu: LlmGpu
    inputs: Scaling
    allreduces_per_step: int
    allreduce_time_s: float
    step: DecodeStep
    step_spread: DecodeStep
    batch_ridge_spread: float | None
    lines: tuple[str, ...] = ()

    @property
    def num_gpus(self) -> int:
        """GPUs the model is split over."""
        return self.inputs.num_gpus

    @property
    def weight_bytes_total(self) -> float:
        """Bytes of all the weights: params x bytes per weight."""
        return self.params * self.bytes_per_weight

    @property
    def weight_bytes_per_gpu(self) -> float:
        """Bytes of weights each GPU holds."""
        return self.weight_bytes_total / self.num_gpus

    @property
    def weight_read_bytes_per_step(self) -> float:
        """Weight bytes the headline decode step reads."""
        return self.step.weight_bytes

    @property
    def weight_read_bytes_per_step_max(self) -> float:
        """Weight bytes a step reads with the batch's tokens on different experts."""
        return self.step_spread.weight_bytes

    @property
    def tokens_per_s_total(self) -> float:
        """Tokens/s of the whole batch, headline step."""
        return self.step.tokens_per_s_total

    @property
    def tokens_per_s_total_low(self) -> float:
        """Tokens/s of the whole batch with its tokens on different experts."""
        return self.step_spread.tokens_per_s_total

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
            "gpu": self.gpu.name,
            "memory_bandwidth_gbs_per_gpu": self.gpu.bandwidth / 1e9,
            "peak_tflops_per_gpu": self.gpu.peak_flops / 1e12,
            "memory_size_gb_per_gpu": None if self.gpu.memory_bytes is None else self.gpu.memory_bytes / 1e9,
            "allreduces_per_step": self.allreduces_per_step,
            "allreduce_latency_s": self.inputs.allreduce_latency_s,
            "allreduce_source": self.inputs.allreduce_source,
            "allreduce_busbw_gbs": self.inputs.allreduce_busbw_gbs,
            "allreduce_time_s": self.allreduce_time_s,
            "step_time_s": self.step.step_time_s,
            "step_time_max_s": self.step_spread.step_time_s,
            "tokens_per_s_total": self.tokens_per_s_total,
            "tokens_per_s_total_low": self.tokens_per_s_total_low,
            "batch_ridge_spread": self.batch_ridge_spread,
            "lines": list(self.lines),
        }


@dataclass(frozen=True)
class ScaledEstimate:
    """:class:`LlmEstimate` for the whole group of GPUs, plus the :class:`ScalingReport`."""

    estimate: LlmEstimate
    scaling: ScalingReport

    def to_dict(self) -> dict[str, Any]:
        """The :class:`LlmEstimate` document with a ``scaling`` key added."""
        out = self.estimate.to_dict()
        out["scaling"] = self.scaling.to_dict()
        return out
