"""`gpuwhy llm`: the roofline model of LLM inference (decode, prefill, KV cache, batch ridge),
speculative decoding and the cost per token."""

from __future__ import annotations

from typing import List, Optional

import typer

from ..api.llm_request import LlmText, ScalingText, ServingText
from .app import app
from .common import CsvOpt, GpuOpt, JsonOpt, SpecsOpt
from .llm_options import scaling_options, serving_options

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
    from ..api.llm import LlmOptions, llm
    from ..render.llm_view import render_llm_outcome
    from ..render.output import Format, show

    # Everything typed is parsed and checked before the GPU sheets are touched.
    text = LlmText(params=params, weight_dtype=weight_dtype, context=context, prompt_len=prompt_len, model=model, layers=layers,
                   kv_heads=kv_heads, head_dim=head_dim, heads=heads, kv_dtype=kv_dtype, batch=batch, models=tuple(models or ()))
    query = LlmOptions(text, scaling, serving, gpu, tuple(specs or ()), measured, sweep_batch, estimate_only=csv_out).parse()
    outcome = llm(query)
    show("llm", outcome, Format(json_out, csv_out), render_llm_outcome, document=outcome.report, rows=outcome.estimate)
