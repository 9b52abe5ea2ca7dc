"""Tensor-core operands and register-fragment layouts: how gpuwhy's mma.sync and wgmma kernels
hold their matrices, so their results can be checked against numpy.

- :class:`Operand`: a random matrix exactly representable in a tensor-core input format
  (tf32, fp16, bf16, fp8 E4M3, int8), as raw bits and as float64 values;
- the PTX ISA's fragment layouts (which lane holds which element of A, B and the
  accumulator, for mma.sync m16n8k* and wgmma m64nNk*), packing into 32-bit registers
  and unpacking of the kernels' output;
- the 128-byte swizzled shared-memory layout the wgmma kernels read.

Pure numpy: no GPU, no CUDA. The constants mirror ``microbench/compute_mma.cu`` and
``compute_wgmma.cu`` (tests/test_compute_kernels.py checks they stay in step).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import UsageError
from .number_formats import bf16_bits, bf16_to_float, e4m3_to_float, random_e4m3, tf32_round

#: Accumulator tiles per warp in the mma.sync kernels (compute_mma.cu).
MMA_ACC = 8
#: wgmma instructions per pass over the 128-byte K of a tile (compute_wgmma.cu).
WG_KSTEPS = 4
#: Threads of one warpgroup (four warps).
WG_THREADS = 128


@dataclass(frozen=True)
class Operand:
    """A random matrix in a tensor-core input format.

    Attributes:
        bits: raw element bits, shape (rows, cols), unsigned (uint16/uint8/uint32).
        values: the same elements as float64 (the reference's input).
        elem_bits: 32 (tf32), 16 (fp16/bf16) or 8 (fp8/int8).
    """

    bits: np.ndarray
    values: np.ndarray
    elem_bits: int


ELEM_BITS = {"tf32": 32, "fp16": 16, "bf16": 16, "fp8": 8, "int8": 8}


def random_operand(rng: np.random.Generator, precision: str, rows: int, cols: int) -> Operand:
    """A (rows x cols) matrix of fresh random, non-zero-mean-free values exactly representable in ``precision``.

    Raises:
        UsageError: for a precision that is not a tensor-core input format.
    """
    shape = (rows, cols)
    if precision == "fp16":
        v = rng.standard_normal(shape).astype(np.float16)
        return Operand(v.view(np.uint16), v.astype(np.float64), 16)
    if precision == "bf16":
        b = bf16_bits(rng.standard_normal(shape).astype(np.float32))
        return Operand(b, bf16_to_float(b).astype(np.float64), 16)
    if precision == "tf32":
        v = tf32_round(rng.standard_normal(shape).astype(np.float32))
        return Operand(v.view(np.uint32), v.astype(np.float64), 32)
    if precision == "fp8":
        c = random_e4m3(rng, shape)
        return Operand(c, e4m3_to_float(c).astype(np.float64), 8)
    if precision == "int8":
        v = rng.integers(-64, 65, size=shape).astype(np.int8)
        return Operand(v.view(np.uint8), v.astype(np.float64), 8)
    raise UsageError(f"{precision!r} is not a tensor-core input format; use one of: {', '.join(ELEM_BITS)}")


# ------------------------------------------------------- fragment layouts --
# Register-fragment layouts of the PTX ISA ("Matrix fragments for mma.m16n8k*"
# and "wgmma register fragments"): lane = 4 * groupID + threadID_in_group
# (g = lane // 4, t = lane % 4); element i of a thread's fragment sits in
# 32-bit register i // epr at bits (i % epr) * elem_bits, epr = 32 // elem_bits.


def a_frag_rc(elem_bits: int, i, g, t):
    """(row, col) inside a 16 x K A tile of fragment element ``i`` (mma.sync m16n8k*, row-major A;
    also each warp's 16-row slice of a wgmma A held in registers). Works on numpy arrays."""
    if elem_bits == 16:   # m16n8k16: a0..a7
        return g + 8 * ((i // 2) % 2), 2 * t + (i % 2) + 8 * (i // 4)
    if elem_bits == 8:    # m16n8k32: a0..a15
        return g + 8 * ((i // 4) % 2), 4 * t + (i % 4) + 16 * (i // 8)
    if elem_bits == 32:   # m16n8k8 tf32: a0..a3
        return g + 8 * (i % 2), t + 4 * (i // 2)
    raise ValueError(f"no A fragment layout for {elem_bits}-bit elements")


def b_frag_kn(elem_bits: int, i, g, t):
    """(k, n) inside a K x 8 B tile (mma.sync, column-major B) of fragment element ``i``."""
    if elem_bits == 16:   # b0..b3
        return 2 * t + (i % 2) + 8 * (i // 2), g
    if elem_bits == 8:    # b0..b7
        return 4 * t + (i % 4) + 16 * (i // 4), g
    if elem_bits == 32:   # b0..b1
        return t + 4 * i, g
    raise ValueError(f"no B fragment layout for {elem_bits}-bit elements")


def acc_rc(r, g, t):
    """(row, col) in the 16 x 8 C/D tile of accumulator register ``r`` (0..3), mma.sync."""
    return g + 8 * (r // 2), 2 * t + (r % 2)


def wgmma_acc_rc(r, thread):
    """(row, col) in the 64 x N wgmma accumulator of register ``r`` of warpgroup thread ``thread`` (0..127)."""
    w, lane = thread // 32, thread % 32
    g, t = lane // 4, lane % 4
    return 16 * w + g + 8 * ((r // 2) % 2), 8 * (r // 4) + 2 * t + (r % 2)


def mma_k(elem_bits: int) -> int:
    """K of one mma.sync for this element width: 16 (16-bit), 32 (8-bit), 8 (tf32)."""
    return {16: 16, 8: 32, 32: 8}[elem_bits]


def pack_words(bits: np.ndarray, rows: np.ndarray, cols: np.ndarray, elem_bits: int) -> np.ndarray:
    """Pack elements ``bits[rows, cols]`` into uint32 words.

    ``rows`` and ``cols`` have shape (..., epr): the last axis lists the elements
    of one 32-bit word, lowest bits first. Returns shape (...) uint32.
    """
    e = bits[rows, cols].astype(np.uint64)
    shifts = (np.arange(e.shape[-1], dtype=np.uint64) * np.uint64(elem_bits))
    return np.bitwise_or.reduce(e << shifts, axis=-1).astype(np.uint32)


def mma_a_fragments(a: Operand) -> np.ndarray:
    """A (16 x K) -> the 32 x 4 uint32 words mma.sync lanes hold, flattened as ``[lane * 4 + r]``."""
    epr = 32 // a.elem_bits
    lane = np.arange(32)[:, None, None]
    r = np.arange(4)[None, :, None]
    e = np.arange(epr)[None, None, :]
    rows, cols = a_frag_rc(a.elem_bits, r * epr + e, lane // 4, lane % 4)
    return pack_words(a.bits, rows, cols, a.elem_bits).reshape(-1)


def mma_b_fragments(b: Operand) -> np.ndarray:
    """B (K x 8) -> the 32 x 2 uint32 words mma.sync lanes hold, flattened as ``[lane * 2 + r]``."""
    epr = 32 // b.elem_bits
    lane = np.arange(32)[:, None, None]
    r = np.arange(2)[None, :, None]
    e = np.arange(epr)[None, None, :]
    k, n = b_frag_kn(b.elem_bits, r * epr + e, lane // 4, lane % 4)
    return pack_words(b.bits, k, np.broadcast_to(n, k.shape), b.elem_bits).reshape(-1)


def mma_unpack_acc(flat: np.ndarray, warps: int) -> np.ndarray:
    """mma.sync output ``out[((warp * MMA_ACC + j) * 32 + lane) * 4 + r]`` -> (warps, MMA_ACC, 16, 8)."""
    v = np.asarray(flat).reshape(warps, MMA_ACC, 32, 4)
    lane = np.arange(32)[:, None]
    r = np.arange(4)[None, :]
    rows, cols = acc_rc(r, lane // 4, lane % 4)
    out = np.empty((warps, MMA_ACC, 16, 8), dtype=v.dtype)
    out[:, :, rows, cols] = v
    return out


def wgmma_kstep_elems(elem_bits: int) -> int:
    """K elements one wgmma consumes (32 bytes of K): 16 (16-bit), 32 (8-bit), 8 (tf32)."""
    return 256 // elem_bits


def wgmma_a_fragments(a: Operand) -> np.ndarray:
    """A (64 x 128 bytes of K) -> per-thread register fragments ``[(t * WG_KSTEPS + k) * 4 + r]``, uint32."""
    epr = 32 // a.elem_bits
    t = np.arange(WG_THREADS)[:, None, None, None]
    k = np.arange(WG_KSTEPS)[None, :, None, None]
    r = np.arange(4)[None, None, :, None]
    e = np.arange(epr)[None, None, None, :]
    lane = t % 32
    rows, cols = a_frag_rc(a.elem_bits, r * epr + e, lane // 4, lane % 4)
    rows = rows + 16 * (t // 32)
    cols = cols + k * wgmma_kstep_elems(a.elem_bits)
    rows, cols = np.broadcast_arrays(rows, cols)
    return pack_words(a.bits, rows, cols, a.elem_bits).reshape(-1)


def wgmma_unpack_acc(flat: np.ndarray, slots: int, n: int, nacc: int) -> np.ndarray:
    """wgmma output ``out[((slot * R + j * n/2 + r) * 128 + t]`` -> (slots, nacc, 64, n)."""
    nreg = n // 2
    v = np.asarray(flat).reshape(slots, nacc, nreg, WG_THREADS)
    r = np.arange(nreg)[:, None]
    t = np.arange(WG_THREADS)[None, :]
    rows, cols = wgmma_acc_rc(r, t)
    out = np.empty((slots, nacc, 64, n), dtype=v.dtype)
    out[:, :, rows, cols] = v
    return out


def row_bytes(op: Operand) -> np.ndarray:
    """The matrix's element bits as bytes, one row per matrix row (little-endian elements)."""
    dt = {32: "<u4", 16: "<u2", 8: "u1"}[op.elem_bits]
    return np.ascontiguousarray(op.bits.astype(dt)).view(np.uint8).reshape(op.bits.shape[0], -1)


def swizzle_128b(rows: np.ndarray) -> np.ndarray:
    """Lay out (R x 128) bytes in the wgmma 128-byte-swizzled K-major layout; returns R*128 bytes.

    Row ``r`` starts at byte ``128 r``; its 16-byte chunk ``c`` is stored at chunk
    ``c XOR (r % 8)`` (address bits 4-6 XOR bits 7-9; Swizzle<3,4,3>), so the
    tile must start on a 1024-byte boundary.
    """
    rows = np.asarray(rows, dtype=np.uint8)
    if rows.ndim != 2 or rows.shape[1] != 128:
        raise ValueError(f"need rows of 128 bytes, got shape {rows.shape}")
    n = rows.shape[0]
    chunks = rows.reshape(n, 8, 16)
    out = np.empty_like(chunks)
    r = np.arange(n)[:, None]
    c = np.arange(8)[None, :]
    out[r, c ^ (r % 8)] = chunks
    return out.reshape(-1)


def unswizzle_128b(flat: np.ndarray) -> np.ndarray:
    """Inverse of :func:`swizzle_128b`: R*128 bytes -> (R x 128)."""
    b = np.asarray(flat, dtype=np.uint8).reshape(-1, 8, 16)
    r = np.arange(b.shape[0])[:, None]
    c = np.arange(8)[None, :]
    return b[r, c ^ (r % 8)].reshape(-1, 128)


def wgmma_tiles(a: Operand, b: Operand) -> np.ndarray:
    """The 40 KiB the wgmma kernels copy into shared memory: swizzled A (64 rows), then swizzled B (256 rows)."""
    ra, rb = row_bytes(a), row_bytes(b)
    if ra.shape != (64, 128) or rb.shape != (256, 128):
        raise ValueError(f"A must be 64 x 128 bytes and B 256 x 128 bytes, got {ra.shape} and {rb.shape}")
    return np.concatenate([swizzle_128b(ra), swizzle_128b(rb)])
