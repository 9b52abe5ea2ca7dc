"""`gpuwhy diff BEFORE AFTER`: what changed between two runs of one program, and why."""

from __future__ import annotations

from typing import Optional

import typer

from .app import app
from .common import CsvOpt, JsonOpt, SpecsOpt


@app.command("diff")
def diff_cmd(
    before: str = typer.Argument(..., metavar="BEFORE", help="The run before the change: a gpuwhy run --json "
                                 "document, a torch.profiler trace, an ncu export or a check/bench document."),
    after: str = typer.Argument(..., metavar="AFTER", help="The run after the change, of the same kind (a trace "
                                "and a gpuwhy run document mix: they share a time budget)."),
    fail_if_slower: Optional[str] = typer.Option(None, "--fail-if-slower", metavar="PCT",
                                                 help="Exit 1 when AFTER's step time is more than PCT % slower than "
                                                      "BEFORE's, beyond the runs' own spread (for CI)."),
    remedy: Optional[str] = typer.Option(None, "--remedy", metavar="KEY",
                                         help="The fix applied, as BEFORE's gpuwhy run document names it (e.g. "
                                              "pin_memory); default: the one that removes the cause that dropped "
                                              "most."),
    specs: SpecsOpt = None,
    json_out: JsonOpt = False,
    csv_out: CsvOpt = False,
) -> None:
    """What changed between two runs: the change of step time split into the budget's shares (signed, adding up
    to the change), the kernels and operators that moved, what appeared and disappeared, and the predicted
    ceilings of BEFORE's fixes against what AFTER achieved. Exit 1 with --fail-if-slower when AFTER is slower."""
    from ..api.diff import DiffRequest, diff_runs, parse_pct
    from ..errors import CheckFailed
    from ..render.diff_view import render_diff
    from ..render.output import Format, show

    fmt = Format(json=json_out, csv=csv_out)
    fmt.check()
    result = diff_runs(DiffRequest(before, after, parse_pct(fail_if_slower), remedy, tuple(specs or ())))
    show("diff", result, fmt, render_diff)
    from ..render.github import publish_diff

    publish_diff(result)  # under GitHub Actions: annotations and the step summary
    if result.failed:
        raise CheckFailed(result.fail_line())
