"""The memory-hierarchy figures and lines (model/hierarchy.py and model/level_verdict.py) checked
against arithmetic written out here, at both sides of each boundary. tests/test_hierarchy.py holds
the worked examples (the course's Little's-law example, the recorded H200 profile); this file pins
what they leave loose: the percentages of each line to the digit, the kB/MB and KiB/MiB/GiB cuts,
the launch-shape rules, and every branch of the level verdict.

Boundary cases use figures whose quotients are exact in binary (4e11 / 1e12 x 100 is 40.0 to the
last bit), so that "at the limit" really is.
"""

from __future__ import annotations

from types import SimpleNamespace as NS

import pytest

from gpuwhy.model.roofline import hierarchy as H
from gpuwhy.model.roofline.level_verdict import TENSOR_PRECISIONS, judge_workload
from gpuwhy.model.roofline.classify import Ceilings, Workload

MiB, GiB = 2**20, 2**30
LAT, SMS, THREADS = 500e-9, 125, 2048

# --- Little's law lines ------------------------------------------------------------------------


def test_the_law_line_to_the_digit_at_the_megabyte():
    # 2,000 GB/s x 500 ns = 1,000,000 B in flight (1 MB: from 1e6 B on it is written in MB), / 125 SMs = 8,000 B = 8 KB
    # per SM; 8,000 / 4 B = 2,000 threads = 2,000 / 2,048 = 97.66% -> "98%"; / 16 B = 500 = 24.41% -> "24%".
    # Achieved 1.2e12 of 2e12 = 60%.
    d = H.latency_diagnosis("DRAM", 1.2e12, 2e12, LAT, SMS, THREADS)
    assert d.fraction_of_roof == 0.6 and d.littles.bytes_in_flight == 1e6
    assert d.reason == ("60% of the DRAM roof; Little's law: 2,000 GB/s x 500 ns = 1 MB in flight, 8 KB per SM: "
                        "at 4 bytes per thread that is 2,000 threads per SM (98% of the 2,048-thread limit), "
                        "at 16 bytes 500 (24%)")
    # under a megabyte, in kB to 3 digits: 1,990 GB/s x 500 ns = 995,000 B = "995 KB"
    assert "= 995 KB in flight" in H.latency_diagnosis("L2", 1e12, 1.99e12, LAT, SMS, THREADS).reason
    assert d.achieved_in_flight_bytes == 1.2e12 * LAT


def test_positive_bandwidths_of_one_byte_per_second_are_judged():
    d = H.latency_diagnosis("DRAM", 1.0, 1.0, LAT, SMS, THREADS)
    assert d.fraction_of_roof == 1.0


def test_blocks_per_sm_is_a_whole_number():
    # 2,048 // 300 = 6 blocks (6.83 is not a block count); 6 x 300 = 1,800 resident threads
    assert H.blocks_per_sm(300, 2048) == 6
    assert H.waves_of(750, 300, 125, 2048) == 1.0  # 750 / (125 x 6)


def test_a_grid_without_a_block_size_spreads_nothing():
    # only the grid known: the SM's 2,048 threads are resident, x 4 B = 8,192 B per SM
    d = H.latency_diagnosis("DRAM", 2e11, 1e12, LAT, SMS, THREADS, bytes_per_thread=4, grid=1000)
    assert d.kernel_in_flight_per_sm == 8192 and d.waves is None
    # a small grid given by its waves and its block count only: no "(N blocks of B)"
    d = H.latency_diagnosis("DRAM", 2e11, 1e12, LAT, SMS, THREADS, grid=50, waves=0.5)
    assert d.cause == "small grid" and d.reason.startswith("0.5 waves: the grid is too small to fill 125 SMs; ")


def test_low_occupancy_percent_to_the_digit():
    # 0.442 -> "44%" (44.2; a 101 x slip would print 45)
    d = H.latency_diagnosis("DRAM", 2e11, 1e12, LAT, SMS, THREADS, achieved_occupancy=0.442)
    assert d.cause == "low occupancy" and d.reason.startswith("44% achieved occupancy: too few warps per SM")


