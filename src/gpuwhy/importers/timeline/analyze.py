"""From a :class:`~.activities.Timeline` to a :class:`~.results.TraceReport`: cleaning, per-GPU
track, idle by cause, kernels by kind, per-step figures and the verdict.

The one analysis of every timeline source: it takes the structure alone (no file format, no
profiler's spelling), so a new source needs one new reader. ``dur: 0`` kernels are kept and
counted (their time is below the source's resolution).
"""

from __future__ import annotations

import numpy as np

from ...units import fmt_time
from .activities import DTOH, HTOD, KERNEL, MEMCPY, MEMSET, PAGEABLE, SYNC_NAMES, Timeline
from .bins import gpu_timeline
from .clean import BEFORE_LAUNCH_US, STRAY_FACTOR, STRAY_MAX_SHARE, STRAY_MIN_US, Cleaned, clean
from .evidence import Evidence
from .figures import copy_stats, host_ops, top_kernels
from .gaps import CAUSES, classify, split_gaps
from .host import HostArrays, build_view
from .kinds import by_kind, comm_overlap, kinds_of
from .results import CAUSE_LABELS, IdleBreakdown, IdleCause, TraceGpu, TraceReport
from .steps import first_step, steps_of
from .track import GpuTrack, gpu_track
from .verdict import (
    IDLE_OVERHEAD_PCT,
    MIN_GPU_EVENTS,
    MIN_SPAN_S,
    MIN_STEPS,
    REMEDIES,
    SHORT_KERNEL_S,
    SHORT_MAJORITY_PCT,
    amdahl_x,
    choose,
    reasons_of,
)


def thresholds() -> dict:
    """The thresholds the analysis and verdict use (for ``--json``)."""
    return {
        "idle_overhead_pct": IDLE_OVERHEAD_PCT,
        "short_kernel_s": SHORT_KERNEL_S,
        "short_majority_pct": SHORT_MAJORITY_PCT,
        "min_gpu_events": MIN_GPU_EVENTS,
        "min_span_s": MIN_SPAN_S,
        "min_steps": MIN_STEPS,
        "stray_factor": STRAY_FACTOR,
        "stray_min_s": STRAY_MIN_US * 1e-6,
        "stray_max_share": STRAY_MAX_SHARE,
    }


class _Context:
    """What every GPU of one analysis shares: the timeline, what the cleaning kept, the host arrays,
    the correlation ids of pageable copies, and the host view of each process (built once)."""

    def __init__(self, t: Timeline, c: Cleaned, host: HostArrays, top: int, timeline_us):
        self.t, self.c, self.host, self.top, self.timeline_us = t, c, host, top, timeline_us
        self.pg_h2d, self.pg_d2h = set(), set()
        pageable = np.flatnonzero(c.gpu_keep & (t.gpu_kind == MEMCPY) & (t.gpu_memory == PAGEABLE))
        for i in pageable.tolist():
            corr = t.gpu_corr[i]
            if corr is not None and t.gpu_copy[i] == HTOD:
                self.pg_h2d.add(corr)
            elif corr is not None and t.gpu_copy[i] == DTOH:
                self.pg_d2h.add(corr)
        self.many_pids = len(set(host.thread_pid)) > 1
        self._views: dict = {}

    def view(self, pid):
        key = pid if self.many_pids else None
        v = self._views.get(key)
        if v is None:
            v = self._views[key] = build_view(self.host, pid, self.pg_h2d, self.pg_d2h, self.many_pids)
        return v


