"""The LLM estimate, built in one place (:func:`scaled_estimate`): decode step,
ceiling, batch ridge, largest batch that fits, KV cache, prefill and batch sweep,
with mixture of experts, several GPUs and quantization scales. :func:`estimate`
is the plain model (the default :class:`~gpuwhy.model.llm.scaling.Scaling`).
Pure maths, no I/O.

The formulas and their sources are in :mod:`gpuwhy.model.llm.roofline`.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Sequence

from ...errors import UsageError
from .dtypes import default_kv_dtype, normalize_dtype
from .result import LEAVES_OUT, LlmEstimate, ScaledEstimate, ScalingReport, ceiling_sentence
from .roofline import (
    AttentionShape,
    DecodeStep,
    KvCache,
    LlmGpu,
    StepTerms,
    batch_ridge,
    batch_ridge_with_kv,
    check_count,
    decode_step,
    kv_cache,
    max_batch_fit,
    prefill,
)
from .scaling import (
    ALLREDUCES_PER_LAYER,
    DEFAULT_ALLREDUCE_SOURCE,
    Scaling,
    allreduce_message_bytes,
    allreduce_time,
    effective_bytes_per_weight,
    group_gpu,
    kv_split,
)
from ...units import fmt_g, fmt_num, fmt_params, fmt_rate, fmt_si, fmt_time

#: Batch sizes of ``--sweep-batch`` (the batch asked for, the batch ridge and the
#: largest batch that fits are added).
DEFAULT_SWEEP = (1, 8, 32, 64, 128, 256, 512, 1024)


def sweep_batches(batch: int, ridge: float, max_batch: int | None, base: Sequence[int] = DEFAULT_SWEEP) -> tuple[int, ...]:
    """Batch sizes for a sweep: ``base`` plus the asked batch, the rounded batch
    ridge and the largest batch that fits (when >= 1), sorted and unique."""
    sizes = set(base) | {batch}
    if math.isfinite(ridge) and ridge >= 1:
        sizes.add(int(round(ridge)))
    if max_batch:
        sizes.add(max_batch)
    return tuple(sorted(sizes))


def _check_request(batch: int, params: float, prompt_len: int | None, context: int | None) -> None:
    """Check the counts of a :func:`scaled_estimate` request, in this order: ``batch`` >= 1,
    ``params`` > 0 and finite, ``prompt_len`` >= 1 and ``context`` >= 0 (each when
    not None).

    Raises:
        UsageError: naming the first bad value.
    """
    check_count(batch, "batch")
    if not (params > 0 and math.isfinite(params)):
        raise UsageError(f"params must be greater than zero, got {params!r}")
    if prompt_len is not None:
        check_count(prompt_len, "prompt length")
    if context is not None:
        check_count(context, "context", allow_zero=True)


def _decode_context(
    gpu: LlmGpu,
    shape: AttentionShape | None,
    context: int | None,
    prompt_len: int | None,
    max_context: int | None,
    notes: Sequence[str] = (),
) -> tuple[int, int | None, list[str]]:
    """``(context, fit_len, notes)`` of a :func:`scaled_estimate` request.

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


def fit_reason(max_batch: int | None, weight_bytes: float, kv_bytes_per_seq: float | None, memory_bytes: float | None,
               seq_len: int | None, gpu_name: str) -> str | None:
    """The largest batch that fits in one line, naming what does not fit when none does:
    the weights, or one sequence's KV cache beside them. None when unknown (no shape or memory).
    Bytes in, GB (1e9 B) in the words."""
    if max_batch is None or memory_bytes is None or not kv_bytes_per_seq:
        return None
    free = memory_bytes - weight_bytes
    if weight_bytes > memory_bytes:
        return f"none: the weights alone ({fmt_num(weight_bytes / 1e9)} GB) exceed the {gpu_name}'s {fmt_num(memory_bytes / 1e9)} GB"
    if max_batch == 0:
        return (f"none: one sequence's KV cache at {seq_len:,} tokens ({fmt_num(kv_bytes_per_seq / 1e9)} GB) does not fit in the "
                f"{fmt_num(free / 1e9)} GB left beside the weights ({fmt_num(weight_bytes / 1e9)} GB)")
    return (f"{max_batch:,} sequences of {seq_len:,} tokens: their KV cache ({fmt_num(max_batch * kv_bytes_per_seq / 1e9)} GB, "
            f"{fmt_num(kv_bytes_per_seq / 1e9)} GB each) fits in the {fmt_num(free / 1e9)} GB left beside the weights; one more does not")


