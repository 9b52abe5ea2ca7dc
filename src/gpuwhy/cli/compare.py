"""`gpuwhy compare`: one workload's roofline on several GPUs: attainable FLOP/s or tokens/s, speed-up, per dollar, per watt.

Also defines the options the LLM model gained for it (``--active-params``,
``--num-gpus``, ``--bytes-per-param``, ``--quant-group``, ``--scale-bits``,
``--allreduce-latency``), shared with `gpuwhy llm`.
"""

from __future__ import annotations

from typing import Annotated, List, Optional

import typer

from .app import app
from .common import JsonOpt, SpecsOpt

ActiveParamsOpt = Annotated[
    Optional[str],
    typer.Option("--active-params", metavar="P", help="Mixture of experts: parameters each token uses (e.g. 12.9B); all --params must fit, each token reads only these."),
]
NumGpusOpt = Annotated[
    Optional[str],
    typer.Option("--num-gpus", metavar="N", help="Split the model over N GPUs (tensor parallel): weights and bandwidth N ways, plus an all-reduce allowance."),
]
BytesPerParamOpt = Annotated[
    Optional[str],
    typer.Option("--bytes-per-param", metavar="X", help="Bytes per stored weight, overriding the dtype (e.g. 0.5625 for 4.5 bits)."),
]
QuantGroupOpt = Annotated[
    Optional[str],
    typer.Option("--quant-group", metavar="G", help="Quantized weights: one scale per G weights, counted in the size (4-bit + 16-bit scale per 32 = 4.5 bits)."),
]
ScaleBitsOpt = Annotated[
    Optional[str], typer.Option("--scale-bits", metavar="S", help="Bits per scale with --quant-group (default 16; 8 for MXFP4/NVFP4).")
]
AllreduceOpt = Annotated[
    Optional[str],
    typer.Option("--allreduce-latency", metavar="T", help="Time of one all-reduce with --num-gpus (default 10us, assumed; measure with nccl-tests)."),
]


def scaling_from_options(
    active_params: str | None,
    num_gpus: str | None,
    bytes_per_param: str | None,
    quant_group: str | None,
    scale_bits: str | None,
    allreduce_latency: str | None,
):
    """A :class:`~gpuwhy.model.llm_scaling.Scaling` from the options' text.

    Raises:
        UsageError: a value that is not a number of the right kind, or
            ``--scale-bits`` without ``--quant-group``.
    """
    from ..errors import UsageError
    from ..model.llm import parse_params
    from ..model.llm_scaling import DEFAULT_SCALE_BITS, Scaling
    from ..units import parse_count, parse_quantity, parse_time

    kw: dict = {}
    if active_params is not None:
        kw["active_params"] = parse_params(active_params, "--active-params")
    if num_gpus is not None:
        kw["num_gpus"] = parse_count(num_gpus, "--num-gpus")
    if bytes_per_param is not None:
        kw["bytes_per_param"] = parse_quantity(bytes_per_param, "--bytes-per-param")
    if quant_group is not None:
        kw["quant_group"] = parse_count(quant_group, "--quant-group")
    if scale_bits is not None:
        if quant_group is None:
            raise UsageError("--scale-bits needs --quant-group G (the weights per scale)")
        kw["scale_bits"] = parse_quantity(scale_bits, "--scale-bits")
    else:
        kw["scale_bits"] = DEFAULT_SCALE_BITS
    if allreduce_latency is not None:
        t = 0.0 if allreduce_latency.strip() in ("0", "0s", "0us") else parse_time(allreduce_latency, "--allreduce-latency")
        kw["allreduce_latency_s"] = t
        kw["allreduce_source"] = f"--allreduce-latency {allreduce_latency}"
    return Scaling(**kw)


