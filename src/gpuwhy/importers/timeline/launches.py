"""The kernel launches of a timeline in the order the program made them.

Each kernel becomes a :class:`KernelLaunch` with its name, grid and block (three
integers), start and duration (us, the timeline's clock) and correlation id (the
API call that launched it; ids grow with every CUDA API call, so sorting by them
gives launch order, which is what Nsight Compute counts). A missing grid or block
is ``None``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .activities import KERNEL, KERNEL_LAUNCH_NAMES, Timeline

Dim3 = tuple[int, int, int]


@dataclass(frozen=True)
class KernelLaunch:
    """One kernel launch: ``name`` (as the trace spells it), ``grid``/``block`` (x, y, z) or None,
    ``ts_us``/``dur_us`` in the trace's clock (us), ``correlation`` (launch order; -1 when absent),
    ``device`` (the GPU index as the trace writes it, or None)."""

    name: str
    grid: Dim3 | None
    block: Dim3 | None
    ts_us: float
    dur_us: float
    correlation: int
    device: int | None


def dim3(v) -> Dim3 | None:
    """``(x, y, z)`` from a trace's ``[x, y, z]`` or an ncu cell ``"(x, y, z)"``; None when it is neither."""
    if isinstance(v, str):
        parts = v.strip().strip("()[]").split(",")
    elif isinstance(v, (list, tuple)):
        parts = list(v)
    else:
        return None
    if len(parts) != 3:
        return None
    out = []
    for p in parts:
        try:
            f = float(str(p).strip().replace(",", ""))
        except ValueError:
            return None
        if not math.isfinite(f) or f < 0 or f != int(f):
            return None
        out.append(int(f))
    return out[0], out[1], out[2]


def _int(v, default: int) -> int:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return default
    return int(f) if math.isfinite(f) else default


def kernel_launches(t: Timeline) -> list[KernelLaunch]:
    """The kernel launches of ``t`` in launch order: by correlation id, then start time (launches
    without a numeric correlation id keep their start-time place after those with one)."""
    out = []
    for i in (t.gpu_kind == KERNEL).nonzero()[0].tolist():
        dev = t.gpu_device[i]
        dur = float(t.gpu_dur[i])
        out.append(KernelLaunch(t.gpu_names[t.gpu_name[i]], t.gpu_grid[i], t.gpu_block[i], float(t.gpu_start[i]),
                                dur if math.isfinite(dur) and dur > 0 else 0.0, _int(t.gpu_corr[i], -1),
                                _int(dev, -1) if dev.isdigit() else None))
    out.sort(key=lambda k: (k.correlation < 0, k.correlation, k.ts_us))
    return out


__all__ = ["Dim3", "KernelLaunch", "dim3", "kernel_launches", "unrecorded_kernels"]


def unrecorded_kernels(t: Timeline) -> tuple[int, int]:
    """``(kernel launch calls, how many of them have no kernel in the trace)``.

    A launch call (:data:`~.activities.KERNEL_LAUNCH_NAMES`; graph launches are left out) whose
    correlation id no GPU event carries lost its kernel record: CUPTI drops activity records when
    its buffers fill, and the runtime calls, recorded on the host, stay. Without correlation ids
    on the GPU events the kernels are counted against the launches instead. Only launches made
    before the last recorded GPU activity started count, and with correlation ids only those made
    before the last launch of their process whose kernel was recorded: launches at the end of the
    capture may still have been queued when it stopped (behind a deep queue their kernels run long
    after the call), which is no loss. GPU events the reader dropped as unreadable (``t.dropped``,
    said on their own) are taken off.
    """
    import numpy as np

    ids = t.api_ids(KERNEL_LAUNCH_NAMES)
    if not ids.size or not t.gpu_start.size:
        return 0, 0
    rows = np.flatnonzero(np.isin(t.api_name, ids))
    last = float(t.gpu_start.max())
    rows = rows[t.api_start[rows] < last]
    gcorr = {c for c in t.gpu_corr if c is not None}
    if gcorr:
        # per process: its launches after its last one whose kernel was recorded may be queued at the end
        threads = t.api_thread[rows].tolist() if t.api_thread.size == t.api_start.size else [-1] * rows.size
        pid = [t.thread_pid[j] if 0 <= j < len(t.thread_pid) else None for j in threads]
        starts = t.api_start[rows].tolist()
        has = [t.api_corr[i] in gcorr for i in rows.tolist()]
        last_recorded: dict = {}
        for p, st, ok in zip(pid, starts, has):
            if ok and st > last_recorded.get(p, -math.inf):
                last_recorded[p] = st
        counted = [st <= last_recorded.get(p, -math.inf) for p, st in zip(pid, starts)]
        missing = sum(1 for i, ok, c in zip(rows.tolist(), has, counted) if c and not ok and t.api_corr[i] is not None)
        rows = rows[np.asarray(counted, dtype=bool)]
    else:
        missing = int(rows.size) - int((t.gpu_kind == KERNEL).sum())
    return int(rows.size), max(0, missing - sum(t.dropped.values()))
