"""One time budget for a profiled window: where the wall time went, and the Amdahl ceiling of each fix.

Pure arithmetic (no I/O). Inputs are seconds; the window is the wall time of
the profiled part of a program. The GPU's time in the window is split into
idle time by cause (host launch gaps, synchronisations, data loading, ...) and
busy time by regime (compute, memory, latency, overhead-sized kernels); the
two lists add up to the window (what no cause explains is listed as
"unattributed", never dropped).

Amdahl's law gives each fix its ceiling: removing ``r`` seconds from a window
of ``W`` seconds speeds the window up by at most ``W / (W - r)``. Removing all
idle time of a cause removes its seconds; a kernel at ``p`` % of its roofline
(speed of light) can at best run in ``p`` % of its time, so a faster version
removes ``t * (1 - p/100)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping

#: Idle causes, in the words the trace analysis uses, with their remedies in order.
IDLE_REMEDIES: dict[str, tuple[str, ...]] = {
    "host launch gaps": (
        "capture the steady-state step in a CUDA graph (torch.cuda.graphs / torch.compile(mode='reduce-overhead'))",
        "fuse small ops (torch.compile) so fewer kernels are launched",
        "raise the batch size so each launch does more work",
    ),
    "synchronisation": (
        "remove host syncs from the step (.item(), .cpu(), print of a tensor, torch.cuda.synchronize)",
        "log metrics every N steps, or accumulate on the GPU and read once",
    ),
    "data loading": (
        "DataLoader(num_workers>0, pin_memory=True, persistent_workers=True) so batches are prepared ahead",
        "move per-sample CPU work to the GPU or precompute it",
    ),
    "cross-stream wait": (
        "overlap: give the waiting stream independent work, or reorder so the dependency is met earlier",
        "check that each wait_stream/wait_event is needed",
    ),
    "pageable copy": (
        "copy from pinned memory (pin_memory=True, tensor.pin_memory()) with non_blocking=True",
    ),
}

#: Busy regimes and the remedy that raises their ceiling.
BUSY_REMEDIES: dict[str, tuple[str, ...]] = {
    "compute": ("lower precision on tensor cores (bf16/fp8), or fewer FLOPs (a better algorithm)",),
    "memory": ("move fewer bytes: fuse producer and consumer, keep data in lower precision",),
    "latency": ("more bytes in flight: larger grids, vector loads, more independent loads per thread",),
    "overhead": ("fewer, larger kernels: fuse (torch.compile) or capture in a CUDA graph",),
    "issue": ("fewer instructions per byte: cheaper maths (fast exp, fewer index computations), vector loads",),
}

UNATTRIBUTED = "unattributed"
#: Idle share (% of the window) under which the window is GPU-bound: the time is in the kernels.
GPU_BOUND_IDLE_PCT = 10.0


@dataclass(frozen=True)
class Share:
    """A part of the window: ``seconds`` and ``pct`` of the window (0-100); ``kind`` is "idle" or "busy"."""

    name: str
    kind: str
    seconds: float
    pct: float


@dataclass(frozen=True)
class KernelTime:
    """A kernel's total time in the window (s), its regime and its % of its roof (``None``: not judged);
    ``roof`` names the roof when it is not DRAM or compute (``L2``, ``L1``; not named for an
    overhead-bound kernel, whose launch, not a memory level, bounds it)."""

    name: str
    total_s: float
    regime: str
    roof_pct: float | None = None
    roof: str | None = None


@dataclass(frozen=True)
class Fix:
    """What removing one share of the window would give.

    ``removable_s``: seconds a perfect fix removes; ``share_pct``: that as %
    of the window; ``ceiling_x``: Amdahl's bound on the window's speed-up
    (``inf`` when the whole window would go); ``remedies``: in order.
    """

    what: str
    kind: str
    removable_s: float
    share_pct: float
    ceiling_x: float
    detail: str
    remedies: tuple[str, ...]


@dataclass(frozen=True)
class TimeBudget:
    """The window (s), GPU busy and idle (s), the shares (idle by cause, busy by kind), the fixes by size.

    ``idle_fix`` is removing all idle time at once (the summary line); ``fixes``
    are single causes and kernels, largest first; ``verdict`` is the largest of
    them (``None`` when nothing is removable). ``not_judged`` names idle shares
    that are listed but are no fix (warm-up: leave it out of the window).
    """

    window_s: float
    busy_s: float
    idle_s: float
    idle: tuple[Share, ...]
    busy: tuple[Share, ...]
    fixes: tuple[Fix, ...]
    idle_fix: Fix | None = None
    not_judged: tuple[str, ...] = ()

    @property
    def verdict(self) -> Fix | None:
        return self.fixes[0] if self.fixes else None

    @property
    def gpu_bound(self) -> bool:
        """True when the GPU is idle less than :data:`GPU_BOUND_IDLE_PCT` % of the window and no
        single fix removes more than that: the time is in the kernels themselves."""
        top = self.verdict.share_pct if self.verdict is not None else 0.0
        return 100.0 * self.idle_s / self.window_s < GPU_BOUND_IDLE_PCT and top < GPU_BOUND_IDLE_PCT

    @property
    def shares_pct_total(self) -> float:
        """Sum of every share's % (100 up to rounding: the shares add up to the window)."""
        return sum(s.pct for s in self.idle + self.busy)