def test_bytes_in_flight_exactly_what_the_law_needs_under_load_is_enough():
    # need under load: 1e12 B/s x 500 ns / 125 SMs = 4,000 B per SM, x 2 = 8,000 B.
    # 1,000 blocks of 250 on 125 SMs: 8 blocks per SM by threads (2,048 // 250), 1,000 x 250 / 125 = 2,000 resident,
    # one wave (1,000 / (125 x 8)); 2,000 x 4 B = 8,000 B: equal, so not "few bytes per thread"
    d = H.latency_diagnosis("DRAM", 2e11, 1e12, LAT, SMS, THREADS, bytes_per_thread=4, grid=1000, block=250)
    assert (d.waves, d.kernel_in_flight_per_sm, d.need_loaded_per_sm) == (1.0, 8000.0, 8000.0)
    assert d.cause == "too few bytes in flight"
    # one block fewer: 999 x 250 / 125 = 1,998 resident x 4 = 7,992 B < 8,000 (and 0.999 waves: a small grid first)
    d = H.latency_diagnosis("DRAM", 2e11, 1e12, LAT, SMS, THREADS, bytes_per_thread=4, grid=999, block=250, waves=1.0)
    assert d.kernel_in_flight_per_sm == 7992 and d.cause == "few bytes per thread"


# --- working sets and roofs ---------------------------------------------------------------------


def test_tiny_l2_sizes_and_clocks_are_still_sizes_and_clocks():
    assert H.place_working_set(0.5, 1).level == "L2"  # 0.5 B <= 2/3 of a 1-byte L2
    assert H.shared_clock_limit(1, 1) == 128 * 1 * 1e6  # 1 MHz: 128 B per clock
    assert H.shared_clock_limit(1, 0.5) == 128 * 0.5e6


def test_half_a_byte_through_a_level_is_judged():
    v = H.judge_levels({"DRAM": 0.5}, 0, 1.0, {"DRAM": 1.0}, 1.0)
    assert v.point("DRAM").fraction_of_roof == 0.5 and v.deciding == "DRAM"


# --- the verdict line ---------------------------------------------------------------------------


def test_verdict_lines_to_the_digit():
    # compute: 6e11 FLOP in 1 s on 1e12 FLOP/s = 60%; DRAM: 6e11 B in 1 s on 1e12 B/s = 60% (FLOPs 1e11: 10%)
    assert H.judge_levels({"DRAM": 1e8}, 6e11, 1.0, {"DRAM": 1e12}, 1e12).text == "compute-bound (60% of the compute roof)"
    assert H.judge_levels({"DRAM": 6e11}, 1e11, 1.0, {"DRAM": 1e12}, 1e12).text == "memory-bound, DRAM decides (60% of its roof)"
    # a verdict built by hand whose deciding level has no point, or no roof: "n/a"
    assert H.HierarchyVerdict((), "DRAM", "memory", 0.0, 1.0, 1.0, 0.0).text == "memory-bound, DRAM decides (n/a of its roof)"
    bare = H.LevelPoint("L1", 1.0, 0.0, None, None, 1.0, None)
    assert H.HierarchyVerdict((bare,), "L1", "memory", 0.0, 1.0, 1.0, 0.0).text == "memory-bound, L1/shared decides (n/a of its roof)"


def test_the_l1_default_latency_is_30_ns():
    # 2e6 B through L1 in 10 us on a 1e12 B/s roof: 20%, latency-bound with the L1's default 30 ns
    v = H.judge_levels({"L1": 2e6}, 0, 1e-5, {"L1": 1e12}, 1e12, sm_count=SMS, max_threads_per_sm=THREADS)
    assert v.regime == "latency" and v.latency.littles.latency_s == 30e-9
    assert v.latency.littles.latency_source == ("gpuwhy's default 30 ns for L1/shared (no measured latency: run "
                                                "`gpuwhy bench --latency` on this GPU)")


# --- the level verdict (model/level_verdict.py) --------------------------------------------------


