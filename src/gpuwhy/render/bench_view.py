"""Rich rendering of `gpuwhy bench` results and of `--compile-only` reports, and the views the bench modes name."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from ..units import fmt_binary_count, fmt_bytes, fmt_g, fmt_num, fmt_si, fmt_time
from .console import note, out, warn

_REGIME_STYLE = {"fits in L2": "cyan", "L2 partly": "yellow", "DRAM": "green"}


def render_bench(result) -> None:
    """Print a :class:`~gpuwhy.bench.results.BenchResult`: device, bandwidth table,
    sustained DRAM figure, launch overhead, CPU comparison, then the summary line."""
    from ..bench.results import CONVENTION

    con = out()
    d = result.device
    head = Table(show_header=False, box=None, pad_edge=False, title=f"gpuwhy bench --{result.mode}", title_justify="left")
    head.add_column(style="bold")
    head.add_column()
    head.add_row("GPU", f"{d.name} ({d.arch}, {d.sm_count} SMs, L2 {fmt_bytes(d.l2_bytes)}, {fmt_bytes(d.total_memory_bytes)})")
    drv = f"CUDA {d.driver_cuda_version}"
    if result.health_before is not None and result.health_before.driver_version:
        drv = f"{result.health_before.driver_version} ({drv})"
    head.add_row("driver", f"{drv}; kernels built by NVRTC {result.nvrtc} as {d.arch} cubins")
    if result.sheet_name:
        head.add_row("sheet", f"{result.sheet_name}: {fmt_g(result.sheet_bandwidth_gbs)} GB/s DRAM")
    if result.checks:
        sizes = ", ".join(f"{n:,}" for n in result.checks[0].sizes)
        head.add_row("checked", f"{len(result.checks)} kernels against numpy at n = {sizes} (random non-zero data): all correct")
    con.print(head)

    if result.rows:
        t = Table(title=f"memory bandwidth, {result.dtype}: {CONVENTION}", title_justify="left", pad_edge=False)
        for name, kw in (
            ("kernel", {}), ("elements", {"justify": "right"}), ("bytes moved", {"justify": "right"}),
            ("median", {"justify": "right"}), ("cv", {"justify": "right"}), ("GB/s", {"justify": "right"}),
            ("% spec", {"justify": "right"}), ("elem/s", {"justify": "right"}), ("regime", {}),
        ):
            t.add_column(name, **kw)
        last = None
        order = {op: i for i, op in enumerate(("read", "write", "copy", "vecadd"))}
        for r in sorted(result.rows, key=lambda r: (order.get(r.op, 9), r.op, r.variant, r.elements)):
            if last is not None and r.kernel != last:
                t.add_section()
            last = r.kernel
            pct = f"{r.pct_of_spec:.1f}%" if r.pct_of_spec is not None else "-"
            regime = r.regime + (f" x{r.buffer_sets} sets" if r.buffer_sets > 1 else "")
            t.add_row(
                r.kernel, fmt_binary_count(r.elements), fmt_bytes(r.bytes_moved), f"{r.time.median_s * 1e6:,.1f} us",
                f"{100 * r.time.cv:.1f}%", f"{r.gbs:,.0f}", pct, fmt_si(r.elements_per_s, "/s"),
                Text(regime, style=_REGIME_STYLE.get(r.regime, "")),
            )
        con.print(t)
        con.print(
            Text("regimes: ", style="bold")
            + Text("'fits in L2' rows run from the cache (an L2 figure, never DRAM); 'DRAM' rows cycle >= 4x L2 of data "
                   "between uses (buffer sets rotated); the small sizes show the per-launch floor. Times are GPU time "
                   "between CUDA events, medians; vec16 rows use the faster of two launch shapes (grid column in --json/--csv).")
        )
    if result.sustained is not None:
        s = result.sustained
        line = Text("sustained DRAM bandwidth: ", style="bold")
        line.append(f"{s.gbs:,.0f} GB/s", style="bold green")
        line.append(f" ({s.kernel} {s.dtype}, {fmt_binary_count(s.elements)} elements, {fmt_bytes(s.bytes_moved)} moved per launch, read+write bytes)")
        if result.sustained_pct is not None:
            line.append(f" = {result.sustained_pct:.1f}% of the {result.sheet_name} sheet's {fmt_g(result.sheet_bandwidth_gbs)} GB/s: the practical ceiling")
        con.print(line)

    if result.launch is not None:
        lo = result.launch
        t = Table(title="launch overhead, empty kernel (median per launch)", title_justify="left", pad_edge=False)
        t.add_column("way")
        t.add_column("median", justify="right")
        t.add_column("min", justify="right")
        t.add_column("cv", justify="right")
        t.add_column("what it is")
        for name, m, what in (
            ("launch + sync", lo.round_trip, "host clock around a launch and a stream synchronize"),
            ("back-to-back", lo.submit, f"host submission rate, Python included ({lo.submit_path})"),
            ("event-timed", lo.event, "GPU time between events around one queued launch: classify's launch overhead"),
            ("in a graph", lo.graph_per_kernel, f"one graph of {lo.graph_kernels} launches, per kernel"),
        ):
            t.add_row(name, fmt_time(m.median_s), fmt_time(m.min_s), f"{100 * m.cv:.1f}%", what)
        con.print(t)

    if result.cpu is not None:
        c = result.cpu
        line = (f"vecadd on one CPU core (numpy, {c.dtype}): {c.elements:,} elements in {fmt_time(c.time.median_s)} "
                f"({c.gbs:,.1f} GB/s)")
        if c.gpu_time_s:
            line += f"; on the GPU ({c.gpu_kernel}): {fmt_time(c.gpu_time_s)}, {c.speedup:,.0f}x faster (kernel only, data already on the GPU)"
        con.print(line)

    for w in result.warnings:
        warn(w)
    for n in result.notes:
        note(n)
    if result.profile_path:
        note(f"device profile saved: {result.profile_path} (`gpuwhy classify --measured` uses it)")
    con.print(Text(result.summary_line(), style="bold"), soft_wrap=True)  # one line, to paste


def render_compile(reports, arch: str) -> None:
    """Print one row per kernel of every bundled source compiled for ``arch``."""
    t = Table(title=f"bundled kernels compiled to {arch} cubins (NVRTC {reports[0].nvrtc if reports else '?'})",
              title_justify="left", pad_edge=False)
    for col in ("source", "kernel", "arch", "cubin", "status"):
        t.add_column(col)
    for r in reports:
        status = Text("ok" + (" (cached)" if r.cached else f" ({r.seconds:.2f} s)"), style="green") if r.ok else Text(f"FAILED: {r.message}", style="bold red")
        if getattr(r, "skipped", False):
            status = Text("skipped", style="yellow")
        if r.kernels:
            for i, k in enumerate(r.kernels):
                t.add_row(r.source if i == 0 else "", k, r.arch, fmt_bytes(r.cubin_bytes) if i == 0 else "", status if i == 0 else "")
        else:
            t.add_row(r.source, Text(r.message or "-", style="dim"), r.arch, fmt_bytes(r.cubin_bytes) if r.ok else "-", status)
    out().print(t)
    skipped = [r for r in reports if getattr(r, "skipped", False)]
    built = [r for r in reports if not getattr(r, "skipped", False)]
    n_ok = sum(r.ok for r in built)
    nk = sum(len(r.kernels) for r in built if r.ok)
    srcs = len({r.source for r in built})
    line = f"{n_ok}/{len(built)} builds ok: {srcs} sources, {nk} kernels compiled for {arch}"
    if skipped:
        line += "; skipped for " + arch + ": " + "; ".join(f"{r.source} ({r.message.removeprefix('skipped: ')})" for r in skipped)
    out().print(line)


# ------------------------------------------------- the views of bench modes --
# Named in gpuwhy.bench.modes (``"bench_view:render_bench_run"``); each takes a mode's result.


def render_bench_run(run) -> None:
    """A :class:`~gpuwhy.bench.modes.MemoryRun`: the bandwidth run, then the compute ceilings a sweep adds."""
    render_bench(run.result)
    if run.compute is not None:
        from .compute_view import render_compute

        render_compute(run.compute, run.result.device.name)
    if getattr(run, "caches", None) is not None:
        from .hierarchy_view import render_caches

        render_caches(run.caches)


def render_compile_run(run) -> None:
    """A :class:`~gpuwhy.bench.modes.CompileRun` (``--compile-only``)."""
    render_compile(run.reports, run.arch)


def render_roofline_run(run) -> None:
    """A :class:`~gpuwhy.bench.modes.RooflineRun` (``--roofline``): the sweep against its sheet."""
    from .plot import render_roofline_sweep

    render_roofline_sweep(run.sweep, run.sheet)


def render_main_job(job) -> None:
    """A bare `gpuwhy` with a GPU (:class:`~gpuwhy.api.main_job.MainJob`): the probe, the quick
    bench, and what to run next."""
    from .probe_view import render_probe

    render_probe(job.probe)
    render_bench(job.bench)
    note("next: `gpuwhy bench --sweep` for the full sweep and compute ceilings; `gpuwhy classify --measured` to use them")


def render_bench_outcome(o) -> None:
    """One GPU's `gpuwhy bench` (a :class:`~gpuwhy.api.bench.BenchOutcome`): the view its mode names
    (``"module:function"`` under :mod:`gpuwhy.render`), then the baseline comparison when there is one."""
    import importlib

    module, function = o.view.split(":")
    getattr(importlib.import_module(f"gpuwhy.render.{module}"), function)(o.result)
    if o.judged is not None:
        from .check_view import render_check

        render_check([o.judged[0]], o.policy, [o.judged[1]])
