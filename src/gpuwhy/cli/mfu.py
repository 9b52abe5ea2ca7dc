"""`gpuwhy mfu`: model FLOPs utilisation of a training or inference run."""

from __future__ import annotations

from typing import Optional

import typer

from .app import app
from .common import GpuOpt, JsonOpt, SpecsOpt, noted


@app.command("mfu")
def mfu_cmd(
    params: Optional[str] = typer.Option(None, "--params", metavar="P", help="Parameter count: 8B, 124M, 70.6B (B means billion)."),
    tokens_per_s: Optional[str] = typer.Option(None, "--tokens-per-s", metavar="T", help="Tokens per second of all the GPUs together, e.g. 12000 or 12k."),
    gpus: str = typer.Option("1", "--gpus", metavar="N", help="GPUs the run uses."),
    train: bool = typer.Option(False, "--train", help="A training run: 6 FLOPs per parameter per token (the default)."),
    infer: bool = typer.Option(False, "--infer", help="Inference: 2 FLOPs per parameter per token."),
    dtype: str = typer.Option("bf16", "--dtype", help="Precision whose dense tensor-core peak is the 100% (default bf16)."),
    seq_len: Optional[str] = typer.Option(None, "--seq-len", metavar="S", help="Tokens of context, for attention's FLOPs (with --layers and --hidden)."),
    layers: Optional[str] = typer.Option(None, "--layers", metavar="L", help="Transformer blocks (with --seq-len and --hidden)."),
    hidden: Optional[str] = typer.Option(None, "--hidden", metavar="H", help="Model width (with --seq-len and --layers)."),
    gpu: GpuOpt = None,
    specs: SpecsOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Model FLOPs utilisation: FLOPs per token x tokens/s over the GPUs' dense peak; below 30% is a cost emergency."""
    from ..errors import UsageError
    from ..model.roofline.ceilings import sheet_precision
    from ..model.llm.dtypes import parse_params
    from ..model.llm.mfu import MfuShape, mfu
    from ..units import parse_count, parse_quantity

    if params is None or tokens_per_s is None:
        raise UsageError("mfu needs --params P and --tokens-per-s T, e.g. --params 8B --tokens-per-s 12000 --gpus 8 --gpu 'H100 SXM'")
    if train and infer:
        raise UsageError("give --train or --infer, not both")
    shape_opts = {"--seq-len": seq_len, "--layers": layers, "--hidden": hidden}
    given = [k for k, v in shape_opts.items() if v is not None]
    if given and len(given) < 3:
        raise UsageError(f"attention's FLOPs need --seq-len, --layers and --hidden together; missing {', '.join(k for k in shape_opts if k not in given)}")
    n = parse_params(params, "--params")
    tps = parse_quantity(tokens_per_s, "--tokens-per-s")
    count = parse_count(gpus, "--gpus")
    shape = None
    if given:
        shape = MfuShape(parse_count(layers, "--layers"), parse_count(hidden, "--hidden"), parse_count(seq_len, "--seq-len"))
    from ..device.probe import gpu_sheet

    sheet = noted(gpu_sheet(gpu, specs or ())).sheet
    prec = sheet_precision(sheet, dtype, tensor_cores=True)
    result = mfu(n, tps, count, sheet.peak_flops(prec), sheet.name, prec, train=not infer, shape=shape)
    if json_out:
        from ..render.jsonout import emit

        emit("mfu", result)
        return
    from ..render.mfu_view import render_mfu

    render_mfu(result)
