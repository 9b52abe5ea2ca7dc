"""`gpuwhy bench`: measured memory bandwidth and launch overhead on this GPU."""

from __future__ import annotations

from typing import List, Optional

import typer

from .app import app
from .common import DeviceOpt, GpuOpt, JsonOpt, SpecsOpt


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
    dtype: str = typer.Option("fp32", "--dtype", help="Element type: fp32 or fp64."),
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
    from ..errors import UsageError

    if sweep and quick:
        raise UsageError("--sweep and --quick exclude each other; pick one")
    if arch is not None and not compile_only:
        raise UsageError("--arch applies to --compile-only; a measurement always compiles for the GPU's own architecture")
    if l1_bypass and not latency:
        raise UsageError("--cg applies to --latency")
    if latency or link:
        if latency and link:
            raise UsageError("--latency and --link are separate runs; pick one")
        if sweep or quick or compute or roofline or kernel or compile_only or csv or precision:
            raise UsageError("--latency and --link run alone; drop --sweep/--quick/--compute/--roofline/--kernel/--csv/--compile-only")
        from .hierarchy import run_latency_cmd, run_link_cmd

        if latency:
            run_latency_cmd(device, json_out, specs, gpu=gpu, l1_bypass=l1_bypass)
        else:
            run_link_cmd(device, json_out, specs)
        return
    if compile_only:
        _compile_only(arch, json_out)
        return
    if precision and not compute:
        raise UsageError("--precision applies to --compute")
    if compute:
        if sweep or quick or kernel:
            raise UsageError("--compute runs the compute ceilings alone; drop --sweep/--quick/--kernel (--sweep already includes them)")
        _compute(device, gpu, specs, precision, json_out, save=not no_save)
        return
    if roofline:
        if sweep or quick or compute or kernel:
            raise UsageError("--roofline runs the mixed-intensity sweep alone; drop --sweep/--quick/--compute/--kernel")
        _roofline(device, gpu, specs, json_out, save=not no_save)
        return
    if dtype not in ("fp32", "fp64"):
        raise UsageError(f"--dtype {dtype!r} is not one of: fp32, fp64")
    if csv:
        from ..render.outputs import writable_output

        writable_output(csv, "--csv", marker=None)  # before measuring: never lose a run to a bad path
    from ..bench.memory import select_cases

    select_cases(kernel)  # validate names before touching the GPU

    from ..bench.runner import BenchOptions, run_bench
    from ..render.console import err

    opts = BenchOptions(
        mode="sweep" if sweep else "quick", kernels=kernel, dtype=dtype, device=device, gpu=gpu,
        spec_dirs=tuple(specs or ()), save_profile=not no_save,
    )
    con = err()
    if con.is_terminal:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        with Progress(
            TextColumn("[bold]gpuwhy bench[/bold] {task.description}"), BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), console=con, transient=True,
        ) as bar:
            task = bar.add_task("starting", total=None)

            def progress(total=None, advance=0, description=None):
                bar.update(task, total=total if total is not None else bar.tasks[0].total, advance=advance,
                           description=description if description is not None else bar.tasks[0].description)

            result = run_bench(opts, progress)
    else:
        result = run_bench(opts)

    if csv:
        try:
            result.to_dataframe().to_csv(csv, index=False)
        except OSError as exc:
            raise UsageError(f"--csv {csv!r} cannot be written ({exc.strerror or exc}); give a writable path") from None
    compute_results = None
    if sweep and not kernel:
        compute_results = _run_compute(device, gpu, specs, None, save=not no_save)
    if json_out:
        from ..render.jsonout import emit

        doc = result.to_dict()
        if compute_results is not None:
            doc["compute"] = [r.to_dict() for r in compute_results]
        emit("bench", doc)
        return
    from ..render.bench_view import render_bench

    render_bench(result)
    if compute_results is not None:
        from ..render.compute_view import render_compute

        render_compute(compute_results, result.device.name)


def _run_compute(device, gpu, specs, precisions, save: bool):
    """Open the GPU and measure its compute ceilings; save them into the newest profile."""
    from ..bench.compute import PRECISIONS, run_compute
    from ..engine.context import open_device
    from ..errors import UsageError

    for p in precisions or ():
        if p not in PRECISIONS:
            raise UsageError(f"--precision {p!r} is not one of: {', '.join(PRECISIONS)}")
    sheet = None
    if gpu:
        from ..device.sheet import sheet_for

        sheet = sheet_for(gpu, spec_dirs=specs or ()).sheet
    with open_device(device) as ctx:
        results = run_compute(ctx, precisions or None, sheet=sheet)
        info = ctx.info
    if save:
        from ..profiles import record_compute

        record_compute(info.uuid, results, name=info.name, sheet=getattr(sheet, "name", None))
    return results


def _compute(device, gpu, specs, precisions, json_out: bool, save: bool) -> None:
    results = _run_compute(device, gpu, specs, precisions, save)
    if json_out:
        from ..render.jsonout import emit

        emit("bench-compute", {"compute": [r.to_dict() for r in results]})
        return
    from ..render.compute_view import render_compute

    render_compute(results)


def _compile_only(arch: str | None, json_out: bool) -> None:
    from ..engine.compile import compile_all
    from ..errors import CheckFailed, NoDeviceError, UsageError

    if arch is None:
        try:
            from ..engine.context import open_device

            with open_device(None) as ctx:
                arch = ctx.info.arch
        except NoDeviceError:
            raise UsageError("--compile-only needs --arch sm_XX when there is no GPU (e.g. --arch sm_90)") from None
    reports = compile_all(arch)
    target = reports[0].arch if reports else arch
    if json_out:
        from ..render.jsonout import emit

        emit("bench-compile", {"arch": target, "ok": all(r.ok for r in reports), "sources": [r.to_dict() for r in reports]})
    else:
        from ..render.bench_view import render_compile

        render_compile(reports, target)
    bad = [r for r in reports if not r.ok]
    if bad:
        raise CheckFailed(f"{len(bad)} bundled kernel source(s) failed to compile for {target}: {bad[0].source}: {bad[0].message}")


def _roofline(device, gpu, specs, json_out: bool, save: bool) -> None:
    """Open the GPU, run the mixed-intensity sweep (fp32, and fp16/bf16 half2 where the GPU has them), save it in the profile."""
    from ..bench.compute import find_sheet
    from ..bench.intensity import DTYPES, run_roofline_sweep, supported
    from ..engine.context import open_device

    sheet = None
    if gpu:
        from ..device.sheet import sheet_for

        sheet = sheet_for(gpu, spec_dirs=specs or ()).sheet
    with open_device(device) as ctx:
        if sheet is None:
            sheet = find_sheet(ctx)
        dtypes = [d for d in DTYPES if supported(d, ctx.info.arch)]
        sweep = run_roofline_sweep(ctx, sheet, dtypes)
        info = ctx.info
    if save:
        from ..profiles import record_roofline

        record_roofline(info.uuid, sweep, name=info.name, sheet=sweep.sheet_name)
    if json_out:
        from ..render.jsonout import emit

        emit("bench-roofline", sweep)
        return
    from ..render.plot import render_roofline_sweep

    render_roofline_sweep(sweep, sheet)
