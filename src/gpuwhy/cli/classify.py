"""`gpuwhy classify`: a workload's FLOPs and bytes against the roofline."""

from __future__ import annotations

from typing import Optional

import typer

from ..api.classify_request import ShapeText
from .app import app
from .completion import complete_dtype, complete_example
from .common import CsvOpt, GpuOpt, JsonOpt, SpecsOpt
from .shape_options import shape_options


@app.command("classify")
@shape_options
def classify_cmd(
    flops: Optional[str] = typer.Option(None, "--flops", metavar="F", help="FLOPs of the workload: 2.5e12, 2.5T, 1.5M."),
    bytes_: Optional[str] = typer.Option(None, "--bytes", metavar="B", help="Bytes through DRAM, reads plus writes: 12GB, 12GiB, 3.2e9."),
    time: Optional[str] = typer.Option(None, "--time", metavar="T", help="Measured time: 850us, 1.2ms, 0.3s."),
    launches: str = typer.Option("1", "--launches", metavar="N", help="Kernel launches the workload takes."),
    dtype: Optional[str] = typer.Option(None, "--dtype", help="fp64|fp64_tensor|fp32|tf32|fp16|bf16|fp8|int8|fp4 (default fp32, or the example's).", autocompletion=complete_dtype),
    no_tensor_cores: bool = typer.Option(False, "--no-tensor-cores", help="Use CUDA-core peaks for tf32/fp16/bf16."),
    launch_overhead: Optional[str] = typer.Option(None, "--launch-overhead", metavar="T", help="Per-launch overhead, e.g. 4us (default 5 us)."),
    example: Optional[str] = typer.Option(None, "--example", metavar="NAME", help="A named example workload (vecadd, saxpy, gemm-bf16-8192, ...).", autocompletion=complete_example),
    measured: bool = typer.Option(False, "--measured", help="Use the newest `gpuwhy bench` profile's measured ceilings (bandwidth, peaks, launch overhead) instead of the sheet's."),
    ncu: Optional[str] = typer.Option(None, "--ncu", metavar="REPORT.csv", help="Classify every kernel of an `ncu --csv` export instead (same as `gpuwhy ncu`)."),
    top: str = typer.Option("10", "--top", metavar="N", help="With --ncu: kernels to list per GPU, by total time."),
    working_set: Optional[str] = typer.Option(None, "--working-set", metavar="BYTES", help="Distinct bytes the workload touches (32MiB): when it fits in the L2 it is judged against the L2 roof."),
    plot: Optional[str] = typer.Option(None, "--plot", metavar="FILE", help="Also draw the workload on its roofline to FILE.png or FILE.svg (needs matplotlib: pip install 'gpuwhy\\[plot]')."),
    shape: ShapeText = ShapeText(),
    gpu: GpuOpt = None,
    specs: SpecsOpt = None,
    json_out: JsonOpt = False,
    csv_out: CsvOpt = False,
) -> None:
    """Arithmetic intensity vs the ridge point: compute-, memory- or overhead-bound, with remedies."""
    from ..api.classify import classify
    from ..api.classify_request import ClassifyOptions, NcuReading
    from ..render.output import FileOut, Format, show
    from ..render.classify_view import render_classify

    req = ClassifyOptions(flops=flops, bytes_=bytes_, time=time, launches=launches, dtype=dtype, no_tensor_cores=no_tensor_cores,
                       launch_overhead=launch_overhead, example=example, measured=measured, ncu=ncu, top=top,
                       working_set=working_set, plot=plot, shape=shape, gpu=gpu, spec_dirs=tuple(specs or ())).parse()
    if isinstance(req, NcuReading):
        from .ncu import run_ncu

        run_ncu(req.path, gpu=req.gpu, top=req.top, json_out=json_out, specs=specs, dtype=req.dtype, csv_out=csv_out,
                measured=req.measured)
        return
    result = classify(req)
    files = ()
    if req.plot is not None:
        from ..render.plot import save_classification_plot

        files = (FileOut(lambda: save_classification_plot(result, req.plot), f"roofline drawn to {req.plot}"),)
    show("classify", result, Format(json_out, csv_out), render_classify, files=files)
