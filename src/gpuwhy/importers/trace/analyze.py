"""From a parsed trace to a :class:`~gpuwhy.importers.trace.results.TraceReport`: cleaning,
per-GPU timeline, idle by cause, kernels by kind, per-step figures and the verdict.

Robust reading (dropped events are counted by reason in ``dropped``):

- a GPU event whose start or end lies far from the bulk of the trace's
  timestamps (farther from their median than :data:`STRAY_FACTOR` times their
  interquartile range and than :data:`STRAY_MIN_US`: a timestamp near 0 in a
  trace whose clock reads 1.6e15 us) is a stray and dropped, when such events
  are few (:data:`STRAY_MAX_SHARE`); so is one that starts
  more than :data:`BEFORE_LAUNCH_US` before its own launch call, when such
  events are rare (when they are common the clocks disagree: a note says so);
- host events far outside the bulk are dropped the same way;
- GPU work outside the capture window markers is dropped;
- ``dur: 0`` kernels are kept and counted (their time is below the
  trace's resolution).
"""

from __future__ import annotations

import gc
from collections import Counter
from itertools import repeat
from pathlib import Path

import numpy as np

from ...units import fmt_g, fmt_num, fmt_time, fmt_us as _fmt_us
from ..kernel_names import display_names
from .causes import CAUSES, classify, host_windows, split, split_gaps
from .host import STEP_PREFIX, HostArrays, build_view, callers, is_dataloader
from .intervals import Coverage
from .kinds import by_kind, comm_overlap, kinds_of
from .read import events_of, parse_trace_text, read_trace_text
from .results import (
    CAUSE_LABELS,
    HostOp,
    IdleBreakdown,
    IdleCause,
    TraceGpu,
    TraceKernel,
    TraceReport,
    TraceStep,
)
from .scan import GRAPH_LAUNCH_NAMES, SYNC_NAMES, Scan, scan
from .stream import NotStreamable, event_pieces
from .timeline import gpu_timeline
from .verdict import (
    GPU_BOUND_NEXT,
    H200_PAGEABLE_H2D_GBS,
    H200_PINNED_H2D_GBS,
    IDLE_OVERHEAD_PCT,
    MIN_GPU_EVENTS,
    MIN_SPAN_S,
    MIN_STEPS,
    REMEDIES,
    SHORT_KERNEL_S,
    SHORT_MAJORITY_PCT,
    TOO_LITTLE_NEXT,
    amdahl_x,
    choose,
)

#: A timestamp farther from the median of the trace's timestamps than this many interquartile ranges...
STRAY_FACTOR = 10.0
#: ...and than this (us: one minute), so a real pause is not taken for one, is a stray...
STRAY_MIN_US = 60e6
#: ...when at most this share of the events (or one event) lie that far out.
STRAY_MAX_SHARE = 0.01
#: A GPU event starting this long before its own launch call (us) has a bad timestamp.
BEFORE_LAUNCH_US = 1000.0
#: Above this share of linked events starting before their launch, the clocks disagree (not strays).
BEFORE_LAUNCH_MAX_SHARE = 0.01
#: With DataLoader workers, the GPU idle in DataLoader calls from this share of the span on says the workers lag.
DATA_WAIT_SHARE = 0.05


def _thresholds() -> dict:
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


def analyze_trace(data, source: str = "<trace>", top: int = 10,
                  timeline_us: tuple[float, float] | None = None) -> TraceReport:
    """Analyze a parsed Chrome trace (the dict ``json.load`` gives, or a bare event list).

    With ``timeline_us`` (a window ``(start, end)`` in the trace's clock, us), each GPU
    also gets its :attr:`~.results.TraceGpu.timeline` over it (:mod:`.timeline`).

    Raises:
        UsageError: the JSON is not a Chrome trace; ``top`` < 1.
    """
    from ...errors import UsageError

    if top < 1:
        raise UsageError(f"--top {top} must be at least 1")
    s = scan(events_of(data))
    return _report(s, source, top, timeline_us)


def idle_breakdown(data) -> tuple[IdleBreakdown, ...]:
    """The idle time of each GPU of a parsed trace by cause (seconds, % of span, evidence), one per GPU.

    The function `gpuwhy run` and other callers use without the CLI; the same
    objects are the ``idle`` field of :func:`analyze_trace`'s devices.

    Raises:
        UsageError: the JSON is not a Chrome trace.
    """
    return tuple(d.idle for d in analyze_trace(data).devices)


# --------------------------------------------------------------------------- cleaning


def _bounds(parts) -> tuple[float, float] | None:
    """The (low, high) limits of timestamps that are not strays (us), or None without timestamps."""
    allv = np.concatenate([p for p in parts if p.size]) if any(p.size for p in parts) else np.empty(0)
    if allv.size == 0:
        return None
    q25, med, q75 = np.quantile(allv, [0.25, 0.5, 0.75])
    margin = max(STRAY_FACTOR * float(q75 - q25), STRAY_MIN_US)
    return float(med) - margin, float(med) + margin


def _strays(mask: np.ndarray, total: int) -> np.ndarray:
    """``mask`` when it marks few events (at most STRAY_MAX_SHARE of ``total``, or one), else none:
    many events far out are a trace of two parts, not strays."""
    n = int(mask.sum())
    return mask if n and n <= max(1, STRAY_MAX_SHARE * total) else np.zeros_like(mask)