def _sheet(l2_gbs=None, **kw):
    """A made-up GPU: 48 MiB L2 (two thirds: 32 MiB), 125 SMs, 1,000 MHz; DRAM 1e12 B/s on the sheet."""
    base = dict(name="Test GPU", l2_bytes=48 * MiB, bandwidth_bytes_per_s=1e12, l2_bandwidth_gbs=l2_gbs,
                boost_clock_mhz=1000.0, sm_count=SMS, source_for=lambda key: f"url-{key}")
    return NS(**{**base, **kw})


def _ceil(bw=1e12, peak=1e12, precision="fp32"):
    return Ceilings(peak_flops=peak, bandwidth=bw, launch_overhead_s=0.0, precision=precision, gpu="Test GPU",
                    source="Test GPU sheet")


def test_a_dram_sized_working_set_keeps_the_dram_roof_and_says_so():
    v, j = judge_workload(Workload(1e6, 2 * GiB), _ceil(), _sheet(4000.0), working_set=GiB)
    assert (j.level, j.roof.kind, j.roof.bandwidth, j.dram_roof, j.times_dram) == ("DRAM", "spec", 1e12, 1e12, None)
    assert j.lines == ("working set 1 GiB does not fit in the 48 MiB L2 (21.3x its size): judged against DRAM",)
    d = j.to_dict()
    assert d["dram_roof_gbs"] == 1000.0 and d["l2_roof_known"] is None and d["dram_roof_ratio"] is None
    assert d["placement"]["level"] == "DRAM" and d["roof"]["kind"] == "spec" and d["latency"] is None


@pytest.mark.parametrize("ws, text", [
    (GiB, "1 GiB"), (GiB - MiB, "1,023 MiB"), (MiB, "1 MiB"), (MiB - 1024, "1,023 KiB"), (1024, "1 KiB"),
])
def test_working_set_sizes_in_kib_mib_and_gib(ws, text):
    _, j = judge_workload(Workload(1e6, 1e6), _ceil(), _sheet(), working_set=ws)
    assert j.lines[0].startswith(f"working set {text} ")


def test_an_l2_working_set_against_the_sheets_l2_roof():
    # 16 MiB of 48 MiB: fits (33%); 8e8 B in 1e-4 s = 8e12 B/s: 8x the 1e12 DRAM roof, 200% of the 4e12 L2 roof
    v, j = judge_workload(Workload(1e6, 8e8, time_s=1e-4), _ceil(), _sheet(4000.0), working_set=16 * MiB)
    assert j.level == "L2" and j.roof.bandwidth == 4e12 and j.times_dram == 8.0 and v.memory_sol_pct == 200.0
    assert v.ceilings.bandwidth == 4e12 and v.ceilings.level == "L2"
    assert j.lines == (
        "working set 16 MiB fits in the 48 MiB L2 (33% of it): judged against the L2 roof, 4,000 GB/s "
        "(Test GPU sheet (url-l2_bandwidth_gbs))",
        "the achieved 8,000 GB/s is 8x the DRAM roof (1,000 GB/s), 200% of the L2 roof",
    )
    assert j.to_dict()["l2_roof_known"] is True and j.to_dict()["dram_roof_ratio"] == 8.0


def test_an_l2_working_set_without_an_l2_roof_gives_no_share_and_says_only_the_l2_delivers_above_dram():
    # exactly the DRAM roof: 2^30 B in 2^-10 s = 2^40 B/s on a 2^40 roof: 1x, nothing more said
    ceil = _ceil(bw=2.0**40, peak=2.0**40)
    v, j = judge_workload(Workload(1.0, 2.0**30, time_s=2.0**-10), ceil, _sheet(), working_set=16 * MiB)
    assert j.level == "L2" and j.roof is None and j.times_dram == 1.0
    assert (v.sol_pct, v.memory_sol_pct, v.unexplained_fraction) == (None, None, None)
    assert j.lines[1] == "the achieved 1,100 GB/s is 1x the DRAM roof (1,100 GB/s)"
    assert j.to_dict()["l2_roof_known"] is False
    # a little faster (2^-10 x (1 - 2^-10) s): above the DRAM roof, which only the L2 can deliver; the roofline's
    # "faster than the roofline allows" warning is dropped
    v, j = judge_workload(Workload(1.0, 2.0**30, time_s=2.0**-10 * (1 - 2.0**-10)), ceil, _sheet(), working_set=16 * MiB)
    assert j.times_dram > 1 and j.lines[1].endswith("the DRAM roof (1,100 GB/s): only the L2 can deliver that")
    assert not any(w.startswith("the measured time is faster") for w in v.warnings)
    # untimed: no "achieved" line
    _, j = judge_workload(Workload(1.0, 2.0**30), ceil, _sheet(), working_set=16 * MiB)
    assert len(j.lines) == 1 and j.times_dram is None


