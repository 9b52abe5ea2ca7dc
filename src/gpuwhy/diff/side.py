"""One run as a comparison sees it: a per-step time budget, its kernels and operators, the remedies a
`gpuwhy run` document predicted, and the GPU it ran on. Plain data; the readers build it
(:mod:`gpuwhy.api.diff_sides`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping

from ..model.multi_gpu.spread import mad, median

#: Kinds of input, as ``Side.kind`` names them.
KINDS = ("run", "trace", "trace-document", "ncu", "check")
#: What a comparison's budgets cover: one step (the median step where each step's time is known,
#: else the window's mean), the whole window (a run without steps) or the kernels' summed time
#: (ncu exports: no idle time seen).
UNITS = ("step", "window", "kernel time")


@dataclass(frozen=True)
class KernelStat:
    """One kernel of a run, keyed by ``name`` and, where the source says, ``grid`` and ``block``
    ((x, y, z) each). ``total_s``: its time in the run's budget window; ``launches`` there;
    ``kind``: its family from the name; ``regime``, ``roof_pct`` (0-100) and ``level``: as
    measured (None: not measured)."""

    name: str
    total_s: float
    launches: int
    grid: tuple[int, int, int] | None = None
    block: tuple[int, int, int] | None = None
    kind: str = "other"
    regime: str | None = None
    roof_pct: float | None = None
    level: str | None = None


@dataclass(frozen=True)
class Prediction:
    """A remedy a `gpuwhy run` document offered: its ``key``, ``text``, ``ceiling_x`` (the
    "at most"; None: it would remove all of the window) and the causes it ``removes``."""

    key: str
    text: str
    ceiling_x: float | None
    removes: tuple[str, ...] = ()


@dataclass(frozen=True)
class DeviceFacts:
    """The GPU a run ran on, as far as its source says (None: not recorded): its ``name``, the
    ``driver`` version, the median SM clock of its kernels (``sm_clock_mhz``) and its
    ``power_limit_w``."""

    name: str | None = None
    driver: str | None = None
    sm_clock_mhz: float | None = None
    power_limit_w: float | None = None


@dataclass(frozen=True)
class FigureValue:
    """One figure of a check/bench document or profile: its ``value`` (unit in ``unit``), which way
    is better, and a ``label``."""

    value: float
    higher_is_better: bool
    label: str
    unit: str


@dataclass(frozen=True)
class Side:
    """One run of a comparison.

    ``source``: the file; ``kind``: one of :data:`KINDS`; ``shares``: seconds per cause over the
    run's judged window (warm-up left out), adding up to ``window_s``; ``steps``: the steps that
    window holds (None: none marked); ``step_times_s``: each step's wall time where the source
    has them (for the median step and the runs' own spread); ``kernels`` (each ``total_s`` over
    the window) and ``operators`` (name -> seconds over the window); ``kernel_time``: the window
    is the kernels' summed time (an ncu export: no idle time seen); ``predictions``: the remedies
    of a `gpuwhy run` document; ``device``; ``program``: the script or module run (None: not
    recorded); ``figures``: a check/bench document's figures (no budget); ``notes``: what the
    reader had to say.
    """

    source: str
    kind: str
    shares: Mapping[str, float] = field(default_factory=dict)
    steps: int | None = None
    step_times_s: tuple[float, ...] = ()
    kernels: tuple[KernelStat, ...] = ()
    operators: Mapping[str, float] = field(default_factory=dict)
    kernel_time: bool = False
    predictions: tuple[Prediction, ...] = ()
    device: DeviceFacts = field(default_factory=DeviceFacts)
    program: str | None = None
    figures: Mapping[str, FigureValue] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def window_s(self) -> float:
        """The judged window (s): the sum of the shares."""
        return float(sum(self.shares.values()))

    @property
    def has_budget(self) -> bool:
        """Whether the side holds a time budget (a check/bench document holds figures instead)."""
        return self.kind != "check"

    @property
    def step_s(self) -> float | None:
        """One step (s): the median of ``step_times_s`` where known, else the window's mean step
        (``window_s / steps``); None without steps."""
        if self.step_times_s:
            return median(self.step_times_s)
        return self.window_s / self.steps if self.steps else None

    @property
    def spread_s(self) -> float:
        """The runs' own spread of one step (s): the MAD of ``step_times_s`` (0 where not known)."""
        if len(self.step_times_s) < 2:
            return 0.0
        return mad(self.step_times_s)


def per_unit(shares: Mapping[str, float], step_s: float) -> dict[str, float]:
    """``shares`` (seconds per cause, summing to some window) scaled so they sum to ``step_s``:
    the budget's proportions carried over to one step.

    Raises:
        ValueError: a negative or non-finite share, or ``step_s`` negative; shares summing to 0
            with ``step_s`` > 0 (nothing to scale).
    """
    for c, s in shares.items():
        if not (s >= 0 and math.isfinite(s)):
            raise ValueError(f"the share {c} must be a finite number >= 0, not {s}")
    if not (step_s >= 0 and math.isfinite(step_s)):
        raise ValueError(f"the step time must be a finite number >= 0, not {step_s}")
    total = sum(shares.values())
    if total <= 0:
        if step_s > 0:
            raise ValueError("the shares add up to 0 s: nothing to scale to the step")
        return {}
    return {c: s * step_s / total for c, s in shares.items() if s > 0}


__all__ = ["KINDS", "UNITS", "DeviceFacts", "FigureValue", "KernelStat", "Prediction", "Side", "per_unit"]
