"""`gpuwhy compare`: one workload's roofline on several GPUs: attainable FLOP/s or tokens/s, speed-up, per dollar, per watt.

The LLM options it shares with `gpuwhy llm` are declared in :mod:`gpuwhy.cli.llm_options`
and parsed in :mod:`gpuwhy.api.llm_request`; the use case is :mod:`gpuwhy.api.compare`.
"""

from __future__ import annotations

from typing import List, Optional

import typer

from ..api.llm_request import LlmText, ScalingText
from .app import app
from .completion import complete_dtype
from .common import CsvOpt, JsonOpt, SpecsOpt
from .llm_options import scaling_options


@app.command("compare")
@scaling_options
def compare_cmd(
    gpus: Optional[List[str]] = typer.Argument(None, metavar="GPU...", help="GPU names (see `gpuwhy specs list`); the first is the baseline of the speed-ups."),
    intensity: Optional[str] = typer.Option(None, "--intensity", metavar="I", help="Arithmetic intensity in FLOP/byte, e.g. 0.33 or 1000."),
    flops: Optional[str] = typer.Option(None, "--flops", metavar="F", help="FLOPs of the workload (with --bytes): 2.5e12, 2.5T."),
    bytes_: Optional[str] = typer.Option(None, "--bytes", metavar="B", help="Bytes through DRAM (with --flops): 12GB, 3.2e9."),
    llm: bool = typer.Option(False, "--llm", help="An LLM's decode step (with --params or --model and the llm options): tokens/s per GPU."),
    dtype: Optional[str] = typer.Option(None, "--dtype", help="fp64|fp64_tensor|fp32|tf32|fp16|bf16|fp8|int8|fp4 (default fp32); with --llm use --weight-dtype.", autocompletion=complete_dtype),
    cost: Optional[str] = typer.Option(None, "--cost", metavar="GPU=USD,...", help="Price per hour per GPU, e.g. 'H100=2.49,H200=3.50': adds throughput per dollar."),
    per_watt: bool = typer.Option(False, "--per-watt", help="Add throughput per watt of the sheets' board power."),
    measured: bool = typer.Option(False, "--measured", help="Use the DRAM bandwidth of each GPU's newest bench profile where one exists."),
    out_file: Optional[str] = typer.Option(None, "--out", metavar="FILE", help="Also draw the rooflines to FILE.png or FILE.svg (needs matplotlib: pip install 'gpuwhy\\[plot]')."),
    no_plot: bool = typer.Option(False, "--no-plot", help="Leave out the text roofline."),
    params: Optional[str] = typer.Option(None, "--params", metavar="P", help="--llm: parameter count, 8B, 70.6B (B = billion)."),
    weight_dtype: Optional[str] = typer.Option(None, "--weight-dtype", metavar="DTYPE", help="--llm: fp16|bf16|fp8|int8|int4|fp4|fp32 (default fp16 or the model's)."),
    batch: str = typer.Option("1", "--batch", metavar="B", help="--llm: sequences decoded together."),
    context: Optional[str] = typer.Option(None, "--context", metavar="C", help="--llm: cached tokens per sequence."),
    prompt_len: Optional[str] = typer.Option(None, "--prompt-len", metavar="L", help="--llm: prompt tokens (sets the default context)."),
    model: Optional[str] = typer.Option(None, "--model", metavar="NAME", help="--llm: a model shape, e.g. llama-3-8b, llama-3-70b."),
    models: Optional[List[str]] = typer.Option(None, "--models", metavar="DIR", help="--llm: extra folder of model-shape YAML files."),
    layers: Optional[str] = typer.Option(None, "--layers", metavar="N", help="--llm: transformer blocks (with --kv-heads, --head-dim)."),
    kv_heads: Optional[str] = typer.Option(None, "--kv-heads", metavar="H", help="--llm: key/value heads per layer."),
    head_dim: Optional[str] = typer.Option(None, "--head-dim", metavar="D", help="--llm: elements per head."),
    heads: Optional[str] = typer.Option(None, "--heads", metavar="H", help="--llm: query heads per layer."),
    kv_dtype: Optional[str] = typer.Option(None, "--kv-dtype", metavar="DTYPE", help="--llm: KV-cache dtype."),
    scaling: ScalingText = ScalingText(),
    specs: SpecsOpt = None,
    json_out: JsonOpt = False,
    csv_out: CsvOpt = False,
) -> None:
    """Which GPU is worth it? One workload's roofline on several GPUs, ranked, with speed-up, per dollar and per watt."""
    from ..api.compare import CompareOptions, compare
    from ..render.compare_view import render_compare
    from ..render.output import FileOut, Format, show

    text = LlmText(params=params, weight_dtype=weight_dtype, context=context, prompt_len=prompt_len, model=model, layers=layers,
                   kv_heads=kv_heads, head_dim=head_dim, heads=heads, kv_dtype=kv_dtype, batch=batch, models=tuple(models or ()))
    query = CompareOptions(tuple(gpus or ()), intensity, flops, bytes_, llm, dtype, cost, per_watt, measured, out_file, text, scaling,
                           tuple(specs or ())).parse()
    result = compare(query)
    files = ()
    if out_file is not None:
        from ..render.compare_view import save_roofline_plot

        files = (FileOut(lambda: save_roofline_plot(result, out_file), f"rooflines drawn to {out_file}"),)
    show("compare", result, Format(json_out, csv_out), lambda r: render_compare(r, plot=not no_plot), files=files)