def _report(s: Scan, source: str, top: int, timeline_us: tuple[float, float] | None = None) -> TraceReport:
    dropped = dict(s.dropped)
    notes: list[str] = []
    n_gpu = len(s.g_ts)
    ts = np.asarray(s.g_ts, dtype=np.float64)
    dur = np.asarray(s.g_dur, dtype=np.float64)
    kind = np.asarray(s.g_kind, dtype=np.int8)
    name = np.asarray(s.g_name, dtype=np.int64)
    r_ts = np.asarray(s.r_ts, dtype=np.float64)
    r_end = r_ts + np.asarray(s.r_dur, dtype=np.float64)
    r_name = np.asarray(s.r_name, dtype=np.int64)
    r_thread = np.asarray(s.r_thread, dtype=np.int64)
    h_ts = np.asarray(s.h_ts, dtype=np.float64)
    h_end = h_ts + np.asarray(s.h_dur, dtype=np.float64)
    if s.host_bad_ts:
        dropped["host events with a missing or non-positive timestamp"] = s.host_bad_ts

    # Launch call per GPU event: by correlation id, else through a flow event.
    lau_i = np.fromiter(map(s.corr_runtime.get, s.g_corr, repeat(-1)), dtype=np.int64, count=n_gpu)
    launch = np.full(n_gpu, np.nan)
    launch_end = np.full(n_gpu, np.nan)
    has = lau_i >= 0
    launch[has] = r_ts[lau_i[has]]
    launch_end[has] = r_end[lau_i[has]]
    if s.flow_key:
        for i, key in s.flow_key.items():
            fid = s.flow_end.get(key)
            if fid is not None and fid in s.flow_start:
                launch[i] = s.flow_start[fid]

    keep = np.ones(n_gpu, dtype=bool)
    r_keep = np.ones(r_ts.size, dtype=bool)
    h_keep = np.ones(h_ts.size, dtype=bool)
    b = _bounds((ts, r_ts, h_ts))
    if b is not None:
        lo, hi = b
        total = ts.size + r_ts.size + h_ts.size
        stray = _strays((ts < lo) | (ts + dur > hi), total)
        if stray.any():
            dropped["GPU events with a timestamp far outside the rest of the trace"] = int(stray.sum())
            keep &= ~stray
        r_keep = ~_strays((r_ts < lo) | (r_end > hi), total)
        h_keep = ~_strays((h_ts < lo) | (h_end > hi), total)
        bad_host = int((~r_keep).sum() + (~h_keep).sum())
        if bad_host:
            dropped["host events with a timestamp far outside the rest of the trace"] = bad_host
        bad_launch = np.isfinite(launch) & (launch >= lo) & (launch <= hi)
        early = keep & bad_launch & (ts < launch - BEFORE_LAUNCH_US)
        linked = int((keep & np.isfinite(launch)).sum())
        if early.any():
            if early.sum() <= max(1, BEFORE_LAUNCH_MAX_SHARE * linked):
                dropped["GPU events that start before their own launch call"] = int(early.sum())
                keep &= ~early
            else:
                notes.append(
                    f"{int(early.sum())} of {linked} GPU events start more than {_fmt_us(BEFORE_LAUNCH_US)} before their "
                    "launch call: the GPU and host clocks disagree, so the split of idle time by host activity is unsure"
                )
    if s.win_start is not None:
        out = keep & (ts < s.win_start)
        if out.any():
            dropped["GPU events that start before the capture window"] = int(out.sum())
        keep &= ~out
    if s.win_end is not None:
        out = keep & (ts > s.win_end)
        if out.any():
            dropped["GPU events that start after the capture window"] = int(out.sum())
        keep &= ~out
    # A launch call dropped as a stray links nothing.
    if r_keep.size:
        dead = has & ~r_keep[np.clip(lau_i, 0, None)]
        launch[dead] = np.nan
        launch_end[dead] = np.nan

    host = HostArrays.build(s, r_ts, r_end, r_name, r_thread, h_ts, h_end, r_keep, h_keep)
    capture_s = None
    hs = np.concatenate((host.r_ts, host.h_ts))
    if hs.size:
        he = np.concatenate((host.r_end, host.h_end))
        lo_c = s.win_start if s.win_start is not None else float(hs.min())
        hi_c = s.win_end if s.win_end is not None else float(he.max())
        if keep.any():
            lo_c = min(lo_c, float(ts[keep].min()))
            hi_c = max(hi_c, float((ts[keep] + dur[keep]).max()))
        capture_s = max(0.0, hi_c - lo_c) * 1e-6

    sync_mask = np.isin(host.r_name, host.runtime_ids(SYNC_NAMES))
    sync_calls = int(sync_mask.sum())
    sync_us = float((host.r_end[sync_mask] - host.r_ts[sync_mask]).sum())

    names_by_id = [k for k, _ in sorted(s.names.items(), key=lambda kv: kv[1])]
    pg_h2d, pg_d2h = set(), set()
    for i in np.flatnonzero(keep & (kind == 1)).tolist():
        nm = names_by_id[name[i]]
        c = s.g_corr[i]
        if c is not None and "Pageable" in nm:
            if "HtoD" in nm:
                pg_h2d.add(c)
            elif "DtoH" in nm:
                pg_d2h.add(c)
    r_thread_of_gpu = np.where(lau_i >= 0, r_thread[np.clip(lau_i, 0, None)], -1) if r_thread.size else np.full(n_gpu, -1)

    dev_arr = np.asarray(s.g_dev, dtype=object)
    devices: list[TraceGpu] = []
    many_pids = len(set(host.thread_pid)) > 1
    views: dict = {}
    ctx = _Ctx(s, host, names_by_id, pg_h2d, pg_d2h, top, views, many_pids)
    ctx.r_name_all = r_name
    ctx.timeline_us = timeline_us
    if keep.any():
        for dev in sorted(set(dev_arr[keep].tolist()), key=lambda d: (len(d), d)):
            sel = np.flatnonzero(keep & (dev_arr == dev))
            devices.append(_analyze_gpu(ctx, dev, sel, ts, dur, kind, name, launch, launch_end, lau_i, r_thread_of_gpu))

    if n_gpu == 0 and not dropped:
        if s.other_devices:
            what = ", ".join(f"{v:,} {k}" for k, v in s.other_devices.items())
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

    verdict, cause, summary = _summary(devices, dropped, s)
    return TraceReport(
        source=source, verdict=verdict, cause=cause, summary=summary, devices=tuple(devices), events=s.events,
        gpu_events=n_gpu, runtime_events=s.runtime, host_sync_calls=sync_calls, host_sync_s=sync_us * 1e-6,
        capture_s=capture_s, dropped=dropped, notes=tuple(notes), top=top, thresholds=_thresholds(),
    )


