"""Two runs into one :class:`DiffResult`: what differs about where they ran, the change of step time
by cause, the kernels and operators that moved, and the first run's predictions scored.

The unit both budgets are put in: one **step** when both runs mark steps (the median step where
each step's time is known, else the window's mean step; each budget's proportions carried over
to it), else the whole **window** (a note says that runs of different lengths do not compare so),
and the **kernel time** for two ncu exports (no idle time seen). Kernels and operators are per
step (their window time over the steps) or per window likewise.

Refused (:class:`~gpuwhy.errors.UsageError`, one line each): a check/bench document against a run
with a time budget; an ncu export against a timeline (an ncu pass sees no idle time); two runs
that look like unrelated programs (:func:`unrelated`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import UsageError
from ..units import fmt_num, fmt_pct, fmt_time
from .align import KernelMove, OperatorMove, align_kernels, align_operators, overlap
from .budget import Split, split_change
from .predict import Score, applied_remedy, score
from .side import Side, per_unit

#: Below this share (0-1) of time in names both runs have, two runs share too little to be one program.
RELATED_MIN = 0.10
#: SM clocks this far apart (%) are a difference worth saying first.
CLOCK_DIFF_PCT = 5.0


@dataclass(frozen=True)
class FigureMove:
    """One figure of two check/bench documents: before, after, ``change_pct`` and whether it got ``worse``."""

    key: str
    label: str
    unit: str
    before: float
    after: float
    change_pct: float | None
    worse_pct: float | None

    def to_dict(self) -> dict:
        return {"label": self.label, "unit": self.unit, "before": self.before, "after": self.after,
                "change_pct": self.change_pct, "worse_pct": self.worse_pct}


@dataclass(frozen=True)
class DiffResult:
    """What changed between ``before`` and ``after`` (see the module docstring).

    ``unit``: what the budgets cover; ``warnings``: differences of where they ran, said first;
    ``split``: the change by cause (None for check/bench documents); ``kernels``, ``operators``:
    paired, largest move first; ``scores``: the before run's predictions; ``figures``: check/bench
    figures; ``spread_s``: the runs' own spread of one step (the two MADs added); ``line``: the
    one-line verdict; ``fail_if_slower_pct`` and ``failed``: the CI threshold and its outcome.
    """

    before: Side
    after: Side
    unit: str
    warnings: tuple[str, ...]
    notes: tuple[str, ...]
    split: Split | None
    kernels: tuple[KernelMove, ...]
    operators: tuple[OperatorMove, ...]
    scores: tuple[Score, ...]
    figures: tuple[FigureMove, ...]
    spread_s: float
    line: str
    fail_if_slower_pct: float | None = None
    failed: bool = False

    @property
    def speedup_x(self) -> float | None:
        """before / after (above 1: the second run is faster); None without a budget."""
        s = self.split
        return s.before_s / s.after_s if s is not None and s.after_s > 0 else None

    @property
    def change_pct(self) -> float | None:
        """(after - before) / before x 100; None without a budget."""
        s = self.split
        return 100.0 * s.delta_s / s.before_s if s is not None and s.before_s > 0 else None

    @property
    def beyond_spread(self) -> bool:
        """Whether the change is larger than the runs' own spread."""
        return self.split is not None and abs(self.split.delta_s) > self.spread_s

    def fail_line(self) -> str:
        """Why ``--fail-if-slower`` failed, in one line naming the top contributor ("" when it did not)."""
        if not self.failed:
            return ""
        pct = fmt_num(self.fail_if_slower_pct)
        if self.split is None:
            worst = max(self.figures, key=lambda f: f.worse_pct if f.worse_pct is not None else -math.inf)
            return (f"--fail-if-slower {pct}: {worst.label} got {fmt_pct(worst.worse_pct, 1)} worse "
                    f"({fmt_num(worst.before)} -> {fmt_num(worst.after)} {worst.unit})")
        top = self.split.top
        why = f"; top contributor: {top.label}, {'+' if top.delta_s > 0 else '-'}{fmt_time(abs(top.delta_s))}" \
            if top is not None else ""
        spread = (f"beyond the runs' spread of {fmt_time(self.spread_s)}" if self.spread_s > 0 else
                  "the runs record no per-step times: no spread known")
        return (f"--fail-if-slower {pct}: after is {fmt_pct(self.change_pct, 1)} slower than before "
                f"({fmt_time(self.split.before_s)} -> {fmt_time(self.split.after_s)}, {spread}){why}")

    def to_dict(self) -> dict:
        def side(s: Side) -> dict:
            d = s.device
            return {"source": s.source, "kind": s.kind, "program": s.program, "steps": s.steps,
                    "window_s": s.window_s if s.has_budget else None, "step_s": s.step_s,
                    "spread_s": s.spread_s if len(s.step_times_s) > 1 else None,
                    "gpu": d.name, "driver": d.driver, "sm_clock_mhz": d.sm_clock_mhz, "power_limit_w": d.power_limit_w}

        sp = self.split
        return {
            "before": side(self.before), "after": side(self.after), "unit": self.unit,
            "warnings": list(self.warnings), "notes": list(self.notes), "line": self.line,
            "change": None if sp is None else {
                "before_s": sp.before_s, "after_s": sp.after_s, "delta_s": sp.delta_s, "change_pct": self.change_pct,
                "speedup_x": self.speedup_x, "spread_s": self.spread_s, "beyond_spread": self.beyond_spread,
                "top_contributor": sp.top.cause if sp.top else None,
                "named": [c.cause for c in sp.named], "explained_pct": sp.explained_pct},
            "contributions": [] if sp is None else [c.to_dict() for c in sp.contributions],
            "kernels": [k.to_dict() for k in self.kernels],
            "operators": [o.to_dict() for o in self.operators],
            "predictions": [s.to_dict() for s in self.scores],
            "figures": {f.key: f.to_dict() for f in self.figures},
            "fail_if_slower_pct": self.fail_if_slower_pct, "failed": self.failed,
        }


