"""The verdict's rules at their edges, each figure worked out by hand: what tests/test_verdict_engine.py
leaves loose (benchmarks/mutation.py found these: a threshold moved by one step, a clamp dropped, a sum
flipped, and the tests there still passed).

Windows and shares are powers of two, or chosen so that the arithmetic at a limit is exact in binary.
"""

from __future__ import annotations

import pytest

from gpuwhy.verdict.causes import Cause
from gpuwhy.verdict.engine import MIN_SHARE_PCT, diagnose
from gpuwhy.verdict.figures import CopyFigure, KernelFigure, LinkRate, WindowFigures, best_links
from gpuwhy.verdict.remedies import NEXT_STEP

C = Cause


def _removes(d, key) -> dict:
    r = d.remedy(key)
    return {} if r is None else {c.value: s for c, s in r.removes}


# --- the figures -------------------------------------------------------------------------------


def test_launch_sized_means_shorter_than_10_us_and_10_us_up_to_rounding_is_not():
    assert KernelFigure("k", 1.0, 1, 9.99e-6).cause is C.LAUNCH_SIZED
    assert KernelFigure("k", 1.0, 1, 10e-6).cause is C.KERNELS
    # a trace's 10 us mean in seconds: 10.0 * 1e-6 is 9.999999999999999e-06, still 10 us
    assert 10.0 * 1e-6 < 10e-6 and KernelFigure("k", 1.0, 1, 10.0 * 1e-6).cause is C.KERNELS
    assert KernelFigure("k", 1.0, 1, 50e-6).cause is C.KERNELS
    assert KernelFigure("k", 1.0, 1, 5e-6, regime="memory").cause is C.MEMORY_BOUND  # measured: its regime


def test_a_trace_of_10_us_kernels_has_no_launch_sized_share():
    from test_torch_trace_causes import _one, launch

    # 8 kernels of 10 us each, 20 us apart: 80 us of kernels, not shorter than 10 us
    ev = []
    for i in range(8):
        ev += launch(1000.0 + 30 * i, 1010.0 + 30 * i, 10, i)
    _, d = _one(ev)
    assert d.diagnosis.share(C.LAUNCH_SIZED) is None
    assert d.diagnosis.share(C.KERNELS).seconds == pytest.approx(80e-6)


def test_a_copy_rate_needs_bytes_and_time():
    assert CopyFigure("HtoD", "pinned", 1, 32e9, 4.0, 4.0).gbs == 8.0
    assert CopyFigure("HtoD", "pinned", 1, 32e9, 0.0, 0.0).gbs is None  # a copy of no measured time: no rate
    assert CopyFigure("HtoD", "pinned", 1, None, 4.0, 4.0).gbs is None


def test_the_first_of_equal_link_rates_is_kept():
    a, b = LinkRate(32.0, "first"), LinkRate(32.0, "second")
    assert best_links({"HtoD": a}, {"HtoD": b})["HtoD"] is a
    assert best_links({"HtoD": a}, {"HtoD": LinkRate(32.5, "faster")})["HtoD"].source == "faster"


# --- the budget --------------------------------------------------------------------------------


def test_busy_time_within_rounding_of_the_room_is_kept_and_beyond_it_is_scaled():
    # 2 s window, 1 s idle: 1 s of room for busy time; over it by up to 1e-9 of it is rounding
    def busy(total):
        return diagnose(WindowFigures(2.0, {C.LAUNCH_OVERHEAD: 1.0}, kernels=(KernelFigure("k", total, 1, total),))).busy_s

    at = 1.0 * (1 + 1e-9)
    assert busy(at) == at and busy(1.0 + 5e-10) == 1.0 + 5e-10
    assert busy(1.0 + 2e-9) == 1.0


def test_overlapping_streams_under_a_second_are_scaled_too():
    # 0.5 s window, 0.25 s idle: two 0.25 s kernels on two streams fill the 0.25 s left, each halved
    d = diagnose(WindowFigures(0.5, {C.HOST_WORK: 0.25}, kernels=(
        KernelFigure("a", 0.25, 1, 0.25), KernelFigure("b", 0.25, 1, 0.25, regime="memory", roof_pct=50.0))))
    assert d.busy_s == 0.25 and d.share(C.KERNELS).seconds == 0.125 and d.share(C.MEMORY_BOUND).seconds == 0.125


