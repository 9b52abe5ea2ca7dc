"""The figures gpuwhy derives from Nsight Compute counters, one rule at a time, with the counts
written out (the rules: gpuwhy.importers.ncu.counters' docstring and docs/diagnose.md).

Counter weights, as Nsight Compute's own roofline charts count them: an add or a mul is one FLOP
per thread instruction, an FMA two; each ``sm__ops_path_tensor_*`` op is one FLOP.
"""

from __future__ import annotations

import pytest

from gpuwhy.importers.ncu.counters import launch_figures, ncu_command_line, precision_of
from gpuwhy.importers.ncu.read import Launch
from gpuwhy.specs import library

SASS = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum"
#: The note on an export with no tensor-core counter of any kind: its FLOPs may leave out tensor work.
NO_TENSOR = ("the export has no tensor-core counters (sm__ops_path_tensor_*, sm__inst_executed_pipe_tensor): "
             "tensor-core FLOPs, if any, are not counted")
ADD_DRAM = "add --metrics dram__bytes_read.sum,dram__bytes_write.sum (or the SpeedOfLight section for an estimate)"


def launch(**metrics) -> Launch:
    """A launch with a 1 ms duration and 1 MB read + 1 MB written unless given; values are (SI value, dimension)."""
    base = {
        "gpu__time_duration.sum": (1e-3, "time"),
        "dram__bytes_read.sum": (1e6, "bytes"),
        "dram__bytes_write.sum": (1e6, "bytes"),
    }
    for k, v in metrics.items():
        k = k.replace("__DOT__", ".")
        if v is DROP:
            base.pop(k, None)
        else:
            base[k] = v
    return Launch("1", "k", "0", "NVIDIA H200", base)


DROP = object()


def sass(**counts) -> dict:
    return {SASS.format(op): (float(n), None) for op, n in counts.items()}


def test_sass_weights_per_precision():
    # fp32: 1 fadd x 1 + 10 fmul x 1 + 100 ffma x 2 = 211; fp64: 1000 + 10000 + 2 x 100000 = 211000;
    # fp16: 3 + 30 + 2 x 300 = 633
    f = launch_figures(launch(**sass(fadd=1, fmul=10, ffma=100, dadd=1000, dmul=10000, dfma=100000, hadd=3, hmul=30, hfma=300)))
    assert f.flops_by == {"fp32": 211.0, "fp64": 211000.0, "fp16": 633.0}
    assert f.flops == 211844.0 and f.precision == "fp64" and f.reason == ""
    assert f.time_s == 1e-3 and f.bytes == 2e6


def test_dram_bytes_read_plus_write_else_total():
    f = launch_figures(launch(**sass(ffma=5)))
    assert f.bytes == 2e6 and f.notes == (NO_TENSOR,)  # no DRAM note: only the one on the missing tensor counters
    # read + write win over the total when both are there
    f = launch_figures(launch(**sass(ffma=5), **{"dram__bytes.sum": (7e6, "bytes")}))
    assert f.bytes == 2e6
    # a missing write: the total, and a note
    f = launch_figures(launch(**sass(ffma=5), **{"dram__bytes_write.sum": DROP, "dram__bytes.sum": (7e6, "bytes")}))
    assert f.bytes == 7e6 and f.notes == ("dram__bytes_read/write incomplete; used dram__bytes.sum", NO_TENSOR)
    # only the total: no note
    f = launch_figures(launch(**sass(ffma=5), **{"dram__bytes_write.sum": DROP, "dram__bytes_read.sum": DROP, "dram__bytes.sum": (7e6, "bytes")}))
    assert f.bytes == 7e6 and f.notes == (NO_TENSOR,)


