"""A `gpuwhy run` document's predictions scored against what the second run achieved.

The document before the change offers remedies, each with a ceiling: the most the
judged window can speed up with that fix (an "at most" the fix cannot beat). The run after the
change achieved ``before / after`` on its step time. The remedy taken to be the one **applied**
is the one the user names, else the first the document offers (its order: the top cause's
first) among those that remove the cause that dropped most (the top contributor of a faster
run); none when the run got slower and none was named.

For the applied remedy, ``of_ceiling_pct`` = achieved / ceiling x 100 ("predicted at most 3.4x;
achieved 2.9x: 85% of the ceiling"), and the prediction is **wrong** when even the least
favourable reading of the runs' own spread achieved more than the ceiling:
``(before - spread_before) / (after + spread_after) > ceiling`` (with no spread known: the
achieved figure itself).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from .side import Prediction


@dataclass(frozen=True)
class Score:
    """One remedy of the run before: ``ceiling_x`` (None: no bound), ``achieved_x`` (the whole
    change), ``of_ceiling_pct``, whether it is the one ``applied`` and, for that one, whether the
    prediction was ``wrong`` (achieved more than the ceiling beyond the spread)."""

    key: str
    text: str
    ceiling_x: float | None
    achieved_x: float
    of_ceiling_pct: float | None
    applied: bool
    wrong: bool

    def to_dict(self) -> dict:
        return {"remedy": self.key, "text": self.text, "ceiling_x": self.ceiling_x, "achieved_x": self.achieved_x,
                "of_ceiling_pct": self.of_ceiling_pct, "applied": self.applied, "wrong": self.wrong}


def applied_remedy(predictions: Sequence[Prediction], dropped_cause: str | None, named: str | None = None
                   ) -> str | None:
    """The key of the remedy taken as applied (see the module docstring).

    Raises:
        ValueError: ``named`` is not among ``predictions`` (the message lists them).
    """
    if named is not None:
        keys = [p.key for p in predictions]
        if named not in keys:
            raise ValueError(f"remedy {named!r} is not one the run before offered "
                             f"({', '.join(keys) if keys else 'it offered none'})")
        return named
    if dropped_cause is None:
        return None
    return next((p.key for p in predictions if dropped_cause in p.removes), None)


def score(predictions: Sequence[Prediction], before_s: float, after_s: float, applied: str | None,
          spread_before_s: float = 0.0, spread_after_s: float = 0.0) -> tuple[Score, ...]:
    """Each prediction against the achieved ``before_s / after_s`` (seconds per step).

    Raises:
        ValueError: a step time that is not positive, or a negative spread.
    """
    if not (before_s > 0 and after_s > 0 and math.isfinite(before_s) and math.isfinite(after_s)):
        raise ValueError(f"step times must be positive, not {before_s} and {after_s}")
    if spread_before_s < 0 or spread_after_s < 0:
        raise ValueError("a spread must be >= 0")
    achieved = before_s / after_s
    low = max(before_s - spread_before_s, 0.0) / (after_s + spread_after_s)
    out = []
    for p in predictions:
        ceil = p.ceiling_x if p.ceiling_x is not None and math.isfinite(p.ceiling_x) else None
        pct = 100.0 * achieved / ceil if ceil else None
        is_applied = p.key == applied
        wrong = bool(is_applied and ceil is not None and low > ceil)
        out.append(Score(p.key, p.text, ceil, achieved, pct, is_applied, wrong))
    return tuple(out)


__all__ = ["Score", "applied_remedy", "score"]