def test_dram_bytes_above_the_dram_roof_with_no_working_set():
    # at the roof exactly (1e9 B in 1e-3 s on 1e12 B/s = 100%): nothing changed, no warning
    v, j = judge_workload(Workload(1e6, 1e9, time_s=1e-3), _ceil(), _sheet(4000.0))
    assert v.memory_sol_pct == 100.0 and v.warnings == () and j.times_dram == 1.0
    # 2e9 B in 1e-3 s = 2e12 B/s: 200% of DRAM, under the 4e12 L2 roof: the data must come from the L2
    v, j = judge_workload(Workload(1e6, 2e9, time_s=1e-3), _ceil(), _sheet(4000.0))
    assert v.warnings == ("the measured time is faster than the roofline allows on DRAM bytes alone (2x the DRAM roof: "
                          "2,000 GB/s of 1,000 GB/s): the data must be coming from the L2 (or the byte count is wrong); "
                          "give the working set (--working-set BYTES) to judge it against the L2 roof",)
    # exactly the L2 roof (4e9 B in 1e-3 s): still "from the L2"; above it (5e9): check the counts
    v, _ = judge_workload(Workload(1e6, 4e9, time_s=1e-3), _ceil(), _sheet(4000.0))
    assert "the data must be coming from the L2" in v.warnings[0]
    v, _ = judge_workload(Workload(1e6, 5e9, time_s=1e-3), _ceil(), _sheet(4000.0))
    assert v.warnings == ("the measured time is faster than the roofline allows on DRAM bytes alone (5x the DRAM roof: "
                          "5,000 GB/s of 1,000 GB/s), and faster than even the L2 roof (4,000 GB/s): check the byte and "
                          "FLOP counts, their units and that the right GPU sheet is used",)
    # just above the roof: 1.005e9 B in 1e-3 s = 100.5%: rewritten too
    v, _ = judge_workload(Workload(1e6, 1.005e9, time_s=1e-3), _ceil(), _sheet(4000.0))
    assert len(v.warnings) == 1 and "the data must be coming from the L2" in v.warnings[0]
    # no L2 roof on the sheet: "from the L2" whatever the speed
    v, _ = judge_workload(Workload(1e6, 5e9, time_s=1e-3), _ceil(), _sheet())
    assert "the data must be coming from the L2" in v.warnings[0]


def test_above_the_dram_roof_but_also_above_the_compute_roof_keeps_the_roofline_warning():
    # compute at exactly 100% (1e9 FLOP in 1e-3 s on 1e12): still rewritten; at 200%: the FLOP count is suspect too,
    # so the roofline's own warning stays
    v, _ = judge_workload(Workload(1e9, 2e9, time_s=1e-3), _ceil(), _sheet(4000.0))
    assert v.compute_sol_pct == 100.0 and v.warnings[0].startswith("the measured time is faster than the roofline allows on DRAM")
    v, _ = judge_workload(Workload(2e9, 2e9, time_s=1e-3), _ceil(), _sheet(4000.0))
    assert len(v.warnings) == 1 and v.warnings[0].startswith("the measured time is faster than the roofline allows (200% of")
    # just above the compute roof (1.005e9 FLOP: 100.5%): the roofline's warning stays
    v, _ = judge_workload(Workload(1.005e9, 2e9, time_s=1e-3), _ceil(), _sheet(4000.0))
    assert len(v.warnings) == 1 and v.warnings[0].startswith("the measured time is faster than the roofline allows (200% of")
    # a working set in DRAM, above the DRAM roof: the roofline's warning stays too (the working set was judged)
    v, _ = judge_workload(Workload(1e6, 2e9, time_s=1e-3), _ceil(), _sheet(4000.0), working_set=GiB)
    assert v.warnings[0].startswith("the measured time is faster than the roofline allows (200% of")