def test_missing_or_na_figures_name_the_reason():
    no_dram = launch(**sass(ffma=5), **{"dram__bytes_write.sum": DROP, "dram__bytes_read.sum": DROP})
    # with the GPU's sheet (as `gpuwhy ncu` always has), the counters are named with the flag that adds them
    no_bytes = launch_figures(no_dram, library().match("H200 SXM"))
    assert no_bytes.bytes is None
    assert no_bytes.reason == f"no DRAM bytes (dram__bytes_read.sum/dram__bytes_write.sum are not in the export); {ADD_DRAM}"
    # without a sheet a DRAM percentage could not have been turned into bytes either
    no_sheet = launch_figures(no_dram)
    assert no_sheet.bytes is None
    assert no_sheet.reason == f"no DRAM bytes (no dram__bytes counter; a DRAM percentage needs a sheet); {ADD_DRAM}"
    # the read counter there, the write counter n/a: the reads are used, as a lower bound, and the write named
    na_bytes = launch_figures(launch(**sass(ffma=5), **{"dram__bytes_write.sum": (None, "bytes")}))
    assert na_bytes.bytes == 1e6 and na_bytes.reason == "" and na_bytes.estimated == {"dram_bytes"}
    assert na_bytes.how["dram_bytes"] == "dram__bytes_read.sum only (dram__bytes_write.sum is n/a): a lower bound"
    read_na = launch_figures(launch(**sass(ffma=5), **{"dram__bytes_read.sum": (None, "bytes"), "dram__bytes_write.sum": DROP}))
    assert read_na.reason == "no DRAM bytes (dram__bytes_read.sum is n/a; dram__bytes_write.sum is not in the export)"
    only_total_na = launch_figures(launch(**sass(ffma=5), **{"dram__bytes_write.sum": DROP, "dram__bytes_read.sum": DROP,
                                                            "dram__bytes.sum": (None, "bytes")}))
    assert only_total_na.reason == ("no DRAM bytes (dram__bytes.sum is n/a; dram__bytes_read.sum/dram__bytes_write.sum "
                                    "are not in the export)")
    no_time = launch_figures(launch(**sass(ffma=5), **{"gpu__time_duration.sum": DROP}))
    add_time = "add --metrics gpu__time_duration.sum (or the SpeedOfLight section)"
    assert no_time.time_s is None
    assert no_time.reason == f"no duration (gpu__time_duration.sum / Duration / elapsed cycles are not in the export); {add_time}"
    na_time = launch_figures(launch(**sass(ffma=5), **{"gpu__time_duration.sum": (None, "time")}))
    assert na_time.reason == f"no duration (gpu__time_duration.sum / Duration / elapsed cycles are n/a); {add_time}"
    zero = launch_figures(launch(**sass(ffma=5), **{"gpu__time_duration.sum": (0.0, "time")}))
    assert zero.reason == "duration is zero"
    assert launch_figures(launch()).reason == (
        "no FLOP counters (smsp__sass_thread_inst_executed_op_* or sm__ops_path_tensor_*) in the export; add --metrics "
        "smsp__sass_thread_inst_executed_op_{fadd,fmul,ffma}_pred_on.sum and sm__ops_path_tensor_*, or --section "
        "ComputeWorkloadAnalysis for pipe utilisation (or let `gpuwhy ncu -- CMD` choose)")
    all_na = launch_figures(launch(**{SASS.format("ffma"): (None, None), SASS.format("fadd"): (None, None)}))
    assert all_na.reason == "the CUDA-core FLOP counters (smsp__sass_thread_inst_executed_op_*) are n/a"
    tensor_na = launch_figures(launch(**{"sm__ops_path_tensor_src_bf16_dst_fp32.sum": (None, None)}))
    assert tensor_na.reason == "every FLOP counter is n/a"


