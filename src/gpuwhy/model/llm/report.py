"""`gpuwhy llm`'s additions to the estimate: speculative decoding and the cost per token, in one document.

:func:`cost_for` redoes the estimate per batch size for the weight dtype asked for
and for narrower ones (fp8, int4), so one table shows what batching and
quantization do to the cost of a token; :class:`LlmReport` joins the estimate,
:class:`~gpuwhy.model.llm.speculative.Speculative` and
:class:`~gpuwhy.model.llm.cost.CostTable` for renderers and ``--json``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .estimate import scaled_estimate
from .cost import CostTable, cost_batches, cost_table
from .dtypes import BYTES_PER_ELEMENT, default_kv_dtype
from .roofline import gpu_from_sheet
from .scaling import Scaling
from .speculative import Speculative
from ...units import fmt_num

#: Narrower weight dtypes the cost table adds beside the one asked for.
QUANTIZED = ("fp8", "int4")


@dataclass(frozen=True)
class LlmReport:
    """The estimate (an :class:`~gpuwhy.model.llm.result.LlmEstimate` or
    :class:`~gpuwhy.model.llm.result.ScaledEstimate`) with speculative decoding and the
    cost table, each None when not asked for."""

    estimate: Any
    speculative: Speculative | None = None
    cost: CostTable | None = None

    def to_dict(self) -> dict[str, Any]:
        """The estimate's document, plus ``speculative`` and ``cost`` when asked for."""
        out = self.estimate.to_dict()
        if self.speculative is not None:
            out["speculative"] = self.speculative.to_dict()
        if self.cost is not None:
            out["cost"] = self.cost.to_dict()
        return out


def cost_for(usd_per_hour: float, params: float, weight_dtype: str, sheet: Any, scaling: Scaling = Scaling(),
             batch: int = 1, kv_dtype: str | None = None, **request: Any) -> CostTable:
    """USD per 1M generated tokens for ``params`` weights of ``weight_dtype`` and of the
    narrower :data:`QUANTIZED` dtypes on ``scaling.num_gpus`` GPUs of ``sheet``, at the batch
    sizes of :func:`~gpuwhy.model.llm.cost.cost_batches` that fit. ``request``: the keywords
    of :func:`~gpuwhy.model.llm.estimate.scaled_estimate` after ``kv_dtype`` (shape, context,
    prompt_len, max_context, model). The KV cache keeps the asked dtype's.

    Raises:
        UsageError: a price not above zero; what :func:`~gpuwhy.model.llm.estimate.scaled_estimate` raises.
    """
    kvd = kv_dtype or default_kv_dtype(weight_dtype)
    dtypes = [weight_dtype]
    notes = []
    if scaling.bytes_per_param is None and scaling.quant_group is None:
        dtypes += [d for d in QUANTIZED if BYTES_PER_ELEMENT[d] < BYTES_PER_ELEMENT[weight_dtype]]
        if len(dtypes) > 1:
            notes.append(f"the {', '.join(dtypes[1:])} rows are the same model with quantized weights (scales left out), "
                         f"the KV cache still {kvd}")
    else:
        notes.append("--bytes-per-param/--quant-group set the bytes per weight: no quantized rows are added")
    request = {k: v for k, v in request.items() if k not in ("sweep", "notes")}
    steps_by_dtype = []
    for d in dtypes:
        g = gpu_from_sheet(sheet, d)
        first = scaled_estimate(params, d, g, scaling, batch, kv_dtype=kvd, **request).estimate
        sizes = cost_batches(batch, first.max_batch)
        mem = first.gpu.memory_bytes
        if mem is not None and first.weight_bytes > mem:
            notes.append(f"{d} weights ({fmt_num(first.weight_bytes / 1e9)} GB) do not fit in {fmt_num(mem / 1e9)} GB: no {d} rows")
            continue
        if not sizes:
            notes.append(f"with {d} weights no batch fits: {first.max_batch_reason or 'the weights do not fit'}")
            continue
        est = scaled_estimate(params, d, g, scaling, batch, kv_dtype=kvd, sweep=sizes, **request).estimate
        steps_by_dtype.append((d, est.sweep))
    return cost_table(usd_per_hour, steps_by_dtype, scaling.num_gpus, notes)


__all__ = ["LlmReport", "QUANTIZED", "cost_for"]
