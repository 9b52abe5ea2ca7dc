"""`gpuwhy mfu`: model FLOPs utilisation of a training or inference run."""

from __future__ import annotations

from typing import Optional

import typer

from .app import app
from .completion import complete_dtype
from .common import GpuOpt, JsonOpt, SpecsOpt


@app.command("mfu")
def mfu_cmd(
    params: Optional[str] = typer.Option(None, "--params", metavar="P", help="Parameter count: 8B, 124M, 70.6B (B means billion)."),
    tokens_per_s: Optional[str] = typer.Option(None, "--tokens-per-s", metavar="T", help="Tokens per second of all the GPUs together, e.g. 12000 or 12k."),
    gpus: str = typer.Option("1", "--gpus", metavar="N", help="GPUs the run uses."),
    train: bool = typer.Option(False, "--train", help="A training run: 6 FLOPs per parameter per token (the default)."),
    infer: bool = typer.Option(False, "--infer", help="Inference: 2 FLOPs per parameter per token."),
    dtype: str = typer.Option("bf16", "--dtype", help="Precision whose dense tensor-core peak is the 100% (default bf16).", autocompletion=complete_dtype),
    seq_len: Optional[str] = typer.Option(None, "--seq-len", metavar="S", help="Tokens of context, for attention's FLOPs (with --layers and --hidden)."),
    layers: Optional[str] = typer.Option(None, "--layers", metavar="L", help="Transformer blocks (with --seq-len and --hidden)."),
    hidden: Optional[str] = typer.Option(None, "--hidden", metavar="H", help="Model width (with --seq-len and --layers)."),
    gpu: GpuOpt = None,
    specs: SpecsOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Model FLOPs utilisation: FLOPs per token x tokens/s over the GPUs' dense peak; below 30% is a cost emergency."""
    from ..api.mfu import MfuOptions, mfu
    from ..render.mfu_view import render_mfu
    from ..render.output import Format, show

    req = MfuOptions(params, tokens_per_s, gpus, train, infer, dtype, seq_len, layers, hidden, gpu, tuple(specs or ())).parse()
    show("mfu", mfu(req), Format(json_out), render_mfu)
