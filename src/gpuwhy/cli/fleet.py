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
    from ..check.fleet import gather, summarize
    from ..check.policy import load_policy
    from ..errors import CheckFailed, UsageError

    if csv_out and json_out:
        raise UsageError("--csv and --json exclude each other; pick one")
    pol = load_policy(policy)
    summary = summarize(gather(results), pol, mads=mads, expect=expect)
    if json_out:
        from ..render.jsonout import emit

        emit("fleet", summary.to_dict())
    elif csv_out:
        import sys

        from ..render.fleet_view import fleet_csv

        sys.stdout.write(fleet_csv(summary))
    else:
        from ..render.fleet_view import render_fleet

        render_fleet(summary)
    if not summary.passed:
        bad = list(dict.fromkeys(f"{o.record.host or '?'} {o.record.uuid or '?'} ({o.figure})" for o in summary.outliers))
        parts = [f"{summary.outlier_gpus} outlier GPU(s): {', '.join(bad[:5])}"
                 + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")] if bad else []
        failing = summary.failing
        if failing:
            names = [f"{r.host or '?'} {r.uuid or '?'}" for r in failing]
            parts.append(f"{len(failing)} failing GPU(s): {', '.join(names[:5])}" + (f" and {len(names) - 5} more" if len(names) > 5 else ""))
        parts.extend(summary.problems)
        raise CheckFailed("; ".join(parts))
