"""Speculative decoding on the roofline: tokens per target step, the draft's cost, the speed-up. Pure maths.

A small draft model proposes K tokens; the target model checks all of them in
one forward pass and keeps the longest accepted prefix, plus one token of its
own. Under the standard i.i.d. acceptance model (each drafted token is accepted
with the same probability A, independently: Leviathan, Kalman & Matias, "Fast
Inference from Transformers via Speculative Decoding", ICML 2023,
arXiv:2211.17192, section 3.1) the expected tokens per target step are

    E = (1 - A^(K+1)) / (1 - A)            (K + 1 at A = 1)

One cycle costs K draft decode steps plus one target verify step (each from its
own roofline, :func:`gpuwhy.model.llm.roofline.decode_step`): the verify step
reads the target's weights and KV cache once, like a plain decode step, and
does K + 1 tokens' FLOPs per sequence. So

    cycle      = K x t_draft + t_verify
    speed-up   = E x t_step / cycle        (t_step: the plain decode step)
    tokens/s   = E / cycle per sequence

Left out: the draft's own KV-cache writes and the rejection sampling, and that
acceptance varies from token to token (real A is measured per workload).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...errors import UsageError
from ...units import fmt_g, fmt_num, fmt_rate, fmt_time
from .roofline import AttentionShape, DecodeStep, LlmGpu, decode_step

PAPER = "Leviathan, Kalman & Matias, ICML 2023, arXiv:2211.17192"


def expected_tokens(k: int, acceptance: float) -> float:
    """Expected tokens per target step, (1 - A^(K+1)) / (1 - A), for ``k`` drafted
    tokens each accepted with probability ``acceptance`` (K + 1 at A = 1).

    E.g. A = 0.8, K = 5: (1 - 0.8^6) / 0.2 = 3.689.

    Raises:
        UsageError: ``k`` not a whole number >= 1, or ``acceptance`` outside 0-1.
    """
    check_speculative(k, acceptance)
    if acceptance == 1.0:
        return float(k + 1)
    return (1.0 - acceptance ** (k + 1)) / (1.0 - acceptance)


def check_speculative(k: Any, acceptance: Any) -> None:
    """Raise :class:`UsageError` unless ``k`` is a whole number >= 1 and ``acceptance`` a number in 0-1."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise UsageError(f"--speculative K must be a whole number of drafted tokens, 1 or more, got {k!r}")
    if isinstance(acceptance, bool) or not isinstance(acceptance, (int, float)) or not (0.0 <= acceptance <= 1.0):
        raise UsageError(f"--acceptance must be a probability from 0 to 1 (e.g. 0.8), got {acceptance!r}")


