"""The text of one table cell: a number, or ``n/a`` when it is missing."""

from __future__ import annotations


def pct(x: float | None, digits: int = 0) -> str:
    """``x`` (already in percent) with ``digits`` decimals and a ``%`` sign; ``"n/a"`` for None."""
    return "n/a" if x is None else f"{x:.{digits}f}%"


def num(x: float | None, fmt: str = ".3g") -> str:
    """``x`` formatted by ``fmt``; ``"n/a"`` for None."""
    return "n/a" if x is None else format(x, fmt)
