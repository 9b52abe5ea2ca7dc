"""The memory hierarchy on the roofline, without a GPU: where a working set lives, the L2
verdict of classify, today's verdict for DRAM-sized sets, the latency-bound verdict with
Little's law (the course's example), the deciding level of bytes per level (for ncu), and the
profile fields the cache and latency benchmarks save.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from gpuwhy.api.classify import run_classify
from gpuwhy.model.roofline import hierarchy as H
from gpuwhy.model.roofline.classify import Workload
from gpuwhy.profiles import DeviceProfile
from gpuwhy.specs import library

FIXTURE = Path(__file__).parent / "fixtures" / "profiles" / "h200-2026-11-29.json"
MiB = 2**20


def h200_profile(**extra) -> DeviceProfile:
    """The recorded H200 profile, plus made-up cache and latency figures where a test needs them."""
    p = DeviceProfile.from_dict(json.loads(FIXTURE.read_text()))
    return replace(p, **extra)


# ------------------------------------------------------------- placement ----


def test_working_set_placement():
    l2 = 50 * MiB
    p = H.place_working_set(32 * MiB, l2)
    assert p.level == "L2" and "fits in the 50 MiB L2 (64% of it)" in p.reason
    assert H.place_working_set(40 * MiB, l2).level == "DRAM"  # 80%: above the two thirds left after other traffic
    big = H.place_working_set(3.2e9, l2)
    assert big.level == "DRAM" and "does not fit" in big.reason
    with pytest.raises(ValueError, match=r"^working set 0 must be a positive number of bytes$"):
        H.place_working_set(0, l2)


def test_level_roofs_never_invent_an_l2_figure():
    h100 = library().match("H100 SXM")
    roofs = H.level_roofs(h100)
    assert set(roofs) == {"DRAM", "L1"} and roofs["DRAM"].bandwidth == 3350e9
    # shared memory: 128 B/clk/SM x 132 SMs x 1980 MHz = 33.45 TB/s, derived from the clock
    assert roofs["L1"].kind == "clock" and roofs["L1"].bandwidth == pytest.approx(128 * 132 * 1980e6)
    pcie = H.level_roofs(library().match("H100 PCIe"))
    assert pcie["L2"].bandwidth == 6900e9 and "te42kyfo/gpu-benches" in pcie["L2"].source
    prof = h200_profile(l2_read_bandwidth_gbs=9800.0, shared_bandwidth_gbs=31000.0, cache_date="2026-12-02")
    got = H.level_roofs(library().match("H200"), prof)
    assert got["L2"].kind == "measured" and got["L2"].bandwidth == 9800e9
    assert got["L1"].kind == "measured" and got["DRAM"].bandwidth == pytest.approx(4597.757e9, rel=1e-6)


def test_shared_clock_limit():
    assert H.shared_clock_limit(132, 1980) == pytest.approx(33.45e12, rel=1e-3)
    with pytest.raises(ValueError, match=r"^sm_count=132 and sm_clock_mhz=0 must be positive$"):
        H.shared_clock_limit(132, 0)


# --------------------------------------------------- classify, must show ----


def test_l2_resident_classify_gives_an_l2_verdict_and_no_dram_figure_above_100(cli):
    """The issue's example: 32 MiB, 8 MFLOP in 9 us on the H100 SXM (50 MiB L2). Without a measured
    or published L2 figure the L2 roof is unknown: no share of any roof, and the way to measure it."""
    code, out, err = cli("classify", "--bytes", "32MiB", "--flops", "8M", "--time", "9us", "--gpu", "H100 SXM",
                         "--working-set", "32MiB", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["hierarchy"]["level"] == "L2" and d["hierarchy"]["l2_roof_known"] is False
    assert d["memory_level"] == "DRAM"  # the only figure there is; it is not used for a share of a roof
    assert d["sol_pct"] is None and d["memory_sol_pct"] is None  # no 111% of the DRAM roof
    assert not any("faster than the roofline" in w for w in d["warnings"])
    lines = " ".join(d["hierarchy"]["lines"])
    assert "fits in the 50 MiB L2" in lines and "L2 roof of the H100 SXM is unknown" in lines
    assert "gpuwhy bench --sweep" in lines and "1.11x the DRAM roof" in lines
    code, out, _ = cli("classify", "--bytes", "32MiB", "--flops", "8M", "--time", "9us", "--gpu", "H100 SXM",
                       "--working-set", "32MiB")
    assert code == 0 and "judged against the L2" in out and "111" not in out


def test_l2_resident_with_a_measured_l2_roof(tmp_path, monkeypatch):
    """With a measured L2 figure the verdict is judged against it: % of the L2 roof, and the
    achieved rate as a multiple of the DRAM roof."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    from gpuwhy.profiles import save_profile

    save_profile(h200_profile(l2_read_bandwidth_gbs=10000.0, cache_date="2026-12-02T00:00:00+00:00"))
    wl = Workload(flops=8e6, bytes=32 * MiB, time_s=4.5e-6, name="k")
    c = run_classify(wl, "H200", measured=True, working_set=32 * MiB, launch_overhead_s=1e-6)
    v = c.verdict
    assert v.ceilings.level == "L2" and v.ceilings.bandwidth == 10000e9
    # 33.55 MB / 4.5 us = 7,457 GB/s: 74.6% of the L2 roof, 1.62x the measured 4,598 GB/s DRAM roof
    assert v.memory_sol_pct == pytest.approx(74.565, abs=0.001) and v.regime == "memory"
    assert c.hierarchy.times_dram == pytest.approx(7456.5e9 / 4597.757e9, rel=1e-3)
    assert any("1.62x the DRAM roof" in line and "75% of the L2 roof" in line for line in c.hierarchy.lines)
    d = c.to_dict()
    assert d["memory_bandwidth_gbs"] == 10000.0 and d["hierarchy"]["roof"]["kind"] == "measured"


