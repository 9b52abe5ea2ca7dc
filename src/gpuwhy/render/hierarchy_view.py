"""Rich rendering of ``gpuwhy bench --latency`` (the latency ladder, Little's law)
and ``gpuwhy bench --link`` (host <-> device copies)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from ..units import fmt_bytes, fmt_fixed, fmt_kb, fmt_ns, fmt_time
from .console import note, out, warn

_LEVEL_STYLE = {"L1": "cyan", "L2": "green", "L2 far": "yellow", "DRAM": "magenta", "transition": "dim"}


def littles_lines(ll, title: str) -> list[Text]:
    """Little's-law sentences for a :class:`~gpuwhy.model.roofline.littles_law.LittlesLaw`."""
    lines = [Text(title, style="bold")]
    lines.append(Text(
        f"  {ll.bandwidth_gbs:,.0f} GB/s x {ll.latency_s * 1e9:,.0f} ns = {fmt_kb(ll.bytes_in_flight, fixed=True)} in flight "
        f"({ll.bytes_in_flight:,.0f} B); / {ll.sm_count} SMs = {fmt_kb(ll.bytes_in_flight_per_sm, fixed=True)} per SM"))
    for n in ll.needs:
        verdict = ("fits" if n.reachable else "more threads than an SM holds: each thread needs several loads in flight (ILP) or wider loads")
        lines.append(Text(
            f"  at {n.bytes_per_thread} B per thread: {n.threads_per_sm:,.0f} threads per SM = "
            f"{100 * n.fraction_of_limit:,.0f}% of the {ll.max_threads_per_sm:,}-thread limit: {verdict}",
            style="" if n.reachable else "yellow"))
    src = "; ".join(x for x in (f"bandwidth: {ll.bandwidth_source}" if ll.bandwidth_source else "",
                                f"latency: {ll.latency_source}" if ll.latency_source else "") if x)
    if src:
        lines.append(Text(f"  ({src})", style="dim"))
    return lines


def render_latency(result) -> None:
    """Print a :class:`~gpuwhy.bench.latency.LatencyResult`: levels, the curve, Little's law, summary."""
    con = out()
    d = result.device
    head = Table(show_header=False, box=None, pad_edge=False, title="gpuwhy bench --latency", title_justify="left")
    head.add_column(style="bold")
    head.add_column()
    head.add_row("GPU", f"{d.name} ({d.arch}, {d.sm_count} SMs, L2 {fmt_bytes(d.l2_bytes)})")
    head.add_row("chase", f"one thread, dependent {result.load} loads, one node per {result.node_bytes}-byte line, "
                          f"random single cycle (neighbouring lines never consecutive); final address checked")
    clk = result.sm_clock or {}
    if clk.get("sm_clock_mhz"):
        head.add_row("SM clock", f"{clk['sm_clock_mhz']:,.0f} MHz median of {clk.get('clock_samples', 0)} NVML samples during the chase "
                                 f"({clk.get('sm_clock_min_mhz', 0):,.0f}-{clk.get('sm_clock_max_mhz', 0):,.0f} MHz)")
    else:
        head.add_row("SM clock", "not sampled (no NVML); cycles from clock64 in the kernel")
    con.print(head)

    if result.levels:
        t = Table(title="latency ladder: load-to-use latency per level", title_justify="left", pad_edge=False)
        for name, kw in (("level", {}), ("latency", {"justify": "right"}), ("SM cycles", {"justify": "right"}),
                         ("cycles at NVML clock", {"justify": "right"}), ("working sets", {}), ("step to next at", {"justify": "right"})):
            t.add_column(name, **kw)
        for lv in result.levels:
            t.add_row(Text(lv.name, style=_LEVEL_STYLE.get(lv.name, "")), fmt_ns(lv.latency_s, 1, unit=True), fmt_fixed(lv.cycles or None, 0),
                      fmt_fixed(lv.cycles_at_clock or None, 0), f"{fmt_bytes(lv.first_bytes)} .. {fmt_bytes(lv.last_bytes)} ({lv.points} points)",
                      fmt_bytes(lv.edge_bytes) if lv.edge_bytes else "-")
        con.print(t)

    if result.points:
        t = Table(title="the curve (median of the timed launches; 'transition' = between plateaus)", title_justify="left",
                  pad_edge=False)
        for name, kw in (("working set", {"justify": "right"}), ("latency", {"justify": "right"}),
                         ("min..max", {"justify": "right"}), ("SM cycles", {"justify": "right"}),
                         ("clock64 MHz", {"justify": "right"}), ("level", {})):
            t.add_column(name, **kw)
        for p in result.points:
            t.add_row(fmt_bytes(p.working_set_bytes), fmt_ns(p.latency_s, 1, unit=True), f"{p.min_s * 1e9:,.1f}..{p.max_s * 1e9:,.1f}",
                      fmt_fixed(p.cycles or None, 0), fmt_fixed(p.implied_clock_mhz or None, 0), Text(p.level, style=_LEVEL_STYLE.get(p.level, "")))
        con.print(t)

    if result.littles is not None:
        for line in littles_lines(result.littles, "Little's law on this GPU (DRAM): bytes in flight = bandwidth x latency"):
            con.print(line)
    if result.course is not None:
        for line in littles_lines(result.course, "the course's example"):
            con.print(line)

    for w in result.warnings:
        warn(w)
    for n in result.notes:
        note(n)
    con.print(Text(result.summary_line(), style="bold"), soft_wrap=True)


