"""The mixed-intensity sweep's arithmetic: FLOPs and bytes per launch, FMA counts per intensity, array sizes.

One kernel family (``microbench/intensity.cu``): each thread reads 16-byte vectors, runs
a chain of fused multiply-adds on every 32-bit word and writes the result. ``fmas``, the
FMA instructions per 16-byte vector, sets the arithmetic intensity (bytes = read + write,
each once)::

    fp32  (FFMA, 2 FLOP per word-step):                 intensity = fmas / 16 FLOP/byte
    fp16, bf16 (HFMA2 on a half pair, 4 FLOP/step):     intensity = fmas / 8  FLOP/byte

Also the ``peak_tflops`` key that bounds each sweep (:data:`CEILING_KEY`) and the byte
convention printed with it (:data:`CONVENTION`). Pure: no GPU, no CUDA.
"""

from __future__ import annotations

import math

from ...errors import UsageError

#: Sweep element types, in report order.
DTYPES = ("fp32", "fp16", "bf16")
#: FLOPs of one step on one 32-bit word: FFMA = 2; HFMA2 = two FMAs = 4.
FLOPS_PER_STEP = {"fp32": 2, "fp16": 4, "bf16": 4}
#: The profile/sheet ``peak_tflops`` key that bounds each sweep: CUDA-core rates.
CEILING_KEY = {"fp32": "fp32", "fp16": "fp16_nontensor", "bf16": "bf16_nontensor"}

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
#: How the sweep counts bytes and FLOPs (printed and in --json beside every figure).
CONVENTION = ("bytes = bytes read + bytes written (each element once, from DRAM: working set >= "
              f"{WS_FACTOR} x L2); FLOPs = 2 per FMA (half2: 4 per HFMA2); intensity = FLOPs / bytes")


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
