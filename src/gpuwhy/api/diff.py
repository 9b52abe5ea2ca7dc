"""`gpuwhy diff BEFORE AFTER`: what changed between two runs of one program, and why.

Each file is read into a :class:`~gpuwhy.diff.side.Side` (:mod:`.diff_sides`: its kind told by
its first bytes), then :func:`gpuwhy.diff.compare.diff` splits the change of step time into the
budget's shares, pairs kernels and operators, and scores the first run's predictions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..diff.compare import DiffResult, diff
from ..errors import UsageError


@dataclass(frozen=True)
class DiffRequest:
    """``before`` and ``after``: the two files; ``fail_if_slower_pct``: the CI threshold (%, None:
    none); ``remedy``: the remedy of ``before`` that was applied (None: the one that removes the
    cause that dropped most); ``spec_dirs``: extra spec-sheet folders (for ncu exports)."""

    before: str
    after: str
    fail_if_slower_pct: float | None = None
    remedy: str | None = None
    spec_dirs: tuple[str, ...] = ()


def parse_pct(text: str | float | None, what: str = "--fail-if-slower") -> float | None:
    """A percentage from the command line (``5``, ``5%``, ``2.5``); None for None.

    Raises:
        UsageError: not a finite number >= 0.
    """
    if text is None:
        return None
    s = str(text).strip().rstrip("%").strip()
    try:
        v = float(s)
    except ValueError:
        v = math.nan
    if not (v >= 0 and math.isfinite(v)):
        raise UsageError(f"{what} {text!r}: give a percentage >= 0, e.g. {what} 5")
    return v


def diff_runs(req: DiffRequest) -> DiffResult:
    """What changed from ``req.before`` to ``req.after``.

    Raises:
        UsageError: a file that is missing, empty or of no kind diff reads; two kinds that do not
            compare; two unrelated programs; a remedy the first run did not offer.
    """
    from .diff_sides import read_side

    a = read_side(req.before, req.spec_dirs)
    b = read_side(req.after, req.spec_dirs)
    return diff(a, b, fail_if_slower_pct=req.fail_if_slower_pct, remedy=req.remedy)


__all__ = ["DiffRequest", "diff_runs", "parse_pct"]
