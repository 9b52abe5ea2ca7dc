"""The shape options of `gpuwhy classify` (``--gemm``, ``--attention``, ``--elementwise``
and theirs), declared once and handed to the command as one
:class:`~gpuwhy.api.classify_request.ShapeText` (which parses them).

Import-light: typer at module level (through option_groups), the model only when parsing.
"""

from __future__ import annotations

from typing import Any, Callable

from ..api.classify_request import ShapeText
from .option_groups import option_group

# (parameter name, flag, metavar, help); metavar None: an on/off flag.
_SHAPE_OPTIONS = (
    ("gemm", "--gemm", "MxNxK", "Count a GEMM, C (MxN) = A (MxK) @ B (KxN): 2MNK FLOPs; A, B read and C written once (the minimum)."),
    ("batch", "--batch", "B", "With --gemm: B independent GEMMs of that shape."),
    ("accumulate", "--accumulate", None, "With --gemm: C += A @ B, so C is read as well as written."),
    ("tile", "--tile", "TMxTN", "With --gemm: the output tile for tile and wave quantization (default: a typical tile of the GPU's architecture)."),
    ("attention", "--attention", "B,H,S,D", "Count attention: batch B, H heads, S tokens, head dim D; fused (flash) bytes vs naive (score matrix in DRAM)."),
    ("causal", "--causal", None, "With --attention: a causal mask (each query sees the keys up to its position)."),
    ("kv_heads", "--kv-heads", "H", "With --attention: key/value heads (grouped-query attention; default H)."),
    ("q_len", "--q-len", "L", "With --attention: queries per head (1 for a decode step; default S)."),
    ("elementwise", "--elementwise", "N", "Count an elementwise op over N elements (2^28 is allowed), with --inputs and --outputs."),
    ("inputs", "--inputs", "I", "With --elementwise: arrays read per element."),
    ("outputs", "--outputs", "O", "With --elementwise: arrays written per element."),
    ("flops_per_element", "--flops-per-element", "F", "With --elementwise: FLOPs per output element (default 1)."),
)


def shape_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Give a typer command the shape options in place of its ``shape`` parameter; it is
    called with what the user typed as ``shape``, a :class:`ShapeText`.

    Raises:
        ValueError: if ``command`` has no ``shape`` parameter.
    """
    return option_group("shape", _SHAPE_OPTIONS, ShapeText)(command)
