"""What the host was doing, as interval sets over time (us): the input of the idle-cause split.

Per process (the one that launched a GPU's work), from the API calls and
host ranges of a :class:`~gpuwhy.importers.timeline.activities.Timeline`:

- *sync calls*: blocking API calls (``cudaStreamSynchronize``,
  ``cudaDeviceSynchronize``, ``cudaEventSynchronize``, blocking ``cudaMemcpy``)
  and copies to pageable host memory (device-to-host into pageable memory:
  ``tensor.cpu()``), which return only when the GPU is done;
- *pageable copy calls*: the API calls of host-to-device copies from pageable
  memory, during which the host stages the data through a pinned buffer;
- *data loading*: ``enumerate(DataLoader)#..._next__`` ranges (any range whose
  name holds ``DataLoader``);
- *compiling*: ranges in which a JIT compiler ran (XLA's ``XlaCompile...``:
  :func:`~gpuwhy.importers.timeline.activities.is_compile`), one-time work even
  where it makes API calls (module loads) or syncs (an autotuner timing its
  candidates: a sync or pageable copy inside such a range is no sync or copy of
  the program's);
- *issuing GPU work*: every other API call, and every framework operator inside
  which its thread made one (an operator that launches nothing, a CPU-tensor op, is
  host work like Python); annotations and ``python_function`` frames are kept for
  naming callers and steps only;
- *host work*: the stretches outside all of these of at least :data:`HOST_WORK_MIN_US`;
- *callbacks*: host functions queued on a stream (``cudaLaunchHostFunc``);
- *wait calls*: ``cudaStreamWaitEvent`` (with the stream it made wait when the
  trace has ``cuda_sync`` events).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from .intervals import Coverage, merge, nested_order, top_level, union
from .activities import (GRAPH_LAUNCH_NAMES, MALLOC_NAMES, STEP_PREFIX, SYNC_NAMES, WAIT_NAMES, Timeline, compiled_module,
                         is_compile, is_jit_call)

#: Host time in which the host issued no GPU work (no API call, no operator that makes one) and did not
#: sync, stage a copy or load data, in a stretch this long (us) or longer, is host work (Python, I/O,
#: CPU-tensor ops, sleeps); shorter stretches between launches are the framework's dispatch and Python
#: glue (PyTorch's host cost per operator is 5-50 us).
HOST_WORK_MIN_US = 100.0
#: API calls that queue a host function on a stream (the stream waits for it to return).
CALLBACK_NAMES = frozenset({"cudaLaunchHostFunc", "cuLaunchHostFunc", "cudaStreamAddCallback", "cuStreamAddCallback",
                            "hipLaunchHostFunc", "hipStreamAddCallback"})


def is_dataloader(name) -> bool:
    """True for a DataLoader range (``enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__`` and kin)."""
    return isinstance(name, str) and "DataLoader" in name


@dataclass
class HostArrays:
    """A timeline's API calls (``r_*``) and host ranges (``h_*``) that are judged, as numpy arrays (us)."""

    r_ts: np.ndarray
    r_end: np.ndarray
    r_name: np.ndarray
    r_thread: np.ndarray
    r_corr: list
    r_names: list
    h_ts: np.ndarray
    h_end: np.ndarray
    h_name: np.ndarray
    h_kind: np.ndarray
    h_thread: np.ndarray
    h_names: list
    thread_pid: list
    wait_stream: dict
    step_prefix: str = STEP_PREFIX

    @classmethod
    def build(cls, t: Timeline, r_keep: np.ndarray, h_keep: np.ndarray) -> HostArrays:
        """The API calls and host ranges of ``t`` that ``r_keep`` / ``h_keep`` mark."""
        r_ts, r_end = t.api_start, t.api_start + t.api_dur
        r_name, r_thread, r_corr = t.api_name, t.api_thread, t.api_corr
        h_ts, h_end = t.range_start, t.range_start + t.range_dur
        h_name, h_kind, h_thread = t.range_name, t.range_kind, t.range_thread
        if not r_keep.all():
            r_ts, r_end, r_name, r_thread = r_ts[r_keep], r_end[r_keep], r_name[r_keep], r_thread[r_keep]
            r_corr = [c for c, k in zip(r_corr, r_keep.tolist()) if k]
        if not h_keep.all():
            h_ts, h_end, h_name, h_kind, h_thread = h_ts[h_keep], h_end[h_keep], h_name[h_keep], h_kind[h_keep], h_thread[h_keep]
        return cls(r_ts, r_end, r_name, r_thread, r_corr, list(t.api_names), h_ts, h_end, h_name, h_kind,
                   h_thread, list(t.range_names), list(t.thread_pid), dict(t.wait_stream), t.step_prefix)

    def runtime_ids(self, names) -> np.ndarray:
        return np.asarray([i for i, n in enumerate(self.r_names) if n in names], dtype=np.int64)

    def threads_of(self, pid) -> np.ndarray:
        return np.asarray([t for t, p in enumerate(self.thread_pid) if p == pid], dtype=np.int64)


