"""`gpuwhy llm`: the roofline model of LLM inference (decode, prefill, KV cache, batch ridge),
speculative decoding and the cost per token."""

from __future__ import annotations

from typing import List, Optional

import typer

from .app import app
from .common import CsvOpt, GpuOpt, JsonOpt, SpecsOpt, noted
from .llm_options import LlmText, ScalingText, ServingText, scaling_options, serving_options

_DTYPE_HELP = "fp16|bf16|fp8|int8|int4|fp4|fp32"


@app.command("llm")
@scaling_options
@serving_options
def llm_cmd(
    params: Optional[str] = typer.Option(
        None, "--params", metavar="P", help="Parameter count: 3B, 124M, 8e9, 70.6B (here B means billion; k, M, T too)."
    ),
    weight_dtype: Optional[str] = typer.Option(
        None, "--weight-dtype", metavar="DTYPE", help=f"{_DTYPE_HELP} (default fp16, or the --model's published dtype)."
    ),
    batch: str = typer.Option("1", "--batch", metavar="B", help="Sequences decoded together."),
    gpu: GpuOpt = None,
    measured: bool = typer.Option(False, "--measured", help="Not built yet for llm (it uses the spec sheet); classify/compare/roofline --measured read bench profiles."),
    prompt_len: Optional[str] = typer.Option(None, "--prompt-len", metavar="L", help="Prompt tokens: adds prefill and time to first token."),
    context: Optional[str] = typer.Option(
        None, "--context", metavar="C", help="Tokens already cached per sequence at the decode step (default: --prompt-len, else 0)."
    ),
    layers: Optional[str] = typer.Option(None, "--layers", metavar="N", help="Transformer blocks (with --kv-heads and --head-dim)."),
    kv_heads: Optional[str] = typer.Option(None, "--kv-heads", metavar="H", help="Key/value heads per layer."),
    head_dim: Optional[str] = typer.Option(None, "--head-dim", metavar="D", help="Elements per head."),
    heads: Optional[str] = typer.Option(
        None, "--heads", metavar="H", help="Query heads per layer, for attention FLOPs (default: --kv-heads)."
    ),
    model: Optional[str] = typer.Option(None, "--model", metavar="NAME", help="A bundled or --models shape: gpt2, llama-3-8b, llama-3-70b, llama-3.2-3b."),
    models: Optional[List[str]] = typer.Option(
        None, "--models", metavar="DIR", help="Extra folder of model-shape YAML files. Repeatable; also GPUWHY_MODELS."
    ),
    kv_dtype: Optional[str] = typer.Option(
        None, "--kv-dtype", metavar="DTYPE", help=f"KV-cache dtype, {_DTYPE_HELP} (default: the weight dtype, fp16 for quantized weights)."
    ),
    sweep_batch: bool = typer.Option(False, "--sweep-batch", help="Add a table of decode steps at batch 1, 8, 32, ... 1024."),
    scaling: ScalingText = ScalingText(),
    serving: ServingText = ServingText(),
    specs: SpecsOpt = None,
    json_out: JsonOpt = False,
    csv_out: CsvOpt = False,
) -> None:
    """What can this GPU do for this model? Decode and prefill on the roofline: the tokens/s ceiling, the batch ridge, the KV cache."""
    from ..errors import UsageError
    from ..model.llm.estimate import scaled_estimate
    from ..model.llm.roofline import gpu_from_sheet

    if measured:
        raise UsageError("llm --measured is not built yet (classify, compare and roofline read bench profiles; llm uses the sheet): drop --measured and use --gpu NAME")

    # Parse and check everything the user typed before touching the GPU sheets.
    text = LlmText(params=params, weight_dtype=weight_dtype, context=context, prompt_len=prompt_len, model=model, layers=layers,
                   kv_heads=kv_heads, head_dim=head_dim, heads=heads, kv_dtype=kv_dtype, batch=batch, models=tuple(models or ()))
    req = text.parse("llm needs --params P (e.g. --params 3B) or --model NAME (e.g. --model llama-3-8b)")
    plan = scaling.parse()  # mixture of experts, several GPUs, quantization scales (model/llm_scaling.py)
    serve = serving.parse()  # speculative decoding and the cost per token
    req = text.load_shape(req)
    if heads is not None and (req.shape.heads < req.shape.kv_heads or req.shape.heads % req.shape.kv_heads):
        raise UsageError(f"--heads {req.shape.heads} must be a multiple of --kv-heads {req.shape.kv_heads}")
    if req.shape is None and models:
        # Still validate the folders the user named, so a typo does not pass silently.
        from ..model.llm.models import load_models

        load_models(models)

    from ..device.probe import gpu_sheet

    sheet = noted(gpu_sheet(gpu, specs or ())).sheet
    if plan.num_gpus > 1 and scaling.allreduce_latency is None:
        plan = _measured_allreduce(plan, sheet, specs or ())
    g = gpu_from_sheet(sheet, req.weight_dtype)
    # Without scaling options the plain model's document and wording (no "scaling" key).
    plain = plan.is_default
    scaled = scaled_estimate(req.params, req.weight_dtype, g, plan, sweep=sweep_batch, notes=req.notes, plain_wording=plain,
                             **req.estimate_kwargs())
    if csv_out:
        from ..render.csv_out import emit_csv

        return emit_csv("llm", scaled.estimate, json_out)
    report = _serving_report(serve, scaled, req, plan, sheet, models or ())
    if json_out:
        from ..render.jsonout import emit

        emit("llm", report)
        return
    from ..render.llm_view import render_llm, render_llm_cost, render_llm_scaling, render_speculative

    render_llm(scaled.estimate)
    if not plain:
        render_llm_scaling(scaled.scaling)
    if report.speculative is not None:
        render_speculative(report.speculative)
    if report.cost is not None:
        render_llm_cost(report.cost)