def render_link(result) -> None:
    """Print a :class:`~gpuwhy.bench.link.LinkResult`: the bandwidth table, floors and
    plateaus against the link's rate, the pinned/pageable ratio, summary."""
    from ..bench.link import TIMING

    con = out()
    d = result.device
    lk = result.link
    head = Table(show_header=False, box=None, pad_edge=False, title="gpuwhy bench --link", title_justify="left")
    head.add_column(style="bold")
    head.add_column()
    head.add_row("GPU", f"{d.name} ({d.arch})")
    rate = f"{lk.theoretical_gbs:.2f} GB/s per direction theoretical" if lk.theoretical_gbs else "theoretical rate n/a"
    head.add_row("link", f"{lk.label}: {rate}")
    if lk.note:
        head.add_row("", lk.note)
    if lk.source:
        head.add_row("source", lk.source)
    head.add_row("timing", f"pinned: {TIMING['pinned']}; pageable: {TIMING['pageable']}; medians")
    for c in result.checks:
        head.add_row("checked", c)
    con.print(head)

    by = {(r.direction, r.memory, r.size_bytes): r for r in result.rows}
    sizes = sorted({r.size_bytes for r in result.rows})
    if sizes:
        t = Table(title="copy bandwidth, GB/s (1e9 B/s; both ways: bytes of both copies)", title_justify="left", pad_edge=False)
        cols = (("h2d", "pinned"), ("h2d", "pageable"), ("d2h", "pinned"), ("d2h", "pageable"), ("bidir", "pinned"))
        t.add_column("size", justify="right")
        for direction, memory in cols:
            label = "both ways" if direction == "bidir" else direction.upper()
            t.add_column(f"{label} {memory}", justify="right")
        t.add_column("H2D pinned time", justify="right")
        for n in sizes:
            cells = [fmt_fixed(by[(dd, m, n)].gbs, 1, missing="-") if (dd, m, n) in by else "-" for dd, m in cols]
            r = by.get(("h2d", "pinned", n))
            t.add_row(fmt_bytes(n), *cells, fmt_time(r.time.median_s) if r else "-")
        con.print(t)

    if result.curves:
        t = Table(title="floors and plateaus", title_justify="left", pad_edge=False)
        for name, kw in (("copy", {}), ("small-copy floor", {"justify": "right"}), ("plateau", {"justify": "right"}),
                         ("% of link", {"justify": "right"}), ("half bandwidth at", {"justify": "right"}), ("timed by", {})):
            t.add_column(name, **kw)
        for c in result.curves:
            label = ("both ways" if c.direction == "bidir" else c.direction.upper()) + f" {c.memory}"
            t.add_row(label, f"{fmt_time(c.floor_s)} ({fmt_bytes(c.floor_bytes)})", f"{c.plateau_gbs:,.1f} GB/s",
                      f"{c.pct_of_theoretical:.0f}%" if c.pct_of_theoretical is not None else "n/a",
                      fmt_bytes(c.half_bytes) if c.half_bytes else "-", c.timing)
        con.print(t)

    for direction, words in (("h2d", "host-to-device"), ("d2h", "device-to-host")):
        r, small = result.ratio(direction), result.ratio(direction, "small")
        if r is None:
            continue
        line = Text(f"pinned vs pageable, {words}: ", style="bold")
        line.append(f"{r:.1f}x", style="bold green" if r >= 1.2 else "bold")
        line.append(" faster at large sizes" + (f", {small:.1f}x at {fmt_bytes(sizes[0])}" if small else "")
                    + " (both host-clock timed)")
        con.print(line)
    if result.ratio("h2d") is not None:
        con.print(Text(
            "why: pageable memory can be moved by the OS, so the driver first copies it (CPU memcpy) into a pinned "
            "staging buffer and DMAs from there; page-locked memory is DMA'd by the copy engine directly. That is the "
            "case for `pin_memory=True` in a PyTorch DataLoader (or `tensor.pin_memory()`): batches land in pinned "
            "memory, and `.to('cuda', non_blocking=True)` from them is both faster and able to overlap with compute.",
            style="dim"))

    for w in result.warnings:
        warn(w)
    for n in result.notes:
        note(n)
    con.print(Text(result.summary_line(), style="bold"), soft_wrap=True)


