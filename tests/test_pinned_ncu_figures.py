"""The ncu figure rules (importers/ncu/figures.py) that tests/test_pinned_importers.py leaves loose, with the
counts written out: rates x time, the tensor-instruction estimate per architecture and its fall-back at the
peak, the HFMA2.MMA moves, which pipe is busiest, and what makes a FLOP count incomplete.

MMA FLOPs per tensor-pipe warp instruction (figures.py's TENSOR_INST_FLOPS, with its sources): Volta
HMMA.884 512; Ampere/Ada mma m16n8k16 2 x 16 x 8 x 16 = 4,096; Hopper wgmma m64n128k16 per warp
2 x 64 x 128 x 16 / 4 = 65,536.
"""

from __future__ import annotations

from types import SimpleNamespace as NS

import pytest

from gpuwhy.archs import parse_arch
from gpuwhy.importers.ncu.counters import launch_figures
from gpuwhy.specs import library
from test_pinned_importers import DROP, NO_TENSOR, SASS, launch, sass

TENSOR_INST = "sm__inst_executed_pipe_tensor.sum"
HFMA = "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum"
ESTIMATE_NOTE = ("tensor FLOPs are an estimate from the tensor-pipe instruction count (the MMA shape and type are not in "
                 "the export); add sm__ops_path_tensor_* metrics for a count")


# --- time, bytes and FLOPs from rates ----------------------------------------------------------


def test_a_duration_of_the_wrong_unit_that_is_na_says_nothing():
    # the time from cycles (1.98e6 / 1.98e9 /s = 1 ms); an n/a Duration in bytes is neither used nor mentioned
    f = launch_figures(launch(**sass(ffma=1), **{"gpu__time_duration.sum": DROP, "Duration": (None, "bytes"),
                                                  "sm__cycles_elapsed.avg": (1.98e6, "count"),
                                                  "sm__cycles_elapsed.avg.per_second": (1.98e9, "rate")}))
    assert f.time_s == pytest.approx(1e-3, rel=1e-15) and f.notes == (NO_TENSOR,)


def test_cycles_without_a_rate_give_no_time():
    for extra in ({"sm__cycles_elapsed.avg": (1.98e6, "count")}, {"sm__cycles_elapsed.avg.per_second": (1.98e9, "rate")}):
        f = launch_figures(launch(**sass(ffma=1), **{"gpu__time_duration.sum": DROP}, **extra))
        assert f.time_s is None and f.reason.startswith("no duration (gpu__time_duration.sum / Duration / elapsed cycles "
                                                        "are not in the export)")


def test_sass_rate_per_second_times_the_duration():
    # 1e9 FFMA thread instructions per second x 1 ms = 1e6, x 2 FLOP = 2e6
    f = launch_figures(launch(**{SASS.format("ffma") + ".per_second": (1e9, "rate")}))
    assert f.flops_by == {"fp32": 2e6} and f.how["flops"] == "smsp__sass_thread_inst_executed_op_*_pred_on.sum.per_second x time"


@pytest.mark.parametrize("suffix", ["", ".per_cycle_elapsed", ".per_second"])
def test_a_sass_counter_that_is_na_in_any_form_makes_the_flops_na(suffix):
    f = launch_figures(launch(**{SASS.format("ffma") + suffix: (None, None)}))
    assert f.flops is None and f.reason == "the CUDA-core FLOP counters (smsp__sass_thread_inst_executed_op_*) are n/a"


def test_cache_and_dram_bytes_from_a_byte_rate_times_the_duration():
    # L2: 5e12 B/s x 1 ms = 5e9 B; DRAM: 2e12 B/s x 1 ms = 2e9 B
    f = launch_figures(launch(**sass(ffma=1), **{"lts__t_bytes.sum.per_second": (5e12, "bytes/time")}))
    assert f.l2_bytes == 5e9 and f.how["l2_bytes"] == "lts__t_bytes.sum.per_second x time"
    f = launch_figures(launch(**sass(ffma=1), **{"dram__bytes.sum.per_second": (2e12, "bytes/time"),
                                                  "dram__bytes_read.sum": DROP, "dram__bytes_write.sum": DROP}))
    assert f.bytes == 2e9 and f.how["dram_bytes"] == "dram__bytes.sum.per_second (byte/s) x time"
    assert "dram_bytes" not in f.estimated