def test_latency_verdict_at_forty_percent_of_the_dram_roof():
    # 4e11 B in 1 s on 1e12 B/s: 100 x 4e11 / 1e12 = 40.0 (not under 40%): memory-bound;
    # 3.99e11: 39.9%, latency-bound, with the SM's 2,048-thread limit by default
    v, j = judge_workload(Workload(1e6, 4e11, time_s=1.0), _ceil(), _sheet())
    assert v.memory_sol_pct == 40.0 and v.regime == "memory" and j.latency is None and j.lines == ()
    v, j = judge_workload(Workload(1e6, 3.99e11, time_s=1.0), _ceil(), _sheet())
    assert v.regime == "latency" and j.latency.littles.max_threads_per_sm == 2048
    assert j.lines == ("why: 40% of the DRAM roof; Little's law: 1,000 GB/s x 500 ns = 500 KB in flight, 4 KB per SM: "
                       "at 4 bytes per thread that is 1,000 threads per SM (49% of the 2,048-thread limit), at 16 bytes "
                       "250 (12%)",)
    v, j = judge_workload(Workload(1e6, 3.99e11, time_s=1.0), _ceil(), _sheet(), max_threads_per_sm=1024)
    assert j.latency.littles.max_threads_per_sm == 1024


def test_issue_verdict_under_forty_percent_of_a_tensor_roof():
    # 4e11 FLOP in 1 s on 1e12 FLOP/s: 40.0% (not under): compute; 3.99e11: issue-bound, bf16 on tensor cores
    v, j = judge_workload(Workload(4e11, 1e6, time_s=1.0), _ceil(precision="bf16"), _sheet())
    assert v.compute_sol_pct == 40.0 and v.regime == "compute" and j.lines == ()
    v, j = judge_workload(Workload(3.99e11, 1e6, time_s=1.0), _ceil(precision="bf16"), _sheet())
    assert v.regime == "issue"
    assert j.lines == ("why: 40% of the bf16 tensor-core roof - the tensor cores wait on issue (too few warps issuing "
                       "MMAs, dependent MMA chains, operands not staged ahead), not on memory",)
    # fp32 on CUDA cores is never "issue"
    assert judge_workload(Workload(3.99e11, 1e6, time_s=1.0), _ceil(), _sheet())[0].regime == "compute"
    assert TENSOR_PRECISIONS == ("tf32", "fp16", "bf16", "fp8", "int8", "fp4", "fp64_tensor")


def test_a_profile_gives_the_measured_roofs_l2_size_and_latency():
    prof = NS(date="2026-11-29", cache_date="2026-12-02", l2_bytes=24 * MiB, dram_bandwidth_gbs=900.0,
              l2_read_bandwidth_gbs=3000.0, shared_bandwidth_gbs=None, latency_s={"L2": 250e-9}, latency_date="2026-12-03")
    # 20 MiB of the profile's 24 MiB L2 is above two thirds (16 MiB): DRAM, with the DRAM roof measured
    _, j = judge_workload(Workload(1e6, 1e6), _ceil(bw=9e11), _sheet(4000.0), prof, working_set=20 * MiB)
    assert j.level == "DRAM" and j.roof.kind == "measured" and j.placement.l2_bytes == 24 * MiB
    # 16 MiB fits: the measured 3,000 GB/s L2 roof and the measured 250 ns latency; 6e8 B in 1e-3 s = 20% of it
    v, j = judge_workload(Workload(1e6, 6e8, time_s=1e-3), _ceil(bw=9e11), _sheet(4000.0), prof, working_set=16 * MiB)
    assert (j.level, j.roof.bandwidth, v.regime) == ("L2", 3e12, "latency")
    assert j.latency.littles.latency_s == 250e-9
    assert j.latency.littles.latency_source == "measured by gpuwhy bench --latency (2026-12-03)"