def device_warnings(a: Side, b: Side) -> list[str]:
    """What differs about where the two ran (GPU, driver, SM clock, power limit), in words."""
    da, db = a.device, b.device
    out = []
    if da.name and db.name and da.name != db.name:
        out.append(f"DIFFERENT GPUs: before ran on {da.name}, after on {db.name}: the change mixes the GPU with "
                   "what you changed (compared anyway)")
    if da.driver and db.driver and da.driver != db.driver:
        out.append(f"different drivers: before {da.driver}, after {db.driver}")
    ca, cb = da.sm_clock_mhz, db.sm_clock_mhz
    if ca and cb and abs(cb - ca) / ca * 100.0 > CLOCK_DIFF_PCT:
        out.append(f"SM clocks differ: before {fmt_num(ca)} MHz, after {fmt_num(cb)} MHz "
                   f"({fmt_pct(100.0 * (cb - ca) / ca, 0)}): a clock cap or power limit moves every kernel")
    pa, pb = da.power_limit_w, db.power_limit_w
    if pa and pb and pa != pb:
        out.append(f"power limits differ: before {fmt_num(pa)} W, after {fmt_num(pb)} W")
    return out


def _kinds(s: Side) -> dict[str, float]:
    out: dict[str, float] = {}
    for k in s.kernels:
        out[k.kind] = out.get(k.kind, 0.0) + k.total_s
    return out


def unrelated(a: Side, b: Side) -> str | None:
    """Why ``a`` and ``b`` look like two unrelated programs (None: they may be one program).

    Two runs of named programs are unrelated when the script differs and under
    :data:`RELATED_MIN` of the kernel time is in kernels both ran; without names, when under
    :data:`RELATED_MIN` of the operator time is in operators both ran (traces), else when they
    share no kernel name and under half their kernel time is in kinds of kernel both ran.
    """
    names_a = {k.name: k.total_s for k in a.kernels}
    names_b = {k.name: k.total_s for k in b.kernels}
    kern = overlap(names_a, names_b)
    if a.program and b.program:
        if a.program != b.program and (kern is None or kern < RELATED_MIN):
            return (f"they ran different programs ({a.program} and {b.program}) with "
                    f"{'no' if not kern else fmt_pct(100.0 * kern, 0) + ' of the'} kernel time in common")
        return None
    ops = overlap(a.operators, b.operators)
    if ops is not None:
        if ops < RELATED_MIN:
            return f"only {fmt_pct(100.0 * ops, 0)} of their operator time is in operators both ran"
        return None
    kinds = overlap(_kinds(a), _kinds(b))
    if kern is not None and kern == 0 and kinds is not None and kinds < 0.5:
        return f"they share no kernel, and only {fmt_pct(100.0 * kinds, 0)} of their kernel time is of a kind both ran"
    return None


def _check_kinds(a: Side, b: Side) -> None:
    if a.has_budget != b.has_budget:
        c, o = (a, b) if not a.has_budget else (b, a)
        raise UsageError(f"{c.source} is a check/bench document (figures) and {o.source} a run with a time budget: "
                         "diff compares two of a kind")
    if a.has_budget and a.kernel_time != b.kernel_time:
        n, o = (a, b) if a.kernel_time else (b, a)
        what = "an ncu export" if n.kind == "ncu" else "a gpuwhy run document of ncu alone"
        raise UsageError(f"{n.source} is {what} (kernel time, no idle time seen) and {o.source} a timeline: "
                         "they share no time budget; diff two ncu exports, or two traces / gpuwhy run documents")