def _measured_allreduce(plan, sheet, specs):
    """``plan`` with this host's measured all-reduce (`bench --allreduce`, saved in a profile of a GPU
    of ``sheet``'s model; the GPU count nearest ``plan.num_gpus``): the small message's time as the
    all-reduce latency and the largest one's bus bandwidth for the transfer term, its
    ``allreduce_source`` naming the profile; ``plan`` unchanged when none was measured."""
    from dataclasses import replace

    from ..profiles import find_allreduce

    found = find_allreduce(sheet, plan.num_gpus, spec_dirs=specs)
    if found is None:
        return plan
    latency, busbw, source = found
    return replace(plan, allreduce_latency_s=latency, allreduce_busbw_gbs=busbw, allreduce_source=source)


def _serving_report(serve, scaled, req, plan, sheet, models):
    """The :class:`~gpuwhy.model.llm.report.LlmReport` of the estimate with the speculative
    decoding and cost the options ask for (the plain estimate's document without scaling options)."""
    from ..model.llm.report import LlmReport, cost_for

    spec = cost = None
    e = scaled.estimate
    if serve.k is not None:
        from ..model.llm.speculative import speculative

        draft_params, draft_shape, name = serve.draft_params, None, None
        if serve.draft_model is not None:
            from ..model.llm.models import load_model

            m = load_model(serve.draft_model, models)
            draft_params, draft_shape, name = m.params, m.attention(), m.name
        spec = speculative(e.decode, serve.k, serve.acceptance, e.gpu, e.weight_dtype, draft_params, name, draft_shape,
                           e.kv_dtype, target_params=req.params)
    if serve.usd_per_hour is not None:
        kw = req.estimate_kwargs()
        batch, kvd = kw.pop("batch"), kw.pop("kv_dtype")
        cost = cost_for(serve.usd_per_hour, req.params, req.weight_dtype, sheet, plan, batch, kvd, **kw)
    return LlmReport(e if plan.is_default else scaled, spec, cost)
