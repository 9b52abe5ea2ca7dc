"""`gpuwhy roofline`: the log-log roofline of a GPU: spec ceilings (dashed), measured ceilings
(solid), ridge points, the mixed-intensity sweep, and workload points labelled with their verdict."""

from __future__ import annotations

from typing import List, Optional

import typer

from .app import app
from .common import GpuOpt, JsonOpt, SpecsOpt, noted, parse_point, refuse_unused


def parse_dtypes(values, sheet) -> list[str]:
    """``--dtype`` values (repeatable, comma lists; ``all``: every precision the sheet lists), default ``fp32``.

    Raises:
        UsageError: an unknown dtype.
    """
    from ..errors import UsageError
    from ..model.roofline.ceilings import DTYPES

    out: list[str] = []
    for v in values or ():
        for d in (x.strip().lower() for x in str(v).split(",")):
            if not d:
                continue
            if d == "all":  # fp32 first: points without a precision are judged against it
                picked = sorted((k for k in DTYPES if k in sheet.peak_tflops), key=lambda k: k != "fp32")
            elif d in DTYPES:
                picked = [d]
            else:
                raise UsageError(f"unknown --dtype {d!r}; use one of: {', '.join(DTYPES)}, or all")
            out.extend(p for p in picked if p not in out)
    return out or ["fp32"]


def _sheet_of_profile(p, spec_dirs):
    """The sheet a profile was recorded against, else the one its GPU's NVML name and PCI id match.

    Raises:
        UsageError: none matches, or the recorded sheet is no longer known; SpecError: a malformed sheet.
    """
    from ..device.sheet import sheet_for
    from ..errors import UsageError

    s = sheet_for(p.sheet or None, nvml_name=p.name, pci_device_id=p.pci_device_id, spec_dirs=spec_dirs).sheet
    if s is None:
        raise UsageError(f"the profile of {p.name!r} names no spec sheet; pass --gpu NAME")
    return s


def _warn_other_gpu(prof, sheet, path, spec_dirs) -> None:
    """Warn when the --profile file measured another GPU than the --gpu sheet."""
    from ..errors import GpuwhyError

    try:
        theirs = _sheet_of_profile(prof, spec_dirs)
    except GpuwhyError:
        theirs = None
    if theirs is None or theirs.name != sheet.name:
        from ..render.console import warn

        what = f"the {theirs.name}" if theirs is not None else f"a {prof.name!r} (no sheet matches it)"
        warn(f"--profile {path!r} measured {what}, not the {sheet.name}: its measured ceilings are another GPU's")


def _only_profiled_gpu(spec_dirs):
    """(sheet, newest profile) for --measured with no --gpu and no GPU here: the one GPU that has
    bench profiles, said in a note; refused when several GPUs have them or none does.

    Raises:
        UsageError: no profile at all, or profiles of several GPUs (the message lists them).
    """
    from ..errors import GpuwhyError, UsageError
    from ..profiles import _read_all
    from ..render.console import note

    newest: dict[str, object] = {}
    for p in _read_all():
        try:
            s = _sheet_of_profile(p, spec_dirs)
        except GpuwhyError:
            continue
        newest[s.name] = (s, p)
    if not newest:
        raise UsageError("--measured needs a bench profile: there is no GPU here and no saved profile; "
                         "pass --gpu NAME with --profile FILE, or run `gpuwhy bench` on the GPU")
    if len(newest) > 1:
        raise UsageError(f"--measured with no GPU here: profiles exist for {', '.join(sorted(newest))}; "
                         "pass --gpu NAME to pick one")
    (sheet, prof), = newest.values()
    note(f"no GPU here and no --gpu: the measured figures are the {sheet.name}'s newest profile ({prof.date})")
    return sheet, prof


