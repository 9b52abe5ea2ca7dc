"""The verdict engine (gpuwhy/verdict) on windows built by hand: every share of the budget, every
remedy's effect and Amdahl ceiling, the top cause, warm-up and rounding, each figure worked out here.

Windows and shares are powers of two (or sums of them) where a comparison sits at its limit, so that
the arithmetic is exact in binary and "at the limit" really is.
"""

from __future__ import annotations

import math

import pytest

from gpuwhy.verdict.causes import BUSY, IDLE, LABEL, REGIME, VERDICT, Cause, label
from gpuwhy.verdict.engine import (
    DIAGNOSED_MIN_PCT,
    MIN_SHARE_PCT,
    amdahl,
    diagnose,
    enough_to_judge,
)
from gpuwhy.verdict.figures import CopyFigure, KernelFigure, LinkRate, WindowFigures, assumed_link, best_links
from gpuwhy.verdict.remedies import BY_KEY, CATALOGUE, LOWER_PRECISION

C = Cause


def _removes(d, key) -> dict:
    r = d.remedy(key)
    return {} if r is None else {c.value: s for c, s in r.removes}


# --- the vocabulary ----------------------------------------------------------------------------


def test_every_cause_has_words_a_verdict_and_a_side():
    assert set(LABEL) == set(Cause) and set(VERDICT) == set(Cause)
    assert BUSY == {C.COPY, C.COMMUNICATION, C.MEMSET, C.COMPUTE_BOUND, C.MEMORY_BOUND, C.LATENCY_BOUND,
                    C.ISSUE_BOUND, C.LAUNCH_SIZED, C.KERNELS}
    assert not BUSY & set(IDLE)
    assert REGIME == {"compute": C.COMPUTE_BOUND, "memory": C.MEMORY_BOUND, "latency": C.LATENCY_BOUND,
                      "issue": C.ISSUE_BOUND, "overhead": C.LAUNCH_SIZED}
    assert label("memory_bound", "L2") == "memory-bound kernels (L2)" and label(C.MEMORY_BOUND) == "memory-bound kernels"
    assert label(C.HOST_SYNC, "L2") == "host blocked in a sync"  # a level names memory-bound shares only
    assert str(C.HOST_WORK) == "host_work"


def test_amdahl_and_its_guards():
    assert amdahl(10.0, 4.0) == 10.0 / 6.0
    assert amdahl(8.0, 6.0) == 4.0 and amdahl(8.0, 0.0) == 1.0 and amdahl(8.0, 7.5) == 16.0
    assert amdahl(8.0, 8.0) == math.inf and amdahl(8.0, 9.0) == math.inf
    with pytest.raises(ValueError, match=r"^the window must be positive, not 0.0 s$"):
        amdahl(0.0, 0.0)
    with pytest.raises(ValueError, match=r"^the window must be positive, not nan s$"):
        amdahl(float("nan"), 0.0)
    with pytest.raises(ValueError, match=r"^removed time must be >= 0, not -0.5 s$"):
        amdahl(8.0, -0.5)


def test_a_fix_that_makes_the_host_faster_than_the_gpu_leaves_the_larger_side():
    # tiny_layers on an H100 (2026-12-07, under torch.profiler, 30 steps): 318.7 ms, of it 290.7 ms launch overhead,
    # 4.1 ms Python work between steps, 23.9 ms kernels. A CUDA graph leaves GPU 23.9 ms and host 4.1 ms, which now
    # runs while the graph does: at most 318.7 / 23.9 = 13.3x (Amdahl's 318.7 / 28.0 = 11.4x; the twin gave 12.0x).
    w = WindowFigures(0.3187, {C.LAUNCH_OVERHEAD: 0.2907, C.HOST_WORK: 0.0041},
                      kernels=(KernelFigure("k", 0.0239, 12000, 2e-6),))
    r = diagnose(w).remedy("cuda_graph")
    assert r.floor_s == pytest.approx(0.0239) and r.ceiling_x == pytest.approx(0.3187 / 0.0239)
    assert r.ceiling_x > amdahl(0.3187, 0.2907) and r.to_dict()["floor_s"] == r.floor_s


def test_enough_to_judge_at_its_edges():
    assert enough_to_judge(4, 50e-6) and not enough_to_judge(3, 1.0) and not enough_to_judge(100, 49e-6)


# --- the budget --------------------------------------------------------------------------------


