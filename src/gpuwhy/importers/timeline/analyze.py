"""From a :class:`~.activities.Timeline` to a :class:`~.results.TraceReport`: cleaning, per-GPU
track, idle by cause, kernels by kind, per-step figures and the verdict.

The one analysis of every timeline source: it takes the structure alone (no file format, no
profiler's spelling), so a new source needs one new reader. ``dur: 0`` kernels are kept and
counted (their time is below the source's resolution).
"""

from __future__ import annotations

import numpy as np

from ...units import fmt_counted, fmt_time
from .activities import DTOH, HTOD, KERNEL, MEMCPY, MEMSET, PAGEABLE, SYNC_NAMES, Timeline, extent, framework_of
from ...units import fmt_num
from ...verdict.causes import Cause
from ...verdict.engine import MIN_ACTIVITIES, MIN_WINDOW_S, Diagnosis, diagnose, enough_to_judge
from ...verdict.figures import LAUNCH_SIZED_S, LinkRate, WindowFigures, assumed_link, best_links
from ...verdict.remedies import in_words
from .bins import gpu_timeline
from .clean import BEFORE_LAUNCH_US, STRAY_FACTOR, STRAY_MAX_SHARE, STRAY_MIN_US, Cleaned, clean
from .evidence import Evidence
from .figures import busy_figures, host_ops, largest_kernels, top_kernels
from .gaps import CAUSES, HOST_WORK_MIN_US, QUEUE_LATENCY_US, classify, split, split_gaps
from .host import HostArrays, build_view
from .kinds import by_kind, comm_overlap, kinds_of
from .launches import unrecorded_kernels
from .results import CAUSE_LABELS, IdleBreakdown, IdleCause, TraceGpu, TraceReport
from .steps import first_step, steps_of
from .track import GpuTrack, gpu_track

#: Steps needed before one step holding most of the top cause is worth a note.
MIN_STEPS = 3
#: What to do when a GPU holds too little to judge.
TOO_LITTLE_NEXT = ("Profile more of the program: several steps after warm-up, e.g. "
                   "torch.profiler.schedule(wait=1, warmup=1, active=3).")

def thresholds() -> dict:
    """The thresholds the analysis and verdict use (for ``--json``)."""
    return {
        "launch_sized_s": LAUNCH_SIZED_S,
        "queue_latency_s": QUEUE_LATENCY_US * 1e-6,
        "host_work_min_s": HOST_WORK_MIN_US * 1e-6,
        "min_gpu_events": MIN_ACTIVITIES,
        "min_span_s": MIN_WINDOW_S,
        "stray_factor": STRAY_FACTOR,
        "stray_min_s": STRAY_MIN_US * 1e-6,
        "stray_max_share": STRAY_MAX_SHARE,
    }


class _Context:
    """What every GPU of one analysis shares: the timeline, what the cleaning kept, the host arrays,
    the correlation ids of pageable copies, and the host view of each process (built once)."""

    def __init__(self, t: Timeline, c: Cleaned, host: HostArrays, top: int, timeline_us, links):
        self.t, self.c, self.host, self.top, self.timeline_us, self.links = t, c, host, top, timeline_us, links
        ext = extent(t)
        self.bounds = (ext[0] - HOST_WORK_MIN_US, ext[1] + HOST_WORK_MIN_US) if ext else (0.0, 0.0)
        self.pg_h2d, self.pg_d2h = set(), set()
        pageable = np.flatnonzero(c.gpu_keep & (t.gpu_kind == MEMCPY) & (t.gpu_memory == PAGEABLE))
        for i in pageable.tolist():
            corr = t.gpu_corr[i]
            if corr is not None and t.gpu_copy[i] == HTOD:
                self.pg_h2d.add(corr)
            elif corr is not None and t.gpu_copy[i] == DTOH:
                self.pg_d2h.add(corr)
        self.many_pids = len(set(host.thread_pid)) > 1
        self.framework = framework_of(t)
        self._views: dict = {}

    def view(self, pid):
        key = pid if self.many_pids else None
        v = self._views.get(key)
        if v is None:
            v = self._views[key] = build_view(self.host, pid, self.pg_h2d, self.pg_d2h, self.many_pids, self.bounds)
        return v