def test_time_without_a_unit_is_nanoseconds():
    f = launch_figures(launch(**sass(ffma=5), **{"gpu__time_duration.sum": (1500.0, None)}))
    assert f.time_s == pytest.approx(1.5e-6)
    assert f.notes == ("gpu__time_duration.sum has no unit; read as nanoseconds (ncu's base unit)", NO_TENSOR)
    wrong = launch_figures(launch(**sass(ffma=5), **{"gpu__time_duration.sum": (1.0, "bytes")}))
    assert wrong.time_s is None and wrong.notes[0] == "gpu__time_duration.sum has unit dimension bytes, expected time; ignored"
    # the details page's Duration when the raw counter is missing
    f = launch_figures(launch(**sass(ffma=5), **{"gpu__time_duration.sum": DROP, "Duration": (2e-6, "time")}))
    assert f.time_s == 2e-6 and f.reason == ""
    # neither: elapsed cycles / cycle rate, 1.98e6 cycles at 1.98e9 cycles/s = 1 ms
    f = launch_figures(launch(**sass(ffma=5), **{"gpu__time_duration.sum": DROP, "sm__cycles_elapsed.avg": (1.98e6, "count"),
                                                  "sm__cycles_elapsed.avg.per_second": (1.98e9, "rate")}))
    assert f.time_s == pytest.approx(1e-3) and f.how["time"] == "sm__cycles_elapsed.avg / sm__cycles_elapsed.avg.per_second"


def test_tensor_counters():
    # the generic src_bf16_dst_fp32 counter is used alone when there is one (it already holds the families)
    f = launch_figures(launch(**{
        "sm__ops_path_tensor_src_bf16_dst_fp32.sum": (1e12, None),
        "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32.sum": (9e11, None),
        "sm__ops_path_tensor_op_gmma_src_bf16_dst_fp32.sum": (1e11, None),
    }))
    assert f.flops_by == {"tensor_bf16_fp32": 1e12} and f.precision == "bf16"
    assert f.notes == ("no CUDA-core FLOP counters in the export: FLOPs are tensor-core work only",)
    # without it, the families add up: 9e11 + 1e11
    f = launch_figures(launch(**{
        "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32.sum": (9e11, None),
        "sm__ops_path_tensor_op_gmma_src_bf16_dst_fp32.sum": (1e11, None),
    }))
    assert f.flops_by == {"tensor_bf16_fp32": pytest.approx(1e12)}
    # sparsity on + off add up; a plain counter wins over them
    f = launch_figures(launch(**{
        "sm__ops_path_tensor_src_fp8_sparsity_on.sum": (3e9, None),
        "sm__ops_path_tensor_src_fp8_sparsity_off.sum": (4e9, None),
        **sass(ffma=10),
    }))
    assert f.flops_by == {"fp32": 20.0, "tensor_fp8": 7e9} and f.precision == "fp8"
    # one half of the pair alone is all there is
    assert launch_figures(launch(**{"sm__ops_path_tensor_src_fp8_sparsity_on.sum": (3e9, None)})).flops_by == {"tensor_fp8": 3e9}
    assert launch_figures(launch(**{"sm__ops_path_tensor_src_fp8_sparsity_off.sum": (4e9, None)})).flops_by == {"tensor_fp8": 4e9}
    f = launch_figures(launch(**{
        "sm__ops_path_tensor_src_int8.sum": (5e9, None),
        "sm__ops_path_tensor_src_int8_sparsity_on.sum": (1e9, None),
    }))
    assert f.flops_by == {"tensor_int8": 5e9} and f.precision == "int8"