def test_shares_add_up_to_the_window_largest_first_and_the_rest_is_unexplained():
    # 8 s: idle 2 s data loading + 1 s sync; busy 4 s of unmeasured kernels, 0.5 s memset; 0.5 s unexplained
    w = WindowFigures(8.0, {C.DATA_LOADING: 2.0, C.HOST_SYNC: 1.0, C.PAGEABLE_COPY: 0.0}, {C.MEMSET: 0.5},
                      (KernelFigure("k", 4.0, 4, 1.0),))
    d = diagnose(w)
    assert [(s.cause, s.seconds, s.pct) for s in d.shares] == [
        (C.KERNELS, 4.0, 50.0), (C.DATA_LOADING, 2.0, 25.0), (C.HOST_SYNC, 1.0, 12.5), (C.MEMSET, 0.5, 6.25),
        (C.UNEXPLAINED, 0.5, 6.25)]
    assert (d.window_s, d.judged_s, d.busy_s, d.idle_s) == (8.0, 8.0, 4.5, 3.5)
    assert sum(s.pct for s in d.shares) == 100.0
    assert d.to_dict()["shares"][0] == {"cause": "kernels", "label": "kernels (regime not measured)", "seconds": 4.0,
                                        "share_pct": 50.0, "side": "busy", "busy_s": 4.0, "level": None,
                                        "evidence": ["by kind: other 100%", "largest: k 4 s of the busy time (4 launches, mean 1 s)"]}


def test_rounding_short_of_the_window_is_no_share():
    w = 2.0**40
    assert diagnose(WindowFigures(w, {C.HOST_WORK: w - 2.0**-2})).share(C.UNEXPLAINED) is None  # 2.3e-13 of it
    assert diagnose(WindowFigures(w, {C.HOST_WORK: w - 2.0**12})).share(C.UNEXPLAINED).seconds == 2.0**12  # 3.7e-9


def test_busy_time_of_overlapping_streams_is_scaled_into_the_room_idle_leaves():
    # 8 s, 2 s idle: kernels 6 s + 6 s (two streams) fill the 6 s left, each scaled by 1/2
    w = WindowFigures(8.0, {C.LAUNCH_OVERHEAD: 2.0}, kernels=(
        KernelFigure("a", 6.0, 1, 6.0, regime="memory", roof_pct=50.0), KernelFigure("b", 6.0, 1, 6.0)))
    d = diagnose(w)
    assert d.share(C.MEMORY_BOUND).seconds == 3.0 and d.share(C.KERNELS).seconds == 3.0 and d.busy_s == 6.0
    assert sum(s.seconds for s in d.shares) == 8.0


def test_bad_figures_are_refused():
    with pytest.raises(ValueError, match=r"^the window must be a positive number of seconds, not 0.0$"):
        diagnose(WindowFigures(0.0, {}))
    with pytest.raises(ValueError, match=r"^the time of host_work must be a finite number >= 0, not -1.0$"):
        diagnose(WindowFigures(1.0, {C.HOST_WORK: -1.0}))
    with pytest.raises(ValueError, match=r"^the time of copy must be a finite number >= 0, not inf$"):
        diagnose(WindowFigures(1.0, {}, {C.COPY: math.inf}))


def test_warm_up_is_listed_not_judged():
    # 10 s, 6 s of it warm-up: the judged window is 4 s; 1 s of launch overhead is a quarter of it
    d = diagnose(WindowFigures(10.0, {C.WARMUP: 6.0, C.LAUNCH_OVERHEAD: 1.0}, kernels=(KernelFigure("g", 3.0, 3, 1.0),)))
    assert d.judged_s == 4.0 and d.share(C.WARMUP).seconds == 6.0
    assert d.top.cause is C.KERNELS  # 3 of 4 judged s
    g = d.remedy("cuda_graph")
    assert g.removed_s == 1.0 and g.share_pct == 25.0 and g.ceiling_x == 4.0 / 3.0
    assert any(n.startswith("Leave warm-up out of the window") for n in d.next_steps)
    # all warm-up: nothing to judge
    d = diagnose(WindowFigures(1.0, {C.WARMUP: 1.0}))
    assert d.top is None and d.verdict == "warm-up" and d.remedies == ()


def test_shares_of_a_window_that_is_mostly_warm_up_are_weighed_against_the_judged_window():
    # 10 s, 9.99 s of it warm-up (a JAX program's compiles): the judged window is 10 ms, of which the
    # unmeasured kernels' 4 ms are 40% (0.04% of the whole window) and the 5 ms sync 50%
    d = diagnose(WindowFigures(10.0, {C.WARMUP: 9.99, C.HOST_SYNC: 0.005}, kernels=(KernelFigure("g", 0.004, 4, 1e-3),)))
    assert d.judged_s == pytest.approx(0.01) and d.top.cause is C.HOST_SYNC
    assert d.judged_pct(d.share(C.KERNELS)) == pytest.approx(40.0) and d.share(C.KERNELS).pct == pytest.approx(0.04)
    assert d.judged_pct(d.share(C.WARMUP)) == pytest.approx(99.9)  # warm-up is not judged: of the whole window
    assert any(n.startswith("Measure the kernels' regimes") for n in d.next_steps)  # 40% of what is judged