def test_dram_sized_working_set_keeps_todays_verdict():
    wl = Workload(flops=2.7e8, bytes=3.2e9, time_s=0.8e-3, name="vecadd")
    today = run_classify(wl, "H200").to_dict()
    with_ws = run_classify(wl, "H200", working_set=3.2e9).to_dict()
    for k in ("regime", "sol_pct", "memory_sol_pct", "memory_bandwidth_gbs", "bound_ratio", "warnings", "remedies",
              "memory_level"):
        assert with_ws[k] == today[k], k
    assert today["regime"] == "memory" and with_ws["memory_level"] == "DRAM"
    assert "does not fit in the 60 MiB L2" in with_ws["hierarchy"]["lines"][0]


def test_above_the_dram_roof_says_where_the_bytes_come_from(cli):
    # 64 MiB do not fit in the H100 SXM's 50 MiB L2: the working set decides, so the user is asked for it.
    code, out, _ = cli("classify", "--bytes", "64MiB", "--flops", "8M", "--time", "18us", "--gpu", "H100 SXM", "--json")
    assert code == 0
    d = json.loads(out)
    w = " ".join(d["warnings"])
    assert "1.11x the DRAM roof" in w and "must be coming from the L2" in w and "--working-set" in w
    assert d["hierarchy"]["level"] == "DRAM" and d["hierarchy"]["working_set_from_bytes"] is False


def test_bytes_that_fit_in_the_l2_faster_than_dram_are_judged_against_the_l2(cli):
    """Issue 31: 32 MiB in 9 us on the H100 SXM (50 MiB L2) is 1.11x the DRAM roof: L2-resident by its
    own figures, judged against the L2 (its roof unknown on this sheet) without --working-set, and
    the remedies name the L2, not DRAM."""
    code, out, err = cli("classify", "--bytes", "32MiB", "--flops", "8M", "--time", "9us", "--gpu", "H100 SXM", "--json")
    assert code == 0, err
    d = json.loads(out)
    h = d["hierarchy"]
    assert h["level"] == "L2" and h["working_set_from_bytes"] is True and h["l2_roof_known"] is False
    assert h["placement"]["working_set_bytes"] == 32 * MiB
    assert d["sol_pct"] is None and not any("faster than the roofline" in w for w in d["warnings"])
    assert "an L2-resident working set, judged against the L2" in h["lines"][0] and "1.11x the DRAM roof" in h["lines"][0]
    assert any("L2 transaction" in r for r in d["remedies"]["helps"])
    assert not any("DRAM" in r for r in d["remedies"]["helps"])
    # A sheet with an L2 figure: judged against it, % of the L2 roof.
    code, out, _ = cli("classify", "--bytes", "32MiB", "--flops", "8M", "--time", "5us", "--gpu", "H100 PCIe", "--json")
    d = json.loads(out)
    assert d["memory_level"] == "L2" and d["memory_bandwidth_gbs"] == 6900 and d["memory_sol_pct"] == pytest.approx(97.3, abs=0.1)
    # Slower than DRAM allows: nothing says the L2 served it; judged against DRAM as before.
    code, out, _ = cli("classify", "--bytes", "32MiB", "--flops", "8M", "--time", "20us", "--gpu", "H100 SXM", "--json")
    d = json.loads(out)
    assert d["hierarchy"]["level"] == "DRAM" and d["hierarchy"]["working_set_from_bytes"] is False
    assert d["memory_level"] == "DRAM" and d["hierarchy"]["placement"] is None


def test_working_set_larger_than_the_gpu_memory_is_an_input_error(cli):
    code, out, err = cli("classify", "--bytes", "1GB", "--flops", "1M", "--gpu", "H100 SXM", "--working-set", "100GB")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "working set 100 GB is larger than the H100 SXM's 80 GB of memory" in err


@pytest.mark.parametrize("args, needle", [
    # issue 31: printed "speed of light 3.2e30%" and "measured time 1e-21 ns", exit 0
    (["--bytes", "1GB", "--flops", "1G", "--time", "1e-30s"], "the measured time 1e-30 s is impossible"),
    (["--bytes", "32MiB", "--flops", "8M", "--time", "1ns"], "fastest memory roof of the H100 SXM (L1/shared, 33.5 TB/s)"),
    (["--bytes", "1GB", "--flops", "1P", "--time", "100us"], "fp8 with 2:4 sparsity, 3.96 PFLOP/s"),
])
def test_a_time_faster_than_any_roof_is_an_input_error(cli, args, needle):
    code, out, err = cli("classify", *args, "--gpu", "H100 SXM")
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert needle in err and "impossible" in err and "1.5x" in err


def test_a_time_just_inside_the_fastest_roof_is_judged_with_its_figures_written_plainly(cli):
    # 1 GB at 45 TB/s: 1.35x the L1/shared limit of the H100 SXM, 13.4x its DRAM roof: judged, loudly.
    code, out, err = cli("classify", "--bytes", "1GB", "--flops", "1G", "--time", f"{1e9 / 45e12 * 1e6:.4f}us",
                         "--gpu", "H100 SXM")
    assert code == 0, err
    assert "1,343% of the roof" in out and "memory 1,343%" in out and "faster than the roofline allows" in out


