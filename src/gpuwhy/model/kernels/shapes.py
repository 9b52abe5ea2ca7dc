"""Count a kernel's work from its shape: a GEMM, attention, an elementwise op. Pure maths.

People know shapes, not FLOPs and bytes. Each shape here gives the FLOPs and the
*minimum* bytes through DRAM (every operand read once, every result written once:
a lower bound real kernels approach), with the arithmetic in words so a reader
can check it. Units: FLOP, bytes, elements.

- GEMM ``C = A @ B``, A is M x K, B is K x N, C is M x N, ``batch`` independent
  products: FLOPs = 2 M N K x batch (one multiply and one add per term of each
  dot product); bytes = (M K + K N + M N) x element bytes x batch, and M N more
  when C is also read (``accumulate``: C += A @ B). Transposes change nothing.
  C is counted in the operands' dtype.
- Attention ``softmax(Q K^T) V`` of ``batch`` x ``heads`` heads, ``q_len``
  queries (default ``seq``: a prefill; 1 for a decode step) against ``seq`` keys
  of ``head_dim``: FLOPs = 4 x batch x heads x pairs x head_dim (Q K^T and the
  weighted sum of V, one multiply-add per pair per head dimension each), where
  pairs = q_len x seq, or under a causal mask the pairs a query may see
  (query i of the last q_len positions sees seq - q_len + i keys:
  q_len x seq - q_len (q_len - 1) / 2; half the square plus the diagonal for a
  prefill). Softmax and scaling FLOPs are left out. Bytes: a fused (flash)
  kernel reads Q, K and V once and writes O (K and V have ``kv_heads`` heads,
  fewer under grouped-query attention); a naive one also writes the
  q_len x seq score matrix, reads it for the softmax, writes the probabilities
  and reads them for the product with V: 4 x batch x heads x q_len x seq
  elements more (the whole matrix, masked or not).
- Elementwise over ``n`` elements with ``inputs`` arrays read and ``outputs``
  written: FLOPs = n x outputs x flops per output element (default 1); bytes =
  n x (inputs + outputs) x element bytes. vecadd is n = 2^28, 2 inputs, 1 output.

Element bytes: fp64 8, fp32 and tf32 4 (tf32 is a tensor-core mode of fp32
data), fp16/bf16 2, fp8/int8 1, fp4 0.5.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ...errors import UsageError
from ...units import fmt_bytes, fmt_count, fmt_g, fmt_num, fmt_si, parse_dimension, parse_quantity, parse_shape
from ..llm.dtypes import BYTES_PER_ELEMENT
from ..roofline.classify import Workload

#: Bytes per element of each ``--dtype`` (``tf32`` is fp32 data on tensor cores;
#: ``fp64_tensor`` fp64 data on tensor cores).
ELEMENT_BYTES: dict[str, float] = {
    "fp64": 8.0,
    "fp64_tensor": 8.0,
    "fp32": BYTES_PER_ELEMENT["fp32"],
    "tf32": BYTES_PER_ELEMENT["fp32"],
    "fp16": BYTES_PER_ELEMENT["fp16"],
    "bf16": BYTES_PER_ELEMENT["bf16"],
    "fp8": BYTES_PER_ELEMENT["fp8"],
    "int8": BYTES_PER_ELEMENT["int8"],
    "fp4": BYTES_PER_ELEMENT["fp4"],
}

GEMM_DIMS = ("M", "N", "K")
ATTENTION_DIMS = ("B", "H", "S", "D")


def element_bytes(dtype: str) -> float:
    """Bytes per element of ``dtype`` (see :data:`ELEMENT_BYTES`).

    Raises:
        UsageError: an unknown dtype.
    """
    d = str(dtype).strip().lower()
    if d not in ELEMENT_BYTES:
        raise UsageError(f"unknown dtype {dtype!r}; use one of: {', '.join(ELEMENT_BYTES)}")
    return ELEMENT_BYTES[d]


def _whole(value: Any, what: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        bound = "zero or more" if minimum == 0 else "greater than zero"
        raise UsageError(f"{what} must be a whole number {bound}, got {value!r}")
    return value


@dataclass(frozen=True)
class WorkCount:
    """FLOPs and minimum DRAM bytes of one shape, and how they were counted.

    Attributes:
        kind: ``"gemm"``, ``"attention"`` or ``"elementwise"``.
        label: the shape in words, for tables (``gemm 8192x8192x8192 bf16``).
        dtype: the element type; ``element_bytes`` its size in bytes.
        flops: FLOP; ``bytes``: bytes through DRAM (reads plus writes).
        dims: the dimensions and options as given (plain numbers).
        figures: further counts (``*_bytes`` bytes, ``*_flops`` FLOP, ratios plain).
        lines: the arithmetic in words, one line per count.
    """

    kind: str
    label: str
    dtype: str
    element_bytes: float
    flops: float
    bytes: float
    dims: dict[str, Any]
    figures: dict[str, float] = field(default_factory=dict)
    lines: tuple[str, ...] = ()

    def workload(self, launches: int = 1, time_s: float | None = None) -> Workload:
        """The counts as a roofline :class:`~gpuwhy.model.roofline.classify.Workload`."""
        return Workload(flops=self.flops, bytes=self.bytes, launches=launches, time_s=time_s, name=self.label)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for ``--json``: ``flops``, ``bytes`` and the figures by name."""
        return {"kind": self.kind, "label": self.label, "dtype": self.dtype, "element_bytes": self.element_bytes,
                "flops": self.flops, "bytes": self.bytes, "dims": dict(self.dims), "figures": dict(self.figures),
                "lines": list(self.lines)}