def analyze(t: Timeline, source: str = "<trace>", top: int = 10,
            timeline_us: tuple[float, float] | None = None, links: dict | None = None) -> TraceReport:
    """The report of timeline ``t``: per GPU busy, idle by cause, steps, kernels and the verdict.

    Each GPU's :attr:`~.results.TraceGpu.diagnosis` judges its span; with ``timeline_us`` (a window
    ``(start, end)`` in the timeline's clock, us) it judges that window instead (the host-only time
    before and after the GPU's work included), and each GPU also gets its
    :attr:`~.results.TraceGpu.timeline` over it (:mod:`.bins`). ``links``: the fastest pinned copy
    rate known per direction (:class:`~gpuwhy.verdict.figures.LinkRate`), beside the trace's own.

    Raises:
        UsageError: ``top`` < 1.
    """
    from ...errors import UsageError

    if top < 1:
        raise UsageError(f"--top {top} must be at least 1")
    c = clean(t)
    dropped, notes = c.dropped, [*t.notes, *c.notes]
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

    ctx = _Context(t, c, host, top, timeline_us, links or {})
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
    launched, lost = unrecorded_kernels(t)
    if lost:
        notes.append(f"{fmt_num(lost)} of {fmt_num(launched)} kernel launch calls have no kernel in the trace (CUPTI drops "
                     "kernel records when its activity buffers fill; the launch calls stay): the verdict covers the "
                     f"{fmt_counted(sum(d.kernels for d in devices), 'kernel')} recorded; profile fewer steps, or raise "
                     "CUPTI's buffer size, to record them all")
    zero = sum(d.zero_duration_kernels for d in devices)
    if zero:
        res = fmt_time(devices[0].time_resolution_s if devices else 1e-6)
        notes.append(f"{fmt_counted(zero, 'kernel')} recorded with dur 0 (shorter than the trace's {res} resolution): "
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
            f"{fmt_time(d.span_s)} (a verdict needs {MIN_ACTIVITIES} and {fmt_time(MIN_WINDOW_S)}); profile several steps")
    # The GPU that waits longest on something other than its own kernels speaks for the trace;
    # when every GPU's top share is its kernels, the busiest one.
    waiting = [d for d in judged if d.diagnosis.top is not None and not d.diagnosis.top.busy]
    d = max(waiting, key=lambda x: x.diagnosis.top.seconds) if waiting else max(judged, key=lambda x: x.busy_s)
    name = f"GPU {d.device}: " if len(devices) > 1 else ""
    return d.verdict, d.cause, name + d.diagnosis.line


# --------------------------------------------------------------------------- one GPU


def _kernel_figures(track: GpuTrack) -> dict:
    """Kernel counts, the launch-sized share, launch latency and the time resolution of one track."""
    is_k = track.kind == KERNEL
    kd = track.dur[is_k]
    n_k = int(is_k.sum())
    short = kd < LAUNCH_SIZED_S * 1e6
    lat = track.start[is_k] - track.launch[is_k]
    lat = lat[~np.isnan(lat)]
    whole = bool(np.all(track.dur == np.round(track.dur)) and np.all(track.start == np.round(track.start)))
    return {
        "is_k": is_k, "kd": kd, "n_k": n_k, "short": short, "lat": lat,
        "median_k": float(np.median(kd)) * 1e-6 if n_k else None,
        "short_pct": 100.0 * float(short.mean()) if n_k else None,
        "short_time_pct": 100.0 * float(kd[short].sum() / kd.sum()) if n_k and kd.sum() > 0 else None,
        "zero": int((kd == 0).sum()), "resolution_s": 1e-6 if whole else 1e-9,
    }


def _idle_causes(ctx: _Context, track: GpuTrack, view, gaps, inner, parts, tot, copies) -> tuple[list[IdleCause], Evidence, list]:
    """Every idle cause of one GPU with time (largest first), the evidence of every cause, and the
    host operations while the GPU waited."""
    span_us, idle_us = track.span_us, track.idle_us
    gaps_of = {k: int((parts[k] > 1e-9).sum()) for k in CAUSES}
    ops = host_ops(gaps, view, ctx.host, inner, warm=False)
    warm_ops = host_ops(gaps, view, ctx.host, inner, warm=True)
    ev = Evidence(ctx.t, ctx.host, view, track, gaps, inner, parts, tot, ops, warm_ops, copies)
    causes = []
    for k in CAUSES:
        tk = tot[k]
        if tk <= 0 and not (k == "pageable_copy" and any(c.memory == "pageable" for c in copies)):
            continue
        causes.append(IdleCause(
            key=k, label=CAUSE_LABELS[k], time_s=tk * 1e-6, span_pct=100.0 * tk / span_us if span_us else 0.0,
            idle_pct=100.0 * tk / idle_us if idle_us else 0.0, gaps=gaps_of[k], evidence=ev.of(k),
        ))
    causes.sort(key=lambda x: -x.time_s)
    return causes, ev, ops