@dataclass
class HostView:
    """The host state of one process as interval sets and call lists (us).

    ``compiling``: the coverage of the JIT compiler's ranges alone (first calls of jitted functions included).
    ``pageable``, ``with_data``, ``with_compile``, ``with_cpu``: coverages of nested unions
    (pageable copy calls; those plus data loading; those plus JIT compiling; those plus the
    host issuing GPU work: API calls and the operators that make them), so a window's time
    splits by priority with three subtractions; ``host_work``: the stretches of at least
    :data:`HOST_WORK_MIN_US` outside all of these and the syncs. ``sync_end``/``sync_cum``:
    sync calls sorted by end and the running sum of their durations, ``sync_start`` their starts
    in that order. ``event_ts``: the starts of every API call and host range the tracer recorded in
    this process but Python frames (each cost the tracer some host time), read through
    :meth:`events_before`.
    """

    sync_idx: np.ndarray
    sync_end: np.ndarray
    sync_cum: np.ndarray
    pageable: Coverage
    with_data: Coverage
    with_compile: Coverage
    with_cpu: Coverage
    compiling: Coverage
    data_ranges: int
    data_s: float
    wait_ts: np.ndarray
    wait_stream: list
    top_start: np.ndarray
    top_end: np.ndarray
    top_name: np.ndarray
    top_thread: np.ndarray
    step_start: np.ndarray
    step_end: np.ndarray
    step_name: list
    graph_launches: int
    malloc_s: float
    malloc_calls: int
    host_work: Coverage
    callback_ts: np.ndarray
    sync_start: np.ndarray = field(default_factory=lambda: np.zeros(0))
    event_ts: np.ndarray = field(default_factory=lambda: np.zeros(0))
    compile_s: float = 0.0
    compiles: int = 0
    most_compiled: tuple[str, int] | None = None  # the module XLA compiled most often, and how often
    _events_sorted: bool = False

    def events_before(self, t):
        """How many recorded host events started before ``t`` (us; a scalar or an array). The starts are
        sorted on the first call (only a trace with a tracer figure asks)."""
        if not self._events_sorted:
            self.event_ts = np.sort(self.event_ts)
            self._events_sorted = True
        return np.searchsorted(self.event_ts, t, side="left")

    def sync_time(self, lo, hi):
        """Summed duration of the sync calls that end in ``[lo, hi]``, per window (us)."""
        if self.sync_end.size == 0:
            return np.zeros(np.shape(lo))
        i0 = np.searchsorted(self.sync_end, lo, side="left")
        i1 = np.searchsorted(self.sync_end, hi, side="right")
        return self.sync_cum[i1] - self.sync_cum[i0]


