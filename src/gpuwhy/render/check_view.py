"""Rich rendering of `gpuwhy check` reports."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from ..units import fmt_counted
from .console import out

_STYLE = {"pass": "green", "warn": "bold yellow", "fail": "bold red", "skip": "dim"}


def render_check(reports, policy, comparisons=None, doc=None) -> None:
    """One table per GPU (check, status, measured value, threshold, why), what each GPU was
    compared with under ``--baseline`` (``comparisons``: one Comparison or None per report),
    with several GPUs one line per GPU (:func:`summary_table`), the slowest GPU and how they
    were measured (from the ``--json`` document ``doc``), and a count of the four states."""
    con = out()
    comparisons = comparisons or [None] * len(reports)
    totals = dict.fromkeys(_STYLE, 0)
    for i, (rep, comp) in enumerate(zip(reports, comparisons)):
        took = "" if rep.elapsed_s is None else f", {rep.elapsed_s:.1f} s"
        place = f"#{i} " if len(reports) > 1 else ""  # as the summary table, `slowest` and the error line number them
        t = Table(title=f"gpuwhy check: {place}{rep.device} {rep.uuid} (sheet {rep.sheet or 'none'}{took})", title_justify="left", pad_edge=False)
        for col in ("check", "status", "value", "threshold", "detail"):
            t.add_column(col)
        for c in rep.checks:
            t.add_row(c.name, Text(c.status, style=_STYLE.get(c.status, "")), c.value_text, c.threshold_text, c.detail)
            totals[c.status] = totals.get(c.status, 0) + 1
        con.print(t)
        if comp is not None:
            con.print(f"baseline: {comp.source}, {comp.against}")
            if comp.note:
                con.print(f"note: {comp.note}")
    if doc is not None and len(reports) > 1:
        con.print(summary_table(reports, doc))
        for line in fleet_lines(doc):
            con.print(line)
    counts = Text.assemble(*[part for s, n in totals.items() for part in ((f"{n} {s}", _STYLE[s] if n else ""), ", ")][:-1])
    con.print(Text.assemble("checks: ", counts, f"; policy: {policy.source}"))


def _cell(v, fmt: str) -> str:
    return "n/a" if v is None else format(v, fmt)


def summary_table(reports, doc) -> Table:
    """One line per GPU: its status and the figures the checks judged (from ``doc``'s observations)."""
    obs = doc.get("observations", [])
    tp = (obs[0].get("tensor_precision") if obs else None) or "tensor"
    t = Table(title=f"{fmt_counted(len(reports), 'GPU')}, one line each", title_justify="left", pad_edge=False, box=None)
    for col in ("#", "GPU", "status", "DRAM GB/s", "FP32 TFLOP/s", f"{tp.upper()} TFLOP/s", "launch us", "took s"):
        t.add_column(col)
    for i, (rep, o) in enumerate(zip(reports, obs)):
        t.add_row(Text(str(i)), Text(rep.device), Text(rep.status, style=_STYLE.get(rep.status, "")),
                  Text(_cell(o.get("dram_bandwidth_gbs"), ",.0f")), Text(_cell(o.get("fp32_tflops"), ",.1f")),
                  Text(_cell(o.get("tensor_tflops"), ",.0f")), Text(_cell(o.get("launch_overhead_us"), ".2f")),
                  Text(_cell(rep.elapsed_s, ".1f")))
    return t


#: How each figure reads in a sentence, and its unit.
_FIGURE_WORDS = {"dram_bandwidth_gbs": ("DRAM bandwidth", "GB/s", ",.0f"), "fp32_tflops": ("FP32 FMA rate", "TFLOP/s", ",.1f"),
                 "tensor_tflops": ("tensor-core rate", "TFLOP/s", ",.0f"), "launch_overhead_us": ("launch overhead", "us", ".2f")}


def fleet_lines(doc) -> list[Text]:
    """The slowest GPU named, the GPUs that failed to measure, and how the GPUs were scheduled."""
    lines = []
    s = doc.get("slowest")
    if s is not None:
        words, unit, fmt = _FIGURE_WORDS.get(s["figure"], (s["figure"], "", ".3g"))
        lines.append(Text(f"slowest: #{s['device_index']} {s['device']} {s['uuid']}: {words} {format(s['value'], fmt)} {unit}, "
                          f"{s['ratio']:.2f}x the median {format(s['median'], fmt)} {unit}", style="bold"))
    for f in doc.get("failed_devices") or ():
        lines.append(Text(f"not measured: {f['device']}: {f['error']}", style="bold red"))
    sch = doc.get("schedule")
    if sch is not None:
        how = sch["why"] if sch["ran_in"] == "worker processes" else "one GPU after another in this process"
        lines.append(Text(f"schedule: {how}; {sch['wall_s']:.1f} s in all, the GPUs' own times add up to "
                          f"{sch['sum_of_gpus_s']:.1f} s", style="dim"))
    return lines


def render_check_outcome(o) -> None:
    """`gpuwhy check` (a :class:`~gpuwhy.api.check.CheckOutcome`): :func:`render_check` of its reports,
    and at level 1 a line saying that nothing was measured."""
    render_check(list(o.reports), o.policy, list(o.comparisons), o.document)
    if o.level == 1:
        out().print(Text("level 1: NVML health alone, nothing measured (--level 2 measures)", style="dim"))


def print_drain_reason(reason: str | None) -> None:
    """``check --drain-reason``: the one line on stdout, literally and unwrapped; nothing when ``reason`` is None."""
    import sys

    if reason:
        sys.stdout.write(reason + "\n")
        sys.stdout.flush()


def warn_warned(names, noun: str, what: str) -> None:
    """One warning line counting and naming ``names`` (``"3 checks warned: a, b, c"`` for ``noun``
    "check" and ``what`` "warned"), or nothing when none."""
    if names:
        from .console import warn

        warn(f"{fmt_counted(len(names), noun)} {what}: {', '.join(names)}")
