"""Compute ceilings: what the math units really deliver (FMA on CUDA cores, tensor cores).

Entry point for the CLI (``gpuwhy bench --compute``, wired by the CLI owner)::

    from gpuwhy.engine.context import open_device
    from gpuwhy.bench.compute import run_compute

    with open_device("0") as ctx:
        results = run_compute(ctx)            # list[ComputeResult], one per case
        results = run_compute(ctx, ["fp32", "bf16"], variants="all")

Each case is one small class (:class:`FmaCase`, :class:`MmaCase`,
:class:`WgmmaCase`): the kernel in ``microbench/compute_*.cu``, its launch
shape, the FLOPs one launch does, and a verify step that runs the kernel on
small random inputs and compares with numpy (float64 reference; relative
Frobenius error bounds from METHOD-style rules: fp32 CUDA-core arithmetic is
emulated bit-exactly or to 1e-6, fp16/bf16/tf32 tensor products to 1e-3,
fp8 to 1e-2, int8 exactly). A wrong result raises
:class:`~gpuwhy.errors.MeasurementError` (exit 4) and nothing is timed.

Timing: the loop count is calibrated so one launch takes ``target_s`` (30 ms
by default), then ``reps`` launches are timed with CUDA events (median). The SM
clock is sampled through NVML every few milliseconds while the timed launches
run; each figure is reported beside

- the spec sheet's dense peak (``Sheet.peak_tflops``; None where the sheet has
  no such key), and
- the clock-derived peak: SMs x dense FLOP per clock per SM
  (:data:`RATE_PER_SM_CLK`) x the median sampled SM clock. A throttled clock
  lowers this peak and explains a low figure.

Tensor-core figures are the instruction-issue peak: operands sit in registers
and shared memory and never stream from DRAM, so a real GEMM reaches less.

Precisions: ``fp64``, ``fp32``, ``fp16_nontensor`` (half2 FMA on CUDA cores),
and on tensor cores ``tf32``, ``fp16``, ``bf16`` (fp32 accumulate), ``fp8``
(e4m3, fp32 accumulate; sm_89 and newer) and ``int8`` (s32 accumulate; TOPS).
Which kernel measures a tensor precision depends on the architecture
(:func:`select_cases`): wgmma on sm_90 (plus the mma.sync row for
comparison), mma.sync on sm_80/86/89/120, and "not measured" on sm_100/103/110
(their tcgen05 kernels are not written) and older chips.

Pure parts (FLOP counts, fragment layouts, format conversions, swizzling,
verify comparisons, peaks) need no GPU and are tested without one.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable, ClassVar, Sequence

import numpy as np

from ..archs import parse_arch
from ..device.sample import ClockSampler
from ..errors import MeasurementError, UsageError

FMA_SOURCE = "compute_fma.cu"
MMA_SOURCE = "compute_mma.cu"
WGMMA_SOURCE = "compute_wgmma.cu"

#: Every precision gpuwhy can measure, in report order.
PRECISIONS = ("fp64", "fp32", "fp16_nontensor", "tf32", "fp16", "bf16", "fp8", "int8")
TENSOR_PRECISIONS = ("tf32", "fp16", "bf16", "fp8", "int8")

#: Mirrors of the kernels' compile-time constants (tests/test_compute_kernels.py
#: reads the .cu files and checks these stay in step).
FMA_CHAINS = 8
FMA_UNROLL = {"fp32": 64, "fp64": 32, "fp16_nontensor": 64}
MMA_ACC = 8
MMA_UNROLL = 2
WG_KSTEPS = 4
WG_TILE_A_BYTES = 64 * 128
WG_TILE_B_BYTES = 256 * 128
FMA_BLOCK = 256
MMA_BLOCK = 256
WG_THREADS = 128

#: Dense FLOP (int8: integer ops) per clock per SM, by (major, minor) compute
#: capability. Sources: NVIDIA's architecture whitepapers (V100, A100, H100),
#: as peak / (SMs x boost clock): e.g. H100 SXM bf16 989.4 TFLOP/s = 132 SMs x
#: 4096 x 1830 MHz; FP64 33.5 = 132 x 128 x 1980 MHz; FP16 non-tensor
#: 133.8 = 132 x 512 x 1980 MHz; A100 bf16 312 = 108 x 2048 x 1410 MHz.
#: Consumer and workstation parts of one architecture differ (GeForce halves
#: fp32-accumulate tensor rates), so tensor rates are only listed where every
#: part of the architecture shares them; elsewhere the clock-derived peak is None.
#: FP32 comes from gpuwhy.device.derive.fp32_lanes_per_sm (x 2).
RATE_PER_SM_CLK: dict[tuple[int, int], dict[str, int]] = {
    (7, 0): {"fp64": 64, "fp16_nontensor": 256, "fp16": 1024},
    (7, 5): {"fp64": 4, "fp16_nontensor": 256},
    (8, 0): {"fp64": 64, "fp16_nontensor": 512, "tf32": 1024, "fp16": 2048, "bf16": 2048, "int8": 4096},
    (8, 6): {"fp64": 4, "fp16_nontensor": 256},
    (8, 9): {"fp64": 4, "fp16_nontensor": 256},
    (9, 0): {"fp64": 128, "fp16_nontensor": 512, "tf32": 2048, "fp16": 4096, "bf16": 4096, "fp8": 8192, "int8": 8192},
    (12, 0): {"fp64": 4, "fp16_nontensor": 256},
}

#: Relative-error bounds of the verify step (‖got − ref‖ / ‖ref‖, float64 reference).
VERIFY_BOUND = {
    "fp64": 1e-13, "fp32": 1e-6, "fp16_nontensor": 1e-3,
    "tf32": 1e-3, "fp16": 1e-3, "bf16": 1e-3, "fp8": 1e-2, "int8": 0.0,
}

TENSOR_NOTE = ("instruction-issue peak: operands stay in registers/shared memory; "
               "a real GEMM, which must also stream its operands, reaches less")


# ------------------------------------------------------------------ results --


@dataclass(frozen=True)
class ComputeResult:
    """One compute-ceiling measurement (or why there is none).

    Attributes:
        precision: one of :data:`PRECISIONS`.
        unit: ``cuda cores`` or ``tensor cores``.
        kernel: the kernel's name (``fma_fp32``, ``wgmma_bf16_ss_n256``, ...).
        instruction: what the loop issues (``FFMA``, ``wgmma m64n256k16 (A, B in smem)``, ...).
        status: ``measured``, ``not measured`` or ``unsupported``.
        tflops: measured rate, 1e12 FLOP/s (int8: 1e12 integer op/s); None unless measured.
        median_s, min_s, max_s, cv, reps: per-launch timing (s) of the timed launches.
        flops_per_launch: FLOPs one timed launch does.
        iters: loop trip count of the timed launches.
        grid, block: launch shape.
        sm_clock_mhz: median SM clock sampled through NVML while timing (MHz), None if unread.
        sm_clock_min_mhz, sm_clock_max_mhz: range of those samples (MHz).
        clock_samples: how many clock samples were taken.
        power_w: median board power sampled through NVML while timing (W), None if unread.
        clock_events: NVML clock-event reasons seen while timing (``sw_power_cap``, ...; names
            from :func:`gpuwhy.bench.health.reason_names`): why the clock was below its maximum.
        clock_peak_tflops: SMs x :data:`RATE_PER_SM_CLK` x sampled clock (TFLOP/s), None if unknown.
        sheet_peak_tflops: the spec sheet's dense peak for ``sheet_key`` (TFLOP/s), None if absent.
        sheet_key: the ``peak_tflops`` key compared with.
        verify: what the correctness check found (e.g. ``rel err 2.3e-07 <= 1e-03``).
        note: anything a reader must know (emulation, not measured because ...).
        arch: the compiled architecture (``sm_90a``).
        variant: the case's label where one kernel runs in several launch/build variants
            (``wgmma_bf16_ss_n256/wg3``); else the kernel name.
    """

    precision: str
    unit: str
    kernel: str
    instruction: str
    status: str
    tflops: float | None = None
    median_s: float | None = None
    min_s: float | None = None
    max_s: float | None = None
    cv: float | None = None
    reps: int = 0
    flops_per_launch: int = 0
    iters: int = 0
    grid: int = 0
    block: int = 0
    sm_clock_mhz: float | None = None
    sm_clock_min_mhz: float | None = None
    sm_clock_max_mhz: float | None = None
    clock_samples: int = 0
    power_w: float | None = None
    clock_events: tuple[str, ...] = ()
    clock_peak_tflops: float | None = None
    sheet_peak_tflops: float | None = None
    sheet_key: str = ""
    verify: str = ""
    note: str = ""
    arch: str = ""
    variant: str = ""

    @property
    def pct_of_clock_peak(self) -> float | None:
        """Measured rate as % of the clock-derived peak, or None."""
        return percent(self.tflops, self.clock_peak_tflops)

    @property
    def pct_of_sheet(self) -> float | None:
        """Measured rate as % of the sheet's dense peak, or None."""
        return percent(self.tflops, self.sheet_peak_tflops)

    def to_dict(self) -> dict:
        """Plain data for ``--json`` (units in the key names; percentages in %)."""
        d = dict(self.__dict__)
        d["clock_events"] = list(self.clock_events)
        d["pct_of_clock_peak"] = self.pct_of_clock_peak
        d["pct_of_sheet"] = self.pct_of_sheet
        return d


