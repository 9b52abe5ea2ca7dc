"""Rendering of `gpuwhy fleet summarize`: per-model spreads, outliers, failing GPUs; and its CSV."""

from __future__ import annotations

import csv
import io
from functools import partial

from rich.table import Table
from rich.text import Text

from .console import out
from ..units import fmt_counted, fmt_g, fmt_num, fmt_pct

#: Failing or warned GPUs listed one by one up to this many (then counted).
LIST_AT_MOST = 50
#: A figure in the tables: 4 figures, whole numbers with separators from 1000 up (never engineering notation).
_figure = partial(fmt_num, digits=4, whole_from=1000)


def render_fleet(summary) -> None:
    """Per model a table of its figures (median, MAD, range, outliers), then the outliers by
    host and UUID, the failing GPUs, the warned ones counted, and one summary line."""
    con = out()
    g = summary.gathered
    for m in summary.models:
        sheets = f", sheet {', '.join(m.sheets)}" if m.sheets else ""
        t = Table(title=f"{m.model}, {m.method} runs: {fmt_counted(m.gpus, 'GPU')}{sheets}", title_justify="left", pad_edge=False)
        for col in ("figure", "GPUs", "median", "MAD", "lowest", "highest", "outliers"):
            t.add_column(col, justify="left" if col == "figure" else "right")
        for f in m.figures:
            s = f.spread
            t.add_row(f.key, str(s.n), _figure(s.median), fmt_pct(s.mad_fraction, compact=False, fraction=True), _figure(s.low), _figure(s.high),
                      str(f.outliers) if f.judged else "-")
        con.print(t)
        if any(not f.judged for f in m.figures):
            con.print(Text(f"-: fewer than {summary.min_gpus} GPUs measured it, too few to call outliers", style="dim"))
    if summary.outliers:
        t = Table(title=f"outliers: more than {fmt_g(summary.mads)} MADs and the policy's tolerance worse than their model's median",
                  title_justify="left", pad_edge=False)
        for col in ("host", "uuid", "figure", "value", "median", "worse", "MADs"):
            t.add_column(col, justify="right" if col in ("value", "median", "worse", "MADs") else "left")
        for o in summary.outliers:
            t.add_row(o.record.host or "?", o.record.uuid or "?", o.figure, _figure(o.value), _figure(o.median),
                      fmt_pct(o.worse_fraction, compact=False, fraction=True), "inf" if o.mads is None else f"{o.mads:.1f}")
        con.print(t)
    failing = summary.failing
    if failing:
        t = Table(title="failing GPUs (their check failed)", title_justify="left", pad_edge=False)
        for col in ("host", "uuid", "model", "failed checks"):
            t.add_column(col)
        for r in failing[:LIST_AT_MOST]:
            t.add_row(r.host or "?", r.uuid or "?", r.model, ", ".join(r.failed) or "fail")
        con.print(t)
        if len(failing) > LIST_AT_MOST:
            con.print(f"... and {len(failing) - LIST_AT_MOST} more failing GPUs (see --json or --csv)")
    warned = summary.warned
    if warned:
        counts: dict[str, int] = {}
        for r in warned:
            for c in r.warned:
                counts[c] = counts.get(c, 0) + 1
        con.print(f"{fmt_counted(len(warned), 'GPU')} warned: " + ", ".join(f"{c} on {fmt_counted(n, 'GPU')}" for c, n in sorted(counts.items())))
    for path, why in g.skipped[:3]:
        con.print(Text(f"skipped {path}: {why}", style="dim"))
    if len(g.skipped) > 3:
        con.print(Text(f"skipped {fmt_counted(len(g.skipped) - 3, 'more file')} that are not results (--json lists them)", style="dim"))
    for p in summary.problems:
        con.print(Text(p, style="bold red"))
    dup = f", {fmt_counted(g.duplicates, 'older run')} of a GPU seen again dropped" if g.duplicates else ""
    verdict = Text("ok", style="green") if summary.passed else Text("FAIL", style="bold red")
    con.print(Text.assemble("fleet: ", verdict, f": {fmt_counted(summary.gpus, 'GPU')} in {fmt_counted(len(summary.models), 'group')} from "
                            f"{fmt_counted(g.files, 'file')}{dup}; {fmt_counted(summary.outlier_gpus, 'outlier GPU')}, {len(failing)} failing, {len(warned)} warned"))


def fleet_csv(summary) -> str:
    """One CSV row per GPU: host, uuid, model, sheet, kind, status, outlier, each figure (its key,
    unit included, is the column name), the outlier figures, the failed and warned checks, the file."""
    from ..check.figures import figure_order

    keys = sorted({k for r in summary.gathered.records for k in r.figures}, key=figure_order)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    from ..check.fleet import method

    w.writerow(["host", "uuid", "model", "sheet", "kind", "method", "status", "outlier", *keys, "outlier_figures", "failed_checks",
                "warned_checks", "file"])
    for r in summary.gathered.records:
        bad = summary.outlier_figures(r)
        w.writerow([r.host, r.uuid, r.model, r.sheet or "", r.kind, method(r), r.status or "", "yes" if bad else "no",
                    *[repr(r.figures[k]) if k in r.figures else "" for k in keys], " ".join(bad), " ".join(r.failed),
                    " ".join(r.warned), r.source])
    return buf.getvalue()


def emit_fleet_csv(summary) -> None:
    """`fleet summarize --csv`: :func:`fleet_csv` on stdout."""
    import sys

    sys.stdout.write(fleet_csv(summary))