def _unit(a: Side, b: Side) -> tuple[str, float, float, list[str]]:
    """The unit, each run's factor from its window to the unit, and notes."""
    if a.kernel_time:
        return "kernel time", 1.0, 1.0, ["ncu exports hold kernel time only (kernels run one at a time): no idle "
                                         "time is compared; runs of different lengths do not compare"]
    if a.steps and b.steps:
        notes = [f"per step: {_step_word(s)}" for s in (a, b)]
        return "step", 1.0 / a.steps, 1.0 / b.steps, notes
    which = " and ".join(s.source for s in (a, b) if not s.steps)
    return "window", 1.0, 1.0, [f"{which} marks no steps: the whole windows are compared, which only means "
                                "something for runs of the same length (mark steps with ProfilerStep / prof.step())"]


def _step_word(s: Side) -> str:
    if len(s.step_times_s) > 1:
        return (f"{s.source}: the median of {len(s.step_times_s)} steps, {fmt_time(s.step_s)} "
                f"(spread {fmt_time(s.spread_s)})")
    return f"{s.source}: the mean of {s.steps} steps, {fmt_time(s.step_s)} (no per-step times: no spread known)"


def _figures(a: Side, b: Side) -> tuple[FigureMove, ...]:
    out = []
    for key in [k for k in a.figures if k in b.figures]:
        fa, fb = a.figures[key], b.figures[key]
        change = 100.0 * (fb.value - fa.value) / fa.value if fa.value else None
        worse = None if change is None else (-change if fa.higher_is_better else change)
        out.append(FigureMove(key, fa.label, fa.unit, fa.value, fb.value, change, worse))
    return tuple(out)


def diff(a: Side, b: Side, *, fail_if_slower_pct: float | None = None, remedy: str | None = None) -> DiffResult:
    """What changed from run ``a`` (before) to run ``b`` (after).

    ``fail_if_slower_pct``: the change fails when ``b`` is more than that % slower than ``a``
    beyond the runs' own spread (check/bench documents: when a figure got worse by more than
    that %). ``remedy``: the remedy of ``a`` that was applied (default: see
    :func:`~.predict.applied_remedy`).

    Raises:
        UsageError: two inputs of kinds that do not compare, two unrelated programs, a remedy
            ``a`` did not offer, a negative threshold.
    """
    if fail_if_slower_pct is not None and not (fail_if_slower_pct >= 0 and math.isfinite(fail_if_slower_pct)):
        raise UsageError(f"--fail-if-slower must be a percentage >= 0, not {fail_if_slower_pct}")
    _check_kinds(a, b)
    warnings = device_warnings(a, b)
    why = unrelated(a, b)
    if why is not None:
        raise UsageError(f"{a.source} and {b.source} look like two unrelated programs ({why}): diff compares two "
                         "runs of one program, before and after a change")
    if not a.has_budget:
        return _diff_figures(a, b, warnings, fail_if_slower_pct)
    unit, fa, fb, notes = _unit(a, b)
    before = per_unit(a.shares, a.step_s) if unit == "step" else dict(a.shares)
    after = per_unit(b.shares, b.step_s) if unit == "step" else dict(b.shares)
    split = split_change(before, after)
    spread = a.spread_s + b.spread_s if unit == "step" else 0.0
    two_gpus = bool(a.device.name and b.device.name and a.device.name != b.device.name)
    kernels = align_kernels([_scaled(k, fa) for k in a.kernels], [_scaled(k, fb) for k in b.kernels], not two_gpus)
    if two_gpus:
        notes.append("kernels are paired by name alone: on two GPUs, libraries pick their launch shapes by the GPU")
    ops = align_operators({n: s * fa for n, s in a.operators.items()}, {n: s * fb for n, s in b.operators.items()})
    scores: tuple[Score, ...] = ()
    if a.predictions and split.after_s > 0 and split.before_s > 0:
        dropped = split.top.cause if split.top is not None and split.delta_s < 0 else None
        try:
            applied = applied_remedy(a.predictions, dropped, remedy)
        except ValueError as exc:
            raise UsageError(f"--remedy: {exc}") from None
        scores = score(a.predictions, split.before_s, split.after_s, applied,
                       a.spread_s if unit == "step" else 0.0, b.spread_s if unit == "step" else 0.0)
    elif remedy is not None:
        raise UsageError(f"--remedy {remedy}: {a.source} holds no predictions (only a gpuwhy run --json document "
                         "does)")
    pct = 100.0 * split.delta_s / split.before_s if split.before_s > 0 else None
    failed = bool(fail_if_slower_pct is not None and pct is not None and pct > fail_if_slower_pct
                  and split.delta_s > spread)
    line = verdict_line(split, unit, spread, warnings)
    notes = list(dict.fromkeys([*notes, *a.notes, *b.notes]))
    return DiffResult(a, b, unit, tuple(warnings), tuple(notes), split, kernels, ops, scores, (),
                      spread, line, fail_if_slower_pct, failed)