def _kv_fit(
    shape: AttentionShape | None,
    kv_dtype: str,
    fit_len: int | None,
    batch: int,
    gpu: LlmGpu,
    weight_bytes: float,
    kv_copies: float,
    remedy: str,
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
            f"the weights ({fmt_num(weight_bytes / 1e9)} GB) do not fit in the {gpu.name}'s {fmt_num(gpu.memory_bytes / 1e9)} GB; "
            f"the figures assume they did (quantize the weights or {remedy})"
        )
    elif max_b == 0:
        warning = f"batch {batch} does not fit: " + str(fit_reason(max_b, weight_bytes, kv.bytes_per_seq * kv_copies, gpu.memory_bytes,
                                                                  fit_len, gpu.name)).removeprefix("none: ")
    elif max_b is not None and batch > max_b:
        warning = (
            f"batch {batch} does not fit: at {fit_len} tokens per sequence the {gpu.name}'s memory holds the KV cache "
            f"of at most {max_b} sequences beside the weights"
        )
    return kv, max_b, warning


def _active_params(params: float, s: Scaling) -> float:
    """The parameters each token uses (``--active-params``, else all of them).

    Raises:
        UsageError: more than ``params``.
    """
    active = params if s.active_params is None else s.active_params
    if active > params * (1 + 1e-9):
        raise UsageError(f"--active-params {fmt_num(active, 4)} is more than the {fmt_num(params, 4)} parameters; give the parameters each token uses (at most --params)")
    return active


def _note_gpu_split(n: int, shape: AttentionShape | None, split: int, warnings: list[str], notes: list[str]) -> None:
    """On ``n`` GPUs: a warning when there is no shape for the all-reduce allowance, a note when the
    KV cache splits fewer than ``n`` ways (``split``: its ways)."""
    if n > 1 and shape is None:
        warnings.append("--num-gpus without a model shape: the all-reduce allowance (2 per layer) is left out; give --model NAME or --layers/--kv-heads/--head-dim")
    if n > 1 and shape is not None and n > shape.kv_heads:
        notes.append(f"{n} GPUs but {shape.kv_heads} KV heads: each KV head is kept on {n // split if n % split == 0 else fmt_num(n / split)} GPUs, so the KV cache splits only {split} ways")


def _prefill(params: float, wd: str, grp, prompt_len: int, batch: int, shape: AttentionShape | None, kvd: str,
             terms: StepTerms, active: float, notes: list[str]):
    """The prefill of ``prompt_len`` tokens per sequence (:func:`prefill`), with a note for what a
    mixture of experts and the all-reduce allowance mean for it."""
    pf = prefill(params, wd, grp, prompt_len, batch, shape, kvd, terms=terms)
    if active < params:
        notes.append("prefill reads all the weights once: a long prompt's tokens reach every expert")
    if terms.overhead_s:
        notes.append("prefill's all-reduces carry prompt x hidden activations; the allowance is decode's (one token per "
                     "sequence), so a long prompt's transfer time is left out")
    return pf