def test_a_rest_of_exactly_one_part_in_1e9_of_the_window_is_rounding():
    w = 1e9 * 2.0**-30  # 0.93 s: 1e-9 of it is 2**-30, exact in binary
    assert 1e-9 * w == 2.0**-30
    assert diagnose(WindowFigures(w, {C.HOST_WORK: w - 2.0**-30})).share(C.UNEXPLAINED) is None
    assert diagnose(WindowFigures(w, {C.HOST_WORK: w - 2.0**-29})).share(C.UNEXPLAINED).seconds == 2.0**-29


def test_idle_time_filling_the_window_leaves_busy_figures_no_room_and_their_remedies_nothing():
    # 4 s, all of it idle host work: the kernels and copies (streams counted twice) are scaled to nothing,
    # so no remedy that removes kernel or copy time is offered
    peaks = {"fp32": 64e12, "bf16": 256e12}
    ks = (KernelFigure("g", 1.0, 4, 0.25, "gemm", "compute", 50.0, "compute", 32e12, "fp32"),
          KernelFigure("m", 1.0, 4, 0.25, "elementwise", "memory", 50.0, "DRAM"),
          KernelFigure("s", 1e-4, 20, 5e-6))
    w = WindowFigures(4.0, {C.HOST_WORK: 4.0}, {C.PAGEABLE_COPY: 1.0}, kernels=ks, peaks=peaks,
                      copies=(CopyFigure("HtoD", "pageable", 1, 1e9, 1.0, 1.0),), links={"HtoD": LinkRate(32.0, "x")})
    d = diagnose(w)
    assert [(s.cause, s.seconds) for s in d.shares] == [(C.HOST_WORK, 4.0)] and d.busy_s == 0.0
    assert [r.key for r in d.remedies] == ["move_host_work"]


def test_a_long_window_is_judged_as_a_short_one():
    # 1024 s (a long profile) and 1.024 s, each 600/1024 host work and the rest unmeasured kernels
    for scale in (1.0, 1e-3):
        d = diagnose(WindowFigures(1024.0 * scale, {C.HOST_WORK: 600.0 * scale},
                                   kernels=(KernelFigure("k", 424.0 * scale, 424, scale),)))
        assert d.top.cause is C.HOST_WORK and d.verdict == "host-bound"
        assert d.remedy("move_host_work").ceiling_x == pytest.approx(1024.0 / 424.0)


# --- the top cause and the order of remedies ---------------------------------------------------


def test_unmeasured_kernels_at_exactly_half_the_window_give_the_verdict():
    d = diagnose(WindowFigures(1.0, {C.HOST_SYNC: 0.25, C.HOST_WORK: 0.25}, kernels=(KernelFigure("k", 0.5, 5, 0.1),)))
    assert d.top.cause is C.KERNELS and d.verdict == "gpu-bound"


def test_the_top_causes_remedy_comes_first_even_when_another_removes_more():
    # 8 s: a sync holds 3 s (the top cause); launch overhead 2 s and queue latency 2 s, which CUDA graphs remove (4 s)
    d = diagnose(WindowFigures(8.0, {C.HOST_SYNC: 3.0, C.LAUNCH_OVERHEAD: 2.0, C.QUEUE_LATENCY: 2.0},
                               kernels=(KernelFigure("k", 1.0, 10, 0.1),)))
    assert d.top.cause is C.HOST_SYNC
    assert [r.key for r in d.remedies] == ["remove_syncs", "cuda_graph", "bigger_launches"]
    # remove_syncs leaves GPU 1 + 2 s (kernels, queue latency) and host 2 s: 8 / 3; cuda_graph GPU 1 s, host 3 s: 8 / 3
    assert d.remedies[0].ceiling_x == 8.0 / 3.0 and d.remedies[1].ceiling_x == 8.0 / 3.0
    assert d.remedies[0].floor_s == 3.0 and d.remedies[1].floor_s == 3.0


def test_a_remedy_lists_the_shares_it_removes_largest_first_and_its_share_of_the_judged_window():
    d = diagnose(WindowFigures(16.0, {C.LAUNCH_OVERHEAD: 1.0, C.QUEUE_LATENCY: 4.0},
                               kernels=(KernelFigure("k", 11.0, 11, 1.0),)))
    g = d.remedy("cuda_graph")
    assert g.removes == ((C.QUEUE_LATENCY, 4.0), (C.LAUNCH_OVERHEAD, 1.0))
    assert g.removed_s == 5.0 and g.share_pct == 31.25 and g.ceiling_x == 16.0 / 11.0


