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
from gpuwhy.model import hierarchy as H
from gpuwhy.model.roofline import Workload
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
    with pytest.raises(ValueError):
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
    with pytest.raises(ValueError):
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
    code, out, _ = cli("classify", "--bytes", "32MiB", "--flops", "8M", "--time", "9us", "--gpu", "H100 SXM", "--json")
    assert code == 0
    w = " ".join(json.loads(out)["warnings"])
    assert "1.11x the DRAM roof" in w and "must be coming from the L2" in w and "--working-set" in w


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
    from gpuwhy.model.ceilings import ceilings_from_profile
    from gpuwhy.model.level_verdict import judge_workload

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
    with pytest.raises(ValueError):
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

    m = P.merge_caches_into_profile(p, Caches())
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

    m = P.merge_latency_into_profile(m, Ladder())
    assert m.latency_s == {"L1": 16e-9, "L2": 144e-9, "L2 far": 275e-9, "DRAM": 347e-9}
    assert m.l2_near_bytes == int(31.1 * MiB)
    P.save_profile(m, tmp_path)
    # a later memory-only run carries the cache and latency figures over
    later = replace(p, date="2026-12-03T00:00:00+00:00")
    carried = P.carry_compute(later, tmp_path)
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