def percent(value: float | None, peak: float | None) -> float | None:
    """100 * value / peak, or None when either is missing or the peak is not positive."""
    if value is None or peak is None or not peak > 0:
        return None
    return 100.0 * value / peak


# -------------------------------------------------------------------- peaks --


def rate_per_sm_clk(precision: str, cc: tuple[int, int], fp32_lanes: int | None = None) -> int | None:
    """Dense FLOP per clock per SM for ``precision`` at compute capability ``cc``, or None if unknown.

    FP32 is 2 x the FP32 lanes (``fp32_lanes`` if given, e.g. from the sheet,
    else :func:`gpuwhy.device.derive.fp32_lanes_per_sm`). Others: :data:`RATE_PER_SM_CLK`.
    """
    if precision == "fp32":
        if fp32_lanes is None:
            from ..device.derive import fp32_lanes_per_sm

            fp32_lanes = fp32_lanes_per_sm(cc)
        return 2 * int(fp32_lanes) if fp32_lanes else None
    return RATE_PER_SM_CLK.get(tuple(cc), {}).get(precision)


def clock_peak_tflops(sm_count: int, rate: int | None, clock_mhz: float | None) -> float | None:
    """``sm_count x rate (FLOP/clk/SM) x clock_mhz * 1e6`` in TFLOP/s, or None if a factor is missing."""
    if not rate or not clock_mhz or sm_count <= 0:
        return None
    return sm_count * rate * clock_mhz * 1e6 / 1e12


def sheet_peak(sheet, precision: str) -> tuple[float | None, str]:
    """(the sheet's dense TFLOP/s for ``precision``, the key used); (None, key) if absent or no sheet."""
    key = precision
    if sheet is None:
        return None, key
    v = sheet.peak_tflops.get(key)
    return (float(v) if v is not None else None), key


# ------------------------------------------------------- number formats --


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


# ------------------------------------------------- CUDA-core references --