# --- the top cause -----------------------------------------------------------------------------


def test_the_largest_share_is_the_top_cause():
    d = diagnose(WindowFigures(4.0, {C.HOST_WORK: 2.0, C.LAUNCH_OVERHEAD: 1.0, C.HOST_SYNC: 1.0}))
    assert d.top.cause is C.HOST_WORK and d.verdict == "host-bound"
    assert d.line == "host-bound: host work issuing no GPU work (Python, I/O), 50% of the judged window; first fix: " \
                     "move host work (at most 2x)"


def test_unmeasured_kernels_give_the_verdict_only_over_half_the_window_and_no_large_diagnosed_share():
    k = (KernelFigure("k", 0.6, 6, 0.1),)
    # kernels 60%, a diagnosed share of 29%: the kernels (gpu-bound)
    d = diagnose(WindowFigures(1.0, {C.HOST_SYNC: 0.29, C.HOST_WORK: 0.11}, kernels=k))
    assert d.top.cause is C.KERNELS and d.verdict == "gpu-bound"
    assert d.line == "gpu-bound: kernels (regime not measured), 60% of the judged window; measure the kernels' regimes"
    # the diagnosed share at DIAGNOSED_MIN_PCT: it gives the verdict
    assert DIAGNOSED_MIN_PCT == 30.0
    d = diagnose(WindowFigures(1.0, {C.HOST_SYNC: 0.3, C.HOST_WORK: 0.1}, kernels=k))
    assert d.top.cause is C.HOST_SYNC and d.verdict == "host-sync-bound"
    # kernels under half the window: the largest diagnosed share, however small
    d = diagnose(WindowFigures(1.0, {C.HOST_SYNC: 0.2, C.HOST_WORK: 0.21, C.LAUNCH_OVERHEAD: 0.2},
                               kernels=(KernelFigure("k", 0.39, 6, 0.065),)))
    assert d.top.cause is C.HOST_WORK
    # measured kernels are diagnosed shares like any other
    d = diagnose(WindowFigures(1.0, {C.HOST_SYNC: 0.3}, kernels=(KernelFigure("k", 0.7, 7, 0.1, regime="compute",
                                                                                roof_pct=90.0),)))
    assert d.top.cause is C.COMPUTE_BOUND and d.verdict == "compute-bound"


def test_a_share_under_the_floor_gives_no_verdict_or_remedy():
    assert MIN_SHARE_PCT == 0.5
    d = diagnose(WindowFigures(1.0, {C.HOST_WORK: 0.004}))  # and 99.6% unexplained
    assert d.top.cause is C.UNEXPLAINED and d.remedy("move_host_work") is None
    assert d.verdict == "idle-unattributed"


# --- every remedy's effect ---------------------------------------------------------------------