def _summary(devices, dropped, s):
    if not devices:
        why = " (all dropped: " + ", ".join(f"{v} {k}" for k, v in dropped.items()) + ")" if dropped else ""
        if s.other_devices and not dropped:
            acc = ", ".join(s.other_devices)
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


class _Ctx:
    def __init__(self, s, host, names_by_id, pg_h2d, pg_d2h, top, views, many_pids):
        self.s, self.host, self.names_by_id = s, host, names_by_id
        self.pg_h2d, self.pg_d2h, self.top, self.views, self.many_pids = pg_h2d, pg_d2h, top, views, many_pids

    def view(self, pid):
        key = pid if self.many_pids else None
        v = self.views.get(key)
        if v is None:
            v = self.views[key] = build_view(self.host, pid, self.pg_h2d, self.pg_d2h, self.many_pids)
        return v


# --------------------------------------------------------------------------- one GPU


def _analyze_gpu(ctx: _Ctx, dev, sel, ts_all, dur_all, kind_all, name_all, launch_all, launch_end_all, lau_i_all, thread_all) -> TraceGpu:
    s, host = ctx.s, ctx.host
    order = sel[np.argsort(ts_all[sel], kind="stable")]
    st = ts_all[order]
    du = dur_all[order]
    en = st + du
    kind = kind_all[order]
    name = name_all[order]
    lau = launch_all[order]
    lau_end = launch_end_all[order]
    lau_i = lau_i_all[order]

    # Span, busy and idle: the union of all work over all streams.
    span_us = float(en.max() - st.min())
    cm = np.maximum.accumulate(en)
    gaps = st[1:] - cm[:-1]
    gmask = gaps > 0
    g = gaps[gmask]
    idle_us = float(g.sum())
    busy_us = span_us - idle_us
    lg = lau[1:][gmask]
    prev_end = cm[:-1][gmask]
    known = ~np.isnan(lg)
    host_mask = known & (lg >= prev_end)
    host_wait_us = float(g[host_mask].sum())
    b2b_us = float(g[known & (lg < prev_end)].sum())
    unattr_us = float(g[~known].sum())

    # Kernels: counts (dur 0 included), short share, launch latency.
    is_k = kind == 0
    kd = du[is_k]
    n_k = int(is_k.sum())
    median_k = float(np.median(kd)) * 1e-6 if n_k else None
    short = kd < SHORT_KERNEL_S * 1e6
    short_pct = 100.0 * float(short.mean()) if n_k else None
    short_time_pct = 100.0 * float(kd[short].sum() / kd.sum()) if n_k and kd.sum() > 0 else None
    lat = st[is_k] - lau[is_k]
    lat = lat[~np.isnan(lat)]
    linked = int(lat.size)
    zero = int((kd == 0).sum())
    whole = bool(np.all(du == np.round(du)) and np.all(st == np.round(st)))
    resolution = "1 us" if whole else "1 ns"

    streams_raw = list(map(s.g_stream.__getitem__, order.tolist()))
    codes = {x: i for i, x in enumerate(dict.fromkeys(streams_raw))}  # in order of first appearance
    stream = np.fromiter(map(codes.__getitem__, streams_raw), dtype=np.int64, count=len(streams_raw))
    raw_streams = list(codes)

    # The host process that launched this GPU's work.
    th = thread_all[order]
    th = th[th >= 0]
    pid = Counter(map(host.thread_pid.__getitem__, th.tolist())).most_common(1)[0][0] if th.size else None
    view = ctx.view(pid)

    graph_ids = host.runtime_ids(GRAPH_LAUNCH_NAMES)
    graph = np.zeros(st.size, dtype=bool)
    if graph_ids.size:
        li = lau_i >= 0
        graph[li] = np.isin(ctx.r_name_all[lau_i[li]], graph_ids)
    pageable_next = np.zeros(st.size, dtype=bool)
    if ctx.pg_h2d:
        corr = map(s.g_corr.__getitem__, order.tolist())
        pageable_next = np.fromiter(map(ctx.pg_h2d.__contains__, corr), dtype=bool, count=order.size)

    outer_lo = float(view.step_start.min()) if view.step_start.size else None
    outer_hi = float(view.step_end.max()) if view.step_end.size else None
    gp = classify(st, en, cm, stream, lau, lau_end, name, graph, pageable_next, view, raw_streams, outer_lo, outer_hi,
                  warmup=_first_step(view.step_name) in (None, 0))
    inner = np.flatnonzero(gp.inner)
    parts = split_gaps(gp, view, inner)
    tot = {k: float(v.sum()) for k, v in parts.items()}
    gaps_of = {k: int((parts[k] > 1e-9).sum()) for k in CAUSES}

    # Host operations while the GPU waited for the host (warm-up apart), and during warm-up.
    host_ops = _host_ops(gp, view, host, inner, warm=False)
    warm_ops = _host_ops(gp, view, host, inner, warm=True)

    # Per step.
    steps, step_median = _steps(gp, view, st, en)

    warm_us = tot["warmup"]
    steady_span = span_us - warm_us
    steady_idle = idle_us - warm_us
    steady_idle_pct = 100.0 * steady_idle / steady_span if steady_span > 0 else 0.0
    idle_pct = 100.0 * idle_us / span_us if span_us > 0 else 0.0

    copies = _copy_stats(ctx, order, kind, name, du)
    ev = _Evidence(ctx, view, gp, inner, parts, tot, order, du, kind, name, stream, raw_streams, host_ops, warm_ops, copies,
                   span_us)
    causes = []
    for k in CAUSES:
        t = tot[k]
        if t <= 0 and not (k == "pageable_copy" and copies["pg_n"]):
            continue
        causes.append(IdleCause(
            key=k, label=CAUSE_LABELS[k], time_s=t * 1e-6, span_pct=100.0 * t / span_us if span_us else 0.0,
            idle_pct=100.0 * t / idle_us if idle_us else 0.0, gaps=gaps_of[k],
            max_speedup_x=amdahl_x(span_us, t), evidence=ev.of(k), remedies=_remedies_of(k, tot, bool(view.top_start.size)),
        ))
    causes.sort(key=lambda c: -c.time_s)

    n_events = st.size
    short_flag = (short_pct or 0) > SHORT_MAJORITY_PCT and (short_time_pct or 0) > 50.0
    # Launch-sized kernels replayed by CUDA graphs: no host launch cost left to remove (verdict module docstring).
    short_in_graphs = bool(short_flag and kd[short & graph[is_k]].sum() > 0.5 * kd[short].sum())
    steady_causes = {k: tot[k] * 1e-6 for k in CAUSES if k != "warmup"}
    step_idle_pct = step_causes = None
    if step_median is not None and len(steps) >= MIN_STEPS:
        step_idle_pct = step_median["idle_pct"]
        step_causes = {k: step_median["causes_s"][k] for k in CAUSES if k != "warmup"}
    gpu_us = float(du.sum())
    pageable_busy_pct = 100.0 * copies["pg_us"] / gpu_us if gpu_us > 0 else 0.0
    verdict, cause = choose(n_events, span_us * 1e-6, steady_idle_pct, steady_causes, step_idle_pct, step_causes, short_flag,
                            pageable_busy_pct, short_in_graphs)

    reasons, remedies = _reasons(verdict, cause, causes, {
        "span_us": span_us, "idle_pct": idle_pct, "steady_idle_pct": steady_idle_pct, "warm_us": warm_us, "idle_us": idle_us,
        "short_pct": short_pct, "n_k": n_k, "median_k": median_k, "n_events": n_events, "steps": steps, "step_idle_pct": step_idle_pct,
        "sync_calls": int(view.sync_end.size), "pageable_busy_pct": pageable_busy_pct,
        "short_in_graphs": short_in_graphs, "graph_launches": int(view.graph_launches)})
    if view.graph_launches and any("CUDA graph (" in r for r in remedies):
        remedies = [r for r in remedies if "CUDA graph (" not in r]
        remedies.insert(0, f"The trace already replays CUDA graphs ({view.graph_launches:,} graph launches): capture more of "
                           "the step in them (the eager launches between replays are what the GPU waits for).")

    idle = IdleBreakdown(
        device=str(dev), span_s=span_us * 1e-6, busy_s=busy_us * 1e-6, idle_s=idle_us * 1e-6, idle_pct=idle_pct,
        steady_span_s=steady_span * 1e-6, steady_idle_pct=steady_idle_pct, causes=tuple(causes), host_ops=tuple(host_ops),
        outside_ops_s=tot["_outside_ops"] * 1e-6, steps=tuple(steps), step_median=step_median,
        kernel_speedup_max_x=(span_us / idle_us) if idle_us > 0 else None, cause=cause,
    )
    kidx = kinds_of(ctx.names_by_id, name, kind)
    tl = gpu_timeline(gp, view, st, en, ctx.timeline_us) if ctx.timeline_us is not None else None
    return TraceGpu(
        device=str(dev), span_s=span_us * 1e-6, busy_s=busy_us * 1e-6, idle_s=idle_us * 1e-6,
        busy_pct=100.0 - idle_pct, idle_pct=idle_pct, host_wait_s=host_wait_us * 1e-6, back_to_back_s=b2b_us * 1e-6,
        unattributed_idle_s=unattr_us * 1e-6, gaps=int(gmask.sum()), host_wait_gaps=int(host_mask.sum()), kernels=n_k,
        memcpys=int((kind == 1).sum()), memsets=int((kind == 2).sum()), kernel_s=float(kd.sum()) * 1e-6,
        memcpy_s=float(du[kind == 1].sum()) * 1e-6, memset_s=float(du[kind == 2].sum()) * 1e-6,
        streams=len(codes), median_kernel_s=median_k, short_kernel_pct=short_pct, short_kernel_time_pct=short_time_pct,
        launch_latency_median_s=float(np.median(lat)) * 1e-6 if linked else None,
        launch_latency_p90_s=float(np.percentile(lat, 90)) * 1e-6 if linked else None,
        linked_kernels=linked, zero_duration_kernels=zero, time_resolution=resolution,
        graph_launches=int(view.graph_launches),
        top_kernels=_top_kernels(ctx, order, is_k, kd, name, busy_us),
        kinds=by_kind(kidx, du), communication=comm_overlap(kidx, st, en), idle=idle,
        verdict=verdict, cause=cause, reasons=tuple(reasons), remedies=tuple(remedies), timeline=tl,
    )


