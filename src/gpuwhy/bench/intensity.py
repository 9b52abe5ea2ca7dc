"""The mixed-intensity sweep (`gpuwhy bench --roofline`): the measured roofline, point by point.

The kernel family (``microbench/intensity.cu``) and the arithmetic of FLOPs, bytes and
intensity per launch are in :mod:`gpuwhy.model.roofline.intensity_sweep`; ``fmas``, the FMA
instructions per 16-byte vector, sets the intensity (fp32: fmas / 16 FLOP/byte; fp16 and
bf16 half pairs: fmas / 8).

The sweep runs two points per octave from 1/8 to 1024 FLOP/byte
(:func:`~gpuwhy.model.roofline.intensity_sweep.sweep_fmas`) over arrays of at least
:data:`~gpuwhy.model.roofline.intensity_sweep.WS_FACTOR` x L2 (so every byte comes from DRAM). At each point it
reports the achieved FLOP/s and GB/s and the % of the roofline
min(peak, bandwidth x intensity), with the ceilings the device profile measured
(``gpuwhy bench`` and ``bench --compute``) where it has them, else the spec
sheet's. fp16/bf16 here are CUDA-core half2 arithmetic, so their compute roof is
the ``fp16_nontensor``/``bf16_nontensor`` ceiling, not the tensor-core peak.

The empirical ridge point and the knee: :func:`gpuwhy.model.roofline.ridge_fit.fit_ridge`
(two roofs fitted in log-log space; :data:`~gpuwhy.model.roofline.ridge_fit.RIDGE_METHOD`).

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

The pure parts (intensity arithmetic, FLOP counts and sizing in
:mod:`gpuwhy.model.roofline.intensity_sweep`, the ridge fit in :mod:`gpuwhy.model.roofline.ridge_fit`,
the word formats in :mod:`gpuwhy.model.kernels.number_formats`) and the emulation here need
no GPU and are tested without one.
"""

from __future__ import annotations

import datetime as _dt
import time
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..errors import MeasurementError, UsageError
from ..model.roofline.intensity_sweep import (
    BLOCK,
    CEILING_KEY,
    CONVENTION,
    DTYPES,
    MIN_WS_BYTES,
    STEPS_UNROLL,
    UNROLL,
    WORD_BYTES,
    WORDS_PER_VECTOR,
    WS_FACTOR,
    check_dtype,
    fmas_for,
    intensity_of,
    lane_steps,
    launch_bytes,
    launch_flops,
    launch_grid,
    sweep_fmas,
    sweep_words,
    wave_words,
)
from ..model.kernels.number_formats import (
    bf16_round,
    round_to_format as _round,
    scalar_word,
    values_to_words as _encode,
    words_to_values as _decode,
)
from ..model.roofline.ridge_fit import RIDGE_METHOD, RidgeFit, fit_ridge  # noqa: F401
from ..units import fmt_num

SOURCE = "intensity.cu"
KERNELS = {"fp32": "intensity_f32", "fp16": "intensity_f16x2", "bf16": "intensity_bf16x2"}
FILL_KERNEL = "intensity_fill"
FILL_FORMAT = {"fp32": 0, "fp16": 1, "bf16": 2}
#: The instruction each sweep issues.
INSTRUCTION = {"fp32": "FFMA", "fp16": "HFMA2 (fp16 pairs)", "bf16": "HFMA2.BF16 (bf16 pairs)"}
#: First compute capability with the instruction (fma.rn.f16x2: sm_53; fma.rn.bf16x2: sm_80, PTX ISA 7.0).
MIN_CC = {"fp32": (3, 0), "fp16": (5, 3), "bf16": (8, 0)}

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


def supported(dtype: str, arch: str) -> bool:
    """Whether ``arch`` (``sm_90``) has the sweep's instruction for ``dtype``."""
    from ..archs import parse_arch

    return parse_arch(arch).major_minor >= MIN_CC[check_dtype(dtype)]


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
            s += f"{fmt_num(c.fit.ridge)} FLOP/byte measured" if c.fit.ridge else "not found"
            if c.model_ridge:
                s += f" (ceilings {fmt_num(c.model_ridge)})"
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
                f"{', '.join(map(str, RANDOM_FMAS))}, relative error <= {fmt_num(VERIFY_BOUND[d], 2)})")

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
            go = ctx.launcher(kern, grid, BLOCK)
            stream = ctx.stream
            for fmas in fmas_list:
                argsets = [(inp.ptr, out.ptr, np.uint64(n_words), np.uint32(mul), np.uint32(add), np.int32(fmas))
                           for inp, out in bufs]

                def fn(i, argsets=argsets):
                    go(*argsets[i % len(argsets)])

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
        from ..device.sheet import sheet_for

        sheet = sheet_for(device=ctx.info).sheet
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
