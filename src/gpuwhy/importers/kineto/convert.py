"""A torch.profiler scan (:class:`~gpuwhy.importers.kineto.scan.Scan`) as the one
:class:`~gpuwhy.importers.timeline.activities.Timeline`: what is Kineto's own is settled here.

- a copy's direction and host memory come from its name (``Memcpy HtoD (Pageable -> Device)``,
  ``Memcpy DtoH (Device -> Pinned)``, ``Memcpy DtoD (Device -> Device)``);
- a GPU event without a correlation id is linked to its launch through the ``ac2g`` flow
  events (the flow's start is the launch time);
- ``args.grid`` / ``args.block`` become ``(x, y, z)``; ``args.bytes`` a number (NaN when absent
  or not a number);
- the capture window markers and the profiler's own span carry over.
"""

from __future__ import annotations

import numpy as np

from ..timeline.activities import (
    DEVICE_MEMORY, DTOD, DTOH, HTOD, HTOH, MEMCPY, NOT_A_COPY, OTHER_COPY, PAGEABLE, PINNED, PTOP, UNKNOWN_MEMORY,
    Timeline,
)
from ..timeline.launches import dim3
from .scan import Scan

_DIRECTIONS = (("HtoD", HTOD), ("DtoH", DTOH), ("DtoD", DTOD), ("HtoH", HTOH), ("PtoP", PTOP))


def copy_of(name: str) -> tuple[int, int]:
    """(direction, host memory) of a Kineto memcpy name, e.g. ``Memcpy HtoD (Pageable -> Device)``."""
    direction = next((code for word, code in _DIRECTIONS if word in name), OTHER_COPY)
    memory = (PAGEABLE if "Pageable" in name else PINNED if "Pinned" in name
              else DEVICE_MEMORY if direction == DTOD else UNKNOWN_MEMORY)
    return direction, memory


def _bytes(b) -> float:
    try:
        v = float(b)
    except (TypeError, ValueError, OverflowError):
        return float("nan")
    return v


def timeline_of(s: Scan) -> Timeline:
    """The :class:`Timeline` of a finished scan (every piece of the trace scanned into ``s``)."""
    n = len(s.g_ts)
    names = [k for k, _ in sorted(s.names.items(), key=lambda kv: kv[1])]
    kind = np.asarray(s.g_kind, dtype=np.int8)
    name = np.asarray(s.g_name, dtype=np.int64)
    per_name = [copy_of(nm) for nm in names]
    copy = np.zeros(n, dtype=np.int8)
    memory = np.zeros(n, dtype=np.int8)
    cp = np.flatnonzero(kind == MEMCPY)
    if cp.size:
        table = np.asarray(per_name, dtype=np.int8).reshape(-1, 2)
        copy[cp] = table[name[cp], 0]
        memory[cp] = table[name[cp], 1]
    copy[kind != MEMCPY] = NOT_A_COPY
    nbytes = np.full(n, np.nan)
    for i, b in s.g_bytes.items():
        nbytes[i] = _bytes(b)
    launch = np.full(n, np.nan)
    for i, key in s.flow_key.items():
        fid = s.flow_end.get(key)
        if fid is not None and fid in s.flow_start:
            launch[i] = s.flow_start[fid]
    return Timeline(
        gpu_device=list(s.g_dev), gpu_start=np.asarray(s.g_ts, dtype=np.float64),
        gpu_dur=np.asarray(s.g_dur, dtype=np.float64), gpu_kind=kind, gpu_name=name, gpu_names=names,
        gpu_stream=list(s.g_stream), gpu_corr=list(s.g_corr), gpu_bytes=nbytes, gpu_copy=copy, gpu_memory=memory,
        gpu_op=list(s.g_ext), gpu_grid=[dim3(g) for g in s.g_grid], gpu_block=[dim3(b) for b in s.g_block],
        gpu_launch_us=launch,
        api_start=np.asarray(s.r_ts, dtype=np.float64), api_dur=np.asarray(s.r_dur, dtype=np.float64),
        api_name=np.asarray(s.r_name, dtype=np.int64),
        api_names=[k for k, _ in sorted(s.r_names.items(), key=lambda kv: kv[1])], api_corr=list(s.r_corr),
        api_thread=np.asarray(s.r_thread, dtype=np.int64),
        range_start=np.asarray(s.h_ts, dtype=np.float64), range_dur=np.asarray(s.h_dur, dtype=np.float64),
        range_name=np.asarray(s.h_name, dtype=np.int64),
        range_names=[k for k, _ in sorted(s.h_names.items(), key=lambda kv: kv[1])],
        range_kind=np.asarray(s.h_kind, dtype=np.int8), range_thread=np.asarray(s.h_thread, dtype=np.int64),
        thread_pid=list(s.thread_pid), op_flops=dict(s.ext_flops), op_costs=dict(s.ext_costs), wait_stream=dict(s.wait_stream),
        gpu_ranges=list(s.gpu_ranges), window=(s.win_start, s.win_end), bounds=(s.other_lo, s.other_hi),
        lazy_loads=s.lazy_loads, lazy_load_us=s.lazy_load_us, other_devices=dict(s.other_devices),
        dropped=dict(s.dropped), events=s.events, api_events=s.runtime, host_bad_ts=s.host_bad_ts,
    )


__all__ = ["copy_of", "timeline_of"]