def test_latency_bound_verdict_reproduces_the_course_example(cli):
    """A made-up timed kernel at 20% of the RTX 5070's DRAM roof (672 GB/s, 48 SMs, 1,536 threads per
    SM): memory latency-bound, with the course's Little's-law figures at the default 500 ns."""
    t = 1e9 / (0.2 * 672e9)  # 1 GB at 20% of 672 GB/s
    code, out, err = cli("classify", "--bytes", "1GB", "--flops", "1M", "--time", f"{t * 1e3:.6f}ms", "--gpu", "rtx 5070",
                         "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["regime"] == "latency" and d["memory_sol_pct"] == pytest.approx(20.0, abs=0.01)
    law = d["hierarchy"]["latency"]["littles_law"]
    assert law["bandwidth_gbs"] == 672 and law["latency_s"] == 500e-9 and law["sm_count"] == 48
    assert law["bytes_in_flight"] == pytest.approx(336_000)  # 672 GB/s x 500 ns = 336 KB
    assert law["bytes_in_flight_per_sm"] == pytest.approx(7_000)  # 7 KB per SM
    need4 = next(n for n in law["needs"] if n["bytes_per_thread"] == 4)
    assert need4["threads_per_sm"] == pytest.approx(1750) and not need4["reachable"]  # > 1,536
    assert "default 500 ns" in law["latency_source"]
    rem = d["remedies"]
    assert any("16-byte vector loads" in h for h in rem["helps"]) and any("larger grid" in h for h in rem["helps"])
    assert any("Faster arithmetic" in h for h in rem["does_not_help"])
    code, out, _ = cli("classify", "--bytes", "1GB", "--flops", "1M", "--time", f"{t * 1e3:.6f}ms", "--gpu", "rtx 5070")
    assert "memory latency-bound: too few bytes in flight" in out
    assert "672 GB/s x 500 ns = 336 KB in flight, 7 KB per SM" in out and "1,750 threads per SM" in out


def test_well_used_memory_is_not_latency_bound():
    wl = Workload(flops=1e6, bytes=1e9, time_s=1e9 / (0.6 * 672e9))
    assert run_classify(wl, "rtx 5070").verdict.regime == "memory"


def test_launch_shape_names_the_cause():
    """With the launch shape: a grid of 8 blocks is 'too small to fill 132 SMs'; the naive vecadd
    (8 bytes in flight per thread, 2,048 threads per SM) at 74% of the roof keeps 16 KB per SM in
    flight, below the 24 KB Little's law needs under load at the H200's measured 347 ns."""
    prof = h200_profile(latency_s={"L1": 16e-9, "L2": 144e-9, "L2 far": 275e-9, "DRAM": 347e-9},
                        latency_date="2026-12-02T00:00:00+00:00")
    sheet = library().match("H200")
    from gpuwhy.model.roofline.ceilings import ceilings_from_profile
    from gpuwhy.model.roofline.level_verdict import judge_workload

    ce, _ = ceilings_from_profile(prof, sheet)
    n = 2**28
    small = Workload(flops=n / 16, bytes=4 * n / 16, time_s=4 * n / 16 / 50e9)  # 50 GB/s: ~1% of the roof
    v, j = judge_workload(small, ce, sheet, prof, grid=8, block=256, bytes_per_thread=64, max_threads_per_sm=2048,
                          max_blocks_per_sm=32)
    assert v.regime == "latency" and j.latency.cause == "small grid"
    assert j.latency.reason.startswith("0.0076 waves: the grid (8 blocks of 256) is too small to fill 132 SMs")
    naive = Workload(flops=n, bytes=12 * n, time_s=12 * n / 3396e9)
    v, j = judge_workload(naive, ce, sheet, prof, grid=n // 256, block=256, bytes_per_thread=8, max_threads_per_sm=2048,
                          max_blocks_per_sm=32)
    assert v.memory_sol_pct == pytest.approx(73.9, abs=0.1) and v.regime == "latency"
    assert j.latency.cause == "few bytes per thread" and j.latency.kernel_in_flight_per_sm == 16384
    assert j.latency.need_loaded_per_sm == pytest.approx(4597.757e9 * 2 * 347e-9 / 132, rel=1e-6)
    assert "measured by gpuwhy bench --latency" in j.latency.littles.latency_source
    vec16 = Workload(flops=n, bytes=12 * n, time_s=12 * n / 4387e9)  # 16-byte loads, 32 bytes per thread in flight
    v, j = judge_workload(vec16, ce, sheet, prof, grid=1024, block=256, bytes_per_thread=32, max_threads_per_sm=2048,
                          max_blocks_per_sm=32)
    assert v.regime == "memory" and j.latency is None


def test_tensor_work_far_below_its_roof_is_issue_bound():
    wl = Workload(flops=1.1e12, bytes=4e8, time_s=1.1e12 / (0.25 * 989.5e12))
    c = run_classify(wl, "H200", dtype="bf16")
    assert c.verdict.regime == "issue" and any("dependent MMA" in h for h in c.remedies.helps)
    assert run_classify(replace(wl, time_s=1.1e12 / (0.8 * 989.5e12)), "H200", dtype="bf16").verdict.regime == "compute"
    # CUDA-core fp32 far below its roof is not a tensor-pipe problem
    assert run_classify(replace(wl, time_s=1.1e12 / (0.25 * 67e12)), "H200").verdict.regime == "compute"


def test_python_api_takes_a_working_set():
    import gpuwhy

    r = gpuwhy.classify(flops="8M", bytes="32MiB", gpu="H100 PCIe", time="9us", working_set="32MiB")
    assert r.verdict.ceilings.level == "L2" and r.verdict.ceilings.bandwidth == 6900e9


@pytest.mark.parametrize("args,needle", [
    (["--working-set", "0"], "--working-set"),
    (["--working-set", "lots"], "--working-set"),
])
def test_bad_working_set_is_one_line(cli, args, needle):
    code, out, err = cli("classify", "--bytes", "1GB", "--flops", "1M", "--gpu", "H200", *args)
    assert code == 2 and out == "" and needle in err and err.count("\n") == 1, err


# ---------------------------------------------- bytes per level (for ncu) ----


def test_judge_levels_picks_the_nearest_roof():
    roofs = {"DRAM": 4.6e12, "L2": 10e12, "L1": 33e12}
    # a tiled kernel: little DRAM traffic, much L2 traffic: L2 is the nearest roof
    v = H.judge_levels({"DRAM": 1e8, "L2": 8e9, "L1": 2e10}, flops=1e10, time_s=1e-3, roofs=roofs, peak_flops=67e12)
    assert v.deciding == "L2" and v.regime == "memory"
    p = v.point("L2")
    assert p.fraction_of_roof == pytest.approx(0.8) and p.intensity == pytest.approx(1.25)
    assert v.point("DRAM").fraction_of_roof == pytest.approx(1e8 / 4.6e12 / 1e-3)
    # compute decides when FLOPs / peak is the longest time
    v = H.judge_levels({"DRAM": 1e8}, flops=6e10, time_s=1e-3, roofs=roofs, peak_flops=67e12)
    assert v.deciding == "compute" and v.regime == "compute"
    with pytest.raises(ValueError, match="unknown level"):
        H.judge_levels({"HBM": 1.0}, 1.0, 1.0, roofs, 1.0)
    with pytest.raises(ValueError, match=r"^time_s=0.0 must be a positive number of seconds$"):
        H.judge_levels({"DRAM": 1.0}, 1.0, 0.0, roofs, 1.0)


def test_judge_levels_latency_from_ncu_waves_and_occupancy():
    roofs = {"DRAM": 4.6e12, "L2": 10e12}
    kw = dict(flops=1e6, time_s=1e-3, roofs=roofs, peak_flops=67e12, sm_count=132, max_threads_per_sm=2048)
    v = H.judge_levels({"DRAM": 1e9}, waves=0.3, **kw)  # 22% of the DRAM roof
    assert v.regime == "latency" and v.latency.cause == "small grid"
    assert v.latency.reason.startswith("0.3 waves: the grid is too small to fill 132 SMs")
    v = H.judge_levels({"DRAM": 1e9}, waves=8, achieved_occupancy=0.25, **kw)
    assert v.latency.cause == "low occupancy" and v.latency.reason.startswith("8 waves, 25% achieved occupancy")
    assert "memory latency-bound" in v.text and "DRAM decides" in v.text
    # without SM facts no diagnosis is attempted
    assert H.judge_levels({"DRAM": 1e9}, 1e6, 1e-3, roofs, 67e12).regime == "memory"
    # an L2 level without a roof is noted, not judged
    v = H.judge_levels({"DRAM": 1e9, "L2": 5e9}, 1e6, 1e-3, {"DRAM": 4.6e12}, 67e12)
    assert v.deciding == "DRAM" and any("no L2 roof" in n for n in v.notes)
    assert v.to_dict()["levels"][1]["roof"] is None


# -------------------------------------------------------------- profiles ----


def test_profile_fields_are_backward_compatible_and_carried(tmp_path):
    from gpuwhy import profiles as P
    from gpuwhy.profile_sections import CACHES, LATENCY

    old = json.loads(FIXTURE.read_text())
    p = DeviceProfile.from_dict(old)  # written before these fields existed
    assert p.l2_read_bandwidth_gbs is None and p.latency_s is None

    class Row:
        def __init__(self, gbs, ws=0, limit=None):
            self.gbs, self.working_set_bytes, self.clock_limit_gbs = gbs, ws, limit

    class Caches:
        date = "2026-12-02T10:00:00+00:00"
        sm_clock = {"sm_clock_mhz": 1980.0}

        def best(self, level, op=None):
            return {("L2", "read"): Row(9800.0, 15 * MiB), ("L2", "read+write"): Row(8000.0),
                    ("shared", None): Row(31000.0, limit=33450.0), ("L1", None): Row(29000.0)}.get((level, op))

    m = P.merge(CACHES, p, Caches())
    assert (m.l2_read_bandwidth_gbs, m.l2_read_write_bandwidth_gbs, m.shared_bandwidth_gbs, m.l1_bandwidth_gbs) == \
        (9800.0, 8000.0, 31000.0, 29000.0)
    assert m.shared_clock_limit_gbs == 33450.0 and m.cache_sm_clock_mhz == 1980.0 and m.l2_working_set_bytes == 15 * MiB
    assert m.cache_date == Caches.date and m.dram_bandwidth_gbs == p.dram_bandwidth_gbs

    class Lv:
        def __init__(self, name, lat, edge=None):
            self.name, self.latency_s, self.edge_bytes = name, lat, edge

    class Ladder:
        date = "2026-12-02T11:00:00+00:00"
        levels = (Lv("L1", 16e-9, 200e3), Lv("L2", 144e-9, 31.1 * MiB), Lv("L2 far", 275e-9, 62 * MiB), Lv("DRAM", 347e-9))

    m = P.merge(LATENCY, m, Ladder())
    assert m.latency_s == {"L1": 16e-9, "L2": 144e-9, "L2 far": 275e-9, "DRAM": 347e-9}
    assert m.l2_near_bytes == int(31.1 * MiB)
    P.save_profile(m, tmp_path)
    # a later memory-only run carries the cache and latency figures over
    later = replace(p, date="2026-12-03T00:00:00+00:00")
    carried = P.carry_sections(later, tmp_path)
    assert carried.l2_read_bandwidth_gbs == 9800.0 and carried.latency_s["DRAM"] == 347e-9
    assert carried.cache_date == Caches.date and carried.latency_date == Ladder.date
    back = DeviceProfile.from_dict(json.loads(json.dumps(carried.to_dict())))
    assert back == carried


def test_sheet_l2_bandwidth_needs_a_source(tmp_path):
    import yaml

    from gpuwhy.errors import SpecError
    from gpuwhy.specs import validate_sheet

    data = yaml.safe_load((Path(library().match("H200").path)).read_text())
    data["l2_bandwidth_gbs"] = 9700
    with pytest.raises(SpecError, match="needs its own source URL"):
        validate_sheet(data, "x.yaml")
    data["sources"]["l2_bandwidth_gbs"] = "https://example.org/measurement"
    assert validate_sheet(data, "x.yaml").l2_bandwidth_gbs == 9700
    data["l2_bandwidth_gbs"] = 4000  # below the 4,800 GB/s DRAM: a DRAM figure
    with pytest.raises(SpecError, match="not above the DRAM"):
        validate_sheet(data, "x.yaml")


# ------------------------------------------- every figure and guard, pinned --
# Round numbers worked by hand: a 1,000 GB/s roof, 500 ns latency, 125 SMs of 2,048 threads.
# Little's law: 1e12 B/s x 500e-9 s = 500,000 B = 500 KB in flight, / 125 SMs = 4,000 B = 4 KB per SM;
# at 4 B per thread 1,000 threads per SM (1,000 / 2,048 = 48.8%), at 16 B 250 (12.2%);
# under load (x 2) 8,000 B per SM.

ROOF, LAT, SMS, THREADS = 1e12, 500e-9, 125, 2048
HEAD = "20% of the DRAM roof; Little's law: 1,000 GB/s x 500 ns = 500 KB in flight, 4 KB per SM"


def test_regime_text_roof_dict_and_helpers():
    assert H.regime_text("latency") == "memory latency-bound: too few bytes in flight"
    assert H.regime_text("issue") == "issue/latency-bound on the math pipe" and H.regime_text("odd") == "odd-bound"
    r = H.LevelRoof("L2", 9.8e12, "measured", "bench", 50 * MiB)
    assert r.bandwidth_gbs == 9800
    assert r.to_dict() == {"level": "L2", "bandwidth_gbs": 9800, "kind": "measured", "source": "bench", "size_bytes": 50 * MiB}
    assert H.levels_from_bytes(1, None, 3) == {"DRAM": 1.0, "L1": 3.0} and H.levels_from_bytes() == {}
    assert "DRAM" in H.hierarchy_remedy_hint(_verdict(deciding="DRAM"))
    assert "from L2" in H.hierarchy_remedy_hint(_verdict(deciding="L2"))
    assert "bank conflicts" in H.hierarchy_remedy_hint(_verdict(deciding="L1"))
    assert H.hierarchy_remedy_hint(_verdict(deciding="compute")) == ""


def _verdict(deciding):
    return H.HierarchyVerdict((), deciding, "memory", 0.0, 1.0, 1.0, 0.0)


def test_shared_clock_limit_figures_and_guards():
    # 128 B x 132 SMs x 1,980e6 /s = 33,454,080,000,000 B/s; 128 x 1 x 1,000e6 = 1.28e11
    assert H.shared_clock_limit(132, 1980) == 33_454_080_000_000
    assert H.shared_clock_limit(1, 1000) == 1.28e11
    for sms, mhz in ((0, 1000), (1, 0), (1, -5), (1, float("inf")), (1, float("nan"))):
        with pytest.raises(ValueError, match="must be positive"):
            H.shared_clock_limit(sms, mhz)


def test_placement_at_both_sides_of_two_thirds_and_of_the_l2():
    l2 = 3 * MiB  # two thirds: 2 MiB = 2,097,152 B
    p = H.place_working_set(2 * MiB, l2)
    assert p.level == "L2" and p.reason == "fits in the 3 MiB L2 (67% of it)"
    assert p.fraction_of_l2 == pytest.approx(2 / 3)
    assert p.to_dict() == {"working_set_bytes": 2 * MiB, "l2_bytes": l2, "level": "L2",
                           "fraction_of_l2": p.fraction_of_l2, "reason": p.reason}
    p = H.place_working_set(2 * MiB + 1, l2)
    assert p.level == "DRAM" and p.reason.startswith("67% of the 3 MiB L2: above the 67% left after other traffic")
    p = H.place_working_set(3 * MiB, l2)  # all of it: still "part of it from DRAM"
    assert p.level == "DRAM" and p.reason.startswith("100% of the 3 MiB L2: above the 67%")
    p = H.place_working_set(6 * MiB, l2)
    assert p.level == "DRAM" and p.reason == "does not fit in the 3 MiB L2 (2x its size): judged against DRAM"
    # a looser fit fraction: 2.5 MiB of 3 MiB is 83% <= 90%
    assert H.place_working_set(2.5 * MiB, l2, fit_fraction=0.9).level == "L2"
    # sizes from 1 GiB on are written in GiB: 1,023 MiB just below
    assert "the 1 GiB L2" in H.place_working_set(1, 2**30).reason
    assert "the 1,023 MiB L2" in H.place_working_set(1, 2**30 - 2**20).reason
    for ws in (0, -1, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="must be a positive number of bytes"):
            H.place_working_set(ws, l2)
    for bad in (0, None, -1):
        with pytest.raises(ValueError, match="the L2 size is unknown"):
            H.place_working_set(1, bad)


def test_blocks_per_sm_and_waves():
    assert H.blocks_per_sm(256, 2048) == 8           # 2,048 / 256
    assert H.blocks_per_sm(256, 2048, 4) == 4        # the block limit is lower
    assert H.blocks_per_sm(256, 2048, 16) == 8
    assert H.blocks_per_sm(4096, 2048) == 1          # never below one
    assert H.blocks_per_sm(0, 2048) == 2048          # a zero block counts as one thread
    assert H.waves_of(1000, 256, 125, 2048) == 1.0   # 1,000 / (125 x 8)
    assert H.waves_of(1000, 256, 125, 2048, 4) == 2.0  # 1,000 / (125 x 4)


def test_latency_diagnosis_too_few_bytes_in_flight():
    d = H.latency_diagnosis("DRAM", 2e11, ROOF, LAT, SMS, THREADS)
    assert d.cause == "too few bytes in flight" and d.fraction_of_roof == 0.2
    assert d.littles.bytes_in_flight == pytest.approx(500_000) and d.littles.bytes_in_flight_per_sm == pytest.approx(4000)
    assert d.achieved_in_flight_bytes == pytest.approx(100_000)  # 2e11 B/s x 500e-9 s
    assert d.need_loaded_per_sm == pytest.approx(8000) and d.kernel_in_flight_per_sm is None
    assert [n.bytes_per_thread for n in d.littles.needs] == [4, 16]
    assert d.reason == (HEAD + ": at 4 bytes per thread that is 1,000 threads per SM (49% of the 2,048-thread limit), "
                        "at 16 bytes 250 (12%)")
    assert d.to_dict()["need_loaded_per_sm_bytes"] == pytest.approx(8000) and d.to_dict()["cause"] == d.cause
    # 4 MB in flight at 8,000 GB/s: written in MB
    assert "= 4 MB in flight, 32 KB per SM" in H.latency_diagnosis("L2", 2e11, 8e12, LAT, SMS, THREADS).reason
    for a, r in ((0, ROOF), (2e11, 0)):
        with pytest.raises(ValueError, match="bandwidths must be positive"):
            H.latency_diagnosis("DRAM", a, r, LAT, SMS, THREADS)


def test_latency_diagnosis_small_grid_at_one_wave():
    # 50 blocks of 256 on 125 SMs x 8 blocks each: 50 / 1,000 = 0.05 waves
    d = H.latency_diagnosis("DRAM", 2e11, ROOF, LAT, SMS, THREADS, grid=50, block=256)
    assert d.cause == "small grid" and d.waves == 0.05
    assert d.reason == "0.05 waves: the grid (50 blocks of 256) is too small to fill 125 SMs; " + HEAD
    assert H.latency_diagnosis("DRAM", 2e11, ROOF, LAT, SMS, THREADS, waves=0.99).reason.startswith(
        "0.99 waves: the grid is too small to fill 125 SMs; ")
    # exactly one wave is not a small grid
    assert H.latency_diagnosis("DRAM", 2e11, ROOF, LAT, SMS, THREADS, waves=1.0).cause == "too few bytes in flight"
    assert H.latency_diagnosis("DRAM", 2e11, ROOF, LAT, SMS, THREADS, grid=1000, block=256).waves == 1.0


def test_latency_diagnosis_low_occupancy_at_half():
    d = H.latency_diagnosis("DRAM", 2e11, ROOF, LAT, SMS, THREADS, waves=2.0, achieved_occupancy=0.49)
    assert d.cause == "low occupancy"
    assert d.reason == "2 waves, 49% achieved occupancy: too few warps per SM keep loads in flight; " + HEAD
    assert H.latency_diagnosis("DRAM", 2e11, ROOF, LAT, SMS, THREADS, achieved_occupancy=0.3).reason.startswith("30% achieved")
    assert H.latency_diagnosis("DRAM", 2e11, ROOF, LAT, SMS, THREADS, achieved_occupancy=0.5).cause == "too few bytes in flight"


def test_latency_diagnosis_few_bytes_per_thread_against_the_loaded_need():
    # 4 B x 2,048 resident threads = 8,192 B per SM >= the 8,000 B needed under load: not the cause
    d = H.latency_diagnosis("DRAM", 2e11, ROOF, LAT, SMS, THREADS, bytes_per_thread=4)
    assert d.kernel_in_flight_per_sm == 8192 and d.cause == "too few bytes in flight"
    assert [n.bytes_per_thread for n in d.littles.needs] == [4, 16]
    # occupancy 50%: 1,024 threads x 4 B = 4,096 B < 8,000 B
    d = H.latency_diagnosis("DRAM", 2e11, ROOF, LAT, SMS, THREADS, bytes_per_thread=4, achieved_occupancy=0.5)
    assert d.kernel_in_flight_per_sm == 4096 and d.cause == "few bytes per thread"
    assert d.reason == ("4 bytes in flight per thread x 1,024 threads per SM = 4.1 KB per SM, below the 8 KB "
                        "Little's law needs under load (1,000 GB/s x 2 x 500 ns / 125 SMs)")
    # the grid's threads spread over the SMs: 250 x 256 / 125 = 512 resident (fewer than 8 x 256 = 2,048)
    d = H.latency_diagnosis("DRAM", 2e11, ROOF, LAT, SMS, THREADS, bytes_per_thread=4, grid=250, block=256, waves=1.0)
    assert d.kernel_in_flight_per_sm == 2048 and d.cause == "few bytes per thread"
    # 4 blocks per SM by the block limit: 4 x 256 = 1,024 resident, x 4 B = 4,096 B
    d = H.latency_diagnosis("DRAM", 2e11, ROOF, LAT, SMS, THREADS, bytes_per_thread=4, grid=1000, block=256,
                            max_blocks_per_sm=4)
    assert d.waves == 2.0 and d.kernel_in_flight_per_sm == 4096
    # the kernel's own bytes per thread join the law's cases when whole and new
    assert [n.bytes_per_thread for n in H.latency_diagnosis("DRAM", 2e11, ROOF, LAT, SMS, THREADS,
                                                             bytes_per_thread=8).littles.needs] == [4, 16, 8]
    assert [n.bytes_per_thread for n in H.latency_diagnosis("DRAM", 2e11, ROOF, LAT, SMS, THREADS,
                                                             bytes_per_thread=2.5).littles.needs] == [4, 16]


def test_is_latency_bound_at_its_two_limits():
    small = H.latency_diagnosis("DRAM", 2e11, ROOF, LAT, SMS, THREADS, waves=0.5)
    plain = H.latency_diagnosis("DRAM", 2e11, ROOF, LAT, SMS, THREADS)
    assert H.is_latency_bound(0.399) and not H.is_latency_bound(0.40)
    assert H.is_latency_bound(0.40, small) and H.is_latency_bound(0.899, small)
    assert not H.is_latency_bound(0.90, small) and not H.is_latency_bound(0.5, plain)


def test_judge_levels_every_figure():
    # DRAM 1e6 B on a 1e12 B/s roof: 1 us; L2 3e6 B on 5e12 B/s: 0.6 us; L1 2e6 B with no roof;
    # time 10 us; 0.999e6 FLOP on 1e12 FLOP/s: 0.999 us < 1 us, so DRAM decides at 1 / 10 = 10% of its roof
    v = H.judge_levels({"DRAM": 1e6, "L2": 3e6, "L1": 2e6}, 0.999e6, 1e-5,
                       {"DRAM": 1e12, "L2": H.LevelRoof("L2", 5e12, "spec", "sheet")}, 1e12)
    assert (v.deciding, v.regime, v.latency) == ("DRAM", "memory", None)
    dram, l2, l1 = v.points
    assert (dram.level, dram.bytes, dram.t_roof_s, dram.achieved_bandwidth) == ("DRAM", 1e6, pytest.approx(1e-6), pytest.approx(1e11))
    assert dram.intensity == pytest.approx(0.999) and dram.fraction_of_roof == pytest.approx(0.1)
    assert dram.roof.kind == "given" and dram.roof.bandwidth == 1e12
    assert l2.t_roof_s == pytest.approx(6e-7) and l2.fraction_of_roof == pytest.approx(0.06) and l2.intensity == pytest.approx(0.333)
    assert (l1.roof, l1.t_roof_s, l1.fraction_of_roof, l1.achieved_bandwidth) == (None, None, None, pytest.approx(2e11))
    assert v.notes == ("no L1/shared roof: its 2,000,000 bytes are not judged",)
    assert v.compute_fraction == pytest.approx(0.0999)
    assert v.text == "memory-bound, DRAM decides (10% of its roof)"
    assert v.point("L2") is l2 and v.point("L3") is None
    d = v.to_dict()
    assert d["peak_tflops"] == 1 and d["compute_pct_of_roof"] == pytest.approx(9.99) and d["deciding_level"] == "DRAM"
    assert d["levels"][0]["pct_of_roof"] == pytest.approx(10) and d["levels"][0]["achieved_bandwidth_gbs"] == pytest.approx(100)
    assert d["levels"][2]["roof"] is None and d["levels"][2]["pct_of_roof"] is None and d["latency"] is None
    # equal times: 1e6 FLOP takes the same 1 us as the DRAM bytes: compute decides
    v = H.judge_levels({"DRAM": 1e6}, 1e6, 1e-5, {"DRAM": 1e12}, 1e12)
    assert v.deciding == "compute" and v.regime == "compute" and v.text == "compute-bound (10% of the compute roof)"
    # no roof at all: compute decides
    assert H.judge_levels({"L1": 5.0}, 0, 1.0, {}, 1e12).deciding == "compute"


def test_judge_levels_issue_bound_at_forty_percent():
    # tensor work: 4e11 FLOP in 1 s on 1e12 FLOP/s is 40% (not below it); 3.99e11 is 39.9%
    at = H.judge_levels({"DRAM": 1e11}, 4e11, 1.0, {"DRAM": 1e12}, 1e12, tensor=True)
    assert at.regime == "compute"
    below = H.judge_levels({"DRAM": 1e11}, 3.99e11, 1.0, {"DRAM": 1e12}, 1e12, tensor=True)
    assert below.regime == "issue" and below.text == "issue/latency-bound on the math pipe (40% of the compute roof)"
    assert H.judge_levels({"DRAM": 1e11}, 3.99e11, 1.0, {"DRAM": 1e12}, 1e12).regime == "compute"


def test_judge_levels_latency_verdict_and_its_sources():
    # 2e6 B in 10 us = 2e11 B/s: 20% of the 1e12 roof, no FLOPs
    kw = dict(sm_count=SMS, max_threads_per_sm=THREADS)
    v = H.judge_levels({"DRAM": 2e6}, 0, 1e-5, {"DRAM": 1e12}, 1e12, **kw)
    assert v.regime == "latency" and v.latency.cause == "too few bytes in flight"
    assert v.text == "memory latency-bound: too few bytes in flight, DRAM decides (20% of its roof)"
    assert v.latency.littles.latency_s == 500e-9
    assert v.latency.littles.latency_source.startswith("gpuwhy's default 500 ns for DRAM")
    assert v.to_dict()["latency"]["cause"] == "too few bytes in flight"
    v = H.judge_levels({"DRAM": 2e6}, 0, 1e-5, {"DRAM": 1e12}, 1e12, latency_s={"DRAM": 400e-9}, **kw)
    assert v.latency.littles.latency_s == 400e-9 and v.latency.littles.latency_source == "measured"
    v = H.judge_levels({"DRAM": 2e6}, 0, 1e-5, {"DRAM": 1e12}, 1e12, latency_s={"DRAM": 400e-9},
                       latency_sources={"DRAM": "bench 2026-12-02"}, **kw)
    assert v.latency.littles.latency_source == "bench 2026-12-02"
    # the L2's default latency is 200 ns
    v = H.judge_levels({"L2": 2e6}, 0, 1e-5, {"L2": 1e12}, 1e12, **kw)
    assert v.latency.littles.latency_s == 200e-9 and v.latency.level == "L2"
    # no SM figures: no diagnosis, a plain memory verdict
    assert H.judge_levels({"DRAM": 2e6}, 0, 1e-5, {"DRAM": 1e12}, 1e12, sm_count=SMS).regime == "memory"
    # 89% with a small grid is latency-bound; at 90% there is no diagnosis
    # (in 1 s, so that 9e11 / 1e12 is 0.9 to the last bit)
    assert H.judge_levels({"DRAM": 8.9e11}, 0, 1.0, {"DRAM": 1e12}, 1e12, waves=0.5, **kw).regime == "latency"
    v = H.judge_levels({"DRAM": 9e11}, 0, 1.0, {"DRAM": 1e12}, 1e12, waves=0.5, **kw)
    assert v.regime == "memory" and v.latency is None
    # 50% with one full wave: memory-bound
    assert H.judge_levels({"DRAM": 5e6}, 0, 1e-5, {"DRAM": 1e12}, 1e12, waves=1.0, **kw).regime == "memory"


@pytest.mark.parametrize("args, needle", [
    (({"DRAM": 1.0}, 0, 0, {}, 1e12), "must be a positive number of seconds"),
    (({"DRAM": 1.0}, 0, float("inf"), {}, 1e12), "must be a positive number of seconds"),
    (({"DRAM": 1.0}, 0, 1.0, {}, 0), "peak_flops must be positive"),
    (({"DRAM": 1.0}, -1, 1.0, {}, 1e12), "flops must be >= 0"),
    (({"DRAM": 1.0}, float("nan"), 1.0, {}, 1e12), "flops must be >= 0"),
    (({"L3": 1.0}, 0, 1.0, {}, 1e12), "unknown level 'L3'"),
    (({"DRAM": -1.0}, 0, 1.0, {}, 1e12), "bytes for DRAM must be >= 0"),
    (({"DRAM": float("inf")}, 0, 1.0, {}, 1e12), "bytes for DRAM must be >= 0"),
    (({"DRAM": 0.0}, 0, 1.0, {}, 1e12), "no level has bytes"),
])
def test_judge_levels_guards(args, needle):
    with pytest.raises(ValueError, match=needle):
        H.judge_levels(*args)


def test_level_roofs_which_figure_wins():
    from types import SimpleNamespace as NS

    sheet = NS(name="Test GPU", l2_bytes=40 * MiB, bandwidth_bytes_per_s=2e12, l2_bandwidth_gbs=7000.0,
               boost_clock_mhz=1500.0, sm_count=100, source_for=lambda key: f"url-{key}")
    # the sheet alone: DRAM 2e12, L2 7,000 GB/s = 7e12 with the sheet's L2 size, L1 128 x 100 x 1,500e6 = 1.92e13
    r = H.level_roofs(sheet)
    assert (r["DRAM"].bandwidth, r["DRAM"].kind, r["DRAM"].source) == (2e12, "spec", "Test GPU sheet (url-memory_bandwidth_gbs)")
    assert (r["L2"].bandwidth, r["L2"].kind, r["L2"].size_bytes) == (7e12, "spec", 40 * MiB)
    assert r["L2"].source == "Test GPU sheet (url-l2_bandwidth_gbs)"
    assert (r["L1"].bandwidth, r["L1"].kind) == (1.92e13, "clock")
    assert r["L1"].source == "128 B/clk/SM x 100 SMs x 1500 MHz boost (Test GPU sheet)"
    prof = NS(date="2026-11-29", cache_date="2026-12-02", l2_bytes=50 * MiB, dram_bandwidth_gbs=1800.0,
              l2_read_bandwidth_gbs=6000.0, shared_bandwidth_gbs=15000.0)
    r = H.level_roofs(sheet, prof)
    assert (r["DRAM"].bandwidth, r["DRAM"].kind, r["DRAM"].source) == (1.8e12, "measured", "measured by gpuwhy bench (2026-11-29)")
    assert (r["L2"].bandwidth, r["L2"].size_bytes, r["L2"].source) == (6e12, 50 * MiB, "measured by gpuwhy bench (2026-12-02)")
    assert (r["L1"].bandwidth, r["L1"].source) == (1.5e13, "shared memory, measured by gpuwhy bench (2026-12-02)")
    # measured=False: the sheet's figures, the profile ignored
    assert {k: v.kind for k, v in H.level_roofs(sheet, prof, measured=False).items()} == {"DRAM": "spec", "L2": "spec", "L1": "clock"}
    # a profile without cache figures or cache date: the sheet's L2 and clock, the profile's date and DRAM
    bare = NS(date="2026-11-29", cache_date=None, l2_bytes=None, dram_bandwidth_gbs=None,
              l2_read_bandwidth_gbs=6000.0, shared_bandwidth_gbs=None)
    r = H.level_roofs(sheet, bare)
    assert r["DRAM"].kind == "spec" and r["L1"].kind == "clock"
    assert r["L2"].size_bytes == 40 * MiB and r["L2"].source == "measured by gpuwhy bench (2026-11-29)"
    # a sheet without an L2 figure or clock: no L2 or L1 roof
    bare_sheet = NS(name="X", l2_bytes=None, bandwidth_bytes_per_s=1e12, l2_bandwidth_gbs=None, boost_clock_mhz=None,
                    sm_count=100, source_for=lambda key: "u")
    assert set(H.level_roofs(bare_sheet)) == {"DRAM"}