def analyze(t: Timeline, source: str = "<trace>", top: int = 10,
            timeline_us: tuple[float, float] | None = None) -> TraceReport:
    """The report of timeline ``t``: per GPU busy, idle by cause, steps, kernels and the verdict.

    With ``timeline_us`` (a window ``(start, end)`` in the timeline's clock, us), each GPU also gets
    its :attr:`~.results.TraceGpu.timeline` over it (:mod:`.bins`).

    Raises:
        UsageError: ``top`` < 1.
    """
    from ...errors import UsageError

    if top < 1:
        raise UsageError(f"--top {top} must be at least 1")
    c = clean(t)
    dropped, notes = c.dropped, list(c.notes)
    host = HostArrays.build(t, c.api_keep, c.range_keep)
    keep = c.gpu_keep
    ts, dur = t.gpu_start, t.gpu_dur
    capture_s = None
    hs = np.concatenate((host.r_ts, host.h_ts))
    if hs.size:
        he = np.concatenate((host.r_end, host.h_end))
        lo_c = t.window[0] if t.window[0] is not None else float(hs.min())
        hi_c = t.window[1] if t.window[1] is not None else float(he.max())
        if keep.any():
            lo_c = min(lo_c, float(ts[keep].min()))
            hi_c = max(hi_c, float((ts[keep] + dur[keep]).max()))
        capture_s = max(0.0, hi_c - lo_c) * 1e-6

    sync_mask = np.isin(host.r_name, host.runtime_ids(SYNC_NAMES))
    sync_calls = int(sync_mask.sum())
    sync_us = float((host.r_end[sync_mask] - host.r_ts[sync_mask]).sum())

    ctx = _Context(t, c, host, top, timeline_us)
    devices: list[TraceGpu] = []
    if keep.any():
        dev_arr = np.asarray(t.gpu_device, dtype=object)
        for dev in sorted(set(dev_arr[keep].tolist()), key=lambda d: (len(d), d)):
            track = gpu_track(t, c, dev, np.flatnonzero(keep & (dev_arr == dev)))
            devices.append(_analyze_gpu(ctx, track))

    n_gpu = t.gpu_count
    if n_gpu == 0 and not dropped:
        if t.other_devices:
            what = ", ".join(f"{v:,} {k}" for k, v in t.other_devices.items())
            notes.append(f"the trace has device events of another accelerator ({what}) but no CUDA/ROCm GPU track; "
                         "gpuwhy reads CUDA and ROCm kernels, memcpys and memsets only")
        else:
            notes.append("the trace has no GPU events: record it with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA] "
                         "and make sure the code ran on the GPU")
    if any(d.kernels and d.linked_kernels == 0 for d in devices):
        notes.append("no kernel could be linked to its launch call (no correlation ids or ac2g flow events): idle time is unexplained")
    zero = sum(d.zero_duration_kernels for d in devices)
    if zero:
        res = devices[0].time_resolution if devices else "1 us"
        notes.append(f"{zero:,} kernels were recorded with dur 0 (shorter than the trace's {res} resolution): "
                     "they are counted, with no time")

    verdict, cause, summary = _summary(devices, dropped, t)
    return TraceReport(
        source=source, verdict=verdict, cause=cause, summary=summary, devices=tuple(devices), events=t.events,
        gpu_events=n_gpu, runtime_events=t.api_events, host_sync_calls=sync_calls, host_sync_s=sync_us * 1e-6,
        capture_s=capture_s, dropped=dropped, notes=tuple(notes), top=top, thresholds=thresholds(),
    )


def _summary(devices, dropped, t: Timeline):
    if not devices:
        why = " (all dropped: " + ", ".join(f"{v} {k}" for k, v in dropped.items()) + ")" if dropped else ""
        if t.other_devices and not dropped:
            acc = ", ".join(t.other_devices)
            summary = (f"the trace has no CUDA/ROCm GPU track: its device events are {acc}, which gpuwhy does not read yet; "
                       "there is nothing to say about a CUDA or ROCm GPU here")
        else:
            summary = (f"the trace has no GPU events{why}: no kernel, memcpy or memset was recorded, so it says nothing about "
                       "the GPU; record with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]")
        return "no-gpu-events", None, summary
    judged = [d for d in devices if d.verdict != "too-little-to-judge"]
    if not judged:
        d = devices[0]
        return "too-little-to-judge", None, (
            f"too little to judge: GPU {d.device} ran {d.kernels + d.memcpys + d.memsets} activities over "
            f"{fmt_time(d.span_s)} (a verdict needs {MIN_GPU_EVENTS} and {fmt_time(MIN_SPAN_S)}); profile several steps")
    starved = [d for d in judged if d.verdict != "gpu-bound"]
    if starved:
        d = max(starved, key=lambda x: x.idle_s)
        head = f"{d.verdict}: GPU {d.device} is idle {d.idle_pct:.0f}% of its {fmt_time(d.span_s)} span"
        c = next((c for c in d.idle.causes if c.key == d.cause), None)
        if c is not None and d.idle.steady_idle_pct >= IDLE_OVERHEAD_PCT:
            return d.verdict, d.cause, (f"{head}; the largest cause: {c.label}, {c.span_pct:.0f}% of the span "
                                        f"(without it the span is at most {c.max_speedup_x:.2f}x shorter)")
        return d.verdict, d.cause, f"{d.verdict}: GPU {d.device}: {d.reasons[0]}"
    d = max(judged, key=lambda x: x.busy_s)
    return "gpu-bound", None, (f"gpu-bound: GPU {d.device} is busy {d.busy_pct:.0f}% of its {fmt_time(d.span_s)} span: the time is "
                               "in the kernels; hand the top kernels to the roofline (gpuwhy ncu / gpuwhy classify)")


# --------------------------------------------------------------------------- one GPU