def _first_step(step_names) -> int | None:
    """The smallest N of the trace's ``ProfilerStep#N`` ranges, None without any."""
    ns = [int(x[len(STEP_PREFIX):]) for x in step_names if isinstance(x, str) and x[len(STEP_PREFIX):].isdigit()]
    return min(ns) if ns else None


def _remedies_of(key: str, tot: dict, has_ops: bool) -> tuple[str, ...]:
    """The remedies of cause ``key``; for host-launch waits spent mostly outside any profiled operator
    (``tot``: idle us by cause and the host-launch sub-split) in a trace that records operators
    (``has_ops``; without any, "outside" says nothing), the host-code remedy first."""
    if key == "host_launch" and has_ops and tot["_outside_ops"] > 0.5 * tot["host_launch"]:
        return REMEDIES["host_launch_outside_ops"] + REMEDIES["host_launch"]
    return REMEDIES[key]


def _copy_stats(ctx, order, kind, name, du) -> dict:
    """Host-to-device copies of one GPU: count, bytes and time (us) from pageable and from pinned memory."""
    out = {"pg_n": 0, "pg_bytes": 0.0, "pg_us": 0.0, "pin_n": 0, "pin_bytes": 0.0, "pin_us": 0.0}
    for j in np.flatnonzero(kind == 1).tolist():
        nm = ctx.names_by_id[name[j]]
        if "HtoD" not in nm:
            continue
        key = "pg" if "Pageable" in nm else "pin" if "Pinned" in nm else None
        if key is None:
            continue
        out[key + "_n"] += 1
        out[key + "_us"] += float(du[j])
        b = _num_bytes(ctx.s.g_bytes.get(int(order[j])))
        if b is not None:
            out[key + "_bytes"] += b
    return out


