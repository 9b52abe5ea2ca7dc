"""The kernel launches of a torch.profiler trace in the order the program made them.

Each kernel event (``cat: kernel``) becomes a :class:`KernelLaunch` with its
name, grid and block (``args.grid``/``args.block``, three integers), start and
duration (us, the trace's clock) and correlation id (``args.correlation``: the
runtime call that launched it; ids grow with every CUDA API call, so sorting by
them gives launch order, which is what Nsight Compute counts). Events without a
numeric start are left out; a missing grid or block is ``None``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .read import events_of
from .scan import _cat_kind

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


def kernel_launches(data) -> list[KernelLaunch]:
    """The kernel launches of a parsed trace (a dict with ``traceEvents`` or a bare list), in launch
    order: by correlation id, then start time (launches without a correlation id keep their start-time
    place after those with one)."""
    out = []
    for e in events_of(data):
        if not isinstance(e, dict) or _cat_kind(e.get("cat")) != 0:
            continue
        try:
            ts = float(e.get("ts"))
        except (TypeError, ValueError):
            continue
        if not math.isfinite(ts):
            continue
        try:
            dur = max(float(e.get("dur") or 0.0), 0.0)
        except (TypeError, ValueError):
            dur = 0.0
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        dev = args.get("device")
        out.append(KernelLaunch(str(e.get("name", "")), dim3(args.get("grid")), dim3(args.get("block")), ts,
                                dur if math.isfinite(dur) else 0.0, _int(args.get("correlation"), -1),
                                _int(dev, -1) if dev is not None else None))
    out.sort(key=lambda k: (k.correlation < 0, k.correlation, k.ts_us))
    return out


__all__ = ["Dim3", "KernelLaunch", "dim3", "kernel_launches"]