def test_the_host_side_remedies_remove_their_own_shares_only():
    w = WindowFigures(16.0, {C.LAUNCH_OVERHEAD: 4.0, C.QUEUE_LATENCY: 1.0, C.HOST_WORK: 2.0, C.HOST_SYNC: 2.0,
                             C.DATA_LOADING: 3.0, C.DEPENDENCY_WAIT: 1.0, C.UNEXPLAINED: 0.5},
                      {C.COMMUNICATION: 1.0, C.COPY: 0.5}, (KernelFigure("k", 1.0, 10, 0.1),))
    d = diagnose(w)
    assert _removes(d, "cuda_graph") == {"launch_overhead": 4.0, "queue_latency": 1.0}
    assert _removes(d, "bigger_launches") == {"launch_overhead": 4.0, "queue_latency": 1.0}
    assert _removes(d, "move_host_work") == {"host_work": 2.0}
    assert _removes(d, "remove_syncs") == {"host_sync": 2.0}
    assert _removes(d, "more_loader_workers") == {"data_loading": 3.0}  # no pageable copy here
    assert _removes(d, "reorder_dependency") == {"dependency_wait": 1.0}
    assert _removes(d, "overlap_communication") == {"communication": 1.0}
    assert _removes(d, "overlap_copies") == {"copy": 0.5}
    # what a fix leaves: GPU time (busy 2.5 s, queue latency) against host time (the host-side idle shares
    # and the unexplained 0.5 s); the dependency wait on neither side. The window takes at least the larger.
    # cuda_graph: GPU 2.5 s, host 2 + 2 + 3 + 0.5 = 7.5 s; more_loader_workers: GPU 2.5 + 1 = 3.5 s, host
    # 4 + 2 + 2 + 0.5 = 8.5 s. (Amdahl's 16 / 11 and 16 / 13 would add the two sides.)
    assert d.remedy("cuda_graph").floor_s == 7.5 and d.remedy("cuda_graph").ceiling_x == 16.0 / 7.5
    assert d.remedy("more_loader_workers").floor_s == 8.5 and d.remedy("more_loader_workers").ceiling_x == 16.0 / 8.5
    # overlap_communication leaves host 11.5 s: the host side holds the floor
    assert d.remedy("overlap_communication").floor_s == 11.5
    # no kernel is measured: no kernel remedy, and nothing removes the unexplained share
    assert {r.key for r in d.remedies} == {"cuda_graph", "bigger_launches", "move_host_work", "remove_syncs",
                                           "more_loader_workers", "reorder_dependency", "overlap_communication",
                                           "overlap_copies"}
    # the top cause's remedies first (launch overhead: two of 5 s each), then by what they remove
    assert [r.key for r in d.remedies][:3] == ["cuda_graph", "bigger_launches", "more_loader_workers"]


def test_a_graph_already_replayed_keeps_its_gaps():
    w = WindowFigures(8.0, {C.LAUNCH_OVERHEAD: 2.0, C.QUEUE_LATENCY: 3.0}, kernels=(KernelFigure("k", 3.0, 3, 1.0),),
                      graphs=5, graph_queue_s=2.0)
    d = diagnose(w)
    assert _removes(d, "cuda_graph") == {"launch_overhead": 2.0, "queue_latency": 1.0}
    # it leaves the kernels' 3 s and the 2 s of queue latency inside the graphs, on the GPU: at most 8 / 5
    assert d.remedy("cuda_graph").floor_s == 5.0 and d.remedy("cuda_graph").ceiling_x == 8.0 / 5.0
    assert d.remedy("cuda_graph").text.startswith("The trace already replays CUDA graphs (5 graph launches)")
    assert _removes(d, "bigger_launches") == {"launch_overhead": 2.0, "queue_latency": 3.0}


def test_a_jax_window_that_already_replays_graphs_is_told_what_jax_controls():
    # XLA captures its own command buffers: a JAX user cannot "capture more of the step" by hand, only through
    # one jitted step and XLA's flags
    w = WindowFigures(8.0, {C.LAUNCH_OVERHEAD: 2.0, C.QUEUE_LATENCY: 3.0}, kernels=(KernelFigure("k", 3.0, 3, 1.0),),
                      graphs=5, graph_queue_s=2.0, framework="jax")
    text = diagnose(w).remedy("cuda_graph").text
    assert text.startswith("XLA already replays CUDA graphs here (5 graph launches")
    assert "xla_gpu_enable_command_buffer" in text and "torch" not in text