def _links(copies) -> dict[str, LinkRate]:
    """The in-trace pinned rate per direction (where pinned copies ran), else the assumed host link."""
    seen = {}
    for c in copies:
        if c.memory == "pinned" and c.gbs and c.direction in ("HtoD", "DtoH"):
            seen[c.direction] = LinkRate(c.gbs, f"the pinned {c.direction} copies in this trace")
    return best_links({"HtoD": assumed_link(), "DtoH": assumed_link()}, seen)


def _launched_compiling(view, track: GpuTrack) -> np.ndarray:
    """A mask over the track: the activities whose launch call lies inside a JIT compiler's range (XLA's
    autotuner timing its candidates, a first call's work): warm-up, like the compiling around them."""
    lau = track.launch
    known = ~np.isnan(lau)
    out = np.zeros(lau.size, dtype=bool)
    if known.any() and view.compiling.a.size:
        x = lau[known]
        out[known] = view.compiling.within(x, x + 1e-3) > 0
    return out


def _window_figures(ctx: _Context, track: GpuTrack, view, gaps, tot: dict, ev: Evidence, busy, kernels, copies,
                    steps, warm_kernels: str = "") -> WindowFigures:
    """What the engine judges: the GPU's span, or the analysis window when one was given (its idle
    split then holds the host-only time before and after the GPU's work)."""
    t0 = float(track.start.min())
    if ctx.timeline_us is None:
        lo, hi = t0, float(track.end.max())
        window_s = track.span_us * 1e-6
        idle = {Cause(k): tot[k] * 1e-6 for k in CAUSES}
    else:
        lo, hi = ctx.timeline_us
        window_s = max(hi - lo, track.span_us) * 1e-6
        every = split(gaps, view, np.arange(gaps.g0.size), lo, hi)
        idle = {Cause(k): every[k] * 1e-6 for k in CAUSES}
    n_steps = sum(1 for x in steps if lo <= x.start_s * 1e6 + t0 < hi) or None  # the steps that start in the window
    keys = [*CAUSES, "copy"]
    evidence = {Cause(k): ev.of(k) for k in keys}
    if busy.get(Cause.WARMUP):
        evidence[Cause.WARMUP] = (*evidence[Cause.WARMUP],
                                  f"{fmt_time(busy[Cause.WARMUP])} of GPU work launched inside a JIT compiler's ranges "
                                  "(an autotuner timing candidates, first calls): warm-up too"
                                  + (f" (largest: {warm_kernels}; the trace's kernel tables count them)"
                                     if warm_kernels else ""))
    in_graphs = np.flatnonzero(gaps.after_graph)
    graph_queue = split(gaps, view, in_graphs, *(ctx.timeline_us or (-np.inf, np.inf)))["queue_latency"]
    tracer_s = 0.0
    if ctx.t.tracer_event_us:  # what the tracer cost the host over the window's recorded events
        n_events = int(view.events_before(hi) - view.events_before(lo))
        tracer_s = ctx.t.tracer_event_us * n_events * 1e-6
    return WindowFigures(window_s, idle, busy, kernels, copies, evidence, n_steps, best_links(_links(copies), ctx.links),
                         graphs=int(view.graph_launches), graph_queue_s=graph_queue * 1e-6, tracer_s=tracer_s,
                         framework=ctx.framework)


def _concentrated(top, steps) -> str | None:
    """A reason line when one step holds more than half of the top cause's time (a checkpoint, a
    slow batch): the verdict is the window's, and the typical step may look otherwise."""
    key = top.cause.value
    if len(steps) < MIN_STEPS or key not in steps[0].causes_s:
        return None
    total = sum(s.causes_s[key] for s in steps)
    big = max(steps, key=lambda s: s.causes_s[key])
    if total <= 0 or big.causes_s[key] <= 0.5 * total:
        return None
    idle = float(np.median([s.idle_pct for s in steps]))
    return (f"{100.0 * big.causes_s[key] / total:.0f}% of it is in one step, {big.name} ({fmt_time(big.wall_s)}); the "
            f"median of the {len(steps)} steps is idle {idle:.0f}%: judge a window of typical steps (--steps N)")


