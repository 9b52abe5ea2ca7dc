"""`gpuwhy compare`: one workload's roofline on several GPUs: attainable FLOP/s or tokens/s, speed-up, per dollar, per watt.

The LLM options it shares with `gpuwhy llm` are in :mod:`gpuwhy.cli.llm_options`.
"""

from __future__ import annotations

from typing import List, Optional

import typer

from .app import app
from .common import CsvOpt, JsonOpt, SpecsOpt, noted
from .llm_options import LlmText, ScalingText, scaling_options


def _measured_bandwidths(sheets, spec_dirs) -> tuple[dict, list[str]]:
    """``({sheet name: (B/s, source)}, notes)`` from the newest bench profile of each GPU compared
    (a profile recorded against the sheet, or from a GPU whose NVML name matches it)."""
    from ..profiles import find_profile

    out = {}
    for s in sheets:
        p = find_profile(s, need="dram_bandwidth_gbs", spec_dirs=spec_dirs)
        if p is not None:
            out[s.name] = (p.dram_bandwidth_gbs * 1e9, f"measured {p.date} by gpuwhy bench ({p.name})")
    notes = [f"no bench profile for the {s.name}: its sheet's bandwidth is used" for s in sheets if s.name not in out]
    return out, notes


@app.command("compare")
@scaling_options
def compare_cmd(
    gpus: Optional[List[str]] = typer.Argument(None, metavar="GPU...", help="GPU names (see `gpuwhy specs list`); the first is the baseline of the speed-ups."),
    intensity: Optional[str] = typer.Option(None, "--intensity", metavar="I", help="Arithmetic intensity in FLOP/byte, e.g. 0.33 or 1000."),
    flops: Optional[str] = typer.Option(None, "--flops", metavar="F", help="FLOPs of the workload (with --bytes): 2.5e12, 2.5T."),
    bytes_: Optional[str] = typer.Option(None, "--bytes", metavar="B", help="Bytes through DRAM (with --flops): 12GB, 3.2e9."),
    llm: bool = typer.Option(False, "--llm", help="An LLM's decode step (with --params or --model and the llm options): tokens/s per GPU."),
    dtype: Optional[str] = typer.Option(None, "--dtype", help="fp64|fp64_tensor|fp32|tf32|fp16|bf16|fp8|int8|fp4 (default fp32); with --llm use --weight-dtype."),
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
    from dataclasses import replace

    from ..device.sheet import sheet_for
    from ..errors import UsageError
    from ..model.roofline.compare import assign_costs, compare_llm, compare_roofline, parse_cost_list
    from ..units import parse_quantity

    if not gpus:
        raise UsageError("compare needs one or more GPU names, e.g. gpuwhy compare H100 H200 B200 --intensity 0.33")
    text = LlmText(params=params, weight_dtype=weight_dtype, context=context, prompt_len=prompt_len, model=model, layers=layers,
                   kv_heads=kv_heads, head_dim=head_dim, heads=heads, kv_dtype=kv_dtype, batch=batch, models=tuple(models or ()))
    if llm:
        if intensity is not None or flops is not None or bytes_ is not None:
            raise UsageError("--llm sets the workload; drop --intensity/--flops/--bytes or drop --llm")
        if dtype is not None:
            raise UsageError("with --llm the weights' dtype picks the peak: use --weight-dtype, not --dtype")
    else:
        stray = text.given() + scaling.given() + (["--batch"] if batch != "1" else []) + (["--models"] if models else [])
        if stray:
            raise UsageError(f"{stray[0]} is an LLM option; add --llm (with --params or --model)")
        if intensity is not None and (flops is not None or bytes_ is not None):
            raise UsageError("give either --intensity I or --flops F --bytes B, not both")
        if intensity is None and flops is None and bytes_ is None:
            raise UsageError("compare needs a workload: --intensity I, or --flops F --bytes B, or --llm --params P")
        if intensity is None and (flops is None or bytes_ is None):
            raise UsageError("--flops and --bytes go together; give both, or --intensity I")
    if out_file is not None and not out_file.lower().endswith((".png", ".svg")):
        raise UsageError(f"--out {out_file!r} must end in .png or .svg")

    # Parse the workload before loading the sheets, so bad numbers fail first.
    I = F = B = None
    if not llm:
        if intensity is not None:
            I = parse_quantity(intensity, "--intensity")
        else:
            F, B = parse_quantity(flops, "--flops", unit="FLOP"), parse_quantity(bytes_, "--bytes", unit="B")
    else:
        plan = scaling.parse()
        req = text.parse("compare --llm needs --params P (e.g. --params 8B) or --model NAME (e.g. --model llama-3-8b)")
        req = text.load_shape(req)
    pairs = parse_cost_list(cost) if cost is not None else []

    spec_dirs = tuple(specs or ())

    def match(name: str):
        return noted(sheet_for(name, spec_dirs=spec_dirs)).sheet

    sheets = []
    for g in gpus:
        s = match(g)
        if s in sheets:
            raise UsageError(f"the {s.name} is listed twice ({g!r}); list each GPU once")
        sheets.append(s)
    names = [s.name for s in sheets]
    costs = assign_costs(pairs, names, match)
    bws, extra_notes = ({}, [])
    if measured:
        bws, extra_notes = _measured_bandwidths(sheets, spec_dirs)
    if llm:
        result = compare_llm(sheets, req.params, req.weight_dtype, plan, costs, per_watt, bws, **req.estimate_kwargs())
    else:
        result = compare_roofline(sheets, (dtype or "fp32"), I, F, B, costs, per_watt, bws)
    if extra_notes:
        result = replace(result, notes=result.notes + tuple(extra_notes))
    if out_file is not None:
        from ..render.compare_view import save_roofline_plot

        save_roofline_plot(result, out_file)
    if csv_out:
        from ..render.csv_out import emit_csv

        return emit_csv("compare", result, json_out)
    if json_out:
        from ..render.jsonout import emit

        emit("compare", result)
        return
    from ..render.compare_view import render_compare

    render_compare(result, plot=not no_plot)
    if out_file is not None:
        from ..render.console import note

        note(f"rooflines drawn to {out_file}")
