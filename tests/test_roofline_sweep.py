"""The mixed-intensity sweep without a GPU: intensity arithmetic, the numpy emulation the
check compares with, ridge detection on synthetic curves, the kernels compiling with NVRTC,
the device-profile fields, and the whole sweep on the engine's fake device.

The fake device (tests/test_bench_cli.py) runs the kernels in numpy and advances a fake
clock by a smooth two-roof model (peak 60 TFLOP/s, 3 TB/s: ridge 20 FLOP/byte). It proves
the bookkeeping and that the check catches wrong kernels, never a figure: GPU figures come
from tests/test_bench_roofline_gpu.py. Curves below are synthetic and labelled so.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from gpuwhy.bench import intensity as I
from gpuwhy.errors import MeasurementError, UsageError
from gpuwhy.profiles import DeviceProfile

# ------------------------------------------------------------ arithmetic ----


def test_constants_mirror_the_kernel_source():
    from gpuwhy.resources import bundled_dir

    src = (bundled_dir("microbench") / "intensity.cu").read_text()

    def define(name):
        return int(re.search(rf"#define {name} (\d+)", src).group(1))

    assert define("GPUWHY_INT_UNROLL") == I.UNROLL
    assert define("GPUWHY_INT_STEPS") == I.STEPS_UNROLL
    assert define("GPUWHY_INT_BLOCK") == I.BLOCK
    for k in I.KERNELS.values():
        assert f"{k}(" in src


@pytest.mark.parametrize(
    "dtype,fmas,want",
    [("fp32", 2, 1 / 8), ("fp32", 4, 1 / 4), ("fp32", 16, 1.0), ("fp32", 16384, 1024.0),
     ("fp16", 1, 1 / 8), ("fp16", 8, 1.0), ("bf16", 8192, 1024.0)],
)
def test_intensity_of_fmas(dtype, fmas, want):
    # fp32: 2 FLOP per FFMA over 32 bytes (16 read + 16 written) per vector; half2: 4 FLOP per HFMA2.
    assert I.intensity_of(fmas, dtype) == pytest.approx(want)
    assert I.fmas_for(want, dtype) == fmas


def test_sweep_spans_an_eighth_to_1024_two_points_per_octave():
    f = I.sweep_fmas("fp32")
    assert f[0] == 2 and f[-1] == 16384 and len(f) == 27 and f == sorted(set(f))
    xs = [I.intensity_of(x, "fp32") for x in f]
    assert xs[0] == 1 / 8 and xs[-1] == 1024
    ratios = [b / a for a, b in zip(xs, xs[1:])]
    assert all(1.2 < r < 1.7 for r in ratios)  # ~sqrt(2) per step, rounded to whole instructions
    h = I.sweep_fmas("fp16")
    assert h[0] == 1 and h[-1] == 8192 and I.intensity_of(h[-1], "fp16") == 1024


def test_lane_steps_and_flops_for_any_word_count():
    assert I.lane_steps(6) == (2, 2, 1, 1)
    assert I.lane_steps(3) == (1, 1, 1, 0)
    assert I.lane_steps(16384) == (4096,) * 4
    # 7 words, fmas 6: lanes 0,1,2,3,0,1,2 run 2,2,1,1,2,2,1 steps = 11 FFMA = 22 FLOP.
    assert I.launch_flops(7, 6, "fp32") == 22
    assert I.launch_flops(7, 6, "fp16") == 44
    # A multiple of 4 words: FLOPs / bytes is exactly the intensity.
    n = 4 * 1000
    for d in I.DTYPES:
        for f in (1, 7, 300):
            assert I.launch_flops(n, f, d) / I.launch_bytes(n) == pytest.approx(I.intensity_of(f, d))
    assert I.launch_bytes(n) == 8 * n


def test_sizes_are_whole_waves_over_eight_l2():
    wave = I.wave_words(132, 8)
    assert wave == 132 * 8 * 256 * 2 * 4
    n = I.sweep_words(60 * 2**20, wave)  # the H200: 60 MiB L2
    assert n % wave == 0 and n == 30 * wave == 64_880_640
    assert I.launch_bytes(n) >= 8 * 60 * 2**20 > I.launch_bytes(n - wave)
    small = I.sweep_words(4 * 2**20, I.wave_words(40, 4))  # a small L2: the 256 MiB floor decides
    assert I.launch_bytes(small) >= I.MIN_WS_BYTES
    assert I.launch_grid(n) == n // 4 // (256 * 2) == 30 * 132 * 8
    assert I.launch_grid(1) == 1 and I.launch_grid(3) == 1 and I.launch_grid(4 * 512 + 4) == 2


def test_supported_and_dtype_names():
    assert I.supported("bf16", "sm_80") and I.supported("bf16", "sm_90") and not I.supported("bf16", "sm_75")
    assert I.supported("fp16", "sm_75") and I.supported("fp32", "sm_120")
    with pytest.raises(UsageError, match="no dtype 'fp64'"):
        I.check_dtype("fp64")


# -------------------------------------------------------------- emulation ----


def test_bf16_round_is_nearest_even():
    one = 1.0
    assert I.bf16_round(np.array([one + 2**-8]))[0] == 1.0  # halfway, 1.0 is even
    assert I.bf16_round(np.array([one + 3 * 2**-8]))[0] == one + 2**-6  # halfway, up to the even neighbour
    assert I.bf16_round(np.array([one + 2**-8 + 2**-20]))[0] == one + 2**-7  # above halfway
    assert I.bf16_round(np.array([0.0]))[0] == 0.0


@pytest.mark.parametrize("dtype", I.DTYPES)
def test_scalar_words_and_round_trip(dtype):
    w = I.scalar_word(0.125, dtype)
    v = I._decode(np.array([w], dtype=np.uint32), dtype)
    assert np.all(v == 0.125)
    if dtype == "fp32":
        assert w == 0x3E000000
    elif dtype == "fp16":
        assert w == 0x30003000  # fp16 0.125 = 0x3000 in both halves
    else:
        assert w == 0x3E003E00  # bf16 0.125 = 0x3E00
    rng = np.random.default_rng(3)
    words = I.random_inputs(rng, 101, dtype)
    assert np.array_equal(I._encode(I._decode(words, dtype), dtype), words)
    assert np.all(I._decode(words, dtype) >= 0.5)


@pytest.mark.parametrize("dtype", I.DTYPES)
def test_emulate_exact_step_counts(dtype):
    # mul = 1, add = 1/8 on multiples of 1/8: every value is exact, so out = in + steps/8 per lane.
    rng = np.random.default_rng(5)
    n = 4099
    words = I.exact_inputs(rng, n, dtype)
    for fmas in (1, 3, 6, 263):
        got = I._decode(I.emulate(words, fmas, I.scalar_word(1.0, dtype), I.scalar_word(0.125, dtype), dtype), dtype)
        x0 = I._decode(words, dtype)
        steps = np.array(I.lane_steps(fmas))[np.arange(n) % 4]
        want = x0 + (steps / 8.0 if dtype == "fp32" else (steps / 8.0)[:, None])
        assert np.array_equal(got, want), fmas


def test_emulate_fp32_matches_a_float64_chain():
    rng = np.random.default_rng(7)
    words = I.random_inputs(rng, 1000, "fp32")
    m, a = 0.8125, 0.3
    out = I._decode(I.emulate(words, 4 * 9, I.scalar_word(m, "fp32"), I.scalar_word(a, "fp32"), "fp32"), "fp32")
    x = I._decode(words, "fp32")
    ma = float(np.float32(a))
    for _ in range(9):
        x = x * m + ma
    assert np.max(np.abs(out - x) / x) < 1e-6


def test_mismatch_names_the_first_wrong_value():
    rng = np.random.default_rng(11)
    for d in I.DTYPES:
        w = I.random_inputs(rng, 50, d)
        assert I.mismatch(w, w, d) is None
        bad = w.copy()
        bad[17] ^= 0x1
        msg = I.mismatch(bad, w, d)
        assert msg and "word 17" in msg and "1 of" in msg
        nan = w.copy()
        nan[3] = 0xFFFFFFFF
        assert "word 3" in I.mismatch(nan, w, d)
    # a relative bound lets a last-bit fp32 difference through, not a wrong value
    w = I.random_inputs(rng, 10, "fp32")
    one_ulp = w.copy()
    one_ulp[0] += 1
    assert I.mismatch(one_ulp, w, "fp32", 1e-6) is None
    assert I.mismatch(one_ulp, w, "fp32", 0.0) is not None


# ------------------------------------------------------------------ ridge ----

# Synthetic curves (not measurements): intensities of the fp32 sweep, roofs B = 4.3 TB/s, P = 66 TFLOP/s.
XS = np.array([I.intensity_of(f, "fp32") for f in I.sweep_fmas("fp32")])
B, P = 4.3e12, 66e12


def test_ridge_of_a_hard_roofline_is_exact():
    fit = I.fit_ridge(XS, np.minimum(P, B * XS), ref_peak=P)
    assert fit.ridge == pytest.approx(P / B, rel=1e-9)
    assert fit.bandwidth == pytest.approx(B) and fit.peak_flops == pytest.approx(P)
    assert fit.memory_points + fit.compute_points == len(XS) and fit.rms_log10 < 1e-9
    assert fit.note == ""


def test_ridge_of_a_smooth_bend_and_of_noisy_points():
    smooth = ((B * XS) ** -4 + P ** -4) ** -0.25  # bends gradually: below both roofs near the ridge
    fit = I.fit_ridge(XS, smooth, ref_peak=P)
    assert fit.ridge == pytest.approx(P / B, rel=0.05)
    assert fit.knee > fit.ridge  # 90% of the peak comes after the bend
    rng = np.random.default_rng(0)
    noisy = smooth * np.exp(rng.normal(0, 0.03, XS.size))
    fit2 = I.fit_ridge(XS, noisy, ref_peak=P)
    assert fit2.ridge == pytest.approx(P / B, rel=0.10)


def test_knee_is_interpolated_in_log_log():
    # Reaches 90 (of 100) between (8, 80) and (16, 100): 8 * 2^((log 90 - log 80) / (log 100 - log 80)) = 11.53.
    xs = [1, 2, 4, 8, 16, 32, 64]
    fs = [10, 20, 40, 80, 100, 100, 100]
    fit = I.fit_ridge(xs, fs, ref_peak=100)
    want = 8 * 2 ** ((math.log10(90) - math.log10(80)) / (math.log10(100) - math.log10(80)))
    assert fit.knee == pytest.approx(want)
    assert fit.ridge == pytest.approx(10, rel=0.15)


@pytest.mark.parametrize(
    "fs,needle",
    [(B * XS, "memory roof alone"), (np.full(XS.size, P), "compute roof alone")],
    ids=["memory-only", "compute-only"],
)
def test_no_bend_no_ridge(fs, needle):
    fit = I.fit_ridge(XS, fs)
    assert fit.ridge is None and needle in fit.note


def test_too_few_points_and_bad_points():
    fit = I.fit_ridge([1, 2, 4], [1, 2, 4])
    assert fit.ridge is None and "at least 4" in fit.note
    fit = I.fit_ridge([1, 2, -1, 4, 8, 16, math.nan], [1, 2, 3, 4, 8, 8, 1])
    assert fit.ridge == pytest.approx(8, rel=0.3)  # the negative and NaN points are dropped


def test_sweep_ceilings_prefer_measured():
    from gpuwhy.specs import library

    sheet = library().match("H200")
    prof = DeviceProfile(uuid="GPU-1", name="NVIDIA H200", date="2026-11-29T00:00:00+00:00", dram_bandwidth_gbs=4500.0,
                         dram_kernel="write-vec16 fp32", peak_tflops_measured={"fp32": 66.0, "fp16_nontensor": 132.0})
    peak, psrc, bw, bsrc, notes = I.sweep_ceilings("fp32", sheet, prof, prof)
    assert peak == 66e12 and bw == 4500e9 and "measured" in psrc and "measured" in bsrc and not notes
    peak, psrc, bw, bsrc, notes = I.sweep_ceilings("fp32", sheet, None, None)
    assert peak == 67e12 and bw == 4800e9 and len(notes) == 2
    peak, _, _, _, notes = I.sweep_ceilings("bf16", sheet, prof, prof)  # no bf16_nontensor anywhere
    assert peak is None and any("no bf16_nontensor ceiling" in n for n in notes)
    assert I.sweep_ceilings("fp16", sheet, prof, prof)[0] == 132e12


# ---------------------------------------------------------------- NVRTC ----


@pytest.mark.parametrize("arch", ["sm_80", "sm_90", "sm_120"])
def test_kernels_compile_to_cubins(arch, kernel_cache, monkeypatch):
    from gpuwhy.engine.compile import compile_file, cubin_sm

    monkeypatch.setenv("XDG_CACHE_HOME", str(kernel_cache))  # the session's cubins: compile_all's builds are these
    mod = compile_file(I.SOURCE, arch)
    assert mod.cubin[:4] == b"\x7fELF" and cubin_sm(mod.cubin) == int(arch[3:])
    assert set(mod.kernel_names) == {"intensity_f32", "intensity_f16x2", "intensity_bf16x2", "intensity_fill"}
    # Tuning macros build too.
    mod2 = compile_file(I.SOURCE, arch, defines={"GPUWHY_INT_UNROLL": 1, "GPUWHY_INT_STEPS": 16})
    assert "intensity_f32" in mod2.kernel_names


def test_bf16_kernel_is_left_out_before_sm_80(tmp_path, monkeypatch):
    from gpuwhy.engine.compile import compile_file

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert set(compile_file(I.SOURCE, "sm_75").kernel_names) == {"intensity_f32", "intensity_f16x2", "intensity_fill"}


# ---------------------------------------------------------------- profile ----


def test_old_profile_json_still_loads_and_new_fields_round_trip(tmp_path):
    from gpuwhy.profiles import latest_profile, save_profile

    old = {"uuid": "GPU-abc", "name": "NVIDIA H200", "date": "2026-01-01T00:00:00+00:00", "dram_bandwidth_gbs": 4500.0,
           "schema": 1, "some_future_field": 3}
    p = DeviceProfile.from_dict(old)
    assert p.roofline_points is None and p.roofline_ridge is None and p.peak_tflops_measured is None
    new = DeviceProfile(uuid="GPU-abc", name="NVIDIA H200", date="2026-01-02T00:00:00+00:00",
                        roofline_points={"fp32": [[0.125, 5e11], [1024.0, 6.5e13]]}, roofline_ridge={"fp32": 15.0})
    save_profile(new, tmp_path)
    back = latest_profile("GPU-abc", tmp_path)
    assert back == new and back.roofline_ridge == {"fp32": 15.0}


def _compute_row(precision, tflops, status="measured"):
    from gpuwhy.bench.compute import ComputeResult

    return ComputeResult(precision=precision, unit="cuda cores", kernel="k", instruction="", status=status, tflops=tflops)


def test_merge_compute_into_profile_is_pure():
    from gpuwhy.profile_sections import COMPUTE
    from gpuwhy.profiles import merge

    base = DeviceProfile(uuid="GPU-1", name="G", date="2026-01-01T00:00:00+00:00", peak_tflops_measured={"fp64": 30.0, "fp32": 60.0})
    rows = [_compute_row("fp32", 66.0), _compute_row("fp32", 64.0), _compute_row("bf16", 860.0),
            _compute_row("fp8", None, "not measured")]
    got = merge(COMPUTE, base, rows, date="2026-02-01T00:00:00+00:00")
    assert got.peak_tflops_measured == {"fp64": 30.0, "fp32": 66.0, "bf16": 860.0}
    assert got.compute_date == "2026-02-01T00:00:00+00:00" and got.date == "2026-02-01T00:00:00+00:00"
    assert base.peak_tflops_measured == {"fp64": 30.0, "fp32": 60.0}  # the input is untouched
    assert merge(COMPUTE, base, [_compute_row("fp8", None, "unsupported")]) is base


# -------------------------------------------------------------- fake GPU ----


class _Stub:
    pass


def test_unsupported_dtype_is_a_usage_error():
    ctx = _Stub()
    ctx.info = _Stub()
    ctx.info.arch = "sm_75"
    with pytest.raises(UsageError, match="needs sm_80"):
        I.IntensityBench(ctx, "bf16")


@pytest.fixture
def fake(monkeypatch, tmp_path):
    """The fake device (tests/fakes.py) plus the intensity kernels in numpy."""
    from fakes import FakeGpu, install

    class IntensityGpu(FakeGpu):
        peak, bw = 60e12, 3e12  # the fake's roofs: ridge 20 FLOP/byte
        intensity_bug: str | None = None
        emulate_words = 70_000
        launch_shapes: list = []

        def run(self, name, grid, args):
            if not name.startswith("intensity_"):
                return super().run(name, grid, args)
            self.launches.append(name)
            if name == "intensity_fill":
                a = self.mem[int(args[0])].view(np.uint32)[: int(args[1])]
                fmt = {0: "fp32", 1: "fp16", 2: "bf16"}[int(args[3])]
                a[:] = I.random_inputs(np.random.default_rng(int(args[2])), a.size, fmt)
                return
            dtype = {"intensity_f32": "fp32", "intensity_f16x2": "fp16", "intensity_bf16x2": "bf16"}[name]
            inp, out, n, mul, add, fmas = int(args[0]), int(args[1]), int(args[2]), int(args[3]), int(args[4]), int(args[5])
            self.launch_shapes.append(grid)
            words = self.mem[inp].view(np.uint32)[:n]
            bug = self.intensity_bug
            if n <= self.emulate_words:  # the check's launches; the (larger) timed ones only copy
                f = fmas - fmas % 4 if bug == "lanes" else (fmas - 4 if bug == "steps" and fmas >= 4 else fmas)
                res = I.emulate(words, f, mul, add, dtype)
            else:  # a timed launch: its values are checked for range only, so a copy will do
                res = words.copy()
            if bug == "tail" and n % 4:
                res[n - n % 4:] = words[n - n % 4:]
            dst = self.mem[out].view(np.uint32)
            dst[:n] = res
            if bug == "overrun":
                dst[n] = 0
            t_c = I.launch_flops(n, fmas, dtype) / self.peak
            t_m = I.launch_bytes(n) / self.bw
            self.clock += (t_c ** 4 + t_m ** 4) ** 0.25  # a smooth bend: below both roofs near the ridge

    gpu = IntensityGpu()
    gpu.launch_shapes = []
    return install(monkeypatch, gpu, tmp_path)


SMALL = dict(n_words=4 * 2**15 + 3, check_sizes=(1, 31, 65541), budget_s=0.001, min_reps=3, max_reps=5)


def test_fake_sweep_end_to_end(fake):
    from gpuwhy.engine.context import open_device
    from gpuwhy.render.jsonout import to_plain

    seen = []
    with open_device(0) as ctx:
        sweep = I.run_roofline_sweep(ctx, dtypes=("fp32", "fp16", "bf16"), on_point=seen.append, **SMALL)
    assert not fake.mem  # every buffer freed
    assert [c.dtype for c in sweep.curves] == ["fp32", "fp16", "bf16"] and sweep.sheet_name == "H200 SXM"
    fp32 = sweep.curve("fp32")
    assert len(fp32.points) == 27 and len(seen) == 27 + 26 + 26
    # fmas 2 on 4 * 2^15 + 3 words: lanes 0 and 1 (2^15 + 1 words each) run one FFMA (2 FLOP); 8 bytes per word.
    assert fp32.points[0].intensity == pytest.approx(2 * (2**15 + 1) * 2 / (8 * (4 * 2**15 + 3)))
    for p in fp32.points:
        assert p.flops == I.launch_flops(p.n_words, p.fmas, "fp32") and p.bytes_moved == 8 * p.n_words
        assert p.achieved_flops == pytest.approx(p.flops / p.time.median_s)
        assert p.pct_of_roof is not None  # sheet ceilings: no profile here
    # The fake bends at 60e12 / 3e12 = 20 FLOP/byte; the fit finds it from the points alone.
    assert fp32.fit.ridge == pytest.approx(20, rel=0.1)
    assert fp32.fit.bandwidth == pytest.approx(3e12, rel=0.1) and fp32.fit.peak_flops == pytest.approx(60e12, rel=0.1)
    assert fp32.peak_source.startswith("H200 SXM sheet") and fp32.model_ridge == pytest.approx(67e12 / 4800e9)
    assert sweep.curve("bf16").peak_flops is None  # no bf16_nontensor figure on the H200 sheet, none measured
    assert "checked against numpy" in fp32.check and fp32.buffer_sets >= 1
    doc = json.loads(json.dumps(to_plain(sweep)))
    assert doc["curves"][0]["empirical_ridge"] == pytest.approx(fp32.fit.ridge)
    assert "fp32: ridge" in doc["summary"]
    # grids: one chunk of 512 vectors per block, and the 3-block grid of the check
    assert 3 in fake.launch_shapes and I.launch_grid(65541) == 33 and 33 in fake.launch_shapes


def test_fake_sweep_uses_the_profile_ceilings_and_is_recorded(fake, tmp_path, cli):
    from gpuwhy.engine.context import open_device
    from gpuwhy.profile_sections import ROOFLINE
    from gpuwhy.profiles import latest_profile, record, save_profile

    uuid = "GPU-1234abcd-0000-0000-0000-000000000000"
    save_profile(DeviceProfile(uuid=uuid, name="NVIDIA H200", date="2026-11-29T00:00:00+00:00", sheet="H200 SXM",
                               dram_bandwidth_gbs=4000.0, launch_overhead_s=3e-6,
                               peak_tflops_measured={"fp32": 50.0}))
    with open_device(0) as ctx:
        sweep = I.run_roofline_sweep(ctx, dtypes=("fp32",), intensities=(0.125, 1, 8, 32, 128, 1024), **SMALL)
    c = sweep.curve("fp32")
    assert c.peak_flops == 50e12 and c.bandwidth == 4000e9 and "measured" in c.peak_source
    assert [p.fmas for p in c.points] == [2, 16, 128, 512, 2048, 16384]
    assert record(ROOFLINE, uuid, sweep) is not None
    prof = latest_profile(uuid)
    assert prof.dram_bandwidth_gbs == 4000.0 and prof.peak_tflops_measured == {"fp32": 50.0}
    assert [pt[0] for pt in prof.roofline_points["fp32"]] == pytest.approx([p.intensity for p in c.points])
    assert prof.roofline_ridge.get("fp32") == (pytest.approx(c.fit.ridge) if c.fit.ridge else None)
    # `gpuwhy roofline --measured` draws the recorded sweep
    code, out, err = cli("roofline", "--gpu", "H200", "--measured", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["sweeps"][0]["dtype"] == "fp32" and len(doc["sweeps"][0]["points"]) == 6
    kinds = {(r["precision"], r["kind"]): r for r in doc["roofs"]}
    assert kinds[("fp32", "measured")]["peak_tflops"] == 50.0 and kinds[("fp32", "spec")]["peak_tflops"] == 67.0


def test_carry_sections_keeps_the_sweep_over_a_memory_only_run(tmp_path):
    from gpuwhy.profiles import carry_sections, save_profile

    uuid = "GPU-feed"
    save_profile(DeviceProfile(uuid=uuid, name="G", date="2026-01-01T00:00:00+00:00", peak_tflops_measured={"fp32": 60.0},
                               roofline_points={"fp32": [[1.0, 1e12]]}, roofline_ridge={"fp32": 14.0},
                               roofline_date="2026-01-01T00:00:00+00:00"), tmp_path)
    later = DeviceProfile(uuid=uuid, name="G", date="2026-01-02T00:00:00+00:00", dram_bandwidth_gbs=4000.0)
    got = carry_sections(later, tmp_path)
    assert got.peak_tflops_measured == {"fp32": 60.0}
    assert got.roofline_points == {"fp32": [[1.0, 1e12]]} and got.roofline_ridge == {"fp32": 14.0}
    assert got.roofline_date == "2026-01-01T00:00:00+00:00" and got.dram_bandwidth_gbs == 4000.0


def test_fake_sweep_default_check_sizes(fake):
    from gpuwhy.engine.context import open_device

    fake.emulate_words = 2_000_000
    with open_device(0) as ctx:
        text = I.IntensityBench(ctx, "fp32").check()
    assert "1,000,003" in text and not fake.mem


@pytest.mark.parametrize("bug,needle", [
    ("lanes", "gave a wrong result"),     # the lanes' extra step (fmas % 4) left out
    ("steps", "gave a wrong result"),     # one step fewer on every lane
    ("tail", "gave a wrong result"),      # the last n % 4 words copied, not computed
    ("overrun", "wrote past the end"),
])
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_fake_wrong_kernel_is_caught_before_timing(fake, bug, needle, dtype):
    from gpuwhy.engine.context import open_device

    fake.intensity_bug = bug
    with open_device(0) as ctx:
        with pytest.raises(MeasurementError, match=needle) as ei:
            I.run_roofline_sweep(ctx, dtypes=(dtype,), **SMALL)
    assert I.KERNELS[dtype] in str(ei.value) and "\n" not in str(ei.value)
    assert not fake.mem
