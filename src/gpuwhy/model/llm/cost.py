"""Dollars per million generated tokens, at the decode ceiling and at what real engines reach. Pure maths.

    USD per 1M tokens = USD per hour / (3600 s x tokens/s in total) x 1e6

``tokens/s`` is the decode ceiling of a batch (:mod:`gpuwhy.model.llm.roofline`);
real engines reach about 60-85% of it
(:data:`gpuwhy.model.llm.result.ENGINE_EFFICIENCY`, a rule of thumb), so the
cost there is the ceiling's divided by 0.85 and by 0.60. The price is per GPU
per hour; a model split over N GPUs pays N of them. One table per weight dtype
and batch size shows what continuous batching (a larger batch per step) and
quantized weights (fewer bytes per step) do to the cost of a token.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

from ...errors import UsageError
from .result import ENGINE_EFFICIENCY
from .roofline import DecodeStep

#: Batch sizes of the cost table (the batch asked for and the largest that fits are added).
COST_BATCHES = (1, 8, 64, 256)


def usd_per_million(usd_per_hour: float, tokens_per_s: float) -> float:
    """USD per 1e6 tokens at ``tokens_per_s`` for a machine costing ``usd_per_hour``.

    E.g. 3.50 USD/h at 300 tokens/s: 3.5 / (3600 x 300) x 1e6 = 3.24 USD.

    Raises:
        UsageError: a price or rate that is not a number greater than zero.
    """
    if not (usd_per_hour > 0 and math.isfinite(usd_per_hour)):
        raise UsageError(f"--cost-per-hour must be a price in USD greater than zero, got {usd_per_hour!r}")
    if not tokens_per_s > 0:
        raise UsageError(f"tokens/s must be greater than zero, got {tokens_per_s!r}")
    return usd_per_hour / (3600.0 * tokens_per_s) * 1e6


@dataclass(frozen=True)
class CostRow:
    """One batch size with one weight dtype: the ceiling in tokens/s (all sequences)
    and USD per 1M tokens there and at the engine-efficiency range (``usd_at_hi``
    at 85%, ``usd_at_lo`` at 60%); ``fits``: the batch's KV cache fits (None: unknown)."""

    weight_dtype: str
    batch: int
    regime: str
    tokens_per_s: float
    usd_per_m_tokens: float
    usd_per_m_tokens_at_hi: float
    usd_per_m_tokens_at_lo: float
    fits: bool | None

    def to_dict(self) -> dict[str, Any]:
        """Plain data for ``--json``."""
        return {"weight_dtype": self.weight_dtype, "batch": self.batch, "regime": self.regime, "tokens_per_s": self.tokens_per_s,
                "usd_per_m_tokens": self.usd_per_m_tokens, "usd_per_m_tokens_at_85pct": self.usd_per_m_tokens_at_hi,
                "usd_per_m_tokens_at_60pct": self.usd_per_m_tokens_at_lo, "fits_in_memory": self.fits}


@dataclass(frozen=True)
class CostTable:
    """USD per 1M generated tokens per weight dtype and batch size.

    ``usd_per_hour`` is one GPU's price, ``num_gpus`` how many the model uses,
    ``efficiency`` the (low, high) share of the ceiling real engines reach.
    """

    usd_per_hour: float
    num_gpus: int
    rows: tuple[CostRow, ...]
    efficiency: tuple[float, float] = ENGINE_EFFICIENCY
    notes: tuple[str, ...] = ()

    @property
    def usd_per_hour_total(self) -> float:
        """The price of all the GPUs the model uses, per hour."""
        return self.usd_per_hour * self.num_gpus

    def to_dict(self) -> dict[str, Any]:
        """Plain data for ``--json``."""
        return {"usd_per_hour_per_gpu": self.usd_per_hour, "num_gpus": self.num_gpus, "usd_per_hour": self.usd_per_hour_total,
                "engine_efficiency": list(self.efficiency), "rows": [r.to_dict() for r in self.rows], "notes": list(self.notes)}


def cost_batches(batch: int, max_batch: int | None, base: Sequence[int] = COST_BATCHES) -> tuple[int, ...]:
    """The batch sizes of a cost table: ``base`` and ``batch``, then the largest batch that
    fits (when known and >= 1), keeping only sizes that fit."""
    sizes = set(base) | {batch}
    if max_batch is not None:
        sizes = {b for b in sizes if b <= max_batch}
        if max_batch >= 1:
            sizes.add(max_batch)
    return tuple(sorted(sizes))


def cost_table(usd_per_hour: float, steps_by_dtype: Sequence[tuple[str, Sequence[DecodeStep]]], num_gpus: int = 1,
               notes: Sequence[str] = ()) -> CostTable:
    """The :class:`CostTable` of the decode steps of each weight dtype (``(dtype, steps)`` pairs).

    Raises:
        UsageError: a price that is not above zero, or ``num_gpus`` below 1.
    """
    if isinstance(num_gpus, bool) or not isinstance(num_gpus, int) or num_gpus < 1:
        raise UsageError(f"the number of GPUs must be a whole number greater than zero, got {num_gpus!r}")
    total = usd_per_hour * num_gpus
    lo, hi = ENGINE_EFFICIENCY
    rows = []
    for dtype, steps in steps_by_dtype:
        for st in steps:
            usd = usd_per_million(total, st.tokens_per_s_total)
            rows.append(CostRow(dtype, st.batch, st.regime, st.tokens_per_s_total, usd, usd / hi, usd / lo, st.fits_in_memory))
    return CostTable(float(usd_per_hour), num_gpus, tuple(rows), ENGINE_EFFICIENCY, tuple(notes))


__all__ = ["COST_BATCHES", "CostRow", "CostTable", "cost_batches", "cost_table", "usd_per_million"]
