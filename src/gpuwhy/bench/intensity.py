"""The mixed-intensity sweep (`gpuwhy bench --roofline`): the measured roofline, point by point.

One kernel family (``microbench/intensity.cu``) whose FLOPs per byte are set at
launch: each thread reads 16-byte vectors, runs a chain of fused multiply-adds
on every 32-bit word in registers and writes the result. ``fmas``, the FMA
instructions per 16-byte vector, sets the arithmetic intensity (bytes = read +
write, each once)::

    fp32  (FFMA, 2 FLOP per word-step):                 intensity = fmas / 16 FLOP/byte
    fp16, bf16 (HFMA2 on a half pair, 4 FLOP/step):     intensity = fmas / 8  FLOP/byte

The sweep runs :data:`POINTS_PER_OCTAVE` points per octave from
:data:`SWEEP_LO` = 1/8 to :data:`SWEEP_HI` = 1024 FLOP/byte over arrays of at
least :data:`WS_FACTOR` x L2 (so every byte comes from DRAM). At each point it
reports the achieved FLOP/s and GB/s and the % of the roofline
min(peak, bandwidth x intensity), with the ceilings the device profile measured
(``gpuwhy bench`` and ``bench --compute``) where it has them, else the spec
sheet's. fp16/bf16 here are CUDA-core half2 arithmetic, so their compute roof is
the ``fp16_nontensor``/``bf16_nontensor`` ceiling, not the tensor-core peak.

The empirical ridge point (:func:`fit_ridge`, :data:`RIDGE_METHOD`): the
measured points are fitted, in log-log space by least squares, with two roofs,
``log F = log B + log I`` below a split and ``log F = log P`` above it (for a
fixed split the best B and P are geometric means; every split with at least two
points on each side is tried and the one with the smallest squared error
kept). The empirical ridge is where the fitted roofs cross, P / B. A bend is
reported only when the two-roof fit is clearly better than either roof alone
(rms error under half the better single roof's, which must miss by more than
:data:`BEND_MIN_DECADES`). Beside it, the *knee*: the intensity (log-log
interpolated) at which the achieved FLOP/s first reaches :data:`KNEE_FRACTION`
of the compute ceiling (the measured peak when known).

Before timing, every kernel is run on random non-zero host data at awkward sizes
(:data:`CHECK_WORDS`) and compared with a numpy emulation of the same chains
(:func:`emulate`): an exact step-count check (``mul = 1``, ``add = 1/8``, inputs
multiples of 1/8: every value is exact, so one step too many or too few shows)
and a random contracting chain. A wrong result raises
:class:`~gpuwhy.errors.MeasurementError` (exit 4) and nothing is timed.

Usage::

    from gpuwhy.engine.context import open_device
    from gpuwhy.bench.intensity import run_roofline_sweep

    with open_device("0") as ctx:
        sweep = run_roofline_sweep(ctx, dtypes=("fp32", "fp16"))
    sweep.curve("fp32").fit.ridge      # FLOP/byte

Pure parts (intensity arithmetic, FLOP counts, sizing, the emulation, the ridge
fit) need no GPU and are tested without one.
"""

from __future__ import annotations

import datetime as _dt
import math
import time
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..errors import MeasurementError, UsageError

SOURCE = "intensity.cu"
#: Sweep element types, in report order.
DTYPES = ("fp32", "fp16", "bf16")
KERNELS = {"fp32": "intensity_f32", "fp16": "intensity_f16x2", "bf16": "intensity_bf16x2"}
FILL_KERNEL = "intensity_fill"
FILL_FORMAT = {"fp32": 0, "fp16": 1, "bf16": 2}
#: FLOPs of one step on one 32-bit word: FFMA = 2; HFMA2 = two FMAs = 4.
FLOPS_PER_STEP = {"fp32": 2, "fp16": 4, "bf16": 4}
#: The profile/sheet ``peak_tflops`` key that bounds each sweep: CUDA-core rates.
CEILING_KEY = {"fp32": "fp32", "fp16": "fp16_nontensor", "bf16": "bf16_nontensor"}
#: The instruction each sweep issues.
INSTRUCTION = {"fp32": "FFMA", "fp16": "HFMA2 (fp16 pairs)", "bf16": "HFMA2.BF16 (bf16 pairs)"}
#: First compute capability with the instruction (fma.rn.f16x2: sm_53; fma.rn.bf16x2: sm_80, PTX ISA 7.0).
MIN_CC = {"fp32": (3, 0), "fp16": (5, 3), "bf16": (8, 0)}

#: Mirrors of intensity.cu's constants (tests/test_roofline_sweep.py keeps them in step).
BLOCK = 256
UNROLL = 2          # GPUWHY_INT_UNROLL: 16-byte vectors per thread per chunk
STEPS_UNROLL = 32   # GPUWHY_INT_STEPS
WORDS_PER_VECTOR = 4
WORD_BYTES = 4
#: Bytes one launch moves per word: read once, written once.
BYTES_PER_WORD = 2 * WORD_BYTES

SWEEP_LO, SWEEP_HI = 1 / 8, 1024.0
POINTS_PER_OCTAVE = 2
#: Working set (input + output) of a sweep launch, at least this many L2 sizes ...
WS_FACTOR = 8
#: ... and at least this many bytes (GPUs with a small L2 still leave their caches).
MIN_WS_BYTES = 256 * 2**20