def test_pinning_takes_the_staging_and_shrinks_each_pageable_copy_to_the_pinned_rate():
    # 8 s: the host staged 1 s; 4 s of pageable HtoD copies exposed of 4 s at 8 GB/s (32 GB), pinned rate 32 GB/s:
    # they would take 1 s: 3 s go. A DtoH pageable copy with no rate known: all of its 0.5 s exposed, an upper bound.
    copies = (CopyFigure("HtoD", "pageable", 4, 32e9, 4.0, 4.0), CopyFigure("DtoH", "pageable", 1, None, 0.5, 0.5),
              CopyFigure("HtoD", "pinned", 2, 8e9, 0.25, 0.25))
    w = WindowFigures(8.0, {C.PAGEABLE_COPY: 1.0}, {C.PAGEABLE_COPY: 4.5, C.COPY: 0.25}, copies=copies,
                      links={"HtoD": LinkRate(32.0, "x"), "DtoH": LinkRate(32.0, "x")})
    d = diagnose(w)
    assert d.share(C.PAGEABLE_COPY).seconds == 5.5 and d.top.cause is C.PAGEABLE_COPY
    # the share is 1 s of staging (GPU idle) and 4.5 s of the copies (GPU busy): on the busy side
    sh = d.share(C.PAGEABLE_COPY)
    assert sh.gpu_busy_s == 4.5 and sh.busy and sh.to_dict()["side"] == "busy" and sh.to_dict()["busy_s"] == 4.5
    assert not diagnose(WindowFigures(8.0, {C.PAGEABLE_COPY: 3.0}, {C.PAGEABLE_COPY: 2.0})).share(C.PAGEABLE_COPY).busy
    assert d.share(C.UNEXPLAINED).gpu_busy_s == 0.0 and d.share(C.COPY).gpu_busy_s == 0.25
    assert _removes(d, "pin_memory") == {"pageable_copy": 1.0 + 3.0 + 0.5}
    # left: GPU 0.25 s (the pinned copy; the pageable copies' 4.5 s counted as gone first), host 2.25 s (the
    # unexplained rest of the window; the staging counted as gone first): at most 8 / 2.25
    assert d.remedy("pin_memory").floor_s == 2.25 and d.remedy("pin_memory").ceiling_x == 8.0 / 2.25
    assert d.remedy("more_loader_workers") is None  # no DataLoader: no loader remedy for the copies
    # with a DataLoader, more workers with pin_memory=True take its copies' share too
    d = diagnose(WindowFigures(8.0, {C.PAGEABLE_COPY: 1.0, C.DATA_LOADING: 1.0}, {C.PAGEABLE_COPY: 4.5, C.COPY: 0.25},
                               copies=copies, links={"HtoD": LinkRate(32.0, "x"), "DtoH": LinkRate(32.0, "x")}))
    assert _removes(d, "more_loader_workers") == {"data_loading": 1.0, "pageable_copy": 5.5}
    assert _removes(d, "overlap_copies") == {"copy": 0.25}
    # copies already at the pinned rate shrink no more: only the staging goes
    fast = (CopyFigure("HtoD", "pageable", 4, 128e9, 4.0, 4.0),)
    d = diagnose(WindowFigures(8.0, {C.PAGEABLE_COPY: 1.0}, {C.PAGEABLE_COPY: 4.0}, copies=fast,
                               links={"HtoD": LinkRate(32.0, "x")}))
    assert _removes(d, "pin_memory") == {"pageable_copy": 1.0}


def test_the_link_rates_known():
    a = assumed_link()
    assert a.gbs == 32 * 16 * 128 / 130 / 8 and "PCIe 5.0 x16" in a.source
    got = best_links({"HtoD": LinkRate(50.0, "trace")}, {"HtoD": LinkRate(70.0, "nvml"), "DtoH": None}, None)
    assert got == {"HtoD": LinkRate(70.0, "nvml")}


def test_lower_precision_from_flops_or_from_the_roof():
    # 4 s window: a compute-bound fp32 GEMM of 3 s doing 96e12 FLOP (32 TFLOP/s); bf16 at 256e12 FLOP/s takes
    # 0.375 s: 2.625 s go. A second one with no FLOP count, 0.5 s at 80% of the fp32 roof (64e12): at the roof
    # 0.4 s, at bf16 0.4 x 64 / 256 = 0.1 s: 0.4 s go.
    peaks = {"fp32": 64e12, "tf32": 128e12, "bf16": 256e12, "fp16": 256e12, "fp8": 512e12}
    ks = (KernelFigure("gemm", 3.0, 10, 0.3, "gemm", "compute", 50.0, "compute", 96e12, "fp32"),
          KernelFigure("gemm2", 0.5, 5, 0.1, "gemm", "compute", 80.0, "compute", None, "fp32"))
    d = diagnose(WindowFigures(4.0, {C.HOST_WORK: 0.5}, kernels=ks, peaks=peaks))
    assert _removes(d, "lower_precision") == {"compute_bound": pytest.approx(2.625 + 0.4)}
    # at their roof at the same precision: 3 x 50% + 0.5 x 20%
    assert _removes(d, "faster_kernels") == {"compute_bound": pytest.approx(1.5 + 0.1)}
    assert LOWER_PRECISION["bf16"] == ("fp8",) and LOWER_PRECISION["fp32"] == ("tf32", "bf16", "fp16")
    # no peaks known, or a precision with nothing faster: no lower-precision remedy
    assert diagnose(WindowFigures(4.0, {}, kernels=ks)).remedy("lower_precision") is None
    fp8 = (KernelFigure("g8", 3.0, 1, 3.0, "gemm", "compute", 50.0, "compute", 1e12, "fp8"),)
    assert diagnose(WindowFigures(4.0, {}, kernels=fp8, peaks=peaks)).remedy("lower_precision") is None