def _host_ops(gp, view, host, inner, warm: bool, n: int = 5) -> list[HostOp]:
    """Top-level host operations by the time they ran inside the host windows of launched-late gaps,
    weighted by the gaps' warm-up share (``warm``) or its complement; DataLoader ranges aside."""
    wa, wb, wgap = host_windows(gp, inner)
    if not view.top_start.size or not wa.size:
        return []
    wf = gp.warm_frac[wgap]
    cov = Coverage(wa, wb, wf if warm else 1.0 - wf)
    ov = cov.within(view.top_start, view.top_end)
    per = np.bincount(view.top_name, weights=ov, minlength=len(host.h_names))
    out = []
    for i in np.argsort(-per, kind="stable").tolist():
        if per[i] <= 0 or len(out) >= n:
            break
        nm = host.h_names[i]
        if is_dataloader(nm):
            continue
        out.append(HostOp(str(nm), float(per[i]) * 1e-6))
    return out


def _steps(gp, view, st, en):
    if not view.step_start.size:
        return [], None
    steps = []
    for a, b, nm in zip(view.step_start.tolist(), view.step_end.tolist(), view.step_name):
        if b <= a:
            continue
        i0 = int(np.searchsorted(gp.g1, a, side="right"))
        i1 = int(np.searchsorted(gp.g0, b, side="left"))
        d = split(gp, view, np.arange(i0, max(i0, i1)), a, b)
        idle = sum(d[k] for k in CAUSES)
        wall = b - a
        idle = min(idle, wall)
        first = max(CAUSES, key=lambda k: d[k]) if idle > 0 else None
        steps.append(TraceStep(name=str(nm), start_s=(a - float(st.min())) * 1e-6, wall_s=wall * 1e-6,
                               busy_s=(wall - idle) * 1e-6, idle_s=idle * 1e-6,
                               idle_pct=100.0 * idle / wall, causes_s={k: d[k] * 1e-6 for k in CAUSES}, first_cause=first))
    if not steps:
        return [], None
    med = {
        "steps": len(steps),
        "wall_s": float(np.median([x.wall_s for x in steps])),
        "busy_s": float(np.median([x.busy_s for x in steps])),
        "idle_s": float(np.median([x.idle_s for x in steps])),
        "idle_pct": float(np.median([x.idle_pct for x in steps])),
        "causes_s": {k: float(np.median([x.causes_s[k] for x in steps])) for k in CAUSES},
        "slowest": max(steps, key=lambda x: x.wall_s).name,
        "slowest_wall_s": max(x.wall_s for x in steps),
    }
    return steps, med