def scaled_estimate(
    params: float,
    weight_dtype: str,
    gpu: LlmGpu,
    scaling: Scaling = Scaling(),
    batch: int = 1,
    shape: AttentionShape | None = None,
    kv_dtype: str | None = None,
    context: int | None = None,
    prompt_len: int | None = None,
    max_context: int | None = None,
    model: str | None = None,
    sweep: bool | Sequence[int] = False,
    notes: Sequence[str] = (),
    *,
    plain_wording: bool = False,
) -> ScaledEstimate:
    """Decode step, ceiling, batch ridge, largest batch that fits, KV cache, prefill
    and (optionally) a batch sweep for ``params`` weights of ``weight_dtype`` on
    ``scaling.num_gpus`` copies of ``gpu`` (one GPU's figures), with mixture of
    experts and quantization scales (see :mod:`gpuwhy.model.llm.scaling`).

    ``context`` (cached tokens per sequence at the decode step) defaults to
    ``prompt_len``, else 0. The largest batch that fits uses ``context``, else
    ``prompt_len``, else ``max_context`` tokens per sequence. ``sweep`` is True
    for :func:`sweep_batches` or a sequence of batch sizes. ``notes`` are passed
    through to the result, before the model's own. ``plain_wording`` words the
    warnings and what is left out without the scaling options (as `gpuwhy llm`
    prints when none is given).

    Raises:
        UsageError: for an unknown dtype, a non-positive params/batch/prompt
            length, a negative context, a context beyond ``max_context``,
            active parameters above the parameter count, or conflicting
            bytes-per-weight options.
    """
    wd = normalize_dtype(weight_dtype)
    kvd = normalize_dtype(kv_dtype, "--kv-dtype") if kv_dtype else default_kv_dtype(wd)
    _check_request(batch, params, prompt_len, context)
    s = scaling
    active = _active_params(params, s)
    n = s.num_gpus
    bpw, bpw_text = effective_bytes_per_weight(wd, s)
    ctx, fit_len, notes = _decode_context(gpu, shape, context, prompt_len, max_context, notes)
    warnings: list[str] = []
    grp = group_gpu(gpu, n)
    split = kv_split(n, shape)
    n_ar, comm = allreduce_time(n, shape, s.allreduce_latency_s, allreduce_message_bytes(batch, shape),
                                s.allreduce_busbw_gbs)
    terms = StepTerms(bytes_per_weight=bpw, active_params=active, kv_copies=n / split, overhead_s=comm)
    _note_gpu_split(n, shape, split, warnings, notes)

    step = decode_step(params, wd, grp, batch, shape, kvd, ctx, fit_len, terms=terms)
    # The other end of the mixture-of-experts range: every token of the batch on different experts.
    step_spread = decode_step(params, wd, grp, batch, shape, kvd, ctx, fit_len, terms=terms, read_params=min(params, batch * active))
    weight_fit = params * bpw
    ridge = batch_ridge(grp.peak_flops, bpw, grp.bandwidth)
    ridge_kv = None
    if shape is not None and ctx > 0:
        ridge_kv = batch_ridge_with_kv(active, bpw, grp, shape, kvd, ctx, kv_copies=terms.kv_copies)
    remedy = "split the model across GPUs" if plain_wording else "use more GPUs"
    kv, max_b, fit_warning = _kv_fit(shape, kvd, fit_len, batch, grp, weight_fit, terms.kv_copies, remedy)
    if fit_warning:
        warnings.append(fit_warning)
    pf = _prefill(params, wd, grp, prompt_len, batch, shape, kvd, terms, active, notes) if prompt_len else None
    rows: tuple[DecodeStep, ...] = ()
    if sweep:
        sizes = sweep_batches(batch, ridge, max_b) if sweep is True else tuple(sweep)
        rows = tuple(decode_step(params, wd, grp, b, shape, kvd, ctx, fit_len, terms=terms) for b in sizes)

    est = LlmEstimate(
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
        max_batch_reason=fit_reason(max_b, weight_fit, None if kv is None or kv.bytes_per_seq is None else kv.bytes_per_seq * terms.kv_copies,
                                    grp.memory_bytes, fit_len, grp.name),
        fit_seq_len=fit_len if shape is not None else None,
        kv=kv,
        prefill=pf,
        sweep=rows,
        ceiling=ceiling_sentence(step, grp.name, grp.precision),
        notes=tuple(notes),
        warnings=tuple(warnings),
        leaves_out=LEAVES_OUT if plain_wording else _leaves_out(s),
    )
    rep = ScalingReport(
        params=params,
        active_params=active,
        bytes_per_weight=bpw,
        bytes_per_weight_text=bpw_text,
        kv_split=split,
        gpu=gpu,
        inputs=s,
        allreduces_per_step=n_ar,
        allreduce_time_s=comm,
        step=step,
        step_spread=step_spread,
        batch_ridge_spread=ridge * params / active if active < params else None,
    )
    return ScaledEstimate(est, replace(rep, lines=_arithmetic(rep, grp, shape, ridge)))


def estimate(
    params: float,
    weight_dtype: str,
    gpu: LlmGpu,
    batch: int = 1,
    **request: Any,
) -> LlmEstimate:
    """The plain model: :func:`scaled_estimate` with the default :class:`Scaling` (a
    dense model on one GPU, quantization scales left out), worded without the
    scaling options. ``request``: the keywords of :func:`scaled_estimate` after
    ``batch`` (shape, kv_dtype, context, prompt_len, max_context, model, sweep, notes).

    Raises:
        UsageError: what :func:`scaled_estimate` raises.
    """
    return scaled_estimate(params, weight_dtype, gpu, Scaling(), batch, plain_wording=True, **request).estimate


def _leaves_out(s: Scaling) -> tuple[str, ...]:
    """What the model leaves out, worded for the scaling options ``s``."""
    return (
        LEAVES_OUT[0],
        "the write of each new token's KV entries and sampling" + ("" if (s.quant_group or s.bytes_per_param) else ", and the scales of quantized formats (--quant-group counts them)"),
        "kernel-launch and host overhead"
        + ((", and the all-reduces' transfer time (only their latency is counted: `gpuwhy bench --allreduce` measures "
            "the bus bandwidth that adds it)" if not s.allreduce_busbw_gbs else "") if s.num_gpus > 1
           else ", and communication between GPUs"),
    )