def _verdict(track: GpuTrack, diag: Diagnosis | None, steps, framework: str | None = None) -> tuple[str, str | None, list, list]:
    """The GPU's verdict, cause, reasons and remedies (text) from its diagnosis; ``framework``: whose words
    the advice is in where there is too little to judge (:func:`~gpuwhy.verdict.remedies.in_words`)."""
    if diag is None or not enough_to_judge(track.start.size, track.span_us * 1e-6):
        return "too-little-to-judge", None, [
            f"{track.start.size} GPU activities over {fmt_time(track.span_us * 1e-6)}: too little to judge (a verdict "
            f"needs {MIN_ACTIVITIES} and {fmt_time(MIN_WINDOW_S)})"], [in_words("too_little", framework, TOO_LITTLE_NEXT)]
    top = diag.top
    reasons = [diag.line]
    if top is not None:
        note = _concentrated(top, steps)
        if note:
            reasons.append(note)
        reasons.extend(top.evidence)
        nxt = next((s for s in diag.shares if s is not top and s.cause is not Cause.WARMUP
                    and 100.0 * s.seconds / diag.judged_s >= 10.0), None)
        if nxt is not None:
            reasons.append(f"next: {nxt.label}, {100.0 * nxt.seconds / diag.judged_s:.0f}% of the judged window")
    remedies = [f"{r.text} [{r.key}: removes {fmt_time(r.removed_s)}, at most {fmt_num(r.ceiling_x)}x]"
                for r in diag.remedies]
    remedies += list(diag.next_steps)
    return diag.verdict, top.cause.value if top is not None else None, reasons, remedies


def _analyze_gpu(ctx: _Context, track: GpuTrack) -> TraceGpu:
    view = ctx.view(track.pid)
    span_us, idle_us = track.span_us, track.idle_us
    k = _kernel_figures(track)

    outer_lo = float(view.step_start.min()) if view.step_start.size else None
    outer_hi = float(view.step_end.max()) if view.step_end.size else None
    if ctx.timeline_us is not None:
        outer_lo = ctx.timeline_us[0] if outer_lo is None else min(outer_lo, ctx.timeline_us[0])
        outer_hi = ctx.timeline_us[1] if outer_hi is None else max(outer_hi, ctx.timeline_us[1])
    gaps = classify(track, view, outer_lo, outer_hi, warmup=first_step(view.step_name, ctx.host.step_prefix) in (None, 0),
                    tracer_event_us=ctx.t.tracer_event_us)
    inner = np.flatnonzero(gaps.inner)
    parts = split_gaps(gaps, view, inner)
    tot = {key: float(v.sum()) for key, v in parts.items()}
    warm = _launched_compiling(view, track)
    busy, kernels, copies = busy_figures(ctx.t, track, warm=warm)
    causes, ev, ops = _idle_causes(ctx, track, view, gaps, inner, parts, tot, copies)
    steps, step_median = steps_of(gaps, view, track)
    figures = _window_figures(ctx, track, view, gaps, tot, ev, busy, kernels, copies, steps, largest_kernels(ctx.t, track, warm))
    diag = diagnose(figures) if figures.window_s > 0 else None  # (one activity of no length: no window)
    verdict, cause, reasons, remedies = _verdict(track, diag, steps, ctx.framework)

    warm_us = tot["warmup"]
    steady_span = span_us - warm_us
    idle_pct = 100.0 * idle_us / span_us if span_us > 0 else 0.0
    idle = IdleBreakdown(
        device=track.device, span_s=span_us * 1e-6, busy_s=(span_us - idle_us) * 1e-6, idle_s=idle_us * 1e-6,
        idle_pct=idle_pct, steady_span_s=steady_span * 1e-6,
        steady_idle_pct=100.0 * (idle_us - warm_us) / steady_span if steady_span > 0 else 0.0, causes=tuple(causes),
        host_ops=tuple(ops), outside_ops_s=(tot["_dispatch"] + tot["host_work"]) * 1e-6, steps=tuple(steps),
        step_median=step_median, kernel_speedup_max_x=(span_us / idle_us) if idle_us > 0 else None, cause=cause,
    )
    return _gpu_result(ctx, track, view, gaps, k, idle, verdict, cause, reasons, remedies, diag, figures)


def _gpu_result(ctx: _Context, track: GpuTrack, view, gaps, k: dict, idle: IdleBreakdown, verdict, cause, reasons,
                remedies, diag: Diagnosis | None, figures: WindowFigures) -> TraceGpu:
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
        linked_kernels=linked, zero_duration_kernels=k["zero"], time_resolution_s=k["resolution_s"],
        graph_launches=int(view.graph_launches), top_kernels=top_kernels(ctx.t, track, ctx.top, busy_us),
        kinds=by_kind(kidx, track.dur), communication=comm_overlap(kidx, track.start, track.end), idle=idle,
        verdict=verdict, cause=cause, reasons=tuple(reasons), remedies=tuple(remedies), diagnosis=diag, figures=figures,
        timeline=tl, name=ctx.t.device_names.get(track.device),
    )


__all__ = ["BEFORE_LAUNCH_US", "STRAY_FACTOR", "STRAY_MAX_SHARE", "STRAY_MIN_US", "analyze", "thresholds"]
