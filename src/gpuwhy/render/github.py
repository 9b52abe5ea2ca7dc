"""CI-native output under GitHub Actions: workflow-command annotations and the job's step summary.

When ``GITHUB_ACTIONS=true`` (GitHub sets it in every job), `gpuwhy check` and `gpuwhy diff`
also write

* one annotation per failing or warning check, per GPU that could not be measured, and per
  regressed figure (``::error title=...::message`` / ``::warning ...``), on stderr: the runner
  reads workflow commands from both streams, and stdout stays the `--json`/`--csv` document;
* a Markdown section appended to the file ``GITHUB_STEP_SUMMARY`` names (GitHub's per-step
  summary file: appended to, never replaced, as GitHub asks), shown on the run's summary page.

Escaping follows GitHub's workflow-command format (``@actions/core``'s ``command.ts``): in the
message ``%``, ``\\r`` and ``\\n`` become ``%25``, ``%0D`` and ``%0A``; in a property value ``:``
and ``,`` become ``%3A`` and ``%2C`` too. Table cells escape ``|`` and put line breaks as spaces.
"""

from __future__ import annotations

import os
import sys
from typing import Iterable, Mapping

#: Annotation levels GitHub knows.
LEVELS = ("error", "warning", "notice")


def in_github_actions(env: Mapping[str, str] | None = None) -> bool:
    """Whether this runs in a GitHub Actions job (``GITHUB_ACTIONS`` is ``true``)."""
    return (os.environ if env is None else env).get("GITHUB_ACTIONS") == "true"


