"""The fleet use case: `gpuwhy fleet summarize`. Many nodes' saved check/bench runs, per GPU
model the spread of each figure, the outliers and the failing GPUs."""

from __future__ import annotations

from dataclasses import dataclass

from ..units import fmt_counted


@dataclass(frozen=True)
class FleetRequest:
    """The saved runs to summarize (``results``: files or folders), the outlier rule (``mads``
    median absolute deviations, floored by ``policy``'s baseline tolerances) and the GPUs
    expected (``expect``, or None)."""

    results: tuple[str, ...]
    mads: float = 5.0
    policy: str | None = None
    expect: int | None = None


def summarize_fleet(req: FleetRequest):
    """The :class:`~gpuwhy.check.fleet.FleetSummary` of ``req``'s runs.

    Raises:
        UsageError: an unreadable policy; no run found; a file that is no gpuwhy run.
    """
    from ..check.fleet import gather, summarize
    from ..check.policy import load_policy

    pol = load_policy(req.policy)
    return summarize(gather(req.results), pol, mads=req.mads, expect=req.expect)


def fleet_failure(summary):
    """The :class:`~gpuwhy.errors.CheckFailed` (exit 1, after the output) naming the outlier and
    failing GPUs (five of each, then how many more) and the problems, or None when the fleet passed."""
    from ..errors import CheckFailed

    if summary.passed:
        return None
    bad = list(dict.fromkeys(f"{o.record.host or '?'} {o.record.uuid or '?'} ({o.figure})" for o in summary.outliers))
    parts = [f"{fmt_counted(summary.outlier_gpus, 'outlier GPU')}: {', '.join(bad[:5])}"
             + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")] if bad else []
    failing = summary.failing
    if failing:
        names = [f"{r.host or '?'} {r.uuid or '?'}" for r in failing]
        parts.append(f"{fmt_counted(len(failing), 'failing GPU')}: {', '.join(names[:5])}" + (f" and {len(names) - 5} more" if len(names) > 5 else ""))
    parts.extend(summary.problems)
    return CheckFailed("; ".join(parts))