def _kernel_figures(track: GpuTrack) -> dict:
    """Kernel counts, the launch-sized share, launch latency and the time resolution of one track."""
    is_k = track.kind == KERNEL
    kd = track.dur[is_k]
    n_k = int(is_k.sum())
    short = kd < SHORT_KERNEL_S * 1e6
    lat = track.start[is_k] - track.launch[is_k]
    lat = lat[~np.isnan(lat)]
    whole = bool(np.all(track.dur == np.round(track.dur)) and np.all(track.start == np.round(track.start)))
    return {
        "is_k": is_k, "kd": kd, "n_k": n_k, "short": short, "lat": lat,
        "median_k": float(np.median(kd)) * 1e-6 if n_k else None,
        "short_pct": 100.0 * float(short.mean()) if n_k else None,
        "short_time_pct": 100.0 * float(kd[short].sum() / kd.sum()) if n_k and kd.sum() > 0 else None,
        "zero": int((kd == 0).sum()), "resolution": "1 us" if whole else "1 ns",
    }


def _idle_causes(ctx: _Context, track: GpuTrack, view, gaps, inner, parts, tot) -> tuple[list[IdleCause], dict, list, list]:
    """Every idle cause of one GPU with time (largest first), the copy figures, and the host
    operations while the GPU waited (after and during warm-up)."""
    span_us, idle_us = track.span_us, track.idle_us
    gaps_of = {k: int((parts[k] > 1e-9).sum()) for k in CAUSES}
    ops = host_ops(gaps, view, ctx.host, inner, warm=False)
    warm_ops = host_ops(gaps, view, ctx.host, inner, warm=True)
    copies = copy_stats(ctx.t, track)
    ev = Evidence(ctx.t, ctx.host, view, track, gaps, inner, parts, tot, ops, warm_ops, copies)
    causes = []
    for k in CAUSES:
        tk = tot[k]
        if tk <= 0 and not (k == "pageable_copy" and copies["pg_n"]):
            continue
        causes.append(IdleCause(
            key=k, label=CAUSE_LABELS[k], time_s=tk * 1e-6, span_pct=100.0 * tk / span_us if span_us else 0.0,
            idle_pct=100.0 * tk / idle_us if idle_us else 0.0, gaps=gaps_of[k],
            max_speedup_x=amdahl_x(span_us, tk), evidence=ev.of(k), remedies=_remedies_of(k, tot, bool(view.top_start.size)),
        ))
    causes.sort(key=lambda x: -x.time_s)
    return causes, copies, ops, warm_ops


def _analyze_gpu(ctx: _Context, track: GpuTrack) -> TraceGpu:
    view = ctx.view(track.pid)
    span_us, idle_us = track.span_us, track.idle_us
    busy_us = span_us - idle_us
    k = _kernel_figures(track)

    outer_lo = float(view.step_start.min()) if view.step_start.size else None
    outer_hi = float(view.step_end.max()) if view.step_end.size else None
    gaps = classify(track, view, outer_lo, outer_hi, warmup=first_step(view.step_name) in (None, 0))
    inner = np.flatnonzero(gaps.inner)
    parts = split_gaps(gaps, view, inner)
    tot = {key: float(v.sum()) for key, v in parts.items()}
    causes, copies, ops, _ = _idle_causes(ctx, track, view, gaps, inner, parts, tot)
    steps, step_median = steps_of(gaps, view, track)

    warm_us = tot["warmup"]
    steady_span = span_us - warm_us
    steady_idle_pct = 100.0 * (idle_us - warm_us) / steady_span if steady_span > 0 else 0.0
    idle_pct = 100.0 * idle_us / span_us if span_us > 0 else 0.0
    short_flag = (k["short_pct"] or 0) > SHORT_MAJORITY_PCT and (k["short_time_pct"] or 0) > 50.0
    # Launch-sized kernels replayed by CUDA graphs: no host launch cost left to remove (verdict module docstring).
    kd, short = k["kd"], k["short"]
    short_in_graphs = bool(short_flag and kd[short & track.graph[k["is_k"]]].sum() > 0.5 * kd[short].sum())
    steady_causes = {key: tot[key] * 1e-6 for key in CAUSES if key != "warmup"}
    step_idle_pct = step_causes = None
    if step_median is not None and len(steps) >= MIN_STEPS:
        step_idle_pct = step_median["idle_pct"]
        step_causes = {key: step_median["causes_s"][key] for key in CAUSES if key != "warmup"}
    gpu_us = float(track.dur.sum())
    pageable_busy_pct = 100.0 * copies["pg_us"] / gpu_us if gpu_us > 0 else 0.0
    verdict, cause = choose(track.start.size, span_us * 1e-6, steady_idle_pct, steady_causes, step_idle_pct, step_causes,
                            short_flag, pageable_busy_pct, short_in_graphs)
    reasons, remedies = reasons_of(verdict, cause, causes, {
        "span_us": span_us, "idle_pct": idle_pct, "steady_idle_pct": steady_idle_pct, "warm_us": warm_us, "idle_us": idle_us,
        "short_pct": k["short_pct"], "n_k": k["n_k"], "median_k": k["median_k"], "n_events": track.start.size,
        "steps": steps, "step_idle_pct": step_idle_pct, "sync_calls": int(view.sync_end.size),
        "pageable_busy_pct": pageable_busy_pct, "short_in_graphs": short_in_graphs, "graph_launches": int(view.graph_launches)})
    if view.graph_launches and any("CUDA graph (" in r for r in remedies):
        remedies = [r for r in remedies if "CUDA graph (" not in r]
        remedies.insert(0, f"The trace already replays CUDA graphs ({view.graph_launches:,} graph launches): capture more of "
                           "the step in them (the eager launches between replays are what the GPU waits for).")

    idle = IdleBreakdown(
        device=track.device, span_s=span_us * 1e-6, busy_s=busy_us * 1e-6, idle_s=idle_us * 1e-6, idle_pct=idle_pct,
        steady_span_s=steady_span * 1e-6, steady_idle_pct=steady_idle_pct, causes=tuple(causes), host_ops=tuple(ops),
        outside_ops_s=tot["_outside_ops"] * 1e-6, steps=tuple(steps), step_median=step_median,
        kernel_speedup_max_x=(span_us / idle_us) if idle_us > 0 else None, cause=cause,
    )
    return _gpu_result(ctx, track, view, gaps, k, idle, verdict, cause, reasons, remedies)