def test_a_remedy_or_a_next_step_at_exactly_the_share_floor_is_offered():
    assert MIN_SHARE_PCT == 0.5
    # 200 s: 1 s is 0.5% of it exactly
    d = diagnose(WindowFigures(200.0, {C.HOST_WORK: 1.0, C.UNEXPLAINED: 1.0}, kernels=(KernelFigure("k", 198.0, 198, 1.0),)))
    assert d.remedy("move_host_work").share_pct == 0.5
    assert NEXT_STEP[C.UNEXPLAINED] in d.next_steps
    d = diagnose(WindowFigures(200.0, {C.HOST_WORK: 0.99, C.UNEXPLAINED: 0.99},
                               kernels=(KernelFigure("k", 198.02, 198, 1.0),)))
    assert d.remedy("move_host_work") is None and NEXT_STEP[C.UNEXPLAINED] not in d.next_steps


# --- a memory-bound share's level --------------------------------------------------------------


def test_the_level_of_a_memory_bound_share_is_where_most_of_its_kernels_time_is():
    def level(*ks):
        return diagnose(WindowFigures(8.0, {C.HOST_WORK: 1.0}, kernels=ks)).share(C.MEMORY_BOUND).level

    l2 = KernelFigure("l2", 1.0, 4, 0.25, "elementwise", "memory", 50.0, "L2")
    # two DRAM kernels of 0.75 s (1.5 s together) outweigh one of 1 s at L2
    dram = (KernelFigure("d1", 0.75, 3, 0.25, "elementwise", "memory", 50.0, "DRAM"),
            KernelFigure("d2", 0.75, 3, 0.25, "elementwise", "memory", 50.0, "DRAM"))
    assert level(l2, *dram) == "DRAM" and level(l2) == "L2"
    # other shares' kernels, and memory-bound kernels with no level measured, do not count
    assert level(l2, KernelFigure("lat", 2.0, 4, 0.5, "reduction", "latency", 10.0, "DRAM")) == "L2"
    assert level(l2, KernelFigure("unknown", 2.0, 4, 0.5, "elementwise", "memory", 50.0, None)) == "L2"


# --- the evidence of a kernel share ------------------------------------------------------------


def test_unmeasured_kernels_evidence_their_time_by_kind_and_their_largest_three():
    ks = (KernelFigure("A", 0.25, 1, 0.25, "gemm"), KernelFigure("B", 0.25, 1, 0.25, "gemm"),
          KernelFigure("C", 0.2, 1, 0.2, "elementwise"), KernelFigure("D", 0.15, 1, 0.15, "reduction"),
          KernelFigure("E", 0.08, 1, 0.08, "softmax"), KernelFigure("F", 0.04, 1, 0.04, "norm"),
          KernelFigure("G", 0.03, 1, 0.03, "copy"))
    by_kind, largest = diagnose(WindowFigures(2.0, {C.HOST_WORK: 1.0}, kernels=ks)).share(C.KERNELS).evidence
    # of the kernels' 1 s: gemm 0.5 s, elementwise 0.2, reduction 0.15, softmax 0.08, norm 0.04 (the top 5 kinds)
    assert by_kind == "by kind: gemm 50%, elementwise 20%, reduction 15%, softmax 8%, norm 4%"
    assert [p.split(" ")[0] for p in largest.removeprefix("largest: ").split("; ")] == ["A", "B", "C"]


def test_a_measured_kernels_evidence_names_the_roof_that_holds_it():
    def ev(level):
        k = KernelFigure("m", 1.0, 4, 0.25, "elementwise", "memory", 50.0, level)
        return " ".join(diagnose(WindowFigures(2.0, {C.HOST_WORK: 1.0}, kernels=(k,))).share(C.MEMORY_BOUND).evidence)

    assert "50% of its DRAM" in ev("DRAM") and "50% of its roof" in ev(None)


# --- the remedies ------------------------------------------------------------------------------


def test_pinning_without_staging_shrinks_only_the_pageable_copies():
    # 8 s: 4 s of pageable HtoD copies at 8 GB/s against a 32 GB/s pinned rate take 1 s pinned: 3 s go. The host
    # staged nothing; a pinned copy slower than the link (16 GB/s) is not pinning's to shrink.
    copies = (CopyFigure("HtoD", "pageable", 4, 32e9, 4.0, 4.0), CopyFigure("HtoD", "pinned", 1, 8e9, 0.5, 0.5))
    d = diagnose(WindowFigures(8.0, {C.HOST_WORK: 3.5}, {C.PAGEABLE_COPY: 4.0, C.COPY: 0.5}, copies=copies,
                               links={"HtoD": LinkRate(32.0, "x")}))
    assert _removes(d, "pin_memory") == {"pageable_copy": 3.0}