@dataclass(frozen=True)
class Gemm:
    """``batch`` GEMMs C (M x N) = A (M x K) @ B (K x N); ``accumulate``: C += A @ B (C read too).

    Raises:
        UsageError: a dimension or batch that is not a whole number above zero.
    """

    m: int
    n: int
    k: int
    batch: int = 1
    accumulate: bool = False

    def __post_init__(self) -> None:
        for name, v in (("M", self.m), ("N", self.n), ("K", self.k), ("batch", self.batch)):
            _whole(v, f"the GEMM's {name}")

    def count(self, dtype: str) -> WorkCount:
        """FLOPs = 2 M N K x batch; bytes = (M K + K N + M N (x2 accumulating)) x element bytes x batch."""
        e = element_bytes(dtype)
        m, n, k, b = self.m, self.n, self.k, self.batch
        flops = 2.0 * m * n * k * b
        c_passes = 2 if self.accumulate else 1
        a_bytes, b_bytes, c_bytes = m * k * e * b, k * n * e * b, m * n * e * b * c_passes
        nbytes = a_bytes + b_bytes + c_bytes
        batch = f" x batch {b}" if b > 1 else ""
        c_words = "C M x N written and read (C += A @ B)" if self.accumulate else "C M x N written"
        lines = (
            f"FLOPs = 2 x M x N x K{batch} = 2 x {m:,} x {n:,} x {k:,}{f' x {b:,}' if b > 1 else ''} = {fmt_count(flops)} ({fmt_si(flops, 'FLOP')})",
            f"bytes = (A M x K + B K x N read, {c_words}) x {fmt_g(e)} B ({dtype}){batch} "
            f"= ({fmt_count(m * k)} + {fmt_count(k * n)} + {fmt_count(m * n * c_passes)}) x {fmt_g(e)}{f' x {b:,}' if b > 1 else ''} = {fmt_count(nbytes)} B ({fmt_bytes(nbytes)}), "
            "the minimum: each matrix through DRAM once",
            f"intensity = {fmt_count(flops)} / {fmt_count(nbytes)} = {fmt_num(flops / nbytes, 4)} FLOP/byte",
        )
        label = f"gemm {m}x{n}x{k}" + (f" batch {b}" if b > 1 else "") + f" {dtype}"
        dims = {"m": m, "n": n, "k": k, "batch": b, "accumulate": self.accumulate}
        figures = {"a_bytes": a_bytes, "b_bytes": b_bytes, "c_bytes": c_bytes}
        return WorkCount("gemm", label, dtype, e, flops, nbytes, dims, figures, lines)


