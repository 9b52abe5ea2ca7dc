"""Rich rendering of `gpuwhy ncu`: per GPU of an Nsight Compute export, the top kernels with
their regime, their memory levels next to ncu's own Speed-of-Light numbers, each level's
intensity and share of its roof (the hierarchical roofline), how each figure was derived,
and the time per regime."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from ..importers.ncu.partial import PARTIAL_PREFIX
from ..units import fmt_bytes, fmt_counted, fmt_fixed, fmt_g, fmt_num, fmt_pct, fmt_share, fmt_time
from .console import note, note_left_out, out
from .diagnosis_view import fixes_table

_REGIME_STYLE = {
    "compute": "bold magenta",
    "memory": "bold cyan",
    "overhead": "bold yellow",
    "latency": "bold blue",
    "issue": "bold red",
    "not classifiable": "dim",
}
_BASIS_MARK = {"counters": "", "estimate": " est.", "utilisation": " util."}
_FIGURES = (("time", "time"), ("dram_bytes", "DRAM bytes"), ("flops", "FLOPs"), ("pipe", "pipe utilisation"),
            ("l2_bytes", "L2 bytes"), ("l1_bytes", "L1 bytes"), ("regime", "regime"))


def _level(lv: dict | None) -> str:
    if not lv:
        return "n/a"
    b, p = lv.get("bytes"), lv.get("pct_of_peak")
    parts = [fmt_bytes(b)] if b is not None else []
    if p is not None:
        parts.append(f"{p:.0f}%")
    return " ".join(parts) or "n/a"


def render_ncu(report, run=None) -> None:
    """Print a :class:`~gpuwhy.importers.ncu.NcuReport` (and, after `gpuwhy ncu -- CMD`, the
    :class:`~gpuwhy.importers.ncu.runner.NcuRun` that made it)."""
    con = out()
    if run is not None:
        argv = list(run.profile_argv)
        if "--metrics" in argv:
            i = argv.index("--metrics") + 1
            argv[i] = f"<{len(run.metrics)} metrics for this GPU, from {run.metrics_source}>"
        con.print(Text(f"ran under ncu {run.ncu_version} on {run.gpu}: ", style="bold") + Text(" ".join(argv)))
        con.print(f"kept: {run.rep_path}, {run.csv_path}, {run.log_path}")
    how_read = "" if report.reader == "csv" else f" (read with {report.reader})"
    con.print(f"{report.source}: ncu export, {report.page} page{how_read}")
    for d in report.devices:
        _device(con, d)
    for m in report.messages:
        note(f"ncu: {m}")
    note_left_out("skipped", report.dropped, report.notes)
    if run is not None:
        for n in run.notes:
            note(n)


def _device(con, d) -> None:
    c = d.ceilings
    who = f"GPU {d.device}" + (f" ({d.name})" if d.name else "")
    con.print(Text(f"{who}: judged against the {d.sheet} sheet ({fmt_g(c['memory_bandwidth_gbs'])} GB/s DRAM); "
                   + fmt_counted(d.launches, "launch", "launches"), style="bold"))
    if d.sheet_rule not in ("given", "nvml_name", "nvml_name+pci_id"):
        note(f"GPU {d.device}: {d.sheet_note}")
    if d.total_time_s is None:
        con.print(Text("verdict: ", style="bold") + Text(d.verdict))
        _kernels(con, d)
        return
    con.print(f"{fmt_time(d.total_time_s)} of kernel time, {fmt_share(d.classified_time_s, d.total_time_s)} of it classified")
    _kernels(con, d)
    if d.other_kernels:
        con.print(f"... and {d.other_kernels} more kernels ({fmt_time(d.other_time_s)}); --top N shows more")
    _levels(con, d)
    _hierarchy(con, d)
    _derivations(con, d)
    parts = Text("time per regime: ", style="bold")
    for i, (regime, secs) in enumerate(sorted(d.regime_time_s.items(), key=lambda kv: -kv[1])):
        if i:
            parts.append(", ")
        parts.append(f"{regime} {fmt_share(secs, d.total_time_s)}", style=_REGIME_STYLE.get(regime, ""))
        parts.append(f" ({fmt_time(secs)})")
    con.print(parts)
    a = d.ncu_agreement
    if a.get("fraction") is not None:
        line = Text("ncu's Speed-of-Light verdict agrees on ", style="bold")
        line.append(f"{100 * a['fraction']:.0f}% of the compared kernel time ({fmt_time(a['compared_time_s'])})")
        if a["disagreeing_kernels"]:
            line.append("; differs on " + ", ".join(a["disagreeing_kernels"]))
        con.print(line)
    con.print(Text("verdict: ", style="bold") + Text(d.verdict))
    _diagnosis(con, d)
    _notes(d.kernels)


def _diagnosis(con, d) -> None:
    """The verdict engine's line and fixes over the GPU's kernel time (ncu records no idle time)."""
    diag = d.diagnosis
    if diag is None:
        return
    con.print(Text("what the kernels wait for: ", style="bold") + Text(diag.line))
    fixes = fixes_table(diag)
    if fixes is not None:
        con.print(fixes)
    for n in diag.next_steps:
        con.print(Text("  - ") + Text(n, style="green"))


def _notes(kernels) -> None:
    """Each kernel note once: a note several kernels share is printed with their count."""
    by_text: dict[str, list[str]] = {}
    for k in kernels:
        for n in k.notes:
            by_text.setdefault(n, []).append(k.name)
    for text, names in by_text.items():
        note(f"{names[0]}: {text}" if len(names) == 1 else f"{len(names)} kernels: {text}")


def _table(numbers: tuple[str, ...], last: str, title: str | None = None) -> Table:
    """A table of a kernel column, right-aligned number columns and a last text column."""
    t = Table(title=title, title_justify="left", pad_edge=False)
    t.add_column("kernel", overflow="fold", max_width=44)
    for head in numbers:
        t.add_column(head, justify="right")
    t.add_column(last, no_wrap=True)
    return t


def _kernels(con, d) -> None:
    t = _table(("time", "FLOP/B", "TFLOP/s", "GB/s", "% roof"), "regime")
    advice: list[tuple[str, str]] = []
    for k in d.kernels:
        if k.classifiable:
            regime = Text(k.regime, style=_REGIME_STYLE.get(k.regime, "bold"))
            if k.precision:
                regime.append(f" {k.precision}", style="dim")
            regime.append(_BASIS_MARK.get(k.basis, ""), style="dim")
            advice.append((k.name, k.top_remedy or ""))
        else:
            partial = k.how.get("regime", "")
            short = partial[len(PARTIAL_PREFIX):].split(" (")[0] if partial.startswith(PARTIAL_PREFIX) else ""
            regime = Text(short or "not classifiable", style="dim")
            advice.append((k.name, k.reason))
        name = k.name if k.launches == 1 else f"{k.name} ({k.launches} launches)"
        t.add_row(name, fmt_time(k.total_time_s), fmt_num(k.intensity), fmt_num(k.achieved_tflops),
                  fmt_fixed(k.achieved_gbs, 0, grouped=False), fmt_pct(k.roof_pct, 0, compact=False), regime)
    con.print(t)
    if any(k.basis in ("estimate", "utilisation") for k in d.kernels):
        note("est.: a figure is estimated (see 'how derived'); util.: no FLOPs, regime from pipe or SM utilisation vs DRAM")
    if advice:
        con.print(Text("top remedy, or why not classifiable:", style="bold"))
        for name, text in advice:
            con.print(Text(f"  {name}: ", style="bold") + Text(text))


def _levels(con, d) -> None:
    ks = [k for k in d.kernels if k.memory_levels or k.ncu_sol is not None]
    if not ks:
        return
    t = _table(("DRAM", "L2", "L1", "ncu SM", "ncu mem"), "ncu says",
               "memory levels (bytes, % of peak throughput) and ncu's Speed of Light")
    for k in ks:
        lv = k.memory_levels
        sol = k.ncu_sol
        agrees = sol.agrees(k.regime) if sol is not None else None
        says = Text(sol.verdict.split()[0] if sol is not None else "n/a")
        if agrees is False:
            says.append("*", style="bold")
        t.add_row(k.name, _level(lv.get("dram")), _level(lv.get("l2")), _level(lv.get("l1")),
                  fmt_pct(sol.compute_pct if sol else None, 0, compact=False), fmt_pct(sol.memory_pct if sol else None, 0, compact=False), says)
    con.print(t)
    if any(k.ncu_sol is not None and k.ncu_sol.agrees(k.regime) is False for k in ks):
        note("*: ncu's Speed-of-Light side differs from gpuwhy's regime")


def _roof_cell(p) -> str:
    """``FLOP/B share`` of one level's point; ``n/a`` for the share where its roof is unknown."""
    if p is None:
        return "n/a"
    return f"{fmt_num(p.intensity)} {fmt_pct(100 * p.fraction_of_roof, 0, compact=False) if p.fraction_of_roof is not None else 'n/a'}"