def test_fusion_leaves_the_cheapest_kernel_at_its_roof_once_per_chain():
    # 2 steps of a chain of memory-bound kernels: a (4 x 0.25 s at 80%), b (2 x 0.5 s at 50%), plus 2 launch-sized
    # c (8 us each, unmeasured). Fused, a step takes at least the cheapest memory-bound kernel at its roof,
    # min(0.25 x 80%, 0.5 x 50%) = 0.2 s: c's 8 us (it moves less) does not lower that floor.
    ks = (KernelFigure("a", 1.0, 4, 0.25, "elementwise", "memory", 80.0, "DRAM"),
          KernelFigure("b", 1.0, 2, 0.5, "elementwise", "memory", 50.0, "L2"),
          KernelFigure("c", 16e-6, 2, 8e-6))
    d = diagnose(WindowFigures(4.0, {C.HOST_WORK: 2.0 - 16e-6}, kernels=ks, steps=2))
    removed = 2.0 + 16e-6 - 2 * 0.2
    r = _removes(d, "fuse")
    assert sum(r.values()) == pytest.approx(removed)
    assert r["memory_bound"] == pytest.approx(removed * 2.0 / (2.0 + 16e-6))  # spread by the shares' time
    assert d.share(C.MEMORY_BOUND).level in ("DRAM", "L2")  # 1 s each: the first largest
    # without steps the chains are the fewest launches of any of them (2 here too)
    d = diagnose(WindowFigures(4.0, {C.HOST_WORK: 2.0 - 16e-6}, kernels=ks))
    assert sum(_removes(d, "fuse").values()) == pytest.approx(removed)
    # launch-sized kernels alone (no memory-bound one measured): the cheapest one's time per chain
    d = diagnose(WindowFigures(100e-6, {C.HOST_WORK: 80e-6}, kernels=(ks[2], KernelFigure("f", 4e-6, 2, 2e-6)),
                               steps=2))
    assert sum(_removes(d, "fuse").values()) == pytest.approx(20e-6 - 2 * 2e-6)


def test_fusion_takes_the_unmeasured_elementwise_links_of_a_measured_chain():
    # The elementwise_chain shape (H100, 2026-12-07): 30 steps; ncu measured the top kernels, memory-bound at
    # 90% of DRAM (a: 1.0 s, 90 launches, mean 1/90 s); d, an elementwise kernel it did not measure (0.3 s,
    # 30 launches), is a link of the same chain; e, an unmeasured GEMM, is not. Floor: 30 x min(1/90 x 0.9,
    # 0.01) = 0.3 s; removed 1.0 + 0.3 - 0.3 = 1.0 s, spread by time: memory 1.0/1.3, kernels 0.3/1.3.
    ks = (KernelFigure("a", 1.0, 90, 1 / 90, "elementwise", "memory", 90.0, "DRAM"),
          KernelFigure("d", 0.3, 30, 0.01, "elementwise"),
          KernelFigure("e", 0.2, 30, 0.2 / 30, "gemm"))
    d = diagnose(WindowFigures(1.6, {C.HOST_WORK: 0.1}, kernels=ks, steps=30))
    r = _removes(d, "fuse")
    assert r == {"memory_bound": pytest.approx(1.0 / 1.3), "kernels": pytest.approx(0.3 / 1.3)}
    # with no measured chain, unmeasured elementwise kernels alone are not offered fusion
    assert diagnose(WindowFigures(1.6, {C.HOST_WORK: 1.1}, kernels=ks[1:], steps=30)).remedy("fuse") is None


def test_fusion_needs_a_chain_and_floors_at_measured_memory_kernels_only():
    # 30 steps: a, memory-bound at 80% (30 launches, 0.1 s); d, an unmeasured elementwise link launched once
    # (0.01 s); c, launch-sized and measured (regime overhead, 10% of its roof, 60 launches of 5 us).
    a = KernelFigure("a", 0.1, 30, 0.1 / 30, "elementwise", "memory", 80.0, "DRAM")
    d = KernelFigure("d", 0.01, 1, 0.01, "elementwise")
    c = KernelFigure("c", 300e-6, 60, 5e-6, "elementwise", "overhead", 10.0)
    # a and d: 31 launches over 30 chains is one kernel per chain, not a chain: no fusion
    assert diagnose(WindowFigures(0.2, {C.HOST_WORK: 0.09}, kernels=(a, d), steps=30)).remedy("fuse") is None
    # with c: 91 launches over 30 chains. The floor is a's time at its roof only (c's 10% of a 5 us launch is not
    # a memory-bound kernel's floor): 30 x 0.1/30 x 0.8 = 0.08 s; removed 0.1 + 0.01 + 0.0003 - 0.08.
    w = WindowFigures(0.2, {C.HOST_WORK: 0.2 - 0.1103}, kernels=(a, d, c), steps=30)
    assert sum(_removes(diagnose(w), "fuse").values()) == pytest.approx(0.1103 - 0.08)