def test_a_dram_percentage_that_is_na_is_named_na():
    f = launch_figures(launch(**sass(ffma=1), **{"dram__bytes_read.sum": DROP, "dram__bytes_write.sum": DROP,
                                                  "dram__throughput.avg.pct_of_peak_sustained_elapsed": (None, "percent")}),
                       library().match("H200 SXM"))
    assert f.bytes is None and f.reason == ("no DRAM bytes (dram__throughput.avg.pct_of_peak_sustained_elapsed is n/a; "
                                            "dram__bytes_read.sum/dram__bytes_write.sum are not in the export)")


# --- the tensor-instruction estimate -----------------------------------------------------------


@pytest.mark.parametrize("gpu, cc, per", [("V100 SXM2", "7.0", 512), ("A100 SXM4 80GB", "8.0", 4096)])
def test_tensor_instructions_times_the_mma_shape_of_the_architecture(gpu, cc, per):
    # 1,000 tensor-pipe instructions, no HFMA2.MMA moves counted: 1,000 x per FLOPs
    f = launch_figures(launch(**sass(ffma=10), **{TENSOR_INST: (1000.0, None)}), library().match(gpu))
    assert f.flops_by == {"fp32": 20.0, "tensor_unknown": 1000.0 * per} and f.reason == ""
    assert f.how["flops"].endswith(f"(sm__inst_executed_pipe_tensor.sum - HFMA2.MMA) x {per} FLOP/instruction "
                                   f"(compute capability {cc}), an estimate")
    assert f.notes == (ESTIMATE_NOTE,)  # no moves: no note on them


def test_hfma_thread_instructions_stand_for_the_moves_one_warp_at_a_time():
    # 3,200 HFMA thread instructions / 32 = 100 moves of 1,000 instructions: (1,000 - 100) x 4,096 = 3,686,400;
    # the HFMAs are fp16 work too: 3,200 x 2 = 6,400 FLOP
    f = launch_figures(launch(**sass(ffma=10), **{TENSOR_INST: (1000.0, None), HFMA: (3200.0, None)}),
                       library().match("A100 SXM4 80GB"))
    assert f.flops_by == {"fp32": 20.0, "fp16": 6400.0, "tensor_unknown": 3_686_400.0}
    assert f.notes[0] == ("100 of 1,000 tensor-pipe instructions are HFMA2.MMA register moves (HFMA thread instructions "
                          "/ 32), not MMAs")
    # 32 HFMAs: 1 move, still named
    f = launch_figures(launch(**sass(ffma=10), **{TENSOR_INST: (1000.0, None), HFMA: (32.0, None)}),
                       library().match("A100 SXM4 80GB"))
    assert f.flops_by["tensor_unknown"] == 999 * 4096 and f.notes[0].startswith("1 of 1,000 tensor-pipe instructions")


def _hopper(bf16=None, fp16=None):
    """A made-up compute capability 9.0 GPU with the dense tensor peaks given (TFLOP/s)."""
    peaks = {k: v for k, v in (("bf16", bf16), ("fp16", fp16)) if v is not None}
    return NS(name="Test Hopper", compute_capability="9.0", arch=parse_arch("9.0"), peak_tflops=peaks)


# 1e7 instructions x 65,536 = 6.5536e11 FLOP in 1 s; 1.05 x 0.624152380952381 TFLOP/s is 6.5536e11 to the last bit
PEAK_AT = 0.624152380952381


