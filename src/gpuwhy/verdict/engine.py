"""The verdict engine: a profiled window into one time budget, whose shares each carry a cause and
its evidence, and the remedies with the shares each removes and its predicted effect.

- Every second of the window is in exactly one share: GPU idle by cause (as the timeline's gaps
  were split), GPU busy by what ran (copies and collectives not hidden under kernels, memsets,
  kernels by measured regime, launch-sized kernels, kernels whose regime was not measured). What
  no figure explains is ``unexplained``, never dropped; busy figures that add up to more than the
  window (streams counted twice) are scaled to fit.
- Warm-up is listed and not judged: the **judged window** is the window less warm-up, and every
  ceiling is taken over it.
- A remedy's effect is the seconds it removes from each share (:mod:`.remedies`); its ceiling is
  ``judged / floor``: an upper bound the fix cannot beat. The ``floor`` is the least the judged
  window can take once the fix removed its shares (:func:`floor_after`): the GPU still runs the
  busy time and the queue latency the fix leaves, and the host still spends the host-side idle
  time it leaves (launch calls, Python work, syncs, loading, staging), but once the host is
  ahead that host time may run while the GPU works, so the floor is the larger of the two, not
  their sum (Amdahl's ``judged - removed`` is their sum: a fix that makes the host faster than
  the GPU beat it, 2026-12-07 on an H100). Where the tracer's host time is known, the host side
  is allowed that much less. A remedy that removes nothing here is not offered.
- The **top cause** is the judged share with the most time; kernels whose regime was not measured
  are no diagnosis, so they give the verdict only when they hold at least half the judged window
  and no diagnosed share holds :data:`DIAGNOSED_MIN_PCT` % of it. The verdict names it, and the first remedy is the
  one that removes most among those that shrink it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..units import fmt_counted, fmt_num, fmt_time
from .causes import BUSY, HOST_SIDE, VERDICT, Cause, label
from .figures import LAUNCH_SIZED_S, KernelFigure, WindowFigures
from .remedies import CATALOGUE, NEXT_STEP, next_step

#: Shares under this share of the judged window (%) are listed but give no verdict or remedy.
MIN_SHARE_PCT = 0.5
#: A diagnosed share (anything but kernels whose regime was not measured) this large (% of the judged
#: window) gives the verdict even when unmeasured kernels hold more: it is known waiting with a known fix.
DIAGNOSED_MIN_PCT = 30.0
#: Fewer GPU activities than this, or a window shorter than MIN_WINDOW_S, is too little to judge.
MIN_ACTIVITIES = 4
MIN_WINDOW_S = 50e-6


def enough_to_judge(activities: int, window_s: float) -> bool:
    """Whether ``activities`` GPU activities over ``window_s`` seconds show a pattern (one kernel or a
    few launches do not)."""
    return activities >= MIN_ACTIVITIES and window_s >= MIN_WINDOW_S


@dataclass(frozen=True)
class Share:
    """One part of the window: its ``cause``, ``seconds``, ``pct`` of the window (0-100), the memory
    ``level`` of a memory-bound share (the level holding most of its time), ``evidence`` lines, and
    ``busy_s``: the seconds of it the GPU was busy (copies from pageable memory are both: the host
    staging them while the GPU idles, and the copies' own time); None: all of it or none, by cause."""

    cause: Cause
    seconds: float
    pct: float
    level: str | None = None
    evidence: tuple[str, ...] = ()
    busy_s: float | None = None

    @property
    def label(self) -> str:
        return label(self.cause, self.level)

    @property
    def gpu_busy_s(self) -> float:
        """The seconds of this share the GPU was busy."""
        if self.busy_s is not None:
            return self.busy_s
        return self.seconds if self.cause in BUSY else 0.0

    @property
    def busy(self) -> bool:
        """Whether most of the share is GPU busy time (its side in the budget)."""
        return 2.0 * self.gpu_busy_s > self.seconds

    def to_dict(self) -> dict:
        return {"cause": self.cause.value, "label": self.label, "seconds": self.seconds, "share_pct": self.pct,
                "side": "busy" if self.busy else "idle", "busy_s": self.gpu_busy_s, "level": self.level,
                "evidence": list(self.evidence)}


@dataclass(frozen=True)
class RemedyEffect:
    """A remedy offered here: ``removes`` the seconds it takes from each share, ``removed_s`` their sum,
    ``share_pct`` that as % of the judged window, ``floor_s`` the least the judged window can take
    after it (:func:`floor_after`), ``ceiling_x`` the most the judged window can speed up (judged /
    floor; ``inf`` when nothing would be left)."""

    key: str
    text: str
    removes: tuple[tuple[Cause, float], ...]
    removed_s: float
    share_pct: float
    ceiling_x: float
    floor_s: float

    def to_dict(self) -> dict:
        return {"key": self.key, "text": self.text, "removed_s": self.removed_s, "share_pct": self.share_pct,
                "ceiling_x": self.ceiling_x if math.isfinite(self.ceiling_x) else None, "floor_s": self.floor_s,
                "removes": [{"cause": c.value, "seconds": s} for c, s in self.removes]}


@dataclass(frozen=True)
class Diagnosis:
    """The time budget of one window and what to do about it.

    ``window_s``: the window; ``judged_s``: less warm-up; ``busy_s``: the GPU's busy time in it;
    ``shares``: largest first, adding up to the
    window; ``remedies``: those that remove something, the top cause's first, then by ceiling;
    ``top``: the judged share with the most time (None for an empty window); ``verdict``: its word
    (``overhead-bound``, ``host-bound``, ``memory-bound``, ...); ``line``: the one-line verdict;
    ``next_steps``: what to do about shares no remedy shrinks; ``scope``: what the judged window is,
    in words (``the judged window``; ``the kernel time`` for an ncu pass, which records no idle time);
    ``idle_known``: False where idle time was not seen (``idle_s`` is then null in ``--json``);
    ``tracer_s``: the most host time the tracer added (0 unknown), which the ceilings allow for.
    """

    window_s: float
    judged_s: float
    busy_s: float
    shares: tuple[Share, ...]
    remedies: tuple[RemedyEffect, ...]
    top: Share | None
    verdict: str
    line: str
    next_steps: tuple[str, ...] = ()
    kernels: tuple[KernelFigure, ...] = field(default=(), repr=False, compare=False)
    scope: str = "the judged window"
    idle_known: bool = True
    tracer_s: float = 0.0

    def judged_pct(self, s: Share) -> float:
        """``s`` as % (0-100) of what it is judged against: the judged window (:attr:`judged_s`), where the
        verdict, the fixes and the next steps weigh it; warm-up, which is not judged, of the whole window."""
        return judged_pct(s, self.judged_s)

    def share(self, cause: Cause | str) -> Share | None:
        c = Cause(cause)
        return next((s for s in self.shares if s.cause is c), None)

    def remedy(self, key: str) -> RemedyEffect | None:
        return next((r for r in self.remedies if r.key == key), None)

    @property
    def idle_s(self) -> float:
        return self.window_s - self.busy_s

    def to_dict(self) -> dict:
        return {
            "window_s": self.window_s, "judged_s": self.judged_s, "busy_s": self.busy_s,
            "idle_s": self.idle_s if self.idle_known else None,
            "top_cause": self.top.cause.value if self.top else None, "verdict": self.verdict, "line": self.line,
            "shares": [s.to_dict() for s in self.shares], "remedies": [r.to_dict() for r in self.remedies],
            "next_steps": list(self.next_steps), "tracer_s": self.tracer_s,
        }


def judged_pct(s: Share, judged_s: float) -> float:
    """``s`` as % (0-100) of the judged window ``judged_s`` (seconds); warm-up, which is not judged (and an
    empty judged window), as its % of the whole window (``s.pct``). One figure for the verdict's line,
    the next steps and the evidence printed: a share of a window that is mostly warm-up is small beside the
    whole window and large beside the judged one."""
    if s.cause is Cause.WARMUP or not judged_s > 0:
        return s.pct
    return 100.0 * s.seconds / judged_s


def amdahl(window_s: float, removed_s: float) -> float:
    """Amdahl's bound for removing ``removed_s`` of ``window_s`` seconds: ``W / (W - r)`` (``inf``
    when ``r >= W``).

    Raises:
        ValueError: ``window_s`` not positive, or ``removed_s`` negative.
    """
    if not window_s > 0:
        raise ValueError(f"the window must be positive, not {window_s} s")
    if removed_s < 0:
        raise ValueError(f"removed time must be >= 0, not {removed_s} s")
    rest = window_s - removed_s
    return math.inf if rest <= 0 else window_s / rest


def floor_after(gpu_left_s: float, host_left_s: float, tracer_s: float = 0.0) -> float:
    """The least time (seconds) a window can take once a fix leaves ``gpu_left_s`` of GPU time (busy
    time and queue latency) and ``host_left_s`` of host-side idle time: the GPU runs all of its own,
    the host all of its own, and each may run while the other works, so the larger of the two.
    ``tracer_s``: the tracer's host time, which a run without it does not spend (the host side less that).

    Raises:
        ValueError: a figure negative or not a number.
    """
    for what, x in (("GPU time", gpu_left_s), ("host time", host_left_s), ("the tracer's time", tracer_s)):
        if not x >= 0:
            raise ValueError(f"{what} must be >= 0, not {x} s")
    return max(gpu_left_s, host_left_s - tracer_s, 0.0)


def _left(secs: dict[Cause, float], busy: dict[Cause, float], removes: dict[Cause, float]) -> tuple[float, float]:
    """What a fix that ``removes`` these seconds leaves (seconds): GPU time (busy time, and queue latency:
    the GPU's own latency between queued work) and host time (the host-side idle causes, and unexplained
    idle time: no launch is linked to the work after it, most often a link the trace lost). Dependency waits
    are on neither side (what they waited for may move with the fix). A share both busy and idle (pageable
    copies: the host's staging, then the copy) loses its idle part first, as every remedy that touches it
    does (``pin_memory`` takes all the staging and shrinks the copies, ``more_loader_workers`` takes all of
    it): what is left of it is the copies' own time, on the GPU (counting each side as losing its part first
    left it on neither, an infinite ceiling where a pinned copy still runs)."""
    gpu = host = 0.0
    for c, s in secs.items():
        if c is Cause.WARMUP:  # outside the judged window, its GPU work (a compiler's autotuning) too
            continue
        r = removes.get(c, 0.0)
        b = min(busy.get(c, 0.0), s)
        idle_r = min(r, s - b)  # the idle part goes first, then the busy part
        gpu += max(b - (r - idle_r), 0.0)
        if c is Cause.QUEUE_LATENCY:
            gpu += max(s - b - idle_r, 0.0)
        elif c in HOST_SIDE or c is Cause.UNEXPLAINED:
            host += max(s - b - idle_r, 0.0)
    return gpu, host


def _seconds(w: WindowFigures) -> tuple[dict[Cause, float], dict[Cause, float]]:
    """Seconds per cause, adding up to the window (busy scaled down to fit, the rest unexplained),
    and the GPU busy seconds per cause among them."""
    for c, s in (*w.idle.items(), *w.busy.items()):
        if not (s >= 0 and math.isfinite(s)):
            raise ValueError(f"the time of {Cause(c).value} must be a finite number >= 0, not {s}")
    idle = {Cause(c): float(s) for c, s in w.idle.items()}
    busy: dict[Cause, float] = {}
    for c, s in w.busy.items():
        busy[Cause(c)] = busy.get(Cause(c), 0.0) + float(s)
    for k in w.kernels:
        busy[k.cause] = busy.get(k.cause, 0.0) + max(k.total_s, 0.0)
    room = max(w.window_s - sum(idle.values()), 0.0)
    total_busy = sum(busy.values())
    if total_busy > room * (1 + 1e-9) and total_busy > 0:
        busy = {c: s * room / total_busy for c, s in busy.items()}
        total_busy = room
    out = dict(idle)
    for c, s in busy.items():
        out[c] = out.get(c, 0.0) + s
    rest = w.window_s - sum(out.values())
    if rest > 1e-9 * w.window_s:
        out[Cause.UNEXPLAINED] = out.get(Cause.UNEXPLAINED, 0.0) + rest
    return {c: s for c, s in out.items() if s > 1e-12 * w.window_s}, busy  # float residue of a split is no share


def _level(kernels, cause: Cause) -> str | None:
    """The memory level holding the most time of a memory-bound share."""
    if cause is not Cause.MEMORY_BOUND:
        return None
    by: dict[str, float] = {}
    for k in kernels:
        if k.cause is cause and k.level and k.level != "compute":
            by[k.level] = by.get(k.level, 0.0) + k.total_s
    return max(by, key=by.get) if by else None


def diagnose(w: WindowFigures) -> Diagnosis:
    """The :class:`Diagnosis` of window ``w`` (see the module docstring).

    Raises:
        ValueError: a window that is not a positive number of seconds, or a negative or
            non-finite share.
    """
    if not (w.window_s > 0 and math.isfinite(w.window_s)):
        raise ValueError(f"the window must be a positive number of seconds, not {w.window_s}")
    secs, busy = _seconds(w)
    busy_s = sum(busy.values())
    shares = sorted((Share(c, s, 100.0 * s / w.window_s, _level(w.kernels, c),
                           tuple(w.evidence.get(c, ())) or _kernel_evidence(w, c), busy.get(c, 0.0))
                     for c, s in secs.items()), key=lambda x: -x.seconds)
    judged = w.window_s - secs.get(Cause.WARMUP, 0.0)
    if not judged > 0:
        return Diagnosis(w.window_s, judged, busy_s, tuple(shares), (), None, "warm-up",
                         "the window is all warm-up: nothing to judge", (next_step(Cause.WARMUP, w.framework),), tuple(w.kernels),
                         w.scope, w.idle_known)
    top = _top(shares, judged)
    remedies = []
    tracer = min(max(w.tracer_s, 0.0), judged) if math.isfinite(w.tracer_s) else 0.0
    for r in CATALOGUE:
        removes = {c: s for c, s in r.effect(w, secs).items() if s > 0}
        removed = min(sum(removes.values()), judged)
        if removed <= 0 or 100.0 * removed / judged < MIN_SHARE_PCT:
            continue
        floor = floor_after(*_left(secs, busy, removes), tracer)
        remedies.append(RemedyEffect(r.key, r.text_for(w), tuple(sorted(removes.items(), key=lambda kv: -kv[1])), removed,
                                     100.0 * removed / judged, math.inf if floor <= 0 else judged / floor, floor))
    first = (lambda r: top is not None and any(c is top.cause for c, _ in r.removes))
    remedies.sort(key=lambda r: (not first(r), -r.removed_s))
    nexts = tuple(next_step(s.cause, w.framework) for s in shares
                  if s.cause in NEXT_STEP and judged_pct(s, judged) >= MIN_SHARE_PCT)
    return Diagnosis(w.window_s, judged, busy_s, tuple(shares), tuple(remedies), top,
                     VERDICT[top.cause] if top else "nothing to judge", _line(top, judged, remedies, w.scope, w.framework),
                     nexts, tuple(w.kernels), w.scope, w.idle_known, tracer)


def _top(shares, judged: float) -> Share | None:
    """The share the verdict names (see the module docstring); None when no judged share holds
    :data:`MIN_SHARE_PCT` % of the judged window."""
    candidates = [s for s in shares if s.cause is not Cause.WARMUP and judged_pct(s, judged) >= MIN_SHARE_PCT]
    known = [s for s in candidates if s.cause is not Cause.KERNELS]
    unknown = next((s for s in candidates if s.cause is Cause.KERNELS), None)
    if known and (unknown is None or known[0].seconds >= unknown.seconds
                  or 100.0 * known[0].seconds / judged >= DIAGNOSED_MIN_PCT or 2.0 * unknown.seconds < judged):
        return known[0]
    return unknown


def _kernel_evidence(w: WindowFigures, cause: Cause) -> tuple[str, ...]:
    """The largest kernels of a kernel share, and for unmeasured kernels their time by kind."""
    ks = sorted((k for k in w.kernels if k.cause is cause), key=lambda k: -k.total_s)
    if not ks:
        return ()
    lines = []
    if cause is Cause.LAUNCH_SIZED:
        n = sum(k.launches for k in ks)
        lines.append(f"{fmt_counted(n, 'launch', 'launches')} of {fmt_counted(len(ks), 'kernel')} shorter than {fmt_time(LAUNCH_SIZED_S)} on average: "
                     "launch-sized, their fixed cost per launch is most of their time")
    if cause is Cause.KERNELS:
        by: dict[str, float] = {}
        for k in ks:
            by[k.kind] = by.get(k.kind, 0.0) + k.total_s
        total = sum(by.values())
        lines.append("by kind: " + ", ".join(f"{kind} {100.0 * s / total:.0f}%" for kind, s in
                                               sorted(by.items(), key=lambda kv: -kv[1])[:5]))
    top = []
    for k in ks[:3]:
        roof = f", {k.roof_pct:.0f}% of its {k.level or 'roof'}" if k.roof_pct is not None else ""
        name = k.name if len(k.name) <= 60 else k.name[:59] + "…"  # a cut name ends in an ellipsis
        # total_s is its share of the busy union: below launches x mean when it ran beside other kernels
        beside = ", beside other work" if k.total_s < 0.99 * k.launches * k.mean_s else ""
        top.append(f"{name} {fmt_time(k.total_s)} of the busy time ({fmt_counted(k.launches, 'launch', 'launches')}, "
                   f"mean {fmt_time(k.mean_s)}{beside}{roof})")
    lines.append("largest: " + "; ".join(top))
    return tuple(lines)


def _line(top: Share | None, judged: float, remedies, scope: str, framework: str | None = None) -> str:
    if top is None:
        return "nothing to judge: the window holds no time worth a verdict"
    pct = 100.0 * top.seconds / judged
    head = f"{VERDICT[top.cause]}: {top.label}, {pct:.0f}% of {scope}"
    fix = next((r for r in remedies if any(c is top.cause for c, _ in r.removes)), None)
    if fix is None:
        step = next_step(top.cause, framework).split(":")[0] if top.cause in NEXT_STEP else ""
        return head + ("; " + step[:1].lower() + step[1:] if step else "")
    bound = "all of it" if not math.isfinite(fix.ceiling_x) else f"at most {fmt_num(fix.ceiling_x)}x"
    return f"{head}; first fix: {fix.key.replace('_', ' ')} ({bound})"


__all__ = ["DIAGNOSED_MIN_PCT", "MIN_ACTIVITIES", "MIN_SHARE_PCT", "MIN_WINDOW_S", "Diagnosis", "RemedyEffect", "Share", "amdahl", "diagnose", "floor_after", "judged_pct",
           "enough_to_judge"]
