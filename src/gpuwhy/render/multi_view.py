"""Rich rendering of one bench mode on several GPUs (:class:`~gpuwhy.bench.multi.MultiRun`):
one line per GPU with the mode's headline figures, the slowest GPU, how they were scheduled."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from ..units import fmt_fixed, fmt_ns
from .console import out


def _figure(key: str, v) -> str:
    """A headline figure in the unit :func:`_unit` names for ``key``: seconds as whole ns, us with
    two decimals, rates whole with separators from 100 up and one decimal below."""
    if key.endswith("_s"):
        return fmt_ns(v)
    if key.endswith("_us"):
        return fmt_fixed(v, 2, grouped=False)
    return fmt_fixed(v, 1, grouped=False, whole_from=100)


def _unit(key: str) -> str:
    return {"_s": "ns", "_us": "us", "_gbs": "GB/s", "_tflops": "TFLOP/s"}.get("_" + key.rsplit("_", 1)[-1], "")


def render_multi(run) -> None:
    """Print the table, the slowest GPU, errors, and the schedule."""
    con = out()
    shown = [f for f in run.figures if any(r.figures.get(f.key) is not None for r in run.runs)]
    t = Table(title=f"gpuwhy bench --{run.mode}: {len(run.runs)} GPUs, one line each", title_justify="left",
              box=None, pad_edge=False)
    for col in ("GPU", "name", *(f.heading for f in shown), "took s", "status"):
        t.add_column(col)
    for r in run.runs:
        status = Text("ok", style="green") if not r.exit_code else Text(f"exit {r.exit_code}", style="bold red")
        t.add_row(Text(str(r.index)), Text(r.name or "n/a"), *(Text(_figure(f.key, r.figures.get(f.key))) for f in shown),
                  Text(f"{r.elapsed_s:.1f}"), status)
    con.print(t)
    s = run.slowest
    if s is not None:
        r = run.runs[s.position]
        head = next(f.heading for f in run.figures if f.key == s.figure)
        con.print(Text(f"slowest: GPU {r.index} {r.uuid}: {head.split()[0]} {_figure(s.figure, s.value)} {_unit(s.figure)}, "
                       f"{s.ratio:.2f}x the median {_figure(s.figure, s.median)} {_unit(s.figure)}", style="bold"))
    for r in run.failed:
        con.print(Text(f"GPU {r.index} {r.uuid}: {r.error}", style="bold red"))
    sch = run.schedule
    how = sch["why"] if sch["ran_in"] == "worker processes" else (
        sch["why"] if not sch["parallel"] else "one GPU after another in this process (GPUWHY_WORKERS=inline)")
    con.print(Text(f"schedule: {how}; {sch['wall_s']:.1f} s in all, the GPUs' own times add up to "
                   f"{sch['sum_of_gpus_s']:.1f} s", style="dim"))
    con.print(Text(f"each GPU's full result: gpuwhy bench --{run.mode} -i INDEX, or --json here", style="dim"))