def issues_calls(starts, ends, threads, call_ts, call_threads) -> np.ndarray:
    """Mask of the ranges (``starts``/``ends``, us, on ``threads``) inside which their thread made at
    least one of the calls (``call_ts`` on ``call_threads``)."""
    out = np.zeros(starts.size, dtype=bool)
    for th in np.unique(threads).tolist():
        sel = np.flatnonzero(threads == th)
        calls = np.sort(call_ts[call_threads == th])
        if calls.size:
            out[sel] = np.searchsorted(calls, ends[sel], side="right") > np.searchsorted(calls, starts[sel], side="left")
    return out


def _long_stretches(covered: tuple[np.ndarray, np.ndarray], bounds: tuple[float, float]) -> Coverage:
    """The stretches of ``bounds`` (us) outside the sorted disjoint set ``covered`` that last
    :data:`HOST_WORK_MIN_US` or longer."""
    a, b = covered
    lo, hi = bounds
    starts = np.concatenate(([lo], b))
    ends = np.concatenate((a, [hi]))
    keep = ends - starts >= HOST_WORK_MIN_US
    return Coverage(starts[keep], ends[keep])


def _most_compiled(names: list) -> tuple[str, int] | None:
    """The module named most often among XLA's compile ranges (:data:`~.activities.COMPILE_CALL_PREFIXES`), and its
    count (None without any)."""
    mods = Counter(compiled_module(n) or n for n in names)
    return mods.most_common(1)[0] if mods else None