def _gpu_result(ctx: _Context, track: GpuTrack, view, gaps, k: dict, idle: IdleBreakdown, verdict, cause, reasons,
                remedies) -> TraceGpu:
    """The :class:`~.results.TraceGpu` of one track from its figures and verdict."""
    span_us, idle_us = track.span_us, track.idle_us
    busy_us = span_us - idle_us
    g = track.gap_end - track.gap_start
    lg = track.launch[track.gap_index + 1]
    known = ~np.isnan(lg)
    host_mask = known & (lg >= track.gap_start)
    lat = k["lat"]
    linked = int(lat.size)
    kidx = kinds_of(ctx.t.gpu_names, track.name, track.kind)
    tl = gpu_timeline(gaps, view, track, ctx.timeline_us) if ctx.timeline_us is not None else None
    return TraceGpu(
        device=track.device, span_s=span_us * 1e-6, busy_s=busy_us * 1e-6, idle_s=idle_us * 1e-6,
        busy_pct=100.0 - idle.idle_pct, idle_pct=idle.idle_pct, host_wait_s=float(g[host_mask].sum()) * 1e-6,
        back_to_back_s=float(g[known & ~(lg >= track.gap_start)].sum()) * 1e-6,
        unattributed_idle_s=float(g[~known].sum()) * 1e-6, gaps=int(track.gap_index.size),
        host_wait_gaps=int(host_mask.sum()), kernels=k["n_k"],
        memcpys=int((track.kind == MEMCPY).sum()), memsets=int((track.kind == MEMSET).sum()),
        kernel_s=float(k["kd"].sum()) * 1e-6, memcpy_s=float(track.dur[track.kind == MEMCPY].sum()) * 1e-6,
        memset_s=float(track.dur[track.kind == MEMSET].sum()) * 1e-6, streams=len(track.streams),
        median_kernel_s=k["median_k"], short_kernel_pct=k["short_pct"], short_kernel_time_pct=k["short_time_pct"],
        launch_latency_median_s=float(np.median(lat)) * 1e-6 if linked else None,
        launch_latency_p90_s=float(np.percentile(lat, 90)) * 1e-6 if linked else None,
        linked_kernels=linked, zero_duration_kernels=k["zero"], time_resolution=k["resolution"],
        graph_launches=int(view.graph_launches), top_kernels=top_kernels(ctx.t, track, ctx.top, busy_us),
        kinds=by_kind(kidx, track.dur), communication=comm_overlap(kidx, track.start, track.end), idle=idle,
        verdict=verdict, cause=cause, reasons=tuple(reasons), remedies=tuple(remedies), timeline=tl,
    )


def _remedies_of(key: str, tot: dict, has_ops: bool) -> tuple[str, ...]:
    """The remedies of cause ``key``; for host-launch waits spent mostly outside any profiled operator
    (``tot``: idle us by cause and the host-launch sub-split) in a trace that records operators
    (``has_ops``; without any, "outside" says nothing), the host-code remedy first."""
    if key == "host_launch" and has_ops and tot["_outside_ops"] > 0.5 * tot["host_launch"]:
        return REMEDIES["host_launch_outside_ops"] + REMEDIES["host_launch"]
    return REMEDIES[key]


__all__ = ["BEFORE_LAUNCH_US", "STRAY_FACTOR", "STRAY_MAX_SHARE", "STRAY_MIN_US", "analyze", "thresholds"]
