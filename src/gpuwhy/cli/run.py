"""`gpuwhy run -- python train.py ARGS`: profile a Python program in-process under torch.profiler and
print where its window's time went, with the Amdahl ceiling of each fix."""

from __future__ import annotations

from typing import List, Optional

import typer

from .app import app
from .common import JsonOpt


@app.command("run", context_settings={"allow_extra_args": True, "ignore_unknown_options": True,
                                      "allow_interspersed_args": False})
def run_cmd(
    cmd: Optional[List[str]] = typer.Argument(None, metavar="-- PROGRAM [ARGS]...",
                                              help="The program: python script.py ARGS, python -m module ARGS, or script.py ARGS."),
    skip_first: Optional[str] = typer.Option(None, "--skip-first", metavar="TIME",
                                             help="Judge the window after this much of the run (e.g. 5s): skips warm-up."),
    steps: Optional[str] = typer.Option(None, "--steps", metavar="N",
                                        help="Judge the last N ProfilerStep ranges the program marks."),
    out_dir: str = typer.Option("gpuwhy-run", "--out", metavar="DIR", help="Folder for the trace (never overwrites a file)."),
    kernels: bool = typer.Option(False, "--kernels", help="Also measure the top kernels with ncu (not yet)."),
    report: Optional[str] = typer.Option(None, "--report", metavar="FILE.html",
                                         help="Also write an HTML report: the timeline strip, budget, fixes, top kernels."),
    json_out: JsonOpt = False,
) -> None:
    """Run a Python program under torch.profiler; the GPU's idle time by cause, busy time by regime, the largest removable share."""
    from pathlib import Path

    from ..errors import MeasurementError, UsageError
    from ..units import parse_count, parse_time

    if kernels:
        raise UsageError("gpuwhy run --kernels (an ncu pass over the top kernels) is not built yet: run "
                         "`gpuwhy ncu -- CMD` for per-kernel regimes")
    if skip_first is not None and steps is not None:
        raise UsageError("give --skip-first or --steps, not both")
    skip = parse_time(skip_first, "--skip-first") if skip_first is not None else 0.0
    n = parse_count(steps, "--steps") if steps is not None else None
    from ..api.run import run_program, to_json

    if report is not None:  # refused before the program runs, never after
        from .report import check_out_path

        check_out_path(report, "--report")
    result = run_program(list(cmd or []), Path(out_dir), skip_first_s=skip, steps=n, stdout_to_stderr=json_out)
    p = result.program
    if p.exit_code != 0 and not p.interrupted:
        if p.trace is not None:
            p.trace.unlink(missing_ok=True)
        why = f": {p.error}" if p.error else ""
        raise MeasurementError(f"the program failed with exit code {p.exit_code}{why} (see its output above); nothing judged")
    if report is not None:
        opts = [*(["--skip-first", skip_first] if skip_first is not None else []),
                *(["--steps", steps] if steps is not None else []), "--out", out_dir, *(["--json"] if json_out else [])]
        written = _write_report(report, result, ["gpuwhy", "run", *opts, "--report", report, "--", *(cmd or [])])
    else:
        written = None
    if json_out:
        from ..render.jsonout import emit

        emit("run", to_json(result))
        return
    from ..render.run_view import render_run

    render_run(result)
    if written is not None:
        from ..render.console import note

        note(f"report written to {report} ({written / 1024:.0f} KiB)")


def _write_report(path: str, result, command: list[str]) -> int:
    """Write the run's HTML report to ``path`` (checked by :func:`~gpuwhy.cli.report.check_out_path`), naming
    ``command`` (the command line, as words) under "How this report was made"; its size in bytes."""
    import datetime as _dt
    import shlex

    from ..api.run import to_json
    from ..render.jsonout import SCHEMA_VERSION, to_plain
    from ..render.report_data import ReportInput
    from ..render.report_html import render_report
    from ..version import __version__
    from .report import write_report

    doc = {"gpuwhy": __version__, "schema": SCHEMA_VERSION, "kind": "run", **to_plain(to_json(result))}
    line = shlex.join(command)
    generated = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
    inp = ReportInput(version=__version__, commands=(line,), generated=generated, run=doc,
                      inputs=(("run", "this run"),))
    return write_report(path, render_report(inp), "--report")