def build_view(h: HostArrays, pid, pageable_h2d: set, pageable_d2h: set, with_pid: bool,
               bounds: tuple[float, float]) -> HostView:
    """The :class:`HostView` of process ``pid`` (all processes when ``with_pid`` is False).

    ``pageable_h2d`` / ``pageable_d2h``: correlation ids of the runtime calls
    whose GPU copy is host-to-device from / device-to-host to pageable memory;
    ``bounds``: the timeline's first and last time (us), the ends of the host's first and
    last stretches outside any call or range.
    """
    if with_pid:
        threads = h.threads_of(pid)
        rsel = np.isin(h.r_thread, threads)
        hsel = np.isin(h.h_thread, threads)
    else:
        rsel = np.ones(h.r_ts.size, dtype=bool)
        hsel = np.ones(h.h_ts.size, dtype=bool)
    r_idx = np.flatnonzero(rsel)
    r_ts, r_end, r_name = h.r_ts[r_idx], h.r_end[r_idx], h.r_name[r_idx]
    corr = h.r_corr if r_idx.size == len(h.r_corr) else list(map(h.r_corr.__getitem__, r_idx.tolist()))

    sync = np.isin(r_name, h.runtime_ids(SYNC_NAMES))
    pg = np.zeros(r_idx.size, dtype=bool)
    if pageable_d2h or pageable_h2d:
        d2h = np.fromiter(map(pageable_d2h.__contains__, corr), dtype=bool, count=len(corr))
        sync |= d2h
        pg = np.fromiter(map(pageable_h2d.__contains__, corr), dtype=bool, count=len(corr)) & ~d2h
    h_idx = np.flatnonzero(hsel)
    hs, he, hn, hk, ht = h.h_ts[h_idx], h.h_end[h_idx], h.h_name[h_idx], h.h_kind[h_idx], h.h_thread[h_idx]
    names = h.h_names
    step_ids = np.asarray([i for i, n in enumerate(names) if isinstance(n, str) and n.startswith(h.step_prefix)],
                          dtype=np.int64)
    data_ids = np.asarray([i for i, n in enumerate(names) if is_dataloader(n)], dtype=np.int64)
    compile_ids = np.asarray([i for i, n in enumerate(names) if is_compile(n)], dtype=np.int64)
    is_step = np.isin(hn, step_ids) & (hk == 1)
    is_data = np.isin(hn, data_ids)
    is_comp = np.isin(hn, compile_ids) & ~is_data
    is_frame = hk == 2
    is_comp |= _first_calls(hs, he, hn, ht, is_comp, names)
    comp_set = union(hs[is_comp], he[is_comp])
    # A sync or pageable copy inside a JIT compiler's range is the compiler's (XLA's autotuner waits on the
    # candidates it times): compile work, not a sync of the program's leading the gaps after it.
    in_comp = np.zeros(r_ts.size, dtype=bool)
    if comp_set[0].size:
        in_comp = Coverage(*comp_set).within(r_ts, r_end) >= r_end - r_ts - 1e-6
    sync &= ~in_comp
    pg &= ~in_comp
    sync_j = np.flatnonzero(sync)
    order = np.argsort(r_end[sync_j], kind="stable")
    sync_j = sync_j[order]
    sync_end = r_end[sync_j]
    sync_cum = np.concatenate(([0.0], np.cumsum(r_end[sync_j] - r_ts[sync_j])))

    pg_set = union(r_ts[pg], r_end[pg])
    data_set = union(hs[is_data], he[is_data])
    # The host issuing GPU work: the API calls that queue it, and the framework operators that make them.
    ops = (hk == 0) & ~is_data & ~is_comp & issues_calls(hs, he, ht, r_ts[~sync], h.r_thread[r_idx][~sync])
    launch_set = merge(union(hs[ops], he[ops]), union(r_ts[~sync & ~pg], r_end[~sync & ~pg]))
    with_data = merge(pg_set, data_set)
    with_compile = merge(with_data, comp_set)
    with_cpu = merge(with_compile, launch_set)
    top_comp = is_comp & np.asarray([compiled_module(names[i]) is not None for i in hn.tolist()], dtype=bool)

    wait = np.isin(r_name, h.runtime_ids(WAIT_NAMES))
    wj = np.flatnonzero(wait)
    wo = np.argsort(r_ts[wj], kind="stable")
    wj = wj[wo]
    wait_stream = [h.wait_stream.get(corr[j]) for j in wj.tolist()]

    # Top-level operations and annotations per thread (ProfilerStep ranges and Python frames aside).
    cand = ~is_step & ~is_frame
    tops = ([], [], [], [])
    for t in np.unique(ht[cand]).tolist():
        sel = np.flatnonzero(cand & (ht == t))
        o = nested_order(hs[sel], he[sel])
        sel = sel[o]
        m = top_level(hs[sel], he[sel])
        sel = sel[m]
        tops[0].append(hs[sel])
        tops[1].append(he[sel])
        tops[2].append(hn[sel])
        tops[3].append(np.full(sel.size, t, dtype=np.int64))
    cat = (lambda xs, dt: np.concatenate(xs) if xs else np.empty(0, dtype=dt))
    top_start, top_end = cat(tops[0], np.float64), cat(tops[1], np.float64)
    top_name, top_thread = cat(tops[2], np.int64), cat(tops[3], np.int64)

    so = np.argsort(hs[is_step], kind="stable")
    step_start, step_end = hs[is_step][so], he[is_step][so]
    step_name = [names[i] for i in hn[is_step][so].tolist()]

    graph = int(np.isin(r_name, h.runtime_ids(GRAPH_LAUNCH_NAMES)).sum())
    callback = np.sort(r_ts[np.isin(r_name, h.runtime_ids(CALLBACK_NAMES))])
    mal = np.isin(r_name, h.runtime_ids(MALLOC_NAMES))
    return HostView(
        sync_idx=r_idx[sync_j], sync_end=sync_end, sync_cum=sync_cum,
        pageable=Coverage(*pg_set), with_data=Coverage(*with_data), with_cpu=Coverage(*with_cpu),
        with_compile=Coverage(*with_compile), compiling=Coverage(*comp_set), compile_s=float((comp_set[1] - comp_set[0]).sum()) * 1e-6,
        compiles=int(top_comp.sum()), most_compiled=_most_compiled([names[i] for i in hn[top_comp].tolist()]),
        data_ranges=int(is_data.sum()), data_s=float((he[is_data] - hs[is_data]).sum()) * 1e-6,
        wait_ts=r_ts[wj], wait_stream=wait_stream,
        top_start=top_start, top_end=top_end, top_name=top_name, top_thread=top_thread,
        step_start=step_start, step_end=step_end, step_name=step_name,
        graph_launches=graph, malloc_s=float((r_end[mal] - r_ts[mal]).sum()) * 1e-6, malloc_calls=int(mal.sum()),
        host_work=_long_stretches(merge(with_cpu, union(r_ts[sync], r_end[sync])), bounds), callback_ts=callback,
        sync_start=r_ts[sync_j], event_ts=np.concatenate((r_ts, hs[~is_frame])),
    )