def test_the_hopper_shape_holds_up_to_five_percent_above_the_peak():
    la = launch(**sass(ffma=10), **{TENSOR_INST: (1e7, None), "gpu__time_duration.sum": (1.0, "time")})
    f = launch_figures(la, _hopper(bf16=PEAK_AT))
    assert f.flops_by["tensor_unknown"] == 1e7 * 65536
    assert "x 65536 FLOP/instruction (compute capability 9.0), an estimate" in f.how["flops"]
    # a peak 0.1% lower (0.623528, as %g prints it): 65,536 would exceed 1.05 x it, so the mma.sync shape, 4,096
    f = launch_figures(la, _hopper(bf16=PEAK_AT * 0.999))
    assert f.flops_by["tensor_unknown"] == 1e7 * 4096
    assert "x 4096 FLOP/instruction (mma.sync m16n8k16: 65536 would exceed the 0.623528 TFLOP/s peak), an estimate" in f.how["flops"]
    # the bf16 peak is the one; without it the fp16 peak; with neither, no check
    assert launch_figures(la, _hopper(bf16=PEAK_AT * 0.999, fp16=1e6)).flops_by["tensor_unknown"] == 1e7 * 4096
    assert launch_figures(la, _hopper(fp16=PEAK_AT * 0.999)).flops_by["tensor_unknown"] == 1e7 * 4096
    assert launch_figures(la, _hopper()).flops_by["tensor_unknown"] == 1e7 * 65536


def test_ampere_has_no_smaller_shape_to_fall_back_to():
    # 1e7 x 4,096 = 4.1e10 FLOP in 1 us = 41 PFLOP/s, far above the A100's 312 TFLOP/s: still 4,096, said plainly
    la = launch(**sass(ffma=10), **{TENSOR_INST: (1e7, None), "gpu__time_duration.sum": (1e-6, "time")})
    f = launch_figures(la, library().match("A100 SXM4 80GB"))
    assert f.flops_by["tensor_unknown"] == 1e7 * 4096
    assert f.how["flops"].endswith("x 4096 FLOP/instruction (compute capability 8.0), an estimate")


# --- tensor work that is or is not counted ----------------------------------------------------


def test_a_per_op_tensor_counter_of_zero_is_no_tensor_work():
    f = launch_figures(launch(**sass(ffma=10), **{"smsp__inst_executed_pipe_tensor_op_hmma.sum": (0.0, None)}))
    assert f.tensor_inst == 0.0 and f.flops_complete and f.reason == "" and f.notes == ()


def test_an_idle_tensor_pipe_leaves_the_flops_complete_and_a_busy_one_does_not():
    idle = {"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active": (0.0, "percent")}
    f = launch_figures(launch(**sass(ffma=10), **idle))
    assert f.flops_complete and f.reason == "" and f.notes == ()  # the export does count tensor work: there was none
    busy = {"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active": (30.0, "percent"),
            "sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active": (60.0, "percent")}
    f = launch_figures(launch(**sass(ffma=10), **busy))
    assert not f.flops_complete and f.reason == ("the tensor pipe was busy but the export has no sm__ops_path_tensor_* "
                                                 "counter, so its FLOPs are unknown; add those metrics (see docs/diagnose.md)")
    assert f.pct["pipe"] == 60.0 and f.pipe == "tensor"


def test_the_first_of_two_equally_busy_pipes_is_named():
    f = launch_figures(launch(**sass(ffma=10), **{"sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active": (50.0, "percent"),
                                                  "sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active": (50.0, "percent")}))
    assert (f.pipe, f.pct["pipe"]) == ("fma", 50.0)


def test_one_tensor_flop_with_the_sass_counters_na_is_a_count():
    f = launch_figures(launch(**{SASS.format("ffma"): (None, None), "sm__ops_path_tensor_src_bf16_dst_fp32.sum": (1.0, None)}))
    assert f.reason == "" and f.flops == 1.0


def test_tensor_work_only_is_said_only_without_cuda_core_counters():
    ops = {"sm__ops_path_tensor_src_bf16_dst_fp32.sum": (1e9, None)}
    assert launch_figures(launch(**ops)).notes == ("no CUDA-core FLOP counters in the export: FLOPs are tensor-core work only",)
    f = launch_figures(launch(**sass(ffma=10), **ops))
    assert f.flops_by == {"fp32": 20.0, "tensor_bf16_fp32": 1e9} and f.notes == ()