def test_latency_bound_kernels_to_their_roof():
    ks = (KernelFigure("few_blocks", 2.0, 4, 0.5, "reduction", "latency", 10.0, "DRAM"),
          KernelFigure("tiny", 1e-3, 200, 5e-6, "elementwise", "latency", 10.0, "DRAM"))  # launch-sized: not offered
    d = diagnose(WindowFigures(4.0, {C.HOST_WORK: 2.0 - 1e-3}, kernels=ks))
    assert _removes(d, "more_parallelism") == {"latency_bound": pytest.approx(1.8)}
    # left: GPU 2.001 - 1.8 = 0.201 s, host 1.999 s: the host work holds the floor (Amdahl: 4 / 2.2)
    assert d.remedy("more_parallelism").ceiling_x == pytest.approx(4.0 / (2.0 - 1e-3))
    assert d.top.cause is C.LATENCY_BOUND and d.verdict == "latency-bound"


def test_every_remedy_in_the_catalogue_is_exercised_here():
    assert set(BY_KEY) == {"cuda_graph", "bigger_launches", "move_host_work", "remove_syncs", "more_loader_workers",
                           "pin_memory", "overlap_copies", "reorder_dependency", "overlap_communication",
                           "lower_precision", "fuse", "more_parallelism", "faster_kernels"}
    assert [r.key for r in CATALOGUE][0] == "cuda_graph"


def test_no_remedy_beats_its_own_shares():
    # every remedy removes at most the shares it names: their sum over the catalogue on a full window
    ks = (KernelFigure("a", 1.0, 4, 0.25, "elementwise", "memory", 10.0, "DRAM"),
          KernelFigure("g", 1.0, 2, 0.5, "gemm", "compute", 10.0, "compute", 1e15, "fp32"))
    w = WindowFigures(8.0, {c: 0.25 for c in IDLE}, {C.COPY: 0.25, C.PAGEABLE_COPY: 0.25, C.COMMUNICATION: 0.25},
                      kernels=ks, copies=(CopyFigure("HtoD", "pageable", 1, 1e6, 0.25, 0.25),),
                      peaks={"fp32": 1e12, "bf16": 1e16}, steps=1)
    d = diagnose(w)
    for r in d.remedies:
        for c, s in r.removes:
            assert s <= d.share(c).seconds + 1e-12, (r.key, c)
        # the floor is never above what Amdahl leaves, so the ceiling never below Amdahl's
        assert r.floor_s <= d.judged_s - r.removed_s + 1e-12 and r.ceiling_x == pytest.approx(d.judged_s / r.floor_s)
        assert r.ceiling_x >= amdahl(d.judged_s, r.removed_s) - 1e-12


def test_a_verdict_ending_in_a_next_step_keeps_the_steps_capitals():
    # unexplained idle time is the top share: the line ends in its next step, lower-cased at its first letter only
    d = diagnose(WindowFigures(1.0, {C.UNEXPLAINED: 0.9}))
    assert d.top.cause is C.UNEXPLAINED
    assert d.line.endswith("; record with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA] on a recent PyTorch "
                           "so launches carry correlation ids.")


def test_an_ncu_pass_says_its_scope_and_no_idle_time():
    k = KernelFigure("k", 1.0, 10, 0.1, regime="memory", roof_pct=50.0, level="DRAM")
    d = diagnose(WindowFigures(1.0, {}, kernels=(k,), scope="the kernel time", idle_known=False))
    assert d.line.startswith("memory-bound: memory-bound kernels (DRAM), 100% of the kernel time")
    assert d.to_dict()["idle_s"] is None and diagnose(WindowFigures(1.0, {}, kernels=(k,))).to_dict()["idle_s"] == 0.0


def test_a_long_kernel_name_in_the_evidence_is_cut_with_an_ellipsis():
    long = "vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3> >"
    d = diagnose(WindowFigures(1.0, {}, kernels=(KernelFigure(long, 1.0, 2, 0.5), KernelFigure("short_k", 0.0, 1, 0.0))))
    line = next(e for e in d.share(C.KERNELS).evidence if e.startswith("largest: "))
    assert line.startswith("largest: " + long[:59] + "\u2026 1 s of the busy time (2 launches")