def _first_calls(hs, he, hn, ht, is_comp, names) -> np.ndarray:
    """The calls of jitted functions (:data:`~gpuwhy.importers.timeline.activities.JIT_CALL_PREFIXES`) inside
    which a JIT compiler started on the same thread: a first call, all of whose time (tracing the function,
    lowering it, compiling) is one-time work; a mask over the host ranges."""
    out = np.zeros(hs.size, dtype=bool)
    jit_ids = np.asarray([i for i, n in enumerate(names) if is_jit_call(n)], dtype=np.int64)
    cand = np.flatnonzero(np.isin(hn, jit_ids) & ~is_comp)
    if not cand.size or not is_comp.any():
        return out
    for t in np.unique(ht[cand]).tolist():
        starts = np.sort(hs[is_comp & (ht == t)])
        if not starts.size:
            continue
        c = cand[ht[cand] == t]
        first = np.searchsorted(starts, hs[c], side="left")  # the first compile starting at or after the call
        hit = first < starts.size
        hit[hit] = starts[first[hit]] < he[c][hit]
        out[c[hit]] = True
    return out


def callers(h: HostArrays, runtime_idx: np.ndarray, depth: int = 64) -> list[tuple[str | None, str | None, str | None]]:
    """For runtime calls (indices into ``h.r_*``): (outermost operator, innermost operator, innermost Python frame)
    enclosing each on its thread, None where there is none."""
    out = []
    if runtime_idx.size == 0:
        return out
    by_thread: dict = {}
    for t in np.unique(h.r_thread[runtime_idx]).tolist():
        # Only the ranges of this thread that contain one of its calls can be a caller.
        calls = np.sort(h.r_ts[runtime_idx[h.r_thread[runtime_idx] == t]])
        sel = np.flatnonzero(h.h_thread == t)
        holds = np.searchsorted(calls, h.h_ts[sel], side="left") < np.searchsorted(calls, h.h_end[sel], side="right")
        sel = sel[holds]
        o = nested_order(h.h_ts[sel], h.h_end[sel])
        by_thread[t] = sel[o]
    names = h.h_names
    for i in runtime_idx.tolist():
        x = float(h.r_ts[i])
        sel = by_thread[int(h.r_thread[i])]
        starts = h.h_ts[sel]
        k = int(np.searchsorted(starts, x, side="right")) - 1
        outer = inner = frame = None
        steps = 0
        while k >= 0 and steps < depth * 8:
            j = int(sel[k])
            if h.h_end[j] >= x:
                nm = names[h.h_name[j]]
                kind = int(h.h_kind[j])
                if kind == 2:
                    if frame is None:
                        frame = nm
                elif not (kind == 1 and isinstance(nm, str) and nm.startswith(h.step_prefix)):
                    if inner is None:
                        inner = nm
                    outer = nm
            k -= 1
            steps += 1
        out.append((outer, inner, frame))
    return out


__all__ = ["CALLBACK_NAMES", "HOST_WORK_MIN_US", "STEP_PREFIX", "HostArrays", "HostView", "build_view", "callers",
           "is_dataloader", "issues_calls"]
