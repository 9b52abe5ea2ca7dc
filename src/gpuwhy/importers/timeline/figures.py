"""Figures of one GPU's track beside its idle split: its busy time by what ran (kernels, collectives,
memsets, copies by direction and host memory), the host operations that ran while the GPU waited,
and the top kernels (with FLOPs where the operators that launched them carry a count). Times in
us inside, seconds in the results."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...verdict.causes import Cause
from ...verdict.figures import CopyFigure, KernelFigure
from ...units import fmt_time
from ..kernel_names import display_names
from .activities import COPY_NAMES, KERNEL, MEMCPY, MEMORY_NAMES, MEMSET, PAGEABLE, Timeline, is_compile
from .gaps import Gaps, host_windows
from .host import HostArrays, HostView, is_dataloader
from .intervals import Coverage, merge, union
from .kinds import kernel_kind
from .results import HostOp, TraceKernel
from .track import GpuTrack


def busy_figures(t: Timeline, track: GpuTrack, top: int | None = None, warm: np.ndarray | None = None):
    """The GPU's busy union split by what ran, each instant given once: warm-up work (``warm``: a mask
    over the track's activities, those launched inside a JIT compiler's ranges), then kernels
    (collectives aside), then the collectives, memsets and copies not hidden under what comes before them.

    Returns ``(busy, kernels, copies)``: ``busy`` the seconds of ``warmup``, ``communication``,
    ``memset``, ``pageable_copy`` and ``copy`` (:class:`~gpuwhy.verdict.causes.Cause`) exposed (``warmup``
    only with warm work); ``kernels`` a :class:`~gpuwhy.verdict.figures.KernelFigure` per kernel name,
    largest first (the ``top`` of them, all when None), their ``total_s`` the kernels' union shared by
    summed duration; ``copies`` a :class:`~gpuwhy.verdict.figures.CopyFigure` per direction and host
    memory. Warm-up work is in none of the others. The parts add up to the track's busy time.
    """
    st, en, kind, comm = track.start, track.end, track.kind, track.communication
    warm = np.zeros(st.size, dtype=bool) if warm is None else np.asarray(warm, dtype=bool)
    covered = union(st[warm], en[warm])
    warm_us = float((covered[1] - covered[0]).sum())
    is_k = (kind == KERNEL) & ~comm & ~warm
    own = union(st[is_k], en[is_k])
    kernel_us = float((own[1] - own[0]).sum()) - float(Coverage(*covered).within(own[0], own[1]).sum())
    covered = merge(covered, own)

    def exposed(mask):
        """us of ``mask``'s union outside what is covered so far; then covered grows by it."""
        nonlocal covered
        own = union(st[mask], en[mask])
        hidden = float(Coverage(*covered).within(own[0], own[1]).sum())
        covered = merge(covered, own)
        return float((own[1] - own[0]).sum()) - hidden

    busy = {Cause.COMMUNICATION: exposed(comm & ~warm), Cause.MEMSET: exposed((kind == MEMSET) & ~warm)}
    if warm_us > 0:
        busy[Cause.WARMUP] = warm_us
    idx = track.order
    copies = []
    groups = sorted({(int(t.gpu_copy[i]), int(t.gpu_memory[i])) for i in idx[(kind == MEMCPY) & ~warm].tolist()},
                    key=lambda g: (g[1] != PAGEABLE, g))
    for d, m in groups:
        sel = (kind == MEMCPY) & ~warm & (t.gpu_copy[idx] == d) & (t.gpu_memory[idx] == m)
        ex = exposed(sel)
        b = t.gpu_bytes[idx[sel]]
        nbytes = float(np.nansum(b)) if (~np.isnan(b)).any() else None
        copies.append(CopyFigure(COPY_NAMES.get(d, "copy"), MEMORY_NAMES.get(m, "unknown"), int(sel.sum()), nbytes,
                                 float(track.dur[sel].sum()) * 1e-6, ex * 1e-6))
        key = Cause.PAGEABLE_COPY if m == PAGEABLE else Cause.COPY
        busy[key] = busy.get(key, 0.0) + ex
    return ({c: s * 1e-6 for c, s in busy.items()}, _kernel_figures(t, track, kernel_us, top, is_k), tuple(copies))


def _kernel_figures(t: Timeline, track: GpuTrack, kernel_us: float, top: int | None,
                    is_k: np.ndarray) -> tuple[KernelFigure, ...]:
    """One figure per kernel name of ``is_k`` (a mask over the track), their times sharing the kernels'
    union ``kernel_us``."""
    per = _PerName.of(t, track, is_k)
    if per is None:
        return ()
    summed = float(per.dur_us.sum())
    scale = kernel_us / summed if summed > 0 else 0.0
    out = []
    for i in per.ranked(top):
        name = t.gpu_names[i]
        tot, cnt = float(per.total_us[i]), int(per.count[i])
        out.append(KernelFigure(name, tot * scale * 1e-6, cnt, tot / cnt * 1e-6, kernel_kind(name), flops=per.flops(i)))
    return tuple(out)