@dataclass(frozen=True)
class Attention:
    """Attention of ``batch`` x ``heads`` query heads, ``q_len`` queries (default ``seq``)
    against ``seq`` keys of ``head_dim``; ``kv_heads`` key/value heads (default ``heads``);
    ``causal``: each query sees only the keys up to its own position.

    Raises:
        UsageError: a count that is not a whole number above zero, ``heads`` not a
            multiple of ``kv_heads``, or more queries than keys.
    """

    batch: int
    heads: int
    seq: int
    head_dim: int
    causal: bool = False
    kv_heads: int | None = None
    q_len: int | None = None

    def __post_init__(self) -> None:
        for name, v in (("B (batch)", self.batch), ("H (heads)", self.heads), ("S (sequence length)", self.seq),
                        ("D (head dim)", self.head_dim)):
            _whole(v, f"the attention's {name}")
        if self.kv_heads is not None:
            _whole(self.kv_heads, "--kv-heads")
            if self.kv_heads > self.heads or self.heads % self.kv_heads:
                raise UsageError(f"--kv-heads {self.kv_heads} must divide the {self.heads} query heads")
        if self.q_len is not None:
            _whole(self.q_len, "--q-len")
            if self.q_len > self.seq:
                raise UsageError(f"--q-len {self.q_len} is more than the {self.seq} keys (S); the queries are the last q_len positions")

    @property
    def s_q(self) -> int:
        """Queries per head (``q_len``, else ``seq``)."""
        return self.seq if self.q_len is None else self.q_len

    @property
    def h_kv(self) -> int:
        """Key/value heads (``kv_heads``, else ``heads``)."""
        return self.heads if self.kv_heads is None else self.kv_heads

    def pairs(self) -> int:
        """(query, key) pairs per head: q_len x seq, or the visible ones under a causal mask."""
        sq, skv = self.s_q, self.seq
        return sq * skv - (sq * (sq - 1) // 2 if self.causal else 0)

    def count(self, dtype: str) -> WorkCount:
        """FLOPs = 4 B H pairs D; bytes of a fused kernel (Q, K, V read once, O written);
        the naive kernel's bytes (plus 4 passes over the score matrix) in ``figures``."""
        e = element_bytes(dtype)
        b, h, s, d, sq, hk = self.batch, self.heads, self.seq, self.head_dim, self.s_q, self.h_kv
        pairs = self.pairs()
        flops = 4.0 * b * h * pairs * d
        q_el, kv_el = b * h * sq * d, b * hk * s * d
        fused = (2 * q_el + 2 * kv_el) * e
        score_el = b * h * sq * s
        score_head = sq * s * e
        naive = fused + 4 * score_el * e
        pair_words = f"{sq:,} x {s:,}"
        if self.causal:
            pair_words = f"{sq:,} x {s:,} - {sq:,} x {sq - 1:,} / 2 (causal: query i sees the keys up to its position)"
        kv = f" ({hk:,} KV heads)" if hk != h else ""
        lines = (
            f"pairs per head = {pair_words} = {pairs:,}",
            f"FLOPs = 4 x B x H x pairs x D = 4 x {b:,} x {h:,} x {pairs:,} x {d:,} = {fmt_count(flops)} ({fmt_si(flops, 'FLOP')}; Q K^T and P V, softmax left out)",
            f"fused (flash) bytes = (Q + O: 2 x {b:,} x {h:,} x {sq:,} x {d:,} + K + V: 2 x {b:,} x {hk:,}{kv} x {s:,} x {d:,}) "
            f"x {fmt_g(e)} B ({dtype}) = {fmt_count(fused)} B ({fmt_bytes(fused)})",
            f"score matrix = {sq:,} x {s:,} x {fmt_g(e)} B = {fmt_bytes(score_head)} per head per layer ({fmt_bytes(score_el * e)} for all {b * h:,} heads)",
            f"naive bytes = fused + 4 x score matrices (write S, read it for softmax, write P, read it for P V) = {fmt_count(naive)} B "
            f"({fmt_bytes(naive)}), {fmt_num(naive / fused)}x the fused kernel's",
        )
        causal = " causal" if self.causal else ""
        ql = f" q_len {sq}" if self.q_len is not None else ""
        label = f"attention {b},{h},{s},{d}{causal}{ql} {dtype}"
        dims = {"batch": b, "heads": h, "seq": s, "head_dim": d, "causal": self.causal, "kv_heads": hk, "q_len": sq}
        figures = {"pairs_per_head": pairs, "fused_bytes": fused, "naive_bytes": naive, "naive_to_fused": naive / fused,
                   "score_matrix_bytes_per_head": score_head, "score_matrix_bytes": score_el * e}
        return WorkCount("attention", label, dtype, e, flops, fused, dims, figures, lines)


@dataclass(frozen=True)
class Elementwise:
    """An elementwise op over ``n`` elements reading ``inputs`` arrays and writing
    ``outputs``, ``flops_per_element`` FLOPs per output element (default 1).

    Raises:
        UsageError: ``n`` or ``outputs`` not a whole number above zero, ``inputs``
            negative or not whole, ``flops_per_element`` not above zero.
    """

    n: int
    inputs: int = 1
    outputs: int = 1
    flops_per_element: float = 1.0

    def __post_init__(self) -> None:
        _whole(self.n, "--elementwise N")
        _whole(self.inputs, "--inputs", minimum=0)
        _whole(self.outputs, "--outputs")
        f = self.flops_per_element
        if isinstance(f, bool) or not isinstance(f, (int, float)) or not (f > 0 and math.isfinite(f)):
            raise UsageError(f"--flops-per-element must be a number greater than zero, got {f!r}")

    def count(self, dtype: str) -> WorkCount:
        """FLOPs = n x outputs x flops per element; bytes = n x (inputs + outputs) x element bytes."""
        e = element_bytes(dtype)
        n, i, o, f = self.n, self.inputs, self.outputs, float(self.flops_per_element)
        flops = n * o * f
        nbytes = n * (i + o) * e
        lines = (
            f"FLOPs = N x outputs x FLOPs per output element = {n:,} x {o} x {fmt_g(f)} = {fmt_count(flops)} ({fmt_si(flops, 'FLOP')})",
            f"bytes = N x (inputs + outputs) x {fmt_g(e)} B ({dtype}) = {n:,} x ({i} + {o}) x {fmt_g(e)} = {fmt_count(nbytes)} B ({fmt_bytes(nbytes)}), "
            "each element read and written once",
            f"intensity = {fmt_g(f * o)} FLOP / {fmt_g((i + o) * e)} B per element = {fmt_num(flops / nbytes, 4)} FLOP/byte",
        )
        label = f"elementwise {n} x {i} in {o} out {dtype}"
        dims = {"n": n, "inputs": i, "outputs": o, "flops_per_element": f}
        return WorkCount("elementwise", label, dtype, e, flops, nbytes, dims, {}, lines)


Shape = Gemm | Attention | Elementwise


def shape_from_options(
    gemm: Any = None,
    attention: Any = None,
    elementwise: Any = None,
    *,
    batch: Any = None,
    accumulate: bool = False,
    causal: bool = False,
    kv_heads: Any = None,
    q_len: Any = None,
    inputs: Any = None,
    outputs: Any = None,
    flops_per_element: Any = None,
) -> Shape | None:
    """The shape the options describe, or None when none of ``gemm``, ``attention``,
    ``elementwise`` is given. Takes what the CLI takes (``"8192x8192x4096"``,
    ``"1,32,4096,128"``, ``"2^28"``) or numbers and tuples (the Python API).

    Raises:
        UsageError: two shapes at once, an option of another shape (``--causal``
            with ``--gemm``), an option without its shape, or a bad dimension.
    """
    given = [f for f, v in (("--gemm", gemm), ("--attention", attention), ("--elementwise", elementwise)) if v is not None]
    if len(given) > 1:
        raise UsageError(f"give one shape: {' and '.join(given)} were both given")
    own = {"--gemm": {"--batch": batch, "--accumulate": accumulate or None},
           "--attention": {"--causal": causal or None, "--kv-heads": kv_heads, "--q-len": q_len},
           "--elementwise": {"--inputs": inputs, "--outputs": outputs, "--flops-per-element": flops_per_element}}
    kind = given[0] if given else None
    for shape_flag, opts in own.items():
        stray = [flag for flag, v in opts.items() if v is not None]
        if stray and shape_flag != kind:
            raise UsageError(f"{stray[0]} goes with {shape_flag}" + (f", not {kind}" if kind else f"; give {shape_flag} too"))
    if kind == "--gemm":
        m, n, k = parse_shape(gemm, GEMM_DIMS, "x", "--gemm", "8192x8192x8192")
        return Gemm(m, n, k, batch=1 if batch is None else parse_dimension(batch, "--batch"), accumulate=bool(accumulate))
    if kind == "--attention":
        b, h, s, d = parse_shape(attention, ATTENTION_DIMS, ",", "--attention", "1,32,4096,128")
        return Attention(b, h, s, d, causal=bool(causal),
                         kv_heads=None if kv_heads is None else parse_dimension(kv_heads, "--kv-heads"),
                         q_len=None if q_len is None else parse_dimension(q_len, "--q-len"))
    if kind == "--elementwise":
        if inputs is None or outputs is None:
            raise UsageError("--elementwise N needs --inputs I and --outputs O (arrays read and written), e.g. --inputs 2 --outputs 1")
        n_in = parse_quantity(inputs, "--inputs", allow_zero=True)
        if n_in != int(n_in):
            raise UsageError(f"--inputs {inputs!r} must be a whole number")
        f = 1.0 if flops_per_element is None else parse_quantity(flops_per_element, "--flops-per-element")
        return Elementwise(parse_dimension(elementwise, "--elementwise N"), int(n_in), parse_dimension(outputs, "--outputs"), f)
    return None


__all__ = ["ELEMENT_BYTES", "Attention", "Elementwise", "Gemm", "Shape", "WorkCount", "element_bytes", "shape_from_options"]