def _llm_inputs(params, model, models, layers, kv_heads, head_dim, heads, weight_dtype, kv_dtype, batch, context, prompt_len):
    """Parse the LLM options as `gpuwhy llm` does; returns (params, dtype, kwargs for scaled_estimate, notes)."""
    from ..errors import UsageError
    from ..model.llm import AttentionShape, normalize_dtype, parse_params
    from ..units import parse_count, parse_quantity

    shape_opts = {"--layers": layers, "--kv-heads": kv_heads, "--head-dim": head_dim}
    given = [k for k, v in shape_opts.items() if v is not None]
    if model is not None and (given or heads is not None):
        raise UsageError("--model sets the shape; drop --layers/--kv-heads/--head-dim/--heads or drop --model")
    if given and len(given) < 3:
        raise UsageError(f"the shape needs --layers, --kv-heads and --head-dim together; missing {', '.join(k for k in shape_opts if k not in given)}")
    if heads is not None and not given:
        raise UsageError("--heads needs the shape: --layers N --kv-heads H --head-dim D")
    if params is None and model is None:
        raise UsageError("compare --llm needs --params P (e.g. --params 8B) or --model NAME (e.g. --model llama-3-8b)")
    kw: dict = {"batch": parse_count(batch, "--batch")}
    if prompt_len is not None:
        kw["prompt_len"] = parse_count(prompt_len, "--prompt-len")
    if context is not None:
        c = parse_quantity(context, "--context", allow_zero=True)
        if c != int(c):
            raise UsageError(f"--context {context!r} must be a whole number of tokens")
        kw["context"] = int(c)
    wd = None if weight_dtype is None else normalize_dtype(weight_dtype, "--weight-dtype")
    if kv_dtype is not None:
        kw["kv_dtype"] = normalize_dtype(kv_dtype, "--kv-dtype")
    n_params = None if params is None else parse_params(params, "--params")
    notes: list[str] = []
    if model is not None:
        from ..model.llm_models import load_model

        m = load_model(model, models or ())
        kw.update(shape=m.attention(), max_context=m.max_context, model=m.name)
        if n_params is None:
            n_params = m.params
        if wd is None and m.dtype:
            wd = m.dtype
    elif given:
        kw["shape"] = AttentionShape(
            layers=parse_count(layers, "--layers"),
            kv_heads=parse_count(kv_heads, "--kv-heads"),
            head_dim=parse_count(head_dim, "--head-dim"),
            heads=None if heads is None else parse_count(heads, "--heads"),
        )
    return n_params, wd or "fp16", kw, notes


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
    active_params: ActiveParamsOpt = None,
    num_gpus: NumGpusOpt = None,
    bytes_per_param: BytesPerParamOpt = None,
    quant_group: QuantGroupOpt = None,
    scale_bits: ScaleBitsOpt = None,
    allreduce_latency: AllreduceOpt = None,
    specs: SpecsOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Which GPU is worth it? One workload's roofline on several GPUs, ranked, with speed-up, per dollar and per watt."""
    from dataclasses import replace

    from ..device.sheet import sheet_for
    from ..errors import UsageError
    from ..model.compare import assign_costs, compare_llm, compare_roofline, parse_cost_list
    from ..units import parse_quantity

    if not gpus:
        raise UsageError("compare needs one or more GPU names, e.g. gpuwhy compare H100 H200 B200 --intensity 0.33")
    llm_opts = {
        "--params": params, "--weight-dtype": weight_dtype, "--context": context, "--prompt-len": prompt_len, "--model": model,
        "--layers": layers, "--kv-heads": kv_heads, "--head-dim": head_dim, "--heads": heads, "--kv-dtype": kv_dtype,
        "--active-params": active_params, "--num-gpus": num_gpus, "--bytes-per-param": bytes_per_param,
        "--quant-group": quant_group, "--scale-bits": scale_bits, "--allreduce-latency": allreduce_latency,
    }
    if llm:
        if intensity is not None or flops is not None or bytes_ is not None:
            raise UsageError("--llm sets the workload; drop --intensity/--flops/--bytes or drop --llm")
        if dtype is not None:
            raise UsageError("with --llm the weights' dtype picks the peak: use --weight-dtype, not --dtype")
    else:
        stray = [k for k, v in llm_opts.items() if v is not None] + (["--batch"] if batch != "1" else []) + (["--models"] if models else [])
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
            F, B = parse_quantity(flops, "--flops"), parse_quantity(bytes_, "--bytes")
    else:
        from ..model.llm_scaling import Scaling  # noqa: F401  (fail early on a broken install)

        scaling = scaling_from_options(active_params, num_gpus, bytes_per_param, quant_group, scale_bits, allreduce_latency)
        n_params, wd, llm_kw, llm_notes = _llm_inputs(
            params, model, models, layers, kv_heads, head_dim, heads, weight_dtype, kv_dtype, batch, context, prompt_len
        )
    pairs = parse_cost_list(cost) if cost is not None else []

    spec_dirs = tuple(specs or ())

    def match(name: str):
        return sheet_for(name, spec_dirs=spec_dirs).sheet

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
        result = compare_llm(sheets, n_params, wd, scaling, costs, per_watt, bws, **llm_kw)
    else:
        result = compare_roofline(sheets, (dtype or "fp32"), I, F, B, costs, per_watt, bws)
    if extra_notes:
        result = replace(result, notes=result.notes + tuple(extra_notes))
    if out_file is not None:
        from ..render.compare_view import save_roofline_plot

        save_roofline_plot(result, out_file)
    if json_out:
        from ..render.jsonout import emit

        emit("compare", result)
        return
    from ..render.compare_view import render_compare

    render_compare(result, plot=not no_plot)
    if out_file is not None:
        from ..render.console import note

        note(f"rooflines drawn to {out_file}")
