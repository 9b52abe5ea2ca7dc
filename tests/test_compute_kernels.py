"""Compute-ceiling kernels and their Python cases, without a GPU.

- every compute kernel compiles to a cubin with NVRTC for each architecture it
  supports (and the kernels each cubin must hold are there);
- the Python mirrors of the kernels' constants match the .cu files;
- FLOP-count arithmetic, peaks, number formats, swizzling, fragment packing;
- each case's verify step, run against a fake GPU context that executes the
  kernels in numpy following the PTX ISA's tables (written out element by
  element here, independently of the vectorised helpers), passes on a correct
  "kernel" and fails on a wrong one.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from conftest import nvrtc_available
from gpuwhy.archs import parse_arch

from gpuwhy.bench import compute as C
from gpuwhy.errors import MeasurementError, UsageError
from gpuwhy.resources import bundled_dir

MB = bundled_dir("microbench")

FMA_KERNELS = {"fma_fp32", "fma_fp64", "fma_fp16x2"}
MMA_KERNELS = {"mma_fp16_f32", "mma_bf16_f32", "mma_tf32_f32", "mma_int8_s32"}
WGMMA_KERNELS = {C.wgmma_kernel_name(p, a, s) for p in C.TENSOR_PRECISIONS for a in ("ss", "rs") for s in C.WG_SHAPES}


needs_nvrtc = pytest.mark.skipif(not nvrtc_available()[0], reason=f"NVRTC not loadable: {nvrtc_available()[1]}")


# ---------------------------------------------------------------- compile --


@needs_nvrtc
@pytest.mark.parametrize("arch", ["sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"])
def test_fma_and_mma_compile(arch, compiled):
    fma = compiled("compute_fma.cu", arch)
    assert fma.cubin[:4] == b"\x7fELF" and set(fma.kernel_names) == FMA_KERNELS
    mma = compiled("compute_mma.cu", arch)
    want = set(MMA_KERNELS)
    if parse_arch(arch).major_minor >= (8, 9):
        want.add("mma_fp8_f32")
    assert set(mma.kernel_names) == want


@needs_nvrtc
def test_wgmma_compiles_for_sm90a_with_every_variant(compiled):
    mod = compiled("compute_wgmma.cu", "sm_90a")
    assert mod.arch == "sm_90a"
    assert set(mod.kernel_names) == WGMMA_KERNELS
    # ptxas says so when it serialises the wgmma pipeline ("wgmma.mma_async instructions are
    # serialized ...", C7510-C7515); an injected warpgroup.arrive (C7519) is only informational.
    assert "serialized" not in mod.log


@needs_nvrtc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90", "sm_100", "sm_120"])
def test_wgmma_source_builds_a_stub_elsewhere(arch, compiled):
    mod = compiled("compute_wgmma.cu", arch)
    assert mod.kernel_names == ("wgmma_needs_sm_90a",)


def _define(path, name) -> int:
    m = re.search(rf"#define {name} (\d+)", (MB / path).read_text())
    assert m, f"{name} not in {path}"
    return int(m.group(1))


def test_python_constants_match_the_kernels():
    assert _define("compute_fma.cu", "FMA_CHAINS") == C.FMA_CHAINS
    assert _define("compute_fma.cu", "FP32_UNROLL") == C.FMA_UNROLL["fp32"]
    assert _define("compute_fma.cu", "FP64_UNROLL") == C.FMA_UNROLL["fp64"]
    assert _define("compute_fma.cu", "FP16_UNROLL") == C.FMA_UNROLL["fp16_nontensor"]
    assert _define("compute_mma.cu", "MMA_ACC") == C.MMA_ACC
    assert _define("compute_mma.cu", "MMA_UNROLL") == C.MMA_UNROLL
    assert _define("compute_wgmma.cu", "WG_KSTEPS") == C.WG_KSTEPS
    assert _define("compute_wgmma.cu", "WG_TILE_A_BYTES") == C.WG_TILE_A_BYTES
    assert _define("compute_wgmma.cu", "WG_TILE_B_BYTES") == C.WG_TILE_B_BYTES
    assert _define("compute_wgmma.cu", "WG_MAX_THREADS_SS") == C.WG_THREADS * C.WG_MAX_WARPGROUPS["ss"]
    assert _define("compute_wgmma.cu", "WG_MAX_THREADS_RS") == C.WG_THREADS * C.WG_MAX_WARPGROUPS["rs"]
    for p, bit in C.WG_PRECISION_BIT.items():
        assert f"#if WG_PRECISIONS & {bit}  // {p}" in (MB / "compute_wgmma.cu").read_text()
    src = (MB / "compute_wgmma.cu").read_text()
    for p in C.TENSOR_PRECISIONS:
        k = C.wgmma_kstep_elems(C.ELEM_BITS[p])
        for shp, (n, _) in C.WG_SHAPES.items():
            assert f"m64n{n}k{k}" in src


# ----------------------------------------------------------------- FLOPs --


def test_flop_counts():
    # 132 SMs x 2048 threads, 10 iterations: 8 chains x 64 unrolled FFMAs x 2 FLOP each.
    assert C.fma_flops("fp32", 132 * 2048, 10) == 132 * 2048 * 10 * 8 * 64 * 2
    assert C.fma_flops("fp64", 1000, 3) == 1000 * 3 * 8 * 32 * 2
    assert C.fma_flops("fp16_nontensor", 1000, 3) == 1000 * 3 * 8 * 64 * 2 * 2
    assert C.mma_flops("bf16", 10, 7) == 10 * 7 * 2 * 8 * 4096
    assert C.mma_flops("tf32", 1, 1) == 16 * 2048
    assert C.mma_flops("int8", 1, 1) == 16 * 8192
    # m64n256k16: 2*64*256*16 = 524288 FLOP, 4 per loop step.
    assert C.wgmma_flops("bf16", 256, 1, 264, 5) == 264 * 5 * 4 * 524288
    assert C.wgmma_flops("fp8", 256, 1, 1, 1) == 4 * 2 * 64 * 256 * 32
    assert C.wgmma_flops("tf32", 128, 2, 1, 1) == 4 * 2 * 2 * 64 * 128 * 8
    assert C.wgmma_flops("int8", 128, 2, 1, 1) == C.wgmma_flops("fp8", 256, 1, 1, 1)


def test_case_flops_use_launch_shape():
    case = C.WgmmaCase("bf16", "wgmma_bf16_ss_n256", "ss", "n256", 2)
    assert case.flops(132, 256, 100) == C.wgmma_flops("bf16", 256, 1, 264, 100)
    assert C.MmaCase("fp16", "mma_fp16_f32").flops(10, 256, 3) == C.mma_flops("fp16", 80, 3)
    assert C.FmaCase("fp64", "fma_fp64").flops(4, 256, 2) == C.fma_flops("fp64", 1024, 2)


def test_wgmma_knobs():
    base = C.WgmmaCase("fp8", "wgmma_fp8_ss_n256", "ss", "n256", 2)
    assert base.defines is None and base.label == "wgmma_fp8_ss_n256/wg2"
    deep = C.WgmmaCase("fp8", "wgmma_fp8_ss_n256", "ss", "n256", 3, passes=2, inflight=-1)
    assert deep.defines == {"WG_PASSES": 2, "WG_INFLIGHT": -1, "WG_PRECISIONS": 8}
    assert deep.label == "wgmma_fp8_ss_n256/wg3/p2w-1"
    assert deep.flops(132, 384, 10) == 2 * base.flops(132, 384, 10)
    assert "wait_group -1" in deep.instruction


@needs_nvrtc
def test_wgmma_knob_build_holds_one_precision(compiled):
    mod = compiled("compute_wgmma.cu", "sm_90a", defines={"WG_PASSES": 2, "WG_INFLIGHT": -1, "WG_PRECISIONS": 1})
    assert set(mod.kernel_names) == {k for k in WGMMA_KERNELS if k.startswith("wgmma_bf16_")}
    assert "serialized" not in mod.log


def test_time_gpu_samples_the_clock_while_running():
    class Ev:
        def __init__(self):
            self.t, self.polls = 0.0, 0

        @property
        def is_done(self):
            self.polls += 1
            return self.polls > 3

        def sync(self):
            pass

        def __sub__(self, other):
            return self.t - other.t

    class Events:
        def get(self, n):
            return [Ev() for _ in range(n)]

    class Stream:
        n = 0

        def record(self, ev):
            Stream.n += 1
            ev.t = Stream.n * 2.0  # ms

    from gpuwhy.engine.timing import collect, time_gpu

    calls = []
    hook, samples = collect(lambda: (1980.0, 650.0, 0x4))
    m = time_gpu(Stream(), Events(), calls.append, reps=4, warmup=1, estimate=False, sample=hook, interval_s=0.0)
    assert calls == [0, 1, 2, 3, 4]
    assert m.reps == 4 and m.median_s == pytest.approx(2e-3)
    assert len(samples) == 3
    summ = C.sample_summary(samples + [(None, None, None), (1755.0, 700.0, 0x1)])
    assert summ["sm_clock_mhz"] == 1980.0 and summ["sm_clock_min_mhz"] == 1755.0 and summ["clock_samples"] == 4
    assert summ["power_w"] == 650.0
    assert summ["clock_events"] == ("sw_power_cap",)  # gpu_idle left out


def test_peaks_and_percent():
    # H200/H100 SXM: bf16 4096 FLOP/clk/SM x 132 SMs x 1830 MHz = 989.4 TFLOP/s (the datasheet's dense figure).
    assert C.clock_peak_tflops(132, C.rate_per_sm_clk("bf16", (9, 0)), 1830) == pytest.approx(989.36, rel=1e-4)
    # FP32: 132 x 128 lanes x 2 x 1980 MHz = 66.9; FP64 half of it.
    assert C.clock_peak_tflops(132, C.rate_per_sm_clk("fp32", (9, 0), 128), 1980) == pytest.approx(66.9, rel=1e-3)
    assert C.clock_peak_tflops(132, C.rate_per_sm_clk("fp64", (9, 0)), 1980) == pytest.approx(33.45, rel=1e-3)
    assert C.clock_peak_tflops(132, C.rate_per_sm_clk("fp16_nontensor", (9, 0)), 1980) == pytest.approx(133.8, rel=1e-3)
    assert C.clock_peak_tflops(108, C.rate_per_sm_clk("bf16", (8, 0)), 1410) == pytest.approx(311.9, rel=1e-3)
    assert C.rate_per_sm_clk("fp32", (8, 0)) == 128
    assert C.rate_per_sm_clk("bf16", (8, 9)) is None  # per-SKU: no guess
    assert C.clock_peak_tflops(132, None, 1980) is None
    assert C.clock_peak_tflops(132, 4096, None) is None
    assert C.percent(50.0, 100.0) == 50.0 and C.percent(None, 1) is None and C.percent(1, 0) is None
    r = C.ComputeResult("bf16", "tensor cores", "k", "", "measured", tflops=900.0, clock_peak_tflops=1000.0,
                        sheet_peak_tflops=989.5)
    d = r.to_dict()
    assert d["pct_of_clock_peak"] == pytest.approx(90.0) and d["pct_of_sheet"] == pytest.approx(90.955, rel=1e-4)


def test_clock_helpers():
    assert C.clock_summary([]) == (None, None, None, 0)
    assert C.clock_summary([1980, 1755, 1980, 0]) == (1980, 1755, 1980, 3)
    assert C.clock_summary([1, 2, 3, 4]) == (2.5, 1, 4, 4)
    assert C.calibrate_iters(64, 0.001, 0.03) == 1920
    assert C.calibrate_iters(64, 0.1, 0.03) == 64  # never below the probe
    assert C.calibrate_iters(64, 1e-12, 0.03) == 2**31 - 1
    assert C.calibrate_iters(64, 0.0, 0.03) == 64
    assert parse_arch("sm_90a").major_minor == (9, 0) and parse_arch("sm_120").major_minor == (12, 0)
    with pytest.raises(UsageError, match="architecture \'compute_90\' is not an SM architecture"):
        parse_arch("compute_90")


# ---------------------------------------------------------- selection -----


def test_select_cases_by_arch():
    h = C.select_cases("sm_90")
    kinds = [(type(c).__name__, c.precision) for c in h]
    assert ("WgmmaCase", "bf16") in kinds and ("MmaCase", "bf16") in kinds and ("FmaCase", "fp32") in kinds
    # fp8 mma.sync is compiler-emulated on sm_90: only the wgmma row is measured
    assert ("WgmmaCase", "fp8") in kinds and ("MmaCase", "fp8") not in kinds
    assert [c for c in h if c.precision == "fp8" and isinstance(c, C.NotMeasured)][0].status == "not measured"
    assert ("MmaCase", "fp8") in [(type(c).__name__, c.precision) for c in C.select_cases("sm_89")]
    assert [c.precision for c in h][:3] == ["fp64", "fp32", "fp16_nontensor"]
    a100 = C.select_cases("sm_80")
    assert not any(isinstance(c, C.WgmmaCase) for c in a100)
    fp8 = [c for c in a100 if c.precision == "fp8"][0]
    assert isinstance(fp8, C.NotMeasured) and fp8.status == "unsupported"
    b200 = C.select_cases("sm_100")
    tensor = [c for c in b200 if c.precision in C.TENSOR_PRECISIONS]
    assert tensor and all(isinstance(c, C.NotMeasured) and c.status == "not measured" for c in tensor)
    assert any(isinstance(c, C.FmaCase) for c in b200)
    assert all(isinstance(c, C.MmaCase) for c in C.select_cases("sm_120") if c.precision in C.TENSOR_PRECISIONS)
    allv = [c for c in C.select_cases("sm_90", ["bf16"], variants="all") if isinstance(c, C.WgmmaCase)]
    assert len(allv) == 6 and len({c.label for c in allv}) == 6
    assert all(c.warpgroups <= C.WG_MAX_WARPGROUPS[c.a_src] for c in allv)
    assert [c.precision for c in C.select_cases("sm_90", ["fp32"])] == ["fp32"]
    with pytest.raises(UsageError, match="unknown precision \'fp7\'"):
        C.select_cases("sm_90", ["fp7"])
    with pytest.raises(UsageError, match="variants \'some\' must be \'default\' or \'all\'"):
        C.select_cases("sm_90", variants="some")


def test_not_measured_row_keeps_sheet_peak():
    class Sheet:
        peak_tflops = {"bf16": 2250.0}

    row = [c for c in C.select_cases("sm_100", ["bf16"])][0]
    r = C.not_measured_result(row, Sheet())
    assert r.status == "not measured" and r.tflops is None and r.sheet_peak_tflops == 2250.0
    assert "tcgen05" in r.note


# ----------------------------------------------------------- formats -------


def test_bf16_tf32_e4m3_conversions():
    x = np.array([1.0, -2.5, 3.14159265, 1e-3, 65504.0], dtype=np.float32)
    b = C.bf16_bits(x)
    assert b[0] == 0x3F80 and b[1] == 0xC020
    back = C.bf16_to_float(b)
    assert np.all(np.abs(back - x) <= np.abs(x) * 2.0**-8)
    t = C.tf32_round(x)
    assert np.all((t.view(np.uint32) & 0x1FFF) == 0)
    assert np.all(np.abs(t - x) <= np.abs(x) * 2.0**-11)
    codes = np.arange(256, dtype=np.uint8)
    v = C.e4m3_to_float(codes)
    assert v[0x38] == 1.0 and v[0x7E] == 448.0 and v[0x01] == 2.0**-9 and v[0xB8] == -1.0
    assert np.isnan(v[0x7F]) and np.isnan(v[0xFF])
    rng = np.random.default_rng(1)
    c = C.random_e4m3(rng, (1000,))
    vals = C.e4m3_to_float(c)
    assert np.all(np.isfinite(vals)) and np.all(np.abs(vals) >= 0.125) and np.all(np.abs(vals) <= 15)
    assert C.half2_word((1.0, -2.0)) == (0xC000 << 16) | 0x3C00
    assert C.half2_word(1.0) == 0x3C003C00


@pytest.mark.parametrize("prec", C.TENSOR_PRECISIONS)
def test_random_operand_is_exact(prec):
    op = C.random_operand(np.random.default_rng(2), prec, 16, 32)
    assert op.bits.shape == (16, 32) and op.values.shape == (16, 32)
    assert np.count_nonzero(op.values) > 400
    # bits and values agree
    dec = {
        "fp16": lambda b: b.view(np.float16).astype(np.float64),
        "bf16": lambda b: C.bf16_to_float(b).astype(np.float64),
        "tf32": lambda b: b.view(np.float32).astype(np.float64),
        "fp8": lambda b: C.e4m3_to_float(b).astype(np.float64),
        "int8": lambda b: b.view(np.int8).astype(np.float64),
    }[prec]
    assert np.array_equal(dec(op.bits), op.values)


def test_swizzle_roundtrip_and_pattern():
    rows = np.arange(16 * 128, dtype=np.uint32).astype(np.uint8).reshape(16, 128)
    rows = np.random.default_rng(3).integers(0, 256, (16, 128)).astype(np.uint8)
    flat = C.swizzle_128b(rows)
    assert np.array_equal(C.unswizzle_128b(flat), rows)
    # row 0 is unchanged; row 1's chunk 0 lands in chunk 1; row 9 behaves like row 1.
    assert np.array_equal(flat[:128], rows[0])
    assert np.array_equal(flat[128 + 16:128 + 32], rows[1, :16])
    assert np.array_equal(flat[9 * 128 + 16:9 * 128 + 32], rows[9, :16])
    with pytest.raises(ValueError, match="need rows of 128 bytes, got shape \\(4, 64\\)"):
        C.swizzle_128b(np.zeros((4, 64), np.uint8))


# ------------------------------------------- fake GPU executing the kernels --
# Each kernel's semantics restated from the PTX ISA tables, element by element.


def _a_elem_rc(bits, i, g, t):
    # PTX ISA "Matrix Fragments for mma.m16n8k16/k32/k8": row/col of A element a_i.
    if bits == 16:
        row = g if i in (0, 1, 4, 5) else g + 8
        col = t * 2 + (i & 1) + (8 if i >= 4 else 0)
    elif bits == 8:
        row = g if (i < 4 or 8 <= i < 12) else g + 8
        col = t * 4 + (i & 3) + (16 if i >= 8 else 0)
    else:
        row = g if i in (0, 2) else g + 8
        col = t if i in (0, 1) else t + 4
    return row, col


def _b_elem_kn(bits, i, g, t):
    if bits == 16:
        return t * 2 + (i & 1) + (8 if i >= 2 else 0), g
    if bits == 8:
        return t * 4 + (i & 3) + (16 if i >= 4 else 0), g
    return (t if i == 0 else t + 4), g


def _decode(bits_word_list, elem_bits, prec):
    """uint32 words -> element values (lowest bits first)."""
    vals = []
    for w in bits_word_list:
        for e in range(32 // elem_bits):
            vals.append(_value((int(w) >> (e * elem_bits)) & ((1 << elem_bits) - 1), prec))
    return vals


def _value(code, prec):
    if prec == "fp16":
        return float(np.array([code], np.uint16).view(np.float16)[0])
    if prec == "bf16":
        return float(np.array([code << 16], np.uint32).view(np.float32)[0])
    if prec == "tf32":
        return float(np.array([code], np.uint32).view(np.float32)[0])
    if prec == "fp8":
        return float(C.e4m3_to_float(np.array([code], np.uint8))[0])
    return float(code - 256 if code >= 128 else code)


class FakeBuf:
    def __init__(self, nbytes):
        self.mem = np.zeros(max(1, nbytes), np.uint8)
        self.nbytes = nbytes
        self.ptr = id(self)
        self.freed = False

    def free(self):
        self.freed = True


class FakeCtx:
    """Just enough of GpuContext for verify(): buffers, launch (numpy emulation), download."""

    class info:
        sm_count = 2
        arch = "sm_90"
        uuid = None
        name = "Fake"
        pci_device_id = None

    def __init__(self, corrupt=None):
        self.bufs = {}
        self.corrupt = corrupt  # a function applied to every output (to test failures)

    def alloc(self, n):
        b = FakeBuf(n)
        self.bufs[b.ptr] = b
        return b

    def upload(self, buf, arr):
        a = np.ascontiguousarray(arr).view(np.uint8).ravel()
        buf.mem[: a.size] = a

    def download(self, buf, dtype, count):
        return buf.mem[: count * np.dtype(dtype).itemsize].view(dtype).copy()

    def memset(self, buf, byte, nbytes=None):
        buf.mem[:] = byte

    def sync(self, what=""):
        pass

    def occupancy(self, kern, block):
        return 1

    def kernel(self, source, name):
        return name

    def launch(self, kern, grid, block, *args):
        getattr(self, "_" + kern.split("_")[0])(kern, grid, block, *args)

    def _store(self, ptr, arr):
        a = np.ascontiguousarray(arr)
        if self.corrupt:
            a = self.corrupt(a)
        b = a.view(np.uint8).ravel()
        self.bufs[ptr].mem[: b.size] = b

    # ---- compute_fma.cu
    def _fma(self, kern, grid, block, out, mul, add, step, iters):
        prec = {"fma_fp32": "fp32", "fma_fp64": "fp64", "fma_fp16x2": "fp16_nontensor"}[kern]
        total = grid * block
        steps = int(iters) * C.FMA_UNROLL[prec]
        res = np.empty((C.FMA_CHAINS, total), dtype={"fp32": np.float32, "fp64": np.float64, "fp16_nontensor": np.uint32}[prec])
        for tid in range(total):
            for j in range(C.FMA_CHAINS):
                k = (tid * 8 + j) % 61
                if prec == "fp16_nontensor":
                    v = np.float32(k) * np.float32(step)
                    lanes = [np.float16(v), np.float16(-v)]
                    ms = np.array([int(mul) & 0xFFFF, int(mul) >> 16], np.uint16).view(np.float16)
                    ad = np.array([int(add) & 0xFFFF, int(add) >> 16], np.uint16).view(np.float16)
                    for s in range(steps):
                        lanes = [np.float16(float(lanes[q]) * float(ms[q]) + float(ad[q])) for q in range(2)]
                    res[j, tid] = int(np.array(lanes, np.float16).view(np.uint32)[0])
                elif prec == "fp32":
                    x = np.float32(k) * np.float32(step)
                    for s in range(steps):
                        x = np.float32(float(x) * float(mul) + float(add))
                    res[j, tid] = x
                else:
                    x = float(k) * float(step)
                    for s in range(steps):
                        x = x * float(mul) + float(add)
                    res[j, tid] = x
        self._store(out, res)

    # ---- compute_mma.cu
    def _mma(self, kern, grid, block, a_ptr, b_ptr, out, iters):
        prec = {"mma_fp16_f32": "fp16", "mma_bf16_f32": "bf16", "mma_tf32_f32": "tf32",
                "mma_int8_s32": "int8", "mma_fp8_f32": "fp8"}[kern]
        bits = C.ELEM_BITS[prec]
        k = {16: 16, 8: 32, 32: 8}[bits]
        aw = self.bufs[a_ptr].mem[: 32 * 4 * 4].view(np.uint32)
        bw = self.bufs[b_ptr].mem[: 32 * 2 * 4].view(np.uint32)
        A = np.zeros((16, k))
        B = np.zeros((k, 8))
        for lane in range(32):
            g, t = lane >> 2, lane & 3
            for i, v in enumerate(_decode(aw[lane * 4: lane * 4 + 4], bits, prec)):
                r, c = _a_elem_rc(bits, i, g, t)
                A[r, c] = v
            for i, v in enumerate(_decode(bw[lane * 2: lane * 2 + 2], bits, prec)):
                kk, n = _b_elem_kn(bits, i, g, t)
                B[kk, n] = v
        D = int(iters) * C.MMA_UNROLL * (A @ B)
        warps = grid * block // 32
        dt = np.int32 if prec == "int8" else np.float32
        res = np.empty(warps * C.MMA_ACC * 32 * 4, dt)
        for w in range(warps):
            for j in range(C.MMA_ACC):
                for lane in range(32):
                    g, t = lane >> 2, lane & 3
                    for r in range(4):
                        res[((w * C.MMA_ACC + j) * 32 + lane) * 4 + r] = D[g + (8 if r >= 2 else 0), 2 * t + (r & 1)]
        self._store(out, res)

    # ---- compute_wgmma.cu
    def _wgmma(self, kern, grid, block, tiles, a_ptr, out, iters):
        _, prec, src, shape = kern.split("_")
        bits = C.ELEM_BITS[prec]
        es = bits // 8
        n, nacc = C.WG_SHAPES[shape]
        smem = self.bufs[tiles].mem[: C.WG_TILE_A_BYTES + C.WG_TILE_B_BYTES]
        kel = 128 // es

        def read(base, row, kk):  # descriptor semantics: SBO 1024 per 8 rows, 128-B rows, 128-B swizzle
            addr = (row // 8) * 1024 + (row % 8) * 128 + kk * es
            addr ^= ((addr >> 7) & 7) << 4
            code = int.from_bytes(bytes(smem[base + addr: base + addr + es]), "little")
            return _value(code, prec)

        B = np.array([[read(C.WG_TILE_A_BYTES, r, kk) for kk in range(kel)] for r in range(n)])
        if src == "ss":
            A = np.array([[read(0, r, kk) for kk in range(kel)] for r in range(64)])
        else:
            aw = self.bufs[a_ptr].mem[: 128 * C.WG_KSTEPS * 4 * 4].view(np.uint32)
            A = np.zeros((64, kel))
            kstep = kel // C.WG_KSTEPS
            for th in range(128):
                w, lane = th // 32, th % 32
                g, t = lane >> 2, lane & 3
                for ks in range(C.WG_KSTEPS):
                    words = aw[(th * C.WG_KSTEPS + ks) * 4: (th * C.WG_KSTEPS + ks) * 4 + 4]
                    for i, v in enumerate(_decode(words, bits, prec)):
                        r, c = _a_elem_rc(bits, i, g, t)
                        A[16 * w + r, ks * kstep + c] = v
        D = int(iters) * (A @ B.T)
        slots = grid * (block // 128)
        dt = np.int32 if prec == "int8" else np.float32
        nreg = n // 2
        res = np.empty(slots * nacc * nreg * 128, dt)
        for s in range(slots):
            for j in range(nacc):
                for r in range(nreg):
                    for th in range(128):
                        w, lane = th // 32, th % 32
                        g, t = lane >> 2, lane & 3
                        row = 16 * w + g + (8 if r % 4 >= 2 else 0)
                        col = 8 * (r // 4) + 2 * t + (r & 1)
                        res[((s * nacc + j) * nreg + r) * 128 + th] = D[row, col]
        self._store(out, res)


@pytest.mark.parametrize("prec", ["fp32", "fp64", "fp16_nontensor"])
def test_fma_verify_against_emulated_kernel(prec):
    case = [c for c in C.select_cases("sm_90", [prec])][0]
    ctx = FakeCtx()
    msg = case.verify(ctx, case.kernel, 1, 64, np.random.default_rng(5))
    assert "rel err" in msg
    bad = FakeCtx(corrupt=lambda a: a * 0 if a.dtype != np.uint32 else a ^ np.uint32(0x4000))
    with pytest.raises(MeasurementError, match="gave a wrong result: relative error"):
        case.verify(bad, case.kernel, 1, 64, np.random.default_rng(5))


@pytest.mark.parametrize("prec", C.TENSOR_PRECISIONS)
def test_mma_verify_against_emulated_kernel(prec):
    case = C.MmaCase(prec, C.MMA_KERNELS[prec][0])
    assert "rel err" in case.verify(FakeCtx(), case.kernel, 1, 64, np.random.default_rng(6))

    def swap(a):  # swap two accumulator registers in every lane: a layout bug
        b = a.copy().reshape(-1, 4)
        b[:, [0, 1]] = b[:, [1, 0]]
        return b.reshape(a.shape)

    with pytest.raises(MeasurementError, match="gave a wrong result: relative error"):
        case.verify(FakeCtx(corrupt=swap), case.kernel, 1, 64, np.random.default_rng(6))


@pytest.mark.parametrize("prec,src,shape", [("bf16", "ss", "n256"), ("fp16", "rs", "n128x2"), ("tf32", "ss", "n128x2"),
                                            ("tf32", "rs", "n256"), ("fp8", "ss", "n256"), ("fp8", "rs", "n128x2"),
                                            ("int8", "rs", "n256"), ("int8", "ss", "n128x2"), ("bf16", "rs", "n256")])
def test_wgmma_verify_against_emulated_kernel(prec, src, shape):
    case = C.WgmmaCase(prec, C.wgmma_kernel_name(prec, src, shape), src, shape, 1)
    assert "rel err" in case.verify(FakeCtx(), case.kernel, 1, 128, np.random.default_rng(7))
    with pytest.raises(MeasurementError, match="gave a wrong result: relative error"):
        case.verify(FakeCtx(corrupt=lambda a: a[::-1].copy()), case.kernel, 1, 128, np.random.default_rng(7))


def test_verify_rejects_unwritten_output():
    case = C.MmaCase("bf16", "mma_bf16_f32")
    nan = FakeCtx(corrupt=lambda a: np.full_like(a, np.nan))
    with pytest.raises(MeasurementError, match="wrong result"):
        case.verify(nan, case.kernel, 1, 64, np.random.default_rng(8))


def test_rel_error_and_bounds():
    assert C.rel_error(np.ones(4), np.ones(4)) == 0.0
    assert C.rel_error(np.array([1.0, np.nan]), np.ones(2)) == float("inf")
    assert C.rel_error(np.zeros(3), np.zeros(3)) == 0.0
    assert C.rel_error(np.ones(3), np.zeros(3)) == float("inf")
    assert C.check_bound("k", 1e-7, 1e-6).startswith("rel err")
    with pytest.raises(MeasurementError, match="relative error"):
        C.check_bound("k", 1e-2, 1e-3)


def test_fma_reference_exact_count():
    x0 = C.fma_initial("fp32", 100, 0.5)
    ref = C.fma_reference("fp32", x0, 1.0, 0.25, 192)
    assert np.array_equal(ref, x0 + np.float32(48.0))
    h = C.fma_initial("fp16_nontensor", 10, 0.5)
    r = C.fma_reference("fp16_nontensor", h, (1.0, 1.0), (0.125, -0.125), 64)
    assert np.array_equal(r[..., 0], h[..., 0] + np.float16(8)) and np.array_equal(r[..., 1], h[..., 1] - np.float16(8))