def largest_kernels(t: Timeline, track: GpuTrack, mask: np.ndarray, n: int = 2) -> str:
    """The ``n`` kernels of ``mask`` (over the track) with the most summed time, in words (``""``: none)."""
    per = _PerName.of(t, track, mask & (track.kind == KERNEL))
    if per is None:
        return ""
    ids = per.ranked(n)
    short = display_names([t.gpu_names[i] for i in ids])
    return ", ".join(f"{short[t.gpu_names[i]]} {fmt_time(float(per.total_us[i]) * 1e-6)}" for i in ids)


@dataclass(frozen=True)
class _PerName:
    """The kernels ``is_k`` selects on a track, summed per kernel name id: their durations
    ``dur_us`` (us, in track order), each name's total time ``total_us`` (us) and launch ``count``,
    and FLOPs per name (``name_flops``, with ``flop_count`` launches carrying one; None when no
    operator has a FLOP count)."""

    dur_us: np.ndarray
    total_us: np.ndarray
    count: np.ndarray
    name_flops: np.ndarray | None
    flop_count: np.ndarray | None

    @classmethod
    def of(cls, t: Timeline, track: GpuTrack, is_k: np.ndarray) -> "_PerName | None":
        """None when ``is_k`` selects nothing."""
        if not is_k.any():
            return None
        kd = track.dur[is_k]
        kn = track.name[is_k]
        tot = np.bincount(kn, weights=kd)
        fl, fl_cnt = _kernel_flops(t, track, is_k, kd, len(tot))
        return cls(kd, tot, np.bincount(kn), fl, fl_cnt)

    def ranked(self, top: int | None) -> list[int]:
        """The name ids with launches, most time first (the first ``top`` when given)."""
        ids = [int(i) for i in np.argsort(-self.total_us, kind="stable") if self.count[i] > 0]
        return ids[:top] if top is not None else ids

    def flops(self, i: int) -> float | None:
        """Name ``i``'s FLOPs when every launch of it has a count, else None."""
        fl, fc = self.name_flops, self.flop_count
        return float(fl[i]) if fl is not None and fc[i] == self.count[i] and fl[i] > 0 else None


def host_ops(gaps: Gaps, view: HostView, host: HostArrays, inner: np.ndarray, warm: bool, n: int = 5) -> list[HostOp]:
    """Top-level host operations by the time they ran inside the host windows of launched-late gaps,
    weighted by the gaps' warm-up share (``warm``) or its complement; DataLoader ranges aside, and a JIT
    compiler's ranges outside warm-up (its time in a gap is warm-up), and outside warm-up each operation
    by the part of it no compiler ran in (a jitted function's first call compiles it: warm-up)."""
    wa, wb, wgap = host_windows(gaps, inner)
    if not view.top_start.size or not wa.size:
        return []
    wf = gaps.warm_frac[wgap]
    cov = Coverage(wa, wb, wf if warm else 1.0 - wf)
    ov = cov.within(view.top_start, view.top_end)
    if not warm and view.compiling.a.size:  # an operation's time while a compiler ran (a first call) is warm-up
        dur = np.maximum(view.top_end - view.top_start, 1e-9)
        ov = ov * np.clip(1.0 - view.compiling.within(view.top_start, view.top_end) / dur, 0.0, 1.0)
    per = np.bincount(view.top_name, weights=ov, minlength=len(host.h_names))
    out = []
    for i in np.argsort(-per, kind="stable").tolist():
        if per[i] <= 0 or len(out) >= n:
            break
        nm = host.h_names[i]
        if is_dataloader(nm) or (is_compile(nm) and not warm):
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
    per = _PerName.of(t, track, track.kind == KERNEL)
    if per is None:
        return ()
    ids = [i for i in np.argsort(-per.total_us, kind="stable")[:top].tolist() if per.count[i] > 0]
    disp = display_names([t.gpu_names[i] for i in ids])
    out = []
    for i in ids:
        full = t.gpu_names[i]
        tot, cnt, f = float(per.total_us[i]), int(per.count[i]), per.flops(i)
        out.append(TraceKernel(
            name=disp[full], full_name=full, count=cnt, total_s=tot * 1e-6, mean_s=tot / cnt * 1e-6,
            busy_pct=100.0 * tot / busy_us if busy_us > 0 else 0.0, flops=f,
            achieved_tflops=f / (tot * 1e-6) / 1e12 if f is not None and tot > 0 else None,
        ))
    return tuple(out)


__all__ = ["busy_figures", "host_ops", "largest_kernels", "top_kernels"]
