"""The FLOPs of a JAX program counted from its jaxpr, independent of any backend's cost model.

XLA's cost model counts a GPU executable's cuBLAS/cuDNN custom calls as nothing (a 73.09 GFLOP MLP
training step counted 51.9 MFLOP on an H100, 2026-12-07, JAX 0.11.2), so the jaxpr -- the program
before it is handed to XLA -- is counted here instead: :func:`count_flops` walks it, primitive by
primitive. Nothing here imports JAX: it reads any object shaped like a jaxpr (a ``ClosedJaxpr`` or
``Jaxpr``: ``.eqns``, or ``.jaxpr.eqns``; each equation ``eqn.primitive.name``, ``eqn.params``,
``eqn.invars``/``eqn.outvars`` whose ``.aval.shape`` is a tuple of ints), so stand-ins test it.

Convention: one multiply-add is 2 FLOP, as XLA's ``HloCostAnalysis`` counts (``kFmaFlops``):

- ``dot_general``: 2 x (elements of the output) x (product of the lhs's contracting dimensions);
- ``conv_general_dilated``: 2 x batch x output features x (input features per group) x the kernel
  taps that land on real input (padding and dilation holes left out, as XLA counts them), per
  output position; read from the dimension numbers (a convolution whose parameters cannot be read
  counts 0 and the notes say so);
- elementwise arithmetic (:data:`ELEMENTWISE`: ``add``, ``mul``, ``max``, comparisons,
  ``select_n``, ...): 1 FLOP per output element. Transcendentals (``exp``, ``log``, ``tanh``,
  ``logistic``, ``sqrt``, ...) count 1 FLOP each too, where XLA keeps them apart as
  ``transcendentals``; ``integer_pow`` counts 1 whatever its power;
- reductions (:data:`REDUCTIONS`: ``reduce_sum``, ``reduce_max``, ``argmax``, ``cumsum``, ...): 1
  FLOP per input element; windowed ones (:data:`WINDOWED`, pooling): output (or, for
  ``select_and_scatter_add``, source) elements x window size; ``scatter-add`` and its kin: 1 FLOP
  per update element;
- data movement, type conversion, bitwise ops, random bits, collectives (:data:`NO_FLOPS`): 0;
- a primitive known to do arithmetic that is not counted here (:data:`NOT_COUNTED`: FFTs, linear
  algebra, Pallas kernels, ...): 0, and the notes name it (the count is a lower bound);
- any other primitive with sub-jaxprs in its parameters (``jit``/``pjit``, ``custom_jvp_call``,
  ``custom_vjp_call``, ``remat``/``checkpoint``, ``closed_call``, ``shard_map``, ...): the sum of
  its sub-jaxprs; ``scan``: its body x ``length``; ``cond``: its most expensive branch (an upper
  bound where the branches differ; the notes say so); ``while``: its condition and body counted
  once (the trip count is not known before the run: the count is a lower bound; the notes say so);
- any other primitive: 0, and the notes name it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterator

#: FLOPs of one multiply-add (XLA's ``HloCostAnalysis::kFmaFlops``).
FMA_FLOPS = 2
#: Elementwise primitives: 1 FLOP per output element.
ELEMENTWISE = frozenset({
    "add", "add_any", "sub", "mul", "div", "rem", "max", "min", "neg", "abs", "sign", "floor", "ceil",
    "round", "nextafter", "square", "integer_pow", "pow", "exp", "exp2", "expm1", "log", "log1p", "tanh",
    "logistic", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "asinh", "acosh",
    "atanh", "sqrt", "rsqrt", "cbrt", "erf", "erfc", "erf_inv", "lgamma", "digamma", "igamma", "igammac",
    "igamma_grad_a", "random_gamma_grad", "bessel_i0e", "bessel_i1e", "polygamma", "zeta",
    "regularized_incomplete_beta", "select_n", "clamp", "eq", "ne", "lt", "le", "gt", "ge", "is_finite",
})
#: Reductions: 1 FLOP per input element.
REDUCTIONS = frozenset({
    "reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and", "reduce_or", "reduce_xor",
    "argmax", "argmin", "cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp", "reduce",
})
#: Windowed reductions (pooling and its gradients): elements x window size (``window_dimensions``).
WINDOWED = frozenset({"reduce_window_sum", "reduce_window_max", "reduce_window_min", "reduce_window",
                      "select_and_gather_add", "select_and_scatter_add", "select_and_scatter"})
#: Scatters that combine: 1 FLOP per update element (operand 2).
SCATTER_COMBINE = frozenset({"scatter-add", "scatter_add", "scatter-mul", "scatter_mul", "scatter-min",
                             "scatter_min", "scatter-max", "scatter_max", "scatter-sub", "scatter_sub"})
#: Primitives that do no floating-point arithmetic: 0 FLOP.
NO_FLOPS = frozenset({
    "reshape", "broadcast_in_dim", "convert_element_type", "bitcast_convert_type", "transpose", "squeeze",
    "expand_dims", "slice", "dynamic_slice", "dynamic_update_slice", "gather", "scatter", "concatenate",
    "pad", "rev", "iota", "copy", "copy_p", "device_put", "sort", "top_k", "split",
    "random_bits", "random_seed", "random_wrap", "random_unwrap", "random_fold_in", "random_split",
    "threefry2x32", "and", "or", "not", "xor", "shift_left", "shift_right_logical", "shift_right_arithmetic",
    "population_count", "clz", "reduce_precision", "real", "imag", "complex", "conj", "optimization_barrier",
    "axis_index", "psum", "pmax", "pmin", "ppermute", "pbroadcast", "all_gather", "all_to_all",
    "reduce_scatter", "psum_invariant", "pvary", "sharding_constraint", "mesh_cast", "reshard",
    "debug_callback", "platform_index", "empty", "create_token", "after_all", "tie_in", "broadcast",
})
#: Primitives that do arithmetic this module does not count: 0 FLOP, named in the notes.
NOT_COUNTED = frozenset({
    "fft", "cholesky", "cholesky_update", "triangular_solve", "lu", "lu_pivots_to_permutation", "qr",
    "householder_product", "geqrf", "geqp3", "eig", "eigh", "svd", "schur", "hessenberg", "tridiagonal",
    "tridiagonal_solve", "custom_linear_solve", "pallas_call", "triton_kernel_call", "ragged_dot",
    "ragged_dot_general", "pure_callback", "io_callback",
})
#: Above this many (output position, kernel tap) pairs in one spatial dimension, a convolution's
#: taps are all counted (padding included: an upper bound) rather than checked one by one.
CONV_TAPS_CHECKED = 1_000_000


@dataclass(frozen=True)
class JaxprFlops:
    """``flops`` (FLOP, one call of the program; see the module docstring) and ``notes``: short
    sentences on where the count is a bound or left something out (empty when it is exact)."""

    flops: float
    notes: tuple[str, ...] = ()


def count_flops(jaxpr: Any) -> JaxprFlops:
    """The FLOPs of ``jaxpr`` (a ``ClosedJaxpr``, a ``Jaxpr``, or a stand-in with ``.eqns``).

    Raises:
        TypeError: ``jaxpr`` has no equations (neither ``.eqns`` nor ``.jaxpr.eqns``).
    """
    if _body(jaxpr) is None:
        raise TypeError(f"{type(jaxpr).__name__} is not a jaxpr: it has no equations")
    return _Counter().total(jaxpr)


def _body(jaxpr: Any):
    """The object holding ``jaxpr``'s equations (a ClosedJaxpr's inner Jaxpr), or None."""
    inner = getattr(jaxpr, "jaxpr", None)
    if inner is not None and hasattr(inner, "eqns"):
        return inner
    return jaxpr if hasattr(jaxpr, "eqns") else None


def _sub_jaxprs(value: Any) -> Iterator[Any]:
    """The jaxprs in a parameter's value: itself, or those inside a tuple, list or dict of them."""
    if _body(value) is not None:
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _sub_jaxprs(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _sub_jaxprs(v)


def _elements(var: Any) -> int:
    """Elements of ``var``'s value (``var.aval.shape``; 0 for a token or anything without a shape).

    Raises:
        ValueError: a dimension that is not a number (a symbolic shape).
    """
    shape = getattr(getattr(var, "aval", None), "shape", None)
    if shape is None:
        return 0
    return math.prod(int(d) for d in shape)


def _shape(var: Any) -> tuple[int, ...]:
    return tuple(int(d) for d in var.aval.shape)


def _valid_taps(out: int, kernel: int, inp: int, stride: int, pad_lo: int, lhs_dil: int, rhs_dil: int) -> int:
    """The (output position, kernel tap) pairs of one spatial dimension whose tap lands on a real input
    element: not in the padding, not in a hole of the input's dilation."""
    if out * kernel > CONV_TAPS_CHECKED:
        return out * kernel
    last = (inp - 1) * lhs_dil
    n = 0
    for o in range(out):
        base = o * stride - pad_lo
        for k in range(kernel):
            p = base + k * rhs_dil
            if 0 <= p <= last and p % lhs_dil == 0:
                n += 1
    return n


def conv_flops(eqn: Any) -> float:
    """FLOPs of one ``conv_general_dilated`` equation (see the module docstring).

    Raises:
        KeyError, AttributeError, TypeError, ValueError, IndexError: parameters it cannot read.
    """
    p = eqn.params
    dn = p["dimension_numbers"]
    lhs_spec, rhs_spec, out_spec = dn.lhs_spec, dn.rhs_spec, dn.out_spec
    lhs, rhs, out = _shape(eqn.invars[0]), _shape(eqn.invars[1]), _shape(eqn.outvars[0])
    spatial = len(lhs_spec) - 2
    strides = tuple(p.get("window_strides") or (1,) * spatial)
    padding = p.get("padding") or ((0, 0),) * spatial
    if isinstance(padding, str):
        raise ValueError(f"padding {padding!r} is not explicit")
    lhs_dil = tuple(p.get("lhs_dilation") or (1,) * spatial)
    rhs_dil = tuple(p.get("rhs_dilation") or (1,) * spatial)
    taps = 1
    for i in range(spatial):
        taps *= _valid_taps(out[out_spec[2 + i]], rhs[rhs_spec[2 + i]], lhs[lhs_spec[2 + i]], int(strides[i]),
                            int(padding[i][0]), int(lhs_dil[i]), int(rhs_dil[i]))
    return float(FMA_FLOPS * out[out_spec[0]] * out[out_spec[1]] * rhs[rhs_spec[1]] * taps)


def dot_flops(eqn: Any) -> float:
    """FLOPs of one ``dot_general`` equation: 2 x output elements x the lhs's contracting sizes.

    Raises:
        KeyError, TypeError, ValueError, IndexError: dimension numbers it cannot read.
    """
    (lhs_contract, _), _ = eqn.params["dimension_numbers"]
    lhs = _shape(eqn.invars[0])
    return float(FMA_FLOPS * _elements(eqn.outvars[0]) * math.prod(lhs[d] for d in lhs_contract))


class _Counter:
    """One count: the notes gathered on the way, and each sub-jaxpr's count kept by identity."""

    def __init__(self) -> None:
        self.notes: dict[str, None] = {}
        self.unknown: set[str] = set()
        self.not_counted: set[str] = set()
        self.seen: dict[int, float] = {}

    def total(self, jaxpr) -> JaxprFlops:
        flops = self.walk(jaxpr)
        if self.not_counted:
            self.note(f"not counted (0 FLOP: the count is a lower bound): {', '.join(sorted(self.not_counted))}")
        if self.unknown:
            self.note(f"no rule here, counted as 0 FLOP: {', '.join(sorted(self.unknown))}")
        return JaxprFlops(flops, tuple(self.notes))

    def note(self, text: str) -> None:
        self.notes[text] = None

    def walk(self, jaxpr) -> float:
        body = _body(jaxpr)
        key = id(body)
        if key not in self.seen:
            self.seen[key] = sum(self.eqn(e) for e in body.eqns)
        return self.seen[key]

    def eqn(self, e) -> float:
        name = str(getattr(e.primitive, "name", e.primitive))
        params = getattr(e, "params", None) or {}
        try:
            return self._eqn(name, params, e)
        except Exception as exc:  # noqa: BLE001 - parameters or shapes it cannot read (symbolic dims, ...)
            self.note(f"{name} not counted (its parameters could not be read: {type(exc).__name__})")
            return 0.0

    def _eqn(self, name: str, params, e) -> float:
        if name == "dot_general":
            return dot_flops(e)
        if name == "conv_general_dilated":
            return conv_flops(e)
        if name in ELEMENTWISE:
            return float(_elements(e.outvars[0]))
        if name in REDUCTIONS:
            return float(_elements(e.invars[0]))
        if name in WINDOWED:
            window = math.prod(int(d) for d in params["window_dimensions"])
            src = e.invars[0] if name.startswith("select_and_scatter") else e.outvars[0]  # (source, operand)
            return float(_elements(src) * window)
        if name in SCATTER_COMBINE:
            return float(_elements(e.invars[2]))
        if name in NO_FLOPS:
            return 0.0
        if name in NOT_COUNTED:
            self.not_counted.add(name)
            return 0.0
        if name == "scan":
            return self.walk(params["jaxpr"]) * int(params["length"])
        if name == "cond":
            costs = [self.walk(b) for b in params["branches"]]
            if len(set(costs)) > 1:
                self.note("cond: the most expensive branch counted (an upper bound)")
            return max(costs, default=0.0)
        if name == "while":
            body = self.walk(params["body_jaxpr"]) + self.walk(params["cond_jaxpr"])
            if body > 0:
                self.note("while loop bodies counted once (their trip count is not known before the run): "
                          "a lower bound")
            return body
        subs = [j for v in params.values() for j in _sub_jaxprs(v)]
        if subs:
            size = getattr(params.get("mesh"), "size", 1)
            if name == "shard_map" and isinstance(size, int) and size > 1:
                self.note(f"shard_map bodies counted once: one device's share of {size}")
            return sum(self.walk(j) for j in subs)
        self.unknown.add(name)
        return 0.0


__all__ = ["CONV_TAPS_CHECKED", "ELEMENTWISE", "FMA_FLOPS", "JaxprFlops", "NOT_COUNTED", "NO_FLOPS", "REDUCTIONS",
           "SCATTER_COMBINE", "WINDOWED", "conv_flops", "count_flops", "dot_flops"]