def amdahl_ceiling(window_s: float, removable_s: float) -> float:
    """Speed-up bound ``W / (W - r)`` for removing ``r`` of ``W`` seconds (``inf`` when ``r >= W``).

    Raises:
        ValueError: ``window_s`` not positive, or ``removable_s`` negative.
    """
    if not window_s > 0:
        raise ValueError(f"the window must be positive, not {window_s} s")
    if removable_s < 0:
        raise ValueError(f"removable time must be >= 0, not {removable_s} s")
    rest = window_s - removable_s
    return math.inf if rest <= 0 else window_s / rest


def _shares(parts: Mapping[str, float], kind: str, window_s: float) -> list[Share]:
    out = []
    for name, s in parts.items():
        if s < 0 or not math.isfinite(s):
            raise ValueError(f"{kind} time of {name!r} must be a finite number >= 0, not {s}")
        if s > 0:
            out.append(Share(name, kind, s, 100.0 * s / window_s))
    return sorted(out, key=lambda x: -x.seconds)


def time_budget(
    window_s: float,
    idle_by_cause: Mapping[str, float],
    busy_by_regime: Mapping[str, float],
    kernels: Iterable[KernelTime] = (),
    *,
    top_kernels: int = 3,
    idle_remedies: Mapping[str, tuple[str, ...]] | None = None,
    not_fixes: Iterable[str] = (),
    min_fix_pct: float = 0.5,
) -> TimeBudget:
    """The budget of a window of ``window_s`` seconds.

    ``idle_by_cause`` and ``busy_by_regime`` are seconds; when they add up to
    less than the window, the rest is an ``unattributed`` idle share; when
    they add up to more (overlapping streams counted twice), the busy shares
    are scaled down to fit, so the shares always add up to the window.
    ``kernels`` with a ``roof_pct`` give one fix each (the ``top_kernels``
    largest by removable time). ``idle_remedies`` gives remedies per idle
    cause (default :data:`IDLE_REMEDIES`). Idle shares named in ``not_fixes``
    (warm-up) are listed but never a fix; fixes under ``min_fix_pct`` % of the
    window are left out.

    Raises:
        ValueError: a non-positive window, or a negative or non-finite share.
    """
    if not (window_s > 0 and math.isfinite(window_s)):
        raise ValueError(f"the window must be a positive number of seconds, not {window_s}")
    idle = _shares(idle_by_cause, "idle", window_s)
    busy = _shares(busy_by_regime, "busy", window_s)
    total = sum(s.seconds for s in idle + busy)
    if total > window_s * (1 + 1e-9):
        idle_s = sum(s.seconds for s in idle)
        room = max(window_s - idle_s, 0.0)
        b = sum(s.seconds for s in busy)
        scale = room / b if b > 0 else 0.0
        busy = [Share(s.name, s.kind, s.seconds * scale, 100.0 * s.seconds * scale / window_s) for s in busy]
    elif window_s - total > 1e-12 * window_s:
        rest = window_s - total
        idle.append(Share(UNATTRIBUTED, "idle", rest, 100.0 * rest / window_s))
    idle_s = sum(s.seconds for s in idle)
    busy_s = sum(s.seconds for s in busy)

    rem = dict(IDLE_REMEDIES, **(idle_remedies or {}))
    skip = set(not_fixes) | {UNATTRIBUTED}
    idle_fix = None
    fixes: list[Fix] = []
    if idle_s > 0:
        causes = ", ".join(f"{s.name} {s.pct:.0f}%" for s in idle if s.pct >= 0.5)
        first = next((s.name for s in idle if s.name not in skip), idle[0].name)
        idle_fix = Fix(
            "GPU idle time", "idle", idle_s, 100.0 * idle_s / window_s, amdahl_ceiling(window_s, idle_s),
            f"GPU idle {100.0 * idle_s / window_s:.0f}% of the window ({causes})", rem.get(first, ()),
        )
        for s in idle:
            if s.name in skip or s.pct < min_fix_pct:
                continue
            fixes.append(Fix(
                s.name, "idle", s.seconds, s.pct, amdahl_ceiling(window_s, s.seconds),
                f"GPU idle, {s.name}: {s.pct:.0f}% of the window", rem.get(s.name, ()),
            ))
    kfix = []
    for k in kernels:
        if k.roof_pct is None or not k.total_s > 0:
            continue
        pct = min(max(k.roof_pct, 0.0), 100.0)
        r = k.total_s * (1.0 - pct / 100.0)
        kfix.append(Fix(
            f"kernel {k.name}", "kernel", r, 100.0 * r / window_s, amdahl_ceiling(window_s, r),
            f"{k.name}: {100.0 * k.total_s / window_s:.0f}% of the window, {k.regime}-bound at {k.roof_pct:.0f}% of its "
            + (f"{k.roof} roof" if k.roof and k.regime != "overhead" else "roof"),
            BUSY_REMEDIES.get(k.regime, ()),
        ))
    kfix.sort(key=lambda f: -f.removable_s)
    fixes += kfix[:top_kernels]
    fixes.sort(key=lambda f: -f.removable_s)
    fixes = [f for f in fixes if f.share_pct >= min_fix_pct]
    return TimeBudget(window_s, busy_s, idle_s, tuple(idle), tuple(busy), tuple(fixes), idle_fix,
                      tuple(n for n in not_fixes if any(s.name == n for s in idle)))
