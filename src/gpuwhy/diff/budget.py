"""The change of step time split into the budget's shares: signed, summing to the change.

Each run's budget (seconds per cause within one step, :attr:`~.side.Side.shares`) is set against
the other's cause by cause: ``delta = after - before`` per cause, and since each run's shares add
up to its step time, the deltas add up to the change of step time exactly (a cause in only one
run counts 0 s in the other). The **top contributor** is the cause that moved most in the
direction of the change (the largest drop of a faster run, the largest rise of a slower one);
the **named contributors** are those in that direction holding at least
:data:`NAMED_MIN_PCT` % of the change, at most :data:`NAMED_MAX`, and ``explained_pct`` is the
share of the change they hold (over 100% where causes moving the other way offset some).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

from ..verdict.causes import Cause, label

#: A contributor in the direction of the change is named when it holds at least this share (%) of it.
NAMED_MIN_PCT = 5.0
#: At most this many contributors are named.
NAMED_MAX = 3


@dataclass(frozen=True)
class Contribution:
    """One cause's part of the change: seconds per step ``before_s`` and ``after_s``, ``delta_s``
    (after - before), and ``change_pct``: delta as % of the whole change (None when it is 0)."""

    cause: str
    before_s: float
    after_s: float
    delta_s: float
    change_pct: float | None

    @property
    def label(self) -> str:
        """The cause in words (a cause gpuwhy does not know is its own key)."""
        try:
            return label(Cause(self.cause))
        except ValueError:
            return self.cause

    def to_dict(self) -> dict:
        return {"cause": self.cause, "label": self.label, "before_s": self.before_s, "after_s": self.after_s,
                "delta_s": self.delta_s, "change_pct": self.change_pct}


@dataclass(frozen=True)
class Split:
    """The change of step time (``delta_s`` = ``after_s`` - ``before_s``) by cause, largest move
    first; ``top``: the top contributor (None when nothing moved); ``named``: the named
    contributors; ``explained_pct``: their share of the change (None when it is 0)."""

    before_s: float
    after_s: float
    delta_s: float
    contributions: tuple[Contribution, ...]
    top: Contribution | None
    named: tuple[Contribution, ...]
    explained_pct: float | None


def split_change(before: Mapping[str, float], after: Mapping[str, float]) -> Split:
    """:class:`Split` of two budgets (seconds per cause, each adding up to its run's step time).

    Raises:
        ValueError: a negative or non-finite share.
    """
    for side in (before, after):
        for c, s in side.items():
            if not (s >= 0 and math.isfinite(s)):
                raise ValueError(f"the share {c} must be a finite number >= 0, not {s}")
    b_s, a_s = float(sum(before.values())), float(sum(after.values()))
    delta = a_s - b_s
    causes = list(dict.fromkeys([*before, *after]))
    rows = []
    for c in causes:
        d = after.get(c, 0.0) - before.get(c, 0.0)
        rows.append(Contribution(c, before.get(c, 0.0), after.get(c, 0.0), d, 100.0 * d / delta if delta else None))
    rows.sort(key=lambda r: (-abs(r.delta_s), r.cause))
    sign = 1.0 if delta > 0 else -1.0
    same = [r for r in rows if r.delta_s * sign > 0] if delta else []
    top = same[0] if same else None
    named = tuple(r for r in same if r.change_pct is not None and r.change_pct >= NAMED_MIN_PCT)[:NAMED_MAX]
    explained = 100.0 * sum(r.delta_s for r in named) / delta if delta else None
    return Split(b_s, a_s, delta, tuple(rows), top, named, explained)


__all__ = ["NAMED_MAX", "NAMED_MIN_PCT", "Contribution", "Split", "split_change"]
