"""`gpuwhy run -- python train.py ARGS`: profile a program (in-process under torch.profiler, and/or its
top kernels under ncu) and print where its window's time went, with the ceiling of each fix."""

from __future__ import annotations

from typing import List, Optional

import typer

from .app import app
from .common import JsonOpt


@app.command("run", context_settings={"allow_extra_args": True,
                                      "allow_interspersed_args": False})
def run_cmd(
    cmd: Optional[List[str]] = typer.Argument(None, metavar="-- PROGRAM [ARGS]...",
                                              help="The program: python script.py ARGS, python -m module ARGS, script.py ARGS, or (with ncu) any executable."),
    skip_first: Optional[str] = typer.Option(None, "--skip-first", metavar="TIME",
                                             help="Judge the window after this much of the run (e.g. 5s): skips warm-up."),
    steps: Optional[str] = typer.Option(None, "--steps", metavar="N",
                                        help="Judge the last N ProfilerStep ranges the program marks."),
    out_dir: str = typer.Option("gpuwhy-run", "--out", metavar="DIR", help="Folder for the trace and ncu files (never overwrites a file)."),
    kernels: bool = typer.Option(False, "--kernels", help="Also measure the top kernels' FLOPs and bytes with ncu (a second, short run), so their regimes are measured."),
    top: str = typer.Option("5", "--top", metavar="N", help="Kernels listed, and measured with --kernels."),
    launch_count: Optional[str] = typer.Option(None, "-c", "--launch-count", metavar="N",
                                               help="ncu alone (a program that is not Python, or neither PyTorch nor cupti-python): kernel launches to profile (default 200)."),
    ncu_path: Optional[str] = typer.Option(None, "--ncu", metavar="PATH", help="The ncu executable (default: the one on PATH)."),
    report: Optional[str] = typer.Option(None, "--report", metavar="FILE.html",
                                         help="Also write an HTML report: the timeline strip, budget, fixes, top kernels."),
    tracer: str = typer.Option("auto", "--tracer", metavar="NAME",
                               help="What records a Python program's timeline: torch (torch.profiler), cupti (any CUDA program: JAX, CuPy, Triton, Numba; pip install 'gpuwhy\\[cupti]'), or auto (torch where importable, else cupti, else ncu alone)."),
    json_out: JsonOpt = False,
) -> None:
    """Profile a program: the GPU's idle time by cause, busy time by regime, the top kernels, the largest removable share."""
    from pathlib import Path

    from ..errors import UsageError
    from ..units import parse_count, parse_time

    if skip_first is not None and steps is not None:
        raise UsageError("give --skip-first or --steps, not both")
    skip = parse_time(skip_first, "--skip-first") if skip_first is not None else None
    n = parse_count(steps, "--steps") if steps is not None else None
    n_top = parse_count(top, "--top")
    c = parse_count(launch_count, "-c") if launch_count is not None else None
    if report is not None:  # refused before the program runs, never after
        from .report import check_out_path

        check_out_path(report, "--report")
    from ..api.run import check_out_dir, profile_program, to_json

    check_out_dir(out_dir)

    cmd = list(cmd or [])
    result = profile_program(cmd, Path(out_dir), skip_first_s=skip, steps=n, kernels=kernels, top=n_top,
                             launch_count=c, ncu=ncu_path, stdout_to_stderr=json_out, tracer=tracer)
    if json_out:
        from ..render.jsonout import emit

        emit("run", to_json(result))
    else:
        from ..render.run_view import render_run

        render_run(result)
    if report is not None:  # after the output: a refusal here (the program wrote that file) loses nothing printed
        opts = [*(["--skip-first", skip_first] if skip_first is not None else []),
                *(["--steps", steps] if steps is not None else []), *(["--kernels"] if kernels else []),
                *(["--top", top] if top != "5" else []), *(["-c", launch_count] if launch_count is not None else []),
                "--out", out_dir, *(["--json"] if json_out else [])]
        written = _write_report(report, result, ["gpuwhy", "run", *opts, "--report", report, "--", *cmd])
        from ..render.console import note

        note(f"report written to {report} ({written / 1024:.0f} KiB)")
    if result.pass_error is not None:
        raise result.pass_error
    if result.program.interrupted:
        from ..errors import Interrupted

        raise Interrupted("the program was interrupted (Ctrl-C): what ran until then is judged above")


def _write_report(path: str, result, command: list[str]) -> int:
    """Write the run's HTML report to ``path`` (checked by :func:`~gpuwhy.cli.report.check_out_path`), naming
    ``command`` (the command line, as words) under "How this report was made"; its size in bytes."""
    import datetime as _dt
    import shlex

    from ..api.run import to_json
    from ..render.jsonout import document
    from ..render.report_data import ReportInput
    from ..render.report_html import render_report
    from ..version import __version__
    from .report import check_out_path, write_report

    check_out_path(path, "--report")  # again: the program may have written that file since the first check
    doc = document("run", to_json(result))
    line = shlex.join(command)
    generated = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
    inp = ReportInput(version=__version__, commands=(line,), generated=generated, run=doc,
                      inputs=(("run", "this run"),))
    return write_report(path, render_report(inp), "--report")
