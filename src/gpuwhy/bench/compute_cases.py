"""The compute-ceiling cases: one small class per kernel family, and the references they are checked against.

:class:`FmaCase` (CUDA-core FMA, ``microbench/compute_fma.cu``), :class:`MmaCase`
(warp-level mma.sync, ``compute_mma.cu``) and :class:`WgmmaCase` (Hopper wgmma,
``compute_wgmma.cu``, built for sm_90a): each knows its kernel, its launch shape, the
FLOPs one launch does, and a verify step that runs the kernel on small random inputs
and compares with numpy (float64 reference; :data:`VERIFY_BOUND` relative Frobenius
error). A wrong result raises :class:`~gpuwhy.errors.MeasurementError` (exit 4).
Choosing and timing the cases is :mod:`gpuwhy.bench.compute`; operand formats and
fragment layouts are :mod:`gpuwhy.model.kernels.mma_fragments`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..errors import MeasurementError, UsageError
from ..model.kernels.mma_fragments import (
    ELEM_BITS,
    MMA_ACC,
    WG_KSTEPS,
    WG_THREADS,
    Operand,
    mma_a_fragments,
    mma_b_fragments,
    mma_k,
    mma_unpack_acc,
    random_operand,
    wgmma_a_fragments,
    wgmma_kstep_elems,
    wgmma_tiles,
    wgmma_unpack_acc,
)
from ..model.kernels.number_formats import half2_word
from ..units import fmt_counted, fmt_g, fmt_num

FMA_SOURCE = "compute_fma.cu"
MMA_SOURCE = "compute_mma.cu"
WGMMA_SOURCE = "compute_wgmma.cu"

#: Mirrors of the kernels' compile-time constants (tests/test_compute_kernels.py
#: reads the .cu files and checks these stay in step; MMA_ACC, WG_KSTEPS and
#: WG_THREADS are in :mod:`gpuwhy.model.kernels.mma_fragments`).
FMA_CHAINS = 8
FMA_UNROLL = {"fp32": 64, "fp64": 32, "fp16_nontensor": 64}
MMA_UNROLL = 2
WG_TILE_A_BYTES = 64 * 128
WG_TILE_B_BYTES = 256 * 128
FMA_BLOCK = 256
MMA_BLOCK = 256

#: Relative-error bounds of the verify step (‖got − ref‖ / ‖ref‖, float64 reference).
VERIFY_BOUND = {
    "fp64": 1e-13, "fp32": 1e-6, "fp16_nontensor": 1e-3,
    "tf32": 1e-3, "fp16": 1e-3, "bf16": 1e-3, "fp8": 1e-2, "int8": 0.0,
}


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
            f"{what} gave a wrong result: relative error {fmt_num(err)} > {fmt_g(bound)}; "
            "the compute kernel is wrong on this GPU (no figure reported)"
        )
    return f"rel err {fmt_num(err, 2)} <= {fmt_g(bound)}"


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



MMA_KERNELS = {
    "fp16": ("mma_fp16_f32", 2 * 16 * 8 * 16, (8, 0)),
    "bf16": ("mma_bf16_f32", 2 * 16 * 8 * 16, (8, 0)),
    "tf32": ("mma_tf32_f32", 2 * 16 * 8 * 8, (8, 0)),
    "int8": ("mma_int8_s32", 2 * 16 * 8 * 32, (8, 0)),
    "fp8": ("mma_fp8_f32", 2 * 16 * 8 * 32, (8, 9)),
}


@dataclass(frozen=True)
class TensorCase(ComputeCase):
    """A tensor-core case: its operands' element width follows from the precision."""

    unit: ClassVar[str] = "tensor cores"
    probe_iters: ClassVar[int] = 64

    @property
    def elem_bits(self) -> int:
        """Bits per input element: 32 (tf32), 16 (fp16, bf16), 8 (fp8, int8)."""
        return ELEM_BITS[self.precision]


@dataclass(frozen=True)
class MmaCase(TensorCase):
    """Tensor cores through warp-level mma.sync (compute_mma.cu), operands in registers."""

    source: ClassVar[str] = MMA_SOURCE

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
class WgmmaCase(TensorCase):
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
    source: ClassVar[str] = WGMMA_SOURCE

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
        knobs = "" if self.defines is None else f", {fmt_counted(self.passes, 'pass', 'passes')}/group, wait_group {self.inflight}"
        return f"wgmma m64n{self.n}k{k} ({where}{accs}), {fmt_counted(self.warpgroups, 'warpgroup')}/block{knobs}"

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
        return ctx.kernel(self.source, self.kernel, self.defines, arch="sm_90a")

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
