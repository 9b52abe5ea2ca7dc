"""The shape options of `gpuwhy classify` (``--gemm``, ``--attention``, ``--elementwise``
and theirs), declared once and handed to the command as one :class:`ShapeText`.

Import-light: typer at module level (through option_groups), the model only when parsing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

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


@dataclass(frozen=True)
class ShapeRequest:
    """A parsed shape (:mod:`gpuwhy.model.kernels.shapes`) and the ``tile`` (TM, TN) asked for, or None."""

    shape: Any
    tile: tuple[int, int] | None
    flag: str


@dataclass(frozen=True)
class ShapeText:
    """What the user typed for the shape options; None (False for flags) where not given."""

    gemm: str | None = None
    batch: str | None = None
    accumulate: bool = False
    tile: str | None = None
    attention: str | None = None
    causal: bool = False
    kv_heads: str | None = None
    q_len: str | None = None
    elementwise: str | None = None
    inputs: str | None = None
    outputs: str | None = None
    flops_per_element: str | None = None

    def parse(self) -> ShapeRequest | None:
        """The shape asked for, or None when no shape option was given.

        Raises:
            UsageError: what :func:`gpuwhy.model.kernels.shapes.shape_from_options` refuses;
                ``--tile`` without ``--gemm`` or a bad tile.
        """
        from ..errors import UsageError
        from ..model.kernels.shapes import shape_from_options
        from ..units import parse_shape

        shape = shape_from_options(self.gemm, self.attention, self.elementwise, batch=self.batch, accumulate=self.accumulate,
                                   causal=self.causal, kv_heads=self.kv_heads, q_len=self.q_len, inputs=self.inputs,
                                   outputs=self.outputs, flops_per_element=self.flops_per_element)
        if self.tile is not None and self.gemm is None:
            raise UsageError("--tile goes with --gemm")
        if shape is None:
            return None
        tile = None if self.tile is None else parse_shape(self.tile, ("TM", "TN"), "x", "--tile", "128x256")
        return ShapeRequest(shape, tile, "--gemm" if self.gemm is not None else "--attention" if self.attention is not None else "--elementwise")


def shape_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Give a typer command the shape options in place of its ``shape`` parameter; it is
    called with what the user typed as ``shape``, a :class:`ShapeText`.

    Raises:
        ValueError: if ``command`` has no ``shape`` parameter.
    """
    return option_group("shape", _SHAPE_OPTIONS, ShapeText)(command)
