"""Interval arithmetic on sorted numpy arrays (pure: no I/O). Times in any one unit.

A *set* is two arrays ``(a, b)`` of disjoint intervals ``[a[i], b[i])`` sorted
by start, as :func:`union` makes them.
"""

from __future__ import annotations

import numpy as np


def sorted_gaps(starts, ends):
    """For intervals sorted by start: ``(running_end, gap_index)``, the running maximum of the ends
    and the indices ``i`` where interval ``i + 1`` starts after every earlier one has ended (a gap
    from ``running_end[i]`` to ``starts[i + 1]``). The one busy-interval union of gpuwhy: every
    union, span and idle gap is built on it."""
    s = np.asarray(starts, dtype=np.float64)
    cm = np.maximum.accumulate(np.asarray(ends, dtype=np.float64))
    return cm, np.flatnonzero(s[1:] > cm[:-1])


def last_finished(ends, running_end) -> np.ndarray:
    """For intervals sorted by start: index of the interval that holds the running maximum of the ends
    at each position (the one that finished last so far)."""
    e = np.asarray(ends, dtype=np.float64)
    holds = np.where(e >= running_end, np.arange(e.size), -1)
    return np.maximum.accumulate(holds)


def union(starts, ends):
    """The union of intervals ``[starts[i], ends[i])`` as a sorted disjoint set ``(a, b)``.

    Zero-length intervals add nothing; touching intervals merge.
    """
    s = np.asarray(starts, dtype=np.float64)
    e = np.asarray(ends, dtype=np.float64)
    keep = e > s
    s, e = s[keep], e[keep]
    if s.size == 0:
        return np.empty(0), np.empty(0)
    order = np.argsort(s, kind="stable")
    s, e = s[order], e[order]
    cm, gi = sorted_gaps(s, e)
    first = np.concatenate(([0], gi + 1))
    last = np.append(first[1:] - 1, s.size - 1)
    return s[first], cm[last]


class Coverage:
    """How much of a sorted disjoint set lies in given windows, vectorised.

    ``Coverage(a, b).within(lo, hi)`` is, per window, the length of the set
    inside ``[lo, hi]`` (0 where ``hi <= lo``); with ``weights``, each
    interval's length counts that many times.
    """

    def __init__(self, a, b, weights=None):
        self.a = np.asarray(a, dtype=np.float64)
        self.b = np.asarray(b, dtype=np.float64)
        self.w = np.ones(self.a.size) if weights is None else np.asarray(weights, dtype=np.float64)
        self.before = np.concatenate(([0.0], np.cumsum(self.w * (self.b - self.a))))

    @property
    def total(self) -> float:
        return float(self.before[-1])

    def upto(self, x):
        """Length of the set in (-inf, x], per element of ``x``."""
        x = np.asarray(x, dtype=np.float64)
        if self.a.size == 0:
            return np.zeros_like(x)
        k = np.searchsorted(self.a, x, side="right") - 1
        kk = np.clip(k, 0, None)
        part = self.w[kk] * np.clip(x - self.a[kk], 0.0, self.b[kk] - self.a[kk])
        return np.where(k >= 0, self.before[kk] + part, 0.0)

    def within(self, lo, hi):
        lo = np.asarray(lo, dtype=np.float64)
        hi = np.asarray(hi, dtype=np.float64)
        return np.where(hi > lo, self.upto(hi) - self.upto(np.minimum(lo, hi)), 0.0)


def merge(*sets):
    """The union of several sorted disjoint sets."""
    a = np.concatenate([s[0] for s in sets]) if sets else np.empty(0)
    b = np.concatenate([s[1] for s in sets]) if sets else np.empty(0)
    return union(a, b)


def nested_order(starts, ends) -> np.ndarray:
    """Indices ordering intervals by start, the longer first where starts tie (so an enclosing
    interval comes before those nested in it), the input order last: ``np.lexsort((starts - ends,
    starts))``, but in about linear time when the starts are nearly sorted already (a trace's host
    ranges are, per thread), by sorting only the groups of equal starts by length.
    """
    s = np.asarray(starts, dtype=np.float64)
    e = np.asarray(ends, dtype=np.float64)
    order = np.argsort(s, kind="stable")
    ss = s[order]
    tie = np.zeros(s.size, dtype=bool)
    if s.size > 1:
        same = ss[1:] == ss[:-1]
        tie[1:] |= same
        tie[:-1] |= same
    if tie.any():
        pos = np.flatnonzero(tie)
        sub = order[pos]
        # Groups stay in place (sorted by start); inside each, the longer first, ties kept in order.
        order[pos] = sub[np.lexsort((s[sub] - e[sub], s[sub]))]
    return order


def top_level(starts, ends):
    """Mask of the intervals not nested inside an earlier one (of one thread): sorted input by start."""
    s = np.asarray(starts, dtype=np.float64)
    e = np.asarray(ends, dtype=np.float64)
    out = np.ones(s.size, dtype=bool)
    if s.size > 1:
        cm = np.maximum.accumulate(e)
        out[1:] = s[1:] >= cm[:-1]
    return out


__all__ = ["Coverage", "last_finished", "merge", "nested_order", "sorted_gaps", "top_level", "union"]
