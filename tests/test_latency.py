"""`gpuwhy bench --latency` without a GPU: the pointer-chase permutation, level detection
on synthetic H200-like curves, Little's law (the course's example), the kernels'
NVRTC builds, and a fake-device run of the whole pipeline (tests/test_link.py's fake)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from conftest import nvrtc_available
from gpuwhy.bench import latency as LT
from gpuwhy.errors import MeasurementError
from gpuwhy.model.roofline.littles_law import course_example, littles_law
from gpuwhy.resources import bundled_dir

KIB, MIB = 1024, 2**20
H200_L2 = 60 * MIB


def walk(nxt: np.ndarray, start: int = 0) -> list[int]:
    """Follow ``nxt`` from ``start`` until it comes back (or loops elsewhere); the visited elements."""
    seen, out, i = set(), [], start
    while i not in seen:
        seen.add(i)
        out.append(i)
        i = int(nxt[i])
    assert i == start, f"the walk entered a loop at {i} that does not return to {start}"
    return out


# ---------------------------------------------------------- permutation ----


@pytest.mark.parametrize("n_elems,stride", [(1, 1), (2, 1), (5, 1), (7, 1), (64, 1), (1000, 1), (4096 // 8, 16),
                                            (2 * MIB // 8, 16), (3 * MIB // 8 + 5, 16), (640, 32)])
def test_build_cycle_is_one_cycle_over_every_node(n_elems, stride):
    nxt = build = LT.build_cycle(n_elems, stride, np.random.default_rng(n_elems))
    assert build.shape == (n_elems,)
    nodes = n_elems // stride
    visited = walk(nxt)
    assert len(visited) == nodes  # a single cycle ...
    assert sorted(visited) == list(range(0, nodes * stride, stride))  # ... covering every node (every element at stride 1)


@pytest.mark.parametrize("nodes", [5, 6, 9, 32, 1000, 50_000])
def test_consecutive_steps_jump_more_than_a_cache_line(nodes):
    order = LT.chase_order(nodes, np.random.default_rng(nodes))
    assert order[0] == 0 and sorted(order.tolist()) == list(range(nodes))
    jumps = np.abs(order - np.roll(order, -1)) * LT.NODE_BYTES  # bytes between consecutive loads, the wrap included
    assert jumps.min() > LT.LINE_BYTES
    assert LT.NODE_BYTES >= LT.LINE_BYTES and LT.LINE_BYTES == 128  # one node per line: every line of the set is used
    # and the chase is random, not a fixed stride (5 nodes allow only 0-2-4-1-3 and its reverse)
    if nodes >= 32:
        assert len(set(np.diff(order).tolist())) > nodes // 4
        other = LT.chase_order(nodes, np.random.default_rng(nodes + 1))
        assert not np.array_equal(order, other)


def test_chain_addresses_follow_the_order():
    rng = np.random.default_rng(3)
    order = LT.chase_order(100, rng)
    base = 0x7F0000001000
    arr = LT.chain_addresses(order, 100 * LT.STRIDE_ELEMS, LT.STRIDE_ELEMS, base)
    assert arr.dtype == np.uint64
    p = base
    for k in range(1, 250):
        p = int(arr[(p - base) // LT.ELEM_BYTES])
        assert p == LT.expected_address(order, LT.STRIDE_ELEMS, base, k)
    assert LT.expected_address(order, LT.STRIDE_ELEMS, base, 0) == base  # the walk starts at node 0
    nxt = LT.cycle_from_order(order, 100 * LT.STRIDE_ELEMS, LT.STRIDE_ELEMS)
    nodes = order * LT.STRIDE_ELEMS
    assert np.array_equal(arr[nodes], (base + nxt[nodes] * LT.ELEM_BYTES).astype(np.uint64))
    assert len(walk(nxt)) == 100
    with pytest.raises(ValueError, match="100 nodes at a stride of 16 do not fit in 1584 elements"):
        LT.cycle_from_order(order, 99 * LT.STRIDE_ELEMS, LT.STRIDE_ELEMS)
    with pytest.raises(ValueError, match="nodes=0 must be >= 1"):
        LT.chase_order(0, rng)


def test_latency_sizes_for_the_h200():
    s = LT.latency_sizes(H200_L2)
    assert s[0] == 4 * KIB and s[-1] == 4 * H200_L2
    assert all(b > a for a, b in zip(s, s[1:])) and all(x % LT.NODE_BYTES == 0 for x in s)
    def per_octave(lo, hi):
        return sum(lo <= x < hi for x in s)
    assert per_octave(128 * KIB, 256 * KIB) == 8  # dense at the L1 edge
    assert per_octave(32 * MIB, 64 * MIB) == 8  # and at the near/far L2 and DRAM edges
    assert per_octave(1 * MIB, 2 * MIB) == 2  # sparse between
    assert 55 <= len(s) <= 80
    with pytest.raises(ValueError, match="l2_bytes=0 must be positive"):
        LT.latency_sizes(0)


# ------------------------------------------------------ level detection ----


def h200_like(sizes, rng, *, far=True, l1=True, noise=0.01, widths=(0.1, 0.06, 0.1), l2_near=210e-9, l2_far=265e-9,
              l1_ns=30e-9, dram=600e-9, l1_edge=224 * KIB, far_edge=30 * MIB, dram_edge=62 * MIB, drift=0.05):
    """A synthetic H200-like ladder: logistic steps in latency against log2(size), multiplicative noise,
    and DRAM latency creeping up slowly with the working set (TLB reach)."""
    x = np.log2(np.asarray(sizes, float))

    def step(edge, w):
        return 1 / (1 + np.exp(-(x - np.log2(edge)) / w))

    lat = np.full(x.shape, l1_ns if l1 else l2_near)
    if l1:
        lat = lat + (l2_near - l1_ns) * step(l1_edge, widths[0])
    top = l2_near
    if far:
        lat = lat + (l2_far - l2_near) * step(far_edge, widths[1])
        top = l2_far
    lat = lat + (dram - top) * step(dram_edge, widths[2])
    lat = lat * (1 + drift * np.clip(x - np.log2(64 * MIB), 0, None))
    return lat * (1 + noise * rng.standard_normal(x.size))


@pytest.mark.parametrize("seed", range(8))
def test_detects_l1_l2_far_l2_and_dram_on_an_h200_like_curve(seed):
    sizes = LT.latency_sizes(H200_L2)
    lat = h200_like(sizes, np.random.default_rng(seed))
    levels = LT.detect_levels(sizes, lat, l2_bytes=H200_L2)
    assert [lv.name for lv in levels] == ["L1", "L2", "L2 far", "DRAM"]
    l1, l2, far, dram = levels
    assert l1.latency_s == pytest.approx(30e-9, rel=0.03)
    assert l2.latency_s == pytest.approx(210e-9, rel=0.03)
    assert far.latency_s == pytest.approx(265e-9, rel=0.04)
    assert dram.latency_s == pytest.approx(600e-9, rel=0.06)
    # the steps fall where the curve was built to step (mean-latency crossing)
    assert l1.edge_bytes == pytest.approx(224 * KIB, rel=0.12)
    assert l2.edge_bytes == pytest.approx(30 * MIB, rel=0.12)
    assert far.edge_bytes == pytest.approx(62 * MIB, rel=0.15)
    assert dram.edge_bytes is None and dram.last_bytes == 4 * H200_L2
    assert l1.first_bytes == 4 * KIB and l1.last_bytes < 224 * KIB < l2.first_bytes
    # indices point back into the input
    assert all(lat[i] == pytest.approx(l2.latency_s, rel=0.06) for i in l2.indices)


def test_no_far_step_no_l1_and_shuffled_input():
    sizes = LT.latency_sizes(H200_L2)
    rng = np.random.default_rng(11)
    lat = h200_like(sizes, rng, far=False)
    assert [lv.name for lv in LT.detect_levels(sizes, lat, l2_bytes=H200_L2)] == ["L1", "L2", "DRAM"]
    cg = h200_like(sizes, rng, l1=False)  # ld.global.cg: no L1 plateau
    names = [lv.name for lv in LT.detect_levels(sizes, cg, l2_bytes=H200_L2, l1_cached=False)]
    assert names == ["L2", "L2 far", "DRAM"]
    perm = rng.permutation(len(sizes))
    shuffled = LT.detect_levels(np.asarray(sizes)[perm], lat[perm], l2_bytes=H200_L2)
    plain = LT.detect_levels(sizes, lat, l2_bytes=H200_L2)
    assert [(a.name, a.latency_s, a.edge_bytes) for a in shuffled] == [(b.name, b.latency_s, b.edge_bytes) for b in plain]


def test_sharp_steps_on_a_coarse_grid_and_an_a100_like_curve():
    # two points per octave and steps sharper than the grid (an LRU-like cache)
    sizes = LT.latency_sizes(40 * MIB, dense=2)
    lat = np.where(np.asarray(sizes) <= 192 * KIB, 38e-9, np.where(np.asarray(sizes) <= 40 * MIB, 260e-9, 480e-9))
    levels = LT.detect_levels(sizes, lat, l2_bytes=40 * MIB)
    assert [lv.name for lv in levels] == ["L1", "L2", "DRAM"]
    assert [lv.latency_s for lv in levels] == [38e-9, 260e-9, 480e-9]
    arr = np.asarray(sizes)
    for lv, edge in zip(levels, (192 * KIB, 40 * MIB)):  # each step falls between the grid points around the true edge
        assert arr[arr <= edge].max() < lv.edge_bytes < arr[arr > edge].min()
    # without an L2 size the last plateau is DRAM
    assert [lv.name for lv in LT.detect_levels(sizes, lat)] == ["L1", "L2", "DRAM"]


def test_a_flat_curve_is_one_level_and_bad_input_is_refused():
    sizes = LT.latency_sizes(4 * MIB)
    levels = LT.detect_levels(sizes, np.full(len(sizes), 100e-9), l2_bytes=4 * MIB)
    assert len(levels) == 1 and levels[0].points == len(sizes) and levels[0].name == "L2"
    for bad, msg in (
        (([1, 2], [1.0]), "sizes and latencies must be 1-D and of equal length"),
        (([1], [1.0]), "need at least 2 points"),
        (([1, 2], [1.0, -1.0]), "sizes and latencies must be positive and finite"),
        (([1, 2], [1.0, float("nan")]), "sizes and latencies must be positive and finite"),
    ):
        with pytest.raises(ValueError, match=msg):
            LT.detect_levels(*bad)


def test_a_slow_rise_is_not_a_level_of_its_own():
    # a ramp of 60% per octave (steeper than flat_slope's 42%) from 200 ns to 800 ns, three octaves long,
    # between two long plateaus: a slow transition, not levels of its own
    sizes = LT.latency_sizes(H200_L2)
    x = np.log2(np.asarray(sizes, float))
    lo, hi = np.log2(16 * MIB), np.log2(16 * MIB) + np.log(4) / np.log(1.6)
    lat = np.where(x < lo, 200e-9, np.where(x > hi, 800e-9, 200e-9 * 1.6 ** (x - lo)))
    lat = np.where(np.asarray(sizes) < 256 * KIB, 30e-9, lat)
    names = [lv.name for lv in LT.detect_levels(sizes, lat, l2_bytes=H200_L2)]
    assert names == ["L1", "L2", "DRAM"]


# -------------------------------------------------------- Little's law ----


def test_littles_law_course_example():
    ll = course_example()
    assert ll.bytes_in_flight == pytest.approx(336_000)  # 672 GB/s x 500 ns = 336 KB
    assert ll.bytes_in_flight_per_sm == pytest.approx(7_000)  # / 48 SMs = 7 KB per SM
    four = ll.need(4)
    assert four.threads_per_sm == pytest.approx(1_750)  # at 4 B per thread
    assert ll.max_threads_per_sm == 1_536 and four.threads_per_sm > 1_536 and not four.reachable
    assert four.fraction_of_limit == pytest.approx(1750 / 1536)
    sixteen = ll.need(16)
    assert sixteen.threads_per_sm == pytest.approx(437.5) and sixteen.reachable
    d = ll.to_dict()
    assert d["bytes_in_flight"] == pytest.approx(336_000) and [n["bytes_per_thread"] for n in d["needs"]] == [4, 16]


def test_littles_law_for_an_h200_and_bad_inputs():
    ll = littles_law(4300.0, 600e-9, 132, 2048)
    assert ll.bytes_in_flight == pytest.approx(4300e9 * 600e-9)
    assert ll.bytes_in_flight_per_sm == pytest.approx(4300e9 * 600e-9 / 132)
    assert ll.need(4).threads_per_sm == pytest.approx(4300e9 * 600e-9 / 132 / 4) and not ll.need(4).reachable
    assert ll.need(16).reachable and ll.need(8).threads_per_sm == pytest.approx(ll.need(16).threads_per_sm * 2)
    for bad, msg in (
        ((0, 1e-6, 1, 1), "bandwidth_gbs=0 must be a positive number"),
        ((1.0, -1, 1, 1), "latency_s=-1 must be a positive number"),
        ((1.0, 1e-6, 0, 1), "sm_count=0 must be a whole number >= 1"),
        ((1.0, 1e-6, 1, 1.5), "max_threads_per_sm=1.5 must be a whole number >= 1"),
        ((float("inf"), 1e-6, 1, 1), "bandwidth_gbs=inf must be a positive number"),
    ):
        with pytest.raises(ValueError, match=msg):
            littles_law(*bad)
    with pytest.raises(ValueError, match="bytes_per_thread=\\(0,\\) must be whole numbers >= 1"):
        littles_law(1.0, 1e-6, 1, 1, bytes_per_thread=(0,))


# ------------------------------------------------------------- kernels ----


@pytest.mark.skipif(not nvrtc_available()[0], reason=f"NVRTC not loadable: {nvrtc_available()[1]}")
@pytest.mark.parametrize("arch", ["sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"])
def test_latency_kernels_compile_to_cubins(arch, compiled):
    from gpuwhy.engine.compile import cubin_sm

    mod = compiled("latency.cu", arch)
    assert mod.cubin[:4] == b"\x7fELF" and cubin_sm(mod.cubin) == int(arch[3:])
    assert set(mod.kernel_names) == {"chase_ca", "chase_cg", "touch_nodes"} == set(LT.KERNELS.values()) | {LT.TOUCH_KERNEL}


def test_kernel_constants_mirror_the_source():
    src = (bundled_dir("microbench") / "latency.cu").read_text()
    assert int(re.search(r"#define GPUWHY_CHASE_UNROLL (\d+)", src).group(1)) == LT.UNROLL
    assert LT.TIMED_STEPS % LT.UNROLL == 0
    assert 'asm volatile("ld.global.u64' in src and 'asm volatile("ld.global.cg.u64' in src


# ------------------------------------------------------------ fake run ----


@pytest.fixture
def fake(monkeypatch, tmp_path):
    from fakes import FakeGpu, install

    gpu = install(monkeypatch, FakeGpu(l2=256 * KIB), tmp_path)
    # a ladder the fake's chase reports: L1 to 16 KiB, near L2 to 96 KiB, far L2 to 200 KiB, then DRAM
    gpu.latency_ns = lambda ws: 30.0 if ws <= 16 * KIB else 200.0 if ws <= 96 * KIB else 260.0 if ws <= 200 * KIB else 600.0
    # short walks: the fake follows every pointer in Python
    monkeypatch.setattr(LT, "TIMED_STEPS", 256)
    monkeypatch.setattr(LT, "WARM_CAP", 64)
    monkeypatch.setattr(LT, "PRIME_CAP", 512)
    monkeypatch.setattr(LT, "CLOCK_RAMP_NS", 1000)
    return gpu


def test_fake_latency_run_end_to_end(fake):
    res = LT.measure_latency(None)
    assert not fake.mem
    sizes = [p.working_set_bytes for p in res.points]
    assert sizes == LT.latency_sizes(256 * KIB)
    assert fake.launches.count("chase_ca") == len(sizes) * (1 + LT.LAUNCHES) and "chase_cg" not in fake.launches
    for p in res.points:
        assert p.latency_s == pytest.approx(fake.latency_ns(p.working_set_bytes) * 1e-9)
        assert p.cycles == pytest.approx(fake.latency_ns(p.working_set_bytes) * 1.98, rel=1e-3)
        assert p.implied_clock_mhz == pytest.approx(1980, rel=1e-3) and p.sm_clock_mhz is None
    assert [lv.name for lv in res.levels] == ["L1", "L2", "L2 far", "DRAM"]
    assert [round(lv.latency_s * 1e9) for lv in res.levels] == [30, 200, 260, 600]
    arr = np.asarray(sizes)
    for lv, edge in zip(res.levels, (16 * KIB, 96 * KIB, 200 * KIB)):  # between the grid points around each edge
        assert arr[arr <= edge].max() < lv.edge_bytes < arr[arr > edge].min()
    assert res.levels[-1].edge_bytes is None
    assert {p.level for p in res.points} <= {"L1", "L2", "L2 far", "DRAM", "transition"}
    # Little's law from the H200 SXM sheet (no profile in this cache folder)
    ll = res.littles
    assert ll.bandwidth_gbs == 4800 and ll.latency_s == pytest.approx(600e-9) and "H200 SXM" in ll.bandwidth_source
    assert ll.bytes_in_flight == pytest.approx(4800e9 * 600e-9) and ll.sm_count == 132 and ll.max_threads_per_sm == 2048
    assert res.course.bytes_in_flight == pytest.approx(336_000)
    assert "NVML unavailable" in " ".join(res.notes)
    assert any(n.startswith("the step to DRAM falls at a working set of 2") and "256 KiB L2 the driver reports" in n for n in res.notes)
    assert res.summary_line().startswith("gpuwhy bench --latency: NVIDIA H200 (sm_90") and "DRAM 600 ns" in res.summary_line()


def test_fake_latency_uses_the_measured_bandwidth_and_bypasses_l1(fake):
    from gpuwhy.profiles import DeviceProfile, save_profile

    save_profile(DeviceProfile(uuid="GPU-1234abcd-0000-0000-0000-000000000000", name="NVIDIA H200",
                               date="2026-11-29T00:00:00+00:00", dram_bandwidth_gbs=4300.0, dram_kernel="copy-vec16"))
    fake.latency_ns = lambda ws: 200.0 if ws <= 200 * KIB else 600.0
    res = LT.measure_latency(None, l1_bypass=True, sizes=[4 * KIB, 8 * KIB, 16 * KIB, 64 * KIB, 512 * KIB, 768 * KIB, 1 * MIB])
    assert "chase_cg" in fake.launches and "chase_ca" not in fake.launches
    assert res.mode == "cg" and [lv.name for lv in res.levels] == ["L2", "DRAM"]
    assert res.littles.bandwidth_gbs == 4300.0 and "measured by `gpuwhy bench`" in res.littles.bandwidth_source
    assert not fake.mem


def test_fake_chase_that_skips_a_load_is_caught(fake):
    fake.skip_step = True
    with pytest.raises(MeasurementError, match="did not follow the chain"):
        LT.measure_latency(None, sizes=[4 * KIB, 8 * KIB])
    assert not fake.mem


def test_fake_latency_cli_json_and_human(fake, monkeypatch):
    from fakes import capture

    from gpuwhy.cli.app import main

    grid = [k * KIB for k in (4, 6, 8, 11, 40, 48, 56, 64, 80, 128, 144, 160, 176, 512, 640, 768, 1024)]
    monkeypatch.setattr(LT, "latency_sizes", lambda l2, *a, **k: list(grid))
    out, err = capture(main, ["bench", "--latency", "--json"])
    doc = json.loads(out)
    assert doc["kind"] == "bench-latency" and doc["mode"] == "ca"
    assert [lv["name"] for lv in doc["levels"]] == ["L1", "L2", "L2 far", "DRAM"]
    assert doc["littles_law"]["bandwidth_gbs"] == 4800 and doc["littles_law_course_example"]["bytes_in_flight"] == pytest.approx(336_000)
    assert len(doc["points"]) == len(grid) and doc["points"][0]["cycles"] == pytest.approx(30 * 1.98, rel=1e-3)
    out, err = capture(main, ["bench", "--latency"])
    for needle in ("latency ladder", "L2 far", "DRAM", "step to next at", "Little's law on this GPU",
                   "the course's example", "336.0 KB in flight", "7.0 KB per SM", "1,750 threads per SM", "1,536-thread limit"):
        assert needle in out, needle
    assert out.strip().splitlines()[-1].startswith("gpuwhy bench --latency: NVIDIA H200")
    assert not fake.mem