#: Sizes (32-bit words) every kernel is checked at: 1, a prime under a warp, a
#: chunk and a bit (not a multiple of 4), a prime over a million.
CHECK_WORDS = (1, 31, 65541, 1000003)
#: FMAs per vector of the exact step-count check (lanes with and without the extra
#: step; q = 37 and 65 run the 32-step unrolled loop once and twice, plus remainders).
EXACT_FMAS = (1, 2, 3, 4, 7, 149, 263)
#: ... the subset used at the largest check size (numpy emulation time).
EXACT_FMAS_LARGE = (3, 263)
#: FMAs per vector of the random contracting-chain check.
RANDOM_FMAS = (13, 162)
#: Elementwise relative error allowed in the random check (the numpy emulation
#: is exact for fp16/bf16 in this range and within one fp32 rounding for fp32).
VERIFY_BOUND = {"fp32": 1e-6, "fp16": 2.0**-10, "bf16": 2.0**-7}
#: Words after each checked output that must stay untouched.
GUARD = 64
#: mul and add of the timed chains: a contracting recurrence towards add / (1 - mul)
#: (about 1): values stay in [0.5, 1.5], never zero, never subnormal, never overflow.
TIMED_MUL_ADD = {"fp32": (0.999, 0.001), "fp16": (0.99, 0.01), "bf16": (0.99, 0.01)}

KNEE_FRACTION = 0.9
BEND_MIN_DECADES = 0.05
BEND_GAIN = 0.5
RIDGE_METHOD = (
    "least-squares fit of two roofs in log-log space (memory: F = B x I below a split, compute: F = P above it; "
    "every split with >= 2 points a side tried); empirical ridge = P / B, where the fitted roofs cross; "
    f"knee = intensity where the achieved FLOP/s first reaches {KNEE_FRACTION:.0%} of the compute ceiling"
)
CONVENTION = ("bytes = bytes read + bytes written (each element once, from DRAM: working set >= "
              f"{WS_FACTOR} x L2); FLOPs = 2 per FMA (half2: 4 per HFMA2); intensity = FLOPs / bytes")


# ------------------------------------------------------------ arithmetic --


def check_dtype(dtype: str) -> str:
    """``dtype`` lower-cased if it is a sweep type.

    Raises:
        UsageError: any other name (lists :data:`DTYPES`).
    """
    d = str(dtype).strip().lower()
    if d not in DTYPES:
        raise UsageError(f"the roofline sweep has no dtype {dtype!r}; use one of: {', '.join(DTYPES)}")
    return d


def intensity_of(fmas: int, dtype: str) -> float:
    """FLOP/byte of ``fmas`` FMA instructions per 16-byte vector (read + write), exact
    when the word count is a multiple of 4: ``FLOPS_PER_STEP x fmas / 32``."""
    return FLOPS_PER_STEP[dtype] * int(fmas) / (WORDS_PER_VECTOR * BYTES_PER_WORD)


def fmas_for(intensity: float, dtype: str) -> int:
    """The FMA count per vector nearest to ``intensity`` FLOP/byte (at least 1)."""
    if not intensity > 0:
        raise ValueError("intensity must be > 0")
    return max(1, int(round(intensity * WORDS_PER_VECTOR * BYTES_PER_WORD / FLOPS_PER_STEP[dtype])))


def sweep_fmas(dtype: str, lo: float = SWEEP_LO, hi: float = SWEEP_HI, per_octave: int = POINTS_PER_OCTAVE) -> list[int]:
    """FMA counts per vector of a sweep: ``per_octave`` geometric steps per octave from
    ``lo`` to ``hi`` FLOP/byte, rounded to whole instructions, duplicates dropped, ascending.

    fp32 with the defaults: 2, 3, 4, 6, 8, ..., 11585, 16384 (1/8 .. 1024 FLOP/byte, 27 points).
    """
    if not (0 < lo <= hi) or per_octave < 1:
        raise ValueError("need 0 < lo <= hi and per_octave >= 1")
    n = int(math.floor(per_octave * math.log2(hi / lo) + 1e-9))
    out = sorted({fmas_for(lo * 2 ** (k / per_octave), dtype) for k in range(n + 1)})
    return out


def lane_steps(fmas: int) -> tuple[int, int, int, int]:
    """Steps of each of a vector's four lanes: ``q + (lane < r)``, q, r = divmod(fmas, 4)."""
    q, r = divmod(int(fmas), WORDS_PER_VECTOR)
    return tuple(q + (1 if lane < r else 0) for lane in range(WORDS_PER_VECTOR))  # type: ignore[return-value]


def launch_flops(n_words: int, fmas: int, dtype: str) -> int:
    """FLOPs of one launch over ``n_words`` words (any count; lane = word index % 4)."""
    steps = lane_steps(fmas)
    base, extra = divmod(int(n_words), WORDS_PER_VECTOR)
    return FLOPS_PER_STEP[dtype] * sum((base + (1 if lane < extra else 0)) * s for lane, s in enumerate(steps))


def launch_bytes(n_words: int) -> int:
    """Bytes one launch moves: every word read once and written once."""
    return BYTES_PER_WORD * int(n_words)


def wave_words(sm_count: int, blocks_per_sm: int, block: int = BLOCK, unroll: int = UNROLL) -> int:
    """Words one full wave of resident blocks processes (one chunk per block)."""
    return max(1, int(sm_count)) * max(1, int(blocks_per_sm)) * int(block) * int(unroll) * WORDS_PER_VECTOR


