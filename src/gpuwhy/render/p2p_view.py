"""Rich rendering of ``gpuwhy bench --p2p`` (:class:`~gpuwhy.bench.p2p.P2pResult`): one matrix per
figure (source row, destination column; the diagonal is a GPU copying its own memory), each
against the pairs' theoretical rate, the byte convention, the slowest pair. When a matrix is
wider than the terminal (many GPUs), one line per ordered pair instead."""

from __future__ import annotations

from functools import partial

from rich.table import Table
from rich.text import Text

from ..model.multi_gpu.p2p import MEASURED, NO_PEER
from ..model.multi_gpu.topology import CONVENTION
from ..bench.p2p import NOTHING_TO_PAIR
from ..units import fmt_bytes, fmt_fixed, fmt_ns
from .console import out

#: What a cell of a pair without peer access shows.
NO_PEER_CELL = "n/p"
#: A bandwidth cell (GB/s): whole numbers from 10 up, one decimal below.
_bandwidth_cell = partial(fmt_fixed, decimals=1, grouped=False, whole_from=10)


def _cells(m, fmt) -> list[list[str]]:
    rows = []
    for vals, stats in zip(m.values, m.status):
        rows.append([fmt(v) if v is not None else (NO_PEER_CELL if st == NO_PEER else "n/a") for v, st in zip(vals, stats)])
    return rows


def _figures(result):
    """(title, matrix, formatter) of every matrix shown."""
    yield "theoretical, one way (GB/s; NVLink links x rate, or the slower PCIe link)", result.theoretical("uni"), _bandwidth_cell
    yield "copy engine, one way (GB/s)", result.matrix("ce", "uni"), _bandwidth_cell
    yield "SM copy kernel, one way (GB/s)", result.matrix("sm", "uni"), _bandwidth_cell
    yield "copy engine, both ways at once (GB/s, bytes both ways / time)", result.matrix("ce", "bidir"), _bandwidth_cell
    yield "SM copy kernel, both ways at once (GB/s, bytes both ways / time)", result.matrix("sm", "bidir"), _bandwidth_cell
    yield "pointer-chase latency (ns per dependent load: owner row, reader column)", result.latency_matrix(), fmt_ns


def matrix_width(result) -> int:
    """Columns the widest matrix takes (row label, one column per GPU, a space either side)."""
    n = len(result.gpus)
    widest = max([len(c) for _, m, f in _figures(result) for row in _cells(m, f) for c in row]
                 + [len(str(g.index)) for g in result.gpus] + [3])
    return len("from") + n * widest + 2 * n


def _matrix_table(result, m, fmt) -> Table:
    t = Table(box=None, pad_edge=False)
    t.add_column("from")
    for g in result.gpus:
        t.add_column(str(g.index), justify="right")
    for i, row in enumerate(_cells(m, fmt)):
        t.add_row(Text(str(result.gpus[i].index)),
                  *(Text(c, style="dim" if i == j else "") for j, c in enumerate(row)))
    return t


def _pair_table(result) -> Table:
    """One line per ordered pair: theoretical, both methods one way and both ways, latency."""
    t = Table(title=f"gpuwhy bench --p2p: {len(result.gpus)} GPUs, one line per ordered pair (GB/s; latency ns)",
              title_justify="left", box=None, pad_edge=False)
    for col in ("pair", "theory", "CE", "SM", "CE both", "SM both", "ns"):
        t.add_column(col)
    mats = [m for _, m, _ in _figures(result)]
    fmts = [f for _, _, f in _figures(result)]
    cells = [_cells(m, f) for m, f in zip(mats, fmts)]
    n = len(result.gpus)
    for s in range(n):
        for d in range(n):
            label = f"{result.gpus[s].index}->{result.gpus[d].index}" if s != d else f"{result.gpus[s].index} own"
            t.add_row(Text(label), *(Text(c[s][d]) for c in cells))
    return t


def render_p2p(result) -> None:
    """Print the matrices (or the pair list), the slowest pair, the convention, the notes."""
    con = out()
    if len(result.gpus) == 1:
        _render_one(con, result)
        return
    if matrix_width(result) <= con.width:
        for title, m, fmt in _figures(result):
            con.print(Text(title, style="bold"))
            con.print(_matrix_table(result, m, fmt))
    else:
        con.print(_pair_table(result))
    s = result.slowest_pair()
    if s is not None:
        a, b = result.gpus[s.src].index, result.gpus[s.dst].index
        of = f", {s.fraction:.0%} of the {s.theoretical_gbs:,.0f} GB/s the link allows" if s.fraction is not None else ""
        con.print(Text(f"slowest pair (copy engine, one way): GPU {a} -> GPU {b}: {_bandwidth_cell(s.gbs)} GB/s{of}", style="bold"))
    if any(c.status == NO_PEER for c in result.copies):
        con.print(Text(f"{NO_PEER_CELL} = no peer access (cuDeviceCanAccessPeer: no): not measured", style="yellow"))
    con.print(Text(f"{CONVENTION}; diagonal (dim): a GPU copying its own memory, each byte read and written in its DRAM",
                   style="dim"))
    con.print(Text(f"each copy {fmt_bytes(result.nbytes)}, checked word by word after every repetition; "
                   f"{sum(1 for c in result.copies if c.status == MEASURED)} figures in {result.duration_s:.1f} s", style="dim"))
    for n in result.notes:
        con.print(Text(f"note: {n}", style="dim"))


def _render_one(con, result) -> None:
    """One GPU: say there is nothing to pair, and show what was measured on it (its own copies, checked)."""
    g = result.gpus[0]
    con.print(Text(f"GPU {g.index} {g.name or ''}: {NOTHING_TO_PAIR}", style="bold"))
    t = Table(box=None, pad_edge=False, show_header=False)
    t.add_column(style="cyan")
    t.add_column()
    for m in ("ce", "sm"):
        v = result.matrix(m, "uni").values[0][0]
        t.add_row(Text(f"own copy, {'copy engine' if m == 'ce' else 'SM copy kernel'}"), Text("n/a" if v is None else f"{_bandwidth_cell(v)} GB/s"))
    lat = result.latency_matrix().values[0][0]
    t.add_row(Text("pointer chase of its own memory"), Text("n/a" if lat is None else f"{fmt_ns(lat)} ns per load"))
    con.print(t)
    con.print(Text(f"each copy {fmt_bytes(result.nbytes)}, checked word by word after every repetition; GB/s = bytes copied / "
                   f"time (each byte is read and written in the GPU's DRAM)", style="dim"))
    for n in result.notes:
        if n != NOTHING_TO_PAIR:
            con.print(Text(f"note: {n}", style="dim"))