@app.command("roofline")
def roofline_cmd(
    gpu: GpuOpt = None,
    measured: bool = typer.Option(False, "--measured", help="Add the measured ceilings, sweep points and empirical ridge of the GPU's newest `gpuwhy bench` profile."),
    profile_file: Optional[str] = typer.Option(None, "--profile", metavar="FILE", help="Take the measured figures from this device-profile JSON (e.g. a recorded one); implies --measured."),
    dtype: Optional[List[str]] = typer.Option(None, "--dtype", help="Ceilings to draw: fp64|fp64_tensor|fp32|tf32|fp16|bf16|fp8|int8|fp4 or all; repeatable or comma-separated (default fp32). The first classifies --point."),
    no_tensor_cores: bool = typer.Option(False, "--no-tensor-cores", help="CUDA-core ceilings for tf32/fp16/bf16 (fp16 and bf16 then show the half2 sweep)."),
    point: Optional[List[str]] = typer.Option(None, "--point", metavar="NAME:FLOPS:BYTES[:TIME][:DTYPE]", help="A workload to place and classify, e.g. gemm:2.2T:400MB:3.1ms:bf16 (repeatable); judged against its DTYPE's ceiling (default: the first --dtype)."),
    launch_overhead: Optional[str] = typer.Option(None, "--launch-overhead", metavar="T", help="Per-launch overhead for the --point verdicts (default: measured, else 5 us)."),
    out_file: Optional[str] = typer.Option(None, "--out", metavar="FILE", help="Draw to FILE.png or FILE.svg with matplotlib (pip install 'gpuwhy\\[plot]') instead of the terminal."),
    specs: SpecsOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """The roofline of a GPU: spec (dashed) and measured (solid) ceilings, ridge points, the measured sweep, your workloads."""
    from ..device.probe import gpu_sheet
    from ..errors import UsageError
    from ..profiles import find_profile, load_profile
    from ..render.plot import build_chart, check_plot_path
    from ..units import parse_time

    if out_file is not None:
        check_plot_path(out_file, "--out")
    if not point:
        refuse_unused("without --point (it is the per-launch cost in the points' verdicts)", launch_overhead=launch_overhead)
    points = [parse_point(p, allow_dtype=True) for p in point or ()]
    lo = None if launch_overhead is None else parse_time(launch_overhead, "--launch-overhead")
    spec_dirs = tuple(specs or ())
    prof = None
    if profile_file is not None:
        prof = load_profile(profile_file)
        measured = True
    if gpu is not None:
        sheet = noted(gpu_sheet(gpu, spec_dirs)).sheet
        if prof is not None:
            _warn_other_gpu(prof, sheet, profile_file, spec_dirs)
    elif prof is not None:
        sheet = _sheet_of_profile(prof, spec_dirs)
    else:
        try:
            sheet = noted(gpu_sheet(None, spec_dirs)).sheet
        except UsageError:
            if not measured:
                raise
            sheet, prof = _only_profiled_gpu(spec_dirs)
    if measured and prof is None:
        prof = find_profile(sheet, spec_dirs=spec_dirs)
        if prof is None:
            raise UsageError(f"no bench profile for the {sheet.name}; run `gpuwhy bench --sweep` on that GPU first, "
                             "or drop --measured")
    dtypes = parse_dtypes(dtype, sheet)
    if all(d in ("fp32", "fp64") for d in dtypes):
        refuse_unused(f"with --dtype {','.join(dtypes)} (it picks CUDA-core ceilings for tf32, fp16 and bf16)",
                      no_tensor_cores=no_tensor_cores)
    chart = build_chart(sheet, dtypes, tensor_cores=not no_tensor_cores, profile=prof, workloads=points,
                        launch_overhead_s=lo)
    if out_file is not None:
        from ..render.plot import save_chart

        save_chart(chart, out_file)
    if json_out:
        from ..render.jsonout import emit

        emit("roofline", chart)
        return
    from ..render.plot import render_chart

    render_chart(chart, text=out_file is None)
    if out_file is not None:
        from ..render.console import note

        note(f"roofline drawn to {out_file}")
