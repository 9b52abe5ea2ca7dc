"""Number formats of the compute and roofline kernels' operands, as numpy bit patterns.

bfloat16 and tf32 (round to nearest even), FP8 E4M3 (OCP "fn"), fp16 pairs in one
32-bit word, and the 32-bit words of the roofline sweep (one fp32, or a pair of
fp16/bf16 halves, low half first). Pure numpy: no GPU, no CUDA.
"""

from __future__ import annotations

import numpy as np


def bf16_bits(x: np.ndarray) -> np.ndarray:
    """float32 values -> bfloat16 bit patterns (uint16), round to nearest even (no NaN inputs)."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return r.astype(np.uint16)


def bf16_to_float(bits: np.ndarray) -> np.ndarray:
    """bfloat16 bit patterns (uint16) -> float32 values."""
    return (np.asarray(bits, dtype=np.uint32) << 16).view(np.float32)


def tf32_round(x: np.ndarray) -> np.ndarray:
    """float32 values rounded to tf32 (10 mantissa bits; the low 13 bits zero), nearest even."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0xFFF + ((u >> 13) & 1)) >> 13) << 13
    return r.astype(np.uint32).view(np.float32)


def e4m3_to_float(codes: np.ndarray) -> np.ndarray:
    """FP8 E4M3 (OCP "fn": bias 7, no infinities, S.1111.111 is NaN) codes -> float32."""
    c = np.asarray(codes, dtype=np.uint8).astype(np.int64)
    s = np.where(c & 0x80, -1.0, 1.0)
    e = (c >> 3) & 0xF
    m = c & 0x7
    normal = (1.0 + m / 8.0) * np.exp2(e - 7.0)
    sub = (m / 8.0) * 2.0**-6
    v = s * np.where(e == 0, sub, normal)
    v = np.where((e == 15) & (m == 7), np.nan, v)
    return v.astype(np.float32)


def random_e4m3(rng: np.random.Generator, shape) -> np.ndarray:
    """Random E4M3 codes of moderate magnitude (exponent field 4..10: |v| in [1/8, 15]), random sign."""
    e = rng.integers(4, 11, size=shape)
    m = rng.integers(0, 8, size=shape)
    s = rng.integers(0, 2, size=shape)
    return ((s << 7) | (e << 3) | m).astype(np.uint8)


def half2_word(pair) -> int:
    """(low, high) floats -> one uint32 of two fp16 (low half = first); a scalar fills both halves."""
    lo, hi = (pair, pair) if np.isscalar(pair) else pair
    h = np.array([lo, hi], dtype=np.float16).view(np.uint16).astype(np.uint32)
    return int(h[0] | (h[1] << 16))


# ------------------------------------------------ 32-bit words of the sweep --


def bf16_round(x: np.ndarray) -> np.ndarray:
    """float64 values rounded to the nearest bfloat16 (8 significant bits), ties to even
    (normal range; zero stays zero). Returns float64."""
    m, e = np.frexp(np.asarray(x, dtype=np.float64))
    return np.ldexp(np.rint(m * 256.0), e - 8)


def words_to_values(words: np.ndarray, dtype: str) -> np.ndarray:
    """uint32 words -> float64 values: shape (n,) for fp32, (n, 2) for half pairs (low half first)."""
    w = np.ascontiguousarray(words, dtype=np.uint32)
    if dtype == "fp32":
        return w.view(np.float32).astype(np.float64)
    halves = w.view(np.uint16).reshape(-1, 2)
    if dtype == "fp16":
        return halves.view(np.float16).astype(np.float64)
    return (halves.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def values_to_words(values: np.ndarray, dtype: str) -> np.ndarray:
    """Inverse of :func:`words_to_values` (values must be representable)."""
    v = np.asarray(values, dtype=np.float64)
    if dtype == "fp32":
        return v.astype(np.float32).view(np.uint32)
    if dtype == "fp16":
        return np.ascontiguousarray(v.astype(np.float16)).view(np.uint32).reshape(-1)
    bits = (np.ascontiguousarray(v.astype(np.float32)).view(np.uint32) >> 16).astype(np.uint16)
    return np.ascontiguousarray(bits).view(np.uint32).reshape(-1)


def round_to_format(values: np.ndarray, dtype: str) -> np.ndarray:
    """float64 values rounded to ``dtype`` (fp32, fp16, bf16; nearest even), as float64."""
    if dtype == "fp32":
        return values.astype(np.float32).astype(np.float64)
    if dtype == "fp16":
        return values.astype(np.float16).astype(np.float64)
    return bf16_round(values)


def scalar_word(value: float | tuple[float, float], dtype: str) -> int:
    """The 32-bit argument for ``mul``/``add``: an fp32 value, or a pair of halves
    (a scalar fills both halves; rounded to nearest even)."""
    if dtype == "fp32":
        return int(np.float32(value).view(np.uint32))
    lo, hi = (value, value) if np.isscalar(value) else value
    return int(values_to_words(round_to_format(np.array([[lo, hi]], dtype=np.float64), dtype), dtype)[0])