def _top_kernels(ctx, order, is_k, kd, name, busy_us) -> tuple[TraceKernel, ...]:
    s = ctx.s
    n_k = int(is_k.sum())
    if not n_k:
        return ()
    kn = name[is_k]
    tot = np.bincount(kn, weights=kd)
    cnt = np.bincount(kn)
    fl = fl_cnt = None
    if s.ext_flops:
        exts = [s.g_ext[i] for i in order[is_k].tolist()]
        op_dur: dict = {}
        for x, d in zip(exts, kd.tolist()):
            if x is not None and x in s.ext_flops:
                op_dur[x] = op_dur.get(x, 0.0) + d
        if op_dur:
            kf = np.asarray([s.ext_flops[x] * d / op_dur[x] if (x in op_dur and op_dur[x] > 0) else np.nan
                             for x, d in zip(exts, kd.tolist())])
            have = ~np.isnan(kf)
            if have.any():
                fl = np.bincount(kn[have], weights=kf[have], minlength=len(tot))
                fl_cnt = np.bincount(kn[have], minlength=len(tot))
    ids = [int(i) for i in np.argsort(-tot, kind="stable")[:ctx.top] if cnt[i] > 0]
    disp = display_names([ctx.names_by_id[i] for i in ids])
    out = []
    for i in ids:
        full = ctx.names_by_id[i]
        f = tf = None
        if fl is not None and fl_cnt[i] == cnt[i] and fl[i] > 0:
            f = float(fl[i])
            tf = float(f / (tot[i] * 1e-6) / 1e12) if tot[i] > 0 else None
        out.append(TraceKernel(
            name=disp[full], full_name=full, count=int(cnt[i]), total_s=float(tot[i]) * 1e-6,
            mean_s=float(tot[i] / cnt[i]) * 1e-6, busy_pct=100.0 * float(tot[i]) / busy_us if busy_us > 0 else 0.0,
            flops=f, achieved_tflops=tf,
        ))
    return tuple(out)


# --------------------------------------------------------------------------- evidence and reasons


