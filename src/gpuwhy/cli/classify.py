"""`gpuwhy classify`: a workload's FLOPs and bytes against the roofline."""

from __future__ import annotations

from typing import Optional

import typer

from .app import app
from .common import CsvOpt, GpuOpt, JsonOpt, SpecsOpt, noted, refuse_unused
from .shape_options import ShapeText, shape_options


@app.command("classify")
@shape_options
def classify_cmd(
    flops: Optional[str] = typer.Option(None, "--flops", metavar="F", help="FLOPs of the workload: 2.5e12, 2.5T, 1.5M."),
    bytes_: Optional[str] = typer.Option(None, "--bytes", metavar="B", help="Bytes through DRAM, reads plus writes: 12GB, 12GiB, 3.2e9."),
    time: Optional[str] = typer.Option(None, "--time", metavar="T", help="Measured time: 850us, 1.2ms, 0.3s."),
    launches: str = typer.Option("1", "--launches", metavar="N", help="Kernel launches the workload takes."),
    dtype: Optional[str] = typer.Option(None, "--dtype", help="fp64|fp64_tensor|fp32|tf32|fp16|bf16|fp8|int8|fp4 (default fp32, or the example's)."),
    no_tensor_cores: bool = typer.Option(False, "--no-tensor-cores", help="Use CUDA-core peaks for tf32/fp16/bf16."),
    launch_overhead: Optional[str] = typer.Option(None, "--launch-overhead", metavar="T", help="Per-launch overhead, e.g. 4us (default 5 us)."),
    example: Optional[str] = typer.Option(None, "--example", metavar="NAME", help="A named example workload (vecadd, saxpy, gemm-bf16-8192, ...)."),
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
    counted = shape.parse()  # --gemm / --attention / --elementwise: the FLOPs and bytes counted from a shape
    if counted is not None and (flops is not None or bytes_ is not None or example is not None or ncu is not None):
        from ..errors import UsageError

        raise UsageError(f"{counted.flag} counts the FLOPs and bytes; drop --flops/--bytes/--example/--ncu")
    if ncu is not None:
        from ..errors import UsageError
        from .ncu import run_ncu

        if flops is not None or bytes_ is not None or time is not None or example is not None or working_set is not None:
            raise UsageError("--ncu reads FLOPs, bytes and times from the export; drop --flops/--bytes/--time/--example/--working-set")
        if plot is not None:
            raise UsageError("--plot draws one workload; drop --plot with --ncu")
        refuse_unused("with --ncu (the export gives the times; sheets give the ceilings)",
                      no_tensor_cores=no_tensor_cores, launch_overhead=launch_overhead, launches=launches != "1")
        run_ncu(ncu, gpu=gpu, top=top, json_out=json_out, specs=specs, dtype=dtype, csv_out=csv_out, measured=measured)
        return
    from ..api.classify import example_workload, run_classify
    from ..errors import UsageError
    from ..model.roofline.classify import Workload
    from ..units import parse_count, parse_quantity, parse_time

    refuse_unused("without --ncu", top=top != "10")
    if example is None and (dtype or "fp32").strip().lower() in ("fp32", "fp64"):
        refuse_unused(f"with --dtype {dtype or 'fp32'} (it picks CUDA-core peaks for tf32, fp16 and bf16)",
                      no_tensor_cores=no_tensor_cores)
    if plot is not None:
        from ..render.plot import check_plot_path

        check_plot_path(plot, "--plot")

    name, desc = "workload", ""
    if counted is not None:
        f = b = 0.0  # counted from the shape by run_classify_shape
        n = parse_count(launches, "--launches")
    elif example is not None:
        wl, ex_dtype, desc = example_workload(example)
        name = example
        if flops is not None or bytes_ is not None:
            raise UsageError("--example sets the FLOPs and bytes; drop --flops/--bytes or drop --example")
        dtype = dtype or ex_dtype
        f, b, n = wl.flops, wl.bytes, wl.launches
        if launches != "1":
            n = parse_count(launches, "--launches")
    else:
        if flops is None or bytes_ is None:
            raise UsageError("classify needs --flops F and --bytes B (or --example NAME); e.g. --flops 2.7e8 --bytes 3.2GB")
        f = parse_quantity(flops, "--flops", unit="FLOP")
        b = parse_quantity(bytes_, "--bytes", unit="B")
        n = parse_count(launches, "--launches")
    t = None if time is None else parse_time(time, "--time")
    ws = None if working_set is None else parse_quantity(working_set, "--working-set")
    lo = None if launch_overhead is None else parse_time(launch_overhead, "--launch-overhead")
    if gpu is None:
        from ..device.probe import gpu_sheet

        gpu = noted(gpu_sheet(None, specs or ())).sheet
    if counted is not None:
        from ..api.classify import run_classify_shape

        result = run_classify_shape(counted.shape, gpu, dtype or "fp32", tensor_cores=not no_tensor_cores, launch_overhead_s=lo,
                                    spec_dirs=specs or (), time_s=t, launches=n, tile=counted.tile, measured=measured,
                                    working_set=ws)
    else:
        result = run_classify(
            Workload(flops=f, bytes=b, launches=n, time_s=t, name=name),
            gpu,
            dtype or "fp32",
            tensor_cores=not no_tensor_cores,
            launch_overhead_s=lo,
            spec_dirs=specs or (),
            example=example,
            measured=measured,
            working_set=ws,
        )
    if plot is not None:
        from ..render.plot import save_classification_plot

        save_classification_plot(result, plot)
    if csv_out:
        from ..render.csv_out import emit_csv

        return emit_csv("classify", result, json_out)
    if json_out:
        from ..render.jsonout import emit

        emit("classify", result)
        return
    from ..render.tables import render_classification

    if desc:
        from ..render.console import out

        out().print(f"example {name}: {desc}")
    render_classification(result)
    if plot is not None:
        from ..render.console import note

        note(f"roofline drawn to {plot}")
