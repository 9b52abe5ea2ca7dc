"""Rich rendering of ``gpuwhy bench --allreduce`` (:class:`~gpuwhy.bench.allreduce.AllreduceResult`)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from ..units import fmt_bytes, fmt_g, fmt_time
from .console import note, out


def _gpus(result) -> str:
    names = sorted({d.name or "GPU" for d in result.devices})
    ids = ",".join(str(d.nvml_index if d.nvml_index is not None else f"cuda:{d.cuda_ordinal}") for d in result.devices)
    return f"{result.gpus} x {' / '.join(names)} (-i {ids})"


def render_allreduce(result) -> None:
    """Print the run: what ran and how it was timed, one row per size (time, algbw, busbw,
    spreads), the largest size against the limit, notes, and the summary line last."""
    from ..model.multi_gpu.allreduce import BUSBW_DOC, busbw_factor

    con = out()
    head = Table(show_header=False, box=None, pad_edge=False, title="gpuwhy bench --allreduce", title_justify="left")
    head.add_column(style="bold")
    head.add_column()
    head.add_row("GPUs", _gpus(result))
    if result.rows:
        head.add_row("engine", f"torch.distributed.all_reduce, NCCL {result.nccl_version or '?'} (PyTorch "
                               f"{result.torch_version or '?'}), sum in place, {result.dtype}; one process per GPU; NVLS off")
        head.add_row("timing", f"per size: result checked, {result.warmup} warm-up, {result.iters} iterations between "
                               f"CUDA events; median of each iteration's slowest rank")
        head.add_row("busbw", f"algbw x 2(n-1)/n = algbw x {fmt_g(busbw_factor(result.gpus))} for n = {result.gpus} ({BUSBW_DOC})")
    con.print(head)
    if result.rows:
        t = Table(title="all-reduce by message size (GB/s = 1e9 B/s)", title_justify="left", pad_edge=False)
        for name in ("size", "time", "algbw GB/s", "busbw GB/s", "cv", "rank spread"):
            t.add_column(name, justify="right")
        for r in result.rows:
            t.add_row(fmt_bytes(r.size_bytes), fmt_time(r.time_s), f"{r.algbw_gbs:,.2f}", f"{r.busbw_gbs:,.2f}",
                      f"{r.cv:.2f}", f"{100 * r.rank_spread:.1f}%")
        con.print(t)
    if result.rows and not result.smoke_test:
        big = result.largest
        line = Text(f"largest ({fmt_bytes(big.size_bytes)}): busbw {big.busbw_gbs:,.1f} GB/s", style="bold")
        f = result.limit_fraction
        if f is not None:
            line.append(f" = {100 * f:.0f}% of {result.limit.gbs:,.0f} GB/s ({result.limit.source})")
        else:
            line.append(f"; {result.limit.source}")
        con.print(line)
        con.print(Text(f"smallest ({result.smallest.size_bytes} B): {fmt_time(result.smallest.time_s)} per all-reduce "
                       "(the latency `gpuwhy llm --num-gpus` uses)"))
    for p in result.saved[:1]:
        note(f"saved in the profile of each GPU (e.g. {p})")
    for n in result.notes:
        note(n)
    con.print(Text(result.summary_line(), style="bold"), soft_wrap=True)
