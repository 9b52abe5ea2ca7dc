"""Rich rendering of `gpuwhy trace`: per GPU of a trace, busy vs idle, the time budget with its
evidence and the fixes (:mod:`.diagnosis_view`, as `gpuwhy run` prints them), per-step figures,
kernel time by kind, the top kernels, the verdict and what to do."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from ..units import fmt_counted, fmt_num, fmt_pct, fmt_time
from .console import note, note_left_out, out
from .diagnosis_view import render_diagnosis, render_remedies

_VERDICT_STYLE = {
    "gpu-bound": "bold green",
    "no-gpu-events": "bold red",
    "too-little-to-judge": "bold",
}
#: More steps than this: the median, the fastest and the slowest are shown.
_STEPS_SHOWN = 12


def _kv_table(title: str | None = None) -> Table:
    t = Table(title=title, show_header=False, title_justify="left", box=None, pad_edge=False)
    t.add_column(style="bold", no_wrap=True)
    t.add_column()
    return t


def _label(key: str | None) -> str:
    from ..importers.timeline.results import CAUSE_LABELS

    return CAUSE_LABELS.get(key, key or "-")


def _timeline(con, d) -> None:
    t = _kv_table(f"GPU {d.device}" + (f" ({d.name})" if d.name else ""))
    t.add_row("span", f"{fmt_time(d.span_s)} (first GPU activity to last)")
    streams = fmt_counted(d.streams, "stream")
    t.add_row("busy", f"{fmt_time(d.busy_s)} ({d.busy_pct:.1f}%: kernels, memcpy and memset, union over {streams})")
    t.add_row("idle", f"{fmt_time(d.idle_s)} ({d.idle_pct:.1f}%) in {fmt_counted(d.gaps, 'gap')}")
    kline = (f"{d.kernels:,} ({fmt_time(d.kernel_s)}), median {fmt_time(d.median_kernel_s)}, "
             f"{fmt_pct(d.short_kernel_pct, 0, compact=False)} shorter than 10 us ({fmt_pct(d.short_kernel_time_pct, 0, compact=False)} of kernel time)")
    if d.zero_duration_kernels:
        kline += f"; {fmt_counted(d.zero_duration_kernels, 'kernel')} with dur 0 (below the {fmt_time(d.time_resolution_s)} resolution)"
    t.add_row("kernels", kline)
    if d.memcpys or d.memsets:
        t.add_row("memcpy / memset", f"{d.memcpys:,} ({fmt_time(d.memcpy_s)}) / {d.memsets:,} ({fmt_time(d.memset_s)})")
    if d.linked_kernels:
        t.add_row("launch to start", f"median {fmt_time(d.launch_latency_median_s)}, p90 {fmt_time(d.launch_latency_p90_s)} "
                  f"({fmt_counted(d.linked_kernels, 'kernel')} linked to their launch call)")
    if d.graph_launches:
        t.add_row("CUDA graphs", fmt_counted(d.graph_launches, "graph launch", "graph launches"))
    con.print(t)


def _causes(con, d) -> None:
    if d.diagnosis is not None:
        render_diagnosis(con, d.diagnosis)


def _steps(con, d) -> None:
    idle = d.idle
    if not idle.steps:
        return
    steps = list(idle.steps)
    kinds = {x.name.rsplit("#", 1)[0] for x in steps}  # ProfilerStep#3, PjitFunction(step)#3 (--steps-from)
    ranges = f"{kinds.pop()} ranges" if len(kinds) == 1 else "step ranges"
    if len(steps) > _STEPS_SHOWN:
        fast = min(steps, key=lambda x: x.wall_s)
        slow = max(steps, key=lambda x: x.wall_s)
        steps = [fast, slow] if fast is not slow else [fast]
        title = f"per step ({len(idle.steps)} {ranges}: the fastest, the slowest and the median)"
    else:
        title = f"per step ({len(steps)} {ranges})"
    t = Table(title=title, title_justify="left", pad_edge=False)
    t.add_column("step", overflow="fold")
    t.add_column("wall", justify="right")
    t.add_column("busy", justify="right")
    t.add_column("idle", justify="right")
    t.add_column("largest idle cause", overflow="fold")
    for x in steps:
        t.add_row(x.name, fmt_time(x.wall_s), fmt_time(x.busy_s), f"{x.idle_pct:.0f}%", _label(x.first_cause))
    m = idle.step_median
    if m:
        first = max(m["causes_s"], key=lambda k: m["causes_s"][k]) if m["idle_s"] > 0 else None
        t.add_row("median", fmt_time(m["wall_s"]), fmt_time(m["busy_s"]), f"{m['idle_pct']:.0f}%", _label(first))
    con.print(t)


def _kinds(con, d) -> None:
    if not d.kinds:
        return
    t = Table(title="GPU time by kind", title_justify="left", pad_edge=False)
    t.add_column("kind")
    t.add_column("count", justify="right")
    t.add_column("time", justify="right")
    t.add_column("% of GPU time", justify="right")
    for k in d.kinds:
        t.add_row(k.kind, f"{k.count:,}", fmt_time(k.time_s), f"{k.gpu_time_pct:.1f}%")
    con.print(t)
    c = d.communication
    if c is not None:
        con.print(Text(f"communication: {fmt_counted(c.kernels, 'kernel')}, {fmt_time(c.comm_s)}; {c.overlap_pct:.0f}% overlapped with "
                       f"compute, {fmt_time(c.exposed_s)} exposed"))


def _top(con, d) -> None:
    if not d.top_kernels:
        return
    k = Table(title="top kernels by time", title_justify="left", pad_edge=False)
    k.add_column("kernel", overflow="fold")
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
            row.append(fmt_num(x.achieved_tflops))
        k.add_row(*row)
    con.print(k)


def render_trace(report) -> None:
    """Print a :class:`~gpuwhy.importers.timeline.results.TraceReport`: per GPU, busy vs idle, idle by cause,
    steps, kinds, top kernels, the verdict and its remedies."""
    con = out()
    con.print(Text(f"{report.source}: {fmt_counted(report.events, 'event')}, {report.gpu_events:,} on the GPU"
                   + (f", {fmt_time(report.capture_s)} captured" if report.capture_s else "")))
    for d in report.devices:
        _timeline(con, d)
        _causes(con, d)
        _steps(con, d)
        _kinds(con, d)
        _top(con, d)
        v = Text("verdict: ", style="bold")
        v.append(d.verdict, style=_VERDICT_STYLE.get(d.verdict, "bold yellow"))
        con.print(v)
        if d.reasons:
            con.print(Text(f"  - {d.reasons[0]}"))
        con.print(Text("what to do:", style="bold"))
        if d.verdict == "too-little-to-judge" or d.diagnosis is None:
            for r in d.remedies:
                con.print(Text("  - ") + Text(r, style="green"))
        else:
            render_remedies(con, d.diagnosis)
    if not report.devices:
        v = Text("verdict: ", style="bold")
        v.append(report.verdict, style=_VERDICT_STYLE.get(report.verdict, "bold"))
        con.print(v)
    con.print(Text(report.summary))
    if report.host_sync_calls:
        note(f"host syncs: {report.host_sync_calls:,} blocking runtime calls, {fmt_time(report.host_sync_s)} in total")
    note_left_out("dropped", report.dropped, report.notes)


__all__ = ["render_trace"]