@dataclass(frozen=True)
class Speculative:
    """Speculative decoding of one target decode step.

    Attributes:
        k: drafted tokens per cycle; ``acceptance``: per-token acceptance probability.
        tokens_per_step: expected tokens per target step (:func:`expected_tokens`).
        draft: ``"<name>"`` or ``"<params> parameters"``; None without a draft (its cost left out).
        draft_step: one draft decode step (None without a draft).
        target_step_s: the plain decode step (s); ``verify_step_s``: the target checking K + 1 tokens (s).
        cycle_s: K draft steps + the verify step (s).
        speedup: tokens_per_step x target_step_s / cycle_s.
        tokens_per_s_per_seq, tokens_per_s_total: the ceiling with speculation.
        lines: the arithmetic in words; ``notes``: sentences.
    """

    k: int
    acceptance: float
    tokens_per_step: float
    draft: str | None
    draft_step: DecodeStep | None
    target_step_s: float
    verify_step_s: float
    cycle_s: float
    speedup: float
    tokens_per_s_per_seq: float
    tokens_per_s_total: float
    lines: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain data for ``--json`` (seconds, tokens/s)."""
        return {
            "draft_tokens_per_step": self.k,
            "acceptance_fraction": self.acceptance,
            "model": "i.i.d. acceptance (" + PAPER + ")",
            "tokens_per_step": self.tokens_per_step,
            "draft": self.draft,
            "draft_step": None if self.draft_step is None else self.draft_step.to_dict(),
            "draft_step_s": None if self.draft_step is None else self.draft_step.step_time_s,
            "target_step_s": self.target_step_s,
            "verify_step_s": self.verify_step_s,
            "cycle_s": self.cycle_s,
            "speedup": self.speedup,
            "tokens_per_s_per_seq": self.tokens_per_s_per_seq,
            "tokens_per_s_total": self.tokens_per_s_total,
            "lines": list(self.lines),
            "notes": list(self.notes),
        }


def verify_step_s(step: DecodeStep, k: int) -> float:
    """Seconds of the target checking ``k`` + 1 tokens per sequence: the step's bytes once,
    its FLOPs x (k + 1), plus what the step adds beyond max(t_memory, t_compute) (all-reduces)."""
    extra = step.step_time_s - max(step.t_memory_s, step.t_compute_s)
    return max(step.t_memory_s, step.t_compute_s * (k + 1)) + extra


def speculative(
    target: DecodeStep,
    k: int,
    acceptance: float,
    gpu: LlmGpu | None = None,
    weight_dtype: str = "fp16",
    draft_params: float | None = None,
    draft_name: str | None = None,
    draft_shape: AttentionShape | None = None,
    kv_dtype: str | None = None,
    target_params: float | None = None,
) -> Speculative:
    """Speculative decoding of ``target`` (the plain decode step, its batch and context)
    with ``k`` drafted tokens accepted with probability ``acceptance``; the draft of
    ``draft_params`` parameters (and ``draft_shape``, for its KV cache) in ``weight_dtype``
    runs on ``gpu`` at the same batch and context. Without a draft its cost is left out.

    Raises:
        UsageError: a bad ``k`` or ``acceptance``; a draft without ``gpu``; a draft at
            least as large as ``target_params``.
    """
    e = expected_tokens(k, acceptance)
    notes = [f"i.i.d. acceptance ({PAPER}): every drafted token is accepted with probability {fmt_g(acceptance)}, independently"]
    draft_step = None
    if draft_params is not None:
        if gpu is None:
            raise UsageError("the draft's cost needs the GPU's figures")
        if target_params is not None and draft_params >= target_params:
            raise UsageError(f"the draft ({fmt_num(draft_params / 1e9, 4)}B parameters) must be smaller than the target "
                             f"({fmt_num(target_params / 1e9, 4)}B); give a smaller --draft-params or --draft-model")
        draft_step = decode_step(draft_params, weight_dtype, gpu, target.batch, draft_shape, kv_dtype, target.context if draft_shape else 0)
    verify = verify_step_s(target, k)
    extra = target.step_time_s - max(target.t_memory_s, target.t_compute_s)
    t_draft = draft_step.step_time_s if draft_step is not None else 0.0
    cycle = k * t_draft + verify
    speedup = e * target.step_time_s / cycle
    per_seq = e / cycle
    name = draft_name or (None if draft_params is None else f"{fmt_num(draft_params / 1e9)}B parameters")
    lines = [
        f"tokens per target step: (1 - A^(K+1)) / (1 - A) = (1 - {fmt_g(acceptance)}^{k + 1}) / (1 - {fmt_g(acceptance)}) = {fmt_num(e, 4)}"
        if acceptance < 1 else f"tokens per target step: K + 1 = {k + 1} (every drafted token accepted)",
        f"verify step: the target reads its bytes once and does {k + 1} tokens' FLOPs: "
        f"max({fmt_time(target.t_memory_s, 4)}, {k + 1} x {fmt_time(target.t_compute_s, 4)})"
        + (f" + {fmt_time(extra, 4)} (all-reduces)" if extra > 0 else "") + f" = {fmt_time(verify, 4)}",
    ]
    if draft_step is not None:
        lines.append(f"draft step ({name}): {fmt_time(draft_step.step_time_s, 4)}, {draft_step.regime}-bound; "
                     f"{k} per cycle = {fmt_time(k * t_draft, 4)}")
        if draft_shape is None:
            notes.append("the draft has no shape: its KV-cache read is left out (give --draft-model NAME)")
    else:
        notes.append("no draft given: its cost is left out, so the speed-up is an upper bound (give --draft-params P or --draft-model NAME)")
    lines.append(f"cycle: {k} x {fmt_time(t_draft, 4)} + {fmt_time(verify, 4)} = {fmt_time(cycle, 4)}" if draft_step is not None
                 else f"cycle: the verify step alone (the draft's cost left out) = {fmt_time(cycle, 4)}")
    lines.append(f"speed-up: {fmt_num(e, 4)} tokens x {fmt_time(target.step_time_s, 4)} / {fmt_time(cycle, 4)} = {fmt_num(speedup)}x -> "
                 f"{fmt_rate(per_seq)} tokens/s per sequence" + (f", {fmt_rate(per_seq * target.batch)} in total" if target.batch > 1 else ""))
    return Speculative(k, float(acceptance), e, name, draft_step, target.step_time_s, verify, cycle, speedup, per_seq,
                       per_seq * target.batch, tuple(lines), tuple(notes))


__all__ = ["PAPER", "Speculative", "check_speculative", "expected_tokens", "speculative", "verify_step_s"]