def fma_initial(precision: str, total_threads: int, init_step: float) -> np.ndarray:
    """Initial chain values, shape (FMA_CHAINS, total_threads), as the kernels compute them.

    fp32/fp64: ``((tid * 8 + j) % 61) * init_step`` in that precision. fp16_nontensor:
    that product in fp32 rounded to fp16, the high lane its negation; returned as
    (FMA_CHAINS, total_threads, 2) float16 (lane 0 = low half).
    """
    tid = np.arange(total_threads, dtype=np.uint64)[None, :]
    j = np.arange(FMA_CHAINS, dtype=np.uint64)[:, None]
    k = ((tid * FMA_CHAINS + j) % 61).astype(np.float64)
    if precision == "fp64":
        return k * np.float64(init_step)
    if precision == "fp32":
        return k.astype(np.float32) * np.float32(init_step)
    if precision == "fp16_nontensor":
        v = (k.astype(np.float32) * np.float32(init_step)).astype(np.float16)
        return np.stack([v, -v], axis=-1)
    raise UsageError(f"no FMA kernel for {precision!r}")


def fma_reference(precision: str, x0: np.ndarray, mul, add, steps: int) -> np.ndarray:
    """``steps`` fused multiply-adds ``x <- x * mul + add`` on every element of ``x0``.

    fp16: emulated exactly (the product and sum of fp16 values are exact in
    float64; one rounding to fp16 per step, as fma.rn does). fp32: float64
    arithmetic rounded to fp32 each step (matches a fused FMA but for rare
    double roundings). fp64: unfused float64 (one extra rounding per step).
    ``mul``/``add`` are scalars, or length-2 (low, high lane) for fp16.
    """
    if precision == "fp16_nontensor":
        x = x0.astype(np.float64)
        m = np.asarray(mul, dtype=np.float16).astype(np.float64)
        a = np.asarray(add, dtype=np.float16).astype(np.float64)
        for _ in range(steps):
            x = (x * m + a).astype(np.float16).astype(np.float64)
        return x.astype(np.float16)
    if precision == "fp32":
        x = x0.astype(np.float32)
        m, a = np.float64(np.float32(mul)), np.float64(np.float32(add))
        for _ in range(steps):
            x = (x.astype(np.float64) * m + a).astype(np.float32)
        return x
    x = x0.astype(np.float64)
    for _ in range(steps):
        x = x * np.float64(mul) + np.float64(add)
    return x


def rel_error(got: np.ndarray, ref: np.ndarray) -> float:
    """‖got − ref‖₂ / ‖ref‖₂ in float64; inf when ``got`` has a NaN/inf or ``ref`` is zero (and got is not)."""
    g = np.asarray(got, dtype=np.float64)
    r = np.asarray(ref, dtype=np.float64)
    if not np.all(np.isfinite(g)):
        return math.inf
    num = float(np.linalg.norm((g - r).ravel()))
    den = float(np.linalg.norm(r.ravel()))
    if den == 0:
        return 0.0 if num == 0 else math.inf
    return num / den


def check_bound(what: str, err: float, bound: float) -> str:
    """``"rel err 1.2e-07 <= 1e-06"`` when ``err <= bound``.

    Raises:
        MeasurementError: the error exceeds the bound (a wrong kernel; nothing is timed).
    """
    if not err <= bound:
        raise MeasurementError(
            f"{what} gave a wrong result: relative error {err:.3g} > {bound:g}; "
            "the compute kernel is wrong on this GPU (no figure reported)"
        )
    return f"rel err {err:.2g} <= {bound:g}"


# -------------------------------------------------------------- cases ----


@dataclass(frozen=True)
class ComputeCase:
    """One compute kernel: precision, kernel name, source, launch shape, FLOPs, verify.

    Subclasses implement :meth:`prepare` (allocate and fill operands, returns a
    state dict with ``"out"``: the output buffer), :meth:`args`, :meth:`shape`,
    :meth:`flops` and :meth:`verify`.
    """

    precision: str
    kernel: str
    unit: ClassVar[str] = "cuda cores"
    source: ClassVar[str] = ""
    #: Loop trips of the first (calibration) launch.
    probe_iters: ClassVar[int] = 64

    @property
    def instruction(self) -> str:
        return ""

    def arch_for(self, device_arch: str) -> str:
        """The cubin target this case needs on a device of ``device_arch``."""
        return device_arch

    def load(self, ctx, device_arch: str):
        """The kernel object (compiled for :meth:`arch_for` and loaded)."""
        return ctx.kernel(self.source, self.kernel)

    def shape(self, ctx, kern) -> tuple[int, int]:
        raise NotImplementedError

    def flops(self, grid: int, block: int, iters: int) -> int:
        raise NotImplementedError

    def prepare(self, ctx, rng: np.random.Generator, grid: int, block: int) -> dict:
        raise NotImplementedError

    def args(self, state: dict, iters: int) -> tuple:
        raise NotImplementedError

    def verify(self, ctx, kern, grid: int, block: int, rng: np.random.Generator) -> str:
        raise NotImplementedError

    def check_timed_output(self, ctx, state: dict) -> None:
        """After timing: every output element written (NaN poison gone) and finite (float kernels)."""
        out_dtype = state.get("out_dtype")
        if out_dtype is None or not np.issubdtype(np.dtype(out_dtype), np.floating):
            return
        got = ctx.download(state["out"], out_dtype, state["out_count"])
        if not np.all(np.isfinite(got)):
            bad = int(np.count_nonzero(~np.isfinite(got)))
            raise MeasurementError(
                f"{self.kernel}: {bad} of {got.size} outputs unwritten or not finite after timing; "
                "the kernel is wrong on this GPU (no figure reported)"
            )


def _grid_full(ctx, kern, block: int) -> int:
    """One full wave: SMs x resident blocks per SM."""
    return ctx.info.sm_count * ctx.occupancy(kern, block)


