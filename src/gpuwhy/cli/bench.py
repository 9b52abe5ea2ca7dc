"""`gpuwhy bench`: measured memory bandwidth, launch overhead, compute ceilings, the roofline,
the memory hierarchy and the host link on this GPU.

The options are parsed here; which mode runs, what it refuses, how it runs and how its
result is printed are the registry's (:mod:`gpuwhy.bench.modes`).
"""

from __future__ import annotations

import importlib
from typing import List, Optional

import typer

from .app import app
from .common import DeviceOpt, GpuOpt, JsonOpt, SpecsOpt
from .progress import progress_bar


@app.command("bench")
def bench_cmd(
    sweep: bool = typer.Option(False, "--sweep", help="Bandwidth sweep 1K..256M elements (x2 steps) and the compute ceilings; under a minute."),
    compute: bool = typer.Option(False, "--compute", help="Compute ceilings only: FP32/FP64/half2 FMA and every tensor-core precision."),
    roofline: bool = typer.Option(False, "--roofline", help="Mixed-intensity sweep 1/8..1024 FLOP/byte (fp32; fp16/bf16 half pairs where the GPU has them): the measured roofline and its empirical ridge."),
    precision: Optional[List[str]] = typer.Option(None, "--precision", metavar="P", help="With --compute: fp64, fp32, fp16_nontensor, tf32, fp16, bf16, fp8, int8 (repeatable)."),
    quick: bool = typer.Option(False, "--quick", help="A few sizes and the summary (the default); seconds."),
    kernel: Optional[List[str]] = typer.Option(
        None, "--kernel", "-k", metavar="K",
        help="read|write|copy|vecadd (both variants), a case such as vecadd-naive or read-vec16, launch, or all. Repeatable.",
    ),
    dtype: Optional[str] = typer.Option(None, "--dtype", help="Element type: fp32 (default) or fp64."),
    device: DeviceOpt = None,
    gpu: GpuOpt = None,
    specs: SpecsOpt = None,
    csv: Optional[str] = typer.Option(None, "--csv", metavar="FILE", help="Write every bandwidth row to FILE (CSV)."),
    compile_only: bool = typer.Option(False, "--compile-only", help="Compile every bundled kernel and report; needs no GPU with --arch."),
    arch: Optional[str] = typer.Option(None, "--arch", metavar="sm_XX", help="Target for --compile-only: sm_80, sm_89, sm_90, sm_100, sm_120, ..."),
    no_save: bool = typer.Option(False, "--no-save", help="Do not save a device profile in the cache folder."),
    latency: bool = typer.Option(False, "--latency", help="Memory latency ladder: a pointer chase over 4 KiB .. 4x L2 (L1, L2, far-L2 and DRAM steps) and Little's law."),
    link: bool = typer.Option(False, "--link", help="Host<->device copy bandwidth, pinned and pageable, 4 KiB .. 1 GiB, beside the PCIe/C2C link's rate."),
    l1_bypass: bool = typer.Option(False, "--cg", help="With --latency: chase with ld.global.cg loads (bypass L1)."),
    json_out: JsonOpt = False,
) -> None:
    """Measure DRAM bandwidth and launch overhead (kernels checked against numpy first)."""
    from ..bench.modes import BenchRequest, RunHooks, choose, failure

    req = BenchRequest(
        sweep=sweep, quick=quick, compute=compute, roofline=roofline, precision=precision, kernel=kernel, dtype=dtype,
        device=device, gpu=gpu, specs=specs, csv=csv, compile_only=compile_only, arch=arch, no_save=no_save,
        latency=latency, link=link, l1_bypass=l1_bypass, json_out=json_out,
    )
    mode = choose(req)
    result = mode.run(req, RunHooks(bar=progress_bar, writable=_writable))
    if json_out:
        from ..render.jsonout import emit

        emit(mode.json_kind, mode.document(result))
    else:
        module, function = mode.view.split(":")
        getattr(importlib.import_module(f"gpuwhy.render.{module}"), function)(result)
    problem = failure(result)
    if problem is not None:
        raise problem


def _writable(path: str, option: str) -> None:
    """No existing file is replaced (:func:`gpuwhy.render.outputs.writable_output`)."""
    from ..render.outputs import writable_output

    writable_output(path, option, marker=None)