class _Evidence:
    """The evidence line(s) of each cause, from the classified gaps."""

    def __init__(self, ctx, view, gp, inner, parts, tot, order, du, kind, name, stream, raw_streams, host_ops, warm_ops,
                 copies, span_us):
        self.__dict__.update(locals())
        del self.__dict__["self"]

    def of(self, key: str) -> tuple[str, ...]:
        return tuple(getattr(self, "_" + key)())

    def _n(self, key):
        return int((self.parts[key] > 1e-9).sum())

    def _host_launch(self):
        t = self.tot
        ops = ", ".join(f"{o.name} {fmt_time(o.time_s)}" for o in self.host_ops[:3])
        lines = [f"{self._n('host_launch')} gaps where the next launch came after the GPU had gone idle: "
                 f"{_fmt_us(t['_in_ops'])} with the host in CPU operators"
                 + (f" (top: {ops})" if ops else "")
                 + f", {_fmt_us(t['_outside_ops'])} outside any profiled operator (Python, sleep, I/O), "
                 f"{_fmt_us(t['_launch'])} from launch call to GPU start"]
        k = self.kind == 0
        if k.any():
            kd = self.du[k]
            short = float((kd < SHORT_KERNEL_S * 1e6).mean()) * 100
            lines.append(f"{short:.0f}% of the {int(k.sum()):,} kernels are shorter than 10 us (median {_fmt_us(float(np.median(kd)))})")
        return lines

    def _host_sync(self):
        v, host = self.view, self.ctx.host
        names = Counter(host.r_names[host.r_name[i]] for i in v.sync_idx.tolist())
        blocked = float(v.sync_cum[-1]) if v.sync_cum.size else 0.0
        what = ", ".join(f"{n} {nm}" for nm, n in names.most_common(3))
        lines = [f"{v.sync_idx.size:,} blocking calls ({what}) held the host {_fmt_us(blocked)} in all"]
        idx = v.sync_idx[:2000]
        who = Counter()
        frames = Counter()
        for outer, inner, frame in callers(host, idx):
            who[(outer, inner)] += 1
            if frame:
                frames[frame] += 1
        if who:
            parts = []
            for (outer, inner), n in who.most_common(3):
                if outer is None:
                    parts.append(f"outside any operator (torch.cuda.synchronize() or a library) x{n}")
                elif inner and inner != outer:
                    parts.append(f"{outer} > {inner} x{n}")
                else:
                    parts.append(f"{outer} x{n}")
            lines.append("called from " + "; ".join(parts))
        if frames:
            lines.append("Python: " + "; ".join(f"{f} x{n}" for f, n in frames.most_common(2)))
        gp, inner = self.gp, self.inner
        after = inner[(gp.sync[inner] > 0)]
        follow = float((gp.g1[after] - gp.g0[after]).sum())
        if after.size and self.tot["host_sync"] < 0.2 * follow:
            lines.append(f"{after.size} gaps begin with the host in a sync, but the syncs cost only {_fmt_us(self.tot['host_sync'])} "
                         f"of the {_fmt_us(follow)} idle after them: the GPU had already finished, the host is the slower side")
        return lines

    def _data_loading(self):
        v = self.view
        host = self.ctx.host
        nm = Counter(n for n in host.h_names if isinstance(n, str) and "DataLoader" in n)
        label = next(iter(nm), "DataLoader")
        lines = [(f"{v.data_ranges:,} DataLoader calls ({label}) took {fmt_time(v.data_s)} in all, "
                 f"{fmt_time(v.data_s / max(1, v.data_ranges))} per batch; the GPU was idle {_fmt_us(self.tot['data_loading'])} of it")]
        if "SingleProcess" in label:
            lines.append("num_workers=0: every batch is built on the main process while the GPU waits")
        elif "MultiProcessing" in label:
            if self.tot["data_loading"] >= DATA_WAIT_SHARE * self.span_us:
                lines.append("the workers do not keep up: the main process waits for batches")
            else:  # a few us per batch to take it from the workers' queue is no sign of slow workers
                lines.append(f"the workers keep up: the GPU waited on them {100 * self.tot['data_loading'] / self.span_us:.1f}% "
                             "of the span")
        return lines

    def _pageable_copy(self):
        c = self.copies
        lines = []
        if c["pg_n"]:
            rate = c["pg_bytes"] / (c["pg_us"] * 1e-6) / 1e9 if c["pg_us"] > 0 else None
            line = f"{c['pg_n']:,} host-to-device copies from pageable memory, {fmt_num(c['pg_bytes'] / 1e6)} MB in {_fmt_us(c['pg_us'])}"
            if rate:
                line += f" ({fmt_num(rate)} GB/s)"
            lines.append(line)
            if c["pin_us"] > 0 and c["pin_bytes"] > 0:
                pin = c["pin_bytes"] / (c["pin_us"] * 1e-6) / 1e9
                src = "the pinned copies in this trace"
            else:
                pin = H200_PINNED_H2D_GBS
                src = (f"pinned copies on the H200 (gpuwhy bench --link; {fmt_g(H200_PAGEABLE_H2D_GBS)} GB/s from pageable "
                       "memory there)")
            if rate and pin > rate:
                lines.append(f"at the {fmt_num(pin)} GB/s of {src} they would take {_fmt_us(c['pg_bytes'] / (pin * 1e9) * 1e6)}")
        if self.tot["pageable_copy"] > 0:
            lines.append(f"the GPU was idle {_fmt_us(self.tot['pageable_copy'])} while the host staged pageable copies")
        return lines

    def _stream_wait(self):
        gp, inner = self.gp, self.inner
        w = inner[self.parts["stream_wait"] > 1e-9]
        pairs = Counter()
        for i in w.tolist():
            a = self.stream[gp.prev_last[i]] if gp.prev_last[i] >= 0 else None
            b = self.stream[gp.nxt[i]]
            pairs[(self.raw_streams[a] if a is not None else "?", self.raw_streams[b])] += 1
        lens = gp.g1[w] - gp.g0[w]
        pp = "; ".join(f"stream {b} waited for stream {a} x{n}" for (a, b), n in pairs.most_common(3))
        return [(f"{w.size} gaps where work already queued waited on another stream's event "
                f"(median {_fmt_us(float(np.median(lens)) if lens.size else 0.0)}): {pp}"),
                f"{self.view.wait_ts.size:,} cudaStreamWaitEvent calls in the trace"]

    def _queued(self):
        gp, inner = self.gp, self.inner
        q = inner[self.parts["queued"] > 1e-9]
        lens = gp.g1[q] - gp.g0[q]
        lines = [f"{q.size:,} gaps between work already queued (median {_fmt_us(float(np.median(lens)) if lens.size else 0.0)}, "
                 "largest " + _fmt_us(float(lens.max()) if lens.size else 0.0) + "): GPU-side launch latency"]
        g = int(gp.after_graph[q].sum())
        if g:
            lines.append(f"{g:,} of them inside CUDA-graph replays ({self.view.graph_launches:,} graph launches)")
        return lines

    def _warmup(self):
        gp, inner = self.gp, self.inner
        w = inner[self.parts["warmup"] > 1e-9]
        lines = [(f"{w.size} first launches of kernels that run again later waited {_fmt_us(self.tot['warmup'])} longer "
                 "than their later launches")]
        if w.size:
            big = w[int(np.argmax(self.parts["warmup"][np.searchsorted(inner, w)]))]
            nm = display_names([self.ctx.names_by_id[self.name[gp.nxt[big]]]])
            nm = next(iter(nm.values()))
            lines.append(f"the largest, {_fmt_us(float(gp.g1[big] - gp.g0[big]))} before the first {nm}"
                         + (f"; the host was in {self.warm_ops[0].name} ({fmt_time(self.warm_ops[0].time_s)} of warm-up)"
                            if self.warm_ops else ""))
        s = self.ctx.s
        extra = []
        if s.lazy_loads:
            extra.append(f"{s.lazy_loads} lazy module loads ({_fmt_us(s.lazy_load_us)})")
        if self.view.malloc_calls:
            extra.append(f"{self.view.malloc_calls} cudaMalloc/cudaFree calls ({fmt_time(self.view.malloc_s)})")
        if extra:
            lines.append("one-time work in the trace: " + ", ".join(extra))
        return lines

    def _unexplained(self):
        return [f"{self._n('unexplained')} gaps end with work that has no linked launch call (no correlation id or flow event)"]


def _num_bytes(b):
    if isinstance(b, (int, float)) and not isinstance(b, bool):
        return float(b)
    try:
        return float(b)
    except (TypeError, ValueError):
        return None


