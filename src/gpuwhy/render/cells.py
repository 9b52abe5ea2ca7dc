"""Words of one table cell that are not a number (numbers are written by :mod:`gpuwhy.units`)."""

from __future__ import annotations


def kernel_regime(regime: str | None, level: str | None, measured: bool, missing: str = "-") -> str:
    """A kernel's regime as `gpuwhy run` shows it: ``memory (L2)`` when a cache level's roof decides a
    memory- or latency-bound kernel, ``not classified`` when ncu measured it but could not say,
    ``missing`` when it was not measured."""
    if not (isinstance(regime, str) and regime):
        return "not classified" if measured else missing
    return f"{regime} ({level})" if level in ("L2", "L1") and regime in ("memory", "latency") else regime