def _arithmetic(rep: ScalingReport, grp: LlmGpu, shape: AttentionShape | None, ridge: float) -> tuple[str, ...]:
    """The arithmetic of ``rep`` in words, a line each; ``grp`` is the group's figures,
    ``ridge`` the batch ridge with the batch's tokens sharing experts."""
    params, active, bpw, n, gpu = rep.params, rep.active_params, rep.bytes_per_weight, rep.num_gpus, rep.gpu
    step, step_spread, comm, batch = rep.step, rep.step_spread, rep.allreduce_time_s, rep.step.batch
    weight_fit = rep.weight_bytes_total
    lines = [f"bytes per weight: {rep.bytes_per_weight_text}"]
    per_gpu = f"; per GPU / {n} = {fmt_si(weight_fit / n, 'B', 4)}" if n > 1 else ""
    lines.append(f"weights to fit: {fmt_params(params)} params x {fmt_g(bpw)} B = {fmt_si(weight_fit, 'B', 4)}{per_gpu}")
    if active < params:
        extra = ""
        if batch > 1:
            extra = f"; at batch {batch} tokens on different experts read up to min(params, {batch} x active) x {fmt_g(bpw)} B = {fmt_si(step_spread.weight_bytes, 'B', 4)}"
        lines.append(f"weights read per step: {fmt_params(active)} active params x {fmt_g(bpw)} B = {fmt_si(active * bpw, 'B', 4)} (each token reads only its experts{extra})")
        lines.append(f"FLOPs per token: 2 x {fmt_params(active)} active params = {fmt_si(2 * active, 'FLOP', 4)}" + (" + attention" if shape is not None else ""))
    if n > 1:
        mem = f", memory {n} x {fmt_g(gpu.memory_bytes / 1e9)} GB = {fmt_g(grp.memory_bytes / 1e9)} GB" if gpu.memory_bytes else ""
        lines.append(
            f"{n} GPUs (tensor parallel): bandwidth {n} x {fmt_g(gpu.bandwidth / 1e9)} GB/s = {fmt_g(grp.bandwidth / 1e9)} GB/s, "
            f"peak {n} x {fmt_g(gpu.peak_flops / 1e12)} = {fmt_g(grp.peak_flops / 1e12)} TFLOP/s{mem}"
        )
    each = f" (each GPU reads {fmt_si(step.bytes / n, 'B', 4)} at {fmt_g(gpu.bandwidth / 1e9)} GB/s)" if n > 1 else ""
    lines.append(
        f"times: t_memory = {fmt_si(step.bytes, 'B', 4)} / {fmt_g(grp.bandwidth / 1e9)} GB/s = {fmt_time(step.t_memory_s, 4)}{each}; "
        f"t_compute = {fmt_si(step.flops, 'FLOP', 4)} / {fmt_g(grp.peak_flops / 1e12)} TFLOP/s = {fmt_time(step.t_compute_s, 4)}"
    )
    if n > 1 and shape is not None:
        s = rep.inputs
        why = "assumed; measure it with `gpuwhy bench --allreduce` or set --allreduce-latency" if s.allreduce_source == DEFAULT_ALLREDUCE_SOURCE else s.allreduce_source
        each = fmt_time(s.allreduce_latency_s, 4)
        if s.allreduce_busbw_gbs:
            each = (f"({each} + {fmt_si(allreduce_message_bytes(batch, shape), 'B', 4)} x 2({n}-1)/{n} at "
                    f"{fmt_g(s.allreduce_busbw_gbs)} GB/s bus bandwidth)")
        lines.append(f"all-reduce allowance: {ALLREDUCES_PER_LAYER} per layer x {shape.layers} layers x {each} = {fmt_time(comm, 4)} per step ({why})")
    comm_txt = f" + {fmt_time(comm, 4)}" if comm else ""
    lines.append(
        f"step: max({fmt_time(step.t_memory_s, 4)}, {fmt_time(step.t_compute_s, 4)}){comm_txt} = {fmt_time(step.step_time_s, 4)} -> "
        f"{fmt_rate(step.tokens_per_s_per_seq)} tokens/s per sequence" + (f", {fmt_rate(step.tokens_per_s_total)} in total" if batch > 1 else "")
    )
    if active < params and batch > 1 and step_spread.step_time_s > step.step_time_s:
        lines.append(f"experts spread: with every token on different experts, step {fmt_time(step_spread.step_time_s, 4)} -> {fmt_rate(step_spread.tokens_per_s_total)} tokens/s in total")
    if rep.batch_ridge_spread is not None:
        lines.append(
            f"batch ridge: {fmt_num(ridge)} if the batch's tokens share experts; {fmt_num(rep.batch_ridge_spread)} (x params/active) once they spread over all experts"
        )
    return tuple(lines)
