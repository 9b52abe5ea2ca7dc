"""Rich rendering of a :class:`~gpuwhy.model.multi_gpu.topology.Topology` (``gpuwhy probe --topo``): the
matrix ``nvidia-smi topo -m`` prints, with each GPU's NUMA node and CPU affinity, the legend
with each connection's theoretical rate, and the byte convention. When the matrix is wider
than the terminal (more GPUs than fit), one line per pair instead."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from ..model.multi_gpu.topology import CONVENTION, cpu_ranges
from ..units import fmt_counted
from .console import out


def _affinity(g) -> str:
    return cpu_ranges(g.cpus) or "n/a"


def matrix_width(topo) -> int:
    """Columns the matrix takes: the row label, one column per GPU, NUMA and CPU affinity, with
    one space either side of each column but the edges."""
    n = len(topo.gpus)
    cells = [len(f"GPU{g.index}") for g in topo.gpus]
    label = max(cells + [3])
    col = max([len(x) for row in topo.labels() for x in row] + [len(str(g.index)) for g in topo.gpus])
    aff = max([len(_affinity(g)) for g in topo.gpus] + [len("CPU affinity")])
    return label + n * col + len("NUMA") + aff + 2 * (n + 2)


def matrix_table(topo) -> Table:
    """The matrix: one row per GPU, a column per GPU (``X``, ``NV18``, ``SYS`` ...), NUMA, CPU affinity."""
    t = Table(title=f"GPU topology: {fmt_counted(len(topo.gpus), 'GPU')} (as nvidia-smi topo -m)", title_justify="left",
              box=None, pad_edge=False, show_edge=False)
    t.add_column("")
    for g in topo.gpus:
        t.add_column(str(g.index))
    t.add_column("NUMA")
    t.add_column("CPU affinity")
    for i, g in enumerate(topo.gpus):
        cells = [Text(p.label, style="bold" if p.kind in ("nvlink", "nvswitch") else "") for p in topo.pairs[i]]
        numa = "n/a" if g.numa_node is None else str(g.numa_node)
        t.add_row(Text(f"GPU{g.index}"), *cells, Text(numa), Text(_affinity(g)))
    return t


def pair_table(topo) -> Table:
    """One line per pair: the GPUs, the link and its theoretical rate one way and both ways."""
    t = Table(title=f"GPU topology: {fmt_counted(len(topo.gpus), 'GPU')}, one line per pair", title_justify="left",
              box=None, pad_edge=False)
    for col in ("GPUs", "link", "one way GB/s", "both ways GB/s"):
        t.add_column(col)
    n = len(topo.gpus)
    for i in range(n):
        for j in range(i + 1, n):
            p = topo.pairs[i][j]
            uni = "n/a" if p.uni_gbs is None else f"{p.uni_gbs:,.0f}"
            bi = "n/a" if p.bidir_gbs is None else f"{p.bidir_gbs:,.0f}"
            t.add_row(Text(f"{topo.gpus[i].index}-{topo.gpus[j].index}"), Text(p.label), Text(uni), Text(bi))
    return t


def gpu_table(topo) -> Table:
    """With the pair list: each GPU's NUMA node and CPU affinity."""
    t = Table(box=None, pad_edge=False)
    for col in ("GPU", "NUMA", "CPU affinity", "PCI bus"):
        t.add_column(col)
    for g in topo.gpus:
        t.add_row(Text(f"GPU{g.index}"), Text("n/a" if g.numa_node is None else str(g.numa_node)), Text(_affinity(g)),
                  Text(g.bus_id or "n/a"))
    return t


def render_topology(topo) -> None:
    """Print the matrix (or the pair list when the matrix does not fit), the legend, the notes."""
    con = out()
    if matrix_width(topo) <= con.width:
        con.print(matrix_table(topo))
    else:
        con.print(pair_table(topo))
        con.print(gpu_table(topo))
    legend = Table(title="legend", title_justify="left", box=None, pad_edge=False, show_header=False)
    legend.add_column(style="bold", no_wrap=True)
    legend.add_column(overflow="fold")
    for label, meaning in topo.legend().items():
        legend.add_row(Text(label), Text(meaning))
    con.print(legend)
    con.print(Text(CONVENTION, style="dim"))
    why: dict[str, list[str]] = {}
    for g in topo.gpus:
        if g.nvlink_note and not g.nvlinks:
            why.setdefault(g.nvlink_note, []).append(f"GPU{g.index}")
    for note, gpus in why.items():
        con.print(Text(f"note: {', '.join(gpus)}: {note}", style="dim"))
    for n in topo.notes:
        con.print(Text(f"note: {n}", style="dim"))