def test_tensor_instructions_without_op_counters_are_not_classifiable():
    inst = {"sm__inst_executed_pipe_tensor.sum": (2.5e6, None), "smsp__inst_executed_pipe_tensor_op_hmma.sum": (3e6, None)}
    f = launch_figures(launch(**sass(ffma=10), **inst))
    assert f.tensor_inst == 2.5e6  # the whole tensor pipe's counter wins over a per-op one
    assert f.reason == ("2.5e6 tensor-core instructions executed but the export has no sm__ops_path_tensor_* counter, "
                        "so its FLOPs are unknown; add those metrics (see docs/diagnose.md)")
    assert f.flops_complete is False and f.flops_by == {"fp32": 20.0}
    # without the pipe's counter: the largest per-op one (hmma 3e6 > imma 1e6), never the HFMA2.MMA moves (5e6)
    g = launch_figures(launch(**sass(ffma=10), **{"smsp__inst_executed_pipe_tensor_op_hmma.sum": (3e6, None),
                                                   "smsp__inst_executed_pipe_tensor_op_imma.sum": (1e6, None),
                                                   "smsp__inst_executed_pipe_tensor_op_hmma_type_hfma2.sum": (5e6, None)}))
    assert g.tensor_inst == 3e6 and g.reason.startswith("3e6 tensor-core instructions executed")
    # with the H200 sheet (CC 9.0: 65536 FLOP per instruction), an estimate less the HFMA2.MMA moves:
    # (2.5e6 - 0.5e6) x 65536 = 1.31072e11 FLOP in 1 ms = 131 TFLOP/s, under 1.05 x 989.5, so the Hopper shape stays
    h = launch_figures(launch(**sass(ffma=10), **inst, **{"sm__inst_executed_pipe_tensor_op_hmma_type_hfma2.sum": (0.5e6, None)}),
                       library().match("H200 SXM"))
    assert h.reason == "" and h.flops_by == {"fp32": 20.0, "tensor_unknown": 1.31072e11} and "flops" in h.estimated
    assert h.notes[0] == ("500,000 of 2.5e6 tensor-pipe instructions are HFMA2.MMA register moves "
                          "(sm__inst_executed_pipe_tensor_op_hmma_type_hfma2.sum), not MMAs")
    ok = launch_figures(launch(**sass(ffma=10), **{"sm__inst_executed_pipe_tensor.sum": (0.0, None)}))
    assert ok.reason == "" and ok.tensor_inst == 0.0


def test_nothing_counted_and_lower_bounds():
    f = launch_figures(launch(**sass(ffma=0), **{"dram__bytes_read.sum": (0.0, "bytes"), "dram__bytes_write.sum": (0.0, "bytes")}))
    assert f.reason == "no FLOPs and no DRAM bytes counted (data stayed in cache, or the kernel does neither)"
    bytes_only = launch_figures(launch(**sass(ffma=0)))
    assert bytes_only.reason == "" and bytes_only.flops == 0.0
    flops_only = launch_figures(launch(**sass(ffma=4), **{"dram__bytes_read.sum": (0.0, "bytes"), "dram__bytes_write.sum": (0.0, "bytes")}))
    assert flops_only.reason == "" and flops_only.bytes == 0.0 and flops_only.flops == 8.0
    partial = launch_figures(launch(**sass(ffma=4), **{SASS.format("dfma"): (None, None), SASS.format("hadd"): (None, None)}))
    assert partial.reason == "" and partial.flops == 8.0
    assert partial.notes == (NO_TENSOR, "FLOPs are a lower bound: the dfma, hadd counters are n/a")
    tna = launch_figures(launch(**sass(ffma=4), **{"sm__ops_path_tensor_src_fp16_dst_fp32.sum": (None, None)}))
    assert tna.notes == ("the tensor-core FLOP counters are n/a",)


@pytest.mark.parametrize(
    "flops_by, precision",
    [
        ({}, "fp32"),
        ({"fp32": 0.0, "tensor_bf16_fp32": 0.0}, "fp32"),
        ({"tensor_bf16_fp32": 0.0, "fp32": 0.0}, "fp32"),  # nothing counted: fp32, whichever source comes first
        ({"fp32": 10.0, "fp64": 5.0}, "fp32"),
        ({"fp32": 10.0, "tensor_bf16_fp32": 11.0}, "bf16"),
        ({"tensor_fp64": 1.0}, "fp64_tensor"),
        ({"tensor_e4m3_fp32": 1.0}, "fp8"),
        ({"tensor_int4": 1.0}, "int8"),
        ({"tensor_tf32_fp32": 1.0}, "tf32"),
        ({"tensor_mystery": 1.0}, "fp16"),
        ({"fp16": 3.0}, "fp16"),
    ],
)
def test_precision_of_the_largest_source(flops_by, precision):
    assert precision_of(flops_by) == precision


def test_ncu_command_line():
    assert ncu_command_line(["a.sum", "b.sum"]) == "ncu --csv --page raw --print-units base --clock-control none --metrics a.sum,b.sum ./app > report.csv"
    default = ncu_command_line()
    assert default.startswith("ncu --csv --page raw --print-units base --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,")
    assert "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum" in default and "sm__ops_path_tensor_src_bf16_dst_fp32.sum" in default
