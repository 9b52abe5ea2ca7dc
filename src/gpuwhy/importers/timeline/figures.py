"""Figures of one GPU's track beside its idle split: host-to-device copies by host memory, the host
operations that ran while the GPU waited, and the top kernels (with FLOPs where the operators
that launched them carry a count). Times in us inside, seconds in the results."""

from __future__ import annotations

import numpy as np

from ..kernel_names import display_names
from .activities import HTOD, KERNEL, MEMCPY, PAGEABLE, PINNED, Timeline
from .gaps import Gaps, host_windows
from .host import HostArrays, HostView, is_dataloader
from .intervals import Coverage
from .results import HostOp, TraceKernel
from .track import GpuTrack


def copy_stats(t: Timeline, track: GpuTrack) -> dict:
    """Host-to-device copies of one GPU: count, bytes and time (us) from pageable (``pg_*``) and from
    pinned memory (``pin_*``); copies of unknown size add no bytes."""
    out = {"pg_n": 0, "pg_bytes": 0.0, "pg_us": 0.0, "pin_n": 0, "pin_bytes": 0.0, "pin_us": 0.0}
    idx = track.order
    for j in np.flatnonzero((track.kind == MEMCPY) & (t.gpu_copy[idx] == HTOD)).tolist():
        mem = int(t.gpu_memory[idx[j]])
        key = "pg" if mem == PAGEABLE else "pin" if mem == PINNED else None
        if key is None:
            continue
        out[key + "_n"] += 1
        out[key + "_us"] += float(track.dur[j])
        b = float(t.gpu_bytes[idx[j]])
        if not np.isnan(b):
            out[key + "_bytes"] += b
    return out


def host_ops(gaps: Gaps, view: HostView, host: HostArrays, inner: np.ndarray, warm: bool, n: int = 5) -> list[HostOp]:
    """Top-level host operations by the time they ran inside the host windows of launched-late gaps,
    weighted by the gaps' warm-up share (``warm``) or its complement; DataLoader ranges aside."""
    wa, wb, wgap = host_windows(gaps, inner)
    if not view.top_start.size or not wa.size:
        return []
    wf = gaps.warm_frac[wgap]
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


def _kernel_flops(t: Timeline, track: GpuTrack, is_k: np.ndarray, kd: np.ndarray, n_names: int):
    """FLOPs and the count of kernels with FLOPs per kernel name id: each operator's FLOPs shared
    among the kernels it launched by their time (None, None when no operator carries a count)."""
    if not t.op_flops:
        return None, None
    kn = track.name[is_k]
    ops = [t.gpu_op[i] for i in track.order[is_k].tolist()]
    op_dur: dict = {}
    for x, d in zip(ops, kd.tolist()):
        if x is not None and x in t.op_flops:
            op_dur[x] = op_dur.get(x, 0.0) + d
    if not op_dur:
        return None, None
    kf = np.asarray([t.op_flops[x] * d / op_dur[x] if (x in op_dur and op_dur[x] > 0) else np.nan
                     for x, d in zip(ops, kd.tolist())])
    have = ~np.isnan(kf)
    if not have.any():
        return None, None
    return (np.bincount(kn[have], weights=kf[have], minlength=n_names),
            np.bincount(kn[have], minlength=n_names))


def top_kernels(t: Timeline, track: GpuTrack, top: int, busy_us: float) -> tuple[TraceKernel, ...]:
    """The ``top`` kernel names of ``track`` by total time, with their counts, times and share of
    ``busy_us``, and FLOPs and achieved TFLOP/s where every launch of the name has a FLOP count."""
    is_k = track.kind == KERNEL
    if not is_k.any():
        return ()
    kd = track.dur[is_k]
    kn = track.name[is_k]
    tot = np.bincount(kn, weights=kd)
    cnt = np.bincount(kn)
    fl, fl_cnt = _kernel_flops(t, track, is_k, kd, len(tot))
    ids = [int(i) for i in np.argsort(-tot, kind="stable")[:top] if cnt[i] > 0]
    disp = display_names([t.gpu_names[i] for i in ids])
    out = []
    for i in ids:
        full = t.gpu_names[i]
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


__all__ = ["copy_stats", "host_ops", "top_kernels"]
