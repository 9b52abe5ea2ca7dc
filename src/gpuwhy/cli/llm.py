"""`gpuwhy llm`: the roofline model of LLM inference (decode, prefill, KV cache, batch ridge)."""

from __future__ import annotations

from typing import List, Optional

import typer

from .app import app
from .common import GpuOpt, JsonOpt, SpecsOpt, chosen_sheet
from .compare import ActiveParamsOpt, AllreduceOpt, BytesPerParamOpt, NumGpusOpt, QuantGroupOpt, ScaleBitsOpt

_DTYPE_HELP = "fp16|bf16|fp8|int8|int4|fp4|fp32"


@app.command("llm")
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
    active_params: ActiveParamsOpt = None,
    num_gpus: NumGpusOpt = None,
    bytes_per_param: BytesPerParamOpt = None,
    quant_group: QuantGroupOpt = None,
    scale_bits: ScaleBitsOpt = None,
    allreduce_latency: AllreduceOpt = None,
    specs: SpecsOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """What can this GPU do for this model? Decode and prefill on the roofline: the tokens/s ceiling, the batch ridge, the KV cache."""
    from ..errors import UsageError
    from ..model.llm import AttentionShape, estimate, gpu_from_sheet, normalize_dtype, parse_params
    from ..units import parse_count

    if measured:
        raise UsageError("llm --measured is not built yet (classify, compare and roofline read bench profiles; llm uses the sheet): drop --measured and use --gpu NAME")

    # Parse and check everything the user typed before touching the GPU sheets.
    shape_opts = {"--layers": layers, "--kv-heads": kv_heads, "--head-dim": head_dim}
    given = [k for k, v in shape_opts.items() if v is not None]
    if model is not None and (given or heads is not None):
        raise UsageError("--model sets the shape; drop --layers/--kv-heads/--head-dim/--heads or drop --model")
    if given and len(given) < 3:
        missing = [k for k in shape_opts if k not in given]
        raise UsageError(f"the shape needs --layers, --kv-heads and --head-dim together; missing {', '.join(missing)}")
    if heads is not None and not given:
        raise UsageError("--heads needs the shape: --layers N --kv-heads H --head-dim D")
    if params is None and model is None:
        raise UsageError("llm needs --params P (e.g. --params 3B) or --model NAME (e.g. --model llama-3-8b)")

    n_batch = parse_count(batch, "--batch")
    n_prompt = None if prompt_len is None else parse_count(prompt_len, "--prompt-len")
    n_ctx = None
    if context is not None:
        from ..units import parse_quantity

        c = parse_quantity(context, "--context", allow_zero=True)
        if c != int(c):
            raise UsageError(f"--context {context!r} must be a whole number of tokens")
        n_ctx = int(c)
    wd = None if weight_dtype is None else normalize_dtype(weight_dtype, "--weight-dtype")
    kvd = None if kv_dtype is None else normalize_dtype(kv_dtype, "--kv-dtype")
    n_params = None if params is None else parse_params(params, "--params")
    from .compare import scaling_from_options  # mixture of experts, several GPUs, quantization scales (model/llm_scaling.py)

    scaling = scaling_from_options(active_params, num_gpus, bytes_per_param, quant_group, scale_bits, allreduce_latency)

    notes: list[str] = []
    shape = None
    max_context = None
    model_name = None
    if model is not None:
        from ..model.llm_models import load_model

        m = load_model(model, models or ())
        shape, max_context, model_name = m.attention(), m.max_context, m.name
        if n_params is None:
            n_params = m.params
        elif abs(n_params - m.params) > 0.005 * m.params:
            notes.append(f"--params {params} overrides the {m.name} shape's {m.params:.4g} parameters")
        if wd is None and m.dtype:
            wd = m.dtype
            notes.append(f"weights in {wd}, the dtype {m.name} is published in (--weight-dtype to change)")
    elif given:
        shape = AttentionShape(
            layers=parse_count(layers, "--layers"),
            kv_heads=parse_count(kv_heads, "--kv-heads"),
            head_dim=parse_count(head_dim, "--head-dim"),
            heads=None if heads is None else parse_count(heads, "--heads"),
        )
        if shape.heads is None:
            notes.append("no --heads: attention FLOPs assume as many query heads as KV heads (undercounts grouped-query models)")
        elif shape.heads < shape.kv_heads or shape.heads % shape.kv_heads:
            raise UsageError(f"--heads {shape.heads} must be a multiple of --kv-heads {shape.kv_heads}")
    elif models:
        # Still validate the folders the user named, so a typo does not pass silently.
        from ..model.llm_models import load_models

        load_models(models)
    wd = wd or "fp16"

    sheet = chosen_sheet(gpu, specs)
    g = gpu_from_sheet(sheet, wd)
    if not scaling.is_default:
        from ..model.llm_scaling import scaled_estimate

        scaled = scaled_estimate(
            n_params, wd, g, scaling, batch=n_batch, shape=shape, kv_dtype=kvd, context=n_ctx, prompt_len=n_prompt,
            max_context=max_context, model=model_name, sweep=sweep_batch, notes=notes,
        )
        if json_out:
            from ..render.jsonout import emit

            emit("llm", scaled)
            return
        from ..render.compare_view import render_llm_scaling
        from ..render.llm_view import render_llm

        render_llm(scaled.estimate)
        render_llm_scaling(scaled.scaling)
        return
    result = estimate(
        n_params,
        wd,
        g,
        batch=n_batch,
        shape=shape,
        kv_dtype=kvd,
        context=n_ctx,
        prompt_len=n_prompt,
        max_context=max_context,
        model=model_name,
        sweep=sweep_batch,
        notes=notes,
    )
    if json_out:
        from ..render.jsonout import emit

        emit("llm", result)
        return
    from ..render.llm_view import render_llm

    render_llm(result)