def _reasons(verdict, cause, causes, f) -> tuple[list[str], list[str]]:
    span_us, idle_pct = f["span_us"], f["idle_pct"]
    reasons: list[str] = []
    remedies: list[str] = []
    if verdict == "too-little-to-judge":
        reasons.append(f"{f['n_events']} GPU activities over {_fmt_us(span_us)}: too little to judge "
                       f"(a verdict needs {MIN_GPU_EVENTS} and {fmt_time(MIN_SPAN_S)})")
        return reasons, list(TOO_LITTLE_NEXT)
    head = f"idle {idle_pct:.0f}% of its {_fmt_us(span_us)} span"
    if f["idle_us"] > 0 and f["warm_us"] >= 0.05 * f["idle_us"] and idle_pct - f["steady_idle_pct"] >= 1.0:
        head += (f"; {100 * f['warm_us'] / f['idle_us']:.0f}% of that idle time is warm-up, "
                 f"idle {f['steady_idle_pct']:.0f}% without it")
    if f["step_idle_pct"] is not None:
        head += f"; the median of its {len(f['steps'])} steps is idle {f['step_idle_pct']:.0f}%"
    by = {c.key: c for c in causes}
    if cause == "pageable_copy" and cause in by and f["steady_idle_pct"] < IDLE_OVERHEAD_PCT:
        c = by[cause]
        reasons.append(f"busy {100 - idle_pct:.0f}% of its {_fmt_us(span_us)} span, {f['pageable_busy_pct']:.0f}% of the GPU "
                       "time in host-to-device copies from pageable memory")
        reasons.extend(c.evidence)
        remedies.extend(c.remedies)
    elif cause in by:
        c = by[cause]
        reasons.append(f"{head}; the largest cause: {c.label}, {c.span_pct:.0f}% of the span")
        reasons.extend(c.evidence)
        remedies.extend(c.remedies)
        others = [x for x in causes if x.key != cause and x.key != "warmup" and x.span_pct >= 10.0]
        for x in others[:1]:
            reasons.append(f"next: {x.label}, {x.span_pct:.0f}% of the span")
            remedies.extend(x.remedies[:1])
    elif cause == "short_kernels":
        reasons.append(f"{head}; {f['short_pct']:.0f}% of the {f['n_k']} kernels are shorter than 10 us "
                       f"(median {_fmt_us(f['median_k'] * 1e6)}): launch-sized, the launch overhead is the work")
        remedies.extend(REMEDIES["host_launch"])
    elif f["short_in_graphs"]:
        q = by.get("queued")
        reasons.append(f"busy {100 - idle_pct:.0f}% of its {_fmt_us(span_us)} span: the time is in the kernels, "
                       f"{f['short_pct']:.0f}% of its {f['n_k']:,} kernels shorter than 10 us (median {_fmt_us(f['median_k'] * 1e6)}) "
                       f"and mostly replayed from CUDA graphs ({f['graph_launches']:,} graph launches): the graphs already "
                       "took the host's launch cost away; what is left is on the GPU, in the small kernels themselves"
                       + (f" and the gaps between graph nodes ({q.span_pct:.0f}% of the span, at most {q.max_speedup_x:.2f}x)"
                          if q is not None else ""))
        remedies.extend(REMEDIES["short_kernels_in_graphs"])
        remedies.extend(GPU_BOUND_NEXT)
    else:
        if f["step_idle_pct"] is not None:
            slow = max(f["steps"], key=lambda x: x.wall_s)
            reasons.append(f"busy {100 - idle_pct:.0f}% of its {_fmt_us(span_us)} span, and the median of its {len(f['steps'])} "
                           f"steps is busy {100 - f['step_idle_pct']:.0f}%: the time is in the kernels; the slowest step, "
                           f"{slow.name} ({fmt_time(slow.wall_s)}), is idle {slow.idle_pct:.0f}% ({CAUSE_LABELS.get(slow.first_cause, 'none')})")
        else:
            reasons.append(f"busy {100 - idle_pct:.0f}% of its {_fmt_us(span_us)} span; the time is in the kernels"
                           + (f" (idle {f['steady_idle_pct']:.0f}% after warm-up)" if idle_pct - f["steady_idle_pct"] >= 1.0 else ""))
        remedies.extend(GPU_BOUND_NEXT)
    if "warmup" in by and by["warmup"].span_pct >= 5.0:
        remedies.extend(REMEDIES["warmup"])
    return reasons, remedies


def load_trace(path: str | Path, top: int = 10) -> TraceReport:
    """Read a torch.profiler trace file (``.json``, ``.json.gz``, ``.pt.trace.json``) and analyze it.

    The event list is parsed and scanned a piece at a time (:mod:`.stream`), so the
    whole parsed trace never sits in memory; text in any unusual shape is parsed
    whole instead, with the same result or the same refusal.

    Raises:
        UsageError: unreadable or not a Chrome trace (see :func:`load_trace_json`); ``top`` < 1.
    """
    from ...errors import UsageError

    if top < 1:
        raise UsageError(f"--top {top} must be at least 1")
    text = read_trace_text(path)
    try:
        s = Scan()
        for piece in event_pieces(text):
            scan(piece, s)
    except NotStreamable:
        s = _scan_whole(text, Path(path))
    del text
    return _report(s, str(path), top)


def _scan_whole(text: str, path: Path) -> Scan:
    """The text parsed at once (the shapes :func:`~.stream.event_pieces` does not cut), then scanned.

    The parsed trace is then millions of small acyclic containers, alive together: the
    cyclic garbage collector would rescan them over and over while they are built (2-3x
    the parse time); nothing here makes cycles, so it is paused and restored.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        data = parse_trace_text(text, path)
        return scan(events_of(data))
    finally:
        if was_enabled:
            gc.enable()


__all__ = ["BEFORE_LAUNCH_US", "STRAY_FACTOR", "STRAY_MAX_SHARE", "STRAY_MIN_US", "analyze_trace", "idle_breakdown", "load_trace"]
