"""Rich rendering of `gpuwhy trace`: per GPU of a torch.profiler trace, busy vs idle,
the top kernels and the verdict."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from ..units import fmt_time
from .cells import num, pct
from .console import note, note_left_out, out

_VERDICT_STYLE = {
    "overhead-bound": "bold yellow",
    "gpu-bound": "bold green",
    "no-gpu-events": "bold red",
}


def _kv_table(title: str | None = None) -> Table:
    t = Table(title=title, show_header=False, title_justify="left", box=None, pad_edge=False)
    t.add_column(style="bold", no_wrap=True)
    t.add_column()
    return t


def render_trace(report) -> None:
    """Print a :class:`~gpuwhy.importers.torch_trace.TraceReport`: per GPU, busy vs idle, the top kernels, the verdict."""
    con = out()
    con.print(f"{report.source}: {report.events:,} events, {report.gpu_events:,} on the GPU"
              + (f", {fmt_time(report.capture_s)} captured" if report.capture_s else ""))
    for d in report.devices:
        t = _kv_table(f"GPU {d.device}")
        t.add_row("span", f"{fmt_time(d.span_s)} (first GPU activity to last)")
        t.add_row("busy", f"{fmt_time(d.busy_s)} ({d.busy_pct:.1f}%: kernels, memcpy and memset, union over {d.streams} streams)")
        t.add_row("idle", f"{fmt_time(d.idle_s)} ({d.idle_pct:.1f}%) in {d.gaps} gaps")
        if d.span_s > 0:
            t.add_row("  waiting on the host", f"{fmt_time(d.host_wait_s)} ({100 * d.host_wait_s / d.span_s:.1f}%, {d.host_wait_gaps} gaps: launch issued after the GPU went idle)")
            t.add_row("  back-to-back gaps", f"{fmt_time(d.back_to_back_s)} ({100 * d.back_to_back_s / d.span_s:.1f}%: launch already issued)")
            if d.unattributed_idle_s > 0:
                t.add_row("  unattributed", f"{fmt_time(d.unattributed_idle_s)} (no linked launch event)")
        t.add_row("kernels", f"{d.kernels:,} ({fmt_time(d.kernel_s)}), median {fmt_time(d.median_kernel_s)}, "
                  f"{pct(d.short_kernel_pct)} shorter than 10 us ({pct(d.short_kernel_time_pct)} of kernel time)")
        if d.memcpys or d.memsets:
            t.add_row("memcpy / memset", f"{d.memcpys} ({fmt_time(d.memcpy_s)}) / {d.memsets} ({fmt_time(d.memset_s)})")
        if d.linked_kernels:
            t.add_row("launch to start", f"median {fmt_time(d.launch_latency_median_s)}, p90 {fmt_time(d.launch_latency_p90_s)} "
                      f"({d.linked_kernels} kernels linked to their launch call)")
        con.print(t)
        if d.top_kernels:
            k = Table(title="top kernels by time", title_justify="left", pad_edge=False)
            k.add_column("kernel", overflow="fold", max_width=60)
            k.add_column("count", justify="right")
            k.add_column("total", justify="right")
            k.add_column("mean", justify="right")
            k.add_column("% of busy", justify="right")
            has_flops = any(x.achieved_tflops is not None for x in d.top_kernels)
            if has_flops:
                k.add_column("TFLOP/s", justify="right")
            for x in d.top_kernels:
                row = [x.name, f"{x.count:,}", fmt_time(x.total_s), fmt_time(x.mean_s), f"{x.busy_pct:.1f}%"]
                if has_flops:
                    row.append(num(x.achieved_tflops))
                k.add_row(*row)
            con.print(k)
        v = Text("verdict: ", style="bold")
        v.append(d.verdict, style=_VERDICT_STYLE.get(d.verdict, "bold"))
        con.print(v)
        for r in d.reasons:
            con.print(f"  - {r}")
        con.print(Text("remedies:" if d.verdict == "overhead-bound" else "next step:", style="bold"))
        for r in d.remedies:
            con.print(Text("  - ") + Text(r, style="green"))
    if not report.devices:
        v = Text("verdict: ", style="bold")
        v.append(report.verdict, style=_VERDICT_STYLE.get(report.verdict, "bold"))
        con.print(v)
    con.print(Text(report.summary))
    if report.host_sync_calls:
        note(f"host syncs: {report.host_sync_calls} blocking runtime calls, {fmt_time(report.host_sync_s)} in total")
    note_left_out("dropped", report.dropped, report.notes)


__all__ = ["render_trace"]
