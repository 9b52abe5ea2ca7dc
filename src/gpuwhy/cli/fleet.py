"""`gpuwhy fleet summarize`: saved check/bench runs of many nodes, per GPU model, with outliers."""

from __future__ import annotations

from typing import List, Optional

import typer

from .app import app
from .common import JsonOpt

fleet_app = typer.Typer(help="Summarize saved runs of many nodes: per GPU model the spread of each figure, and the outliers.",
                        no_args_is_help=True)
app.add_typer(fleet_app, name="fleet")


@fleet_app.command("summarize")
def summarize_cmd(
    results: List[str] = typer.Argument(..., metavar="RESULTS...", help="`gpuwhy check --json` / `bench --json` files, device profiles, or folders of them (searched for *.json, *.json.gz)."),
    mads: float = typer.Option(5.0, "--mads", metavar="N", help="Outlier: worse than its model's median by more than N median absolute deviations (and by more than the policy's baseline tolerance)."),
    policy: Optional[str] = typer.Option(None, "--policy", metavar="FILE.yaml", help="The policy whose baseline tolerances are the outlier floors (default 5% bandwidth, 5% FLOP/s, 20% launch overhead)."),
    expect: Optional[int] = typer.Option(None, "--expect", metavar="GPUS", help="Fail when fewer GPUs than this reported."),
    csv_out: bool = typer.Option(False, "--csv", help="Print one CSV row per GPU (figures with units in the column names) instead of tables."),
    json_out: JsonOpt = False,
) -> None:
    """Per GPU model: median, MAD and range of each figure; outliers and failing GPUs by host and UUID. Exit 1 when any."""
    from ..api.fleet import FleetRequest, fleet_failure, summarize_fleet
    from ..render.fleet_view import emit_fleet_csv, render_fleet
    from ..render.output import Format, show

    fmt = Format(json_out, csv_out)
    fmt.check()  # before any file is read
    summary = summarize_fleet(FleetRequest(tuple(results), mads, policy, expect))
    show("fleet", summary, fmt, render_fleet, csv=emit_fleet_csv)
    failure = fleet_failure(summary)
    if failure is not None:
        raise failure
