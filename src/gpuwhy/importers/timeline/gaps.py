"""Idle time of one GPU split by cause (pure numpy; times in us inside, seconds out).

Each idle *gap* (the GPU runs nothing on any stream) ends when some work W
starts; W's launch call (linked by correlation id or flow event) started at L.
The causes are :data:`gpuwhy.verdict.causes.IDLE`'s.

- **No launch linked** to W: *unexplained*.
- **Launched ahead** (the launch call had returned before the GPU went idle): the
  work was queued and did not start. A gap of at most :data:`QUEUE_LATENCY_US` is
  *queue latency* (GPU-side launch latency between dependent work, inside CUDA-graph
  replays too); a longer one is a *dependency wait*: the work waited on something,
  and what the trace says of it is kept per gap (:data:`WAITED_FOR`): another
  stream's event (W's stream had a ``cudaStreamWaitEvent`` queued since its previous
  work and, unless the trace names the stream the wait made wait, the work that
  finished last ran on another stream), a collective (the last or next work is a
  communication kernel), a host callback (one was queued meanwhile), or nothing.
- **Launched late** (L after the GPU went idle, or the launch call still
  running then): the host was the bottleneck. The window from idle to L is
  split by what the host did, first claim first:

  1. *host blocked in a sync*: the summed duration D of the sync calls that
     returned since the GPU last came out of a gap (during the busy stretch before
     this gap, or inside it before the launch). Without them the host would have
     been D further ahead, and it stays ahead until it next blocks: the first D of
     the host windows from here to the next gap with syncs of its own are theirs,
     the host work they gate (a sync that returns at once, because the GPU was
     already idle, costs its few us). Where the trace says what its tracer cost the
     host per recorded event (``tracer_event_us``: `gpuwhy run` can measure it), D is
     the most a run without the tracer could have waited (:func:`sync_lead`): the
     tracer slowed the host's way to the sync, not the GPU work it waited for;
  2. *copies from pageable memory*: time inside the API call of a pageable
     host-to-device copy (and, when W is such a copy, its launch-to-start time);
     and, as a lead like a sync's, the host's time staging pageable copies while the
     GPU was busy since the last host window: the host was held that long (a copy
     from pageable memory returns only when its data is staged), and pinned it would
     have been that much further ahead;
  3. *data loading*: time inside a DataLoader ``__next__`` range; then *warm-up*:
     time inside a JIT compiler's range (XLA's ``XlaCompile...``), one-time work
     (the syncs and pageable copies made inside one are the compiler's, not 1. or
     2.; and the launch-to-start time of work launched inside one is warm-up too);
  4. *host work*: stretches of at least :data:`HOST_WORK_MIN_US` in which the host
     issued no GPU work (no API call, no operator that makes one: Python work, I/O,
     logging, CPU-tensor ops, sleeps; what a CUDA graph would not remove);
  5. *launch overhead*: the rest: in API calls and the operators that make them
     (named by the top ones), in the shorter stretches between them (the
     framework's dispatch and Python glue), and from the launch call to the start
     (launch latency).

  *Warm-up*: when W is the first launch of a kernel that runs at least three
  times, the part of its host time (4. and 5.) beyond the median of its later
  launches' is a one-time cost (lazy module loading, library handles,
  allocator growth) and is counted as warm-up. Not in a trace whose first
  ``ProfilerStep#N`` has N > 0 (``schedule(wait=..., warmup=...)``): the
  program ran N steps before the profiled ones, so a first launch in the
  trace is not a first call, and its wait stays with its host cause.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...verdict.causes import IDLE
from .host import HOST_WORK_MIN_US, HostView
from .intervals import last_finished
from .track import GpuTrack

CAUSES = tuple(c.value for c in IDLE)
_HOST, _QUEUED, _WAIT, _UNEXPLAINED = 0, 1, 2, 3
#: The class (:attr:`Gaps.cls`) of queued work whose stream waited on another stream's event.
WAIT_CLASS = _WAIT
#: Queued work that starts within this (us) of the GPU going idle waited only on GPU-side launch latency
#: (1-4 us between dependent kernels on current GPUs, a few more inside graphs); longer, on a dependency.
QUEUE_LATENCY_US = 10.0
#: What a dependency wait waited for, as the trace says it (codes of :attr:`Gaps.waited_for`).
WAITED_FOR = ("the trace does not say", "another stream's event", "a collective", "a host callback")
_UNSAID, _EVENT, _COLLECTIVE, _CALLBACK = 0, 1, 2, 3
#: A kernel must run at least this many times for its first launch to count as warm-up.
WARMUP_MIN_COUNT = 3


@dataclass
class Gaps:
    """The idle gaps of one GPU and how each is classified (us; arrays of one length).

    ``inner``: inside the span (the others lie before the first or after the
    last GPU work and are used for per-step figures only).
    """

    g0: np.ndarray
    g1: np.ndarray
    inner: np.ndarray
    nxt: np.ndarray
    cls: np.ndarray
    wl: np.ndarray  # end of the host window (the launch, clamped into the gap)
    sync: np.ndarray  # length of the sync piece at the start of the gap
    pageable_next: np.ndarray
    warm_frac: np.ndarray
    after_graph: np.ndarray
    prev_last: np.ndarray  # the event that finished last before the gap (-1 for none)
    waited_for: np.ndarray  # a dependency wait's WAITED_FOR code (0 elsewhere)
    pg_lead: np.ndarray  # length of the pageable-staging lead piece, after the sync piece


def classify(track: GpuTrack, view: HostView, outer_lo=None, outer_hi=None, warmup: bool = True,
             tracer_event_us: float | None = None) -> Gaps:
    """Classify the idle gaps of one GPU's ``track`` (its gaps are the track's busy union's).

    ``outer_lo``/``outer_hi``: add a gap from there to the first work / from the
    last work (for steps that begin before or end after the GPU's span);
    ``warmup``: whether a kernel's first launch in the trace can be its first call
    (False when the program ran steps before the profiled ones); ``tracer_event_us``:
    the tracer's host cost per recorded event (us), None unknown.
    """
    st, en, cm, stream = track.start, track.end, track.running_end, track.stream
    lau, lau_end, name = track.launch, track.launch_end, track.name
    n = st.size
    gi = track.gap_index
    g0 = track.gap_start
    g1 = track.gap_end
    nxt = gi + 1
    # The activity that finished last before each gap (holds the running max of ends).
    prev_last = last_finished(en, cm)[gi]
    inner = np.ones(gi.size, dtype=bool)
    lead = outer_lo is not None and outer_lo < st[0]  # a gap before the first work
    if lead:
        g0 = np.concatenate(([outer_lo], g0))
        g1 = np.concatenate(([st[0]], g1))
        nxt = np.concatenate(([0], nxt))
        prev_last = np.concatenate(([-1], prev_last))
        inner = np.concatenate(([False], inner))
    if outer_hi is not None and outer_hi > cm[-1]:
        g0 = np.concatenate((g0, [cm[-1]]))
        g1 = np.concatenate((g1, [outer_hi]))
        nxt = np.concatenate((nxt, [-1]))
        prev_last = np.concatenate((prev_last, [n - 1]))
        inner = np.concatenate((inner, [False]))

    has_next = nxt >= 0
    nx = np.where(has_next, nxt, 0)
    L = np.where(has_next, lau[nx], np.nan)
    Le = np.where(has_next, lau_end[nx], np.nan)
    unknown = has_next & np.isnan(L)
    late = ~has_next | (~unknown & ((L >= g0) | (np.nan_to_num(Le, nan=-np.inf) > g0)))
    ahead = has_next & ~unknown & ~late

    # Queued work: a wait queued into W's stream since its previous work, and the last work on another stream?
    cls = np.full(g0.size, _HOST, dtype=np.int8)
    cls[unknown] = _UNEXPLAINED
    cls[ahead] = _QUEUED
    qi = np.flatnonzero(ahead)
    if qi.size and view.wait_ts.size:
        prev_same = _previous_same_stream(st, stream)
        w = nx[qi]
        p = prev_same[w]
        lp = np.where(p >= 0, lau[np.clip(p, 0, None)], -np.inf)
        lp = np.where(np.isnan(lp), -np.inf, lp)
        other = (prev_last[qi] >= 0) & (stream[np.clip(prev_last[qi], 0, None)] != stream[w])
        ws = [None if x is None else str(x) for x in view.wait_stream]
        if all(x is None for x in ws):
            lo = np.searchsorted(view.wait_ts, lp, side="right")
            hi = np.searchsorted(view.wait_ts, L[qi], side="right")
            cls[qi[(hi > lo) & other]] = _WAIT
        else:
            # cuda_sync events name the stream each wait made wait: an exact match needs no other evidence.
            unknown_w = np.asarray([x is None for x in ws], dtype=bool)
            waited = np.zeros(qi.size, dtype=bool)
            for s_code in np.unique(stream[w]).tolist():
                m = stream[w] == s_code
                raw = str(track.streams[s_code]) if s_code < len(track.streams) else None
                exact = np.asarray([x == raw for x in ws], dtype=bool)
                for mask, need_other in ((exact, False), (unknown_w, True)):
                    ts_s = view.wait_ts[mask]
                    lo = np.searchsorted(ts_s, lp[m], side="right")
                    hi = np.searchsorted(ts_s, L[qi][m], side="right")
                    hit = hi > lo
                    if need_other:
                        hit &= other[m]
                    waited[m] |= hit
            cls[qi[waited]] = _WAIT

    late_i = np.flatnonzero(cls == _HOST)
    wl = g1.copy()
    sync = np.zeros(g0.size)
    pg_lead = np.zeros(g0.size)
    if late_i.size:
        Lh = np.where(np.isnan(L[late_i]), g1[late_i], L[late_i])
        wl[late_i] = np.clip(Lh, g0[late_i], g1[late_i])
        # the syncs that returned since the GPU last came out of a gap: the host was blocked there
        # instead of running ahead, so up to their time of this gap is theirs (module docstring, 1.). The
        # first gap after the first work follows the GPU's idle before it: its syncs are those since st[0].
        since = np.concatenate(([-np.inf if lead else st[0]], g1[:-1]))
        d = view.sync_time(since[late_i], wl[late_i])
        if tracer_event_us:
            d = np.maximum(d, sync_lead(track, view, since[late_i], wl[late_i], tracer_event_us))
        sync[late_i] = carry_lead(d, wl[late_i] - g0[late_i])
        # pageable staging while the GPU was busy since the previous host window ended: a lead of its own
        prev_end = np.maximum(np.concatenate(([-np.inf], g1[late_i][:-1])), st[0])  # from the first work on
        staged = view.pageable.within(prev_end, g0[late_i])
        pg_lead[late_i] = carry_lead(staged, wl[late_i] - g0[late_i] - sync[late_i])
    pg_next = np.zeros(g0.size, dtype=bool)
    pg_next[has_next] = track.pageable_h2d[nx[has_next]]
    after_graph = np.zeros(g0.size, dtype=bool)
    after_graph[has_next] = track.graph[nx[has_next]]

    waited_for = _waited_for(track, view, cls, g0, g1, nx, prev_last, L, has_next)
    gaps = Gaps(g0, g1, inner, nxt, cls, wl, sync, pg_next, np.zeros(g0.size), after_graph, prev_last, waited_for,
                pg_lead)
    h = np.flatnonzero((cls == _HOST) & inner & (nxt >= 0))
    if h.size and warmup:
        _, _, _, in_ops, dispatch, work, launch, _ = _pieces(gaps, view, h, -np.inf, np.inf)
        gaps.warm_frac[h] = _warmup_fraction(in_ops + dispatch + work + launch, nxt[h], name)
    return gaps


def carry_lead(lead: np.ndarray, window: np.ndarray) -> np.ndarray:
    """The lead piece of each host window (us; arrays in time order): a window with a ``lead``
    (> 0: the time its syncs, or its pageable copies' staging, held the host) starts a new lead,
    which the windows from it on take first come, first served (``min(left, window)`` each) until
    the next window with a lead of its own replaces it."""
    lead = np.asarray(lead, dtype=np.float64)
    window = np.clip(np.asarray(window, dtype=np.float64), 0.0, None)
    if lead.size == 0:
        return lead.copy()
    starts = lead > 0
    seg = np.cumsum(starts) - 1  # the segment of each window (-1: before the first lead)
    out = np.zeros(lead.size)
    ok = seg >= 0
    if not ok.any():
        return out
    first = np.flatnonzero(starts)
    budget = lead[first][seg[ok]]
    cum = np.cumsum(window)
    base = np.concatenate(([0.0], cum))[first][seg[ok]]  # the windows' total before each segment
    c_end = cum[ok] - base
    c_start = c_end - window[ok]
    out[ok] = np.minimum(c_end, budget) - np.minimum(c_start, budget)
    return out


def sync_lead(track: GpuTrack, view: HostView, lo, hi, event_us: float) -> np.ndarray:
    """Per host window, the most the host could have waited in the syncs that returned in
    ``[lo, hi]`` (us) had the tracer not slowed it, 0 where none did.

    The first of those syncs started at ``A``, the host's arrival (a pageable copy's wait is
    often followed by a stream sync that returns at once); the sync before it ended at ``P``.
    The GPU ran the work launched in ``[P, A]`` in launch order, so it was busy until at
    least ``launch_k + W_k`` for each launch ``k`` (``W_k``: the work launched from ``k`` on); a
    run without the tracer reaches the sync ``event_us`` earlier for each host event recorded
    after ``launch_k``, never earlier than ``launch_k`` itself. So the wait is at most
    ``max_k W_k - (A - launch_k) + event_us x n_k``, never less than the wait the trace shows.
    Streams that overlapped make ``W_k`` too large: a looser bound, never a smaller one.
    """
    lo = np.asarray(lo, dtype=np.float64)
    hi = np.asarray(hi, dtype=np.float64)
    out = np.zeros(lo.size)
    if view.sync_end.size == 0 or lo.size == 0:
        return out
    known = ~np.isnan(track.launch)
    order = np.flatnonzero(known)[np.argsort(track.launch[known], kind="stable")]
    launch = track.launch[order]
    cum = np.concatenate(([0.0], np.cumsum(track.dur[order])))
    # v_k = launch_k - (work launched before k) - event_us x (events before launch_k): the terms' part of k.
    v = launch - cum[:-1] - event_us * view.events_before(launch)
    i0 = np.searchsorted(view.sync_end, lo, side="left")  # the first sync ending in [lo, hi]
    has = i0 < view.sync_end.size
    has[has] &= view.sync_end[i0[has]] <= hi[has]
    for j in np.flatnonzero(has).tolist():
        s = int(i0[j])
        a = float(view.sync_start[s])
        p = float(view.sync_end[s - 1]) if s > 0 else -np.inf
        k0 = int(np.searchsorted(launch, p, side="left"))
        k1 = int(np.searchsorted(launch, a, side="right"))
        if k1 <= k0:
            continue
        best = float(v[k0:k1].max()) + float(cum[k1]) - a + event_us * float(view.events_before(a))
        out[j] = min(max(best, 0.0), float(cum[k1] - cum[k0]))  # never more than the work it waited on
    return out


def _waited_for(track: GpuTrack, view: HostView, cls, g0, g1, nx, prev_last, L, has_next) -> np.ndarray:
    """Per gap, the :data:`WAITED_FOR` code of a dependency wait (queued, longer than queue latency)."""
    out = np.zeros(g0.size, dtype=np.int8)
    long = np.flatnonzero(((cls == _QUEUED) | (cls == _WAIT)) & (g1 - g0 > QUEUE_LATENCY_US))
    if long.size == 0:
        return out
    out[long[cls[long] == _WAIT]] = _EVENT
    rest = long[out[long] == _UNSAID]
    comm = track.communication
    touches = np.zeros(rest.size, dtype=bool)
    if comm.any() and rest.size:
        before, after = prev_last[rest], nx[rest]
        touches = ((before >= 0) & comm[np.clip(before, 0, None)]) | (has_next[rest] & comm[after])
        out[rest[touches]] = _COLLECTIVE
    rest = rest[~touches]
    if rest.size and view.callback_ts.size:
        # a host function queued between the launch of the previous work on W's stream and W's own
        prev = _previous_same_stream(track.start, track.stream)[nx[rest]]
        lp = np.where(prev >= 0, track.launch[np.clip(prev, 0, None)], -np.inf)
        lp = np.where(np.isnan(lp), -np.inf, lp)
        queued = (np.searchsorted(view.callback_ts, L[rest], side="right")
                  > np.searchsorted(view.callback_ts, lp, side="right"))
        out[rest[queued]] = _CALLBACK
    return out


def _previous_same_stream(st, stream):
    n = st.size
    order = np.lexsort((np.arange(n), stream))
    prev = np.full(n, -1, dtype=np.int64)
    same = stream[order[1:]] == stream[order[:-1]]
    prev[order[1:][same]] = order[:-1][same]
    return prev


def _warmup_fraction(hl, nxt, name):
    """Per launched-late gap: the share of its host-launch time ``hl`` that is warm-up (see the module docstring)."""
    frac = np.zeros(hl.size)
    nm = name[nxt]
    counts = np.bincount(name)
    first_idx = np.full(counts.size, -1, dtype=np.int64)
    uniq, first = np.unique(name, return_index=True)
    first_idx[uniq] = first
    is_first = first_idx[nm] == nxt
    cand = np.flatnonzero(is_first & (counts[nm] >= WARMUP_MIN_COUNT))
    if cand.size == 0:
        return frac
    later = ~is_first
    order = np.argsort(nm[later], kind="stable")
    later_nm = nm[later][order]
    later_hl = hl[later][order]
    for c in cand.tolist():
        r = hl[c]
        if r <= 0:
            continue
        a = np.searchsorted(later_nm, nm[c], side="left")
        b = np.searchsorted(later_nm, nm[c], side="right")
        # Later launches of the kernel that ended no gap waited 0 on the host.
        n_later = int(counts[nm[c]]) - 1
        vals = later_hl[a:b]
        if vals.size < n_later:
            vals = np.concatenate((vals, np.zeros(n_later - vals.size)))
        base = float(np.median(vals)) if vals.size else 0.0
        frac[c] = max(0.0, r - base) / r
    return frac


def _pieces(gaps: Gaps, view: HostView, h: np.ndarray, lo, hi):
    """For launched-late gaps ``h`` clipped to ``[lo, hi]`` (us): the sync, pageable, data, in-ops,
    short-outside, long-outside (host work), launch and compile pieces."""
    g0, g1 = gaps.g0[h], gaps.g1[h]
    c0 = np.maximum(g0, lo)
    c1 = np.minimum(g1, hi)
    sp = gaps.sync[h]
    pl = gaps.pg_lead[h]
    wl = gaps.wl[h]
    sync = np.clip(np.minimum(g0 + sp, c1) - c0, 0.0, None)
    lead_pg = np.clip(np.minimum(g0 + sp + pl, c1) - np.maximum(g0 + sp, c0), 0.0, None)
    a = np.maximum(g0 + sp + pl, c0)
    b = np.minimum(wl, c1)
    pg = view.pageable.within(a, b)
    with_data = view.with_data.within(a, b)
    with_compile = view.with_compile.within(a, b)
    with_cpu = view.with_cpu.within(a, b)
    win = np.clip(b - a, 0.0, None)
    data = with_data - pg
    pg = pg + lead_pg
    comp = with_compile - with_data
    in_ops = with_cpu - with_compile
    outside = np.clip(win - with_cpu, 0.0, None)
    work = np.minimum(view.host_work.within(a, b), outside)
    la = np.maximum(wl, c0)
    launch = np.clip(c1 - la, 0.0, None)
    # a launch made inside a JIT compiler's range (its autotuner's candidates) waits as compile work
    comp_launch = np.clip(view.with_compile.within(la, c1) - view.with_data.within(la, c1), 0.0, launch)
    comp = comp + comp_launch
    launch = launch - comp_launch
    pgn = gaps.pageable_next[h]
    pg = pg + np.where(pgn, launch, 0.0)
    launch = np.where(pgn, 0.0, launch)
    return sync, pg, data, in_ops, outside - work, work, launch, comp


def split_gaps(gaps: Gaps, view: HostView, idx: np.ndarray, lo=-np.inf, hi=np.inf) -> dict:
    """Idle time (us) by cause of each gap in ``idx``, clipped to ``[lo, hi]``: a dict of arrays
    over ``idx``, with the sub-split of launch overhead in ``_in_ops``, ``_dispatch`` (short stretches
    outside operators) and ``_launch``, and in ``_compile`` the part of warm-up inside a JIT compiler's ranges.

    ``lo``/``hi`` are scalars, or arrays over ``idx`` (one clip per entry: a gap listed
    several times with the pieces of a partition of it gives its time split over them,
    as the timeline's bins do). The split is additive: the pieces of a gap sum to the gap's.
    """
    z = np.zeros(idx.size)
    out = {c: z.copy() for c in CAUSES}
    out.update(_in_ops=z.copy(), _dispatch=z.copy(), _launch=z.copy(), _compile=z.copy())
    if idx.size == 0:
        return out
    lo = np.broadcast_to(np.asarray(lo, dtype=np.float64), idx.shape)
    hi = np.broadcast_to(np.asarray(hi, dtype=np.float64), idx.shape)
    g0, g1 = gaps.g0[idx], gaps.g1[idx]
    c0 = np.maximum(g0, lo)
    c1 = np.minimum(g1, hi)
    length = np.clip(c1 - c0, 0.0, None)
    cls = gaps.cls[idx]
    queued = (cls == _QUEUED) | (cls == _WAIT)
    dependency = queued & (g1 - g0 > QUEUE_LATENCY_US)
    out["unexplained"] = np.where(cls == _UNEXPLAINED, length, 0.0)
    out["dependency_wait"] = np.where(dependency, length, 0.0)
    out["queue_latency"] = np.where(queued & ~dependency, length, 0.0)
    h = np.flatnonzero(cls == _HOST)
    if h.size == 0:
        return out
    sync, pg, data, in_ops, dispatch, work, launch, comp = _pieces(gaps, view, idx[h], lo[h], hi[h])
    wf = gaps.warm_frac[idx][h]
    keep = 1.0 - wf
    out["host_sync"][h] = sync
    out["pageable_copy"][h] = pg
    out["data_loading"][h] = data
    out["warmup"][h] = (in_ops + dispatch + work + launch) * wf + comp
    out["_compile"][h] = comp
    out["host_work"][h] = work * keep
    out["_in_ops"][h] = in_ops * keep
    out["_dispatch"][h] = dispatch * keep
    out["_launch"][h] = launch * keep
    out["launch_overhead"][h] = (in_ops + dispatch + launch) * keep
    return out


def split(gaps: Gaps, view: HostView, idx: np.ndarray, lo=-np.inf, hi=np.inf) -> dict:
    """:func:`split_gaps` summed over the gaps: idle us by cause (and the launch-overhead sub-split)."""
    return {k: float(v.sum()) for k, v in split_gaps(gaps, view, idx, lo, hi).items()}


def host_windows(gaps: Gaps, idx: np.ndarray):
    """The host windows (after the sync and pageable-lead pieces, up to the launch) of the launched-late gaps in
    ``idx`` (us)."""
    h = idx[gaps.cls[idx] == _HOST]
    a = gaps.g0[h] + gaps.sync[h] + gaps.pg_lead[h]
    b = gaps.wl[h]
    keep = b > a
    return a[keep], b[keep], h[keep]


__all__ = ["CAUSES", "HOST_WORK_MIN_US", "QUEUE_LATENCY_US", "WAIT_CLASS", "WAITED_FOR", "WARMUP_MIN_COUNT", "Gaps",
           "carry_lead", "classify", "host_windows", "split", "split_gaps", "sync_lead"]