_CACHE_LEVEL = {"L2": "L2", "shared": "shared memory", "L1": "L1"}


def render_caches(result) -> None:
    """Print a :class:`~gpuwhy.bench.cache_bandwidth.CacheResult`: one row per level and
    working set (GB/s, the sampled clock, the clock-derived limit), a "not reported" row
    per family that failed (the reason as a warning), the conventions, summary."""
    con = out()
    rows = list(result.rows)
    failures = list(getattr(result, "failures", ()))
    if rows or failures:
        t = Table(title="cache ceilings (GB/s = 1e9 B/s; medians of event-timed launches)", title_justify="left",
                  pad_edge=False)
        for name, kw in (("level", {}), ("op", {}), ("working set", {"justify": "right"}), ("GB/s", {"justify": "right"}),
                         ("cv", {"justify": "right"}), ("% clock limit", {"justify": "right"}), ("kernel", {})):
            t.add_column(name, **kw)
        for r in rows:
            ws = fmt_bytes(r.working_set_bytes) + (" per SM" if r.level in ("shared", "L1") else "")
            t.add_row(_CACHE_LEVEL.get(r.level, r.level), r.op, ws, f"{r.gbs:,.0f}", f"{100 * r.time.cv:.1f}%",
                      "-" if r.pct_of_limit is None else f"{r.pct_of_limit:.1f}%", f"{r.kernel} {r.grid}x{r.block}")
        for f in failures:
            t.add_row(_CACHE_LEVEL.get(f.level, f.level), f.op, "-", "-", "-", "-", Text("not reported", style="red"))
        con.print(t)
        for f in failures:
            warn(f"{_CACHE_LEVEL.get(f.level, f.level)} {f.op} not reported: {f.reason}")
        for r in rows:
            if r.clock_limit_gbs:
                con.print(Text(f"{_CACHE_LEVEL.get(r.level, r.level)} clock limit: 128 B/clk/SM x {result.device.sm_count} SMs "
                               f"x {r.sm_clock_mhz:,.0f} MHz (NVML, while timing) = {r.clock_limit_gbs:,.0f} GB/s; "
                               f"measured {r.gbs:,.0f} GB/s = {r.pct_of_limit:.1f}%"))
        seen = []
        for r in rows:
            if r.convention and r.convention not in seen:
                seen.append(r.convention)
                con.print(Text(f"{_CACHE_LEVEL.get(r.level, r.level)} {r.op}: {r.convention}", style="dim"))
    for c in result.checks:
        note(f"checked: {c}")
    for n in result.notes:
        note(n)
    con.print(Text(result.summary_line(), style="bold"), soft_wrap=True)