def _hierarchy(con, d) -> None:
    from ..model.roofline.hierarchy import LEVEL_TEXT

    ks = [k for k in d.kernels if k.hierarchy is not None]
    if not ks:
        return
    t = _table(("DRAM", "L2", "L1"), "nearest roof", "hierarchical roofline (FLOP/byte, % of each level's roof)")
    unknown = False
    for k in ks:
        h = k.hierarchy
        pts = [h.point(lv) for lv in ("DRAM", "L2", "L1")]
        unknown = unknown or any(p is not None and p.roof is None for p in pts)
        t.add_row(k.name, *(_roof_cell(p) for p in pts), LEVEL_TEXT.get(h.deciding, h.deciding))
    con.print(t)
    if unknown:
        note("n/a after an intensity: that level's roof is unknown (not judged)")


def _derivations(con, d) -> None:
    if not d.derivations:
        return
    con.print(Text("how derived (share of kernel time):", style="bold"))
    for key, label in _FIGURES:
        ways = d.derivations.get(key)
        if not ways:
            continue
        text = "; ".join(f"{how} ({fmt_share(secs, d.total_time_s)})" for how, secs in sorted(ways.items(), key=lambda kv: -kv[1]))
        con.print(Text(f"  {label}: ", style="bold") + Text(text))


__all__ = ["render_ncu"]
