"""`gpuwhy roofline`: the log-log roofline of a GPU: spec ceilings (dashed), measured ceilings
(solid), ridge points, the mixed-intensity sweep, and workload points labelled with their verdict."""

from __future__ import annotations

from typing import List, Optional

import typer

from .app import app
from .completion import complete_dtype
from .common import GpuOpt, JsonOpt, SpecsOpt


@app.command("roofline")
def roofline_cmd(
    gpu: GpuOpt = None,
    measured: bool = typer.Option(False, "--measured", help="Add the measured ceilings, sweep points and empirical ridge of the GPU's newest `gpuwhy bench` profile."),
    profile_file: Optional[str] = typer.Option(None, "--profile", metavar="FILE", help="Take the measured figures from this device-profile JSON (e.g. a recorded one); implies --measured."),
    dtype: Optional[List[str]] = typer.Option(None, "--dtype", help="Ceilings to draw: fp64|fp64_tensor|fp32|tf32|fp16|bf16|fp8|int8|fp4 or all; repeatable or comma-separated (default fp32). The first classifies --point.", autocompletion=complete_dtype),
    no_tensor_cores: bool = typer.Option(False, "--no-tensor-cores", help="CUDA-core ceilings for tf32/fp16/bf16 (fp16 and bf16 then show the half2 sweep)."),
    point: Optional[List[str]] = typer.Option(None, "--point", metavar="NAME:FLOPS:BYTES[:TIME][:DTYPE]", help="A workload to place and classify, e.g. gemm:2.2T:400MB:3.1ms:bf16 (repeatable); judged against its DTYPE's ceiling (default: the first --dtype)."),
    launch_overhead: Optional[str] = typer.Option(None, "--launch-overhead", metavar="T", help="Per-launch overhead for the --point verdicts (default: measured, else 5 us)."),
    out_file: Optional[str] = typer.Option(None, "--out", metavar="FILE", help="Draw to FILE.png or FILE.svg with matplotlib (pip install 'gpuwhy\\[plot]') instead of the terminal."),
    specs: SpecsOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """The roofline of a GPU: spec (dashed) and measured (solid) ceilings, ridge points, the measured sweep, your workloads."""
    from ..api.roofline import RooflineOptions, roofline
    from ..render.output import FileOut, Format, show
    from ..render.plot import build_chart, render_chart

    req = RooflineOptions(gpu, measured, profile_file, tuple(dtype or ()), no_tensor_cores, tuple(point or ()), launch_overhead,
                          out_file, tuple(specs or ())).parse()
    plan = roofline(req)
    chart = build_chart(plan.sheet, list(plan.dtypes), tensor_cores=plan.tensor_cores, profile=plan.profile,
                        workloads=list(plan.points), launch_overhead_s=plan.launch_overhead_s)
    files = ()
    if out_file is not None:
        from ..render.plot import save_chart

        files = (FileOut(lambda: save_chart(chart, out_file), f"roofline drawn to {out_file}"),)
    show("roofline", chart, Format(json_out), lambda c: render_chart(c, text=out_file is None), files=files)