def _scaled(k, f: float):
    from dataclasses import replace

    return replace(k, total_s=k.total_s * f, launches=k.launches * f)


def _diff_figures(a: Side, b: Side, warnings: list[str], pct: float | None) -> DiffResult:
    figs = _figures(a, b)
    if not figs:
        raise UsageError(f"{a.source} and {b.source} hold no figure in common to compare")
    worst = max(figs, key=lambda f: f.worse_pct if f.worse_pct is not None else -math.inf)
    failed = bool(pct is not None and worst.worse_pct is not None and worst.worse_pct > pct)
    first = "on a different GPU, " if any(w.startswith("DIFFERENT GPUs") for w in warnings) else ""
    if worst.worse_pct is not None and worst.worse_pct > 0:
        line = (f"{first}{len(figs)} figures compared; the most worsened: {worst.label}, {fmt_num(worst.before)} -> "
                f"{fmt_num(worst.after)} {worst.unit} ({fmt_pct(worst.worse_pct, 1)} worse)")
    else:
        line = f"{first}{len(figs)} figures compared; none got worse"
    notes = tuple(dict.fromkeys(("check/bench documents hold figures, not a time budget: each figure is compared "
                                 "on its own", *a.notes, *b.notes)))
    return DiffResult(a, b, "figures", tuple(warnings), notes, None, (), (), (), figs, 0.0, line, pct, failed)


#: A change of the total under this % of the run before, with a share that moved more than twice as much, is
#: told as the shares that moved, not as the top contributor's share of the change.
MOVED_PCT = 1.0


def verdict_line(split: Split, unit: str, spread_s: float, warnings=()) -> str:
    """The one-line verdict: how much faster or slower per ``unit``, and the top contributor (or, where the
    total hardly moved and its shares did, the two largest moves: :data:`MOVED_PCT`)."""
    per = {"step": "per step", "window": "over the window", "kernel time": "in kernel time"}[unit]
    b, a, d = split.before_s, split.after_s, split.delta_s
    first = "on a different GPU, " if any(w.startswith("DIFFERENT GPUs") for w in warnings) else ""
    times = f"{fmt_time(b)} -> {fmt_time(a)}"
    if d == 0 or abs(d) <= spread_s:
        return (f"{first}no change beyond the runs' own spread {per} ({times}, spread {fmt_time(spread_s)})"
                if spread_s > 0 else f"{first}no change {per} ({times})")
    if d < 0 and a > 0 and b / a < 1.1:  # under 1.1x a ratio reads as "1x": the time saved, in %
        pct = -100.0 * d / b
        head = f"{first}after is {fmt_pct(pct, 0 if pct >= 10 else 1)} faster {per} ({times})"
    elif d < 0:
        head = f"{first}after is {fmt_num(b / a) if a > 0 else 'inf'}x faster {per} ({times})"
    else:
        pct = 100.0 * d / b if b > 0 else math.inf
        head = f"{first}after is {fmt_pct(pct, 0 if pct >= 10 else 1)} slower {per} ({times})"
    top = split.top
    if top is None:
        return head
    sign = "-" if top.delta_s < 0 else "+"
    if abs(d) < MOVED_PCT / 100.0 * b and abs(top.delta_s) > 2.0 * abs(d):
        # the total hardly moved but its shares did (two windows of one length cut from two captures):
        # a share of the change would read 3,000%; name the largest moves in time instead
        moves = "; ".join(f"{c.label} {'-' if c.delta_s < 0 else '+'}{fmt_time(abs(c.delta_s))}"
                          for c in split.contributions[:2] if c.delta_s)
        return f"{head}; the time moved between shares: {moves}"
    return (f"{head}: top contributor {top.label}, {sign}{fmt_time(abs(top.delta_s))} "
            f"({fmt_pct(top.change_pct, 0)} of the change)")


__all__ = ["CLOCK_DIFF_PCT", "MOVED_PCT", "RELATED_MIN", "DiffResult", "FigureMove", "device_warnings", "diff", "unrelated",
           "verdict_line"]
