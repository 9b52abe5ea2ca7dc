"""Names and sizes of LLM weight/KV dtypes, parameter counts, and the peak that bounds each dtype's math.

Pure parsing, no I/O. Bytes per element are the formats' widths (scales of
quantized formats are counted in :mod:`gpuwhy.model.llm.scaling`).
"""

from __future__ import annotations

import math
import re
from typing import Iterable

from ...errors import UsageError
from ...units import fmt_g, fmt_num

#: Bytes per element of each weight or KV-cache dtype (the format's width; the
#: scales of quantized formats are left out).
BYTES_PER_ELEMENT: dict[str, float] = {
    "fp32": 4.0,
    "fp16": 2.0,
    "bf16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5,
    "fp4": 0.5,
}
#: Names ``--weight-dtype`` and ``--kv-dtype`` accept.
WEIGHT_DTYPES = ("fp16", "bf16", "fp8", "int8", "int4", "fp4", "fp32")

# Which peak bounds the math of each weight dtype, in order of preference.
_PEAK_PREFERENCE: dict[str, tuple[str, ...]] = {
    "fp32": ("fp32",),
    "fp16": ("fp16", "bf16", "fp32"),
    "bf16": ("bf16", "fp16", "fp32"),
    "fp8": ("fp8", "fp16", "bf16", "fp32"),
    "int8": ("int8", "fp16", "bf16", "fp32"),
    "int4": ("fp4", "fp16", "bf16", "fp32"),
    "fp4": ("fp4", "fp16", "bf16", "fp32"),
}

_PARAMS_RE = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*([A-Za-z]*)\s*$")
#: Suffixes of ``--params``: k thousand, M million, B or G billion, T trillion.
PARAMS_SUFFIXES = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}
_MIN_PARAMS = 1e5
_MAX_PARAMS = 1e14


def parse_params(text: str | float | int, what: str = "--params") -> float:
    """Parse a parameter count: ``3B``, ``124M``, ``8e9``, ``70.6B``, ``1.5k``.

    For a parameter count ``B`` means billion (1e9), unlike
    :func:`gpuwhy.units.parse_quantity` where ``B`` is bytes; ``G`` is accepted as
    a synonym, ``k``/``M``/``T`` are 1e3/1e6/1e12; suffixes are case-insensitive.

    Raises:
        UsageError: for text that is not a number, an unknown suffix, a value that
            is not finite, not positive, or outside 1e5 to 1e14 parameters (a
            bare ``3`` is caught as "did you mean 3B?").
    """
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        s, value = str(text), float(text)
    else:
        s = str(text)
        m = _PARAMS_RE.match(s)
        if not m:
            raise UsageError(f"{what} {s!r} is not a parameter count; give e.g. 3B, 124M or 8e9")
        suffix = m.group(2).lower()
        if suffix not in PARAMS_SUFFIXES:
            raise UsageError(f"{what} {s!r} has an unknown suffix {m.group(2)!r}; use k, M, B (billion) or T, e.g. 3B")
        value = float(m.group(1)) * PARAMS_SUFFIXES[suffix]
    if not math.isfinite(value) or value <= 0:
        raise UsageError(f"{what} {s!r} must be a finite number greater than zero, e.g. 3B")
    if value < _MIN_PARAMS:
        raise UsageError(f"{what} {s!r} is {fmt_g(value)} parameters, too few for an LLM; did you mean {s.strip()}B (billion)?")
    if value > _MAX_PARAMS:
        raise UsageError(f"{what} {s!r} is {fmt_num(value)} parameters, more than 1e14; give the count, e.g. 3B or 124M")
    return value


def normalize_dtype(dtype: str, what: str = "--weight-dtype") -> str:
    """The canonical name of a weight/KV dtype (``"FP16"`` -> ``"fp16"``).

    Raises:
        UsageError: for a name not in :data:`WEIGHT_DTYPES`.
    """
    d = str(dtype).strip().lower()
    if d not in BYTES_PER_ELEMENT:
        raise UsageError(f"unknown {what} {dtype!r}; use one of: {', '.join(WEIGHT_DTYPES)}")
    return d


def bytes_per_element(dtype: str, what: str = "--weight-dtype") -> float:
    """Bytes per element of ``dtype``: fp32 4, fp16/bf16 2, fp8/int8 1, int4/fp4 0.5.

    Raises:
        UsageError: for an unknown dtype.
    """
    return BYTES_PER_ELEMENT[normalize_dtype(dtype, what)]


def default_kv_dtype(weight_dtype: str) -> str:
    """The KV-cache dtype assumed when none is given: the weight dtype for
    fp32/fp16/bf16, fp16 for quantized weights (engines keep the KV cache in the
    activation dtype unless told otherwise)."""
    d = normalize_dtype(weight_dtype)
    return d if d in ("fp32", "fp16", "bf16") else "fp16"


def compute_precision(weight_dtype: str, available: Iterable[str]) -> tuple[str, str | None]:
    """The ``peak_tflops`` key whose peak bounds the math of ``weight_dtype`` weights.

    fp16/bf16 -> the fp16/bf16 tensor peak; fp8 -> fp8; int8 -> int8; int4/fp4 ->
    fp4 if ``available`` has it, else fp16 (the weights are dequantized); fp32 ->
    fp32. A missing precision falls back along fp16, bf16, fp32.

    Returns:
        ``(precision, note)``; ``note`` is a sentence when the choice is not the
        obvious one (a fallback, or int4 math taken at the fp4 peak), else None.

    Raises:
        UsageError: for an unknown dtype, or when ``available`` has none of the
            candidate precisions.
    """
    d = normalize_dtype(weight_dtype)
    have = set(available)
    prefs = _PEAK_PREFERENCE[d]
    for prec in prefs:
        if prec in have:
            break
    else:
        raise UsageError(f"the GPU sheet has none of the peaks {', '.join(prefs)} needed for {d} weights")
    note = None
    if prec != prefs[0]:
        if d in ("int4", "fp4", "fp8", "int8"):
            note = f"the sheet has no {prefs[0]} peak: {d} weights are taken as dequantized to {prec}, and the math runs at the {prec} peak"
        else:
            note = f"the sheet has no {prefs[0]} peak; the {prec} peak is used"
    elif d == "int4":
        note = "int4 weights: the math is taken at the fp4 tensor peak; engines that dequantize int4 to fp16 get the fp16 peak (only matters when compute-bound)"
    return prec, note

