"""Model FLOPs utilisation (MFU): the FLOPs a model needs per token, times tokens/s, over the GPUs' dense peak. Pure maths.

    MFU = FLOPs per token x tokens/s / (GPUs x dense peak per GPU)

FLOPs per token (N parameters; with the shape, L layers of width H and S tokens
of context):

- training: 6 N (forward 2 N, backward 4 N) + 12 L H S for attention (the
  Q K^T and P V products forward and backward), the formula of Chowdhery et al.,
  "PaLM: Scaling Language Modeling with Pathways", arXiv:2204.02311 (2022),
  appendix B;
- inference: 2 N (Kaplan et al., arXiv:2001.08361, C_forward ~ 2N) + 4 L H S,
  the forward third of the same attention term.

"Model" FLOPs count what the model needs, not what the hardware did: activation
recomputation and padding are not credited, so MFU is at most the hardware
FLOPs utilisation. Below 30% is called out as a cost emergency (the course's
threshold): most of the GPU-hours bought do no model maths.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ...errors import UsageError
from ...units import fmt_g, fmt_num

#: Below this MFU (%) the result is called out as a cost emergency.
MFU_ALARM_PCT = 30.0
PALM = "Chowdhery et al., PaLM, arXiv:2204.02311, appendix B"


@dataclass(frozen=True)
class MfuShape:
    """``layers`` (L), ``hidden`` width (H) and ``seq_len`` (S, tokens of context) for the attention term."""

    layers: int
    hidden: int
    seq_len: int

    def __post_init__(self) -> None:
        for name in ("layers", "hidden", "seq_len"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise UsageError(f"--{name.replace('_', '-')} must be a whole number greater than zero, got {v!r}")


@dataclass(frozen=True)
class Mfu:
    """The MFU of a run.

    Attributes:
        params: N; ``mode``: ``"train"`` or ``"infer"``.
        dense_flops_per_token, attention_flops_per_token, flops_per_token: FLOP.
        tokens_per_s: all GPUs together; ``gpus``: how many.
        gpu, precision: the sheet and the peak used; ``peak_flops_per_gpu``: FLOP/s (dense).
        achieved_flops: model FLOP/s of all GPUs; ``mfu_pct``: 0-100 (more means the inputs are wrong).
        verdict: ``"cost emergency"`` below :data:`MFU_ALARM_PCT`, else ``"ok"`` (above 100 is refused).
        lines, notes: the arithmetic and sentences.
    """

    params: float
    mode: str
    shape: MfuShape | None
    dense_flops_per_token: float
    attention_flops_per_token: float
    flops_per_token: float
    tokens_per_s: float
    gpus: int
    gpu: str
    precision: str
    peak_flops_per_gpu: float
    achieved_flops: float
    mfu_pct: float
    verdict: str
    lines: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def tokens_per_s_at_full(self) -> float:
        """Tokens/s at 100% MFU."""
        return self.gpus * self.peak_flops_per_gpu / self.flops_per_token

    def to_dict(self) -> dict[str, Any]:
        """Plain data for ``--json`` (FLOP, FLOP/s as TFLOP/s where the key says, percent 0-100)."""
        return {
            "params": self.params, "mode": self.mode,
            "shape": None if self.shape is None else {"layers": self.shape.layers, "hidden": self.shape.hidden, "seq_len": self.shape.seq_len},
            "dense_flops_per_token": self.dense_flops_per_token, "attention_flops_per_token": self.attention_flops_per_token,
            "flops_per_token": self.flops_per_token, "tokens_per_s": self.tokens_per_s, "gpus": self.gpus, "gpu": self.gpu,
            "precision": self.precision, "peak_tflops_per_gpu": self.peak_flops_per_gpu / 1e12,
            "achieved_tflops": self.achieved_flops / 1e12, "achieved_tflops_per_gpu": self.achieved_flops / self.gpus / 1e12,
            "mfu_pct": self.mfu_pct, "alarm_below_pct": MFU_ALARM_PCT, "verdict": self.verdict,
            "tokens_per_s_at_100pct": self.tokens_per_s_at_full, "lines": list(self.lines), "notes": list(self.notes),
        }


def mfu(params: float, tokens_per_s: float, gpus: int, peak_flops_per_gpu: float, gpu: str = "GPU", precision: str = "bf16",
        train: bool = True, shape: MfuShape | None = None) -> Mfu:
    """The :class:`Mfu` of ``tokens_per_s`` (all GPUs) of a model of ``params`` parameters on
    ``gpus`` GPUs of ``peak_flops_per_gpu`` (dense FLOP/s), training or (``train=False``) inference.

    E.g. 8B parameters training at 12,000 tokens/s on 8 H100 SXM (989.5 TFLOP/s bf16):
    6 x 8e9 x 12,000 / (8 x 989.5e12) = 7.28%.

    MFU above 100% is refused, not judged: the dense peak at the boost clock is 100% by
    definition, and a whole run (attention's softmax, norms, communication, the optimizer) spends
    time outside matrix maths, so published runs reach about 40-60%. Unlike a single kernel's figure
    (:data:`gpuwhy.model.roofline.limits.IMPOSSIBLE_FACTOR`), no margin above it is allowed: an
    overclock of 10-20% cannot lift a whole run past the dense peak it never reaches.

    Raises:
        UsageError: a count or rate that is not above zero, ``gpus`` not a whole number above zero,
            or an MFU above 100% (the message names it, the peak and what to check).
    """
    if not (params > 0 and math.isfinite(params)):
        raise UsageError(f"--params must be greater than zero, got {params!r}")
    if not (tokens_per_s > 0 and math.isfinite(tokens_per_s)):
        raise UsageError(f"--tokens-per-s must be greater than zero, got {tokens_per_s!r}")
    if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 1:
        raise UsageError(f"--gpus must be a whole number greater than zero, got {gpus!r}")
    if not (peak_flops_per_gpu > 0 and math.isfinite(peak_flops_per_gpu)):
        raise UsageError(f"the {gpu} peak must be greater than zero")
    dense_factor, attn_factor = (6.0, 12.0) if train else (2.0, 4.0)
    dense = dense_factor * params
    attn = attn_factor * shape.layers * shape.hidden * shape.seq_len if shape is not None else 0.0
    per_token = dense + attn
    achieved = per_token * tokens_per_s
    peak_total = gpus * peak_flops_per_gpu
    pct = 100.0 * achieved / peak_total
    if pct > 100.0:
        raise UsageError(f"MFU {fmt_num(pct)}% is impossible: {fmt_num(achieved / 1e12, 4)} TFLOP/s of model maths is above "
                         f"the {gpus} x {fmt_g(peak_flops_per_gpu / 1e12)} TFLOP/s {precision} dense peak of the {gpu} "
                         f"(100% MFU); check that --tokens-per-s counts all {gpus} GPUs together, the parameter count, "
                         "--gpus, --dtype and the GPU (the sheets hold dense peaks)")
    verdict = "cost emergency" if pct < MFU_ALARM_PCT else "ok"
    mode = "train" if train else "infer"
    attn_words = ""
    if shape is not None:
        attn_words = (f" + attention {fmt_g(attn_factor)} x {shape.layers} layers x {shape.hidden} hidden x {shape.seq_len} tokens"
                      f" = {fmt_num(dense, 4)} + {fmt_num(attn, 4)} = {fmt_num(per_token, 4)}")
    lines = [f"FLOPs per token: {fmt_g(dense_factor)} x {fmt_num(params, 4)} params = {fmt_num(dense, 4)}{attn_words}",
             f"model FLOP/s: {fmt_num(per_token, 4)} x {fmt_g(tokens_per_s)} tokens/s = {fmt_num(achieved / 1e12, 4)} TFLOP/s "
             f"({fmt_num(achieved / gpus / 1e12, 4)} per GPU)",
             f"peak: {gpus} x {fmt_g(peak_flops_per_gpu / 1e12)} TFLOP/s {precision} dense ({gpu}) = {fmt_num(peak_total / 1e12, 4)} TFLOP/s",
             f"MFU: {fmt_num(achieved / 1e12, 4)} / {fmt_num(peak_total / 1e12, 4)} = {fmt_num(pct)}%"]
    notes = [f"{'training 6N' if train else 'inference 2N'} FLOPs per token ({PALM}); model FLOPs exclude recomputation, "
             "so MFU is at most the hardware FLOPs utilisation"]
    if shape is None:
        notes.append("no --seq-len/--layers/--hidden: attention's FLOPs are left out (MFU reads low for long contexts)")
    if verdict == "cost emergency":
        notes.append(f"below {MFU_ALARM_PCT:.0f}%: a cost emergency; {100 - pct:.0f}% of the GPU time bought does no model maths "
                     f"(at 100% the same GPUs would do {peak_total / per_token:,.0f} tokens/s)")
    return Mfu(params, mode, shape, dense, attn, per_token, tokens_per_s, gpus, gpu, precision, peak_flops_per_gpu, achieved, pct,
               verdict, tuple(lines), tuple(notes))


__all__ = ["MFU_ALARM_PCT", "Mfu", "MfuShape", "mfu"]