@dataclass(frozen=True)
class FmaCase(ComputeCase):
    """CUDA-core FMA throughput (compute_fma.cu): fp32 FFMA, fp64 DFMA, fp16 half2 HFMA2."""

    source: ClassVar[str] = FMA_SOURCE
    probe_iters: ClassVar[int] = 16

    @property
    def instruction(self) -> str:
        return {"fp32": "FFMA", "fp64": "DFMA", "fp16_nontensor": "HFMA2 (half2)"}[self.precision]

    @property
    def np_dtype(self):
        return {"fp32": np.float32, "fp64": np.float64, "fp16_nontensor": np.uint32}[self.precision]

    def shape(self, ctx, kern) -> tuple[int, int]:
        return _grid_full(ctx, kern, FMA_BLOCK), FMA_BLOCK

    def flops(self, grid: int, block: int, iters: int) -> int:
        return fma_flops(self.precision, grid * block, iters)

    def _scalars(self, mul, add, init_step):
        if self.precision == "fp64":
            return np.float64(mul), np.float64(add), np.float64(init_step)
        if self.precision == "fp32":
            return np.float32(mul), np.float32(add), np.float32(init_step)
        return np.uint32(half2_word(mul)), np.uint32(half2_word(add)), np.float32(init_step)

    def prepare(self, ctx, rng, grid, block) -> dict:
        n = FMA_CHAINS * grid * block
        out = ctx.alloc(n * 4 * (2 if self.precision == "fp64" else 1))
        ctx.memset(out, 0xFF)
        # Timed values: a contracting recurrence (|mul| < 1) towards add / (1 - mul) = 1: never zero, never overflows.
        if self.precision == "fp16_nontensor":
            mul, add = (0.99, 0.98), (0.01, 0.02)
        else:
            mul, add = 0.999, 0.001
        # fp16: each uint32 output holds two fp16 values; the 0xFF poison is a NaN in both formats.
        dt, count = {"fp64": (np.float64, n), "fp32": (np.float32, n), "fp16_nontensor": (np.float16, 2 * n)}[self.precision]
        return {"out": out, "out_dtype": dt, "out_count": count, "scalars": self._scalars(mul, add, 0.25)}

    def args(self, state, iters) -> tuple:
        m, a, s = state["scalars"]
        return (state["out"].ptr, m, a, s, np.int32(iters))

    def verify(self, ctx, kern, grid, block, rng) -> str:
        total = grid * block
        n = FMA_CHAINS * total
        es = 8 if self.precision == "fp64" else 4
        steps_per_iter = FMA_UNROLL[self.precision]
        out = ctx.alloc(n * es)
        try:
            results = []
            # 1) exact count check: mul = 1, add dyadic -> x0 + steps * add exactly.
            # 2) a random contracting recurrence compared with a numpy emulation.
            if self.precision == "fp16_nontensor":
                checks = [((1.0, 1.0), (0.125, -0.125), 0.5, 1),
                          (tuple(rng.uniform(0.5, 0.95, 2)), tuple(rng.uniform(-1, 1, 2)), float(rng.uniform(0.01, 0.05)), 1)]
            else:
                checks = [(1.0, 0.25, 0.5, 3),
                          (float(rng.uniform(0.5, 0.95)), float(rng.uniform(-1, 1)), float(rng.uniform(0.1, 0.5)), 2)]
            for mul, add, step, iters in checks:
                ctx.memset(out, 0xFF)
                m, a, s = self._scalars(mul, add, step)
                if self.precision == "fp32":
                    mul, add, step = float(m), float(a), float(s)
                ctx.launch(kern, grid, block, out.ptr, m, a, s, np.int32(iters))
                ctx.sync(f"verifying {self.kernel}")
                x0 = fma_initial(self.precision, total, float(s) if self.precision != "fp64" else step)
                ref = fma_reference(self.precision, x0, mul, add, iters * steps_per_iter)
                if self.precision == "fp16_nontensor":
                    words = ctx.download(out, np.uint32, n).reshape(FMA_CHAINS, total)
                    got = words.view(np.float16).reshape(FMA_CHAINS, total, 2)
                else:
                    got = ctx.download(out, np.float64 if es == 8 else np.float32, n).reshape(FMA_CHAINS, total)
                results.append(check_bound(f"{self.kernel} (mul={mul}, add={add})", rel_error(got, ref),
                                           VERIFY_BOUND[self.precision]))
            return "; ".join(results)
        finally:
            out.free()


def fma_flops(precision: str, total_threads: int, iters: int) -> int:
    """FLOPs of one FMA-kernel launch: threads x iters x unroll x chains x 2 (x 2 more for half2)."""
    per = 2 * FMA_CHAINS * FMA_UNROLL[precision] * (2 if precision == "fp16_nontensor" else 1)
    return int(total_threads) * int(iters) * per


def half2_word(pair) -> int:
    """(low, high) floats -> one uint32 of two fp16 (low half = first); a scalar fills both halves."""
    lo, hi = (pair, pair) if np.isscalar(pair) else pair
    h = np.array([lo, hi], dtype=np.float16).view(np.uint16).astype(np.uint32)
    return int(h[0] | (h[1] << 16))


#: mma.sync: precision -> (kernel, FLOPs per instruction, first architecture).
MMA_KERNELS = {
    "fp16": ("mma_fp16_f32", 2 * 16 * 8 * 16, (8, 0)),
    "bf16": ("mma_bf16_f32", 2 * 16 * 8 * 16, (8, 0)),
    "tf32": ("mma_tf32_f32", 2 * 16 * 8 * 8, (8, 0)),
    "int8": ("mma_int8_s32", 2 * 16 * 8 * 32, (8, 0)),
    "fp8": ("mma_fp8_f32", 2 * 16 * 8 * 32, (8, 9)),
}