def escape_data(text: str) -> str:
    """A workflow command's message, escaped (``%``, CR, LF)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value, escaped (also ``:`` and ``,``)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(level: str, message: str, title: str = "") -> str:
    """One workflow command line: ``::error title=T::message`` (``level`` one of :data:`LEVELS`)."""
    if level not in LEVELS:
        raise ValueError(f"annotation level {level!r} is not one of {LEVELS}")
    props = f" title={escape_property(title)}" if title else ""
    return f"::{level}{props}::{escape_data(message)}"


def cell(text: object) -> str:
    """A Markdown table cell: ``|`` escaped, line breaks as spaces, empty as a dash."""
    s = " ".join(str(text if text is not None else "").split())
    return s.replace("|", "\\|") or "-"


def table(header: Iterable[str], rows: Iterable[Iterable[object]]) -> str:
    """A GitHub-flavoured Markdown table."""
    head = [cell(h) for h in header]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def publish(annotations: Iterable[str], summary: str, env: Mapping[str, str] | None = None) -> None:
    """Under GitHub Actions: print each annotation line on stderr and append ``summary`` to the file
    ``GITHUB_STEP_SUMMARY`` names; elsewhere nothing. A summary file that cannot be written is said
    in one warning line (the check's own result and exit code stand)."""
    env = os.environ if env is None else env
    if not in_github_actions(env):
        return
    for line in annotations:
        sys.stderr.write(line + "\n")
    path = env.get("GITHUB_STEP_SUMMARY")
    if path and summary:
        try:
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(summary if summary.endswith("\n") else summary + "\n")
        except OSError as exc:
            from .console import warn

            warn(f"GITHUB_STEP_SUMMARY {path!r} cannot be written ({exc.strerror or exc}); the summary is left out")


# ------------------------------------------------------------------ check --


def check_annotations(outcome) -> list[str]:
    """The annotations of a `gpuwhy check` outcome (:class:`~gpuwhy.api.check.CheckOutcome`):
    an error per failing check, per GPU with nothing checked and per GPU whose measurement
    failed; a warning per warning check."""
    out = []
    for r in outcome.reports:
        who = f"{r.device} {r.uuid}".strip()
        for c in r.checks:
            if c.status in ("fail", "warn"):
                said = f"{c.value_text or 'n/a'} (threshold {c.threshold_text or 'n/a'})"
                out.append(annotation("error" if c.status == "fail" else "warning",
                                      f"{said}: {c.detail}" if c.detail else said,
                                      f"gpuwhy check {c.name} {c.status} on {who}"))
        if r.nothing_checked:
            out.append(annotation("error", "every check was skipped: nothing was measured",
                                  f"gpuwhy check nothing_checked on {who}"))
    for label, failed in outcome.failed:  # (label, bench.fanout.Outcome) of each GPU whose measurement raised
        out.append(annotation("error", failed.error or f"exit {failed.exit_code}", f"gpuwhy check could not measure {label}"))
    return out


def check_summary(outcome) -> str:
    """The step-summary section of a `gpuwhy check` outcome: the verdict, then one table row per check."""
    doc = outcome.document
    counts = doc.get("counts", {})
    head = (f"### gpuwhy check: {doc.get('status', '?')} on {doc.get('host') or 'this host'}"
            f" ({', '.join(f'{counts[s]} {s}' for s in ('pass', 'warn', 'fail', 'skip') if counts.get(s))})\n\n")
    rows = [(f"{r.device} {r.uuid}".strip(), c.name, c.status, c.value_text, c.threshold_text,
             c.detail if c.status != "pass" else "")
            for r in outcome.reports for c in r.checks]
    rows += [(f"{r.device} {r.uuid}".strip(), "nothing_checked", "fail", "", "", "every check was skipped")
             for r in outcome.reports if r.nothing_checked]
    return head + table(("GPU", "check", "status", "value", "threshold", "detail"), rows) + "\n"


def publish_check(outcome, env: Mapping[str, str] | None = None) -> None:
    """:func:`publish` the annotations and summary of a `gpuwhy check` outcome."""
    if in_github_actions(env):
        publish(check_annotations(outcome), check_summary(outcome), env)


# ------------------------------------------------------------------- diff --


def diff_annotations(result) -> list[str]:
    """The annotations of a `gpuwhy diff` result: an error when ``--fail-if-slower`` failed, and one
    per check/bench figure worse than the threshold (a warning per figure worse below it)."""
    out = []
    pct = result.fail_if_slower_pct
    if result.failed:
        out.append(annotation("error", result.fail_line(), "gpuwhy diff: slower"))
    if pct is not None:
        from ..units import fmt_num, fmt_pct

        for f in result.figures:
            if f.worse_pct is not None and f.worse_pct > 0:
                level = "error" if f.worse_pct > pct else "warning"
                out.append(annotation(level, f"{fmt_num(f.before)} -> {fmt_num(f.after)} {f.unit} "
                                             f"({fmt_pct(f.worse_pct, 1)} worse; threshold {fmt_num(pct)}%)",
                                      f"gpuwhy diff: {f.label} regressed"))
    return out


def diff_summary(result) -> str:
    """The step-summary section of a `gpuwhy diff` result: its one-line verdict, then the change of
    step time by cause (or the check/bench figures)."""
    from ..units import fmt_num, fmt_pct, fmt_time

    head = f"### gpuwhy diff: {result.before.source} -> {result.after.source}\n\n{cell(result.line)}\n\n"
    if result.failed:
        head += f"**{cell(result.fail_line())}**\n\n"
    if result.split is not None:
        rows = [(c.label, fmt_time(c.before_s), fmt_time(c.after_s),
                 ("+" if c.delta_s > 0 else "-") + fmt_time(abs(c.delta_s)),
                 fmt_pct(c.change_pct, 1) if c.change_pct is not None else "")
                for c in result.split.contributions if c.delta_s]
        return head + table(("cause", "before", "after", "change", "share of the change"), rows) + "\n"
    rows = [(f.label, f"{fmt_num(f.before)} {f.unit}", f"{fmt_num(f.after)} {f.unit}",
             fmt_pct(f.change_pct, 1) if f.change_pct is not None else "",
             fmt_pct(f.worse_pct, 1) if f.worse_pct is not None and f.worse_pct > 0 else "") for f in result.figures]
    return head + table(("figure", "before", "after", "change", "worse by"), rows) + "\n"


def publish_diff(result, env: Mapping[str, str] | None = None) -> None:
    """:func:`publish` the annotations and summary of a `gpuwhy diff` result."""
    if in_github_actions(env):
        publish(diff_annotations(result), diff_summary(result), env)
