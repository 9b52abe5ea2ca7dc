"""Compute ceilings: what the math units really deliver (FMA on CUDA cores, tensor cores).

Entry point (``gpuwhy bench --compute``, a mode of :mod:`gpuwhy.bench.modes`)::

    from gpuwhy.engine.context import open_device
    from gpuwhy.bench.compute import run_compute

    with open_device("0") as ctx:
        results = run_compute(ctx)            # list[ComputeResult], one per case
        results = run_compute(ctx, ["fp32", "bf16"], variants="all")

Each case is one small class (:class:`~gpuwhy.bench.compute_cases.FmaCase`,
:class:`~gpuwhy.bench.compute_cases.MmaCase`, :class:`~gpuwhy.bench.compute_cases.WgmmaCase`,
in :mod:`gpuwhy.bench.compute_cases`): the kernel in ``microbench/compute_*.cu``, its launch
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

Pure parts need no GPU and are tested without one: FLOP counts and verify
comparisons (:mod:`gpuwhy.bench.compute_cases`), operand formats, fragment layouts
and swizzling (:mod:`gpuwhy.model.kernels.mma_fragments`, :mod:`gpuwhy.model.kernels.number_formats`),
peaks (here). This module chooses the cases for an architecture and times them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..archs import parse_arch
from ..device.sample import ClockSampler
from ..device.sheet import sheet_for
from ..errors import UsageError
from ..model.kernels.mma_fragments import (
    ELEM_BITS,
    MMA_ACC,
    WG_KSTEPS,
    WG_THREADS,
    Operand,
    random_operand,
    swizzle_128b,
    unswizzle_128b,
    wgmma_kstep_elems,
)
from ..model.kernels.number_formats import bf16_bits, bf16_to_float, e4m3_to_float, half2_word, random_e4m3, tf32_round  # noqa: F401
from .compute_cases import (  # noqa: F401
    FMA_CHAINS,
    FMA_UNROLL,
    MMA_KERNELS,
    MMA_UNROLL,
    WG_MAX_WARPGROUPS,
    WG_PRECISION_BIT,
    WG_SHAPES,
    WG_TILE_A_BYTES,
    WG_TILE_B_BYTES,
    ComputeCase,
    FmaCase,
    MmaCase,
    WgmmaCase,
    check_bound,
    fma_flops,
    fma_initial,
    fma_reference,
    mma_flops,
    rel_error,
    wgmma_flops,
    wgmma_kernel_name,
)

#: Every precision gpuwhy can measure, in report order.
PRECISIONS = ("fp64", "fp32", "fp16_nontensor", "tf32", "fp16", "bf16", "fp8", "int8")
TENSOR_PRECISIONS = ("tf32", "fp16", "bf16", "fp8", "int8")

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
            from :func:`gpuwhy.device.derive.clock_event_keys`): why the clock was below its maximum.
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
    from ..device.derive import clock_event_keys

    clk, lo, hi, n = clock_summary([s[0] for s in samples if s and s[0]])
    pw = sorted(float(s[1]) for s in samples if s and s[1])
    mask = 0
    for s in samples:
        if s and s[2]:
            mask |= int(s[2])
    return {"sm_clock_mhz": clk, "sm_clock_min_mhz": lo, "sm_clock_max_mhz": hi, "clock_samples": n,
            "power_w": pw[len(pw) // 2] if pw else None,
            "clock_events": tuple(r for r in clock_event_keys(mask) if r != "gpu_idle")}


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
        go = ctx.launcher(kern, grid, block)
        stream = ctx.stream

        def launcher(iters):
            a = case.args(state, iters)
            return lambda i: go(*a)

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
    from ..device.sample import LIMITING_KEYS

    held = [r for r in ss["clock_events"] if r in LIMITING_KEYS]
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
        sheet = sheet_for(device=ctx.info).sheet
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