def test_a_kernel_that_ran_beside_others_says_so():
    # one launch of 0.5 s of which only 0.3 s is its share of the busy union (it overlapped another kernel)
    d = diagnose(WindowFigures(1.0, {C.HOST_WORK: 0.2}, kernels=(KernelFigure("a", 0.3, 1, 0.5), KernelFigure("b", 0.5, 1, 0.5))))
    line = next(e for e in d.share(C.KERNELS).evidence if e.startswith("largest: "))
    assert "a 300 ms of the busy time (1 launch, mean 500 ms, beside other work)" in line
    assert "b 500 ms of the busy time (1 launch, mean 500 ms)" in line


# --- a share's side, the tracer figure of an all-warm-up window, kernel evidence at its limits -------

def test_a_shares_busy_seconds_and_side_by_cause_and_at_half():
    from gpuwhy.verdict.engine import Share

    assert Share(C.KERNELS, 2.0, 10.0).gpu_busy_s == 2.0  # a busy cause: all of it
    assert Share(C.HOST_WORK, 3.0, 10.0).gpu_busy_s == 0.0  # an idle cause: none
    assert Share(C.PAGEABLE_COPY, 2.0, 10.0, busy_s=1.0).busy is False  # busy exactly half: not the busy side
    assert Share(C.PAGEABLE_COPY, 2.0, 10.0, busy_s=1.25).busy is True


def test_an_all_warm_up_window_has_no_tracer_time():
    d = diagnose(WindowFigures(1.0, {C.WARMUP: 1.0}, tracer_s=0.5))
    assert d.top is None and d.tracer_s == 0.0 and d.to_dict()["tracer_s"] == 0.0


@pytest.mark.parametrize("n, cut", [(60, False), (61, True)])
def test_a_kernel_name_is_cut_past_sixty_characters(n, cut):
    name = "k" * n
    d = diagnose(WindowFigures(1.0, {}, kernels=(KernelFigure(name, 1.0, 4, 0.25),)))
    line = d.share(C.KERNELS).evidence[-1]
    assert (("k" * 59 + "…") in line) is cut and ((name + " ") in line) is not cut


@pytest.mark.parametrize("total, beside", [(99.0, False), (98.0, True)])
def test_a_kernel_beside_other_work_is_said_below_99_percent_of_its_launches_time(total, beside):
    # 100 launches of 1 s: its share of the busy union at 99 s (exactly 0.99 x launches x mean) is not "beside"
    d = diagnose(WindowFigures(200.0, {}, kernels=(KernelFigure("k", total, 100, 1.0),)))
    assert ("beside other work" in d.share(C.KERNELS).evidence[-1]) is beside


def test_a_pageable_copy_left_after_pinning_stays_on_the_gpu_side():
    # 6 s: the host staged 2 s (GPU idle), then 4 s of pageable HtoD copies at 8 GB/s (32 GB, GPU busy); pinned at
    # 32 GB/s they take 1 s. pin_memory removes the staging and 3 s of the copies: the 1 s copy at the pinned rate
    # is left on the GPU, so the window takes at least 1 s: 6x, not "all of it" (each side counted as losing its
    # part first left nothing anywhere). Both remedies that touch the share take its staging (idle) part first.
    copies = (CopyFigure("HtoD", "pageable", 4, 32e9, 4.0, 4.0),)
    links = {"HtoD": LinkRate(32.0, "x")}
    d = diagnose(WindowFigures(6.0, {C.PAGEABLE_COPY: 2.0}, {C.PAGEABLE_COPY: 4.0}, copies=copies, links=links))
    r = d.remedy("pin_memory")
    assert _removes(d, "pin_memory") == {"pageable_copy": 5.0}
    assert r.floor_s == 1.0 and r.ceiling_x == 6.0 and "at most 6x" in d.line
    # with 2 s of kernels beside: GPU 2 + 1 s left, Amdahl's 8 / 3 (nothing left on the host side)
    d = diagnose(WindowFigures(8.0, {C.PAGEABLE_COPY: 2.0}, {C.PAGEABLE_COPY: 4.0}, copies=copies, links=links,
                               kernels=(KernelFigure("k", 2.0, 4, 0.5),)))
    assert d.remedy("pin_memory").floor_s == 3.0 and d.remedy("pin_memory").ceiling_x == amdahl(8.0, 5.0)
    # the copies already at the pinned rate: the staging alone goes, all 4 s of copies stay on the GPU
    fast = (CopyFigure("HtoD", "pageable", 4, 128e9, 4.0, 4.0),)
    d = diagnose(WindowFigures(6.0, {C.PAGEABLE_COPY: 2.0}, {C.PAGEABLE_COPY: 4.0}, copies=fast, links=links))
    assert d.remedy("pin_memory").floor_s == 4.0
