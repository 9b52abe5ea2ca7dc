"""One GPU's work as a track: its activities sorted by start, their launch calls, and the one
union of its busy time (the gaps where no stream of the GPU runs anything). Times in us.

The busy union, span, idle time and the gaps are computed here and nowhere else: the idle
split (:mod:`.gaps`), the steps, the bins and the budget read them from the track.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from .activities import GRAPH_LAUNCH_NAMES, HTOD, KERNEL, MEMCPY, PAGEABLE, Timeline
from .clean import Cleaned
from .intervals import sorted_gaps
from .kinds import kernel_kind


@dataclass
class GpuTrack:
    """One GPU's activities in start order (arrays of one length, us) and its busy union.

    ``order``: their indices in the timeline's ``gpu_*`` columns; ``start``/``end``/``dur``;
    ``kind`` (:data:`~.activities.KERNEL`, ...); ``name`` (ids into the timeline's ``gpu_names``);
    ``stream``: small codes in order of first appearance, ``streams`` the timeline's stream id of
    each code; ``launch``/``launch_end``: the launch call's start and end (NaN unknown),
    ``launch_api`` its index (-1 none); ``graph``: launched by a CUDA-graph replay;
    ``pageable_h2d``: a host-to-device copy from pageable memory; ``communication``: a collective's
    kernel (NCCL, RCCL: :func:`~.kinds.kernel_kind`); ``running_end``: the running
    maximum of the ends. ``gap_index`` ``i`` marks an idle gap between activity ``i`` (and all
    before it) and ``i + 1``: from ``gap_start`` to ``gap_end``. ``pid``: the process that launched
    most of the work (None when no launch is linked).
    """

    device: str
    order: np.ndarray
    start: np.ndarray
    end: np.ndarray
    dur: np.ndarray
    kind: np.ndarray
    name: np.ndarray
    stream: np.ndarray
    streams: list
    launch: np.ndarray
    launch_end: np.ndarray
    launch_api: np.ndarray
    graph: np.ndarray
    pageable_h2d: np.ndarray
    communication: np.ndarray
    running_end: np.ndarray
    gap_index: np.ndarray
    gap_start: np.ndarray
    gap_end: np.ndarray
    pid: object

    @property
    def span_us(self) -> float:
        """First start to last end."""
        return float(self.end.max() - self.start.min())

    @property
    def idle_us(self) -> float:
        """The span less the busy union: the summed gaps."""
        return float((self.gap_end - self.gap_start).sum())

    @property
    def busy_us(self) -> float:
        return self.span_us - self.idle_us

    def busy_intervals(self) -> tuple[np.ndarray, np.ndarray]:
        """The busy union as a sorted disjoint set ``(a, b)`` (us): the span less the gaps."""
        a = np.concatenate((self.start[:1], self.gap_end))
        b = np.concatenate((self.gap_start, self.running_end[-1:]))
        return a, b


def gpu_track(t: Timeline, c: Cleaned, device: str, sel: np.ndarray) -> GpuTrack:
    """The track of ``device``: the kept GPU activities ``sel`` (indices into ``t``'s columns) of it."""
    order = sel[np.argsort(t.gpu_start[sel], kind="stable")]
    st = t.gpu_start[order]
    du = t.gpu_dur[order]
    en = st + du
    raw = list(map(t.gpu_stream.__getitem__, order.tolist()))
    codes = {x: i for i, x in enumerate(dict.fromkeys(raw))}  # in order of first appearance
    stream = np.fromiter(map(codes.__getitem__, raw), dtype=np.int64, count=len(raw))
    lau_i = c.launch_api[order]
    graph = np.zeros(st.size, dtype=bool)
    graph_ids = t.api_ids(GRAPH_LAUNCH_NAMES)
    li = lau_i >= 0
    if graph_ids.size:
        graph[li] = np.isin(t.api_name[lau_i[li]], graph_ids)
    kind = t.gpu_kind[order]
    pageable = (kind == MEMCPY) & (t.gpu_copy[order] == HTOD) & (t.gpu_memory[order] == PAGEABLE)
    # A pageable copy counts only where it has a correlation id (its launch call is what the host stages).
    has_corr = np.fromiter((x is not None for x in map(t.gpu_corr.__getitem__, order.tolist())), dtype=bool,
                           count=order.size)
    cm, gi = sorted_gaps(st, en)
    threads = np.where(li, t.api_thread[np.clip(lau_i, 0, None)], -1) if t.api_thread.size else np.full(st.size, -1)
    threads = threads[threads >= 0]
    pid = Counter(map(t.thread_pid.__getitem__, threads.tolist())).most_common(1)[0][0] if threads.size else None
    return GpuTrack(
        device=str(device), order=order, start=st, end=en, dur=du, kind=kind, name=t.gpu_name[order], stream=stream,
        streams=list(codes), launch=c.launch_us[order], launch_end=c.launch_end_us[order], launch_api=lau_i,
        graph=graph, pageable_h2d=pageable & has_corr, communication=_communication(t, t.gpu_name[order], kind),
        running_end=cm, gap_index=gi, gap_start=cm[gi],
        gap_end=st[gi + 1], pid=pid,
    )


def _communication(t: Timeline, name: np.ndarray, kind: np.ndarray) -> np.ndarray:
    """Mask of the collective kernels (their name's family is communication)."""
    comm_ids = np.asarray([i for i, n in enumerate(t.gpu_names) if kernel_kind(n) == "communication"], dtype=np.int64)
    return (kind == KERNEL) & np.isin(name, comm_ids)


__all__ = ["GpuTrack", "gpu_track"]
