"""`gpuwhy diff` on the terminal: differences of where the runs ran (first, loudly), the verdict,
the change by cause (signed, adding up to the change), the predictions scored, the kernels and
operators that moved most, and what appeared and disappeared."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from ..units import fmt_counted, fmt_num, fmt_pct, fmt_time
from .cells import kernel_regime
from .console import out

#: Kernels and operators listed (largest move first); the rest are counted.
TOP_MOVES = 8
#: A kernel name is cut to this many characters (the cut ends in an ellipsis).
NAME_CHARS = 30


def signed_time(seconds: float) -> str:
    """``+1.2 ms`` / ``-840 us`` / ``0 s``."""
    if seconds == 0:
        return "0 s"
    return ("+" if seconds > 0 else "-") + fmt_time(abs(seconds))


def short(name: str, chars: int = NAME_CHARS) -> str:
    """``name`` cut to ``chars`` characters, the cut marked with an ellipsis."""
    return name if len(name) <= chars else name[: chars - 1] + "…"


def _side_line(word: str, s) -> Text:
    bits = [s.kind]
    if s.steps:
        bits.append(fmt_counted(s.steps, "step"))
    if s.device.name:
        bits.append(s.device.name)
    if s.program:
        bits.append(s.program)
    return Text(f"{word}: {s.source} ({', '.join(bits)})")


def contributions_table(r) -> Table:
    """Each cause's time per unit before and after, its change, and its share of the change."""
    per = {"step": "per step", "window": "over the window", "kernel time": "of kernel time"}[r.unit]
    t = Table(title=f"the change by cause ({per})", title_justify="left", pad_edge=False)
    t.add_column("cause", overflow="fold")
    t.add_column("before", justify="right")
    t.add_column("after", justify="right")
    t.add_column("change", justify="right")
    t.add_column("of change", justify="right")
    sp = r.split
    for c in sp.contributions:
        t.add_row(c.label, fmt_time(c.before_s), fmt_time(c.after_s), signed_time(c.delta_s),
                  fmt_pct(c.change_pct, 0) if c.change_pct is not None else "-")
    t.add_row(Text("total", style="bold"), fmt_time(sp.before_s), fmt_time(sp.after_s), signed_time(sp.delta_s),
              "100%" if sp.delta_s else "-")
    return t


def prediction_lines(r) -> list[Text]:
    """The applied remedy's ceiling against what was achieved; a prediction beaten, loudly."""
    lines = []
    for s in r.scores:
        if not s.applied:
            continue
        fix = s.key.replace("_", " ")
        if s.ceiling_x is None:
            lines.append(Text(f"predicted: {fix} could remove all of the window; achieved {fmt_num(s.achieved_x)}x"))
        elif s.wrong:
            lines.append(Text(f"ACHIEVED MORE THAN PREDICTED: {fix} was predicted at most {fmt_num(s.ceiling_x)}x; "
                              f"achieved {fmt_num(s.achieved_x)}x: the prediction was wrong", style="bold red"))
        else:
            lines.append(Text(f"predicted at most {fmt_num(s.ceiling_x)}x from {fix}; achieved "
                              f"{fmt_num(s.achieved_x)}x: {fmt_pct(s.of_ceiling_pct, 0)} of the ceiling"))
    others = [s for s in r.scores if not s.applied]
    if r.scores and not lines:
        lines.append(Text("no remedy of the run before removes the cause that dropped most: no prediction scored "
                          "(name the fix applied with --remedy KEY)", style="dim"))
    if others:
        lines.append(Text("other fixes the run before offered: " + ", ".join(
            f"{s.key.replace('_', ' ')} (at most {fmt_num(s.ceiling_x)}x)" if s.ceiling_x else s.key.replace("_", " ")
            for s in others), style="dim"))
    return lines


def kernels_table(r) -> Table | None:
    """The kernels that moved most: regime before and after (% of roof), time before and after."""
    moves = [k for k in r.kernels if k.delta_s != 0][:TOP_MOVES]
    if not moves:
        return None
    t = Table(title="kernels that moved most", title_justify="left", pad_edge=False)
    t.add_column("kernel", overflow="fold")
    t.add_column("regime", overflow="fold")
    t.add_column("before", justify="right")
    t.add_column("after", justify="right")
    t.add_column("change", justify="right")
    for k in moves:
        t.add_row(short(k.name) + ("" if k.status == "both" else f" ({k.status})"), _regime(k),
                  fmt_time(k.before_s), fmt_time(k.after_s), signed_time(k.delta_s))
    return t


def _regime(k) -> str:
    def one(s):
        if s is None:
            return "-"
        word = kernel_regime(s.regime, s.level, False)
        return word + (f" {s.roof_pct:.0f}%" if s.roof_pct is not None else "")

    b, a = one(k.before), one(k.after)
    return b if b == a else f"{b} -> {a}"


def appeared_lines(r) -> list[Text]:
    """How many kernels and operators appeared and disappeared, the largest named."""
    lines = []
    for what, rows in (("kernels", r.kernels), ("operators", r.operators)):
        for status in ("appeared", "disappeared"):
            got = [x for x in rows if x.status == status]
            if got:
                top = ", ".join(short(x.name, 36) for x in got[:3])
                lines.append(Text(f"{what} {status}: {len(got)} ({top}{', ...' if len(got) > 3 else ''})"))
    return lines


def operators_table(r) -> Table | None:
    moves = [o for o in r.operators if o.delta_s != 0][:TOP_MOVES]
    if not moves:
        return None
    t = Table(title="operators that moved most", title_justify="left", pad_edge=False)
    t.add_column("operator", overflow="fold")
    t.add_column("before", justify="right")
    t.add_column("after", justify="right")
    t.add_column("change", justify="right")
    for o in moves:
        t.add_row(short(o.name), fmt_time(o.before_s), fmt_time(o.after_s), signed_time(o.delta_s))
    return t


def figures_table(r) -> Table:
    t = Table(title="figures", title_justify="left", pad_edge=False)
    for col in ("figure", "before", "after", "change"):
        t.add_column(col, justify="left" if col == "figure" else "right", overflow="fold")
    for f in r.figures:
        t.add_row(f"{f.label} ({f.unit})", fmt_num(f.before), fmt_num(f.after),
                  fmt_pct(f.change_pct, 1) if f.change_pct is not None else "-")
    return t


def render_diff(r) -> None:
    """Print a :class:`~gpuwhy.diff.compare.DiffResult`."""
    con = out()
    for w in r.warnings:
        con.print(Text(w, style="bold red"))
    con.print(_side_line("before", r.before))
    con.print(_side_line("after", r.after))
    con.print(Text(r.line, style="bold"))
    if r.split is None:
        con.print(figures_table(r))
    else:
        con.print(contributions_table(r))
        sp = r.split
        if sp.named and sp.explained_pct is not None:
            con.print(Text(f"named contributors ({', '.join(c.label for c in sp.named)}) hold "
                           f"{fmt_pct(sp.explained_pct, 0)} of the change"))
        for line in prediction_lines(r):
            con.print(line)
        for table in (kernels_table(r), operators_table(r)):
            if table is not None:
                con.print(table)
        for line in appeared_lines(r):
            con.print(line)
    for n in r.notes:
        con.print(Text(n, style="dim"))
    if r.failed:
        con.print(Text(f"FAILED: {r.fail_line()}", style="bold red"))


__all__ = ["NAME_CHARS", "TOP_MOVES", "contributions_table", "kernels_table", "prediction_lines", "render_diff",
           "short", "signed_time"]
