"""A short Nsight Compute pass over the top kernels of a trace, and its launches matched back to them.

`gpuwhy run --kernels` first records a torch.profiler trace, then runs the
program again under ncu to count the FLOPs and bytes of its top kernels. Two
problems, solved here with pure functions:

- **Which launches to profile** (:func:`plan_pass`). ncu filters by function
  name (``--kernel-name``, matched on the unqualified function name: CUPTI and
  ncu spell the rest of a kernel name differently, see
  :func:`~gpuwhy.importers.kernel_names.function_name`) and counts the launches
  that match (``--launch-skip S -c N``). From the trace's launches in launch
  order, the plan takes the launches whose function name is one of the
  targets', leaves out those before the window (the warm-up is not judged) and
  picks the shortest stretch of the rest that holds ``per_kernel`` launches of
  every target (or all it has in the window); when that is longer than ``cap``
  launches, one of each; when that is too, the first ``cap`` of the window,
  and a target they leave out is listed as not covered.
- **Which kernel each profiled launch is** (:func:`match_launches`). The
  program runs the same launches in the same order under ncu, so ncu's i-th
  launch is the plan's i-th; that is trusted only where the function name,
  grid and block agree. Where they do not (the program took another path), a
  launch is matched by (function name, grid, block) when exactly one of the
  trace's kernels has that launch shape, else it is left unmatched.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence

from ..kernel_names import function_name
from ..timeline.launches import Dim3, KernelLaunch

#: Launches profiled per kernel by default: a few, as the FLOP and byte counts of one shape barely vary.
PER_KERNEL = 2
#: The most launches one pass profiles: each costs ncu about 18 replays of the kernel with its
#: metric list (on the H100, 100 launches of a GPT-2 decode step took about 50 s).
PASS_CAP = 60


@dataclass(frozen=True)
class PassPlan:
    """What to ask ncu for: the function names (``functions``, and ``kernel_name`` as ncu's
    ``--kernel-name`` takes it), ``skip`` matching launches then ``count`` of them; ``expected`` the
    trace's launches those should be, in order; ``covered`` per target full name, its launches in
    the plan; ``not_covered`` the targets the cap left out."""

    functions: tuple[str, ...]
    kernel_name: str
    skip: int
    count: int
    expected: tuple[KernelLaunch, ...]
    covered: dict[str, int] = field(default_factory=dict)
    not_covered: tuple[str, ...] = ()


def kernel_name_filter(functions: Iterable[str]) -> str:
    """ncu's ``--kernel-name`` for any of ``functions``: ``regex:(^|:)(a|b)$`` (a namespace before the
    name is allowed, regex characters in a name are escaped).

    Raises:
        ValueError: no function name.
    """
    import re

    names = [f for f in dict.fromkeys(functions) if f]
    if not names:
        raise ValueError("no kernel function name to filter on")
    return "regex:(^|:)(" + "|".join(re.escape(n) for n in names) + ")$"


def plan_pass(launches: Sequence[KernelLaunch], targets: Sequence[str], window_start_us: float,
              per_kernel: int = PER_KERNEL, cap: int = PASS_CAP) -> PassPlan | None:
    """The launches to profile for ``targets`` (full kernel names as the trace spells them), from
    ``launches`` (the whole trace's, in launch order: :func:`~gpuwhy.importers.timeline.launches.kernel_launches`).

    Returns None when no target is launched at or after ``window_start_us``.

    Raises:
        ValueError: ``per_kernel`` or ``cap`` below 1.
    """
    if per_kernel < 1 or cap < 1:
        raise ValueError(f"per_kernel ({per_kernel}) and cap ({cap}) must be at least 1")
    wanted = [t for t in dict.fromkeys(targets) if function_name(t)]
    fn = {t: function_name(t) for t in wanted}
    functions = tuple(dict.fromkeys(fn[t] for t in wanted))
    base_of: dict[str, str] = {}
    matched = []
    for la in launches:
        b = base_of.get(la.name)
        if b is None:
            b = base_of[la.name] = function_name(la.name)
        if b in functions:
            matched.append(la)
    start = next((i for i, la in enumerate(matched) if la.ts_us >= window_start_us), None)
    if start is None:
        return None
    rest = matched[start:]
    in_window: dict[str, int] = {t: 0 for t in wanted}
    for la in rest:
        if la.name in in_window:
            in_window[la.name] += 1
    need = {t: min(per_kernel, n) for t, n in in_window.items() if n > 0}
    if not need:
        return None
    lo, hi = _shortest_cover(rest, need)
    if hi - lo > cap:  # too long: one launch of each target is enough to count its FLOPs and bytes
        lo, hi = _shortest_cover(rest, {t: 1 for t in need})
    if hi - lo > cap:  # still too long: the first ``cap``, up to its last target launch
        lo, hi = 0, min(cap, len(rest))
        hi = 1 + max((i for i, la in enumerate(rest[:hi]) if la.name in need), default=hi - 1)
    have = {t: 0 for t in need}
    for la in rest[lo:hi]:
        if la.name in have:
            have[la.name] += 1
    return PassPlan(functions, kernel_name_filter(functions), start + lo, hi - lo, tuple(rest[lo:hi]),
                    {t: n for t, n in have.items()}, tuple(t for t, n in have.items() if n == 0))


def _shortest_cover(seq: Sequence[KernelLaunch], need: dict[str, int]) -> tuple[int, int]:
    """``(lo, hi)``: the shortest stretch ``seq[lo:hi]`` holding ``need[name]`` launches of each name
    (the earliest of equal length; two pointers, one pass); ``(0, len(seq))`` when none does."""
    have = {t: 0 for t in need}
    short = sum(1 for t in need if need[t] > 0)
    best = (0, len(seq))
    found = False
    lo = 0
    for hi, la in enumerate(seq, start=1):
        if la.name in have:
            have[la.name] += 1
            if have[la.name] == need[la.name]:
                short -= 1
        while short == 0:
            if not found or hi - lo < best[1] - best[0]:
                best, found = (lo, hi), True
            out = seq[lo].name
            lo += 1
            if out in have:
                have[out] -= 1
                if have[out] == need[out] - 1:
                    short += 1
    return best


@dataclass(frozen=True)
class LaunchMatch:
    """ncu's launches matched to trace kernels: ``names`` maps an ncu launch id to the trace's full
    kernel name; ``by_order``/``by_shape``/``unmatched`` count how each launch was placed."""

    names: dict[str, str]
    by_order: int
    by_shape: int
    unmatched: int

    @property
    def how(self) -> str:
        parts = [f"{self.by_order} by launch order (name, grid and block agree)"]
        if self.by_shape:
            parts.append(f"{self.by_shape} by name, grid and block")
        if self.unmatched:
            parts.append(f"{self.unmatched} not matched")
        return ", ".join(parts)


def match_launches(plan: PassPlan, profiled: Sequence[tuple[str, str, Dim3 | None, Dim3 | None]],
                   launches: Sequence[KernelLaunch] = ()) -> LaunchMatch:
    """Place ncu's launches (``(id, kernel name, grid, block)`` in the order ncu profiled them) on the
    trace's kernels: the i-th on the plan's i-th launch when function name, grid and block agree, else
    on the one trace kernel with that function name, grid and block (from ``launches``, default the
    plan's), else nowhere."""
    shapes: dict[tuple, set[str]] = {}
    for la in (launches or plan.expected):
        shapes.setdefault((function_name(la.name), la.grid, la.block), set()).add(la.name)
    names: dict[str, str] = {}
    by_order = by_shape = unmatched = 0
    for i, (lid, name, grid, block) in enumerate(profiled):
        key = (function_name(name), grid, block)
        exp = plan.expected[i] if i < len(plan.expected) else None
        if exp is not None and (function_name(exp.name), exp.grid, exp.block) == key:
            names[lid] = exp.name
            by_order += 1
            continue
        cands = shapes.get(key, set())
        if len(cands) == 1:
            names[lid] = next(iter(cands))
            by_shape += 1
        else:
            unmatched += 1
    return LaunchMatch(names, by_order, by_shape, unmatched)


__all__ = ["LaunchMatch", "PASS_CAP", "PER_KERNEL", "PassPlan", "kernel_name_filter", "match_launches", "plan_pass"]