def sweep_words(l2_bytes: int, wave: int, factor: int = WS_FACTOR, min_bytes: int = MIN_WS_BYTES) -> int:
    """Words per array of a sweep launch: a whole number of waves (so no partial last
    wave skews the compute-bound points) whose working set (in + out) is at least
    ``factor`` x L2 and ``min_bytes``. H200 (60 MiB L2, 132 SMs x 8 blocks): 30 waves,
    64,880,640 words, 519 MB working set."""
    need = max(int(factor) * int(l2_bytes), int(min_bytes))
    waves = max(1, -(-need // (BYTES_PER_WORD * int(wave))))
    return waves * int(wave)


def launch_grid(n_words: int, block: int = BLOCK, unroll: int = UNROLL) -> int:
    """Blocks of the one-chunk-per-block launch (at least 1, so the tail words run too)."""
    chunks = -(-(int(n_words) // WORDS_PER_VECTOR) // (block * unroll))
    return int(min(max(1, chunks), 2**31 - 1))


def supported(dtype: str, arch: str) -> bool:
    """Whether ``arch`` (``sm_90``) has the sweep's instruction for ``dtype``."""
    from ..archs import parse_arch

    return parse_arch(arch).major_minor >= MIN_CC[check_dtype(dtype)]


# ------------------------------------------------------- number formats --


def bf16_round(x: np.ndarray) -> np.ndarray:
    """float64 values rounded to the nearest bfloat16 (8 significant bits), ties to even
    (normal range; zero stays zero). Returns float64."""
    m, e = np.frexp(np.asarray(x, dtype=np.float64))
    return np.ldexp(np.rint(m * 256.0), e - 8)


def _decode(words: np.ndarray, dtype: str) -> np.ndarray:
    """uint32 words -> float64 values: shape (n,) for fp32, (n, 2) for half pairs (low half first)."""
    w = np.ascontiguousarray(words, dtype=np.uint32)
    if dtype == "fp32":
        return w.view(np.float32).astype(np.float64)
    halves = w.view(np.uint16).reshape(-1, 2)
    if dtype == "fp16":
        return halves.view(np.float16).astype(np.float64)
    return (halves.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def _encode(values: np.ndarray, dtype: str) -> np.ndarray:
    """Inverse of :func:`_decode` (values must be representable)."""
    v = np.asarray(values, dtype=np.float64)
    if dtype == "fp32":
        return v.astype(np.float32).view(np.uint32)
    if dtype == "fp16":
        return np.ascontiguousarray(v.astype(np.float16)).view(np.uint32).reshape(-1)
    bits = (np.ascontiguousarray(v.astype(np.float32)).view(np.uint32) >> 16).astype(np.uint16)
    return np.ascontiguousarray(bits).view(np.uint32).reshape(-1)


def _round(values: np.ndarray, dtype: str) -> np.ndarray:
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
    return int(_encode(_round(np.array([[lo, hi]], dtype=np.float64), dtype), dtype)[0])


def emulate(words: np.ndarray, fmas: int, mul_word: int, add_word: int, dtype: str) -> np.ndarray:
    """What the kernel writes for input ``words`` (uint32): word i runs
    ``lane_steps(fmas)[i % 4]`` steps of ``x <- x * mul + add``, one rounding per step.

    fp16/bf16: the product and sum of these values are exact in float64, so one
    rounding to the format per step is the fused operation exactly. fp32: float64
    arithmetic rounded to fp32 each step (a fused FMA but for rare double roundings,
    at most one fp32 ulp). Returns uint32 words.
    """
    x = _decode(words, dtype)
    m = _decode(np.array([mul_word], dtype=np.uint32), dtype)[0]
    a = _decode(np.array([add_word], dtype=np.uint32), dtype)[0]
    q, r = divmod(int(fmas), WORDS_PER_VECTOR)
    for _ in range(q):
        x = _round(x * m + a, dtype)
    if r:
        sel = (np.arange(x.shape[0]) % WORDS_PER_VECTOR) < r
        x[sel] = _round(x[sel] * m + a, dtype)
    return _encode(x, dtype)


def mismatch(got: np.ndarray, want: np.ndarray, dtype: str, bound: float = 0.0) -> str | None:
    """None when every value of ``got`` is within ``bound`` (relative) of ``want`` and
    finite; else what is wrong (count, first word, values)."""
    g, w = _decode(got, dtype), _decode(want, dtype)
    if g.shape != w.shape:
        return f"{g.shape} values instead of {w.shape}"
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.abs(g - w) / np.abs(w)
    bad = ~np.isfinite(g) | ~(rel <= bound) & (g != w)
    if not bad.any():
        return None
    idx = np.argwhere(bad)
    i = tuple(int(v) for v in idx[0])
    where = f"word {i[0]}" + (f" half {i[1]}" if len(i) > 1 else "")
    return f"{len(idx)} of {g.size} values wrong; {where} is {float(g[i])!r}, expected {float(w[i])!r}"


def exact_inputs(rng: np.random.Generator, n_words: int, dtype: str) -> np.ndarray:
    """Random words whose values are multiples of 1/8 in [0.5, 1.5] (exact in every format)."""
    shape = (n_words,) if dtype == "fp32" else (n_words, 2)
    return _encode(rng.integers(4, 13, size=shape) / 8.0, dtype)


def random_inputs(rng: np.random.Generator, n_words: int, dtype: str) -> np.ndarray:
    """Random non-zero words, values in [0.5, 1.5) rounded to the format."""
    shape = (n_words,) if dtype == "fp32" else (n_words, 2)
    return _encode(_round(rng.random(shape) + 0.5, dtype), dtype)


# ---------------------------------------------------------------- ridge --


@dataclass(frozen=True)
class RidgeFit:
    """The bend of a measured roofline (see :data:`RIDGE_METHOD`).

    Attributes:
        ridge: FLOP/byte where the fitted roofs cross (None: no bend found; ``note`` says why).
        bandwidth: the fitted memory roof, B/s (the kernel's bandwidth below the ridge).
        peak_flops: the fitted compute roof, FLOP/s.
        memory_points, compute_points: points on each side of the best split.
        rms_log10: rms error of the two-roof fit, decades of FLOP/s.
        knee: FLOP/byte where the achieved FLOP/s first reaches ``knee_fraction`` x
            ``knee_ref_flops`` (log-log interpolated), None if it never does or the
            lowest point already does.
        knee_fraction: e.g. 0.9.
        knee_ref_flops: the compute ceiling the knee refers to, FLOP/s.
        note: why there is no ridge or knee, or "".
    """

    ridge: float | None
    bandwidth: float | None
    peak_flops: float | None
    memory_points: int
    compute_points: int
    rms_log10: float | None
    knee: float | None
    knee_fraction: float
    knee_ref_flops: float | None
    note: str = ""

    def to_dict(self) -> dict:
        """Plain data (FLOP/byte, GB/s, TFLOP/s)."""
        return {
            "ridge": self.ridge,
            "bandwidth_gbs": None if self.bandwidth is None else self.bandwidth / 1e9,
            "peak_tflops": None if self.peak_flops is None else self.peak_flops / 1e12,
            "memory_points": self.memory_points,
            "compute_points": self.compute_points,
            "rms_log10": self.rms_log10,
            "knee": self.knee,
            "knee_fraction": self.knee_fraction,
            "knee_ref_tflops": None if self.knee_ref_flops is None else self.knee_ref_flops / 1e12,
            "method": RIDGE_METHOD,
            "note": self.note,
        }


def _knee(lx: np.ndarray, ly: np.ndarray, target: float) -> tuple[float | None, str]:
    lt = math.log10(target)
    hit = np.flatnonzero(ly >= lt)
    if hit.size == 0:
        return None, f"the achieved FLOP/s never reaches {10 ** lt:.3g} FLOP/s"
    i = int(hit[0])
    if i == 0:
        return None, "the lowest intensity already reaches that fraction of the compute ceiling (start the sweep lower)"
    t = (lt - ly[i - 1]) / (ly[i] - ly[i - 1])
    return float(10 ** (lx[i - 1] + t * (lx[i] - lx[i - 1]))), ""


def fit_ridge(intensities: Sequence[float], flops: Sequence[float], *, ref_peak: float | None = None,
              knee_fraction: float = KNEE_FRACTION, min_side: int = 2) -> RidgeFit:
    """Fit two roofs to measured (intensity FLOP/byte, achieved FLOP/s) points and find their crossing.

    Args:
        intensities, flops: the points, any order; non-positive or non-finite ones are dropped.
        ref_peak: the compute ceiling (FLOP/s) for the knee; default the fitted compute
            roof (or the highest point when there is no bend).
        knee_fraction: the knee is where the curve reaches this fraction of ``ref_peak``.
        min_side: points required on each side of the split.

    Returns:
        a :class:`RidgeFit`; ``ridge`` is None when the points show no bend (all on one
        roof, too few points, or roofs that cross outside the swept range).
    """
    pts = sorted((float(i), float(f)) for i, f in zip(intensities, flops)
                 if math.isfinite(i) and math.isfinite(f) and i > 0 and f > 0)
    m = len(pts)
    lx = np.log10(np.array([p[0] for p in pts], dtype=np.float64))
    ly = np.log10(np.array([p[1] for p in pts], dtype=np.float64))
    if m < 2 * min_side:
        knee, why = _knee(lx, ly, knee_fraction * ref_peak) if (m and ref_peak) else (None, "")
        return RidgeFit(None, None, None, 0, 0, None, knee, knee_fraction, ref_peak,
                        f"{m} points: at least {2 * min_side} are needed to fit two roofs" + (f"; {why}" if why else ""))

    def sq_err(lb: float, lp: float) -> float:
        return float(np.sum((ly - np.minimum(lp, lb + lx)) ** 2))

    best = None
    for k in range(min_side, m - min_side + 1):
        lb = float(np.mean(ly[:k] - lx[:k]))
        lp = float(np.mean(ly[k:]))
        e = sq_err(lb, lp)
        if best is None or e < best[0]:
            best = (e, k, lb, lp)
    e, k, lb, lp = best
    rms_two = math.sqrt(e / m)
    lb_all = float(np.mean(ly - lx))
    rms_mem = math.sqrt(float(np.mean((ly - lb_all - lx) ** 2)))
    rms_comp = math.sqrt(float(np.mean((ly - ly.mean()) ** 2)))
    single = min(rms_mem, rms_comp)
    ridge = 10 ** (lp - lb)
    note = ""
    bent = single > BEND_MIN_DECADES and rms_two < BEND_GAIN * single
    if not bent:
        side = "memory" if rms_mem <= rms_comp else "compute"
        note = (f"no bend: the points follow the {side} roof alone (rms {single:.3f} decades; two roofs "
                f"{rms_two:.3f}); sweep a wider intensity range")
    elif not (10 ** lx[0] <= ridge <= 10 ** lx[-1]):
        bent = False
        note = f"the fitted roofs cross at {ridge:.3g} FLOP/byte, outside the swept range; no ridge reported"
    # The knee needs a compute ceiling: the given one, else the fitted compute roof (none without a bend).
    ref = ref_peak if ref_peak else (10 ** lp if bent else None)
    knee, why = _knee(lx, ly, knee_fraction * ref) if ref else (None, "")
    if why:
        note = (note + "; " if note else "") + f"knee: {why}"
    if not bent:
        return RidgeFit(None, None, None, 0, 0, rms_two, knee, knee_fraction, ref, note)
    return RidgeFit(ridge, 10 ** lb, 10 ** lp, k, m - k, rms_two, knee, knee_fraction, ref, note)


# --------------------------------------------------------------- results --


@dataclass(frozen=True)
class IntensityPoint:
    """One timed point of the sweep.

    Attributes:
        dtype: ``fp32``, ``fp16`` or ``bf16``.
        fmas: FMA instructions per 16-byte vector.
        n_words: 32-bit words per array.
        flops: FLOPs per launch; bytes_moved: bytes per launch (read + write).
        time: per-launch :class:`~gpuwhy.engine.timing.Measurement` (s).
        peak_flops, bandwidth: the ceilings the roof uses (FLOP/s, B/s), None when unknown.
        grid, block: the launch shape.
    """

    dtype: str
    fmas: int
    n_words: int
    flops: int
    bytes_moved: int
    time: object
    peak_flops: float | None = None
    bandwidth: float | None = None
    grid: int = 0
    block: int = BLOCK

    @property
    def intensity(self) -> float:
        """FLOP/byte of this launch."""
        return self.flops / self.bytes_moved

    @property
    def achieved_flops(self) -> float:
        """FLOP/s (median time)."""
        return self.flops / self.time.median_s

    @property
    def achieved_bandwidth(self) -> float:
        """B/s (median time)."""
        return self.bytes_moved / self.time.median_s

    @property
    def roof_flops(self) -> float | None:
        """min(peak, bandwidth x intensity), FLOP/s; None without both ceilings."""
        if not self.peak_flops or not self.bandwidth:
            return None
        return min(self.peak_flops, self.bandwidth * self.intensity)

    @property
    def bound(self) -> str | None:
        """``memory`` or ``compute``: the lower roof at this intensity."""
        if not self.peak_flops or not self.bandwidth:
            return None
        return "memory" if self.bandwidth * self.intensity < self.peak_flops else "compute"

    @property
    def pct_of_roof(self) -> float | None:
        """Achieved FLOP/s as % of :attr:`roof_flops`."""
        roof = self.roof_flops
        return None if roof is None else 100.0 * self.achieved_flops / roof

    def to_dict(self) -> dict:
        t = self.time
        return {
            "dtype": self.dtype,
            "fmas_per_vector": self.fmas,
            "intensity": self.intensity,
            "n_words": self.n_words,
            "flops": self.flops,
            "bytes_moved": self.bytes_moved,
            "median_s": t.median_s,
            "min_s": t.min_s,
            "max_s": t.max_s,
            "cv": t.cv,
            "reps": t.reps,
            "achieved_tflops": self.achieved_flops / 1e12,
            "achieved_gbs": self.achieved_bandwidth / 1e9,
            "roof_tflops": None if self.roof_flops is None else self.roof_flops / 1e12,
            "bound": self.bound,
            "pct_of_roof": self.pct_of_roof,
            "grid": self.grid,
            "block": self.block,
        }


@dataclass(frozen=True)
class RooflineCurve:
    """One dtype's sweep: its points, the ceilings they are judged against, and the fit.

    Attributes:
        dtype, kernel, instruction: what ran.
        ceiling_key: the ``peak_tflops`` key of the compute roof (``fp32``, ``fp16_nontensor``, ...).
        peak_flops, peak_source: compute ceiling (FLOP/s) and where it came from (None: unknown).
        bandwidth, bandwidth_source: DRAM ceiling (B/s) and where it came from.
        points: the timed points, ascending intensity.
        fit: the :class:`RidgeFit` of the points.
        n_words, working_set_bytes, buffer_sets: the arrays (working set = in + out, one set).
        check: what the correctness check ran.
        notes: anything a reader must know.
    """

    dtype: str
    kernel: str
    instruction: str
    ceiling_key: str
    peak_flops: float | None
    peak_source: str
    bandwidth: float | None
    bandwidth_source: str
    points: tuple[IntensityPoint, ...]
    fit: RidgeFit
    n_words: int
    working_set_bytes: int
    buffer_sets: int
    check: str = ""
    notes: tuple[str, ...] = ()

    @property
    def model_ridge(self) -> float | None:
        """peak / bandwidth of the ceilings used (FLOP/byte), None without both."""
        if not self.peak_flops or not self.bandwidth:
            return None
        return self.peak_flops / self.bandwidth

    @property
    def plateau_flops(self) -> float | None:
        """The highest achieved FLOP/s of the sweep."""
        return max((p.achieved_flops for p in self.points), default=None)

    def to_dict(self) -> dict:
        return {
            "dtype": self.dtype,
            "kernel": self.kernel,
            "instruction": self.instruction,
            "ceiling_key": self.ceiling_key,
            "peak_tflops": None if self.peak_flops is None else self.peak_flops / 1e12,
            "peak_source": self.peak_source,
            "bandwidth_gbs": None if self.bandwidth is None else self.bandwidth / 1e9,
            "bandwidth_source": self.bandwidth_source,
            "model_ridge": self.model_ridge,
            "empirical_ridge": self.fit.ridge,
            "plateau_tflops": None if self.plateau_flops is None else self.plateau_flops / 1e12,
            "fit": self.fit.to_dict(),
            "n_words": self.n_words,
            "working_set_bytes": self.working_set_bytes,
            "buffer_sets": self.buffer_sets,
            "check": self.check,
            "notes": list(self.notes),
            "points": [p.to_dict() for p in self.points],
        }


@dataclass(frozen=True)
class RooflineSweep:
    """Everything one `gpuwhy bench --roofline` measured.

    ``device`` is a :class:`~gpuwhy.engine.context.DeviceInfo`; ``curves`` one
    :class:`RooflineCurve` per dtype measured; dtypes the GPU cannot run are in ``notes``.
    """

    device: object
    sheet_name: str | None
    curves: tuple[RooflineCurve, ...]
    date: str = ""
    duration_s: float = 0.0
    notes: tuple[str, ...] = ()

    def curve(self, dtype: str) -> RooflineCurve | None:
        """The curve of ``dtype``, or None."""
        return next((c for c in self.curves if c.dtype == dtype), None)

    def summary_line(self) -> str:
        """One line per run: each dtype's empirical ridge and how close the points get to the roof."""
        parts = []
        for c in self.curves:
            s = f"{c.dtype}: ridge "
            s += f"{c.fit.ridge:.3g} FLOP/byte measured" if c.fit.ridge else "not found"
            if c.model_ridge:
                s += f" (ceilings {c.model_ridge:.3g})"
            pcts = [p.pct_of_roof for p in c.points if p.pct_of_roof is not None]
            if pcts:
                s += f", points at {min(pcts):.0f}-{max(pcts):.0f}% of min(peak, bandwidth x intensity)"
            parts.append(s)
        name = getattr(self.device, "name", "GPU")
        return f"gpuwhy roofline sweep: {name}; " + ("; ".join(parts) if parts else "no dtype measured")

    def to_dict(self) -> dict:
        d = self.device
        return {
            "date": self.date,
            "device": d.to_dict() if hasattr(d, "to_dict") else d,
            "sheet": self.sheet_name,
            "convention": CONVENTION,
            "method": RIDGE_METHOD,
            "curves": [c.to_dict() for c in self.curves],
            "notes": list(self.notes),
            "duration_s": self.duration_s,
            "summary": self.summary_line(),
        }


# ------------------------------------------------------------- ceilings --


def sweep_ceilings(dtype: str, sheet=None, bw_profile=None, peak_profile=None) -> tuple[float | None, str, float | None, str, list[str]]:
    """(peak FLOP/s, its source, bandwidth B/s, its source, notes) for a sweep of ``dtype``.

    The measured figures of the profiles win (``peak_profile.peak_tflops_measured``
    under :data:`CEILING_KEY`, ``bw_profile.dram_bandwidth_gbs``); else the sheet's;
    else None with a note.
    """
    key = CEILING_KEY[dtype]
    notes: list[str] = []
    peak = bw = None
    psrc = bsrc = "unknown"
    peaks = getattr(peak_profile, "peak_tflops_measured", None) or {}
    if peaks.get(key):
        peak = float(peaks[key]) * 1e12
        psrc = f"measured {key} ({getattr(peak_profile, 'compute_date', None) or peak_profile.date}, gpuwhy bench --compute)"
    elif sheet is not None and key in getattr(sheet, "peak_tflops", {}):
        peak = sheet.peak_flops(key)
        psrc = f"{sheet.name} sheet, dense {key}"
        notes.append(f"no measured {key} peak in the device profile (run `gpuwhy bench --compute`): the sheet's is used")
    else:
        notes.append(f"no {key} ceiling (neither measured nor on the sheet): no % of the roofline for {dtype}")
    if getattr(bw_profile, "dram_bandwidth_gbs", None):
        bw = float(bw_profile.dram_bandwidth_gbs) * 1e9
        bsrc = f"measured ({bw_profile.date}, {bw_profile.dram_kernel or 'gpuwhy bench'})"
    elif sheet is not None:
        bw = sheet.bandwidth_bytes_per_s
        bsrc = f"{sheet.name} sheet"
        notes.append("no measured DRAM bandwidth in the device profile (run `gpuwhy bench`): the sheet's is used")
    else:
        notes.append(f"no DRAM bandwidth (no profile, no sheet): no % of the roofline for {dtype}")
    return peak, psrc, bw, bsrc, notes


# ---------------------------------------------------------------- runner --


class IntensityBench:
    """Checks and times the intensity kernels on an open :class:`~gpuwhy.engine.context.GpuContext`.

    Args:
        ctx: the device.
        dtype: one of :data:`DTYPES` (the GPU must support it, see :func:`supported`).
        defines: NVRTC macros for intensity.cu (``GPUWHY_INT_UNROLL`` also sets the host's chunk size).
    """

    def __init__(self, ctx, dtype: str = "fp32", defines: dict | None = None):
        self.ctx = ctx
        self.dtype = check_dtype(dtype)
        if not supported(self.dtype, ctx.info.arch):
            need = MIN_CC[self.dtype]
            raise UsageError(f"the {self.dtype} sweep ({INSTRUCTION[self.dtype]}) needs sm_{need[0]}{need[1]} or newer; "
                             f"this GPU is {ctx.info.arch}")
        self.defines = dict(defines or {})
        self.unroll = int(self.defines.get("GPUWHY_INT_UNROLL", UNROLL))

    def kernel(self):
        return self.ctx.kernel(SOURCE, KERNELS[self.dtype], self.defines or None)

    def launch(self, grid: int, inp: int, out: int, n_words: int, mul: int, add: int, fmas: int) -> None:
        self.ctx.launch(self.kernel(), grid, BLOCK, inp, out, np.uint64(n_words), np.uint32(mul), np.uint32(add),
                        np.int32(fmas))

    def fill(self, ptr: int, n_words: int, seed: int) -> None:
        """Fill ``n_words`` words at ``ptr`` with non-zero values in [0.5, 1.5) on the GPU."""
        k = self.ctx.kernel(SOURCE, FILL_KERNEL, self.defines or None)
        grid = max(1, min(self.ctx.info.sm_count * 8, -(-n_words // BLOCK)))
        self.ctx.launch(k, grid, BLOCK, ptr, np.uint64(n_words), np.uint64(seed), np.int32(FILL_FORMAT[self.dtype]))

    # ------------------------------------------------------------ check
    def check_plan(self, n_words: int, rng: np.random.Generator) -> list[tuple[str, int, int, int, float, np.ndarray]]:
        """(label, fmas, mul word, add word, bound, input words) of every check run at ``n_words``."""
        d = self.dtype
        plan = []
        exact_in = exact_inputs(rng, n_words, d)
        one, eighth = scalar_word(1.0, d), scalar_word(0.125, d)
        for f in (EXACT_FMAS if n_words < max(CHECK_WORDS) else EXACT_FMAS_LARGE):
            plan.append((f"exact steps (mul=1, add=1/8), fmas={f}", f, one, eighth, 0.0, exact_in))
        rand_in = random_inputs(rng, n_words, d)
        for f in RANDOM_FMAS[: 1 if n_words >= max(CHECK_WORDS) else None]:
            mul = scalar_word((float(rng.uniform(0.6, 0.95)), float(rng.uniform(0.6, 0.95))) if d != "fp32"
                              else float(rng.uniform(0.6, 0.95)), d)
            add = scalar_word((float(rng.uniform(0.05, 0.3)), float(rng.uniform(0.05, 0.3))) if d != "fp32"
                              else float(rng.uniform(0.05, 0.3)), d)
            plan.append((f"random contracting chain, fmas={f}", f, mul, add, VERIFY_BOUND[d], rand_in))
        return plan

    def check(self, sizes: Sequence[int] = CHECK_WORDS, rng: np.random.Generator | None = None) -> str:
        """Run the kernel on random host data at each size (one-chunk-per-block grid and a
        3-block grid that loops over chunks) and compare with :func:`emulate`.

        Returns:
            a one-line description of what was checked.

        Raises:
            MeasurementError: a wrong value, an unwritten one (NaN poison left), or a
                write past the end of the output (guard changed).
        """
        rng = rng or np.random.default_rng()
        ctx, d = self.ctx, self.dtype
        for n in sizes:
            grids = [launch_grid(n, BLOCK, self.unroll)]
            if grids[0] > 3:
                grids.append(3)
            inp = ctx.alloc(n * WORD_BYTES)
            out = ctx.alloc((n + GUARD) * WORD_BYTES)
            try:
                for label, fmas, mul, add, bound, words in self.check_plan(n, rng):
                    ctx.upload(inp, words)
                    want = emulate(words, fmas, mul, add, d)
                    for grid in grids:
                        ctx.memset(out, 0xFF)
                        self.launch(grid, inp.ptr, out.ptr, n, mul, add, fmas)
                        ctx.sync(f"running {KERNELS[d]} at n_words={n}")
                        got = ctx.download(out, np.uint32, n + GUARD)
                        where = f"at n_words={n} (grid {grid} x {BLOCK}; {label})"
                        if not np.all(got[n:] == 0xFFFFFFFF):
                            raise MeasurementError(f"kernel {KERNELS[d]} wrote past the end of its output {where}; "
                                                   f"the kernel in microbench/{SOURCE} is wrong")
                        problem = mismatch(got[:n], want, d, bound)
                        if problem:
                            raise MeasurementError(f"kernel {KERNELS[d]} gave a wrong result {where}: {problem}; "
                                                   f"the kernel in microbench/{SOURCE} is wrong (no figure reported)")
            finally:
                inp.free()
                out.free()
        sizes_txt = ", ".join(f"{s:,}" for s in sizes)
        return (f"checked against numpy at n_words = {sizes_txt} (random non-zero data): exact step counts "
                f"(fmas {', '.join(map(str, EXACT_FMAS))}) and a random contracting chain (fmas "
                f"{', '.join(map(str, RANDOM_FMAS))}, relative error <= {VERIFY_BOUND[d]:.2g})")

    # ------------------------------------------------------------ timing
    def run(self, fmas_list: Sequence[int], *, n_words: int | None = None, sheet=None, bw_profile=None,
            peak_profile=None, budget_s: float = 0.05, min_reps: int = 5, max_reps: int = 100,
            check_sizes: Sequence[int] = CHECK_WORDS, rng: np.random.Generator | None = None,
            on_point: Callable[[IntensityPoint], None] | None = None, free_fraction: float = 0.8) -> RooflineCurve:
        """Check the kernel, then time every FMA count of ``fmas_list`` over one set of arrays.

        Args:
            fmas_list: FMA counts per vector (see :func:`sweep_fmas`).
            n_words: words per array (default :func:`sweep_words` for this GPU).
            sheet, bw_profile, peak_profile: where the ceilings come from (:func:`sweep_ceilings`).
            budget_s, min_reps, max_reps: per-point timing budget (see :func:`~gpuwhy.engine.timing.time_gpu`).

        Raises:
            MeasurementError: a wrong result (nothing timed), a CUDA error, arrays that do
                not fit in the GPU's free memory.
        """
        from ..engine.context import DeviceOutOfMemory
        from ..engine.timing import time_gpu
        from .memory import plan_sets
        from .results import buffer_sets_needed

        ctx, d = self.ctx, self.dtype
        check = self.check(check_sizes, rng)
        kern = self.kernel()
        bps = ctx.occupancy(kern, BLOCK)
        if n_words is None:
            n_words = sweep_words(ctx.info.l2_bytes, wave_words(ctx.info.sm_count, bps, BLOCK, self.unroll))
        n_words = int(n_words)
        ws = launch_bytes(n_words)
        free, _ = ctx.mem_info()
        sets = plan_sets(ws, buffer_sets_needed(ws, ctx.info.l2_bytes), free, 0, free_fraction)
        notes: list[str] = []
        if sets < 1:
            raise MeasurementError(f"the {d} sweep needs {ws:,} bytes (2 arrays of {n_words:,} words) and the GPU has "
                                   f"{free:,} bytes free; free GPU memory and run it again")
        peak, psrc, bw, bsrc, cnotes = sweep_ceilings(d, sheet, bw_profile, peak_profile)
        notes.extend(cnotes)
        grid = launch_grid(n_words, BLOCK, self.unroll)
        mul_v, add_v = TIMED_MUL_ADD[d]
        mul, add = scalar_word(mul_v, d), scalar_word(add_v, d)
        bufs = []
        points: list[IntensityPoint] = []
        try:
            try:
                for _ in range(sets):
                    bufs.append((ctx.alloc(n_words * WORD_BYTES), ctx.alloc(n_words * WORD_BYTES)))
            except DeviceOutOfMemory:
                raise MeasurementError(f"out of GPU memory allocating {sets} x {ws:,} bytes for the {d} sweep; "
                                       "free GPU memory and run it again") from None
            for s, (inp, _out) in enumerate(bufs):
                self.fill(inp.ptr, n_words, seed=101 + s)
            cfg = ctx.config(grid, BLOCK)
            stream = ctx.stream
            from cuda.core import launch

            for fmas in fmas_list:
                argsets = [(inp.ptr, out.ptr, np.uint64(n_words), np.uint32(mul), np.uint32(add), np.int32(fmas))
                           for inp, out in bufs]

                def fn(i, argsets=argsets):
                    launch(stream, cfg, kern, *argsets[i % len(argsets)])

                m = time_gpu(stream, ctx.events, fn, warmup=2, budget_s=budget_s, min_reps=min_reps,
                             max_reps=max_reps, pad=ctx.spin)
                pt = IntensityPoint(d, int(fmas), n_words, launch_flops(n_words, fmas, d), ws, m, peak, bw, grid, BLOCK)
                points.append(pt)
                if on_point:
                    on_point(pt)
            ctx.sync(f"timing the {d} sweep")
            self._check_timed(bufs, n_words)
        finally:
            for pair in bufs:
                for b in pair:
                    b.free()
        points.sort(key=lambda p: p.intensity)
        fit = fit_ridge([p.intensity for p in points], [p.achieved_flops for p in points], ref_peak=peak)
        if fit.note:
            notes.append(fit.note)
        return RooflineCurve(
            dtype=d, kernel=KERNELS[d], instruction=INSTRUCTION[d], ceiling_key=CEILING_KEY[d], peak_flops=peak,
            peak_source=psrc, bandwidth=bw, bandwidth_source=bsrc, points=tuple(points), fit=fit, n_words=n_words,
            working_set_bytes=ws, buffer_sets=len(bufs), check=check, notes=tuple(notes),
        )

    def _check_timed(self, bufs, n_words: int) -> None:
        """After timing: the first and last words of every output are finite and in (0.25, 2)."""
        k = min(n_words, 1 << 16)
        for _inp, out in bufs:
            head = self.ctx.download(out, np.uint32, k)
            vals = _decode(head, self.dtype)
            # the tail: download everything up to the end only when the array is small
            if n_words <= 1 << 20:
                vals = _decode(self.ctx.download(out, np.uint32, n_words), self.dtype)
            if not np.all(np.isfinite(vals)) or not np.all((vals > 0.25) & (vals < 2.0)):
                bad = int(np.count_nonzero(~(np.isfinite(vals) & (vals > 0.25) & (vals < 2.0))))
                raise MeasurementError(f"{KERNELS[self.dtype]}: {bad} outputs out of range or not finite after timing; "
                                       "the kernel is wrong on this GPU (no figure reported)")


def _profiles_for(uuid: str):
    """(newest profile with DRAM bandwidth, newest with measured peaks) of the GPU, either may be None."""
    try:
        from ..profiles import latest_profile

        return latest_profile(uuid, need="dram_bandwidth_gbs"), latest_profile(uuid, need="peak_tflops_measured")
    except Exception:  # an unreadable cache folder must not stop a measurement
        return None, None


def run_roofline_sweep(ctx, sheet=None, dtypes: Sequence[str] = ("fp32",), *, profile=None,
                       intensities: Sequence[float] | None = None, n_words: int | None = None,
                       budget_s: float = 0.05, min_reps: int = 5, max_reps: int = 100,
                       check_sizes: Sequence[int] = CHECK_WORDS, rng: np.random.Generator | None = None,
                       on_point: Callable[[IntensityPoint], None] | None = None) -> RooflineSweep:
    """The mixed-intensity sweep on the open device.

    Args:
        ctx: an open :class:`~gpuwhy.engine.context.GpuContext`.
        sheet: the device's spec sheet (default: matched from the NVML name and PCI id).
        dtypes: any of :data:`DTYPES`; types the GPU lacks (bf16 before sm_80) are
            skipped with a note.
        profile: a :class:`~gpuwhy.profiles.DeviceProfile` to take the measured
            ceilings from (default: the GPU's newest profile with DRAM bandwidth and
            the newest with measured peaks).
        intensities: target FLOP/byte values (default: 1/8 .. 1024, two per octave);
            each is rounded to a whole FMA count per vector.
        n_words: words per array (default: whole waves, working set >= 8 x L2).
        budget_s, min_reps, max_reps: per-point timing budget.
        check_sizes: word counts of the correctness check.
        rng: random generator for the check data (fresh by default).
        on_point: called with each point as it is timed (progress).

    Returns:
        a :class:`RooflineSweep` (one curve per dtype measured).

    Raises:
        UsageError: an unknown dtype. MeasurementError: a wrong kernel result (nothing
        timed), a CUDA error, arrays that do not fit.
    """
    t0 = time.perf_counter()
    date = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
    want = []
    for d in dtypes:
        d = check_dtype(d)
        if d not in want:
            want.append(d)
    if sheet is None:
        from .compute import find_sheet

        sheet = find_sheet(ctx)
    if profile is not None:
        bw_prof = peak_prof = profile
    else:
        bw_prof, peak_prof = _profiles_for(ctx.info.uuid)
    notes: list[str] = []
    if sheet is None:
        notes.append(f"no spec sheet matches {ctx.info.name!r}: ceilings only from the device profile")
    curves = []
    for d in want:
        if not supported(d, ctx.info.arch):
            need = MIN_CC[d]
            notes.append(f"{d} skipped: {INSTRUCTION[d]} needs sm_{need[0]}{need[1]} or newer (this GPU is {ctx.info.arch})")
            continue
        if intensities is None:
            fl = sweep_fmas(d)
        else:
            fl = sorted({fmas_for(float(i), d) for i in intensities})
        bench = IntensityBench(ctx, d)
        curves.append(bench.run(fl, n_words=n_words, sheet=sheet, bw_profile=bw_prof, peak_profile=peak_prof,
                                budget_s=budget_s, min_reps=min_reps, max_reps=max_reps, check_sizes=check_sizes,
                                rng=rng, on_point=on_point))
    return RooflineSweep(device=ctx.info, sheet_name=getattr(sheet, "name", None), curves=tuple(curves), date=date,
                         duration_s=time.perf_counter() - t0, notes=tuple(notes))