@dataclass(frozen=True)
class MmaCase(ComputeCase):
    """Tensor cores through warp-level mma.sync (compute_mma.cu), operands in registers."""

    unit: ClassVar[str] = "tensor cores"
    source: ClassVar[str] = MMA_SOURCE
    probe_iters: ClassVar[int] = 64

    @property
    def elem_bits(self) -> int:
        return ELEM_BITS[self.precision]

    @property
    def instruction(self) -> str:
        k = mma_k(self.elem_bits)
        return f"mma.sync m16n8k{k}"

    def shape(self, ctx, kern) -> tuple[int, int]:
        return _grid_full(ctx, kern, MMA_BLOCK), MMA_BLOCK

    def flops(self, grid: int, block: int, iters: int) -> int:
        return mma_flops(self.precision, grid * block // 32, iters)

    def _operands(self, rng):
        k = mma_k(self.elem_bits)
        a = random_operand(rng, self.precision, 16, k)
        b = random_operand(rng, self.precision, k, 8)
        return a, b

    def _alloc(self, ctx, a, b, warps):
        af, bf = mma_a_fragments(a), mma_b_fragments(b)
        abuf, bbuf = ctx.alloc(af.nbytes), ctx.alloc(bf.nbytes)
        ctx.upload(abuf, af)
        ctx.upload(bbuf, bf)
        n = warps * MMA_ACC * 32 * 4
        out = ctx.alloc(n * 4)
        ctx.memset(out, 0xFF)
        return abuf, bbuf, out, n

    def prepare(self, ctx, rng, grid, block) -> dict:
        a, b = self._operands(rng)
        abuf, bbuf, out, n = self._alloc(ctx, a, b, grid * block // 32)
        return {"a": abuf, "b": bbuf, "out": out, "out_count": n,
                "out_dtype": np.int32 if self.precision == "int8" else np.float32}

    def args(self, state, iters) -> tuple:
        return (state["a"].ptr, state["b"].ptr, state["out"].ptr, np.int32(iters))

    def verify(self, ctx, kern, grid, block, rng) -> str:
        warps = grid * block // 32
        a, b = self._operands(rng)
        ref = a.values @ b.values
        abuf, bbuf, out, n = self._alloc(ctx, a, b, warps)
        try:
            notes = []
            for iters in (1, 3):
                ctx.memset(out, 0xFF)
                ctx.launch(kern, grid, block, abuf.ptr, bbuf.ptr, out.ptr, np.int32(iters))
                ctx.sync(f"verifying {self.kernel}")
                dt = np.int32 if self.precision == "int8" else np.float32
                got = mma_unpack_acc(ctx.download(out, dt, n), warps)
                want = np.broadcast_to(iters * MMA_UNROLL * ref, got.shape)
                notes.append(check_bound(f"{self.kernel} ({iters} iterations)", rel_error(got, want),
                                         VERIFY_BOUND[self.precision]))
            return notes[-1]
        finally:
            for buf in (abuf, bbuf, out):
                buf.free()


def mma_flops(precision: str, warps: int, iters: int) -> int:
    """FLOPs of one mma.sync-kernel launch: warps x iters x MMA_UNROLL x MMA_ACC x 2*16*8*K."""
    return int(warps) * int(iters) * MMA_UNROLL * MMA_ACC * MMA_KERNELS[precision][1]


#: wgmma variants: shape -> (N, accumulators per warpgroup).
WG_SHAPES = {"n256": (256, 1), "n128x2": (128, 2)}
#: compute_wgmma.cu's WG_PRECISIONS bits.
WG_PRECISION_BIT = {"bf16": 1, "fp16": 2, "tf32": 4, "fp8": 8, "int8": 16}
#: Most warpgroups a block may have: A in shared memory 3, A in registers 2 (the kernels' __launch_bounds__).
WG_MAX_WARPGROUPS = {"ss": 3, "rs": 2}


@dataclass(frozen=True)
class WgmmaCase(ComputeCase):
    """Hopper tensor cores through wgmma (compute_wgmma.cu, sm_90a): B in shared memory,
    A in shared memory (``a_src="ss"``) or registers (``"rs"``), ``warpgroups`` per block.

    ``passes`` and ``inflight`` are the kernel's WG_PASSES / WG_INFLIGHT knobs
    (passes over K per commit group; wait_group depth in the loop, -1 = none);
    other values than (1, 1) build the source with those macros (and only this
    precision's kernels)."""

    a_src: str = "ss"
    wg_shape: str = "n256"
    warpgroups: int = 2
    passes: int = 1
    inflight: int = 1
    unit: ClassVar[str] = "tensor cores"
    source: ClassVar[str] = WGMMA_SOURCE
    probe_iters: ClassVar[int] = 64

    @property
    def elem_bits(self) -> int:
        return ELEM_BITS[self.precision]

    @property
    def n(self) -> int:
        return WG_SHAPES[self.wg_shape][0]

    @property
    def nacc(self) -> int:
        return WG_SHAPES[self.wg_shape][1]

    @property
    def instruction(self) -> str:
        k = wgmma_kstep_elems(self.elem_bits)
        where = "A, B in smem" if self.a_src == "ss" else "A in registers, B in smem"
        accs = f", {self.nacc} accumulators" if self.nacc > 1 else ""
        knobs = "" if self.defines is None else f", {self.passes} pass(es)/group, wait_group {self.inflight}"
        return f"wgmma m64n{self.n}k{k} ({where}{accs}), {self.warpgroups} warpgroup(s)/block{knobs}"

    @property
    def defines(self) -> dict | None:
        """NVRTC macros for non-default knobs (None for the default build)."""
        if (self.passes, self.inflight) == (1, 1):
            return None
        return {"WG_PASSES": self.passes, "WG_INFLIGHT": self.inflight, "WG_PRECISIONS": WG_PRECISION_BIT[self.precision]}

    @property
    def label(self) -> str:
        """Kernel name plus launch/knob variant, unique per case (``wgmma_bf16_ss_n256/wg2``)."""
        extra = "" if self.defines is None else f"/p{self.passes}w{self.inflight}"
        return f"{self.kernel}/wg{self.warpgroups}{extra}"

    def arch_for(self, device_arch: str) -> str:
        return "sm_90a"

    def load(self, ctx, device_arch: str):
        return load_kernel_for_arch(ctx, self.source, self.kernel, "sm_90a", self.defines)

    def shape(self, ctx, kern) -> tuple[int, int]:
        block = WG_THREADS * self.warpgroups
        return _grid_full(ctx, kern, block), block

    def flops(self, grid: int, block: int, iters: int) -> int:
        return wgmma_flops(self.precision, self.n, self.nacc, grid * (block // WG_THREADS), iters * self.passes)

    def _operands(self, rng):
        kel = 1024 // self.elem_bits  # elements in a 128-byte row
        a = random_operand(rng, self.precision, 64, kel)
        b = random_operand(rng, self.precision, 256, kel)
        return a, b

    def _alloc(self, ctx, a, b, slots):
        tiles = wgmma_tiles(a, b)
        af = wgmma_a_fragments(a)
        tbuf, abuf = ctx.alloc(tiles.nbytes), ctx.alloc(af.nbytes)
        ctx.upload(tbuf, tiles)
        ctx.upload(abuf, af)
        n = slots * (self.n // 2) * self.nacc * WG_THREADS
        out = ctx.alloc(n * 4)
        ctx.memset(out, 0xFF)
        return tbuf, abuf, out, n

    def prepare(self, ctx, rng, grid, block) -> dict:
        a, b = self._operands(rng)
        tbuf, abuf, out, n = self._alloc(ctx, a, b, grid * (block // WG_THREADS))
        return {"tiles": tbuf, "a": abuf, "out": out, "out_count": n,
                "out_dtype": np.int32 if self.precision == "int8" else np.float32}

    def args(self, state, iters) -> tuple:
        return (state["tiles"].ptr, state["a"].ptr, state["out"].ptr, np.int32(iters))

    def reference(self, a: Operand, b: Operand) -> np.ndarray:
        """A (64 x K) . B[:N]^T: the product one loop step adds to every accumulator."""
        return a.values @ b.values[: self.n].T

    def run_once(self, ctx, kern, grid, block, a: Operand, b: Operand, iters: int) -> np.ndarray:
        """Launch once on operands ``a``, ``b``; returns (slots, nacc, 64, N) accumulators."""
        slots = grid * (block // WG_THREADS)
        tbuf, abuf, out, n = self._alloc(ctx, a, b, slots)
        try:
            ctx.launch(kern, grid, block, tbuf.ptr, abuf.ptr, out.ptr, np.int32(iters))
            ctx.sync(f"running {self.kernel}")
            dt = np.int32 if self.precision == "int8" else np.float32
            return wgmma_unpack_acc(ctx.download(out, dt, n), slots, self.n, self.nacc)
        finally:
            for buf in (tbuf, abuf, out):
                buf.free()

    def verify(self, ctx, kern, grid, block, rng) -> str:
        notes = []
        for iters in (1, 2):
            a, b = self._operands(rng)
            got = self.run_once(ctx, kern, grid, block, a, b, iters)
            want = np.broadcast_to(iters * self.passes * self.reference(a, b), got.shape)
            notes.append(check_bound(f"{self.kernel} ({iters} iterations)", rel_error(got, want),
                                     VERIFY_BOUND[self.precision]))
        return notes[-1]


def wgmma_flops(precision: str, n: int, nacc: int, warpgroups: int, iters: int) -> int:
    """FLOPs of one wgmma-kernel launch: warpgroups x iters x WG_KSTEPS x nacc x 2*64*N*K."""
    k = wgmma_kstep_elems(ELEM_BITS[precision])
    return int(warpgroups) * int(iters) * WG_KSTEPS * int(nacc) * 2 * 64 * int(n) * k


def wgmma_kernel_name(precision: str, a_src: str, wg_shape: str) -> str:
    """``wgmma_bf16_ss_n256`` etc. (the extern "C" names in compute_wgmma.cu)."""
    return f"wgmma_{precision}_{a_src}_{wg_shape}"


_LOADED: dict = {}


def load_kernel_for_arch(ctx, source: str, name: str, arch: str, defines: dict | None = None):
    """A kernel of bundled ``source`` compiled for an explicit ``arch`` (``sm_90a``) and loaded.

    The engine's ``ctx.kernel`` compiles for the device's plain arch (``sm_90``);
    wgmma needs the arch-specific ``sm_90a`` target, so this compiles through
    :func:`gpuwhy.engine.compile.compile_file` (same disk cache) and loads the cubin.

    Raises:
        MeasurementError: the cubin does not load or lacks ``name``.
    """
    key = (id(ctx), source, arch, tuple(sorted((defines or {}).items())))
    if key not in _LOADED:
        from cuda.core import ObjectCode

        from ..engine.compile import compile_file

        mod = compile_file(source, arch, defines=defines)
        try:
            obj = ObjectCode.from_cubin(mod.cubin, name=source)
        except Exception as exc:
            raise MeasurementError(f"the {arch} cubin of {source} did not load ({exc})") from None
        _LOADED[key] = (obj, mod)
    obj, mod = _LOADED[key]
    if name not in mod.kernel_names:
        raise MeasurementError(f"{source} ({arch}) has no kernel {name!r}; it has: {', '.join(mod.kernel_names)}")
    try:
        return obj.get_kernel(name)
    except Exception as exc:
        raise MeasurementError(f"loading {name} from {source} ({arch}) failed ({exc})") from None


# ---------------------------------------------------------- selection ----

#: The wgmma variant :func:`select_cases` uses by default. On the H200 (2 runs, random data)
#: every variant landed within ~2% of the others (power-capped at ~90% of the issue rate
#: per clock); A in registers with N=256 and 2 warpgroups was at or near the top for
#: bf16, fp16, fp8, tf32 and int8 (bf16 867 TFLOP/s, fp16 827-835, fp8 1654-1670).
WGMMA_DEFAULT = {"a_src": "rs", "wg_shape": "n256", "warpgroups": 2}


@dataclass(frozen=True)
class NotMeasured:
    """A (precision, kernel family) gpuwhy cannot measure on this architecture, and why."""

    precision: str
    unit: str
    kernel: str
    status: str
    note: str


def select_cases(arch: str, precisions: Sequence[str] | None = None, variants: str = "default") -> list:
    """The cases (and :class:`NotMeasured` rows) for a device of ``arch`` (``sm_90``).

    Args:
        arch: the device's plain architecture, e.g. ``sm_90``.
        precisions: a subset of :data:`PRECISIONS` (default: all).
        variants: ``default`` (one kernel per precision and unit; on sm_90 the
            wgmma default plus the mma.sync row) or ``all`` (every wgmma variant:
            A in smem or registers, N=256 or 2 x N=128, 2 or 3 warpgroups per block).

    Raises:
        UsageError: an unknown precision or variants value.
    """
    if variants not in ("default", "all"):
        raise UsageError(f"variants {variants!r} must be 'default' or 'all'")
    precs = list(PRECISIONS if precisions is None else precisions)
    for p in precs:
        if p not in PRECISIONS:
            raise UsageError(f"unknown precision {p!r}; use one of: {', '.join(PRECISIONS)}")
    cc = parse_arch(arch).major_minor
    out: list = []
    for p in PRECISIONS:
        if p not in precs:
            continue
        if p in FMA_UNROLL:
            out.append(FmaCase(p, f"fma_{ {'fp32': 'fp32', 'fp64': 'fp64', 'fp16_nontensor': 'fp16x2'}[p] }"))
            continue
        kname, _, first = MMA_KERNELS[p]
        if cc < (8, 0):
            out.append(NotMeasured(p, "tensor cores", kname, "not measured",
                                   f"gpuwhy's tensor-core kernels need sm_80 or newer (this is {arch})"))
            continue
        if cc[0] in (10, 11):
            out.append(NotMeasured(p, "tensor cores", f"tcgen05 ({p})", "not measured",
                                   f"{arch} reaches its tensor-core peak only through tcgen05, "
                                   "for which gpuwhy has no kernel yet (mma.sync would understate it)"))
            continue
        if cc < first:
            out.append(NotMeasured(p, "tensor cores", kname, "unsupported",
                                   f"{p} tensor-core math needs sm_{first[0]}{first[1]} or newer (this is {arch})"))
            continue
        if cc == (9, 0):
            if variants == "all":
                for a_src in ("ss", "rs"):
                    for shp in WG_SHAPES:
                        for wgs in range(WG_MAX_WARPGROUPS[a_src], 1, -1):
                            out.append(WgmmaCase(p, wgmma_kernel_name(p, a_src, shp), a_src, shp, wgs))
            else:
                d = WGMMA_DEFAULT
                out.append(WgmmaCase(p, wgmma_kernel_name(p, d["a_src"], d["wg_shape"]), d["a_src"],
                                     d["wg_shape"], d["warpgroups"]))
            if p == "fp8":
                # sm_90 has no fp8 mma.sync in hardware: ptxas emulates it (fp8 -> fp16 conversion,
                # then fp16 HMMA) and, the operands being loop-invariant, hoists the product out of
                # the loop (seen in the SASS: 4 HMMA in the whole kernel), so a timing would
                # measure FADDs. wgmma (QGMMA) is the fp8 path there.
                out.append(NotMeasured(p, "tensor cores", kname, "not measured",
                                       "fp8 mma.sync on sm_90 is compiler-emulated (fp16 HMMA), not a tensor-core "
                                       "fp8 path; see the wgmma row"))
                continue
        out.append(MmaCase(p, kname))
    return out


# ------------------------------------------------------------ clocks ----


def sample_summary(samples: Sequence[tuple]) -> dict:
    """Clock (median/min/max/count, MHz), median power (W) and the union of clock-event
    reasons of (clock, power, mask) samples from :meth:`gpuwhy.device.sample.ClockSampler.sample`."""
    from .health import reason_names

    clk, lo, hi, n = clock_summary([s[0] for s in samples if s and s[0]])
    pw = sorted(float(s[1]) for s in samples if s and s[1])
    mask = 0
    for s in samples:
        if s and s[2]:
            mask |= int(s[2])
    return {"sm_clock_mhz": clk, "sm_clock_min_mhz": lo, "sm_clock_max_mhz": hi, "clock_samples": n,
            "power_w": pw[len(pw) // 2] if pw else None,
            "clock_events": tuple(r for r in reason_names(mask) if r != "gpu_idle")}


def clock_summary(samples: Sequence[float]) -> tuple[float | None, float | None, float | None, int]:
    """(median, min, max, count) of clock samples (MHz); (None, None, None, 0) for none."""
    xs = sorted(float(s) for s in samples if s)
    if not xs:
        return None, None, None, 0
    mid = len(xs) // 2
    med = xs[mid] if len(xs) % 2 else 0.5 * (xs[mid - 1] + xs[mid])
    return med, xs[0], xs[-1], len(xs)


def calibrate_iters(probe_iters: int, probe_s: float, target_s: float, limit: int = 2**31 - 1) -> int:
    """Loop trips so one launch takes about ``target_s``, from a probe of ``probe_iters`` that took ``probe_s``."""
    if not probe_s > 0 or not math.isfinite(probe_s):
        return probe_iters
    return int(max(probe_iters, min(limit, round(probe_iters * target_s / probe_s))))


# ------------------------------------------------------------ running ----


def find_sheet(ctx):
    """The spec sheet of the open device (:func:`gpuwhy.device.sheet.sheet_for_device`), or None."""
    from ..device.sheet import sheet_for_device

    return sheet_for_device(ctx.info).sheet


def measure_case(ctx, case: ComputeCase, *, sheet=None, target_s: float = 0.03, reps: int = 10,
                 rng: np.random.Generator | None = None,
                 sample: Callable[[], tuple] | None = None) -> ComputeResult:
    """Verify ``case`` on fresh random inputs, then time it; returns a measured :class:`ComputeResult`.

    ``sample`` returns (SM clock MHz, power W, clock-event mask), e.g.
    :meth:`gpuwhy.device.sample.ClockSampler.sample`; without it no clock is reported.

    Raises:
        MeasurementError: a wrong result (nothing timed), a CUDA error.
    """
    from ..engine.timing import collect, time_gpu

    rng = rng or np.random.default_rng()
    arch = case.arch_for(ctx.info.arch)
    kern = case.load(ctx, ctx.info.arch)
    grid, block = case.shape(ctx, kern)
    verified = case.verify(ctx, kern, grid, block, rng)
    state = case.prepare(ctx, rng, grid, block)
    bufs = [v for v in state.values() if hasattr(v, "free") and hasattr(v, "ptr")]
    try:
        cfg = ctx.config(grid, block)
        from cuda.core import launch

        stream = ctx.stream

        def launcher(iters):
            a = case.args(state, iters)
            return lambda i: launch(stream, cfg, kern, *a)

        probe = time_gpu(stream, ctx.events, launcher(case.probe_iters), warmup=1, reps=3)
        iters = calibrate_iters(case.probe_iters, probe.median_s, target_s)
        ctx.memset(state["out"], 0xFF)
        hook, samples = collect(sample)
        m = time_gpu(stream, ctx.events, launcher(iters), warmup=1, reps=reps, estimate=False, sample=hook)
        ctx.sync(f"timing {case.kernel}")
        case.check_timed_output(ctx, state)
    finally:
        for b in bufs:
            b.free()
    flops = case.flops(grid, block, iters)
    tflops = flops / m.median_s / 1e12
    ss = sample_summary(samples)
    clk = ss["sm_clock_mhz"]
    fp32_lanes = getattr(sheet, "fp32_lanes_per_sm", None) if sheet is not None else None
    rate = rate_per_sm_clk(case.precision, parse_arch(ctx.info.arch).major_minor, fp32_lanes)
    speak, skey = sheet_peak(sheet, case.precision)
    note = ""
    if case.unit == "tensor cores":
        note = TENSOR_NOTE
        if isinstance(case, MmaCase) and parse_arch(ctx.info.arch).major_minor == (9, 0):
            note = "mma.sync on Hopper: wgmma is the peak path; " + note
    if rate is None:
        note = (note + "; " if note else "") + f"no per-clock rate known for {case.precision} on {ctx.info.arch}"
    from .health import REASON_BITS

    held = [r for r in ss["clock_events"] if any(n == r and warn for n, warn in REASON_BITS.values())]
    if held:
        note = (note + "; " if note else "") + f"SM clock held below its maximum during the run by: {', '.join(held)}"
    return ComputeResult(
        precision=case.precision, unit=case.unit, kernel=case.kernel, instruction=case.instruction,
        status="measured", tflops=tflops, median_s=m.median_s, min_s=m.min_s, max_s=m.max_s, cv=m.cv,
        reps=m.reps, flops_per_launch=flops, iters=iters, grid=grid, block=block,
        sm_clock_mhz=clk, sm_clock_min_mhz=ss["sm_clock_min_mhz"], sm_clock_max_mhz=ss["sm_clock_max_mhz"],
        clock_samples=ss["clock_samples"], power_w=ss["power_w"], clock_events=ss["clock_events"],
        clock_peak_tflops=clock_peak_tflops(ctx.info.sm_count, rate, clk), sheet_peak_tflops=speak,
        sheet_key=skey, verify=verified, note=note, arch=arch, variant=getattr(case, "label", case.kernel),
    )


def not_measured_result(row: NotMeasured, sheet=None) -> ComputeResult:
    """A :class:`ComputeResult` for a row gpuwhy cannot measure (the sheet's peak still shown)."""
    speak, skey = sheet_peak(sheet, row.precision)
    return ComputeResult(precision=row.precision, unit=row.unit, kernel=row.kernel, instruction="",
                         status=row.status, sheet_peak_tflops=speak, sheet_key=skey, note=row.note)


def run_compute(device_ctx, precisions: Sequence[str] | None = None, *, sheet=None, variants: str = "default",
                target_s: float = 0.03, reps: int = 10, rng: np.random.Generator | None = None,
                on_result: Callable[[ComputeResult], None] | None = None) -> list[ComputeResult]:
    """Measure the compute ceilings of the open device.

    Args:
        device_ctx: an open :class:`gpuwhy.engine.context.GpuContext`.
        precisions: subset of :data:`PRECISIONS` (default all).
        sheet: the device's spec sheet (default: matched from the NVML name and PCI id; None if none matches).
        variants: ``default`` or ``all`` (see :func:`select_cases`).
        target_s: wall time of one timed launch (s); the loop count is calibrated to it.
        reps: timed launches per case (median reported).
        rng: random generator for the verify inputs (fresh inputs each call by default).
        on_result: called with each result as it is ready (progress display).

    Returns:
        one :class:`ComputeResult` per case, in :data:`PRECISIONS` order; rows
        gpuwhy cannot measure on this architecture have status ``not measured``
        or ``unsupported``.

    Raises:
        UsageError: unknown precision; MeasurementError: a kernel gave a wrong
        result or a CUDA error (nothing after it is measured).
    """
    ctx = device_ctx
    if sheet is None:
        sheet = find_sheet(ctx)
    rng = rng or np.random.default_rng()
    results: list[ComputeResult] = []
    cases = select_cases(ctx.info.arch, precisions, variants)
    with ClockSampler(ctx.info.uuid) as clock:
        for case in cases:
            if isinstance(case, NotMeasured):
                r = not_measured_result(case, sheet)
            else:
                r = measure_case(ctx, case, sheet=sheet, target_s=target_s, reps=reps, rng=rng,
                                 sample=clock.sample)
            results.append(r)
            if on_result:
                on_result(r)
    return results
