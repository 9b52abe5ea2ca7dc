"""The text of one table cell: a number, or ``n/a`` when it is missing."""

from __future__ import annotations

from ..units import fmt_num


def pct(x: float | None, digits: int = 0) -> str:
    """``x`` (already in percent) with ``digits`` decimals and a ``%`` sign; ``"n/a"`` for None."""
    return "n/a" if x is None else f"{x:.{digits}f}%"


def num(x: float | None, fmt: str | None = None) -> str:
    """``x`` by :func:`gpuwhy.units.fmt_num` (3 figures, engineering notation when huge or tiny),
    or by the format spec ``fmt`` (e.g. ``".0f"``); ``"n/a"`` for None."""
    if x is None:
        return "n/a"
    return fmt_num(x) if fmt is None else format(x, fmt)


def kernel_regime(regime: str | None, level: str | None, measured: bool, missing: str = "-") -> str:
    """A kernel's regime as `gpuwhy run` shows it: ``memory (L2)`` when a cache level's roof decides a
    memory- or latency-bound kernel, ``not classified`` when ncu measured it but could not say,
    ``missing`` when it was not measured."""
    if not (isinstance(regime, str) and regime):
        return "not classified" if measured else missing
    return f"{regime} ({level})" if level in ("L2", "L1") and regime in ("memory", "latency") else regime