def test_lower_precision_from_the_roof_caps_it_at_100_percent_and_needs_the_own_peak():
    # 2 s: a 1 s fp32 GEMM with no FLOP count measured at 125% of the fp32 roof (64e12): at most at its roof,
    # 1 s; in bf16 (256e12) 1 x 64 / 256 = 0.25 s: 0.75 s go
    g = (KernelFigure("g", 1.0, 4, 0.25, "gemm", "compute", 125.0, "compute", None, "fp32"),)
    d = diagnose(WindowFigures(2.0, {C.HOST_WORK: 1.0}, kernels=g, peaks={"fp32": 64e12, "bf16": 256e12}))
    assert _removes(d, "lower_precision") == {"compute_bound": 0.75}
    # the fp32 peak unknown: nothing to scale the roof by
    assert diagnose(WindowFigures(2.0, {C.HOST_WORK: 1.0}, kernels=g, peaks={"bf16": 256e12})).remedy("lower_precision") is None


def test_fusion_floor_is_the_cheapest_kernel_at_its_roof():
    # 2 steps: a (4 x 0.25 s at 50%: 0.125 s at its roof) and b (2 x 0.5 s at 80%: 0.4 s); fused, a step takes at
    # least 0.125 s: 2 x 0.125 of the 2 s stay, 1.75 s go
    ks = (KernelFigure("a", 1.0, 4, 0.25, "elementwise", "memory", 50.0, "DRAM"),
          KernelFigure("b", 1.0, 2, 0.5, "elementwise", "memory", 80.0, "L2"))
    d = diagnose(WindowFigures(4.0, {C.HOST_WORK: 2.0}, kernels=ks, steps=2))
    assert _removes(d, "fuse") == {"memory_bound": pytest.approx(1.75)}
    # a measured over its roof (125%) counts at it: 0.125 s; b (0.5 s at 50%) 0.25 s: 2 x 0.125 of 1.5 s stay
    ks = (KernelFigure("a", 0.5, 4, 0.125, "elementwise", "memory", 125.0, "DRAM"),
          KernelFigure("b", 1.0, 2, 0.5, "elementwise", "memory", 50.0, "L2"))
    d = diagnose(WindowFigures(4.0, {C.HOST_WORK: 2.5}, kernels=ks, steps=2))
    assert _removes(d, "fuse") == {"memory_bound": pytest.approx(1.25)}


def test_fusion_of_kernels_launched_once_in_one_step():
    # 1 step: a (0.25 s at 50%) and b (0.25 s at 100%): fused, at least 0.125 s; 0.375 s of 0.5 s go
    ks = (KernelFigure("a", 0.25, 1, 0.25, "elementwise", "memory", 50.0, "DRAM"),
          KernelFigure("b", 0.25, 1, 0.25, "elementwise", "memory", 100.0, "DRAM"))
    d = diagnose(WindowFigures(1.0, {C.HOST_WORK: 0.5}, kernels=ks, steps=1))
    assert _removes(d, "fuse") == {"memory_bound": pytest.approx(0.375)}


def test_fusion_ignores_kernels_with_no_launch_or_no_time():
    # a kernel figure with no launches counted would make the chains 0 (and fuse everything away); left out,
    # the chains are the 4 launches of a, which alone at its roof is its own floor: nothing to fuse
    a = KernelFigure("a", 1.0, 4, 0.25, "elementwise", "memory", 100.0, "DRAM")
    z = KernelFigure("z", 1.0, 0, 0.0, "elementwise", "memory", 100.0, "DRAM")
    assert diagnose(WindowFigures(4.0, {C.HOST_WORK: 2.0}, kernels=(a, z))).remedy("fuse") is None
    # memory-bound kernels of no time in the window: nothing to fuse
    zero = (KernelFigure("a", 0.0, 2, 0.0, "elementwise", "memory", 50.0, "DRAM"),)
    assert diagnose(WindowFigures(1.0, {C.HOST_WORK: 1.0}, kernels=zero)).remedy("fuse") is None


def test_kernels_to_their_roof_clamp_the_measured_share_to_0_and_100_percent():
    # m0 at 0% of its roof: all its 1 s goes; m50: half of 1 s; m125 (over its roof): nothing, never negative
    ks = (KernelFigure("m0", 1.0, 4, 0.25, "elementwise", "memory", 0.0, "DRAM"),
          KernelFigure("m50", 1.0, 4, 0.25, "elementwise", "memory", 50.0, "DRAM"),
          KernelFigure("m125", 1.0, 4, 0.25, "elementwise", "memory", 125.0, "DRAM"))
    d = diagnose(WindowFigures(4.0, {C.HOST_WORK: 1.0}, kernels=ks))
    assert _removes(d, "faster_kernels") == {"memory_bound": 1.5}
